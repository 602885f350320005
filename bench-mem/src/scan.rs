//! `mem.scan`: bandwidth by address range. The CPUs of the target's node (or the given
//! `--cpu`) read one range at a time of a large region of the target, each range measured
//! with the crew's windows ([`bench_core::crew`]: every thread its own slice, the
//! aggregate of the common window, disturbed windows left out), then the same with
//! non-temporal writes. Each range is named by what backs it ([`backing`]): its physical
//! addresses, memory blocks and NUMA nodes, the CXL region with its memory devices, their
//! interleave positions and links where the decoders say, the DIMMs where SMBIOS says.
//! Ranges slower than the median by more than the run's own noise are listed with what
//! backs them ([`outliers`]: the rule), and counted (`scan_slow_ranges`).
//!
//! The region and its ranges are the same with and without `--quick` ([`plan`]: a whole
//! number of ranges within half the memory the target offers and a time bound the plan
//! prices); `--quick` takes fewer windows per range. Part of `cxlchar all` on far-memory
//! targets (memory-only nodes, dax devices, `cxl:` names); on other targets only when
//! `cxlchar mem scan` is asked.

pub mod backing;
pub mod measure;
pub mod outliers;
pub mod plan;
mod record;
pub mod smbios;

use crate::kernels::{self, IsaSet, Kernel};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Planned, Report, Requirements, Setup,
    Skip,
};
use bench_core::crew::Stream;
use bench_core::memory::budget::Need;
use bench_core::memory::{Region, TargetSpec};
use bench_core::params::Skipped;
use bench_core::plan::{Cost, Expect};
use bench_core::units::{format_size, human_bytes, parse_positive_size};
use plan::{Asked, Facts, Layout, Pricing};
use std::path::Path;

/// The benchmark's name.
pub const NAME: &str = "mem.scan";

/// The kernels of a scan, in order: loads, then non-temporal stores.
pub const KERNELS: [Kernel; 2] = [Kernel::Read, Kernel::NtWrite];

/// Parameters of the scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanBench {
    /// `--range`, `--size` (`None`: the defaults, [`plan`]).
    pub asked: Asked,
    /// Part of `cxlchar all`: far-memory targets only.
    pub far_only: bool,
}

impl ScanBench {
    /// The CPUs that scan `target`: those of the run's CPUs on the target's node (for a
    /// memory-only node or a dax device, the node with CPUs nearest it by SLIT distance;
    /// for `anon`, the first CPU's node), or every CPU of the run where none is there
    /// (`--cpu` named others).
    pub fn cpus(ctx: &Context, target: &TargetSpec) -> Vec<usize> {
        let topo = &ctx.topology;
        let first = ctx.cpus.first().copied().unwrap_or(0);
        let node_of_cpu = topo
            .nodes
            .iter()
            .find(|n| n.cpus.contains(&first))
            .map(|n| n.id);
        let memory_node = match target {
            TargetSpec::Node(n) => Some(*n),
            TargetSpec::Interleave(il) => il.nodes().first().copied(),
            TargetSpec::Dax(p) => topo
                .dax_device(p)
                .and_then(|d| d.target_node)
                .and_then(|n| usize::try_from(n).ok()),
            _ => None,
        };
        let home = memory_node
            .and_then(|n| nearest_cpu_node(topo, n))
            .or(node_of_cpu);
        let on_home: Vec<usize> = match home.and_then(|h| topo.node(h)) {
            Some(n) => ctx
                .cpus
                .iter()
                .copied()
                .filter(|c| n.cpus.contains(c))
                .collect(),
            None => vec![],
        };
        match on_home.is_empty() {
            true => ctx.cpus.clone(),
            false => on_home,
        }
    }

    /// The kernels this CPU runs (a non-temporal store may be missing).
    fn runnable() -> Vec<Kernel> {
        let Ok(isa) = IsaSet::detect().choose(None) else {
            return vec![];
        };
        KERNELS
            .into_iter()
            .filter(|&k| kernels::supported(k, isa).is_ok())
            .collect()
    }

    /// What the layout on `target` scanned by `cpus` is computed from.
    fn facts(ctx: &Context, target: &TargetSpec, cpus: &[usize]) -> Facts {
        let far = target.is_far_memory(&ctx.topology);
        let offers = ctx.check_span_limit(target);
        Facts {
            far,
            page_bytes: target.mapped_bytes(1, &ctx.topology),
            offers_bytes: (offers != usize::MAX).then_some(offers),
            working_set_bytes: ctx.dram_stream_bytes(target, cpus).0,
        }
    }

    /// The price of a range scanned by `cpus`: the model's quiet expectations (the
    /// layout must not depend on the load now), with this run's placement threads.
    fn pricing<'a>(ctx: &'a Context, cpus: &'a [usize]) -> Pricing<'a> {
        Pricing {
            expect: Expect {
                populate_threads: ctx.plan.expect.populate_threads,
                ..Expect::default()
            },
            topo: &ctx.topology,
            cpus,
            kernels: Self::runnable().len().max(1),
        }
    }

    /// The ranges on `target` (see [`plan`]).
    pub fn layout(&self, ctx: &Context, target: &TargetSpec) -> Layout {
        let cpus = Self::cpus(ctx, target);
        let facts = Self::facts(ctx, target, &cpus);
        plan::layout(self.asked, &facts, &Self::pricing(ctx, &cpus))
    }
}

/// The node with CPUs nearest node `n` (itself when it has CPUs), by SLIT distance; the
/// lowest-numbered of equals.
fn nearest_cpu_node(topo: &bench_core::topology::Topology, n: usize) -> Option<usize> {
    if topo.node(n).is_some_and(|x| !x.cpus.is_empty()) {
        return Some(n);
    }
    topo.nodes
        .iter()
        .filter(|c| !c.cpus.is_empty())
        .min_by_key(|c| {
            (
                crate::matrix::distance(topo, n, c.id).unwrap_or(u32::MAX),
                c.id,
            )
        })
        .map(|c| c.id)
}

impl Benchmark for ScanBench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    /// In `all`, far-memory targets only.
    fn check(&self, ctx: &Context, target: &TargetSpec) -> Result<(), Skip> {
        if self.far_only && !target.is_far_memory(&ctx.topology) {
            return Err(Skip::new(format!(
                "in `all`, mem scan runs on far-memory targets only (memory-only nodes, dax devices); scan {target} with `cxlchar mem scan --target {target}`"
            )));
        }
        if Self::runnable().is_empty() {
            return Err(Skip::new("no kernel of the scan runs on this CPU"));
        }
        Ok(())
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        self.layout(ctx, target).region_bytes()
    }

    /// The region (the ranges end to end), mapped once; the ranges are its parts.
    fn memory(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let l = self.layout(ctx, target);
        let bytes = target.mapped_bytes(l.region_bytes(), &ctx.topology);
        let need = Need::on_target(
            bytes,
            format!(
                "a {} region: {} ranges of {} ({})",
                human_bytes(bytes as u64),
                l.ranges,
                format_size(l.range_bytes),
                l.why
            ),
        );
        match self.asked.size {
            Some(_) => need.with_fit("--size", 1, 0),
            None => need,
        }
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let l = self.layout(ctx, target);
        let cpus = Self::cpus(ctx, target);
        let threads = cpus.len().max(1);
        let slice = Stream::slice_of(l.range_bytes, threads, 0).1;
        let mut cost = Cost::new();
        // pagemap (8 bytes a page, read in chunks) and the sampled nodes.
        let pages = (l.region_bytes() / 4096) as f64;
        cost.add(
            "naming the ranges",
            1,
            pages * 2e-8 + l.ranges as f64 * 1e-3,
        );
        for k in Self::runnable() {
            let each =
                ctx.plan
                    .expect
                    .crew_point_s(&ctx.topology, &cpus, slice, &ctx.effort.crew, false);
            cost.add(
                format!(
                    "{} {}t, {} ranges of {}",
                    k.name(),
                    threads,
                    l.ranges,
                    format_size(l.range_bytes)
                ),
                l.ranges,
                each,
            );
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let Some(target) = region.target().cloned() else {
            return Err(NotRun::skip("mem scan runs on memory targets"));
        };
        let isa = IsaSet::detect()
            .choose(None)
            .map_err(|e| Skip::new(e.to_string()))?;
        let mut layout = self.layout(ctx, &target);
        layout.ranges = layout.ranges.min(region.len() / layout.range_bytes.max(1));
        if layout.ranges == 0 {
            return Err(NotRun::skip(format!(
                "the region ({}) holds no range of {}",
                human_bytes(region.len() as u64),
                format_size(layout.range_bytes)
            )));
        }
        let cpus = Self::cpus(ctx, &target);
        let mut rep = Report::default();
        for k in KERNELS {
            if let Err(reason) = kernels::supported(k, isa) {
                rep.skipped.push(Skipped {
                    benchmark: format!("{NAME}/{}", k.name()),
                    target: target.to_string(),
                    reason,
                });
            }
        }
        let names = name_ranges(ctx, region, &target, &layout);
        ctx.point_done();
        let base = region.as_mut_ptr() as usize;
        let mut runs = Vec::new();
        for k in Self::runnable() {
            let mut v = Vec::with_capacity(layout.ranges);
            for i in 0..layout.ranges {
                let off = i * layout.range_bytes;
                let r = measure::range(ctx, &cpus, (k, isa), base + off, layout.range_bytes)?;
                ctx.progress(&format!(
                    "{NAME}/{target}/{}: range {}/{}: {:.2} GB/s",
                    k.name(),
                    i + 1,
                    layout.ranges,
                    r.gbs
                ));
                ctx.point_done();
                v.push(r);
            }
            runs.push((k, v));
        }
        let scanned = record::Scanned {
            target: target.to_string(),
            layout: &layout,
            working_set_bytes: ScanBench::facts(ctx, &target, &cpus).working_set_bytes,
            cpus: &cpus,
            isa,
            window: ctx.effort.crew,
            names: &names,
            placement: region.placement().clone(),
        };
        scanned.report(&runs, &mut rep);
        Ok(rep)
    }
}

/// Names every range of `region` (see [`backing`]).
fn name_ranges(
    ctx: &Context,
    region: &Region,
    target: &TargetSpec,
    layout: &Layout,
) -> Vec<backing::Named> {
    let root = Path::new("/");
    let namer = backing::Namer::read(root, &ctx.topology);
    let dax = match target {
        TargetSpec::Dax(p) => ctx.topology.dax_device(p).map(|d| {
            let dir = root.join("sys/bus/dax/devices").join(&d.name);
            (d.name.clone(), bench_core::cxl::dax_ranges(&dir))
        }),
        _ => None,
    };
    let page = target.mapped_bytes(1, &ctx.topology).max(4096);
    (0..layout.ranges)
        .map(|i| {
            let off = i * layout.range_bytes;
            // SAFETY: off + range_bytes <= the region's length (ranges are its parts).
            let ptr = unsafe { region.as_ptr().add(off) };
            let physical = match &dax {
                Some((name, mapping)) => {
                    backing::dax_runs(mapping, name, off as u64, layout.range_bytes as u64)
                }
                None => backing::pagemap_runs(ptr, layout.range_bytes),
            };
            let mut n = namer.name(physical);
            if n.nodes.is_empty() {
                n.nodes = sampled_nodes(ptr, layout.range_bytes, page);
                n.nodes_from = format!(
                    "move_pages(2) of {} page(s) spread over the range",
                    n.nodes.values().sum::<u64>()
                );
            }
            n
        })
        .collect()
}

/// Pages per node of at most 256 pages of `page` bytes spread evenly over `len` bytes at
/// `ptr` (move_pages(2), one page at a time).
fn sampled_nodes(ptr: *const u8, len: usize, page: usize) -> std::collections::BTreeMap<i64, u64> {
    let pages = (len / page).max(1);
    let step = pages.div_ceil(256).max(1);
    let mut out = std::collections::BTreeMap::new();
    for p in (0..pages).step_by(step) {
        // SAFETY: page p lies inside the range (p < len / page), which the caller owns.
        let at = unsafe { ptr.add(p * page) };
        for (node, n) in bench_core::memory::pages_per_node(at, page, page) {
            *out.entry(node).or_insert(0) += n;
        }
    }
    out
}

/// Bandwidth by address range: the CPUs of the target's node (or --cpu) read one range at
/// a time of a large region of the target, then write it with non-temporal stores; each
/// range is named by what backs it (physical addresses, memory blocks, node, the CXL
/// region, memory devices and interleave positions, DIMMs where SMBIOS says), and ranges
/// slower than the median by more than the run's own noise are listed (GB = 10^9 B/s).
/// Without --target: anon and every memory-only node; in `all`: far memory only.
#[derive(Debug, Clone, clap::Args)]
pub struct ScanArgs {
    /// Bytes of each range (default: 1G on far memory, 256M elsewhere, at least the DRAM
    /// working set of the CPUs; whole 2 MiB), the same with --quick.
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub range: Option<usize>,
    /// Bytes of the region scanned, in whole ranges (default: as many ranges as fit in
    /// half the memory the target offers and a time bound of 60 s (15 s with --quick's
    /// windows) on far memory, 6 s (2 s) elsewhere), the same with --quick.
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub size: Option<usize>,
}

impl ScanArgs {
    /// The benchmark, validated against the targets named (their pages).
    pub fn bench(&self, targets: &[TargetSpec], far_only: bool) -> Result<ScanBench, BoxError> {
        let asked = Asked {
            range: self.range,
            size: self.size,
        };
        if let Some(r) = asked.range {
            if !r.is_multiple_of(plan::GRANULE_BYTES) {
                return Err(
                    format!("--range {} is not a whole number of 2 MiB", format_size(r)).into(),
                );
            }
            let topo = bench_core::topology::Topology::system();
            for t in targets {
                let page = t.mapped_bytes(1, &topo);
                if !r.is_multiple_of(page) {
                    return Err(format!(
                        "--range {} is not a whole number of {t}'s {} pages",
                        format_size(r),
                        format_size(page)
                    )
                    .into());
                }
            }
        }
        if let Some(s) = asked.size {
            let topo = bench_core::topology::Topology::system();
            let page = targets
                .iter()
                .map(|t| t.mapped_bytes(1, &topo))
                .fold(plan::GRANULE_BYTES, usize::max);
            if s < page {
                return Err(format!(
                    "--size {} is less than one range of {} (whole 2 MiB and pages of the target)",
                    format_size(s),
                    format_size(page)
                )
                .into());
            }
        }
        if let (Some(r), Some(s)) = (asked.range, asked.size) {
            if s < r {
                return Err(format!(
                    "--size {} is smaller than one --range {}",
                    format_size(s),
                    format_size(r)
                )
                .into());
            }
        }
        if let Some(s) = asked.size {
            let r = asked.range.unwrap_or(plan::NEAR_RANGE_BYTES);
            if s / r > plan::MAX_RANGES {
                return Err(format!(
                    "--size {} holds {} ranges of {}: at most {} (give a larger --range)",
                    format_size(s),
                    s / r,
                    format_size(r),
                    plan::MAX_RANGES
                )
                .into());
            }
        }
        Ok(ScanBench { asked, far_only })
    }
}

impl Setup for ScanArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(self.bench(&opts.targets, false)?))
    }

    /// Far-memory targets only.
    fn plan_all(&self, opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(self.bench(&opts.targets, true)?))
    }

    /// A scan is of far memory first: without --target, `anon` and every memory-only
    /// node.
    fn far_nodes_by_default(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
