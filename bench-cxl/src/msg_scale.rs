//! `pool.msg-scale`: seed 002's two-sided message scaling (Sec. 4.2, Figs. 7-8: latency
//! and bandwidth as the process count grows) and its cell-size sweep (Sec. 4.3, Fig. 9),
//! on one machine through one pool window.
//!
//! P pairs of pinned threads (a sender on one CPU, its receiver on another; never two
//! threads on one CPU) each get their own SPSC queue of fixed-size message [`cells`] in
//! the window (cMPI's matrix of SPSC queues, Sec. 3.3), plus a small queue back for
//! echoes and acknowledgements. A message longer than a cell's payload is split into
//! cell-sized chunks sent one after the other (Sec. 4.3).
//!
//! * **Latency** (per P): one-way latency of an 8-byte message, echo round trip / 2,
//!   every pair at once; p50 over the samples of all pairs.
//! * **Bandwidth** (per P and message size): every sender streams messages to its
//!   receiver, which copies each out into its own buffer. The pairs are a crew
//!   ([`bench_core::crew`], `pairs.rs`): released together into windows, stopped together;
//!   a window's aggregate bandwidth = the payload all receivers copied out (counted once,
//!   as OSU's bandwidth tests and the paper count it) in the time all of them ran / that
//!   time; GB = 1e9 B. p50 over the undisturbed windows.
//! * **Cell sizes** (Fig. 9): the bandwidth curve at the largest P for each cell size;
//!   per cell size the peak and the message size where it peaks.
//!
//! The pairs sweep uses 64 KiB cells (`--pairs-cell`), the paper's setting for
//! Figs. 7-8. The pool is a scratch file in /dev/shm unless `--pool` names one (the
//! options of `pool msg`); its header is claimed like `pool msg`'s leader claims it.

use crate::cells::{self, CellError};
use crate::measurement;
use crate::msg::PoolArgs;
use crate::pool::{claim_header, off, state, PoolError, PoolMap, PoolSource, PoolSpec};
use crate::pool::{HEADER_BYTES, MIN_POOL_BYTES};
use crate::ring::Coherence;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup,
};
use bench_core::memory::TargetSpec;
use bench_core::params::Skipped;
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use bench_core::topology::ladder::Ladder;
use bench_core::units::format_size;
use std::time::Duration;

mod memory;
mod pairs;

/// Cells in each pair's queue from sender to receiver.
pub const CELLS_PER_QUEUE: usize = 8;
/// The queue back (echoes, acknowledgements): cells of this size...
const BACK_CELL: usize = 256;
/// ...and this many.
const BACK_CELLS: usize = 4;
/// Every queue starts on its own page (pairs never share a line).
const ALIGN: usize = 4096;
/// The latency message.
const LAT_BYTES: usize = 8;
/// The pair counts of the paper's figures (2 .. 32 processes).
pub const PAPER_PAIRS: [usize; 5] = [1, 2, 4, 8, 16];
/// How long one measurement may take before the run is declared stuck.
const STALL: Duration = Duration::from_secs(60);

/// Where each pair's queues lie in the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Offsets of each pair's forward and back queue.
    pub pairs: Vec<(usize, usize)>,
    /// Bytes of a forward queue (page-rounded).
    pub fwd_bytes: usize,
    /// Bytes of a back queue (page-rounded).
    pub back_bytes: usize,
    /// Bytes the window needs (its header included).
    pub total: usize,
}

/// The layout of `pairs` pairs with forward cells of `cell` bytes, after the pool header.
pub fn layout(pairs: usize, cell: usize) -> Layout {
    let fwd_bytes = cells::queue_bytes(cell, CELLS_PER_QUEUE).next_multiple_of(ALIGN);
    let back_bytes = cells::queue_bytes(BACK_CELL, BACK_CELLS).next_multiple_of(ALIGN);
    let per = fwd_bytes + back_bytes;
    Layout {
        pairs: (0..pairs)
            .map(|i| {
                let f = HEADER_BYTES + i * per;
                (f, f + fwd_bytes)
            })
            .collect(),
        fwd_bytes,
        back_bytes,
        total: HEADER_BYTES + pairs * per,
    }
}

/// One pair count of the sweep: P pairs on 2 P CPUs of a rung of the thread ladder
/// (pair i on `cpus[2 i]` and `cpus[2 i + 1]`), and what the rung is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRung {
    /// Pairs.
    pub pairs: usize,
    /// Their CPUs, sender then receiver of each pair.
    pub cpus: Vec<usize>,
    /// The rung, in words.
    pub label: String,
}

/// The pair counts to run: half of each rung of the thread ladder of two CPUs or more
/// (`bench_core::topology::ladder`: 2, 4, 8, ... CPUs and each level of the machine;
/// never two threads on one CPU), and the paper's pair counts that cannot run.
pub fn pair_rungs(ladder: &Ladder) -> (Vec<PairRung>, Vec<usize>) {
    let mut run: Vec<PairRung> = Vec::new();
    for r in &ladder.rungs {
        let pairs = r.threads / 2;
        if pairs == 0 || run.iter().any(|x| x.pairs == pairs) {
            continue;
        }
        run.push(PairRung {
            pairs,
            cpus: r.cpus[..2 * pairs].to_vec(),
            label: r.label.clone(),
        });
    }
    let max = run.iter().map(|r| r.pairs).max().unwrap_or(0);
    let not_run = PAPER_PAIRS.iter().copied().filter(|&p| p > max).collect();
    (run, not_run)
}

/// Message sizes: 1 KiB .. 1 MiB, powers of two (`every`) or of four.
pub fn sizes(every: bool) -> Vec<usize> {
    (10..=20)
        .filter(|i| every || i % 2 == 0)
        .map(|i| 1usize << i)
        .collect()
}

/// The highest point of a (size, value) curve; the smallest size on a tie.
pub fn peak(curve: &[(usize, f64)]) -> Option<(usize, f64)> {
    curve.iter().copied().filter(|(_, v)| v.is_finite()).fold(
        None,
        |best: Option<(usize, f64)>, (s, v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((s, v)),
        },
    )
}

/// Why a measurement stopped.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// Data arrived damaged.
    #[error(
        "pair {pair}: a message arrived with the wrong size or sequence number (message {at})"
    )]
    BadData {
        /// The pair.
        pair: usize,
        /// The message.
        at: u64,
    },
    /// A queue could not be set up.
    #[error("pair {pair}: {err}")]
    Queue {
        /// The pair.
        pair: usize,
        /// The error that made the cell unmeasurable.
        err: CellError,
    },
    /// No progress.
    #[error("no progress for {0:?}: a pair is stuck (a thread did not get its CPU?)")]
    Stalled(Duration),
    /// Another thread gave up.
    #[error("another thread of the run gave up")]
    Aborted,
    /// Not even one pair fits the CPUs.
    #[error("one pair needs two CPUs (a sender and a receiver); this run has {0} (--cpu)")]
    TooFewCpus(usize),
    /// The crew of pairs did not run (a thread could not be pinned, or panicked).
    #[error("{0}")]
    Crew(String),
    /// The pool.
    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// One point of a bandwidth curve: the message size, the p50 (GB/s), the measurement id
/// and why it is noisy.
struct CurvePoint {
    size: usize,
    p50: f64,
    id: String,
    noisy: Option<String>,
}

/// What one measuring run does.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Timed echoes of 8 bytes per pair.
    Lat,
    /// Messages of `size` bytes streamed by every pair.
    Bw { size: usize },
}

impl Phase {
    /// Bytes of each message of the phase.
    fn message_bytes(self) -> usize {
        match self {
            Phase::Lat => LAT_BYTES,
            Phase::Bw { size } => size,
        }
    }
}

/// The benchmark.
#[derive(Debug, Clone)]
pub struct MsgScaleBench {
    /// The pool; `None`: a scratch file in /dev/shm, removed afterwards.
    pub pool: Option<PoolSpec>,
    /// Cell sizes of the cell-size sweep (bytes, multiples of 1 KiB).
    pub cells: Vec<usize>,
    /// Cell size of the pairs sweep.
    pub pairs_cell: usize,
    /// Coherent (default) or non-coherent protocol.
    pub mode: Coherence,
}

struct Sweep<'a> {
    ctx: &'a Context,
    pool: &'a PoolMap,
    target: String,
    mode: Coherence,
    placement: bench_core::memory::Placement,
    report: Report,
    /// The CPUs of the pair count under way (a rung of the thread ladder).
    pair_cpus: Vec<usize>,
    /// That rung, in words.
    rung: String,
}

impl Sweep<'_> {
    fn cpus(&self, p: usize) -> Vec<(usize, usize)> {
        (0..p)
            .map(|i| (self.pair_cpus[2 * i], self.pair_cpus[2 * i + 1]))
            .collect()
    }

    fn base_params(&self, p: usize, cell: usize) -> serde_json::Value {
        serde_json::json!({
            "pairs": p,
            "cpus_sender_receiver": self.cpus(p),
            "rung": self.rung,
            "mode": self.mode.name(),
            "cell_bytes": cell,
            "cell_payload_bytes": cells::payload_of(cell),
            "cells_per_queue": CELLS_PER_QUEUE,
        })
    }

    /// Runs `phase` with `p` pairs of `cell`-byte cells: the crew's windows and the pairs'
    /// states.
    fn phase(
        &self,
        p: usize,
        cell: usize,
        phase: Phase,
    ) -> Result<(bench_core::crew::Windows, Vec<pairs::PairState>), ScaleError> {
        let lay = layout(p, cell);
        let queues = pairs::init_queues(self.pool, &lay, cell, self.mode)?;
        pairs::run(self.ctx, &queues, &self.cpus(p), self.mode, phase)
    }

    /// The latency of 8-byte echoes with `p` pairs: the measurement id, the p50 and why it
    /// is noisy.
    fn latency(
        &mut self,
        p: usize,
        cell: usize,
    ) -> Result<(String, f64, Option<String>), ScaleError> {
        let (w, states) = self.phase(p, cell, Phase::Lat)?;
        let (all, per_pair) = pairs::latency_samples(&w, &states);
        let d = Distribution::from_samples(&all).ok_or(ScaleError::Aborted)?;
        let id = format!(
            "pool.msg-scale/{}/{}/pairs/p{p}/lat/{LAT_BYTES}B",
            self.target,
            self.mode.name()
        );
        let mut params = self.base_params(p, cell);
        params["test"] = "latency".into();
        params["size_bytes"] = LAT_BYTES.into();
        params["samples_per_pair_per_window_max"] =
            self.ctx.effort.pool.msg_scale_round_trips.into();
        params["p50_per_pair_ns"] = per_pair.into();
        params["crew"] = w.parameters();
        let p50 = d.p50;
        let n = d.n;
        self.report.warnings.extend(w.warnings(&self.target, &id));
        self.report.measurements.push(measurement(
            id.clone(),
            "pool.msg-scale",
            &self.target,
            params,
            "ns",
            format!("one-way latency (echo round trip / 2, cycle timer, overhead subtracted) of an {LAT_BYTES}-byte message through a cell queue in the pool, {p} pair(s) echoing at once, samples of all pairs pooled ({}); the pairs a crew: {}", self.mode.name(), w.method()),
            d,
            Some(self.placement.clone()),
            w.counters().with_per_op("message", 2 * n),
        ));
        self.ctx.point_done();
        Ok((id, p50, w.noisy()))
    }

    /// The bandwidth curve with `p` pairs and `cell`-byte cells.
    fn curve(&mut self, p: usize, cell: usize, what: &str) -> Result<Vec<CurvePoint>, ScaleError> {
        let mut out = Vec::new();
        for size in sizes(self.ctx.effort.pool.msg_scale_every_size) {
            self.ctx.progress(&format!(
                "pool.msg-scale on {}: {what}, {p} pair(s), {} cells, {} messages ({})",
                self.target,
                format_size(cell),
                format_size(size),
                self.mode.name()
            ));
            let (w, _) = self.phase(p, cell, Phase::Bw { size })?;
            let d = w.aggregate().ok_or(ScaleError::Aborted)?;
            let id = match what {
                "pairs" => format!(
                    "pool.msg-scale/{}/{}/pairs/p{p}/bw/{}",
                    self.target,
                    self.mode.name(),
                    format_size(size)
                ),
                _ => format!(
                    "pool.msg-scale/{}/{}/cells/{}/p{p}/bw/{}",
                    self.target,
                    self.mode.name(),
                    format_size(cell),
                    format_size(size)
                ),
            };
            let mut params = self.base_params(p, cell);
            params["test"] = format!("{what}_bw").into();
            params["size_bytes"] = size.into();
            params["chunks_per_message"] = cells::chunks(size, cell).into();
            params["bytes_counted"] = "payload copied out by the receivers (each byte once)".into();
            params["crew"] = w.parameters();
            out.push(CurvePoint {
                size,
                p50: d.p50,
                id: id.clone(),
                noisy: w.noisy(),
            });
            let bytes: u64 = w.used().iter().map(|f| f.bytes).sum();
            self.report.warnings.extend(w.warnings(&self.target, &id));
            self.report.measurements.push(measurement(
                id,
                "pool.msg-scale",
                &self.target,
                params,
                "GB/s",
                format!("aggregate payload bandwidth (counted once, 1e9 B/s) of {p} pair(s), each streaming {size}-byte messages through its own queue of {CELLS_PER_QUEUE} {cell}-byte cells (messages over {} bytes split into cell-sized chunks), the receiver copying each out; the receivers are a crew's measuring threads (the senders its helpers): {} ({})", cells::payload_of(cell), w.method(), self.mode.name()),
                d,
                Some(self.placement.clone()),
                w.counters().with_per_op("byte", bytes),
            ));
            self.ctx.point_done();
        }
        Ok(out)
    }

    /// Whether `p` pairs' queues of `cell`-byte cells fit the window.
    fn fits(&self, p: usize, cell: usize) -> bool {
        layout(p, cell).total <= self.pool.len()
    }

    /// Why `p` pairs of `cell`-byte cells do not fit the window.
    fn too_small(&self, p: usize, cell: usize) -> String {
        format!(
            "{p} pair(s) with {} cells need a pool window of {} bytes; it has {} (--len)",
            format_size(cell),
            layout(p, cell).total,
            self.pool.len()
        )
    }

    /// Lists one part of the run as skipped on this window.
    fn skip(&mut self, benchmark: String, reason: String) {
        self.report.skipped.push(Skipped {
            benchmark,
            target: self.target.clone(),
            reason,
        });
    }

    /// Lists the paper's pair counts that the CPUs cannot hold as skipped.
    fn skip_not_run(&mut self, not_run: &[usize]) {
        let cpus = self.ctx.cpus.len();
        for &p in not_run {
            self.skip(
                format!("pool.msg-scale/p{p}"),
                format!(
                    "{p} pairs need {} CPUs (a sender and a receiver each, never two threads on one CPU); this run has {cpus} (--cpu)",
                    2 * p
                ),
            );
        }
    }

    fn param(
        &mut self,
        key: String,
        value: f64,
        (method, from): (String, Vec<String>),
        noisy: Option<String>,
    ) {
        self.report
            .params
            .push(Param::new(key, value, &self.target, method, from).noisy(noisy));
    }
}

impl MsgScaleBench {
    fn pool_spec(&self, max_need: usize) -> (PoolSpec, bool) {
        match &self.pool {
            Some(s) => (s.clone(), false),
            None => (
                PoolSpec::scratch_file(
                    max_need
                        .max(MIN_POOL_BYTES)
                        .next_multiple_of(bench_core::memory::page_size()),
                ),
                true,
            ),
        }
    }

    fn run_inner(&self, ctx: &Context) -> Result<Report, ScaleError> {
        let (run, not_run) = pair_rungs(&ctx.ladder(None));
        let Some(pmax) = run.iter().map(|r| r.pairs).max() else {
            return Err(ScaleError::TooFewCpus(ctx.cpus.len()));
        };
        let (spec, created) = self.pool_spec(layout(pmax, self.max_cell()).total);
        // A pool file of our own is removed on SIGINT/SIGTERM too (docs/safety.md).
        let _registered = match &spec.source {
            PoolSource::File(p) if created => bench_core::cleanup::register(p).ok(),
            _ => None,
        };
        let opened = PoolMap::open(&spec);
        let res = opened.map_err(ScaleError::from).and_then(|pool| {
            let r = self.measure(ctx, &pool, &run, &not_run);
            pool.header().store(
                off::STATE,
                if r.is_ok() {
                    state::DONE
                } else {
                    state::ABORTED
                },
            );
            r
        });
        if created {
            if let PoolSource::File(p) = &spec.source {
                let _ = std::fs::remove_file(p);
            }
        }
        res
    }

    /// The suffix of the keys: none for the coherent protocol, `_noncoherent` otherwise.
    fn key_suffix(&self) -> &'static str {
        match self.mode {
            Coherence::Coherent => "",
            Coherence::NonCoherent(_) => "_noncoherent",
        }
    }

    /// Claims the window, then runs the pairs sweep and, at the largest pair count that
    /// ran, the cell-size sweep.
    fn measure(
        &self,
        ctx: &Context,
        pool: &PoolMap,
        run: &[PairRung],
        not_run: &[usize],
    ) -> Result<Report, ScaleError> {
        // Claimed like `pool msg`'s leader claims a window: both sides are this process.
        claim_header(
            pool,
            self.pool.as_ref().is_some_and(|p| p.force),
            state::PAIRED,
        )?;
        pool.header()
            .store(off::FOLLOWER_PID, std::process::id() as u64);
        let target = match &self.pool {
            None => "shm".to_string(),
            Some(_) => pool.name().to_string(),
        };
        let mut sw = Sweep {
            ctx,
            pool,
            target,
            mode: self.mode,
            placement: pool.placement(),
            report: Report::default(),
            pair_cpus: ctx.cpus.clone(),
            rung: String::new(),
        };
        sw.skip_not_run(not_run);
        let Some(p) = self.pairs_sweep(&mut sw, run)? else {
            return Ok(sw.report);
        };
        self.cells_sweep(&mut sw, p)?;
        Ok(sw.report)
    }

    /// Latency and bandwidth curve at each pair count whose queues fit the window; the
    /// largest pair count that ran.
    fn pairs_sweep(
        &self,
        sw: &mut Sweep<'_>,
        run: &[PairRung],
    ) -> Result<Option<usize>, ScaleError> {
        let mut largest = None;
        for r in run {
            let p = r.pairs;
            if !sw.fits(p, self.pairs_cell) {
                let reason = sw.too_small(p, self.pairs_cell);
                sw.skip(format!("pool.msg-scale/p{p}"), reason);
                continue;
            }
            // The rung's CPUs; the cell-size sweep stays on the largest.
            sw.pair_cpus = r.cpus.clone();
            sw.rung = r.label.clone();
            self.pairs_point(sw, p)?;
            largest = Some(p);
        }
        Ok(largest)
    }

    /// The planned seconds of one bandwidth curve (every message size a crew's windows)
    /// and of one latency point (the same windows), the pairs on `cpus`.
    fn curve_s(&self, ctx: &Context, cpus: &[usize]) -> (f64, f64) {
        let e = &ctx.plan.expect;
        let point = e.crew_point_s(&ctx.topology, cpus, 0, &ctx.effort.crew, true);
        let n = sizes(ctx.effort.pool.msg_scale_every_size).len() as f64;
        (n * point, point)
    }

    /// One pair count: its latency key and its bandwidth curve's peak key.
    fn pairs_point(&self, sw: &mut Sweep<'_>, p: usize) -> Result<(), ScaleError> {
        let sfx = self.key_suffix();
        sw.ctx.progress(&format!(
            "pool.msg-scale on {}: {p} pair(s), {LAT_BYTES}-byte latency ({})",
            sw.target,
            self.mode.name()
        ));
        let (id, lat, noisy) = sw.latency(p, self.pairs_cell)?;
        sw.param(
            format!("pool_pairs{sfx}_lat_p{p}_ns"),
            lat,
            (format!("p50 one-way latency (echo round trip / 2) of an {LAT_BYTES}-byte message, {p} pair(s) at once, samples of all pairs in the undisturbed windows ({})", self.mode.name()),
            vec![id]),
            noisy,
        );
        let curve = sw.curve(p, self.pairs_cell, "pairs")?;
        let pts: Vec<(usize, f64)> = curve.iter().map(|c| (c.size, c.p50)).collect();
        if let Some((s, bw)) = peak(&pts) {
            let at = curve.iter().find(|c| c.size == s);
            sw.param(
                format!("pool_pairs{sfx}_bw_p{p}_gbs"),
                bw,
                (format!("largest p50 aggregate payload bandwidth over message sizes 1 KiB .. 1 MiB (here at {}), {p} pair(s), {} cells ({})", format_size(s), format_size(self.pairs_cell), self.mode.name()),
                curve.iter().map(|c| c.id.clone()).collect()),
                at.and_then(|c| c.noisy.clone()),
            );
        }
        Ok(())
    }

    /// The bandwidth curve of each cell size with `p` pairs, then the key of the cell size
    /// with the highest peak.
    fn cells_sweep(&self, sw: &mut Sweep<'_>, p: usize) -> Result<(), ScaleError> {
        let mut peaks = Vec::new();
        let mut peak_ids = Vec::new();
        let mut peak_noisy = None;
        for &cell in &self.cells {
            if !sw.fits(p, cell) {
                let reason = sw.too_small(p, cell);
                sw.skip(
                    format!("pool.msg-scale/cells/{}", format_size(cell)),
                    reason,
                );
                continue;
            }
            let Some((at, ids)) = self.cell_curve(sw, p, cell)? else {
                continue;
            };
            peaks.push((cell, at.p50));
            peak_ids.extend(ids);
            peak_noisy = peak_noisy.or(at.noisy);
        }
        if let Some((cell, _)) = peak(&peaks) {
            sw.param(
                format!("pool_cell{}_best_bytes", self.key_suffix()),
                cell as f64,
                (
                    format!(
                        "the cell size (of {}) with the highest peak bandwidth, {p} pair(s) ({})",
                        self.cells
                            .iter()
                            .map(|&c| format_size(c))
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.mode.name()
                    ),
                    peak_ids,
                ),
                peak_noisy,
            );
        }
        Ok(())
    }

    /// One cell size's curve and its peak keys; its peak and the ids of every point of
    /// the curve (`None`: no valid point).
    fn cell_curve(
        &self,
        sw: &mut Sweep<'_>,
        p: usize,
        cell: usize,
    ) -> Result<Option<(CurvePoint, Vec<String>)>, ScaleError> {
        let sfx = self.key_suffix();
        let curve = sw.curve(p, cell, "cells")?;
        let pts: Vec<(usize, f64)> = curve.iter().map(|c| (c.size, c.p50)).collect();
        let Some((s, bw)) = peak(&pts) else {
            return Ok(None);
        };
        let ids: Vec<String> = curve.iter().map(|c| c.id.clone()).collect();
        let at = curve.into_iter().find(|c| c.size == s);
        let noisy = at.as_ref().and_then(|c| c.noisy.clone());
        let kib = cell / 1024;
        sw.param(
            format!("pool_cell{sfx}_bw_{kib}k_gbs"),
            bw,
            (format!("largest p50 aggregate payload bandwidth over message sizes, {p} pair(s), {} cells ({})", format_size(cell), self.mode.name()),
            ids.clone()),
            noisy.clone(),
        );
        sw.param(
            format!("pool_cell{sfx}_peak_msg_{kib}k_bytes"),
            s as f64,
            (
                format!(
                    "message size of that peak, {p} pair(s), {} cells ({})",
                    format_size(cell),
                    self.mode.name()
                ),
                ids.clone(),
            ),
            noisy.clone(),
        );
        Ok(at.map(|a| (a, ids)))
    }
}

impl Benchmark for MsgScaleBench {
    fn name(&self) -> &'static str {
        "pool.msg-scale"
    }
    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 2,
            target_kinds: vec!["anon"],
        }
    }
    fn region_bytes(&self, _ctx: &Context, _target: &bench_core::memory::TargetSpec) -> usize {
        4096
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> bench_core::memory::budget::Need {
        self.memory_need(ctx, target)
    }

    fn cost(&self, ctx: &Context, _target: Option<&TargetSpec>) -> Cost {
        let (run, _) = pair_rungs(&ctx.ladder(None));
        let mut cost = Cost::new();
        let n = sizes(ctx.effort.pool.msg_scale_every_size).len();
        for r in &run {
            let (curve, lat) = self.curve_s(ctx, &r.cpus);
            cost.add(format!("{} pair(s): latency", r.pairs), 1, lat);
            cost.add(
                format!("{} pair(s): {n} sizes", r.pairs),
                n,
                curve / n as f64,
            );
        }
        if let Some(r) = run.iter().max_by_key(|r| r.pairs) {
            let p = r.pairs;
            let (curve, _) = self.curve_s(ctx, &r.cpus);
            cost.add(
                format!("{} cell sizes x {n} sizes, {p} pair(s)", self.cells.len()),
                self.cells.len() * n,
                curve / n as f64,
            );
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        input.region()?;
        let r = self.run_inner(ctx);
        let _ = bench_core::pin::pin_current(ctx.cpus[0]);
        // A pool that cannot be set up here is a skip; a run that started and broke
        // (damaged data, a stuck pair) is a failure.
        r.map_err(|e| match e {
            e @ (ScaleError::Pool(_) | ScaleError::TooFewCpus(_)) => NotRun::skip(e.to_string()),
            e => NotRun::failed(e),
        })
    }
}

/// Seed 002's message scaling through a pool: pairs of pinned threads (a sender and a
/// receiver on CPUs of their own), as many as half of each rung of the thread ladder (2,
/// 4, 8, ... CPUs and each level of the machine: one core, one L3, one node, one socket,
/// all CPUs; the paper's pair counts that do not fit the CPUs are listed as skipped), each
/// pair with its own SPSC queue of fixed-size cells in one
/// pool window. Per pair count: one-way latency of an 8-byte message (echo round trip /
/// 2, p50 over all pairs) and aggregate bandwidth (payload bytes of all pairs, counted
/// once, / the longest pair's time; GB = 1e9 B) for messages of 1 KiB .. 1 MiB (quick:
/// powers of four), with 64 KiB cells. Then, at the largest pair count, the bandwidth
/// curve for each cell size (messages longer than a cell's payload are split into
/// cell-sized chunks sent one after the other): the peak and where it peaks.
#[derive(Debug, Clone, clap::Args)]
pub struct MsgScaleArgs {
    /// The pool window (default: a fresh file in /dev/shm sized for the run).
    #[command(flatten)]
    pub window: PoolArgs,
    /// Cell sizes of the cell-size sweep (multiples of 1 KiB; the paper's 16K, 32K, 64K,
    /// 128K by default).
    #[arg(long, value_name = "SIZE", value_delimiter = ',', default_value = "16K,32K,64K,128K", value_parser = bench_core::units::parse_positive_size)]
    pub cells: Vec<usize>,
    /// Cell size of the pairs sweep (the paper's Figs. 7-8 use 64 KiB).
    #[arg(long, value_name = "SIZE", default_value = "64K", value_parser = bench_core::units::parse_positive_size)]
    pub pairs_cell: usize,
    /// Use the non-coherent protocol (the writer flushes and fences what it wrote, the
    /// reader invalidates before it reads) instead of plain coherent loads and stores;
    /// its keys carry `_noncoherent`.
    #[arg(long)]
    pub noncoherent: bool,
}

impl Setup for MsgScaleArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        for &c in self.cells.iter().chain([&self.pairs_cell]) {
            if c < 1024 || !c.is_multiple_of(1024) {
                return Err(format!(
                    "cell size {c} bytes: cells are multiples of 1 KiB (e.g. 16K)"
                )
                .into());
            }
        }
        let mode = if self.noncoherent {
            match crate::cacheline::invalidate_method() {
                Ok(m) => Coherence::NonCoherent(m),
                Err(why) => return Ok(Planned::skip("pool.msg-scale", why)),
            }
        } else {
            Coherence::Coherent
        };
        let mut cells = self.cells.clone();
        cells.sort_unstable();
        cells.dedup();
        Ok(Planned::one(MsgScaleBench {
            pool: self.window.spec(opts)?,
            cells,
            pairs_cell: self.pairs_cell,
            mode,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_counts_never_oversubscribe_and_name_what_cannot_run() {
        use bench_core::topology::fixtures::Server;
        let counts = |s: &Server, n: usize| {
            let cpus: Vec<usize> = (0..n).collect();
            let (run, not_run) = pair_rungs(&Ladder::of(&s.topology(), &cpus));
            for r in &run {
                assert_eq!(r.cpus.len(), 2 * r.pairs);
                let mut c = r.cpus.clone();
                c.sort_unstable();
                c.dedup();
                assert_eq!(c.len(), r.cpus.len(), "never two threads on one CPU");
            }
            (run.iter().map(|r| r.pairs).collect::<Vec<_>>(), not_run)
        };
        let h = Server::h200_host();
        assert_eq!(counts(&h, 1), (vec![], PAPER_PAIRS.to_vec()));
        assert_eq!(counts(&h, 2), (vec![1], vec![2, 4, 8, 16]));
        assert_eq!(counts(&h, 3), (vec![1], vec![2, 4, 8, 16]));
        assert_eq!(counts(&h, 12), (vec![1, 2, 4, 6], vec![8, 16]));
        assert_eq!(counts(&h, 16), (vec![1, 2, 4, 8], vec![16]));
        let (run, not_run) = counts(&Server::epyc_2s_96c(), 384);
        assert_eq!(run, [1, 2, 4, 8, 16, 32, 64, 96, 128, 192]);
        assert!(not_run.is_empty());
    }

    #[test]
    fn sizes_cover_1k_to_1m() {
        let s = sizes(true);
        assert_eq!((s[0], *s.last().unwrap(), s.len()), (1024, 1 << 20, 11));
        let q = sizes(false);
        assert_eq!((q[0], *q.last().unwrap()), (1024, 1 << 20));
        assert!(q.len() < s.len());
    }

    #[test]
    fn layout_keeps_queues_apart_aligned_and_inside() {
        for (p, cell) in [(1, 16 << 10), (3, 64 << 10), (16, 128 << 10)] {
            let l = layout(p, cell);
            assert_eq!(l.pairs.len(), p);
            assert!(l.fwd_bytes >= cells::queue_bytes(cell, CELLS_PER_QUEUE));
            let mut spans: Vec<(usize, usize)> = l
                .pairs
                .iter()
                .flat_map(|&(f, b)| [(f, f + l.fwd_bytes), (b, b + l.back_bytes)])
                .collect();
            spans.sort_unstable();
            assert!(spans[0].0 >= HEADER_BYTES, "the pool header stays free");
            assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "no overlap");
            assert!(spans.iter().all(|s| s.0 % ALIGN == 0 && s.1 <= l.total));
        }
    }

    #[test]
    fn peak_is_the_highest_point_smallest_size_on_ties() {
        assert_eq!(peak(&[]), None);
        let c = [(1024, 1.0), (2048, 3.0), (4096, 3.0), (8192, 2.0)];
        assert_eq!(peak(&c), Some((2048, 3.0)));
        assert_eq!(peak(&[(1, f64::NAN), (2, 1.0)]), Some((2, 1.0)));
    }

    #[test]
    fn bad_cell_sizes_are_refused() {
        let args = |cells: Vec<usize>| MsgScaleArgs {
            window: PoolArgs {
                pool: None,
                offset: 0,
                len: None,
                force: false,
            },
            cells,
            pairs_cell: 64 << 10,
            noncoherent: false,
        };
        let opts = Options::default();
        assert!(args(vec![1000]).plan(&opts).is_err());
        assert!(args(vec![512]).plan(&opts).is_err());
        let p = args(vec![32 << 10, 16 << 10, 16 << 10])
            .plan(&opts)
            .unwrap();
        assert_eq!(p.benchmarks.len(), 1);
    }

    #[test]
    fn one_pair_runs_through_a_scratch_pool_and_produces_its_keys() {
        let mut ctx = Context::quick_local();
        if ctx.cpus.len() < 2 {
            bench_core::testing::unavailable("two-cpus", "one CPU: no pair can run");
            return;
        }
        ctx.cpus.truncate(2);
        let b = MsgScaleBench {
            pool: None,
            cells: vec![16 << 10],
            pairs_cell: 16 << 10,
            mode: Coherence::Coherent,
        };
        let r = b.run_inner(&ctx).unwrap();
        let keys: Vec<&str> = r.params.iter().map(|p| p.key.as_str()).collect();
        for k in [
            "pool_pairs_lat_p1_ns",
            "pool_pairs_bw_p1_gbs",
            "pool_cell_bw_16k_gbs",
            "pool_cell_peak_msg_16k_bytes",
            "pool_cell_best_bytes",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert!(r.params.iter().all(|p| p.value > 0.0));
        assert!(r.skipped.iter().any(|s| s.benchmark == "pool.msg-scale/p2"));
        assert!(r
            .measurements
            .iter()
            .any(|m| m.id == "pool.msg-scale/shm/coherent/cells/16K/p1/bw/64K"));
    }
}
