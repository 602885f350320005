//! Arm servers as their sysfs trees show them ([`bench_core::topology::fixtures::arm`]):
//! NVIDIA Grace Hopper (72 cores, one L3 on the mesh, the GPU's HBM as a CPU-less node),
//! the Grace Superchip (one L3 per socket), AWS Graviton3 (64 cores, one shared L3) and an
//! Ampere server of two-core clusters sharing an L2 with a system-level cache: the DRAM
//! working sets the sizing rules pick, what the far-memory node is, and their thread ladders
//! and core-to-core pair classes.

use bench_core::memory::TargetSpec;
use bench_core::sizing::{self, DramSizing, SizingRule};
use bench_core::topology::fixtures::arm::write_grace_hopper;
use bench_core::topology::fixtures::{write_server, Server};
use bench_core::topology::ladder::{Ladder, Level};
use bench_core::topology::pairs;
use bench_core::topology::Topology;

const MIB: usize = 1 << 20;

fn topo(s: &Server) -> Topology {
    let dir = tempfile::tempdir().unwrap();
    write_server(dir.path(), s).unwrap();
    Topology::read(dir.path())
}

fn grace_hopper() -> Topology {
    let dir = tempfile::tempdir().unwrap();
    write_grace_hopper(dir.path()).unwrap();
    Topology::read(dir.path())
}

/// (chase touched bytes, stream footprint) the cache rule picks for `cpus`.
fn rule(t: &Topology, cpus: &[usize]) -> (usize, usize) {
    let s = DramSizing::for_cpus(t.cache_reach(cpus), t.llc_bytes());
    assert_eq!(s.rule, SizingRule::CacheReach);
    (s.touched_bytes, sizing::stream_bytes(s.touched_bytes))
}

#[test]
fn grace_hopper_sizes_from_its_one_l3_and_the_gpu_memory_adds_no_cache() {
    let t = grace_hopper();
    assert_eq!(
        t.nodes.len(),
        10,
        "node 0, the GPU's node 1, eight MIG nodes"
    );
    // One core: its 1 MiB L2 and the 114 MiB L3 of the mesh, times 4.
    assert_eq!(rule(&t, &[0]), (460 * MIB, 460 * MIB));
    // All 72 cores: the L3 once, 72 L2s.
    let all: Vec<usize> = (0..72).collect();
    let r = t.cache_reach(&all).unwrap();
    assert_eq!((r.llc_instances, r.mid_instances), (1, 72));
    assert_eq!(rule(&t, &all), (744 * MIB, 744 * MIB));
    // The GPU memory bounds a chase on it by its own size, not by any cache.
    let gpu = TargetSpec::Node(1);
    let avail = sizing::available_for(&gpu, &t).unwrap();
    assert!(avail <= 96 << 30, "{avail}");
    let (touched, capped) =
        DramSizing::for_cpus(t.cache_reach(&[0]), t.llc_bytes()).touched_for(4, Some(avail));
    assert_eq!((touched, capped), (460 * MIB, false));
}

#[test]
fn grace_hoppers_gpu_memory_is_far_memory_labelled_gpu_not_cxl() {
    let t = grace_hopper();
    let far: Vec<usize> = t
        .nodes
        .iter()
        .filter(|n| n.likely_far_memory)
        .map(|n| n.id)
        .collect();
    // The MIG nodes have neither CPUs nor memory: not targets.
    assert_eq!(far, [1]);
    let n1 = t.node(1).unwrap();
    assert_eq!(n1.mem_total_bytes, 96 << 30);
    assert!(!n1.is_cxl());
    assert_eq!(n1.backing.len(), 1, "{:?}", n1.backing);
    let b = &n1.backing[0];
    assert!(b.backing.is_gpu() && !b.backing.is_cxl(), "{b:?}");
    assert_eq!(b.bytes, 96 << 30);
    let d = n1.describe();
    assert!(
        d.contains("GPU memory") && d.contains("System RAM (NVIDIA)") && d.contains("not CXL"),
        "{d}"
    );
    assert!(TargetSpec::Node(1).is_far_memory(&t));
    assert!(!TargetSpec::Node(2).is_far_memory(&t));
}

#[test]
fn without_a_readable_iomem_the_gpu_node_is_not_cxl_and_unnamed() {
    // Unprivileged readers see /proc/iomem with every address 0: nothing matches.
    let dir = tempfile::tempdir().unwrap();
    write_grace_hopper(dir.path()).unwrap();
    std::fs::write(
        dir.path().join("proc/iomem"),
        "00000000-00000000 : System RAM\n00000000-00000000 : System RAM (NVIDIA)\n",
    )
    .unwrap();
    let t = Topology::read(dir.path());
    let n1 = t.node(1).unwrap();
    assert!(n1
        .backing
        .iter()
        .all(|s| !s.backing.is_cxl() && !s.backing.is_gpu()));
    assert!(n1.describe().contains("not CXL"), "{}", n1.describe());
}

#[test]
fn the_grace_superchip_counts_one_l3_per_socket() {
    let s = Server::grace_superchip();
    let t = topo(&s);
    assert_eq!(t.nodes.len(), 2);
    assert!(t.nodes.iter().all(|n| !n.likely_far_memory));
    assert_eq!(rule(&t, &[0]), (460 * MIB, 460 * MIB));
    assert_eq!(rule(&t, &s.node_cpus(0)), (744 * MIB, 744 * MIB));
    let all: Vec<usize> = (0..144).collect();
    let r = t.cache_reach(&all).unwrap();
    assert_eq!((r.llc_instances, r.mid_instances), (2, 144));
    assert_eq!(rule(&t, &all), (1488 * MIB, 1488 * MIB));
}

#[test]
fn graviton3_shares_one_l3_between_64_cores() {
    let t = topo(&Server::graviton3());
    assert_eq!(t.nodes.len(), 1);
    // One core: 32 MiB L3 + 1 MiB L2.
    assert_eq!(rule(&t, &[0]), (132 * MIB, 132 * MIB));
    let all: Vec<usize> = (0..64).collect();
    assert_eq!(rule(&t, &all), (384 * MIB, 384 * MIB));
}

#[test]
fn ampere_clusters_count_one_l2_per_pair_and_the_system_level_cache_once() {
    let s = Server::ampere_clusters();
    let t = topo(&s);
    // One core: its cluster's 2 MiB L2 and the 32 MiB SLC.
    assert_eq!(rule(&t, &[0]), (136 * MIB, 136 * MIB));
    // Both cores of a cluster share the L2: no second one.
    assert_eq!(s.sharing(2, 0), [0, 1]);
    assert_eq!(rule(&t, &[0, 1]), (136 * MIB, 136 * MIB));
    // Two clusters: two L2s.
    assert_eq!(rule(&t, &[0, 2]), (144 * MIB, 144 * MIB));
    // All 80 cores: 40 L2s and the SLC.
    let all: Vec<usize> = (0..80).collect();
    let r = t.cache_reach(&all).unwrap();
    assert_eq!((r.llc_instances, r.mid_instances), (1, 40));
    assert_eq!(rule(&t, &all), (448 * MIB, 448 * MIB));
}

/// The ladder of all of `t`'s CPUs, and its pair classes with how many pairs each has.
fn ladder_and_classes(t: &Topology, cpus: usize) -> (Ladder, Vec<(&'static str, usize)>) {
    let all: Vec<usize> = (0..cpus).collect();
    let classes = pairs::classify(t, &all)
        .into_iter()
        .map(|(c, n)| (c.name(), n))
        .collect();
    (Ladder::of(t, &all), classes)
}

/// Thread sweeps and core-to-core classes grow with the topology's levels, not the core
/// count: one Grace (one L3 on the mesh) is powers of two and all 72 cores, a single
/// class; the Superchip adds its second socket; Ampere's two-core clusters give a
/// one-L2 rung and a `same-l2` class of 40 pairs.
#[test]
fn arm_servers_take_their_levels_as_rungs_and_pair_classes() {
    let (l, classes) = ladder_and_classes(&grace_hopper(), 72);
    assert_eq!(l.counts(), [1, 2, 4, 8, 16, 32, 64, 72]);
    assert!(l.rung(72).unwrap().levels.contains(&Level::Llc));
    assert_eq!(classes, [("same-llc", 72 * 71 / 2)]);

    let (l, classes) = ladder_and_classes(&topo(&Server::grace_superchip()), 144);
    assert_eq!(l.counts(), [1, 2, 4, 8, 16, 32, 64, 72, 128, 144]);
    let socket = l.rung(72).unwrap();
    assert!(socket.levels.contains(&Level::Socket), "{socket:?}");
    assert!(socket.cpus.iter().all(|&c| c < 72), "one socket's CPUs");
    assert_eq!(
        classes,
        [("same-llc", 2 * 72 * 71 / 2), ("cross-socket", 72 * 72)]
    );

    let (l, classes) = ladder_and_classes(&topo(&Server::graviton3()), 64);
    assert_eq!(l.counts(), [1, 2, 4, 8, 16, 32, 64]);
    assert_eq!(classes, [("same-llc", 64 * 63 / 2)]);

    let (l, classes) = ladder_and_classes(&topo(&Server::ampere_clusters()), 80);
    assert_eq!(l.counts(), [1, 2, 4, 8, 16, 32, 64, 80]);
    let cluster = l.rung(2).unwrap();
    assert_eq!(cluster.cpus, [0, 1]);
    assert!(cluster.levels.contains(&Level::L2), "{cluster:?}");
    assert_eq!(classes, [("same-l2", 40), ("same-llc", 80 * 79 / 2 - 40)]);
}
