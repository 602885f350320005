//! What the machine offers, read from sysfs: NUMA nodes, CPU caches, dax devices and
//! hugepage pools.
//!
//! Every reader takes the filesystem root (normally `/`), so tests run against a fake
//! tree. Missing files mean "not offered", never an error: a machine without NUMA sysfs
//! has one node, one without dax has none.

pub mod caches;
#[doc(hidden)]
pub mod fixtures;
pub mod hmat;
pub mod ladder;
pub mod pairs;
pub mod places;

#[cfg(test)]
mod hostile_tests;

pub use caches::{CacheInstance, CacheReach};

use crate::cxl::{Backing, BackingShare, CxlBus, Range};
use crate::pin::parse_cpu_list;
use crate::sysfs::{read_cpu_list, read_meminfo_bytes, read_trim, read_u64};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// One NUMA node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct NumaNode {
    pub id: usize,
    /// CPUs of the node (empty for a memory-only node).
    pub cpus: Vec<usize>,
    /// Memory of the node in bytes (`MemTotal` of its meminfo).
    pub mem_total_bytes: u64,
    /// SLIT distances to every node, in node order, if the kernel reports them.
    pub distances: Vec<u32>,
    /// A node with memory and no CPUs: how CXL Type-3 expanders and other far memory
    /// appear to Linux. Whether it is CXL is in [`backing`](Self::backing).
    pub likely_far_memory: bool,
    /// For a memory-only node: what backs its online memory (CXL region, CXL window,
    /// NVDIMM, or not CXL), with bytes each, found by address ([`crate::cxl`]). Empty
    /// for nodes with CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backing: Vec<BackingShare>,
    /// The access classes the firmware advertises for the node's memory (ACPI HMAT, or
    /// CDAT for CXL memory; [`hmat`]); empty when none is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<hmat::NodeAccess>,
    /// The memory-side caches in front of the node's memory ([`hmat`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_side_caches: Vec<hmat::MemorySideCache>,
}

impl NumaNode {
    /// Whether every online byte of the node is CXL memory.
    pub fn is_cxl(&self) -> bool {
        !self.backing.is_empty() && self.backing.iter().all(|s| s.backing.is_cxl())
    }

    /// What the node is, for people: `CXL pmem region1 (1-way: mem0 serial 0x1234 ...)`,
    /// `not CXL (...)`, or `DRAM with CPUs 0-3`.
    pub fn describe(&self) -> String {
        if !self.cpus.is_empty() {
            format!("CPUs {}", crate::pin::format_cpu_list(&self.cpus))
        } else if self.mem_total_bytes == 0 {
            "no memory, no CPUs".into()
        } else {
            format!(
                "memory-only: {}",
                crate::cxl::describe_shares(&self.backing)
            )
        }
    }
}

/// One cache as seen by CPU 0.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CacheLevel {
    /// 1, 2, 3, ...
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: usize,
    /// Line size in bytes.
    pub line_bytes: usize,
    /// CPUs sharing this cache, as a CPU list.
    pub shared_cpus: String,
}

/// One device-dax character device (`/dev/daxX.Y`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DaxDevice {
    /// Device name, e.g. `dax0.0`.
    pub name: String,
    /// Device node path, e.g. `/dev/dax0.0`.
    pub path: PathBuf,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Mapping alignment in bytes (mmap offsets and lengths must be multiples).
    pub align_bytes: u64,
    /// NUMA node the memory belongs to, if reported.
    pub target_node: Option<i64>,
    /// `devdax` (bound to `device_dax`: a character device to map) or `system-ram`
    /// (bound to `kmem`: onlined into `target_node`, no character device), when the
    /// driver is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What backs it: a CXL region and its devices, an NVDIMM, or not CXL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<Backing>,
}

impl DaxDevice {
    /// Whether it can be mapped as a character device (not onlined as system RAM).
    pub fn is_devdax(&self) -> bool {
        self.mode.as_deref() != Some("system-ram")
    }
}

/// One hugepage pool.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HugePool {
    /// Page size in bytes.
    pub page_size_bytes: usize,
    /// Pages reserved.
    pub total: u64,
    /// Pages free.
    pub free: u64,
}

/// Everything above, read at once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Topology {
    /// NUMA nodes (at least one).
    pub nodes: Vec<NumaNode>,
    /// Caches of CPU 0, by level.
    pub caches: Vec<CacheLevel>,
    /// Every data and unified cache instance of the online CPUs, with the CPUs that
    /// share it ([`caches`]): what [`Topology::cache_reach`] sums for a set of CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_instances: Vec<CacheInstance>,
    /// The CPUs of each socket (package), as CPU lists in package order; empty when sysfs
    /// does not say ([`places`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<String>,
    /// The SMT sibling groups (CPUs of one core) where a core runs more than one CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub smt_siblings: Vec<String>,
    pub dax: Vec<DaxDevice>,
    pub hugepages: Vec<HugePool>,
    /// The kernel's weighted interleave weights per node
    /// (`/sys/kernel/mm/mempolicy/weighted_interleave/nodeN`, system-wide, never written
    /// by cxlchar); `None` when the kernel has no weighted interleave (before Linux 6.9).
    #[serde(default)]
    pub weighted_interleave: Option<std::collections::BTreeMap<usize, u8>>,
    /// The kernel's CXL bus: memory devices, decoders, regions (empty without CXL).
    #[serde(default, skip_serializing_if = "CxlBus::is_empty")]
    pub cxl: CxlBus,
}

/// Parses a cache size such as `48K`, `2048K`, `32M`.
fn parse_cache_size(s: &str) -> Option<usize> {
    crate::units::parse_size(s).ok()
}

/// The largest NUMA node number a tree may name, plus one: Linux's largest
/// `MAX_NUMNODES` (`CONFIG_NODES_SHIFT` is at most 10). A node list naming more is refused
/// (each node holds a distance to every other: a list of 65536 nodes would be billions).
pub const NODE_NUMBER_LIMIT: usize = 1 << 10;

impl Topology {
    /// Reads the topology below `root` (`/` on a real machine).
    pub fn read(root: &Path) -> Topology {
        let cxl = CxlBus::read(root);
        let dax = read_dax(root, &cxl);
        let mut nodes = read_nodes(root);
        // NVDIMM memory onlined by kmem is told apart from "not CXL" through its dax
        // device's range.
        let nvdimm: Vec<(Range, String)> = dax
            .iter()
            .filter_map(|d| match &d.backing {
                Some(Backing::Nvdimm { nd_region }) => Some((d, nd_region)),
                _ => None,
            })
            .flat_map(|(d, nd)| {
                let dir = root.join("sys/bus/dax/devices").join(&d.name);
                crate::cxl::dax_ranges(&dir)
                    .into_iter()
                    .map(move |r| (r, nd.clone()))
            })
            .collect();
        let driver_ram = crate::cxl::driver_ram(root);
        for n in nodes.iter_mut().filter(|n| n.likely_far_memory) {
            let ranges = crate::cxl::node_ranges(root, n.id);
            n.backing = crate::cxl::node_backing(&cxl, &ranges, &nvdimm, &driver_ram);
        }
        let (sockets, smt_siblings) = places::read_sockets_and_smt(root);
        Topology {
            nodes,
            caches: read_caches(root),
            cache_instances: caches::read_instances(root),
            sockets,
            smt_siblings,
            dax,
            hugepages: read_hugepages(root),
            weighted_interleave: crate::memory::interleave::read_weights(root),
            cxl,
        }
    }

    /// Reads the topology below `root` as [`Topology::read`] does, failing with the first
    /// file refused (not a regular file, too large, a CPU list or a size out of range:
    /// [`crate::sysfs`]) instead of reading it as missing: for another machine's tree.
    pub fn read_checked(root: &Path) -> Result<Topology, crate::sysfs::ReadError> {
        crate::sysfs::checked(|| Topology::read(root))
    }

    /// Reads the topology of this machine.
    pub fn system() -> Topology {
        Self::read(Path::new("/"))
    }

    /// Size of the data (or unified) cache at `level`, if known.
    pub fn cache_bytes(&self, level: u8) -> Option<usize> {
        self.caches
            .iter()
            .find(|c| c.level == level && c.kind != "Instruction")
            .map(|c| c.size_bytes)
    }

    /// Size of the last-level cache, if any cache is known.
    pub fn llc_bytes(&self) -> Option<usize> {
        self.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes)
    }

    /// The caches `cpus` can fill together: every distinct last-level and L2 instance
    /// they use ([`CacheReach`]). Without per-CPU sysfs information, CPU 0's caches stand
    /// for every CPU's (each CPU then counts its own instances of the levels CPU 0 does
    /// not share with it). `None` when no cache size is known at all.
    pub fn cache_reach(&self, cpus: &[usize]) -> Option<CacheReach> {
        let cpus: Vec<usize> = if cpus.is_empty() {
            vec![0]
        } else {
            cpus.to_vec()
        };
        if !self.cache_instances.is_empty() {
            if let Some(r) = caches::reach(&self.cache_instances, &cpus) {
                return Some(r);
            }
        }
        caches::reach(&self.cpu0_as_every_cpu(&cpus), &cpus)
    }

    /// CPU 0's caches copied to `cpus`: an instance CPU 0 shares with a CPU is one
    /// instance, else each CPU has its own.
    fn cpu0_as_every_cpu(&self, cpus: &[usize]) -> Vec<CacheInstance> {
        let mut out = Vec::new();
        for c in self.caches.iter().filter(|c| c.kind != "Instruction") {
            let shared = parse_cpu_list(&c.shared_cpus).unwrap_or_else(|_| vec![0]);
            let mut sorted = shared.clone();
            sorted.sort_unstable();
            let alone: Vec<usize> = cpus
                .iter()
                .copied()
                .filter(|cpu| sorted.binary_search(cpu).is_err())
                .collect();
            let mut push = |set: Vec<usize>| {
                out.push(CacheInstance {
                    level: c.level,
                    kind: c.kind.clone(),
                    size_bytes: c.size_bytes,
                    cpus: crate::pin::format_cpu_list(&set),
                })
            };
            push(shared.clone());
            for cpu in alone {
                push(vec![cpu]);
            }
        }
        out
    }

    /// The node with id `id`.
    pub fn node(&self, id: usize) -> Option<&NumaNode> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The dax device at `path` (`/dev/dax0.0`), if sysfs lists it.
    pub fn dax_device(&self, path: &Path) -> Option<&DaxDevice> {
        self.dax.iter().find(|d| d.path == path)
    }
}

fn read_nodes(root: &Path) -> Vec<NumaNode> {
    let base = root.join("sys/devices/system/node");
    // `online` lists the nodes; without it (a copied tree), the nodeN directories do.
    let ids = read_cpu_list(&base.join("online")).unwrap_or_else(|| {
        let mut v: Vec<usize> = fs::read_dir(&base)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        v.sort_unstable();
        v
    });
    let ids: Vec<usize> = match ids.iter().find(|&&id| id >= NODE_NUMBER_LIMIT) {
        Some(id) => {
            crate::sysfs::record(crate::sysfs::ReadError::Invalid {
                path: base.join("online"),
                what: format!(
                    "node {id} is above the largest node number Linux supports ({})",
                    NODE_NUMBER_LIMIT - 1
                ),
            });
            ids.into_iter()
                .filter(|&id| id < NODE_NUMBER_LIMIT)
                .collect()
        }
        None => ids,
    };
    let mut nodes: Vec<NumaNode> = ids.into_iter().map(|id| read_node(&base, id)).collect();
    if nodes.is_empty() {
        // No NUMA sysfs: one node with every CPU and all memory.
        nodes.push(NumaNode {
            id: 0,
            cpus: read_cpu_list(&root.join("sys/devices/system/cpu/online")).unwrap_or_default(),
            mem_total_bytes: read_meminfo_bytes(&root.join("proc/meminfo"), "MemTotal")
                .unwrap_or(0),
            distances: vec![10],
            likely_far_memory: false,
            backing: Vec::new(),
            access: Vec::new(),
            memory_side_caches: Vec::new(),
        });
    }
    nodes
}

/// Node `id` of the node directory `base`.
fn read_node(base: &Path, id: usize) -> NumaNode {
    let dir = base.join(format!("node{id}"));
    let cpus = read_cpu_list(&dir.join("cpulist")).unwrap_or_default();
    let mem_total_bytes = read_meminfo_bytes(&dir.join("meminfo"), "MemTotal").unwrap_or(0);
    let distances = read_trim(&dir.join("distance"))
        .map(|s| {
            s.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .take(NODE_NUMBER_LIMIT)
                .collect()
        })
        .unwrap_or_default();
    NumaNode {
        id,
        likely_far_memory: cpus.is_empty() && mem_total_bytes > 0,
        backing: Vec::new(),
        access: hmat::read_access(&dir),
        memory_side_caches: hmat::read_memory_side_caches(&dir),
        cpus,
        mem_total_bytes,
        distances,
    }
}

fn read_caches(root: &Path) -> Vec<CacheLevel> {
    let base = root.join("sys/devices/system/cpu/cpu0/cache");
    let mut out = Vec::new();
    for i in 0..16 {
        let dir = base.join(format!("index{i}"));
        if !dir.exists() {
            continue;
        }
        let level = read_u64(&dir.join("level")).unwrap_or(0) as u8;
        let kind = read_trim(&dir.join("type")).unwrap_or_default();
        let size_bytes = read_trim(&dir.join("size"))
            .and_then(|s| parse_cache_size(&s))
            .unwrap_or(0);
        if level == 0 || size_bytes == 0 {
            continue;
        }
        out.push(CacheLevel {
            level,
            kind,
            size_bytes,
            line_bytes: read_u64(&dir.join("coherency_line_size")).unwrap_or(64) as usize,
            shared_cpus: read_trim(&dir.join("shared_cpu_list")).unwrap_or_default(),
        });
    }
    out.sort_by_key(|c| c.level);
    out
}

fn read_dax(root: &Path, cxl: &CxlBus) -> Vec<DaxDevice> {
    let base = root.join("sys/bus/dax/devices");
    let Ok(rd) = fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut out: Vec<DaxDevice> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            if !name.starts_with("dax") {
                return None;
            }
            let dir = e.path();
            let size_bytes = read_u64(&dir.join("size")).unwrap_or(0);
            let align_bytes = read_u64(&dir.join("align"))
                .or_else(|| read_u64(&dir.join("../dax_region/align")))
                .or_else(|| read_u64(&dir.join("dax_region/align")))
                .unwrap_or(2 << 20);
            let target_node = read_trim(&dir.join("target_node")).and_then(|s| s.parse().ok());
            let mode = fs::read_link(dir.join("driver"))
                .ok()
                .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
                .map(|d| match d.as_str() {
                    "kmem" => "system-ram".to_string(),
                    "device_dax" => "devdax".to_string(),
                    other => other.to_string(),
                });
            let backing = fs::canonicalize(&dir)
                .ok()
                .map(|real| crate::cxl::dax_backing(cxl, &real));
            Some(DaxDevice {
                path: PathBuf::from("/dev").join(&name),
                name,
                size_bytes,
                align_bytes,
                target_node,
                mode,
                backing,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn read_hugepages(root: &Path) -> Vec<HugePool> {
    let base = root.join("sys/kernel/mm/hugepages");
    let Ok(rd) = fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut out: Vec<HugePool> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let kb: usize = name
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            let Some(page_size_bytes) = kb.checked_mul(1024) else {
                crate::sysfs::record(crate::sysfs::ReadError::Invalid {
                    path: e.path(),
                    what: format!("a page of {kb} kB is more bytes than 64 bits hold"),
                });
                return None;
            };
            Some(HugePool {
                page_size_bytes,
                total: read_u64(&e.path().join("nr_hugepages")).unwrap_or(0),
                free: read_u64(&e.path().join("free_hugepages")).unwrap_or(0),
            })
        })
        .collect();
    out.sort_by_key(|p| p.page_size_bytes);
    out
}

/// Writes a fake sysfs tree for tests: two nodes (node 1 memory-only), caches
/// 32K/1M/32M, one dax device, a 2 MiB hugepage pool with no pages.
#[doc(hidden)]
pub fn write_fake_sysfs(root: &Path) -> std::io::Result<()> {
    let w = |rel: &str, body: &str| -> std::io::Result<()> {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap())?;
        fs::write(p, body)
    };
    w("sys/devices/system/node/online", "0-1\n")?;
    w("sys/devices/system/node/node0/cpulist", "0-1\n")?;
    w(
        "sys/devices/system/node/node0/meminfo",
        "Node 0 MemTotal:       16384000 kB\nNode 0 MemFree: 1 kB\n",
    )?;
    w("sys/devices/system/node/node0/distance", "10 20\n")?;
    w("sys/devices/system/node/node1/cpulist", "\n")?;
    w(
        "sys/devices/system/node/node1/meminfo",
        "Node 1 MemTotal:       446464 kB\n",
    )?;
    w("sys/devices/system/node/node1/distance", "20 10\n")?;
    for (i, (lvl, ty, sz)) in [
        (1, "Data", "32K"),
        (1, "Instruction", "32K"),
        (2, "Unified", "1024K"),
        (3, "Unified", "32768K"),
    ]
    .iter()
    .enumerate()
    {
        let d = format!("sys/devices/system/cpu/cpu0/cache/index{i}");
        w(&format!("{d}/level"), &format!("{lvl}\n"))?;
        w(&format!("{d}/type"), &format!("{ty}\n"))?;
        w(&format!("{d}/size"), &format!("{sz}\n"))?;
        w(&format!("{d}/coherency_line_size"), "64\n")?;
        w(&format!("{d}/shared_cpu_list"), "0\n")?;
    }
    w("sys/bus/dax/devices/dax0.0/size", "197132288\n")?;
    w("sys/bus/dax/devices/dax0.0/align", "2097152\n")?;
    w("sys/bus/dax/devices/dax0.0/target_node", "1\n")?;
    w(
        "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
        "0\n",
    )?;
    w(
        "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
        "0\n",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_sysfs(dir.path()).unwrap();
        let t = Topology::read(dir.path());
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(t.nodes[0].cpus, vec![0, 1]);
        assert!(!t.nodes[0].likely_far_memory);
        assert!(t.nodes[1].cpus.is_empty());
        assert_eq!(t.nodes[1].mem_total_bytes, 446464 * 1024);
        assert!(t.nodes[1].likely_far_memory);
        assert_eq!(t.nodes[1].distances, vec![20, 10]);
        assert_eq!(t.cache_bytes(1), Some(32 * 1024));
        assert_eq!(t.cache_bytes(2), Some(1 << 20));
        assert_eq!(t.llc_bytes(), Some(32 << 20));
        assert_eq!(t.dax.len(), 1);
        assert_eq!(t.dax[0].path, PathBuf::from("/dev/dax0.0"));
        assert_eq!(t.dax[0].align_bytes, 2 << 20);
        assert_eq!(t.dax[0].target_node, Some(1));
        assert_eq!(
            t.hugepages,
            vec![HugePool {
                page_size_bytes: 2 << 20,
                total: 0,
                free: 0
            }]
        );
    }

    #[test]
    fn nodes_carry_what_the_firmware_advertises() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_sysfs(dir.path()).unwrap();
        let c = hmat::AccessCoords {
            read_latency_ns: Some(300),
            read_bandwidth_mbs: Some(30000),
            ..Default::default()
        };
        hmat::write_fake_access(dir.path(), 1, 1, &[0], &c).unwrap();
        let t = Topology::read(dir.path());
        assert!(t.nodes[0].access.is_empty(), "node 0 advertises nothing");
        assert_eq!(t.nodes[1].access.len(), 1);
        assert_eq!(t.nodes[1].access[0].coords, c);
        let (a, listed) = hmat::advertised_for(&t.nodes[1].access, 0).unwrap();
        assert!(listed);
        assert_eq!(a.coords.read_bandwidth_gbs(), Some(30.0));
    }

    #[test]
    fn empty_tree_means_nothing_offered() {
        let dir = tempfile::tempdir().unwrap();
        let t = Topology::read(dir.path());
        assert_eq!(
            t.nodes.len(),
            1,
            "a machine without NUMA sysfs has one node"
        );
        assert!(t.caches.is_empty() && t.dax.is_empty() && t.hugepages.is_empty());
        assert_eq!(t.llc_bytes(), None);
    }

    #[test]
    fn this_machine_has_a_node_and_caches() {
        let t = Topology::system();
        assert!(!t.nodes.is_empty());
    }
}
