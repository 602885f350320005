//! The run's plan: every benchmark on every target with its points and planned seconds
//! ([`bench_core::plan`]), announced before anything is measured, fitted into a
//! `--budget` by cutting counts, printed by `--plan` (for this machine or, with
//! `--sysfs ROOT`, another one), and recorded in params.json beside what each family took.

use crate::cli::{Format, RunArgs};
use crate::machine::{resolve_targets, Machine, Plan};
use crate::output::text::printable;
use crate::output::width;
use anyhow::Result;
use bench_core::bench::{Benchmark, Context, Subject};
use bench_core::effort::Effort;
use bench_core::memory::budget::{Limits, Need, Refusal};
use bench_core::memory::TargetSpec;
use bench_core::params::Warning;
use bench_core::plan::{BudgetRecord, Cost, Expect, FamilyRecord, PlanRecord, Planning};
use bench_core::timer::{Calibration, Timer};
use std::time::Duration;

/// One benchmark on one target (or on its device), planned.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Index of the benchmark in the plan.
    pub bench: usize,
    /// Its name.
    pub name: &'static str,
    /// The target as results name it.
    pub target: String,
    /// Its points, placing its memory first.
    pub cost: Cost,
    /// Why it will not run (checked before it is placed), if it will not.
    pub skip: Option<String>,
    /// The target it maps its memory on (`anon` for a device benchmark's host memory).
    pub on: TargetSpec,
    /// What it maps at most at once ([`Benchmark::memory`]); nothing when skipped.
    pub memory: Need,
}

impl Unit {
    /// Its planned seconds.
    pub fn seconds(&self) -> f64 {
        self.cost.seconds()
    }
}

/// The plan of a run.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Memory benchmarks on each target, then the device benchmarks: the run's order.
    pub units: Vec<Unit>,
    /// Calibrating the timer.
    pub timer_s: f64,
    /// What the costs were priced with.
    pub expect: Expect,
    /// The budget and its cut, if one was given.
    pub budget: Option<BudgetRecord>,
}

impl Schedule {
    /// The plan of `benches` on `targets` with the effort and machine of `ctx`.
    pub fn build(
        benches: &[Box<dyn Benchmark>],
        targets: &[TargetSpec],
        ctx: &Context,
    ) -> Schedule {
        // Each family is priced knowing the DRAM checks the families before it make.
        let mut pctx = ctx.clone();
        let ctx = &mut pctx;
        let mut units = Vec::new();
        for t in targets {
            for (i, b) in benches.iter().enumerate() {
                if b.subject() != Subject::Memory {
                    continue;
                }
                let skip = b.check(ctx, t).err().map(|s| s.reason);
                let mut cost = Cost::new();
                let mut memory = Need::default();
                if skip.is_none() {
                    cost.add(
                        "placing memory",
                        1,
                        ctx.plan.expect.populate_s(b.region_bytes(ctx, t)),
                    );
                    cost.extend(b.cost(ctx, Some(t)));
                    memory = b.memory(ctx, t);
                    for p in b.planned_checks(ctx, t) {
                        ctx.plan.will_check(&t.to_string(), p);
                    }
                }
                units.push(Unit {
                    bench: i,
                    name: b.name(),
                    target: t.to_string(),
                    cost,
                    skip,
                    on: t.clone(),
                    memory,
                });
            }
        }
        for (i, b) in benches.iter().enumerate() {
            let Subject::Device { target } = b.subject() else {
                continue;
            };
            let cost = b.cost(ctx, None);
            // A part the machine does not offer (the spread agents without two targets).
            let skip = (cost.count() == 0).then(|| "nothing to measure here".to_string());
            let memory = match skip {
                None => b.memory(ctx, &TargetSpec::Anon),
                Some(_) => Need::default(),
            };
            units.push(Unit {
                bench: i,
                name: b.name(),
                target,
                cost,
                skip,
                on: TargetSpec::Anon,
                memory,
            });
        }
        let c = ctx.effort.timer;
        Schedule {
            units,
            timer_s: c.rounds as f64 * c.round.as_secs_f64() + 0.05,
            expect: ctx.plan.expect,
            budget: None,
        }
    }

    /// Planned seconds of the whole run.
    pub fn total_s(&self) -> f64 {
        self.timer_s + self.units.iter().map(Unit::seconds).sum::<f64>()
    }

    /// The most memory the run maps at once: its largest unit's (units run one after
    /// the other, each releasing what it mapped).
    pub fn memory_bytes(&self) -> usize {
        self.units.iter().map(|u| u.memory.bytes).max().unwrap_or(0)
    }

    /// The most memory the run maps at once where its DRAM checks find their working sets
    /// in a cache and grow them (each bounded by half the memory its target offers).
    pub fn memory_grown_bytes(&self) -> usize {
        self.units
            .iter()
            .map(|u| u.memory.most_bytes())
            .max()
            .unwrap_or(0)
    }

    /// The first unit whose memory does not fit `limits` (this machine's, now): nothing
    /// may be mapped then.
    pub fn check_memory(
        &self,
        limits: &Limits,
        topo: &bench_core::topology::Topology,
    ) -> Result<(), Box<Refusal>> {
        for u in self.units.iter().filter(|u| u.skip.is_none()) {
            limits.check(u.name, &u.on, topo, &u.memory)?;
        }
        Ok(())
    }

    /// Points planned.
    pub fn points(&self) -> usize {
        self.units.iter().map(|u| u.cost.count()).sum()
    }

    /// The unit of benchmark `bench` on `target`.
    pub fn unit(&self, bench: usize, target: &str) -> Option<usize> {
        self.units
            .iter()
            .position(|u| u.bench == bench && u.target == target)
    }

    /// The record params.json keeps (the actual times are the runner's).
    pub fn record(&self) -> PlanRecord {
        PlanRecord {
            total_s: round3(self.total_s()),
            actual_s: None,
            points: self.points(),
            expect: self.expect.describe(),
            budget: self.budget.clone(),
            families: self
                .units
                .iter()
                .filter(|u| u.skip.is_none())
                .map(|u| FamilyRecord {
                    benchmark: u.name.into(),
                    target: u.target.clone(),
                    points: u.cost.count(),
                    planned_s: round3(u.seconds()),
                    actual_s: None,
                    points_done: None,
                    unmodelled: u.cost.unknown,
                    memory_bytes: Some(u.memory.bytes as u64),
                    memory_grown_bytes: (u.memory.grows_to_bytes > u.memory.bytes)
                        .then_some(u.memory.grows_to_bytes as u64),
                    peak_rss_bytes: None,
                })
                .collect(),
            memory_bytes: Some(self.memory_bytes() as u64),
            memory_grown_bytes: (self.memory_grown_bytes() > self.memory_bytes())
                .then_some(self.memory_grown_bytes() as u64),
        }
    }

    /// The plan for people: one line per family and target (with `points`, every group
    /// of its points under it), then the total. A skipped family's reason and a family
    /// without a cost model say so in the last column, so that a long reason makes its
    /// own line long, not every line. Lines are whole: [`crate::output::width::fit`]
    /// fits them to a terminal.
    pub fn table(&self, header: &str, points: bool) -> String {
        use crate::output::table::{Align, TextTable};
        let mut t = TextTable::new(&[
            ("family", Align::Left),
            ("target", Align::Left),
            ("points", Align::Right),
            ("planned", Align::Right),
            ("memory", Align::Right),
            ("", Align::Left),
        ]);
        for u in &self.units {
            let (points, s, mem, note) = match &u.skip {
                Some(why) => (
                    "-".to_string(),
                    "-".to_string(),
                    "-".to_string(),
                    format!("skipped: {why}"),
                ),
                None => (
                    u.cost.count().to_string(),
                    fmt_s(u.seconds()),
                    fmt_bytes(u.memory.bytes),
                    if u.cost.unknown { "(no model)" } else { "" }.to_string(),
                ),
            };
            t.row([u.name.to_string(), u.target.clone(), points, s, mem, note]);
        }
        let under = |i: usize| -> Vec<String> {
            if !points {
                return Vec::new();
            }
            self.units[i]
                .cost
                .points
                .iter()
                .map(|p| {
                    format!(
                        "    {} x {}: {} each",
                        p.count,
                        p.what,
                        fmt_s(p.seconds_each)
                    )
                })
                .collect()
        };
        let mut out = format!("{header}\n{}", t.render_with(under));
        out.push_str(&format!(
            "total: {} points, ~{} planned (timer {}), at most {} of memory at once{}{}\n",
            self.points(),
            fmt_s(self.total_s()),
            fmt_s(self.timer_s),
            fmt_bytes(self.memory_bytes()),
            match self.memory_grown_bytes() {
                g if g > self.memory_bytes() => format!(
                    " ({} where a DRAM check finds its working set in a cache and grows it)",
                    fmt_bytes(g)
                ),
                _ => String::new(),
            },
            match &self.budget {
                Some(b) if b.samples_factor < 1.0 || b.max_rungs.is_some() => format!(
                    "; cut to fit --budget {}: samples x {:.2}{} (uncut {})",
                    fmt_s(b.budget_s),
                    b.samples_factor,
                    b.max_rungs
                        .map_or(String::new(), |r| format!(", at most {r} rungs")),
                    fmt_s(b.uncut_s)
                ),
                Some(b) => format!("; within --budget {}", fmt_s(b.budget_s)),
                None => String::new(),
            }
        ));
        out
    }

    /// The `budget_cut` warning of a cut plan.
    pub fn budget_warning(&self) -> Option<Warning> {
        let b = self.budget.as_ref()?;
        if b.samples_factor >= 1.0 && b.max_rungs.is_none() {
            return None;
        }
        Some(Warning {
            code: "budget_cut".into(),
            message: format!(
                "the plan ({}) is longer than --budget {}: every family took {} of its samples{}; planned now {}{}",
                fmt_s(b.uncut_s),
                fmt_s(b.budget_s),
                if b.samples_factor < 1.0 { format!("{:.0}%", 100.0 * b.samples_factor) } else { "all".into() },
                b.max_rungs.map_or(String::new(), |r| format!(" and at most {r} rungs of the thread ladder")),
                fmt_s(self.total_s()),
                if b.fits { "" } else { " (the fewest counts do not fit the budget either)" }
            ),
            remediation: "the working sets and methods are those of a full run, with fewer samples (wider distributions) and thread counts; give a larger --budget for the full counts".into(),
        })
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Memory for the plan's column: `2.1 GiB`, `64 MiB`, `-` for none.
fn fmt_bytes(b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        bench_core::units::human_bytes(b as u64)
    }
}

/// `0.4 s`, `12 s`, `3m05s`.
pub fn fmt_s(s: f64) -> String {
    let s = s.max(0.0);
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else {
        crate::progress::format_eta(Duration::from_secs_f64(s))
    }
}

/// The cuts a budget tries, mildest first: sampling factors with every rung, then fewer
/// rungs as well.
const CUTS: &[(f64, Option<usize>)] = &[
    (0.8, None),
    (0.65, None),
    (0.5, None),
    (0.5, Some(6)),
    (0.4, Some(5)),
    (0.3, Some(4)),
    (0.2, Some(4)),
    (0.15, Some(3)),
    (0.1, Some(3)),
    (0.05, Some(2)),
    (0.02, Some(2)),
];

/// The effort and plan of a run: `base` as it is, or cut to fit `budget` (the mildest
/// cut whose plan fits, the harshest where none does). `ctx` is the run's context; its
/// effort is replaced by the one chosen.
pub fn fit(
    benches: &[Box<dyn Benchmark>],
    targets: &[TargetSpec],
    ctx: &Context,
    budget: Option<Duration>,
) -> (&'static Effort, Schedule) {
    let base = ctx.effort;
    let plan = Schedule::build(benches, targets, ctx);
    let Some(budget) = budget else {
        return (base, plan);
    };
    let budget_s = budget.as_secs_f64();
    let uncut_s = plan.total_s();
    let record = |f: f64, r: Option<usize>, s: &Schedule| BudgetRecord {
        budget_s,
        uncut_s: round3(uncut_s),
        samples_factor: f,
        max_rungs: r,
        fits: s.total_s() <= budget_s,
    };
    if uncut_s <= budget_s {
        let mut plan = plan;
        plan.budget = Some(record(1.0, None, &plan));
        return (base, plan);
    }
    let mut last = None;
    for &(f, r) in CUTS {
        let effort: &'static Effort = Box::leak(Box::new(base.cut(f, r)));
        let cctx = Context {
            effort,
            ..ctx.clone()
        };
        let mut s = Schedule::build(benches, targets, &cctx);
        s.budget = Some(record(f, r, &s));
        let fits = s.total_s() <= budget_s;
        last = Some((effort, s));
        if fits {
            break;
        }
    }
    last.expect("at least one cut")
}

/// A context for planning only: no timer calibration (a nominal clock), nothing measured.
pub fn plan_context(args: &RunArgs, m: &Machine, targets: &[TargetSpec]) -> Context {
    let expect = if args.sysfs.is_some() {
        Expect::default()
    } else {
        Expect::for_this_machine(m.cpus.len())
    }
    .placing_on(&m.topo, &m.cpus);
    let ctx = Context {
        timer: Timer::fallback(
            Calibration {
                rounds: 1,
                round: Duration::ZERO,
                overhead_pairs: 100,
            },
            "planning only: nothing is timed",
        ),
        topology: m.topo.clone(),
        cpus: m.cpus.clone(),
        effort: Effort::of(args.quick),
        seed: args.seed,
        progress: std::sync::Arc::new(|_| {}),
        sizing: bench_core::sizing::SizingBook::default(),
        plan: Planning::quiet(expect),
    };
    if args.sysfs.is_some() {
        assume_memory(&ctx, targets);
    }
    ctx
}

/// The memory each target of a planned machine offers: a node's (nine tenths of its
/// total, as a running machine has some in use), all nodes with CPUs for `anon`; every
/// node too (the NUMA matrix places memory on each).
fn assume_memory(ctx: &Context, targets: &[TargetSpec]) {
    let share = |b: u64| Some((b as f64 * 0.9) as usize);
    let nodes: Vec<TargetSpec> = ctx
        .topology
        .nodes
        .iter()
        .map(|n| TargetSpec::Node(n.id))
        .collect();
    for t in targets.iter().chain(&nodes) {
        let bytes = match t {
            TargetSpec::Node(n) => ctx.topology.node(*n).and_then(|n| share(n.mem_total_bytes)),
            _ => share(
                ctx.topology
                    .nodes
                    .iter()
                    .filter(|n| !n.cpus.is_empty())
                    .map(|n| n.mem_total_bytes)
                    .sum(),
            ),
        };
        ctx.sizing.assume_available(&t.to_string(), bytes);
    }
}

/// The plan of `plan` on machine `m` (its targets, the effort, the budget of `args`).
pub fn for_machine(
    args: &RunArgs,
    plan: &Plan,
    m: &Machine,
) -> Result<(Schedule, Vec<TargetSpec>)> {
    let targets = resolve_targets(
        args,
        &m.topo,
        plan.far_nodes_by_default,
        plan.interleave_parts,
    )?;
    let ctx = plan_context(args, m, &targets);
    let (_, s) = fit(&plan.benches, &targets, &ctx, args.budget);
    Ok((s, targets))
}

/// `--plan`: prints the plan of `plan` for this machine (or the `--sysfs` one) and
/// measures nothing.
pub fn print(args: &RunArgs, plan: &Plan) -> Result<()> {
    let m = crate::machine::machine(args)?;
    let (s, targets) = for_machine(args, plan, &m)?;
    let links = plan_links(args)?;
    let text = match args.format {
        Format::Json => {
            let mut r = serde_json::to_value(s.record())?;
            r["machine"] = serde_json::json!({
                "sysfs": args.sysfs.as_ref().map(|p| p.display().to_string()),
                "cpus": m.cpus.len(),
                "quick": args.quick,
                "links": crate::links::json(&links),
            });
            format!("{}\n", serde_json::to_string_pretty(&r)?)
        }
        _ => width::fit(
            &s.table(&header(args, &m, &targets), args.verbose),
            width::stdout_columns(),
        ),
    };
    crate::output::stdout::print(&text)?;
    // A degraded link is said before anything is measured (names from the tree, escaped).
    for w in bench_core::pci::links::warnings(&links) {
        let line = format!("{}: {}", w.code, printable(&w.message));
        eprint!(
            "{}",
            width::fit(&format!("{line}\n"), width::stderr_columns())
        );
    }
    // A reason may name the --sysfs tree (`no NVIDIA GPU in ROOT/...`): shown escaped.
    for sk in &plan.skipped {
        let line = format!("skipped {}: {}", sk.benchmark, printable(&sk.reason));
        eprint!(
            "{}",
            width::fit(&format!("{line}\n"), width::stderr_columns())
        );
    }
    Ok(())
}

/// The PCIe links of the planned machine: this one's, or those of the `--sysfs` tree (a
/// file of it refused for what it is fails the plan, naming it, as for its CPUs).
fn plan_links(args: &RunArgs) -> Result<Vec<bench_core::pci::links::DeviceLink>> {
    let Some(root) = &args.sysfs else {
        return Ok(crate::links::read(std::path::Path::new("/")));
    };
    bench_core::sysfs::checked(|| crate::links::read(root)).map_err(|e| {
        crate::exit::invalid(anyhow::anyhow!(
            "--sysfs {}: {e}",
            printable(&root.display().to_string())
        ))
    })
}

/// The plan's first line: the machine (the `--sysfs` tree's path escaped: it is a name
/// from outside), the CPUs and targets, the effort.
pub fn header(args: &RunArgs, m: &Machine, targets: &[TargetSpec]) -> String {
    let places = bench_core::topology::places::Places::of(&m.topo, &m.cpus);
    let sp = places.span(&m.cpus);
    let names: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
    format!(
        "plan{}: {} CPUs ({} cores, {} LLC(s), {} node(s), {} socket(s)), target(s) {}, {}",
        args.sysfs.as_ref().map_or(String::new(), |p| {
            format!(" for {}", printable(&p.display().to_string()))
        }),
        sp.cpus,
        sp.cores,
        sp.llcs,
        sp.nodes,
        sp.sockets,
        printable(&names.join(", ")),
        if args.quick { "--quick" } else { "full run" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Intent;
    use bench_core::topology::fixtures::Server;
    use clap::FromArgMatches;

    /// `cxlchar all` (`--quick` when asked, and `extra` options) planned for `s`: its
    /// options, its plan and the machine (its topology built in memory; a tree of its
    /// online CPUs, nodes and GPUs only, so that nothing of this machine enters the plan).
    fn all_for(s: &Server, quick: bool, extra: &[&str]) -> (RunArgs, Plan, Machine) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
        std::fs::write(
            root.join("sys/devices/system/cpu/online"),
            format!("0-{}\n", s.cpus - 1),
        )
        .unwrap();
        bench_core::topology::fixtures::write_nodes(root, s).unwrap();
        for g in 0..s.gpus {
            let d = root.join(format!("sys/bus/pci/devices/0000:{:02x}:00.0", 0x18 + g));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("vendor"), "0x10de\n").unwrap();
            std::fs::write(d.join("class"), "0x030200\n").unwrap();
        }
        let root = root.display().to_string();
        let mut argv = vec!["cxlchar", "all", "--plan", "--sysfs", root.as_str()];
        if quick {
            argv.push("--quick");
        }
        argv.extend(extra);
        let m = crate::registry::command()
            .try_get_matches_from(argv)
            .unwrap();
        let all = m.subcommand_matches("all").unwrap();
        let run = RunArgs::from_arg_matches(all).unwrap();
        let Intent::Measure { plan, .. } = crate::registry::all(&run, all).unwrap() else {
            panic!("all measures")
        };
        let machine = Machine {
            topo: s.topology(),
            cpus: (0..s.cpus).collect(),
        };
        (run, plan, machine)
    }

    /// The plan of `cxlchar all` for `s` ([`all_for`]).
    fn plan_of(s: &Server, quick: bool, extra: &[&str]) -> Schedule {
        let (run, plan, machine) = all_for(s, quick, extra);
        for_machine(&run, &plan, &machine).unwrap().0
    }

    fn unit<'s>(s: &'s Schedule, name: &str) -> &'s Unit {
        s.units
            .iter()
            .find(|u| u.name == name && u.skip.is_none())
            .unwrap_or_else(|| panic!("{name} planned"))
    }

    /// The rungs a ladder family measures: its points less the one that places memory,
    /// over what each rung takes.
    fn rungs(s: &Schedule, name: &str, per_rung: usize) -> usize {
        (unit(s, name).cost.count() - 1) / per_rung
    }

    /// The CPU pairs `pool.c2c` measures per kind (a point per pair for CAS, flag and
    /// the bandwidth, after placing).
    fn c2c_pairs(s: &Schedule) -> usize {
        (unit(s, "pool.c2c").cost.count() - 1) / 3
    }

    /// Every fixture: the ladder's rungs in the families that take it, the pair classes,
    /// point counts and the planned time of `all` and `all --quick` against the targets
    /// (full <= 10 min on the big machines, <= 5 min on the 16-core host, <= 2 min on the
    /// 2-vCPU guests; quick <= 90 s, <= 45 s on the 16-core host, <= 20 s on the AMD
    /// guest, 25 s on the Intel one).
    #[test]
    fn every_fixture_plans_all_within_its_targets() {
        // (fixture, rungs, pair classes' pairs measured (8 per class at most), full, quick)
        let cases: [(&str, usize, usize, f64, f64); 6] = [
            ("guest-2vcpu-amd", 2, 1, 120.0, 20.0),
            // Its 105 MiB L3 makes every DRAM working set three times the AMD guest's.
            ("guest-2vcpu-intel", 2, 1, 120.0, 25.0),
            ("h200-host", 5, 8, 300.0, 45.0),
            ("epyc-2s-96c", 11, 4 * 8, 600.0, 90.0),
            ("xeon-2s-56c-snc2", 11, 4 * 8, 600.0, 90.0),
            ("four-socket-144c", 12, 2 * 8, 600.0, 90.0),
        ];
        for (name, s) in Server::machines() {
            let &(_, n_rungs, pairs, full_max, quick_max) = cases
                .iter()
                .find(|c| c.0 == name)
                .expect("a case per fixture");
            let full = plan_of(&s, false, &[]);
            let quick = plan_of(&s, true, &[]);
            // The ladder: copy-threshold measures 3 methods per rung, flush-bw every
            // column at all CPUs and 2 points at each rung below, agents 2 directions.
            assert_eq!(rungs(&full, "mem.copy-threshold", 3), n_rungs, "{name}");
            assert_eq!(
                unit(&full, "mem.agents").cost.count(),
                2 + 2 * n_rungs,
                "{name}: private buffers, placing, two directions per rung"
            );
            assert_eq!(
                rungs(&quick, "mem.copy-threshold", 3),
                n_rungs.min(2),
                "{name}"
            );
            assert_eq!(c2c_pairs(&full), pairs, "{name}");
            assert!(c2c_pairs(&quick) <= pairs / 2 + 1, "{name}");
            // Nothing without a model, every family some points.
            for u in full.units.iter().filter(|u| u.skip.is_none()) {
                assert!(!u.cost.unknown, "{name}: {} has no cost model", u.name);
            }
            assert!(
                full.total_s() <= full_max,
                "{name}: all planned {:.0} s > {full_max} s\n{}",
                full.total_s(),
                full.table(name, true)
            );
            assert!(
                quick.total_s() <= quick_max,
                "{name}: all --quick planned {:.0} s > {quick_max} s\n{}",
                quick.total_s(),
                quick.table(name, true)
            );
            assert!(quick.total_s() < full.total_s() / 2.0, "{name}");
        }
    }

    /// The Arm servers' fixtures (Grace Hopper with its GPU and MIG nodes, the Grace
    /// Superchip, Graviton3, Ampere's clusters) within the big machines' targets: `all`
    /// under 10 minutes, `all --quick` under 100 s (the DRAM checks priced with their
    /// repeat).
    #[test]
    fn arm_fixtures_plan_all_within_the_big_machines_targets() {
        for s in [
            Server::grace_hopper(),
            Server::grace_superchip(),
            Server::graviton3(),
            Server::ampere_clusters(),
        ] {
            let full = plan_of(&s, false, &[]);
            let quick = plan_of(&s, true, &[]);
            assert!(full.total_s() <= 600.0, "{}", full.table("", true));
            assert!(quick.total_s() <= 100.0, "{}", quick.table("", true));
            assert!(quick.total_s() < full.total_s() / 2.0);
        }
    }

    /// Where a run's cost would grow with the CPU count faster than the topology's levels
    /// it fails here: every family of the largest fixture within a few times the 16-core
    /// host's.
    #[test]
    fn no_family_grows_with_the_cpu_count() {
        let small = plan_of(&Server::h200_host(), false, &[]);
        let big = plan_of(&Server::four_socket_144c(), false, &[]);
        for u in big.units.iter().filter(|u| u.skip.is_none()) {
            let Some(s) = small.units.iter().find(|x| x.name == u.name) else {
                continue;
            };
            // 36 times the CPUs; the ladder has 12 rungs instead of 5.
            assert!(
                u.seconds() <= 8.0 * s.seconds().max(1.0),
                "{}: {:.0} s on 576 CPUs, {:.0} s on 16",
                u.name,
                u.seconds(),
                s.seconds()
            );
        }
    }

    /// The 16-core host with its GPU: `all --quick` well within 45 s where no lockstep
    /// section is ever repeated (a machine whose disturbances are all tolerated).
    #[test]
    fn the_h200_host_quick_run_fits_45_s_without_repeats() {
        let (run, plan, m) = all_for(&Server::h200_host(), true, &[]);
        let targets = vec![TargetSpec::Anon];
        let mut ctx = plan_context(&run, &m, &targets);
        ctx.plan.expect.repeat_threads = false;
        let s = Schedule::build(&plan.benches, &targets, &ctx);
        assert!(s.units.iter().any(|u| u.name == "gpu.bw"));
        assert!(
            s.total_s() <= 38.0,
            "{:.0} s\n{}",
            s.total_s(),
            s.table("", true)
        );
    }

    /// A skipped family's reason is in the last column: it widens its own line, not
    /// the planned seconds of every line; the `--sysfs` root and target names are shown
    /// escaped.
    #[test]
    fn a_skip_reason_widens_only_its_line_and_names_from_outside_are_escaped() {
        let (mut run, plan, m) = all_for(&Server::guest_2vcpu_amd(), true, &[]);
        let (s, targets) = for_machine(&run, &plan, &m).unwrap();
        let text = s.table(&header(&run, &m, &targets), false);
        let skipped: Vec<&str> = text.lines().filter(|l| l.contains("skipped: ")).collect();
        assert!(!skipped.is_empty(), "{text}");
        // A planned line ends in its memory (`272 MiB`, `4 KiB`).
        let planned = text
            .lines()
            .filter(|l| l.ends_with("iB") && !l.starts_with("total"))
            .map(|l| l.chars().count())
            .max()
            .expect("planned lines");
        assert!(
            planned < 70,
            "every line as wide as the longest reason:\n{text}"
        );
        run.sysfs = Some("/tmp/\u{1b}]0;owned\u{7}\u{202e}\nx".into());
        let h = header(&run, &m, &targets);
        assert!(
            h.starts_with("plan for /tmp/\\x1b]0;owned\\x07\\u{202e}\\x0ax: 2 CPUs"),
            "{h}"
        );
        assert!(!h.chars().any(crate::output::text::is_unsafe), "{h:?}");
    }

    #[test]
    fn a_budget_cuts_samples_and_rungs_and_says_so() {
        let s = Server::epyc_2s_96c();
        let full = plan_of(&s, false, &[]);
        let cut = plan_of(&s, false, &["--budget", "2m"]);
        let b = cut.budget.as_ref().expect("a budget record");
        assert!(b.fits, "{}", cut.table("", true));
        assert!(b.samples_factor < 1.0);
        assert!(cut.total_s() <= 120.0 && full.total_s() > 120.0);
        assert_eq!(b.uncut_s.round(), full.total_s().round());
        let w = cut.budget_warning().expect("warned");
        assert_eq!(w.code, "budget_cut");
        assert!(w.message.contains("--budget 2m"), "{}", w.message);
        // A generous budget changes nothing, and says it fits.
        let ample = plan_of(&s, false, &["--budget", "1h"]);
        assert_eq!(ample.budget.as_ref().unwrap().samples_factor, 1.0);
        assert!(ample.budget_warning().is_none());
        assert_eq!(ample.total_s(), full.total_s());
        // Working sets stay: the memory every family places is the same (the thread
        // sweeps' largest rung may be cut, and the buffers it needed with it).
        let ladder = ["mem.copy-threshold", "mem.alltoall-order", "mem.agents"];
        for (a, b) in full.units.iter().zip(&cut.units) {
            let placed = |u: &Unit| {
                u.cost
                    .points
                    .first()
                    .filter(|p| p.what == "placing memory")
                    .cloned()
            };
            if !ladder.contains(&a.name) {
                assert_eq!(placed(a), placed(b), "{}", a.name);
            }
        }
    }
}
