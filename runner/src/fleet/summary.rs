//! The fleet summary rank 0 prints after writing the fleet file, and the pieces the fleet
//! report shares: the hosts, the distribution of each key across hosts with the outliers
//! of [`super::outliers`], the pair matrices host x host, the pairs not measured and why.

use super::outliers::{self, Verdict};
use crate::document::fleet::{FleetFile, PairKind, PairResult};
use crate::output::num;
use crate::output::table::{Align::*, TextTable};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// One key across the hosts that have it.
#[derive(Debug, Clone, Serialize)]
pub struct KeyDistribution {
    /// The key (as in params, `@target` qualifier included).
    pub key: String,
    /// Its unit symbol (`ns`, `GB/s`), empty when the name has no unit suffix.
    pub unit: String,
    pub min: f64,
    pub max: f64,
    /// The outlier rule's verdict (n, median, MAD, per-host z, outliers).
    pub verdict: Verdict,
}

/// The pair matrices: (kind, key) in the order shown.
pub const MATRICES: [(PairKind, &str); 4] = [
    (PairKind::Verbs, "verbs_lat_ns"),
    (PairKind::Verbs, "verbs_bw_gbs"),
    (PairKind::Pool, "pool_msg_lat_ns"),
    (PairKind::Pool, "pool_msg_bw_gbs"),
];

/// One key of the pairs as a host x host matrix.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    /// Verbs or pool.
    pub kind: PairKind,
    /// The key (`verbs_lat_ns`).
    pub key: String,
    /// Rows and columns, in the fleet's host order.
    pub hosts: Vec<String>,
    /// `cells[i][j]`: the key's value of the pair (hosts i, j) in either direction (a pair
    /// is measured once, client to server, and shown in both halves); `None`: not measured.
    pub cells: Vec<Vec<Option<f64>>>,
}

impl Matrix {
    /// Whether any pair was measured.
    pub fn any(&self) -> bool {
        self.cells.iter().flatten().any(Option::is_some)
    }
}

fn unit_of(key: &str) -> String {
    bench_core::keys::Unit::of_name(key).map_or(String::new(), |u| u.symbol().to_string())
}

/// The keys every host has.
fn common_keys(f: &FleetFile) -> Vec<String> {
    let mut hosts = f.hosts.iter();
    let Some(first) = hosts.next() else {
        return vec![];
    };
    let mut keys: BTreeSet<&String> = first.params.params.keys().collect();
    for h in hosts {
        keys.retain(|k| h.params.params.contains_key(*k));
    }
    keys.into_iter().cloned().collect()
}

/// Keys some hosts have and others lack.
fn partial_keys(f: &FleetFile) -> Vec<String> {
    let all: BTreeSet<&String> = f
        .hosts
        .iter()
        .flat_map(|h| h.params.params.keys())
        .collect();
    let common: BTreeSet<String> = common_keys(f).into_iter().collect();
    all.into_iter()
        .filter(|k| !common.contains(*k))
        .cloned()
        .collect()
}

/// The distribution across hosts of every key every host has, judged by the outlier rule.
pub fn distributions(f: &FleetFile) -> Vec<KeyDistribution> {
    common_keys(f)
        .into_iter()
        .map(|key| {
            let values: Vec<(String, f64)> = f
                .hosts
                .iter()
                .filter_map(|h| Some((h.host.clone(), *h.params.params.get(&key)?)))
                .collect();
            let finite = values.iter().map(|v| v.1).filter(|v| v.is_finite());
            let min = finite.clone().fold(f64::INFINITY, f64::min);
            let max = finite.fold(f64::NEG_INFINITY, f64::max);
            KeyDistribution {
                unit: unit_of(&key),
                min,
                max,
                verdict: outliers::judge(&key, &values),
                key,
            }
        })
        .collect()
}

/// The four pair matrices ([`MATRICES`]).
pub fn matrices(f: &FleetFile) -> Vec<Matrix> {
    let hosts: Vec<String> = f.hosts.iter().map(|h| h.host.clone()).collect();
    // Each pair by kind and its two hosts (either order), the first of the file where
    // one is given twice: one look-up per cell, not a scan of every pair.
    let mut by_hosts: HashMap<(PairKind, &str, &str), &PairResult> = HashMap::new();
    for p in &f.pairs {
        let (a, b) = if p.server <= p.client {
            (p.server.as_str(), p.client.as_str())
        } else {
            (p.client.as_str(), p.server.as_str())
        };
        by_hosts.entry((p.kind, a, b)).or_insert(p);
    }
    let value = |kind: PairKind, a: &str, b: &str, key: &str| {
        let k = if a <= b { (kind, a, b) } else { (kind, b, a) };
        by_hosts
            .get(&k)
            .and_then(|p| p.params.params.get(key).copied())
    };
    MATRICES
        .iter()
        .map(|&(kind, key)| Matrix {
            kind,
            key: key.to_string(),
            cells: hosts
                .iter()
                .map(|a| {
                    hosts
                        .iter()
                        .map(|b| {
                            if a == b {
                                None
                            } else {
                                value(kind, a, b, key).filter(|v| v.is_finite())
                            }
                        })
                        .collect()
                })
                .collect(),
            hosts: hosts.clone(),
        })
        .collect()
}

/// "h3 (z = +12.4, worse)" for each outlier, or the no-verdict reason, or "none".
pub fn outlier_text(v: &Verdict) -> String {
    if let Some(r) = &v.no_verdict {
        return r.clone();
    }
    let out: Vec<String> = v
        .outliers()
        .map(|s| {
            format!(
                "{} (z = {:+.1}, {})",
                s.host,
                s.z.unwrap_or(f64::NAN),
                s.side.unwrap_or("different")
            )
        })
        .collect();
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

/// The summary of a fleet file, as rank 0 prints it.
pub fn render_text(f: &FleetFile) -> String {
    let ranks: usize = f.hosts.iter().map(|h| h.ranks.len()).sum();
    let mut s = format!(
        "fleet: {} host(s), {ranks} rank(s) under {} job {}, cxlchar {}\n\
         started {}, finished {}\n\n",
        f.hosts.len(),
        f.launcher.kind,
        f.launcher.job,
        f.cxlchar_version,
        f.started_at,
        f.finished_at
    );
    s.push_str(&hosts_text(f));
    s.push_str(&keys_text(f));
    s.push_str(&pairs_text(f));
    s.push_str(&skipped_and_warnings_text(f));
    s
}

/// The hosts table: ranks, the measuring rank, address, CPU, keys and warnings by code.
fn hosts_text(f: &FleetFile) -> String {
    let mut s = String::from("hosts\n");
    let mut t = TextTable::new(&[
        ("host", Left),
        ("ranks", Left),
        ("measured by", Right),
        ("address", Left),
        ("CPU", Left),
        ("keys", Right),
        ("warnings", Left),
    ])
    .indent(2);
    for h in &f.hosts {
        t.row([
            h.host.clone(),
            h.ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(","),
            format!("rank {}", h.measuring_rank),
            h.address.clone(),
            h.params.environment.cpu.model.clone(),
            h.params.params.len().to_string(),
            warning_codes(&h.params.warnings),
        ]);
    }
    s.push_str(&t.render());
    s
}

/// Warnings by code, each once in first-seen order with how often it came
/// (`3 (disturbed x2, thp)`), `-` for none.
fn warning_codes(warnings: &[bench_core::params::Warning]) -> String {
    let mut codes: Vec<(&str, usize)> = Vec::new();
    for w in warnings {
        match codes.iter_mut().find(|(c, _)| *c == w.code) {
            Some((_, n)) => *n += 1,
            None => codes.push((w.code.as_str(), 1)),
        }
    }
    if codes.is_empty() {
        return "-".into();
    }
    let list: Vec<String> = codes
        .iter()
        .map(|(c, n)| {
            if *n > 1 {
                format!("{c} x{n}")
            } else {
                c.to_string()
            }
        })
        .collect();
    format!("{} ({})", warnings.len(), list.join(", "))
}

/// Each key every host has, across hosts (median, MAD, outliers), then the keys some
/// hosts lack and the outlier hosts.
fn keys_text(f: &FleetFile) -> String {
    let dists = distributions(f);
    let mut s = format!(
        "\nper key across hosts ({} key(s) every host has)\n  rule: {}\n",
        dists.len(),
        outliers::RULE
    );
    let mut t = TextTable::new(&[
        ("key", Left),
        ("unit", Left),
        ("n", Right),
        ("min", Right),
        ("median", Right),
        ("max", Right),
        ("MAD", Right),
        ("outliers", Left),
    ])
    .indent(2);
    for d in &dists {
        t.row([
            d.key.clone(),
            d.unit.clone(),
            d.verdict.n.to_string(),
            num(Some(d.min)),
            num(d.verdict.median),
            num(Some(d.max)),
            num(d.verdict.mad),
            outlier_text(&d.verdict),
        ]);
    }
    if !dists.is_empty() {
        s.push_str(&t.render());
    }
    let partial = partial_keys(f);
    if !partial.is_empty() {
        s.push_str(&format!(
            "  {} key(s) measured on some hosts only, not compared: {}\n",
            partial.len(),
            partial.join(", ")
        ));
    }
    let flagged: Vec<String> = dists
        .iter()
        .flat_map(|d| d.verdict.outliers().map(|o| o.host.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    s.push_str(&format!(
        "  outlier hosts: {}\n",
        if flagged.is_empty() {
            "none".to_string()
        } else {
            flagged.join(", ")
        }
    ));
    s
}

/// One host x host matrix per pair kind and key.
fn pairs_text(f: &FleetFile) -> String {
    let mut s = String::new();
    for m in matrices(f) {
        if !m.any() {
            s.push_str(&format!(
                "\n{} pairs: {}: no pair measured\n",
                m.kind.name(),
                m.key
            ));
            continue;
        }
        s.push_str(&format!(
            "\n{} pairs: {} ({}), row and column: the two hosts, either direction; - not \
             measured\n",
            m.kind.name(),
            m.key,
            unit_of(&m.key)
        ));
        let mut cols: Vec<(&str, crate::output::table::Align)> = vec![("", Left)];
        cols.extend(m.hosts.iter().map(|h| (h.as_str(), Right)));
        let mut t = TextTable::new(&cols).indent(2);
        for (h, row) in m.hosts.iter().zip(&m.cells) {
            let mut cells = vec![h.clone()];
            cells.extend(row.iter().map(|v| num(*v)));
            t.row(cells);
        }
        s.push_str(&t.render());
    }
    s
}

/// The pairs not measured, with the reasons, then the fleet's own warnings.
fn skipped_and_warnings_text(f: &FleetFile) -> String {
    let mut s = format!("\npairs not measured ({})\n", f.pairs_skipped.len());
    if !f.pairs_skipped.is_empty() {
        let mut t = TextTable::new(&[("kind", Left), ("hosts", Left), ("reason", Left)]).indent(2);
        for p in &f.pairs_skipped {
            t.row([
                p.kind.name().to_string(),
                if p.hosts.is_empty() {
                    "(all)".to_string()
                } else {
                    p.hosts.join(", ")
                },
                p.reason.clone(),
            ]);
        }
        s.push_str(&t.render());
    }
    if !f.warnings.is_empty() {
        s.push_str("\nfleet warnings\n");
        for w in &f.warnings {
            s.push_str(&format!(
                "  {}: {} ({})\n",
                w.code, w.message, w.remediation
            ));
        }
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::document::fleet::{
        FleetHost, LauncherInfo, PairResult, PairSkipped, FLEET_FORMAT, FLEET_SCHEMA_VERSION,
    };
    use bench_core::params::ParamsFile;

    /// A params file of the runner's test data with these keys only.
    pub(crate) fn params(keys: &[(&str, f64)]) -> ParamsFile {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/params-a.json");
        let mut f = crate::document::load::load(&path).unwrap();
        f.params = keys.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        f
    }

    /// A fleet of hosts `h0..` with `mem_lat_ns` values `lat`, and verbs pairs h0-h1
    /// (and h1-h2 with three hosts or more).
    pub(crate) fn fleet(lat: &[f64]) -> FleetFile {
        let hosts: Vec<FleetHost> = lat
            .iter()
            .enumerate()
            .map(|(i, v)| FleetHost {
                host: format!("h{i}"),
                ranks: vec![2 * i, 2 * i + 1],
                measuring_rank: 2 * i,
                address: format!("10.0.0.{}", i + 1),
                params: params(&[("mem_lat_ns", *v), ("l1_lat_ns", 1.0)]),
            })
            .collect();
        let pair = |a: usize, b: usize, lat: f64| PairResult {
            kind: PairKind::Verbs,
            server: format!("h{a}"),
            client: format!("h{b}"),
            round: 0,
            pool: None,
            params: params(&[("verbs_lat_ns", lat), ("verbs_bw_gbs", 10.0)]),
        };
        let mut pairs = vec![pair(0, 1, 2000.0)];
        if lat.len() > 2 {
            pairs.push(pair(2, 1, 2100.0));
        }
        FleetFile {
            format: FLEET_FORMAT.into(),
            fleet_schema_version: FLEET_SCHEMA_VERSION,
            cxlchar_version: "0.1.0".into(),
            command_line: vec!["cxlchar".into(), "all".into()],
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: "2026-01-01T00:01:00Z".into(),
            launcher: LauncherInfo {
                kind: "slurm".into(),
                job: "12.0".into(),
                ranks: 2 * lat.len(),
                variables: Default::default(),
            },
            hosts,
            pairs,
            pairs_skipped: vec![PairSkipped {
                kind: PairKind::Pool,
                hosts: vec![],
                reason: "no host maps a CXL pool".into(),
            }],
            warnings: vec![],
        }
    }

    #[test]
    fn the_summary_names_the_outlier_and_fills_the_matrices() {
        let f = fleet(&[100.0, 101.0, 99.0, 170.0]);
        let d = distributions(&f);
        let lat = d.iter().find(|d| d.key == "mem_lat_ns").unwrap();
        assert_eq!(lat.verdict.n, 4);
        assert_eq!((lat.min, lat.max), (99.0, 170.0));
        assert_eq!(
            lat.verdict
                .outliers()
                .map(|o| o.host.as_str())
                .collect::<Vec<_>>(),
            ["h3"]
        );
        let l1 = d.iter().find(|d| d.key == "l1_lat_ns").unwrap();
        assert_eq!(l1.verdict.outliers().count(), 0);
        let m = matrices(&f);
        assert_eq!(m.len(), 4);
        // Either direction fills both halves; the diagonal and unmeasured pairs are None.
        assert_eq!(m[0].cells[0][1], Some(2000.0));
        assert_eq!(m[0].cells[1][0], Some(2000.0));
        assert_eq!(m[0].cells[1][2], Some(2100.0));
        assert_eq!(m[0].cells[0][0], None);
        assert_eq!(m[0].cells[0][3], None);
        assert!(!m[2].any());
        let t = render_text(&f);
        assert!(t.contains("outlier hosts: h3"), "{t}");
        assert!(t.contains("h3 (z = +"), "{t}");
        assert!(t.contains("verbs pairs: verbs_lat_ns (ns)"), "{t}");
        assert!(t.contains("no host maps a CXL pool"), "{t}");
        assert!(
            t.contains("pool pairs: pool_msg_lat_ns: no pair measured"),
            "{t}"
        );
        assert!(t.contains(outliers::RULE), "{t}");
    }

    #[test]
    fn two_hosts_get_no_verdict_and_partial_keys_are_listed() {
        let mut f = fleet(&[100.0, 300.0]);
        f.hosts[1].params.params.insert("cxl_lat_ns".into(), 250.0);
        let t = render_text(&f);
        assert!(t.contains("no verdict: 2 host(s)"), "{t}");
        assert!(t.contains("outlier hosts: none"), "{t}");
        assert!(
            t.contains("some hosts only, not compared: cxl_lat_ns"),
            "{t}"
        );
    }
}
