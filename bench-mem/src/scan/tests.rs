use super::backing::{self, Namer, Physical};
use super::plan::{self, Asked, Facts, Pricing, FAR_BOUND, NEAR_BOUND};
use super::*;
use bench_core::cxl::{Backing, Range};
use bench_core::topology::fixtures::Server;
use bench_core::topology::Topology;
use bench_core::units::{GIB, MIB};
use std::path::PathBuf;

/// The 8-core CXL host (node 1: 128 GiB, no CPUs) with the plan's quiet expectations.
fn cxl_host() -> (Topology, Vec<usize>) {
    let s = Server::cxl_host();
    (s.topology(), s.node_cpus(0))
}

fn pricing<'a>(topo: &'a Topology, cpus: &'a [usize]) -> Pricing<'a> {
    Pricing {
        expect: bench_core::plan::Expect::default().placing_on(topo, cpus),
        topo,
        cpus,
        kernels: 2,
    }
}

fn far(offers: Option<usize>) -> Facts {
    Facts {
        far: true,
        page_bytes: 4096,
        offers_bytes: offers,
        working_set_bytes: 132 * MIB,
    }
}

#[test]
fn a_large_far_node_is_scanned_in_1_gib_ranges_within_the_time_bound() {
    let (topo, cpus) = cxl_host();
    let p = pricing(&topo, &cpus);
    // Half of 115 GiB free.
    let l = plan::layout(Asked::default(), &far(Some(57 * GIB)), &p);
    assert_eq!(l.range_bytes, GIB, "{l:?}");
    assert!(
        l.ranges >= plan::MIN_DEFAULT_RANGES && l.ranges < 57,
        "{l:?}"
    );
    assert!(l.why.contains("time bound"), "{}", l.why);
    assert!(!l.below_working_set);
    // The bound holds with either window plan, and one more range would break one.
    let full = l.ranges as f64 * p.range_s(GIB, &bench_core::effort::FULL.crew);
    let quick = l.ranges as f64 * p.range_s(GIB, &bench_core::effort::QUICK.crew);
    assert!(
        full <= FAR_BOUND.full_s && quick <= FAR_BOUND.quick_s,
        "{full} {quick}"
    );
    let more = (l.ranges + 1) as f64;
    assert!(
        more * p.range_s(GIB, &bench_core::effort::FULL.crew) > FAR_BOUND.full_s
            || more * p.range_s(GIB, &bench_core::effort::QUICK.crew) > FAR_BOUND.quick_s
    );
    // A slow machine (0.1 GB/s per CPU): time allows fewer than 8 ranges of 1 GiB, and they
    // stay 1 GiB (smaller ones would cost nearly as much: their windows).
    let slow = Pricing {
        expect: bench_core::plan::Expect {
            stream_gbs_per_cpu: 0.1,
            ..p.expect
        },
        ..p
    };
    let l = plan::layout(Asked::default(), &far(Some(57 * GIB)), &slow);
    assert_eq!(l.range_bytes, GIB, "{l:?}");
    assert!(l.ranges < plan::MIN_DEFAULT_RANGES, "{l:?}");
    assert!(l.why.contains("time bound"), "{}", l.why);
    // A small far node: its memory decides, in whole ranges.
    let l = plan::layout(Asked::default(), &far(Some(10 * GIB + 5 * MIB)), &p);
    assert_eq!((l.range_bytes, l.ranges), (GIB, 10), "{l:?}");
    assert!(l.why.contains("half the memory"), "{}", l.why);
}

#[test]
fn a_small_target_is_cut_into_eighths_never_below_the_working_set() {
    let (topo, cpus) = cxl_host();
    let p = pricing(&topo, &cpus);
    // 2 GiB offered: two ranges of 1 GiB would be too few; eighths of 256 MiB.
    let l = plan::layout(Asked::default(), &far(Some(2 * GIB)), &p);
    assert_eq!((l.range_bytes, l.ranges), (256 * MIB, 8), "{l:?}");
    assert!(l.why.contains("fewer than 8"), "{}", l.why);
    // 512 MiB offered: eighths would be 64 MiB, below the 132 MiB working set.
    let l = plan::layout(Asked::default(), &far(Some(512 * MIB)), &p);
    assert_eq!(l.range_bytes, 132 * MIB, "{l:?}");
    assert_eq!(l.ranges, 3);
    // 32 MiB offered (the lab's CXL devdax): one range, all of it, and said so.
    let l = plan::layout(Asked::default(), &far(Some(32 * MIB)), &p);
    assert_eq!((l.range_bytes, l.ranges), (32 * MIB, 1), "{l:?}");
    assert!(l.below_working_set && l.why.contains("working set"));
}

#[test]
fn the_user_bounds_the_region_and_quick_changes_nothing() {
    let (topo, cpus) = cxl_host();
    let p = pricing(&topo, &cpus);
    let f = far(Some(57 * GIB));
    let asked = |range, size| Asked { range, size };
    let l = plan::layout(asked(Some(128 * MIB), Some(512 * MIB)), &f, &p);
    assert_eq!(
        (l.range_bytes, l.ranges, l.region_bytes()),
        (128 * MIB, 4, 512 * MIB)
    );
    assert!(l.below_working_set, "128 MiB < the 132 MiB working set");
    // A --size that is not whole ranges: the whole ranges, and the rest named.
    let l = plan::layout(asked(Some(256 * MIB), Some(600 * MIB)), &f, &p);
    assert_eq!(l.ranges, 2);
    assert!(l.why.contains("88 MiB"), "{}", l.why);
    // --size alone: the default range, in eighths where it is small.
    let l = plan::layout(asked(None, Some(64 * GIB)), &f, &p);
    assert_eq!((l.range_bytes, l.ranges), (GIB, 64));
    let l = plan::layout(asked(None, Some(2 * GIB)), &f, &p);
    assert_eq!((l.range_bytes, l.ranges), (256 * MIB, 8));
    // --range alone: as many as the bounds allow.
    let l = plan::layout(asked(Some(4 * GIB), None), &f, &p);
    assert_eq!(l.range_bytes, 4 * GIB);
    assert!(l.ranges >= 1 && l.ranges * 4 <= 57, "{l:?}");
    // Nothing in a layout depends on the run's effort: the same facts give the same
    // layout (the pricing takes both window plans, never the run's).
    assert_eq!(
        plan::layout(Asked::default(), &f, &p),
        plan::layout(Asked::default(), &f, &p)
    );
}

#[test]
fn ranges_are_whole_pages_of_the_target() {
    let (topo, cpus) = cxl_host();
    let p = pricing(&topo, &cpus);
    // 1 GiB huge pages: ranges of whole pages, though 256 MiB is the default elsewhere.
    let f = Facts {
        far: false,
        page_bytes: GIB,
        ..far(Some(8 * GIB))
    };
    let l = plan::layout(Asked::default(), &f, &p);
    assert!(l.range_bytes.is_multiple_of(GIB), "{l:?}");
    let l = plan::layout(
        Asked {
            range: None,
            size: Some(4 * GIB),
        },
        &f,
        &p,
    );
    assert!(l.range_bytes.is_multiple_of(GIB) && l.ranges == 4, "{l:?}");
}

#[test]
fn local_memory_takes_256_mib_ranges_and_a_few_seconds() {
    let (topo, cpus) = cxl_host();
    let p = pricing(&topo, &cpus);
    let f = Facts {
        far: false,
        ..far(Some(30 * GIB))
    };
    let l = plan::layout(Asked::default(), &f, &p);
    assert_eq!(l.range_bytes, 256 * MIB, "{l:?}");
    let quick = l.ranges as f64 * p.range_s(l.range_bytes, &bench_core::effort::QUICK.crew);
    assert!(quick <= NEAR_BOUND.quick_s, "{quick}");
    assert!(l.ranges >= 4, "{l:?}");
}

#[test]
fn the_scan_plans_what_it_maps_and_all_scans_far_memory_only() {
    let mut ctx = Context::quick_local();
    let s = Server::cxl_host();
    ctx.topology = s.topology();
    ctx.cpus = (0..s.cpus).collect();
    ctx.sizing.assume_available("node:1", Some(115 * GIB));
    ctx.sizing.assume_available("anon", Some(57 * GIB));
    let b = ScanBench::default();
    let node = TargetSpec::Node(1);
    let l = b.layout(&ctx, &node);
    assert_eq!(b.region_bytes(&ctx, &node), l.region_bytes());
    let need = b.memory(&ctx, &node);
    assert_eq!(need.bytes, l.region_bytes());
    assert_eq!(need.on_target_bytes, need.bytes);
    assert!(
        need.what.contains(&format!("{} ranges", l.ranges)),
        "{}",
        need.what
    );
    // The cost: the naming, then every range once per kernel.
    let c = b.cost(&ctx, Some(&node));
    let runnable = ScanBench::runnable().len();
    assert_eq!(c.count(), 1 + runnable * l.ranges);
    assert!(c.seconds() <= FAR_BOUND.full_s, "{:.1} s", c.seconds());
    // The node's CPUs scan it (node 1 has none: node 0's).
    assert_eq!(ScanBench::cpus(&ctx, &node), s.node_cpus(0));
    let all = ScanBench {
        far_only: true,
        ..ScanBench::default()
    };
    assert!(all.check(&ctx, &node).is_ok());
    let e = all.check(&ctx, &TargetSpec::Anon).unwrap_err();
    assert!(e.reason.contains("cxlchar mem scan --target anon"), "{e}");
    assert!(b.check(&ctx, &TargetSpec::Anon).is_ok());
}

#[test]
fn bad_ranges_and_sizes_are_refused() {
    let a = |range: Option<usize>, size: Option<usize>| ScanArgs { range, size }.bench(&[], false);
    assert!(a(Some(3 * MIB), None)
        .unwrap_err()
        .to_string()
        .contains("2 MiB"));
    assert!(a(Some(256 * MIB), Some(128 * MIB))
        .unwrap_err()
        .to_string()
        .contains("smaller than one --range"));
    assert!(a(Some(2 * MIB), Some(16 * GIB))
        .unwrap_err()
        .to_string()
        .contains("at most 4096"));
    assert!(a(Some(128 * MIB), Some(512 * MIB)).is_ok());
    assert!(a(None, Some(MIB))
        .unwrap_err()
        .to_string()
        .contains("less than one range"));
    let huge = ScanArgs {
        range: Some(2 * MIB),
        size: None,
    };
    let e = huge
        .bench(
            &[TargetSpec::Hugetlb(bench_core::memory::HugeSize::G1)],
            false,
        )
        .unwrap_err();
    assert!(e.to_string().contains("1G pages"), "{e}");
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../bench-core/tests/fixtures")
        .join(name)
}

#[test]
fn ranges_on_the_lab_cxl_node_are_named_by_block_node_region_and_device() {
    let root = fixture("sysfs-cxl-ram");
    let topo = Topology::read(&root);
    let namer = Namer::read(&root, &topo);
    // 64 MiB of node 2 (blocks 59-61, 0x1d8000000-0x1efffffff: CXL region1), scattered
    // in two runs over blocks 59 and 61.
    let runs = vec![
        Range {
            start: 0x1_d800_0000,
            end: 0x1_d800_0000 + 32 * MIB as u64,
        },
        Range {
            start: 0x1_e800_0000,
            end: 0x1_e800_0000 + 32 * MIB as u64,
        },
    ];
    let n = namer.name(Ok(Physical {
        runs,
        source: "test".into(),
    }));
    assert_eq!(backing::block_list(&n.blocks), "memory59,61");
    assert_eq!(n.nodes.get(&2), Some(&(64 * MIB as u64)), "{:?}", n.nodes);
    assert_eq!(n.backing.len(), 1, "{:?}", n.backing);
    let Backing::CxlRegion {
        region, memdevs, ..
    } = &n.backing[0].backing
    else {
        panic!("{:?}", n.backing)
    };
    assert_eq!(region, "region1");
    assert_eq!(memdevs.len(), 1);
    assert_eq!(
        (
            memdevs[0].memdev.as_str(),
            memdevs[0].serial.as_deref(),
            memdevs[0].position
        ),
        ("mem0", Some("0x1234"), 0)
    );
    // Its PCIe link is named with it (QEMU 7.2: 2.5 GT/s x1).
    assert!(n.links["mem0"].contains("x1"), "{:?}", n.links);
    let text = backing::describe(&n);
    assert!(
        text.contains("region1") && text.contains("serial 0x1234"),
        "{text}"
    );
    let j = backing::to_json(&n);
    assert_eq!(j["physical"]["span"], "0x1d8000000-0x1e9ffffff");
    assert_eq!(j["memory_block_count"], 2);
    assert_eq!(j["backing"][0]["backing"]["kind"], "cxl_region");
    // DRAM below the CXL window: not CXL, its node from its block.
    let n = namer.name(Ok(Physical {
        runs: vec![Range {
            start: 0x100_0000,
            end: 0x200_0000,
        }],
        source: "test".into(),
    }));
    assert!(
        matches!(n.backing[0].backing, Backing::NotCxl),
        "{:?}",
        n.backing
    );
    assert!(backing::describe(&n).starts_with("not CXL"));
    // No address known: named by its virtual offset, and said why.
    let n = namer.name(Err("no CAP_SYS_ADMIN".into()));
    assert!(n.backing.is_empty() && n.blocks.is_empty());
    assert!(backing::to_json(&n)["addresses_from"]
        .as_str()
        .unwrap()
        .contains("no CAP_SYS_ADMIN"));
}

#[test]
fn a_dax_devices_offsets_map_through_its_ranges_and_smbios_names_dimms() {
    // Two mapping ranges of a device: 0..32 MiB at 0x1d8000000, 32..64 at 0x1f0000000.
    let m = [
        Range {
            start: 0x1_d800_0000,
            end: 0x1_d800_0000 + 32 * MIB as u64,
        },
        Range {
            start: 0x1_f000_0000,
            end: 0x1_f000_0000 + 32 * MIB as u64,
        },
    ];
    let p = backing::dax_runs(&m, "dax1.0", 16 * MIB as u64, 32 * MIB as u64).unwrap();
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.runs[0].start, 0x1_d800_0000 + 16 * MIB as u64);
    assert_eq!(
        p.runs[1],
        Range {
            start: 0x1_f000_0000,
            end: 0x1_f000_0000 + 16 * MIB as u64
        }
    );
    assert!(backing::dax_runs(&m, "dax1.0", 48 * MIB as u64, 32 * MIB as u64).is_err());

    // SMBIOS: two DIMMs interleaved over the first 8 GiB.
    let d = tempfile::tempdir().unwrap();
    let g = GIB as u64;
    super::smbios::tests::write(
        d.path(),
        &[
            (
                "17-0",
                super::smbios::tests::type17(0x10, "DIMM_A1", "CH A"),
            ),
            (
                "17-1",
                super::smbios::tests::type17(0x11, "DIMM_B1", "CH B"),
            ),
            (
                "20-0",
                super::smbios::tests::type20(0x20, 0, 8 * g, 0x10, 1, false),
            ),
            (
                "20-1",
                super::smbios::tests::type20(0x21, 0, 8 * g, 0x11, 2, false),
            ),
        ],
    );
    let namer = Namer::read(d.path(), &Topology::read(d.path()));
    let n = namer.name(Ok(Physical {
        runs: vec![Range {
            start: g,
            end: 2 * g,
        }],
        source: "test".into(),
    }));
    assert_eq!(
        n.dimms,
        vec![
            ("DIMM_A1 (CH A)".to_string(), Some(1), g),
            ("DIMM_B1 (CH B)".to_string(), Some(2), g)
        ]
    );
}

#[test]
fn pagemap_entries_merge_into_runs_and_absent_frames_are_refused() {
    let present = 1u64 << 63;
    let e = [
        present | 0x100,
        present | 0x101,
        present | 0x200,
        present | 0x201,
    ];
    let runs = backing::runs_of_pagemap(&e, 4096).unwrap();
    assert_eq!(
        runs,
        vec![
            Range {
                start: 0x100 * 4096,
                end: 0x102 * 4096
            },
            Range {
                start: 0x200 * 4096,
                end: 0x202 * 4096
            }
        ]
    );
    // Frames read as zero: no CAP_SYS_ADMIN.
    let e = backing::runs_of_pagemap(&[present, present], 4096).unwrap_err();
    assert!(e.contains("CAP_SYS_ADMIN"), "{e}");
    assert!(backing::runs_of_pagemap(&[0x100], 4096)
        .unwrap_err()
        .contains("not present"));
}
