//! `cxlchar export`: a params.json (read with the consumers' loader) to the Mess curve
//! format ([`super::mess`]), OpenMetrics text ([`super::openmetrics`]) and CSV
//! ([`super::csv`]). Everything is rendered and every output checked before anything is
//! written, and every file is written atomically ([`crate::document::write::write_atomic`]); an
//! output that is the input, a symbolic link or not a regular file is refused. The Mess
//! files are written below their folder without following a link ([`OutDir`]), and an
//! export that fails removes every file and folder it created.
//!
//! Exit status as the consumers': 0 written; 2 invalid input or an output refused; 3
//! `--mess` asked and the file has no `mem.loaded` curve (nothing written).

use super::mess::{self, NoCurves};
use super::outdir::OutDir;
use super::{csv::CsvExporter, openmetrics::OpenMetricsExporter, Exporter};
use crate::cli::ExportArgs;
use crate::document::load;
use crate::document::write::{check_not_input, check_output, write_atomic};
use crate::exit::Status;
use crate::output::text::{printable, printable_lines};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Runs `export`; errors are printed, the exit status returned.
pub fn run(a: &ExportArgs) -> Status {
    match export(a) {
        Ok(()) => Status::Success,
        // A reader that went away (`| head`): quiet, status 0 (crate::output::stdout).
        Err(e) if crate::output::stdout::is_broken_pipe(&e) => Status::Success,
        Err(e) => {
            eprintln!("error: {}", printable_lines(&format!("{e:#}")));
            if e.downcast_ref::<NoCurves>().is_some() {
                Status::NotMeasured
            } else {
                Status::Invalid
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
        Some(_) => Some(mess::render(&file, &source, a.mess_latency, a.cpu_ghz)?),
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
    // The Mess folder: opened (created if absent) and every file checked before anything
    // is written; dropped unkept on an error, it removes what it created.
    let mut mess_out = match (&a.mess, &mess_files) {
        (Some(dir), Some(files)) => {
            let out = OutDir::open(dir).context("--mess")?;
            for f in files {
                out.check(&f.rel).context("--mess")?;
                check_not_input(&out.path().join(&f.rel), &[&a.params]).context("--mess")?;
            }
            Some(out)
        }
        _ => None,
    };
    // Write.
    let mut written = Vec::new();
    let mut new_files = Vec::new();
    let result = (|| -> Result<()> {
        if let (Some(out), Some(files)) = (&mut mess_out, &mess_files) {
            for f in files {
                written.push(out.write(&f.rel, &f.text)?);
            }
        }
        for (d, text) in &texts {
            match d {
                Dest::Stdout => crate::output::stdout::print(text)?,
                Dest::File(p) => {
                    let is_new = std::fs::symlink_metadata(p).is_err();
                    write_atomic(p, text)?;
                    if is_new {
                        new_files.push(p.clone());
                    }
                    written.push(p.clone());
                }
            }
        }
        Ok(())
    })();
    if result.is_err() {
        // Nothing new is left behind: the Mess folder removes its own when dropped.
        for p in &new_files {
            let _ = std::fs::remove_file(p);
        }
        return result;
    }
    if let Some(out) = mess_out {
        out.keep();
    }
    for p in written {
        // A folder name may hold control characters: shown as escapes.
        eprintln!("wrote {}", printable(&p.display().to_string()));
    }
    Ok(())
}
