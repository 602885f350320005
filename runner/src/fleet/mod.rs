//! Fleet runs: cxlchar as one rank of a launcher job (`srun`, `mpirun`). Every rank reads
//! the launcher's environment ([`launcher`]), connects to rank 0's coordinator
//! ([`coordinator`], over [`wire`]), and does what it is told ([`participant`]): the
//! lowest rank of each host measures it (hosts of one machine in turn), then the hosts
//! pair up in rounds ([`pairs`]); rank 0 writes every host's params and the pairs into
//! one fleet file ([`crate::document::fleet`]). A rank acts only for its own job: rank 0 and the
//! ranks prove the job's key to each other ([`auth`]), and rank 0's commands name no
//! path, offset or size. docs/fleet.md is the user's guide, docs/safety.md the threat
//! model.

pub mod auth;
pub mod coordinator;
pub mod launcher;
pub mod outliers;
pub mod pairs;
pub mod participant;
pub mod summary;
pub mod wire;

use crate::cli::{FleetPair, RunArgs};
use crate::document::fleet::{FleetFile, PairKind};
use anyhow::{anyhow, bail, Context, Result};
use launcher::{Launch, Rank0};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// The hidden variable that gives a rank another host name (the tests simulate several
/// hosts on one machine with it; hosts of one machine still measure one at a time).
pub const HOSTNAME_VAR: &str = "CXLCHAR_FLEET_HOSTNAME";

/// This host's name: [`HOSTNAME_VAR`], else the kernel's.
pub fn hostname() -> String {
    if let Ok(h) = std::env::var(HOSTNAME_VAR) {
        if !h.trim().is_empty() {
            return h.trim().to_string();
        }
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// This machine's identity: the kernel's boot id (changes at every boot; two hosts
/// with the same boot id are one kernel).
pub fn machine() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| hostname())
}

/// The pair kinds a run asks for.
pub fn pair_kinds(asked: Option<&[FleetPair]>, by_default: bool) -> Vec<PairKind> {
    match asked {
        None if by_default => vec![PairKind::Verbs, PairKind::Pool],
        None => vec![],
        Some(list) => {
            let mut v = Vec::new();
            for p in list {
                let k = match p {
                    FleetPair::Verbs => PairKind::Verbs,
                    FleetPair::Pool => PairKind::Pool,
                    FleetPair::None => continue,
                };
                if !v.contains(&k) {
                    v.push(k);
                }
            }
            v
        }
    }
}

/// Binds rank 0's rendezvous on the first free port of `ports`.
fn bind(launch: &Launch, ports: &[u16]) -> Result<TcpListener> {
    let ip = match &launch.rank0 {
        Rank0::Local => Ipv4Addr::LOCALHOST,
        Rank0::Host(_) => Ipv4Addr::UNSPECIFIED,
        Rank0::Addrs(addrs) => {
            // Rank 0 must be where the other ranks will look: on mpirun's host.
            if !addrs
                .iter()
                .any(|a| TcpListener::bind(SocketAddr::new(*a, 0)).is_ok())
            {
                bail!(
                    "rank 0 does not run on mpirun's host ({}, from OMPI_MCA_orte_hnp_uri), \
                     where the other ranks look for it: let mpirun place rank 0 on its own \
                     host (no --nolocal, mpirun's host first in the host file)",
                    addrs
                        .iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            Ipv4Addr::UNSPECIFIED
        }
    };
    let mut last = None;
    for &p in ports {
        match TcpListener::bind(SocketAddr::new(ip.into(), p)) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(anyhow!(
        "rank 0 could not listen on port {} ({}): free one, or choose another with --fleet-port",
        ports
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        last.map_or("no port".into(), |e| e.to_string())
    ))
}

/// Takes part in a fleet job (`--fleet-out`) as this process's rank: `measure` measures
/// this host when the rank is told to (the session's plan, refused as a run of its own
/// would be); `pairs_by_default`: the command runs the pairs unless `--fleet-pairs` says
/// otherwise (`all`).
pub fn measure(
    args: &RunArgs,
    measure: &mut dyn FnMut() -> Result<bench_core::params::ParamsFile>,
    pairs_by_default: bool,
) -> Result<()> {
    let fa = &args.fleet;
    let out = fa
        .fleet_out
        .clone()
        .ok_or_else(|| anyhow!("fleet::measure without --fleet-out"))?;
    if args.out.is_some() {
        bail!(
            "--out and --fleet-out: under a launcher every host's params go into the fleet \
             file (one host's: jq '.hosts[] | select(.host == \"NAME\") | .params' FLEET)"
        );
    }
    let launch = launcher::require(
        &|k| std::env::var(k).ok(),
        std::os::unix::process::parent_id(),
    )
    .context("--fleet-out")?;
    let kinds = pair_kinds(fa.fleet_pairs.as_deref(), pairs_by_default);
    let candidates = if kinds.is_empty() {
        pairs::Candidates::none("no pairs asked for")
    } else {
        pairs::local_candidates()
    };
    let command_line: Vec<String> = std::env::args().skip(1).collect();
    let version = env!("CARGO_PKG_VERSION").to_string();
    let keys = auth::Keys::new(&launch.job_key(), &launch.secrets);
    if launch.rank == 0 && keys.secrets().is_empty() && launch.rank0 != Rank0::Local {
        warn_unkeyed(&launch);
    }
    let hello = wire::Hello {
        job_key: launch.job_key(),
        rank: launch.rank,
        size: launch.size,
        version: version.clone(),
        command_line: command_line.clone(),
        host: hostname(),
        machine: machine(),
        candidates,
        nonce: String::new(),
        proof: String::new(),
    };
    let mut ports = launch.ports(fa.fleet_port);
    let abort: Arc<OnceLock<String>> = Arc::default();
    let coordinator = if launch.rank == 0 {
        let (listener, port) = listen(&launch, &kinds, &out, &ports)?;
        ports = vec![port];
        let cfg = coordinator::Config {
            launch: launch.clone(),
            keys: keys.clone(),
            listener,
            timeout: fa.fleet_timeout,
            pairs: kinds,
            pool_offset: fa.fleet_pool_offset,
            pool_len: fa.fleet_pool_len as u64,
            allow_write: args.allow_write,
            out: out.clone(),
            version,
            command_line,
            started_at: crate::run::now_rfc3339(),
        };
        Some(spawn_coordinator(cfg, abort.clone()))
    } else {
        None
    };
    let rank = launch.rank;
    let finished = participant::run(
        participant::Config {
            rank0: launch.rank0.clone(),
            ports,
            timeout: fa.fleet_timeout,
            hello,
            keys,
            abort: Some(abort),
        },
        args,
        measure,
    );
    match coordinator {
        Some(c) => finish_rank0(args, &out, c, finished),
        None => {
            let f = finished?;
            eprintln!(
                "fleet rank {rank}: {} host {}; {}",
                if f.measured { "measured" } else { "waited for" },
                f.host,
                f.message
            );
            Ok(())
        }
    }
}

/// Warns that no secret of the job keys the rendezvous, so that a stranger that takes
/// the port first can pass for rank 0.
fn warn_unkeyed(launch: &Launch) {
    eprintln!(
        "fleet: no secret of this job keys the rendezvous (the {} launcher gives none): \
         a process of another user on {} that takes the rendezvous port first can pass \
         for rank 0 to the other hosts; export {}=<random value> to every rank to rule \
         that out (docs/fleet.md)",
        launch.kind.name(),
        participant::describe(&launch.rank0),
        auth::KEY_VAR
    );
}

/// Rank 0's rendezvous, once the fleet file can be written: the listener and its port,
/// with room above it for the verbs pairs of a round.
fn listen(
    launch: &Launch,
    kinds: &[PairKind],
    out: &Path,
    ports: &[u16],
) -> Result<(TcpListener, u16)> {
    crate::document::write::check_output(out)?;
    let listener = bind(launch, ports)?;
    let port = listener.local_addr()?.port();
    // The verbs pairs of a round take the ports just above the rendezvous.
    let slots = u16::try_from(launch.size / 2).unwrap_or(u16::MAX);
    if kinds.contains(&PairKind::Verbs) && pairs::verbs_port(port, slots).is_none() {
        bail!(
            "the verbs pairs of {} ranks need {slots} TCP ports above the rendezvous' \
             {}: choose a lower --fleet-port",
            launch.size,
            port
        );
    }
    Ok((listener, port))
}

/// Runs rank 0's coordinator on a thread of its own; its failure is set in `abort` for
/// this process's own rank, which may not be admitted yet.
fn spawn_coordinator(
    cfg: coordinator::Config,
    abort: Arc<OnceLock<String>>,
) -> JoinHandle<Result<FleetFile>> {
    std::thread::spawn(move || {
        let r = coordinator::run(cfg);
        if let Err(e) = &r {
            let _ = abort.set(format!("{e:#}"));
        }
        r
    })
}

/// Rank 0's end of the job: the coordinator's fleet file, summed up on stdout (or as
/// JSON), once this process's own rank finished too.
fn finish_rank0(
    args: &RunArgs,
    out: &Path,
    coordinator: JoinHandle<Result<FleetFile>>,
    finished: Result<participant::Finished>,
) -> Result<()> {
    let file = coordinator
        .join()
        .map_err(|_| anyhow!("rank 0's coordinator panicked"))??;
    finished?;
    let text = match args.format {
        crate::cli::Format::Json => serde_json::to_string_pretty(&file)? + "\n",
        _ => summary::render_text(&file),
    };
    // The file is written: a reader of the summary that went away changes nothing.
    if let Err(e) = crate::output::stdout::print(&text) {
        if !crate::output::stdout::is_broken_pipe(&e) {
            return Err(e);
        }
    }
    eprintln!(
        "fleet: wrote {} ({} hosts, {} pairs)",
        crate::output::text::printable(&out.display().to_string()),
        file.hosts.len(),
        file.pairs.len()
    );
    Ok(())
}
