//! params.json as OpenMetrics text (the exposition format of the OpenMetrics
//! specification, github.com/OpenObservability/OpenMetrics, `specification/OpenMetrics.md`),
//! for a Prometheus-compatible store.
//!
//! * Every params key is a gauge: family `cxlchar_<key>` (the key without its `@target`
//!   qualifier), one series per measured value, labelled `key` (the params.json key) and
//!   `target` (the qualifier, or `param_info.target` for an unqualified key). An
//!   unqualified key that only repeats `key@target` (params.json names the first target's
//!   figure both ways) is not written again: `mem_lat_ns@anon` is the one series of
//!   `cxlchar_mem_lat_ns{target="anon"}`, so `sum()` counts each figure once. `# HELP` is
//!   the key registry's meaning and unit. Every series has the label `noisy`: `"true"`
//!   where `param_info.<key>.noisy` says the figure stands only on disturbed samples (the
//!   summary's and the report's noisy keys), else `"false"`; `{noisy="false"}` selects
//!   the clean figures.
//! * Every measurement is a sample of a summary family per unit, `cxlchar_measurement_ns`,
//!   `cxlchar_measurement_gbs`, ...: labels `id`, `benchmark`, `target` and, where the
//!   measurement recorded its counters, `disturbed` (`"true"`: disturbed in every attempt,
//!   the count of [`ParamsFile::disturbed_measurements`]; `"false"`: not; the label is
//!   absent where nothing was recorded, as the CSV's cell is empty); quantiles 0 (min),
//!   0.5, 0.9, 0.99, 0.999 and 1 (max) of its distribution; `_count` = its `n`; `_sum` =
//!   mean x n, only where no sample is negative (a sum of signed differences is not a
//!   summary's sum).
//! * Units: the values keep the units of the key names (ns, GB/s, bytes, ratio, Mmsg/s),
//!   so a metric reads like its params.json key. OpenMetrics asks that a `# UNIT` be a
//!   suffix of the name and recommends base units (seconds, bytes); we convert nothing,
//!   so `# UNIT` is given only where our unit is a base unit (`bytes`), and omitted for
//!   ns, GB/s, ratios and Mmsg/s (the name's suffix still says the unit; convert in the
//!   query, e.g. `cxlchar_mem_lat_ns * 1e-9`).
//! * Names match `[a-zA-Z_:][a-zA-Z0-9_:]*` (anything else becomes `_`); label values
//!   and help texts escape `\` and `"`; one family per name, each series once;
//!   the text ends with `# EOF`.
//! * Label values and help texts come from the params file (target names, keys), which a
//!   stranger may have written: control characters in them (an ANSI escape, a carriage
//!   return) are written as the text of an escape (`\x1b`, [`printable`]), which the
//!   format's own escaping then carries as plain characters (`\\x1b`): a parser reads
//!   the text `\x1b`, and nothing reaches a terminal that shows the file.

use super::Exporter;
use crate::output::text::printable;
use anyhow::{bail, Result};
use bench_core::keys::{self, Unit};
use bench_core::params::ParamsFile;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Renders params.json as OpenMetrics text (see the module doc).
pub struct OpenMetricsExporter;

/// Prefix of every metric name.
pub const PREFIX: &str = "cxlchar_";

/// A metric name from `s`: characters outside `[a-zA-Z0-9_:]` become `_`, and a leading
/// digit gets a `_` before it.
pub fn metric_name(s: &str) -> String {
    let mut n: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) {
        n.insert(0, '_');
    }
    n
}

/// A label value or help text escaped: control characters shown as the text of an
/// escape ([`printable`]; a newline as `\x0a`, so none is left for the format's `\n`),
/// then `\` -> `\\` and `"` -> `\"` as the format asks.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in printable(s).chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            c => o.push(c),
        }
    }
    o
}

/// A number as OpenMetrics writes it (`NaN`, `+Inf`, `-Inf`, else the shortest text that
/// reads back to the same value).
pub fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v:?}")
    }
}

/// The name suffix of a measurement unit (`ns`, `GB/s` -> `gbs`).
fn unit_suffix(unit: &str) -> String {
    match unit {
        "GB/s" => "gbs".into(),
        u => metric_name(&u.to_ascii_lowercase()),
    }
}

fn labels(pairs: &[(&str, &str)]) -> String {
    let v: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", v.join(","))
}

/// The quantiles written for each measurement, with the distribution's field.
const QUANTILES: [&str; 6] = ["0", "0.5", "0.9", "0.99", "0.999", "1"];

impl Exporter for OpenMetricsExporter {
    fn render(&self, file: &ParamsFile) -> Result<String> {
        let mut s = String::new();
        let mut names = BTreeSet::new();
        // Params: one gauge family per key name without its qualifier.
        let mut families: BTreeMap<String, Vec<(&String, f64)>> = BTreeMap::new();
        // The unqualified keys that repeat a `key@target` of the file.
        let repeated: BTreeSet<&str> = file
            .params
            .keys()
            .filter(|k| crate::consumers::keys::repeats_bare(file, k))
            .filter(|k| keys::split_target(k).1.is_some())
            .map(|k| keys::base_name(k))
            .collect();
        for (k, v) in &file.params {
            if repeated.contains(k.as_str()) {
                continue;
            }
            families
                .entry(keys::base_name(k).to_string())
                .or_default()
                .push((k, *v));
        }
        for (base, series) in &families {
            let name = format!("{PREFIX}{}", metric_name(base));
            if !names.insert(name.clone()) {
                bail!("two params keys give the metric name {name}");
            }
            writeln!(s, "# TYPE {name} gauge")?;
            let def = keys::lookup(base);
            let unit = Unit::of_name(base);
            if unit == Some(Unit::Bytes) {
                writeln!(s, "# UNIT {name} bytes")?;
            }
            let help = match def {
                Some(d) => format!(
                    "{} [{}]",
                    crate::output::markup::plain(d.meaning),
                    d.unit.symbol()
                ),
                None => format!(
                    "params key {base} (not in this cxlchar's key registry){}",
                    unit.map_or(String::new(), |u| format!(" [{}]", u.symbol()))
                ),
            };
            writeln!(s, "# HELP {name} {}", escape(&help))?;
            for (k, v) in series {
                let target = match keys::split_target(k).1 {
                    Some(t) => t.to_string(),
                    None => file
                        .param_info
                        .get(*k)
                        .map_or(String::new(), |i| i.target.clone()),
                };
                let noisy = file.param_info.get(*k).is_some_and(|i| i.noisy.is_some());
                writeln!(
                    s,
                    "{name}{} {}",
                    labels(&[
                        ("key", k),
                        ("target", &target),
                        ("noisy", if noisy { "true" } else { "false" })
                    ]),
                    number(*v)
                )?;
            }
        }
        // Measurements: one summary family per unit.
        let mut by_unit: BTreeMap<String, Vec<&bench_core::params::Measurement>> = BTreeMap::new();
        for m in &file.measurements {
            by_unit.entry(unit_suffix(&m.unit)).or_default().push(m);
        }
        for (suffix, ms) in &by_unit {
            let name = format!("{PREFIX}measurement_{suffix}");
            if !names.insert(name.clone()) {
                bail!("the measurement family {name} clashes with a params key");
            }
            writeln!(s, "# TYPE {name} summary")?;
            if suffix == "bytes" {
                writeln!(s, "# UNIT {name} bytes")?;
            }
            writeln!(
                s,
                "# HELP {name} {}",
                escape(&format!(
                    "distribution of each cxlchar measurement in {}: quantile 0 = min, 1 = max; \
                     the measurement's method is in params.json",
                    ms[0].unit
                ))
            )?;
            let mut ids = BTreeSet::new();
            for m in ms {
                if !ids.insert((&m.id, &m.target)) {
                    bail!("measurement {} on {} is given twice", m.id, m.target);
                }
                let d = &m.distribution;
                let vals = [d.min, d.p50, d.p90, d.p99, d.p999, d.max];
                let mut base = vec![
                    ("id", m.id.as_str()),
                    ("benchmark", m.benchmark.as_str()),
                    ("target", m.target.as_str()),
                ];
                match super::csv::disturbed_cell(m) {
                    "" => {}
                    d => base.push(("disturbed", d)),
                }
                for (q, v) in QUANTILES.iter().zip(vals) {
                    let mut l = base.clone();
                    l.push(("quantile", q));
                    writeln!(s, "{name}{} {}", labels(&l), number(v))?;
                }
                writeln!(s, "{name}_count{} {}", labels(&base), d.n)?;
                if d.min >= 0.0 && d.mean.is_finite() {
                    writeln!(
                        s,
                        "{name}_sum{} {}",
                        labels(&base),
                        number(d.mean * d.n as f64)
                    )?;
                }
            }
        }
        s.push_str("# EOF\n");
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_follow_the_grammar() {
        assert_eq!(metric_name("mem_lat_ns"), "mem_lat_ns");
        assert_eq!(metric_name("a-b.c"), "a_b_c");
        assert_eq!(metric_name("9x"), "_9x");
        assert_eq!(escape("a\"b\\c"), "a\\\"b\\\\c");
        assert_eq!(escape("\u{1b}[31mx\ny"), "\\\\x1b[31mx\\\\x0ay");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(3.0), "3.0");
        assert_eq!(number(1e-12).parse::<f64>().unwrap(), 1e-12);
        assert_eq!(unit_suffix("GB/s"), "gbs");
        assert_eq!(unit_suffix("ns"), "ns");
    }
}
