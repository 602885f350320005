//! The pool: a memory window several processes or hosts map at once, and the header at
//! its start through which two runs find each other (no network needed).
//!
//! A pool is a shared file (`/dev/shm/...` by default, or any `file:` path), a device-dax
//! (`dax:/dev/daxX.Y`) or a PCI BAR (`pci:DOMAIN:BUS:DEV.FN/BAR` as in `cxlchar pcie`, or
//! its resource file `pci:/sys/bus/pci/devices/<bdf>/resourceN`), with
//! an `--offset` and `--len` inside it. Writing into a device destroys its contents:
//! `dax:` and `pci:` need `allow_write`; a window whose header shows foreign data or
//! another live run is refused unless `force`.
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

use crate::cacheline::{flush_range, invalidate_method, invalidate_range, FlushMethod};
use bench_core::pci::BarSpec;
use memmap2::{MmapMut, MmapOptions};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `CXLCPOOL`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"CXLCPOOL");
/// Version of the header layout; runs with different versions refuse to pair.
pub const LAYOUT_VERSION: u64 = 1;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 4096;
/// Smallest usable window: header plus two 32 KiB rings.
pub const MIN_POOL_BYTES: usize = HEADER_BYTES + 2 * (32 * 1024 + crate::ring::RING_HEADER);
/// Default window length.
pub const DEFAULT_POOL_BYTES: usize = 32 << 20;

/// Offsets of header words.
pub mod off {
    /// Magic.
    pub const MAGIC: usize = 0;
    /// Layout version.
    pub const VERSION: usize = 8;
    /// Window length.
    pub const LEN: usize = 16;
    /// Run id.
    pub const RUN_ID: usize = 24;
    /// State.
    pub const STATE: usize = 32;
    /// Leader pid.
    pub const LEADER_PID: usize = 256;
    /// Leader heartbeat.
    pub const LEADER_HB: usize = 264;
    /// Follower pid.
    pub const FOLLOWER_PID: usize = 512;
    /// Follower heartbeat.
    pub const FOLLOWER_HB: usize = 520;
    /// Follower's copy of the run id it joined.
    pub const FOLLOWER_RUN: usize = 528;
    /// Command sequence.
    pub const CMD_SEQ: usize = 768;
    /// Command op.
    pub const CMD_OP: usize = 776;
    /// Command arguments (4 words).
    pub const CMD_ARGS: usize = 784;
    /// Last command done.
    pub const DONE_SEQ: usize = 1024;
    /// Status of the last command (0 = ok).
    pub const DONE_STATUS: usize = 1032;
    /// Flag leader → follower.
    pub const FLAG_LF: usize = 1280;
    /// Flag follower → leader.
    pub const FLAG_FL: usize = 1536;
}

/// States of the header.
pub mod state {
    /// A leader waits for a follower.
    pub const WAITING: u64 = 1;
    /// Both present.
    pub const PAIRED: u64 = 2;
    /// Finished cleanly.
    pub const DONE: u64 = 3;
    /// Ended by an error.
    pub const ABORTED: u64 = 4;
}

/// Errors of pool setup and messaging. Each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Bad pool spec.
    #[error("bad pool spec '{0}': use file:PATH, dax:/dev/daxX.Y or pci:DOMAIN:BUS:DEV.FN/BAR (as `cxlchar pcie list` shows it; a resource file path pci:/sys/bus/pci/devices/<bdf>/resourceN also works)")]
    Spec(String),
    /// Bad role.
    #[error("bad role '{0}': use leader or follower")]
    Role(String),
    /// Writing into a device without consent.
    #[error("pool {0} is a device: writing into it destroys its contents; pass --allow-write to accept that")]
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
    Io {
        /// What was attempted.
        what: &'static str,
        /// The path.
        path: String,
        /// The error.
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
        /// Version found.
        theirs: u64,
        /// Ours.
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
        /// Who.
        peer: &'static str,
        /// Seconds without a heartbeat.
        secs: f64,
    },
    /// The peer gave up.
    #[error("the {0} aborted the run")]
    PeerAborted(&'static str),
    /// The peer reported a failed command.
    #[error("the follower reported an error in command {op} (status {status}): {what}")]
    Command {
        /// Op code.
        op: u64,
        /// Status.
        status: u64,
        /// Meaning.
        what: &'static str,
    },
    /// Non-coherent mode without a flush instruction.
    #[error("non-coherent mode needs a cache flush instruction: {0}")]
    NoFlush(String),
}

/// Where the pool lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolSource {
    /// A shared file (created when missing).
    File(PathBuf),
    /// A device-dax.
    Dax(PathBuf),
    /// A PCI BAR, by its sysfs resource file (`/sys/bus/pci/devices/<bdf>/resourceN`).
    Pci(PathBuf),
}

impl FromStr for PoolSource {
    type Err = PoolError;
    fn from_str(s: &str) -> Result<Self, PoolError> {
        let (kind, path) = s.split_once(':').unwrap_or(("file", s));
        if path.is_empty() {
            return Err(PoolError::Spec(s.into()));
        }
        match kind {
            "file" => Ok(PoolSource::File(path.into())),
            "dax" => Ok(PoolSource::Dax(path.into())),
            "pci" if path.starts_with('/') => Ok(PoolSource::Pci(path.into())),
            "pci" => {
                // The same spelling as `cxlchar pcie` (`pci:DOMAIN:BUS:DEV.FN/BAR`).
                let bar: BarSpec = s.parse().map_err(|_| PoolError::Spec(s.into()))?;
                Ok(PoolSource::Pci(bar.resource_path()))
            }
            _ => Err(PoolError::Spec(s.into())),
        }
    }
}

impl std::fmt::Display for PoolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolSource::File(p) => write!(f, "file:{}", p.display()),
            PoolSource::Dax(p) => write!(f, "dax:{}", p.display()),
            PoolSource::Pci(p) => match BarSpec::from_resource_path(p) {
                Some(bar) => write!(f, "{bar}"),
                None => write!(f, "pci:{}", p.display()),
            },
        }
    }
}

/// Role in a two-sided run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Drives the tests and writes the results.
    Leader,
    /// Answers.
    Follower,
}

impl FromStr for Role {
    type Err = PoolError;
    fn from_str(s: &str) -> Result<Self, PoolError> {
        match s {
            "leader" => Ok(Role::Leader),
            "follower" => Ok(Role::Follower),
            _ => Err(PoolError::Role(s.into())),
        }
    }
}

/// A pool window and how to open it.
#[derive(Debug, Clone)]
pub struct PoolSpec {
    /// Where.
    pub source: PoolSource,
    /// Byte offset of the window (a multiple of the page size).
    pub offset: u64,
    /// Window length (bytes).
    pub len: usize,
    /// Writing into dax/pci is allowed.
    pub allow_write: bool,
    /// Overwrite foreign data / take over a live run.
    pub force: bool,
}

/// A mapped pool window.
#[derive(Debug)]
pub struct PoolMap {
    map: MmapMut,
    name: String,
}

impl PoolMap {
    /// Maps the window (creating a missing file of the `file:` kind).
    pub fn open(spec: &PoolSpec) -> Result<PoolMap, PoolError> {
        if spec.len < MIN_POOL_BYTES {
            return Err(PoolError::TooSmall {
                have: spec.len,
                need: MIN_POOL_BYTES,
            });
        }
        let name = spec.source.to_string();
        let io = |what: &'static str, path: &Path, err| PoolError::Io {
            what,
            path: path.display().to_string(),
            err,
        };
        let (path, is_file) = match &spec.source {
            PoolSource::File(p) => (p, true),
            PoolSource::Dax(p) | PoolSource::Pci(p) => {
                if !spec.allow_write {
                    return Err(PoolError::NeedsAllowWrite(name));
                }
                (p, false)
            }
        };
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(is_file)
            .truncate(false)
            .open(path)
            .map_err(|e| io("opening", path, e))?;
        let end = spec.offset + spec.len as u64;
        if is_file {
            let cur = f
                .metadata()
                .map_err(|e| io("reading size of", path, e))?
                .len();
            if cur < end {
                f.set_len(end).map_err(|e| io("resizing", path, e))?;
            }
        } else if let PoolSource::Pci(_) = spec.source {
            let cur = f
                .metadata()
                .map_err(|e| io("reading size of", path, e))?
                .len();
            if cur < end {
                return Err(PoolError::TooSmall {
                    have: cur.saturating_sub(spec.offset) as usize,
                    need: spec.len,
                });
            }
        }
        // SAFETY: a shared mapping of a file/device the user chose as a pool; other
        // processes writing into it concurrently is the point, and every access goes
        // through atomics or raw-pointer copies, never through Rust references to the
        // bytes.
        let map = unsafe {
            MmapOptions::new()
                .offset(spec.offset)
                .len(spec.len)
                .map_mut(&f)
        }
        .map_err(|e| io("mapping", path, e))?;
        Ok(PoolMap { map, name })
    }

    /// Base address.
    pub fn ptr(&self) -> *mut u8 {
        self.map.as_ptr() as *mut u8
    }
    /// Window length.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// Whether the window is empty (never: open refuses small windows).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// The pool's name (its spec).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The header view of this window.
    pub fn header(&self) -> Header {
        Header {
            base: self.ptr(),
            inval: invalidate_method().ok(),
        }
    }
    /// Bytes of each ring region (header excluded), and their offsets.
    pub fn rings(&self) -> [(usize, usize); 2] {
        let half = ((self.len() - HEADER_BYTES) / 2) & !63;
        [(HEADER_BYTES, half), (HEADER_BYTES + half, half)]
    }
}

/// Access to the header words. Every access is written back / invalidated when the CPU
/// has a flush instruction, so the header works on non-coherent memory too.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    base: *mut u8,
    inval: Option<FlushMethod>,
}

// SAFETY: the header lives in a mapping that outlives every Header (the PoolMap is kept
// by the caller) and is only accessed through atomics.
unsafe impl Send for Header {}

impl Header {
    fn word(&self, off: usize) -> &AtomicU64 {
        assert!(off < HEADER_BYTES && off.is_multiple_of(8));
        // SAFETY: inside the mapped header, 8-aligned (mappings are page aligned).
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }
    /// Reads a word (invalidating its line first).
    pub fn load(&self, off: usize) -> u64 {
        if let Some(m) = self.inval {
            // SAFETY: mapped header line; method available.
            unsafe { invalidate_range(m, self.base.add(off), 8) };
        }
        u64::from_le(self.word(off).load(Ordering::Acquire))
    }
    /// Writes a word (writing its line back after).
    pub fn store(&self, off: usize, v: u64) {
        self.word(off).store(v.to_le(), Ordering::Release);
        if let Some(m) = self.inval {
            // SAFETY: as above.
            unsafe { flush_range(m, self.base.add(off), 8) };
        }
    }
    /// Compare-and-swap on a word (for pairing; needs atomics that reach the memory).
    pub fn cas(&self, off: usize, old: u64, new: u64) -> bool {
        if let Some(m) = self.inval {
            // SAFETY: as above.
            unsafe { invalidate_range(m, self.base.add(off), 8) };
        }
        let ok = self
            .word(off)
            .compare_exchange(
                old.to_le(),
                new.to_le(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok();
        if let Some(m) = self.inval {
            // SAFETY: as above.
            unsafe { flush_range(m, self.base.add(off), 8) };
        }
        ok
    }
    /// The raw address of a word (for timed flag loops).
    pub fn word_ptr(&self, off: usize) -> *mut u8 {
        assert!(off < HEADER_BYTES);
        // SAFETY: inside the header.
        unsafe { self.base.add(off) }
    }
}

/// Liveness of the two sides: bumps our heartbeat, watches the peer's, and fails when
/// the peer is silent for longer than the peer timeout (or, for a forked follower, has
/// exited).
#[derive(Debug)]
pub struct Link {
    /// The header.
    pub hdr: Header,
    /// Our role.
    pub role: Role,
    /// How long the peer may stay silent.
    pub peer_timeout: Duration,
    /// A forked follower's pid, checked with waitpid.
    pub child: Option<libc::pid_t>,
    spins: u32,
    last_tick: Instant,
    peer_hb: u64,
    peer_seen: Instant,
    my_hb: u64,
}

impl Link {
    /// A link for `role` over `hdr`.
    pub fn new(hdr: Header, role: Role, peer_timeout: Duration) -> Link {
        let now = Instant::now();
        let mut l = Link {
            hdr,
            role,
            peer_timeout,
            child: None,
            spins: 0,
            last_tick: now,
            peer_hb: 0,
            peer_seen: now,
            my_hb: 0,
        };
        l.peer_hb = hdr.load(l.peer_hb_off());
        l.my_hb = hdr.load(l.my_hb_off());
        l
    }
    fn my_hb_off(&self) -> usize {
        match self.role {
            Role::Leader => off::LEADER_HB,
            Role::Follower => off::FOLLOWER_HB,
        }
    }
    fn peer_hb_off(&self) -> usize {
        match self.role {
            Role::Leader => off::FOLLOWER_HB,
            Role::Follower => off::LEADER_HB,
        }
    }
    /// The peer's name.
    pub fn peer(&self) -> &'static str {
        match self.role {
            Role::Leader => "follower",
            Role::Follower => "leader",
        }
    }
    /// Called in every wait loop: cheap except once per 1024 calls, when it checks the
    /// clock and, every millisecond, beats and checks the peer.
    #[inline]
    pub fn spin(&mut self) -> Result<(), PoolError> {
        std::hint::spin_loop();
        self.spins = self.spins.wrapping_add(1);
        if !self.spins.is_multiple_of(1024) {
            return Ok(());
        }
        self.tick()
    }
    /// Beats now and checks the peer.
    pub fn tick(&mut self) -> Result<(), PoolError> {
        let now = Instant::now();
        if now.duration_since(self.last_tick) < Duration::from_millis(1) {
            return Ok(());
        }
        // A long gap since our last tick means we were busy in waits that kept
        // returning, i.e. the peer made progress: count that as a sign of life.
        if now.duration_since(self.last_tick) > Duration::from_millis(50) {
            self.peer_seen = now;
        }
        self.last_tick = now;
        self.my_hb += 1;
        self.hdr.store(self.my_hb_off(), self.my_hb);
        let hb = self.hdr.load(self.peer_hb_off());
        if hb != self.peer_hb {
            self.peer_hb = hb;
            self.peer_seen = now;
        }
        if self.hdr.load(off::STATE) == state::ABORTED {
            return Err(PoolError::PeerAborted(self.peer()));
        }
        if let Some(pid) = self.child {
            let mut status = 0;
            // SAFETY: waitpid on our own child with WNOHANG does not block.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                self.child = None;
                return Err(PoolError::PeerLost {
                    peer: self.peer(),
                    secs: 0.0,
                });
            }
        }
        let silent = now.duration_since(self.peer_seen);
        if silent > self.peer_timeout {
            return Err(PoolError::PeerLost {
                peer: self.peer(),
                secs: silent.as_secs_f64(),
            });
        }
        Ok(())
    }
    /// Marks the run aborted (best effort, for the peer to see).
    pub fn abort(&self) {
        self.hdr.store(off::STATE, state::ABORTED);
    }
}

fn header_is_zero(h: &Header) -> bool {
    (0..64).step_by(8).all(|o| h.load(o) == 0)
}

fn heartbeat_advancing(h: &Header, wait: Duration) -> bool {
    let a = (h.load(off::LEADER_HB), h.load(off::FOLLOWER_HB));
    std::thread::sleep(wait);
    let b = (h.load(off::LEADER_HB), h.load(off::FOLLOWER_HB));
    a != b
}

/// Checks whether the leader may (re)initialize this window; the safety rules of the
/// module doc. `probe` is how long to watch heartbeats of a run that looks live.
pub fn check_leader_may_claim(
    pool: &PoolMap,
    force: bool,
    probe: Duration,
) -> Result<(), PoolError> {
    let h = pool.header();
    if force || header_is_zero(&h) {
        return Ok(());
    }
    if h.load(off::MAGIC) != MAGIC {
        return Err(PoolError::Foreign(pool.name().into()));
    }
    let v = h.load(off::VERSION);
    if v != LAYOUT_VERSION {
        return Err(PoolError::Version {
            theirs: v,
            ours: LAYOUT_VERSION,
        });
    }
    let st = h.load(off::STATE);
    if (st == state::WAITING || st == state::PAIRED) && heartbeat_advancing(&h, probe) {
        return Err(PoolError::InUse(pool.name().into()));
    }
    Ok(())
}

/// Leader side of the rendezvous: claims the window, writes the header, waits for the
/// follower to pair. Returns the run id.
pub fn leader_rendezvous(
    pool: &PoolMap,
    force: bool,
    timeout: Duration,
    link: &mut Link,
) -> Result<u64, PoolError> {
    check_leader_may_claim(pool, force, Duration::from_millis(50))?;
    let h = pool.header();
    // Clear the header, then publish it with the magic last.
    for o in (0..HEADER_BYTES).step_by(8) {
        h.store(o, 0);
    }
    let run_id = {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        (t ^ ((std::process::id() as u64) << 32)) | 1
    };
    h.store(off::VERSION, LAYOUT_VERSION);
    h.store(off::LEN, pool.len() as u64);
    h.store(off::RUN_ID, run_id);
    h.store(off::LEADER_PID, std::process::id() as u64);
    h.store(off::STATE, state::WAITING);
    h.store(off::MAGIC, MAGIC);
    let t0 = Instant::now();
    loop {
        if h.load(off::STATE) == state::PAIRED && h.load(off::FOLLOWER_RUN) == run_id {
            link.peer_seen = Instant::now();
            return Ok(run_id);
        }
        if t0.elapsed() > timeout {
            h.store(off::STATE, state::ABORTED);
            return Err(PoolError::NoPeer {
                peer: "follower",
                secs: timeout.as_secs_f64(),
            });
        }
        // Beat while waiting (the peer check cannot fail before pairing: we reset it).
        link.peer_seen = Instant::now();
        link.spins = 0;
        link.last_tick = Instant::now() - Duration::from_millis(2);
        link.tick()?;
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Follower side: waits for a leader's header (right magic and version, waiting), then
/// pairs with it. Returns the run id.
pub fn follower_rendezvous(
    pool: &PoolMap,
    timeout: Duration,
    link: &mut Link,
) -> Result<u64, PoolError> {
    let h = pool.header();
    let t0 = Instant::now();
    loop {
        if h.load(off::MAGIC) == MAGIC {
            let v = h.load(off::VERSION);
            if v != LAYOUT_VERSION {
                return Err(PoolError::Version {
                    theirs: v,
                    ours: LAYOUT_VERSION,
                });
            }
            if h.load(off::STATE) == state::WAITING {
                let run = h.load(off::RUN_ID);
                h.store(off::FOLLOWER_PID, std::process::id() as u64);
                h.store(off::FOLLOWER_RUN, run);
                if h.cas(off::STATE, state::WAITING, state::PAIRED) {
                    link.peer_hb = h.load(off::LEADER_HB);
                    link.peer_seen = Instant::now();
                    return Ok(run);
                }
            }
        }
        if t0.elapsed() > timeout {
            return Err(PoolError::NoPeer {
                peer: "leader",
                secs: timeout.as_secs_f64(),
            });
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &Path) -> PoolSpec {
        PoolSpec {
            source: PoolSource::File(path.into()),
            offset: 0,
            len: MIN_POOL_BYTES,
            allow_write: false,
            force: false,
        }
    }

    #[test]
    fn specs_and_roles_parse_or_say_what_is_allowed() {
        assert_eq!(
            "dax:/dev/dax0.0".parse::<PoolSource>().unwrap(),
            PoolSource::Dax("/dev/dax0.0".into())
        );
        assert_eq!(
            "/dev/shm/x".parse::<PoolSource>().unwrap(),
            PoolSource::File("/dev/shm/x".into())
        );
        assert!(matches!(
            "nvme:/x".parse::<PoolSource>(),
            Err(PoolError::Spec(_))
        ));
        // A BAR has one spelling in output, whichever of its two forms was given.
        let by_bar = "pci:0000:00:04.0/2".parse::<PoolSource>().unwrap();
        let by_path = "pci:/sys/bus/pci/devices/0000:00:04.0/resource2"
            .parse::<PoolSource>()
            .unwrap();
        assert_eq!(by_bar, by_path);
        assert_eq!(
            by_bar,
            PoolSource::Pci("/sys/bus/pci/devices/0000:00:04.0/resource2".into())
        );
        assert_eq!(by_bar.to_string(), "pci:0000:00:04.0/2");
        assert_eq!(
            "pci:/tmp/bar".parse::<PoolSource>().unwrap().to_string(),
            "pci:/tmp/bar"
        );
        for bad in ["pci:0000:00:04.0", "pci:00:04.0/2", "pci:0000:00:04.0/7"] {
            let e = bad.parse::<PoolSource>().unwrap_err().to_string();
            assert!(e.contains("pci:DOMAIN:BUS:DEV.FN/BAR"), "{bad}: {e}");
        }
        assert_eq!("leader".parse::<Role>().unwrap(), Role::Leader);
        let e = "boss".parse::<Role>().unwrap_err().to_string();
        assert!(e.contains("leader or follower"), "{e}");
    }

    #[test]
    fn devices_need_allow_write_and_small_windows_are_refused() {
        let s = PoolSpec {
            source: PoolSource::Dax("/dev/dax9.9".into()),
            ..spec(Path::new("/nonexistent"))
        };
        assert!(matches!(
            PoolMap::open(&s),
            Err(PoolError::NeedsAllowWrite(_))
        ));
        let s = PoolSpec {
            source: PoolSource::Pci("/sys/bus/pci/devices/0000:00:00.0/resource9".into()),
            ..spec(Path::new("/nonexistent"))
        };
        assert!(matches!(
            PoolMap::open(&s),
            Err(PoolError::NeedsAllowWrite(_))
        ));
        let dir = tempfile::tempdir().unwrap();
        let s = PoolSpec {
            len: 4096,
            ..spec(&dir.path().join("p"))
        };
        let e = PoolMap::open(&s).unwrap_err();
        assert!(matches!(e, PoolError::TooSmall { .. }), "{e}");
    }

    #[test]
    fn foreign_data_is_refused_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pool");
        std::fs::write(&p, vec![0x5au8; MIN_POOL_BYTES]).unwrap();
        let pool = PoolMap::open(&spec(&p)).unwrap();
        let e = check_leader_may_claim(&pool, false, Duration::ZERO).unwrap_err();
        assert!(matches!(e, PoolError::Foreign(_)), "{e}");
        assert!(e.to_string().contains("--force"));
        check_leader_may_claim(&pool, true, Duration::ZERO).unwrap();
        // The file was not touched by the refusal.
        assert!(std::fs::read(&p).unwrap().iter().all(|&b| b == 0x5a));
    }

    #[test]
    fn a_live_run_is_refused_and_a_stale_one_reclaimed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pool");
        let pool = PoolMap::open(&spec(&p)).unwrap();
        let h = pool.header();
        h.store(off::MAGIC, MAGIC);
        h.store(off::VERSION, LAYOUT_VERSION);
        h.store(off::STATE, state::PAIRED);
        // Stale: no heartbeat moves.
        check_leader_may_claim(&pool, false, Duration::from_millis(5)).unwrap();
        // Live: a thread beats.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let beat = std::thread::spawn(move || {
            let mut n = 0;
            while !s2.load(Ordering::Relaxed) {
                n += 1;
                h.store(off::LEADER_HB, n);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let e = check_leader_may_claim(&pool, false, Duration::from_millis(30)).unwrap_err();
        stop.store(true, Ordering::Relaxed);
        beat.join().unwrap();
        assert!(matches!(e, PoolError::InUse(_)), "{e}");
        // Another layout version is refused with both versions named.
        h.store(off::VERSION, 99);
        let e = check_leader_may_claim(&pool, false, Duration::ZERO).unwrap_err();
        assert!(e.to_string().contains("99"), "{e}");
    }

    #[test]
    fn follower_refuses_another_layout_version() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PoolMap::open(&spec(&dir.path().join("pool"))).unwrap();
        let h = pool.header();
        h.store(off::VERSION, LAYOUT_VERSION + 1);
        h.store(off::STATE, state::WAITING);
        h.store(off::MAGIC, MAGIC);
        let mut link = Link::new(h, Role::Follower, Duration::from_secs(1));
        let e = follower_rendezvous(&pool, Duration::from_secs(5), &mut link).unwrap_err();
        assert!(matches!(e, PoolError::Version { .. }), "{e}");
        assert_eq!(
            h.load(off::STATE),
            state::WAITING,
            "the follower must not pair"
        );
    }

    #[test]
    fn follower_without_leader_times_out_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PoolMap::open(&spec(&dir.path().join("pool"))).unwrap();
        let mut link = Link::new(pool.header(), Role::Follower, Duration::from_secs(1));
        let e = follower_rendezvous(&pool, Duration::from_millis(50), &mut link).unwrap_err();
        assert!(e.to_string().contains("no leader showed up"), "{e}");
    }

    #[test]
    fn leader_without_follower_times_out_and_marks_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PoolMap::open(&spec(&dir.path().join("pool"))).unwrap();
        let mut link = Link::new(pool.header(), Role::Leader, Duration::from_secs(1));
        let e = leader_rendezvous(&pool, false, Duration::from_millis(50), &mut link).unwrap_err();
        assert!(e.to_string().contains("no follower showed up"), "{e}");
        assert_eq!(pool.header().load(off::STATE), state::ABORTED);
        assert_eq!(pool.header().load(off::MAGIC), MAGIC);
    }
}
