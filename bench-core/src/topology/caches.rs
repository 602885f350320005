//! Every cache instance of the machine, and the caches a set of CPUs can fill together.
//!
//! sysfs describes each CPU's caches (`cpu*/cache/index*/{level,type,size,shared_cpu_list}`);
//! CPUs that list the same sharing set for a level share one instance. A family that runs
//! on a set of CPUs can keep in cache what every distinct instance those CPUs reach holds:
//! one 300 MiB L3 for the 16 cores of a server that share it, twelve 32 MiB L3s for 96
//! cores of an EPYC spread over its CCDs, two L3s for both sockets of a dual-socket machine.
//! [`CacheReach`] sums them: the last-level instances, and the levels between L1 and the
//! last level (a victim L3 plus private L2s hold more than the L3 alone; an inclusive L3
//! makes that sum an overestimate, which only makes a DRAM working set safer). L1 is left
//! out: at 32-64 KiB per core it never matters next to the levels above it.

use crate::pin::{format_cpu_list, parse_cpu_list};
use crate::sysfs::{read_trim, read_u64, CpuLists};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;
use std::rc::Rc;

/// One cache instance: a level and type, its size, and the CPUs that share it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheInstance {
    /// 1, 2, 3, ...
    pub level: u8,
    /// `Data` or `Unified` (instruction caches are not recorded).
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: usize,
    /// CPUs sharing it, as a CPU list (`0-15`).
    pub cpus: String,
}

impl CacheInstance {
    fn cpu_set(&self) -> Vec<usize> {
        parse_cpu_list(&self.cpus).unwrap_or_default()
    }
}

/// The caches a set of CPUs can fill together: every distinct instance of level 2 and up
/// that one of them uses (level 1 where a CPU has nothing else).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheReach {
    /// The CPUs, as a CPU list.
    pub cpus: String,
    /// Sum of the distinct last-level instances (each CPU's highest level).
    pub llc_bytes: usize,
    /// How many distinct last-level instances.
    pub llc_instances: usize,
    /// Sum of the distinct instances below the last level (L2s, from level 2 up).
    pub mid_bytes: usize,
    /// How many distinct instances below the last level.
    pub mid_instances: usize,
    /// `llc_bytes + mid_bytes`: what a working set must exceed to leave every cache.
    pub total_bytes: usize,
}

impl CacheReach {
    /// In words: `L3 300M (1 instance) + L2 32M (16 instances) of CPUs 0-15`.
    pub fn describe(&self) -> String {
        use crate::units::format_size;
        let inst = |n: usize| if n == 1 { "instance" } else { "instances" };
        let mut s = format!(
            "LLC {} ({} {})",
            format_size(self.llc_bytes),
            self.llc_instances,
            inst(self.llc_instances)
        );
        if self.mid_instances > 0 {
            s.push_str(&format!(
                " + L2 {} ({} {})",
                format_size(self.mid_bytes),
                self.mid_instances,
                inst(self.mid_instances)
            ));
        }
        s.push_str(&format!(" of CPUs {}", self.cpus));
        s
    }
}

/// An instance as the CPUs list it: level, `Data` or `Unified`, and which sharing list
/// (the number of its text, or one of its own for a list that lacked the CPU reading it).
type ListedAs = (u8, &'static str, usize);

/// Reads every data and unified cache instance of the online CPUs below `root`. Each
/// distinct sharing list is parsed once and the CPUs that list it are counted against it
/// by its number, so the work grows with the CPUs, not with the CPUs times their sharers.
pub fn read_instances(root: &Path) -> Vec<CacheInstance> {
    let base = root.join("sys/devices/system/cpu");
    let mut lists = CpuLists::new();
    let mut by_list: HashMap<ListedAs, (usize, Rc<[usize]>)> = HashMap::new();
    let mut own_lists = usize::MAX;
    for cpu in super::places::online_cpus(&base) {
        let dir = base.join(format!("cpu{cpu}/cache"));
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name();
            if !name.to_string_lossy().starts_with("index") {
                continue;
            }
            let d = e.path();
            let level = read_u64(&d.join("level")).unwrap_or(0) as u8;
            // Instruction caches are not recorded (nor a type sysfs does not write).
            let kind = match read_trim(&d.join("type")).as_deref() {
                Some("Data") => "Data",
                Some("Unified") => "Unified",
                _ => continue,
            };
            let size = read_trim(&d.join("size"))
                .and_then(|s| crate::units::parse_size(&s).ok())
                .unwrap_or(0);
            if level == 0 || size == 0 {
                continue;
            }
            let file = d.join("shared_cpu_list");
            let (id, shared) = match lists.read(&file) {
                Some(l) if l.cpus.binary_search(&cpu).is_ok() => (l.id, l.cpus),
                listed => {
                    // A CPU always shares its own cache: a set of its own.
                    let listed = listed.map_or_else(Vec::new, |l| l.cpus.to_vec());
                    if !lists.charge(listed.len() + 1, &file) {
                        continue;
                    }
                    let mut v = listed;
                    v.push(cpu);
                    v.sort_unstable();
                    own_lists -= 1;
                    (own_lists, Rc::from(v))
                }
            };
            by_list.entry((level, kind, id)).or_insert((size, shared));
        }
    }
    // Lists that say the same in other words (`0-3`, `0,1,2,3`) are one instance; in
    // (level, type, CPUs) order.
    let mut v: Vec<(u8, &str, usize, Rc<[usize]>)> = by_list
        .into_iter()
        .map(|((level, kind, _), (size, cpus))| (level, kind, size, cpus))
        .collect();
    v.sort_by(|a, b| (a.0, a.1, &a.3, a.2).cmp(&(b.0, b.1, &b.3, b.2)));
    v.dedup_by(|b, a| (a.0, a.1, &a.3) == (b.0, b.1, &b.3));
    v.into_iter()
        .map(|(level, kind, size_bytes, cpus)| CacheInstance {
            level,
            kind: kind.to_string(),
            size_bytes,
            cpus: format_cpu_list(&cpus),
        })
        .collect()
}

/// The caches `cpus` can fill together (see [`CacheReach`]); `None` when no instance of
/// any of them is known. Two passes over every instance's CPUs (each CPU's highest level,
/// then the instances at it and below): the work grows with the CPUs listed.
pub fn reach(instances: &[CacheInstance], cpus: &[usize]) -> Option<CacheReach> {
    let limit = crate::pin::CPU_NUMBER_LIMIT;
    let mut wanted = vec![
        false;
        cpus.iter()
            .copied()
            .filter(|&c| c < limit)
            .max()
            .map_or(0, |m| m + 1)
    ];
    for &c in cpus.iter().filter(|&&c| c < limit) {
        wanted[c] = true;
    }
    let sets: Vec<Vec<usize>> = instances
        .iter()
        .map(|c| {
            let mut v = c.cpu_set();
            v.retain(|&x| wanted.get(x).copied().unwrap_or(false));
            v
        })
        .collect();
    let mut top = vec![0u8; wanted.len()];
    for (c, set) in instances.iter().zip(&sets) {
        for &x in set {
            top[x] = top[x].max(c.level);
        }
    }
    let mut llc: BTreeMap<usize, usize> = BTreeMap::new();
    let mut mid: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, (c, set)) in instances.iter().zip(&sets).enumerate() {
        // The last level of one of its CPUs, below it for another (either or both).
        if set.iter().any(|&x| top[x] == c.level) {
            llc.insert(i, c.size_bytes);
        }
        if c.level >= 2 && set.iter().any(|&x| top[x] != c.level) {
            mid.insert(i, c.size_bytes);
        }
    }
    if llc.is_empty() {
        return None;
    }
    let llc_bytes: usize = llc.values().sum();
    let mid_bytes: usize = mid.values().sum();
    Some(CacheReach {
        cpus: format_cpu_list(cpus),
        llc_bytes,
        llc_instances: llc.len(),
        mid_bytes,
        mid_instances: mid.len(),
        total_bytes: llc_bytes + mid_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixtures::{write_server, Server};
    use crate::units::MIB;

    fn instances(s: &Server) -> Vec<CacheInstance> {
        let dir = tempfile::tempdir().unwrap();
        write_server(dir.path(), s).unwrap();
        read_instances(dir.path())
    }

    #[test]
    fn the_h200_host_shares_one_l3_among_sixteen_cores() {
        let inst = instances(&Server::h200_host());
        assert_eq!(inst.iter().filter(|c| c.level == 3).count(), 1);
        assert_eq!(inst.iter().filter(|c| c.level == 2).count(), 16);
        assert!(inst.iter().all(|c| c.kind != "Instruction"));
        let one = reach(&inst, &[0]).unwrap();
        assert_eq!((one.llc_bytes, one.mid_bytes), (300 * MIB, 2 * MIB));
        let all: Vec<usize> = (0..16).collect();
        let r = reach(&inst, &all).unwrap();
        assert_eq!((r.llc_instances, r.mid_instances), (1, 16));
        assert_eq!(r.total_bytes, 332 * MIB);
        assert!(r.describe().contains("CPUs 0-15"), "{}", r.describe());
    }

    #[test]
    fn cpus_without_cache_information_reach_nothing() {
        let inst = instances(&Server::h200_host());
        assert_eq!(reach(&inst, &[99]), None);
        assert_eq!(reach(&[], &[0]), None);
    }
}
