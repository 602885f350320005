//! Rank 0's coordinator: accepts every rank, checks they belong to this job and run this
//! cxlchar, has one rank per host measure (hosts of one machine in turn), runs the pair
//! rounds, and writes the fleet file. Any rank lost or failed ends the job for all: each
//! rank is told why, and no fleet file is written.
//!
//! A connection is a stranger's until its hello proves the job's key for that very
//! connection and, when it comes from this machine, its owner is this process's user
//! ([`super::auth`]): a stranger is logged and turned away, and never ends the job. Before
//! its hello a connection may send [`wire::MAX_FIRST_MESSAGE_BYTES`] in
//! [`wire::first_message_time`], and at most [`MAX_PENDING`] connections wait for theirs.

use super::auth::{self, Keys};
use super::launcher::Launch;
use super::pairs::{self, Candidates};
use super::wire::{self, Hello, Sender, ToCoordinator, ToRank};
use crate::document::fleet::{
    FleetFile, FleetHost, LauncherInfo, PairKind, PairResult, PairSkipped, PoolPair, FLEET_FORMAT,
    FLEET_SCHEMA_VERSION,
};
use anyhow::{anyhow, Result};
use bench_core::params::{ParamsFile, Warning};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the coordinator needs.
#[derive(Debug)]
pub struct Config {
    /// The launch (job key, size, variables).
    pub launch: Launch,
    /// The bound rendezvous socket.
    pub listener: TcpListener,
    /// A rank silent this long is lost; every rank must connect within it.
    pub timeout: Duration,
    /// Which pair kinds to run.
    pub pairs: Vec<PairKind>,
    /// Pool window offset in bytes (`--fleet-pool-offset`).
    pub pool_offset: u64,
    /// Pool window length in bytes (`--fleet-pool-len`).
    pub pool_len: u64,
    /// Whether writing into pools is allowed.
    pub allow_write: bool,
    /// The job's key, for the proofs of the handshake.
    pub keys: Keys,
    /// Where the fleet file is written (`--fleet-out`).
    pub out: PathBuf,
    /// This cxlchar's version.
    pub version: String,
    /// Rank 0's command line after the program name.
    pub command_line: Vec<String>,
    /// When rank 0 started.
    pub started_at: String,
}

/// Most connections that may wait for their hello at once; more are closed unread.
pub const MAX_PENDING: usize = 64;

/// Strangers logged one by one; past that, one line says more were ignored.
const MAX_STRANGERS_LOGGED: usize = 20;

/// A hello, the sending half of its connection, and the connection's two ends (the
/// rank's, rank 0's).
struct HelloOn {
    hello: Box<Hello>,
    sender: Sender,
    rank_end: SocketAddr,
    rank0_end: SocketAddr,
}

enum Event {
    Hello(HelloOn),
    Stranger(String),
    Msg(usize, ToCoordinator),
    Closed(usize, String),
}

struct Rank {
    hello: Hello,
    sender: Sender,
    address: IpAddr,
    last_seen: Instant,
}

struct Host {
    name: String,
    ranks: Vec<usize>,
    measuring: usize,
    params: Option<ParamsFile>,
}

struct Coordinator {
    cfg: Config,
    rx: Receiver<Event>,
    ranks: BTreeMap<usize, Rank>,
    beat: Arc<Mutex<Vec<Sender>>>,
    strangers: usize,
}

/// Runs the coordinator until the job ends; `Ok`: the fleet file was written.
pub fn run(cfg: Config) -> Result<FleetFile> {
    let (tx, rx) = channel();
    let listener = cfg.listener.try_clone()?;
    let hello_time = wire::first_message_time(cfg.timeout);
    std::thread::spawn(move || accept(listener, tx, hello_time));
    let beat: Arc<Mutex<Vec<Sender>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let every = wire::heartbeat(cfg.timeout);
    {
        let (beat, stop) = (beat.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                let senders = beat.lock().map(|b| b.clone()).unwrap_or_default();
                for s in senders {
                    let _ = s.send(&ToRank::Heartbeat);
                }
            }
        });
    }
    let mut c = Coordinator {
        cfg,
        rx,
        ranks: BTreeMap::new(),
        beat,
        strangers: 0,
    };
    let r = c.job();
    stop.store(true, Ordering::Relaxed);
    match r {
        Ok(file) => {
            let msg = format!("rank 0 wrote {}", c.cfg.out.display());
            c.finish(true, &msg);
            Ok(file)
        }
        Err(e) => {
            let msg = format!("{e:#}");
            c.finish(false, &msg);
            Err(anyhow!("{msg}"))
        }
    }
}

/// Accepts connections; each one's hello (or why it is a stranger's) goes to the
/// coordinator, then its messages.
fn accept(listener: TcpListener, tx: std::sync::mpsc::Sender<Event>, hello_time: Duration) {
    let pending = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Ok(peer) = stream.peer_addr() else {
            continue;
        };
        if pending.load(Ordering::SeqCst) >= MAX_PENDING {
            let _ = tx.send(Event::Stranger(format!(
                "{peer}: {MAX_PENDING} connections already wait for their hello; closed"
            )));
            continue;
        }
        pending.fetch_add(1, Ordering::SeqCst);
        let (tx, pending) = (tx.clone(), pending.clone());
        std::thread::spawn(move || {
            let first = first_hello(&stream, peer, hello_time);
            pending.fetch_sub(1, Ordering::SeqCst);
            let (on, mut reader) = match first {
                Ok(h) => h,
                Err(why) => {
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    let _ = tx.send(Event::Stranger(format!("{peer}: {why:#}")));
                    return;
                }
            };
            let rank = on.hello.rank;
            let _ = stream.set_read_timeout(None);
            if tx.send(Event::Hello(on)).is_err() {
                return;
            }
            loop {
                match wire::receive::<ToCoordinator, _>(&mut reader) {
                    Ok(Some(m)) => {
                        if tx.send(Event::Msg(rank, m)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        let _ = tx.send(Event::Closed(
                            rank,
                            "closed its connection (it died or was killed)".into(),
                        ));
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Event::Closed(rank, format!("broke the protocol: {e:#}")));
                        return;
                    }
                }
            }
        });
    }
}

/// The hello of a new connection from `peer` (and the reader, for its next messages):
/// the first message, within its bounds of size and time, from a process of this user
/// when it is one of this machine.
fn first_hello(
    stream: &std::net::TcpStream,
    peer: SocketAddr,
    hello_time: Duration,
) -> Result<(HelloOn, std::io::BufReader<std::net::TcpStream>)> {
    auth::check_peer_owner(stream, "the process that connected")?;
    let rank0_end = stream.local_addr()?;
    let mut reader = wire::reader(stream)?;
    let sender = Sender::new(stream)?;
    let deadline = Instant::now() + hello_time;
    match wire::receive_first::<ToCoordinator>(stream, &mut reader, deadline) {
        Ok(Some(ToCoordinator::Hello(hello))) => Ok((
            HelloOn {
                hello,
                sender,
                rank_end: peer,
                rank0_end,
            },
            reader,
        )),
        Ok(Some(_)) => Err(anyhow!("its first message is not a hello")),
        Ok(None) => Err(anyhow!("closed without a hello")),
        Err(e) => Err(e.context(format!("no hello from {peer}"))),
    }
}

impl Coordinator {
    fn name(&self, rank: usize) -> String {
        match self.ranks.get(&rank) {
            Some(r) => format!("rank {rank} (host {})", r.hello.host),
            None => format!("rank {rank}"),
        }
    }

    /// Tells every rank the job is over (rank 0's own participant last: its process
    /// exits when it reads a failure).
    fn finish(&mut self, ok: bool, message: &str) {
        let done = ToRank::Done {
            ok,
            message: message.to_string(),
        };
        let mut order: Vec<usize> = self.ranks.keys().copied().filter(|&r| r != 0).collect();
        order.push(0);
        for r in order {
            if let Some(rank) = self.ranks.get(&r) {
                let _ = rank.sender.send(&done);
                if !ok && r != 0 {
                    rank.sender.shutdown();
                }
            }
        }
    }

    /// Logs a connection that is not a rank of this job (the first
    /// [`MAX_STRANGERS_LOGGED`], then one line).
    fn stranger(&mut self, who: &str) {
        self.strangers += 1;
        if self.strangers <= MAX_STRANGERS_LOGGED {
            eprintln!("fleet: ignored a connection that is not a rank of this job: {who}");
        } else if self.strangers == MAX_STRANGERS_LOGGED + 1 {
            eprintln!("fleet: ignoring more connections that are not ranks of this job");
        }
    }

    /// Checks a hello; `Err` ends the job, `Ok(false)` turns a stranger away.
    fn admit(&mut self, on: HelloOn) -> Result<bool> {
        let HelloOn {
            hello,
            sender,
            rank_end,
            rank0_end,
        } = on;
        let hello = *hello;
        let keys = self.cfg.keys.clone();
        let nonce = hello.nonce.clone();
        let refuse = |reason: String| {
            let proof =
                keys.answer_proof(&format!("refused: {reason}"), &nonce, rank_end, rank0_end);
            let _ = sender.send(&ToRank::Refused { reason, proof });
            sender.shutdown();
        };
        let job_key = self.cfg.launch.job_key();
        if hello.job_key != job_key {
            refuse(format!(
                "this is the rendezvous of job {job_key}, not {}",
                hello.job_key
            ));
            self.stranger(&format!(
                "{rank_end}: rank {} of job {} (another job)",
                hello.rank,
                wire::shown(&hello.job_key, 120)
            ));
            return Ok(false);
        }
        if !self
            .cfg
            .keys
            .check_hello(hello.rank, &hello.nonce, rank_end, rank0_end, &hello.proof)
        {
            refuse(format!("no proof of job {job_key}"));
            self.stranger(&format!(
                "{rank_end}: a hello as rank {} of this job without its proof (a stranger, a \
                 relay, or a rank with another {})",
                hello.rank,
                auth::KEY_VAR
            ));
            return Ok(false);
        }
        if hello.version != self.cfg.version {
            let why = format!(
                "rank {} on host {} runs cxlchar {}, rank 0 runs cxlchar {}: every host of a \
                 fleet must run the same version (install one build everywhere)",
                hello.rank, hello.host, hello.version, self.cfg.version
            );
            refuse(why.clone());
            return Err(anyhow!(why));
        }
        let size = self.cfg.launch.size;
        if hello.size != size || hello.rank >= size {
            let why = format!(
                "rank {} on host {} was told the job has {} ranks, rank 0 was told {size}",
                hello.rank, hello.host, hello.size
            );
            refuse(why.clone());
            return Err(anyhow!(why));
        }
        if self.ranks.contains_key(&hello.rank) {
            let why = format!(
                "two processes say they are rank {} (hosts {} and {})",
                hello.rank, self.ranks[&hello.rank].hello.host, hello.host
            );
            refuse(why.clone());
            return Err(anyhow!(why));
        }
        if hello.command_line != self.cfg.command_line {
            let why = format!(
                "rank {} on host {} runs `{}`, rank 0 runs `{}`: every rank must run the same \
                 command",
                hello.rank,
                hello.host,
                crate::output::shell::command(&hello.command_line),
                crate::output::shell::command(&self.cfg.command_line)
            );
            refuse(why.clone());
            return Err(anyhow!(why));
        }
        sender.send(&ToRank::Admitted {
            job_key,
            proof: keys.answer_proof("admitted", &nonce, rank_end, rank0_end),
        })?;
        if let Ok(mut b) = self.beat.lock() {
            b.push(sender.clone());
        }
        self.ranks.insert(
            hello.rank,
            Rank {
                hello,
                sender,
                address: rank_end.ip(),
                last_seen: Instant::now(),
            },
        );
        Ok(true)
    }

    /// The next message that is not a heartbeat; `Err` when a rank is lost (closed, or
    /// silent for the timeout).
    fn next(&mut self) -> Result<(usize, ToCoordinator)> {
        loop {
            let now = Instant::now();
            for (r, rank) in &self.ranks {
                if now.duration_since(rank.last_seen) > self.cfg.timeout {
                    return Err(anyhow!(
                        "{} silent for {} (no heartbeat): lost",
                        self.name(*r),
                        humantime::format_duration(self.cfg.timeout)
                    ));
                }
            }
            match self.rx.recv_timeout(wire::heartbeat(self.cfg.timeout)) {
                Ok(Event::Msg(r, m)) => {
                    if let Some(rank) = self.ranks.get_mut(&r) {
                        rank.last_seen = Instant::now();
                    }
                    if !matches!(m, ToCoordinator::Heartbeat) {
                        return Ok((r, m));
                    }
                }
                Ok(Event::Closed(r, why)) => {
                    return Err(anyhow!("{} {why}; the job ends", self.name(r)))
                }
                Ok(Event::Hello(on)) => {
                    let rank = on.hello.rank;
                    if self.admit(on)? {
                        return Err(anyhow!("rank {rank} connected after the job started"));
                    }
                }
                Ok(Event::Stranger(who)) => self.stranger(&who),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(anyhow!("the rendezvous socket closed"))
                }
            }
        }
    }

    fn send(&self, rank: usize, msg: &ToRank) -> Result<()> {
        let r = self
            .ranks
            .get(&rank)
            .ok_or_else(|| anyhow!("rank {rank} is not connected"))?;
        r.sender
            .send(msg)
            .map_err(|e| anyhow!("{}: {e:#}", self.name(rank)))
    }

    fn gather(&mut self) -> Result<()> {
        let size = self.cfg.launch.size;
        let deadline = Instant::now() + self.cfg.timeout.min(bench_core::units::MAX_DURATION);
        while self.ranks.len() < size {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let missing: Vec<usize> =
                    (0..size).filter(|r| !self.ranks.contains_key(r)).collect();
                let mut named: Vec<String> =
                    missing.iter().take(20).map(|r| r.to_string()).collect();
                if missing.len() > named.len() {
                    named.push(format!("and {} more", missing.len() - named.len()));
                }
                return Err(anyhow!(
                    "rank(s) {} never connected to rank 0 within {} (were they started by the \
                     same srun/mpirun, with the same --fleet-port and {}?)",
                    named.join(", "),
                    humantime::format_duration(self.cfg.timeout),
                    auth::KEY_VAR
                ));
            }
            match self
                .rx
                .recv_timeout(left.min(wire::heartbeat(self.cfg.timeout)))
            {
                Ok(Event::Hello(on)) => {
                    self.admit(on)?;
                }
                Ok(Event::Msg(r, _)) => {
                    if let Some(rank) = self.ranks.get_mut(&r) {
                        rank.last_seen = Instant::now();
                    }
                }
                Ok(Event::Closed(r, why)) => {
                    return Err(anyhow!("{} {why} before the job started", self.name(r)))
                }
                Ok(Event::Stranger(who)) => self.stranger(&who),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(anyhow!("the rendezvous socket closed"))
                }
            }
        }
        Ok(())
    }

    fn job(&mut self) -> Result<FleetFile> {
        self.gather()?;
        // Hosts, in the order of their lowest rank; the lowest rank of each measures.
        let mut hosts: Vec<Host> = Vec::new();
        for (r, rank) in &self.ranks {
            match hosts.iter_mut().find(|h| h.name == rank.hello.host) {
                Some(h) => h.ranks.push(*r),
                None => hosts.push(Host {
                    name: rank.hello.host.clone(),
                    ranks: vec![*r],
                    measuring: *r,
                    params: None,
                }),
            }
        }
        for h in &hosts {
            for &r in &h.ranks {
                self.send(
                    r,
                    &ToRank::Welcome {
                        measuring: r == h.measuring,
                        host: h.name.clone(),
                    },
                )?;
            }
        }
        // Hosts of one machine measure in turn, machines in parallel.
        let mut queues: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, h) in hosts.iter().enumerate() {
            queues
                .entry(self.ranks[&h.measuring].hello.machine.clone())
                .or_default()
                .push(i);
        }
        let mut running: BTreeMap<usize, (String, usize)> = BTreeMap::new();
        for (m, q) in &mut queues {
            let i = q.remove(0);
            running.insert(hosts[i].measuring, (m.clone(), i));
            self.send(hosts[i].measuring, &ToRank::Measure)?;
        }
        while !running.is_empty() {
            let (r, msg) = self.next()?;
            match msg {
                ToCoordinator::Measured { result } => {
                    let (machine, i) = running.remove(&r).ok_or_else(|| {
                        anyhow!("{} sent results it was not asked for", self.name(r))
                    })?;
                    let p =
                        result.map_err(|e| anyhow!("host {} (rank {r}): {e}", hosts[i].name))?;
                    hosts[i].params = Some(*p);
                    let q = queues.get_mut(&machine).expect("queued machine");
                    if !q.is_empty() {
                        let j = q.remove(0);
                        running.insert(hosts[j].measuring, (machine, j));
                        self.send(hosts[j].measuring, &ToRank::Measure)?;
                    }
                }
                other => {
                    return Err(anyhow!("{} sent {other:?} out of turn", self.name(r)));
                }
            }
        }
        let (pairs, pairs_skipped) = self.pairs(&hosts)?;
        let warnings = fleet_warnings(&hosts, &self.ranks);
        let l = &self.cfg.launch;
        let file = FleetFile {
            format: FLEET_FORMAT.into(),
            fleet_schema_version: FLEET_SCHEMA_VERSION,
            cxlchar_version: self.cfg.version.clone(),
            command_line: self.cfg.command_line.clone(),
            started_at: self.cfg.started_at.clone(),
            finished_at: crate::run::now_rfc3339(),
            launcher: LauncherInfo {
                kind: l.kind.name().into(),
                job: l.job.clone(),
                ranks: l.size,
                variables: l.variables.clone(),
            },
            hosts: hosts
                .into_iter()
                .map(|h| FleetHost {
                    address: self.ranks[&h.measuring].address.to_string(),
                    host: h.name,
                    ranks: h.ranks,
                    measuring_rank: h.measuring,
                    params: h.params.expect("every host measured"),
                })
                .collect(),
            pairs,
            pairs_skipped,
            warnings,
        };
        let json = serde_json::to_string_pretty(&file)?;
        crate::document::write::write_result(&self.cfg.out, &json, 0)?;
        Ok(file)
    }

    fn candidates(&self, h: &Host) -> &Candidates {
        &self.ranks[&h.measuring].hello.candidates
    }

    fn pairs(&mut self, hosts: &[Host]) -> Result<(Vec<PairResult>, Vec<PairSkipped>)> {
        let mut done = Vec::new();
        let mut skipped = Vec::new();
        let kinds = self.cfg.pairs.clone();
        if kinds.is_empty() {
            return Ok((done, skipped));
        }
        if hosts.len() < 2 {
            for k in kinds {
                skipped.push(PairSkipped {
                    kind: k,
                    hosts: hosts.iter().map(|h| h.name.clone()).collect(),
                    reason: "one host: a pair needs two".into(),
                });
            }
            return Ok((done, skipped));
        }
        if kinds.contains(&PairKind::Verbs) {
            let mut able = Vec::new();
            for (i, h) in hosts.iter().enumerate() {
                match &self.candidates(h).verbs {
                    Ok(_) => able.push(i),
                    Err(why) => skipped.push(PairSkipped {
                        kind: PairKind::Verbs,
                        hosts: vec![h.name.clone()],
                        reason: why.clone(),
                    }),
                }
            }
            if able.len() < 2 {
                if !able.is_empty() {
                    skipped.push(PairSkipped {
                        kind: PairKind::Verbs,
                        hosts: able.iter().map(|&i| hosts[i].name.clone()).collect(),
                        reason: "no other host with an RDMA device to pair with".into(),
                    });
                }
            } else {
                for (round, pairs) in pairs::rounds(able.len()).into_iter().enumerate() {
                    let pairs: Vec<(usize, usize)> =
                        pairs.into_iter().map(|(s, c)| (able[s], able[c])).collect();
                    done.extend(self.verbs_round(hosts, round, &pairs)?);
                }
            }
        }
        if kinds.contains(&PairKind::Pool) {
            let per_host: Vec<Vec<pairs::PoolCandidate>> = hosts
                .iter()
                .map(|h| self.candidates(h).pools.clone())
                .collect();
            let groups = pairs::pool_groups(&per_host);
            if groups.is_empty() {
                skipped.push(PairSkipped {
                    kind: PairKind::Pool,
                    hosts: vec![],
                    reason: "no two hosts report the same pool (a CXL devdax device whose memory \
                             devices report serials; see docs/fleet.md)"
                        .into(),
                });
            }
            for (identity, members) in groups {
                let names: Vec<String> = members.iter().map(|&i| hosts[i].name.clone()).collect();
                if !self.cfg.allow_write {
                    skipped.push(PairSkipped {
                        kind: PairKind::Pool,
                        hosts: names,
                        reason: format!(
                            "hosts share pool {identity}, and pool messaging writes into it: \
                             pass --allow-write"
                        ),
                    });
                    continue;
                }
                for (round, pairs) in pairs::rounds(members.len()).into_iter().enumerate() {
                    let pairs: Vec<(usize, usize)> = pairs
                        .into_iter()
                        .map(|(s, c)| (members[s], members[c]))
                        .collect();
                    done.extend(self.pool_round(hosts, round, &pairs, &identity)?);
                }
            }
        }
        Ok((done, skipped))
    }

    /// Waits for both sides of every pair; the clients' params by client host index.
    fn wait_pairs(
        &mut self,
        hosts: &[Host],
        pairs: &[(usize, usize)],
        mut on_serving: impl FnMut(&Self, usize) -> Result<()>,
    ) -> Result<BTreeMap<usize, ParamsFile>> {
        let mut waiting: BTreeSet<usize> = pairs
            .iter()
            .flat_map(|&(s, c)| [hosts[s].measuring, hosts[c].measuring])
            .collect();
        let mut out = BTreeMap::new();
        while !waiting.is_empty() {
            let (r, msg) = self.next()?;
            match msg {
                ToCoordinator::Serving => on_serving(self, r)?,
                ToCoordinator::PairDone { result } => {
                    if !waiting.remove(&r) {
                        return Err(anyhow!("{} ended a pair it was not in", self.name(r)));
                    }
                    let p = result.map_err(|e| anyhow!("pair on {}: {e}", self.name(r)))?;
                    if let Some(p) = p {
                        let i = hosts
                            .iter()
                            .position(|h| h.measuring == r)
                            .expect("a measuring rank");
                        out.insert(i, *p);
                    }
                }
                other => return Err(anyhow!("{} sent {other:?} out of turn", self.name(r))),
            }
        }
        Ok(out)
    }

    fn verbs_round(
        &mut self,
        hosts: &[Host],
        round: usize,
        pairs: &[(usize, usize)],
    ) -> Result<Vec<PairResult>> {
        let mut by_server = BTreeMap::new();
        for (k, &(s, c)) in pairs.iter().enumerate() {
            // One port per pair of the round (two servers may share a machine): both
            // sides compute it from the slot (pairs::verbs_port).
            let slot = u16::try_from(k).map_err(|_| anyhow!("more than 65535 pairs in a round"))?;
            by_server.insert(hosts[s].measuring, (s, c, slot));
            self.send(
                hosts[s].measuring,
                &ToRank::ServeVerbs {
                    slot,
                    peer: hosts[c].name.clone(),
                },
            )?;
        }
        let results = self.wait_pairs(hosts, pairs, |me, r| {
            let &(s, c, slot) = by_server
                .get(&r)
                .ok_or_else(|| anyhow!("{} serves no verbs pair", me.name(r)))?;
            me.send(
                hosts[c].measuring,
                &ToRank::MeasureVerbs {
                    address: me.ranks[&hosts[s].measuring].address,
                    slot,
                    peer: hosts[s].name.clone(),
                },
            )
        })?;
        Ok(collect(
            hosts,
            PairKind::Verbs,
            round,
            pairs,
            results,
            |_, _| None,
        ))
    }

    fn pool_round(
        &mut self,
        hosts: &[Host],
        round: usize,
        pairs: &[(usize, usize)],
        identity: &str,
    ) -> Result<Vec<PairResult>> {
        let spec_of = |me: &Self, i: usize| -> String {
            me.candidates(&hosts[i])
                .pools
                .iter()
                .find(|p| p.identity == identity)
                .map(|p| p.spec.clone())
                .unwrap_or_default()
        };
        // Each rank maps the pool it found with this identity, in the window of its own
        // command line (the same on every rank): the offset and length are recorded
        // here, not sent.
        let (offset, len) = (self.cfg.pool_offset, self.cfg.pool_len);
        for &(s, c) in pairs {
            self.send(
                hosts[s].measuring,
                &ToRank::ServePool {
                    identity: identity.to_string(),
                    peer: hosts[c].name.clone(),
                },
            )?;
            self.send(
                hosts[c].measuring,
                &ToRank::MeasurePool {
                    identity: identity.to_string(),
                    peer: hosts[s].name.clone(),
                },
            )?;
        }
        let results = self.wait_pairs(hosts, pairs, |me, r| {
            Err(anyhow!("{} sent `serving` in a pool pair", me.name(r)))
        })?;
        let specs: BTreeMap<usize, String> = pairs
            .iter()
            .flat_map(|&(s, c)| [s, c])
            .map(|i| (i, spec_of(self, i)))
            .collect();
        Ok(collect(
            hosts,
            PairKind::Pool,
            round,
            pairs,
            results,
            |s, c| {
                Some(PoolPair {
                    identity: identity.to_string(),
                    server_spec: specs[&s].clone(),
                    client_spec: specs[&c].clone(),
                    offset_bytes: offset,
                    len_bytes: len,
                })
            },
        ))
    }
}

fn collect(
    hosts: &[Host],
    kind: PairKind,
    round: usize,
    pairs: &[(usize, usize)],
    mut results: BTreeMap<usize, ParamsFile>,
    pool: impl Fn(usize, usize) -> Option<PoolPair>,
) -> Vec<PairResult> {
    pairs
        .iter()
        .filter_map(|&(s, c)| {
            results.remove(&c).map(|params| PairResult {
                kind,
                server: hosts[s].name.clone(),
                client: hosts[c].name.clone(),
                round,
                pool: pool(s, c),
                params,
            })
        })
        .collect()
}

/// What makes hosts of one fleet hard to compare.
fn fleet_warnings(hosts: &[Host], ranks: &BTreeMap<usize, Rank>) -> Vec<Warning> {
    let mut w = Vec::new();
    let mut machines: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for h in hosts {
        machines
            .entry(ranks[&h.measuring].hello.machine.as_str())
            .or_default()
            .push(&h.name);
    }
    for names in machines.values().filter(|n| n.len() > 1) {
        w.push(Warning {
            code: "fleet_shared_machine".into(),
            message: format!(
                "hosts {} are one machine (the same kernel boot id): they measured one after \
                 the other, and their figures are of the same hardware",
                names.join(", ")
            ),
            remediation: "run one rank per machine (srun -N, mpirun --map-by node) unless \
                          this is a test of the fleet itself"
                .into(),
        });
    }
    for h in hosts {
        let Some(p) = h.params.as_ref() else { continue };
        let env = &p.environment;
        let allowed = bench_core::pin::parse_cpu_list(&env.allowed_cpus)
            .map(|v| v.len())
            .unwrap_or(0);
        if allowed > 0 && allowed < env.cpu.logical_cpus {
            w.push(Warning {
                code: "fleet_rank_bound".into(),
                message: format!(
                    "host {}: the measuring rank could use {allowed} of {} CPUs ({}): the \
                     launcher bound it, so the all-threads figures are of those CPUs only",
                    h.name, env.cpu.logical_cpus, env.allowed_cpus
                ),
                remediation: "let the launcher leave the ranks unbound: mpirun --bind-to none, \
                              srun --cpu-bind=none"
                    .into(),
            });
        }
    }
    let cpus: BTreeSet<String> = hosts
        .iter()
        .filter_map(|h| h.params.as_ref())
        .map(|p| p.environment.cpu.model.clone())
        .collect();
    if cpus.len() > 1 {
        w.push(Warning {
            code: "fleet_mixed_cpus".into(),
            message: format!(
                "the hosts have different CPUs ({}): their distributions mix populations",
                cpus.into_iter().collect::<Vec<_>>().join("; ")
            ),
            remediation: "compare hosts of one CPU model (check each host against its own spec)"
                .into(),
        });
    }
    w
}
