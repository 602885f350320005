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
//! * [`interference`]: a victim (a chase for latency, CPUs reading for bandwidth) on one
//!   target alone and while aggressor CPUs on other cores stream another (or the same):
//!   every ordered pair of the run's targets, keyed by their tiers (DRAM, far).
//! * [`scan`]: bandwidth by address range of a large region, each range named by what
//!   backs it (CXL region, memory devices, DIMMs), slow ranges listed.
#![deny(missing_docs)]

pub mod agents;
pub mod alltoall;
pub mod alltoall_order;
pub mod bandwidth;
pub use bench_core::chase;
pub mod interference;
pub use bench_core::kernels;
pub mod latency;
pub mod levels;
pub mod loaded;
pub mod matrix;
pub mod scan;
pub mod threshold;

/// What a DRAM check maps in the region of the family that runs it
/// ([`latency::chase_check_memory`], [`bandwidth::stream_check_memory`]), known before it
/// finds anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckMemory {
    /// The region's length for the check's first comparison (its larger working set).
    pub region_bytes: usize,
    /// The region's length when every comparison finds the smaller set in a cache and
    /// the working set grows as far as the check lets it (within half the memory the
    /// target offers).
    pub largest_region_bytes: usize,
    /// Heap beside the region for the first comparison (a chain builder's scratch, a
    /// point's samples).
    pub heap_bytes: usize,
}

/// What a need's words add for its DRAM checks: nothing when none may grow the region
/// past the `planned` bytes, else how far they may (`largest` bytes) if they find the
/// working set in a cache.
pub fn check_growth_note(planned: usize, largest: usize) -> String {
    if largest <= planned {
        return String::new();
    }
    format!(
        "; a DRAM check that finds its working set in a cache grows it, up to a {} region (half the memory the target offers at most)",
        bench_core::units::human_bytes(largest as u64)
    )
}
