//! The consumers on fleet files: the schema, `check` (verdict per host, JUnit suites),
//! `diff` of two fleets, `report` (outliers, heatmaps), `plot`, and the bad inputs.
//!
//! The fixtures are composed from the runner's real params files (tests/data): four hosts
//! with perturbed values and one planted outlier (its mem_lat_ns 1.8 x the others'), verbs
//! pairs between every two hosts and one pool pair.

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const HOSTS: [&str; 4] = ["node-a", "node-b", "node-c", "node-d"];
/// The planted outlier.
const SICK: &str = "node-c";

/// A real params.json with every key scaled by `factor` (mem_lat_ns also by `lat`).
fn host_params(factor: f64, lat: f64) -> Value {
    let mut p = read_json(&data("params-a.json"));
    for (k, v) in p["params"].as_object_mut().unwrap() {
        let mut x = v.as_f64().unwrap() * factor;
        if k.starts_with("mem_lat_ns") {
            x *= lat;
        }
        *v = json!(x);
    }
    p
}

/// A pair's params: a real params.json whose keys are the pair's.
fn pair_params(keys: &[(&str, f64)]) -> Value {
    let mut p = read_json(&data("params-b.json"));
    p["params"] = keys
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    p["param_info"] = keys
        .iter()
        .map(|(k, _)| {
            (
                k.to_string(),
                json!({"unit": if k.ends_with("_ns") {"ns"} else {"GB/s"}, "target": "rxe0",
                       "method": "p50 of the pair's run", "from": []}),
            )
        })
        .collect();
    p
}

/// The fleet fixture; `shift` scales every host's values (a second run of the fleet).
fn fleet(shift: f64) -> Value {
    let factors = [1.0, 1.01, 0.995, 1.005];
    let hosts: Vec<Value> = HOSTS
        .iter()
        .zip(factors)
        .enumerate()
        .map(|(i, (h, f))| {
            json!({
                "host": h,
                "ranks": [2 * i, 2 * i + 1],
                "measuring_rank": 2 * i,
                "address": format!("192.168.10.{}", i + 1),
                "params": host_params(f * shift, if *h == SICK { 1.8 } else { 1.0 }),
            })
        })
        .collect();
    let mut pairs = vec![];
    let mut round = 0;
    for (i, server) in HOSTS.iter().enumerate() {
        for (j, client) in HOSTS.iter().enumerate().skip(i + 1) {
            let lat = 2000.0 + 100.0 * (i + j) as f64;
            pairs.push(json!({
                "kind": "verbs", "server": server, "client": client, "round": round,
                "params": pair_params(&[("verbs_lat_ns", lat * shift), ("verbs_bw_gbs", 3.0)]),
            }));
            round += 1;
        }
    }
    pairs.push(json!({
        "kind": "pool", "server": "node-a", "client": "node-b", "round": 0,
        "pool": {"identity": "cxl:serials=0x1234:ways=1:offset=0:size=100663296",
                 "server_spec": "dax:/dev/dax0.0", "client_spec": "dax:/dev/dax1.0",
                 "offset_bytes": 0, "len_bytes": 33554432},
        "params": pair_params(&[("pool_msg_lat_ns", 900.0), ("pool_msg_bw_gbs", 4.0)]),
    }));
    json!({
        "format": "cxlchar-fleet",
        "fleet_schema_version": 1,
        "cxlchar_version": env!("CARGO_PKG_VERSION"),
        "command_line": ["cxlchar", "all", "--quick", "--fleet-out", "fleet.json"],
        "started_at": "2026-11-24T10:00:00Z",
        "finished_at": "2026-11-24T10:05:00Z",
        "launcher": {"kind": "slurm", "job": "42.0", "ranks": 8,
                     "variables": {"SLURM_JOB_ID": "42", "SLURM_STEP_NUM_TASKS": "8"}},
        "hosts": hosts,
        "pairs": pairs,
        "pairs_skipped": [{"kind": "pool", "hosts": ["node-c", "node-d"],
                           "reason": "node-c and node-d map no CXL pool in common"}],
        "warnings": [],
    })
}

fn write(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_fixture_validates_and_bad_fleets_do_not() {
    let f = fleet(1.0);
    assert_fleet_schema_valid(&f);
    let mut v2 = f.clone();
    v2["fleet_schema_version"] = json!(2);
    assert!(!fleet_schema_errors(&v2).is_empty());
    let mut no_hosts = f.clone();
    no_hosts.as_object_mut().unwrap().remove("hosts");
    assert!(!fleet_schema_errors(&no_hosts).is_empty());
    let mut bad_params = f.clone();
    bad_params["hosts"][1]["params"]
        .as_object_mut()
        .unwrap()
        .remove("schema_version");
    let e = fleet_schema_errors(&bad_params);
    assert!(
        e.iter().any(|e| e.contains("/hosts/1/params")),
        "the error points into the host's params: {e:?}"
    );
    let mut extra = f.clone();
    extra["hosts"][0]["colour"] = json!("red");
    assert!(!fleet_schema_errors(&extra).is_empty());
    // A pair's params are params.json too.
    let mut bad_pair = f;
    bad_pair["pairs"][0]["params"]["params"]["Bad Key"] = json!(1);
    assert!(!fleet_schema_errors(&bad_pair).is_empty());
}

#[test]
fn check_gives_a_verdict_per_host_and_a_junit_suite_per_host() {
    let d = tempfile::tempdir().unwrap();
    let fp = write(d.path(), "fleet.json", &fleet(1.0));
    let spec = d.path().join("spec.toml");
    std::fs::write(
        &spec,
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 120\n\
         [[bound]]\nkey = \"l1_lat_ns\"\nop = \"<=\"\nvalue = 5\n\
         [[bound]]\nkey = \"verbs_lat_ns\"\nop = \"<=\"\nvalue = 10000\n",
    )
    .unwrap();
    let junit = d.path().join("check.xml");
    let out = cxlchar()
        .args(["check", "--spec", s(&spec), s(&fp), "--junit", s(&junit)])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("verdict for node-a: pass"), "{text}");
    assert!(
        text.contains(&format!("verdict for {SICK}: FAIL")),
        "{text}"
    );
    assert!(text.contains("fleet: FAIL"), "{text}");
    // JUnit: one suite per host with one case per bound, one per verbs pair.
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 4 + 6, "4 hosts + 6 verbs pairs");
    for h in HOSTS {
        let suite = suites
            .iter()
            .find(|n| n.attribute("name") == Some(&format!("spec {h}")))
            .unwrap_or_else(|| panic!("a suite for {h}: {xml}"));
        let cases: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), 2, "two host bounds for {h}");
        let failed = cases
            .iter()
            .any(|c| c.children().any(|x| x.has_tag_name("failure")));
        assert_eq!(failed, h == SICK, "{h}");
        assert_eq!(
            suite.attribute("failures"),
            Some(if h == SICK { "1" } else { "0" })
        );
    }
    let pair = suites
        .iter()
        .find(|n| n.attribute("name") == Some("spec verbs node-b-node-a"))
        .expect("a suite per verbs pair, client first");
    assert_eq!(
        pair.children()
            .filter(|n| n.has_tag_name("testcase"))
            .count(),
        1
    );
    // JSON: suites with their exit codes; a spec every host passes exits 0.
    std::fs::write(
        &spec,
        "[[bound]]\nkey = \"l1_lat_ns\"\nop = \"<=\"\nvalue = 5\n",
    )
    .unwrap();
    let j = json_stdout(&["check", "--spec", s(&spec), s(&fp), "--format", "json"]);
    assert_eq!(j["exit_code"], 0);
    assert_eq!(j["suites"].as_array().unwrap().len(), 4);
    // A pool bound and a fleet without pool pairs: not measured (3), with the reason.
    let mut f = fleet(1.0);
    f["pairs"]
        .as_array_mut()
        .unwrap()
        .retain(|p| p["kind"] == "verbs");
    let fp2 = write(d.path(), "fleet2.json", &f);
    std::fs::write(
        &spec,
        "[[bound]]\nkey = \"pool_msg_lat_ns\"\nop = \"<=\"\nvalue = 2000\n",
    )
    .unwrap();
    let out = cxlchar()
        .args(["check", "--spec", s(&spec), s(&fp2)])
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("no pool pair was measured") && text.contains("map no CXL pool"),
        "{text}"
    );
}

#[test]
fn diff_matches_hosts_and_pairs_and_lists_the_unmatched() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.json", &fleet(1.0));
    let mut fb = fleet(1.3);
    fb["hosts"].as_array_mut().unwrap().pop();
    let b = write(d.path(), "b.json", &fb);
    let j = json_stdout(&["diff", s(&a), s(&b), "--format", "json"]);
    assert_eq!(j["hosts_only_a"], json!(["node-d"]));
    assert_eq!(j["hosts_only_b"], json!([]));
    assert_eq!(j["hosts"].as_array().unwrap().len(), 3);
    let host_a = &j["hosts"][0];
    assert_eq!(host_a["name"], "node-a");
    let l1 = host_a["diff"]["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "l1_lat_ns")
        .unwrap();
    assert_eq!(l1["direction"], "up");
    assert_eq!(l1["verdict"], "worse");
    // 6 verbs pairs + 1 pool pair, matched whichever host served.
    assert_eq!(j["pairs"].as_array().unwrap().len(), 7);
    assert!(j["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "verbs node-a-node-b"));
    let text = String::from_utf8(
        cxlchar()
            .args(["diff", s(&a), s(&b)])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(text.contains("hosts only in A: node-d"), "{text}");
    assert!(text.contains("== host node-a"), "{text}");
    assert!(text.contains("== pair pool node-a-node-b"), "{text}");
}

#[test]
fn report_names_the_outlier_and_draws_every_matrix_and_plot_writes_them() {
    let d = tempfile::tempdir().unwrap();
    let fp = write(d.path(), "fleet.json", &fleet(1.0));
    let spec = d.path().join("spec.toml");
    std::fs::write(
        &spec,
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 120\n",
    )
    .unwrap();
    let html = d.path().join("r.html");
    cxlchar()
        .args(["report", s(&fp), "--out", s(&html), "--spec", s(&spec)])
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<svg").count(), 4, "one SVG per pair matrix");
    for key in [
        "verbs_lat_ns",
        "verbs_bw_gbs",
        "pool_msg_lat_ns",
        "pool_msg_bw_gbs",
    ] {
        assert!(page.contains(&format!("pairs-{key}.svg")), "{key}");
    }
    assert!(
        page.contains(&format!("{SICK} (z = +")),
        "the outlier named"
    );
    assert!(page.contains("map no CXL pool in common"));
    assert!(page.contains("<span class=\"fail\">FAIL</span>"));
    assert!(
        !page.contains(" src=") && !page.contains("<link"),
        "self-contained"
    );
    // The text summary flags the same host (unit-tested there); plot writes the heatmaps.
    let out = d.path().join("plots");
    let stdout = cxlchar()
        .args(["plot", s(&fp), "--out", s(&out)])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let listed = String::from_utf8(stdout).unwrap();
    assert_eq!(listed.lines().count(), 4, "{listed}");
    let svg = std::fs::read_to_string(out.join("pairs-verbs_lat_ns.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("node-c"));
}

#[test]
fn bad_inputs_exit_2_with_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let fp = write(d.path(), "fleet.json", &fleet(1.0));
    let params = data("params-a.json");
    let err = |args: &[&str]| -> String {
        let out = cxlchar().args(args).assert().code(2).get_output().clone();
        String::from_utf8(out.stderr).unwrap()
    };
    // A fleet file and a params.json.
    let e = err(&["diff", s(&fp), s(&params)]);
    assert!(
        e.contains("is a fleet file and") && e.contains("params-a.json"),
        "{e}"
    );
    let e = err(&["diff", s(&params), s(&fp)]);
    assert!(e.contains("fleet.json is a fleet file"), "{e}");
    // Another fleet schema version, named with ours.
    let mut v2 = fleet(1.0);
    v2["fleet_schema_version"] = json!(2);
    let p2 = write(d.path(), "v2.json", &v2);
    let e = err(&["diff", s(&p2), s(&fp)]);
    assert!(
        e.contains("fleet_schema_version 2") && e.contains("fleet schema version 1"),
        "{e}"
    );
    // Truncated.
    let text = std::fs::read_to_string(&fp).unwrap();
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let e = err(&["report", s(&cut), "--out", s(&d.path().join("r.html"))]);
    assert!(e.contains("truncated"), "{e}");
    // A host whose params lack schema_version: named by host.
    let mut bad = fleet(1.0);
    bad["hosts"][2]["params"]
        .as_object_mut()
        .unwrap()
        .remove("schema_version");
    let pb = write(d.path(), "bad.json", &bad);
    let e = err(&["diff", s(&pb), s(&fp)]);
    assert!(
        e.contains("hosts[2] (host node-c)'s params has no schema_version"),
        "{e}"
    );
    // A key twice in one object.
    let dup = d.path().join("dup.json");
    std::fs::write(
        &dup,
        text.replacen("\"format\"", "\"format\": 1, \"format\"", 1),
    )
    .unwrap();
    let e = err(&["diff", s(&dup), s(&fp)]);
    assert!(e.contains("\"format\" is given twice"), "{e}");
    // model and export read one host's params.
    let e = err(&["model", s(&fp)]);
    assert!(e.contains("is a fleet file") && e.contains("jq"), "{e}");
    let e = err(&["export", s(&fp), "--csv", "-"]);
    assert!(e.contains("is a fleet file"), "{e}");
}
