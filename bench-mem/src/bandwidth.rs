//! `mem.bandwidth`: read, write, non-temporal write, copy, non-temporal copy and memset
//! bandwidth over a size sweep, one thread and all threads.
//!
//! Conventions (as STREAM and likwid-bench): GB = 10^9 bytes; a copy's bytes are the bytes
//! read plus the bytes written (its footprint); a sample is one or more passes over each
//! thread's slice, timed per thread with the cycle timer, and the sample's bandwidth is the
//! total bytes over the slowest thread's time. Points: one per cache level (L1/2, L2/2, a
//! size inside L3) and DRAM (>= 4 x LLC) with one thread, plus DRAM with every `--cpu`; in
//! a full run also a sweep of powers of four from 16 KiB to DRAM.

use crate::kernels::{self, Isa, IsaSet, Kernel};
use crate::lockstep::{gbs, lockstep, Budget};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::counters::MeasurementCounters;
use bench_core::params::{Measurement, Warning};
use bench_core::stats::Distribution;
use bench_core::target::{Region, TargetSpec};
use bench_core::units::parse_positive_size;
use bench_core::units::{format_size, KIB, MIB};
use serde_json::json;

/// Parameters of the bandwidth benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthBench {
    /// Kernels to run (default: all).
    pub kernels: Vec<Kernel>,
    /// Forced ISA (`None`: the widest the CPU has).
    pub isa: Option<Isa>,
    /// Threads of the multi-thread DRAM point (`None`: one per `--cpu`).
    pub threads: Option<usize>,
    /// Explicit footprints (bytes), replacing the default points.
    pub sizes: Option<Vec<usize>>,
}

impl Default for BandwidthBench {
    fn default() -> Self {
        BandwidthBench {
            kernels: Kernel::ALL.to_vec(),
            isa: None,
            threads: None,
            sizes: None,
        }
    }
}

/// A bad bandwidth parameter (an error, not a skip).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BandwidthParamError {
    /// The forced ISA is not supported.
    #[error(transparent)]
    Isa(#[from] kernels::IsaError),
    /// More threads than CPUs.
    #[error("{threads} threads requested but only {cpus} CPUs are allowed (--cpu)")]
    Threads {
        /// Requested.
        threads: usize,
        /// Available.
        cpus: usize,
    },
    /// A size below one vector.
    #[error("size {size} is below one {isa} vector ({width} bytes) per thread")]
    Size {
        /// The size.
        size: usize,
        /// The ISA.
        isa: Isa,
        /// Its width.
        width: usize,
    },
}

/// One point of the plan: kernel, footprint, threads, and the keys it yields (two when
/// the all-threads point is the single-thread point: one CPU).
#[derive(Debug, Clone, PartialEq)]
struct Point {
    kernel: Kernel,
    size: usize,
    threads: usize,
    keys: Vec<String>,
}

fn dram_key(k: Kernel) -> &'static str {
    match k {
        Kernel::Read => "mem_bw",
        Kernel::Write => "mem_write_bw",
        Kernel::NtWrite => "nt_write_bw",
        Kernel::Copy => "copy_bw",
        Kernel::NtCopy => "nt_copy_bw",
        Kernel::Memset => "memset_bw",
    }
}

impl BandwidthBench {
    /// Checks the parameters against the CPU and the allowed CPUs.
    pub fn validate(&self, isas: IsaSet, cpus: usize) -> Result<Isa, BandwidthParamError> {
        let isa = isas.choose(self.isa)?;
        let t = self.threads.unwrap_or(cpus);
        if t == 0 || t > cpus {
            return Err(BandwidthParamError::Threads { threads: t, cpus });
        }
        for &s in self.sizes.iter().flatten() {
            if s / t < isa.width_bytes() * 2 {
                return Err(BandwidthParamError::Size {
                    size: s,
                    isa,
                    width: isa.width_bytes(),
                });
            }
        }
        Ok(isa)
    }

    /// The DRAM point: the target's DRAM working set ([`bench_core::sizing`]: 4 x the
    /// latency sweep's DRAM plateau, else 4 x the sysfs LLC), at least 1 GiB (likwid-bench
    /// and STREAM compare there; 128 MiB when quick), bounded by the available memory
    /// ([`Context::dram_stream_bytes`]).
    fn dram_size(ctx: &Context, target: &TargetSpec) -> usize {
        ctx.dram_stream_bytes(target).0
    }

    fn plan(&self, ctx: &Context, target: &TargetSpec) -> Vec<Point> {
        let threads = self.threads.unwrap_or(ctx.cpus.len()).max(1);
        let mut v = Vec::new();
        if let Some(sizes) = &self.sizes {
            for &k in &self.kernels {
                for &s in sizes {
                    v.push(Point {
                        kernel: k,
                        size: s,
                        threads: 1,
                        keys: vec![],
                    });
                    if threads > 1 {
                        v.push(Point {
                            kernel: k,
                            size: s,
                            threads,
                            keys: vec![],
                        });
                    }
                }
            }
            return v;
        }
        let t = &ctx.topology;
        let l1 = t.cache_bytes(1).unwrap_or(32 * KIB);
        let l2 = t.cache_bytes(2).unwrap_or(512 * KIB);
        let l3 = t.cache_bytes(3);
        let dram = Self::dram_size(ctx, target);
        if self.kernels.contains(&Kernel::Read) {
            v.push(Point {
                kernel: Kernel::Read,
                size: l1 / 2,
                threads: 1,
                keys: vec!["l1_bw_gbs".into()],
            });
            v.push(Point {
                kernel: Kernel::Read,
                size: l2 / 2,
                threads: 1,
                keys: vec!["l2_bw_gbs".into()],
            });
            if let Some(l3) = l3 {
                let s = (2 * l2).min(l3 / 2).max(l2);
                v.push(Point {
                    kernel: Kernel::Read,
                    size: s,
                    threads: 1,
                    keys: vec!["l3_bw_gbs".into()],
                });
            }
        }
        if !ctx.quick {
            let mut s = 16 * KIB;
            while s < dram {
                for &k in &self.kernels {
                    if !v
                        .iter()
                        .any(|p| p.kernel == k && p.size == s && p.threads == 1)
                    {
                        v.push(Point {
                            kernel: k,
                            size: s,
                            threads: 1,
                            keys: vec![],
                        });
                    }
                }
                s *= 4;
            }
        }
        for &k in &self.kernels {
            let one = format!("{}_1t_gbs", dram_key(k));
            let all = format!("{}_gbs", dram_key(k));
            if threads > 1 {
                v.push(Point {
                    kernel: k,
                    size: dram,
                    threads: 1,
                    keys: vec![one],
                });
                v.push(Point {
                    kernel: k,
                    size: dram,
                    threads,
                    keys: vec![all],
                });
            } else {
                // One CPU: measured once, both keys (the run warns about it).
                v.push(Point {
                    kernel: k,
                    size: dram,
                    threads: 1,
                    keys: vec![one, all],
                });
            }
        }
        v
    }

    /// Measures one point: returns per-sample GB/s, passes per sample, and the counters of
    /// every thread's sampling loop (normalised per byte).
    fn measure(
        &self,
        ctx: &Context,
        region: &mut Region,
        isa: Isa,
        p: &Point,
    ) -> (Vec<f64>, usize, MeasurementCounters) {
        let slice = (p.size / p.threads) / 4096 * 4096;
        let slice = if slice == 0 {
            p.size / p.threads / 64 * 64
        } else {
            slice
        };
        let passes = ((8 * MIB) / slice.max(1)).max(1);
        let budget = Budget::bandwidth(ctx.quick);
        let base = region.as_mut_ptr() as usize;
        let kernel = p.kernel;
        let run = lockstep(ctx, p.threads, budget, &|t| {
            // SAFETY: each thread gets its own disjoint slice [t*slice, (t+1)*slice) of the
            // region, which outlives the call.
            let buf =
                unsafe { std::slice::from_raw_parts_mut((base + t * slice) as *mut u8, slice) };
            let mut acc = 0;
            for k in 0..passes {
                acc ^= kernels::run(kernel, isa, buf, k as u8 | 1);
            }
            std::hint::black_box(acc);
        });
        let bytes = slice * p.threads * passes;
        let n = run.samples();
        let counters = run.counters.with_per_op("byte", (bytes * n) as u64);
        (gbs(&run.times, bytes as f64), passes, counters)
    }
}

impl Benchmark for BandwidthBench {
    fn name(&self) -> &'static str {
        "mem.bandwidth"
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        self.plan(ctx, target)
            .iter()
            .map(|p| p.size)
            .max()
            .unwrap_or(MIB)
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let isa = self
            .validate(IsaSet::detect(), ctx.cpus.len())
            .map_err(|e| Skip::new(e.to_string()))?;
        let target = region.spec().to_string();
        let placement = region.placement().clone();
        let mut rep = Report::default();
        if self.threads.unwrap_or(ctx.cpus.len()) == 1 {
            rep.warnings.push(Warning {
                code: "bandwidth_threads".into(),
                message: format!(
                    "{target}: one CPU: the all-threads figures are single-thread figures"
                ),
                remediation: "give more CPUs with --cpu".into(),
            });
        }
        for p in self.plan(ctx, region.spec()) {
            if p.size > region.len() {
                continue;
            }
            let (gbs, passes, counters) = self.measure(ctx, region, isa, &p);
            let Some(d) = Distribution::from_samples(&gbs) else {
                return Err(NotRun::skip(format!(
                    "no valid samples for {} at {}",
                    p.kernel.name(),
                    p.size
                )));
            };
            let id = format!(
                "mem.bandwidth/{target}/{}/{}t/{}",
                p.kernel.name(),
                p.threads,
                format_size(p.size)
            );
            ctx.progress(&format!("{id}: {:.1} GB/s{}", d.p50, counters.summary()));
            for key in &p.keys {
                rep.params.push(Param::new(
                    key.clone(),
                    d.p50,
                    &target,
                    format!(
                            "p50 of {} {} samples, {} thread(s), {} footprint, {} ({}-byte vectors); GB = 1e9 B{}",
                            d.n,
                            p.kernel.name(),
                            p.threads,
                            format_size(p.size),
                            isa,
                            isa.width_bytes(),
                            if p.kernel.is_copy() { ", bytes read + written" } else { "" }
                        ),
                    vec![id.clone()],
                ));
            }
            rep.measurements.push(Measurement {
                id,
                benchmark: self.name().into(),
                target: target.clone(),
                parameters: json!({
                    "kernel": p.kernel.name(), "isa": isa.name(), "vector_bytes": isa.width_bytes(),
                    "threads": p.threads, "size_bytes": p.size, "passes_per_sample": passes,
                    "cpus": ctx.cpus.iter().take(p.threads).collect::<Vec<_>>(),
                    "bytes_counted": if p.kernel.is_copy() { "read + written" } else { "touched" },
                }),
                unit: "GB/s".into(),
                method: "each pinned thread runs the kernel over its own slice; sample = total bytes / slowest thread's time (cycle timer, overhead subtracted); GB = 1e9 bytes".into(),
                distribution: d,
                placement: Some(placement.clone()),
                counters: Some(counters),
            });
        }
        Ok(rep)
    }
}

/// Read, write, non-temporal write, copy, non-temporal copy and memset bandwidth
/// (GB = 10^9 B/s; copies count bytes read + written), one thread and all threads.
///
/// On an interleaved target (`--target interleave:0,1`) each of its nodes is measured
/// too, as `node:N` (unless named already), so the interleaved bandwidth stands next to
/// its parts; its keys are written only qualified (`mem_bw_gbs@interleave:0,1`).
#[derive(Debug, Clone, clap::Args)]
pub struct BandwidthArgs {
    /// Kernels to run (comma-separated): read, write, nt-write, copy, nt-copy, memset.
    #[arg(long = "kernel", value_delimiter = ',', value_enum)]
    pub kernels: Vec<Kernel>,
    /// Force an instruction set (default: the widest the CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<Isa>,
    /// Threads of the all-threads points (default: one per --cpu).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Footprints to measure instead of the default points (comma-separated; a copy's
    /// footprint is its source plus its destination).
    #[arg(long, value_name = "SIZE", value_delimiter = ',', value_parser = parse_positive_size)]
    pub sizes: Option<Vec<usize>>,
}

impl Setup for BandwidthArgs {
    /// Validated against the CPU and `--cpu`.
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        let kernels = if self.kernels.is_empty() {
            Kernel::ALL.to_vec()
        } else {
            self.kernels.clone()
        };
        let b = BandwidthBench {
            kernels,
            isa: self.isa,
            threads: self.threads,
            sizes: self.sizes.clone(),
        };
        b.validate(IsaSet::detect(), opts.cpus.len())?;
        Ok(Planned::one(b))
    }

    /// Bandwidth expansion is why memory is interleaved: measure the parts as well.
    fn interleave_parts(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::target::TargetSpec;

    fn ctx(quick: bool) -> Context {
        Context {
            quick,
            ..Context::quick_local()
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let all = IsaSet {
            avx512: false,
            avx2: true,
            sse2: true,
        };
        let b = BandwidthBench {
            threads: Some(9),
            ..Default::default()
        };
        assert!(matches!(
            b.validate(all, 2),
            Err(BandwidthParamError::Threads { .. })
        ));
        let b = BandwidthBench {
            isa: Some(Isa::Avx512),
            ..Default::default()
        };
        assert!(matches!(
            b.validate(all, 2),
            Err(BandwidthParamError::Isa(_))
        ));
        let b = BandwidthBench {
            sizes: Some(vec![32]),
            threads: Some(1),
            ..Default::default()
        };
        assert!(matches!(
            b.validate(all, 2),
            Err(BandwidthParamError::Size { .. })
        ));
        assert_eq!(
            BandwidthBench::default().validate(all, 2).unwrap(),
            Isa::Avx2
        );
    }

    #[test]
    fn quick_plan_has_level_points_and_every_dram_key() {
        let c = ctx(true);
        let plan = BandwidthBench::default().plan(&c, &TargetSpec::Anon);
        let keys: Vec<&str> = plan
            .iter()
            .flat_map(|p| p.keys.iter().map(String::as_str))
            .collect();
        for k in [
            "l1_bw_gbs",
            "l2_bw_gbs",
            "mem_bw_gbs",
            "mem_write_bw_gbs",
            "nt_write_bw_gbs",
            "copy_bw_gbs",
            "nt_copy_bw_gbs",
            "memset_bw_gbs",
            "mem_bw_1t_gbs",
        ] {
            assert!(keys.contains(&k), "{k} missing");
        }
        let llc = c.topology.llc_bytes().unwrap_or(0);
        assert!(plan
            .iter()
            .filter(|p| p.keys.iter().any(|k| k == "mem_bw_gbs"))
            .all(|p| p.size >= 4 * llc));
    }

    #[test]
    fn one_cpu_measures_each_dram_point_once_with_both_keys() {
        let c = Context {
            cpus: vec![0],
            ..ctx(true)
        };
        let plan = BandwidthBench::default().plan(&c, &TargetSpec::Anon);
        let mut seen = std::collections::BTreeSet::new();
        for p in &plan {
            assert!(
                seen.insert((p.kernel.name(), p.threads, p.size)),
                "{} {}t {} planned twice (same measurement id)",
                p.kernel.name(),
                p.threads,
                p.size
            );
        }
        let read = plan
            .iter()
            .find(|p| p.keys.iter().any(|k| k == "mem_bw_gbs"))
            .unwrap();
        assert_eq!(read.threads, 1);
        assert!(read.keys.iter().any(|k| k == "mem_bw_1t_gbs"));
    }

    #[test]
    fn small_run_measures_positive_bandwidth_with_distribution() {
        let c = ctx(true);
        let b = BandwidthBench {
            kernels: vec![Kernel::Read, Kernel::NtCopy],
            sizes: Some(vec![64 * KIB]),
            threads: Some(1),
            ..Default::default()
        };
        let mut r = Region::allocate(&TargetSpec::Anon, 64 * KIB, &c.topology).unwrap();
        let rep = b.run(&c, Input::Region(&mut r)).unwrap();
        assert_eq!(rep.measurements.len(), 2);
        for m in &rep.measurements {
            assert!(m.distribution.n >= 5 && m.distribution.p50 > 0.0, "{m:?}");
            assert_eq!(m.unit, "GB/s");
            let c = m.counters.as_ref().expect("counters recorded");
            assert!((1..=3).contains(&c.attempts));
            assert_eq!(c.threads, 1);
            if c.counts.llc_load_misses.is_some() {
                assert!(c.per_op.contains_key("llc_load_misses_per_byte"));
            }
        }
    }
}
