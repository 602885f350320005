//! `cxlchar mem interference`: the plan, and a quick run on anon and thp (the same DRAM:
//! the baseline) that writes the matrix and the keys. Timed figures are only checked to
//! be positive and finite.

mod common;
use common::*;

#[test]
fn the_plan_names_it_with_its_points_and_memory() {
    let v = json_stdout(&[
        "mem",
        "interference",
        "--quick",
        "--target",
        "anon",
        "--target",
        "thp",
        "--plan",
        "--format",
        "json",
    ]);
    let f = &v["families"][0];
    assert_eq!(f["benchmark"], "mem.interference", "{v}");
    assert_eq!(f["target"], "anon+thp");
    if bench_core_cpus_on_two_cores() {
        // Regions, 2 chains, 2 + 2 victim points and 2 x 2 aggressor points alone,
        // 2 x 2 x 2 pairs of a latency and a bandwidth point.
        assert_eq!(f["points"], 27, "{v}");
        assert!(f["memory_bytes"].as_u64().unwrap() > 0);
        assert!(f["planned_s"].as_f64().unwrap() > 0.0);
    }
}

/// Whether this machine's allowed CPUs span two cores (the family's one need).
fn bench_core_cpus_on_two_cores() -> bool {
    let topo = bench_core::topology::Topology::system();
    let cpus = bench_core::pin::allowed_cpus();
    bench_mem::interference::split::split(&topo, &cpus).is_ok()
}

#[test]
fn a_quick_run_on_anon_and_thp_writes_the_matrix_and_the_baseline_keys() {
    let doc = run_out(&[
        "mem",
        "interference",
        "--quick",
        "--target",
        "anon",
        "--target",
        "thp",
    ]);
    assert_schema_valid(&doc);
    if !bench_core_cpus_on_two_cores() {
        let s = doc["skipped"].as_array().unwrap();
        assert!(
            s.iter().any(|s| s["benchmark"] == "mem.interference"
                && s["reason"].as_str().unwrap().contains("two cores")),
            "{s:?}"
        );
        return;
    }
    let m = &doc["interference"];
    assert_eq!(m["victims"], serde_json::json!(["anon", "thp"]));
    assert_eq!(m["mixes"], serde_json::json!(["read", "1r1w"]));
    let cells = m["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * 2 * 2, "every ordered pair and mix");
    for c in cells {
        assert_eq!(c["victim_tier"], "dram");
        assert_eq!(c["aggressor_tier"], "dram");
        for k in [
            "lat_alone_ns",
            "lat_together_ns",
            "lat_ratio",
            "bw_alone_gbs",
            "bw_together_gbs",
            "bw_ratio",
            "aggressor_bw_alone_gbs",
            "aggressor_bw_together_gbs",
            "aggressor_bw_ratio",
        ] {
            let v = c[k].as_f64().unwrap_or_else(|| panic!("{k}: {c}"));
            assert!(v > 0.0 && v.is_finite(), "{k} = {v}");
        }
        // Every id the cell names is a measurement of the run.
        for id in c["from"].as_array().unwrap() {
            assert!(
                doc["measurements"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x["id"] == *id),
                "{id}"
            );
        }
    }
    // One DRAM: the baseline keys only, from anon under anon.
    let p = doc["params"].as_object().unwrap();
    let keys: Vec<&String> = p.keys().filter(|k| k.starts_with("xtier_")).collect();
    for k in [
        "xtier_dram_under_dram_lat_ratio",
        "xtier_dram_under_dram_bw_ratio",
        "xtier_dram_under_dram_lat_ratio@anon+thp",
        "xtier_dram_under_dram_bw_ratio@anon+thp",
    ] {
        let v = p[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} missing: {keys:?}"));
        assert!(v > 0.0 && v.is_finite(), "{k} = {v}");
        assert_eq!(doc["param_info"][k]["unit"], "ratio");
    }
    assert_eq!(keys.len(), 4, "{keys:?}");
    let anon = cells
        .iter()
        .find(|c| c["victim"] == "anon" && c["aggressor"] == "anon" && c["mix"] == "read")
        .unwrap();
    assert_eq!(p["xtier_dram_under_dram_lat_ratio"], anon["lat_ratio"]);
    // No GPU here (or one this version does not measure): the column is skipped, said.
    assert!(doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["benchmark"] == "mem.interference" && s["target"] == "gpu"));
}
