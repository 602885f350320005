//! Where each CPU sits: its socket, NUMA node, last-level and L2 cache instance, core and
//! SMT thread, from sysfs (`cpuN/topology/{physical_package_id,thread_siblings_list}`,
//! the cache instances of [`super::caches`] and the nodes' CPU lists).
//!
//! [`Places`] is what the thread ladder ([`super::ladder`]) and the core-to-core pair
//! classes ([`super::pairs`]) are built from. A machine whose sysfs says nothing about a
//! level has one instance of it (one socket, one node) or none (no cache information:
//! every CPU its own LLC and L2).

use super::Topology;
use crate::pin::{format_cpu_list, parse_cpu_list};
use crate::sysfs::{read_cpu_list, read_trim, CpuLists};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The CPU numbers of the `cpuN` directories below the cpu directory `base`, sorted.
fn cpu_dirs(base: &Path) -> Vec<usize> {
    let mut v: Vec<usize> = fs::read_dir(base)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
                .filter(|&c| c < crate::pin::CPU_NUMBER_LIMIT)
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// The online CPUs below the cpu directory `base` that have a `cpuN` directory there, in
/// the order `online` lists them (without `online`, every `cpuN` directory). A copied tree
/// can list CPUs it holds nothing of: nothing is looked up for those.
pub(crate) fn online_cpus(base: &Path) -> Vec<usize> {
    let dirs = cpu_dirs(base);
    match read_cpu_list(&base.join("online")) {
        Some(v) if !v.is_empty() => v
            .into_iter()
            .filter(|c| dirs.binary_search(c).is_ok())
            .collect(),
        _ => dirs,
    }
}

/// The sockets (packages) and SMT sibling groups of the online CPUs below `root`, as CPU
/// lists: sockets in package-id order; sibling groups only where a core runs more than one
/// CPU. Both empty when sysfs has no `topology` directories.
pub fn read_sockets_and_smt(root: &Path) -> (Vec<String>, Vec<String>) {
    let base = root.join("sys/devices/system/cpu");
    let mut sockets: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    // Each distinct sibling list once (every thread of a core lists the same).
    let mut lists = CpuLists::new();
    let mut smt: BTreeSet<Vec<usize>> = BTreeSet::new();
    for cpu in online_cpus(&base) {
        let dir = base.join(format!("cpu{cpu}/topology"));
        if let Some(p) = read_trim(&dir.join("physical_package_id")).and_then(|s| s.parse().ok()) {
            sockets.entry(p).or_default().push(cpu);
        }
        let siblings = lists
            .read(&dir.join("thread_siblings_list"))
            .or_else(|| lists.read(&dir.join("core_cpus_list")));
        if let Some(l) = siblings.filter(|l| l.new && l.cpus.len() > 1) {
            smt.insert(l.cpus.to_vec());
        }
    }
    (
        sockets.values().map(|v| format_cpu_list(v)).collect(),
        smt.iter().map(|v| format_cpu_list(v)).collect(),
    )
}

/// Where one CPU sits. Instances are numbered within the machine (not within their
/// parent): two CPUs share a level exactly when they have the same number there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The CPU.
    pub cpu: usize,
    /// Its socket (0 where sysfs does not say).
    pub socket: usize,
    /// Its NUMA node.
    pub node: usize,
    /// Its last-level cache instance (each CPU its own where unknown).
    pub llc: usize,
    /// Its L2 instance (each CPU its own where unknown).
    pub l2: usize,
    /// Its core: the SMT sibling group it belongs to.
    pub core: usize,
    /// Which thread of its core it is (0 for the first sibling).
    pub thread: usize,
}

/// The places of a set of CPUs, and what their levels are made of.
#[derive(Debug, Clone)]
pub struct Places {
    /// One per CPU of the set, in the set's order.
    pub places: Vec<Place>,
    /// The cache level of the last-level instances (3 on most servers), if known.
    pub llc_level: Option<u8>,
    /// Whether an L2 instance is shared by more than one core somewhere.
    pub l2_shared_by_cores: bool,
    /// The index in `places` of each CPU number ([`NONE`] where not in the set).
    index: Vec<u32>,
}

/// No entry in a table indexed by CPU number.
const NONE: u32 = u32::MAX;

/// A table indexed by CPU number, at most [`crate::pin::CPU_NUMBER_LIMIT`] entries (every
/// list read parses below it; a larger number has no entry).
struct ByCpu<T: Copy> {
    by: Vec<T>,
    none: T,
    past: T,
}

impl<T: Copy> ByCpu<T> {
    fn new(none: T) -> ByCpu<T> {
        ByCpu {
            by: Vec::new(),
            none,
            past: none,
        }
    }
    fn get(&self, cpu: usize) -> T {
        self.by.get(cpu).copied().unwrap_or(self.none)
    }
    fn slot(&mut self, cpu: usize) -> &mut T {
        if cpu >= crate::pin::CPU_NUMBER_LIMIT {
            self.past = self.none;
            return &mut self.past;
        }
        if cpu >= self.by.len() {
            self.by.resize(cpu + 1, self.none);
        }
        &mut self.by[cpu]
    }
}

/// For each CPU of the lists, the first list that holds it and where in that list: one
/// pass over every list, so the work grows with the CPUs listed.
fn first_holder(lists: &[Vec<usize>]) -> ByCpu<(u32, u32)> {
    let mut of = ByCpu::new((NONE, 0));
    for (i, l) in lists.iter().enumerate() {
        for (k, &cpu) in l.iter().enumerate() {
            let e = of.slot(cpu);
            if e.0 == NONE {
                *e = (i as u32, k as u32);
            }
        }
    }
    of
}

impl Places {
    /// The places of `cpus` on `topo`.
    pub fn of(topo: &Topology, cpus: &[usize]) -> Places {
        let parse = |s: &String| parse_cpu_list(s).unwrap_or_default();
        let sockets: Vec<Vec<usize>> = topo.sockets.iter().map(parse).collect();
        let smt: Vec<Vec<usize>> = topo.smt_siblings.iter().map(parse).collect();
        let inst: Vec<(u8, Vec<usize>)> = topo
            .cache_instances
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| (c.level, parse(&c.cpus)))
            .collect();
        let llc_level = inst.iter().map(|(l, _)| *l).max();
        let socket_of = first_holder(&sockets);
        let core_of = first_holder(&smt);
        let mut node_of = ByCpu::new(NONE);
        for n in &topo.nodes {
            for &cpu in &n.cpus {
                let e = node_of.slot(cpu);
                if *e == NONE {
                    *e = n.id as u32;
                }
            }
        }
        // Each CPU's highest-level instance (the last of that level) and its first L2.
        let mut llc_of = ByCpu::new((0u8, NONE));
        let mut l2_of = ByCpu::new(NONE);
        for (i, (level, set)) in inst.iter().enumerate() {
            for &cpu in set {
                let e = llc_of.slot(cpu);
                if e.1 == NONE || *level >= e.0 {
                    *e = (*level, i as u32);
                }
                if *level == 2 && l2_of.get(cpu) == NONE {
                    *l2_of.slot(cpu) = i as u32;
                }
            }
        }
        let none = usize::MAX / 2;
        let known = |v: u32| (v != NONE).then_some(v as usize);
        let mut places = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let (core, thread) = match core_of.get(cpu) {
                (NONE, _) => (none + cpu, 0),
                (g, k) => (g as usize, k as usize),
            };
            places.push(Place {
                cpu,
                socket: known(socket_of.get(cpu).0).unwrap_or(0),
                node: known(node_of.get(cpu)).unwrap_or(0),
                llc: known(llc_of.get(cpu).1).unwrap_or(none + cpu),
                l2: known(l2_of.get(cpu)).unwrap_or(none + cpu),
                core,
                thread,
            });
        }
        // An L2 whose CPUs are not one SMT group's (no group, or several).
        let l2_shared_by_cores = inst.iter().any(|(l, c)| {
            *l == 2 && c.len() > 1 && {
                let mut groups = c.iter().filter_map(|&x| known(core_of.get(x).0));
                match groups.next() {
                    Some(g) => groups.any(|h| h != g),
                    None => true,
                }
            }
        });
        let mut index = ByCpu::new(NONE);
        for (i, p) in places.iter().enumerate() {
            let e = index.slot(p.cpu);
            if *e == NONE {
                *e = i as u32;
            }
        }
        Places {
            places,
            llc_level,
            l2_shared_by_cores,
            index: index.by,
        }
    }

    /// The place of `cpu`, if it is in the set.
    pub fn get(&self, cpu: usize) -> Option<&Place> {
        match self.index.get(cpu) {
            Some(&i) if i != NONE => Some(&self.places[i as usize]),
            _ => None,
        }
    }

    /// The set's CPUs nearest first: every core's first thread before any second thread;
    /// within that, the first CPU's socket, node, LLC and L2 before the others, then by
    /// socket, node, LLC, L2, core and CPU number. The first `k` of this order are the
    /// CPUs of a thread count `k` that is not a level of the machine.
    pub fn nearest_first(&self) -> Vec<usize> {
        let Some(first) = self.places.first().copied() else {
            return Vec::new();
        };
        let mut v = self.places.clone();
        v.sort_by_key(|p| {
            (
                p.thread,
                p.socket != first.socket,
                p.socket,
                p.node != first.node,
                p.node,
                p.llc != first.llc,
                p.llc,
                p.l2 != first.l2,
                p.l2,
                p.core != first.core,
                p.cpu,
            )
        });
        v.into_iter().map(|p| p.cpu).collect()
    }

    /// How many distinct sockets, nodes, LLCs and cores `cpus` span.
    pub fn span(&self, cpus: &[usize]) -> Span {
        let of: Vec<&Place> = cpus.iter().filter_map(|&c| self.get(c)).collect();
        let distinct = |f: fn(&Place) -> usize| {
            let mut v: Vec<usize> = of.iter().map(|p| f(p)).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        Span {
            cpus: cpus.len(),
            sockets: distinct(|p| p.socket),
            nodes: distinct(|p| p.node),
            llcs: distinct(|p| p.llc),
            cores: distinct(|p| p.core),
        }
    }
}

/// How many of each level a set of CPUs spans.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
// Fields named for what they count.
#[allow(missing_docs)]
pub struct Span {
    pub cpus: usize,
    pub cores: usize,
    pub llcs: usize,
    pub nodes: usize,
    pub sockets: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixtures::{write_server, Server};

    fn places(s: &Server) -> (Topology, Places) {
        let dir = tempfile::tempdir().unwrap();
        write_server(dir.path(), s).unwrap();
        let t = Topology::read(dir.path());
        let cpus: Vec<usize> = (0..s.cpus).collect();
        let p = Places::of(&t, &cpus);
        (t, p)
    }

    #[test]
    fn sockets_and_smt_siblings_come_from_sysfs() {
        let (t, p) = places(&Server::intel_2s_snc());
        assert_eq!(t.sockets, ["0-7,16-23", "8-15,24-31"]);
        assert_eq!(t.smt_siblings.len(), 16);
        assert_eq!(t.smt_siblings[0], "0,16");
        let a = p.get(0).unwrap();
        let b = p.get(16).unwrap();
        assert_eq!((a.core, a.thread, b.thread), (b.core, 0, 1));
        assert_eq!((a.l2, a.llc, a.node), (b.l2, b.llc, b.node));
        assert_ne!(p.get(8).unwrap().socket, a.socket);
        assert_eq!(p.llc_level, Some(3));
        assert!(!p.l2_shared_by_cores);
    }

    #[test]
    fn nearest_first_takes_every_core_before_a_second_thread() {
        let (_, p) = places(&Server::intel_2s_snc());
        let o = p.nearest_first();
        assert_eq!(&o[..4], [0, 1, 2, 3], "node 0's cores first");
        assert_eq!(&o[4..8], [4, 5, 6, 7], "then the rest of socket 0");
        assert_eq!(o[16], 16, "second threads after every core");
        let s = p.span(&o[..8]);
        assert_eq!((s.cores, s.llcs, s.nodes, s.sockets), (8, 1, 2, 1));
    }

    #[test]
    fn a_tree_without_topology_is_one_socket_without_smt() {
        let dir = tempfile::tempdir().unwrap();
        let t = Topology::read(dir.path());
        assert!(t.sockets.is_empty() && t.smt_siblings.is_empty());
        let p = Places::of(&t, &[0, 1]);
        assert_eq!(p.span(&[0, 1]).sockets, 1);
        assert_eq!(p.span(&[0, 1]).cores, 2);
    }
}
