//! End-to-end tests of the all-to-all commands (seed 001, HINT): `mem alltoall-order`
//! compares the copy orders and names a winner per size; `mem copy-threshold --max-size`
//! bounds the sweep; bad options fail before measuring.

mod common;
use common::*;

#[test]
fn alltoall_order_names_a_winner_per_size_and_keys_each_order() {
    let doc = run_out(&[
        "mem",
        "alltoall-order",
        "--quick",
        "--cpu",
        "0",
        "--max-size",
        "4K",
        "--ref-size",
        "4K",
    ]);
    assert_schema_valid(&doc);
    let params = doc["params"].as_object().unwrap();
    for o in ["row", "column", "hilbert"] {
        let k = format!("alltoall_{o}_p1_gbs");
        assert!(params[&k].as_f64().unwrap() > 0.0, "{k}");
    }
    let ms: Vec<_> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["benchmark"] == "mem.alltoall-order")
        .collect();
    assert_eq!(ms.len(), 3 * 2, "3 orders x sizes 1K and 4K");
    for m in &ms {
        let p = &m["parameters"];
        let w = p["winner"].as_str().unwrap();
        assert!(p["orders_compared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == w));
        let rel = p["of_winner"].as_f64().unwrap();
        assert!(rel > 0.0 && rel <= 1.0, "{rel}");
        // The winner is 1.0 of itself; another order may tie it (at P = 1 the three
        // orders are the same copy, and equal p50s of a coarse timer tie).
        if p["order"] == w {
            assert_eq!(rel, 1.0, "{}", m["id"]);
        }
    }
    assert!(doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["code"] != "size_bound"));
}

#[test]
fn copy_threshold_max_size_bounds_the_sweep_and_names_its_order() {
    let doc = run_out(&[
        "mem",
        "copy-threshold",
        "--quick",
        "--cpu",
        "0",
        "--max-size",
        "4K",
    ]);
    assert_schema_valid(&doc);
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 3 * 2, "3 methods x sizes 1K and 4K");
    for m in ms {
        assert!(m["parameters"]["block_bytes"].as_u64().unwrap() <= 4096);
        assert!(m["parameters"]["order"]
            .as_str()
            .unwrap()
            .starts_with("pairwise-push"));
    }
}

#[test]
fn bad_alltoall_options_are_errors() {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let too_many = (cpus + 1).to_string();
    for (args, needle) in [
        (
            vec!["mem", "alltoall-order", "--threads", too_many.as_str()],
            "threads requested but only",
        ),
        (
            vec!["mem", "alltoall-order", "--max-size", "100"],
            "at least 1K",
        ),
        (vec!["mem", "alltoall-order", "--order", "zigzag"], "zigzag"),
        (
            vec!["mem", "copy-threshold", "--max-size", "512"],
            "at least 1K",
        ),
    ] {
        assert_bad_input(&args, needle);
    }
}

#[test]
fn plot_draws_one_line_per_order() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("p.json");
    cxlchar()
        .args([
            "mem",
            "alltoall-order",
            "--quick",
            "--cpu",
            "0",
            "--max-size",
            "16K",
        ])
        .arg("--out")
        .arg(&file)
        .assert()
        .success();
    let out = d.path().join("plots");
    cxlchar()
        .arg("plot")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let svg = std::fs::read_to_string(out.join("alltoall-order.svg")).unwrap();
    for o in ["row", "column", "hilbert"] {
        // One series per order (1K, 4K, 16K and the 64K reference size), named in the legend.
        assert!(
            svg.contains(&format!("{o} temporal P=1 (anon)")),
            "{o} in the legend"
        );
    }
}
