//! The cost model of a run: what each benchmark will do on each target, point by point,
//! and how many seconds that takes, before anything is measured.
//!
//! A benchmark describes its points ([`crate::bench::Benchmark::cost`]) from what each
//! one does, priced here: bytes to move at the bandwidth the CPUs can expect
//! ([`Expect::stream_gbs`]), samples x sample time under a time budget, round trips x their
//! latency, and pages to populate before a working set is used ([`Expect::populate_s`]).
//! A section that repeats when it is disturbed (a context switch or a migration on one
//! of its threads: [`crate::counters::retry_undisturbed`]) costs its expected attempts
//! ([`Expect::attempts`]). The runner sums the points into the plan it announces, gives
//! every point its share of the progress bar ([`Planning::point_done`]), and records the
//! plan beside the time each family took.
//!
//! The figures here are what a machine of its kind can be expected to do, not what this
//! one does: a plan for another machine (`--plan --sysfs ROOT`) uses them as they are; a
//! plan for this machine only adds how busy it is ([`Expect::for_this_machine`]). The
//! ETA then follows the pace the run observes.

use crate::effort::Budget;
use crate::topology::places::Places;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// A group of alike points of one benchmark on one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Points {
    /// What they are (`read at 1 thread(s), 5 sizes`).
    pub what: String,
    /// How many.
    pub count: usize,
    /// Seconds each.
    pub seconds_each: f64,
}

/// What a benchmark will do on one target: its points in the order it measures them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Cost {
    /// Groups of points, in measuring order.
    pub points: Vec<Points>,
    /// The benchmark gave no model: one point of [`UNKNOWN_SECONDS`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
}

/// The seconds assumed for a benchmark that gives no cost model.
pub const UNKNOWN_SECONDS: f64 = 1.0;

impl Cost {
    /// No points yet.
    pub fn new() -> Cost {
        Cost::default()
    }

    /// A benchmark without a model: one point of [`UNKNOWN_SECONDS`].
    pub fn unknown() -> Cost {
        let mut c = Cost::new();
        c.add("not modelled", 1, UNKNOWN_SECONDS);
        c.unknown = true;
        c
    }

    /// Adds `count` points of `seconds_each` (nothing when `count` is 0).
    pub fn add(&mut self, what: impl Into<String>, count: usize, seconds_each: f64) -> &mut Self {
        if count > 0 {
            self.points.push(Points {
                what: what.into(),
                count,
                seconds_each: seconds_each.max(0.0),
            });
        }
        self
    }

    /// Adds another cost's points after these.
    pub fn extend(&mut self, other: Cost) -> &mut Self {
        self.points.extend(other.points);
        self.unknown |= other.unknown;
        self
    }

    /// Every point's seconds scaled by `f` (a family measured on several parts at once).
    pub fn scaled(mut self, f: f64) -> Cost {
        for p in &mut self.points {
            p.seconds_each *= f;
        }
        self
    }

    /// The seconds of every point.
    pub fn seconds(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.count as f64 * p.seconds_each)
            .sum()
    }

    /// How many points.
    pub fn count(&self) -> usize {
        self.points.iter().map(|p| p.count).sum()
    }

    /// The seconds of the first `done` points.
    pub fn seconds_of_first(&self, done: usize) -> f64 {
        let mut left = done;
        let mut s = 0.0;
        for p in &self.points {
            let n = left.min(p.count);
            s += n as f64 * p.seconds_each;
            left -= n;
            if left == 0 {
                break;
            }
        }
        s
    }
}

/// What the model expects of a machine: bandwidth, page population, transfer latency and
/// how often a timed section is disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Expect {
    /// DRAM streaming bandwidth of one CPU, GB/s.
    pub stream_gbs_per_cpu: f64,
    /// DRAM bandwidth of one NUMA node (what many CPUs share), GB/s.
    pub stream_gbs_per_node: f64,
    /// Bandwidth of streaming what fits in a core's caches, GB/s.
    pub cache_gbs_per_cpu: f64,
    /// First-touch page population of anonymous memory, one thread, GB/s.
    pub populate_gbs: f64,
    /// One dependent load from DRAM (idle latency), ns.
    pub load_ns: f64,
    /// Writing one element of a pointer chain (a random line of a fresh slot), ns.
    pub chain_write_ns: f64,
    /// Writing one element of a chain in full-random order (no TLB locality: most stores
    /// also miss the TLB), ns.
    pub chain_write_random_ns: f64,
    /// One round trip of a cache line between two cores sharing the LLC, ns.
    pub round_trip_ns: f64,
    /// The same across sockets, ns.
    pub round_trip_cross_socket_ns: f64,
    /// Fixed cost of one message through a pool queue of cells (claiming, publishing,
    /// acknowledging a cell), ns.
    pub message_ns: f64,
    /// The same with the non-coherent protocol (lines flushed by the writer, invalidated
    /// by the reader), ns.
    pub message_noncoherent_ns: f64,
    /// Payload bandwidth of one sender/receiver pair through a queue of cells (copied in,
    /// copied out), GB/s.
    pub pair_copy_gbs: f64,
    /// One GPU DMA copy engine from pinned or registered host memory, GB/s (PCIe Gen4
    /// x16: 25; Gen5: about 55).
    pub gpu_copy_gbs: f64,
    /// GPU copies from pageable host memory (staged by the driver), GB/s.
    pub gpu_pageable_gbs: f64,
    /// Launching one copy on a stream, us.
    pub gpu_launch_us: f64,
    /// Starting and joining the threads of one multi-threaded point, s...
    pub thread_start_s: f64,
    /// ...and pinning each of them, s.
    pub thread_spawn_s: f64,
    /// Threads that populate a fresh region together (the runner's placement uses up to
    /// 16 CPUs of the first CPU's node).
    pub populate_threads: usize,
    /// Disturbances (context switches, migrations) per CPU-second of a timed section.
    pub disturbances_per_cpu_s: f64,
    /// Disturbances per CPU-second that leave a crew's window out (a run-queue wait of
    /// over 1 % of the window, a migration, a fault, stolen time): fewer than
    /// [`Expect::disturbances_per_cpu_s`], a kernel worker's tens of microseconds being
    /// tolerated (a quiet 2-vCPU guest: about one window in twenty of two threads).
    pub window_disturbances_per_cpu_s: f64,
    /// Disturbances per second of a section of threads that spin at a barrier in
    /// lockstep ([`crate::crew::Crew::rounds`]: the threshold and all-to-all sweeps),
    /// whatever their number, besides [`Expect::window_disturbances_per_cpu_s`] per
    /// thread: the rounds are judged as the crew's windows are (a run-queue wait of up to
    /// 1 % of the section tolerated), and a barrier's spinning threads wait on each
    /// other's preemptions (on a quiet 2-vCPU guest about one all-to-all section of 12 ms
    /// in twenty is repeated).
    pub spinning_disturbances_s: f64,
    /// Fixed cost of a timed section besides its samples: its counters opened and read,
    /// its threads pinned, its figures recorded, s.
    pub section_overhead_s: f64,
    /// How much longer than planned a hand-off between two threads takes (a line
    /// bounced between cores, a message through a queue): 1 on a quiet machine; on a busy
    /// one either side may wait for the other's time slice.
    pub handoff_factor: f64,
    /// Whether a multi-threaded section is repeated while one of its threads is
    /// disturbed (the lockstep threads of [`crate::crew::Crew::rounds`] are; a sampling
    /// scheme that flags a disturbed window instead of repeating it turns this off).
    pub repeat_threads: bool,
    /// How busy the machine is besides this run (load average per CPU), 0 when planned
    /// for another machine.
    pub load_per_cpu: f64,
}

impl Default for Expect {
    /// A quiet server-class machine.
    fn default() -> Expect {
        Expect {
            stream_gbs_per_cpu: 12.0,
            stream_gbs_per_node: 120.0,
            cache_gbs_per_cpu: 90.0,
            populate_gbs: 2.5,
            load_ns: 120.0,
            chain_write_ns: 30.0,
            chain_write_random_ns: 80.0,
            round_trip_ns: 200.0,
            round_trip_cross_socket_ns: 700.0,
            message_ns: 200.0,
            message_noncoherent_ns: 600.0,
            pair_copy_gbs: 3.0,
            gpu_copy_gbs: 25.0,
            gpu_pageable_gbs: 10.0,
            gpu_launch_us: 10.0,
            thread_start_s: 0.0005,
            thread_spawn_s: 0.00003,
            populate_threads: 1,
            disturbances_per_cpu_s: 2.0,
            window_disturbances_per_cpu_s: 0.6,
            spinning_disturbances_s: 3.0,
            section_overhead_s: 0.0003,
            handoff_factor: 1.0,
            repeat_threads: true,
            load_per_cpu: 0.0,
        }
    }
}

impl Expect {
    /// In words, for the plan's record.
    pub fn describe(&self) -> String {
        format!(
            "DRAM {} GB/s per CPU, {} GB/s per node; page population {} GB/s; idle load {} ns; line round trip {} ns ({} ns across sockets); {:.0} disturbances per CPU-second (load {:.2} per CPU)",
            round2(self.stream_gbs_per_cpu),
            round2(self.stream_gbs_per_node),
            round2(self.populate_gbs),
            self.load_ns,
            self.round_trip_ns,
            self.round_trip_cross_socket_ns,
            self.disturbances_per_cpu_s,
            self.load_per_cpu
        )
    }

    /// The expectations on this machine: the defaults, with the disturbance rate raised
    /// by how busy it is now (other work than this run's, which has not started): a busy
    /// machine repeats more sections. How busy comes from the CPUs' busy time over the
    /// next 100 ms ([`current_load`]): the 1-minute load average lags (a build that has
    /// just ended leaves it high on a quiet machine), and counts only where every CPU is
    /// busy, to say by how many runnable tasks.
    pub fn for_this_machine(cpus: usize) -> Expect {
        let loadavg = crate::sysfs::read_trim(std::path::Path::new("/proc/loadavg"))
            .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0);
        let busy = busy_cpus(Duration::from_millis(100));
        let online = busy.map_or(cpus, |(_, n)| n);
        let load = current_load(loadavg, busy.map(|(b, _)| b), online);
        Expect::default().with_load(load / cpus.max(1) as f64)
    }

    /// These expectations on a machine with `load_per_cpu` other work per CPU.
    pub fn with_load(mut self, load_per_cpu: f64) -> Expect {
        let l = load_per_cpu.clamp(0.0, 16.0);
        self.load_per_cpu = l;
        let d = Expect::default();
        // A little other work disturbs little; a machine with several runnable tasks per
        // CPU preempts nearly every section.
        self.disturbances_per_cpu_s = d.disturbances_per_cpu_s * (1.0 + LOAD_DISTURBANCES * l * l);
        self.window_disturbances_per_cpu_s =
            d.window_disturbances_per_cpu_s * (1.0 + LOAD_DISTURBANCES * l * l);
        // Other work shares the cores (a sample's own bandwidth is what it is: a
        // preempted one is a disturbed one, repeated).
        self.populate_gbs = d.populate_gbs / (1.0 + l / 2.0);
        self.section_overhead_s = d.section_overhead_s * (1.0 + l);
        self.handoff_factor = 1.0 + LOAD_HANDOFF * l * l;
        self
    }

    /// Expected runs of a section of `seconds` on `threads` threads that is repeated
    /// while disturbed, up to `max_attempts`: 1 + q + q^2 + ..., q the chance that one
    /// run is disturbed.
    pub fn attempts(&self, threads: usize, seconds: f64, max_attempts: u32) -> f64 {
        self.attempts_at(
            self.disturbances_per_cpu_s * threads.max(1) as f64,
            seconds,
            max_attempts,
        )
    }

    /// [`Expect::attempts`] of a section of `threads` threads spinning in lockstep
    /// ([`Expect::spinning_disturbances_s`]).
    pub fn attempts_spinning(&self, threads: usize, seconds: f64) -> f64 {
        if !self.repeat_threads {
            return 1.0;
        }
        self.attempts_at(
            self.window_disturbances_per_cpu_s * threads.max(1) as f64
                + self.spinning_disturbances_s,
            seconds,
            crate::counters::DEFAULT_MAX_ATTEMPTS,
        )
    }

    fn attempts_at(&self, rate_per_s: f64, seconds: f64, max_attempts: u32) -> f64 {
        let q = 1.0 - (-rate_per_s * seconds.max(0.0)).exp();
        (0..max_attempts.max(1)).map(|i| q.powi(i as i32)).sum()
    }

    /// DRAM bandwidth `cpus` can expect together: each CPU's, up to what the nodes they
    /// span give (the first node's where the topology does not say), GB/s.
    pub fn stream_gbs(&self, topo: &Topology, cpus: &[usize]) -> f64 {
        let nodes = Places::of(topo, cpus).span(cpus).nodes.max(1);
        (cpus.len().max(1) as f64 * self.stream_gbs_per_cpu)
            .min(nodes as f64 * self.stream_gbs_per_node)
    }

    /// Seconds to populate `bytes` of fresh memory (first touch), by
    /// [`Expect::populate_threads`] threads (page faults do not scale linearly).
    pub fn populate_s(&self, bytes: usize) -> f64 {
        let threads = self.populate_threads.clamp(1, 16) as f64;
        bytes as f64 / (self.populate_gbs * threads.powf(0.75) * 1e9)
    }

    /// These expectations with the region placement of `topo`, run from `cpus`: up to 16
    /// CPUs of the first one's node populate a region.
    pub fn placing_on(mut self, topo: &Topology, cpus: &[usize]) -> Expect {
        let first = cpus.first().copied().unwrap_or(0);
        self.populate_threads = topo
            .nodes
            .iter()
            .find(|n| n.cpus.contains(&first))
            .map_or(1, |n| n.cpus.len())
            .clamp(1, 16);
        self
    }

    /// Seconds of a timed section of `run` seconds on `threads` threads that is repeated
    /// while disturbed: its expected attempts, each starting its threads, and its fixed
    /// cost ([`Expect::section_overhead_s`]).
    pub fn section_s(&self, threads: usize, run: f64) -> f64 {
        self.attempts(threads, run, crate::counters::DEFAULT_MAX_ATTEMPTS)
            * (run + self.start_s(threads))
            + self.section_overhead_s
    }

    /// [`Expect::section_s`] of threads spinning in lockstep
    /// ([`Expect::attempts_spinning`]).
    pub fn spinning_section_s(&self, threads: usize, run: f64) -> f64 {
        self.attempts_spinning(threads, run) * (run + self.start_s(threads))
            + self.section_overhead_s
    }

    /// Seconds of `n` hand-offs of `each_ns` between two threads ([`Expect::handoff_factor`]).
    pub fn handoffs_s(&self, n: f64, each_ns: f64) -> f64 {
        n * each_ns * 1e-9 * self.handoff_factor
    }

    /// Seconds threads spend at one barrier: two hand-offs of a line, and on a busy
    /// machine the wait for a preempted thread.
    pub fn barrier_s(&self) -> f64 {
        2.0 * self.handoffs_s(1.0, self.round_trip_ns)
            + LOAD_BARRIER_S * self.load_per_cpu * self.load_per_cpu
    }

    /// Seconds to start, pin and join `threads` threads.
    pub fn start_s(&self, threads: usize) -> f64 {
        if threads > 1 {
            self.thread_start_s + threads as f64 * self.thread_spawn_s
        } else {
            0.0
        }
    }

    /// Seconds to stream `bytes` at `gbs`.
    pub fn stream_s(bytes: usize, gbs: f64) -> f64 {
        bytes as f64 / (gbs.max(1e-3) * 1e9)
    }

    /// Seconds of a timed point under `budget` (keep sampling at least its time and its
    /// fewest samples, at most its most) whose samples take `sample_s` each, on `threads`
    /// threads, with one untimed warm-up sample and the expected repeats of a disturbed
    /// run ([`crate::counters::DEFAULT_MAX_ATTEMPTS`]).
    pub fn sampled_s(&self, budget: &Budget, sample_s: f64, threads: usize) -> f64 {
        // Threads in lockstep meet at a barrier before and after each sample.
        let sample_s = sample_s.max(1e-7) + if threads > 1 { self.barrier_s() } else { 0.0 };
        let samples = ((budget.time.as_secs_f64() / sample_s).ceil() as usize)
            .max(budget.min_samples)
            .min(budget.max_samples.max(1));
        let run = samples as f64 * sample_s;
        self.spinning_section_s(threads, run + sample_s)
    }

    /// Seconds of a bandwidth point: `threads` threads (on `cpus`) each moving
    /// `bytes_per_thread` per sample under `budget`, at the DRAM bandwidth they can expect
    /// (or `in_cache`: each at the cache bandwidth), in lockstep samples: the price of the
    /// collective copies' rounds ([`crate::crew::Crew::rounds`]: `mem.copy-threshold`,
    /// `mem.alltoall-order`). A crew's windows are priced by [`Expect::crew_point_s`].
    pub fn bandwidth_point_s(
        &self,
        topo: &Topology,
        cpus: &[usize],
        bytes_per_thread: usize,
        budget: &Budget,
        in_cache: bool,
    ) -> f64 {
        let threads = cpus.len().max(1);
        let gbs = if in_cache {
            self.cache_gbs_per_cpu * threads as f64
        } else {
            self.stream_gbs(topo, cpus)
        };
        let sample_s = Expect::stream_s(bytes_per_thread * threads, gbs);
        self.sampled_s(budget, sample_s, threads)
    }
}

impl Expect {
    /// Seconds of a crew's point ([`crate::crew`]): `cpus` threads, each warmed up by a
    /// pass over its `slice_bytes` (at least 2 ms) at the bandwidth it can expect (`in_cache`:
    /// the cache bandwidth), then `plan`'s windows, more where a window is disturbed
    /// (expected from [`Expect::disturbances_per_cpu_s`], up to `plan.max_windows`), each
    /// with the threads meeting between windows. The one price of every point a crew
    /// measures (`mem.bandwidth`, the matrix's read, `mem.agents`, `pool.flush-bw`,
    /// `pool.msg-scale`), so that how a crew samples is priced in one place.
    pub fn crew_point_s(
        &self,
        topo: &Topology,
        cpus: &[usize],
        slice_bytes: usize,
        plan: &crate::effort::WindowPlan,
        in_cache: bool,
    ) -> f64 {
        let threads = cpus.len().max(1);
        let per_thread = if in_cache {
            self.cache_gbs_per_cpu
        } else {
            self.stream_gbs(topo, cpus) / threads as f64
        };
        let warm = Expect::stream_s(slice_bytes, per_thread).max(0.002);
        let w = plan.window.as_secs_f64();
        let q = 1.0 - (-self.window_disturbances_per_cpu_s * threads as f64 * w).exp();
        let wanted = plan.windows.max(1) as f64;
        let windows = (wanted / (1.0 - q).max(1e-3)).min(plan.max_windows.max(plan.windows) as f64);
        warm + windows * (w + 2.0 * self.barrier_s())
            + self.start_s(threads)
            + self.section_overhead_s
    }
}

/// The plan of a run and what it took, as params.json records it (`plan`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanRecord {
    /// Planned seconds of the whole run (timer calibration, every family on every
    /// target, memory placement included).
    pub total_s: f64,
    /// Seconds the run took, from the timer's calibration to the last family's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_s: Option<f64>,
    /// Points planned, all families together.
    pub points: usize,
    /// What the model expected of the machine ([`Expect`]), in its own words.
    pub expect: String,
    /// The budget (`--budget`) and how the counts were cut to fit it, if one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetRecord>,
    /// Every family on every target, in run order.
    pub families: Vec<FamilyRecord>,
    /// The most memory the run was planned to map at once: the largest family's
    /// ([`FamilyRecord::memory_bytes`]; families run one after the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The most memory the run maps at once where a DRAM check finds its working set in
    /// a cache and grows it ([`FamilyRecord::memory_grown_bytes`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_grown_bytes: Option<u64>,
}

/// A `--budget` and the cut it made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetRecord {
    /// The budget, seconds.
    pub budget_s: f64,
    /// The plan's total before any cut, seconds.
    pub uncut_s: f64,
    /// Sampling times and sample counts were multiplied by this (1: no cut).
    pub samples_factor: f64,
    /// At most this many rungs of the thread ladder (`None`: no cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rungs: Option<usize>,
    /// Whether the cut plan fits the budget (a budget too small for the fewest counts
    /// does not).
    pub fits: bool,
}

/// One family (benchmark) on one target in the plan, and what it took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FamilyRecord {
    /// The benchmark (`mem.bandwidth`).
    pub benchmark: String,
    /// Its target (`anon`, `gpu:0`).
    pub target: String,
    /// Points planned.
    pub points: usize,
    /// Planned seconds, placing its memory included.
    pub planned_s: f64,
    /// Seconds it took (`None`: it did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_s: Option<f64>,
    /// Points it reported done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points_done: Option<usize>,
    /// Planned without a cost model of its own ([`UNKNOWN_SECONDS`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unmodelled: bool,
    /// The most memory it was planned to map at once
    /// ([`crate::bench::Benchmark::memory`]), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The most it maps at once where its DRAM check finds its working set in a cache
    /// and grows it (bounded by half the memory the target offers), bytes; absent when
    /// nothing grows past `memory_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_grown_bytes: Option<u64>,
    /// The most memory it held at once in this run, bytes: the process's peak resident
    /// set while it ran (VmHWM, reset as it began) less the resident set it began with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// How many CPUs other work keeps busy now: `busy_cpus` (busy time over a short sample,
/// of `online` CPUs) where some CPU is idle, else the load average where it says more
/// (every CPU busy: by how many runnable tasks); the load average where nothing was
/// sampled.
pub fn current_load(loadavg: f64, busy_cpus: Option<f64>, online: usize) -> f64 {
    match busy_cpus {
        Some(b) if b < 0.9 * online.max(1) as f64 => b.max(0.0),
        Some(b) => b.max(loadavg),
        None => loadavg.max(0.0),
    }
}

/// CPUs busy (user, system, interrupts, stolen time) over `sample`, and the CPUs online,
/// from /proc/stat; `None` where it cannot be read.
fn busy_cpus(sample: Duration) -> Option<(f64, usize)> {
    fn read() -> Option<(u64, u64, usize)> {
        let s = crate::sysfs::read_table(std::path::Path::new("/proc/stat"))?;
        let online = s
            .lines()
            .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
            .count();
        let v: Vec<u64> = s
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal (guest time is inside user).
        let total: u64 = v.iter().take(8).sum();
        let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
        Some((total, total - idle, online))
    }
    let (t0, b0, _) = read()?;
    std::thread::sleep(sample);
    let (t1, b1, online) = read()?;
    let dt = t1.checked_sub(t0).filter(|&d| d > 0)?;
    let busy = b1.saturating_sub(b0) as f64 / dt as f64;
    Some((busy * online.max(1) as f64, online.max(1)))
}

/// Disturbances per CPU-second rise by this factor per (unit of load per CPU)^2.
const LOAD_DISTURBANCES: f64 = 3.0;
/// A hand-off between two threads takes this much longer per (unit of load per CPU)^2.
const LOAD_HANDOFF: f64 = 2.0;
/// A barrier of threads waits this much longer per (unit of load per CPU)^2 (one of them
/// preempted until its next time slice), s.
const LOAD_BARRIER_S: f64 = 30e-6;

/// What the benchmarks of a run know of its plan: the expectations their costs are
/// priced with, and where a finished point is reported (the progress bar).
#[derive(Clone, Default)]
pub struct Planning {
    /// The machine the costs are priced for.
    pub expect: Expect,
    /// DRAM checks that families planned earlier in the run will have made, by target
    /// and pattern ([`crate::bench::Benchmark::planned_checks`]): a family whose working
    /// set one of them covers prices no check of its own, as it will run none.
    checked: std::collections::BTreeSet<(String, crate::dram_check::Pattern)>,
    points: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for Planning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Planning")
            .field("expect", &self.expect)
            .field("checked", &self.checked)
            .field("reports_points", &self.points.is_some())
            .finish()
    }
}

impl Planning {
    /// Planning with `expect`, reporting no point (a plan that is only printed).
    pub fn quiet(expect: Expect) -> Planning {
        Planning {
            expect,
            checked: Default::default(),
            points: None,
        }
    }

    /// Planning with `expect`, reporting every finished point to `on_point`.
    pub fn new(expect: Expect, on_point: Arc<dyn Fn() + Send + Sync>) -> Planning {
        Planning {
            expect,
            checked: Default::default(),
            points: Some(on_point),
        }
    }

    /// Whether a family planned before this one checks `pattern` on `target`.
    pub fn checked(&self, target: &str, pattern: crate::dram_check::Pattern) -> bool {
        self.checked.contains(&(target.to_string(), pattern))
    }

    /// A family planned on `target` checks `pattern` there: the families after it stand
    /// on that check.
    pub fn will_check(&mut self, target: &str, pattern: crate::dram_check::Pattern) {
        self.checked.insert((target.to_string(), pattern));
    }

    /// One planned point is done (the progress bar moves by its planned seconds).
    pub fn point_done(&self) {
        if let Some(f) = &self.points {
            f()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A load average left high by work that has ended is not today's load; where every
    /// CPU is busy, the load average says how many tasks queue.
    #[test]
    fn the_current_load_is_the_busy_cpus_unless_all_are_busy() {
        // A build just ended: load average 1.7 on 2 CPUs, 0.05 CPUs busy now.
        assert_eq!(current_load(1.7, Some(0.05), 2), 0.05);
        // A hog keeps one of two CPUs busy.
        assert_eq!(current_load(0.4, Some(1.0), 2), 1.0);
        // Every CPU busy, four runnable tasks.
        assert_eq!(current_load(4.0, Some(1.98), 2), 4.0);
        assert_eq!(current_load(1.2, Some(1.98), 2), 1.98);
        // Nothing sampled: the load average.
        assert_eq!(current_load(0.8, None, 2), 0.8);
        // This machine's sample reads, and names at least one CPU.
        let (busy, online) = busy_cpus(Duration::from_millis(20)).expect("/proc/stat reads");
        assert!(online >= 1 && busy >= 0.0 && busy <= online as f64 + 1e-9);
    }

    #[test]
    fn costs_add_up_point_by_point() {
        let mut c = Cost::new();
        c.add("a", 2, 1.5).add("none", 0, 9.0).add("b", 3, 0.5);
        assert_eq!(c.count(), 5);
        assert_eq!(c.points.len(), 2);
        assert!((c.seconds() - 4.5).abs() < 1e-12);
        assert!((c.seconds_of_first(3) - 3.5).abs() < 1e-12);
        assert!((c.seconds_of_first(99) - 4.5).abs() < 1e-12);
        assert!(Cost::unknown().unknown);
    }

    #[test]
    fn a_busy_machine_repeats_long_sections() {
        let quiet = Expect::default();
        assert!(quiet.attempts(1, 0.002, 3) < 1.02);
        assert!(quiet.attempts(16, 0.2, 3) > 2.9);
        let busy = quiet.with_load(3.0);
        assert!(busy.attempts(1, 0.25, 3) > 2.9);
        assert_eq!(quiet.attempts(1, 10.0, 1), 1.0);
        // Lockstep sections are judged as windows: a 12 ms all-to-all section of two
        // threads is seldom repeated, a second-long one of 16 threads nearly always.
        assert!(quiet.attempts_spinning(2, 0.012) < 1.1);
        assert!(quiet.attempts_spinning(16, 1.0) > 2.9);
        assert!(busy.attempts_spinning(2, 0.1) > quiet.attempts_spinning(2, 0.1) + 0.5);
        let flagged = Expect {
            repeat_threads: false,
            ..quiet
        };
        assert_eq!(flagged.attempts_spinning(2, 0.1), 1.0);
    }

    #[test]
    fn a_sampled_point_takes_its_budget_or_its_fewest_samples() {
        let e = Expect {
            disturbances_per_cpu_s: 0.0,
            window_disturbances_per_cpu_s: 0.0,
            spinning_disturbances_s: 0.0,
            section_overhead_s: 0.0,
            ..Expect::default()
        };
        let b = Budget {
            time: Duration::from_millis(200),
            min_samples: 5,
            max_samples: 2000,
        };
        // Short samples: the time budget (plus one warm-up sample).
        assert!((e.sampled_s(&b, 0.001, 1) - 0.201).abs() < 1e-9);
        // Long samples: the fewest samples.
        assert!((e.sampled_s(&b, 0.1, 1) - 0.6).abs() < 1e-9);
    }
}
