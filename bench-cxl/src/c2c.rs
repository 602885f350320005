//! `pool.c2c`: core-to-core latency matrix. For every pair of the run's CPUs, two pinned
//! threads bounce one cache line that lives in the target region:
//!
//! * **CAS**: the first thread waits for the line to hold `2k` and CASes it to `2k+1`,
//!   the second waits for `2k+1` and CASes it to `2k+2` (each wait spins on
//!   compare-and-swap, as core-to-core-latency does: `lock cmpxchg`, or on AArch64 LSE
//!   `casal` where the CPU has it, else an `ldaxr`/`stlxr` loop, [`bench_core::rmw`]);
//! * **flag**: the same with plain loads and stores (multichase `pingpong -u`).
//!
//! Convention: **one-way** latency = round-trip time / 2 (core-to-core-latency and
//! multichase pingpong both report one transfer of the line, not the round trip).

use crate::measurement;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::counters::{self, CounterGroup, MeasurementCounters, ThreadCounts};
use bench_core::rmw::{Rmw, RmwOp};
use bench_core::stats::{median, Distribution};
use std::sync::atomic::{AtomicU64, Ordering};

/// Ping-pong kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingPong {
    /// compare-exchange on both sides.
    Cas,
    /// plain load / store on both sides.
    Flag,
}

impl PingPong {
    /// Name in keys and ids.
    pub fn name(self) -> &'static str {
        match self {
            PingPong::Cas => "cas",
            PingPong::Flag => "flag",
        }
    }

    /// The instructions each hand-over issues on this CPU.
    pub fn instruction(self) -> &'static str {
        match self {
            PingPong::Cas => Rmw::native().instruction(RmwOp::Cas),
            PingPong::Flag => "plain 8-byte load and store (acquire / release)",
        }
    }
}

/// The core-to-core benchmark.
#[derive(Debug, Clone, Default)]
pub struct C2cBench;

const STOP: u64 = u64::MAX;

/// Waits until `line` holds `want`, then writes `next` (by CAS with `rmw`, or by store).
/// Returns false when the line holds STOP.
#[inline(always)]
fn hand_over(line: &AtomicU64, (kind, rmw): (PingPong, Rmw), want: u64, next: u64) -> bool {
    match kind {
        PingPong::Cas => loop {
            match rmw.cas(line, want, next) {
                v if v == want => return true,
                STOP => return false,
                _ => std::hint::spin_loop(),
            }
        },
        PingPong::Flag => loop {
            let v = line.load(Ordering::Acquire);
            if v == want {
                line.store(next, Ordering::Release);
                return true;
            }
            if v == STOP {
                return false;
            }
            std::hint::spin_loop();
        },
    }
}

/// One-way latencies (ns) of `samples` samples of `trips` round trips between the
/// current thread (pinned to `a`) and a thread pinned to `b`, on `line`, with the counter
/// evidence: the current thread's sampling loop is counted (per one-way transfer), the
/// partner's loop too (a helper: a disturbance on either side repeats the measurement, up
/// to [`counters::DEFAULT_MAX_ATTEMPTS`] attempts). A sample is at least the timer's
/// shortest batch ([`bench_core::timer::Timer::batch_ops`], from the timed warm-up):
/// the round trips per sample actually run are returned with the samples.
pub fn ping_pong(
    ctx: &Context,
    line: &AtomicU64,
    kind: PingPong,
    a: usize,
    b: usize,
    samples: usize,
    trips: u64,
) -> Result<(Vec<f64>, MeasurementCounters, u64), Skip> {
    bench_core::pin::pin_current(a).map_err(|e| Skip::new(format!("pinning to CPU {a}: {e}")))?;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let mut v = counters::sample_buffer(samples);
    let out = counters::try_retry_undisturbed(counters::DEFAULT_MAX_ATTEMPTS, || {
        ping_pong_once(ctx, &mut group, &mut v, line, kind, (a, b), samples, trips)
            .map(|(v, threads, t)| ((v.clone(), t), threads))
    });
    let _ = bench_core::pin::pin_current(ctx.cpus[0]);
    let ((v, trips), c) = out?;
    let c = c.with_per_op("transfer", 2 * trips * samples as u64);
    Ok((v, c, trips))
}

#[allow(clippy::too_many_arguments)]
fn ping_pong_once<'v>(
    ctx: &Context,
    group: &mut CounterGroup,
    v: &'v mut Vec<f64>,
    line: &AtomicU64,
    kind: PingPong,
    (a, b): (usize, usize),
    samples: usize,
    trips: u64,
) -> Result<(&'v Vec<f64>, Vec<ThreadCounts>, u64), Skip> {
    line.store(0, Ordering::SeqCst);
    v.clear();
    let kind = (kind, Rmw::native());
    let out = std::thread::scope(|s| {
        let responder = s.spawn(move || {
            if bench_core::pin::pin_current(b).is_err() {
                line.store(STOP, Ordering::SeqCst);
                return None;
            }
            let mut g = CounterGroup::open();
            let ((), c) = g.count(|| {
                let mut k = 0u64;
                while hand_over(line, kind, 2 * k + 1, 2 * k + 2) {
                    k += 1;
                }
            });
            Some(c)
        });
        let mut k = 0u64;
        // Warm-up: a tenth of a sample, timed: a sample lasts at least the timer's
        // shortest batch.
        let warm = (trips / 10).max(1);
        let w0 = ctx.timer.start();
        for _ in 0..warm {
            if !hand_over(line, kind, 2 * k, 2 * k + 1) {
                return None;
            }
            k += 1;
        }
        let w1 = ctx.timer.stop();
        let est = ctx.timer.elapsed_ns(w0, w1) / warm as f64;
        let trips = ctx.timer.batch_ops(est, 0.0, trips as usize) as u64;
        let (ok, ours) = group.count(|| {
            for _ in 0..samples {
                let t0 = ctx.timer.start();
                for _ in 0..trips {
                    if !hand_over(line, kind, 2 * k, 2 * k + 1) {
                        return false;
                    }
                    k += 1;
                }
                let t1 = ctx.timer.stop();
                v.push(ctx.timer.elapsed_ns(t0, t1) / (2 * trips) as f64);
            }
            true
        });
        if !ok {
            return None;
        }
        // Let the responder finish its last hand-over, then stop it.
        while line.load(Ordering::Acquire) != 2 * k {
            std::hint::spin_loop();
        }
        line.store(STOP, Ordering::SeqCst);
        let theirs = responder.join().ok().flatten()?;
        let threads = vec![
            ThreadCounts::measuring(format!("CPU {a}"), ours),
            ThreadCounts::helper(format!("partner on CPU {b}"), theirs),
        ];
        Some((threads, trips))
    });
    match out {
        Some((threads, trips)) => Ok((v, threads, trips)),
        None => Err(Skip::new(format!("could not pin a thread to CPU {b}"))),
    }
}

/// Renders a matrix (`a` rows, `b` columns) of one-way latencies, in ns.
pub fn matrix_table(cpus: &[usize], cells: &[(usize, usize, f64)]) -> String {
    let mut s = String::from("     ");
    for c in cpus.iter().skip(1) {
        s += &format!("{c:>8}");
    }
    s.push('\n');
    for (i, r) in cpus.iter().enumerate().take(cpus.len().saturating_sub(1)) {
        s += &format!("{r:>4}:");
        for (j, c) in cpus.iter().enumerate().skip(1) {
            if j <= i {
                s += &format!("{:>8}", "");
            } else {
                let v = cells.iter().find(|x| x.0 == *r && x.1 == *c).map(|x| x.2);
                match v {
                    Some(v) => s += &format!("{v:>8.1}"),
                    None => s += &format!("{:>8}", "-"),
                }
            }
        }
        s.push('\n');
    }
    s
}

impl Benchmark for C2cBench {
    fn name(&self) -> &'static str {
        "pool.c2c"
    }
    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 2,
            target_kinds: vec![],
        }
    }
    fn region_bytes(&self, _ctx: &Context, _target: &bench_core::memory::TargetSpec) -> usize {
        4096
    }
    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let target = region.origin().to_string();
        let placement = region.placement().clone();
        // SAFETY: the region is page aligned and at least 4 KiB; offset 0 is an aligned
        // AtomicU64 that only this benchmark touches while the borrow lasts.
        let line = unsafe { &*(region.as_mut_ptr() as *const AtomicU64) };
        let (samples, trips) = ctx.effort.pool.c2c;
        let mut report = Report::default();
        let cpus = ctx.cpus.clone();
        for kind in [PingPong::Cas, PingPong::Flag] {
            let mut cells = Vec::new();
            let mut ids = Vec::new();
            for (i, &a) in cpus.iter().enumerate() {
                for &b in &cpus[i + 1..] {
                    ctx.progress(&format!("pool.c2c on {target}: {} {a}<->{b}", kind.name()));
                    let (v, counters, trips) = ping_pong(ctx, line, kind, a, b, samples, trips)?;
                    let Some(d) = Distribution::from_samples(&v) else {
                        return Err(NotRun::skip("the timer produced no usable samples"));
                    };
                    let id = format!("pool.c2c/{target}/{}/{a}-{b}", kind.name());
                    cells.push((a, b, d.p50));
                    ids.push(id.clone());
                    report.measurements.push(measurement(
                        id,
                        self.name(),
                        &target,
                        serde_json::json!({"kind": kind.name(), "instruction": kind.instruction(), "cpu_a": a, "cpu_b": b, "round_trips_per_sample": trips}),
                        "ns",
                        format!("one-way latency (round trip / 2) of {} ping-pong on one line between CPUs {a} and {b}", kind.name()),
                        d,
                        Some(placement.clone()),
                        counters,
                    ));
                }
            }
            ctx.progress(&format!(
                "pool.c2c {} one-way latency (ns, p50):\n{}",
                kind.name(),
                matrix_table(&cpus, &cells)
            ));
            let p50s: Vec<f64> = cells.iter().map(|c| c.2).collect();
            let med = median(&p50s).unwrap_or(f64::NAN);
            let min = p50s.iter().copied().fold(f64::INFINITY, f64::min);
            report.params.push(Param::new(
                format!("c2c_{}_lat_ns", kind.name()),
                med,
                &target,
                format!(
                    "median over {} CPU pairs of the p50 one-way {} ping-pong latency",
                    cells.len(),
                    kind.name()
                ),
                ids.clone(),
            ));
            report.params.push(Param::new(
                format!("c2c_{}_min_lat_ns", kind.name()),
                min,
                &target,
                format!(
                    "minimum over {} CPU pairs of the p50 one-way {} ping-pong latency",
                    cells.len(),
                    kind.name()
                ),
                ids,
            ));
        }
        Ok(report)
    }
}

/// Core-to-core one-way latency matrix (CAS and flag ping-pong) over --cpu.
#[derive(Debug, Clone, clap::Args)]
pub struct C2cArgs {}

impl Setup for C2cArgs {
    fn plan(&self, _opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(C2cBench))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_has_a_row_per_cpu_but_the_last() {
        let t = matrix_table(&[0, 1, 2], &[(0, 1, 50.0), (0, 2, 60.0), (1, 2, 70.5)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains("50.0") && lines[1].contains("60.0"));
        assert!(lines[2].contains("70.5"));
    }

    #[test]
    fn hand_over_stops_on_stop() {
        let r = Rmw::native();
        let l = AtomicU64::new(STOP);
        assert!(!hand_over(&l, (PingPong::Cas, r), 1, 2));
        assert!(!hand_over(&l, (PingPong::Flag, r), 1, 2));
        let l = AtomicU64::new(1);
        assert!(hand_over(&l, (PingPong::Flag, r), 1, 2));
        assert_eq!(l.load(Ordering::SeqCst), 2);
        assert!(hand_over(&l, (PingPong::Cas, r), 2, 3));
        assert_eq!(l.load(Ordering::SeqCst), 3);
    }
}
