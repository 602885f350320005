//! What `mem.interference` maps at most at once ([`Benchmark::memory`]): one region per
//! target (its chase's span, every victim CPU's slice and every aggressor CPU's), all held
//! from the first point to the last, beside one chain builder's scratch (the chains are
//! built one after the other) and the rig's sample buffer. The GPU's copies use the
//! aggressor part of each region (registered, so page-locked, not more memory) and one
//! copy of device memory on the GPU.

use super::*;
use bench_core::memory::budget::Need;
use bench_core::units::human_bytes;

impl InterferenceBench {
    /// Every target's region and the largest chain scratch; nothing without two cores
    /// (the run skips before it maps anything).
    pub(super) fn memory_need(&self, ctx: &Context) -> Need {
        let Ok(split) = split::split(&ctx.topology, &ctx.cpus) else {
            return Need::on_target(0, "nothing: it needs CPUs on two cores");
        };
        let topo = &ctx.topology;
        let mut regions = 0;
        let mut scratch = 0;
        let mut parts = Vec::new();
        for t in &self.targets {
            let l = self.layout(ctx, t, &split);
            let mapped = t.mapped_bytes(l.len, topo);
            regions += mapped;
            scratch = scratch
                .max(ChainLayout::DEFAULT.build_scratch_bytes(l.touched, ChaseOrder::DEFAULT));
            parts.push(format!("{} on {t}", human_bytes(mapped as u64)));
        }
        let heap = scratch + measure::RIG_BYTES;
        let gpu = match self.dma.device_bytes(ctx.effort) {
            None => String::new(),
            Some(dev) => format!(
                "; the aggressor part of each region ({}) is also the GPU's: page-locked (registered) while its cells run, inside the region, and one copy of {} of device memory on the GPU, not on the host",
                human_bytes(self.targets.iter().map(|t| self.layout(ctx, t, &split).aggressor_part).sum::<usize>() as u64),
                human_bytes(dev as u64)
            ),
        };
        Need {
            bytes: regions + heap,
            on_target_bytes: regions,
            what: format!(
                "one region per target ({}: a chase, {} victim and {} aggressor slices each), and {} of chain scratch and samples{gpu}",
                parts.join(", "),
                split.victim.len(),
                split.aggressor.len(),
                human_bytes(heap as u64)
            ),
            fit: None,
            grows_to_bytes: 0,
        }
    }
}
