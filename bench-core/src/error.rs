//! Typed errors of the core, one variant per operation that can fail.

use std::path::PathBuf;

/// An error raised by the measurement core.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A CPU list could not be parsed.
    #[error("invalid CPU list '{spec}': {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    CpuList { spec: String, reason: String },
    /// A CPU was requested that the process may not run on.
    #[error("CPU {cpu} is not in the allowed set {allowed} (see taskset/cgroup cpuset)")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    CpuNotAllowed {
        cpu: usize,
        /// The allowed set, as a CPU list.
        allowed: String,
    },
    /// Pinning the current thread failed.
    #[error("could not pin the thread to CPU {cpu}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Pin { cpu: usize },
    /// A target specification could not be parsed or names something that does not exist.
    #[error("invalid target '{spec}': {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    TargetSpec { spec: String, reason: String },
    /// A target exists but could not be allocated or mapped (reported as skipped).
    #[error("target '{target}' is unavailable: {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    TargetUnavailable {
        target: String,
        /// Why (permissions, no hugepages reserved, ...).
        reason: String,
    },
    /// A target that would be overwritten, without `--allow-write` (the write guard).
    #[error("target '{target}' would be overwritten by the benchmarks; pass --allow-write to accept that its contents are destroyed")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    WriteNotAllowed { target: String },
    /// A mapping refused by the write guard, or failed.
    #[error(transparent)]
    Map(#[from] crate::memory::MapError),
    /// Reading a sysfs or procfs file failed.
    #[error("cannot read {path}: {source}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}
