//! `pool.c2c`: core-to-core latency by pair class. CPU pairs are classed by what they
//! share ([`bench_core::topology::pairs`]: SMT siblings, same L2, same LLC, across LLCs,
//! nodes, sockets) and a fixed number per class is measured, spread over the machine
//! with the run's seed (every pair with `--pairs all`: the full matrix). For each pair,
//! two pinned threads bounce one cache line that lives in the target region:
//!
//! * **CAS**: the first thread waits for the line to hold `2k` and CASes it to `2k+1`,
//!   the second waits for `2k+1` and CASes it to `2k+2` (each wait spins on
//!   compare-and-swap, as core-to-core-latency does: `lock cmpxchg`, or on AArch64 LSE
//!   `casal` where the CPU has it, else an `ldaxr`/`stlxr` loop, [`bench_core::rmw`]);
//! * **flag**: the same with plain loads and stores (multichase `pingpong -u`).
//!
//! Convention: **one-way** latency = round-trip time / 2 (core-to-core-latency and
//! multichase pingpong both report one transfer of the line, not the round trip).
//!
//! The same pairs then measure the **cache-to-cache bandwidth** ([`bw`]): one CPU writes
//! a buffer of half its L2, the other reads it back from the writer's cache, in rounds,
//! each way (`c2c_bw_<class>_gbs`).

pub mod bw;

use crate::measurement;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::counters::{self, CounterGroup, MeasurementCounters, ThreadCounts};
use bench_core::memory::TargetSpec;
use bench_core::plan::Cost;
use bench_core::rmw::{Rmw, RmwOp};
use bench_core::stats::{median, Distribution};
use bench_core::topology::pairs::{self, ClassPairs, PairClass};
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
pub struct C2cBench {
    /// Which pairs.
    pub pairs: Pairs,
}

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
    /// The page of the ping-pong's line (the bandwidth's hand-off flag too), then the
    /// bandwidth's buffer: half the largest L2 of the run's CPUs.
    fn region_bytes(&self, ctx: &Context, _target: &bench_core::memory::TargetSpec) -> usize {
        bw::BUFFER_OFFSET + bw::largest_buffer(&ctx.topology, &ctx.cpus).unwrap_or(0)
    }

    fn memory(
        &self,
        ctx: &Context,
        target: &bench_core::memory::TargetSpec,
    ) -> bench_core::memory::budget::Need {
        let bytes = target.mapped_bytes(self.region_bytes(ctx, target), &ctx.topology);
        let what = match bw::largest_buffer(&ctx.topology, &ctx.cpus) {
            Some(b) => format!(
                "the page of the line the pairs bounce and the {} buffer they pass (half the largest L2 of the run's CPUs)",
                bench_core::units::human_bytes(b as u64)
            ),
            None => "the page of the line the pairs bounce".into(),
        };
        bench_core::memory::budget::Need::on_target(bytes, what)
    }

    fn cost(&self, ctx: &Context, _target: Option<&TargetSpec>) -> Cost {
        let (samples, trips) = ctx.effort.pool.c2c;
        let e = &ctx.plan.expect;
        let mut cost = Cost::new();
        // The pairs are counted, not listed: `--pairs all` of 65536 CPUs is 2^31 of them.
        let per_class = self.per_class(ctx);
        let counts = pairs::classify(&ctx.topology, &ctx.cpus);
        for kind in [PingPong::Cas, PingPong::Flag] {
            for (class, n) in counts.iter().map(|&(c, total)| (c, total.min(per_class))) {
                let rt = if class == PairClass::CrossSocket {
                    e.round_trip_cross_socket_ns
                } else {
                    e.round_trip_ns
                };
                // A tenth of a sample of warm-up, then the samples.
                let run = e.handoffs_s(samples as f64 * trips as f64 * 1.1, rt);
                let each = e.section_s(2, run);
                cost.add(format!("{} {} pairs", kind.name(), class.name()), n, each);
            }
        }
        cost.extend(bw::cost(ctx, &counts, per_class));
        cost
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
        let classes = self.pairs(ctx);
        let matrix = self.pairs == Pairs::All;
        for kind in [PingPong::Cas, PingPong::Flag] {
            // (class, a, b, p50, id) of every pair measured.
            let mut cells: Vec<(PairClass, usize, usize, f64, String)> = Vec::new();
            for cp in &classes {
                for &(a, b) in &cp.pairs {
                    ctx.progress(&format!(
                        "pool.c2c on {target}: {} {} {a}<->{b}",
                        kind.name(),
                        cp.class.name()
                    ));
                    let (v, counters, trips) = ping_pong(ctx, line, kind, a, b, samples, trips)?;
                    let Some(d) = Distribution::from_samples(&v) else {
                        return Err(NotRun::skip("the timer produced no usable samples"));
                    };
                    let id = format!("pool.c2c/{target}/{}/{a}-{b}", kind.name());
                    cells.push((cp.class, a, b, d.p50, id.clone()));
                    report.measurements.push(measurement(
                        id,
                        self.name(),
                        &target,
                        serde_json::json!({"kind": kind.name(), "instruction": kind.instruction(), "cpu_a": a, "cpu_b": b, "round_trips_per_sample": trips, "pair_class": cp.class.name()}),
                        "ns",
                        format!("one-way latency (round trip / 2) of {} ping-pong on one line between CPUs {a} and {b} ({})", kind.name(), cp.class.describe()),
                        d,
                        Some(placement.clone()),
                        counters,
                    ));
                    ctx.point_done();
                }
            }
            if matrix {
                let flat: Vec<(usize, usize, f64)> =
                    cells.iter().map(|c| (c.1, c.2, c.3)).collect();
                ctx.progress(&format!(
                    "pool.c2c {} one-way latency (ns, p50):\n{}",
                    kind.name(),
                    matrix_table(&ctx.cpus, &flat)
                ));
            }
            self.class_figures(kind, (&target, &placement), &classes, &cells, &mut report);
        }
        self.bandwidth(ctx, region, &classes, &mut report)?;
        Ok(report)
    }
}

impl C2cBench {
    /// The pairs of the run by class: every pair (`--pairs all`) or a fixed number per
    /// class spread over the machine with the run's seed.
    pub fn pairs(&self, ctx: &Context) -> Vec<ClassPairs> {
        pairs::sample(&ctx.topology, &ctx.cpus, self.per_class(ctx), ctx.seed)
    }

    /// The pairs measured of each class (at most; `usize::MAX` for `--pairs all`).
    fn per_class(&self, ctx: &Context) -> usize {
        match self.pairs {
            Pairs::All => usize::MAX,
            Pairs::PerClass(n) => n,
            Pairs::Default => ctx.effort.pool.c2c_pairs_per_class,
        }
    }

    /// Per class: a summary measurement (the pairs' p50s: median, min, max) and its
    /// key where the models read one; over every class: the median of the classes'
    /// medians and the best pair.
    fn class_figures(
        &self,
        kind: PingPong,
        (target, placement): (&str, &bench_core::memory::Placement),
        classes: &[ClassPairs],
        cells: &[(PairClass, usize, usize, f64, String)],
        report: &mut Report,
    ) {
        let mut medians = Vec::new();
        for cp in classes {
            let of: Vec<&(PairClass, usize, usize, f64, String)> =
                cells.iter().filter(|c| c.0 == cp.class).collect();
            let p50s: Vec<f64> = of.iter().map(|c| c.3).collect();
            let ids: Vec<String> = of.iter().map(|c| c.4.clone()).collect();
            let Some(d) = Distribution::from_samples(&p50s) else {
                continue;
            };
            let med = median(&p50s).unwrap_or(f64::NAN);
            medians.push(med);
            let id = format!(
                "pool.c2c/{target}/{}/class/{}",
                kind.name(),
                cp.class.name()
            );
            report.measurements.push(bench_core::params::Measurement {
                id: id.clone(),
                benchmark: self.name().into(),
                target: target.into(),
                parameters: serde_json::json!({
                    "kind": kind.name(), "instruction": kind.instruction(),
                    "pair_class": cp.class.name(), "pairs_measured": p50s.len(), "pairs_in_class": cp.total,
                    "median_ns": med, "min_ns": d.min, "max_ns": d.max,
                    "pairs": of.iter().map(|c| format!("{}-{}", c.1, c.2)).collect::<Vec<_>>(),
                    // A summary of measurements that carry their own counters.
                    "summary_of": ids.clone(),
                }),
                unit: "ns".into(),
                method: format!(
                    "the p50 one-way {} latency of {} of the {} CPU pairs of the class ({}), picked spread over the machine with the run's seed; distribution over those pairs",
                    kind.name(),
                    p50s.len(),
                    cp.total,
                    cp.class.describe()
                ),
                distribution: d,
                placement: Some(placement.clone()),
                counters: None,
            });
            if let Some(stem) = class_key(cp.class) {
                report.params.push(Param::new(
                    format!("c2c_{}_{stem}_lat_ns", kind.name()),
                    med,
                    target,
                    format!(
                        "median over {} of the {} CPU pairs that are {} of the p50 one-way {} ping-pong latency",
                        p50s.len(),
                        cp.total,
                        cp.class.describe(),
                        kind.name()
                    ),
                    ids,
                ));
            }
        }
        let all_ids: Vec<String> = cells.iter().map(|c| c.4.clone()).collect();
        let min = cells.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        let names: Vec<&str> = classes.iter().map(|c| c.class.name()).collect();
        report.params.push(Param::new(
            format!("c2c_{}_lat_ns", kind.name()),
            median(&medians).unwrap_or(f64::NAN),
            target,
            format!(
                "median over the {} pair class(es) ({}) of each class's median p50 one-way {} ping-pong latency ({} CPU pairs measured)",
                medians.len(),
                names.join(", "),
                kind.name(),
                cells.len()
            ),
            all_ids.clone(),
        ));
        report.params.push(Param::new(
            format!("c2c_{}_min_lat_ns", kind.name()),
            min,
            target,
            format!(
                "minimum over {} CPU pairs of the p50 one-way {} ping-pong latency",
                cells.len(),
                kind.name()
            ),
            all_ids,
        ));
    }
}

/// The key stem of a class the models read (`same_llc`); `None` for the others.
pub fn class_key(c: PairClass) -> Option<&'static str> {
    match c {
        PairClass::SameLlc => Some("same_llc"),
        PairClass::CrossLlc => Some("cross_llc"),
        PairClass::CrossSocket => Some("cross_socket"),
        _ => None,
    }
}

/// Which CPU pairs to measure (`--pairs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairs {
    /// The effort plan's pairs per class.
    #[default]
    Default,
    /// This many pairs per class.
    PerClass(usize),
    /// Every pair (the full matrix).
    All,
}

impl std::str::FromStr for Pairs {
    type Err = String;
    fn from_str(s: &str) -> Result<Pairs, String> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(Pairs::All);
        }
        // A count of 0, or more than the run's CPUs make, is refused when the run is
        // planned ([`C2cArgs`]), which knows the CPUs and says what would fit.
        match s.parse::<usize>() {
            Ok(n) => Ok(Pairs::PerClass(n)),
            _ => Err(format!(
                "`{s}`: a number of pairs per class (at least 1) or `all`"
            )),
        }
    }
}

/// Core-to-core one-way latency (CAS and flag ping-pong) by pair class over --cpu.
///
/// CPU pairs are classed by what they share (sysfs): SMT siblings, same L2, same L3
/// (LLC), across L3s of a node, across nodes of a socket, across sockets. A few pairs
/// per class (8, 4 with --quick), spread over the machine with --seed, are measured;
/// each class gives its median, min and max, and c2c_{cas,flag}_{same_llc,cross_llc,
/// cross_socket}_lat_ns. The same pairs measure the cache-to-cache bandwidth each way
/// (one CPU writes a buffer of half its L2, the other reads it from the writer's cache):
/// c2c_bw_{same_llc,cross_llc,cross_socket}_gbs. `--pairs all` measures every pair (the
/// full matrix and its heatmap; n (n - 1) / 2 pairs: the plan printed first says how
/// long).
#[derive(Debug, Clone, clap::Args)]
pub struct C2cArgs {
    /// CPU pairs per class, or `all` for every pair (default: 8 per class, 4 with
    /// --quick).
    #[arg(long, value_name = "N|all")]
    pub pairs: Option<Pairs>,
}

impl Setup for C2cArgs {
    /// `--pairs N` asks for more pairs than the run's CPUs make: refused, never cut.
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        if let Some(Pairs::PerClass(n)) = self.pairs {
            let cpus = opts.cpus.len();
            let pairs = cpus * cpus.saturating_sub(1) / 2;
            if n == 0 || n > pairs {
                return Err(bench_core::topology::ladder::CountError {
                    option: "--pairs",
                    asked: n,
                    noun: if n == 1 { "pair per class" } else { "pairs per class" }.into(),
                    fits: pairs,
                    why: format!(
                        "the run's {cpus} {} {pairs} pair{} (--cpu, else every CPU this process may use); --pairs all measures every pair",
                        if cpus == 1 { "CPU makes" } else { "CPUs make" },
                        if pairs == 1 { "" } else { "s" },
                    ),
                }
                .into());
            }
        }
        Ok(Planned::one(C2cBench {
            pairs: self.pairs.unwrap_or_default(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_its_region_in_whole_pages_of_the_target() {
        let ctx = Context::quick_local();
        let b = C2cBench::default();
        let anon = bench_core::memory::TargetSpec::Anon;
        let need = b.memory(&ctx, &anon);
        // The line's page, then the bandwidth's buffer (none where no L2 is known).
        let buffer = bw::largest_buffer(&ctx.topology, &ctx.cpus).unwrap_or(0);
        let bytes = 4096 + buffer;
        assert_eq!((need.bytes, need.on_target_bytes), (bytes, bytes));
        assert!(need.what.contains("line"), "{}", need.what);
        assert_eq!(need.what.contains("buffer"), buffer > 0, "{}", need.what);
        let huge = bench_core::memory::TargetSpec::Hugetlb(bench_core::memory::HugeSize::M2);
        assert_eq!(b.memory(&ctx, &huge).bytes, bytes.next_multiple_of(2 << 20));
    }

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
