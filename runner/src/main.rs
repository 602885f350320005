//! `cxlchar`: the command-line runner. Parses and validates the command line, runs the
//! benchmark families on the chosen targets, and writes params.json and a readable
//! report.

mod cli;
mod consumers;
mod exit;
mod export;
mod fleet;
mod gpu;
mod inventory;
mod manual;
mod output;
mod plot;
mod pool;
mod progress;
mod registry;
mod report;
mod run;

use anyhow::{Context, Result};
use clap::FromArgMatches;
use cli::{Cli, Command, PcieCommand, RunArgs};
use export::Exporter;
use run::Plan;
use std::io::Write;

/// Runs the plan, prints its params document and writes `--out` when what was asked was
/// measured (docs/safety.md): nothing measured exits 3 and a skipped part exits 4
/// (unless `best_effort`), both leaving `--out` as it was. A benchmark that failed fails
/// the run: nothing is written.
///
/// With `--fleet-out` this process is one rank of a launcher job ([`fleet::measure`]);
/// `pairs_by_default`: the fleet's pairwise matrices run unless `--fleet-pairs` says
/// otherwise.
fn measure(args: &RunArgs, plan: Plan, best_effort: bool, pairs_by_default: bool) -> Result<()> {
    if args.fleet.fleet_out.is_some() {
        return fleet::measure(args, plan, best_effort, pairs_by_default);
    }
    let outcome = run::execute(args, plan)?;
    let file = &outcome.file;
    let text = export::for_format(args.format).render(file)?;
    let refusal = refusal(&outcome, best_effort);
    let json = match (&refusal, &args.out) {
        (None, Some(_)) => Some(export::json::JsonExporter.render(file)?),
        _ => None,
    };
    // The report first: once `--out` is in place nothing is left that can fail, and a
    // signal exits 0 (the run is complete, `--out` holds it).
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
        .context("writing to stdout")?;
    drop(stdout);
    if let (Some(out), Some(json)) = (&args.out, &json) {
        export::json::write_result(out, json, 0)?;
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
            eprintln!("wrote {}", out.display());
        }
    }
    Ok(())
}

/// Why a run's outcome is not what was asked: nothing measured (exit 3), or a part
/// skipped without `best_effort` (exit 4); `None`: it is.
fn refusal(outcome: &run::Outcome, best_effort: bool) -> Option<exit::Exit> {
    if outcome.measured_nothing() {
        Some(exit::Exit {
            code: exit::EXIT_NOTHING_MEASURED,
            message: "nothing was measured: every benchmark or target was skipped (reasons above)"
                .into(),
        })
    } else if outcome.skipped_whole > 0 && !best_effort {
        Some(exit::Exit {
            code: exit::EXIT_PARTIAL,
            message: format!(
                "partially measured: {} benchmark(s) or target(s) asked for were skipped (reasons above); fix them or pass --best-effort to accept a partial result",
                outcome.skipped_whole
            ),
        })
    } else {
        None
    }
}

fn main_inner() -> Result<()> {
    let matches = registry::command().get_matches();
    if let Some(r) = registry::dispatch(&matches) {
        return r;
    }
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|e| e.format(&mut registry::command()))
        .unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::All { run } => registry::all(
            &run,
            matches.subcommand_matches("all").expect("matched `all`"),
        ),
        Command::Pcie(PcieCommand::List(a)) => inventory::pci(a.format),
        Command::Targets(a) => inventory::targets(a.format),
        Command::Env(a) => inventory::env(a.format),
        Command::Model(a) => std::process::exit(consumers::run(|| consumers::model_cmd(&a))),
        Command::Check(a) => std::process::exit(consumers::run(|| consumers::check_cmd(&a))),
        Command::Diff(a) => std::process::exit(consumers::run(|| consumers::diff_cmd(&a))),
        Command::Export(a) => std::process::exit(export::command::run(&a)),
        Command::Plot(a) => {
            let file = plot::load(&a.file)?;
            let outcome = plot::plot(&file, &a.out)?;
            for p in &outcome.written {
                println!("{}", p.display());
            }
            for s in &outcome.skipped {
                eprintln!("skipped {s}");
            }
            Ok(())
        }
        Command::Report(a) => std::process::exit(consumers::run(|| report::report_cmd(&a))),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            manual::completions(shell, &mut script);
            std::io::stdout()
                .lock()
                .write_all(&script)
                .context("writing to stdout")
        }
        Command::Man(a) => {
            let mut text = Vec::new();
            match &a.out {
                Some(dir) => {
                    for p in manual::man_pages(dir)? {
                        writeln!(text, "{}", p.display())?;
                    }
                }
                None => manual::man_page(&mut text)?,
            }
            std::io::stdout()
                .lock()
                .write_all(&text)
                .context("writing to stdout")
        }
    }
}

fn main() {
    // SIGINT/SIGTERM remove unfinished temporary and pool files, then exit 130/143.
    if let Err(e) = bench_core::cleanup::install() {
        eprintln!("warning: no signal cleanup: {e}");
    }
    if let Err(e) = main_inner() {
        eprintln!(
            "error: {}",
            output::text::printable_lines(&format!("{e:#}"))
        );
        std::process::exit(exit::code_of(&e));
    }
}
