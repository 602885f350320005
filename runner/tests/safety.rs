//! The write and exit-code rules of docs/safety.md, end to end: what an output path may
//! be, what a run that did not measure what was asked exits with and leaves behind, and
//! what survives a signal.

mod common;
use common::*;

use predicates::prelude::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

fn params_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("params.json");
    std::fs::copy(data("params-a.json"), &p).unwrap();
    p
}

#[test]
fn out_onto_a_device_node_is_refused_and_the_node_survives() {
    cxlchar()
        .args(["mem", "latency", "--quick", "--out", "/dev/null"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a regular file"));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
}

#[test]
fn out_onto_a_symlink_is_refused_and_both_survive() {
    let dir = tempfile::tempdir().unwrap();
    let real = params_file(dir.path());
    let before = std::fs::read(&real).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    cxlchar()
        .args(["mem", "latency", "--quick", "--out"])
        .arg(&link)
        .assert()
        .failure()
        .stderr(predicate::str::contains("symbolic link"));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), before);
}

#[test]
fn out_onto_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    cxlchar()
        .args(["mem", "latency", "--quick", "--out"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains("directory"));
    assert!(dir.path().is_dir());
}

#[test]
fn junit_onto_an_input_is_refused_and_the_input_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let params = params_file(dir.path());
    let spec = dir.path().join("spec.toml");
    std::fs::copy(repo("results/specs/cxl-expander.toml"), &spec).unwrap();
    for target in [&params, &spec] {
        let before = std::fs::read(target).unwrap();
        cxlchar()
            .args(["check", "--spec"])
            .arg(&spec)
            .arg(&params)
            .arg("--junit")
            .arg(target)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the input"));
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
    // Through a hard link too.
    let alias = dir.path().join("alias.xml");
    std::fs::hard_link(&params, &alias).unwrap();
    let before = std::fs::read(&params).unwrap();
    cxlchar()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg(&params)
        .arg("--junit")
        .arg(&alias)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&params).unwrap(), before);
}

#[test]
fn junit_onto_a_device_node_is_refused() {
    cxlchar()
        .args(["check", "--spec"])
        .arg(repo("results/specs/cxl-expander.toml"))
        .arg(data("params-a.json"))
        .args(["--junit", "/dev/null"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a regular file"));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device());
}

#[test]
fn plot_does_not_write_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("charts");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("latency.svg")).unwrap();
    cxlchar()
        .arg("plot")
        .arg(data("params-a.json"))
        .arg("--out")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn pool_atomics_size_below_one_line_is_a_parse_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = params_file(dir.path());
    let before = std::fs::read(&out).unwrap();
    cxlchar()
        .args(["pool", "atomics", "--quick", "--size", "1", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("smaller than one cache line"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn mem_latency_names_the_size_the_user_gave() {
    cxlchar()
        .args(["mem", "latency", "--quick", "--max-size", "8"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--max-size 8 is smaller"))
        .stderr(predicate::str::contains("4096").not());
}
