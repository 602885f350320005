//! `numa-latency.svg` and `numa-bandwidth.svg`: the `mem.matrix` NUMA node matrices of
//! params.json's `numa_matrix` as heatmaps, rows = CPU nodes (initiators), columns =
//! memory nodes (targets), each cell's p50 written in it.

use anyhow::Result;
use bench_core::params::{CellFigure, NumaCell, NumaMatrix};

use super::heatmap::{self, Heatmap};
use std::collections::{HashMap, HashSet};

/// Which figure of the cells a heatmap shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Figure {
    /// Idle latency (ns).
    Latency,
    /// All-CPU read bandwidth (GB/s).
    Bandwidth,
}

impl Figure {
    fn of(self, c: &NumaCell) -> &CellFigure {
        match self {
            Figure::Latency => &c.latency,
            Figure::Bandwidth => &c.bandwidth,
        }
    }
}

/// Renders one matrix as an SVG document; `None` without a matrix or a cell.
pub(super) fn render(m: Option<&NumaMatrix>, fig: Figure) -> Result<Option<String>> {
    let Some(m) = m else {
        return Ok(None);
    };
    // Node -> its row and column (the first, should a node be listed twice).
    let mut rows_of: HashMap<usize, usize> = HashMap::new();
    for (i, &n) in m.initiators.iter().enumerate() {
        rows_of.entry(n).or_insert(i);
    }
    let mut cols_of: HashMap<usize, usize> = HashMap::new();
    for (i, &n) in m.targets.iter().enumerate() {
        cols_of.entry(n).or_insert(i);
    }
    let row = |n: usize| rows_of.get(&n).copied();
    let col = |n: usize| cols_of.get(&n).copied();
    let far_nodes: HashSet<usize> = m
        .cells
        .iter()
        .filter(|c| c.class == "far")
        .map(|c| c.target)
        .collect();
    let cells: Vec<(usize, usize, f64)> = m
        .cells
        .iter()
        .filter_map(|c| {
            Some((
                row(c.initiator)?,
                col(c.target)?,
                fig.of(c).distribution.p50,
            ))
        })
        .collect();
    let rows: Vec<String> = m.initiators.iter().map(|n| format!("node {n}")).collect();
    let cols: Vec<String> = m
        .targets
        .iter()
        .map(|&n| {
            let far = far_nodes.contains(&n);
            format!("node {n}{}", if far { " (far)" } else { "" })
        })
        .collect();
    let (title, format): (&str, &dyn Fn(f64) -> String) = match fig {
        Figure::Latency => ("NUMA idle latency (p50 ns per load)", &|v| {
            format!("{v:.0}")
        }),
        Figure::Bandwidth => ("NUMA read bandwidth (p50 GB/s)", &|v| format!("{v:.1}")),
    };
    heatmap::render(&Heatmap {
        title: title.into(),
        labels: &rows,
        col_labels: Some(&cols),
        row_desc: "CPU node (initiator)",
        col_desc: "memory node (target)",
        cells: &cells,
        format,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::memory::Verification;
    use bench_core::params::PlacementSummary;
    use bench_core::stats::Distribution;

    fn fig(v: f64) -> CellFigure {
        CellFigure {
            id: "x".into(),
            unit: "ns".into(),
            bytes: 1,
            distribution: Distribution::from_samples(&[v]).unwrap(),
        }
    }

    pub(crate) fn cell(i: usize, t: usize, class: &str, lat: f64) -> NumaCell {
        NumaCell {
            initiator: i,
            target: t,
            class: class.into(),
            distance: None,
            cpus: "0".into(),
            latency: fig(lat),
            bandwidth: fig(lat / 10.0),
            loaded_latency: None,
            placement: PlacementSummary {
                verification: Verification::Verified,
                pages_checked: 1,
                pages_on_target: 1,
                region_bytes: 4096,
                warning: None,
            },
        }
    }

    #[test]
    fn a_two_by_three_matrix_draws_every_cell_with_its_value() {
        let m = NumaMatrix {
            initiators: vec![0, 1],
            targets: vec![0, 1, 2],
            cells: vec![
                cell(0, 0, "local", 91.0),
                cell(0, 1, "remote", 142.0),
                cell(0, 2, "far", 255.0),
                cell(1, 0, "remote", 143.0),
                cell(1, 1, "local", 92.0),
                cell(1, 2, "far", 301.0),
            ],
        };
        let svg = render(Some(&m), Figure::Latency).unwrap().unwrap();
        for v in ["91", "142", "255", "301", "node 2 (far)", "CPU node"] {
            assert!(svg.contains(v), "{v}");
        }
        let svg = render(Some(&m), Figure::Bandwidth).unwrap().unwrap();
        assert!(svg.contains("30.1"));
        assert_eq!(render(None, Figure::Latency).unwrap(), None);
    }

    #[test]
    fn a_one_by_one_matrix_draws_its_cell() {
        let m = NumaMatrix {
            initiators: vec![0],
            targets: vec![0],
            cells: vec![cell(0, 0, "local", 129.0)],
        };
        let svg = render(Some(&m), Figure::Latency).unwrap().unwrap();
        assert!(svg.contains("129"));
        assert!(svg.contains("node 0"));
        // Before the colour scale's group: the background and the one cell.
        let scale = svg
            .find("<g class=\"colour-scale\">")
            .expect("a colour scale");
        assert_eq!(
            svg[..scale].matches("<rect").count(),
            2,
            "the background and the cell"
        );
    }
}
