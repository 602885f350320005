//! The matrix plan on fixture topologies: which cells, from which CPUs, how each is
//! classified, and which cells each key stands on.

use super::*;
use bench_core::topology::fixtures::{write_server, Server};

fn topo(s: &Server) -> Topology {
    let dir = tempfile::tempdir().unwrap();
    write_server(dir.path(), s).unwrap();
    Topology::read(dir.path())
}

fn all_cpus(s: &Server) -> Vec<usize> {
    (0..s.cpus).collect()
}

fn classes(p: &MatrixPlan) -> Vec<(usize, usize, Class)> {
    p.cells
        .iter()
        .map(|c| (c.initiator, c.target, c.class))
        .collect()
}

#[test]
fn two_sockets_give_a_two_by_two_matrix_from_each_nodes_own_cpus() {
    let s = Server::two_socket();
    let t = topo(&s);
    let p = plan(&t, &all_cpus(&s), None, None).unwrap();
    assert_eq!(p.initiators, vec![0, 1]);
    assert_eq!(p.targets, vec![0, 1]);
    use Class::*;
    assert_eq!(
        classes(&p),
        vec![(0, 0, Local), (0, 1, Remote), (1, 0, Remote), (1, 1, Local)]
    );
    for c in &p.cells {
        assert_eq!(c.cpus, s.node_cpus(c.initiator), "{c:?}");
        assert_eq!(c.cpus.len(), 16);
    }
    assert_eq!(p.cells[1].distance, Some(21));
    assert_eq!(p.cells[0].distance, Some(10));
    // Keys: the row of node 0 only.
    assert_eq!(
        key_cells(&p.cells),
        vec![(Local, vec![0]), (Remote, vec![1])]
    );
}

#[test]
fn snc_neighbours_on_one_socket_are_not_remote() {
    let s = Server::intel_2s_snc();
    let t = topo(&s);
    let p = plan(&t, &all_cpus(&s), None, None).unwrap();
    assert_eq!(p.initiators, vec![0, 1, 2, 3]);
    assert_eq!(p.cells.len(), 16);
    use Class::*;
    let row0: Vec<Class> = p.cells[..4].iter().map(|c| c.class).collect();
    assert_eq!(row0, vec![Local, Neighbour, Remote, Remote]);
    let row2: Vec<Class> = p.cells[8..12].iter().map(|c| c.class).collect();
    assert_eq!(row2, vec![Remote, Remote, Local, Neighbour]);
    for c in &p.cells {
        assert_eq!(c.cpus, s.node_cpus(c.initiator));
    }
    // Remote = the two nodes of the other socket; the neighbour gives no key.
    assert_eq!(
        key_cells(&p.cells),
        vec![(Local, vec![0]), (Remote, vec![2, 3])]
    );
}

#[test]
fn cpu_less_nodes_are_far_columns_and_never_rows() {
    let s = Server::cxl_host();
    let t = topo(&s);
    let p = plan(&t, &all_cpus(&s), None, None).unwrap();
    assert_eq!(p.initiators, vec![0]);
    assert_eq!(p.targets, vec![0, 1]);
    use Class::*;
    assert_eq!(classes(&p), vec![(0, 0, Local), (0, 1, Far)]);
    assert_eq!(key_cells(&p.cells), vec![(Local, vec![0]), (Far, vec![1])]);

    let s = Server::two_socket_cxl();
    let t = topo(&s);
    let p = plan(&t, &all_cpus(&s), None, None).unwrap();
    assert_eq!(p.initiators, vec![0, 1]);
    assert_eq!(p.targets, vec![0, 1, 2, 3]);
    assert_eq!(
        classes(&p)[..4],
        [(0, 0, Local), (0, 1, Remote), (0, 2, Far), (0, 3, Far)]
    );
    assert_eq!(p.cells[2].distance, Some(14));
    assert_eq!(p.cells[3].distance, Some(24));
    assert_eq!(
        key_cells(&p.cells),
        vec![(Local, vec![0]), (Remote, vec![1]), (Far, vec![2, 3])]
    );
}

#[test]
fn chosen_nodes_and_allowed_cpus_shape_the_matrix() {
    let s = Server::two_socket_cxl();
    let t = topo(&s);
    // Only CPUs 16.. allowed: node 0 cannot measure and says why.
    let allowed: Vec<usize> = (16..20).collect();
    let p = plan(&t, &allowed, None, Some(&[0, 2])).unwrap();
    assert_eq!(p.initiators, vec![1]);
    assert_eq!(p.targets, vec![0, 2]);
    assert_eq!(p.skipped.len(), 1);
    assert_eq!(p.skipped[0].0, 0);
    assert!(p.skipped[0].1.contains("node 0"), "{:?}", p.skipped);
    assert!(p.cells.iter().all(|c| c.cpus == allowed));
    // The first row measured is node 1's: its keys.
    use Class::*;
    assert_eq!(key_cells(&p.cells), vec![(Remote, vec![0]), (Far, vec![1])]);
    // Repeated nodes count once; the order given is the order measured.
    let p = plan(&t, &all_cpus(&s), Some(&[1, 0, 1]), Some(&[3, 1])).unwrap();
    assert_eq!(p.initiators, vec![1, 0]);
    assert_eq!(p.targets, vec![3, 1]);
    assert_eq!(key_cells(&p.cells), vec![(Local, vec![1]), (Far, vec![0])]);
}

#[test]
fn bad_node_choices_are_errors() {
    let s = Server::two_socket_cxl();
    let t = topo(&s);
    let cpus = all_cpus(&s);
    let e = plan(&t, &cpus, Some(&[2]), None).unwrap_err();
    assert!(e.contains("node 2 has no CPUs"), "{e}");
    let e = plan(&t, &cpus, None, Some(&[9])).unwrap_err();
    assert!(e.contains("node 9 does not exist"), "{e}");
}

#[test]
fn one_node_gives_a_one_by_one_local_matrix() {
    let s = Server::h200_host();
    let t = topo(&s);
    let p = plan(&t, &[3, 5], None, None).unwrap();
    assert_eq!(classes(&p), vec![(0, 0, Class::Local)]);
    assert_eq!(p.cells[0].cpus, vec![3, 5]);
    assert_eq!(key_cells(&p.cells), vec![(Class::Local, vec![0])]);
}

#[test]
fn without_distances_other_cpu_nodes_are_remote() {
    let s = Server::intel_2s_snc();
    let mut t = topo(&s);
    for n in &mut t.nodes {
        n.distances.clear();
    }
    assert_eq!(classify(&t, 0, 1), Class::Remote);
    assert_eq!(classify(&t, 0, 0), Class::Local);
}

#[test]
fn keys_are_registered_and_named_by_class() {
    for c in [Class::Local, Class::Remote, Class::Far] {
        let stem = c.key_stem().unwrap();
        for suffix in ["lat_ns", "bw_gbs"] {
            let k = format!("{stem}_{suffix}");
            let def = bench_core::keys::lookup(&k).unwrap_or_else(|| panic!("{k}"));
            assert_eq!(def.benchmark, NAME);
        }
    }
    assert_eq!(Class::Neighbour.key_stem(), None);
}

#[test]
fn a_small_matrix_runs_here_and_gives_the_local_cell() {
    let ctx = Context::quick_local();
    let b = MatrixBench {
        cpu_nodes: None,
        mem_nodes: Some(vec![ctx.topology.nodes[0].id]),
        loaded: false,
    };
    let node = ctx.topology.nodes[0].id;
    if !ctx.topology.nodes[0]
        .cpus
        .iter()
        .any(|c| ctx.cpus.contains(c))
    {
        return; // this machine's first node has no allowed CPU
    }
    let need = b.memory(&ctx, &TargetSpec::Anon);
    let rep = match b.run(&ctx, Input::Device) {
        Ok(r) => r,
        Err(NotRun::Skipped { reason }) => {
            eprintln!("skipped here: {reason}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let m = rep.numa_matrix.expect("a matrix");
    let cell = m
        .cells
        .iter()
        .find(|c| c.target == node && c.initiator == node)
        .expect("the local cell");
    // The plan is the largest cell's region (the cells are placed one at a time), with
    // the chain scratch or samples beside it.
    let largest = m
        .cells
        .iter()
        .map(|c| TargetSpec::Node(c.target).mapped_bytes(c.placement.region_bytes, &ctx.topology))
        .max()
        .unwrap();
    assert_eq!(need.on_target_bytes, largest, "{need:?}");
    assert!(need.bytes > need.on_target_bytes);
    assert_eq!(cell.class, "local");
    assert!(cell.latency.distribution.p50 > 0.0);
    assert!(cell.bandwidth.distribution.p50 > 0.0);
    assert!(rep.params.iter().any(|p| p.key == "numa_local_lat_ns"));
    assert!(rep.params.iter().any(|p| p.key == "numa_local_bw_gbs"));
    assert!(rep.measurements.iter().all(|m| m.benchmark == NAME));
}

#[test]
fn all_runs_the_matrix_only_with_more_than_one_node() {
    let args = MatrixArgs {
        cpu_nodes: None,
        mem_nodes: None,
        loaded: false,
    };
    let one = args.plan_all_on(&topo(&Server::h200_host()));
    assert!(one.benchmarks.is_empty());
    assert_eq!(one.skipped.len(), 1);
    assert_eq!(one.skipped[0].benchmark, NAME);
    assert_eq!(one.skipped[0].reason, ONE_NODE);
    for s in [
        Server::cxl_host(),
        Server::two_socket(),
        Server::intel_2s_snc(),
    ] {
        let p = args.plan_all_on(&topo(&s));
        assert_eq!(p.benchmarks.len(), 1, "{}", s.name);
        assert_eq!(p.benchmarks[0].name(), NAME);
        assert_eq!(
            p.benchmarks[0].subject(),
            Subject::Device {
                target: LABEL.into()
            }
        );
        assert!(p.skipped.is_empty());
    }
}

#[test]
fn grace_hopper_gives_one_row_and_the_gpu_memory_as_its_far_column() {
    // The MIG nodes 2-9 have neither CPUs nor memory: no row, no column.
    let dir = tempfile::tempdir().unwrap();
    bench_core::topology::fixtures::arm::write_grace_hopper(dir.path()).unwrap();
    let t = Topology::read(dir.path());
    let p = plan(&t, &(0..72).collect::<Vec<_>>(), None, None).unwrap();
    assert_eq!(p.initiators, vec![0]);
    assert_eq!(p.targets, vec![0, 1]);
    use Class::*;
    assert_eq!(classes(&p), vec![(0, 0, Local), (0, 1, Far)]);
    assert_eq!(p.cells[1].distance, Some(80));
    // The Grace Superchip: two sockets, each its own node, local and remote.
    let s = Server::grace_superchip();
    let p = plan(&topo(&s), &all_cpus(&s), None, None).unwrap();
    assert_eq!(p.targets, vec![0, 1]);
    assert_eq!(
        classes(&p),
        vec![(0, 0, Local), (0, 1, Remote), (1, 0, Remote), (1, 1, Local)]
    );
}
