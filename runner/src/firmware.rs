//! After a run: what the firmware advertises (HMAT, CDAT through the kernel's numaperf
//! files) beside what was measured on every node target, weighted interleave weights
//! from the measured bandwidths, and the keys `check` can bound
//! (`hmat_lat_ratio@node:1`, `hmat_bw_ratio@node:1`, `interleave_gain_ratio@interleave:..`).
//! The arithmetic is [`bench_core::firmware`]'s; this module finds the figures in the
//! params document.

use bench_core::firmware::{self, HmatComparison, InterleaveGain, InterleaveWeights, NodeWeight};
use bench_core::params::{ParamInfo, ParamsFile};
use bench_core::topology::{hmat, Topology};
use std::collections::{BTreeMap, BTreeSet};

/// The node of `cpu` (the initiator of a run pinned there), node 0 when no node lists it.
pub fn node_of_cpu(topo: &Topology, cpu: usize) -> usize {
    topo.nodes
        .iter()
        .find(|n| n.cpus.contains(&cpu))
        .map_or(0, |n| n.id)
}

/// The targets of the file's qualified params keys (`mem_lat_ns@node:1` -> `node:1`).
fn targets(file: &ParamsFile) -> BTreeSet<String> {
    file.params
        .keys()
        .filter_map(|k| bench_core::keys::split_target(k).1.map(str::to_string))
        .collect()
}

/// The node a plain node target's memory is on: `anon` on the initiator's, `node:N` on N.
fn node_of_target(target: &str, initiator: usize) -> Option<usize> {
    if target == "anon" {
        return Some(initiator);
    }
    target.strip_prefix("node:")?.parse().ok()
}

/// The first of `names` measured on `target`, with its qualified key.
fn measured(file: &ParamsFile, names: &[&str], target: &str) -> Option<(String, f64)> {
    names.iter().find_map(|n| {
        let k = format!("{n}@{target}");
        file.params.get(&k).map(|v| (k, *v))
    })
}

const LAT: [&str; 2] = ["mem_lat_ns", "cxl_lat_ns"];
const BW: [&str; 2] = ["mem_bw_gbs", "cxl_bw_gbs"];

/// Advertised vs measured for every node target of the file with a measured latency or
/// bandwidth, keyed by target; the measuring CPUs are on node `initiator`. Ratios only
/// where the advertised class lists the initiator (else the figures are another
/// initiator's: shown, not compared). A node the run did not measure comparably as a
/// target is compared with its NUMA matrix cell from the advertised initiator, when the
/// file has one ([`matrix_comparisons`]).
pub fn hmat_vs_measured(file: &ParamsFile, initiator: usize) -> BTreeMap<String, HmatComparison> {
    let topo = &file.environment.topology;
    let mut out = BTreeMap::new();
    for t in targets(file) {
        let Some(node) = node_of_target(&t, initiator) else {
            continue;
        };
        let lat = measured(file, &LAT, &t);
        let bw = measured(file, &BW, &t);
        if lat.is_none() && bw.is_none() {
            continue;
        }
        let adv = topo
            .node(node)
            .and_then(|n| hmat::advertised_for(&n.access, initiator));
        out.insert(t, comparison(node, initiator, adv, lat, bw));
    }
    for (t, c) in matrix_comparisons(file) {
        let comparable = |c: &HmatComparison| c.lat_ratio.is_some() || c.bw_ratio.is_some();
        if !out.get(&t).is_some_and(comparable) {
            out.insert(t, c);
        }
    }
    out
}

/// One comparison: node `node`'s advertised figures (`adv`: the class and whether it
/// lists `initiator`) beside a latency and a bandwidth measured from `initiator`, each
/// with the key or measurement it comes from.
fn comparison(
    node: usize,
    initiator: usize,
    adv: Option<(&hmat::NodeAccess, bool)>,
    lat: Option<(String, f64)>,
    bw: Option<(String, f64)>,
) -> HmatComparison {
    let coords = adv.map(|(a, _)| &a.coords);
    let advertised_lat_ns = coords.and_then(|c| c.read_latency_ns).map(|v| v as f64);
    let advertised_bw_gbs = coords.and_then(|c| c.read_bandwidth_gbs());
    let measured_lat_ns = lat.as_ref().map(|l| l.1);
    let measured_bw_gbs = bw.as_ref().map(|b| b.1);
    // Figures for another initiator (the other socket's) are shown, never compared.
    let listed = adv.is_some_and(|(_, l)| l);
    let comparable = |v: Option<f64>| v.filter(|_| listed);
    HmatComparison {
        node,
        initiator_node: initiator,
        access_class: adv.map(|(a, _)| a.class),
        initiator_listed: listed,
        advertised_lat_ns,
        measured_lat_ns,
        lat_key: lat.map(|l| l.0),
        lat_ratio: firmware::lat_ratio(comparable(advertised_lat_ns), measured_lat_ns),
        advertised_bw_gbs,
        measured_bw_gbs,
        bw_key: bw.map(|b| b.0),
        bw_ratio: firmware::bw_ratio(measured_bw_gbs, comparable(advertised_bw_gbs)),
    }
}

/// From the file's NUMA matrix, one comparison per target node that advertises figures:
/// the cell of the first matrix initiator the advertised class lists (the initiator the
/// firmware describes), its chase p50 and read p50, keyed `node:T`; the measurement ids
/// stand where a target's keys would.
fn matrix_comparisons(file: &ParamsFile) -> Vec<(String, HmatComparison)> {
    let Some(m) = &file.numa_matrix else {
        return Vec::new();
    };
    let topo = &file.environment.topology;
    let mut out = Vec::new();
    for &t in &m.targets {
        let Some(node) = topo.node(t) else { continue };
        let Some(cell) = m.initiators.iter().find_map(|&i| {
            let (_, listed) = hmat::advertised_for(&node.access, i)?;
            let cell = m.cells.iter().find(|c| c.initiator == i && c.target == t)?;
            listed.then_some(cell)
        }) else {
            continue;
        };
        let adv = hmat::advertised_for(&node.access, cell.initiator);
        let fig = |f: &bench_core::params::CellFigure| (f.id.clone(), f.distribution.p50);
        let c = comparison(
            t,
            cell.initiator,
            adv,
            Some(fig(&cell.latency)),
            Some(fig(&cell.bandwidth)),
        );
        out.push((format!("node:{t}"), c));
    }
    out
}

/// Weights from the read bandwidths measured on plain node targets (one per node, a
/// `node:N` target before `anon`, then the NUMA matrix's row of the initiator for nodes no
/// target measured), and the gains of the interleaved targets over `anon` (else the
/// initiator's `node:N`); `None` when there are neither two nodes nor a gain.
pub fn interleave_weights(file: &ParamsFile, initiator: usize) -> Option<InterleaveWeights> {
    let kernel = file.environment.topology.weighted_interleave.as_ref();
    let mut by_node: BTreeMap<usize, (String, String, f64)> = BTreeMap::new();
    let all = targets(file);
    for t in all
        .iter()
        .filter(|t| t.starts_with("node:"))
        .chain(all.iter().filter(|t| *t == "anon"))
    {
        let (Some(node), Some((key, bw))) = (node_of_target(t, initiator), measured(file, &BW, t))
        else {
            continue;
        };
        by_node.entry(node).or_insert((t.clone(), key, bw));
    }
    for (node, cell_id, bw) in matrix_row_bandwidths(file, initiator) {
        by_node
            .entry(node)
            .or_insert((format!("node:{node}"), cell_id, bw));
    }
    let bws: Vec<f64> = by_node.values().map(|v| v.2).collect();
    let w = if by_node.len() >= 2 {
        firmware::weights_from_bandwidths(&bws)
    } else {
        Vec::new()
    };
    let nodes: Vec<NodeWeight> = by_node
        .into_iter()
        .zip(w)
        .map(|((node, (target, bw_key, bw_gbs)), weight)| NodeWeight {
            node,
            target,
            bw_key,
            bw_gbs,
            weight,
            kernel_weight: kernel.and_then(|k| k.get(&node).copied()),
        })
        .collect();
    let gains = gains(file, &all, initiator);
    if nodes.is_empty() && gains.is_empty() {
        return None;
    }
    let spec: Vec<String> = nodes
        .iter()
        .map(|n| format!("{}={}", n.node, n.weight))
        .collect();
    Some(InterleaveWeights {
        target: (!nodes.is_empty()).then(|| format!("interleave:{}", spec.join(","))),
        commands: nodes
            .iter()
            .map(|n| firmware::weight_command(n.node, n.weight))
            .collect(),
        nodes,
        gains,
    })
}

/// The read bandwidth of every cell of the NUMA matrix's row of `initiator` (else its
/// first row): (target node, the cell's measurement id, its p50 in GB/s).
fn matrix_row_bandwidths(file: &ParamsFile, initiator: usize) -> Vec<(usize, String, f64)> {
    let Some(m) = &file.numa_matrix else {
        return Vec::new();
    };
    let row = if m.initiators.contains(&initiator) {
        initiator
    } else {
        match m.initiators.first() {
            Some(&i) => i,
            None => return Vec::new(),
        }
    };
    m.cells
        .iter()
        .filter(|c| c.initiator == row && c.bandwidth.distribution.p50 > 0.0)
        .map(|c| {
            (
                c.target,
                c.bandwidth.id.clone(),
                c.bandwidth.distribution.p50,
            )
        })
        .collect()
}

/// The interleaved targets' bandwidth over plain local memory's.
fn gains(file: &ParamsFile, all: &BTreeSet<String>, initiator: usize) -> Vec<InterleaveGain> {
    let local = format!("node:{initiator}");
    let Some((baseline_target, (_, baseline_bw_gbs))) = ["anon", local.as_str()]
        .iter()
        .find_map(|t| measured(file, &BW, t).map(|m| (t.to_string(), m)))
    else {
        return Vec::new();
    };
    all.iter()
        .filter(|t| t.starts_with("interleave:"))
        .filter_map(|t| {
            let (_, bw_gbs) = measured(file, &BW, t)?;
            let gain_ratio = firmware::bw_ratio(Some(bw_gbs), Some(baseline_bw_gbs))?;
            Some(InterleaveGain {
                target: t.clone(),
                bw_gbs,
                baseline_target: baseline_target.clone(),
                baseline_bw_gbs,
                gain_ratio,
            })
        })
        .collect()
}

/// Fills the file's `hmat_vs_measured` and `interleave_weights` and adds their ratios
/// as qualified params keys with their `param_info`.
pub fn annotate(file: &mut ParamsFile, initiator: usize) {
    let cmp = hmat_vs_measured(file, initiator);
    let weights = interleave_weights(file, initiator);
    let mut keys: Vec<(String, f64, String, String, Vec<String>)> = Vec::new();
    for (t, c) in &cmp {
        if let (Some(r), Some(k)) = (c.lat_ratio, &c.lat_key) {
            let method = format!(
                "advertised read latency (access{}) / {k}",
                c.access_class.unwrap_or(0)
            );
            keys.push((
                format!("hmat_lat_ratio@{t}"),
                r,
                t.clone(),
                method,
                vec![k.clone()],
            ));
        }
        if let (Some(r), Some(k)) = (c.bw_ratio, &c.bw_key) {
            let method = format!(
                "{k} / advertised read bandwidth (access{})",
                c.access_class.unwrap_or(0)
            );
            keys.push((
                format!("hmat_bw_ratio@{t}"),
                r,
                t.clone(),
                method,
                vec![k.clone()],
            ));
        }
    }
    for g in weights.iter().flat_map(|w| &w.gains) {
        let method = format!("read bandwidth on {} / on {}", g.target, g.baseline_target);
        let of = [g.target.as_str(), g.baseline_target.as_str()]
            .iter()
            .filter_map(|t| measured(file, &BW, t).map(|m| m.0))
            .collect();
        keys.push((
            format!("interleave_gain_ratio@{}", g.target),
            g.gain_ratio,
            g.target.clone(),
            method,
            of,
        ));
    }
    for (key, value, target, method, of) in keys {
        let infos: Vec<&ParamInfo> = of.iter().filter_map(|k| file.param_info.get(k)).collect();
        let from = infos.iter().flat_map(|i| i.from.clone()).collect();
        let noisy = infos.iter().find_map(|i| i.noisy.clone());
        file.params.insert(key.clone(), value);
        file.param_info.insert(
            key,
            ParamInfo {
                unit: "ratio".into(),
                target,
                method,
                from,
                noisy,
            },
        );
    }
    file.hmat_vs_measured = cmp;
    file.interleave_weights = weights;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::topology::hmat::{AccessCoords, NodeAccess};
    use bench_core::topology::NumaNode;

    /// A file of the runner's test data with these keys, nodes 0 (CPUs 0-1) and 1
    /// (memory-only, advertising 250 ns and 50000 MB/s from node 0 to CPUs).
    pub(crate) fn synthetic(keys: &[(&str, f64)]) -> ParamsFile {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/params-a.json");
        let mut f = crate::document::load::load(&path).unwrap();
        f.params = keys.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let node = |id, cpus: Vec<usize>, access| NumaNode {
            id,
            cpus,
            mem_total_bytes: 1 << 30,
            distances: vec![],
            likely_far_memory: id == 1,
            backing: vec![],
            access,
            memory_side_caches: vec![],
        };
        let far = NodeAccess {
            class: 1,
            initiators: vec![0],
            coords: AccessCoords {
                read_latency_ns: Some(250),
                read_bandwidth_mbs: Some(50_000),
                ..Default::default()
            },
        };
        let topo = &mut f.environment.topology;
        topo.nodes = vec![node(0, vec![0, 1], vec![]), node(1, vec![], vec![far])];
        topo.weighted_interleave = Some([(0, 1), (1, 1)].into_iter().collect());
        f
    }

    #[test]
    fn advertised_beside_measured_with_ratios_and_keys() {
        let mut f = synthetic(&[
            ("mem_lat_ns@anon", 90.0),
            ("mem_bw_gbs@anon", 250.0),
            ("cxl_lat_ns@node:1", 312.5),
            ("cxl_bw_gbs@node:1", 60.0),
            ("mem_bw_gbs@dax:/dev/dax0.0", 10.0),
        ]);
        annotate(&mut f, 0);
        let c = &f.hmat_vs_measured;
        assert_eq!(
            c.keys().collect::<Vec<_>>(),
            ["anon", "node:1"],
            "dax is no node target"
        );
        let anon = &c["anon"];
        assert_eq!(
            (anon.node, anon.access_class),
            (0, None),
            "node 0 advertises nothing"
        );
        assert_eq!((anon.lat_ratio, anon.bw_ratio), (None, None));
        assert_eq!(anon.measured_lat_ns, Some(90.0));
        let n1 = &c["node:1"];
        assert_eq!((n1.access_class, n1.initiator_listed), (Some(1), true));
        assert_eq!(n1.advertised_bw_gbs, Some(50.0), "MB/s -> GB/s");
        assert_eq!(n1.lat_key.as_deref(), Some("cxl_lat_ns@node:1"));
        assert_eq!(n1.lat_ratio, Some(0.8), "250 / 312.5");
        assert_eq!(n1.bw_ratio, Some(1.2), "60 / 50");
        assert_eq!(f.params["hmat_lat_ratio@node:1"], 0.8);
        assert_eq!(f.params["hmat_bw_ratio@node:1"], 1.2);
        assert!(!f.params.contains_key("hmat_bw_ratio@anon"));
        assert_eq!(f.param_info["hmat_bw_ratio@node:1"].unit, "ratio");
        for k in f.params.keys() {
            assert!(crate::consumers::keys::known(k), "{k} is not registered");
        }
        // Measured from CPUs of node 2, which node 1 does not list: shown, not compared.
        let mut f = synthetic(&[("cxl_bw_gbs@node:1", 60.0)]);
        annotate(&mut f, 2);
        let n1 = &f.hmat_vs_measured["node:1"];
        assert_eq!((n1.access_class, n1.initiator_listed), (Some(1), false));
        assert_eq!((n1.advertised_bw_gbs, n1.bw_ratio), (Some(50.0), None));
        assert!(!f.params.contains_key("hmat_bw_ratio@node:1"));
    }

    #[test]
    fn the_numa_matrix_stands_for_nodes_no_target_measured() {
        use crate::plot::numa::tests::cell;
        use bench_core::params::NumaMatrix;
        // `mem matrix` alone: no target keys, a 1 x 2 matrix from node 0 (the initiator
        // node 1 advertises for); chase p50 312.5 ns and read p50 31.25 GB/s on node 1.
        let mut f = synthetic(&[]);
        f.numa_matrix = Some(NumaMatrix {
            initiators: vec![0],
            targets: vec![0, 1],
            cells: vec![cell(0, 0, "local", 100.0), cell(0, 1, "far", 312.5)],
        });
        annotate(&mut f, 0);
        let n1 = &f.hmat_vs_measured["node:1"];
        assert_eq!((n1.initiator_node, n1.initiator_listed), (0, true));
        assert_eq!(n1.lat_ratio, Some(0.8), "250 / 312.5");
        assert_eq!(n1.bw_ratio, Some(0.625), "31.25 / 50");
        assert_eq!(n1.lat_key.as_deref(), Some("x"), "the cell's measurement");
        assert_eq!(f.params["hmat_lat_ratio@node:1"], 0.8);
        assert!(
            !f.hmat_vs_measured.contains_key("node:0"),
            "node 0 advertises nothing"
        );
        let w = f
            .interleave_weights
            .as_ref()
            .expect("weights from the matrix row");
        let got: Vec<(usize, f64, u32)> = w
            .nodes
            .iter()
            .map(|n| (n.node, n.bw_gbs, u32::from(n.weight)))
            .collect();
        assert_eq!(got, [(0, 10.0, 1), (1, 31.25, 3)], "10 : 31.25 GB/s");
        // A target measured comparably keeps its own keys.
        let mut g = f.clone();
        g.params = [("cxl_lat_ns@node:1".to_string(), 250.0)].into();
        annotate(&mut g, 0);
        assert_eq!(g.hmat_vs_measured["node:1"].lat_ratio, Some(1.0));
        assert_eq!(
            g.hmat_vs_measured["node:1"].lat_key.as_deref(),
            Some("cxl_lat_ns@node:1")
        );
    }

    #[test]
    fn weights_commands_and_gain() {
        let mut f = synthetic(&[
            ("mem_bw_gbs@anon", 250.0),
            ("cxl_bw_gbs@node:1", 60.0),
            ("mem_bw_gbs@interleave:0=4,1=1", 300.0),
        ]);
        annotate(&mut f, 0);
        let w = f.interleave_weights.as_ref().expect("two nodes measured");
        let got: Vec<(usize, u8, Option<u8>)> = w
            .nodes
            .iter()
            .map(|n| (n.node, n.weight, n.kernel_weight))
            .collect();
        assert_eq!(got, [(0, 4, Some(1)), (1, 1, Some(1))]);
        assert_eq!(w.target.as_deref(), Some("interleave:0=4,1=1"));
        assert_eq!(
            w.commands,
            [
                "echo 4 > /sys/kernel/mm/mempolicy/weighted_interleave/node0",
                "echo 1 > /sys/kernel/mm/mempolicy/weighted_interleave/node1"
            ]
        );
        assert_eq!(w.gains.len(), 1);
        assert_eq!(w.gains[0].baseline_target, "anon");
        assert_eq!(w.gains[0].gain_ratio, 1.2);
        assert_eq!(f.params["interleave_gain_ratio@interleave:0=4,1=1"], 1.2);
    }

    #[test]
    fn a_node_target_stands_before_anon_and_one_node_gives_no_weights() {
        let f = synthetic(&[("mem_bw_gbs@anon", 250.0), ("mem_bw_gbs@node:0", 240.0)]);
        assert_eq!(interleave_weights(&f, 0), None, "one node, no gain");
        let f = synthetic(&[
            ("mem_bw_gbs@anon", 250.0),
            ("mem_bw_gbs@node:0", 240.0),
            ("cxl_bw_gbs@node:1", 60.0),
        ]);
        let w = interleave_weights(&f, 0).unwrap();
        assert_eq!(w.nodes[0].target, "node:0");
        assert_eq!(w.nodes.len(), 2);
        // Nothing measured: nothing to compare.
        let mut f = synthetic(&[]);
        annotate(&mut f, 0);
        assert!(f.hmat_vs_measured.is_empty() && f.interleave_weights.is_none());
    }

    #[test]
    fn the_sections_validate_against_the_params_schema() {
        let mut f = synthetic(&[
            ("mem_lat_ns@anon", 90.0),
            ("mem_bw_gbs@anon", 250.0),
            ("cxl_lat_ns@node:1", 312.5),
            ("cxl_bw_gbs@node:1", 60.0),
            ("mem_bw_gbs@interleave:0=4,1=1", 300.0),
        ]);
        f.environment.topology.nodes[1].memory_side_caches =
            vec![bench_core::topology::hmat::MemorySideCache {
                index: 1,
                size_bytes: Some(1 << 30),
                line_bytes: Some(64),
                indexing: Some("direct-mapped".into()),
                write_policy: None,
            }];
        annotate(&mut f, 0);
        let doc = serde_json::to_value(&f).unwrap();
        assert!(doc["hmat_vs_measured"]["node:1"].is_object());
        assert!(doc["interleave_weights"]["gains"].is_array());
        let errors = crate::document::schema_errors(&doc);
        assert!(errors.is_empty(), "{errors:#?}");
    }

    #[test]
    fn check_bounds_the_ratios() {
        use crate::consumers::{check, spec};
        let mut f = synthetic(&[("cxl_lat_ns@node:1", 312.5), ("cxl_bw_gbs@node:1", 60.0)]);
        annotate(&mut f, 0);
        let s = spec::parse(
            "[[bound]]\nkey = \"hmat_bw_ratio@node:1\"\nop = \">=\"\nvalue = 0.8\n\
             [[bound]]\nkey = \"hmat_lat_ratio@node:1\"\nop = \">=\"\nvalue = 0.9\n\
             [[bound]]\nkey = \"hmat_bw_ratio@node:2\"\nop = \">=\"\nvalue = 0.8\noptional = true\n",
            "fw.toml",
        )
        .unwrap();
        let r = check::check(&s, &f);
        let got: Vec<check::Outcome> = r.iter().map(|x| x.outcome).collect();
        assert_eq!(
            got,
            [
                check::Outcome::Pass,
                check::Outcome::Fail,
                check::Outcome::NotMeasured
            ],
            "{r:?}"
        );
    }

    #[test]
    fn the_initiator_is_the_node_of_the_first_cpu() {
        let f = synthetic(&[]);
        assert_eq!(node_of_cpu(&f.environment.topology, 1), 0);
        assert_eq!(node_of_cpu(&f.environment.topology, 99), 0);
    }
}
