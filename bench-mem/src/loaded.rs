//! `mem.loaded`: load latency under memory traffic (like MLC `--loaded_latency` and
//! multichase `multiload`).
//!
//! The first `--cpu` runs the pointer chase of [`crate::chase`] (the default
//! prefetcher-proof chain: randomized offsets in 256-byte slots, TLB-local order) over the
//! target's DRAM working set ([`bench_core::sizing`]: 4 x the DRAM plateau's start found by
//! the latency sweep, else 4 x the sysfs LLC) while every other `--cpu` streams through its own buffer, in chunks of
//! 4 KiB separated by an injection delay (a spin loop of `delay` pause instructions), from
//! no delay (full load) to no load at all (idle). Two traffic mixes: reads, and reads +
//! writes (a copy). Each point gives the chase's latency distribution and the bandwidth the
//! traffic threads achieved (GB = 10^9 B, a copy counting bytes read + written), so the
//! points form a latency-vs-bandwidth curve. With two CPUs there is one traffic thread: the
//! curve then spans what one core can inject, which the output says.

use crate::chase::{Chain, ChainLayout, ChaseOrder};
use crate::kernels::{self, IsaSet};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::counters::{self, CounterGroup, ThreadCounts};
use bench_core::params::{Measurement, Warning};
use bench_core::sizing::DramSizing;
use bench_core::stats::Distribution;
use bench_core::target::TargetSpec;
use bench_core::units::{format_size, MIB};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Injection delays (pause instructions between 4 KiB chunks), full load first; `None` is
/// the idle point (no traffic threads).
pub const DELAYS: [Option<u32>; 11] = [
    Some(0),
    Some(25),
    Some(50),
    Some(100),
    Some(200),
    Some(400),
    Some(800),
    Some(1600),
    Some(3200),
    Some(6400),
    None,
];

/// The traffic of the load threads (also the `--mix` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mix {
    /// Loads only.
    Read,
    /// Loads and stores (a copy within each thread's buffer).
    ReadWrite,
}

impl Mix {
    fn name(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::ReadWrite => "read-write",
        }
    }
}

const CHUNK: usize = 4096;
/// Most chase samples of one point (their buffer is touched before the counted loop).
const MAX_SAMPLES: usize = 200_000;

/// One traffic thread's stream: chunks of `buf` in turn, `delay` pauses between chunks,
/// until `stop`; returns the bytes moved (a copy's read + written) and a checksum.
fn traffic(
    buf: &mut [u8],
    mix: Mix,
    isa: kernels::Isa,
    delay: u32,
    stop: &AtomicBool,
) -> (u64, u64) {
    let (mut off, mut moved, mut acc) = (0usize, 0u64, 0u64);
    let len = buf.len();
    while !stop.load(Ordering::Relaxed) {
        let c = &mut buf[off..off + CHUNK];
        match mix {
            Mix::Read => acc ^= kernels::read(isa, c),
            Mix::ReadWrite => {
                let (a, b) = c.split_at_mut(CHUNK / 2);
                kernels::copy(isa, false, b, a);
            }
        }
        moved += CHUNK as u64;
        off = (off + CHUNK) % len;
        for _ in 0..delay {
            std::hint::spin_loop();
        }
    }
    (moved, acc)
}

/// The loaded-latency benchmark.
#[derive(Debug, Clone)]
pub struct LoadedLatencyBench {
    /// Traffic mixes (default both).
    pub mixes: Vec<Mix>,
}

impl Default for LoadedLatencyBench {
    fn default() -> Self {
        LoadedLatencyBench {
            mixes: vec![Mix::Read, Mix::ReadWrite],
        }
    }
}

impl LoadedLatencyBench {
    /// The chase's working set (touched bytes) on `target` and how it was chosen.
    fn chase_touched(ctx: &Context, target: &TargetSpec) -> (usize, DramSizing) {
        let layout = ChainLayout::DEFAULT;
        let (t, s, _) = ctx.dram_touched(target, layout.span_per_touched());
        (layout.round_touched(t), s)
    }

    fn load_bytes(ctx: &Context, target: &TargetSpec) -> usize {
        let threads = ctx.cpus.len().saturating_sub(1).max(1);
        let (touched, _) = Self::chase_touched(ctx, target);
        (touched / threads).max(64 * MIB) / CHUNK * CHUNK
    }
}

/// The largest injected bandwidth of a curve and the latency there.
pub fn max_bandwidth_point(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    points
        .iter()
        .copied()
        .filter(|(bw, _)| *bw > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

impl Benchmark for LoadedLatencyBench {
    fn name(&self) -> &'static str {
        "mem.loaded"
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 2,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        let (touched, _) = Self::chase_touched(ctx, target);
        ChainLayout::DEFAULT.span_bytes(touched)
            + Self::load_bytes(ctx, target) * (ctx.cpus.len() - 1).max(1)
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        if ctx.cpus.len() < 2 {
            return Err(NotRun::skip(
                "needs 2 CPUs: one chases, the others inject traffic (give more with --cpu)",
            ));
        }
        let isa = IsaSet::detect()
            .choose(None)
            .map_err(|e| Skip::new(e.to_string()))?;
        let target = region.spec().to_string();
        let placement = region.placement().clone();
        let (chase_bytes, sizing) = Self::chase_touched(ctx, region.spec());
        let load_bytes = Self::load_bytes(ctx, region.spec());
        let loaders = ctx.cpus.len() - 1;
        let layout = ChainLayout::DEFAULT;
        let span = layout.span_bytes(chase_bytes);
        if span + load_bytes * loaders > region.len() {
            return Err(NotRun::skip(format!(
                "region of {} too small for a {} chase and {loaders} x {} of traffic",
                format_size(region.len()),
                format_size(span),
                format_size(load_bytes)
            )));
        }
        let (chase_mem, load_mem) = region.as_mut_slice().split_at_mut(span);
        let load_base = load_mem.as_mut_ptr() as usize;
        let chain = Chain::build(
            chase_mem,
            layout,
            ChaseOrder::DEFAULT,
            chase_bytes,
            ctx.seed,
        )
        .map_err(|e| Skip::new(e.to_string()))?;
        let chase_params = chain.describe();
        let mut rep = Report::default();
        if loaders == 1 {
            rep.warnings.push(Warning {
                code: "loaded_one_thread".into(),
                message: format!("{target}: 2 CPUs: one traffic thread, so the loaded-latency curve ends at what one core can inject"),
                remediation: "run on more CPUs (--cpu) for the full curve".into(),
            });
        }
        bench_core::pin::pin_current(ctx.cpus[0]).map_err(|e| Skip::new(e.to_string()))?;
        let dur = if ctx.quick {
            Duration::from_millis(80)
        } else {
            Duration::from_millis(400)
        };
        let timer = &ctx.timer;
        // The chain is built and one lap run; the traffic threads never touch its memory.
        let mut p = chain.cursor();
        // Counters: the chase thread measures (its counts are recorded, per load); the
        // traffic threads are helpers, each counting its own streaming loop, so that a
        // disturbance on any of them flags and repeats the point.
        let mut group = CounterGroup::open_with_timer(timer);
        let mut samples = counters::sample_buffer(MAX_SAMPLES);
        let batch = 256;
        for &mix in &self.mixes {
            let mut curve: Vec<(f64, f64, String)> = Vec::new();
            for delay in DELAYS {
                let n_threads = if delay.is_some() { loaders } else { 0 };
                let ((bw, kept), counters) =
                    counters::retry_undisturbed(counters::DEFAULT_MAX_ATTEMPTS, || {
                        let stop = AtomicBool::new(false);
                        let bytes = AtomicU64::new(0);
                        let mut traffic_ns = 0u64;
                        let mut threads = Vec::with_capacity(1 + n_threads);
                        samples.clear();
                        std::thread::scope(|s| {
                            let handles: Vec<_> = (0..n_threads)
                                .map(|t| {
                                    let (stop, bytes) = (&stop, &bytes);
                                    let cpu = ctx.cpus[1 + t];
                                    let d = delay.unwrap_or(0);
                                    s.spawn(move || {
                                        let _ = bench_core::pin::pin_current(cpu);
                                        let mut g = CounterGroup::open();
                                        // SAFETY: thread t owns [load_base + t*load_bytes,
                                        // +load_bytes), disjoint from the chase and from the
                                        // other threads.
                                        let buf = unsafe {
                                            std::slice::from_raw_parts_mut(
                                                (load_base + t * load_bytes) as *mut u8,
                                                load_bytes,
                                            )
                                        };
                                        let t0 = Instant::now();
                                        let ((moved, acc), c) =
                                            g.count(|| traffic(buf, mix, isa, d, stop));
                                        std::hint::black_box(acc);
                                        bytes.fetch_add(moved, Ordering::Relaxed);
                                        (t0.elapsed().as_nanos() as u64, c)
                                    })
                                })
                                .collect();
                            let end = Instant::now() + dur;
                            let ((), c) = group.count(|| {
                                while (Instant::now() < end || samples.len() < 32)
                                    && samples.len() < MAX_SAMPLES
                                {
                                    let a = timer.start();
                                    p = chain.walk(p, batch);
                                    let b = timer.stop();
                                    samples.push(timer.elapsed_ns(a, b) / batch as f64);
                                }
                            });
                            stop.store(true, Ordering::Relaxed);
                            threads.push(ThreadCounts::measuring(
                                format!("chase thread (CPU {})", ctx.cpus[0]),
                                c,
                            ));
                            for (t, h) in handles.into_iter().enumerate() {
                                let (ns, c) = h.join().expect("traffic thread");
                                traffic_ns = traffic_ns.max(ns);
                                threads.push(ThreadCounts::helper(
                                    format!("traffic thread {t} (CPU {})", ctx.cpus[1 + t]),
                                    c,
                                ));
                            }
                        });
                        let bw = if traffic_ns > 0 {
                            bytes.load(Ordering::Relaxed) as f64 / traffic_ns as f64
                        } else {
                            0.0
                        };
                        ((bw, samples.clone()), threads)
                    });
                let counters = counters.with_per_op("load", (batch * kept.len()) as u64);
                let d = Distribution::from_samples(&kept)
                    .ok_or_else(|| Skip::new("no valid chase samples"))?;
                let label = delay.map_or("idle".to_string(), |d| format!("d{d}"));
                let id = format!("mem.loaded/{target}/{}/{label}", mix.name());
                ctx.progress(&format!(
                    "{id}: {:.1} ns at {bw:.1} GB/s{}",
                    d.p50,
                    counters.summary()
                ));
                curve.push((bw, d.p50, id.clone()));
                rep.measurements.push(Measurement {
                    id,
                    benchmark: self.name().into(),
                    target: target.clone(),
                    parameters: json!({
                        "mix": mix.name(), "delay_pause": delay, "traffic_threads": if delay.is_some() { loaders } else { 0 },
                        "injected_bw_gbs": bw, "chase_bytes": chase_bytes, "traffic_bytes_per_thread": load_bytes,
                        "chunk_bytes": CHUNK, "isa": isa.name(), "chase_cpu": ctx.cpus[0],
                        "chase": chase_params, "sizing_rule": sizing.rule, "sizing": sizing.explain(),
                    }),
                    unit: "ns".into(),
                    method: "p50 of 256-load chase batches on the first CPU while the others stream 4 KiB chunks separated by the delay; injected_bw_gbs = traffic bytes (read + written) / time".into(),
                    distribution: d,
                    placement: Some(placement.clone()),
                    counters: Some(counters),
                });
            }
            let pts: Vec<(f64, f64)> = curve.iter().map(|(b, l, _)| (*b, *l)).collect();
            let suffix = if mix == Mix::Read { "" } else { "_rw" };
            if let Some((bw, lat)) = max_bandwidth_point(&pts) {
                let from: Vec<String> = curve.iter().map(|c| c.2.clone()).collect();
                for (key, value, what) in [
                    (
                        format!("loaded_lat_max_bw{suffix}_gbs"),
                        bw,
                        "largest injected bandwidth of the curve",
                    ),
                    (
                        format!("loaded_lat_at_max_bw{suffix}_ns"),
                        lat,
                        "chase latency at the largest injected bandwidth",
                    ),
                ] {
                    rep.params.push(Param::new(
                        key,
                        value,
                        &target,
                        format!(
                            "{what}, {} traffic, {loaders} traffic thread(s), chase over {} touched ({})",
                            mix.name(),
                            format_size(chase_bytes),
                            sizing.explain()
                        ),
                        from.clone(),
                    ));
                }
            }
        }
        std::hint::black_box(p);
        Ok(rep)
    }
}

/// Load latency while the other CPUs inject read or read/write traffic, from full load
/// to idle (11 points per mix): a latency-vs-bandwidth curve like MLC's.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadedArgs {
    /// Traffic mix: read, read-write or both (default both).
    #[arg(long, value_enum)]
    pub mix: Option<Mix>,
}

impl Setup for LoadedArgs {
    fn plan(&self, _opts: &Options) -> Result<Planned, BoxError> {
        let mixes = match self.mix {
            Some(Mix::Read) => vec![Mix::Read],
            Some(Mix::ReadWrite) => vec![Mix::ReadWrite],
            None => vec![Mix::Read, Mix::ReadWrite],
        };
        Ok(Planned::one(LoadedLatencyBench { mixes }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_least_ten_points_from_full_load_to_idle() {
        assert!(DELAYS.len() >= 10);
        assert_eq!(DELAYS[0], Some(0));
        assert_eq!(*DELAYS.last().unwrap(), None);
        assert!(DELAYS[..DELAYS.len() - 1].windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn max_bandwidth_point_ignores_idle() {
        let pts = [(10.0, 120.0), (14.0, 150.0), (3.0, 95.0), (0.0, 90.0)];
        assert_eq!(max_bandwidth_point(&pts), Some((14.0, 150.0)));
        assert_eq!(max_bandwidth_point(&[(0.0, 90.0)]), None);
    }

    #[test]
    fn one_cpu_is_a_reasoned_skip() {
        let ctx = Context {
            cpus: vec![bench_core::pin::allowed_cpus()[0]],
            ..Context::quick_local()
        };
        let b = LoadedLatencyBench::default();
        let e = b
            .check(&ctx, &bench_core::target::TargetSpec::Anon)
            .unwrap_err();
        assert!(e.reason.contains("needs 2 CPUs"), "{e}");
    }
}
