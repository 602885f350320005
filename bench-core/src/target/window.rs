//! Windows of shared memory: `[offset, offset+len)` of a regular file, a device-dax or a
//! PCI BAR, mapped as a [`Region`] after the [`guard`](super::guard) has let them through.
//!
//! A window is neither pre-faulted nor written when mapped (a pool's header must be read
//! before anything is written; a BAR is only read without `--allow-write`), and without
//! write intent it is mapped read-only.

use super::guard::{check_dax, check_file, require_write, Access, MapError};
use super::{page_size, Mapping, Placement, Region, TargetSpec, Verification};
use crate::pci::BarSpec;
use memmap2::MmapOptions;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// What a window is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowSource {
    /// A regular file mapped shared. With `create` it is a pool file: created when
    /// missing and grown to the window's end, and needs no `--allow-write` (cxlchar's own
    /// scratch file, whose contents the pool header guards).
    File {
        /// The file.
        path: PathBuf,
        /// Create or grow it as needed.
        create: bool,
    },
    /// A device-dax character device.
    Dax(PathBuf),
    /// A PCI BAR through sysfs: `resourceN` (uncached) or `resourceN_wc` (`wc`).
    Bar {
        /// The BAR.
        bar: BarSpec,
        /// Write-combining (`resourceN_wc`) instead of uncached.
        wc: bool,
    },
}

impl WindowSource {
    /// The target a region of this source reports as its spec.
    pub fn target(&self) -> TargetSpec {
        match self {
            WindowSource::File { path, .. } => TargetSpec::File(path.clone()),
            WindowSource::Dax(p) => TargetSpec::Dax(p.clone()),
            WindowSource::Bar { bar, .. } => TargetSpec::Bar(bar.clone()),
        }
    }

    /// Whether writing into it needs `--allow-write` (all but a pool file).
    pub fn needs_write_consent(&self) -> bool {
        !matches!(self, WindowSource::File { create: true, .. })
    }
}

impl fmt::Display for WindowSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowSource::Bar { bar, wc: true } => write!(f, "{bar} (resource{}_wc)", bar.index),
            other => write!(f, "{}", other.target()),
        }
    }
}

/// A window to map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// What it is of.
    pub source: WindowSource,
    /// Byte offset of the window in the file, device or BAR.
    pub offset: u64,
    /// Length in bytes.
    pub len: usize,
    /// The caller will write into it (needs consent, see [`WindowSource`]); without it
    /// the window is mapped read-only.
    pub write: bool,
}

impl Region {
    /// Maps a window after the guard's checks (below `root`, `/` on a real machine):
    /// consent to write first, then what the path is, then (for a BAR) its device's
    /// driver and the window's bounds.
    pub fn map_window(w: &Window, access: Access, root: &Path) -> Result<Region, MapError> {
        if w.write && w.source.needs_write_consent() {
            require_write(&w.source.to_string(), access)?;
        }
        if w.len == 0 {
            return Err(MapError::Map {
                path: w.source.to_string(),
                reason: "zero-length window".into(),
            });
        }
        let end = w.offset.checked_add(w.len as u64);
        let (file, path, placement) = match &w.source {
            WindowSource::File { path, create } => {
                check_file(path, root)?;
                let f = open(path, w.write, *create && w.write, false)?;
                let have = size_of(&f, path)?;
                let need = end.unwrap_or(u64::MAX);
                if have < need {
                    if *create && w.write {
                        f.set_len(need)
                            .map_err(|e| map_err(path, format!("resizing: {e}")))?;
                    } else {
                        return Err(MapError::TooShort {
                            path: path.display().to_string(),
                            have,
                            need,
                        });
                    }
                }
                (f, path.clone(), file_placement(path))
            }
            WindowSource::Dax(path) => {
                check_dax(path, root)?;
                let f = open(path, w.write, false, false)?;
                let p = Placement {
                    method: format!("window of device-dax {}", path.display()),
                    ..unverified()
                };
                (f, path.clone(), p)
            }
            WindowSource::Bar { bar, wc } => {
                let (dev, b) = bar.resolve(root, access, w.offset, w.len as u64)?;
                if *wc && !b.wc_available {
                    return Err(MapError::NoWc {
                        address: dev.address,
                        index: b.index,
                    });
                }
                let name = if *wc {
                    format!("resource{}_wc", b.index)
                } else {
                    format!("resource{}", b.index)
                };
                let path = dev.sysfs.join(name);
                let f = open(&path, w.write, false, true)?;
                let p = Placement {
                    method: format!(
                        "PCI BAR {bar} through {} ({})",
                        path.display(),
                        if *wc { "write-combining" } else { "uncached" }
                    ),
                    ..unverified()
                };
                (f, path, p)
            }
        };
        let page = page_size() as u64;
        let start = w.offset / page * page;
        let skip = (w.offset - start) as usize;
        let mut o = MmapOptions::new();
        o.offset(start).len(skip + w.len);
        let map = if w.write {
            // SAFETY: a shared mapping of a file, device or BAR the guard let through for
            // writing. Other processes (or devices) may write it concurrently: that is
            // the point of a pool, and every access goes through raw pointers, atomics or
            // volatile operations, never through Rust references held across them.
            unsafe { o.map_mut(&file) }.map(Mapping::Rw)
        } else {
            // SAFETY: as above, read-only.
            unsafe { o.map(&file) }.map(Mapping::Ro)
        }
        .map_err(|e| map_err(&path, e.to_string()))?;
        Ok(Region {
            spec: w.source.target(),
            map,
            offset: skip,
            len: w.len,
            placement,
        })
    }
}

fn map_err(path: &Path, reason: String) -> MapError {
    MapError::Map {
        path: path.display().to_string(),
        reason,
    }
}

/// Opens for reading (and writing), creating when asked; `sync` adds `O_SYNC` (BARs).
fn open(path: &Path, write: bool, create: bool, sync: bool) -> Result<File, MapError> {
    let mut o = OpenOptions::new();
    o.read(true).write(write).create(create).truncate(false);
    if sync {
        o.custom_flags(libc::O_SYNC);
    }
    o.open(path).map_err(|e| {
        let advice = if sync && e.kind() == std::io::ErrorKind::PermissionDenied {
            " (mapping a BAR needs root)"
        } else {
            ""
        };
        map_err(
            path,
            format!(
                "opening {}: {e}{advice}",
                if write { "read-write" } else { "read-only" }
            ),
        )
    })
}

fn size_of(f: &File, path: &Path) -> Result<u64, MapError> {
    f.metadata()
        .map(|m| m.len())
        .map_err(|e| map_err(path, format!("reading its size: {e}")))
}

fn unverified() -> Placement {
    Placement {
        verification: Verification::Unverified,
        method: String::new(),
        page_size_bytes: page_size(),
        pages_checked: 0,
        pages_per_node: BTreeMap::new(),
        thp_fraction: None,
        warning: None,
    }
}

fn file_placement(path: &Path) -> Placement {
    Placement {
        method: "file mapping; the kernel does not report its medium".into(),
        warning: Some(format!(
            "placement of {} cannot be verified (page cache or fs-dax): treat its latency as unproven",
            path.display()
        )),
        ..unverified()
    }
}
