//! Who a rank and rank 0 take each other for. Anything that connects to rank 0's
//! rendezvous, or answers on a port a rank tries, is a stranger until it proves that it
//! belongs to the job (docs/safety.md, "Fleet runs: who a rank listens to"):
//!
//! * **Proofs.** Each side proves that it holds the job's key ([`Keys`]) with an
//!   HMAC-SHA256 over the rank's fresh nonce and both ends of the TCP connection as that
//!   side sees them: the rank's hello carries [`Keys::hello_proof`], rank 0's answer
//!   [`Keys::answer_proof`] over its verdict (admitted, or refused and why). A proof holds
//!   for one connection only: a stranger that relays a rank's hello to rank 0 over a
//!   connection of its own gets an answer for that connection's ends, which the rank
//!   refuses, and rank 0 refuses the relayed hello for the same reason.
//! * **The key** is made of the job key (`openmpi:1347354625`) and every secret the
//!   launcher gives the job's processes alone: Open MPI's
//!   `OMPI_MCA_orte_precondition_transports` (a random value mpirun draws for each job)
//!   and [`KEY_VAR`] when the user exports one. Without a secret (Slurm, MPICH Hydra),
//!   whoever knows the job id can compute the proofs: then the launcher's node list (a
//!   rank only ever connects to rank 0's host) and the owner check below are what keeps
//!   a stranger out.
//! * **Owners on one machine.** When the other end of a connection is a socket of this
//!   machine (listed in `/proc/net/tcp`), its owner must be this process's user: the
//!   launcher starts every rank as one user, and a process of another user that bound
//!   the port first is a stranger whatever it says ([`peer_uid`]).

use anyhow::{bail, Context as _, Result};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// The variable a user sets, to the same random value on every rank, to key the proofs
/// with a secret where the launcher gives none (Slurm: `srun` passes the environment on).
pub const KEY_VAR: &str = "CXLCHAR_FLEET_KEY";

/// Shortest [`KEY_VAR`] accepted: 16 characters (64 bits of hex).
pub const MIN_KEY_CHARS: usize = 16;

/// Longest [`KEY_VAR`] (and launcher secret) accepted.
pub const MAX_KEY_CHARS: usize = 1024;

/// A secret of the job's processes: the variable it came from and its value (never
/// printed: `Debug` shows the variable only).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// The variable (`OMPI_MCA_orte_precondition_transports`, [`KEY_VAR`]).
    pub var: &'static str,
    value: String,
}

impl Secret {
    /// The secret `value` of variable `var`; `Err`: why it is refused (too short for a
    /// secret, too long, or not printable).
    pub fn new(var: &'static str, value: &str) -> Result<Secret, String> {
        let n = value.chars().count();
        if n < MIN_KEY_CHARS {
            return Err(format!(
                "{n} characters: a job secret has at least {MIN_KEY_CHARS} (e.g. \
                 export {KEY_VAR}=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'))"
            ));
        }
        if n > MAX_KEY_CHARS {
            return Err(format!("{n} characters: at most {MAX_KEY_CHARS} are read"));
        }
        if value.chars().any(|c| c.is_control()) {
            return Err("holds control characters".into());
        }
        Ok(Secret {
            var,
            value: value.to_string(),
        })
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({}=<hidden>)", self.var)
    }
}

type HmacSha256 = Hmac<Sha256>;

/// The key every rank of a job derives alike from the job key and the job's secrets.
#[derive(Clone)]
pub struct Keys {
    key: Vec<u8>,
    job_key: String,
    secrets: Vec<&'static str>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keys({}, secrets from {:?})", self.job_key, self.secrets)
    }
}

/// Appends `part` with its length first (no two lists of parts give the same bytes).
fn framed(out: &mut Vec<u8>, part: &[u8]) {
    out.extend_from_slice(&(part.len() as u64).to_le_bytes());
    out.extend_from_slice(part);
}

impl Keys {
    /// The keys of job `job_key` with the launcher's and the user's `secrets`.
    pub fn new(job_key: &str, secrets: &[Secret]) -> Keys {
        let mut key = Vec::new();
        framed(&mut key, b"cxlchar-fleet key 1");
        framed(&mut key, job_key.as_bytes());
        for s in secrets {
            framed(&mut key, s.var.as_bytes());
            framed(&mut key, s.value.as_bytes());
        }
        Keys {
            key,
            job_key: job_key.to_string(),
            secrets: secrets.iter().map(|s| s.var).collect(),
        }
    }

    /// The variables whose secrets key the proofs (empty: the job key alone).
    pub fn secrets(&self) -> &[&'static str] {
        &self.secrets
    }

    fn mac(&self, parts: &[Vec<u8>]) -> HmacSha256 {
        let mut m = HmacSha256::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        for p in parts {
            m.update(&(p.len() as u64).to_le_bytes());
            m.update(p);
        }
        m
    }

    fn prove(&self, parts: &[Vec<u8>]) -> String {
        hex(&self.mac(parts).finalize().into_bytes())
    }

    fn check(&self, parts: &[Vec<u8>], proof: &str) -> bool {
        match unhex(proof) {
            // verify_slice compares in constant time.
            Some(bytes) => self.mac(parts).verify_slice(&bytes).is_ok(),
            None => false,
        }
    }

    /// A rank's proof in its hello: rank `rank`, its `nonce`, on the connection from
    /// `rank_end` to `rank0_end`.
    pub fn hello_proof(
        &self,
        rank: usize,
        nonce: &str,
        rank_end: SocketAddr,
        rank0_end: SocketAddr,
    ) -> String {
        self.prove(&hello_parts(
            &self.job_key,
            rank,
            nonce,
            rank_end,
            rank0_end,
        ))
    }

    /// Whether `proof` is [`Keys::hello_proof`] of this job.
    pub fn check_hello(
        &self,
        rank: usize,
        nonce: &str,
        rank_end: SocketAddr,
        rank0_end: SocketAddr,
        proof: &str,
    ) -> bool {
        self.check(
            &hello_parts(&self.job_key, rank, nonce, rank_end, rank0_end),
            proof,
        )
    }

    /// Rank 0's proof in its answer to a hello with `nonce` on the connection from
    /// `rank_end` to `rank0_end`: `verdict` is `admitted` or the refusal's reason.
    pub fn answer_proof(
        &self,
        verdict: &str,
        nonce: &str,
        rank_end: SocketAddr,
        rank0_end: SocketAddr,
    ) -> String {
        self.prove(&answer_parts(
            &self.job_key,
            verdict,
            nonce,
            rank_end,
            rank0_end,
        ))
    }

    /// Whether `proof` is [`Keys::answer_proof`] of this job.
    pub fn check_answer(
        &self,
        verdict: &str,
        nonce: &str,
        rank_end: SocketAddr,
        rank0_end: SocketAddr,
        proof: &str,
    ) -> bool {
        self.check(
            &answer_parts(&self.job_key, verdict, nonce, rank_end, rank0_end),
            proof,
        )
    }
}

fn hello_parts(
    job_key: &str,
    rank: usize,
    nonce: &str,
    rank_end: SocketAddr,
    rank0_end: SocketAddr,
) -> [Vec<u8>; 6] {
    [
        b"hello".to_vec(),
        job_key.as_bytes().to_vec(),
        (rank as u64).to_le_bytes().to_vec(),
        nonce.as_bytes().to_vec(),
        endpoint(rank_end).into_bytes(),
        endpoint(rank0_end).into_bytes(),
    ]
}

fn answer_parts(
    job_key: &str,
    verdict: &str,
    nonce: &str,
    rank_end: SocketAddr,
    rank0_end: SocketAddr,
) -> [Vec<u8>; 6] {
    [
        b"answer".to_vec(),
        job_key.as_bytes().to_vec(),
        verdict.as_bytes().to_vec(),
        nonce.as_bytes().to_vec(),
        endpoint(rank_end).into_bytes(),
        endpoint(rank0_end).into_bytes(),
    ]
}

/// One end of a connection as both sides write it (an IPv4 address in IPv6 form is
/// written as IPv4).
fn endpoint(a: SocketAddr) -> String {
    SocketAddr::new(canonical(a.ip()), a.port()).to_string()
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 128 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A fresh nonce: 16 bytes of the kernel's random source, in hex.
pub fn nonce() -> Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("reading /dev/urandom for the fleet handshake's nonce")?;
    Ok(hex(&b))
}

/// This process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The user that owns the other end of `stream` when that end is a socket of this
/// machine (of this network namespace); `None` when it is elsewhere, or when
/// `/proc/net/tcp` cannot tell.
pub fn peer_uid(stream: &TcpStream) -> Option<u32> {
    let (me, peer) = (stream.local_addr().ok()?, stream.peer_addr().ok()?);
    // The kernel may list the other end a moment after connect() or accept() returns.
    let tries = if peer.ip().is_loopback() { 5 } else { 1 };
    for i in 0..tries {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Ok(f) = std::fs::File::open(table) else {
                continue;
            };
            if let Some(uid) = socket_owner(BufReader::new(f), peer, me) {
                return Some(uid);
            }
        }
    }
    None
}

/// In a `/proc/net/tcp` or `/proc/net/tcp6` table, the owner (uid) of the connected
/// socket whose own end is `local` and whose other end is `remote`. A socket in
/// TIME_WAIT or closing belongs to nobody any more and is not looked at.
pub fn socket_owner(table: impl BufRead, local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    let (local, remote) = (
        SocketAddr::new(canonical(local.ip()), local.port()),
        SocketAddr::new(canonical(remote.ip()), remote.port()),
    );
    for line in table.lines().skip(1) {
        let line = line.ok()?;
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
        let f: Vec<&str> = line.split_whitespace().take(8).collect();
        let [_, l, r, st, _, _, _, uid] = f[..] else {
            continue;
        };
        // 01 ESTABLISHED, 03 SYN_RECV (a connection rank 0 has not accepted yet).
        if !matches!(st, "01" | "03") {
            continue;
        }
        if proc_endpoint(l) == Some(local) && proc_endpoint(r) == Some(remote) {
            return uid.parse().ok();
        }
    }
    None
}

/// An endpoint as /proc/net/tcp writes it: the address as the kernel holds it (in
/// network order, printed as native 32-bit words), a colon, the port in hex.
fn proc_endpoint(s: &str) -> Option<SocketAddr> {
    let (addr, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            canonical(IpAddr::V6(Ipv6Addr::from(b)))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Refuses the other end of `stream` when it is a socket of this machine owned by
/// another user than this process's (`who`: what the other end claims to be, for the
/// message).
pub fn check_peer_owner(stream: &TcpStream, who: &str) -> Result<()> {
    if let Some(uid) = peer_uid(stream) {
        let me = euid();
        if uid != me {
            bail!(
                "{who} is a process of user {uid}, not of this job's user {me}: the launcher \
                 starts every rank as one user"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::TcpListener;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn proofs_hold_for_one_job_one_connection_one_verdict() {
        let k = Keys::new("slurm:42.0", &[]);
        let (r, z) = (a("192.0.2.2:40000"), a("192.0.2.1:21000"));
        let p = k.hello_proof(1, "n1", r, z);
        assert!(k.check_hello(1, "n1", r, z, &p));
        // Another rank, nonce, connection or job: refused.
        assert!(!k.check_hello(2, "n1", r, z, &p));
        assert!(!k.check_hello(1, "n2", r, z, &p));
        assert!(!k.check_hello(1, "n1", a("192.0.2.3:40000"), z, &p));
        assert!(!k.check_hello(1, "n1", r, a("192.0.2.1:21001"), &p));
        assert!(!Keys::new("slurm:43.0", &[]).check_hello(1, "n1", r, z, &p));
        let ans = k.answer_proof("admitted", "n1", r, z);
        assert!(k.check_answer("admitted", "n1", r, z, &ans));
        assert!(!k.check_answer("refused", "n1", r, z, &ans));
        // A hello's proof is not an answer's.
        assert!(!k.check_answer("admitted", "n1", r, z, &p));
        // Garbage is refused, not a panic.
        for bad in ["", "zz", "0", &"00".repeat(200)] {
            assert!(!k.check_answer("admitted", "n1", r, z, bad));
        }
    }

    #[test]
    fn a_secret_changes_the_key_and_is_never_printed() {
        let s = Secret::new(KEY_VAR, "0123456789abcdef").unwrap();
        let with = Keys::new("slurm:42.0", std::slice::from_ref(&s));
        let without = Keys::new("slurm:42.0", &[]);
        let (r, z) = (a("127.0.0.1:40000"), a("127.0.0.1:21000"));
        let p = with.hello_proof(1, "n", r, z);
        assert!(!without.check_hello(1, "n", r, z, &p));
        assert!(!format!("{s:?} {with:?}").contains("0123456789abcdef"));
        assert_eq!(with.secrets(), [KEY_VAR]);
        assert!(Secret::new(KEY_VAR, "short")
            .unwrap_err()
            .contains("at least 16"));
        assert!(Secret::new(KEY_VAR, &"x".repeat(2000)).is_err());
        assert!(Secret::new(KEY_VAR, "0123456789abcdef\n").is_err());
    }

    #[test]
    fn proc_net_tcp_endpoints_and_owners() {
        // 127.0.0.1:8080 -> 127.0.0.1:45678 owned by 1000; the same pair in TIME_WAIT
        // (owner 0) is not taken; an IPv6 socket of ::ffff:127.0.0.1.
        let le = cfg!(target_endian = "little");
        let lo = if le { "0100007F" } else { "7F000001" };
        let lo6 = if le {
            "0000000000000000FFFF00000100007F"
        } else {
            "00000000000000000000FFFF7F000001"
        };
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: {lo}:1F90 {lo}:B26E 06 00000000:00000000 03:00000000 00000000     0        0 0\n\
             1: {lo}:1F90 {lo}:B26E 01 00000000:00000000 00:00000000 00000000  1000        0 1\n\
             2: {lo6}:0050 {lo6}:B26F 01 00000000:00000000 00:00000000 00000000    33        0 2\n"
        );
        let t = || std::io::Cursor::new(table.clone());
        assert_eq!(
            socket_owner(t(), a("127.0.0.1:8080"), a("127.0.0.1:45678")),
            Some(1000)
        );
        assert_eq!(
            socket_owner(t(), a("127.0.0.1:80"), a("127.0.0.1:45679")),
            Some(33)
        );
        assert_eq!(
            socket_owner(t(), a("127.0.0.1:8080"), a("127.0.0.1:1")),
            None
        );
    }

    /// A real loopback connection: both ends belong to this process's user.
    #[test]
    fn a_loopback_peer_of_this_user_is_found() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        if !std::path::Path::new("/proc/net/tcp").exists() {
            return; // no procfs: nothing to read
        }
        assert_eq!(peer_uid(&c), Some(euid()));
        assert_eq!(peer_uid(&s), Some(euid()));
        check_peer_owner(&c, "rank 0").unwrap();
    }

    proptest! {
        /// Any endpoint survives the kernel's way of writing it.
        #[test]
        fn proc_endpoints_round_trip(ip in any::<[u8; 4]>(), port in any::<u16>()) {
            let word = u32::from_ne_bytes(ip);
            let s = format!("{word:08X}:{port:04X}");
            prop_assert_eq!(
                proc_endpoint(&s),
                Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port))
            );
        }

        /// A proof never checks under another nonce.
        #[test]
        fn proofs_bind_the_nonce(n1 in "[0-9a-f]{32}", n2 in "[0-9a-f]{32}") {
            let k = Keys::new("openmpi:1", &[]);
            let (r, z) = (a("127.0.0.1:1"), a("127.0.0.1:2"));
            let p = k.answer_proof("admitted", &n1, r, z);
            prop_assert_eq!(k.check_answer("admitted", &n2, r, z, &p), n1 == n2);
        }
    }
}
