//! The `mem.bandwidth` charts, split so that every point is read against its own axis:
//! * `bandwidth.svg` ([`render_sweeps`]): p50 vs working-set size of each size sweep (a
//!   kernel, thread count and target measured at two or more sizes besides its DRAM
//!   check's: the 1-thread read sweep through the cache levels to DRAM, or every kernel
//!   of a `--sizes` run), one line each;
//! * `bandwidth-kernels.svg` ([`render_kernels`]): p50 per kernel with 1 thread and all
//!   threads at the DRAM footprint (the point the keys report: `mem_bw_1t_gbs`,
//!   `mem_bw_gbs`, `mem_write_bw_gbs`, ...), grouped bars, one per thread count and target.
//!
//! The bulk-synchronous companions (`<id>/bulk-sync`) are in neither: each is the same
//! run's other figure, in the measurements.

use anyhow::Result;
use bench_core::keys::parameters::{KERNEL, SIZE_BYTES, THREADS};
use bench_core::params::{Measurement, ParamsFile};
use std::collections::{BTreeMap, BTreeSet};

use super::bars::{render_bars, BarChart, BarGroup};
use super::data::{num, text, unit_of, Series, Stroke};
use super::lines::{render_lines, spans_decades, LineChart};

/// The kernels in the order the bars show them (any other after them, by name).
const KERNEL_ORDER: [&str; 6] = ["read", "write", "nt-write", "copy", "nt-copy", "memset"];

/// (kernel, threads, target) of a point: one curve of the old chart.
type GroupKey = (String, Option<u64>, String);

fn kernel(m: &Measurement) -> String {
    text(m, KERNEL).unwrap_or_else(|| m.benchmark.clone())
}

fn threads(m: &Measurement) -> Option<u64> {
    num(m, THREADS).map(|t| t as u64)
}

fn size(m: &Measurement) -> Option<u64> {
    num(m, SIZE_BYTES).map(|s| s as u64)
}

/// The measurements of each chart.
pub(super) struct Split<'a> {
    /// The points of the size sweeps (with their DRAM check's points).
    pub sweeps: Vec<&'a Measurement>,
    /// One point per (kernel, threads, target) at its DRAM footprint.
    pub kernels: Vec<&'a Measurement>,
    /// Every point of `kernels` is one a key reports (the DRAM footprint's), not the
    /// only size of a run without keys (`mem bandwidth --sizes`).
    pub reported: bool,
}

/// Splits `ms` (the file's `mem.bandwidth` measurements) into the two charts' points:
/// a (kernel, threads, target) measured at two or more sizes that are not DRAM-check
/// points is a sweep; the point of each (kernel, threads, target) at its DRAM footprint
/// is the largest a key of the file stands on, else its only size's first point (a
/// sweep without keys has none).
pub(super) fn split<'a>(f: &ParamsFile, ms: &[&'a Measurement]) -> Split<'a> {
    let check_ids: BTreeSet<&str> = f
        .dram_check
        .iter()
        .flat_map(|c| c.points.iter().filter_map(|p| p.id.as_deref()))
        .collect();
    let key_ids: BTreeSet<&str> = f
        .param_info
        .values()
        .flat_map(|i| i.from.iter().map(String::as_str))
        .collect();
    let mut groups: BTreeMap<GroupKey, Vec<&'a Measurement>> = BTreeMap::new();
    for m in ms.iter().copied().filter(|m| !m.id.ends_with("/bulk-sync")) {
        groups
            .entry((kernel(m), threads(m), m.target.clone()))
            .or_default()
            .push(m);
    }
    let mut out = Split {
        sweeps: vec![],
        kernels: vec![],
        reported: true,
    };
    for pts in groups.values() {
        let own_sizes: BTreeSet<Option<u64>> = pts
            .iter()
            .filter(|m| !check_ids.contains(m.id.as_str()))
            .map(|m| size(m))
            .collect();
        let sweep = own_sizes.iter().flatten().count() >= 2;
        if sweep {
            out.sweeps.extend(pts.iter().copied());
        }
        let reported = pts
            .iter()
            .copied()
            .filter(|m| key_ids.contains(m.id.as_str()))
            .max_by_key(|m| size(m));
        let only = (!sweep)
            .then(|| {
                pts.iter()
                    .copied()
                    .find(|m| !check_ids.contains(m.id.as_str()))
            })
            .flatten();
        out.reported &= reported.is_some() || only.is_none();
        if let Some(m) = reported.or(only) {
            out.kernels.push(m);
        }
    }
    out
}

/// `bandwidth.svg`: each sweep vs size; a size measured more than once (a DRAM check's
/// repeated pass) at the mean of its passes. `None` when nothing can be drawn.
pub(super) fn render_sweeps(
    ms: &[&Measurement],
    caches: &[(f64, String)],
) -> Result<Option<String>> {
    let mut by: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for m in ms {
        let Some(s) = size(m) else { continue };
        let name = match threads(m) {
            Some(t) => format!("{} {t}t ({})", kernel(m), m.target),
            None => format!("{} ({})", kernel(m), m.target),
        };
        by.entry(name)
            .or_default()
            .entry(s)
            .or_default()
            .push(m.distribution.p50);
    }
    let series: Vec<Series> = by
        .into_iter()
        .map(|(name, at)| Series {
            name,
            points: at
                .into_iter()
                .map(|(s, v)| (s as f64, v.iter().sum::<f64>() / v.len() as f64))
                .collect(),
            stroke: Stroke::Solid,
            color: None,
        })
        .collect();
    render_lines(
        &LineChart {
            title: "Bandwidth vs working-set size (p50)".into(),
            x_desc: "size",
            y_desc: format!("bandwidth ({})", unit_of(ms)),
            log_x: true,
            // L1 to DRAM spans decades: a linear axis squashes DRAM to the floor.
            log_y: spans_decades(&series),
            size_x: true,
            marks: caches.to_vec(),
            zero_y: false,
            widen_to_marks: true,
        },
        &series,
    )
}

/// The rank of a kernel in [`KERNEL_ORDER`] (others after, by name).
fn kernel_rank(k: &str) -> (usize, String) {
    (
        KERNEL_ORDER
            .iter()
            .position(|o| *o == k)
            .unwrap_or(KERNEL_ORDER.len()),
        k.to_string(),
    )
}

/// `bandwidth-kernels.svg`: a group of bars per kernel, a bar per (threads, target);
/// `at_dram`: the points are the DRAM footprint's ([`Split::reported`]). `None` when
/// nothing can be drawn.
pub(super) fn render_kernels(ms: &[&Measurement], at_dram: bool) -> Result<Option<String>> {
    let mut kernels: Vec<String> = ms.iter().map(|m| kernel(m)).collect();
    kernels.sort_by_key(|k| kernel_rank(k));
    kernels.dedup();
    // Bars by target, then thread count.
    let mut bars: Vec<(String, Option<u64>)> =
        ms.iter().map(|m| (m.target.clone(), threads(m))).collect();
    bars.sort();
    bars.dedup();
    let one_target = bars.iter().all(|(t, _)| *t == bars[0].0);
    let mut targets: Vec<&str> = bars.iter().map(|(t, _)| t.as_str()).collect();
    targets.dedup();
    let groups: Vec<BarGroup> = bars
        .iter()
        .map(|(target, t)| {
            let who = match t {
                Some(1) => "1 thread".to_string(),
                Some(n) => format!("{n} threads"),
                None => "threads not recorded".to_string(),
            };
            BarGroup {
                name: if one_target {
                    who
                } else {
                    format!("{who} ({target})")
                },
                values: kernels
                    .iter()
                    .map(|k| {
                        ms.iter()
                            .find(|m| kernel(m) == *k && m.target == *target && threads(m) == *t)
                            .map(|m| m.distribution.p50)
                    })
                    .collect(),
                // One colour per target: its 1-thread bar light, its all-thread one full.
                color: targets.iter().position(|x| x == target).unwrap_or(0),
                light: *t == Some(1) && bars.iter().any(|(x, n)| x == target && *n != Some(1)),
            }
        })
        .collect();
    let at = if at_dram {
        "at the DRAM footprint"
    } else {
        "at its measured size"
    };
    let title = if one_target {
        format!("Bandwidth per kernel {at}, {} (p50)", bars[0].0)
    } else {
        format!("Bandwidth per kernel {at} (p50)")
    };
    render_bars(
        &BarChart {
            title,
            y_desc: format!("bandwidth ({})", unit_of(ms)),
            categories: kernels,
        },
        &groups,
    )
}
