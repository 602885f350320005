//! `latency.svg`: `mem.latency` p50 vs working-set size per target and order (log x,
//! log y), with the cache sizes of `environment.topology.caches` marked.

use anyhow::Result;
use bench_core::keys::parameters::{ORDER, SIZE_BYTES};
use bench_core::params::Measurement;

use super::data::{num, series_by, text, unit_of};
use super::lines::{render_lines, LineChart};

/// Renders the chart as an SVG document; `None` when nothing can be drawn.
pub(super) fn render(ms: &[&Measurement], caches: &[(f64, String)]) -> Result<Option<String>> {
    let s = series_by(
        ms,
        |m| {
            format!(
                "{} ({})",
                m.target,
                text(m, ORDER).unwrap_or_else(|| "chase".into())
            )
        },
        |m| num(m, SIZE_BYTES),
    );
    render_lines(
        &LineChart {
            title: "Load latency vs working-set size (p50)".into(),
            x_desc: "working set",
            y_desc: format!("latency ({})", unit_of(ms)),
            log_x: true,
            log_y: true,
            size_x: true,
            marks: caches.to_vec(),
            zero_y: false,
            widen_to_marks: true,
        },
        &s,
    )
}
