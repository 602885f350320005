//! `alltoall-order.svg`: `mem.alltoall-order` all-to-all bandwidth vs block size per copy
//! order (row, column, Hilbert), method and thread count (HINT Fig. 6 as bandwidth).

use anyhow::Result;
use bench_core::keys::parameters::{BLOCK_BYTES, METHOD, ORDER, THREADS};
use bench_core::params::Measurement;
use std::path::Path;

use super::data::{num, series_by, text, unit_of};
use super::lines::{draw_lines, LineChart};

/// Draws the chart; `false` when nothing can be drawn.
pub(super) fn draw(path: &Path, ms: &[&Measurement], caches: &[(f64, String)]) -> Result<bool> {
    let s = series_by(
        ms,
        |m| {
            let o = text(m, ORDER).unwrap_or_else(|| "order".into());
            let k = text(m, METHOD).unwrap_or_else(|| "copy".into());
            match num(m, THREADS) {
                Some(t) => format!("{o} {k} P={t} ({})", m.target),
                None => format!("{o} {k} ({})", m.target),
            }
        },
        |m| num(m, BLOCK_BYTES),
    );
    draw_lines(
        path,
        &LineChart {
            title:
                "All-to-all bandwidth by block size (p50): row-wise vs column-wise vs Hilbert order"
                    .into(),
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
