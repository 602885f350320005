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
/// Traffic mix of a loaded-latency point (`mem.loaded`).
pub const MIX: &str = "mix";
/// Bandwidth injected by the traffic threads, GB/s (`mem.loaded`).
pub const INJECTED_BW_GBS: &str = "injected_bw_gbs";
/// Spin delay between the traffic threads' chunks, pause instructions (`mem.loaded`).
pub const DELAY_PAUSE: &str = "delay_pause";
/// Kind of core-to-core ping-pong (`pool.c2c`: cas, flag).
pub const KIND: &str = "kind";
/// First CPU of a core-to-core pair (`pool.c2c`).
pub const CPU_A: &str = "cpu_a";
/// Second CPU of a core-to-core pair (`pool.c2c`).
pub const CPU_B: &str = "cpu_b";
