//! sysfs trees of server topologies for tests: CPUs with their caches (and who shares
//! them) and NUMA nodes, written below a temporary root that [`super::Topology::read`]
//! takes instead of `/`.
//!
//! * [`Server::h200_host`]: the 16-core Intel Xeon guest of `shared/server-runs`
//!   (family 6 model 207): L2 2 MiB per core, one 300 MiB L3 shared by all 16, one node.
//! * [`Server::intel_2s_snc`]: two sockets of 8 cores x 2 threads, L2 2 MiB per core, a
//!   60 MiB L3 per socket, sub-NUMA clustering (SNC2: four nodes of 4 cores each).
//! * [`Server::epyc_12ccd`]: an AMD EPYC with 96 cores x 2 threads on 12 CCDs, L2 1 MiB
//!   per core, a 32 MiB L3 per CCD, NPS2 (two nodes of six CCDs).
//! * [`Server::cxl_host`]: 8 cores, L2 1 MiB each, one 32 MiB L3, and a CPU-less node 1
//!   (a CXL expander as Linux shows one).
//! * [`Server::two_socket`]: two sockets of 16 CPUs, one node each (SLIT 10 / 21).
//! * [`Server::two_socket_cxl`]: the same with two CPU-less nodes 2 and 3 (CXL expanders
//!   behind socket 0 and socket 1: SLIT 14 from their socket, 24 from the other).
//! * Arm servers (Grace Hopper, Grace Superchip, Graviton3, Ampere): [`arm`].
//!
//! * [`Server::epyc_2s_96c`], [`Server::xeon_2s_56c_snc2`], [`Server::four_socket_144c`]:
//!   the big machines the run's plan is tested on (384, 224 and 576 CPUs), with
//!   [`Server::guest_2vcpu_amd`] and [`Server::guest_2vcpu_intel`] ([`Server::machines`]).
//!
//! Each CPU's socket and SMT siblings go to `cpuN/topology`, and a fixture's GPUs to
//! `sys/bus/pci/devices` (NVIDIA, class 0x0302). [`Server::topology`] builds what
//! [`super::Topology::read`] finds in the tree without writing it.
//!
//! Node distances are the SLIT's: 10 to itself, 21 to any other node unless the server
//! says otherwise ([`Server::distances`]; SNC neighbours on one socket are 12 apart).

pub mod arm;

use std::fs;
use std::path::Path;

/// One cache level of a fixture: every CPU has one; CPUs with the same group share it.
#[derive(Debug, Clone)]
pub struct Level {
    /// 1, 2, 3.
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: &'static str,
    /// Size in KiB, as sysfs writes it (`2048K`).
    pub size_kib: u64,
    /// The sharing group of each CPU.
    pub group_of: Vec<usize>,
}

/// One NUMA node of a fixture.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its CPUs (empty for memory-only).
    pub cpus: Vec<usize>,
    /// `MemTotal` in KiB.
    pub mem_kib: u64,
}

/// A server topology to write as a sysfs tree.
#[derive(Debug, Clone)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Server {
    /// What it stands for.
    pub name: &'static str,
    /// Logical CPUs (numbered 0..cpus).
    pub cpus: usize,
    pub levels: Vec<Level>,
    pub nodes: Vec<Node>,
    /// The SLIT, row by row (`distances[a][b]`: node a to node b); empty: 10 to itself,
    /// 21 to every other node.
    pub distances: Vec<Vec<u32>>,
    /// The socket of each CPU (`topology/physical_package_id`); empty: one socket.
    pub socket_of: Vec<usize>,
    /// The core of each CPU (SMT siblings share one: `topology/thread_siblings_list`);
    /// empty: every CPU its own core.
    pub core_of: Vec<usize>,
    /// NVIDIA GPUs on the PCI bus (`sys/bus/pci/devices/*/{vendor,class}`).
    pub gpus: usize,
}

impl Server {
    /// The 16-core, 300 MiB L3 Intel guest beside the H200.
    pub fn h200_host() -> Server {
        let cpus = 16;
        let own: Vec<usize> = (0..cpus).collect();
        Server {
            name: "16-core Intel Xeon (family 6 model 207), one 300 MiB L3",
            cpus,
            levels: vec![
                Level::new(1, "Data", 48, own.clone()),
                Level::new(1, "Instruction", 32, own.clone()),
                Level::new(2, "Unified", 2048, own),
                Level::new(3, "Unified", 300 * 1024, vec![0; cpus]),
            ],
            nodes: vec![Node {
                cpus: (0..cpus).collect(),
                mem_kib: 128 * 1024 * 1024,
            }],
            distances: vec![],
            socket_of: vec![],
            core_of: vec![],
            gpus: 1,
        }
    }

    /// Two Intel sockets with SNC2: CPU c is core c mod 16 (its SMT sibling is c +/- 16),
    /// socket (c mod 16) / 8, node (c mod 16) / 4.
    pub fn intel_2s_snc() -> Server {
        let cpus = 32;
        let core: Vec<usize> = (0..cpus).map(|c| c % 16).collect();
        let socket: Vec<usize> = core.iter().map(|c| c / 8).collect();
        Server {
            name: "2-socket Intel, 8 cores x 2 threads per socket, 60 MiB L3 each, SNC2",
            cpus,
            levels: vec![
                Level::new(1, "Data", 48, core.clone()),
                Level::new(1, "Instruction", 32, core.clone()),
                Level::new(2, "Unified", 2048, core.clone()),
                Level::new(3, "Unified", 60 * 1024, socket.clone()),
            ],
            nodes: (0..4)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| core[c] / 4 == n).collect(),
                    mem_kib: 64 * 1024 * 1024,
                })
                .collect(),
            // Nodes 0, 1 on socket 0, nodes 2, 3 on socket 1.
            distances: (0..4)
                .map(|a| {
                    (0..4)
                        .map(|b| match (a == b, a / 2 == b / 2) {
                            (true, _) => 10,
                            (false, true) => 12,
                            (false, false) => 21,
                        })
                        .collect()
                })
                .collect(),
            socket_of: socket,
            core_of: core,
            gpus: 0,
        }
    }

    /// An AMD EPYC with 12 CCDs: CPU c is core c mod 96, CCD core / 8, node core / 48.
    pub fn epyc_12ccd() -> Server {
        let cpus = 192;
        let core: Vec<usize> = (0..cpus).map(|c| c % 96).collect();
        let ccd: Vec<usize> = core.iter().map(|c| c / 8).collect();
        Server {
            name: "AMD EPYC, 96 cores x 2 threads on 12 CCDs of 32 MiB L3, NPS2",
            cpus,
            levels: vec![
                Level::new(1, "Data", 32, core.clone()),
                Level::new(1, "Instruction", 32, core.clone()),
                Level::new(2, "Unified", 1024, core.clone()),
                Level::new(3, "Unified", 32 * 1024, ccd),
            ],
            nodes: (0..2)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| core[c] / 48 == n).collect(),
                    mem_kib: 384 * 1024 * 1024,
                })
                .collect(),
            distances: vec![],
            socket_of: vec![0; cpus],
            core_of: core,
            gpus: 0,
        }
    }

    /// 8 cores with one 32 MiB L3, and a CPU-less node 1 of 128 GiB.
    pub fn cxl_host() -> Server {
        let cpus = 8;
        let own: Vec<usize> = (0..cpus).collect();
        Server {
            name: "8 cores, one 32 MiB L3, a CPU-less CXL node",
            cpus,
            levels: vec![
                Level::new(1, "Data", 48, own.clone()),
                Level::new(1, "Instruction", 32, own.clone()),
                Level::new(2, "Unified", 1024, own),
                Level::new(3, "Unified", 32 * 1024, vec![0; cpus]),
            ],
            nodes: vec![
                Node {
                    cpus: (0..cpus).collect(),
                    mem_kib: 64 * 1024 * 1024,
                },
                Node {
                    cpus: vec![],
                    mem_kib: 128 * 1024 * 1024,
                },
            ],
            distances: vec![],
            socket_of: vec![],
            core_of: vec![],
            gpus: 0,
        }
    }

    /// Two sockets of 8 cores x 2 threads (CPU c on socket c / 16), L2 2 MiB per core, a
    /// 60 MiB L3 per socket, one NUMA node per socket.
    pub fn two_socket() -> Server {
        let cpus = 32;
        let core: Vec<usize> = (0..cpus).map(|c| c / 2).collect();
        let socket: Vec<usize> = (0..cpus).map(|c| c / 16).collect();
        Server {
            name: "2-socket server, 16 CPUs per socket, one node each",
            cpus,
            levels: vec![
                Level::new(1, "Data", 48, core.clone()),
                Level::new(1, "Instruction", 32, core.clone()),
                Level::new(2, "Unified", 2048, core.clone()),
                Level::new(3, "Unified", 60 * 1024, socket.clone()),
            ],
            nodes: (0..2)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| socket[c] == n).collect(),
                    mem_kib: 64 * 1024 * 1024,
                })
                .collect(),
            distances: vec![],
            socket_of: socket,
            core_of: core,
            gpus: 0,
        }
    }

    /// [`Server::two_socket`] with two CPU-less nodes: node 2 behind socket 0, node 3
    /// behind socket 1 (SLIT 14 from their own socket, 24 from the other, 26 apart).
    pub fn two_socket_cxl() -> Server {
        let mut s = Server::two_socket();
        s.name = "2-socket server with a CXL expander behind each socket";
        for _ in 0..2 {
            s.nodes.push(Node {
                cpus: vec![],
                mem_kib: 128 * 1024 * 1024,
            });
        }
        s.distances = vec![
            vec![10, 21, 14, 24],
            vec![21, 10, 24, 14],
            vec![14, 24, 10, 26],
            vec![24, 14, 26, 10],
        ];
        s
    }

    /// Two AMD EPYC sockets of 96 cores x 2 threads: 12 CCDs of 8 cores per socket, a
    /// 32 MiB L3 per CCD, L2 1 MiB per core, NPS1 (one node per socket). Linux numbers
    /// the first threads 0-191 (socket 0: 0-95) and their siblings 192-383.
    pub fn epyc_2s_96c() -> Server {
        let cpus = 384;
        let core: Vec<usize> = (0..cpus).map(|c| c % 192).collect();
        let socket: Vec<usize> = core.iter().map(|c| c / 96).collect();
        let ccd: Vec<usize> = core.iter().map(|c| c / 8).collect();
        Server {
            name: "2-socket AMD EPYC, 96 cores x 2 threads per socket, 12 CCDs of 32 MiB L3 each, NPS1",
            cpus,
            levels: vec![
                Level::new(1, "Data", 32, core.clone()),
                Level::new(1, "Instruction", 32, core.clone()),
                Level::new(2, "Unified", 1024, core.clone()),
                Level::new(3, "Unified", 32 * 1024, ccd),
            ],
            nodes: (0..2)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| socket[c] == n).collect(),
                    mem_kib: 768 * 1024 * 1024,
                })
                .collect(),
            distances: vec![],
            socket_of: socket,
            core_of: core,
            gpus: 0,
        }
    }

    /// Two Intel Xeon sockets of 56 cores x 2 threads with SNC2: L2 2 MiB per core, a
    /// 105 MiB L3 per socket, two nodes of 28 cores per socket (SLIT 12 between them).
    /// First threads 0-111 (socket 0: 0-55), siblings 112-223.
    pub fn xeon_2s_56c_snc2() -> Server {
        let cpus = 224;
        let core: Vec<usize> = (0..cpus).map(|c| c % 112).collect();
        let socket: Vec<usize> = core.iter().map(|c| c / 56).collect();
        Server {
            name: "2-socket Intel Xeon, 56 cores x 2 threads per socket, 105 MiB L3 each, SNC2",
            cpus,
            levels: vec![
                Level::new(1, "Data", 48, core.clone()),
                Level::new(1, "Instruction", 32, core.clone()),
                Level::new(2, "Unified", 2048, core.clone()),
                Level::new(3, "Unified", 105 * 1024, socket.clone()),
            ],
            nodes: (0..4)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| core[c] / 28 == n).collect(),
                    mem_kib: 256 * 1024 * 1024,
                })
                .collect(),
            distances: (0..4)
                .map(|a| {
                    (0..4)
                        .map(|b| match (a == b, a / 2 == b / 2) {
                            (true, _) => 10,
                            (false, true) => 12,
                            (false, false) => 21,
                        })
                        .collect()
                })
                .collect(),
            socket_of: socket,
            core_of: core,
            gpus: 0,
        }
    }

    /// Four sockets of 144 cores, one thread each (576 CPUs, as the largest Arm
    /// servers): L2 1 MiB per core, a 114 MiB L3 per socket, one node per socket.
    pub fn four_socket_144c() -> Server {
        let cpus = 576;
        let own: Vec<usize> = (0..cpus).collect();
        let socket: Vec<usize> = (0..cpus).map(|c| c / 144).collect();
        Server {
            name: "4-socket server, 144 cores per socket (no SMT), 114 MiB L3 each",
            cpus,
            levels: vec![
                Level::new(1, "Data", 64, own.clone()),
                Level::new(1, "Instruction", 64, own.clone()),
                Level::new(2, "Unified", 1024, own),
                Level::new(3, "Unified", 114 * 1024, socket.clone()),
            ],
            nodes: (0..4)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| socket[c] == n).collect(),
                    mem_kib: 512 * 1024 * 1024,
                })
                .collect(),
            distances: vec![],
            socket_of: socket,
            core_of: vec![],
            gpus: 0,
        }
    }

    /// The 2-vCPU KVM guest of development (AMD EPYC Zen 4): L2 1 MiB per vCPU, one
    /// 32 MiB L3, one node, no SMT.
    pub fn guest_2vcpu_amd() -> Server {
        let own: Vec<usize> = vec![0, 1];
        Server {
            name: "2-vCPU KVM guest, AMD EPYC, one 32 MiB L3",
            cpus: 2,
            levels: vec![
                Level::new(1, "Data", 32, own.clone()),
                Level::new(1, "Instruction", 32, own.clone()),
                Level::new(2, "Unified", 1024, own),
                Level::new(3, "Unified", 32 * 1024, vec![0, 0]),
            ],
            nodes: vec![Node {
                cpus: vec![0, 1],
                mem_kib: 24 * 1024 * 1024,
            }],
            distances: vec![],
            socket_of: vec![],
            core_of: vec![],
            gpus: 0,
        }
    }

    /// A 2-vCPU KVM guest on Intel: L2 2 MiB per vCPU, one 105 MiB L3, one node.
    pub fn guest_2vcpu_intel() -> Server {
        let mut s = Server::guest_2vcpu_amd();
        s.name = "2-vCPU KVM guest, Intel Xeon, one 105 MiB L3";
        s.levels[2].size_kib = 2048;
        s.levels[3].size_kib = 105 * 1024;
        s
    }

    /// Every fixture of a whole machine the plan is tested on, by a short name.
    pub fn machines() -> Vec<(&'static str, Server)> {
        vec![
            ("guest-2vcpu-amd", Server::guest_2vcpu_amd()),
            ("guest-2vcpu-intel", Server::guest_2vcpu_intel()),
            ("h200-host", Server::h200_host()),
            ("epyc-2s-96c", Server::epyc_2s_96c()),
            ("xeon-2s-56c-snc2", Server::xeon_2s_56c_snc2()),
            ("four-socket-144c", Server::four_socket_144c()),
        ]
    }

    /// The topology [`super::Topology::read`] finds in the tree [`write_server`] writes,
    /// built in memory (a 576-CPU tree is thousands of files).
    pub fn topology(&self) -> super::Topology {
        use super::{CacheInstance, CacheLevel, NumaNode, Topology};
        use std::collections::BTreeMap;
        let list = |v: &[usize]| crate::pin::format_cpu_list(v);
        let sharing = |l: &Level, cpu: usize| -> Vec<usize> {
            (0..self.cpus)
                .filter(|&c| l.group_of[c] == l.group_of[cpu])
                .collect()
        };
        let n = self.nodes.len();
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(id, node)| NumaNode {
                id,
                cpus: node.cpus.clone(),
                mem_total_bytes: node.mem_kib * 1024,
                distances: (0..n)
                    .map(|o| match self.distances.get(id).and_then(|r| r.get(o)) {
                        Some(d) => *d,
                        None if o == id => 10,
                        None => 21,
                    })
                    .collect(),
                likely_far_memory: node.cpus.is_empty() && node.mem_kib > 0,
                backing: vec![],
                access: vec![],
                memory_side_caches: vec![],
            })
            .collect();
        let mut caches: Vec<CacheLevel> = self
            .levels
            .iter()
            .map(|l| CacheLevel {
                level: l.level,
                kind: l.kind.to_string(),
                size_bytes: l.size_kib as usize * 1024,
                line_bytes: 64,
                shared_cpus: list(&sharing(l, 0)),
            })
            .collect();
        caches.sort_by_key(|c| c.level);
        let mut inst: BTreeMap<(u8, String, Vec<usize>), usize> = BTreeMap::new();
        for l in self.levels.iter().filter(|l| l.kind != "Instruction") {
            let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for c in 0..self.cpus {
                groups.entry(l.group_of[c]).or_default().push(c);
            }
            for g in groups.into_values() {
                inst.insert((l.level, l.kind.to_string(), g), l.size_kib as usize * 1024);
            }
        }
        let mut sockets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut cores: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for c in 0..self.cpus {
            sockets
                .entry(self.socket_of.get(c).copied().unwrap_or(0))
                .or_default()
                .push(c);
            cores
                .entry(self.core_of.get(c).copied().unwrap_or(c))
                .or_default()
                .push(c);
        }
        let mut smt: Vec<Vec<usize>> = cores.into_values().filter(|g| g.len() > 1).collect();
        smt.sort();
        Topology {
            nodes,
            caches,
            cache_instances: inst
                .into_iter()
                .map(|((level, kind, cpus), size_bytes)| CacheInstance {
                    level,
                    kind,
                    size_bytes,
                    cpus: list(&cpus),
                })
                .collect(),
            sockets: sockets.values().map(|v| list(v)).collect(),
            smt_siblings: smt.iter().map(|v| list(v)).collect(),
            dax: vec![],
            hugepages: vec![],
            weighted_interleave: None,
            cxl: Default::default(),
        }
    }

    /// The CPUs of NUMA node `n`.
    pub fn node_cpus(&self, n: usize) -> Vec<usize> {
        self.nodes[n].cpus.clone()
    }

    /// The CPUs that share the instance of `level` that `cpu` uses.
    pub fn sharing(&self, level: u8, cpu: usize) -> Vec<usize> {
        let l = self
            .levels
            .iter()
            .find(|l| l.level == level && l.kind != "Instruction")
            .expect("level in the fixture");
        (0..self.cpus)
            .filter(|&c| l.group_of[c] == l.group_of[cpu])
            .collect()
    }
}

impl Level {
    fn new(level: u8, kind: &'static str, size_kib: u64, group_of: Vec<usize>) -> Level {
        Level {
            level,
            kind,
            size_kib,
            group_of,
        }
    }
}

/// Writes `s` as a sysfs tree below `root`: `cpu/online`, `cpuN/cache/indexM/*` for every
/// CPU, `node/online`, `nodeN/{cpulist,meminfo,distance}`.
pub fn write_server(root: &Path, s: &Server) -> std::io::Result<()> {
    let w = |rel: String, body: String| -> std::io::Result<()> {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("a file below root"))?;
        fs::write(p, body)
    };
    let list = |v: &[usize]| crate::pin::format_cpu_list(v);
    w(
        "sys/devices/system/cpu/online".into(),
        format!("0-{}\n", s.cpus - 1),
    )?;
    for cpu in 0..s.cpus {
        for (i, l) in s.levels.iter().enumerate() {
            let d = format!("sys/devices/system/cpu/cpu{cpu}/cache/index{i}");
            let shared: Vec<usize> = (0..s.cpus)
                .filter(|&c| l.group_of[c] == l.group_of[cpu])
                .collect();
            w(format!("{d}/level"), format!("{}\n", l.level))?;
            w(format!("{d}/type"), format!("{}\n", l.kind))?;
            w(format!("{d}/size"), format!("{}K\n", l.size_kib))?;
            w(format!("{d}/coherency_line_size"), "64\n".into())?;
            w(
                format!("{d}/shared_cpu_list"),
                format!("{}\n", list(&shared)),
            )?;
        }
        let d = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        let socket = s.socket_of.get(cpu).copied().unwrap_or(0);
        let core = s.core_of.get(cpu).copied().unwrap_or(cpu);
        let siblings: Vec<usize> = (0..s.cpus)
            .filter(|&c| s.core_of.get(c).copied().unwrap_or(c) == core)
            .collect();
        w(format!("{d}/physical_package_id"), format!("{socket}\n"))?;
        w(format!("{d}/core_id"), format!("{core}\n"))?;
        w(
            format!("{d}/thread_siblings_list"),
            format!("{}\n", list(&siblings)),
        )?;
    }
    for g in 0..s.gpus {
        let d = format!("sys/bus/pci/devices/0000:{:02x}:00.0", 0x18 + g);
        w(format!("{d}/vendor"), "0x10de\n".into())?;
        w(format!("{d}/class"), "0x030200\n".into())?;
    }
    write_nodes(root, s)
}

/// Writes the NUMA nodes of `s` below `root`: `node/online`, `nodeN/{cpulist,meminfo,distance}`.
pub fn write_nodes(root: &Path, s: &Server) -> std::io::Result<()> {
    let w = |rel: String, body: String| -> std::io::Result<()> {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("a file below root"))?;
        fs::write(p, body)
    };
    let list = |v: &[usize]| crate::pin::format_cpu_list(v);
    let n = s.nodes.len();
    w(
        "sys/devices/system/node/online".into(),
        format!("0-{}\n", n - 1),
    )?;
    for (id, node) in s.nodes.iter().enumerate() {
        let d = format!("sys/devices/system/node/node{id}");
        w(format!("{d}/cpulist"), format!("{}\n", list(&node.cpus)))?;
        w(
            format!("{d}/meminfo"),
            format!("Node {id} MemTotal:       {} kB\n", node.mem_kib),
        )?;
        let dist: Vec<String> = (0..n)
            .map(|o| match s.distances.get(id).and_then(|row| row.get(o)) {
                Some(d) => d.to_string(),
                None if o == id => "10".into(),
                None => "21".into(),
            })
            .collect();
        w(format!("{d}/distance"), format!("{}\n", dist.join(" ")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_reads_back_as_the_topology_built_in_memory() {
        for s in [
            Server::intel_2s_snc(),
            Server::h200_host(),
            Server::two_socket_cxl(),
        ] {
            let dir = tempfile::tempdir().unwrap();
            write_server(dir.path(), &s).unwrap();
            let mut read = super::super::Topology::read(dir.path());
            // Weighted interleave is the kernel's, not the fixture's.
            read.weighted_interleave = None;
            assert_eq!(read, s.topology(), "{}", s.name);
        }
    }
}

/// Writes every machine of [`Server::machines`] as a sysfs tree below
/// `$CXLCHAR_FIXTURE_DIR/<name>`, for `cxlchar all --plan --sysfs` by hand:
/// `CXLCHAR_FIXTURE_DIR=/tmp/fx cargo test -p bench-core --lib write_fixture_trees -- --ignored`.
#[cfg(test)]
#[test]
#[ignore = "writes files where CXLCHAR_FIXTURE_DIR says"]
fn write_fixture_trees() {
    let dir = std::env::var("CXLCHAR_FIXTURE_DIR").expect("CXLCHAR_FIXTURE_DIR");
    for (name, s) in Server::machines() {
        write_server(&Path::new(&dir).join(name), &s).unwrap();
    }
}
