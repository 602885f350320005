//! `gpu-bw.svg` and `gpu-contention.svg`: the GPU copy bandwidth of `gpu.bw` and
//! `gpu.pool` vs copy size per host memory kind and direction, and the bandwidth of k
//! concurrent copies (`gpu.pool` contention: per copy and aggregate) vs k.

use anyhow::Result;
use bench_core::keys::parameters::{DIR, GPU, SIZE_BYTES, SOURCE, STREAMS, TIMING};
use bench_core::params::Measurement;

use super::data::{num, series_by, text, Stroke};
use super::lines::{render_lines, spans_decades, LineChart};

/// Whether `m` is a point of a size sweep (not a contention point).
pub(super) fn is_sweep(m: &Measurement) -> bool {
    m.unit == "GB/s" && num(m, SIZE_BYTES).is_some() && num(m, STREAMS).is_none()
}

/// Whether `m` is a contention bandwidth point (per copy or aggregate).
pub(super) fn is_contention(m: &Measurement) -> bool {
    m.unit == "GB/s" && num(m, STREAMS).is_some()
}

/// The GPU's name and device index of a point (`NVIDIA H200 (0)`).
fn device(m: &Measurement) -> String {
    let name = text(m, GPU).unwrap_or_else(|| "GPU".into());
    match text(m, "device") {
        Some(d) => format!("{name} (gpu {d})"),
        None => name,
    }
}

/// The size sweep: one curve per (device, host memory, direction), event-timed points
/// when there are any (host-timed ones otherwise); log-log.
pub(super) fn render_sweep(ms: &[&Measurement]) -> Result<Option<String>> {
    let events = ms
        .iter()
        .any(|m| text(m, TIMING).as_deref() == Some("events"));
    let pts: Vec<&Measurement> = ms
        .iter()
        .copied()
        .filter(|m| !events || text(m, TIMING).as_deref() == Some("events"))
        .collect();
    let s = series_by(
        &pts,
        |m| {
            format!(
                "{} {} {}",
                device(m),
                text(m, SOURCE).unwrap_or_default(),
                text(m, DIR).unwrap_or_default()
            )
        },
        |m| num(m, SIZE_BYTES),
    );
    render_lines(
        &LineChart {
            title: "GPU copy bandwidth vs copy size (p50)".into(),
            x_desc: "bytes per copy",
            y_desc: "bandwidth (GB/s)".into(),
            log_x: true,
            log_y: spans_decades(&s),
            size_x: true,
            marks: vec![],
            zero_y: false,
            widen_to_marks: false,
        },
        &s,
    )
}

/// Contention: per-copy and aggregate bandwidth vs the number of concurrent copies. The
/// copies towards the host (d2h) are drawn dashed over those towards the GPU (h2d): on a
/// link as fast both ways the curves lie on each other, and both stay visible.
pub(super) fn render_contention(ms: &[&Measurement]) -> Result<Option<String>> {
    let mut s = series_by(
        ms,
        |m| {
            let what = m.id.rsplit('/').next().unwrap_or("").replace('_', " ");
            format!(
                "{} {} {what} ({})",
                device(m),
                text(m, DIR).unwrap_or_default(),
                m.target
            )
        },
        |m| num(m, STREAMS),
    );
    for x in &mut s {
        if x.name.contains(" d2h ") {
            x.stroke = Stroke::Dashed;
        }
    }
    render_lines(
        &LineChart {
            title: "GPU copies at once: bandwidth vs concurrent copies (p50; d2h dashed)".into(),
            x_desc: "concurrent copies (streams)",
            y_desc: "bandwidth (GB/s)".into(),
            log_x: false,
            log_y: false,
            size_x: false,
            marks: vec![],
            zero_y: true,
            widen_to_marks: false,
        },
        &s,
    )
}
