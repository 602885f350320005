//! Cache-level plateaus of a latency sweep.
//!
//! The sweep's latency is flat while the working set fits a cache level and rises in
//! the transition to the next. With the cache sizes from sysfs, each level's plateau is
//! the set of sweep points safely inside it:
//!
//! | key | window of working-set sizes |
//! |---|---|
//! | `l1_lat_ns` | up to L1/2 |
//! | `lN_lat_ns` | from 2 x L(N-1) to LN/2 |
//! | `mem_lat_ns` | from 4 x LLC up |
//!
//! Within a window the plateau is the run of points, from the window's start, whose
//! latency stays within [`PLATEAU_RISE`] of the run's median (a cache that is effectively
//! smaller than sysfs reports, as in a VM, ends it early, with a note). The plateau's value
//! is the median of its points' p50 latencies. A window with no point gives no key (and
//! says so), never an interpolated number.

use bench_core::stats::median;

/// A sweep point counts as DRAM when its latency is at least this share of the cold-lap
/// reference (every line flushed from every cache before the lap).
pub const DRAM_REF_SHARE: f64 = 0.90;

/// The DRAM plateau is flat: its slowest point is at most this factor above its fastest.
pub const DRAM_FLAT: f64 = 1.08;

/// The plateau must hold over this factor of working-set sizes (two doublings).
pub const DRAM_SPAN_FACTOR: usize = 4;

/// The DRAM plateau of a sweep: where the chase misses every cache.
#[derive(Debug, Clone, PartialEq)]
pub struct DramPlateau {
    /// Index of its first point in the sweep.
    pub start: usize,
    /// Index of the first point at or past [`DRAM_SPAN_FACTOR`] x the start's size.
    pub end: usize,
    /// Largest sweep size below the plateau (the cache the chase effectively sees).
    pub effective_llc_bytes: Option<usize>,
}

/// Finds the DRAM plateau of an ascending sweep: the first point from which every point
/// up to [`DRAM_SPAN_FACTOR`] x its size (that size measured) is at least
/// [`DRAM_REF_SHARE`] of the cold-lap latency `cold_ns` and within [`DRAM_FLAT`] of each
/// other. A cache level is flat too, but far below the cold lap, so it never qualifies;
/// a transition (partly cache hits) is below the share. `None` until the sweep has
/// reached far enough.
pub fn dram_plateau(points: &[SweepPoint], cold_ns: f64) -> Option<DramPlateau> {
    if cold_ns.is_nan() || cold_ns <= 0.0 {
        return None;
    }
    let floor = DRAM_REF_SHARE * cold_ns;
    for i in 0..points.len() {
        let first = &points[i];
        if first.lat_ns < floor {
            continue;
        }
        let want = first.size_bytes.saturating_mul(DRAM_SPAN_FACTOR);
        let Some(end) = (i..points.len()).find(|&j| points[j].size_bytes >= want) else {
            return None; // not measured that far yet
        };
        let run = &points[i..=end];
        let lo = run.iter().map(|p| p.lat_ns).fold(f64::INFINITY, f64::min);
        let hi = run.iter().map(|p| p.lat_ns).fold(0.0, f64::max);
        if lo >= floor && hi <= DRAM_FLAT * lo {
            return Some(DramPlateau {
                start: i,
                end,
                effective_llc_bytes: i.checked_sub(1).map(|k| points[k].size_bytes),
            });
        }
    }
    None
}

/// A point more than this factor above the plateau's median so far ends the plateau.
pub const PLATEAU_RISE: f64 = 1.3;

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct SweepPoint {
    /// Working-set size in bytes.
    pub size_bytes: usize,
    /// Its latency (p50 of the batches), ns per load.
    pub lat_ns: f64,
    pub id: String,
}

/// A plateau found in a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Model key (`l1_lat_ns`, ..., `mem_lat_ns`).
    pub key: String,
    /// Median latency of its points.
    pub value_ns: f64,
    /// Window of sizes used: [lo, hi] bytes (hi = usize::MAX for memory).
    pub window: (usize, usize),
    /// Measurement ids of the points used.
    pub ids: Vec<String>,
}

/// Finds the plateau of each cache level and of memory. `cache_sizes` are the data or
/// unified cache sizes by level, L1 first. Returns the plateaus found and, for each
/// level without a point in its window, a note why.
pub fn plateaus(points: &[SweepPoint], cache_sizes: &[usize]) -> (Vec<Plateau>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    let mut windows: Vec<(String, usize, usize)> = Vec::new();
    for (i, &c) in cache_sizes.iter().enumerate() {
        let lo = if i == 0 { 0 } else { 2 * cache_sizes[i - 1] };
        windows.push((format!("l{}_lat_ns", i + 1), lo, c / 2));
    }
    if let Some(&llc) = cache_sizes.last() {
        windows.push(("mem_lat_ns".into(), 4 * llc, usize::MAX));
    } else {
        notes.push("cache sizes unknown (no sysfs cache info): no plateau can be placed".into());
    }
    for (key, lo, hi) in windows {
        let mut inside: Vec<&SweepPoint> = points
            .iter()
            .filter(|p| p.size_bytes >= lo && p.size_bytes <= hi)
            .collect();
        inside.sort_by_key(|p| p.size_bytes);
        if inside.is_empty() {
            notes.push(format!(
                "{key}: no sweep point between {} and {} bytes",
                lo,
                if hi == usize::MAX {
                    "any".to_string()
                } else {
                    hi.to_string()
                }
            ));
            continue;
        }
        // The plateau is the run of points from the window's start whose latency stays
        // within PLATEAU_RISE of the run's median: a cache that is effectively smaller
        // than sysfs says (a VM's share, partitioning) ends the run early.
        let mut run: Vec<&SweepPoint> = vec![inside[0]];
        for p in &inside[1..] {
            let lats: Vec<f64> = run.iter().map(|p| p.lat_ns).collect();
            if p.lat_ns > PLATEAU_RISE * median(&lats).expect("non-empty") {
                notes.push(format!(
                    "{key}: latency rises at {} bytes, inside the window that ends at {} bytes: the effective cache is smaller than sysfs reports",
                    p.size_bytes,
                    if hi == usize::MAX { "any".to_string() } else { hi.to_string() }
                ));
                break;
            }
            run.push(p);
        }
        let lats: Vec<f64> = run.iter().map(|p| p.lat_ns).collect();
        found.push(Plateau {
            key,
            value_ns: median(&lats).expect("non-empty"),
            window: (lo, hi),
            ids: run.iter().map(|p| p.id.clone()).collect(),
        });
    }
    (found, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: usize = 1024;
    const M: usize = 1024 * 1024;

    /// A synthetic sweep: a step function with smooth transitions and some noise.
    fn synthetic(caches: &[usize], lats: &[f64], mem: f64) -> Vec<SweepPoint> {
        let mut pts = Vec::new();
        let mut s = 4 * K;
        let mut wiggle = 0.0;
        while s <= 1024 * M {
            let lvl = caches.iter().position(|&c| s <= c);
            let base = match lvl {
                Some(i) => lats[i],
                None => mem,
            };
            // Transition: half-way to the next level just above a boundary.
            let bump = caches.iter().position(|&c| s > c && s < 2 * c).map(|i| {
                let next = if i + 1 < lats.len() { lats[i + 1] } else { mem };
                (next - lats[i]) * -0.5
            });
            wiggle = if wiggle > 0.0 { -0.01 } else { 0.01 };
            pts.push(SweepPoint {
                size_bytes: s,
                lat_ns: base + bump.unwrap_or(0.0) + wiggle,
                id: format!("p{s}"),
            });
            s *= 2;
        }
        pts
    }

    #[test]
    fn finds_each_level_on_a_synthetic_sweep() {
        let caches = [32 * K, 512 * K, 32 * M];
        let pts = synthetic(&caches, &[1.0, 3.5, 12.0], 147.0);
        let (found, notes) = plateaus(&pts, &caches);
        assert!(notes.is_empty(), "{notes:?}");
        let get = |k: &str| found.iter().find(|p| p.key == k).unwrap().value_ns;
        assert!((get("l1_lat_ns") - 1.0).abs() < 0.05);
        assert!((get("l2_lat_ns") - 3.5).abs() < 0.05);
        assert!((get("l3_lat_ns") - 12.0).abs() < 0.05);
        assert!((get("mem_lat_ns") - 147.0).abs() < 0.05);
        let mem = found.iter().find(|p| p.key == "mem_lat_ns").unwrap();
        assert!(mem
            .ids
            .iter()
            .all(|id| id.trim_start_matches('p').parse::<usize>().unwrap() >= 128 * M));
    }

    #[test]
    fn intel_like_hierarchy() {
        let caches = [48 * K, 2 * M, 260 * M];
        let pts = synthetic(&caches, &[1.7, 5.5, 30.0], 108.0);
        let (found, notes) = plateaus(&pts, &caches);
        // 4 x 260 MiB = 1040 MiB: a sweep that stops at 1 GiB cannot give mem_lat_ns.
        assert!(found.iter().all(|p| p.key != "mem_lat_ns"));
        assert!(notes.iter().any(|n| n.contains("mem_lat_ns")), "{notes:?}");
        let l3 = found.iter().find(|p| p.key == "l3_lat_ns").unwrap();
        assert!((l3.value_ns - 30.0).abs() < 0.05);
    }

    #[test]
    fn effectively_smaller_cache_ends_the_plateau_early() {
        // sysfs says 32 MiB of L3, but only ~4 MiB behaves as cache (a VM's share).
        let caches = [32 * K, 512 * K, 32 * M];
        let mut pts = synthetic(&[32 * K, 512 * K, 4 * M], &[1.0, 3.5, 14.0], 85.0);
        pts.retain(|p| p.size_bytes <= 256 * M);
        let (found, notes) = plateaus(&pts, &caches);
        let l3 = found.iter().find(|p| p.key == "l3_lat_ns").unwrap();
        assert!((l3.value_ns - 14.0).abs() < 0.05, "{}", l3.value_ns);
        assert!(l3
            .ids
            .iter()
            .all(|id| id.trim_start_matches('p').parse::<usize>().unwrap() <= 4 * M));
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("l3_lat_ns: latency rises")),
            "{notes:?}"
        );
    }

    fn pts(v: &[(usize, f64)]) -> Vec<SweepPoint> {
        v.iter()
            .map(|&(s, l)| SweepPoint {
                size_bytes: s,
                lat_ns: l,
                id: format!("p{s}"),
            })
            .collect()
    }

    #[test]
    fn dram_plateau_of_a_vm_whose_l3_is_smaller_than_sysfs() {
        // A measured Intel guest whose L3 is smaller than sysfs says: 4 MiB 33 ns,
        // 16 MiB 52 ns, 32 MiB.. 96-106 ns.
        let sweep = pts(&[
            (M, 6.0),
            (2 * M, 12.0),
            (4 * M, 33.0),
            (8 * M, 41.0),
            (16 * M, 52.0),
            (32 * M, 97.0),
            (64 * M, 101.0),
            (128 * M, 99.0),
        ]);
        let p = dram_plateau(&sweep, 102.0).unwrap();
        assert_eq!(sweep[p.start].size_bytes, 32 * M);
        assert_eq!(sweep[p.end].size_bytes, 128 * M);
        assert_eq!(p.effective_llc_bytes, Some(16 * M));
        // Not yet measured to 4x the start: no verdict.
        assert_eq!(dram_plateau(&sweep[..7], 102.0), None);
    }

    #[test]
    fn a_flat_cache_level_is_not_dram() {
        // A large real L3: flat at 30 ns over 4..128 MiB, DRAM (cold lap) at 110 ns.
        let sweep = pts(&[
            (4 * M, 30.0),
            (16 * M, 31.0),
            (64 * M, 30.5),
            (128 * M, 32.0),
        ]);
        assert_eq!(dram_plateau(&sweep, 110.0), None);
        assert_eq!(dram_plateau(&sweep, 0.0), None, "no reference, no verdict");
    }

    #[test]
    fn a_rising_transition_is_not_a_plateau() {
        // 90% of the reference reached, but still rising by more than DRAM_FLAT.
        let sweep = pts(&[(8 * M, 92.0), (16 * M, 99.0), (32 * M, 105.0)]);
        let p = dram_plateau(&sweep, 100.0);
        assert!(p.is_none(), "{p:?}");
        let sweep = pts(&[
            (8 * M, 92.0),
            (16 * M, 99.0),
            (32 * M, 105.0),
            (64 * M, 106.0),
        ]);
        let p = dram_plateau(&sweep, 100.0).unwrap();
        assert_eq!(sweep[p.start].size_bytes, 16 * M);
    }

    #[test]
    fn no_cache_info_no_plateaus() {
        let pts = synthetic(&[32 * K], &[1.0], 100.0);
        let (found, notes) = plateaus(&pts, &[]);
        assert!(found.is_empty());
        assert_eq!(notes.len(), 1);
    }
}
