//! The measurements a chart draws, read by their registered parameter names
//! ([`bench_core::keys::parameters`]).

use bench_core::params::{Measurement, ParamsFile};
use bench_core::units::human_bytes;
use serde_json::Value;
use std::collections::BTreeMap;

/// One line of a chart.
pub(super) struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points, sorted by x (y is the p50 unless the chart says otherwise).
    pub points: Vec<(f64, f64)>,
    /// How its line is drawn.
    pub stroke: Stroke,
    /// Colour index, when it must match another series' (else the series' position).
    pub color: Option<usize>,
}

/// How a series' line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stroke {
    /// A solid line with dot markers.
    Solid,
    /// Thin dashes without markers: a companion curve such as a p99.
    Companion,
    /// Dashes with open markers, drawn over the solid lines: a curve that may lie on
    /// another (the GPU's other direction).
    Dashed,
}

/// A numeric parameter of a measurement.
pub(super) fn num(m: &Measurement, key: &str) -> Option<f64> {
    m.parameters.get(key).and_then(Value::as_f64)
}

/// A parameter as text (strings as they are, numbers printed).
pub(super) fn text(m: &Measurement, key: &str) -> Option<String> {
    match m.parameters.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Groups measurements into series named by `name(m)`, points `(x(m), p50)`, sorted by x.
pub(super) fn series_by(
    ms: &[&Measurement],
    name: impl Fn(&Measurement) -> String,
    x: impl Fn(&Measurement) -> Option<f64>,
) -> Vec<Series> {
    series_xy(ms, name, x, |m| Some(m.distribution.p50))
}

/// Groups measurements into series named by `name(m)`, points `(x(m), y(m))` (a
/// measurement without either is left out), sorted by x and named in order.
pub(super) fn series_xy(
    ms: &[&Measurement],
    name: impl Fn(&Measurement) -> String,
    x: impl Fn(&Measurement) -> Option<f64>,
    y: impl Fn(&Measurement) -> Option<f64>,
) -> Vec<Series> {
    let mut map: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for m in ms {
        if let (Some(xv), Some(yv)) = (x(m), y(m)) {
            map.entry(name(m)).or_default().push((xv, yv));
        }
    }
    map.into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name,
                points,
                stroke: Stroke::Solid,
                color: None,
            }
        })
        .collect()
}

/// The measurements of a benchmark (`mem.latency`) or family (`pool.c2c` and its
/// sub-benchmarks `pool.c2c.*`).
pub(super) fn family<'a>(f: &'a ParamsFile, prefix: &str) -> Vec<&'a Measurement> {
    f.measurements
        .iter()
        .filter(|m| m.benchmark == prefix || m.benchmark.starts_with(&format!("{prefix}.")))
        .collect()
}

/// The unit of the first measurement.
pub(super) fn unit_of(ms: &[&Measurement]) -> String {
    ms.first().map(|m| m.unit.clone()).unwrap_or_default()
}

/// Markers of the data and unified caches of the file's environment: (size, `L2 1 MiB`),
/// one per level and size.
pub(super) fn cache_marks(f: &ParamsFile) -> Vec<(f64, String)> {
    f.environment
        .topology
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| {
            (
                c.size_bytes as f64,
                format!("L{} {}", c.level, human_bytes(c.size_bytes as u64)),
            )
        })
        .fold(Vec::new(), |mut v: Vec<(f64, String)>, m| {
            if !v.iter().any(|x| x.1 == m.1) {
                v.push(m);
            }
            v
        })
}
