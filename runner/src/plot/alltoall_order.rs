//! `alltoall-order.svg`: `mem.alltoall-order` all-to-all bandwidth vs block size per copy
//! order (row, column, Hilbert), method and thread count (HINT Fig. 6 as bandwidth).

use anyhow::Result;
use bench_core::keys::parameters::{METHOD, ORDER, THREADS};
use bench_core::params::Measurement;

use super::copy_threshold::render_blocks;
use super::data::{num, text};

/// Renders the chart as an SVG document; `None` when nothing can be drawn.
pub(super) fn render(ms: &[&Measurement], caches: &[(f64, String)]) -> Result<Option<String>> {
    render_blocks(
        ms,
        caches,
        "All-to-all bandwidth by block size (p50): row-wise vs column-wise vs Hilbert order",
        &|m| {
            let o = text(m, ORDER).unwrap_or_else(|| "order".into());
            let k = text(m, METHOD).unwrap_or_else(|| "copy".into());
            match num(m, THREADS) {
                Some(t) => format!("{o} {k} P={t} ({})", m.target),
                None => format!("{o} {k} ({})", m.target),
            }
        },
    )
}
