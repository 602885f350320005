//! # bench-cxl
//!
//! Shared-memory-pool benchmarks (seeds 000 and 002): atomic latency on a target, the
//! core-to-core latency matrix, cache-flush costs by size, and cross-process /
//! cross-host messaging through a pool. Not implemented yet: `cxlchar` reports this
//! family as skipped with that reason.
#![deny(missing_docs)]

/// Why this family produces no measurements yet (reported as the skip reason).
pub const NOT_IMPLEMENTED: &str =
    "the pool family (atomics, c2c, flush, msg) is not implemented in this version";
