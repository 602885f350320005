//! Typed errors of each verbs operation (like rust-ibverbs): each says what failed and,
//! where something can be done, what to do.

use crate::wire::WireError;
use std::time::Duration;
use thiserror::Error;

/// A failed verbs operation.
#[derive(Debug, Error)]
pub enum VerbsError {
    /// `ibv_get_device_list` failed (no RDMA subsystem / no device).
    #[error("no RDMA device: ibv_get_device_list failed: {0} (load an RDMA driver, e.g. `rdma link add rxe0 type rxe netdev eth0` for soft-RoCE)")]
    NoDevices(std::io::Error),
    /// The list is empty.
    #[error("no RDMA device found (ibv_devices lists none; load an RDMA driver or soft-RoCE: `rdma link add rxe0 type rxe netdev eth0`)")]
    EmptyDeviceList,
    /// `--device` names no device.
    #[error("RDMA device {name:?} not found; devices: {available}")]
    DeviceNotFound {
        /// Asked for.
        name: String,
        /// What exists.
        available: String,
    },
    /// No port of the device (or of any device) is active.
    #[error("no active port on {0} (check `ibv_devinfo`: state must be PORT_ACTIVE; for soft-RoCE the netdev must be up)")]
    PortDown(String),
    /// A verbs call failed with errno.
    #[error("{op} failed: {source}")]
    Call {
        /// The verbs function.
        op: &'static str,
        /// errno.
        source: std::io::Error,
    },
    /// `ibv_reg_mr` refused, typically for the locked-memory limit.
    #[error("ibv_reg_mr of {bytes} bytes failed: {source}; registration pins memory: raise the locked-memory limit (`ulimit -l unlimited`, or `* - memlock unlimited` in /etc/security/limits.conf, or LimitMEMLOCK=infinity for a service)")]
    RegMr {
        /// Bytes asked.
        bytes: usize,
        /// errno.
        source: std::io::Error,
    },
    /// A work completion with an error status.
    #[error("work completion error: status {status} ({name}), vendor error {vendor_err:#x}")]
    Completion {
        /// `ibv_wc_status`.
        status: u32,
        /// Its text, from `ibv_wc_status_str`.
        name: String,
        /// Vendor syndrome.
        vendor_err: u32,
    },
    /// No completion in time.
    #[error("no completion within {0:?} ({1}): is the peer alive and the port up?")]
    CompletionTimeout(Duration, &'static str),
    /// TCP exchange failed.
    #[error("QP-info exchange with {peer} failed: {source} (timeout {timeout:?}; is `cxlchar verbs --server` running there and the port open?)")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Exchange {
        /// Host:port.
        peer: String,
        source: std::io::Error,
        timeout: Duration,
    },
    /// The peer sent something we cannot use.
    #[error("peer {peer}: {source}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Wire {
        /// Host:port.
        peer: String,
        source: WireError,
    },
    /// The `--connect` client closed the command channel before it ended the run.
    #[error("client {peer} left after {served} commands without ending the run: its measurement failed there (its own output says why)")]
    ClientLeft {
        /// Host:port.
        peer: String,
        /// Commands served before it left.
        served: u64,
    },
    /// Memory target allocation failed.
    #[error("cannot allocate the buffers: {0}")]
    Region(String),
}

impl VerbsError {
    /// An errno-style failure of `op` from the current `errno`.
    pub fn last(op: &'static str) -> VerbsError {
        VerbsError::Call {
            op,
            source: std::io::Error::last_os_error(),
        }
    }

    /// A failure of `op` that returned a positive errno value.
    pub fn code(op: &'static str, rc: i32) -> VerbsError {
        VerbsError::Call {
            op,
            source: std::io::Error::from_raw_os_error(rc.abs()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memlock_error_says_how_to_raise_it() {
        let e = VerbsError::RegMr {
            bytes: 4096,
            source: std::io::Error::from_raw_os_error(libc::ENOMEM),
        };
        let s = e.to_string();
        assert!(
            s.contains("ulimit -l unlimited") && s.contains("limits.conf"),
            "{s}"
        );
    }

    #[test]
    fn code_keeps_errno() {
        match VerbsError::code("ibv_modify_qp", -libc::EINVAL) {
            VerbsError::Call { op, source } => {
                assert_eq!(op, "ibv_modify_qp");
                assert_eq!(source.raw_os_error(), Some(libc::EINVAL));
            }
            e => panic!("{e}"),
        }
    }
}
