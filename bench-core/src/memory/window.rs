//! Windows of shared memory: `[offset, offset+len)` of a regular file, a device-dax or a
//! PCI BAR, mapped as a [`Region`] after the [`guard`](super::guard) has let them through.
//!
//! A window is neither pre-faulted nor written when mapped (a pool's header must be read
//! before anything is written; a BAR is only read without `--allow-write`), and without
//! write intent it is mapped read-only. A window that names a [`Window::magic`] is read
//! (read-only) by the guard before anything is created, resized or mapped writable: see
//! [`guard::check_claim`](super::guard::check_claim).

use super::guard::{
    check_claim, check_creatable, check_dax, check_file, require_write, Access, MapError,
};
use super::reserve::reserve;
use super::{page_size, Mapping, Origin, Placement, Region, TargetSpec};
use crate::pci::BarSpec;
use memmap2::MmapOptions;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// What a window is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowSource {
    /// A user's regular file mapped shared: writing needs `--allow-write`. With
    /// `create` (a pool file) a missing file is created (never on a device or kernel file
    /// system, see [`guard::check_creatable`](super::guard::check_creatable)) and a short
    /// one grown to the window's end, both only with write intent and consent.
    // Fields named for what they hold.
    #[allow(missing_docs)]
    File {
        path: PathBuf,
        /// Create or grow it as needed.
        create: bool,
    },
    /// cxlchar's own scratch file (the default pool): created here, exclusively (it must
    /// not exist), grown to the window's end and written without `--allow-write`.
    Scratch(PathBuf),
    /// A device-dax character device.
    Dax(PathBuf),
    /// A PCI BAR through sysfs: `resourceN` (uncached) or `resourceN_wc` (`wc`).
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Bar {
        bar: BarSpec,
        /// Write-combining (`resourceN_wc`) instead of uncached.
        wc: bool,
    },
}

impl WindowSource {
    /// What a region of this source maps: a `file:` or `dax:` target's memory, or a BAR.
    pub fn origin(&self) -> Origin {
        match self {
            WindowSource::File { path, .. } | WindowSource::Scratch(path) => {
                Origin::Target(TargetSpec::File(path.clone()))
            }
            WindowSource::Dax(p) => Origin::Target(TargetSpec::Dax(p.clone())),
            WindowSource::Bar { bar, .. } => Origin::Bar(bar.clone()),
        }
    }

    /// Whether writing into it needs `--allow-write` (all but cxlchar's own scratch file).
    pub fn needs_write_consent(&self) -> bool {
        !matches!(self, WindowSource::Scratch(_))
    }
}

impl fmt::Display for WindowSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowSource::Bar { bar, wc: true } => write!(f, "{bar} (resource{}_wc)", bar.index),
            other => write!(f, "{}", other.origin()),
        }
    }
}

/// A window to map.
#[derive(Debug, Clone, PartialEq, Eq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Window {
    pub source: WindowSource,
    /// Byte offset of the window in the file, device or BAR.
    pub offset: u64,
    /// Length in bytes.
    pub len: usize,
    /// The caller will write into it (needs consent, see [`WindowSource`]); without it
    /// the window is mapped read-only.
    pub write: bool,
    /// The header a window cxlchar owns starts with (the pool's `CXLCPOOL`, as its 8
    /// little-endian bytes): with write intent, the window is written only if what exists
    /// of it is all zero or starts with these bytes, unless [`Access::force`]
    /// ([`check_claim`]). `None`: the user handed the whole window over (a target, a BAR
    /// being measured).
    pub magic: Option<[u8; 8]>,
}

/// A window's file opened (and, with write intent, reserved and sized), the path it was
/// opened at and the placement a region of it reports.
type Opened = (File, PathBuf, Placement);

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
        let (file, path, placement) = match &w.source {
            WindowSource::File { path, create } => open_file(w, path, *create, access, root)?,
            WindowSource::Scratch(path) => open_scratch(w, path)?,
            WindowSource::Dax(path) => open_dax(w, path, access, root)?,
            WindowSource::Bar { bar, wc } => open_bar(w, bar, *wc, access, root)?,
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
            origin: w.source.origin(),
            map,
            offset: skip,
            len: w.len,
            placement,
        })
    }
}

/// The window's end in the file, device or BAR (`None` past `u64::MAX`).
fn window_end(w: &Window) -> Option<u64> {
    w.offset.checked_add(w.len as u64)
}

/// A user's file: checked, created (exclusively) or grown only with write intent and
/// `create`, its claim read before anything is resized, its blocks reserved.
fn open_file(
    w: &Window,
    path: &Path,
    create: bool,
    access: Access,
    root: &Path,
) -> Result<Opened, MapError> {
    check_file(path, root)?;
    let grow = create && w.write;
    let exists = path.symlink_metadata().is_ok();
    if !exists && grow {
        check_creatable(path, root)?;
    }
    // Created exclusively; if the other side of a pool created it meanwhile,
    // it is opened as the existing file it is (and its contents checked).
    let (f, created) = match open(path, w.write, grow && !exists, false) {
        Err(_) if grow && !exists && path.symlink_metadata().is_ok() => {
            check_file(path, root)?;
            (open(path, w.write, false, false)?, false)
        }
        r => (r?, grow && !exists),
    };
    let have = size_of(&f, path)?;
    let need = window_end(w).unwrap_or(u64::MAX);
    if let (true, Some(magic)) = (w.write && !access.force, w.magic) {
        // Read-only, before anything is resized or written.
        check_claim(&f, path, w.offset, w.len as u64, have, magic)?;
    }
    if have < need && !grow {
        return Err(MapError::TooShort {
            path: path.display().to_string(),
            have,
            need,
        });
    }
    if w.write {
        // A file this call created is removed when it cannot be backed.
        reserve_and_size(&f, path, w.offset, w.len as u64, need).inspect_err(|_| {
            if created {
                let _ = std::fs::remove_file(path);
            }
        })?;
    }
    Ok((f, path.to_path_buf(), file_placement(path)))
}

/// cxlchar's own scratch file: created here (it must not exist), reserved and sized,
/// removed again when it cannot be backed.
fn open_scratch(w: &Window, path: &Path) -> Result<Opened, MapError> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| map_err(path, format!("creating it (it must not exist): {e}")))?;
    reserve_and_size(
        &f,
        path,
        w.offset,
        w.len as u64,
        window_end(w).unwrap_or(u64::MAX),
    )
    .inspect_err(|_| {
        let _ = std::fs::remove_file(path);
    })?;
    Ok((f, path.to_path_buf(), file_placement(path)))
}

/// A device-dax: checked to be one, its claim read before it is written.
fn open_dax(w: &Window, path: &Path, access: Access, root: &Path) -> Result<Opened, MapError> {
    check_dax(path, root)?;
    let f = open(path, w.write, false, false)?;
    if let (true, Some(magic)) = (w.write && !access.force, w.magic) {
        check_claim(&f, path, w.offset, w.len as u64, u64::MAX, magic)?;
    }
    let p = Placement {
        method: format!("window of device-dax {}", path.display()),
        backing: dax_window_backing(root, path, w.len as u64),
        ..unverified()
    };
    Ok((f, path.to_path_buf(), p))
}

/// A PCI BAR through sysfs (`resourceN`, or `resourceN_wc` where the BAR has one), after
/// the guard's driver and bounds checks ([`BarSpec::resolve`]), opened `O_SYNC`.
fn open_bar(
    w: &Window,
    bar: &BarSpec,
    wc: bool,
    access: Access,
    root: &Path,
) -> Result<Opened, MapError> {
    let (dev, b) = bar.resolve(root, access, w.offset, w.len as u64)?;
    if wc && !b.wc_available {
        return Err(MapError::NoWc {
            address: dev.address,
            index: b.index,
        });
    }
    let name = if wc {
        format!("resource{}_wc", b.index)
    } else {
        format!("resource{}", b.index)
    };
    let path = dev.sysfs.join(name);
    let f = open(&path, w.write, false, true)?;
    if let (true, Some(magic)) = (w.write && !access.force, w.magic) {
        check_claim(&f, &path, w.offset, w.len as u64, b.size_bytes, magic)?;
    }
    let p = Placement {
        method: format!(
            "PCI BAR {bar} through {} ({})",
            path.display(),
            if wc { "write-combining" } else { "uncached" }
        ),
        ..unverified()
    };
    Ok((f, path, p))
}

/// Reserves the window's blocks ([`reserve`]: a full file system is an error here, not a
/// SIGBUS on the first store), then grows the file to `need` bytes (the window's end)
/// when it is still shorter (a file system that cannot reserve does not grow it); a file
/// already longer, grown meanwhile by the other side of a pool, is never shrunk.
fn reserve_and_size(
    f: &File,
    path: &Path,
    offset: u64,
    len: u64,
    need: u64,
) -> Result<(), MapError> {
    reserve(f, path, offset, len)?;
    if size_of(f, path)? < need {
        f.set_len(need)
            .map_err(|e| map_err(path, format!("resizing: {e}")))?;
    }
    Ok(())
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
    o.read(true).write(write).truncate(false);
    if create {
        // Never into something that appeared meanwhile.
        o.create_new(true);
    }
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

/// What backs the `len`-byte window of the device-dax `path` (its CXL region and memory
/// devices, an NVDIMM, or not CXL), from sysfs below `root`; nothing when sysfs does not
/// list it.
fn dax_window_backing(root: &Path, path: &Path, len: u64) -> Vec<crate::cxl::BackingShare> {
    let Some(name) = path.file_name() else {
        return Vec::new();
    };
    let dir = root.join("sys/bus/dax/devices").join(name);
    let Ok(real) = std::fs::canonicalize(&dir) else {
        return Vec::new();
    };
    let bus = crate::cxl::CxlBus::read(root);
    vec![crate::cxl::BackingShare {
        backing: crate::cxl::dax_backing(&bus, &real),
        bytes: len,
    }]
}

fn unverified() -> Placement {
    Placement::unverified(page_size())
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
