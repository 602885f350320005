//! A folder that an export writes a tree of files into (`export --mess DIR`), held open
//! so that every write stays under it: each component below DIR is created and opened
//! relative to its parent's descriptor with `O_NOFOLLOW` (`mkdirat`, `openat`), so a
//! symbolic link anywhere under DIR (`DIR/anon -> /etc`) is refused, never followed.
//! Each file is written atomically as [`crate::document::write::write_atomic`] writes one (a new
//! temporary file, fsynced, renamed over a regular file or a new name).
//!
//! All or nothing as far as the file system allows: an [`OutDir`] dropped before
//! [`OutDir::keep`] removes every file and folder it created (DIR and its missing
//! parents included), so a refused or failed export leaves no new file behind. A file it
//! replaced keeps its new text (the old one is gone with the rename), which is why
//! [`OutDir::check`] refuses what it can before anything is written.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The longest file name (bytes) the file systems cxlchar writes to take (`NAME_MAX`).
pub const NAME_MAX_BYTES: usize = 255;

/// The most bytes [`crate::document::write::temp_name`] adds to a file name.
const TEMP_EXTRA_BYTES: usize = ".".len() + ".".len() + 10 + ".tmp".len();

/// What a name below the folder is, seen without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Missing,
    Dir,
    File,
    /// A symbolic link, a device node, a FIFO or a socket.
    Other,
}

/// An export's output folder (see the module documentation).
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    root: OwnedFd,
    /// Folders below the root opened so far, by their path relative to it.
    dirs: BTreeMap<String, OwnedFd>,
    /// What this export created below the root, in order: (folder relative to the root,
    /// name, is a folder).
    created: Vec<(String, String, bool)>,
    /// The root and its missing parents, created by [`OutDir::open`], outermost first.
    created_above: Vec<PathBuf>,
    kept: bool,
}

fn c_name(name: &str) -> Result<CString> {
    CString::new(name).with_context(|| format!("the name {name:?} holds a NUL byte"))
}

/// `openat(dir, name, O_DIRECTORY | O_NOFOLLOW)`: fails (ELOOP, ENOTDIR) on anything but
/// a real folder.
fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated and `dir` an open descriptor; openat returns a new
    // descriptor (owned from here) or -1.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `mkdirat(dir, name, 0777)` (less the umask).
fn mkdir_at(dir: BorrowedFd<'_>, name: &CStr) -> std::io::Result<()> {
    // SAFETY: `name` is NUL-terminated and `dir` an open descriptor.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A new file `name` in `dir`, created exclusively and never through a link.
fn create_at(dir: BorrowedFd<'_>, name: &CStr) -> std::io::Result<File> {
    // SAFETY: `name` is NUL-terminated and `dir` an open descriptor; openat returns a new
    // descriptor (owned from here) or -1.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// What `name` in `dir` is, without following a link.
fn kind_at(dir: BorrowedFd<'_>, name: &CStr) -> std::io::Result<Kind> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is NUL-terminated, `dir` an open descriptor and `st` room for one
    // stat, which fstatat fills when it returns 0.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return if e.kind() == std::io::ErrorKind::NotFound {
            Ok(Kind::Missing)
        } else {
            Err(e)
        };
    }
    // SAFETY: fstatat returned 0: `st` is filled.
    let mode = unsafe { st.assume_init() }.st_mode & libc::S_IFMT;
    Ok(match mode {
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFREG => Kind::File,
        _ => Kind::Other,
    })
}

/// `renameat(dir, from, dir, to)`.
fn rename_at(dir: BorrowedFd<'_>, from: &CStr, to: &CStr) -> std::io::Result<()> {
    let fd = dir.as_raw_fd();
    // SAFETY: both names are NUL-terminated and `dir` an open descriptor.
    if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `unlinkat(dir, name)`, a folder (`AT_REMOVEDIR`, empty only) when `is_dir`.
fn unlink_at(dir: BorrowedFd<'_>, name: &CStr, is_dir: bool) -> std::io::Result<()> {
    let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: `name` is NUL-terminated and `dir` an open descriptor.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The components of `rel` (`a/b/file`), each a plain name of at most
/// [`NAME_MAX_BYTES`] (the file's with room for its temporary name); refuses an empty
/// path, `.`, `..` and empty components.
fn components<'a>(root: &Path, rel: &'a str) -> Result<Vec<&'a str>> {
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || *p == "." || *p == ".." {
            bail!(
                "refusing to write {}/{rel}: {p:?} is no plain file or folder name",
                root.display()
            );
        }
        let max = if i + 1 == parts.len() {
            NAME_MAX_BYTES - TEMP_EXTRA_BYTES
        } else {
            NAME_MAX_BYTES
        };
        if p.len() > max {
            bail!(
                "refusing to write {}/{rel}: the name {p} is {} bytes, more than the {max} \
                 it may have (file names take at most {NAME_MAX_BYTES} bytes, a temporary \
                 file's suffix included): give shorter names",
                root.display(),
                p.len()
            );
        }
    }
    Ok(parts)
}

fn not_a_folder(root: &Path, rel: &str, at: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "refusing to write {root}/{rel}: {root}/{at} is a symbolic link or not a folder; \
         exports write only into real folders below the one given, never through a link: \
         remove it or give another folder",
        root = root.display()
    )
}

impl OutDir {
    /// Opens `dir` as an export folder: an existing folder (a symbolic link, even to a
    /// folder, is refused) or a new path, created with its missing parents (removed again
    /// unless [`Self::keep`] is called).
    pub fn open(dir: &Path) -> Result<Self> {
        let mut created_above = Vec::new();
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => bail!(
                "refusing to write into {}: it exists and is not a folder (a symbolic link is \
                 refused too): give a folder or a new path",
                dir.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut missing: Vec<&Path> = dir
                    .ancestors()
                    .filter(|a| !a.as_os_str().is_empty())
                    .take_while(|a| std::fs::symlink_metadata(a).is_err())
                    .collect();
                missing.reverse();
                for m in missing {
                    match std::fs::create_dir(m) {
                        Ok(()) => created_above.push(m.to_path_buf()),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) => {
                            remove_dirs(&created_above);
                            return Err(e).with_context(|| format!("creating {}", m.display()));
                        }
                    }
                }
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot write into {}", dir.display()))
            }
        }
        let root = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(dir);
        let root = match root {
            Ok(f) => OwnedFd::from(f),
            Err(e) => {
                remove_dirs(&created_above);
                return Err(e).with_context(|| {
                    format!(
                        "cannot open the folder {} (a symbolic link is refused)",
                        dir.display()
                    )
                });
            }
        };
        Ok(OutDir {
            path: dir.to_path_buf(),
            root,
            dirs: BTreeMap::new(),
            created: Vec::new(),
            created_above,
            kept: false,
        })
    }

    /// The folder's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses, before anything is written, a `rel` (`a/b/file`) that [`Self::write`]
    /// would refuse: a bad or too long name, a path too long for its temporary file
    /// (`PATH_MAX`, the signal cleanup's bound), a component below the folder that exists
    /// and is not a real folder (a symbolic link among them), or a file that exists and
    /// is not a regular file. Creates nothing.
    pub fn check(&self, rel: &str) -> Result<()> {
        let parts = components(&self.path, rel)?;
        let (file, folders) = parts.split_last().expect("split yields one part");
        let tmp = self
            .path
            .join(rel)
            .with_file_name(crate::document::write::temp_name(file));
        if tmp.as_os_str().len() >= bench_core::cleanup::PATH_BYTES {
            bail!(
                "refusing to write {}: its temporary file's path is {} bytes, more than the \
                 {} a path may have: give a folder with a shorter path",
                self.show(rel),
                tmp.as_os_str().len(),
                bench_core::cleanup::PATH_BYTES - 1
            );
        }
        let mut held: Option<OwnedFd> = None;
        for (i, p) in folders.iter().enumerate() {
            let dir = held.as_ref().map_or(self.root.as_fd(), |f| f.as_fd());
            let at = folders[..=i].join("/");
            match kind_at(dir, &c_name(p)?)
                .with_context(|| format!("reading {}", self.show(&at)))?
            {
                Kind::Missing => return Ok(()),
                Kind::Dir => {
                    let fd = open_dir_at(dir, &c_name(p)?)
                        .map_err(|_| not_a_folder(&self.path, rel, &at))?;
                    held = Some(fd);
                }
                _ => return Err(not_a_folder(&self.path, rel, &at)),
            }
        }
        let dir = held.as_ref().map_or(self.root.as_fd(), |f| f.as_fd());
        check_file(dir, file, &self.show(rel))
    }

    fn show(&self, rel: &str) -> String {
        format!("{}/{rel}", self.path.display())
    }

    /// The folder `rel` below the root (`""`: the root), created where missing.
    fn folder(&mut self, rel_file: &str, folders: &[&str]) -> Result<String> {
        let mut key = String::new();
        for p in folders {
            let parent_key = key.clone();
            if !key.is_empty() {
                key.push('/');
            }
            key.push_str(p);
            if self.dirs.contains_key(&key) {
                continue;
            }
            let name = c_name(p)?;
            let parent = if parent_key.is_empty() {
                self.root.as_fd()
            } else {
                self.dirs[&parent_key].as_fd()
            };
            let made = match mkdir_at(parent, &name) {
                Ok(()) => true,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                Err(e) => return Err(e).with_context(|| format!("creating {}", self.show(&key))),
            };
            if made {
                self.created.push((parent_key.clone(), p.to_string(), true));
            }
            let fd =
                open_dir_at(parent, &name).map_err(|_| not_a_folder(&self.path, rel_file, &key))?;
            self.dirs.insert(key.clone(), fd);
        }
        Ok(key)
    }

    /// Writes `text` to `rel` (`a/b/file`) below the folder, atomically, creating the
    /// folders on the way; returns the path written. Never follows a symbolic link.
    pub fn write(&mut self, rel: &str, text: &str) -> Result<PathBuf> {
        let parts = components(&self.path, rel)?;
        let (file, folders) = parts.split_last().expect("split yields one part");
        let key = self.folder(rel, folders)?;
        let dir_path = if key.is_empty() {
            self.path.clone()
        } else {
            self.path.join(&key)
        };
        let dir = if key.is_empty() {
            self.root.as_fd()
        } else {
            self.dirs[&key].as_fd()
        };
        let out = self.show(rel);
        check_file(dir, file, &out)?;
        let tmp_name = crate::document::write::temp_name(file);
        let tmp = c_name(&tmp_name)?;
        let name = c_name(file)?;
        let _registered = bench_core::cleanup::register(&dir_path.join(&tmp_name))?;
        let mut is_new = false;
        let result = (|| -> Result<()> {
            let mut f = create_at(dir, &tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            check_file(dir, file, &out)?;
            is_new = kind_at(dir, &name)? == Kind::Missing;
            rename_at(dir, &tmp, &name)?;
            Ok(())
        })();
        if let Err(e) = result {
            let _ = unlink_at(dir, &tmp, false);
            return Err(e.context(format!("cannot write {out}")));
        }
        if is_new {
            self.created.push((key, file.to_string(), false));
        }
        Ok(dir_path.join(file))
    }

    /// Keeps everything written: the export succeeded.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

/// Refuses `name` in `dir` when it exists and is not a regular file.
fn check_file(dir: BorrowedFd<'_>, name: &str, shown: &str) -> Result<()> {
    match kind_at(dir, &c_name(name)?).with_context(|| format!("reading {shown}"))? {
        Kind::Missing | Kind::File => Ok(()),
        Kind::Dir => bail!("refusing to write {shown}: it is a folder; cxlchar replaces only a regular file or creates a new one"),
        _ => bail!("refusing to write {shown}: it is a symbolic link, a device node, a FIFO or a socket; cxlchar replaces only a regular file or creates a new one"),
    }
}

/// Removes the folders `created` (outermost first) in reverse, each only when empty.
fn remove_dirs(created: &[PathBuf]) {
    for d in created.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        for (key, name, is_dir) in self.created.iter().rev() {
            let dir = if key.is_empty() {
                self.root.as_fd()
            } else {
                self.dirs[key].as_fd()
            };
            if let Ok(n) = CString::new(name.as_str()) {
                // A folder that holds something this export did not write stays.
                let _ = unlink_at(dir, &n, *is_dir);
            }
        }
        remove_dirs(&self.created_above);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_a_tree_and_keeps_it() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("new/mess");
        let mut o = OutDir::open(&out).unwrap();
        o.check("anon/bwlat_100.txt").unwrap();
        o.write("anon/bwlat_100.txt", "1\t2\n").unwrap();
        o.write("README.txt", "r").unwrap();
        o.keep();
        assert_eq!(
            fs::read_to_string(out.join("anon/bwlat_100.txt")).unwrap(),
            "1\t2\n"
        );
        assert_eq!(names(&out), ["README.txt", "anon"]);
        assert_eq!(names(&out.join("anon")), ["bwlat_100.txt"]);
    }

    #[test]
    fn a_symlinked_folder_below_is_refused_and_its_target_untouched() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::create_dir(&victim).unwrap();
        let out = d.path().join("mess");
        fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("anon")).unwrap();
        let mut o = OutDir::open(&out).unwrap();
        let e = o.check("anon/bwlat_100.txt").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = o.write("anon/bwlat_100.txt", "x").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        drop(o);
        assert!(names(&victim).is_empty(), "wrote through the link");
        assert_eq!(names(&out), ["anon"]);
        // The folder itself as a link.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(OutDir::open(&link).is_err());
        assert!(names(&victim).is_empty());
    }

    #[test]
    fn a_failure_removes_what_the_export_created_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        // An existing folder with a file of someone else's and an old curve.
        let out = d.path().join("mess");
        fs::create_dir_all(out.join("node_0")).unwrap();
        fs::write(out.join("node_0/notes"), "mine").unwrap();
        let victim = d.path().join("victim");
        fs::create_dir(&victim).unwrap();
        let mut o = OutDir::open(&out).unwrap();
        o.write("node_0/bwlat_100.txt", "a").unwrap();
        o.write("anon/bwlat_100.txt", "b").unwrap();
        o.write("README.txt", "r").unwrap();
        // A link planted after the checks: the write is refused.
        std::os::unix::fs::symlink(&victim, out.join("node_1")).unwrap();
        assert!(o.write("node_1/bwlat_100.txt", "c").is_err());
        drop(o);
        assert_eq!(names(&out), ["node_0", "node_1"]);
        assert_eq!(names(&out.join("node_0")), ["notes"]);
        assert!(names(&victim).is_empty());
        // A folder the export created, with its missing parents, goes as a whole.
        let fresh = d.path().join("a/b/mess");
        let mut o = OutDir::open(&fresh).unwrap();
        o.write("anon/bwlat_0.txt", "x").unwrap();
        drop(o);
        assert!(!d.path().join("a").exists());
    }

    #[test]
    fn bad_and_long_names_are_refused_before_anything_is_written() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("mess");
        let mut o = OutDir::open(&out).unwrap();
        for rel in ["../x", "a//b", ".", "a/./b", ""] {
            assert!(o.check(rel).is_err(), "{rel}");
            assert!(o.write(rel, "x").is_err(), "{rel}");
        }
        let long = "n".repeat(NAME_MAX_BYTES + 1);
        let e = o
            .check(&format!("{long}/bwlat_0.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("256 bytes"), "{e}");
        let file = "f".repeat(NAME_MAX_BYTES - TEMP_EXTRA_BYTES + 1);
        assert!(o.check(&file).is_err());
        assert!(o.write(&file, "x").is_err());
        assert!(names(&out).is_empty());
        drop(o);
        assert!(!out.exists());
    }
}
