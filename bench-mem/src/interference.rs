//! `mem.interference`: who loses what when two memory targets are used at once, for
//! every ordered pair (A, B) of the run's targets, A = B included (the baseline).
//!
//! **Sides.** The run's CPUs are split by core ([`split::split`]: SMT siblings are one
//! core, and victim and aggressors never share one): the first half of the cores, nearest
//! the first CPU, is the victim's, the rest the aggressors'. Fewer than two cores: skipped
//! with the reason. On a 2-vCPU guest that is one victim CPU and one aggressor CPU.
//!
//! **Victim.** Its latency is the chase of [`crate::chase`] (the default prefetcher-proof
//! chain, as `mem.loaded`) on its first CPU over A's DRAM working set (4 x the caches of
//! every CPU of the run: the aggressors fill them too, [`Context::dram_touched`]), the p50
//! of 256-load batch means over the loaded-latency point's time; its bandwidth is every
//! victim CPU reading its own slice of A (the streaming DRAM footprint of the victim's
//! CPUs, [`Context::dram_stream_bytes`]), the sum of the threads' own rates in each of the
//! crew's windows ([`bench_core::crew`]), p50 over the undisturbed windows.
//!
//! **Aggressors.** Every aggressor CPU streams its own slice of B (sized the same way for
//! the aggressors' CPUs) at full rate (no injection delay) with a traffic mix of
//! `mem.loaded` ([`crate::loaded::Mix`]): `read` (all loads) and `1r1w` (1 load : 1
//! temporal store, the write mix) by default. Its bandwidth is the bytes loaded + stored
//! over time (GB = 1e9 B, RFO not counted).
//!
//! **Points.** Alone: the victim's latency and bandwidth on each A, the aggressors' on each
//! (B, mix). Together, for each (A, B, mix): the chase beside the aggressor crew (one
//! window, retried while disturbed; the aggressors' bandwidth beside the chase recorded),
//! and one crew of the victim's and the aggressors' streams released together, each side's
//! rates summed apart. The ratios are together / alone ([`split::ratio`]), noisy when
//! either side is. The alone points are measured once per target (per mix) and shared by
//! the pairs.
//!
//! **Keys.** `xtier_<victim tier>_under_<aggressor tier>_{lat,bw}_ratio` for the read mix,
//! each tier pair from its first target pair ([`split::key_pairs`]: a target under itself
//! first); every pair and mix is a cell of params.json's `interference` and has its
//! measurements. The benchmark is planned as a device-like subject (run once, after the
//! memory targets) and places one region per target itself through [`Region::allocate`],
//! as `mem.agents-spread` does.
//!
//! **GPU.** Where a GPU can be used (the runner hands the family a DMA aggressor,
//! [`bench_core::dma`], found through the CUDA driver), the GPU is the matrix's `gpu`
//! column ([`Dma`]): for every victim target A and memory target B, the victim (the same
//! chase and the same victim crew) while the GPU copies to (h2d: it reads B) and from
//! (d2h: it writes B) the registered aggressor part of B's region back to back, the
//! copies driven from the first aggressor CPU; and the GPU's bandwidth alone and beside
//! the victim (bytes / the event-timed batches). Keys `xtier_<victim
//! tier>_under_gpu_{lat,bw}_ratio` from h2d with B = A. Where no GPU can be used the
//! column is a `skipped` entry with the reason (no GPU on the PCI bus, the CUDA driver's
//! error).

use crate::chase::{Chain, ChainLayout, ChaseOrder};
use crate::kernels::{self, IsaSet};
use crate::loaded::Mix;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Planned, Report, Setup, Subject,
};
use bench_core::memory::{OnMemory, Region, TargetSpec};
use bench_core::plan::Cost;
use bench_core::sizing::DramSizing;
use bench_core::topology::Topology;
use bench_core::units::{format_size, MIB};

mod gpu;
mod measure;
mod memory;
mod record;
pub mod split;

pub use gpu::Dma;
pub use split::{gpu_key_victims, key, key_pairs, ratio, tier, Figure, Split, Tier};

/// Name of the benchmark.
pub const NAME: &str = "mem.interference";
/// Why `cxlchar all` leaves it out.
pub const NEEDS: &str = "needs two memory targets or a GPU";
/// Least bytes of a thread's stream slice.
const MIN_SLICE_BYTES: usize = 4 * MIB;

/// What the run found of GPUs: how many NVIDIA GPUs the PCI bus shows, or why it could
/// not be read.
pub type Gpus = Result<usize, String>;

/// Victim and aggressors on every ordered pair of the run's targets.
#[derive(Debug, Clone)]
pub struct InterferenceBench {
    /// The targets, in run order (victims and aggressors alike).
    pub targets: Vec<TargetSpec>,
    /// The aggressors' traffic mixes.
    pub mixes: Vec<Mix>,
    /// The GPUs the PCI bus showed when planned.
    pub gpus: Gpus,
    /// The GPU as aggressor: found, planned for another machine, or why not.
    pub dma: Dma,
}

/// Where one target's region holds what: the chase's span first, then each victim CPU's
/// slice, then each aggressor CPU's.
#[derive(Debug, Clone)]
struct Layout {
    touched: usize,
    sizing: DramSizing,
    span: usize,
    victim_each: usize,
    aggressor_each: usize,
    /// Bytes of the aggressor part: the aggressor CPUs' slices, grown to whole copies of
    /// the GPU where it is an aggressor (the span its copies walk through).
    aggressor_part: usize,
    len: usize,
}

/// Each thread's slice for `cpus` on `target`: their streaming DRAM footprint shared out,
/// at least [`MIN_SLICE_BYTES`], whole pages.
fn slice_bytes(ctx: &Context, target: &impl OnMemory, cpus: &[usize]) -> usize {
    let (total, _) = ctx.dram_stream_bytes(target, cpus);
    total
        .div_ceil(cpus.len().max(1))
        .max(MIN_SLICE_BYTES)
        .div_ceil(4096)
        * 4096
}

impl InterferenceBench {
    /// The device-like subject's name: the targets joined with `+`.
    fn label(&self) -> String {
        let v: Vec<String> = self.targets.iter().map(|t| t.to_string()).collect();
        v.join("+")
    }

    fn layout(&self, ctx: &Context, target: &TargetSpec, split: &Split) -> Layout {
        let l = ChainLayout::DEFAULT;
        let (t, sizing) = ctx.dram_touched(target, &ctx.cpus, l.span_per_touched());
        let touched = l.round_touched(t);
        let span = l.span_bytes(touched).div_ceil(4096) * 4096;
        let victim_each = slice_bytes(ctx, target, &split.victim);
        let aggressor_each = slice_bytes(ctx, target, &split.aggressor);
        let slices = split.aggressor.len() * aggressor_each;
        let aggressor_part = match self.dma.copy_bytes(ctx.effort) {
            Some(copy) => slices.max(copy).div_ceil(copy) * copy,
            None => slices,
        };
        let len = span + split.victim.len() * victim_each + aggressor_part;
        Layout {
            touched,
            sizing,
            span,
            victim_each,
            aggressor_each,
            aggressor_part,
            len,
        }
    }

    /// The points and their seconds (none without two cores).
    fn plan_cost(&self, ctx: &Context) -> Cost {
        let mut c = Cost::new();
        let Ok(split) = split::split(&ctx.topology, &ctx.cpus) else {
            return c;
        };
        let e = &ctx.plan.expect;
        let (n, m) = (self.targets.len(), self.mixes.len());
        let layouts: Vec<Layout> = self
            .targets
            .iter()
            .map(|t| self.layout(ctx, t, &split))
            .collect();
        c.add(
            "regions of every target",
            1,
            e.populate_s(layouts.iter().map(|l| l.len).sum()),
        );
        for l in &layouts {
            let chain = crate::latency::chase_point_s(ctx, l.touched, std::time::Duration::ZERO);
            c.add("chase chain", 1, chain);
        }
        let run = ctx.effort.mem.loaded_point.as_secs_f64();
        let lat = |threads| e.spinning_section_s(threads, run);
        // Each stream warms for a millisecond of its traffic, not a pass over its slice
        // (the slices were touched when the regions were placed): the warm-up's floor.
        let crew = |cpus: &[usize]| {
            e.crew_point_s(
                &ctx.topology,
                cpus,
                0,
                &ctx.effort.mem.interference_crew,
                false,
            )
        };
        let both: Vec<usize> = [split.victim.clone(), split.aggressor.clone()].concat();
        c.add("victim latency alone", n, lat(1));
        c.add("victim bandwidth alone", n, crew(&split.victim));
        c.add("aggressor bandwidth alone", n * m, crew(&split.aggressor));
        let pairs = n * n * m;
        c.add(
            "victim latency beside the aggressors",
            pairs,
            lat(1 + split.aggressor.len()),
        );
        c.add("victim and aggressors streaming", pairs, crew(&both));
        if self.dma.copy_bytes(ctx.effort).is_some() {
            let part: usize = layouts.iter().map(|l| l.aggressor_part).sum();
            c.add("GPU registrations of every target", 1, e.populate_s(part));
            let dirs = bench_core::dma::DmaDir::ALL.len();
            c.add("GPU copies alone", n * dirs, run);
            let cells = n * n * dirs;
            c.add("victim latency beside the GPU's copies", cells, lat(2));
            c.add(
                "victim bandwidth beside the GPU's copies",
                cells,
                crew(&split.victim),
            );
        }
        c
    }
}

impl Benchmark for InterferenceBench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn subject(&self) -> Subject {
        Subject::Device {
            target: self.label(),
        }
    }

    fn memory(&self, ctx: &Context, _target: &TargetSpec) -> bench_core::memory::budget::Need {
        self.memory_need(ctx)
    }

    fn cost(&self, ctx: &Context, _target: Option<&TargetSpec>) -> Cost {
        self.plan_cost(ctx)
    }

    fn run(&self, ctx: &Context, _input: Input<'_>) -> Result<Report, NotRun> {
        let split = split::split(&ctx.topology, &ctx.cpus).map_err(NotRun::skip)?;
        let isa = IsaSet::detect()
            .choose(None)
            .map_err(|e| e.to_string())
            .and_then(kernels::with_nt_store)
            .map_err(NotRun::skip)?;
        let layouts: Vec<Layout> = self
            .targets
            .iter()
            .map(|t| self.layout(ctx, t, &split))
            .collect();
        let mut regions = Vec::new();
        for (t, l) in self.targets.iter().zip(&layouts) {
            ctx.progress(&format!("{NAME}: placing {} on {t}...", format_size(l.len)));
            let r = Region::allocate(t, l.len, &ctx.topology)
                .map_err(|e| NotRun::skip(format!("{t}: {e}")))?;
            if !r.is_writable() {
                return Err(NotRun::skip(format!("{t} is mapped read-only")));
            }
            regions.push(r);
        }
        ctx.point_done();
        let placements: Vec<_> = regions.iter().map(|r| r.placement().clone()).collect();
        let mut chains = Vec::new();
        let mut bases = Vec::new();
        for (r, l) in regions.iter_mut().zip(&layouts) {
            let (chase, rest) = r.as_mut_slice().split_at_mut(l.span);
            bases.push(rest.as_mut_ptr() as usize);
            let chain = Chain::build(
                chase,
                ChainLayout::DEFAULT,
                ChaseOrder::DEFAULT,
                l.touched,
                ctx.seed,
            )
            .map_err(|e| NotRun::skip(e.to_string()))?;
            chains.push(chain);
            ctx.point_done();
        }
        let run = record::Run {
            bench: self,
            ctx,
            split: &split,
            isa,
            layouts: &layouts,
            bases: &bases,
            placements: &placements,
            tiers: self
                .targets
                .iter()
                .map(|t| tier(t, &ctx.topology))
                .collect(),
        };
        let rep = run.measure(&chains)?;
        drop(chains);
        drop(regions);
        Ok(rep)
    }
}

/// Victim and aggressors on every ordered pair of the run's targets, A = B included (the
/// baseline): the victim (one CPU chasing A for latency, the victim's CPUs reading A for
/// bandwidth) alone and while aggressor CPUs on other cores stream B at full rate, and
/// the aggressors alone and beside the victim. Keys
/// xtier_VICTIM_under_AGGRESSOR_{lat,bw}_ratio (together / alone, each side named by
/// its tier: dram or far), the whole matrix in params.json's `interference`. Needs CPUs
/// on two cores. Default targets: anon and every far-memory node.
#[derive(Debug, Clone, clap::Args)]
pub struct InterferenceArgs {
    /// The aggressors' traffic mixes, comma-separated (default read,1r1w): read (all
    /// loads), 3r1w, 2r1w, 1r1w (loads : temporal stores), nt-write (all non-temporal
    /// stores), as `mem loaded --mix`; the keys come from read.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "MIX,..")]
    pub mix: Vec<Mix>,
}

/// The run's targets as this family takes them: those named, else `anon` and every
/// far-memory node of `topo` (as `cxlchar all`).
pub fn targets_of(opts: &Options, topo: &Topology) -> Vec<TargetSpec> {
    if !opts.targets.is_empty() {
        return opts.targets.clone();
    }
    let mut t = vec![TargetSpec::Anon];
    t.extend(
        topo.nodes
            .iter()
            .filter(|n| n.likely_far_memory)
            .map(|n| TargetSpec::Node(n.id)),
    );
    t
}

impl InterferenceArgs {
    fn bench(&self, opts: &Options) -> InterferenceBench {
        let root = opts.sysfs.clone().unwrap_or_else(|| "/".into());
        let topo = match &opts.sysfs {
            Some(r) => Topology::read(r),
            None => Topology::system(),
        };
        let mut mixes: Vec<Mix> = Vec::new();
        for m in if self.mix.is_empty() {
            vec![Mix::Read, Mix::R1W1]
        } else {
            self.mix.clone()
        } {
            if !mixes.contains(&m) {
                mixes.push(m);
            }
        }
        let gpus = bench_core::pci::nvidia_gpus(&root).map_err(|e| e.to_string());
        InterferenceBench {
            targets: targets_of(opts, &topo),
            mixes,
            dma: Dma::of(opts, &gpus),
            gpus,
        }
    }
}

impl Setup for InterferenceArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(self.bench(opts)))
    }

    /// Part of `cxlchar all` when the run has two targets or more, or a GPU.
    fn plan_all(&self, opts: &Options) -> Result<Planned, BoxError> {
        let b = self.bench(opts);
        let gpu = matches!(b.gpus, Ok(n) if n > 0) || matches!(b.dma, Dma::Found(_));
        if b.targets.len() < 2 && !gpu {
            return Ok(Planned::default());
        }
        Ok(Planned::one(b))
    }
}

#[cfg(test)]
mod tests;
