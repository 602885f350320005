//! `--target interleave:...` end to end: an interleave over this machine's one memory node
//! (legal: all pages on it), its part measured next to it, its keys only qualified, the
//! refusals (a missing node, a malformed list, weights that are not the kernel's).

mod common;
use common::*;

use serde_json::Value;
use std::path::Path;

const WEIGHTS: &str = "/sys/kernel/mm/mempolicy/weighted_interleave";

/// The first NUMA node with memory, as `cxlchar targets` sees it.
fn memory_node() -> u64 {
    let t = json_stdout(&["targets", "--format", "json"]);
    t["topology"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["mem_total_bytes"].as_u64() > Some(0))
        .expect("a node with memory")["id"]
        .as_u64()
        .unwrap()
}

/// `mem bandwidth` on `target`, read kernel, one thread (a few seconds), plus `extra`.
fn bandwidth(target: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "mem",
        "bandwidth",
        "--quick",
        "--kernel",
        "read",
        "--threads",
        "1",
        "--target",
        target,
        "--format",
        "json",
    ];
    args.extend(extra);
    let doc = json_stdout(&args);
    assert_schema_valid(&doc);
    doc
}

fn on<'a>(doc: &'a Value, target: &str) -> Vec<&'a Value> {
    doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["target"] == target)
        .collect()
}

#[test]
fn interleave_over_one_node_is_measured_next_to_its_part_with_qualified_keys() {
    if let Some(why) = mbind_unavailable() {
        bench_core::testing::unavailable("mbind", &why);
        return;
    }
    let n = memory_node();
    let il = format!("interleave:{n}");
    let part = format!("node:{n}");
    let doc = bandwidth(&il, &[]);
    let ms = on(&doc, &il);
    assert!(!ms.is_empty(), "nothing measured on {il}");
    for m in ms {
        let p = &m["placement"];
        assert_eq!(p["verification"], "verified", "{p}");
        let proof = &p["interleave"];
        assert_eq!(proof["policy"], "MPOL_INTERLEAVE", "{p}");
        assert_eq!(proof["expected_share_per_node"][n.to_string()], 1.0, "{p}");
        assert_eq!(proof["share_per_node"][n.to_string()], 1.0, "{p}");
        assert_eq!(
            p["pages_per_node"][n.to_string()],
            p["pages_checked"],
            "every page on node {n}: {p}"
        );
    }
    // The part, added because it was not named.
    assert!(
        !on(&doc, &part).is_empty(),
        "{part} not measured next to {il}"
    );
    let params = doc["params"].as_object().unwrap();
    let qualified = format!("mem_bw_gbs@{il}");
    assert!(
        params[&qualified].as_f64().is_some(),
        "{qualified}: {params:?}"
    );
    // The unqualified key is the plain node's, never the interleave's.
    assert_eq!(params["mem_bw_gbs"], params[&format!("mem_bw_gbs@{part}")]);
    assert!(!params.keys().any(|k| k.starts_with("cxl_")), "{params:?}");
}

#[test]
fn an_interleave_alone_gives_no_unqualified_key() {
    if let Some(why) = mbind_unavailable() {
        bench_core::testing::unavailable("mbind", &why);
        return;
    }
    // `mem latency` does not add the parts: only qualified keys come out.
    let n = memory_node();
    let il = format!("interleave:{n}");
    let doc = json_stdout(&[
        "mem", "latency", "--quick", "--sizes", "1M", "--target", &il, "--format", "json",
    ]);
    assert_schema_valid(&doc);
    assert!(on(&doc, &format!("node:{n}")).is_empty());
    assert!(!on(&doc, &il).is_empty());
    for k in doc["params"].as_object().unwrap().keys() {
        assert!(k.ends_with(&format!("@{il}")), "{k} is not qualified");
    }
}

#[test]
fn interleave_over_a_missing_node_is_refused_naming_it() {
    assert!(
        !Path::new("/sys/devices/system/node/node7").exists(),
        "this test needs a machine without node 7"
    );
    assert_bad_input(
        &["mem", "bandwidth", "--quick", "--target", "interleave:0,7"],
        "node 7 does not exist",
    );
}

#[test]
fn malformed_interleave_lists_are_command_line_errors() {
    for (spec, needle) in [
        ("interleave:0,0", "node 0 is named twice"),
        ("interleave:0=3,1", "every node a weight"),
        ("interleave:", "not a node number"),
        ("interleave:0=0", "1..255"),
    ] {
        cxlchar()
            .args(["mem", "bandwidth", "--quick", "--target", spec])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(needle));
    }
}

#[test]
fn weighted_interleave_uses_the_kernel_s_weights_or_says_why_not() {
    if let Some(why) = mbind_unavailable() {
        bench_core::testing::unavailable("mbind", &why);
        return;
    }
    let n = memory_node();
    let Ok(w) = std::fs::read_to_string(format!("{WEIGHTS}/node{n}")) else {
        // No weighted interleave: the target is skipped with the kernel's reason (the
        // part node is still measured, so --best-effort exits 0).
        let il = format!("interleave:{n}=1");
        let doc = bandwidth(&il, &["--best-effort"]);
        let s = doc["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["target"] == il.as_str())
            .expect("weighted interleave skipped");
        assert!(
            s["reason"]
                .as_str()
                .unwrap()
                .contains("kernel has no weighted interleave (needs Linux 6.9+"),
            "{s}"
        );
        return;
    };
    let w: u32 = w.trim().parse().unwrap();
    // The current weight: measured, the weights recorded with the proof.
    let il = format!("interleave:{n}={w}");
    let doc = bandwidth(&il, &[]);
    let m = on(&doc, &il)[0];
    let proof = &m["placement"]["interleave"];
    assert_eq!(proof["policy"], "MPOL_WEIGHTED_INTERLEAVE", "{proof}");
    assert_eq!(proof["weights"][n.to_string()], w, "{proof}");
    // Another weight: refused with the current one and the command that sets it; the
    // system-wide setting is left as it was.
    let other = w % 255 + 1;
    let spec = format!("interleave:{n}={other}");
    let refused = ["mem", "bandwidth", "--quick", "--target", &spec];
    for needle in [
        format!("node{n}={w}"),
        format!("echo {other} > {WEIGHTS}/node{n}"),
    ] {
        assert_bad_input(&refused, &needle);
    }
    let after: u32 = std::fs::read_to_string(format!("{WEIGHTS}/node{n}"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(after, w, "cxlchar must never write the weights");
}

#[test]
fn targets_lists_interleave_and_the_weights() {
    let t = json_stdout(&["targets", "--format", "json"]);
    let specs: Vec<(&str, &str)> = t["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["spec"].as_str().unwrap(), x["note"].as_str().unwrap()))
        .collect();
    let memory_nodes = t["topology"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["mem_total_bytes"].as_u64().unwrap_or(0) > 0)
        .count();
    if memory_nodes < 2 {
        // Interleaving over one node is that node: nothing to offer, and why.
        assert!(
            !specs.iter().any(|(s, _)| s.starts_with("interleave:")),
            "{specs:?}"
        );
        cxlchar()
            .arg("targets")
            .assert()
            .success()
            .stdout(predicates::str::contains("interleave: none offered ("));
        return;
    }
    assert!(
        specs
            .iter()
            .any(|(s, n)| s.starts_with("interleave:") && n.contains("MPOL_INTERLEAVE")),
        "{specs:?}"
    );
    let weighted = specs
        .iter()
        .find(|(s, n)| {
            s.starts_with("interleave:") && (n.contains("weighted") || n.contains("WEIGHTED"))
        })
        .expect("weighted interleave listed");
    if Path::new(WEIGHTS).exists() {
        assert!(weighted.1.contains("current weights"), "{weighted:?}");
        assert!(t["topology"]["weighted_interleave"].is_object());
    } else {
        assert!(weighted.1.contains("needs Linux 6.9+"), "{weighted:?}");
        assert!(t["topology"]["weighted_interleave"].is_null());
    }
    cxlchar()
        .arg("targets")
        .assert()
        .success()
        .stdout(predicates::str::contains("interleave:"));
}
