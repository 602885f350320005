//! The [`Benchmark`] trait: one benchmark, one implementation, one file.
//!
//! A benchmark knows its name, its parameters, what it needs ([`Requirements`]) and how
//! much memory it wants on a target; [`Benchmark::run`] turns a placed [`Region`] into a
//! [`Report`] or a [`Skip`] with the reason.

use crate::params::{Measurement, ParamInfo, PrefetchCheck, Skipped, Warning};
use crate::sizing::{DramSizing, SizingBook};
use crate::target::{Region, TargetSpec};
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
    /// Short run: fewer sizes and samples, same methods.
    pub quick: bool,
    /// Seed of every random order (chases are reproducible for a seed).
    pub seed: u64,
    /// Progress reporter (a line of text); the runner decides where it goes.
    pub progress: Arc<dyn Fn(&str) + Send + Sync>,
    /// DRAM working sets found in this run, by target (the latency sweep records them).
    pub sizing: SizingBook,
}

impl Context {
    /// A context for tests and examples on this machine: quick timer calibration, quick
    /// mode, every allowed CPU, seed 1, no progress output.
    pub fn quick_local() -> Context {
        Context {
            timer: Timer::calibrate(crate::timer::Calibration::QUICK),
            topology: Topology::system(),
            cpus: crate::pin::allowed_cpus(),
            quick: true,
            seed: 1,
            progress: Arc::new(|_| {}),
            sizing: SizingBook::default(),
        }
    }

    /// The DRAM working set of `target`: the one this run's latency sweep found, else the
    /// sysfs rule ([`crate::sizing`]).
    pub fn dram_sizing(&self, target: &str) -> DramSizing {
        self.sizing
            .get(target)
            .unwrap_or_else(|| DramSizing::from_sysfs(self.topology.llc_bytes()))
    }

    /// The DRAM working set (touched bytes) for a chase on `target` that spans
    /// `span_per_touched` bytes of memory per touched byte: [`Context::dram_sizing`],
    /// bounded by the memory the target offers ([`crate::sizing::available_for`]). Also
    /// returns the sizing and whether the memory bound applied.
    pub fn dram_touched(
        &self,
        target: &TargetSpec,
        span_per_touched: usize,
    ) -> (usize, DramSizing, bool) {
        let s = self.dram_sizing(&target.to_string());
        let (t, capped) = s.touched_for(
            span_per_touched,
            crate::sizing::available_for(target, &self.topology),
        );
        (t, s, capped)
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
pub struct Param {
    /// Key, with its unit in the name (`mem_lat_ns`).
    pub key: String,
    /// Value.
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
            },
        }
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
}

/// A benchmark that could not run, and why.
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

/// One benchmark.
pub trait Benchmark {
    /// Dotted name (`mem.latency`).
    fn name(&self) -> &'static str;
    /// One line on what it measures.
    fn description(&self) -> &'static str;
    /// Its parameters, as recorded in the output.
    fn parameters(&self) -> serde_json::Value;
    /// What it needs.
    fn requires(&self) -> Requirements;
    /// Bytes it wants on `target` (families that must miss the caches size from
    /// [`Context::dram_sizing`] of that target).
    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize;
    /// Runs on one placed region.
    fn run(&self, ctx: &Context, region: &mut Region) -> Result<Report, Skip>;

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

/// A benchmark on a device rather than on a memory target (a PCI BAR, an RDMA NIC, a
/// GPU): it opens and validates its own device.
pub trait DeviceBenchmark {
    /// Dotted name (`pcie.mmio`).
    fn name(&self) -> &'static str;
    /// The device it measures, as shown in `target` fields (`pci:0000:00:02.0/2`).
    fn target(&self) -> String;
    /// Runs it.
    fn run(&self, ctx: &Context) -> Result<Report, Skip>;
}
