//! CPU pairs by what they share, for core-to-core transfers: the classes MLC's
//! `--c2c_latency` reports (a line moving inside a core, inside an L3, across L3s, across
//! sockets) instead of every one of n (n - 1) / 2 pairs.
//!
//! [`PairClass::of`] classifies two CPUs from sysfs ([`Places`]); [`classify`] counts the
//! pairs of each class from the sizes of the groups CPUs share (never listing them: a plan
//! of 65536 CPUs has 2^31 pairs); [`sample`] picks a fixed number of pairs per class,
//! spread over the machine (each CPU in as few pairs as it can be) in an order fixed by
//! the run's seed, so a 576-CPU machine measures a few dozen pairs rather than 165,600.

use super::places::{Place, Places};
use super::Topology;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet, VecDeque};

/// What two CPUs share, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairClass {
    /// Two SMT threads of one core.
    Smt,
    /// Two cores that share an L2.
    SameL2,
    /// Two cores that share the last-level cache (an L3, a CCX).
    SameLlc,
    /// Two last-level caches of one NUMA node.
    CrossLlc,
    /// Two nodes of one socket (sub-NUMA clustering, NPS2/4).
    CrossNode,
    /// Two sockets.
    CrossSocket,
}

impl PairClass {
    /// Every class, nearest first.
    pub const ALL: [PairClass; 6] = [
        PairClass::Smt,
        PairClass::SameL2,
        PairClass::SameLlc,
        PairClass::CrossLlc,
        PairClass::CrossNode,
        PairClass::CrossSocket,
    ];

    /// The class of two distinct CPUs.
    pub fn of(a: &Place, b: &Place) -> PairClass {
        if a.socket != b.socket {
            PairClass::CrossSocket
        } else if a.node != b.node {
            PairClass::CrossNode
        } else if a.llc != b.llc {
            PairClass::CrossLlc
        } else if a.core == b.core {
            PairClass::Smt
        } else if a.l2 == b.l2 {
            PairClass::SameL2
        } else {
            PairClass::SameLlc
        }
    }

    /// Its name in ids, keys' methods and parameters (`same-llc`).
    pub fn name(self) -> &'static str {
        match self {
            PairClass::Smt => "smt",
            PairClass::SameL2 => "same-l2",
            PairClass::SameLlc => "same-llc",
            PairClass::CrossLlc => "cross-llc",
            PairClass::CrossNode => "cross-node",
            PairClass::CrossSocket => "cross-socket",
        }
    }

    /// In words.
    pub fn describe(self) -> &'static str {
        match self {
            PairClass::Smt => "SMT siblings (one core)",
            PairClass::SameL2 => "two cores sharing an L2",
            PairClass::SameLlc => "two cores sharing the last-level cache",
            PairClass::CrossLlc => "two last-level caches of one node",
            PairClass::CrossNode => "two nodes of one socket",
            PairClass::CrossSocket => "two sockets",
        }
    }
}

/// The pairs of one class: how many the set has, and those picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassPairs {
    /// The class.
    pub class: PairClass,
    /// How many pairs of the set are of this class.
    pub total: usize,
    /// The pairs picked (lower CPU first).
    pub pairs: Vec<(usize, usize)>,
}

/// How many pairs of `cpus` each class has (the classes the set has, nearest first),
/// counted from the sizes of the groups of CPUs that share a socket, node, LLC, L2 and
/// core: the work grows with the CPUs, never with the n (n - 1) / 2 pairs.
pub fn classify(topo: &Topology, cpus: &[usize]) -> Vec<(PairClass, usize)> {
    counts(&Places::of(topo, cpus))
}

/// [`classify`] of the places of a set.
fn counts(places: &Places) -> Vec<(PairClass, usize)> {
    let p = &places.places;
    // Pairs of CPUs with the same key: the sum over groups of m (m - 1) / 2.
    let sharing = |key: &dyn Fn(&Place) -> [usize; 5]| -> usize {
        let mut keys: Vec<[usize; 5]> = p.iter().map(key).collect();
        keys.sort_unstable();
        keys.chunk_by(|a, b| a == b)
            .map(|g| g.len() * (g.len() - 1) / 2)
            .sum()
    };
    let n = p.len();
    let all = n * n.saturating_sub(1) / 2;
    let socket = sharing(&|x| [x.socket, 0, 0, 0, 0]);
    let node = sharing(&|x| [x.socket, x.node, 0, 0, 0]);
    let llc = sharing(&|x| [x.socket, x.node, x.llc, 0, 0]);
    let core = sharing(&|x| [x.socket, x.node, x.llc, x.core, 0]);
    let l2 = sharing(&|x| [x.socket, x.node, x.llc, x.l2, 0]);
    let l2_core = sharing(&|x| [x.socket, x.node, x.llc, x.l2, x.core]);
    // As PairClass::of decides: socket, node, LLC, then the core before the L2.
    let by = [
        (PairClass::Smt, core),
        (PairClass::SameL2, l2 - l2_core),
        (PairClass::SameLlc, llc - core - (l2 - l2_core)),
        (PairClass::CrossLlc, node - llc),
        (PairClass::CrossNode, socket - node),
        (PairClass::CrossSocket, all - socket),
    ];
    by.into_iter().filter(|&(_, t)| t > 0).collect()
}

/// What two CPUs of a class have in common (the group a pair is drawn from) and what
/// tells them apart within it (two parts of the group): a pair of the class is two CPUs
/// of one group in two parts (for [`PairClass::SameLlc`], of two cores as well).
fn group_and_part(class: PairClass, x: &Place) -> ([usize; 4], usize) {
    match class {
        PairClass::CrossSocket => ([0; 4], x.socket),
        PairClass::CrossNode => ([x.socket, 0, 0, 0], x.node),
        PairClass::CrossLlc => ([x.socket, x.node, 0, 0], x.llc),
        PairClass::SameLlc => ([x.socket, x.node, x.llc, 0], x.l2),
        PairClass::SameL2 => ([x.socket, x.node, x.llc, x.l2], x.core),
        PairClass::Smt => ([x.socket, x.node, x.llc, x.core], x.cpu),
    }
}

/// `per_class` pairs of each class of `cpus` (all of a class that has fewer), spread over
/// the machine, in an order fixed by `seed`. The groups a class's pairs come from are
/// visited in turn (shuffled), and in each group two parts in turn, taking CPUs no picked
/// pair of the class uses yet; once no such pair is left, pairs that reuse a CPU follow.
/// The work grows with the CPUs and the pairs picked, not with every pair of the set.
pub fn sample(topo: &Topology, cpus: &[usize], per_class: usize, seed: u64) -> Vec<ClassPairs> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let places = Places::of(topo, cpus);
    counts(&places)
        .into_iter()
        .map(|(class, total)| ClassPairs {
            class,
            total,
            pairs: pick(&places, class, per_class.min(total), &mut rng),
        })
        .collect()
}

/// `want` pairs of `class` (see [`sample`]).
fn pick(
    places: &Places,
    class: PairClass,
    want: usize,
    rng: &mut rand::rngs::StdRng,
) -> Vec<(usize, usize)> {
    let mut by: BTreeMap<[usize; 4], BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
    for x in &places.places {
        let (g, part) = group_and_part(class, x);
        by.entry(g)
            .or_default()
            .entry(part)
            .or_default()
            .push(x.cpu);
    }
    let mut groups: Vec<Vec<Vec<usize>>> = by
        .into_values()
        .filter(|parts| parts.len() > 1)
        .map(|parts| parts.into_values().collect())
        .collect();
    groups.shuffle(rng);
    for g in &mut groups {
        g.shuffle(rng);
        for part in g.iter_mut() {
            part.shuffle(rng);
        }
    }
    let core = |cpu: usize| places.get(cpu).map(|p| p.core);
    let fits = |a: usize, b: usize| class != PairClass::SameLlc || core(a) != core(b);
    let mut picked: Vec<(usize, usize)> = Vec::new();
    let mut have: HashSet<(usize, usize)> = HashSet::new();
    let mut take = |a: usize, b: usize, picked: &mut Vec<(usize, usize)>| {
        let p = (a.min(b), a.max(b));
        if fits(a, b) && have.insert(p) {
            picked.push(p);
            true
        } else {
            false
        }
    };
    // Pairs of CPUs not used yet: each group in turn, and in it the next two parts that
    // still have a CPU (then the group's parts turn by one, so every two meet).
    let mut turns: VecDeque<(usize, VecDeque<Vec<usize>>)> = groups
        .iter()
        .cloned()
        .map(VecDeque::from)
        .enumerate()
        .collect();
    while picked.len() < want {
        let Some((i, mut parts)) = turns.pop_front() else {
            break;
        };
        let mut next = || loop {
            let mut part = parts.pop_front()?;
            if let Some(cpu) = part.pop() {
                return Some((cpu, part));
            }
        };
        let (Some((a, pa)), Some((b, pb))) = (next(), next()) else {
            continue;
        };
        take(a, b, &mut picked);
        parts.push_front(pb);
        parts.push_back(pa);
        turns.push_back((i, parts));
    }
    // Then pairs that reuse a CPU, group by group, until enough (or, where parts of a
    // group hold one core, a bounded number of candidates was refused).
    let mut refused_left = picked.len() + 4 * places.places.len();
    'groups: for g in &groups {
        for (i, pa) in g.iter().enumerate() {
            for pb in &g[i + 1..] {
                for &a in pa {
                    for &b in pb {
                        if picked.len() >= want || refused_left == 0 {
                            break 'groups;
                        }
                        if !take(a, b, &mut picked) {
                            refused_left -= 1;
                        }
                    }
                }
            }
        }
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixtures::Server;

    fn topo(s: &Server) -> (Topology, Vec<usize>) {
        (s.topology(), (0..s.cpus).collect())
    }

    fn classes(v: &[ClassPairs]) -> Vec<(PairClass, usize)> {
        v.iter().map(|c| (c.class, c.total)).collect()
    }

    #[test]
    fn the_16_core_host_has_one_class() {
        let (t, cpus) = topo(&Server::h200_host());
        let s = sample(&t, &cpus, 8, 1);
        assert_eq!(classes(&s), [(PairClass::SameLlc, 120)]);
        assert_eq!(s[0].pairs.len(), 8);
        let mut cpus_used: Vec<usize> = s[0].pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        cpus_used.sort_unstable();
        cpus_used.dedup();
        assert_eq!(cpus_used.len(), 16, "8 disjoint pairs cover every CPU");
    }

    #[test]
    fn snc2_xeon_has_every_class_but_shared_l2() {
        let (t, cpus) = topo(&Server::xeon_2s_56c_snc2());
        let s = sample(&t, &cpus, 6, 7);
        let c: Vec<PairClass> = s.iter().map(|c| c.class).collect();
        assert_eq!(
            c,
            [
                PairClass::Smt,
                PairClass::SameLlc,
                PairClass::CrossNode,
                PairClass::CrossSocket
            ]
        );
        assert_eq!(s[0].total, 112, "one pair per core");
        assert_eq!(s.iter().map(|c| c.total).sum::<usize>(), 224 * 223 / 2);
        assert!(s.iter().all(|c| c.pairs.len() == 6));
        // The same seed picks the same pairs; another seed others.
        assert_eq!(sample(&t, &cpus, 6, 7), s);
        assert_ne!(sample(&t, &cpus, 6, 8), s);
    }

    #[test]
    fn epyc_pairs_cross_ccx_and_socket() {
        let (t, cpus) = topo(&Server::epyc_2s_96c());
        let s = sample(&t, &cpus, 4, 1);
        let c: Vec<PairClass> = s.iter().map(|c| c.class).collect();
        assert_eq!(
            c,
            [
                PairClass::Smt,
                PairClass::SameLlc,
                PairClass::CrossLlc,
                PairClass::CrossSocket
            ]
        );
        let places = Places::of(&t, &cpus);
        for cp in &s {
            for &(a, b) in &cp.pairs {
                let (pa, pb) = (places.get(a).unwrap(), places.get(b).unwrap());
                assert_eq!(PairClass::of(pa, pb), cp.class);
            }
        }
    }

    #[test]
    fn two_vcpus_are_one_pair() {
        let (t, cpus) = topo(&Server::guest_2vcpu_amd());
        let s = sample(&t, &cpus, 8, 1);
        assert_eq!(classes(&s), [(PairClass::SameLlc, 1)]);
        assert_eq!(s[0].pairs, [(0, 1)]);
    }
}
