//! The rendezvous protocol between the ranks and rank 0's coordinator: one TCP
//! connection per rank, one JSON message per line, heartbeats both ways.
//!
//! Messages are externally tagged (`{"measured": {...}}`, `"heartbeat"`): an internally
//! tagged enum would buffer a params.json through serde's generic content, which loses
//! its maps with number keys.
//!
//! A rank connects, sends [`ToCoordinator::Hello`] (job key, rank, cxlchar version, host,
//! machine, what it can pair with, a nonce and its proof of the job) and gets
//! [`ToRank::Admitted`] or [`ToRank::Refused`], each with rank 0's proof
//! ([`super::auth`]); an answer without a good proof is a stranger's, and the rank looks
//! further. From then on the coordinator drives: `Measure`, the pair commands, and
//! finally `Done` (ok or the reason the job failed). Both sides send a heartbeat every
//! [`heartbeat`] (a sixth of the fleet timeout: 10 s at the default 60 s, so the waits of
//! a measuring host's own threads and of the other ranks on it wake rarely); a side that
//! hears nothing for the fleet timeout declares the other lost. A dead process closes its
//! socket at once (the kernel does), so a rank that dies is noticed in well under the
//! timeout; a host that vanishes is noticed by the missing heartbeats.
//!
//! Nothing rank 0 sends names a file, a path, an offset or a size: a pool pair names the
//! pool's identity, which each rank looks up among the pools it found itself, and takes
//! the window from its own command line; a verbs pair names a slot, from which both sides
//! compute the port ([`super::pairs::verbs_port`]). Every line has a bound: a first
//! message [`MAX_FIRST_MESSAGE_BYTES`] (read before the peer is known), rank 0's messages
//! [`MAX_TO_RANK_BYTES`], a rank's [`MAX_MESSAGE_BYTES`] (its params).

use super::pairs::Candidates;
use anyhow::{anyhow, bail, Context, Result};
use bench_core::params::ParamsFile;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often each side sends a heartbeat, for a fleet timeout `timeout`: a sixth of it,
/// between 100 ms and 10 s. Rare on purpose: every heartbeat wakes a thread of a rank
/// that may be measuring (a context switch on a measured CPU when the rank has no other).
pub fn heartbeat(timeout: Duration) -> Duration {
    (timeout / 6).clamp(Duration::from_millis(100), Duration::from_secs(10))
}

/// Largest message of a rank: a params.json of a full run is a few MiB.
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Largest message of rank 0 to a rank: commands and the job's last word, no params.
pub const MAX_TO_RANK_BYTES: usize = 1 << 20;

/// Largest first message on a connection (a hello, or rank 0's answer to it): read from
/// a peer not known yet, so a few KiB, not a params.json.
pub const MAX_FIRST_MESSAGE_BYTES: usize = 16 << 10;

/// How long the first message of a connection may take, for a fleet timeout `timeout`:
/// rank 0 answers a hello at once, and a rank sends its hello as soon as it connects.
pub fn first_message_time(timeout: Duration) -> Duration {
    timeout.clamp(Duration::from_secs(1), Duration::from_secs(10))
}

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
    /// A fresh random value: rank 0's answer proves the job's key over it.
    pub nonce: String,
    /// This rank's proof of the job's key ([`super::auth::Keys::hello_proof`]).
    pub proof: String,
}

/// What the coordinator sends to a rank.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ToRank {
    /// The hello was accepted: this rank is part of the job (the first message).
    Admitted {
        /// The job (the rank's own, echoed).
        job_key: String,
        /// Rank 0's proof of the job's key over the rank's nonce and this connection
        /// ([`super::auth::Keys::answer_proof`] of `admitted`).
        proof: String,
    },
    /// Accepted; `measuring`: this rank measures its host (else it waits).
    Welcome {
        /// Whether this rank measures.
        measuring: bool,
        /// The host whose measuring rank this is, or whose rank waits.
        host: String,
    },
    /// Not accepted, and why (a rank of this job stops; a refusal whose proof does not
    /// check is a stranger's, and the rank looks further).
    Refused {
        /// What rank 0 says is wrong with the rank (sent back to it).
        reason: String,
        /// Rank 0's proof over the reason, as for `Admitted`.
        proof: String,
    },
    /// Alive.
    Heartbeat,
    /// Measure this host now.
    Measure,
    /// Serve a verbs pair (`cxlchar verbs --server --port`) on the port of `slot`
    /// ([`super::pairs::verbs_port`]).
    ServeVerbs {
        /// The pair's place in its round (below the number of ranks).
        slot: u16,
        /// The host that will connect.
        peer: String,
    },
    /// Measure a verbs pair against `address`, on the port of `slot`.
    MeasureVerbs {
        /// The serving host's address, as rank 0 saw it connect.
        address: IpAddr,
        /// The pair's place in its round.
        slot: u16,
        /// The serving host.
        peer: String,
    },
    /// Serve a pool pair (pool msg follower) on this host's pool of `identity`, in the
    /// window of this rank's own `--fleet-pool-offset`/`--fleet-pool-len`.
    ServePool {
        /// The pool's identity ([`super::pairs::PoolCandidate::identity`]).
        identity: String,
        /// The host that measures.
        peer: String,
    },
    /// Measure a pool pair (pool msg leader) on this host's pool of `identity`.
    MeasurePool {
        /// The pool's identity.
        identity: String,
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

/// Reads one line of at most `max` bytes (its newline included) from `r`, calling
/// `before_read` before each read of `r` (to set a deadline); `Ok(None)` at the end of the
/// stream. Never holds more than `max` bytes: a longer line is an error as soon as it
/// passes the bound, and its bytes past the bound are not read.
pub fn read_line<R: BufRead>(
    r: &mut R,
    max: usize,
    mut before_read: impl FnMut() -> Result<()>,
) -> Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        before_read()?;
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("receiving"),
        };
        if buf.is_empty() {
            if line.is_empty() {
                return Ok(None);
            }
            bail!("the connection ended in the middle of a message");
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if take > max - line.len() {
            bail!("a message longer than {}", bytes(max));
        }
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if done {
            return Ok(Some(line));
        }
    }
}

/// `max` bytes, as a message says it (`16 KiB`, `256 MiB`).
fn bytes(max: usize) -> String {
    if max >= 1 << 20 && max.is_multiple_of(1 << 20) {
        format!("{} MiB", max >> 20)
    } else if max >= 1 << 10 && max.is_multiple_of(1 << 10) {
        format!("{} KiB", max >> 10)
    } else {
        format!("{max} bytes")
    }
}

/// A peer's text as a log line shows it: at most `max` characters, a control character
/// (a terminal escape) as `?`.
pub fn shown(text: &str, max: usize) -> String {
    let mut s: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        s.push_str("...");
    }
    s
}

fn parse<T: for<'de> Deserialize<'de>>(line: &[u8]) -> Result<T> {
    serde_json::from_slice(line).with_context(|| {
        format!(
            "a message that is not cxlchar's fleet protocol: {}",
            shown(String::from_utf8_lossy(line).trim_end(), 120)
        )
    })
}

/// Reads one message of at most `max` bytes; `Ok(None)` at the end of the stream.
pub fn receive_bounded<T: for<'de> Deserialize<'de>, R: BufRead>(
    r: &mut R,
    max: usize,
) -> Result<Option<T>> {
    match read_line(r, max, || Ok(()))? {
        Some(line) => parse(&line).map(Some),
        None => Ok(None),
    }
}

/// Reads one message of a rank (at most [`MAX_MESSAGE_BYTES`]); `Ok(None)` at the end of
/// the stream.
pub fn receive<T: for<'de> Deserialize<'de>, R: BufRead>(r: &mut R) -> Result<Option<T>> {
    receive_bounded(r, MAX_MESSAGE_BYTES)
}

/// Reads the first message of a connection from a peer not known yet: at most
/// [`MAX_FIRST_MESSAGE_BYTES`], complete before `deadline` (however slowly it trickles
/// in); `Ok(None)` when the peer closed first.
pub fn receive_first<T: for<'de> Deserialize<'de>>(
    stream: &TcpStream,
    r: &mut BufReader<TcpStream>,
    deadline: Instant,
) -> Result<Option<T>> {
    let line = read_line(r, MAX_FIRST_MESSAGE_BYTES, || {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            bail!("no complete first message in time");
        }
        stream
            .set_read_timeout(Some(left))
            .context("setting the read timeout")
    })
    .map_err(|e| {
        let timed_out = e
            .root_cause()
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| {
                matches!(
                    io.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                )
            });
        if timed_out {
            anyhow!("no complete first message in time")
        } else {
            e
        }
    })?;
    match line {
        Some(line) => parse(&line).map(Some),
        None => Ok(None),
    }
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
                address: "192.0.2.1".parse().unwrap(),
                slot: 7,
                peer: "b".into(),
            },
            ToRank::MeasurePool {
                identity: "cxl:serials=0x1234:ways=1:gran=256:offset=0:size=8".into(),
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

    /// A pool pair message that names a path, an offset or a length is not one: the
    /// fields are not read, and a message without an identity is refused.
    #[test]
    fn pool_pairs_name_an_identity_only() {
        let m: ToRank = serde_json::from_str(
            r#"{"measure_pool":{"identity":"cxl:x","peer":"b","spec":"file:/tmp/victim","offset":0,"len":8388608}}"#,
        )
        .unwrap();
        assert_eq!(
            m,
            ToRank::MeasurePool {
                identity: "cxl:x".into(),
                peer: "b".into()
            }
        );
        let old =
            r#"{"serve_pool":{"spec":"file:/tmp/victim","offset":0,"len":8388608,"peer":"b"}}"#;
        assert!(serde_json::from_str::<ToRank>(old).is_err());
        // A verbs address is an IP address, not a host name to resolve.
        let host = r#"{"measure_verbs":{"address":"evil.example","slot":0,"peer":"b"}}"#;
        assert!(serde_json::from_str::<ToRank>(host).is_err());
    }

    /// A first message is read only up to its bound: a stranger's endless line costs
    /// [`MAX_FIRST_MESSAGE_BYTES`], not its length.
    #[test]
    fn a_first_message_past_its_bound_is_refused_unread() {
        let l = LoopbackPair::new();
        let big = vec![b'x'; 4 << 20];
        let writer = {
            let mut c = l.client.try_clone().unwrap();
            std::thread::spawn(move || {
                let _ = c.write_all(&big);
            })
        };
        let mut r = reader(&l.server).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let e = receive_first::<ToCoordinator>(&l.server, &mut r, deadline).unwrap_err();
        assert!(e.to_string().contains("longer than 16 KiB"), "{e:#}");
        // Closed with data unread (every handle of it): the kernel resets the connection,
        // so the writer's blocked write fails. A shutdown alone leaves the data queued
        // and the writer blocked once the buffers fill.
        let LoopbackPair { client, server } = l;
        drop(r);
        drop(server);
        writer.join().unwrap();
        drop(client);
    }

    /// A first message that trickles in is cut at its deadline, whatever the pace.
    #[test]
    fn a_trickling_first_message_is_cut_at_its_deadline() {
        let mut l = LoopbackPair::new();
        l.client.write_all(b"{\"hel").unwrap();
        let mut r = reader(&l.server).unwrap();
        let deadline = Instant::now() + Duration::from_millis(300);
        let e = receive_first::<ToCoordinator>(&l.server, &mut r, deadline).unwrap_err();
        assert!(e.to_string().contains("in time"), "{e:#}");
    }

    struct LoopbackPair {
        client: TcpStream,
        server: TcpStream,
    }

    impl LoopbackPair {
        fn new() -> LoopbackPair {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (server, _) = l.accept().unwrap();
            LoopbackPair { client, server }
        }
    }

    #[test]
    fn a_peers_text_is_shown_without_escapes_and_cut() {
        assert_eq!(shown("job\u{1b}[2J", 120), "job?[2J");
        assert_eq!(shown("abcdef", 3), "abc...");
        assert_eq!(shown("abc", 3), "abc");
    }

    proptest::proptest! {
        /// For any line and bound: the line comes back when it fits, else an error, and
        /// nothing past the bound is consumed.
        #[test]
        fn lines_are_bounded(len in 0usize..40_000, max in 1usize..20_000) {
            let mut data = vec![b'a'; len];
            data.push(b'\n');
            data.extend_from_slice(b"next\n");
            let mut c = std::io::Cursor::new(data);
            match read_line(&mut c, max, || Ok(())) {
                Ok(Some(line)) => {
                    proptest::prop_assert!(len < max);
                    proptest::prop_assert_eq!(line.len(), len + 1);
                }
                Ok(None) => proptest::prop_assert!(false, "a line was there"),
                Err(e) => {
                    proptest::prop_assert!(len + 1 > max, "{e:#}");
                    proptest::prop_assert!(c.position() as usize <= max);
                }
            }
        }
    }
}
