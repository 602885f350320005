//! The terminal summary of a run: what a person reads first, in the order they read it
//! (latency by level and per target, bandwidth by level and per target, far memory, GPU,
//! core-to-core, the self-checks' verdicts, warnings counted by code, what was skipped),
//! in fewer than 40 lines of at most [`WIDTH`] columns. The full tables are
//! [`super::table::TableExporter`]'s (`--format table --verbose`); every figure and
//! every warning's full text are in params.json.

use crate::output::num;
use bench_core::params::ParamsFile;
use bench_core::units::human_bytes;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What a measuring command prints with `--format table` and no `--verbose`: the run's
/// header lines and the summary.
pub struct SummaryExporter;

impl super::Exporter for SummaryExporter {
    fn render(&self, f: &ParamsFile) -> anyhow::Result<String> {
        let mut head = String::new();
        super::table::write_run(&mut head, f)?;
        let mut s = String::new();
        for l in head.lines() {
            let _ = writeln!(s, "{}", cut(l, WIDTH));
        }
        s.push('\n');
        s.push_str(&render(f));
        Ok(crate::output::text::printable_lines(&s).into_owned())
    }
}

/// The widest line the summary prints, in characters.
pub const WIDTH: usize = 100;

/// At most this many targets get a line of their own (the rest are counted).
const MAX_TARGETS: usize = 6;

/// The summary block, every line cut to [`WIDTH`] characters.
pub fn render(f: &ParamsFile) -> String {
    let mut lines = vec![
        "summary (full tables: --format table --verbose; every figure: the --out params.json)"
            .to_string(),
    ];
    latency(f, &mut lines);
    bandwidth(f, &mut lines);
    targets(f, &mut lines);
    far_memory(f, &mut lines);
    numa(f, &mut lines);
    gpu(f, &mut lines);
    c2c(f, &mut lines);
    self_checks(f, &mut lines);
    warnings(f, &mut lines);
    skipped(f, &mut lines);
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{}", cut(&l, WIDTH));
    }
    s
}

/// `line` cut to `width` characters, the cut marked with `...`.
pub fn cut(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut s: String = line.chars().take(width.saturating_sub(3)).collect();
    s.push_str("...");
    s
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
    Some(if label.is_empty() {
        text
    } else {
        format!("{label} {text}")
    })
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
        .filter_map(|(l, k)| f.params.get(*k).map(|v| format!("{l} {}", num(Some(*v)))))
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
        out.push(format!("core-to-core   {s} (median over CPU pairs)"));
    }
}

fn self_checks(f: &ParamsFile, out: &mut Vec<String>) {
    let mut v: Vec<String> = f
        .dram_check
        .iter()
        .map(|c| {
            format!(
                "DRAM check {} {} on {}: {} ({:.3}x)",
                c.benchmark,
                c.kernel,
                c.target,
                if c.confirmed() {
                    "agree"
                } else {
                    "UNCONFIRMED"
                },
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

/// The count of warnings by code, then one line per code: its first message, cut.
fn warnings(f: &ParamsFile, out: &mut Vec<String>) {
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
        let room = WIDTH.saturating_sub(code.len() + more.len() + 4);
        out.push(format!("  {code}: {}{more}", cut(&first, room)));
    }
    out.push("  (each in full: params.json's `warnings`, or --verbose)".into());
}

fn skipped(f: &ParamsFile, out: &mut Vec<String>) {
    if f.skipped.is_empty() {
        return;
    }
    let names: Vec<String> = f
        .skipped
        .iter()
        .map(|k| {
            if k.target.is_empty() {
                k.benchmark.clone()
            } else {
                format!("{} on {}", k.benchmark, k.target)
            }
        })
        .collect();
    out.push(format!(
        "skipped ({})    {} (reasons: --verbose)",
        names.len(),
        names.join(", ")
    ));
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
    fn files() -> [(&'static str, ParamsFile); 2] {
        [
            (
                "guest",
                load("../results/host/amd-epyc-zen4-kvm-2vcpu.json"),
            ),
            ("h200", load("tests/data/h200-quick-trimmed.json")),
        ]
    }

    /// The line index of the first line starting with `label`.
    fn at(text: &str, label: &str) -> usize {
        text.lines()
            .position(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in\n{text}"))
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
        let text = render(&f);
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

    #[test]
    fn the_terminal_output_is_short_narrow_and_in_reading_order() {
        for (name, f) in files() {
            let text = SummaryExporter.render(&f).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert!(lines.len() < 40, "{name}: {} lines\n{text}", lines.len());
            for l in &lines {
                assert!(l.chars().count() <= WIDTH, "{name}: too wide: {l}");
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

    #[test]
    fn the_server_summary_names_its_gpu_threads_and_warning_codes() {
        let f = load("tests/data/h200-quick-trimmed.json");
        let text = render(&f);
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
        // Each code once, its first message cut: the 15,409-character one is not here.
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
        let full = crate::export::table::TableExporter.render(&f).unwrap();
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

    #[test]
    fn lines_are_cut_with_a_mark() {
        assert_eq!(cut("abcdef", 10), "abcdef");
        assert_eq!(cut("abcdefghijkl", 8), "abcde...");
    }
}
