//! # bench-gpu
//!
//! GPU <-> host-memory-pool DMA bandwidth and contention (seed 003, CCCL) through the CUDA
//! driver API, loaded at run time (cudarc, `dynamic-loading`): the same binary runs
//! without CUDA and reports the family as skipped with the reason (no driver library, a
//! driver too old, no device).
//!
//! * [`cuda`]: the loading checks (cudarc panics when `libcuda` is missing, so
//!   [`cuda::check_library`] runs first) and RAII wrappers of contexts, buffers, host
//!   registrations, streams and events;
//! * [`discovery`]: GPUs with name, memory, copy engines, PCI address, PCIe link and NUMA
//!   node (sysfs);
//! * [`config`]: `cxlchar gpu` options, validated; [`plan`]: what they plan (one
//!   discovery, then the benchmarks per GPU and per target);
//! * [`copy`]: the timed loops;
//! * [`shape`]: pure result shaping of sweeps and latency (bandwidth, measurements,
//!   params); [`contention`]: of concurrent transfers (per-transfer bandwidth from a
//!   common start, fairness, order, interleaved or in turn);
//! * [`host::GpuHostBench`] (`gpu.bw`, one per GPU): pageable and pinned bandwidth
//!   sweeps and the small-copy latency;
//! * [`pool::GpuPoolBench`] (`gpu.pool`, one per memory target): bandwidth to a
//!   registered target, how concurrent transfers share it, and ([`with_cpu`]) what the
//!   GPU's DMA and CPU agents streaming the same target cost each other;
//! * [`aggressor`]: the GPU as a DMA aggressor of the memory families
//!   ([`bench_core::dma`]: `mem.interference`'s `gpu` column).
//!
//! See docs/gpu.md for the method and the conventions.
#![deny(missing_docs)]

pub mod aggressor;
pub mod config;
pub mod contention;
pub mod copy;
pub mod cost;
pub mod cuda;
pub mod discovery;
pub mod host;
pub mod plan;
pub mod pool;
pub mod shape;
pub mod with_cpu;

/// The family name in `skipped` when no GPU can be used.
pub const FAMILY: &str = "gpu";
