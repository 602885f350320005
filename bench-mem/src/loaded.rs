//! `mem.loaded`: load latency under memory traffic (like MLC `--loaded_latency` and
//! multichase `multiload`).
//!
//! The first `--cpu` runs the pointer chase of [`crate::chase`] (the default
//! prefetcher-proof chain: randomized offsets in 256-byte slots, TLB-local order) over the
//! target's DRAM working set ([`bench_core::sizing`]: 4 x the DRAM plateau's start found by
//! the latency sweep, else 4 x the sysfs LLC) while every other `--cpu` streams through its
//! own buffer in chunks separated by an injection delay (a spin loop of `delay` pause
//! instructions), from no delay (full load) through the effort plan's delays
//! ([`bench_core::effort::MemEffort::loaded_delays`], denser near full load, where the
//! curve bends) to no load at all (idle).
//!
//! **Traffic mixes** ([`Mix`], MLC's `-W` family in spirit: all reads, 3:1, 2:1, 1:1,
//! all non-temporal writes). A chunk is `R + W` consecutive cache lines of the thread's
//! buffer ([`Mix::lines`]): the vector read kernel of [`crate::kernels`] loads the first
//! `R`, then the vector store kernel writes the next `W` (every store a full-line write to
//! a line not read in that chunk; temporal `storeu`, or streaming stores + `sfence` for
//! `nt-write`, the NT kernels' own fence). Loads and stores have the same vector width and
//! every part is a multiple of four lines (one unrolled AVX-512 step), so `R:W` is the
//! ratio of load to store instructions as well as of bytes. Chunks follow each other
//! through the buffer, wrapping before a chunk would pass its end. The bandwidth of a point
//! is the bytes the traffic threads loaded + stored / their time (GB = 10^9 B); the read
//! for ownership a temporal store causes is not counted there, but it is in the point's
//! `read_pct` (the read share of the memory traffic: 3r1w = 4 reads per write = 80 %).
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
use bench_core::keys::parameters as pk;
use bench_core::memory::{OnMemory, Placement, Region, TargetSpec};
use bench_core::params::{Measurement, Warning};
use bench_core::sizing::DramSizing;
use bench_core::stats::Distribution;
use bench_core::units::{format_size, MIB};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The traffic of the load threads (also the `--mix` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Mix {
    /// All loads (100 % reads).
    Read,
    /// 3 loads : 1 temporal store (80 % reads with the store's RFO; like MLC -W3).
    #[value(name = "3r1w")]
    R3W1,
    /// 2 loads : 1 temporal store (75 % reads; like MLC -W2).
    #[value(name = "2r1w")]
    R2W1,
    /// 1 load : 1 temporal store (67 % reads; like MLC -W5). `read-write`, the name of the
    /// copy traffic it replaces, is accepted for it.
    #[value(name = "1r1w", alias = "read-write")]
    R1W1,
    /// All non-temporal stores + sfence (0 % reads; like MLC -W6).
    #[value(name = "nt-write")]
    NtWrite,
}

impl Mix {
    /// Every mix, in the order measured by default.
    pub const ALL: [Mix; 5] = [Mix::Read, Mix::R3W1, Mix::R2W1, Mix::R1W1, Mix::NtWrite];

    /// Name in ids, in the `mix` parameter and as given to `--mix`.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::R3W1 => "3r1w",
            Mix::R2W1 => "2r1w",
            Mix::R1W1 => "1r1w",
            Mix::NtWrite => "nt-write",
        }
    }

    /// The part of the params keys naming the mix (`None` for reads, whose keys carry no
    /// mix: `loaded_lat_max_bw_gbs`).
    pub fn key_part(self) -> Option<&'static str> {
        match self {
            Mix::Read => None,
            Mix::R3W1 => Some("3r1w"),
            Mix::R2W1 => Some("2r1w"),
            Mix::R1W1 => Some("1r1w"),
            Mix::NtWrite => Some("nt_write"),
        }
    }

    /// Cache lines (loaded, stored) of one chunk: the first are loaded, the next stored.
    /// Each part is a multiple of 4 lines (256 B, one unrolled AVX-512 step) and the
    /// chunk at most 4 KiB.
    pub fn lines(self) -> (usize, usize) {
        match self {
            Mix::Read => (64, 0),
            Mix::R3W1 => (48, 16),
            Mix::R2W1 => (40, 20),
            Mix::R1W1 => (32, 32),
            Mix::NtWrite => (0, 64),
        }
    }

    /// Bytes of one chunk.
    pub fn chunk_bytes(self) -> usize {
        let (r, w) = self.lines();
        (r + w) * LINE
    }

    /// Whether the stores are non-temporal (streaming, no RFO).
    pub fn nt(self) -> bool {
        self == Mix::NtWrite
    }

    /// Loads : stores, reduced (`"3:1"`).
    pub fn ratio(self) -> String {
        let (r, w) = self.lines();
        let g = gcd(r, w);
        format!("{}:{}", r / g, w / g)
    }

    /// Read share of the memory traffic in percent, rounded: loaded lines plus one RFO
    /// read per temporally stored line, over that plus the stored lines.
    pub fn read_pct(self) -> u32 {
        let (r, w) = self.lines();
        let reads = r + if self.nt() { 0 } else { w };
        ((100 * reads) as f64 / (reads + w) as f64).round() as u32
    }

    /// What one chunk does, for the method string.
    fn chunk_text(self) -> String {
        let (r, w) = self.lines();
        match self {
            Mix::Read => format!("{r} lines loaded (vector loads)"),
            Mix::NtWrite => format!("{w} lines stored with non-temporal vector stores, then sfence"),
            _ => format!("{r} lines loaded (vector loads), then the next {w} lines stored whole (temporal vector stores)"),
        }
    }

    /// What a store is, for the output.
    fn store_kind(self) -> &'static str {
        match self {
            Mix::Read => "none",
            Mix::NtWrite => "non-temporal (streaming) stores + sfence per chunk",
            _ => "temporal vector stores (storeu)",
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The mixes of a `--mix` list: in the order given, each once; all of them when empty.
pub fn mixes_of(given: &[Mix]) -> Vec<Mix> {
    if given.is_empty() {
        return Mix::ALL.to_vec();
    }
    let mut out: Vec<Mix> = Vec::new();
    for &m in given {
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

const LINE: usize = 64;
/// Most chase batch samples of one point (their buffer is touched before the counted loop).
const MAX_SAMPLES: usize = 200_000;
/// Loads per batch sample (the headline distribution's unit).
const BATCH: usize = 256;
/// Single timed loads after each batch.
pub const PER_LOAD_EVERY_BATCH: usize = 16;
/// Most single-load samples of one point.
const MAX_PER_LOAD: usize = 1_000_000;
/// The byte the traffic stores.
const STORE_BYTE: u8 = 0x5a;

/// Bytes a traffic thread issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Issued {
    /// Bytes loaded.
    pub loaded: u64,
    /// Bytes stored.
    pub stored: u64,
    /// Checksum of what was loaded (for `black_box`).
    pub acc: u64,
}

/// One traffic thread's stream: chunks of `mix` through `buf` in turn (wrapping before a
/// chunk would pass its end), `delay` pauses after each chunk, while `go()` says so (asked
/// before each chunk). `buf` must hold at least one chunk; `isa` must be usable.
pub fn traffic(
    buf: &mut [u8],
    mix: Mix,
    isa: kernels::Isa,
    delay: u32,
    mut go: impl FnMut() -> bool,
) -> Issued {
    let (r, w) = mix.lines();
    let (rb, chunk) = (r * LINE, mix.chunk_bytes());
    assert!(buf.len() >= chunk, "traffic buffer smaller than one chunk");
    let mut off = 0usize;
    let mut out = Issued::default();
    while go() {
        let (ld, st) = buf[off..off + chunk].split_at_mut(rb);
        if r > 0 {
            out.acc ^= kernels::read(isa, ld);
        }
        if w > 0 {
            kernels::write(isa, mix.nt(), st, STORE_BYTE);
        }
        out.loaded += rb as u64;
        out.stored += (w * LINE) as u64;
        off += chunk;
        if off + chunk > buf.len() {
            off = 0;
        }
        for _ in 0..delay {
            std::hint::spin_loop();
        }
    }
    out
}

/// The loaded-latency benchmark.
#[derive(Debug, Clone)]
pub struct LoadedLatencyBench {
    /// Traffic mixes (default all five).
    pub mixes: Vec<Mix>,
}

impl Default for LoadedLatencyBench {
    fn default() -> Self {
        LoadedLatencyBench {
            mixes: Mix::ALL.to_vec(),
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
        .map_err(|e| Skip::new(e.to_string()))?;
    let target = region.origin().to_string();
    let placement = region.placement().clone();
    let (chase_mem, load_mem) = region.as_mut_slice().split_at_mut(span);
    let chain = Chain::build(
        chase_mem,
        layout,
        ChaseOrder::DEFAULT,
        chase_bytes,
        ctx.seed,
    )
    .map_err(|e| Skip::new(e.to_string()))?;
    bench_core::pin::pin_current(ctx.cpus[0]).map_err(|e| Skip::new(e.to_string()))?;
    let mut rig = Rig {
        ctx,
        p: chain.cursor(),
        chain: &chain,
        load_base: load_mem.as_mut_ptr() as usize,
        load_bytes,
        isa,
        point: ctx.effort.mem.loaded_point,
        group: CounterGroup::open_with_timer(&ctx.timer),
        samples: counters::sample_buffer(MAX_SAMPLES),
        singles: counters::sample_buffer(MAX_PER_LOAD),
    };
    let labels = Labels {
        target: &target,
        placement: &placement,
        chase_bytes,
        sizing,
        chase: chain.describe(),
    };
    let (sampled, counters) = rig.point(Mix::Read, Some(0), loaders);
    let b = LoadedLatencyBench::default();
    let (point, mut m) = b.measurement(&rig, &labels, (Mix::Read, Some(0)), sampled, counters)?;
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
        let chain = Chain::build(
            chase_mem,
            layout,
            ChaseOrder::DEFAULT,
            chase_bytes,
            ctx.seed,
        )
        .map_err(|e| Skip::new(e.to_string()))?;
        let mut rep = Report::default();
        if loaders == 1 {
            rep.warnings.push(Warning {
                code: "loaded_one_thread".into(),
                message: format!("{target}: 2 CPUs: one traffic thread, so the loaded-latency curve ends at what one core can inject"),
                remediation: "run on more CPUs (--cpu) for the full curve".into(),
            });
        }
        bench_core::pin::pin_current(ctx.cpus[0]).map_err(|e| Skip::new(e.to_string()))?;
        let mut rig = Rig {
            ctx,
            p: chain.cursor(),
            chain: &chain,
            load_base: load_mem.as_mut_ptr() as usize,
            load_bytes,
            isa,
            point: ctx.effort.mem.loaded_point,
            group: CounterGroup::open_with_timer(&ctx.timer),
            samples: counters::sample_buffer(MAX_SAMPLES),
            singles: counters::sample_buffer(MAX_PER_LOAD),
        };
        let labels = Labels {
            target: &target,
            placement: &placement,
            chase_bytes,
            sizing: &sizing,
            chase: chain.describe(),
        };
        for &mix in &self.mixes {
            let mut curve: Vec<Point> = Vec::new();
            for &delay in ctx.effort.mem.loaded_delays {
                let (sampled, counters) = rig.point(mix, delay, loaders);
                let (point, m) =
                    self.measurement(&rig, &labels, (mix, delay), sampled, counters)?;
                ctx.progress(&format!(
                    "{}: {:.1} ns (per load p99 {:.1} ns) at {:.1} GB/s{}",
                    m.id,
                    point.p50,
                    point.per_load_p99,
                    point.bw,
                    m.counters.as_ref().map_or(String::new(), |c| c.summary())
                ));
                curve.push(point);
                rep.measurements.push(m);
            }
            rep.params
                .extend(curve_params(&labels, mix, &curve, loaders));
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
    /// The measurement of one point of `mix`'s curve, and the point.
    fn measurement(
        &self,
        rig: &Rig<'_, '_>,
        labels: &Labels<'_>,
        (mix, delay): (Mix, Option<u32>),
        s: Sampled,
        counters: MeasurementCounters,
    ) -> Result<(Point, Measurement), NotRun> {
        let (target, sizing, timer) = (labels.target, labels.sizing, rig.ctx.timer.info());
        let (r_lines, w_lines) = mix.lines();
        let counters =
            counters.with_per_op("load", (BATCH * s.batches.len() + s.singles.len()) as u64);
        let d = Distribution::from_samples(&s.batches)
            .ok_or_else(|| Skip::new("no valid chase samples"))?;
        let per_load = Distribution::from_samples(&s.singles)
            .ok_or_else(|| Skip::new("no valid single-load chase samples"))?;
        let label = delay.map_or("idle".to_string(), |d| format!("d{d}"));
        let id = format!("mem.loaded/{target}/{}/{label}", mix.name());
        let point = Point {
            bw: s.bw,
            p50: d.p50,
            per_load_p99: per_load.p99,
            id: id.clone(),
        };
        let mut parameters = json!({
            "mix": mix.name(), "delay_pause": delay, "traffic_threads": s.threads,
            "injected_bw_gbs": s.bw, "chase_bytes": labels.chase_bytes, "traffic_bytes_per_thread": rig.load_bytes,
            "chunk_bytes": mix.chunk_bytes(), "isa": rig.isa.name(), "chase_cpu": rig.ctx.cpus[0],
            "chase": &labels.chase, "sizing_rule": sizing.rule, "sizing": sizing.explain(),
        });
        for (k, v) in [
            (pk::READ_PCT, json!(mix.read_pct())),
            (pk::LOAD_STORE_RATIO, json!(mix.ratio())),
            ("chunk_lines", json!({ "loaded": r_lines, "stored": w_lines })),
            ("stores", json!(mix.store_kind())),
            ("traffic_loaded_bytes", json!(s.loaded)),
            ("traffic_stored_bytes", json!(s.stored)),
            ("bytes_counted", json!("bytes loaded + bytes stored by the traffic threads' instructions; no RFO, no write-back, not the chase; GB = 1e9 B")),
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
                "distribution: means of {BATCH}-load dependent chase batches on the first CPU (ns per load, timer overhead subtracted; MLC-comparable), while the other CPUs each run {} traffic over their own buffer, chunk after chunk: {}, then {} pause instructions; per_load_p50_ns / per_load_p99_ns: {PER_LOAD_EVERY_BATCH} single timed loads after each batch (timer overhead subtracted); injected_bw_gbs = bytes loaded + stored by the traffic threads / their time (GB = 1e9 B, RFO not counted); read_pct = {} (loaded lines + one RFO read per temporally stored line, over that + stored lines)",
                mix.name(),
                mix.chunk_text(),
                delay.map_or("(idle: no traffic threads)".to_string(), |d| d.to_string()),
                mix.read_pct()
            ),
            distribution: d,
            placement: Some(labels.placement.clone()),
            counters: Some(counters),
        };
        Ok((point, m))
    }
}

/// The keys of one mix's curve: its largest injected bandwidth and the latency (p50 and
/// per-load p99) there.
fn curve_params(labels: &Labels<'_>, mix: Mix, curve: &[Point], loaders: usize) -> Vec<Param> {
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
                        mix.ratio(),
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

/// One point's samples: the injected bandwidth (GB/s), the bytes the traffic loaded and
/// stored, the chase's batch means and single loads, and the traffic threads.
struct Sampled {
    bw: f64,
    loaded: u64,
    stored: u64,
    batches: Vec<f64>,
    singles: Vec<f64>,
    threads: usize,
}

impl Rig<'_, '_> {
    /// One point: `loaders` traffic threads with `delay` (none when idle) beside the
    /// chase, repeated while a thread was disturbed.
    fn point(
        &mut self,
        mix: Mix,
        delay: Option<u32>,
        loaders: usize,
    ) -> (Sampled, MeasurementCounters) {
        let threads = if delay.is_some() { loaders } else { 0 };
        counters::retry_undisturbed(counters::DEFAULT_MAX_ATTEMPTS, || {
            self.attempt(mix, delay, threads)
        })
    }

    /// One attempt at a point: the traffic threads started, the chase sampled for the
    /// point's time, the threads stopped; every thread's counts.
    fn attempt(
        &mut self,
        mix: Mix,
        delay: Option<u32>,
        n_threads: usize,
    ) -> (Sampled, Vec<ThreadCounts>) {
        let ctx = self.ctx;
        let stop = AtomicBool::new(false);
        let loaded = AtomicU64::new(0);
        let stored = AtomicU64::new(0);
        let mut traffic_ns = 0u64;
        let mut threads = Vec::with_capacity(1 + n_threads);
        self.samples.clear();
        self.singles.clear();
        let (base, bytes, isa) = (self.load_base, self.load_bytes, self.isa);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..n_threads)
                .map(|t| {
                    let (stop, loaded, stored) = (&stop, &loaded, &stored);
                    let cpu = ctx.cpus[1 + t];
                    let buf = (base + t * bytes, bytes);
                    let d = delay.unwrap_or(0);
                    s.spawn(move || inject(cpu, buf, (mix, isa, d), stop, (loaded, stored)))
                })
                .collect();
            let ((), c) = self.chase();
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
        let (ld, st) = (loaded.into_inner(), stored.into_inner());
        let bw = if traffic_ns > 0 {
            (ld + st) as f64 / traffic_ns as f64
        } else {
            0.0
        };
        let sampled = Sampled {
            bw,
            loaded: ld,
            stored: st,
            batches: self.samples.clone(),
            singles: self.singles.clone(),
            threads: n_threads,
        };
        (sampled, threads)
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

/// A traffic thread pinned to `cpu`: `mix` traffic through its buffer (`buf`: address,
/// length) with `delay` pauses after each chunk until `stop`; adds the bytes it loaded
/// and stored; returns its time (ns) and counts.
fn inject(
    cpu: usize,
    (addr, len): (usize, usize),
    (mix, isa, delay): (Mix, kernels::Isa, u32),
    stop: &AtomicBool,
    (loaded, stored): (&AtomicU64, &AtomicU64),
) -> (u64, Counts) {
    let _ = bench_core::pin::pin_current(cpu);
    let mut g = CounterGroup::open();
    // SAFETY: each traffic thread owns its [addr, addr + len), disjoint from the chase and
    // from the other threads, inside the region the run holds until they are joined.
    let buf = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
    let t0 = Instant::now();
    let (done, c) = g.count(|| traffic(buf, mix, isa, delay, || !stop.load(Ordering::Relaxed)));
    std::hint::black_box(done.acc);
    loaded.fetch_add(done.loaded, Ordering::Relaxed);
    stored.fetch_add(done.stored, Ordering::Relaxed);
    (t0.elapsed().as_nanos() as u64, c)
}

/// Load latency while the other CPUs inject traffic, from full load to idle: an
/// MLC-style latency-vs-bandwidth curve per traffic mix (19 points per mix; 9 with
/// --quick).
///
/// The first CPU chases pointers over the target's DRAM working set; every other CPU
/// streams through its own buffer in chunks of at most 4 KiB (R lines loaded, then W
/// other lines stored, whole lines, vector instructions), with an injection delay of N
/// pause instructions after each chunk (0 to 6400, then idle). Each point records the
/// chase latency (distribution of 256-load batch means, and the p50/p99 of single timed
/// loads) and the bandwidth the traffic moved (bytes loaded + stored, GB = 1e9 B, RFO not
/// counted).
#[derive(Debug, Clone, clap::Args)]
pub struct LoadedArgs {
    /// Traffic mixes, repeatable or comma-separated (default: all five, in this order):
    /// read (all loads), 3r1w, 2r1w, 1r1w (loads : temporal stores by instruction count;
    /// 80, 75, 67 % reads counting each store's RFO), nt-write (all non-temporal stores).
    /// `read-write`, the copy traffic of older versions, is accepted as 1r1w.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "MIX,..")]
    pub mix: Vec<Mix>,
}

impl Setup for LoadedArgs {
    fn plan(&self, _opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(LoadedLatencyBench {
            mixes: mixes_of(&self.mix),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: LoadedArgs,
    }

    fn parse(args: &[&str]) -> Result<Vec<Mix>, clap::Error> {
        let cli = Cli::try_parse_from(std::iter::once("loaded").chain(args.iter().copied()))?;
        Ok(mixes_of(&cli.args.mix))
    }

    #[test]
    fn mixes_parse_with_lists_repeats_and_the_old_name() {
        assert_eq!(parse(&[]).unwrap(), Mix::ALL.to_vec());
        assert_eq!(parse(&["--mix", "read"]).unwrap(), vec![Mix::Read]);
        assert_eq!(
            parse(&["--mix", "nt-write,3r1w", "--mix", "2r1w", "--mix", "3r1w"]).unwrap(),
            vec![Mix::NtWrite, Mix::R3W1, Mix::R2W1]
        );
        assert_eq!(parse(&["--mix", "read-write"]).unwrap(), vec![Mix::R1W1]);
        assert_eq!(
            parse(&["--mix", "1r1w,read-write"]).unwrap(),
            vec![Mix::R1W1]
        );
        assert!(parse(&["--mix", "copy"]).is_err());
        for m in Mix::ALL {
            assert_eq!(parse(&["--mix", m.name()]).unwrap(), vec![m]);
        }
    }

    #[test]
    fn read_shares_and_ratios_are_the_contract() {
        let want = [
            (Mix::Read, 100, "1:0"),
            (Mix::R3W1, 80, "3:1"),
            (Mix::R2W1, 75, "2:1"),
            (Mix::R1W1, 67, "1:1"),
            (Mix::NtWrite, 0, "0:1"),
        ];
        for (m, pct, ratio) in want {
            assert_eq!(m.read_pct(), pct, "{}", m.name());
            assert_eq!(m.ratio(), ratio, "{}", m.name());
            let (r, w) = m.lines();
            // Whole 256-byte vector steps in each part, at most 4 KiB per chunk.
            assert_eq!(r % 4, 0);
            assert_eq!(w % 4, 0);
            assert!(m.chunk_bytes() <= 4096 && m.chunk_bytes() >= 3840);
        }
        // Key parts are well formed and distinct.
        let parts: Vec<_> = Mix::ALL.iter().filter_map(|m| m.key_part()).collect();
        assert_eq!(parts, ["3r1w", "2r1w", "1r1w", "nt_write"]);
        for p in parts {
            for k in [
                format!("loaded_lat_max_bw_{p}_gbs"),
                format!("loaded_lat_at_max_bw_{p}_ns"),
                format!("loaded_lat_p99_at_max_bw_{p}_ns"),
            ] {
                assert!(bench_core::keys::lookup(&k).is_some(), "{k} not registered");
            }
        }
    }

    /// Runs `chunks` chunks of `mix` over a buffer of `len` bytes filled with 0x11.
    fn run_chunks(mix: Mix, isa: kernels::Isa, len: usize, chunks: usize) -> (Vec<u8>, Issued) {
        let mut buf = vec![0x11u8; len];
        let mut left = chunks;
        let done = traffic(&mut buf, mix, isa, 0, || {
            let go = left > 0;
            left = left.saturating_sub(1);
            go
        });
        (buf, done)
    }

    #[test]
    fn traffic_issues_its_ratio_and_stores_only_where_it_should() {
        let isas = IsaSet::detect();
        for isa in [
            kernels::Isa::Scalar,
            kernels::Isa::Sse2,
            kernels::Isa::Avx2,
            kernels::Isa::Avx512,
        ]
        .into_iter()
        .filter(|&i| isas.has(i))
        {
            for mix in Mix::ALL {
                let chunk = mix.chunk_bytes();
                let (r, w) = mix.lines();
                // Five chunks fit (plus a partial one that is never touched); seven run,
                // so the last two wrap to the start.
                let len = 5 * chunk + chunk / 2;
                let (buf, done) = run_chunks(mix, isa, len, 7);
                assert_eq!(done.loaded, 7 * (r * LINE) as u64, "{}", mix.name());
                assert_eq!(done.stored, 7 * (w * LINE) as u64, "{}", mix.name());
                if w > 0 {
                    assert_eq!(done.loaded * w as u64, done.stored * r as u64);
                }
                for (i, c) in buf.chunks(chunk).enumerate() {
                    if i == 5 {
                        assert!(c.iter().all(|&b| b == 0x11), "tail untouched");
                        continue;
                    }
                    let (ld, st) = c.split_at(r * LINE);
                    assert!(ld.iter().all(|&b| b == 0x11), "{}: loads only", mix.name());
                    assert!(
                        st.iter().all(|&b| b == STORE_BYTE),
                        "{}: chunk {i} fully stored",
                        mix.name()
                    );
                }
            }
        }
    }

    #[test]
    fn max_bandwidth_index_ignores_idle() {
        assert_eq!(max_bandwidth_index(&[10.0, 14.0, 3.0, 0.0]), Some(1));
        assert_eq!(max_bandwidth_index(&[0.0]), None);
        assert_eq!(max_bandwidth_index(&[]), None);
    }

    #[test]
    fn one_cpu_is_a_reasoned_skip() {
        let ctx = Context {
            cpus: vec![bench_core::pin::allowed_cpus()[0]],
            ..Context::quick_local()
        };
        let b = LoadedLatencyBench::default();
        let e = b
            .check(&ctx, &bench_core::memory::TargetSpec::Anon)
            .unwrap_err();
        assert!(e.reason.contains("needs 2 CPUs"), "{e}");
    }
}
