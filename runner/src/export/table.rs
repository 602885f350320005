//! A readable report: model keys, measurements, skipped items and warnings.

use super::Exporter;
use crate::output::warnings::render_warnings;
use anyhow::Result;
use bench_core::params::ParamsFile;
use std::fmt::Write;

/// Table exporter.
pub struct TableExporter;

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

impl Exporter for TableExporter {
    fn render(&self, f: &ParamsFile) -> Result<String> {
        let mut s = String::new();
        let e = &f.environment;
        writeln!(
            s,
            "cxlchar {} | {} | {} CPUs | kernel {} | {}",
            f.tool.version,
            e.cpu.model,
            e.cpu.logical_cpus,
            e.kernel,
            e.hypervisor
                .as_deref()
                .map_or("bare metal".to_string(), |h| format!("virtualized ({h})"))
        )?;
        writeln!(
            s,
            "timer: {:?} at {:.4} GHz ({}), overhead {:.1} ns subtracted, invariant: {}",
            f.timer.source,
            f.timer.freq_hz / 1e9,
            f.timer.freq_method,
            f.timer.overhead_ns,
            f.timer
                .invariant
                .map_or("unknown".into(), |b| b.to_string())
        )?;
        writeln!(s, "prefetchers: {}", e.prefetchers.summary())?;
        for (t, z) in &f.dram_sizing {
            writeln!(
                s,
                "DRAM working set on {t}: {} touched ({})",
                bench_core::units::format_size(z.touched_bytes),
                z.explain()
            )?;
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
                bench_core::units::format_size(c.touched_bytes),
                c.verdict,
                chains.join(", "),
                c.ratio,
                c.tolerance * 100.0,
                c.aligned_ratio
                    .map(|a| format!("; aligned/default {a:.3}"))
                    .unwrap_or_default()
            )?;
        }
        writeln!(s)?;
        if !f.params.is_empty() {
            writeln!(
                s,
                "{:<34} {:>12}  {:<6} {:<14} method",
                "param", "value", "unit", "target"
            )?;
            for (k, v) in &f.params {
                if k.contains('@') {
                    continue;
                }
                let info = f.param_info.get(k);
                writeln!(
                    s,
                    "{:<34} {:>12}  {:<6} {:<14} {}",
                    k,
                    fmt_value(*v),
                    info.map_or("", |i| &i.unit),
                    info.map_or("", |i| &i.target),
                    info.map_or("", |i| &i.method)
                )?;
            }
            let per_target = f.params.keys().filter(|k| k.contains('@')).count();
            if per_target > 0 {
                writeln!(
                    s,
                    "({per_target} per-target keys `key@target` in the JSON output)"
                )?;
            }
            writeln!(s)?;
        }
        if !f.measurements.is_empty() {
            writeln!(
                s,
                "{:<44} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  unit",
                "measurement", "n", "min", "p50", "p90", "p99", "p99.9", "max"
            )?;
            for m in &f.measurements {
                let d = &m.distribution;
                writeln!(
                    s,
                    "{:<44} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
                    m.id,
                    d.n,
                    fmt_value(d.min),
                    fmt_value(d.p50),
                    fmt_value(d.p90),
                    fmt_value(d.p99),
                    fmt_value(d.p999),
                    fmt_value(d.max),
                    m.unit
                )?;
            }
            writeln!(s)?;
        }
        // Hardware counts per operation next to the figures, where the PMU gave them.
        let per_op: Vec<_> = f
            .measurements
            .iter()
            .filter_map(|m| m.counters.as_ref().map(|c| (m, c)))
            .filter(|(_, c)| !c.per_op.is_empty())
            .collect();
        if !per_op.is_empty() {
            writeln!(s, "counters per operation:")?;
            for (m, c) in per_op {
                let v: Vec<String> = c
                    .per_op
                    .iter()
                    .map(|(k, v)| format!("{k} {}", fmt_value(*v)))
                    .collect();
                writeln!(s, "  {:<44} {}", m.id, v.join(", "))?;
            }
            writeln!(s)?;
        }
        if !f.skipped.is_empty() {
            writeln!(s, "skipped:")?;
            for k in &f.skipped {
                let t = if k.target.is_empty() {
                    String::new()
                } else {
                    format!(" on {}", k.target)
                };
                writeln!(s, "  {}{t}: {}", k.benchmark, k.reason)?;
            }
            writeln!(s)?;
        }
        s.push_str(&render_warnings(&f.warnings));
        Ok(s)
    }
}
