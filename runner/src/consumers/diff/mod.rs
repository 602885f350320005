//! `cxlchar diff`: two params.json files compared per key and per measurement.
//!
//! Significance rule (stated in every report): a change of the median is significant when
//! `|p50_B - p50_A| > sqrt(h_A^2 + h_B^2)` with `h = p90 - p50`, the upper half-spread of
//! each run's samples (p10 is not recorded). The spread, not the standard error, is the
//! yardstick: on a shared machine the median moves from run to run by about the spread of
//! the samples, far more than `stdev / sqrt(n)` suggests, and the latency samples have heavy
//! tails (rare multi-microsecond interruptions) that make `stdev` meaningless for a median.
//! For a params key the noise is that of its own measurement, in its own unit: among the
//! measurements it was derived from (`param_info.from`) those in the key's unit, the one
//! whose median is the key's value, else (a median over CPU pairs, a best of several) the
//! median `h` of those whose medians bracket the value. A key with no such measurement (a
//! size found in a sweep, a ratio, a sum over agents, a bandwidth read from a latency
//! curve) has no distribution: its row says so and it is never called significant or
//! insignificant.
//!
//! The report leads with a bottom line: how many keys changed beyond their noise, within
//! it, were measured differently (not comparable), have no distribution, or are in one
//! file only, and the largest changes beyond noise.
//!
//! Two fleet files ([`diff_fleet`]): hosts matched by name (a host in one file only is
//! listed), each host's params compared as above; pairs matched by kind and unordered
//! host pair, their params compared the same way.

use crate::output::table::{Align::*, TextTable};
use bench_core::params::{Measurement, ParamsFile};
use bench_core::stats::Distribution;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod bottom;
mod fleet;

use bottom::bottom_line;
pub use bottom::{BottomLine, Class};
pub use fleet::{diff_fleet, render_fleet_table};

/// The rule, as printed.
pub const RULE: &str =
    "significant when |p50(B) - p50(A)| > sqrt(hA^2 + hB^2), h = p90 - p50 of each run's samples";

/// Noise of a figure.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Noise {
    /// p90 - p50.
    pub h: f64,
}

impl Noise {
    fn of(d: &Distribution) -> Noise {
        Noise {
            h: (d.p90 - d.p50).max(0.0),
        }
    }
}

/// The threshold of the rule for two noises.
pub fn threshold(a: Noise, b: Noise) -> f64 {
    (a.h * a.h + b.h * b.h).sqrt()
}

/// One compared figure.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Key or measurement id.
    pub name: String,
    pub unit: String,
    /// Value in A (None: only in B).
    pub a: Option<f64>,
    /// Value in B (None: only in A).
    pub b: Option<f64>,
    /// B - A.
    pub delta: Option<f64>,
    /// (B - A) / A, percent.
    pub pct: Option<f64>,
    /// `up`, `down`, `same`, `only-a`, `only-b`.
    pub direction: String,
    /// `better`/`worse` where the unit says which way is good (ns lower, GB/s higher).
    pub verdict: String,
    /// The noise threshold (None: unknown).
    pub threshold: Option<f64>,
    /// `yes`, `no`, or `unknown` (no distributions to judge).
    pub significant: String,
    /// Where the noise comes from: `measurement` (the figure's own), `measurements` (the
    /// median over those the figure is central to), or why there is none (`no
    /// distribution: ...`).
    pub noise_source: String,
    /// What differs in how A and B measured the figure (`footprint 1 GiB vs 128 MiB`,
    /// `threads 2 vs 16`, the method's text): empty when they measured it the same way.
    /// A figure measured differently is not comparable: no better/worse verdict.
    pub not_comparable: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    /// The significance rule ([`RULE`]).
    pub rule: String,
    /// The keys counted by what their change is, and the largest changes beyond noise.
    pub bottom_line: BottomLine,
    /// Environment/tool differences that make the comparison suspect.
    pub warnings: Vec<String>,
    /// Per params key.
    pub params: Vec<Change>,
    /// Per measurement (matched by id).
    pub measurements: Vec<Change>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    bench_core::stats::median(&v).unwrap_or(f64::NAN)
}

/// A side's noise and where it comes from, or why it has none.
type Noisy = Result<(Noise, &'static str), String>;

/// A key's noise ([`Noise`], in the key's unit) and where it comes from, or why it has
/// none (see the module's text).
fn key_noise(side: &Side, key: &str) -> Noisy {
    let f = side.f;
    let Some(info) = f.param_info.get(key) else {
        return Err("no distribution: no param_info".into());
    };
    let from: Vec<&Measurement> = side.from(key);
    if from.is_empty() {
        return Err("no distribution: no measurement recorded".into());
    }
    let own: Vec<&Distribution> = from
        .iter()
        .filter(|m| m.unit == info.unit)
        .map(|m| &m.distribution)
        .filter(|d| d.p50.is_finite() && d.p90.is_finite())
        .collect();
    if own.is_empty() {
        let mut units: Vec<&str> = from.iter().map(|m| m.unit.as_str()).collect();
        units.sort();
        units.dedup();
        return Err(format!(
            "no distribution in {}: derived from {} measurements",
            info.unit,
            units.join("/")
        ));
    }
    let Some(&value) = f.params.get(key) else {
        return Err("no distribution: no value".into());
    };
    let same = |x: f64| (x - value).abs() <= 1e-9_f64.max(value.abs() * 1e-6);
    if let Some(d) = own.iter().find(|d| same(d.p50)) {
        return Ok((Noise::of(d), "measurement"));
    }
    let lo = own.iter().map(|d| d.p50).fold(f64::INFINITY, f64::min);
    let hi = own.iter().map(|d| d.p50).fold(f64::NEG_INFINITY, f64::max);
    if !(lo <= value && value <= hi) {
        return Err(format!(
            "no distribution: not the median of its {} measurements",
            info.unit
        ));
    }
    let h = median(own.iter().map(|d| Noise::of(d).h).collect());
    if h.is_finite() {
        Ok((Noise { h }, "measurements"))
    } else {
        Err("no distribution: no finite spread".into())
    }
}

fn lower_is_better(unit_or_key: &str) -> Option<bool> {
    let u = unit_or_key.split('@').next().unwrap_or(unit_or_key);
    if u == "ns" || u.ends_with("_ns") {
        Some(true)
    } else if u == "GB/s" || u.ends_with("_gbs") {
        Some(false)
    } else {
        None
    }
}

fn change(name: &str, unit: &str, a: Option<f64>, b: Option<f64>, na: Noisy, nb: Noisy) -> Change {
    let (delta, pct, direction) = match (a, b) {
        (Some(a), Some(b)) => {
            let d = b - a;
            let dir = if d > 0.0 {
                "up"
            } else if d < 0.0 {
                "down"
            } else {
                "same"
            };
            (
                Some(d),
                (a != 0.0).then(|| d / a.abs() * 100.0),
                dir.to_string(),
            )
        }
        (Some(_), None) => (None, None, "only-a".into()),
        (None, Some(_)) => (None, None, "only-b".into()),
        (None, None) => (None, None, "same".into()),
    };
    let (thr, noise_source) = match (&na, &nb) {
        (Ok((x, sx)), Ok((y, sy))) => (
            Some(threshold(*x, *y)),
            if sx == sy { sx } else { "measurements" }.to_string(),
        ),
        (Err(x), Err(y)) if x == y => (None, x.clone()),
        (Err(x), Err(y)) => (None, format!("A: {x}; B: {y}")),
        (Err(x), Ok(_)) => (None, format!("A: {x}")),
        (Ok(_), Err(y)) => (None, format!("B: {y}")),
    };
    let significant = match (delta, thr) {
        (Some(d), Some(t)) => if d.abs() > t { "yes" } else { "no" }.to_string(),
        _ => "unknown".into(),
    };
    // Better or worse where the unit says which way is good; a size or count that moved
    // is `changed`.
    let verdict = match (delta, lower_is_better(unit).or(lower_is_better(name))) {
        (Some(d), Some(lower)) if d != 0.0 => {
            if (d < 0.0) == lower {
                "better"
            } else {
                "worse"
            }
        }
        (Some(d), None) if d != 0.0 => "changed",
        (Some(_), _) => "same",
        _ => "",
    }
    .to_string();
    Change {
        name: name.into(),
        unit: unit.into(),
        a,
        b,
        delta,
        pct,
        direction,
        verdict,
        threshold: thr,
        significant,
        noise_source,
        not_comparable: vec![],
    }
}

/// A change whose figures were measured differently: the differences recorded, no
/// better/worse verdict.
fn unless_measured_differently(mut c: Change, differences: Vec<String>) -> Change {
    if !differences.is_empty() {
        c.verdict = "not comparable".into();
        c.not_comparable = differences;
    }
    c
}

/// The measurement parameters that say how a figure was measured (what it means), with
/// the words people read: a footprint, thread count, slot, layout or method that differs
/// makes two figures not comparable. Sample counts, laps and seeds (what `--quick`
/// changes) are not among them.
const SHAPE: &[(&str, &str)] = &[
    ("size_bytes", "footprint"),
    ("working_set_bytes", "footprint"),
    ("size_bytes_per_agent", "footprint per agent"),
    ("touched_bytes", "touched"),
    ("buffer_bytes", "buffer"),
    ("chase_bytes", "chase footprint"),
    ("part_bytes_per_thread", "part per thread"),
    ("traffic_bytes_per_thread", "traffic per thread"),
    ("bytes_each", "transfer size"),
    ("block_bytes", "block"),
    ("chunk_bytes", "chunk"),
    ("cell_bytes", "cell"),
    ("slot_bytes", "slot"),
    ("page_size_bytes", "page size"),
    ("threads", "threads"),
    ("agents", "agents"),
    ("pairs", "pairs"),
    ("streams", "streams"),
    ("traffic_threads", "traffic threads"),
    ("cpus", "CPUs"),
    ("layout", "layout"),
    ("order", "order"),
    ("isa", "ISA"),
    ("kernel", "kernel"),
    ("source", "host memory"),
    ("timing", "timing"),
    ("mode", "mode"),
    ("mix", "mix"),
    ("op", "op"),
    ("method", "method"),
];

/// A parameter's value as people read it: sizes in binary units.
fn shape_value(name: &str, v: &serde_json::Value) -> String {
    match (name.contains("bytes"), v.as_u64(), v.as_str()) {
        (true, Some(b), _) => bench_core::units::human_bytes(b),
        (_, _, Some(s)) => s.to_string(),
        _ => v.to_string(),
    }
}

/// For each [`SHAPE`] parameter, the set of its values over `ms`.
fn shape_of(ms: &[&Measurement]) -> BTreeMap<&'static str, BTreeSet<String>> {
    let mut out: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for m in ms {
        for (name, _) in SHAPE {
            if let Some(v) = m.parameters.get(*name).filter(|v| !v.is_null()) {
                out.entry(name).or_default().insert(shape_value(name, v));
            }
        }
    }
    out
}

/// How two sets of measurements behind one figure differ: a parameter with one value on
/// each side and two different values (a parameter that varies within a side is a
/// sweep's points, which `--quick` may thin). Each difference once.
fn shape_differences(a: &[&Measurement], b: &[&Measurement]) -> Vec<String> {
    let (sa, sb) = (shape_of(a), shape_of(b));
    let mut out: Vec<String> = vec![];
    for (name, label) in SHAPE {
        let (Some(x), Some(y)) = (sa.get(name), sb.get(name)) else {
            continue;
        };
        if x.len() == 1 && y.len() == 1 && x != y {
            let d = format!(
                "{label} {} vs {}",
                x.iter().next().map_or("", |v| v.as_str()),
                y.iter().next().map_or("", |v| v.as_str())
            );
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// A method's words with every number (and the size unit glued to it) masked: the text
/// of what was done, not of how many samples or which sizes.
fn method_words(m: &str) -> Vec<String> {
    m.split_whitespace()
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "#".to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// How two method texts differ beyond their numbers: the first words that differ.
fn method_difference(a: &str, b: &str) -> Option<String> {
    let (wa, wb) = (method_words(a), method_words(b));
    if wa == wb {
        return None;
    }
    let at = wa.iter().zip(&wb).take_while(|(x, y)| x == y).count();
    let part = |w: &[String]| {
        let words: Vec<&str> = a_or_b_words(w, at);
        words.join(" ")
    };
    Some(format!("method \"{}\" vs \"{}\"", part(&wa), part(&wb)))
}

/// Up to 6 words of `w` from `at`, with `...` where the text goes on.
fn a_or_b_words(w: &[String], at: usize) -> Vec<&str> {
    let mut v: Vec<&str> = w.iter().skip(at).take(6).map(|s| s.as_str()).collect();
    if w.len() > at + 6 {
        v.push("...");
    }
    v
}

/// A file with its measurements by id (every key looks its own up: linear in the file).
struct Side<'f> {
    f: &'f ParamsFile,
    by_id: std::collections::HashMap<&'f str, &'f Measurement>,
}

impl<'f> Side<'f> {
    fn new(f: &'f ParamsFile) -> Self {
        let by_id = f.measurements.iter().map(|m| (m.id.as_str(), m)).collect();
        Side { f, by_id }
    }

    /// The measurements a key was derived from.
    fn from(&self, key: &str) -> Vec<&'f Measurement> {
        self.f.param_info.get(key).map_or(vec![], |i| {
            i.from
                .iter()
                .filter_map(|id| self.by_id.get(id.as_str()).copied())
                .collect()
        })
    }
}

/// The smallest and largest value of a size parameter over `ms`.
fn size_range(ms: &[&Measurement], name: &str) -> Option<(u64, u64)> {
    let v: Vec<u64> = ms
        .iter()
        .filter_map(|m| m.parameters.get(name).and_then(|v| v.as_u64()))
        .collect();
    Some((*v.iter().min()?, *v.iter().max()?))
}

/// For a key that is a size found in a sweep (`nt_copy_threshold_bytes`): the swept
/// ranges of the size parameters, where they differ (a threshold searched up to 1 MiB is
/// not one searched up to 16 MiB).
fn range_differences(a: &[&Measurement], b: &[&Measurement]) -> Vec<String> {
    let h = bench_core::units::human_bytes;
    SHAPE
        .iter()
        .filter(|(name, _)| name.contains("bytes"))
        .filter_map(|(name, label)| {
            let (x, y) = (size_range(a, name)?, size_range(b, name)?);
            (x != y && (x.0 != x.1 || y.0 != y.1)).then(|| {
                format!(
                    "{label} range {}..{} vs {}..{}",
                    h(x.0),
                    h(x.1),
                    h(y.0),
                    h(y.1)
                )
            })
        })
        .collect()
}

/// How A's and B's figures of `key` were measured differently (empty: the same way).
fn key_differences(sa: &Side, sb: &Side, key: &str) -> Vec<String> {
    let (a, b) = (sa.f, sb.f);
    let (fa, fb) = (sa.from(key), sb.from(key));
    let mut d = shape_differences(&fa, &fb);
    if key.split('@').next().is_some_and(|k| k.ends_with("_bytes")) {
        d.extend(range_differences(&fa, &fb));
    }
    if let (Some(x), Some(y)) = (a.param_info.get(key), b.param_info.get(key)) {
        if d.is_empty() {
            d.extend(method_difference(&x.method, &y.method));
        }
    }
    d
}

fn env_warnings(a: &ParamsFile, b: &ParamsFile) -> Vec<String> {
    let mut w = vec![];
    let mut cmp = |what: &str, x: String, y: String| {
        if x != y {
            w.push(format!("different {what}: A has {x}, B has {y}"));
        }
    };
    let (ea, eb) = (&a.environment, &b.environment);
    cmp(
        "schema_version",
        a.schema_version.to_string(),
        b.schema_version.to_string(),
    );
    cmp(
        "cxlchar version",
        a.tool.version.clone(),
        b.tool.version.clone(),
    );
    cmp("CPU model", ea.cpu.model.clone(), eb.cpu.model.clone());
    cmp(
        "logical CPU count",
        ea.cpu.logical_cpus.to_string(),
        eb.cpu.logical_cpus.to_string(),
    );
    cmp("kernel", ea.kernel.clone(), eb.kernel.clone());
    cmp(
        "THP setting",
        format!("{:?}", ea.thp_enabled),
        format!("{:?}", eb.thp_enabled),
    );
    cmp(
        "CPU governor",
        ea.governors.join(","),
        eb.governors.join(","),
    );
    cmp(
        "turbo",
        format!("{:?}", ea.turbo),
        format!("{:?}", eb.turbo),
    );
    cmp(
        "SMT",
        format!("{:?}", ea.smt_active),
        format!("{:?}", eb.smt_active),
    );
    cmp(
        "hypervisor",
        format!("{:?}", ea.hypervisor),
        format!("{:?}", eb.hypervisor),
    );
    cmp(
        "NUMA balancing",
        format!("{:?}", ea.numa_balancing),
        format!("{:?}", eb.numa_balancing),
    );
    let effort = |f: &ParamsFile| {
        if f.command_line.iter().any(|a| a == "--quick") {
            "--quick".to_string()
        } else {
            "a full run".to_string()
        }
    };
    cmp("effort", effort(a), effort(b));
    cmp(
        "timer source",
        format!("{:?}", a.timer.source),
        format!("{:?}", b.timer.source),
    );
    w
}

/// A measurement's own noise (`Err`: not in this file).
fn measurement_noise(m: Option<&Measurement>) -> Noisy {
    m.map(|m| (Noise::of(&m.distribution), "measurement"))
        .ok_or_else(|| "in one file only".to_string())
}

/// Compares A and B.
pub fn diff(a: &ParamsFile, b: &ParamsFile) -> DiffReport {
    let (sa, sb) = (Side::new(a), Side::new(b));
    let keys: BTreeSet<&String> = a.params.keys().chain(b.params.keys()).collect();
    let params: Vec<Change> = keys
        .into_iter()
        // `key@target` where it only repeats `key` (the first target's) in each file.
        .filter(|k| {
            ![a, b]
                .iter()
                .all(|f| !f.params.contains_key(*k) || super::keys::repeats_bare(f, k))
        })
        .map(|k| {
            let unit = a
                .param_info
                .get(k)
                .or(b.param_info.get(k))
                .map(|i| i.unit.clone())
                .unwrap_or_default();
            let c = change(
                k,
                &unit,
                a.params.get(k).copied(),
                b.params.get(k).copied(),
                key_noise(&sa, k),
                key_noise(&sb, k),
            );
            unless_measured_differently(c, key_differences(&sa, &sb, k))
        })
        .collect();
    let ma: BTreeMap<&str, &Measurement> =
        a.measurements.iter().map(|m| (m.id.as_str(), m)).collect();
    let mb: BTreeMap<&str, &Measurement> =
        b.measurements.iter().map(|m| (m.id.as_str(), m)).collect();
    let ids: BTreeSet<&str> = ma.keys().chain(mb.keys()).copied().collect();
    let measurements = ids
        .into_iter()
        .map(|id| {
            let x = ma.get(id);
            let y = mb.get(id);
            let unit = x.or(y).map(|m| m.unit.clone()).unwrap_or_default();
            let c = change(
                id,
                &unit,
                x.map(|m| m.distribution.p50),
                y.map(|m| m.distribution.p50),
                measurement_noise(x.copied()),
                measurement_noise(y.copied()),
            );
            let differences = match (x, y) {
                (Some(x), Some(y)) => {
                    let mut d = shape_differences(&[x], &[y]);
                    if d.is_empty() {
                        d.extend(method_difference(&x.method, &y.method));
                    }
                    d
                }
                _ => vec![],
            };
            unless_measured_differently(c, differences)
        })
        .collect();
    DiffReport {
        rule: RULE.into(),
        bottom_line: BottomLine::of(&params),
        warnings: env_warnings(a, b),
        params,
        measurements,
    }
}

fn f(v: Option<f64>) -> String {
    match v {
        Some(v) if v.abs() >= 1000.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
        None => "-".into(),
    }
}

/// What a section's rows are, for its counts.
fn title_noun(title: &str) -> &'static str {
    if title.starts_with("params") {
        "keys"
    } else {
        "measurements"
    }
}

fn rows(s: &mut String, title: &str, changes: &[Change], all: bool) {
    // Without --all: rows within noise hidden, and measurements in one file only (the
    // sweep points --quick thins), counted in the title.
    let keys = title_noun(title) == "keys";
    let shown: Vec<&Change> = changes
        .iter()
        .filter(|c| {
            all || match c.class() {
                Class::Within => false,
                Class::OneFile => keys,
                _ => true,
            }
        })
        .collect();
    s.push_str(&format!(
        "{title}: {}{}\n",
        BottomLine::of(changes).sentence(title_noun(title)),
        if all {
            ""
        } else {
            if title_noun(title) == "keys" {
                "; rows within noise hidden (--all shows them)"
            } else {
                "; rows within noise or in one file only hidden (--all shows them)"
            }
        }
    ));
    let mut t = TextTable::new(&[
        ("name", Left),
        ("A", Right),
        ("B", Right),
        ("delta", Right),
        ("pct", Right),
        ("noise", Right),
        ("unit", Left),
        ("dir", Left),
        ("signif", Left),
        ("verdict", Left),
    ])
    .indent(2);
    for c in &shown {
        t.row([
            c.name.clone(),
            f(c.a),
            f(c.b),
            f(c.delta),
            c.pct.map(|p| format!("{p:+.1}%")).unwrap_or("-".into()),
            f(c.threshold),
            c.unit.clone(),
            c.direction.to_string(),
            signif_cell(c).to_string(),
            c.verdict.to_string(),
        ]);
    }
    s.push_str(&t.render_with(|i| {
        let c = shown[i];
        if c.not_comparable.is_empty() {
            vec![]
        } else {
            vec![format!(
                "      measured differently: {}",
                c.not_comparable.join("; ")
            )]
        }
    }));
    s.push('\n');
}

/// The significance column: `yes`, `no`, `no distribution` (a key without one in its
/// unit), `-` (in one file only).
fn signif_cell(c: &Change) -> &str {
    match c.class() {
        Class::OneFile => "-",
        Class::NoDistribution | Class::NotComparable if c.significant == "unknown" => {
            "no distribution"
        }
        _ => &c.significant,
    }
}

/// A readable report: the bottom line first, then the rule, warnings and tables.
pub fn render_table(r: &DiffReport, a: &str, b: &str, all: bool) -> String {
    let mut s = format!("diff A = {a}  B = {b}\n");
    bottom_line(&mut s, &r.bottom_line, &r.params);
    s.push_str(&format!("rule: {}\n\n", r.rule));
    for w in &r.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    if !r.warnings.is_empty() {
        s.push('\n');
    }
    rows(&mut s, "params", &r.params, all);
    rows(&mut s, "measurements (p50)", &r.measurements, all);
    s
}

#[cfg(test)]
mod tests;
