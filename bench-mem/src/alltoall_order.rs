//! `mem.alltoall-order`: which memory copy order of an intra-node all-to-all is fastest per
//! block size and thread count (seed 001, HINT, Sec. V-A..D, Fig. 6).
//!
//! P pinned threads do rounds of the all-to-all of [`crate::alltoall`] (2 x P^2 x S bytes
//! of buffers) with each of HINT's three orders: row-wise (each thread fills its own
//! receive buffer), column-wise (each thread sends its own send buffer) and Hilbert (the
//! receive buffer matrix numbered along a Hilbert curve, split into P sub-grids as in the
//! paper's Algorithm 1; P a power of two, other counts skip it with the reason). At each
//! (P, S) the orders run one after the other, so they see the same machine state; the
//! winner is the order with the highest p50 bandwidth (bytes read + written over the
//! slowest thread, GB = 1e9 B), recorded in every measurement's parameters (`winner`,
//! `of_winner` = this order's p50 / the winner's). The keys `alltoall_{order}_p{P}_gbs`
//! are the temporal copy's p50 at `--ref-size`.

use crate::alltoall::{self, Method, Order};
use crate::kernels::Isa;
use crate::lockstep::{gbs, lockstep, Budget};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Setup, Skip,
};
use bench_core::effort::Effort;
use bench_core::memory::TargetSpec;
use bench_core::params::{Measurement, Skipped, Warning};
use bench_core::stats::Distribution;
use bench_core::units::{format_size, parse_positive_size, KIB, MIB};
use serde_json::json;

/// Which orders to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    /// Row-wise only.
    Row,
    /// Column-wise only.
    Column,
    /// Hilbert only.
    Hilbert,
    /// All three.
    All,
}

impl OrderArg {
    fn orders(self) -> Vec<Order> {
        match self {
            OrderArg::Row => vec![Order::Row],
            OrderArg::Column => vec![Order::Column],
            OrderArg::Hilbert => vec![Order::Hilbert],
            OrderArg::All => Order::ALL.to_vec(),
        }
    }
}

/// The three memory copy orders of HINT's intra-node all-to-all (row-wise, column-wise,
/// Hilbert curve) per block size and thread count, and which one wins at each size.
///
/// Each thread count P runs an all-to-all among P pinned threads: 2 x P^2 x size bytes of
/// buffers, P x P block copies per round. Sizes 1K .. --max-size in powers of four (of two
/// in a full run); thread counts: every power of two from 2 up to the --cpu count and the
/// count itself (in a quick run the largest power of two and the count; 1 only on one
/// CPU, where the three orders are the same copy). The Hilbert order needs a power-of-two
/// P. Keys `alltoall_{order}_p{P}_gbs`: the temporal copy at --ref-size.
#[derive(Debug, Clone, clap::Args)]
pub struct AlltoallOrderArgs {
    /// Copy orders to measure.
    #[arg(long, value_enum, default_value = "all")]
    pub order: OrderArg,
    /// Copy methods, comma-separated: temporal (loads + stores), nt (streaming stores),
    /// hybrid (temporal for the first L2/P bytes of a block, NT for the rest).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "temporal")]
    pub method: Vec<Method>,
    /// Thread (process) counts, comma-separated (default: the powers of two from 2 up to
    /// the --cpu count, and the count).
    #[arg(long, value_delimiter = ',')]
    pub threads: Option<Vec<usize>>,
    /// Largest block size (the paper's Fig. 6 goes to 1M). Sizes whose buffers would pass
    /// a quarter of the memory the target offers are left out, with a warning.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_positive_size)]
    pub max_size: usize,
    /// Block size of the keys alltoall_{order}_p{P}_gbs (the first size of the paper's
    /// large-message range); measured even when not on the sweep.
    #[arg(long, value_name = "SIZE", default_value = "64K", value_parser = parse_positive_size)]
    pub ref_size: usize,
    /// Force an instruction set (default: the widest the CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<Isa>,
}

impl Setup for AlltoallOrderArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        if self.max_size < KIB || self.ref_size < KIB {
            return Err("--max-size and --ref-size must be at least 1K".into());
        }
        let mut methods = self.method.clone();
        methods.dedup();
        let b = AlltoallOrderBench {
            orders: self.order.orders(),
            methods,
            threads: self.threads.clone(),
            max_size: self.max_size,
            ref_size: self.ref_size,
            isa: self.isa,
        };
        b.validate(opts.cpus.len())?;
        Ok(Planned::one(b))
    }
}

/// The benchmark.
#[derive(Debug, Clone)]
pub struct AlltoallOrderBench {
    /// Orders to measure.
    pub orders: Vec<Order>,
    /// Copy methods.
    pub methods: Vec<Method>,
    /// Thread counts; `None`: [`default_counts`].
    pub threads: Option<Vec<usize>>,
    /// Largest block size.
    pub max_size: usize,
    /// Block size of the keys.
    pub ref_size: usize,
    /// Forced ISA.
    pub isa: Option<Isa>,
}

/// The default thread counts for `cpus` CPUs: the powers of two from 2 up to it and `cpus`
/// itself; in a quick run the largest power of two and `cpus`. P = 1 only on one CPU (with
/// one thread the three orders are the same single copy).
pub fn default_counts(cpus: usize, effort: &Effort) -> Vec<usize> {
    let cpus = cpus.max(1);
    let top = 1usize << cpus.ilog2();
    let mut v: Vec<usize> = if !effort.mem.alltoall_every_power_of_two || cpus == 1 {
        vec![top]
    } else {
        (1..=cpus.ilog2()).map(|k| 1usize << k).collect()
    };
    if top != cpus {
        v.push(cpus);
    }
    v
}

/// The winner of one (P, S): the index of the highest p50 and each p50 over it.
pub fn winner(p50s: &[f64]) -> Option<(usize, Vec<f64>)> {
    let (i, best) = p50s
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some((i, p50s.iter().map(|v| v / best).collect()))
}

impl AlltoallOrderBench {
    fn counts(&self, ctx: &Context) -> Vec<usize> {
        self.threads
            .clone()
            .unwrap_or_else(|| default_counts(ctx.cpus.len(), ctx.effort))
    }

    /// The sweep's sizes, with the reference size added where the sweep misses it.
    fn sizes(&self, effort: &Effort) -> Vec<usize> {
        let mut v = alltoall::block_sizes(effort, self.max_size);
        if !v.contains(&self.ref_size) {
            v.push(self.ref_size);
            v.sort_unstable();
        }
        v
    }

    /// Checks thread counts, methods and ISA.
    pub fn validate(&self, cpus: usize) -> Result<Isa, String> {
        let isa = alltoall::check_setup(self.isa, self.threads.as_deref(), cpus)?;
        if self.methods.is_empty() || self.orders.is_empty() {
            return Err("no copy method or order to measure".into());
        }
        Ok(isa)
    }
}

impl Benchmark for AlltoallOrderBench {
    fn name(&self) -> &'static str {
        "mem.alltoall-order"
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        alltoall::region_bytes(ctx, target, &self.counts(ctx), &self.sizes(ctx.effort))
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let isa = self.validate(ctx.cpus.len()).map_err(Skip::new)?;
        let target = region.origin().to_string();
        let l2 = ctx.topology.cache_bytes(2);
        let base = region.as_mut_ptr() as usize;
        let bound = alltoall::RegionSizes::new(ctx, region.origin(), region.len());
        let budget = Budget {
            time: ctx.effort.mem.alltoall_order_point,
            min_samples: 5,
            max_samples: 1000,
        };
        let wanted = self.sizes(ctx.effort);
        let mut rep = Report::default();
        for p in self.counts(ctx) {
            let orders: Vec<Order> = self
                .orders
                .iter()
                .copied()
                .filter(|o| match o.unsupported(p) {
                    Some(reason) => {
                        rep.skipped.push(Skipped {
                            benchmark: format!("{}/{}/p{p}", self.name(), o.name()),
                            target: target.clone(),
                            reason,
                        });
                        false
                    }
                    None => true,
                })
                .collect();
            if orders.is_empty() {
                continue;
            }
            let sizes = bound.sizes(&wanted, p, &mut rep.warnings);
            let schedules: Vec<Vec<Vec<alltoall::Copy>>> = orders
                .iter()
                .map(|&o| {
                    (0..p)
                        .map(|t| alltoall::work(o, p, t).expect("supported order"))
                        .collect()
                })
                .collect();
            let t_hyb_rule = l2.map(|l| l / p);
            for &method in &self.methods {
                let mut table = Vec::new();
                for &s in &sizes {
                    let t_hyb = t_hyb_rule.unwrap_or(s).min(s);
                    let rounds = (MIB / (p * s)).max(1);
                    let first = rep.measurements.len();
                    let mut p50s = Vec::new();
                    for (oi, &order) in orders.iter().enumerate() {
                        let sched = &schedules[oi];
                        let run = lockstep(ctx, p, budget, &|t| {
                            for _ in 0..rounds {
                                // SAFETY: the region holds 2 x p x p x s bytes (sizes were
                                // bounded by it) and outlives the call; the order's
                                // schedules give each copy to one thread (alltoall tests).
                                unsafe {
                                    alltoall::run_copies(base, p, s, &sched[t], method, isa, t_hyb)
                                };
                            }
                        });
                        let bytes = alltoall::buffer_bytes(p, s) * rounds;
                        let samples = gbs(&run.times, bytes as f64);
                        let n = run.samples();
                        let counters = run.counters.with_per_op("byte", (bytes * n) as u64);
                        let d = Distribution::from_samples(&samples).ok_or_else(|| {
                            Skip::new(format!("no valid samples at {s} bytes, P = {p}"))
                        })?;
                        p50s.push(d.p50);
                        rep.measurements.push(Measurement {
                            id: format!(
                                "{}/{target}/{}/{}/p{p}/{}",
                                self.name(),
                                method.name(),
                                order.name(),
                                format_size(s)
                            ),
                            benchmark: self.name().into(),
                            target: target.clone(),
                            parameters: json!({
                                "order": order.name(), "method": method.name(), "threads": p,
                                "block_bytes": s, "rounds_per_sample": rounds, "isa": isa.name(),
                                "buffer_bytes": alltoall::buffer_bytes(p, s),
                                "hybrid_temporal_bytes": (method == Method::Hybrid).then_some(t_hyb),
                                "hilbert_subgrid_rows_cols": (order == Order::Hilbert).then(|| {
                                    let (r, c) = alltoall::hilbert_subgrid(p);
                                    [r, c]
                                }),
                                "cpus": ctx.cpus.iter().take(p).collect::<Vec<_>>(),
                            }),
                            unit: "GB/s".into(),
                            method: "all-to-all among pinned threads in this copy order (HINT Algorithm 1-3), bytes read + written over the slowest thread's time; GB = 1e9 B".into(),
                            distribution: d,
                            placement: Some(region.placement().clone()),
                            counters: Some(counters),
                        });
                    }
                    if let Some((w, rel)) = winner(&p50s) {
                        for (k, m) in rep.measurements[first..].iter_mut().enumerate() {
                            m.parameters["winner"] = json!(orders[w].name());
                            m.parameters["of_winner"] = json!(rel[k]);
                            m.parameters["orders_compared"] =
                                json!(orders.iter().map(|o| o.name()).collect::<Vec<_>>());
                        }
                        table.push(format!("{} {}", format_size(s), orders[w].name()));
                    }
                    if method == Method::Temporal && s == self.ref_size {
                        for (k, &order) in orders.iter().enumerate() {
                            let m = &rep.measurements[first + k];
                            rep.params.push(Param::new(
                                format!("alltoall_{}_p{p}_gbs", order.name()),
                                p50s[k],
                                &target,
                                format!(
                                    "p50 all-to-all bandwidth, {} order, temporal copy, {p} thread(s), {} blocks (bytes read + written)",
                                    order.name(),
                                    format_size(s)
                                ),
                                vec![m.id.clone()],
                            ));
                        }
                    }
                }
                if !sizes.contains(&self.ref_size) && method == Method::Temporal {
                    rep.warnings.push(Warning {
                        code: "alltoall_ref_size".into(),
                        message: format!(
                            "{target}: with {p} thread(s) the reference size {} was not reached; no alltoall_*_p{p}_gbs keys",
                            format_size(self.ref_size)
                        ),
                        remediation: "a smaller --ref-size, or more memory (see the size_bound warning)".into(),
                    });
                }
                ctx.progress(&format!(
                    "mem.alltoall-order {target} P={p} {}: winner per size: {}",
                    method.name(),
                    table.join(", ")
                ));
            }
        }
        Ok(rep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_counts_are_powers_of_two_and_the_cpus() {
        assert_eq!(default_counts(1, &bench_core::effort::FULL), [1]);
        assert_eq!(default_counts(1, &bench_core::effort::QUICK), [1]);
        assert_eq!(default_counts(2, &bench_core::effort::QUICK), [2]);
        assert_eq!(default_counts(2, &bench_core::effort::FULL), [2]);
        assert_eq!(
            default_counts(32, &bench_core::effort::FULL),
            [2, 4, 8, 16, 32]
        );
        assert_eq!(default_counts(12, &bench_core::effort::FULL), [2, 4, 8, 12]);
        assert_eq!(default_counts(12, &bench_core::effort::QUICK), [8, 12]);
    }

    #[test]
    fn winner_is_the_highest_p50() {
        let (w, rel) = winner(&[10.0, 12.5, 5.0]).unwrap();
        assert_eq!(w, 1);
        assert_eq!(rel, [0.8, 1.0, 0.4]);
        assert!(winner(&[]).is_none());
        assert!(winner(&[f64::NAN, 0.0]).is_none());
    }

    /// A run measures every supported order at every size, names one winner per size,
    /// skips Hilbert where P is no power of two, and gives keys at the reference size.
    #[test]
    fn run_compares_the_orders_per_size() {
        let ctx = Context::quick_local();
        let p = ctx.cpus.len().min(2);
        let b = AlltoallOrderBench {
            orders: Order::ALL.to_vec(),
            methods: vec![Method::Temporal],
            threads: Some(vec![p]),
            max_size: 4 * KIB,
            ref_size: 4 * KIB,
            isa: None,
        };
        // Room for 1 KiB and 4 KiB blocks (a quick sweep to 4K).
        let mut r = bench_core::memory::Region::allocate(
            &TargetSpec::Anon,
            alltoall::buffer_bytes(p, 4 * KIB),
            &ctx.topology,
        )
        .unwrap();
        let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
        assert_eq!(rep.measurements.len(), 3 * 2, "3 orders x 2 sizes");
        for size in [KIB, 4 * KIB] {
            let at: Vec<_> = rep
                .measurements
                .iter()
                .filter(|m| m.parameters["block_bytes"] == size)
                .collect();
            let w = at[0].parameters["winner"].as_str().unwrap();
            assert!(at.iter().all(|m| m.parameters["winner"] == w));
            let best = at.iter().find(|m| m.parameters["order"] == w).unwrap();
            assert_eq!(best.parameters["of_winner"], 1.0);
            assert!(at
                .iter()
                .all(|m| m.parameters["of_winner"].as_f64().unwrap() <= 1.0));
        }
        let keys: Vec<_> = rep.params.iter().map(|k| k.key.clone()).collect();
        for o in ["row", "column", "hilbert"] {
            assert!(keys.contains(&format!("alltoall_{o}_p{p}_gbs")), "{keys:?}");
        }
        assert!(rep.warnings.is_empty(), "{:?}", rep.warnings);
        // Three threads: no Hilbert, with the reason; a region too small cuts the sizes.
        if ctx.cpus.len() >= 3 {
            let b3 = AlltoallOrderBench {
                threads: Some(vec![3]),
                ..b.clone()
            };
            let rep = b3.run(&ctx, Input::Region(&mut r)).unwrap();
            assert!(rep
                .skipped
                .iter()
                .any(|s| s.reason.contains("power-of-two")));
        }
        let b_big = AlltoallOrderBench {
            max_size: 64 * KIB,
            ref_size: 64 * KIB,
            ..b
        };
        let rep = b_big.run(&ctx, Input::Region(&mut r)).unwrap();
        assert!(rep.warnings.iter().any(|w| w.code == "size_bound"
            && w.message.contains("stop at 4K")
            && w.message.contains("16K and larger")));
        assert!(rep.warnings.iter().any(|w| w.code == "alltoall_ref_size"));
        assert!(rep.params.is_empty(), "no key without the reference size");
    }
}
