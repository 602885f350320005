//! The crew's rounds: the lockstep discipline of collective copies (the all-to-all of
//! `mem copy-threshold` and `mem alltoall-order`), where a round is done only when every
//! thread is done. A barrier before and after each call; each call timed per thread with
//! the cycle timer; counter evidence of every thread ([`crate::counters`]).

use super::Crew;
use crate::counters::{self, CounterGroup, MeasurementCounters, ThreadCounts};
use crate::pin::SpinBarrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::effort::Budget;

/// The samples of a crew's rounds and the counter evidence of its threads.
#[derive(Debug, Clone)]
pub struct Rounds {
    /// Per-thread sample times in ns, all of the same length.
    pub times: Vec<Vec<f64>>,
    /// The counts of every thread's sampling loop summed (`threads` = the thread count),
    /// from the first attempt undisturbed on every thread, or the least disturbed one.
    pub counters: MeasurementCounters,
}

impl Rounds {
    /// Samples per thread.
    pub fn samples(&self) -> usize {
        self.times.first().map_or(0, Vec::len)
    }
}

impl Crew<'_> {
    /// Runs `work(t)` on every thread of the crew, one call per thread per round, all
    /// threads starting each round together and the round done when the last is; each call
    /// timed with the cycle timer (overhead subtracted). `work(t)` runs once per thread
    /// before timing (warm-up); rounds go on for the budget's time (at least its least,
    /// at most its most rounds).
    ///
    /// Each thread counts its own loop (perf counters are per thread); the counts are
    /// summed, and a disturbance on any thread repeats the whole run, up to
    /// [`counters::DEFAULT_MAX_ATTEMPTS`] runs, judged as the crew judges a window
    /// ([`super::evidence::judge`] over the run: a run-queue wait up to 1 % of it is
    /// tolerated, as it moves a few of hundreds of rounds and not their median; a longer
    /// wait, a migration or a fault repeats it).
    pub fn rounds(&self, budget: Budget, work: &(dyn Fn(usize) + Sync)) -> Rounds {
        let cpus: Vec<usize> = self.seats.iter().map(|s| s.cpu).collect();
        let (times, counters, _) = counters::retry_judged(
            counters::DEFAULT_MAX_ATTEMPTS,
            || {
                let runs = rounds_once(self.timer, &cpus, budget, work);
                let mut times = Vec::with_capacity(runs.len());
                let mut counts = Vec::with_capacity(runs.len());
                for (t, (ns, c)) in runs.into_iter().enumerate() {
                    counts.push(ThreadCounts::measuring(
                        format!("thread {t} (CPU {})", cpus[t]),
                        c,
                    ));
                    times.push(ns);
                }
                (times, counts)
            },
            super::evidence::clean,
        );
        Rounds { times, counters }
    }
}

/// One run of rounds: per thread, its call times and the counts of its loop.
fn rounds_once(
    timer: &crate::timer::Timer,
    cpus: &[usize],
    budget: Budget,
    work: &(dyn Fn(usize) + Sync),
) -> Vec<(Vec<f64>, counters::Counts)> {
    let threads = cpus.len();
    let barrier = SpinBarrier::new(threads);
    let stop = AtomicBool::new(false);
    let per_thread: Vec<(Vec<f64>, counters::Counts)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let cpu = cpus[t];
                let (barrier, stop) = (&barrier, &stop);
                s.spawn(move || {
                    let _ = crate::pin::pin_current(cpu);
                    let mut group = CounterGroup::open_with_timer(timer);
                    work(t);
                    // Touched now: pushing a sample cannot fault inside the counted loop.
                    let mut ns = counters::sample_buffer(budget.max_samples.max(1));
                    let start = Instant::now();
                    let ((), counts) = group.count(|| loop {
                        barrier.wait();
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        let a = timer.start();
                        work(t);
                        let b = timer.stop();
                        ns.push(timer.elapsed_ns(a, b));
                        barrier.wait();
                        if t == 0
                            && ((start.elapsed() >= budget.time && ns.len() >= budget.min_samples)
                                || ns.len() >= budget.max_samples)
                        {
                            stop.store(true, Ordering::Release);
                        }
                    });
                    (ns, counts)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a crew thread of rounds"))
            .collect()
    });
    let n = per_thread.iter().map(|(v, _)| v.len()).min().unwrap_or(0);
    per_thread
        .into_iter()
        .map(|(mut v, c)| {
            v.truncate(n);
            (v, c)
        })
        .collect()
}

/// Per-round throughput in GB/s: `bytes` per round over the slowest thread's time.
pub fn gbs(per_thread: &[Vec<f64>], bytes: f64) -> Vec<f64> {
    let n = per_thread.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| bytes / per_thread.iter().map(|v| v[i]).fold(1e-9, f64::max))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Context;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[test]
    fn every_thread_runs_every_sample() {
        let ctx = Context::quick_local();
        let calls = AtomicUsize::new(0);
        let b = Budget {
            time: Duration::from_millis(5),
            min_samples: 7,
            max_samples: 50,
        };
        let r = Crew::of(&ctx, 2).rounds(b, &|_| {
            calls.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(r.times.len(), 2);
        let n = r.samples();
        assert!((7..=50).contains(&n));
        assert!(r.times.iter().all(|v| v.len() == n));
        let attempts = r.counters.attempts as usize;
        assert!((1..=3).contains(&attempts));
        assert_eq!(r.counters.threads, 2);
        // Each attempt: one warm-up + its samples per thread (earlier attempts may have
        // taken a different number of samples than the kept one).
        assert!(calls.load(Ordering::Relaxed) >= 2 * (n + 1));
        if attempts == 1 {
            assert_eq!(calls.load(Ordering::Relaxed), 2 * (n + 1));
        }
        let g = gbs(&[vec![1.0, 2.0], vec![4.0, 1.0]], 8.0);
        assert_eq!(g, vec![2.0, 4.0]);
    }

    /// Touches `pages` fresh anonymous pages: that many minor faults in the calling thread.
    fn fault_pages(pages: usize) {
        let mut m = memmap2::MmapMut::map_anon(pages * 4096).unwrap();
        for i in 0..pages {
            m[i * 4096] = 1;
        }
        std::hint::black_box(&m);
    }

    #[test]
    fn page_faults_in_a_worker_thread_are_counted_and_flag_the_run() {
        let ctx = Context::quick_local();
        let probe = CounterGroup::open();
        if probe.unavailable().contains_key("minor_faults") {
            crate::testing::unavailable(
                "counters",
                &format!("software counters do not open: {:?}", probe.unavailable()),
            );
            return;
        }
        let b = Budget {
            time: Duration::from_millis(1),
            min_samples: 4,
            max_samples: 4,
        };
        // Thread 1 faults 64 fresh pages in every sample (warm-up included, which is not
        // counted); thread 0 touches nothing new.
        let r = Crew::of(&ctx, 2).rounds(b, &|t| {
            if t == 1 {
                fault_pages(64);
            }
        });
        let c = &r.counters;
        assert_eq!(c.attempts, 3, "every run faults: retried up to the bound");
        assert!(c.disturbed);
        assert_eq!(c.threads, 2);
        let faults = c.counts.minor_faults.unwrap();
        assert!(
            faults >= 4 * 64 * 3 / 4,
            "4 samples x 64 pages in thread 1: {faults}"
        );
        assert!(
            c.disturbances
                .iter()
                .any(|d| d.starts_with("thread 1 ") && d.contains("minor page faults")),
            "{:?}",
            c.disturbances
        );
    }

    #[test]
    fn a_quiet_run_takes_one_attempt_when_nothing_disturbs_it() {
        let ctx = Context::quick_local();
        let b = Budget {
            time: Duration::from_millis(2),
            min_samples: 3,
            max_samples: 20,
        };
        let r = Crew::of(&ctx, 1).rounds(b, &|_| {
            std::hint::black_box((0..1000u64).sum::<u64>());
        });
        // The process may be preempted on a busy machine: then the record says so.
        let c = &r.counters;
        assert_eq!(c.disturbed, !c.disturbances.is_empty());
        if !c.disturbed {
            assert!(c.attempts >= 1 && c.counts.minor_faults.unwrap_or(0) == 0);
        } else {
            assert_eq!(c.attempts, 3);
        }
    }
}
