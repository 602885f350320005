//! The params.json document.
//!
//! Two layers: `measurements` (everything measured, with parameters, placement and
//! distribution: the evidence) and `params` (flat model keys with units in their names,
//! e.g. `mem_lat_ns`: the verdict), plus `param_info` saying how each key was derived,
//! `skipped` (what could not be measured and why) and `warnings`. The JSON Schema of this
//! document is `results/schema/params.schema.json`; bump [`SCHEMA_VERSION`] on any
//! incompatible change.

use crate::env::Environment;
use crate::stats::Distribution;
use crate::target::Placement;
use crate::timer::TimerInfo;
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
}

/// Something that was not measured, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    /// Benchmark name.
    pub benchmark: String,
    /// Target, if the skip is about one.
    pub target: String,
    /// Why, with what to do about it where something can be done.
    pub reason: String,
}

/// A condition that may distort results, with how to fix it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Warning {
    /// Stable identifier (`governor`, `smt`, `thp`, `placement`, ...).
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it (may be empty when nothing can be done).
    pub remediation: String,
}

/// The tool that wrote the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    /// `cxlchar`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The whole params.json document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ParamsFile {
    /// Layout version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool.
    pub tool: Tool,
    /// The command line, one argument per element.
    pub command_line: Vec<String>,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    pub finished_at: String,
    /// The machine and its settings.
    pub environment: Environment,
    /// The timer used.
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
}
