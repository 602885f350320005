//! `mem.copy-threshold`: the message size above which non-temporal copies win (seed 001,
//! HINT).
//!
//! P pinned threads each own a send buffer of P blocks of S bytes and a receive buffer of P
//! slots; one all-to-all round copies every thread's block j into thread j's slot (as an
//! MPI_Alltoall inside a node, self-copy included). Three copy methods: temporal (loads +
//! stores), non-temporal (loads + streaming stores + sfence), and HINT's hybrid: temporal
//! for the first T bytes of a block and non-temporal for the rest, with T = L2 / P (the
//! paper's starting threshold, section on the hybrid copy). Sizes 1 KiB .. `--max-size`
//! (16 MiB) in powers of four (of two in a full run), P every rung of the thread ladder
//! (`bench_core::topology::ladder`: 1, 2, 4, ... and each level of the machine; fewer
//! rungs with `--quick`), each measurement naming its rung. Bandwidth = 2 x P x P x S bytes (read + written) per round over the
//! slowest thread. The crossover is the smallest S from which the non-temporal copy stays
//! at least as fast as the temporal one for every larger S.
//!
//! **Copy order.** Each thread pushes its own send buffer, block t+1 first and its own
//! block last ([`alltoall::pairwise_push`]): HINT's column-wise order (linear in the send
//! buffer) with the pairwise-exchange rotation, not the paper's plain column order nor its
//! Hilbert order (the paper shows its hybrid copy with the Hilbert order, Fig. 9 and 11,
//! and does not name Fig. 8's order; `mem alltoall-order` measures the three orders).
//!
//! **Sizes and memory.** The buffers take 2 x P^2 x S bytes; the sweep stops where they
//! would pass a quarter of the memory the target offers (`sizing::available_for`; 1 GiB
//! where unknown; at most 8 GiB, 1 GiB in a quick run), and a warning names each thread count
//! whose sizes were cut, with the remedy.

use crate::alltoall::{self, Method};
use crate::kernels::Isa;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Skip,
};
use bench_core::crew::{gbs, Crew};
use bench_core::effort::Budget;
use bench_core::effort::Effort;
use bench_core::memory::TargetSpec;
use bench_core::params::{Measurement, Warning};
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use bench_core::topology::ladder::{Ladder, Threads};
use bench_core::units::{format_size, parse_positive_size, MIB};
use serde_json::json;

/// Noise allowance of the crossover test: NT "wins" when within 2% of temporal or better.
pub const WIN_TOLERANCE: f64 = 0.98;

/// The smallest size from which `nt[i] >= WIN_TOLERANCE * temporal[i]` holds for every
/// larger size too; `None` when NT never wins at the largest size.
pub fn crossover(sizes: &[usize], temporal: &[f64], nt: &[f64]) -> Option<usize> {
    let n = sizes.len().min(temporal.len()).min(nt.len());
    let mut found = None;
    for i in (0..n).rev() {
        if nt[i] >= WIN_TOLERANCE * temporal[i] {
            found = Some(sizes[i]);
        } else {
            break;
        }
    }
    found
}

/// Parameters of the threshold search.
#[derive(Debug, Clone, Default)]
pub struct CopyThresholdBench {
    /// Forced ISA.
    pub isa: Option<Isa>,
    /// Process (thread) counts; `None`: the thread ladder of the run's CPUs.
    pub threads: Option<Threads>,
    /// Largest block size of the sweep (`alltoall::DEFAULT_MAX_SIZE` when 0).
    pub max_size: usize,
}

impl CopyThresholdBench {
    fn sizes(&self, effort: &Effort) -> Vec<usize> {
        let max = if self.max_size == 0 {
            alltoall::DEFAULT_MAX_SIZE
        } else {
            self.max_size
        };
        alltoall::block_sizes(effort, max)
    }

    fn ladder(&self, ctx: &Context) -> Ladder {
        ctx.ladder(self.threads.as_ref())
    }

    /// Checks thread counts and ISA.
    pub fn validate(&self, cpus: usize) -> Result<Isa, String> {
        if let Some(t) = &self.threads {
            t.check("--threads", "thread", cpus)
                .map_err(|e| e.to_string())?;
        }
        alltoall::check_setup(self.isa, None, cpus)
    }
}

impl Benchmark for CopyThresholdBench {
    fn name(&self) -> &'static str {
        "mem.copy-threshold"
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context, target: &bench_core::memory::TargetSpec) -> usize {
        alltoall::region_bytes(
            ctx,
            target,
            &self.ladder(ctx).counts(),
            &self.sizes(ctx.effort),
        )
    }

    fn memory(
        &self,
        ctx: &Context,
        target: &bench_core::memory::TargetSpec,
    ) -> bench_core::memory::budget::Need {
        alltoall::memory(
            ctx,
            target,
            &self.ladder(ctx).counts(),
            &self.sizes(ctx.effort),
        )
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let ladder = self.ladder(ctx);
        let budget = alltoall::region_bytes(ctx, target, &ladder.counts(), &self.sizes(ctx.effort));
        let mut cost = Cost::new();
        for rung in &ladder.rungs {
            let (sizes, _) = alltoall::sizes_within(&self.sizes(ctx.effort), rung.threads, budget);
            let mut each = 0.0;
            for &s in &sizes {
                each += alltoall::point_s(ctx, &rung.cpus, s, ctx.effort.mem.threshold_point);
            }
            cost.add(
                format!("P = {}: 3 methods x {} sizes", rung.label, sizes.len()),
                3,
                each,
            );
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let isa = self.validate(ctx.cpus.len()).map_err(Skip::new)?;
        let target = region.origin().to_string();
        let l2 = ctx.topology.cache_bytes(2);
        let mut rep = Report::default();
        let base = region.as_mut_ptr() as usize;
        let budget = Budget {
            time: ctx.effort.mem.threshold_point,
            min_samples: 5,
            max_samples: 1000,
        };
        let ladder = self.ladder(ctx);
        let all = ladder.top().map_or(1, |r| r.threads);
        let wanted = self.sizes(ctx.effort);
        let bound = alltoall::RegionSizes::new(ctx, region.origin(), region.len());
        let outer = ctx;
        for rung in &ladder.rungs {
            // The rung's CPUs: thread t on rung.cpus[t].
            let ctx = &outer.with_cpus(&rung.cpus);
            let p = rung.threads;
            let rule = l2.map(|l| l / p);
            let sizes = bound.sizes(&wanted, p, &mut rep.warnings);
            if sizes.is_empty() {
                continue;
            }
            let schedules: Vec<Vec<alltoall::Copy>> =
                (0..p).map(|t| alltoall::pairwise_push(p, t)).collect();
            let mut curves: Vec<(Method, Vec<f64>, Vec<String>)> = Vec::new();
            for method in [Method::Temporal, Method::NonTemporal, Method::Hybrid] {
                let (mut vals, mut ids) = (Vec::new(), Vec::new());
                for &s in &sizes {
                    let t_hyb = rule.unwrap_or(s).min(s);
                    let rounds = (MIB / (p * s)).max(1);
                    let run = Crew::of(ctx, p).rounds(budget, &|t| {
                        for _ in 0..rounds {
                            // SAFETY: the region holds 2 x p x p x s bytes (sizes were
                            // capped to it) and outlives the call.
                            unsafe {
                                alltoall::run_copies(base, p, s, &schedules[t], method, isa, t_hyb)
                            };
                        }
                    });
                    let bytes = 2 * p * p * s * rounds;
                    let samples = gbs(&run.times, bytes as f64);
                    let n = run.samples();
                    let counters = run.counters.with_per_op("byte", (bytes * n) as u64);
                    let d = Distribution::from_samples(&samples)
                        .ok_or_else(|| Skip::new(format!("no valid samples at {s} bytes")))?;
                    let id = format!(
                        "mem.copy-threshold/{target}/{}/p{p}/{}",
                        method.name(),
                        format_size(s)
                    );
                    vals.push(d.p50);
                    ids.push(id.clone());
                    rep.measurements.push(Measurement {
                        id,
                        benchmark: self.name().into(),
                        target: target.clone(),
                        parameters: json!({
                            "method": method.name(), "threads": p, "block_bytes": s, "rounds_per_sample": rounds,
                            "isa": isa.name(), "hybrid_temporal_bytes": (method == Method::Hybrid).then_some(t_hyb),
                            "cpus": ctx.cpus.iter().take(p).collect::<Vec<_>>(), "rung": rung.label,
                            "order": "pairwise-push (column-wise, rotated start)", "buffer_bytes": alltoall::buffer_bytes(p, s),
                        }),
                        unit: "GB/s".into(),
                        method: "all-to-all copy among pinned threads, bytes read + written over the slowest thread's time; GB = 1e9 B".into(),
                        distribution: d,
                        placement: Some(region.placement().clone()),
                        counters: Some(counters),
                    });
                }
                ctx.point_done();
                curves.push((method, vals, ids));
            }
            let (tv, nv) = (&curves[0].1, &curves[1].1);
            let from: Vec<String> = curves[0].2.iter().chain(&curves[1].2).cloned().collect();
            match crossover(&sizes, tv, nv) {
                Some(x) => {
                    ctx.progress(&format!("mem.copy-threshold {target} P={p}: NT wins from {}", format_size(x)));
                    let mut keys = vec![format!("nt_copy_threshold_p{p}_bytes")];
                    if p == all {
                        keys.push("nt_copy_threshold_bytes".into());
                    }
                    for key in keys {
                        rep.params.push(Param::new(
                            key,
                            x as f64,
                            &target,
                            format!(
                                "smallest block size from which the NT all-to-all copy is >= {WIN_TOLERANCE} x the temporal one at every larger size up to {}, {p} thread(s), pairwise-push order",
                                format_size(*sizes.last().unwrap_or(&0))
                            ),
                            from.clone(),
                        ));
                    }
                }
                None => rep.warnings.push(Warning {
                    code: "nt_threshold".into(),
                    message: format!(
                        "{target}: with {p} thread(s) the non-temporal copy never overtakes the temporal one up to {}",
                        format_size(*sizes.last().unwrap_or(&0))
                    ),
                    remediation: "none: no threshold is reported for this thread count".into(),
                }),
            }
            if let (Some(r), true) = (rule, p == all) {
                rep.params.push(Param::new(
                    "nt_copy_rule_bytes",
                    r as f64,
                    &target,
                    format!("HINT's rule of thumb: L2 size / processes = {} / {p} (seed 001, hybrid copy)", format_size(l2.unwrap_or(0))),
                    vec![],
                ));
            }
        }
        Ok(rep)
    }
}

/// The block size above which non-temporal copies beat temporal ones in an all-to-all
/// among P threads (HINT), with the L2/P rule of thumb beside it.
#[derive(Debug, Clone, clap::Args)]
pub struct CopyThresholdArgs {
    /// Force an instruction set (default: the widest the CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<crate::kernels::Isa>,
    /// Thread (process) counts, comma-separated (1,2,3), or `every` (1 .. the CPUs);
    /// default: the thread ladder (1, 2, 4, ... and every level of the machine: one core,
    /// one L2, one L3, one node, one socket, all CPUs; 3 rungs with --quick).
    #[arg(long, value_name = "LIST|every")]
    pub threads: Option<Threads>,
    /// Largest block size of the sweep (sizes 1K, 4K, ... in powers of four, of two in a
    /// full run). The buffers take 2 x P^2 x size bytes; sizes whose buffers would pass a
    /// quarter of the memory the target offers are left out, with a warning.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = parse_positive_size)]
    pub max_size: usize,
}

impl Setup for CopyThresholdArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        if self.max_size < 1024 {
            return Err("--max-size must be at least 1K".into());
        }
        let b = CopyThresholdBench {
            isa: self.isa,
            threads: self.threads.clone(),
            max_size: self.max_size,
        };
        b.validate(opts.cpus.len())?;
        Ok(Planned::one(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: usize = 1024;

    #[test]
    fn memory_is_the_largest_buffers_a_run_uses() {
        let ctx = Context::quick_local();
        let p = ctx.cpus.len().min(2);
        let b = CopyThresholdBench {
            isa: None,
            threads: Some(Threads::List(vec![p])),
            max_size: 256 * K,
        };
        let anon = bench_core::memory::TargetSpec::Anon;
        // Offered: four times the buffers of 256 KiB blocks, so their budget holds them.
        let buffers = alltoall::buffer_bytes(p, 256 * K);
        ctx.sizing.assume_available("anon", Some(4 * buffers));
        let need = b.memory(&ctx, &anon);
        let mut r =
            bench_core::memory::Region::allocate(&anon, b.region_bytes(&ctx, &anon), &ctx.topology)
                .unwrap();
        let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
        let used = rep
            .measurements
            .iter()
            .map(|m| m.parameters["buffer_bytes"].as_u64().unwrap() as usize)
            .max()
            .unwrap();
        assert_eq!(used, buffers, "the largest buffers fit the budget and ran");
        assert_eq!(need.on_target_bytes, r.len(), "{need:?}");
        assert_eq!(need.bytes, need.on_target_bytes);
        let fit = need.fit.expect("--max-size bounds it");
        assert_eq!((fit.option, fit.per_byte), ("--max-size", 2 * p * p));
        // A budget of 1 MiB: the sizes stop below it, and the plan is the 1 MiB region.
        ctx.sizing.assume_available("anon", Some(4 * MIB));
        let need = b.memory(&ctx, &anon);
        assert_eq!(need.on_target_bytes, MIB, "{need:?}");
    }

    #[test]
    fn crossover_on_synthetic_curves() {
        let sizes = [K, 4 * K, 16 * K, 64 * K, 256 * K, 1024 * K];
        let temporal = [10.0, 20.0, 30.0, 25.0, 15.0, 12.0];
        let nt = [5.0, 8.0, 12.0, 26.0, 22.0, 20.0];
        assert_eq!(crossover(&sizes, &temporal, &nt), Some(64 * K));
        // A noisy dip below temporal at one larger size moves the crossover past it.
        let nt2 = [5.0, 8.0, 12.0, 26.0, 14.0, 20.0];
        assert_eq!(crossover(&sizes, &temporal, &nt2), Some(1024 * K));
        // Within the 2% tolerance counts as a win.
        let nt3 = [5.0, 8.0, 29.5, 25.0, 15.0, 12.0];
        assert_eq!(crossover(&sizes, &temporal, &nt3), Some(16 * K));
        // NT never wins at the largest size: no threshold.
        let nt4 = [5.0, 8.0, 12.0, 26.0, 22.0, 11.0];
        assert_eq!(crossover(&sizes, &temporal, &nt4), None);
        // NT always wins: the smallest size.
        assert_eq!(crossover(&sizes, &[1.0; 6], &[2.0; 6]), Some(K));
    }

    #[test]
    fn every_point_carries_the_counters_of_its_threads() {
        let ctx = Context::quick_local();
        let p = ctx.cpus.len().min(2);
        let b = CopyThresholdBench {
            isa: None,
            threads: Some(Threads::List(vec![p])),
            max_size: 0,
        };
        // Buffers for 4 KiB blocks at most: sizes 1 KiB and 4 KiB.
        let mut r = bench_core::memory::Region::allocate(
            &bench_core::memory::TargetSpec::Anon,
            2 * p * p * 4 * K,
            &ctx.topology,
        )
        .unwrap();
        let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
        assert_eq!(rep.measurements.len(), 3 * 2, "3 methods x 2 sizes");
        // The sizes the region cannot hold are named, with the remedy.
        let w = rep
            .warnings
            .iter()
            .find(|w| w.code == "size_bound")
            .expect("a size_bound warning");
        assert!(
            w.message.contains("stop at 4K") && w.message.contains("16K and larger"),
            "{}",
            w.message
        );
        assert!(w.remediation.contains("--max-size"));
        assert!(rep.measurements.iter().all(|m| m.parameters["order"]
            .as_str()
            .unwrap()
            .starts_with("pairwise")));
        for m in &rep.measurements {
            let c = m.counters.as_ref().expect("counters");
            assert_eq!(
                c.threads as usize, p,
                "{}: one count per thread, summed",
                m.id
            );
            assert!((1..=3).contains(&c.attempts));
            assert_eq!(c.disturbed, !c.disturbances.is_empty());
            if c.counts.llc_load_misses.is_some() {
                assert!(c.per_op.contains_key("llc_load_misses_per_byte"));
            } else {
                assert!(
                    c.per_op.is_empty(),
                    "no per-byte figures without hardware counts"
                );
            }
        }
    }
}
