//! Counter evidence in a real run, and the CSV/Markdown formats end to end.

use assert_cmd::Command;
use serde_json::Value;

fn cxlchar() -> Command {
    Command::cargo_bin("cxlchar").unwrap()
}

#[test]
fn every_latency_measurement_carries_counters_or_their_absence() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("p.json");
    cxlchar()
        .args(["mem", "latency", "--quick", "--sizes", "4K,64K", "--out"])
        .arg(&out)
        .assert()
        .success();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ms = doc["measurements"].as_array().unwrap();
    assert!(!ms.is_empty());
    let warned = |code: &str| {
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == code)
    };
    for m in ms {
        let c = &m["counters"];
        let attempts = c["attempts"].as_u64().expect("attempts recorded");
        assert!((1..=3).contains(&attempts), "{c}");
        let unavailable = c["unavailable"].as_object();
        let missing = |k: &str| unavailable.is_some_and(|u| u.contains_key(k));
        for k in ["context_switches", "cpu_migrations", "minor_faults"] {
            assert!(
                c[k].is_u64() || missing(k),
                "{k}: neither counted nor explained"
            );
        }
        for k in ["cycles", "llc_load_misses"] {
            assert!(
                c[k].is_u64() || missing(k) || missing("hardware"),
                "{k}: neither counted nor explained"
            );
        }
        if missing("hardware") {
            assert!(c.get("cycles").is_none(), "no zeros for absent counters");
            assert!(warned("hw_counters"));
        }
        if c["llc_load_misses"].is_u64() {
            assert!(c["per_op"]["llc_load_misses_per_load"].is_number());
        }
        if c["disturbed"] == true {
            assert_eq!(attempts, 3, "retried up to the bound before flagging");
            assert!(warned("disturbed"));
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
        "id,benchmark,target,unit,n,min,p50,p90,p99,p999,max,mean,stdev"
    );
    assert!(lines.next().unwrap().starts_with("mem.latency/anon/"));
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
