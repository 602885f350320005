//! `cxlchar mem scan`: bandwidth by address range, each range named by what backs it, on
//! this machine (anon: its DRAM) and planned on a CXL host's sysfs tree. No test asserts a
//! speed; the outlier rule is tested on recorded figures (bench-mem's `scan::outliers`).

mod common;
use bench_core::topology::fixtures::{write_server, Server};
use common::*;
use serde_json::Value;
use std::sync::Mutex;

/// The tests of this file measure one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Whether this process may read page frame numbers from pagemap (CAP_SYS_ADMIN, bit 21
/// of the effective capabilities).
/// Whether this process can name the physical frames of its own touched pages, probed
/// as the scan does: `Err` says why not (no CAP_SYS_ADMIN; or qemu-user, whose guest
/// addresses are not the host's, so pagemap finds nothing there).
fn can_read_frames() -> Result<(), String> {
    let page = bench_core::memory::page_size();
    let probe = vec![1u8; 4 * page];
    let at = probe
        .as_ptr()
        .wrapping_add(page - probe.as_ptr() as usize % page);
    bench_mem::scan::backing::pagemap_runs(at, page).map(|_| ())
}

#[test]
fn a_quick_scan_of_anon_names_every_range_and_gives_the_keys() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let v = json_stdout(&[
        "mem", "scan", "--quick", "--size", "512M", "--range", "128M", "--format", "json",
    ]);
    assert_schema_valid(&v);
    let params = v["params"].as_object().unwrap();
    let info = &v["param_info"];
    for k in ["scan_bw_min_gbs", "scan_bw_median_gbs", "scan_slow_ranges"] {
        assert!(params.contains_key(k), "{k} missing: {params:?}");
        assert!(
            params.contains_key(&format!("{k}@anon")),
            "{k}@anon missing"
        );
        let unit = bench_core::keys::lookup(k).unwrap().unit.symbol();
        assert_eq!(info[k]["unit"], unit, "{k}");
        assert!(!info[k]["method"].as_str().unwrap().is_empty());
    }
    let (min, med) = (
        params["scan_bw_min_gbs"].as_f64().unwrap(),
        params["scan_bw_median_gbs"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && min <= med, "{min} {med}");
    let slow = params["scan_slow_ranges"].as_f64().unwrap();
    assert!(slow.fract() == 0.0 && (0.0..=4.0).contains(&slow), "{slow}");
    let ms: Vec<&Value> = v["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["benchmark"] == "mem.scan")
        .collect();
    let read = ms
        .iter()
        .find(|m| m["id"] == "mem.scan/anon/read")
        .expect("the read measurement");
    // The write kernel runs where the CPU has a non-temporal store (every x86_64 does).
    if cfg!(target_arch = "x86_64") {
        assert!(
            ms.iter().any(|m| m["id"] == "mem.scan/anon/nt-write"),
            "{ms:?}"
        );
        assert!(params.contains_key("scan_nt_write_bw_min_gbs"));
    }
    let frames = can_read_frames();
    for m in &ms {
        assert!(
            m["counters"]["attempts"].as_u64().unwrap() >= 4,
            "{}",
            m["id"]
        );
        assert!(m["placement"].is_object());
        let s = &m["parameters"]["scan"];
        assert_eq!(s["range_bytes"], 128 << 20);
        assert_eq!(s["range_count"], 4);
        assert!(s["rule"].as_str().unwrap().contains("median"));
        assert!(s["not_applied"].is_null(), "{s}");
        let ranges = s["ranges"].as_array().unwrap();
        assert_eq!(ranges.len(), 4);
        assert_eq!(m["distribution"]["n"], 4);
        for (i, r) in ranges.iter().enumerate() {
            assert_eq!(r["index"], i);
            assert_eq!(r["offset_bytes"], i as u64 * (128 << 20));
            assert!(r["gbs"].as_f64().unwrap() > 0.0, "{r}");
            assert!(!r["windows_gbs"].as_array().unwrap().is_empty());
            assert!(r["margin_gbs"].as_f64().unwrap() > 0.0);
            // Every range says where its pages are: node 0 holds all of them here.
            let nodes = r["nodes"].as_object().unwrap();
            assert!(!nodes.is_empty(), "{r}");
            assert!(!r["backed_by"].as_str().unwrap().is_empty());
            let from = r["addresses_from"].as_str().unwrap();
            // qemu-user (ci/arm-check sets QEMU_LD_PREFIX) maps the guest's large regions
            // where the host's pagemap does not follow them: physical addresses are not
            // required there, the scan must still say why it has none.
            let emulated = std::env::var_os("QEMU_LD_PREFIX").is_some();
            if emulated && !from.starts_with("pagemap") {
                println!("SKIPPED physical addresses of range {i}: under qemu-user: {from}");
                assert!(from.starts_with("virtual offsets only"), "{from}");
                assert!(r["physical"].is_null());
            } else if frames.is_ok() {
                assert!(from.starts_with("pagemap"), "{from}");
                let p = &r["physical"];
                assert_eq!(p["bytes"], 128 << 20, "{r}");
                assert!(p["start"].as_u64().unwrap() < p["end"].as_u64().unwrap());
                assert!(r["memory_block_count"].as_u64().unwrap() >= 1);
                assert!(r["memory_blocks"].as_str().unwrap().starts_with("memory"));
                let bytes: u64 = nodes.values().map(|b| b.as_u64().unwrap()).sum();
                assert_eq!(bytes, 128 << 20, "{r}");
                assert_eq!(r["backing"][0]["backing"]["kind"], "not_cxl", "{r}");
            } else {
                let why = frames.as_ref().unwrap_err();
                assert!(from.starts_with("virtual offsets only"), "{from}");
                if why.contains("CAP_SYS_ADMIN") {
                    assert!(from.contains("CAP_SYS_ADMIN"), "{from}");
                }
                assert!(r["physical"].is_null());
            }
        }
    }
    // 128 MiB is below this guest's DRAM working set of two CPUs or not: said either way.
    let below = read["parameters"]["scan"]["below_working_set"]
        .as_bool()
        .unwrap();
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "scan_range_in_cache");
    assert_eq!(below, warned);
}

#[test]
fn bad_ranges_are_bad_input() {
    for (args, says) in [
        (vec!["--range", "3M"], "2 MiB"),
        (
            vec!["--range", "256M", "--size", "128M"],
            "smaller than one --range",
        ),
        (vec!["--range", "2M", "--size", "64G"], "at most 4096"),
    ] {
        let mut a = vec!["mem", "scan", "--quick"];
        a.extend(args);
        cxlchar()
            .args(&a)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

/// The plan of `all` (quick or full) on the CXL host's sysfs tree: mem.scan's families.
fn planned(root: &str, quick: bool) -> Vec<Value> {
    let mut args = vec!["all", "--plan", "--sysfs", root, "--format", "json"];
    if quick {
        args.push("--quick");
    }
    let v = json_stdout(&args);
    v["families"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["benchmark"] == "mem.scan")
        .cloned()
        .collect()
}

#[test]
fn all_scans_the_far_node_within_its_bound_and_the_same_region_quick_or_not() {
    let dir = tempfile::tempdir().unwrap();
    write_server(dir.path(), &Server::cxl_host()).unwrap();
    let root = dir.path().to_str().unwrap();
    let (full, quick) = (planned(root, false), planned(root, true));
    // anon is not far memory: `all` scans node 1 only.
    assert_eq!(full.len(), 1, "{full:#?}");
    assert_eq!(full[0]["target"], "node:1");
    assert_eq!(quick[0]["target"], "node:1");
    // The same region with and without --quick; fewer windows with it.
    assert_eq!(full[0]["memory_bytes"], quick[0]["memory_bytes"]);
    assert_eq!(full[0]["points"], quick[0]["points"]);
    let gib = full[0]["memory_bytes"].as_u64().unwrap() as f64 / (1u64 << 30) as f64;
    eprintln!(
        "cxl host, node 1: {gib:.1} GiB in {} points; planned {} s full, {} s quick",
        full[0]["points"], full[0]["planned_s"], quick[0]["planned_s"]
    );
    assert!(gib >= 8.0, "{gib} GiB");
    // The bound (60 s full, 15 s quick) plus placing the region.
    let (f, q) = (
        full[0]["planned_s"].as_f64().unwrap(),
        quick[0]["planned_s"].as_f64().unwrap(),
    );
    assert!(
        f <= 60.0 + 0.5 * gib && q <= 15.0 + 0.5 * gib && q < f,
        "{f} {q}"
    );
}
