//! # bench-mem
//!
//! Memory benchmarks on any cxlchar target.
//!
//! * [`latency`]: idle load latency by pointer chase over a working-set sweep, giving
//!   `l1_lat_ns`, `l2_lat_ns`, `l3_lat_ns`, `mem_lat_ns` (and on far memory `cxl_lat_ns`);
//! * [`chase`]: the chase itself (Sattolo cycles, TLB-local orders, the unrolled loop);
//! * [`levels`]: finding each cache level's plateau in a sweep;
//! * [`alltoall`]: the intra-node all-to-all (HINT's copy orders, buffer sizing) that
//!   [`threshold`] and [`alltoall_order`] time.
//! * [`agents`]: k pinned CPU agents moving the same transfer on one target or spread
//!   over two (seed 003, Observation 2).
//! * [`matrix`]: the NUMA node matrices (every CPU node to every memory node: idle
//!   latency, all-CPU read bandwidth, loaded latency), as Intel MLC's first output.
#![deny(missing_docs)]

pub mod agents;
pub mod alltoall;
pub mod alltoall_order;
pub mod bandwidth;
pub use bench_core::chase;
pub use bench_core::kernels;
pub mod latency;
pub mod levels;
pub mod loaded;
pub mod matrix;
pub mod threshold;
