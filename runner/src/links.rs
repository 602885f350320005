//! The machine's PCIe links in a run, a plan and `cxlchar targets`: every device's link
//! against both ends' capability ([`bench_core::pci::links`]), recorded in params.json
//! (`links`, the key `pcie_links_degraded`, a `link_degraded` warning per degraded link)
//! and said in one line per degraded link.

use bench_core::params::{ParamInfo, ParamsFile};
use bench_core::pci::links::{self, DeviceLink};
use std::path::Path;

/// The key counting degraded links.
pub const KEY: &str = "pcie_links_degraded";

/// The links of the machine whose sysfs is below `root` (`/`: this one).
pub fn read(root: &Path) -> Vec<DeviceLink> {
    links::read(root)
}

/// Records `devices` in `file`: its `links`, a `link_degraded` warning per degraded link,
/// and [`KEY`] with its `param_info` when at least one link was judged.
pub fn annotate(file: &mut ParamsFile, devices: Vec<DeviceLink>) {
    let judged = links::judged_links(&devices);
    if judged > 0 {
        let n = links::degraded(&devices).len();
        let unit = bench_core::keys::lookup(KEY).map_or("count", |d| d.unit.symbol());
        file.params.insert(KEY.into(), n as f64);
        file.param_info.insert(
            KEY.into(),
            ParamInfo {
                unit: unit.into(),
                target: "machine".into(),
                method: format!(
                    "{n} of the {judged} judged PCIe links below the speed or width both ends can do (sysfs current_link_* against the lower max_link_* of the device and its port; every device in `links`)"
                ),
                from: Vec::new(),
                noisy: None,
            },
        );
    }
    file.warnings.extend(links::warnings(&devices));
    file.links = devices;
}

/// The lines of `cxlchar targets`: the count, then a line per degraded link (both ends,
/// what it runs at, what it could).
pub fn targets_lines(devices: &[DeviceLink]) -> String {
    let judged = links::judged_links(devices);
    if judged == 0 {
        return format!(
            "PCIe links: {}\n",
            if devices.is_empty() {
                "none (no PCI device offers link attributes)"
            } else {
                "none judged (no device with a port and figures to compare)"
            }
        );
    }
    let bad = links::degraded(devices);
    if bad.is_empty() {
        return format!("PCIe links: {judged}, all at their capability\n");
    }
    let mut s = format!("PCIe links: {judged}, {} degraded:\n", bad.len());
    for l in &bad {
        s.push_str(&format!("  link_degraded {}\n", l.describe()));
    }
    s
}

/// The `links` value of `cxlchar targets --format json`: every device, the count of
/// judged links and of degraded ones (`null` when none was judged, as the key is absent).
pub fn json(devices: &[DeviceLink]) -> serde_json::Value {
    let judged = links::judged_links(devices);
    serde_json::json!({
        "devices": devices,
        "judged": judged,
        KEY: (judged > 0).then(|| links::degraded(devices).len()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake() -> (tempfile::TempDir, Vec<DeviceLink>) {
        let d = tempfile::tempdir().unwrap();
        links::write_fake_links(d.path()).unwrap();
        let l = read(d.path());
        (d, l)
    }

    #[test]
    fn annotate_records_the_links_the_key_and_a_warning_each() {
        let (_d, l) = fake();
        let mut f = crate::firmware::tests::synthetic(&[]);
        annotate(&mut f, l);
        assert_eq!(f.params.get(KEY), Some(&2.0));
        assert_eq!(f.param_info[KEY].unit, "count");
        assert!(f.param_info[KEY].method.starts_with("2 of the 5 judged"));
        let w: Vec<_> = f
            .warnings
            .iter()
            .filter(|w| w.code == "link_degraded")
            .collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(f.links.len(), 10);
        // The document with its links is what the schema says, and reads back the same.
        let doc = serde_json::to_value(&f).unwrap();
        let gpu = doc["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["bdf"] == "0000:01:00.0")
            .unwrap();
        assert_eq!(gpu["ports"][0]["bdf"], "0000:00:01.0");
        assert_eq!(gpu["link"]["current_width_lanes"], 8);
        let errors = crate::document::schema_errors(&doc);
        assert!(errors.is_empty(), "{errors:#?}");
        let back: ParamsFile = serde_json::from_value(doc).unwrap();
        assert_eq!(back.links, f.links);
    }

    #[test]
    fn no_judged_link_no_key() {
        let mut f = crate::firmware::tests::synthetic(&[]);
        annotate(&mut f, Vec::new());
        assert!(!f.params.contains_key(KEY) && f.links.is_empty());
        assert_eq!(
            targets_lines(&[]),
            "PCIe links: none (no PCI device offers link attributes)\n"
        );
        assert!(json(&[])[KEY].is_null());
    }

    #[test]
    fn a_check_spec_bounds_the_degraded_links() {
        use crate::consumers::check::{check, Outcome};
        let spec = crate::consumers::spec::parse(
            "[[bound]]\nkey = \"pcie_links_degraded\"\nop = \"<=\"\nvalue = 0\n",
            "links.toml",
        )
        .unwrap();
        let (_d, mut l) = fake();
        let outcome = |l: Vec<DeviceLink>| {
            let mut f = crate::firmware::tests::synthetic(&[]);
            annotate(&mut f, l);
            check(&spec, &f)[0].outcome
        };
        assert_eq!(outcome(l.clone()), Outcome::Fail);
        l.iter_mut().for_each(|d| d.degraded = false);
        assert_eq!(outcome(l), Outcome::Pass);
        // No link judged: not measured, never a pass.
        assert_eq!(outcome(Vec::new()), Outcome::NotMeasured);
    }

    #[test]
    fn targets_name_each_degraded_link() {
        let (_d, mut l) = fake();
        let t = targets_lines(&l);
        assert!(t.starts_with("PCIe links: 5, 2 degraded:\n"), "{t}");
        assert!(
            t.contains("  link_degraded 0000:01:00.0 (gpu 0x10de:0x0001) -> port 0000:00:01.0: runs at 16 GT/s x8, below the 16 GT/s x16 both ends can do"),
            "{t}"
        );
        l.iter_mut().for_each(|d| d.degraded = false);
        assert_eq!(
            targets_lines(&l),
            "PCIe links: 5, all at their capability\n"
        );
        assert_eq!(json(&l)[KEY], 0);
    }
}
