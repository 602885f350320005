//! Reserving the blocks of a file window before it is mapped for writing.
//!
//! A shared mapping of a sparse file takes its blocks from the file system when a page is
//! first written; on a full file system (or over a quota) that store gets SIGBUS, and the
//! process dies mid-run. So every file window cxlchar writes (a `file:` target, a pool
//! file, cxlchar's own scratch pool) is reserved first with `fallocate(2)` (mode 0: holes
//! get blocks, data and the contents of the window are left as they are), and a file
//! system without room is an error naming the file, before any memory is touched.
//!
//! A file system that cannot reserve (`EOPNOTSUPP`: some network and FUSE file systems)
//! is not written to make up for it (a pool's peer may be using the file): its free space
//! must cover what of the file is not allocated yet (its size less its blocks, at most the
//! window), else the window is refused the same way. That check is a snapshot; such a
//! file system can still fill up under the run.

use super::guard::MapError;
use crate::units::human_bytes;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// How blocks are reserved: `fallocate(2)`, or a stand-in in tests.
type Alloc = fn(&File, u64, u64) -> io::Result<()>;

/// Reserves the blocks of `[offset, offset + len)` of `f` (opened for writing), growing
/// the file when the window ends past it. A file system without room is
/// [`MapError::NoSpace`].
pub(super) fn reserve(f: &File, path: &Path, offset: u64, len: u64) -> Result<(), MapError> {
    reserve_with(f, path, offset, len, fallocate)
}

/// `fallocate(fd, 0, offset, len)`, retried when a signal interrupts it.
fn fallocate(f: &File, offset: u64, len: u64) -> io::Result<()> {
    let (Ok(off), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    };
    loop {
        // SAFETY: fallocate reads only its integer arguments; the descriptor is open for
        // as long as `f` is borrowed.
        if unsafe { libc::fallocate(f.as_raw_fd(), 0, off, n) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Bytes of the file system of `f` free to an unprivileged user (`fstatvfs(2)`).
fn free_bytes(f: &File) -> io::Result<u64> {
    // SAFETY: statvfs is plain data; all-zero is a valid value.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `s` is a valid statvfs to fill; the descriptor is open while `f` is borrowed.
    if unsafe { libc::fstatvfs(f.as_raw_fd(), &mut s) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

fn free_text(f: &File) -> String {
    free_bytes(f)
        .map(|b| format!("{} free there", human_bytes(b)))
        .unwrap_or_else(|e| format!("free space unknown: {e}"))
}

/// [`reserve`] with the reservation done by `alloc`.
fn reserve_with(
    f: &File,
    path: &Path,
    offset: u64,
    len: u64,
    alloc: Alloc,
) -> Result<(), MapError> {
    let no_space = |reason: String| MapError::NoSpace {
        path: path.display().to_string(),
        reason,
    };
    let failed = |reason: String| MapError::Map {
        path: path.display().to_string(),
        reason,
    };
    let window = format!("{} at offset {offset}", human_bytes(len));
    let e = match alloc(f, offset, len) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => Err(no_space(format!(
            "reserving the window's {window} failed ({e}); {}",
            free_text(f)
        ))),
        Some(libc::EOPNOTSUPP | libc::ENOSYS) => {
            let meta = f
                .metadata()
                .map_err(|e| failed(format!("reading its size: {e}")))?;
            let unallocated = meta.len().saturating_sub(meta.blocks().saturating_mul(512));
            let need = unallocated.min(len);
            let free = free_bytes(f).map_err(|e| failed(format!("reading its free space: {e}")))?;
            if need > free {
                return Err(no_space(format!(
                    "its file system cannot reserve space ({e}) and has {} free, less than the \
                     {} of the file not allocated yet that the window ({window}) may need",
                    human_bytes(free),
                    human_bytes(need)
                )));
            }
            Ok(())
        }
        Some(libc::EFBIG) => Err(failed(format!(
            "reserving the window's {window}: {e} (the window ends past the largest file its \
             file system holds)"
        ))),
        _ => Err(failed(format!("reserving the window's {window}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sparse(dir: &Path, len: u64) -> (File, std::path::PathBuf) {
        let p = dir.join("window");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
            .unwrap();
        f.set_len(len).unwrap();
        (f, p)
    }

    #[test]
    fn a_window_is_reserved_without_changing_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let (f, p) = sparse(dir.path(), 0);
        std::fs::write(&p, b"data").unwrap();
        let len = 1 << 20;
        if let Err(e) = fallocate(&f, 0, 1) {
            if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                crate::testing::unavailable(
                    "fallocate",
                    &format!("the temporary directory's file system: {e}"),
                );
                return;
            }
        }
        reserve(&f, &p, 4096, len).unwrap();
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), 4096 + len, "the file grows to the window's end");
        assert!(m.blocks() * 512 >= len, "{} blocks", m.blocks());
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[..4], b"data");
        assert!(bytes[4..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_full_file_system_is_an_error_naming_the_file_and_its_room() {
        let dir = tempfile::tempdir().unwrap();
        let (f, p) = sparse(dir.path(), 1 << 20);
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let alloc: Alloc = match errno {
                libc::ENOSPC => |_, _, _| Err(io::Error::from_raw_os_error(libc::ENOSPC)),
                _ => |_, _, _| Err(io::Error::from_raw_os_error(libc::EDQUOT)),
            };
            let e = reserve_with(&f, &p, 0, 8 << 20, alloc).unwrap_err();
            assert!(matches!(e, MapError::NoSpace { .. }), "{e:?}");
            let msg = e.to_string();
            for says in [
                &p.display().to_string()[..],
                "8 MiB at offset 0",
                "free there",
                "nothing was mapped or written",
            ] {
                assert!(msg.contains(says), "{msg} lacks {says}");
            }
        }
        let e = reserve_with(&f, &p, 0, 8 << 20, |_, _, _| {
            Err(io::Error::from_raw_os_error(libc::EIO))
        })
        .unwrap_err();
        assert!(matches!(e, MapError::Map { .. }), "{e:?}");
    }

    #[test]
    fn without_fallocate_the_free_space_must_cover_the_holes() {
        let unsupported: Alloc = |_, _, _| Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        let dir = tempfile::tempdir().unwrap();
        let probe = File::open(dir.path()).unwrap();
        let free = free_bytes(&probe).unwrap();
        // A sparse file with more holes than the file system has room.
        let (f, p) = sparse(dir.path(), free + (1 << 30));
        let e = reserve_with(&f, &p, 0, free + (1 << 30), unsupported).unwrap_err();
        assert!(matches!(e, MapError::NoSpace { .. }), "{e:?}");
        assert!(e.to_string().contains("cannot reserve space"), "{e}");
        // A window of a few holes fits.
        reserve_with(&f, &p, 0, 1 << 20, unsupported).unwrap();
    }
}
