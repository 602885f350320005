//! The terminal summary of a run: what a person reads first, in the order they read it
//! (latency by level and per target, bandwidth by level and per target, far memory, GPU,
//! core-to-core, the self-checks' verdicts, warnings by code, what was skipped), in under
//! 40 lines with the run's header, on an 80-column terminal too. On a terminal every line
//! fits its width, wrapped at spaces and never cut, each continuation line under the
//! column its text starts at ([`crate::output::width::wrap_under`]); on a pipe every line
//! is whole. A figure that stands on disturbed samples is marked `*`. Each warning code
//! shows its first message (a long one up to a clause boundary, about two lines); the full
//! tables are [`super::table::TableExporter`]'s (`--format table --verbose`), and every
//! figure and every warning's full text are in the params.json `--out` writes.

mod notes;
#[cfg(test)]
mod tests;

use crate::output::num;
use crate::output::text::printable;
use crate::output::width::wrap_under;
use bench_core::params::ParamsFile;
use bench_core::units::human_bytes;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a measuring command prints with `--format table` and no `--verbose`: the run's
/// header lines and the summary.
#[derive(Debug, Clone, Default)]
pub struct SummaryExporter {
    /// The terminal's width (`None`: not a terminal, whole lines).
    pub width: Option<usize>,
    /// The file `--out` writes (`None`: the run writes nothing).
    pub out: Option<PathBuf>,
}

impl super::Exporter for SummaryExporter {
    fn render(&self, f: &ParamsFile) -> anyhow::Result<String> {
        let mut lines = run_lines(f, self.width);
        lines.push("", "");
        lines
            .0
            .extend(summary_lines(f, self.width, self.out.as_deref()).0);
        Ok(lines.fitted(self.width))
    }
}

/// The column the summary's text starts at, after its labels (`self-checks    `).
const COL: usize = 15;

/// At most this many targets get a line of their own (the rest are counted).
const MAX_TARGETS: usize = 6;

/// Lines for people: each a prefix (its labels, `bandwidth      1 thread: `) and its text,
/// which continues under itself when the line is wrapped.
#[derive(Debug, Default)]
struct Lines(Vec<(String, String)>);

impl Lines {
    /// A line of `prefix` then `text`.
    fn push(&mut self, prefix: impl Into<String>, text: impl Into<String>) {
        self.0.push((prefix.into(), text.into()));
    }

    /// `label` padded to [`COL`] (two spaces at least), `sub` (`2 threads: `, or empty),
    /// then `text`: continued under the text.
    fn row(&mut self, label: &str, sub: &str, text: impl Into<String>) {
        let pad = COL.max(label.chars().count() + 2);
        self.push(format!("{label:<pad$}{sub}"), text);
    }

    /// Every line shown safely ([`printable`]) and fitted to `width`: wrapped under its
    /// text on a terminal, whole without one.
    fn fitted(&self, width: Option<usize>) -> String {
        let mut s = String::new();
        for (prefix, text) in &self.0 {
            let prefix = printable(prefix);
            let line = format!("{prefix}{}", printable(text));
            let lines = match width {
                Some(w) => wrap_under(&line, w, prefix.chars().count()),
                None => vec![line],
            };
            for l in lines {
                s.push_str(&l);
                s.push('\n');
            }
        }
        s
    }
}

/// The summary block, fitted to `width` (`None`: whole lines); its first line says where
/// every figure is: the params.json `out` names, or that nothing was written.
pub fn render(f: &ParamsFile, width: Option<usize>, out: Option<&std::path::Path>) -> String {
    summary_lines(f, width, out).fitted(width)
}

fn summary_lines(f: &ParamsFile, width: Option<usize>, out: Option<&std::path::Path>) -> Lines {
    let every = match out {
        Some(p) => format!("every figure: {}", p.display()),
        None => "nothing written: --out FILE keeps every figure".into(),
    };
    let mut lines = Lines::default();
    lines.push("summary (", format!("{every}; full tables: --verbose)"));
    links(f, &mut lines);
    latency(f, &mut lines);
    bandwidth(f, &mut lines);
    targets(f, &mut lines);
    far_memory(f, &mut lines);
    numa(f, &mut lines);
    gpu(f, &mut lines);
    c2c(f, &mut lines);
    interference(f, &mut lines);
    notes::self_checks(f, &mut lines);
    notes::quality(f, &mut lines);
    notes::warnings(f, &mut lines, width, out.is_some());
    notes::skipped(f, &mut lines);
    lines
}

/// The degraded PCIe links, first (a link below its capability bounds what every figure
/// through it can reach); nothing when every link runs at its capability.
fn links(f: &ParamsFile, out: &mut Lines) {
    let bad = bench_core::pci::links::degraded(&f.links);
    if bad.is_empty() {
        return;
    }
    let judged = bench_core::pci::links::judged_links(&f.links);
    let each: Vec<String> = bad.iter().map(|l| l.short()).collect();
    out.row(
        "PCIe links",
        "",
        format!(
            "{} of {judged} degraded (link_degraded): {}",
            bad.len(),
            each.join("; ")
        ),
    );
}

/// A number and its unit as the summary shows a key's value (`132 MiB`, `1.5x`,
/// `12.50 GB/s`), marked `*` after the number when the figure is noisy.
fn value(f: &ParamsFile, key: &str, v: f64) -> String {
    let mark = noisy_mark(f, key);
    let unit = bench_core::keys::Unit::of_name(bench_core::keys::base_name(key));
    match unit {
        Some(bench_core::keys::Unit::Bytes) => {
            let h = human_bytes(v.max(0.0) as u64);
            match h.split_once(' ') {
                Some((n, u)) => format!("{n}{mark} {u}"),
                None => format!("{h}{mark}"),
            }
        }
        Some(bench_core::keys::Unit::Factor | bench_core::keys::Unit::Ratio) => {
            format!("{}{mark}x", num(Some(v)))
        }
        Some(u) => format!("{}{mark} {}", num(Some(v)), u.symbol()),
        None => format!("{}{mark}", num(Some(v))),
    }
}

/// `label value unit` of a key, when the file has it.
fn fig(f: &ParamsFile, label: &str, key: &str) -> Option<String> {
    let text = value(f, key, *f.params.get(key)?);
    Some(if label.is_empty() {
        text
    } else {
        format!("{label} {text}")
    })
}

/// The mark after a figure the file flags noisy (it stands only on disturbed samples):
/// `*`, explained on the `noisy keys` line.
const NOISY_MARK: &str = "*";

fn noisy_mark(f: &ParamsFile, key: &str) -> &'static str {
    if f.param_info.get(key).is_some_and(|i| i.noisy.is_some()) {
        NOISY_MARK
    } else {
        ""
    }
}

/// The figures of `keys` that the file has, joined with ` | `.
fn figs(f: &ParamsFile, keys: &[(&str, &str)]) -> Option<String> {
    let v: Vec<String> = keys.iter().filter_map(|(l, k)| fig(f, l, k)).collect();
    (!v.is_empty()).then(|| v.join(" | "))
}

/// Figures of one unit (`keys` all `_ns` or all `_gbs`): `L1 1.1 | L2 3.9 ns`, the unit
/// once at the end.
fn figs_in(f: &ParamsFile, keys: &[(&str, &str)], unit: &str) -> Option<String> {
    let v: Vec<String> = keys
        .iter()
        .filter_map(|(l, k)| {
            let v = f.params.get(*k)?;
            Some(format!("{l} {}{}", num(Some(*v)), noisy_mark(f, k)))
        })
        .collect();
    (!v.is_empty()).then(|| format!("{} {unit}", v.join(" | ")))
}

/// The thread count of the measurements a key was derived from (`parameters.threads`).
fn threads(f: &ParamsFile, key: &str) -> Option<u64> {
    let info = f.param_info.get(key)?;
    info.from.iter().find_map(|id| {
        f.measurements
            .iter()
            .find(|m| &m.id == id)
            .and_then(|m| m.parameters.get("threads"))
            .and_then(|t| t.as_u64())
    })
}

/// The target of the unqualified keys (the first measured).
fn primary(f: &ParamsFile) -> String {
    ["mem_lat_ns", "mem_bw_gbs", "l1_lat_ns"]
        .iter()
        .find_map(|k| f.param_info.get(*k).map(|i| i.target.clone()))
        .unwrap_or_else(|| "anon".into())
}

fn latency(f: &ParamsFile, out: &mut Lines) {
    let keys = [
        ("L1", "l1_lat_ns"),
        ("L2", "l2_lat_ns"),
        ("L3", "l3_lat_ns"),
        ("memory", "mem_lat_ns"),
    ];
    if let Some(s) = figs_in(f, &keys, "ns") {
        out.row("latency", "", format!("{s}   (on {})", primary(f)));
    }
}

fn bandwidth(f: &ParamsFile, out: &mut Lines) {
    let one = [
        ("L1", "l1_bw_gbs"),
        ("L2", "l2_bw_gbs"),
        ("L3", "l3_bw_gbs"),
        ("memory", "mem_bw_1t_gbs"),
    ];
    let mut label = "bandwidth";
    if let Some(s) = figs_in(f, &one, "GB/s") {
        out.row(label, "1 thread: ", s);
        label = "";
    }
    let all = [
        ("read", "mem_bw_gbs"),
        ("write", "mem_write_bw_gbs"),
        ("copy", "copy_bw_gbs"),
        ("nt-copy", "nt_copy_bw_gbs"),
        ("dc zva", "zva_write_bw_gbs"),
    ];
    if let Some(s) = figs_in(f, &all, "GB/s") {
        let n = threads(f, "mem_bw_gbs").map_or("all".into(), |n| n.to_string());
        out.row(label, &format!("{n} threads: "), format!("memory {s}"));
    }
}

/// One line per target other than the primary one (GPUs have their own line).
fn targets(f: &ParamsFile, out: &mut Lines) {
    let main = primary(f);
    let mut by_target: BTreeMap<&str, ()> = BTreeMap::new();
    for k in f.params.keys() {
        if let (_, Some(t)) = bench_core::keys::split_target(k) {
            if t != main && !t.starts_with("gpu:") {
                by_target.insert(t, ());
            }
        }
    }
    let n = by_target.len();
    for t in by_target.keys().take(MAX_TARGETS) {
        let q = |k: &str| format!("{k}@{t}");
        let keys = [
            ("latency", q("mem_lat_ns")),
            ("latency", q("cxl_lat_ns")),
            ("1 thread", q("mem_bw_1t_gbs")),
            ("1 thread", q("cxl_bw_1t_gbs")),
            ("all threads", q("mem_bw_gbs")),
            ("all threads", q("cxl_bw_gbs")),
        ];
        let refs: Vec<(&str, &str)> = keys.iter().map(|(l, k)| (*l, k.as_str())).collect();
        // Targets of derived keys only (`hmat_lat_ratio@node:1`, `numa_*@numa`) have
        // their own lines.
        if let Some(s) = figs(f, &refs) {
            out.push(format!("  on {t}: "), s);
        }
    }
    if n > MAX_TARGETS {
        out.push(
            "  ",
            format!("(+{} more targets: --verbose)", n - MAX_TARGETS),
        );
    }
}

/// The NUMA matrix as MLC prints it (a row per CPU node: p50 latency, then read
/// bandwidth, per memory node), then advertised vs measured per node.
fn numa(f: &ParamsFile, out: &mut Lines) {
    if let Some(m) = &f.numa_matrix {
        let head: String = m
            .targets
            .iter()
            .map(|t| format!("{:>9}", format!("node {t}")))
            .collect();
        for (what, unit) in [("latency", "ns"), ("read", "GB/s")] {
            out.push(
                format!("numa {what:<9} "),
                format!("{head}   ({unit}, CPU node -> memory node)"),
            );
            for &i in &m.initiators {
                let row: String = m
                    .targets
                    .iter()
                    .map(|&t| {
                        let c = m.cells.iter().find(|c| c.initiator == i && c.target == t);
                        let v = c.map(|c| match what {
                            "latency" => c.latency.distribution.p50,
                            _ => c.bandwidth.distribution.p50,
                        });
                        format!("{:>9}", crate::output::num(v))
                    })
                    .collect();
                out.push(format!("  from node {i:<3} "), row);
            }
        }
    }
    let ratios: Vec<String> = f
        .hmat_vs_measured
        .iter()
        .filter(|(_, c)| c.lat_ratio.is_some() || c.bw_ratio.is_some())
        .map(|(t, c)| {
            let r = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
            format!("{t} lat {} bw {}", r(c.lat_ratio), r(c.bw_ratio))
        })
        .collect();
    if !ratios.is_empty() {
        out.row(
            "firmware",
            "vs advertised (1 = as advertised): ",
            ratios.join(" | "),
        );
    }
}

fn far_memory(f: &ParamsFile, out: &mut Lines) {
    let keys = [
        ("latency", "cxl_lat_ns"),
        ("vs memory", "cxl_lat_factor"),
        ("bandwidth", "cxl_bw_gbs"),
        ("vs memory", "cxl_bw_factor"),
        ("atomics", "cxl_atomic_lat_ns"),
    ];
    let line = figs(f, &keys).unwrap_or_else(|| "none measured".into());
    out.row("far memory", "", line);
}

fn gpu(f: &ParamsFile, out: &mut Lines) {
    let keys = [
        ("H2D", "gpu_h2d_bw_gbs"),
        ("D2H", "gpu_d2h_bw_gbs"),
        ("copy latency", "gpu_copy_lat_ns"),
    ];
    let Some(s) = figs(f, &keys) else {
        return;
    };
    let name = f
        .measurements
        .iter()
        .filter(|m| m.benchmark.starts_with("gpu"))
        .find_map(|m| m.parameters.get("gpu").and_then(|g| g.as_str()))
        .unwrap_or("GPU");
    out.row("GPU", &format!("{name}: "), s);
}

fn c2c(f: &ParamsFile, out: &mut Lines) {
    let keys = [("flag", "c2c_flag_lat_ns"), ("cas", "c2c_cas_lat_ns")];
    if let Some(s) = figs(f, &keys) {
        out.row(
            "core-to-core",
            "",
            format!("{s} (median over pair classes)"),
        );
    }
    // By class where the machine has more than one (a big machine: a line, not a matrix).
    let classes = [
        ("same LLC", "c2c_flag_same_llc_lat_ns"),
        ("cross LLC", "c2c_flag_cross_llc_lat_ns"),
        ("cross socket", "c2c_flag_cross_socket_lat_ns"),
    ];
    if classes
        .iter()
        .filter(|(_, k)| f.params.contains_key(*k))
        .count()
        > 1
    {
        if let Some(s) = figs_in(f, &classes, "ns") {
            out.row("  by class", "", format!("{s} (flag)"));
        }
    }
    let bw = [
        ("same LLC", "c2c_bw_same_llc_gbs"),
        ("cross LLC", "c2c_bw_cross_llc_gbs"),
        ("cross socket", "c2c_bw_cross_socket_gbs"),
    ];
    if let Some(s) = figs_in(f, &bw, "GB/s") {
        out.row("  bandwidth", "", format!("{s} (modified lines, by class)"));
    }
}

/// One tier's load on another (`mem interference`): latency and bandwidth together /
/// alone per tier pair, the baseline first, the GPU's copies (h2d) last.
fn interference(f: &ParamsFile, out: &mut Lines) {
    let pairs = [
        ("dram", "dram"),
        ("dram", "far"),
        ("far", "dram"),
        ("far", "far"),
        ("dram", "gpu"),
        ("far", "gpu"),
    ];
    let each: Vec<String> = pairs
        .iter()
        .filter_map(|(v, a)| {
            let lat = format!("xtier_{v}_under_{a}_lat_ratio");
            let bw = format!("xtier_{v}_under_{a}_bw_ratio");
            let s = figs(f, &[("latency", lat.as_str()), ("bandwidth", bw.as_str())])?;
            Some(format!("{v} under {a}: {s}"))
        })
        .collect();
    if !each.is_empty() {
        out.row(
            "interference",
            "",
            format!("{} (together / alone)", each.join("; ")),
        );
    }
}

/// The run's header lines: tool, CPU, kernel, hypervisor, timer and prefetchers, each
/// continued under its text after its label. On a terminal of `width`, the prefetchers'
/// state (with how to read it, where it is unknown) is abridged to two lines as a warning
/// is; `cxlchar env` and `--verbose` give it whole.
fn run_lines(f: &ParamsFile, width: Option<usize>) -> Lines {
    let e = &f.environment;
    let mut l = Lines::default();
    l.push(
        "cxlchar ",
        format!(
            "{} | {} | {} CPUs | kernel {} | {}",
            f.tool.version,
            e.cpu.model,
            e.cpu.logical_cpus,
            e.kernel,
            e.hypervisor
                .as_deref()
                .map_or("bare metal".to_string(), |h| format!("virtualized ({h})"))
        ),
    );
    l.push(
        "timer: ",
        format!(
            "{:?} at {:.4} GHz ({}), overhead {:.1} ns subtracted, invariant: {}",
            f.timer.source,
            f.timer.freq_hz / 1e9,
            f.timer.freq_method,
            f.timer.overhead_ns,
            f.timer
                .invariant
                .map_or("unknown".into(), |b| b.to_string())
        ),
    );
    // The counter's limits and the shortest timed batch derived from them (files
    // written before they were recorded have none).
    if f.timer.min_batch_ns > 0.0 {
        l.push(
            "timer limits: ",
            format!(
                "tick {:.2} ns, resolution {:.1} ns -> timed batches >= {:.1} us",
                f.timer.tick_ns,
                f.timer.resolution_ns,
                f.timer.min_batch_ns / 1e3
            ),
        );
    }
    let prefix = "prefetchers: ";
    let state = e.prefetchers.summary();
    l.push(
        prefix,
        match width {
            Some(w) => notes::abridge(&state, notes::two_lines(w, prefix.len())),
            None => state,
        },
    );
    l
}

/// The run's header lines, whole (control characters escaped).
pub(super) fn write_run(s: &mut String, f: &ParamsFile) -> std::fmt::Result {
    s.push_str(&run_lines(f, None).fitted(None));
    Ok(())
}
