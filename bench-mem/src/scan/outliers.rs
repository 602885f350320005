//! Which ranges of a scan are slow: the rule, on the figures alone (no measuring here, so
//! it is tested on recorded figures).
//!
//! Each range's figure is the p50 of its windows' aggregates (GB/s), and its own spread is
//! half the range of those windows ((max - min) / 2). Over the ranges whose figures stand
//! on undisturbed windows (over all ranges where fewer than [`MIN_RANGES`] do): the median
//! `m` and the median absolute deviation `MAD`, scaled by 1.4826 to a standard deviation
//! (`sigma`, as for normal noise). A range is **slow** when
//!
//! ```text
//! figure < m - max(3 x sigma, its own spread, 3 % of m)
//! ```
//!
//! that is, below the median by more than the run's noise across ranges, more than its
//! own windows moved, and more than a floor that no real device difference is below. A
//! range whose figure stands on disturbed windows only (noisy) is never called slow, and
//! the rule needs at least [`MIN_RANGES`] ranges.

use bench_core::stats::median;

/// Standard deviations below the median a slow range must lie.
pub const K_SIGMA: f64 = 3.0;
/// The MAD of normal noise times this is its standard deviation.
pub const MAD_TO_SIGMA: f64 = 1.4826;
/// The least deficit, as a share of the median.
pub const FLOOR_SHARE: f64 = 0.03;
/// The fewest ranges the rule judges.
pub const MIN_RANGES: usize = 4;

/// The rule in words, for measurements' methods and params.json.
pub const RULE: &str = "a range is slow when its figure (the p50 of its windows' aggregates) is below the median m of the ranges' figures by more than max(3 x sigma, the range's own spread, 3 % of m), where sigma = 1.4826 x the median absolute deviation of those figures and a range's spread is half the range of its windows ((max - min) / 2); m and sigma are taken over the ranges whose figures stand on undisturbed windows (over all ranges where fewer than 4 do); a range whose figure stands on disturbed windows only (noisy) is never called slow; at least 4 ranges are needed";

/// One range's figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// The p50 of its windows, GB/s.
    pub gbs: f64,
    /// Half the range of its windows, GB/s.
    pub spread_gbs: f64,
    /// It stands on disturbed windows only.
    pub noisy: bool,
}

/// One range judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// How far below the median it must lie to be slow, GB/s.
    pub margin_gbs: f64,
    /// How far below the median it lies, GB/s (negative: above it).
    pub below_gbs: f64,
    /// Slow by the rule.
    pub slow: bool,
}

/// The ranges judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The median of the figures, GB/s.
    pub median_gbs: f64,
    /// Their median absolute deviation, GB/s.
    pub mad_gbs: f64,
    /// 1.4826 x MAD, GB/s.
    pub sigma_gbs: f64,
    /// 3 % of the median, GB/s.
    pub floor_gbs: f64,
    /// Each range, in order (empty when the rule was not applied).
    pub ranges: Vec<Judged>,
    /// The ranges the median and MAD are taken over, in words.
    pub over: String,
    /// Why the rule was not applied (too few ranges), if it was not.
    pub not_applied: Option<String>,
}

impl Verdict {
    /// The indices of the slow ranges.
    pub fn slow(&self) -> Vec<usize> {
        (0..self.ranges.len())
            .filter(|&i| self.ranges[i].slow)
            .collect()
    }
}

/// Judges `figures` by the rule (see the module documentation).
pub fn judge(figures: &[Figure]) -> Verdict {
    let clean: Vec<f64> = figures.iter().filter(|f| !f.noisy).map(|f| f.gbs).collect();
    let (values, over) = if clean.len() >= MIN_RANGES {
        (
            clean,
            format!(
                "the {} undisturbed ranges of {}",
                figures.iter().filter(|f| !f.noisy).count(),
                figures.len()
            ),
        )
    } else {
        let all: Vec<f64> = figures.iter().map(|f| f.gbs).collect();
        let n = all.len();
        (
            all,
            format!("all {n} ranges (fewer than {MIN_RANGES} undisturbed)"),
        )
    };
    let m = median(&values).unwrap_or(0.0);
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    let sigma = MAD_TO_SIGMA * mad;
    let floor = FLOOR_SHARE * m;
    let mut v = Verdict {
        median_gbs: m,
        mad_gbs: mad,
        sigma_gbs: sigma,
        floor_gbs: floor,
        ranges: vec![],
        over,
        not_applied: None,
    };
    if figures.len() < MIN_RANGES {
        v.not_applied = Some(format!(
            "{} range(s): the rule needs at least {MIN_RANGES}",
            figures.len()
        ));
        return v;
    }
    v.ranges = figures
        .iter()
        .map(|f| {
            let margin = (K_SIGMA * sigma).max(f.spread_gbs).max(floor);
            let below = m - f.gbs;
            Judged {
                margin_gbs: margin,
                below_gbs: below,
                slow: !f.noisy && below > margin,
            }
        })
        .collect();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(gbs: f64, spread_gbs: f64) -> Figure {
        Figure {
            gbs,
            spread_gbs,
            noisy: false,
        }
    }

    /// Recorded-like figures: 16 ranges of a node at about 20 GB/s, each with windows a
    /// few tenths apart (the deviations are a fixed pattern, not random: the test must
    /// not depend on a seed).
    fn steady(n: usize) -> Vec<Figure> {
        const WOBBLE: [f64; 8] = [0.12, -0.08, 0.05, -0.15, 0.02, 0.09, -0.04, -0.11];
        (0..n)
            .map(|i| fig(20.0 + WOBBLE[i % WOBBLE.len()], 0.1 + 0.02 * (i % 3) as f64))
            .collect()
    }

    #[test]
    fn one_range_behind_a_slow_device_is_found_and_only_it() {
        let mut f = steady(16);
        // One range a fifth slower (a narrow link, a degraded DIMM).
        f[11] = fig(16.1, 0.2);
        let v = judge(&f);
        assert_eq!(v.slow(), vec![11], "{v:#?}");
        assert!((v.median_gbs - 20.0).abs() < 0.1, "{v:#?}");
        let j = v.ranges[11];
        assert!(j.below_gbs > j.margin_gbs && j.margin_gbs >= v.floor_gbs);
        // A range 2 % below the median is within the floor: not slow.
        f[11] = fig(19.6, 0.1);
        assert!(judge(&f).slow().is_empty());
    }

    #[test]
    fn ranges_within_the_noise_give_no_slow_range() {
        let v = judge(&steady(16));
        assert!(v.slow().is_empty(), "{v:#?}");
        assert!(v.not_applied.is_none());
        // The margin is the floor here (3 % of 20), above 3 sigma of this quiet set.
        assert!(v.ranges.iter().all(|j| (j.margin_gbs - 0.6).abs() < 0.01));
    }

    #[test]
    fn a_noisy_set_flags_nothing() {
        // Ranges whose figures scatter by +-3 GB/s (a VM's neighbours): a range 4 GB/s
        // below the median is within 3 sigma.
        let spread = [
            2.5, -3.0, 1.0, -1.5, 3.0, -2.0, 0.5, 2.0, -2.5, 1.5, -0.5, -4.0,
        ];
        let f: Vec<Figure> = spread.iter().map(|d| fig(20.0 + d, 0.3)).collect();
        let v = judge(&f);
        assert!(v.slow().is_empty(), "{v:#?}");
        assert!(v.sigma_gbs > 2.0);
        // A range whose own windows moved more than its deficit is not called slow.
        let mut f = steady(16);
        f[3] = fig(18.0, 2.5);
        assert!(judge(&f).slow().is_empty());
        // A range that stands on disturbed windows only (a CPU hog beside it) is never
        // called slow, however low its figure.
        f[3] = Figure {
            gbs: 9.0,
            spread_gbs: 0.5,
            noisy: true,
        };
        let v = judge(&f);
        assert!(v.slow().is_empty(), "{v:#?}");
        assert!(v.ranges[3].below_gbs > v.ranges[3].margin_gbs);
    }

    /// The read figures (p50, half-range of the windows) of a full `mem scan` of anon on
    /// the 2-vCPU EPYC guest, 7 ranges of 224 MiB, recorded while other builds loaded its
    /// CPUs (windows up to 7 GB/s apart).
    const GUEST_READ: [(f64, f64); 7] = [
        (17.279, 3.582),
        (17.967, 3.197),
        (17.791, 4.901),
        (18.159, 3.653),
        (17.135, 3.534),
        (17.823, 4.366),
        (16.991, 6.570),
    ];

    #[test]
    fn a_recorded_scan_has_no_slow_range_and_a_quarter_slower_one_would_be() {
        let mut f: Vec<Figure> = GUEST_READ.iter().map(|&(g, s)| fig(g, s)).collect();
        let v = judge(&f);
        assert!(v.slow().is_empty(), "{v:#?}");
        assert!((v.median_gbs - 17.791).abs() < 1e-9);
        // Its windows moved so much that a range must lie 3.5 GB/s and more below the
        // median: 10 % below is not enough, a quarter below is.
        f[4] = fig(16.0, 3.534);
        assert!(judge(&f).slow().is_empty());
        f[4] = fig(13.3, 3.534);
        assert_eq!(judge(&f).slow(), vec![4]);
    }

    #[test]
    fn disturbed_ranges_set_neither_the_median_nor_the_noise() {
        // Three ranges taken while a neighbour ran (noisy, half the figure) beside eight
        // undisturbed ones; one undisturbed range 15 % slow stands out from the eight.
        let mut f = steady(11);
        for i in [0, 1, 2] {
            f[i] = Figure {
                gbs: 10.0 + i as f64,
                spread_gbs: 6.0,
                noisy: true,
            };
        }
        f[7] = fig(17.0, 0.2);
        let v = judge(&f);
        assert_eq!(v.slow(), vec![7], "{v:#?}");
        assert!(
            v.median_gbs > 19.5 && v.over.starts_with("the 8 undisturbed"),
            "{v:#?}"
        );
        // Fewer than 4 undisturbed ranges: over all of them, said so.
        for x in f.iter_mut().skip(3).take(6) {
            x.noisy = true;
        }
        assert!(judge(&f).over.starts_with("all 11 ranges"));
    }

    #[test]
    fn too_few_ranges_are_not_judged() {
        let v = judge(&[fig(20.0, 0.1), fig(10.0, 0.1), fig(20.0, 0.1)]);
        assert!(v.slow().is_empty() && v.ranges.is_empty());
        assert!(v.not_applied.as_deref().unwrap().contains("at least 4"));
        assert!((v.median_gbs - 20.0).abs() < 1e-9);
    }

    #[test]
    fn half_the_ranges_slow_is_a_median_between_them_not_an_outlier() {
        // Two devices of different speed, half the ranges each: the median lies between
        // them and the MAD is half their gap; nothing stands out from the ranges' own
        // distribution (the backing in the records tells the two halves apart).
        let f: Vec<Figure> = (0..8)
            .map(|i| fig(if i % 2 == 0 { 20.0 } else { 12.0 }, 0.1))
            .collect();
        let v = judge(&f);
        assert!(v.slow().is_empty(), "{v:#?}");
        assert!((v.median_gbs - 16.0).abs() < 1e-9 && (v.mad_gbs - 4.0).abs() < 1e-9);
    }
}
