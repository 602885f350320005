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
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Setup, Skip,
};
use bench_core::crew::{gbs, Crew};
use bench_core::effort::Budget;
use bench_core::effort::Effort;
use bench_core::memory::{Placement, TargetSpec};
use bench_core::params::{Measurement, Skipped, Warning};
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use bench_core::topology::ladder::{Ladder, Threads};
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
/// in a full run); thread counts: the rungs of the thread ladder from 2 up (1, 2, 4, ...
/// and each level of the machine: one core, one L3, one node, one socket, all CPUs;
/// fewer with --quick; 1 only on one CPU, where the three orders are the same copy). The
/// Hilbert order needs a power-of-two P. Keys `alltoall_{order}_p{P}_gbs`: the temporal
/// copy at --ref-size.
#[derive(Debug, Clone, clap::Args)]
pub struct AlltoallOrderArgs {
    /// Copy orders to measure.
    #[arg(long, value_enum, default_value = "all")]
    pub order: OrderArg,
    /// Copy methods, comma-separated: temporal (loads + stores), nt (streaming stores),
    /// hybrid (temporal for the first L2/P bytes of a block, NT for the rest).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "temporal")]
    pub method: Vec<Method>,
    /// Thread (process) counts, comma-separated (1,2,3), or `every` (1 .. the CPUs);
    /// default: the thread ladder's rungs from 2 threads up.
    #[arg(long, value_name = "LIST|every")]
    pub threads: Option<Threads>,
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
    /// Thread counts; `None`: [`default_rungs`].
    pub threads: Option<Threads>,
    /// Largest block size.
    pub max_size: usize,
    /// Block size of the keys.
    pub ref_size: usize,
    /// Forced ISA.
    pub isa: Option<Isa>,
}

/// The default rungs: the thread ladder of the run's CPUs from 2 threads up (a cut
/// ladder with `--quick`). P = 1 only on one CPU (with one thread the three orders are the
/// same single copy).
pub fn default_rungs(ladder: Ladder) -> Ladder {
    if ladder.rungs.len() <= 1 {
        return ladder;
    }
    Ladder {
        rungs: ladder
            .rungs
            .into_iter()
            .filter(|r| r.threads >= 2)
            .collect(),
    }
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
    fn ladder(&self, ctx: &Context) -> Ladder {
        match &self.threads {
            Some(t) => ctx.ladder(Some(t)),
            None => default_rungs(ctx.ladder(None)),
        }
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
        if let Some(t) = &self.threads {
            t.check("--threads", "thread", cpus)
                .map_err(|e| e.to_string())?;
        }
        let isa = alltoall::check_setup(self.isa, None, cpus)?;
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
        alltoall::region_bytes(
            ctx,
            target,
            &self.ladder(ctx).counts(),
            &self.sizes(ctx.effort),
        )
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> bench_core::memory::budget::Need {
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
            let orders = self
                .orders
                .iter()
                .filter(|o| o.unsupported(rung.threads).is_none())
                .count();
            let (sizes, _) = alltoall::sizes_within(&self.sizes(ctx.effort), rung.threads, budget);
            for m in &self.methods {
                for &s in &sizes {
                    let each =
                        alltoall::point_s(ctx, &rung.cpus, s, ctx.effort.mem.alltoall_order_point);
                    cost.add(
                        format!(
                            "P = {}, {} {}: {orders} orders",
                            rung.label,
                            m.name(),
                            format_size(s)
                        ),
                        1,
                        each * orders as f64,
                    );
                }
            }
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let isa = self.validate(ctx.cpus.len()).map_err(Skip::new)?;
        let target = region.origin().to_string();
        let l2 = ctx.topology.cache_bytes(2);
        let base = region.as_mut_ptr() as usize;
        let bound = alltoall::RegionSizes::new(ctx, region.origin(), region.len());
        let wanted = self.sizes(ctx.effort);
        let mut rep = Report::default();
        for rung in self.ladder(ctx).rungs {
            // The rung's CPUs: thread t on rung.cpus[t].
            let rctx = ctx.with_cpus(&rung.cpus);
            let sweep = Sweep {
                bench: self,
                ctx: &rctx,
                rung: &rung.label,
                placement: region.placement(),
                target: target.clone(),
                isa,
                base,
                budget: Budget {
                    time: ctx.effort.mem.alltoall_order_point,
                    min_samples: 5,
                    max_samples: 1000,
                },
            };
            let p = rung.threads;
            let orders = sweep.supported_orders(p, &mut rep.skipped);
            if orders.is_empty() {
                continue;
            }
            let sizes = bound.sizes(&wanted, p, &mut rep.warnings);
            let group = Group::new(p, orders, sizes, l2);
            for &method in &self.methods {
                sweep.method(&group, method, &mut rep)?;
            }
        }
        Ok(rep)
    }
}

/// What every point of one run shares: the region's buffers, the ISA and the sampling budget.
struct Sweep<'a> {
    bench: &'a AlltoallOrderBench,
    ctx: &'a Context,
    /// What the thread count is (the ladder's rung).
    rung: &'a str,
    placement: &'a Placement,
    target: String,
    isa: Isa,
    /// The region's start address (the all-to-all's buffers).
    base: usize,
    budget: Budget,
}

/// One thread count's supported orders, each thread's copy schedule per order, and the
/// block sizes the region holds at this count.
struct Group {
    p: usize,
    orders: Vec<Order>,
    sizes: Vec<usize>,
    /// `schedules[order][thread]`: the copies that thread does in that order.
    schedules: Vec<Vec<Vec<alltoall::Copy>>>,
    /// The hybrid copy's temporal bytes per block (L2 / P), where L2 is known.
    t_hyb_rule_bytes: Option<usize>,
}

impl Group {
    /// The schedules of `orders` among `p` threads (each order is supported at `p`).
    fn new(p: usize, orders: Vec<Order>, sizes: Vec<usize>, l2: Option<usize>) -> Group {
        let schedules = orders
            .iter()
            .map(|&o| {
                (0..p)
                    .map(|t| alltoall::work(o, p, t).expect("supported order"))
                    .collect()
            })
            .collect();
        Group {
            p,
            orders,
            sizes,
            schedules,
            t_hyb_rule_bytes: l2.map(|l| l / p),
        }
    }
}

/// One (method, block size) point: the copy every order runs there.
#[derive(Clone, Copy)]
struct Point {
    method: Method,
    block_bytes: usize,
    /// The hybrid copy's temporal bytes per block.
    t_hyb_bytes: usize,
    rounds: usize,
}

impl Sweep<'_> {
    /// The orders to measure with `p` threads; each one unsupported there is skipped with
    /// its reason.
    fn supported_orders(&self, p: usize, skipped: &mut Vec<Skipped>) -> Vec<Order> {
        self.bench
            .orders
            .iter()
            .copied()
            .filter(|o| match o.unsupported(p) {
                Some(reason) => {
                    skipped.push(Skipped {
                        benchmark: format!("{}/{}/p{p}", self.bench.name(), o.name()),
                        target: self.target.clone(),
                        reason,
                    });
                    false
                }
                None => true,
            })
            .collect()
    }

    /// Every size of one thread count with one copy method, then the winners' progress line.
    fn method(&self, g: &Group, method: Method, rep: &mut Report) -> Result<(), NotRun> {
        let mut table = Vec::new();
        for &s in &g.sizes {
            if let Some(entry) = self.point(g, method, s, rep)? {
                table.push(entry);
            }
        }
        if !g.sizes.contains(&self.bench.ref_size) && method == Method::Temporal {
            rep.warnings.push(self.ref_size_warning(g.p));
        }
        self.ctx.progress(&format!(
            "mem.alltoall-order {} P={} {}: winner per size: {}",
            self.target,
            g.p,
            method.name(),
            table.join(", ")
        ));
        Ok(())
    }

    /// Every order at one block size, one after the other; the winner is marked on their
    /// measurements and returned as the progress table's entry ("size order").
    fn point(
        &self,
        g: &Group,
        method: Method,
        s: usize,
        rep: &mut Report,
    ) -> Result<Option<String>, NotRun> {
        let pt = Point {
            method,
            block_bytes: s,
            t_hyb_bytes: g.t_hyb_rule_bytes.unwrap_or(s).min(s),
            rounds: (MIB / (g.p * s)).max(1),
        };
        let first = rep.measurements.len();
        let mut p50s = Vec::new();
        for oi in 0..g.orders.len() {
            let m = self.measure(g, pt, oi)?;
            p50s.push(m.distribution.p50);
            rep.measurements.push(m);
        }
        let entry = winner(&p50s).map(|(w, rel)| {
            for (k, m) in rep.measurements[first..].iter_mut().enumerate() {
                m.parameters["winner"] = json!(g.orders[w].name());
                m.parameters["of_winner"] = json!(rel[k]);
                m.parameters["orders_compared"] =
                    json!(g.orders.iter().map(|o| o.name()).collect::<Vec<_>>());
            }
            format!("{} {}", format_size(s), g.orders[w].name())
        });
        if method == Method::Temporal && s == self.bench.ref_size {
            self.push_keys(g, s, &p50s, first, rep);
        }
        self.ctx.point_done();
        Ok(entry)
    }

    /// Order `oi`'s all-to-all at one point: rounds of its copies on `p` pinned threads in
    /// lockstep rounds (the crew's, [`Crew::rounds`]), as GB/s over the slowest thread.
    fn measure(&self, g: &Group, pt: Point, oi: usize) -> Result<Measurement, NotRun> {
        let Point {
            method,
            block_bytes: s,
            t_hyb_bytes,
            rounds,
        } = pt;
        let (p, isa, base) = (g.p, self.isa, self.base);
        let order = g.orders[oi];
        let sched = &g.schedules[oi];
        let run = Crew::of(self.ctx, p).rounds(self.budget, &|t| {
            for _ in 0..rounds {
                // SAFETY: the region holds 2 x p x p x s bytes (sizes were bounded by it)
                // and outlives the call; the order's schedules give each copy to one
                // thread (alltoall tests).
                unsafe { alltoall::run_copies(base, p, s, &sched[t], method, isa, t_hyb_bytes) };
            }
        });
        let bytes = alltoall::buffer_bytes(p, s) * rounds;
        let samples = gbs(&run.times, bytes as f64);
        let n = run.samples();
        let counters = run.counters.with_per_op("byte", (bytes * n) as u64);
        let d = Distribution::from_samples(&samples)
            .ok_or_else(|| Skip::new(format!("no valid samples at {s} bytes, P = {p}")))?;
        let name = self.bench.name();
        Ok(Measurement {
            id: format!(
                "{name}/{}/{}/{}/p{p}/{}",
                self.target,
                method.name(),
                order.name(),
                format_size(s)
            ),
            benchmark: name.into(),
            target: self.target.clone(),
            parameters: json!({
                "order": order.name(), "method": method.name(), "threads": p,
                "block_bytes": s, "rounds_per_sample": rounds, "isa": isa.name(),
                "buffer_bytes": alltoall::buffer_bytes(p, s),
                "hybrid_temporal_bytes": (method == Method::Hybrid).then_some(t_hyb_bytes),
                "hilbert_subgrid_rows_cols": (order == Order::Hilbert).then(|| {
                    let (r, c) = alltoall::hilbert_subgrid(p);
                    [r, c]
                }),
                "cpus": self.ctx.cpus.iter().take(p).collect::<Vec<_>>(),
                "rung": self.rung,
            }),
            unit: "GB/s".into(),
            method: "all-to-all among pinned threads in this copy order (HINT Algorithm 1-3), bytes read + written over the slowest thread's time; GB = 1e9 B".into(),
            distribution: d,
            placement: Some(self.placement.clone()),
            counters: Some(counters),
        })
    }

    /// The keys `alltoall_{order}_p{P}_gbs`: each order's p50 at the reference size, from
    /// the measurements from index `first` on.
    fn push_keys(&self, g: &Group, s: usize, p50s: &[f64], first: usize, rep: &mut Report) {
        let p = g.p;
        for (k, &order) in g.orders.iter().enumerate() {
            let m = &rep.measurements[first + k];
            rep.params.push(Param::new(
                format!("alltoall_{}_p{p}_gbs", order.name()),
                p50s[k],
                &self.target,
                format!(
                    "p50 all-to-all bandwidth, {} order, temporal copy, {p} thread(s), {} blocks (bytes read + written)",
                    order.name(),
                    format_size(s)
                ),
                vec![m.id.clone()],
            ));
        }
    }

    /// The warning that `p` threads' sizes stop short of the reference size (no keys).
    fn ref_size_warning(&self, p: usize) -> Warning {
        Warning {
            code: "alltoall_ref_size".into(),
            message: format!(
                "{}: with {p} thread(s) the reference size {} was not reached; no alltoall_*_p{p}_gbs keys",
                self.target,
                format_size(self.bench.ref_size)
            ),
            remediation: "a smaller --ref-size, or more memory (see the size_bound warning)"
                .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_rungs_are_the_ladder_from_two_threads() {
        use bench_core::topology::fixtures::Server;
        let rungs = |s: &Server, n: usize| {
            let cpus: Vec<usize> = (0..n).collect();
            default_rungs(Ladder::of(&s.topology(), &cpus)).counts()
        };
        assert_eq!(rungs(&Server::h200_host(), 16), [2, 4, 8, 16]);
        assert_eq!(rungs(&Server::h200_host(), 12), [2, 4, 8, 12]);
        assert_eq!(rungs(&Server::guest_2vcpu_amd(), 2), [2]);
        assert_eq!(rungs(&Server::guest_2vcpu_amd(), 1), [1]);
    }

    #[test]
    fn memory_is_the_region_of_the_largest_buffers() {
        let ctx = Context::quick_local();
        let p = ctx.cpus.len().min(2);
        let b = AlltoallOrderBench {
            orders: Order::ALL.to_vec(),
            methods: vec![Method::Temporal],
            threads: Some(Threads::List(vec![p])),
            max_size: 256 * KIB,
            ref_size: 4 * KIB,
            isa: None,
        };
        let buffers = alltoall::buffer_bytes(p, 256 * KIB);
        ctx.sizing.assume_available("anon", Some(4 * buffers));
        let need = b.memory(&ctx, &TargetSpec::Anon);
        assert_eq!(need.on_target_bytes, buffers.max(MIB), "{need:?}");
        assert_eq!(
            need.on_target_bytes,
            b.region_bytes(&ctx, &TargetSpec::Anon)
        );
        assert!(need.what.contains("256K blocks"), "{}", need.what);
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
            threads: Some(Threads::List(vec![p])),
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
                threads: Some(Threads::List(vec![3])),
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
