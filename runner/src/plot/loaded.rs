//! `loaded-latency.svg`: `mem.loaded` latency vs injected bandwidth (or vs the injection
//! delay when no point records a bandwidth), one curve per (target, traffic mix): the p50
//! solid, the p99 dashed in the same colour.
//!
//! Any mix name is drawn as it is written (`read`, `3r1w`, `2r1w`, `1r1w`, `nt-write`;
//! older files `read` and `read-write`). The p99 of a point is its `per_load_p99_ns`
//! parameter when it has one, else the p99 of its distribution (of the chase batches'
//! latency per load); [`p99_source`] says which for the caption.

use anyhow::Result;
use bench_core::keys::parameters::{DELAY_PAUSE, INJECTED_BW_GBS, MIX, PER_LOAD_P99_NS};
use bench_core::params::Measurement;

use super::data::{num, series_xy, text, Series, Stroke};
use super::lines::{render_lines, LineChart};

fn p99(m: &Measurement) -> f64 {
    num(m, PER_LOAD_P99_NS).unwrap_or(m.distribution.p99)
}

/// Where the dashed p99 curves come from, in words.
pub(super) fn p99_source(ms: &[&Measurement]) -> &'static str {
    let with = ms
        .iter()
        .filter(|m| num(m, PER_LOAD_P99_NS).is_some())
        .count();
    if with == 0 {
        "the p99 of each point's distribution (of its chase batches' latency per load)"
    } else if with == ms.len() {
        "each point's per_load_p99_ns parameter (the p99 of the individual loads)"
    } else {
        "the per_load_p99_ns parameter where a point has one, else the p99 of its \
         distribution (of its chase batches' latency per load)"
    }
}

/// Whether the x axis is the injected bandwidth (else the injection delay).
pub(super) fn by_bandwidth(ms: &[&Measurement]) -> bool {
    ms.iter().any(|m| num(m, INJECTED_BW_GBS).is_some())
}

/// Renders the chart (latency points: unit ns) as an SVG document; `None` when nothing
/// can be drawn.
pub(super) fn render(ms: &[&Measurement]) -> Result<Option<String>> {
    let by_bw = by_bandwidth(ms);
    let x_key = if by_bw { INJECTED_BW_GBS } else { DELAY_PAUSE };
    let name = |m: &Measurement| {
        let k = text(m, MIX).unwrap_or_default();
        format!("{} {k}", m.target).trim().to_string()
    };
    let x = |m: &Measurement| num(m, x_key);
    let p50 = series_xy(ms, name, x, |m| Some(m.distribution.p50));
    let p99s = series_xy(ms, name, x, |m| Some(p99(m)));
    let mut s: Vec<Series> = Vec::with_capacity(2 * p50.len());
    for (i, (mut a, b)) in p50.into_iter().zip(p99s).enumerate() {
        a.color = Some(i);
        a.name = format!("{} p50", a.name);
        let b = Series {
            name: format!("{} p99", b.name),
            stroke: Stroke::Companion,
            color: Some(i),
            points: b.points,
        };
        s.push(a);
        s.push(b);
    }
    render_lines(
        &LineChart {
            title: "Loaded latency (p50 solid, p99 dashed)".into(),
            x_desc: if by_bw {
                "injected bandwidth (GB/s)"
            } else {
                "injection delay / load"
            },
            y_desc: "latency (ns)".into(),
            log_x: false,
            log_y: false,
            size_x: false,
            marks: vec![],
            zero_y: false,
            widen_to_marks: false,
        },
        &s,
    )
}
