//! `mem.latency`: idle load latency by pointer chase over a working-set sweep.
//!
//! Method: the working set is a chain of dependent loads that no prefetcher can learn
//! ([`bench_core::chase`]: one touched line per 256-byte slot at a random line and word,
//! TLB-local random order, one full lap before timing); a pinned thread follows it in an
//! unrolled loop. Each timed batch of loads (about 50 us) gives one sample of ns per load,
//! with the timer's overhead subtracted; many batches give the distribution. Sizes are
//! **touched bytes** (distinct lines x 64), two per octave (one with `--quick`).
//!
//! The sweep stops at the **DRAM plateau** rather than at a size read from sysfs: a cold
//! lap (every line of an 8 MiB chain flushed, then one lap timed) gives the latency of
//! loads that miss every cache; the plateau starts at the first size whose latency
//! reaches 90% of it and stays flat over two doublings ([`crate::levels::dram_plateau`]).
//! The DRAM point is 4 x the plateau's start (so at least 4 x the effective LLC), bounded
//! by 4 x the sysfs LLC and by the available memory; the size and the rule that chose it
//! are recorded for the families that run after ([`bench_core::sizing`]). Where no cache
//! flush exists the sweep runs to the sysfs bound.
//!
//! At the DRAM point the same point in full-random order gives `mem_lat_random_ns` (page
//! walks included) and `page_walk_ns`, and the **prefetch self-check** measures the same
//! slot built the other way (aligned for the randomized default): the same pages and page
//! walks per load, so only a prefetcher can separate them. If they disagree by more than
//! [`CHECK_TOLERANCE`] (twice), the slower, defeated figure is reported, with a warning. A
//! randomized chain with twice the slot is recorded for information.

use crate::levels::{dram_plateau, plateaus, DramPlateau, SweepPoint};

mod memory;
mod phases;
mod reuse;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::chase::{
    Chain, ChainLayout, ChaseError, ChaseOrder, SlotLayout, MIN_RANDOMIZED_SLOT_BYTES,
};
use bench_core::counters::{self, CounterGroup, MeasurementCounters};
use bench_core::dram_check::{self, DramCheck, Pattern};
use bench_core::effort::Effort;
use bench_core::memory::{OnMemory, Region, TargetSpec};
use bench_core::params::{CheckedChain, Measurement, PrefetchCheck, Warning};
use bench_core::plan::Cost;
use bench_core::sizing::{self, DramSizing};
use bench_core::stats::{median, Distribution};
use bench_core::units::parse_positive_size;
use bench_core::units::{format_size, KIB, MIB};
pub use memory::SAMPLE_BYTES;
pub use reuse::{chase_check, chase_check_memory, chase_check_s, chase_point, chase_point_s};
use serde_json::json;
use std::time::Instant;

/// Parameters of the latency sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyBench {
    /// Chain layout (default: randomized offsets in 256-byte slots).
    pub layout: ChainLayout,
    /// Order of the sweep (default TLB-local, 256 KiB blocks).
    pub order: ChaseOrder,
    /// Smallest working set, touched bytes (default 4 KiB).
    pub min_size: usize,
    /// Largest working set, touched bytes; `None`: up to the DRAM plateau (bounded by
    /// 4 x the sysfs LLC and the available memory).
    pub max_size: Option<usize>,
    /// Explicit sizes (touched bytes), replacing the sweep.
    pub sizes: Option<Vec<usize>>,
    /// Also measure the DRAM point in full-random order (page-walk cost).
    pub random_at_max: bool,
    /// Run the prefetch self-check at the DRAM point.
    pub prefetch_check: bool,
}

impl Default for LatencyBench {
    fn default() -> Self {
        LatencyBench {
            layout: ChainLayout::DEFAULT,
            order: ChaseOrder::DEFAULT,
            min_size: 4 * KIB,
            max_size: None,
            sizes: None,
            random_at_max: true,
            prefetch_check: true,
        }
    }
}

/// A bad latency parameter (the user's mistake: reported as an error, not a skip).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LatencyParamError {
    /// The chain layout is invalid.
    #[error(transparent)]
    Layout(#[from] ChaseError),
    /// A size below one element.
    #[error("{option} {size} is smaller than one slot of the chain ({min} bytes of lines)")]
    SizeBelowElement {
        /// The option the size comes from (`--sizes`, `--max-size`, `--min-size`).
        option: &'static str,
        /// The size given, in bytes.
        size: usize,
        /// The smallest working set.
        min: usize,
    },
    /// A block size for an order without blocks.
    #[error("--tlb-locality sets the block size of --order tlb-local; --order random has no blocks: drop one of them")]
    LocalityWithoutBlocks,
    /// min > max.
    #[error("--min-size {min} is above --max-size {max}")]
    Range {
        /// `--min-size`, in bytes.
        min: usize,
        /// `--max-size`, in bytes.
        max: usize,
    },
}

/// Largest |ratio - 1| between differently built randomized chains still counted as
/// agreement (run-to-run noise on a quiet machine is 1-3%).
pub const CHECK_TOLERANCE: f64 = 0.05;

/// Working set of the cold-lap reference (touched bytes; smaller if the cap is).
pub const COLD_REF_BYTES: usize = 8 * MIB;

/// Smallest DRAM point when the plateau is found early (a little margin beyond 4 x the
/// plateau start at no real cost).
pub const MIN_DRAM_POINT_BYTES: usize = 32 * MIB;

/// Below the DRAM plateau, a point slower than this share of the cold lap is a
/// transition between the last cache and DRAM, not a cache level.
pub const TRANSITION_SHARE: f64 = 0.5;

const MIN_BATCHES: usize = 64;
const BATCH_TARGET_NS: f64 = 50_000.0;
/// Most batches one point samples.
const MAX_BATCHES: usize = 200_000;
/// Batches a point's sample buffer holds before it grows (touched before counting).
const FIRST_BATCHES: usize = 8192;

/// The length a region of `len` bytes is grown to so that it holds `span` bytes
/// (as `LatencyBench::ensure` does): twice its size or `span`, whichever is larger, but not
/// past `limit` unless `span` is; `None` when it holds `span` already.
pub fn grown_len(len: usize, span: usize, limit: usize) -> Option<usize> {
    (span > len).then(|| (2 * len).max(span).min(limit.max(span)))
}

/// The parameters recorded with a sampled chain: the chain's own, the batch, the CPU,
/// the page size and `extra`.
fn sample_params<const N: usize>(
    ctx: &Context,
    chain: &Chain<'_>,
    page: usize,
    batch: usize,
    extra: [(&str, serde_json::Value); N],
) -> serde_json::Value {
    let mut params = chain.describe();
    if let Some(o) = params.as_object_mut() {
        o.insert("loads_per_batch".into(), json!(batch));
        o.insert("cpu".into(), json!(ctx.cpus.first()));
        o.insert("page_size_bytes".into(), json!(page));
        for (k, v) in extra {
            o.insert(k.into(), v);
        }
    }
    params
}

/// One measured chain.
struct Point {
    d: Distribution,
    params: serde_json::Value,
    counters: MeasurementCounters,
}

impl LatencyBench {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), LatencyParamError> {
        self.layout.validate_with(self.order)?;
        // One slot's elements: every line of it for a phased layout.
        let min = self.layout.phases() * self.layout.touched_per_element();
        // With --sizes the sweep bounds are unused: only the sizes given are checked.
        let mut all: Vec<(&'static str, usize)> = Vec::new();
        match &self.sizes {
            Some(sizes) => all.extend(sizes.iter().map(|&s| ("--sizes", s))),
            None => {
                all.extend(self.max_size.map(|s| ("--max-size", s)));
                all.push(("--min-size", self.min_size));
            }
        }
        if let Some(&(option, size)) = all.iter().find(|(_, s)| *s < min) {
            return Err(LatencyParamError::SizeBelowElement { option, size, min });
        }
        if let (None, Some(max)) = (&self.sizes, self.max_size) {
            if self.min_size > max {
                return Err(LatencyParamError::Range {
                    min: self.min_size,
                    max,
                });
            }
        }
        Ok(())
    }

    /// The largest working set the user allowed (touched bytes): `--max-size`, or the
    /// largest of `--sizes`. Nothing of this benchmark (the cold lap, the DRAM check)
    /// touches more: on a device the user bounds what is written.
    pub fn user_bound(&self) -> Option<usize> {
        self.max_size
            .or_else(|| self.sizes.as_ref().and_then(|s| s.iter().copied().max()))
            .map(|b| self.layout.round_touched(b))
    }

    /// The largest working set the sweep may reach (touched bytes) and the rule: the
    /// user's bound ([`LatencyBench::user_bound`]), else the DRAM working set `rule` (4 x
    /// the caches the measuring CPU can fill, [`bench_core::sizing`]); both bounded by
    /// the available memory.
    pub fn cap(&self, rule: &DramSizing, available: Option<usize>) -> (usize, DramSizing) {
        let mut s = rule.clone();
        if let Some(m) = self.user_bound() {
            s.touched_bytes = m;
            s.rule = sizing::SizingRule::User;
        }
        let (t, bounded) = s.touched_for(self.layout.span_per_touched(), available);
        if bounded {
            s.rule = sizing::SizingRule::MemoryBound;
        }
        s.touched_bytes = self.layout.round_touched(t);
        (s.touched_bytes, s)
    }

    /// The candidate sizes of the sweep up to `cap` (touched bytes), ascending; the
    /// adaptive sweep stops early at the DRAM plateau.
    pub fn sweep_sizes(&self, cap: usize, effort: &Effort) -> Vec<usize> {
        let round = |s: usize| self.layout.round_touched(s);
        if let Some(sizes) = &self.sizes {
            let mut v: Vec<usize> = sizes.iter().map(|&s| round(s)).collect();
            v.sort_unstable();
            v.dedup();
            return v;
        }
        let per_octave = effort.mem.latency_points_per_octave;
        let grid = |k: u32| -> [usize; 2] { [1usize << k, 3usize << (k.max(1) - 1)] };
        let mut v = Vec::new();
        for k in 0..48u32 {
            for s in grid(k).into_iter().take(per_octave) {
                if s >= self.min_size && s <= cap {
                    v.push(round(s));
                }
            }
        }
        // The cap ends the sweep; a grid point less than a quarter below it measures the
        // same level again, and gives way to it.
        if v.last()
            .is_some_and(|&l| l < round(cap) && 4 * l > 3 * round(cap))
        {
            v.pop();
        }
        if v.last() != Some(&round(cap)) {
            v.push(round(cap));
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Makes sure `region` holds `span` bytes: grown ([`Region::grow`]) to twice its
    /// size or `span`, whichever is larger, but not past `limit` unless `span` is.
    fn ensure(
        &self,
        ctx: &Context,
        region: &mut Region,
        span: usize,
        limit: usize,
    ) -> Result<(), String> {
        match grown_len(region.len(), span, limit) {
            Some(want) => region.grow(want, &ctx.topology),
            None => Ok(()),
        }
    }

    /// Builds a chain over `touched` bytes and samples it for the time budget.
    fn measure(
        &self,
        ctx: &Context,
        region: &mut Region,
        touched: usize,
        layout: ChainLayout,
        order: ChaseOrder,
    ) -> Result<Point, Skip> {
        let seed = ctx.seed ^ touched as u64 ^ ((layout.slot_bytes as u64) << 40);
        let page = region.placement().page_size_bytes;
        let chain = Chain::build(region.as_mut_slice(), layout, order, touched, seed)
            .map_err(|e| Skip::new(e.to_string()))?;
        let timer = &ctx.timer;
        let round16 = |x: usize| (x / bench_core::chase::UNROLL).max(1) * bench_core::chase::UNROLL;
        // Size the batches to about 50 us, and at least the timer's shortest batch (a
        // slow counter, such as a 25 MHz cntvct_el0, needs longer ones).
        let probe = round16(1024);
        let t0 = timer.start();
        let p = chain.walk(chain.cursor(), probe);
        let t1 = timer.stop();
        let est = (timer.elapsed_ns(t0, t1) / probe as f64).max(0.1);
        let batch = round16(timer.batch_ops(est, BATCH_TARGET_NS, 64).min(1 << 20));
        // Counters around the whole sampling loop: a context switch, migration or page
        // fault in it flags the point and repeats it (bench_core::counters).
        let mut samples: Vec<f64> = Vec::with_capacity(FIRST_BATCHES);
        samples.resize(FIRST_BATCHES, 0.0); // touch the pages now, not inside the counted loop
        let mut group = CounterGroup::open_with_timer(timer);
        let (samples, counters) = counters::measure_undisturbed(
            &mut group,
            counters::DEFAULT_MAX_ATTEMPTS,
            &mut (samples, p),
            |(samples, p)| {
                samples.clear();
                let deadline = Instant::now() + ctx.effort.mem.latency_point;
                while samples.len() < MIN_BATCHES || Instant::now() < deadline {
                    let a = timer.start();
                    *p = chain.walk(*p, batch);
                    let b = timer.stop();
                    samples.push(timer.elapsed_ns(a, b) / batch as f64);
                    if samples.len() >= MAX_BATCHES {
                        break;
                    }
                }
            },
            |(samples, p)| {
                std::hint::black_box(*p);
                samples.clone()
            },
        );
        let counters = counters.with_per_op("load", (batch * samples.len()) as u64);
        let d = Distribution::from_samples(&samples)
            .ok_or_else(|| Skip::new(format!("no valid samples at {}", format_size(touched))))?;
        let params = sample_params(
            ctx,
            &chain,
            page,
            batch,
            [("batches", json!(samples.len()))],
        );
        ctx.point_done();
        Ok(Point {
            d,
            params,
            counters,
        })
    }

    /// The cold-lap reference: every element's line flushed, then one lap timed in
    /// batches, three times. `Err` says why there is none (no flush instruction).
    fn cold_lap(
        &self,
        ctx: &Context,
        region: &mut Region,
        touched: usize,
    ) -> Result<Point, String> {
        let seed = ctx.seed ^ 0xC01D;
        let page = region.placement().page_size_bytes;
        let chain = Chain::build(
            region.as_mut_slice(),
            self.layout,
            self.order,
            touched,
            seed,
        )
        .map_err(|e| e.to_string())?;
        chain.flush()?; // fails early where no flush exists
        let timer = &ctx.timer;
        const BATCH: usize = 512;
        const LAPS: usize = 3;
        let per_lap = (chain.elements() / BATCH).max(1);
        let samples: Vec<f64> = vec![0.0; per_lap * LAPS + 8];
        let mut group = CounterGroup::open_with_timer(timer);
        let (samples, counters) = counters::measure_undisturbed(
            &mut group,
            counters::DEFAULT_MAX_ATTEMPTS,
            &mut (samples, chain.cursor()),
            |(samples, p)| {
                samples.clear();
                for _ in 0..LAPS {
                    // The flush is inside the counted section but outside every sample.
                    let _ = chain.flush();
                    for _ in 0..per_lap {
                        let a = timer.start();
                        *p = chain.walk(*p, BATCH);
                        let b = timer.stop();
                        samples.push(timer.elapsed_ns(a, b) / BATCH as f64);
                    }
                }
            },
            |(samples, p)| {
                std::hint::black_box(*p);
                samples.clone()
            },
        );
        let counters = counters.with_per_op("load", (BATCH * samples.len()) as u64);
        let d = Distribution::from_samples(&samples).ok_or("no valid cold-lap samples")?;
        let params = sample_params(
            ctx,
            &chain,
            page,
            BATCH,
            [
                ("laps", json!(LAPS)),
                (
                    "flush",
                    json!("clflushopt (else clflush) of every element's line before each lap"),
                ),
            ],
        );
        ctx.point_done();
        Ok(Point {
            d,
            params,
            counters,
        })
    }

    fn record(
        &self,
        report: &mut Report,
        region: &Region,
        id: &str,
        method: String,
        p: Point,
    ) -> f64 {
        let v = p.d.p50;
        report.measurements.push(Measurement {
            id: id.to_string(),
            benchmark: self.name().into(),
            target: region.origin().to_string(),
            parameters: p.params,
            unit: "ns".into(),
            method,
            distribution: p.d,
            placement: Some(region.placement().clone()),
            counters: Some(p.counters),
        });
        v
    }

    /// The prefetch self-check at the DRAM point `size`: the default chain (its plateau
    /// figure `value`) against the same slot built the other way (aligned for the
    /// randomized default, randomized for an aligned sweep): same pages, same page walks
    /// per load, only the in-slot offsets differ. A randomized chain with twice the slot is
    /// measured too, for information: it takes one more page walk per `page / slot` loads
    /// (4 KiB pages in a VM: several percent), so it does not enter the verdict. A
    /// disagreement is measured once more and judged on the means of the two passes.
    fn prefetch_check(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        size: usize,
        value: f64,
        default_id: String,
    ) -> Result<(PrefetchCheck, Vec<(usize, String)>), Skip> {
        let target = region.origin().to_string();
        let slot = self.layout.slot_bytes;
        let others = self.check_chains(ctx.effort);
        // Each chain with the layout it was built with (the repeat pass rebuilds it).
        let mut chains = vec![(
            self.layout,
            CheckedChain {
                label: self.layout.label(),
                layout: self.layout.layout.name().into(),
                slot_bytes: slot,
                lat_ns: value,
                judged: true,
                id: default_id,
            },
        )];
        let pass = |report: &mut Report, region: &mut Region, l: ChainLayout, suffix: &str| {
            if l.validate().is_err()
                || self
                    .ensure(ctx, region, l.span_bytes(size), usize::MAX)
                    .is_err()
            {
                return Ok(None);
            }
            let p = self.measure(ctx, region, size, l, self.order)?;
            let id = format!(
                "mem.latency/{target}/check/{}/{}{suffix}",
                l.label(),
                format_size(size)
            );
            ctx.progress(&format!(
                "mem.latency {target} {:>6}: {:8.2} ns (check: {}{suffix})",
                format_size(size),
                p.d.p50,
                l.label()
            ));
            let method = format!(
                "{}; the prefetch self-check's chain at the DRAM point",
                self.method(l, self.order)
            );
            Ok::<_, Skip>(Some((self.record(report, region, &id, method, p), id)))
        };
        for l in others {
            if let Some((v, id)) = pass(report, region, l, "")? {
                let c = CheckedChain {
                    label: l.label(),
                    layout: l.layout.name().into(),
                    slot_bytes: l.slot_bytes,
                    lat_ns: v,
                    judged: l.slot_bytes == slot,
                    id,
                };
                chains.push((l, c));
            }
        }
        let judge = |c: &[(ChainLayout, CheckedChain)]| {
            let o: Vec<f64> = c[1..]
                .iter()
                .filter(|(_, x)| x.judged)
                .map(|(_, x)| x.lat_ns)
                .collect();
            check_verdict(c[0].1.lat_ns, &o)
        };
        let mut repeated = false;
        // Second passes (chain index, measurement id): each judged figure becomes a mean.
        let mut repeats = Vec::new();
        if !judge(&chains).1 {
            repeated = true;
            for (i, (l, c)) in chains.iter_mut().enumerate().filter(|(_, (_, c))| c.judged) {
                if let Some((v, id)) = pass(report, region, *l, "/repeat")? {
                    c.lat_ns = (c.lat_ns + v) / 2.0;
                    repeats.push((i, id));
                }
            }
        }
        let (ratio, agree, reported) = judge(&chains);
        let judged = chains.iter().skip(1).filter(|(_, c)| c.judged).count();
        let chains: Vec<CheckedChain> = chains.into_iter().map(|(_, c)| c).collect();
        let aligned_ratio = chains
            .iter()
            .skip(1)
            .find(|c| c.layout.ends_with("aligned"))
            .map(|c| c.lat_ns / chains[0].lat_ns);
        Ok((
            PrefetchCheck {
                target,
                touched_bytes: size,
                chains,
                ratio,
                aligned_ratio,
                tolerance: CHECK_TOLERANCE,
                verdict: verdict_name(judged, agree).into(),
                reported_ns: reported,
                repeated,
            },
            repeats,
        ))
    }

    /// The DRAM point: the default chain at `start` touched and at a larger working set
    /// (twice, at least `floor`: the cache rule's), judged by the DRAM check
    /// ([`bench_core::dram_check`]), both placed in one region grown once. A sweep point of
    /// the same size is reused for the first pass. `None`, with a warning, when not even
    /// `start` can be placed. Returns the check and the (size, mean p50, measurement ids)
    /// that stand.
    #[allow(clippy::too_many_arguments)]
    fn dram_point(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        start: usize,
        floor: usize,
        sweep: &[SweepPoint],
        sizing: String,
    ) -> Result<Option<DramPoint>, Skip> {
        let target = region.origin().to_string();
        let span = |t: usize| self.layout.span_bytes(t);
        let (mut plan, larger) = self.check_plan(ctx, region.origin(), start, floor);
        if self
            .ensure(ctx, region, span(larger), span(larger))
            .is_err()
        {
            plan.max_bytes = start;
            if let Err(why) = self.ensure(ctx, region, span(start), span(start)) {
                report.warnings.push(Warning {
                    code: "latency_size".into(),
                    message: format!("{target}: no DRAM point: {why}"),
                    remediation: "free memory, or use a target with more".into(),
                });
                return Ok(None);
            }
        }
        let outcome = dram_check::run(plan, |bytes, pass| {
            if pass == 1 {
                if let Some(p) = sweep.iter().find(|p| p.size_bytes == bytes) {
                    return Ok((p.lat_ns, Some(p.id.clone())));
                }
            }
            self.ensure(ctx, region, span(bytes), span(bytes))
                .map_err(Skip::new)?;
            let p = self.measure(ctx, region, bytes, self.layout, self.order)?;
            let id = format!(
                "mem.latency/{target}/{}/{}{}",
                self.order.name(),
                format_size(bytes),
                bench_core::dram_check::pass_suffix(pass)
            );
            ctx.progress(&format!(
                "mem.latency {target} {:>6}: {:8.2} ns (DRAM check, pass {pass})",
                format_size(bytes),
                p.d.p50
            ));
            let method = format!(
                "{}; a point of the DRAM check (pass {pass})",
                self.method(self.layout, self.order)
            );
            Ok::<_, Skip>((self.record(report, region, &id, method, p), Some(id)))
        })?;
        let size = outcome.reported_bytes;
        let value = outcome.value_at(size).unwrap_or(f64::NAN);
        let ids = outcome.ids_at(size);
        if !value.is_finite() || ids.is_empty() {
            return Err(Skip::new(format!(
                "the DRAM check measured nothing at {}",
                format_size(size)
            )));
        }
        let check = outcome.into_check(
            &plan,
            dram_check::CheckInfo {
                target: target.clone(),
                benchmark: self.name().into(),
                pattern: Pattern::Chase,
                kernel: format!("{} {} chase", self.order.name(), self.layout.label()),
                cpus: ctx.cpus_for(1),
                unit: "ns".into(),
                sizing,
                keys: vec![],
            },
        );
        if let Some(w) = dram_check::warning(&check) {
            report.warnings.push(w);
        }
        Ok(Some(DramPoint {
            check,
            size,
            value,
            ids,
        }))
    }

    /// The DRAM check of the DRAM point `start` (the cache rule's working set `floor`) on
    /// `target`, and the working set (touched bytes) the region is grown to hold before
    /// it: the larger point, twice `start` or `floor`, within the check's bound.
    pub fn check_plan(
        &self,
        ctx: &Context,
        target: &impl OnMemory,
        start: usize,
        floor: usize,
    ) -> (dram_check::Plan, usize) {
        let max_bytes = self.check_max_bytes(ctx.check_span_limit(target), start);
        let plan = dram_check::Plan {
            start_bytes: start,
            floor_bytes: floor,
            max_bytes,
            better: dram_check::Better::Lower,
        };
        (plan, (2 * start).max(floor).min(max_bytes))
    }

    /// The largest working set of the DRAM check's larger point (touched bytes): within
    /// `span_limit` bytes of memory and the user's bound, never below `start`.
    pub fn check_max_bytes(&self, span_limit: usize, start: usize) -> usize {
        let by_memory = self
            .layout
            .round_touched(span_limit / self.layout.span_per_touched());
        by_memory
            .min(self.user_bound().unwrap_or(usize::MAX))
            .max(start)
    }

    fn method(&self, layout: ChainLayout, order: ChaseOrder) -> String {
        format!(
            "dependent pointer chase, {} order, {}; chain written in visiting order (and followed one full lap untimed up to {} touched), then p50 of ~50 us batches of ns/load ({}-load unrolled loop), timer overhead subtracted",
            order.name(),
            layout.method(),
            format_size(bench_core::chase::WARM_LAP_MAX_BYTES),
            bench_core::chase::UNROLL
        )
    }
}

/// The DRAM point of a sweep: the check that stands for it, and the size, the figure
/// (the mean of the check's passes there) and the measurement ids it has.
struct DramPoint {
    check: DramCheck,
    size: usize,
    value: f64,
    ids: Vec<String>,
}

/// The verdict's name: `unchecked` when no other judged chain could be measured (the
/// check compared nothing, so it must not read as agreement), else `agree` or `disagree`.
pub fn verdict_name(judged_others: usize, agree: bool) -> &'static str {
    match (judged_others, agree) {
        (0, _) => "unchecked",
        (_, true) => "agree",
        (_, false) => "disagree",
    }
}

/// The verdict of a prefetch self-check: `default_ns` is the sweep's chain, `others`
/// the other judged chains (same slot, built differently). Chains that no
/// prefetcher helps agree within [`CHECK_TOLERANCE`]. Returns (slowest / default, agree,
/// reported ns): the default when they agree or when it is the slowest, else the slowest.
pub fn check_verdict(default_ns: f64, others: &[f64]) -> (f64, bool, f64) {
    let hi = others.iter().copied().fold(default_ns, f64::max);
    let lo = others.iter().copied().fold(default_ns, f64::min);
    let agree = hi <= (1.0 + CHECK_TOLERANCE) * lo;
    (hi / default_ns, agree, if agree { default_ns } else { hi })
}

impl Benchmark for LatencyBench {
    fn name(&self) -> &'static str {
        "mem.latency"
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        // The first stage: the cold-lap chain and the sweep up to 16 MiB; the sweep grows
        // the region when it goes further.
        let rule = ctx.dram_sizing(target, &ctx.cpus_for(1), Pattern::Chase);
        let (cap, _) = self.cap(&rule, ctx.available(target));
        let first = match &self.sizes {
            Some(s) => s.iter().copied().max().unwrap_or(self.min_size),
            None => cap.min(16 * MIB).max(COLD_REF_BYTES.min(cap)),
        };
        self.layout.span_bytes(first.max(self.min_size))
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> bench_core::memory::budget::Need {
        self.memory_need(ctx, target)
    }

    fn planned_checks(&self, _ctx: &Context, _target: &TargetSpec) -> Vec<Pattern> {
        // The sweep's DRAM check, which `--sizes` replaces.
        match self.sizes {
            None => vec![Pattern::Chase],
            Some(_) => vec![],
        }
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let rule = ctx.dram_sizing(target, &ctx.cpus_for(1), Pattern::Chase);
        let (cap, cap_rule) = self.cap(&rule, ctx.available(target));
        let point = ctx.effort.mem.latency_point;
        let mut cost = Cost::new();
        let cold = COLD_REF_BYTES.min(cap);
        cost.add(
            "cold lap",
            1,
            chase_point_s(ctx, cold, std::time::Duration::ZERO)
                + 3.0 * (cold / 64) as f64 * ctx.plan.expect.load_ns * 1e-9,
        );
        // The sweep runs to 4 x the DRAM plateau's start: planned to its cap.
        let sweep = self.sweep_sizes(cap, ctx.effort);
        for &size in &sweep {
            cost.add(format_size(size), 1, chase_point_s(ctx, size, point));
        }
        if self.sizes.is_none() {
            let s = cap_rule.touched_bytes.max(cap).max(MIN_DRAM_POINT_BYTES);
            let grown = ctx.plan.expect.populate_s(self.layout.span_bytes(2 * s));
            // The check's first pass at S is the sweep's point of that size where it has one;
            // a repeat measures both sizes again, priced at its share of runs.
            let at_s = chase_point_s(ctx, s, point);
            let at_2s = chase_point_s(ctx, 2 * s, point);
            let share = bench_core::dram_check::REPEAT_SHARE;
            let repeats = bench_core::dram_check::PLANNED_PASSES - 1;
            if !sweep.contains(&self.layout.round_touched(s)) {
                cost.add("DRAM check at S", 1, at_s);
            }
            cost.add("DRAM check at 2 S", 1, at_2s + grown);
            if repeats > 0 {
                cost.add("DRAM check at S, repeat", repeats, at_s * share);
                cost.add("DRAM check at 2 S, repeat", repeats, at_2s * share);
            }
            if self.random_at_max {
                // Written in full-random order: most stores miss the TLB as well.
                let e = &ctx.plan.expect;
                let extra = (e.chain_write_random_ns - e.chain_write_ns).max(0.0);
                cost.add("full random", 1, at_s + (s / 64) as f64 * extra * 1e-9);
            }
            let checks = self.check_chains(ctx.effort).len();
            if self.prefetch_check && checks > 0 {
                // Chains that disagree are measured again, the default one with them.
                cost.add("prefetch checks", checks, at_s);
                cost.add(
                    "prefetch checks, repeat",
                    (checks + 1) * repeats,
                    at_s * share,
                );
            }
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        self.validate().map_err(|e| Skip::new(e.to_string()))?;
        if let Some(&cpu) = ctx.cpus.first() {
            bench_core::pin::pin_current(cpu).map_err(|e| Skip::new(e.to_string()))?;
        }
        let target = region.origin().to_string();
        let available = ctx.available(region.origin());
        let rule = ctx.dram_sizing(region.origin(), &ctx.cpus_for(1), Pattern::Chase);
        let (cap, cap_rule) = self.cap(&rule, available);
        let span_limit = self.layout.span_bytes(cap).max(region.len());
        let mut report = Report::default();
        let rep = &mut report;
        let cold = self.cold_reference(ctx, region, rep, COLD_REF_BYTES.min(cap), span_limit)?;
        let (points, plateau) = self.sweep(ctx, region, rep, (cap, span_limit), &cold)?;
        if points.is_empty() {
            return Err(NotRun::skip("no sweep point fits the region"));
        }
        let curve = (&points[..], &plateau);
        let window = self.cache_levels(ctx, rep, &target, curve, &cold);
        let mem = self.memory_figure(curve, &cold, window);
        let sizing_rec = self.dram_sizing(&cap_rule, curve, &mem, available);
        let floor = cap_rule.touched_bytes;
        self.dram(ctx, region, rep, sizing_rec, floor, (&points, &mem))?;
        if let Some(w) = &region.placement().warning {
            phases::warn(rep, &target, "placement", w.clone(), "");
        }
        Ok(report)
    }
}

mod args;
pub use args::{LatencyArgs, LayoutArg, OrderArg};

#[cfg(test)]
mod tests;
