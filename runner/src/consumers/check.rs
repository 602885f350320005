//! `cxlchar check`: a params.json against an acceptance spec.
//!
//! Each bound ends as `pass`, `fail` or `not-measured` (the key, or a key its expression
//! needs, is absent; the reason names the benchmark and, when the file lists it as
//! skipped, why). A bound that could not be evaluated is never reported as a pass.
//!
//! On a fleet file ([`check_fleet`]) every host's params are checked against the spec's
//! host bounds, and the bounds (and required keys) on pair keys (`verbs_*`, `pool_msg_*`)
//! against every measured pair of that kind; the exit status is the worst over all.

use super::keys;
use super::spec::{Limit, Spec};
use crate::document::fleet::{FleetFile, PairKind};
use crate::exit::Status;
use crate::output::table::{Align::*, TextTable};
use bench_core::params::ParamsFile;
use serde::Serialize;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The bound holds.
    Pass,
    /// The bound does not hold.
    Fail,
    /// A key it needs is absent.
    NotMeasured,
}

impl Outcome {
    /// As printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "FAIL",
            Outcome::NotMeasured => "NOT MEASURED",
        }
    }
}

/// The result of one bound or required key.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    /// `mem_lat_ns <= 120`, or `mem_lat_ns is measured`.
    pub name: String,
    pub key: String,
    /// Line in the spec.
    pub line: usize,
    pub outcome: Outcome,
    /// The key's value, when measured.
    pub measured: Option<f64>,
    /// The limit's value, when it could be evaluated.
    pub limit: Option<f64>,
    /// Headroom in the key's unit (positive: holds), when both are known.
    pub margin: Option<f64>,
    /// Headroom relative to the limit, percent.
    pub margin_pct: Option<f64>,
    /// Why not measured, or the failure explained.
    pub reason: String,
    /// The spec's rationale.
    pub why: String,
    /// Not measured is no failure.
    pub optional: bool,
    /// Why a key it reads is noisy (measured only on disturbed windows), when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noisy: Option<String>,
}

fn not_measured_reason(key: &str, file: &ParamsFile) -> String {
    let (bench, cmd) = keys::producer(key);
    let mut s = format!("{key} is absent from the file (produced by {bench}: {cmd})");
    if let Some(r) = keys::skipped_reason(key, &file.skipped) {
        s.push_str(&format!("; the file says {r}"));
    }
    s
}

fn value(file: &ParamsFile, key: &str) -> Option<f64> {
    file.params.get(key).copied().filter(|v| v.is_finite())
}

/// Why `key` is noisy, when the file says it is.
fn noisy(file: &ParamsFile, key: &str) -> Option<String> {
    file.param_info
        .get(key)
        .and_then(|i| i.noisy.clone())
        .map(|why| format!("{key} is noisy ({why})"))
}

/// A result whose noisy keys the spec refuses: not measured, with why.
fn refuse(mut r: CheckResult) -> CheckResult {
    if let Some(n) = &r.noisy {
        r.outcome = Outcome::NotMeasured;
        r.reason = format!("{n}; the spec refuses noisy values (refuse_noisy)");
        r.margin = None;
        r.margin_pct = None;
    }
    r
}

/// Checks every required key and bound.
pub fn check(spec: &Spec, file: &ParamsFile) -> Vec<CheckResult> {
    let mut out = vec![];
    for (key, line) in &spec.required {
        let v = value(file, key);
        let r = CheckResult {
            name: format!("{key} is measured"),
            key: key.clone(),
            line: *line,
            outcome: if v.is_some() {
                Outcome::Pass
            } else {
                Outcome::NotMeasured
            },
            measured: v,
            limit: None,
            margin: None,
            margin_pct: None,
            reason: if v.is_some() {
                String::new()
            } else {
                not_measured_reason(key, file)
            },
            why: "required".into(),
            optional: false,
            noisy: v.and_then(|_| noisy(file, key)),
        };
        out.push(if spec.refuse_noisy { refuse(r) } else { r });
    }
    for b in &spec.bounds {
        let limit_text = match &b.limit {
            Limit::Value(v) => format!("{v}"),
            Limit::Expr(t, _) => t.clone(),
        };
        let name = format!("{} {} {}", b.key, b.op.as_str(), limit_text);
        let measured = value(file, &b.key);
        let mut missing: Vec<String> = vec![];
        if measured.is_none() {
            missing.push(b.key.clone());
        }
        let limit = match &b.limit {
            Limit::Value(v) => Some(*v),
            Limit::Expr(_, terms) => {
                let mut sum = 0.0;
                let mut ok = true;
                for t in terms {
                    match &t.key {
                        None => sum += t.coeff,
                        Some(k) => match value(file, k) {
                            Some(v) => sum += t.coeff * v,
                            None => {
                                ok = false;
                                if !missing.contains(k) {
                                    missing.push(k.clone());
                                }
                            }
                        },
                    }
                }
                ok.then_some(sum)
            }
        };
        let (outcome, margin, reason) = match (measured, limit) {
            (Some(_), Some(l)) if !l.is_finite() => (
                Outcome::Fail,
                None,
                format!(
                    "the limit evaluates to {l}, not a finite number (the expression \
                     overflows): a bound that cannot be compared is not a pass"
                ),
            ),
            (Some(v), Some(l)) => {
                let m = b.op.margin(v, l);
                if b.op.holds(v, l) {
                    (Outcome::Pass, Some(m), String::new())
                } else {
                    (
                        Outcome::Fail,
                        Some(m),
                        format!("{} = {v} is not {} {l}", b.key, b.op.as_str()),
                    )
                }
            }
            _ => (
                Outcome::NotMeasured,
                None,
                missing
                    .iter()
                    .map(|k| not_measured_reason(k, file))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        };
        let noisy_keys = std::iter::once(&b.key)
            .chain(match &b.limit {
                Limit::Expr(_, terms) => terms.iter().filter_map(|t| t.key.as_ref()).collect(),
                Limit::Value(_) => vec![],
            })
            .filter_map(|k| noisy(file, k))
            .collect::<Vec<_>>();
        let r = CheckResult {
            name,
            key: b.key.clone(),
            line: b.line,
            outcome,
            measured,
            limit,
            margin,
            margin_pct: match (margin, limit) {
                (Some(m), Some(l)) if l != 0.0 => Some(m / l.abs() * 100.0),
                _ => None,
            },
            reason,
            why: b.why.clone(),
            optional: b.optional,
            noisy: (!noisy_keys.is_empty()).then(|| noisy_keys.join("; ")),
        };
        out.push(if b.refuse_noisy && outcome != Outcome::NotMeasured {
            refuse(r)
        } else {
            r
        });
    }
    out
}

/// The kind of pair a key is measured on (`verbs_*`, `pool_msg_*`), `None` for a host key.
pub fn pair_kind(key: &str) -> Option<PairKind> {
    let base = bench_core::keys::base_name(key);
    if base.starts_with("verbs_") {
        Some(PairKind::Verbs)
    } else if base.starts_with("pool_msg_") {
        Some(PairKind::Pool)
    } else {
        None
    }
}

/// The part of `spec` on hosts (`None`) or on pairs of one kind.
fn part(spec: &Spec, kind: Option<PairKind>) -> Spec {
    Spec {
        name: spec.name.clone(),
        required: spec
            .required
            .iter()
            .filter(|(k, _)| pair_kind(k) == kind)
            .cloned()
            .collect(),
        bounds: spec
            .bounds
            .iter()
            .filter(|b| pair_kind(&b.key) == kind)
            .cloned()
            .collect(),
        refuse_noisy: spec.refuse_noisy,
    }
}

/// The results of a fleet check for one host, one pair, or the pairs of a kind none of
/// which was measured.
#[derive(Debug, Clone, Serialize)]
pub struct FleetSuite {
    /// `h0` (a host), `verbs h0-h1` (a pair, client first), `verbs pairs` (none measured).
    pub name: String,
    /// `host`, `pair` or `pairs`.
    pub kind: &'static str,
    /// Where in the fleet file the params are (`hosts[0].params`, `pairs[2].params`).
    pub source: String,
    /// [`exit_code`] of `results`.
    pub exit_code: Status,
    /// One result per required key and bound of this part of the spec.
    pub results: Vec<CheckResult>,
}

/// Checks a fleet file: one suite per host (when the spec has host bounds), one per pair
/// of a kind whose keys a bound names; a kind with such bounds and no measured pair is one
/// suite whose every check is not measured, with the fleet's reasons.
pub fn check_fleet(spec: &Spec, f: &FleetFile) -> Vec<FleetSuite> {
    let mut out = vec![];
    let suite = |name: String, kind, source: String, results: Vec<CheckResult>| FleetSuite {
        name,
        kind,
        source,
        exit_code: exit_code(&results),
        results,
    };
    let hosts = part(spec, None);
    if !hosts.required.is_empty() || !hosts.bounds.is_empty() {
        for (i, h) in f.hosts.iter().enumerate() {
            out.push(suite(
                h.host.clone(),
                "host",
                format!("hosts[{i}].params"),
                check(&hosts, &h.params),
            ));
        }
    }
    for kind in [PairKind::Verbs, PairKind::Pool] {
        let sp = part(spec, Some(kind));
        if sp.required.is_empty() && sp.bounds.is_empty() {
            continue;
        }
        let mut any = false;
        for (i, p) in f.pairs.iter().enumerate().filter(|(_, p)| p.kind == kind) {
            any = true;
            out.push(suite(
                format!("{} {}-{}", kind.name(), p.client, p.server),
                "pair",
                format!(
                    "pairs[{i}].params (client {}, server {})",
                    p.client, p.server
                ),
                check(&sp, &p.params),
            ));
        }
        if !any {
            let why: Vec<String> = f
                .pairs_skipped
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| {
                    if s.hosts.is_empty() {
                        s.reason.clone()
                    } else {
                        format!("{}: {}", s.hosts.join(", "), s.reason)
                    }
                })
                .collect();
            let reason = format!(
                "no {} pair was measured in this fleet{}",
                kind.name(),
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", why.join("; "))
                }
            );
            // Checked against no keys at all: every check ends not measured.
            let mut none = f.hosts[0].params.clone();
            none.params.clear();
            let mut results = check(&sp, &none);
            for r in &mut results {
                r.reason = reason.clone();
            }
            out.push(suite(
                format!("{} pairs", kind.name()),
                "pairs",
                "pairs (none of this kind)".into(),
                results,
            ));
        }
    }
    out
}

/// Exit status of a fleet check: the worst over the suites (1 a bound failed anywhere,
/// else 3 a non-optional check not measured anywhere, else 0).
pub fn fleet_exit_code(suites: &[FleetSuite]) -> Status {
    let all: Vec<CheckResult> = suites.iter().flat_map(|s| s.results.clone()).collect();
    exit_code(&all)
}

fn verdict(code: Status) -> &'static str {
    match code {
        Status::Success => "pass",
        Status::Failed => "FAIL",
        _ => "NOT MEASURED",
    }
}

/// A readable report of a fleet check: each suite's table, then the verdict per suite and
/// the fleet's.
pub fn render_fleet_table(spec: &Spec, fleet: &str, suites: &[FleetSuite]) -> String {
    let mut s = format!("check fleet {} against spec {}\n", fleet, spec.name);
    for x in suites {
        s.push_str(&format!("\n== {} {} ({})\n", x.kind, x.name, x.source));
        let t = render_table(spec, &format!("{fleet} {}", x.name), &x.results);
        // The per-suite table without its title line (the header above says it).
        s.push_str(t.split_once("\n\n").map_or(t.as_str(), |(_, rest)| rest));
        s.push_str(&format!(
            "verdict for {}: {}\n",
            x.name,
            verdict(x.exit_code)
        ));
    }
    s.push_str("\nfleet verdict\n");
    let mut t = TextTable::new(&[
        ("suite", Left),
        ("verdict", Left),
        ("passed", Right),
        ("failed", Right),
        ("not measured", Right),
    ])
    .indent(2);
    for x in suites {
        let count = |o: Outcome| x.results.iter().filter(|r| r.outcome == o).count();
        t.row([
            x.name.clone(),
            verdict(x.exit_code).to_string(),
            count(Outcome::Pass).to_string(),
            count(Outcome::Fail).to_string(),
            count(Outcome::NotMeasured).to_string(),
        ]);
    }
    s.push_str(&t.render());
    let code = fleet_exit_code(suites);
    s.push_str(&format!(
        "fleet: {} ({} of {} suite(s) pass)\n",
        verdict(code),
        suites
            .iter()
            .filter(|x| x.exit_code == Status::Success)
            .count(),
        suites.len()
    ));
    s
}

/// Exit status for a set of results: 0 all pass (optional bounds may be not measured),
/// 1 a bound failed, 3 nothing failed but a non-optional check was not measured.
pub fn exit_code(results: &[CheckResult]) -> Status {
    if results.iter().any(|r| r.outcome == Outcome::Fail) {
        Status::Failed
    } else if results
        .iter()
        .any(|r| r.outcome == Outcome::NotMeasured && !r.optional)
    {
        Status::NotMeasured
    } else {
        Status::Success
    }
}

fn fmt(v: Option<f64>) -> String {
    match v {
        Some(v) if v.abs() >= 1000.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
        None => "-".into(),
    }
}

/// A readable report.
pub fn render_table(spec: &Spec, params: &str, results: &[CheckResult]) -> String {
    let mut s = format!("check {} against spec {}\n\n", params, spec.name);
    let mut t = TextTable::new(&[
        ("result", Left),
        ("check", Left),
        ("measured", Right),
        ("limit", Right),
        ("margin", Right),
        ("margin%", Right),
        ("unit", Left),
    ]);
    for r in results {
        let label = match (r.outcome, r.optional, &r.noisy) {
            (Outcome::NotMeasured, true, _) => "not measured".to_string(),
            (Outcome::Pass, _, Some(_)) => "pass (noisy)".to_string(),
            (Outcome::Fail, _, Some(_)) => "FAIL (noisy)".to_string(),
            (o, _, _) => o.as_str().to_string(),
        };
        t.row([
            label,
            r.name.clone(),
            fmt(r.measured),
            fmt(r.limit),
            fmt(r.margin),
            r.margin_pct
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "-".into()),
            // measured, limit and margin are in the key's unit (its name's suffix).
            bench_core::keys::Unit::of_name(&r.key)
                .map_or(String::new(), |u| u.symbol().to_string()),
        ]);
    }
    // Under each row its reason and, for a failure, the spec's rationale (indented past
    // the result column).
    let lines = t.lines();
    let under = " ".repeat(lines[0].find("check").unwrap_or(0) + 2);
    s.push_str(&lines[0]);
    s.push('\n');
    for (r, line) in results.iter().zip(&lines[1..]) {
        s.push_str(line);
        s.push('\n');
        if !r.reason.is_empty() {
            s.push_str(&format!("{under}{}\n", r.reason));
        } else if let Some(n) = &r.noisy {
            s.push_str(&format!("{under}noisy: {n}\n"));
        }
        if r.outcome == Outcome::Fail && !r.why.is_empty() {
            s.push_str(&format!("{under}rationale: {}\n", r.why));
        }
    }
    let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
    s.push_str(&format!(
        "\n{} passed, {} failed, {} not measured ({} of them optional)\n",
        count(Outcome::Pass),
        count(Outcome::Fail),
        count(Outcome::NotMeasured),
        results
            .iter()
            .filter(|r| r.outcome == Outcome::NotMeasured && r.optional)
            .count()
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::super::load;
    use super::super::spec;
    use super::*;

    fn file(params: &[(&str, f64)]) -> ParamsFile {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/params-a.json");
        let mut f = load::load(&path).unwrap();
        f.params = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        f
    }

    #[test]
    fn an_overflowing_limit_fails_and_long_names_render() {
        let long = format!("mem_lat_ns + {}", "1 + ".repeat(200) + "1");
        let s = spec::parse(
            &format!(
                "[[bound]]\nkey = \"cxl_lat_ns\"\nop = \"<=\"\nexpr = \"1e308 * mem_lat_ns\"\n\
                 [[bound]]\nkey = \"cxl_lat_ns\"\nop = \"<=\"\nexpr = \"{long}\"\n"
            ),
            "t.toml",
        )
        .unwrap();
        let r = check(&s, &file(&[("mem_lat_ns", 100.0), ("cxl_lat_ns", 1.0)]));
        assert_eq!(r[0].outcome, Outcome::Fail, "{:?}", r[0]);
        assert!(
            r[0].reason.contains("not a finite number"),
            "{}",
            r[0].reason
        );
        assert_eq!(r[1].outcome, Outcome::Pass);
        assert_eq!(exit_code(&r), Status::Failed);
        let t = render_table(&s, "p.json", &r);
        assert!(t.contains(&long), "{t}");
    }

    #[test]
    fn a_noisy_key_is_shown_and_refused_where_the_spec_says_so() {
        let mut f = file(&[("mem_bw_gbs", 30.0), ("mem_lat_ns", 100.0)]);
        let mut info = f.param_info.values().next().cloned().unwrap();
        info.noisy = Some("no clean window in 9".into());
        f.param_info.insert("mem_bw_gbs".into(), info);
        let text = "required = [\"mem_bw_gbs\"]\n[[bound]]\nkey = \"mem_bw_gbs\"\nop = \">=\"\nvalue = 20\n[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nexpr = \"4 * mem_bw_gbs\"\n";
        let accept = spec::parse(text, "t.toml").unwrap();
        let r = check(&accept, &f);
        assert!(r.iter().all(|r| r.outcome == Outcome::Pass), "{r:?}");
        assert!(r.iter().all(|r| r
            .noisy
            .as_deref()
            .is_some_and(|n| n.contains("no clean window"))));
        let t = render_table(&accept, "p.json", &r);
        assert!(
            t.contains("pass (noisy)") && t.contains("noisy: mem_bw_gbs is noisy"),
            "{t}"
        );
        // Refused for the whole spec, or for one bound.
        let refuse = spec::parse(&format!("refuse_noisy = true\n{text}"), "t.toml").unwrap();
        let r = check(&refuse, &f);
        assert!(r.iter().all(|r| r.outcome == Outcome::NotMeasured), "{r:?}");
        assert!(r[0].reason.contains("refuses noisy"), "{}", r[0].reason);
        assert_eq!(exit_code(&r), Status::NotMeasured);
        let one = spec::parse(
            &text.replace("value = 20\n", "value = 20\nrefuse_noisy = true\n"),
            "t.toml",
        )
        .unwrap();
        let r = check(&one, &f);
        let o: Vec<Outcome> = r.iter().map(|r| r.outcome).collect();
        assert_eq!(o, vec![Outcome::Pass, Outcome::NotMeasured, Outcome::Pass]);
    }

    #[test]
    fn outcomes_and_margins() {
        let s = spec::parse(
            r#"
required = ["l1_lat_ns"]
[[bound]]
key = "mem_lat_ns"
op = "<="
value = 120
[[bound]]
key = "cxl_lat_ns"
op = "<="
expr = "2.5 * mem_lat_ns"
[[bound]]
key = "mem_bw_gbs"
op = ">="
value = 20
[[bound]]
key = "cxl_atomic_lat_ns"
op = "<"
value = 500
optional = true
"#,
            "t.toml",
        )
        .unwrap();
        let f = file(&[
            ("mem_lat_ns", 100.0),
            ("cxl_lat_ns", 300.0),
            ("l1_lat_ns", 1.0),
        ]);
        let r = check(&s, &f);
        assert_eq!(r[0].outcome, Outcome::Pass);
        assert_eq!(r[1].outcome, Outcome::Pass);
        assert_eq!(r[1].margin, Some(20.0));
        assert_eq!(r[2].outcome, Outcome::Fail);
        assert_eq!(r[2].limit, Some(250.0));
        assert_eq!(r[2].margin, Some(-50.0));
        assert_eq!(r[3].outcome, Outcome::NotMeasured);
        assert!(r[3].reason.contains("mem.bandwidth"), "{}", r[3].reason);
        assert_eq!(r[4].outcome, Outcome::NotMeasured);
        assert!(r[4].optional);
        assert_eq!(exit_code(&r), Status::Failed);
        // Without the failure: not measured (non-optional) is exit 3, never 0.
        let f = file(&[
            ("mem_lat_ns", 100.0),
            ("cxl_lat_ns", 200.0),
            ("l1_lat_ns", 1.0),
        ]);
        assert_eq!(exit_code(&check(&s, &f)), Status::NotMeasured);
        // A relative bound whose reference key is absent is not measured, not a pass.
        let f = file(&[("cxl_lat_ns", 1.0)]);
        let r = check(&s, &f);
        assert_eq!(r[2].outcome, Outcome::NotMeasured);
        assert!(r[2].reason.contains("mem_lat_ns is absent"));
        assert!(r[0].reason.contains("l1_lat_ns is absent"));
    }
}
