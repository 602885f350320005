//! CPU pairs by what they share, for core-to-core transfers: the classes MLC's
//! `--c2c_latency` reports (a line moving inside a core, inside an L3, across L3s, across
//! sockets) instead of every one of n (n - 1) / 2 pairs.
//!
//! [`PairClass::of`] classifies two CPUs from sysfs ([`Places`]); [`sample`] picks a fixed
//! number of pairs per class, spread over the machine (each CPU in as few pairs as it can
//! be) in an order fixed by the run's seed, so a 576-CPU machine measures a few dozen pairs
//! rather than 165,600.

use super::places::{Place, Places};
use super::Topology;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

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

/// Every pair of `cpus` by class (classes the set has, nearest first).
pub fn classify(topo: &Topology, cpus: &[usize]) -> Vec<(PairClass, Vec<(usize, usize)>)> {
    let places = Places::of(topo, cpus);
    let mut by: Vec<(PairClass, Vec<(usize, usize)>)> =
        PairClass::ALL.iter().map(|&c| (c, Vec::new())).collect();
    for (i, a) in places.places.iter().enumerate() {
        for b in &places.places[i + 1..] {
            let c = PairClass::of(a, b);
            let (x, y) = (a.cpu.min(b.cpu), a.cpu.max(b.cpu));
            by[c as usize].1.push((x, y));
        }
    }
    by.retain(|(_, v)| !v.is_empty());
    by
}

/// `per_class` pairs of each class of `cpus` (all of a class that has fewer), spread over
/// the machine: in an order shuffled with `seed`, a pair whose CPUs no picked pair of the
/// class uses yet comes before one that reuses a CPU.
pub fn sample(topo: &Topology, cpus: &[usize], per_class: usize, seed: u64) -> Vec<ClassPairs> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    classify(topo, cpus)
        .into_iter()
        .map(|(class, mut all)| {
            let total = all.len();
            all.shuffle(&mut rng);
            let mut used: Vec<usize> = Vec::new();
            let mut picked: Vec<(usize, usize)> = Vec::new();
            for &(a, b) in &all {
                if picked.len() >= per_class {
                    break;
                }
                if !used.contains(&a) && !used.contains(&b) {
                    picked.push((a, b));
                    used.extend([a, b]);
                }
            }
            for &p in &all {
                if picked.len() >= per_class {
                    break;
                }
                if !picked.contains(&p) {
                    picked.push(p);
                }
            }
            ClassPairs {
                class,
                total,
                pairs: picked,
            }
        })
        .collect()
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
