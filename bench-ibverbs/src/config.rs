//! What `cxlchar verbs` runs, validated before anything opens a device.

use bench_core::memory::TargetSpec;
use std::time::Duration;
use thiserror::Error;

/// Default TCP port of the QP-info exchange (perftest uses 18515; this avoids it).
pub const DEFAULT_PORT: u16 = 18516;

/// Which measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Post/progress breakdown, busy post, injection overhead, message rate.
    Post,
    /// Ping-pong latency over sizes, Hockney fit.
    Lat,
    /// Streaming RDMA-write bandwidth over sizes.
    Bw,
    /// All three.
    All,
}

impl Mode {
    /// Includes the post breakdown.
    pub fn post(self) -> bool {
        matches!(self, Mode::Post | Mode::All)
    }
    /// Includes latency.
    pub fn lat(self) -> bool {
        matches!(self, Mode::Lat | Mode::All)
    }
    /// Includes bandwidth.
    pub fn bw(self) -> bool {
        matches!(self, Mode::Bw | Mode::All)
    }
}

/// Where the other end of the RC queue pair is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// Both queue pairs in this process, connected to each other on one port.
    Loopback,
    /// Wait for a `--connect` client on this TCP port, then serve its commands.
    Server {
        /// TCP port.
        port: u16,
    },
    /// Connect to a `--server` on this host and port, and measure.
    Connect {
        /// Host name or address.
        host: String,
        /// TCP port.
        port: u16,
    },
}

/// The verbs benchmark's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbsConfig {
    /// Which measurements.
    pub mode: Mode,
    /// RDMA device name (`rxe0`, `mlx5_0`); `None`: the first with an active port.
    pub device: Option<String>,
    /// GID index; `None`: the first IPv4-mapped GID of the port, else index 0.
    pub gid_index: Option<u8>,
    /// Other end.
    pub peer: Peer,
    /// Memory target the buffers are allocated on and registered (`anon`, `node:1`,
    /// `dax:...`).
    pub target: TargetSpec,
    /// Timeout of every wait (TCP connect and exchange, each completion).
    pub timeout: Duration,
}

impl Default for VerbsConfig {
    fn default() -> Self {
        VerbsConfig {
            mode: Mode::All,
            device: None,
            gid_index: None,
            peer: Peer::Loopback,
            target: TargetSpec::Anon,
            timeout: Duration::from_secs(10),
        }
    }
}

/// The longest `--timeout` a verbs run takes (a QP exchange or a peer waited for).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// A configuration that cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// Empty or odd device name.
    #[error("invalid RDMA device name {0:?}: use a name from `ibv_devices` (e.g. rxe0, mlx5_0)")]
    DeviceName(String),
    /// Empty host.
    #[error("--connect needs a host name or address")]
    EmptyHost,
    /// Port 0.
    #[error("--port must be 1..=65535")]
    Port,
    /// Zero or huge timeout.
    #[error("timeout must be between 1 ms and 1 hour, got {0:?}")]
    Timeout(Duration),
}

impl VerbsConfig {
    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(d) = &self.device {
            if d.is_empty()
                || d.len() > 64
                || !d
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
            {
                return Err(ConfigError::DeviceName(d.clone()));
            }
        }
        match &self.peer {
            Peer::Loopback => {}
            Peer::Server { port } => {
                if *port == 0 {
                    return Err(ConfigError::Port);
                }
            }
            Peer::Connect { host, port } => {
                if host.trim().is_empty() {
                    return Err(ConfigError::EmptyHost);
                }
                if *port == 0 {
                    return Err(ConfigError::Port);
                }
            }
        }
        if self.timeout < Duration::from_millis(1) || self.timeout > MAX_TIMEOUT {
            return Err(ConfigError::Timeout(self.timeout));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        assert_eq!(VerbsConfig::default().validate(), Ok(()));
    }

    #[test]
    fn rejects_bad_input() {
        let c = VerbsConfig {
            device: Some("rxe0; rm".into()),
            ..Default::default()
        };
        assert!(matches!(c.validate(), Err(ConfigError::DeviceName(_))));
        let c = VerbsConfig {
            device: Some(String::new()),
            ..Default::default()
        };
        assert!(c.validate().is_err());
        let c = VerbsConfig {
            peer: Peer::Connect {
                host: " ".into(),
                port: 1,
            },
            ..Default::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::EmptyHost));
        let c = VerbsConfig {
            peer: Peer::Server { port: 0 },
            ..Default::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::Port));
        let c = VerbsConfig {
            timeout: Duration::ZERO,
            ..Default::default()
        };
        assert!(matches!(c.validate(), Err(ConfigError::Timeout(_))));
        let c = VerbsConfig {
            device: Some("mlx5_0".into()),
            peer: Peer::Connect {
                host: "192.0.2.2".into(),
                port: DEFAULT_PORT,
            },
            ..Default::default()
        };
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn modes() {
        assert!(Mode::All.post() && Mode::All.lat() && Mode::All.bw());
        assert!(Mode::Post.post() && !Mode::Post.lat() && !Mode::Post.bw());
        assert!(Mode::Lat.lat() && !Mode::Lat.bw());
        assert!(Mode::Bw.bw() && !Mode::Bw.post());
    }
}
