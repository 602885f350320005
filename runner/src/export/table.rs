//! A readable report: model keys, measurements, skipped items and warnings (in full),
//! then the summary ([`super::summary`]); what `--format table --verbose` prints. Every text
//! from the params file is shown with control characters escaped
//! ([`crate::output::text`]).

use super::Exporter;
use crate::output::table::{Align::*, TextTable};
use crate::output::text::printable_lines;
use crate::output::warnings::render_warnings;
use anyhow::Result;
use bench_core::params::ParamsFile;
use std::fmt::{self, Write};

/// Table exporter.
#[derive(Debug, Clone, Default)]
pub struct TableExporter {
    /// The file `--out` writes (`None`: the run writes nothing), named by the summary.
    pub out: Option<std::path::PathBuf>,
}

fn fmt_value(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The unit a key's value is in: its name's suffix (`_ns` ns, `_gbs` GB/s with GB =
/// 10^9 B, `_bytes` bytes), as the key registry defines it; `param_info` records the
/// same unit for every key cxlchar writes.
fn key_unit(key: &str) -> Option<&'static str> {
    bench_core::keys::Unit::of_name(key).map(|u| u.symbol())
}

impl Exporter for TableExporter {
    fn render(&self, f: &ParamsFile) -> Result<String> {
        let mut s = String::new();
        super::summary::write_run(&mut s, f)?;
        write_checks(&mut s, f)?;
        writeln!(s)?;
        if !f.params.is_empty() {
            write_params(&mut s, f)?;
        }
        if !f.measurements.is_empty() {
            write_measurements(&mut s, f)?;
        }
        write_counters(&mut s, f)?;
        if !f.skipped.is_empty() {
            write_skipped(&mut s, f)?;
        }
        s.push_str(&render_warnings(&f.warnings));
        // A person reads the summary last, below everything.
        writeln!(s)?;
        s.push_str(&super::summary::render(f, None, self.out.as_deref()));
        // The environment strings, skipped reasons and warnings come from the params file
        // as they are: shown with control characters escaped.
        Ok(printable_lines(&s).into_owned())
    }
}

/// The DRAM sizing, DRAM check and prefetch check lines, one per target.
fn write_checks(s: &mut String, f: &ParamsFile) -> fmt::Result {
    for (t, z) in &f.dram_sizing {
        writeln!(
            s,
            "DRAM working set on {t}: {} touched ({})",
            bench_core::units::human_bytes(z.touched_bytes as u64),
            z.explain()
        )?;
    }
    for c in &f.dram_check {
        writeln!(s, "DRAM check on {}: {}", c.target, c.summary())?;
    }
    for c in &f.prefetch_check {
        let chains: Vec<String> = c
            .chains
            .iter()
            .map(|x| {
                let info = if x.judged {
                    ""
                } else {
                    " (info: other page-walk rate)"
                };
                format!("{} {:.1} ns{info}", x.label, x.lat_ns)
            })
            .collect();
        writeln!(
            s,
            "prefetch check on {} at {}: {} ({}; ratio {:.3}, tolerance {:.0}%){}",
            c.target,
            bench_core::units::human_bytes(c.touched_bytes as u64),
            c.verdict,
            chains.join(", "),
            c.ratio,
            c.tolerance * 100.0,
            c.aligned_ratio
                .map(|a| format!("; aligned/default {a:.3}"))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}

/// The model keys' table (per-target keys only counted), then an empty line.
fn write_params(s: &mut String, f: &ParamsFile) -> fmt::Result {
    let mut t = TextTable::new(&[
        ("param", Left),
        ("value", Right),
        ("unit", Left),
        ("target", Left),
        ("method", Left),
    ]);
    for (k, v) in f.params.iter().filter(|(k, _)| !k.contains('@')) {
        let info = f.param_info.get(k);
        t.row([
            k.as_str(),
            fmt_value(*v).as_str(),
            key_unit(k).unwrap_or_else(|| info.map_or("", |i| &i.unit)),
            info.map_or("", |i| &i.target),
            info.map_or("", |i| &i.method),
        ]);
    }
    s.push_str(&t.render());
    let per_target = f.params.keys().filter(|k| k.contains('@')).count();
    if per_target > 0 {
        writeln!(
            s,
            "({per_target} per-target keys `key@target` in the JSON output)"
        )?;
    }
    writeln!(s)
}

/// The measurements' table: count and quantiles, then an empty line.
fn write_measurements(s: &mut String, f: &ParamsFile) -> fmt::Result {
    let mut t = TextTable::new(&[
        ("measurement", Left),
        ("n", Right),
        ("min", Right),
        ("p50", Right),
        ("p90", Right),
        ("p99", Right),
        ("p99.9", Right),
        ("max", Right),
        ("unit", Left),
    ]);
    for m in &f.measurements {
        let d = &m.distribution;
        t.row([
            m.id.clone(),
            d.n.to_string(),
            fmt_value(d.min),
            fmt_value(d.p50),
            fmt_value(d.p90),
            fmt_value(d.p99),
            fmt_value(d.p999),
            fmt_value(d.max),
            m.unit.clone(),
        ]);
    }
    s.push_str(&t.render());
    writeln!(s)
}

/// Hardware counts per operation next to the figures, where the PMU gave them.
fn write_counters(s: &mut String, f: &ParamsFile) -> fmt::Result {
    let per_op: Vec<_> = f
        .measurements
        .iter()
        .filter_map(|m| m.counters.as_ref().map(|c| (m, c)))
        .filter(|(_, c)| !c.per_op.is_empty())
        .collect();
    if per_op.is_empty() {
        return Ok(());
    }
    writeln!(s, "counters per operation:")?;
    let mut t = TextTable::new(&[("measurement", Left), ("counts", Left)]).indent(2);
    for (m, c) in per_op {
        let v: Vec<String> = c
            .per_op
            .iter()
            .map(|(k, v)| format!("{k} {}", fmt_value(*v)))
            .collect();
        t.row([m.id.clone(), v.join(", ")]);
    }
    s.push_str(&t.render());
    writeln!(s)
}

/// The skipped benchmarks with their targets and reasons.
fn write_skipped(s: &mut String, f: &ParamsFile) -> fmt::Result {
    writeln!(s, "skipped:")?;
    for k in &f.skipped {
        let t = if k.target.is_empty() {
            String::new()
        } else {
            format!(" on {}", k.target)
        };
        writeln!(s, "  {}{t}: {}", k.benchmark, k.reason)?;
    }
    writeln!(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::keys::Unit;

    /// A full run on the development VM: ns, GB/s and bytes keys and measurements.
    fn sample() -> ParamsFile {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results/host/amd-epyc-zen4-kvm-2vcpu.json");
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// The cells of a table section: (header line, rows), the section starting at the
    /// line that begins with `first_header`, ending at the first empty line.
    fn section<'a>(text: &'a str, first_header: &str) -> (&'a str, Vec<&'a str>) {
        let mut lines = text.lines().skip_while(|l| !l.starts_with(first_header));
        let header = lines
            .next()
            .unwrap_or_else(|| panic!("no {first_header} in\n{text}"));
        let rows = lines
            .take_while(|l| !l.is_empty() && !l.starts_with('('))
            .collect();
        (header, rows)
    }

    /// The text of a left-aligned column: from its header's start to the next header's.
    fn cell<'a>(header: &str, row: &'a str, col: &str, next: Option<&str>) -> &'a str {
        let a = header.find(col).unwrap();
        let b = next
            .map_or(row.len(), |n| header.find(n).unwrap())
            .min(row.len());
        row.get(a..b).unwrap_or("").trim()
    }

    #[test]
    fn every_printed_param_unit_is_the_unit_of_its_key_name() {
        let f = sample();
        let text = TableExporter::default().render(&f).unwrap();
        let (header, rows) = section(&text, "param ");
        let shown: Vec<&String> = f.params.keys().filter(|k| !k.contains('@')).collect();
        assert_eq!(rows.len(), shown.len(), "one row per key, in order");
        let mut units = std::collections::BTreeSet::new();
        for (row, key) in rows.iter().zip(shown) {
            // Keys have no spaces: the first word is the key.
            assert_eq!(row.split_whitespace().next(), Some(key.as_str()));
            let printed = cell(header, row, "unit", Some("target"));
            let of_name = Unit::of_name(key)
                .unwrap_or_else(|| panic!("{key} has no unit suffix"))
                .symbol();
            assert_eq!(printed, of_name, "{key}: {row}");
            assert_eq!(f.param_info[key].unit, of_name, "{key}'s param_info");
            units.insert(printed);
        }
        // The sample covers the three units of measured keys.
        assert_eq!(
            units.into_iter().collect::<Vec<_>>(),
            ["GB/s", "bytes", "ns"]
        );
    }

    #[test]
    fn every_measurement_row_prints_its_unit_field() {
        let f = sample();
        let text = TableExporter::default().render(&f).unwrap();
        let (header, rows) = section(&text, "measurement ");
        assert_eq!(rows.len(), f.measurements.len());
        for (row, m) in rows.iter().zip(&f.measurements) {
            assert_eq!(row.split_whitespace().next(), Some(m.id.as_str()));
            assert_eq!(cell(header, row, "unit", None), m.unit, "{row}");
            // A measurement's unit is one a key can have.
            assert!(
                Unit::ALL.iter().any(|u| u.symbol() == m.unit),
                "{}: unit {}",
                m.id,
                m.unit
            );
        }
    }

    #[test]
    fn numbers_are_right_aligned_under_their_header() {
        let f = sample();
        let text = TableExporter::default().render(&f).unwrap();
        let (header, rows) = section(&text, "measurement ");
        let end = header.find("p50").unwrap() + "p50".len();
        for row in rows {
            let before = &row[..end];
            assert!(
                before.ends_with(|c: char| c.is_ascii_digit()),
                "p50 ends at its header's end: {row}"
            );
            assert_eq!(row.as_bytes()[end], b' ');
        }
    }
}
