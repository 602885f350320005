//! `cxlchar`: the command-line runner. Parses and validates the command line, runs the
//! benchmark families on the chosen targets, and writes params.json and a readable
//! report.

mod cli;
mod consumers;
mod export;
mod gpu;
mod inventory;
mod output;
mod plot;
mod pool;
mod run;

use anyhow::{Context, Result};
use bench_core::bench::Benchmark;
use bench_mem::bandwidth::BandwidthBench;
use bench_mem::chase::{ChainLayout, ChaseOrder};
use bench_mem::kernels::{Isa, IsaSet, Kernel};
use bench_mem::latency::LatencyBench;
use bench_mem::loaded::{LoadedLatencyBench, Mix};
use bench_mem::threshold::CopyThresholdBench;
use clap::Parser;
use cli::{
    BandwidthArgs, Cli, Command, IsaArg, KernelArg, LatencyArgs, LayoutArg, MemCommand, MixArg,
    OrderArg, PcieArgs, PcieCommand, RunArgs, VerbsArgs, VerbsWhat,
};
use export::Exporter;
use run::{FamilySkip, Plan};
use std::io::Write;

fn latency_bench(lat: &LatencyArgs) -> Result<LatencyBench> {
    let b = LatencyBench {
        layout: match lat.layout {
            LayoutArg::Randomized => ChainLayout::randomized(lat.slot),
            LayoutArg::Aligned => ChainLayout::aligned(lat.slot),
        },
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
        prefetch_check: !lat.no_prefetch_check,
    };
    b.validate()?;
    Ok(b)
}

/// The bandwidth benchmark for the options, validated against the CPU and `--cpu`.
fn isa_of(i: IsaArg) -> Isa {
    match i {
        IsaArg::Avx512 => Isa::Avx512,
        IsaArg::Avx2 => Isa::Avx2,
        IsaArg::Sse2 => Isa::Sse2,
        IsaArg::Scalar => Isa::Scalar,
    }
}

fn bandwidth_bench(run: &RunArgs, bw: &BandwidthArgs) -> Result<BandwidthBench> {
    let kernels = if bw.kernels.is_empty() {
        Kernel::ALL.to_vec()
    } else {
        bw.kernels
            .iter()
            .map(|k| match k {
                KernelArg::Read => Kernel::Read,
                KernelArg::Write => Kernel::Write,
                KernelArg::NtWrite => Kernel::NtWrite,
                KernelArg::Copy => Kernel::Copy,
                KernelArg::NtCopy => Kernel::NtCopy,
                KernelArg::Memset => Kernel::Memset,
            })
            .collect()
    };
    let b = BandwidthBench {
        kernels,
        isa: bw.isa.map(isa_of),
        threads: bw.threads,
        sizes: bw.sizes.clone(),
    };
    b.validate(IsaSet::detect(), run::resolve_cpus(run)?.len())?;
    Ok(b)
}

/// The MMIO benchmark for `--bar`, validated (a bad BAR is an error before measuring).
fn mmio_bench(run: &RunArgs, pcie: &PcieArgs) -> Result<Option<bench_pcie::mmio::MmioBench>> {
    let Some(bar) = &pcie.bar else {
        return Ok(None);
    };
    let b = bench_pcie::mmio::MmioBench {
        bar: bar.clone(),
        offset: pcie.bar_offset,
        access: bench_pcie::bar::Access {
            allow_write: run.allow_write,
            force: pcie.force,
        },
        root: "/".into(),
    };
    b.validate()?;
    Ok(Some(b))
}

/// The verbs benchmark for `cxlchar verbs` (validated: bad input is an error here).
fn verbs_bench(
    what: Option<VerbsWhat>,
    run: &RunArgs,
    v: &VerbsArgs,
) -> Result<bench_ibverbs::bench::VerbsBench> {
    use bench_ibverbs::config::{Mode, Peer, VerbsConfig};
    let config = VerbsConfig {
        mode: match what {
            None => Mode::All,
            Some(VerbsWhat::Post) => Mode::Post,
            Some(VerbsWhat::Lat) => Mode::Lat,
            Some(VerbsWhat::Bw) => Mode::Bw,
        },
        device: v.device.clone(),
        gid_index: v.gid_index,
        peer: match (&v.connect, v.server) {
            (Some(host), _) => Peer::Connect {
                host: host.clone(),
                port: v.port,
            },
            (None, true) => Peer::Server { port: v.port },
            (None, false) => Peer::Loopback,
        },
        target: run
            .targets
            .first()
            .cloned()
            .unwrap_or(bench_core::target::TargetSpec::Anon),
        timeout: v.timeout,
    };
    config.validate()?;
    Ok(bench_ibverbs::bench::VerbsBench { config })
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
        Command::All { run, pcie } => {
            let mut benches: Vec<Box<dyn Benchmark>> = vec![
                Box::new(LatencyBench::default()),
                Box::new(BandwidthBench::default()),
                Box::new(CopyThresholdBench::default()),
                Box::new(LoadedLatencyBench::default()),
                Box::new(bench_cxl::atomics::AtomicsBench::default()),
                Box::new(bench_cxl::c2c::C2cBench),
                Box::new(bench_cxl::flush::FlushBench {
                    uc_resource: None,
                    allow_write: run.allow_write,
                    ..Default::default()
                }),
                Box::new(bench_cxl::msg::MsgBench::default()),
            ];
            let mut family_skips = Vec::new();
            let mut device_benches: Vec<Box<dyn bench_core::bench::DeviceBenchmark>> = Vec::new();
            // GPUs: planned after discovery; no driver or no device is one skip.
            let g = gpu::part(bench_gpu::config::GpuConfig::default())?;
            benches.extend(g.benches);
            device_benches.extend(g.device_benches);
            family_skips.extend(g.skip);
            match mmio_bench(&run, &pcie)? {
                Some(b) => device_benches.push(Box::new(b)),
                None => family_skips.push(FamilySkip {
                    benchmark: "pcie.mmio",
                    reason: "no BAR named: MMIO runs only on a BAR given with --bar pci:DOMAIN:BUS:DEV.FN/N (see `cxlchar pcie list`), since device registers can have side effects".into(),
                }),
            }
            if bench_ibverbs::built_with_verbs() {
                // Loopback on the first device with an active port; no device is a skip.
                device_benches.push(Box::new(bench_ibverbs::bench::VerbsBench::default()));
            } else {
                family_skips.push(FamilySkip {
                    benchmark: "verbs",
                    reason: bench_ibverbs::NOT_BUILT.into(),
                });
            }
            measure(
                &run,
                Plan {
                    benches,
                    device_benches,
                    family_skips,
                    far_nodes_by_default: true,
                },
            )
        }
        Command::Mem(MemCommand::Loaded { run, mix }) => {
            let mixes = match mix {
                Some(MixArg::Read) => vec![Mix::Read],
                Some(MixArg::ReadWrite) => vec![Mix::ReadWrite],
                None => vec![Mix::Read, Mix::ReadWrite],
            };
            measure(&run, Plan::single(Box::new(LoadedLatencyBench { mixes })))
        }
        Command::Mem(MemCommand::CopyThreshold { run, isa, threads }) => {
            let b = CopyThresholdBench {
                isa: isa.map(isa_of),
                threads,
            };
            b.validate(run::resolve_cpus(&run)?.len())
                .map_err(anyhow::Error::msg)?;
            measure(&run, Plan::single(Box::new(b)))
        }
        Command::Mem(MemCommand::Bandwidth { run, bw }) => {
            let b = bandwidth_bench(&run, &bw)?;
            measure(&run, Plan::single(Box::new(b)))
        }
        Command::Pcie(PcieCommand::List(a)) => inventory::pci(a.format),
        Command::Pcie(PcieCommand::Mmio { run, pcie }) => {
            let b = mmio_bench(&run, &pcie)?
                .context("cxlchar pcie mmio needs --bar pci:DOMAIN:BUS:DEV.FN/N")?;
            measure(&run, Plan::device(Box::new(b)))
        }
        Command::Mem(MemCommand::Latency { run, lat }) => {
            let b = latency_bench(&lat)?;
            measure(&run, Plan::single(Box::new(b)))
        }
        Command::Pool(p) => pool::run(p),
        Command::Verbs { what, run, verbs } => {
            let b = verbs_bench(what, &run, &verbs)?;
            measure(&run, Plan::device(Box::new(b)))
        }
        Command::Gpu { run, gpu } => gpu::run(&run, &gpu),
        Command::Targets(a) => inventory::targets(a.format),
        Command::Env(a) => inventory::env(a.format),
        Command::Model(a) => std::process::exit(consumers::run(|| consumers::model_cmd(&a))),
        Command::Check(a) => std::process::exit(consumers::run(|| consumers::check_cmd(&a))),
        Command::Diff(a) => std::process::exit(consumers::run(|| consumers::diff_cmd(&a))),
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
    }
}

fn main() {
    if let Err(e) = main_inner() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
