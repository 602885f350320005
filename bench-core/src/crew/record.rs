//! What a windowed crew ran, and what a family publishes of it: the figure (the median of
//! the undisturbed windows' aggregates), its noisy flag, the counter record and the
//! parameters and method a measurement carries.

use super::window::WindowFigure;
use super::{Seat, WindowPlan};
use crate::counters::{Counts, MeasurementCounters, ThreadCounts};
use crate::params::Warning;
use crate::stats::Distribution;
use serde_json::json;

/// The share of a window the threads' start and stop skew may take before the run says so.
pub const MAX_SKEW_SHARE: f64 = 0.01;

/// Most left-out windows named one by one in a measurement's parameters.
const NAMED_LEFT_OUT: usize = 8;

/// One window as run.
#[derive(Debug, Clone)]
pub struct WindowRecord {
    /// Its figures (`None`: no measuring thread moved a byte, or they never ran at once).
    pub figure: Option<WindowFigure>,
    /// What disturbed it (empty: nothing seen), every thread's and the stolen time.
    pub disturbances: Vec<String>,
    /// Time the hypervisor stole from the crew's CPUs, one phrase per CPU.
    pub stolen: Vec<String>,
    /// Each thread's counts, in thread order.
    pub seen: Vec<Counts>,
}

impl WindowRecord {
    /// Each thread's counts as [`ThreadCounts`] (measuring or helper, by its seat), the
    /// stolen time on the first: for a caller that counts a window beside its own thread.
    pub fn thread_counts(&self, seats: &[Seat]) -> Vec<ThreadCounts> {
        seats
            .iter()
            .zip(&self.seen)
            .enumerate()
            .map(|(t, (s, c))| {
                let label = format!("thread {t} (CPU {})", s.cpu);
                let mut tc = if s.measuring {
                    ThreadCounts::measuring(label, c.clone())
                } else {
                    ThreadCounts::helper(label, c.clone())
                };
                if t == 0 {
                    tc.also = self.stolen.clone();
                }
                tc
            })
            .collect()
    }
}

/// The windows of one crew run.
#[derive(Debug, Clone)]
pub struct Windows {
    plan: WindowPlan,
    seats: Vec<Seat>,
    records: Vec<WindowRecord>,
}

impl Windows {
    pub(crate) fn new(plan: WindowPlan, seats: &[Seat], records: Vec<WindowRecord>) -> Windows {
        Windows {
            plan,
            seats: seats.to_vec(),
            records,
        }
    }

    /// Windows run.
    pub fn run(&self) -> usize {
        self.records.len()
    }

    /// Every window, in order.
    pub fn records(&self) -> &[WindowRecord] {
        &self.records
    }

    /// The crew's seats, in thread order.
    pub fn seats(&self) -> &[Seat] {
        &self.seats
    }

    /// The plan the windows followed.
    pub fn plan(&self) -> WindowPlan {
        self.plan
    }

    /// Undisturbed windows in which the threads ran together.
    pub fn clean_count(&self) -> usize {
        self.figures().filter(|f| f.clean()).count()
    }

    fn figures(&self) -> impl Iterator<Item = &WindowFigure> {
        self.records.iter().filter_map(|r| r.figure.as_ref())
    }

    /// The indices of the windows the figure stands on (see [`Windows::used`]).
    pub fn used_windows(&self) -> Vec<usize> {
        let clean: Vec<usize> = (0..self.records.len())
            .filter(|&i| self.records[i].figure.as_ref().is_some_and(|f| f.clean()))
            .collect();
        if !clean.is_empty() {
            return clean;
        }
        (0..self.records.len())
            .filter(|&i| self.records[i].figure.is_some())
            .collect()
    }

    /// The windows the figure stands on: the clean ones, or every window with a figure
    /// when none is clean.
    pub fn used(&self) -> Vec<&WindowFigure> {
        self.used_windows()
            .into_iter()
            .filter_map(|i| self.records[i].figure.as_ref())
            .collect()
    }

    /// Why the figure is noisy: no window was undisturbed with its threads running
    /// together, so it stands on disturbed windows (`None`: it does not).
    pub fn noisy(&self) -> Option<String> {
        if self.clean_count() > 0 || self.records.is_empty() {
            return None;
        }
        let disturbed = self
            .records
            .iter()
            .filter(|r| !r.disturbances.is_empty())
            .count();
        let apart = self
            .figures()
            .filter(|f| f.disturbances.is_empty() && !f.overlapped())
            .count();
        let mut why = Vec::new();
        if disturbed > 0 {
            let first = self
                .records
                .iter()
                .find_map(|r| r.disturbances.first())
                .cloned()
                .unwrap_or_default();
            why.push(format!("{disturbed} disturbed (first: {first})"));
        }
        if apart > 0 {
            why.push(format!(
                "{apart} whose threads did not run together (aggregate and sum of rates > 3 % apart)"
            ));
        }
        Some(format!(
            "no clean window in {}: {}",
            self.records.len(),
            why.join("; ")
        ))
    }

    fn distribution(&self, get: impl Fn(&WindowFigure) -> f64) -> Option<Distribution> {
        let v: Vec<f64> = self.used().into_iter().map(get).collect();
        Distribution::from_samples(&v)
    }

    /// The window aggregates (GB/s) of the used windows.
    pub fn aggregate(&self) -> Option<Distribution> {
        self.distribution(|f| f.aggregate_gbs)
    }

    /// The bulk-synchronous figures (threads x the slowest rate, GB/s) of the used windows.
    pub fn bulk_sync(&self) -> Option<Distribution> {
        self.distribution(|f| f.bulk_sync_gbs)
    }

    /// Every measuring thread's own rate (GB/s) in every used window.
    pub fn per_thread(&self) -> Option<Distribution> {
        let v: Vec<f64> = self
            .used()
            .into_iter()
            .flat_map(|f| f.thread_gbs.iter().copied())
            .collect();
        Distribution::from_samples(&v)
    }

    /// Each measuring thread's median rate (GB/s) over the used windows, in thread order.
    pub fn thread_p50s(&self) -> Vec<f64> {
        let used = self.used();
        let threads = used.first().map_or(0, |f| f.thread_gbs.len());
        (0..threads)
            .filter_map(|t| {
                let v: Vec<f64> = used
                    .iter()
                    .filter_map(|f| f.thread_gbs.get(t))
                    .copied()
                    .collect();
                crate::stats::median(&v)
            })
            .collect()
    }

    /// The counter record of the used windows: each thread's counts summed over them;
    /// `attempts` = windows run; disturbed (with what) when the figure is noisy.
    pub fn counters(&self) -> MeasurementCounters {
        let used = self.used_windows();
        let threads: Vec<ThreadCounts> = self
            .seats
            .iter()
            .enumerate()
            .map(|(t, s)| {
                let counts = Counts::sum(used.iter().filter_map(|&i| self.records[i].seen.get(t)));
                let label = format!("thread {t} (CPU {})", s.cpu);
                if s.measuring {
                    ThreadCounts::measuring(label, counts)
                } else {
                    ThreadCounts::helper(label, counts)
                }
            })
            .collect();
        let mut c = MeasurementCounters::from_threads(&threads, self.records.len() as u32);
        c.disturbed = self.noisy().is_some();
        c.disturbances = if c.disturbed {
            used.iter()
                .flat_map(|&i| self.records[i].disturbances.iter().cloned())
                .take(NAMED_LEFT_OUT)
                .collect()
        } else {
            Vec::new()
        };
        c
    }

    /// The windows for a measurement's parameters (`crew`): length, counts, what was left
    /// out and why, each used window's aggregate, sum of rates and bulk-synchronous
    /// figure, the worst spread, skew and overlap error.
    pub fn parameters(&self) -> serde_json::Value {
        let used = self.used();
        let list = |get: fn(&WindowFigure) -> f64| -> Vec<f64> {
            used.iter().map(|f| round3(get(f))).collect()
        };
        let worst = |get: fn(&WindowFigure) -> f64| -> f64 {
            used.iter().map(|f| get(f)).fold(0.0, f64::max)
        };
        let left_out: Vec<serde_json::Value> = self
            .records
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.figure.as_ref().is_some_and(|f| f.clean()))
            .take(NAMED_LEFT_OUT)
            .map(|(i, r)| {
                let why = match &r.figure {
                    None => vec!["no bytes moved while all threads ran".to_string()],
                    Some(f) if r.disturbances.is_empty() => vec![format!(
                        "threads did not run together: aggregate {:.3} vs sum of rates {:.3} GB/s",
                        f.aggregate_gbs, f.sum_of_rates_gbs
                    )],
                    Some(_) => r.disturbances.clone(),
                };
                json!({"window": i, "why": why})
            })
            .collect();
        let cpus = |measuring: bool| -> Vec<usize> {
            self.seats
                .iter()
                .filter(|s| s.measuring == measuring)
                .map(|s| s.cpu)
                .collect()
        };
        json!({
            "window_ms": self.plan.window.as_secs_f64() * 1e3,
            "windows_wanted": self.plan.windows,
            "windows_run": self.records.len(),
            "windows_used": used.len(),
            "windows_clean": self.clean_count(),
            "left_out": left_out,
            "aggregate_gbs": list(|f| f.aggregate_gbs),
            "sum_of_rates_gbs": list(|f| f.sum_of_rates_gbs),
            "bulk_sync_gbs": list(|f| f.bulk_sync_gbs),
            "spread_ratio_min": round3(used.iter().map(|f| f.spread_ratio).fold(f64::INFINITY, f64::min).min(1.0)),
            "start_skew_us_max": round3(worst(|f| f.start_skew_ns) / 1e3),
            "stop_skew_us_max": round3(worst(|f| f.stop_skew_ns) / 1e3),
            "skew_share_max": round3(worst(WindowFigure::skew_share)),
            "overlap_error_max": round3(worst(|f| f.overlap_error.abs())),
            "run_queue_wait_us_max": round3(self.used_windows().iter().flat_map(|&i| self.records[i].seen.iter()).filter_map(|c| c.run_queue_wait_ns).max().unwrap_or(0) as f64 / 1e3),
            "cpus": cpus(true),
            "helper_cpus": cpus(false),
            "noisy": self.noisy(),
        })
    }

    /// How the figure was taken, for a measurement's method.
    pub fn method(&self) -> String {
        let threads = self.seats.iter().filter(|s| s.measuring).count();
        format!(
            "{threads} pinned thread(s) released together into windows of {} ms (a spinning barrier) and stopped together; a window's figure = the bytes all threads moved inside the time all of them ran (last start to first end, interpolated inside a call) / that time; p50 over the undisturbed windows ({} of {} run; a window in which a thread waited on its run queue for more than 1 % of it, migrated or faulted, or time was stolen from a CPU, or whose aggregate and sum of per-thread rates differ by > 3 %, is left out; with none left, every window, flagged noisy); the bulk-synchronous figure (threads x the slowest thread's rate) and the spread are in `crew`; GB = 1e9 B",
            trim_ms(self.plan.window.as_secs_f64() * 1e3),
            self.used().len(),
            self.records.len()
        )
    }

    /// The run warnings of these windows on `target` for measurement `id`: a window whose
    /// threads did not run together (the aggregate's self-check), and a noisy figure.
    pub fn warnings(&self, target: &str, id: &str) -> Vec<Warning> {
        let mut v = Vec::new();
        // A disturbed window explains itself; an undisturbed one whose threads did not run
        // together is the self-check failing.
        let apart = self
            .figures()
            .filter(|f| f.disturbances.is_empty() && !f.overlapped())
            .count();
        if apart > 0 {
            v.push(Warning {
                code: "crew_overlap".into(),
                message: format!(
                    "{target}: {id}: in {apart} of {} window(s) the aggregate and the sum of the threads' own rates were more than 3 % apart (the threads did not run together); those windows were retried and left out",
                    self.records.len()
                ),
                remediation: "keep other work off the measuring CPUs (isolcpus, a quiet machine) and compare the bulk-synchronous figure in the measurement's `crew`".into(),
            });
        }
        if let Some(w) = self.skew_warning(target, id) {
            v.push(w);
        }
        if let Some(why) = self.noisy() {
            v.push(Warning {
                code: "noisy".into(),
                message: format!("{target}: {id}: noisy figure: {why}"),
                remediation: "rerun on a quiet machine (no other load on the measuring CPUs; on a VM, pinned vCPUs without overcommit); `check` can refuse noisy keys".into(),
            });
        }
        v
    }

    /// The `crew_skew` warning when, in a window the figure stands on, the threads' start
    /// and stop skew took more than [`MAX_SKEW_SHARE`] of the time they all ran: which
    /// thread started how late (and which stopped how early) in the worst of them, in
    /// time, and for how long all ran together.
    fn skew_warning(&self, target: &str, id: &str) -> Option<Warning> {
        let used = self.used();
        let over = used
            .iter()
            .filter(|f| f.skew_share() > MAX_SKEW_SHARE)
            .count();
        let worst = used
            .iter()
            .copied()
            .filter(|f| f.skew_share() > MAX_SKEW_SHARE)
            .max_by(|a, b| a.skew_share().total_cmp(&b.skew_share()))?;
        let measuring: Vec<usize> = self
            .seats
            .iter()
            .filter(|s| s.measuring)
            .map(|s| s.cpu)
            .collect();
        let thread = |i: usize| match measuring.get(i) {
            Some(cpu) => format!("thread on CPU {cpu}"),
            None => "a thread".to_string(),
        };
        // The larger of the start and the stop skew leads; the other is named where it
        // took a quarter of the skew or more.
        let start = (
            worst.start_skew_ns,
            thread(worst.last_starter),
            format!("started {} late", time_text(worst.start_skew_ns)),
        );
        let stop = (
            worst.stop_skew_ns,
            thread(worst.first_stopper),
            format!("stopped {} early", time_text(worst.stop_skew_ns)),
        );
        let (main, other) = if start.0 >= stop.0 {
            (start, stop)
        } else {
            (stop, start)
        };
        let also = if other.0 >= (main.0 + other.0) / 4.0 {
            format!(" ({} {})", other.1, other.2)
        } else {
            String::new()
        };
        Some(Warning {
            code: "crew_skew".into(),
            message: format!(
                "{target}: {id}: {} {} in a {} ms window, so all threads ran together for {} of it{also}; {} of {} window(s) lost more than {:.0} % to skew",
                main.1,
                main.2,
                trim_ms(self.plan.window.as_secs_f64() * 1e3),
                time_text(worst.common_ns),
                over,
                used.len(),
                MAX_SKEW_SHARE * 100.0
            ),
            remediation: "the aggregate counts only the time all threads ran, so the figure stands; compare `crew.start_skew_us_max` and `stop_skew_us_max` and keep other work off the measuring CPUs".into(),
        })
    }
}

/// A time for people: `850 ns`, `240 us`, `1.3 ms`, `2.0 s`.
fn time_text(ns: f64) -> String {
    let ns = ns.max(0.0);
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.0} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.1} s", ns / 1e9)
    }
}

fn round3(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

fn trim_ms(ms: f64) -> String {
    if (ms - ms.round()).abs() < 1e-9 {
        format!("{}", ms.round() as u64)
    } else {
        format!("{ms:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crew::window::Trace;
    use std::time::Duration;

    fn steady(start: f64, end: f64, gbs: f64) -> Trace {
        let points = (1..=100)
            .map(|i| {
                let t = start + (end - start) * i as f64 / 100.0;
                (t, ((t - start) * gbs) as u64)
            })
            .collect();
        Trace {
            start_ns: start,
            points,
        }
    }

    fn record(gbs: f64, disturbed: bool) -> WindowRecord {
        let mut f = WindowFigure::of(&[steady(0.0, 1e7, gbs), steady(0.0, 1e7, gbs)]).unwrap();
        let why = if disturbed {
            vec!["thread 1 (CPU 1): 40 us on its run queue".to_string()]
        } else {
            vec![]
        };
        f.disturbances = why.clone();
        WindowRecord {
            figure: Some(f),
            disturbances: why,
            stolen: vec![],
            seen: vec![Counts::default(), Counts::default()],
        }
    }

    fn windows(records: Vec<WindowRecord>) -> Windows {
        let seats = [
            Seat {
                cpu: 0,
                measuring: true,
            },
            Seat {
                cpu: 1,
                measuring: true,
            },
        ];
        let plan = WindowPlan {
            window: Duration::from_millis(40),
            windows: 3,
            max_windows: 9,
        };
        Windows::new(plan, &seats, records)
    }

    #[test]
    fn the_figure_stands_on_clean_windows_only() {
        // A disturbed window at a quarter of the speed is left out, never the worst sample.
        let w = windows(vec![
            record(10.0, false),
            record(2.5, true),
            record(11.0, false),
            record(10.5, false),
        ]);
        assert_eq!(w.clean_count(), 3);
        assert!(w.noisy().is_none());
        let d = w.aggregate().unwrap();
        assert_eq!(d.n, 3);
        assert!(d.min >= 19.9 && d.p50 > 20.0, "{d:?}");
        let p = w.parameters();
        assert_eq!(p["windows_run"], 4);
        assert_eq!(p["windows_used"], 3);
        assert_eq!(p["left_out"][0]["window"], 1);
        assert!(p["left_out"][0]["why"][0]
            .as_str()
            .unwrap()
            .contains("run queue"));
        assert!(!w.counters().disturbed);
        assert_eq!(w.counters().attempts, 4);
        assert!(w.warnings("anon", "x").is_empty());
        assert!(w.method().contains("3 of 4 run"), "{}", w.method());
    }

    #[test]
    fn with_no_clean_window_the_figure_is_the_median_of_all_and_noisy() {
        let w = windows(vec![
            record(10.0, true),
            record(2.0, true),
            record(9.0, true),
        ]);
        let why = w.noisy().expect("noisy");
        assert!(
            why.contains("no clean window in 3") && why.contains("3 disturbed"),
            "{why}"
        );
        let d = w.aggregate().unwrap();
        assert!(
            (d.p50 - 18.0).abs() < 0.2,
            "the median, not the worst: {d:?}"
        );
        let c = w.counters();
        assert!(c.disturbed && !c.disturbances.is_empty());
        let codes: Vec<String> = w
            .warnings("anon", "x")
            .into_iter()
            .map(|w| w.code)
            .collect();
        assert_eq!(codes, vec!["noisy".to_string()]);
        assert_eq!(w.parameters()["noisy"].as_str(), Some(why.as_str()));
    }

    #[test]
    fn per_thread_rates_and_their_medians() {
        let w = windows(vec![record(4.0, false), record(6.0, false)]);
        assert_eq!(w.per_thread().unwrap().n, 4);
        let p = w.thread_p50s();
        assert_eq!(p.len(), 2);
        assert!((p[0] - 5.0).abs() < 0.1, "{p:?}");
        assert!((w.bulk_sync().unwrap().p50 - 10.0).abs() < 2.1);
    }

    #[test]
    fn a_late_thread_is_named_with_its_cpu_and_how_late_in_time() {
        // The second thread (CPU 6) starts 1.3 ms after the first (CPU 4) in a 40 ms
        // window: 3.4 % of the 38.7 ms they ran together.
        let f = WindowFigure::of(&[steady(0.0, 40e6, 10.0), steady(1.3e6, 40e6, 10.0)]).unwrap();
        let rec = WindowRecord {
            figure: Some(f),
            disturbances: vec![],
            stolen: vec![],
            seen: vec![Counts::default(), Counts::default()],
        };
        let seats = [4, 6].map(|cpu| Seat {
            cpu,
            measuring: true,
        });
        let plan = WindowPlan {
            window: Duration::from_millis(40),
            windows: 3,
            max_windows: 9,
        };
        let w = Windows::new(plan, &seats, vec![rec, record(10.0, false)]);
        let skew: Vec<Warning> = w
            .warnings("anon", "mem.bandwidth/anon/read/2t/136M")
            .into_iter()
            .filter(|w| w.code == "crew_skew")
            .collect();
        assert_eq!(skew.len(), 1, "{skew:?}");
        let m = &skew[0].message;
        assert!(
            m.starts_with(
                "anon: mem.bandwidth/anon/read/2t/136M: thread on CPU 6 started 1.3 ms late \
                 in a 40 ms window, so all threads ran together for 38.7 ms of it"
            ),
            "{m}"
        );
        assert!(
            m.ends_with("; 1 of 2 window(s) lost more than 1 % to skew"),
            "{m}"
        );
        assert!(!m.contains("stopped"), "no stop skew here: {m}");
        // One that stops early is named too, and no share of a window over 100 % is (all
        // ran together for 10 of the 40 ms).
        let f = WindowFigure::of(&[steady(0.0, 40e6, 10.0), steady(0.0, 10e6, 10.0)]).unwrap();
        let rec = WindowRecord {
            figure: Some(f),
            ..record(1.0, false)
        };
        let w = Windows::new(plan, &seats, vec![rec]);
        let m = &w.warnings("anon", "x")[0].message;
        assert!(
            m.contains(
                "thread on CPU 6 stopped 30.0 ms early in a 40 ms window, so all threads \
                 ran together for 10.0 ms of it;"
            ),
            "{m}"
        );
        assert!(!m.contains('%') || m.contains("more than 1 %"), "{m}");
        // Both edges: the larger leads, the other follows in parentheses.
        let f = WindowFigure::of(&[steady(0.0, 38.5e6, 10.0), steady(2e6, 40e6, 10.0)]).unwrap();
        let rec = WindowRecord {
            figure: Some(f),
            ..record(1.0, false)
        };
        let w = Windows::new(plan, &seats, vec![rec]);
        let m = &w.warnings("anon", "x")[0].message;
        assert!(
            m.contains(
                "thread on CPU 6 started 2.0 ms late in a 40 ms window, so all threads ran \
                 together for 36.5 ms of it (thread on CPU 4 stopped 1.5 ms early);"
            ),
            "{m}"
        );
    }
}
