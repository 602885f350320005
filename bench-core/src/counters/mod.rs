//! Counter evidence around a timed section (Linux `perf_event_open` via `perf-event2`).
//!
//! A [`CounterGroup`] counts, for the calling thread only, across one timed section:
//!
//! * software events, always attempted: context switches, CPU migrations, minor and major
//!   page faults. Any of them in a timed section means the section was disturbed
//!   ([`Counts::disturbances`]);
//! * hardware events where the machine has a PMU: cycles, instructions, L1D / LLC / dTLB
//!   load misses (the kernel's generic events). In a VM without a virtual PMU they fail to
//!   open (`ENOENT`); they are then recorded as *unavailable, with the reason*, never as
//!   zeros.
//!
//! Start and stop are a few system calls (reset + enable, disable + read per group), cheap
//! next to a measurement of milliseconds: wrap a whole measurement, not each batch.
//!
//! ```no_run
//! use bench_core::counters::CounterGroup;
//! let mut g = CounterGroup::open();
//! g.start();
//! // ... the timed section ...
//! let c = g.stop();
//! assert!(c.context_switches.is_some() || c.unavailable.contains_key("context_switches"));
//! ```
//!
//! [`measure_undisturbed`] and [`retry_undisturbed`] repeat a section that was disturbed,
//! up to a bound, and keep the least disturbed attempt; [`warnings_for`] turns what the
//! counters saw into run warnings (disturbed samples, `perf_event_paranoid`, core clock vs
//! TSC).
//!
//! Counters are per thread: a section that runs on several threads (the lockstep
//! bandwidth threads, a ping-pong partner, traffic injectors) opens a [`CounterGroup`] in
//! each thread and hands the counts of every thread, as [`ThreadCounts`], to
//! [`retry_undisturbed`]. The counts of the *measuring* threads are summed
//! ([`Counts::sum`]); *helper* threads are checked for disturbances only. A disturbance on
//! any thread flags (and repeats) the attempt.
//!
//! The module is split along its concerns, every item re-exported here:
//! [`counts`] (what a section counted, per thread and per measurement), [`group`] (the
//! [`CounterGroup`] around a timed section), `perf` (the perf_event groups behind it),
//! [`retry`] (disturbance detection and retries) and [`warnings`] (run warnings).

pub mod counts;
pub mod group;
mod perf;
pub mod retry;
pub mod warnings;

pub use counts::{Counts, MeasurementCounters, ThreadCounts, HARDWARE};
pub use group::CounterGroup;
pub use retry::{
    measure_undisturbed, retry_judged, retry_undisturbed, sample_buffer, try_retry_judged,
    try_retry_undisturbed, DEFAULT_MAX_ATTEMPTS,
};
pub use warnings::{warnings_for, CLOCK_TOLERANCE};

/// Helpers shared by the tests of the submodules.
#[cfg(test)]
mod test_util {
    use super::CounterGroup;
    use super::Counts;
    use crate::params::Measurement;

    /// Touches `pages` fresh anonymous pages, forcing that many minor faults.
    pub(super) fn fault_pages(pages: usize) -> usize {
        let page = 4096;
        let mut m = memmap2::MmapMut::map_anon(pages * page).unwrap();
        for i in 0..pages {
            m[i * page] = 1;
        }
        std::hint::black_box(m.iter().step_by(page).map(|&b| b as usize).sum())
    }

    /// Whether the software counters open here (they do not in some containers).
    /// When they do not, says so visibly (and fails where `CXLCHAR_REQUIRE=counters`).
    pub(super) fn sw_available(g: &CounterGroup) -> bool {
        let ok = !g.unavailable().contains_key("minor_faults");
        if !ok {
            crate::testing::unavailable(
                "counters",
                &format!("software counters do not open: {:?}", g.unavailable()),
            );
        }
        ok
    }

    /// A one-sample measurement on `anon` in `unit` carrying the counters `c`.
    pub(super) fn measurement(unit: &str, c: super::MeasurementCounters) -> Measurement {
        Measurement {
            id: "x/anon/4K".into(),
            benchmark: "x".into(),
            target: "anon".into(),
            parameters: serde_json::json!({}),
            unit: unit.into(),
            method: "m".into(),
            distribution: crate::stats::Distribution::from_samples(&[1.0]).unwrap(),
            placement: None,
            counters: Some(c),
        }
    }

    /// Software counts with `cs` context switches and `faults` minor faults.
    pub(super) fn sw(cs: u64, faults: u64) -> Counts {
        Counts {
            context_switches: Some(cs),
            cpu_migrations: Some(0),
            minor_faults: Some(faults),
            major_faults: Some(0),
            section_ns: 1000.0,
            ..Counts::default()
        }
    }
}
