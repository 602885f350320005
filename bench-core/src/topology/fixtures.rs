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
                Level::new(3, "Unified", 60 * 1024, socket),
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
                Level::new(2, "Unified", 2048, core),
                Level::new(3, "Unified", 60 * 1024, socket.clone()),
            ],
            nodes: (0..2)
                .map(|n| Node {
                    cpus: (0..cpus).filter(|&c| socket[c] == n).collect(),
                    mem_kib: 64 * 1024 * 1024,
                })
                .collect(),
            distances: vec![],
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
    }
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
