//! How much a run measures: the one place where `--quick` is decided.
//!
//! A quick run and a full run measure the same things with the same methods on the same
//! footprints (every DRAM working set comes from [`crate::sizing`], which takes no effort
//! level); they differ only in how many points a sweep takes and how many samples, or how
//! much time, each point gets. Every family reads those numbers from the [`Effort`] in its
//! [`crate::bench::Context`] (or [`crate::bench::Options`] when it is planned); no family
//! branches on `--quick` itself. The two plans, [`QUICK`] and [`FULL`], sit side by side
//! below, and a test holds that the quick one never asks for more than the full one.

use crate::timer::Calibration;
use std::time::Duration;

/// How many samples to take: a sampling budget of the crew's lockstep rounds
/// ([`crate::crew::Crew::rounds`]).
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Keep sampling at least this long...
    pub time: Duration,
    /// ...and take at least this many samples...
    pub min_samples: usize,
    /// ...but never more than this many.
    pub max_samples: usize,
}

/// The effort level a user asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `--quick`: fewer points and samples.
    Quick,
    /// The default: every point, the full sample budgets.
    Full,
}

/// Points, samples and durations of every family for one [`Level`].
#[derive(Debug, Clone)]
pub struct Effort {
    /// The level these numbers are for.
    pub level: Level,
    /// How many rungs of the thread ladder a thread sweep takes (`None`: every rung,
    /// [`crate::topology::ladder`]); fewer keep all CPUs, one CPU and the machine's
    /// levels first ([`crate::topology::ladder::Ladder::cut`]).
    pub max_rungs: Option<usize>,
    /// How long the timer is calibrated.
    pub timer: Calibration,
    /// The windows of every crew of threads streaming together (`mem.bandwidth`, the
    /// matrix's bandwidth cells, `mem.agents`, `pool.flush-bw`, `pool.msg-scale`'s
    /// bandwidth): the same length with and without `--quick`, fewer of them with it.
    pub crew: WindowPlan,
    /// The memory family.
    pub mem: MemEffort,
    /// The pool family (coherence, flushes, messaging).
    pub pool: PoolEffort,
    /// The PCIe family.
    pub pcie: PcieEffort,
    /// The RDMA verbs family.
    pub verbs: VerbsEffort,
    /// The GPU family.
    pub gpu: GpuEffort,
}

/// The memory family's points and samples.
#[derive(Debug, Clone)]
pub struct MemEffort {
    /// Sampling time of one latency-sweep point (at least a fixed number of batches).
    pub latency_point: Duration,
    /// Sweep sizes per octave of the latency sweep: 1 (2^k) or 2 (2^k and 3 x 2^(k-1)).
    pub latency_points_per_octave: usize,
    /// Whether the prefetch self-check also measures the chain of twice the slot, which
    /// informs but never decides its verdict.
    pub latency_info_chain: bool,
    /// Whether `mem.bandwidth` adds the per-size sweep (16 KiB .. DRAM, one thread) to
    /// its level and DRAM points.
    pub bandwidth_size_sweep: bool,
    /// Sampling time of one loaded-latency point (traffic running, the chase sampling):
    /// the traffic crew's window, as long with `--quick` as without.
    pub loaded_point: Duration,
    /// The loaded-latency curve's injection delays (pause instructions between chunks),
    /// full load first, `None` the idle point.
    pub loaded_delays: &'static [Option<u32>],
    /// Step between the read shares of `mem loaded --mess-family`, percent (Mess reads 51
    /// curves, 100 % down to 0 % in steps of 2; a coarser step measures fewer of them).
    pub loaded_family_step_pct: u32,
    /// Sampling time of one `mem.copy-threshold` size.
    pub threshold_point: Duration,
    /// Sampling time of one `mem.alltoall-order` size.
    pub alltoall_order_point: Duration,
    /// Factor between consecutive all-to-all block sizes (1 KiB .. the largest).
    pub alltoall_block_step: usize,
    /// The most all-to-all buffers may take (2 x P^2 x S), beside a quarter of what the
    /// target offers: at 384 threads 8 GiB holds blocks up to 28 KiB, past HINT's
    /// L2 / P rule (a few KiB there), and a point moves gigabytes, not the terabytes a
    /// quarter of a large machine's memory would let it.
    pub alltoall_buffer_cap_bytes: Option<usize>,
    /// The windows of each `mem.interference` stream point (victim and aggressor crews):
    /// as long as every crew's, fewer of them with `--quick` (the family has a point per
    /// ordered target pair and mix).
    pub interference_crew: WindowPlan,
}

/// The pool family's points and samples.
#[derive(Debug, Clone)]
pub struct PoolEffort {
    /// Core-to-core transfers: samples, and round trips per sample.
    pub c2c: (usize, u64),
    /// Core-to-core transfers: CPU pairs measured per pair class (SMT siblings, same
    /// L3, across L3s, nodes, sockets; [`crate::topology::pairs`]), unless `--pairs all`.
    pub c2c_pairs_per_class: usize,
    /// Atomics: samples per operation and placement.
    pub atomic_samples: usize,
    /// Flush costs: samples per point below 32 KiB (half that from 32 KiB on).
    pub flush_samples: usize,
    /// `pool msg`: flag ping-pong samples and round trips per sample.
    pub msg_flag: (usize, u64),
    /// `pool msg`: sizes 8 B .. in powers of 2^this (1: every power of two).
    pub msg_size_log_step: u32,
    /// `pool msg`: the largest message size (within what the pool's rings hold).
    pub msg_largest_bytes: usize,
    /// `pool msg`: round trips per ring-latency sample, up to 64 KiB and above it.
    pub msg_ring_messages: (u64, u64),
    /// `pool msg`: bytes streamed per ring-bandwidth sample, and the most messages.
    pub msg_stream: (usize, usize),
    /// `pool msg`: ring-bandwidth samples per size.
    pub msg_stream_reps: usize,
    /// `pool msg`: the window it takes in a pool when none is given (`--len`), and the
    /// scratch pool it creates without `--pool`.
    pub msg_window_bytes: usize,
    /// `pool msg-scale`: whether every power of two 1 KiB .. 1 MiB is a size (else every
    /// power of four).
    pub msg_scale_every_size: bool,
    /// `pool msg-scale`: round trips per latency sample.
    pub msg_scale_round_trips: u64,
    /// `pool msg-scale`: bytes each pair streams per repetition, and repetitions.
    pub msg_scale_stream: (usize, usize),
}

/// The PCIe family's sampling time.
#[derive(Debug, Clone)]
pub struct PcieEffort {
    /// Sampling time of one MMIO point.
    pub mmio_point: Duration,
}

/// The RDMA verbs family's points and samples.
#[derive(Debug, Clone)]
pub struct VerbsEffort {
    /// Message sizes of the post breakdown.
    pub post_sizes: &'static [usize],
    /// Rounds of the post/poll breakdown per size.
    pub post_rounds: usize,
    /// Posts timed for the injection overhead.
    pub inject_posts: usize,
    /// Rounds of the progress (busy-post) test.
    pub progress_rounds: usize,
    /// Attempts of the full-queue test.
    pub full_queue_attempts: usize,
    /// Message rate: messages per repetition, and repetitions.
    pub message_rate: (usize, usize),
    /// Message sizes of the latency and bandwidth sweeps (up to the largest message).
    pub sweep_sizes: &'static [usize],
    /// Ping-pong iterations per size: small sizes, sizes from 256 KiB.
    pub latency_iters: (usize, usize),
    /// Write bandwidth: bytes per repetition, the message count's bounds, repetitions.
    pub bandwidth_stream: (usize, (usize, usize), usize),
}

/// The GPU family's points and samples.
#[derive(Debug, Clone)]
pub struct GpuEffort {
    /// The size sweep's factor between sizes (4 KiB .. the largest copy).
    pub sweep_step: usize,
    /// The largest copy of the size sweep when `--max-size` is not given.
    pub sweep_max_bytes: usize,
    /// Samples per size of the sweep.
    pub sweep_samples: usize,
    /// Bytes each sample copies (at least one copy), and the most copies per sample.
    pub sweep_sample_bytes: (usize, usize),
    /// Small-copy latency samples.
    pub latency_samples: usize,
    /// Bytes of each concurrent transfer of the contention tests (`--contention-size`).
    pub contention_bytes: usize,
    /// Rounds of each contention test.
    pub contention_rounds: usize,
    /// Beside the CPU agents: the length of each timed window (the same with `--quick`),
    /// and rounds.
    pub with_cpu: (Duration, usize),
}

const fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
const MIB: usize = 1 << 20;

/// The length of a crew's window, ms, with and without `--quick`: with calls of about
/// 0.1 ms ([`crate::crew::stream::CALL_NS`]) the skew of a window costs under 1 %.
pub const CREW_WINDOW_MS: u64 = 30;

/// `--quick`.
pub const QUICK: Effort = Effort {
    level: Level::Quick,
    max_rungs: Some(2),
    timer: Calibration::QUICK,
    crew: WindowPlan {
        window: ms(CREW_WINDOW_MS),
        windows: 3,
        max_windows: 9,
    },
    mem: MemEffort {
        latency_point: ms(40),
        latency_points_per_octave: 1,
        latency_info_chain: false,
        bandwidth_size_sweep: false,
        loaded_point: ms(60),
        loaded_delays: &QUICK_DELAYS,
        loaded_family_step_pct: 10,
        threshold_point: ms(40),
        alltoall_order_point: ms(15),
        alltoall_block_step: 4,
        alltoall_buffer_cap_bytes: Some(1 << 30),
        interference_crew: WindowPlan {
            window: ms(CREW_WINDOW_MS),
            windows: 2,
            max_windows: 4,
        },
    },
    pool: PoolEffort {
        c2c: (10, 1000),
        c2c_pairs_per_class: 4,
        atomic_samples: 15,
        flush_samples: 20,
        msg_flag: (10, 1000),
        msg_size_log_step: 3,
        msg_largest_bytes: 256 << 10,
        msg_ring_messages: (200, 20),
        msg_stream: (4 * MIB, 5_000),
        msg_stream_reps: 3,
        msg_window_bytes: 8 * MIB,
        msg_scale_every_size: false,
        msg_scale_round_trips: 2_000,
        msg_scale_stream: (2 * MIB, 3),
    },
    pcie: PcieEffort { mmio_point: ms(30) },
    verbs: VerbsEffort {
        post_sizes: &[8, 4096],
        post_rounds: 8,
        inject_posts: 2_000,
        progress_rounds: 10,
        full_queue_attempts: 1_000,
        message_rate: (2_000, 3),
        sweep_sizes: &[8, 4096, 1 << 20],
        latency_iters: (60, 60),
        bandwidth_stream: (4 * MIB, (64, 2_000), 2),
    },
    gpu: GpuEffort {
        sweep_step: 16,
        sweep_max_bytes: 1 << 30,
        sweep_samples: 8,
        sweep_sample_bytes: (16 * MIB, 64),
        latency_samples: 500,
        contention_bytes: 64 * MIB,
        contention_rounds: 5,
        with_cpu: (ms(200), 3),
    },
};

/// The default: every point, the full budgets.
pub const FULL: Effort = Effort {
    level: Level::Full,
    max_rungs: None,
    timer: Calibration::NORMAL,
    crew: WindowPlan {
        window: ms(CREW_WINDOW_MS),
        windows: 7,
        max_windows: 21,
    },
    mem: MemEffort {
        latency_point: ms(150),
        latency_points_per_octave: 2,
        latency_info_chain: true,
        bandwidth_size_sweep: true,
        loaded_point: ms(60),
        loaded_delays: &DELAYS,
        loaded_family_step_pct: 2,
        threshold_point: ms(100),
        alltoall_order_point: ms(60),
        alltoall_block_step: 2,
        alltoall_buffer_cap_bytes: Some(8 << 30),
        interference_crew: WindowPlan {
            window: ms(CREW_WINDOW_MS),
            windows: 7,
            max_windows: 21,
        },
    },
    pool: PoolEffort {
        c2c: (40, 5000),
        c2c_pairs_per_class: 8,
        atomic_samples: 60,
        flush_samples: 200,
        msg_flag: (40, 4000),
        msg_size_log_step: 2,
        msg_largest_bytes: 4 * MIB,
        msg_ring_messages: (2000, 100),
        msg_stream: (64 * MIB, 50_000),
        msg_stream_reps: 5,
        msg_window_bytes: 64 * MIB,
        msg_scale_every_size: false,
        msg_scale_round_trips: 20_000,
        msg_scale_stream: (32 * MIB, 5),
    },
    pcie: PcieEffort {
        mmio_point: ms(200),
    },
    verbs: VerbsEffort {
        post_sizes: &[8, 64, 256, 1024, 4096],
        post_rounds: 200,
        inject_posts: 100_000,
        progress_rounds: 500,
        full_queue_attempts: 20_000,
        message_rate: (50_000, 10),
        sweep_sizes: &[8, 64, 512, 4096, 32768, 262144, 1 << 20],
        latency_iters: (2000, 200),
        bandwidth_stream: (256 * MIB, (256, 100_000), 5),
    },
    gpu: GpuEffort {
        sweep_step: 4,
        sweep_max_bytes: 1 << 30,
        sweep_samples: 30,
        sweep_sample_bytes: (64 * MIB, 256),
        latency_samples: 5000,
        contention_bytes: 64 * MIB,
        contention_rounds: 20,
        with_cpu: (ms(200), 8),
    },
};

/// The loaded-latency delays of a full run: denser near full load, where the latency
/// rises.
const DELAYS: [Option<u32>; 19] = [
    Some(0),
    Some(5),
    Some(10),
    Some(20),
    Some(35),
    Some(50),
    Some(75),
    Some(100),
    Some(150),
    Some(200),
    Some(300),
    Some(400),
    Some(600),
    Some(800),
    Some(1200),
    Some(1600),
    Some(3200),
    Some(6400),
    None,
];

/// The loaded-latency delays of `--quick` (a subset of the full run's).
const QUICK_DELAYS: [Option<u32>; 6] =
    [Some(0), Some(100), Some(400), Some(1600), Some(6400), None];

impl Effort {
    /// The plan of `--quick` (`true`) or of a full run.
    pub fn of(quick: bool) -> &'static Effort {
        if quick {
            &QUICK
        } else {
            &FULL
        }
    }

    /// Whether this is `--quick` (for what a run records and the commands it starts).
    pub fn is_quick(&self) -> bool {
        self.level == Level::Quick
    }

    /// This plan with its counts cut to fit a time budget (`--budget`): every sampling
    /// time and sample count times `f` (0 < f <= 1; never below a few samples), at most
    /// `max_rungs` rungs of the thread ladder, and from `f` < 0.5 on the sweeps' point
    /// densities of `--quick` (every quick point is a full one). Working sets, sizes and
    /// methods stay as they are: a cut run measures the same things, with fewer samples
    /// and points.
    pub fn cut(&self, f: f64, max_rungs: Option<usize>) -> Effort {
        let f = f.clamp(0.01, 1.0);
        let d = |x: Duration| x.mul_f64(f).max(ms(5));
        let n = |x: usize, floor: usize| ((x as f64 * f).round() as usize).max(floor.min(x));
        let n64 = |x: u64, floor: u64| ((x as f64 * f).round() as u64).max(floor.min(x));
        let mut e = self.clone();
        e.max_rungs = match (self.max_rungs, max_rungs) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // A crew's windows keep their length (the skew's share of them) and get fewer.
        e.crew = e.crew.at_most(n(e.crew.windows, 1));
        let m = &mut e.mem;
        m.latency_point = d(m.latency_point);
        m.threshold_point = d(m.threshold_point);
        m.alltoall_order_point = d(m.alltoall_order_point);
        let p = &mut e.pool;
        p.c2c = (n(p.c2c.0, 5), n64(p.c2c.1, 500));
        p.c2c_pairs_per_class = n(p.c2c_pairs_per_class, 2);
        p.atomic_samples = n(p.atomic_samples, 10);
        p.flush_samples = n(p.flush_samples, 10);
        p.msg_flag = (n(p.msg_flag.0, 5), n64(p.msg_flag.1, 500));
        p.msg_ring_messages = (
            n64(p.msg_ring_messages.0, 100),
            n64(p.msg_ring_messages.1, 10),
        );
        p.msg_stream_reps = n(p.msg_stream_reps, 3);
        p.msg_scale_round_trips = n64(p.msg_scale_round_trips, 1000);
        p.msg_scale_stream.1 = n(p.msg_scale_stream.1, 3);
        e.pcie.mmio_point = d(e.pcie.mmio_point);
        let v = &mut e.verbs;
        v.post_rounds = n(v.post_rounds, 5);
        v.inject_posts = n(v.inject_posts, 1000);
        v.progress_rounds = n(v.progress_rounds, 5);
        v.full_queue_attempts = n(v.full_queue_attempts, 500);
        v.message_rate.1 = n(v.message_rate.1, 3);
        v.latency_iters = (n(v.latency_iters.0, 50), n(v.latency_iters.1, 50));
        v.bandwidth_stream.2 = n(v.bandwidth_stream.2, 2);
        let g = &mut e.gpu;
        g.sweep_samples = n(g.sweep_samples, 5);
        g.latency_samples = n(g.latency_samples, 200);
        g.contention_rounds = n(g.contention_rounds, 3);
        g.with_cpu.1 = n(g.with_cpu.1, 3);
        if f < 0.5 {
            let q = &QUICK;
            e.mem.latency_points_per_octave = q.mem.latency_points_per_octave;
            e.mem.latency_info_chain = q.mem.latency_info_chain;
            e.mem.loaded_delays = q.mem.loaded_delays;
            e.mem.loaded_family_step_pct = q.mem.loaded_family_step_pct;
            e.mem.bandwidth_size_sweep = q.mem.bandwidth_size_sweep;
            e.pool.msg_size_log_step = e.pool.msg_size_log_step.max(q.pool.msg_size_log_step);
            e.pool.msg_scale_every_size = q.pool.msg_scale_every_size;
            e.gpu.sweep_step = e.gpu.sweep_step.max(q.gpu.sweep_step);
        }
        e
    }
}

/// How many windows of a crew ([`crate::crew`]), and how long: [`Effort::crew`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowPlan {
    /// Length of a window (the same with and without `--quick`).
    pub window: Duration,
    /// Undisturbed windows wanted.
    pub windows: usize,
    /// The most windows run to get them.
    pub max_windows: usize,
}

impl WindowPlan {
    /// This plan with `factor` times the windows (a DRAM check compares medians and
    /// wants more of them).
    pub fn times(self, factor: usize) -> WindowPlan {
        WindowPlan {
            windows: self.windows * factor,
            max_windows: self.max_windows * factor,
            ..self
        }
    }

    /// This plan with at most `windows` windows wanted (a budget's cut), never fewer than
    /// one.
    pub fn at_most(self, windows: usize) -> WindowPlan {
        let w = self.windows.min(windows).max(1);
        WindowPlan {
            windows: w,
            max_windows: self.max_windows.min(3 * w).max(w),
            ..self
        }
    }
}

#[cfg(test)]
mod tests;
