//! Tests of `agents.rs`.

use super::*;

#[test]
fn default_counts_are_the_thread_ladder() {
    let s = bench_core::topology::fixtures::Server::h200_host();
    let ctx = Context {
        topology: s.topology(),
        cpus: (0..16).collect(),
        effort: &bench_core::effort::FULL,
        ..Context::quick_local()
    };
    let counts =
        |c: &AgentsConfig| -> Vec<usize> { c.rungs(&ctx).iter().map(|r| r.threads).collect() };
    assert_eq!(counts(&AgentsConfig::default()), [1, 2, 4, 8, 16]);
    let c = AgentsConfig {
        agents: Some(Threads::List(vec![4, 1, 9, 2, 2])),
        ..Default::default()
    };
    assert_eq!(counts(&c), vec![1, 2, 4, 9], "sorted, deduplicated");
    let r = c.rungs(&ctx);
    assert_eq!(r[3].cpus.len(), 9);
    assert_eq!(union_of(&r).len(), 9);
}

/// Every agent's range lies inside its target's region and no two overlap.
#[test]
fn agents_get_disjoint_ranges_inside_their_region() {
    let s = 4096;
    for targets in [1, 2] {
        for k in 1..=9 {
            let need = bytes_per_target(k, targets, s);
            let mut ranges: Vec<(usize, usize)> =
                (0..k).map(|t| placement_of(t, targets, s)).collect();
            for &(i, off) in &ranges {
                assert!(i < targets);
                assert!(off + s <= need, "k={k}: range past the region");
            }
            ranges.sort_unstable();
            for w in ranges.windows(2) {
                assert!(
                    w[0].0 != w[1].0 || w[0].1 + s <= w[1].1,
                    "k={k} targets={targets}: {w:?} overlap"
                );
            }
        }
    }
    // Round robin: agents alternate targets, each target holds ceil(k/2) transfers.
    assert_eq!(placement_of(0, 2, s), (0, 0));
    assert_eq!(placement_of(1, 2, s), (1, 0));
    assert_eq!(placement_of(2, 2, s), (0, s));
    assert_eq!(bytes_per_target(3, 2, s), 2 * s);
    assert_eq!(bytes_per_target(3, 1, s), 3 * s);
}

#[test]
fn default_size_streams_from_memory_and_is_the_same_for_every_k() {
    let ctx = Context::quick_local();
    let c = AgentsConfig::default();
    let (s, rule) = c.size(&ctx, &[&TargetSpec::Anon]);
    assert!(s >= 16 * MIB && s % MIB == 0, "{s}");
    if let Some(llc) = ctx.topology.llc_bytes() {
        assert!(
            2 * s >= 4 * llc,
            "source + destination {s} x 2 within 4 x LLC {llc}"
        );
    }
    assert!(!rule.is_empty());
    let full = Context {
        effort: &bench_core::effort::FULL,
        ..ctx.clone()
    };
    assert!(c.size(&full, &[&TargetSpec::Anon]).0 >= 64 * MIB);
    let forced = AgentsConfig {
        size: Some(4096),
        ..Default::default()
    };
    assert_eq!(
        forced.size(&ctx, &[&TargetSpec::Anon]),
        (4096, "--size".into())
    );
}

fn topo_with_far(n: usize) -> Topology {
    let mut t = Topology::system();
    let base = t.nodes.iter().map(|x| x.id).max().map_or(0, |m| m + 1);
    t.nodes.retain(|x| !x.likely_far_memory);
    for i in 0..n {
        t.nodes.push(bench_core::topology::NumaNode {
            id: base + i,
            cpus: vec![],
            mem_total_bytes: 1 << 30,
            distances: vec![],
            likely_far_memory: true,
            backing: vec![],
            access: vec![],
            memory_side_caches: vec![],
        });
    }
    t
}

#[test]
fn spread_needs_two_targets() {
    let one = SpreadTargets::from_topology(&topo_with_far(1));
    let SpreadTargets::Unavailable(reason) = one else {
        panic!("one far node gave a pair: {one:?}")
    };
    assert!(reason.starts_with(NEEDS_TWO), "{reason}");
    assert!(reason.contains("1 far-memory node"), "{reason}");
    let t = topo_with_far(3);
    let base = t.nodes.iter().find(|n| n.likely_far_memory).unwrap().id;
    assert_eq!(
        SpreadTargets::from_topology(&t),
        SpreadTargets::Pair(TargetSpec::Node(base), TargetSpec::Node(base + 1))
    );
}

#[test]
fn grace_hoppers_one_gpu_node_is_no_pair_for_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    bench_core::topology::fixtures::arm::write_grace_hopper(dir.path()).unwrap();
    let t = Topology::read(dir.path());
    let SpreadTargets::Unavailable(reason) = SpreadTargets::from_topology(&t) else {
        panic!("GH200 has one far-memory node (the GPU's), not two")
    };
    assert!(reason.contains("1 far-memory node"), "{reason}");
}

#[test]
fn the_spread_part_without_two_targets_is_a_skipped_part_not_a_failure() {
    let ctx = Context::quick_local();
    let b = SpreadBench {
        config: AgentsConfig::default(),
        targets: SpreadTargets::from_topology(&topo_with_far(0)),
    };
    assert_eq!(
        b.subject(),
        Subject::Device {
            target: "two memory targets".into()
        }
    );
    let rep = b.run(&ctx, Input::Device).expect("a report, not a skip");
    assert!(rep.measurements.is_empty() && rep.params.is_empty());
    assert_eq!(rep.skipped.len(), 1);
    assert!(rep.skipped[0].reason.starts_with(NEEDS_TWO));
}

#[test]
fn bad_options_are_errors() {
    let args = |spread: Option<Vec<TargetArg>>, agents: Option<Threads>| AgentsArgs {
        size: None,
        agents,
        dirs: vec![],
        spread,
    };
    let opts = Options::default();
    let topo = Topology::system();
    let e = args(Some(vec![TargetSpec::Anon.into()]), None)
        .spread_targets(&opts, &topo)
        .unwrap_err();
    assert!(e.to_string().contains("two targets"), "{e}");
    let e = args(
        Some(vec![TargetSpec::Anon.into(), TargetSpec::Anon.into()]),
        None,
    )
    .spread_targets(&opts, &topo)
    .unwrap_err();
    assert!(e.to_string().contains("two different targets"), "{e}");
    let e = args(
        Some(vec![
            TargetSpec::Anon.into(),
            TargetSpec::Dax("/dev/dax-none-9.9".into()).into(),
        ]),
        None,
    )
    .spread_targets(&opts, &topo);
    assert!(e.is_err());
    assert!(args(None, Some(Threads::List(vec![0, 1])))
        .config()
        .is_err());
    assert_eq!(
        args(None, None).config().unwrap().dirs,
        AgentDir::ALL.to_vec()
    );
}

#[test]
fn small_run_gives_both_keys_per_k_and_direction() {
    let ctx = Context::quick_local();
    let b = AgentsBench {
        config: AgentsConfig {
            size: Some(64 * 1024),
            agents: Some(Threads::List(vec![1, 2])),
            dirs: AgentDir::ALL.to_vec(),
        },
    };
    let len = b.region_bytes(&ctx, &TargetSpec::Anon);
    let ks: Vec<usize> = b.config.rungs(&ctx).iter().map(|r| r.threads).collect();
    assert_eq!(len, ks.last().unwrap() * 64 * 1024);
    let mut r = Region::allocate(&TargetSpec::Anon, len, &ctx.topology).unwrap();
    let rep = match b.run(&ctx, Input::Region(&mut r)) {
        // A kernel without NUMA support, or qemu-user (which implements no mbind):
        // the private buffers cannot be bound to their CPUs' nodes.
        Err(NotRun::Skipped { reason }) if reason.contains("os error 38") => {
            bench_core::testing::unavailable("mbind", &reason);
            return;
        }
        r => r.unwrap(),
    };
    for k in &ks {
        for d in ["write", "read"] {
            for key in [
                format!("agents_{d}_k{k}_bw_gbs"),
                format!("agents_{d}_k{k}_agg_bw_gbs"),
            ] {
                let p = rep
                    .params
                    .iter()
                    .find(|p| p.key == key)
                    .unwrap_or_else(|| panic!("{key} missing"));
                assert!(p.value > 0.0 && p.value.is_finite());
                assert_eq!(p.info.unit, "GB/s");
            }
        }
    }
    assert_eq!(rep.measurements.len(), 2 * 2 * ks.len());
    for m in &rep.measurements {
        assert_eq!(m.parameters["size_bytes_per_agent"], 64 * 1024);
        assert!(m.placement.is_some());
        // Per agent: every agent's rate in every used window; aggregate: a window each.
        let used = m.parameters["crew"]["windows_used"].as_u64().unwrap();
        let k = m.parameters["agents"].as_u64().unwrap();
        let per = if m.id.ends_with("/per-agent") { k } else { 1 };
        assert_eq!(m.distribution.n, per * used, "{}", m.id);
        assert_eq!(
            m.parameters["bytes_counted"],
            "transferred (each byte once; not read + written)"
        );
    }
}

/// A run of `b` on an `anon` region of its own size, or `None` where the private buffers
/// cannot be bound to their CPUs' nodes (no NUMA support, qemu-user).
fn run_small(b: &AgentsBench, ctx: &Context) -> Option<(Region, Report)> {
    let len = b.region_bytes(ctx, &TargetSpec::Anon);
    let mut r = Region::allocate(&TargetSpec::Anon, len, &ctx.topology).unwrap();
    match b.run(ctx, Input::Region(&mut r)) {
        Err(NotRun::Skipped { reason }) if reason.contains("os error 38") => {
            bench_core::testing::unavailable("mbind", &reason);
            None
        }
        rep => Some((r, rep.unwrap())),
    }
}

#[test]
fn memory_is_the_ranges_and_private_buffers_a_run_maps() {
    let ctx = Context::quick_local();
    let b = AgentsBench {
        config: AgentsConfig {
            size: Some(64 * 1024),
            agents: Some(Threads::List(vec![1, 2])),
            dirs: vec![AgentDir::Write],
        },
    };
    let need = b.memory(&ctx, &TargetSpec::Anon);
    let Some((r, rep)) = run_small(&b, &ctx) else {
        return;
    };
    assert_eq!(need.on_target_bytes, r.len(), "{need:?}");
    // Every private buffer the run placed, as its measurements record them.
    let m = rep.measurements.last().unwrap();
    let buffers = m.parameters["placements"]["private_buffers"]
        .as_array()
        .unwrap()
        .len();
    let k = ctx.cpus.len().min(2);
    assert_eq!(buffers, k);
    assert_eq!(need.bytes, r.len() + buffers * 64 * 1024, "{need:?}");
    let fit = need.fit.expect("--size bounds it");
    assert_eq!((fit.option, fit.per_byte), ("--size", 2 * k));
}

#[test]
fn a_size_too_large_for_every_count_plans_the_smallest_and_maps_nothing_else() {
    // `mem agents --size 13G --agents 1` where 24 GiB are available: one agent's range
    // and its private buffer, 26 GiB: refused before anything is mapped.
    let ctx = Context::quick_local();
    ctx.sizing.assume_available("anon", Some(24 << 30));
    let b = AgentsBench {
        config: AgentsConfig {
            size: Some(13 << 30),
            agents: Some(Threads::List(vec![1])),
            ..Default::default()
        },
    };
    let need = b.memory(&ctx, &TargetSpec::Anon);
    assert_eq!((need.bytes, need.on_target_bytes), (26 << 30, 13 << 30));
    assert!(
        need.what.starts_with("1 agent(s) x 13 GiB"),
        "{}",
        need.what
    );
    let limits = bench_core::memory::budget::Limits {
        system: vec![bench_core::memory::budget::Bound::memory(
            24 << 30,
            "MemAvailable",
        )],
    };
    let e = limits
        .check(ONE, &TargetSpec::Anon, &ctx.topology, &need)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--size") && e.ends_with("or less fits"), "{e}");
    // A size past the share of every count but within the machine: the smallest count
    // runs alone, the others are skipped with the reason.
    let ctx = Context::quick_local();
    ctx.sizing.assume_available("anon", Some(128 * 1024));
    let b = AgentsBench {
        config: AgentsConfig {
            size: Some(64 * 1024),
            agents: Some(Threads::List(vec![1, 2])),
            dirs: vec![AgentDir::Read],
        },
    };
    let need = b.memory(&ctx, &TargetSpec::Anon);
    assert_eq!(need.on_target_bytes, 64 * 1024, "{need:?}");
    let Some((r, rep)) = run_small(&b, &ctx) else {
        return;
    };
    assert_eq!(r.len(), 64 * 1024);
    assert!(rep.params.iter().any(|p| p.key == "agents_read_k1_bw_gbs"));
    if ctx.cpus.len() > 1 {
        assert!(rep.skipped.iter().any(|s| s.reason.starts_with("2 agents")));
    }
}

#[test]
fn spread_memory_is_both_regions_and_the_private_buffers() {
    let t = topo_with_far(2);
    let ctx = Context {
        topology: t.clone(),
        cpus: vec![0, 0, 0, 0],
        ..Context::quick_local()
    };
    let SpreadTargets::Pair(a, b) = SpreadTargets::from_topology(&t) else {
        panic!("two far nodes are a pair")
    };
    for (t, bytes) in [(&a, 1 << 30), (&b, 1 << 30)] {
        ctx.sizing.assume_available(&t.to_string(), Some(bytes));
    }
    let s = 64 * 1024;
    let spread = SpreadBench {
        config: AgentsConfig {
            size: Some(s),
            agents: Some(Threads::List(vec![1, 4])),
            dirs: AgentDir::ALL.to_vec(),
        },
        targets: SpreadTargets::Pair(a, b),
    };
    let need = spread.memory(&ctx, &TargetSpec::Anon);
    // 4 agents: 2 ranges on each target; the private buffers of their CPUs (CPU 0 here,
    // once).
    let cpus = union_of(&spread.rungs(&ctx, &spread_pair(&spread).0, &spread_pair(&spread).1, s));
    assert_eq!(need.on_target_bytes, 2 * 2 * s, "{need:?}");
    assert_eq!(
        need.bytes,
        need.on_target_bytes + cpus.len() * s,
        "{need:?}"
    );
    // No count fits both: nothing is planned, and the run maps nothing.
    ctx.sizing
        .assume_available(&spread_pair(&spread).0.to_string(), Some(1024));
    let need = spread.memory(&ctx, &TargetSpec::Anon);
    assert_eq!(need.bytes, 0, "{need:?}");
}

/// The two targets of a spread benchmark that has them.
fn spread_pair(b: &SpreadBench) -> (TargetSpec, TargetSpec) {
    match &b.targets {
        SpreadTargets::Pair(a, b) => (a.clone(), b.clone()),
        SpreadTargets::Unavailable(r) => panic!("{r}"),
    }
}
