//! Running a plan: validate inputs, capture the machine, calibrate the timer, run each
//! benchmark on each target, and assemble the params document.

use crate::cli::RunArgs;
use anyhow::{anyhow, Context as _, Result};
use bench_core::bench::{Benchmark, BoxError, Context, Input, NotRun, Report, Setup, Subject};
use bench_core::effort::Effort;
use bench_core::env::Environment;
use bench_core::memory::{Region, TargetSpec};
use bench_core::params::{ParamInfo, ParamsFile, Skipped, Tool, Warning, SCHEMA_VERSION};
use bench_core::timer::Timer;
use bench_core::topology::Topology;
use bench_core::CoreError;
use std::collections::BTreeMap;

pub use crate::machine::{options, resolve_cpus, resolve_targets, KeyNaming, Machine, Plan};

/// Plans `setup` against `run` (a command's plan; a fleet's pair runs execute theirs
/// in-process, [`crate::fleet::pairs`]).
pub fn plan(run: &RunArgs, setup: &dyn Setup) -> Result<Plan> {
    // A family refuses only bad input when it plans (bench_core::bench::Setup::plan).
    let p = setup
        .plan(&options(run)?)
        .map_err(|e| crate::exit::invalid(anyhow!(e)))?;
    Ok(Plan {
        benches: p.benchmarks,
        skipped: p.skipped,
        far_nodes_by_default: setup.far_nodes_by_default(),
        interleave_parts: setup.interleave_parts(),
    })
}

/// What a run produced: the params document (not yet written) and how many benchmarks
/// or targets it skipped as a whole (the parts of a benchmark that a platform does not
/// offer, in a report's own `skipped`, are not counted).
pub struct Outcome {
    /// The document.
    pub file: ParamsFile,
    /// Benchmarks or targets skipped as a whole.
    pub skipped_whole: usize,
    /// A benchmark served a peer that measures (`verbs --server`).
    pub served: bool,
}

impl Outcome {
    /// Nothing was measured: no measurement and no params key, and no benchmark served a
    /// peer that measures (a server's empty report is what was asked).
    pub fn measured_nothing(&self) -> bool {
        self.file.measurements.is_empty() && self.file.params.is_empty() && !self.served
    }
}

/// Runs the plan and returns the params document (not yet written).
pub fn execute(args: &RunArgs, plan: Plan) -> Result<Outcome> {
    let started_at = now_rfc3339();
    let began = std::time::Instant::now();
    let topo = Topology::system();
    let cpus = resolve_cpus(args)?;
    let targets = resolve_targets(
        args,
        &topo,
        plan.far_nodes_by_default,
        plan.interleave_parts,
    )?;
    if let Some(out) = &args.out {
        crate::document::write::check_writable(out)?;
    }
    refuse_what_does_not_fit(args, &plan, &topo, &cpus, &targets)?;
    // What a signal's line names: the result file, and what the run is doing.
    bench_core::cleanup::set_result_path(args.out.as_deref());
    bench_core::cleanup::set_activity("the timer calibration");
    // The plan and a bar with an ETA when stderr is a terminal, nothing otherwise
    // (crate::progress); cleared when `bar` is dropped, before the caller prints to stdout.
    let bar = crate::progress::Progress::for_stderr();
    let progress = bar.callback();
    let expect = bench_core::plan::Expect::for_this_machine(cpus.len()).placing_on(&topo, &cpus);
    progress("calibrating the timer...");
    // The environment before this thread is pinned: `allowed_cpus` is the process's
    // affinity (what the user or a launcher allowed), not the one CPU pinned below.
    let env = Environment::capture();
    bench_core::pin::pin_current(cpus[0]).with_context(|| format!("pinning to CPU {}", cpus[0]))?;
    let effort = Effort::of(args.quick);
    let timer = Timer::calibrate(effort.timer);
    let mut ctx = Context {
        timer: timer.clone(),
        topology: topo.clone(),
        cpus,
        effort,
        seed: args.seed,
        progress,
        sizing: bench_core::sizing::SizingBook::default(),
        plan: bench_core::plan::Planning::new(expect, bar.point_callback()),
    };
    // The plan, fitted into --budget: announced before anything is measured.
    let (effort, schedule) = crate::schedule::fit(&plan.benches, &targets, &ctx, args.budget);
    ctx.effort = effort;
    if bar.shown() {
        let m = Machine {
            topo: topo.clone(),
            cpus: ctx.cpus.clone(),
        };
        let plan = schedule.table(&crate::schedule::header(args, &m, &targets), false);
        bar.announce(&crate::output::width::fit(
            &plan,
            crate::output::width::stderr_columns(),
        ));
    }
    let mut sweep = Sweep {
        ctx: &ctx,
        topo: &topo,
        bar: &bar,
        schedule: &schedule,
        record: schedule.record(),
        results: Vec::new(),
        skipped: plan.skipped,
    };
    sweep.run(&plan.benches, &targets)?;
    bench_core::cleanup::set_activity("the end of the run (results not yet written)");
    let Sweep {
        mut results,
        skipped,
        mut record,
        ..
    } = sweep;
    record.actual_s = Some((began.elapsed().as_secs_f64() * 1000.0).round() / 1000.0);
    let mut warnings = env.warnings(timer.info().invariant);
    warnings.extend(schedule.budget_warning());
    warnings.extend(far_not_cxl_warnings(&targets, &topo));
    counter_warnings(&mut results, timer.info().freq_hz);
    drop(bar);
    Ok(Finished {
        started_at,
        env,
        timer: &timer,
        ctx: &ctx,
        warnings,
        plan: record,
    }
    .outcome(results, skipped))
}

/// The run's memory, planned before anything is mapped (the timer is not calibrated
/// yet: a plan is arithmetic): a family that would map more than this machine lets the
/// process map now is refused, exit 2, naming the option that would fit (in a run of
/// several families, only when none of them fits: the others are skipped at their turn).
fn refuse_what_does_not_fit(
    args: &RunArgs,
    plan: &Plan,
    topo: &Topology,
    cpus: &[usize],
    targets: &[TargetSpec],
) -> Result<()> {
    let m = Machine {
        topo: topo.clone(),
        cpus: cpus.to_vec(),
    };
    let ctx = crate::schedule::plan_context(args, &m, targets);
    let schedule = crate::schedule::Schedule::build(&plan.benches, targets, &ctx);
    let limits = bench_core::memory::budget::Limits::read();
    // A run of several families (`all`) measures what fits: a family whose default sizes
    // do not fit its target (a 30 MiB dax device) is skipped at its turn with the reason
    // and the option that would fit; the run is refused only when none fits.
    let several = plan.benches.len() > 1;
    let fits_one = schedule
        .units
        .iter()
        .filter(|u| u.skip.is_none())
        .any(|u| limits.check(u.name, &u.on, topo, &u.memory).is_ok());
    if several && fits_one {
        return Ok(());
    }
    schedule
        .check_memory(&limits, topo)
        .map_err(|r| crate::exit::invalid(anyhow!(r)))
}

/// The benchmarks of a run at work: what they measured and what they skipped so far,
/// with the progress bar that follows them.
struct Sweep<'a> {
    ctx: &'a Context,
    topo: &'a Topology,
    bar: &'a crate::progress::Progress,
    /// The plan, and its record with what each unit took.
    schedule: &'a crate::schedule::Schedule,
    record: bench_core::plan::PlanRecord,
    /// (target name, how its keys are named, report)
    results: Vec<(String, KeyNaming, Report)>,
    skipped: Vec<Skipped>,
}

impl Sweep<'_> {
    /// Runs the memory benchmarks on each target, then the device benchmarks once each.
    /// A failure ends the run with the error: nothing is written.
    fn run(&mut self, benches: &[Box<dyn Benchmark>], targets: &[TargetSpec]) -> Result<()> {
        self.bar
            .set_total(self.schedule.total_s() - self.schedule.timer_s);
        for target in targets {
            for (i, bench) in benches.iter().enumerate() {
                if bench.subject() == Subject::Memory {
                    self.on_memory(i, bench.as_ref(), target)?;
                }
            }
        }
        for (i, bench) in benches.iter().enumerate() {
            if bench.subject() != Subject::Memory {
                self.on_device(i, bench.as_ref())?;
            }
        }
        Ok(())
    }

    /// The planned points of benchmark `i` on `target`.
    fn cost(&self, i: usize, target: &str) -> bench_core::plan::Cost {
        self.schedule
            .unit(i, target)
            .map(|u| self.schedule.units[u].cost.clone())
            .unwrap_or_else(bench_core::plan::Cost::unknown)
    }

    /// Records the memory `bench` on `target` plans as it begins.
    fn planned_memory(&mut self, bench: &str, target: &str, bytes: usize) {
        if let Some(f) = self
            .record
            .families
            .iter_mut()
            .find(|f| f.benchmark == bench && f.target == target && f.actual_s.is_none())
        {
            f.memory_bytes = Some(bytes as u64);
        }
    }

    /// Records what benchmark `i` on `target` took since `began` (and the memory it
    /// held, since the peak resident set was reset to `rss_base`).
    fn took(&mut self, bench: &str, target: &str, began: Began, points: usize) {
        let s = (began.at.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let peak = began
            .rss_base
            .and_then(bench_core::memory::budget::peak_rss_since);
        if let Some(f) = self
            .record
            .families
            .iter_mut()
            .find(|f| f.benchmark == bench && f.target == target && f.actual_s.is_none())
        {
            f.actual_s = Some(s);
            f.points_done = Some(points);
            f.peak_rss_bytes = peak;
        }
    }

    /// One memory benchmark on one target: skipped when it cannot run there or the
    /// memory cannot be placed.
    fn on_memory(&mut self, i: usize, bench: &dyn Benchmark, target: &TargetSpec) -> Result<()> {
        let ctx = self.ctx;
        let skip = |reason: String| Skipped {
            benchmark: bench.name().into(),
            target: target.to_string(),
            reason,
        };
        let cost = self.cost(i, &target.to_string());
        if let Err(s) = bench.check(ctx, target) {
            self.skipped.push(skip(s.reason));
            self.bar.dropped(cost.seconds());
            return Ok(());
        }
        let began = Began::now();
        self.bar.start(bench.name(), &target.to_string(), &cost);
        // Its memory again, now that the families before it sized this run's checks: what
        // no longer fits is skipped (the run has measured already), and the figure stands
        // in the record beside the peak it reaches.
        let need = bench.memory(ctx, target);
        self.planned_memory(bench.name(), &target.to_string(), need.bytes);
        let limits = bench_core::memory::budget::Limits::read();
        if let Err(r) = limits.check(bench.name(), target, self.topo, &need) {
            self.skipped.push(skip(format!("not placed: {r}")));
            self.bar.done();
            return Ok(());
        }
        ctx.progress(&format!("{} on {target}: placing memory...", bench.name()));
        let mut region = match Region::allocate(target, bench.region_bytes(ctx, target), self.topo)
        {
            Ok(r) => r,
            Err(CoreError::TargetUnavailable { reason, .. }) => {
                self.skipped.push(skip(reason));
                self.bar.done();
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        ctx.point_done();
        match bench.run(ctx, Input::Region(&mut region)) {
            Ok(rep) => {
                self.results
                    .push((target.to_string(), KeyNaming::of(target, self.topo), rep))
            }
            Err(NotRun::Skipped { reason }) => self.skipped.push(skip(reason)),
            Err(NotRun::Failed(e)) => return Err(failed(bench.name(), &target.to_string(), e)),
        }
        drop(region);
        let points = self.bar.done();
        self.took(bench.name(), &target.to_string(), began, points);
        Ok(())
    }

    /// One device benchmark, on the device it names.
    fn on_device(&mut self, i: usize, bench: &dyn Benchmark) -> Result<()> {
        let Subject::Device { target } = bench.subject() else {
            unreachable!("partitioned by subject")
        };
        let cost = self.cost(i, &target);
        let began = Began::now();
        self.bar.start(bench.name(), &target, &cost);
        // Host memory of its own (the GPU's buffers, the matrix's cells), as at the plan.
        let need = bench.memory(self.ctx, &TargetSpec::Anon);
        self.planned_memory(bench.name(), &target, need.bytes);
        let limits = bench_core::memory::budget::Limits::read();
        let run = match limits.check(bench.name(), &TargetSpec::Anon, self.topo, &need) {
            Err(r) => Err(NotRun::skip(format!("not placed: {r}"))),
            Ok(()) => {
                self.ctx
                    .progress(&format!("{} on {target}...", bench.name()));
                bench.run(self.ctx, Input::Device)
            }
        };
        let points = self.bar.done();
        self.took(bench.name(), &target, began, points);
        match run {
            Ok(rep) => self.results.push((target, KeyNaming::Local, rep)),
            Err(NotRun::Skipped { reason }) => self.skipped.push(Skipped {
                benchmark: bench.name().into(),
                target,
                reason,
            }),
            Err(NotRun::Failed(e)) => return Err(failed(bench.name(), &target, e)),
        }
        Ok(())
    }
}

/// When a unit began, and the resident set its peak is counted from.
#[derive(Clone, Copy)]
struct Began {
    at: std::time::Instant,
    rss_base: Option<u64>,
}

impl Began {
    fn now() -> Began {
        Began {
            rss_base: bench_core::memory::budget::reset_peak_rss(),
            at: std::time::Instant::now(),
        }
    }
}

/// The error that ends a run whose benchmark failed.
fn failed(name: &str, target: &str, e: BoxError) -> anyhow::Error {
    anyhow::anyhow!("{name} on {target} failed: {e} (no params file written)")
}

/// Adds the counter warnings of every family (disturbed samples, paranoid, no PMU, core
/// clock) to each report.
fn counter_warnings(results: &mut [(String, KeyNaming, Report)], freq_hz: f64) {
    for (target, _, rep) in results {
        // A benchmark that measured elsewhere (a pool window) is named by what it measured.
        let own: std::collections::BTreeSet<&str> =
            rep.measurements.iter().map(|m| m.target.as_str()).collect();
        let label = match own.iter().next() {
            Some(t) if own.len() == 1 => t.to_string(),
            _ => target.clone(),
        };
        let w = bench_core::counters::warnings_for(&label, &rep.measurements, freq_hz);
        rep.warnings.extend(w);
    }
}

/// What a run's document takes besides its reports: when it started, the machine, the
/// timer, the context's DRAM sizing and the run's own warnings.
struct Finished<'a> {
    started_at: String,
    env: Environment,
    timer: &'a Timer,
    ctx: &'a Context,
    warnings: Vec<Warning>,
    /// The run's plan with what each family took.
    plan: bench_core::plan::PlanRecord,
}

impl Finished<'_> {
    /// The params document of the reports, with how many benchmarks or targets were
    /// skipped as a whole.
    fn outcome(
        self,
        results: Vec<(String, KeyNaming, Report)>,
        mut skipped: Vec<Skipped>,
    ) -> Outcome {
        let Finished {
            started_at,
            env,
            timer,
            ctx,
            mut warnings,
            plan,
        } = self;
        let skipped_whole = skipped.len();
        let served = results.iter().any(|(_, _, rep)| rep.served);
        let (params, param_info) = assemble_params(&results);
        let dram_check = dram_checks(ctx.sizing.checks(), &results);
        let mut measurements = Vec::new();
        let mut prefetch_check = Vec::new();
        let mut numa_matrix = None;
        let mut interference = None;
        for (_, _, rep) in results {
            numa_matrix = numa_matrix.or(rep.numa_matrix);
            interference = interference.or(rep.interference);
            measurements.extend(rep.measurements);
            prefetch_check.extend(rep.prefetch_checks);
            warnings.extend(rep.warnings);
            skipped.extend(rep.skipped);
        }
        let mut file = ParamsFile {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "cxlchar".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                commit: crate::build_info::commit(),
            },
            command_line: std::env::args().collect(),
            started_at,
            finished_at: now_rfc3339(),
            environment: env,
            timer: timer.info().clone(),
            params,
            param_info,
            measurements,
            skipped,
            warnings: dedup_warnings(warnings),
            prefetch_check,
            dram_sizing: ctx.sizing.all(),
            dram_check,
            numa_matrix,
            interference,
            hmat_vs_measured: Default::default(),
            interleave_weights: None,
            plan: Some(plan),
            links: Vec::new(),
        };
        crate::agreement::flag_noisy_checks(&mut file);
        let disagree = crate::agreement::family_agreement(&file);
        file.warnings.extend(disagree);
        // The measuring CPUs' node is the initiator whose advertised figures apply.
        let initiator = crate::firmware::node_of_cpu(&ctx.topology, ctx.cpus[0]);
        crate::firmware::annotate(&mut file, initiator);
        // Every run records the machine's PCIe links (a few sysfs reads per device).
        crate::links::annotate(&mut file, crate::links::read(std::path::Path::new("/")));
        Outcome {
            file,
            skipped_whole,
            served,
        }
    }
}

fn dedup_warnings(w: Vec<Warning>) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for x in w {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// A far-memory target that is not CXL (a memory-only node of another socket, HBM, an
/// NVDIMM, an emulated node) still gives the papers' far-memory keys (`cxl_lat_ns`):
/// say so, so that nobody reads them as a CXL device's figures.
pub fn far_not_cxl_warnings(targets: &[TargetSpec], topo: &Topology) -> Vec<Warning> {
    targets
        .iter()
        .filter(|t| t.is_far_memory(topo) && !t.is_interleaved())
        .filter_map(|t| {
            let shares = bench_core::memory::backing_of(t, topo);
            if !shares.is_empty() && shares.iter().all(|s| s.backing.is_cxl()) {
                return None;
            }
            Some(Warning {
                code: "far_not_cxl".into(),
                message: format!(
                    "{t} is far memory but not (known to be) CXL: {}; its keys take the papers' far-memory names (cxl_lat_ns, cxl_bw_gbs, ...) as the far tier, not as a CXL device's figures",
                    bench_core::cxl::describe_shares(&shares)
                ),
                remediation: "to characterize a CXL device, measure the dax device or node backed by its region (`cxlchar targets` lists them; --target cxl:regionN)".into(),
            })
        })
        .collect()
}

/// Far-memory name of a key, from the key registry ([`bench_core::keys::far_name`]):
/// the memory keys of seed 000 (`mem_lat_ns` -> `cxl_lat_ns`, pool bandwidth, atomics)
/// and the GPU DMA keys of a registered target (seed 003's pool: `gpu_reg_*` ->
/// `gpu_pool_*`).
fn far_name(key: &str) -> Option<String> {
    bench_core::keys::far_name(key)
}

/// Turns per-target reports into the flat key map.
///
/// * Every key of every target is recorded qualified: `mem_lat_ns@node:1`.
/// * The first target to produce a key gives the unqualified key (`mem_lat_ns`), local
///   targets before far ones. An interleaved target never does: its keys are only
///   qualified (`mem_bw_gbs@interleave:0,1`), since its figures are neither those of
///   local nor of far memory; with every node far they take the far names
///   (`cxl_bw_gbs@interleave:2,3`).
/// * On far memory (a memory-only node, a dax device), memory keys take their far
///   names: `mem_lat_ns` -> `cxl_lat_ns`, `mem_lat_random_ns` -> `cxl_lat_random_ns`,
///   and GPU DMA keys of a registered target become pool keys: `gpu_reg_h2d_bw_gbs` ->
///   `gpu_pool_h2d_bw_gbs`.
/// * `cxl_lat_factor` = `cxl_lat_ns / mem_lat_ns` and `cxl_bw_factor` = `cxl_bw_gbs /
///   mem_bw_gbs` when both exist.
pub fn assemble_params(
    results: &[(String, KeyNaming, Report)],
) -> (BTreeMap<String, f64>, BTreeMap<String, ParamInfo>) {
    let mut params = BTreeMap::new();
    let mut info = BTreeMap::new();
    let mut ordered: Vec<&(String, KeyNaming, Report)> = results.iter().collect();
    ordered.sort_by_key(|(_, naming, _)| *naming);
    for (target, naming, rep) in ordered {
        let unqualified = !matches!(naming, KeyNaming::Interleaved { .. });
        for p in &rep.params {
            let name = match naming.far().then(|| far_name(&p.key)).flatten() {
                Some(n) => n,
                None => p.key.clone(),
            };
            params.insert(format!("{name}@{target}"), p.value);
            info.insert(format!("{name}@{target}"), p.info.clone());
            if unqualified && !params.contains_key(&name) {
                params.insert(name.clone(), p.value);
                info.insert(name, p.info.clone());
            }
        }
    }
    for (factor, far, local) in bench_core::keys::ratios() {
        if let (Some(c), Some(m)) = (params.get(far), params.get(local)) {
            if *m > 0.0 {
                let f = c / m;
                let unit = bench_core::keys::lookup(factor).map_or("ratio", |d| d.unit.symbol());
                params.insert(factor.into(), f);
                info.insert(
                    factor.into(),
                    ParamInfo {
                        unit: unit.into(),
                        target: info[far].target.clone(),
                        method: format!("{far} / {local}"),
                        from: [info[far].from.clone(), info[local].from.clone()].concat(),
                        noisy: info[far]
                            .noisy
                            .clone()
                            .or_else(|| info[local].noisy.clone()),
                    },
                );
            }
        }
    }
    (params, info)
}

/// The run's DRAM checks with the keys each stands for named as params.json names them:
/// qualified by the target (`mem_bw_gbs@anon`), far names on far memory
/// (`cxl_lat_ns@node:1`).
pub fn dram_checks(
    checks: Vec<bench_core::dram_check::DramCheck>,
    results: &[(String, KeyNaming, Report)],
) -> Vec<bench_core::dram_check::DramCheck> {
    checks
        .into_iter()
        .map(|mut c| {
            let far = results
                .iter()
                .find(|(t, _, _)| *t == c.target)
                .is_some_and(|(_, n, _)| n.far());
            c.keys = c
                .keys
                .iter()
                .map(|k| {
                    let name = far.then(|| far_name(k)).flatten().unwrap_or(k.clone());
                    format!("{name}@{}", c.target)
                })
                .collect();
            c
        })
        .collect()
}

/// Now, RFC 3339 UTC with seconds.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::bench::Param;

    fn rep(key: &str, v: f64) -> Report {
        Report {
            params: vec![Param {
                key: key.into(),
                value: v,
                info: ParamInfo {
                    unit: "ns".into(),
                    target: String::new(),
                    method: "m".into(),
                    from: vec!["id".into()],
                    noisy: None,
                },
            }],
            ..Default::default()
        }
    }

    #[test]
    fn on_grace_hopper_all_measures_the_gpu_memory_as_far_memory_labelled_gpu() {
        use clap::{Args, FromArgMatches};
        let dir = tempfile::tempdir().unwrap();
        bench_core::topology::fixtures::arm::write_grace_hopper(dir.path()).unwrap();
        let topo = Topology::read(dir.path());
        let m = RunArgs::augment_args(clap::Command::new("t").no_binary_name(true))
            .try_get_matches_from(["--quick"])
            .unwrap();
        let args = RunArgs::from_arg_matches(&m).unwrap();
        // `all`: anon and the GPU's HBM (node 1); the MIG nodes 2-9 hold no memory.
        let t = resolve_targets(&args, &topo, true, false).unwrap();
        assert_eq!(t, [TargetSpec::Anon, TargetSpec::Node(1)]);
        // Far memory (its keys take the far names), labelled GPU memory, not CXL.
        let w = far_not_cxl_warnings(&t, &topo);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].message
                .starts_with("node:1 is far memory but not (known to be) CXL: GPU memory")
                && w[0].message.contains("System RAM (NVIDIA)"),
            "{}",
            w[0].message
        );
        // A command that does not add far nodes measures anon alone.
        assert_eq!(
            resolve_targets(&args, &topo, false, false).unwrap(),
            [TargetSpec::Anon]
        );
    }

    #[test]
    fn far_targets_give_cxl_keys_and_factor() {
        let results = vec![
            (
                "node:1".to_string(),
                KeyNaming::Far,
                rep("mem_lat_ns", 250.0),
            ),
            (
                "anon".to_string(),
                KeyNaming::Local,
                rep("mem_lat_ns", 100.0),
            ),
        ];
        let (p, info) = assemble_params(&results);
        assert_eq!(p["mem_lat_ns"], 100.0);
        assert_eq!(p["mem_lat_ns@anon"], 100.0);
        assert_eq!(p["cxl_lat_ns"], 250.0);
        assert_eq!(p["cxl_lat_ns@node:1"], 250.0);
        assert_eq!(p["cxl_lat_factor"], 2.5);
        assert!(!p.contains_key("mem_lat_ns@node:1"));
        assert_eq!(info.len(), p.len());
    }

    #[test]
    fn far_targets_give_gpu_pool_keys() {
        let results = vec![
            (
                "anon".to_string(),
                KeyNaming::Local,
                rep("gpu_reg_h2d_bw_gbs", 25.0),
            ),
            (
                "dax:/dev/dax0.0".to_string(),
                KeyNaming::Far,
                rep("gpu_reg_h2d_bw_gbs", 20.0),
            ),
            (
                "node:1".to_string(),
                KeyNaming::Far,
                rep("gpu_reg_h2d_k2_bw_gbs", 10.0),
            ),
            (
                "gpu:0".to_string(),
                KeyNaming::Local,
                rep("gpu_h2d_bw_gbs", 26.0),
            ),
        ];
        let (p, _) = assemble_params(&results);
        assert_eq!(p["gpu_reg_h2d_bw_gbs"], 25.0);
        assert_eq!(p["gpu_pool_h2d_bw_gbs"], 20.0);
        assert_eq!(p["gpu_pool_h2d_bw_gbs@dax:/dev/dax0.0"], 20.0);
        assert_eq!(p["gpu_pool_h2d_k2_bw_gbs"], 10.0);
        assert_eq!(p["gpu_h2d_bw_gbs@gpu:0"], 26.0);
        assert!(!p.contains_key("gpu_reg_h2d_bw_gbs@dax:/dev/dax0.0"));
    }

    #[test]
    fn far_targets_give_cxl_agents_keys_and_the_spread_keeps_its_name() {
        let results = vec![
            (
                "anon".to_string(),
                KeyNaming::Local,
                rep("agents_write_k2_bw_gbs", 9.0),
            ),
            (
                "node:2".to_string(),
                KeyNaming::Far,
                rep("agents_write_k2_bw_gbs", 5.0),
            ),
            (
                "node:2+node:3".to_string(),
                KeyNaming::Local,
                rep("agents_spread_write_k2_bw_gbs", 10.0),
            ),
        ];
        let (p, _) = assemble_params(&results);
        assert_eq!(p["agents_write_k2_bw_gbs"], 9.0);
        assert_eq!(p["cxl_agents_write_k2_bw_gbs"], 5.0);
        assert_eq!(p["cxl_agents_write_k2_bw_gbs@node:2"], 5.0);
        assert_eq!(p["agents_spread_write_k2_bw_gbs@node:2+node:3"], 10.0);
        assert_eq!(p["agents_spread_write_k2_bw_gbs"], 10.0);
    }

    #[test]
    fn far_targets_give_cxl_atomic_latency() {
        let results = vec![
            (
                "anon".to_string(),
                KeyNaming::Local,
                rep("atomic_lat_ns", 110.0),
            ),
            (
                "node:1".to_string(),
                KeyNaming::Far,
                rep("atomic_lat_ns", 400.0),
            ),
        ];
        let (p, _) = assemble_params(&results);
        assert_eq!(p["atomic_lat_ns"], 110.0);
        assert_eq!(p["cxl_atomic_lat_ns"], 400.0);
        assert_eq!(p["cxl_atomic_lat_ns@node:1"], 400.0);
    }
    #[test]
    fn interleaved_targets_are_only_qualified_and_far_only_when_all_nodes_are() {
        let il = |n: &str, naming, v| (format!("interleave:{n}"), naming, rep("mem_bw_gbs", v));
        let results = vec![
            il("0,1", KeyNaming::Interleaved { far: false }, 30.0),
            il("1,2", KeyNaming::Interleaved { far: true }, 12.0),
            ("node:1".to_string(), KeyNaming::Far, rep("mem_bw_gbs", 6.0)),
            (
                "node:0".to_string(),
                KeyNaming::Local,
                rep("mem_bw_gbs", 20.0),
            ),
        ];
        let (p, info) = assemble_params(&results);
        // The interleave neither overwrites the local key nor takes the far one...
        assert_eq!(p["mem_bw_gbs"], 20.0);
        assert_eq!(p["cxl_bw_gbs"], 6.0);
        assert_eq!(p["cxl_bw_factor"], 6.0 / 20.0);
        // ...it is there, qualified, next to its parts.
        assert_eq!(p["mem_bw_gbs@interleave:0,1"], 30.0);
        assert_eq!(p["mem_bw_gbs@node:0"], 20.0);
        assert_eq!(p["cxl_bw_gbs@node:1"], 6.0);
        // All nodes far: far name, still qualified only.
        assert_eq!(p["cxl_bw_gbs@interleave:1,2"], 12.0);
        assert!(!p.contains_key("mem_bw_gbs@interleave:1,2"));
        assert!(!p.contains_key("cxl_bw_gbs@interleave:0,1"));
        assert_eq!(info.len(), p.len());
        // Alone, an interleave gives no unqualified key at all.
        let (p, _) = assemble_params(&[il("0,1", KeyNaming::Interleaved { far: false }, 30.0)]);
        assert_eq!(p.keys().collect::<Vec<_>>(), ["mem_bw_gbs@interleave:0,1"]);
    }

    #[test]
    fn key_naming_of_targets() {
        let dir = tempfile::tempdir().unwrap();
        bench_core::topology::write_fake_sysfs(dir.path()).unwrap();
        let topo = Topology::read(dir.path());
        let t = |s: &str| s.parse::<TargetSpec>().unwrap();
        assert_eq!(KeyNaming::of(&t("anon"), &topo), KeyNaming::Local);
        assert_eq!(KeyNaming::of(&t("node:1"), &topo), KeyNaming::Far);
        assert_eq!(
            KeyNaming::of(&t("interleave:0,1"), &topo),
            KeyNaming::Interleaved { far: false }
        );
        assert_eq!(
            KeyNaming::of(&t("interleave:1"), &topo),
            KeyNaming::Interleaved { far: true }
        );
    }
}
