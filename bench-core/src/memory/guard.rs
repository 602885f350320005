//! The write guard: the one place that decides whether cxlchar may map memory outside its
//! own anonymous allocations, and whether it may write there.
//!
//! Every mapping of a file, a device-dax or a PCI BAR passes here (memory targets through
//! [`super::TargetSpec::validate`], pool windows, `--uc-resource` and MMIO through
//! [`super::Region::map_window`]). The rules:
//!
//! * **consent**: writing needs `--allow-write` ([`Access::allow_write`]); without it a
//!   BAR is mapped read-only and a dax device, a BAR or a file (existing or not) is not
//!   created, grown or written. Only cxlchar's own scratch file
//!   ([`super::WindowSource::Scratch`], created exclusively: it must not exist) is written
//!   without consent;
//! * **contents**: a window cxlchar claims for itself (one with a [`super::Window::magic`],
//!   the pool) is read, read-only, before anything is created, resized or written, and
//!   taken only when it starts with that magic or every byte of it that exists is zero
//!   ([`check_claim`]), unless [`Access::force`];
//! * **where a file may be created**: never in `/dev` (but `/dev/shm`), `/sys`, `/proc` or
//!   on a kernel file system ([`check_creatable`]);
//! * **what a path is, not how it was spelled**: a dax target must be a character device
//!   listed under `/sys/bus/dax/devices` or `/sys/class/dax`; a BAR must be the sysfs
//!   `resourceN` (`resourceN_wc`) file of a PCI device; a sysfs resource file named as a
//!   plain file is a BAR and refused as a file; a plain file must be a regular file (not a
//!   device node such as `/dev/zero`);
//! * **drivers**: a BAR whose device has a kernel driver bound is refused unless
//!   [`Access::force`].
//!
//! sysfs is read below a configurable root (`/` on a real machine) so that the rules are
//! tested against a fake tree.

use crate::pci::{read_device, Bar, BarSpec, BarSpecError, PciDevice};
use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// What the user allowed a mapping to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// Writes allowed (`--allow-write`).
    pub allow_write: bool,
    /// Use a device even with a kernel driver bound (`--force`).
    pub force: bool,
}

/// Why a mapping is refused or failed, one variant per way. Each message says what to do.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum MapError {
    /// The BAR spec does not parse.
    #[error(transparent)]
    Parse(#[from] BarSpecError),
    /// No such PCI device.
    #[error("no PCI device {0} (see `cxlchar pcie list`)")]
    NoDevice(String),
    /// The device has no such BAR (or it is empty).
    #[error("device {address} has no BAR {index} (BARs: {present})")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NoBar {
        address: String,
        index: usize,
        present: String,
    },
    /// An I/O-port BAR cannot be mapped.
    #[error("BAR {index} of {address} is an I/O-port BAR, not a memory BAR")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NotMemory { address: String, index: usize },
    /// The offset (plus the window) is past the BAR's end.
    #[error("offset {offset} + {len} bytes is past the end of BAR {index} ({size} bytes)")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    OffsetPastBar {
        index: usize,
        offset: u64,
        len: u64,
        size: u64,
    },
    /// A kernel driver owns the device.
    #[error("device {address} is bound to driver '{driver}': measuring it could disturb the driver; unbind it or pass --force")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    DriverBound { address: String, driver: String },
    /// Writes need consent.
    #[error("writing to {0} needs --allow-write (device registers or shared memory would be overwritten)")]
    WriteNotAllowed(String),
    /// The device has no write-combining mapping of that BAR.
    #[error("BAR {index} of {address} has no resource{index}_wc (not prefetchable, or the kernel offers no WC mapping)")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NoWc { address: String, index: usize },
    /// A dax path that is not a device-dax.
    #[error("{path} is not a device-dax character device ({reason}): name a /dev/daxX.Y that `daxctl list` shows, or use file:PATH for a regular file")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NotDax {
        path: String,
        /// What it is instead.
        reason: String,
    },
    /// A BAR path that is not a PCI device's resource file.
    #[error("{0} is not the resourceN file of a PCI device (/sys/bus/pci/devices/DOMAIN:BUS:DEV.FN/resourceN): name the BAR as pci:DOMAIN:BUS:DEV.FN/N (see `cxlchar pcie list`)")]
    NotBar(String),
    /// A PCI BAR named as a plain file.
    #[error("{path} is a PCI BAR's sysfs resource file, not a plain file: name it as the BAR {bar} where a BAR is accepted (pool msg --pool, pcie --bar), which checks its device's driver")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    BarAsFile {
        path: String,
        /// The BAR (`pci:DOMAIN:BUS:DEV.FN/N`, or the device's sysfs directory).
        bar: String,
    },
    /// A plain file that is not a regular file.
    #[error("{path} is {what}, not a regular file: a file target or pool must be a regular file (e.g. in /dev/shm or on an fs-dax mount); use dax:/dev/daxX.Y for a device-dax")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NotRegularFile {
        path: String,
        /// What it is (`a character device`, ...).
        what: String,
    },
    /// A file or device shorter than the window.
    #[error("{path} holds {have} bytes, the window needs {need} (offset + length)")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    TooShort {
        path: String,
        /// Bytes it holds.
        have: u64,
        /// Bytes needed.
        need: u64,
    },
    /// A window cxlchar would claim holds someone else's data.
    #[error("{path} holds foreign data (byte {at} of the window is not zero and the window does not start with cxlchar's pool header): nothing was written; pass --force to overwrite it")]
    Foreign {
        /// The file or device.
        path: String,
        /// Offset of the first non-zero byte, from the window's start (negative: before
        /// the window, in a file that would have been grown).
        at: i64,
    },
    /// A file that would be created where only the kernel keeps files.
    #[error(
        "will not create {path}: {reason}; put a pool file in /dev/shm or on a regular file system"
    )]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NotCreatable {
        path: String,
        /// Why (the directory is on devtmpfs, sysfs, ...).
        reason: String,
    },
    /// The file system has no room for a file window (`memory::reserve`): refused
    /// before anything was mapped or written (else the first store into an unallocated
    /// page would get SIGBUS).
    #[error("no room for {path}: {reason}; nothing was mapped or written: free space on its file system, use a smaller window, or put the file on another file system")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NoSpace {
        path: String,
        /// What was asked, the OS error, and the free space.
        reason: String,
    },
    /// Opening, sizing or mapping failed.
    #[error("cannot map {path}: {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Map {
        path: String,
        /// The OS error, with advice.
        reason: String,
    },
}

/// Refuses a write without consent. `what` names the memory in the message.
pub fn require_write(what: &str, access: Access) -> Result<(), MapError> {
    if access.allow_write {
        Ok(())
    } else {
        Err(MapError::WriteNotAllowed(what.into()))
    }
}

/// What a file type is, in words (`a character device`).
fn kind_of(ft: fs::FileType) -> &'static str {
    if ft.is_file() {
        "a regular file"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// The BAR a path names when it IS the `resourceN` (`resourceN_wc`: `true`) file of a PCI
/// device below `root`: its directory is `root/sys/bus/pci/devices/<address>` or resolves
/// to the same directory (the real `/sys/devices/pci...` path, a symlink). `None` for
/// anything else.
pub fn bar_of_resource(path: &Path, root: &Path) -> Option<(BarSpec, bool)> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("resource")?;
    let (index, wc) = match rest.strip_suffix("_wc") {
        Some(i) => (i, true),
        None => (rest, false),
    };
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let dir = path.parent()?;
    let address = dir.file_name()?.to_str()?;
    let bar: BarSpec = format!("pci:{address}/{index}").parse().ok()?;
    let bus_entry = root.join("sys/bus/pci/devices").join(address);
    if dir == bus_entry {
        return Some((bar, wc));
    }
    let (a, b) = (
        fs::canonicalize(dir).ok()?,
        fs::canonicalize(&bus_entry).ok()?,
    );
    (a == b).then_some((bar, wc))
}

/// Whether a path is spelled as a PCI device's resource file (`root/sys/bus/pci/devices/
/// */resource*`), whatever it resolves to.
fn spelled_as_resource(path: &Path, root: &Path) -> bool {
    let under = path
        .parent()
        .and_then(Path::parent)
        .is_some_and(|p| p == root.join("sys/bus/pci/devices"));
    under
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("resource"))
}

/// The BAR behind a path, following symlinks (a link to a resource file is that BAR).
fn bar_behind(path: &Path, root: &Path) -> Option<(BarSpec, bool)> {
    bar_of_resource(path, root).or_else(|| {
        fs::canonicalize(path)
            .ok()
            .and_then(|c| bar_of_resource(&c, root))
    })
}

/// A plain file: refused when it is a PCI BAR (by what it is or how it is spelled) or
/// exists as anything but a regular file (a device node, a directory). A missing file
/// passes (the caller creates it or says it is missing).
pub fn check_file(path: &Path, root: &Path) -> Result<(), MapError> {
    let shown = path.display().to_string();
    if let Some((bar, _)) = bar_behind(path, root) {
        return Err(MapError::BarAsFile {
            path: shown,
            bar: bar.to_string(),
        });
    }
    if spelled_as_resource(path, root) {
        let dev = path.parent().map(|d| d.display().to_string());
        return Err(MapError::BarAsFile {
            path: shown,
            bar: dev.unwrap_or_default(),
        });
    }
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(MapError::NotRegularFile {
            path: shown,
            what: kind_of(m.file_type()).into(),
        }),
        Err(_) => Ok(()),
    }
}

/// A device-dax: a character device whose name sysfs lists as a dax device below `root`.
pub fn check_dax(path: &Path, root: &Path) -> Result<(), MapError> {
    let not = |reason: String| MapError::NotDax {
        path: path.display().to_string(),
        reason,
    };
    let m = fs::metadata(path).map_err(|e| not(format!("cannot stat it: {e}")))?;
    if !m.file_type().is_char_device() {
        return Err(not(format!("it is {}", kind_of(m.file_type()))));
    }
    let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let listed = ["sys/bus/dax/devices", "sys/class/dax"]
        .iter()
        .any(|d| !name.is_empty() && root.join(d).join(&name).exists());
    if !listed {
        return Err(not(format!(
            "no dax device '{name}' under /sys/bus/dax/devices or /sys/class/dax"
        )));
    }
    Ok(())
}

/// A BAR path (`/sys/bus/pci/devices/<bdf>/resourceN[_wc]`, or anything that resolves to
/// one) as the BAR it is; anything else is refused.
pub fn check_bar_path(path: &Path, root: &Path) -> Result<(BarSpec, bool), MapError> {
    bar_behind(path, root).ok_or_else(|| MapError::NotBar(path.display().to_string()))
}

impl BarSpec {
    /// Looks the BAR up below `root` and checks that a window `[offset, offset+len)` of it
    /// may be mapped with `access`: the device exists, no kernel driver is bound unless
    /// `access.force`, a memory BAR exists and the window fits.
    pub fn resolve(
        &self,
        root: &Path,
        access: Access,
        offset: u64,
        len: u64,
    ) -> Result<(PciDevice, Bar), MapError> {
        let dir = root.join("sys/bus/pci/devices").join(&self.address);
        if !dir.exists() {
            return Err(MapError::NoDevice(self.address.clone()));
        }
        let dev = read_device(&dir).ok_or_else(|| MapError::NoDevice(self.address.clone()))?;
        // The driver first: a device a driver owns is refused whatever else is asked.
        if let Some(driver) = &dev.driver {
            if !access.force {
                return Err(MapError::DriverBound {
                    address: self.address.clone(),
                    driver: driver.clone(),
                });
            }
        }
        let bar = dev
            .bars
            .iter()
            .find(|b| b.index == self.index)
            .cloned()
            .ok_or_else(|| MapError::NoBar {
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
            return Err(MapError::NotMemory {
                address: self.address.clone(),
                index: self.index,
            });
        }
        if offset
            .checked_add(len)
            .is_none_or(|end| end > bar.size_bytes)
        {
            return Err(MapError::OffsetPastBar {
                index: self.index,
                offset,
                len,
                size: bar.size_bytes,
            });
        }
        Ok((dev, bar))
    }
}

/// File systems where cxlchar never creates a file (the kernel's own, or device nodes).
const KERNEL_FS: &[&str] = &[
    "devtmpfs",
    "sysfs",
    "proc",
    "devpts",
    "debugfs",
    "tracefs",
    "securityfs",
    "cgroup",
    "cgroup2",
    "configfs",
    "efivarfs",
    "bpf",
    "pstore",
    "mqueue",
    "fusectl",
    "binfmt_misc",
];

/// The file system type of the mount holding `dir` (canonical), from `mountinfo`.
fn fs_type_of(dir: &Path, mountinfo: &str) -> Option<String> {
    let unescape = |s: &str| s.replace("\\040", " ").replace("\\011", "\t");
    mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mount = PathBuf::from(unescape(left.split(' ').nth(4)?));
            let fstype = right.split(' ').next()?.to_string();
            dir.starts_with(&mount).then_some((mount, fstype))
        })
        .max_by_key(|(m, _)| m.components().count())
        .map(|(_, t)| t)
}

/// Whether a missing pool file may be created at `path`: its directory exists and is not
/// `/dev` (or below it, except `/dev/shm`), `/sys` or `/proc` below `root`, nor on a
/// kernel file system (devtmpfs, sysfs, proc, ...) per `root/proc/self/mountinfo`.
pub fn check_creatable(path: &Path, root: &Path) -> Result<(), MapError> {
    let refuse = |reason: String| MapError::NotCreatable {
        path: path.display().to_string(),
        reason,
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = fs::canonicalize(parent).map_err(|e| {
        refuse(format!(
            "its directory {} is not usable ({e})",
            parent.display()
        ))
    })?;
    let under = |rel: &str| {
        let d = root.join(rel);
        let d = fs::canonicalize(&d).unwrap_or(d);
        dir.starts_with(d)
    };
    if (under("dev") && !under("dev/shm")) || under("sys") || under("proc") {
        return Err(refuse(format!(
            "{} holds device nodes or kernel files",
            dir.display()
        )));
    }
    if let Some(info) = crate::sysfs::read_table(&root.join("proc/self/mountinfo")) {
        if let Some(t) = fs_type_of(&dir, &info) {
            if KERNEL_FS.contains(&t.as_str()) {
                return Err(refuse(format!("{} is on a {t} file system", dir.display())));
            }
        }
    }
    Ok(())
}

/// The claim check, read-only, before anything is created, resized or written: a window
/// cxlchar is about to take over is accepted only when it starts with `magic` (cxlchar's
/// own header) or when every byte of it that exists is zero. `have` is the size of the
/// file (`u64::MAX` for a device); when the file is shorter than the window (it would be
/// grown), every byte it holds counts, also those before the window. The whole window is
/// read (word by word, volatile), not a sample: a file system image or a database may
/// start with zeros.
pub fn check_claim(
    f: &fs::File,
    path: &Path,
    offset: u64,
    len: u64,
    have: u64,
    magic: [u8; 8],
) -> Result<(), MapError> {
    let end = offset.saturating_add(len);
    let (from, to) = if have < end { (0, have) } else { (offset, end) };
    if to <= from {
        return Ok(());
    }
    let page = super::page_size() as u64;
    let start = from / page * page;
    let span = usize::try_from(to - start).map_err(|_| MapError::Map {
        path: path.display().to_string(),
        reason: "window too large to check".into(),
    })?;
    let mut o = memmap2::MmapOptions::new();
    o.offset(start).len(span);
    // SAFETY: a read-only shared mapping of bytes that exist (`to` <= the file's size or
    // the device's window); it is only read, through volatile loads, and dropped here.
    let map = unsafe { o.map(f) }.map_err(|e| MapError::Map {
        path: path.display().to_string(),
        reason: format!("mapping it read-only to check its contents: {e}"),
    })?;
    let base = map.as_ptr();
    let read = |at: u64| -> u8 {
        // SAFETY: `at - start` < span, inside the mapping.
        unsafe { std::ptr::read_volatile(base.add((at - start) as usize)) }
    };
    if offset >= start && offset + 8 <= to && (0..8).all(|i| read(offset + i) == magic[i as usize])
    {
        return Ok(());
    }
    let mut at = from;
    while at < to {
        if at.is_multiple_of(8) && at + 8 <= to {
            // SAFETY: 8-aligned (the mapping is page aligned) and inside it.
            let w =
                unsafe { std::ptr::read_volatile(base.add((at - start) as usize) as *const u64) };
            if w != 0 {
                at += (0..8).find(|&i| read(at + i) != 0).unwrap_or(0);
                return Err(MapError::Foreign {
                    path: path.display().to_string(),
                    at: at as i64 - offset as i64,
                });
            }
            at += 8;
        } else {
            if read(at) != 0 {
                return Err(MapError::Foreign {
                    path: path.display().to_string(),
                    at: at as i64 - offset as i64,
                });
            }
            at += 1;
        }
    }
    Ok(())
}

/// The sysfs root a user-given path is read against (`/`).
pub fn system_root() -> PathBuf {
    PathBuf::from("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Region, TargetSpec, Window, WindowSource};
    use crate::pci::write_fake_pci;

    fn window(source: WindowSource, write: bool) -> Window {
        Window {
            source,
            offset: 0,
            len: 4096,
            write,
            magic: None,
        }
    }

    const RW: Access = Access {
        allow_write: true,
        force: false,
    };

    #[test]
    fn a_regular_file_is_not_a_bar() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let f = dir.path().join("resource2");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        let e = check_bar_path(&f, dir.path()).unwrap_err();
        assert!(matches!(e, MapError::NotBar(_)), "{e}");
        assert!(e.to_string().contains("pci:DOMAIN:BUS:DEV.FN/N"), "{e}");
        // A device's resource file is the BAR it is, uncached or write-combining.
        let res = dir
            .path()
            .join("sys/bus/pci/devices/0000:00:02.0/resource2_wc");
        let (bar, wc) = check_bar_path(&res, dir.path()).unwrap();
        assert_eq!((bar.to_string().as_str(), wc), ("pci:0000:00:02.0/2", true));
    }

    #[test]
    fn a_bar_is_recognized_by_what_it_is_not_how_it_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // As on a real machine: the device lives under /sys/devices, the bus lists a link.
        let real = root.join("sys/devices/pci0000:00/0000:00:05.0");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("resource0"), "").unwrap();
        std::fs::create_dir_all(root.join("sys/bus/pci/devices")).unwrap();
        std::os::unix::fs::symlink(&real, root.join("sys/bus/pci/devices/0000:00:05.0")).unwrap();
        let (bar, wc) = check_bar_path(&real.join("resource0"), root).unwrap();
        assert_eq!(
            (bar.to_string().as_str(), wc),
            ("pci:0000:00:05.0/0", false)
        );
        // A link elsewhere to the resource file is that BAR too, refused as a file.
        let link = root.join("innocent");
        std::os::unix::fs::symlink(real.join("resource0"), &link).unwrap();
        let e = check_file(&link, root).unwrap_err();
        assert!(
            matches!(&e, MapError::BarAsFile { bar, .. } if bar == "pci:0000:00:05.0/0"),
            "{e}"
        );
    }

    #[test]
    fn a_bar_named_as_a_file_is_refused_as_a_file() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let res = dir
            .path()
            .join("sys/bus/pci/devices/0000:00:02.0/resource2");
        let w = window(
            WindowSource::File {
                path: res.clone(),
                create: true,
            },
            true,
        );
        let e = Region::map_window(&w, RW, dir.path()).unwrap_err();
        assert!(
            matches!(&e, MapError::BarAsFile { bar, .. } if bar == "pci:0000:00:02.0/2"),
            "{e}"
        );
        assert!(e.to_string().contains("not a plain file"), "{e}");
        // Spelled as a device's resource file, even where no such device exists.
        let ghost = dir
            .path()
            .join("sys/bus/pci/devices/0000:77:00.0/resource1");
        assert!(matches!(
            check_file(&ghost, dir.path()),
            Err(MapError::BarAsFile { .. })
        ));
    }

    #[test]
    fn a_driver_bound_bar_is_refused_without_force() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let nic = WindowSource::Bar {
            bar: "pci:0000:3b:00.0/1".parse().unwrap(),
            wc: false,
        };
        for write in [false, true] {
            let e = Region::map_window(&window(nic.clone(), write), RW, dir.path()).unwrap_err();
            assert!(
                matches!(&e, MapError::DriverBound { driver, .. } if driver == "mlx5_core"),
                "{e}"
            );
            assert!(e.to_string().contains("--force"), "{e}");
        }
        let forced = Access {
            allow_write: true,
            force: true,
        };
        let bar: BarSpec = "pci:0000:3b:00.0/1".parse().unwrap();
        assert!(bar.resolve(dir.path(), forced, 0, 4096).is_ok());
        // No write-combining mapping where the kernel offers none.
        let w = window(
            WindowSource::Bar {
                bar: "pci:0000:00:02.0/0".parse().unwrap(),
                wc: true,
            },
            false,
        );
        let e = Region::map_window(&Window { len: 64, ..w }, RW, dir.path()).unwrap_err();
        assert!(matches!(e, MapError::NoWc { .. }), "{e}");
    }

    #[test]
    fn a_dax_path_must_be_a_listed_dax_character_device() {
        let dir = tempfile::tempdir().unwrap();
        crate::topology::write_fake_sysfs(dir.path()).unwrap();
        let f = dir.path().join("dax0.0");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        let e = check_dax(&f, dir.path()).unwrap_err();
        assert!(
            matches!(&e, MapError::NotDax { reason, .. } if reason.contains("a regular file")),
            "{e}"
        );
        assert!(e.to_string().contains("daxctl list"), "{e}");
        // A character device that sysfs does not list as dax.
        let e = check_dax(Path::new("/dev/null"), dir.path()).unwrap_err();
        assert!(
            matches!(&e, MapError::NotDax { reason, .. } if reason.contains("'null'")),
            "{e}"
        );
        let e =
            Region::map_window(&window(WindowSource::Dax(f), true), RW, dir.path()).unwrap_err();
        assert!(matches!(e, MapError::NotDax { .. }), "{e}");
        // As a target: refused when validated, before anything is mapped.
        let reg = dir.path().join("plain");
        std::fs::write(&reg, "").unwrap();
        let topo = crate::topology::Topology::read(dir.path());
        let e = TargetSpec::Dax(reg)
            .validate(&topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a device-dax character device"), "{e}");
    }

    #[test]
    fn a_device_node_is_not_a_pool_file() {
        let dir = tempfile::tempdir().unwrap();
        for dev in ["/dev/zero", "/dev/null"] {
            let w = window(
                WindowSource::File {
                    path: dev.into(),
                    create: true,
                },
                true,
            );
            let e = Region::map_window(&w, RW, dir.path()).unwrap_err();
            assert!(
                matches!(&e, MapError::NotRegularFile { what, .. } if what == "a character device"),
                "{dev}: {e}"
            );
        }
        let topo = crate::topology::Topology::read(dir.path());
        let e = TargetSpec::File("/dev/zero".into())
            .validate(&topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero"), "{e}");
    }

    #[test]
    fn writing_needs_allow_write() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let f = dir.path().join("data");
        std::fs::write(&f, [7u8; 8192]).unwrap();
        let sources = [
            WindowSource::Dax("/dev/dax0.0".into()),
            WindowSource::Bar {
                bar: "pci:0000:00:02.0/2".parse().unwrap(),
                wc: false,
            },
            WindowSource::File {
                path: f.clone(),
                create: false,
            },
        ];
        for s in sources {
            let e = Region::map_window(&window(s.clone(), true), Access::default(), dir.path())
                .unwrap_err();
            assert!(matches!(e, MapError::WriteNotAllowed(_)), "{s}: {e}");
            assert!(e.to_string().contains("--allow-write"), "{e}");
        }
        // Without write intent an existing file is mapped read-only, and reads work.
        let ro = window(
            WindowSource::File {
                path: f.clone(),
                create: false,
            },
            false,
        );
        let r = Region::map_window(&ro, Access::default(), dir.path()).unwrap();
        assert!(!r.is_writable());
        // SAFETY: the region maps 4096 readable bytes.
        assert_eq!(unsafe { *r.as_ptr().add(100) }, 7);
        // A target that would be overwritten needs consent too.
        let e = TargetSpec::File(f)
            .check_write(Access::default())
            .unwrap_err();
        assert!(e.to_string().contains("--allow-write"), "{e}");
        assert!(TargetSpec::Anon.check_write(Access::default()).is_ok());
    }

    const MAGIC: [u8; 8] = *b"CXLCPOOL";

    fn pool_window(source: WindowSource, offset: u64, len: usize) -> Window {
        Window {
            source,
            offset,
            len,
            write: true,
            magic: Some(MAGIC),
        }
    }

    fn user_file(path: &Path) -> WindowSource {
        WindowSource::File {
            path: path.into(),
            create: true,
        }
    }

    #[test]
    fn cxlchar_s_own_scratch_file_is_created_grown_and_written_without_consent() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pool");
        let w = pool_window(WindowSource::Scratch(f.clone()), 4096, 8192);
        let mut r = Region::map_window(&w, Access::default(), dir.path()).unwrap();
        assert_eq!(r.len(), 8192);
        r.as_mut_slice()[0] = 0xee;
        drop(r);
        let bytes = std::fs::read(&f).unwrap();
        assert_eq!(bytes.len(), 4096 + 8192);
        assert_eq!((bytes[4095], bytes[4096]), (0, 0xee));
        // Only a fresh one: an existing file is never taken as scratch.
        let e = Region::map_window(&w, Access::default(), dir.path()).unwrap_err();
        assert!(e.to_string().contains("must not exist"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), bytes);
    }

    #[test]
    fn a_user_s_pool_file_is_neither_created_nor_grown_without_consent() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        for f in [&missing, &empty] {
            let w = pool_window(user_file(f), 0, 8192);
            let e = Region::map_window(&w, Access::default(), dir.path()).unwrap_err();
            assert!(matches!(e, MapError::WriteNotAllowed(_)), "{e}");
        }
        assert!(!missing.exists());
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
        // With consent both become a pool.
        for f in [&missing, &empty] {
            Region::map_window(&pool_window(user_file(f), 0, 8192), RW, dir.path()).unwrap();
            assert_eq!(std::fs::metadata(f).unwrap().len(), 8192);
        }
    }

    #[test]
    fn foreign_data_anywhere_in_the_window_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        // Zero at the start (as a file system image's boot block), data further in.
        let mut image = vec![0u8; 64 << 10];
        image[1024 + 56] = 0x53;
        image[40_000] = 1;
        let tiny = b"abc".to_vec();
        let mut before = vec![0u8; 4096];
        before[17] = 9;
        for (name, bytes, offset, at) in [
            ("image", &image, 0u64, 1080i64),
            ("tiny", &tiny, 0, 0),
            ("before-the-window", &before, 4096, -4079),
        ] {
            let f = dir.path().join(name);
            std::fs::write(&f, bytes).unwrap();
            let w = pool_window(user_file(&f), offset, 128 << 10);
            let e = Region::map_window(&w, RW, dir.path()).unwrap_err();
            assert!(
                matches!(&e, MapError::Foreign { at: a, .. } if *a == at),
                "{name}: {e}"
            );
            assert!(e.to_string().contains("--force"), "{e}");
            assert_eq!(&std::fs::read(&f).unwrap(), bytes, "{name} was modified");
        }
        // --force overrides; all zero or cxlchar's header is ours.
        let f = dir.path().join("image");
        let forced = Access {
            allow_write: true,
            force: true,
        };
        Region::map_window(&pool_window(user_file(&f), 0, 64 << 10), forced, dir.path()).unwrap();
        let mut ours = vec![0x77u8; 64 << 10];
        ours[..8].copy_from_slice(&MAGIC);
        let zeros = vec![0u8; 3];
        for (name, bytes) in [("ours", &ours), ("zeros", &zeros)] {
            let f = dir.path().join(name);
            std::fs::write(&f, bytes).unwrap();
            let w = pool_window(user_file(&f), 0, 64 << 10);
            Region::map_window(&w, RW, dir.path()).unwrap();
        }
        // A target window (no magic) is the user's to overwrite with consent.
        let f = dir.path().join("tiny");
        let w = Window {
            source: WindowSource::File {
                path: f.clone(),
                create: false,
            },
            offset: 0,
            len: 3,
            write: true,
            magic: None,
        };
        Region::map_window(&w, RW, dir.path()).unwrap();
    }

    #[test]
    fn no_pool_file_is_created_where_the_kernel_keeps_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["dev/shm", "dev/block", "sys/kernel", "proc"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for p in ["dev/cxlpool", "dev/block/x", "sys/kernel/x", "proc/x"] {
            let f = root.join(p);
            let e = Region::map_window(&pool_window(user_file(&f), 0, 8192), RW, root).unwrap_err();
            assert!(matches!(e, MapError::NotCreatable { .. }), "{p}: {e}");
            assert!(e.to_string().contains("/dev/shm"), "{e}");
            assert!(!f.exists(), "{p} was created");
        }
        assert!(check_creatable(&root.join("dev/shm/pool"), root).is_ok());
        // By file system type, wherever it is mounted.
        let info =
            "22 1 0:5 / /srv/devices rw - devtmpfs udev rw\n21 1 0:6 / / rw - ext4 /dev/sda1 rw\n";
        assert_eq!(
            fs_type_of(Path::new("/srv/devices/x"), info).as_deref(),
            Some("devtmpfs")
        );
        assert_eq!(fs_type_of(Path::new("/srv"), info).as_deref(), Some("ext4"));
    }
}
