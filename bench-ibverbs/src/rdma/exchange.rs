//! The out-of-band exchange over TCP: connecting and accepting with timeouts, swapping
//! [`QpInfo`] (ours first), and the command channel of a two-host run (`Remote` on the
//! measuring side, `serve` on the `--server` side).

use super::qp::Side;
use super::wr::{post_one, Op};
use super::MAX_MSG;
use crate::error::VerbsError;
use crate::wire::{Command, QpInfo, QP_INFO_BYTES};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

pub(super) fn io_err(peer: &str, timeout: Duration) -> impl Fn(std::io::Error) -> VerbsError + '_ {
    move |source| VerbsError::Exchange {
        peer: peer.to_string(),
        source,
        timeout,
    }
}

/// Exchanges QP info on an open stream (ours first, then theirs), with timeouts.
pub fn exchange(
    s: &mut TcpStream,
    ours: &QpInfo,
    peer: &str,
    timeout: Duration,
) -> Result<QpInfo, VerbsError> {
    let e = io_err(peer, timeout);
    s.set_read_timeout(Some(timeout)).map_err(&e)?;
    s.set_write_timeout(Some(timeout)).map_err(&e)?;
    s.write_all(&ours.encode()).map_err(&e)?;
    let mut buf = [0u8; QP_INFO_BYTES];
    s.read_exact(&mut buf).map_err(&e)?;
    QpInfo::decode(&buf).map_err(|source| VerbsError::Wire {
        peer: peer.to_string(),
        source,
    })
}

/// Connects to a server (every resolved address) within the timeout. A refused
/// connection (the server is not listening yet: started after this client, or still
/// opening its device) is tried again every 50 ms until the timeout; any other error
/// ends the attempt.
pub fn tcp_connect(host: &str, port: u16, timeout: Duration) -> Result<TcpStream, VerbsError> {
    let peer = format!("{host}:{port}");
    let e = io_err(&peer, timeout);
    let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(&e)?.collect();
    let end = Instant::now() + timeout;
    loop {
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        for a in &addrs {
            let left = end
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            match TcpStream::connect_timeout(a, left) {
                Ok(s) => return Ok(s),
                Err(x) => last = x,
            }
        }
        let left = end.saturating_duration_since(Instant::now());
        if last.kind() != std::io::ErrorKind::ConnectionRefused || left.is_zero() {
            return Err(e(last));
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Accepts one client within the timeout.
pub fn tcp_accept(port: u16, timeout: Duration) -> Result<(TcpStream, String), VerbsError> {
    let peer = format!("0.0.0.0:{port}");
    let e = io_err(&peer, timeout);
    let l = TcpListener::bind(("0.0.0.0", port)).map_err(&e)?;
    l.set_nonblocking(true).map_err(&e)?;
    let end = Instant::now() + timeout;
    loop {
        match l.accept() {
            Ok((s, a)) => {
                s.set_nonblocking(false).map_err(&e)?;
                return Ok((s, a.to_string()));
            }
            Err(x) if x.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > end {
                    return Err(e(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no client connected",
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(x) => return Err(e(x)),
        }
    }
}

/// The other end as the measuring side sees it.
pub(super) enum Remote<'a> {
    /// The second local queue pair.
    Local(&'a Side),
    /// A `--server` over TCP.
    Tcp(&'a mut TcpStream, String),
}

impl Remote<'_> {
    pub(super) fn command(&mut self, c: Command, t: Duration) -> Result<(), VerbsError> {
        if let Remote::Tcp(s, peer) = self {
            s.write_all(&c.encode()).map_err(io_err(peer, t))?;
        }
        Ok(())
    }

    pub(super) fn ack(&mut self, t: Duration) -> Result<(), VerbsError> {
        if let Remote::Tcp(s, peer) = self {
            let mut b = [0u8; 1];
            s.read_exact(&mut b).map_err(io_err(peer, t))?;
        }
        Ok(())
    }

    /// Local: consume `n` receives on the peer queue pair.
    pub(super) fn drain(&self, n: usize, t: Duration) -> Result<(), VerbsError> {
        if let Remote::Local(b) = self {
            b.wait_recv(n, t)?;
        }
        Ok(())
    }
}

/// The client's next command; `idle` is the read timeout already set on `s`.
fn next_command(
    s: &mut impl Read,
    peer: &str,
    idle: Duration,
    served: u64,
) -> Result<Command, VerbsError> {
    let mut b = [0u8; 9];
    match s.read_exact(&mut b) {
        Ok(()) => {}
        Err(x) if x.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(VerbsError::ClientLeft {
                peer: peer.into(),
                served,
            })
        }
        Err(x) => return Err(io_err(peer, idle)(x)),
    }
    Command::decode(&b).map_err(|source| VerbsError::Wire {
        peer: peer.into(),
        source,
    })
}

/// Serves a client's commands on a connected queue pair until `Quit`; a client that closes
/// the channel before `Quit` failed mid-run, and so does this serving run.
pub(super) fn serve(
    side: &Side,
    s: &mut TcpStream,
    peer: &str,
    t: Duration,
) -> Result<u64, VerbsError> {
    // Commands can be far apart (the client measures in between).
    let idle = t.saturating_mul(30);
    s.set_read_timeout(Some(idle)).map_err(io_err(peer, idle))?;
    let mut served = 0;
    loop {
        let c = next_command(s, peer, idle, served)?;
        served += 1;
        match c {
            Command::Quit => return Ok(served),
            Command::Pong { size, iters } => {
                let size = (size as usize).min(MAX_MSG);
                let mut sig = 0;
                for i in 0..iters {
                    side.wait_recv(1, t)?;
                    let signaled = i % 32 == 31 || i + 1 == iters;
                    post_one(
                        side,
                        Op::Send,
                        size,
                        size <= side.max_inline as usize,
                        signaled,
                    )?;
                    if signaled {
                        sig += 1;
                    }
                }
                side.wait_send(sig, t)?;
            }
            Command::Sink { size: _, count } => {
                side.wait_recv(count as usize, t)?;
                s.write_all(&[1]).map_err(io_err(peer, t))?;
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_peer_times_out() {
        // 192.0.2.0/24 is TEST-NET-1: nothing answers; the connect must give up in time.
        let t = Duration::from_millis(300);
        let t0 = Instant::now();
        let r = tcp_connect("192.0.2.123", 9, t);
        assert!(r.is_err());
        assert!(t0.elapsed() < Duration::from_secs(5));
        let s = r.unwrap_err().to_string();
        assert!(s.contains("192.0.2.123:9"), "{s}");
    }

    /// A free port on 127.0.0.1 (bound, then released).
    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn a_server_that_listens_late_is_reached_and_one_that_never_does_is_refused_in_time() {
        let port = free_port();
        let server = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
            let (mut s, _) = l.accept().unwrap();
            s.write_all(b"k").unwrap();
        });
        let t0 = Instant::now();
        let mut s = tcp_connect("127.0.0.1", port, Duration::from_secs(10)).unwrap();
        assert!(t0.elapsed() >= Duration::from_millis(250));
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"k");
        server.join().unwrap();

        // Nobody ever listens: refused until the timeout, then the error names the peer.
        let port = free_port();
        let t0 = Instant::now();
        let e = tcp_connect("127.0.0.1", port, Duration::from_millis(300)).unwrap_err();
        assert!(t0.elapsed() >= Duration::from_millis(250));
        assert!(t0.elapsed() < Duration::from_secs(5));
        match &e {
            VerbsError::Exchange { source, peer, .. } => {
                assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused);
                assert_eq!(peer, &format!("127.0.0.1:{port}"));
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn a_client_that_leaves_before_quit_fails_the_serving_run() {
        let t = Duration::from_secs(1);
        let mut quit = &Command::Quit.encode()[..];
        assert!(matches!(
            next_command(&mut quit, "p:1", t, 0),
            Ok(Command::Quit)
        ));
        // A whole command, then the channel closes: the next read is the client leaving.
        let bytes = Command::Pong { size: 8, iters: 3 }.encode();
        let mut r = &bytes[..];
        assert!(next_command(&mut r, "p:1", t, 0).is_ok());
        match next_command(&mut r, "p:1", t, 1) {
            Err(VerbsError::ClientLeft { peer, served }) => {
                assert_eq!((peer.as_str(), served), ("p:1", 1));
            }
            other => panic!("{other:?}"),
        }
        // Half a command is a client leaving too, not a command.
        let mut half = &bytes[..4];
        assert!(matches!(
            next_command(&mut half, "p:1", t, 2),
            Err(VerbsError::ClientLeft { served: 2, .. })
        ));
    }

    #[test]
    fn accept_times_out_and_exchange_detects_mismatch() {
        let t0 = Instant::now();
        assert!(tcp_accept(0, Duration::from_millis(100)).is_err());
        assert!(t0.elapsed() < Duration::from_secs(5));

        // A fake peer that answers with another wire version.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; QP_INFO_BYTES];
            s.read_exact(&mut b).unwrap();
            b[5] ^= 0xff;
            s.write_all(&b).unwrap();
        });
        let mut s = tcp_connect("127.0.0.1", port, Duration::from_secs(2)).unwrap();
        let ours = QpInfo {
            qpn: 17,
            mtu: 3,
            ..Default::default()
        };
        let e = exchange(&mut s, &ours, "peer", Duration::from_secs(2)).unwrap_err();
        h.join().unwrap();
        assert!(
            matches!(
                e,
                VerbsError::Wire {
                    source: crate::wire::WireError::VersionMismatch { .. },
                    ..
                }
            ),
            "{e}"
        );

        // A silent peer: the exchange gives up after the timeout.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let _keep = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            std::thread::sleep(Duration::from_secs(2));
            drop(s);
        });
        let mut s = tcp_connect("127.0.0.1", port, Duration::from_secs(2)).unwrap();
        let t0 = Instant::now();
        let e = exchange(&mut s, &ours, "silent", Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, VerbsError::Exchange { .. }), "{e}");
        assert!(t0.elapsed() < Duration::from_millis(1900));
    }
}
