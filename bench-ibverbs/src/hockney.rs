//! Hockney model `T(s) = lat + s / bw` (seed 000), fitted by ordinary least squares on
//! (message size, time) points.

/// A fitted Hockney model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hockney {
    /// Start-up latency (ns): the intercept.
    pub lat_ns: f64,
    /// Asymptotic bandwidth (GB/s = bytes/ns): the inverse slope.
    pub bw_gbs: f64,
    /// Coefficient of determination of the fit.
    pub r2: f64,
}

/// Fits `t_ns = lat + bytes / bw` by least squares. `None` with fewer than two distinct
/// sizes, non-finite input, or a non-positive slope (no bandwidth term to fit).
pub fn fit(points: &[(f64, f64)]) -> Option<Hockney> {
    if points.len() < 2
        || points
            .iter()
            .any(|&(s, t)| !s.is_finite() || !t.is_finite())
    {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    if slope <= 0.0 {
        return None;
    }
    let lat = my - slope * mx;
    let r2 = if syy > 0.0 {
        (sxy * sxy) / (sxx * syy)
    } else {
        1.0
    };
    Some(Hockney {
        lat_ns: lat,
        bw_gbs: 1.0 / slope,
        r2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_synthetic_model() {
        // lat 1500 ns, 12.5 GB/s, sizes 8 B .. 1 MiB.
        let pts: Vec<(f64, f64)> = (0..18)
            .map(|i| {
                let s = (8u64 << i) as f64;
                (s, 1500.0 + s / 12.5)
            })
            .collect();
        let h = fit(&pts).unwrap();
        assert!((h.lat_ns - 1500.0).abs() < 1e-6, "{h:?}");
        assert!((h.bw_gbs - 12.5).abs() < 1e-9, "{h:?}");
        assert!((h.r2 - 1.0).abs() < 1e-12);
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
        let h = fit(&pts).unwrap();
        assert!((h.bw_gbs - 3.0).abs() / 3.0 < 0.05, "{h:?}");
        assert!(h.r2 > 0.99);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(fit(&[]).is_none());
        assert!(fit(&[(8.0, 100.0)]).is_none());
        assert!(fit(&[(8.0, 100.0), (8.0, 120.0)]).is_none());
        // Time falling with size: no bandwidth to report.
        assert!(fit(&[(8.0, 200.0), (4096.0, 100.0)]).is_none());
        assert!(fit(&[(8.0, f64::NAN), (4096.0, 100.0)]).is_none());
    }
}
