//! Where a log axis is labelled: enough values to read a figure off it (a 55 GB/s plateau
//! between labels 20 and 50 and 100, not between 10 and 100), never two labels that read
//! the same, and no more than fit beside each other.
//!
//! Decimal axes take, per decade, the densest of 1..9, 1-2-5, 1-3 and 1 that gives at
//! most [`MAX_LABELS`] labels (every n-th decade beyond); size axes (bytes) take powers
//! of two, every n-th so that at most [`MAX_LABELS`] are labelled. The grid has a light
//! line at every value of the finer set.

/// The most labels an axis gets.
pub(super) const MAX_LABELS: usize = 10;
/// The most light grid lines an axis gets.
const MAX_LIGHT: usize = 80;

/// The values of `lo..=hi` of the form m x 10^e, m in `mantissas`, ascending.
fn decimal(lo: f64, hi: f64, mantissas: &[f64], every: i32) -> Vec<f64> {
    let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut v = vec![];
    for e in e0..=e1 {
        if every > 1 && e.rem_euclid(every) != 0 {
            continue;
        }
        let p = 10f64.powi(e);
        for m in mantissas {
            // 3 x 0.1 is 0.30000000000000004: round to the digits the label shows.
            let x = m * p;
            let x = format!("{x:.12e}").parse::<f64>().unwrap_or(x);
            if x >= lo * (1.0 - 1e-9) && x <= hi * (1.0 + 1e-9) {
                v.push(x);
            }
        }
    }
    v
}

/// The powers of two in `lo..=hi` whose exponent is a multiple of `every`.
fn binary(lo: f64, hi: f64, every: i32) -> Vec<f64> {
    let (e0, e1) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    (e0..=e1)
        .filter(|e| e.rem_euclid(every) == 0)
        .map(|e| 2f64.powi(e))
        .collect()
}

/// (labelled values, light grid values) of a log axis over `lo..hi` (both positive);
/// `bytes`: sizes, labelled at powers of two. The labels read differently once formatted
/// with `fmt` (a value whose label repeats the one before is dropped).
pub(super) fn log_ticks(
    lo: f64,
    hi: f64,
    bytes: bool,
    fmt: &dyn Fn(f64) -> String,
) -> (Vec<f64>, Vec<f64>) {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > lo) {
        return (vec![], vec![]);
    }
    let (bold, light) = if bytes {
        let every = (1..=64)
            .find(|&k| binary(lo, hi, k).len() <= MAX_LABELS)
            .unwrap_or(64);
        let light = binary(lo, hi, 1);
        (binary(lo, hi, every), light)
    } else {
        let sets: [&[f64]; 4] = [
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
            &[1.0, 2.0, 5.0],
            &[1.0, 3.0],
            &[1.0],
        ];
        let mut bold = vec![];
        let mut finer: &[f64] = sets[0];
        for (i, m) in sets.iter().enumerate() {
            bold = decimal(lo, hi, m, 1);
            if bold.len() <= MAX_LABELS {
                finer = sets[i.saturating_sub(1)];
                break;
            }
            finer = m;
        }
        if bold.len() > MAX_LABELS {
            let every = (2..=400)
                .find(|&k| decimal(lo, hi, &[1.0], k).len() <= MAX_LABELS)
                .unwrap_or(400);
            bold = decimal(lo, hi, &[1.0], every);
        }
        (bold, decimal(lo, hi, finer, 1))
    };
    let mut labelled: Vec<f64> = vec![];
    let mut last = String::new();
    for v in bold {
        let l = fmt(v);
        if l != last {
            labelled.push(v);
            last = l;
        }
    }
    let light = if light.len() <= MAX_LIGHT {
        light
    } else {
        labelled.clone()
    };
    (labelled, light)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(lo: f64, hi: f64, bytes: bool) -> Vec<String> {
        let f = |v: f64| {
            if bytes {
                super::super::lines::tick_size(v)
            } else {
                super::super::lines::tick(v)
            }
        };
        log_ticks(lo, hi, bytes, &f).0.into_iter().map(f).collect()
    }

    #[test]
    fn a_gpu_plateau_axis_is_labelled_at_one_two_five() {
        // 0.35 .. 55 GB/s, padded by 1.5 either way as the charts pad.
        assert_eq!(
            labels(0.35 / 1.5, 55.0 * 1.5, false),
            ["0.5", "1", "2", "5", "10", "20", "50"]
        );
    }

    #[test]
    fn labels_never_repeat_and_stay_few() {
        for (lo, hi) in [
            (0.23, 135.0),
            (4.7, 315.0),
            (2.0, 15000.0),
            (60.0, 210.0),
            (1e-3, 1e12),
        ] {
            let l = labels(lo, hi, false);
            assert!(l.len() >= 3 && l.len() <= MAX_LABELS, "{lo}..{hi}: {l:?}");
            let mut d = l.clone();
            d.dedup();
            assert_eq!(d, l, "{lo}..{hi}: a label twice");
        }
        assert_eq!(
            labels(60.0, 210.0, false),
            ["60", "70", "80", "90", "100", "200"]
        );
    }

    #[test]
    fn size_axes_are_labelled_at_powers_of_two() {
        assert_eq!(
            labels(4096.0 / 1.5, 1073741824.0 * 1.5, true),
            [
                "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB", "64 MiB",
                "256 MiB", "1 GiB"
            ]
        );
        assert_eq!(
            labels(1000.0, 70000.0, true),
            ["1 KiB", "2 KiB", "4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB"]
        );
    }
}
