//! HTML building blocks of the report: escaping and tables. Every text that comes from a
//! params.json or a spec passes through [`esc`]; nothing else writes markup.

/// Escapes `s` for HTML text and for a quoted attribute value
/// ([`crate::output::markup::escape`]: no text from the file can open a tag, close an
/// attribute or start an entity).
pub fn esc(s: &str) -> String {
    crate::output::markup::escape(s)
}

/// A table: a header row and rows of cells that are already HTML (escape text with
/// [`esc`] first); `class` on the table.
pub fn table(class: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("<table class=\"{class}\"><thead><tr>");
    for h in head {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            s.push_str(&format!("<td>{c}</td>"));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped() {
        assert_eq!(
            esc(r#"<script>alert("x&y")</script> 'q'"#),
            "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt; &#39;q&#39;"
        );
        assert_eq!(esc("plain 120 ns"), "plain 120 ns");
    }
}
