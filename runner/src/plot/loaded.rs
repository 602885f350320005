//! `loaded-latency.svg`: `mem.loaded` latency vs injected bandwidth (or vs the injection
//! delay when no point records a bandwidth), one curve per traffic mix and target.

use anyhow::Result;
use bench_core::keys::parameters::{DELAY_PAUSE, INJECTED_BW_GBS, MIX};
use bench_core::params::Measurement;
use std::path::Path;

use super::data::{num, series_by, text};
use super::lines::{draw_lines, LineChart};

/// Draws the chart (latency points: unit ns); `false` when nothing can be drawn.
pub(super) fn draw(path: &Path, ms: &[&Measurement]) -> Result<bool> {
    let by_bw = ms.iter().any(|m| num(m, INJECTED_BW_GBS).is_some());
    let x_key = if by_bw { INJECTED_BW_GBS } else { DELAY_PAUSE };
    let s = series_by(
        ms,
        |m| {
            let k = text(m, MIX).unwrap_or_default();
            format!("{} {k}", m.target).trim().to_string()
        },
        |m| num(m, x_key),
    );
    draw_lines(
        path,
        &LineChart {
            title: "Loaded latency (p50)".into(),
            x_desc: if by_bw {
                "achieved bandwidth (GB/s)"
            } else {
                "injection delay / load"
            },
            y_desc: "latency (ns)".into(),
            log_x: false,
            log_y: false,
            size_x: false,
            marks: vec![],
        },
        &s,
    )
}
