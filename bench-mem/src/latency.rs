//! `mem.latency`: idle load latency by pointer chase over a working-set sweep.
//!
//! Method (as multichase and MLC): the working set is a random cyclic chain of lines
//! ([`crate::chase`]); a pinned thread follows it with dependent loads in an unrolled
//! loop. Each timed batch of loads (about 50 us) gives one sample of ns per load, with
//! the timer's overhead subtracted; many batches give the distribution. Sizes run from
//! 4 KiB up to at least 4 x LLC (default 1 GiB or the first sweep size past 4 x LLC),
//! two per octave (one with `--quick`). At the largest size the chase is also run in
//! full-random order: `mem_lat_random_ns`, and their difference `page_walk_ns`.

use crate::chase::{self, ChaseOrder};
use crate::levels::{plateaus, SweepPoint};
use bench_core::bench::{Benchmark, Context, Param, Report, Requirements, Skip};
use bench_core::counters::{self, CounterGroup, MeasurementCounters};
use bench_core::params::{Measurement, ParamInfo, Warning};
use bench_core::stats::Distribution;
use bench_core::target::Region;
use bench_core::units::{format_size, GIB, KIB};
use serde_json::json;
use std::time::{Duration, Instant};

/// Parameters of the latency sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyBench {
    /// Distance between chased lines, bytes (default 64).
    pub stride: usize,
    /// Order of the sweep (default TLB-local, 256 KiB blocks).
    pub order: ChaseOrder,
    /// Smallest working set (default 4 KiB).
    pub min_size: usize,
    /// Largest working set; `None`: max(1 GiB, first sweep size >= 4 x LLC).
    pub max_size: Option<usize>,
    /// Explicit sizes, replacing the geometric sweep.
    pub sizes: Option<Vec<usize>>,
    /// Also measure the largest size in full-random order (page-walk cost).
    pub random_at_max: bool,
}

impl Default for LatencyBench {
    fn default() -> Self {
        LatencyBench {
            stride: 64,
            order: ChaseOrder::DEFAULT,
            min_size: 4 * KIB,
            max_size: None,
            sizes: None,
            random_at_max: true,
        }
    }
}

/// A bad latency parameter (the user's mistake: reported as an error, not a skip).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LatencyParamError {
    /// Stride is not a multiple of the pointer size.
    #[error("stride {0} must be a multiple of 8 bytes and at least 8")]
    Stride(usize),
    /// A size below one line.
    #[error("working-set size {size} is smaller than one line ({stride} bytes)")]
    SizeBelowLine {
        /// The size.
        size: usize,
        /// The stride.
        stride: usize,
    },
    /// min > max.
    #[error("minimum size {min} is above maximum size {max}")]
    Range {
        /// Minimum.
        min: usize,
        /// Maximum.
        max: usize,
    },
    /// TLB locality below the stride.
    #[error("TLB locality {locality} is smaller than the stride {stride}")]
    Locality {
        /// Locality.
        locality: usize,
        /// Stride.
        stride: usize,
    },
}

/// Samples per point are taken for this long (at least [`MIN_BATCHES`] batches).
fn budget(quick: bool) -> Duration {
    if quick {
        Duration::from_millis(40)
    } else {
        Duration::from_millis(250)
    }
}
const MIN_BATCHES: usize = 64;
const BATCH_TARGET_NS: f64 = 50_000.0;
const WARMUP_CAP: usize = 1 << 21;

impl LatencyBench {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), LatencyParamError> {
        if self.stride < 8 || !self.stride.is_multiple_of(8) {
            return Err(LatencyParamError::Stride(self.stride));
        }
        if let ChaseOrder::TlbLocal { locality } = self.order {
            if locality < self.stride {
                return Err(LatencyParamError::Locality {
                    locality,
                    stride: self.stride,
                });
            }
        }
        let mut all: Vec<usize> = vec![self.min_size];
        all.extend(self.max_size);
        all.extend(self.sizes.iter().flatten());
        if let Some(&s) = all.iter().find(|&&s| s < self.stride) {
            return Err(LatencyParamError::SizeBelowLine {
                size: s,
                stride: self.stride,
            });
        }
        if let Some(max) = self.max_size {
            if self.min_size > max {
                return Err(LatencyParamError::Range {
                    min: self.min_size,
                    max,
                });
            }
        }
        Ok(())
    }

    /// The working-set sizes of the sweep, ascending, each a multiple of the stride.
    pub fn sweep_sizes(&self, llc: Option<usize>, quick: bool) -> Vec<usize> {
        let round = |s: usize| (s / self.stride).max(1) * self.stride;
        if let Some(sizes) = &self.sizes {
            let mut v: Vec<usize> = sizes.iter().map(|&s| round(s)).collect();
            v.sort_unstable();
            v.dedup();
            return v;
        }
        let per_octave = if quick { 1 } else { 2 };
        let grid = |k: u32| -> [usize; 2] { [1usize << k, 3usize << (k.max(1) - 1)] };
        // Default largest size: the first sweep point at or past 4 x LLC, and at least
        // 1 GiB (64 MiB when quick: the quick run keeps only what the plateaus need).
        let max = self.max_size.unwrap_or_else(|| {
            let floor = if quick { 64 << 20 } else { GIB };
            let need = llc.map(|l| 4 * l).unwrap_or(0).max(floor);
            (12..48u32)
                .flat_map(|k| grid(k).into_iter().take(per_octave))
                .find(|&s| s >= need)
                .unwrap_or(need)
        });
        let mut v = Vec::new();
        for k in 0..48u32 {
            for s in grid(k).into_iter().take(per_octave) {
                if s >= self.min_size && s <= max {
                    v.push(round(s));
                }
            }
        }
        if v.last() != Some(&round(max)) {
            v.push(round(max));
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    fn measure(
        &self,
        ctx: &Context,
        region: &mut Region,
        size: usize,
        order: ChaseOrder,
    ) -> Result<(Distribution, serde_json::Value, MeasurementCounters), Skip> {
        let n = size / self.stride;
        let next = chase::successors(n, self.stride, order, ctx.seed ^ size as u64);
        let start = chase::write_chain(&mut region.as_mut_slice()[..size], self.stride, &next);
        drop(next);
        let timer = &ctx.timer;
        let round16 = |x: usize| (x / chase::UNROLL).max(1) * chase::UNROLL;
        // SAFETY (all chase calls below): `start` heads the chain just written into the
        // region, which stays mapped and unmodified while we chase.
        let warmup = round16((2 * n).clamp(4096, WARMUP_CAP));
        let mut p = unsafe { chase::chase(start, warmup) };
        // Size the batches to about 50 us.
        let probe = round16(1024);
        let t0 = timer.start();
        p = unsafe { chase::chase(p, probe) };
        let t1 = timer.stop();
        let est = (timer.elapsed_ns(t0, t1) / probe as f64).max(0.1);
        let batch = round16(((BATCH_TARGET_NS / est) as usize).clamp(64, 1 << 16));
        // Counters around the whole sampling loop: a context switch, migration or page
        // fault in it flags the point and repeats it (bench_core::counters).
        let mut samples: Vec<f64> = Vec::with_capacity(8192);
        samples.resize(8192, 0.0); // touch the pages now, not inside the counted loop
        let mut group = CounterGroup::open_with_timer(timer);
        let (samples, counters) = counters::measure_undisturbed(
            &mut group,
            counters::DEFAULT_MAX_ATTEMPTS,
            &mut (samples, p),
            |(samples, p)| {
                samples.clear();
                let deadline = Instant::now() + budget(ctx.quick);
                while samples.len() < MIN_BATCHES || Instant::now() < deadline {
                    let a = timer.start();
                    *p = unsafe { chase::chase(*p, batch) };
                    let b = timer.stop();
                    samples.push(timer.elapsed_ns(a, b) / batch as f64);
                    if samples.len() >= 200_000 {
                        break;
                    }
                }
            },
            |(samples, p)| {
                std::hint::black_box(*p);
                samples.clone()
            },
        );
        let counters = counters.with_per_op("load", (batch * samples.len()) as u64);
        let d = Distribution::from_samples(&samples)
            .ok_or_else(|| Skip::new(format!("no valid samples at {size} bytes")))?;
        let mut params = json!({
            "size_bytes": size,
            "stride_bytes": self.stride,
            "loads_per_batch": batch,
            "batches": samples.len(),
            "warmup_loads": warmup,
            "seed": ctx.seed ^ size as u64,
            "cpu": ctx.cpus.first(),
            "page_size_bytes": region.placement().page_size_bytes,
        });
        if let (Some(o), Some(extra)) = (params.as_object_mut(), order.describe().as_object()) {
            o.extend(extra.clone());
        }
        Ok((d, params, counters))
    }
}

impl Benchmark for LatencyBench {
    fn name(&self) -> &'static str {
        "mem.latency"
    }

    fn description(&self) -> &'static str {
        "idle load latency by dependent pointer chase over a working-set sweep"
    }

    fn parameters(&self) -> serde_json::Value {
        let mut v = json!({
            "stride_bytes": self.stride,
            "min_size_bytes": self.min_size,
            "max_size_bytes": self.max_size,
            "random_at_max": self.random_at_max,
        });
        if let (Some(o), Some(extra)) = (v.as_object_mut(), self.order.describe().as_object()) {
            o.extend(extra.clone());
        }
        v
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context) -> usize {
        self.sweep_sizes(ctx.topology.llc_bytes(), ctx.quick)
            .last()
            .copied()
            .unwrap_or(self.min_size)
    }

    fn run(&self, ctx: &Context, region: &mut Region) -> Result<Report, Skip> {
        self.validate().map_err(|e| Skip::new(e.to_string()))?;
        if let Some(&cpu) = ctx.cpus.first() {
            bench_core::pin::pin_current(cpu).map_err(|e| Skip::new(e.to_string()))?;
        }
        let target = region.spec().to_string();
        let placement = region.placement().clone();
        let sizes = self.sweep_sizes(ctx.topology.llc_bytes(), ctx.quick);
        let mut report = Report::default();
        let mut points = Vec::new();
        let method = |order: ChaseOrder| {
            format!(
                "dependent pointer chase, {} order, {}-byte stride, {}-load unrolled loop; p50 of ~50 us batches of ns/load, timer overhead subtracted",
                order.name(),
                self.stride,
                chase::UNROLL
            )
        };
        for &size in &sizes {
            if size > region.len() {
                report.warnings.push(Warning {
                    code: "latency_size".into(),
                    message: format!(
                        "{target}: region of {} bytes too small for {size}",
                        region.len()
                    ),
                    remediation: "use a larger target or a smaller --max-size".into(),
                });
                continue;
            }
            let (d, params, counters) = self.measure(ctx, region, size, self.order)?;
            ctx.progress(&format!(
                "mem.latency {target} {:>6}: {:8.2} ns{}",
                format_size(size),
                d.p50,
                counters.summary()
            ));
            let id = format!(
                "mem.latency/{target}/{}/{}",
                self.order.name(),
                format_size(size)
            );
            points.push(SweepPoint {
                size_bytes: size,
                lat_ns: d.p50,
                id: id.clone(),
            });
            report.measurements.push(Measurement {
                id,
                benchmark: self.name().into(),
                target: target.clone(),
                parameters: params,
                unit: "ns".into(),
                method: method(self.order),
                distribution: d,
                placement: Some(placement.clone()),
                counters: Some(counters),
            });
        }
        let caches: Vec<usize> = (1..=4)
            .filter_map(|l| ctx.topology.cache_bytes(l))
            .collect();
        let (found, notes) = plateaus(&points, &caches);
        for note in notes {
            if self.sizes.is_some() && note.contains("no sweep point") {
                continue; // explicit sizes: levels without a point are the user's choice
            }
            let remediation = if note.contains("latency rises") {
                "none needed: the value comes from the points before the rise"
            } else {
                "widen the sweep with --max-size/--min-size"
            };
            report.warnings.push(Warning {
                code: "latency_plateau".into(),
                message: format!("{target}: {note}"),
                remediation: remediation.into(),
            });
        }
        let mut mem_local = None;
        for p in found {
            if p.key == "mem_lat_ns" {
                mem_local = Some(p.value_ns);
            }
            let hi = if p.window.1 == usize::MAX {
                "up".to_string()
            } else {
                format!("to {}", format_size(p.window.1))
            };
            report.params.push(Param {
                key: p.key.clone(),
                value: p.value_ns,
                info: ParamInfo {
                    unit: "ns".into(),
                    target: target.clone(),
                    method: format!(
                        "median of the p50 latencies of {} sweep points from {} {hi} ({} order)",
                        p.ids.len(),
                        format_size(p.window.0),
                        self.order.name()
                    ),
                    from: p.ids,
                },
            });
        }
        if self.random_at_max && self.order != ChaseOrder::Random {
            if let Some(&size) = sizes.iter().rev().find(|&&s| s <= region.len()) {
                let (d, params, counters) = self.measure(ctx, region, size, ChaseOrder::Random)?;
                ctx.progress(&format!(
                    "mem.latency {target} {:>6}: {:8.2} ns (full random)",
                    format_size(size),
                    d.p50
                ));
                let id = format!("mem.latency/{target}/random/{}", format_size(size));
                let value = d.p50;
                report.measurements.push(Measurement {
                    id: id.clone(),
                    benchmark: self.name().into(),
                    target: target.clone(),
                    parameters: params,
                    unit: "ns".into(),
                    method: method(ChaseOrder::Random),
                    distribution: d,
                    placement: Some(placement.clone()),
                    counters: Some(counters),
                });
                let llc = ctx.topology.llc_bytes().unwrap_or(0);
                if size >= 4 * llc {
                    report.params.push(Param {
                        key: "mem_lat_random_ns".into(),
                        value,
                        info: ParamInfo {
                            unit: "ns".into(),
                            target: target.clone(),
                            method: format!(
                                "p50 latency of a full-random chase over {} (page walks included)",
                                format_size(size)
                            ),
                            from: vec![id.clone()],
                        },
                    });
                    if let Some(local) = mem_local {
                        report.params.push(Param {
                            key: "page_walk_ns".into(),
                            value: (value - local).max(0.0),
                            info: ParamInfo {
                                unit: "ns".into(),
                                target: target.clone(),
                                method: "mem_lat_random_ns - mem_lat_ns: the added cost of TLB misses per load at the largest size".into(),
                                from: vec![id],
                            },
                        });
                    }
                }
            }
        }
        if let Some(w) = &placement.warning {
            report.warnings.push(Warning {
                code: "placement".into(),
                message: format!("{target}: {w}"),
                remediation: String::new(),
            });
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::target::TargetSpec;

    const M: usize = 1024 * 1024;

    #[test]
    fn sweep_reaches_four_times_llc() {
        let b = LatencyBench::default();
        let s = b.sweep_sizes(Some(32 * M), false);
        assert_eq!(s[0], 4096);
        assert_eq!(*s.last().unwrap(), GIB);
        assert!(s.contains(&(6 * 1024)), "two points per octave");
        // Intel-like 260 MiB LLC: 4x = 1040 MiB, so the sweep goes past 1 GiB.
        let s = b.sweep_sizes(Some(260 * M), false);
        assert!(*s.last().unwrap() >= 1040 * M, "{}", s.last().unwrap());
        let q = b.sweep_sizes(Some(32 * M), true);
        assert!(!q.contains(&(6 * 1024)), "one point per octave when quick");
        assert!(*q.last().unwrap() >= 128 * M);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn explicit_sizes_are_rounded_to_lines() {
        let b = LatencyBench {
            sizes: Some(vec![100, 64 * 1024, 4096]),
            ..Default::default()
        };
        assert_eq!(b.sweep_sizes(None, false), vec![64, 4096, 65536]);
    }

    #[test]
    fn bad_parameters_are_named() {
        let b = LatencyBench {
            min_size: 32,
            ..Default::default()
        };
        assert_eq!(
            b.validate().unwrap_err().to_string(),
            "working-set size 32 is smaller than one line (64 bytes)"
        );
        let b = LatencyBench {
            stride: 12,
            ..Default::default()
        };
        assert!(b.validate().is_err());
    }

    #[test]
    fn small_sweep_produces_measurements_and_l1() {
        let ctx = Context {
            cpus: bench_core::pin::allowed_cpus()[..1].to_vec(),
            ..Context::quick_local()
        };
        let b = LatencyBench {
            sizes: Some(vec![4096, 8192]),
            random_at_max: false,
            ..Default::default()
        };
        let mut r =
            bench_core::target::Region::allocate(&TargetSpec::Anon, 8192, &ctx.topology).unwrap();
        let rep = b.run(&ctx, &mut r).unwrap();
        assert_eq!(rep.measurements.len(), 2);
        for m in &rep.measurements {
            assert!(m.distribution.n >= MIN_BATCHES as u64);
            assert!(m.distribution.p50 > 0.0);
        }
        if ctx
            .topology
            .cache_bytes(1)
            .is_some_and(|l1| l1 >= 16 * 1024)
        {
            assert!(rep.params.iter().any(|p| p.key == "l1_lat_ns"));
        }
    }
}
