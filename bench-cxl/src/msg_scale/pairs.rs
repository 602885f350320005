//! The pairs of `pool.msg-scale` as a crew ([`bench_core::crew`]): every sender and
//! receiver pinned to its own CPU, all released together into windows and stopped
//! together.
//!
//! * **Latency**: each sender times round trips of an 8-byte message (its receiver echoes
//!   it back), one per call; the senders are the crew's measuring threads, the receivers
//!   its helpers. Samples of the undisturbed windows count.
//! * **Bandwidth**: each sender streams messages into its queue; each receiver copies them
//!   out, and its bytes are what count (payload delivered, each byte once): the receivers
//!   are the measuring threads, the senders the helpers; a window's figure is the crew's
//!   aggregate (the payload all receivers copied out in the time all of them ran).
//!
//! At a window's end a sender finishes the message it is in and says so (`quiesced`); its
//! receiver goes on until it has every message its sender sent, so no message is ever cut
//! and no thread waits on a peer that left. Sequence numbers run on across windows, and
//! every message is checked on arrival.

use super::{Phase, ScaleError, BACK_CELL, BACK_CELLS, CELLS_PER_QUEUE, LAT_BYTES, STALL};
use crate::cells::{self, CellReceiver, CellSender};
use crate::pool::PoolMap;
use crate::ring::Coherence;
use bench_core::bench::Context;
use bench_core::crew::{Crew, Member, Stop, WindowPlan, Windows};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A pair's queues, by address (shared by the two threads of the pair).
#[derive(Debug, Clone, Copy)]
pub(super) struct PairQueues {
    fwd: usize,
    back: usize,
    fwd_bytes: usize,
    back_bytes: usize,
}

/// Initializes every pair's forward and back queue of `lay` in the pool.
pub(super) fn init_queues(
    pool: &PoolMap,
    lay: &super::Layout,
    cell: usize,
    mode: Coherence,
) -> Result<Vec<PairQueues>, ScaleError> {
    let mut queues = Vec::with_capacity(lay.pairs.len());
    for (pair, &(f, b)) in lay.pairs.iter().enumerate() {
        assert!(
            b + lay.back_bytes <= pool.len(),
            "layout checked against the window"
        );
        // SAFETY: both queues lie inside the mapping (checked above); no thread uses
        // them now.
        let (fwd, back) = unsafe { (pool.ptr().add(f), pool.ptr().add(b)) };
        // SAFETY: as above.
        unsafe {
            cells::init(fwd, lay.fwd_bytes, cell, CELLS_PER_QUEUE, mode)
                .and_then(|()| cells::init(back, lay.back_bytes, BACK_CELL, BACK_CELLS, mode))
                .map_err(|err| ScaleError::Queue { pair, err })?;
        }
        queues.push(PairQueues {
            fwd: fwd as usize,
            back: back as usize,
            fwd_bytes: lay.fwd_bytes,
            back_bytes: lay.back_bytes,
        });
    }
    Ok(queues)
}

/// What a pair's two threads share.
#[derive(Default)]
pub(super) struct PairState {
    /// Messages the sender has sent completely.
    sent: AtomicU64,
    /// The sender is done for this window (set in its `finish`, cleared by the receiver
    /// once it has every message).
    quiesced: AtomicBool,
    /// The sender's latency samples (ns), one list per window.
    samples: Mutex<Vec<Vec<f64>>>,
}

/// Why a wait ended early.
enum Halt {
    /// The sender is done and every message it sent has arrived.
    Drained,
    Fail(ScaleError),
}

/// One thread of a pair.
struct PairMember<'a> {
    ctx: &'a Context,
    pair: usize,
    sender: bool,
    phase: Phase,
    state: &'a PairState,
    tx: CellSender,
    rx: CellReceiver,
    /// The message buffer (the sender's source, the receiver's destination).
    buf: Vec<u8>,
    ack: [u8; LAT_BYTES],
    /// Messages this thread sent (sender) or received (receiver).
    seq: u64,
    /// Messages per call (bandwidth).
    batch: usize,
    samples: Vec<f64>,
    cap: usize,
}

/// A spin step of a wait on the peer: gives up when the crew aborted, after [`STALL`]
/// without progress, or (`drain`) when the sender is done and nothing is in flight.
fn spin(
    stop: &Stop,
    since: Instant,
    n: &mut u32,
    drain: Option<(&PairState, u64)>,
) -> Result<(), Halt> {
    *n = n.wrapping_add(1);
    if n.is_multiple_of(64) {
        if let Some((st, seq)) = drain {
            if st.quiesced.load(Ordering::Acquire) && st.sent.load(Ordering::Acquire) == seq {
                return Err(Halt::Drained);
            }
        }
        if n.is_multiple_of(1 << 12) {
            if stop.aborted() {
                return Err(Halt::Fail(ScaleError::Aborted));
            }
            if since.elapsed() > STALL {
                return Err(Halt::Fail(ScaleError::Stalled(STALL)));
            }
        }
    }
    std::hint::spin_loop();
    Ok(())
}

fn fail(h: Halt) -> ScaleError {
    match h {
        Halt::Drained => ScaleError::Aborted,
        Halt::Fail(e) => e,
    }
}

impl PairMember<'_> {
    /// Sends message `seq` of the phase's size and counts it sent.
    fn send_one(&mut self, stop: &Stop) -> Result<usize, ScaleError> {
        let size = self.phase.message_bytes();
        self.buf[..8].copy_from_slice(&self.seq.to_le_bytes());
        let (since, mut n) = (Instant::now(), 0u32);
        self.tx
            .send(&self.buf[..size], || spin(stop, since, &mut n, None))
            .map_err(fail)?;
        self.seq += 1;
        self.state.sent.store(self.seq, Ordering::Release);
        Ok(size)
    }

    /// Receives the next message (checked); `None` when drained.
    fn recv_one(&mut self, stop: &Stop) -> Result<Option<usize>, ScaleError> {
        let size = self.phase.message_bytes();
        let (since, mut n) = (Instant::now(), 0u32);
        let drain = Some((self.state, self.seq));
        match self
            .rx
            .recv(&mut self.buf, || spin(stop, since, &mut n, drain))
        {
            Ok(got) => {
                if got != size || self.buf[..8] != self.seq.to_le_bytes() {
                    return Err(ScaleError::BadData {
                        pair: self.pair,
                        at: self.seq,
                    });
                }
                self.seq += 1;
                Ok(Some(got))
            }
            Err(Halt::Drained) => Ok(None),
            Err(Halt::Fail(e)) => Err(e),
        }
    }

    /// One echoed round trip (sender), timed; its half as a sample when there is room.
    fn round_trip(&mut self, stop: &Stop, sample: bool) -> Result<(), ScaleError> {
        let timer = &self.ctx.timer;
        let t0 = timer.start();
        let seq = self.seq;
        self.send_one(stop)?;
        let (since, mut n) = (Instant::now(), 0u32);
        let got = self
            .rx
            .recv(&mut self.ack, || spin(stop, since, &mut n, None))
            .map_err(fail)?;
        let t1 = timer.stop();
        if got != LAT_BYTES || self.ack != seq.to_le_bytes() {
            return Err(ScaleError::BadData {
                pair: self.pair,
                at: seq,
            });
        }
        if sample && self.samples.len() < self.cap {
            self.samples.push(timer.elapsed_ns(t0, t1) / 2.0);
        }
        Ok(())
    }

    /// The receiver's answer to one message: echo it (latency). `false` when drained.
    fn serve_one(&mut self, stop: &Stop) -> Result<Option<usize>, ScaleError> {
        let Some(got) = self.recv_one(stop)? else {
            return Ok(None);
        };
        if let Phase::Lat = self.phase {
            let (since, mut n) = (Instant::now(), 0u32);
            self.tx
                .send(&self.buf[..LAT_BYTES], || spin(stop, since, &mut n, None))
                .map_err(fail)?;
        }
        Ok(Some(got))
    }
}

impl Member for PairMember<'_> {
    type Error = ScaleError;

    fn warm(&mut self, stop: &Stop) -> Result<(), ScaleError> {
        match (self.sender, self.phase) {
            (true, Phase::Lat) => self.round_trip(stop, false),
            (true, Phase::Bw { .. }) => self.send_one(stop).map(|_| ()),
            (false, _) => self.serve_one(stop).map(|_| ()),
        }
    }

    fn call(&mut self, stop: &Stop) -> Result<u64, ScaleError> {
        match (self.sender, self.phase) {
            (true, Phase::Lat) => {
                self.round_trip(stop, true)?;
                Ok(LAT_BYTES as u64)
            }
            (true, Phase::Bw { .. }) => {
                let mut bytes = 0;
                for _ in 0..self.batch {
                    if stop.is_set() {
                        break;
                    }
                    bytes += self.send_one(stop)? as u64;
                }
                Ok(bytes)
            }
            (false, _) => {
                let mut bytes = 0;
                for _ in 0..self.batch {
                    match self.serve_one(stop)? {
                        Some(got) => bytes += got as u64,
                        None => break,
                    }
                }
                Ok(bytes)
            }
        }
    }

    fn finish(&mut self, stop: &Stop) -> Result<(), ScaleError> {
        if self.sender {
            // The next window's buffer is touched now: pushing into it cannot fault there.
            let mut next = Vec::with_capacity(self.cap);
            next.resize(self.cap, 0.0);
            next.clear();
            let window = std::mem::replace(&mut self.samples, next);
            if let Phase::Lat = self.phase {
                self.state
                    .samples
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(window);
            }
            self.state.quiesced.store(true, Ordering::Release);
            return Ok(());
        }
        while self.serve_one(stop)?.is_some() {}
        self.state.quiesced.store(false, Ordering::Release);
        Ok(())
    }
}

/// One phase with every pair of `queues` on `cpus` (sender, receiver): the crew's windows
/// and each pair's state (latency samples per window).
pub(super) fn run(
    ctx: &Context,
    queues: &[PairQueues],
    cpus: &[(usize, usize)],
    mode: Coherence,
    phase: Phase,
) -> Result<(Windows, Vec<PairState>), ScaleError> {
    let p = queues.len();
    let states: Vec<PairState> = (0..p).map(|_| PairState::default()).collect();
    let senders: Vec<usize> = cpus.iter().map(|c| c.0).collect();
    let receivers: Vec<usize> = cpus.iter().map(|c| c.1).collect();
    // The measuring threads first: senders time the latency, receivers count delivered
    // bytes.
    let crew = match phase {
        Phase::Lat => Crew::on(&ctx.timer, &senders).with_helpers(&receivers),
        Phase::Bw { .. } => Crew::on(&ctx.timer, &receivers).with_helpers(&senders),
    };
    let cap = ctx.effort.pool.msg_scale_round_trips as usize;
    let size = phase.message_bytes();
    let plan: WindowPlan = ctx.effort.crew;
    let w = crew
        .windows(plan, &|t| {
            let (pair, measuring) = (t % p, t < p);
            let sender = measuring == matches!(phase, Phase::Lat);
            let q = queues[pair];
            let qe = |err| ScaleError::Queue { pair, err };
            // SAFETY: the queues were initialized by `init_queues`; the sender is the
            // pair's only producer of the forward queue and only consumer of the back
            // queue, the receiver the other way round.
            let (tx, rx) = unsafe {
                if sender {
                    (
                        CellSender::attach(q.fwd as *mut u8, q.fwd_bytes, mode).map_err(qe)?,
                        CellReceiver::attach(q.back as *mut u8, q.back_bytes, mode).map_err(qe)?,
                    )
                } else {
                    (
                        CellSender::attach(q.back as *mut u8, q.back_bytes, mode).map_err(qe)?,
                        CellReceiver::attach(q.fwd as *mut u8, q.fwd_bytes, mode).map_err(qe)?,
                    )
                }
            };
            let mut samples = Vec::with_capacity(cap);
            samples.resize(cap, 0.0);
            samples.clear();
            Ok(PairMember {
                ctx,
                pair,
                sender,
                phase,
                state: &states[pair],
                tx,
                rx,
                buf: (0..size).map(|i| (i * 7 + 1) as u8).collect(),
                ack: [0; LAT_BYTES],
                seq: 0,
                batch: match phase {
                    Phase::Lat => 1,
                    Phase::Bw { .. } => ((256 << 10) / size.max(1)).max(1),
                },
                samples,
                cap,
            })
        })
        .map_err(|e| match e {
            bench_core::crew::CrewError::Member { source, .. } => source,
            other => ScaleError::Crew(other.to_string()),
        })?;
    Ok((w, states))
}

/// The latency samples of the windows the figure stands on, every pair's pooled, and each
/// pair's p50.
pub(super) fn latency_samples(w: &Windows, states: &[PairState]) -> (Vec<f64>, Vec<f64>) {
    let used = w.used_windows();
    let mut all = Vec::new();
    let mut per_pair = Vec::new();
    for st in states {
        let windows = st.samples.lock().unwrap_or_else(|e| e.into_inner());
        let mine: Vec<f64> = used
            .iter()
            .filter_map(|&i| windows.get(i))
            .flatten()
            .copied()
            .collect();
        if let Some(m) = bench_core::stats::median(&mine) {
            per_pair.push(m);
        }
        all.extend(mine);
    }
    (all, per_pair)
}
