//! Checks of the emulated lab's `mem scan` output (`ci/lab/run` sets `CXLCHAR_LAB_OUT` and
//! runs these with `--ignored`): guest d's two interleaved CXL devices, and the scans of
//! guest a's far targets inside `all`. They need the lab's guests: ignored by default.
//!
//! Emulation (QEMU TCG) gives plumbing and placement, not hardware timings: these tests
//! assert what was measured and what backs each range, never a speed.

mod common;
use common::*;

use serde_json::Value;
use std::path::PathBuf;

fn out_dir() -> PathBuf {
    PathBuf::from(
        std::env::var("CXLCHAR_LAB_OUT").expect("CXLCHAR_LAB_OUT: run through ci/lab/run"),
    )
}

/// A file guest.sh wrote into the out dir, trimmed; panics with what is missing.
fn out_file(name: &str, what: &str) -> String {
    std::fs::read_to_string(out_dir().join(name))
        .unwrap_or_else(|e| panic!("{name} ({what}): {e}"))
        .trim()
        .to_string()
}

// Guest d: two CXL Type-3 devices (mem0 serial 0xd0, mem1 serial 0xd1) on the two root
// ports of one host bridge, interleaved 2-way into one region and onlined as a CPU-less
// node; `cxlchar mem scan --quick --target node:N --size 64M --range 8M` (scan-d.json).
// TCG timings are not speed: these checks are about the ranges and what backs them.

/// The scan's measurement of `kernel` on guest d's node, with the node's target name.
fn scan_d(kernel: &str) -> (Value, String) {
    let doc = read_json(&out_dir().join("scan-d.json"));
    assert_schema_valid(&doc);
    let node = out_file("scan-node-d", "the node guest d onlined its region into");
    let target = format!("node:{node}");
    let id = format!("mem.scan/{target}/{kernel}");
    let m = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id.as_str())
        .unwrap_or_else(|| panic!("no {id}: skipped: {}", doc["skipped"]))
        .clone();
    (m, target)
}

/// A `u64` sysfs attribute of guest d's snapshot (`0x` hex or decimal).
fn snapshot_u64(rel: &str) -> u64 {
    let t = std::fs::read_to_string(out_dir().join("sysfs-d").join(rel))
        .unwrap_or_else(|e| panic!("sysfs-d/{rel}: {e}"));
    let t = t.trim();
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => t.parse().unwrap(),
    }
}

#[test]
#[ignore = "needs the emulated lab (ci/lab/run)"]
fn scan_guest_names_every_range_by_its_node_blocks_region_and_both_devices() {
    let region = out_file("scan-region-d", "guest d's interleaved region");
    let start = snapshot_u64(&format!("sys/bus/cxl/devices/{region}/resource"));
    let size = snapshot_u64(&format!("sys/bus/cxl/devices/{region}/size"));
    for kernel in ["read", "nt-write"] {
        let (m, target) = scan_d(kernel);
        let node = target.trim_start_matches("node:");
        let s = &m["parameters"]["scan"];
        let ranges = s["ranges"].as_array().unwrap();
        assert_eq!(ranges.len(), 8, "{kernel}: {s}");
        assert!(s["not_applied"].is_null(), "{kernel}: {}", s["not_applied"]);
        for r in ranges {
            let at = format!("{kernel} range {}", r["index"]);
            assert!(
                r["addresses_from"].as_str().unwrap().starts_with("pagemap"),
                "{at}: {r}"
            );
            let p = &r["physical"];
            let (a, b) = (p["start"].as_u64().unwrap(), p["end"].as_u64().unwrap());
            assert!(
                a >= start && b <= start + size,
                "{at}: {a:#x}-{b:#x} outside {region}"
            );
            let nodes: Vec<&String> = r["nodes"].as_object().unwrap().keys().collect();
            assert_eq!(nodes, [node], "{at}: {r}");
            assert!(
                r["memory_blocks"].as_str().unwrap().starts_with("memory"),
                "{at}"
            );
            let backing = r["backing"].as_array().unwrap();
            assert_eq!(backing.len(), 1, "{at}: {backing:?}");
            let b = &backing[0]["backing"];
            assert_eq!(b["kind"], "cxl_region", "{at}: {b}");
            assert_eq!(b["region"], region.as_str(), "{at}: {b}");
            assert_eq!(b["interleave_ways"], 2, "{at}: {b}");
            let devs: Vec<(String, String, u64)> = b["memdevs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    (
                        d["memdev"].as_str().unwrap().to_string(),
                        d["serial"].as_str().unwrap_or("").to_string(),
                        d["position"].as_u64().unwrap(),
                    )
                })
                .collect();
            let mut serials: Vec<&str> = devs.iter().map(|d| d.1.as_str()).collect();
            serials.sort_unstable();
            assert_eq!(serials, ["0xd0", "0xd1"], "{at}: {devs:?}");
            let mut positions: Vec<u64> = devs.iter().map(|d| d.2).collect();
            positions.sort_unstable();
            assert_eq!(positions, [0, 1], "{at}: {devs:?}");
            let links = r["links"].as_object().unwrap();
            assert!(
                links.contains_key("mem0") && links.contains_key("mem1"),
                "{at}: {links:?}"
            );
            let text = r["backed_by"].as_str().unwrap();
            assert!(
                text.contains("2-way") && text.contains("serial 0xd1"),
                "{at}: {text}"
            );
        }
    }
    let doc = read_json(&out_dir().join("scan-d.json"));
    let (_, target) = scan_d("read");
    for k in [
        "cxl_scan_bw_min_gbs",
        "cxl_scan_bw_median_gbs",
        "cxl_scan_slow_ranges",
    ] {
        assert!(
            doc["params"].get(format!("{k}@{target}")).is_some(),
            "{k}@{target} missing: {}",
            doc["params"]
        );
    }
    assert!(
        !doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "far_not_cxl"),
        "the interleaved CXL node was called not CXL"
    );
}

/// The second device's port is narrow where the lab's QEMU can make a CXL root port so
/// (`narrow-port-d`); the scan's ranges name each device's link as sysfs reads it.
#[test]
#[ignore = "needs the emulated lab (ci/lab/run)"]
fn scan_guest_names_each_devices_link_and_the_narrow_port_where_qemu_gave_one() {
    let given = out_file("narrow-port-d", "what ci/lab/run gave the second root port");
    let links = out_file("links-d.txt", "the devices' links as guest d read them");
    let width = |m: &str| -> u32 {
        let l = links
            .lines()
            .find(|l| l.starts_with(&format!("{m} ")))
            .unwrap_or_else(|| panic!("{m} not in links-d.txt: {links}"));
        l.rsplit(" x").next().unwrap().trim().parse().unwrap()
    };
    if given.starts_with("rp1 x-speed=2_5 x-width=1") {
        assert_eq!(width("mem1"), 1, "{links}");
        assert!(width("mem0") > 1, "{links}");
    } else {
        assert!(given.starts_with("not emulated:"), "{given}");
    }
    let (m, _) = scan_d("read");
    let r = &m["parameters"]["scan"]["ranges"][0];
    let l1 = r["links"]["mem1"].as_str().unwrap();
    assert!(
        l1.contains(&format!("x{}", width("mem1"))),
        "{l1} vs {links}"
    );
}

/// `cxlchar targets` on guest d lists both CXL devices' links with their root ports, as
/// `links-d.txt` read them; behind the narrow port (where QEMU gave one) the port caps the
/// device: judged at its capability, not degraded.
#[test]
#[ignore = "needs the emulated lab (ci/lab/run)"]
fn scan_guest_targets_judge_each_devices_link_against_its_port() {
    let given = out_file("narrow-port-d", "what ci/lab/run gave the second root port");
    let links = out_file("links-d.txt", "the devices' links as guest d read them");
    let t = read_json(&out_dir().join("targets-d.json"));
    let l = &t["links"];
    assert!(l["judged"].as_u64().unwrap() >= 2, "{l}");
    assert!(l["pcie_links_degraded"].is_u64(), "{l}");
    let devices = l["devices"].as_array().unwrap();
    for line in links.lines().filter(|x| x.starts_with("mem")) {
        // mem1 0xd1 0000:0e:00.0 2.5 GT/s PCIe x1
        let f: Vec<&str> = line.split_whitespace().collect();
        let (mem, bdf) = (f[0], f[2]);
        let width: u64 = line.rsplit(" x").next().unwrap().trim().parse().unwrap();
        let d = devices
            .iter()
            .find(|d| d["bdf"] == bdf)
            .unwrap_or_else(|| panic!("{mem} ({bdf}) not in targets-d.json's links: {l}"));
        assert_eq!(d["class"], "cxl", "{d}");
        assert_eq!(d["link"]["current_width_lanes"], width, "{d}");
        assert!(
            !d["ports"].as_array().unwrap().is_empty(),
            "{mem}: no root port: {d}"
        );
        if mem == "mem1" && given.starts_with("rp1 x-speed=2_5 x-width=1") {
            assert_eq!(d["ports"][0]["link"]["max_width_lanes"], 1, "{d}");
            assert_eq!(d["capable_width_lanes"], 1, "{d}");
            assert_eq!(d["judged"], true, "{d}");
            assert_eq!(d["degraded"], false, "the port caps {mem}: {d}");
        }
    }
}

/// `cxlchar all` on guest a scanned its far targets (node 1 and the NVDIMM's dax device,
/// neither CXL: said so range by range) and not `anon` (only when asked).
#[test]
#[ignore = "needs the emulated lab (ci/lab/run)"]
fn all_scans_guest_as_far_targets_only_and_names_what_backs_them() {
    let doc = read_json(&out_dir().join("params-a.json"));
    for (t, kind) in [("node:1", "not_cxl"), ("dax:/dev/dax0.0", "nvdimm")] {
        let id = format!("mem.scan/{t}/read");
        let m = doc["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id.as_str())
            .unwrap_or_else(|| panic!("no {id}: skipped: {}", doc["skipped"]));
        for r in m["parameters"]["scan"]["ranges"].as_array().unwrap() {
            let b = &r["backing"][0]["backing"];
            assert_eq!(b["kind"], kind, "{id} range {}: {r}", r["index"]);
        }
    }
    let skipped = doc["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["benchmark"] == "mem.scan" && s["target"] == "anon"),
        "mem.scan on anon in `all`: {skipped:?}"
    );
}
