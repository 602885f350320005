//! End-to-end tests of the `cxlchar` binary: good runs produce schema-valid params.json,
//! every bad input fails with one clear error naming the bad value and leaves no file.

mod common;
use common::*;

use predicates::prelude::*;
use std::path::PathBuf;

fn bench_core_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The commit `cxlchar --version` names (`None`: "unknown"), after checking the line's form
/// and, in a git checkout, that it is this checkout's HEAD.
fn built_from() -> Option<String> {
    let out = cxlchar().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let prefix = format!("cxlchar {} (commit ", env!("CARGO_PKG_VERSION"));
    let commit = text
        .trim()
        .strip_prefix(&prefix)
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("--version: {text:?}"))
        .to_string();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    if !repo.join(".git").exists() {
        assert_eq!(commit, "unknown", "built outside a checkout");
        return None;
    }
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(&repo)
        .output()
        .expect("git, in a git checkout");
    let head = String::from_utf8(head.stdout).unwrap();
    let clean = commit.strip_suffix("-dirty").unwrap_or(&commit);
    assert_eq!(clean, head.trim(), "--version names another commit: {text}");
    Some(commit)
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    built_from();
}

#[test]
fn all_quick_writes_a_schema_valid_file_with_mem_latency_and_timer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("params.json");
    let run = cxlchar()
        .args(["all", "--quick", "--out"])
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .clone();
    // On stdout: the run's header and its summary, short and narrow; the file has it all.
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(
        text.contains("\nsummary (") && text.contains("\nlatency "),
        "{text}"
    );
    assert!(text.lines().count() < 40, "{text}");
    // On a pipe every line is whole (tests/terminal.rs: a terminal's width): the timer
    // line ends with its last field, and the summary names the file.
    assert!(
        text.lines()
            .any(|l| l.starts_with("timer: ") && l.contains(", invariant: ")),
        "{text}"
    );
    assert!(
        text.contains(&format!("every figure: {}", out.display())),
        "{text}"
    );
    let doc = read_json(&out);
    assert_schema_valid(&doc);
    // The file names the build that wrote it, as --version does.
    match built_from() {
        Some(commit) => assert_eq!(doc["tool"]["commit"], commit.as_str()),
        None => assert!(doc["tool"].get("commit").is_none(), "{}", doc["tool"]),
    }
    let lat = doc["params"]["mem_lat_ns"]
        .as_f64()
        .expect("mem_lat_ns present");
    assert!(lat > 0.0);
    assert!(doc["params"]["mem_lat_ns@anon"].is_number());
    for k in [
        "l1_bw_gbs",
        "l2_bw_gbs",
        "mem_bw_gbs",
        "mem_write_bw_gbs",
        "nt_write_bw_gbs",
        "copy_bw_gbs",
        "nt_copy_bw_gbs",
        "memset_bw_gbs",
        "mem_bw_1t_gbs",
    ] {
        assert!(
            doc["params"][k].as_f64().is_some_and(|v| v > 0.0),
            "{k} missing"
        );
    }
    assert!(doc["timer"]["freq_hz"].as_f64().unwrap() > 0.0);
    assert!(doc["timer"]["source"].is_string());
    // The NUMA matrix: skipped with its reason on one node, else in the file.
    let nodes = doc["environment"]["topology"]["nodes"]
        .as_array()
        .unwrap()
        .len();
    let matrix_skip = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["benchmark"] == "mem.matrix");
    if nodes < 2 {
        assert_eq!(
            matrix_skip.expect("mem.matrix skipped")["reason"],
            "one NUMA node: no matrix"
        );
        assert!(doc.get("numa_matrix").is_none());
    } else {
        assert!(doc["numa_matrix"]["cells"].is_array(), "{matrix_skip:?}");
    }
    // The prefetch self-check is in the file: several differently built chains at the DRAM
    // point, a verdict, and mem_lat_ns is the figure it reports.
    let checks = doc["prefetch_check"].as_array().expect("prefetch_check");
    let check = checks
        .iter()
        .find(|c| c["target"] == "anon")
        .expect("a check on anon");
    // The default chain and its phased-aligned twin, judged (a quick run leaves out the
    // chain of twice the slot, which informs and never decides).
    let chains = check["chains"].as_array().unwrap();
    let layouts: Vec<&str> = chains
        .iter()
        .map(|c| c["layout"].as_str().unwrap())
        .collect();
    assert_eq!(layouts, ["phased", "phased-aligned"], "{chains:?}");
    assert!(chains.iter().all(|c| c["judged"] == true), "{chains:?}");
    assert!(["agree", "disagree"].contains(&check["verdict"].as_str().unwrap()));
    assert_eq!(check["reported_ns"].as_f64(), Some(lat));
    // The DRAM working set of anon is recorded with its rule, and it touches at least
    // 4 x the effective LLC when the sweep found one.
    let sizing = &doc["dram_sizing"]["anon"];
    let touched = sizing["touched_bytes"].as_u64().expect("dram_sizing.anon");
    assert!(sizing["rule"].is_string());
    if let Some(e) = sizing["effective_llc_bytes"].as_u64() {
        assert!(touched >= 4 * e, "{touched} < 4 x {e}");
    }
    // Every DRAM-chasing family used that size: the atomics' large point touches it
    // (rounded up to whole 64 KiB blocks of lines).
    let atomics = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["benchmark"] == "pool.atomics" && m["parameters"]["op"] == "load")
        .filter(|m| !m["id"].as_str().unwrap().contains("/check/"))
        .max_by_key(|m| m["parameters"]["touched_bytes"].as_u64().unwrap())
        .expect("atomics measured");
    let big = atomics["parameters"]["touched_bytes"].as_u64().unwrap();
    let bounded = atomics["parameters"]["sizing"]
        .as_str()
        .unwrap()
        .contains("bounded by the memory");
    assert!(
        (big >= touched && big - touched < 64 << 10) || (bounded && big < touched),
        "atomics {big} vs {touched}"
    );
    // The DRAM checks: the latency sweep's stands for mem_lat_ns at the recorded size, and
    // every DRAM key of the run is one a check stands for.
    let checks = doc["dram_check"].as_array().expect("dram_check");
    let covered: std::collections::BTreeSet<&str> = checks
        .iter()
        .flat_map(|c| c["keys"].as_array().unwrap().iter())
        .map(|k| k.as_str().unwrap())
        .collect();
    let lat_check = checks
        .iter()
        .find(|c| c["benchmark"] == "mem.latency" && c["target"] == "anon")
        .expect("a latency check on anon");
    assert_eq!(lat_check["reported_bytes"].as_u64(), Some(touched));
    assert!(["agree", "grown", "unconfirmed"].contains(&lat_check["verdict"].as_str().unwrap()));
    for k in [
        "mem_lat_ns",
        "mem_bw_gbs",
        "mem_bw_1t_gbs",
        "copy_bw_gbs",
        "nt_write_bw_gbs",
        "atomic_lat_ns",
        "flush_bw_gbs",
        "loaded_lat_at_max_bw_ns",
        "agents_read_k1_bw_gbs",
    ] {
        if doc["params"].get(k).is_some() {
            assert!(
                covered.contains(format!("{k}@anon").as_str()),
                "{k} stands on no DRAM check"
            );
        }
    }
    // Each check's working set is at least 4 x the caches its CPUs can fill (sysfs), the
    // same rule with and without --quick, unless the memory bound says otherwise.
    let topo = bench_core::topology::Topology::system();
    for c in checks {
        let cpus = bench_core::pin::parse_cpu_list(c["cpus"].as_str().unwrap()).unwrap();
        if let Some(r) = topo.cache_reach(&cpus) {
            let bytes = c["reported_bytes"].as_u64().unwrap() as usize;
            assert!(
                bytes >= 4 * r.total_bytes || c["sizing"].as_str().unwrap().contains("bounded"),
                "{c}: {bytes} < 4 x {}",
                r.total_bytes
            );
        }
    }
    // Every key says how it was derived, from measurements that exist.
    let ids: Vec<&str> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "measurement ids are not unique");
    for (k, info) in doc["param_info"].as_object().unwrap() {
        assert!(doc["params"].get(k).is_some(), "{k} has info but no value");
        for from in info["from"].as_array().unwrap() {
            assert!(
                ids.contains(&from.as_str().unwrap()),
                "{k} cites missing {from}"
            );
        }
    }
    // Every key is in the key registry and written with the registry's unit.
    for (k, info) in doc["param_info"].as_object().unwrap() {
        let d = bench_core::keys::lookup(k).unwrap_or_else(|| {
            panic!("{k} is not in bench_core::keys (bench-core/src/keys/table.rs)")
        });
        assert_eq!(info["unit"].as_str(), Some(d.unit.symbol()), "unit of {k}");
    }
    // The loaded-latency curves: every traffic mix with every quick point, its read share
    // and per-load tail, and a key per mix (on >= 2 CPUs).
    if bench_core_cpus() >= 2 {
        assert!(doc["params"]["loaded_lat_max_bw_gbs"]
            .as_f64()
            .is_some_and(|v| v > 0.0));
        for (mix, pct, key) in [
            ("read", 100, "loaded_lat_p99_at_max_bw_ns"),
            ("3r1w", 80, "loaded_lat_max_bw_3r1w_gbs"),
            ("2r1w", 75, "loaded_lat_max_bw_2r1w_gbs"),
            ("1r1w", 67, "loaded_lat_max_bw_1r1w_gbs"),
            ("nt-write", 0, "loaded_lat_max_bw_nt_write_gbs"),
        ] {
            let pts: Vec<&serde_json::Value> = doc["measurements"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["benchmark"] == "mem.loaded" && m["parameters"]["mix"] == mix)
                .collect();
            assert_eq!(
                pts.len(),
                bench_core::effort::QUICK.mem.loaded_delays.len(),
                "{mix}: loaded-latency points"
            );
            for m in pts {
                assert_eq!(m["parameters"]["read_pct"], pct, "{mix}");
                assert!(
                    m["parameters"]["per_load_p99_ns"].as_f64().is_some(),
                    "{mix}"
                );
            }
            assert!(
                doc["params"][key].as_f64().is_some_and(|v| v > 0.0),
                "{key}"
            );
        }
        // Those curves export as one Mess file per read share (Mess names files by even
        // percentages: 75 -> 76, 67 -> 68).
        let mess = dir.path().join("mess");
        let mut export = cxlchar();
        export.args(["export", "--mess"]).arg(&mess).arg(&out);
        if doc["timer"]["source"] != "tsc" {
            // No TSC (AArch64's cntvct_el0 is not the CPU clock): Mess's cycles need the
            // CPU frequency, and the export says so rather than guessing.
            let mut bare = cxlchar();
            bare.args(["export", "--mess"]).arg(&mess).arg(&out);
            bare.assert()
                .failure()
                .stderr(predicates::str::contains("--cpu-ghz"));
            export.args(["--cpu-ghz", "3.0"]);
        }
        export.assert().success();
        for pct in [100, 80, 76, 68, 0] {
            let f = mess.join("anon").join(format!("bwlat_{pct}.txt"));
            assert!(f.is_file(), "{}", f.display());
        }
    }
    // Families this machine cannot run are skipped with a reason, not silently absent:
    // the GPU family is measured or skipped as a whole.
    let skipped = doc["skipped"].as_array().unwrap();
    let gpu_measured = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["benchmark"].as_str().unwrap().starts_with("gpu."));
    assert!(
        gpu_measured
            || skipped
                .iter()
                .any(|s| s["benchmark"] == "gpu" && !s["reason"].as_str().unwrap().is_empty())
    );
    // Placement is recorded with every memory measurement.
    for m in doc["measurements"].as_array().unwrap() {
        assert!(m["placement"]["pages_checked"].as_u64().unwrap() > 0);
    }
}

#[test]
fn json_format_on_stdout_is_schema_valid() {
    let doc = json_stdout(&[
        "mem", "latency", "--quick", "--sizes", "4K,16K", "--format", "json",
    ]);
    assert_schema_valid(&doc);
    let ids: Vec<&str> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    // The cold-lap reference (within the user's largest size) and the two sizes;
    // cache-sized points are no DRAM point, so neither the self-check nor the full-random
    // point runs.
    assert_eq!(
        ids,
        [
            "mem.latency/anon/cold-lap/16K",
            "mem.latency/anon/tlb-local/4K",
            "mem.latency/anon/tlb-local/16K"
        ]
    );
    let m = &doc["measurements"][1];
    assert_eq!(m["parameters"]["layout"], "phased");
    assert_eq!(m["parameters"]["phases"], 4);
    assert_eq!(m["parameters"]["touched_bytes"], 4096);
    assert_eq!(
        m["parameters"]["span_bytes"], 4096,
        "a phased chain spans what it touches"
    );
}

#[test]
fn aligned_layout_is_available_and_named() {
    let doc = json_stdout(&[
        "mem", "latency", "--quick", "--sizes", "64K", "--layout", "aligned", "--slot", "64",
        "--format", "json",
    ]);
    let m = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "mem.latency/anon/tlb-local/64K")
        .unwrap();
    assert_eq!(m["parameters"]["layout"], "aligned");
    assert_eq!(m["parameters"]["span_bytes"], 65536);
    assert!(m["method"].as_str().unwrap().contains("aligned"));
}

#[test]
fn unknown_target_spec_is_an_error() {
    assert_bad_input(&["all", "--quick", "--target", "ramdisk"], "'ramdisk'");
}

#[test]
fn missing_dax_device_is_an_error() {
    assert_bad_input(
        &[
            "mem",
            "latency",
            "--quick",
            "--allow-write",
            "--target",
            "dax:/dev/dax97.3",
        ],
        "/dev/dax97.3",
    );
}

#[test]
fn bad_read_shares_are_errors_that_say_why() {
    for (bad, needle) in [
        ("101", "read share 101 is outside 0..=100"),
        ("-1", "read share -1 is outside 0..=100"),
        ("", "empty read share"),
        ("12.5", "not a whole percentage"),
        ("100:0:0", "at least 1"),
    ] {
        assert_bad_input(&["mem", "loaded", "--quick", "--read-pct", bad], needle);
    }
}

#[test]
fn node_out_of_range_is_an_error() {
    assert_bad_input(
        &["mem", "latency", "--quick", "--target", "node:977"],
        "node 977 does not exist",
    );
}

#[test]
fn size_below_one_slot_is_an_error() {
    assert_bad_input(
        &["mem", "latency", "--quick", "--sizes", "32"],
        "--sizes 32 is smaller than one slot of the chain (256 bytes of lines)",
    );
    assert_bad_input(
        &["mem", "latency", "--quick", "--min-size", "16"],
        "--min-size 16 is smaller than one slot",
    );
    assert_bad_input(
        &["mem", "latency", "--quick", "--slot", "64"],
        "use --layout aligned",
    );
    assert_bad_input(
        &[
            "mem", "latency", "--quick", "--layout", "aligned", "--slot", "12",
        ],
        "multiple of 8",
    );
}

#[test]
fn cpu_not_allowed_is_an_error() {
    assert_bad_input(
        &["mem", "latency", "--quick", "--cpu", "4000"],
        "CPU 4000 is not in the allowed set",
    );
    assert_bad_input(&["mem", "latency", "--quick", "--cpu", "3-1"], "'3-1'");
    // An absurd size is one error at parse time.
    assert_bad_input(
        &["mem", "latency", "--quick", "--sizes", "1000000G"],
        "larger than any memory a process can map",
    );
    // An absurd list is the same one error, not an allocation failure and a backtrace.
    assert_bad_input(
        &["mem", "latency", "--quick", "--cpu", "0-4294967295"],
        "CPU 4294967295 is above the largest CPU number Linux supports",
    );
}

#[test]
fn dax_without_allow_write_is_an_error() {
    // Use an existing file so that only the missing opt-in is wrong.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pool");
    std::fs::write(&f, [0u8; 4096]).unwrap();
    let spec = format!("file:{}", f.display());
    assert_bad_input(
        &["mem", "latency", "--quick", "--target", &spec],
        "--allow-write",
    );
}

#[test]
fn unwritable_out_is_an_error_before_measuring() {
    let missing: PathBuf = ["/nonexistent-dir-cxlchar", "p.json"].iter().collect();
    cxlchar()
        .args(["mem", "latency", "--quick", "--out"])
        .arg(&missing)
        .assert()
        .failure()
        .stderr(predicate::str::contains("/nonexistent-dir-cxlchar/p.json"));
    assert!(!missing.exists());
}

#[test]
fn failed_run_keeps_an_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    std::fs::write(&out, "old").unwrap();
    cxlchar()
        .args(["mem", "latency", "--quick", "--target", "node:977", "--out"])
        .arg(&out)
        .assert()
        .failure();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
}

#[test]
fn unusable_target_is_skipped_and_the_rest_runs() {
    let pools =
        std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
    if pools.is_some_and(|free| free > 0) {
        bench_core::testing::unavailable(
            "no-1g-hugepages",
            "1 GiB huge pages are reserved here, so the skip path of an unusable target cannot be exercised",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let args = [
        "mem",
        "latency",
        "--quick",
        "--sizes",
        "4K,64K",
        "--target",
        "hugetlb:1G",
        "--target",
        "anon",
        "--out",
    ];
    // A target asked for and skipped: partially measured (4), no file (docs/safety.md).
    cxlchar()
        .args(args)
        .arg(&out)
        .assert()
        .code(4)
        .stderr(predicate::str::contains("--best-effort"));
    assert!(
        !out.exists(),
        "a partial result was written without --best-effort"
    );
    cxlchar()
        .args(args)
        .arg(&out)
        .arg("--best-effort")
        .assert()
        .success();
    let doc = read_json(&out);
    assert_schema_valid(&doc);
    let skipped = doc["skipped"].as_array().unwrap();
    let s = skipped
        .iter()
        .find(|s| s["target"] == "hugetlb:1G")
        .expect("hugetlb:1G skipped");
    assert!(s["reason"].as_str().unwrap().contains("huge pages"), "{s}");
    assert!(doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["target"] == "anon"));
}

#[test]
fn targets_and_env_list_the_machine() {
    cxlchar()
        .arg("targets")
        .assert()
        .success()
        .stdout(predicate::str::contains("anon"))
        .stdout(predicate::str::contains("GPUs"));
    let v = json_stdout(&["targets", "--format", "json"]);
    assert!(!v["topology"]["nodes"].as_array().unwrap().is_empty());
    // GPUs are listed, or their absence is explained.
    assert!(
        !v["gpus"]["devices"].as_array().unwrap().is_empty()
            || !v["gpus"]["skipped"].as_str().unwrap().is_empty()
    );
    // Every PCI link, with the count of degraded ones.
    assert!(v["links"]["devices"].is_array(), "{}", v["links"]);
    let judged = v["links"]["judged"].as_u64().unwrap();
    let degraded = &v["links"]["pcie_links_degraded"];
    assert!(
        if judged > 0 {
            degraded.is_u64()
        } else {
            degraded.is_null()
        },
        "{}",
        v["links"]
    );
    let v = json_stdout(&["env", "--format", "json"]);
    assert!(v["timer"]["freq_hz"].as_f64().unwrap() > 0.0);
}

#[test]
fn help_explains_targets() {
    cxlchar()
        .args(["all", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("node:N").and(predicate::str::contains("--allow-write")));
}

#[test]
fn bad_bandwidth_inputs_are_errors() {
    assert_bad_input(
        &["mem", "bandwidth", "--quick", "--threads", "4096"],
        "4096 threads requested",
    );
    assert_bad_input(
        &[
            "mem",
            "bandwidth",
            "--quick",
            "--threads",
            "1",
            "--sizes",
            "16",
        ],
        "size 16 is below one",
    );
    let has512 = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .contains(" avx512f");
    if !has512 {
        assert_bad_input(
            &["mem", "bandwidth", "--quick", "--isa", "avx512"],
            "does not support avx512",
        );
    }
    // An ISA of the other architecture.
    let absent = if cfg!(target_arch = "aarch64") {
        "avx512"
    } else {
        "neon"
    };
    assert_bad_input(&["mem", "bandwidth", "--quick", "--isa", absent], absent);
}

#[test]
fn bandwidth_records_isa_and_threads() {
    let doc = json_stdout(&[
        "mem",
        "bandwidth",
        "--quick",
        "--kernel",
        "read,nt-copy",
        "--sizes",
        "64K",
        "--threads",
        "1",
        "--format",
        "json",
    ]);
    assert_schema_valid(&doc);
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for m in ms {
        assert!(
            m["parameters"]["isa"].is_string()
                && m["parameters"]["vector_bytes"].as_u64().unwrap() >= 8
        );
        assert_eq!(m["parameters"]["threads"], 1);
        assert_eq!(m["unit"], "GB/s");
    }
}

#[test]
fn verbs_without_a_device_or_the_feature_is_skipped_with_the_reason() {
    // This CI machine has no RDMA device; a build without the verbs feature skips too.
    // Nothing measured: status 3, the report (with the reason) still on stdout.
    let doc = json_stdout_code(&["verbs", "post", "--quick", "--format", "json"], 3);
    assert_schema_valid(&doc);
    let skipped = doc["skipped"].as_array().unwrap();
    let s = skipped
        .iter()
        .find(|s| s["benchmark"] == "verbs")
        .expect("verbs skipped");
    let reason = s["reason"].as_str().unwrap();
    assert!(
        reason.contains("--features verbs") || reason.contains("RDMA"),
        "{reason}"
    );
}

#[test]
fn verbs_bad_input_is_an_error() {
    assert_bad_input(&["verbs", "--device", "rxe0;x"], "invalid RDMA device name");
    assert_bad_input(&["verbs", "--port", "0"], "--port");
    assert_bad_input(
        &["verbs", "--server", "--connect", "h"],
        "cannot be used with",
    );
    assert_bad_input(&["verbs", "--timeout", "0s"], "timeout");
}

/// Without libcuda (this CI) `cxlchar gpu` exits 3 (nothing measured) with the family
/// skipped and the reason naming libcuda; with a GPU it measures. Never a panic.
#[test]
fn gpu_without_a_driver_is_skipped_with_the_reason() {
    let o = cxlchar()
        .args(["gpu", "--quick", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_schema_valid(&doc);
    match doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["benchmark"] == "gpu")
    {
        Some(s) => {
            assert_eq!(o.status.code(), Some(3), "nothing measured must exit 3");
            assert!(doc["measurements"].as_array().unwrap().is_empty());
            let reason = s["reason"].as_str().unwrap();
            assert!(
                reason.contains("libcuda") || reason.contains("CUDA"),
                "{reason}"
            );
        }
        None => {
            assert!(o.status.success());
            assert!(doc["params"]["gpu_h2d_bw_gbs"].is_number());
        }
    }
    cxlchar()
        .args(["gpu", "--quick", "--best-effort", "--verbose"])
        .assert()
        .code(o.status.code().unwrap())
        .stdout(predicate::str::contains("gpu: "));
}

#[test]
fn gpu_bad_input_is_an_error() {
    assert_bad_input(&["gpu", "--max-size", "1K"], "--max-size");
    assert_bad_input(&["gpu", "--streams", "2,0"], "--streams");
    assert_bad_input(&["gpu", "--streams", "65"], "--streams");
    assert_bad_input(&["gpu", "--contention-size", "100"], "--contention-size");
    assert_bad_input(&["gpu", "--device", "x"], "--device");
    assert_bad_input(&["gpu", "--target", "node:999"], "node 999");
}

/// A bad value of a `gpu` option is a command-line error (status 2, docs/safety.md),
/// refused before any driver is loaded, naming the option.
#[test]
fn gpu_bad_values_exit_2() {
    for args in [
        &["gpu", "--streams", "0"][..],
        &["gpu", "--streams", "2,0"],
        &["gpu", "--streams", "65"],
        &["gpu", "--contention-size", "1"],
        &["gpu", "--max-size", "1"],
        &["gpu", "--max-size", "65G"],
    ] {
        let o = cxlchar().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(args[1]), "{args:?} names the option: {err}");
    }
}

#[test]
fn agents_quick_gives_per_agent_and_aggregate_keys_for_each_k() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("p.json");
    let o = cxlchar()
        .args(["mem", "agents", "--quick", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(3) && stderr.contains("os error 38") {
        // A kernel without NUMA support, or qemu-user (no mbind): the private buffers
        // cannot be placed on their CPUs' nodes, so the family is skipped.
        bench_core::testing::unavailable("mbind", &stderr);
        return;
    }
    assert!(o.status.success(), "{stderr}");
    let doc = read_json(&out);
    assert_schema_valid(&doc);
    let params = doc["params"].as_object().unwrap();
    let cpus = bench_core_cpus();
    let mut ks = vec![1];
    if cpus >= 2 {
        ks.push(2);
    }
    for k in ks {
        for d in ["write", "read"] {
            for key in [
                format!("agents_{d}_k{k}_bw_gbs"),
                format!("agents_{d}_k{k}_agg_bw_gbs"),
                format!("agents_{d}_k{k}_bw_gbs@anon"),
            ] {
                assert!(
                    params
                        .get(&key)
                        .and_then(|v| v.as_f64())
                        .is_some_and(|v| v > 0.0),
                    "{key} missing"
                );
            }
        }
    }
    // No more agents than CPUs; every measurement says how it was measured.
    for key in params.keys().filter(|k| k.starts_with("agents_")) {
        let k: usize = key
            .split("_k")
            .nth(1)
            .and_then(|r| r.split('_').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{key}: no k"));
        assert!((1..=cpus).contains(&k), "{key}: {cpus} CPUs");
    }
    // (The bandwidth measurements of the DRAM checks the agents' keys stand on are there
    // too.)
    let agents = doc["measurements"].as_array().unwrap().iter();
    for m in agents.filter(|m| m["benchmark"] == "mem.agents") {
        let p = &m["parameters"];
        assert!(p["size_bytes_per_agent"].as_u64().unwrap() >= 16 << 20);
        assert_eq!(p["stores"], "non-temporal + sfence");
        assert!(p["bytes_counted"]
            .as_str()
            .unwrap()
            .starts_with("transferred"));
        assert_eq!(
            p["cpus"].as_array().unwrap().len() as u64,
            p["agents"].as_u64().unwrap()
        );
    }
    // Spread: measured over two far-memory nodes, or skipped with the reason.
    if !params.keys().any(|k| k.starts_with("agents_spread_")) {
        let skipped = doc["skipped"].as_array().unwrap();
        assert!(
            skipped.iter().any(|s| s["benchmark"] == "mem.agents-spread"
                && s["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("needs two memory targets")),
            "{skipped:?}"
        );
    }
}

#[test]
fn agents_bad_input_is_an_error() {
    assert_bad_input(
        &["mem", "agents", "--quick", "--spread", "anon"],
        "two targets",
    );
    assert_bad_input(
        &["mem", "agents", "--quick", "--spread", "node:0,node:0"],
        "two different targets",
    );
    assert_bad_input(&["mem", "agents", "--quick", "--agents", "0"], "--agents");
    assert_bad_input(&["mem", "agents", "--quick", "--size", "1K"], "--size");
}

#[test]
fn pcie_post_parts_measures_the_host_micro_ops_and_skips_the_bar_parts_with_reasons() {
    let doc = run_out(&["pcie", "post-parts", "--quick"]);
    assert_schema_valid(&doc);
    let p = &doc["params"];
    for k in ["md_write_64b_ns", "post_host_microops_ns"] {
        assert!(p[k].as_f64().is_some_and(|v| v > 0.0), "{k} missing: {p}");
    }
    // The barrier is a difference of p50s: published, or its absence explained.
    let warnings = doc["warnings"].to_string();
    assert!(
        p["store_barrier_ns"].as_f64().is_some_and(|v| v >= 0.0)
            || warnings.contains("store_barrier_ns"),
        "{p}"
    );
    assert!(doc["param_info"]["md_write_64b_ns"].is_object());
    // The BAR parts: not invented, skipped with what to pass.
    for k in ["post_microops_ns", "pio_copy_64b_ns", "mmio_write_8b_ns"] {
        assert!(p[k].is_null(), "{k} without a BAR");
    }
    let reasons: Vec<&str> = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["benchmark"] == "pcie.post-parts")
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("pio_copy_64b_ns")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("post_microops_ns") && r.contains("--bar")),
        "{reasons:?}"
    );
}

/// Runs `cxlchar ARGS --out FILE` and expects bad input: exit 2 (docs/safety.md), stderr
/// containing `needle`, and nothing written.
fn assert_exit_2(args: &[&str], needle: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let o = cxlchar()
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: no {needle:?} in {err}");
    assert!(!out.exists(), "{args:?} left an output file");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "{args:?}: a temp file"
    );
    err
}

/// A bad target, a missing or mistyped option, a bad value: bad input, exit 2, whether
/// the target is refused by its grammar or by the machine, and under `--plan` too.
#[test]
fn bad_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pool");
    std::fs::write(&f, [0u8; 4096]).unwrap();
    let file = format!("file:{}", f.display());
    for (args, needle) in [
        (
            &["mem", "latency", "--quick", "--target", "nod:1"][..],
            "unknown target",
        ),
        (
            &["mem", "latency", "--quick", "--target", "node:977"],
            "node 977 does not exist",
        ),
        (
            &[
                "mem", "latency", "--quick", "--plan", "--target", "node:977",
            ],
            "node 977",
        ),
        (
            &["all", "--quick", "--target", "node:977"],
            "node 977 does not exist",
        ),
        (
            &["mem", "latency", "--quick", "--target", &file],
            "--allow-write",
        ),
        (
            &[
                "mem",
                "latency",
                "--quick",
                "--allow-write",
                "--target",
                "dax:/dev/dax97.3",
            ],
            "/dev/dax97.3",
        ),
        (&["mem", "latency", "--quick", "--cpu", "4000"], "CPU 4000"),
        (&["pcie", "mmio", "--quick"], "--bar"),
        (
            &[
                "mem",
                "latency",
                "--quick",
                "--sysfs",
                "/nonexistent",
                "--plan",
            ],
            "--sysfs",
        ),
    ] {
        assert_exit_2(args, needle);
    }
}

/// A mistyped long option is answered with the one meant, where clap's own matching
/// finds none (`--ouput` for `--out`).
#[test]
fn a_mistyped_option_gets_did_you_mean() {
    let err = assert_exit_2(&["mem", "latency", "--ouput", "x.json"], "'--ouput'");
    assert!(err.contains("a similar argument exists: '--out'"), "{err}");
    let err = assert_exit_2(&["mem", "bandwidth", "--quikc"], "'--quikc'");
    assert!(err.contains("'--quick'"), "{err}");
    // Nothing near: no suggestion.
    let err = assert_exit_2(&["mem", "latency", "--xyzzyplugh"], "'--xyzzyplugh'");
    assert!(!err.contains("similar"), "{err}");
}

/// A duration without a unit is answered in the forms --help uses (`10s`), never
/// humantime's own (`10sec`).
#[test]
fn a_duration_without_a_unit_suggests_the_forms_of_the_help() {
    let err = assert_exit_2(&["mem", "latency", "--quick", "--budget", "10"], "--budget");
    assert!(err.contains("10s?") && err.contains("30s"), "{err}");
    assert!(!err.contains("10sec"), "{err}");
}

/// A thread, agent or pair count the run's CPUs cannot give (none, or more than fit) is
/// bad input in every family that takes one: exit 2 and one message naming the count,
/// the CPUs the run has and what would fit; never cut to what fits and measured.
#[test]
fn counts_the_cpus_cannot_give_exit_2_in_every_family() {
    let cpus = bench_core::pin::allowed_cpus().len();
    let pairs = cpus * (cpus - 1) / 2;
    let fit = |n: usize| match n {
        0 => "none fits".to_string(),
        1 => "only 1 fits".to_string(),
        n => format!("only 1 to {n} fit"),
    };
    let has = match cpus {
        1 => "the run has one CPU".to_string(),
        n => format!("the run has {n} CPUs"),
    };
    let make = match cpus {
        1 => "1 CPU makes 0 pairs".to_string(),
        n => format!("{n} CPUs make {pairs} pair"),
    };
    for (cmd, option, what) in [
        (&["mem", "agents"][..], "--agents", "agents"),
        (&["mem", "bandwidth"], "--threads", "threads"),
        (&["mem", "copy-threshold"], "--threads", "threads"),
        (&["mem", "alltoall-order"], "--threads", "threads"),
        (&["pool", "flush-bw"], "--threads", "threads"),
    ] {
        for n in ["0", "99999"] {
            let mut args = cmd.to_vec();
            args.extend(["--quick", option, n]);
            let err = assert_exit_2(&args, &format!("{option} {n}: {n} {what} requested"));
            assert!(
                err.contains(&fit(cpus)) && err.contains(&has),
                "{args:?}: {err}"
            );
        }
    }
    for n in ["0", "99999"] {
        let args = ["pool", "c2c", "--quick", "--pairs", n];
        let err = assert_exit_2(
            &args,
            &format!("--pairs {n}: {n} pairs per class requested"),
        );
        assert!(
            err.contains(&fit(pairs)) && err.contains(&make),
            "{args:?}: {err}"
        );
    }
}
