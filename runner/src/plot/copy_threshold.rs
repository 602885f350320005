//! `copy-threshold.svg`: `mem.copy-threshold` all-to-all copy bandwidth vs block size per
//! method (temporal, NT, hybrid) and thread count.

use anyhow::Result;
use bench_core::keys::parameters::{BLOCK_BYTES, METHOD, THREADS};
use bench_core::params::Measurement;

use super::data::{num, series_by, text, unit_of};
use super::lines::{render_lines, LineChart};

/// Renders the chart as an SVG document; `None` when nothing can be drawn.
pub(super) fn render(ms: &[&Measurement], caches: &[(f64, String)]) -> Result<Option<String>> {
    render_blocks(
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
pub(super) fn render_blocks(
    ms: &[&Measurement],
    caches: &[(f64, String)],
    title: &str,
    label: &dyn Fn(&Measurement) -> String,
) -> Result<Option<String>> {
    let s = series_by(ms, label, |m| num(m, BLOCK_BYTES));
    render_lines(
        &LineChart {
            title: title.into(),
            x_desc: "block size (bytes)",
            y_desc: format!("bandwidth ({})", unit_of(ms)),
            log_x: true,
            log_y: false,
            size_x: true,
            marks: caches.to_vec(),
            zero_y: false,
            widen_to_marks: false,
        },
        &s,
    )
}
