//! `cxlchar pool ...`: the shared-memory-pool family (bench-cxl).

use crate::cli::{MsgArgs, PoolCommand};
use crate::run::Plan;
use anyhow::{bail, Context as _, Result};
use bench_core::bench::Benchmark;
use bench_cxl::pool::{PoolSource, PoolSpec, Role};

fn plan(b: Box<dyn Benchmark>) -> Plan {
    Plan::single(b)
}

fn pool_spec(m: &MsgArgs, allow_write: bool, quick: bool) -> Result<Option<PoolSpec>> {
    let Some(p) = &m.pool else {
        if m.role.is_some() {
            bail!("--role needs --pool: both sides must name the same pool (e.g. --pool file:/dev/shm/cxlchar-pool or --pool dax:/dev/dax0.0)");
        }
        return Ok(None);
    };
    let source: PoolSource = p.parse()?;
    Ok(Some(PoolSpec {
        source,
        offset: m.offset,
        len: m.len.unwrap_or(if quick { 8 << 20 } else { 64 << 20 }),
        allow_write,
        force: m.force,
    }))
}

/// Runs one pool subcommand.
pub fn run(cmd: PoolCommand) -> Result<()> {
    match cmd {
        PoolCommand::Atomics { run, size } => crate::measure(
            &run,
            plan(Box::new(bench_cxl::atomics::AtomicsBench { size })),
        ),
        PoolCommand::C2c { run } => crate::measure(&run, plan(Box::new(bench_cxl::c2c::C2cBench))),
        PoolCommand::Flush {
            run,
            uc_resource,
            force,
        } => {
            if uc_resource.is_some() && !run.allow_write {
                bail!("--uc-resource maps a device BAR for writing, which destroys its contents; pass --allow-write to accept that");
            }
            crate::measure(
                &run,
                plan(Box::new(bench_cxl::flush::FlushBench {
                    uc_resource,
                    allow_write: run.allow_write,
                    force,
                    sysfs_root: None,
                })),
            )
        }
        PoolCommand::Msg { run, msg } => {
            let role: Option<Role> = msg.role.as_deref().map(str::parse).transpose()?;
            let spec = pool_spec(&msg, run.allow_write, run.quick)?;
            if let Some(s) = &spec {
                if s.offset % bench_core::target::page_size() as u64 != 0 {
                    bail!("--offset {} is not a multiple of the page size", s.offset);
                }
            }
            if role == Some(Role::Follower) {
                let spec = spec.expect("checked above");
                let cpu = match &run.cpu {
                    Some(c) => c.0.first().copied(),
                    None => None,
                };
                let n = bench_cxl::msg::run_follower(&spec, cpu, msg.timeout, msg.peer_timeout)
                    .with_context(|| format!("follower on {}", spec.source))?;
                println!(
                    "follower: served {n} commands from the leader on {}",
                    spec.source
                );
                return Ok(());
            }
            let b = bench_cxl::msg::MsgBench {
                pool: spec,
                role,
                timeout: msg.timeout,
                peer_timeout: msg.peer_timeout,
                ..Default::default()
            };
            let failure = b.failure.clone();
            crate::measure_checked(&run, plan(Box::new(b)), move || {
                match failure.lock().ok().and_then(|f| f.clone()) {
                    Some(e) => bail!("pool messaging failed: {e} (no params file written)"),
                    None => Ok(()),
                }
            })
        }
    }
}
