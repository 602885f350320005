//! The arithmetic of one window: what every thread of a crew recorded (its start, its end
//! and the bytes it had moved at each call boundary) turned into the window's figures.
//! Pure functions of the timings, so the tests can give them any (synthetic) timeline.

use serde::Serialize;

/// What one thread of a crew recorded in one window: its start, and after each call (or
/// batch of calls) the time and the bytes moved since the start. Times are in ns on a
/// clock that every thread shares (the cycle timer converted, or `CLOCK_MONOTONIC_RAW`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// When the thread started its first call of the window, ns.
    pub start_ns: f64,
    /// (time ns, bytes moved since `start_ns`) after each recorded call, in order.
    pub points: Vec<(f64, u64)>,
}

impl Trace {
    /// When the thread ended its last call (its start when it made none), ns.
    pub fn end_ns(&self) -> f64 {
        self.points.last().map_or(self.start_ns, |p| p.0)
    }

    /// Bytes moved over the whole window.
    pub fn bytes(&self) -> u64 {
        self.points.last().map_or(0, |p| p.1)
    }

    /// The thread's own rate over its own time, GB/s (bytes / ns); 0 when it ran no call.
    pub fn rate_gbs(&self) -> f64 {
        let d = self.end_ns() - self.start_ns;
        if d > 0.0 {
            self.bytes() as f64 / d
        } else {
            0.0
        }
    }

    /// Bytes moved by time `t`, linear between call boundaries (the thread moves its bytes
    /// evenly inside a call); 0 before its start, all of them after its end.
    pub fn bytes_at(&self, t: f64) -> f64 {
        let mut prev = (self.start_ns, 0u64);
        for &(pt, pb) in &self.points {
            if t <= pt {
                let span = pt - prev.0;
                if span <= 0.0 {
                    return pb as f64;
                }
                let f = ((t - prev.0) / span).clamp(0.0, 1.0);
                return prev.1 as f64 + f * (pb - prev.1) as f64;
            }
            prev = (pt, pb);
        }
        prev.1 as f64
    }
}

/// How far the window aggregate and the sum of the threads' own rates may differ before
/// the window is taken as one in which the threads did not run together.
pub const OVERLAP_TOLERANCE: f64 = 0.03;

/// The figures of one window of a crew (every rate in GB/s, GB = 1e9 bytes, of the bytes
/// the members count).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowFigure {
    /// The bytes all measuring threads moved inside the common window (from the last start
    /// to the first end: every thread ran throughout) over its length: the figure the
    /// all-thread keys publish (as MLC and likwid-bench report peak bandwidth).
    pub aggregate_gbs: f64,
    /// The sum of each thread's bytes over its own time.
    pub sum_of_rates_gbs: f64,
    /// The bulk-synchronous figure: threads x the slowest thread's rate (equal work per
    /// thread, done when the slowest is done; what a lockstep sample measures).
    pub bulk_sync_gbs: f64,
    /// The slowest thread's rate over the mean rate (1 = every thread moved as much).
    pub spread_ratio: f64,
    /// Last start - first start, ns.
    pub start_skew_ns: f64,
    /// Last end - first end, ns.
    pub stop_skew_ns: f64,
    /// The measuring thread (index in thread order) that started last, `start_skew_ns`
    /// after the first.
    pub last_starter: usize,
    /// The measuring thread that ended first, `stop_skew_ns` before the last.
    pub first_stopper: usize,
    /// Length of the common window, ns.
    pub common_ns: f64,
    /// Each measuring thread's own rate, in thread order.
    pub thread_gbs: Vec<f64>,
    /// Bytes all measuring threads moved, each over its own time.
    pub bytes: u64,
    /// `aggregate_gbs / sum_of_rates_gbs - 1`: within [`OVERLAP_TOLERANCE`] when the threads
    /// ran together at steady rates.
    pub overlap_error: f64,
    /// What disturbed the window (a thread preempted or waiting on its run queue, a fault,
    /// stolen time), one phrase each; empty when nothing was seen.
    pub disturbances: Vec<String>,
}

impl WindowFigure {
    /// The figures of the traces of the measuring threads; `None` when no thread moved a
    /// byte or the threads never all ran at once.
    pub fn of(traces: &[Trace]) -> Option<WindowFigure> {
        if traces.is_empty() || traces.iter().all(|t| t.bytes() == 0) {
            return None;
        }
        let first_start = traces
            .iter()
            .map(|t| t.start_ns)
            .fold(f64::INFINITY, f64::min);
        let last_start = traces
            .iter()
            .map(|t| t.start_ns)
            .fold(f64::NEG_INFINITY, f64::max);
        let first_end = traces
            .iter()
            .map(Trace::end_ns)
            .fold(f64::INFINITY, f64::min);
        let last_end = traces
            .iter()
            .map(Trace::end_ns)
            .fold(f64::NEG_INFINITY, f64::max);
        let common = first_end - last_start;
        // The first thread of the latest start and of the earliest end.
        let index_of =
            |get: fn(&Trace) -> f64, v: f64| traces.iter().position(|t| get(t) == v).unwrap_or(0);
        let last_starter = index_of(|t| t.start_ns, last_start);
        let first_stopper = index_of(Trace::end_ns, first_end);
        if common <= 0.0 {
            return None;
        }
        let inside: f64 = traces
            .iter()
            .map(|t| t.bytes_at(first_end) - t.bytes_at(last_start))
            .sum();
        let rates: Vec<f64> = traces.iter().map(Trace::rate_gbs).collect();
        let sum: f64 = rates.iter().sum();
        let n = rates.len() as f64;
        let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let mean = sum / n;
        let aggregate = inside / common;
        Some(WindowFigure {
            aggregate_gbs: aggregate,
            sum_of_rates_gbs: sum,
            bulk_sync_gbs: n * slowest,
            spread_ratio: if mean > 0.0 { slowest / mean } else { 0.0 },
            start_skew_ns: last_start - first_start,
            stop_skew_ns: last_end - first_end,
            last_starter,
            first_stopper,
            common_ns: common,
            thread_gbs: rates,
            bytes: traces.iter().map(Trace::bytes).sum(),
            overlap_error: if sum > 0.0 {
                aggregate / sum - 1.0
            } else {
                1.0
            },
            disturbances: Vec::new(),
        })
    }

    /// True when the threads ran together: the aggregate within [`OVERLAP_TOLERANCE`] of
    /// the sum of their rates.
    pub fn overlapped(&self) -> bool {
        self.overlap_error.abs() <= OVERLAP_TOLERANCE
    }

    /// True when the window can stand for the figure: undisturbed, and the threads ran
    /// together.
    pub fn clean(&self) -> bool {
        self.disturbances.is_empty() && self.overlapped()
    }

    /// The share of the window lost to skew: (start skew + stop skew) / the common window.
    pub fn skew_share(&self) -> f64 {
        (self.start_skew_ns + self.stop_skew_ns) / self.common_ns.max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that starts at `start`, moves `gbs` GB/s (bytes per ns) in calls of
    /// `call_ns` until `end`.
    fn steady(start: f64, end: f64, gbs: f64, call_ns: f64) -> Trace {
        let mut points = Vec::new();
        let mut t = start;
        while t + call_ns <= end + 1e-9 {
            t += call_ns;
            points.push((t, ((t - start) * gbs).round() as u64));
        }
        Trace {
            start_ns: start,
            points,
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn threads_that_run_together_give_the_sum_of_their_rates() {
        let t = vec![
            steady(0.0, 40e6, 10.0, 100e3),
            steady(0.0, 40e6, 10.0, 100e3),
        ];
        let w = WindowFigure::of(&t).unwrap();
        assert!(close(w.aggregate_gbs, 20.0, 1e-6), "{w:?}");
        assert!(close(w.sum_of_rates_gbs, 20.0, 1e-6));
        assert!(close(w.bulk_sync_gbs, 20.0, 1e-6));
        assert!(close(w.spread_ratio, 1.0, 1e-9));
        assert_eq!(w.start_skew_ns, 0.0);
        assert_eq!(w.stop_skew_ns, 0.0);
        assert!(w.overlapped() && w.clean());
    }

    #[test]
    fn a_late_starter_and_an_early_stopper_bound_the_common_window() {
        // Thread 1 starts 5 ms late, thread 2 stops 5 ms early: the common window is
        // [5, 35] ms, in which all three ran at 10 GB/s each.
        let t = vec![
            steady(0.0, 40e6, 10.0, 100e3),
            steady(5e6, 40e6, 10.0, 100e3),
            steady(0.0, 35e6, 10.0, 100e3),
        ];
        let w = WindowFigure::of(&t).unwrap();
        assert!(close(w.common_ns, 30e6, 1e-9), "{w:?}");
        assert!(close(w.aggregate_gbs, 30.0, 1e-6), "{w:?}");
        assert!(close(w.start_skew_ns, 5e6, 1e-9));
        assert!(close(w.stop_skew_ns, 5e6, 1e-9));
        assert_eq!((w.last_starter, w.first_stopper), (1, 2));
        // Each ran at 10 GB/s over its own time: the sum agrees, the skew is 1/3 of it.
        assert!(w.overlapped());
        assert!(close(w.skew_share(), 10.0 / 30.0, 1e-9));
    }

    #[test]
    fn a_thread_alone_at_the_edges_inflates_its_own_rate_not_the_aggregate() {
        // Thread 0 runs alone for the first 20 ms at 20 GB/s, then beside thread 1 at 10;
        // the common window [20, 40] ms moved 20 GB/s in all.
        let mut a = steady(0.0, 20e6, 20.0, 100e3);
        let b0 = a.bytes();
        a.points.extend(
            steady(20e6, 40e6, 10.0, 100e3)
                .points
                .into_iter()
                .map(|(t, b)| (t, b0 + b)),
        );
        let b = steady(20e6, 40e6, 10.0, 100e3);
        let w = WindowFigure::of(&[a, b]).unwrap();
        assert!(close(w.aggregate_gbs, 20.0, 1e-6), "{w:?}");
        // Thread 0's own rate is 15 GB/s: the sum (25) says they did not run together.
        assert!(close(w.sum_of_rates_gbs, 25.0, 1e-6));
        assert!(!w.overlapped() && !w.clean());
        assert!(close(w.spread_ratio, 10.0 / 12.5, 1e-6));
        assert!(close(w.bulk_sync_gbs, 20.0, 1e-6));
    }

    #[test]
    fn bytes_are_interpolated_inside_a_call() {
        let t = Trace {
            start_ns: 100.0,
            points: vec![(200.0, 1000), (300.0, 3000)],
        };
        assert_eq!(t.bytes_at(50.0), 0.0);
        assert_eq!(t.bytes_at(150.0), 500.0);
        assert_eq!(t.bytes_at(250.0), 2000.0);
        assert_eq!(t.bytes_at(400.0), 3000.0);
        assert!(close(t.rate_gbs(), 15.0, 1e-12));
        assert_eq!(t.end_ns(), 300.0);
    }

    #[test]
    fn unequal_threads_give_a_spread_and_a_lower_bulk_synchronous_figure() {
        let t = vec![steady(0.0, 40e6, 12.0, 1e5), steady(0.0, 40e6, 6.0, 1e5)];
        let w = WindowFigure::of(&t).unwrap();
        assert!(close(w.aggregate_gbs, 18.0, 1e-6));
        assert!(close(w.bulk_sync_gbs, 12.0, 1e-6));
        assert!(close(w.spread_ratio, 6.0 / 9.0, 1e-6));
        assert_eq!(w.thread_gbs.len(), 2);
    }

    #[test]
    fn no_bytes_or_no_common_time_is_no_figure() {
        assert!(WindowFigure::of(&[]).is_none());
        let idle = Trace {
            start_ns: 0.0,
            points: vec![(10.0, 0)],
        };
        assert!(WindowFigure::of(&[idle]).is_none());
        // One thread ended before the other started.
        let t = vec![steady(0.0, 1e6, 10.0, 1e5), steady(2e6, 3e6, 10.0, 1e5)];
        assert!(WindowFigure::of(&t).is_none());
    }

    #[test]
    fn a_disturbance_makes_a_window_unclean() {
        let mut w = WindowFigure::of(&[steady(0.0, 1e6, 1.0, 1e4)]).unwrap();
        assert!(w.clean());
        w.disturbances
            .push("thread 0 (CPU 0): 1 context switch".into());
        assert!(!w.clean());
    }
}
