//! `bandwidth.svg`: `mem.bandwidth` p50 per kernel, thread count and target vs size (or
//! vs threads when the points carry no size).

use anyhow::Result;
use bench_core::keys::parameters::{KERNEL, SIZE_BYTES, THREADS};
use bench_core::params::Measurement;

use super::data::{num, series_by, text, unit_of};
use super::lines::{render_lines, spans_decades, LineChart};

/// Renders the chart as an SVG document; `None` when nothing can be drawn.
pub(super) fn render(ms: &[&Measurement], caches: &[(f64, String)]) -> Result<Option<String>> {
    let by_size = ms.iter().any(|m| num(m, SIZE_BYTES).is_some());
    let s = series_by(
        ms,
        |m| {
            let k = text(m, KERNEL).unwrap_or_else(|| m.benchmark.clone());
            // One thread and all threads are separate curves (same sizes).
            match (by_size, num(m, THREADS)) {
                (true, Some(t)) => format!("{k} {t}t ({})", m.target),
                _ => format!("{k} ({})", m.target),
            }
        },
        |m| {
            if by_size {
                num(m, SIZE_BYTES)
            } else {
                num(m, THREADS)
            }
        },
    );
    render_lines(
        &LineChart {
            title: "Bandwidth per kernel (p50)".into(),
            x_desc: if by_size { "size" } else { "threads" },
            y_desc: format!("bandwidth ({})", unit_of(ms)),
            log_x: by_size,
            // L1 to DRAM spans decades: a linear axis squashes DRAM to the floor.
            log_y: spans_decades(&s),
            size_x: by_size,
            marks: if by_size { caches.to_vec() } else { vec![] },
            zero_y: false,
            widen_to_marks: true,
        },
        &s,
    )
}
