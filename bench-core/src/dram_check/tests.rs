//! The check against figures of the 16-core, 300 MiB L3 host beside the H200
//! (`shared/server-runs/h200-host-2026-11-26`, run2-log.txt): its latency sweep and its
//! bandwidth by footprint, as synthetic inputs.

use super::*;
use crate::units::{GIB, MIB};

/// `cxlchar mem latency` p50 by touched working set on that host (tlb-local,
/// randomized-256), between points log-linear, past the last point flat.
const SWEEP_NS: [(usize, f64); 10] = [
    (8 * MIB, 102.847),
    (16 * MIB, 111.999),
    (32 * MIB, 109.119),
    (64 * MIB, 107.263),
    (128 * MIB, 109.311),
    (256 * MIB, 108.351),
    (512 * MIB, 115.135),
    (GIB, 120.191),
    (2 * GIB, 114.495),
    (4 * GIB, 119.487),
];

fn sweep(bytes: usize) -> f64 {
    let pts = &SWEEP_NS;
    if bytes <= pts[0].0 {
        return pts[0].1;
    }
    for w in pts.windows(2) {
        let ((a, va), (b, vb)) = (w[0], w[1]);
        if bytes <= b {
            let f = (bytes as f64 / a as f64).log2() / (b as f64 / a as f64).log2();
            return va + f * (vb - va);
        }
    }
    pts[pts.len() - 1].1
}

/// Streaming bandwidth with `cache` bytes of cache: a share min(1, cache / footprint) of
/// the bytes from the cache at `in_cache`, the rest from DRAM at the figure that puts
/// the curve through `(big, at_big)` (the upper bound of what a cache keeps of a
/// stream: random replacement; LRU keeps nothing).
fn stream(cache: usize, in_cache: f64, big: usize, at_big: f64) -> impl Fn(usize) -> f64 {
    let h = move |s: usize| (cache as f64 / s as f64).min(1.0);
    let dram = (1.0 - h(big)) / (1.0 / at_big - h(big) / in_cache);
    move |s| 1.0 / (h(s) / in_cache + (1.0 - h(s)) / dram)
}

fn check(plan: Plan, f: impl Fn(usize) -> f64) -> Outcome {
    let r: Result<Outcome, ()> = run(plan, |b, _| Ok((f(b), None)));
    r.unwrap()
}

/// The 16 threads' caches on that host: one 300 MiB L3 and 16 L2s of 2 MiB.
const REACH_16T: usize = 332 * MIB;
/// One thread's: the L3 and its own L2.
const REACH_1T: usize = 302 * MIB;

#[test]
fn the_quick_128m_bandwidth_point_is_flagged_and_grows_to_dram() {
    // 16-thread read: 282.1 GB/s at 128 MiB, 103.7 GB/s at 4 GiB.
    let bw = stream(REACH_16T, 282.111, 4 * GIB, 103.743);
    let plan = Plan {
        start_bytes: 128 * MIB,
        floor_bytes: 4 * REACH_16T,
        max_bytes: 64 * GIB,
        better: Better::Higher,
    };
    let o = check(plan, &bw);
    assert_eq!(o.points[0].bytes, 128 * MIB);
    assert_eq!(
        o.points[1].bytes,
        4 * REACH_16T,
        "compared with the cache rule's size, not 2S"
    );
    assert_eq!(o.verdict, Verdict::Grown);
    assert!(o.reported_bytes >= 2 * GIB, "{o:?}");
    let v = o.value_at(o.reported_bytes).unwrap();
    assert!(
        v < 115.0,
        "the reported figure is DRAM's, not the L3's: {v}"
    );
    // The same copy data (174.5 at 128 MiB, 71.8 at 4 GiB) is flagged alike.
    let copy = stream(REACH_16T, 174.463, 4 * GIB, 71.807);
    let o = check(plan, copy);
    assert_eq!(o.verdict, Verdict::Grown);
    assert!(o.value_at(o.reported_bytes).unwrap() < 80.0);
}

#[test]
fn the_4g_bandwidth_point_is_accepted() {
    let bw = stream(REACH_16T, 282.111, 4 * GIB, 103.743);
    let plan = Plan {
        start_bytes: 4 * GIB,
        floor_bytes: 4 * REACH_16T,
        max_bytes: 64 * GIB,
        better: Better::Higher,
    };
    let o = check(plan, bw);
    assert_eq!(o.verdict, Verdict::Agree, "{o:?}");
    assert_eq!(o.reported_bytes, 4 * GIB);
    assert_eq!(o.compared_bytes, [4 * GIB, 8 * GIB]);
    assert!(!o.repeated);
}

#[test]
fn noise_that_changes_sides_is_not_a_cache() {
    let plan = Plan {
        start_bytes: GIB,
        floor_bytes: GIB,
        max_bytes: 64 * GIB,
        better: Better::Higher,
    };
    // S 30% faster in the first pass, 10% slower in the second, faster again in the third.
    let r: Result<Outcome, ()> = run(plan, |b, pass| {
        let v = match (b <= GIB, pass) {
            (true, 2) => 100.0,
            (false, 2) => 110.0,
            (true, _) => 130.0,
            (false, _) => 100.0,
        };
        Ok((v, None))
    });
    let o = r.unwrap();
    assert_eq!(o.verdict, Verdict::Noisy, "{o:?}");
    assert_eq!(o.reported_bytes, GIB, "noise does not grow S");
    assert!(o.points.len() >= 4, "{o:?}");
}

/// The busy-neighbour run of a 2-vCPU guest: 51.0 / 52.9 GB/s at 136 MiB, 10.0 / 9.1 at
/// 272 MiB and 18.1 / 48.2 at 544 MiB. The first comparison is a cache (every pass ~5x);
/// the second's passes at 544 MiB are 2.7x apart, more than the 1.8x the sizes differ by
/// in the first pass: noisy, never "not a cache effect, S stands".
#[test]
fn passes_further_apart_than_the_sizes_are_noisy() {
    let plan = Plan {
        start_bytes: 136 * MIB,
        floor_bytes: 136 * MIB,
        max_bytes: 8 * GIB,
        better: Better::Higher,
    };
    let r: Result<Outcome, ()> = run(plan, |b, pass| {
        let v = match (b / MIB, pass) {
            (136, 1) => 51.0,
            (136, _) => 52.9,
            (272, 1) => 10.0,
            (272, _) => 9.1,
            (_, 1) => 18.1,
            _ => 48.2,
        };
        Ok((v, None))
    });
    let o = r.unwrap();
    assert_eq!(o.verdict, Verdict::Noisy, "{o:?}");
    assert_eq!(o.compared_bytes, [272 * MIB, 544 * MIB]);
    assert!(o.note.as_deref().unwrap().contains("apart"), "{o:?}");
    let c = o.into_check(&plan, info());
    assert!(!c.confirmed());
    let w = warning(&c).expect("a warning");
    assert!(w.message.contains("noisy"), "{}", w.message);
    assert!(c.summary().contains("NOISY"), "{}", c.summary());
}

#[test]
fn one_thread_bandwidth_barely_moves_and_is_accepted_at_its_rule() {
    // One thread: 16.1 GB/s at 128 MiB, 15.3 at 4 GiB; its rule is 4 x 302 MiB.
    let bw = stream(REACH_1T, 16.135, 4 * GIB, 15.279);
    let start = 4 * REACH_1T;
    let plan = Plan {
        start_bytes: start,
        floor_bytes: start,
        max_bytes: 64 * GIB,
        better: Better::Higher,
    };
    let o = check(plan, bw);
    assert_eq!(o.verdict, Verdict::Agree, "{o:?}");
    assert_eq!(o.reported_bytes, start);
}

#[test]
fn the_latency_sweep_flags_128m_and_accepts_4g() {
    let plan = |start| Plan {
        start_bytes: start,
        floor_bytes: 4 * REACH_1T,
        max_bytes: 64 * GIB,
        better: Better::Lower,
    };
    let o = check(plan(128 * MIB), sweep);
    assert_eq!(o.points[1].bytes, 4 * REACH_1T);
    assert!(o.repeated, "a disagreement is measured twice");
    assert_ne!(o.verdict, Verdict::Agree, "{o:?}");
    assert!(o.reported_bytes >= 4 * REACH_1T, "{o:?}");
    let o = check(plan(4 * GIB), sweep);
    assert_eq!(o.verdict, Verdict::Agree, "{o:?}");
    assert_eq!(o.reported_bytes, 4 * GIB);
}

#[test]
fn no_room_for_the_larger_size_compares_half_of_s() {
    let plan = Plan {
        start_bytes: 4 * GIB,
        floor_bytes: 2 * GIB,
        max_bytes: 5 * GIB,
        better: Better::Lower,
    };
    let o = check(plan, sweep);
    assert_eq!(o.compared_bytes, [2 * GIB, 4 * GIB]);
    assert_eq!(o.verdict, Verdict::Agree);
    assert!(o.note.as_deref().unwrap().contains("does not fit"));
    // A cache-resident S/2 leaves S unconfirmed.
    let cache = |b: usize| if b <= 2 * GIB { 40.0 } else { 110.0 };
    let o = check(plan, cache);
    assert_eq!(o.verdict, Verdict::Unconfirmed);
    assert_eq!(o.reported_bytes, 4 * GIB);
}

#[test]
fn growth_stops_at_the_memory_bound_unconfirmed() {
    // Memory for 4 GiB checks only.
    let plan = |start| Plan {
        start_bytes: start,
        floor_bytes: GIB,
        max_bytes: 4 * GIB,
        better: Better::Higher,
    };
    // A 1 GiB set in a cache: grown to 2 GiB, which agrees with 4 GiB.
    let o = check(plan(GIB), |b| if b <= GIB { 300.0 } else { 100.0 });
    assert_eq!(
        (o.verdict, o.reported_bytes),
        (Verdict::Grown, 2 * GIB),
        "{o:?}"
    );
    assert_eq!(o.compared_bytes, [2 * GIB, 4 * GIB]);
    // A cache that holds 2 GiB: 4 GiB would need 8 GiB to be confirmed.
    let o = check(plan(2 * GIB), |b| if b <= 2 * GIB { 300.0 } else { 100.0 });
    assert_eq!(o.verdict, Verdict::Unconfirmed, "{o:?}");
    assert_eq!(o.reported_bytes, 4 * GIB);
    assert_eq!(o.compared_bytes, [2 * GIB, 4 * GIB]);
    assert!(o.note.unwrap().contains("no larger size fits"));
}

#[test]
fn a_faster_larger_size_is_not_a_cache() {
    let plan = Plan {
        start_bytes: GIB,
        floor_bytes: GIB,
        max_bytes: 64 * GIB,
        better: Better::Lower,
    };
    let o = check(plan, |b| if b <= GIB { 130.0 } else { 110.0 });
    assert_eq!(o.verdict, Verdict::Agree, "no cache slows a smaller set");
    assert_eq!(o.reported_bytes, GIB);
    assert!(o.repeated);
    assert!(o.note.as_deref().unwrap().contains("not a cache effect"));
    // The record warns about the noise all the same.
    let c = o.into_check(&plan, info());
    let w = warning(&c).expect("a warning about the noise");
    assert!(w.message.contains("faster"), "{}", w.message);
}

fn info() -> CheckInfo {
    CheckInfo {
        target: "anon".into(),
        benchmark: "mem.latency".into(),
        pattern: Pattern::Chase,
        kernel: "chase".into(),
        cpus: vec![0],
        unit: "ns".into(),
        sizing: String::new(),
        keys: vec![],
    }
}

#[test]
fn noise_within_tolerance_agrees_and_a_repeat_can_clear_a_blip() {
    let plan = Plan {
        start_bytes: GIB,
        floor_bytes: GIB,
        max_bytes: 64 * GIB,
        better: Better::Lower,
    };
    let o = check(plan, |b| if b <= GIB { 100.0 } else { 103.0 });
    assert_eq!((o.verdict, o.repeated), (Verdict::Agree, false));
    // The first pass at S reads 8% low, the second 1% high: the means agree.
    let r: Result<Outcome, ()> = run(plan, |b, pass| {
        let v = match (b <= GIB, pass) {
            (true, 1) => 92.0,
            (true, _) => 101.0,
            _ => 100.0,
        };
        Ok((v, Some(format!("m/{b}/{pass}"))))
    });
    let o = r.unwrap();
    assert!(o.repeated);
    assert_eq!(o.verdict, Verdict::Agree);
    assert_eq!(o.points.len(), 4);
    assert_eq!(o.ids_at(GIB).len(), 2);
    assert!((o.value_at(GIB).unwrap() - 96.5).abs() < 1e-9);
}

#[test]
fn a_record_round_trips_and_covers_subsets_of_its_cpus() {
    let plan = Plan {
        start_bytes: GIB,
        floor_bytes: GIB,
        max_bytes: 64 * GIB,
        better: Better::Higher,
    };
    let o = check(plan, |_| 100.0);
    let c = o.into_check(
        &plan,
        CheckInfo {
            target: "anon".into(),
            benchmark: "mem.bandwidth".into(),
            pattern: Pattern::Stream,
            kernel: "read".into(),
            cpus: vec![0, 1, 2, 3],
            unit: "GB/s".into(),
            sizing: "test".into(),
            keys: vec!["mem_bw_gbs".into()],
        },
    );
    assert_eq!((c.cpus.as_str(), c.threads), ("0-3", 4));
    assert!(c.covers_cpus(&[1, 3]) && !c.covers_cpus(&[4]));
    assert!(c.summary().contains("agree at 1G"), "{}", c.summary());
    let back: DramCheck = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
}

#[test]
fn every_pass_has_its_own_measurement_id() {
    let ids: Vec<String> = (1..=MAX_PASSES as u8).map(pass_suffix).collect();
    assert_eq!(ids, vec!["", "/repeat", "/repeat2"]);
}

/// What a family maps for its check: the first comparison's larger size when S stands,
/// and at most `largest_bytes` when every comparison finds S in a cache.
#[test]
fn the_sizes_a_family_plans_bound_every_size_measured() {
    let plan = |start, floor, max| Plan {
        start_bytes: start,
        floor_bytes: floor,
        max_bytes: max,
        better: Better::Lower,
    };
    let most = |o: &Outcome| o.points.iter().map(|p| p.bytes).max().unwrap();
    for p in [
        plan(128 * MIB, 128 * MIB, 64 * GIB),
        plan(128 * MIB, GIB, 64 * GIB),
        plan(128 * MIB, 128 * MIB, 700 * MIB),
        plan(4 * GIB, 2 * GIB, 5 * GIB),
    ] {
        // Flat: S stands at the first comparison.
        let o = check(p, |_| 100.0);
        assert_eq!(most(&o), p.first_larger_bytes(), "{p:?}");
        // Every smaller set faster: S grows as far as the check lets it.
        let o = check(p, |b| (b as f64).powf(0.2));
        assert_eq!(most(&o), p.largest_bytes(), "{p:?}: {o:?}");
        assert!(p.largest_bytes() <= p.max_bytes.max(p.start_bytes));
    }
    assert_eq!(
        plan(128 * MIB, 128 * MIB, 64 * GIB).largest_bytes(),
        2 * GIB
    );
}
