//! The verbs backend (feature `verbs`): device, RC queue pairs, memory registration on a
//! cxlchar target, the TCP QP-info exchange, and the measurements.
//!
//! Raw `ibverbs-sys` calls, because the safe `ibverbs` crate has no max-inline setting
//! and no registration of caller-owned memory. `ibv_post_send`, `ibv_post_recv` and
//! `ibv_poll_cq` are inline functions in verbs.h; like rust-ibverbs we call them through
//! the context's ops table.
//!
//! One module per concern: [`device`] (opening a device, its port and GID), [`qp`] (the
//! RC queue pairs, the registered region and their setup), [`wr`] (work requests),
//! [`exchange`](mod@exchange) (the out-of-band TCP QP-info exchange and the command
//! channel of a two-host run), one module per benchmark ([`post`]: the post/poll breakdown
//! and injection, [`latency`]: the ping-pong latency and its Hockney fit, [`bandwidth`]:
//! the streaming bandwidth) and [`report`] (the measurements and params they produce).

pub mod bandwidth;
pub mod device;
pub mod exchange;
pub mod latency;
pub mod post;
pub mod qp;
pub mod report;
pub mod wr;

pub use device::{device_names, open_device, Device};
pub use exchange::{exchange, tcp_accept, tcp_connect};
pub use qp::{connect_loopback, setup, Resources, Side};
pub use wr::Op;

use crate::config::{Peer, VerbsConfig};
use crate::error::VerbsError;
use crate::wire::Command;
use bench_core::bench::{Context, Report};
use bench_core::memory::Region;
use bench_core::params::Warning;
use exchange::{io_err, serve, Remote};
use report::Out;
use std::io::{Read, Write};

/// Send queue depth asked for.
pub const SQ_DEPTH: u32 = 128;
/// Receive queue depth (kept full on both sides).
pub const RQ_DEPTH: u32 = 256;
/// Largest message (bytes).
pub const MAX_MSG: usize = 1 << 20;
/// Per side: source buffer `[0, MAX_MSG)`, destination buffer `[MAX_MSG, 2 MAX_MSG)`.
const SIDE_BYTES: usize = 2 * MAX_MSG;
/// Completion queue entries of the send CQ.
const SCQ_DEPTH: i32 = 1024;
/// Inline size asked for at QP creation (reduced until the device accepts).
const INLINE_ASK: [u32; 4] = [256, 128, 64, 0];
const BURST: usize = 16;

/// Runs the configured measurements (or serves them with `--server`).
pub fn run(cfg: &VerbsConfig, target: &str, ctx: &Context) -> Result<Report, VerbsError> {
    if let Some(&cpu) = ctx.cpus.first() {
        // Best effort: an unpinned run is still a run (the env warnings say so).
        let _ = bench_core::pin::pin_current(cpu);
    }
    let t = cfg.timeout;
    match &cfg.peer {
        Peer::Loopback => {
            let mut res = setup(cfg, ctx, 2)?;
            connect_loopback(&mut res)?;
            ctx.progress(&format!(
                "verbs: {} port {} gid {} loopback, max inline {} B",
                res.dev.name, res.dev.port, res.dev.gid_index, res.sides[0].max_inline
            ));
            let a = &res.sides[0];
            let b = &res.sides[1];
            measure(cfg, ctx, target, &res.region, a, Remote::Local(b))
        }
        Peer::Server { port } => {
            let mut res = setup(cfg, ctx, 1)?;
            ctx.progress(&format!("verbs: waiting {t:?} for a client on port {port}"));
            let (mut s, peer) = tcp_accept(*port, t)?;
            connect_over_tcp(&mut res, &mut s, &peer, t)?;
            // Ready: the client may post.
            s.write_all(&[1]).map_err(io_err(&peer, t))?;
            let n = serve(&res.sides[0], &mut s, &peer, t)?;
            let mut rep = Report {
                served: true,
                ..Report::default()
            };
            rep.warnings.push(Warning {
                code: "verbs-server".into(),
                message: format!(
                    "served {n} commands of {peer}; the client reports the measurements"
                ),
                remediation: String::new(),
            });
            Ok(rep)
        }
        Peer::Connect { host, port } => {
            let mut res = setup(cfg, ctx, 1)?;
            let peer = format!("{host}:{port}");
            let mut s = tcp_connect(host, *port, t)?;
            connect_over_tcp(&mut res, &mut s, &peer, t)?;
            let mut ready = [0u8; 1];
            s.read_exact(&mut ready).map_err(io_err(&peer, t))?;
            let side = &res.sides[0];
            let rep = measure(
                cfg,
                ctx,
                target,
                &res.region,
                side,
                Remote::Tcp(&mut s, peer.clone()),
            )?;
            let _ = s.write_all(&Command::Quit.encode());
            Ok(rep)
        }
    }
}

/// The two-process handshake both roles share: exchange queue-pair info with `peer` over
/// `s`, connect this side's QP to theirs and fill its receive queue.
fn connect_over_tcp(
    res: &mut Resources,
    s: &mut std::net::TcpStream,
    peer: &str,
    t: std::time::Duration,
) -> Result<(), VerbsError> {
    let ours = res.sides[0].info(&res.dev);
    let theirs = exchange(s, &ours, peer, t)?;
    let side = &mut res.sides[0];
    side.connect(&res.dev, &theirs)?;
    for _ in 0..RQ_DEPTH {
        side.post_recv(MAX_MSG)?;
    }
    Ok(())
}

fn measure(
    cfg: &VerbsConfig,
    ctx: &Context,
    target: &str,
    region: &Region,
    a: &Side,
    mut remote: Remote<'_>,
) -> Result<Report, VerbsError> {
    let mut out = Out {
        rep: Report::default(),
        target,
        region,
    };
    if cfg.mode.post() {
        post::post_breakdown(cfg, ctx, a, &mut remote, &mut out)?;
    }
    if cfg.mode.lat() {
        latency::latency(cfg, ctx, a, &mut remote, &mut out)?;
    }
    if cfg.mode.bw() {
        bandwidth::bandwidth(cfg, ctx, a, &mut out)?;
    }
    Ok(out.rep)
}

/// Sizes of latency and bandwidth (the effort plan's, at most [`MAX_MSG`]: the largest
/// is the message the buffers are registered for).
pub(super) fn sizes(ctx: &Context) -> &'static [usize] {
    ctx.effort.verbs.sweep_sizes
}

/// Helpers of the lab tests (an RDMA device in the emulated lab).
#[cfg(test)]
mod test_util {
    use crate::config::VerbsConfig;
    use bench_core::bench::Context;
    use std::time::Duration;

    pub(super) fn lab_ctx() -> Context {
        Context {
            progress: std::sync::Arc::new(|m| eprintln!("{m}")),
            ..Context::quick_local()
        }
    }

    pub(super) fn lab_cfg() -> VerbsConfig {
        VerbsConfig {
            device: Some(std::env::var("CXLCHAR_LAB_RDMA").unwrap_or_else(|_| "rxe0".into())),
            timeout: Duration::from_secs(30),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::{lab_cfg, lab_ctx};

    #[test]
    fn every_size_of_either_effort_fits_the_registered_buffers() {
        for e in [&bench_core::effort::QUICK, &bench_core::effort::FULL] {
            assert!(e.verbs.sweep_sizes.iter().all(|&s| s <= super::MAX_MSG));
            assert_eq!(e.verbs.sweep_sizes.last(), Some(&super::MAX_MSG));
            assert!(e.verbs.post_sizes.iter().all(|&s| s <= super::MAX_MSG));
        }
    }
    use super::*;

    /// The whole family on rxe0 loopback returns every key.
    #[test]
    #[ignore = "needs an RDMA device: runs in the emulated lab (ci/lab/run, rxe0 in guest a)"]
    fn lab_post_breakdown_returns_all_keys() {
        let ctx = lab_ctx();
        let cfg = lab_cfg();
        let rep = run(&cfg, "rdma:rxe0/loopback", &ctx).unwrap();
        let keys: Vec<&str> = rep.params.iter().map(|p| p.key.as_str()).collect();
        eprintln!(
            "{:?}",
            rep.params
                .iter()
                .map(|p| (&p.key, p.value))
                .collect::<Vec<_>>()
        );
        for k in [
            "llp_post_inline_ns",
            "llp_post_ns",
            "llp_prog_ns",
            "inj_overhead_ns",
            "msg_rate_mps",
            "verbs_lat_ns",
            "verbs_bw_gbs",
            "verbs_hockney_lat_ns",
            "verbs_hockney_bw_gbs",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert!(
            keys.contains(&"inj_misc_ns")
                || rep.warnings.iter().any(|w| w.code == "verbs-inj-misc"),
            "inj_misc_ns neither measured nor explained"
        );
        assert!(
            keys.contains(&"busy_post_ns")
                || rep.warnings.iter().any(|w| w.code == "verbs-busy-post"),
            "busy post neither measured nor explained"
        );
        assert!(rep.params.iter().all(|p| p.value.is_finite()));
        let m = |k: &str| rep.params.iter().find(|p| p.key == k).unwrap().value;
        assert!(m("msg_rate_mps") > 0.0 && m("verbs_bw_gbs") > 0.0);
        assert!(rep
            .measurements
            .iter()
            .any(|m| m.id.contains("/send/inline/")));
        for m in &rep.measurements {
            let c = m
                .counters
                .as_ref()
                .expect("every verbs measurement carries counters");
            assert!((1..=3).contains(&c.attempts), "{}", m.id);
            if c.counts.llc_load_misses.is_some() {
                assert!(c
                    .per_op
                    .keys()
                    .any(|k| k.starts_with("llc_load_misses_per_")));
            }
        }
    }
}
