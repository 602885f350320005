//! A single-producer single-consumer queue of fixed-size message cells in shared memory:
//! cMPI's message cells (seed 002, Sec. 3.3 and 4.3). A cell is a 64-byte header (the
//! chunk's length and the whole message's length) and a payload; a message longer than a
//! cell's payload is split into cell-sized chunks sent one after the other, and the
//! receiver copies them back together into its buffer. Coherent or non-coherent like
//! [`crate::ring`], whose header words it shares.
//!
//! Layout at the queue's base (all offsets in bytes):
//!
//! | offset | field | written by |
//! |---|---|---|
//! | 0 | `head`: bytes of cells published, ever (u64) | producer |
//! | 128 | `tail`: bytes of cells consumed, ever (u64) | consumer |
//! | 192 | bytes of all cells (u64) | initializer |
//! | 200 | bytes of one cell (u64) | initializer |
//! | 256.. | the cells: `chunk len: u64`, `message len: u64`, padding to 64 B, payload | producer |

use crate::cacheline::{flush_range, invalidate_range, LINE};
use crate::ring::{Coherence, Shared, CAP, HEAD, RING_HEADER, TAIL};

/// Bytes before the first cell.
pub const QUEUE_HEADER: usize = RING_HEADER;
/// Bytes of a cell's header (before its payload).
pub const CELL_HEADER: usize = LINE;
/// Header word: bytes of one cell.
const CELL: usize = 200;

/// Errors of queue setup.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CellError {
    /// The cell size cannot hold a header and a payload.
    #[error("a cell of {0} bytes cannot hold a header and a payload: cells are multiples of 64 bytes, at least 128")]
    BadCell(usize),
    /// The memory given cannot hold the queue.
    #[error("{have} bytes cannot hold a queue of {cells} cells of {cell} bytes (needs {need})")]
    TooSmall {
        /// Bytes given.
        have: usize,
        /// Bytes needed.
        need: usize,
        /// Cells asked for.
        cells: usize,
        /// Bytes per cell.
        cell: usize,
    },
    /// The queue's base is not 64-byte aligned.
    #[error("a cell queue must start on a 64-byte boundary")]
    Misaligned,
    /// The queue header does not describe a queue that fits.
    #[error("cell queue header holds {total} bytes of {cell}-byte cells: not a queue that fits the memory")]
    BadHeader {
        /// Bytes of all cells.
        total: u64,
        /// Bytes per cell.
        cell: u64,
    },
}

/// Bytes a queue of `cells` cells of `cell` bytes takes.
pub fn queue_bytes(cell: usize, cells: usize) -> usize {
    QUEUE_HEADER + cell * cells
}

/// Payload bytes a cell of `cell` bytes carries.
pub fn payload_of(cell: usize) -> usize {
    cell.saturating_sub(CELL_HEADER)
}

/// How many cells a message of `len` bytes takes (one at least: an empty message is one
/// cell with no payload).
pub fn chunks(len: usize, cell: usize) -> usize {
    len.div_ceil(payload_of(cell).max(1)).max(1)
}

fn check_cell(cell: usize) -> Result<(), CellError> {
    if cell < 2 * LINE || !cell.is_multiple_of(LINE) {
        return Err(CellError::BadCell(cell));
    }
    Ok(())
}

/// Initializes an empty queue of `cells` cells of `cell` bytes in `[base, base+bytes)`.
///
/// # Safety
/// The range must be mapped and writable, and not used as a queue by anyone while this
/// runs.
pub unsafe fn init(
    base: *mut u8,
    bytes: usize,
    cell: usize,
    cells: usize,
    mode: Coherence,
) -> Result<(), CellError> {
    check_cell(cell)?;
    let need = queue_bytes(cell, cells);
    if cells == 0 || need > bytes {
        return Err(CellError::TooSmall {
            have: bytes,
            need,
            cells,
            cell,
        });
    }
    if !(base as usize).is_multiple_of(LINE) {
        return Err(CellError::Misaligned);
    }
    let s = Shared {
        base,
        cap: cell * cells,
        mode,
    };
    s.store(HEAD, 0);
    s.store(TAIL, 0);
    s.store(CELL, cell as u64);
    s.store(CAP, (cell * cells) as u64);
    Ok(())
}

fn attach(base: *mut u8, bytes: usize, mode: Coherence) -> Result<(Shared, usize), CellError> {
    if !(base as usize).is_multiple_of(LINE) {
        return Err(CellError::Misaligned);
    }
    if bytes < QUEUE_HEADER {
        return Err(CellError::TooSmall {
            have: bytes,
            need: QUEUE_HEADER,
            cells: 0,
            cell: 0,
        });
    }
    let s = Shared { base, cap: 0, mode };
    let (total, cell) = (s.load(CAP), s.load(CELL));
    let bad = CellError::BadHeader { total, cell };
    check_cell(cell as usize).map_err(|_| bad.clone())?;
    if total == 0 || !total.is_multiple_of(cell) || total as usize > bytes - QUEUE_HEADER {
        return Err(bad);
    }
    Ok((
        Shared {
            base,
            cap: total as usize,
            mode,
        },
        cell as usize,
    ))
}

/// The sending side.
#[derive(Debug)]
pub struct CellSender {
    s: Shared,
    cell: usize,
    head: u64,
    tail_seen: u64,
}

/// The receiving side.
#[derive(Debug)]
pub struct CellReceiver {
    s: Shared,
    cell: usize,
    tail: u64,
    head_seen: u64,
}

impl CellSender {
    /// Attaches to an initialized queue.
    ///
    /// # Safety
    /// The range must be mapped, hold an initialized queue, and have no other producer.
    pub unsafe fn attach(
        base: *mut u8,
        bytes: usize,
        mode: Coherence,
    ) -> Result<CellSender, CellError> {
        let (s, cell) = attach(base, bytes, mode)?;
        let head = s.load(HEAD);
        let tail_seen = s.load(TAIL);
        Ok(CellSender {
            s,
            cell,
            head,
            tail_seen,
        })
    }

    /// Payload bytes of one cell.
    pub fn payload(&self) -> usize {
        payload_of(self.cell)
    }

    /// Puts one chunk (at most [`payload`](Self::payload) bytes) of a message of
    /// `msg_len` bytes into the next cell if one is free now; false otherwise.
    pub fn try_push(&mut self, chunk: &[u8], msg_len: usize) -> bool {
        assert!(chunk.len() <= self.payload(), "chunk larger than a cell");
        let cap = self.s.cap as u64;
        if self.head - self.tail_seen >= cap {
            self.tail_seen = self.s.load(TAIL);
            if self.head - self.tail_seen >= cap {
                return false;
            }
        }
        let p = self.s.data((self.head % cap) as usize);
        // SAFETY: the cell [p, p+cell) is inside the data area (head % cap is a multiple
        // of the cell size, cap a multiple of it) and released by the consumer (checked
        // above); the chunk fits its payload.
        unsafe {
            (p as *mut u64).write_volatile(chunk.len() as u64);
            (p.add(8) as *mut u64).write_volatile(msg_len as u64);
            std::ptr::copy_nonoverlapping(chunk.as_ptr(), p.add(CELL_HEADER), chunk.len());
        }
        if let Coherence::NonCoherent(m) = self.s.mode {
            // SAFETY: as above; m is available.
            unsafe { flush_range(m, p, CELL_HEADER + chunk.len()) };
        }
        self.head += self.cell as u64;
        self.s.store(HEAD, self.head);
        true
    }

    /// Sends `msg`, split into cell-sized chunks sent one after the other, calling `spin`
    /// while the queue is full (it may give up with an error). Returns the cells used.
    pub fn send<E>(
        &mut self,
        msg: &[u8],
        mut spin: impl FnMut() -> Result<(), E>,
    ) -> Result<usize, E> {
        let payload = self.payload();
        let mut n = 0;
        let mut rest = msg;
        loop {
            let (chunk, more) = rest.split_at(rest.len().min(payload));
            while !self.try_push(chunk, msg.len()) {
                spin()?;
            }
            n += 1;
            rest = more;
            if rest.is_empty() {
                return Ok(n);
            }
        }
    }
}

/// One chunk taken from the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Bytes in this chunk.
    pub len: usize,
    /// The bytes of the whole message it belongs to.
    pub msg_len: usize,
}

impl CellReceiver {
    /// Attaches to an initialized queue.
    ///
    /// # Safety
    /// The range must be mapped, hold an initialized queue, and have no other consumer.
    pub unsafe fn attach(
        base: *mut u8,
        bytes: usize,
        mode: Coherence,
    ) -> Result<CellReceiver, CellError> {
        let (s, cell) = attach(base, bytes, mode)?;
        let tail = s.load(TAIL);
        let head_seen = s.load(HEAD);
        Ok(CellReceiver {
            s,
            cell,
            tail,
            head_seen,
        })
    }

    /// Takes the next chunk if one is there, copying at most `out.len()` of its bytes
    /// into `out`.
    pub fn try_pop(&mut self, out: &mut [u8]) -> Option<Chunk> {
        if self.tail == self.head_seen {
            self.head_seen = self.s.load(HEAD);
            if self.tail == self.head_seen {
                return None;
            }
        }
        let p = self.s.data((self.tail % self.s.cap as u64) as usize);
        if let Coherence::NonCoherent(m) = self.s.mode {
            // SAFETY: the cell's header line is mapped; m is available.
            unsafe { invalidate_range(m, p, CELL_HEADER) };
        }
        // SAFETY: the cell is inside the data area and published (tail < head).
        let (len, msg_len) = unsafe {
            (
                (p as *const u64).read_volatile() as usize,
                (p.add(8) as *const u64).read_volatile() as usize,
            )
        };
        let len = len.min(payload_of(self.cell));
        if let Coherence::NonCoherent(m) = self.s.mode {
            // SAFETY: the payload lies inside the cell.
            unsafe { invalidate_range(m, p.add(CELL_HEADER), len) };
        }
        let n = len.min(out.len());
        // SAFETY: [p+CELL_HEADER, +n) is inside the published cell; out holds n bytes.
        unsafe { std::ptr::copy_nonoverlapping(p.add(CELL_HEADER), out.as_mut_ptr(), n) };
        self.tail += self.cell as u64;
        self.s.store(TAIL, self.tail);
        Some(Chunk { len, msg_len })
    }

    /// Receives one whole message into `buf`, reassembling its chunks, calling `spin`
    /// while the queue is empty. A message longer than `buf` is truncated to it; its full
    /// length is returned.
    pub fn recv<E>(
        &mut self,
        buf: &mut [u8],
        mut spin: impl FnMut() -> Result<(), E>,
    ) -> Result<usize, E> {
        let mut got = 0;
        loop {
            let at = got.min(buf.len());
            let c = loop {
                if let Some(c) = self.try_pop(&mut buf[at..]) {
                    break c;
                }
                spin()?;
            };
            got += c.len;
            if got >= c.msg_len || c.len == 0 {
                return Ok(c.msg_len.max(got));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cacheline::invalidate_method;
    use crate::ring::tests::{fill, yield_spin};

    /// 64-aligned memory of `bytes` (the Vec keeps it alive).
    fn memory(bytes: usize) -> (Vec<u64>, *mut u8) {
        let mut mem = vec![0u64; bytes / 8 + 16];
        let base = (mem.as_mut_ptr() as usize).next_multiple_of(64) as *mut u8;
        (mem, base)
    }

    fn pair(bytes: usize, cell: usize, cells: usize) -> (Vec<u64>, CellSender, CellReceiver) {
        let (mem, base) = memory(bytes);
        // SAFETY: base..base+bytes is inside `mem`.
        unsafe { init(base, bytes, cell, cells, Coherence::Coherent).unwrap() };
        // SAFETY: initialized; one producer, one consumer.
        let p = unsafe { CellSender::attach(base, bytes, Coherence::Coherent).unwrap() };
        // SAFETY: as above.
        let c = unsafe { CellReceiver::attach(base, bytes, Coherence::Coherent).unwrap() };
        (mem, p, c)
    }

    #[test]
    fn chunk_accounting() {
        assert_eq!(payload_of(1024), 960);
        assert_eq!(chunks(0, 1024), 1);
        assert_eq!(chunks(1, 1024), 1);
        assert_eq!(chunks(960, 1024), 1);
        assert_eq!(chunks(961, 1024), 2);
        // A 64 KiB message does not fit a 64 KiB cell with its header (seed 002 4.2).
        assert_eq!(chunks(64 << 10, 64 << 10), 2);
        assert_eq!(
            chunks(1 << 20, 16 << 10),
            (1usize << 20).div_ceil((16 << 10) - 64)
        );
        assert_eq!(queue_bytes(4096, 8), QUEUE_HEADER + 32768);
    }

    #[test]
    fn full_and_empty_and_fifo_order() {
        let (mem, mut p, mut c) = pair(queue_bytes(128, 4), 128, 4);
        let mut out = [0u8; 64];
        assert_eq!(c.try_pop(&mut out), None, "a new queue is empty");
        for i in 0..4u8 {
            assert!(p.try_push(&[i; 10], 10), "cell {i} is free");
        }
        assert!(!p.try_push(&[9; 10], 10), "four cells: the queue is full");
        for i in 0..4u8 {
            let ch = c.try_pop(&mut out).expect("a chunk");
            assert_eq!(
                ch,
                Chunk {
                    len: 10,
                    msg_len: 10
                }
            );
            assert!(out[..10].iter().all(|&b| b == i), "FIFO order");
        }
        assert_eq!(c.try_pop(&mut out), None);
        // Wraparound: the same four cells again, many times.
        for round in 0..10u8 {
            for i in 0..3u8 {
                assert!(p.try_push(&[round ^ i; 64], 64));
            }
            for i in 0..3u8 {
                assert_eq!(c.try_pop(&mut out).map(|c| c.len), Some(64));
                assert!(out.iter().all(|&b| b == round ^ i));
            }
        }
        drop(mem);
    }

    #[test]
    fn a_long_message_is_split_and_reassembled() {
        let cell = 256;
        let (mem, mut p, mut c) = pair(queue_bytes(cell, 16), cell, 16);
        let mut msg = Vec::new();
        fill(7, 1000, &mut msg);
        let n = p.send(&msg, || Err::<(), ()>(())).unwrap();
        assert_eq!(n, chunks(1000, cell));
        assert_eq!(n, 6); // 5 x 192 + 40
        let mut buf = vec![0u8; 1000];
        assert_eq!(c.recv(&mut buf, || Err::<(), ()>(())), Ok(1000));
        assert_eq!(buf, msg);
        // A buffer too small keeps the head of the message and reports its length.
        p.send(&msg, || Err::<(), ()>(())).unwrap();
        let mut small = vec![0u8; 300];
        assert_eq!(c.recv(&mut small, || Err::<(), ()>(())), Ok(1000));
        assert_eq!(small[..], msg[..300]);
        // An empty message is one cell.
        assert_eq!(p.send(&[], || Err::<(), ()>(())), Ok(1));
        assert_eq!(c.recv(&mut buf, || Err::<(), ()>(())), Ok(0));
        assert_eq!(c.try_pop(&mut buf), None);
        drop(mem);
    }

    #[test]
    fn a_full_queue_calls_spin_and_its_error_ends_the_send() {
        let (mem, mut p, _c) = pair(queue_bytes(128, 2), 128, 2);
        let mut spins = 0;
        let r = p.send(&[1u8; 64 * 3], || {
            spins += 1;
            Err::<(), &str>("gave up")
        });
        assert_eq!(r, Err("gave up"), "three chunks, two cells");
        assert_eq!(spins, 1);
        drop(mem);
    }

    fn run_concurrent(mode: Coherence, cell: usize, cells: usize, count: u64) {
        let bytes = queue_bytes(cell, cells);
        let (mem, base) = memory(bytes);
        // SAFETY: inside `mem`.
        unsafe { init(base, bytes, cell, cells, mode).unwrap() };
        // SAFETY: initialized; one producer, one consumer.
        let mut prod = unsafe { CellSender::attach(base, bytes, mode).unwrap() };
        // SAFETY: as above.
        let mut cons = unsafe { CellReceiver::attach(base, bytes, mode).unwrap() };
        let max = 5 * cell;
        let len_of = |seq: u64| ((seq.wrapping_mul(2654435761) >> 3) as usize) % (max + 1);
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut msg = Vec::new();
                for seq in 0..count {
                    fill(seq, len_of(seq), &mut msg);
                    prod.send(&msg, yield_spin).unwrap();
                }
            });
            let mut buf = vec![0u8; max];
            let mut want = Vec::new();
            for seq in 0..count {
                let n = cons.recv(&mut buf, yield_spin).unwrap();
                fill(seq, len_of(seq), &mut want);
                assert_eq!(n, want.len(), "message {seq}: length");
                assert!(buf[..n] == want[..], "message {seq}: content differs");
            }
            assert_eq!(cons.try_pop(&mut buf), None, "a chunk was left over");
        });
        drop(mem);
    }

    #[test]
    fn every_message_arrives_once_in_order_intact_coherent() {
        run_concurrent(Coherence::Coherent, 256, 4, 5_000);
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
        run_concurrent(Coherence::NonCoherent(m), 256, 4, 5_000);
    }

    #[test]
    fn bad_geometry_and_headers_are_refused() {
        let (mem, base) = memory(4096);
        // SAFETY: inside `mem`.
        let r = unsafe { init(base, 4096, 100, 4, Coherence::Coherent) };
        assert_eq!(r, Err(CellError::BadCell(100)));
        // SAFETY: as above.
        let r = unsafe { init(base, 4096, 1024, 4, Coherence::Coherent) };
        assert!(matches!(r, Err(CellError::TooSmall { need, .. }) if need == queue_bytes(1024, 4)));
        // SAFETY: a zero header is no queue.
        let r = unsafe { CellSender::attach(base, 4096, Coherence::Coherent) };
        assert!(matches!(r, Err(CellError::BadHeader { .. })));
        // SAFETY: misaligned base inside `mem`.
        let r = unsafe { CellReceiver::attach(base.add(8), 1024, Coherence::Coherent) };
        assert!(matches!(r, Err(CellError::Misaligned)));
        drop(mem);
    }
}
