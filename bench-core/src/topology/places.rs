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
use crate::sysfs::read_trim;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The sockets (packages) and SMT sibling groups of the online CPUs below `root`, as CPU
/// lists: sockets in package-id order; sibling groups only where a core runs more than one
/// CPU. Both empty when sysfs has no `topology` directories.
pub fn read_sockets_and_smt(root: &Path) -> (Vec<String>, Vec<String>) {
    let base = root.join("sys/devices/system/cpu");
    let cpus: Vec<usize> = match read_trim(&base.join("online")) {
        Some(s) if !s.is_empty() => parse_cpu_list(&s).unwrap_or_default(),
        _ => fs::read_dir(&base)
            .map(|rd| {
                let mut v: Vec<usize> = rd
                    .filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
                    .collect();
                v.sort_unstable();
                v
            })
            .unwrap_or_default(),
    };
    let mut sockets: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    let mut smt: Vec<Vec<usize>> = Vec::new();
    for cpu in cpus {
        let dir = base.join(format!("cpu{cpu}/topology"));
        if let Some(p) = read_trim(&dir.join("physical_package_id")).and_then(|s| s.parse().ok()) {
            sockets.entry(p).or_default().push(cpu);
        }
        let siblings = read_trim(&dir.join("thread_siblings_list"))
            .or_else(|| read_trim(&dir.join("core_cpus_list")))
            .and_then(|s| parse_cpu_list(&s).ok())
            .unwrap_or_default();
        if siblings.len() > 1 {
            let mut s = siblings;
            s.sort_unstable();
            if !smt.contains(&s) {
                smt.push(s);
            }
        }
    }
    smt.sort();
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
}

impl Places {
    /// The places of `cpus` on `topo`.
    pub fn of(topo: &Topology, cpus: &[usize]) -> Places {
        let sockets: Vec<Vec<usize>> = topo
            .sockets
            .iter()
            .map(|s| parse_cpu_list(s).unwrap_or_default())
            .collect();
        let smt: Vec<Vec<usize>> = topo
            .smt_siblings
            .iter()
            .map(|s| parse_cpu_list(s).unwrap_or_default())
            .collect();
        let inst: Vec<(u8, Vec<usize>)> = topo
            .cache_instances
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| (c.level, parse_cpu_list(&c.cpus).unwrap_or_default()))
            .collect();
        let llc_level = inst.iter().map(|(l, _)| *l).max();
        let none = usize::MAX / 2;
        let mut places = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let socket = sockets.iter().position(|s| s.contains(&cpu)).unwrap_or(0);
            let node = topo
                .nodes
                .iter()
                .find(|n| n.cpus.contains(&cpu))
                .map_or(0, |n| n.id);
            // The highest level instance of this CPU, and its level-2 one.
            let own: Vec<(usize, u8)> = inst
                .iter()
                .enumerate()
                .filter(|(_, (_, c))| c.contains(&cpu))
                .map(|(i, (l, _))| (i, *l))
                .collect();
            let llc = own
                .iter()
                .max_by_key(|(_, l)| *l)
                .map_or(none + cpu, |(i, _)| *i);
            let l2 = own
                .iter()
                .find(|(_, l)| *l == 2)
                .map_or(none + cpu, |(i, _)| *i);
            let (core, thread) = match smt.iter().position(|g| g.contains(&cpu)) {
                Some(g) => (g, smt[g].iter().position(|&c| c == cpu).unwrap_or(0)),
                None => (none + cpu, 0),
            };
            places.push(Place {
                cpu,
                socket,
                node,
                llc,
                l2,
                core,
                thread,
            });
        }
        let l2_shared_by_cores = inst.iter().any(|(l, c)| {
            *l == 2
                && c.len() > 1
                && smt
                    .iter()
                    .filter(|g| g.iter().any(|x| c.contains(x)))
                    .count()
                    != 1
        });
        Places {
            places,
            llc_level,
            l2_shared_by_cores,
        }
    }

    /// The place of `cpu`, if it is in the set.
    pub fn get(&self, cpu: usize) -> Option<&Place> {
        self.places.iter().find(|p| p.cpu == cpu)
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
        let mut s = Span::default();
        let mut seen = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for p in cpus.iter().filter_map(|&c| self.get(c)) {
            push_new(&mut seen.0, p.socket, &mut s.sockets);
            push_new(&mut seen.1, p.node, &mut s.nodes);
            push_new(&mut seen.2, p.llc, &mut s.llcs);
            push_new(&mut seen.3, p.core, &mut s.cores);
        }
        s.cpus = cpus.len();
        s
    }
}

fn push_new(seen: &mut Vec<usize>, x: usize, n: &mut usize) {
    if !seen.contains(&x) {
        seen.push(x);
        *n += 1;
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
