//! The [`Benchmark`] trait: one benchmark, one implementation, one file.
//!
//! A benchmark knows its name, its [`Subject`] (memory the runner places on each target,
//! or a device it opens itself), what it needs ([`Requirements`]) and how much memory it
//! wants on a target; [`Benchmark::run`] turns its [`Input`] into a [`Report`], or says
//! why not ([`NotRun`]: skipped with a reason, or failed with an error).
//!
//! Its configuration is a typed struct, the clap `Args` of its command in the family crate;
//! [`Setup`] turns it into benchmarks against the shared [`Options`].

use crate::dram_check::Pattern;
use crate::effort::Effort;
use crate::memory::{OnMemory, Region, TargetSpec};
use crate::params::{Measurement, ParamInfo, PrefetchCheck, Skipped, Warning};
use crate::sizing::{DramSizing, SizingBook};
use crate::timer::Timer;
use crate::topology::Topology;
use std::sync::Arc;

/// Shared context of one cxlchar run.
#[derive(Clone)]
pub struct Context {
    /// The calibrated timer.
    pub timer: Timer,
    /// The machine's topology.
    pub topology: Topology,
    /// CPUs the user allowed for measuring threads (first = the main measuring CPU).
    pub cpus: Vec<usize>,
    /// How many points and samples (`--quick` or a full run; [`crate::effort`]).
    pub effort: &'static Effort,
    /// Seed of every random order (chases are reproducible for a seed).
    pub seed: u64,
    /// Progress reporter (a line of text); the runner decides where it goes.
    pub progress: Arc<dyn Fn(&str) + Send + Sync>,
    /// DRAM working sets found in this run, by target (the latency sweep records them).
    pub sizing: SizingBook,
    /// The run's plan as benchmarks see it: the machine their costs are priced for, and
    /// where a finished point is reported ([`crate::plan`]).
    pub plan: crate::plan::Planning,
}

impl Context {
    /// A context for tests and examples on this machine: quick timer calibration, quick
    /// mode, every allowed CPU, seed 1, no progress output.
    pub fn quick_local() -> Context {
        Context {
            timer: Timer::calibrate(crate::timer::Calibration::QUICK),
            topology: Topology::system(),
            cpus: crate::pin::allowed_cpus(),
            effort: &crate::effort::QUICK,
            seed: 1,
            progress: Arc::new(|_| {}),
            sizing: SizingBook::default(),
            plan: crate::plan::Planning::default(),
        }
    }

    /// This context with `cpus` as its CPUs (threads pinned round robin over them, the
    /// first for single-thread work): one rung of the thread ladder
    /// ([`crate::topology::ladder`]). Everything else is shared.
    pub fn with_cpus(&self, cpus: &[usize]) -> Context {
        Context {
            cpus: cpus.to_vec(),
            ..self.clone()
        }
    }

    /// The rungs of the thread ladder of this run's CPUs, or the counts `threads` asks
    /// for (`--threads`); a budget may cut the ladder ([`Effort::max_rungs`]).
    pub fn ladder(
        &self,
        threads: Option<&crate::topology::ladder::Threads>,
    ) -> crate::topology::ladder::Ladder {
        crate::topology::ladder::Ladder::select(
            &self.topology,
            &self.cpus,
            threads,
            self.effort.max_rungs,
        )
    }

    /// One point of this benchmark's planned cost is done ([`crate::plan`]).
    pub fn point_done(&self) {
        self.plan.point_done()
    }

    /// The memory `target` offers, as this run first read it
    /// ([`crate::sizing::SizingBook::available`]).
    pub fn available(&self, target: &impl OnMemory) -> Option<usize> {
        self.sizing.available(target, &self.topology)
    }

    /// The caches `cpus` can fill together ([`crate::topology::CacheReach`]).
    pub fn cache_reach(&self, cpus: &[usize]) -> Option<crate::topology::CacheReach> {
        self.topology.cache_reach(cpus)
    }

    /// The CPUs of a family that runs `threads` threads: the first `threads` of
    /// [`Context::cpus`] (round robin past the end, as the lockstep threads are pinned).
    pub fn cpus_for(&self, threads: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..threads.max(1))
            .map(|t| self.cpus[t % self.cpus.len().max(1)])
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The DRAM working set of a family of `pattern` running on `cpus` over `target`
    /// ([`crate::sizing`]): 4 x the caches those CPUs can fill, raised by this run's
    /// latency plateau on the target and by any check that grew past its rule for CPUs
    /// among them. Not yet bounded by memory.
    pub fn dram_sizing(
        &self,
        target: &impl OnMemory,
        cpus: &[usize],
        pattern: Pattern,
    ) -> DramSizing {
        let base = DramSizing::for_cpus(self.cache_reach(cpus), self.topology.llc_bytes());
        let key = target.to_string();
        let s = match self.sizing.get(&key) {
            Some(p) => match p.plateau_start_bytes {
                Some(start) => base.with_plateau(start, p.effective_llc_bytes, p.from),
                None => base,
            },
            None => base,
        };
        match self.sizing.grown(&key, pattern, cpus) {
            Some(g) => s.at_least(g, crate::sizing::SizingRule::Check),
            None => s,
        }
    }

    /// The DRAM working set (touched bytes) of a chase on `target` run from `cpus` that
    /// spans `span_per_touched` bytes of memory per touched byte: [`Context::dram_sizing`],
    /// bounded by the memory the target offers ([`crate::sizing::available_for`]). Also
    /// returns the sizing (its rule [`crate::sizing::SizingRule::MemoryBound`] when the
    /// bound applied).
    pub fn dram_touched(
        &self,
        target: &impl OnMemory,
        cpus: &[usize],
        span_per_touched: usize,
    ) -> (usize, DramSizing) {
        let mut s = self.dram_sizing(target, cpus, Pattern::Chase);
        let (t, capped) = s.touched_for(span_per_touched, self.available(target));
        if capped {
            s.rule = crate::sizing::SizingRule::MemoryBound;
        }
        (t, s)
    }

    /// The working set of a streaming DRAM point on `target` run by `cpus` (the
    /// `mem.bandwidth` DRAM points, `pool.flush-bw`, the loaded-latency traffic):
    /// [`Context::dram_sizing`]'s bytes, at least [`crate::sizing::STREAM_FLOOR_BYTES`]
    /// ([`crate::sizing::stream_bytes`]); bounded by 1/[`crate::sizing::MEMORY_SHARE_DIVISOR`]
    /// of the memory the target offers. The same with and without `--quick`.
    pub fn dram_stream_bytes(&self, target: &impl OnMemory, cpus: &[usize]) -> (usize, DramSizing) {
        let mut s = self.dram_sizing(target, cpus, Pattern::Stream);
        let want = crate::sizing::stream_bytes(s.touched_bytes);
        let (bytes, capped) = crate::sizing::cap_by_memory(want, 1, self.available(target));
        if capped {
            s.rule = crate::sizing::SizingRule::MemoryBound;
        }
        (bytes, s)
    }

    /// The largest size the larger working set of a DRAM check on `target` may have (a
    /// span of at most 1/[`crate::sizing::CHECK_MEMORY_SHARE_DIVISOR`] of the memory the
    /// target offers, as this run first read it), in bytes of memory spanned.
    pub fn check_span_limit(&self, target: &impl OnMemory) -> usize {
        self.available(target).map_or(usize::MAX, |a| {
            a / crate::sizing::CHECK_MEMORY_SHARE_DIVISOR
        })
    }

    /// Reports progress.
    pub fn progress(&self, msg: &str) {
        (self.progress)(msg)
    }
}

/// What a benchmark needs to run.
#[derive(Debug, Clone, Default)]
pub struct Requirements {
    /// Minimum number of CPUs in the context.
    pub min_cpus: usize,
    /// Target kinds it can run on (`anon`, `node`, ...); empty means any memory target.
    pub target_kinds: Vec<&'static str>,
}

/// A model key produced by a benchmark.
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Param {
    /// Key, with its unit in the name (`mem_lat_ns`).
    pub key: String,
    pub value: f64,
    /// How it was derived.
    pub info: ParamInfo,
}

impl Param {
    /// A registered key ([`crate::keys`]) with its target, method and the measurement
    /// ids it comes from; the unit is the registry's. A key missing from the registry is
    /// a bug of the producer: debug builds panic, release builds record an empty unit.
    pub fn new(
        key: impl Into<String>,
        value: f64,
        target: &str,
        method: impl Into<String>,
        from: Vec<String>,
    ) -> Param {
        let key = key.into();
        let def = crate::keys::lookup(&key);
        debug_assert!(
            def.is_some(),
            "params key `{key}` is not in bench_core::keys: register it"
        );
        Param {
            key,
            value,
            info: ParamInfo {
                unit: def.map_or("", |d| d.unit.symbol()).into(),
                target: target.into(),
                method: method.into(),
                from,
                noisy: None,
            },
        }
    }

    /// This param flagged noisy for `why` (`None`: unchanged).
    pub fn noisy(mut self, why: Option<String>) -> Param {
        if why.is_some() {
            self.info.noisy = why;
        }
        self
    }
}

/// What a benchmark produced on one target.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Everything measured.
    pub measurements: Vec<Measurement>,
    /// Model keys derived from the measurements (unqualified: the runner decides which
    /// target's value becomes `mem_lat_ns` and which is qualified as `mem_lat_ns@node:1`).
    pub params: Vec<Param>,
    /// Conditions met during the run.
    pub warnings: Vec<Warning>,
    /// Parts of the benchmark that could not run here (a method the CPU lacks, a
    /// mapping the platform does not offer), each with its reason.
    pub skipped: Vec<Skipped>,
    /// Self-checks of the idle-latency chase on this target (differently built chains).
    pub prefetch_checks: Vec<PrefetchCheck>,
    /// It served a peer that measures (a `verbs --server`): a report with no measurement
    /// is then what was asked, not a run that measured nothing (docs/safety.md).
    pub served: bool,
    /// The NUMA node matrix (`mem.matrix` only): params.json's `numa_matrix`.
    pub numa_matrix: Option<crate::params::NumaMatrix>,
    /// The interference matrix (`mem.interference` only): params.json's `interference`.
    pub interference: Option<crate::params::InterferenceMatrix>,
}

/// A reason a benchmark (or a part of it) did not run here; converts into
/// [`NotRun::Skipped`] with `?`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Skip {
    /// Why, and what to do about it where something can be done.
    pub reason: String,
}

impl Skip {
    /// A skip with this reason.
    pub fn new(reason: impl Into<String>) -> Skip {
        Skip {
            reason: reason.into(),
        }
    }
}

/// Any error, boxed: what a benchmark's failure or a bad configuration carries.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why [`Benchmark::run`] produced no report.
#[derive(Debug, thiserror::Error)]
pub enum NotRun {
    /// It cannot run here (a CPU feature, a device, a mapping the machine lacks): recorded
    /// in `skipped` with the reason, and the run goes on.
    #[error("skipped: {reason}")]
    Skipped {
        /// Why, and what to do about it where something can be done.
        reason: String,
    },
    /// It started and failed (a two-sided run whose peer died): the command exits
    /// non-zero with the error and writes no params file.
    #[error("{0}")]
    Failed(BoxError),
}

impl NotRun {
    /// A skip with this reason.
    pub fn skip(reason: impl Into<String>) -> NotRun {
        NotRun::Skipped {
            reason: reason.into(),
        }
    }

    /// A failure with this error.
    pub fn failed(error: impl Into<BoxError>) -> NotRun {
        NotRun::Failed(error.into())
    }

    /// The reason of a skip; `None` for a failure.
    pub fn skip_reason(&self) -> Option<&str> {
        match self {
            NotRun::Skipped { reason } => Some(reason),
            NotRun::Failed(_) => None,
        }
    }
}

impl From<Skip> for NotRun {
    fn from(s: Skip) -> NotRun {
        NotRun::Skipped { reason: s.reason }
    }
}

/// What a benchmark measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// Memory: the runner places a [`Region`] of [`Benchmark::region_bytes`] on each
    /// target of the run and passes it in.
    Memory,
    /// A device the benchmark opens and validates itself (a PCI BAR, an RDMA NIC, a GPU),
    /// run once after the memory targets.
    Device {
        /// The device, as shown in `target` fields (`pci:0000:00:02.0/2`, `gpu:0`).
        target: String,
    },
}

/// What [`Benchmark::run`] runs on: the placed region of a [`Subject::Memory`]
/// benchmark, nothing for a [`Subject::Device`] one.
#[derive(Debug)]
pub enum Input<'a> {
    /// The region placed on one target.
    Region(&'a mut Region),
    /// A device benchmark: it opens its device itself.
    Device,
}

impl<'a> Input<'a> {
    /// The region of a memory benchmark; a failure when the runner passed none.
    pub fn region(self) -> Result<&'a mut Region, NotRun> {
        match self {
            Input::Region(r) => Ok(r),
            Input::Device => Err(NotRun::failed(
                "a memory benchmark was run without a region",
            )),
        }
    }
}

/// One benchmark: a memory benchmark (run on each target) or a device benchmark.
pub trait Benchmark {
    /// Dotted name (`mem.latency`).
    fn name(&self) -> &'static str;
    /// What it measures: memory (the default) or a device.
    fn subject(&self) -> Subject {
        Subject::Memory
    }
    /// What it needs (checked before memory is placed; default: nothing).
    fn requires(&self) -> Requirements {
        Requirements::default()
    }
    /// Bytes it wants on `target` (families that must miss the caches size from
    /// [`Context::dram_sizing`] of that target). Unused for devices.
    fn region_bytes(&self, _ctx: &Context, _target: &TargetSpec) -> usize {
        0
    }
    /// What it maps at most at once on `target` (a memory benchmark: its region as it
    /// grows, its DRAM check's larger point, buffers of its own) or for its device
    /// (`target` is `anon`): the run's memory plan, known before anything is mapped
    /// ([`crate::memory::budget`]). Default: the region of [`Benchmark::region_bytes`].
    fn memory(&self, ctx: &Context, target: &TargetSpec) -> crate::memory::budget::Need {
        crate::memory::budget::Need::on_target(self.region_bytes(ctx, target), "its region")
    }
    /// The DRAM checks a run of it on `target` makes that later families of the run can
    /// stand on (their keys are covered, so they run no check of their own), for the
    /// plan ([`crate::plan::Planning::checked`]). Default: none.
    fn planned_checks(
        &self,
        ctx: &Context,
        target: &TargetSpec,
    ) -> Vec<crate::dram_check::Pattern> {
        let _ = (ctx, target);
        Vec::new()
    }
    /// Runs on one placed region ([`Input::Region`]) or on its device ([`Input::Device`]).
    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun>;

    /// What it will measure on `target` (a memory benchmark) or on its device (`None`),
    /// point by point, with the seconds each takes ([`crate::plan`]): the run's plan,
    /// announced before it measures, and the progress bar's steps. Priced from what each
    /// point does (bytes at the expected bandwidth, samples x sample time, round trips,
    /// pages populated), with the same effort, sizes and thread ladder the run takes; it
    /// never changes what is measured. Default: not modelled (one second).
    fn cost(&self, _ctx: &Context, _target: Option<&TargetSpec>) -> crate::plan::Cost {
        crate::plan::Cost::unknown()
    }

    /// Checks the requirements against the context and target; a mismatch is a skip.
    fn check(&self, ctx: &Context, target: &TargetSpec) -> Result<(), Skip> {
        let r = self.requires();
        if ctx.cpus.len() < r.min_cpus {
            return Err(Skip::new(format!(
                "needs {} CPUs, {} given",
                r.min_cpus,
                ctx.cpus.len()
            )));
        }
        if !r.target_kinds.is_empty() && !r.target_kinds.contains(&target.kind()) {
            return Err(Skip::new(format!(
                "does not run on {} targets (runs on: {})",
                target.kind(),
                r.target_kinds.join(", ")
            )));
        }
        Ok(())
    }
}

/// The options every measuring command shares, as a benchmark's configuration sees them
/// when it is turned into benchmarks ([`Setup::plan`]).
#[derive(Debug, Clone)]
pub struct Options {
    /// How many points and samples (`--quick` or a full run).
    pub effort: &'static Effort,
    /// `--allow-write`: writing into dax and file targets and PCI BARs is allowed.
    pub allow_write: bool,
    /// The CPUs of the run (`--cpu`, else every allowed CPU).
    pub cpus: Vec<usize>,
    /// The targets named with `--target` (empty: the runner's defaults).
    pub targets: Vec<TargetSpec>,
    /// A plan for another machine (`--plan --sysfs ROOT`): the root of its sysfs tree.
    /// Nothing is measured; a family whose devices this machine would probe finds them
    /// in that tree instead (the GPUs), or is planned as skipped.
    pub sysfs: Option<std::path::PathBuf>,
    /// Where the run finds a device to copy beside CPU work (a GPU as `mem.interference`'s
    /// aggressor): given by the runner, which has the driver crates; `None` where none is
    /// built in.
    pub dma: Option<std::sync::Arc<dyn crate::dma::DmaProbe>>,
}

impl Default for Options {
    /// A full run on no CPUs and the default targets, writing nothing.
    fn default() -> Options {
        Options {
            effort: &crate::effort::FULL,
            allow_write: false,
            cpus: vec![],
            targets: vec![],
            sysfs: None,
            dma: None,
        }
    }
}

/// Benchmarks to run, and parts skipped as a whole (`gpu` without a driver).
#[derive(Default)]
pub struct Planned {
    /// The benchmarks, in run order.
    pub benchmarks: Vec<Box<dyn Benchmark>>,
    /// Benchmarks or families that will not run, each with its reason (no target).
    pub skipped: Vec<Skipped>,
}

impl Planned {
    /// One benchmark.
    pub fn one(b: impl Benchmark + 'static) -> Planned {
        Planned {
            benchmarks: vec![Box::new(b)],
            skipped: vec![],
        }
    }

    /// Nothing runs: `benchmark` is skipped as a whole, with the reason.
    pub fn skip(benchmark: impl Into<String>, reason: impl Into<String>) -> Planned {
        Planned {
            benchmarks: vec![],
            skipped: vec![Skipped {
                benchmark: benchmark.into(),
                target: String::new(),
                reason: reason.into(),
            }],
        }
    }
}

/// A benchmark command's typed configuration: the family's clap `Args` struct of the
/// command (`bench_mem::latency::LatencyArgs` for `cxlchar mem latency`), turned into
/// validated benchmarks. The runner's registry lists one per command.
pub trait Setup {
    /// The benchmarks of the command; bad input is an error before anything runs.
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError>;
    /// Its part of `cxlchar all` (from the command's defaults, or from `all`'s own options
    /// where the family adds them there): by default the same as [`Setup::plan`].
    fn plan_all(&self, opts: &Options) -> Result<Planned, BoxError> {
        self.plan(opts)
    }
    /// Whether the command's default targets include the far-memory NUMA nodes (as in
    /// `all`), not only `anon`.
    fn far_nodes_by_default(&self) -> bool {
        false
    }
    /// Whether each node of an `interleave:` target is also measured as a `node:N`
    /// target (unless named already), so the interleaved figure stands next to its parts
    /// (`mem bandwidth`, `all`).
    fn interleave_parts(&self) -> bool {
        false
    }
}
