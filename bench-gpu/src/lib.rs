//! # bench-gpu
//!
//! GPU <-> host-memory-pool DMA bandwidth and contention (seed 003) through the CUDA
//! driver API, loaded dynamically so that the same binary runs without CUDA. Not
//! implemented yet: `cxlchar` reports this family as skipped with that reason.
#![deny(missing_docs)]

/// Why this family produces no measurements yet (reported as the skip reason).
pub const NOT_IMPLEMENTED: &str = "the GPU DMA family is not implemented in this version";
