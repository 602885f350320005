//! The params.json document.
//!
//! Two layers: `measurements` (everything measured, with parameters, placement and
//! distribution: the evidence) and `params` (flat model keys with units in their names,
//! e.g. `mem_lat_ns`: the verdict), plus `param_info` saying how each key was derived,
//! `skipped` (what could not be measured and why) and `warnings`. The JSON Schema of this
//! document is `results/schema/params.schema.json`; bump [`SCHEMA_VERSION`] on any
//! incompatible change.

use crate::env::Environment;
use crate::memory::Placement;
use crate::stats::Distribution;
use crate::timer::TimerInfo;
/// The warnings of the document ([`crate::warning`]).
pub use crate::warning::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the params.json layout.
pub const SCHEMA_VERSION: u32 = 1;

/// One measured quantity with its distribution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    /// Unique id within the file (`mem.latency/anon/4K`).
    pub id: String,
    /// Benchmark name (`mem.latency`).
    pub benchmark: String,
    /// Target spec (`anon`, `node:1`, ...).
    pub target: String,
    /// What was measured: the benchmark's parameters for this point.
    pub parameters: serde_json::Value,
    /// Unit of the distribution (`ns`, `GB/s`, ...).
    pub unit: String,
    /// How it was measured, in a sentence.
    pub method: String,
    /// The samples' distribution.
    pub distribution: Distribution,
    /// Where the memory was, if the measurement is on a memory target.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub placement: Option<Placement>,
    /// Counter evidence of the timed section (context switches, migrations, page faults,
    /// hardware counts or why they are unavailable), with retry/disturbance status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::counters::MeasurementCounters>,
}

/// How a model key was obtained.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ParamInfo {
    /// Unit (`ns`, `GB/s`, `bytes`, `ratio`).
    pub unit: String,
    /// Target the value belongs to.
    pub target: String,
    /// How the value was derived from measurements.
    pub method: String,
    /// Ids of the measurements it comes from.
    pub from: Vec<String>,
    /// Why the value is noisy: it stands on disturbed samples, no undisturbed one being
    /// left (a crew's windows, [`crate::crew::Windows::noisy`]); absent when it is not.
    /// The summary and the report flag it, and a spec can refuse it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noisy: Option<String>,
}

/// Something that was not measured, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Skipped {
    pub benchmark: String,
    /// Target, if the skip is about one.
    pub target: String,
    /// Why, with what to do about it where something can be done.
    pub reason: String,
}

/// The tool that wrote the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Tool {
    /// `cxlchar`.
    pub name: String,
    pub version: String,
    /// The commit it was built from (12 hex digits, `-dirty` when tracked files differed
    /// from it); absent when the build did not know it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The whole params.json document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct ParamsFile {
    /// Layout version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    pub tool: Tool,
    /// The command line, one argument per element.
    pub command_line: Vec<String>,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    pub finished_at: String,
    /// The machine and its settings.
    pub environment: Environment,
    pub timer: TimerInfo,
    /// Flat model keys (units in the names).
    pub params: BTreeMap<String, f64>,
    /// How each key was derived.
    pub param_info: BTreeMap<String, ParamInfo>,
    /// Everything measured.
    pub measurements: Vec<Measurement>,
    /// What was not measured, and why.
    pub skipped: Vec<Skipped>,
    /// Conditions that may distort the results.
    pub warnings: Vec<Warning>,
    /// The idle-latency self-check of each target whose DRAM point was measured:
    /// differently built chains at the same working set, and whether they agree.
    #[serde(default)]
    pub prefetch_check: Vec<PrefetchCheck>,
    /// The DRAM working set of each target's latency sweep (CPU 0's chase) and the rule
    /// that chose it.
    #[serde(default)]
    pub dram_sizing: BTreeMap<String, crate::sizing::DramSizing>,
    /// The DRAM self-checks: each DRAM key's kernel at its working set and at a larger
    /// one, the verdict, and the keys each check stands for ([`crate::dram_check`]).
    #[serde(default)]
    pub dram_check: Vec<crate::dram_check::DramCheck>,
    /// For every measured node target (`anon`, `node:N`), keyed by target: the latency
    /// and read bandwidth the firmware advertises (HMAT, CDAT) beside the measured ones
    /// ([`crate::firmware`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hmat_vs_measured: BTreeMap<String, crate::firmware::HmatComparison>,
    /// Weighted interleave weights from the measured bandwidths, the kernel's current
    /// ones, the commands that set them, and what interleaved targets gained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_weights: Option<crate::firmware::InterleaveWeights>,
    /// The NUMA node matrix (`mem.matrix`): every CPU node to every memory node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_matrix: Option<NumaMatrix>,
    /// The interference matrix (`mem.interference`): every ordered pair of the run's
    /// memory targets, victim x aggressor, alone and together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<InterferenceMatrix>,
    /// The run's plan (each family's points and planned seconds, announced before it
    /// measured) beside the time each family took ([`crate::plan`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::PlanRecord>,
    /// Every PCI device with a link: its speed and width, its ports up to the root, and
    /// whether the link runs below what both ends can do ([`crate::pci::links`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<crate::pci::links::DeviceLink>,
}

/// The NUMA node matrix of `mem.matrix` (Intel MLC's latency and bandwidth matrices):
/// one cell per (initiator node with CPUs, target node with memory).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NumaMatrix {
    /// Initiator nodes measured (rows), in order.
    pub initiators: Vec<usize>,
    /// Target nodes measured (columns), in order.
    pub targets: Vec<usize>,
    /// One cell per initiator and target, row by row.
    pub cells: Vec<NumaCell>,
}

/// One cell of the [`NumaMatrix`]: CPUs of node `initiator` reading memory of node
/// `target`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NumaCell {
    /// The node whose CPUs measure.
    pub initiator: usize,
    /// The node the memory is bound to.
    pub target: usize,
    /// `local` (the initiator's own node), `neighbour` (a node with CPUs of the same
    /// socket: SLIT distance below twice the local one), `remote` (a node with CPUs of
    /// another socket) or `far` (a node without CPUs: CXL or other far memory).
    pub class: String,
    /// The SLIT distance from the initiator to the target, when the kernel reports it.
    pub distance: Option<u32>,
    /// The CPUs that measured (the initiator's CPUs among the allowed ones), as a list.
    pub cpus: String,
    /// Idle latency: the chase on the first of those CPUs (ns per load).
    pub latency: CellFigure,
    /// Read bandwidth of all those CPUs together (GB/s, GB = 1e9 B).
    pub bandwidth: CellFigure,
    /// Latency of the chase while the other CPUs read the target (`--loaded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_latency: Option<CellFigure>,
    /// Where the cell's memory was, as the page-by-page check found it.
    pub placement: PlacementSummary,
}

/// One figure of a [`NumaCell`]: the measurement it comes from and its distribution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellFigure {
    /// The measurement's id.
    pub id: String,
    /// Its unit (`ns`, `GB/s`).
    pub unit: String,
    /// Working set in bytes (touched bytes of a chase, streamed bytes of a read).
    pub bytes: usize,
    /// The samples' distribution.
    pub distribution: Distribution,
}

/// The interference matrix of `mem.interference`: one cell per (victim target,
/// aggressor, traffic mix), rows the victims, columns the aggressors, in run order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InterferenceMatrix {
    /// Victim targets (rows), in run order.
    pub victims: Vec<String>,
    /// Aggressors (columns): the targets the aggressor CPUs stream, in run order, then,
    /// where a GPU was the aggressor, the GPU copying each target (`gpu:0 on anon`).
    pub aggressors: Vec<String>,
    /// The aggressors' traffic mixes, in run order (`read`, `1r1w`), then the GPU's copy
    /// directions where it was measured (`h2d`: it reads the target, `d2h`: it writes it).
    pub mixes: Vec<String>,
    /// The victim's CPUs: the first chases (latency), all stream (bandwidth).
    pub victim_cpus: Vec<usize>,
    /// The aggressor CPUs (never on a core of the victim's).
    pub aggressor_cpus: Vec<usize>,
    /// One cell per victim, aggressor and mix, victim-major.
    pub cells: Vec<InterferenceCell>,
}

/// One cell of the [`InterferenceMatrix`]: the victim on `victim` measured alone and
/// while the aggressor CPUs stream `aggressor` with `mix`; every ratio is together /
/// alone (latency: above 1 = slower; bandwidth: below 1 = less).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InterferenceCell {
    /// The victim's target.
    pub victim: String,
    /// Its tier: `dram` or `far`.
    pub victim_tier: String,
    /// The aggressor's target.
    pub aggressor: String,
    /// Its tier: `dram`, `far`, or `gpu` (the GPU's copies to and from a target; its
    /// bandwidth is the `aggressor_bw_*` figures).
    pub aggressor_tier: String,
    /// The aggressor's traffic mix (the GPU's: its copy direction, `h2d` or `d2h`).
    pub mix: String,
    /// The victim's chase latency alone (p50 of batch means, ns per load).
    pub lat_alone_ns: f64,
    /// The same while the aggressors stream.
    pub lat_together_ns: f64,
    /// `lat_together_ns / lat_alone_ns`.
    pub lat_ratio: f64,
    /// The victim CPUs' read bandwidth alone (GB/s, GB = 1e9 B).
    pub bw_alone_gbs: f64,
    /// The same while the aggressors stream.
    pub bw_together_gbs: f64,
    /// `bw_together_gbs / bw_alone_gbs`.
    pub bw_ratio: f64,
    /// The aggressors' bandwidth alone (bytes loaded + stored, GB/s).
    pub aggressor_bw_alone_gbs: f64,
    /// The aggressors' bandwidth while the victim CPUs stream.
    pub aggressor_bw_together_gbs: f64,
    /// `aggressor_bw_together_gbs / aggressor_bw_alone_gbs`: what the aggressor loses.
    pub aggressor_bw_ratio: f64,
    /// The aggressors' bandwidth while the victim chases (beside the latency point).
    pub aggressor_bw_beside_chase_gbs: f64,
    /// Why a figure of the cell stands on disturbed samples (`None`: none does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noisy: Option<String>,
    /// The ids of the measurements the cell comes from.
    pub from: Vec<String>,
}

/// The placement of a cell's region, in short (the full proof is in its measurements).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlacementSummary {
    /// Verified, reported or unverified.
    pub verification: crate::memory::Verification,
    /// Pages whose node was queried.
    pub pages_checked: u64,
    /// Of those, pages on the target node.
    pub pages_on_target: u64,
    /// Bytes of the region.
    pub region_bytes: usize,
    /// A warning about the placement, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl ParamsFile {
    /// How many of the measurements that recorded their disturbances stayed disturbed in
    /// every attempt, and how many recorded them: (disturbed, recorded).
    pub fn disturbed_measurements(&self) -> (usize, usize) {
        let recorded = self.measurements.iter().filter_map(|m| m.counters.as_ref());
        recorded.fold((0, 0), |(d, n), c| (d + c.disturbed as usize, n + 1))
    }
}

impl PlacementSummary {
    /// The summary of `p`, a region of `region_bytes` bound to node `target`.
    pub fn of(p: &Placement, target: usize, region_bytes: usize) -> PlacementSummary {
        PlacementSummary {
            verification: p.verification,
            pages_checked: p.pages_checked,
            pages_on_target: p.pages_per_node.get(&(target as i64)).copied().unwrap_or(0),
            region_bytes,
            warning: p.warning.clone(),
        }
    }
}

/// One chain of a [`PrefetchCheck`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct CheckedChain {
    /// `phased-256`, `phased-aligned-256`, `randomized-256`, `aligned-256`, ...
    pub label: String,
    /// `phased`, `phased-aligned`, `randomized` or `aligned`.
    pub layout: String,
    /// Bytes per element.
    pub slot_bytes: usize,
    /// p50 latency, ns per load (the mean of two passes when the check was repeated; the
    /// default chain's is its plateau median).
    pub lat_ns: f64,
    /// Part of the verdict: same slot as the default (same pages and page walks per
    /// load), only the in-slot offsets differ. A chain with another slot is measured for
    /// information: on 4 KiB pages it takes more (or fewer) page walks per load.
    #[serde(default)]
    pub judged: bool,
    pub id: String,
}

/// The idle-latency self-check: at the DRAM point, chains built differently must agree
/// if no prefetcher helps any of them; when the judged ones disagree by more than the
/// tolerance, the higher (defeated) figure is reported, with a warning.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct PrefetchCheck {
    pub target: String,
    /// Working set of every chain (touched bytes).
    pub touched_bytes: usize,
    /// The chains measured, the default first.
    pub chains: Vec<CheckedChain>,
    /// Slowest judged chain / default chain.
    pub ratio: f64,
    /// Aligned twin / default chain: what a prefetcher gains on a chase with fixed offsets
    /// here (below 1: a prefetcher learns it, and the random offsets are needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aligned_ratio: Option<f64>,
    /// Largest |ratio - 1| still counted as agreement.
    pub tolerance: f64,
    /// `agree`, `disagree`, or `unchecked` (no other judged chain could be measured).
    pub verdict: String,
    /// The figure reported as the DRAM latency (ns): the default chain's when they agree
    /// or when it is the slowest, the slowest judged chain's otherwise.
    pub reported_ns: f64,
    /// The first pass disagreed, so the judged chains were measured again and the
    /// figures above are the means of the two passes.
    #[serde(default)]
    pub repeated: bool,
}
