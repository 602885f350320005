//! What a run measures, before anything is measured: the machine (its topology and the
//! run's CPUs, or another machine's sysfs tree), the targets named or found, the options a
//! configuration sees, and the plan's benchmarks. Read by the run and by its schedule.
//! A target, CPU list or sysfs tree this machine cannot give is bad input (exit 2,
//! [`crate::exit::invalid`]).

use crate::cli::RunArgs;
use crate::exit::invalid;
use anyhow::{anyhow, Result};
use bench_core::bench::{Benchmark, Options};
use bench_core::effort::Effort;
use bench_core::memory::{TargetArg, TargetSpec};
use bench_core::params::Skipped;
use bench_core::topology::Topology;

/// What to run.
pub struct Plan {
    /// Benchmarks: memory benchmarks run on each target, then device benchmarks once
    /// each ([`Benchmark::subject`]).
    pub benches: Vec<Box<dyn Benchmark>>,
    /// Benchmarks or families reported as skipped as a whole.
    pub skipped: Vec<Skipped>,
    /// Add far-memory NUMA nodes to the default targets.
    pub far_nodes_by_default: bool,
    /// Measure each node of an `interleave:` target as `node:N` too
    /// ([`bench_core::bench::Setup::interleave_parts`]).
    pub interleave_parts: bool,
}

/// How a target's keys are named in the flat params map (`run::assemble_params`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyNaming {
    /// Local memory (and device subjects): plain names, qualified and unqualified.
    Local,
    /// Far memory (a memory-only node, a dax device): far names (`cxl_lat_ns`),
    /// qualified and unqualified.
    Far,
    /// An interleaved target: qualified only (`mem_bw_gbs@interleave:0,1`), with far
    /// names when every node is far. It is neither plain local nor plain far memory, so
    /// it never gives an unqualified key (nor a `cxl_*_factor`).
    Interleaved {
        /// Every node of the interleave is far memory.
        far: bool,
    },
}

impl KeyNaming {
    /// The naming of a memory target on this machine.
    pub fn of(target: &TargetSpec, topo: &Topology) -> KeyNaming {
        let far = target.is_far_memory(topo);
        if target.is_interleaved() {
            KeyNaming::Interleaved { far }
        } else if far {
            KeyNaming::Far
        } else {
            KeyNaming::Local
        }
    }

    pub(crate) fn far(self) -> bool {
        matches!(self, KeyNaming::Far | KeyNaming::Interleaved { far: true })
    }
}

/// The targets of a run: those named, or `anon` plus (for `all`) every memory-only node.
/// With `interleave_parts`, each node of an `interleave:` target follows it as `node:N`
/// unless named already.
pub fn resolve_targets(
    args: &RunArgs,
    topo: &Topology,
    far_by_default: bool,
    interleave_parts: bool,
) -> Result<Vec<TargetSpec>> {
    let targets = if args.targets.is_empty() {
        let mut t = vec![TargetSpec::Anon];
        if far_by_default {
            t.extend(
                topo.nodes
                    .iter()
                    .filter(|n| n.likely_far_memory)
                    .map(|n| TargetSpec::Node(n.id)),
            );
        }
        t
    } else {
        let mut t: Vec<TargetSpec> = Vec::new();
        for named in &args.targets {
            // `cxl:regionN` / `cxl:memN` become the dax device or node behind them.
            let s = &named.resolve(topo).map_err(|e| invalid(e.into()))?;
            if let TargetArg::Cxl(_) = named {
                eprintln!(
                    "{named} is {s}: {}",
                    bench_core::cxl::describe_shares(&bench_core::memory::backing_of(s, topo))
                );
            }
            if !t.contains(s) {
                t.push(s.clone());
            }
            if let (true, TargetSpec::Interleave(il)) = (interleave_parts, s) {
                for n in il.nodes() {
                    let part = TargetSpec::Node(*n);
                    if !t.contains(&part)
                        && !args.targets.contains(&TargetArg::Target(part.clone()))
                    {
                        t.push(part);
                    }
                }
            }
        }
        t
    };
    for t in &targets {
        t.validate(topo).map_err(|e| invalid(e.into()))?;
        t.check_write(bench_core::memory::Access {
            allow_write: args.allow_write,
            force: false,
        })
        .map_err(|e| invalid(e.into()))?;
    }
    Ok(targets)
}

/// The shared options as a configuration sees them (the named targets resolved on this
/// machine: a `cxl:` name is the target behind it; the topology is read only for one).
/// A plan for another machine (`--plan --sysfs ROOT`) sees that machine.
pub fn options(run: &RunArgs) -> Result<Options> {
    let topo = std::cell::OnceCell::new();
    let read = || match &run.sysfs {
        Some(root) => Topology::read(root),
        None => Topology::system(),
    };
    let resolve = |t: &TargetArg| match t {
        TargetArg::Target(spec) => Ok(spec.clone()),
        TargetArg::Cxl(name) => name
            .resolve(topo.get_or_init(read))
            .map_err(|e| invalid(e.into())),
    };
    let cpus = match &run.sysfs {
        Some(_) => machine(run)?.cpus,
        None => resolve_cpus(run)?,
    };
    Ok(Options {
        effort: Effort::of(run.quick),
        allow_write: run.allow_write,
        cpus,
        targets: run.targets.iter().map(resolve).collect::<Result<_, _>>()?,
        sysfs: run.sysfs.clone(),
        dma: Some(crate::gpu::dma_probe()),
    })
}

/// The machine a run measures, or plans for: its topology and the run's CPUs.
pub struct Machine {
    /// What sysfs says of it.
    pub topo: Topology,
    /// The run's CPUs (first = the main measuring CPU).
    pub cpus: Vec<usize>,
}

/// This machine with the run's CPUs, or with `--sysfs ROOT` the machine of that tree: its
/// online CPUs (`--cpu` a list of them).
pub fn machine(args: &RunArgs) -> Result<Machine> {
    let Some(root) = &args.sysfs else {
        return Ok(Machine {
            topo: Topology::system(),
            cpus: resolve_cpus(args)?,
        });
    };
    let sys = root.join("sys/devices/system");
    if !sys.join("cpu").is_dir() {
        return Err(invalid(anyhow!(
            "--sysfs {}: no {}: give the root of a copied sysfs tree (ci/lab/sysfs-snapshot.py writes one)",
            root.display(),
            sys.join("cpu").display()
        )));
    }
    // A file of the tree that is not a regular file, too large or out of range is an
    // error naming it, not a wait on a FIFO or a machine misread (bench_core::sysfs).
    let (topo, online) = bench_core::sysfs::checked(|| {
        let online = bench_core::sysfs::read_cpu_list(&sys.join("cpu/online"));
        (Topology::read(root), online)
    })
    .map_err(|e| invalid(anyhow!("--sysfs {}: {e}", root.display())))?;
    let online = online.filter(|v| !v.is_empty()).unwrap_or_else(|| {
        let mut v: Vec<usize> = topo.nodes.iter().flat_map(|n| n.cpus.clone()).collect();
        v.sort_unstable();
        v
    });
    if online.is_empty() {
        return Err(invalid(anyhow!(
            "--sysfs {}: the tree lists no online CPU",
            root.display()
        )));
    }
    let cpus = match &args.cpu {
        Some(c) => {
            bench_core::pin::check_allowed(&c.0, &online)
                .map_err(|e| invalid(anyhow!("--sysfs {}: {e}", root.display())))?;
            c.0.clone()
        }
        None => online,
    };
    Ok(Machine { topo, cpus })
}

/// The CPUs of a run: those named (each must be allowed), or every allowed CPU.
pub fn resolve_cpus(args: &RunArgs) -> Result<Vec<usize>> {
    let allowed = bench_core::pin::allowed_cpus();
    if allowed.is_empty() {
        return Err(anyhow!("cannot read this process's CPU affinity"));
    }
    match &args.cpu {
        Some(c) => {
            bench_core::pin::check_allowed(&c.0, &allowed).map_err(|e| invalid(e.into()))?;
            Ok(c.0.clone())
        }
        None => Ok(allowed),
    }
}
