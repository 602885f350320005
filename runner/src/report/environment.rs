//! The report's environment table: the machine and kernel settings that shape the
//! figures (CPU, SMT, governors, THP, hugepages, NUMA balancing, prefetchers, the timer),
//! then the topology (NUMA nodes, caches, cache instances, dax devices).

use super::html::{esc, table};
use bench_core::env::Environment;
use bench_core::params::ParamsFile;
use bench_core::timer::TimerInfo;
use bench_core::units::{format_size, human_bytes};

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "unknown (the kernel does not tell)".into(),
    }
}

/// The environment table: the settings that shape the figures, then the topology.
pub(super) fn environment(f: &ParamsFile) -> String {
    let mut rows = settings(f);
    topology(&f.environment, &mut rows);
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(k, v)| vec![esc(k), esc(&v)])
        .collect();
    table("env", &["setting", "value"], &rows)
}

/// One row per machine and kernel setting, and the timer's.
fn settings(f: &ParamsFile) -> Vec<(&'static str, String)> {
    let e = &f.environment;
    vec![
        (
            "CPU",
            format!(
                "{} ({}), {} logical CPUs, {} socket(s), {} thread(s) per core",
                e.cpu.model,
                e.cpu.vendor,
                e.cpu.logical_cpus,
                e.cpu.sockets,
                e.cpu.threads_per_core
            ),
        ),
        ("CPU flags", e.cpu.flags.join(" ")),
        ("SMT active", yes_no(e.smt_active)),
        (
            "cpufreq governor",
            if e.governors.is_empty() {
                "none exposed (no cpufreq, as in most VMs)".into()
            } else {
                e.governors.join(", ")
            },
        ),
        ("turbo / boost", yes_no(e.turbo)),
        (
            "transparent huge pages",
            format!(
                "enabled: {}, defrag: {}",
                e.thp_enabled.as_deref().unwrap_or("unknown"),
                e.thp_defrag.as_deref().unwrap_or("unknown")
            ),
        ),
        ("hugepages", hugepages(e)),
        ("automatic NUMA balancing", yes_no(e.numa_balancing)),
        (
            "hypervisor",
            e.hypervisor
                .clone()
                .unwrap_or_else(|| "none (bare metal)".into()),
        ),
        ("kernel / arch", format!("{} / {}", e.kernel, e.arch)),
        ("memory", human_bytes(e.mem_total_bytes)),
        ("allowed CPUs", e.allowed_cpus.clone()),
        (
            "perf_event_paranoid",
            e.perf_event_paranoid
                .map_or("unknown".into(), |v| v.to_string()),
        ),
        (
            "hardware prefetchers",
            match &e.prefetchers.reason {
                Some(r) => format!("{}: {r}", e.prefetchers.state),
                None => format!("{} ({})", e.prefetchers.state, e.prefetchers.source),
            },
        ),
        ("timer", timer(&f.timer)),
    ]
}

/// Each hugepage size with its total and free pages.
fn hugepages(e: &Environment) -> String {
    e.topology
        .hugepages
        .iter()
        .map(|h| {
            format!(
                "{}: {} total, {} free",
                format_size(h.page_size_bytes),
                h.total,
                h.free
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The timer's source, calibration, overhead and resolution (and fallback, if any).
fn timer(t: &TimerInfo) -> String {
    format!(
        "{} at {} ({}; spread {:.1} ppm), invariant: {}, overhead {:.1} ns, \
         tick {:.2} ns, resolution {:.1} ns, timed batches >= {:.1} us{}",
        serde_json::to_value(t.source)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_else(|| format!("{:?}", t.source)),
        frequency(t.freq_hz),
        t.freq_method,
        t.calibration_spread_ppm,
        yes_no(t.invariant),
        t.overhead_ns,
        t.tick_ns,
        t.resolution_ns,
        t.min_batch_ns / 1e3,
        t.fallback_reason
            .as_ref()
            .map_or(String::new(), |r| format!("; fallback: {r}"))
    )
}

/// A frequency to four significant digits in the unit that reads best: `2.300 GHz`
/// (a TSC), `25.00 MHz` (an Arm generic timer), `1000 Hz`.
pub(super) fn frequency(hz: f64) -> String {
    let (v, unit) = if hz >= 1e9 {
        (hz / 1e9, "GHz")
    } else if hz >= 1e6 {
        (hz / 1e6, "MHz")
    } else if hz >= 1e3 {
        (hz / 1e3, "kHz")
    } else {
        return format!("{hz:.0} Hz");
    };
    let decimals = if v >= 100.0 {
        1
    } else if v >= 10.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$} {unit}")
}

/// Rows for the NUMA nodes, caches, cache instances and dax devices.
fn topology(e: &Environment, rows: &mut Vec<(&'static str, String)>) {
    for n in &e.topology.nodes {
        rows.push((
            "NUMA node",
            format!(
                "node {}: CPUs {:?}, {}, distances {:?}{}",
                n.id,
                n.cpus,
                human_bytes(n.mem_total_bytes),
                n.distances,
                if n.likely_far_memory {
                    ", likely far memory"
                } else {
                    ""
                }
            ),
        ));
    }
    for c in &e.topology.caches {
        rows.push((
            "cache",
            format!(
                "L{} {}: {}, {}-byte lines, shared by CPUs {}",
                c.level,
                c.kind,
                human_bytes(c.size_bytes as u64),
                c.line_bytes,
                c.shared_cpus
            ),
        ));
    }
    if !e.topology.cache_instances.is_empty() {
        rows.push(("cache instances (all CPUs)", cache_instances(e)));
    }
    for d in &e.topology.dax {
        rows.push((
            "dax device",
            format!(
                "{} ({}), {}, target node {}",
                d.name,
                d.path.display(),
                format_size(d.size_bytes as usize),
                d.target_node.map_or("-".into(), |n| n.to_string())
            ),
        ));
    }
}

/// Every cache instance, grouped by level and size: what the DRAM sizing rule sums.
fn cache_instances(e: &Environment) -> String {
    let mut groups: std::collections::BTreeMap<(u8, usize), Vec<&str>> = Default::default();
    for c in &e.topology.cache_instances {
        groups
            .entry((c.level, c.size_bytes))
            .or_default()
            .push(c.cpus.as_str());
    }
    groups
        .iter()
        .rev()
        .map(|((l, size), cpus)| {
            let shown: Vec<&str> = cpus.iter().copied().take(4).collect();
            let more = if cpus.len() > 4 { ", ..." } else { "" };
            format!(
                "L{l} {} x {} (CPUs {}{more})",
                cpus.len(),
                format_size(*size),
                shown.join("; ")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
