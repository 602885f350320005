//! `verbs.bw`: streaming RDMA-write bandwidth over the message sizes (`verbs_bw_gbs`).

use super::qp::Side;
use super::report::Out;
use super::wr::{Op, Wr};
use super::{sizes, BURST, SQ_DEPTH};
use crate::config::VerbsConfig;
use crate::error::VerbsError;
use bench_core::bench::Context;
use bench_core::counters::{
    self, CounterGroup, ThreadCounts, DEFAULT_MAX_ATTEMPTS as MAX_ATTEMPTS,
};
use ibverbs_sys as ffi;
use serde_json::json;
use std::time::Instant;

/// Streaming RDMA-write bandwidth per size; the best p50 is `verbs_bw_gbs`.
pub(super) fn bandwidth(
    cfg: &VerbsConfig,
    ctx: &Context,
    a: &Side,
    out: &mut Out<'_>,
) -> Result<(), VerbsError> {
    let t = cfg.timeout;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let window = 64usize.min(SQ_DEPTH as usize);
    let mut best = None;
    for &size in sizes(ctx) {
        ctx.progress(&format!("verbs.bw write {size} B"));
        let (bytes, (fewest, most), reps) = ctx.effort.verbs.bandwidth_stream;
        let msgs = (bytes / size).clamp(fewest, most);
        let inline = size <= a.max_inline as usize;
        let mut wcs = [ffi::ibv_wc::default(); BURST];
        let (s, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            let mut s = Vec::with_capacity(reps);
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for _ in 0..reps {
                    let mut w = Wr::new(a, Op::Write, size, inline, true);
                    let (mut posted, mut done) = (0usize, 0usize);
                    let start = Instant::now();
                    while done < msgs {
                        while posted < msgs && posted - done < window {
                            let rc = a.post(w.link());
                            if rc != 0 {
                                return Err(VerbsError::code("ibv_post_send", rc));
                            }
                            posted += 1;
                        }
                        let r = Side::reap(a.scq, &mut wcs)?;
                        done += r;
                        if r == 0 && start.elapsed() > t.saturating_mul(4) {
                            return Err(VerbsError::CompletionTimeout(t, "bandwidth stream"));
                        }
                    }
                    let ns = start.elapsed().as_nanos() as f64;
                    s.push((msgs * size) as f64 / ns);
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>((s, ThreadCounts::single(c)))
        })?;
        let mc = mc.with_per_op("message", (msgs * reps) as u64);
        let id = format!("verbs.bw/{}/write/{}B", out.target, size);
        if let Some(v) = out.meas(id.clone(), json!({"op": "write", "size_bytes": size, "inline": inline, "window": window, "messages": msgs}), "GB/s", "bytes of a stream of signaled RDMA writes (64 outstanding) over wall time to the last completion (ib_write_bw)", &s, mc) {
            best = Some((size, v, id));
        }
    }
    if let Some((size, v, id)) = best {
        out.param("verbs_bw_gbs", v, &format!("median streaming RDMA-write bandwidth at {size} B messages, 64 outstanding (ib_write_bw)"), vec![id]);
    }
    Ok(())
}
