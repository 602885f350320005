//! Interleaved targets: `interleave:A,B[,...]` spreads a region's pages round robin over
//! NUMA nodes (`MPOL_INTERLEAVE`), `interleave:A=wA,B=wB` in proportion to weights
//! (`MPOL_WEIGHTED_INTERLEAVE`, Linux 6.9+).
//!
//! Weighted interleave takes its weights from a **system-wide** sysfs setting,
//! `/sys/kernel/mm/mempolicy/weighted_interleave/nodeN`: the weights of a spec are not
//! passed to the kernel, they are what the user expects the kernel to be set to. cxlchar
//! never writes them; a spec whose weights differ from the current ones is refused with
//! the current weights and the command that sets them ([`Interleave::check_weights`]).
//!
//! The placement proof is the measured page share per node (a move_pages(2) query of
//! every page, as for `node:N`) against the expected share (equal, or weight / sum of
//! weights), within [`share_tolerance`] ([`check_shares`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// Where the kernel keeps the weighted interleave weights, relative to the root.
pub const WEIGHTS_DIR: &str = "sys/kernel/mm/mempolicy/weighted_interleave";

/// Why a weighted interleave target is skipped on a kernel without it.
pub const NO_WEIGHTED_INTERLEAVE: &str = "kernel has no weighted interleave (needs Linux 6.9+: /sys/kernel/mm/mempolicy/weighted_interleave is missing)";

/// Share deviation always allowed per node, on top of one policy period of pages.
pub const SHARE_SLACK: f64 = 0.05;

/// The nodes (and weights) of an `interleave:` target, sorted by node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Interleave {
    nodes: Vec<usize>,
    weights: Option<Vec<u8>>,
}

impl Interleave {
    /// Plain interleave over `nodes` (any order, no duplicates, at least one).
    pub fn plain(nodes: &[usize]) -> Result<Interleave, String> {
        Self::build(nodes.iter().map(|&n| (n, None)).collect())
    }

    /// Weighted interleave: each node with its weight (1..=255, as the kernel takes them).
    pub fn weighted(nodes: &[(usize, u8)]) -> Result<Interleave, String> {
        Self::build(nodes.iter().map(|&(n, w)| (n, Some(w))).collect())
    }

    fn build(mut v: Vec<(usize, Option<u8>)>) -> Result<Interleave, String> {
        if v.is_empty() {
            return Err(
                "interleave needs at least one node: interleave:A,B or interleave:A=wA,B=wB".into(),
            );
        }
        v.sort_by_key(|(n, _)| *n);
        if let Some(w) = v.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!("node {} is named twice", w[0].0));
        }
        let weighted = v.iter().filter(|(_, w)| w.is_some()).count();
        if weighted != 0 && weighted != v.len() {
            return Err(
                "give every node a weight (interleave:0=3,1=1) or none (interleave:0,1)".into(),
            );
        }
        if v.iter().any(|(_, w)| *w == Some(0)) {
            return Err("weights are 1..255 (the kernel's range)".into());
        }
        Ok(Interleave {
            nodes: v.iter().map(|(n, _)| *n).collect(),
            weights: (weighted > 0).then(|| v.iter().filter_map(|(_, w)| *w).collect()),
        })
    }

    /// Parses what follows `interleave:`: `0,1` or `0=3,1=1`.
    pub fn parse(arg: &str) -> Result<Interleave, String> {
        let mut v = Vec::new();
        for part in arg.split(',') {
            let part = part.trim();
            let (n, w) = match part.split_once('=') {
                Some((n, w)) => (n, Some(w)),
                None => (part, None),
            };
            let node: usize = n.trim().parse().map_err(|_| {
                format!("'{part}' is not a node number (interleave:A,B or interleave:A=wA,B=wB)")
            })?;
            let weight = match w {
                None => None,
                Some(w) => Some(
                    w.trim()
                        .parse::<u8>()
                        .map_err(|_| format!("'{part}': the weight must be an integer 1..255"))?,
                ),
            };
            v.push((node, weight));
        }
        Self::build(v)
    }

    /// The nodes, ascending.
    pub fn nodes(&self) -> &[usize] {
        &self.nodes
    }

    /// The weights, in the order of [`nodes`](Self::nodes), when weighted.
    pub fn weights(&self) -> Option<&[u8]> {
        self.weights.as_deref()
    }

    /// Whether this is weighted interleave.
    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The kernel policy's name: `MPOL_INTERLEAVE` or `MPOL_WEIGHTED_INTERLEAVE`.
    pub fn policy_name(&self) -> &'static str {
        if self.is_weighted() {
            "MPOL_WEIGHTED_INTERLEAVE"
        } else {
            "MPOL_INTERLEAVE"
        }
    }

    /// The policy's mode number for mbind(2) (uapi `linux/mempolicy.h`).
    pub fn mode(&self) -> libc::c_long {
        if self.is_weighted() {
            6 // MPOL_WEIGHTED_INTERLEAVE
        } else {
            3 // MPOL_INTERLEAVE
        }
    }

    /// Pages of one round of the policy: one per node, or the sum of the weights.
    pub fn period_pages(&self) -> u64 {
        match &self.weights {
            Some(w) => w.iter().map(|&x| x as u64).sum(),
            None => self.nodes.len() as u64,
        }
    }

    /// The share of the pages each node should get: 1/n, or weight / sum of weights.
    pub fn expected_shares(&self) -> BTreeMap<usize, f64> {
        let total = self.period_pages() as f64;
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let w = self.weights.as_ref().map_or(1.0, |w| w[i] as f64);
                (n, w / total)
            })
            .collect()
    }

    /// For weighted interleave, checks the requested weights against the kernel's
    /// current ones (`current`: [`read_weights`]; `None` when the kernel lacks weighted
    /// interleave). Plain interleave always passes.
    pub fn check_weights(&self, current: Option<&BTreeMap<usize, u8>>) -> Result<(), WeightError> {
        let Some(want) = &self.weights else {
            return Ok(());
        };
        let Some(current) = current else {
            return Err(WeightError::Unsupported);
        };
        if self
            .nodes
            .iter()
            .zip(want)
            .all(|(n, w)| current.get(n) == Some(w))
        {
            return Ok(());
        }
        let have: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "node{n}={}",
                    current
                        .get(n)
                        .map_or("(not listed)".into(), |w| w.to_string())
                )
            })
            .collect();
        let set: Vec<String> = self
            .nodes
            .iter()
            .zip(want)
            .map(|(n, w)| format!("echo {w} > /{WEIGHTS_DIR}/node{n}"))
            .collect();
        let as_is: Option<Vec<String>> = self
            .nodes
            .iter()
            .map(|n| current.get(n).map(|w| format!("{n}={w}")))
            .collect();
        let mut msg = format!(
            "the kernel's weighted interleave weights are {}, not the {} asked for; the weights are a system-wide setting that cxlchar never writes: set them (as root) with `{}`",
            have.join(" "),
            self.nodes
                .iter()
                .zip(want)
                .map(|(n, w)| format!("node{n}={w}"))
                .collect::<Vec<_>>()
                .join(" "),
            set.join(" && ")
        );
        if let Some(a) = as_is {
            msg.push_str(&format!(
                ", or measure the current ones with --target interleave:{}",
                a.join(",")
            ));
        }
        Err(WeightError::Mismatch(msg))
    }
}

impl fmt::Display for Interleave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = match &self.weights {
            Some(w) => self
                .nodes
                .iter()
                .zip(w)
                .map(|(n, w)| format!("{n}={w}"))
                .collect(),
            None => self.nodes.iter().map(|n| n.to_string()).collect(),
        };
        f.write_str(&parts.join(","))
    }
}

/// Why a weighted interleave target cannot be used as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightError {
    /// The kernel has no weighted interleave.
    #[error("{NO_WEIGHTED_INTERLEAVE}")]
    Unsupported,
    /// The requested weights are not the kernel's current ones (message with remediation).
    #[error("{0}")]
    Mismatch(String),
}

/// The kernel's weighted interleave weights per node, from `root/`[`WEIGHTS_DIR`]`/nodeN`;
/// `None` when the directory is missing (no weighted interleave in this kernel).
pub fn read_weights(root: &Path) -> Option<BTreeMap<usize, u8>> {
    let dir = root.join(WEIGHTS_DIR);
    let entries = std::fs::read_dir(&dir).ok()?;
    let mut out = BTreeMap::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|s| s.strip_prefix("node"))
            .and_then(|s| s.parse::<usize>().ok())
        else {
            continue;
        };
        if let Some(w) = crate::sysfs::read_trim(&e.path()).and_then(|s| s.parse::<u8>().ok()) {
            out.insert(n, w);
        }
    }
    Some(out)
}

/// The placement proof of an interleaved region, recorded in its
/// [`Placement`](super::Placement).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShareProof {
    /// `MPOL_INTERLEAVE` or `MPOL_WEIGHTED_INTERLEAVE`.
    pub policy: String,
    /// The weights the kernel used (weighted interleave: read from sysfs, equal to the
    /// spec's); absent for plain interleave.
    pub weights: Option<BTreeMap<usize, u8>>,
    /// Expected share of the pages per node (sums to 1).
    pub expected_share_per_node: BTreeMap<i64, f64>,
    /// Measured share of the pages per node (move_pages(2) of every page; `-1` or a
    /// negative errno: pages the kernel could not place or tell).
    pub share_per_node: BTreeMap<i64, f64>,
    /// Largest deviation allowed per node ([`share_tolerance`]).
    pub tolerance: f64,
    /// Largest deviation measured.
    pub max_deviation: f64,
}

/// Deviation allowed between a measured and an expected share: [`SHARE_SLACK`] plus one
/// policy period of pages (a region cut in the middle of a round).
pub fn share_tolerance(period_pages: u64, pages: u64) -> f64 {
    SHARE_SLACK + period_pages as f64 / pages.max(1) as f64
}

/// Compares the measured pages per node with the expected shares. Every node seen or
/// expected counts (a page on a node outside the set, or one the kernel cannot tell, is
/// a deviation). The proof, and when the placement failed the reason, naming the node
/// furthest off.
pub fn check_shares(
    il: &Interleave,
    pages_per_node: &BTreeMap<i64, u64>,
) -> (ShareProof, Option<String>) {
    let pages: u64 = pages_per_node.values().sum();
    let expected: BTreeMap<i64, f64> = il
        .expected_shares()
        .into_iter()
        .map(|(n, s)| (n as i64, s))
        .collect();
    let measured: BTreeMap<i64, f64> = pages_per_node
        .iter()
        .map(|(n, c)| (*n, *c as f64 / pages.max(1) as f64))
        .collect();
    let tolerance = share_tolerance(il.period_pages(), pages);
    let mut worst = (0i64, 0.0f64);
    for n in expected.keys().chain(measured.keys()) {
        let d = (measured.get(n).copied().unwrap_or(0.0) - expected.get(n).copied().unwrap_or(0.0))
            .abs();
        if d > worst.1 {
            worst = (*n, d);
        }
    }
    let proof = ShareProof {
        policy: il.policy_name().into(),
        weights: il
            .weights()
            .map(|w| il.nodes().iter().copied().zip(w.iter().copied()).collect()),
        expected_share_per_node: expected,
        share_per_node: measured,
        tolerance,
        max_deviation: worst.1,
    };
    if pages == 0 {
        return (proof, Some("no page could be queried".into()));
    }
    if worst.1 > tolerance {
        let (n, _) = worst;
        let msg = format!(
            "placement check failed: node {n} holds {:.1}% of the {pages} pages, {:.1}% expected (tolerance {:.1} points; pages per node: {pages_per_node:?})",
            100.0 * proof.share_per_node.get(&n).copied().unwrap_or(0.0),
            100.0 * proof.expected_share_per_node.get(&n).copied().unwrap_or(0.0),
            100.0 * tolerance
        );
        return (proof, Some(msg));
    }
    (proof, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sorts_and_round_trips() {
        let a = Interleave::parse("1,0").unwrap();
        assert_eq!(a.nodes(), &[0, 1]);
        assert!(!a.is_weighted());
        assert_eq!(a.to_string(), "0,1");
        let w = Interleave::parse("2=1, 0=3").unwrap();
        assert_eq!(w.nodes(), &[0, 2]);
        assert_eq!(w.weights(), Some(&[3u8, 1][..]));
        assert_eq!(w.to_string(), "0=3,2=1");
        assert_eq!(Interleave::parse(&w.to_string()).unwrap(), w);
        assert_eq!(Interleave::parse("0").unwrap().nodes(), &[0]);
        assert_eq!(w.policy_name(), "MPOL_WEIGHTED_INTERLEAVE");
        assert_eq!((a.mode(), w.mode()), (3, 6));
    }

    #[test]
    fn rejects_malformed_lists() {
        for (bad, needle) in [
            ("", "not a node number"),
            ("0,", "not a node number"),
            ("a,1", "'a'"),
            ("0,0", "node 0 is named twice"),
            ("0=3,1", "every node a weight"),
            ("0=0,1=1", "1..255"),
            ("0=256", "1..255"),
            ("0=x", "1..255"),
            ("0=-1", "1..255"),
        ] {
            let e = Interleave::parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn expected_shares_are_equal_or_weight_over_sum() {
        let s = Interleave::parse("0,1,3").unwrap().expected_shares();
        assert_eq!(s.len(), 3);
        for v in s.values() {
            assert!((v - 1.0 / 3.0).abs() < 1e-12);
        }
        let s = Interleave::parse("0=3,1=1").unwrap().expected_shares();
        assert_eq!(s[&0], 0.75);
        assert_eq!(s[&1], 0.25);
        assert_eq!(Interleave::parse("0=3,1=1").unwrap().period_pages(), 4);
    }

    fn fake_weights(weights: &[(usize, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join(WEIGHTS_DIR);
        std::fs::create_dir_all(&d).unwrap();
        for (n, w) in weights {
            std::fs::write(d.join(format!("node{n}")), format!("{w}\n")).unwrap();
        }
        // Newer kernels add a mode file; it is no node.
        std::fs::write(d.join("auto"), "true\n").unwrap();
        dir
    }

    #[test]
    fn reads_weights_from_a_fake_sysfs() {
        let dir = fake_weights(&[(0, "3"), (1, "1"), (2, "junk")]);
        let w = read_weights(dir.path()).unwrap();
        assert_eq!(w, BTreeMap::from([(0, 3), (1, 1)]));
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(read_weights(empty.path()), None);
    }

    #[test]
    fn weights_are_checked_never_assumed() {
        let dir = fake_weights(&[(0, "1"), (1, "1")]);
        let cur = read_weights(dir.path());
        // Plain interleave needs no weights, even on a kernel without them.
        assert!(Interleave::parse("0,1")
            .unwrap()
            .check_weights(None)
            .is_ok());
        assert!(Interleave::parse("0=1,1=1")
            .unwrap()
            .check_weights(cur.as_ref())
            .is_ok());
        let e = Interleave::parse("0=3,1=1")
            .unwrap()
            .check_weights(cur.as_ref())
            .unwrap_err()
            .to_string();
        for needle in [
            "node0=1 node1=1",
            "node0=3 node1=1",
            "never writes",
            "echo 3 > /sys/kernel/mm/mempolicy/weighted_interleave/node0 && echo 1 > /sys/kernel/mm/mempolicy/weighted_interleave/node1",
            "--target interleave:0=1,1=1",
        ] {
            assert!(e.contains(needle), "{needle}: {e}");
        }
        // A node the kernel does not list.
        let e = Interleave::parse("0=1,5=1")
            .unwrap()
            .check_weights(cur.as_ref())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("node5=(not listed)") && !e.contains("--target"),
            "{e}"
        );
        // No weighted interleave in the kernel.
        assert_eq!(
            Interleave::parse("0=3,1=1").unwrap().check_weights(None),
            Err(WeightError::Unsupported)
        );
        assert_eq!(WeightError::Unsupported.to_string(), NO_WEIGHTED_INTERLEAVE);
    }

    #[test]
    fn shares_within_tolerance_pass_and_far_off_fail() {
        let il = Interleave::parse("0,1").unwrap();
        let even = BTreeMap::from([(0i64, 512u64), (1, 512)]);
        let (p, failed) = check_shares(&il, &even);
        assert_eq!(failed, None);
        assert_eq!(p.share_per_node[&0], 0.5);
        assert_eq!(p.max_deviation, 0.0);
        assert_eq!(p.policy, "MPOL_INTERLEAVE");
        assert_eq!(p.weights, None);
        // All on one node: far off.
        let e = check_shares(&il, &BTreeMap::from([(0i64, 1024u64)]))
            .1
            .unwrap();
        assert!(e.contains("node") && e.contains("50.0% expected"), "{e}");
        // A page on a node outside the set counts against it.
        let w = Interleave::parse("0=3,1=1").unwrap();
        let off = BTreeMap::from([(0i64, 600u64), (1, 200), (2, 224)]);
        let (p, e) = check_shares(&w, &off);
        let e = e.unwrap();
        assert!(p.max_deviation > p.tolerance, "{e}");
        assert_eq!(p.weights, Some(BTreeMap::from([(0, 3), (1, 1)])));
        let ok = BTreeMap::from([(0i64, 769u64), (1, 255)]);
        assert_eq!(check_shares(&w, &ok).1, None);
        // Pages the kernel could not tell are a deviation too.
        assert!(check_shares(&il, &BTreeMap::from([(-1i64, 1024u64)]))
            .1
            .is_some());
        assert!(check_shares(&il, &BTreeMap::new()).1.is_some());
    }
}
