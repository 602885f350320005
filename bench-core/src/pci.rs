//! What several families need to know about a PCI function: the one spelling of a BAR
//! on cxlchar's command line (`pci:DOMAIN:BUS:DEV.FN/BAR`, shared by MMIO costs and a
//! memory pool in a BAR), a device's PCIe link and NUMA node from sysfs (shared by PCI
//! discovery and GPU discovery), and one device directory read from sysfs ([`read_device`]:
//! its driver and BARs, which the write guard of [`crate::memory::guard`] checks before a
//! BAR is mapped). Listing every device stays with bench-pcie; every device's link
//! against both ends' capability is [`links`].

pub mod links;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A BAR spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid BAR '{spec}': {reason} (expected pci:DOMAIN:BUS:DEV.FN/BAR, e.g. pci:0000:00:02.0/2)"
)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct BarSpecError {
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A BAR named on the command line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BarSpec {
    /// `DOMAIN:BUS:DEV.FN` (lower case).
    pub address: String,
    /// BAR index 0..5.
    pub index: usize,
}

impl fmt::Display for BarSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pci:{}/{}", self.address, self.index)
    }
}

impl FromStr for BarSpec {
    type Err = BarSpecError;
    fn from_str(s: &str) -> Result<Self, BarSpecError> {
        let err = |reason: &str| BarSpecError {
            spec: s.into(),
            reason: reason.into(),
        };
        let rest = s
            .strip_prefix("pci:")
            .ok_or_else(|| err("missing 'pci:' prefix"))?;
        let (addr, bar) = rest.split_once('/').ok_or_else(|| err("missing '/BAR'"))?;
        let index: usize = bar.parse().map_err(|_| err("BAR must be a number 0..5"))?;
        if index > 5 {
            return Err(err("BAR must be 0..5"));
        }
        if !is_pci_address(addr) {
            return Err(err("address must be DOMAIN:BUS:DEV.FN, e.g. 0000:00:02.0"));
        }
        Ok(BarSpec {
            address: addr.to_ascii_lowercase(),
            index,
        })
    }
}

impl BarSpec {
    /// Its sysfs resource file (`/sys/bus/pci/devices/<address>/resource<index>`).
    pub fn resource_path(&self) -> PathBuf {
        PathBuf::from(format!(
            "/sys/bus/pci/devices/{}/resource{}",
            self.address, self.index
        ))
    }

    /// The BAR a sysfs resource file path names, when the path has that canonical form.
    pub fn from_resource_path(p: &Path) -> Option<BarSpec> {
        let index = p.file_name()?.to_str()?.strip_prefix("resource")?;
        let dev = p.parent()?;
        if dev.parent()? != Path::new("/sys/bus/pci/devices") {
            return None;
        }
        format!("pci:{}/{index}", dev.file_name()?.to_str()?)
            .parse()
            .ok()
    }
}

/// PCIe link of a device, from sysfs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// `current_link_speed` (e.g. `32.0 GT/s PCIe`).
    pub current_speed: Option<String>,
    /// `current_link_width` (lanes).
    pub current_width: Option<u32>,
    /// `max_link_speed`.
    pub max_speed: Option<String>,
    /// `max_link_width`.
    pub max_width: Option<u32>,
}

impl Link {
    /// The link of the device whose sysfs directory is `dir` (fields the kernel does not
    /// offer stay `None`).
    pub fn read(dir: &Path) -> Link {
        Link {
            current_speed: read(&dir.join("current_link_speed")),
            current_width: read(&dir.join("current_link_width")).and_then(|s| s.parse().ok()),
            max_speed: read(&dir.join("max_link_speed")),
            max_width: read(&dir.join("max_link_width")).and_then(|s| s.parse().ok()),
        }
    }

    /// `32.0 GT/s PCIe x16 (max 32.0 GT/s PCIe x16)`; `None` without a current speed and
    /// width.
    pub fn describe(&self) -> Option<String> {
        let (s, w) = (self.current_speed.as_ref()?, self.current_width?);
        Some(format!(
            "{s} x{w} (max {} x{})",
            self.max_speed.as_deref().unwrap_or("?"),
            self.max_width.map_or("?".into(), |w| w.to_string())
        ))
    }
}

/// The NVIDIA GPUs (vendor 0x10de, PCI class 0x03: display or 3D controller) of the
/// sysfs tree below `root`. A `vendor` or `class` file that is refused (not a regular
/// file, larger than an attribute: [`crate::sysfs`]) is an error naming it.
pub fn nvidia_gpus(root: &std::path::Path) -> Result<usize, crate::sysfs::ReadError> {
    use crate::sysfs::read_trim;
    let Ok(rd) = std::fs::read_dir(root.join("sys/bus/pci/devices")) else {
        return Ok(0);
    };
    crate::sysfs::checked(|| {
        rd.filter_map(|e| e.ok())
            .filter(|e| {
                read_trim(&e.path().join("vendor")).as_deref() == Some("0x10de")
                    && read_trim(&e.path().join("class")).is_some_and(|c| c.starts_with("0x03"))
            })
            .count()
    })
}

/// NUMA node of the device whose sysfs directory is `dir` (`None` when the kernel says -1
/// or nothing).
pub fn numa_node(dir: &Path) -> Option<i64> {
    read(&dir.join("numa_node"))
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|&n| n >= 0)
}

/// A sysfs attribute, trimmed (bounded and never blocking: [`crate::sysfs`]).
fn read(p: &Path) -> Option<String> {
    crate::sysfs::read_trim(p)
}

/// `DOMAIN:BUS:DEV.FN` with hex fields of 4:2:2.1 digits (function 0..7).
pub(crate) fn is_pci_address(addr: &str) -> bool {
    let p: Vec<&str> = addr.split(':').collect();
    p.len() == 3
        && p[0].len() == 4
        && p[1].len() == 2
        && p[2].split_once('.').is_some_and(|(d, f)| {
            d.len() == 2
                && f.len() == 1
                && u8::from_str_radix(d, 16).is_ok()
                && f.parse::<u8>().is_ok_and(|f| f < 8)
        })
        && u16::from_str_radix(p[0], 16).is_ok()
        && u8::from_str_radix(p[1], 16).is_ok()
}

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
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Bar {
    /// BAR index, 0..5.
    pub index: usize,
    /// Bus address of its start.
    pub start: u64,
    /// Size in bytes.
    pub size_bytes: u64,
    /// A memory BAR (not I/O ports).
    pub memory: bool,
    pub prefetchable: bool,
    pub is_64bit: bool,
    /// `resourceN_wc` exists: the BAR can be mapped write-combining.
    pub wc_available: bool,
}

/// One PCI function.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PciDevice {
    /// `DOMAIN:BUS:DEV.FN`, e.g. `0000:00:02.0`.
    pub address: String,
    /// Vendor id (`0x1af4`).
    pub vendor: String,
    /// Device id (sysfs `device`, e.g. `0x1041`).
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
                size_bytes: (f[1] - f[0]).checked_add(1)?,
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
    let driver = std::fs::read_link(dir.join("driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()));
    Some(PciDevice {
        vendor: read(&dir.join("vendor")).unwrap_or_default(),
        device: read(&dir.join("device")).unwrap_or_default(),
        class: read(&dir.join("class")).unwrap_or_default(),
        driver,
        numa_node: numa_node(dir),
        link: Link::read(dir),
        bars,
        sysfs: dir.to_path_buf(),
        address,
    })
}

/// Writes a fake sysfs PCI tree for tests: an ivshmem-like device at 0000:00:02.0 (no
/// driver; BAR0 4 KiB registers, BAR2 64 MiB prefetchable 64-bit memory with `_wc`) and a
/// NIC-like device at 0000:3b:00.0 with driver `mlx5_core`, an I/O BAR and a Gen4 x16 link.
#[doc(hidden)]
pub fn write_fake_pci(root: &Path) -> std::io::Result<()> {
    let w = |rel: &str, body: &str| -> std::io::Result<()> {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap())?;
        std::fs::write(p, body)
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
    std::fs::create_dir_all(&drv)?;
    std::os::unix::fs::symlink(&drv, root.join(n).join("driver"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs_and_says_why_not() {
        let b: BarSpec = "pci:0000:00:02.0/2".parse().unwrap();
        assert_eq!(
            b,
            BarSpec {
                address: "0000:00:02.0".into(),
                index: 2
            }
        );
        assert_eq!(b.to_string(), "pci:0000:00:02.0/2");
        assert_eq!(
            "pci:0000:AF:02.0/0".parse::<BarSpec>().unwrap().address,
            "0000:af:02.0"
        );
        for bad in [
            "0000:00:02.0/2",
            "pci:0000:00:02.0",
            "pci:0000:00:02.0/9",
            "pci:00:02.0/1",
            "pci:0000:00:02.9/1",
            "pci:zzzz:00:02.0/1",
        ] {
            let e = bad.parse::<BarSpec>().unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
    }

    #[test]
    fn resource_paths_round_trip() {
        let b: BarSpec = "pci:0000:00:04.0/2".parse().unwrap();
        let p = b.resource_path();
        assert_eq!(p, Path::new("/sys/bus/pci/devices/0000:00:04.0/resource2"));
        assert_eq!(BarSpec::from_resource_path(&p), Some(b));
        for other in [
            "/tmp/resource2",
            "/sys/bus/pci/devices/0000:00:04.0/resource2_wc",
            "/sys/bus/pci/devices/0000:00:04.0/config",
        ] {
            assert_eq!(
                BarSpec::from_resource_path(Path::new(other)),
                None,
                "{other}"
            );
        }
    }
}
