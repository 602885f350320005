//! The GPU family against stand-in driver libraries, a `libcuda.so` built here with the C
//! compiler (no CUDA needed):
//!
//! * broken ones (symbols missing, an old driver, `cuInit` failing): `cxlchar gpu` never
//!   panics, it exits 0 with the family skipped and the reason;
//! * `tests/data/fake_cuda.c`, a fake driver with "device memory" in host memory: the
//!   whole path (discovery, registration, sweeps, contention on streams and on several
//!   GPUs, skips for sizes above free memory, RAII, result shaping, runner) runs, and the
//!   fake reports any resource left unreleased. Its timings are memcpy's, not a GPU's:
//!   the tests check plumbing only, never a speed. With simulated copy engines on a
//!   virtual clock (`FAKE_CUDA_ENGINES=serial|shared`) the arithmetic of the gated
//!   contention figures is checked against the two behaviours a device can have.
//!
//! Skipped (with a note) where no C compiler is found.

mod common;
use common::*;

use serde_json::Value;
use std::path::Path;

/// Builds `dir/libcuda.so` from C source with `TARGET_CC` (the cross compiler of the
/// architecture under test, e.g. `aarch64-linux-gnu-gcc` when these tests run under
/// qemu-aarch64), else `CC`, else `cc`. A C compiler is always there where these tests
/// build (rustc links through `cc` on Linux), so a missing one fails the test rather than
/// skipping it.
fn build_stub(dir: &Path, source: &str) {
    let c = dir.join("stub.c");
    std::fs::write(&c, source).unwrap();
    let cc = std::env::var("TARGET_CC")
        .or_else(|_| std::env::var("CC"))
        .unwrap_or_else(|_| "cc".into());
    let s = std::process::Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join("libcuda.so"))
        .arg(&c)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e} (install gcc)"));
    assert!(s.success(), "{cc} failed on the stub");
    std::fs::copy(dir.join("libcuda.so"), dir.join("libcuda.so.1")).unwrap();
}

/// A stub defining every symbol bench-gpu calls: each returns `fail`, except the
/// version query (reports `version`) and the error-string queries.
fn full_stub(version: i32, fail: i32) -> String {
    let mut s = String::from(
        "#include <stddef.h>\n\
         int cuGetErrorName(int e, const char **p) { *p = \"CUDA_ERROR_STUB\"; return 0; }\n\
         int cuGetErrorString(int e, const char **p) { *p = \"stub driver\"; return 0; }\n",
    );
    s.push_str(&format!(
        "int cuDriverGetVersion(int *v) {{ *v = {version}; return 0; }}\n"
    ));
    for sym in bench_gpu::cuda::SYMBOLS {
        if !matches!(
            *sym,
            "cuGetErrorName" | "cuGetErrorString" | "cuDriverGetVersion"
        ) {
            s.push_str(&format!("int {sym}() {{ return {fail}; }}\n"));
        }
    }
    s
}

fn fake_driver(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fake_cuda.c");
    build_stub(dir, &std::fs::read_to_string(src).unwrap())
}

/// Runs `cxlchar gpu ARGS --format json` on the library in `lib_dir` with `devices` fake
/// GPUs and `free_mb` of free device memory; returns the document and stderr.
fn run_fake(lib_dir: &Path, devices: u32, free_mb: u32, args: &[&str]) -> (Value, String) {
    run_fake_with(lib_dir, devices, free_mb, &[], args)
}

/// [`run_fake`] with more of the fake's environment (`FAKE_CUDA_ENGINES`, `FAKE_CUDA_GBS`).
fn run_fake_with(
    lib_dir: &Path,
    devices: u32,
    free_mb: u32,
    env: &[(&str, &str)],
    args: &[&str],
) -> (Value, String) {
    let out = cxlchar()
        .arg("gpu")
        .args(args)
        .args(["--format", "json"])
        .env("LD_LIBRARY_PATH", lib_dir)
        .env("FAKE_CUDA_DEVICES", devices.to_string())
        .env("FAKE_CUDA_FREE_MB", free_mb.to_string())
        .envs(env.iter().copied())
        .assert()
        .success()
        .get_output()
        .clone();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = jsonschema::validator_for(&schema()).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
    (doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn fake_driver_runs_the_whole_family_and_releases_everything() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    let (doc, stderr) = run_fake(
        d.path(),
        2,
        1024,
        &[
            "--quick",
            "--max-size",
            "1M",
            "--streams",
            "1,2",
            "--contention-size",
            "64K",
            "--target",
            "anon",
        ],
    );
    assert!(!stderr.contains("leaked"), "{stderr}");
    let ids: Vec<&str> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    for want in [
        "gpu.bw/gpu:0/pinned/h2d/1M/events",
        "gpu.bw/gpu:0/pinned/d2h/1M/host",
        "gpu.bw/gpu:0/pageable/h2d/4K/events",
        "gpu.bw/gpu:1/pinned/d2h/1M/events",
        "gpu.lat/gpu:0/pinned/h2d/8B",
        "gpu.pool/anon/gpu:0/h2d/1M/events",
        "gpu.pool/anon/gpu:0/contention/d2h/k2/per_transfer",
        "gpu.pool/anon/gpu:0/contention/h2d/k2/share_min",
        "gpu.pool/anon/gpu:0/contention/h2d/gpus2/aggregate",
    ] {
        assert!(ids.contains(&want), "{want} missing from {ids:#?}");
    }
    let p = &doc["params"];
    for k in [
        "gpu_h2d_bw_gbs",
        "gpu_d2h_bw_gbs",
        "gpu_h2d_bw_gbs@gpu:1",
        "gpu_copy_lat_ns",
        "gpu_reg_h2d_bw_gbs",
        "gpu_reg_d2h_bw_gbs@anon",
        "gpu_reg_h2d_k2_bw_gbs",
        "gpu_reg_d2h_k2_agg_bw_gbs",
        "gpu_reg_h2d_share_min_ratio",
    ] {
        assert!(p[k].as_f64().is_some_and(|v| v > 0.0), "{k}: {}", p[k]);
    }
    assert!(
        p.get("gpu_pool_h2d_bw_gbs").is_none(),
        "anon is not far memory"
    );
    for (k, info) in doc["param_info"].as_object().unwrap() {
        for from in info["from"].as_array().unwrap() {
            assert!(ids.contains(&from.as_str().unwrap()), "{k} cites {from}");
        }
    }
    for m in doc["measurements"].as_array().unwrap() {
        assert!(
            m["placement"]["pages_checked"].as_u64().unwrap() > 0,
            "{}",
            m["id"]
        );
        assert!(m["method"].as_str().unwrap().contains("timed") || m["unit"] == "ns");
        assert!(m["parameters"]["gpu"]
            .as_str()
            .unwrap()
            .starts_with("Fake GPU"));
        // Counter evidence on every GPU measurement (software counters work wherever
        // perf_event_open does; hardware ones say why not).
        let c = &m["counters"];
        assert!(c.is_object(), "{} has no counters", m["id"]);
        assert!(c["attempts"].as_u64().unwrap() >= 1, "{c}");
        if let Some(why) = c["unavailable"]["minor_faults"].as_str() {
            // qemu-user and some containers have no perf_event_open: said, not counted.
            bench_core::testing::unavailable("counters", why);
            continue;
        }
        assert!(
            c["context_switches"].is_u64() && c["minor_faults"].is_u64(),
            "{c}"
        );
    }
    let m = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "gpu.pool/anon/gpu:0/h2d/1M/events")
        .unwrap();
    assert_eq!(m["parameters"]["pci"], "0000:3b:00.0");
    assert_eq!(m["parameters"]["copy_engines"], 2);
    assert_eq!(m["parameters"]["timing"], "events");
}

/// The fake's copy engines on a virtual clock, 20 GB/s each way: `serial` serves k copies of
/// one direction one at a time, as the H200 host's did (a plain loop there: 55 GB/s in all
/// at k = 2, 4, 8, 27.4 / 13.8 / 6.9 GB/s a copy), `shared` splits itself evenly. The gated
/// figures must tell them apart and never give a copy served in turn the whole engine.
#[test]
fn gated_contention_tells_a_device_that_serves_in_turn_from_one_that_shares() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    let args = [
        "--quick",
        "--max-size",
        "1M",
        "--streams",
        "1,2,4,8",
        "--contention-size",
        "1M",
        "--target",
        "anon",
    ];
    for engines in ["serial", "shared"] {
        let env = [("FAKE_CUDA_ENGINES", engines), ("FAKE_CUDA_GBS", "20")];
        let (doc, stderr) = run_fake_with(d.path(), 1, 1024, &env, &args);
        assert!(!stderr.contains("leaked"), "{stderr}");
        let p = |k: &str| {
            doc["params"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("{engines}: {k} missing"))
        };
        let near = |v: f64, want: f64| (v - want).abs() <= 0.01 * want;
        // One copy at a time, and the aggregate of k: the engine's 20 GB/s either way.
        assert!(near(p("gpu_reg_h2d_bw_gbs"), 20.0), "{engines}");
        let agg = p("gpu_reg_h2d_k8_agg_bw_gbs");
        assert!(near(agg, 20.0), "{engines}: aggregate {agg}");
        let per = p("gpu_reg_h2d_k8_bw_gbs");
        let share = p("gpu_reg_h2d_share_min_ratio");
        let m = doc["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == "gpu.pool/anon/gpu:0/contention/h2d/k8/first_end_ratio")
            .unwrap();
        let in_turn_warned = doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "gpu_in_turn");
        if engines == "serial" {
            // The i-th copy perceives 20 / i GB/s: p50 of 20/1 .. 20/8 lies between 20/5
            // and 20/4, never the engine's 20.
            assert!(
                (0.99 * 20.0 / 5.0..=1.01 * 20.0 / 4.0).contains(&per),
                "{per}"
            );
            let h8: f64 = (1..=8).map(|i| 1.0 / f64::from(i)).sum();
            assert!(near(share, 1.0 / h8), "{share}");
            assert!(
                near(m["distribution"]["p50"].as_f64().unwrap(), 1.0 / 8.0),
                "{m}"
            );
            assert_eq!(m["parameters"]["sharing"], "in turn");
            assert_eq!(
                m["parameters"]["completion_order"],
                serde_json::json!([0, 1, 2, 3, 4, 5, 6, 7])
            );
            assert!(in_turn_warned, "{}", doc["warnings"]);
        } else {
            assert!(near(per, 20.0 / 8.0), "{per}");
            assert!(near(share, 1.0), "{share}");
            assert!(near(m["distribution"]["p50"].as_f64().unwrap(), 1.0), "{m}");
            assert_eq!(m["parameters"]["sharing"], "interleaved");
            assert!(!in_turn_warned, "{}", doc["warnings"]);
        }
        // One copy each way at once: each direction has its own engine.
        assert!(near(p("gpu_reg_mixed_h2d_k2_bw_gbs"), 20.0), "{engines}");
        assert!(near(p("gpu_reg_mixed_d2h_k2_bw_gbs"), 20.0), "{engines}");
        assert!(near(p("gpu_reg_mixed_k2_agg_bw_gbs"), 40.0), "{engines}");
        // Four each way: each engine serves its four as it serves four of one direction.
        let mixed8 = p("gpu_reg_mixed_h2d_k8_bw_gbs");
        let one4 = p("gpu_reg_h2d_k4_bw_gbs");
        assert!(
            near(mixed8, one4),
            "{engines}: mixed k8 h2d {mixed8} vs h2d k4 {one4}"
        );
    }
}

/// CPU agents beside the GPU on one target: each side alone and together, with the
/// ratios. The fake's virtual-clock engines take no memory bandwidth from the CPUs, so
/// the GPU's figure beside them is its figure alone; its copies in `sync` mode are host
/// memcpys, which really share this machine's memory with the agents.
#[test]
fn cpu_agents_beside_the_gpu_are_measured_alone_and_together() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    let args = [
        "--quick",
        "--max-size",
        "1M",
        "--streams",
        "1",
        "--contention-size",
        "1M",
        "--cpu",
        "0,1",
        "--target",
        "anon",
    ];
    for engines in ["serial", "sync"] {
        let env = [("FAKE_CUDA_ENGINES", engines), ("FAKE_CUDA_GBS", "20")];
        let (doc, stderr) = run_fake_with(d.path(), 1, 1024, &env, &args);
        assert!(!stderr.contains("leaked"), "{stderr}");
        let p = |k: &str| {
            doc["params"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("{engines}: {k} missing: {}", doc["skipped"]))
        };
        for dir in ["h2d", "d2h"] {
            let gpu = p(&format!("gpu_reg_{dir}_beside_cpu_bw_gbs"));
            let gpu_ratio = p(&format!("gpu_reg_{dir}_beside_cpu_ratio"));
            let cpu = p(&format!("gpu_reg_cpu_beside_{dir}_bw_gbs"));
            let cpu_ratio = p(&format!("gpu_reg_cpu_beside_{dir}_ratio"));
            assert!(gpu > 0.0 && cpu > 0.0, "{engines} {dir}: {gpu} {cpu}");
            assert!(cpu_ratio > 0.0 && gpu_ratio > 0.0, "{engines} {dir}");
            if engines == "serial" {
                assert!((gpu / 20.0 - 1.0).abs() < 0.01, "{dir}: {gpu}");
                assert!((gpu_ratio - 1.0).abs() < 0.01, "{dir}: {gpu_ratio}");
            }
            for series in ["gpu_alone", "gpu_beside_cpu", "cpu_alone", "cpu_beside_gpu"] {
                let id = format!("gpu.pool/anon/gpu:0/with-cpu/{dir}/{series}");
                let m = doc["measurements"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["id"] == id.as_str())
                    .unwrap_or_else(|| panic!("{engines}: no {id}"));
                assert_eq!(m["parameters"]["agents"], 1, "{m}");
                assert_eq!(m["parameters"]["copy_bytes"], 1 << 20, "{m}");
            }
        }
    }
    // One CPU: nothing to stream beside the GPU, said so.
    let one = [
        "--quick",
        "--max-size",
        "1M",
        "--streams",
        "1",
        "--cpu",
        "0",
        "--target",
        "anon",
    ];
    let (doc, _) = run_fake(d.path(), 1, 1024, &one);
    assert!(doc["params"]["gpu_reg_h2d_beside_cpu_bw_gbs"].is_null());
    assert!(
        doc["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["reason"].as_str().unwrap().contains("needs 2 CPUs")),
        "{}",
        doc["skipped"]
    );
}

/// `--parts` runs only the parts named: a comparison against one reference runs nothing
/// else (ci/compare-gpu.sh).
#[test]
fn parts_run_only_what_is_named() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    let base = [
        "--quick",
        "--max-size",
        "1M",
        "--streams",
        "1,2",
        "--contention-size",
        "1M",
        "--cpu",
        "0,1",
        "--target",
        "anon",
    ];
    let ids = |doc: &Value| -> Vec<String> {
        doc["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    for (parts, has, lacks) in [
        ("host", "gpu.bw/", "gpu.pool/"),
        ("contention", "/contention/", "/with-cpu/"),
        ("with-cpu", "/with-cpu/", "/contention/"),
        ("sweep", "gpu.pool/anon/gpu:0/h2d/1M/events", "gpu.bw/"),
    ] {
        let mut args = base.to_vec();
        args.extend(["--parts", parts]);
        let (doc, stderr) = run_fake(d.path(), 1, 1024, &args);
        assert!(!stderr.contains("leaked"), "{stderr}");
        let ids = ids(&doc);
        assert!(ids.iter().any(|i| i.contains(has)), "{parts}: {ids:?}");
        assert!(!ids.iter().any(|i| i.contains(lacks)), "{parts}: {ids:?}");
    }
    let (doc, _) = run_fake(
        d.path(),
        1,
        1024,
        &[&base[..], &["--parts", "host,with-cpu"]].concat(),
    );
    let ids = ids(&doc);
    assert!(
        ids.iter().any(|i| i.starts_with("gpu.bw/"))
            && ids.iter().any(|i| i.contains("/with-cpu/"))
    );
    assert!(!ids.iter().any(|i| i.contains("/contention/")), "{ids:?}");
    cxlchar()
        .args(["gpu", "--parts", "nothing"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("possible values"));
}

#[test]
fn fake_driver_with_little_memory_skips_what_does_not_fit() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    let (doc, stderr) = run_fake(
        d.path(),
        1,
        1,
        &[
            "--quick",
            "--max-size",
            "4M",
            "--streams",
            "1,8",
            "--contention-size",
            "256K",
            "--target",
            "anon",
        ],
    );
    assert!(!stderr.contains("leaked"), "{stderr}");
    let skipped = doc["skipped"].as_array().unwrap();
    let reasons: Vec<&str> = skipped
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("copies of 4M") && r.contains("device memory free")),
        "{reasons:#?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("8 concurrent copies of 256K")),
        "{reasons:#?}"
    );
    // What fits is measured.
    assert!(doc["params"]["gpu_h2d_bw_gbs"].is_number());
    assert!(doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["id"] == "gpu.pool/anon/gpu:0/contention/h2d/k1/per_transfer"));
}

#[test]
fn fake_driver_device_out_of_range_is_an_error_and_targets_list_gpus() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    cxlchar()
        .args(["gpu", "--device", "2"])
        .env("LD_LIBRARY_PATH", d.path())
        .env("FAKE_CUDA_DEVICES", "2")
        .assert()
        .failure()
        .stderr(predicates::str::contains("--device 2 does not exist"));
    let out = cxlchar()
        .arg("targets")
        .env("LD_LIBRARY_PATH", d.path())
        .env("FAKE_CUDA_DEVICES", "2")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let t = String::from_utf8(out).unwrap();
    assert!(t.contains("GPUs (CUDA driver 12.8):"), "{t}");
    // The GPU table: gpu, name, memory, cc, copy engines, pci, link, node.
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        t.lines()
            .any(|l| words(l).starts_with("gpu:1 Fake GPU 1 1 GiB 9.0 2 0000:3c:00.0")),
        "{t}"
    );
}

fn gpu_skip_reason(lib_dir: &Path) -> String {
    let out = cxlchar()
        .args(["gpu", "--quick", "--format", "json", "--max-size", "64K"])
        .env("LD_LIBRARY_PATH", lib_dir)
        .assert()
        .code(3) // nothing measured (docs/safety.md); the report is still printed
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert!(doc["measurements"].as_array().unwrap().is_empty());
    doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["benchmark"] == "gpu")
        .expect("gpu skipped")["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_library_without_the_symbols_is_a_skip_not_a_panic() {
    let d = tempfile::tempdir().unwrap();
    build_stub(d.path(), "int cuInit(unsigned f) { return 0; }\n");
    let r = gpu_skip_reason(d.path());
    assert!(r.contains("lacks cuGetErrorName"), "{r}");
}

#[test]
fn an_old_driver_is_a_skip_naming_the_versions() {
    let d = tempfile::tempdir().unwrap();
    build_stub(d.path(), &full_stub(10020, 0));
    let r = gpu_skip_reason(d.path());
    assert!(
        r.contains("too old") && r.contains("10.2") && r.contains("11.0"),
        "{r}"
    );
}

#[test]
fn a_failing_cuinit_is_a_skip_with_the_drivers_words() {
    let d = tempfile::tempdir().unwrap();
    build_stub(d.path(), &full_stub(12080, 100));
    let r = gpu_skip_reason(d.path());
    assert!(
        r.contains("cuInit failed") && r.contains("stub driver"),
        "{r}"
    );
    // The same library in `cxlchar targets`: no GPU, with the reason.
    let out = cxlchar()
        .arg("targets")
        .env("LD_LIBRARY_PATH", d.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let t = String::from_utf8(out).unwrap();
    assert!(
        t.contains("GPUs: none (no GPU: the CUDA driver did not initialize"),
        "{t}"
    );
}

/// `mem interference` with the fake driver: the GPU's column (h2d, d2h) with its cells and
/// keys, the fake marked in every GPU measurement (plumbing only, never a speed); without
/// the driver the column is skipped with the loader's reason.
#[test]
fn interference_has_the_gpu_column_through_the_fake_driver() {
    let d = tempfile::tempdir().unwrap();
    fake_driver(d.path());
    let run = |lib: Option<&Path>| {
        let mut c = cxlchar();
        c.args([
            "mem",
            "interference",
            "--quick",
            "--cpu",
            "0,1",
            "--target",
            "anon",
        ])
        .args(["--format", "json"]);
        if let Some(l) = lib {
            c.env("LD_LIBRARY_PATH", l);
        }
        let out = c.assert().success().get_output().clone();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (doc, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (doc, stderr) = run(Some(d.path()));
    assert!(!stderr.contains("leaked"), "{stderr}");
    let m = &doc["interference"];
    assert!(m.is_object(), "{}", doc["skipped"]);
    assert_eq!(
        m["aggressors"],
        serde_json::json!(["anon", "gpu:0 on anon"])
    );
    let gpu: Vec<&Value> = m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["aggressor_tier"] == "gpu")
        .collect();
    let mixes: Vec<&str> = gpu.iter().map(|c| c["mix"].as_str().unwrap()).collect();
    assert_eq!(mixes, ["h2d", "d2h"]);
    for k in [
        "xtier_dram_under_gpu_lat_ratio",
        "xtier_dram_under_gpu_bw_ratio",
    ] {
        assert!(doc["params"][k].is_number(), "{k}: {}", doc["skipped"]);
    }
    let gpu_ms: Vec<&Value> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["parameters"]["aggressor_tier"] == "gpu")
        .collect();
    assert_eq!(
        gpu_ms.len(),
        2 * 4,
        "alone + lat, bw, aggressor-bw per direction"
    );
    for m in gpu_ms {
        assert!(
            m["parameters"]["gpu"]
                .as_str()
                .unwrap()
                .starts_with("Fake GPU"),
            "{m}"
        );
    }
    let v = jsonschema::validator_for(&schema()).unwrap();
    assert!(v.is_valid(&doc), "schema");
    // No driver on the loader path: the column's reason.
    let (doc, _) = run(None);
    if bench_gpu::cuda::library_present() {
        return;
    }
    let s = doc["skipped"].as_array().unwrap();
    let r = s
        .iter()
        .find(|s| s["target"] == "gpu")
        .expect("the gpu column skipped");
    assert!(r["reason"].as_str().unwrap().contains("libcuda"), "{r}");
    assert_eq!(
        doc["interference"]["aggressors"],
        serde_json::json!(["anon"])
    );
}
