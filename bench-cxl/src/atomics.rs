//! `pool.atomics`: latency of dependent atomic read-modify-writes on a target, next to
//! the plain dependent-load latency on the same lines (seed 000's `CXL_ATOMIC_LAT`).
//!
//! Method: the working set is the target's DRAM working set for the first CPU
//! ([`bench_core::sizing`]: 4 x the caches it can fill, confirmed by the DRAM check of
//! this run's latency sweep, else by a check of its own on plain loads), laid out
//! as the prefetcher-proof chase of [`bench_core::chase`]: one element per 256-byte slot
//! at a random line and 8-byte word of the slot. Chain position `j` lives in slot `g(j)`,
//! a bijection that visits 256 KiB blocks in a scrambled order and the slots of a block in
//! a scrambled order (TLB-local, like multichase's default); the element holds the address
//! of position `j+1`. Every operation's result is the next address, so every operation
//! waits for the previous one. Operations: plain load, `lock xadd` (fetch-add 0),
//! successful `lock cmpxchg` (compare the known successor, write it back) and `xchg`
//! (swap the known successor in) on x86_64; on AArch64 the LSE instructions `ldaddal`,
//! `casal`, `swpal` where the CPU has them, else `ldaxr`/`stlxr` loops
//! ([`bench_core::rmw`]; each measurement names its instruction); the known successor is computed from a step counter,
//! off the dependency chain. The memory never changes; only the operation differs, so
//! `atomic - load` is the cost of atomicity on that memory. The operations follow each
//! other along the chain (each starts where the previous stopped), so every line an
//! operation reaches was last touched a whole lap before: none re-reads what the one
//! before it left in the caches.

use crate::measurement;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup,
};
use bench_core::chase::ChainLayout;
use bench_core::counters::{self, CounterGroup};
use bench_core::memory::budget::Need;
use bench_core::memory::{OnMemory, TargetSpec};
use bench_core::plan::Cost;
use bench_core::rmw::{Rmw, RmwOp};
use bench_core::stats::Distribution;
use bench_core::units::parse_positive_size;
use bench_core::units::{format_size, human_bytes};
use std::sync::atomic::{AtomicU64, Ordering};

/// Operations measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// Plain load (the reference).
    Load,
    /// `fetch_add(0)` (`lock xadd`).
    FetchAdd,
    /// Successful `compare_exchange` (`lock cmpxchg`).
    Cas,
    /// `swap` (`xchg`).
    Exchange,
}

impl AtomicOp {
    /// All, in output order.
    pub const ALL: [AtomicOp; 4] = [
        AtomicOp::Load,
        AtomicOp::FetchAdd,
        AtomicOp::Cas,
        AtomicOp::Exchange,
    ];
    /// Name in keys and ids.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Load => "load",
            AtomicOp::FetchAdd => "fetch_add",
            AtomicOp::Cas => "cas",
            AtomicOp::Exchange => "exchange",
        }
    }

    /// The instruction this CPU performs the operation with ([`Rmw::native`]).
    pub fn instruction(self) -> &'static str {
        let r = Rmw::native();
        match self {
            AtomicOp::Load => "plain 8-byte load",
            AtomicOp::FetchAdd => r.instruction(RmwOp::FetchAdd),
            AtomicOp::Cas => r.instruction(RmwOp::Cas),
            AtomicOp::Exchange => r.instruction(RmwOp::Swap),
        }
    }
}

/// The atomic latency benchmark.
#[derive(Debug, Clone, Default)]
pub struct AtomicsBench {
    /// Working set (touched bytes, rounded up to whole 256 KiB blocks of memory); default:
    /// the target's DRAM working set ([`bench_core::sizing`]).
    pub size: Option<usize>,
}

/// The chain layout: the default prefetcher-proof one (every line of 256-byte slots, one
/// per phase, at random offsets).
const LAYOUT: ChainLayout = ChainLayout::DEFAULT;
/// Slots per TLB-local block (256 KiB of memory).
const BLOCK_SLOTS: usize = 256 * 1024 / LAYOUT.slot_bytes;
/// Touched bytes per slot (its lines that are chain elements, x 64).
const TOUCHED_PER_SLOT: usize = LAYOUT.phases() * 64;

fn scramble(x: usize, bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    let mask = (1usize << bits) - 1;
    let mut x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) & mask;
    x ^= x >> bits.div_ceil(2);
    x = x.wrapping_mul(0xC2B2_AE3D_27D4_EB4F | 1) & mask;
    x ^= x >> bits.div_ceil(3).max(1);
    x
}

/// A bijection on `0..n`: [`scramble`] over the next power of two, applied again until
/// it lands below `n` (cycle walking; at most a few rounds, since `n` is more than half of
/// that power).
fn permute(x: usize, n: usize) -> usize {
    let bits = n.next_power_of_two().trailing_zeros();
    let mut y = scramble(x, bits);
    while y >= n {
        y = scramble(y, bits);
    }
    y
}

/// Slot index of chain position `j`, a bijection on `0..slots`: `slots` is a power of
/// two up to one block, else a whole number of blocks (visited in a scrambled order, the
/// slots of each in a scrambled order).
#[inline(always)]
pub fn slot_of(j: usize, slots: usize) -> usize {
    if slots <= BLOCK_SLOTS {
        return scramble(j, slots.trailing_zeros());
    }
    let lo_bits = BLOCK_SLOTS.trailing_zeros();
    let lo = j & (BLOCK_SLOTS - 1);
    let hi = j >> lo_bits;
    (permute(hi, slots / BLOCK_SLOTS) << lo_bits) | scramble(lo, lo_bits)
}

/// Touched bytes of a chain whose slots [`slot_of`] can order: a power of two up to one
/// block (256 KiB), else whole blocks; `up` rounds up, else down (at least 4 KiB).
fn whole_blocks(touched: usize, up: bool) -> usize {
    let block = BLOCK_SLOTS * TOUCHED_PER_SLOT;
    let t = touched.max(4096);
    if t <= block {
        return if up {
            t.next_power_of_two()
        } else {
            floor_pow2(t)
        };
    }
    if up {
        t.div_ceil(block) * block
    } else {
        t / block * block
    }
}

/// The working set (touched bytes, in whole blocks) and the rule that chose it.
fn working_set(size: Option<usize>, ctx: &Context, target: &impl OnMemory) -> (usize, String) {
    let (touched, why) = match size {
        Some(s) => (s, "given with --size".to_string()),
        None => {
            let (t, s) = ctx.dram_touched(target, &ctx.cpus_for(1), LAYOUT.span_per_touched());
            (t, s.explain())
        }
    };
    (whole_blocks(touched, true), why)
}

/// The largest power of two at most `x` (`x` >= 1).
fn floor_pow2(x: usize) -> usize {
    1usize << (usize::BITS - 1 - x.max(1).leading_zeros())
}

/// Address of chain position `j` in a chain of `elements` elements at `base`: phase
/// after phase ([`ChainLayout::phases`]), each over all the slots in [`slot_of`]'s order.
#[inline(always)]
fn addr_of(base: usize, j: usize, elements: usize, seed: u64) -> usize {
    let slots = elements / LAYOUT.phases();
    let j = j % elements;
    let slot = slot_of(j % slots, slots);
    base + slot * LAYOUT.slot_bytes + LAYOUT.element_offset(slot, j / slots, seed)
}

/// Builds the chain of `elements` elements in `mem` (their slots as [`slot_of`] takes
/// them), in chain order: the element of position `j` holds the address of position
/// `j+1`.
fn build(mem: &mut [u8], elements: usize, seed: u64) {
    let slots = elements / LAYOUT.phases();
    assert!(slots * LAYOUT.slot_bytes <= mem.len());
    assert!(slots.is_power_of_two() || slots.is_multiple_of(BLOCK_SLOTS));
    let base = mem.as_mut_ptr() as usize;
    for j in 0..elements {
        let at = addr_of(base, j, elements, seed) - base;
        let next = addr_of(base, j + 1, elements, seed) as u64;
        mem[at..at + 8].copy_from_slice(&next.to_ne_bytes());
    }
}

/// Runs `steps` dependent operations from position `start`; returns the end position
/// (the step counter; the chase itself follows the addresses the operations return).
#[inline(never)]
fn chase(
    mem: &[u8],
    elements: usize,
    seed: u64,
    op: AtomicOp,
    start: usize,
    steps: usize,
) -> usize {
    let base = mem.as_ptr() as usize;
    let rmw = Rmw::native();
    let mut p = addr_of(base, start, elements, seed);
    let mut j = start;
    for _ in 0..steps {
        // Off the dependency chain: the known successor, from the counter.
        let succ = addr_of(base, j + 1, elements, seed) as u64;
        // SAFETY: `p` is always the address of an element of the chain built in `mem`
        // (every element holds the address of another one, and `mem` is borrowed, so
        // not unmapped; the operations write back the value already there), 8-byte
        // aligned (slot offsets are multiples of 8 from a page-aligned base).
        let a = unsafe { &*(p as *const AtomicU64) };
        p = match op {
            AtomicOp::Load => a.load(Ordering::Relaxed),
            AtomicOp::FetchAdd => rmw.fetch_add(a, 0),
            AtomicOp::Cas => rmw.cas(a, succ, succ),
            AtomicOp::Exchange => rmw.swap(a, succ),
        } as usize;
        j = if j + 1 == elements { 0 } else { j + 1 };
    }
    std::hint::black_box(p);
    j
}

impl Benchmark for AtomicsBench {
    fn name(&self) -> &'static str {
        "pool.atomics"
    }
    fn requires(&self) -> Requirements {
        Requirements::default()
    }
    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        let (touched, _) = working_set(self.size, ctx, target);
        LAYOUT.span_bytes(touched)
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> Need {
        memory_need(self, ctx, target)
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let (touched, _) = working_set(self.size, ctx, target);
        let e = &ctx.plan.expect;
        let samples = ctx.effort.pool.atomic_samples as f64;
        let mut cost = Cost::new();
        for (size, steps, ns) in [
            (4096usize, 20_000usize, 10.0),
            (touched, 8_000, e.load_ns + 20.0),
        ] {
            let build = (size / 64) as f64 * e.chain_write_ns * 1e-9;
            let run = samples * steps.min(size / 64).max(steps) as f64 * ns * 1e-9;
            let each = e.section_s(1, run);
            cost.add(format!("chain of {}", format_size(size)), 1, build);
            cost.add(format!("4 operations over {}", format_size(size)), 4, each);
        }
        cost
    }
    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let (touched, why) = working_set(self.size, ctx, region.origin());
        let target = region.origin().to_string();
        let mut report = Report::default();
        // The touched bytes the region holds, in whole blocks.
        let mut big = big_of(region.len(), touched);
        if big < 4096 || big * LAYOUT.span_per_touched() > region.len() {
            return Err(NotRun::skip(
                "region smaller than 16 KiB (4 KiB of touched lines)",
            ));
        }
        let check = match self.size {
            Some(_) => None,
            None => dram_check(ctx, region, &mut report, big, touched, &why)?,
        };
        if let Some((_, confirmed)) = check {
            big = confirmed;
        }
        let placement = region.placement().clone();
        let samples = ctx.effort.pool.atomic_samples;
        let mut group = CounterGroup::open_with_timer(&ctx.timer);
        for (si, &size) in [4096usize, big].iter().enumerate() {
            let elements = size / 64;
            let seed = ctx.seed ^ size as u64;
            build(region.as_mut_slice(), elements, seed);
            let mem: &[u8] = region.as_mut_slice();
            let lapped = size <= bench_core::chase::WARM_LAP_MAX_BYTES;
            if lapped {
                // A small set: one full lap untimed, so that the timed operations start
                // from the chase's own cache state. A large one was built in chain
                // order: each line is reached a whole lap after it was written.
                chase(mem, elements, seed, AtomicOp::Load, 0, elements);
            }
            // Steps per sample: about 1 ms at memory latency, whole laps for small sets;
            // more when the timer needs longer batches (`sample`).
            let steps = if si == 0 { 20_000 } else { 8_000.min(elements) };
            let mut p50 = [0f64; 4];
            let mut ids: Vec<String> = Vec::new();
            // Each operation goes on from where the previous one stopped.
            let mut pos = 0usize;
            for (oi, op) in AtomicOp::ALL.into_iter().enumerate() {
                ctx.progress(&format!(
                    "pool.atomics on {target}: {} over {}",
                    op.name(),
                    format_size(size)
                ));
                let (d, counters, end, steps) = sample(
                    ctx,
                    &mut group,
                    mem,
                    (elements, seed),
                    op,
                    pos,
                    (steps, samples),
                )?;
                pos = end;
                p50[oi] = d.p50;
                let id = format!("pool.atomics/{target}/{}/{}", op.name(), format_size(size));
                ids.push(id.clone());
                report.measurements.push(measurement(
                    id,
                    self.name(),
                    &target,
                    serde_json::json!({"op": op.name(), "instruction": op.instruction(), "size_bytes": size, "touched_bytes": size, "span_bytes": LAYOUT.span_bytes(size), "layout": LAYOUT.layout.name(), "slot_bytes": LAYOUT.slot_bytes, "steps_per_sample": steps, "order": "tlb-local 256 KiB", "warmup": if lapped { "built in chain order, one full lap, operations one after the other along the chain" } else { "built in chain order, no lap: operations one after the other along the chain, each line reached a lap after it was written" }, "sizing": if si == 1 { why.clone() } else { "fixed 4 KiB (cache-resident reference)".into() }}),
                    "ns",
                    format!("per-operation latency of a dependent chain of {} over {} touched ({}; each result is the next address)", op.name(), format_size(size), LAYOUT.method()),
                    d,
                    Some(placement.clone()),
                    counters,
                ));
                ctx.point_done();
            }
            if si == 1 {
                let checked = if check.is_some() {
                    "; DRAM working set checked by the DRAM check (see dram_check)"
                } else {
                    ""
                };
                self.params(&mut report, &target, size, &why, checked, &p50, &ids);
            }
        }
        if let Some((i, _)) = check {
            let keys: Vec<String> = report.params.iter().map(|p| p.key.clone()).collect();
            ctx.sizing.cover(i, keys);
        }
        Ok(report)
    }
}

impl AtomicsBench {
    /// The keys of the DRAM working set: each operation's p50, their median, the load.
    #[allow(clippy::too_many_arguments)]
    fn params(
        &self,
        report: &mut Report,
        target: &str,
        size: usize,
        why: &str,
        checked: &str,
        p50: &[f64; 4],
        ids: &[String],
    ) {
        let method = |what: &str| {
            format!(
                "p50 of {what} over {} touched (dependent chain, TLB-local order, {}; {why}{checked})",
                format_size(size),
                LAYOUT.label()
            )
        };
        let median_atomic = bench_core::stats::median(&p50[1..4]).expect("three figures");
        report.params.push(Param::new(
            "atomic_lat_ns",
            median_atomic,
            target,
            method("the median of fetch-add, CAS and exchange latencies"),
            ids[1..].to_vec(),
        ));
        report.params.push(Param::new(
            "atomic_load_lat_ns",
            p50[0],
            target,
            method("plain loads"),
            vec![ids[0].clone()],
        ));
        for (oi, op) in AtomicOp::ALL.into_iter().enumerate().skip(1) {
            report.params.push(Param::new(
                format!("atomic_{}_lat_ns", op.name()),
                p50[oi],
                target,
                method(op.name()),
                vec![ids[oi].clone()],
            ));
        }
        report.params.push(Param::new(
            "atomic_extra_lat_ns",
            (median_atomic - p50[0]).max(0.0),
            target,
            "atomic_lat_ns - atomic_load_lat_ns (same lines)",
            ids.to_vec(),
        ));
    }
}

/// `samples` samples of `steps` dependent operations `op` from chain position `pos` on
/// the chain `(elements, seed)` in `mem`, undisturbed if the counters allow: the
/// distribution (ns per operation), the counters, where the chain stopped, and the steps
/// per sample (more than `steps` when the timer needs longer batches).
fn sample(
    ctx: &Context,
    group: &mut CounterGroup,
    mem: &[u8],
    (elements, seed): (usize, u64),
    op: AtomicOp,
    pos: usize,
    (steps, samples): (usize, usize),
) -> Result<
    (
        Distribution,
        bench_core::counters::MeasurementCounters,
        usize,
        usize,
    ),
    NotRun,
> {
    // Warm-up, timed: the samples last at least the timer's shortest batch.
    let warm = steps.min(elements);
    let t0 = ctx.timer.start();
    let mut pos = chase(mem, elements, seed, op, pos, warm);
    let t1 = ctx.timer.stop();
    let est = ctx.timer.elapsed_ns(t0, t1) / warm as f64;
    let steps = ctx.timer.batch_ops(est, 0.0, steps);
    let mut v = counters::sample_buffer(samples);
    let (v, counters) = counters::measure_undisturbed(
        group,
        counters::DEFAULT_MAX_ATTEMPTS,
        &mut v,
        |v| {
            v.clear();
            for _ in 0..samples {
                let t0 = ctx.timer.start();
                pos = chase(mem, elements, seed, op, pos, steps);
                let t1 = ctx.timer.stop();
                v.push(ctx.timer.elapsed_ns(t0, t1) / steps as f64);
            }
        },
        |v| v.clone(),
    );
    let counters = counters.with_per_op("op", (samples * steps) as u64);
    let Some(d) = Distribution::from_samples(&v) else {
        return Err(NotRun::skip("the timer produced no usable samples"));
    };
    Ok((d, counters, pos, steps))
}

/// The plan of the DRAM check of the chain at `big` touched bytes on `target` (the rule
/// asked for `rule_bytes`): its sizes in whole blocks, the larger within
/// 1/[`bench_core::sizing::CHECK_MEMORY_SHARE_DIVISOR`] of the memory the target offers.
fn check_plan(
    ctx: &Context,
    target: &impl OnMemory,
    big: usize,
    rule_bytes: usize,
) -> bench_core::dram_check::Plan {
    let limit = ctx.check_span_limit(target) / LAYOUT.span_per_touched();
    bench_core::dram_check::Plan {
        start_bytes: big,
        floor_bytes: whole_blocks(rule_bytes, true),
        max_bytes: whole_blocks(limit.max(big), false),
        better: bench_core::dram_check::Better::Lower,
    }
}

/// The touched bytes of the DRAM working set the run measures in a region of `len` bytes
/// (the rule's `touched`, in whole blocks the region holds).
fn big_of(len: usize, touched: usize) -> usize {
    whole_blocks((len / LAYOUT.span_per_touched()).min(touched), false)
}

/// What a run on `target` maps at most at once: the region, grown for the DRAM check's
/// larger point (none with `--size`, or when a check of this run covers the chain), and
/// the sample buffer beside it.
fn memory_need(b: &AtomicsBench, ctx: &Context, target: &TargetSpec) -> Need {
    let (touched, _) = working_set(b.size, ctx, target);
    let placed = b.region_bytes(ctx, target);
    let big = big_of(placed, touched);
    let samples = ctx.effort.pool.atomic_samples * 8;
    let covered = ctx
        .sizing
        .covering(
            &target.to_string(),
            bench_core::dram_check::Pattern::Chase,
            &ctx.cpus_for(1),
            big,
        )
        .is_some();
    let (len, what) = match b.size {
        None if !covered => {
            let plan = check_plan(ctx, target, big, touched);
            let larger = plan.first_larger_bytes();
            let largest = placed.max(LAYOUT.span_bytes(plan.largest_bytes()));
            (
                placed.max(LAYOUT.span_bytes(larger)),
                format!(
                    "the DRAM check's larger point, {} touched (S = {}, the DRAM working set of CPU {}); a check that finds S in a cache grows it, up to a {} region (half the memory the target offers at most)",
                    human_bytes(larger as u64),
                    human_bytes(big as u64),
                    ctx.cpus_for(1)[0],
                    human_bytes(target.mapped_bytes(largest, &ctx.topology) as u64)
                ),
            )
        }
        Some(_) => (
            placed,
            format!(
                "the chain over {} touched (--size)",
                human_bytes(big as u64)
            ),
        ),
        None => (
            placed,
            format!(
                "the chain over {} touched (its DRAM check made by this run)",
                human_bytes(big as u64)
            ),
        ),
    };
    let region = target.mapped_bytes(len, &ctx.topology);
    let need = Need {
        bytes: region + samples,
        on_target_bytes: region,
        what: format!("a {} region for {what}", human_bytes(region as u64)),
        fit: None,
        grows_to_bytes: 0,
    };
    need.with_fit("--size", LAYOUT.span_per_touched(), samples)
}

/// The DRAM check of the chain at `big` touched bytes (the rule asked for `rule_bytes`):
/// the covering check of this run (the latency sweep's, on the same CPU) if there is
/// one, else plain loads over the chain at `big` and at a larger set, in the region
/// grown for it. Returns the check's index in the run's book and the size that stands.
fn dram_check(
    ctx: &Context,
    region: &mut bench_core::memory::Region,
    report: &mut Report,
    big: usize,
    rule_bytes: usize,
    why: &str,
) -> Result<Option<(usize, usize)>, NotRun> {
    use bench_core::dram_check::{self as dc, CheckInfo, Pattern};
    let target = region.origin().to_string();
    let cpu0 = ctx.cpus_for(1);
    if let Some(i) = ctx.sizing.covering(&target, Pattern::Chase, &cpu0, big) {
        return Ok(Some((i, big)));
    }
    let plan = check_plan(ctx, region.origin(), big, rule_bytes);
    let samples = ctx.effort.pool.atomic_samples;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let outcome = dc::run(plan, |bytes, pass| {
        region
            .grow(LAYOUT.span_bytes(bytes), &ctx.topology)
            .map_err(NotRun::skip)?;
        let (elements, seed) = (bytes / 64, ctx.seed ^ bytes as u64 ^ pass as u64);
        build(region.as_mut_slice(), elements, seed);
        let mem: &[u8] = region.as_mut_slice();
        let (d, counters, _, _) = sample(
            ctx,
            &mut group,
            mem,
            (elements, seed),
            AtomicOp::Load,
            0,
            (8_000.min(elements), samples),
        )?;
        let id = format!(
            "pool.atomics/{target}/check/load/{}{}",
            format_size(bytes),
            bench_core::dram_check::pass_suffix(pass)
        );
        let v = d.p50;
        report.measurements.push(measurement(
            id.clone(),
            "pool.atomics",
            &target,
            serde_json::json!({"op": "load", "touched_bytes": bytes, "span_bytes": LAYOUT.span_bytes(bytes), "layout": LAYOUT.layout.name(), "slot_bytes": LAYOUT.slot_bytes, "pass": pass}),
            "ns",
            "plain loads of the atomics chain, a point of the DRAM check".into(),
            d,
            Some(region.placement().clone()),
            counters,
        ));
        Ok::<_, NotRun>((v, Some(id)))
    })?;
    let check = outcome.into_check(
        &plan,
        CheckInfo {
            target,
            benchmark: "pool.atomics".into(),
            pattern: Pattern::Chase,
            kernel: format!("plain loads, tlb-local {} chain", LAYOUT.label()),
            cpus: cpu0,
            unit: "ns".into(),
            sizing: why.into(),
            keys: vec![],
        },
    );
    report.warnings.extend(dc::warning(&check));
    let size = check.reported_bytes;
    Ok(Some((ctx.sizing.record_check(check), size)))
}

/// Dependent atomic RMW latency (fetch-add, CAS, exchange) vs plain loads on a target.
#[derive(Debug, Clone, clap::Args)]
pub struct AtomicsArgs {
    /// Working set (default: the target's DRAM working set for the first CPU, as the latency
    /// sweep's: 4 x the caches it can fill, the same with --quick); at least one line.
    #[arg(long, value_name = "SIZE", value_parser = parse_line_size)]
    pub size: Option<usize>,
}

/// `--size`: a size of at least one cache line (a chain needs whole lines).
fn parse_line_size(s: &str) -> Result<usize, String> {
    let v = parse_positive_size(s)?;
    let line = bench_core::chase::LINE_BYTES;
    if v < line {
        return Err(format!(
            "{v} bytes is smaller than one cache line ({line} bytes)"
        ));
    }
    Ok(v)
}

impl Setup for AtomicsArgs {
    fn plan(&self, _opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(AtomicsBench { size: self.size }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_below_one_line_is_refused() {
        assert!(parse_line_size("1").unwrap_err().contains("one cache line"));
        assert!(parse_line_size("63").is_err());
        assert_eq!(parse_line_size("64"), Ok(64));
        assert_eq!(parse_line_size("1M"), Ok(1 << 20));
    }

    #[test]
    fn memory_is_the_region_a_run_grows_to() {
        // 256 MiB offered: the working set 64 MiB (a quarter), its check's larger point
        // 128 MiB (half), which no check can grow past.
        let ctx = Context::quick_local();
        ctx.sizing.assume_available("anon", Some(256 << 20));
        let anon = TargetSpec::Anon;
        for size in [None, Some(3 << 20)] {
            let b = AtomicsBench { size };
            let need = b.memory(&ctx, &anon);
            let mut r = bench_core::memory::Region::allocate(
                &anon,
                b.region_bytes(&ctx, &anon),
                &ctx.topology,
            )
            .unwrap();
            b.run(&ctx, Input::Region(&mut r)).unwrap();
            let want = if size.is_some() { 3 << 20 } else { 128 << 20 };
            assert_eq!(r.len(), want, "{size:?}");
            assert_eq!(need.on_target_bytes, want, "{size:?}: {need:?}");
            let fit = need.fit.expect("--size bounds it");
            assert_eq!((fit.option, fit.per_byte), ("--size", 1));
        }
        // `pool atomics --size 30G`: planned as it is, for the refusal to weigh.
        let need = AtomicsBench {
            size: Some(30 << 30),
        }
        .memory(&ctx, &anon);
        assert_eq!(need.on_target_bytes, 30 << 30);
    }

    #[test]
    fn slot_order_is_a_permutation() {
        for slots in [1usize, 2, 64, 4096, 8192, 1 << 16] {
            let mut seen = vec![false; slots];
            for j in 0..slots {
                let l = slot_of(j, slots);
                assert!(!seen[l], "slot {l} visited twice for {slots} slots");
                seen[l] = true;
            }
        }
    }

    #[test]
    fn every_op_follows_the_chain_and_leaves_memory_unchanged() {
        let slots = 8192;
        let mut mem = vec![0u64; slots * LAYOUT.slot_bytes / 8];
        // SAFETY: reinterpreting u64s as bytes of the same allocation (8-byte aligned).
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(mem.as_mut_ptr() as *mut u8, slots * LAYOUT.slot_bytes)
        };
        build(bytes, slots, 3);
        let before = bytes.to_vec();
        // Elements sit at varying offsets inside their slots (the randomized layout).
        let base = bytes.as_ptr() as usize;
        let offsets: std::collections::BTreeSet<usize> = (0..256)
            .map(|j| (addr_of(base, j, slots, 3) - base) % LAYOUT.slot_bytes)
            .collect();
        assert!(offsets.len() > 16, "{offsets:?}");
        for op in AtomicOp::ALL {
            assert_eq!(chase(bytes, slots, 3, op, 5, 1000), 1005, "{op:?}");
            assert_eq!(chase(bytes, slots, 3, op, 0, slots), 0, "{op:?} full lap");
        }
        assert_eq!(bytes, &before[..]);
    }

    #[test]
    fn working_set_follows_the_sizing_of_the_target() {
        let ctx = Context::quick_local();
        // A memory-side cache the sweep found past every CPU cache: its plateau wins.
        let rule = ctx.dram_sizing(
            &TargetSpec::Node(7),
            &ctx.cpus_for(1),
            bench_core::dram_check::Pattern::Chase,
        );
        let far = 4 * rule.touched_bytes;
        ctx.sizing
            .record("node:7", rule.with_plateau(far, Some(far / 2), vec![]));
        let (t, why) = working_set(None, &ctx, &TargetSpec::Node(7));
        let (cap, bounded) = bench_core::sizing::cap_by_memory(
            4 * far,
            LAYOUT.span_per_touched(),
            ctx.available(&TargetSpec::Node(7)),
        );
        if !bounded {
            assert_eq!(t, whole_blocks(cap, true));
            assert!(why.contains("plateau"), "{why}");
        }
        let (t, why) = working_set(Some(5 << 20), &ctx, &TargetSpec::Anon);
        assert_eq!(t, 5 << 20, "whole 256 KiB blocks of lines");
        assert!(why.contains("--size"));
        assert_eq!(working_set(Some(100), &ctx, &TargetSpec::Anon).0, 4096);
    }

    #[test]
    fn block_counts_that_are_not_powers_of_two_are_permutations() {
        for blocks in [3usize, 5, 6, 7, 12, 19] {
            let slots = blocks * BLOCK_SLOTS;
            let mut seen = vec![false; slots];
            for j in 0..slots {
                let l = slot_of(j, slots);
                assert!(l < slots && !seen[l], "slot {l} twice for {blocks} blocks");
                seen[l] = true;
            }
            // TLB-local: a block's slots are visited one after the other.
            let block = |j: usize| slot_of(j, slots) / BLOCK_SLOTS;
            assert!((0..BLOCK_SLOTS).all(|j| block(j) == block(0)));
        }
        let block = BLOCK_SLOTS * TOUCHED_PER_SLOT;
        assert_eq!(block, 256 * 1024, "a block's every line is touched");
        assert_eq!(whole_blocks(5 * block + 1, true), 6 * block);
        assert_eq!(whole_blocks(5 * block + 1, false), 5 * block);
    }
}
