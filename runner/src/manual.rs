//! `cxlchar completions SHELL` and `cxlchar man`: shell completions and man pages
//! generated from the whole command line ([`crate::registry::command`]), so the
//! benchmark commands and their options are included.

use anyhow::{Context as _, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::export::outdir::OutDir;

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

/// Every man page of the command line, rendered in memory: (file name, roff), the top
/// page (`cxlchar.1`) first, then one per visible subcommand (`cxlchar-mem-latency.1`),
/// as `clap_mangen::generate_to` names them.
fn render_pages() -> Result<Vec<(String, String)>> {
    fn walk(cmd: clap::Command, out: &mut Vec<(String, String)>) -> Result<()> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut text = Vec::new();
        man.render(&mut text)
            .with_context(|| format!("rendering {}", man.get_filename()))?;
        out.push((
            man.get_filename(),
            String::from_utf8_lossy(&text).into_owned(),
        ));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = crate::registry::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(cmd, &mut out)?;
    Ok(out)
}

/// Writes cxlchar.1 and one page per subcommand (`cxlchar-mem-latency.1`) into `dir`
/// (created if absent) the way exports write ([`OutDir`]): every page opened below the
/// folder without following a link (a symbolic link, FIFO or device in a page's place,
/// or `dir` itself a link, is refused), written atomically, and nothing left behind
/// when one fails. Returns the files written, sorted.
pub fn man_pages(dir: &Path) -> Result<Vec<PathBuf>> {
    let pages = render_pages()?;
    let mut out = OutDir::open(dir)?;
    for (name, _) in &pages {
        out.check(name)?;
    }
    let mut written = Vec::with_capacity(pages.len());
    for (name, text) in &pages {
        written.push(out.write(name, text)?);
    }
    out.keep();
    written.sort();
    Ok(written)
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

    /// Names in `d`, sorted.
    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn man_out_never_writes_through_a_link_and_leaves_nothing_on_refusal() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // A link in a page's place, to a file: refused, the file unchanged.
        let out = d.path().join("man");
        std::fs::create_dir(&out).unwrap();
        symlink(&victim, out.join("cxlchar.1")).unwrap();
        let e = format!("{:#}", man_pages(&out).unwrap_err());
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(names(&out), ["cxlchar.1"], "no page left after a refusal");
        // A dangling link: its target is not created.
        std::fs::remove_file(out.join("cxlchar.1")).unwrap();
        let target = d.path().join("created-through-link");
        symlink(&target, out.join("cxlchar-all.1")).unwrap();
        assert!(man_pages(&out).is_err());
        assert!(
            std::fs::symlink_metadata(&target).is_err(),
            "target created"
        );
        assert_eq!(names(&out), ["cxlchar-all.1"]);
        // The folder itself a link to a folder: nothing written into it.
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = d.path().join("linkdir");
        symlink(&real, &link).unwrap();
        assert!(man_pages(&link).is_err());
        assert!(names(&real).is_empty());
    }

    #[test]
    fn a_fifo_named_like_a_page_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("man");
        std::fs::create_dir(&out).unwrap();
        let fifo =
            std::ffi::CString::new(out.join("cxlchar-mem-latency.1").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = out.clone();
        std::thread::spawn(move || {
            let _ = tx.send(man_pages(&dir).map_err(|e| format!("{e:#}")));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("man --out blocked on a FIFO");
        let e = r.unwrap_err();
        assert!(e.contains("FIFO"), "{e}");
        assert_eq!(names(&out), ["cxlchar-mem-latency.1"]);
    }
}
