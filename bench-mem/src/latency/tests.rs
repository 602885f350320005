//! Tests of `latency.rs`.

use super::*;
use bench_core::memory::TargetSpec;

const M: usize = 1024 * 1024;

fn parse(argv: &[&str]) -> Result<clap::ArgMatches, clap::Error> {
    use clap::Args;
    LatencyArgs::augment_args(clap::Command::new("x"))
        .try_get_matches_from(std::iter::once("x").chain(argv.iter().copied()))
}

fn args(argv: &[&str]) -> Result<LatencyBench, LatencyParamError> {
    use clap::FromArgMatches;
    LatencyArgs::from_arg_matches(&parse(argv).unwrap())
        .unwrap()
        .bench()
}

#[test]
fn options_that_cannot_apply_are_refused() {
    // --sizes replaces the sweep: its bounds would be ignored.
    for bound in ["--min-size", "--max-size"] {
        let e = parse(&["--sizes", "2K", bound, "8K"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
    }
    // A random order has no blocks for --tlb-locality to size.
    let e = args(&["--order", "random", "--tlb-locality", "1M"]).unwrap_err();
    assert_eq!(e, LatencyParamError::LocalityWithoutBlocks);
    assert!(e.to_string().contains("--order random"), "{e}");
    assert_eq!(
        args(&["--order", "random"]).unwrap().order,
        ChaseOrder::Random
    );
    assert_eq!(args(&[]).unwrap().order, ChaseOrder::DEFAULT);
    assert_eq!(
        args(&["--tlb-locality", "1M"]).unwrap().order,
        ChaseOrder::TlbLocal { locality: M }
    );
}

#[test]
fn errors_name_the_size_the_user_gave_not_the_unused_default() {
    // A small --max-size lowers the default --min-size instead of contradicting it.
    assert_eq!(args(&["--max-size", "2K"]).unwrap().min_size, 2048);
    let e = args(&["--max-size", "8"]).unwrap_err().to_string();
    assert!(e.starts_with("--max-size 8 is smaller"), "{e}");
    let e = args(&["--sizes", "1M,8"]).unwrap_err().to_string();
    assert!(e.starts_with("--sizes 8 is smaller"), "{e}");
    let e = args(&["--min-size", "8K", "--max-size", "4K"])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "--min-size 8192 is above --max-size 4096");
}

/// The cache rule of one CPU that reaches `llc` of last-level cache (and 1 MiB of L2).
fn rule(llc: usize) -> DramSizing {
    DramSizing::for_cpus(
        Some(bench_core::topology::CacheReach {
            cpus: "0".into(),
            llc_bytes: llc,
            llc_instances: 1,
            mid_bytes: M,
            mid_instances: 1,
            total_bytes: llc + M,
        }),
        Some(llc),
    )
}

#[test]
fn sweep_candidates_reach_the_cap() {
    let b = LatencyBench::default();
    let (cap, r) = b.cap(&rule(32 * M), None);
    assert_eq!(cap, 132 * M, "4 x the caches of the CPU, touched lines");
    assert_eq!(r.rule, sizing::SizingRule::CacheReach);
    let s = b.sweep_sizes(cap, &bench_core::effort::FULL);
    assert_eq!(s[0], 4096);
    assert_eq!(*s.last().unwrap(), 132 * M);
    assert!(s.contains(&(6 * 1024)), "two points per octave");
    let q = b.sweep_sizes(cap, &bench_core::effort::QUICK);
    assert!(!q.contains(&(6 * 1024)), "one point per octave when quick");
    assert!(s.windows(2).all(|w| w[0] < w[1]));
    // An Intel-like 480 MiB LLC: the cap touches 4 x 481 MiB, the memory bound applies
    // (a phased chain spans what it touches).
    let (cap, r) = b.cap(&rule(480 * M), Some(4096 * M));
    assert!(cap <= 4096 * M / 4, "span within a quarter of 4 GiB: {cap}");
    assert_eq!(r.rule, sizing::SizingRule::MemoryBound);
    let (cap, _) = b.cap(&rule(480 * M), None);
    assert_eq!(cap, 1924 * M);
    assert_eq!(b.layout.span_bytes(cap), 1924 * M, "touched, and spanned");
    // A one-line-per-slot layout spans four times what it touches.
    let sparse = LatencyBench {
        layout: ChainLayout::randomized(256),
        ..Default::default()
    };
    let (cap, _) = sparse.cap(&rule(480 * M), Some(4096 * M));
    assert!(cap <= 4096 * M / 4 / 4, "{cap}");
    // --max-size is the user's.
    let b = LatencyBench {
        max_size: Some(8 * M),
        ..Default::default()
    };
    let (cap, r) = b.cap(&rule(480 * M), None);
    assert_eq!((cap, r.rule), (8 * M, sizing::SizingRule::User));
    // So are --sizes: their largest bounds the cold lap and the sweep.
    let b = LatencyBench {
        sizes: Some(vec![M, 256 * 1024]),
        ..Default::default()
    };
    let (cap, r) = b.cap(&rule(480 * M), None);
    assert_eq!((cap, r.rule), (M, sizing::SizingRule::User));
}

#[test]
fn the_dram_check_stays_within_the_users_sizes() {
    // `--sizes 1M` on a device: the check's larger point touches no more than 1M,
    // however much memory the device offers (the bytes past it may be someone's).
    let b = LatencyBench {
        sizes: Some(vec![M]),
        ..Default::default()
    };
    assert_eq!(b.check_max_bytes(48 * M, M), M);
    let b = LatencyBench {
        max_size: Some(4 * M),
        ..Default::default()
    };
    assert_eq!(b.check_max_bytes(1 << 40, M), 4 * M);
    // Without a user bound, memory bounds it (span / span per touched byte).
    let b = LatencyBench::default();
    assert_eq!(
        b.check_max_bytes(64 * M, M),
        b.layout.round_touched(64 * M / b.layout.span_per_touched())
    );
    // Never below the point it checks.
    assert_eq!(b.check_max_bytes(0, 2 * M), 2 * M);
}

#[test]
fn explicit_sizes_are_rounded_to_whole_slots() {
    let b = LatencyBench {
        sizes: Some(vec![300, 64 * 1024, 4096]),
        ..Default::default()
    };
    assert_eq!(
        b.sweep_sizes(0, &bench_core::effort::FULL),
        vec![256, 4096, 65536]
    );
    // Below one slot of lines: refused, naming the smallest.
    let small = LatencyBench {
        sizes: Some(vec![100]),
        ..Default::default()
    };
    let e = small.validate().unwrap_err().to_string();
    assert!(e.contains("256 bytes"), "{e}");
    let sparse = LatencyBench {
        layout: ChainLayout::aligned(64),
        sizes: Some(vec![100]),
        ..Default::default()
    };
    assert_eq!(sparse.sweep_sizes(0, &bench_core::effort::FULL), vec![64]);
}

#[test]
fn bad_parameters_are_named() {
    let b = LatencyBench {
        min_size: 32,
        ..Default::default()
    };
    assert_eq!(
        b.validate().unwrap_err().to_string(),
        "--min-size 32 is smaller than one slot of the chain (256 bytes of lines)"
    );
    let b = LatencyBench {
        layout: ChainLayout::aligned(12),
        ..Default::default()
    };
    assert!(b.validate().is_err());
    let b = LatencyBench {
        layout: ChainLayout::randomized(64),
        ..Default::default()
    };
    assert!(b
        .validate()
        .unwrap_err()
        .to_string()
        .contains("--layout aligned"));
}

#[test]
fn self_check_verdicts() {
    // Agreement within the tolerance: the default chain's figure stands.
    let (ratio, agree, rep) = check_verdict(100.0, &[102.0, 98.0]);
    assert!(agree);
    assert_eq!(rep, 100.0);
    assert!((ratio - 1.02).abs() < 1e-9);
    // Another chain 12% slower: a prefetcher helps the default; report the higher.
    let (ratio, agree, rep) = check_verdict(100.0, &[112.0, 99.0]);
    assert!(!agree);
    assert_eq!(rep, 112.0);
    assert!(ratio > 1.1);
    // The aligned chain 30% faster (a prefetcher learns fixed offsets): a disagreement,
    // but the default is the slower, defeated figure and stands.
    let (ratio, agree, rep) = check_verdict(100.0, &[101.0, 70.0]);
    assert!(!agree);
    assert_eq!(rep, 101.0);
    assert!((ratio - 1.01).abs() < 1e-9);
    // An aligned sweep that a prefetcher flatters: the randomized figure is reported.
    let (_, agree, rep) = check_verdict(70.0, &[100.0]);
    assert!(!agree);
    assert_eq!(rep, 100.0);
    // Nothing else measured: agreement with itself, which is named unchecked.
    assert_eq!(check_verdict(90.0, &[]), (1.0, true, 90.0));
    assert_eq!(verdict_name(0, true), "unchecked");
    assert_eq!(verdict_name(1, true), "agree");
    assert_eq!(verdict_name(1, false), "disagree");
}

#[test]
fn small_sweep_produces_measurements_and_l1() {
    let ctx = Context {
        cpus: bench_core::pin::allowed_cpus()[..1].to_vec(),
        ..Context::quick_local()
    };
    let b = LatencyBench {
        sizes: Some(vec![4096, 8192]),
        random_at_max: false,
        ..Default::default()
    };
    let mut r = bench_core::memory::Region::allocate(
        &TargetSpec::Anon,
        b.region_bytes(&ctx, &TargetSpec::Anon),
        &ctx.topology,
    )
    .unwrap();
    let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
    let sweep: Vec<_> = rep
        .measurements
        .iter()
        .filter(|m| m.id.contains("/tlb-local/"))
        .collect();
    assert_eq!(sweep.len(), 2);
    for m in &sweep {
        assert!(m.distribution.n >= MIN_BATCHES as u64);
        assert!(m.distribution.p50 > 0.0);
        assert_eq!(m.parameters["layout"], "phased");
        assert_eq!(m.parameters["slot_bytes"], 256);
        assert_eq!(m.parameters["phases"], 4);
        assert_eq!(
            m.parameters["span_bytes"].as_u64().unwrap(),
            m.parameters["touched_bytes"].as_u64().unwrap()
        );
    }
    if ctx
        .topology
        .cache_bytes(1)
        .is_some_and(|l1| l1 >= 16 * 1024)
    {
        assert!(rep.params.iter().any(|p| p.key == "l1_lat_ns"));
    }
}

/// A quick context on one CPU whose `anon` target offers `bytes` (every bound of the run
/// follows: a chase spans at most a quarter, a check's larger point half).
fn offering(bytes: usize) -> Context {
    let ctx = Context {
        cpus: bench_core::pin::allowed_cpus()[..1].to_vec(),
        ..Context::quick_local()
    };
    ctx.sizing.assume_available("anon", Some(bytes));
    ctx
}

#[test]
fn memory_is_the_region_a_default_run_grows_to() {
    // 256 MiB offered: the DRAM point 64 MiB (a quarter), its check's larger point 128
    // MiB (half): no check can grow past what the plan holds.
    let ctx = offering(256 * M);
    let b = LatencyBench::default();
    let need = b.memory(&ctx, &TargetSpec::Anon);
    assert_eq!(need.on_target_bytes, 128 * M, "{need:?}");
    assert!(
        need.what.contains("DRAM check's larger point, 128 MiB"),
        "{}",
        need.what
    );
    let heap = need.bytes - need.on_target_bytes;
    let scratch = b.layout.build_scratch_bytes(128 * M, b.order);
    assert_eq!(heap, scratch.max(SAMPLE_BYTES), "{need:?}");
    let mut r = bench_core::memory::Region::allocate(
        &TargetSpec::Anon,
        b.region_bytes(&ctx, &TargetSpec::Anon),
        &ctx.topology,
    )
    .unwrap();
    let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
    assert!(!rep.measurements.is_empty());
    assert_eq!(
        TargetSpec::Anon.mapped_bytes(r.len(), &ctx.topology),
        need.on_target_bytes,
        "the region the run grew to is the plan's"
    );
}

#[test]
fn memory_of_explicit_sizes_is_the_region_they_grow() {
    let ctx = offering(1 << 30);
    let b = LatencyBench {
        sizes: Some(vec![M, 4 * M]),
        ..Default::default()
    };
    let need = b.memory(&ctx, &TargetSpec::Anon);
    let mut r = bench_core::memory::Region::allocate(
        &TargetSpec::Anon,
        b.region_bytes(&ctx, &TargetSpec::Anon),
        &ctx.topology,
    )
    .unwrap();
    b.run(&ctx, Input::Region(&mut r)).unwrap();
    assert_eq!(r.len(), 4 * M);
    assert_eq!(need.on_target_bytes, 4 * M, "{need:?}");
    let fit = need.fit.expect("--sizes bounds it");
    assert_eq!((fit.option, fit.per_byte), ("--sizes", 1));
    assert_eq!(fit.fixed_bytes, need.bytes - need.on_target_bytes);
}

#[test]
fn memory_of_a_wide_slot_is_what_its_chain_touches() {
    // `--stride 1024 --sizes 2G`: every line of each 1 KiB slot is touched, so the chain
    // spans 2 GiB; one line per slot would span 32 GiB.
    let ctx = offering(64 << 30);
    let phased = LatencyBench {
        layout: ChainLayout::phased(1024),
        sizes: Some(vec![2 << 30]),
        ..Default::default()
    };
    let need = phased.memory(&ctx, &TargetSpec::Anon);
    assert_eq!(need.on_target_bytes, 2 << 30, "{need:?}");
    assert!(need.bytes - need.on_target_bytes < 64 * M, "{need:?}");
    assert!(need.what.starts_with("a 2 GiB region"), "{}", need.what);
    let sparse = LatencyBench {
        layout: ChainLayout::randomized(1024),
        ..phased
    };
    let need = sparse.memory(&ctx, &TargetSpec::Anon);
    assert_eq!(need.on_target_bytes, 32 << 30, "{need:?}");
    let fit = need.fit.unwrap();
    assert_eq!((fit.option, fit.per_byte), ("--sizes", 16));
}

#[test]
fn memory_names_how_far_a_growing_check_may_take_the_region() {
    // Room for the check to grow: the plan is its first comparison; the words say how far
    // it may go (S grown three times, its larger point 16 x S).
    let ctx = offering(64 << 30);
    let b = LatencyBench::default();
    let need = b.memory(&ctx, &TargetSpec::Anon);
    let rule = ctx.dram_sizing(&TargetSpec::Anon, &ctx.cpus_for(1), Pattern::Chase);
    let (s, _) = b.cap(&rule, ctx.available(&TargetSpec::Anon));
    assert_eq!(need.on_target_bytes, b.layout.span_bytes(2 * s), "{need:?}");
    let largest = bench_core::units::human_bytes(b.layout.span_bytes(16 * s) as u64);
    assert!(
        need.what.contains(&format!("up to a {largest} region")),
        "{}",
        need.what
    );
    // None: every comparison's larger point is within half of 256 MiB.
    let need = b.memory(&offering(256 * M), &TargetSpec::Anon);
    assert!(!need.what.contains("up to"), "{}", need.what);
}
