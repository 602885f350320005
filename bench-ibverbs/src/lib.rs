//! # bench-ibverbs
//!
//! RDMA verbs costs after seed 004 (Breaking Band): the post of a work request
//! (`llp_post_ns`, inline and not), the progress poll of the completion queue
//! (`llp_prog_ns`), the busy post on a full send queue (`busy_post_ns`), the injection
//! overhead per message (`inj_overhead_ns`, post + progress + misc) and message rate
//! (`msg_rate_mps`); ping-pong latency and streaming bandwidth over 8 B .. 1 MiB with a
//! Hockney fit (seed 000, [`bench_core::stats::hockney_fit`]).
//!
//! The measuring code is behind the `verbs` cargo feature (it links libibverbs); without
//! it the crate builds everywhere and [`bench::VerbsBench`] skips with
//! [`NOT_BUILT`]. The wire format and the configuration are always built (and
//! tested).
#![deny(missing_docs)]

pub mod bench;
pub mod config;
pub mod error;
#[cfg(feature = "verbs")]
pub mod rdma;
pub mod wire;

/// Skip reason of a build without the `verbs` feature.
pub const NOT_BUILT: &str = "built without the verbs feature: rebuild with --features verbs (needs libibverbs-dev, and cmake libnl-3-dev libnl-route-3-dev pkg-config libclang-dev to build ibverbs-sys)";

/// Whether this build can measure verbs.
pub const fn built_with_verbs() -> bool {
    cfg!(feature = "verbs")
}
