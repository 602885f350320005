//! PCI devices from sysfs (`/sys/bus/pci/devices/*`), under a configurable root.

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// `IORESOURCE_IO` in a `resource` line's flags.
const IORESOURCE_IO: u64 = 0x100;
/// `IORESOURCE_MEM`.
const IORESOURCE_MEM: u64 = 0x200;
/// `IORESOURCE_PREFETCH`.
const IORESOURCE_PREFETCH: u64 = 0x2000;
/// `IORESOURCE_MEM_64`.
const IORESOURCE_MEM_64: u64 = 0x0010_0000;

/// One BAR of a device.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bar {
    /// BAR index, 0..5.
    pub index: usize,
    /// Bus address of its start.
    pub start: u64,
    /// Size in bytes.
    pub size_bytes: u64,
    /// A memory BAR (not I/O ports).
    pub memory: bool,
    /// Prefetchable.
    pub prefetchable: bool,
    /// 64-bit.
    pub is_64bit: bool,
    /// `resourceN_wc` exists: the BAR can be mapped write-combining.
    pub wc_available: bool,
}

pub use bench_core::pci::Link;

/// One PCI function.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PciDevice {
    /// `DOMAIN:BUS:DEV.FN`, e.g. `0000:00:02.0`.
    pub address: String,
    /// Vendor id (`0x1af4`).
    pub vendor: String,
    /// Device id.
    pub device: String,
    /// Class code (`0x050000`).
    pub class: String,
    /// Bound kernel driver, if any.
    pub driver: Option<String>,
    /// NUMA node (`None` when the kernel says -1 or nothing).
    pub numa_node: Option<i64>,
    /// Link speed and width.
    pub link: Link,
    /// Non-empty BARs.
    pub bars: Vec<Bar>,
    /// Its sysfs directory.
    pub sysfs: PathBuf,
}

fn read(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// Parses a sysfs `resource` file: one `start end flags` line per resource; the first six
/// are the BARs. Empty BARs are dropped.
pub fn parse_resources(text: &str, wc: impl Fn(usize) -> bool) -> Vec<Bar> {
    text.lines()
        .take(6)
        .enumerate()
        .filter_map(|(index, line)| {
            let f: Vec<u64> = line.split_whitespace().filter_map(hex).collect();
            if f.len() != 3 || f[1] <= f[0] || (f[0] == 0 && f[1] == 0) {
                return None;
            }
            let flags = f[2];
            Some(Bar {
                index,
                start: f[0],
                size_bytes: f[1] - f[0] + 1,
                memory: flags & IORESOURCE_MEM != 0 && flags & IORESOURCE_IO == 0,
                prefetchable: flags & IORESOURCE_PREFETCH != 0,
                is_64bit: flags & IORESOURCE_MEM_64 != 0,
                wc_available: wc(index),
            })
        })
        .collect()
}

/// Reads one device directory.
pub fn read_device(dir: &Path) -> Option<PciDevice> {
    let address = dir.file_name()?.to_string_lossy().to_string();
    let bars = read(&dir.join("resource"))
        .map(|t| parse_resources(&t, |i| dir.join(format!("resource{i}_wc")).exists()))
        .unwrap_or_default();
    let driver = fs::read_link(dir.join("driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()));
    Some(PciDevice {
        vendor: read(&dir.join("vendor")).unwrap_or_default(),
        device: read(&dir.join("device")).unwrap_or_default(),
        class: read(&dir.join("class")).unwrap_or_default(),
        driver,
        numa_node: bench_core::pci::numa_node(dir),
        link: Link::read(dir),
        bars,
        sysfs: dir.to_path_buf(),
        address,
    })
}

/// Every PCI device below `root` (`/` on a real machine), sorted by address.
pub fn devices(root: &Path) -> Vec<PciDevice> {
    let base = root.join("sys/bus/pci/devices");
    let Ok(rd) = fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut v: Vec<PciDevice> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| read_device(&e.path()))
        .collect();
    v.sort_by(|a, b| a.address.cmp(&b.address));
    v
}

/// Writes a fake sysfs PCI tree for tests: an ivshmem-like device at 0000:00:02.0 (no
/// driver; BAR0 4 KiB registers, BAR2 64 MiB prefetchable 64-bit memory with `_wc`) and a
/// NIC-like device at 0000:3b:00.0 with driver `mlx5_core`, an I/O BAR and a Gen4 x16 link.
#[doc(hidden)]
pub fn write_fake_pci(root: &Path) -> std::io::Result<()> {
    let w = |rel: &str, body: &str| -> std::io::Result<()> {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap())?;
        fs::write(p, body)
    };
    let d = "sys/bus/pci/devices/0000:00:02.0";
    w(&format!("{d}/vendor"), "0x1af4\n")?;
    w(&format!("{d}/device"), "0x1110\n")?;
    w(&format!("{d}/class"), "0x050000\n")?;
    w(&format!("{d}/numa_node"), "-1\n")?;
    w(
        &format!("{d}/resource"),
        "0x00000000febf1000 0x00000000febf10ff 0x0000000000040200\n\
         0x0000000000000000 0x0000000000000000 0x0000000000000000\n\
         0x0000000800000000 0x0000000803ffffff 0x000000000014220c\n\
         0x0000000000000000 0x0000000000000000 0x0000000000000000\n\
         0x0000000000000000 0x0000000000000000 0x0000000000000000\n\
         0x0000000000000000 0x0000000000000000 0x0000000000000000\n\
         0x0000000000000000 0x0000000000000000 0x0000000000000000\n",
    )?;
    w(&format!("{d}/resource0"), "")?;
    w(&format!("{d}/resource2"), "")?;
    w(&format!("{d}/resource2_wc"), "")?;
    let n = "sys/bus/pci/devices/0000:3b:00.0";
    w(&format!("{n}/vendor"), "0x15b3\n")?;
    w(&format!("{n}/device"), "0x101b\n")?;
    w(&format!("{n}/class"), "0x020700\n")?;
    w(&format!("{n}/numa_node"), "0\n")?;
    w(&format!("{n}/current_link_speed"), "16.0 GT/s PCIe\n")?;
    w(&format!("{n}/current_link_width"), "16\n")?;
    w(&format!("{n}/max_link_speed"), "16.0 GT/s PCIe\n")?;
    w(&format!("{n}/max_link_width"), "16\n")?;
    w(
        &format!("{n}/resource"),
        "0x0000000000002000 0x000000000000201f 0x0000000000040101\n\
         0x00000000c0000000 0x00000000c1ffffff 0x000000000014220c\n",
    )?;
    let drv = root.join("sys/bus/pci/drivers/mlx5_core");
    fs::create_dir_all(&drv)?;
    std::os::unix::fs::symlink(&drv, root.join(n).join("driver"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_fake_pci_tree() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let devs = devices(dir.path());
        assert_eq!(devs.len(), 2);
        let iv = &devs[0];
        assert_eq!(iv.address, "0000:00:02.0");
        assert_eq!(
            (iv.vendor.as_str(), iv.device.as_str()),
            ("0x1af4", "0x1110")
        );
        assert_eq!(iv.driver, None);
        assert_eq!(iv.numa_node, None);
        assert_eq!(iv.bars.len(), 2);
        assert_eq!(iv.bars[0].index, 0);
        assert_eq!(iv.bars[0].size_bytes, 256);
        assert!(iv.bars[0].memory && !iv.bars[0].wc_available);
        let b2 = &iv.bars[1];
        assert_eq!((b2.index, b2.size_bytes), (2, 64 << 20));
        assert!(b2.memory && b2.prefetchable && b2.is_64bit && b2.wc_available);
        let nic = &devs[1];
        assert_eq!(nic.driver.as_deref(), Some("mlx5_core"));
        assert_eq!(nic.numa_node, Some(0));
        assert_eq!(nic.link.current_width, Some(16));
        assert_eq!(nic.link.max_speed.as_deref(), Some("16.0 GT/s PCIe"));
        assert!(!nic.bars[0].memory, "BAR0 is I/O ports");
        assert_eq!(nic.bars[1].size_bytes, 32 << 20);
    }

    #[test]
    fn no_pci_sysfs_no_devices() {
        let dir = tempfile::tempdir().unwrap();
        assert!(devices(dir.path()).is_empty());
    }
}
