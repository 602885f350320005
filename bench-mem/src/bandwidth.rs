//! `mem.bandwidth`: read, write, non-temporal write, copy, non-temporal copy and memset
//! bandwidth over a size sweep, one thread and all threads.
//!
//! Conventions (as STREAM and likwid-bench): GB = 10^9 bytes; a copy's bytes are the bytes
//! read plus the bytes written (its footprint). Every point is measured by the crew
//! ([`bench_core::crew`]): its threads, pinned, stream their slices in windows of 30 ms,
//! released and stopped together, and a figure is the bytes all threads moved in the part
//! of a window in which all of them ran, over that part (as MLC and likwid-bench report
//! peak bandwidth); the bulk-synchronous figure (threads x the slowest thread's rate) is
//! recorded beside it (`/bulk-sync`). Points: one per cache level (L1/2, L2/2, a size
//! inside L3) and DRAM with one thread, plus DRAM with every `--cpu`; in a full run also a
//! sweep of powers of eight from 16 KiB to DRAM.
//!
//! **DRAM points.** Each thread count streams over 4 x the caches its CPUs can fill
//! ([`bench_core::sizing`]: every distinct LLC and L2 instance, rounded up to a power of
//! two), the same with and without `--quick`. Before the DRAM keys are measured, the
//! DRAM check ([`bench_core::dram_check`]) runs the read kernel at that footprint and at
//! twice it on the same threads; if the smaller is faster, it is in a cache and the
//! footprint grows. Each thread streams its slice in calls of about 0.1 ms, the parts of
//! the slice in turn (after a full pass to warm it), so the footprint stays what it is
//! and a window need not be a pass over gigabytes.

use crate::kernels::{self, Isa, IsaSet, Kernel};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::crew::{Crew, Stream, WindowPlan, Windows};
use bench_core::dram_check::{self, Pattern};
use bench_core::effort::Effort;
use bench_core::memory::budget::Need;
use bench_core::memory::{OnMemory, Region, TargetSpec};
use bench_core::params::{Measurement, Warning};
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use bench_core::units::parse_positive_size;
use bench_core::units::{format_size, human_bytes, KIB, MIB};
use serde_json::json;
use std::collections::BTreeMap;

/// Parameters of the bandwidth benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthBench {
    /// Kernels to run (default: all).
    pub kernels: Vec<Kernel>,
    /// Forced ISA (`None`: the widest the CPU has).
    pub isa: Option<Isa>,
    /// Threads of the multi-thread DRAM point (`None`: one per `--cpu`).
    pub threads: Option<usize>,
    /// Explicit footprints (bytes), replacing the default points.
    pub sizes: Option<Vec<usize>>,
}

impl Default for BandwidthBench {
    fn default() -> Self {
        BandwidthBench {
            kernels: Kernel::defaults(),
            isa: None,
            threads: None,
            sizes: None,
        }
    }
}

/// A bad bandwidth parameter (an error, not a skip).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BandwidthParamError {
    /// The forced ISA is not supported.
    #[error(transparent)]
    Isa(#[from] kernels::IsaError),
    /// A thread count the run's CPUs cannot give (none, or more than the CPUs).
    #[error(transparent)]
    Threads(#[from] bench_core::topology::ladder::CountError),
    /// No kernel asked for can run here (a non-temporal kernel on an ISA without a
    /// non-temporal store, `zva-write` where `dc zva` is not allowed).
    #[error("{kernel} cannot run here: {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Kernel {
        kernel: &'static str,
        reason: String,
    },
    /// A size below one vector.
    #[error("size {size} is below one {isa} vector ({width} bytes) per thread")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Size {
        /// The size given (all threads together), in bytes.
        size: usize,
        isa: Isa,
        /// Its vector width in bytes.
        width: usize,
    },
}

/// One point of the plan: kernel, footprint, threads, and the keys it yields (two when
/// the all-threads point is the single-thread point: one CPU).
#[derive(Debug, Clone, PartialEq)]
struct Point {
    kernel: Kernel,
    size: usize,
    threads: usize,
    keys: Vec<String>,
    /// A DRAM point (its keys stand on the DRAM check of its thread count).
    dram: bool,
}

fn dram_key(k: Kernel) -> &'static str {
    match k {
        Kernel::Read => "mem_bw",
        Kernel::Write => "mem_write_bw",
        Kernel::NtWrite => "nt_write_bw",
        Kernel::Copy => "copy_bw",
        Kernel::NtCopy => "nt_copy_bw",
        Kernel::Memset => "memset_bw",
        Kernel::ZvaWrite => "zva_write_bw",
    }
}

impl BandwidthBench {
    /// Checks the parameters against the CPU and the allowed CPUs.
    pub fn validate(&self, isas: IsaSet, cpus: usize) -> Result<Isa, BandwidthParamError> {
        let isa = isas.choose(self.isa)?;
        if let Some(Err(reason)) = self
            .kernels
            .iter()
            .map(|&k| kernels::supported(k, isa))
            .reduce(|a, b| a.or(b))
        {
            return Err(BandwidthParamError::Kernel {
                kernel: self.kernels[0].name(),
                reason,
            });
        }
        let t = self.threads.unwrap_or(cpus);
        bench_core::topology::ladder::check_count("--threads", "thread", t, cpus)?;
        for &s in self.sizes.iter().flatten() {
            if s / t < isa.width_bytes() * 2 {
                return Err(BandwidthParamError::Size {
                    size: s,
                    isa,
                    width: isa.width_bytes(),
                });
            }
        }
        Ok(isa)
    }

    /// The DRAM footprint of each thread count measured (one thread, and every thread
    /// of the all-threads points): 4 x the caches of its CPUs, streamed
    /// ([`Context::dram_stream_bytes`]).
    fn dram_defaults(&self, ctx: &Context, target: &impl OnMemory) -> BTreeMap<usize, usize> {
        let threads = self.threads.unwrap_or(ctx.cpus.len()).max(1);
        [1, threads]
            .into_iter()
            .map(|t| (t, ctx.dram_stream_bytes(target, &ctx.cpus_for(t)).0))
            .collect()
    }

    fn plan(&self, ctx: &Context, target: &TargetSpec) -> Vec<Point> {
        self.plan_at(ctx, &self.dram_defaults(ctx, target))
    }

    /// The kernels asked for that this CPU can run with the chosen ISA (the others are
    /// skipped with the reason: [`kernels::supported`]).
    fn runnable(&self) -> Vec<Kernel> {
        let Ok(isa) = IsaSet::detect().choose(self.isa) else {
            return vec![];
        };
        let ok = |k: &&Kernel| kernels::supported(**k, isa).is_ok();
        self.kernels.iter().filter(ok).copied().collect()
    }

    /// The plan with DRAM footprints `dram` (by thread count).
    fn plan_at(&self, ctx: &Context, dram_of: &BTreeMap<usize, usize>) -> Vec<Point> {
        let threads = self.threads.unwrap_or(ctx.cpus.len()).max(1);
        let kernels = self.runnable();
        let mut v = Vec::new();
        if let Some(sizes) = &self.sizes {
            for &k in &kernels {
                for &s in sizes {
                    v.push(Point {
                        kernel: k,
                        size: s,
                        threads: 1,
                        keys: vec![],
                        dram: false,
                    });
                    if threads > 1 {
                        v.push(Point {
                            kernel: k,
                            size: s,
                            threads,
                            keys: vec![],
                            dram: false,
                        });
                    }
                }
            }
            return v;
        }
        let t = &ctx.topology;
        let l1 = t.cache_bytes(1).unwrap_or(32 * KIB);
        let l2 = t.cache_bytes(2).unwrap_or(512 * KIB);
        let l3 = t.cache_bytes(3);
        let dram = dram_of.get(&1).copied().unwrap_or(64 * MIB);
        let dram_all = dram_of.get(&threads).copied().unwrap_or(dram);
        if self.kernels.contains(&Kernel::Read) {
            v.push(Point {
                kernel: Kernel::Read,
                size: l1 / 2,
                threads: 1,
                keys: vec!["l1_bw_gbs".into()],
                dram: false,
            });
            v.push(Point {
                kernel: Kernel::Read,
                size: l2 / 2,
                threads: 1,
                keys: vec!["l2_bw_gbs".into()],
                dram: false,
            });
            if let Some(l3) = l3 {
                let s = (2 * l2).min(l3 / 2).max(l2);
                v.push(Point {
                    kernel: Kernel::Read,
                    size: s,
                    threads: 1,
                    keys: vec!["l3_bw_gbs".into()],
                    dram: false,
                });
            }
        }
        if ctx.effort.mem.bandwidth_size_sweep {
            let mut s = 16 * KIB;
            while s < dram {
                for &k in &kernels {
                    if !v
                        .iter()
                        .any(|p| p.kernel == k && p.size == s && p.threads == 1)
                    {
                        v.push(Point {
                            kernel: k,
                            size: s,
                            threads: 1,
                            keys: vec![],
                            dram: false,
                        });
                    }
                }
                s *= 8;
            }
        }
        for &k in &kernels {
            let one = format!("{}_1t_gbs", dram_key(k));
            let all = format!("{}_gbs", dram_key(k));
            if threads > 1 {
                v.push(Point {
                    kernel: k,
                    size: dram,
                    threads: 1,
                    keys: vec![one],
                    dram: true,
                });
                v.push(Point {
                    kernel: k,
                    size: dram_all,
                    threads,
                    keys: vec![all],
                    dram: true,
                });
            } else {
                // One CPU: measured once, both keys (the run warns about it).
                v.push(Point {
                    kernel: k,
                    size: dram,
                    threads: 1,
                    keys: vec![one, all],
                    dram: true,
                });
            }
        }
        v
    }

    /// Measures one point: the crew's windows of `p.threads` threads, each streaming its
    /// own slice of the footprint ([`Stream`]).
    fn measure(
        &self,
        ctx: &Context,
        region: &mut Region,
        isa: Isa,
        p: &Point,
        plan: WindowPlan,
    ) -> Result<Windows, Skip> {
        let base = region.as_mut_ptr() as usize;
        let (size, threads, kernel) = (p.size.min(region.len()), p.threads, p.kernel);
        Crew::of(ctx, threads)
            .windows(plan, &|t| {
                let (off, len) = Stream::slice_of(size, threads, t);
                // SAFETY: thread t owns its slice [off, off + len) of the region (slices
                // are disjoint and inside `size` <= the region's length), which outlives
                // the crew.
                Ok(unsafe { Stream::new(kernel, isa, (base + off) as *mut u8, len) })
            })
            .map_err(|e| Skip::new(e.reason()))
    }

    /// The planned seconds of point `p` with `plan`'s windows: each thread warms up over
    /// its slice, then the windows ([`bench_core::plan::Expect::crew_point_s`]), in the
    /// caches where the footprint fits in those its CPUs fill, else at DRAM bandwidth.
    fn point_s(ctx: &Context, p: &Point, plan: &WindowPlan) -> f64 {
        let threads = p.threads.max(1);
        let cpus = ctx.cpus_for(threads);
        let slice = Stream::slice_of(p.size, threads, 0).1;
        let in_cache = ctx
            .cache_reach(&cpus)
            .is_some_and(|r| p.size <= r.total_bytes);
        ctx.plan
            .expect
            .crew_point_s(&ctx.topology, &cpus, slice, plan, in_cache)
    }

    /// The kernel the DRAM check runs: read (a cache speeds it most), else the first asked
    /// that can run.
    fn check_kernel(&self) -> Kernel {
        if self.kernels.contains(&Kernel::Read) {
            Kernel::Read
        } else {
            self.runnable().first().copied().unwrap_or(Kernel::Read)
        }
    }

    /// The DRAM check of `threads` threads at `start` (their footprint): the check
    /// kernel at it and at a larger one on the same threads; the region grows for the
    /// larger. Each figure is recorded as a measurement of its size (the one at the size
    /// that stands is then that kernel's DRAM point).
    #[allow(clippy::too_many_arguments)]
    fn dram_check(
        &self,
        ctx: &Context,
        region: &mut Region,
        rep: &mut Report,
        isa: Isa,
        threads: usize,
        start: usize,
        sizing: &bench_core::sizing::DramSizing,
    ) -> Result<dram_check::DramCheck, Skip> {
        let target = region.origin().to_string();
        let kernel = self.check_kernel();
        let plan = stream_check_plan(ctx, region.origin(), start);
        let outcome = dram_check::run(plan, |bytes, pass| {
            region.grow(bytes, &ctx.topology).map_err(Skip::new)?;
            let p = Point {
                kernel,
                size: bytes,
                threads,
                keys: vec![],
                dram: true,
            };
            let id = format!(
                "{}{}",
                point_id(&target, &p),
                bench_core::dram_check::pass_suffix(pass)
            );
            let (m, _) = self.record(
                ctx,
                region,
                rep,
                &p,
                id.clone(),
                (isa, check_plan(ctx.effort)),
            )?;
            Ok::<_, Skip>((m, Some(id)))
        })?;
        Ok(outcome.into_check(
            &plan,
            dram_check::CheckInfo {
                target,
                benchmark: self.name().into(),
                pattern: Pattern::Stream,
                kernel: format!("{} ({isa})", kernel.name()),
                cpus: ctx.cpus_for(threads),
                unit: "GB/s".into(),
                sizing: sizing.explain(),
                keys: vec![],
            },
        ))
    }

    /// Measures `p` and records it as measurement `id` (and, with several threads, its
    /// bulk-synchronous figure as `id/bulk-sync`); returns its p50 and why it is noisy.
    fn record(
        &self,
        ctx: &Context,
        region: &mut Region,
        rep: &mut Report,
        p: &Point,
        id: String,
        (isa, plan): (Isa, WindowPlan),
    ) -> Result<(f64, Option<String>), Skip> {
        let w = self.measure(ctx, region, isa, p, plan)?;
        let target = region.origin().to_string();
        let Some(d) = w.aggregate() else {
            return Err(Skip::new(format!(
                "no valid window for {} at {}",
                p.kernel.name(),
                p.size
            )));
        };
        let bytes: u64 = w.used().iter().map(|f| f.bytes).sum();
        let counters = w.counters().with_per_op("byte", bytes);
        ctx.progress(&format!("{id}: {:.1} GB/s{}", d.p50, counters.summary()));
        ctx.point_done();
        rep.warnings.extend(w.warnings(&target, &id));
        let parameters = json!({
            "kernel": p.kernel.name(), "isa": isa.name(), "vector_bytes": isa.width_bytes(),
            "store": kernels::store_instruction(p.kernel, isa),
            "threads": p.threads, "size_bytes": p.size,
            "slice_bytes": Stream::slice_of(p.size, p.threads, 0).1,
            "cpus": ctx.cpus_for(p.threads),
            "bytes_counted": if p.kernel.is_copy() { "read + written" } else { "touched" },
            "crew": w.parameters(),
            "stream": bench_core::crew::stream::signature(p.kernel, isa, p.size, &ctx.cpus_for(p.threads)),
        });
        let method = format!(
            "each thread streams its own slice of the footprint in parts of about {} us each, in turn (every part last touched a whole slice earlier); {}",
            (bench_core::crew::stream::CALL_NS / 1e3) as u64,
            w.method()
        );
        let m = |id: String, d: Distribution, method: String| Measurement {
            id,
            benchmark: self.name().into(),
            target: target.clone(),
            parameters: parameters.clone(),
            unit: "GB/s".into(),
            method,
            distribution: d,
            placement: Some(region.placement().clone()),
            counters: Some(counters.clone()),
        };
        if p.threads > 1 {
            if let Some(b) = w.bulk_sync() {
                rep.measurements.push(m(format!("{id}/bulk-sync"), b, format!(
                    "the bulk-synchronous figure of `{id}`: threads x the slowest thread's own rate in each window (equal work per thread, done when the slowest is done: what a lockstep sample measures); the windows as there"
                )));
            }
        }
        let p50 = d.p50;
        rep.measurements.push(m(id, d, method));
        Ok((p50, w.noisy()))
    }
}

/// The DRAM check of a stream of `start` bytes on `target`: the footprint and twice it,
/// the larger within 1/[`bench_core::sizing::CHECK_MEMORY_SHARE_DIVISOR`] of the memory
/// the target offers.
fn stream_check_plan(ctx: &Context, target: &impl OnMemory, start: usize) -> dram_check::Plan {
    dram_check::Plan {
        start_bytes: start,
        floor_bytes: start,
        max_bytes: ctx.check_span_limit(target).max(start),
        better: dram_check::Better::Higher,
    }
}

/// What [`stream_check`] of a stream of `bytes` by `threads` threads on `target` maps in
/// the caller's region, before its check finds anything (the footprint, and the larger of
/// its first comparison; nothing beside); `None` when a check of this run covers the
/// stream (nothing is grown).
pub fn stream_check_memory(
    ctx: &Context,
    target: &impl OnMemory,
    threads: usize,
    bytes: usize,
) -> Option<crate::CheckMemory> {
    let t = target.to_string();
    let cpus = ctx.cpus_for(threads);
    if ctx
        .sizing
        .covering(&t, Pattern::Stream, &cpus, bytes)
        .is_some()
    {
        return None;
    }
    let plan = stream_check_plan(ctx, target, bytes);
    Some(crate::CheckMemory {
        region_bytes: bytes.max(plan.first_larger_bytes()),
        largest_region_bytes: bytes.max(plan.largest_bytes()),
        heap_bytes: 0,
    })
}

/// The DRAM check of a stream of `bytes` by `threads` threads on `region`'s target, for
/// a family that streams without having run `mem bandwidth` (`mem loaded`, `mem agents`
/// alone): the covering check of this run if there is one, else the read kernel at
/// `bytes` and at twice it (the bandwidth family's own check) in the caller's region,
/// grown in place (the family is done with it: a second region beside it could exceed
/// what a node offers), recorded in the run's book. Returns the check's index, or `None`
/// (with a warning) when the region could not grow or no kernel runs here.
pub fn stream_check(
    ctx: &Context,
    region: &mut Region,
    threads: usize,
    bytes: usize,
    report: &mut Report,
) -> Result<Option<usize>, Skip> {
    let target = region.origin().clone();
    let cpus = ctx.cpus_for(threads);
    let t = target.to_string();
    if let Some(i) = ctx.sizing.covering(&t, Pattern::Stream, &cpus, bytes) {
        return Ok(Some(i));
    }
    let b = BandwidthBench {
        kernels: vec![Kernel::Read],
        ..Default::default()
    };
    let Ok(isa) = IsaSet::detect().choose(None) else {
        return Ok(None);
    };
    if let Err(e) = region.grow(bytes, &ctx.topology) {
        report.warnings.push(Warning {
            code: "dram_check".into(),
            message: format!("{t}: no DRAM check of the stream: {e}"),
            remediation: "free memory, or run `cxlchar all`, whose bandwidth family checks it"
                .into(),
        });
        return Ok(None);
    }
    let (_, sizing) = ctx.dram_stream_bytes(&target, &cpus);
    let check = b.dram_check(ctx, region, report, isa, threads, bytes, &sizing)?;
    report.warnings.extend(dram_check::warning(&check));
    Ok(Some(ctx.sizing.record_check(check)))
}

/// Planned seconds of [`stream_check`] of a stream of `bytes` by `threads` threads on
/// `target`: none where a family planned before it checks streams there
/// ([`bench_core::plan::Planning::checked`]), else the read kernel at `bytes` and at twice
/// it (the region grown by `bytes`): its first pass, as [`crate::latency::chase_check_s`].
pub fn stream_check_s(ctx: &Context, target: &TargetSpec, threads: usize, bytes: usize) -> f64 {
    if ctx.plan.checked(&target.to_string(), Pattern::Stream) {
        return 0.0;
    }
    let check = check_plan(ctx.effort);
    let at = |size: usize| {
        let p = Point {
            kernel: Kernel::Read,
            size,
            threads,
            keys: vec![],
            dram: true,
        };
        BandwidthBench::point_s(ctx, &p, &check)
    };
    at(bytes) + at(2 * bytes) + ctx.plan.expect.populate_s(bytes)
}

/// The planned points of [`stream_check`] of 1 and of `threads` threads (one CPU: the
/// second is the first) at their DRAM footprints on `target`, where no family planned
/// before makes them: two sizes each ([`stream_check_s`]).
pub fn stream_checks_cost(ctx: &Context, target: &TargetSpec, threads: usize) -> Cost {
    let mut counts = vec![1, threads];
    counts.dedup();
    let mut cost = Cost::new();
    for threads in counts {
        let bytes = ctx.dram_stream_bytes(target, &ctx.cpus_for(threads)).0;
        let s = stream_check_s(ctx, target, threads, bytes);
        if s > 0.0 {
            cost.add(format!("DRAM check, {threads} thread(s)"), 2, s / 2.0);
        }
    }
    cost
}

/// The read kernel by a crew of `threads` threads (the first of `ctx.cpus`) over `bytes`
/// of `region`, each thread its own slice: the DRAM read point of `mem bandwidth`,
/// recorded in `rep` as measurement `id` of `benchmark`, for a family that needs that
/// one point (the NUMA matrix); the sizing and its check are the caller's. Returns the
/// p50 (GB/s, GB = 1e9 B) and why it is noisy.
pub fn read_point(
    ctx: &Context,
    region: &mut Region,
    (threads, bytes): (usize, usize),
    (benchmark, id): (&str, String),
    rep: &mut Report,
) -> Result<(f64, Option<String>), Skip> {
    let b = BandwidthBench {
        kernels: vec![Kernel::Read],
        ..Default::default()
    };
    let isa = b
        .validate(IsaSet::detect(), ctx.cpus.len())
        .map_err(|e| Skip::new(e.to_string()))?;
    let p = Point {
        kernel: Kernel::Read,
        size: bytes.min(region.len()),
        threads,
        keys: vec![],
        dram: true,
    };
    let before = rep.measurements.len();
    let v = b.record(ctx, region, rep, &p, id, (isa, ctx.effort.crew))?;
    for m in &mut rep.measurements[before..] {
        m.benchmark = benchmark.into();
    }
    Ok(v)
}

/// The windows of a DRAM check's point: twice a point's (the check compares medians,
/// and a VM's bandwidth drifts), windows as long.
fn check_plan(effort: &Effort) -> WindowPlan {
    effort.crew.times(2)
}

/// The measurement id of a point.
fn point_id(target: &str, p: &Point) -> String {
    format!(
        "mem.bandwidth/{target}/{}/{}t/{}",
        p.kernel.name(),
        p.threads,
        format_size(p.size)
    )
}

impl Benchmark for BandwidthBench {
    fn name(&self) -> &'static str {
        "mem.bandwidth"
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        let most = self
            .plan(ctx, target)
            .iter()
            .map(|p| p.size)
            .max()
            .unwrap_or(MIB);
        if self.sizes.is_some() {
            return most;
        }
        // Room for the DRAM check's larger footprint too (it would grow the region).
        (2 * most).min(ctx.check_span_limit(target)).max(most)
    }

    /// The region the runner places, grown by the DRAM checks' first comparisons (none
    /// with `--sizes`); the points stream slices of it.
    fn memory(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let mut len = self.region_bytes(ctx, target);
        let mut largest = len;
        let mut what = match &self.sizes {
            Some(_) => "the largest of --sizes".to_string(),
            None => "the largest DRAM point and twice it for its DRAM check".to_string(),
        };
        if self.sizes.is_none() {
            for (&threads, &size) in &self.dram_defaults(ctx, target) {
                let Some(c) = stream_check_memory(ctx, target, threads, size) else {
                    continue;
                };
                largest = largest.max(c.largest_region_bytes);
                if c.region_bytes > len {
                    len = c.region_bytes;
                    what = format!(
                        "the DRAM check of {threads} thread(s) at {} and twice it",
                        human_bytes(size as u64)
                    );
                }
            }
        }
        let topo = &ctx.topology;
        let bytes = target.mapped_bytes(len, topo);
        let largest = target.mapped_bytes(largest, topo);
        let grows = crate::check_growth_note(bytes, largest);
        let need = Need::on_target(
            bytes,
            format!("a {} footprint: {what}{grows}", human_bytes(bytes as u64)),
        )
        .growing(bytes, largest);
        match &self.sizes {
            Some(_) => need.with_fit("--sizes", 1, 0),
            None => need,
        }
    }

    fn planned_checks(&self, _ctx: &Context, _target: &TargetSpec) -> Vec<Pattern> {
        // The DRAM check of each thread count, which `--sizes` replaces.
        match self.sizes {
            None => vec![Pattern::Stream],
            Some(_) => vec![],
        }
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let dram = self.dram_defaults(ctx, target);
        let mut cost = Cost::new();
        if self.sizes.is_none() {
            // A check measures its footprint and twice it, and repeats both where the two
            // disagree (the planned passes, a repeat at its share; growing where the
            // smaller is faster is not priced).
            let check = check_plan(ctx.effort);
            let repeats = 2 * (bench_core::dram_check::PLANNED_PASSES - 1);
            for (&threads, &size) in &dram {
                let p = Point {
                    kernel: self.check_kernel(),
                    size: 2 * size,
                    threads,
                    keys: vec![],
                    dram: true,
                };
                let each = Self::point_s(ctx, &p, &check);
                cost.add(format!("DRAM check, {threads} thread(s)"), 2, each);
                if repeats > 0 {
                    cost.add(
                        format!("DRAM check, {threads} thread(s), repeat"),
                        repeats,
                        each * bench_core::dram_check::REPEAT_SHARE,
                    );
                }
            }
        }
        let budget = ctx.effort.crew;
        for p in self.plan_at(ctx, &dram) {
            cost.add(
                format!("{} {}t {}", p.kernel.name(), p.threads, format_size(p.size)),
                1,
                Self::point_s(ctx, &p, &budget),
            );
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let isa = self
            .validate(IsaSet::detect(), ctx.cpus.len())
            .map_err(|e| Skip::new(e.to_string()))?;
        let target = region.origin().to_string();
        let mut rep = Report::default();
        for &k in &self.kernels {
            if let Err(reason) = kernels::supported(k, isa) {
                rep.skipped.push(bench_core::params::Skipped {
                    benchmark: format!("{}/{}", self.name(), k.name()),
                    target: target.clone(),
                    reason,
                });
            }
        }
        if self.threads.unwrap_or(ctx.cpus.len()) == 1 {
            rep.warnings.push(Warning {
                code: "bandwidth_threads".into(),
                message: format!(
                    "{target}: one CPU: the all-threads figures are single-thread figures"
                ),
                remediation: "give more CPUs with --cpu".into(),
            });
        }
        // The DRAM check of each thread count, unless a check of this run covers it.
        let mut dram = self.dram_defaults(ctx, region.origin());
        let mut check_of: BTreeMap<usize, usize> = BTreeMap::new();
        if self.sizes.is_none() {
            for (&threads, size) in dram.iter_mut() {
                let cpus = ctx.cpus_for(threads);
                if let Some(i) = ctx.sizing.covering(&target, Pattern::Stream, &cpus, *size) {
                    check_of.insert(threads, i);
                    continue;
                }
                let (_, sizing) = ctx.dram_stream_bytes(region.origin(), &cpus);
                let check = self.dram_check(ctx, region, &mut rep, isa, threads, *size, &sizing)?;
                *size = check.reported_bytes;
                rep.warnings.extend(dram_check::warning(&check));
                check_of.insert(threads, ctx.sizing.record_check(check));
            }
        }
        for p in self.plan_at(ctx, &dram) {
            if p.size > region.len() {
                continue;
            }
            let id = point_id(&target, &p);
            let (p50, noisy) = match rep.measurements.iter().find(|m| m.id == id) {
                Some(m) => (
                    m.distribution.p50,
                    m.parameters["crew"]["noisy"].as_str().map(String::from),
                ),
                None => {
                    let plan = ctx.effort.crew;
                    self.record(ctx, region, &mut rep, &p, id.clone(), (isa, plan))?
                }
            };
            let n = rep
                .measurements
                .iter()
                .find(|m| m.id == id)
                .map_or(0, |m| m.distribution.n);
            for key in &p.keys {
                let checked = if p.dram {
                    check_of.get(&p.threads).copied()
                } else {
                    None
                };
                if let Some(i) = checked {
                    ctx.sizing.cover(i, [key.clone()]);
                }
                rep.params.push(Param::new(
                    key.clone(),
                    p50,
                    &target,
                    format!(
                        "p50 over {} windows of {} by {} thread(s) (the bytes all threads moved in the time all ran / that time), {} footprint, {} ({}-byte vectors); GB = 1e9 B{}{}",
                        n,
                        p.kernel.name(),
                        p.threads,
                        format_size(p.size),
                        isa,
                        isa.width_bytes(),
                        if p.kernel.is_copy() { ", bytes read + written" } else { "" },
                        if checked.is_some() { "; DRAM footprint checked by the DRAM check (see dram_check)" } else { "" }
                    ),
                    vec![id.clone()],
                ).noisy(noisy.clone()));
            }
        }
        Ok(rep)
    }
}

/// Read, write, non-temporal write, copy, non-temporal copy and memset bandwidth
/// (GB = 10^9 B/s; copies count bytes read + written), one thread and all threads.
///
/// On an interleaved target (`--target interleave:0,1`) each of its nodes is measured
/// too, as `node:N` (unless named already), so the interleaved bandwidth stands next to
/// its parts; its keys are written only qualified (`mem_bw_gbs@interleave:0,1`).
#[derive(Debug, Clone, clap::Args)]
pub struct BandwidthArgs {
    /// Kernels to run (comma-separated): read, write, nt-write, copy, nt-copy, memset,
    /// and zva-write (AArch64 `dc zva`; by default on AArch64). Default: all of this
    /// architecture.
    #[arg(long = "kernel", value_delimiter = ',', value_enum)]
    pub kernels: Vec<Kernel>,
    /// Force an instruction set (default: the widest the CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<Isa>,
    /// Threads of the all-threads points (default: one per --cpu).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Footprints to measure instead of the default points (comma-separated; a copy's
    /// footprint is its source plus its destination).
    #[arg(long, value_name = "SIZE", value_delimiter = ',', value_parser = parse_positive_size)]
    pub sizes: Option<Vec<usize>>,
}

impl Setup for BandwidthArgs {
    /// Validated against the CPU and `--cpu`.
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        let kernels = if self.kernels.is_empty() {
            Kernel::defaults()
        } else {
            self.kernels.clone()
        };
        let b = BandwidthBench {
            kernels,
            isa: self.isa,
            threads: self.threads,
            sizes: self.sizes.clone(),
        };
        b.validate(IsaSet::detect(), opts.cpus.len())?;
        Ok(Planned::one(b))
    }

    /// Bandwidth expansion is why memory is interleaved: measure the parts as well.
    fn interleave_parts(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
