//! One rank's side of a fleet job: find rank 0's rendezvous, introduce itself, then do
//! what the coordinator says (measure this host, serve or measure a pair) until it says
//! the job is over.
//!
//! A rank connects only to rank 0's host as the launcher names it, and takes for rank 0
//! only an answer that proves the job's key for that connection, from a process of its
//! own user when it is one of this machine ([`super::auth`]). Anything else on a port it
//! tries is a stranger: logged once, ignored (the rank tries the next port, and again
//! until the fleet timeout), never obeyed. Once admitted, the commands name no path,
//! offset or size: a pool pair's identity is looked up among this host's own pools.
//!
//! A reader thread watches the connection the whole time, also while this rank
//! measures: when rank 0 reports a failure, closes the connection or stays silent for
//! the fleet timeout, the reader thread prints why, removes this process's unfinished
//! files and ends the process (exit 1) at once, rather than after the measurement.

use super::auth::{self, Keys};
use super::launcher::Rank0;
use super::pairs;
use super::wire::{self, Hello, Sender, ToCoordinator, ToRank};
use crate::cli::RunArgs;
use anyhow::{anyhow, bail, Context as _, Result};
use bench_core::params::ParamsFile;
use std::collections::BTreeSet;
use std::io::BufReader;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// What a rank needs to take part.
#[derive(Debug)]
pub struct Config {
    /// Where rank 0 runs.
    pub rank0: Rank0,
    /// The ports to try, in order.
    pub ports: Vec<u16>,
    /// How long to look for rank 0, and how long rank 0 may stay silent.
    pub timeout: Duration,
    /// The introduction (its nonce and proof are made for each connection).
    pub hello: Hello,
    /// The job's key, for the proofs of the handshake.
    pub keys: Keys,
    /// Set by rank 0's coordinator when it failed before this rank was admitted.
    pub abort: Option<Arc<OnceLock<String>>>,
}

/// What this rank's run came to.
#[derive(Debug)]
pub struct Finished {
    /// The coordinator's last word (`rank 0 wrote fleet.json`).
    pub message: String,
    /// The host this rank belongs to.
    pub host: String,
    /// Whether this rank measured its host.
    pub measured: bool,
}

fn addresses(rank0: &Rank0, port: u16) -> Vec<SocketAddr> {
    match rank0 {
        Rank0::Local => vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)],
        Rank0::Host(h) => {
            let mut v: Vec<SocketAddr> = (h.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect())
                .unwrap_or_default();
            v.sort_by_key(|a| !a.is_ipv4());
            v
        }
        Rank0::Addrs(ips) => ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect(),
    }
}

/// Where rank 0 runs, in words (`host lab-a`).
pub fn describe(rank0: &Rank0) -> String {
    match rank0 {
        Rank0::Local => "this machine".into(),
        Rank0::Host(h) => format!("host {h}"),
        Rank0::Addrs(a) => format!(
            "mpirun's host ({})",
            a.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What answered a hello on one connection.
enum Answer {
    /// Rank 0 of this job admitted this rank: the reader, with whatever it holds.
    Admitted(BufReader<TcpStream>),
    /// Rank 0 of this job refused this rank, for this reason.
    Refused(String),
    /// Not rank 0 of this job, and why.
    Stranger(String),
}

/// Most strangers logged one by one.
const MAX_STRANGERS_LOGGED: usize = 20;

/// Introduces this rank on `s` and reads the answer; `Err`: this rank cannot introduce
/// itself at all (its hello is too long, no random source).
fn handshake(cfg: &Config, s: &TcpStream) -> Result<Answer> {
    let _ = s.set_nodelay(true);
    let (Ok(rank_end), Ok(rank0_end)) = (s.local_addr(), s.peer_addr()) else {
        return Ok(Answer::Stranger("the connection has no address".into()));
    };
    if let Err(e) = auth::check_peer_owner(s, "the process answering") {
        return Ok(Answer::Stranger(format!("{e:#}")));
    }
    let nonce = auth::nonce()?;
    let mut hello = cfg.hello.clone();
    hello.proof = cfg
        .keys
        .hello_proof(hello.rank, &nonce, rank_end, rank0_end);
    hello.nonce = nonce.clone();
    let job_key = hello.job_key.clone();
    let msg = ToCoordinator::Hello(Box::new(hello));
    let n = serde_json::to_vec(&msg)
        .context("encoding the hello")?
        .len()
        + 1;
    if n > wire::MAX_FIRST_MESSAGE_BYTES {
        bail!(
            "this rank's hello (its command line and {} pool(s)) is {n} bytes, more than the \
             {} rank 0 reads from a connection it does not know yet: shorten the command line",
            cfg.hello.candidates.pools.len(),
            wire::MAX_FIRST_MESSAGE_BYTES
        );
    }
    let (Ok(sender), Ok(mut r)) = (Sender::new(s), wire::reader(s)) else {
        return Ok(Answer::Stranger("the connection could not be used".into()));
    };
    if let Err(e) = sender.send(&msg) {
        return Ok(Answer::Stranger(format!(
            "the hello could not be sent: {e:#}"
        )));
    }
    let deadline = Instant::now() + wire::first_message_time(cfg.timeout);
    let proven = |verdict: &str, proof: &str| {
        cfg.keys
            .check_answer(verdict, &nonce, rank_end, rank0_end, proof)
    };
    Ok(match wire::receive_first::<ToRank>(s, &mut r, deadline) {
        Ok(Some(ToRank::Admitted { job_key: k, proof }))
            if k == job_key && proven("admitted", &proof) =>
        {
            let _ = s.set_read_timeout(Some(cfg.timeout.max(Duration::from_secs(1))));
            Answer::Admitted(r)
        }
        Ok(Some(ToRank::Refused { reason, proof }))
            if proven(&format!("refused: {reason}"), &proof) =>
        {
            Answer::Refused(reason)
        }
        Ok(Some(ToRank::Admitted { .. } | ToRank::Refused { .. })) => Answer::Stranger(format!(
            "its answer does not prove job {job_key} (another job's rank 0, or a stranger)"
        )),
        Ok(Some(_)) => {
            Answer::Stranger("its first answer is neither an admission nor a refusal".into())
        }
        Ok(None) => Answer::Stranger("it closed the connection without an answer".into()),
        Err(e) => Answer::Stranger(format!("{e:#}")),
    })
}

/// Connects and is admitted: the stream after rank 0's proven admission.
fn connect(cfg: &Config) -> Result<(TcpStream, BufReader<TcpStream>)> {
    let deadline = Instant::now() + cfg.timeout.min(bench_core::units::MAX_DURATION);
    let mut resolved_any = false;
    let rank = cfg.hello.rank;
    let mut strangers: BTreeSet<(SocketAddr, String)> = BTreeSet::new();
    loop {
        if let Some(why) = cfg.abort.as_ref().and_then(|a| a.get()) {
            bail!("{why}");
        }
        for &port in &cfg.ports {
            let addrs = addresses(&cfg.rank0, port);
            resolved_any |= !addrs.is_empty();
            for a in addrs {
                let Ok(s) = TcpStream::connect_timeout(&a, Duration::from_secs(1)) else {
                    continue;
                };
                match handshake(cfg, &s)? {
                    Answer::Admitted(r) => return Ok((s, r)),
                    Answer::Refused(reason) => bail!("rank 0 refused this rank: {reason}"),
                    Answer::Stranger(why) => {
                        let _ = s.shutdown(std::net::Shutdown::Both);
                        if strangers.len() < MAX_STRANGERS_LOGGED
                            && strangers.insert((a, why.clone()))
                        {
                            eprintln!(
                                "fleet rank {rank}: ignored {a}, which is not rank 0 of this \
                                 job: {why}"
                            );
                        }
                    }
                }
            }
        }
        if Instant::now() >= deadline {
            let ports: Vec<String> = cfg.ports.iter().map(|p| p.to_string()).collect();
            let seen: BTreeSet<String> = strangers.iter().map(|(a, _)| a.to_string()).collect();
            bail!(
                "could not reach rank 0's rendezvous on {} (port {}) within {}{}{}: did rank 0 \
                 start, or fail first (see its output)?",
                describe(&cfg.rank0),
                ports.join(", "),
                humantime::format_duration(cfg.timeout),
                if resolved_any {
                    ""
                } else {
                    " (the host name does not resolve)"
                },
                if seen.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} answered without proving it is rank 0 of job {} (ignored, see \
                         above)",
                        seen.into_iter().collect::<Vec<_>>().join(", "),
                        cfg.hello.job_key
                    )
                }
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Ends the process: the job failed or rank 0 was lost.
fn fatal(rank: usize, msg: &str) -> ! {
    eprintln!("error: fleet rank {rank}: {msg}");
    for p in bench_core::cleanup::registered() {
        let _ = std::fs::remove_file(p);
    }
    std::process::exit(crate::exit::Status::Failed.code());
}

/// Takes part in the job; `measure` measures this host (called at most once).
pub fn run(
    cfg: Config,
    run: &RunArgs,
    measure: &mut dyn FnMut() -> Result<ParamsFile>,
) -> Result<Finished> {
    let rank = cfg.hello.rank;
    let (stream, reader) = connect(&cfg)?;
    let rendezvous = stream.peer_addr()?.port();
    let sender = Sender::new(&stream)?;
    spawn_heartbeat(sender.clone(), wire::heartbeat(cfg.timeout));
    let rx = spawn_reader(reader, rank, cfg.timeout);
    let pairing = Pairing {
        cfg: &cfg,
        run,
        sender: &sender,
        rendezvous,
    };
    let mut host = cfg.hello.host.clone();
    let mut measured = false;
    loop {
        let msg = rx
            .recv()
            .map_err(|_| anyhow!("the connection to rank 0 ended"))?;
        match msg {
            ToRank::Welcome { measuring, host: h } => {
                host = h;
                if !measuring {
                    eprintln!(
                        "fleet rank {rank}: another rank measures host {host}; this one waits"
                    );
                }
            }
            ToRank::Measure => {
                let r = measure();
                measured = true;
                sender.send(&ToCoordinator::Measured {
                    result: r.map(Box::new).map_err(|e| format!("{e:#}")),
                })?;
            }
            ToRank::ServeVerbs { slot, peer } => pairing.serve_verbs(slot, &peer)?,
            ToRank::MeasureVerbs {
                address,
                slot,
                peer,
            } => pairing.measure_verbs(address, slot, &peer)?,
            ToRank::ServePool { identity, peer } => pairing.serve_pool(&identity, &peer)?,
            ToRank::MeasurePool { identity, peer } => pairing.measure_pool(&identity, &peer)?,
            ToRank::Done { message, .. } => {
                return Ok(Finished {
                    message,
                    host,
                    measured,
                })
            }
            ToRank::Heartbeat | ToRank::Admitted { .. } | ToRank::Refused { .. } => {}
        }
    }
}

/// Sends rank 0 a heartbeat `every` so long, until the connection breaks.
fn spawn_heartbeat(s: Sender, every: Duration) {
    std::thread::spawn(move || loop {
        std::thread::sleep(every);
        if s.send(&ToCoordinator::Heartbeat).is_err() {
            return;
        }
    });
}

/// Watches the connection on a thread of its own and hands on rank 0's commands; ends
/// the process when rank 0 reports a failure, closes the connection or stays silent for
/// `timeout`.
fn spawn_reader(
    mut reader: BufReader<TcpStream>,
    rank: usize,
    timeout: Duration,
) -> Receiver<ToRank> {
    let (tx, rx) = channel::<ToRank>();
    std::thread::spawn(move || loop {
        match wire::receive_bounded::<ToRank, _>(&mut reader, wire::MAX_TO_RANK_BYTES) {
            Ok(Some(ToRank::Heartbeat)) => {}
            Ok(Some(ToRank::Done { ok: false, message })) => fatal(rank, &message),
            Ok(Some(m @ ToRank::Done { .. })) => {
                let _ = tx.send(m);
                return;
            }
            Ok(Some(m)) => {
                if tx.send(m).is_err() {
                    return;
                }
            }
            Ok(None) => fatal(
                rank,
                "rank 0 closed the connection before the job ended (rank 0 died or was killed)",
            ),
            Err(e) => lost(rank, timeout, e),
        }
    });
    rx
}

/// Ends the process on a read error: rank 0 silent for `timeout`, or the connection
/// broken.
fn lost(rank: usize, timeout: Duration, e: anyhow::Error) -> ! {
    let timed_out = e
        .downcast_ref::<std::io::Error>()
        .or_else(|| e.root_cause().downcast_ref::<std::io::Error>())
        .is_some_and(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            )
        });
    if timed_out {
        fatal(
            rank,
            &format!(
                "no word from rank 0 for {}: lost",
                humantime::format_duration(timeout)
            ),
        )
    } else {
        fatal(rank, &format!("the connection to rank 0 broke: {e:#}"))
    }
}

/// This rank's side of the pairs rank 0 asks for, each reported back when it ends.
struct Pairing<'a> {
    cfg: &'a Config,
    run: &'a RunArgs,
    sender: &'a Sender,
    /// The rendezvous' port, above which the verbs pairs listen.
    rendezvous: u16,
}

impl Pairing<'_> {
    /// Serves a verbs pair for `peer`, once rank 0 knows this side listens.
    fn serve_verbs(&self, slot: u16, peer: &str) -> Result<()> {
        let r = match verbs_port(self.cfg, self.rendezvous, slot) {
            Ok(port) => {
                self.sender.send(&ToCoordinator::Serving)?;
                pairs::serve_verbs(self.run, port, self.cfg.timeout)
            }
            Err(e) => Err(e),
        };
        pair_done(self.sender, r.map(|()| None), || {
            format!("verbs server for {peer}")
        })
    }

    /// Measures a verbs pair against `peer`'s server at `address`.
    fn measure_verbs(&self, address: IpAddr, slot: u16, peer: &str) -> Result<()> {
        let r = verbs_port(self.cfg, self.rendezvous, slot).and_then(|port| {
            pairs::measure_verbs(self.run, &address.to_string(), port, self.cfg.timeout)
        });
        pair_done(self.sender, r.map(Some), || {
            format!("verbs against {peer} ({address})")
        })
    }

    /// Follows `peer`'s pool pair on this host's pool `identity`.
    fn serve_pool(&self, identity: &str, peer: &str) -> Result<()> {
        let (offset, len) = pool_window(self.run);
        let r = pairs::local_pool(&self.cfg.hello.candidates, identity, offset, len)
            .and_then(|p| pairs::serve_pool(self.run, &p.spec, offset, len, self.cfg.timeout));
        pair_done(self.sender, r.map(|()| None), || {
            format!("pool follower on {identity} for {peer}")
        })
    }

    /// Leads a pool pair with `peer` on this host's pool `identity`.
    fn measure_pool(&self, identity: &str, peer: &str) -> Result<()> {
        let (offset, len) = pool_window(self.run);
        let r = pairs::local_pool(&self.cfg.hello.candidates, identity, offset, len)
            .and_then(|p| pairs::measure_pool(self.run, &p.spec, offset, len, self.cfg.timeout));
        pair_done(self.sender, r.map(Some), || {
            format!("pool leader on {identity} with {peer}")
        })
    }
}

/// The window of this rank's pool pairs: its own `--fleet-pool-offset` and
/// `--fleet-pool-len`.
fn pool_window(run: &RunArgs) -> (u64, u64) {
    (run.fleet.fleet_pool_offset, run.fleet.fleet_pool_len as u64)
}

/// The port of the verbs pair in `slot`, on this rank's side: the slot is below the
/// number of ranks, this host has an RDMA device, and the port exists.
fn verbs_port(cfg: &Config, rendezvous: u16, slot: u16) -> Result<u16> {
    if let Err(why) = &cfg.hello.candidates.verbs {
        bail!("rank 0 asked for a verbs pair, and this host has no RDMA device to pair: {why}");
    }
    if usize::from(slot) >= cfg.hello.size {
        bail!(
            "rank 0 named verbs pair {slot} of a round, and a job of {} ranks has fewer",
            cfg.hello.size
        );
    }
    pairs::verbs_port(rendezvous, slot).ok_or_else(|| {
        anyhow!(
            "no TCP port above the rendezvous' {rendezvous} for verbs pair {slot}: choose a \
             lower --fleet-port"
        )
    })
}

/// Reports the end of this rank's side of a pair: the client's params (`Some`), `None`
/// for the serving side, or the error under `what` (`verbs against b (192.0.2.2)`).
fn pair_done(
    sender: &Sender,
    r: Result<Option<ParamsFile>>,
    what: impl FnOnce() -> String,
) -> Result<()> {
    sender.send(&ToCoordinator::PairDone {
        result: r
            .map(|p| p.map(Box::new))
            .map_err(|e| format!("{}: {e:#}", what())),
    })
}
