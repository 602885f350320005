//! Command-line interface (clap derive). Values are validated as they are parsed, so a
//! bad CPU list, target spec or size fails before anything runs.

use bench_core::target::TargetSpec;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// cxlchar: characterize the memory, interconnect and device costs of a machine and write
/// them down as model parameters (params.json).
///
/// Every figure is measured in this run with pinned threads and a calibrated cycle
/// timer, and written with its distribution, method and environment. What this machine
/// lacks is reported as skipped, with the reason.
#[derive(Debug, Parser)]
#[command(name = "cxlchar", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run every benchmark family on every target and write params.json.
    ///
    /// Targets default to `anon` plus every NUMA node with memory and no CPUs (likely
    /// CXL/far memory). dax and file targets are only measured when named with
    /// --target, and only with --allow-write (their contents are overwritten).
    All(RunArgs),
    /// Memory benchmarks.
    #[command(subcommand)]
    Mem(MemCommand),
    /// Shared memory pool benchmarks: atomics, core-to-core, flush costs, messaging.
    #[command(subcommand)]
    Pool(PoolCommand),
    /// List the memory targets this machine offers (NUMA nodes, dax devices, hugepages).
    Targets(InfoArgs),
    /// Print the captured environment and the warnings it raises.
    Env(InfoArgs),
}

/// Memory benchmarks.
#[derive(Debug, Subcommand)]
pub enum MemCommand {
    /// Idle load latency by pointer chase over a working-set sweep (4 KiB .. >= 4x LLC).
    Latency {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Latency options.
        #[command(flatten)]
        lat: LatencyArgs,
    },
}

/// Shared memory pool benchmarks (seeds 000 and 002; see docs/pool.md).
#[derive(Debug, Subcommand)]
pub enum PoolCommand {
    /// Dependent atomic RMW latency (fetch-add, CAS, exchange) vs plain loads on a target.
    Atomics {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Working set (default: 2x LLC, 64 MiB .. 1 GiB; quick: 64 MiB).
        #[arg(long, value_parser = parse_size)]
        size: Option<usize>,
    },
    /// Core-to-core one-way latency matrix (CAS and flag ping-pong) over --cpu.
    C2c {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Cost of writing 1 B..128 KiB and making it visible (clflush, clflushopt, clwb, NT).
    Flush {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// PCI BAR resource file for uncacheable writes (its `_wc` sibling gives
        /// write-combining), e.g. /sys/bus/pci/devices/0000:00:04.0/resource2. Needs
        /// --allow-write.
        #[arg(long, value_name = "FILE")]
        uc_resource: Option<PathBuf>,
    },
    /// Flag and SPSC-ring messaging between two processes (or two hosts) through a pool.
    Msg {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Messaging options.
        #[command(flatten)]
        msg: MsgArgs,
    },
}

/// Options of `pool msg`.
#[derive(Debug, Args, Clone)]
pub struct MsgArgs {
    /// The pool: file:PATH (default: a fresh file in /dev/shm), dax:/dev/daxX.Y or
    /// pci:/sys/bus/pci/devices/<bdf>/resourceN (dax and pci need --allow-write).
    #[arg(long, value_name = "SPEC")]
    pub pool: Option<String>,
    /// Two-sided run: leader (measures, writes results) or follower (answers). Start
    /// both with the same --pool, on one host or on two hosts mapping the same memory.
    /// Without --role, a follower process is forked on this machine.
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// Byte offset of the window in the pool (a multiple of the page size).
    #[arg(long, default_value = "0", value_parser = parse_offset)]
    pub offset: u64,
    /// Window length (default 64 MiB; quick 8 MiB).
    #[arg(long, value_parser = parse_size)]
    pub len: Option<usize>,
    /// Overwrite a window holding foreign data, or take over one in use.
    #[arg(long)]
    pub force: bool,
    /// How long to wait for the peer to show up (e.g. 30s, 2m).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: std::time::Duration,
    /// How long the peer may stay silent mid-run before the run fails.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub peer_timeout: std::time::Duration,
}

fn parse_offset(s: &str) -> Result<u64, String> {
    if s == "0" {
        return Ok(0);
    }
    bench_core::units::parse_size(s).map(|v| v as u64)
}

/// Output format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable table.
    Table,
    /// The params.json document.
    Json,
}

/// Options of `targets` and `env`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Options shared by every measuring command.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Write params.json here (atomically: a failed run leaves no file and keeps an old one).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Short run: fewer sizes and samples, same methods (about a minute for `all`).
    #[arg(long)]
    pub quick: bool,
    /// Memory target; repeat for several. anon | thp | hugetlb[:2M|:1G] | node:N |
    /// dax:/dev/daxX.Y | file:PATH.
    #[arg(long = "target", short = 't', value_name = "SPEC", value_parser = parse_target)]
    pub targets: Vec<TargetSpec>,
    /// CPUs to measure on (list/ranges, e.g. 0 or 2-3); the first runs single-thread tests.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpu: Option<CpuList>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Seed of the random chase orders (same seed, same chains).
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Allow writing into dax and file targets (destroys their contents).
    #[arg(long)]
    pub allow_write: bool,
}

/// Options of the latency sweep.
#[derive(Debug, Args, Clone)]
pub struct LatencyArgs {
    /// Distance between chased lines (bytes; K/M/G suffixes allowed).
    #[arg(long, default_value = "64", value_parser = parse_size)]
    pub stride: usize,
    /// Chase order: tlb-local (blocks of --tlb-locality visited in random order, lines in
    /// random order within; MLC/multichase idle latency) or random (page walks included).
    #[arg(long, value_enum, default_value_t = OrderArg::TlbLocal)]
    pub order: OrderArg,
    /// Block size of the tlb-local order (multichase -T; default 64 pages).
    #[arg(long, default_value = "256K", value_parser = parse_size)]
    pub tlb_locality: usize,
    /// Smallest working set.
    #[arg(long, default_value = "4K", value_parser = parse_size)]
    pub min_size: usize,
    /// Largest working set (default: 1 GiB or the first size >= 4x LLC).
    #[arg(long, value_parser = parse_size)]
    pub max_size: Option<usize>,
    /// Explicit working-set sizes instead of the sweep (comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<usize>>,
}

/// `--order` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// Random blocks of --tlb-locality bytes, random lines within a block.
    TlbLocal,
    /// One random cycle over all lines.
    Random,
}

fn parse_target(s: &str) -> Result<TargetSpec, String> {
    s.parse().map_err(|e: bench_core::CoreError| e.to_string())
}

/// A parsed `--cpu` list (a newtype, so clap treats it as one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpus(s: &str) -> Result<CpuList, String> {
    bench_core::pin::parse_cpu_list(s)
        .map(CpuList)
        .map_err(|e| e.to_string())
}

fn parse_size(s: &str) -> Result<usize, String> {
    let v = bench_core::units::parse_size(s)?;
    if v == 0 {
        return Err("size must be positive".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
