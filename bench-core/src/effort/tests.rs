use super::*;

/// Every count, time and size of a plan, by name, for comparing the two plans.
fn knobs(e: &Effort) -> Vec<(&'static str, f64)> {
    let d = |d: Duration| d.as_secs_f64();
    let b = |v: bool| v as u8 as f64;
    let (m, p, v, g) = (&e.mem, &e.pool, &e.verbs, &e.gpu);
    vec![
        ("crew.windows", e.crew.windows as f64),
        ("crew.max_windows", e.crew.max_windows as f64),
        ("max_rungs", e.max_rungs.unwrap_or(usize::MAX) as f64),
        ("mem.latency_point", d(m.latency_point)),
        (
            "mem.latency_points_per_octave",
            m.latency_points_per_octave as f64,
        ),
        ("mem.bandwidth_size_sweep", b(m.bandwidth_size_sweep)),
        ("mem.loaded_point", d(m.loaded_point)),
        ("mem.loaded_delays", m.loaded_delays.len() as f64),
        (
            "mem.loaded_family_shares",
            (100 / m.loaded_family_step_pct + 1) as f64,
        ),
        ("mem.threshold_point", d(m.threshold_point)),
        ("mem.alltoall_order_point", d(m.alltoall_order_point)),
        (
            "mem.alltoall_buffer_cap",
            m.alltoall_buffer_cap_bytes.unwrap_or(usize::MAX) as f64,
        ),
        ("pool.c2c.0", p.c2c.0 as f64),
        ("pool.c2c.1", p.c2c.1 as f64),
        ("pool.atomic_samples", p.atomic_samples as f64),
        ("pool.flush_samples", p.flush_samples as f64),
        ("pool.c2c_pairs_per_class", p.c2c_pairs_per_class as f64),
        ("pool.msg_flag.0", p.msg_flag.0 as f64),
        ("pool.msg_flag.1", p.msg_flag.1 as f64),
        ("pool.msg_largest_bytes", p.msg_largest_bytes as f64),
        ("pool.msg_ring_messages.0", p.msg_ring_messages.0 as f64),
        ("pool.msg_ring_messages.1", p.msg_ring_messages.1 as f64),
        ("pool.msg_stream.0", p.msg_stream.0 as f64),
        ("pool.msg_stream.1", p.msg_stream.1 as f64),
        ("pool.msg_stream_reps", p.msg_stream_reps as f64),
        ("pool.msg_window_bytes", p.msg_window_bytes as f64),
        ("pool.msg_scale_every_size", b(p.msg_scale_every_size)),
        ("pool.msg_scale_round_trips", p.msg_scale_round_trips as f64),
        ("pool.msg_scale_stream.0", p.msg_scale_stream.0 as f64),
        ("pool.msg_scale_stream.1", p.msg_scale_stream.1 as f64),
        ("pcie.mmio_point", d(e.pcie.mmio_point)),
        ("verbs.post_sizes", v.post_sizes.len() as f64),
        ("verbs.post_rounds", v.post_rounds as f64),
        ("verbs.inject_posts", v.inject_posts as f64),
        ("verbs.progress_rounds", v.progress_rounds as f64),
        ("verbs.full_queue_attempts", v.full_queue_attempts as f64),
        ("verbs.message_rate.0", v.message_rate.0 as f64),
        ("verbs.message_rate.1", v.message_rate.1 as f64),
        ("verbs.sweep_sizes", v.sweep_sizes.len() as f64),
        ("verbs.latency_iters.0", v.latency_iters.0 as f64),
        ("verbs.latency_iters.1", v.latency_iters.1 as f64),
        ("verbs.bandwidth_stream.0", v.bandwidth_stream.0 as f64),
        ("verbs.bandwidth_stream.2", v.bandwidth_stream.2 as f64),
        ("gpu.sweep_samples", g.sweep_samples as f64),
        ("gpu.sweep_sample_bytes.0", g.sweep_sample_bytes.0 as f64),
        ("gpu.sweep_sample_bytes.1", g.sweep_sample_bytes.1 as f64),
        ("gpu.latency_samples", g.latency_samples as f64),
        ("gpu.contention_rounds", g.contention_rounds as f64),
        ("gpu.with_cpu.0", d(g.with_cpu.0)),
        ("gpu.with_cpu.1", g.with_cpu.1 as f64),
    ]
}

#[test]
fn quick_never_asks_for_more_than_full() {
    for ((name, q), (_, f)) in knobs(&QUICK).into_iter().zip(knobs(&FULL)) {
        assert!(q <= f, "{name}: quick {q} > full {f}");
    }
}

#[test]
fn quick_takes_fewer_samples_somewhere_in_every_family() {
    let fewer = |prefix: &str| {
        knobs(&QUICK)
            .into_iter()
            .zip(knobs(&FULL))
            .any(|((n, q), (_, f))| n.starts_with(prefix) && q < f)
    };
    for family in ["mem.", "pool.", "pcie.", "verbs.", "gpu.", "crew."] {
        assert!(fewer(family), "{family}: --quick is the full run");
    }
}

/// A crew's window is as long with --quick (fewer windows, not shorter ones): its skew
/// costs the same share of it. So are the traffic window of a loaded point and the
/// windows beside the GPU.
#[test]
fn crew_windows_are_as_long_quick_as_full() {
    assert_eq!(QUICK.crew.window, FULL.crew.window);
    assert_eq!(QUICK.mem.loaded_point, FULL.mem.loaded_point);
    assert_eq!(QUICK.gpu.with_cpu.0, FULL.gpu.with_cpu.0);
    const {
        assert!(
            QUICK.crew.windows >= 3,
            "a median of at least three windows"
        )
    };
}

/// What a key is defined at must be the same quick and full: the sizes a headline key is
/// read at (the GPU sweep's largest copy, the contention transfers).
#[test]
fn the_sizes_keys_are_defined_at_do_not_change_with_quick() {
    assert_eq!(QUICK.gpu.sweep_max_bytes, FULL.gpu.sweep_max_bytes);
    assert_eq!(QUICK.gpu.contention_bytes, FULL.gpu.contention_bytes);
    assert_eq!(
        QUICK.verbs.sweep_sizes.last(),
        FULL.verbs.sweep_sizes.last()
    );
    assert_eq!(
        QUICK.verbs.post_sizes.first(),
        FULL.verbs.post_sizes.first()
    );
}

#[test]
fn quick_points_are_a_subset_of_the_full_ones() {
    let sub = |q: &[usize], f: &[usize]| q.iter().all(|s| f.contains(s));
    assert!(sub(QUICK.verbs.post_sizes, FULL.verbs.post_sizes));
    assert!(sub(QUICK.verbs.sweep_sizes, FULL.verbs.sweep_sizes));
    assert!(QUICK
        .mem
        .loaded_delays
        .iter()
        .all(|d| FULL.mem.loaded_delays.contains(d)));
    for d in [FULL.mem.loaded_delays, QUICK.mem.loaded_delays] {
        assert_eq!(d.first(), Some(&Some(0)), "full load first");
        assert_eq!(d.last(), Some(&None), "the idle point last");
        assert!(d.windows(2).all(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            _ => false,
        }));
    }
    assert!(FULL.mem.loaded_delays.len() >= 16);
    // Denser near full load: the first half of the loaded points covers less than a
    // tenth of the delay range.
    let loaded: Vec<u32> = FULL.mem.loaded_delays.iter().flatten().copied().collect();
    assert!(loaded[loaded.len() / 2] * 10 < *loaded.last().unwrap());
}

#[test]
fn of_picks_the_plan() {
    assert!(Effort::of(true).is_quick());
    assert!(!Effort::of(false).is_quick());
    assert_eq!(Effort::of(false).level, Level::Full);
}

#[test]
fn a_cut_takes_fewer_samples_and_rungs_never_other_sizes() {
    for base in [&FULL, &QUICK] {
        for f in [1.0, 0.6, 0.3, 0.05] {
            let c = base.cut(f, Some(4));
            for ((name, a), (_, b)) in knobs(&c).into_iter().zip(knobs(base)) {
                assert!(a <= b, "{name}: cut {a} > {b} (f = {f})");
            }
            assert_eq!(c.max_rungs, Some(base.max_rungs.unwrap_or(4).min(4)));
            // What keys are defined at is the same.
            assert_eq!(c.gpu.sweep_max_bytes, base.gpu.sweep_max_bytes);
            assert_eq!(c.gpu.contention_bytes, base.gpu.contention_bytes);
            assert_eq!(c.pool.msg_largest_bytes, base.pool.msg_largest_bytes);
            assert_eq!(c.pool.msg_window_bytes, base.pool.msg_window_bytes);
            assert_eq!(
                c.mem.alltoall_buffer_cap_bytes,
                base.mem.alltoall_buffer_cap_bytes
            );
            assert_eq!(c.level, base.level);
        }
    }
    let half = FULL.cut(0.5, None);
    assert_eq!(half.mem.latency_point, FULL.mem.latency_point / 2);
    assert_eq!(half.max_rungs, None);
}
