//! The queue-pair information two endpoints exchange over TCP before connecting an RC
//! pair (`--server` / `--connect HOST`), and the small control messages that follow.
//!
//! Fixed 64-byte big-endian record: magic `CXLV`, wire version, LID, QP number, packet
//! sequence number, rkey, path MTU (enum value), GID, buffer address and length. A peer
//! with another wire version is refused with [`WireError::VersionMismatch`].

use thiserror::Error;

/// Magic at the start of every record.
pub const MAGIC: [u8; 4] = *b"CXLV";
/// Version of this wire format; bump on any change.
pub const WIRE_VERSION: u16 = 1;
/// Encoded size of a [`QpInfo`] (bytes).
pub const QP_INFO_BYTES: usize = 64;

/// What one endpoint tells the other to connect its RC queue pair and write into its
/// buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpInfo {
    /// Port LID (0 on RoCE).
    pub lid: u16,
    /// Queue pair number (24 bits).
    pub qpn: u32,
    /// Initial packet sequence number (24 bits).
    pub psn: u32,
    /// Remote key of the registered buffer.
    pub rkey: u32,
    /// Active path MTU (the `ibv_mtu` enum value, 1..=5).
    pub mtu: u8,
    /// Port GID (RoCE addressing).
    pub gid: [u8; 16],
    /// Virtual address of the buffer the peer may write into.
    pub addr: u64,
    /// Length of that buffer (bytes).
    pub len: u64,
}

/// A record that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// Fewer bytes than a record.
    #[error("truncated QP info: {got} bytes, expected {QP_INFO_BYTES}")]
    Truncated {
        /// Bytes received.
        got: usize,
    },
    /// Not a cxlchar peer.
    #[error("the peer is not cxlchar verbs (bad magic {0:02x?}); is another service listening on that port?")]
    BadMagic([u8; 4]),
    /// Another wire version.
    #[error("the peer speaks wire version {theirs}, this cxlchar speaks {ours}: run the same cxlchar version on both hosts")]
    VersionMismatch {
        /// This cxlchar's wire version.
        ours: u16,
        /// The peer's wire version.
        theirs: u16,
    },
    /// A field out of range.
    #[error("invalid QP info: {0}")]
    Invalid(&'static str),
}

impl QpInfo {
    /// Encodes to the fixed 64-byte record.
    pub fn encode(&self) -> [u8; QP_INFO_BYTES] {
        let mut b = [0u8; QP_INFO_BYTES];
        b[0..4].copy_from_slice(&MAGIC);
        b[4..6].copy_from_slice(&WIRE_VERSION.to_be_bytes());
        b[6..8].copy_from_slice(&self.lid.to_be_bytes());
        b[8..12].copy_from_slice(&self.qpn.to_be_bytes());
        b[12..16].copy_from_slice(&self.psn.to_be_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_be_bytes());
        b[20] = self.mtu;
        b[24..40].copy_from_slice(&self.gid);
        b[40..48].copy_from_slice(&self.addr.to_be_bytes());
        b[48..56].copy_from_slice(&self.len.to_be_bytes());
        b
    }

    /// Decodes and validates a record.
    pub fn decode(b: &[u8]) -> Result<QpInfo, WireError> {
        if b.len() < QP_INFO_BYTES {
            return Err(WireError::Truncated { got: b.len() });
        }
        let magic: [u8; 4] = b[0..4].try_into().expect("4 bytes");
        if magic != MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let theirs = u16::from_be_bytes([b[4], b[5]]);
        if theirs != WIRE_VERSION {
            return Err(WireError::VersionMismatch {
                ours: WIRE_VERSION,
                theirs,
            });
        }
        let u32at = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64at = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let info = QpInfo {
            lid: u16::from_be_bytes([b[6], b[7]]),
            qpn: u32at(8),
            psn: u32at(12),
            rkey: u32at(16),
            mtu: b[20],
            gid: b[24..40].try_into().expect("16 bytes"),
            addr: u64at(40),
            len: u64at(48),
        };
        if info.qpn == 0 || info.qpn > 0x00ff_ffff {
            return Err(WireError::Invalid(
                "QP number is not a 24-bit non-zero value",
            ));
        }
        if info.psn > 0x00ff_ffff {
            return Err(WireError::Invalid("PSN is not a 24-bit value"));
        }
        if !(1..=5).contains(&info.mtu) {
            return Err(WireError::Invalid("path MTU enum is not 1..=5"));
        }
        Ok(info)
    }
}

/// A control command the client sends the server after connecting (8 bytes: op, pad,
/// size u32... see [`Command::encode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Answer `iters` send/recv ping-pongs of `size` bytes.
    Pong {
        /// Message size (bytes).
        size: u32,
        /// Round trips.
        iters: u32,
    },
    /// Receive `count` sends of at most `size` bytes (re-posting receives).
    Sink {
        /// Message size (bytes).
        size: u32,
        /// Messages.
        count: u32,
    },
    /// Finished: close.
    Quit,
}

impl Command {
    /// Encodes to 9 bytes: op, then two big-endian u32.
    pub fn encode(&self) -> [u8; 9] {
        let (op, a, b) = match *self {
            Command::Pong { size, iters } => (1u8, size, iters),
            Command::Sink { size, count } => (2, size, count),
            Command::Quit => (0, 0, 0),
        };
        let mut r = [0u8; 9];
        r[0] = op;
        r[1..5].copy_from_slice(&a.to_be_bytes());
        r[5..9].copy_from_slice(&b.to_be_bytes());
        r
    }

    /// Decodes 9 bytes.
    pub fn decode(b: &[u8; 9]) -> Result<Command, WireError> {
        let a = u32::from_be_bytes(b[1..5].try_into().expect("4 bytes"));
        let n = u32::from_be_bytes(b[5..9].try_into().expect("4 bytes"));
        match b[0] {
            0 => Ok(Command::Quit),
            1 => Ok(Command::Pong { size: a, iters: n }),
            2 => Ok(Command::Sink { size: a, count: n }),
            _ => Err(WireError::Invalid("unknown control command")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> QpInfo {
        QpInfo {
            lid: 7,
            qpn: 0x11,
            psn: 0x123456,
            rkey: 0xdead_beef,
            mtu: 3,
            gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1],
            addr: 0x7f00_1234_5000,
            len: 1 << 21,
        }
    }

    #[test]
    fn round_trip() {
        let i = sample();
        let b = i.encode();
        assert_eq!(b.len(), QP_INFO_BYTES);
        assert_eq!(&b[0..4], b"CXLV");
        assert_eq!(QpInfo::decode(&b), Ok(i));
    }

    #[test]
    fn version_mismatch_is_refused() {
        let mut b = sample().encode();
        b[4..6].copy_from_slice(&(WIRE_VERSION + 1).to_be_bytes());
        let e = QpInfo::decode(&b).unwrap_err();
        assert_eq!(
            e,
            WireError::VersionMismatch {
                ours: WIRE_VERSION,
                theirs: WIRE_VERSION + 1
            }
        );
        assert!(e.to_string().contains("same cxlchar version"));
    }

    #[test]
    fn bad_magic_truncated_and_ranges() {
        let mut b = sample().encode();
        b[0] = b'X';
        assert!(matches!(QpInfo::decode(&b), Err(WireError::BadMagic(_))));
        let b = sample().encode();
        assert_eq!(
            QpInfo::decode(&b[..10]),
            Err(WireError::Truncated { got: 10 })
        );
        let mut bad = sample();
        bad.qpn = 0x0100_0000;
        assert!(matches!(
            QpInfo::decode(&bad.encode()),
            Err(WireError::Invalid(_))
        ));
        let mut bad = sample();
        bad.mtu = 0;
        assert!(matches!(
            QpInfo::decode(&bad.encode()),
            Err(WireError::Invalid(_))
        ));
    }

    #[test]
    fn commands_round_trip() {
        for c in [
            Command::Pong {
                size: 8,
                iters: 1000,
            },
            Command::Sink {
                size: 4096,
                count: 7,
            },
            Command::Quit,
        ] {
            assert_eq!(Command::decode(&c.encode()), Ok(c));
        }
        let mut b = Command::Quit.encode();
        b[0] = 9;
        assert!(Command::decode(&b).is_err());
    }
}
