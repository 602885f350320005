//! Command-line interface (clap derive). Values are validated as they are parsed, so a
//! bad CPU list, target spec or size fails before anything runs.

use bench_core::memory::TargetArg;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Characterize the memory, interconnect and device costs of a machine and write
/// them down as model parameters (params.json).
///
/// Every figure is measured in this run with pinned threads and a calibrated cycle
/// timer, and written with its distribution, method and environment. What this machine
/// lacks is reported as skipped, with the reason.
///
/// While a measuring command runs with stderr on a terminal, it first prints its plan
/// (each family on each target, its points and planned seconds; `--plan` prints only
/// that), then a progress bar on stderr shows the benchmark and target being measured,
/// its last message, the elapsed time and an ETA (the plan's seconds left at the pace
/// observed so far); it is cleared before the results go to stdout, and not drawn when
/// stderr is not a terminal. A closed stdout (`| head`) ends any command quietly with
/// status 0.
#[derive(Debug, Parser)]
#[command(name = "cxlchar", version = crate::build_info::VERSION, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands that are not benchmarks, and `all`. The benchmark commands (`mem ...`,
/// `pcie mmio`, `pool ...`, `verbs`, `gpu`) and the options they add to `all` come from
/// the registry ([`crate::registry`]), which places them between `all` and `targets`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run every benchmark family on every target and write params.json.
    ///
    /// Targets default to `anon` plus every NUMA node with memory and no CPUs (far
    /// memory: CXL or not, as `cxlchar targets` shows; a far node that is not CXL gives a
    /// `far_not_cxl` warning). dax, file and cxl: targets are only measured when named with
    /// --target, and only with --allow-write (their contents are overwritten). An
    /// interleaved target (`interleave:0,1`) brings its nodes as `node:N` targets too,
    /// so its figures stand next to those of its parts.
    #[command(display_order = 0)]
    All {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
    },
    /// PCIe: device discovery and MMIO costs on a BAR.
    #[command(subcommand)]
    Pcie(PcieCommand),
    /// List the memory targets this machine offers (NUMA nodes, interleave and the
    /// weighted interleave weights, dax devices, hugepages), its PCI devices and whether
    /// each PCIe link runs at what both ends can do.
    #[command(display_order = 100)]
    Targets(InfoArgs),
    /// Print the captured environment and the warnings it raises (a degraded PCIe link
    /// among them).
    #[command(display_order = 101)]
    Env(InfoArgs),
    /// Evaluate the seed papers' models (000, 001, 003, 004) from a params.json, with
    /// what-if re-evaluation. Exit 0 when a model evaluated, 3 when none could (each
    /// refusal names the missing key and the command that produces it), 2 on bad input.
    #[command(display_order = 102)]
    Model(ModelArgs),
    /// Check a params.json against an acceptance spec (TOML bounds). Exit 0 all pass,
    /// 1 a bound failed, 3 a required key not measured (and nothing failed), 2 bad input.
    /// On a fleet file (--fleet-out): every host and every measured pair checked, a verdict
    /// each, one JUnit testsuite per host and pair; the exit status is the worst. What the
    /// firmware advertises is bounded as keys too: `hmat_lat_ratio@node:1 >= 0.8` (advertised
    /// / measured latency), `hmat_bw_ratio@node:1 >= 0.8` (measured / advertised bandwidth),
    /// `interleave_gain_ratio@interleave:0=4,1=1` (docs/firmware.md).
    #[command(display_order = 103)]
    Check(CheckArgs),
    /// Compare two params.json files per key and per measurement, against the run-to-run
    /// noise recorded in their distributions; warns when the environments differ. Two
    /// fleet files: hosts matched by name, pairs by kind and host pair.
    #[command(display_order = 104)]
    Diff(DiffArgs),
    /// Draw SVG charts of a params.json (latency vs size, and bandwidth, loaded latency,
    /// flush costs and core-to-core heatmaps when the file has them). A fleet file: the
    /// host x host heatmaps of its pairs.
    #[command(display_order = 105)]
    Plot(PlotArgs),
    /// Write one self-contained HTML page of a params.json, answer first: with --spec the
    /// verdict, then the headline figures (latency and bandwidth per level and target, GPUs
    /// by name), every chart inline, then the details (acceptance results, self-checks,
    /// keys, warnings grouped with their fixes, environment, skipped entries). No network: nothing outside the file is referenced. A fleet
    /// file: hosts, each key's distribution across hosts with its outliers (median and
    /// MAD), the pair heatmaps, verdicts per host with --spec. Exit 0 written, 2 bad input.
    #[command(display_order = 106)]
    Report(ReportArgs),
    /// Export a params.json for other tools: loaded-latency curves in the Mess
    /// benchmark's format, every key and measurement as OpenMetrics text, measurements as
    /// CSV. Exit 0 written, 2 bad input, 3 --mess and the file has no mem.loaded curve.
    #[command(display_order = 107)]
    Export(ExportArgs),
    /// Print a shell completion script for cxlchar (every command, benchmark commands
    /// included), e.g. `cxlchar completions bash > /etc/bash_completion.d/cxlchar`.
    #[command(display_order = 120)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of cxlchar, or with --out write cxlchar.1 and one page
    /// per subcommand (cxlchar-mem-latency.1, ...) into a directory.
    #[command(display_order = 121)]
    Man(ManArgs),
}

/// Options of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The params.json to report.
    #[arg(value_name = "PARAMS_JSON")]
    pub params: PathBuf,
    /// The HTML file to write (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Also show the acceptance results of this spec (TOML, as `cxlchar check --spec`).
    #[arg(long, value_name = "SPEC_TOML")]
    pub spec: Option<PathBuf>,
}

/// Options of `export` (at least one of --mess, --openmetrics, --csv).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("formats").required(true).multiple(true)
    .args(["mess", "openmetrics", "csv"])))]
// The usage in --help on two lines, which clap does not wrap (an error's usage stays
// clap's, naming the options given).
#[command(
    help_template = "{before-help}{about-with-newline}\n{usage-heading} cxlchar \
    export [OPTIONS] <PARAMS_JSON>, one or more of\n       --mess <DIR> | --openmetrics \
    <FILE> | --csv <FILE>\n\n{all-args}{after-help}"
)]
pub struct ExportArgs {
    /// The params.json to read.
    #[arg(value_name = "PARAMS_JSON")]
    pub params: PathBuf,
    /// Write the `mem.loaded` curves as Mess bandwidth-latency curves into DIR (created if
    /// absent): `DIR/<target>/bwlat_<P>.txt` per target and traffic mix, P the mix's read
    /// percentage rounded to an even integer as Mess's readers round (3:1 -> 80, 2:1 ->
    /// 75 -> bwlat_76, 1:1 -> 67 -> bwlat_68; old files: read 100, read-write 67), lines
    /// `MB/s<TAB>latency`, no header, highest bandwidth first, plus DIR/README.txt saying
    /// where every number comes from. Bandwidth is the traffic threads' injected bandwidth
    /// x 1000 (bytes loaded + stored, no RFO, no chase, no uncore counters); latency the
    /// chase's p50, in cycles (see --cpu-ghz) or ns (--mess-latency ns). Nothing is
    /// interpolated. Nothing is written through a symbolic link below DIR (refused), and
    /// a refused or failed export removes every file and folder it created.
    #[arg(long, value_name = "DIR")]
    pub mess: Option<PathBuf>,
    /// Write every params key (gauges `cxlchar_<key>`, labels key, target and noisy) and
    /// every measurement (summaries `cxlchar_measurement_<unit>`, quantiles 0 = min, 0.5,
    /// 0.9, 0.99, 0.999, 1 = max, labelled disturbed where counters were recorded) as
    /// OpenMetrics text to FILE (`-`: stdout). Values keep the
    /// key names' units (ns, GB/s, bytes): `# UNIT` only for bytes, OpenMetrics' base unit.
    #[arg(long, value_name = "FILE")]
    pub openmetrics: Option<PathBuf>,
    /// Write the measurements as CSV to FILE (`-`: stdout): one row per measurement, the
    /// columns of `--format csv` (the last, `disturbed`, true where the figure stayed
    /// disturbed); text cells quoted, control characters escaped, a cell
    /// that would start a spreadsheet formula prefixed with `'`.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// CPU frequency in GHz for the Mess latency column in cycles (cycles = ns x GHz).
    /// Default: the TSC frequency the run calibrated (params.json timer.freq_hz; the
    /// nominal frequency on an invariant TSC), else the `@ N GHz` of the CPU model name;
    /// README.txt says which was used. Give the same frequency to the Mess simulator as
    /// the curves' frequency. Needs --mess, and a latency in cycles.
    #[arg(long, value_name = "GHZ", requires = "mess")]
    pub cpu_ghz: Option<f64>,
    /// Unit of the Mess latency column: `cycles` (Mess's documented format and its
    /// standalone simulator) or `ns` (its ZSim-integrated reader, which converts itself).
    /// Needs --mess.
    #[arg(long, value_enum, value_name = "UNIT", requires = "mess", default_value_t = crate::export::mess::LatencyUnit::Cycles)]
    pub mess_latency: crate::export::mess::LatencyUnit,
}

/// Options of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page into this directory (created if absent) instead of printing the
    /// top page; the files written are listed on stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Options of `model`.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The params.json to read.
    #[arg(value_name = "PARAMS_JSON")]
    pub params: PathBuf,
    /// Override a key: KEY=VALUE (also supplies a key the file lacks) or KEY*FACTOR;
    /// repeat for several. Every output is shown beside its baseline.
    #[arg(long = "what-if", value_name = "KEY=VALUE|KEY*FACTOR", value_parser = crate::consumers::model::parse_what_if)]
    pub what_if: Vec<crate::consumers::model::WhatIf>,
    /// Evaluate only this model (repeat for several), e.g. 004-injection.
    #[arg(long, value_name = "ID")]
    pub model: Vec<String>,
    /// Seed 000's message baseline: `network` (MPI keys supplied with --what-if, else RDMA
    /// verbs) or `shm` (shared-memory messaging through the pool stands in for MPI).
    #[arg(long, value_enum, value_name = "BASELINE", default_value_t = crate::consumers::model::Baseline::Network)]
    pub baseline: crate::consumers::model::Baseline,
    /// Seed 000's workload for its data-access model (000-access, eqs. (3)-(10)): a TOML
    /// file of the workload's PAPI metrics, MPI trace and traced load samples
    /// (docs/consumers.md shows one). Without it, 000-access is refused.
    #[arg(long, value_name = "TOML")]
    pub workload: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Options of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The acceptance spec (TOML; see docs/consumers.md); repeat for several
    /// (`--spec a.toml --spec b.toml`): each is checked and shown on its own, the exit
    /// status is the worst.
    #[arg(long, value_name = "SPEC_TOML", required = true)]
    pub spec: Vec<PathBuf>,
    /// The params.json to check. Only one: a spec given here (`--spec *.toml` expanded
    /// by the shell) is refused with the advice to repeat --spec.
    #[arg(value_name = "PARAMS_JSON", required = true, num_args = 1..)]
    pub params: Vec<PathBuf>,
    /// Also write the results as JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Options of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first (reference) params.json.
    #[arg(value_name = "A_JSON")]
    pub a: PathBuf,
    /// The second params.json.
    #[arg(value_name = "B_JSON")]
    pub b: PathBuf,
    /// Show every row, also those within the noise.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
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

/// PCIe commands that are not benchmarks (`pcie mmio` comes from the registry).
#[derive(Debug, Subcommand)]
pub enum PcieCommand {
    /// Every PCI device: ids, driver, NUMA node, link speed/width, memory BARs and WC.
    List(InfoArgs),
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

/// The `--help` heading of the options every measuring command shares ([`RunArgs`]).
pub const COMMON_HEADING: &str = "Common options (every measuring command)";

/// Options shared by every measuring command. Each option's first paragraph is its short
/// help: a measuring command's `--help` shows only that (after the command's own options),
/// `all --help` the whole text ([`crate::help`]).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = COMMON_HEADING)]
pub struct RunArgs {
    /// Write params.json here (atomically: a failed run leaves no file and keeps an old one).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Short run: fewer points and samples, the same methods and working sets, so each key
    /// measures what it measures in a full run.
    #[arg(long)]
    pub quick: bool,
    /// Memory target; repeat for several: anon, thp, hugetlb[:2M|:1G], node:N,
    /// interleave:A,B[,...], interleave:A=wA,B=wB, dax:/dev/daxX.Y, file:PATH, cxl:regionN,
    /// cxl:memN.
    ///
    /// interleave:A,B[,...] is MPOL_INTERLEAVE; interleave:A=wA,B=wB is weighted (Linux
    /// 6.9+; the weights must be the kernel's current ones, see `cxlchar targets`).
    /// cxl:regionN and cxl:memN name a CXL region, or a memory device in one region, by
    /// its kernel name: measured as the region's devdax device, else as the NUMA node it
    /// was onlined into; each measurement's placement names the region, its memory devices
    /// and their serials. dax and file targets (and a cxl: target measured as its devdax
    /// device) are overwritten: they need --allow-write.
    #[arg(long = "target", short = 't', value_name = "SPEC", value_parser = parse_target)]
    pub targets: Vec<TargetArg>,
    /// CPUs to measure on (list/ranges, e.g. 0 or 2-3); the first runs single-thread tests.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpu: Option<CpuList>,
    /// Output format on stdout: table, json, csv or markdown.
    ///
    /// `table` prints the run's header and a summary of under 40 lines (latency and
    /// bandwidth by level and target, far memory, GPU, core-to-core, self-checks, warnings
    /// counted by code); --verbose adds the full tables.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// With `--format table`: print the full tables (every key, measurement, counter,
    /// skipped benchmark and warning in full) above the summary.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Seed of the random chase orders (same seed, same chains).
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Allow writing into dax and file targets and PCI BARs (destroys their contents).
    #[arg(long)]
    pub allow_write: bool,
    /// Accept a partial result: exit 0 and write --out when something was measured.
    ///
    /// Without it, a run where a benchmark or target asked for was skipped exits 4 and
    /// writes no --out; `all` is always best effort. See docs/safety.md.
    #[arg(long)]
    pub best_effort: bool,
    /// Print the run's plan (each family on each target, its points and planned seconds)
    /// and measure nothing.
    ///
    /// The seconds come from what each point does: bytes at the expected bandwidth,
    /// samples x sample time, round trips, pages populated. `--format json` gives each
    /// family's planned_s and the run's total_s. Every run on a terminal prints the same
    /// plan first; params.json records it beside what each family took. `all --quick
    /// --plan` says how long a quick run takes here.
    #[arg(long)]
    pub plan: bool,
    /// With --plan: plan for another machine from a copy of its sysfs tree.
    ///
    /// ROOT/sys/devices/system/{cpu,node}, as ci/lab/sysfs-snapshot.py writes one: its
    /// CPUs, caches, sockets, nodes and memory, and its GPUs (ROOT/sys/bus/pci/devices).
    #[arg(long, value_name = "ROOT", requires = "plan")]
    pub sysfs: Option<PathBuf>,
    /// Fit the run into this time (e.g. 90s, 5m): fewer samples, never smaller working
    /// sets.
    ///
    /// When the plan is longer, every family takes fewer samples and fewer rungs of the
    /// thread ladder (never smaller working sets, never other methods); the cut is
    /// printed, warned (`budget_cut`) and recorded in params.json's plan.
    #[arg(long, value_name = "DURATION", value_parser = bench_core::units::parse_duration)]
    pub budget: Option<std::time::Duration>,
    /// Fleet runs under a launcher.
    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// The `--help` heading of the fleet options.
pub const FLEET_HEADING: &str = "Fleet (under srun or mpirun; see docs/fleet.md)";

/// Options of a fleet run: cxlchar started by `srun` or `mpirun`, one process per rank
/// (docs/fleet.md).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = FLEET_HEADING)]
pub struct FleetArgs {
    /// Run as one rank of the launcher's job; rank 0 writes every host's params and the
    /// pair matrices into FILE.
    ///
    /// The lowest rank of each host measures it (hosts of one machine one after the
    /// other), the hosts pair up for --fleet-pairs, and rank 0 writes FILE atomically (no
    /// file when a rank fails or is lost). Rank, size and rank 0's host come from the
    /// launcher's environment (SLURM_*, OMPI_COMM_WORLD_*, PMI_*). A rank obeys only a rank
    /// 0 that proves the job's key (export the same random CXLCHAR_FLEET_KEY to every rank
    /// where the launcher gives no secret: Slurm across hosts); see docs/safety.md.
    #[arg(long, value_name = "FILE")]
    pub fleet_out: Option<PathBuf>,
    /// Pairwise measurements between hosts: verbs, pool or none (default: verbs,pool for
    /// `all`, none for other commands).
    ///
    /// In rounds, each host in one pair at a time: `verbs` (RDMA latency and bandwidth
    /// between every pair of hosts with a device), `pool` (pool messaging between hosts
    /// that map the same CXL pool, found by the devices' serials; needs --allow-write),
    /// `none`.
    #[arg(
        long,
        value_name = "LIST",
        value_enum,
        value_delimiter = ',',
        requires = "fleet_out"
    )]
    pub fleet_pairs: Option<Vec<FleetPair>>,
    /// Offset into each shared pool of the window the pool pairs use (pool msg's --offset);
    /// needs --fleet-out.
    ///
    /// Each rank takes the window from its own command line; it must lie inside the pool.
    #[arg(long, value_name = "OFFSET", default_value = "0", requires = "fleet_out", value_parser = bench_core::units::parse_offset)]
    pub fleet_pool_offset: u64,
    /// Length of that window (pool msg's --len); needs --fleet-out.
    #[arg(long, value_name = "SIZE", default_value = "32M", requires = "fleet_out", value_parser = bench_core::units::parse_positive_size)]
    pub fleet_pool_len: usize,
    /// A rank silent this long is lost and the job fails; also how long rank 0 waits for
    /// every rank to connect (e.g. 60s, 2m); needs --fleet-out.
    ///
    /// A rank sends a heartbeat while it runs; one that sends none for this long is lost
    /// and the job fails on every rank.
    #[arg(long, value_name = "DURATION", default_value = "60s", requires = "fleet_out", value_parser = bench_core::units::parse_duration)]
    pub fleet_timeout: std::time::Duration,
    /// TCP port of rank 0's rendezvous (default: one of eight derived from the job id);
    /// needs --fleet-out.
    #[arg(long, value_name = "PORT", requires = "fleet_out", value_parser = clap::value_parser!(u16).range(1..))]
    pub fleet_port: Option<u16>,
}

/// A pair kind of --fleet-pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FleetPair {
    /// RDMA verbs latency and bandwidth.
    Verbs,
    /// Pool messaging through a shared CXL pool.
    Pool,
    /// No pairs.
    None,
}

fn parse_target(s: &str) -> Result<TargetArg, String> {
    s.parse().map_err(|e: bench_core::CoreError| e.to_string())
}

/// A parsed `--cpu` list (a newtype, so clap treats it as one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpus(s: &str) -> Result<CpuList, String> {
    bench_core::pin::parse_user_cpu_list(s)
        .map(CpuList)
        .map_err(|e| e.to_string())
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
