//! Two fleet files compared ([`diff_fleet`]): hosts matched by name (a host in one file
//! only is listed), each host's params compared as two params files are; pairs matched by
//! kind and unordered host pair, their params compared the same way.

use super::{bottom_line, diff, rows, DiffReport, RULE};
use crate::document::fleet::{FleetFile, PairKind, PairResult};
use serde::Serialize;

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
/// [`super::render_table`] (keys; measurements with `all`).
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
            bottom_line(&mut s, &p.diff);
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
