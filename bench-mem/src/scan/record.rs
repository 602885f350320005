//! What a scan records: one measurement per kernel (its distribution over the ranges'
//! figures, its parameters' `scan` every range with what backs it and how the rule judged
//! it), the keys, and a warning listing the slow ranges with their backing.

use super::backing::{self, Named};
use super::measure::{self, RangeRun};
use super::outliers::{self, Verdict};
use super::plan::Layout;
use super::NAME;
use crate::kernels::{self, Isa, Kernel};
use bench_core::bench::{Param, Report};
use bench_core::crew::WindowPlan;
use bench_core::keys::parameters;
use bench_core::memory::Placement;
use bench_core::params::{Measurement, Warning};
use bench_core::stats::Distribution;
use bench_core::units::{format_size, human_bytes};
use serde_json::{json, Value};

/// Most slow ranges a warning names one by one.
const NAMED_IN_WARNING: usize = 8;

/// The keys of a kernel: (its least range, its median range).
fn keys(k: Kernel) -> (&'static str, &'static str) {
    match k {
        Kernel::NtWrite => ("scan_nt_write_bw_min_gbs", "scan_nt_write_bw_median_gbs"),
        _ => ("scan_bw_min_gbs", "scan_bw_median_gbs"),
    }
}

/// A finished scan on one target.
pub struct Scanned<'a> {
    /// The target.
    pub target: String,
    /// Its ranges.
    pub layout: &'a Layout,
    /// The DRAM working set of the CPUs.
    pub working_set_bytes: usize,
    /// The CPUs that scanned.
    pub cpus: &'a [usize],
    /// The ISA of the kernels.
    pub isa: Isa,
    /// The windows of each range.
    pub window: WindowPlan,
    /// What backs each range.
    pub names: &'a [Named],
    /// The region's placement.
    pub placement: Placement,
}

impl Scanned<'_> {
    fn id(&self, k: Kernel) -> String {
        format!("{NAME}/{}/{}", self.target, k.name())
    }

    /// The measurements, keys and warnings of the ranges `runs` measured, per kernel.
    pub fn report(&self, runs: &[(Kernel, Vec<RangeRun>)], rep: &mut Report) {
        let mut slow_any: Vec<usize> = Vec::new();
        let mut judged_all = true;
        let mut ids = Vec::new();
        let mut noisy = 0;
        for (k, v) in runs {
            let figures: Vec<_> = v.iter().map(RangeRun::figure).collect();
            let verdict = outliers::judge(&figures);
            judged_all &= verdict.not_applied.is_none();
            slow_any.extend(verdict.slow());
            noisy += v.iter().filter(|r| r.noisy.is_some()).count();
            self.record(*k, v, &verdict, rep);
            ids.push(self.id(*k));
        }
        slow_any.sort_unstable();
        slow_any.dedup();
        if judged_all && !runs.is_empty() {
            // A noisy range is never called slow: a count that left some out says so.
            let why = (noisy > 0).then(|| {
                format!("{noisy} range figure(s) stand on disturbed windows only and were not judged slow")
            });
            rep.params.push(
                Param::new(
                    "scan_slow_ranges",
                    slow_any.len() as f64,
                    &self.target,
                    format!(
                        "ranges slow in reads or non-temporal writes (of {} ranges of {}): {}",
                        self.layout.ranges,
                        format_size(self.layout.range_bytes),
                        outliers::RULE
                    ),
                    ids,
                )
                .noisy(why),
            );
        }
        if self.layout.below_working_set {
            rep.warnings.push(Warning {
                code: "scan_range_in_cache".into(),
                message: format!(
                    "{}: ranges of {} are smaller than the DRAM working set of the scan's {} CPU(s) ({}): a range may be streamed from the caches",
                    self.target,
                    format_size(self.layout.range_bytes),
                    self.cpus.len(),
                    human_bytes(self.working_set_bytes as u64)
                ),
                remediation: "give a larger --range (or let the default size it)".into(),
            });
        }
    }

    /// One kernel's measurement, keys and warnings.
    fn record(&self, k: Kernel, v: &[RangeRun], verdict: &Verdict, rep: &mut Report) {
        let id = self.id(k);
        let gbs: Vec<f64> = v.iter().map(|r| r.gbs).collect();
        let Some(d) = Distribution::from_samples(&gbs) else {
            return;
        };
        let noisy: Vec<usize> = (0..v.len()).filter(|&i| v[i].noisy.is_some()).collect();
        let method = format!(
            "{} by {} pinned thread(s) over each of {} ranges of {} in turn (each thread its own slice of the range, in parts of about 0.1 ms), each range measured by the crew's windows of {} ms: its figure is the p50 of its undisturbed windows' aggregates (the bytes all threads moved in the time all ran / that time); the distribution is over the ranges' figures (min = the slowest range, p50 = the median range); {}; GB = 1e9 B",
            k.name(),
            self.cpus.len(),
            v.len(),
            format_size(self.layout.range_bytes),
            self.window.window.as_millis(),
            outliers::RULE
        );
        let parameters = json!({
            "kernel": k.name(), "isa": self.isa.name(), "vector_bytes": self.isa.width_bytes(),
            "store": kernels::store_instruction(k, self.isa),
            "threads": self.cpus.len(), "cpus": self.cpus,
            "bytes_counted": "touched",
            "crew": {
                "window_ms": self.window.window.as_secs_f64() * 1e3,
                "windows_wanted": self.window.windows,
                "max_windows": self.window.max_windows,
            },
            (parameters::SCAN): self.scan_json(v, verdict),
        });
        rep.measurements.push(Measurement {
            id: id.clone(),
            benchmark: NAME.into(),
            target: self.target.clone(),
            parameters,
            unit: "GB/s".into(),
            method,
            distribution: d.clone(),
            placement: Some(self.placement.clone()),
            counters: Some(measure::counters_of(v)),
        });
        let noisy_why = (!noisy.is_empty()).then(|| {
            format!(
                "{} of {} ranges stand on disturbed windows only (first: range {})",
                noisy.len(),
                v.len(),
                noisy[0]
            )
        });
        let (min_key, median_key) = keys(k);
        let slowest = (0..v.len())
            .min_by(|&a, &b| v[a].gbs.total_cmp(&v[b].gbs))
            .unwrap_or(0);
        rep.params.push(
            Param::new(
                min_key,
                d.min,
                &self.target,
                format!(
                    "the slowest of {} ranges of {} ({}: range {slowest}, {}), each the p50 of its windows",
                    v.len(),
                    format_size(self.layout.range_bytes),
                    k.name(),
                    backing::describe(&self.names[slowest])
                ),
                vec![id.clone()],
            )
            .noisy(v[slowest].noisy.clone()),
        );
        rep.params.push(
            Param::new(
                median_key,
                verdict.median_gbs,
                &self.target,
                format!(
                    "the median of {} ranges of {} ({}), each the p50 of its windows",
                    v.len(),
                    format_size(self.layout.range_bytes),
                    k.name()
                ),
                vec![id.clone()],
            )
            .noisy(noisy_why.clone().filter(|_| noisy.len() * 2 > v.len())),
        );
        rep.warnings
            .extend(self.warnings(k, v, verdict, &id, noisy_why));
    }

    /// `scan` of a kernel's measurement: the layout, the rule and every range.
    fn scan_json(&self, v: &[RangeRun], verdict: &Verdict) -> Value {
        let ranges: Vec<Value> = v
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut o = backing::to_json(&self.names[i]);
                let j = verdict.ranges.get(i);
                let add = json!({
                    "index": i,
                    "offset_bytes": i * self.layout.range_bytes,
                    "bytes": self.layout.range_bytes,
                    "gbs": round3(r.gbs),
                    "spread_gbs": round3(r.spread_gbs),
                    "windows_gbs": r.windows_gbs.iter().map(|x| round3(*x)).collect::<Vec<_>>(),
                    "windows_run": r.windows_run,
                    "noisy": r.noisy,
                    "margin_gbs": j.map(|j| round3(j.margin_gbs)),
                    "below_median_gbs": j.map(|j| round3(j.below_gbs)),
                    "slow": j.is_some_and(|j| j.slow),
                });
                if let (Some(o), Some(a)) = (o.as_object_mut(), add.as_object()) {
                    for (k, x) in a {
                        o.insert(k.clone(), x.clone());
                    }
                }
                o
            })
            .collect();
        json!({
            "range_bytes": self.layout.range_bytes,
            "range_count": self.layout.ranges,
            "region_bytes": self.layout.region_bytes(),
            "layout": self.layout.why,
            "working_set_bytes": self.working_set_bytes,
            "below_working_set": self.layout.below_working_set,
            "rule": outliers::RULE,
            "statistics_over": verdict.over,
            "median_gbs": round3(verdict.median_gbs),
            "mad_gbs": round3(verdict.mad_gbs),
            "sigma_gbs": round3(verdict.sigma_gbs),
            "floor_gbs": round3(verdict.floor_gbs),
            "not_applied": verdict.not_applied,
            "slow": verdict.slow(),
            "ranges": ranges,
        })
    }

    /// The slow ranges with what backs them, too few ranges to judge, noisy ranges.
    fn warnings(
        &self,
        k: Kernel,
        v: &[RangeRun],
        verdict: &Verdict,
        id: &str,
        noisy: Option<String>,
    ) -> Vec<Warning> {
        let mut out = Vec::new();
        let slow = verdict.slow();
        if !slow.is_empty() {
            let listed: Vec<String> = slow
                .iter()
                .take(NAMED_IN_WARNING)
                .map(|&i| {
                    let n = &self.names[i];
                    let at = match &n.physical {
                        Ok(p) => format!(" at {:#x}", p.first),
                        Err(_) => String::new(),
                    };
                    format!(
                        "range {i} (offset {}{at}, {}) {:.2} GB/s, {:.2} below the median (margin {:.2}): {}",
                        format_size(i * self.layout.range_bytes),
                        backing::block_list(&n.blocks),
                        v[i].gbs,
                        verdict.ranges[i].below_gbs,
                        verdict.ranges[i].margin_gbs,
                        backing::describe(n)
                    )
                })
                .collect();
            let more = slow.len().saturating_sub(NAMED_IN_WARNING);
            out.push(Warning {
                code: "scan_slow_ranges".into(),
                message: format!(
                    "{}: {id}: {} of {} ranges are slower than the median {:.2} GB/s by more than the run's noise: {}{}",
                    self.target,
                    slow.len(),
                    v.len(),
                    verdict.median_gbs,
                    listed.join("; "),
                    if more > 0 { format!("; and {more} more (the measurement's scan.slow)") } else { String::new() }
                ),
                remediation: "compare what backs the slow ranges with the others (the memory devices' PCIe links and interleave, `cxlchar targets`; EDAC error counts of their DIMMs), and rerun: a range slow in one run only is noise".into(),
            });
        }
        if let Some(why) = &verdict.not_applied {
            out.push(Warning {
                code: "scan_few_ranges".into(),
                message: format!("{}: {id}: no range judged slow or not: {why}", self.target),
                remediation: "scan more ranges: a larger --size or a smaller --range".into(),
            });
        }
        if let Some(why) = noisy {
            out.push(Warning {
                code: "noisy".into(),
                message: format!("{}: {id} ({}): {why}; such ranges are never called slow", self.target, k.name()),
                remediation: "rerun on a quiet machine (no other load on the measuring CPUs; on a VM, pinned vCPUs without overcommit)".into(),
            });
        }
        out
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
