//! `verbs.post`, `verbs.poll`, `verbs.inject`, `verbs.rate`: the post/poll breakdown of
//! seed 004 (`llp_post_inline_ns`, `llp_post_ns`, `llp_prog_ns`, `busy_post_ns`,
//! `inj_overhead_ns`, `inj_misc_ns`, `msg_rate_mps`).

use super::exchange::Remote;
use super::qp::{completion_error, Side};
use super::report::Out;
use super::wr::{post_one, Op, Wr};
use super::{BURST, SCQ_DEPTH, SQ_DEPTH};
use crate::config::VerbsConfig;
use crate::error::VerbsError;
use crate::wire::Command;
use bench_core::bench::Context;
use bench_core::counters::{
    self, CounterGroup, MeasurementCounters, ThreadCounts, DEFAULT_MAX_ATTEMPTS as MAX_ATTEMPTS,
};
use bench_core::params::Warning;
use ibverbs_sys as ffi;
use serde_json::json;
use std::time::{Duration, Instant};

/// Post and poll costs, busy post, injection overhead and message rate.
pub(super) fn post_breakdown(
    cfg: &VerbsConfig,
    ctx: &Context,
    a: &Side,
    remote: &mut Remote<'_>,
    out: &mut Out<'_>,
) -> Result<(), VerbsError> {
    // Counters of this thread (the peer is another queue pair of this thread, or another
    // process): every measured loop is one counted section, repeated while disturbed.
    let mut b = Breakdown {
        ctx,
        a,
        t: cfg.timeout,
        group: CounterGroup::open_with_timer(&ctx.timer),
        wc: [ffi::ibv_wc::default(); 1],
    };
    let post_ids = b.post_costs(remote, out)?;
    let post_inline = publish_post_keys(out, &post_ids);
    b.poll_empty(out)?;
    let settle = b.settle()?;
    let prog = b.poll_completion(out, settle)?;
    b.busy_post(out)?;
    let inj = b.inject()?;
    publish_injection(out, inj, post_inline, &post_ids, prog);
    Ok(())
}

/// One `verbs.post` case: the operation, the payload size and how it is posted.
#[derive(Clone, Copy)]
struct PostCase {
    op: Op,
    size: usize,
    inline: bool,
    signaled: bool,
}

impl PostCase {
    /// How the payload travels, as named in the progress line and the id.
    fn payload(self) -> &'static str {
        if self.inline {
            "inline"
        } else {
            "dma"
        }
    }

    /// Whether every post asks for a completion, as named in the progress line and the id.
    fn signaling(self) -> &'static str {
        if self.signaled {
            "signaled"
        } else {
            "unsignaled"
        }
    }
}

/// Ids of the signaled 8-byte RDMA-write post measurements the keys are read from.
#[derive(Default)]
struct PostIds {
    inline: Option<String>,
    dma: Option<String>,
}

/// The completion-poll key's value and the id of its measurement.
struct Prog {
    p50: Option<f64>,
    id: String,
}

/// Samples of the injection loop and how it ran.
struct Injection {
    inj: Vec<f64>,
    rate: Vec<f64>,
    mc: MeasurementCounters,
    msgs: usize,
    depth: usize,
    inline8: bool,
}

/// What every phase of the breakdown shares: the posting side, its timeout, the counters
/// of this thread and the completion buffer of the polls.
struct Breakdown<'a> {
    ctx: &'a Context,
    a: &'a Side,
    t: Duration,
    group: CounterGroup,
    wc: [ffi::ibv_wc; 1],
}

impl Breakdown<'_> {
    /// Whether an 8-byte payload can be posted inline.
    fn inline8(&self) -> bool {
        self.a.max_inline >= 8
    }

    /// Measures every post case, returning the ids the `llp_post*` keys come from.
    fn post_costs(
        &mut self,
        remote: &mut Remote<'_>,
        out: &mut Out<'_>,
    ) -> Result<PostIds, VerbsError> {
        let ctx = self.ctx;
        let mut ids = PostIds::default();
        for op in [Op::Write, Op::Send] {
            for &size in ctx.effort.verbs.post_sizes {
                for inline in [true, false] {
                    if inline && size > self.a.max_inline as usize {
                        continue;
                    }
                    for signaled in [true, false] {
                        let case = PostCase {
                            op,
                            size,
                            inline,
                            signaled,
                        };
                        ctx.progress(&format!(
                            "verbs.post {} {} B {} {}",
                            op.name(),
                            size,
                            case.payload(),
                            case.signaling()
                        ));
                        let (s, mc) = self.post_case(remote, case)?;
                        let id = publish_post_case(out, self.a, case, &s, mc);
                        if op == Op::Write && size == 8 && signaled {
                            if inline {
                                ids.inline = Some(id);
                            } else {
                                ids.dma = Some(id);
                            }
                        }
                    }
                }
            }
        }
        Ok(ids)
    }

    /// Posts the case's rounds of bursts, timing each ibv_post_send after a warm-up round.
    fn post_case(
        &mut self,
        remote: &mut Remote<'_>,
        case: PostCase,
    ) -> Result<(Vec<f64>, MeasurementCounters), VerbsError> {
        let (ctx, a, t) = (self.ctx, self.a, self.t);
        let PostCase {
            op,
            size,
            inline,
            signaled,
        } = case;
        let rounds = ctx.effort.verbs.post_rounds;
        let total = (rounds + 1) * BURST;
        let mut buf = counters::sample_buffer(rounds * BURST);
        let group = &mut self.group;
        let (s, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            if op == Op::Send {
                remote.command(
                    Command::Sink {
                        size: size as u32,
                        count: total as u32,
                    },
                    t,
                )?;
            }
            let mut w = Wr::new(a, op, size, inline, signaled);
            buf.clear();
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for r in 0..=rounds {
                    for j in 0..BURST {
                        let last = j == BURST - 1;
                        w.set_signaled(signaled || last);
                        let wr = w.link();
                        let t0 = ctx.timer.start();
                        let rc = a.post(wr);
                        let t1 = ctx.timer.stop();
                        if rc != 0 {
                            return Err(VerbsError::code("ibv_post_send", rc));
                        }
                        // Round 0 warms up; the forced-signaled last post of an
                        // unsignaled burst is not the measured kind.
                        if r > 0 && (signaled || !last) {
                            buf.push(ctx.timer.elapsed_ns(t0, t1));
                        }
                    }
                    a.wait_send(if signaled { BURST } else { 1 }, t)?;
                    if op == Op::Send {
                        remote.drain(BURST, t)?;
                    }
                }
                Ok(())
            });
            r?;
            if op == Op::Send {
                remote.ack(t)?;
            }
            Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
        })?;
        Ok((s, mc.with_per_op("message", total as u64)))
    }

    /// Times ibv_poll_cq(1) on an empty send CQ.
    fn poll_empty(&mut self, out: &mut Out<'_>) -> Result<(), VerbsError> {
        let (ctx, a) = (self.ctx, self.a);
        let wc = &mut self.wc;
        let n = ctx.effort.verbs.inject_posts;
        let mut buf = counters::sample_buffer(n);
        let group = &mut self.group;
        let (empty, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            buf.clear();
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for _ in 0..n {
                    let t0 = ctx.timer.start();
                    let r = Side::poll(a.scq, wc);
                    let t1 = ctx.timer.stop();
                    if r == 0 {
                        buf.push(ctx.timer.elapsed_ns(t0, t1));
                    } else if r > 0 {
                        if let Some((st, v)) = wc[0].error() {
                            return Err(completion_error(st, v));
                        }
                    }
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
        })?;
        let mc = mc.with_per_op("poll", n as u64);
        let empty_id = format!("verbs.poll/{}/empty", out.target);
        out.meas(
            empty_id,
            json!({"entries": 1, "cq": "empty"}),
            "ns",
            "cycle timer around ibv_poll_cq(1) on an empty send CQ",
            &empty,
            mc,
        );
        Ok(())
    }

    /// How long BURST completions take to arrive: the completion polls settle at twice that.
    fn settle(&self) -> Result<Duration, VerbsError> {
        let inline8 = self.inline8();
        let t0 = Instant::now();
        for _ in 0..BURST {
            post_one(self.a, Op::Write, 8, inline8, true)?;
        }
        self.a.wait_send(BURST, self.t)?;
        Ok((t0.elapsed() * 2).max(Duration::from_micros(20)))
    }

    /// Times ibv_poll_cq(1) returning one completion, publishing `llp_prog_ns`.
    fn poll_completion(&mut self, out: &mut Out<'_>, settle: Duration) -> Result<Prog, VerbsError> {
        let (ctx, a, t, inline8) = (self.ctx, self.a, self.t, self.inline8());
        let wc = &mut self.wc;
        let prog_rounds = ctx.effort.verbs.progress_rounds;
        let mut buf = counters::sample_buffer(prog_rounds * BURST);
        let group = &mut self.group;
        let (full, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            buf.clear();
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for _ in 0..prog_rounds {
                    for _ in 0..BURST {
                        post_one(a, Op::Write, 8, inline8, true)?;
                    }
                    let end = Instant::now() + settle;
                    while Instant::now() < end {
                        std::hint::spin_loop();
                    }
                    let mut got = 0;
                    for _ in 0..BURST {
                        let t0 = ctx.timer.start();
                        let r = Side::poll(a.scq, wc);
                        let t1 = ctx.timer.stop();
                        if r < 0 {
                            return Err(VerbsError::code("ibv_poll_cq", r));
                        }
                        if r == 1 {
                            if let Some((st, v)) = wc[0].error() {
                                return Err(completion_error(st, v));
                            }
                            buf.push(ctx.timer.elapsed_ns(t0, t1));
                            got += 1;
                        } else {
                            break;
                        }
                    }
                    a.wait_send(BURST - got, t)?;
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
        })?;
        let mc = mc.with_per_op("message", (prog_rounds * BURST) as u64);
        let prog_id = format!("verbs.poll/{}/completion", out.target);
        let prog = out.meas(
            prog_id.clone(),
            json!({"entries": 1, "cq": "one or more completions waiting"}),
            "ns",
            "cycle timer around ibv_poll_cq(1) returning one completion of an 8-byte RDMA write",
            &full,
            mc,
        );
        if let Some(v) = prog {
            out.param(
                "llp_prog_ns",
                v,
                "median ibv_poll_cq returning one completion (seed 004 LLP_prog)",
                vec![prog_id.clone()],
            );
        }
        Ok(Prog {
            p50: prog,
            id: prog_id,
        })
    }

    /// Busy post: fills the send queue without polling, then times failing posts.
    fn busy_post(&mut self, out: &mut Out<'_>) -> Result<(), VerbsError> {
        let (ctx, a, t, inline8) = (self.ctx, self.a, self.t, self.inline8());
        let limit = (SCQ_DEPTH as usize / 2).min(4 * SQ_DEPTH as usize);
        let attempts = ctx.effort.verbs.full_queue_attempts;
        let mut buf = counters::sample_buffer(attempts);
        let group = &mut self.group;
        let ((busy, outstanding), mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            let mut w = Wr::new(a, Op::Write, 8, inline8, true);
            let mut outstanding = 0usize;
            let mut tries = 0;
            buf.clear();
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                while tries < attempts && outstanding < limit {
                    let wr = w.link();
                    let t0 = ctx.timer.start();
                    let rc = a.post(wr);
                    let t1 = ctx.timer.stop();
                    if rc == 0 {
                        outstanding += 1;
                    } else if rc == libc::ENOMEM || rc == -libc::ENOMEM {
                        buf.push(ctx.timer.elapsed_ns(t0, t1));
                        tries += 1;
                    } else {
                        return Err(VerbsError::code("ibv_post_send", rc));
                    }
                }
                Ok(())
            });
            r?;
            a.wait_send(outstanding, t)?;
            Ok::<_, VerbsError>(((buf.clone(), outstanding), ThreadCounts::single(c)))
        })?;
        let mc = mc.with_per_op("message", (outstanding + busy.len()) as u64);
        publish_busy(out, &busy, outstanding, mc);
        Ok(())
    }

    /// Injection: put_bw style, 8-byte inline writes, every one signaled, poll a batch
    /// of 16 after every 16 posts, busy posts when the queue is full.
    fn inject(&mut self) -> Result<Injection, VerbsError> {
        let (ctx, a, t, inline8) = (self.ctx, self.a, self.t, self.inline8());
        let (msgs, reps) = ctx.effort.verbs.message_rate;
        let mut wcs = [ffi::ibv_wc::default(); BURST];
        let depth = SQ_DEPTH as usize;
        let group = &mut self.group;
        let ((inj, rate), mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            let mut inj = Vec::with_capacity(reps);
            let mut rate = Vec::with_capacity(reps);
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for _ in 0..reps {
                    let mut w = Wr::new(a, Op::Write, 8, inline8, true);
                    let mut posted = 0usize;
                    let mut done = 0usize;
                    let wall = Instant::now();
                    let c0 = ctx.timer.start();
                    let mut stalled: Option<Instant> = None;
                    while posted < msgs {
                        let ok = posted - done < depth && a.post(w.link()) == 0;
                        if ok {
                            posted += 1;
                        }
                        if !ok || posted.is_multiple_of(BURST) {
                            let r = Side::reap(a.scq, &mut wcs)?;
                            done += r;
                            if r > 0 {
                                stalled = None;
                            } else if !ok {
                                // Only a full queue with nothing completing can stall.
                                let since = *stalled.get_or_insert_with(Instant::now);
                                if since.elapsed() > t {
                                    return Err(VerbsError::CompletionTimeout(t, "injection loop"));
                                }
                            }
                        }
                    }
                    let c1 = ctx.timer.stop();
                    a.wait_send(posted - done, t)?;
                    let total = wall.elapsed().as_nanos() as f64;
                    inj.push(ctx.timer.elapsed_ns(c0, c1) / msgs as f64);
                    rate.push(msgs as f64 / total * 1e3);
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>(((inj, rate), ThreadCounts::single(c)))
        })?;
        let mc = mc.with_per_op("message", (msgs * reps) as u64);
        Ok(Injection {
            inj,
            rate,
            mc,
            msgs,
            depth,
            inline8,
        })
    }
}

/// Records one post case's measurement and returns its id.
fn publish_post_case(
    out: &mut Out<'_>,
    a: &Side,
    case: PostCase,
    s: &[f64],
    mc: MeasurementCounters,
) -> String {
    let id = format!(
        "verbs.post/{}/{}/{}/{}/{}B",
        out.target,
        case.op.name(),
        case.payload(),
        case.signaling(),
        case.size
    );
    out.meas(
        id.clone(),
        json!({"op": case.op.name(), "size_bytes": case.size, "inline": case.inline, "signaled": case.signaled, "burst": BURST, "max_inline_bytes": a.max_inline}),
        "ns",
        "cycle timer around one ibv_post_send (timer overhead subtracted), bursts of 16 posts then the completions are polled (untimed)",
        s,
        mc,
    );
    id
}

/// Publishes `llp_post_inline_ns` and `llp_post_ns` from the signaled 8-byte write posts,
/// returning the inline p50 the misc key subtracts.
fn publish_post_keys(out: &mut Out<'_>, ids: &PostIds) -> Option<f64> {
    let p50 = |out: &Out<'_>, id: &Option<String>| {
        id.as_ref().and_then(|id| {
            out.rep
                .measurements
                .iter()
                .find(|m| &m.id == id)
                .map(|m| m.distribution.p50)
        })
    };
    let post_inline = p50(out, &ids.inline);
    let post_dma = p50(out, &ids.dma);
    if let (Some(v), Some(id)) = (post_inline, &ids.inline) {
        out.param(
            "llp_post_inline_ns",
            v,
            "median ibv_post_send of a signaled 8-byte inline RDMA write (seed 004 LLP_post)",
            vec![id.clone()],
        );
    }
    if let (Some(v), Some(id)) = (post_dma, &ids.dma) {
        out.param(
            "llp_post_ns",
            v,
            "median ibv_post_send of a signaled 8-byte RDMA write, payload by DMA (not inline)",
            vec![id.clone()],
        );
    }
    post_inline
}

/// Records the busy-post measurement and `busy_post_ns`, or warns that no post was refused.
fn publish_busy(out: &mut Out<'_>, busy: &[f64], outstanding: usize, mc: MeasurementCounters) {
    let busy_id = format!("verbs.post/{}/busy", out.target);
    let busy_p50 = out.meas(
        busy_id.clone(),
        json!({"queue": "send queue full", "depth_asked": SQ_DEPTH}),
        "ns",
        "cycle timer around ibv_post_send refused (ENOMEM) on a full send queue",
        busy,
        mc,
    );
    match busy_p50 {
        Some(v) => out.param("busy_post_ns", v, "median refused ibv_post_send on a full send queue (seed 004 busy post)", vec![busy_id]),
        None => out.rep.warnings.push(Warning {
            code: "verbs-busy-post".into(),
            message: format!("the send queue never refused a post ({outstanding} accepted without polling): this provider frees queue slots as the NIC completes, so busy_post_ns is not measured"),
            remediation: String::new(),
        }),
    }
}

/// Records the injection and rate measurements with `inj_overhead_ns`, `inj_misc_ns` and
/// `msg_rate_mps`.
fn publish_injection(
    out: &mut Out<'_>,
    i: Injection,
    post_inline: Option<f64>,
    post_ids: &PostIds,
    prog: Prog,
) {
    let Injection {
        inj,
        rate,
        mc,
        msgs,
        depth,
        inline8,
    } = i;
    let inj_id = format!("verbs.inject/{}/write/8B", out.target);
    let inj_p50 = out.meas(inj_id.clone(), json!({"messages": msgs, "size_bytes": 8, "inline": inline8, "signaled": "every message", "poll_batch": BURST, "depth": depth}), "ns", "CPU time of a put_bw-style loop (post, poll a batch of 16 every 16 posts, busy posts when full) divided by the messages", &inj, mc.clone());
    if let Some(v) = inj_p50 {
        out.param("inj_overhead_ns", v, "seed 004 Inj_overhead = LLP_post + LLP_prog + Misc: CPU time per message of a continuous 8-byte inline RDMA-write stream", vec![inj_id.clone()]);
        if let (Some(p), Some(g)) = (post_inline, prog.p50) {
            publish_misc(out, [v, p, g], &inj_id, post_ids, &prog);
        }
    }
    let rate_id = format!("verbs.rate/{}/write/8B", out.target);
    if let Some(v) = out.meas(
        rate_id.clone(),
        json!({"messages": msgs, "size_bytes": 8}),
        "Mmsg/s",
        "messages over wall time from the first post to the last completion of the injection loop",
        &rate,
        mc,
    ) {
        out.param("msg_rate_mps", v, "8-byte inline RDMA writes per microsecond, one core, one QP (ib_write_bw -s 8 msg rate)", vec![rate_id]);
    }
}

/// Notes seed 004's Misc on the injection measurement and publishes `inj_misc_ns`, or
/// warns when it comes out negative. `[v, p, g]`: the injection, inline-post and poll p50s.
fn publish_misc(
    out: &mut Out<'_>,
    [v, p, g]: [f64; 3],
    inj_id: &str,
    post_ids: &PostIds,
    prog: &Prog,
) {
    let misc = v - p - g;
    if let Some(m) = out.rep.measurements.iter_mut().find(|m| m.id == inj_id) {
        m.parameters["misc_ns"] = json!(misc);
    }
    match crate::inj_misc(v, p, g) {
        Some(misc) => out.param(
            "inj_misc_ns",
            misc,
            "inj_overhead_ns - llp_post_inline_ns - llp_prog_ns (p50s of this run): seed 004's Misc",
            vec![inj_id.to_owned(), post_ids.inline.clone().unwrap_or_default(), prog.id.clone()],
        ),
        None => out.rep.warnings.push(Warning {
            code: "verbs-inj-misc".into(),
            message: format!("inj_misc_ns not published: inj_overhead_ns {v:.2} - llp_post_inline_ns {p:.2} - llp_prog_ns {g:.2} = {misc:.2} ns is negative (the p50s are noisier than the misc they would isolate)"),
            remediation: "run without --quick on an idle, pinned core, or supply --what-if inj_misc_ns=VALUE".into(),
        }),
    }
}
