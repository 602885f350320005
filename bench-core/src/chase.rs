//! The pointer chase every latency family uses: a chain of dependent loads that no
//! hardware prefetcher can learn, by construction.
//!
//! # The chain
//!
//! The memory is cut into **slots** of `slot_bytes` (default 256, multichase's default
//! stride), 128-byte aligned. The default chain ([`SlotLayout::Phased`]) touches every
//! line of every slot, one per **phase**: a lap of the chain is `slot_bytes / 64` phases,
//! each of which visits every slot once, at one of its lines, in the slot order the chase
//! order gives ([`ChaseOrder`]). So the chain spans exactly the bytes it touches, and
//! three things keep prefetchers out:
//!
//! * **No fixed in-slot offset**: the line a slot is visited at in a phase and the 8-byte
//!   word inside it are drawn per slot and phase, so the addresses share no offset
//!   pattern that a spatial or footprint prefetcher can learn (a chase whose elements all
//!   sit at offset 0 of their slot is learned by some Intel cores). multichase's "mixer"
//!   does the same with 64 offset permutations that repeat every 64 slots; here every
//!   slot draws its own.
//! * **No adjacent-line help**: inside a phase a slot is touched at one line only, so the
//!   128-byte buddy an adjacent-line prefetcher fetches with it is not wanted in that
//!   phase; the first half of the phases visits one line of each of the slot's 128-byte
//!   pairs, the second half the other lines, so a buddy is wanted half a lap later, after
//!   half the working set of other lines (at a DRAM working set of 4 x the caches, twice
//!   the caches) has gone through them. Any line of a slot is revisited one phase (a
//!   quarter of the working set, at least the caches) after the last.
//! * **No learnable order**: the slots are visited in one random cycle, either over all
//!   of them ([`ChaseOrder::Random`], page walks included) or in TLB-local blocks of
//!   `locality` bytes of memory, the blocks in a random cycle and the slots in a random
//!   order inside each block ([`ChaseOrder::TlbLocal`], MLC's and multichase's idle
//!   latency), so the TLB working set stays small. Every phase keeps the order of the
//!   blocks and shuffles the slots inside each anew.
//!
//! [`SlotLayout::Randomized`] (one element per slot, at a random line and word) and
//! [`SlotLayout::Aligned`] (offset 0 of each slot, the classic chase) touch one line per
//! slot and span `slot_bytes / 64` times what they touch; [`SlotLayout::PhasedAligned`]
//! is the phased chain with its lines in order at word 0, the twin the prefetch
//! self-check compares the default with (same pages, same page walks per load). None of
//! them is a default.
//!
//! # Sizes
//!
//! A working set is counted in **touched bytes**: distinct 64-byte lines x 64. A phased
//! chase of `T` touched bytes has `T / 64` elements and spans `T` bytes; a one-line-per-
//! slot chase spans `T / 64 x slot_bytes` (slots below one line hold several elements per
//! line: then touched = spanned).
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

/// Where the elements sit inside their slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotLayout {
    /// Every line of the slot, one per phase of the lap, in a random order that keeps the
    /// two lines of each 128-byte pair half a lap apart, each at a random 8-byte word
    /// (default: the chain spans what it touches).
    Phased,
    /// Every line of the slot, one per phase, in address order at word 0: the phased
    /// chain's twin for the prefetch self-check, which a prefetcher may learn.
    PhasedAligned,
    /// One element per slot, at a random line and a random 8-byte word of that line.
    Randomized,
    /// One element per slot, at offset 0: the classic chase, which some prefetchers learn.
    Aligned,
}

impl SlotLayout {
    /// Name as recorded in the output (`phased`, `phased-aligned`, `randomized`,
    /// `aligned`).
    pub fn name(self) -> &'static str {
        match self {
            SlotLayout::Phased => "phased",
            SlotLayout::PhasedAligned => "phased-aligned",
            SlotLayout::Randomized => "randomized",
            SlotLayout::Aligned => "aligned",
        }
    }

    /// Whether every line of a slot is touched (one per phase).
    pub fn is_phased(self) -> bool {
        matches!(self, SlotLayout::Phased | SlotLayout::PhasedAligned)
    }

    /// The layout built the other way for the prefetch self-check: same slot, same lines
    /// touched, only the in-slot offsets fixed (or drawn).
    pub fn twin(self) -> SlotLayout {
        match self {
            SlotLayout::Phased => SlotLayout::PhasedAligned,
            SlotLayout::PhasedAligned => SlotLayout::Phased,
            SlotLayout::Randomized => SlotLayout::Aligned,
            SlotLayout::Aligned => SlotLayout::Randomized,
        }
    }
}

/// A bad chain layout (the user's mistake: an error, not a skip).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChaseError {
    /// Aligned slot not a multiple of the pointer size.
    #[error("slot {0} must be a multiple of 8 bytes and at least 8")]
    Slot(usize),
    /// Randomized or phased slot too small or not whole 128-byte pairs of lines.
    #[error(
        "the {layout} layout needs slots that are a multiple of {MIN_RANDOMIZED_SLOT_BYTES} bytes (whole 128-byte pairs of lines, the pair an adjacent-line prefetcher fetches), got {slot}; use --layout aligned for other slots"
    )]
    RandomizedSlot {
        /// The layout's name.
        layout: &'static str,
        /// The slot asked for, in bytes.
        slot: usize,
    },
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
    /// More slots than the u32 index of the order allows.
    #[error("{0} chain slots are more than the chase supports (2^32 - 1)")]
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
    /// The default: every line of 256-byte slots (multichase's default stride), one per
    /// phase, at random offsets.
    pub const DEFAULT: ChainLayout = ChainLayout {
        layout: SlotLayout::Phased,
        slot_bytes: 256,
    };

    /// A phased layout with this slot.
    pub fn phased(slot_bytes: usize) -> ChainLayout {
        ChainLayout {
            layout: SlotLayout::Phased,
            slot_bytes,
        }
    }

    /// This slot built the other way ([`SlotLayout::twin`]).
    pub fn twin(&self) -> ChainLayout {
        ChainLayout {
            layout: self.layout.twin(),
            slot_bytes: self.slot_bytes,
        }
    }

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
            SlotLayout::Aligned => Ok(()),
            l if s < MIN_RANDOMIZED_SLOT_BYTES || !s.is_multiple_of(MIN_RANDOMIZED_SLOT_BYTES) => {
                Err(ChaseError::RandomizedSlot {
                    layout: l.name(),
                    slot: s,
                })
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

    /// Phases of a lap: the lines of a slot for a phased layout, else 1.
    pub const fn phases(&self) -> usize {
        let phased = matches!(self.layout, SlotLayout::Phased | SlotLayout::PhasedAligned);
        if phased && self.slot_bytes >= LINE_BYTES {
            self.slot_bytes / LINE_BYTES
        } else {
            1
        }
    }

    /// Bytes of memory spanned per touched byte (1 phased or below a line; 4 for
    /// 256-byte slots of one line).
    pub fn span_per_touched(&self) -> usize {
        if self.layout.is_phased() {
            1
        } else {
            self.slot_bytes.div_ceil(self.touched_per_element())
        }
    }

    /// Touched bytes per element: one line, or the slot when slots are below a line.
    pub fn touched_per_element(&self) -> usize {
        self.slot_bytes.min(LINE_BYTES)
    }

    /// Slots of a chase over `touched_bytes` (rounded down, at least one).
    pub fn slots(&self, touched_bytes: usize) -> usize {
        let per_slot = self.phases() * self.touched_per_element();
        (touched_bytes / per_slot).max(1)
    }

    /// Elements of a chase over `touched_bytes` (rounded down to whole slots, at least
    /// one slot).
    pub fn elements(&self, touched_bytes: usize) -> usize {
        self.slots(touched_bytes) * self.phases()
    }

    /// Touched bytes rounded to whole elements (whole slots for a phased layout).
    pub fn round_touched(&self, touched_bytes: usize) -> usize {
        self.elements(touched_bytes) * self.touched_per_element()
    }

    /// Bytes of memory a chase over `touched_bytes` spans.
    pub fn span_bytes(&self, touched_bytes: usize) -> usize {
        self.slots(touched_bytes) * self.slot_bytes
    }

    /// Heap bytes [`Chain::build`] takes beside the chain's memory while it writes a chase
    /// over `touched_bytes` in `order` ([`write_scratch_bytes`]; freed when it returns).
    pub fn build_scratch_bytes(&self, touched_bytes: usize, order: ChaseOrder) -> usize {
        write_scratch_bytes(*self, self.slots(touched_bytes), order)
    }

    /// Byte offset of the one element inside slot `slot` of a one-line-per-slot layout
    /// (phase 0 of a phased one), for a chain seeded with `seed`.
    #[inline(always)]
    pub fn offset(&self, slot: usize, seed: u64) -> usize {
        self.element_offset(slot, 0, seed)
    }

    /// Byte offset inside slot `slot` of its element in phase `phase` ([`Self::phases`]),
    /// for a chain seeded with `seed`: a random 8-byte word of the slot (randomized), of
    /// the phase's line (phased), or 0 (aligned; the phase's line for phased-aligned). A
    /// pure function of (seed, slot, phase), so a family can compute it instead of
    /// storing it.
    #[inline(always)]
    pub fn element_offset(&self, slot: usize, phase: usize, seed: u64) -> usize {
        let h = mix64(seed ^ (slot as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        match self.layout {
            SlotLayout::Aligned => 0,
            SlotLayout::Randomized => ((h % (self.slot_bytes / 8) as u64) * 8) as usize,
            SlotLayout::PhasedAligned => phase * LINE_BYTES,
            SlotLayout::Phased => {
                let word = (mix64(h ^ phase as u64) % 8) as usize;
                phased_line(h, self.slot_bytes / LINE_BYTES, phase) * LINE_BYTES + word * 8
            }
        }
    }

    /// Name as recorded in ids and output (`randomized-256`).
    pub fn label(&self) -> String {
        format!("{}-{}", self.layout.name(), self.slot_bytes)
    }

    /// Parameters as recorded in the output.
    pub fn describe(&self) -> serde_json::Value {
        json!({
            "layout": self.layout.name(),
            "slot_bytes": self.slot_bytes,
            "phases": self.phases(),
        })
    }

    /// The method in words, for measurement records.
    pub fn method(&self) -> String {
        match self.layout {
            SlotLayout::Phased => format!(
                "every line of each {}-byte slot, one per phase of the lap, at a random 8-byte word, the slot's lines in a random order that keeps each 128-byte pair's two lines half a lap apart (span = touched bytes, no fixed offset, no adjacent-line help)",
                self.slot_bytes
            ),
            SlotLayout::PhasedAligned => format!(
                "every line of each {}-byte slot, one per phase of the lap, in address order at offset 0 of the line (aligned: prefetchers may learn it)",
                self.slot_bytes
            ),
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

/// The line of a slot of `lines` lines (an even number) that phase `phase` visits, for
/// the slot's hash `h`: the first `lines / 2` phases take one line of each 128-byte pair,
/// the pairs in an order rotated by the hash and the line of each pair drawn from it; the
/// other phases take the other line of each pair in the same order.
#[inline(always)]
fn phased_line(h: u64, lines: usize, phase: usize) -> usize {
    let pairs = (lines / 2).max(1);
    let (second, q) = if phase < pairs {
        (0, phase)
    } else {
        (1, phase - pairs)
    };
    let pair = (q + (h >> 40) as usize % pairs) % pairs;
    let bit = ((h >> (pair % 40)) & 1) as usize ^ second;
    (2 * pair + bit).min(lines.saturating_sub(1))
}

/// SplitMix64's finalizer: a bijective 64-bit mix.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

mod order;
pub use order::{phase_order, sattolo, successors, visit_order, write_chain, write_scratch_bytes};

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
        let min = layout.phases() * layout.touched_per_element();
        if touched_bytes < min {
            return Err(ChaseError::TooSmall {
                touched: touched_bytes,
                min,
            });
        }
        let slots = layout.slots(touched_bytes);
        if slots > u32::MAX as usize {
            return Err(ChaseError::TooMany(slots));
        }
        let n = layout.elements(touched_bytes);
        let need = layout.span_bytes(touched_bytes);
        if need > mem.len() {
            return Err(ChaseError::Memory {
                need,
                have: mem.len(),
            });
        }
        let start = write_chain(mem, layout, slots, order, seed);
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
        let slots = self.n / self.layout.phases();
        if self.layout.layout.is_phased() {
            // Every line of the span is an element.
            // SAFETY: the span lies inside the borrowed memory (checked in build); `m` is
            // available on this CPU.
            unsafe { cacheline::flush_range(m, self.base, slots * self.layout.slot_bytes) };
        } else {
            for i in 0..slots {
                let at = i * self.layout.slot_bytes + self.layout.offset(i, self.seed);
                // SAFETY: the element lies inside the borrowed memory (checked in build);
                // `m` is available on this CPU.
                unsafe { cacheline::flush_range(m, self.base.wrapping_add(at), 8) };
            }
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
        self.n / self.layout.phases() * self.layout.slot_bytes
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
mod tests;
