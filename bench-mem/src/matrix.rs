//! `mem.matrix`: the NUMA node matrices, Intel MLC's first output: idle latency and
//! all-CPU read bandwidth from every node with CPUs (initiator, a row) to every node with
//! memory (target, a column; CPU-less CXL nodes included).
//!
//! Each cell allocates its own region bound to the target node (bench_core::memory: the
//! placement is checked page by page), sized from the caches the initiator's CPUs can
//! fill together (4 x, [`Context::dram_touched`] for the chase and
//! [`Context::dram_stream_bytes`] for the read), then:
//!
//! * latency: the default chase ([`crate::latency::chase_point`]) pinned to the first of
//!   the initiator's allowed CPUs;
//! * bandwidth: the read kernel of `mem bandwidth` ([`crate::bandwidth::read_point`]) by
//!   a crew of every allowed CPU of the initiator, each over its own slice (the window
//!   aggregate, as `mem_bw_gbs`);
//! * with `--loaded`: the chase again while the other CPUs of the initiator read the
//!   target at full rate ([`crate::loaded::full_load_point`], MLC's loaded latency).
//!
//! Which cells, from which CPUs, and which cells the keys stand on is [`plan`] and
//! [`key_cells`]: pure functions of the topology and the options, tested on fixture
//! topologies. Cells are classified by the SLIT ([`classify`]): the initiator's own node is
//! `local`, a node without CPUs `far`, a node with CPUs at a distance below twice the
//! local one a same-socket `neighbour` (sub-NUMA clustering), any other node with CPUs
//! `remote` (another socket).

use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Setup, Skip,
    Subject,
};
use bench_core::chase::ChainLayout;
use bench_core::memory::budget::Need;
use bench_core::memory::{Region, TargetSpec};
use bench_core::params::{CellFigure, Measurement, NumaCell, NumaMatrix, PlacementSummary};
use bench_core::params::{Skipped, Warning};
use bench_core::pin::format_cpu_list;
use bench_core::plan::Cost;
use bench_core::topology::Topology;
use bench_core::units::{human_bytes, MIB};

/// The benchmark's name.
pub const NAME: &str = "mem.matrix";
/// Why `all` does not run it on a machine with one NUMA node.
pub const ONE_NODE: &str = "one NUMA node: no matrix";
/// The target label of its keys and skips (`numa_local_lat_ns@numa`).
pub const LABEL: &str = "numa";

/// What a cell's target is to its initiator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// The initiator's own node.
    Local,
    /// A node with CPUs on the initiator's socket (sub-NUMA clustering): SLIT distance
    /// below twice the local distance.
    Neighbour,
    /// A node with CPUs on another socket.
    Remote,
    /// A node without CPUs (CXL or other far memory).
    Far,
}

impl Class {
    /// Its name in params.json (`local`, `neighbour`, `remote`, `far`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Local => "local",
            Class::Neighbour => "neighbour",
            Class::Remote => "remote",
            Class::Far => "far",
        }
    }

    /// The stem of its keys (`numa_local`), `None` for a class without keys.
    pub fn key_stem(self) -> Option<&'static str> {
        match self {
            Class::Local => Some("numa_local"),
            Class::Remote => Some("numa_remote"),
            Class::Far => Some("numa_far"),
            Class::Neighbour => None,
        }
    }
}

/// One cell to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellPlan {
    /// The node whose CPUs measure.
    pub initiator: usize,
    /// The node the memory is bound to.
    pub target: usize,
    /// What the target is to the initiator.
    pub class: Class,
    /// SLIT distance initiator -> target, when the kernel reports it.
    pub distance: Option<u32>,
    /// The CPUs that measure: the initiator's CPUs among the allowed ones, in order (the
    /// first one chases).
    pub cpus: Vec<usize>,
}

/// The cells of a matrix, row by row, and the initiators left out with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MatrixPlan {
    /// Initiators measured (rows).
    pub initiators: Vec<usize>,
    /// Targets measured (columns).
    pub targets: Vec<usize>,
    /// One cell per initiator and target.
    pub cells: Vec<CellPlan>,
    /// Initiators that cannot measure (no allowed CPU there), with the reason.
    pub skipped: Vec<(usize, String)>,
}

/// The SLIT distance from node `a` to node `b` (the kernel lists a node's distances in the
/// order of the online nodes).
pub fn distance(topo: &Topology, a: usize, b: usize) -> Option<u32> {
    let pos = topo.nodes.iter().position(|n| n.id == b)?;
    topo.node(a)?.distances.get(pos).copied()
}

/// What node `target` is to node `initiator` (see [`Class`]); without distances, every
/// other node with CPUs is `remote`.
pub fn classify(topo: &Topology, initiator: usize, target: usize) -> Class {
    if initiator == target {
        return Class::Local;
    }
    if topo.node(target).is_none_or(|n| n.cpus.is_empty()) {
        return Class::Far;
    }
    match (
        distance(topo, initiator, initiator),
        distance(topo, initiator, target),
    ) {
        (Some(local), Some(d)) if local > 0 && d < 2 * local => Class::Neighbour,
        _ => Class::Remote,
    }
}

/// The nodes named, each checked to exist and to pass `ok` (else the error says `what`);
/// all nodes passing `ok` when none are named.
fn select(
    topo: &Topology,
    named: Option<&[usize]>,
    ok: impl Fn(&bench_core::topology::NumaNode) -> bool,
    what: &str,
) -> Result<Vec<usize>, String> {
    let Some(named) = named else {
        return Ok(topo.nodes.iter().filter(|n| ok(n)).map(|n| n.id).collect());
    };
    let mut v = Vec::new();
    for &id in named {
        match topo.node(id) {
            None => return Err(format!("node {id} does not exist here")),
            Some(n) if !ok(n) => return Err(format!("node {id} has no {what}")),
            Some(_) if v.contains(&id) => {}
            Some(_) => v.push(id),
        }
    }
    Ok(v)
}

/// The matrix of `topo` as measured from the `allowed` CPUs: initiators `cpu_nodes`
/// (default: every node with CPUs), targets `mem_nodes` (default: every node with memory
/// or CPUs). An initiator none of whose CPUs is allowed is left out with the reason; a
/// node named that does not exist, or has no CPUs (initiator) or no memory (target), is
/// an error.
pub fn plan(
    topo: &Topology,
    allowed: &[usize],
    cpu_nodes: Option<&[usize]>,
    mem_nodes: Option<&[usize]>,
) -> Result<MatrixPlan, String> {
    let initiators = select(topo, cpu_nodes, |n| !n.cpus.is_empty(), "CPUs")?;
    let targets = select(
        topo,
        mem_nodes,
        |n| n.mem_total_bytes > 0 || !n.cpus.is_empty(),
        "memory",
    )?;
    let mut p = MatrixPlan {
        targets: targets.clone(),
        ..Default::default()
    };
    for i in initiators {
        let node_cpus = topo.node(i).map(|n| n.cpus.clone()).unwrap_or_default();
        let cpus: Vec<usize> = allowed
            .iter()
            .copied()
            .filter(|c| node_cpus.contains(c))
            .collect();
        if cpus.is_empty() {
            p.skipped.push((
                i,
                format!(
                    "none of node {i}'s CPUs ({}) is allowed (--cpu, or the process's affinity)",
                    format_cpu_list(&node_cpus)
                ),
            ));
            continue;
        }
        p.initiators.push(i);
        for &t in &targets {
            p.cells.push(CellPlan {
                initiator: i,
                target: t,
                class: classify(topo, i, t),
                distance: distance(topo, i, t),
                cpus: cpus.clone(),
            });
        }
    }
    Ok(p)
}

/// The cells each key class stands on: the row of the first initiator measured, its
/// cells of that class (`local`: its own node; `remote`: nodes with CPUs on other
/// sockets; `far`: nodes without CPUs), by index into `cells`. Classes without a cell
/// are left out; `neighbour` cells give no key.
pub fn key_cells(cells: &[CellPlan]) -> Vec<(Class, Vec<usize>)> {
    let Some(first) = cells.first().map(|c| c.initiator) else {
        return vec![];
    };
    [Class::Local, Class::Remote, Class::Far]
        .into_iter()
        .map(|class| {
            let idx = cells
                .iter()
                .enumerate()
                .filter(|(_, c)| c.initiator == first && c.class == class)
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            (class, idx)
        })
        .filter(|(_, idx)| !idx.is_empty())
        .collect()
}

/// The benchmark: one matrix, run once (it places its own regions, one per cell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixBench {
    /// Initiator nodes (`None`: every node with CPUs).
    pub cpu_nodes: Option<Vec<usize>>,
    /// Target nodes (`None`: every node with memory).
    pub mem_nodes: Option<Vec<usize>>,
    /// Also the loaded latency of each cell.
    pub loaded: bool,
}

impl MatrixBench {
    fn plan(&self, topo: &Topology, allowed: &[usize]) -> Result<MatrixPlan, String> {
        plan(
            topo,
            allowed,
            self.cpu_nodes.as_deref(),
            self.mem_nodes.as_deref(),
        )
    }
}

/// A cell's figure from the measurement just recorded.
fn figure(m: Option<&Measurement>, bytes: usize) -> Result<CellFigure, NotRun> {
    let m = m.ok_or_else(|| NotRun::failed("a measured point left no measurement"))?;
    Ok(CellFigure {
        id: m.id.clone(),
        unit: m.unit.clone(),
        bytes,
        distribution: m.distribution.clone(),
    })
}

/// What one cell measures over, and the region that holds it.
struct CellSizes {
    /// The chase's working set (touched bytes of the default chain).
    touched: usize,
    /// How the chase was sized.
    sizing: bench_core::sizing::DramSizing,
    /// The read's footprint.
    stream: usize,
    /// The initiator's CPUs that read beside the loaded chase.
    loaders: usize,
    /// Each reader's buffer past the chase (0 without `--loaded`).
    load_bytes: usize,
    /// The cell's region: the larger of the chase, the read and the loaded point.
    bytes: usize,
}

impl CellSizes {
    /// The sizes of cell `c` for its CPUs' context `ctx` (its CPUs the cell's).
    fn of(ctx: &Context, c: &CellPlan, loaded: bool) -> CellSizes {
        let target = TargetSpec::Node(c.target);
        let layout = ChainLayout::DEFAULT;
        let (touched, sizing) = ctx.dram_touched(&target, &c.cpus, layout.span_per_touched());
        let touched = layout.round_touched(touched);
        let span = layout.span_bytes(touched);
        let (stream, _) = ctx.dram_stream_bytes(&target, &c.cpus);
        let loaders = c.cpus.len() - 1;
        let load_bytes = match (loaded, loaders) {
            (true, 1..) => stream.div_ceil(loaders).max(64 * MIB).div_ceil(4096) * 4096,
            _ => 0,
        };
        CellSizes {
            touched,
            sizing,
            stream,
            loaders,
            load_bytes,
            bytes: span.max(stream).max(span + load_bytes * loaders),
        }
    }

    /// What the cell maps at most at once: its region, and beside it the chain
    /// builder's scratch or a chase point's samples, and with `--loaded` the loaded
    /// point's sample buffers (their rig and a copy).
    fn need(&self, ctx: &Context, c: &CellPlan) -> Need {
        let target = TargetSpec::Node(c.target);
        let layout = ChainLayout::DEFAULT;
        let region = target.mapped_bytes(self.bytes, &ctx.topology);
        let chase = layout
            .build_scratch_bytes(self.touched, bench_core::chase::ChaseOrder::DEFAULT)
            .max(crate::latency::SAMPLE_BYTES);
        let heap = if self.load_bytes > 0 {
            chase.max(2 * crate::loaded::RIG_BYTES)
        } else {
            chase
        };
        Need {
            bytes: region + heap,
            on_target_bytes: region,
            what: format!(
                "the region of cell node {} -> node {} ({}; cells one at a time), and {} of chain scratch and samples beside it",
                c.initiator,
                c.target,
                human_bytes(region as u64),
                human_bytes(heap as u64)
            ),
            fit: None,
            grows_to_bytes: 0,
        }
    }
}

/// Measures one cell: its region on the target, the chase, the read, and the loaded
/// chase when asked.
fn measure_cell(
    ctx: &Context,
    c: &CellPlan,
    loaded: bool,
    rep: &mut Report,
) -> Result<NumaCell, NotRun> {
    let mut cctx = ctx.clone();
    cctx.cpus = c.cpus.clone();
    let ctx = &cctx;
    let target = TargetSpec::Node(c.target);
    let CellSizes {
        touched,
        sizing,
        stream,
        loaders,
        load_bytes,
        bytes,
    } = CellSizes::of(ctx, c, loaded);
    let mut region = Region::allocate(&target, bytes, &ctx.topology)
        .map_err(|e| NotRun::skip(format!("{target}: {e}")))?;
    if let Some(w) = &region.placement().warning {
        rep.warnings.push(Warning {
            code: "placement".into(),
            message: format!("{NAME} node:{} -> {target}: {w}", c.initiator),
            remediation: String::new(),
        });
    }
    bench_core::pin::pin_current(c.cpus[0]).map_err(|e| Skip::new(e.to_string()))?;
    let id = |what: &str| format!("{NAME}/node:{}/{target}/{what}", c.initiator);
    ctx.progress(&format!(
        "{NAME}: node {} -> node {}",
        c.initiator, c.target
    ));
    crate::latency::chase_point(ctx, &mut region, touched, (NAME, id("latency")), rep)?;
    let latency = figure(rep.measurements.last(), touched)?;
    let threads = c.cpus.len();
    crate::bandwidth::read_point(ctx, &mut region, (threads, stream), (NAME, id("read")), rep)?;
    let bandwidth = figure(rep.measurements.last(), stream.min(region.len()))?;
    let loaded_latency = if !loaded {
        None
    } else if loaders == 0 {
        rep.skipped.push(Skipped {
            benchmark: NAME.into(),
            target: format!("node:{} -> {target}", c.initiator),
            reason: "loaded latency needs 2 allowed CPUs on the initiator node: one chases, the others read".into(),
        });
        None
    } else {
        crate::loaded::full_load_point(
            ctx,
            &mut region,
            (touched, load_bytes, &sizing),
            (NAME, id("loaded")),
            rep,
        )?;
        Some(figure(rep.measurements.last(), touched)?)
    };
    Ok(NumaCell {
        initiator: c.initiator,
        target: c.target,
        class: c.class.name().into(),
        distance: c.distance,
        cpus: format_cpu_list(&c.cpus),
        latency,
        bandwidth,
        loaded_latency,
        placement: PlacementSummary::of(region.placement(), c.target, region.len()),
    })
}

/// The keys of the measured cells (`planned` and `cells` in the same order: the cells
/// that could not be measured are left out of both).
fn key_params(planned: &[CellPlan], cells: &[NumaCell]) -> Vec<Param> {
    let mut out = Vec::new();
    for (class, idx) in key_cells(planned) {
        let Some(stem) = class.key_stem() else {
            continue;
        };
        let pick = |f: fn(&NumaCell) -> &CellFigure| -> (Vec<f64>, Vec<String>) {
            idx.iter()
                .map(|&i| (f(&cells[i]).distribution.p50, f(&cells[i]).id.clone()))
                .unzip()
        };
        for (suffix, f, what) in [
            (
                "lat_ns",
                (|c: &NumaCell| &c.latency) as fn(&NumaCell) -> &CellFigure,
                "chase",
            ),
            ("bw_gbs", |c: &NumaCell| &c.bandwidth, "read"),
        ] {
            let (values, from) = pick(f);
            let Some(v) = bench_core::stats::median(&values) else {
                continue;
            };
            let c0 = &planned[idx[0]];
            let method = format!(
                "median over {} {} cell(s) of node {} (nodes {}) of each cell's {what} p50",
                values.len(),
                class.name(),
                c0.initiator,
                format_cpu_list(&idx.iter().map(|&i| planned[i].target).collect::<Vec<_>>()),
            );
            out.push(Param::new(
                format!("{stem}_{suffix}"),
                v,
                LABEL,
                method,
                from,
            ));
        }
    }
    out
}

impl Benchmark for MatrixBench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn subject(&self) -> Subject {
        Subject::Device {
            target: LABEL.into(),
        }
    }

    /// The largest cell's (each cell's region is released before the next is placed).
    fn memory(&self, ctx: &Context, _target: &TargetSpec) -> Need {
        let Ok(plan) = self.plan(&ctx.topology, &ctx.cpus) else {
            return Need::on_target(0, "nothing: no matrix on this machine");
        };
        plan.cells
            .iter()
            .map(|c| CellSizes::of(&ctx.with_cpus(&c.cpus), c, self.loaded).need(ctx, c))
            .fold(Need::on_target(0, "nothing: no cell"), Need::max)
    }

    fn cost(&self, ctx: &Context, _target: Option<&TargetSpec>) -> Cost {
        let Ok(plan) = self.plan(&ctx.topology, &ctx.cpus) else {
            return Cost::new();
        };
        let mut cost = Cost::new();
        for c in &plan.cells {
            let cctx = ctx.with_cpus(&c.cpus);
            let target = TargetSpec::Node(c.target);
            let layout = ChainLayout::DEFAULT;
            let (touched, _) = cctx.dram_touched(&target, &c.cpus, layout.span_per_touched());
            let (stream, _) = cctx.dram_stream_bytes(&target, &c.cpus);
            let e = &ctx.plan.expect;
            let what = format!("node {} -> node {}", c.initiator, c.target);
            cost.add(
                format!("{what}: latency"),
                1,
                e.populate_s(layout.span_bytes(touched).max(stream))
                    + crate::latency::chase_point_s(&cctx, touched, ctx.effort.mem.latency_point),
            );
            let per_thread = stream / c.cpus.len().max(1);
            cost.add(
                format!("{what}: read bandwidth"),
                1,
                e.crew_point_s(&ctx.topology, &c.cpus, per_thread, &ctx.effort.crew, false),
            );
            if self.loaded && c.cpus.len() > 1 {
                cost.add(
                    format!("{what}: loaded latency"),
                    1,
                    crate::latency::chase_point_s(&cctx, touched, ctx.effort.mem.loaded_point),
                );
            }
        }
        cost
    }

    fn run(&self, ctx: &Context, _input: Input<'_>) -> Result<Report, NotRun> {
        let plan = self.plan(&ctx.topology, &ctx.cpus).map_err(NotRun::skip)?;
        let mut rep = Report::default();
        for (node, reason) in &plan.skipped {
            rep.skipped.push(Skipped {
                benchmark: NAME.into(),
                target: format!("node:{node}"),
                reason: reason.clone(),
            });
        }
        let mut planned = Vec::new();
        let mut cells = Vec::new();
        for c in &plan.cells {
            match measure_cell(ctx, c, self.loaded, &mut rep) {
                Ok(cell) => {
                    planned.push(c.clone());
                    cells.push(cell);
                }
                Err(NotRun::Skipped { reason }) => rep.skipped.push(Skipped {
                    benchmark: NAME.into(),
                    target: format!("node:{} -> node:{}", c.initiator, c.target),
                    reason,
                }),
                Err(e) => return Err(e),
            }
        }
        // The run's main thread goes back to the run's first CPU.
        if let Some(&cpu) = ctx.cpus.first() {
            let _ = bench_core::pin::pin_current(cpu);
        }
        if cells.is_empty() {
            let why: Vec<String> = rep.skipped.iter().map(|s| s.reason.clone()).collect();
            return Err(NotRun::skip(format!(
                "no cell could be measured: {}",
                if why.is_empty() {
                    "no initiator or no target".to_string()
                } else {
                    why.join("; ")
                }
            )));
        }
        rep.params = key_params(&planned, &cells)
            .into_iter()
            .map(|p| {
                // A key stands on noisy cells when any of its cells' windows were.
                let noisy = p.info.from.iter().find_map(|id| {
                    let m = rep.measurements.iter().find(|m| &m.id == id)?;
                    m.parameters["crew"]["noisy"].as_str().map(String::from)
                });
                p.noisy(noisy)
            })
            .collect();
        rep.numa_matrix = Some(NumaMatrix {
            initiators: plan.initiators.clone(),
            targets: plan.targets.clone(),
            cells,
        });
        Ok(rep)
    }
}

/// The NUMA node matrices (Intel MLC's first output): idle load latency and all-CPU read
/// bandwidth from every node with CPUs to every node with memory (CPU-less CXL nodes
/// included).
///
/// Each cell binds a region to the target node (placement checked page by page) of 4 x
/// the caches the initiator's CPUs can fill, chases it from the first allowed CPU of the
/// initiator (the `mem latency` chain) and reads it with every allowed CPU of the
/// initiator (the `mem bandwidth` read kernel). Part of `cxlchar all` on a machine with
/// more than one NUMA node.
#[derive(Debug, Clone, clap::Args)]
pub struct MatrixArgs {
    /// Initiator nodes (nodes with CPUs), comma-separated [default: every node with CPUs].
    #[arg(long, value_delimiter = ',', value_name = "NODES")]
    pub cpu_nodes: Option<Vec<usize>>,
    /// Target nodes (nodes with memory, CPU-less ones included), comma-separated
    /// [default: every node with memory].
    #[arg(long, value_delimiter = ',', value_name = "NODES")]
    pub mem_nodes: Option<Vec<usize>>,
    /// Also the loaded latency of each cell (as MLC --loaded_latency): the chase while the
    /// initiator's other CPUs read the target at full rate.
    #[arg(long)]
    pub loaded: bool,
}

impl MatrixArgs {
    /// Its part of `cxlchar all` on `topo`: the matrix when there is more than one NUMA
    /// node, else a skip ([`ONE_NODE`]).
    pub fn plan_all_on(&self, topo: &Topology) -> Planned {
        if topo.nodes.len() < 2 {
            return Planned::skip(NAME, ONE_NODE);
        }
        Planned::one(self.bench())
    }

    fn bench(&self) -> MatrixBench {
        MatrixBench {
            cpu_nodes: self.cpu_nodes.clone(),
            mem_nodes: self.mem_nodes.clone(),
            loaded: self.loaded,
        }
    }
}

impl Setup for MatrixArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        if !opts.targets.is_empty() {
            return Err(
                "mem matrix places its own memory: choose nodes with --mem-nodes, not --target"
                    .into(),
            );
        }
        let b = self.bench();
        let p = b.plan(&machine(opts), &opts.cpus)?;
        if p.initiators.is_empty() {
            let why: Vec<String> = p.skipped.into_iter().map(|(_, r)| r).collect();
            return Err(format!("no initiator node can measure: {}", why.join("; ")).into());
        }
        Ok(Planned::one(b))
    }

    fn plan_all(&self, opts: &Options) -> Result<Planned, BoxError> {
        Ok(self.plan_all_on(&machine(opts)))
    }
}

/// The topology the matrix is planned on: this machine's, or with `--plan --sysfs` that
/// tree's.
fn machine(opts: &Options) -> Topology {
    match &opts.sysfs {
        Some(root) => Topology::read(root),
        None => Topology::system(),
    }
}

#[cfg(test)]
mod tests;
