//! `cxlchar pool msg`: a follower serves its leader and measures nothing; every other
//! role plans and measures like any registry command.

use crate::cli::RunArgs;
use anyhow::{anyhow, Context as _, Result};
use bench_core::bench::Options;
use bench_cxl::msg::MsgArgs;
use bench_cxl::pool::Role;
use clap::{ArgMatches, FromArgMatches};

/// Runs `pool msg`.
pub fn msg(run: &RunArgs, m: &ArgMatches) -> Result<()> {
    let msg = MsgArgs::from_arg_matches(m).map_err(|e| anyhow!(e))?;
    if msg
        .role
        .as_deref()
        .map(str::parse::<Role>)
        .transpose()
        .map_err(|e| anyhow!(e))?
        == Some(Role::Follower)
    {
        let (n, source) = serve(run, &msg)?;
        println!("follower: served {n} commands from the leader on {source}");
        return Ok(());
    }
    crate::registry::measure_setup(run, &msg)
}

/// Serves a leader as `pool msg --role follower` does: on `msg`'s `--pool` window, pinned
/// to the first `--cpu`, until the leader ends. Returns the number of commands served and
/// the pool's name. Also the serving side of a fleet's pool pair
/// ([`crate::fleet::pairs::serve_pool`]).
pub fn serve(run: &RunArgs, msg: &MsgArgs) -> Result<(u64, String)> {
    let opts = Options {
        quick: run.quick,
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
