//! Which launcher started this process, read from the environment it gives every rank.
//!
//! Why the environment and not an MPI library (the `mpi` crate): cxlchar needs four facts
//! from the launcher (its rank, the number of ranks, a name for the job, where rank 0
//! runs) and a byte stream to rank 0, not MPI's collectives. Every launcher already puts
//! those facts in each rank's environment; reading them keeps the binary free of a libmpi
//! it would have to be built against (and match at run time: Open MPI and MPICH are not
//! ABI compatible), works the same under `srun` without any MPI, and lets the tests start
//! ranks with a fake environment. The byte stream is a TCP connection to rank 0
//! ([`super::wire`]).
//!
//! | launcher | rank, size | job | where rank 0 runs |
//! |---|---|---|---|
//! | Slurm `srun` | `SLURM_PROCID`, `SLURM_STEP_NUM_TASKS` (or `SLURM_NTASKS`) | `SLURM_JOB_ID`.`SLURM_STEP_ID` | the first node of `SLURM_STEP_NODELIST` (or `SLURM_JOB_NODELIST`): Slurm numbers a step's nodes in that order and places rank 0 on node 0 |
//! | Open MPI `mpirun` (4.x) | `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE` | `OMPI_MCA_ess_base_jobid` (or `PMIX_NAMESPACE`) | one host (`OMPI_MCA_orte_num_nodes` 1, or without it `OMPI_COMM_WORLD_LOCAL_SIZE` = size): this machine; several: mpirun's own host, whose addresses are in `OMPI_MCA_orte_hnp_uri` (mpirun maps rank 0 to its own host unless told not to) |
//! | MPICH Hydra `mpiexec` | `PMI_RANK`, `PMI_SIZE` | the Hydra proxy (the ranks' parent process) | one host only (`MPI_LOCALNRANKS` = `PMI_SIZE`): Hydra's environment names no address of rank 0 |
//!
//! Open MPI is looked for first, then Hydra, then Slurm: `mpirun` inside a Slurm
//! allocation leaves the allocation's `SLURM_*` variables in every rank's environment.
//!
//! What the environment says is bounded like any other input: at most [`MAX_RANKS`]
//! ranks, job names of at most [`MAX_JOB_CHARS`] printable characters, host lists of at
//! most [`MAX_HOSTLIST_NAMES`] names. The job's secrets ([`super::auth`]: Open MPI's
//! `OMPI_MCA_orte_precondition_transports`, the user's `CXLCHAR_FLEET_KEY`) are read
//! here too, and never recorded with the other variables.

use super::auth::{Secret, KEY_VAR};
use std::collections::BTreeMap;
use std::net::IpAddr;
use thiserror::Error;

/// The launchers cxlchar runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Slurm's `srun`.
    Slurm,
    /// Open MPI's `mpirun` / `mpiexec` (ORTE, Open MPI 4).
    OpenMpi,
    /// MPICH's Hydra `mpiexec`.
    Hydra,
}

impl Kind {
    /// The name in the fleet file (`slurm`, `openmpi`, `hydra`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Slurm => "slurm",
            Kind::OpenMpi => "openmpi",
            Kind::Hydra => "hydra",
        }
    }
}

/// Where rank 0's rendezvous is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rank0 {
    /// Every rank runs on this machine: the loopback address.
    Local,
    /// On this host name (resolved by every rank).
    Host(String),
    /// On the host that has one of these addresses.
    Addrs(Vec<IpAddr>),
}

/// Most ranks a fleet job may have: rank 0's coordinator holds one connection and one
/// thread for each (a fleet is one rank per host, or a few).
pub const MAX_RANKS: usize = 16_384;

/// Longest job name (`SLURM_JOB_ID`, `OMPI_MCA_ess_base_jobid`, ...) read.
pub const MAX_JOB_CHARS: usize = 128;

/// Most host names a Slurm host list may expand to.
pub const MAX_HOSTLIST_NAMES: usize = 65_536;

/// Open MPI's random value for each job, in every rank's environment (ORTE draws it for
/// the PSM transports): a secret of the job's processes.
pub const OMPI_SECRET_VAR: &str = "OMPI_MCA_orte_precondition_transports";

/// What the launcher told this rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The launcher.
    pub kind: Kind,
    /// This process's rank, `0..size`.
    pub rank: usize,
    /// Number of ranks.
    pub size: usize,
    /// The job's identity as the launcher names it (every rank of the job sees the same).
    pub job: String,
    /// Where rank 0 runs.
    pub rank0: Rank0,
    /// The variables read, by name (recorded in the fleet file; never a secret).
    pub variables: BTreeMap<String, String>,
    /// The job's secrets that key the rendezvous' proofs ([`super::auth::Keys`]).
    pub secrets: Vec<Secret>,
}

impl Launch {
    /// A key only the ranks of this job share: `<launcher>:<job>`.
    pub fn job_key(&self) -> String {
        format!("{}:{}", self.kind.name(), self.job)
    }

    /// The TCP ports rank 0 tries for its rendezvous, in order (every rank computes the
    /// same list): `fixed` alone, else eight ports in 20000..40000 derived from the job
    /// key (a busy port moves rank 0 to the next; the others try each in turn, and take
    /// for rank 0 only the one whose answer proves the job's key: [`super::auth`]).
    pub fn ports(&self, fixed: Option<u16>) -> Vec<u16> {
        if let Some(p) = fixed {
            return vec![p];
        }
        // FNV-1a: stable across builds and platforms (std's hasher is not).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.job_key().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        (0..8u64)
            .map(|i| 20_000 + ((h.wrapping_add(i.wrapping_mul(7919))) % 20_000) as u16)
            .collect()
    }
}

/// A launcher environment cxlchar cannot use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LaunchError {
    /// No launcher variables at all.
    #[error(
        "--fleet-out needs a launcher: start cxlchar with srun (Slurm) or mpirun (Open MPI, \
         MPICH), one rank per process; none of SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK \
         is set"
    )]
    NoLauncher,
    /// A variable the launcher sets is missing.
    #[error("incomplete {launcher} environment: {var} is not set ({why})")]
    Missing {
        /// The launcher whose variables were found.
        launcher: &'static str,
        var: &'static str,
        /// What it is needed for.
        why: &'static str,
    },
    /// A variable has a value cxlchar cannot read.
    #[error("{var}={value:?}: {why}")]
    Invalid {
        var: &'static str,
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A launch cxlchar cannot coordinate.
    #[error("{0}")]
    Unsupported(String),
}

/// Reads the launcher from `get` (the process environment in the binary, a map in
/// tests); `parent_pid` names a Hydra job. `Ok(None)`: no launcher variable is set.
pub fn detect(
    get: &dyn Fn(&str) -> Option<String>,
    parent_pid: u32,
) -> Result<Option<Launch>, LaunchError> {
    let mut launch = if get("OMPI_COMM_WORLD_RANK").is_some() {
        open_mpi(get)?
    } else if get("PMI_RANK").is_some() {
        hydra(get, parent_pid)?
    } else if get("SLURM_PROCID").is_some() {
        slurm(get)?
    } else {
        return Ok(None);
    };
    launch.secrets = secrets(get, launch.kind)?;
    Ok(Some(launch))
}

/// The job's secrets: Open MPI's per-job random value, and the user's [`KEY_VAR`].
fn secrets(get: &dyn Fn(&str) -> Option<String>, kind: Kind) -> Result<Vec<Secret>, LaunchError> {
    let mut vars = vec![KEY_VAR];
    if kind == Kind::OpenMpi {
        vars.insert(0, OMPI_SECRET_VAR);
    }
    let mut out = Vec::new();
    for var in vars {
        if let Some(v) = get(var) {
            out.push(Secret::new(var, &v).map_err(|why| LaunchError::Invalid {
                var,
                value: "<hidden>".into(),
                why,
            })?);
        }
    }
    Ok(out)
}

/// [`detect`], requiring a launcher.
pub fn require(
    get: &dyn Fn(&str) -> Option<String>,
    parent_pid: u32,
) -> Result<Launch, LaunchError> {
    detect(get, parent_pid)?.ok_or(LaunchError::NoLauncher)
}

struct Reader<'a> {
    get: &'a dyn Fn(&str) -> Option<String>,
    launcher: &'static str,
    vars: BTreeMap<String, String>,
}

impl Reader<'_> {
    fn opt(&mut self, var: &'static str) -> Option<String> {
        let v = (self.get)(var)?;
        self.vars.insert(var.to_string(), v.clone());
        Some(v)
    }

    /// A variable that need not be set, read as a whole number when it is.
    fn opt_number(&mut self, var: &'static str) -> Result<Option<usize>, LaunchError> {
        self.opt(var).map(|v| number(var, &v)).transpose()
    }

    fn req(&mut self, var: &'static str, why: &'static str) -> Result<String, LaunchError> {
        self.opt(var).ok_or(LaunchError::Missing {
            launcher: self.launcher,
            var,
            why,
        })
    }

    /// The first of `vars` that is set.
    fn req_any(
        &mut self,
        vars: &[&'static str],
        why: &'static str,
    ) -> Result<(&'static str, String), LaunchError> {
        for v in vars {
            if let Some(x) = self.opt(v) {
                return Ok((v, x));
            }
        }
        Err(LaunchError::Missing {
            launcher: self.launcher,
            var: vars[0],
            why,
        })
    }
}

fn number(var: &'static str, value: &str) -> Result<usize, LaunchError> {
    value.trim().parse().map_err(|_| LaunchError::Invalid {
        var,
        value: value.into(),
        why: "not a whole number".into(),
    })
}

fn rank_and_size(
    rank_var: &'static str,
    rank: &str,
    size_var: &'static str,
    size: &str,
) -> Result<(usize, usize), LaunchError> {
    let (r, s) = (number(rank_var, rank)?, number(size_var, size)?);
    if s == 0 {
        return Err(LaunchError::Invalid {
            var: size_var,
            value: size.into(),
            why: "a job has at least one rank".into(),
        });
    }
    if s > MAX_RANKS {
        return Err(LaunchError::Invalid {
            var: size_var,
            value: size.into(),
            why: format!(
                "a fleet has at most {MAX_RANKS} ranks (rank 0 holds a connection to each): \
                 run one rank per host (srun --ntasks-per-node=1, mpirun --map-by ppr:1:node)"
            ),
        });
    }
    if r >= s {
        return Err(LaunchError::Invalid {
            var: rank_var,
            value: rank.into(),
            why: format!("rank {r} is not below the job's {s} ranks ({size_var})"),
        });
    }
    Ok((r, s))
}

/// A job name from variable `var`: at most [`MAX_JOB_CHARS`] characters, no blank or
/// control character (it names the job in every hello and derives the ports).
fn job_name(var: &'static str, value: &str) -> Result<String, LaunchError> {
    let bad = |why: String| LaunchError::Invalid {
        var,
        value: value.chars().take(MAX_JOB_CHARS).collect(),
        why,
    };
    if value.is_empty() {
        return Err(bad("an empty job name".into()));
    }
    if value.chars().count() > MAX_JOB_CHARS {
        return Err(bad(format!(
            "a job name of more than {MAX_JOB_CHARS} characters"
        )));
    }
    if value.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("a blank or control character in a job name".into()));
    }
    Ok(value.to_string())
}

fn slurm(get: &dyn Fn(&str) -> Option<String>) -> Result<Launch, LaunchError> {
    let mut r = Reader {
        get,
        launcher: "Slurm",
        vars: BTreeMap::new(),
    };
    let rank = r.req("SLURM_PROCID", "this process's rank")?;
    let (size_var, size) = r.req_any(
        &["SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"],
        "the number of ranks; is cxlchar started by srun?",
    )?;
    let (rank, size) = rank_and_size("SLURM_PROCID", &rank, size_var, &size)?;
    let job = job_name(
        "SLURM_JOB_ID",
        &r.req("SLURM_JOB_ID", "the job's identity")?,
    )?;
    let (step_var, step) = r.req_any(&["SLURM_STEP_ID", "SLURM_STEPID"], "the step's identity")?;
    let step = job_name(step_var, &step)?;
    let (list_var, list) = r.req_any(
        &[
            "SLURM_STEP_NODELIST",
            "SLURM_JOB_NODELIST",
            "SLURM_NODELIST",
        ],
        "the step's nodes, the first of which runs rank 0",
    )?;
    let node = r.req("SLURM_NODEID", "this rank's node in the step")?;
    let node = number("SLURM_NODEID", &node)?;
    if rank == 0 && node != 0 {
        return Err(LaunchError::Unsupported(format!(
            "rank 0 runs on node {node} of the step, not on the first node of {list_var}: \
             cxlchar finds rank 0 on the first node (Slurm's default block distribution)"
        )));
    }
    let nodes = expand_hostlist(&list, MAX_HOSTLIST_NAMES).map_err(|why| LaunchError::Invalid {
        var: list_var,
        value: list.clone(),
        why,
    })?;
    let rank0 = if nodes.len() == 1 {
        Rank0::Local
    } else {
        Rank0::Host(nodes[0].clone())
    };
    Ok(Launch {
        kind: Kind::Slurm,
        rank,
        size,
        job: format!("{job}.{step}"),
        rank0,
        variables: r.vars,
        secrets: Vec::new(),
    })
}

fn open_mpi(get: &dyn Fn(&str) -> Option<String>) -> Result<Launch, LaunchError> {
    let mut r = Reader {
        get,
        launcher: "Open MPI",
        vars: BTreeMap::new(),
    };
    let rank = r.req("OMPI_COMM_WORLD_RANK", "this process's rank")?;
    let size = r.req("OMPI_COMM_WORLD_SIZE", "the number of ranks")?;
    let (rank, size) = rank_and_size("OMPI_COMM_WORLD_RANK", &rank, "OMPI_COMM_WORLD_SIZE", &size)?;
    let (job_var, job) = r.req_any(
        &["OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"],
        "the job's identity",
    )?;
    let job = job_name(job_var, &job)?;
    let nodes = r.opt_number("OMPI_MCA_orte_num_nodes")?;
    // Open MPI 5 (PRRTE) sets no ORTE variables: every rank on this host is one host.
    let local = r.opt_number("OMPI_COMM_WORLD_LOCAL_SIZE")?;
    let rank0 = if nodes == Some(1) || (nodes.is_none() && local == Some(size)) {
        Rank0::Local
    } else {
        let uri = r.req(
            "OMPI_MCA_orte_hnp_uri",
            "the address of mpirun's host, where rank 0 runs",
        )?;
        let addrs = hnp_addresses(&uri);
        if addrs.is_empty() {
            return Err(LaunchError::Invalid {
                var: "OMPI_MCA_orte_hnp_uri",
                value: uri,
                why: "no tcp:// address in it".into(),
            });
        }
        Rank0::Addrs(addrs)
    };
    Ok(Launch {
        kind: Kind::OpenMpi,
        rank,
        size,
        job,
        rank0,
        variables: r.vars,
        secrets: Vec::new(),
    })
}

fn hydra(get: &dyn Fn(&str) -> Option<String>, parent_pid: u32) -> Result<Launch, LaunchError> {
    let mut r = Reader {
        get,
        launcher: "MPICH Hydra",
        vars: BTreeMap::new(),
    };
    let rank = r.req("PMI_RANK", "this process's rank")?;
    let size = r.req("PMI_SIZE", "the number of ranks")?;
    let (rank, size) = rank_and_size("PMI_RANK", &rank, "PMI_SIZE", &size)?;
    let local = r.req(
        "MPI_LOCALNRANKS",
        "the number of ranks on this host (Hydra runs are one host only)",
    )?;
    let local = number("MPI_LOCALNRANKS", &local)?;
    if local != size {
        return Err(LaunchError::Unsupported(format!(
            "MPICH Hydra across hosts ({local} of {size} ranks on this host): Hydra's \
             environment names no address of rank 0; use srun, or Open MPI's mpirun"
        )));
    }
    Ok(Launch {
        kind: Kind::Hydra,
        rank,
        size,
        job: format!("proxy-{parent_pid}"),
        rank0: Rank0::Local,
        variables: r.vars,
        secrets: Vec::new(),
    })
}

/// The IP addresses of the `tcp://` entries of an ORTE URI
/// (`1347354624.0;tcp://192.0.2.2,10.0.0.1:39667;tcp6://[fd00::2]:42609`).
pub fn hnp_addresses(uri: &str) -> Vec<IpAddr> {
    let mut out = Vec::new();
    for part in uri.split(';') {
        let Some(rest) = part.strip_prefix("tcp://") else {
            continue;
        };
        let hosts = rest.rsplit_once(':').map_or(rest, |(h, _port)| h);
        for h in hosts.split(',') {
            if let Ok(ip) = h.trim().parse::<IpAddr>() {
                if !out.contains(&ip) {
                    out.push(ip);
                }
            }
        }
    }
    out
}

/// Expands a Slurm host list (`node[01-03,7],gpu5`, `lab-a,lab-b`) into host names, in
/// order, refusing a list of more than `max` names. One bracket group per name (what
/// Slurm prints for a one-dimensional cluster).
pub fn expand_hostlist(list: &str, max: usize) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in list.trim().chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth = depth.checked_sub(1).ok_or("unbalanced ']'")?;
                cur.push(c);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if depth != 0 {
        return Err("unbalanced '['".into());
    }
    items.push(cur);
    let mut out = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            return Err("an empty host name".into());
        }
        let Some(open) = item.find('[') else {
            if out.len() >= max {
                return Err(format!("more than {max} host names"));
            }
            out.push(item.to_string());
            continue;
        };
        let close = item.rfind(']').ok_or("unbalanced '['")?;
        let (prefix, ranges, suffix) = (&item[..open], &item[open + 1..close], &item[close + 1..]);
        if ranges.contains('[') || suffix.contains('[') {
            return Err("more than one bracket group in a host name".into());
        }
        for r in ranges.split(',') {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            let width = a.len();
            let (lo, hi): (u64, u64) = (
                a.parse()
                    .map_err(|_| format!("{r:?} is not a number range"))?,
                b.parse()
                    .map_err(|_| format!("{r:?} is not a number range"))?,
            );
            if hi < lo || hi - lo > 100_000 {
                return Err(format!("{r:?} is not an increasing range"));
            }
            if (hi - lo) as usize >= max - out.len().min(max) {
                return Err(format!("more than {max} host names"));
            }
            for n in lo..=hi {
                out.push(format!("{prefix}{n:0width$}{suffix}"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    const SRUN: &[(&str, &str)] = &[
        ("SLURM_PROCID", "1"),
        ("SLURM_STEP_NUM_TASKS", "2"),
        ("SLURM_JOB_ID", "42"),
        ("SLURM_STEP_ID", "0"),
        ("SLURM_STEP_NODELIST", "lab-a,lab-b"),
        ("SLURM_NODEID", "1"),
    ];

    #[test]
    fn srun_across_two_nodes() {
        let l = require(&env(SRUN), 1).unwrap();
        assert_eq!((l.kind, l.rank, l.size), (Kind::Slurm, 1, 2));
        assert_eq!(l.job, "42.0");
        assert_eq!(l.rank0, Rank0::Host("lab-a".into()));
        assert_eq!(l.variables["SLURM_STEP_NODELIST"], "lab-a,lab-b");
        assert_eq!(l.ports(None), l.clone().ports(None));
        assert_eq!(l.ports(None).len(), 8);
        assert!(l.ports(None).iter().all(|p| (20_000..40_000).contains(p)));
        assert_eq!(l.ports(Some(5000)), vec![5000]);
    }

    #[test]
    fn every_missing_slurm_variable_is_named() {
        for skip in [
            "SLURM_STEP_NUM_TASKS",
            "SLURM_JOB_ID",
            "SLURM_STEP_ID",
            "SLURM_STEP_NODELIST",
            "SLURM_NODEID",
        ] {
            let pairs: Vec<_> = SRUN.iter().copied().filter(|(k, _)| *k != skip).collect();
            let e = require(&env(&pairs), 1).unwrap_err();
            assert!(
                matches!(e, LaunchError::Missing { var, .. } if var == skip),
                "{skip}: {e}"
            );
            assert!(e.to_string().contains(skip), "{e}");
        }
    }

    #[test]
    fn rank_beyond_size_and_rank0_off_node0_are_refused() {
        let mut p = SRUN.to_vec();
        p[0] = ("SLURM_PROCID", "2");
        assert!(matches!(
            require(&env(&p), 1),
            Err(LaunchError::Invalid {
                var: "SLURM_PROCID",
                ..
            })
        ));
        let mut p = SRUN.to_vec();
        p[0] = ("SLURM_PROCID", "0");
        assert!(matches!(
            require(&env(&p), 1),
            Err(LaunchError::Unsupported(_))
        ));
        let mut p = SRUN.to_vec();
        p[1] = ("SLURM_STEP_NUM_TASKS", "two");
        let e = require(&env(&p), 1).unwrap_err();
        assert!(e.to_string().contains("SLURM_STEP_NUM_TASKS"), "{e}");
    }

    #[test]
    fn open_mpi_one_host_and_several() {
        let one = [
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_MCA_ess_base_jobid", "1347354625"),
            ("OMPI_MCA_orte_num_nodes", "1"),
            // An allocation's variables do not make it a Slurm launch.
            ("SLURM_PROCID", "0"),
        ];
        let l = require(&env(&one), 1).unwrap();
        assert_eq!(
            (l.kind, l.rank, l.size, l.rank0.clone()),
            (Kind::OpenMpi, 0, 4, Rank0::Local)
        );
        let mut two = one.to_vec();
        two[3] = ("OMPI_MCA_orte_num_nodes", "2");
        let e = require(&env(&two), 1).unwrap_err();
        assert!(e.to_string().contains("OMPI_MCA_orte_hnp_uri"), "{e}");
        two.push((
            "OMPI_MCA_orte_hnp_uri",
            "1347354624.0;tcp://192.0.2.2,10.0.0.1:39667;tcp6://[fd00::2]:42609",
        ));
        let five = [
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
            ("PMIX_NAMESPACE", "prterun-vm-1@1"),
        ];
        let l5 = require(&env(&five), 1).unwrap();
        assert_eq!(
            (l5.rank0.clone(), l5.job.as_str()),
            (Rank0::Local, "prterun-vm-1@1")
        );
        let l = require(&env(&two), 1).unwrap();
        assert_eq!(
            l.rank0,
            Rank0::Addrs(vec![
                "192.0.2.2".parse().unwrap(),
                "10.0.0.1".parse().unwrap()
            ])
        );
    }

    #[test]
    fn hydra_is_one_host_only() {
        let p = [
            ("PMI_RANK", "1"),
            ("PMI_SIZE", "2"),
            ("MPI_LOCALNRANKS", "2"),
        ];
        let l = require(&env(&p), 77).unwrap();
        assert_eq!(
            (l.kind, l.job.as_str(), l.rank0.clone()),
            (Kind::Hydra, "proxy-77", Rank0::Local)
        );
        let p = [
            ("PMI_RANK", "1"),
            ("PMI_SIZE", "4"),
            ("MPI_LOCALNRANKS", "2"),
        ];
        assert!(matches!(
            require(&env(&p), 77),
            Err(LaunchError::Unsupported(_))
        ));
        let p = [("PMI_RANK", "1"), ("PMI_SIZE", "4")];
        let e = require(&env(&p), 77).unwrap_err();
        assert!(e.to_string().contains("MPI_LOCALNRANKS"), "{e}");
    }

    #[test]
    fn no_launcher() {
        assert_eq!(detect(&env(&[]), 1), Ok(None));
        let e = require(&env(&[]), 1).unwrap_err();
        assert!(e.to_string().contains("srun"), "{e}");
    }

    #[test]
    fn hostlists() {
        let m = MAX_HOSTLIST_NAMES;
        assert_eq!(
            expand_hostlist("lab-a,lab-b", m).unwrap(),
            ["lab-a", "lab-b"]
        );
        assert_eq!(
            expand_hostlist("node[01-03,7],gpu5", m).unwrap(),
            ["node01", "node02", "node03", "node7", "gpu5"]
        );
        assert_eq!(
            expand_hostlist("n[8-10]x", m).unwrap(),
            ["n8x", "n9x", "n10x"]
        );
        for bad in ["n[1-", "n]1[", "n[3-1]", "n[a-b]", "a,,b", "n[1][2]"] {
            assert!(expand_hostlist(bad, m).is_err(), "{bad}");
        }
        // A short list that names millions of hosts is refused, not expanded.
        let huge = vec!["n[0-99999]"; 100].join(",");
        let e = expand_hostlist(&huge, m).unwrap_err();
        assert!(e.contains("more than 65536 host names"), "{e}");
    }

    #[test]
    fn job_secrets_are_read_and_never_recorded() {
        let mut p = vec![
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_MCA_ess_base_jobid", "1223491585"),
            ("OMPI_MCA_orte_num_nodes", "1"),
            (OMPI_SECRET_VAR, "bb5fa2e634b1bb23-aabddbdb5f8bde7a"),
        ];
        let l = require(&env(&p), 1).unwrap();
        assert_eq!(
            l.secrets.iter().map(|s| s.var).collect::<Vec<_>>(),
            [OMPI_SECRET_VAR]
        );
        assert!(!l.variables.contains_key(OMPI_SECRET_VAR));
        assert!(!format!("{l:?}").contains("bb5fa2e6"));
        p.push((KEY_VAR, "0123456789abcdef0123"));
        let l = require(&env(&p), 1).unwrap();
        assert_eq!(l.secrets.len(), 2);
        p.pop();
        p.push((KEY_VAR, "short"));
        let e = require(&env(&p), 1).unwrap_err();
        assert!(e.to_string().contains(KEY_VAR), "{e}");
        assert!(!e.to_string().contains("short"), "{e}");
        // Slurm gives no secret of its own: the user's key only.
        let mut s = SRUN.to_vec();
        s.push((OMPI_SECRET_VAR, "bb5fa2e634b1bb23-aabddbdb5f8bde7a"));
        assert!(require(&env(&s), 1).unwrap().secrets.is_empty());
    }

    #[test]
    fn job_names_are_bounded() {
        for (bad, why) in [("", "empty"), ("4 2", "blank"), ("4\u{1b}[2J", "control")] {
            let mut p = SRUN.to_vec();
            p[2] = ("SLURM_JOB_ID", bad);
            let e = require(&env(&p), 1).unwrap_err();
            assert!(e.to_string().contains(why), "{bad:?}: {e}");
        }
        let long = "9".repeat(MAX_JOB_CHARS + 1);
        let mut p = SRUN.to_vec();
        p[2] = ("SLURM_JOB_ID", &long);
        let e = require(&env(&p), 1).unwrap_err();
        assert!(e.to_string().contains("more than 128"), "{e}");
    }

    proptest::proptest! {
        /// Any rank count the environment says is taken only up to MAX_RANKS, and a rank
        /// only below it.
        #[test]
        fn rank_counts_are_bounded(rank in 0usize..40_000, size in 0usize..40_000) {
            let (r, s) = (rank.to_string(), size.to_string());
            let got = rank_and_size("R", &r, "S", &s);
            let ok = (1..=MAX_RANKS).contains(&size) && rank < size;
            proptest::prop_assert_eq!(got.is_ok(), ok, "{:?}", got);
        }

        /// No host list expands past its bound, whatever its ranges.
        #[test]
        fn hostlists_are_bounded(
            ranges in proptest::collection::vec((0u64..200_000, 0u64..200_000), 1..8),
            max in 1usize..100_000,
        ) {
            let list = ranges
                .iter()
                .map(|(a, b)| format!("n[{}-{}]", a.min(b), a.max(b)))
                .collect::<Vec<_>>()
                .join(",");
            if let Ok(names) = expand_hostlist(&list, max) {
                proptest::prop_assert!(names.len() <= max);
            }
        }
    }
}
