//! The pointer chase: a random cyclic order of cache lines and the dependent-load loop.
//!
//! Every line of the working set holds the address of the next line of one cycle that
//! visits every line exactly once, so each load depends on the previous one and the
//! hardware prefetchers cannot guess the next address. Two orders:
//!
//! * [`ChaseOrder::Random`]: one Sattolo cycle over all lines (every step may touch a new
//!   page: the latency includes page walks once the working set exceeds the TLB reach);
//! * [`ChaseOrder::TlbLocal`]: the lines are grouped into blocks of `locality` bytes
//!   (default 64 pages = 256 KiB, multichase's default `-T`); the blocks are visited in
//!   the order of a Sattolo cycle and the lines within each block in a random order, so
//!   the TLB working set stays small (MLC and multichase measure idle latency this way).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

/// How the lines of the working set are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaseOrder {
    /// One random cycle over all lines.
    Random,
    /// Random blocks of `locality` bytes, random lines within each block.
    TlbLocal {
        /// Block size in bytes (a multiple of the stride).
        locality: usize,
    },
}

impl ChaseOrder {
    /// The default idle-latency order: TLB-local blocks of 256 KiB.
    pub const DEFAULT: ChaseOrder = ChaseOrder::TlbLocal {
        locality: 256 * 1024,
    };

    /// Name as recorded in the output.
    pub fn name(&self) -> &'static str {
        match self {
            ChaseOrder::Random => "random",
            ChaseOrder::TlbLocal { .. } => "tlb-local",
        }
    }

    /// Parameters as recorded in the output.
    pub fn describe(&self) -> serde_json::Value {
        match self {
            ChaseOrder::Random => json!({"order": "random"}),
            ChaseOrder::TlbLocal { locality } => {
                json!({"order": "tlb-local", "tlb_locality_bytes": locality})
            }
        }
    }
}

/// Sattolo's algorithm: a uniformly random cyclic permutation of `0..n` as a successor
/// array (`next[i]` follows `i`); following it from any line visits all `n` lines once.
pub fn sattolo(n: usize, rng: &mut SmallRng) -> Vec<u32> {
    assert!(n <= u32::MAX as usize, "too many lines for a u32 index");
    let mut a: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..i);
        a.swap(i, j);
    }
    a
}

/// The successor array of a chase over `n` lines of `stride` bytes in `order`.
pub fn successors(n: usize, stride: usize, order: ChaseOrder, seed: u64) -> Vec<u32> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let per_block = match order {
        ChaseOrder::Random => n,
        ChaseOrder::TlbLocal { locality } => (locality / stride).max(1),
    };
    if per_block >= n {
        return sattolo(n, &mut rng);
    }
    let blocks = n.div_ceil(per_block);
    let block_next = sattolo(blocks, &mut rng);
    // The visiting sequence: blocks in cycle order from block 0, lines shuffled inside.
    let mut seq: Vec<u32> = Vec::with_capacity(n);
    let mut b = 0usize;
    for _ in 0..blocks {
        let lo = b * per_block;
        let hi = (lo + per_block).min(n);
        let start = seq.len();
        seq.extend(lo as u32..hi as u32);
        let s = &mut seq[start..];
        for i in (1..s.len()).rev() {
            let j = rng.random_range(0..=i);
            s.swap(i, j);
        }
        b = block_next[b] as usize;
    }
    let mut next = vec![0u32; n];
    for k in 0..n {
        next[seq[k] as usize] = seq[(k + 1) % n];
    }
    next
}

/// Writes the chase into `mem` (`n` lines of `stride` bytes): the first word of line `i`
/// holds the address of line `next[i]`. Returns the address of line 0.
pub fn write_chain(mem: &mut [u8], stride: usize, next: &[u32]) -> *const u8 {
    assert!(
        stride >= std::mem::size_of::<usize>()
            && stride.is_multiple_of(std::mem::size_of::<usize>())
    );
    assert!(next.len() * stride <= mem.len());
    let base = mem.as_mut_ptr() as usize;
    for (i, &nx) in next.iter().enumerate() {
        let bytes = (base + nx as usize * stride).to_ne_bytes();
        mem[i * stride..i * stride + bytes.len()].copy_from_slice(&bytes);
    }
    mem.as_ptr()
}

/// Loads per loop iteration of [`chase`].
pub const UNROLL: usize = 16;

/// Follows `steps` pointers from `start` (rounded down to a multiple of [`UNROLL`]) and
/// returns where it stopped. Each load's address is the previous load's value.
///
/// # Safety
/// `start` must be the start of a chain written by [`write_chain`] into memory that is
/// still mapped and not modified while the chase runs.
#[inline(never)]
pub unsafe fn chase(start: *const u8, steps: usize) -> *const u8 {
    let mut p = start as *const *const u8;
    macro_rules! step {
        () => {
            // SAFETY: by the caller's contract every line holds the address of a line of
            // the same chain, aligned to the stride (>= 8), so `p` is always valid.
            p = unsafe { core::ptr::read_volatile(p) } as *const *const u8;
        };
    }
    for _ in 0..steps / UNROLL {
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
    }
    p as *const u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle_len(next: &[u32]) -> usize {
        let mut seen = vec![false; next.len()];
        let (mut i, mut len) = (0usize, 0usize);
        while !seen[i] {
            seen[i] = true;
            i = next[i] as usize;
            len += 1;
        }
        assert_eq!(i, 0, "the walk must come back to its start");
        len
    }

    #[test]
    fn sattolo_is_one_cycle_through_every_line() {
        for (n, seed) in [
            (1usize, 1u64),
            (2, 2),
            (3, 3),
            (64, 4),
            (1000, 5),
            (65536, 6),
        ] {
            let mut rng = SmallRng::seed_from_u64(seed);
            let next = sattolo(n, &mut rng);
            assert_eq!(cycle_len(&next), n, "n={n}");
            let mut sorted = next.clone();
            sorted.sort_unstable();
            assert!(sorted.iter().enumerate().all(|(i, &v)| v as usize == i));
        }
    }

    #[test]
    fn tlb_local_order_is_one_cycle_and_stays_in_blocks() {
        let (n, stride, loc) = (10_000usize, 64usize, 4096usize);
        let next = successors(n, stride, ChaseOrder::TlbLocal { locality: loc }, 9);
        assert_eq!(cycle_len(&next), n);
        // Consecutive steps leave their block only once per block.
        let per = loc / stride;
        let crossings = (0..n)
            .filter(|&i| i / per != next[i] as usize / per)
            .count();
        assert_eq!(crossings, n.div_ceil(per));
    }

    #[test]
    fn random_order_leaves_blocks_often() {
        let next = successors(10_000, 64, ChaseOrder::Random, 9);
        assert_eq!(cycle_len(&next), 10_000);
        let crossings = (0..10_000)
            .filter(|&i| i / 64 != next[i] as usize / 64)
            .count();
        assert!(crossings > 9_000, "{crossings}");
    }

    #[test]
    fn same_seed_same_order() {
        assert_eq!(
            successors(500, 64, ChaseOrder::Random, 1),
            successors(500, 64, ChaseOrder::Random, 1)
        );
        assert_ne!(
            successors(500, 64, ChaseOrder::Random, 1),
            successors(500, 64, ChaseOrder::Random, 2)
        );
    }

    #[test]
    fn chase_visits_every_line_once_per_lap() {
        let (n, stride) = (4096usize, 128usize);
        let mut mem = vec![0u8; n * stride];
        let next = successors(n, stride, ChaseOrder::DEFAULT, 3);
        let start = write_chain(&mut mem, stride, &next);
        // Walk one lap by hand through memory and check each line is visited once.
        let mut seen = vec![false; n];
        let mut p = start;
        for _ in 0..n {
            let idx = (p as usize - start as usize) / stride;
            assert!(!seen[idx]);
            seen[idx] = true;
            // SAFETY: p points into `mem` at a line start holding a chain address.
            p = unsafe { chase_one(p) };
        }
        assert_eq!(p, start);
        // A full lap of the unrolled loop returns to the start as well.
        // SAFETY: `start` heads a chain written into `mem`, which outlives the call.
        assert_eq!(unsafe { chase(start, n) }, start);
    }

    /// One step, for the test.
    unsafe fn chase_one(p: *const u8) -> *const u8 {
        // SAFETY: the caller passes a line start of a written chain.
        unsafe { *(p as *const *const u8) }
    }
}
