//! Escaping text for markup: the one function the HTML report and the JUnit XML use.

/// Escapes `s` for XML or HTML text and for a quoted attribute value: `&`, `<`, `>`, `"`
/// and `'` become character references (so no text can open a tag, close an attribute or
/// start an entity), and control characters other than tab, newline and carriage return,
/// which XML 1.0 forbids, are dropped.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r' => {}
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_control_characters() {
        assert_eq!(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
        assert_eq!(escape("x\u{1}y\tz\n"), "xy\tz\n");
    }
}
