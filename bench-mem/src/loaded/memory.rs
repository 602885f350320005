//! What `mem.loaded` maps at most at once on a target ([`Benchmark::memory`]), in the
//! order the run maps it: the region the runner places (the chase's span and every
//! traffic thread's buffer, [`LoadedLatencyBench::region_bytes`]) with the chain
//! builder's scratch, then the rig's sample buffers and a point's copy of them; then the
//! region grown in place for the chase's DRAM check
//! ([`crate::latency::chase_check_memory`]) and for the traffic's
//! ([`crate::bandwidth::stream_check_memory`]), the rig's buffers still held.

use super::*;
use bench_core::memory::budget::Need;
use bench_core::units::human_bytes;

/// Bytes of the rig's sample buffers (the chase's batch means and single loads), touched
/// when the rig is made and held until the run returns.
pub const RIG_BYTES: usize = (MAX_SAMPLES + MAX_PER_LOAD) * 8;

/// Bytes for people (`2 GiB`).
fn human(bytes: usize) -> String {
    human_bytes(bytes as u64)
}

impl LoadedLatencyBench {
    /// The peak of a run on `target`: the largest of its three stages.
    pub(super) fn memory_need(&self, ctx: &Context, target: &TargetSpec) -> Need {
        if ctx.cpus.len() < 2 {
            return Need::on_target(0, "nothing: it needs 2 CPUs");
        }
        let topo = &ctx.topology;
        let (chase_bytes, _) = Self::chase_touched(ctx, target);
        let layout = ChainLayout::DEFAULT;
        let load_bytes = Self::load_bytes(ctx, target);
        let loaders = ctx.cpus.len() - 1;
        let placed = self.region_bytes(ctx, target);
        let scratch = layout.build_scratch_bytes(chase_bytes, ChaseOrder::DEFAULT);
        // Each point copies its samples out of the rig's buffers.
        let curves = (
            placed,
            scratch.max(2 * RIG_BYTES),
            format!(
                "the {} chase and {loaders} x {} of traffic buffers",
                human(layout.span_bytes(chase_bytes)),
                human(load_bytes)
            ),
        );
        let mut stages = vec![curves];
        let mut largest = placed;
        if let Some(c) = crate::latency::chase_check_memory(ctx, target, chase_bytes) {
            largest = largest.max(c.largest_region_bytes);
            stages.push((
                placed.max(c.region_bytes),
                RIG_BYTES + c.heap_bytes,
                format!("the chase's DRAM check at twice its {}", human(chase_bytes)),
            ));
        }
        let traffic = load_bytes * loaders;
        let stream = crate::bandwidth::stream_check_memory(ctx, target, ctx.cpus.len(), traffic);
        if let Some(c) = stream {
            largest = largest.max(c.largest_region_bytes);
            let len = stages.iter().map(|s| s.0).max().unwrap_or(placed);
            stages.push((
                len.max(c.region_bytes),
                RIG_BYTES,
                format!("the traffic's DRAM check at twice its {}", human(traffic)),
            ));
        }
        let (len, heap, what) = stages
            .into_iter()
            .max_by_key(|(len, heap, _)| target.mapped_bytes(*len, topo) + heap)
            .expect("the curves' stage");
        let region = target.mapped_bytes(len, topo);
        let largest = target.mapped_bytes(largest, topo);
        Need {
            bytes: region + heap,
            on_target_bytes: region,
            what: format!(
                "a {} region for {what}, and {} of chain scratch and samples beside it{}",
                human(region),
                human(heap),
                crate::check_growth_note(region, largest)
            ),
            fit: None,
            grows_to_bytes: 0,
        }
        .growing(region, largest)
    }
}
