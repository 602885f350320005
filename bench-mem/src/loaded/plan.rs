//! What `mem.loaded` measures: the curves (named mixes of `--mix`, read shares of
//! `--read-pct` and `--mess-family`) and, for share families, which injection delays of
//! a curve (a coarse sweep refined where the latency bends).

use super::traffic::{Mix, Traffic};
use std::collections::BTreeMap;

/// Largest read share, percent.
const MAX_PCT: u32 = 100;

/// Relative p50 change between neighbouring points of an adaptive curve above which the
/// delay between them is measured too (5 %: a flat stretch stays coarse, the knee near
/// full load is filled in).
pub const REFINE_REL: f64 = 0.05;

/// Every `COARSE_EVERY`-th delay of the effort plan (and the idle point) makes the coarse
/// sweep of an adaptive curve.
pub const COARSE_EVERY: usize = 3;

/// One share (`98`) or a range `FROM:TO:STEP` (`100:0:2`, either direction, TO included
/// when on the grid) of a `--read-pct` item.
pub fn parse_shares(item: &str) -> Result<Vec<u32>, String> {
    let item = item.trim();
    if item.is_empty() {
        return Err(
            "empty read share: give whole percentages 0..=100, e.g. 100,50,0 or 100:0:10".into(),
        );
    }
    let parts: Vec<&str> = item.split(':').collect();
    match parts.as_slice() {
        [one] => Ok(vec![pct(one)?]),
        [from, to, step] => {
            let (from, to) = (pct(from)?, pct(to)?);
            let step: u32 = step.trim().parse().ok().filter(|s| *s > 0).ok_or_else(|| {
                format!("{item}: the step of FROM:TO:STEP is a whole number of percent, at least 1")
            })?;
            let n = from.abs_diff(to) / step;
            Ok((0..=n)
                .map(|i| {
                    if from >= to {
                        from - i * step
                    } else {
                        from + i * step
                    }
                })
                .collect())
        }
        _ => Err(format!(
            "{item}: give a read share (0..=100) or a range FROM:TO:STEP (100:0:2)"
        )),
    }
}

/// One whole percentage 0..=100.
fn pct(s: &str) -> Result<u32, String> {
    let s = s.trim();
    match s.parse::<i64>() {
        Ok(p) if (0..=MAX_PCT as i64).contains(&p) => Ok(p as u32),
        Ok(p) => Err(format!(
            "read share {p} is outside 0..=100 (whole percent of the memory traffic that is reads)"
        )),
        Err(_) => Err(format!(
            "read share {s:?} is not a whole percentage 0..=100"
        )),
    }
}

/// A `--read-pct` value: a comma list of shares and ranges (`100,98,50`, `100:0:2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shares(pub Vec<u32>);

impl std::str::FromStr for Shares {
    type Err = String;
    fn from_str(s: &str) -> Result<Shares, String> {
        let mut v = Vec::new();
        for item in s.split(',') {
            v.extend(parse_shares(item)?);
        }
        Ok(Shares(v))
    }
}

/// Mess's family of read shares, 100 % down to 0 % every `step_pct` percent (Mess reads
/// 51 curves, step 2; the effort plan's step, [`bench_core::effort::MemEffort`]).
pub fn family(step_pct: u32) -> Vec<u32> {
    let step = step_pct.clamp(1, MAX_PCT);
    let mut v: Vec<u32> = (0..=MAX_PCT / step).map(|i| MAX_PCT - i * step).collect();
    if v.last() != Some(&0) {
        v.push(0);
    }
    v
}

/// The curves of a run: the named mixes (all five when neither they nor shares are
/// given), then the shares in the order given, each traffic once (a share whose chunk
/// is a named mix's, such as 100 = `read`, is that mix).
pub fn curves(mixes: &[Mix], shares: &[u32]) -> Vec<Traffic> {
    let named: Vec<Mix> = if mixes.is_empty() && shares.is_empty() {
        Mix::ALL.to_vec()
    } else {
        mixes.to_vec()
    };
    let mut out: Vec<Traffic> = Vec::new();
    let all = named
        .into_iter()
        .map(Traffic::mix)
        .chain(shares.iter().map(|&p| Traffic::share(p)));
    for t in all {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The first delays of an adaptive curve: every [`COARSE_EVERY`]-th of the plan's
/// `n` delays, and the last (idle).
pub fn coarse(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).step_by(COARSE_EVERY).collect();
    if n > 0 && v.last() != Some(&(n - 1)) {
        v.push(n - 1);
    }
    v
}

/// The delays to measure next on an adaptive curve, given the p50 (ns) at the delay
/// indices measured so far: the middle index between neighbours whose p50 differ by more
/// than [`REFINE_REL`] of the smaller, where an unmeasured index lies between them.
pub fn refine(measured: &BTreeMap<usize, f64>) -> Vec<usize> {
    let pts: Vec<(usize, f64)> = measured.iter().map(|(&i, &l)| (i, l)).collect();
    pts.windows(2)
        .filter(|w| w[1].0 > w[0].0 + 1)
        .filter(|w| {
            let (a, b) = (w[0].1, w[1].1);
            let lo = a.min(b);
            lo.is_nan() || lo <= 0.0 || (a - b).abs() > REFINE_REL * lo
        })
        .map(|w| (w[0].0 + w[1].0) / 2)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_steps_cover_100_to_0() {
        assert_eq!(family(2).len(), 51);
        assert_eq!(family(10), [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0]);
        assert_eq!(family(30), [100, 70, 40, 10, 0]);
        assert_eq!(family(0), (0..=100).rev().collect::<Vec<_>>());
    }

    #[test]
    fn coarse_takes_every_third_delay_and_idle() {
        assert_eq!(coarse(19), [0, 3, 6, 9, 12, 15, 18]);
        assert_eq!(coarse(9), [0, 3, 6, 8]);
        assert_eq!(coarse(1), [0]);
        assert!(coarse(0).is_empty());
    }

    /// The indices an adaptive curve measures on a curve of p50s `lat` (by delay index).
    fn adaptive(lat: &[f64]) -> Vec<usize> {
        let mut done: BTreeMap<usize, f64> = BTreeMap::new();
        let mut todo = coarse(lat.len());
        while !todo.is_empty() {
            for i in todo {
                done.insert(i, lat[i]);
            }
            todo = refine(&done);
        }
        done.into_keys().collect()
    }

    #[test]
    fn flat_stretches_stay_coarse_and_knees_are_filled_in() {
        // Flat: the coarse sweep only.
        assert_eq!(adaptive(&[100.0; 19]), coarse(19));
        // Noise under the threshold: still coarse.
        let noisy: Vec<f64> = (0..19).map(|i| 100.0 + (i % 2) as f64 * 3.0).collect();
        assert_eq!(adaptive(&noisy), coarse(19));
        // A knee between delay indices 0 and 3 (latency 300 at full load, 100 from 2 on):
        // 1 and 2 are measured, the flat rest is not.
        let mut knee = vec![100.0; 19];
        knee[0] = 300.0;
        knee[1] = 180.0;
        let got = adaptive(&knee);
        assert!(got.contains(&1) && got.contains(&2), "{got:?}");
        assert_eq!(got.len(), coarse(19).len() + 2, "{got:?}");
        // A steady climb: every delay.
        let climb: Vec<f64> = (0..19).map(|i| 100.0 * 1.2f64.powi(i)).collect();
        assert_eq!(adaptive(&climb), (0..19).collect::<Vec<_>>());
    }
}
