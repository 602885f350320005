//! The measurements table as CSV (RFC 4180, via the `csv` crate): one row per
//! measurement, full-precision numbers, so that the file reads back to the JSON values.

use super::Exporter;
use anyhow::Result;
use bench_core::params::ParamsFile;

/// Column names of the measurements table (CSV and Markdown).
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

/// CSV exporter.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn render(&self, file: &ParamsFile) -> Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(COLUMNS)?;
        for m in &file.measurements {
            let d = &m.distribution;
            let mut row = vec![
                m.id.clone(),
                m.benchmark.clone(),
                m.target.clone(),
                m.unit.clone(),
                d.n.to_string(),
            ];
            // `{}` on f64 is the shortest text that parses back to the same value.
            row.extend(
                [d.min, d.p50, d.p90, d.p99, d.p999, d.max, d.mean, d.stdev]
                    .iter()
                    .map(|v| v.to_string()),
            );
            w.write_record(&row)?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}
