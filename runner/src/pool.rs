//! The serving side of `cxlchar pool msg` (`--role follower`, and a fleet's pool pair):
//! it measures nothing, it answers its leader.

use crate::cli::RunArgs;
use anyhow::{anyhow, Context as _, Result};
use bench_core::bench::Options;
use bench_core::effort::Effort;
use bench_cxl::msg::MsgArgs;

/// Serves a leader as `pool msg --role follower` does: on `msg`'s `--pool` window, pinned
/// to the first `--cpu`, until the leader ends. Returns the number of commands served and
/// the pool's name. Also the serving side of a fleet's pool pair
/// ([`crate::fleet::pairs::serve_pool`]).
pub fn serve(run: &RunArgs, msg: &MsgArgs) -> Result<(u64, String)> {
    let opts = Options {
        effort: Effort::of(run.quick),
        allow_write: run.allow_write,
        ..Default::default()
    };
    let (_, spec) = msg.role_and_pool(&opts).map_err(|e| anyhow!(e))?;
    let spec = spec.ok_or_else(|| anyhow!("a follower needs --pool"))?;
    let cpu = run.cpu.as_ref().and_then(|c| c.0.first().copied());
    let n = bench_cxl::msg::run_follower(&spec, cpu, msg.timeout, msg.peer_timeout)
        .with_context(|| format!("follower on {}", spec.source))?;
    Ok((n, spec.source.to_string()))
}
