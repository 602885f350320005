//! Tests of `memory/mod.rs`.

use super::*;

#[test]
fn parses_good_specs() {
    let cases = [
        ("anon", TargetSpec::Anon),
        ("thp", TargetSpec::Thp),
        ("hugetlb", TargetSpec::Hugetlb(HugeSize::M2)),
        ("hugetlb:1G", TargetSpec::Hugetlb(HugeSize::G1)),
        ("hugetlb:2m", TargetSpec::Hugetlb(HugeSize::M2)),
        ("node:3", TargetSpec::Node(3)),
        (
            "interleave:1,0",
            TargetSpec::Interleave(Interleave::plain(&[0, 1]).unwrap()),
        ),
        (
            "interleave:0=3,1=1",
            TargetSpec::Interleave(Interleave::weighted(&[(0, 3), (1, 1)]).unwrap()),
        ),
        (
            "interleave:0",
            TargetSpec::Interleave(Interleave::plain(&[0]).unwrap()),
        ),
        ("dax:/dev/dax0.0", TargetSpec::Dax("/dev/dax0.0".into())),
        ("file:/mnt/pmem/f", TargetSpec::File("/mnt/pmem/f".into())),
    ];
    for (s, want) in cases {
        let got: TargetSpec = s.parse().unwrap();
        assert_eq!(got, want, "{s}");
        // Display round-trips to an equivalent spec.
        assert_eq!(got.to_string().parse::<TargetSpec>().unwrap(), want);
    }
}

#[test]
fn rejects_bad_specs_naming_them() {
    for bad in [
        "",
        "ram",
        "node",
        "node:",
        "node:x",
        "hugetlb:4M",
        "dax:",
        "anon:1",
        "file:",
        "interleave",
        "interleave:",
        "interleave:0,0",
        "interleave:0=1,1",
        "interleave:0=0",
        "interleave:x",
    ] {
        let e = bad.parse::<TargetSpec>().unwrap_err().to_string();
        assert!(e.contains(&format!("'{bad}'")), "{e}");
    }
}

#[test]
fn validation_against_a_fake_topology() {
    let dir = tempfile::tempdir().unwrap();
    crate::topology::write_fake_sysfs(dir.path()).unwrap();
    let topo = Topology::read(dir.path());
    assert!(TargetSpec::Node(1).validate(&topo).is_ok());
    assert!(TargetSpec::Node(1).is_far_memory(&topo));
    assert!(!TargetSpec::Node(0).is_far_memory(&topo));
    let e = TargetSpec::Node(7).validate(&topo).unwrap_err().to_string();
    assert!(
        e.contains("node 7 does not exist") && e.contains("0,1"),
        "{e}"
    );
    let e = TargetSpec::Dax("/dev/dax9.9".into())
        .validate(&topo)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/dax9.9") && e.contains("/dev/dax0.0"),
        "{e}"
    );
    assert!(TargetSpec::Dax("/dev/dax0.0".into()).is_far_memory(&topo));
    assert!(TargetSpec::File("/nonexistent/x".into())
        .validate(&topo)
        .is_err());
}

fn il(s: &str) -> TargetSpec {
    format!("interleave:{s}").parse().unwrap()
}

#[test]
fn interleave_validation_against_a_fake_topology() {
    let dir = tempfile::tempdir().unwrap();
    crate::topology::write_fake_sysfs(dir.path()).unwrap();
    let topo = Topology::read(dir.path());
    assert_eq!(topo.weighted_interleave, None);
    assert_eq!(il("0,1").to_string(), "interleave:0,1");
    assert!(il("0,1").validate(&topo).is_ok());
    assert!(il("0,1").is_interleaved() && !TargetSpec::Node(0).is_interleaved());
    // Far only when every node is far.
    assert!(!il("0,1").is_far_memory(&topo));
    assert!(il("1").is_far_memory(&topo));
    let e = il("0,7").validate(&topo).unwrap_err().to_string();
    assert!(
        e.contains("interleave:0,7") && e.contains("node 7 does not exist"),
        "{e}"
    );
    // No weighted interleave in this kernel: not a user mistake, but unavailable.
    assert!(il("0=3,1=1").validate(&topo).is_ok());
    match Region::allocate(&il("0=3,1=1"), 1 << 20, &topo).unwrap_err() {
        CoreError::TargetUnavailable { reason, .. } => {
            assert_eq!(reason, interleave::NO_WEIGHTED_INTERLEAVE)
        }
        e => panic!("{e}"),
    }
    // With weights in sysfs: the current ones pass, others are refused with remedy.
    let w = dir.path().join(interleave::WEIGHTS_DIR);
    std::fs::create_dir_all(&w).unwrap();
    std::fs::write(w.join("node0"), "1\n").unwrap();
    std::fs::write(w.join("node1"), "1\n").unwrap();
    let topo = Topology::read(dir.path());
    assert!(il("0=1,1=1").validate(&topo).is_ok());
    let e = il("0=3,1=1").validate(&topo).unwrap_err();
    assert!(matches!(e, CoreError::TargetSpec { .. }), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("node0=1 node1=1") && e.contains("echo 3 >"),
        "{e}"
    );
    // Nothing was written.
    assert_eq!(std::fs::read_to_string(w.join("node0")).unwrap(), "1\n");
}

#[test]
fn interleave_over_one_node_is_verified_by_its_share() {
    let topo = Topology::system();
    let node = first_memory_node(&topo);
    let spec = il(&node.to_string());
    match Region::allocate(&spec, 4 << 20, &topo) {
        Ok(r) => {
            let p = r.placement();
            assert_eq!(p.verification, Verification::Verified);
            let proof = p.interleave.as_ref().expect("share proof");
            assert_eq!(proof.policy, "MPOL_INTERLEAVE");
            assert_eq!(proof.expected_share_per_node[&(node as i64)], 1.0);
            assert_eq!(proof.share_per_node[&(node as i64)], 1.0);
            assert!(p.method.contains("move_pages"), "{}", p.method);
        }
        Err(CoreError::TargetUnavailable { reason, .. }) => {
            assert!(reason.contains("mbind"), "{reason}")
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn anon_region_is_mapped_and_reported() {
    let topo = Topology::system();
    let mut r = Region::allocate(&TargetSpec::Anon, 1 << 20, &topo).unwrap();
    assert_eq!(r.len(), 1 << 20);
    r.as_mut_slice()[12345] = 7;
    assert_eq!(r.as_mut_slice()[12345], 7);
    let p = r.placement();
    assert_eq!(p.verification, Verification::Reported);
    assert_eq!(p.pages_checked, (1 << 20) / page_size() as u64);
}

fn first_memory_node(topo: &Topology) -> usize {
    topo.nodes
        .iter()
        .find(|n| n.mem_total_bytes > 0)
        .unwrap()
        .id
}

#[test]
fn node_zero_is_verified_page_by_page() {
    let topo = Topology::system();
    let node = first_memory_node(&topo);
    match Region::allocate(&TargetSpec::Node(node), 4 << 20, &topo) {
        Ok(r) => {
            assert_eq!(r.placement().verification, Verification::Verified);
            assert_eq!(
                r.placement().pages_per_node.get(&(node as i64)),
                Some(&1024)
            );
        }
        // Some sandboxes forbid mbind; that must be a reasoned unavailability.
        Err(CoreError::TargetUnavailable { reason, .. }) => {
            assert!(reason.contains("mbind"), "{reason}")
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn missing_hugepages_are_unavailable_with_remedy() {
    let dir = tempfile::tempdir().unwrap();
    crate::topology::write_fake_sysfs(dir.path()).unwrap();
    let topo = Topology::read(dir.path()); // 0 pages reserved
    let e = Region::allocate(&TargetSpec::Hugetlb(HugeSize::M2), 4 << 20, &topo).unwrap_err();
    match e {
        CoreError::TargetUnavailable { reason, .. } => {
            assert!(reason.contains("nr_hugepages"), "{reason}")
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_bar_window_is_a_bar_not_a_target() {
    let dir = tempfile::tempdir().unwrap();
    crate::pci::write_fake_pci(dir.path()).unwrap();
    let bar: BarSpec = "pci:0000:00:02.0/2".parse().unwrap();
    let w = Window {
        source: WindowSource::Bar {
            bar: bar.clone(),
            wc: false,
        },
        offset: 0,
        len: 4096,
        write: false,
        magic: None,
    };
    let r = Region::map_window(&w, Access::default(), dir.path()).unwrap();
    assert_eq!(r.origin(), &Origin::Bar(bar));
    assert_eq!(r.target(), None);
    // Its measurements are labelled by the BAR, as the device benchmarks name it.
    assert_eq!(r.origin().to_string(), "pci:0000:00:02.0/2");
    assert!(r.origin().memory_target().is_none());
    // A BAR is never a target: the --target grammar has no pci: kind.
    assert!("pci:0000:00:02.0/2".parse::<TargetSpec>().is_err());
    // Nor can it grow like the memory of a target.
    let mut r = r;
    let e = r
        .grow(8192, &crate::topology::Topology::read(dir.path()))
        .unwrap_err();
    assert!(e.contains("cannot grow"), "{e}");
}

#[test]
fn a_window_of_a_file_is_the_memory_of_a_file_target() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pool");
    std::fs::write(&f, [0u8; 8192]).unwrap();
    let w = Window {
        source: WindowSource::File {
            path: f.clone(),
            create: false,
        },
        offset: 0,
        len: 4096,
        write: false,
        magic: None,
    };
    let r = Region::map_window(&w, Access::default(), dir.path()).unwrap();
    assert_eq!(r.target(), Some(&TargetSpec::File(f)));
}

#[test]
fn file_target_is_unverified_with_warning() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pool");
    std::fs::write(&f, vec![0u8; 1 << 16]).unwrap();
    let topo = Topology::system();
    let r = Region::allocate(&TargetSpec::File(f.clone()), 1 << 16, &topo).unwrap();
    assert_eq!(r.placement().verification, Verification::Unverified);
    assert!(r
        .placement()
        .warning
        .as_ref()
        .unwrap()
        .contains("cannot be verified"));
    let e = Region::allocate(&TargetSpec::File(f), 1 << 20, &topo).unwrap_err();
    assert!(matches!(e, CoreError::TargetUnavailable { .. }));
}
