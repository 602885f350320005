//! `cxlchar completions SHELL` and `cxlchar man`: shell completions and man pages
//! generated from the whole command line ([`crate::registry::command`]), so the
//! benchmark commands and their options are included.

use anyhow::{Context as _, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes the completion script of `shell` to `w`.
pub fn completions(shell: clap_complete::Shell, w: &mut dyn Write) {
    clap_complete::generate(shell, &mut crate::registry::command(), "cxlchar", w);
}

/// Writes the top man page (cxlchar.1) to `w`.
pub fn man_page(w: &mut dyn Write) -> Result<()> {
    clap_mangen::Man::new(crate::registry::command())
        .render(w)
        .context("rendering the man page")
}

/// Writes cxlchar.1 and one page per subcommand (`cxlchar-mem-latency.1`) into `dir`
/// (created if absent); returns the files written, sorted.
pub fn man_pages(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    clap_mangen::generate_to(crate::registry::command(), dir)
        .with_context(|| format!("writing man pages into {}", dir.display()))?;
    pages_in(dir)
}

/// The pages of this command line in `dir` (`cxlchar.1`, `cxlchar-*.1`), sorted.
fn pages_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "cxlchar.1" || n.starts_with("cxlchar-") && n.ends_with(".1"))
        })
        .collect();
    v.sort();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_completions_know_the_benchmark_commands_and_their_options() {
        let mut out = Vec::new();
        completions(clap_complete::Shell::Bash, &mut out);
        let s = String::from_utf8(out).unwrap();
        for w in [
            "mem", "latency", "loaded", "pool", "flush-bw", "--target", "--quick",
        ] {
            assert!(s.contains(w), "bash completions lack {w}");
        }
    }

    #[test]
    fn every_shell_gets_a_script() {
        use clap::ValueEnum;
        for sh in clap_complete::Shell::value_variants() {
            let mut out = Vec::new();
            completions(*sh, &mut out);
            let s = String::from_utf8(out).unwrap();
            assert!(s.contains("cxlchar") && s.contains("latency"), "{sh}");
        }
    }

    #[test]
    fn the_top_man_page_is_roff_with_a_name_section_and_the_commands() {
        let mut out = Vec::new();
        man_page(&mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with(".ie") || s.starts_with(".TH"), "{}", &s[..80]);
        assert!(s.contains("\n.TH cxlchar 1") || s.starts_with(".TH cxlchar 1"));
        assert!(s.contains(".SH NAME\ncxlchar"));
        assert!(s.contains(".SH SUBCOMMANDS") && s.contains("cxlchar\\-mem(1)"));
    }

    #[test]
    fn man_out_writes_one_page_per_command() {
        let dir = tempfile::tempdir().unwrap();
        let pages = man_pages(dir.path()).unwrap();
        let names: Vec<String> = pages
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for n in [
            "cxlchar.1",
            "cxlchar-all.1",
            "cxlchar-mem.1",
            "cxlchar-mem-latency.1",
            "cxlchar-pool-flush-bw.1",
            "cxlchar-man.1",
            "cxlchar-completions.1",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
        }
        let lat = std::fs::read_to_string(dir.path().join("cxlchar-mem-latency.1")).unwrap();
        assert!(lat.contains(".SH NAME\ncxlchar\\-mem\\-latency"), "{lat}");
        assert!(lat.contains("\\-\\-max\\-size"));
    }
}
