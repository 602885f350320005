//! The fleet's outlier rule: which hosts stand apart from the others on one key.
//!
//! Per key, over the hosts that have it (a finite value):
//!
//! * `m` = the median of the values, `MAD` = the median of `|x - m|`;
//! * the robust z of a host is `z = (x - m) / s` with
//!   `s = max(1.4826 * MAD, 0.01 * |m|)`: 1.4826 * MAD estimates the standard deviation of
//!   normally distributed values; the floor of 1 % of the median means a host within 1 % of
//!   the median is never an outlier, so a fleet of equal values (MAD 0) flags nothing and
//!   one different value among equal ones is judged against 1 % of the median;
//! * a host is an outlier when `|z| > 3.5`, the cut of Iglewicz and Hoaglin's modified
//!   z-score ("How to Detect and Handle Outliers", 1993);
//! * fewer than [`MIN_HOSTS`] hosts with the key: no verdict (a median of two is their
//!   mean, and either could be the odd one), said so instead of a verdict.
//!
//! Median and MAD rather than mean and standard deviation: one sick host moves the mean
//! and inflates the standard deviation enough to hide itself; it moves the median and the
//! MAD of a fleet of three or more hardly at all.
//!
//! Which side is worse comes from the key's unit (its name's suffix,
//! [`bench_core::keys::Unit`]): `_ns` higher is worse; `_gbs` and `_mps` lower is worse;
//! other units (bytes, ratios) are only "different".
//!
//! Pure functions, no I/O: the fleet summary ([`super::summary`]) and the fleet report
//! call [`judge`] per key.

use bench_core::keys::Unit;
use serde::Serialize;

/// Scale of the MAD to a standard deviation for normally distributed values.
pub const MAD_SCALE: f64 = 1.4826;
/// The floor of the scale, relative to `|median|`: hosts within 1 % of the median are
/// never outliers.
pub const FLOOR: f64 = 0.01;
/// An outlier: `|z| > CUT` (Iglewicz and Hoaglin's modified z-score cut).
pub const CUT: f64 = 3.5;
/// Fewest hosts with a key for a verdict.
pub const MIN_HOSTS: usize = 3;

/// The rule, as printed under the summaries.
pub const RULE: &str =
    "outlier when |z| > 3.5, z = (x - median) / max(1.4826 * MAD, 0.01 * |median|), \
     MAD = median |x - median| over the hosts with the key (at least 3; fewer: no verdict)";

/// Which way a key gets worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Worse {
    /// Higher is worse (latencies, `_ns`).
    Higher,
    /// Lower is worse (bandwidths `_gbs`, message rates `_mps`).
    Lower,
    /// Neither is known to be worse (bytes, ratios, factors, unknown units).
    Unknown,
}

/// Which way `key` gets worse, from its unit.
pub fn worse_side(key: &str) -> Worse {
    match Unit::of_name(key) {
        Some(Unit::Nanoseconds) | Some(Unit::Count) => Worse::Higher,
        Some(Unit::GigabytesPerSecond) | Some(Unit::MegamessagesPerSecond) => Worse::Lower,
        _ => Worse::Unknown,
    }
}

/// One host's standing on one key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    pub host: String,
    pub value: f64,
    /// Its robust z (`None` without a verdict).
    pub z: Option<f64>,
    /// `|z| > CUT`.
    pub outlier: bool,
    /// For an outlier: `worse`, `better` or `different` (the unit does not say).
    pub side: Option<&'static str>,
}

/// The verdict of the rule on one key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Hosts with a finite value.
    pub n: usize,
    /// Their median (`None`: no host has the key).
    pub median: Option<f64>,
    /// Their median absolute deviation from the median.
    pub mad: Option<f64>,
    /// The scale z divides by: `max(1.4826 * MAD, 0.01 * |median|)` (`None`: no verdict).
    pub scale: Option<f64>,
    /// Every host with a finite value, in the order given.
    pub scores: Vec<Score>,
    /// Why there is no verdict (fewer than [`MIN_HOSTS`] hosts; a zero median and MAD),
    /// `None` when the rule judged.
    pub no_verdict: Option<String>,
}

impl Verdict {
    /// The outlier hosts.
    pub fn outliers(&self) -> impl Iterator<Item = &Score> {
        self.scores.iter().filter(|s| s.outlier)
    }
}

fn median(v: &[f64]) -> Option<f64> {
    bench_core::stats::median(v)
}

/// Judges one key over `(host, value)` pairs (non-finite values are left out, as absent).
pub fn judge(key: &str, values: &[(String, f64)]) -> Verdict {
    let finite: Vec<&(String, f64)> = values.iter().filter(|(_, v)| v.is_finite()).collect();
    let xs: Vec<f64> = finite.iter().map(|(_, v)| *v).collect();
    let m = median(&xs);
    let mad = m.and_then(|m| median(&xs.iter().map(|x| (x - m).abs()).collect::<Vec<_>>()));
    let scale = match (m, mad) {
        (Some(m), Some(mad)) => Some((MAD_SCALE * mad).max(FLOOR * m.abs())),
        _ => None,
    };
    let no_verdict = if xs.len() < MIN_HOSTS {
        Some(format!(
            "no verdict: {} host(s) with the key, the rule needs at least {MIN_HOSTS}",
            xs.len()
        ))
    } else if scale.is_some_and(|s| s <= 0.0) {
        // Median 0 and MAD 0: more than half the hosts read exactly 0.
        Some("no verdict: the median and the MAD are 0 (no scale to judge by)".into())
    } else {
        None
    };
    let worse = worse_side(key);
    let scores = finite
        .iter()
        .map(|(h, x)| {
            let z = match (no_verdict.is_none(), m, scale) {
                (true, Some(m), Some(s)) => Some((x - m) / s),
                _ => None,
            };
            let outlier = z.is_some_and(|z| z.abs() > CUT);
            let side = outlier.then(|| {
                let up = z.unwrap_or(0.0) > 0.0;
                match worse {
                    Worse::Higher if up => "worse",
                    Worse::Lower if !up => "worse",
                    Worse::Unknown => "different",
                    _ => "better",
                }
            });
            Score {
                host: h.clone(),
                value: *x,
                z,
                outlier,
                side,
            }
        })
        .collect();
    Verdict {
        n: xs.len(),
        median: m,
        mad,
        scale: if no_verdict.is_none() { scale } else { None },
        scores,
        no_verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(v: &[f64]) -> Vec<(String, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, x)| (format!("h{i}"), *x))
            .collect()
    }

    #[test]
    fn a_planted_outlier_among_four_is_found_and_its_side_named() {
        let v = judge("mem_lat_ns", &vals(&[100.0, 102.0, 99.0, 180.0]));
        assert!(v.no_verdict.is_none());
        let out: Vec<&Score> = v.outliers().collect();
        assert_eq!(out.len(), 1, "{v:?}");
        assert_eq!(out[0].host, "h3");
        assert_eq!(out[0].side, Some("worse"));
        assert!(out[0].z.unwrap() > CUT);
        // The others are well inside.
        assert!(v.scores[..3].iter().all(|s| s.z.unwrap().abs() < 1.0));
        // A bandwidth low is worse, high is better.
        let v = judge("mem_bw_gbs", &vals(&[20.0, 20.5, 19.8, 5.0]));
        assert_eq!(v.outliers().next().unwrap().side, Some("worse"));
        let v = judge("mem_bw_gbs", &vals(&[20.0, 20.5, 19.8, 50.0]));
        assert_eq!(v.outliers().next().unwrap().side, Some("better"));
        let v = judge("page_size_bytes", &vals(&[4096.0, 4096.0, 4096.0, 8192.0]));
        assert_eq!(v.outliers().next().unwrap().side, Some("different"));
    }

    #[test]
    fn fewer_than_three_hosts_give_no_verdict() {
        let v = judge("mem_lat_ns", &vals(&[100.0, 500.0]));
        assert!(v.no_verdict.as_deref().unwrap().contains("at least 3"));
        assert_eq!(v.outliers().count(), 0);
        assert!(v.scores.iter().all(|s| s.z.is_none()));
        assert_eq!(v.n, 2);
        // Non-finite values do not count as hosts with the key.
        let v = judge("mem_lat_ns", &vals(&[100.0, f64::NAN, 101.0]));
        assert_eq!(v.n, 2);
        assert!(v.no_verdict.is_some());
    }

    #[test]
    fn equal_values_flag_nothing() {
        let v = judge("mem_lat_ns", &vals(&[100.0; 5]));
        assert!(v.no_verdict.is_none());
        assert_eq!(v.mad, Some(0.0));
        assert_eq!(v.outliers().count(), 0);
        assert!(v.scores.iter().all(|s| s.z == Some(0.0)));
        // All zero: no scale at all, said so rather than dividing by zero.
        let v = judge("x_ns", &vals(&[0.0; 4]));
        assert!(v.no_verdict.as_deref().unwrap().contains("0"));
    }

    #[test]
    fn mad_zero_with_one_different_value_uses_the_one_percent_floor() {
        // MAD 0: the scale is 1 % of the median (1.0).
        let v = judge("mem_lat_ns", &vals(&[100.0, 100.0, 100.0, 100.0, 105.0]));
        assert_eq!(v.mad, Some(0.0));
        assert_eq!(v.scale, Some(1.0));
        assert_eq!(v.outliers().next().map(|s| s.host.as_str()), Some("h4"));
        assert!((v.scores[4].z.unwrap() - 5.0).abs() < 1e-9);
        // Within 1 % of the median: never an outlier, however tight the others.
        let v = judge("mem_lat_ns", &vals(&[100.0, 100.0, 100.0, 100.0, 100.9]));
        assert_eq!(v.outliers().count(), 0, "{v:?}");
        // 3.5 % off: z = 3.5, not above the cut; 3.6 % off: above.
        let v = judge("mem_lat_ns", &vals(&[100.0, 100.0, 100.0, 103.4]));
        assert_eq!(v.outliers().count(), 0);
        let v = judge("mem_lat_ns", &vals(&[100.0, 100.0, 100.0, 103.6]));
        assert_eq!(v.outliers().count(), 1);
    }
}
