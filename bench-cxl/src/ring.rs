//! A single-producer single-consumer byte ring in shared memory (cMPI's message queues
//! in a dax arena), usable coherently (plain stores/loads with release/acquire) or
//! non-coherently (the producer flushes what it wrote and fences; the consumer
//! invalidates before it reads).
//!
//! Layout at the ring's base (all offsets in bytes):
//!
//! | offset | field | written by |
//! |---|---|---|
//! | 0 | `head`: bytes published, ever (u64) | producer |
//! | 128 | `tail`: bytes consumed, ever (u64) | consumer |
//! | 192 | `capacity` of the data area (u64, a power of two) | initializer |
//! | 256.. | data: records of `len: u64` + payload, padded to 64 B | producer |
//!
//! A record that does not fit before the end of the data area is preceded by a pad
//! marker (`len = u64::MAX`) and starts again at offset 0 of the data area.

use crate::cacheline::{flush_range, invalidate_range, FlushMethod, LINE};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes before the data area.
pub const RING_HEADER: usize = 256;
pub(crate) const HEAD: usize = 0;
pub(crate) const TAIL: usize = 128;
pub(crate) const CAP: usize = 192;
const PAD: u64 = u64::MAX;

/// How the two sides keep each other's view of the ring correct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coherence {
    /// Hardware coherence: plain stores and loads, release/acquire ordering.
    Coherent,
    /// No coherence: writer flushes (with this method) and fences; reader invalidates.
    NonCoherent(FlushMethod),
}

impl Coherence {
    /// Name used in keys (`coherent`, `noncoherent`).
    pub fn name(self) -> &'static str {
        match self {
            Coherence::Coherent => "coherent",
            Coherence::NonCoherent(_) => "noncoherent",
        }
    }
}

/// Errors of ring setup.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RingError {
    /// The memory given cannot hold a ring.
    #[error("{0} bytes cannot hold a ring (needs at least {min})", min = RING_HEADER + 2 * LINE)]
    TooSmall(usize),
    /// The ring header does not hold a valid capacity.
    #[error("ring header holds capacity {0}, not a power of two that fits the memory")]
    BadHeader(u64),
}

/// Capacity of the data area a ring of `bytes` gets (a power of two).
pub fn capacity_for(bytes: usize) -> usize {
    let avail = bytes.saturating_sub(RING_HEADER);
    if avail < 2 * LINE {
        0
    } else {
        1usize << (usize::BITS - 1 - avail.leading_zeros())
    }
}

fn record_len(len: usize) -> usize {
    (8 + len).next_multiple_of(LINE)
}

/// The shared header words and data area of a queue in shared memory (this ring, and
/// the cell queue of [`crate::cells`]).
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) base: *mut u8,
    pub(crate) cap: usize,
    pub(crate) mode: Coherence,
}

// SAFETY: the ring's memory is shared by design; each field of the header has one
// writer (producer or consumer) and is accessed atomically; data bytes are only read
// after their publication through `head` (acquire) and only overwritten after their
// release through `tail`.
unsafe impl Send for Shared {}

impl Shared {
    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: off is a word of the header (HEAD/TAIL/CAP, or a cell queue's), inside
        // it, 8-aligned (base is 64-aligned, checked at construction).
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }
    pub(crate) fn load(&self, off: usize) -> u64 {
        if let Coherence::NonCoherent(m) = self.mode {
            // SAFETY: the line is inside the mapped header; m is available.
            unsafe { invalidate_range(m, self.base.add(off), 8) };
        }
        self.word(off).load(Ordering::Acquire)
    }
    pub(crate) fn store(&self, off: usize, v: u64) {
        self.word(off).store(v, Ordering::Release);
        if let Coherence::NonCoherent(m) = self.mode {
            // SAFETY: as above.
            unsafe { flush_range(m, self.base.add(off), 8) };
        }
    }
    pub(crate) fn data(&self, pos: usize) -> *mut u8 {
        // SAFETY: pos < cap; the data area is cap bytes after the header.
        unsafe { self.base.add(RING_HEADER + pos) }
    }
}

/// Initializes a ring in `[base, base+bytes)` (empty, capacity written).
///
/// # Safety
/// The range must be mapped, writable, 64-byte aligned, and not used as a ring by
/// anyone while this runs.
pub unsafe fn init(base: *mut u8, bytes: usize, mode: Coherence) -> Result<(), RingError> {
    let cap = capacity_for(bytes);
    if cap == 0 || !(base as usize).is_multiple_of(LINE) {
        return Err(RingError::TooSmall(bytes));
    }
    let s = Shared { base, cap, mode };
    s.store(HEAD, 0);
    s.store(TAIL, 0);
    s.store(CAP, cap as u64);
    Ok(())
}

fn attach(base: *mut u8, bytes: usize, mode: Coherence) -> Result<Shared, RingError> {
    if capacity_for(bytes) == 0 || !(base as usize).is_multiple_of(LINE) {
        return Err(RingError::TooSmall(bytes));
    }
    let s = Shared { base, cap: 0, mode };
    let cap = s.load(CAP);
    if !cap.is_power_of_two() || cap as usize > capacity_for(bytes) {
        return Err(RingError::BadHeader(cap));
    }
    Ok(Shared {
        base,
        cap: cap as usize,
        mode,
    })
}

/// The sending side.
#[derive(Debug)]
pub struct Producer {
    s: Shared,
    head: u64,
    tail_seen: u64,
}

/// The receiving side.
#[derive(Debug)]
pub struct Consumer {
    s: Shared,
    tail: u64,
    head_seen: u64,
}

impl Producer {
    /// Attaches to an initialized ring.
    ///
    /// # Safety
    /// The range must be mapped, hold an initialized ring, and have no other producer.
    pub unsafe fn attach(
        base: *mut u8,
        bytes: usize,
        mode: Coherence,
    ) -> Result<Producer, RingError> {
        let s = attach(base, bytes, mode)?;
        let head = s.load(HEAD);
        let tail_seen = s.load(TAIL);
        Ok(Producer { s, head, tail_seen })
    }

    /// Largest message this ring carries.
    pub fn max_message(&self) -> usize {
        self.s.cap / 2 - LINE
    }

    /// Sends `msg` if there is room now; false otherwise.
    pub fn try_send(&mut self, msg: &[u8]) -> bool {
        assert!(
            msg.len() <= self.max_message(),
            "message larger than the ring allows"
        );
        let cap = self.s.cap as u64;
        let need = record_len(msg.len()) as u64;
        let pos = self.head % cap;
        let contiguous = cap - pos;
        let total = if need > contiguous {
            contiguous + need
        } else {
            need
        };
        if cap - (self.head - self.tail_seen) < total {
            self.tail_seen = self.s.load(TAIL);
            if cap - (self.head - self.tail_seen) < total {
                return false;
            }
        }
        let mut at = pos as usize;
        if need > contiguous {
            // SAFETY: at < cap, 64-aligned: 8 bytes of the data area.
            unsafe { (self.s.data(at) as *mut u64).write_volatile(PAD) };
            if let Coherence::NonCoherent(m) = self.s.mode {
                // SAFETY: mapped line; m available.
                unsafe { flush_range(m, self.s.data(at), 8) };
            }
            at = 0;
        }
        let p = self.s.data(at);
        // SAFETY: the record fits in [at, at+need) ⊂ data area, which the consumer has
        // released (free space checked above).
        unsafe {
            (p as *mut u64).write_volatile(msg.len() as u64);
            std::ptr::copy_nonoverlapping(msg.as_ptr(), p.add(8), msg.len());
        }
        if let Coherence::NonCoherent(m) = self.s.mode {
            // SAFETY: as above.
            unsafe { flush_range(m, p, 8 + msg.len()) };
        }
        self.head += total;
        self.s.store(HEAD, self.head);
        true
    }

    /// Sends `msg`, calling `spin` while the ring is full (it may give up with an error).
    pub fn send<E>(
        &mut self,
        msg: &[u8],
        mut spin: impl FnMut() -> Result<(), E>,
    ) -> Result<(), E> {
        while !self.try_send(msg) {
            spin()?;
        }
        Ok(())
    }
}

impl Consumer {
    /// Attaches to an initialized ring.
    ///
    /// # Safety
    /// The range must be mapped, hold an initialized ring, and have no other consumer.
    pub unsafe fn attach(
        base: *mut u8,
        bytes: usize,
        mode: Coherence,
    ) -> Result<Consumer, RingError> {
        let s = attach(base, bytes, mode)?;
        let tail = s.load(TAIL);
        let head_seen = s.load(HEAD);
        Ok(Consumer { s, tail, head_seen })
    }

    /// Receives one message into `buf` if one is there; returns its length. A message
    /// longer than `buf` is truncated to it (its full length is returned).
    pub fn try_recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        let cap = self.s.cap as u64;
        if self.tail == self.head_seen {
            self.head_seen = self.s.load(HEAD);
            if self.tail == self.head_seen {
                return None;
            }
        }
        let mut pos = (self.tail % cap) as usize;
        let mut p = self.s.data(pos);
        if let Coherence::NonCoherent(m) = self.s.mode {
            // SAFETY: mapped line; m available.
            unsafe { invalidate_range(m, p, 8) };
        }
        // SAFETY: pos < cap, 64-aligned, published by the producer (tail < head).
        let mut len = unsafe { (p as *const u64).read_volatile() };
        if len == PAD {
            self.tail += cap - pos as u64;
            pos = 0;
            p = self.s.data(pos);
            if let Coherence::NonCoherent(m) = self.s.mode {
                // SAFETY: as above.
                unsafe { invalidate_range(m, p, 8) };
            }
            // SAFETY: as above.
            len = unsafe { (p as *const u64).read_volatile() };
        }
        let len = len as usize;
        let n = len.min(buf.len());
        if let Coherence::NonCoherent(m) = self.s.mode {
            // SAFETY: the record lies inside the data area.
            unsafe { invalidate_range(m, p.add(8), len) };
        }
        // SAFETY: the record's payload [pos+8, pos+8+len) is inside the data area and
        // published; buf holds n bytes.
        unsafe { std::ptr::copy_nonoverlapping(p.add(8), buf.as_mut_ptr(), n) };
        self.tail += record_len(len) as u64;
        self.s.store(TAIL, self.tail);
        Some(len)
    }

    /// Receives one message, calling `spin` while the ring is empty.
    pub fn recv<E>(
        &mut self,
        buf: &mut [u8],
        mut spin: impl FnMut() -> Result<(), E>,
    ) -> Result<usize, E> {
        loop {
            if let Some(n) = self.try_recv(buf) {
                return Ok(n);
            }
            spin()?;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cacheline::invalidate_method;

    /// Fills a message deterministically from its sequence number.
    pub(crate) fn fill(seq: u64, len: usize, out: &mut Vec<u8>) {
        out.clear();
        let mut x = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push(x as u8);
        }
    }

    /// A spin that lets the other thread run (tests share CPUs).
    pub(crate) fn yield_spin() -> Result<(), ()> {
        std::thread::yield_now();
        Ok(())
    }

    fn len_of(seq: u64, max: usize) -> usize {
        // Sizes from 0 to max, many crossing the wrap point.
        ((seq.wrapping_mul(2654435761) >> 3) as usize) % (max + 1)
    }

    fn run_concurrent(mode: Coherence, ring_bytes: usize, count: u64) {
        let mut mem = vec![0u64; ring_bytes / 8 + 8];
        let base = (mem.as_mut_ptr() as usize).next_multiple_of(64) as *mut u8;
        // SAFETY: base..base+ring_bytes is inside `mem` (8 extra words for alignment).
        unsafe { init(base, ring_bytes, mode).unwrap() };
        // SAFETY: initialized; one producer, one consumer.
        let mut prod = unsafe { Producer::attach(base, ring_bytes, mode).unwrap() };
        // SAFETY: as above.
        let mut cons = unsafe { Consumer::attach(base, ring_bytes, mode).unwrap() };
        let max = prod.max_message();
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut msg = Vec::new();
                for seq in 0..count {
                    fill(seq, len_of(seq, max), &mut msg);
                    prod.send(&msg, yield_spin).unwrap();
                }
            });
            let mut buf = vec![0u8; max];
            let mut want = Vec::new();
            for seq in 0..count {
                let n = cons.recv(&mut buf, yield_spin).unwrap();
                fill(seq, len_of(seq, max), &mut want);
                assert_eq!(n, want.len(), "message {seq}: length");
                assert!(buf[..n] == want[..], "message {seq}: content differs");
            }
            assert_eq!(
                cons.try_recv(&mut buf),
                None,
                "a message was delivered twice"
            );
        });
        drop(mem);
    }

    #[test]
    fn every_message_arrives_once_in_order_intact_coherent() {
        run_concurrent(Coherence::Coherent, RING_HEADER + 4096, 20_000);
    }

    #[test]
    fn every_message_arrives_once_in_order_intact_noncoherent() {
        let Ok(m) = invalidate_method() else {
            bench_core::testing::unavailable(
                "cache-flush",
                "no cache flush instruction on this CPU: the non-coherent mode cannot run",
            );
            return;
        };
        run_concurrent(Coherence::NonCoherent(m), RING_HEADER + 4096, 20_000);
    }

    #[test]
    fn wrap_around_uses_a_pad_record() {
        let bytes = RING_HEADER + 1024;
        let mut mem = vec![0u64; bytes / 8 + 8];
        let base = (mem.as_mut_ptr() as usize).next_multiple_of(64) as *mut u8;
        // SAFETY: inside `mem`.
        unsafe { init(base, bytes, Coherence::Coherent).unwrap() };
        // SAFETY: initialized; single-threaded use.
        let mut p = unsafe { Producer::attach(base, bytes, Coherence::Coherent).unwrap() };
        // SAFETY: as above.
        let mut c = unsafe { Consumer::attach(base, bytes, Coherence::Coherent).unwrap() };
        let mut buf = [0u8; 512];
        assert!(p.try_send(&[1u8; 400])); // 448 B record
        assert!(p.try_send(&[2u8; 400])); // 896
        assert!(!p.try_send(&[3u8; 400]), "ring is full");
        assert_eq!(c.try_recv(&mut buf), Some(400));
        assert!(buf[..400].iter().all(|&b| b == 1));
        // 128 B left at the end: the next record wraps behind a pad.
        assert!(p.try_send(&[3u8; 300]));
        assert_eq!(c.try_recv(&mut buf), Some(400));
        assert!(buf[..400].iter().all(|&b| b == 2));
        assert_eq!(c.try_recv(&mut buf), Some(300));
        assert!(buf[..300].iter().all(|&b| b == 3));
        assert_eq!(c.try_recv(&mut buf), None);
        drop(mem);
    }

    #[test]
    fn too_small_or_corrupt_rings_are_refused() {
        let mut mem = vec![0u64; 64];
        let base = (mem.as_mut_ptr() as usize).next_multiple_of(64) as *mut u8;
        // SAFETY: 512 B inside `mem` minus alignment; 300 < what init needs.
        let r = unsafe { init(base, 300, Coherence::Coherent) };
        assert!(matches!(r, Err(RingError::TooSmall(_))));
        // SAFETY: header zero: capacity 0 is refused.
        let r = unsafe { Producer::attach(base, 448, Coherence::Coherent) };
        assert!(matches!(r, Err(RingError::BadHeader(0))));
        drop(mem);
    }
}
