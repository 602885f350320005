//! Names the commit the binary is built from, for `cxlchar --version` and the `tool` of
//! every file it writes: `CXLCHAR_COMMIT` is the checkout's commit (12 hex digits, with
//! `-dirty` when tracked files differed from it as the build ran), a value a packager set
//! in the environment, or `unknown` outside a git checkout (a crate from a registry).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CXLCHAR_COMMIT");
    let commit = match std::env::var("CXLCHAR_COMMIT") {
        Ok(c) if !c.trim().is_empty() => {
            // One word of at most 64 printable characters: it goes into --version and
            // every file's `tool.commit` (schema: no whitespace).
            let c = c.trim().to_string();
            if c.len() > 64 || !c.chars().all(|ch| ch.is_ascii_graphic()) {
                panic!("CXLCHAR_COMMIT must be one word of at most 64 printable ASCII characters, got {c:?}");
            }
            c
        }
        _ => from_git().unwrap_or_else(|| "unknown".into()),
    };
    println!("cargo:rustc-env=CXLCHAR_COMMIT={commit}");
}

/// The commit of the checkout this crate is in, `-dirty` when tracked files differ from
/// it. The build runs again when HEAD, the branch it names or the index changes (a
/// commit, a checkout, `git add`); an edit not yet staged is seen at the next of those.
fn from_git() -> Option<String> {
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let git = |args: &[&str]| -> Option<String> {
        // --no-optional-locks: `status` must not refresh the index, which would make the
        // index newer than this build and run the script again at every build.
        let out = Command::new("git")
            .arg("--no-optional-locks")
            .args(args)
            .current_dir(&dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"])?;
    let mut watch = vec![
        "HEAD".to_string(),
        "index".to_string(),
        "packed-refs".into(),
    ];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(branch);
    }
    for name in watch {
        // Only files that exist: cargo takes a missing one as changed at every build (a
        // branch packed into packed-refs has no file of its own; packed-refs then exists).
        if let Some(p) = git(&["rev-parse", "--git-path", &name]) {
            let p = Path::new(&dir).join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}
