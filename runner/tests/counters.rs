//! Counter evidence in a real run, and the CSV/Markdown formats end to end.

mod common;
use common::*;

use serde_json::Value;

/// The operation the hardware counts of a benchmark are normalised by.
fn op_of(m: &Value) -> &'static str {
    match (
        m["benchmark"].as_str().unwrap(),
        m["unit"].as_str().unwrap(),
    ) {
        ("mem.latency" | "mem.loaded", _) => "load",
        (_, "GB/s") => "byte",
        ("pool.c2c", _) => "transfer",
        ("pool.msg", _) | ("verbs", _) => "message",
        _ => "op",
    }
}

/// Every measurement of `doc` carries counter evidence (or the reasons for its absence),
/// retried up to the bound when disturbed, and the run warns where it should.
fn check_counters(doc: &Value) {
    let ms = doc["measurements"].as_array().unwrap();
    assert!(!ms.is_empty());
    let warned = |code: &str| {
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == code)
    };
    // A summary of other measurements (a core-to-core pair class) times nothing itself.
    for m in ms
        .iter()
        .filter(|m| m["parameters"].get("summary_of").is_none())
    {
        let id = m["id"].as_str().unwrap();
        let c = &m["counters"];
        assert!(c.is_object(), "{id}: no counters");
        let attempts = c["attempts"].as_u64().expect("attempts recorded");
        // A crew's measurement: its attempts are the windows it ran, disturbed only when
        // no window was clean (noisy). Any other: retried up to the bound.
        let crew = &m["parameters"]["crew"];
        if crew.is_object() {
            assert_eq!(attempts, crew["windows_run"].as_u64().unwrap(), "{id}: {c}");
            assert_eq!(
                c["disturbed"] == true,
                crew["noisy"].is_string(),
                "{id}: {c}"
            );
        } else {
            assert!((1..=3).contains(&attempts), "{id}: {c}");
        }
        let unavailable = c["unavailable"].as_object();
        let missing = |k: &str| unavailable.is_some_and(|u| u.contains_key(k));
        for k in ["context_switches", "cpu_migrations", "minor_faults"] {
            assert!(
                c[k].is_u64() || missing(k),
                "{id}: {k}: neither counted nor explained"
            );
        }
        for k in ["cycles", "llc_load_misses"] {
            assert!(
                c[k].is_u64() || missing(k) || missing("hardware"),
                "{id}: {k}: neither counted nor explained"
            );
        }
        if missing("hardware") {
            assert!(
                c.get("cycles").is_none(),
                "{id}: no zeros for absent counters"
            );
            assert!(warned("hw_counters"));
        }
        if c["llc_load_misses"].is_u64() {
            let key = format!("llc_load_misses_per_{}", op_of(m));
            assert!(c["per_op"][&key].is_number(), "{id}: {key} in {c}");
        }
        if c["disturbed"] == true {
            if !crew.is_object() {
                assert_eq!(attempts, 3, "{id}: retried up to the bound before flagging");
            }
            assert!(!c["disturbances"].as_array().unwrap().is_empty());
            let listed =
                doc["warnings"].as_array().unwrap().iter().any(|w| {
                    w["code"] == "disturbed" && w["message"].as_str().unwrap().contains(id)
                });
            assert!(listed, "{id}: disturbed but not in a disturbed warning");
        } else {
            assert!(c.get("disturbances").is_none(), "{id}: {c}");
        }
        let threads = c.get("threads").map_or(1, |t| t.as_u64().unwrap());
        if let Some(t) = m["parameters"]["threads"].as_u64() {
            if m["benchmark"] != "mem.loaded" {
                assert_eq!(threads, t, "{id}: every thread's counts summed");
            }
        }
    }
}

#[test]
fn every_latency_measurement_carries_counters_or_their_absence() {
    check_counters(&run_out(&[
        "mem", "latency", "--quick", "--sizes", "4K,64K",
    ]));
}

/// One quick benchmark of each family this machine can run (anonymous memory works
/// everywhere; the PCIe and verbs families need a BAR or an RDMA device and are checked
/// by the lab tests).
#[test]
fn every_family_records_counters_in_every_measurement() {
    let cpus = bench_core::pin::allowed_cpus().len();
    let bw = run_out(&[
        "mem",
        "bandwidth",
        "--quick",
        "--kernel",
        "read",
        "--sizes",
        "256K",
    ]);
    check_counters(&bw);
    if cpus >= 2 {
        // The all-threads point: the counts of both of the crew's threads.
        assert!(bw["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["parameters"]["threads"] == 2 && m["counters"]["threads"] == 2));
    }
    check_counters(&run_out(&["pool", "flush", "--quick"]));
    check_counters(&run_out(&["pool", "atomics", "--quick", "--size", "1M"]));
    if cpus >= 2 {
        // Loaded latency: the chase thread's counts, the traffic thread a helper.
        let loaded = run_out(&["mem", "loaded", "--quick", "--mix", "read"]);
        check_counters(&loaded);
        // (Run alone, it also carries the measurements of the DRAM checks its keys stand on.)
        let points = loaded["measurements"].as_array().unwrap().iter();
        for m in points.filter(|m| m["benchmark"] == "mem.loaded") {
            let helpers = m["parameters"]["traffic_threads"].as_u64().unwrap();
            assert_eq!(
                m["counters"]
                    .get("helper_threads")
                    .map_or(0, |h| h.as_u64().unwrap()),
                helpers
            );
        }
        let c2c = run_out(&["pool", "c2c", "--quick"]);
        check_counters(&c2c);
        let pairs = c2c["measurements"].as_array().unwrap().iter();
        for m in pairs.filter(|m| m["parameters"].get("summary_of").is_none()) {
            assert_eq!(m["counters"]["helper_threads"], 1, "the ping-pong partner");
        }
    }
}

#[test]
fn csv_and_markdown_formats_print_the_measurements_table() {
    let run = |fmt: &str| {
        let o = cxlchar()
            .args([
                "mem", "latency", "--quick", "--sizes", "4K", "--format", fmt,
            ])
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    };
    let csv = run("csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "id,benchmark,target,unit,n,min,p50,p90,p99,p999,max,mean,stdev,disturbed"
    );
    // Text cells are quoted (docs/safety.md, CSV injection).
    assert!(lines.next().unwrap().starts_with("\"mem.latency/anon/"));
    let md = run("markdown");
    assert!(md.starts_with("| id | benchmark | target |"));
    assert!(md.contains("| mem.latency | anon | ns |"));
}

#[test]
fn csv_is_refused_where_there_is_no_measurements_table() {
    cxlchar()
        .args(["targets", "--format", "csv"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "csv/markdown is for measurements",
        ));
}
