//! params.json: pretty JSON, written atomically (temp file in the same directory, fsync,
//! rename), so a failed run never leaves a partial file or clobbers an old one.

use super::Exporter;
use anyhow::{Context, Result};
use bench_core::params::ParamsFile;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// JSON exporter.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, file: &ParamsFile) -> Result<String> {
        let mut s = serde_json::to_string_pretty(file)?;
        s.push('\n');
        Ok(s)
    }
}

fn temp_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Fails early (before measuring) when `out` cannot be written: a missing directory, no
/// permission, or a directory in its place.
pub fn check_writable(out: &Path) -> Result<()> {
    if out.is_dir() {
        anyhow::bail!("cannot write --out {}: it is a directory", out.display());
    }
    let tmp = temp_path(out);
    File::create(&tmp).with_context(|| format!("cannot write --out {}", out.display()))?;
    let _ = fs::remove_file(&tmp);
    Ok(())
}

/// Writes `text` to `out` atomically.
pub fn write_atomic(out: &Path, text: &str) -> Result<()> {
    let tmp = temp_path(out);
    let result = (|| -> Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, out)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write --out {}", out.display()))
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

    #[test]
    fn unwritable_destinations_are_refused() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_writable(&d.path().join("no/such/dir/p.json")).is_err());
        assert!(check_writable(d.path()).is_err());
        assert!(check_writable(&d.path().join("ok.json")).is_ok());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
