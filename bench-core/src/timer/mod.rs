//! The cycle timer.
//!
//! A [`Timer`] reads a fast tick counter (the TSC through `lfence; rdtsc` / `rdtscp;
//! lfence` on x86_64, `cntvct_el0` on aarch64), converts ticks to nanoseconds with a
//! frequency calibrated against `CLOCK_MONOTONIC_RAW`, and knows the cost of one
//! start/stop pair (its overhead), which [`Timer::elapsed_ns`] subtracts. Where no cycle
//! counter is usable, [`TimerSource::ClockGettime`] uses `clock_gettime` directly.
//! [`TimerInfo`] records what was used; it goes into params.json.
//!
//! **Limits.** A counter's tick and its resolution bound how short a timed section may
//! be: AArch64's `cntvct_el0` runs at 25 MHz to 1 GHz depending on the platform (40 ns to
//! 1 ns per tick; 1 GHz is required only from Armv8.6), a TSC at the nominal frequency.
//! [`Timer::min_batch_ns`] is the shortest section whose reading error stays under
//! 0.1 % ([`MIN_BATCH_RESOLUTIONS`] x the larger of one tick and the resolution, at
//! least [`MIN_BATCH_OVERHEADS`] x the overhead); the families that time short
//! operations size their batches from it ([`Timer::batch_ops`]), and the run's header
//! shows the tick, the resolution and that minimum.

mod clock;
#[cfg(target_arch = "aarch64")]
mod cntvct;
#[cfg(target_arch = "x86_64")]
mod tsc;

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Which counter a [`Timer`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerSource {
    /// x86_64 time-stamp counter, serialized with `lfence`/`rdtscp`.
    Tsc,
    /// aarch64 virtual counter `cntvct_el0`, serialized with `isb`.
    Cntvct,
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)`, in nanoseconds (portable fallback).
    ClockGettime,
}

/// What the timer is, as recorded in params.json.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TimerInfo {
    /// The counter read.
    pub source: TimerSource,
    /// Ticks per second (calibrated for `tsc`, architectural for `cntvct`, 1e9 for
    /// `clock_gettime`).
    pub freq_hz: f64,
    /// How the frequency was obtained.
    pub freq_method: String,
    /// Relative spread (max-min)/median of the calibration rounds, in parts per million.
    pub calibration_spread_ppm: f64,
    /// Whether the counter runs at a constant rate in all power states
    /// (`constant_tsc` and `nonstop_tsc`); `None` when it cannot be told.
    pub invariant: Option<bool>,
    /// Median cost of one start/stop pair with nothing between them, in ticks; subtracted
    /// from every timed section.
    pub overhead_ticks: f64,
    /// The same overhead in nanoseconds.
    pub overhead_ns: f64,
    /// Smallest non-zero start/stop difference seen, in nanoseconds (the resolution).
    pub resolution_ns: f64,
    /// One tick of the counter in nanoseconds (1e9 / `freq_hz`); 0 in files written
    /// before it was recorded.
    #[serde(default)]
    pub tick_ns: f64,
    /// The shortest timed section (batch) the families use: its reading error stays
    /// under 0.1 % ([`Timer::min_batch_ns`]); 0 in files written before it was recorded.
    #[serde(default)]
    pub min_batch_ns: f64,
    /// Why a fallback source was used, if one was.
    pub fallback_reason: Option<String>,
}

/// A calibrated timer. Cheap to copy; read with [`Timer::start`] and [`Timer::stop`].
#[derive(Debug, Clone)]
pub struct Timer {
    source: TimerSource,
    ticks_per_ns: f64,
    overhead_ticks: f64,
    info: TimerInfo,
}

/// How long calibration runs.
#[derive(Debug, Clone, Copy)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Calibration {
    /// Number of calibration rounds (the median is taken).
    pub rounds: usize,
    pub round: Duration,
    /// Number of back-to-back start/stop pairs used to measure the overhead.
    pub overhead_pairs: usize,
}

/// A timed batch lasts at least this many ticks (or resolutions, whichever is larger):
/// one tick of reading error is then at most 0.1 %.
pub const MIN_BATCH_RESOLUTIONS: f64 = 1000.0;
/// A timed batch lasts at least this many timer overheads (the subtracted overhead's
/// jitter is then a small share).
pub const MIN_BATCH_OVERHEADS: f64 = 100.0;

impl Calibration {
    /// The default: 7 rounds of 20 ms, 20 000 overhead pairs.
    pub const NORMAL: Calibration = Calibration {
        rounds: 7,
        round: Duration::from_millis(20),
        overhead_pairs: 20_000,
    };
    /// A short calibration for `--quick` runs and tests: 5 rounds of 5 ms.
    pub const QUICK: Calibration = Calibration {
        rounds: 5,
        round: Duration::from_millis(5),
        overhead_pairs: 5_000,
    };
}

impl Timer {
    /// Chooses the best counter of this architecture, calibrates it and measures its
    /// overhead. Falls back to `clock_gettime` when no cycle counter is usable.
    pub fn calibrate(cal: Calibration) -> Timer {
        #[cfg(target_arch = "x86_64")]
        {
            if tsc::available() {
                let (freq_hz, spread) = calibrate_against_clock(cal, tsc::start, tsc::stop);
                return Self::finish(
                    TimerSource::Tsc,
                    freq_hz,
                    "calibrated against CLOCK_MONOTONIC_RAW",
                    spread,
                    tsc::invariant(),
                    None,
                    cal,
                );
            }
            Self::fallback(cal, "the CPU has no rdtscp instruction")
        }
        #[cfg(target_arch = "aarch64")]
        {
            let freq_hz = cntvct::frequency_hz() as f64;
            if freq_hz > 0.0 {
                let (_, spread) = calibrate_against_clock(cal, cntvct::read, cntvct::read);
                return Self::finish(
                    TimerSource::Cntvct,
                    freq_hz,
                    "cntfrq_el0 (architectural)",
                    spread,
                    Some(true),
                    None,
                    cal,
                );
            }
            Self::fallback(cal, "cntfrq_el0 reads zero")
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            Self::fallback(cal, "no cycle counter is supported on this architecture")
        }
    }

    /// A timer on `clock_gettime(CLOCK_MONOTONIC_RAW)`, whatever the architecture offers.
    pub fn fallback(cal: Calibration, reason: &str) -> Timer {
        Self::finish(
            TimerSource::ClockGettime,
            1e9,
            "nanoseconds by definition",
            0.0,
            None,
            Some(reason.to_string()),
            cal,
        )
    }

    fn finish(
        source: TimerSource,
        freq_hz: f64,
        method: &str,
        spread_ppm: f64,
        invariant: Option<bool>,
        fallback_reason: Option<String>,
        cal: Calibration,
    ) -> Timer {
        let mut t = Timer {
            source,
            ticks_per_ns: freq_hz / 1e9,
            overhead_ticks: 0.0,
            info: TimerInfo {
                source,
                freq_hz,
                freq_method: method.to_string(),
                calibration_spread_ppm: spread_ppm,
                invariant,
                overhead_ticks: 0.0,
                overhead_ns: 0.0,
                resolution_ns: 0.0,
                tick_ns: 1.0 / (freq_hz / 1e9),
                min_batch_ns: 0.0,
                fallback_reason,
            },
        };
        let (median, resolution) = t.measure_overhead(cal.overhead_pairs.max(100));
        t.overhead_ticks = median;
        t.info.overhead_ticks = median;
        t.info.overhead_ns = median / t.ticks_per_ns;
        t.info.resolution_ns = resolution / t.ticks_per_ns;
        t.info.min_batch_ns = min_batch_ns(&t.info);
        t
    }

    fn measure_overhead(&self, pairs: usize) -> (f64, f64) {
        let mut d: Vec<u64> = Vec::with_capacity(pairs);
        for _ in 0..pairs {
            let a = self.start();
            let b = self.stop();
            d.push(b.saturating_sub(a));
        }
        let ticks: Vec<f64> = d.iter().map(|&x| x as f64).collect();
        let median = crate::stats::median(&ticks).unwrap_or(0.0);
        let resolution = d.iter().copied().filter(|&x| x > 0).min().unwrap_or(1) as f64;
        (median, resolution)
    }

    /// Reads the counter at the start of a timed section (ordered after earlier work).
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self.source {
            #[cfg(target_arch = "x86_64")]
            TimerSource::Tsc => tsc::start(),
            #[cfg(target_arch = "aarch64")]
            TimerSource::Cntvct => cntvct::read(),
            _ => clock::now_ns(),
        }
    }

    /// Reads the counter at the end of a timed section (after the section's work retired).
    #[inline(always)]
    pub fn stop(&self) -> u64 {
        match self.source {
            #[cfg(target_arch = "x86_64")]
            TimerSource::Tsc => tsc::stop(),
            #[cfg(target_arch = "aarch64")]
            TimerSource::Cntvct => cntvct::read(),
            _ => clock::now_ns(),
        }
    }

    /// Nanoseconds between two readings, with the timer's own overhead subtracted
    /// (never negative).
    #[inline]
    pub fn elapsed_ns(&self, start: u64, stop: u64) -> f64 {
        let ticks = stop.wrapping_sub(start) as f64 - self.overhead_ticks;
        ticks.max(0.0) / self.ticks_per_ns
    }

    /// The shortest timed section whose reading error stays under 0.1 %: 1000 x the
    /// larger of one tick and the resolution, at least 100 x the overhead.
    pub fn min_batch_ns(&self) -> f64 {
        self.info.min_batch_ns
    }

    /// Operations per timed batch at an estimated `est_ns_per_op`: enough for
    /// `target_ns` and for [`Timer::min_batch_ns`], at least `at_least`.
    pub fn batch_ops(&self, est_ns_per_op: f64, target_ns: f64, at_least: usize) -> usize {
        let t = target_ns.max(self.min_batch_ns());
        let n = (t / est_ns_per_op.max(0.01)).ceil();
        (n.min(1e12) as usize).max(at_least)
    }

    /// Converts ticks to nanoseconds (no overhead subtracted).
    #[inline]
    pub fn ticks_to_ns(&self, ticks: f64) -> f64 {
        ticks / self.ticks_per_ns
    }

    /// The counter used.
    pub fn source(&self) -> TimerSource {
        self.source
    }

    /// What was used, for the output.
    pub fn info(&self) -> &TimerInfo {
        &self.info
    }
}

/// [`TimerInfo::min_batch_ns`] from the tick, resolution and overhead of `t`.
pub fn min_batch_ns(t: &TimerInfo) -> f64 {
    let step = t.tick_ns.max(t.resolution_ns);
    (MIN_BATCH_RESOLUTIONS * step).max(MIN_BATCH_OVERHEADS * t.overhead_ns)
}

/// Returns (median frequency in Hz, spread in ppm) of `rounds` comparisons between the
/// counter and `CLOCK_MONOTONIC_RAW`.
#[allow(dead_code)]
fn calibrate_against_clock(cal: Calibration, start: fn() -> u64, stop: fn() -> u64) -> (f64, f64) {
    let mut f: Vec<f64> = Vec::with_capacity(cal.rounds.max(1));
    let round_ns = cal.round.as_nanos() as u64;
    for _ in 0..cal.rounds.max(1) {
        let t0 = clock::now_ns();
        let c0 = start();
        let mut t1 = t0;
        while t1.saturating_sub(t0) < round_ns {
            t1 = clock::now_ns();
        }
        let c1 = stop();
        let t1b = clock::now_ns();
        // The clock is read on both sides of the closing counter read; use the midpoint.
        let mid = t1 + (t1b - t1) / 2;
        f.push((c1.wrapping_sub(c0)) as f64 / ((mid - t0) as f64 / 1e9));
    }
    let med = crate::stats::median(&f).unwrap_or(f64::NAN);
    let (lo, hi) = f
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let spread = (hi - lo) / med * 1e6;
    (med, spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_timer_agrees_with_the_clock() {
        let t = Timer::calibrate(Calibration::QUICK);
        assert!(t.info().freq_hz > 1e6, "{:?}", t.info());
        assert!(t.info().overhead_ns >= 0.0);
        // A 20 ms sleep measures between 15 ms and 2 s on any machine, however noisy.
        let a = t.start();
        std::thread::sleep(Duration::from_millis(20));
        let b = t.stop();
        let ns = t.elapsed_ns(a, b);
        assert!(ns > 15e6 && ns < 2e9, "measured {ns} ns for a 20 ms sleep");
    }

    #[test]
    fn fallback_counts_nanoseconds() {
        let t = Timer::fallback(Calibration::QUICK, "test");
        assert_eq!(t.source(), TimerSource::ClockGettime);
        assert_eq!(t.info().fallback_reason.as_deref(), Some("test"));
        let a = t.start();
        std::thread::sleep(Duration::from_millis(5));
        let b = t.stop();
        assert!(t.elapsed_ns(a, b) >= 4e6);
    }

    #[test]
    fn batches_follow_the_counters_limits() {
        let t = Timer::calibrate(Calibration::QUICK);
        let i = t.info();
        assert!((i.tick_ns - 1e9 / i.freq_hz).abs() < 1e-9 * i.tick_ns.max(1.0));
        assert!(t.min_batch_ns() >= 1000.0 * i.tick_ns.max(i.resolution_ns) - 1e-6);
        assert!(t.min_batch_ns() >= 100.0 * i.overhead_ns - 1e-6);
        // A 25 MHz counter (Ampere Altra's cntvct_el0): 40 ns ticks, batches of 40 us.
        let slow = TimerInfo {
            source: TimerSource::Cntvct,
            freq_hz: 25e6,
            tick_ns: 40.0,
            resolution_ns: 40.0,
            overhead_ns: 45.0,
            ..i.clone()
        };
        assert_eq!(min_batch_ns(&slow), 40_000.0);
        // A 1 GHz counter with a 20 ns read: the resolution, not the tick, bounds it.
        let fast = TimerInfo {
            freq_hz: 1e9,
            tick_ns: 1.0,
            resolution_ns: 20.0,
            overhead_ns: 30.0,
            ..slow.clone()
        };
        assert_eq!(min_batch_ns(&fast), 20_000.0);
        let mut slow_timer = t.clone();
        slow_timer.info = TimerInfo {
            min_batch_ns: min_batch_ns(&slow),
            ..slow
        };
        assert_eq!(
            slow_timer.batch_ops(2.0, 0.0, 1),
            20_000,
            "40 us of 2 ns loads"
        );
        assert_eq!(
            slow_timer.batch_ops(2.0, 100_000.0, 1),
            50_000,
            "the target wins"
        );
        assert_eq!(slow_timer.batch_ops(1e6, 0.0, 16), 16, "at least");
    }

    #[test]
    fn elapsed_never_negative() {
        let t = Timer::calibrate(Calibration::QUICK);
        assert_eq!(t.elapsed_ns(100, 100), 0.0);
    }
}
