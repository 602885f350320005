//! The pool header: its words ([`off`]), states ([`state`]), atomic access that works on
//! non-coherent memory ([`Header`]) and the rules under which a leader may claim a window
//! ([`check_leader_may_claim`]).

use super::{PoolError, PoolMap};
use crate::cacheline::{flush_range, invalidate_range, FlushMethod};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// `CXLCPOOL`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"CXLCPOOL");
/// Version of the header layout; runs with different versions refuse to pair.
pub const LAYOUT_VERSION: u64 = 1;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 4096;
/// Offsets of header words.
// Words named for what they hold.
#[allow(missing_docs)]
pub mod off {
    /// Holds [`super::MAGIC`], stored last once the rest is written.
    pub const MAGIC: usize = 0;
    /// Holds the leader's [`super::LAYOUT_VERSION`].
    pub const VERSION: usize = 8;
    /// Window length in bytes.
    pub const LEN: usize = 16;
    /// Run id the leader chose (never 0).
    pub const RUN_ID: usize = 24;
    /// One of the [`super::state`] values.
    pub const STATE: usize = 32;
    pub const LEADER_PID: usize = 256;
    /// Leader heartbeat.
    pub const LEADER_HB: usize = 264;
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
    /// The header at `base` (the start of a mapped pool window of at least
    /// [`HEADER_BYTES`]), invalidated/written back with `inval` where given.
    pub(crate) fn new(base: *mut u8, inval: Option<FlushMethod>) -> Header {
        Header { base, inval }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::spec::tests::spec;
    use crate::pool::{PoolSpec, MIN_POOL_BYTES};
    use bench_core::memory::MapError;

    #[test]
    fn foreign_data_is_refused_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pool");
        std::fs::write(&p, vec![0x5au8; MIN_POOL_BYTES]).unwrap();
        // The write guard refuses the window before mapping it writable.
        let e = PoolMap::open(&spec(&p)).unwrap_err();
        assert!(
            matches!(e, PoolError::Map(MapError::Foreign { at: 0, .. })),
            "{e}"
        );
        assert!(e.to_string().contains("--force"));
        // Mapped with --force, the leader's own check still sees no header of ours.
        let forced = PoolSpec {
            force: true,
            ..spec(&p)
        };
        let pool = PoolMap::open(&forced).unwrap();
        let e = check_leader_may_claim(&pool, false, Duration::ZERO).unwrap_err();
        assert!(matches!(e, PoolError::Foreign(_)), "{e}");
        check_leader_may_claim(&pool, true, Duration::ZERO).unwrap();
        // The file was not touched by the refusals.
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
}
