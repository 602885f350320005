//! `pci:DOMAIN:BUS:DEV.FN/BAR`: a device BAR as a benchmark target, its validation and its
//! mapping (uncached `resourceN`, write-combining `resourceN_wc`).

use crate::discovery::{read_device, Bar, PciDevice};
use memmap2::{MmapMut, MmapOptions};
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Errors of BAR specs and mappings, one variant per way they fail.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BarError {
    /// The spec does not parse.
    #[error(transparent)]
    Parse(#[from] BarSpecError),
    /// No such PCI device.
    #[error("no PCI device {0} (see `cxlchar pcie list`)")]
    NoDevice(String),
    /// The device has no such BAR (or it is empty).
    #[error("device {address} has no BAR {index} (BARs: {present})")]
    NoBar {
        /// Device.
        address: String,
        /// BAR asked for.
        index: usize,
        /// BARs that exist.
        present: String,
    },
    /// An I/O-port BAR cannot be mapped.
    #[error("BAR {index} of {address} is an I/O-port BAR, not a memory BAR")]
    NotMemory {
        /// Device.
        address: String,
        /// BAR.
        index: usize,
    },
    /// The offset (plus the window) is past the BAR's end.
    #[error("offset {offset} + {len} bytes is past the end of BAR {index} ({size} bytes)")]
    OffsetPastBar {
        /// BAR.
        index: usize,
        /// Offset asked for.
        offset: u64,
        /// Window length.
        len: u64,
        /// BAR size.
        size: u64,
    },
    /// A kernel driver owns the device.
    #[error("device {address} is bound to driver '{driver}': measuring it could disturb the driver; unbind it or pass --force")]
    DriverBound {
        /// Device.
        address: String,
        /// Driver.
        driver: String,
    },
    /// Writes need consent.
    #[error("writing to {0} needs --allow-write (device registers or shared memory would be overwritten)")]
    WriteNotAllowed(String),
    /// The device has no write-combining mapping of that BAR.
    #[error("BAR {index} of {address} has no resource{index}_wc (not prefetchable, or the kernel offers no WC mapping)")]
    NoWc {
        /// Device.
        address: String,
        /// BAR.
        index: usize,
    },
    /// Opening or mapping the resource file failed.
    #[error("cannot map {path}: {reason}")]
    Map {
        /// The resource file.
        path: String,
        /// The OS error, with advice.
        reason: String,
    },
}

pub use bench_core::pci::{BarSpec, BarSpecError};

/// What the benchmark will do with the BAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Writes allowed (`--allow-write`).
    pub allow_write: bool,
    /// Measure even with a driver bound (`--force`).
    pub force: bool,
}

/// Looking a [`BarSpec`] up in sysfs (the spec itself lives in bench-core, shared with the
/// pool of bench-cxl).
pub trait Resolve {
    /// Looks the BAR up below `root` and checks that it can be measured with `access` in a
    /// window `[offset, offset+len)`.
    fn resolve(
        &self,
        root: &Path,
        access: Access,
        offset: u64,
        len: u64,
    ) -> Result<(PciDevice, Bar), BarError>;
}

impl Resolve for BarSpec {
    fn resolve(
        &self,
        root: &Path,
        access: Access,
        offset: u64,
        len: u64,
    ) -> Result<(PciDevice, Bar), BarError> {
        let dir = root.join("sys/bus/pci/devices").join(&self.address);
        if !dir.exists() {
            return Err(BarError::NoDevice(self.address.clone()));
        }
        let dev = read_device(&dir).ok_or_else(|| BarError::NoDevice(self.address.clone()))?;
        let bar = dev
            .bars
            .iter()
            .find(|b| b.index == self.index)
            .cloned()
            .ok_or_else(|| BarError::NoBar {
                address: self.address.clone(),
                index: self.index,
                present: dev
                    .bars
                    .iter()
                    .map(|b| b.index.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            })?;
        if !bar.memory {
            return Err(BarError::NotMemory {
                address: self.address.clone(),
                index: self.index,
            });
        }
        if offset
            .checked_add(len)
            .is_none_or(|end| end > bar.size_bytes)
        {
            return Err(BarError::OffsetPastBar {
                index: self.index,
                offset,
                len,
                size: bar.size_bytes,
            });
        }
        if let Some(driver) = &dev.driver {
            if !access.force {
                return Err(BarError::DriverBound {
                    address: self.address.clone(),
                    driver: driver.clone(),
                });
            }
        }
        Ok((dev, bar))
    }
}

/// A mapped window of a BAR.
pub struct MappedBar {
    map: MmapMut,
    skip: usize,
    len: usize,
}

impl MappedBar {
    /// Maps `[offset, offset+len)` of the BAR through `resourceN` (uncached) or
    /// `resourceN_wc` (write-combining). Read-write mappings need root.
    pub fn map(
        dev: &PciDevice,
        bar: &Bar,
        wc: bool,
        offset: u64,
        len: usize,
    ) -> Result<MappedBar, BarError> {
        if wc && !bar.wc_available {
            return Err(BarError::NoWc {
                address: dev.address.clone(),
                index: bar.index,
            });
        }
        let name = if wc {
            format!("resource{}_wc", bar.index)
        } else {
            format!("resource{}", bar.index)
        };
        let path = dev.sysfs.join(name);
        let map_err = |reason: String| BarError::Map {
            path: path.display().to_string(),
            reason,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_SYNC)
            .open(&path)
            .map_err(|e| map_err(format!("{e} (mapping a BAR needs root)")))?;
        let page = 4096u64;
        let start = offset / page * page;
        let skip = (offset - start) as usize;
        // SAFETY: the mapping is device memory; this process only accesses it through
        // volatile reads/writes in the benchmark, within [skip, skip+len).
        let map = unsafe {
            MmapOptions::new()
                .offset(start)
                .len(skip + len)
                .map_mut(&file)
        }
        .map_err(|e| map_err(e.to_string()))?;
        Ok(MappedBar { map, skip, len })
    }

    /// Start of the window.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: skip < the mapping's length by construction.
        unsafe { self.map.as_mut_ptr().add(self.skip) }
    }

    /// Length of the window.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::write_fake_pci;

    #[test]
    fn resolves_against_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let root = dir.path();
        let ro = Access {
            allow_write: false,
            force: false,
        };
        let (_, bar) = BarSpec {
            address: "0000:00:02.0".into(),
            index: 2,
        }
        .resolve(root, ro, 0, 4096)
        .unwrap();
        assert_eq!(bar.size_bytes, 64 << 20);
        let e = BarSpec {
            address: "0000:00:02.0".into(),
            index: 2,
        }
        .resolve(root, ro, 64 << 20, 8)
        .unwrap_err();
        assert!(matches!(e, BarError::OffsetPastBar { .. }), "{e}");
        let e = BarSpec {
            address: "0000:00:02.0".into(),
            index: 4,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "device 0000:00:02.0 has no BAR 4 (BARs: 0,2)"
        );
        let e = BarSpec {
            address: "0000:3b:00.0".into(),
            index: 0,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert!(matches!(e, BarError::NotMemory { .. }), "{e}");
        let e = BarSpec {
            address: "0000:3b:00.0".into(),
            index: 1,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert!(
            e.to_string().contains("mlx5_core") && e.to_string().contains("--force"),
            "{e}"
        );
        let forced = Access {
            allow_write: false,
            force: true,
        };
        assert!(BarSpec {
            address: "0000:3b:00.0".into(),
            index: 1
        }
        .resolve(root, forced, 0, 8)
        .is_ok());
        let e = BarSpec {
            address: "0000:99:00.0".into(),
            index: 0,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert!(matches!(e, BarError::NoDevice(_)));
    }
}
