//! The one text-table layout of cxlchar's readable outputs (`--format table` of a
//! params file, `targets`, `pcie list`, `check`, `diff`, `model`).
//!
//! House style: a header row, no borders or rules, two spaces between columns, text
//! columns left-aligned and numeric columns right-aligned (header included), every row
//! on one line. Nothing ever wraps: the width is not the terminal's (piped output and
//! tests see the same text as a terminal), a long cell widens its column. Trailing
//! spaces are trimmed. Cells and the lines under rows are shown with control characters
//! escaped ([`super::text::printable`]): a target name or reason from a stranger's params
//! file cannot recolour the terminal or break a row onto two lines.
//!
//! Units: a column of values carries the unit of the key or measurement it shows (the
//! `unit` column is `param_info`'s unit, which is the key name's suffix unit, see
//! [`bench_core::keys::Unit`]); rates print as GB/s (GB = 10^9 B); sizes print in binary
//! units (`64K` = 64 KiB by [`bench_core::units::format_size`], `4.0 GiB` by
//! [`bench_core::units::human_bytes`]).

use super::text::printable;
use comfy_table::{presets::NOTHING, CellAlignment, ContentArrangement, Table};

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: left-aligned.
    Left,
    /// Numbers: right-aligned.
    Right,
}

/// Spaces between two columns.
const GAP: u16 = 2;

/// A text table in the house style.
pub struct TextTable {
    table: Table,
    indent: usize,
}

impl TextTable {
    /// A table with these column headers and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        let mut table = Table::new();
        table
            .load_preset(NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(columns.iter().map(|(h, _)| *h));
        for (c, (_, a)) in table.column_iter_mut().zip(columns) {
            c.set_padding((0, GAP));
            c.set_cell_alignment(match a {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
        }
        TextTable { table, indent: 0 }
    }

    /// Every line starts with `n` spaces (a table under a section title).
    pub fn indent(mut self, n: usize) -> Self {
        self.indent = n;
        self
    }

    /// Appends a row (one cell per column, in order).
    pub fn row<I, S>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.table.add_row(
            cells
                .into_iter()
                .map(|c| printable(&c.into()).into_owned())
                .collect::<Vec<String>>(),
        );
        self
    }

    /// The lines: the header first, then one per row in the order they were added
    /// (cells never hold a newline, escaped as `\x0a`, so line `i + 1` is row `i`); no
    /// newlines.
    pub fn lines(&self) -> Vec<String> {
        let pad = " ".repeat(self.indent);
        self.table
            .lines()
            .map(|l| format!("{pad}{}", l.trim_end()))
            .collect()
    }

    /// The whole table, each line ended by a newline.
    pub fn render(&self) -> String {
        self.render_with(|_| Vec::new())
    }

    /// The whole table with the lines `under(i)` (as given, each ended by a newline)
    /// after row `i`: the details of a row that are no column (a device's BARs, a
    /// region's targets, a check's reason).
    pub fn render_with(&self, under: impl Fn(usize) -> Vec<String>) -> String {
        let mut s = String::new();
        for (i, l) in self.lines().into_iter().enumerate() {
            s += &l;
            s.push('\n');
            if i > 0 {
                for u in under(i - 1) {
                    s += &printable(&u);
                    s.push('\n');
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_left_and_numbers_right_with_the_header() {
        let mut t = TextTable::new(&[("name", Align::Left), ("value", Align::Right)]);
        t.row(["a", "1"]).row(["longer", "1234.5"]);
        assert_eq!(
            t.render(),
            "name     value\na            1\nlonger  1234.5\n"
        );
        let lines = t.lines();
        assert_eq!(lines.len(), 3);
        // The numeric column ends in the same place on every line.
        let ends: Vec<usize> = lines.iter().map(|l| l.len()).collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{lines:?}");
        // Text starts at the column's start on every line.
        assert!(lines.iter().all(|l| !l.starts_with(' ')));
    }

    #[test]
    fn never_wraps_whatever_the_width() {
        let long = "x".repeat(500);
        let mut t = TextTable::new(&[("k", Align::Left), ("note", Align::Left)]);
        t.row(["a", long.as_str()]).row(["b", "short"]);
        let lines = t.lines();
        assert_eq!(lines.len(), 3, "a row per line, no wrapped continuation");
        assert!(lines[1].ends_with(&long));
        assert!(!lines.iter().any(|l| l.ends_with(' ')), "{lines:?}");
    }

    #[test]
    fn indents_every_line_and_keeps_row_order() {
        let mut t = TextTable::new(&[("node", Align::Right), ("cpus", Align::Left)]).indent(2);
        for (n, c) in [("1", "0-3"), ("0", "4-7"), ("10", "-")] {
            t.row([n, c]);
        }
        assert_eq!(
            t.lines(),
            ["  node  cpus", "     1  0-3", "     0  4-7", "    10  -"]
        );
        let with = t.render_with(|i| {
            if i == 1 {
                vec!["      under row 1".into()]
            } else {
                vec![]
            }
        });
        assert_eq!(
            with,
            "  node  cpus\n     1  0-3\n     0  4-7\n      under row 1\n    10  -\n"
        );
    }
}
