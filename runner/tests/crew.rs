//! The crew in real runs: two families' requests for the same stream agree (or say why
//! not), and a CPU hog beside the measuring threads is flagged or left out, never
//! published as the figure.

mod common;
use common::*;

use bench_core::bench::{Context, Report};
use bench_core::kernels::IsaSet;
use bench_core::memory::{Region, TargetSpec};
use bench_gpu::cuda::{Dir, HostSpan};
use bench_gpu::with_cpu::{agents_window, CpuSide};
use std::sync::Mutex;
use std::time::Duration;

/// The tests of this file measure: one at a time, or they disturb each other.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A footprint past this guest's caches and small enough for a test: 4 x the caches the
/// CPUs can fill, as the families size it, at least 256 MiB.
fn footprint(ctx: &Context) -> usize {
    let (b, _) = ctx.dram_stream_bytes(&TargetSpec::Anon, &ctx.cpus);
    b.clamp(256 << 20, 1 << 30)
}

/// `mem bandwidth`'s read point (the matrix's request) and the GPU family's CPU agents
/// alone (their request beside no GPU) stream the same kernel on the same CPUs over the
/// same footprint, alternated three times: their medians agree within 5 %, unless the
/// crew saw why they could not (disturbed windows, a spread of more than 5 % between the
/// read point's windows), which the test then says.
#[test]
fn two_families_asking_for_the_same_stream_get_the_same_figure() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::quick_local();
    let bytes = footprint(&ctx);
    let isa = IsaSet::detect().choose(None).unwrap();
    let mut region = Region::allocate(&TargetSpec::Anon, bytes, &ctx.topology).unwrap();
    let mut host = vec![1u8; bytes];
    let (mut bw, mut agents, mut doubts) = (vec![], vec![], vec![]);
    for round in 0..3 {
        let mut rep = Report::default();
        let id = format!("read/{round}");
        let (v, noisy) = bench_mem::bandwidth::read_point(
            &ctx,
            &mut region,
            (ctx.cpus.len(), bytes),
            ("mem.matrix", id),
            &mut rep,
        )
        .unwrap();
        bw.push(v);
        let m = rep.measurements.last().unwrap();
        let d = &m.distribution;
        if let Some(n) = noisy {
            doubts.push(format!("round {round}: the read point was noisy: {n}"));
        } else if d.n > 1 && (d.max - d.min) / d.p50 > 0.05 {
            doubts.push(format!(
                "round {round}: the read point's windows moved {:.1} %",
                (d.max - d.min) / d.p50 * 100.0
            ));
        }
        let cpu = CpuSide {
            cpus: &ctx.cpus,
            host: HostSpan::pageable(&mut host),
            isa,
        };
        let (gbs, counts) =
            agents_window(&cpu, Dir::H2d, Duration::from_millis(200), &ctx.timer, None)
                .expect("every agent pinned");
        agents.push(gbs.expect("the agents streamed"));
        for c in counts.iter().filter(|c| c.is_disturbed()) {
            doubts.push(format!(
                "round {round}: an agent was disturbed: {:?}",
                c.disturbances()
            ));
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let (a, b) = (med(&mut bw), med(&mut agents));
    let apart = a.max(b) / a.min(b) - 1.0;
    eprintln!(
        "read point {bw:?} GB/s, agents alone {agents:?} GB/s: {:.1} % apart",
        apart * 100.0
    );
    if apart > 0.05 {
        assert!(
            !doubts.is_empty(),
            "{a:.2} vs {b:.2} GB/s, {:.1} % apart, with every window clean",
            apart * 100.0
        );
        bench_core::testing::unavailable(
            "quiet-machine",
            &format!(
                "the two requests were {:.1} % apart on a busy machine: {doubts:?}",
                apart * 100.0
            ),
        );
    }
}

/// A thread of this process spinning on the last measuring CPU while `mem bandwidth`
/// measures: every all-thread figure is within 10 % of the quiet run's, or flagged noisy.
#[test]
fn a_cpu_hog_beside_the_measuring_threads_is_left_out_or_flagged() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = bench_core::pin::allowed_cpus();
    if cpus.len() < 2 {
        bench_core::testing::unavailable(
            "two-cpus",
            "one CPU: no thread can run beside the measuring one",
        );
        return;
    }
    let args = ["mem", "bandwidth", "--quick", "--kernel", "read,nt-write"];
    let quiet = run_out(&args);
    let hog_cpu = *cpus.last().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let hog = std::thread::spawn(move || {
        let _ = bench_core::pin::pin_current(hog_cpu);
        let mut x = 0u64;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    });
    let busy = run_out(&args);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    hog.join().unwrap();
    let noisy = |doc: &serde_json::Value, k: &str| doc["param_info"][k]["noisy"].is_string();
    let mut checked = 0;
    for k in ["mem_bw_gbs", "nt_write_bw_gbs"] {
        let (q, b) = (
            quiet["params"][k].as_f64().unwrap(),
            busy["params"][k].as_f64().unwrap(),
        );
        if noisy(&quiet, k) {
            bench_core::testing::unavailable(
                "quiet-machine",
                &format!("{k}: the run without the hog was noisy itself"),
            );
            continue;
        }
        checked += 1;
        assert!(
            noisy(&busy, k) || (b / q - 1.0).abs() <= 0.10,
            "{k}: {b:.2} GB/s beside the hog, {q:.2} quiet, and not flagged noisy: {}",
            busy["param_info"][k]
        );
        if noisy(&busy, k) {
            // Flagged where people look: the key, the warnings, the counters.
            let w = busy["warnings"].as_array().unwrap();
            assert!(w.iter().any(|w| w["code"] == "noisy"), "{w:?}");
        }
    }
    eprintln!("{checked} all-thread key(s) held against the quiet run");
}
