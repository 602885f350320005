//! The measurements table as a GitHub-flavoured Markdown table (one row per measurement,
//! six significant digits), for reports and pull requests.

use super::csv::COLUMNS;
use super::Exporter;
use crate::output::text::printable;
use anyhow::Result;
use bench_core::params::ParamsFile;
use std::fmt::Write;

/// Renders the measurements table as a GitHub-flavoured Markdown table.
pub struct MarkdownExporter;

/// Six significant digits, no exponent.
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (5 - mag).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

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
    fn numbers_keep_six_significant_digits() {
        assert_eq!(num(123.456789), "123.457");
        assert_eq!(num(0.00123456789), "0.00123457");
        assert_eq!(num(98765432.1), "98765432");
        assert_eq!(num(0.0), "0");
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
