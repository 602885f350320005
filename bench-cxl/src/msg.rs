//! `pool.msg`: messaging through a pool mapped by two processes (or two hosts): one-way
//! flag latency, SPSC ring latency (8 B .. 4 MiB) and bandwidth, coherent and
//! non-coherent, and the Hockney fit of seed 000 (`t(s) = lat + s / bw`).
//!
//! The **leader** drives: it writes a command into the pool header, runs its side, and
//! waits for the follower's reply. The **follower** answers commands until told to quit.
//! Without `--role`, cxlchar runs both on one machine: it creates a pool file in
//! /dev/shm, `fork`s, and the child (pinned to the second CPU) serves as follower; the
//! child only spins on the shared mapping and `_exit`s, and the parent watches it with
//! `waitpid` as well as by heartbeat. With `--role leader|follower` two separate runs
//! (e.g. on two hosts mapping one CXL pool) pair through the header (see [`crate::pool`]).
//!
//! Conventions: latency is one-way (round trip / 2); bandwidth is payload bytes per
//! second (GB = 1e9 B) of a stream of messages, counted once.
//! * coherent: plain stores and loads (release/acquire);
//! * non-coherent: the writer flushes every written line (clflushopt, else clflush) and
//!   fences; the reader fences, invalidates (clflushopt) and fences before every read.

use crate::cacheline::{flush_range, invalidate_method, invalidate_range, FlushMethod};
use crate::measurement;
use crate::pool::{
    follower_rendezvous, leader_rendezvous, off, state, Link, PoolError, PoolMap, PoolSource,
    PoolSpec, Role,
};
use crate::ring::{self, Coherence, Consumer, Producer};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup,
};
use bench_core::counters::{
    self, CounterGroup, Counts, ThreadCounts, DEFAULT_MAX_ATTEMPTS as MAX_ATTEMPTS,
};
use bench_core::effort::Effort;
use bench_core::memory::Placement;
use bench_core::params::Skipped;
use bench_core::plan::Cost;
use bench_core::stats::{hockney_fit, Distribution};
use bench_core::units::format_size;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const OP_FLAG: u64 = 1;
const OP_RING_LAT: u64 = 2;
const OP_RING_BW: u64 = 3;
const OP_QUIT: u64 = 4;

const ST_BAD_DATA: u64 = 2;
const ST_BAD_RING: u64 = 3;
const ST_BAD_OP: u64 = 4;

/// Options of the messaging benchmark.
#[derive(Debug, Clone)]
pub struct MsgBench {
    /// The pool; `None`: a fresh file in /dev/shm, removed afterwards.
    pub pool: Option<PoolSpec>,
    /// Role in a two-sided run; `None`: fork a follower on this machine.
    pub role: Option<Role>,
    /// How long to wait for the peer to show up.
    pub timeout: Duration,
    /// How long the peer may stay silent mid-run.
    pub peer_timeout: Duration,
}

impl Default for MsgBench {
    fn default() -> Self {
        MsgBench {
            pool: None,
            role: None,
            timeout: Duration::from_secs(30),
            peer_timeout: Duration::from_secs(5),
        }
    }
}

fn mode_arg(m: Coherence) -> u64 {
    match m {
        Coherence::Coherent => 0,
        Coherence::NonCoherent(FlushMethod::Clflush) => 2,
        Coherence::NonCoherent(_) => 1,
    }
}

/// The protocol a leader's mode code asks for: 1 is this CPU's best invalidation
/// (clflushopt, `dc civac` on AArch64), 2 clflush.
fn mode_of(a: u64) -> Coherence {
    match a {
        0 => Coherence::Coherent,
        2 => Coherence::NonCoherent(FlushMethod::Clflush),
        _ => Coherence::NonCoherent(invalidate_method().unwrap_or(FlushMethod::ClflushoptSfence)),
    }
}

#[inline(always)]
fn fload(p: *mut u8, m: Coherence) -> u64 {
    if let Coherence::NonCoherent(f) = m {
        // SAFETY: p is a mapped header word; f available.
        unsafe { invalidate_range(f, p, 8) };
    }
    // SAFETY: p is an 8-aligned word of the mapped header.
    unsafe { &*(p as *const AtomicU64) }.load(Ordering::Acquire)
}

#[inline(always)]
fn fstore(p: *mut u8, v: u64, m: Coherence) {
    // SAFETY: as above.
    unsafe { &*(p as *const AtomicU64) }.store(v, Ordering::Release);
    if let Coherence::NonCoherent(f) = m {
        // SAFETY: as above.
        unsafe { flush_range(f, p, 8) };
    }
}

fn rings_of(pool: &PoolMap) -> [(*mut u8, usize); 2] {
    pool.rings().map(|(o, l)| {
        // SAFETY: the ring regions lie inside the mapping.
        (unsafe { pool.ptr().add(o) }, l)
    })
}

/// Largest message of the sweeps ([`sizes`]): 4 MiB.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Longest message both sides hold a buffer for: half a ring, at most
/// [`MAX_MESSAGE_BYTES`] (the buffers do not grow with a large `--len`).
fn max_message(pool: &PoolMap) -> usize {
    max_message_of(pool.len())
}

/// [`max_message`] of a window of `len` bytes.
fn max_message_of(len: usize) -> usize {
    let ring = crate::pool::rings_of(len)[0].1;
    (ring::capacity_for(ring) / 2)
        .saturating_sub(64)
        .min(MAX_MESSAGE_BYTES)
}

/// The follower's command loop. Returns the number of commands served.
pub fn serve(pool: &PoolMap, link: &mut Link, buf: &mut [u8]) -> Result<u64, PoolError> {
    let h = pool.header();
    let rings = rings_of(pool);
    let mut last = h.load(off::DONE_SEQ);
    let mut served = 0;
    loop {
        let seq = loop {
            let s = h.load(off::CMD_SEQ);
            if s != last {
                break s;
            }
            link.spin()?;
            if h.load(off::STATE) == state::DONE {
                return Ok(served);
            }
        };
        let op = h.load(off::CMD_OP);
        let a: Vec<u64> = (0..4).map(|i| h.load(off::CMD_ARGS + 8 * i)).collect();
        let status = match op {
            OP_QUIT => {
                h.store(off::DONE_STATUS, 0);
                h.store(off::DONE_SEQ, seq);
                return Ok(served);
            }
            OP_FLAG => {
                let m = mode_of(a[1]);
                let lf = h.word_ptr(off::FLAG_LF);
                let fl = h.word_ptr(off::FLAG_FL);
                for k in 1..=a[0] {
                    while fload(lf, m) != k {
                        link.spin()?;
                    }
                    fstore(fl, k, m);
                }
                0
            }
            OP_RING_LAT | OP_RING_BW => {
                let (size, n, m) = (a[0] as usize, a[1], mode_of(a[2]));
                // SAFETY: rings initialized by the leader before any command; we are
                // their only consumer (ring 0) and producer (ring 1).
                let pc = unsafe {
                    (
                        Consumer::attach(rings[0].0, rings[0].1, m),
                        Producer::attach(rings[1].0, rings[1].1, m),
                    )
                };
                match pc {
                    (Ok(mut c), Ok(mut p)) => {
                        let mut st = 0;
                        for i in 0..n {
                            let got = c.recv(buf, || link.spin())?;
                            let tag = u64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8]));
                            if got != size || tag != i {
                                st = ST_BAD_DATA;
                            }
                            if op == OP_RING_LAT {
                                p.send(&buf[..size], || link.spin())?;
                            }
                        }
                        st
                    }
                    _ => ST_BAD_RING,
                }
            }
            _ => ST_BAD_OP,
        };
        h.store(off::DONE_STATUS, status);
        h.store(off::DONE_SEQ, seq);
        last = seq;
        served += 1;
    }
}

struct Leader<'a> {
    pool: &'a PoolMap,
    link: Link,
    seq: u64,
}

impl Leader<'_> {
    fn post(&mut self, op: u64, args: [u64; 4]) {
        let h = self.pool.header();
        for (i, v) in args.iter().enumerate() {
            h.store(off::CMD_ARGS + 8 * i, *v);
        }
        h.store(off::CMD_OP, op);
        self.seq += 1;
        h.store(off::CMD_SEQ, self.seq);
    }
    fn wait_done(&mut self, op: u64) -> Result<(), PoolError> {
        let h = self.pool.header();
        while h.load(off::DONE_SEQ) != self.seq {
            self.link.spin()?;
        }
        match h.load(off::DONE_STATUS) {
            0 => Ok(()),
            s => Err(PoolError::Command {
                op,
                status: s,
                what: match s {
                    ST_BAD_DATA => "a message arrived with the wrong size or sequence",
                    ST_BAD_RING => "the rings in the pool are not initialized",
                    _ => "unknown command",
                },
            }),
        }
    }

    /// One-way flag latencies (ns), one per sample of `trips` round trips, and the counts
    /// of the leader's sampling loop (the warm-up sample included).
    fn flag(
        &mut self,
        ctx: &Context,
        group: &mut CounterGroup,
        m: Coherence,
        samples: usize,
        trips: u64,
    ) -> Result<(Vec<f64>, Counts), PoolError> {
        let h = self.pool.header();
        let (lf, fl) = (h.word_ptr(off::FLAG_LF), h.word_ptr(off::FLAG_FL));
        h.store(off::FLAG_LF, 0);
        h.store(off::FLAG_FL, 0);
        let warm = trips;
        self.post(OP_FLAG, [warm + samples as u64 * trips, mode_arg(m), 0, 0]);
        let mut k = 0u64;
        let mut v = counters::sample_buffer(samples);
        group.start();
        for s in 0..=samples {
            let t0 = ctx.timer.start();
            for _ in 0..trips {
                k += 1;
                fstore(lf, k, m);
                while fload(fl, m) != k {
                    self.link.spin()?;
                }
            }
            let t1 = ctx.timer.stop();
            if s > 0 {
                v.push(ctx.timer.elapsed_ns(t0, t1) / (2 * trips) as f64);
            }
        }
        let c = group.stop();
        self.wait_done(OP_FLAG)?;
        Ok((v, c))
    }

    /// One-way ring latencies (ns) of `n` echoed messages of `size` bytes, and the counts
    /// of the leader's loop.
    #[allow(clippy::too_many_arguments)]
    fn ring_lat(
        &mut self,
        ctx: &Context,
        group: &mut CounterGroup,
        m: Coherence,
        size: usize,
        n: u64,
        src: &mut [u8],
        dst: &mut [u8],
    ) -> Result<(Vec<f64>, Counts), PoolError> {
        let rings = rings_of(self.pool);
        // SAFETY: rings initialized; we are the only producer of ring 0 and consumer of
        // ring 1.
        let (mut p, mut c) = unsafe {
            (
                Producer::attach(rings[0].0, rings[0].1, m).map_err(|_| ring_err())?,
                Consumer::attach(rings[1].0, rings[1].1, m).map_err(|_| ring_err())?,
            )
        };
        self.post(OP_RING_LAT, [size as u64, n, mode_arg(m), 0]);
        let mut v = counters::sample_buffer(n as usize);
        group.start();
        for i in 0..n {
            src[..8].copy_from_slice(&i.to_le_bytes());
            let t0 = ctx.timer.start();
            p.send(&src[..size], || self.link.spin())?;
            let got = c.recv(dst, || self.link.spin())?;
            let t1 = ctx.timer.stop();
            if got != size || dst[..8] != src[..8] {
                return Err(PoolError::Command {
                    op: OP_RING_LAT,
                    status: ST_BAD_DATA,
                    what: "the echo differs from the message sent",
                });
            }
            v.push(ctx.timer.elapsed_ns(t0, t1) / 2.0);
        }
        let c = group.stop();
        self.wait_done(OP_RING_LAT)?;
        Ok((v, c))
    }

    /// Bandwidth (GB/s) of `count` messages of `size` bytes streamed to the follower, and
    /// the counts of the leader's loop.
    #[allow(clippy::too_many_arguments)]
    fn ring_bw(
        &mut self,
        ctx: &Context,
        group: &mut CounterGroup,
        m: Coherence,
        size: usize,
        count: u64,
        src: &mut [u8],
    ) -> Result<(f64, Counts), PoolError> {
        let rings = rings_of(self.pool);
        // SAFETY: as in ring_lat.
        let mut p = unsafe { Producer::attach(rings[0].0, rings[0].1, m).map_err(|_| ring_err())? };
        self.post(OP_RING_BW, [size as u64, count, mode_arg(m), 0]);
        group.start();
        let t0 = ctx.timer.start();
        for i in 0..count {
            src[..8].copy_from_slice(&i.to_le_bytes());
            p.send(&src[..size], || self.link.spin())?;
        }
        self.wait_done(OP_RING_BW)?;
        let t1 = ctx.timer.stop();
        let c = group.stop();
        Ok((
            (size as u64 * count) as f64 / ctx.timer.elapsed_ns(t0, t1).max(1e-9),
            c,
        ))
    }
}

fn ring_err() -> PoolError {
    PoolError::Command {
        op: 0,
        status: ST_BAD_RING,
        what: "the rings in the pool are not initialized",
    }
}

/// Message sizes: 8 B .. [`MAX_MESSAGE_BYTES`] in powers of 2^`log_step` (1: every power
/// of two; `--quick`: 3, powers of eight), at most `max`.
pub fn sizes(log_step: u32, max: usize) -> Vec<usize> {
    (3..=MAX_MESSAGE_BYTES.ilog2())
        .step_by(log_step.max(1) as usize)
        .map(|i| 1usize << i)
        .filter(|&s| s <= max)
        .collect()
}

/// Runs a follower: opens the pool, pairs with the leader, serves until told to quit.
/// Returns the number of commands served.
pub fn run_follower(
    spec: &PoolSpec,
    cpu: Option<usize>,
    timeout: Duration,
    peer_timeout: Duration,
) -> Result<u64, PoolError> {
    if let Some(c) = cpu {
        let _ = bench_core::pin::pin_current(c);
    }
    let pool = PoolMap::open(spec)?;
    let mut buf = vec![0u8; max_message(&pool)];
    let mut link = Link::new(pool.header(), Role::Follower, peer_timeout);
    follower_rendezvous(&pool, timeout, &mut link)?;
    let r = serve(&pool, &mut link, &mut buf);
    if r.is_err() {
        link.abort();
    }
    r
}

struct Outcome {
    report: Report,
}

impl MsgBench {
    /// Target label of the results: `shm` for the pool cxlchar creates, else the pool spec.
    fn label(&self, pool: &PoolMap) -> String {
        match &self.pool {
            None => "shm".into(),
            Some(_) => pool.name().to_string(),
        }
    }

    fn pool_spec(&self, effort: &Effort) -> (PoolSpec, bool) {
        match &self.pool {
            Some(s) => (s.clone(), false),
            None => (PoolSpec::scratch_file(effort.pool.msg_window_bytes), true),
        }
    }

    fn lead(&self, ctx: &Context, pool: &PoolMap, link: Link) -> Result<Outcome, PoolError> {
        let mut l = Leader { pool, link, seq: 0 };
        leader_rendezvous(
            pool,
            self.pool.as_ref().is_some_and(|p| p.force),
            self.timeout,
            &mut l.link,
        )?;
        // Before the header is ours nothing is written on failure (it may be foreign);
        // after, a failure marks the run aborted for the peer to see.
        let r = self.lead_paired(ctx, pool, &mut l);
        if r.is_err() {
            l.link.abort();
        }
        r
    }

    /// The paired run: each protocol in turn (the non-coherent one where this CPU can
    /// invalidate lines), then the follower is told to quit.
    fn lead_paired(
        &self,
        ctx: &Context,
        pool: &PoolMap,
        l: &mut Leader,
    ) -> Result<Outcome, PoolError> {
        let target = self.label(pool);
        let mut report = Report::default();
        let max = max_message(pool);
        let src: Vec<u8> = (0..max).map(|i| (i * 7 + 1) as u8).collect();
        let dst = vec![1u8; max]; // written now: receiving into it cannot fault later
        let mut modes = vec![Coherence::Coherent];
        match invalidate_method() {
            Ok(m) => modes.push(Coherence::NonCoherent(m)),
            Err(why) => report.skipped.push(Skipped {
                benchmark: "pool.msg/noncoherent".into(),
                target: target.clone(),
                reason: why,
            }),
        }
        let mut run = LeadRun {
            ctx,
            pool,
            target,
            max_message_bytes: max,
            src,
            dst,
            // Counters of the leader (this thread) only: the follower is another process,
            // possibly on another host.
            group: CounterGroup::open_with_timer(&ctx.timer),
            placement: Some(pool.placement()),
            report,
        };
        for m in modes {
            run.mode(l, m)?;
        }
        l.post(OP_QUIT, [0; 4]);
        l.wait_done(OP_QUIT)?;
        pool.header().store(off::STATE, state::DONE);
        Ok(Outcome { report: run.report })
    }

    fn run_inner(&self, ctx: &Context) -> Result<Report, PoolError> {
        let (spec, created) = self.pool_spec(ctx.effort);
        // A pool file of our own is removed on SIGINT/SIGTERM too (docs/safety.md).
        let _registered = match &spec.source {
            PoolSource::File(p) if created => bench_core::cleanup::register(p).ok(),
            _ => None,
        };
        let pool = PoolMap::open(&spec)?;
        let cleanup = |created: bool| {
            if created {
                if let PoolSource::File(p) = &spec.source {
                    let _ = std::fs::remove_file(p);
                }
            }
        };
        let link = Link::new(pool.header(), Role::Leader, self.peer_timeout);
        let res = match self.role {
            Some(Role::Leader) => self.lead(ctx, &pool, link),
            Some(Role::Follower) => unreachable!("followers run through run_follower"),
            None => {
                if ctx.cpus.len() < 2 {
                    cleanup(created);
                    return Err(PoolError::NoFlush("two CPUs are needed (--cpu)".into()));
                }
                let mut buf = vec![0u8; max_message(&pool)];
                let child_cpu = ctx.cpus[1];
                let peer_timeout = self.peer_timeout;
                let timeout = self.timeout;
                // SAFETY: the child only pins itself, spins on the shared mapping (both
                // inherited) and leaves with _exit, running no destructors or atexit
                // handlers of the parent's state.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    let _ = bench_core::pin::pin_current(child_cpu);
                    let mut link = Link::new(pool.header(), Role::Follower, peer_timeout);
                    let code = match follower_rendezvous(&pool, timeout, &mut link) {
                        Err(_) => 1,
                        Ok(_) => match serve(&pool, &mut link, &mut buf) {
                            Ok(_) => 0,
                            Err(_) => {
                                link.abort();
                                1
                            }
                        },
                    };
                    // SAFETY: leaving the forked child without unwinding.
                    unsafe { libc::_exit(code) };
                }
                if pid < 0 {
                    cleanup(created);
                    return Err(PoolError::Io {
                        what: "forking a follower for",
                        path: pool.name().into(),
                        err: std::io::Error::last_os_error(),
                    });
                }
                let mut link = link;
                link.child = Some(pid);
                let r = self.lead(ctx, &pool, link);
                if r.is_err() {
                    pool.header().store(off::STATE, state::ABORTED);
                    // SAFETY: signalling our own child.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                let mut st = 0;
                // SAFETY: reaping our own child (may already be reaped by Link: ignore).
                unsafe { libc::waitpid(pid, &mut st, 0) };
                r
            }
        };
        drop(pool);
        cleanup(created);
        res.map(|o| o.report)
    }
}

/// The leader's side of a paired run: its message buffers, its counters and the report
/// it fills.
struct LeadRun<'a> {
    ctx: &'a Context,
    pool: &'a PoolMap,
    target: String,
    /// The longest message (the buffers' length).
    max_message_bytes: usize,
    src: Vec<u8>,
    dst: Vec<u8>,
    group: CounterGroup,
    placement: Option<Placement>,
    report: Report,
}

/// One protocol's ring sweep: the latency points of the Hockney fit (size, p50 ns) with
/// their ids, and the best bandwidth with its id.
struct RingCurve {
    fit: Vec<(f64, f64)>,
    lat_ids: Vec<String>,
    best_bw: (f64, String),
    /// Every bandwidth point the best is chosen from (the key's `from`: a best over
    /// sizes is measured the same way wherever the best falls).
    bw_ids: Vec<String>,
}

/// The keys' suffix of protocol `m`: none for the coherent one.
fn key_suffix(m: Coherence) -> String {
    if m == Coherence::Coherent {
        String::new()
    } else {
        format!("_{}", m.name())
    }
}

impl LeadRun<'_> {
    /// One protocol: the rings initialized for it, the flag ping-pong, the ring sweep and
    /// its keys.
    fn mode(&mut self, l: &mut Leader, m: Coherence) -> Result<(), PoolError> {
        let rings = rings_of(self.pool);
        for (b, n) in rings {
            // SAFETY: the ring regions are inside the mapping; the follower does not
            // touch them between commands.
            unsafe { ring::init(b, n, m).map_err(|_| ring_err())? };
        }
        self.flag(l, m)?;
        let curve = self.ring_sweep(l, m)?;
        self.ring_keys(m, curve);
        Ok(())
    }

    /// The flag ping-pong's one-way latency: its measurement and key.
    fn flag(&mut self, l: &mut Leader, m: Coherence) -> Result<(), PoolError> {
        let (ctx, target, mname) = (self.ctx, self.target.as_str(), m.name());
        let (fs, ft) = ctx.effort.pool.msg_flag;
        let sfx = key_suffix(m);
        ctx.progress(&format!("pool.msg on {target}: flag ping-pong ({mname})"));
        let group = &mut self.group;
        let (v, counters) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            l.flag(ctx, group, m, fs, ft)
                .map(|(v, c)| (v, ThreadCounts::single(c)))
        })?;
        let counters = counters.with_per_op("message", 2 * ft * (fs as u64 + 1));
        let d = Distribution::from_samples(&v).ok_or_else(ring_err)?;
        let fid = format!("pool.msg/{target}/{mname}/flag");
        self.report.params.push(Param::new(format!("pool_flag_lat{sfx}_ns"), d.p50, target,
            format!("p50 one-way latency (round trip / 2) of a flag line between two processes ({mname})"), vec![fid.clone()]));
        self.report.measurements.push(measurement(fid, "pool.msg", target, serde_json::json!({"test": "flag", "mode": mname, "round_trips_per_sample": ft}), "ns",
            format!("one-way latency (round trip / 2) of a store/load flag ping-pong through the pool ({mname})"), d, self.placement.clone(), counters));
        ctx.point_done();
        Ok(())
    }

    /// Ring latency and bandwidth at every message size of the sweep.
    fn ring_sweep(&mut self, l: &mut Leader, m: Coherence) -> Result<RingCurve, PoolError> {
        let effort = &self.ctx.effort.pool;
        let mut curve = RingCurve {
            fit: Vec::new(),
            lat_ids: Vec::new(),
            best_bw: (0.0f64, String::new()),
            bw_ids: Vec::new(),
        };
        for size in sizes(
            effort.msg_size_log_step,
            self.max_message_bytes.min(effort.msg_largest_bytes),
        ) {
            self.ctx.progress(&format!(
                "pool.msg on {}: ring {} ({})",
                self.target,
                format_size(size),
                m.name()
            ));
            self.ring_lat(l, m, size, &mut curve)?;
            self.ring_bw(l, m, size, &mut curve)?;
            self.ctx.point_done();
        }
        Ok(curve)
    }

    /// One-way latency of `size`-byte messages echoed through the rings: its measurement
    /// and its point of the fit.
    fn ring_lat(
        &mut self,
        l: &mut Leader,
        m: Coherence,
        size: usize,
        curve: &mut RingCurve,
    ) -> Result<(), PoolError> {
        let (ctx, target, mname) = (self.ctx, self.target.as_str(), m.name());
        let effort = &ctx.effort.pool;
        let n = if size <= 65536 {
            effort.msg_ring_messages.0
        } else {
            effort.msg_ring_messages.1
        };
        let (group, src, dst) = (&mut self.group, &mut self.src, &mut self.dst);
        let (v, counters) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            l.ring_lat(ctx, group, m, size, n, src, dst)
                .map(|(v, c)| (v, ThreadCounts::single(c)))
        })?;
        let counters = counters.with_per_op("message", 2 * n);
        let d = Distribution::from_samples(&v).ok_or_else(ring_err)?;
        curve.fit.push((size as f64, d.p50));
        let id = format!("pool.msg/{target}/{mname}/ring_lat/{}", format_size(size));
        curve.lat_ids.push(id.clone());
        self.report.measurements.push(measurement(id, "pool.msg", target, serde_json::json!({"test": "ring_lat", "mode": mname, "size_bytes": size, "messages": n}), "ns",
            format!("one-way latency (round trip / 2) of a {}-byte message echoed through two SPSC rings in the pool ({mname})", size), d, self.placement.clone(), counters));
        Ok(())
    }

    /// Streaming bandwidth of `size`-byte messages through ring 0: its measurement, and
    /// the best bandwidth so far.
    fn ring_bw(
        &mut self,
        l: &mut Leader,
        m: Coherence,
        size: usize,
        curve: &mut RingCurve,
    ) -> Result<(), PoolError> {
        let (ctx, target, mname) = (self.ctx, self.target.as_str(), m.name());
        let effort = &ctx.effort.pool;
        let (bw_bytes, most) = effort.msg_stream;
        let bw_reps = effort.msg_stream_reps;
        let count = (bw_bytes / size).clamp(4, most) as u64;
        let (group, src) = (&mut self.group, &mut self.src);
        // The repetitions are one counted section (their counts added up).
        let (bws, counters) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            let mut bws = Vec::with_capacity(bw_reps);
            let mut parts = Vec::with_capacity(bw_reps);
            for _ in 0..bw_reps {
                let (bw, c) = l.ring_bw(ctx, group, m, size, count, src)?;
                bws.push(bw);
                parts.push(c);
            }
            let mut c = Counts::sum(&parts);
            c.section_ns = parts.iter().map(|p| p.section_ns).sum();
            Ok::<_, PoolError>((bws, ThreadCounts::single(c)))
        })?;
        let counters = counters.with_per_op("byte", size as u64 * count * bw_reps as u64);
        let d = Distribution::from_samples(&bws).ok_or_else(ring_err)?;
        let id = format!("pool.msg/{target}/{mname}/ring_bw/{}", format_size(size));
        if d.p50 > curve.best_bw.0 {
            curve.best_bw = (d.p50, id.clone());
        }
        curve.bw_ids.push(id.clone());
        self.report.measurements.push(measurement(id, "pool.msg", target, serde_json::json!({"test": "ring_bw", "mode": mname, "size_bytes": size, "messages": count}), "GB/s",
            format!("payload bandwidth of {count} {size}-byte messages streamed through an SPSC ring in the pool, until the receiver acknowledged ({mname})"), d, self.placement.clone(), counters));
        Ok(())
    }

    /// One protocol's ring keys: the smallest message's latency, the best bandwidth and
    /// the Hockney fit.
    fn ring_keys(&mut self, m: Coherence, curve: RingCurve) {
        let (target, mname, sfx) = (self.target.as_str(), m.name(), key_suffix(m));
        let RingCurve {
            fit,
            lat_ids,
            best_bw,
            bw_ids,
        } = curve;
        let report = &mut self.report;
        if let Some(first) = fit.first() {
            report.params.push(Param::new(
                format!("pool_msg_lat{sfx}_ns"),
                first.1,
                target,
                format!(
                    "p50 one-way latency of the smallest ({} B) ring message ({mname})",
                    first.0
                ),
                vec![lat_ids[0].clone()],
            ));
        }
        if best_bw.0 > 0.0 {
            report.params.push(Param::new(
                format!("pool_msg_bw{sfx}_gbs"),
                best_bw.0,
                target,
                format!(
                    "largest p50 ring streaming bandwidth over message sizes (here at {}, {mname})",
                    best_bw.1.rsplit('/').next().unwrap_or("")
                ),
                bw_ids,
            ));
        }
        // Published only when the latency did not have to be held at 0 (a constrained
        // fit is skipped with the reason, as before the fit moved to bench-core).
        match hockney_fit(&fit).ok().filter(|h| !h.latency_constrained) {
            Some(h) => {
                let (a, bw) = (h.lat_ns, h.bw_gbs);
                report.params.push(Param::new(format!("pool_hockney_lat{sfx}_ns"), a, target,
                    format!("Hockney fit t(s) = lat + s/bw of p50 one-way ring latencies, least squares weighted by 1/t^2 ({mname})"), lat_ids.clone()));
                report.params.push(Param::new(format!("pool_hockney_bw{sfx}_gbs"), bw, target,
                    format!("Hockney fit t(s) = lat + s/bw of p50 one-way ring latencies, least squares weighted by 1/t^2 ({mname})"), lat_ids.clone()));
            }
            None => report.skipped.push(Skipped { benchmark: format!("pool.msg/hockney/{mname}"), target: target.to_string(),
                reason: "the Hockney fit of the ring latencies is not physical (negative latency or bandwidth): too few sizes or too noisy; run without --quick".into() }),
        }
    }
}

impl Benchmark for MsgBench {
    fn name(&self) -> &'static str {
        "pool.msg"
    }
    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: if self.role.is_some() { 1 } else { 2 },
            target_kinds: vec!["anon"],
        }
    }
    fn region_bytes(&self, _ctx: &Context, _target: &bench_core::memory::TargetSpec) -> usize {
        4096
    }

    fn memory(
        &self,
        ctx: &Context,
        target: &bench_core::memory::TargetSpec,
    ) -> bench_core::memory::budget::Need {
        memory::need(self, ctx, target)
    }

    fn cost(&self, ctx: &Context, _target: Option<&bench_core::memory::TargetSpec>) -> Cost {
        let e = &ctx.plan.expect;
        let p = &ctx.effort.pool;
        let mut modes = vec![(Coherence::Coherent.name(), e.message_ns)];
        if invalidate_method().is_ok() {
            modes.push(("noncoherent", e.message_noncoherent_ns));
        }
        // The leader's counters only: the follower is another process.
        let attempts = |run: f64| e.section_s(1, run);
        let mut cost = Cost::new();
        // Starting the follower and pairing with it.
        cost.add("the follower process", 1, 0.1);
        for (name, msg_ns) in modes {
            let (fs, ft) = p.msg_flag;
            let flag = e.handoffs_s((fs + 1) as f64 * ft as f64, e.round_trip_ns);
            cost.add(format!("{name} flag"), 1, attempts(flag));
            for size in sizes(p.msg_size_log_step, p.msg_largest_bytes) {
                let n = if size <= 65536 {
                    p.msg_ring_messages.0
                } else {
                    p.msg_ring_messages.1
                };
                let copy = |bytes: usize| bytes as f64 / (e.pair_copy_gbs * 1e9);
                let lat = 2.0 * (e.handoffs_s(n as f64, msg_ns) + n as f64 * copy(size));
                let (bw_bytes, most) = p.msg_stream;
                let count = (bw_bytes / size).clamp(4, most);
                // Streamed: the sender runs ahead of the receiver, waiting for it only
                // when the ring is full.
                let bw = p.msg_stream_reps as f64
                    * count as f64
                    * (msg_ns * 1e-9 * e.handoff_factor.sqrt() + copy(size));
                cost.add(
                    format!("{name} ring {}", format_size(size)),
                    1,
                    attempts(lat) + attempts(bw),
                );
            }
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        input.region()?;
        let r = self.run_inner(ctx);
        let _ = bench_core::pin::pin_current(ctx.cpus[0]);
        // A two-sided run that started and broke is a failure (no params file), and so
        // is a forked pair whose follower died or failed; a forked pair that cannot run
        // here is a skip.
        r.map_err(|e| match (self.role, &e) {
            (Some(_), _)
            | (
                None,
                PoolError::PeerLost { .. } | PoolError::PeerAborted(_) | PoolError::Command { .. },
            ) => NotRun::failed(e),
            (None, _) => NotRun::skip(e.to_string()),
        })
    }
}

mod args;
mod memory;
pub use args::{MsgArgs, PoolArgs};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_cover_8b_to_4m() {
        let s = sizes(1, usize::MAX);
        assert_eq!((s[0], *s.last().unwrap()), (8, MAX_MESSAGE_BYTES));
        assert_eq!(MAX_MESSAGE_BYTES, 4 << 20);
        let quick = &bench_core::effort::QUICK.pool;
        assert_eq!(
            sizes(quick.msg_size_log_step, quick.msg_largest_bytes).len(),
            6
        );
        assert_eq!(
            bench_core::effort::FULL.pool.msg_largest_bytes,
            MAX_MESSAGE_BYTES
        );
        assert!(sizes(1, 1000).iter().all(|&x| x <= 1000));
    }
}
