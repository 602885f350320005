//! `flush.svg`: `pool.flush` cost vs size per method (the flush-cost matrix as lines).

use anyhow::Result;
use bench_core::keys::parameters::{METHOD, SIZE_BYTES};
use bench_core::params::Measurement;

use super::data::{num, series_by, text, unit_of};
use super::lines::{render_lines, LineChart};

/// Renders the chart as an SVG document; `None` when nothing can be drawn.
pub(super) fn render(ms: &[&Measurement]) -> Result<Option<String>> {
    let s = series_by(
        ms,
        |m| {
            let k = text(m, METHOD).unwrap_or_default();
            format!("{k} ({})", m.target)
        },
        |m| num(m, SIZE_BYTES),
    );
    render_lines(
        &LineChart {
            title: "Flush cost vs size (p50)".into(),
            x_desc: "size (bytes)",
            y_desc: format!("cost ({})", unit_of(ms)),
            log_x: true,
            log_y: true,
            size_x: true,
            marks: vec![],
            zero_y: false,
            widen_to_marks: false,
        },
        &s,
    )
}
