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
    All {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Device options.
        #[command(flatten)]
        pcie: PcieArgs,
    },
    /// Memory benchmarks.
    #[command(subcommand)]
    Mem(MemCommand),
    /// PCIe: device discovery and MMIO costs on a BAR.
    #[command(subcommand)]
    Pcie(PcieCommand),
    /// Shared memory pool benchmarks: atomics, core-to-core, flush costs, messaging.
    #[command(subcommand)]
    Pool(PoolCommand),
    /// RDMA verbs (seed 004): post/progress breakdown, ping-pong latency, streaming
    /// bandwidth. Loopback pair in one process by default; --server / --connect HOST for
    /// two processes or hosts.
    Verbs {
        /// What to measure (default: all three).
        #[arg(value_enum)]
        what: Option<VerbsWhat>,
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Verbs options.
        #[command(flatten)]
        verbs: VerbsArgs,
    },
    /// GPU <-> memory DMA (seed 003): host-to-device and device-to-host bandwidth from
    /// pageable, pinned (cuMemAllocHost) and each --target's memory (registered with
    /// cuMemHostRegister), 4 KiB .. 1 GiB, and how 1..k concurrent copies share it. CUDA is
    /// loaded at run time: without a driver or a GPU the family is skipped, with the reason.
    Gpu {
        /// Common options (targets default to anon plus every memory-only NUMA node).
        #[command(flatten)]
        run: RunArgs,
        /// GPU options.
        #[command(flatten)]
        gpu: GpuArgs,
    },
    /// List the memory targets this machine offers (NUMA nodes, dax devices, hugepages).
    Targets(InfoArgs),
    /// Print the captured environment and the warnings it raises.
    Env(InfoArgs),
    /// Evaluate the seed papers' models (000, 001, 003, 004) from a params.json, with
    /// what-if re-evaluation. Exit 0 when a model evaluated, 3 when none could (each
    /// refusal names the missing key and the command that produces it), 2 on bad input.
    Model(ModelArgs),
    /// Check a params.json against an acceptance spec (TOML bounds). Exit 0 all pass,
    /// 1 a bound failed, 3 a required key not measured (and nothing failed), 2 bad input.
    Check(CheckArgs),
    /// Compare two params.json files per key and per measurement, against the run-to-run
    /// noise recorded in their distributions; warns when the environments differ.
    Diff(DiffArgs),
    /// Draw SVG charts of a params.json (latency vs size, and bandwidth, loaded latency,
    /// flush costs and core-to-core heatmaps when the file has them).
    Plot(PlotArgs),
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Options of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The acceptance spec (TOML; see docs/consumers.md).
    #[arg(long, value_name = "SPEC_TOML")]
    pub spec: PathBuf,
    /// The params.json to check.
    #[arg(value_name = "PARAMS_JSON")]
    pub params: PathBuf,
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

/// Memory benchmarks.
#[derive(Debug, Subcommand)]
pub enum MemCommand {
    /// Idle load latency by a pointer chase no prefetcher can learn, over a sweep of touched
    /// working sets from 4 KiB to the DRAM plateau.
    ///
    /// One element per --slot bytes at a random line and 8-byte word of the slot, slots in
    /// random order inside 256 KiB TLB-local blocks, one full lap before timing. Sizes are
    /// touched bytes (distinct lines x 64; memory spanned = size x slot / 64). The sweep stops
    /// where latency has reached a cold lap's (every line flushed) and stayed flat over two
    /// doublings; the DRAM point is 4 x that size (bounded by 4 x the sysfs LLC and the
    /// available memory). There a prefetch self-check compares chains built differently, and
    /// a full-random chase gives the page-walk cost.
    Latency {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Latency options.
        #[command(flatten)]
        lat: LatencyArgs,
    },
    /// Load latency while the other CPUs inject read or read/write traffic, from full
    /// load to idle (11 points per mix): a latency-vs-bandwidth curve like MLC's.
    Loaded {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Traffic mix: read, read-write or both (default both).
        #[arg(long, value_enum)]
        mix: Option<MixArg>,
    },
    /// The block size above which non-temporal copies beat temporal ones in an
    /// all-to-all among P threads (HINT), with the L2/P rule of thumb beside it.
    CopyThreshold {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Force an instruction set (default: the widest the CPU has).
        #[arg(long, value_enum)]
        isa: Option<IsaArg>,
        /// Thread (process) counts to test, comma-separated (default: 1 and all --cpu).
        #[arg(long, value_delimiter = ',')]
        threads: Option<Vec<usize>>,
    },
    /// Read, write, non-temporal write, copy, non-temporal copy and memset bandwidth
    /// (GB = 10^9 B/s; copies count bytes read + written), one thread and all threads.
    Bandwidth {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Bandwidth options.
        #[command(flatten)]
        bw: BandwidthArgs,
    },
}

/// PCIe commands.
#[derive(Debug, Subcommand)]
pub enum PcieCommand {
    /// Every PCI device: ids, driver, NUMA node, link speed/width, memory BARs and WC.
    List(InfoArgs),
    /// MMIO costs on one BAR: uncached read round trip (pcie_rtt_ns); with --allow-write
    /// also uncached writes and write-combining 8..256-byte copies (pio_copy_64b_ns).
    Mmio {
        /// Common options.
        #[command(flatten)]
        run: RunArgs,
        /// Device options (--bar is required here).
        #[command(flatten)]
        pcie: PcieArgs,
    },
}

/// Options naming a device BAR.
#[derive(Debug, Args, Clone)]
pub struct PcieArgs {
    /// A PCI BAR to measure with MMIO: pci:DOMAIN:BUS:DEV.FN/BAR (see `cxlchar pcie list`).
    /// Only reads unless --allow-write.
    #[arg(long, value_name = "pci:D:B:D.F/N", value_parser = parse_bar)]
    pub bar: Option<bench_pcie::bar::BarSpec>,
    /// Offset of the measured window in the BAR (bytes).
    #[arg(long, default_value = "0", value_parser = parse_offset)]
    pub bar_offset: u64,
    /// Measure a BAR even when a kernel driver is bound to its device.
    #[arg(long)]
    pub force: bool,
}

fn parse_bar(s: &str) -> Result<bench_pcie::bar::BarSpec, String> {
    s.parse()
        .map_err(|e: bench_core::pci::BarSpecError| e.to_string())
}

fn parse_offset(s: &str) -> Result<u64, String> {
    bench_core::units::parse_size(s).map(|v| v as u64)
}

/// Options of the bandwidth benchmark.
#[derive(Debug, Args, Clone)]
pub struct BandwidthArgs {
    /// Kernels to run (comma-separated): read, write, nt-write, copy, nt-copy, memset.
    #[arg(long = "kernel", value_delimiter = ',', value_enum)]
    pub kernels: Vec<KernelArg>,
    /// Force an instruction set (default: the widest the CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<IsaArg>,
    /// Threads of the all-threads points (default: one per --cpu).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Footprints to measure instead of the default points (comma-separated; a copy's
    /// footprint is its source plus its destination).
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<usize>>,
}

/// `--kernel` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelArg {
    /// Loads.
    Read,
    /// Stores.
    Write,
    /// Non-temporal stores + sfence.
    NtWrite,
    /// Loads + stores.
    Copy,
    /// Loads + non-temporal stores + sfence.
    NtCopy,
    /// The C library's memset.
    Memset,
}

/// `--mix` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MixArg {
    /// Loads only.
    Read,
    /// Loads and stores.
    ReadWrite,
}

/// `--isa` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IsaArg {
    /// AVX-512F (64-byte vectors).
    Avx512,
    /// AVX2 (32-byte vectors).
    Avx2,
    /// SSE2 (16-byte vectors).
    Sse2,
    /// Portable 8-byte words.
    Scalar,
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
        /// Write into --uc-resource even when a kernel driver is bound to its device.
        #[arg(long)]
        force: bool,
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
    /// The pool: file:PATH (default: a fresh file in /dev/shm), dax:/dev/daxX.Y or a PCI
    /// BAR pci:DOMAIN:BUS:DEV.FN/BAR as `cxlchar pcie list` shows it (or its resource file,
    /// pci:/sys/bus/pci/devices/<bdf>/resourceN); dax and pci need --allow-write.
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

/// `cxlchar verbs` measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerbsWhat {
    /// Post breakdown, poll costs, busy post, injection overhead, message rate.
    Post,
    /// Send/recv ping-pong latency over 8 B .. 1 MiB and its Hockney fit.
    Lat,
    /// Streaming RDMA-write bandwidth over 8 B .. 1 MiB.
    Bw,
}

/// Options of `cxlchar verbs`.
#[derive(Debug, Args, Clone)]
pub struct VerbsArgs {
    /// RDMA device (see `ibv_devices`); default: the first with an active port.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// GID index (RoCE); default: the first IPv4-mapped GID of the port.
    #[arg(long, value_name = "N")]
    pub gid_index: Option<u8>,
    /// Wait for one `--connect` client and serve its measurements.
    #[arg(long, conflicts_with = "connect")]
    pub server: bool,
    /// Measure against a `--server` on HOST.
    #[arg(long, value_name = "HOST")]
    pub connect: Option<String>,
    /// TCP port of the QP-info exchange.
    #[arg(long, default_value_t = bench_ibverbs::config::DEFAULT_PORT, value_parser = clap::value_parser!(u16).range(1..))]
    pub port: u16,
    /// Timeout of every wait: TCP connect and exchange, each completion.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub timeout: std::time::Duration,
}

/// Options of `cxlchar gpu`.
#[derive(Debug, Args, Clone)]
pub struct GpuArgs {
    /// Measure only this GPU (CUDA ordinal, see `cxlchar targets`). Default: every GPU
    /// for host memory, GPU 0 for the targets, all GPUs at once for multi-GPU contention.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// Largest copy of the sweeps (default 1G, quick 64M); sizes grow from 4K by x4
    /// (quick x16).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_size: Option<usize>,
    /// Concurrent copies (streams on one GPU) of the contention test, comma-separated
    /// (default 1,2,4,8; 1 is always measured as the reference).
    #[arg(long, value_name = "K,..", value_delimiter = ',')]
    pub streams: Option<Vec<usize>>,
    /// Bytes of each concurrent copy in the contention test (default 64M, quick 8M).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub contention_size: Option<usize>,
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
    /// Allow writing into dax and file targets and PCI BARs (destroys their contents).
    #[arg(long)]
    pub allow_write: bool,
}

/// Options of the latency sweep.
#[derive(Debug, Args, Clone)]
pub struct LatencyArgs {
    /// Bytes of memory per chain element (one touched line per slot; multichase's -s).
    /// 256 by default; the randomized layout needs a multiple of 128. 128 reads low on
    /// CPUs that fetch beyond the 128-byte pair (about 8% on Zen 4: both lines of each
    /// 256-byte group are then chain elements); 512 and up pay more page walks per load
    /// on 4 KiB pages.
    #[arg(long, visible_alias = "stride", default_value = "256", value_parser = parse_size)]
    pub slot: usize,
    /// Where each element sits in its slot: randomized (a random line and 8-byte word per
    /// slot: no prefetcher can learn it) or aligned (offset 0 of every slot: the classic
    /// chase, which some prefetchers learn; for comparisons only).
    #[arg(long, value_enum, default_value_t = LayoutArg::Randomized)]
    pub layout: LayoutArg,
    /// Skip the prefetch self-check at the DRAM point (differently built chains compared).
    #[arg(long)]
    pub no_prefetch_check: bool,
    /// Chase order: tlb-local (blocks of --tlb-locality visited in random order, lines in
    /// random order within; MLC/multichase idle latency) or random (page walks included).
    #[arg(long, value_enum, default_value_t = OrderArg::TlbLocal)]
    pub order: OrderArg,
    /// Block size of the tlb-local order (multichase -T; default 64 pages).
    #[arg(long, default_value = "256K", value_parser = parse_size)]
    pub tlb_locality: usize,
    /// Smallest working set (touched bytes: distinct 64-byte lines x 64).
    #[arg(long, default_value = "4K", value_parser = parse_size)]
    pub min_size: usize,
    /// Largest working set, touched bytes (default: the sweep stops at the DRAM plateau,
    /// at most 4 x the sysfs LLC and a quarter of the available memory).
    #[arg(long, value_parser = parse_size)]
    pub max_size: Option<usize>,
    /// Explicit working-set sizes (touched bytes, comma-separated) instead of the sweep;
    /// memory spanned = size x slot / 64.
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<usize>>,
}

/// `--layout` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// A random line and 8-byte word of each slot (default).
    Randomized,
    /// Offset 0 of every slot (the classic chase; prefetchers may learn it).
    Aligned,
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
