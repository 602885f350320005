//! `verbs`: the device benchmark the runner schedules (`cxlchar verbs`, `cxlchar all`).

use crate::config::{Mode, Peer, VerbsConfig};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Planned, Report, Setup, Skip, Subject,
};
use bench_core::memory::TargetSpec;
use bench_core::plan::Cost;

/// Post breakdown, latency and bandwidth on one RDMA device.
#[derive(Debug, Clone, Default)]
pub struct VerbsBench {
    /// What to run and where.
    pub config: VerbsConfig,
}

impl VerbsBench {
    /// The device it measures, as shown in `target` fields.
    pub fn target(&self) -> String {
        let dev = self.config.device.as_deref().unwrap_or("auto");
        match &self.config.peer {
            crate::config::Peer::Loopback => format!("rdma:{dev}/loopback"),
            crate::config::Peer::Server { port } => format!("rdma:{dev}/server:{port}"),
            crate::config::Peer::Connect { host, port } => format!("rdma:{dev}/{host}:{port}"),
        }
    }
}

impl Benchmark for VerbsBench {
    fn name(&self) -> &'static str {
        "verbs"
    }

    fn subject(&self) -> Subject {
        Subject::Device {
            target: self.target(),
        }
    }

    fn cost(&self, ctx: &Context, _target: Option<&bench_core::memory::TargetSpec>) -> Cost {
        // A verbs operation costs a few microseconds; a link moves about 12.5 GB/s
        // (100 Gb/s).
        let v = &ctx.effort.verbs;
        let op = 3e-6;
        let link = 12.5e9;
        let mut c = Cost::new();
        c.add(
            "post/poll breakdown",
            v.post_sizes.len(),
            v.post_rounds as f64 * 2.0 * op,
        );
        c.add(
            "injection, progress, full queue",
            1,
            (v.inject_posts + 10 * v.progress_rounds + v.full_queue_attempts) as f64 * op,
        );
        c.add(
            "message rate",
            1,
            (v.message_rate.0 * v.message_rate.1) as f64 * op / 4.0,
        );
        for &size in v.sweep_sizes {
            let iters = if size >= 256 * 1024 {
                v.latency_iters.1
            } else {
                v.latency_iters.0
            };
            let lat = iters as f64 * 2.0 * (op + size as f64 / link);
            let (bytes, _, reps) = v.bandwidth_stream;
            let bw = reps as f64 * bytes as f64 / link;
            c.add(format!("latency and bandwidth at {size} B"), 1, lat + bw);
        }
        c
    }

    fn run(&self, ctx: &Context, _input: Input<'_>) -> Result<Report, NotRun> {
        self.config
            .validate()
            .map_err(|e| Skip::new(e.to_string()))?;
        Ok(run_impl(self, ctx)?)
    }
}

/// How many RDMA devices `ROOT/class/infiniband` lists (a missing directory lists none).
fn rdma_devices_listed(root: &std::path::Path) -> std::io::Result<usize> {
    match std::fs::read_dir(root.join("class/infiniband")) {
        Ok(d) => Ok(d.take(4096).count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

#[cfg(feature = "verbs")]
fn run_impl(b: &VerbsBench, ctx: &Context) -> Result<Report, Skip> {
    crate::rdma::run(&b.config, &b.target(), ctx).map_err(|e| Skip::new(e.to_string()))
}

#[cfg(not(feature = "verbs"))]
fn run_impl(_b: &VerbsBench, _ctx: &Context) -> Result<Report, Skip> {
    Err(Skip::new(crate::NOT_BUILT))
}

/// RDMA verbs (seed 004): post/progress breakdown, ping-pong latency, streaming
/// bandwidth. Loopback pair in one process by default; --server / --connect HOST for
/// two processes or hosts.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("peer").args(["server", "connect"])))]
pub struct VerbsArgs {
    /// What to measure (default: all three).
    #[arg(value_enum)]
    pub what: Option<VerbsWhat>,
    /// RDMA device (see `ibv_devices`); default: the first with an active port.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// GID index (RoCE); default: the first IPv4-mapped GID of the port.
    #[arg(long, value_name = "N")]
    pub gid_index: Option<u8>,
    /// Wait for one `--connect` client and serve its measurements (the run fails when the
    /// client leaves before it ends the run).
    #[arg(long, conflicts_with = "connect")]
    pub server: bool,
    /// Measure against a `--server` on HOST.
    #[arg(long, value_name = "HOST")]
    pub connect: Option<String>,
    /// TCP port of the QP-info exchange; needs --server or --connect (the loopback pair
    /// exchanges nothing over TCP).
    #[arg(long, requires = "peer", default_value_t = crate::config::DEFAULT_PORT, value_parser = clap::value_parser!(u16).range(1..))]
    pub port: u16,
    /// Timeout of every wait: TCP connect (a --connect client retries a server that is not
    /// listening yet until then) and exchange, each completion.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = bench_core::units::parse_duration)]
    pub timeout: std::time::Duration,
}

/// `cxlchar verbs` measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VerbsWhat {
    /// Post breakdown, poll costs, busy post, injection overhead, message rate.
    Post,
    /// Send/recv ping-pong latency over 8 B .. 1 MiB and its Hockney fit.
    Lat,
    /// Streaming RDMA-write bandwidth over 8 B .. 1 MiB.
    Bw,
}

impl VerbsArgs {
    /// The configuration of the options (buffers on the first `--target`, else `anon`),
    /// validated: bad input is an error here.
    pub fn config(&self, opts: &Options) -> Result<VerbsConfig, crate::config::ConfigError> {
        let config = VerbsConfig {
            mode: match self.what {
                None => Mode::All,
                Some(VerbsWhat::Post) => Mode::Post,
                Some(VerbsWhat::Lat) => Mode::Lat,
                Some(VerbsWhat::Bw) => Mode::Bw,
            },
            device: self.device.clone(),
            gid_index: self.gid_index,
            peer: match (&self.connect, self.server) {
                (Some(host), _) => Peer::Connect {
                    host: host.clone(),
                    port: self.port,
                },
                (None, true) => Peer::Server { port: self.port },
                (None, false) => Peer::Loopback,
            },
            target: opts.targets.first().cloned().unwrap_or(TargetSpec::Anon),
            timeout: self.timeout,
        };
        config.validate()?;
        Ok(config)
    }
}

impl Setup for VerbsArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(VerbsBench {
            config: self.config(opts)?,
        }))
    }

    /// In `all`: loopback on the first device with an active port; skipped with the
    /// reason where the machine's sysfs (or `--sysfs ROOT`) lists no RDMA device, so the
    /// plan prices nothing for it; without the feature, skipped with [`crate::NOT_BUILT`].
    fn plan_all(&self, opts: &Options) -> Result<Planned, BoxError> {
        if !crate::built_with_verbs() {
            return Ok(Planned::skip("verbs", crate::NOT_BUILT));
        }
        let root = opts
            .sysfs
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from("/sys"));
        match rdma_devices_listed(&root) {
            Ok(0) => Ok(Planned::skip(
                "verbs",
                format!(
                    "no RDMA device: {} lists none (load an RDMA driver, e.g. `rdma link add rxe0 type rxe netdev eth0` for soft-RoCE)",
                    root.join("class/infiniband").display()
                ),
            )),
            // Listed, or not readable here: the run opens the device and says why not.
            _ => Ok(Planned::one(VerbsBench::default())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Peer;

    #[test]
    fn all_skips_verbs_at_plan_time_where_sysfs_lists_no_device() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(rdma_devices_listed(dir.path()).unwrap(), 0);
        let ib = dir.path().join("class/infiniband");
        std::fs::create_dir_all(&ib).unwrap();
        assert_eq!(rdma_devices_listed(dir.path()).unwrap(), 0);
        let opts = Options {
            sysfs: Some(dir.path().to_path_buf()),
            ..Options::default()
        };
        let args = VerbsArgs {
            what: None,
            device: None,
            gid_index: None,
            server: false,
            connect: None,
            port: crate::config::DEFAULT_PORT,
            timeout: std::time::Duration::from_secs(10),
        };
        let planned = args.plan_all(&opts).unwrap();
        let why = planned.skipped.first().map(|s| s.reason.clone());
        if crate::built_with_verbs() {
            assert!(planned.benchmarks.is_empty());
            assert!(why.unwrap().contains("class/infiniband lists none"));
            std::fs::create_dir(ib.join("rxe0")).unwrap();
            assert_eq!(args.plan_all(&opts).unwrap().benchmarks.len(), 1);
        } else {
            assert_eq!(why.as_deref(), Some(crate::NOT_BUILT));
        }
    }

    #[test]
    fn targets_name_device_and_peer() {
        let mut b = VerbsBench::default();
        assert_eq!(b.target(), "rdma:auto/loopback");
        b.config.device = Some("rxe0".into());
        b.config.peer = Peer::Connect {
            host: "192.0.2.2".into(),
            port: 18516,
        };
        assert_eq!(b.target(), "rdma:rxe0/192.0.2.2:18516");
    }

    fn ctx() -> Context {
        Context::quick_local()
    }

    #[test]
    fn bad_config_is_a_skip_with_the_reason() {
        let mut b = VerbsBench::default();
        b.config.peer = Peer::Server { port: 0 };
        let s = b.run(&ctx(), Input::Device).unwrap_err();
        assert!(
            s.skip_reason().unwrap().contains("--port"),
            "{}",
            s.skip_reason().unwrap()
        );
    }

    /// Without the feature: the NOT_BUILT reason. With it, on a machine without RDMA (CI):
    /// a reason naming RDMA. Never a panic or a hang.
    #[test]
    fn no_device_or_no_feature_is_a_skip_with_the_reason() {
        let b = VerbsBench::default();
        match b.run(&ctx(), Input::Device) {
            Err(s) if !crate::built_with_verbs() => {
                assert_eq!(s.skip_reason().unwrap(), crate::NOT_BUILT)
            }
            Err(s) => assert!(
                s.skip_reason().unwrap().contains("RDMA")
                    || s.skip_reason().unwrap().contains("port"),
                "{}",
                s.skip_reason().unwrap()
            ),
            Ok(rep) => assert!(crate::built_with_verbs() && !rep.params.is_empty()),
        }
    }
}
