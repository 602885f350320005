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

/// A point more than this factor above the plateau's median so far ends the plateau.
pub const PLATEAU_RISE: f64 = 1.3;

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// Working-set size in bytes.
    pub size_bytes: usize,
    /// Its latency (p50 of the batches), ns per load.
    pub lat_ns: f64,
    /// Id of its measurement.
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

    #[test]
    fn no_cache_info_no_plateaus() {
        let pts = synthetic(&[32 * K], &[1.0], 100.0);
        let (found, notes) = plateaus(&pts, &[]);
        assert!(found.is_empty());
        assert_eq!(notes.len(), 1);
    }
}
