//! Liveness of the two sides ([`Link`]: heartbeats, peer timeouts) and the rendezvous
//! through the header ([`leader_rendezvous`], [`follower_rendezvous`]).

use super::header::{
    check_leader_may_claim, off, state, Header, HEADER_BYTES, LAYOUT_VERSION, MAGIC,
};
use super::spec::{PoolMap, Role};
use super::PoolError;
use std::time::{Duration, Instant};

/// Liveness of the two sides: bumps our heartbeat, watches the peer's, and fails when
/// the peer is silent for longer than the peer timeout (or, for a forked follower, has
/// exited).
#[derive(Debug)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Link {
    pub hdr: Header,
    /// Our role.
    pub role: Role,
    /// How long the peer may stay silent.
    pub peer_timeout: Duration,
    /// A forked follower's pid, checked with waitpid.
    pub child: Option<libc::pid_t>,
    spins: u32,
    last_tick: Instant,
    peer_hb: u64,
    peer_seen: Instant,
    my_hb: u64,
}

impl Link {
    /// A link for `role` over `hdr`.
    pub fn new(hdr: Header, role: Role, peer_timeout: Duration) -> Link {
        let now = Instant::now();
        let mut l = Link {
            hdr,
            role,
            peer_timeout,
            child: None,
            spins: 0,
            last_tick: now,
            peer_hb: 0,
            peer_seen: now,
            my_hb: 0,
        };
        l.peer_hb = hdr.load(l.peer_hb_off());
        l.my_hb = hdr.load(l.my_hb_off());
        l
    }
    fn my_hb_off(&self) -> usize {
        match self.role {
            Role::Leader => off::LEADER_HB,
            Role::Follower => off::FOLLOWER_HB,
        }
    }
    fn peer_hb_off(&self) -> usize {
        match self.role {
            Role::Leader => off::FOLLOWER_HB,
            Role::Follower => off::LEADER_HB,
        }
    }
    /// The peer's name.
    pub fn peer(&self) -> &'static str {
        match self.role {
            Role::Leader => "follower",
            Role::Follower => "leader",
        }
    }
    /// Called in every wait loop: cheap except once per 1024 calls, when it checks the
    /// clock and, every millisecond, beats and checks the peer.
    #[inline]
    pub fn spin(&mut self) -> Result<(), PoolError> {
        std::hint::spin_loop();
        self.spins = self.spins.wrapping_add(1);
        if !self.spins.is_multiple_of(1024) {
            return Ok(());
        }
        self.tick()
    }
    /// Beats now and checks the peer.
    pub fn tick(&mut self) -> Result<(), PoolError> {
        let now = Instant::now();
        if now.duration_since(self.last_tick) < Duration::from_millis(1) {
            return Ok(());
        }
        // A long gap since our last tick means we were busy in waits that kept
        // returning, i.e. the peer made progress: count that as a sign of life.
        if now.duration_since(self.last_tick) > Duration::from_millis(50) {
            self.peer_seen = now;
        }
        self.last_tick = now;
        self.my_hb += 1;
        self.hdr.store(self.my_hb_off(), self.my_hb);
        let hb = self.hdr.load(self.peer_hb_off());
        if hb != self.peer_hb {
            self.peer_hb = hb;
            self.peer_seen = now;
        }
        if self.hdr.load(off::STATE) == state::ABORTED {
            return Err(PoolError::PeerAborted(self.peer()));
        }
        if let Some(pid) = self.child {
            let mut status = 0;
            // SAFETY: waitpid on our own child with WNOHANG does not block.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                self.child = None;
                return Err(PoolError::PeerLost {
                    peer: self.peer(),
                    secs: 0.0,
                });
            }
        }
        let silent = now.duration_since(self.peer_seen);
        if silent > self.peer_timeout {
            return Err(PoolError::PeerLost {
                peer: self.peer(),
                secs: silent.as_secs_f64(),
            });
        }
        Ok(())
    }
    /// Marks the run aborted (best effort, for the peer to see).
    pub fn abort(&self) {
        self.hdr.store(off::STATE, state::ABORTED);
    }
}

/// Leader side of the rendezvous: claims the window, writes the header, waits for the
/// follower to pair. Returns the run id.
pub fn leader_rendezvous(
    pool: &PoolMap,
    force: bool,
    timeout: Duration,
    link: &mut Link,
) -> Result<u64, PoolError> {
    let run_id = claim_header(pool, force, state::WAITING)?;
    let h = pool.header();
    let t0 = Instant::now();
    loop {
        if h.load(off::STATE) == state::PAIRED && h.load(off::FOLLOWER_RUN) == run_id {
            link.peer_seen = Instant::now();
            return Ok(run_id);
        }
        if t0.elapsed() > timeout {
            h.store(off::STATE, state::ABORTED);
            return Err(PoolError::NoPeer {
                peer: "follower",
                secs: timeout.as_secs_f64(),
            });
        }
        // Beat while waiting (the peer check cannot fail before pairing: we reset it).
        link.peer_seen = Instant::now();
        link.spins = 0;
        link.last_tick = Instant::now() - Duration::from_millis(2);
        link.tick()?;
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Claims the window's header for a run of this process (the rules of
/// [`check_leader_may_claim`]): clears it, then publishes it in `initial` state with the
/// magic last. Returns the run id.
pub fn claim_header(pool: &PoolMap, force: bool, initial: u64) -> Result<u64, PoolError> {
    check_leader_may_claim(pool, force, Duration::from_millis(50))?;
    let h = pool.header();
    for o in (0..HEADER_BYTES).step_by(8) {
        h.store(o, 0);
    }
    let run_id = {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        (t ^ ((std::process::id() as u64) << 32)) | 1
    };
    h.store(off::VERSION, LAYOUT_VERSION);
    h.store(off::LEN, pool.len() as u64);
    h.store(off::RUN_ID, run_id);
    h.store(off::LEADER_PID, std::process::id() as u64);
    h.store(off::STATE, initial);
    h.store(off::MAGIC, MAGIC);
    Ok(run_id)
}

/// Follower side: waits for a leader's header (right magic and version, waiting), then
/// pairs with it. Returns the run id.
pub fn follower_rendezvous(
    pool: &PoolMap,
    timeout: Duration,
    link: &mut Link,
) -> Result<u64, PoolError> {
    let h = pool.header();
    let t0 = Instant::now();
    loop {
        if h.load(off::MAGIC) == MAGIC {
            let v = h.load(off::VERSION);
            if v != LAYOUT_VERSION {
                return Err(PoolError::Version {
                    theirs: v,
                    ours: LAYOUT_VERSION,
                });
            }
            if h.load(off::STATE) == state::WAITING {
                let run = h.load(off::RUN_ID);
                h.store(off::FOLLOWER_PID, std::process::id() as u64);
                h.store(off::FOLLOWER_RUN, run);
                if h.cas(off::STATE, state::WAITING, state::PAIRED) {
                    link.peer_hb = h.load(off::LEADER_HB);
                    link.peer_seen = Instant::now();
                    return Ok(run);
                }
            }
        }
        if t0.elapsed() > timeout {
            return Err(PoolError::NoPeer {
                peer: "leader",
                secs: timeout.as_secs_f64(),
            });
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::spec::tests::spec;

    #[test]
    fn follower_refuses_another_layout_version() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PoolMap::open(&spec(&dir.path().join("pool"))).unwrap();
        let h = pool.header();
        h.store(off::VERSION, LAYOUT_VERSION + 1);
        h.store(off::STATE, state::WAITING);
        h.store(off::MAGIC, MAGIC);
        let mut link = Link::new(h, Role::Follower, Duration::from_secs(1));
        let e = follower_rendezvous(&pool, Duration::from_secs(5), &mut link).unwrap_err();
        assert!(matches!(e, PoolError::Version { .. }), "{e}");
        assert_eq!(
            h.load(off::STATE),
            state::WAITING,
            "the follower must not pair"
        );
    }

    #[test]
    fn follower_without_leader_times_out_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PoolMap::open(&spec(&dir.path().join("pool"))).unwrap();
        let mut link = Link::new(pool.header(), Role::Follower, Duration::from_secs(1));
        let e = follower_rendezvous(&pool, Duration::from_millis(50), &mut link).unwrap_err();
        assert!(e.to_string().contains("no leader showed up"), "{e}");
    }

    #[test]
    fn leader_without_follower_times_out_and_marks_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PoolMap::open(&spec(&dir.path().join("pool"))).unwrap();
        let mut link = Link::new(pool.header(), Role::Leader, Duration::from_secs(1));
        let e = leader_rendezvous(&pool, false, Duration::from_millis(50), &mut link).unwrap_err();
        assert!(e.to_string().contains("no follower showed up"), "{e}");
        assert_eq!(pool.header().load(off::STATE), state::ABORTED);
        assert_eq!(pool.header().load(off::MAGIC), MAGIC);
    }
}
