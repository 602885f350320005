//! The Hockney model `t(n) = alpha + n / beta` (seed 000): start-up latency `alpha` (ns)
//! and asymptotic bandwidth `beta` (GB/s = bytes/ns), fitted to (message size, time)
//! points.
//!
//! The fit is weighted least squares with weights `1 / t^2`, i.e. it minimizes the
//! *relative* errors: without weights the largest messages (times thousands of times
//! larger) decide alone and the latency of small messages, the very thing `alpha`
//! describes, can come out negative. Both figures are kept physical: when the weighted
//! fit's latency is negative the latency is held at 0 and the bandwidth fitted through the
//! origin ([`HockneyFit::latency_constrained`] says so); when the time does not grow with
//! the size there is no bandwidth to fit ([`HockneyError::NoBandwidth`]).

use thiserror::Error;

/// The weights of [`hockney_fit`], in words for a method description.
pub const HOCKNEY_WEIGHTS: &str =
    "weighted by 1/t^2 (relative errors, so that small messages count)";

/// A fitted Hockney model `t(n) = lat_ns + n / bw_gbs`.
#[derive(Debug, Clone, PartialEq)]
pub struct HockneyFit {
    /// Start-up latency (ns): the intercept, never negative.
    pub lat_ns: f64,
    /// Asymptotic bandwidth (GB/s = bytes/ns): the inverse slope, always positive.
    pub bw_gbs: f64,
    /// Weighted coefficient of determination (same weights as the fit); 1 for a perfect
    /// fit, and it can fall below 0 for a constrained fit.
    pub r2: f64,
    /// True when the unconstrained fit's latency was negative and `lat_ns` is held at 0
    /// (the bandwidth is then the weighted fit through the origin).
    pub latency_constrained: bool,
    /// The points the model was fitted to: (message size in bytes, time in ns).
    pub points: Vec<(f64, f64)>,
}

impl HockneyFit {
    /// The model's time (ns) for a message of `size_bytes`.
    pub fn time_ns(&self, size_bytes: f64) -> f64 {
        self.lat_ns + size_bytes / self.bw_gbs
    }

    /// Residuals (measured - model, ns) of the fitted points, in their order.
    pub fn residuals_ns(&self) -> Vec<f64> {
        self.points
            .iter()
            .map(|&(s, t)| t - self.time_ns(s))
            .collect()
    }
}

/// Why no Hockney model could be fitted.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HockneyError {
    /// Fewer than two distinct message sizes.
    #[error("a Hockney fit needs at least two distinct message sizes ({0} given)")]
    TooFewSizes(usize),
    /// A size that is negative or not finite, or a time that is not positive and finite.
    #[error("a Hockney fit needs finite sizes >= 0 and finite times > 0 (got {size_bytes} B, {time_ns} ns)")]
    BadPoint {
        /// The point's size (bytes).
        size_bytes: f64,
        /// The point's time (ns).
        time_ns: f64,
    },
    /// The time does not grow with the size: no positive bandwidth fits.
    #[error("the time does not grow with the message size: there is no bandwidth term to fit")]
    NoBandwidth,
}

/// Fits `t_ns = lat_ns + size_bytes / bw_gbs` to `(size_bytes, t_ns)` points by least
/// squares weighted by `1 / t^2` (see the module documentation), the latency held at 0
/// when it would be negative.
pub fn hockney_fit(points: &[(f64, f64)]) -> Result<HockneyFit, HockneyError> {
    if let Some(&(s, t)) = points
        .iter()
        .find(|&&(s, t)| !s.is_finite() || s < 0.0 || !t.is_finite() || t <= 0.0)
    {
        return Err(HockneyError::BadPoint {
            size_bytes: s,
            time_ns: t,
        });
    }
    let distinct = points
        .first()
        .is_some_and(|f| points.iter().any(|p| p.0 != f.0));
    if !distinct {
        return Err(HockneyError::TooFewSizes(points.len()));
    }
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(s, t) in points {
        let w = 1.0 / (t * t);
        sw += w;
        sx += w * s;
        sy += w * t;
        sxx += w * s * s;
        sxy += w * s * t;
    }
    let det = sw * sxx - sx * sx;
    if det.abs() < 1e-300 {
        return Err(HockneyError::TooFewSizes(points.len()));
    }
    let mut slope = (sw * sxy - sx * sy) / det;
    let mut lat = (sy - slope * sx) / sw;
    let latency_constrained = lat < 0.0;
    if latency_constrained {
        // Through the origin: minimizes sum w (t - slope s)^2.
        lat = 0.0;
        slope = sxy / sxx;
    }
    if slope <= 0.0 || !slope.is_finite() {
        return Err(HockneyError::NoBandwidth);
    }
    let mean = sy / sw;
    let (mut ss_res, mut ss_tot) = (0.0, 0.0);
    for &(s, t) in points {
        let w = 1.0 / (t * t);
        ss_res += w * (t - lat - slope * s).powi(2);
        ss_tot += w * (t - mean).powi(2);
    }
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    Ok(HockneyFit {
        lat_ns: lat,
        bw_gbs: 1.0 / slope,
        r2,
        latency_constrained,
        points: points.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn recovers_a_synthetic_model_exactly() {
        // 1500 ns, 12.5 GB/s, sizes 8 B .. 1 MiB.
        let pts: Vec<(f64, f64)> = (0..18)
            .map(|i| {
                let s = (8u64 << i) as f64;
                (s, 1500.0 + s / 12.5)
            })
            .collect();
        let h = hockney_fit(&pts).unwrap();
        assert!(close(h.lat_ns, 1500.0, 1e-9), "{h:?}");
        assert!(close(h.bw_gbs, 12.5, 1e-9), "{h:?}");
        assert!(close(h.r2, 1.0, 1e-12), "{h:?}");
        assert!(!h.latency_constrained);
        assert_eq!(h.points, pts);
        assert!(h.residuals_ns().iter().all(|r| r.abs() < 1e-6));
    }

    #[test]
    fn tolerates_noise() {
        let pts: Vec<(f64, f64)> = (0..18)
            .map(|i| {
                let s = (8u64 << i) as f64;
                let noise = if i % 2 == 0 { 1.02 } else { 0.98 };
                (s, (2000.0 + s / 3.0) * noise)
            })
            .collect();
        let h = hockney_fit(&pts).unwrap();
        assert!(close(h.bw_gbs, 3.0, 0.05), "{h:?}");
        assert!(close(h.lat_ns, 2000.0, 0.05), "{h:?}");
        assert!(h.r2 > 0.99, "{h:?}");
    }

    /// The numbers of the weighted fit `bench_cxl::msg::hockney_fit` returned on the same
    /// data before it was replaced by this one (printed with `{:.17e}`): the pool keys
    /// `pool_hockney_*` are unchanged.
    #[test]
    fn matches_the_former_pool_msg_fit() {
        // (points, latency ns, bandwidth GB/s)
        type Case<'a> = (&'a [(f64, f64)], f64, f64);
        let cases: [Case; 3] = [
            (
                &[
                    (8.0, 95.3),
                    (64.0, 101.2),
                    (512.0, 140.7),
                    (4096.0, 420.5),
                    (32768.0, 2950.1),
                    (262144.0, 21000.4),
                ],
                9.570_067_260_285_633e1,
                1.215_645_228_932_496_7e1,
            ),
            (
                &[
                    (8.0, 612.0),
                    (16.0, 598.5),
                    (32.0, 640.2),
                    (64.0, 655.9),
                    (128.0, 701.3),
                    (256.0, 760.8),
                    (512.0, 905.4),
                    (1024.0, 1180.0),
                    (2048.0, 1702.6),
                    (4096.0, 2810.3),
                ],
                6.154_709_495_790_419e2,
                1.850_112_515_236_370_9,
            ),
            (
                &[(8.0, 40.0), (4096.0, 90.0), (262144.0, 30000.0)],
                3.699_207_363_369_541e1,
                6.041_669_898_583_645e1,
            ),
        ];
        for (pts, lat, bw) in cases {
            let h = hockney_fit(pts).unwrap();
            assert!(!h.latency_constrained, "{h:?}");
            assert!(close(h.lat_ns, lat, 1e-12), "{} vs {lat}", h.lat_ns);
            assert!(close(h.bw_gbs, bw, 1e-12), "{} vs {bw}", h.bw_gbs);
        }
    }

    /// Where an unconstrained fit gives a negative latency, the latency is held at 0,
    /// the result says so, and the bandwidth is the weighted fit through the origin.
    #[test]
    fn a_negative_latency_is_constrained_to_zero() {
        let pts = [(64.0, 5.0), (4096.0, 420.0), (65536.0, 6600.0)];
        let h = hockney_fit(&pts).unwrap();
        assert!(h.latency_constrained, "{h:?}");
        assert_eq!(h.lat_ns, 0.0);
        let (num, den) = pts.iter().fold((0.0, 0.0), |(n, d), &(s, t)| {
            (n + s * t / (t * t), d + s * s / (t * t))
        });
        assert!(close(h.bw_gbs, den / num, 1e-12), "{h:?}");
        assert!(h.bw_gbs > 0.0 && h.r2 <= 1.0);
        assert_eq!(h.residuals_ns().len(), 3);
    }

    #[test]
    fn weights_make_small_messages_count() {
        // A 1% error on the largest message moves an unweighted intercept from 100 ns to
        // 65 ns; the relative weights keep it near 100 ns.
        let mut pts: Vec<(f64, f64)> = (3..21)
            .map(|i| {
                let s = (1u64 << i) as f64;
                (s, 100.0 + s / 10.0)
            })
            .collect();
        let last = pts.len() - 1;
        pts[last].1 *= 1.01;
        let h = hockney_fit(&pts).unwrap();
        assert!((h.lat_ns - 100.0).abs() < 5.0, "{h:?}");
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        assert_eq!(hockney_fit(&[]), Err(HockneyError::TooFewSizes(0)));
        assert_eq!(
            hockney_fit(&[(8.0, 100.0)]),
            Err(HockneyError::TooFewSizes(1))
        );
        assert_eq!(
            hockney_fit(&[(8.0, 100.0), (8.0, 120.0)]),
            Err(HockneyError::TooFewSizes(2))
        );
        assert_eq!(
            hockney_fit(&[(8.0, 200.0), (4096.0, 100.0)]),
            Err(HockneyError::NoBandwidth)
        );
        assert!(matches!(
            hockney_fit(&[(8.0, f64::NAN), (4096.0, 100.0)]),
            Err(HockneyError::BadPoint { .. })
        ));
        assert!(matches!(
            hockney_fit(&[(8.0, 0.0), (4096.0, 100.0)]),
            Err(HockneyError::BadPoint { .. })
        ));
    }
}
