//! `copy-threshold.svg`: `mem.copy-threshold` all-to-all copy bandwidth vs block size per
//! method (temporal, NT, hybrid) and thread count.

use anyhow::Result;
use bench_core::keys::parameters::{BLOCK_BYTES, METHOD, THREADS};
use bench_core::params::Measurement;
use std::path::Path;

use super::data::{num, series_by, text, unit_of};
use super::lines::{draw_lines, LineChart};

/// Draws the chart; `false` when nothing can be drawn.
pub(super) fn draw(path: &Path, ms: &[&Measurement], caches: &[(f64, String)]) -> Result<bool> {
    draw_blocks(
        path,
        ms,
        caches,
        "All-to-all copy bandwidth by block size (p50): temporal vs NT vs hybrid",
        &|m| {
            let k = text(m, METHOD).unwrap_or_else(|| "copy".into());
            match num(m, THREADS) {
                Some(t) => format!("{k} P={t} ({})", m.target),
                None => format!("{k} ({})", m.target),
            }
        },
    )
}

/// An all-to-all chart (this one, `alltoall-order.svg`): p50 vs `block_bytes` (log x,
/// cache sizes marked), one line per `label`.
pub(super) fn draw_blocks(
    path: &Path,
    ms: &[&Measurement],
    caches: &[(f64, String)],
    title: &str,
    label: &dyn Fn(&Measurement) -> String,
) -> Result<bool> {
    let s = series_by(ms, label, |m| num(m, BLOCK_BYTES));
    draw_lines(
        path,
        &LineChart {
            title: title.into(),
            x_desc: "block size (bytes)",
            y_desc: format!("bandwidth ({})", unit_of(ms)),
            log_x: true,
            log_y: false,
            size_x: true,
            marks: caches.to_vec(),
        },
        &s,
    )
}
