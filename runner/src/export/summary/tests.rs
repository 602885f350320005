//! The summary of recorded runs: its order, its length at 80 columns, its wrapping and
//! what it abridges.

use super::notes::abridge;
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
    assert!(
        text.contains("* | write "),
        "a noisy figure is marked: {text}"
    );
    let q = text
        .lines()
        .find(|l| l.starts_with("noisy keys"))
        .expect(&text);
    assert!(q.contains("mem_bw_gbs") && q.contains("marked *"), "{q}");
    let d = text
        .lines()
        .find(|l| l.starts_with("disturbed"))
        .expect(&text);
    assert!(d.contains(" of ") && d.contains('%'), "{d}");
    assert!(at(&text, "noisy keys") < at(&text, "warnings"));
    // A check that did not confirm its figures has a line naming its threads.
    let mut f = load("../results/readme/all-quick.json");
    let c = f.dram_check.first_mut().expect("a DRAM check");
    c.verdict = bench_core::dram_check::Verdict::Unconfirmed;
    let threads = c.threads;
    let text = render(&f, None, None);
    let line = text
        .lines()
        .find(|l| l.contains("UNCONFIRMED: DRAM check"))
        .expect(&text);
    assert!(line.contains(&format!("{threads} thread(s)")), "{line}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("self-checks    DRAM ") && l.contains("1 UNCONFIRMED")),
        "{text}"
    );
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
            // At most 40 lines with the run's header, on an 80-column terminal too.
            assert!(
                lines.len() <= 40,
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
            // The header's every word, in order, at the top; on a terminal the
            // prefetchers' state (the last line) may be abridged at a word.
            let w = words(&text);
            let pre = head.rfind("prefetchers: ").expect("a prefetchers line");
            let before = words(&head[..pre]);
            assert_eq!(w[..before.len()], before[..], "{name} {width:?}");
            let blank = text.find("\n\nsummary (").expect(&text);
            let shown: Vec<&str> = words(&text[..blank])[before.len()..]
                .iter()
                .copied()
                .filter(|w| *w != "...")
                .collect();
            let full = words(&head[pre..]);
            assert_eq!(shown[..], full[..shown.len()], "{name} {width:?}\n{text}");
            if width.is_none() {
                assert_eq!(shown, full, "{name}: whole on a pipe");
            }
            let codes: std::collections::BTreeSet<&str> =
                f.warnings.iter().map(|w| w.code.as_str()).collect();
            for code in codes.into_iter().take(8) {
                let n = f.warnings.iter().filter(|w| w.code == code).count();
                let label = match n {
                    1 => format!("  {code}:  "),
                    n => format!("  {code} ({n}):  "),
                };
                assert!(
                    text.lines().any(|l| l.starts_with(&label)),
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
    assert!(none.contains("(in full: --verbose)"), "{none}");
    let out = std::path::Path::new("/tmp/run.json");
    let some = render(&f, None, Some(out));
    assert!(some.contains("every figure: /tmp/run.json"), "{some}");
    assert!(some.contains("(in full: --verbose, params.json)"), "{some}");
    // A hostile --out is shown escaped.
    let odd = std::path::Path::new("/tmp/\u{1b}[2Jx\u{202e}.json");
    let text = render(&f, Some(80), Some(odd));
    assert!(
        text.contains("every figure: /tmp/\\x1b[2Jx\\u{202e}.json"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
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
        text.lines()
            .any(|l| l.starts_with("self-checks    ") && l.contains("prefetch 1 agree")),
        "{text}"
    );
    let w = text.lines().find(|l| l.starts_with("warnings (")).unwrap();
    assert!(
        w.starts_with(&format!("warnings ({})", f.warnings.len())),
        "{w}"
    );
    // Each code once with its count, its first message abridged: the 15,409-character
    // one is not here.
    let n = f.warnings.iter().filter(|w| w.code == "disturbed").count();
    let disturbed = text
        .lines()
        .filter(|l| l.starts_with(&format!("  disturbed ({n}):  ")))
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

/// Every line of the summary at `width`, each continuation line under the text of the
/// line it continues (where its label ends), for every recorded file.
#[test]
fn continuation_lines_start_under_their_column() {
    for (name, f) in files() {
        for width in [80, 100, 120] {
            let mut lines = run_lines(&f, Some(width));
            lines.0.extend(summary_lines(&f, Some(width), None).0);
            let text = lines.fitted(Some(width));
            let mut shown = text.lines();
            for (prefix, body) in &lines.0 {
                let at = printable(prefix).chars().count();
                let whole = format!("{}{}", printable(prefix), printable(body));
                let want = words(&whole).len();
                let first = shown.next().expect("a line per line");
                let mut got = words(first).len();
                while got < want {
                    let l = shown.next().expect("its continuation");
                    let lead = l.chars().take_while(|c| *c == ' ').count();
                    assert_eq!(lead, at, "{name} at {width}: {l:?} continues {whole:?}");
                    got += words(l).len();
                }
                assert_eq!(got, want, "{name} at {width}: {whole:?}\n{text}");
            }
        }
    }
    // The README's run at 80 columns: its NOISY DRAM check wraps under its text, not at
    // 4 nor at the column plus 4.
    let f = load("../results/readme/all.json");
    let text = SummaryExporter {
        width: Some(80),
        out: None,
    }
    .render(&f)
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("               NOISY: DRAM check "))
        .expect(&text);
    let next = lines[i + 1];
    let col = "               NOISY: ".len();
    assert!(
        next.starts_with(&" ".repeat(col)) && !next.starts_with(&" ".repeat(col + 1)),
        "{text}"
    );
    let bw = lines
        .iter()
        .position(|l| l.starts_with("               2 threads: memory read "))
        .expect(&text);
    let col = "               2 threads: ".len();
    assert!(
        lines[bw + 1].starts_with(&format!("{}nt-copy", " ".repeat(col))),
        "{text}"
    );
}

#[test]
fn an_abridged_warning_keeps_what_happened_not_only_its_subject() {
    let m = "anon: mem.bandwidth (read (avx512), CPUs 0-1): the DRAM check's passes disagreed \
             with each other by more than the working sets did (pass 1 1.12x, pass 2 0.97x): \
             the machine moved during the check, so it says nothing about the caches; the \
             figures stand at 272M, flagged noisy";
    // What fits two 80-column lines after `  dram_check:  `.
    let a = abridge(m, 2 * (80 - 15) - 8);
    assert!(a.contains("passes disagreed"), "{a}");
    assert!(a.ends_with(" ..."), "{a}");
    // In the summary of a file that has it.
    let mut f = load("tests/data/h200-quick-trimmed.json");
    f.warnings = vec![bench_core::params::Warning {
        code: "dram_check".into(),
        message: m.into(),
        remediation: String::new(),
    }];
    let text = render(&f, Some(80), None);
    let at = text.find("  dram_check:  ").expect(&text);
    assert!(text[at..].contains("passes disagreed"), "{text}");
}

#[test]
fn degraded_pcie_links_are_the_first_line_after_the_header_and_only_then() {
    let (_, mut f) = files().into_iter().nth(1).unwrap();
    let plain = render(&f, None, None);
    assert!(!plain.contains("PCIe links"), "{plain}");
    let d = tempfile::tempdir().unwrap();
    bench_core::pci::links::write_fake_links(d.path()).unwrap();
    crate::links::annotate(&mut f, crate::links::read(d.path()));
    let text = render(&f, None, None);
    assert_eq!(at(&text, "PCIe links"), 1, "{text}");
    let line = text.lines().nth(1).unwrap();
    assert!(
        line.contains("2 of 5 degraded (link_degraded): 0000:01:00.0 (gpu) at 16 GT/s x8 of 16 GT/s x16, port 0000:00:01.0; 0000:02:00.0 (cxl) at 16 GT/s x16 of 32 GT/s x16"),
        "{line}"
    );
}
