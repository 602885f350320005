//! # bench-ibverbs
//!
//! RDMA verbs costs after seed 004 (Breaking Band): the post of a work request
//! (`llp_post_ns`, inline and not), the progress poll of the completion queue
//! (`llp_prog_ns`), the busy post on a full send queue (`busy_post_ns`), the injection
//! overhead per message (`inj_overhead_ns`, post + progress + misc; the misc alone as
//! `inj_misc_ns`, [`inj_misc`]) and message rate
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

/// The RDMA device a run without `--device` uses (the first with an active port), or why
/// there is none: [`NOT_BUILT`] without the `verbs` feature, else the reason opening
/// failed (no RDMA device, no active port, ...).
pub fn default_device() -> Result<String, String> {
    #[cfg(feature = "verbs")]
    {
        rdma::open_device(None, None)
            .map(|d| d.name.clone())
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "verbs"))]
    {
        Err(NOT_BUILT.to_string())
    }
}

/// Seed 004's Misc of the injection stream from the p50s of one run:
/// `inj_overhead - llp_post_inline - llp_prog` (eq. 1 solved for Misc); `None` when noise
/// makes it negative (or a value is not finite): then no `inj_misc_ns` is published.
pub fn inj_misc(inj_overhead_ns: f64, llp_post_inline_ns: f64, llp_prog_ns: f64) -> Option<f64> {
    let m = inj_overhead_ns - llp_post_inline_ns - llp_prog_ns;
    (m.is_finite() && m >= 0.0).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::{default_device, inj_misc};

    /// Without the feature: NOT_BUILT; with it on a machine without RDMA (CI): a reason
    /// naming RDMA or the port; with a device: its name.
    #[test]
    fn default_device_names_the_device_or_says_why_not() {
        match default_device() {
            Err(why) if !super::built_with_verbs() => assert_eq!(why, super::NOT_BUILT),
            Err(why) => assert!(why.contains("RDMA") || why.contains("port"), "{why}"),
            Ok(name) => assert!(super::built_with_verbs() && !name.is_empty()),
        }
    }

    #[test]
    fn inj_misc_is_eq1_solved_for_misc_and_never_negative() {
        // Seed 004, Table 1 / Sec. 4.2: 295.73 - 175.42 - 61.63 = 58.68.
        let m = inj_misc(295.73, 175.42, 61.63).unwrap();
        assert!((m - 58.68).abs() < 1e-9, "{m}");
        assert_eq!(inj_misc(200.0, 150.0, 50.0), Some(0.0));
        assert_eq!(inj_misc(200.0, 160.0, 50.0), None);
        assert_eq!(inj_misc(f64::NAN, 1.0, 1.0), None);
    }
}
