//! The fleet file: every host's params.json from one launcher job, gathered on rank 0,
//! with the pairwise matrices measured between hosts. Its layout is
//! `results/schema/fleet.schema.json`; bump [`FLEET_SCHEMA_VERSION`] on any incompatible
//! change (a consumer refuses another version, naming both).

use bench_core::params::{ParamsFile, Warning};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `format` field of every fleet file (what tells it from a params.json).
pub const FLEET_FORMAT: &str = "cxlchar-fleet";

/// Layout version of the fleet file.
pub const FLEET_SCHEMA_VERSION: u32 = 1;

/// One fleet file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FleetFile {
    /// Always [`FLEET_FORMAT`].
    pub format: String,
    /// Layout version ([`FLEET_SCHEMA_VERSION`]).
    pub fleet_schema_version: u32,
    /// The cxlchar version every rank ran (ranks of another version are refused).
    pub cxlchar_version: String,
    /// The command line of the ranks, one argument per element (the same on every rank).
    pub command_line: Vec<String>,
    /// Start of the job (rank 0's clock), RFC 3339 UTC.
    pub started_at: String,
    /// End of the job (rank 0's clock), RFC 3339 UTC.
    pub finished_at: String,
    /// The launcher the ranks ran under, and what it told them.
    pub launcher: LauncherInfo,
    /// One entry per host, in the order of their lowest rank.
    pub hosts: Vec<FleetHost>,
    /// Pairwise measurements between hosts (one entry per measured pair and kind).
    pub pairs: Vec<PairResult>,
    /// Pairwise measurements not made, and why (one host, no RDMA device, no shared pool, ...).
    pub pairs_skipped: Vec<PairSkipped>,
    /// Conditions of the whole fleet that may distort comparisons (hosts with different
    /// environments, a host that measured alone, ...). Each host's own warnings stay in
    /// its params.
    pub warnings: Vec<Warning>,
}

/// The launcher of the job.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LauncherInfo {
    /// `slurm`, `openmpi` or `hydra`.
    pub kind: String,
    /// The job's identity as the launcher names it (`1234.0` for a Slurm step, the Open
    /// MPI job id, ...).
    pub job: String,
    pub ranks: usize,
    /// The launcher's environment variables rank 0 read, by name.
    pub variables: BTreeMap<String, String>,
}

/// One host of the fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FleetHost {
    /// Host name (as the measuring rank's kernel reports it).
    pub host: String,
    /// Every rank that ran on this host.
    pub ranks: Vec<usize>,
    /// The rank that measured (the lowest on the host); the others waited.
    pub measuring_rank: usize,
    /// The address rank 0 saw this host's ranks connect from (the address its pairwise
    /// servers are reached at).
    pub address: String,
    /// What this host measured: its complete params.json.
    pub params: ParamsFile,
}

/// What kind of pairwise measurement.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum PairKind {
    /// RDMA verbs between the hosts' NICs (`cxlchar verbs --server` on `server`,
    /// `--connect` from `client`): `verbs_lat_ns`, `verbs_bw_gbs`, ...
    Verbs,
    /// Pool messaging through memory both hosts map (`cxlchar pool msg`, follower on
    /// `server`, leader on `client`): `pool_msg_lat_ns`, `pool_msg_bw_gbs`, ...
    Pool,
}

impl PairKind {
    /// The name used in the CLI and the file (`verbs`, `pool`).
    pub fn name(self) -> &'static str {
        match self {
            PairKind::Verbs => "verbs",
            PairKind::Pool => "pool",
        }
    }
}

/// One measured pair.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PairResult {
    /// Verbs or pool.
    pub kind: PairKind,
    /// The host that served (verbs server, pool follower).
    pub server: String,
    /// The host that measured (verbs client, pool leader); its params are `params`.
    pub client: String,
    /// The round it ran in (each host is in at most one pair of a kind per round).
    pub round: usize,
    /// For `pool`: the pool's identity both hosts reported (what paired them), and each
    /// host's local name for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolPair>,
    /// The client's complete params.json of this pair's run.
    pub params: ParamsFile,
}

/// The pool two hosts share.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PoolPair {
    /// The identity both hosts reported (e.g. `cxl:serials=0x1234:ways=1:offset=0:size=100663296`).
    pub identity: String,
    /// The server's local name of the pool (`dax:/dev/dax1.0`).
    pub server_spec: String,
    /// The client's local name of the pool.
    pub client_spec: String,
    /// The window used: byte offset into the pool.
    pub offset_bytes: u64,
    /// The window used: length in bytes.
    pub len_bytes: u64,
}

/// A pairwise measurement not made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PairSkipped {
    /// Verbs or pool.
    pub kind: PairKind,
    /// The hosts concerned (empty: the whole kind, e.g. "built without the verbs feature").
    pub hosts: Vec<String>,
    /// Why, with what to do about it.
    pub reason: String,
}

impl FleetFile {
    /// The host entry named `host`.
    pub fn host(&self, host: &str) -> Option<&FleetHost> {
        self.hosts.iter().find(|h| h.host == host)
    }
}
