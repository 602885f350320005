//! `cxlchar export`: a params.json (read with the consumers' loader) to the Mess curve
//! format ([`super::mess`]), OpenMetrics text ([`super::openmetrics`]) and CSV
//! ([`super::csv`]). Everything is rendered before anything is written, and every file is
//! written atomically ([`super::json::write_atomic`]); an output that is the input, a
//! symbolic link or not a regular file is refused.
//!
//! Exit status as the consumers': 0 written; 2 invalid input or an output refused; 3
//! `--mess` asked and the file has no `mem.loaded` curve (nothing written).

use super::json::{check_not_input, check_output, write_atomic};
use super::mess::{self, NoCurves};
use super::{csv::CsvExporter, openmetrics::OpenMetricsExporter, Exporter};
use crate::cli::ExportArgs;
use crate::consumers::{load, EXIT_INVALID, EXIT_NOT_MEASURED, EXIT_OK};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `export`; errors are printed, the exit status returned.
pub fn run(a: &ExportArgs) -> i32 {
    match export(a) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<NoCurves>().is_some() {
                EXIT_NOT_MEASURED
            } else {
                EXIT_INVALID
            }
        }
    }
}

fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Where a rendered text goes.
enum Dest {
    Stdout,
    File(PathBuf),
}

fn dest(p: &Path, input: &Path, what: &str) -> Result<Dest> {
    if is_stdout(p) {
        return Ok(Dest::Stdout);
    }
    check_output(p).with_context(|| what.to_string())?;
    check_not_input(p, &[input]).with_context(|| what.to_string())?;
    Ok(Dest::File(p.to_path_buf()))
}

/// A directory for --mess: an existing directory (not a symbolic link) or a new path.
fn check_dir(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_dir() => Ok(()),
        Ok(_) => bail!(
            "--mess {}: it exists and is not a directory (a symbolic link is refused too)",
            dir.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("--mess {}", dir.display())),
    }
}

fn export(a: &ExportArgs) -> Result<()> {
    let stdouts = [&a.openmetrics, &a.csv]
        .iter()
        .filter(|p| p.as_deref().is_some_and(is_stdout))
        .count();
    if stdouts > 1 {
        bail!("only one of --openmetrics and --csv can be `-` (stdout)");
    }
    let file = load::load(&a.params)?;
    let source = a.params.display().to_string();
    // Render everything first: a refusal writes nothing.
    let mess_files = match &a.mess {
        Some(dir) => {
            check_dir(dir)?;
            Some((
                dir,
                mess::render(&file, &source, a.mess_latency, a.cpu_ghz)?,
            ))
        }
        None => None,
    };
    let mut texts = Vec::new();
    if let Some(p) = &a.openmetrics {
        texts.push((
            dest(p, &a.params, "--openmetrics")?,
            OpenMetricsExporter.render(&file)?,
        ));
    }
    if let Some(p) = &a.csv {
        texts.push((dest(p, &a.params, "--csv")?, CsvExporter.render(&file)?));
    }
    if let Some((dir, files)) = &mess_files {
        for f in files {
            let path = dir.join(&f.rel);
            check_output(&path)?;
            check_not_input(&path, &[&a.params])?;
        }
    }
    // Write.
    if let Some((dir, files)) = mess_files {
        for f in &files {
            let path = dir.join(&f.rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            write_atomic(&path, &f.text)?;
            eprintln!("wrote {}", path.display());
        }
    }
    for (d, text) in texts {
        match d {
            Dest::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|_| out.flush())
                    .context("writing to stdout")?;
            }
            Dest::File(p) => {
                write_atomic(&p, &text)?;
                eprintln!("wrote {}", p.display());
            }
        }
    }
    Ok(())
}
