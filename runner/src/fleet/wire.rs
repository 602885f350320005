//! The rendezvous protocol between the ranks and rank 0's coordinator: one TCP
//! connection per rank, one JSON message per line, heartbeats both ways.
//!
//! Messages are externally tagged (`{"measured": {...}}`, `"heartbeat"`): an internally
//! tagged enum would buffer a params.json through serde's generic content, which loses
//! its maps with number keys.
//!
//! A rank connects, sends [`ToCoordinator::Hello`] (job key, rank, cxlchar version, host,
//! machine, what it can pair with) and gets [`ToRank::Welcome`] or
//! [`ToRank::Refused`]. From then on the coordinator drives: `Measure`, the pair
//! commands, and finally `Done` (ok or the reason the job failed). Both sides send a
//! heartbeat every [`heartbeat`] (a sixth of the fleet timeout: 10 s at the default
//! 60 s, so the waits of a measuring host's own threads and of the other ranks on it wake
//! rarely); a side that hears nothing for the fleet timeout
//! declares the other lost. A dead process closes its socket at once (the kernel does),
//! so a rank that dies is noticed in well under the timeout; a host that vanishes is
//! noticed by the missing heartbeats.

use super::pairs::Candidates;
use anyhow::{anyhow, bail, Context, Result};
use bench_core::params::ParamsFile;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often each side sends a heartbeat, for a fleet timeout `timeout`: a sixth of it,
/// between 100 ms and 10 s. Rare on purpose: every heartbeat wakes a thread of a rank
/// that may be measuring (a context switch on a measured CPU when the rank has no other).
pub fn heartbeat(timeout: Duration) -> Duration {
    (timeout / 6).clamp(Duration::from_millis(100), Duration::from_secs(10))
}

/// Largest message: a params.json of a full run is a few MiB.
pub const MAX_MESSAGE_BYTES: u64 = 256 << 20;

/// What a rank sends to the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToCoordinator {
    /// The first message.
    Hello(Box<Hello>),
    /// Alive.
    Heartbeat,
    /// This rank's host measured (its params), or could not (why).
    Measured {
        /// The params, or the error.
        result: Result<Box<ParamsFile>, String>,
    },
    /// This rank serves its side of a pair now (a verbs server is listening).
    Serving,
    /// This rank's side of a pair ended: the client's params, `None` for the server.
    PairDone {
        /// The client's params, `None` for the serving side, or the error.
        result: Result<Option<Box<ParamsFile>>, String>,
    },
}

/// A rank's introduction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    /// The launcher and job (`slurm:42.0`): a rank of another job is refused.
    pub job_key: String,
    /// Its rank.
    pub rank: usize,
    /// The number of ranks it was told.
    pub size: usize,
    /// Its cxlchar version.
    pub version: String,
    /// Its command line after the program name.
    pub command_line: Vec<String>,
    /// Its host name.
    pub host: String,
    /// Its machine (the kernel's boot id): hosts on one machine measure in turn.
    pub machine: String,
    /// What it can pair with.
    pub candidates: Candidates,
}

/// What the coordinator sends to a rank.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ToRank {
    /// The hello was accepted: this rank is part of the job (the first message).
    Admitted,
    /// Accepted; `measuring`: this rank measures its host (else it waits).
    Welcome {
        /// Whether this rank measures.
        measuring: bool,
        /// The host whose measuring rank this is, or whose rank waits.
        host: String,
    },
    /// Not accepted, and why.
    Refused {
        /// Why.
        reason: String,
        /// The rank knocked at another job's rendezvous (it tries the next port) rather
        /// than being refused by its own job's rank 0 (it stops).
        other_job: bool,
    },
    /// Alive.
    Heartbeat,
    /// Measure this host now.
    Measure,
    /// Serve a verbs pair (`cxlchar verbs --server --port`).
    ServeVerbs {
        /// TCP port of the QP exchange.
        port: u16,
        /// The host that will connect.
        peer: String,
    },
    /// Measure a verbs pair against `address:port`.
    MeasureVerbs {
        /// The serving host's address.
        address: String,
        /// Its port.
        port: u16,
        /// The serving host.
        peer: String,
    },
    /// Serve a pool pair (pool msg follower) on this host's `spec`.
    ServePool {
        /// This host's local name of the pool.
        spec: String,
        /// Window offset.
        offset: u64,
        /// Window length.
        len: u64,
        /// The host that measures.
        peer: String,
    },
    /// Measure a pool pair (pool msg leader) on this host's `spec`.
    MeasurePool {
        /// This host's local name of the pool.
        spec: String,
        /// Window offset.
        offset: u64,
        /// Window length.
        len: u64,
        /// The host that serves.
        peer: String,
    },
    /// The job is over: `ok`, or the reason it failed.
    Done {
        /// Whether the fleet file was written.
        ok: bool,
        /// What happened.
        message: String,
    },
}

/// The sending half of a connection (cloneable: the heartbeat thread and the owner share
/// it).
#[derive(Debug, Clone)]
pub struct Sender {
    stream: Arc<Mutex<TcpStream>>,
}

impl Sender {
    /// Wraps a connected stream (a clone of it: reading goes on elsewhere).
    pub fn new(stream: &TcpStream) -> Result<Sender> {
        let s = stream.try_clone().context("cloning the connection")?;
        s.set_write_timeout(Some(Duration::from_secs(30)))
            .context("setting the write timeout")?;
        Ok(Sender {
            stream: Arc::new(Mutex::new(s)),
        })
    }

    /// Sends one message as one line.
    pub fn send<T: Serialize>(&self, msg: &T) -> Result<()> {
        let mut line = serde_json::to_vec(msg).context("encoding a message")?;
        line.push(b'\n');
        let mut s = self
            .stream
            .lock()
            .map_err(|_| anyhow!("connection lock poisoned"))?;
        s.write_all(&line).context("sending")?;
        s.flush().context("sending")
    }

    /// Closes both directions (the peer's reader sees the end at once).
    pub fn shutdown(&self) {
        if let Ok(s) = self.stream.lock() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Reads one message (one line of at most [`MAX_MESSAGE_BYTES`]); `Ok(None)` at the end
/// of the stream.
pub fn receive<T: for<'de> Deserialize<'de>, R: BufRead>(r: &mut R) -> Result<Option<T>> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_MESSAGE_BYTES + 1)
        .read_until(b'\n', &mut line)
        .context("receiving")?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        if n as u64 > MAX_MESSAGE_BYTES {
            bail!("a message longer than {} MiB", MAX_MESSAGE_BYTES >> 20);
        }
        bail!("the connection ended in the middle of a message");
    }
    let msg = serde_json::from_slice(&line).with_context(|| {
        format!(
            "a message that is not cxlchar's fleet protocol: {}",
            String::from_utf8_lossy(&line[..line.len().min(120)]).trim_end()
        )
    })?;
    Ok(Some(msg))
}

/// A buffered reader of a connection.
pub fn reader(stream: &TcpStream) -> Result<BufReader<TcpStream>> {
    Ok(BufReader::new(
        stream.try_clone().context("cloning the connection")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_are_a_sixth_of_the_timeout_within_bounds() {
        assert_eq!(heartbeat(Duration::from_secs(60)), Duration::from_secs(10));
        assert_eq!(
            heartbeat(Duration::from_secs(3)),
            Duration::from_millis(500)
        );
        assert_eq!(
            heartbeat(Duration::from_millis(10)),
            Duration::from_millis(100)
        );
        assert_eq!(
            heartbeat(Duration::from_secs(3600)),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn messages_round_trip_one_per_line() {
        let msgs = vec![
            ToRank::Welcome {
                measuring: true,
                host: "a".into(),
            },
            ToRank::Heartbeat,
            ToRank::MeasureVerbs {
                address: "192.0.2.1".into(),
                port: 7,
                peer: "b".into(),
            },
            ToRank::Done {
                ok: false,
                message: "rank 1 died".into(),
            },
        ];
        let mut buf = Vec::new();
        for m in &msgs {
            buf.extend(serde_json::to_vec(m).unwrap());
            buf.push(b'\n');
        }
        let mut r = std::io::Cursor::new(buf);
        for m in &msgs {
            assert_eq!(receive::<ToRank, _>(&mut r).unwrap().as_ref(), Some(m));
        }
        assert!(receive::<ToRank, _>(&mut r).unwrap().is_none());
    }

    #[test]
    fn a_cut_or_foreign_line_is_an_error() {
        let mut r = std::io::Cursor::new(b"{\"msg\":\"heartbeat\"".to_vec());
        let e = receive::<ToRank, _>(&mut r).unwrap_err();
        assert!(e.to_string().contains("middle"), "{e}");
        let mut r = std::io::Cursor::new(b"GET / HTTP/1.1\n".to_vec());
        let e = receive::<ToRank, _>(&mut r).unwrap_err();
        assert!(e.to_string().contains("fleet protocol"), "{e:#}");
    }
}
