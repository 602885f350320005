//! The command-line options of `pool msg` (and the pool options `pool msg-scale` shares),
//! and how they become a [`MsgBench`].

use super::*;

/// Where the pool is: the options `pool msg` and `pool msg-scale` share.
// The field docs are the commands' --help text: `<bdf>` there is a placeholder, not HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Debug, Clone, clap::Args)]
pub struct PoolArgs {
    /// The pool: file:PATH (default: a fresh file in /dev/shm), dax:/dev/daxX.Y,
    /// cxl:regionN or cxl:memN (the CXL region's devdax device) or a PCI
    /// BAR pci:DOMAIN:BUS:DEV.FN/BAR as `cxlchar pcie list` shows it (or its resource file,
    /// pci:/sys/bus/pci/devices/<bdf>/resourceN). Any --pool needs --allow-write (a bare
    /// PATH means file:PATH); a window holding data that is not zero and not a pool header
    /// is refused unless --force.
    #[arg(long, value_name = "SPEC")]
    pub pool: Option<String>,
    /// Byte offset of the window in the pool (a multiple of the page size); needs --pool.
    #[arg(long, value_name = "OFFSET", default_value = "0", requires = "pool", value_parser = bench_core::units::parse_offset)]
    pub offset: u64,
    /// Window length (default 64 MiB; quick 8 MiB); needs --pool (cxlchar's own pool file
    /// is sized for the run).
    #[arg(long, value_name = "SIZE", requires = "pool", value_parser = bench_core::units::parse_positive_size)]
    pub len: Option<usize>,
    /// Overwrite a window holding foreign data, or take over one in use; needs --pool.
    #[arg(long, requires = "pool")]
    pub force: bool,
}

impl PoolArgs {
    /// The pool window these options name, checked (the offset is a multiple of the page
    /// size); `None` without `--pool` (the caller creates a scratch file).
    pub fn spec(&self, opts: &Options) -> Result<Option<PoolSpec>, BoxError> {
        let Some(p) = &self.pool else {
            return Ok(None);
        };
        let spec = PoolSpec {
            source: p.parse()?,
            offset: self.offset,
            len: self.len.unwrap_or(opts.effort.pool.msg_window_bytes),
            allow_write: opts.allow_write,
            force: self.force,
            scratch: false,
        };
        if !spec
            .offset
            .is_multiple_of(bench_core::memory::page_size() as u64)
        {
            return Err(format!(
                "--offset {} is not a multiple of the page size",
                spec.offset
            )
            .into());
        }
        Ok(Some(spec))
    }
}

/// Flag and SPSC-ring messaging between two processes (or two hosts) through a pool.
#[derive(Debug, Clone, clap::Args)]
pub struct MsgArgs {
    /// The pool window.
    #[command(flatten)]
    pub window: PoolArgs,
    /// Two-sided run: leader (measures, writes results) or follower (answers). Start
    /// both with the same --pool, on one host or on two hosts mapping the same memory.
    /// Without --role, a follower process is forked on this machine.
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// How long to wait for the peer to show up (e.g. 30s, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = bench_core::units::parse_duration)]
    pub timeout: Duration,
    /// How long the peer may stay silent mid-run before the run fails.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = bench_core::units::parse_duration)]
    pub peer_timeout: Duration,
}

impl MsgArgs {
    /// The role and the pool window of these options, checked (`--role` needs `--pool`,
    /// the offset is a multiple of the page size).
    pub fn role_and_pool(
        &self,
        opts: &Options,
    ) -> Result<(Option<Role>, Option<PoolSpec>), BoxError> {
        let role: Option<Role> = self.role.as_deref().map(str::parse).transpose()?;
        if self.window.pool.is_none() && self.role.is_some() {
            return Err("--role needs --pool: both sides must name the same pool (e.g. --pool file:/dev/shm/cxlchar-pool or --pool dax:/dev/dax0.0)".into());
        }
        Ok((role, self.window.spec(opts)?))
    }
}

impl Setup for MsgArgs {
    /// The leader's (or the forking) benchmark; a follower does not measure and is run by
    /// the runner through [`run_follower`].
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        let (role, pool) = self.role_and_pool(opts)?;
        Ok(Planned::one(MsgBench {
            pool,
            role,
            timeout: self.timeout,
            peer_timeout: self.peer_timeout,
        }))
    }
}
