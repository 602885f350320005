//! GPU discovery: what the driver says about each device, and its PCIe link and NUMA
//! node from sysfs (`/sys/bus/pci/devices/<bus id>/`).
//!
//! The sysfs part goes through `bench_core::pci` (family crates do not depend on each
//! other), under a configurable root so that it is tested on a fake tree.

use crate::cuda::{self, Unavailable};
use bench_core::pci::Link;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// CUDA device ordinal (`--device N`).
    pub ordinal: usize,
    /// Name reported by the driver.
    pub name: String,
    /// Total device memory in bytes.
    pub total_mem_bytes: u64,
    /// Compute capability, `major.minor`.
    pub compute_capability: String,
    /// Copy engines that can run beside kernels (`ASYNC_ENGINE_COUNT`; seed 003 found one
    /// per direction to be the limit of concurrent transfers).
    pub copy_engines: i32,
    /// PCI address in sysfs form (`0000:3b:00.0`).
    pub pci_bus_id: String,
    /// PCIe link, from sysfs.
    pub link: Link,
    /// NUMA node of the device (`None`: the kernel says -1 or nothing).
    pub numa_node: Option<i64>,
}

impl GpuInfo {
    /// The device as recorded in every measurement's parameters.
    pub fn parameters(&self, driver_version: &str) -> serde_json::Value {
        serde_json::json!({
            "device": self.ordinal,
            "gpu": self.name,
            "compute_capability": self.compute_capability,
            "copy_engines": self.copy_engines,
            "pci": self.pci_bus_id,
            "link": link_text(&self.link),
            "gpu_numa_node": self.numa_node,
            "driver": driver_version,
        })
    }
}

/// What the driver offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInventory {
    /// Driver API version (`12.4`).
    pub driver_version: String,
    /// The devices, by ordinal.
    pub devices: Vec<GpuInfo>,
}

/// The driver's bus id in sysfs form: lower case, 4-digit domain
/// (`00000000:3B:00.0` -> `0000:3b:00.0`). `None` if it does not look like a PCI address.
pub fn sysfs_bus_id(driver_id: &str) -> Option<String> {
    let id = driver_id.trim().to_ascii_lowercase();
    let (domain, rest) = id.split_once(':')?;
    let (bus, devfn) = rest.split_once(':')?;
    let (dev, func) = devfn.split_once('.')?;
    let domain = u32::from_str_radix(domain, 16).ok()?;
    let bus = u8::from_str_radix(bus, 16).ok()?;
    let dev = u8::from_str_radix(dev, 16).ok()?;
    let func = u8::from_str_radix(func, 16).ok()?;
    if dev > 0x1f || func > 7 {
        return None;
    }
    Some(format!("{domain:04x}:{bus:02x}:{dev:02x}.{func}"))
}

/// `32.0 GT/s PCIe x16 (max 32.0 GT/s PCIe x16)`, or `unknown` (a VM without sysfs link
/// attributes).
pub fn link_text(link: &Link) -> String {
    link.describe().unwrap_or_else(|| "unknown".into())
}

/// Link and NUMA node of the PCI device `bus_id` (sysfs form) under `root`.
pub fn pci_facts(root: &Path, bus_id: &str) -> (Link, Option<i64>) {
    let dir = root.join("sys/bus/pci/devices").join(bus_id);
    (Link::read(&dir), bench_core::pci::numa_node(&dir))
}

/// Loads the driver (checked: never panics) and lists the GPUs, or says why there are
/// none. sysfs is read under `root` (`/` on a real machine).
pub fn probe_at(root: &Path) -> Result<GpuInventory, Unavailable> {
    let (version, n) = cuda::init()?;
    let mut devices = Vec::with_capacity(n);
    for ordinal in 0..n {
        let f = cuda::device_facts(ordinal).map_err(Unavailable::Query)?;
        let bus = sysfs_bus_id(&f.pci_bus_id).unwrap_or_else(|| f.pci_bus_id.clone());
        let (link, numa_node) = pci_facts(root, &bus);
        devices.push(GpuInfo {
            ordinal,
            name: f.name,
            total_mem_bytes: f.total_mem_bytes,
            compute_capability: format!("{}.{}", f.compute_capability.0, f.compute_capability.1),
            copy_engines: f.copy_engines,
            pci_bus_id: bus,
            link,
            numa_node,
        });
    }
    Ok(GpuInventory {
        driver_version: cuda::version_string(version),
        devices,
    })
}

/// [`probe_at`] on this machine.
pub fn probe() -> Result<GpuInventory, Unavailable> {
    probe_at(Path::new("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_take_the_sysfs_form() {
        assert_eq!(
            sysfs_bus_id("00000000:3B:00.0").as_deref(),
            Some("0000:3b:00.0")
        );
        assert_eq!(
            sysfs_bus_id("0000:C1:00.1").as_deref(),
            Some("0000:c1:00.1")
        );
        assert_eq!(
            sysfs_bus_id("0001:02:1f.7\n").as_deref(),
            Some("0001:02:1f.7")
        );
        for bad in [
            "",
            "3b:00.0",
            "0000:3b:00",
            "0000:zz:00.0",
            "0000:3b:20.0",
            "0000:3b:00.8",
        ] {
            assert_eq!(sysfs_bus_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn reads_link_and_node_from_a_fake_sysfs() {
        use std::fs;
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("sys/bus/pci/devices/0000:3b:00.0");
        fs::create_dir_all(&d).unwrap();
        for (f, v) in [
            ("current_link_speed", "32.0 GT/s PCIe\n"),
            ("current_link_width", "16\n"),
            ("max_link_speed", "32.0 GT/s PCIe\n"),
            ("max_link_width", "16\n"),
            ("numa_node", "1\n"),
        ] {
            fs::write(d.join(f), v).unwrap();
        }
        let (link, node) = pci_facts(root.path(), "0000:3b:00.0");
        assert_eq!(link.current_width, Some(16));
        assert_eq!(link.current_speed.as_deref(), Some("32.0 GT/s PCIe"));
        assert_eq!(node, Some(1));
        assert_eq!(
            link_text(&link),
            "32.0 GT/s PCIe x16 (max 32.0 GT/s PCIe x16)"
        );
        fs::write(d.join("numa_node"), "-1\n").unwrap();
        assert_eq!(pci_facts(root.path(), "0000:3b:00.0").1, None);
        // An absent device (a VM without sysfs links) reads as unknown, not an error.
        let (l, n) = pci_facts(root.path(), "0000:99:00.0");
        assert_eq!((link_text(&l).as_str(), n), ("unknown", None));
    }

    #[test]
    fn probe_without_driver_says_why() {
        if !cuda::library_present() {
            let e = probe().unwrap_err();
            assert!(e.to_string().contains("libcuda"), "{e}");
        }
    }
}
