//! End-to-end tests of `cxlchar pool ...`: the two-process rendezvous through a pool file,
//! its timeout and failure paths, the refusals that protect devices and foreign data, and
//! the core-to-core bandwidth by pair class.
//! Real dax / PCI BAR / two-host runs happen in the lab (see the ignored test below).

mod common;
use common::*;

use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Waits (at most 30 s) until the pool header says the pair is formed (state 2 at byte
/// 32), then 200 ms more so that the run is under way.
fn wait_until_paired(pool: &Path) {
    let t0 = Instant::now();
    loop {
        let paired = std::fs::read(pool)
            .ok()
            .is_some_and(|b| b.len() > 40 && b[32] == 2);
        if paired || t0.elapsed() > Duration::from_secs(30) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn leader_and_follower_pair_through_a_pool_file_and_measure() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("file:{}", dir.path().join("pool").display());
    let out = dir.path().join("params.json");
    let follower = cxlchar_process()
        .args([
            "pool",
            "msg",
            "--quick",
            "--role",
            "follower",
            "--pool",
            &pool,
            "--allow-write",
            "--timeout",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    cxlchar()
        .args([
            "pool",
            "msg",
            "--quick",
            "--role",
            "leader",
            "--pool",
            &pool,
            "--allow-write",
            "--timeout",
            "60s",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let f = follower.wait_with_output().unwrap();
    assert!(
        f.status.success(),
        "follower: {}",
        String::from_utf8_lossy(&f.stderr)
    );
    assert!(String::from_utf8_lossy(&f.stdout).contains("served"));
    let doc = read_json(&out);
    for k in ["pool_flag_lat_ns", "pool_msg_lat_ns", "pool_msg_bw_gbs"] {
        assert!(
            doc["params"][k].as_f64().is_some_and(|v| v > 0.0),
            "{k} missing"
        );
    }
}

#[test]
fn forked_follower_runs_both_modes_on_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("params.json");
    cxlchar()
        .args(["pool", "msg", "--quick", "--out"])
        .arg(&out)
        .assert()
        .success();
    let doc = read_json(&out);
    assert!(doc["params"]["pool_msg_lat_ns"].as_f64().unwrap() > 0.0);
    let noncoherent = doc["params"].get("pool_msg_lat_noncoherent_ns").is_some();
    let skipped = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["benchmark"] == "pool.msg/noncoherent");
    assert!(
        noncoherent ^ skipped,
        "non-coherent mode neither measured nor skipped"
    );
}

#[test]
fn follower_without_leader_times_out_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("file:{}", dir.path().join("pool").display());
    cxlchar()
        .args([
            "pool",
            "msg",
            "--role",
            "follower",
            "--pool",
            &pool,
            "--allow-write",
            "--timeout",
            "300ms",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no leader showed up"));
}

#[test]
fn leader_without_follower_times_out_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("file:{}", dir.path().join("pool").display());
    let out = dir.path().join("params.json");
    cxlchar()
        .args([
            "pool",
            "msg",
            "--quick",
            "--role",
            "leader",
            "--pool",
            &pool,
            "--allow-write",
            "--timeout",
            "300ms",
            "--out",
        ])
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("no follower showed up"));
    assert!(!out.exists());
}

#[test]
fn a_follower_dying_mid_run_fails_the_leader_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("file:{}", dir.path().join("pool").display());
    let out = dir.path().join("params.json");
    let mut follower = cxlchar_process()
        .args([
            "pool",
            "msg",
            "--role",
            "follower",
            "--pool",
            &pool,
            "--allow-write",
            "--timeout",
            "60s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A full (not quick) run lasts long enough to kill the follower in the middle.
    let leader = cxlchar_process()
        .args([
            "pool",
            "msg",
            "--role",
            "leader",
            "--pool",
            &pool,
            "--allow-write",
            "--peer-timeout",
            "1s",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the pair is formed (state 2 in the header), then kill the follower.
    wait_until_paired(&dir.path().join("pool"));
    follower.kill().unwrap();
    follower.wait().unwrap();
    let o = leader.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "the leader succeeded without its follower"
    );
    assert!(err.contains("stopped responding"), "{err}");
    assert!(!out.exists(), "a partial params file was written");
}

#[test]
fn a_leader_dying_mid_run_fails_the_follower_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("file:{}", dir.path().join("pool").display());
    let follower = cxlchar_process()
        .args([
            "pool",
            "msg",
            "--role",
            "follower",
            "--pool",
            &pool,
            "--allow-write",
            "--peer-timeout",
            "1s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut leader = cxlchar_process()
        .args([
            "pool",
            "msg",
            "--role",
            "leader",
            "--pool",
            &pool,
            "--allow-write",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_paired(&dir.path().join("pool"));
    leader.kill().unwrap();
    leader.wait().unwrap();
    let o = follower.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "the follower succeeded without its leader"
    );
    assert!(err.contains("leader stopped responding"), "{err}");
}

#[test]
fn bad_role_and_role_without_pool_are_errors() {
    cxlchar()
        .args(["pool", "msg", "--role", "boss", "--pool", "file:/tmp/x"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("leader or follower"));
    cxlchar()
        .args(["pool", "msg", "--role", "leader"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--role needs --pool"));
}

#[test]
fn devices_need_allow_write() {
    cxlchar()
        .args([
            "pool",
            "msg",
            "--role",
            "leader",
            "--pool",
            "dax:/dev/dax0.0",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--allow-write"));
    cxlchar()
        .args([
            "pool",
            "flush",
            "--quick",
            "--uc-resource",
            "/sys/bus/pci/devices/0000:00:04.0/resource2",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--allow-write"));
}

#[test]
fn foreign_data_in_the_pool_is_refused_and_left_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pool");
    std::fs::write(&path, vec![0x42u8; 1 << 20]).unwrap();
    let pool = format!("file:{}", path.display());
    cxlchar()
        .args([
            "pool",
            "msg",
            "--role",
            "leader",
            "--pool",
            &pool,
            "--allow-write",
            "--len",
            "1M",
            "--timeout",
            "1s",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("foreign data").and(predicate::str::contains("--force")));
    assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0x42));
}

#[test]
fn too_small_a_window_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("file:{}", dir.path().join("pool").display());
    cxlchar()
        .args([
            "pool", "msg", "--role", "leader", "--pool", &pool, "--len", "4K",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("too small"));
}

#[test]
fn flush_table_has_every_size_for_each_method_or_a_skip() {
    let out = cxlchar()
        .args(["pool", "flush", "--quick", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ms = doc["measurements"].as_array().unwrap();
    let skipped = doc["skipped"].as_array().unwrap();
    // The architecture's methods: AArch64 cleans by `dc civac` / `dc cvac`.
    let methods: &[&str] = if cfg!(target_arch = "aarch64") {
        &["stores", "civac", "cvac", "ntstore", "uc", "wc"]
    } else {
        &[
            "stores",
            "clflush",
            "clflushopt",
            "clwb",
            "ntstore",
            "uc",
            "wc",
        ]
    };
    for &m in methods {
        let cells = ms.iter().filter(|x| x["parameters"]["method"] == m).count();
        let skip = skipped
            .iter()
            .any(|s| s["benchmark"] == format!("pool.flush/{m}"));
        assert!((cells == 18) ^ skip, "{m}: {cells} cells, skipped: {skip}");
    }
    assert!(doc["params"]["flush_cost_ns"].as_f64().unwrap() > 0.0);
}

/// Runs `pool msg` as `role` on `pool` (with `extra` options), expecting a refusal whose
/// message holds every one of `says`.
fn refused(role: &str, pool: &str, extra: &[&str], says: &[&str]) {
    let out = cxlchar()
        .args([
            "pool",
            "msg",
            "--role",
            role,
            "--pool",
            pool,
            "--timeout",
            "1s",
        ])
        .args(["--peer-timeout", "1s"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{role} on {pool} {extra:?} succeeded"
    );
    for s in says {
        assert!(err.contains(s), "{pool} {extra:?}: no '{s}' in: {err}");
    }
}

/// A file system image: zero at the start (its boot block), a superblock magic further in
/// (as ext4's 0xEF53 at byte 1080), data at the end.
fn image_bytes() -> Vec<u8> {
    let mut b = vec![0u8; 1 << 20];
    b[1080] = 0x53;
    b[1081] = 0xef;
    b[(1 << 20) - 1] = 1;
    b
}

#[test]
fn a_user_s_file_is_never_written_without_allow_write() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("ext4.img");
    let empty = dir.path().join("empty");
    let missing = dir.path().join("missing");
    std::fs::write(&image, image_bytes()).unwrap();
    std::fs::write(&empty, b"").unwrap();
    for role in ["leader", "follower"] {
        for f in [&image, &empty, &missing] {
            // A bare path is a user's file like file:PATH.
            for spec in [format!("file:{}", f.display()), f.display().to_string()] {
                refused(role, &spec, &["--len", "1M"], &["--allow-write"]);
            }
        }
    }
    assert_eq!(std::fs::read(&image).unwrap(), image_bytes());
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
    assert!(!missing.exists(), "a pool file was created without consent");
}

#[test]
fn foreign_data_anywhere_in_a_user_s_file_is_refused_before_it_is_grown() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("ext4.img");
    let tiny = dir.path().join("tiny");
    std::fs::write(&image, image_bytes()).unwrap();
    std::fs::write(&tiny, b"abc").unwrap();
    for role in ["leader", "follower"] {
        for (f, len) in [(&image, "1M"), (&image, "8M"), (&tiny, "1M")] {
            let spec = f.display().to_string();
            let at = if f == &image { "byte 1080" } else { "byte 0" };
            let opts = ["--allow-write", "--len", len];
            refused(role, &spec, &opts, &["foreign data", at, "--force"]);
        }
    }
    assert_eq!(std::fs::read(&image).unwrap(), image_bytes());
    assert_eq!(std::fs::read(&tiny).unwrap(), b"abc");
}

#[test]
fn no_pool_file_is_created_on_a_device_or_in_sysfs() {
    let dev = format!("/dev/cxlchar-test-{}", std::process::id());
    let bar = "/sys/bus/pci/devices/0000:77:00.0/resource1";
    for (spec, says) in [
        (dev.clone(), "will not create"),
        (format!("file:{dev}"), "will not create"),
        (
            "/dev/zero".into(),
            "/dev/zero is a character device, not a regular file",
        ),
        (format!("file:{bar}"), "PCI BAR's sysfs resource file"),
    ] {
        refused("leader", &spec, &["--allow-write", "--len", "1M"], &[says]);
    }
    let created = Path::new(&dev).exists();
    let _ = std::fs::remove_file(&dev);
    assert!(!created, "{dev} was created");
    assert!(!Path::new(bar).exists());
}

#[test]
fn a_bar_is_checked_for_what_it_is_and_for_its_driver() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file is no --uc-resource: refused before anything is written.
    let f = dir.path().join("resource2");
    std::fs::write(&f, image_bytes()).unwrap();
    cxlchar()
        .args(["pool", "flush", "--quick", "--allow-write", "--uc-resource"])
        .arg(&f)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "not the resourceN file of a PCI device",
        ));
    assert_eq!(std::fs::read(&f).unwrap(), image_bytes());
    // A driver-bound device of this machine, if it has one, is refused without --force
    // as a pool and as a --uc-resource.
    let bound = std::fs::read_dir("/sys/bus/pci/devices")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|d| d.join("driver").exists() && d.join("resource0").exists());
    let Some(dev) = bound else { return };
    let bdf = dev.file_name().unwrap().to_string_lossy().to_string();
    for spec in [
        format!("pci:{bdf}/0"),
        format!("pci:{}", dev.join("resource0").display()),
    ] {
        refused(
            "leader",
            &spec,
            &["--allow-write"],
            &["bound to driver", "--force"],
        );
    }
    cxlchar()
        .args(["pool", "flush", "--quick", "--allow-write", "--uc-resource"])
        .arg(dev.join("resource0"))
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("bound to driver").and(predicate::str::contains("--force")),
        );
}

#[test]
fn a_dax_target_must_be_a_device_dax_whatever_the_consent() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("passwd");
    std::fs::write(&f, b"root:x:0:0:root:/root:/bin/sh\n").unwrap();
    for consent in [&["--allow-write"][..], &[]] {
        let out = cxlchar()
            .args(["mem", "latency", "--quick", "--target"])
            .arg(format!("dax:{}", f.display()))
            .args(consent)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains("not a device-dax character device"), "{err}");
        assert!(!err.contains("--allow-write"), "{err}");
    }
    assert_eq!(
        std::fs::read(&f).unwrap(),
        b"root:x:0:0:root:/root:/bin/sh\n"
    );
}

/// `pool flush-bw --quick --out FILE`: a schema-valid file with the no-flush reference, a
/// key per flush method or a skip naming the missing CPUID bit, the headline key from
/// clflushopt (else clflush) at every `--cpu`, and the bytes accounting in the parameters.
#[test]
fn flush_bw_writes_its_keys_or_skips_each_method_with_the_cpuid_bit() {
    let doc = run_out(&["pool", "flush-bw", "--quick"]);
    assert_schema_valid(&doc);
    let params = &doc["params"];
    let skipped = doc["skipped"].as_array().unwrap();
    assert!(params["flush_bw_stores_gbs"].as_f64().unwrap() > 0.0);
    assert_eq!(doc["param_info"]["flush_bw_stores_gbs"]["unit"], "GB/s");
    let mut measured = Vec::new();
    let methods: &[&str] = if cfg!(target_arch = "aarch64") {
        &["civac", "cvac"]
    } else {
        &["clflushopt", "clflush", "clwb"]
    };
    for &m in methods {
        let key = params.get(format!("flush_bw_{m}_gbs"));
        let skip = skipped
            .iter()
            .find(|s| s["benchmark"] == format!("pool.flush-bw/{m}"));
        assert!(key.is_some() ^ skip.is_some(), "{m}: {key:?} {skip:?}");
        if let Some(s) = skip {
            // The missing CPUID bit (x86_64), or the signal the EL0 probe raised (AArch64).
            let r = s["reason"].as_str().unwrap();
            assert!(r.contains("CPUID") || r.contains("EL0"), "{s}");
        } else {
            assert!(key.unwrap().as_f64().unwrap() > 0.0);
            measured.push(m);
        }
    }
    let all: Vec<&Value> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["benchmark"] == "pool.flush-bw")
        .filter(|m| !m["id"].as_str().unwrap().contains("/check/"))
        .collect();
    let cpus = bench_core::pin::allowed_cpus().len() as u64;
    let (ms, lower): (Vec<&Value>, Vec<&Value>) = all
        .into_iter()
        .partition(|m| m["parameters"]["threads"] == cpus);
    assert_eq!(ms.len(), 1 + measured.len(), "quick: one point per column");
    // Below all CPUs, quick's other rung (one CPU): the reference and the best method.
    for m in &lower {
        assert_eq!(m["parameters"]["threads"], 1, "{}", m["id"]);
        assert!(m["parameters"]["rung"].is_string());
    }
    assert!(lower.len() <= 2);
    // Run alone, it checked its own working set: the stores at it and at a larger one.
    let check = doc["dram_check"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["benchmark"] == "pool.flush-bw")
        .expect("a DRAM check of its own");
    assert!(check["keys"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k.as_str().unwrap().starts_with("flush_bw_stores_gbs@")));
    let threads = ms[0]["parameters"]["threads"].as_u64().unwrap();
    for m in &ms {
        let p = &m["parameters"];
        assert_eq!(p["threads"], threads, "quick measures every --cpu only");
        assert_eq!(p["chunk_bytes"], 512);
        assert_eq!(p["cpus"].as_array().unwrap().len() as u64, threads);
        // Each call of a thread writes whole chunks; the figure is the crew's windows.
        assert!(p["chunks_per_call_per_thread"].as_u64().unwrap() >= 1);
        assert!(p["crew"]["windows_used"].as_u64().unwrap() >= 1);
        assert!(
            p["part_bytes_per_thread"].as_u64().unwrap() * threads
                <= p["working_set_bytes"].as_u64().unwrap()
        );
        assert_eq!(m["unit"], "GB/s");
    }
    let best = if measured.contains(&"civac") {
        Some("civac")
    } else if measured.contains(&"clflushopt") {
        Some("clflushopt")
    } else if measured.contains(&"clflush") {
        Some("clflush")
    } else {
        None
    };
    match best {
        Some(b) => {
            let v = params["flush_bw_gbs"].as_f64().unwrap();
            assert_eq!(v, params[format!("flush_bw_{b}_gbs")].as_f64().unwrap());
            assert_eq!(
                v,
                params[format!("flush_bw_t{threads}_gbs")].as_f64().unwrap()
            );
        }
        None => assert!(params.get("flush_bw_gbs").is_none()),
    }
}

/// A `--chunk` that is not whole cache lines (or is zero, or too large) is a usage error:
/// exit 2, the rule said, nothing written.
#[test]
fn flush_bw_refuses_a_bad_chunk() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("p.json");
    for (chunk, says) in [
        ("100", "multiple of 64"),
        ("0", "positive"),
        ("2M", "at most"),
    ] {
        cxlchar()
            .args(["pool", "flush-bw", "--quick", "--chunk", chunk, "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--chunk").and(predicate::str::contains(says)));
        assert!(!out.exists(), "--chunk {chunk} wrote {}", out.display());
    }
}

/// `pool msg-scale` on two CPUs (whatever the machine has): one pair runs, and the pair
/// counts of the paper that need more CPUs are listed as skipped with the reason.
#[test]
fn msg_scale_runs_one_pair_on_two_cpus_and_says_which_pair_counts_cannot_run() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        bench_core::testing::unavailable("two-cpus", "one CPU: no pair of threads can run");
        return;
    }
    let doc = run_out(&["pool", "msg-scale", "--quick", "--cpu", "0,1"]);
    assert_schema_valid(&doc);
    for k in [
        "pool_pairs_lat_p1_ns",
        "pool_pairs_bw_p1_gbs",
        "pool_cell_bw_16k_gbs",
        "pool_cell_bw_128k_gbs",
        "pool_cell_peak_msg_64k_bytes",
        "pool_cell_best_bytes",
    ] {
        assert!(
            doc["params"][k].as_f64().is_some_and(|v| v > 0.0),
            "{k} missing"
        );
    }
    assert!(doc["params"].get("pool_pairs_lat_p2_ns").is_none());
    let skipped = doc["skipped"].as_array().unwrap();
    let p2 = skipped
        .iter()
        .find(|s| s["benchmark"] == "pool.msg-scale/p2")
        .expect("P = 2 listed as skipped");
    assert!(p2["reason"].as_str().unwrap().contains("4 CPUs"), "{p2}");
    let ids: Vec<&str> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"pool.msg-scale/shm/coherent/pairs/p1/bw/64K"),
        "{ids:?}"
    );
    assert!(ids.contains(&"pool.msg-scale/shm/coherent/cells/16K/p1/bw/1M"));
}

#[test]
fn msg_scale_with_one_cpu_is_a_clean_skip() {
    let doc = json_stdout_code(
        &[
            "pool",
            "msg-scale",
            "--quick",
            "--cpu",
            "0",
            "--format",
            "json",
        ],
        3,
    );
    let skipped = doc["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["benchmark"] == "pool.msg-scale"
            && s["reason"].as_str().unwrap().contains("2 CPUs")),
        "{skipped:?}"
    );
    assert!(doc["params"].as_object().is_none_or(|p| p.is_empty()));
}

#[test]
fn msg_scale_refuses_cell_sizes_that_are_not_whole_kib() {
    cxlchar()
        .args(["pool", "msg-scale", "--quick", "--cells", "16K,1000"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("multiples of 1 KiB"));
}

/// `pool c2c --quick --format json`: the cache-to-cache bandwidth of every pair measured,
/// each way, a class summary per class and the key of each class that has one (on a
/// one-L3 machine without SMT, `c2c_bw_same_llc_gbs` alone).
#[test]
fn cache_to_cache_bandwidth_is_measured_each_way_by_pair_class() {
    use bench_core::topology::pairs::{self, PairClass};
    let doc = json_stdout(&["pool", "c2c", "--quick", "--format", "json"]);
    let topo = bench_core::topology::Topology::system();
    let cpus = bench_core::pin::allowed_cpus();
    let ms: Vec<&Value> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["parameters"]["kind"] == "bw")
        .collect();
    let l2 = bench_cxl::c2c::bw::l2_of(&topo, &cpus);
    if l2.is_empty() {
        // Sized to the writer's L2: skipped, with the reason, where sysfs gives none.
        assert!(ms.is_empty());
        let skipped = doc["skipped"].as_array().unwrap();
        assert!(
            skipped.iter().any(|s| s["benchmark"] == "pool.c2c/bw"),
            "{skipped:?}"
        );
        return;
    }
    let directions: Vec<&&Value> = ms
        .iter()
        .filter(|m| m["parameters"]["writer_cpu"].is_u64())
        .collect();
    assert!(!directions.is_empty(), "no direction measured");
    for m in &directions {
        let p = &m["parameters"];
        let (w, r) = (
            p["writer_cpu"].as_u64().unwrap(),
            p["reader_cpu"].as_u64().unwrap(),
        );
        assert_ne!(w, r);
        assert_eq!(m["unit"], "GB/s");
        assert!(m["distribution"]["p50"].as_f64().unwrap() > 0.0);
        assert_eq!(m["distribution"]["n"], p["rounds"], "a sample per round");
        // Half the writer's own L2, as the plan sized the region.
        let want = bench_cxl::c2c::bw::buffer_bytes(l2[&(w as usize)].bytes);
        assert_eq!(p["size_bytes"].as_u64().unwrap() as usize, want);
        assert!(p["instruction"].as_str().unwrap().contains("stores"));
        assert_eq!(m["counters"]["helper_threads"], 1, "the writer");
        // The other way round is measured too.
        let back = format!("pool.c2c/anon/bw/{r}-{w}");
        assert!(
            directions.iter().any(|x| x["id"] == back.as_str()),
            "{back}"
        );
    }
    let params = doc["params"].as_object().unwrap();
    for (class, _) in pairs::classify(&topo, &cpus) {
        let summary = ms
            .iter()
            .find(|m| m["id"] == format!("pool.c2c/anon/bw/class/{}", class.name()).as_str())
            .unwrap_or_else(|| panic!("{} has its summary", class.name()));
        let Some(stem) = bench_cxl::c2c::class_key(class) else {
            continue;
        };
        let key = format!("c2c_bw_{stem}_gbs");
        let v = params[&key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} in {params:?}"));
        assert_eq!(
            v,
            summary["parameters"]["median_gbs"].as_f64().unwrap(),
            "{key}"
        );
        assert_eq!(doc["param_info"][&key]["unit"], "GB/s");
    }
    // This guest's pairs are all of one class: two cores sharing one L3.
    let by = pairs::classify(&topo, &cpus);
    if by.len() == 1 && by[0].0 == PairClass::SameLlc {
        assert!(params.contains_key("c2c_bw_same_llc_gbs"), "{params:?}");
    }
}
