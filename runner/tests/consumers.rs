//! End-to-end tests of the consumers: `cxlchar model`, `check` and `diff`, on the two real
//! params.json files in tests/data (written by `cxlchar all --quick` on the development VM)
//! and on synthetic variants of them.

mod common;
use common::*;

use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn doc(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(name)).unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn stdout_json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

// ---------------------------------------------------------------- model

#[test]
fn model_on_a_real_file_evaluates_some_and_refuses_others_by_name() {
    let out = cxlchar()
        .args(["model", "--format", "json"])
        .arg(data("params-a.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = stdout_json(&out);
    let models = v["models"].as_array().unwrap();
    assert!(models.len() >= 8);
    // The L2/P rule evaluates from the environment's cache list.
    let nt = models
        .iter()
        .find(|m| m["id"] == "001-nt-threshold")
        .unwrap();
    assert_eq!(nt["status"], "evaluated");
    // Seed 000 needs the pool family, which this build does not measure.
    let t = models.iter().find(|m| m["id"] == "000-transfer").unwrap();
    assert_eq!(t["status"], "refused");
    assert!(t["outputs"].as_array().unwrap().is_empty());
    let missing = t["missing"].as_array().unwrap();
    let atomic = missing
        .iter()
        .find(|m| m["key"] == "cxl_atomic_lat_ns")
        .expect("names the missing key");
    assert_eq!(atomic["benchmark"], "pool.atomics");
    for m in models {
        assert!(m["equation"].as_str().unwrap().contains('='));
        assert!(m["source"].as_str().unwrap().contains("seed 00"));
    }
}

#[test]
fn model_named_but_refused_exits_3_and_says_what_to_run() {
    cxlchar()
        .args(["model", "--model", "000-transfer"])
        .arg(data("params-a.json"))
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "\n  cxl_atomic_lat_ns: run cxlchar pool atomics",
        ))
        .stdout(predicate::str::contains("cxlchar pool atomics"));
}

/// `model` on a run without RDMA, CXL or a GPU (the development guest's `all --quick`), at
/// 80 columns as a person reads it: what was evaluated comes first, each refused model is
/// one entry with the keys it lacks, and each missing key is listed once with what
/// measures it (not once per model that lacks it).
#[test]
fn model_leads_with_what_was_evaluated_and_lists_each_missing_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(data("vm-quick-b.json.gz"))
        .output()
        .unwrap();
    let p = dir.path().join("b.json");
    std::fs::write(&p, &o.stdout).unwrap();
    let (code, text) = common::pty::in_pty(&["model", p.to_str().unwrap()], 80);
    assert_eq!(code, Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("2 of 11 models evaluated: 001-nt-threshold, 003-contention"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("9 refused for want of 19 keys"),
        "{text}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
    let refused = lines
        .iter()
        .position(|l| l.starts_with("refused"))
        .expect(&text);
    let missing = lines
        .iter()
        .position(|l| l.starts_with("missing keys, each once"))
        .expect(&text);
    // One entry per refused model (a long list of keys wraps once).
    assert!(missing - refused <= 2 + 2 * 9, "{text}");
    let v: Value = serde_json::from_slice(
        &cxlchar()
            .args(["model", "--format", "json"])
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mut keys: Vec<String> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["missing"].as_array().unwrap().clone())
        .map(|m| m["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 19);
    // Each listed once in the missing section, in the key list of one entry.
    let section = lines[missing..].join("\n");
    let entry_keys: Vec<&str> = lines[missing..]
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.trim_start().split_once(": ").map(|(k, _)| k))
        .flat_map(|k| k.split(", "))
        .collect();
    for k in &keys {
        let n = entry_keys.iter().filter(|e| *e == k).count();
        assert_eq!(n, 1, "{k} in\n{section}");
    }
    assert_eq!(
        text.matches("mpi_lat_ns").count(),
        // Three refused models name it, the missing list once, its remark once.
        3 + 1 + 1,
        "{text}"
    );
    assert!(
        section.contains("  cxl_atomic_lat_ns: run cxlchar pool atomics"),
        "{section}"
    );
}

#[test]
fn model_what_if_supplies_and_scales_keys() {
    let out = cxlchar()
        .args([
            "model",
            "--model",
            "004-injection",
            "--format",
            "json",
            "--what-if",
            "llp_post_inline_ns=175.42",
            "--what-if",
            "llp_prog_ns=61.63",
            "--what-if",
            "inj_misc_ns=58.68",
            "--what-if",
            "llp_post_inline_ns*0.5",
        ])
        .arg(data("params-a.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = stdout_json(&out);
    let o = &v["models"][0]["outputs"][0];
    assert_eq!(o["name"], "inj_overhead_ns");
    let want = 175.42 * 0.5 + 61.63 + 58.68;
    assert!((o["value"].as_f64().unwrap() - want).abs() < 1e-9);
}

/// Seed 000's message baseline is the network unless `--baseline shm` says otherwise,
/// and the output names the one used.
#[test]
fn model_000_baseline_flag_selects_and_names_the_messaging() {
    let run = |extra: &[&str]| {
        let out = cxlchar()
            .args(["model", "--model", "000-transfer", "--format", "json"])
            .args([
                "--what-if",
                "pool_hockney_lat_ns=300",
                "--what-if",
                "pool_hockney_bw_gbs=5",
                "--what-if",
                "cxl_atomic_lat_ns=400",
            ])
            .args(extra)
            .arg(data("params-a.json"))
            .output()
            .unwrap();
        (out.status.code(), stdout_json(&out))
    };
    let (code, v) = run(&[]);
    assert_eq!(code, Some(3));
    assert_eq!(v["baseline"], "network");
    assert_eq!(v["models"][0]["status"], "refused");
    let (code, v) = run(&["--baseline", "shm"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["baseline"], "shm");
    let notes = v["models"][0]["notes"].to_string();
    assert!(notes.contains("shared memory (--baseline shm)"), "{notes}");
}

/// Seed 000's data-access model (eqs. (3)-(10)) evaluates with a workload file and the
/// hardware keys, and without a workload is refused naming `--workload`.
#[test]
fn model_000_access_needs_a_workload() {
    let hw = [
        "--what-if",
        "mpi_lat_ns=650",
        "--what-if",
        "mpi_bw_gbs=4.09",
        "--what-if",
        "cxl_lat_ns=417",
        "--what-if",
        "cxl_atomic_lat_ns=653",
    ];
    let run = |extra: &[&str]| {
        let out = cxlchar()
            .args(["model", "--model", "000-access", "--format", "json"])
            .args(hw)
            .args(extra)
            .arg(data("params-a.json"))
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), v, out.stderr)
    };
    let (code, v, _) = run(&[]);
    assert_eq!(code, Some(3));
    let m = &v["models"][0];
    assert_eq!(m["status"], "refused");
    assert_eq!(m["missing"][0]["key"], "--workload FILE", "{m}");
    let example = repo("results/workloads/example.toml");
    let (code, v, err) = run(&["--workload", example.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&err));
    let m = &v["models"][0];
    assert_eq!(m["status"], "evaluated", "{m}");
    let out = |n: &str| {
        m["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == n)
            .unwrap_or_else(|| panic!("{n} in {m}"))["value"]
            .as_f64()
            .unwrap()
    };
    // The CXL scenario never loads faster than DDR here (CXL_LAT > MEM_LAT).
    assert!(out("t_access_cxl_ns") >= out("t_access_mpi_ns"));
    let w: f64 = ["mbw", "mlat", "cbw", "clat", "compute"]
        .iter()
        .map(|c| out(&format!("w_subsequent_{c}_ratio")))
        .sum();
    assert!((w - 1.0).abs() < 1e-9, "weights sum to {w}");
    let bad = tempfile::tempdir().unwrap();
    let p = write(bad.path(), "w.toml", "accesses_per_element = 0\n");
    let (code, _, err) = run(&["--workload", p.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(String::from_utf8_lossy(&err).contains("w.toml"));
}

#[test]
fn model_rejects_bad_what_if_and_unknown_model() {
    cxlchar()
        .args(["model", "--what-if", "llp_post_ns"])
        .arg(data("params-a.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("KEY=VALUE or KEY*FACTOR"));
    cxlchar()
        .args(["model", "--what-if", "nope_ns*2"])
        .arg(data("params-a.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope_ns is not in the file"));
    cxlchar()
        .args(["model", "--model", "999-x"])
        .arg(data("params-a.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown model `999-x`"));
}

#[test]
fn bad_params_files_fail_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data("params-a.json")).unwrap();
    let cases = [
        (
            "not-json.json",
            "this is not json".to_string(),
            "is not JSON",
        ),
        (
            "truncated.json",
            text[..text.len() / 2].to_string(),
            "is truncated",
        ),
        (
            "newer.json",
            text.replacen("\"schema_version\": 1", "\"schema_version\": 7", 1),
            "schema_version 7, newer",
        ),
        ("empty.json", "{}".into(), "no schema_version"),
    ];
    for (name, body, needle) in cases {
        let p = write(dir.path(), name, &body);
        for sub in [vec!["model"], vec!["diff", p.to_str().unwrap()]] {
            cxlchar()
                .args(&sub)
                .arg(&p)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(needle));
        }
    }
    cxlchar()
        .args(["model", "/nonexistent/params.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("reading /nonexistent/params.json"));
}

// ---------------------------------------------------------------- check

fn junit_doc(p: &Path) -> String {
    let text = std::fs::read_to_string(p).unwrap();
    roxmltree::Document::parse(&text).expect("JUnit output is well-formed XML");
    text
}

#[test]
fn check_example_spec_reports_not_measured_never_pass() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("check.xml");
    cxlchar()
        .args(["check", "--spec"])
        .arg(repo("results/specs/cxl-expander.toml"))
        .arg(data("params-a.json"))
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(3)
        .stdout(predicate::str::contains("NOT MEASURED"))
        .stdout(predicate::str::contains("cxl_lat_ns is absent"));
    let text = junit_doc(&junit);
    let xml = roxmltree::Document::parse(&text).unwrap();
    // Every case about cxl_lat_ns (absent in this file) is an error or skipped, none passes.
    for case in xml.descendants().filter(|n| n.has_tag_name("testcase")) {
        let name = case.attribute("name").unwrap();
        if name.starts_with("cxl_lat_ns") {
            assert!(
                case.children()
                    .any(|c| c.has_tag_name("error") || c.has_tag_name("skipped")),
                "{name} reported as passed"
            );
        }
    }
    let suites = xml.root_element();
    assert!(suites.attribute("errors").unwrap().parse::<u32>().unwrap() >= 1);
    assert_eq!(suites.attribute("failures"), Some("0"));
}

#[test]
fn check_pass_and_fail_exit_codes_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let pass = write(
        dir.path(),
        "pass.toml",
        "required = [\"mem_lat_ns\"]\n[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1e9\n\
         [[bound]]\nkey = \"mem_lat_ns\"\nop = \">\"\nexpr = \"0.5 * l1_lat_ns\"\n",
    );
    cxlchar()
        .args(["check", "--spec"])
        .arg(&pass)
        .arg(data("params-a.json"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains("3 passed, 0 failed"));
    let fail = write(
        dir.path(),
        "fail.toml",
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 0.001\nwhy = \"impossible\"\n",
    );
    let junit = dir.path().join("fail.xml");
    let out = cxlchar()
        .args(["check", "--format", "json", "--spec"])
        .arg(&fail)
        .arg(data("params-a.json"))
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let r = &v["results"][0];
    assert_eq!(r["outcome"], "fail");
    assert!(r["margin"].as_f64().unwrap() < 0.0);
    let text = junit_doc(&junit);
    assert!(text.contains("<failure"));
}

#[test]
fn check_bad_spec_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"=>\"\nvalue = 1\n",
            ":3:",
            "operator",
        ),
        (
            "[[bound]]\nkey = \"memlatency\"\nop = \"<=\"\nvalue = 1\n",
            ":2:",
            "not a params key",
        ),
        (
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = \"fast\"\n",
            ":4:",
            "not a number",
        ),
        (
            "\n[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1\nbogus = 2\n",
            ":6:",
            "unknown field",
        ),
    ];
    for (i, (body, line, needle)) in cases.iter().enumerate() {
        let p = write(dir.path(), &format!("bad{i}.toml"), body);
        let loc = format!("bad{i}.toml{line}");
        cxlchar()
            .args(["check", "--spec"])
            .arg(&p)
            .arg(data("params-a.json"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(loc))
            .stderr(predicate::str::contains(*needle));
    }
}

// ---------------------------------------------------------------- diff

#[test]
fn diff_two_real_runs() {
    let out = cxlchar()
        .args(["diff", "--all", "--format", "json"])
        .arg(data("params-a.json"))
        .arg(data("params-b.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = stdout_json(&out);
    assert!(v["rule"].as_str().unwrap().contains("p90 - p50"));
    let p = v["params"].as_array().unwrap();
    let lat = p.iter().find(|c| c["name"] == "mem_lat_ns").unwrap();
    assert!(lat["threshold"].as_f64().unwrap() > 0.0, "noise is known");
    assert!(["yes", "no"].contains(&lat["significant"].as_str().unwrap()));
    assert_eq!(
        v["measurements"].as_array().unwrap().len(),
        doc("params-a.json")["measurements"]
            .as_array()
            .unwrap()
            .len()
    );
    cxlchar()
        .arg("diff")
        .arg(data("params-a.json"))
        .arg(data("params-b.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("rule: significant when"));
}

/// B = A with every mem_lat_ns figure (key and its measurements) scaled by `f`.
fn scaled_copy(dir: &Path, name: &str, f: f64, kernel: Option<&str>) -> PathBuf {
    let mut d = doc("params-a.json");
    let v = d["params"]["mem_lat_ns"].as_f64().unwrap();
    d["params"]["mem_lat_ns"] = (v * f).into();
    let from: Vec<String> = d["param_info"]["mem_lat_ns"]["from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    for m in d["measurements"].as_array_mut().unwrap() {
        if from.iter().any(|id| m["id"] == id.as_str()) {
            for q in ["min", "p50", "p90", "p99", "p999", "max", "mean"] {
                let x = m["distribution"][q].as_f64().unwrap();
                m["distribution"][q] = (x * f).into();
            }
        }
    }
    if let Some(k) = kernel {
        d["environment"]["kernel"] = k.into();
    }
    write(dir, name, &serde_json::to_string_pretty(&d).unwrap())
}

fn diff_json(a: &Path, b: &Path) -> Value {
    let out = cxlchar()
        .args(["diff", "--format", "json"])
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    stdout_json(&out)
}

fn key_change(v: &Value, key: &str) -> Value {
    v["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == key)
        .unwrap()
        .clone()
}

#[test]
fn diff_synthetic_significant_and_insignificant() {
    let dir = tempfile::tempdir().unwrap();
    let a = data("params-a.json");
    let big = scaled_copy(dir.path(), "big.json", 2.0, Some("6.99.0-other"));
    let v = diff_json(&a, &big);
    let c = key_change(&v, "mem_lat_ns");
    assert_eq!(c["significant"], "yes");
    assert_eq!(c["direction"], "up");
    assert_eq!(c["verdict"], "worse");
    assert!((c["pct"].as_f64().unwrap() - 100.0).abs() < 1e-6);
    // An untouched key does not move.
    assert_eq!(key_change(&v, "l1_lat_ns")["significant"], "no");
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| w.as_str().unwrap().contains("kernel")),
        "{w:?}"
    );

    let tiny = scaled_copy(dir.path(), "tiny.json", 1.0001, None);
    let v = diff_json(&a, &tiny);
    let c = key_change(&v, "mem_lat_ns");
    assert_eq!(c["significant"], "no");
    assert_eq!(c["direction"], "up");
    assert!(v["warnings"].as_array().unwrap().is_empty());
}

/// The server's `all --quick` (16-core guest with an H200), decompressed.
fn server_all_quick() -> Value {
    let gz = repo("runner/tests/data/h200-all-quick.json.gz");
    let o = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(o.status.success(), "gzip -dc {}", gz.display());
    serde_json::from_slice(&o.stdout).unwrap()
}

/// B = the server's run with its idle latency doubled (key and measurement), the size of
/// the 64K cells' peak message 1024 times larger and the loaded curve's largest
/// bandwidth halved: each key's noise is its own, in its unit, and the report leads with
/// the bottom line.
#[test]
fn diff_takes_each_keys_noise_in_its_own_unit_and_leads_with_the_bottom_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = server_all_quick();
    let a = write(dir.path(), "a.json", &d.to_string());
    let mut e = d.clone();
    let lat = d["params"]["mem_lat_ns"].as_f64().unwrap();
    e["params"]["mem_lat_ns"] = (lat * 2.0).into();
    let from: Vec<Value> = d["param_info"]["mem_lat_ns"]["from"]
        .as_array()
        .unwrap()
        .clone();
    for m in e["measurements"].as_array_mut().unwrap() {
        if from.contains(&m["id"]) {
            for q in ["min", "p50", "p90", "p99", "p999", "max", "mean"] {
                let x = m["distribution"][q].as_f64().unwrap();
                m["distribution"][q] = (x * 2.0).into();
            }
        }
    }
    e["params"]["pool_cell_peak_msg_64k_bytes"] = (262144u64 * 1024).into();
    let bw = d["params"]["loaded_lat_max_bw_gbs"].as_f64().unwrap();
    e["params"]["loaded_lat_max_bw_gbs"] = (bw / 2.0).into();
    let b = write(dir.path(), "b.json", &e.to_string());

    let v = diff_json(&a, &b);
    let c = key_change(&v, "loaded_lat_max_bw_gbs");
    assert!(
        c["threshold"].is_null(),
        "no noise borrowed from the ns chase: {c}"
    );
    assert_eq!(c["significant"], "unknown", "{c}");
    assert!(
        c["noise_source"]
            .as_str()
            .unwrap()
            .contains("no distribution in GB/s"),
        "{c}"
    );
    let c = key_change(&v, "pool_cell_peak_msg_64k_bytes");
    assert!(c["pct"].as_f64().unwrap() > 100_000.0, "{c}");
    assert!(c["threshold"].is_null(), "no noise from GB/s figures: {c}");
    assert_eq!(c["significant"], "unknown", "{c}");
    assert_eq!(c["verdict"], "changed", "{c}");
    assert!(
        c["noise_source"]
            .as_str()
            .unwrap()
            .contains("no distribution in bytes"),
        "{c}"
    );
    let c = key_change(&v, "mem_lat_ns");
    assert_eq!(c["significant"], "yes", "{c}");
    assert_eq!(c["noise_source"], "measurement", "{c}");
    assert!(c["threshold"].as_f64().unwrap() > 0.0, "{c}");

    let bl = &v["bottom_line"];
    let n = |k: &str| bl[k].as_u64().unwrap();
    assert_eq!(n("keys") as usize, v["params"].as_array().unwrap().len());
    assert_eq!(
        n("beyond_noise")
            + n("within_noise")
            + n("not_comparable")
            + n("no_distribution")
            + n("one_file_only"),
        n("keys"),
        "{bl}"
    );
    assert_eq!(
        n("beyond_noise"),
        1,
        "only the idle latency moved beyond noise: {bl}"
    );
    assert_eq!(bl["largest"][0], "mem_lat_ns", "{bl}");

    let out = cxlchar().arg("diff").arg(&a).arg(&b).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with("bottom line: "), "{text}");
    assert!(
        lines[1].contains(" changed beyond noise (0 better, 1 worse)"),
        "{text}"
    );
    let largest = text.find("largest changes beyond noise:").expect(&text);
    assert!(largest < text.find("rule: ").unwrap(), "{text}");
    let row = lines
        .iter()
        .find(|l| l.trim_start().starts_with("pool_cell_peak_msg_64k_bytes "))
        .expect(&text);
    assert!(
        row.contains("no distribution") && row.contains("changed"),
        "{row}"
    );
}

/// A full run against a quick one on the 16-core server: B is the server's `all --quick`
/// with the bandwidth footprints at 1 GiB and the NT copy threshold searched up to 4 MiB.
#[test]
fn diff_calls_figures_measured_differently_not_comparable() {
    let dir = tempfile::tempdir().unwrap();
    let a = data("h200-quick-trimmed.json");
    let mut d = doc("h200-quick-trimmed.json");
    for m in d["measurements"].as_array_mut().unwrap() {
        let id = m["id"].as_str().unwrap().to_string();
        if id.starts_with("mem.bandwidth/") && m["parameters"]["size_bytes"] == 134217728 {
            m["parameters"]["size_bytes"] = (1u64 << 30).into();
        }
        if id.starts_with("mem.copy-threshold/") && id.ends_with("/1M") {
            m["parameters"]["block_bytes"] = (4u64 << 20).into();
        }
    }
    let b = write(dir.path(), "full.json", &serde_json::to_string(&d).unwrap());
    let v = diff_json(&a, &b);
    let c = key_change(&v, "mem_write_bw_gbs");
    assert_eq!(c["verdict"], "not comparable", "{c}");
    assert_eq!(c["not_comparable"][0], "footprint 128 MiB vs 1 GiB", "{c}");
    let t = key_change(&v, "nt_copy_threshold_bytes");
    assert_eq!(t["verdict"], "not comparable", "{t}");
    assert!(
        t["not_comparable"]
            .to_string()
            .contains("block range 1 KiB..1 MiB vs 1 KiB..4 MiB"),
        "{t}"
    );
    // The same sweep, the same method: comparable (no verdict change either).
    assert_ne!(key_change(&v, "l1_lat_ns")["verdict"], "not comparable");
    // One row per key: `key@anon` repeats `key` (anon is the first target).
    let names: Vec<&str> = v["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"mem_bw_gbs") && !names.contains(&"mem_bw_gbs@anon"),
        "{names:?}"
    );
    assert!(names.contains(&"gpu_h2d_bw_gbs"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with("@anon") || n.ends_with("@gpu:0")),
        "{names:?}"
    );
    // The table says it under the row.
    let out = cxlchar().arg("diff").arg(&a).arg(&b).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("measured differently: footprint 128 MiB vs 1 GiB"),
        "{text}"
    );
}

/// Every consumer is near-linear in its input: a file of 100,000 keys (each also under
/// its `@anon` twin, with where it came from), 2,000 measurements and 5,000 warnings
/// naming them is read, checked, diffed, exported, modelled, plotted and reported in
/// seconds (a step quadratic in the keys takes many minutes here).
#[test]
fn every_consumer_reads_100k_keys_in_seconds() {
    let d = tempfile::tempdir().unwrap();
    let mut v = doc("params-a.json");
    let m0 = v["measurements"][0].clone();
    let info0 = v["param_info"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    let ms = v["measurements"].as_array_mut().unwrap();
    for i in 0..2000 {
        let mut m = m0.clone();
        m["id"] = format!("mem.latency/anon/scale/{i}").into();
        ms.push(m);
    }
    for i in 0..100_000 {
        let key = format!("k{i}_lat_ns");
        let mut info = info0.clone();
        info["from"] = serde_json::json!([format!("mem.latency/anon/scale/{}", i % 2000)]);
        v["params"][&key] = (100.0 + i as f64).into();
        v["param_info"][&key] = info.clone();
        v["params"][format!("{key}@anon")] = (100.0 + i as f64).into();
        v["param_info"][format!("{key}@anon")] = info;
    }
    let ws = v["warnings"].as_array_mut().unwrap();
    for i in 0..5000 {
        ws.push(serde_json::json!({
            "code": format!("c{}", i % 50),
            "message": format!("mem.latency/anon/scale/{} was disturbed", i % 2000),
            "remediation": "run on an idle machine"
        }));
    }
    let big = write(d.path(), "big.json", &serde_json::to_string(&v).unwrap());
    let spec = write(
        d.path(),
        "spec.toml",
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1e9\n",
    );
    let out = d.path();
    let b = big.to_str().unwrap();
    let runs: Vec<Vec<String>> = vec![
        vec![
            "check".into(),
            "--spec".into(),
            spec.display().to_string(),
            b.into(),
        ],
        vec![
            "diff".into(),
            b.into(),
            data("params-a.json").display().to_string(),
        ],
        vec![
            "export".into(),
            b.into(),
            "--csv".into(),
            out.join("x.csv").display().to_string(),
            "--openmetrics".into(),
            out.join("x.om").display().to_string(),
        ],
        vec!["model".into(), b.into()],
        vec![
            "plot".into(),
            b.into(),
            "--out".into(),
            out.join("plots").display().to_string(),
        ],
        vec![
            "report".into(),
            b.into(),
            "--out".into(),
            out.join("r.html").display().to_string(),
        ],
    ];
    for args in runs {
        let t0 = std::time::Instant::now();
        let o = cxlchar()
            .args(&args)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            o.status.code().is_some(),
            "{} did not finish within 60 s (a quadratic step?)",
            args[0]
        );
        assert!(
            o.status.code().unwrap() <= 1
                && !String::from_utf8_lossy(&o.stderr).contains("panicked"),
            "{}: {:?} {}",
            args[0],
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        eprintln!(
            "{} on 100k keys: {:.2} s",
            args[0],
            t0.elapsed().as_secs_f64()
        );
    }
    let html = std::fs::read_to_string(out.join("r.html")).unwrap();
    assert!(html.contains("Keys (100"), "every key in the report");
}

#[test]
fn unbounded_and_duplicate_inputs_are_exit_2() {
    let spec = repo("results/specs/cxl-expander.toml");
    let good = data("params-a.json");
    let dir = tempfile::tempdir().unwrap();
    let dup = dir.path().join("dup.json");
    std::fs::write(&dup, r#"{"schema_version": 1, "schema_version": 1}"#).unwrap();
    let zero = Path::new("/dev/zero");
    let cases: Vec<(Vec<&std::ffi::OsStr>, &str)> = vec![
        (vec!["model".as_ref(), zero.as_ref()], "not a regular file"),
        (
            vec!["diff".as_ref(), good.as_ref(), zero.as_ref()],
            "not a regular file",
        ),
        (
            vec![
                "check".as_ref(),
                "--spec".as_ref(),
                zero.as_ref(),
                good.as_ref(),
            ],
            "not a regular file",
        ),
        (
            vec![
                "check".as_ref(),
                "--spec".as_ref(),
                spec.as_ref(),
                dup.as_ref(),
            ],
            "given twice",
        ),
        (
            vec!["diff".as_ref(), dup.as_ref(), good.as_ref()],
            "given twice",
        ),
    ];
    for (args, needle) in cases {
        cxlchar()
            .args(&args)
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
}

#[test]
fn a_strangers_keys_and_targets_print_as_escapes_in_tables() {
    let d = tempfile::tempdir().unwrap();
    let mut doc = read_json(&repo("results/plots/params-all-quick.json"));
    doc["params"]["mem_lat_ns@\u{1b}[31manon"] = serde_json::json!(91.5);
    doc["measurements"][1]["target"] = serde_json::json!("\u{1b}[2Jred\nnext");
    let a = d.path().join("a.json");
    std::fs::write(&a, serde_json::to_string(&doc).unwrap()).unwrap();
    doc["params"]["mem_lat_ns@\u{1b}[31manon"] = serde_json::json!(99.5);
    let b = d.path().join("b.json");
    std::fs::write(&b, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = cxlchar().arg("diff").arg(&a).arg(&b).output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        !text.contains('\x1b'),
        "an escape sequence reached the terminal: {text:?}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("mem_lat_ns@"))
        .unwrap_or_else(|| panic!("no row of the key in\n{text}"));
    assert!(row.contains("mem_lat_ns@\\x1b[31manon"), "{row}");
    assert!(row.contains("+8.7%"), "the key's row is one line: {row}");
}

#[test]
fn server_acceptance_spec_holds_links_and_dram_and_leaves_what_is_absent_optional() {
    let dir = tempfile::tempdir().unwrap();
    let spec = repo("results/specs/server-acceptance.toml");
    let with = |degraded: f64| {
        let mut d = doc("params-a.json");
        let p = d["params"].as_object_mut().unwrap();
        p.insert("pcie_links_degraded".into(), degraded.into());
        p.insert("mem_lat_ns".into(), 100.0.into());
        p.insert("mem_bw_gbs".into(), 50.0.into());
        for k in ["scan_slow_ranges", "cxl_scan_slow_ranges"] {
            p.remove(k);
        }
        p.retain(|k, _| !k.starts_with("xtier_") && !k.starts_with("hmat_"));
        let name = format!("links-{degraded}.json");
        write(dir.path(), &name, &serde_json::to_string(&d).unwrap())
    };
    cxlchar()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg(with(0.0))
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "7 not measured (7 of them optional)",
        ));
    cxlchar()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg(with(1.0))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("pcie_links_degraded"))
        .stdout(predicate::str::contains("FAIL"));
}
