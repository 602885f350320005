//! Every file cxlchar writes, written atomically (temp file in the same directory, fsync,
//! rename), so a failed run never leaves a partial file or clobbers an old one.
//!
//! Every file the CLI writes goes through [`check_output`] first (before anything is
//! measured): only a regular file or a new path is ever replaced; a symlink, a device
//! node, a FIFO, a socket or a directory is refused (docs/safety.md).

use anyhow::{bail, Context, Result};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name of the temporary file an atomic write of `name` goes through:
/// `.NAME.<pid>.tmp`, next to it.
pub fn temp_name(name: &str) -> String {
    format!(".{name}.{}.tmp", std::process::id())
}

fn temp_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    out.with_file_name(temp_name(&name))
}

/// Refuses an output path that is anything but a regular file or a new path: a symbolic
/// link (even to a regular file), a directory, a device node, a FIFO or a socket.
/// Nothing is created.
pub fn check_output(out: &Path) -> Result<()> {
    let what = match fs::symlink_metadata(out) {
        Ok(m) => {
            let t = m.file_type();
            if t.is_file() {
                return Ok(());
            }
            if t.is_symlink() {
                "a symbolic link"
            } else if t.is_dir() {
                "a directory"
            } else {
                "not a regular file (a device node, FIFO or socket)"
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", out.display())),
    };
    bail!(
        "refusing to write {}: it is {what}; cxlchar replaces only a regular file or creates a new one",
        out.display()
    )
}

/// Refuses an output path that is (the same file as) one of `inputs`.
pub fn check_not_input(out: &Path, inputs: &[&Path]) -> Result<()> {
    let Ok(o) = fs::metadata(out) else {
        return Ok(()); // a new path is no input
    };
    for i in inputs {
        if let Ok(m) = fs::metadata(i) {
            if m.dev() == o.dev() && m.ino() == o.ino() {
                bail!(
                    "refusing to write {}: it is the input {}",
                    out.display(),
                    i.display()
                );
            }
        }
    }
    Ok(())
}

/// Fails early (before measuring) when `out` cannot be written: a missing directory, no
/// permission, or anything but a regular file or a new path in its place
/// ([`check_output`]).
pub fn check_writable(out: &Path) -> Result<()> {
    check_output(out).context("--out")?;
    let tmp = temp_path(out);
    let _registered = bench_core::cleanup::register(&tmp)?;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(|| format!("cannot write --out {}", out.display()))?;
    let _ = fs::remove_file(&tmp);
    Ok(())
}

/// Writes `text` to `out` atomically: a new temp file (never an existing one, never
/// through a link) registered for removal on a signal ([`bench_core::cleanup`]), then a
/// rename over `out` once [`check_output`] still accepts it.
pub fn write_atomic(out: &Path, text: &str) -> Result<()> {
    write_atomic_as(out, text, None)
}

/// Writes a run's result to `out` as [`write_atomic`] does, the run exiting `status`:
/// once the file is renamed into place, SIGINT and SIGTERM exit `status` (the run is
/// complete and `out` holds it) instead of 130 / 143, which say `out` is untouched
/// (docs/safety.md).
pub fn write_result(out: &Path, text: &str, status: i32) -> Result<()> {
    write_atomic_as(out, text, Some(status))
}

fn write_atomic_as(out: &Path, text: &str, status: Option<i32>) -> Result<()> {
    check_output(out)?;
    let tmp = temp_path(out);
    let registered = bench_core::cleanup::register(&tmp)?;
    let result = (|| -> Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        check_output(out)?;
        if let Some(s) = status {
            registered.commits(s);
        }
        fs::rename(&tmp, out)?;
        if let Some(s) = status {
            bench_core::cleanup::complete(s);
        }
        Ok(())
    })();
    if result.is_err() {
        registered.cancel_commit();
        let _ = fs::remove_file(&tmp);
    }
    drop(registered);
    result.with_context(|| format!("cannot write {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("p.json");
        fs::write(&out, "old").unwrap();
        write_atomic(&out, "new").unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "new");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    /// Set in the child of [`a_signal_after_the_result_is_in_place_exits_0`]: the
    /// destination it writes, then signals itself.
    const CHILD_OUT: &str = "CXLCHAR_TEST_RESULT_OUT";

    #[test]
    fn result_child() {
        let Ok(out) = std::env::var(CHILD_OUT) else {
            return;
        };
        bench_core::cleanup::install().unwrap();
        write_result(Path::new(&out), "complete", 0).unwrap();
        // SAFETY: raise(3) sends SIGTERM to this thread; the handler exits the process.
        unsafe { libc::raise(libc::SIGTERM) };
        unreachable!("the handler exits");
    }

    #[test]
    fn a_signal_after_the_result_is_in_place_exits_0() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("p.json");
        fs::write(&out, "old").unwrap();
        let o = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "document::write::tests::result_child",
                "--test-threads=1",
            ])
            .env(CHILD_OUT, &out)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "SIGTERM after --out is in place: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert_eq!(fs::read_to_string(&out).unwrap(), "complete");
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            1,
            "a temp file left"
        );
    }

    #[test]
    fn unwritable_destinations_are_refused() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_writable(&d.path().join("no/such/dir/p.json")).is_err());
        assert!(check_writable(d.path()).is_err());
        assert!(check_writable(&d.path().join("ok.json")).is_ok());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn links_devices_and_fifos_are_refused_and_survive() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        fs::write(&real, "old").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(check_writable(&link).is_err());
        assert!(write_atomic(&link, "new").is_err());
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "old");
        let null = Path::new("/dev/null");
        assert!(check_writable(null).is_err());
        assert!(write_atomic(null, "new").is_err());
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::metadata(null).unwrap().file_type().is_char_device());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 2);
    }

    #[test]
    fn an_input_is_not_an_output() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, "x").unwrap();
        let hard = d.path().join("b");
        fs::hard_link(&a, &hard).unwrap();
        assert!(check_not_input(&hard, &[&a]).is_err());
        assert!(check_not_input(&d.path().join("c"), &[&a]).is_ok());
    }
}
