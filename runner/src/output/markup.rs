//! Escaping text for markup: the one function the HTML report and the JUnit XML use, and
//! the key registry's inline Markdown (`**strong**`, `` `code` ``) as HTML ([`inline_html`])
//! or as plain text ([`plain`], for OpenMetrics HELP and other plain-text consumers).

/// Escapes `s` for XML or HTML text and for a quoted attribute value: `&`, `<`, `>`, `"`
/// and `'` become character references (so no text can open a tag, close an attribute or
/// start an entity); C0 control characters other than tab, newline and carriage return,
/// which XML 1.0 forbids, are dropped; DEL, the C1 controls and the bidirectional-text
/// controls (U+202E and the others of [`crate::output::text::is_unsafe`]) are written as
/// the text of their escape (`\u{202e}`), so that nothing from a file can reorder what a
/// page shows and a reader sees that something was there.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\n' | '\t' | '\r' => o.push(c),
            c if (c as u32) < 0x20 => {}
            c if crate::output::text::is_unsafe(c) => {
                o.push_str(&crate::output::text::printable(c.encode_utf8(&mut [0; 4])))
            }
            c => o.push(c),
        }
    }
    o
}

/// The inline Markdown spans the registry's texts use: `**strong**` and `` `code` ``.
/// Returns the text split into (span kind, text) runs; an unclosed marker stays literal.
fn spans(s: &str) -> Vec<(Span, &str)> {
    let mut out = vec![];
    let mut rest = s;
    while !rest.is_empty() {
        let strong = rest.find("**");
        let code = rest.find('`');
        let (at, open, kind) = match (strong, code) {
            (Some(a), Some(b)) if b < a => (b, "`", Span::Code),
            (Some(a), _) => (a, "**", Span::Strong),
            (None, Some(b)) => (b, "`", Span::Code),
            (None, None) => break,
        };
        let body = &rest[at + open.len()..];
        let Some(end) = body.find(open).filter(|&e| e > 0) else {
            out.push((Span::Text, &rest[..at + open.len()]));
            rest = body;
            continue;
        };
        if at > 0 {
            out.push((Span::Text, &rest[..at]));
        }
        out.push((kind, &body[..end]));
        rest = &body[end + open.len()..];
    }
    if !rest.is_empty() {
        out.push((Span::Text, rest));
    }
    out
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Span {
    Text,
    Strong,
    Code,
}

/// The registry's inline Markdown as escaped HTML: `**x**` -> `<strong>x</strong>`,
/// `` `x` `` -> `<code>x</code>`; every text escaped with [`escape`].
pub fn inline_html(s: &str) -> String {
    spans(s)
        .into_iter()
        .map(|(k, t)| match k {
            Span::Text => escape(t),
            Span::Strong => format!("<strong>{}</strong>", escape(t)),
            Span::Code => format!("<code>{}</code>", escape(t)),
        })
        .collect()
}

/// The registry's inline Markdown as plain text: the `**` and `` ` `` markers dropped.
pub fn plain(s: &str) -> String {
    spans(s).into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_markdown_becomes_html_or_plain_text() {
        let s = "one **local** target, `dram_check` <x> & **unclosed";
        assert_eq!(
            inline_html(s),
            "one <strong>local</strong> target, <code>dram_check</code> &lt;x&gt; &amp; **unclosed"
        );
        assert_eq!(plain(s), "one local target, dram_check <x> & **unclosed");
        assert_eq!(plain("a `b` **c** d"), "a b c d");
        assert_eq!(inline_html("no markup"), "no markup");
        assert_eq!(plain("2 ** 3"), "2 ** 3");
    }

    #[test]
    fn escapes_markup_and_drops_control_characters() {
        assert_eq!(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
        assert_eq!(escape("x\u{1}y\tz\n"), "xy\tz\n");
    }

    #[test]
    fn bidi_and_c1_controls_are_shown_as_escapes() {
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        assert_eq!(escape("a\u{9b}b\u{7f}"), "a\\u{9b}b\\x7f");
        for c in [
            '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202d}', '\u{2067}',
        ] {
            assert!(!escape(&format!("x{c}y")).contains(c), "{c:?}");
        }
    }
}
