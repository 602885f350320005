//! Exit statuses of every command (docs/safety.md is the one place that states them):
//! [`Status`]. Measuring commands: 0 what was asked was measured; 1 a failure (a benchmark
//! failed, an output was refused, an I/O error); 2 bad input (an unknown or missing
//! option, a bad value, a target, CPU list or count the machine cannot give: [`invalid`]);
//! 3 nothing was measured; 4 part of what was asked was skipped (single-family commands
//! without `--best-effort`); 130 and 143 interrupted by SIGINT / SIGTERM before `--out`
//! was in place (a signal after the rename exits 0, the run being complete:
//! [`bench_core::cleanup::complete`]). Consumers (`model`, `check`, `diff`, `report`,
//! `export`): 0 success; 1 a `check` bound failed; 2 invalid input; 3 the file lacks what
//! was asked.

use std::fmt;

/// How `cxlchar` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: what was asked was done (measured, written, evaluated, every bound passed).
    Success,
    /// 1: an error, or an acceptance bound failed.
    Failed,
    /// 2: the command line or an input file is invalid.
    Invalid,
    /// 3: nothing was measured, or the file lacks what was asked.
    NotMeasured,
    /// 4: part of what was asked was skipped.
    Partial,
}

impl Status {
    /// The process exit status.
    pub fn code(self) -> i32 {
        match self {
            Status::Success => 0,
            Status::Failed => 1,
            Status::Invalid => 2,
            Status::NotMeasured => 3,
            Status::Partial => 4,
        }
    }
}

/// A status reads as its number (`would exit 3`).
impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

/// A status is written into documents (a check's `exit_code`) as its number.
impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.code())
    }
}

/// An error that ends `cxlchar` with a specific status (any other error exits 1).
#[derive(Debug)]
pub struct Exit {
    pub status: Status,
    /// What to print after `error: `.
    pub message: String,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// The status of an error: its [`Exit`] status, else [`Status::Failed`].
pub fn status_of(e: &anyhow::Error) -> Status {
    e.downcast_ref::<Exit>()
        .map_or(Status::Failed, |x| x.status)
}

/// `e` as bad input: it ends `cxlchar` with [`Status::Invalid`] (exit 2), its message the
/// whole chain of `e`. An error that already carries a status keeps it.
pub fn invalid(e: anyhow::Error) -> anyhow::Error {
    if e.downcast_ref::<Exit>().is_some() {
        return e;
    }
    anyhow::Error::new(Exit {
        status: Status::Invalid,
        message: format!("{e:#}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_exits_2_with_its_whole_message_and_a_status_is_kept() {
        let e = invalid(anyhow::anyhow!("node 5 does not exist").context("invalid target"));
        assert_eq!(status_of(&e), Status::Invalid);
        assert_eq!(e.to_string(), "invalid target: node 5 does not exist");
        let partial = anyhow::Error::new(Exit {
            status: Status::Partial,
            message: "partially measured".into(),
        });
        assert_eq!(status_of(&invalid(partial)), Status::Partial);
        assert_eq!(status_of(&anyhow::anyhow!("an I/O error")), Status::Failed);
    }
}
