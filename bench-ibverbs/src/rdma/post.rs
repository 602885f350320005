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
    self, CounterGroup, ThreadCounts, DEFAULT_MAX_ATTEMPTS as MAX_ATTEMPTS,
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
    let t = cfg.timeout;
    // Counters of this thread (the peer is another queue pair of this thread, or another
    // process): every measured loop is one counted section, repeated while disturbed.
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let effort = &ctx.effort.verbs;
    let rounds = effort.post_rounds;
    let sizes = effort.post_sizes;
    let mut post_inline_id = None;
    let mut post_dma_id = None;
    for op in [Op::Write, Op::Send] {
        for &size in sizes {
            for inline in [true, false] {
                if inline && size > a.max_inline as usize {
                    continue;
                }
                for signaled in [true, false] {
                    ctx.progress(&format!(
                        "verbs.post {} {} B {} {}",
                        op.name(),
                        size,
                        if inline { "inline" } else { "dma" },
                        if signaled { "signaled" } else { "unsignaled" }
                    ));
                    let total = (rounds + 1) * BURST;
                    let mut buf = counters::sample_buffer(rounds * BURST);
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
                    let mc = mc.with_per_op("message", total as u64);
                    let id = format!(
                        "verbs.post/{}/{}/{}/{}/{}B",
                        out.target,
                        op.name(),
                        if inline { "inline" } else { "dma" },
                        if signaled { "signaled" } else { "unsignaled" },
                        size
                    );
                    out.meas(
                        id.clone(),
                        json!({"op": op.name(), "size_bytes": size, "inline": inline, "signaled": signaled, "burst": BURST, "max_inline_bytes": a.max_inline}),
                        "ns",
                        "cycle timer around one ibv_post_send (timer overhead subtracted), bursts of 16 posts then the completions are polled (untimed)",
                        &s,
                        mc,
                    );
                    if op == Op::Write && size == 8 && signaled {
                        if inline {
                            post_inline_id = Some(id);
                        } else {
                            post_dma_id = Some(id);
                        }
                    }
                }
            }
        }
    }
    let p50 = |out: &Out<'_>, id: &Option<String>| {
        id.as_ref().and_then(|id| {
            out.rep
                .measurements
                .iter()
                .find(|m| &m.id == id)
                .map(|m| m.distribution.p50)
        })
    };
    let post_inline = p50(out, &post_inline_id);
    let post_dma = p50(out, &post_dma_id);
    if let (Some(v), Some(id)) = (post_inline, &post_inline_id) {
        out.param(
            "llp_post_inline_ns",
            v,
            "median ibv_post_send of a signaled 8-byte inline RDMA write (seed 004 LLP_post)",
            vec![id.clone()],
        );
    }
    if let (Some(v), Some(id)) = (post_dma, &post_dma_id) {
        out.param(
            "llp_post_ns",
            v,
            "median ibv_post_send of a signaled 8-byte RDMA write, payload by DMA (not inline)",
            vec![id.clone()],
        );
    }

    // Polls: empty CQ, and a CQ holding completions.
    let mut wc = [ffi::ibv_wc::default(); 1];
    let n = effort.inject_posts;
    let mut buf = counters::sample_buffer(n);
    let (empty, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
        buf.clear();
        let (r, c) = group.count(|| -> Result<(), VerbsError> {
            for _ in 0..n {
                let t0 = ctx.timer.start();
                let r = Side::poll(a.scq, &mut wc);
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

    let inline8 = a.max_inline >= 8;
    // How long BURST completions take to arrive: settle at twice that before polling.
    let t0 = Instant::now();
    for _ in 0..BURST {
        post_one(a, Op::Write, 8, inline8, true)?;
    }
    a.wait_send(BURST, t)?;
    let settle = (t0.elapsed() * 2).max(Duration::from_micros(20));
    let prog_rounds = effort.progress_rounds;
    let mut buf = counters::sample_buffer(prog_rounds * BURST);
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
                    let r = Side::poll(a.scq, &mut wc);
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

    // Busy post: fill the send queue without polling, then time failing posts.
    let limit = (SCQ_DEPTH as usize / 2).min(4 * SQ_DEPTH as usize);
    let attempts = effort.full_queue_attempts;
    let mut buf = counters::sample_buffer(attempts);
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
    let busy_id = format!("verbs.post/{}/busy", out.target);
    let busy_p50 = out.meas(
        busy_id.clone(),
        json!({"queue": "send queue full", "depth_asked": SQ_DEPTH}),
        "ns",
        "cycle timer around ibv_post_send refused (ENOMEM) on a full send queue",
        &busy,
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

    // Injection: put_bw style, 8-byte inline writes, every one signaled, poll a batch
    // of 16 after every 16 posts, busy posts when the queue is full.
    let (msgs, reps) = effort.message_rate;
    let mut wcs = [ffi::ibv_wc::default(); BURST];
    let depth = SQ_DEPTH as usize;
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
    let inj_id = format!("verbs.inject/{}/write/8B", out.target);
    let inj_p50 = out.meas(inj_id.clone(), json!({"messages": msgs, "size_bytes": 8, "inline": inline8, "signaled": "every message", "poll_batch": BURST, "depth": depth}), "ns", "CPU time of a put_bw-style loop (post, poll a batch of 16 every 16 posts, busy posts when full) divided by the messages", &inj, mc.clone());
    if let Some(v) = inj_p50 {
        out.param("inj_overhead_ns", v, "seed 004 Inj_overhead = LLP_post + LLP_prog + Misc: CPU time per message of a continuous 8-byte inline RDMA-write stream", vec![inj_id.clone()]);
        if let (Some(p), Some(g)) = (post_inline, prog) {
            let misc = v - p - g;
            if let Some(m) = out.rep.measurements.iter_mut().find(|m| m.id == inj_id) {
                m.parameters["misc_ns"] = json!(misc);
            }
            match crate::inj_misc(v, p, g) {
                Some(misc) => out.param(
                    "inj_misc_ns",
                    misc,
                    "inj_overhead_ns - llp_post_inline_ns - llp_prog_ns (p50s of this run): seed 004's Misc",
                    vec![inj_id.clone(), post_inline_id.clone().unwrap_or_default(), prog_id.clone()],
                ),
                None => out.rep.warnings.push(Warning {
                    code: "verbs-inj-misc".into(),
                    message: format!("inj_misc_ns not published: inj_overhead_ns {v:.2} - llp_post_inline_ns {p:.2} - llp_prog_ns {g:.2} = {misc:.2} ns is negative (the p50s are noisier than the misc they would isolate)"),
                    remediation: "run without --quick on an idle, pinned core, or supply --what-if inj_misc_ns=VALUE".into(),
                }),
            }
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
    Ok(())
}
