//! The DRAM self-check: a key measured "from DRAM" at a working set S is believed only if
//! the same kernel, on the same CPUs, at a larger working set gives the same figure.
//!
//! A working set inside a cache runs faster than one twice its size, so the check measures
//! the key's kernel at S and at 2S (bandwidth: the same threads; latency: the same chain
//! construction), or at the cache rule's size for those CPUs where that is larger (a
//! 128 MiB set and its double both fit a 300 MiB L3 and agree). Within [`TOLERANCE`] they
//! agree and S stands. Otherwise both are measured again, up to [`MAX_PASSES`] times, and
//! judged on the means (a noisy machine moves a single figure by several percent): S is
//! in a cache only when every pass found it faster; then S grows to the larger size and
//! the check goes on, at most [`MAX_GROWTH`] times. A larger size that is faster in every
//! pass is no cache effect (no cache slows a smaller set): S stands, with a note and a
//! warning about the noise. When the sizes do not agree and the passes disagree with each
//! other by more than the sizes do (the figure at one size moved from pass to pass more than any pass moved between the
//! sizes), the verdict is `noisy`: the machine moved during the check, and nothing is told
//! of the caches; S stands, its keys flagged noisy. When 2S cannot be placed (the memory
//! bound), S/2 and S are compared instead: flat from S/2 to S is the next best evidence,
//! and a faster S/2 leaves S unconfirmed.
//!
//! Every family that measures DRAM keys runs a check, or relies on one that covers its
//! working set ([`crate::sizing::SizingBook::covering`]): same target and pattern, CPUs
//! among the check's, at least the confirmed size. The checks go to params.json as
//! `dram_check`, each with the keys it covers.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest relative difference between S and the larger size still counted as agreement.
pub const TOLERANCE: f64 = 0.05;

/// How many times a check may double S before it gives up.
pub const MAX_GROWTH: usize = 3;

/// The judgement of one comparison (the speed of the smaller over the larger).
enum Judged {
    Agree(f64),
    Cache(f64),
    LargerFaster(f64),
    Noise(f64),
}

impl Judged {
    fn ratio(&self) -> f64 {
        match *self {
            Judged::Agree(r) | Judged::Cache(r) | Judged::LargerFaster(r) | Judged::Noise(r) => r,
        }
    }
}

/// How many times one comparison is measured at most before the passes are called noise.
pub const MAX_PASSES: usize = 3;

/// The passes a plan counts for one comparison: the first, and the repeat a busy machine
/// asks for about every other run (on 2-vCPU guests, 6 of 12 quick runs repeated, 3 of
/// them a third time). A third pass is the noisy case, which the plan does not count.
pub const PLANNED_PASSES: usize = 2;

/// The share of a repeat pass's seconds a plan prices: a repeat comes in about every other
/// run ([`PLANNED_PASSES`]), so the plan expects half of it; a quiet machine that agrees
/// at the first pass ends a little before its plan, a busy one that repeats a little after,
/// each within the plan's bound (priced at a whole pass, a quiet Intel guest ended
/// `mem.bandwidth` at 0.63 of its plan).
pub const REPEAT_SHARE: f64 = 0.5;

/// How a family goes through its working set (checks of one pattern cover only that
/// pattern: a random chase keeps hits where a stream has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Dependent loads in a random order (latency, atomics, the loaded-latency chase).
    Chase,
    /// Sequential passes (bandwidth, flush bandwidth, agents, loaded traffic).
    Stream,
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Latency: a cache makes it lower.
    Lower,
    /// Bandwidth: a cache makes it higher.
    Higher,
}

/// The verdict of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// S agreed with the larger size: S stands.
    Agree,
    /// S ran faster (in a cache); a larger size agreed with twice it and stands.
    Grown,
    /// No size could be confirmed (see the reason); the keys stand at `reported_bytes`
    /// with a warning.
    Unconfirmed,
    /// The passes disagreed with each other by more than the sizes did: the machine moved
    /// during the check. The keys stand at `reported_bytes`, flagged noisy.
    Noisy,
}

impl Verdict {
    /// The verdict's name, as params.json writes it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Grown => "grown",
            Verdict::Unconfirmed => "unconfirmed",
            Verdict::Noisy => "noisy",
        }
    }
}

/// One figure of a check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckPoint {
    /// Working set (touched bytes for a chase, footprint for a stream).
    pub bytes: usize,
    /// The figure (the unit of the check).
    pub value: f64,
    /// 1, or 2 for the repeat after a disagreement.
    pub pass: u8,
    /// Its measurement id, when it was recorded as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// One DRAM check as params.json records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct DramCheck {
    pub target: String,
    /// The benchmark that measured it.
    pub benchmark: String,
    /// Chase or stream.
    pub pattern: Pattern,
    /// The kernel measured (`read`, `tlb-local phased-256 chase`).
    pub kernel: String,
    /// The CPUs that ran it, as a CPU list.
    pub cpus: String,
    pub threads: usize,
    /// Unit of the figures (`ns`, `GB/s`).
    pub unit: String,
    /// Which way the figure improves.
    pub better: Better,
    /// S as the sizing rule chose it.
    pub start_bytes: usize,
    /// How the rule chose it ([`crate::sizing::DramSizing::explain`]).
    pub sizing: String,
    /// Every figure measured, in order.
    pub points: Vec<CheckPoint>,
    /// The two sizes of the final comparison (smaller, larger).
    pub compared_bytes: [usize; 2],
    /// How much faster the smaller size ran than the larger (1 = the same; above 1 +
    /// tolerance: the smaller is in a cache).
    pub ratio: f64,
    /// Largest |ratio - 1| counted as agreement.
    pub tolerance: f64,
    pub verdict: Verdict,
    /// Why it is not a plain agreement (the compared sizes, the memory bound), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The working set the keys were measured at.
    pub reported_bytes: usize,
    /// The first comparison disagreed, so both sizes were measured again.
    pub repeated: bool,
    /// The keys measured at `reported_bytes` that this check stands for.
    #[serde(default)]
    pub keys: Vec<String>,
}

impl DramCheck {
    /// Whether a size was confirmed (agree or grown).
    pub fn confirmed(&self) -> bool {
        matches!(self.verdict, Verdict::Agree | Verdict::Grown)
    }

    /// Whether the check grew S past its rule.
    pub fn grew(&self) -> bool {
        self.reported_bytes > self.start_bytes
    }

    /// The CPUs of `cpus` as numbers (none when the list does not parse).
    pub fn cpu_list(&self) -> Vec<usize> {
        crate::pin::parse_cpu_list(&self.cpus).unwrap_or_default()
    }

    /// Whether every CPU of `cpus` is one of the check's.
    pub fn covers_cpus(&self, cpus: &[usize]) -> bool {
        let own = self.cpu_list();
        cpus.iter().all(|c| own.contains(c))
    }

    /// One line for people: verdict, sizes, figures.
    pub fn summary(&self) -> String {
        use crate::units::format_size;
        let fig = |b: usize| -> String {
            let v: Vec<f64> = self
                .points
                .iter()
                .filter(|p| p.bytes == b)
                .map(|p| p.value)
                .collect();
            match v.len() {
                0 => "-".into(),
                n => format!("{:.1}", v.iter().sum::<f64>() / n as f64),
            }
        };
        let [a, b] = self.compared_bytes;
        format!(
            "{} {} on CPUs {}: {} at {} (S {} {} vs {} {} {}; {:.3}x, tolerance {:.0}%){}",
            self.benchmark,
            self.kernel,
            self.cpus,
            match self.verdict {
                Verdict::Unconfirmed => "UNCONFIRMED",
                Verdict::Noisy => "NOISY",
                v => v.name(),
            },
            format_size(self.reported_bytes),
            format_size(a),
            fig(a),
            format_size(b),
            fig(b),
            self.unit,
            self.ratio,
            self.tolerance * 100.0,
            self.note
                .as_ref()
                .map_or(String::new(), |n| format!("; {n}"))
        )
    }
}

/// What a check is asked to do: where to start, how far it may go, which way is better.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// S: the working set the keys are to be measured at.
    pub start_bytes: usize,
    /// The larger size is at least this: the cache rule's working set for the CPUs
    /// ([`crate::sizing`]). S below it (a size given on the command line, a smaller
    /// rule) is then compared with a size that leaves every cache sysfs names, not
    /// merely with 2S, which a large cache may hold as well.
    pub floor_bytes: usize,
    /// The largest working set that may be placed (the memory bound of the larger size).
    pub max_bytes: usize,
    /// Which way the figure improves.
    pub better: Better,
}

impl Plan {
    /// The comparison the check makes from working set `s`: `s` and the larger size
    /// (twice it, at least [`Plan::floor_bytes`]), or `s / 2` and `s` where the larger does
    /// not fit under [`Plan::max_bytes`] (the third value says so).
    pub fn comparison_from(&self, s: usize) -> (usize, usize, bool) {
        let next = (2 * s).max(self.floor_bytes);
        if next > self.max_bytes {
            (s / 2, s, true)
        } else {
            (s, next, false)
        }
    }

    /// The largest working set of the check's first comparison: what a family maps for
    /// its check unless S is found in a cache and grows (each growth within
    /// [`Plan::max_bytes`]).
    pub fn first_larger_bytes(&self) -> usize {
        self.comparison_from(self.start_bytes.max(1)).1
    }

    /// The largest working set the check may measure: the larger size of each comparison
    /// where every one finds the smaller in a cache and S grows ([`MAX_GROWTH`] times at
    /// most), within [`Plan::max_bytes`].
    pub fn largest_bytes(&self) -> usize {
        let mut s = self.start_bytes.max(1);
        let mut most = 0;
        for _ in 0..=MAX_GROWTH {
            let (_, large, fallback) = self.comparison_from(s);
            most = most.max(large);
            if fallback {
                break;
            }
            s = large;
        }
        most
    }
}

/// What the check found (the parts of a [`DramCheck`] the algorithm decides).
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Outcome {
    /// Every figure, in order.
    pub points: Vec<CheckPoint>,
    /// Final comparison (smaller, larger).
    pub compared_bytes: [usize; 2],
    /// Speed of the smaller over the larger.
    pub ratio: f64,
    pub verdict: Verdict,
    /// Why not a plain agreement, if so.
    pub note: Option<String>,
    /// Where the keys stand.
    pub reported_bytes: usize,
    /// Whether a repeat was needed.
    pub repeated: bool,
}

impl Outcome {
    /// The mean figure at `bytes` over its passes.
    pub fn value_at(&self, bytes: usize) -> Option<f64> {
        let v: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.bytes == bytes)
            .map(|p| p.value)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The measurement ids at `bytes`.
    pub fn ids_at(&self, bytes: usize) -> Vec<String> {
        self.points
            .iter()
            .filter(|p| p.bytes == bytes)
            .filter_map(|p| p.id.clone())
            .collect()
    }

    /// The full record, with what the family knows.
    pub fn into_check(self, plan: &Plan, what: CheckInfo) -> DramCheck {
        DramCheck {
            target: what.target,
            benchmark: what.benchmark,
            pattern: what.pattern,
            kernel: what.kernel,
            cpus: crate::pin::format_cpu_list(&what.cpus),
            threads: what.cpus.len(),
            unit: what.unit,
            better: plan.better,
            start_bytes: plan.start_bytes,
            sizing: what.sizing,
            points: self.points,
            compared_bytes: self.compared_bytes,
            ratio: self.ratio,
            tolerance: TOLERANCE,
            verdict: self.verdict,
            note: self.note,
            reported_bytes: self.reported_bytes,
            repeated: self.repeated,
            keys: what.keys,
        }
    }
}

/// What a family says about its check.
#[derive(Debug, Clone)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct CheckInfo {
    pub target: String,
    pub benchmark: String,
    pub pattern: Pattern,
    /// Kernel, in words.
    pub kernel: String,
    /// The CPUs it ran on.
    pub cpus: Vec<usize>,
    /// Unit of the figures.
    pub unit: String,
    /// The sizing rule, explained.
    pub sizing: String,
    /// Keys measured at the reported size.
    pub keys: Vec<String>,
}

/// The warning a check that did not simply agree gives, with its cause and fix.
pub fn warning(c: &DramCheck) -> Option<crate::warning::Warning> {
    use crate::units::format_size;
    let [small, large] = c.compared_bytes;
    let who = format!(
        "{}: {} ({}, CPUs {})",
        c.target, c.benchmark, c.kernel, c.cpus
    );
    let (message, remediation) = match c.verdict {
        Verdict::Agree if c.ratio < 1.0 - c.tolerance => (
            format!(
                "{who}: the larger working set ran {:.1}% faster than {} in every pass of the DRAM check: no cache effect, so the figures stand at {}, but they move by more than {:.0}% from one measurement to the next",
                (1.0 / c.ratio - 1.0) * 100.0,
                format_size(small),
                format_size(c.reported_bytes),
                c.tolerance * 100.0
            ),
            "run on an idle machine (isolate the CPUs, stop other guests) and compare two runs with `cxlchar diff`",
        ),
        Verdict::Agree => return None,
        Verdict::Grown => (
            format!(
                "{who}: the DRAM check found {} still in a cache (it ran faster than a larger set): the DRAM figures were measured at {}, where {} and {} agree within {:.0}%",
                format_size(c.start_bytes),
                format_size(c.reported_bytes),
                format_size(small),
                format_size(large),
                c.tolerance * 100.0
            ),
            "none needed for the figures; these CPUs keep more in cache than sysfs names (a memory-side cache, an L4, a VM's or CAT's view of the LLC): say so when you report them",
        ),
        Verdict::Noisy => (
            format!(
                "{who}: the DRAM check's passes disagreed with each other by more than the working sets did ({}): the machine moved during the check, so it says nothing about the caches; the figures stand at {}, flagged noisy",
                c.note.as_deref().unwrap_or("noisy"),
                format_size(c.reported_bytes)
            ),
            "run again on an idle machine (nothing else on the measuring CPUs; on a VM, pinned vCPUs without overcommit)",
        ),
        Verdict::Unconfirmed => (
            format!(
                "{who}: the DRAM check could not confirm {} as DRAM ({}); the figures stand at {}",
                format_size(c.reported_bytes),
                c.note.as_deref().unwrap_or("no agreement"),
                format_size(c.reported_bytes)
            ),
            if c.ratio < 1.0 {
                "run again on an idle machine (isolate the CPUs, stop other guests): the figures moved more than the tolerance between sizes"
            } else {
                "free memory or use a target with more, so that a working set twice as large fits; until then treat these figures as possibly cache-assisted"
            },
        ),
    };
    Some(crate::warning::Warning {
        code: "dram_check".into(),
        message,
        remediation: remediation.into(),
    })
}

/// The suffix of the measurement id of a check's pass: none for the first, `/repeat` for
/// the second, `/repeat2` for the third (each id names one measurement).
pub fn pass_suffix(pass: u8) -> String {
    match pass {
        0 | 1 => String::new(),
        2 => "/repeat".into(),
        n => format!("/repeat{}", n - 1),
    }
}

/// How much faster `small` ran than `large` (above 1: the smaller is faster).
pub fn speedup(better: Better, small: f64, large: f64) -> f64 {
    match better {
        Better::Lower => large / small,
        Better::Higher => small / large,
    }
}

/// The figures measured so far, remembered by (size, pass).
struct Figures<M> {
    measure: M,
    seen: BTreeMap<(usize, u8), f64>,
    points: Vec<CheckPoint>,
    repeated: bool,
}

impl<M> Figures<M> {
    /// How far apart the passes at `bytes` are: the largest over the smallest figure (1
    /// with one pass).
    fn spread(&self, bytes: usize) -> f64 {
        let v: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.bytes == bytes && p.value > 0.0)
            .map(|p| p.value)
            .collect();
        let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        if v.len() < 2 {
            1.0
        } else {
            hi / lo
        }
    }

    fn get<E>(&mut self, bytes: usize, pass: u8) -> Result<f64, E>
    where
        M: FnMut(usize, u8) -> Result<(f64, Option<String>), E>,
    {
        if let Some(&v) = self.seen.get(&(bytes, pass)) {
            return Ok(v);
        }
        let (value, id) = (self.measure)(bytes, pass)?;
        self.seen.insert((bytes, pass), value);
        self.points.push(CheckPoint {
            bytes,
            value,
            pass,
            id,
        });
        Ok(value)
    }

    /// Compares `small` with `large`, pass after pass (at most [`MAX_PASSES`]): agreement
    /// of the means ends it; S is in a cache only when every pass found it faster, the
    /// larger faster only when every pass did; passes that disagree with each other are
    /// noise. Returns the judgement and each pass's ratio.
    fn compare<E>(
        &mut self,
        better: Better,
        small: usize,
        large: usize,
    ) -> Result<(Judged, Vec<f64>), E>
    where
        M: FnMut(usize, u8) -> Result<(f64, Option<String>), E>,
    {
        let outside = |r: f64| (r - 1.0).abs() > TOLERANCE;
        let (mut sa, mut sb, mut each) = (0.0, 0.0, Vec::new());
        loop {
            let pass = each.len() as u8 + 1;
            let a = self.get(small, pass)?;
            let b = self.get(large, pass)?;
            sa += a;
            sb += b;
            each.push(speedup(better, a, b));
            let ratio = speedup(better, sa, sb);
            let judged = if !outside(ratio) {
                Some(Judged::Agree(ratio))
            } else if each.len() < 2 {
                None
            } else if each.iter().all(|&r| r > 1.0 + TOLERANCE) {
                Some(Judged::Cache(ratio))
            } else if each.iter().all(|&r| r < 1.0 - TOLERANCE) {
                Some(Judged::LargerFaster(ratio))
            } else if each.len() == MAX_PASSES {
                Some(Judged::Noise(ratio))
            } else {
                None
            };
            if let Some(j) = judged {
                return Ok((j, each));
            }
            self.repeated = true;
        }
    }

    /// The outcome: `verdict` on the comparison `compared` (`ratio`), the keys at
    /// `reported`.
    fn done(
        self,
        verdict: Verdict,
        compared: [usize; 2],
        ratio: f64,
        note: String,
        reported: usize,
    ) -> Outcome {
        Outcome {
            points: self.points,
            compared_bytes: compared,
            ratio,
            verdict,
            note: (!note.is_empty()).then_some(note),
            reported_bytes: reported,
            repeated: self.repeated,
        }
    }
}

/// Runs the check: `measure(bytes, pass)` measures the kernel at a working set and returns
/// its figure and measurement id. Sizes are measured once per pass and remembered.
pub fn run<E>(
    plan: Plan,
    measure: impl FnMut(usize, u8) -> Result<(f64, Option<String>), E>,
) -> Result<Outcome, E> {
    use crate::units::format_size;
    let mut f = Figures {
        measure,
        seen: BTreeMap::new(),
        points: Vec::new(),
        repeated: false,
    };
    let mut s = plan.start_bytes.max(1);
    // The comparison that made S grow, if it did.
    let mut last: Option<([usize; 2], f64)> = None;
    let mut grown = 0usize;
    loop {
        let (small, large, fallback) = plan.comparison_from(s);
        if let (true, Some((compared, ratio))) = (fallback, last) {
            let note = format!(
                "still {:.1}% faster than {} after growing to {}, and no larger size fits in the memory the target offers",
                (ratio - 1.0) * 100.0,
                format_size(compared[1]),
                format_size(compared[0])
            );
            return Ok(f.done(Verdict::Unconfirmed, compared, ratio, note, s));
        }
        if small == 0 {
            let note = "no second size fits".to_string();
            return Ok(f.done(Verdict::Unconfirmed, [s, s], 1.0, note, s));
        }
        let (judged, each) = f.compare(plan.better, small, large)?;
        let compared = [small, large];
        let ratio = judged.ratio();
        let passes = each
            .iter()
            .map(|r| format!("{r:.3}"))
            .collect::<Vec<_>>()
            .join(", ");
        // The passes at one size apart by more than any pass's sizes: the machine moved.
        let within = f.spread(small).max(f.spread(large));
        let between = each
            .iter()
            .map(|&r| if r >= 1.0 { r } else { 1.0 / r.max(1e-12) })
            .fold(f64::INFINITY, f64::min);
        let agreed = matches!(judged, Judged::Agree(_));
        if !agreed && each.len() >= 2 && within > 1.0 + TOLERANCE && within >= between {
            let note = format!(
                "a size's passes {:.2}x apart, the sizes at least {:.2}x (smaller over larger by pass: {passes})",
                within, between
            );
            return Ok(f.done(Verdict::Noisy, compared, ratio, note, s));
        }
        let stands = if grown == 0 {
            Verdict::Agree
        } else {
            Verdict::Grown
        };
        let (verdict, note) = match judged {
            Judged::Agree(_) if fallback => (
                stands,
                format!(
                    "the larger size does not fit in the memory the target offers: S/2 ({}) compared with S",
                    format_size(small)
                ),
            ),
            Judged::Agree(_) => (stands, String::new()),
            // No cache makes a smaller set slower: S is not in one. The figures moved with
            // something else (noise, page placement), which the note says.
            Judged::LargerFaster(_) => (
                stands,
                format!(
                    "the larger size ran faster in every pass ({passes}): not a cache effect, so S stands; the figures moved by more than the tolerance (noise, page placement)"
                ),
            ),
            Judged::Noise(_) => (
                Verdict::Noisy,
                format!(
                    "the passes disagree ({passes}): the machine is too noisy to tell; S stands, flagged noisy"
                ),
            ),
            Judged::Cache(_) if fallback => (
                Verdict::Unconfirmed,
                format!(
                    "S/2 ran {:.1}% faster than S, and no larger size fits in the memory the target offers: S may be in a cache",
                    (ratio - 1.0) * 100.0
                ),
            ),
            Judged::Cache(_) if grown == MAX_GROWTH => {
                let note = format!(
                    "still {:.1}% faster than {} after growing {MAX_GROWTH} times",
                    (ratio - 1.0) * 100.0,
                    format_size(large)
                );
                return Ok(f.done(Verdict::Unconfirmed, compared, ratio, note, large));
            }
            Judged::Cache(_) => {
                grown += 1;
                last = Some((compared, ratio));
                s = large;
                continue;
            }
        };
        return Ok(f.done(verdict, compared, ratio, note, s));
    }
}

#[cfg(test)]
mod tests;
