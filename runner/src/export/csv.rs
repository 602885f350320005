//! The measurements table as CSV (RFC 4180, via the `csv` crate): one row per
//! measurement, every figure (min, quantiles, max, mean, stdev) to six significant digits
//! ([`number`], as the Markdown table): one precision in every column, finer than the
//! quantiles' own (recorded in thousandths of the unit with three significant digits,
//! `bench_core::stats`); params.json keeps the full values.
//!
//! Safe to open in a spreadsheet, as OWASP's "CSV Injection" guidance asks: every text
//! cell below the header (id, benchmark, target, unit, which a stranger's params file may
//! set) is quoted, shown with control characters escaped ([`printable`]: no ANSI escape
//! reaches a terminal that prints the file), and one that would start a formula gets a
//! leading single quote ([`text_cell`]). Numbers stay bare numbers.
//!
//! The last column, `disturbed` ([`DISTURBED`]), tells a clean figure from a flagged one:
//! `true` when the measurement stayed disturbed in every attempt (its figure stands on
//! disturbed samples or, for a crew of threads, on no clean window: the noisy ones),
//! `false` when it was not, empty when it recorded no counters. Its `true` rows are the
//! count the summary and the report give ([`ParamsFile::disturbed_measurements`]).

use super::Exporter;
use crate::output::text::printable;
use anyhow::Result;
use bench_core::params::{Measurement, ParamsFile};

/// Column names of the measurements table (Markdown; the CSV adds [`DISTURBED`] after
/// them).
pub const COLUMNS: [&str; 13] = [
    "id",
    "benchmark",
    "target",
    "unit",
    "n",
    "min",
    "p50",
    "p90",
    "p99",
    "p999",
    "max",
    "mean",
    "stdev",
];

/// The CSV's column after [`COLUMNS`]: whether the measurement stayed disturbed.
pub const DISTURBED: &str = "disturbed";

/// The `disturbed` cell of a measurement: `true`, `false`, or empty (no counters
/// recorded, so not known).
pub fn disturbed_cell(m: &Measurement) -> &'static str {
    match &m.counters {
        Some(c) if c.disturbed => "true",
        Some(_) => "false",
        None => "",
    }
}

/// A figure to six significant digits without an exponent (`123.457`, `0.00123457`;
/// integers of more digits whole: `98765432`); `0`, `NaN`, `inf` as they are.
pub fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (5 - mag).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// Renders the measurements table as CSV, one row per measurement.
pub struct CsvExporter;

/// The characters that make a spreadsheet read a cell as a formula when it starts with
/// one (OWASP: `=`, `+`, `-`, `@`, tab, carriage return; and their full-width forms,
/// which some spreadsheets take too).
const FORMULA_STARTS: [char; 10] = [
    '=', '+', '-', '@', '\t', '\r', '\u{ff1d}', '\u{ff0b}', '\u{ff0d}', '\u{ff20}',
];

/// Whether `s` is a plain finite number (`-1.5`, `+3`, `2e-9`), which a spreadsheet
/// reads as that number and nothing else.
fn is_plain_number(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
        && s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A text cell as written: control characters escaped ([`printable`]), and a leading
/// `'` when it would start a formula (`=HYPERLINK(...)` -> `'=HYPERLINK(...)`), unless it
/// is a plain number.
pub fn text_cell(s: &str) -> String {
    let p = printable(s);
    if s.starts_with(FORMULA_STARTS) && !is_plain_number(s) {
        format!("'{p}")
    } else {
        p.into_owned()
    }
}

impl Exporter for CsvExporter {
    fn render(&self, file: &ParamsFile) -> Result<String> {
        // The header with default quoting (its names are fixed); below it, quotes around
        // every cell that is not a number (OWASP's advice for text cells).
        let mut head = csv::Writer::from_writer(Vec::new());
        head.write_record(COLUMNS.iter().chain([&DISTURBED]))?;
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::NonNumeric)
            .from_writer(head.into_inner()?);
        for m in &file.measurements {
            let d = &m.distribution;
            let mut row = vec![
                text_cell(&m.id),
                text_cell(&m.benchmark),
                text_cell(&m.target),
                text_cell(&m.unit),
                d.n.to_string(),
            ];
            row.extend(
                [d.min, d.p50, d.p90, d.p99, d.p999, d.max, d.mean, d.stdev]
                    .iter()
                    .map(|&v| number(v)),
            );
            row.push(disturbed_cell(m).to_string());
            w.write_record(&row)?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(number(123.456789), "123.457");
        assert_eq!(number(97.09921914210406), "97.0992");
        assert_eq!(number(193.151), "193.151");
        assert_eq!(number(1354.8800927557315), "1354.88");
        assert_eq!(number(0.00123456789), "0.00123457");
        assert_eq!(number(98765432.1), "98765432");
        assert_eq!(number(0.0), "0");
    }
}
