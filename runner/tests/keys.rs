//! Every key of the params files the tests and the docs use is a registered key
//! (`bench_core::keys`) written with the registry's unit. (A real `cxlchar all --quick`
//! run is checked the same way in `cli.rs`; the keys of the families that cannot run
//! here are a table in `bench-core/src/keys/tests.rs`.)

mod common;
use common::*;

use serde_json::Value;
use std::path::Path;

fn check_file(rel: &str) {
    let doc: Value = read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join(rel));
    let params = doc["params"].as_object().expect("params");
    assert!(!params.is_empty(), "{rel} has keys");
    for k in params.keys() {
        let d = bench_core::keys::lookup(k)
            .unwrap_or_else(|| panic!("{rel}: {k} is not in bench_core::keys"));
        let unit = doc["param_info"][k]["unit"].as_str();
        assert_eq!(unit, Some(d.unit.symbol()), "{rel}: unit of {k}");
    }
}

#[test]
fn keys_of_the_test_and_example_files_are_registered() {
    for f in [
        "tests/data/params-a.json",
        "tests/data/params-b.json",
        "../results/plots/params-quick.json",
        "../results/plots/params-all-quick.json",
    ] {
        check_file(f);
    }
}

#[test]
fn spec_keys_of_the_shipped_specs_are_registered() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/specs");
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let v: toml::Value = toml::from_str(&text).unwrap();
        let mut keys: Vec<String> = v
            .get("required")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(String::from))
            .collect();
        for b in v
            .get("bound")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
        {
            keys.extend(b.get("key").and_then(toml::Value::as_str).map(String::from));
        }
        assert!(!keys.is_empty(), "{}", p.display());
        for k in keys {
            assert!(
                bench_core::keys::lookup(&k).is_some(),
                "{}: {k}",
                p.display()
            );
        }
    }
}

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A bug once seen live: `msg_rate_mps` (and every produced key) is accepted by `check`
/// and `--what-if`; a key nobody produces is still refused, by name.
#[test]
fn every_produced_key_is_accepted_by_check_and_what_if() {
    use predicates::prelude::*;
    let out = cxlchar()
        .args([
            "model",
            "--what-if",
            "msg_rate_mps=5",
            "--what-if",
            "busy_post_ns=1",
            "--what-if",
            "verbs_hockney_lat_ns=900",
        ])
        .arg(data("params-a.json"))
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(2), "{out:?}");
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "required = [\"inj_overhead_ns\"]\n[[bound]]\nkey = \"msg_rate_mps\"\nop = \">=\"\nvalue = 1\n",
    )
    .unwrap();
    cxlchar()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg(data("params-a.json"))
        .assert()
        .code(3)
        .stdout(predicate::str::contains("produced by verbs"))
        .stdout(predicate::str::contains("unknown producer").not());
    std::fs::write(&spec, "required = [\"zzz_ns\"]\n").unwrap();
    cxlchar()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg(data("params-a.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`zzz_ns` is not a params key cxlchar knows",
        ));
    cxlchar()
        .args(["model", "--what-if", "zzz_ns=1"])
        .arg(data("params-a.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("zzz_ns is not in the file"))
        .stderr(predicate::str::contains("not a params key cxlchar knows"));
}
