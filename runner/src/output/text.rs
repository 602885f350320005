//! Text from outside (target names, keys, reasons and environment strings of a params
//! file, which a stranger may have written) made safe to print: control characters and
//! bidirectional-text controls are shown as escapes, so nothing in a cell can move the
//! cursor, recolour or clear a terminal (ANSI escape sequences), break a row onto a new
//! line or reorder what follows it. The terminal tables, CSV, Markdown and OpenMetrics
//! label values all go through [`printable`].

use std::borrow::Cow;

/// Whether `c` is shown as an escape: a control character (C0, DEL, C1: `\t`, `\n`,
/// `\r` and ESC among them) or a bidirectional-text control (U+061C, U+200E, U+200F,
/// U+202A..U+202E, U+2066..U+2069).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` on one line with every [`is_unsafe`] character as an escape: `\x1b` below
/// U+0080, `\u{202e}` above (`\e[31m` prints as `\x1b[31m`). Anything else is kept.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe(c) {
            o.push(c);
        } else if (c as u32) < 0x80 {
            o.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            o.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(o)
}

/// `s` with its line breaks kept and every line [`printable`]: for a whole report.
pub fn printable_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.split('\n').map(printable).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_ansi_line_breaks_and_bidi_controls() {
        assert_eq!(printable("anon"), "anon");
        assert!(matches!(printable("node:1"), Cow::Borrowed(_)));
        assert_eq!(printable("\u{1b}[31mred\u{1b}[0m"), "\\x1b[31mred\\x1b[0m");
        assert_eq!(printable("a\nb\tc\rd"), "a\\x0ab\\x09c\\x0dd");
        assert_eq!(printable("x\u{7f}\u{9b}2J"), "x\\x7f\\u{9b}2J");
        assert_eq!(printable("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(printable("µs ✓"), "µs ✓");
        assert_eq!(printable_lines("a\u{1b}c\nd\n"), "a\\x1bc\nd\n");
    }

    proptest! {
        #[test]
        fn no_unsafe_character_survives_and_safe_text_is_kept(s in "\\PC*|[\\x00-\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}]*") {
            let p = printable(&s);
            prop_assert!(!p.chars().any(is_unsafe), "{p:?}");
            if !s.chars().any(is_unsafe) {
                prop_assert_eq!(p.as_ref(), s.as_str());
            }
            // Escaping twice changes nothing more.
            let twice = printable(&p).into_owned();
            prop_assert_eq!(twice.as_str(), p.as_ref());
            let l = printable_lines(&s);
            prop_assert_eq!(l.split('\n').count(), s.split('\n').count());
        }
    }
}
