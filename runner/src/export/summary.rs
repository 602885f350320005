//! The terminal summary of a run: what a person reads first, in the order they read it
//! (latency by level and per target, bandwidth by level and per target, far memory, GPU,
//! core-to-core, the self-checks' verdicts, warnings counted by code, what was skipped),
//! in under 40 lines (a few more on an 80-column terminal). On a terminal every line fits
//! its width, wrapped at spaces and never cut ([`crate::output::width`]); on a pipe every
//! line is whole. Each warning code shows its first message (a long one up to a clause
//! boundary, about two lines); the full tables are [`super::table::TableExporter`]'s
//! (`--format table --verbose`), and every figure and every warning's full text are in
//! the params.json `--out` writes.

use crate::output::num;
use crate::output::width::fit;
use bench_core::params::ParamsFile;
use bench_core::units::human_bytes;
use std::collections::BTreeMap;
use std::fmt::Write;
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
        let mut s = String::new();
        write_run(&mut s, f)?;
        s.push('\n');
        s.push_str(&render(f, self.width, self.out.as_deref()));
        Ok(fit(&crate::output::text::printable_lines(&s), self.width))
    }
}

/// The width a warning's message is abridged for when there is no terminal.
const PIPE_WIDTH: usize = 160;

/// At most this many targets get a line of their own (the rest are counted).
const MAX_TARGETS: usize = 6;

/// The summary block, fitted to `width` (`None`: whole lines); its first line says where
/// every figure is: the params.json `out` names, or that nothing was written.
pub fn render(f: &ParamsFile, width: Option<usize>, out: Option<&std::path::Path>) -> String {
    let every = match out {
        Some(p) => format!("every figure: {}", p.display()),
        None => "nothing written: --out FILE keeps every figure".into(),
    };
    let mut lines = vec![format!("summary ({every}; full tables: --verbose)")];
    latency(f, &mut lines);
    bandwidth(f, &mut lines);
    targets(f, &mut lines);
    far_memory(f, &mut lines);
    numa(f, &mut lines);
    gpu(f, &mut lines);
    c2c(f, &mut lines);
    self_checks(f, &mut lines);
    quality(f, &mut lines);
    warnings(f, &mut lines, width.unwrap_or(PIPE_WIDTH), out.is_some());
    skipped(f, &mut lines);
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{l}");
    }
    fit(&s, width)
}

/// `text` whole when it has at most `max` characters, else its beginning up to the last
/// clause boundary (`; `, `: `, `, `, `. `, ` (`) or space within `max` characters,
/// marked with ` ...`: words are never cut.
pub fn abridge(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(4)).collect();
    let clause = ["; ", ": ", ", ", ". ", " ("]
        .iter()
        .filter_map(|b| head.rfind(b).map(|i| i + b.len().min(1)))
        .max()
        .filter(|i| *i >= head.len() / 3);
    let at = clause.or_else(|| head.rfind(' ')).unwrap_or(head.len());
    format!("{} ...", head[..at].trim_end())
}

/// `label value unit` of a key, when the file has it.
fn fig(f: &ParamsFile, label: &str, key: &str) -> Option<String> {
    let v = *f.params.get(key)?;
    let unit = bench_core::keys::Unit::of_name(key.split('@').next().unwrap_or(key));
    let text = match unit {
        Some(bench_core::keys::Unit::Bytes) => human_bytes(v.max(0.0) as u64),
        Some(bench_core::keys::Unit::Factor | bench_core::keys::Unit::Ratio) => {
            format!("{}x", num(Some(v)))
        }
        Some(u) => format!("{} {}", num(Some(v)), u.symbol()),
        None => num(Some(v)),
    };
    let text = format!("{text}{}", noisy_mark(f, key));
    Some(if label.is_empty() {
        text
    } else {
        format!("{label} {text}")
    })
}

/// ` (noisy)` after a figure the file flags noisy (it stands only on disturbed samples).
fn noisy_mark(f: &ParamsFile, key: &str) -> &'static str {
    if f.param_info.get(key).is_some_and(|i| i.noisy.is_some()) {
        " (noisy)"
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

fn latency(f: &ParamsFile, out: &mut Vec<String>) {
    let keys = [
        ("L1", "l1_lat_ns"),
        ("L2", "l2_lat_ns"),
        ("L3", "l3_lat_ns"),
        ("memory", "mem_lat_ns"),
    ];
    if let Some(s) = figs_in(f, &keys, "ns") {
        out.push(format!("latency        {s}   (on {})", primary(f)));
    }
}

fn bandwidth(f: &ParamsFile, out: &mut Vec<String>) {
    let one = [
        ("L1", "l1_bw_gbs"),
        ("L2", "l2_bw_gbs"),
        ("L3", "l3_bw_gbs"),
        ("memory", "mem_bw_1t_gbs"),
    ];
    if let Some(s) = figs_in(f, &one, "GB/s") {
        out.push(format!("bandwidth      1 thread: {s}"));
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
        out.push(format!("               {n} threads: memory {s}"));
    }
}

/// One line per target other than the primary one (GPUs have their own line).
fn targets(f: &ParamsFile, out: &mut Vec<String>) {
    let main = primary(f);
    let mut by_target: BTreeMap<&str, ()> = BTreeMap::new();
    for k in f.params.keys() {
        if let Some((_, t)) = k.split_once('@') {
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
            out.push(format!("  on {t}: {s}"));
        }
    }
    if n > MAX_TARGETS {
        out.push(format!("  (+{} more targets: --verbose)", n - MAX_TARGETS));
    }
}

/// The NUMA matrix as MLC prints it (a row per CPU node: p50 latency, then read
/// bandwidth, per memory node), then advertised vs measured per node.
fn numa(f: &ParamsFile, out: &mut Vec<String>) {
    if let Some(m) = &f.numa_matrix {
        let head: String = m
            .targets
            .iter()
            .map(|t| format!("{:>9}", format!("node {t}")))
            .collect();
        for (what, unit) in [("latency", "ns"), ("read", "GB/s")] {
            out.push(format!(
                "numa {what:<9} {head}   ({unit}, CPU node -> memory node)"
            ));
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
                out.push(format!("  from node {i:<3} {row}"));
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
        out.push(format!(
            "firmware       vs advertised (1 = as advertised): {}",
            ratios.join(" | ")
        ));
    }
}

fn far_memory(f: &ParamsFile, out: &mut Vec<String>) {
    let keys = [
        ("latency", "cxl_lat_ns"),
        ("vs memory", "cxl_lat_factor"),
        ("bandwidth", "cxl_bw_gbs"),
        ("vs memory", "cxl_bw_factor"),
        ("atomics", "cxl_atomic_lat_ns"),
    ];
    let line = figs(f, &keys).unwrap_or_else(|| "none measured".into());
    out.push(format!("far memory     {line}"));
}

fn gpu(f: &ParamsFile, out: &mut Vec<String>) {
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
    out.push(format!("GPU            {name}: {s}"));
}

fn c2c(f: &ParamsFile, out: &mut Vec<String>) {
    let keys = [("flag", "c2c_flag_lat_ns"), ("cas", "c2c_cas_lat_ns")];
    if let Some(s) = figs(f, &keys) {
        out.push(format!("core-to-core   {s} (median over pair classes)"));
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
            out.push(format!("  by class     {s} (flag)"));
        }
    }
}

/// The run's header lines: tool, CPU, kernel, hypervisor, timer and prefetchers.
pub(super) fn write_run(s: &mut String, f: &ParamsFile) -> std::fmt::Result {
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
    // The counter's limits and the shortest timed batch derived from them (files
    // written before they were recorded have none).
    if f.timer.min_batch_ns > 0.0 {
        writeln!(
            s,
            "timer limits: tick {:.2} ns, resolution {:.1} ns -> timed batches >= {:.1} us",
            f.timer.tick_ns,
            f.timer.resolution_ns,
            f.timer.min_batch_ns / 1e3
        )?;
    }
    writeln!(s, "prefetchers: {}", e.prefetchers.summary())
}

fn self_checks(f: &ParamsFile, out: &mut Vec<String>) {
    let mut v: Vec<String> = f
        .dram_check
        .iter()
        .map(|c| {
            let [a, b] = c.compared_bytes;
            format!(
                "DRAM check {} {}, {} thread(s) (CPUs {}) on {}: {} at {} ({} vs {}: {:.3}x)",
                c.benchmark,
                c.kernel,
                c.threads,
                c.cpus,
                c.target,
                match c.verdict {
                    bench_core::dram_check::Verdict::Unconfirmed => "UNCONFIRMED",
                    bench_core::dram_check::Verdict::Noisy => "NOISY",
                    v => v.name(),
                },
                human_bytes(c.reported_bytes as u64),
                human_bytes(a as u64),
                human_bytes(b as u64),
                c.ratio
            )
        })
        .collect();
    v.extend(f.prefetch_check.iter().map(|c| {
        format!(
            "prefetch check on {} at {}: {} (ratio {:.3})",
            c.target,
            human_bytes(c.touched_bytes as u64),
            c.verdict,
            c.ratio
        )
    }));
    if v.is_empty() {
        v.push("none recorded in this file".into());
    }
    let mut lines = v.into_iter();
    out.push(format!(
        "self-checks    {}",
        lines.next().unwrap_or_default()
    ));
    out.extend(lines.take(4).map(|l| format!("               {l}")));
}

/// How much of the file stands on disturbed samples: the noisy keys (named) and the share
/// of disturbed measurements, when there are any.
fn quality(f: &ParamsFile, out: &mut Vec<String>) {
    let noisy: Vec<&str> = f
        .param_info
        .iter()
        .filter(|(k, i)| i.noisy.is_some() && !k.contains('@'))
        .map(|(k, _)| k.as_str())
        .collect();
    let (disturbed, n) = f.disturbed_measurements();
    if !noisy.is_empty() {
        out.push(format!(
            "noisy keys     {} ({}): disturbed windows or a noisy self-check (why: \
             param_info in params.json); rerun on a quiet machine",
            noisy.len(),
            named_first(&noisy, NOISY_NAMED)
        ));
    }
    if disturbed > 0 {
        out.push(format!(
            "disturbed      {disturbed} of {n} measurements ({:.0} %) still disturbed after their retries",
            disturbed as f64 * 100.0 / n as f64
        ));
    }
}

/// How many noisy keys the summary names; the rest are counted.
const NOISY_NAMED: usize = 4;

/// The headline's keys first (those a reader looks for), then the others in order, at most
/// `most` of them named and the rest counted (`+32 more`).
fn named_first(keys: &[&str], most: usize) -> String {
    const HEADLINE: [&str; 7] = [
        "mem_lat_ns",
        "mem_bw_gbs",
        "mem_write_bw_gbs",
        "nt_write_bw_gbs",
        "copy_bw_gbs",
        "nt_copy_bw_gbs",
        "mem_bw_1t_gbs",
    ];
    let mut v: Vec<&str> = HEADLINE
        .iter()
        .copied()
        .filter(|h| keys.contains(h))
        .collect();
    v.extend(keys.iter().copied().filter(|k| !HEADLINE.contains(k)));
    let mut s = v[..v.len().min(most)].join(", ");
    if v.len() > most {
        s.push_str(&format!(", +{} more", v.len() - most));
    }
    s
}

/// The count of warnings by code, then one line per code: its first message, abridged
/// to about two lines of `width` ([`abridge`]); `written`: the run wrote a params.json,
/// where each is in full.
fn warnings(f: &ParamsFile, out: &mut Vec<String>, width: usize, written: bool) {
    if f.warnings.is_empty() {
        out.push("warnings       none".into());
        return;
    }
    let mut by_code: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for w in &f.warnings {
        by_code.entry(&w.code).or_default().push(&w.message);
    }
    let counts: Vec<String> = by_code
        .iter()
        .map(|(c, m)| format!("{c} {}", m.len()))
        .collect();
    out.push(format!(
        "warnings ({})  {}",
        f.warnings.len(),
        counts.join(" | ")
    ));
    for (code, messages) in by_code.iter().take(8) {
        let more = match messages.len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        let first = messages[0].split_whitespace().collect::<Vec<_>>().join(" ");
        // Two lines of the width after the code's indent (`  code:  `), less what
        // breaking at spaces leaves at the ends of the lines.
        let indent = code.len() + 5;
        let room = (2 * width.saturating_sub(indent))
            .saturating_sub(more.len() + 8)
            .max(40);
        out.push(format!("  {code}:  {}{more}", abridge(&first, room)));
    }
    out.push(if written {
        "  (each in full: params.json's `warnings`, or --verbose)".into()
    } else {
        "  (each in full: --verbose)".into()
    });
}

/// What was skipped, by target in the order first met (benchmarks of no target first),
/// each benchmark once with its count: `gpu, verbs; on anon: pool.flush/uc, pcie.post-parts (2)`.
fn skipped(f: &ParamsFile, out: &mut Vec<String>) {
    if f.skipped.is_empty() {
        return;
    }
    let mut by_target: Vec<(&str, Vec<(&str, usize)>)> = vec![("", vec![])];
    for k in &f.skipped {
        let t = match by_target.iter().position(|(t, _)| *t == k.target) {
            Some(i) => i,
            None => {
                by_target.push((&k.target, vec![]));
                by_target.len() - 1
            }
        };
        let names = &mut by_target[t].1;
        match names.iter_mut().find(|(b, _)| *b == k.benchmark) {
            Some((_, n)) => *n += 1,
            None => names.push((&k.benchmark, 1)),
        }
    }
    let parts: Vec<String> = by_target
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(t, names)| {
            let names = grouped(names);
            match *t {
                "" => names.join(", "),
                t => format!("on {t}: {}", names.join(", ")),
            }
        })
        .collect();
    out.push(format!(
        "skipped ({})    {} (reasons: --verbose)",
        f.skipped.len(),
        parts.join("; ")
    ));
}

/// Skipped parts in words, one family's parts together: `pool.flush (uc, wc)` for
/// `pool.flush/uc` and `pool.flush/wc`, `pcie.post-parts (2)` for a part skipped twice.
fn grouped(names: &[(&str, usize)]) -> Vec<String> {
    let mut by: Vec<(&str, Vec<String>)> = Vec::new();
    for &(b, n) in names {
        let (family, part) = match b.split_once('/') {
            Some((f, p)) => (f, Some(p)),
            None => (b, None),
        };
        let item = match (part, n) {
            (Some(p), 1) => p.to_string(),
            (Some(p), n) => format!("{p} x{n}"),
            (None, 1) => String::new(),
            (None, n) => n.to_string(),
        };
        match by.iter_mut().find(|(f, _)| *f == family) {
            Some((_, items)) => items.push(item),
            None => by.push((family, vec![item])),
        }
    }
    by.into_iter()
        .map(|(f, items)| {
            let items: Vec<String> = items.into_iter().filter(|i| !i.is_empty()).collect();
            if items.is_empty() {
                f.to_string()
            } else {
                format!("{f} ({})", items.join(", "))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Exporter;

    fn load(rel: &str) -> ParamsFile {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// A full run on the 2-vCPU development guest and an `all --quick` on the 16-core
    /// H200 server (its keys of the summary, their measurements, every warning).
    /// And the README's runs (`all` and `all --quick` on the guest, release build).
    fn files() -> [(&'static str, ParamsFile); 4] {
        [
            (
                "guest",
                load("../results/host/amd-epyc-zen4-kvm-2vcpu.json"),
            ),
            ("h200", load("tests/data/h200-quick-trimmed.json")),
            ("readme all", load("../results/readme/all.json")),
            ("readme quick", load("../results/readme/all-quick.json")),
        ]
    }

    /// The line index of the first line starting with `label`.
    fn at(text: &str, label: &str) -> usize {
        text.lines()
            .position(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in\n{text}"))
    }

    #[test]
    fn noisy_keys_and_the_disturbed_share_lead_the_warnings_and_checks_name_their_threads() {
        let (_, mut f) = files().into_iter().next().unwrap();
        let i = f.param_info.get_mut("mem_bw_gbs").unwrap();
        i.noisy = Some("no clean window in 9".into());
        let n = f.measurements.len();
        for m in f.measurements.iter_mut().take(n / 2) {
            if let Some(c) = m.counters.as_mut() {
                c.disturbed = true;
            }
        }
        let text = render(&f, None, None);
        assert!(text.contains("(noisy)"), "{text}");
        let q = text
            .lines()
            .find(|l| l.starts_with("noisy keys"))
            .expect(&text);
        assert!(q.contains("mem_bw_gbs"), "{q}");
        let d = text
            .lines()
            .find(|l| l.starts_with("disturbed"))
            .expect(&text);
        assert!(d.contains(" of ") && d.contains('%'), "{d}");
        assert!(at(&text, "noisy keys") < at(&text, "warnings"));
        // A check's line names its threads and the verdict it has.
        if let Some(c) = f.dram_check.first() {
            let line = text
                .lines()
                .find(|l| l.contains("DRAM check"))
                .expect(&text);
            assert!(line.contains(&format!("{} thread(s)", c.threads)), "{line}");
        }
    }

    #[test]
    fn a_numa_matrix_prints_as_mlc_prints_it_beside_the_firmware() {
        use crate::plot::numa::tests::cell;
        let mut f = crate::firmware::tests::synthetic(&[]);
        f.numa_matrix = Some(bench_core::params::NumaMatrix {
            initiators: vec![0],
            targets: vec![0, 1],
            cells: vec![cell(0, 0, "local", 100.0), cell(0, 1, "far", 312.5)],
        });
        crate::firmware::annotate(&mut f, 0);
        let text = render(&f, None, None);
        let lines: Vec<&str> = text.lines().collect();
        let lat = lines
            .iter()
            .position(|l| l.starts_with("numa latency"))
            .expect(&text);
        assert!(
            lines[lat].contains("node 0") && lines[lat].contains("node 1"),
            "{text}"
        );
        assert!(
            lines[lat + 1].contains("from node 0") && lines[lat + 1].contains("312.5"),
            "{text}"
        );
        let bw = lines
            .iter()
            .position(|l| l.starts_with("numa read"))
            .expect(&text);
        assert!(lines[bw + 1].contains("31.25"), "{text}");
        let fw = lines
            .iter()
            .find(|l| l.starts_with("firmware"))
            .expect(&text);
        assert!(fw.contains("node:1 lat 0.80 bw 0.62"), "{fw}");
        assert!(!text.contains("no latency or bandwidth key"), "{text}");
    }

    /// The widths the summary is checked at: three terminals, and a pipe.
    const WIDTHS: [Option<usize>; 4] = [Some(80), Some(120), Some(200), None];

    #[test]
    fn the_terminal_output_is_short_fits_the_width_and_is_in_reading_order() {
        for (name, f) in files() {
            for width in WIDTHS {
                let text = SummaryExporter { width, out: None }.render(&f).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                // Under 40 lines from 100 columns (and on a pipe); an 80-column terminal
                // wraps a few more.
                let most = if width.is_some_and(|w| w < 100) {
                    45
                } else {
                    40
                };
                assert!(
                    lines.len() < most,
                    "{name} {width:?}: {} lines\n{text}",
                    lines.len()
                );
                for l in &lines {
                    let n = l.chars().count();
                    assert!(n <= width.unwrap_or(usize::MAX), "{name}: too wide: {l}");
                }
                let order = [
                    "latency ",
                    "bandwidth ",
                    "far memory ",
                    "core-to-core ",
                    "self-checks ",
                    "warnings ",
                ];
                let idx: Vec<usize> = order.iter().map(|l| at(&text, l)).collect();
                assert!(
                    idx.windows(2).all(|w| w[0] < w[1]),
                    "{name}: {idx:?}\n{text}"
                );
                let lat = lines[at(&text, "latency ")];
                let pos: Vec<usize> = ["L1 ", "L2 ", "L3 ", "memory "]
                    .iter()
                    .map(|l| lat.find(l).unwrap_or_else(|| panic!("{l} in {lat}")))
                    .collect();
                assert!(pos.windows(2).all(|w| w[0] < w[1]), "{lat}");
                assert!(
                    lines[at(&text, "bandwidth ")].contains("1 thread: L1 "),
                    "{text}"
                );
            }
        }
    }

    /// The words of `s`, spaces and line breaks aside.
    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn the_header_codes_and_messages_are_wrapped_never_cut() {
        for (name, f) in files() {
            let mut head = String::new();
            write_run(&mut head, &f).unwrap();
            let head = crate::output::text::printable_lines(&head).into_owned();
            for width in WIDTHS {
                let text = SummaryExporter { width, out: None }.render(&f).unwrap();
                // The header's every word, in order, at the top.
                let w = words(&text);
                assert_eq!(
                    w[..words(&head).len()],
                    words(&head)[..],
                    "{name} {width:?}"
                );
                let codes: std::collections::BTreeSet<&str> =
                    f.warnings.iter().map(|w| w.code.as_str()).collect();
                for code in codes.into_iter().take(8) {
                    assert!(
                        text.lines().any(|l| l.starts_with(&format!("  {code}:  "))),
                        "{name} {width:?}: code {code} cut\n{text}"
                    );
                }
                // A message that is shortened ends at a word, marked ` ...`.
                for l in text.lines().filter(|l| l.ends_with("...")) {
                    assert!(l.ends_with(" ...") || l.ends_with(" ...)"), "{l}");
                }
                if width.is_none() {
                    // Whole lines: the header as it is.
                    assert!(text.starts_with(&head), "{name}\n{text}");
                }
            }
        }
    }

    #[test]
    fn the_summary_says_where_every_figure_is_or_that_nothing_was_written() {
        let f = load("tests/data/h200-quick-trimmed.json");
        let none = render(&f, None, None);
        assert!(!none.contains("--out params.json"), "{none}");
        assert!(none.contains("nothing written: --out FILE"), "{none}");
        assert!(none.contains("(each in full: --verbose)"), "{none}");
        let out = std::path::Path::new("/tmp/run.json");
        let some = render(&f, None, Some(out));
        assert!(some.contains("every figure: /tmp/run.json"), "{some}");
        assert!(some.contains("params.json's `warnings`"), "{some}");
    }

    #[test]
    fn skipped_parts_are_listed_by_target_each_once() {
        let mut f = load("tests/data/h200-quick-trimmed.json");
        let skip = |b: &str, t: &str| bench_core::params::Skipped {
            benchmark: b.into(),
            target: t.into(),
            reason: "r".into(),
        };
        f.skipped = vec![
            skip("gpu", ""),
            skip("pool.flush/uc", "anon"),
            skip("pcie.post-parts", "anon"),
            skip("pcie.post-parts", "anon"),
            skip("pool.flush/wc", "anon"),
            skip("verbs", ""),
            skip("pool.msg-scale/p2", "shm"),
            skip("pool.msg-scale/p4", "shm"),
        ];
        let text = render(&f, None, None);
        let line = text
            .lines()
            .find(|l| l.starts_with("skipped (8)"))
            .expect(&text);
        assert!(
            line.contains(
                "gpu, verbs; on anon: pool.flush (uc, wc), pcie.post-parts (2); \
                 on shm: pool.msg-scale (p2, p4) (reasons"
            ),
            "{line}"
        );
    }

    #[test]
    fn long_messages_are_abridged_at_a_clause_never_inside_a_word() {
        assert_eq!(abridge("short", 60), "short");
        let m = "anon: no undisturbed sample for 20 measurement(s): mem.latency/anon/cold-lap/8M \
                 (13 context switches after 3 attempts); mem.latency/anon/tlb-local/4K (3 \
                 context switches after 3 attempts)";
        let a = abridge(m, 140);
        assert!(a.chars().count() <= 140, "{a}");
        assert!(a.ends_with("attempts); ...") || a.ends_with(": ..."), "{a}");
        assert!(m.starts_with(a.trim_end_matches(" ...")), "{a}");
        let b = abridge(
            "hardware counters unavailable: No such file or directory",
            40,
        );
        assert!(!b.contains("di ") && b.ends_with(" ..."), "{b}");
    }

    #[test]
    fn the_server_summary_names_its_gpu_threads_and_warning_codes() {
        let f = load("tests/data/h200-quick-trimmed.json");
        let text = render(&f, None, None);
        let gpu = text
            .lines()
            .find(|l| l.starts_with("GPU "))
            .expect("a GPU line");
        assert!(gpu.contains("NVIDIA H200") && gpu.contains("H2D ") && gpu.contains("D2H "));
        assert!(text.contains("16 threads: memory read "), "{text}");
        assert!(
            text.contains("prefetch check on anon at 64 MiB: agree"),
            "{text}"
        );
        let w = text.lines().find(|l| l.starts_with("warnings (")).unwrap();
        assert!(
            w.starts_with(&format!("warnings ({})", f.warnings.len())),
            "{w}"
        );
        assert!(w.contains("disturbed "), "{w}");
        // Each code once, its first message abridged: the 15,409-character one is not here.
        let disturbed = text
            .lines()
            .filter(|l| l.starts_with("  disturbed: "))
            .count();
        assert_eq!(disturbed, 1, "{text}");
        let longest = f.warnings.iter().map(|w| w.message.len()).max().unwrap();
        assert!(longest > 10_000 && text.len() < 5_000, "{}", text.len());
    }

    #[test]
    fn the_verbose_tables_end_with_the_summary() {
        let f = load("tests/data/h200-quick-trimmed.json");
        let full = crate::export::table::TableExporter::default()
            .render(&f)
            .unwrap();
        assert!(full.starts_with("cxlchar "));
        assert!(full.contains("\nmeasurement "), "the full tables");
        let tail = &full[full.rfind("\nsummary (").expect("the summary")..];
        assert!(tail.lines().count() < 40);
        // The full text of every warning is there.
        assert!(f
            .warnings
            .iter()
            .all(|w| full.contains(w.message.lines().next().unwrap())));
    }
}
