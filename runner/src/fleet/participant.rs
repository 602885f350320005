//! One rank's side of a fleet job: find rank 0's rendezvous, introduce itself, then do
//! what the coordinator says (measure this host, serve or measure a pair) until it says
//! the job is over.
//!
//! A reader thread watches the connection the whole time, also while this rank
//! measures: when rank 0 reports a failure, closes the connection or stays silent for
//! the fleet timeout, the reader thread prints why, removes this process's unfinished
//! files and ends the process (exit 1) at once, rather than after the measurement.

use super::launcher::Rank0;
use super::pairs;
use super::wire::{self, Hello, Sender, ToCoordinator, ToRank};
use crate::cli::RunArgs;
use anyhow::{anyhow, bail, Result};
use bench_core::params::ParamsFile;
use std::io::BufReader;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc::channel;
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
    /// The introduction.
    pub hello: Hello,
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

fn describe(rank0: &Rank0) -> String {
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

/// Connects and is admitted: the stream after its first message from the coordinator.
fn connect(cfg: &Config) -> Result<(TcpStream, BufReader<TcpStream>)> {
    let deadline = Instant::now() + cfg.timeout.min(bench_core::units::MAX_DURATION);
    let mut resolved_any = false;
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
                let _ = s.set_nodelay(true);
                let Ok(sender) = Sender::new(&s) else {
                    continue;
                };
                if sender
                    .send(&ToCoordinator::Hello(Box::new(cfg.hello.clone())))
                    .is_err()
                {
                    continue;
                }
                let _ = s.set_read_timeout(Some(cfg.timeout.max(Duration::from_secs(1))));
                let Ok(mut r) = wire::reader(&s) else {
                    continue;
                };
                match wire::receive::<ToRank, _>(&mut r) {
                    Ok(Some(ToRank::Refused {
                        other_job: false,
                        reason,
                    })) => bail!("rank 0 refused this rank: {reason}"),
                    Ok(Some(ToRank::Refused { .. })) | Ok(None) | Err(_) => continue,
                    // The reader (and whatever it has buffered) goes on to the reader
                    // thread.
                    Ok(Some(ToRank::Admitted)) => return Ok((s, r)),
                    Ok(Some(first)) => {
                        bail!("rank 0 did not admit this rank first: {first:?}");
                    }
                }
            }
        }
        if Instant::now() >= deadline {
            let ports: Vec<String> = cfg.ports.iter().map(|p| p.to_string()).collect();
            bail!(
                "could not reach rank 0's rendezvous on {} (port {}) within {}{}: did rank 0 \
                 start, or fail first (see its output)?",
                describe(&cfg.rank0),
                ports.join(", "),
                humantime::format_duration(cfg.timeout),
                if resolved_any {
                    ""
                } else {
                    " (the host name does not resolve)"
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
    std::process::exit(1);
}

/// Takes part in the job; `measure` measures this host (called at most once).
pub fn run(
    cfg: Config,
    run: &RunArgs,
    measure: &mut dyn FnMut() -> Result<ParamsFile>,
) -> Result<Finished> {
    let rank = cfg.hello.rank;
    let (stream, mut reader) = connect(&cfg)?;
    let sender = Sender::new(&stream)?;
    {
        let s = sender.clone();
        let every = wire::heartbeat(cfg.timeout);
        std::thread::spawn(move || loop {
            std::thread::sleep(every);
            if s.send(&ToCoordinator::Heartbeat).is_err() {
                return;
            }
        });
    }
    let (tx, rx) = channel::<ToRank>();
    let timeout = cfg.timeout;
    std::thread::spawn(move || loop {
        match wire::receive::<ToRank, _>(&mut reader) {
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
            Err(e) => {
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
        }
    });
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
            ToRank::ServeVerbs { port, peer } => {
                sender.send(&ToCoordinator::Serving)?;
                let r = pairs::serve_verbs(run, port, timeout).map(|()| None);
                pair_done(&sender, r, || format!("verbs server for {peer}"))?;
            }
            ToRank::MeasureVerbs {
                address,
                port,
                peer,
            } => {
                let r = pairs::measure_verbs(run, &address, port, timeout).map(Some);
                pair_done(&sender, r, || format!("verbs against {peer} ({address})"))?;
            }
            ToRank::ServePool {
                spec,
                offset,
                len,
                peer,
            } => {
                let r = pairs::serve_pool(run, &spec, offset, len, timeout).map(|()| None);
                pair_done(&sender, r, || format!("pool follower on {spec} for {peer}"))?;
            }
            ToRank::MeasurePool {
                spec,
                offset,
                len,
                peer,
            } => {
                let r = pairs::measure_pool(run, &spec, offset, len, timeout).map(Some);
                pair_done(&sender, r, || format!("pool leader on {spec} with {peer}"))?;
            }
            ToRank::Done { message, .. } => {
                return Ok(Finished {
                    message,
                    host,
                    measured,
                })
            }
            ToRank::Heartbeat | ToRank::Admitted | ToRank::Refused { .. } => {}
        }
    }
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
