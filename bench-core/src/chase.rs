//! The pointer chase every latency family uses: a chain of dependent loads that no
//! hardware prefetcher can learn, by construction.
//!
//! # The chain
//!
//! The memory is cut into **slots** of `slot_bytes` (default 256, multichase's default
//! stride). Each slot holds exactly one chain element, so exactly one 64-byte line of each
//! slot is ever touched, and that element holds the address of the next one. Three things
//! keep prefetchers out:
//!
//! * **No fixed in-slot offset** ([`SlotLayout::Randomized`], the default): the touched
//!   line *and* the 8-byte word inside it are drawn at random for every slot, so the
//!   addresses share no offset pattern that a spatial or footprint prefetcher can learn
//!   (a chase whose elements all sit at offset 0 of their slot is learned by some Intel
//!   cores: the larger the stride, the faster it looks). multichase's "mixer" does the
//!   same with 64 offset permutations that repeat every 64 slots; here every slot draws
//!   its own offset.
//! * **No adjacent-line help**: slots are at least 128 bytes and 128-byte aligned, so the
//!   buddy line that an adjacent-line prefetcher fetches with each touched line lies in
//!   the same slot and is never part of the chain.
//! * **No learnable order**: the slots are visited in one random cycle, either over all
//!   of them ([`ChaseOrder::Random`], page walks included) or in TLB-local blocks of
//!   `locality` bytes of memory, the blocks in a random cycle and the slots in a random
//!   order inside each block ([`ChaseOrder::TlbLocal`], MLC's and multichase's idle
//!   latency), so the TLB working set stays small.
//!
//! [`SlotLayout::Aligned`] keeps the classic chase (element at offset 0 of each slot) for
//! comparisons with tools that build it that way; it is never a default.
//!
//! # Sizes
//!
//! A working set is counted in **touched bytes**: distinct 64-byte lines x 64. A chase of
//! `T` touched bytes has `T / 64` elements and spans `T / 64 x slot_bytes` of memory
//! (slots below one line hold several elements per line: then touched = spanned).
//!
//! # Before timing
//!
//! [`Chain::build`] writes the elements in the order the chase visits them and starts the
//! walk at the first: every line the walk reaches was last touched one lap earlier, as in
//! a chase that has run for laps, and the lines the build left in the caches are the ones
//! the walk reaches last. A chain of up to [`WARM_LAP_MAX_BYTES`] touched is then followed
//! one full lap as well (cheap there, and it settles the TLB and a cache-resident set);
//! a larger one is not (a lap of a 1 GiB chain is two seconds of DRAM misses that leave
//! the caches as the build did). [`Chain::flush`] evicts every element's line for a cold
//! lap (the DRAM reference the latency sweep uses to find the memory plateau).

use crate::cacheline;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::marker::PhantomData;

/// Bytes of a cache line (the unit of touched working sets).
pub const LINE_BYTES: usize = 64;

/// Largest chain (touched bytes) that [`Chain::build`] follows one full lap before timing.
pub const WARM_LAP_MAX_BYTES: usize = 64 << 20;

/// Smallest slot of the randomized layout: the 128-byte pair an adjacent-line prefetcher
/// fetches must lie inside one slot.
pub const MIN_RANDOMIZED_SLOT_BYTES: usize = 128;

/// How the lines of the working set are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaseOrder {
    /// One random cycle over all slots.
    Random,
    /// Random blocks of `locality` bytes of memory, random slots within each block.
    TlbLocal {
        /// Block size in bytes of memory spanned (a multiple of the slot).
        locality: usize,
    },
}

/// Block size of the default TLB-local order: 256 KiB (64 pages; multichase's -T).
pub const DEFAULT_TLB_LOCALITY_BYTES: usize = 256 * 1024;

impl ChaseOrder {
    /// The default idle-latency order: TLB-local blocks of
    /// [`DEFAULT_TLB_LOCALITY_BYTES`].
    pub const DEFAULT: ChaseOrder = ChaseOrder::TlbLocal {
        locality: DEFAULT_TLB_LOCALITY_BYTES,
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

/// Where the element sits inside its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotLayout {
    /// A random line and a random 8-byte word of that line, drawn per slot (default).
    Randomized,
    /// Offset 0 of every slot: the classic chase, which some prefetchers learn.
    Aligned,
}

impl SlotLayout {
    /// Name as recorded in the output (`randomized`, `aligned`).
    pub fn name(self) -> &'static str {
        match self {
            SlotLayout::Randomized => "randomized",
            SlotLayout::Aligned => "aligned",
        }
    }
}

/// A bad chain layout (the user's mistake: an error, not a skip).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChaseError {
    /// Aligned slot not a multiple of the pointer size.
    #[error("slot {0} must be a multiple of 8 bytes and at least 8")]
    Slot(usize),
    /// Randomized slot too small or not whole lines.
    #[error(
        "the randomized layout needs slots that are a multiple of {MIN_RANDOMIZED_SLOT_BYTES} bytes (one touched line per slot, its 128-byte buddy inside the slot), got {0}; use --layout aligned for other slots"
    )]
    RandomizedSlot(usize),
    /// TLB locality below the slot.
    #[error("TLB locality {locality} is smaller than the slot {slot}")]
    Locality {
        /// Block size of the TLB-local order, in bytes.
        locality: usize,
        /// Slot size in bytes.
        slot: usize,
    },
    /// Working set below one element.
    #[error("working set of {touched} touched bytes is smaller than one element ({min} bytes)")]
    TooSmall {
        /// Touched bytes asked for.
        touched: usize,
        /// Smallest working set.
        min: usize,
    },
    /// More elements than the u32 index of the order allows.
    #[error("{0} chain elements are more than the chase supports (2^32 - 1)")]
    TooMany(usize),
    /// Memory too small for the chain.
    #[error("the chain spans {need} bytes but only {have} are available")]
    Memory {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}

/// The shape of a chain: slot size and where the element sits in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainLayout {
    /// Element placement inside its slot.
    pub layout: SlotLayout,
    /// Bytes of memory per element.
    pub slot_bytes: usize,
}

impl ChainLayout {
    /// The default: randomized offsets in 256-byte slots (multichase's default stride).
    pub const DEFAULT: ChainLayout = ChainLayout {
        layout: SlotLayout::Randomized,
        slot_bytes: 256,
    };

    /// A randomized layout with this slot.
    pub fn randomized(slot_bytes: usize) -> ChainLayout {
        ChainLayout {
            layout: SlotLayout::Randomized,
            slot_bytes,
        }
    }

    /// An aligned (classic) layout with this slot.
    pub fn aligned(slot_bytes: usize) -> ChainLayout {
        ChainLayout {
            layout: SlotLayout::Aligned,
            slot_bytes,
        }
    }

    /// Checks the slot against the layout.
    pub fn validate(&self) -> Result<(), ChaseError> {
        let s = self.slot_bytes;
        match self.layout {
            SlotLayout::Aligned if s < 8 || !s.is_multiple_of(8) => Err(ChaseError::Slot(s)),
            SlotLayout::Randomized
                if s < MIN_RANDOMIZED_SLOT_BYTES
                    || !s.is_multiple_of(MIN_RANDOMIZED_SLOT_BYTES) =>
            {
                Err(ChaseError::RandomizedSlot(s))
            }
            _ => Ok(()),
        }
    }

    /// Checks the layout together with the order it will be visited in (a TLB-local
    /// block must hold at least one slot).
    pub fn validate_with(&self, order: ChaseOrder) -> Result<(), ChaseError> {
        self.validate()?;
        match order {
            ChaseOrder::TlbLocal { locality } if locality < self.slot_bytes => {
                Err(ChaseError::Locality {
                    locality,
                    slot: self.slot_bytes,
                })
            }
            _ => Ok(()),
        }
    }

    /// Bytes of memory spanned per touched byte (4 for 256-byte slots; 1 below a line).
    pub fn span_per_touched(&self) -> usize {
        self.slot_bytes.div_ceil(self.touched_per_element())
    }

    /// Touched bytes per element: one line, or the slot when slots are below a line.
    pub fn touched_per_element(&self) -> usize {
        self.slot_bytes.min(LINE_BYTES)
    }

    /// Elements of a chase over `touched_bytes` (rounded down, at least one).
    pub fn elements(&self, touched_bytes: usize) -> usize {
        (touched_bytes / self.touched_per_element()).max(1)
    }

    /// Touched bytes rounded to whole elements.
    pub fn round_touched(&self, touched_bytes: usize) -> usize {
        self.elements(touched_bytes) * self.touched_per_element()
    }

    /// Bytes of memory a chase over `touched_bytes` spans.
    pub fn span_bytes(&self, touched_bytes: usize) -> usize {
        self.elements(touched_bytes) * self.slot_bytes
    }

    /// Byte offset of the element inside slot `slot`, for a chain seeded with `seed`: a
    /// random 8-byte word of the slot (randomized), or 0 (aligned). A pure function of
    /// (seed, slot), so the pool benchmarks can compute it instead of storing it.
    #[inline(always)]
    pub fn offset(&self, slot: usize, seed: u64) -> usize {
        match self.layout {
            SlotLayout::Aligned => 0,
            SlotLayout::Randomized => {
                let words = (self.slot_bytes / 8) as u64;
                ((mix64(seed ^ (slot as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) % words) * 8)
                    as usize
            }
        }
    }

    /// Name as recorded in ids and output (`randomized-256`).
    pub fn label(&self) -> String {
        format!("{}-{}", self.layout.name(), self.slot_bytes)
    }

    /// Parameters as recorded in the output.
    pub fn describe(&self) -> serde_json::Value {
        json!({"layout": self.layout.name(), "slot_bytes": self.slot_bytes})
    }

    /// The method in words, for measurement records.
    pub fn method(&self) -> String {
        match self.layout {
            SlotLayout::Randomized => format!(
                "one element per {}-byte slot at a random line and 8-byte word of the slot (no fixed offset, no adjacent-line help)",
                self.slot_bytes
            ),
            SlotLayout::Aligned => format!(
                "one element at offset 0 of each {}-byte slot (aligned: prefetchers may learn it)",
                self.slot_bytes
            ),
        }
    }
}

/// SplitMix64's finalizer: a bijective 64-bit mix.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Sattolo's algorithm: a uniformly random cyclic permutation of `0..n` as a successor
/// array (`next[i]` follows `i`); following it from any element visits all `n` once.
pub fn sattolo(n: usize, rng: &mut SmallRng) -> Vec<u32> {
    assert!(n <= u32::MAX as usize, "too many elements for a u32 index");
    let mut a: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..i);
        a.swap(i, j);
    }
    a
}

/// Shuffles `s` in place (Fisher-Yates).
fn shuffle(s: &mut [u32], rng: &mut SmallRng) {
    for i in (1..s.len()).rev() {
        let j = rng.random_range(0..=i);
        s.swap(i, j);
    }
}

/// The order a chase over `n` slots of `slot` bytes visits them in: `seq[k]` is the slot
/// of the k-th element, and the last leads back to the first. Random: one uniformly random
/// cycle over all slots. TLB-local: blocks of `locality` bytes in a random cycle, the
/// slots of each block in random order.
pub fn visit_order(n: usize, slot: usize, order: ChaseOrder, seed: u64) -> Vec<u32> {
    assert!(n <= u32::MAX as usize, "too many elements for a u32 index");
    let mut rng = SmallRng::seed_from_u64(seed);
    let per_block = match order {
        ChaseOrder::Random => n,
        ChaseOrder::TlbLocal { locality } => (locality / slot).max(1),
    };
    if per_block >= n {
        let mut seq: Vec<u32> = (0..n as u32).collect();
        shuffle(&mut seq, &mut rng);
        return seq;
    }
    let blocks = n.div_ceil(per_block);
    let mut block_order: Vec<u32> = (0..blocks as u32).collect();
    shuffle(&mut block_order, &mut rng);
    let mut seq: Vec<u32> = Vec::with_capacity(n);
    for b in block_order {
        let lo = b as usize * per_block;
        let hi = (lo + per_block).min(n);
        let start = seq.len();
        seq.extend(lo as u32..hi as u32);
        shuffle(&mut seq[start..], &mut rng);
    }
    seq
}

/// The successor array of a chase over `n` slots of `slot` bytes in `order`: `next[i]`
/// follows slot `i` ([`visit_order`] as a cycle).
pub fn successors(n: usize, slot: usize, order: ChaseOrder, seed: u64) -> Vec<u32> {
    let seq = visit_order(n, slot, order, seed);
    let mut next = vec![0u32; n];
    for k in 0..n {
        next[seq[k] as usize] = seq[(k + 1) % n];
    }
    next
}

/// Writes the chain into `mem` in visiting order: the element of slot `seq[k]` (at
/// [`ChainLayout::offset`]) holds the address of the element of slot `seq[k + 1]`, the
/// last that of the first. Returns the address of the first element.
pub fn write_chain(mem: &mut [u8], layout: ChainLayout, seq: &[u32], seed: u64) -> *const u8 {
    let slot = layout.slot_bytes;
    assert!(slot >= 8 && slot.is_multiple_of(8) && !seq.is_empty());
    assert!(seq.len() * slot <= mem.len());
    let base = mem.as_mut_ptr() as usize;
    let addr = |i: u32| i as usize * slot + layout.offset(i as usize, seed);
    let n = seq.len();
    for k in 0..n {
        let bytes = (base + addr(seq[(k + 1) % n])).to_ne_bytes();
        let at = addr(seq[k]);
        mem[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    // SAFETY: addr(seq[0]) < seq.len() * slot <= mem.len(), so the pointer stays inside
    // `mem`.
    unsafe { mem.as_ptr().add(addr(seq[0])) }
}

/// Loads per loop iteration of [`chase`].
pub const UNROLL: usize = 16;

/// Follows `steps` pointers from `start` (rounded down to a multiple of [`UNROLL`]) and
/// returns where it stopped. Each load's address is the previous load's value.
///
/// # Safety
/// `start` must be an element of a chain written by [`write_chain`] into memory that is
/// still mapped and not modified while the chase runs.
#[inline(never)]
pub unsafe fn chase(start: *const u8, steps: usize) -> *const u8 {
    let mut p = start as *const *const u8;
    macro_rules! step {
        () => {
            // SAFETY: by the caller's contract every element holds the address of an
            // element of the same chain, 8-byte aligned, so `p` is always valid.
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

/// A position in a [`Chain`] (only a chain hands them out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor(*const u8);

/// A chain written into borrowed memory: while it lives the memory cannot be changed, so
/// following it is safe.
pub struct Chain<'a> {
    base: *const u8,
    start: *const u8,
    n: usize,
    layout: ChainLayout,
    order: ChaseOrder,
    seed: u64,
    lapped: bool,
    _mem: PhantomData<&'a [u8]>,
}

impl<'a> Chain<'a> {
    /// Builds a chase over `touched_bytes` (rounded to whole elements) in `mem`, written
    /// in visiting order; a chain of up to [`WARM_LAP_MAX_BYTES`] is then followed one full
    /// lap (see the module's "Before timing").
    pub fn build(
        mem: &'a mut [u8],
        layout: ChainLayout,
        order: ChaseOrder,
        touched_bytes: usize,
        seed: u64,
    ) -> Result<Chain<'a>, ChaseError> {
        layout.validate_with(order)?;
        if touched_bytes < layout.touched_per_element() {
            return Err(ChaseError::TooSmall {
                touched: touched_bytes,
                min: layout.touched_per_element(),
            });
        }
        let n = layout.elements(touched_bytes);
        if n > u32::MAX as usize {
            return Err(ChaseError::TooMany(n));
        }
        let need = n * layout.slot_bytes;
        if need > mem.len() {
            return Err(ChaseError::Memory {
                need,
                have: mem.len(),
            });
        }
        let seq = visit_order(n, layout.slot_bytes, order, seed);
        let start = write_chain(mem, layout, &seq, seed);
        drop(seq);
        let lapped = n * layout.touched_per_element() <= WARM_LAP_MAX_BYTES;
        let chain = Chain {
            base: mem.as_ptr(),
            start,
            n,
            layout,
            order,
            seed,
            lapped,
            _mem: PhantomData,
        };
        if lapped {
            chain.lap(chain.cursor());
        }
        Ok(chain)
    }

    /// The first element.
    pub fn cursor(&self) -> Cursor {
        Cursor(self.start)
    }

    /// Follows `steps` loads (rounded down to a multiple of [`UNROLL`]) from `from`.
    #[inline]
    pub fn walk(&self, from: Cursor, steps: usize) -> Cursor {
        // SAFETY: `from` came from this chain (Cursor is only made by it), whose memory
        // is borrowed for 'a and so neither unmapped nor modified.
        Cursor(unsafe { chase(from.0, steps) })
    }

    /// One dependent load: the element after `from` (for timing single loads, where
    /// [`Chain::walk`] takes whole unrolled groups of steps).
    #[inline(always)]
    pub fn step(&self, from: Cursor) -> Cursor {
        // SAFETY: as in `walk`: `from` came from this chain, whose elements each hold the
        // 8-byte-aligned address of an element of the same borrowed, unmodified memory.
        Cursor(unsafe { core::ptr::read_volatile(from.0 as *const *const u8) })
    }

    /// One full lap (every element once, rounded up to the unroll).
    pub fn lap(&self, from: Cursor) -> Cursor {
        self.walk(from, self.n.next_multiple_of(UNROLL))
    }

    /// Evicts every element's line from every cache level (clflushopt, else clflush),
    /// for a cold lap; `Err` says why the CPU or architecture cannot.
    pub fn flush(&self) -> Result<(), String> {
        let m = cacheline::invalidate_method()?;
        for i in 0..self.n {
            let at = i * self.layout.slot_bytes + self.layout.offset(i, self.seed);
            // SAFETY: the element lies inside the borrowed memory (checked in build);
            // `m` is available on this CPU.
            unsafe { cacheline::flush_range(m, self.base.wrapping_add(at), 8) };
        }
        cacheline::full_fence();
        Ok(())
    }

    /// Elements in the chain.
    pub fn elements(&self) -> usize {
        self.n
    }

    /// Touched bytes (distinct lines x 64).
    pub fn touched_bytes(&self) -> usize {
        self.n * self.layout.touched_per_element()
    }

    /// Bytes of memory spanned.
    pub fn span_bytes(&self) -> usize {
        self.n * self.layout.slot_bytes
    }

    /// Parameters as recorded in the output.
    pub fn describe(&self) -> serde_json::Value {
        let mut v = json!({
            "size_bytes": self.touched_bytes(),
            "touched_bytes": self.touched_bytes(),
            "span_bytes": self.span_bytes(),
            "elements": self.n,
            "seed": self.seed,
            "warmup": if self.lapped {
                "built in visiting order, then one full lap"
            } else {
                "built in visiting order, no lap: the walk starts at the first element, so each line it reaches was last touched one lap before"
            },
        });
        if let Some(o) = v.as_object_mut() {
            for extra in [self.layout.describe(), self.order.describe()] {
                if let Some(e) = extra.as_object() {
                    o.extend(e.clone());
                }
            }
        }
        v
    }
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
    fn sattolo_is_one_cycle_through_every_element() {
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
        let (n, slot, loc) = (10_000usize, 256usize, 16384usize);
        let next = successors(n, slot, ChaseOrder::TlbLocal { locality: loc }, 9);
        assert_eq!(cycle_len(&next), n);
        // Consecutive steps leave their block only once per block.
        let per = loc / slot;
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
    fn layouts_validate() {
        assert!(ChainLayout::DEFAULT.validate().is_ok());
        assert!(ChainLayout::randomized(128).validate().is_ok());
        assert!(ChainLayout::randomized(64).validate().is_err());
        assert!(ChainLayout::randomized(192).validate().is_err());
        assert!(ChainLayout::randomized(384).validate().is_ok());
        assert!(ChainLayout::randomized(200).validate().is_err());
        assert!(ChainLayout::aligned(64).validate().is_ok());
        assert!(ChainLayout::aligned(8).validate().is_ok());
        assert!(ChainLayout::aligned(12).validate().is_err());
    }

    #[test]
    fn touched_bytes_and_span() {
        let l = ChainLayout::DEFAULT;
        assert_eq!(l.elements(1 << 20), (1 << 20) / 64);
        assert_eq!(
            l.span_bytes(1 << 20),
            4 << 20,
            "256-byte slots span 4x the touched"
        );
        assert_eq!(ChainLayout::aligned(64).span_bytes(1 << 20), 1 << 20);
        // Sub-line slots: several elements per line, touched = spanned.
        assert_eq!(ChainLayout::aligned(16).span_bytes(4096), 4096);
        assert_eq!(ChainLayout::aligned(16).elements(4096), 256);
    }

    /// Walks one lap of a chain by hand and returns the slot visited at each step and the
    /// offset of each element inside its slot.
    fn walk_by_hand(mem: &mut [u8], layout: ChainLayout, touched: usize) -> Vec<(usize, usize)> {
        let base = mem.as_ptr() as usize;
        let chain = Chain::build(mem, layout, ChaseOrder::DEFAULT, touched, 7).unwrap();
        let n = chain.elements();
        let mut out = Vec::with_capacity(n);
        let mut c = chain.cursor();
        for _ in 0..n {
            let off = c.0 as usize - base;
            out.push((off / layout.slot_bytes, off % layout.slot_bytes));
            // SAFETY: c is an element of the chain, whose memory is alive.
            c = Cursor(unsafe { *(c.0 as *const *const u8) });
        }
        assert_eq!(c, chain.cursor(), "one lap returns to the start");
        assert_eq!(
            chain.lap(chain.cursor()),
            chain.cursor(),
            "the unrolled lap too"
        );
        out
    }

    #[test]
    fn randomized_chain_is_one_cycle_with_every_element_inside_its_slot() {
        let layout = ChainLayout::DEFAULT;
        let touched = 256 * 1024; // 4096 elements over 1 MiB
        let mut mem = vec![0u8; layout.span_bytes(touched)];
        let visits = walk_by_hand(&mut mem, layout, touched);
        let n = layout.elements(touched);
        assert_eq!(visits.len(), n);
        let mut seen = vec![false; n];
        for &(slot, off) in &visits {
            assert!(!seen[slot], "slot {slot} visited twice");
            seen[slot] = true;
            assert!(off + 8 <= layout.slot_bytes && off % 8 == 0, "offset {off}");
        }
        assert!(seen.iter().all(|&s| s), "every slot visited");
        // Offsets vary: the touched line and the word inside it take many values.
        let lines: std::collections::BTreeSet<usize> =
            visits.iter().map(|&(_, o)| o / LINE_BYTES).collect();
        let words: std::collections::BTreeSet<usize> =
            visits.iter().map(|&(_, o)| o % LINE_BYTES / 8).collect();
        assert_eq!(lines.len(), layout.slot_bytes / LINE_BYTES, "{lines:?}");
        assert_eq!(words.len(), 8, "{words:?}");
        // No fixed offset: consecutive slots rarely share one (1/32 by chance).
        let mut by_slot = visits.clone();
        by_slot.sort_unstable();
        let same = by_slot.windows(2).filter(|w| w[0].1 == w[1].1).count();
        assert!(same < n / 10, "{same} of {n} neighbours share an offset");
        // No adjacent-line help: each 128-byte pair holds at most one touched line.
        let pairs: std::collections::BTreeSet<usize> = visits
            .iter()
            .map(|&(s, o)| (s * layout.slot_bytes + o) / 128)
            .collect();
        assert_eq!(pairs.len(), n);
    }

    #[test]
    fn aligned_chain_keeps_offset_zero() {
        let layout = ChainLayout::aligned(128);
        let mut mem = vec![0u8; layout.span_bytes(64 * 1024)];
        let visits = walk_by_hand(&mut mem, layout, 64 * 1024);
        assert!(visits.iter().all(|&(_, o)| o == 0));
    }

    #[test]
    fn offsets_depend_on_seed_and_slot_only() {
        let l = ChainLayout::DEFAULT;
        assert_eq!(l.offset(17, 3), l.offset(17, 3));
        let a: Vec<usize> = (0..64).map(|i| l.offset(i, 3)).collect();
        let b: Vec<usize> = (0..64).map(|i| l.offset(i, 4)).collect();
        assert_ne!(a, b);
    }

    #[test]
    fn bad_chains_are_refused() {
        let mut mem = vec![0u8; 4096];
        let e = Chain::build(
            &mut mem,
            ChainLayout::DEFAULT,
            ChaseOrder::DEFAULT,
            64 * 1024,
            1,
        );
        assert!(matches!(e, Err(ChaseError::Memory { .. })));
        let e = Chain::build(
            &mut mem,
            ChainLayout::randomized(64),
            ChaseOrder::DEFAULT,
            1024,
            1,
        );
        assert!(matches!(e, Err(ChaseError::RandomizedSlot(64))));
        let e = Chain::build(&mut mem, ChainLayout::DEFAULT, ChaseOrder::DEFAULT, 32, 1);
        assert!(matches!(e, Err(ChaseError::TooSmall { .. })));
    }

    #[test]
    fn flush_keeps_the_chain_intact() {
        let layout = ChainLayout::DEFAULT;
        let mut mem = vec![0u8; layout.span_bytes(64 * 1024)];
        let chain = Chain::build(&mut mem, layout, ChaseOrder::DEFAULT, 64 * 1024, 5).unwrap();
        match chain.flush() {
            Ok(()) => assert_eq!(chain.lap(chain.cursor()), chain.cursor()),
            // Only where the architecture has no flush instruction; x86_64 always has clflush.
            Err(why) => {
                let x86 = std::env::consts::ARCH == "x86_64";
                assert!(!x86, "x86_64 always has clflush: {why}");
            }
        }
    }

    #[test]
    fn single_steps_follow_the_same_chain_as_walk() {
        let layout = ChainLayout::DEFAULT;
        let mut mem = vec![0u8; layout.span_bytes(64 * 1024)];
        let chain = Chain::build(&mut mem, layout, ChaseOrder::DEFAULT, 64 * 1024, 7).unwrap();
        let mut p = chain.cursor();
        for _ in 0..UNROLL {
            let q = chain.step(p);
            assert_ne!(q, p, "a step moves to another element");
            p = q;
        }
        assert_eq!(p, chain.walk(chain.cursor(), UNROLL));
    }
}
