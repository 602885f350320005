//! `cxlchar`: the command-line runner. Parses and validates the command line, runs the
//! benchmark families on the chosen targets, and writes params.json and a readable
//! report.

mod cli;
mod export;
mod inventory;
mod output;
mod pool;
mod run;

use anyhow::{Context, Result};
use bench_core::bench::Benchmark;
use bench_mem::chase::ChaseOrder;
use bench_mem::latency::LatencyBench;
use clap::Parser;
use cli::{Cli, Command, LatencyArgs, MemCommand, OrderArg, RunArgs};
use export::Exporter;
use run::{FamilySkip, Plan};
use std::io::Write;

fn latency_bench(lat: &LatencyArgs) -> Result<LatencyBench> {
    let b = LatencyBench {
        stride: lat.stride,
        order: match lat.order {
            OrderArg::Random => ChaseOrder::Random,
            OrderArg::TlbLocal => ChaseOrder::TlbLocal {
                locality: lat.tlb_locality,
            },
        },
        min_size: lat.min_size,
        max_size: lat.max_size,
        sizes: lat.sizes.clone(),
        random_at_max: true,
    };
    b.validate()?;
    Ok(b)
}

/// Families this build does not measure yet, reported as skipped in `all`.
fn unimplemented_families() -> Vec<FamilySkip> {
    vec![
        FamilySkip {
            benchmark: "pcie",
            reason: bench_pcie::NOT_IMPLEMENTED.into(),
        },
        FamilySkip {
            benchmark: "verbs",
            reason: bench_ibverbs::NOT_IMPLEMENTED.into(),
        },
        FamilySkip {
            benchmark: "gpu",
            reason: bench_gpu::NOT_IMPLEMENTED.into(),
        },
    ]
}

fn measure(args: &RunArgs, plan: Plan) -> Result<()> {
    measure_checked(args, plan, || Ok(()))
}

/// Like [`measure`], but `check` may fail the run after measuring and before anything is
/// written (a two-sided pool run whose peer died).
fn measure_checked(args: &RunArgs, plan: Plan, check: impl FnOnce() -> Result<()>) -> Result<()> {
    let file = run::execute(args, plan)?;
    check()?;
    let text = export::for_format(args.format).render(&file)?;
    if let Some(out) = &args.out {
        let json = export::json::JsonExporter.render(&file)?;
        export::json::write_atomic(out, &json)?;
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    if let Some(out) = &args.out {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!("wrote {}", out.display());
        }
    }
    Ok(())
}

fn main_inner() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::All(args) => {
            let benches: Vec<Box<dyn Benchmark>> = vec![
                Box::new(LatencyBench::default()),
                Box::new(bench_cxl::atomics::AtomicsBench::default()),
                Box::new(bench_cxl::c2c::C2cBench),
                Box::new(bench_cxl::flush::FlushBench {
                    uc_resource: None,
                    allow_write: args.allow_write,
                }),
                Box::new(bench_cxl::msg::MsgBench::default()),
            ];
            measure(
                &args,
                Plan {
                    benches,
                    family_skips: unimplemented_families(),
                    far_nodes_by_default: true,
                },
            )
        }
        Command::Mem(MemCommand::Latency { run, lat }) => {
            let b = latency_bench(&lat)?;
            measure(
                &run,
                Plan {
                    benches: vec![Box::new(b)],
                    family_skips: vec![],
                    far_nodes_by_default: false,
                },
            )
        }
        Command::Pool(p) => pool::run(p),
        Command::Targets(a) => inventory::targets(a.format),
        Command::Env(a) => inventory::env(a.format),
    }
}

fn main() {
    if let Err(e) = main_inner() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
