//! The thread ladder: the thread counts worth measuring on a set of CPUs, chosen by the
//! machine's topology, defined once for every family that sweeps a thread count
//! (`mem.copy-threshold`, `mem.alltoall-order`, `mem.agents`, `pool.flush-bw`,
//! `pool.msg-scale`).
//!
//! A rung is 1, 2, 4, 8, ... CPUs, or one instance of a level the machine has: one core
//! (its SMT threads), one L2, one last-level cache instance (an L3, an AMD CCX), one NUMA
//! node, one socket, all CPUs of the run. Levels are the instances that hold the run's
//! first CPU; a count that is not a level takes the first CPUs of the set nearest first
//! ([`Places::nearest_first`]: every core's first thread before any second thread, the
//! first CPU's L3, node and socket before the others). Where a level and a power of two
//! have the same count the level's CPUs are taken; counts are never repeated. That gives
//! about 8 to 12 rungs at any size: 5 on a 16-core server, 11 on two 96-core EPYC
//! sockets, 12 on 576 CPUs, where every count 1..n would be hundreds.
//!
//! Each rung says what it is (`one L3: 16 CPUs`, `8 CPUs (8 cores in one L3, one node,
//! one socket)`), and every measurement made on it records that. `--threads 1,2,3` (or
//! `every`) still asks for any counts ([`Threads`]).

use super::places::{Places, Span};
use super::Topology;
use serde::Serialize;

/// A level of the machine a rung can be one instance of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// One core: its SMT threads.
    Core,
    /// One L2 instance.
    L2,
    /// One last-level cache instance (an L3, a CCX).
    Llc,
    /// One NUMA node.
    Node,
    /// One socket.
    Socket,
    /// Every CPU of the run.
    All,
}

impl Level {
    fn name(self, llc_level: Option<u8>) -> String {
        match self {
            Level::Core => "one core".into(),
            Level::L2 => "one L2".into(),
            Level::Llc => match llc_level {
                Some(l) => format!("one L{l}"),
                None => "one LLC".into(),
            },
            Level::Node => "one node".into(),
            Level::Socket => "one socket".into(),
            Level::All => "all CPUs".into(),
        }
    }
}

/// One thread count of the ladder: how many threads, on which CPUs (thread t on
/// `cpus[t]`), and what that set is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rung {
    /// Threads (one per CPU).
    pub threads: usize,
    /// The CPUs, thread 0's first.
    pub cpus: Vec<usize>,
    /// The levels this set is one instance of (empty: a count only).
    pub levels: Vec<Level>,
    /// What it is, for people and for the measurements' parameters.
    pub label: String,
}

/// `--threads`: the ladder (no option), every count from 1 to the CPUs, or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Threads {
    /// 1, 2, ..., every CPU of the run.
    Every,
    /// These counts.
    List(Vec<usize>),
}

impl std::str::FromStr for Threads {
    type Err = String;
    fn from_str(s: &str) -> Result<Threads, String> {
        if s.trim().eq_ignore_ascii_case("every") {
            return Ok(Threads::Every);
        }
        let mut v = Vec::new();
        for part in s.split(',') {
            // A count of 0 is refused by [`Threads::check`], which knows the run's CPUs
            // and says what would fit.
            let n: usize = part.trim().parse().map_err(|_| {
                format!("`{part}` is not a thread count (a list such as 1,2,4 or `every`)")
            })?;
            v.push(n);
        }
        Ok(Threads::List(v))
    }
}

/// The help of every `--threads` that takes a [`Threads`].
pub const THREADS_HELP: &str = "Thread counts, comma-separated (1,2,3), or `every` (1 .. the CPUs); default: the thread ladder (1, 2, 4, ... and every level of the machine: one core, one L2, one L3, one node, one socket, all CPUs)";

impl Threads {
    /// The counts asked for, on `cpus` CPUs.
    pub fn counts(&self, cpus: usize) -> Vec<usize> {
        match self {
            Threads::Every => (1..=cpus.max(1)).collect(),
            Threads::List(v) => v.clone(),
        }
    }

    /// Checks every count against the CPUs of the run: one `what` (thread, agent) per
    /// CPU, at least one; `option` is the option that gave the counts (`--threads`).
    pub fn check(
        &self,
        option: &'static str,
        what: &'static str,
        cpus: usize,
    ) -> Result<(), CountError> {
        for t in self.counts(cpus) {
            check_count(option, what, t, cpus)?;
        }
        Ok(())
    }
}

/// Checks one count of `what` (thread, agent), one per CPU, against the `cpus` CPUs of
/// the run: from 1 to `cpus`.
pub fn check_count(
    option: &'static str,
    what: &'static str,
    asked: usize,
    cpus: usize,
) -> Result<(), CountError> {
    if (1..=cpus).contains(&asked) {
        return Ok(());
    }
    Err(CountError {
        option,
        asked,
        noun: if asked == 1 {
            what.to_string()
        } else {
            format!("{what}s")
        },
        fits: cpus,
        why: format!(
            "one {what} per CPU, and the run has {} (--cpu, else every CPU this process may use)",
            plural(cpus, "CPU", "CPUs")
        ),
    })
}

/// A count of threads, agents or CPU pairs that the run's CPUs cannot give (`--threads
/// 0`, `--agents 99999`): bad input, refused before anything runs, with the count asked,
/// the CPUs the run has and what would fit. The one message of every family that takes a
/// count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option} {asked}: {asked} {noun} requested but {}: {why}", fit(*.asked, *.fits))]
pub struct CountError {
    /// The option that gave the count (`--threads`).
    pub option: &'static str,
    /// The count asked for.
    pub asked: usize,
    /// What was counted, as many as asked (`threads`, `pairs per class`).
    pub noun: String,
    /// The largest count that fits (0: none does).
    pub fits: usize,
    /// Why that is the most: the CPUs of the run.
    pub why: String,
}

/// What fits, for [`CountError`]'s message.
fn fit(asked: usize, fits: usize) -> String {
    let fit = match fits {
        0 => "none fits".to_string(),
        1 => "only 1 fits".to_string(),
        n => format!("only 1 to {n} fit"),
    };
    match asked {
        0 => format!("at least 1 is needed and {fit}"),
        _ => fit,
    }
}

/// The ladder of a set of CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ladder {
    /// Rungs by increasing thread count.
    pub rungs: Vec<Rung>,
}

impl Ladder {
    /// The natural ladder of `cpus` (the run's CPU set, first CPU first) on `topo`.
    pub fn of(topo: &Topology, cpus: &[usize]) -> Ladder {
        let places = Places::of(topo, cpus);
        let order = places.nearest_first();
        let n = order.len();
        if n == 0 {
            return Ladder { rungs: vec![] };
        }
        let mut rungs: Vec<Rung> = Vec::new();
        for (level, set) in level_sets(&places, &order) {
            match rungs.iter_mut().find(|r| r.threads == set.len()) {
                Some(r) => {
                    if !r.levels.contains(&level) {
                        r.levels.push(level);
                    }
                }
                None => rungs.push(Rung {
                    threads: set.len(),
                    cpus: set,
                    levels: vec![level],
                    label: String::new(),
                }),
            }
        }
        let mut k = 1;
        while k < n {
            if !rungs.iter().any(|r| r.threads == k) {
                rungs.push(Rung {
                    threads: k,
                    cpus: order[..k].to_vec(),
                    levels: vec![],
                    label: String::new(),
                });
            }
            k *= 2;
        }
        rungs.sort_by_key(|r| r.threads);
        for r in &mut rungs {
            r.levels.sort();
            r.label = label(&places, r);
        }
        Ladder { rungs }
    }

    /// Rungs for the counts `counts` asks for: a count that is a rung of the natural
    /// ladder takes its CPUs and label, any other the first CPUs nearest first.
    pub fn of_counts(topo: &Topology, cpus: &[usize], counts: &[usize]) -> Ladder {
        let natural = Ladder::of(topo, cpus);
        let places = Places::of(topo, cpus);
        let order = places.nearest_first();
        let mut rungs = Vec::new();
        for &k in counts {
            let k = k.clamp(1, order.len().max(1));
            if rungs.iter().any(|r: &Rung| r.threads == k) {
                continue;
            }
            let r = match natural.rungs.iter().find(|r| r.threads == k) {
                Some(r) => r.clone(),
                None => {
                    let mut r = Rung {
                        threads: k,
                        cpus: order[..k.min(order.len())].to_vec(),
                        levels: vec![],
                        label: String::new(),
                    };
                    r.label = label(&places, &r);
                    r
                }
            };
            rungs.push(r);
        }
        Ladder { rungs }
    }

    /// The rungs of a family's run: `threads` when given (`--threads`), else the natural
    /// ladder, cut to at most `max_rungs` ([`Ladder::cut`]) when a budget asks for fewer.
    pub fn select(
        topo: &Topology,
        cpus: &[usize],
        threads: Option<&Threads>,
        max_rungs: Option<usize>,
    ) -> Ladder {
        match threads {
            Some(t) => Ladder::of_counts(topo, cpus, &t.counts(cpus.len())),
            None => {
                let l = Ladder::of(topo, cpus);
                match max_rungs {
                    Some(m) => l.cut(m),
                    None => l,
                }
            }
        }
    }

    /// At most `max` rungs (at least two where there are two): all CPUs and one CPU
    /// first, then the levels from the largest down, then the powers of two spread over
    /// the rest.
    pub fn cut(mut self, max: usize) -> Ladder {
        let max = max.max(2);
        if self.rungs.len() <= max {
            return self;
        }
        let n = self.rungs.len();
        let mut keep: Vec<usize> = vec![n - 1, 0];
        let mut levels: Vec<usize> = (1..n - 1)
            .filter(|&i| !self.rungs[i].levels.is_empty())
            .collect();
        levels.reverse();
        for i in levels {
            if keep.len() < max {
                keep.push(i);
            }
        }
        let rest: Vec<usize> = (1..n - 1).filter(|i| !keep.contains(i)).collect();
        let room = max.saturating_sub(keep.len());
        for j in 0..room.min(rest.len()) {
            // Evenly over the remaining counts.
            keep.push(rest[(j * rest.len()) / room.min(rest.len())]);
        }
        keep.sort_unstable();
        keep.dedup();
        let mut i = 0;
        self.rungs.retain(|_| {
            let k = keep.contains(&i);
            i += 1;
            k
        });
        self
    }

    /// The thread counts.
    pub fn counts(&self) -> Vec<usize> {
        self.rungs.iter().map(|r| r.threads).collect()
    }

    /// The rung of `threads` threads, if the ladder has one.
    pub fn rung(&self, threads: usize) -> Option<&Rung> {
        self.rungs.iter().find(|r| r.threads == threads)
    }

    /// The largest rung.
    pub fn top(&self) -> Option<&Rung> {
        self.rungs.last()
    }
}

/// The instance of each level that holds the first CPU, within the set, nearest first.
fn level_sets(places: &Places, order: &[usize]) -> Vec<(Level, Vec<usize>)> {
    let first = places.places[0];
    let pick = |f: &dyn Fn(&super::places::Place) -> bool| -> Vec<usize> {
        order
            .iter()
            .copied()
            .filter(|&c| places.get(c).is_some_and(f))
            .collect()
    };
    let mut v = Vec::new();
    let core = pick(&|p| p.core == first.core);
    if core.len() > 1 {
        v.push((Level::Core, core.clone()));
    } else {
        v.push((Level::Core, vec![first.cpu]));
    }
    let l2 = pick(&|p| p.l2 == first.l2);
    v.push((Level::L2, l2));
    v.push((Level::Llc, pick(&|p| p.llc == first.llc)));
    v.push((Level::Node, pick(&|p| p.node == first.node)));
    v.push((Level::Socket, pick(&|p| p.socket == first.socket)));
    v.push((Level::All, order.to_vec()));
    v
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("one {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `one L3, one node: 16 CPUs`, or `8 CPUs (8 cores in one L3, one node, one socket)`.
fn label(places: &Places, r: &Rung) -> String {
    let cpus = plural(r.threads, "CPU", "CPUs");
    if !r.levels.is_empty() {
        let names: Vec<String> = r.levels.iter().map(|l| l.name(places.llc_level)).collect();
        return format!("{}: {cpus}", names.join(", "));
    }
    let Span {
        cores,
        llcs,
        nodes,
        sockets,
        ..
    } = places.span(&r.cpus);
    let llc = match places.llc_level {
        Some(l) => format!("L{l}"),
        None => "LLC".into(),
    };
    format!(
        "{cpus} ({} in {}, {}, {})",
        plural(cores, "core", "cores"),
        plural(llcs, &llc, &format!("{llc}s")),
        plural(nodes, "node", "nodes"),
        plural(sockets, "socket", "sockets"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixtures::{write_server, Server};

    fn ladder(s: &Server) -> Ladder {
        let cpus: Vec<usize> = (0..s.cpus).collect();
        Ladder::of(&s.topology(), &cpus)
    }

    #[test]
    fn the_ladder_reads_sysfs() {
        let s = Server::intel_2s_snc();
        let dir = tempfile::tempdir().unwrap();
        write_server(dir.path(), &s).unwrap();
        let cpus: Vec<usize> = (0..s.cpus).collect();
        let l = Ladder::of(&Topology::read(dir.path()), &cpus);
        assert_eq!(l.counts(), [1, 2, 4, 8, 16, 32]);
        assert_eq!(l.rung(2).unwrap().cpus, [0, 16]);
        assert_eq!(l.rung(8).unwrap().levels, [Level::Node]);
        assert_eq!(l.rung(16).unwrap().levels, [Level::Llc, Level::Socket]);
    }

    #[test]
    fn the_16_core_host_has_five_rungs() {
        let l = ladder(&Server::h200_host());
        assert_eq!(l.counts(), [1, 2, 4, 8, 16]);
        assert_eq!(l.rungs[0].label, "one core, one L2: one CPU");
        assert_eq!(
            l.rungs[4].label,
            "one L3, one node, one socket, all CPUs: 16 CPUs"
        );
        assert_eq!(l.rungs[2].cpus, [0, 1, 2, 3]);
        assert_eq!(
            l.rungs[2].label,
            "4 CPUs (4 cores in one L3, one node, one socket)"
        );
    }

    #[test]
    fn two_epyc_sockets_have_their_ccx_socket_and_smt_rungs() {
        let l = ladder(&Server::epyc_2s_96c());
        assert_eq!(
            l.counts(),
            [1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 384],
            "{l:#?}"
        );
        let core = l.rung(2).unwrap();
        assert_eq!(core.cpus, [0, 192], "one core's two threads");
        assert_eq!(core.levels, [Level::Core, Level::L2]);
        let ccx = l.rung(16).unwrap();
        assert_eq!(ccx.levels, [Level::Llc]);
        assert_eq!(ccx.label, "one L3: 16 CPUs");
        assert_eq!(&ccx.cpus[..8], [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(l.rung(8).unwrap().cpus, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(l.rung(8).unwrap().label.contains("8 cores in one L3"));
        let socket = l.rung(192).unwrap();
        assert_eq!(socket.levels, [Level::Node, Level::Socket]);
        assert!(socket.cpus.iter().all(|&c| c % 192 < 96));
        assert_eq!(l.rung(384).unwrap().levels, [Level::All]);
    }

    #[test]
    fn snc2_xeon_has_a_node_rung_below_its_socket() {
        let l = ladder(&Server::xeon_2s_56c_snc2());
        assert_eq!(
            l.counts(),
            [1, 2, 4, 8, 16, 32, 56, 64, 112, 128, 224],
            "{l:#?}"
        );
        assert_eq!(l.rung(56).unwrap().levels, [Level::Node]);
        assert_eq!(l.rung(112).unwrap().levels, [Level::Llc, Level::Socket]);
    }

    #[test]
    fn five_hundred_seventy_six_cpus_take_twelve_rungs() {
        let l = ladder(&Server::four_socket_144c());
        assert_eq!(
            l.counts(),
            [1, 2, 4, 8, 16, 32, 64, 128, 144, 256, 512, 576]
        );
        assert_eq!(
            l.rung(144).unwrap().levels,
            [Level::Llc, Level::Node, Level::Socket]
        );
    }

    #[test]
    fn two_vcpus_are_one_cpu_and_both() {
        let l = ladder(&Server::guest_2vcpu_amd());
        assert_eq!(l.counts(), [1, 2]);
        assert_eq!(l.rungs[1].cpus, [0, 1]);
    }

    #[test]
    fn counts_asked_for_take_rungs_where_there_are_some() {
        let t = Server::epyc_2s_96c().topology();
        let cpus: Vec<usize> = (0..384).collect();
        let l = Ladder::of_counts(&t, &cpus, &[3, 16, 16]);
        assert_eq!(l.counts(), [3, 16]);
        assert_eq!(l.rungs[0].cpus, [0, 1, 2]);
        assert_eq!(l.rungs[1].label, "one L3: 16 CPUs");
        let every = Ladder::select(&t, &cpus[..8], Some(&Threads::Every), None);
        assert_eq!(every.counts(), (1..=8).collect::<Vec<_>>());
    }

    #[test]
    fn a_cut_keeps_the_ends_and_the_levels() {
        let l = ladder(&Server::epyc_2s_96c()).cut(5);
        assert_eq!(l.counts(), [1, 2, 16, 192, 384], "{:?}", l.counts());
        let l = ladder(&Server::epyc_2s_96c()).cut(8);
        assert_eq!(l.rungs.len(), 8);
        assert!(l.rung(1).is_some() && l.rung(384).is_some());
        assert_eq!(ladder(&Server::h200_host()).cut(1).counts(), [1, 16]);
    }

    #[test]
    fn thread_lists_parse() {
        assert_eq!("every".parse::<Threads>(), Ok(Threads::Every));
        assert_eq!(
            "1,2, 3".parse::<Threads>(),
            Ok(Threads::List(vec![1, 2, 3]))
        );
        assert!("x".parse::<Threads>().is_err());
        assert!(Threads::Every.check("--threads", "thread", 2).is_ok());
        assert!(Threads::List(vec![1, 2])
            .check("--threads", "thread", 2)
            .is_ok());
        // Too many, or none: one message naming the count, the CPUs and what fits.
        let e = Threads::List(vec![1, 3])
            .check("--threads", "thread", 2)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--threads 3: 3 threads requested but only 1 to 2 fit: one thread per CPU, and the run has 2 CPUs (--cpu, else every CPU this process may use)"
        );
        let zero: Threads = "0".parse().unwrap();
        let e = zero.check("--agents", "agent", 1).unwrap_err();
        assert_eq!(e.asked, 0);
        assert!(e.to_string().starts_with("--agents 0: 0 agents requested but at least 1 is needed and only 1 fits: one agent per CPU, and the run has one CPU ("), "{e}");
    }
}
