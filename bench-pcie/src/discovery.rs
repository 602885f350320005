//! PCI devices from sysfs (`/sys/bus/pci/devices/*`), under a configurable root. One
//! device's directory is read by bench-core ([`bench_core::pci::read_device`]), which the
//! write guard shares; this module lists them all.

use std::fs;
use std::path::Path;

pub use bench_core::pci::{parse_resources, read_device, Bar, Link, PciDevice};

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

#[doc(hidden)]
pub use bench_core::pci::write_fake_pci;

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
