//! The bottom line of a comparison: each key in one class (beyond noise, within it, not
//! comparable, without a distribution, in one file only), counted, and the largest
//! changes beyond noise.

use super::{f, Change, DiffReport};
use crate::output::table::{Align::*, TextTable};
use serde::Serialize;

/// What a key's change is, each key in exactly one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Moved by more than the noise of both runs.
    Beyond,
    /// Moved by less than the noise.
    Within,
    /// Measured differently (a footprint, thread count, method): no verdict.
    NotComparable,
    /// No distribution in the key's unit on one side or both: significance unknown.
    NoDistribution,
    /// In one file only.
    OneFile,
}

impl Change {
    /// The class of this change.
    pub fn class(&self) -> Class {
        if self.direction.starts_with("only") {
            Class::OneFile
        } else if !self.not_comparable.is_empty() {
            Class::NotComparable
        } else {
            match self.significant.as_str() {
                "yes" => Class::Beyond,
                "no" => Class::Within,
                _ => Class::NoDistribution,
            }
        }
    }
}

/// The bottom line of a comparison of keys.
#[derive(Debug, Clone, Serialize, Default)]
pub struct BottomLine {
    /// Keys compared (the union of both files, `key@target` twins of `key` once).
    pub keys: usize,
    /// Changed beyond noise, measured the same way.
    pub beyond_noise: usize,
    /// Of those, better and worse (the rest: sizes and counts that moved, `changed`).
    pub better: usize,
    pub worse: usize,
    /// Within noise.
    pub within_noise: usize,
    /// Measured differently.
    pub not_comparable: usize,
    /// Without a distribution in their unit.
    pub no_distribution: usize,
    /// In one file only.
    pub one_file_only: usize,
    /// The largest changes beyond noise (by |percent|, at most [`LARGEST`]), names.
    pub largest: Vec<String>,
}

/// How many of the largest changes the bottom line names.
pub const LARGEST: usize = 5;

impl BottomLine {
    /// The bottom line of `changes`.
    pub fn of(changes: &[Change]) -> BottomLine {
        let mut b = BottomLine {
            keys: changes.len(),
            ..Default::default()
        };
        let mut beyond: Vec<&Change> = vec![];
        for c in changes {
            match c.class() {
                Class::Beyond => {
                    b.beyond_noise += 1;
                    b.better += usize::from(c.verdict == "better");
                    b.worse += usize::from(c.verdict == "worse");
                    beyond.push(c);
                }
                Class::Within => b.within_noise += 1,
                Class::NotComparable => b.not_comparable += 1,
                Class::NoDistribution => b.no_distribution += 1,
                Class::OneFile => b.one_file_only += 1,
            }
        }
        let size = |c: &Change| c.pct.map_or(f64::INFINITY, f64::abs);
        beyond.sort_by(|x, y| size(y).total_cmp(&size(x)).then(x.name.cmp(&y.name)));
        b.largest = beyond
            .iter()
            .take(LARGEST)
            .map(|c| c.name.clone())
            .collect();
        b
    }

    /// The bottom line as one sentence, counting `noun` (`keys`).
    pub fn sentence(&self, noun: &str) -> String {
        let others = self.beyond_noise - self.better - self.worse;
        let mut how = vec![
            format!("{} better", self.better),
            format!("{} worse", self.worse),
        ];
        if others > 0 {
            how.push(format!("{others} sizes or counts changed"));
        }
        format!(
            "{} {noun}: {} changed beyond noise ({}), {} within noise, {} not comparable \
             (measured differently), {} without a distribution, {} in one file only",
            self.keys,
            self.beyond_noise,
            how.join(", "),
            self.within_noise,
            self.not_comparable,
            self.no_distribution,
            self.one_file_only
        )
    }
}

/// How disturbed a noisy side was (each such side first: it widens the noise), the bottom
/// line and the largest changes beyond noise.
pub(super) fn bottom_line(s: &mut String, r: &DiffReport) {
    let [da, db] = &r.disturbance;
    if da.is_noisy() && db.is_noisy() && da.same_counts(db) {
        s.push_str(&format!("noise: {}\n", da.sentence("A and B")));
    } else {
        for d in r.disturbance.iter().filter(|d| d.is_noisy()) {
            s.push_str(&format!("noise: {}\n", d.sentence(&d.file)));
        }
    }
    let (b, changes) = (&r.bottom_line, &r.params);
    s.push_str(&format!("bottom line: {}\n", b.sentence("keys")));
    if b.largest.is_empty() {
        return;
    }
    s.push_str("largest changes beyond noise:\n");
    // The answer on the left (a narrow terminal wraps the last cells).
    let mut t = TextTable::new(&[
        ("name", Left),
        ("pct", Right),
        ("verdict", Left),
        ("A", Right),
        ("B", Right),
        ("unit", Left),
        ("noise", Right),
    ])
    .indent(2);
    for name in &b.largest {
        if let Some(c) = changes.iter().find(|c| &c.name == name) {
            t.row([
                c.name.clone(),
                c.pct.map_or("-".into(), |p| format!("{p:+.1}%")),
                c.verdict.clone(),
                f(c.a),
                f(c.b),
                c.unit.clone(),
                f(c.threshold),
            ]);
        }
    }
    s.push_str(&t.render());
}
