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
    let opts = Options {
        quick: run.quick,
        allow_write: run.allow_write,
        ..Default::default()
    };
    let (role, spec) = msg.role_and_pool(&opts).map_err(|e| anyhow!(e))?;
    if role == Some(Role::Follower) {
        let spec = spec.expect("role_and_pool: --role needs --pool");
        let cpu = run.cpu.as_ref().and_then(|c| c.0.first().copied());
        let n = bench_cxl::msg::run_follower(&spec, cpu, msg.timeout, msg.peer_timeout)
            .with_context(|| format!("follower on {}", spec.source))?;
        println!(
            "follower: served {n} commands from the leader on {}",
            spec.source
        );
        return Ok(());
    }
    crate::registry::measure_setup(run, &msg)
}
