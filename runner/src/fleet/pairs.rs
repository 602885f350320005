//! The pairwise part of a fleet run: what a host can pair with ([`Candidates`], sent to
//! rank 0 in the hello), the schedule of pairs ([`rounds`], [`pool_groups`]) and the
//! in-process runners of one pair ([`serve_verbs`] / [`measure_verbs`], [`serve_pool`] /
//! [`measure_pool`]).
//!
//! The runners are the existing commands run in-process, never a second implementation:
//! a verbs pair is `cxlchar verbs --server --port P` on one host and
//! `cxlchar verbs --connect HOST --port P` on the other (bench-ibverbs' `VerbsArgs`, parsed
//! from that command line), a pool pair is `cxlchar pool msg --pool SPEC --role follower`
//! and `--role leader` (bench-cxl's `MsgArgs`, [`bench_cxl::msg::run_follower`]). The
//! measuring side is planned by the registry and run by [`crate::run::execute`] with the
//! rank's own shared options (`--quick`, `--cpu`, `--seed`, `--allow-write`; no `--out`,
//! no `--target`), and its params document says, in `command_line`, the equivalent
//! command a person would type to measure the same pair by hand.
//!
//! # Pool identity
//!
//! Two hosts share a pool when they map the same bytes of the same memory devices. The
//! only pool whose identity the hardware reports is a dax device in devdax mode (bound to
//! `device_dax`) carved from a CXL region all of whose memory devices report a serial
//! number; its identity is
//!
//! `cxl:serials=<serials in interleave position order>:ways=<N>:gran=<bytes>:offset=<dax start - region start>:size=<dax size>`
//!
//! The host physical address of the region may differ between hosts (each host's
//! platform places its own window), so the identity is relative to the region: the same
//! devices, interleaved the same way, and the same place in the region. Nothing else is a
//! candidate: an ivshmem BAR, an NVDIMM, a file, a CXL window without a region, or a
//! region with a device that reports no serial have no identity another host could
//! compare, and a user flag saying "these are the same" is not accepted (a wrong claim
//! would silently measure two different memories). A dax device with more than one
//! address range is not a candidate either (its identity would need every range).
//! [`pool_candidates_at`] says, per dax device, why it is not one.
//!
//! Rank 0 names a pool to a rank by its identity only. The rank maps the pool it found
//! itself with that identity ([`local_pool`]), in the window of its own
//! `--fleet-pool-offset`/`--fleet-pool-len` (every rank runs the same command line, and
//! the window must lie inside the pool), and only with its own `--allow-write`: nothing
//! another process says becomes a path, an offset or a length.
//!
//! Limit: the identity does not include where the region lies in the devices' own
//! address space (the endpoint decoders' DPA), which `bench_core::cxl` does not read;
//! two regions carved from different parts of the same devices with the same geometry,
//! dax offset and size would look alike.

use crate::cli::RunArgs;
use anyhow::{anyhow, bail, Context as _, Result};
use bench_core::bench::Setup;
use bench_core::cxl::{Backing, Range};
use bench_core::params::ParamsFile;
use bench_core::topology::{DaxDevice, Topology};
use clap::{Args, FromArgMatches};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// What this host can pair with (sent to rank 0 in the hello).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Candidates {
    /// `Ok(device name)` of the RDMA device a verbs pair uses, or why there is none (built
    /// without the verbs feature, no RDMA device with an active port).
    pub verbs: Result<String, String>,
    /// The pools this host maps whose identity the hardware reports.
    pub pools: Vec<PoolCandidate>,
}

impl Candidates {
    /// Nothing to pair with, for `why` (no pairs asked for).
    pub fn none(why: &str) -> Candidates {
        Candidates {
            verbs: Err(why.into()),
            pools: Vec::new(),
        }
    }
}

/// One pool this host can pair over.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PoolCandidate {
    /// Its local target spec, `dax:/dev/dax1.0`.
    pub spec: String,
    /// Its identity (module doc): equal on two hosts when they map the same bytes.
    pub identity: String,
    /// Its size in bytes.
    pub size_bytes: u64,
}

/// What this machine can pair with: its default RDMA device and its pools.
pub fn local_candidates() -> Candidates {
    Candidates {
        verbs: bench_ibverbs::default_device(),
        pools: pool_candidates_at(Path::new("/")).0,
    }
}

/// The pool candidates of the machine whose sysfs lies below `root` (`/`), and one line
/// per dax device that is not one, saying why (`dax0.0: ...`).
pub fn pool_candidates_at(root: &Path) -> (Vec<PoolCandidate>, Vec<String>) {
    let topo = Topology::read(root);
    let mut yes = Vec::new();
    let mut no = Vec::new();
    for d in &topo.dax {
        let dir = root.join("sys/bus/dax/devices").join(&d.name);
        match pool_identity(&topo, d, &bench_core::cxl::dax_ranges(&dir)) {
            Ok(identity) => yes.push(PoolCandidate {
                spec: format!("dax:{}", d.path.display()),
                identity,
                size_bytes: d.size_bytes,
            }),
            Err(why) => no.push(format!("{}: {why}", d.name)),
        }
    }
    (yes, no)
}

/// The identity of dax device `dax` (its address ranges `ranges`) on a machine of
/// topology `topo` (module doc), or why it has none.
pub fn pool_identity(topo: &Topology, dax: &DaxDevice, ranges: &[Range]) -> Result<String, String> {
    if dax.mode.as_deref() != Some("devdax") {
        return Err(match dax.mode.as_deref() {
            Some(m) => format!("in {m} mode, not devdax: no device to map"),
            None => "bound to no known dax driver: no device to map".into(),
        });
    }
    let (region, ways, gran, memdevs) = match &dax.backing {
        Some(Backing::CxlRegion {
            region,
            interleave_ways,
            interleave_granularity_bytes,
            memdevs,
            ..
        }) => (region, interleave_ways, interleave_granularity_bytes, memdevs),
        Some(Backing::CxlWindow { window }) => {
            return Err(format!(
                "CXL memory of window {window} with no region the kernel knows: its devices cannot be named"
            ))
        }
        Some(Backing::Nvdimm { nd_region }) => {
            return Err(format!(
                "an NVDIMM ({nd_region}): no identity the hardware reports that another host could share"
            ))
        }
        Some(Backing::NotCxl | Backing::Driver { .. }) | None => {
            return Err("not CXL memory: no identity the hardware reports".into())
        }
    };
    let (Some(ways), Some(gran)) = (ways, gran) else {
        return Err(format!(
            "{region}: interleave ways or granularity not reported"
        ));
    };
    let mut devs: Vec<_> = memdevs.iter().collect();
    devs.sort_by_key(|m| m.position);
    if devs.is_empty() || devs.len() != *ways as usize {
        return Err(format!(
            "{region}: {} of its {ways} memory devices found",
            devs.len()
        ));
    }
    let mut serials = Vec::new();
    for m in &devs {
        match &m.serial {
            Some(s) if !s.trim().is_empty() => serials.push(s.trim().to_ascii_lowercase()),
            _ => {
                return Err(format!(
                    "{region}: memory device {} reports no serial number",
                    m.memdev
                ))
            }
        }
    }
    let Some(start) = topo.cxl.region(region).and_then(|r| r.start) else {
        return Err(format!("{region}: its start address is not reported"));
    };
    let [r] = ranges else {
        return Err(format!(
            "{} address ranges (a pool candidate has exactly one)",
            ranges.len()
        ));
    };
    let Some(offset) = r.start.checked_sub(start) else {
        return Err(format!("starts below {region}"));
    };
    Ok(format!(
        "cxl:serials={}:ways={ways}:gran={gran}:offset={offset}:size={}",
        serials.join(","),
        r.end - r.start
    ))
}

/// The pool this host found itself with identity `identity`, when the window of
/// `offset` and `len` bytes lies inside it; `Err`: why this host does not serve or
/// measure that pool.
pub fn local_pool<'a>(
    candidates: &'a Candidates,
    identity: &str,
    offset: u64,
    len: u64,
) -> Result<&'a PoolCandidate> {
    let p = candidates
        .pools
        .iter()
        .find(|p| p.identity == identity)
        .ok_or_else(|| {
            anyhow!(
                "rank 0 named pool {identity}, which this host does not have (its pools: {})",
                if candidates.pools.is_empty() {
                    "none".to_string()
                } else {
                    candidates
                        .pools
                        .iter()
                        .map(|p| p.identity.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )
        })?;
    match offset.checked_add(len) {
        Some(end) if len > 0 && end <= p.size_bytes => Ok(p),
        _ => bail!(
            "the window of --fleet-pool-offset {offset} and --fleet-pool-len {len} does not lie \
             inside {} ({} bytes): choose a window inside the pool",
            p.spec,
            p.size_bytes
        ),
    }
}

/// The TCP port of the verbs pair in `slot` of a round, for the rendezvous on port
/// `rendezvous`: the ports just above it (both sides compute it; rank 0 names the slot
/// only). `None` past port 65535.
pub fn verbs_port(rendezvous: u16, slot: u16) -> Option<u16> {
    rendezvous.max(1023).checked_add(1)?.checked_add(slot)
}

/// Round-robin schedule (circle method) over `n` hosts: every unordered pair exactly
/// once, each host in at most one pair per round; `n - 1` rounds for even `n`, `n` for
/// odd `n` (one host sits each round out), none for `n <= 1`. Pairs are `(server, client)`
/// host indices; who serves is balanced, so no host always serves: the host the circle
/// keeps in place serves every other round, and of two others, the one the other follows
/// by at most half the circle serves (every host serves and measures for `n >= 3`).
pub fn rounds(n: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    // An odd count gets a phantom host `m - 1`: its partner sits the round out.
    let m = n + n % 2;
    (0..m - 1)
        .map(|r| {
            (0..m / 2)
                .filter_map(|i| {
                    // Host m-1 stays put; the others turn one place per round.
                    let a = if i == 0 { m - 1 } else { (r + i) % (m - 1) };
                    let b = (r + m - 1 - i) % (m - 1);
                    if a >= n || b >= n {
                        return None;
                    }
                    // Who serves: the fixed host on even rounds; between two turning
                    // hosts, the one the other follows by at most half the circle
                    // (each of them serves (m - 2) / 2 times).
                    let a_serves = if a == m - 1 {
                        r % 2 == 0
                    } else {
                        (1..=(m - 2) / 2).contains(&((b + m - 1 - a) % (m - 1)))
                    };
                    Some(if a_serves { (a, b) } else { (b, a) })
                })
                .collect()
        })
        .collect()
}

/// Hosts grouped by pool identity, for the pool rounds: `(identity, host indices)` for
/// every identity two or more hosts report (in identity order; each host once per
/// group, in index order). `per_host[i]` are host `i`'s candidates.
pub fn pool_groups(per_host: &[Vec<PoolCandidate>]) -> Vec<(String, Vec<usize>)> {
    let mut by: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (host, cands) in per_host.iter().enumerate() {
        for c in cands {
            let hosts = by.entry(c.identity.as_str()).or_default();
            if hosts.last() != Some(&host) {
                hosts.push(host);
            }
        }
    }
    by.into_iter()
        .filter(|(_, hosts)| hosts.len() >= 2)
        .map(|(id, hosts)| (id.to_string(), hosts))
        .collect()
}

/// Serves one verbs pair: `cxlchar verbs --server --port PORT`, waiting at most `timeout`
/// (at most [`bench_ibverbs::config::MAX_TIMEOUT`]) for the client (and for each
/// completion). Ends when the client is done.
pub fn serve_verbs(run: &RunArgs, port: u16, timeout: Duration) -> Result<()> {
    let argv = vec![
        "--server".to_string(),
        "--port".into(),
        port.to_string(),
        "--timeout".into(),
        duration_arg(timeout.min(bench_ibverbs::config::MAX_TIMEOUT)),
    ];
    let (outcome, cmd) = measure_in_process::<bench_ibverbs::bench::VerbsArgs>(run, "verbs", &argv)
        .with_context(|| format!("verbs pair server on port {port}"))?;
    if !outcome.served {
        bail!(
            "verbs pair server on port {port} served no client: {} (ran `{}`)",
            skip_reasons(&outcome.file),
            crate::output::shell::command(&cmd)
        );
    }
    Ok(())
}

/// Measures one verbs pair against the server on `host:port` (`cxlchar verbs --connect
/// HOST --port PORT`); a server not listening yet is retried until `timeout`, which also
/// bounds every later wait. Returns the client's params document.
pub fn measure_verbs(
    run: &RunArgs,
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<ParamsFile> {
    let argv = vec![
        "--connect".to_string(),
        host.to_string(),
        "--port".into(),
        port.to_string(),
        "--timeout".into(),
        duration_arg(timeout.min(bench_ibverbs::config::MAX_TIMEOUT)),
    ];
    let (outcome, cmd) = measure_in_process::<bench_ibverbs::bench::VerbsArgs>(run, "verbs", &argv)
        .with_context(|| format!("verbs pair client of {host}:{port}"))?;
    measured(outcome.file, &cmd).with_context(|| format!("verbs pair client of {host}:{port}"))
}

/// Serves one pool pair: `cxlchar pool msg --pool SPEC --offset OFFSET --len LEN --role
/// follower`, waiting at most `timeout` for the leader. Needs `--allow-write`.
pub fn serve_pool(
    run: &RunArgs,
    spec: &str,
    offset: u64,
    len: u64,
    timeout: Duration,
) -> Result<()> {
    let argv = pool_argv(run, spec, offset, len, "follower", timeout)?;
    let msg = parse_args::<bench_cxl::msg::MsgArgs>("msg", &argv)?;
    crate::pool::serve(&pair_run_args(run), &msg)
        .with_context(|| format!("pool pair follower on {spec}"))?;
    Ok(())
}

/// Measures one pool pair as its leader: `cxlchar pool msg --pool SPEC --offset OFFSET
/// --len LEN --role leader`, waiting at most `timeout` for the follower. Needs
/// `--allow-write`. Returns the leader's params document (`pool_msg_lat_ns`, ...).
pub fn measure_pool(
    run: &RunArgs,
    spec: &str,
    offset: u64,
    len: u64,
    timeout: Duration,
) -> Result<ParamsFile> {
    let argv = pool_argv(run, spec, offset, len, "leader", timeout)?;
    let (outcome, cmd) = measure_in_process::<bench_cxl::msg::MsgArgs>(run, "pool msg", &argv)
        .with_context(|| format!("pool pair leader on {spec}"))?;
    measured(outcome.file, &cmd).with_context(|| format!("pool pair leader on {spec}"))
}

/// The `pool msg` options of one side of a pool pair.
fn pool_argv(
    run: &RunArgs,
    spec: &str,
    offset: u64,
    len: u64,
    role: &str,
    timeout: Duration,
) -> Result<Vec<String>> {
    if !run.allow_write {
        bail!(
            "a pool pair writes into {spec} (the window at offset {offset}, {len} bytes): it needs --allow-write"
        );
    }
    Ok(vec![
        "--pool".into(),
        spec.into(),
        "--offset".into(),
        offset.to_string(),
        "--len".into(),
        len.to_string(),
        "--role".into(),
        role.into(),
        "--timeout".into(),
        duration_arg(timeout),
    ])
}

/// A duration as the commands' `--timeout` reads it.
fn duration_arg(d: Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

/// The family options `A` of command `name` from `argv` (no binary name).
fn parse_args<A: Args + FromArgMatches>(name: &'static str, argv: &[String]) -> Result<A> {
    let m = A::augment_args(clap::Command::new(name).no_binary_name(true))
        .try_get_matches_from(argv)
        .map_err(|e| anyhow!("{name} {}: {e}", argv.join(" ")))?;
    A::from_arg_matches(&m).map_err(|e| anyhow!(e))
}

/// The rank's shared options as a pair run uses them: quick, CPUs, seed and
/// `--allow-write` kept; no `--out` and no `--fleet-out` (rank 0 writes the fleet file)
/// and no `--target` (a pair measures its own device or pool).
fn pair_run_args(run: &RunArgs) -> RunArgs {
    let mut r = run.clone();
    r.out = None;
    r.fleet.fleet_out = None;
    r.targets.clear();
    r
}

/// The shared options of `run` as a command line adds them.
fn shared_argv(run: &RunArgs) -> Vec<String> {
    let mut v = Vec::new();
    if run.quick {
        v.push("--quick".into());
    }
    if let Some(c) = &run.cpu {
        v.push("--cpu".into());
        v.push(
            c.0.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    v.push("--seed".into());
    v.push(run.seed.to_string());
    if run.allow_write {
        v.push("--allow-write".into());
    }
    v
}

/// Plans command `command` (registry path, `"pool msg"`) with family options `argv` and
/// runs it in this process with the rank's shared options ([`pair_run_args`]). Returns
/// the outcome, its document's `command_line` set to the equivalent command, and that
/// command.
fn measure_in_process<A: Args + FromArgMatches + Setup>(
    run: &RunArgs,
    command: &'static str,
    argv: &[String],
) -> Result<(crate::run::Outcome, Vec<String>)> {
    let name = command.rsplit(' ').next().unwrap_or(command);
    let args: A = parse_args(name, argv)?;
    let r = pair_run_args(run);
    let plan = crate::run::plan(&r, &args)?;
    let mut outcome = crate::run::execute(&r, plan)?;
    let mut cmd: Vec<String> = std::iter::once("cxlchar")
        .chain(command.split(' '))
        .map(String::from)
        .collect();
    cmd.extend(shared_argv(&r));
    cmd.extend(argv.iter().cloned());
    outcome.file.command_line = cmd.clone();
    Ok((outcome, cmd))
}

/// The document of a pair's measuring side, or an error with the skip reasons when it
/// measured nothing.
fn measured(file: ParamsFile, cmd: &[String]) -> Result<ParamsFile> {
    if file.params.is_empty() && file.measurements.is_empty() {
        bail!(
            "nothing measured: {} (ran `{}`)",
            skip_reasons(&file),
            crate::output::shell::command(cmd)
        );
    }
    Ok(file)
}

/// The skip reasons of a document, `benchmark: reason; ...`.
fn skip_reasons(file: &ParamsFile) -> String {
    if file.skipped.is_empty() {
        return "no reason recorded".into();
    }
    file.skipped
        .iter()
        .map(|s| format!("{}: {}", s.benchmark, s.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../bench-core/tests/fixtures")
            .join(name)
    }

    fn run_args(argv: &[&str]) -> RunArgs {
        let m = RunArgs::augment_args(clap::Command::new("t").no_binary_name(true))
            .try_get_matches_from(argv)
            .unwrap();
        RunArgs::from_arg_matches(&m).unwrap()
    }

    #[test]
    fn rounds_pair_everyone_once_and_nobody_twice_a_round() {
        for n in 0..=12usize {
            let rs = rounds(n);
            let want = match n {
                0 | 1 => 0,
                n if n % 2 == 0 => n - 1,
                n => n,
            };
            assert_eq!(rs.len(), want, "n = {n}");
            let mut seen = BTreeSet::new();
            let mut serves = vec![0usize; n];
            let mut measures = vec![0usize; n];
            for (k, round) in rs.iter().enumerate() {
                assert!(!round.is_empty(), "n = {n}: round {k} is empty");
                let mut busy = BTreeSet::new();
                for &(s, c) in round {
                    assert!(s < n && c < n && s != c, "n = {n}: ({s}, {c})");
                    assert!(
                        busy.insert(s) && busy.insert(c),
                        "n = {n}: a host twice in round {k}"
                    );
                    assert!(
                        seen.insert((s.min(c), s.max(c))),
                        "n = {n}: ({s}, {c}) twice"
                    );
                    serves[s] += 1;
                    measures[c] += 1;
                }
                // Everybody plays each round, but one host when n is odd.
                assert_eq!(busy.len(), n - n % 2, "n = {n}, round {k}");
            }
            assert_eq!(
                seen.len(),
                n * n.saturating_sub(1) / 2,
                "n = {n}: pairs missing"
            );
            if n >= 3 {
                assert!(
                    serves.iter().all(|&s| s > 0) && measures.iter().all(|&m| m > 0),
                    "n = {n}: a host always serves or always measures: {serves:?} {measures:?}"
                );
            }
            // Serving is shared out evenly: counts differ by at most one.
            if n >= 2 {
                let (lo, hi) = (serves.iter().min().unwrap(), serves.iter().max().unwrap());
                assert!(hi - lo <= 1, "n = {n}: serves {serves:?}");
            }
        }
    }

    fn cand(spec: &str, identity: &str) -> PoolCandidate {
        PoolCandidate {
            spec: spec.into(),
            identity: identity.into(),
            size_bytes: 1 << 30,
        }
    }

    #[test]
    fn pool_groups_keep_identities_two_hosts_share() {
        let per_host = vec![
            vec![cand("dax:/dev/dax1.0", "A"), cand("dax:/dev/dax2.0", "B")],
            vec![cand("dax:/dev/dax0.0", "A")],
            vec![],
            vec![cand("dax:/dev/dax3.0", "C"), cand("dax:/dev/dax1.0", "A")],
            vec![cand("dax:/dev/dax0.0", "B")],
            // One host listing an identity twice counts once.
            vec![cand("dax:/dev/dax0.0", "D"), cand("dax:/dev/dax1.0", "D")],
        ];
        assert_eq!(
            pool_groups(&per_host),
            vec![
                ("A".to_string(), vec![0, 1, 3]),
                ("B".to_string(), vec![0, 4])
            ]
        );
        assert!(pool_groups(&[]).is_empty());
    }

    #[test]
    fn the_lab_s_cxl_devdax_is_a_candidate_and_the_nvdimm_is_not() {
        let (yes, no) = pool_candidates_at(&fixture("sysfs-cxl-devdax"));
        // dax1.0: region1 at 0x1d0000000, mem0 serial 0x1234, 1 way, 256 B; the dax
        // device starts 2 MiB in (0x1d0200000) and holds 534773760 bytes.
        assert_eq!(
            yes,
            vec![PoolCandidate {
                spec: "dax:/dev/dax1.0".into(),
                identity: "cxl:serials=0x1234:ways=1:gran=256:offset=2097152:size=534773760".into(),
                size_bytes: 534773760,
            }]
        );
        assert_eq!(no.len(), 1, "{no:?}");
        assert!(no[0].starts_with("dax0.0: an NVDIMM"), "{no:?}");
    }

    #[test]
    fn system_ram_mode_is_not_a_candidate() {
        let (yes, no) = pool_candidates_at(&fixture("sysfs-cxl-ram"));
        assert!(yes.is_empty(), "{yes:?}");
        assert!(
            no.iter()
                .any(|n| n.starts_with("dax1.0: in system-ram mode")),
            "{no:?}"
        );
    }

    /// The identity from synthetic values: positions order the serials, the region's
    /// start is subtracted, and every missing piece is a reason.
    #[test]
    fn identity_rules() {
        let dir = tempfile::tempdir().unwrap();
        let mut topo = Topology::read(dir.path());
        topo.cxl.regions.push(bench_core::cxl::CxlRegion {
            name: "region4".into(),
            mode: Some("ram".into()),
            start: Some(0x40_0000_0000),
            size_bytes: 8 << 30,
            interleave_ways: Some(2),
            interleave_granularity_bytes: Some(4096),
            committed: true,
            root_decoder: Some("decoder0.1".into()),
            targets: vec![],
            access: vec![],
        });
        let mref = |name: &str, serial: Option<&str>, position| bench_core::cxl::MemdevRef {
            memdev: name.into(),
            serial: serial.map(String::from),
            pci: None,
            position,
        };
        let backing = |memdevs| Backing::CxlRegion {
            region: "region4".into(),
            mode: Some("ram".into()),
            interleave_ways: Some(2),
            interleave_granularity_bytes: Some(4096),
            window: Some("decoder0.1".into()),
            memdevs,
        };
        let mut dax = DaxDevice {
            name: "dax4.0".into(),
            path: "/dev/dax4.0".into(),
            size_bytes: 1 << 30,
            align_bytes: 2 << 20,
            target_node: None,
            mode: Some("devdax".into()),
            backing: Some(backing(vec![
                mref("mem7", Some("0xBEEF"), 1),
                mref("mem3", Some("0xcafe"), 0),
            ])),
        };
        let range = |start: u64| Range {
            start,
            end: start + (1 << 30),
        };
        let at = range(0x40_0000_0000 + (1 << 30));
        assert_eq!(
            pool_identity(&topo, &dax, &[at]).unwrap(),
            "cxl:serials=0xcafe,0xbeef:ways=2:gran=4096:offset=1073741824:size=1073741824"
        );
        // The same place in the same devices on a host that put the region elsewhere.
        let mut other = topo.clone();
        other.cxl.regions[0].start = Some(0x80_0000_0000);
        assert_eq!(
            pool_identity(&other, &dax, &[range(0x80_0000_0000 + (1 << 30))]),
            pool_identity(&topo, &dax, &[at])
        );
        let why = |d: &DaxDevice, r: &[Range]| pool_identity(&topo, d, r).unwrap_err();
        assert!(why(&dax, &[at, at]).contains("2 address ranges"));
        assert!(why(&dax, &[range(0x10_0000_0000)]).contains("below region4"));
        let mut d = dax.clone();
        d.backing = Some(backing(vec![
            mref("mem3", Some("0xcafe"), 0),
            mref("mem7", None, 1),
        ]));
        assert!(why(&d, &[at]).contains("mem7 reports no serial"));
        d.backing = Some(backing(vec![mref("mem3", Some("0xcafe"), 0)]));
        assert!(why(&d, &[at]).contains("1 of its 2 memory devices"));
        d.backing = Some(Backing::CxlWindow {
            window: "decoder0.0".into(),
        });
        assert!(why(&d, &[at]).contains("no region"));
        d.backing = Some(Backing::NotCxl);
        assert!(why(&d, &[at]).contains("not CXL"));
        dax.mode = Some("system-ram".into());
        assert!(why(&dax, &[at]).contains("system-ram mode"));
    }

    #[test]
    fn no_candidates_say_why() {
        let c = Candidates::none("no pairs asked for");
        assert_eq!(c.verbs, Err("no pairs asked for".to_string()));
        assert!(c.pools.is_empty());
    }

    #[test]
    fn local_candidates_say_why_verbs_cannot_pair_here() {
        let c = local_candidates();
        match &c.verbs {
            Err(why) if !bench_ibverbs::built_with_verbs() => {
                assert_eq!(why, bench_ibverbs::NOT_BUILT)
            }
            Err(why) => assert!(why.contains("RDMA") || why.contains("port"), "{why}"),
            Ok(dev) => assert!(!dev.is_empty()),
        }
        // Round trip through the hello's JSON.
        let back: Candidates = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    /// Without an RDMA device (or the feature), both sides end at once with the reason;
    /// never a hang.
    #[test]
    fn verbs_pair_without_a_device_is_an_error_with_the_reason() {
        if bench_ibverbs::default_device().is_ok() {
            return; // a machine with RDMA: the lab's fleet test pairs for real
        }
        let run = run_args(&["--quick", "--cpu", "0"]);
        let t = Duration::from_secs(2);
        let t0 = std::time::Instant::now();
        let e = format!(
            "{:#}",
            measure_verbs(&run, "127.0.0.1", 18599, t).unwrap_err()
        );
        assert!(e.contains("verbs pair client of 127.0.0.1:18599"), "{e}");
        assert!(e.contains("cxlchar verbs --quick --cpu 0 --seed"), "{e}");
        let e2 = format!("{:#}", serve_verbs(&run, 18599, t).unwrap_err());
        assert!(e2.contains("served no client"), "{e2}");
        for e in [&e, &e2] {
            if bench_ibverbs::built_with_verbs() {
                assert!(e.contains("RDMA") || e.contains("port"), "{e}");
            } else {
                assert!(e.contains(bench_ibverbs::NOT_BUILT), "{e}");
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_rank_maps_only_a_pool_it_found_and_a_window_inside_it() {
        let c = Candidates {
            verbs: Err("none".into()),
            pools: vec![cand("dax:/dev/dax1.0", "A")],
        };
        assert_eq!(
            local_pool(&c, "A", 0, 32 << 20).unwrap().spec,
            "dax:/dev/dax1.0"
        );
        let e = format!(
            "{:#}",
            local_pool(&c, "file:/tmp/victim", 0, 8 << 20).unwrap_err()
        );
        assert!(e.contains("does not have (its pools: A)"), "{e}");
        for (off, len) in [(1 << 30, 1), (0, (1 << 30) + 1), (u64::MAX, 2), (0, 0)] {
            let e = format!("{:#}", local_pool(&c, "A", off, len).unwrap_err());
            assert!(e.contains("does not lie inside dax:/dev/dax1.0"), "{e}");
        }
        let none = Candidates::none("no pairs asked for");
        assert!(format!("{:#}", local_pool(&none, "A", 0, 1).unwrap_err()).contains("none"));
    }

    proptest::proptest! {
        /// A window is taken exactly when it lies inside the pool.
        #[test]
        fn pool_windows_lie_inside_the_pool(off in proptest::num::u64::ANY, len in proptest::num::u64::ANY, size in proptest::num::u64::ANY) {
            let c = Candidates {
                verbs: Err("none".into()),
                pools: vec![PoolCandidate { spec: "dax:/dev/dax0.0".into(), identity: "A".into(), size_bytes: size }],
            };
            let inside = len > 0 && off.checked_add(len).is_some_and(|e| e <= size);
            proptest::prop_assert_eq!(local_pool(&c, "A", off, len).is_ok(), inside);
        }

        /// A verbs port lies above the rendezvous and the privileged ports, or is none.
        #[test]
        fn verbs_ports_are_above_the_rendezvous(rv in proptest::num::u16::ANY, slot in proptest::num::u16::ANY) {
            match verbs_port(rv, slot) {
                Some(p) => proptest::prop_assert!(p > rv && p >= 1024),
                None => proptest::prop_assert!(u32::from(rv.max(1023)) + 1 + u32::from(slot) > 65_535),
            }
        }
    }

    #[test]
    fn a_pool_pair_needs_allow_write() {
        let run = run_args(&["--quick"]);
        let t = Duration::from_secs(1);
        for e in [
            serve_pool(&run, "file:/nonexistent/pool", 0, 8 << 20, t).unwrap_err(),
            measure_pool(&run, "file:/nonexistent/pool", 0, 8 << 20, t).unwrap_err(),
        ] {
            let e = format!("{e:#}");
            assert!(e.contains("needs --allow-write"), "{e}");
        }
    }

    /// Both sides of a pool pair in this process (the follower on a thread) over a pool
    /// file: the leader's document has the pool messaging keys and says what ran.
    #[test]
    fn an_in_process_pool_pair_over_a_file_measures() {
        let cpus = bench_core::pin::allowed_cpus();
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let spec = format!("file:{}", dir.path().join("pool").display());
        let (lead_cpu, follow_cpu) = (cpus[0], *cpus.get(1).unwrap_or(&cpus[0]));
        let leader = run_args(&["--quick", "--allow-write", "--cpu", &lead_cpu.to_string()]);
        let follower = run_args(&["--quick", "--allow-write", "--cpu", &follow_cpu.to_string()]);
        let t = Duration::from_secs(60);
        let s2 = spec.clone();
        let server = std::thread::spawn(move || serve_pool(&follower, &s2, 0, 8 << 20, t));
        let doc = measure_pool(&leader, &spec, 0, 8 << 20, t).unwrap();
        server.join().unwrap().unwrap();
        for k in ["pool_msg_lat_ns", "pool_flag_lat_ns", "pool_msg_bw_gbs"] {
            assert!(doc.params.get(k).is_some_and(|v| *v > 0.0), "{k} missing");
        }
        let cmd = doc.command_line.join(" ");
        assert!(
            cmd.starts_with("cxlchar pool msg --quick --cpu")
                && cmd.contains(&format!(
                    "--pool {spec} --offset 0 --len 8388608 --role leader"
                )),
            "{cmd}"
        );
        assert!(doc.measurements.iter().all(|m| m.benchmark == "pool.msg"));
    }
}
