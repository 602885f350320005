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
