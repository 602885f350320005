//! Trees a hostile or broken copy of sysfs can be: FIFOs and devices in place of
//! attributes, sizes that overflow, CPU lists of 65536 CPUs. Each is read without blocking,
//! in a bounded time, and [`Topology::read_checked`] names the file it refused.

use super::fixtures::{write_server, Server};
use super::ladder::Ladder;
use super::pairs::{self, PairClass};
use super::places::Places;
use super::*;
use crate::sysfs::tests::{mkfifo, within_20s};
use std::time::{Duration, Instant};

/// The 2-socket SNC tree (caches, SMT siblings, four nodes) below a new temporary root.
fn snc_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_server(dir.path(), &Server::intel_2s_snc()).unwrap();
    dir
}

/// `read_checked` of `root`, on a thread that may take at most 20 s.
fn checked_within_20s(root: &Path) -> Result<Topology, String> {
    let root = root.to_path_buf();
    within_20s(move || Topology::read_checked(&root).map_err(|e| e.to_string()))
}

#[test]
fn a_fifo_in_place_of_any_attribute_is_refused_by_name() {
    let dir = snc_tree();
    for rel in [
        "sys/devices/system/cpu/online",
        "sys/devices/system/node/online",
        "sys/devices/system/node/node1/meminfo",
        "sys/devices/system/node/node2/distance",
        "sys/devices/system/node/node3/cpulist",
        "sys/devices/system/cpu/cpu0/cache/index0/size",
        "sys/devices/system/cpu/cpu5/cache/index3/shared_cpu_list",
        "sys/devices/system/cpu/cpu7/topology/thread_siblings_list",
        "sys/devices/system/cpu/cpu9/topology/physical_package_id",
    ] {
        // One tree, each file in turn swapped for a FIFO.
        let p = dir.path().join(rel);
        let kept = dir.path().join("kept");
        fs::rename(&p, &kept).unwrap();
        mkfifo(&p);
        let e = checked_within_20s(dir.path()).unwrap_err();
        assert!(
            e.contains(&format!("{}: not a regular file but a FIFO", p.display())),
            "{rel}: {e}"
        );
        // Read unchecked (as this machine's sysfs is), it is only missing.
        let q = dir.path().to_path_buf();
        let t = within_20s(move || Topology::read(&q));
        assert!(!t.nodes.is_empty(), "{rel}");
        fs::remove_file(&p).unwrap();
        fs::rename(&kept, &p).unwrap();
    }
    assert!(checked_within_20s(dir.path()).is_ok());
}

#[test]
fn a_device_in_place_of_an_attribute_is_refused_unread() {
    let dir = snc_tree();
    for (rel, dev) in [
        ("sys/devices/system/cpu/online", "/dev/zero"),
        ("sys/devices/system/node/node0/meminfo", "/dev/urandom"),
        (
            "sys/devices/system/cpu/cpu3/cache/index2/shared_cpu_list",
            "/dev/zero",
        ),
    ] {
        let p = dir.path().join(rel);
        let kept = dir.path().join("kept");
        fs::rename(&p, &kept).unwrap();
        std::os::unix::fs::symlink(dev, &p).unwrap();
        let e = checked_within_20s(dir.path()).unwrap_err();
        assert!(
            e.contains("not a regular file but a character device"),
            "{rel}: {e}"
        );
        fs::remove_file(&p).unwrap();
        fs::rename(&kept, &p).unwrap();
    }
    // Without NUMA sysfs the machine's memory is /proc/meminfo's.
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("proc/meminfo")).unwrap();
    let e = checked_within_20s(dir.path()).unwrap_err();
    assert!(e.contains("proc/meminfo: not a regular file"), "{e}");
}

#[test]
fn a_memtotal_past_64_bits_is_an_error_not_a_zero() {
    let dir = snc_tree();
    let p = dir.path().join("sys/devices/system/node/node1/meminfo");
    // 2^54 kB is 2^64 bytes: it wrapped to 0.
    fs::write(&p, format!("Node 1 MemTotal:       {} kB\n", 1u64 << 54)).unwrap();
    let e = checked_within_20s(dir.path()).unwrap_err();
    assert!(
        e.contains(&format!("{}: MemTotal 18014398509481984 kB", p.display())),
        "{e}"
    );
    // The largest that fits reads exactly.
    let kb = u64::MAX / 1024;
    fs::write(&p, format!("Node 1 MemTotal:       {kb} kB\n")).unwrap();
    let t = checked_within_20s(dir.path()).unwrap();
    assert_eq!(t.nodes[1].mem_total_bytes, kb * 1024);
}

#[test]
fn lists_past_what_linux_supports_are_refused_not_allocated() {
    let dir = snc_tree();
    let base = dir.path().join("sys/devices/system");
    fs::write(base.join("cpu/online"), "0-4294967295\n").unwrap();
    let e = checked_within_20s(dir.path()).unwrap_err();
    assert!(
        e.contains("cpu/online: invalid CPU list '0-4294967295'"),
        "{e}"
    );
    fs::write(base.join("cpu/online"), "0-31\n").unwrap();
    fs::write(base.join("node/online"), "0-65535\n").unwrap();
    let e = checked_within_20s(dir.path()).unwrap_err();
    assert!(
        e.contains("node 1024 is above the largest node number"),
        "{e}"
    );
}

/// A tree of `cpus` CPUs that says nothing else: its `cpu/online`, one node of all.
fn bare_tree(cpus: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let s = Server {
        name: "bare",
        cpus,
        levels: vec![],
        nodes: vec![super::fixtures::Node {
            cpus: (0..cpus).collect(),
            mem_kib: 1 << 30,
        }],
        distances: vec![],
        socket_of: vec![],
        core_of: vec![],
        gpus: 0,
    };
    fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
    fs::write(
        dir.path().join("sys/devices/system/cpu/online"),
        format!("0-{}\n", cpus - 1),
    )
    .unwrap();
    super::fixtures::write_nodes(dir.path(), &s).unwrap();
    dir
}

/// 65536 CPUs in 2 sockets, 8 nodes, an L3 per 16 cores, an L2 per core, 2 threads per
/// core (thread t of core c is CPU c + 32768 t), built in memory.
fn topology_of_65536() -> Topology {
    let n = 1 << 16;
    let cores = n / 2;
    let list = |v: Vec<usize>| crate::pin::format_cpu_list(&v);
    let threads = |c: std::ops::Range<usize>| -> Vec<usize> {
        c.clone().chain(c.map(|x| x + cores)).collect()
    };
    let mut inst = Vec::new();
    for c in 0..cores {
        inst.push(CacheInstance {
            level: 2,
            kind: "Unified".into(),
            size_bytes: 1 << 20,
            cpus: list(vec![c, c + cores]),
        });
    }
    for l in 0..cores / 16 {
        inst.push(CacheInstance {
            level: 3,
            kind: "Unified".into(),
            size_bytes: 32 << 20,
            cpus: list(threads(l * 16..l * 16 + 16)),
        });
    }
    let per_node = cores / 8;
    Topology {
        nodes: (0..8)
            .map(|id| NumaNode {
                id,
                cpus: threads(id * per_node..(id + 1) * per_node),
                mem_total_bytes: 1 << 40,
                distances: vec![10; 8],
                likely_far_memory: false,
                backing: vec![],
                access: vec![],
                memory_side_caches: vec![],
            })
            .collect(),
        caches: vec![],
        cache_instances: inst,
        sockets: (0..2)
            .map(|s| list(threads(s * cores / 2..(s + 1) * cores / 2)))
            .collect(),
        smt_siblings: (0..cores).map(|c| list(vec![c, c + cores])).collect(),
        dax: vec![],
        hugepages: vec![],
        weighted_interleave: None,
        cxl: Default::default(),
    }
}

/// Generous for a loaded 2-vCPU machine: the work is linear, well under a second.
const BOUND: Duration = Duration::from_secs(5);

#[test]
fn a_tree_of_65536_cpus_is_read_and_its_pairs_counted_in_bounded_time() {
    let dir = bare_tree(1 << 16);
    let t0 = Instant::now();
    let t = Topology::read_checked(dir.path()).unwrap();
    let cpus: Vec<usize> = (0..1 << 16).collect();
    assert_eq!(t.nodes[0].cpus.len(), cpus.len());
    // Every CPU its own LLC (no cache information): all 2^31 pairs cross LLCs, counted.
    let n = cpus.len();
    assert_eq!(
        pairs::classify(&t, &cpus),
        [(PairClass::CrossLlc, n * (n - 1) / 2)]
    );
    let s = pairs::sample(&t, &cpus, 8, 1);
    assert_eq!(s[0].pairs.len(), 8);
    let l = Ladder::of(&t, &cpus);
    assert_eq!(l.top().unwrap().threads, n);
    let took = t0.elapsed();
    assert!(took < BOUND, "{took:?}");
}

#[test]
fn a_structured_machine_of_65536_cpus_plans_in_bounded_time() {
    let t = topology_of_65536();
    let cpus: Vec<usize> = (0..1 << 16).collect();
    let t0 = Instant::now();
    let places = Places::of(&t, &cpus);
    let sp = places.span(&cpus);
    assert_eq!(
        (sp.cores, sp.llcs, sp.nodes, sp.sockets),
        (32768, 2048, 8, 2)
    );
    let classes = pairs::classify(&t, &cpus);
    let n = cpus.len();
    assert_eq!(classes.iter().map(|c| c.1).sum::<usize>(), n * (n - 1) / 2);
    assert_eq!(classes[0], (PairClass::Smt, 32768));
    // An L3 of 16 cores x 2 threads: 32 * 31 / 2 pairs, 16 of them SMT.
    assert_eq!(classes[1], (PairClass::SameLlc, 2048 * (32 * 31 / 2 - 16)));
    let s = pairs::sample(&t, &cpus, 8, 3);
    assert_eq!(s.len(), 5, "{:?}", classes);
    for c in &s {
        assert_eq!(c.pairs.len(), 8);
        let used: std::collections::HashSet<usize> =
            c.pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        assert_eq!(used.len(), 16, "{:?}: disjoint pairs", c.class);
        for &(a, b) in &c.pairs {
            let (pa, pb) = (places.get(a).unwrap(), places.get(b).unwrap());
            assert_eq!(PairClass::of(pa, pb), c.class);
        }
    }
    let l = Ladder::of(&t, &cpus);
    assert!(l.rungs.len() < 24, "{:?}", l.counts());
    assert!(t.cache_reach(&cpus).is_some());
    let took = t0.elapsed();
    assert!(took < BOUND, "{took:?}");
}

#[test]
fn pair_counts_are_what_listing_every_pair_gives() {
    let mut machines: Vec<Server> = Server::machines().into_iter().map(|(_, s)| s).collect();
    machines.extend([
        Server::intel_2s_snc(),
        Server::epyc_12ccd(),
        Server::cxl_host(),
        Server::two_socket_cxl(),
    ]);
    for s in machines {
        let t = s.topology();
        let cpus: Vec<usize> = (0..s.cpus).collect();
        let places = Places::of(&t, &cpus);
        let mut listed = [0usize; 6];
        for (i, a) in places.places.iter().enumerate() {
            for b in &places.places[i + 1..] {
                listed[PairClass::of(a, b) as usize] += 1;
            }
        }
        let want: Vec<(PairClass, usize)> = PairClass::ALL
            .iter()
            .map(|&c| (c, listed[c as usize]))
            .filter(|&(_, n)| n > 0)
            .collect();
        assert_eq!(pairs::classify(&t, &cpus), want, "{}", s.name);
        // Every pair, once each, when all are asked for.
        let all = pairs::sample(&t, &cpus, usize::MAX, 5);
        for c in &all {
            let set: std::collections::HashSet<&(usize, usize)> = c.pairs.iter().collect();
            assert_eq!((c.pairs.len(), set.len()), (c.total, c.total), "{}", s.name);
        }
    }
}
