//! Executing what a command asked for ([`Intent`]): a plan measured here or as one rank
//! of a launcher job ([`crate::fleet`]), or a peer served. The one place that turns an
//! [`Outcome`] into a refusal (exit 3 or 4, `--out` untouched) and writes `--out`.
//!
//! The commands only plan ([`crate::registry`], [`crate::run::plan`]); `main` parses,
//! hands the intent here and exits with the status.

use crate::cli::RunArgs;
use crate::exit::{Exit, Status};
use crate::export::{self, Exporter};
use crate::run::{Outcome, Plan};
use anyhow::{anyhow, Result};
use bench_core::params::ParamsFile;

/// What a command asks for.
pub enum Intent {
    /// Measure a plan: `best_effort` accepts a partial result; `pairs_by_default` runs the
    /// fleet's pairwise matrices unless `--fleet-pairs` says otherwise (`all`).
    Measure {
        plan: Plan,
        /// Exit 0 with a partial result.
        best_effort: bool,
        /// A fleet run measures its pairs unless told otherwise.
        pairs_by_default: bool,
    },
    /// Serve a peer that measures (`pool msg --role follower`): nothing is measured here.
    Serve(Box<dyn FnOnce() -> Result<()>>),
}

impl Intent {
    /// A plan measured as a single command does: best effort as `--best-effort` says, no
    /// fleet pairs unless asked for.
    pub fn measure(run: &RunArgs, plan: Plan) -> Intent {
        Intent::Measure {
            plan,
            best_effort: run.best_effort,
            pairs_by_default: false,
        }
    }
}

/// Carries out `intent` with the shared options `args`.
pub fn execute(args: &RunArgs, intent: Intent) -> Result<Status> {
    let (plan, best_effort, pairs_by_default) = match intent {
        Intent::Serve(serve) => return serve().map(|()| Status::Success),
        Intent::Measure {
            plan,
            best_effort,
            pairs_by_default,
        } => (plan, best_effort, pairs_by_default),
    };
    if args.plan {
        crate::schedule::print(args, &plan)?;
        return Ok(Status::Success);
    }
    if args.fleet.fleet_out.is_some() {
        let mut plan = Some(plan);
        let mut measure = || -> Result<ParamsFile> {
            let plan = plan
                .take()
                .ok_or_else(|| anyhow!("asked to measure twice"))?;
            let outcome = crate::run::execute(args, plan)?;
            match refusal(&outcome, best_effort) {
                Some(r) => Err(anyhow!(r.message)),
                None => Ok(outcome.file),
            }
        };
        crate::fleet::measure(args, &mut measure, pairs_by_default)?;
        return Ok(Status::Success);
    }
    measure_here(args, plan, best_effort)
}

/// Runs the plan, prints its params document and writes `--out` when what was asked was
/// measured (docs/safety.md): nothing measured exits 3 and a skipped part exits 4
/// (unless `best_effort`), both leaving `--out` as it was. A benchmark that failed fails
/// the run: nothing is written.
fn measure_here(args: &RunArgs, plan: Plan, best_effort: bool) -> Result<Status> {
    let outcome = crate::run::execute(args, plan)?;
    let file = &outcome.file;
    let refusal = refusal(&outcome, best_effort);
    // The summary names the file only where it will be written.
    let written = args.out.as_deref().filter(|_| refusal.is_none());
    let width = crate::output::width::stdout_columns();
    let text = export::for_run(args.format, args.verbose, width, written).render(file)?;
    let json = match (&refusal, &args.out) {
        (None, Some(_)) => Some(export::json::JsonExporter.render(file)?),
        _ => None,
    };
    // The report first: once `--out` is in place nothing is left that can fail, and a
    // signal exits 0 (the run is complete, `--out` holds it).
    // A reader that went away (`| head`) does not lose the run: `--out` is still written
    // and the command ends quietly (crate::output::stdout).
    if let Err(e) = crate::output::stdout::print(&text) {
        if !crate::output::stdout::is_broken_pipe(&e) {
            return Err(e);
        }
    }
    if let (Some(out), Some(json)) = (&args.out, &json) {
        crate::document::write::write_result(out, json, 0)?;
    }
    if let Some(mut r) = refusal {
        if let Some(out) = &args.out {
            r.message
                .push_str(&format!("; {} not written", out.display()));
        }
        return Err(r.into());
    }
    if let Some(out) = &args.out {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            let out = out.display().to_string();
            eprintln!("wrote {}", crate::output::text::printable(&out));
        }
    }
    Ok(Status::Success)
}

/// Why a run's outcome is not what was asked: nothing measured (exit 3), or a part
/// skipped without `best_effort` (exit 4), with every skip and its reason in full (the
/// terminal summary shortens them); `None`: it is.
fn refusal(outcome: &Outcome, best_effort: bool) -> Option<Exit> {
    let reasons: String = outcome
        .file
        .skipped
        .iter()
        .map(|k| match k.target.as_str() {
            "" => format!("\n  {}: {}", k.benchmark, k.reason),
            t => format!("\n  {} on {t}: {}", k.benchmark, k.reason),
        })
        .collect();
    if outcome.measured_nothing() {
        Some(Exit {
            status: Status::NotMeasured,
            message: format!(
                "nothing was measured: every benchmark or target was skipped:{reasons}"
            ),
        })
    } else if outcome.skipped_whole > 0 && !best_effort {
        Some(Exit {
            status: Status::Partial,
            message: format!(
                "partially measured: {} benchmark(s) or target(s) asked for were skipped; fix them or pass --best-effort to accept a partial result:{reasons}",
                outcome.skipped_whole
            ),
        })
    } else {
        None
    }
}
