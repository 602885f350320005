//! Tests of `flush_bw.rs`.

use super::*;
use bench_core::memory::Region;
use std::collections::BTreeSet;

#[test]
fn chunks_of_each_thread_stay_in_its_own_part_and_cover_it() {
    let l = ChunkLayout::new(10 * 4096 + 100, 3, 512, 4096).unwrap();
    assert_eq!(
        l.part,
        13 * 1024,
        "whole chunks: 41060 / 3 = 13686 -> 13 KiB"
    );
    assert_eq!(l.chunks_per_part(), 26);
    assert_eq!(l.chunks_per_sample, 8);
    assert!(l.working_set() <= 10 * 4096 + 100);
    let mut all = BTreeSet::new();
    for t in 0..l.threads {
        let mut own = BTreeSet::new();
        // Two laps: the walk wraps around inside the part.
        for i in 0..2 * l.chunks_per_part() {
            let o = l.offset(t, i);
            assert_eq!(o % l.chunk, 0);
            assert!(
                o >= t * l.part && o + l.chunk <= (t + 1) * l.part,
                "t{t} i{i}"
            );
            own.insert(o);
        }
        assert_eq!(own.len(), l.chunks_per_part(), "every chunk of the part");
        assert!(all.is_disjoint(&own), "thread {t} overlaps another");
        all.extend(own);
    }
    // Consecutive steps write consecutive chunks (address order).
    assert_eq!(l.offset(1, 1) - l.offset(1, 0), 512);
    assert_eq!(l.offset(1, l.chunks_per_part()), l.offset(1, 0));
}

#[test]
fn bytes_per_sample_counts_every_threads_chunks_once() {
    let l = ChunkLayout::new(64 * MIB, 4, 512, SAMPLE_BYTES_PER_THREAD).unwrap();
    assert_eq!(l.chunks_per_sample, 2048);
    assert_eq!(l.thread_bytes_per_sample(), MIB);
    assert_eq!(l.bytes_per_sample(), 4 * MIB);
    // A part smaller than a sample: the sample is the part.
    let s = ChunkLayout::new(4 * 4096, 2, 1024, SAMPLE_BYTES_PER_THREAD).unwrap();
    assert_eq!(s.thread_bytes_per_sample(), 8192);
    assert_eq!(s.bytes_per_sample(), 16384);
}

#[test]
fn bad_layouts_are_refused() {
    assert_eq!(
        ChunkLayout::new(4096, 1, 100, 4096),
        Err(LayoutError::Chunk(100))
    );
    assert_eq!(
        ChunkLayout::new(4096, 1, 0, 4096),
        Err(LayoutError::Chunk(0))
    );
    assert_eq!(
        ChunkLayout::new(4096, 0, 64, 4096),
        Err(LayoutError::NoThreads)
    );
    assert!(matches!(
        ChunkLayout::new(1000, 2, 512, 4096),
        Err(LayoutError::TooSmall { .. })
    ));
}

#[test]
fn chunk_option_takes_whole_lines_only() {
    assert_eq!(parse_chunk("512"), Ok(512));
    assert_eq!(parse_chunk("4K"), Ok(4096));
    assert!(parse_chunk("100").unwrap_err().contains("multiple of 64"));
    assert!(parse_chunk("0").is_err());
    assert!(parse_chunk("2M").unwrap_err().contains("at most"));
}

#[test]
fn points_have_every_column_at_t_and_the_lower_rungs() {
    let flush = Column::Flush(FlushMethod::ClflushoptSfence);
    let best = Some(flush);
    let q = points(4, &[4], best);
    assert_eq!(q.len(), Column::ALL.len());
    assert!(q.iter().all(|p| p.threads == 4));
    let f = points(4, &[1, 2, 3, 4], best);
    for n in 1..4 {
        for c in [Column::Stores, flush] {
            assert!(f.contains(&Point {
                column: c,
                threads: n
            }));
        }
    }
    assert_eq!(f.len(), Column::ALL.len() + 3 * 2);
    let set: BTreeSet<_> = f.iter().map(|p| (p.column.name(), p.threads)).collect();
    assert_eq!(set.len(), f.len(), "no point planned twice");
    // Without a flush instruction: the reference alone in the sweep.
    assert_eq!(points(3, &[1, 2, 3], None).len(), Column::ALL.len() + 2);
    assert_eq!(points(8, &[1, 4], best).len(), Column::ALL.len() + 4);
}

#[test]
fn the_headline_is_clflushopt_else_clflush() {
    match best_column() {
        Some(Column::Flush(FlushMethod::DcCivacDsb)) => {
            assert_eq!(std::env::consts::ARCH, "aarch64")
        }
        Some(Column::Flush(FlushMethod::ClflushoptSfence)) => {
            assert!(FlushMethod::ClflushoptSfence.available().is_ok())
        }
        Some(Column::Flush(FlushMethod::Clflush)) => {
            assert!(FlushMethod::ClflushoptSfence.available().is_err())
        }
        None => assert!(FlushMethod::ALL
            .iter()
            .all(|m| *m == FlushMethod::NtStoreSfence || m.available().is_err())),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_default_working_set_is_the_bandwidth_dram_point() {
    let ctx = Context::quick_local();
    let t = ctx.cpus.len();
    let (bytes, why) = working_set(None, &ctx, &TargetSpec::Anon, t);
    let (stream, sizing) = ctx.dram_stream_bytes(&TargetSpec::Anon, &ctx.cpus_for(t));
    assert_eq!(bytes, stream);
    assert!(why.contains("streaming DRAM footprint"), "{why}");
    if sizing.rule == bench_core::sizing::SizingRule::CacheReach {
        // 4 x every LLC and L2 instance of the threads' CPUs, whatever --quick says.
        let reach = ctx.cache_reach(&ctx.cpus_for(t)).unwrap().total_bytes;
        assert!(bytes >= 4 * reach, "{bytes} vs caches {reach}");
        assert!(bytes >= bench_core::sizing::STREAM_FLOOR_BYTES);
        let full = Context {
            effort: &bench_core::effort::FULL,
            ..ctx.clone()
        };
        assert_eq!(working_set(None, &full, &TargetSpec::Anon, t).0, bytes);
    }
    assert_eq!(
        working_set(Some(12345), &ctx, &TargetSpec::Anon, t),
        (12345, "given with --size".to_string())
    );
}

#[test]
fn a_small_run_gives_the_keys_or_skips_with_the_cpuid_bit() {
    let ctx = Context::quick_local();
    let b = FlushBwBench {
        threads: Some(Threads::List(vec![1])),
        size: Some(256 * 1024),
        ..Default::default()
    };
    let mut r = Region::allocate(&TargetSpec::Anon, 256 * 1024, &ctx.topology).unwrap();
    let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
    let keys: Vec<&str> = rep.params.iter().map(|p| p.key.as_str()).collect();
    assert!(keys.contains(&"flush_bw_stores_gbs"), "{keys:?}");
    for c in Column::ALL {
        let measured = rep
            .measurements
            .iter()
            .any(|m| m.parameters["method"] == c.name());
        let skipped = rep
            .skipped
            .iter()
            .any(|s| s.benchmark == format!("pool.flush-bw/{}", c.name()));
        assert!(measured ^ skipped, "{}", c.name());
        if let (Column::Flush(m), true) = (c, skipped) {
            let s = rep.skipped.iter().find(|s| s.benchmark.ends_with(m.name()));
            let reason = &s.unwrap().reason;
            assert!(
                reason.contains("CPUID") || reason.contains("EL0"),
                "{reason}"
            );
        }
    }
    if best_column().is_some() {
        assert!(keys.contains(&"flush_bw_gbs") && keys.contains(&"flush_bw_t1_gbs"));
    }
    for m in &rep.measurements {
        // A figure per used window: the crew's undisturbed windows, or all of them.
        let used = m.parameters["crew"]["windows_used"].as_u64().unwrap();
        assert!(
            m.distribution.n == used && used >= 1 && m.distribution.p50 > 0.0,
            "{m:?}"
        );
        assert_eq!(m.unit, "GB/s");
        assert_eq!(m.parameters["working_set_bytes"], 256 * 1024);
        assert_eq!(m.parameters["chunks_per_call_per_thread"], 256 * 1024 / 512);
    }
    assert!(!rep.warnings.is_empty(), "one thread says so");
}

#[test]
fn memory_is_the_region_a_run_grows_to() {
    // 256 MiB offered: the working set 64 MiB (a quarter), its check's larger point 128
    // MiB (half), which no check can grow past.
    let ctx = Context::quick_local();
    ctx.sizing.assume_available("anon", Some(256 << 20));
    let anon = TargetSpec::Anon;
    for size in [None, Some(256 * 1024)] {
        let b = FlushBwBench {
            threads: Some(Threads::List(vec![1])),
            size,
            ..Default::default()
        };
        let need = b.memory(&ctx, &anon);
        let mut r = Region::allocate(&anon, b.region_bytes(&ctx, &anon), &ctx.topology).unwrap();
        b.run(&ctx, Input::Region(&mut r)).unwrap();
        let want = if size.is_some() {
            256 * 1024
        } else {
            128 << 20
        };
        assert_eq!(r.len(), want, "{size:?}");
        assert_eq!(need.on_target_bytes, want, "{size:?}: {need:?}");
        assert_eq!(need.bytes, need.on_target_bytes);
    }
    // `pool flush-bw --size 30G`: planned as it is, bounded by the option.
    let b = FlushBwBench {
        size: Some(30 << 30),
        ..Default::default()
    };
    let need = b.memory(&ctx, &anon);
    assert_eq!(need.on_target_bytes, 30 << 30);
    let fit = need.fit.expect("--size bounds it");
    assert_eq!(
        (fit.option, fit.per_byte, fit.fixed_bytes),
        ("--size", 1, 0)
    );
}
