//! Exit statuses of the measuring commands (docs/safety.md is the one place that states
//! them): 0 what was asked was measured; 1 an error (a benchmark failed, an input or an
//! output was refused); 2 a command-line error (clap); 3 nothing was measured; 4 part of
//! what was asked was skipped (single-family commands without `--best-effort`); 130 and
//! 143 interrupted by SIGINT / SIGTERM before `--out` was in place (a signal after the
//! rename exits 0, the run being complete: [`bench_core::cleanup::complete`]).

use std::fmt;

/// Exit status: the run measured nothing (every benchmark or target skipped).
pub const EXIT_NOTHING_MEASURED: i32 = 3;
/// Exit status: a benchmark or target the user asked for was skipped.
pub const EXIT_PARTIAL: i32 = 4;

/// An error that ends `cxlchar` with a specific exit status (any other error exits 1).
#[derive(Debug)]
pub struct Exit {
    /// The status.
    pub code: i32,
    /// What to print after `error: `.
    pub message: String,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// The exit status of an error: its [`Exit`] code, else 1.
pub fn code_of(e: &anyhow::Error) -> i32 {
    e.downcast_ref::<Exit>().map_or(1, |x| x.code)
}
