//! The run's plan: `--plan` (table, JSON, another machine's sysfs tree), `--budget`, the
//! plan and actual times a measured run records, and core-to-core by pair classes.

mod common;
use bench_core::topology::fixtures::{write_server, Server};
use common::*;

#[test]
fn plan_prints_every_family_and_measures_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let o = cxlchar()
        .args(["all", "--quick", "--plan", "--out"])
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("plan: "), "{text}");
    for family in [
        "mem.latency",
        "mem.bandwidth",
        "pool.c2c",
        "mem.copy-threshold",
    ] {
        assert!(text.contains(family), "{family} missing:\n{text}");
    }
    assert!(text.contains("total: "), "{text}");
    assert!(!out.exists(), "--plan measures nothing and writes nothing");
}

#[test]
fn plan_as_json_gives_each_familys_planned_seconds_and_the_total() {
    let v = json_stdout(&["all", "--quick", "--plan", "--format", "json"]);
    let total = v["total_s"].as_f64().unwrap();
    let families = v["families"].as_array().unwrap();
    assert!(!families.is_empty());
    let sum: f64 = families
        .iter()
        .map(|f| f["planned_s"].as_f64().unwrap())
        .sum();
    assert!(sum > 0.0 && sum <= total + 1e-6, "{sum} vs {total}");
    assert!(families.iter().all(|f| f["points"].as_u64().unwrap() >= 1));
    assert!(families.iter().all(|f| f.get("actual_s").is_none()));
    assert!(v["expect"].as_str().unwrap().contains("GB/s"));
}

#[test]
fn plan_for_another_machine_reads_its_sysfs_tree() {
    let dir = tempfile::tempdir().unwrap();
    write_server(dir.path(), &Server::h200_host()).unwrap();
    let root = dir.path().to_str().unwrap();
    let v = json_stdout(&["all", "--plan", "--sysfs", root, "--format", "json"]);
    assert_eq!(v["machine"]["cpus"], 16);
    let families = v["families"].as_array().unwrap();
    let points = |name: &str| -> u64 {
        families
            .iter()
            .find(|f| f["benchmark"] == name)
            .unwrap_or_else(|| panic!("{name} planned: {families:#?}"))["points"]
            .as_u64()
            .unwrap()
    };
    // Five rungs (1, 2, 4, 8, 16) x 3 methods, and memory placed first.
    assert_eq!(points("mem.copy-threshold"), 1 + 3 * 5);
    // Its GPU, from the tree's PCI bus.
    assert!(points("gpu.bw") > 1);
    let total = v["total_s"].as_f64().unwrap();
    assert!(total > 60.0 && total <= 300.0, "{total}");
    // The table names the tree and what it holds.
    let text = String::from_utf8(
        cxlchar()
            .args(["all", "--quick", "--plan", "--sysfs", root])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(
        text.contains(&format!("plan for {root}: 16 CPUs (16 cores")),
        "{text}"
    );
}

#[test]
fn sysfs_is_for_plans_and_a_tree_without_cpus_is_refused() {
    cxlchar()
        .args(["all", "--sysfs", "/"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--plan"));
    let dir = tempfile::tempdir().unwrap();
    cxlchar()
        .args(["all", "--plan", "--sysfs"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicates::str::contains("sysfs-snapshot.py"));
}

#[test]
fn a_budget_cuts_counts_and_the_plan_says_so() {
    let v = json_stdout(&["all", "--plan", "--budget", "10s", "--format", "json"]);
    let b = &v["budget"];
    assert_eq!(b["budget_s"], 10.0);
    assert!(b["samples_factor"].as_f64().unwrap() < 1.0, "{b}");
    assert!(b["uncut_s"].as_f64().unwrap() > v["total_s"].as_f64().unwrap());
    assert_bad_input(&["all", "--plan", "--budget", "soon"], "invalid duration");
}

#[test]
fn a_measured_run_records_its_plan_and_what_each_family_took() {
    let doc = run_out(&["mem", "latency", "--quick", "--sizes", "4K,64K"]);
    assert_schema_valid(&doc);
    let plan = &doc["plan"];
    let f = &plan["families"][0];
    assert_eq!(f["benchmark"], "mem.latency");
    assert_eq!(f["target"], "anon");
    assert!(f["planned_s"].as_f64().unwrap() > 0.0);
    assert!(f["actual_s"].as_f64().unwrap() > 0.0);
    // Placing memory, the cold lap and the two sizes: each reported done.
    assert!(f["points_done"].as_u64().unwrap() >= 3, "{f}");
    assert!(plan["actual_s"].as_f64().unwrap() >= f["actual_s"].as_f64().unwrap());
}

#[test]
fn core_to_core_is_measured_by_pair_class() {
    let doc = run_out(&["pool", "c2c", "--quick"]);
    assert_schema_valid(&doc);
    let ms = doc["measurements"].as_array().unwrap();
    let classes: Vec<&serde_json::Value> = ms
        .iter()
        .filter(|m| m["id"].as_str().unwrap().contains("/class/"))
        .collect();
    assert!(!classes.is_empty());
    for c in &classes {
        let p = &c["parameters"];
        let n = p["pairs_measured"].as_u64().unwrap();
        assert!((1..=4).contains(&n) && n <= p["pairs_in_class"].as_u64().unwrap());
        // Latencies in ns, the bandwidth's in GB/s.
        let u = if c["unit"] == "GB/s" { "gbs" } else { "ns" };
        let f = |k: &str| p[format!("{k}_{u}")].as_f64().unwrap();
        assert!(f("min") <= f("median") && f("median") <= f("max"), "{p}");
    }
    // Every measurement, a class's summary too, names the instruction it ran.
    assert!(
        ms.iter()
            .all(|m| m["parameters"]["instruction"].is_string()),
        "a pool.c2c measurement without its instruction"
    );
    // Every pair measured names its class.
    assert!(ms
        .iter()
        .filter(|m| m["parameters"].get("cpu_a").is_some())
        .all(|m| m["parameters"]["pair_class"].is_string()));
    let params = doc["params"].as_object().unwrap();
    assert!(params.contains_key("c2c_cas_lat_ns") && params.contains_key("c2c_flag_min_lat_ns"));
    // A one-L3 machine's pairs are all of one class, with its key.
    let topo = bench_core::topology::Topology::system();
    let cpus = bench_core::pin::allowed_cpus();
    let by = bench_core::topology::pairs::classify(&topo, &cpus);
    if by.len() == 1 && by[0].0 == bench_core::topology::pairs::PairClass::SameLlc {
        assert!(
            params.contains_key("c2c_flag_same_llc_lat_ns"),
            "{params:?}"
        );
    }
}

#[test]
fn every_pair_is_one_option_away() {
    let doc = run_out(&["pool", "c2c", "--quick", "--pairs", "all"]);
    let cpus = bench_core::pin::allowed_cpus().len();
    let pairs = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["parameters"]["kind"] == "cas" && m["parameters"].get("cpu_a").is_some())
        .count();
    assert_eq!(pairs, cpus * (cpus - 1) / 2);
    assert_bad_input(&["pool", "c2c", "--pairs", "0"], "at least 1");
}

/// The peak memory `all` plans on a machine, quick or full (bytes).
fn planned_memory(root: &str, quick: bool) -> (u64, Vec<(String, u64)>) {
    let mut args = vec!["all", "--plan", "--sysfs", root, "--format", "json"];
    if quick {
        args.push("--quick");
    }
    let v = json_stdout(&args);
    let families = v["families"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let name = format!(
                "{} on {}",
                f["benchmark"].as_str().unwrap(),
                f["target"].as_str().unwrap()
            );
            (name, f["memory_bytes"].as_u64().unwrap())
        })
        .collect();
    (v["memory_bytes"].as_u64().unwrap(), families)
}

#[test]
fn a_2_vcpu_guest_that_shows_the_hosts_260_mib_l3_plans_under_4_gib_quick_and_6_gib_full() {
    // The Intel guest of the memory campaign: 24 GiB, two vCPUs, sysfs showing the
    // host's 260 MiB L3 (its DRAM working set 4 x 264 MiB, the DRAM check at twice it).
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::guest_2vcpu_intel();
    s.levels[3].size_kib = 260 * 1024;
    write_server(dir.path(), &s).unwrap();
    let root = dir.path().to_str().unwrap();
    const GIB: u64 = 1 << 30;
    for (quick, bound) in [(true, 4 * GIB), (false, 6 * GIB)] {
        let (peak, families) = planned_memory(root, quick);
        eprintln!(
            "260 MiB L3 guest, quick {quick}: peak {:.2} GiB",
            peak as f64 / GIB as f64
        );
        assert!(peak <= bound, "quick {quick}: {peak} bytes: {families:#?}");
        // The peak is a family's, and the DRAM check's working set is in it: at least
        // twice 4 x the caches of one CPU.
        assert_eq!(peak, families.iter().map(|f| f.1).max().unwrap());
        assert!(peak >= 2 * 4 * 262 * (1 << 20), "{peak}");
    }
}
