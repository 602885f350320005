//! Names of the measurement parameters (`measurements[].parameters`) that consumers read
//! (`cxlchar plot`), as the benchmarks write them.

/// Working-set or buffer size in bytes (`mem.latency`, `mem.bandwidth`, `pool.flush`).
pub const SIZE_BYTES: &str = "size_bytes";
/// Chase order of a latency point (`mem.latency`); copy order of an all-to-all point
/// (`mem.alltoall-order`: row, column, hilbert).
pub const ORDER: &str = "order";
/// Kernel of a bandwidth point (`mem.bandwidth`).
pub const KERNEL: &str = "kernel";
/// Thread count (`mem.bandwidth`, `mem.copy-threshold`, `mem.alltoall-order`).
pub const THREADS: &str = "threads";
/// Copy method (`mem.copy-threshold`, `mem.alltoall-order`: temporal, nt, hybrid) or flush
/// method (`pool.flush`).
pub const METHOD: &str = "method";
/// Block size in bytes of the all-to-all copy (`mem.copy-threshold`, `mem.alltoall-order`).
pub const BLOCK_BYTES: &str = "block_bytes";
/// Traffic mix of a loaded-latency point (`mem.loaded`: a named mix, or `share<P>` for
/// another read share of `--read-pct` / `--mess-family`).
pub const MIX: &str = "mix";
/// Bandwidth injected by the traffic threads, GB/s (`mem.loaded`).
pub const INJECTED_BW_GBS: &str = "injected_bw_gbs";
/// Spin delay between the traffic threads' chunks, pause instructions (`mem.loaded`).
pub const DELAY_PAUSE: &str = "delay_pause";
/// Read share of a loaded-latency point's traffic in percent, counting the RFO read a
/// temporal store causes, rounded (`mem.loaded`: read 100, 3r1w 80, 2r1w 75, 1r1w 67,
/// nt-write 0, `share<P>` exactly P; files of earlier versions lack it, their `read-write`
/// mix is 67).
pub const READ_PCT: &str = "read_pct";
/// Loads to stores of a loaded-latency point's traffic, by instruction (and byte) count,
/// as `"R:W"` (`mem.loaded`: `"1:0"`, `"3:1"`, `"2:1"`, `"1:1"`, `"0:1"`).
pub const LOAD_STORE_RATIO: &str = "load_store_ratio";
/// Traffic threads of a loaded-latency point (`mem.loaded`; 0 at idle).
pub const TRAFFIC_THREADS: &str = "traffic_threads";
/// Median latency of single timed chase loads at a loaded-latency point, ns, timer
/// overhead subtracted (`mem.loaded`; the `distribution` holds 256-load batch means).
pub const PER_LOAD_P50_NS: &str = "per_load_p50_ns";
/// 99th percentile of the single timed chase loads, ns (`mem.loaded`).
pub const PER_LOAD_P99_NS: &str = "per_load_p99_ns";
/// Number of single timed chase loads behind `per_load_p50_ns` / `per_load_p99_ns`.
pub const PER_LOAD_SAMPLES: &str = "per_load_samples";
/// The timer's start/stop overhead subtracted from each single-load sample, ns.
pub const TIMER_OVERHEAD_NS: &str = "timer_overhead_ns";
/// Kind of core-to-core ping-pong (`pool.c2c`: cas, flag).
pub const KIND: &str = "kind";
/// First CPU of a core-to-core pair (`pool.c2c`).
pub const CPU_A: &str = "cpu_a";
/// Second CPU of a core-to-core pair (`pool.c2c`).
pub const CPU_B: &str = "cpu_b";
/// What a core-to-core pair's CPUs share (`pool.c2c`: `smt`, `same-l2`, `same-llc`,
/// `cross-llc`, `cross-node`, `cross-socket`; [`crate::topology::pairs::PairClass`]).
pub const PAIR_CLASS: &str = "pair_class";
/// The rung of the thread ladder a multi-threaded point ran on, in words (`one L3: 16
/// CPUs`; [`crate::topology::ladder`]).
pub const RUNG: &str = "rung";
/// The GPU's name as the driver gives it (`gpu.bw`, `gpu.pool`: `NVIDIA H200`).
pub const GPU: &str = "gpu";
/// The GPU's PCIe link, current and maximum (`gpu.bw`, `gpu.pool`).
pub const LINK: &str = "link";
/// Copy direction of a GPU point (`gpu.bw`, `gpu.pool`: `h2d`, `d2h`).
pub const DIR: &str = "dir";
/// Host memory of a GPU copy (`gpu.bw`: `pinned`, `pageable`; `gpu.pool`: `registered`).
pub const SOURCE: &str = "source";
/// How a GPU copy was timed (`gpu.bw`, `gpu.pool`: `events`, `host`).
pub const TIMING: &str = "timing";
/// Concurrent copies of a GPU contention point, one stream each (`gpu.pool`).
pub const STREAMS: &str = "streams";
/// A bandwidth scan's ranges and rule (`mem.scan`: `range_bytes`, `median_gbs`, and
/// `ranges`, each with its `offset_bytes`, `gbs`, `slow`, `noisy`, `physical` and `backed_by`).
pub const SCAN: &str = "scan";
