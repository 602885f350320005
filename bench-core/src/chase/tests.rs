use super::*;
use rand::rngs::SmallRng;
use rand::SeedableRng;

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
    let l = ChainLayout::randomized(256);
    assert_eq!(l.elements(1 << 20), (1 << 20) / 64);
    assert_eq!(
        l.span_bytes(1 << 20),
        4 << 20,
        "256-byte slots of one line span 4x the touched"
    );
    let p = ChainLayout::DEFAULT;
    assert_eq!(p.phases(), 4);
    assert_eq!(p.elements(1 << 20), (1 << 20) / 64);
    assert_eq!(
        p.span_bytes(1 << 20),
        1 << 20,
        "a phased chain spans what it touches"
    );
    assert_eq!(p.span_per_touched(), 1);
    assert_eq!(p.round_touched(1000), 768, "whole slots");
    assert_eq!(p.round_touched(100), 256, "at least one slot");
    assert_eq!(ChainLayout::aligned(64).span_bytes(1 << 20), 1 << 20);
    // Sub-line slots: several elements per line, touched = spanned.
    assert_eq!(ChainLayout::aligned(16).span_bytes(4096), 4096);
    assert_eq!(ChainLayout::aligned(16).elements(4096), 256);
}

/// Walks one lap of a chain by hand and returns the slot visited at each step and the
/// offset of each element inside its slot.
fn walk_by_hand(mem: &mut [u8], layout: ChainLayout, touched: usize) -> Vec<(usize, usize)> {
    walk_in_order(mem, layout, ChaseOrder::DEFAULT, touched)
}

/// [`walk_by_hand`] of a chain in `order`.
fn walk_in_order(
    mem: &mut [u8],
    layout: ChainLayout,
    order: ChaseOrder,
    touched: usize,
) -> Vec<(usize, usize)> {
    let base = mem.as_ptr() as usize;
    let chain = Chain::build(mem, layout, order, touched, 7).unwrap();
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
    let layout = ChainLayout::randomized(256);
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
    assert!(matches!(
        e,
        Err(ChaseError::RandomizedSlot {
            layout: "randomized",
            slot: 64
        })
    ));
    let e = Chain::build(
        &mut mem,
        ChainLayout::phased(192),
        ChaseOrder::DEFAULT,
        1024,
        1,
    );
    assert!(matches!(
        e,
        Err(ChaseError::RandomizedSlot { slot: 192, .. })
    ));
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

#[test]
fn a_phased_chain_touches_every_line_once_a_lap_and_keeps_buddies_half_a_lap_apart() {
    for (slot, order) in [
        (256, ChaseOrder::DEFAULT),
        (512, ChaseOrder::DEFAULT),
        (128, ChaseOrder::Random),
        (256, ChaseOrder::TlbLocal { locality: 16384 }),
    ] {
        let layout = ChainLayout::phased(slot);
        let touched = 4 << 20; // 64 Ki lines
        let mut mem = vec![0u8; layout.span_bytes(touched)];
        let visits = walk_in_order(&mut mem, layout, order, touched);
        let n = layout.elements(touched);
        let lines = slot / LINE_BYTES;
        let slots = n / lines;
        assert_eq!(visits.len(), n, "{slot}");
        // When (which step of the lap) each line of the span was visited.
        let mut when = vec![usize::MAX; n];
        for (k, &(s, off)) in visits.iter().enumerate() {
            assert!(off + 8 <= slot && off % 8 == 0, "offset {off}");
            let line = s * lines + off / LINE_BYTES;
            assert_eq!(when[line], usize::MAX, "line {line} visited twice in a lap");
            when[line] = k;
        }
        assert!(when.iter().all(|&w| w != usize::MAX), "every line visited");
        // Phase by phase: each phase visits every slot once.
        for (p, phase) in visits.chunks(slots).enumerate() {
            let mut seen = vec![false; slots];
            for &(s, _) in phase {
                assert!(!seen[s], "slot {s} twice in phase {p}");
                seen[s] = true;
            }
        }
        // The two lines of each 128-byte pair: half a lap apart, give or take a block.
        let block = match order {
            ChaseOrder::TlbLocal { locality } => locality / slot,
            ChaseOrder::Random => 0,
        };
        let half = n / 2;
        for pair in 0..n / 2 {
            let (a, b) = (when[2 * pair], when[2 * pair + 1]);
            let d = a.abs_diff(b);
            assert!(
                d + block >= half && d <= half + block,
                "slot {slot}: pair {pair} {d} steps apart, half a lap is {half}"
            );
        }
        // Any two visits of one slot: at least a phase apart, give or take a block.
        for s in 0..slots {
            let mut ks: Vec<usize> = (0..lines).map(|l| when[s * lines + l]).collect();
            ks.sort_unstable();
            for w in ks.windows(2) {
                assert!(w[1] - w[0] + block >= slots, "slot {s}: {ks:?}");
            }
        }
        // No fixed offset: phase 0 visits the slots at every line and word.
        let first: Vec<usize> = visits[..slots].iter().map(|&(_, o)| o).collect();
        let at_lines: std::collections::BTreeSet<usize> =
            first.iter().map(|o| o / LINE_BYTES).collect();
        let at_words: std::collections::BTreeSet<usize> =
            first.iter().map(|o| o % LINE_BYTES / 8).collect();
        assert_eq!(at_lines.len(), lines, "{slot}: {at_lines:?}");
        assert_eq!(at_words.len(), 8, "{slot}: {at_words:?}");
    }
}

#[test]
fn the_phased_twin_touches_the_same_lines_in_address_order() {
    let layout = ChainLayout::DEFAULT.twin();
    assert_eq!(layout.layout, SlotLayout::PhasedAligned);
    assert_eq!(layout.twin(), ChainLayout::DEFAULT);
    let mut mem = vec![0u8; layout.span_bytes(1 << 20)];
    let visits = walk_by_hand(&mut mem, layout, 1 << 20);
    let slots = visits.len() / 4;
    for (p, phase) in visits.chunks(slots).enumerate() {
        assert!(phase.iter().all(|&(_, o)| o == p * LINE_BYTES), "phase {p}");
    }
}

#[test]
fn a_phased_flush_keeps_the_chain_and_a_phased_span_is_its_memory() {
    let layout = ChainLayout::DEFAULT;
    let mut mem = vec![0u8; 64 * 1024];
    let chain = Chain::build(&mut mem, layout, ChaseOrder::DEFAULT, 64 * 1024, 3).unwrap();
    assert_eq!(chain.span_bytes(), 64 * 1024);
    assert_eq!(chain.touched_bytes(), 64 * 1024);
    if chain.flush().is_ok() {
        assert_eq!(chain.lap(chain.cursor()), chain.cursor());
    }
    let d = chain.describe();
    assert_eq!(d["layout"], "phased");
    assert_eq!(d["phases"], 4);
    assert_eq!(d["span_bytes"], 64 * 1024);
}
