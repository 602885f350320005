//! The exporters together, on a real params.json (`results/plots/params-quick.json`, a
//! quick run on the development VM): CSV and Markdown read back to the JSON values.

use super::csv::{CsvExporter, COLUMNS};
use super::markdown::MarkdownExporter;
use super::Exporter;
use bench_core::params::ParamsFile;

fn sample() -> ParamsFile {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/plots/params-quick.json");
    let f: ParamsFile = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    assert!(f.measurements.len() >= 2, "sample has measurements");
    f
}

fn values(m: &bench_core::params::Measurement) -> [f64; 8] {
    let d = &m.distribution;
    [d.min, d.p50, d.p90, d.p99, d.p999, d.max, d.mean, d.stdev]
}

#[test]
fn csv_reads_back_to_the_json_values() {
    let f = sample();
    let text = CsvExporter.render(&f).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), COLUMNS);
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), f.measurements.len());
    for (row, m) in rows.iter().zip(&f.measurements) {
        assert_eq!(&row[0], m.id);
        assert_eq!(&row[1], m.benchmark);
        assert_eq!(&row[2], m.target);
        assert_eq!(&row[3], m.unit);
        assert_eq!(row[4].parse::<u64>().unwrap(), m.distribution.n);
        for (i, v) in values(m).iter().enumerate() {
            let got: f64 = row[5 + i].parse().unwrap();
            assert_eq!(got, *v, "{} column {}", m.id, COLUMNS[5 + i]);
        }
    }
}

#[test]
fn csv_quotes_fields_with_commas() {
    let mut f = sample();
    f.measurements[0].id = "a,b \"c\"".into();
    let text = CsvExporter.render(&f).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let first = r.records().next().unwrap().unwrap();
    assert_eq!(&first[0], "a,b \"c\"");
}

#[test]
fn markdown_reads_back_to_the_json_values() {
    let f = sample();
    let text = MarkdownExporter.render(&f).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + f.measurements.len());
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    assert_eq!(cells(lines[0]), COLUMNS);
    assert!(lines[1].starts_with("|:--|"));
    for (l, m) in lines[2..].iter().zip(&f.measurements) {
        let c = cells(l);
        assert_eq!(c.len(), COLUMNS.len(), "{l}");
        assert_eq!(c[0], m.id);
        assert_eq!(c[2], m.target);
        assert_eq!(c[4].parse::<u64>().unwrap(), m.distribution.n);
        for (i, v) in values(m).iter().enumerate() {
            let got: f64 = c[5 + i].parse().unwrap();
            let tol = v.abs() * 1e-5 + 1e-9;
            assert!((got - v).abs() <= tol, "{}: {got} vs {v}", COLUMNS[5 + i]);
        }
    }
}

#[test]
fn table_shows_hardware_counts_per_operation_when_present() {
    use bench_core::counters::{Counts, MeasurementCounters};
    let mut f = sample();
    let plain = super::table::TableExporter.render(&f).unwrap();
    assert!(!plain.contains("counters per operation"));
    let c = MeasurementCounters {
        counts: Counts {
            llc_load_misses: Some(250),
            ..Counts::default()
        },
        attempts: 1,
        ..MeasurementCounters::default()
    }
    .with_per_op("load", 1000);
    f.measurements[0].counters = Some(c);
    let t = super::table::TableExporter.render(&f).unwrap();
    assert!(t.contains("counters per operation:"));
    assert!(t.contains("llc_load_misses_per_load 0.250"), "{t}");
}
