use super::*;
use bench_core::topology::fixtures::{Level, Node, Server};

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

/// The L2 size of `cpu` as the fixture defines it (its level-2 entry).
fn fixture_l2(s: &Server) -> usize {
    let l = s.levels.iter().find(|l| l.level == 2).expect("an L2");
    l.size_kib as usize * KIB
}

fn every_fixture() -> Vec<(&'static str, Server)> {
    let mut v = Server::machines();
    v.extend([
        ("grace-hopper", Server::grace_hopper()),
        ("grace-superchip", Server::grace_superchip()),
        ("graviton3", Server::graviton3()),
        ("ampere-clusters", Server::ampere_clusters()),
    ]);
    v
}

#[test]
fn the_buffer_is_half_the_writers_own_l2_on_every_fixture() {
    for (name, s) in every_fixture() {
        let topo = s.topology();
        let cpus: Vec<usize> = (0..s.cpus).collect();
        let of = l2_of(&topo, &cpus);
        assert_eq!(of.len(), s.cpus, "{name}: every CPU has its L2");
        let l2 = fixture_l2(&s);
        for (cpu, w) in &of {
            assert_eq!(w.source, L2Source::Own, "{name}: CPU {cpu}");
            assert_eq!(w.bytes, l2, "{name}: CPU {cpu}");
        }
        assert_eq!(largest_buffer(&topo, &cpus), Some(l2 / 2), "{name}");
    }
    // The figures the plan is priced with.
    let size = |s: Server| largest_buffer(&s.topology(), &(0..s.cpus).collect::<Vec<_>>());
    assert_eq!(size(Server::h200_host()), Some(MIB), "2 MiB L2 per core");
    assert_eq!(
        size(Server::epyc_2s_96c()),
        Some(512 * KIB),
        "1 MiB L2 per core"
    );
    assert_eq!(
        size(Server::ampere_clusters()),
        Some(MIB),
        "2 MiB L2 per cluster"
    );
}

/// Two big cores with a 2 MiB L2 each, four small ones sharing a 4 MiB L2 (a hybrid
/// client part): each writer's buffer is its own L2's half.
#[test]
fn each_writer_takes_its_own_l2_on_a_hybrid_cpu() {
    let s = Server {
        name: "hybrid",
        cpus: 6,
        levels: [
            (1, "Data", 48, (0..6).collect()),
            (2, "Unified", 2048, vec![0, 1, 2, 2, 2, 2]),
            (3, "Unified", 24 * 1024, vec![0; 6]),
        ]
        .into_iter()
        .map(|(level, kind, size_kib, group_of)| Level {
            level,
            kind,
            size_kib,
            group_of,
        })
        .collect(),
        nodes: vec![Node {
            cpus: (0..6).collect(),
            mem_kib: 16 * 1024 * 1024,
        }],
        distances: vec![],
        socket_of: vec![],
        core_of: vec![],
        gpus: 0,
    };
    let mut topo = s.topology();
    // The small cores' shared instance is twice the size.
    for c in topo.cache_instances.iter_mut() {
        if c.level == 2 && c.cpus == "2-5" {
            c.size_bytes = 4 * MIB;
        }
    }
    let of = l2_of(&topo, &[1, 3]);
    assert_eq!(of.len(), 2, "only the CPUs asked for: {of:?}");
    assert_eq!(buffer_bytes(of[&1].bytes), MIB);
    assert_eq!(buffer_bytes(of[&3].bytes), 2 * MIB);
    assert_eq!(largest_buffer(&topo, &[0, 1]), Some(MIB));
    assert_eq!(largest_buffer(&topo, &[0, 5]), Some(2 * MIB));
}

#[test]
fn without_instances_cpu_0s_l2_stands_for_each_and_without_any_there_is_none() {
    let mut topo = Server::h200_host().topology();
    topo.cache_instances.clear();
    let of = l2_of(&topo, &[3, 7]);
    assert_eq!(
        of[&7],
        WriterL2 {
            bytes: 2 * MIB,
            source: L2Source::Cpu0
        }
    );
    topo.caches.retain(|c| c.level != 2);
    assert!(l2_of(&topo, &[3, 7]).is_empty());
    assert_eq!(largest_buffer(&topo, &[3, 7]), None);
}

#[test]
fn the_buffer_is_whole_pages_and_bounded() {
    assert_eq!(buffer_bytes(MIB), 512 * KIB);
    // 1.25 MiB + 100 B: half is 640 KiB + 50 B, down to whole pages.
    assert_eq!(buffer_bytes(MIB + 256 * KIB + 100), 640 * KIB);
    assert_eq!(buffer_bytes(6000), 4096, "at least a page");
    assert_eq!(
        buffer_bytes(1 << 40),
        MAX_BUFFER_BYTES,
        "sysfs cannot size it past this"
    );
}

#[test]
fn a_bandwidth_is_the_buffers_bytes_over_the_reads_time() {
    // 512 KiB read in 26,214.4 ns: 20 bytes per ns, 20 GB/s (GB = 1e9 B).
    assert!((gbs(512 * KIB, 26_214.4) - 20.0).abs() < 1e-9);
    assert!((gbs(1_000_000, 1e6) - 1.0).abs() < 1e-12, "1 MB in 1 ms");
    assert!(gbs(4096, 0.0).is_nan() && gbs(4096, -1.0).is_nan());
    // Rounds of 1 MB read in 10, 20 and 40 us: 100, 50 and 25 GB/s; the p50 is 50, the
    // rate of the median round, not bytes over the mean time (35.7 GB/s).
    let per_round: Vec<f64> = [10_000.0, 20_000.0, 40_000.0]
        .iter()
        .map(|&ns| gbs(1_000_000, ns))
        .collect();
    assert_eq!(per_round, vec![100.0, 50.0, 25.0]);
    let d = Distribution::from_samples(&per_round).unwrap();
    // (The distribution keeps three significant digits of a quantile.)
    assert!(
        (d.p50 - 50.0).abs() < 0.05 && (d.min - 25.0).abs() < 0.05,
        "{d:?}"
    );
    // A time that is not positive is never summarized.
    assert!(Distribution::from_samples(&[gbs(4096, 0.0)]).is_none());
}

#[test]
fn each_class_with_a_latency_key_has_its_bandwidth_key() {
    let mut with = Vec::new();
    for class in PairClass::ALL {
        let Some(stem) = class_key(class) else {
            continue;
        };
        let k = key(stem);
        let def = bench_core::keys::lookup(&k).unwrap_or_else(|| panic!("{k} registered"));
        assert_eq!(def.unit.symbol(), "GB/s", "{k}");
        assert_eq!(def.benchmark, "pool.c2c", "{k}");
        // The latency key of the same class, spelled the same.
        let lat = format!("c2c_flag_{stem}_lat_ns");
        assert!(bench_core::keys::lookup(&lat).is_some(), "{lat}");
        with.push(k);
    }
    assert_eq!(
        with,
        [
            "c2c_bw_same_llc_gbs",
            "c2c_bw_cross_llc_gbs",
            "c2c_bw_cross_socket_gbs"
        ]
    );
    // The classes without a latency key have none (their figures are measurements).
    for stem in ["smt", "same_l2", "cross_node"] {
        assert!(bench_core::keys::lookup(&key(stem)).is_none(), "{stem}");
    }
}

/// `base` planned for fixture `s` (its topology and CPUs) with `effort`.
fn planned(base: &Context, s: &Server, effort: &'static bench_core::effort::Effort) -> Context {
    let mut ctx = base.clone();
    ctx.topology = s.topology();
    ctx.cpus = (0..s.cpus).collect();
    ctx.effort = effort;
    ctx
}

#[test]
fn the_bandwidth_adds_a_point_per_pair_and_a_few_seconds_on_the_big_machines() {
    use bench_core::bench::Benchmark;
    use bench_core::effort::{FULL, QUICK};
    let base = Context::quick_local();
    for (name, s) in every_fixture() {
        let full = planned(&base, &s, &FULL);
        let quick = planned(&base, &s, &QUICK);
        let b = C2cBench::default();
        let counts = bench_core::topology::pairs::classify(&full.topology, &full.cpus);
        let bw_full = cost(&full, &counts, FULL.pool.c2c_pairs_per_class);
        let bw_quick = cost(&quick, &counts, QUICK.pool.c2c_pairs_per_class);
        // A point per pair measured, as the latency kinds have.
        let lat = b.cost(&full, None).count() - bw_full.count();
        assert_eq!(lat, 2 * bw_full.count(), "{name}");
        // Well inside the 10 min (full) and 90 s (quick) plans of `all`.
        assert!(
            bw_full.seconds() <= 5.0,
            "{name}: {:.2} s",
            bw_full.seconds()
        );
        assert!(
            bw_quick.seconds() <= 1.0,
            "{name}: {:.2} s",
            bw_quick.seconds()
        );
        assert!(bw_quick.seconds() < bw_full.seconds() / 2.0, "{name}");
    }
    // Without an L2 size there is nothing to plan (the run skips it).
    let mut s = Server::h200_host();
    s.levels.retain(|l| l.level != 2);
    let ctx = planned(&base, &s, &FULL);
    let counts = bench_core::topology::pairs::classify(&ctx.topology, &ctx.cpus);
    assert_eq!(cost(&ctx, &counts, 8).count(), 0);
}

#[test]
fn a_direction_is_priced_from_its_rounds_and_passes() {
    let e = Expect {
        repeat_threads: false,
        disturbances_per_cpu_s: 0.0,
        section_overhead_s: 0.0,
        thread_start_s: 0.0,
        thread_spawn_s: 0.0,
        ..Expect::default()
    };
    // 41 rounds (one untimed) of two passes of 1 MB at a pair's 3 GB/s and two 200 ns
    // hand-overs.
    let want = 41.0 * (2.0 * 1e6 / 3e9 + 2.0 * 200e-9);
    let got = direction_s(&e, 1_000_000, 40, false);
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    assert!(direction_s(&e, 1_000_000, 40, true) > got, "across sockets");
}

#[test]
fn the_direction_matrix_has_every_cpu_and_a_blank_diagonal() {
    let t = direction_table(&[0, 1, 2], &[(0, 1, 20.5), (1, 0, 19.0), (2, 0, 7.25)]);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[1].starts_with("   0:") && lines[1].contains("20.5"));
    assert!(lines[2].contains("19.0") && lines[2].contains('-'));
    assert!(lines[3].contains("7.2") || lines[3].contains("7.3"));
}

#[test]
fn a_stopped_flag_ends_a_wait() {
    let f = AtomicU64::new(STOP);
    assert!(!wait_for(&f, 3));
    let f = AtomicU64::new(3);
    assert!(wait_for(&f, 3));
}

/// The hand-over on this machine's first two CPUs (no figure is checked: whether every
/// round ran, the reader found the writer's bytes, and the evidence names both threads).
#[test]
fn two_cpus_pass_the_buffer_back_and_forth() {
    let ctx = Context::quick_local();
    if ctx.cpus.len() < 2 {
        bench_core::testing::unavailable("two CPUs", "this process may use one CPU");
        return;
    }
    let mut mem = vec![0u64; (BUFFER_OFFSET + 64 * KIB) / 8];
    let base = mem.as_mut_ptr() as *mut u8;
    // SAFETY: offset 0 of the vector is an aligned u64 only this test touches.
    let flag = unsafe { &*(base as *const AtomicU64) };
    // SAFETY: BUFFER_OFFSET + 64 KiB is the vector's length.
    let ptr = unsafe { base.add(BUFFER_OFFSET) };
    let buf = Shared { ptr, len: 64 * KIB };
    let isa = IsaSet::detect().choose(None).unwrap();
    let (w, r) = (ctx.cpus[1], ctx.cpus[0]);
    let (times, c) = transfer(&ctx, flag, buf, isa, (w, r), 5).unwrap();
    assert_eq!(times.len(), 5);
    assert!(times.iter().all(|t| t.is_finite()), "{times:?}");
    assert_eq!((c.threads, c.helper_threads), (1, 1));
    assert!((1..=3).contains(&c.attempts));
    if c.counts.llc_load_misses.is_some() {
        assert!(c.per_op.contains_key("llc_load_misses_per_byte"), "{c:?}");
    }
    // The last round's bytes are the writer's (round 5's fill), every one of them.
    let bytes = &mem_bytes(&mem)[BUFFER_OFFSET..];
    assert!(bytes.iter().all(|&b| b == fill(5)));
}

fn mem_bytes(v: &[u64]) -> &[u8] {
    // SAFETY: a u64 slice viewed as its bytes, for reading.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8) }
}
