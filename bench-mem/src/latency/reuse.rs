//! The default chase for other families: one sampled point of it (the NUMA matrix), its
//! planned seconds, and its DRAM check for a family that chases without the latency sweep
//! (`mem loaded` alone), with what that check maps.

use super::*;

/// The DRAM check of a chase of `start` touched bytes on `region`'s target from the
/// first CPU, for a family that chases without having run the latency sweep (`mem
/// loaded` alone): the covering check of this run if there is one, else the default
/// chain at `start` and at a larger working set (the sweep's own check) in the caller's
/// region, grown in place (the family is done with it: a second region beside it could
/// exceed what a node offers), recorded in the run's book. Returns the check's index in
/// the book, or `None` (with a warning in `report`) when the region could not grow.
pub fn chase_check(
    ctx: &Context,
    region: &mut Region,
    start: usize,
    report: &mut Report,
) -> Result<Option<usize>, Skip> {
    let target = region.origin().clone();
    let cpu0 = ctx.cpus_for(1);
    let t = target.to_string();
    if let Some(i) = ctx.sizing.covering(&t, Pattern::Chase, &cpu0, start) {
        return Ok(Some(i));
    }
    let b = LatencyBench::default();
    let (floor, rule) = chase_check_floor(ctx, &target);
    if let Some(&cpu) = ctx.cpus.first() {
        bench_core::pin::pin_current(cpu).map_err(|e| Skip::new(e.to_string()))?;
    }
    let Some(DramPoint { check, .. }) =
        b.dram_point(ctx, region, report, start, floor, &[], rule.explain())?
    else {
        return Ok(None);
    };
    Ok(Some(ctx.sizing.record_check(check)))
}

/// The cache rule's working set of the first CPU on `target` for the default chain: the
/// smallest larger point of [`chase_check`]'s check.
fn chase_check_floor(ctx: &Context, target: &impl OnMemory) -> (usize, DramSizing) {
    let spt = LatencyBench::default().layout.span_per_touched();
    ctx.dram_touched(target, &ctx.cpus_for(1), spt)
}

/// What [`chase_check`] of a chase of `start` touched bytes on `target` maps in the
/// caller's region, before its check finds anything (the larger point's span, the chain
/// builder's scratch or a point's samples beside it); `None` when a check of this run
/// covers the chase (nothing is grown).
pub fn chase_check_memory(
    ctx: &Context,
    target: &impl OnMemory,
    start: usize,
) -> Option<crate::CheckMemory> {
    let t = target.to_string();
    if ctx
        .sizing
        .covering(&t, Pattern::Chase, &ctx.cpus_for(1), start)
        .is_some()
    {
        return None;
    }
    let b = LatencyBench::default();
    let (floor, _) = chase_check_floor(ctx, target);
    let (plan, larger) = b.check_plan(ctx, target, start, floor);
    let span = b.layout.span_bytes(larger);
    Some(crate::CheckMemory {
        region_bytes: span,
        largest_region_bytes: span.max(b.layout.span_bytes(plan.largest_bytes())),
        heap_bytes: b
            .layout
            .build_scratch_bytes(larger, b.order)
            .max(SAMPLE_BYTES),
    })
}

/// One sampled chase of `touched` bytes over `region` with the default chain (the
/// sweep's layout and order), on the calling thread, which the caller has pinned to
/// `ctx.cpus[0]`: recorded in `report` as measurement `id` of `benchmark`, with the
/// region's placement. For a family that needs one DRAM point of the chase (the NUMA
/// matrix); the sizing and its check are the caller's. Returns the p50 (ns per load).
pub fn chase_point(
    ctx: &Context,
    region: &mut Region,
    touched: usize,
    (benchmark, id): (&str, String),
    report: &mut Report,
) -> Result<f64, Skip> {
    let b = LatencyBench::default();
    let p = b.measure(ctx, region, touched, b.layout, b.order)?;
    let v = b.record(report, region, &id, b.method(b.layout, b.order), p);
    if let Some(m) = report.measurements.last_mut() {
        m.benchmark = benchmark.into();
    }
    Ok(v)
}

/// The planned seconds of one sampled chase of `touched` bytes from the first CPU under a
/// sampling time of `point`: the chain built (one element written per slot, and a warm
/// lap up to [`bench_core::chase::WARM_LAP_MAX_BYTES`]), then sampled, repeated where
/// disturbed.
pub fn chase_point_s(ctx: &Context, touched: usize, point: std::time::Duration) -> f64 {
    let e = &ctx.plan.expect;
    let elements = (touched / 64) as f64;
    let in_cache = ctx
        .cache_reach(&ctx.cpus_for(1))
        .is_some_and(|r| touched <= r.total_bytes);
    let load_ns = if in_cache { 5.0 } else { e.load_ns };
    let warm = if touched <= bench_core::chase::WARM_LAP_MAX_BYTES {
        elements * load_ns * 1e-9
    } else {
        0.0
    };
    let run = point.as_secs_f64();
    elements * e.chain_write_ns * 1e-9 + warm + e.section_s(1, run)
}

/// Planned seconds of [`chase_check`] of a chase of `start` touched bytes on `target`:
/// none where a family planned before it checks the chase there
/// ([`bench_core::plan::Planning::checked`]), else the default chain at the check's
/// floor and at twice it (the region grown to hold it): its first pass (a family that
/// checks only to stand its keys on the check repeats it as seldom as the sweep does,
/// and the whole family's figures, not this check's, are what a repeat would cost).
pub fn chase_check_s(ctx: &Context, target: &TargetSpec, start: usize) -> f64 {
    if ctx.plan.checked(&target.to_string(), Pattern::Chase) {
        return 0.0;
    }
    let (floor, _) = chase_check_floor(ctx, target);
    let s = start.max(floor);
    let point = ctx.effort.mem.latency_point;
    let layout = LatencyBench::default().layout;
    let grown = layout.span_bytes(2 * s) - layout.span_bytes(s);
    chase_point_s(ctx, s, point)
        + chase_point_s(ctx, 2 * s, point)
        + ctx.plan.expect.populate_s(grown)
}
