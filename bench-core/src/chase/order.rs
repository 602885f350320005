//! The order a chain visits its elements in, and the writing of a chain in that order.

use super::{ChainLayout, ChaseOrder};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

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

/// Blocks a chain needs at least before its phases shuffle the slots of each block anew:
/// with fewer, a slot's visits in two phases could fall close together.
const MIN_BLOCKS_TO_RESHUFFLE: usize = 8;

/// The order phase `phase` of a chain over `n` slots visits them in ([`visit_order`] for
/// phase 0). Every phase keeps phase 0's order of blocks, so a slot is reached about one
/// phase (`n` elements) after its previous visit; with at least
/// `MIN_BLOCKS_TO_RESHUFFLE` blocks the slots inside each block are shuffled anew per
/// phase (the distance moves by less than a block), else the whole order repeats.
pub fn phase_order(n: usize, slot: usize, order: ChaseOrder, seed: u64, phase: usize) -> Vec<u32> {
    let first = visit_order(n, slot, order, seed);
    if phase == 0 {
        return first;
    }
    phase_from_first(&first, slot, order, seed, phase)
}

/// [`phase_order`] for a phase after the first, from phase 0's order `first` (drawn once
/// by the writer, not again per phase).
fn phase_from_first(
    first: &[u32],
    slot: usize,
    order: ChaseOrder,
    seed: u64,
    phase: usize,
) -> Vec<u32> {
    let n = first.len();
    let mut seq = first.to_vec();
    let per_block = match order {
        ChaseOrder::Random => n,
        ChaseOrder::TlbLocal { locality } => (locality / slot).max(1),
    };
    if n.div_ceil(per_block) < MIN_BLOCKS_TO_RESHUFFLE {
        return seq;
    }
    let mut rng =
        SmallRng::seed_from_u64(seed ^ (phase as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    for block in seq.chunks_mut(per_block) {
        shuffle(block, &mut rng);
    }
    seq
}

/// Heap bytes [`write_chain`] holds at once while it writes a chain over `n` slots of
/// `layout` in `order` (beside the chain's own memory): the slot orders of the first
/// phase, of the phase being written and of the next (4 bytes a slot), and the block
/// order the next is drawn with.
pub fn write_scratch_bytes(layout: ChainLayout, n: usize, order: ChaseOrder) -> usize {
    let per_block = match order {
        ChaseOrder::Random => n,
        ChaseOrder::TlbLocal { locality } => (locality / layout.slot_bytes.max(1)).max(1),
    };
    let blocks = if per_block >= n {
        0
    } else {
        n.div_ceil(per_block)
    };
    let orders = if layout.phases() > 1 { 3 } else { 2 };
    4 * (orders * n + blocks)
}

/// Writes the chain over `n` slots into `mem` in visiting order: phase after phase
/// ([`phase_order`]; one phase unless the layout is phased), the element of the k-th slot
/// of a phase (at [`ChainLayout::element_offset`]) holds the address of the next
/// element, the last of the last phase that of the first. Returns the address of the
/// first element.
pub fn write_chain(
    mem: &mut [u8],
    layout: ChainLayout,
    n: usize,
    order: ChaseOrder,
    seed: u64,
) -> *const u8 {
    let slot = layout.slot_bytes;
    assert!(slot >= 8 && slot.is_multiple_of(8) && n > 0);
    assert!(n * slot <= mem.len());
    let base = mem.as_mut_ptr() as usize;
    let addr =
        |i: u32, phase: usize| i as usize * slot + layout.element_offset(i as usize, phase, seed);
    let phases = layout.phases();
    let first = visit_order(n, slot, order, seed);
    let start = addr(first[0], 0);
    let mut seq = first.clone();
    for phase in 0..phases {
        let last_phase = phase + 1 == phases;
        let next = if last_phase {
            Vec::new()
        } else {
            phase_from_first(&first, slot, order, seed, phase + 1)
        };
        let head = if last_phase { &first } else { &next };
        for k in 0..n {
            let to = match seq.get(k + 1) {
                Some(&s) => addr(s, phase),
                None => addr(head[0], (phase + 1) % phases),
            };
            let bytes = (base + to).to_ne_bytes();
            let at = addr(seq[k], phase);
            mem[at..at + bytes.len()].copy_from_slice(&bytes);
        }
        if !last_phase {
            seq = next;
        }
    }
    // SAFETY: `start` lies in the first slot's element, below n * slot <= mem.len().
    unsafe { mem.as_ptr().add(start) }
}
