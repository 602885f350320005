//! The measurements table as a GitHub-flavoured Markdown table (one row per measurement,
//! six significant digits), for reports and pull requests.

use super::csv::{number as num, COLUMNS};
use super::Exporter;
use crate::output::text::printable;
use anyhow::Result;
use bench_core::params::ParamsFile;
use std::fmt::Write;

/// Renders the measurements table as a GitHub-flavoured Markdown table.
pub struct MarkdownExporter;

/// A table cell: control characters escaped ([`printable`]: no line break, no ANSI
/// escape), pipes escaped.
fn cell(s: &str) -> String {
    printable(s).replace('|', "\\|")
}

impl Exporter for MarkdownExporter {
    fn render(&self, file: &ParamsFile) -> Result<String> {
        let mut s = String::new();
        writeln!(s, "| {} |", COLUMNS.join(" | "))?;
        let align: Vec<&str> = COLUMNS
            .iter()
            .enumerate()
            .map(|(i, _)| if i < 4 { ":--" } else { "--:" })
            .collect();
        writeln!(s, "|{}|", align.join("|"))?;
        for m in &file.measurements {
            let d = &m.distribution;
            let nums: Vec<String> = [d.min, d.p50, d.p90, d.p99, d.p999, d.max, d.mean, d.stdev]
                .iter()
                .map(|&v| num(v))
                .collect();
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                cell(&m.id),
                cell(&m.benchmark),
                cell(&m.target),
                cell(&m.unit),
                d.n,
                nums.join(" | ")
            )?;
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_pipes() {
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
