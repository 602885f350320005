//! What a run shows on a terminal and what it leaves on a pipe (the progress bar is for
//! terminals only), the one size grammar at the command line, and the generated shell
//! completions and man pages.

mod common;
use common::*;

#[test]
fn a_run_whose_stderr_is_a_pipe_draws_no_progress_bar() {
    let out = cxlchar()
        .args([
            "mem",
            "latency",
            "--quick",
            "--sizes",
            "4K,64K",
            "--verbose",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !err.contains('\x1b'),
        "an escape sequence on a pipe: {err:?}"
    );
    assert!(!err.contains('\r'), "a carriage return on a pipe: {err:?}");
    assert!(!err.contains("ETA"), "{err:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !stdout.contains('\x1b') && !stdout.contains("ETA"),
        "{stdout:?}"
    );
    assert!(stdout.contains("mem.latency/anon/"), "{stdout}");
}

#[test]
fn sizes_in_the_one_grammar_are_accepted_and_kb_is_refused_with_exit_2() {
    for v in ["64K", "64KiB", "65536"] {
        cxlchar()
            .args([
                "mem", "latency", "--quick", "--format", "json", "--sizes", v,
            ])
            .assert()
            .success();
    }
    cxlchar()
        .args(["mem", "latency", "--quick", "--sizes", "64KB"])
        .assert()
        .code(2);
    assert_bad_input(
        &["mem", "latency", "--quick", "--sizes", "64KB"],
        "write 64K or 64KiB",
    );
    assert_bad_input(
        &["pool", "flush-bw", "--quick", "--chunk", "abc"],
        "K/M/G/T",
    );
    assert_bad_input(&["all", "--quick", "--target", "hugetlb:2MB"], "hugetlb");
}

#[test]
fn bash_completions_name_the_benchmark_commands() {
    let out = cxlchar()
        .args(["completions", "bash"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let s = String::from_utf8(out).unwrap();
    for w in ["mem", "latency", "flush-bw", "--target", "--quick"] {
        assert!(s.contains(w), "{w} missing");
    }
    cxlchar().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn man_prints_roff_and_writes_one_page_per_subcommand() {
    let out = cxlchar()
        .arg("man")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let page = String::from_utf8(out).unwrap();
    assert!(page.contains(".TH cxlchar 1"), "{page}");
    assert!(page.contains(".SH NAME"));

    let dir = tempfile::tempdir().unwrap();
    let out = cxlchar()
        .args(["man", "--out"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let listed = String::from_utf8(out).unwrap();
    for n in [
        "cxlchar.1",
        "cxlchar-mem-latency.1",
        "cxlchar-pool-msg.1",
        "cxlchar-gpu.1",
    ] {
        let p = dir.path().join(n);
        assert!(p.is_file(), "{n} not written");
        assert!(
            listed.contains(&*p.to_string_lossy()),
            "{n} not listed: {listed}"
        );
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(".TH ") && text.contains(".SH NAME"), "{n}");
    }
    // Rendered by man(1) where it is installed (not required).
    let lat = dir.path().join("cxlchar-mem-latency.1");
    if let Ok(o) = std::process::Command::new("man")
        .arg("-l")
        .arg(&lat)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    {
        if o.status.success() {
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(text.contains("cxlchar-mem-latency"), "{text}");
            assert!(text.contains("--max-size"), "{text}");
        }
    }
}

/// `s` without its colours and styles (`ESC [ ... m`, as clap styles a terminal's help).
fn unstyled(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\x1b' {
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every line of `text` at most `cols` characters (styles aside).
fn assert_fits(text: &str, cols: usize, what: &str) {
    for l in unstyled(text).lines() {
        let n = l.chars().count();
        assert!(
            n <= cols,
            "{what} at {cols} columns: a line of {n}: {l}\n{text}"
        );
    }
}

/// The words of `s`, spaces and line breaks aside.
fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

#[test]
fn the_summary_fits_the_terminal_wraps_never_cuts_and_is_whole_on_a_pipe() {
    let args = ["mem", "latency", "--quick", "--sizes", "4K,64K"];
    let piped = cxlchar().args(args).assert().success().get_output().clone();
    let piped = String::from_utf8(piped.stdout).unwrap();
    // On a pipe, whole lines: the timer line as the run wrote it, its last field there.
    let timer = piped
        .lines()
        .find(|l| l.starts_with("timer: "))
        .expect(&piped);
    assert!(timer.contains(", invariant: "), "{piped}");
    assert!(
        piped.contains("nothing written: --out FILE") && !piped.contains("--out params.json"),
        "{piped}"
    );
    for cols in [80u16, 120, 200] {
        let (code, text) = common::pty::in_pty(&args, cols);
        assert_eq!(code, Some(0), "{text}");
        assert_fits(&text, cols.into(), "the summary");
        // Wrapped, not cut: every word of the piped header is on the terminal, in order
        // (numbers aside: each run calibrates its timer anew).
        let head: String = piped.lines().take(3).collect::<Vec<_>>().join("\n");
        let masked = |s: &str| -> Vec<String> {
            words(s)
                .into_iter()
                .map(|w| {
                    if w.chars().any(|c| c.is_ascii_digit()) {
                        "#".to_string()
                    } else {
                        w.to_string()
                    }
                })
                .collect()
        };
        let (got, want) = (masked(&text), masked(&head));
        assert_eq!(got[..want.len()], want[..], "{text}");
        assert!(
            !text
                .lines()
                .any(|l| l.ends_with("...") && !l.ends_with(" ...")),
            "a line cut inside a word:\n{text}"
        );
        for code in ["hw_counters", "virtualized"] {
            if piped.contains(&format!("  {code}:")) {
                assert!(text.contains(&format!("  {code}:  ")), "{code}\n{text}");
            }
        }
    }
}

#[test]
fn help_and_model_fit_the_terminal() {
    for cols in [80u16, 120, 200] {
        // Help at most 120 wide on a wider terminal (clap's wrap, registry::MAX_HELP_WIDTH).
        let fits = usize::from(cols).min(120);
        for args in [
            &["--help"][..],
            &["mem", "latency", "--help"],
            &["export", "--help"],
        ] {
            let (code, text) = common::pty::in_pty(args, cols);
            assert_eq!(code, Some(0), "{text}");
            assert!(text.lines().count() > 10, "{text}");
            assert_fits(&text, fits, &args.join(" "));
        }
        let p = data("params-a.json");
        let (_, text) = common::pty::in_pty(&["model", p.to_str().unwrap()], cols);
        assert!(text.contains("000-transfer"), "{text}");
        assert_fits(&text, cols.into(), "model");
    }
    // On a pipe, `--help` wraps to COLUMNS and `model` prints whole lines.
    let out = cxlchar()
        .arg("--help")
        .env("COLUMNS", "80")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_fits(&String::from_utf8(out).unwrap(), 80, "--help, COLUMNS=80");
    let out = cxlchar()
        .arg("model")
        .arg(data("params-a.json"))
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("  cxl_atomic_lat_ns: run ") && l.len() > 80),
        "whole lines on a pipe:\n{text}"
    );
}

/// `text` (stderr of a run on a terminal) without its styles, each line as a terminal
/// leaves it: what follows its last carriage return.
fn as_shown(text: &str) -> Vec<String> {
    unstyled(text)
        .lines()
        .map(|l| l.rsplit('\r').next().unwrap_or("").to_string())
        .collect()
}

/// The words of `s` with every word that holds a digit as `#` (planned seconds and a
/// timer differ from run to run).
fn masked(s: &str) -> Vec<String> {
    words(s)
        .into_iter()
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "#".to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

#[test]
fn the_plan_a_run_prints_first_fits_the_terminal_its_stderr_is() {
    let args = ["mem", "latency", "--quick", "--sizes", "4K,64K"];
    let mut plan_args = args.to_vec();
    plan_args.push("--plan");
    let piped = cxlchar()
        .args(&plan_args)
        .assert()
        .success()
        .get_output()
        .clone();
    let piped = String::from_utf8(piped.stdout).unwrap();
    let head = piped.lines().next().expect("the plan's first line");
    assert!(
        head.starts_with("plan: ") && head.ends_with("--quick"),
        "{piped}"
    );
    for cols in [40u16, 80] {
        let (code, text) = common::pty::in_pty_with_stderr(&args, cols);
        assert_eq!(code, Some(0), "{text}");
        let lines = as_shown(&text);
        let start = lines
            .iter()
            .position(|l| l.starts_with("plan: "))
            .unwrap_or_else(|| panic!("no plan on the terminal:\n{text}"));
        let end = start
            + lines[start..]
                .iter()
                .position(|l| l.starts_with("total: "))
                .expect("the plan's total");
        for l in &lines[start..=end] {
            let n = l.chars().count();
            assert!(
                n <= cols.into(),
                "a plan line of {n} at {cols} columns: {l}\n{text}"
            );
        }
        // Wrapped, not cut: the first line's words (numbers aside) are all there, in order.
        let shown = lines[start..=end].join("\n");
        let want = masked(head);
        assert_eq!(masked(&shown)[..want.len()], want[..], "{shown}");
    }
}

#[test]
fn the_plan_for_a_big_machine_fits_80_columns_and_keeps_every_word() {
    use bench_core::topology::fixtures::{write_server, Server};
    let mut wide = 0;
    // The most CPUs, far-memory targets (skip reasons of their own), GPUs on Arm.
    for s in [
        Server::four_socket_144c(),
        Server::cxl_host(),
        Server::grace_hopper(),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_server(dir.path(), &s).unwrap();
        let root = dir.path().to_str().unwrap();
        for extra in [&["--quick"][..], &["--verbose", "--budget", "1m"]] {
            let mut args = vec!["all", "--plan", "--sysfs", root];
            args.extend(extra);
            let piped = cxlchar()
                .args(&args)
                .assert()
                .success()
                .get_output()
                .clone();
            let piped = String::from_utf8(piped.stdout).unwrap();
            wide += piped.lines().filter(|l| l.chars().count() > 80).count();
            let (code, text) = common::pty::in_pty(&args, 80);
            assert_eq!(code, Some(0), "{text}");
            assert_fits(&text, 80, "the plan");
            // Nothing cut: the same words as the whole lines of a pipe.
            assert_eq!(words(&text), words(&piped), "{root} {extra:?}\n{text}");
        }
    }
    assert!(
        wide > 0,
        "no plan line is wider than 80 columns on a pipe: nothing to fit"
    );
}

#[test]
fn a_hostile_sysfs_root_is_printed_escaped() {
    use bench_core::topology::fixtures::{write_server, Server};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("x\u{1b}[2J\u{202e}\nroot");
    write_server(&root, &Server::guest_2vcpu_amd()).unwrap();
    let out = cxlchar()
        .args(["all", "--quick", "--plan", "--sysfs"])
        .arg(&root)
        .assert()
        .success()
        .get_output()
        .clone();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    let shown = format!("{}/x\\x1b[2J\\u{{202e}}\\x0aroot", dir.path().display());
    assert!(
        stdout.starts_with(&format!("plan for {shown}: 2 CPUs")),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!("skipped gpu: no NVIDIA GPU in {shown}/sys")),
        "{stderr}"
    );
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains("\nroot"),
            "{text:?}"
        );
    }
}
