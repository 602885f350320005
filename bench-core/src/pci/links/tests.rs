use super::*;

fn tree() -> (tempfile::TempDir, Vec<DeviceLink>) {
    let dir = tempfile::tempdir().unwrap();
    write_fake_links(dir.path()).unwrap();
    let links = read(dir.path());
    (dir, links)
}

fn get<'a>(links: &'a [DeviceLink], bdf: &str) -> &'a DeviceLink {
    links
        .iter()
        .find(|d| d.bdf == bdf)
        .unwrap_or_else(|| panic!("{bdf} not in {links:?}"))
}

#[test]
fn parses_the_kernels_spellings() {
    assert_eq!(parse_speed_gts("16.0 GT/s PCIe"), Some(16.0));
    assert_eq!(parse_speed_gts("2.5 GT/s"), Some(2.5));
    assert_eq!(parse_speed_gts("8 GT/s"), Some(8.0));
    for bad in ["Unknown", "", "0 GT/s", "16.0", "NaN GT/s", "16.0 MB/s"] {
        assert_eq!(parse_speed_gts(bad), None, "{bad}");
    }
    assert_eq!(parse_width_lanes("16"), Some(16));
    assert_eq!(parse_width_lanes("x8"), Some(8));
    for bad in ["0", "", "Unknown", "-1"] {
        assert_eq!(parse_width_lanes(bad), None, "{bad}");
    }
    assert_eq!(class_name("0x030200"), "gpu");
    assert_eq!(class_name("0x020000"), "nic");
    assert_eq!(class_name("0x050210"), "cxl");
    assert_eq!(class_name("0x010802"), "nvme");
    assert_eq!(class_name("0x060400"), "bridge");
    assert_eq!(class_name("0x050000"), "other");
    assert_eq!(class_name("junk"), "other");
}

#[test]
fn a_gpu_at_x8_behind_an_x16_port_is_degraded() {
    let (_d, links) = tree();
    let gpu = get(&links, "0000:01:00.0");
    assert_eq!(gpu.class, "gpu");
    assert_eq!(gpu.ports.len(), 1);
    assert_eq!(gpu.ports[0].bdf, "0000:00:01.0");
    assert_eq!(gpu.ports[0].link.max_width_lanes, Some(16));
    assert_eq!(
        (gpu.capable_speed_gts, gpu.capable_width_lanes),
        (Some(16.0), Some(16))
    );
    assert!(gpu.judged && gpu.degraded, "{gpu:?}");
    assert!(
        gpu.reason
            .starts_with("runs at 16 GT/s x8, below the 16 GT/s x16 both ends can do"),
        "{}",
        gpu.reason
    );
}

#[test]
fn a_cxl_device_at_gen4_behind_a_gen5_port_is_degraded() {
    let (_d, links) = tree();
    let cxl = get(&links, "0000:02:00.0");
    assert_eq!(cxl.class, "cxl");
    assert_eq!(cxl.capable_speed_gts, Some(32.0));
    assert!(cxl.degraded, "{cxl:?}");
    assert!(cxl
        .reason
        .contains("runs at 16 GT/s x16, below the 32 GT/s x16"));
    assert!(cxl.reason.contains("port 0000:00:02.0 max 32 GT/s x16"));
}

#[test]
fn a_port_that_caps_the_device_is_not_degraded() {
    let (_d, links) = tree();
    let nvme = get(&links, "0000:03:00.0");
    assert_eq!(nvme.class, "nvme");
    assert_eq!(
        (nvme.capable_speed_gts, nvme.capable_width_lanes),
        (Some(16.0), Some(8))
    );
    assert!(nvme.judged && !nvme.degraded, "{nvme:?}");
    assert!(nvme
        .reason
        .starts_with("at its capability: 16 GT/s x8 of 16 GT/s x8"));
}

#[test]
fn a_switch_chain_is_followed_and_only_links_are_judged() {
    let (_d, links) = tree();
    let nic = get(&links, "0000:06:00.0");
    let chain: Vec<&str> = nic.ports.iter().map(|p| p.bdf.as_str()).collect();
    assert_eq!(chain, ["0000:05:00.0", "0000:04:00.0", "0000:00:04.0"]);
    assert!(nic.judged && !nic.degraded, "{nic:?}");
    let down = get(&links, "0000:05:00.0");
    assert!(
        !down.judged && down.reason.contains("downstream port"),
        "{down:?}"
    );
    let up = get(&links, "0000:04:00.0");
    assert!(up.judged && !up.degraded, "{up:?}");
    let root = get(&links, "0000:00:04.0");
    assert!(
        !root.judged && root.reason.contains("root port"),
        "{root:?}"
    );
    // Four root ports, one upstream and one downstream port, four endpoints.
    assert_eq!(links.len(), 10);
    assert_eq!(judged_links(&links), 5);
}

#[test]
fn one_warning_per_degraded_link_naming_both_ends() {
    let (_d, links) = tree();
    let w = warnings(&links);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.iter().all(|w| w.code == LINK_DEGRADED));
    assert!(w[0]
        .message
        .contains("0000:01:00.0 (gpu 0x10de:0x0001) -> port 0000:00:01.0"));
    assert!(w[1].message.contains("0000:02:00.0 (cxl"));
    let d = degraded(&links);
    assert_eq!(
        d[0].short(),
        "0000:01:00.0 (gpu) at 16 GT/s x8 of 16 GT/s x16, port 0000:00:01.0"
    );
    assert!(w[0].remediation.contains("bifurcation") && w[0].remediation.contains("0000:00:01.0"));
}

#[test]
fn functions_of_one_device_are_one_link() {
    let (_d, mut links) = tree();
    let mut f1 = get(&links, "0000:01:00.0").clone();
    f1.bdf = "0000:01:00.1".into();
    links.push(f1);
    let d = degraded(&links);
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].functions, 2);
    assert!(d[0].describe().contains("and its 1 other functions"));
    assert_eq!(judged_links(&links), 5);
}

/// A device with its port, both judged from the given figures.
fn judged(class: &str, dev: LinkFigures, port: LinkFigures) -> DeviceLink {
    let mut d = DeviceLink {
        bdf: "0000:01:00.0".into(),
        class: class.into(),
        class_code: String::new(),
        vendor: String::new(),
        device: String::new(),
        link: dev,
        ports: vec![PortLink {
            bdf: "0000:00:01.0".into(),
            link: port,
        }],
        capable_speed_gts: None,
        capable_width_lanes: None,
        judged: false,
        degraded: false,
        reason: String::new(),
    };
    judge(&mut d);
    d
}

fn figures(
    cur: Option<f64>,
    cur_w: Option<u32>,
    max: Option<f64>,
    max_w: Option<u32>,
) -> LinkFigures {
    LinkFigures {
        current_speed_gts: cur,
        current_width_lanes: cur_w,
        max_speed_gts: max,
        max_width_lanes: max_w,
    }
}

#[test]
fn an_idle_gpu_at_a_lower_speed_is_judged_by_width() {
    let full = figures(Some(16.0), Some(16), Some(16.0), Some(16));
    let idle = figures(Some(2.5), Some(16), Some(16.0), Some(16));
    let g = judged("gpu", idle.clone(), full.clone());
    assert!(g.judged && !g.degraded, "{g:?}");
    assert!(
        g.reason.contains("a GPU lowers its link speed when idle"),
        "{}",
        g.reason
    );
    let nic = judged("nic", idle, full.clone());
    assert!(nic.degraded, "{nic:?}");
    let narrow = judged(
        "gpu",
        figures(Some(2.5), Some(8), Some(16.0), Some(16)),
        full,
    );
    assert!(narrow.degraded, "{narrow:?}");
}

#[test]
fn unknown_figures_are_not_judged() {
    let port = figures(Some(16.0), Some(16), Some(16.0), Some(16));
    let d = judged("nic", figures(None, None, None, None), port.clone());
    assert!(
        !d.judged && !d.degraded && d.reason.starts_with("not judged"),
        "{d:?}"
    );
    // Width unknown on the device: judged by speed alone.
    let d = judged("nic", figures(Some(8.0), None, Some(16.0), None), port);
    assert!(
        d.judged && d.degraded && d.capable_width_lanes.is_none(),
        "{d:?}"
    );
}

#[test]
fn devices_without_link_attributes_and_trees_without_pci_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    assert!(read(dir.path()).is_empty());
    crate::pci::write_fake_pci(dir.path()).unwrap();
    let links = read(dir.path());
    // The ivshmem-like device offers no link; the NIC does, on no port (no chain).
    assert_eq!(links.len(), 1, "{links:?}");
    assert!(!links[0].judged && links[0].reason.contains("root bus"));
}

#[test]
fn a_device_linked_out_of_the_tree_is_not_followed_out() {
    let outside = tempfile::tempdir().unwrap();
    write_fake_links(outside.path()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bus = dir.path().join("sys/bus/pci/devices");
    std::fs::create_dir_all(&bus).unwrap();
    std::os::unix::fs::symlink(
        outside
            .path()
            .join("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"),
        bus.join("0000:01:00.0"),
    )
    .unwrap();
    let links = read(dir.path());
    assert_eq!(links.len(), 1);
    assert!(links[0].ports.is_empty(), "{:?}", links[0].ports);
}

#[test]
fn a_fifo_in_place_of_an_attribute_is_refused_not_waited_on() {
    let (d, _) = tree();
    let p = d
        .path()
        .join("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/max_link_width");
    std::fs::remove_file(&p).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap();
    assert!(ok.success());
    let e = crate::sysfs::checked(|| read(d.path())).unwrap_err();
    assert!(e.to_string().contains("max_link_width"), "{e}");
}
