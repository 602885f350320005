//! CXL discovery against sysfs trees copied from the lab's QEMU guest a
//! (`ci/lab/sysfs-snapshot.py`): QEMU 7.2 `cxl-type3` (512 MiB pmem, serial 0x1234)
//! behind a `pxb-cxl` host bridge with two root ports, kernel 6.1, an NVDIMM beside it.
//! `sysfs-cxl-devdax`: the CXL region with a devdax namespace on it (`--map=mem`);
//! `sysfs-cxl-ram`: the same, onlined as system RAM (node 2).

use bench_core::cxl::{Backing, DecoderKind};
use bench_core::topology::Topology;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    assert!(
        p.join("sys/bus/cxl/devices").is_dir(),
        "fixture {} missing",
        p.display()
    );
    p
}

#[test]
fn memdev_region_and_decoders_of_the_lab_device() {
    let t = Topology::read(&fixture("sysfs-cxl-devdax"));
    let cxl = &t.cxl;
    assert_eq!(cxl.memdevs.len(), 1, "{cxl:#?}");
    let m = &cxl.memdevs[0];
    assert_eq!(m.name, "mem0");
    assert_eq!(m.serial.as_deref(), Some("0x1234"));
    assert_eq!(m.pmem_bytes, 512 << 20);
    assert_eq!(m.ram_bytes, 0);
    assert_eq!(m.pci.as_deref(), Some("0000:0d:00.0"));
    let link = m.link.as_ref().expect("PCI link");
    assert_eq!(link.current_speed.as_deref(), Some("2.5 GT/s PCIe"));
    assert_eq!(link.current_width, Some(1));
    assert_eq!(m.pci_path, ["pci0000:0c", "0000:0c:00.0", "0000:0d:00.0"]);
    assert_eq!(m.ports, ["root0", "port1", "endpoint2"]);
    assert_eq!(m.host_bridge.as_deref(), Some("ACPI0016:00"));

    let kinds: Vec<(String, DecoderKind)> = cxl
        .decoders
        .iter()
        .map(|d| (d.name.clone(), d.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("decoder0.0".to_string(), DecoderKind::Root),
            ("decoder1.0".to_string(), DecoderKind::Switch),
            ("decoder2.0".to_string(), DecoderKind::Endpoint),
        ]
    );
    let root = &cxl.decoders[0];
    assert_eq!(
        (root.start, root.size_bytes),
        (Some(0x1_d000_0000), 4 << 30)
    );
    let ep = &cxl.decoders[2];
    assert_eq!(ep.port, "endpoint2");
    assert_eq!(ep.mode.as_deref(), Some("pmem"));
    assert_eq!(ep.region.as_deref(), Some("region1"));
    assert_eq!(cxl.decoders[1].interleave_granularity_bytes, Some(256));

    assert_eq!(cxl.regions.len(), 1);
    let r = &cxl.regions[0];
    assert_eq!(r.name, "region1");
    assert_eq!(r.mode.as_deref(), Some("pmem"));
    assert_eq!((r.start, r.size_bytes), (Some(0x1_d000_0000), 512 << 20));
    assert_eq!(
        (r.interleave_ways, r.interleave_granularity_bytes),
        (Some(1), Some(256))
    );
    assert!(r.committed);
    assert_eq!(r.root_decoder.as_deref(), Some("decoder0.0"));
    assert_eq!(r.targets.len(), 1);
    assert_eq!(r.targets[0].decoder, "decoder2.0");
    assert_eq!(r.targets[0].memdev.as_deref(), Some("mem0"));
    assert_eq!(cxl.regions_of("mem0").len(), 1);
}

#[test]
fn dax_devices_map_to_the_cxl_region_or_the_nvdimm() {
    let t = Topology::read(&fixture("sysfs-cxl-devdax"));
    let cxl_dax = t.dax.iter().find(|d| d.name == "dax1.0").expect("dax1.0");
    assert_eq!(cxl_dax.target_node, Some(2));
    match cxl_dax.backing.as_ref().expect("backing") {
        Backing::CxlRegion {
            region,
            mode,
            memdevs,
            window,
            ..
        } => {
            assert_eq!(region, "region1");
            assert_eq!(mode.as_deref(), Some("pmem"));
            assert_eq!(window.as_deref(), Some("decoder0.0"));
            assert_eq!(memdevs.len(), 1);
            assert_eq!(memdevs[0].memdev, "mem0");
            assert_eq!(memdevs[0].serial.as_deref(), Some("0x1234"));
            assert_eq!(memdevs[0].pci.as_deref(), Some("0000:0d:00.0"));
        }
        other => panic!("dax1.0 backed by {other:?}"),
    }
    assert!(cxl_dax
        .backing
        .as_ref()
        .unwrap()
        .describe()
        .contains("mem0 serial 0x1234"));
    // The NVDIMM's devdax is persistent memory, not CXL.
    let nv = t.dax.iter().find(|d| d.name == "dax0.0").expect("dax0.0");
    assert_eq!(
        nv.backing,
        Some(Backing::Nvdimm {
            nd_region: "region0".into()
        })
    );
}

#[test]
fn the_memory_only_dram_node_is_not_called_cxl() {
    let t = Topology::read(&fixture("sysfs-cxl-devdax"));
    let n1 = t.node(1).expect("node 1");
    assert!(n1.likely_far_memory);
    assert!(!n1.is_cxl(), "{:?}", n1.backing);
    assert!(
        n1.backing.iter().all(|s| s.backing == Backing::NotCxl),
        "{:?}",
        n1.backing
    );
    assert!(n1.describe().contains("not CXL"), "{}", n1.describe());
}

#[test]
fn cxl_specs_parse_and_print() {
    use bench_core::memory::{CxlName, TargetArg, TargetSpec};
    for s in ["cxl:region0", "cxl:region12", "cxl:mem3"] {
        let t: TargetArg = s.parse().unwrap();
        assert_eq!(t, TargetArg::Cxl(CxlName::new(&s[4..]).unwrap()));
        assert_eq!(t.to_string(), s);
        // A name is no target: the spec grammar sends it to the resolution.
        let e = s.parse::<TargetSpec>().unwrap_err().to_string();
        assert!(e.contains("resolve"), "{s}: {e}");
    }
    let t: TargetArg = "node:1".parse().unwrap();
    assert_eq!(t, TargetArg::Target(TargetSpec::Node(1)));
    for bad in [
        "cxl:",
        "cxl",
        "cxl:region",
        "cxl:dax0.0",
        "cxl:mem0x",
        "cxl:decoder0.0",
    ] {
        let e = bad.parse::<TargetArg>().unwrap_err().to_string();
        assert!(
            e.contains("cxl:regionN or cxl:memN") || e.contains("unknown target"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn cxl_names_resolve_to_the_dax_device_with_its_chain() {
    use bench_core::memory::{backing_of, CxlName, TargetArg, TargetSpec};
    let t = Topology::read(&fixture("sysfs-cxl-devdax"));
    let dax = TargetSpec::Dax("/dev/dax1.0".into());
    let cxl = |n: &str| CxlName::new(n).unwrap();
    for name in ["region1", "mem0"] {
        let spec = cxl(name).resolve(&t).unwrap();
        assert_eq!(spec, dax, "cxl:{name}");
        assert!(spec.is_far_memory(&t), "node 2 has no CPUs");
    }
    // A target given as one resolves to itself.
    assert_eq!(TargetArg::Target(dax.clone()).resolve(&t).unwrap(), dax);
    let chain = backing_of(&cxl("region1").resolve(&t).unwrap(), &t);
    assert_eq!(chain.len(), 1);
    assert!(chain[0].backing.is_cxl());
    assert_eq!(
        chain[0].bytes, 534773760,
        "the whole devdax device (map=mem)"
    );
    let e = cxl("region9").resolve(&t).unwrap_err().to_string();
    assert!(e.contains("no CXL region region9 (regions: region1"), "{e}");
    let e = cxl("mem4").resolve(&t).unwrap_err().to_string();
    assert!(
        e.contains("no CXL memory device mem4 (memory devices: mem0)"),
        "{e}"
    );
    // The NVDIMM's dax device carries its own, non-CXL backing.
    let nv = backing_of(&TargetSpec::Dax("/dev/dax0.0".into()), &t);
    assert!(!nv[0].backing.is_cxl());
}

#[test]
fn a_machine_without_cxl_refuses_cxl_names_with_the_lists() {
    let d = tempfile::tempdir().unwrap();
    let t = Topology::read(d.path());
    let e = bench_core::memory::CxlName::new("region0")
        .unwrap()
        .resolve(&t)
        .unwrap_err()
        .to_string();
    assert!(e.contains("regions: none"), "{e}");
}

/// `sysfs-cxl-ram`: the same device's devdax onlined as system RAM
/// (`daxctl reconfigure-device --mode=system-ram`): node 2, no CPUs, three 128 MiB blocks.
#[test]
fn the_kmem_node_is_backed_by_the_cxl_region_and_cxl_names_resolve_to_it() {
    use bench_core::memory::TargetSpec;
    let t = Topology::read(&fixture("sysfs-cxl-ram"));
    let n2 = t.node(2).expect("node 2");
    assert!(n2.cpus.is_empty() && n2.mem_total_bytes > 0);
    assert!(n2.is_cxl(), "{:?}", n2.backing);
    assert_eq!(n2.backing.len(), 1);
    assert_eq!(
        n2.backing[0].bytes,
        384 << 20,
        "kmem onlines whole 128 MiB blocks"
    );
    match &n2.backing[0].backing {
        Backing::CxlRegion {
            region, memdevs, ..
        } => {
            assert_eq!(region, "region1");
            assert_eq!(memdevs[0].serial.as_deref(), Some("0x1234"));
        }
        other => panic!("node 2 backed by {other:?}"),
    }
    assert!(
        n2.describe().starts_with("memory-only: CXL pmem region1"),
        "{}",
        n2.describe()
    );
    // The dax device is kmem's now: no character device to map.
    let d = t.dax.iter().find(|d| d.name == "dax1.0").expect("dax1.0");
    assert_eq!(d.mode.as_deref(), Some("system-ram"));
    assert!(!d.is_devdax());
    for name in ["region1", "mem0"] {
        assert_eq!(
            bench_core::memory::CxlName::new(name)
                .unwrap()
                .resolve(&t)
                .unwrap(),
            TargetSpec::Node(2),
            "cxl:{name}"
        );
    }
    // Node 1 (QEMU RAM without CPUs) is still far memory that is not CXL.
    assert!(!t.node(1).unwrap().is_cxl());
}

#[test]
fn devdax_fixture_knows_the_driver() {
    let t = Topology::read(&fixture("sysfs-cxl-devdax"));
    let d = t.dax.iter().find(|d| d.name == "dax1.0").expect("dax1.0");
    assert_eq!(d.mode.as_deref(), Some("devdax"));
}

/// A copy of fixture `name` in a temporary directory, to add files to.
fn copy_of(name: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture(name).join("."))
        .arg(d.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "copying the fixture");
    d
}

#[test]
fn cdat_figures_are_absent_on_the_lab_kernel() {
    // Linux 6.1 has neither qos_class nor region access coordinates: not advertised.
    let t = Topology::read(&fixture("sysfs-cxl-ram"));
    assert_eq!(t.cxl.memdevs[0].pmem_qos_class, None);
    assert_eq!(t.cxl.memdevs[0].ram_qos_class, None);
    assert!(t.cxl.regions[0].access.is_empty());
    assert!(t.nodes.iter().all(|n| n.access.is_empty()));
}

#[test]
fn cdat_figures_where_the_kernel_writes_them() {
    let d = copy_of("sysfs-cxl-ram");
    let bus = d.path().join("sys/bus/cxl/devices");
    std::fs::write(bus.join("mem0/pmem/qos_class"), "42\n").unwrap();
    let a1 = bus.join("region1/access1");
    std::fs::create_dir_all(&a1).unwrap();
    std::fs::write(a1.join("read_latency"), "420\n").unwrap();
    std::fs::write(a1.join("read_bandwidth"), "24000\n").unwrap();
    let t = Topology::read(d.path());
    assert_eq!(t.cxl.memdevs[0].pmem_qos_class, Some(42));
    assert_eq!(t.cxl.memdevs[0].ram_qos_class, None);
    let acc = &t.cxl.regions[0].access;
    assert_eq!(acc.len(), 1, "class 0 advertises nothing: {acc:?}");
    assert_eq!(acc[0].class, 1);
    assert_eq!(acc[0].coords.read_latency_ns, Some(420));
    assert_eq!(acc[0].coords.read_bandwidth_mbs, Some(24000));
    assert_eq!(acc[0].coords.write_bandwidth_mbs, None);
}
