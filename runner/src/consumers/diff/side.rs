//! One file of a comparison: its measurements by id, how disturbed its run was, and the
//! DRAM checks that stand for its keys and measurements.

use bench_core::dram_check::DramCheck;
use bench_core::params::{Measurement, ParamsFile};
use serde::Serialize;
use std::collections::HashMap;

/// A side whose run has more than this share of its recorded measurements disturbed in
/// every attempt is "mostly disturbed": every figure of it is compared with its widened
/// spread ([`super::noise`]).
pub const MOSTLY_DISTURBED: f64 = 0.5;

/// How quiet one file's run was, from what it recorded.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Disturbance {
    /// `A` or `B`.
    pub file: String,
    /// Measurements disturbed in every attempt ([`ParamsFile::disturbed_measurements`]).
    pub disturbed_measurements: usize,
    /// Measurements that recorded their disturbances.
    pub recorded_measurements: usize,
    /// Keys that stand on disturbed samples (`param_info.noisy`), `key@target` twins of
    /// `key` once.
    pub noisy_keys: usize,
    /// More than [`MOSTLY_DISTURBED`] of its measurements disturbed: the noise of every
    /// figure of this side is widened.
    pub mostly_disturbed: bool,
}

impl Disturbance {
    fn of(file: &str, f: &ParamsFile) -> Disturbance {
        let (disturbed, recorded) = f.disturbed_measurements();
        let noisy_keys = f
            .param_info
            .iter()
            .filter(|(k, i)| i.noisy.is_some() && !super::super::keys::repeats_bare(f, k))
            .count();
        Disturbance {
            file: file.into(),
            disturbed_measurements: disturbed,
            recorded_measurements: recorded,
            noisy_keys,
            mostly_disturbed: recorded > 0 && disturbed as f64 > MOSTLY_DISTURBED * recorded as f64,
        }
    }

    /// Whether the comparison must say so first: mostly disturbed, or with noisy keys.
    pub fn is_noisy(&self) -> bool {
        self.mostly_disturbed || self.noisy_keys > 0
    }

    /// Whether `other` recorded the same counts (a file compared with itself, or a copy).
    pub fn same_counts(&self, other: &Disturbance) -> bool {
        (
            self.disturbed_measurements,
            self.recorded_measurements,
            self.noisy_keys,
            self.mostly_disturbed,
        ) == (
            other.disturbed_measurements,
            other.recorded_measurements,
            other.noisy_keys,
            other.mostly_disturbed,
        )
    }

    /// One line for people, led by `who` (`A`, or `A and B` for two sides of the same
    /// counts): what was disturbed and what diff does about it.
    pub fn sentence(&self, who: &str) -> String {
        let each = if who.contains(' ') { "each " } else { "" };
        let is = if each.is_empty() { "is" } else { "are" };
        let share = if self.recorded_measurements > 0 {
            format!(
                "{} of {} measurements ({:.0} %) stayed disturbed in every attempt",
                self.disturbed_measurements,
                self.recorded_measurements,
                100.0 * self.disturbed_measurements as f64 / self.recorded_measurements as f64
            )
        } else {
            "its measurements recorded no disturbances".into()
        };
        let noisy = match self.noisy_keys {
            0 => String::new(),
            1 => ", 1 key stands on disturbed samples (noisy)".into(),
            n => format!(", {n} keys stand on disturbed samples (noisy)"),
        };
        let (state, what) = if self.mostly_disturbed {
            (
                "mostly disturbed",
                format!("every figure of {who} is compared with its widened spread"),
            )
        } else {
            (
                "noisy",
                "those figures are compared with their widened spread".to_string(),
            )
        };
        format!(
            "{who} {is} {each}{state}: {share}{noisy}; {what} (both half-spreads, p90 - p50 \
             and p50 - min), so a change there must be larger to count"
        )
    }
}

/// A file with its measurements by id (every key looks its own up: linear in the file).
pub(super) struct Side<'f> {
    pub(super) f: &'f ParamsFile,
    by_id: HashMap<&'f str, &'f Measurement>,
    /// The DRAM checks by the keys and the measurement ids they stand for.
    checks_of_key: HashMap<&'f str, Vec<&'f DramCheck>>,
    checks_of_id: HashMap<&'f str, Vec<&'f DramCheck>>,
    pub(super) disturbance: Disturbance,
}

impl<'f> Side<'f> {
    pub(super) fn new(file: &str, f: &'f ParamsFile) -> Self {
        let by_id = f.measurements.iter().map(|m| (m.id.as_str(), m)).collect();
        let mut checks_of_key: HashMap<&str, Vec<&DramCheck>> = HashMap::new();
        let mut checks_of_id: HashMap<&str, Vec<&DramCheck>> = HashMap::new();
        for c in &f.dram_check {
            for k in &c.keys {
                checks_of_key.entry(k.as_str()).or_default().push(c);
            }
            for id in c.points.iter().filter_map(|p| p.id.as_deref()) {
                let v = checks_of_id.entry(id).or_default();
                if !v.iter().any(|x| std::ptr::eq(*x, c)) {
                    v.push(c);
                }
            }
        }
        Side {
            f,
            by_id,
            checks_of_key,
            checks_of_id,
            disturbance: Disturbance::of(file, f),
        }
    }

    /// The measurement of `id`.
    pub(super) fn measurement(&self, id: &str) -> Option<&'f Measurement> {
        self.by_id.get(id).copied()
    }

    /// The measurements a key was derived from.
    pub(super) fn from(&self, key: &str) -> Vec<&'f Measurement> {
        self.f.param_info.get(key).map_or(vec![], |i| {
            i.from
                .iter()
                .filter_map(|id| self.measurement(id))
                .collect()
        })
    }

    /// The DRAM checks that stand for `key` (a check lists `key@target`, the key names the
    /// figure of its `param_info.target`).
    pub(super) fn checks_of_key(&self, key: &str) -> Vec<&'f DramCheck> {
        let mut v: Vec<&DramCheck> = self.checks_of_key.get(key).cloned().unwrap_or_default();
        if !key.contains('@') {
            if let Some(t) = self.f.param_info.get(key).map(|i| &i.target) {
                let q = format!("{key}@{t}");
                for c in self.checks_of_key.get(q.as_str()).into_iter().flatten() {
                    if !v.iter().any(|x| std::ptr::eq(*x, *c)) {
                        v.push(c);
                    }
                }
            }
        }
        v
    }

    /// The DRAM checks that measured the measurement `id` as one of their points.
    pub(super) fn checks_of_id(&self, id: &str) -> Vec<&'f DramCheck> {
        self.checks_of_id.get(id).cloned().unwrap_or_default()
    }
}
