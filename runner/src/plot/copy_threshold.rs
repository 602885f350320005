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
    let s = series_by(
        ms,
        |m| {
            let k = text(m, METHOD).unwrap_or_else(|| "copy".into());
            match num(m, THREADS) {
                Some(t) => format!("{k} P={t} ({})", m.target),
                None => format!("{k} ({})", m.target),
            }
        },
        |m| num(m, BLOCK_BYTES),
    );
    draw_lines(
        path,
        &LineChart {
            title: "All-to-all copy bandwidth by block size (p50): temporal vs NT vs hybrid".into(),
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
