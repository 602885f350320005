//! # bench-ibverbs
//!
//! RDMA verbs post/progress breakdown, latency and bandwidth (seed 004), behind the
//! `verbs` cargo feature so that the default build needs no RDMA libraries. Not
//! implemented yet: `cxlchar` reports this family as skipped with that reason.
#![deny(missing_docs)]

/// Why this family produces no measurements yet (reported as the skip reason).
pub const NOT_IMPLEMENTED: &str = "the RDMA verbs family is not implemented in this version";
