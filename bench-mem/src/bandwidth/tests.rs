//! Tests of `bandwidth.rs`.

use super::*;
use bench_core::memory::TargetSpec;

fn ctx(quick: bool) -> Context {
    Context {
        effort: Effort::of(quick),
        ..Context::quick_local()
    }
}

#[test]
fn bad_parameters_are_errors() {
    let all = IsaSet {
        avx2: true,
        sse2: true,
        ..IsaSet::NONE
    };
    let b = BandwidthBench {
        threads: Some(9),
        ..Default::default()
    };
    assert!(matches!(
        b.validate(all, 2),
        Err(BandwidthParamError::Threads { .. })
    ));
    let b = BandwidthBench {
        isa: Some(Isa::Avx512),
        ..Default::default()
    };
    assert!(matches!(
        b.validate(all, 2),
        Err(BandwidthParamError::Isa(_))
    ));
    let b = BandwidthBench {
        sizes: Some(vec![32]),
        threads: Some(1),
        ..Default::default()
    };
    assert!(matches!(
        b.validate(all, 2),
        Err(BandwidthParamError::Size { .. })
    ));
    assert_eq!(
        BandwidthBench::default().validate(all, 2).unwrap(),
        Isa::Avx2
    );
}

#[test]
fn kernels_this_cpu_cannot_run_are_refused_or_left_out_with_the_reason() {
    let isa = IsaSet::detect().choose(None).unwrap();
    let zva = kernels::supported(Kernel::ZvaWrite, isa);
    let only_zva = BandwidthBench {
        kernels: vec![Kernel::ZvaWrite],
        ..Default::default()
    };
    match &zva {
        // Asked alone and impossible (x86_64, or DCZID_EL0.DZP): an error that says why.
        Err(why) => {
            let e = only_zva
                .validate(IsaSet::detect(), 2)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("zva-write cannot run here") && e.contains(why),
                "{e}"
            );
        }
        Ok(()) => assert!(only_zva.validate(IsaSet::detect(), 2).is_ok()),
    }
    // Among others, an impossible kernel is left out of the plan (and skipped by the
    // run with the reason), never measured as something else.
    let mixed = BandwidthBench {
        kernels: vec![Kernel::Read, Kernel::ZvaWrite],
        ..Default::default()
    };
    assert!(mixed.validate(IsaSet::detect(), 2).is_ok());
    let planned = mixed
        .plan(&ctx(true), &TargetSpec::Anon)
        .iter()
        .any(|p| p.kernel == Kernel::ZvaWrite);
    assert_eq!(planned, zva.is_ok());
    assert_eq!(
        BandwidthBench::default()
            .kernels
            .contains(&Kernel::ZvaWrite),
        cfg!(target_arch = "aarch64")
    );
}

#[test]
fn quick_plan_has_level_points_and_every_dram_key() {
    let c = ctx(true);
    let plan = BandwidthBench::default().plan(&c, &TargetSpec::Anon);
    let keys: Vec<&str> = plan
        .iter()
        .flat_map(|p| p.keys.iter().map(String::as_str))
        .collect();
    for k in [
        "l1_bw_gbs",
        "l2_bw_gbs",
        "mem_bw_gbs",
        "mem_write_bw_gbs",
        "nt_write_bw_gbs",
        "copy_bw_gbs",
        "nt_copy_bw_gbs",
        "memset_bw_gbs",
        "mem_bw_1t_gbs",
    ] {
        assert!(keys.contains(&k), "{k} missing");
    }
    // The DRAM points leave every cache the threads' CPUs can fill (unless the memory
    // bound says otherwise), and --quick measures them at the same footprints.
    let full = BandwidthBench::default().plan(&ctx(false), &TargetSpec::Anon);
    let dram = |plan: &[Point]| -> Vec<(usize, usize)> {
        plan.iter()
            .filter(|p| p.dram)
            .map(|p| (p.threads, p.size))
            .collect()
    };
    assert_eq!(dram(&plan), dram(&full), "quick changes no DRAM footprint");
    for p in plan.iter().filter(|p| p.dram) {
        let cpus = c.cpus_for(p.threads);
        let (_, sizing) = c.dram_stream_bytes(&TargetSpec::Anon, &cpus);
        if let (Some(r), false) = (
            c.cache_reach(&cpus),
            sizing.rule == bench_core::sizing::SizingRule::MemoryBound,
        ) {
            assert!(p.size >= 4 * r.total_bytes, "{p:?} vs {r:?}");
        }
    }
}

#[test]
fn one_cpu_measures_each_dram_point_once_with_both_keys() {
    let c = Context {
        cpus: vec![0],
        ..ctx(true)
    };
    let plan = BandwidthBench::default().plan(&c, &TargetSpec::Anon);
    let mut seen = std::collections::BTreeSet::new();
    for p in &plan {
        assert!(
            seen.insert((p.kernel.name(), p.threads, p.size)),
            "{} {}t {} planned twice (same measurement id)",
            p.kernel.name(),
            p.threads,
            p.size
        );
    }
    let read = plan
        .iter()
        .find(|p| p.keys.iter().any(|k| k == "mem_bw_gbs"))
        .unwrap();
    assert_eq!(read.threads, 1);
    assert!(read.keys.iter().any(|k| k == "mem_bw_1t_gbs"));
}

#[test]
fn small_run_measures_positive_bandwidth_with_distribution() {
    let c = ctx(true);
    let b = BandwidthBench {
        kernels: vec![Kernel::Read, Kernel::NtCopy],
        sizes: Some(vec![64 * KIB]),
        threads: Some(1),
        ..Default::default()
    };
    let mut r = Region::allocate(&TargetSpec::Anon, 64 * KIB, &c.topology).unwrap();
    let rep = b.run(&c, Input::Region(&mut r)).unwrap();
    assert_eq!(rep.measurements.len(), 2);
    let plan = c.effort.crew;
    for m in &rep.measurements {
        // One figure per used window; the windows run are the attempts.
        let crew = &m.parameters["crew"];
        let (used, run) = (
            crew["windows_used"].as_u64().unwrap(),
            crew["windows_run"].as_u64().unwrap(),
        );
        assert!(
            m.distribution.n == used && used >= 1 && m.distribution.p50 > 0.0,
            "{m:?}"
        );
        assert!(
            (plan.windows as u64..=plan.max_windows as u64).contains(&run),
            "{crew}"
        );
        assert_eq!(m.unit, "GB/s");
        let c = m.counters.as_ref().expect("counters recorded");
        assert_eq!(c.attempts as u64, run);
        assert_eq!(c.disturbed, crew["noisy"].is_string());
        assert_eq!(c.threads, 1);
        if c.counts.llc_load_misses.is_some() {
            assert!(c.per_op.contains_key("llc_load_misses_per_byte"));
        }
    }
}

#[test]
fn memory_is_the_region_a_run_grows_to() {
    // 256 MiB offered: the DRAM points 64 MiB (a quarter), each check's larger point
    // 128 MiB (half), which no check can grow past.
    let c = ctx(true);
    c.sizing.assume_available("anon", Some(256 * MIB));
    let b = BandwidthBench {
        kernels: vec![Kernel::Read],
        ..Default::default()
    };
    let anon = TargetSpec::Anon;
    let need = b.memory(&c, &anon);
    assert_eq!(need.on_target_bytes, 128 * MIB, "{need:?}");
    assert_eq!(need.bytes, need.on_target_bytes);
    assert!(need.fit.is_none());
    let mut r = Region::allocate(&anon, b.region_bytes(&c, &anon), &c.topology).unwrap();
    b.run(&c, Input::Region(&mut r)).unwrap();
    assert_eq!(
        anon.mapped_bytes(r.len(), &c.topology),
        need.on_target_bytes
    );
    // --sizes: the largest, bounded by the option.
    let b = BandwidthBench {
        kernels: vec![Kernel::Read],
        sizes: Some(vec![256 * KIB, MIB]),
        ..Default::default()
    };
    let need = b.memory(&c, &anon);
    let mut r = Region::allocate(&anon, b.region_bytes(&c, &anon), &c.topology).unwrap();
    b.run(&c, Input::Region(&mut r)).unwrap();
    assert_eq!((r.len(), need.on_target_bytes), (MIB, MIB));
    let fit = need.fit.expect("--sizes bounds it");
    assert_eq!(
        (fit.option, fit.per_byte, fit.fixed_bytes),
        ("--sizes", 1, 0)
    );
    // `mem bandwidth --sizes 30G`: planned as it is, for the refusal to weigh.
    let b = BandwidthBench {
        sizes: Some(vec![30 << 30]),
        ..Default::default()
    };
    assert_eq!(b.memory(&c, &anon).on_target_bytes, 30 << 30);
}
