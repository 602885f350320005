//! The noise of a figure in one run, from what that run recorded.
//!
//! `h`, the spread a figure's median may move by from one run to the next, is the largest
//! of:
//!
//! * the upper half-spread of its samples, `p90 - p50`; with fewer than
//!   [`FEW_SAMPLES`] samples (a crew's windows) also the lower, `p50 - min` (their p10 is
//!   their smallest: p10 is not recorded otherwise);
//! * the spread the run's DRAM check found between measurements of the same kernel, for
//!   the keys and measurements it stands for: between the passes at one size, and, where
//!   it confirmed the size, between the two sizes it compared (`|ratio - 1|`), relative,
//!   times the figure;
//! * widened to both half-spreads, also `p50 - min`, for a figure that stands on disturbed
//!   samples (its measurement disturbed in every attempt, its key flagged noisy) or whose
//!   run was mostly disturbed ([`super::side::MOSTLY_DISTURBED`]): the median of disturbed
//!   samples may sit anywhere in their inner spread, on either side. Not `p99`: a
//!   latency's p99 holds the interruptions of microseconds no median feels.

use super::side::Side;
use bench_core::dram_check::DramCheck;
use bench_core::params::Measurement;
use bench_core::stats::Distribution;
use serde::Serialize;

/// Below this many samples the lower half-spread `p50 - min` counts too.
pub const FEW_SAMPLES: u64 = 10;

/// Noise of a figure.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Noise {
    /// The spread of the figure (see the module).
    pub h: f64,
}

impl Noise {
    /// The spread of a distribution's samples: `p90 - p50`, with few samples or `wide`
    /// also `p50 - min`.
    pub fn of(d: &Distribution, wide: bool) -> Noise {
        let mut h = (d.p90 - d.p50).max(0.0);
        if d.n < FEW_SAMPLES || wide {
            h = h.max(d.p50 - d.min);
        }
        Noise { h }
    }
}

/// The threshold of the rule for two noises.
pub fn threshold(a: Noise, b: Noise) -> f64 {
    (a.h * a.h + b.h * b.h).sqrt()
}

/// A side's noise and where it comes from, or why it has none.
pub(super) type Noisy = Result<(Noise, String), String>;

/// The relative spread a DRAM check found between measurements of one kernel: between its
/// passes at one size, and between the two sizes of a confirmed comparison.
pub fn check_spread(c: &DramCheck) -> f64 {
    let mut rel: f64 = if c.confirmed() && c.ratio.is_finite() {
        (c.ratio - 1.0).abs()
    } else {
        0.0
    };
    let mut sizes: Vec<usize> = c.points.iter().map(|p| p.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for b in sizes {
        let v: Vec<f64> = c
            .points
            .iter()
            .filter(|p| p.bytes == b && p.value.is_finite())
            .map(|p| p.value)
            .collect();
        if v.len() < 2 {
            continue;
        }
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        if mean > 0.0 {
            rel = rel.max((hi - lo) / mean);
        }
    }
    rel
}

/// The largest relative spread of `checks` ([`check_spread`]), 0 without any.
fn checks_spread(checks: &[&DramCheck]) -> f64 {
    checks.iter().map(|c| check_spread(c)).fold(0.0, f64::max)
}

/// Whether a measurement stands on disturbed samples (disturbed in every attempt).
fn disturbed(m: &Measurement) -> bool {
    m.counters.as_ref().is_some_and(|c| c.disturbed)
}

/// `source` with what widened it or set it: the DRAM check's spread, the disturbance.
fn labelled(source: &str, widened: bool, by_check: bool) -> String {
    let mut s = source.to_string();
    if widened {
        s.push_str(", widened (disturbed)");
    }
    if by_check {
        s.push_str(", DRAM check spread");
    }
    s
}

/// `h` at least the check spread `rel` of `value`; whether the check decided it.
fn with_check(n: Noise, rel: f64, value: f64) -> (Noise, bool) {
    let c = rel * value.abs();
    if c.is_finite() && c > n.h {
        (Noise { h: c }, true)
    } else {
        (n, false)
    }
}

/// A measurement's own noise in its side (`Err`: not in this file).
pub(super) fn measurement_noise(side: &Side, m: Option<&Measurement>) -> Noisy {
    let m = m.ok_or_else(|| "in one file only".to_string())?;
    let wide = side.disturbance.mostly_disturbed || disturbed(m);
    let n = Noise::of(&m.distribution, wide);
    let rel = checks_spread(&side.checks_of_id(&m.id));
    let (n, by_check) = with_check(n, rel, m.distribution.p50);
    Ok((n, labelled("measurement", wide, by_check)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    bench_core::stats::median(&v).unwrap_or(f64::NAN)
}

/// A key's noise ([`Noise`], in the key's unit) and where it comes from, or why it has
/// none. Its distribution: among the measurements it was derived from (`param_info.from`)
/// those in the key's unit, the one whose median is the key's value, else (a median over
/// CPU pairs, a best of several, a mean of passes) the median `h` of those whose medians
/// bracket the value; then the DRAM check's spread and the widening of the module.
pub(super) fn key_noise(side: &Side, key: &str) -> Noisy {
    let f = side.f;
    let Some(info) = f.param_info.get(key) else {
        return Err("no distribution: no param_info".into());
    };
    let from: Vec<&Measurement> = side.from(key);
    if from.is_empty() {
        return Err("no distribution: no measurement recorded".into());
    }
    let own: Vec<&Measurement> = from
        .iter()
        .copied()
        .filter(|m| m.unit == info.unit)
        .filter(|m| m.distribution.p50.is_finite() && m.distribution.p90.is_finite())
        .collect();
    if own.is_empty() {
        let mut units: Vec<&str> = from.iter().map(|m| m.unit.as_str()).collect();
        units.sort();
        units.dedup();
        return Err(format!(
            "no distribution in {}: derived from {} measurements",
            info.unit,
            units.join("/")
        ));
    }
    let Some(&value) = f.params.get(key) else {
        return Err("no distribution: no value".into());
    };
    let key_wide = side.disturbance.mostly_disturbed || info.noisy.is_some();
    let wide = |m: &Measurement| key_wide || disturbed(m);
    let same = |x: f64| (x - value).abs() <= 1e-9_f64.max(value.abs() * 1e-6);
    let (n, source, widened) = if let Some(m) = own.iter().find(|m| same(m.distribution.p50)) {
        let w = wide(m);
        (Noise::of(&m.distribution, w), "measurement", w)
    } else {
        let lo = own
            .iter()
            .map(|m| m.distribution.p50)
            .fold(f64::INFINITY, f64::min);
        let hi = own
            .iter()
            .map(|m| m.distribution.p50)
            .fold(f64::NEG_INFINITY, f64::max);
        if !(lo <= value && value <= hi) {
            return Err(format!(
                "no distribution: not the median of its {} measurements",
                info.unit
            ));
        }
        let h = median(
            own.iter()
                .map(|m| Noise::of(&m.distribution, wide(m)).h)
                .collect(),
        );
        if !h.is_finite() {
            return Err("no distribution: no finite spread".into());
        }
        (Noise { h }, "measurements", own.iter().any(|m| wide(m)))
    };
    let rel = checks_spread(&side.checks_of_key(key));
    let (n, by_check) = with_check(n, rel, value);
    Ok((n, labelled(source, widened, by_check)))
}
