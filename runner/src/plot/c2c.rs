//! `c2c-<kind>.svg`: `pool.c2c` core-to-core p50 as a heatmap, one per kind.

use anyhow::Result;
use bench_core::keys::parameters::{CPU_A, CPU_B};
use bench_core::params::Measurement;

use super::data::num;
use super::heatmap::{self, Heatmap};
use std::collections::{HashMap, HashSet};

/// Renders the heatmap of one kind as an SVG document; `None` when no pair is measured.
pub(super) fn render_heatmap(kind: &str, ms: &[&Measurement]) -> Result<Option<String>> {
    let mut cells: Vec<(usize, usize, f64)> = ms
        .iter()
        .filter_map(|m| {
            Some((
                num(m, CPU_A)? as usize,
                num(m, CPU_B)? as usize,
                m.distribution.p50,
            ))
        })
        .collect();
    if cells.is_empty() {
        return Ok(None);
    }
    // A pair is measured once (a < b): show it in both halves of the matrix.
    let measured: HashSet<(usize, usize)> = cells.iter().map(|c| (c.0, c.1)).collect();
    let mirrored: Vec<(usize, usize, f64)> = cells
        .iter()
        .filter(|&&(a, b, _)| a != b && !measured.contains(&(b, a)))
        .map(|&(a, b, v)| (b, a, v))
        .collect();
    cells.extend(mirrored);
    let mut cpus: Vec<usize> = cells.iter().flat_map(|c| [c.0, c.1]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let index: HashMap<usize, usize> = cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let lo = cells.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    let hi = cells.iter().map(|c| c.2).fold(f64::NEG_INFINITY, f64::max);
    let labels: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    // Row: cpu a; column: cpu b.
    let cells: Vec<(usize, usize, f64)> = cells
        .iter()
        .map(|&(a, b, v)| (index[&a], index[&b], v))
        .collect();
    let range = if format!("{lo:.1}") == format!("{hi:.1}") {
        format!("{lo:.1}")
    } else {
        format!("{lo:.1}..{hi:.1}")
    };
    heatmap::render(&Heatmap {
        title: format!("Core-to-core {kind} (p50 {}, {range})", ms[0].unit),
        labels: &labels,
        col_labels: None,
        row_desc: "cpu a",
        col_desc: "cpu b",
        cells: &cells,
        format: &|v| format!("{v:.0}"),
    })
}
