//! Statistics: samples to a [`Distribution`], the one [`median`] of the workspace, and
//! the one Hockney fit ([`hockney_fit`], `t(n) = alpha + n / beta`).
//!
//! Percentiles come from an HDR histogram (3 significant digits) of the samples scaled
//! to thousandths of their unit, so sub-nanosecond latencies keep their precision;
//! min, max, mean and standard deviation are computed exactly from the samples.

mod hockney;

pub use hockney::{hockney_fit, HockneyError, HockneyFit, HOCKNEY_WEIGHTS};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The distribution of one measurement's samples, in its unit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Distribution {
    /// Number of samples.
    pub n: u64,
    /// Smallest sample.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest sample.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n-1).
    pub stdev: f64,
}

/// Values are recorded in thousandths of the unit.
const SCALE: f64 = 1000.0;

impl Distribution {
    /// Builds the distribution of `samples`. Returns `None` for no samples or a
    /// non-finite or negative sample (a failed measurement is never summarized).
    pub fn from_samples(samples: &[f64]) -> Option<Distribution> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return None;
        }
        let mut h = Histogram::<u64>::new(3).ok()?;
        for &s in samples {
            h.record((s * SCALE).round() as u64).ok()?;
        }
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let var = if samples.len() > 1 {
            samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let q = |p: f64| h.value_at_quantile(p) as f64 / SCALE;
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Clamp histogram quantiles into the exact range (bucket rounding).
        let c = |v: f64| v.clamp(min, max);
        Some(Distribution {
            n: samples.len() as u64,
            min,
            p50: c(q(0.5)),
            p90: c(q(0.9)),
            p99: c(q(0.99)),
            p999: c(q(0.999)),
            max,
            mean,
            stdev: var.sqrt(),
        })
    }

    /// Coefficient of variation (stdev / mean), 0 for a zero mean.
    pub fn cv(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            self.stdev / self.mean
        }
    }
}

/// Median of a slice (sorted copy; the mean of the two middle values for an even count),
/// `None` when empty. Every median over a handful of figures in the workspace is this one
/// (percentiles of a measurement's samples come from [`Distribution`]).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-9)
    }

    #[test]
    fn uniform_one_to_thousand() {
        let s: Vec<f64> = (1..=1000).map(|x| x as f64).collect();
        let d = Distribution::from_samples(&s).unwrap();
        assert_eq!(d.n, 1000);
        assert_eq!(d.min, 1.0);
        assert_eq!(d.max, 1000.0);
        assert!(close(d.mean, 500.5, 1e-12));
        assert!(close(d.p50, 500.0, 0.002), "{}", d.p50);
        assert!(close(d.p90, 900.0, 0.002), "{}", d.p90);
        assert!(close(d.p99, 990.0, 0.002), "{}", d.p99);
        assert!(close(d.p999, 999.0, 0.002), "{}", d.p999);
        // stdev of 1..=n is sqrt(n(n+1)/12)
        assert!(
            close(d.stdev, (1000.0f64 * 1001.0 / 12.0).sqrt(), 1e-9),
            "{}",
            d.stdev
        );
    }

    #[test]
    fn sub_unit_precision_is_kept() {
        let d = Distribution::from_samples(&[1.04, 1.04, 1.05, 1.04]).unwrap();
        assert!(close(d.p50, 1.04, 0.002), "{}", d.p50);
        assert!(d.min <= d.p50 && d.p50 <= d.p90 && d.p90 <= d.max);
    }

    #[test]
    fn constant_samples_have_zero_spread() {
        let d = Distribution::from_samples(&[7.0; 10]).unwrap();
        assert_eq!((d.min, d.p50, d.p999, d.max), (7.0, 7.0, 7.0, 7.0));
        assert_eq!(d.stdev, 0.0);
        assert_eq!(d.cv(), 0.0);
    }

    #[test]
    fn refuses_empty_and_invalid() {
        assert!(Distribution::from_samples(&[]).is_none());
        assert!(Distribution::from_samples(&[1.0, f64::NAN]).is_none());
        assert!(Distribution::from_samples(&[-1.0]).is_none());
    }

    #[test]
    fn median_even_and_odd() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
