//! What `mem.agents` and `mem.agents-spread` map at most at once ([`Benchmark::memory`]):
//! the agents' ranges of the target (k agents x S for the largest count it runs,
//! [`AgentsConfig::planned`]) and every agent CPU's private buffer of S on its own node
//! (not on the target), all held while the points run; then, with the default S, the
//! region grown for the DRAM checks of the stream ([`crate::bandwidth::stream_check_memory`]),
//! the private buffers released.

use super::*;
use bench_core::memory::budget::Need;
use bench_core::units::human_bytes;

/// Bytes for people (`2 GiB`).
fn human(bytes: usize) -> String {
    human_bytes(bytes as u64)
}

/// The private buffers of the agents on `cpus`, each `size` bytes on its CPU's node.
fn private_bytes(ctx: &Context, cpus: &[usize], size: usize) -> usize {
    cpus.iter()
        .map(|&c| local_target(&ctx.topology, c).mapped_bytes(size, &ctx.topology))
        .sum()
}

/// The need of `regions` (bytes on the targets) beside the private buffers of `cpus`:
/// `k` agents x `size`, bounded by `--size`.
fn points_need(
    ctx: &Context,
    (regions, k): (usize, usize),
    cpus: &[usize],
    size: usize,
    on: &str,
) -> Need {
    let private = private_bytes(ctx, cpus, size);
    let n = cpus.len();
    Need {
        bytes: regions + private,
        on_target_bytes: regions,
        what: format!(
            "{k} agent(s) x {} on {on} (the largest count it runs), and {n} private buffer(s) of {} on the agents' own nodes",
            human(size),
            human(size)
        ),
        fit: None,
        grows_to_bytes: 0,
    }
    .with_fit("--size", k + n, 0)
}

impl AgentsBench {
    /// The larger of the points (the largest count's ranges and every private buffer)
    /// and, with the default S, the DRAM checks after them.
    pub(super) fn memory_need(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let c = &self.config;
        let (size, _) = c.size(ctx, &[target]);
        let (rungs, _) = c.planned(ctx, target, size);
        let Some(k) = rungs.last().map(|r| r.threads) else {
            return Need::on_target(0, "nothing: no agent count to run");
        };
        let region = bytes_per_target(k, 1, size);
        let mapped = target.mapped_bytes(region, &ctx.topology);
        let mut need = points_need(ctx, (mapped, k), &union_of(&rungs), size, "the target");
        if c.size.is_some() {
            return need;
        }
        let mut largest = need.on_target_bytes;
        for threads in [1, ctx.cpus.len()] {
            let bytes = ctx.dram_stream_bytes(target, &ctx.cpus_for(threads)).0;
            let Some(c) = crate::bandwidth::stream_check_memory(ctx, target, threads, bytes) else {
                continue;
            };
            let topo = &ctx.topology;
            largest = largest.max(target.mapped_bytes(c.largest_region_bytes.max(region), topo));
            let len = target.mapped_bytes(c.region_bytes.max(region), topo);
            if len > need.bytes {
                need = Need::on_target(
                    len,
                    format!(
                        "the DRAM check of the stream of {threads} CPU(s) at {} and twice it, after the points (their private buffers released)",
                        human(bytes)
                    ),
                );
            }
        }
        need.what
            .push_str(&crate::check_growth_note(need.on_target_bytes, largest));
        let region = need.on_target_bytes;
        need.growing(region, largest)
    }
}

impl SpreadBench {
    /// Both targets' regions (ceil(k / 2) x S each, the largest count it runs) and every
    /// agent CPU's private buffer; nothing when no count fits both targets (the run skips
    /// before it maps anything).
    pub(super) fn memory_need(&self, ctx: &Context) -> Need {
        let SpreadTargets::Pair(a, b) = &self.targets else {
            return Need::on_target(0, "nothing: no two targets");
        };
        let (size, _) = self.config.size(ctx, &[a, b]);
        let rungs = self.rungs(ctx, a, b, size);
        let Some(k) = rungs.last().map(|r| r.threads) else {
            return Need::on_target(0, "nothing: no count of 2 agents or more fits both targets");
        };
        let each = bytes_per_target(k, 2, size);
        let regions = a.mapped_bytes(each, &ctx.topology) + b.mapped_bytes(each, &ctx.topology);
        let on = format!("{a} and {b}");
        points_need(ctx, (regions, k), &union_of(&rungs), size, &on)
    }
}
