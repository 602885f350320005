//! `mem.agents` and `mem.agents-spread`: k pinned CPU agents moving a transfer of the same
//! size S each, all on one target or spread over two (seed 003, CCCL, Sec. 2.3,
//! Observation 2: "Issuing concurrent, similar requests to the same CXL device can
//! substantially degrade the effective performance perceived by each individual server";
//! Sec. 3.2: two nodes on one device each get half of its bandwidth, and interleaving over
//! devices restores it).
//!
//! An agent is one thread pinned to its own CPU (`--cpu`, round robin as every
//! multi-threaded family), standing for one CCCL rank. Its transfer is a copy between a
//! private buffer on its own CPU's NUMA node and its own range of the target:
//!
//! * `write`: the private buffer copied into the target, a rank publishing its chunk into
//!   the pool (the GPU -> pool direction, `d2h`, of `gpu.pool`);
//! * `read`: the target's range copied into the private buffer, a rank fetching a chunk
//!   (pool -> GPU, `h2d`).
//!
//! Both copy with non-temporal stores (+ sfence), as a DMA engine writes whole lines
//! without reading them first, so the target sees only the transfer's bytes. The agents
//! are a crew ([`bench_core::crew`]): released together into windows, each agent copying
//! its S part by part, over and over, until all stop together; its per-agent bandwidth is
//! its bytes / its own time, the aggregate the bytes all agents moved in the time all of
//! them ran / that time (the crew's window aggregate, as `mem.bandwidth`). Bytes counted
//! once (the paper's "bytes transferred / time"), not read + written; GB = 1e9 bytes.
//!
//! One target (`mem.agents`, a memory benchmark, run on every target of the run): agent t
//! gets bytes [t S, (t+1) S) of the target, for every k of the thread ladder (1, 2, 4, ...
//! and each level of the machine: one core, one L3, one node, one socket, all CPUs;
//! `bench_core::topology::ladder`), so B(1) and B(k) share S; the k agents run on the
//! rung's CPUs, and every measurement names its rung.
//! Spread (`mem.agents-spread`): the same agents round robin over two targets (agent t on
//! target t mod 2 at [(t div 2) S, ...)). The runner places one region per target; a
//! benchmark gets one, so the spread benchmark is planned as a device-like subject (run
//! once, after the memory targets) and allocates its two regions itself through
//! [`Region::allocate`], the one function that places and verifies memory (see
//! docs/architecture.md, "Two targets at once").

use crate::kernels::{self, Isa, IsaSet};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup, Subject,
};
use bench_core::crew::{Crew, Stream, Windows};
use bench_core::memory::{Access, OnMemory, Region, TargetArg, TargetSpec};
use bench_core::params::{Measurement, Skipped};
use bench_core::plan::Cost;
use bench_core::sizing::MEMORY_SHARE_DIVISOR;
use bench_core::stats::Distribution;
use bench_core::topology::ladder::{Rung, Threads};
use bench_core::topology::Topology;
use bench_core::units::{format_size, parse_positive_size, MIB};
use serde_json::json;

/// Name of the one-target benchmark.
pub const ONE: &str = "mem.agents";
/// Name of the spread benchmark.
pub const SPREAD: &str = "mem.agents-spread";
/// Why the spread part does not run on a machine without two far-memory targets.
pub const NEEDS_TWO: &str = "needs two memory targets";

/// What each agent's transfer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum AgentDir {
    /// Private local buffer -> target (a rank publishing its chunk into the pool).
    Write,
    /// Target -> private local buffer (a rank fetching a chunk from the pool).
    Read,
}

impl AgentDir {
    /// Both, in output order.
    pub const ALL: [AgentDir; 2] = [AgentDir::Write, AgentDir::Read];

    /// Name in keys and ids.
    pub fn name(self) -> &'static str {
        match self {
            AgentDir::Write => "write",
            AgentDir::Read => "read",
        }
    }
}

/// Where agent `t` of a run over `targets` targets works: (target index, byte offset in
/// that target's region) for transfers of `size` bytes, round robin over the targets.
pub fn placement_of(t: usize, targets: usize, size: usize) -> (usize, usize) {
    let n = targets.max(1);
    (t % n, (t / n) * size)
}

/// Bytes each target's region needs for `k` agents round robin over `targets` targets.
pub fn bytes_per_target(k: usize, targets: usize, size: usize) -> usize {
    k.div_ceil(targets.max(1)) * size
}

/// The configuration shared by both parts.
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct AgentsConfig {
    /// S, bytes per agent per transfer (`None`: from the target's DRAM working set).
    pub size: Option<usize>,
    /// Agent counts (`None`: the thread ladder of the run's CPUs).
    pub agents: Option<Threads>,
    pub dirs: Vec<AgentDir>,
}

impl Default for AgentsConfig {
    fn default() -> Self {
        AgentsConfig {
            size: None,
            agents: None,
            dirs: AgentDir::ALL.to_vec(),
        }
    }
}

impl AgentsConfig {
    /// S on these targets: `--size`, else so that every agent count's footprint is a
    /// streaming DRAM working set of its CPUs ([`Context::dram_stream_bytes`]): one agent's
    /// source plus destination (2 S) at least the single CPU's footprint, and k agents'
    /// (2 k S) at least the footprint of the rung's k CPUs (4 x the caches they can fill),
    /// for every rung of the thread ladder; in whole MiB, at least 64 MiB, the same with
    /// and without `--quick`. Also says which rule chose it.
    fn size<T: OnMemory>(&self, ctx: &Context, targets: &[&T]) -> (usize, String) {
        if let Some(s) = self.size {
            return (s, "--size".into());
        }
        let floor = 64 * MIB;
        let one = targets
            .iter()
            .map(|t| ctx.dram_stream_bytes(t, &ctx.cpus_for(1)).0)
            .max()
            .unwrap_or(0);
        // The rung whose CPUs need the largest S: (S it needs, its footprint, its label).
        let mut most = (0usize, 0usize, String::new());
        for r in self.rungs(ctx).iter().filter(|r| r.threads > 1) {
            let bytes = targets
                .iter()
                .map(|t| ctx.dram_stream_bytes(t, &r.cpus).0)
                .max()
                .unwrap_or(0);
            let need = bytes.div_ceil(2 * r.threads);
            if need > most.0 {
                most = (need, bytes, r.label.clone());
            }
        }
        let s = (one / 2).max(most.0).max(floor).div_ceil(MIB) * MIB;
        let mut rule = format!(
            "one agent's source + destination span {} (the streaming DRAM footprint of CPU {}: 4 x the caches it can fill)",
            format_size(2 * s),
            ctx.cpus_for(1)[0],
        );
        if most.0 > 0 {
            rule.push_str(&format!(
                "; k agents' 2 k S at least the footprint of their CPUs, most of all for {} ({})",
                most.2,
                format_size(most.1)
            ));
        }
        (s, rule)
    }

    /// The DRAM checks the keys stand on (one agent: the first CPU's stream;
    /// more: every CPU's, which confirms that 4 x the caches CPUs can fill leaves them;
    /// [`AgentsConfig::size`] makes every rung's footprint at least that of its CPUs), run
    /// here unless this run made them (one CPU: the one check covers both).
    fn checks(
        &self,
        ctx: &Context,
        region: &mut Region,
        rep: &mut Report,
    ) -> Result<Vec<usize>, NotRun> {
        let mut v = Vec::new();
        for threads in [1, ctx.cpus.len()] {
            let bytes = ctx
                .dram_stream_bytes(&region.origin().clone(), &ctx.cpus_for(threads))
                .0;
            if let Some(i) = crate::bandwidth::stream_check(ctx, region, threads, bytes, rep)? {
                v.push(i);
            }
        }
        v.dedup();
        Ok(v)
    }

    /// The rungs of the agent counts (the thread ladder, or `--agents`), each at most the
    /// CPUs of the run, by increasing count.
    fn rungs(&self, ctx: &Context) -> Vec<Rung> {
        let cpus = ctx.cpus.len();
        let mut v = ctx.ladder(self.agents.as_ref()).rungs;
        v.retain(|r| r.threads >= 1 && r.threads <= cpus);
        v.sort_by_key(|r| r.threads);
        v.dedup_by_key(|r| r.threads);
        v
    }

    /// Splits the rungs into those whose per-target bytes fit within the share of
    /// `target`'s memory a benchmark may take, and the counts of the rest.
    fn fitting(
        &self,
        ctx: &Context,
        target: &impl OnMemory,
        targets: usize,
        size: usize,
    ) -> (Vec<Rung>, Vec<usize>) {
        let avail = ctx.available(target);
        let (fit, rest): (Vec<Rung>, Vec<Rung>) = self.rungs(ctx).into_iter().partition(|r| {
            avail.is_none_or(|a| {
                bytes_per_target(r.threads, targets, size) <= a / MEMORY_SHARE_DIVISOR
            })
        });
        (fit, rest.into_iter().map(|r| r.threads).collect())
    }

    /// The rungs of one target's run and the counts left out: those whose ranges fit the
    /// share of the target's memory a benchmark may take ([`AgentsConfig::fitting`]), else
    /// the smallest count alone (a `--size` too large for the share: whether its ranges
    /// and private buffers fit the machine is the run's memory plan's to say, before
    /// anything is mapped).
    fn planned(
        &self,
        ctx: &Context,
        target: &impl OnMemory,
        size: usize,
    ) -> (Vec<Rung>, Vec<usize>) {
        let (mut fit, mut rest) = self.fitting(ctx, target, 1, size);
        if fit.is_empty() {
            if let Some(first) = self.rungs(ctx).into_iter().next() {
                rest.retain(|&k| k != first.threads);
                fit.push(first);
            }
        }
        (fit, rest)
    }

    /// The planned points: every direction at every rung of `rungs`, each agent moving
    /// `size` bytes a sample from DRAM; with each agent's private buffer to populate.
    fn cost(&self, ctx: &Context, rungs: &[Rung], size: usize) -> Cost {
        let mut cost = Cost::new();
        let cpus = union_of(rungs);
        cost.add(
            format!("private buffers of {} CPUs", cpus.len()),
            1,
            ctx.plan.expect.populate_s(size * cpus.len()),
        );
        for dir in &self.dirs {
            for r in rungs {
                let each = ctx.plan.expect.crew_point_s(
                    &ctx.topology,
                    &r.cpus,
                    2 * size,
                    &ctx.effort.crew,
                    false,
                );
                cost.add(format!("{} k = {}", dir.name(), r.label), 1, each);
            }
        }
        cost
    }
}

/// The NUMA node of `cpu` as a target (`anon` when the topology does not say).
fn local_target(topo: &Topology, cpu: usize) -> TargetSpec {
    topo.nodes
        .iter()
        .find(|n| n.cpus.contains(&cpu))
        .map_or(TargetSpec::Anon, |n| TargetSpec::Node(n.id))
}

/// One measured point: k agents (on a rung's CPUs), a direction, the crew's windows.
struct Point<'r> {
    k: usize,
    rung: &'r Rung,
    dir: AgentDir,
    windows: Windows,
}

/// Every CPU of `rungs`, in the order they first appear.
fn union_of(rungs: &[Rung]) -> Vec<usize> {
    let mut v: Vec<usize> = Vec::new();
    for r in rungs {
        for &c in &r.cpus {
            if !v.contains(&c) {
                v.push(c);
            }
        }
    }
    v
}

/// The shared measuring loop: `regions` are the targets (agents round robin over them);
/// each agent's private buffer is placed on its CPU's node.
struct Agents<'a> {
    ctx: &'a Context,
    isa: Isa,
    size: usize,
    /// Base address of each target's region.
    bases: Vec<usize>,
    /// Each CPU's private buffer: (CPU, base address).
    locals: Vec<(usize, usize)>,
}

impl Agents<'_> {
    fn measure<'r>(&self, rung: &'r Rung, dir: AgentDir) -> Result<Point<'r>, NotRun> {
        let (size, isa, n) = (self.size, self.isa, self.bases.len());
        let k = rung.threads;
        // Agent t on rung.cpus[t], with that CPU's private buffer.
        let locals: Vec<usize> = rung
            .cpus
            .iter()
            .map(|c| {
                self.locals
                    .iter()
                    .find(|(cpu, _)| cpu == c)
                    .map(|&(_, a)| a)
                    .expect("a private buffer for every CPU of the rungs")
            })
            .collect();
        let windows = Crew::on(&self.ctx.timer, &rung.cpus)
            .windows(self.ctx.effort.crew, &|t| {
                let (i, off) = placement_of(t, n, size);
                let far = self.bases[i] + off;
                let local = locals[t];
                let (src, dst) = match dir {
                    AgentDir::Write => (local, far),
                    AgentDir::Read => (far, local),
                };
                // SAFETY: agent t's range of its target, [off, off + size), lies inside
                // that region (sized by bytes_per_target) and no other agent's range
                // overlaps it (placement_of); its private buffer is its own region of
                // `size` bytes. All regions outlive the crew.
                Ok(unsafe { Stream::between(isa, true, src as *const u8, dst as *mut u8, size) })
            })
            .map_err(|e| NotRun::skip(e.reason()))?;
        Ok(Point {
            k,
            rung,
            dir,
            windows,
        })
    }
}

/// Allocates a private buffer (`size` bytes) for each of `cpus` on its node.
fn private_buffers(ctx: &Context, cpus: &[usize], size: usize) -> Result<Vec<Region>, NotRun> {
    cpus.iter()
        .map(|&cpu| {
            let spec = local_target(&ctx.topology, cpu);
            Region::allocate(&spec, size, &ctx.topology).map_err(|e| {
                NotRun::skip(format!(
                    "the private buffer of the agent on CPU {cpu} ({spec}, {}): {e}",
                    format_size(size)
                ))
            })
        })
        .collect()
}

/// Each region's target and placement, for a measurement's parameters.
fn placements(regions: &[Region]) -> Vec<serde_json::Value> {
    regions
        .iter()
        .map(|r| json!({"target": r.origin().to_string(), "placement": r.placement()}))
        .collect()
}

/// Measures every direction x agent count with agents round robin over the regions at
/// `bases`, each with its private buffer in `locals`, and reports each point.
#[allow(clippy::too_many_arguments)]
fn measure_points(
    ctx: &Context,
    dirs: &[AgentDir],
    rungs: &[Rung],
    bases: Vec<usize>,
    local_cpus: &[usize],
    locals: &mut [Region],
    labels: &Labels<'_>,
    rep: &mut Report,
) -> Result<(), NotRun> {
    let agents = Agents {
        ctx,
        isa: labels.isa,
        size: labels.size,
        bases,
        locals: local_cpus
            .iter()
            .copied()
            .zip(locals.iter_mut().map(|r| r.as_mut_ptr() as usize))
            .collect(),
    };
    for &dir in dirs {
        for rung in rungs {
            let p = agents.measure(rung, dir)?;
            report_point(ctx, labels, &p, rep)?;
            ctx.point_done();
        }
    }
    Ok(())
}

/// The params and measurements of one point.
struct Labels<'a> {
    bench: &'static str,
    target: &'a str,
    /// `agents` or `agents_spread`.
    key_prefix: &'static str,
    size: usize,
    size_rule: &'a str,
    isa: Isa,
    targets: Vec<String>,
    placement: Option<bench_core::memory::Placement>,
    placements: serde_json::Value,
}

fn report_point(ctx: &Context, l: &Labels<'_>, p: &Point, rep: &mut Report) -> Result<(), NotRun> {
    let w = &p.windows;
    let (Some(dp), Some(da)) = (w.per_thread(), w.aggregate()) else {
        return Err(NotRun::skip(format!(
            "no valid window for {} agents {}",
            p.k,
            p.dir.name()
        )));
    };
    let id = format!("{}/{}/{}/k{}", l.bench, l.target, p.dir.name(), p.k);
    let p50s = w.thread_p50s();
    let share_min = if p50s.is_empty() {
        f64::NAN
    } else {
        let sum: f64 = p50s.iter().sum();
        p50s.iter().cloned().fold(f64::INFINITY, f64::min) * p50s.len() as f64 / sum
    };
    let bytes: u64 = w.used().iter().map(|f| f.bytes).sum();
    let counters = w.counters().with_per_op("byte", bytes);
    ctx.progress(&format!(
        "{id}: {:.2} GB/s per agent, {:.2} GB/s aggregate{}",
        dp.p50,
        da.p50,
        counters.summary()
    ));
    rep.warnings.extend(w.warnings(l.target, &id));
    let cpus: Vec<usize> = p.rung.cpus.clone();
    let what = match p.dir {
        AgentDir::Write => "private local buffer -> target (a rank publishing its chunk)",
        AgentDir::Read => "target -> private local buffer (a rank fetching a chunk)",
    };
    let spread = l.targets.len() > 1;
    let layout = if spread {
        format!(
            "round robin over {} (agent t on target t mod 2, at (t div 2) x S)",
            l.targets.join(" and ")
        )
    } else {
        "agent t at [t S, (t+1) S) of the target".into()
    };
    let parameters = json!({
        "agents": p.k, "direction": p.dir.name(), "transfer": what,
        "size_bytes_per_agent": l.size, "size_rule": l.size_rule,
        "targets": l.targets, "layout": layout, "cpus": cpus, "rung": p.rung.label,
        "isa": l.isa.name(), "stores": "non-temporal + sfence",
        "bytes_counted": "transferred (each byte once; not read + written)",
        "agent_p50_gbs": p50s, "share_min_ratio": share_min,
        "placements": l.placements,
        "crew": w.parameters(),
    });
    let m = |id: String, d: Distribution, method: String| Measurement {
        id,
        benchmark: l.bench.into(),
        target: l.target.into(),
        parameters: parameters.clone(),
        unit: "GB/s".into(),
        method,
        distribution: d,
        placement: l.placement.clone(),
        counters: Some(counters.clone()),
    };
    let per_id = format!("{id}/per-agent");
    let agg_id = format!("{id}/aggregate");
    let how = "each pinned agent copies its S part by part, over and over";
    rep.measurements.push(m(per_id.clone(), dp.clone(), format!("{how}; sample = an agent's bytes / its own time in a window, every agent's every used window; {}", w.method())));
    rep.measurements.push(m(
        agg_id.clone(),
        da.clone(),
        format!("{how}; {}", w.method()),
    ));
    let (dir, k) = (p.dir.name(), p.k);
    let prefix = l.key_prefix;
    let common = format!(
        "{k} agent(s) on CPUs {cpus:?}, {} each, {what}; {layout}; {} NT stores; bytes transferred counted once; GB = 1e9 B",
        format_size(l.size),
        l.isa
    );
    let noisy = w.noisy();
    rep.params.push(
        Param::new(
            format!("{prefix}_{dir}_k{k}_bw_gbs"),
            dp.p50,
            l.target,
            format!(
                "p50 over {} per-agent rates (an agent's bytes / its own time, in each used window); {common}",
                dp.n
            ),
            vec![per_id],
        )
        .noisy(noisy.clone()),
    );
    rep.params.push(
        Param::new(
            format!("{prefix}_{dir}_k{k}_agg_bw_gbs"),
            da.p50,
            l.target,
            format!(
                "p50 over {} windows of the bytes all agents moved in the time all ran / that time; {common}",
                da.n
            ),
            vec![agg_id],
        )
        .noisy(noisy),
    );
    Ok(())
}

/// k agents on one target (a memory benchmark: run on every target of the run).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentsBench {
    /// Sizes, counts, directions.
    pub config: AgentsConfig,
}

impl Benchmark for AgentsBench {
    fn name(&self) -> &'static str {
        ONE
    }

    fn requires(&self) -> Requirements {
        Requirements {
            min_cpus: 1,
            target_kinds: vec![],
        }
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        let (size, _) = self.config.size(ctx, &[target]);
        let (rungs, _) = self.config.planned(ctx, target, size);
        bytes_per_target(rungs.last().map_or(1, |r| r.threads), 1, size)
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> bench_core::memory::budget::Need {
        self.memory_need(ctx, target)
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let (size, _) = self.config.size(ctx, &[target]);
        let (rungs, _) = self.config.planned(ctx, target, size);
        let checks = crate::bandwidth::stream_checks_cost(ctx, target, ctx.cpus.len());
        let mut cost = self.config.cost(ctx, &rungs, size);
        cost.extend(checks);
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let isa = IsaSet::detect()
            .choose(None)
            .map_err(|e| e.to_string())
            .and_then(kernels::with_nt_store)
            .map_err(NotRun::skip)?;
        let spec = region.origin().clone();
        let target = spec.to_string();
        let (size, rule) = self.config.size(ctx, &[&spec]);
        let (rungs, too_big) = self.config.planned(ctx, &spec, size);
        let mut rep = Report::default();
        for k in too_big {
            rep.skipped.push(Skipped {
                benchmark: ONE.into(),
                target: target.clone(),
                reason: format!(
                    "{k} agents x {} exceed 1/{MEMORY_SHARE_DIVISOR} of the memory {target} offers",
                    format_size(size)
                ),
            });
        }
        let rungs: Vec<Rung> = rungs
            .into_iter()
            .filter(|r| r.threads * size <= region.len())
            .collect();
        if rungs.is_empty() {
            return Err(NotRun::skip(format!(
                "no agent count fits: {} per agent, a region of {}",
                format_size(size),
                format_size(region.len())
            )));
        };
        if !region.is_writable() {
            return Err(NotRun::skip(format!("{target} is mapped read-only")));
        }
        let local_cpus = union_of(&rungs);
        let mut locals = private_buffers(ctx, &local_cpus, size)?;
        let labels = Labels {
            bench: ONE,
            target: &target,
            key_prefix: "agents",
            size,
            size_rule: &rule,
            isa,
            targets: vec![target.clone()],
            placement: Some(region.placement().clone()),
            placements: json!({ "private_buffers": placements(&locals) }),
        };
        let bases = vec![region.as_mut_ptr() as usize];
        measure_points(
            ctx,
            &self.config.dirs,
            &rungs,
            bases,
            &local_cpus,
            &mut locals,
            &labels,
            &mut rep,
        )?;
        drop(locals);
        if self.config.size.is_none() {
            let keys: Vec<String> = rep.params.iter().map(|p| p.key.clone()).collect();
            for i in self.config.checks(ctx, region, &mut rep)? {
                ctx.sizing.cover(i, keys.iter().cloned());
            }
        }
        Ok(rep)
    }
}

/// The two targets of the spread part, or why there are none.
#[derive(Debug, Clone, PartialEq)]
pub enum SpreadTargets {
    /// Two targets (named with `--spread`, or two far-memory nodes found).
    Pair(TargetSpec, TargetSpec),
    /// Not two targets: the reason.
    Unavailable(String),
}

impl SpreadTargets {
    /// The first two far-memory nodes of `topo`, or [`NEEDS_TWO`] with what was found.
    pub fn from_topology(topo: &Topology) -> SpreadTargets {
        let far: Vec<usize> = topo
            .nodes
            .iter()
            .filter(|n| n.likely_far_memory)
            .map(|n| n.id)
            .collect();
        match far.as_slice() {
            [a, b, ..] => SpreadTargets::Pair(TargetSpec::Node(*a), TargetSpec::Node(*b)),
            _ => SpreadTargets::Unavailable(format!(
                "{NEEDS_TWO}: this machine has {} far-memory node(s); name two with --spread node:A,node:B (or two dax: devices with --allow-write)",
                far.len()
            )),
        }
    }
}

/// The same agents round robin over two targets (run once, after the memory targets).
#[derive(Debug, Clone, PartialEq)]
pub struct SpreadBench {
    /// Sizes, counts, directions.
    pub config: AgentsConfig,
    /// The two targets.
    pub targets: SpreadTargets,
}

impl SpreadBench {
    fn label(&self) -> String {
        match &self.targets {
            SpreadTargets::Pair(a, b) => format!("{a}+{b}"),
            SpreadTargets::Unavailable(_) => "two memory targets".into(),
        }
    }

    /// The rungs of 2 agents or more whose transfers of `size` fit on both targets.
    fn rungs(&self, ctx: &Context, a: &TargetSpec, b: &TargetSpec, size: usize) -> Vec<Rung> {
        let (ra, _) = self.config.fitting(ctx, a, 2, size);
        let (rb, _) = self.config.fitting(ctx, b, 2, size);
        ra.into_iter()
            .filter(|r| r.threads >= 2 && rb.iter().any(|x| x.threads == r.threads))
            .collect()
    }
}

impl Benchmark for SpreadBench {
    fn name(&self) -> &'static str {
        SPREAD
    }

    fn cost(&self, ctx: &Context, _target: Option<&TargetSpec>) -> Cost {
        let SpreadTargets::Pair(a, b) = &self.targets else {
            return Cost::new();
        };
        let (size, _) = self.config.size(ctx, &[a, b]);
        let rungs = self.rungs(ctx, a, b, size);
        let kmax = rungs.last().map_or(0, |r| r.threads);
        let mut c = Cost::new();
        c.add(
            "both targets' regions",
            1,
            ctx.plan
                .expect
                .populate_s(2 * bytes_per_target(kmax, 2, size)),
        );
        c.extend(self.config.cost(ctx, &rungs, size));
        c
    }

    fn subject(&self) -> Subject {
        Subject::Device {
            target: self.label(),
        }
    }

    fn memory(&self, ctx: &Context, _target: &TargetSpec) -> bench_core::memory::budget::Need {
        self.memory_need(ctx)
    }

    fn run(&self, ctx: &Context, _input: Input<'_>) -> Result<Report, NotRun> {
        let (a, b) = match &self.targets {
            SpreadTargets::Pair(a, b) => (a, b),
            SpreadTargets::Unavailable(reason) => {
                // A part of `mem agents` the machine does not offer (not a skip of what
                // was asked: nothing was named).
                return Ok(Report {
                    skipped: vec![Skipped {
                        benchmark: SPREAD.into(),
                        target: String::new(),
                        reason: reason.clone(),
                    }],
                    ..Default::default()
                });
            }
        };
        let label = self.label();
        let isa = IsaSet::detect()
            .choose(None)
            .map_err(|e| e.to_string())
            .and_then(kernels::with_nt_store)
            .map_err(NotRun::skip)?;
        let (size, rule) = self.config.size(ctx, &[a, b]);
        let rungs = self.rungs(ctx, a, b, size);
        let Some(kmax) = rungs.last().map(|r| r.threads) else {
            return Err(NotRun::skip(format!(
                "needs at least 2 agents (CPUs) whose transfers of {} fit on {a} and {b}",
                format_size(size)
            )));
        };
        let each = bytes_per_target(kmax, 2, size);
        let mut regions = Vec::new();
        for t in [a, b] {
            let r = Region::allocate(t, each, &ctx.topology)
                .map_err(|e| NotRun::skip(format!("{t}: {e}")))?;
            if !r.is_writable() {
                return Err(NotRun::skip(format!("{t} is mapped read-only")));
            }
            regions.push(r);
        }
        let local_cpus = union_of(&rungs);
        let mut locals = private_buffers(ctx, &local_cpus, size)?;
        let labels = Labels {
            bench: SPREAD,
            target: &label,
            key_prefix: "agents_spread",
            size,
            size_rule: &rule,
            isa,
            targets: vec![a.to_string(), b.to_string()],
            placement: None,
            placements: json!({
                "targets": placements(&regions),
                "private_buffers": placements(&locals),
            }),
        };
        let bases = regions
            .iter_mut()
            .map(|r| r.as_mut_ptr() as usize)
            .collect();
        let mut rep = Report::default();
        measure_points(
            ctx,
            &self.config.dirs,
            &rungs,
            bases,
            &local_cpus,
            &mut locals,
            &labels,
            &mut rep,
        )?;
        Ok(rep)
    }
}

/// k pinned CPU agents, each copying a transfer of the same size S between a private
/// buffer on its own node and its own range of the target, all at once: per-agent and
/// aggregate bandwidth for k = 1 .. #CPUs on one target, and spread round robin over two
/// targets (seed 003, Observation 2). Non-temporal stores; bytes transferred counted once;
/// GB = 10^9 B/s.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentsArgs {
    /// Bytes each agent transfers per sample, S, the same for every k (default: half the
    /// larger of the target's DRAM working set and 4 x the LLC, at least 64M, or 16M
    /// with --quick).
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub size: Option<usize>,
    /// Agent counts, comma-separated (1,2,3), or `every` (1 .. the CPUs); default: the
    /// thread ladder (1, 2, 4, ... and every level of the machine: one core, one L2, one
    /// L3, one node, one socket, all CPUs); each at most the CPUs of the run.
    #[arg(long, value_name = "LIST|every")]
    pub agents: Option<Threads>,
    /// Directions (comma-separated; default both): write (private buffer -> target: a
    /// rank publishing its chunk into the pool), read (target -> private buffer).
    #[arg(long = "dir", value_delimiter = ',', value_enum)]
    pub dirs: Vec<AgentDir>,
    /// Two targets to spread the agents over, round robin: node:A,node:B or two
    /// dax:/dev/daxX.Y (with --allow-write). Default: two far-memory nodes if the machine
    /// has them, else that part is skipped ("needs two memory targets").
    #[arg(long, value_delimiter = ',', value_name = "SPEC,SPEC")]
    pub spread: Option<Vec<TargetArg>>,
}

impl AgentsArgs {
    /// The configuration, validated (no machine needed).
    pub fn config(&self) -> Result<AgentsConfig, BoxError> {
        if self.size.is_some_and(|s| s < 4096) {
            return Err("--size must be at least 4K".into());
        }
        if let Some(Threads::List(a)) = &self.agents {
            if a.is_empty() || a.contains(&0) {
                return Err("--agents takes counts of at least 1".into());
            }
        }
        Ok(AgentsConfig {
            size: self.size,
            agents: self.agents.clone(),
            dirs: if self.dirs.is_empty() {
                AgentDir::ALL.to_vec()
            } else {
                let mut d = self.dirs.clone();
                d.sort_unstable();
                d.dedup();
                d
            },
        })
    }

    /// The spread targets: those named (checked), else from `topo`.
    pub fn spread_targets(
        &self,
        opts: &Options,
        topo: &Topology,
    ) -> Result<SpreadTargets, BoxError> {
        let Some(v) = &self.spread else {
            return Ok(SpreadTargets::from_topology(topo));
        };
        let [a, b] = v.as_slice() else {
            return Err(format!("--spread takes two targets, {} given", v.len()).into());
        };
        let (a, b) = (&a.resolve(topo)?, &b.resolve(topo)?);
        if a == b {
            return Err(format!("--spread needs two different targets, {a} given twice").into());
        }
        for t in [a, b] {
            t.validate(topo)?;
            t.check_write(Access {
                allow_write: opts.allow_write,
                force: false,
            })?;
        }
        Ok(SpreadTargets::Pair(a.clone(), b.clone()))
    }
}

impl Setup for AgentsArgs {
    /// A count of agents the run's CPUs cannot give (one agent per CPU) is refused here,
    /// never cut to the CPUs there are.
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        if let Some(a) = &self.agents {
            a.check("--agents", "agent", opts.cpus.len())?;
        }
        let config = self.config()?;
        let targets = self.spread_targets(opts, &Topology::system())?;
        Ok(Planned {
            benchmarks: vec![
                Box::new(AgentsBench {
                    config: config.clone(),
                }),
                Box::new(SpreadBench { config, targets }),
            ],
            skipped: vec![],
        })
    }
}

mod memory;

#[cfg(test)]
mod tests;
