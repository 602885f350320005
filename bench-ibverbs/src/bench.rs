//! `verbs`: the device benchmark the runner schedules (`cxlchar verbs`, `cxlchar all`).

use crate::config::VerbsConfig;
use bench_core::bench::{Context, DeviceBenchmark, Report, Skip};

/// Post breakdown, latency and bandwidth on one RDMA device.
#[derive(Debug, Clone, Default)]
pub struct VerbsBench {
    /// What to run and where.
    pub config: VerbsConfig,
}

impl DeviceBenchmark for VerbsBench {
    fn name(&self) -> &'static str {
        "verbs"
    }

    fn target(&self) -> String {
        let dev = self.config.device.as_deref().unwrap_or("auto");
        match &self.config.peer {
            crate::config::Peer::Loopback => format!("rdma:{dev}/loopback"),
            crate::config::Peer::Server { port } => format!("rdma:{dev}/server:{port}"),
            crate::config::Peer::Connect { host, port } => format!("rdma:{dev}/{host}:{port}"),
        }
    }

    fn run(&self, ctx: &Context) -> Result<Report, Skip> {
        self.config
            .validate()
            .map_err(|e| Skip::new(e.to_string()))?;
        run_impl(self, ctx)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Peer;

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
        let s = b.run(&ctx()).unwrap_err();
        assert!(s.reason.contains("--port"), "{}", s.reason);
    }

    /// Without the feature: the NOT_BUILT reason. With it, on a machine without RDMA (CI):
    /// a reason naming RDMA. Never a panic or a hang.
    #[test]
    fn no_device_or_no_feature_is_a_skip_with_the_reason() {
        let b = VerbsBench::default();
        match b.run(&ctx()) {
            Err(s) if !crate::built_with_verbs() => assert_eq!(s.reason, crate::NOT_BUILT),
            Err(s) => assert!(
                s.reason.contains("RDMA") || s.reason.contains("port"),
                "{}",
                s.reason
            ),
            Ok(rep) => assert!(crate::built_with_verbs() && !rep.params.is_empty()),
        }
    }
}
