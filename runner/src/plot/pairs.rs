//! `pairs-<key>.svg`: a fleet file's pair matrices (`verbs_lat_ns`, `verbs_bw_gbs`,
//! `pool_msg_lat_ns`, `pool_msg_bw_gbs`) as host x host heatmaps.

use super::heatmap::{self, Heatmap};
use super::Chart;
use crate::document::fleet::FleetFile;
use crate::fleet::summary::{self, Matrix};
use anyhow::{Context, Result};

/// The file a matrix is drawn into.
pub fn file_name(m: &Matrix) -> String {
    format!("pairs-{}.svg", m.key)
}

/// Renders one matrix; `None` when no pair of it was measured.
pub fn render(m: &Matrix) -> Result<Option<String>> {
    let cells: Vec<(usize, usize, f64)> = m
        .cells
        .iter()
        .enumerate()
        .flat_map(|(i, row)| {
            row.iter()
                .enumerate()
                .filter_map(move |(j, v)| v.map(|v| (i, j, v)))
        })
        .collect();
    let unit = bench_core::keys::Unit::of_name(&m.key).map_or("", |u| u.symbol());
    let (lo, hi) = cells
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), c| {
            (l.min(c.2), h.max(c.2))
        });
    heatmap::render(&Heatmap {
        title: format!(
            "{} pairs: {} ({unit}, {lo:.1}..{hi:.1})",
            m.kind.name(),
            m.key
        ),
        labels: &m.hosts,
        col_labels: None,
        row_desc: "host",
        col_desc: "host",
        cells: &cells,
        format: &|v| crate::output::num(Some(v)),
    })
}

/// One chart per pair matrix of the fleet (drawn or with a note saying why not).
pub fn charts(f: &FleetFile) -> Result<Vec<Chart>> {
    summary::matrices(f)
        .iter()
        .map(|m| {
            let file = file_name(m);
            let svg = render(m).with_context(|| format!("drawing {file}"))?;
            let why: Vec<String> = f
                .pairs_skipped
                .iter()
                .filter(|s| s.kind == m.kind)
                .map(|s| s.reason.clone())
                .collect();
            let note = if svg.is_some() {
                String::new()
            } else if why.is_empty() {
                format!(
                    "no {} pair in this fleet file measured {}",
                    m.kind.name(),
                    m.key
                )
            } else {
                format!(
                    "no {} pair in this fleet file measured {}: {}",
                    m.kind.name(),
                    m.key,
                    why.join("; ")
                )
            };
            Ok(Chart {
                family: format!("fleet.{}", m.kind.name()),
                caption: format!(
                    "{}: the {} pairs' {} per pair of hosts (each pair measured once, client \
                     to server, shown in both halves; hatched grey: not measured), light low to \
                     dark red high. Each value is the client's params key as its run recorded it.",
                    m.key,
                    m.kind.name(),
                    m.key
                ),
                file,
                svg,
                note,
            })
        })
        .collect()
}
