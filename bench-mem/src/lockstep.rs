//! Pinned threads that run timed samples in lockstep (a barrier before each sample), as
//! the multi-threaded bandwidth and copy benchmarks need.

use bench_core::bench::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// How many samples to take.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Keep sampling at least this long...
    pub time: Duration,
    /// ...and take at least this many samples...
    pub min_samples: usize,
    /// ...but never more than this many.
    pub max_samples: usize,
}

/// Runs `work(t)` on `threads` threads pinned to `ctx.cpus` (round robin), one call per
/// thread per sample, all threads starting each sample together. Each call is timed with
/// the context's cycle timer (overhead subtracted). Returns the per-thread sample times
/// in ns, all of the same length. `work(t)` runs once per thread before timing (warm-up).
pub fn lockstep(
    ctx: &Context,
    threads: usize,
    budget: Budget,
    work: &(dyn Fn(usize) + Sync),
) -> Vec<Vec<f64>> {
    let barrier = Barrier::new(threads);
    let stop = AtomicBool::new(false);
    let timer = &ctx.timer;
    let per_thread: Vec<Vec<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let cpu = ctx.cpus[t % ctx.cpus.len()];
                let (barrier, stop) = (&barrier, &stop);
                s.spawn(move || {
                    let _ = bench_core::pin::pin_current(cpu);
                    work(t);
                    let mut ns = Vec::new();
                    let start = Instant::now();
                    loop {
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
                    }
                    ns
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("lockstep thread"))
            .collect()
    });
    let n = per_thread.iter().map(Vec::len).min().unwrap_or(0);
    per_thread
        .into_iter()
        .map(|mut v| {
            v.truncate(n);
            v
        })
        .collect()
}

/// Per-sample throughput in GB/s: `bytes` per sample over the slowest thread's time.
pub fn gbs(per_thread: &[Vec<f64>], bytes: f64) -> Vec<f64> {
    let n = per_thread.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| bytes / per_thread.iter().map(|v| v[i]).fold(1e-9, f64::max))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_thread_runs_every_sample() {
        let ctx = Context::quick_local();
        let calls = AtomicUsize::new(0);
        let b = Budget {
            time: Duration::from_millis(5),
            min_samples: 7,
            max_samples: 50,
        };
        let r = lockstep(&ctx, 2, b, &|_| {
            calls.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(r.len(), 2);
        let n = r[0].len();
        assert!((7..=50).contains(&n));
        assert_eq!(
            calls.load(Ordering::Relaxed),
            2 * (n + 1),
            "one warm-up + n samples per thread"
        );
        let g = gbs(&[vec![1.0, 2.0], vec![4.0, 1.0]], 8.0);
        assert_eq!(g, vec![2.0, 4.0]);
    }
}
