//! Typed errors of the core, one variant per operation that can fail.

use std::path::PathBuf;

/// An error raised by the measurement core.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A CPU list could not be parsed.
    #[error("invalid CPU list '{spec}': {reason}")]
    CpuList {
        /// The text given.
        spec: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A CPU was requested that the process may not run on.
    #[error("CPU {cpu} is not in the allowed set {allowed} (see taskset/cgroup cpuset)")]
    CpuNotAllowed {
        /// The CPU asked for.
        cpu: usize,
        /// The allowed set, as a CPU list.
        allowed: String,
    },
    /// Pinning the current thread failed.
    #[error("could not pin the thread to CPU {cpu}")]
    Pin {
        /// The CPU asked for.
        cpu: usize,
    },
    /// A target specification could not be parsed or names something that does not exist.
    #[error("invalid target '{spec}': {reason}")]
    TargetSpec {
        /// The text given.
        spec: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A target exists but could not be allocated or mapped (reported as skipped).
    #[error("target '{target}' is unavailable: {reason}")]
    TargetUnavailable {
        /// The target.
        target: String,
        /// Why (permissions, no hugepages reserved, ...).
        reason: String,
    },
    /// A target that would be overwritten, without `--allow-write` (the write guard).
    #[error("target '{target}' would be overwritten by the benchmarks; pass --allow-write to accept that its contents are destroyed")]
    WriteNotAllowed {
        /// The target.
        target: String,
    },
    /// A mapping refused by the write guard, or failed.
    #[error(transparent)]
    Map(#[from] crate::memory::MapError),
    /// Reading a sysfs or procfs file failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
