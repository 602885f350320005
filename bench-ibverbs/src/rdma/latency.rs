//! `verbs.lat`: send/recv ping-pong latency over the message sizes (`verbs_lat_ns`) and
//! the Hockney fit of the half round trips (`verbs_hockney_lat_ns`,
//! `verbs_hockney_bw_gbs`, [`bench_core::stats::hockney_fit`]).

use super::exchange::Remote;
use super::qp::Side;
use super::report::Out;
use super::sizes;
use super::wr::{Op, Wr};
use crate::config::VerbsConfig;
use crate::error::VerbsError;
use crate::wire::Command;
use bench_core::bench::Context;
use bench_core::counters::{
    self, CounterGroup, ThreadCounts, DEFAULT_MAX_ATTEMPTS as MAX_ATTEMPTS,
};
use bench_core::stats::{hockney_fit, HOCKNEY_WEIGHTS};
use serde_json::json;

/// Ping-pong latency per size and its Hockney fit.
pub(super) fn latency(
    cfg: &VerbsConfig,
    ctx: &Context,
    a: &Side,
    remote: &mut Remote<'_>,
    out: &mut Out<'_>,
) -> Result<(), VerbsError> {
    let t = cfg.timeout;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let mut points = Vec::new();
    let mut ids = Vec::new();
    for &size in sizes(ctx) {
        let (small, large) = ctx.effort.verbs.latency_iters;
        let iters = if size >= 262_144 { large } else { small };
        let warm = iters / 10;
        ctx.progress(&format!("verbs.lat send/recv {size} B"));
        let inline = size <= a.max_inline as usize;
        let mut buf = counters::sample_buffer(iters);
        let (s, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            remote.command(
                Command::Pong {
                    size: size as u32,
                    iters: (iters + warm) as u32,
                },
                t,
            )?;
            buf.clear();
            let mut w = Wr::new(a, Op::Send, size, inline, false);
            let mut wb = match remote {
                Remote::Local(b) => Some(Wr::new(b, Op::Send, size, inline, false)),
                Remote::Tcp(..) => None,
            };
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for i in 0..iters + warm {
                    let signaled = i % 32 == 31;
                    w.set_signaled(signaled);
                    let t0 = ctx.timer.start();
                    let rc = a.post(w.link());
                    if rc != 0 {
                        return Err(VerbsError::code("ibv_post_send", rc));
                    }
                    if let (Remote::Local(b), Some(wb)) = (&*remote, wb.as_mut()) {
                        b.wait_recv(1, t)?;
                        wb.set_signaled(signaled);
                        let rc = b.post(wb.link());
                        if rc != 0 {
                            return Err(VerbsError::code("ibv_post_send", rc));
                        }
                    }
                    a.wait_recv(1, t)?;
                    let t1 = ctx.timer.stop();
                    if i >= warm {
                        buf.push(ctx.timer.elapsed_ns(t0, t1) / 2.0);
                    }
                    if signaled {
                        a.wait_send(1, t)?;
                        if let Remote::Local(b) = &*remote {
                            b.wait_send(1, t)?;
                        }
                    }
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
        })?;
        // Messages of the section: one each way per round trip.
        let mc = mc.with_per_op("message", 2 * (iters + warm) as u64);
        let id = format!("verbs.lat/{}/send/{}B", out.target, size);
        if let Some(v) = out.meas(id.clone(), json!({"op": "send/recv ping-pong", "size_bytes": size, "inline": inline, "iterations": iters}), "ns", "half round trip of a send/recv ping-pong, cycle timer per round trip (ib_send_lat)", &s, mc) {
            points.push((size as f64, v));
            ids.push(id.clone());
            if size == 8 {
                out.param("verbs_lat_ns", v, "median half round trip of an 8-byte send/recv ping-pong (seed 004 Latency; ib_send_lat -s 8)", vec![id]);
            }
        }
    }
    if let Ok(h) = hockney_fit(&points) {
        let m = format!(
            "least-squares fit of T(s) = lat + s/bw to the median half round trips, {HOCKNEY_WEIGHTS}{} (r2 = {:.4})",
            if h.latency_constrained {
                "; latency held at 0 (the unconstrained fit was negative)"
            } else {
                ""
            },
            h.r2
        );
        out.param("verbs_hockney_lat_ns", h.lat_ns, &m, ids.clone());
        out.param("verbs_hockney_bw_gbs", h.bw_gbs, &m, ids);
    }
    Ok(())
}
