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
    /// List the memory targets this machine offers (NUMA nodes, dax devices, hugepages).
    Targets(InfoArgs),
    /// Print the captured environment and the warnings it raises.
    Env(InfoArgs),
    /// Draw SVG charts of a params.json (latency vs size, and bandwidth, loaded latency,
    /// flush costs and core-to-core heatmaps when the file has them).
    Plot(PlotArgs),
}

/// Options of `plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The params.json to draw.
    #[arg(value_name = "PARAMS_JSON")]
    pub file: PathBuf,
    /// Directory for the SVG files (created if absent).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
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

/// Output format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable table.
    Table,
    /// The params.json document.
    Json,
    /// The measurements table as CSV (one row per measurement).
    Csv,
    /// The measurements table as Markdown.
    Markdown,
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
