//! Helpers shared by the runner's integration tests (`mod common;` in each test file):
//! the binary under test, the repository's files, JSON documents and the params schema.
// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

pub mod pty;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The `cxlchar` binary under test, as an assert_cmd command.
pub fn cxlchar() -> Command {
    Command::cargo_bin("cxlchar").unwrap()
}

/// The `cxlchar` binary under test, as a std command (for spawned, long-lived processes).
pub fn cxlchar_process() -> std::process::Command {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("cxlchar"))
}

/// A path relative to the repository's root.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// A file of `runner/tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Reads and parses a JSON file; a failure names the file.
pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The params.json schema (`results/schema/params.schema.json`).
pub fn schema() -> Value {
    read_json(&repo("results/schema/params.schema.json"))
}

/// Asserts that `doc` validates against the params.json schema, listing every error.
pub fn assert_schema_valid(doc: &Value) {
    let schema = schema();
    let v = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
}

/// The fleet file's schema (`results/schema/fleet.schema.json`).
pub fn fleet_schema() -> Value {
    read_json(&repo("results/schema/fleet.schema.json"))
}

/// The errors of `doc` against the fleet schema, the params.json schema registered under
/// its `$id` for the fleet schema's references to it.
pub fn fleet_schema_errors(doc: &Value) -> Vec<String> {
    let params = schema();
    let id = params["$id"]
        .as_str()
        .expect("the params schema has an $id")
        .to_string();
    let v = jsonschema::options()
        .with_resource(
            id,
            jsonschema::Resource::from_contents(params).expect("the params schema is a resource"),
        )
        .build(&fleet_schema())
        .expect("the fleet schema compiles");
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

/// Asserts that `doc` validates against the fleet schema, listing every error.
pub fn assert_fleet_schema_valid(doc: &Value) {
    let errors = fleet_schema_errors(doc);
    assert!(errors.is_empty(), "fleet schema errors: {errors:#?}");
}

/// Runs cxlchar with `args`, expects success, and parses its stdout as JSON.
pub fn json_stdout(args: &[&str]) -> Value {
    let out = cxlchar()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

/// Runs `cxlchar ARGS`, expects exit status `code`, and returns stdout as JSON (the
/// report is printed whatever the status: docs/safety.md).
pub fn json_stdout_code(args: &[&str], code: i32) -> Value {
    let out = cxlchar()
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

/// Runs `cxlchar ARGS --out FILE`, expects success, and returns the params document.
pub fn run_out(args: &[&str]) -> Value {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("p.json");
    cxlchar()
        .args(args)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    read_json(&out)
}

/// Runs `cxlchar ARGS --out FILE`, expects a failure whose stderr contains `needle`, and
/// checks that nothing was written (no output file, no temp file).
pub fn assert_bad_input(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    cxlchar()
        .args(args)
        .arg("--out")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicates::str::contains(needle));
    assert!(!out.exists(), "{args:?} left an output file");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "{args:?} left a temp file"
    );
}

/// Why binding memory to a NUMA node (mbind) is unavailable here, if it is: qemu-user
/// (the aarch64 tests of `ci/arm-check`) implements no mbind, nor does a kernel built
/// without NUMA. A test that needs it reports that with
/// `bench_core::testing::unavailable("mbind", ..)` rather than failing or passing.
pub fn mbind_unavailable() -> Option<String> {
    use bench_core::memory::{Region, TargetSpec};
    let topo = bench_core::topology::Topology::system();
    let n = topo.nodes.iter().find(|n| n.mem_total_bytes > 0)?.id;
    match Region::allocate(&TargetSpec::Node(n), 1 << 20, &topo) {
        Err(e) if e.to_string().contains("os error 38") => Some(e.to_string()),
        _ => None,
    }
}
