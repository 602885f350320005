//! `cxlchar`: the command-line runner. `main` parses the command line, hands a measuring
//! command's intent to the session ([`session::execute`]) or runs a command that reads
//! files, and exits with the one [`exit::Status`] it returns.

mod agreement;
mod build_info;
mod cli;
mod consumers;
mod document;
mod exit;
mod export;
mod firmware;
mod fleet;
mod gpu;
mod help;
mod inventory;
mod links;
mod machine;
mod manual;
mod output;
mod plot;
mod pool;
mod progress;
mod registry;
mod report;
mod run;
mod schedule;
mod session;

use anyhow::Result;
use clap::FromArgMatches;
use cli::{Cli, Command, PcieCommand};
use exit::Status;
use std::fmt::Write as _;
use std::io::Write;

fn main_inner() -> Result<Status> {
    // A command-line error is clap's (exit 2), with a "did you mean" clap itself misses.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = registry::command()
        .try_get_matches_from(&argv)
        .unwrap_or_else(|e| help::suggest_long(e, &registry::command(), &argv).exit());
    if let Some(r) = registry::dispatch(&matches) {
        let (run, intent) = r?;
        return session::execute(&run, intent);
    }
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|e| e.format(&mut registry::command()))
        .unwrap_or_else(|e| e.exit());
    let done = |r: Result<()>| r.map(|()| Status::Success);
    match cli.command {
        Command::All { run } => {
            let m = matches.subcommand_matches("all").expect("matched `all`");
            session::execute(&run, registry::all(&run, m)?)
        }
        Command::Pcie(PcieCommand::List(a)) => done(inventory::pci(a.format)),
        Command::Targets(a) => done(inventory::targets(a.format)),
        Command::Env(a) => done(inventory::env(a.format)),
        Command::Model(a) => Ok(consumers::run(|| consumers::model_cmd(&a))),
        Command::Check(a) => Ok(consumers::run(|| consumers::check_cmd(&a))),
        Command::Diff(a) => Ok(consumers::run(|| consumers::diff_cmd(&a))),
        Command::Export(a) => Ok(export::command::run(&a)),
        Command::Plot(a) => {
            let file = plot::load(&a.file)?;
            let outcome = plot::plot(&file, &a.out)?;
            let mut listed = String::new();
            for p in &outcome.written {
                writeln!(
                    listed,
                    "{}",
                    output::text::printable(&p.display().to_string())
                )?;
            }
            output::stdout::print(&listed)?;
            for s in &outcome.skipped {
                eprintln!("skipped {s}");
            }
            Ok(Status::Success)
        }
        Command::Report(a) => Ok(consumers::run(|| report::report_cmd(&a))),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            manual::completions(shell, &mut script);
            done(output::stdout::print(&script))
        }
        Command::Man(a) => {
            let mut text = Vec::new();
            match &a.out {
                Some(dir) => {
                    for p in manual::man_pages(dir)? {
                        writeln!(
                            text,
                            "{}",
                            output::text::printable(&p.display().to_string())
                        )?;
                    }
                }
                None => manual::man_page(&mut text)?,
            }
            done(output::stdout::print(&text))
        }
    }
}

fn main() {
    // SIGINT/SIGTERM remove unfinished temporary and pool files, then exit 130/143.
    if let Err(e) = bench_core::cleanup::install() {
        eprintln!("warning: no signal cleanup: {e}");
    }
    let status = main_inner().unwrap_or_else(|e| {
        // A reader that went away (`| head`) ends the command quietly (output::stdout).
        if output::stdout::is_broken_pipe(&e) {
            return Status::Success;
        }
        // Fitted to a terminal's width like every other text for people.
        let text = format!(
            "error: {}",
            output::text::printable_lines(&format!("{e:#}"))
        );
        eprintln!(
            "{}",
            output::width::fit(&text, output::width::stderr_columns())
        );
        exit::status_of(&e)
    });
    std::process::exit(status.code());
}
