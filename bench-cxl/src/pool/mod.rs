//! The pool: a memory window several processes or hosts map at once, and the header at
//! its start through which two runs find each other (no network needed).
//!
//! A pool is a shared file (`/dev/shm/...` by default, or any `file:` path), a device-dax
//! (`dax:/dev/daxX.Y`) or a PCI BAR (`pci:DOMAIN:BUS:DEV.FN/BAR` as in `cxlchar pcie`, or
//! its resource file `pci:/sys/bus/pci/devices/<bdf>/resourceN`), with
//! an `--offset` and `--len` inside it. Writing into it destroys its contents: every pool
//! but the fresh scratch file cxlchar creates itself ([`PoolSpec::scratch`]) needs
//! `allow_write`; the write guard refuses, before anything is created, grown or written, a
//! window holding anything but zeros or a pool header (foreign data), and the leader one
//! whose header shows another live run, unless `force`.
//!
//! Header layout (first 4 KiB of the window; u64 little-endian words, each group on its
//! own 256 B so the two sides never share a line):
//!
//! | offset | field | written by |
//! |---|---|---|
//! | 0 | magic `CXLCPOOL` | leader |
//! | 8 | layout version ([`LAYOUT_VERSION`]) | leader |
//! | 16 | window length in bytes | leader |
//! | 24 | run id (random) | leader |
//! | 32 | state: 1 waiting for follower, 2 paired, 3 done, 4 aborted | leader, follower (2) |
//! | 256 | leader pid, 264 leader heartbeat (counter) | leader |
//! | 512 | follower pid, 520 follower heartbeat, 528 follower's run id echo | follower |
//! | 768 | command: sequence, op, 4 arguments | leader |
//! | 1024 | reply: sequence done, status | follower |
//! | 1280 | flag leader → follower | leader |
//! | 1536 | flag follower → leader | follower |
//!
//! After the header come two rings ([`crate::ring`]): leader → follower, then follower
//! → leader, each half of the rest.
//!
//! The module is split along its concerns: [`spec`] (where the pool is and how it is
//! mapped: a window of a bench-core [`Region`](bench_core::memory::Region), through the
//! write guard), [`header`] (the header words and the leader's claim rules) and [`link`]
//! (heartbeats and the rendezvous).

pub mod header;
pub mod link;
pub mod spec;

pub use header::{check_leader_may_claim, off, state, Header, HEADER_BYTES, LAYOUT_VERSION, MAGIC};
pub use link::{claim_header, follower_rendezvous, leader_rendezvous, Link};
pub use spec::{rings_of, PoolMap, PoolSource, PoolSpec, Role, DEFAULT_POOL_BYTES, MIN_POOL_BYTES};

/// Errors of pool setup and messaging. Each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Bad pool spec.
    #[error("bad pool spec '{0}': use file:PATH, dax:/dev/daxX.Y, cxl:regionN (its devdax device) or pci:DOMAIN:BUS:DEV.FN/BAR (as `cxlchar pcie list` shows it; a resource file path pci:/sys/bus/pci/devices/<bdf>/resourceN also works)")]
    Spec(String),
    /// A `cxl:` pool that does not name a CXL region with a devdax device.
    #[error("pool {spec}: {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Cxl {
        spec: String,
        /// Why it does not resolve to a devdax device.
        reason: String,
    },
    /// Bad role.
    #[error("bad role '{0}': use leader or follower")]
    Role(String),
    /// Writing into a user's file or a device without consent.
    #[error("pool {0} is not cxlchar's own memory (a file or a device you named): writing into it destroys its contents; pass --allow-write to accept that")]
    NeedsAllowWrite(String),
    /// The window is too small.
    #[error("pool window of {have} bytes is too small: at least {need} bytes are needed (--len)")]
    TooSmall {
        /// Bytes available.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
    /// I/O on the pool.
    #[error("{what} {path}: {err}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Io {
        /// What was attempted.
        what: &'static str,
        path: String,
        err: std::io::Error,
    },
    /// The window holds something that is not ours.
    #[error("pool {0} holds foreign data (no cxlchar header at offset 0 of the window); pass --force to overwrite it")]
    Foreign(String),
    /// Another run is live.
    #[error("pool {0} is in use by another cxlchar run (its heartbeat is advancing); pass --force to take it over")]
    InUse(String),
    /// Layout versions differ.
    #[error("pool header has layout version {theirs}, this cxlchar uses {ours}: run the same cxlchar version on both sides")]
    Version {
        /// Layout version in the pool header.
        theirs: u64,
        /// Layout version of this cxlchar.
        ours: u64,
    },
    /// No peer appeared.
    #[error("no {peer} showed up within {secs:.0} s: start `cxlchar pool msg --role {peer} --pool <same pool>` on the other side (or raise --timeout)")]
    NoPeer {
        /// Who was awaited.
        peer: &'static str,
        /// Seconds waited.
        secs: f64,
    },
    /// The peer stopped.
    #[error("the {peer} stopped responding (no heartbeat for {secs:.1} s): the run is abandoned")]
    PeerLost {
        /// Its role (`leader` or `follower`).
        peer: &'static str,
        /// Seconds without a heartbeat.
        secs: f64,
    },
    /// The peer gave up.
    #[error("the {0} aborted the run")]
    PeerAborted(&'static str),
    /// The peer reported a failed command.
    #[error("the follower reported an error in command {op} (status {status}): {what}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Command {
        op: u64,
        status: u64,
        /// What the status means.
        what: &'static str,
    },
    /// The write guard refused the pool, or mapping it failed.
    #[error(transparent)]
    Map(#[from] bench_core::memory::MapError),
    /// Non-coherent mode without a flush instruction.
    #[error("non-coherent mode needs a cache flush instruction: {0}")]
    NoFlush(String),
}
