//! `cxlchar diff`: two params.json files compared per key and per measurement.
//!
//! Significance rule (stated in every report): a change of the median is significant when
//! `|p50_B - p50_A| > sqrt(h_A^2 + h_B^2)`, `h` the spread each run recorded for the
//! figure ([`noise`]): the upper half-spread of its samples `p90 - p50` (with few samples,
//! a crew's windows, also `p50 - min`), at least the spread its DRAM check found between
//! passes and sizes, and widened to both half-spreads (also `p50 - min`) for a figure that
//! stands on disturbed samples or a run that was mostly disturbed. The spread, not the
//! standard error, is the yardstick: on a shared machine the median moves from run to run
//! by about the spread of the samples, far more than `stdev / sqrt(n)` suggests, and the
//! latency samples have heavy tails (rare multi-microsecond interruptions) that make
//! `stdev` meaningless for a median. For a params key the noise is that of its own
//! measurement, in its own unit ([`noise`]). A key with no such measurement (a size found
//! in a sweep, a ratio, a sum over agents, a bandwidth read from a latency curve) has no
//! distribution: its row says so and it is never called significant or insignificant.
//!
//! How a figure was measured is compared as an identity ([`method`]): the parameters
//! that say what it means and the first clause of its method text, figures masked; a
//! figure measured differently is not comparable.
//!
//! The report leads with how disturbed each run was, when either is noisy or mostly
//! disturbed ([`Disturbance`]), then the bottom line: how many keys changed beyond their
//! noise, within it, were measured differently (not comparable), have no distribution,
//! or are in one file only, and the largest changes beyond noise.
//!
//! Two fleet files ([`diff_fleet`]): hosts matched by name (a host in one file only is
//! listed), each host's params compared as above; pairs matched by kind and unordered
//! host pair, their params compared the same way.

use crate::output::table::{Align::*, TextTable};
use bench_core::params::{Measurement, ParamsFile};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod bottom;
mod fleet;
pub mod method;
pub mod noise;
mod side;

use bottom::bottom_line;
pub use bottom::{BottomLine, Class};
pub use fleet::{diff_fleet, render_fleet_table};
use noise::threshold;
use noise::Noisy;
pub use side::Disturbance;
use side::Side;

/// The rule, as printed.
pub const RULE: &str = "significant when |p50(B) - p50(A)| > sqrt(hA^2 + hB^2), h = the \
     spread each run recorded: p90 - p50 of its samples (under 10 samples also p50 - min), at \
     least the spread of its DRAM check's passes and sizes, widened to p50 - min too where it \
     stands on disturbed samples";

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
    /// What differs without making the figures incomparable (a DRAM working set both
    /// runs' DRAM checks confirmed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    /// The significance rule ([`RULE`]).
    pub rule: String,
    /// How disturbed each run was (A, then B).
    pub disturbance: [Disturbance; 2],
    /// The keys counted by what their change is, and the largest changes beyond noise.
    pub bottom_line: BottomLine,
    /// Environment/tool differences that make the comparison suspect.
    pub warnings: Vec<String>,
    /// Per params key.
    pub params: Vec<Change>,
    /// Per measurement (matched by id).
    pub measurements: Vec<Change>,
}

fn lower_is_better(unit_or_key: &str) -> Option<bool> {
    let u = bench_core::keys::base_name(unit_or_key);
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
            if sx == sy {
                sx.clone()
            } else {
                format!("A: {sx}; B: {sy}")
            },
        ),
        (Err(x), Err(y)) if x == y => (None, x.clone()),
        (Err(x), Err(y)) => (None, format!("A: {x}; B: {y}")),
        (Err(x), Ok(_)) => (None, format!("A: {x}")),
        (Ok(_), Err(y)) => (None, format!("B: {y}")),
    };
    // A figure that did not move is within any noise, known or not.
    let significant = match (delta, thr) {
        (Some(d), Some(t)) => {
            if d.abs() > t {
                "yes"
            } else {
                "no"
            }
        }
        (Some(0.0), None) => "no",
        _ => "unknown",
    }
    .to_string();
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
        notes: vec![],
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

/// Compares A and B.
pub fn diff(a: &ParamsFile, b: &ParamsFile) -> DiffReport {
    let (sa, sb) = (Side::new("A", a), Side::new("B", b));
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
                noise::key_noise(&sa, k),
                noise::key_noise(&sb, k),
            );
            let (differences, notes) = method::key_differences(&sa, &sb, k);
            let mut c = unless_measured_differently(c, differences);
            c.notes = notes;
            c
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
            let x = ma.get(id).copied();
            let y = mb.get(id).copied();
            let unit = x.or(y).map(|m| m.unit.clone()).unwrap_or_default();
            let c = change(
                id,
                &unit,
                x.map(|m| m.distribution.p50),
                y.map(|m| m.distribution.p50),
                noise::measurement_noise(&sa, x),
                noise::measurement_noise(&sb, y),
            );
            let differences = match (x, y) {
                (Some(x), Some(y)) => method::measurement_differences(x, y),
                _ => vec![],
            };
            unless_measured_differently(c, differences)
        })
        .collect();
    DiffReport {
        rule: RULE.into(),
        disturbance: [sa.disturbance, sb.disturbance],
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
    if shown.is_empty() {
        s.push('\n');
        return;
    }
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
        let mut under = vec![];
        if !c.not_comparable.is_empty() {
            under.push(format!(
                "      measured differently: {}",
                c.not_comparable.join("; ")
            ));
        }
        if !c.notes.is_empty() {
            under.push(format!("      note: {}", c.notes.join("; ")));
        }
        under
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

/// A readable report: how disturbed a noisy side was and the bottom line first, then the
/// rule, warnings and tables.
pub fn render_table(r: &DiffReport, a: &str, b: &str, all: bool) -> String {
    let mut s = format!("diff A = {a}  B = {b}\n");
    bottom_line(&mut s, r);
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
