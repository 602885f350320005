//! `cxlchar diff`: two params.json files compared per key and per measurement.
//!
//! Significance rule (stated in every report): a change of the median is significant when
//! `|p50_B - p50_A| > sqrt(h_A^2 + h_B^2)` with `h = p90 - p50`, the upper half-spread of
//! each run's samples (p10 is not recorded). The spread, not the standard error, is the
//! yardstick: on a shared machine the median moves from run to run by about the spread of
//! the samples, far more than `stdev / sqrt(n)` suggests, and the latency samples have heavy
//! tails (rare multi-microsecond interruptions) that make `stdev` meaningless for a median.
//! For a params key the noise is that of the measurements it was derived from
//! (`param_info.from`; the median of their `h`); a key without measurements has unknown
//! noise and is never called significant or insignificant.
//!
//! Two fleet files ([`diff_fleet`]): hosts matched by name (a host in one file only is
//! listed), each host's params compared as above; pairs matched by kind and unordered
//! host pair, their params compared the same way.

use crate::document::fleet::{FleetFile, PairKind, PairResult};
use crate::output::table::{Align::*, TextTable};
use bench_core::params::{Measurement, ParamsFile};
use bench_core::stats::Distribution;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    /// The significance rule ([`RULE`]).
    pub rule: String,
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

fn key_noise(f: &ParamsFile, key: &str) -> Option<Noise> {
    let info = f.param_info.get(key)?;
    let ds: Vec<&Distribution> = info
        .from
        .iter()
        .filter_map(|id| f.measurements.iter().find(|m| &m.id == id))
        .map(|m| &m.distribution)
        .collect();
    if ds.is_empty() {
        return None;
    }
    let n: Vec<Noise> = ds.iter().map(|d| Noise::of(d)).collect();
    let nz = Noise {
        h: median(n.iter().map(|x| x.h).collect()),
    };
    nz.h.is_finite().then_some(nz)
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

fn change(
    name: &str,
    unit: &str,
    a: Option<f64>,
    b: Option<f64>,
    na: Option<Noise>,
    nb: Option<Noise>,
) -> Change {
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
    let thr = match (na, nb) {
        (Some(x), Some(y)) => Some(threshold(x, y)),
        _ => None,
    };
    let significant = match (delta, thr) {
        (Some(d), Some(t)) => if d.abs() > t { "yes" } else { "no" }.to_string(),
        _ => "unknown".into(),
    };
    let verdict = match (delta, lower_is_better(unit).or(lower_is_better(name))) {
        (Some(d), Some(lower)) if d != 0.0 => {
            if (d < 0.0) == lower {
                "better"
            } else {
                "worse"
            }
        }
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
    }
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
    cmp(
        "timer source",
        format!("{:?}", a.timer.source),
        format!("{:?}", b.timer.source),
    );
    w
}

/// Compares A and B.
pub fn diff(a: &ParamsFile, b: &ParamsFile) -> DiffReport {
    let keys: BTreeSet<&String> = a.params.keys().chain(b.params.keys()).collect();
    let params = keys
        .into_iter()
        .map(|k| {
            let unit = a
                .param_info
                .get(k)
                .or(b.param_info.get(k))
                .map(|i| i.unit.clone())
                .unwrap_or_default();
            change(
                k,
                &unit,
                a.params.get(k).copied(),
                b.params.get(k).copied(),
                key_noise(a, k),
                key_noise(b, k),
            )
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
            change(
                id,
                &unit,
                x.map(|m| m.distribution.p50),
                y.map(|m| m.distribution.p50),
                x.map(|m| Noise::of(&m.distribution)),
                y.map(|m| Noise::of(&m.distribution)),
            )
        })
        .collect();
    DiffReport {
        rule: RULE.into(),
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

fn rows(s: &mut String, title: &str, changes: &[Change], all: bool) {
    let shown: Vec<&Change> = changes
        .iter()
        .filter(|c| all || c.significant != "no" || c.direction.starts_with("only"))
        .collect();
    s.push_str(&format!(
        "{title} ({} compared, {} significant{})\n",
        changes.len(),
        changes.iter().filter(|c| c.significant == "yes").count(),
        if all {
            String::new()
        } else {
            ", insignificant rows hidden (--all shows them)".into()
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
    for c in shown {
        t.row([
            c.name.clone(),
            f(c.a),
            f(c.b),
            f(c.delta),
            c.pct.map(|p| format!("{p:+.1}%")).unwrap_or("-".into()),
            f(c.threshold),
            c.unit.clone(),
            c.direction.to_string(),
            c.significant.to_string(),
            c.verdict.to_string(),
        ]);
    }
    s.push_str(&t.render());
    s.push('\n');
}

/// A readable report.
pub fn render_table(r: &DiffReport, a: &str, b: &str, all: bool) -> String {
    let mut s = format!("diff A = {a}  B = {b}\nrule: {}\n\n", r.rule);
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

/// One host or pair of two fleet files, compared.
#[derive(Debug, Clone, Serialize)]
pub struct FleetPart {
    /// The host (`h0`) or the pair (`verbs h0-h1`, hosts in name order).
    pub name: String,
    /// The comparison of its params.
    pub diff: DiffReport,
}

/// Two fleet files compared.
#[derive(Debug, Clone, Serialize)]
pub struct FleetDiffReport {
    /// The significance rule ([`RULE`]).
    pub rule: String,
    /// Differences of the fleets themselves (cxlchar version, launcher, number of ranks).
    pub warnings: Vec<String>,
    pub hosts_only_a: Vec<String>,
    pub hosts_only_b: Vec<String>,
    /// Hosts in both, in A's order.
    pub hosts: Vec<FleetPart>,
    pub pairs_only_a: Vec<String>,
    pub pairs_only_b: Vec<String>,
    /// Pairs in both (kind and unordered host pair), in A's order.
    pub pairs: Vec<FleetPart>,
}

fn pair_name(p: &PairResult) -> (PairKind, String) {
    let (x, y) = if p.client <= p.server {
        (&p.client, &p.server)
    } else {
        (&p.server, &p.client)
    };
    (p.kind, format!("{} {x}-{y}", p.kind.name()))
}

/// Compares two fleet files host by host and pair by pair.
pub fn diff_fleet(a: &FleetFile, b: &FleetFile) -> FleetDiffReport {
    let mut warnings = vec![];
    let mut cmp = |what: &str, x: String, y: String| {
        if x != y {
            warnings.push(format!("different {what}: A has {x}, B has {y}"));
        }
    };
    cmp(
        "cxlchar version",
        a.cxlchar_version.clone(),
        b.cxlchar_version.clone(),
    );
    cmp("launcher", a.launcher.kind.clone(), b.launcher.kind.clone());
    cmp(
        "number of ranks",
        a.launcher.ranks.to_string(),
        b.launcher.ranks.to_string(),
    );
    cmp(
        "command line",
        a.command_line
            .iter()
            .skip(1)
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        b.command_line
            .iter()
            .skip(1)
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
    );
    let hosts = a
        .hosts
        .iter()
        .filter_map(|h| {
            let other = b.host(&h.host)?;
            Some(FleetPart {
                name: h.host.clone(),
                diff: diff(&h.params, &other.params),
            })
        })
        .collect();
    let only = |x: &FleetFile, y: &FleetFile| -> Vec<String> {
        x.hosts
            .iter()
            .filter(|h| y.host(&h.host).is_none())
            .map(|h| h.host.clone())
            .collect()
    };
    let pairs_b: Vec<((PairKind, String), &PairResult)> =
        b.pairs.iter().map(|p| (pair_name(p), p)).collect();
    let pairs_a: Vec<((PairKind, String), &PairResult)> =
        a.pairs.iter().map(|p| (pair_name(p), p)).collect();
    let pairs = pairs_a
        .iter()
        .filter_map(|(k, p)| {
            let (_, q) = pairs_b.iter().find(|(l, _)| l == k)?;
            Some(FleetPart {
                name: k.1.clone(),
                diff: diff(&p.params, &q.params),
            })
        })
        .collect();
    let pairs_only = |x: &[((PairKind, String), &PairResult)],
                      y: &[((PairKind, String), &PairResult)]| {
        x.iter()
            .filter(|(k, _)| !y.iter().any(|(l, _)| l == k))
            .map(|(k, _)| k.1.clone())
            .collect::<Vec<_>>()
    };
    FleetDiffReport {
        rule: RULE.into(),
        warnings,
        hosts_only_a: only(a, b),
        hosts_only_b: only(b, a),
        hosts,
        pairs_only_a: pairs_only(&pairs_a, &pairs_b),
        pairs_only_b: pairs_only(&pairs_b, &pairs_a),
        pairs,
    }
}

/// A readable report of two fleet files compared: per host and per pair the tables of
/// [`render_table`] (keys; measurements with `all`).
pub fn render_fleet_table(r: &FleetDiffReport, a: &str, b: &str, all: bool) -> String {
    let mut s = format!("diff fleet A = {a}  B = {b}\nrule: {}\n\n", r.rule);
    for w in &r.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    s.push_str(&format!(
        "hosts in both: {}\nhosts only in A: {}\nhosts only in B: {}\n\
         pairs in both: {}\npairs only in A: {}\npairs only in B: {}\n",
        r.hosts.len(),
        list(&r.hosts_only_a),
        list(&r.hosts_only_b),
        r.pairs.len(),
        list(&r.pairs_only_a),
        list(&r.pairs_only_b),
    ));
    for (what, parts) in [("host", &r.hosts), ("pair", &r.pairs)] {
        for p in parts {
            s.push_str(&format!("\n== {what} {}\n", p.name));
            for w in &p.diff.warnings {
                s.push_str(&format!("warning: {w}\n"));
            }
            rows(&mut s, "params", &p.diff.params, all);
            if all {
                rows(&mut s, "measurements (p50)", &p.diff.measurements, all);
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(p50: f64, p90: f64, stdev: f64, n: u64) -> Distribution {
        Distribution {
            n,
            min: p50 * 0.9,
            p50,
            p90,
            p99: p90,
            p999: p90,
            max: p90,
            mean: p50,
            stdev,
        }
    }

    #[test]
    fn rule() {
        let a = Noise::of(&d(100.0, 103.0, 4.0, 100));
        let b = Noise::of(&d(100.0, 104.0, 4.0, 100));
        // h: sqrt(3^2 + 4^2) = 5.
        assert!((threshold(a, b) - 5.0).abs() < 1e-9);
        let c = change(
            "mem_lat_ns",
            "ns",
            Some(100.0),
            Some(104.0),
            Some(a),
            Some(b),
        );
        assert_eq!(c.significant, "no");
        assert_eq!(c.direction, "up");
        assert_eq!(c.verdict, "worse");
        let c = change(
            "mem_lat_ns",
            "ns",
            Some(100.0),
            Some(90.0),
            Some(a),
            Some(b),
        );
        assert_eq!(c.significant, "yes");
        assert_eq!(c.verdict, "better");
        let c = change("x_gbs", "GB/s", Some(10.0), Some(12.0), None, Some(b));
        assert_eq!(c.significant, "unknown");
        assert_eq!(c.verdict, "better");
        let c = change("x_ns", "ns", Some(10.0), None, Some(a), None);
        assert_eq!(c.direction, "only-a");
        assert_eq!(c.significant, "unknown");
    }
}
