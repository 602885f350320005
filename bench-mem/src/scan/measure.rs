//! One range measured: the crew's windows ([`bench_core::crew`]) of the scan's CPUs, each
//! thread streaming its own slice of the range with one kernel ([`Stream`]), and what the
//! range's figure is made of.

use super::outliers::Figure;
use bench_core::bench::{Context, Skip};
use bench_core::counters::{Counts, MeasurementCounters};
use bench_core::crew::{Crew, Stream, Windows};
use bench_core::kernels::{Isa, Kernel};

/// A range as its windows measured it.
#[derive(Debug, Clone)]
pub struct RangeRun {
    /// The p50 of the used windows' aggregates, GB/s.
    pub gbs: f64,
    /// Half the range of the used windows' aggregates, GB/s.
    pub spread_gbs: f64,
    /// The used windows' aggregates, GB/s.
    pub windows_gbs: Vec<f64>,
    /// Windows run.
    pub windows_run: usize,
    /// Why the figure stands on disturbed windows only, if it does.
    pub noisy: Option<String>,
    /// The counters of the used windows.
    pub counters: MeasurementCounters,
    /// Bytes the measuring threads moved in the used windows.
    pub bytes: u64,
}

impl RangeRun {
    /// The figure the outlier rule judges.
    pub fn figure(&self) -> Figure {
        Figure {
            gbs: self.gbs,
            spread_gbs: self.spread_gbs,
            noisy: self.noisy.is_some(),
        }
    }
}

/// Measures `len` bytes at `base` with `kernel`: the crew's windows of a thread per CPU of
/// `cpus`, each over its own slice of the range.
pub fn range(
    ctx: &Context,
    cpus: &[usize],
    (kernel, isa): (Kernel, Isa),
    base: usize,
    len: usize,
) -> Result<RangeRun, Skip> {
    let threads = cpus.len().max(1);
    let w: Windows = Crew::on(&ctx.timer, cpus)
        .windows(ctx.effort.crew, &|t| {
            let (off, l) = Stream::slice_of(len, threads, t);
            // SAFETY: thread t owns its slice [base + off, base + off + l) of the range
            // (slices are disjoint and inside the range, which lies inside the caller's
            // region, alive and used by nothing else while the crew runs).
            Ok(unsafe { Stream::new(kernel, isa, (base + off) as *mut u8, l) })
        })
        .map_err(|e| Skip::new(e.reason()))?;
    let d = w
        .aggregate()
        .ok_or_else(|| Skip::new(format!("no valid window of {} over a range", kernel.name())))?;
    let used: Vec<f64> = w.used().iter().map(|f| f.aggregate_gbs).collect();
    Ok(RangeRun {
        gbs: d.p50,
        spread_gbs: (d.max - d.min) / 2.0,
        windows_gbs: used,
        windows_run: w.run(),
        noisy: w.noisy(),
        counters: w.counters(),
        bytes: w.used().iter().map(|f| f.bytes).sum(),
    })
}

/// The counters of a kernel's ranges together: counts summed, every window an attempt,
/// disturbed where any range's figure is noisy.
pub fn counters_of(runs: &[RangeRun]) -> MeasurementCounters {
    let mut c = MeasurementCounters {
        counts: Counts::sum(runs.iter().map(|r| &r.counters.counts)),
        attempts: runs.iter().map(|r| r.counters.attempts).sum(),
        threads: runs.first().map_or(1, |r| r.counters.threads),
        ..MeasurementCounters::default()
    };
    c.disturbed = runs.iter().any(|r| r.noisy.is_some());
    c.disturbances = runs
        .iter()
        .flat_map(|r| r.counters.disturbances.iter().cloned())
        .take(8)
        .collect();
    let bytes: u64 = runs.iter().map(|r| r.bytes).sum();
    c.with_per_op("byte", bytes)
}
