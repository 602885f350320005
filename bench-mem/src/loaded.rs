//! `mem.loaded`: load latency under memory traffic (like MLC `--loaded_latency` and
//! multichase `multiload`).
//!
//! The first `--cpu` runs the pointer chase of [`crate::chase`] (the default
//! prefetcher-proof chain: every line of 256-byte slots, one per phase, at random offsets, TLB-local order) over the
//! target's DRAM working set ([`bench_core::sizing`]: 4 x the DRAM plateau's start found by
//! the latency sweep, else 4 x the sysfs LLC) while every other `--cpu` streams through its
//! own buffer in chunks separated by an injection delay (a spin loop of pause
//! instructions), from no delay (full load) through the effort plan's delays
//! ([`bench_core::effort::MemEffort::loaded_delays`], denser near full load, where the
//! curve bends) to no load at all (idle).
//!
//! **Traffic** ([`Lines`], [`Mix`], [`Traffic`], streamed by [`traffic()`]). A chunk is consecutive
//! cache lines of the thread's buffer: the vector read kernel of [`crate::kernels`] loads
//! the first, the vector store kernel writes the next with temporal `storeu`, then the
//! next with streaming stores + `sfence` (the NT kernels' own fence); every store a
//! full-line write to a line not read in that chunk. Loads and stores have the same vector
//! width and every part is a multiple of four lines (one unrolled AVX-512 step), so the
//! chunk's ratios hold for instructions as well as bytes. Chunks follow each other through
//! the buffer, wrapping before a chunk would pass its end. The bandwidth of a point is the
//! bytes the traffic threads loaded + stored / their time (GB = 10^9 B); the read for
//! ownership a temporal store causes is not counted there, but it is in the point's
//! `read_pct` (the read share of the memory traffic: 3r1w = 4 reads per write = 80 %).
//! The named mixes of `--mix` ([`Mix`], MLC's `-W` family in spirit: all reads, 3:1, 2:1,
//! 1:1, all non-temporal writes) and the read shares of `--read-pct` / `--mess-family`
//! (any whole percentage, exact: [`Lines::for_share`]) are the same kind of chunk; a share
//! whose chunk is a mix's is that mix (100 `read`, 80 `3r1w`, 75 `2r1w`, 0 `nt-write`),
//! the others are named `share<P>`. Only the named mixes give `loaded_lat_*` keys.
//!
//! **Delays.** The injection delay is `delay` pauses per 64 lines of chunk
//! ([`Lines::pauses`]; the named mixes' chunks are at most 64 lines, so one `delay` per
//! chunk). Named-mix runs measure every delay of the effort plan; a run with shares takes
//! the adaptive plan ([`refine`]) for every curve: every third delay and idle, then the
//! delay halfway between neighbours whose p50 differs by more than 5 %, until none is
//! left, so a curve flat at low load costs few points and its knee gets them all.
//!
//! **Latency.** Each point's `distribution` is that of 256-load batch means (ns per load),
//! the quantity MLC reports (an average over many dependent loads), and the one the keys
//! `loaded_lat_at_max_bw*_ns` take the p50 of. A batch mean hides the per-load tail, so
//! between batches the chase thread also times single loads ([`Chain::step`], the cycle
//! timer's start/stop overhead subtracted as everywhere else), [`PER_LOAD_EVERY_BATCH`] of
//! them after each batch; their p50 / p99 are the point's `per_load_p50_ns` /
//! `per_load_p99_ns` parameters and the `loaded_lat_p99_at_max_bw*_ns` keys. A single-load
//! sample carries the timer's jitter (its resolution and overhead are recorded), which
//! mostly widens the body; the p99 tail (queueing behind the traffic) is far larger.
//!
//! With two CPUs there is one traffic thread: the curve then spans what one core can
//! inject, which the output says.

use crate::chase::{Chain, ChainLayout, ChaseOrder, Cursor};
use crate::kernels::{self, IsaSet};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::counters::{self, CounterGroup, Counts, MeasurementCounters, ThreadCounts};
use bench_core::crew::{Crew, Member, Stop, WindowPlan};
use bench_core::keys::parameters as pk;
use bench_core::memory::{OnMemory, Placement, Region, TargetSpec};
use bench_core::params::{Measurement, Warning};
use bench_core::plan::Cost;
use bench_core::sizing::DramSizing;
use bench_core::stats::Distribution;
use bench_core::units::{format_size, MIB};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

mod memory;
mod plan;
mod traffic;

pub use memory::RIG_BYTES;
pub use plan::{
    coarse, curves as plan_curves, family, parse_shares, refine, Shares, COARSE_EVERY, REFINE_REL,
};
#[cfg(test)]
use traffic::STORE_BYTE;
pub use traffic::{traffic, Issued, Lines, Mix, Traffic, LINE};

/// Most chase batch samples of one point (their buffer is touched before the counted loop).
const MAX_SAMPLES: usize = 200_000;
/// Loads per batch sample (the headline distribution's unit).
const BATCH: usize = 256;
/// Single timed loads after each batch.
pub const PER_LOAD_EVERY_BATCH: usize = 16;
/// Most single-load samples of one point.
const MAX_PER_LOAD: usize = 1_000_000;

/// The loaded-latency benchmark.
#[derive(Debug, Clone)]
pub struct LoadedLatencyBench {
    /// The curves' traffic (default the five named mixes).
    pub curves: Vec<Traffic>,
    /// Whether each curve takes the adaptive delay plan (a coarse sweep refined where
    /// the latency bends, [`refine`]) instead of every delay of the effort plan.
    pub adaptive: bool,
}

impl Default for LoadedLatencyBench {
    fn default() -> Self {
        LoadedLatencyBench {
            curves: Mix::ALL.map(Traffic::mix).to_vec(),
            adaptive: false,
        }
    }
}

impl LoadedLatencyBench {
    /// The chase's working set (touched bytes) on `target` and how it was chosen: 4 x the
    /// caches of every CPU of the run (the traffic threads fill them too).
    fn chase_touched(ctx: &Context, target: &impl OnMemory) -> (usize, DramSizing) {
        let layout = ChainLayout::DEFAULT;
        let (t, s) = ctx.dram_touched(target, &ctx.cpus, layout.span_per_touched());
        (layout.round_touched(t), s)
    }

    /// Each traffic thread's buffer: together the streaming DRAM footprint of every CPU
    /// of the run ([`Context::dram_stream_bytes`]), at least 64 MiB each.
    fn load_bytes(ctx: &Context, target: &impl OnMemory) -> usize {
        let threads = ctx.cpus.len().saturating_sub(1).max(1);
        let (total, _) = ctx.dram_stream_bytes(target, &ctx.cpus);
        // Rounded up: together at least the footprint the bandwidth check confirmed.
        total.div_ceil(threads).max(64 * MIB).div_ceil(4096) * 4096
    }
}

/// One loaded point on `region`: the default chase of `chase_bytes` touched bytes at its
/// start, on the calling thread (pinned here to `ctx.cpus[0]`), while every other CPU of
/// `ctx` streams read traffic with no injection delay through its own `load_bytes` past
/// the chase (the first point of the read curve: MLC's loaded latency at full load).
/// Recorded in `rep` as measurement `id` of `benchmark`; `sizing` says how the chase was
/// sized. Needs two CPUs and a region of the chase's span + (CPUs - 1) x `load_bytes`.
/// Returns the p50 (ns per load).
pub fn full_load_point(
    ctx: &Context,
    region: &mut Region,
    (chase_bytes, load_bytes, sizing): (usize, usize, &DramSizing),
    (benchmark, id): (&str, String),
    rep: &mut Report,
) -> Result<f64, NotRun> {
    let loaders = ctx.cpus.len().saturating_sub(1);
    let layout = ChainLayout::DEFAULT;
    let span = layout.span_bytes(chase_bytes);
    if loaders == 0 || span + load_bytes * loaders > region.len() {
        return Err(NotRun::skip(format!(
            "a loaded point needs 2 CPUs and {} of memory (a chase and {loaders} x {} of traffic); {} CPU(s), {} given",
            format_size(span + load_bytes * loaders.max(1)),
            format_size(load_bytes),
            ctx.cpus.len(),
            format_size(region.len())
        )));
    }
    let isa = IsaSet::detect()
        .choose(None)
        .map_err(|e| e.to_string())
        .and_then(kernels::with_nt_store)
        .map_err(Skip::new)?;
    let target = region.origin().to_string();
    let placement = region.placement().clone();
    let (chase_mem, load_mem) = region.as_mut_slice().split_at_mut(span);
    let chain = default_chain(chase_mem, layout, chase_bytes, ctx.seed)?;
    bench_core::pin::pin_current(ctx.cpus[0]).map_err(|e| Skip::new(e.to_string()))?;
    let mut rig = Rig::new(ctx, &chain, load_mem.as_mut_ptr() as usize, load_bytes, isa);
    let labels = Labels {
        target: &target,
        placement: &placement,
        chase_bytes,
        sizing,
        chase: chain.describe(),
    };
    let (sampled, counters) = rig.point(Mix::Read.lines(), Some(0), loaders)?;
    let b = LoadedLatencyBench::default();
    let (point, mut m) = b.measurement(
        &rig,
        &labels,
        (Traffic::mix(Mix::Read), Some(0)),
        sampled,
        counters,
    )?;
    std::hint::black_box(rig.p);
    m.id = id;
    m.benchmark = benchmark.into();
    rep.measurements.push(m);
    Ok(point.p50)
}

/// Index of the largest injected bandwidth of a curve (idle points, 0 GB/s, never).
pub fn max_bandwidth_index(bws: &[f64]) -> Option<usize> {
    bws.iter()
        .copied()
        .enumerate()
        .filter(|(_, bw)| *bw > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// One measured point of a curve.
struct Point {
    bw: f64,
    p50: f64,
    per_load_p99: f64,
    id: String,
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

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> bench_core::memory::budget::Need {
        self.memory_need(ctx, target)
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        if ctx.cpus.len() < 2 {
            return Cost::new();
        }
        let (touched, _) = Self::chase_touched(ctx, target);
        let e = &ctx.plan.expect;
        let run = ctx.effort.mem.loaded_point.as_secs_f64().max(32.0 * 20e-6);
        let threads = ctx.cpus.len();
        let delays = ctx.effort.mem.loaded_delays.len();
        let points = if self.adaptive {
            // The coarse sweep and about as many refined points.
            (2 * plan::coarse(delays).len()).min(delays)
        } else {
            delays
        };
        let mut cost = Cost::new();
        cost.add(
            "chase chain",
            1,
            crate::latency::chase_point_s(ctx, touched, std::time::Duration::ZERO),
        );
        for t in &self.curves {
            cost.add(
                format!("{} curve", t.name()),
                points,
                e.spinning_section_s(threads, run),
            );
        }
        // The DRAM checks its keys stand on (two sizes each), where no family before it
        // makes them.
        let chase = crate::latency::chase_check_s(ctx, target, touched);
        if chase > 0.0 {
            cost.add("DRAM check of the chase", 2, chase / 2.0);
        }
        let traffic = Self::load_bytes(ctx, target) * (threads - 1);
        let stream = crate::bandwidth::stream_check_s(ctx, target, threads, traffic);
        if stream > 0.0 {
            cost.add("DRAM check of the traffic", 2, stream / 2.0);
        }
        cost
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
            .map_err(|e| e.to_string())
            .and_then(kernels::with_nt_store)
            .map_err(Skip::new)?;
        let target = region.origin().to_string();
        let placement = region.placement().clone();
        let (chase_bytes, sizing) = Self::chase_touched(ctx, region.origin());
        let load_bytes = Self::load_bytes(ctx, region.origin());
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
        let chain = default_chain(chase_mem, layout, chase_bytes, ctx.seed)?;
        let mut rep = Report::default();
        if loaders == 1 {
            rep.warnings.push(Warning {
                code: "loaded_one_thread".into(),
                message: format!("{target}: 2 CPUs: one traffic thread, so the loaded-latency curve ends at what one core can inject"),
                remediation: "run on more CPUs (--cpu) for the full curve".into(),
            });
        }
        bench_core::pin::pin_current(ctx.cpus[0]).map_err(|e| Skip::new(e.to_string()))?;
        let mut rig = Rig::new(ctx, &chain, load_mem.as_mut_ptr() as usize, load_bytes, isa);
        let labels = Labels {
            target: &target,
            placement: &placement,
            chase_bytes,
            sizing: &sizing,
            chase: chain.describe(),
        };
        for &t in &self.curves {
            let (curve, ms) = self.curve(&mut rig, &labels, t, loaders)?;
            rep.measurements.extend(ms);
            rep.params.extend(curve_params(&labels, t, &curve, loaders));
        }
        std::hint::black_box(rig.p);
        // The DRAM checks the keys stand on: the chase (CPU 0) and the traffic (the rest).
        let keys: Vec<String> = rep.params.iter().map(|p| p.key.clone()).collect();
        let chase = crate::latency::chase_check(ctx, region, chase_bytes, &mut rep)?;
        let traffic = crate::bandwidth::stream_check(
            ctx,
            region,
            ctx.cpus.len(),
            load_bytes * loaders,
            &mut rep,
        )?;
        for i in [chase, traffic].into_iter().flatten() {
            ctx.sizing.cover(i, keys.iter().cloned());
        }
        Ok(rep)
    }
}

impl LoadedLatencyBench {
    /// One curve of traffic `t`, its points and measurements in delay order: every delay
    /// of the effort plan, or with [`LoadedLatencyBench::adaptive`] its coarse sweep,
    /// refined between neighbours whose latency differs ([`refine`]).
    fn curve(
        &self,
        rig: &mut Rig<'_, '_>,
        labels: &Labels<'_>,
        t: Traffic,
        loaders: usize,
    ) -> Result<(Vec<Point>, Vec<Measurement>), NotRun> {
        let ctx = rig.ctx;
        let delays = ctx.effort.mem.loaded_delays;
        let mut todo: Vec<usize> = if self.adaptive {
            plan::coarse(delays.len())
        } else {
            (0..delays.len()).collect()
        };
        let mut done: BTreeMap<usize, (Point, Measurement)> = BTreeMap::new();
        while !todo.is_empty() {
            for i in todo {
                let delay = delays[i];
                let (sampled, counters) = rig.point(t.lines, delay, loaders)?;
                let (point, m) = self.measurement(rig, labels, (t, delay), sampled, counters)?;
                ctx.progress(&format!(
                    "{}: {:.1} ns (per load p99 {:.1} ns) at {:.1} GB/s{}",
                    m.id,
                    point.p50,
                    point.per_load_p99,
                    point.bw,
                    m.counters.as_ref().map_or(String::new(), |c| c.summary())
                ));
                ctx.point_done();
                done.insert(i, (point, m));
            }
            todo = if self.adaptive {
                plan::refine(&done.iter().map(|(&i, (p, _))| (i, p.p50)).collect())
            } else {
                Vec::new()
            };
        }
        Ok(done.into_values().unzip())
    }

    /// The measurement of one point of `t`'s curve, and the point.
    fn measurement(
        &self,
        rig: &Rig<'_, '_>,
        labels: &Labels<'_>,
        (t, delay): (Traffic, Option<u32>),
        s: Sampled,
        counters: MeasurementCounters,
    ) -> Result<(Point, Measurement), NotRun> {
        let (target, sizing, timer) = (labels.target, labels.sizing, rig.ctx.timer.info());
        let lines = t.lines;
        let counters =
            counters.with_per_op("load", (BATCH * s.batches.len() + s.singles.len()) as u64);
        let d = Distribution::from_samples(&s.batches)
            .ok_or_else(|| Skip::new("no valid chase samples"))?;
        let per_load = Distribution::from_samples(&s.singles)
            .ok_or_else(|| Skip::new("no valid single-load chase samples"))?;
        let label = delay.map_or("idle".to_string(), |d| format!("d{d}"));
        let id = format!("mem.loaded/{target}/{}/{label}", t.name());
        let point = Point {
            bw: s.bw,
            p50: d.p50,
            per_load_p99: per_load.p99,
            id: id.clone(),
        };
        let mut parameters = json!({
            "mix": t.name(), "delay_pause": delay, "traffic_threads": s.threads,
            "injected_bw_gbs": s.bw, "chase_bytes": labels.chase_bytes, "traffic_bytes_per_thread": rig.load_bytes,
            "chunk_bytes": lines.chunk_bytes(), "isa": rig.isa.name(), "chase_cpu": rig.ctx.cpus[0],
            "chase": &labels.chase, "sizing_rule": sizing.rule, "sizing": sizing.explain(),
        });
        for (k, v) in [
            (pk::READ_PCT, json!(t.read_pct())),
            ("read_share_exact_pct", json!(lines.read_share())),
            (pk::LOAD_STORE_RATIO, json!(lines.ratio())),
            ("chunk_lines", json!({ "loaded": lines.loaded, "stored": lines.stored(), "stored_temporal": lines.temporal, "stored_nt": lines.nt })),
            ("stores", json!(lines.store_kind())),
            ("pauses_per_chunk", json!(delay.map(|d| lines.pauses(d)))),
            ("delay_plan", json!(if self.adaptive { "adaptive: every third delay of the plan, refined where neighbouring p50s differ by more than 5 %" } else { "every delay of the plan" })),
            ("traffic_loaded_bytes", json!(s.loaded)),
            ("traffic_stored_bytes", json!(s.stored)),
            ("bytes_counted", json!("bytes loaded + bytes stored by the traffic threads' instructions; no RFO, no write-back, not the chase; GB = 1e9 B")),
            ("traffic_crew", s.crew.clone()),
            ("batch_loads", json!(BATCH)),
            ("point_ms", json!(rig.point.as_millis() as u64)),
            (pk::PER_LOAD_P50_NS, json!(per_load.p50)),
            (pk::PER_LOAD_P99_NS, json!(per_load.p99)),
            (pk::PER_LOAD_SAMPLES, json!(per_load.n)),
            (pk::TIMER_OVERHEAD_NS, json!(timer.overhead_ns)),
            ("timer_resolution_ns", json!(timer.resolution_ns)),
        ] {
            parameters[k] = v;
        }
        let m = Measurement {
            id,
            benchmark: self.name().into(),
            target: target.to_string(),
            parameters,
            unit: "ns".into(),
            method: format!(
                "distribution: means of {BATCH}-load dependent chase batches on the first CPU (ns per load, timer overhead subtracted; MLC-comparable), while the other CPUs each run {} traffic over their own buffer, chunk after chunk: {}, then {} pause instructions ({} per 64 lines, whole 64-line parts of the chunk rounded); per_load_p50_ns / per_load_p99_ns: {PER_LOAD_EVERY_BATCH} single timed loads after each batch (timer overhead subtracted); injected_bw_gbs = bytes loaded + stored by the traffic threads inside the window in which all of them ran (released together with the chase, stopped when it is done: a crew's window, `traffic_crew`) / that window (GB = 1e9 B, RFO not counted); read_pct = {} (loaded lines + one RFO read per temporally stored line, over that + stored lines, rounded; exact: read_share_exact_pct)",
                t.name(),
                lines.chunk_text(),
                delay.map_or("(idle: no traffic threads)".to_string(), |d| lines.pauses(d).to_string()),
                delay.map_or("-".to_string(), |d| d.to_string()),
                t.read_pct()
            ),
            distribution: d,
            placement: Some(labels.placement.clone()),
            counters: Some(counters),
        };
        Ok((point, m))
    }
}

/// The keys of a named mix's curve: its largest injected bandwidth and the latency (p50
/// and per-load p99) there (none for other shares).
fn curve_params(labels: &Labels<'_>, t: Traffic, curve: &[Point], loaders: usize) -> Vec<Param> {
    let Some(mix) = t.named() else {
        return Vec::new();
    };
    let (target, chase_bytes, sizing) = (labels.target, labels.chase_bytes, labels.sizing);
    let mut params = Vec::new();
    let bws: Vec<f64> = curve.iter().map(|c| c.bw).collect();
    if let Some(at) = max_bandwidth_index(&bws) {
        let top = &curve[at];
        let from: Vec<String> = curve.iter().map(|c| c.id.clone()).collect();
        let (bw_key, lat_key, p99_key) = match mix.key_part() {
            None => (
                "loaded_lat_max_bw_gbs".to_string(),
                "loaded_lat_at_max_bw_ns".to_string(),
                "loaded_lat_p99_at_max_bw_ns".to_string(),
            ),
            Some(m) => (
                format!("loaded_lat_max_bw_{m}_gbs"),
                format!("loaded_lat_at_max_bw_{m}_ns"),
                format!("loaded_lat_p99_at_max_bw_{m}_ns"),
            ),
        };
        for (key, value, what) in [
            (bw_key, top.bw, "largest injected bandwidth of the curve"),
            (
                lat_key,
                top.p50,
                "p50 of the chase's 256-load batch means at the largest injected bandwidth",
            ),
            (
                p99_key,
                top.per_load_p99,
                "p99 of single timed chase loads at the largest injected bandwidth",
            ),
        ] {
            params.push(Param::new(
                    key,
                    value,
                    target,
                    format!(
                        "{what}, {} traffic ({} loads:stores, {} % reads), {loaders} traffic thread(s), chase over {} touched ({})",
                        mix.name(),
                        mix.lines().ratio(),
                        mix.read_pct(),
                        format_size(chase_bytes),
                        sizing.explain()
                    ),
                    from.clone(),
                ));
        }
    }
    params
}

/// What every measurement of a run records beside its point.
struct Labels<'a> {
    target: &'a str,
    placement: &'a Placement,
    chase_bytes: usize,
    sizing: &'a DramSizing,
    chase: serde_json::Value,
}

/// The chase and the traffic threads' buffers of a run, and what a point reuses.
struct Rig<'a, 'c> {
    ctx: &'a Context,
    chain: &'a Chain<'c>,
    p: Cursor,
    /// Thread t's buffer is [load_base + t load_bytes, + load_bytes), past the chase.
    load_base: usize,
    load_bytes: usize,
    isa: kernels::Isa,
    /// How long each point samples.
    point: Duration,
    group: CounterGroup,
    samples: Vec<f64>,
    singles: Vec<f64>,
}

/// The default-order chase of `chase_bytes` touched bytes over `mem` (a skip if it cannot
/// be built), the chase every loaded-latency point times.
fn default_chain(
    mem: &mut [u8],
    layout: ChainLayout,
    chase_bytes: usize,
    seed: u64,
) -> Result<Chain<'_>, Skip> {
    Chain::build(mem, layout, ChaseOrder::DEFAULT, chase_bytes, seed)
        .map_err(|e| Skip::new(e.to_string()))
}

impl<'a, 'c> Rig<'a, 'c> {
    /// A rig for the chase `chain` and the traffic buffers from `load_base`, each
    /// `load_bytes`, sampling each point for the effort's time.
    fn new(
        ctx: &'a Context,
        chain: &'a Chain<'c>,
        load_base: usize,
        load_bytes: usize,
        isa: kernels::Isa,
    ) -> Self {
        Rig {
            ctx,
            p: chain.cursor(),
            chain,
            load_base,
            load_bytes,
            isa,
            point: ctx.effort.mem.loaded_point,
            group: CounterGroup::open_with_timer(&ctx.timer),
            samples: counters::sample_buffer(MAX_SAMPLES),
            singles: counters::sample_buffer(MAX_PER_LOAD),
        }
    }
}

/// One point's samples: the injected bandwidth (GB/s), the bytes the traffic loaded and
/// stored, the chase's batch means and single loads, the traffic threads and their window
/// (`crew`, none when idle).
struct Sampled {
    bw: f64,
    loaded: u64,
    stored: u64,
    batches: Vec<f64>,
    singles: Vec<f64>,
    threads: usize,
    crew: serde_json::Value,
}

impl Rig<'_, '_> {
    /// One point: `loaders` traffic threads with `delay` (none when idle) beside the
    /// chase, repeated while a thread was disturbed as a crew's window would be
    /// ([`bench_core::crew::evidence::clean`]: a run-queue wait up to 1 % of the point is
    /// tolerated).
    fn point(
        &mut self,
        lines: Lines,
        delay: Option<u32>,
        loaders: usize,
    ) -> Result<(Sampled, MeasurementCounters), Skip> {
        let threads = if delay.is_some() { loaders } else { 0 };
        let (s, c, _) = counters::try_retry_judged(
            counters::DEFAULT_MAX_ATTEMPTS,
            || self.attempt(lines, delay, threads),
            bench_core::crew::evidence::clean,
        )?;
        Ok((s, c))
    }

    /// One attempt at a point: the traffic threads (a crew on the CPUs after the first)
    /// released together with the chase, which samples for the point's time on this
    /// thread, and stopped when it is done: one window; every thread's counts.
    fn attempt(
        &mut self,
        lines: Lines,
        delay: Option<u32>,
        n_threads: usize,
    ) -> Result<(Sampled, Vec<ThreadCounts>), Skip> {
        let ctx = self.ctx;
        self.samples.clear();
        self.singles.clear();
        let chase_label = format!("chase thread (CPU {})", ctx.cpus[0]);
        if n_threads == 0 {
            let ((), c) = self.chase();
            let sampled = self.sampled(0.0, 0, lines, 0, serde_json::Value::Null);
            return Ok((sampled, vec![ThreadCounts::measuring(chase_label, c)]));
        }
        let (base, bytes, isa) = (self.load_base, self.load_bytes, self.isa);
        let d = delay.unwrap_or(0);
        let plan = WindowPlan {
            window: self.point,
            windows: 1,
            max_windows: 1,
        };
        let crew = Crew::on(&ctx.timer, &ctx.cpus[1..=n_threads]);
        let (w, mut chase) = crew
            .windows_beside(
                plan,
                &|t| {
                    // SAFETY: traffic thread t owns [base + t bytes, + bytes), disjoint from
                    // the chase and the other threads, inside the region the run holds
                    // until the crew is done.
                    let buf = unsafe {
                        std::slice::from_raw_parts_mut((base + t * bytes) as *mut u8, bytes)
                    };
                    Ok::<_, std::convert::Infallible>(Inject::new(buf, lines, isa, d))
                },
                &mut |_| self.chase().1,
            )
            .map_err(|e| Skip::new(e.reason()))?;
        let rec = &w.records()[0];
        let mut threads = vec![ThreadCounts::measuring(chase_label, chase.remove(0))];
        for (t, mut tc) in rec.thread_counts(w.seats()).into_iter().enumerate() {
            tc.measuring = false;
            tc.label = format!("traffic thread {t} (CPU {})", ctx.cpus[1 + t]);
            threads.push(tc);
        }
        let (bw, moved) = rec
            .figure
            .as_ref()
            .map_or((0.0, 0), |f| (f.aggregate_gbs, f.bytes));
        Ok((
            self.sampled(bw, moved, lines, n_threads, w.parameters()),
            threads,
        ))
    }

    /// The samples of the attempt just made: `moved` traffic bytes split by the chunk's
    /// loads and stores.
    fn sampled(
        &self,
        bw: f64,
        moved: u64,
        lines: Lines,
        threads: usize,
        crew: serde_json::Value,
    ) -> Sampled {
        let chunk = lines.chunk_bytes().max(1) as u64;
        let loaded = moved / chunk * (lines.loaded * LINE) as u64;
        Sampled {
            bw,
            loaded,
            stored: moved - loaded,
            batches: self.samples.clone(),
            singles: self.singles.clone(),
            threads,
            crew,
        }
    }

    /// The chase for the point's time (at least 32 batches): batch means, and single
    /// timed loads after each batch; counted.
    fn chase(&mut self) -> ((), Counts) {
        let timer = &self.ctx.timer;
        let end = Instant::now() + self.point;
        let (chain, p, samples, singles) = (
            self.chain,
            &mut self.p,
            &mut self.samples,
            &mut self.singles,
        );
        self.group.count(|| {
            while (Instant::now() < end || samples.len() < 32) && samples.len() < MAX_SAMPLES {
                let a = timer.start();
                *p = chain.walk(*p, BATCH);
                let b = timer.stop();
                samples.push(timer.elapsed_ns(a, b) / BATCH as f64);
                if singles.len() + PER_LOAD_EVERY_BATCH <= MAX_PER_LOAD {
                    for _ in 0..PER_LOAD_EVERY_BATCH {
                        let a = timer.start();
                        *p = chain.step(*p);
                        let b = timer.stop();
                        singles.push(timer.elapsed_ns(a, b));
                    }
                }
            }
        })
    }
}

/// A traffic thread of the crew: chunks of its traffic through its own buffer, as many
/// per call as take about [`bench_core::crew::stream::CALL_NS`] (sized in the warm-up);
/// also the streams of `mem.interference`'s victim and aggressor CPUs.
pub(crate) struct Inject<'b> {
    buf: &'b mut [u8],
    lines: Lines,
    isa: kernels::Isa,
    delay: u32,
    off: usize,
    chunks: usize,
    acc: u64,
}

impl<'b> Inject<'b> {
    pub(crate) fn new(
        buf: &'b mut [u8],
        lines: Lines,
        isa: kernels::Isa,
        delay: u32,
    ) -> Inject<'b> {
        Inject {
            buf,
            lines,
            isa,
            delay,
            off: 0,
            chunks: 1,
            acc: 0,
        }
    }

    fn run(&mut self, n: usize) -> u64 {
        let done =
            traffic::traffic_chunks(self.buf, self.lines, self.isa, self.delay, &mut self.off, n);
        self.acc ^= done.acc;
        std::hint::black_box(self.acc);
        done.loaded + done.stored
    }
}

impl Member for Inject<'_> {
    type Error = std::convert::Infallible;

    /// A millisecond of chunks (the buffer was touched when the region was placed;
    /// with long injection delays a pass over it would take seconds); sizes the calls.
    fn warm(&mut self, _stop: &Stop) -> Result<(), Self::Error> {
        let per_pass = (self.buf.len() / self.lines.chunk_bytes().max(1)).max(1);
        let t0 = Instant::now();
        let mut n = 0;
        while n < 1 || (n < per_pass && t0.elapsed() < Duration::from_millis(1)) {
            self.run(1);
            n += 1;
        }
        let each_ns = t0.elapsed().as_nanos() as f64 / n as f64;
        self.chunks =
            ((bench_core::crew::stream::CALL_NS / each_ns.max(1.0)) as usize).clamp(1, per_pass);
        Ok(())
    }

    fn call(&mut self, _stop: &Stop) -> Result<u64, Self::Error> {
        Ok(self.run(self.chunks))
    }
}

/// Load latency while the other CPUs inject traffic, from full load to idle: an
/// MLC-style latency-vs-bandwidth curve per traffic mix or read share (19 points per
/// named mix; 6 with --quick).
///
/// The first CPU chases pointers over the target's DRAM working set; every other CPU
/// streams through its own buffer in chunks (R lines loaded, then W other lines stored,
/// whole lines, vector instructions), with an injection delay of N pause instructions per
/// 4 KiB of chunk (0 to 6400, then idle). Each point records the chase latency
/// (distribution of 256-load batch means, and the p50/p99 of single timed loads) and the
/// bandwidth the traffic moved (bytes loaded + stored, GB = 1e9 B, RFO not counted).
///
/// Read shares (--read-pct, --mess-family) give curves of any read share of the memory
/// traffic: loads and temporal stores from 100 % to 50 % (a temporal store's RFO read
/// counts as a read), temporal and non-temporal stores below 50 % (0 %: all non-temporal),
/// exact for every whole percentage, in bytes and in instructions. A share whose traffic
/// is a named mix's is that mix (100 read, 80 3r1w, 75 2r1w, 0 nt-write); the others are
/// named shareP (share98). Share curves take an adaptive delay plan: every third delay
/// and idle, then the delay between neighbours whose latency differs by more than 5 %.
/// Only the named mixes give loaded_lat_* keys.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadedArgs {
    /// Traffic mixes, repeatable or comma-separated (default: all five, in this order,
    /// unless --read-pct or --mess-family is given): read (all loads), 3r1w, 2r1w, 1r1w
    /// (loads : temporal stores by instruction count; 80, 75, 67 % reads counting each
    /// store's RFO), nt-write (all non-temporal stores). `read-write`, the copy traffic of
    /// older versions, is accepted as 1r1w.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "MIX,..")]
    pub mix: Vec<Mix>,

    /// Read shares to measure, whole percent 0..=100, repeatable: a comma list with ranges
    /// FROM:TO:STEP (`--read-pct 100,90,50` or `--read-pct 100:0:2`). Replaces the default
    /// named mixes unless --mix is given too; each share one curve of the adaptive delay
    /// plan.
    #[arg(long = "read-pct", value_name = "PCT,..", allow_hyphen_values = true)]
    pub read_pct: Vec<Shares>,

    /// The read shares the Mess simulator reads: 100 % down to 0 % in steps of 2, 51
    /// curves (with --quick every 10 %, 11 curves: --quick changes how many shares, never
    /// what a share means). Replaces the default named mixes unless --mix is given too.
    /// Time: each curve takes the adaptive delay plan, about 10 of the 19 points (4 to 6
    /// of 6 with --quick) at 60 ms each (50 ms), so a family is about 500 points: some
    /// 1 to 2 minutes on a quiet 16-core server (--quick: well under a minute), up to 3 x
    /// that where points are retried for disturbance, besides the DRAM checks every run
    /// makes (a 2-vCPU VM: 54 s for --quick). Export it with `cxlchar export --mess DIR`.
    #[arg(long)]
    pub mess_family: bool,
}

impl LoadedArgs {
    /// The read shares asked for: --read-pct's in order, then the family's (each once).
    pub fn shares(&self, family_step_pct: u32) -> Vec<u32> {
        let fam = if self.mess_family {
            family(family_step_pct)
        } else {
            Vec::new()
        };
        let mut out: Vec<u32> = Vec::new();
        for p in self
            .read_pct
            .iter()
            .flat_map(|s| s.0.iter().copied())
            .chain(fam)
        {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }
}

impl Setup for LoadedArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        let shares = self.shares(opts.effort.mem.loaded_family_step_pct);
        Ok(Planned::one(LoadedLatencyBench {
            curves: plan_curves(&self.mix, &shares),
            adaptive: !shares.is_empty(),
        }))
    }
}

#[cfg(test)]
mod tests;
