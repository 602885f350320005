//! HTML building blocks of the report: escaping and tables. Every text that comes from a
//! params.json or a spec passes through [`esc`]; nothing else writes markup.

/// Escapes `s` for HTML text and for a quoted attribute value
/// ([`crate::output::markup::escape`]: no text from the file can open a tag, close an
/// attribute or start an entity).
pub fn esc(s: &str) -> String {
    crate::output::markup::escape(s)
}

/// A number with 4 significant digits (integers up to 1e6 as they are), `-` for none.
pub fn num(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    if !v.is_finite() {
        return v.to_string();
    }
    if v == v.trunc() && v.abs() < 1e6 {
        return format!("{v:.0}");
    }
    let a = v.abs();
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = (3 - a.log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
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

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(Some(120.0)), "120");
        assert_eq!(num(Some(91.23456)), "91.23");
        assert_eq!(num(Some(1.5)), "1.500");
        assert_eq!(num(Some(0.01234)), "0.01234");
        assert_eq!(num(Some(2.5e9)), "2.500e9");
        assert_eq!(num(None), "-");
    }
}
