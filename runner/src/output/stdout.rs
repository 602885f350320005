//! Writing to stdout as Unix tools do: a reader that went away (`cxlchar export
//! --openmetrics - p.json | head`) ends the command quietly with status 0, as ripgrep
//! does, instead of an error about a broken pipe.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe returns `EPIPE`
//! ([`std::io::ErrorKind::BrokenPipe`]); every text cxlchar prints on stdout goes through
//! [`print()`], and `main` turns an error caused by a broken pipe into a quiet exit 0
//! ([`is_broken_pipe`]). A measuring command whose reader left still writes `--out`.

use anyhow::{Context, Result};
use std::io::Write;

/// Writes `text` to stdout and flushes it; the error of a closed stdout keeps its
/// `BrokenPipe` cause ([`is_broken_pipe`]).
pub fn print(text: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_ref())
        .and_then(|()| out.flush())
        .context("writing to stdout")
}

/// Whether `e` (or one of its causes) is a write to a pipe whose reader has gone.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_found_below_its_context() {
        let e = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing to stdout");
        assert!(is_broken_pipe(&e));
        let other = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::NotFound))
            .context("writing to stdout");
        assert!(!is_broken_pipe(&other));
        assert!(!is_broken_pipe(&anyhow::anyhow!("bad input")));
    }
}
