//! Unix habits of every command that writes to stdout: a reader that goes away (`| head`)
//! ends the command quietly with status 0 (as ripgrep does), and `check`'s --spec repeats
//! while a spec given where the params file goes is named as such.

mod common;
use common::*;

use predicates::prelude::*;
use std::path::PathBuf;
use std::process::Stdio;

/// Runs cxlchar with `args` and a stdout whose reader is already closed: every write to it
/// fails with EPIPE. Returns (exit code, stderr).
fn with_closed_stdout(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = cxlchar_process()
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn params() -> PathBuf {
    data("params-a.json")
}

#[test]
fn a_closed_stdout_ends_every_printing_command_quietly_with_status_0() {
    let p = params();
    let spec = repo("results/specs/cxl-expander.toml");
    let b = data("params-b.json");
    let cases: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec![
            "export".as_ref(),
            "--openmetrics".as_ref(),
            "-".as_ref(),
            p.as_ref(),
        ],
        vec![
            "export".as_ref(),
            "--csv".as_ref(),
            "-".as_ref(),
            p.as_ref(),
        ],
        vec!["completions".as_ref(), "bash".as_ref()],
        vec!["man".as_ref()],
        vec!["diff".as_ref(), p.as_ref(), b.as_ref(), "--all".as_ref()],
        vec!["model".as_ref(), p.as_ref()],
        vec!["targets".as_ref()],
        vec![
            "pcie".as_ref(),
            "list".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
    ];
    for args in cases {
        let (code, stderr) = with_closed_stdout(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}: nothing on stderr");
    }
    let (code, stderr) = with_closed_stdout(&[
        "check".as_ref(),
        "--spec".as_ref(),
        spec.as_ref(),
        p.as_ref(),
    ]);
    // check's status is its verdict (3: keys not measured), not the pipe's.
    assert_eq!(code, Some(3), "check: {stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn check_takes_several_specs_and_exits_with_the_worst() {
    let dir = tempfile::tempdir().unwrap();
    let pass = dir.path().join("pass.toml");
    std::fs::write(
        &pass,
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \">=\"\nvalue = 1\n",
    )
    .unwrap();
    let fail = dir.path().join("fail.toml");
    std::fs::write(
        &fail,
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1\n",
    )
    .unwrap();
    let out = cxlchar()
        .args(["check", "--spec"])
        .arg(&pass)
        .arg("--spec")
        .arg(&fail)
        .arg(params())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the worst: a failed bound\n{text}"
    );
    let pass_at = text.find("against spec pass").expect("pass's table");
    let fail_at = text.find("against spec fail").expect("fail's table");
    assert!(pass_at < fail_at, "in the order given\n{text}");
    // JSON: one document per spec, and the worst status.
    let out = cxlchar()
        .args(["check", "--format", "json", "--spec"])
        .arg(&pass)
        .arg("--spec")
        .arg(&fail)
        .arg(params())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["checks"].as_array().unwrap().len(), 2);
    assert_eq!(v["checks"][0]["exit_code"], 0);
    // JUnit: one suite per spec.
    let junit = dir.path().join("junit.xml");
    cxlchar()
        .args(["check", "--spec"])
        .arg(&pass)
        .arg("--spec")
        .arg(&fail)
        .arg("--junit")
        .arg(&junit)
        .arg(params())
        .assert()
        .code(1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
}

#[test]
fn a_spec_where_the_params_file_goes_is_named_with_the_fix() {
    // What a shell makes of `--spec *.toml p.json` with two specs.
    let a = repo("results/specs/cxl-expander.toml");
    let b = repo("results/specs/fleet-demo.toml");
    cxlchar()
        .args(["check", "--spec"])
        .arg(&a)
        .arg(&b)
        .arg(params())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is a spec, not a params file: repeat --spec",
            b.display()
        )))
        .stderr(predicate::str::contains("params-a.json").not());
    // A spec named otherwise is known by its content (it parses as a spec).
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("limits.txt");
    std::fs::copy(&b, &renamed).unwrap();
    cxlchar()
        .args(["check", "--spec"])
        .arg(&a)
        .arg(&renamed)
        .arg(params())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("limits.txt is a spec"));
    // Two params files: check reads one.
    cxlchar()
        .args(["check", "--spec"])
        .arg(&a)
        .arg(params())
        .arg(data("params-b.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "check reads one params file, 2 given",
        ));
}

#[test]
fn a_measuring_run_whose_reader_left_still_writes_its_out_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let args: [&std::ffi::OsStr; 7] = [
        "mem".as_ref(),
        "latency".as_ref(),
        "--quick".as_ref(),
        "--sizes".as_ref(),
        "4K,64K".as_ref(),
        "--out".as_ref(),
        out.as_ref(),
    ];
    let (code, stderr) = with_closed_stdout(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !stderr.contains("Broken pipe") && !stderr.contains("error"),
        "{stderr}"
    );
    assert!(read_json(&out)["params"].is_object(), "--out written");
}
