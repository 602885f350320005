//! The member that streams its own slice of a region with one of the [`crate::kernels`]
//! (read, write, non-temporal write, copy, non-temporal copy, memset): the thread of
//! `mem bandwidth`, of the matrix's bandwidth cells and of the CPU agents beside the GPU;
//! or copies its slice from a source of its own ([`Stream::between`]: `mem agents`).
//!
//! The slice is streamed in parts, in turn, each call one part (or, for a slice smaller
//! than a call's worth, several passes over the whole slice): a part is sized in the
//! warm-up so that a call takes about [`CALL_NS`], so a window ends within a fraction of
//! a percent of its length whatever the slice. Every part a call streams was last touched
//! a whole slice earlier: the footprint is the slice, as in one pass over it.

use super::{Member, Stop};
use crate::kernels::{self, Isa, Kernel};
use std::convert::Infallible;
use std::time::Instant;

/// How long a call should take, ns: a window of 30 ms ends within 0.35 % of its length.
pub const CALL_NS: f64 = 100_000.0;

/// Parts are whole pages (and at least this), so every part starts page-aligned.
const MIN_PART: usize = 64 << 10;

/// The least warm-up, ns (frequency ramp, TLB, the prefetchers' first streams).
const WARM_NS: u128 = 2_000_000;

/// What a stream does to each part.
#[derive(Debug, Clone, Copy)]
enum Work {
    /// A kernel over the part (a copy: its first half into its second half; its bytes read
    /// + written).
    Kernel(Kernel),
    /// The part of a source copied into the part (its bytes counted once, as transferred).
    Between { src: *const u8, nt: bool },
}

/// What a crew of streams ran, for a measurement's parameters (`stream`): the kernel, the
/// ISA, the footprint of all threads and their CPUs (sorted). Two families whose streams
/// say the same on the same target measured the same thing, and the runner holds their
/// figures against each other.
pub fn signature(
    kernel: Kernel,
    isa: Isa,
    footprint_bytes: usize,
    cpus: &[usize],
) -> serde_json::Value {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    serde_json::json!({
        "kernel": kernel.name(),
        "isa": isa.name(),
        "footprint_bytes": footprint_bytes,
        "cpus": cpus,
    })
}

/// One thread's stream (see the module documentation).
pub struct Stream {
    work: Work,
    isa: Isa,
    base: *mut u8,
    len: usize,
    /// Bytes of a part (the whole slice when it is streamed in passes).
    part: usize,
    /// Passes over the part per call.
    passes: usize,
    next: usize,
    calls: u64,
    acc: u64,
}

impl Stream {
    /// A stream of `kernel` (with `isa`, which the CPU must have) over `len` bytes at
    /// `base` (a copy: its first half copied into its second half, part by part).
    ///
    /// # Safety
    /// `[base, base + len)` must be mapped, writable and used by no other thread while the
    /// stream runs.
    pub unsafe fn new(kernel: Kernel, isa: Isa, base: *mut u8, len: usize) -> Stream {
        Stream {
            work: Work::Kernel(kernel),
            isa,
            base,
            len,
            part: len,
            passes: 1,
            next: 0,
            calls: 0,
            acc: 0,
        }
    }

    /// A stream that copies `len` bytes from `src` to `dst` part by part (non-temporal
    /// stores + sfence when `nt`), each byte counted once (transferred).
    ///
    /// # Safety
    /// `[src, src + len)` must be mapped and readable, `[dst, dst + len)` mapped and
    /// writable, and neither written by another thread while the stream runs.
    pub unsafe fn between(isa: Isa, nt: bool, src: *const u8, dst: *mut u8, len: usize) -> Stream {
        Stream {
            work: Work::Between { src, nt },
            // SAFETY: the caller's guarantee for [dst, dst + len).
            ..unsafe { Stream::new(Kernel::Write, isa, dst, len) }
        }
    }

    /// Thread `t`'s slice of `total` bytes shared by `threads` threads: (offset, length),
    /// whole pages, every slice the same length.
    pub fn slice_of(total: usize, threads: usize, t: usize) -> (usize, usize) {
        let threads = threads.max(1);
        let mut len = total / threads / 4096 * 4096;
        if len == 0 {
            len = total / threads / 64 * 64;
        }
        (t * len, len)
    }

    /// Bytes of a part and passes per call, as sized in the warm-up.
    pub fn shape(&self) -> (usize, usize) {
        (self.part, self.passes)
    }

    fn parts(&self) -> usize {
        self.len.div_ceil(self.part.max(1)).max(1)
    }

    /// Streams part `p` once; returns its bytes.
    fn stream_part(&mut self, p: usize) -> u64 {
        let off = p * self.part;
        let n = self.part.min(self.len - off);
        // SAFETY: part p lies inside [base, base + len), which the caller of `new`
        // guarantees is mapped, writable and this thread's alone.
        let buf = unsafe { std::slice::from_raw_parts_mut(self.base.add(off), n) };
        match self.work {
            Work::Kernel(k) => {
                let val = (self.calls as u8) | 1;
                self.acc ^= kernels::run(k, self.isa, buf, val);
            }
            Work::Between { src, nt } => {
                // SAFETY: the caller of `between` guarantees [src, src + len) is readable
                // and not written meanwhile; part p lies inside it.
                let from = unsafe { std::slice::from_raw_parts(src.add(off), n) };
                kernels::copy(self.isa, nt, buf, from);
            }
        }
        n as u64
    }

    /// Sizes a part from the rate of the warm-up.
    fn size_calls(&mut self, bytes: u64, ns: f64) {
        let rate = bytes as f64 / ns.max(1.0);
        let want = (rate * CALL_NS).max(1.0) as usize;
        if want >= self.len {
            self.part = self.len;
            self.passes = want.div_ceil(self.len.max(1)).clamp(1, 1 << 20);
        } else {
            self.part = (want / 4096 * 4096).max(MIN_PART).min(self.len);
            self.passes = 1;
        }
    }
}

impl Member for Stream {
    type Error = Infallible;

    /// At least one full pass over the slice, and at least 2 ms; sizes the calls.
    fn warm(&mut self, _stop: &Stop) -> Result<(), Infallible> {
        if self.len == 0 {
            return Ok(());
        }
        let t0 = Instant::now();
        let mut bytes = 0u64;
        loop {
            bytes += self.stream_part(0);
            if t0.elapsed().as_nanos() >= WARM_NS {
                break;
            }
        }
        self.size_calls(bytes, t0.elapsed().as_nanos() as f64);
        std::hint::black_box(self.acc);
        Ok(())
    }

    fn call(&mut self, _stop: &Stop) -> Result<u64, Infallible> {
        if self.len == 0 {
            return Ok(0);
        }
        let p = self.next;
        self.next = (self.next + 1) % self.parts();
        let mut bytes = 0;
        for _ in 0..self.passes {
            bytes += self.stream_part(p);
        }
        self.calls += 1;
        std::hint::black_box(self.acc);
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn isa() -> Isa {
        kernels::IsaSet::detect().choose(None).unwrap()
    }

    #[test]
    fn slices_are_whole_pages_and_disjoint() {
        assert_eq!(Stream::slice_of(1 << 20, 3, 0), (0, 348_160));
        assert_eq!(Stream::slice_of(1 << 20, 3, 2), (2 * 348_160, 348_160));
        assert_eq!(Stream::slice_of(8192, 4, 1), (2048, 2048));
        let (o, l) = Stream::slice_of(1 << 30, 7, 6);
        assert!(o + l <= 1 << 30 && l % 4096 == 0);
    }

    #[test]
    fn a_large_slice_is_streamed_part_by_part_in_turn_and_a_small_one_in_passes() {
        let mut mem = vec![0u8; 16 << 20];
        // SAFETY: the vector outlives the stream and nothing else uses it.
        let mut s = unsafe { Stream::new(Kernel::Read, isa(), mem.as_mut_ptr(), mem.len()) };
        s.size_calls(1 << 20, 1e6); // 1 GB/s: a call is 100 KB, rounded to pages
        let (part, passes) = s.shape();
        assert_eq!((part, passes), (102_400, 1));
        let stop = Stop::default();
        let parts = s.parts();
        let total: u64 = (0..parts).map(|_| s.call(&stop).unwrap()).sum();
        assert_eq!(total, 16 << 20, "one turn through the parts is the slice");
        assert_eq!(s.next, 0);

        let mut small = vec![0u8; 16 << 10];
        // SAFETY: as above.
        let mut s = unsafe { Stream::new(Kernel::Write, isa(), small.as_mut_ptr(), small.len()) };
        s.size_calls(1 << 20, 1e4); // 105 GB/s: 10 MiB a call, 640 passes of 16 KiB
        assert_eq!(s.shape(), (16 << 10, 640));
        assert_eq!(s.call(&stop).unwrap(), 640 * (16 << 10));
        assert!(
            small.iter().all(|&b| b != 0),
            "the write kernel wrote the slice"
        );
    }

    #[test]
    fn a_copy_between_two_buffers_counts_each_byte_once() {
        let src: Vec<u8> = (0..(1 << 20)).map(|i| (i % 253) as u8).collect();
        let mut dst = vec![0u8; 1 << 20];
        // SAFETY: both vectors outlive the stream and nothing else uses them.
        let mut s =
            unsafe { Stream::between(isa(), true, src.as_ptr(), dst.as_mut_ptr(), dst.len()) };
        s.size_calls(1 << 20, 1e6);
        let stop = Stop::default();
        let total: u64 = (0..s.parts()).map(|_| s.call(&stop).unwrap()).sum();
        assert_eq!(total, 1 << 20);
        assert!(src == dst, "every part copied");
    }

    #[test]
    fn a_copy_streams_each_part_into_its_second_half() {
        let mut mem: Vec<u8> = (0..(256 << 10)).map(|i| (i % 251) as u8).collect();
        // SAFETY: as above.
        let mut s = unsafe { Stream::new(Kernel::Copy, isa(), mem.as_mut_ptr(), mem.len()) };
        let stop = Stop::default();
        s.warm(&stop).unwrap();
        let bytes = s.call(&stop).unwrap();
        assert!(bytes > 0);
        let (part, _) = s.shape();
        let half = part.min(mem.len()) / 2;
        assert_eq!(
            mem[..half],
            mem[half..2 * half],
            "first half copied into the second"
        );
    }
}
