//! What `mem.latency` maps at most at once on a target ([`Benchmark::memory`]): its region
//! as the run grows it, walked step by step with the rule the run grows it by
//! ([`grown_len`]) and the sizes the run takes ([`LatencyBench::cap`],
//! [`LatencyBench::sweep_sizes`], [`LatencyBench::check_plan`]): the cold lap, the sweep
//! up to its cap (the adaptive sweep may stop earlier, at the DRAM plateau), the DRAM
//! check's larger point, the full-random chain and the prefetch self-check's chains.
//! Beside the region: the chain builder's scratch
//! ([`ChainLayout::build_scratch_bytes`]) or a point's sample buffers, whichever is
//! larger (the scratch is freed before the samples are taken).

use super::*;
use bench_core::memory::budget::Need;
use bench_core::units::human_bytes;

/// Bytes a point's sample buffers take at most: the batches' buffer grown to hold
/// `MAX_BATCHES` and the copy the distribution is made from.
pub const SAMPLE_BYTES: usize = (MAX_BATCHES.next_power_of_two() + MAX_BATCHES) * 8;

/// One step of a run: the region must hold `span` bytes (grown within `limit` by
/// [`grown_len`]) and, where a chain is built, a chase of that many touched bytes of that
/// layout and order is written and sampled there.
struct Step {
    span: usize,
    limit: usize,
    chain: Option<(usize, ChainLayout, ChaseOrder)>,
    what: String,
}

/// Bytes for people (`2 GiB`).
fn human(bytes: usize) -> String {
    human_bytes(bytes as u64)
}

impl LatencyBench {
    /// The DRAM point of a run and its check, as planned: the working set S (the sweep's
    /// cap, or its largest size where the user bounded it: the run takes the last point
    /// when the sweep reached DRAM) and the check's plan from it.
    fn planned_dram(&self, ctx: &Context, target: &TargetSpec) -> (usize, dram_check::Plan, usize) {
        let rule = ctx.dram_sizing(target, &ctx.cpus_for(1), Pattern::Chase);
        let (cap, cap_rule) = self.cap(&rule, ctx.available(target));
        let start = if self.sizes.is_none() && self.max_size.is_none() {
            cap_rule.touched_bytes
        } else {
            self.sweep_sizes(cap, ctx.effort)
                .last()
                .copied()
                .unwrap_or(cap)
        };
        let (plan, larger) = self.check_plan(ctx, target, start, cap_rule.touched_bytes);
        (start, plan, larger)
    }

    /// The steps of a run on `target`, in the order the run takes them, after the region
    /// the runner places ([`Benchmark::region_bytes`]).
    fn memory_steps(&self, ctx: &Context, target: &TargetSpec) -> Vec<Step> {
        let rule = ctx.dram_sizing(target, &ctx.cpus_for(1), Pattern::Chase);
        let (cap, _) = self.cap(&rule, ctx.available(target));
        let span = |t: usize| self.layout.span_bytes(t);
        let span_limit = span(cap).max(self.region_bytes(ctx, target));
        let (l, o) = (self.layout, self.order);
        let mut steps = Vec::new();
        let mut chase = |t: usize, limit: usize, layout: ChainLayout, order, what: String| {
            steps.push(Step {
                span: layout.span_bytes(t),
                limit,
                chain: Some((t, layout, order)),
                what,
            })
        };
        if o != ChaseOrder::Random {
            let cold = COLD_REF_BYTES.min(cap);
            chase(
                cold,
                span_limit,
                l,
                o,
                format!("the cold lap's {} chain", human(cold)),
            );
        }
        for s in self.sweep_sizes(cap, ctx.effort) {
            let what = format!("the sweep's {} point", human(s));
            chase(s, span_limit, l, o, what);
        }
        let (start, plan, larger) = self.planned_dram(ctx, target);
        let (small, large, _) = plan.comparison_from(start);
        let s = human(start);
        let what = format!(
            "the DRAM check's larger point, {} touched (S = {s})",
            human(larger)
        );
        chase(larger, span(larger), l, o, what);
        for t in [small, large] {
            let what = format!("the DRAM check's {} point (S = {s})", human(t));
            chase(t, span(t), l, o, what);
        }
        if self.random_at_max && o != ChaseOrder::Random {
            let what = format!("the full-random chain at the DRAM point ({s})");
            chase(start, span(start), l, ChaseOrder::Random, what);
        }
        if self.prefetch_check && o != ChaseOrder::Random {
            for c in self.check_chains(ctx.effort) {
                let what = format!("the prefetch self-check's {} chain ({s})", c.label());
                chase(start, usize::MAX, c, o, what);
            }
        }
        steps
    }

    /// The prefetch self-check's chains besides the default one: the same slot built the
    /// other way, and (where `effort` asks for it: a full run) the slot twice as large
    /// (half above 1 KiB) for information; those whose layout is invalid are left out.
    pub(super) fn check_chains(&self, effort: &Effort) -> Vec<ChainLayout> {
        let slot = self.layout.slot_bytes;
        let alt_slot = if slot >= 1024 { slot / 2 } else { slot * 2 };
        // The twin of a phased chain spans the same memory; so does a phased chain of
        // another slot (a one-line-per-slot chain of it would span several times more).
        let alt = ChainLayout {
            layout: match self.layout.layout {
                l if l.is_phased() => SlotLayout::Phased,
                _ => SlotLayout::Randomized,
            },
            slot_bytes: alt_slot.max(MIN_RANDOMIZED_SLOT_BYTES),
        };
        let info = effort.mem.latency_info_chain.then_some(alt);
        std::iter::once(self.layout.twin())
            .chain(info)
            .filter(|l| l.validate().is_ok())
            .collect()
    }

    /// The peak of a run on `target`: the region at its largest, with the chain scratch
    /// or the samples beside it, and the option that bounds it.
    pub(super) fn memory_need(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let topo = &ctx.topology;
        let mut len = self.region_bytes(ctx, target);
        let mut peak = Need::on_target(target.mapped_bytes(len, topo), "the first region");
        let mut peak_what = String::new();
        for st in self.memory_steps(ctx, target) {
            if let Some(g) = grown_len(len, st.span, st.limit) {
                len = g;
            }
            let heap = st
                .chain
                .map_or(0, |(t, l, o)| l.build_scratch_bytes(t, o).max(SAMPLE_BYTES));
            let region = target.mapped_bytes(len, topo);
            if region + heap > peak.bytes {
                peak = Need {
                    bytes: region + heap,
                    on_target_bytes: region,
                    what: String::new(),
                    fit: None,
                    grows_to_bytes: 0,
                };
                peak_what = st.what;
            }
        }
        let heap = peak.bytes - peak.on_target_bytes;
        let (_, plan, _) = self.planned_dram(ctx, target);
        let largest = len.max(self.layout.span_bytes(plan.largest_bytes()));
        let largest = target.mapped_bytes(largest, topo);
        peak.what = format!(
            "a {} region for {peak_what}, and {} of chain scratch or samples beside it{}",
            human(peak.on_target_bytes),
            human(heap),
            crate::check_growth_note(peak.on_target_bytes, largest)
        );
        let region = peak.on_target_bytes;
        let peak = peak.growing(region, largest);
        let spt = self.layout.span_per_touched();
        let option = if self.sizes.is_some() {
            "--sizes"
        } else {
            "--max-size"
        };
        peak.with_fit(option, spt, heap)
    }
}
