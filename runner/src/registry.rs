//! The registry of benchmark commands: one line per command. From it come the command
//! line (each command's options are its family's clap `Args`, and the shared [`RunArgs`]
//! under their headings: [`crate::help`]), its `--help`, the dispatch, and the plan of
//! `cxlchar all`.
//!
//! The top-level [`clap::Command`] is built from the derive ([`Cli`]: `all` and the commands
//! that are not benchmarks), and the registry adds its commands with the builder API
//! (`<A as clap::Args>::augment_args`); a matched command is read back with
//! `FromArgMatches` and planned through its [`Setup`].

use crate::cli::{Cli, RunArgs};
use crate::exit::invalid;
use crate::run::{options, Plan};
use crate::session::Intent;
use anyhow::{anyhow, Result};
use bench_core::bench::Setup;
use bench_cxl::msg::MsgArgs;
use bench_cxl::pool::Role;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches};

/// Every benchmark command, in the order of `--help` (groups appear in the order of
/// their first command). `all(n)`: part of `cxlchar all`, run in increasing `n`
/// (`mem.latency` first: it records the DRAM working set the others size from).
pub fn registry() -> Vec<Entry> {
    use bench_cxl::{atomics, c2c, flush, flush_bw, msg, msg_scale};
    use bench_mem::{
        agents, alltoall_order, bandwidth, interference, latency, loaded, matrix, scan, threshold,
    };
    vec![
        Entry::new::<latency::LatencyArgs>("mem latency").all(1),
        Entry::new::<loaded::LoadedArgs>("mem loaded").all(5),
        Entry::new::<threshold::CopyThresholdArgs>("mem copy-threshold").all(3),
        Entry::new::<alltoall_order::AlltoallOrderArgs>("mem alltoall-order").all(4),
        Entry::new::<bandwidth::BandwidthArgs>("mem bandwidth").all(2),
        Entry::new::<agents::AgentsArgs>("mem agents").all(6),
        Entry::new::<interference::InterferenceArgs>("mem interference").all(19),
        Entry::new::<matrix::MatrixArgs>("mem matrix").all(17),
        Entry::new::<scan::ScanArgs>("mem scan").all(18),
        Entry::new::<bench_pcie::mmio::MmioArgs>("pcie mmio")
            .all_with_args(14)
            .needs(&["bar"]),
        Entry::new::<bench_pcie::post_parts::PostPartsArgs>("pcie post-parts").all_sharing_args(15),
        Entry::new::<atomics::AtomicsArgs>("pool atomics").all(7),
        Entry::new::<c2c::C2cArgs>("pool c2c").all(8),
        Entry::new::<flush::FlushArgs>("pool flush").all(9),
        Entry::new::<flush_bw::FlushBwArgs>("pool flush-bw").all(10),
        Entry::new::<msg::MsgArgs>("pool msg")
            .all(11)
            .intent_with(pool_msg),
        Entry::new::<msg_scale::MsgScaleArgs>("pool msg-scale").all(12),
        Entry::new::<bench_ibverbs::bench::VerbsArgs>("verbs").all(16),
        Entry::new::<bench_gpu::config::GpuArgs>("gpu").all(13),
    ]
}

/// The path of every benchmark command (`mem latency`), in the registry's order.
#[cfg(test)]
pub fn registry_paths() -> Vec<String> {
    registry().iter().map(|e| e.path.join(" ")).collect()
}

/// What `pool msg` asks for: a follower serves, any other role measures its plan.
fn pool_msg(run: &RunArgs, m: &ArgMatches) -> Result<Intent> {
    let msg = MsgArgs::from_arg_matches(m).map_err(|e| invalid(e.into()))?;
    if msg
        .role
        .as_deref()
        .map(str::parse::<Role>)
        .transpose()
        .map_err(|e| invalid(anyhow!(e)))?
        == Some(Role::Follower)
    {
        let run = run.clone();
        return Ok(Intent::Serve(Box::new(move || {
            let (n, source) = crate::pool::serve(&run, &msg)?;
            println!("follower: served {n} commands from the leader on {source}");
            Ok(())
        })));
    }
    Ok(Intent::measure(run, crate::run::plan(run, &msg)?))
}

/// Groups of commands the derive does not define, with their one-line help.
const GROUPS: &[(&str, &str)] = &[
    ("mem", "Memory benchmarks"),
    (
        "pool",
        "Shared memory pool benchmarks: atomics, core-to-core, flush costs and bandwidth, messaging",
    ),
];

/// What a matched command asks for (given its shared options and its own matches).
type IntentFn = fn(&RunArgs, &ArgMatches) -> Result<Intent>;

/// One benchmark command.
pub struct Entry {
    /// `["mem", "latency"]`, or `["verbs"]` for a top-level command.
    path: Vec<&'static str>,
    /// Rank in `cxlchar all` (`None`: not part of it).
    all_rank: Option<u8>,
    /// Its options are also options of `all` (`--bar`).
    args_in_all: bool,
    /// Configured in `all` from `all`'s options, which another entry added.
    args_from_all: bool,
    /// Options the command needs (optional where `all` takes them).
    needs: &'static [&'static str],
    /// Adds the command's options to a `clap::Command`.
    augment: fn(clap::Command) -> clap::Command,
    /// Reads the command's options back.
    setup: fn(&ArgMatches) -> Result<Box<dyn Setup>, clap::Error>,
    /// Its intent: measure its plan, unless the entry says otherwise.
    intent: IntentFn,
}

impl Entry {
    /// The command at `path` (space-separated: `"mem latency"`), configured by `A`.
    pub fn new<A: Args + FromArgMatches + Setup + 'static>(path: &'static str) -> Entry {
        Entry {
            path: path.split(' ').collect(),
            all_rank: None,
            args_in_all: false,
            args_from_all: false,
            needs: &[],
            augment: A::augment_args,
            setup: |m| Ok(Box::new(A::from_arg_matches(m)?)),
            intent: |run, m| {
                let a = A::from_arg_matches(m).map_err(|e| invalid(e.into()))?;
                Ok(Intent::measure(run, crate::run::plan(run, &a)?))
            },
        }
    }

    /// Part of `cxlchar all` with its default options, at rank `n`.
    pub fn all(mut self, n: u8) -> Entry {
        self.all_rank = Some(n);
        self
    }

    /// Part of `cxlchar all` at rank `n`, with its options added to `all`'s.
    pub fn all_with_args(mut self, n: u8) -> Entry {
        self.args_in_all = true;
        self.all(n)
    }

    /// Part of `cxlchar all` at rank `n`, configured by options another entry already
    /// added to `all` (`pcie post-parts` reads `pcie mmio`'s `--bar`).
    pub fn all_sharing_args(mut self, n: u8) -> Entry {
        self.args_from_all = true;
        self.all(n)
    }

    /// The command needs the options `ids` (clap refuses it without them, exit 2); in
    /// `all` they stay optional (`pcie mmio --bar`).
    pub fn needs(mut self, ids: &'static [&'static str]) -> Entry {
        self.needs = ids;
        self
    }

    /// Asks `f` for its intent instead of plan-and-measure (a pool follower serves).
    pub fn intent_with(mut self, f: IntentFn) -> Entry {
        self.intent = f;
        self
    }

    /// The command's name (the last word of its path).
    fn name(&self) -> &'static str {
        self.path[self.path.len() - 1]
    }

    /// The leaf command: the family's options first in `--help`, then the shared ones
    /// in short under their headings ([`crate::help::shorten_common`]), then two
    /// examples. The family's doc comment is the command's help.
    fn command(&self) -> clap::Command {
        let common = RunArgs::augment_args(clap::Command::new(self.name()));
        // The shared options leave their heading set: the family's have none.
        let mut c = (self.augment)(crate::help::shorten_common(common).next_help_heading(None));
        for id in self.needs {
            c = c.mut_arg(*id, |a| a.required(true));
        }
        match crate::help::examples_of(&self.path.join(" ")) {
            Some(ex) => {
                let after = crate::help::examples(&c, ex);
                c.after_help(after)
            }
            None => c,
        }
    }

    /// Its options as `cxlchar all` uses them: from `all`'s command line when they are
    /// options of `all`, else the command's defaults.
    fn setup_for_all(&self, all: &ArgMatches) -> Result<Box<dyn Setup>> {
        let m;
        let matches = if self.args_in_all || self.args_from_all {
            all
        } else {
            m = (self.augment)(clap::Command::new(self.name()).no_binary_name(true))
                .try_get_matches_from(Vec::<String>::new())?;
            &m
        };
        Ok((self.setup)(matches)?)
    }
}

/// The whole command line: the derive's commands and the registry's.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    let mut order = 1;
    let mut groups: Vec<&str> = Vec::new();
    for e in registry() {
        let leaf = e.command();
        match e.path.as_slice() {
            [_] => {
                cmd = cmd.subcommand(leaf.display_order(order));
                order += 1;
            }
            [g, _] => {
                let g: &'static str = g;
                if !groups.contains(&g) {
                    groups.push(g);
                    if cmd.find_subcommand(g).is_none() {
                        let about = GROUPS
                            .iter()
                            .find(|(n, _)| *n == g)
                            .map(|(_, a)| *a)
                            .unwrap_or_else(|| panic!("group `{g}` is not in GROUPS"));
                        cmd = cmd.subcommand(
                            clap::Command::new(g)
                                .about(about)
                                .subcommand_required(true)
                                .arg_required_else_help(true),
                        );
                    }
                    let o = order;
                    cmd = cmd.mut_subcommand(g, |c| c.display_order(o));
                    order += 1;
                }
                cmd = cmd.mut_subcommand(g, |c| c.subcommand(leaf));
            }
            p => panic!("registry path {p:?}: one or two words"),
        }
        if e.args_in_all {
            cmd = cmd.mut_subcommand("all", |c| {
                // The family's doc comment would become `all`'s help: keep `all`'s own.
                let (about, long) = (c.get_about().cloned(), c.get_long_about().cloned());
                let c = c.next_help_heading(None);
                let mut c = (e.augment)(c).about(None).long_about(None);
                if let Some(a) = about {
                    c = c.about(a);
                }
                if let Some(l) = long {
                    c = c.long_about(l);
                }
                c
            });
        }
    }
    let all = crate::help::examples_of("all").expect("examples of `all`");
    cmd = cmd.mut_subcommand("all", |c| {
        let after = crate::help::examples(&c, all);
        c.after_help(after)
    });
    let top = crate::help::examples(&cmd, &crate::help::TOP_EXAMPLES);
    // `--help` wraps to the terminal (clap's `wrap_help`: stdout's, stderr's or stdin's
    // width, else COLUMNS, else 100), at most MAX_HELP_WIDTH wide for reading.
    explain_sizes(cmd.after_help(top)).max_term_width(MAX_HELP_WIDTH)
}

/// The widest `--help` is wrapped to on a wide terminal.
pub const MAX_HELP_WIDTH: usize = 120;

/// Appends the one size grammar ([`bench_core::units::SIZE_HELP`]) to the help of every
/// option whose value is a size or offset (value name `SIZE` or `OFFSET`), and the one
/// duration grammar ([`bench_core::units::DURATION_HELP`]) to every option whose value is
/// a duration (value name `DURATION`), in `cmd` and every command below it.
fn explain_sizes(mut cmd: clap::Command) -> clap::Command {
    let explained: Vec<(clap::Id, &str)> = cmd
        .get_arguments()
        .filter_map(|a| {
            let grammar = if is_size_arg(a) {
                bench_core::units::SIZE_HELP
            } else if is_duration_arg(a) {
                bench_core::units::DURATION_HELP
            } else {
                return None;
            };
            Some((a.get_id().clone(), grammar))
        })
        .collect();
    for (id, grammar) in explained {
        cmd = cmd.mut_arg(id, |a| {
            let add = |h: Option<&clap::builder::StyledStr>| {
                let h = h.map(|h| h.to_string()).unwrap_or_default();
                format!("{} [{grammar}]", h.trim_end())
            };
            let long = a.get_long_help().is_some().then(|| add(a.get_long_help()));
            let short = add(a.get_help());
            let a = a.help(short);
            match long {
                Some(l) => a.long_help(l),
                None => a,
            }
        });
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, explain_sizes);
    }
    cmd
}

/// An option whose value is a size or an offset in the one size grammar.
pub fn is_size_arg(a: &clap::Arg) -> bool {
    a.get_value_names()
        .is_some_and(|v| v.iter().any(|n| n == "SIZE" || n == "OFFSET"))
}

/// An option whose value is a duration ([`bench_core::units::parse_duration`]).
pub fn is_duration_arg(a: &clap::Arg) -> bool {
    a.get_value_names()
        .is_some_and(|v| v.iter().any(|n| n == "DURATION"))
}

/// The shared options and the intent of the registry's command that `m` (the top-level
/// matches) names; `None` when it names a command of the derive.
pub fn dispatch(m: &ArgMatches) -> Option<Result<(RunArgs, Intent)>> {
    let (top, sub) = m.subcommand()?;
    let entries = registry();
    let (e, leaf) = entries.iter().find_map(|e| match e.path.as_slice() {
        [n] if *n == top => Some((e, sub)),
        [g, n] if *g == top => match sub.subcommand() {
            Some((s, leaf)) if s == *n => Some((e, leaf)),
            _ => None,
        },
        _ => None,
    })?;
    Some(
        RunArgs::from_arg_matches(leaf)
            .map_err(|e| invalid(e.into()))
            .and_then(|run| {
                let intent = (e.intent)(&run, leaf)?;
                Ok((run, intent))
            }),
    )
}

/// `cxlchar all`: every registry entry marked for it, in rank order, each with its
/// defaults (or `all`'s options where it adds them); far-memory nodes are default
/// targets, and the nodes of an `interleave:` target are measured as well. Best effort by
/// design (what this machine lacks is skipped), and a fleet run measures its pairs.
pub fn all(run: &RunArgs, m: &ArgMatches) -> Result<Intent> {
    let opts = options(run)?;
    let mut entries: Vec<Entry> = registry()
        .into_iter()
        .filter(|e| e.all_rank.is_some())
        .collect();
    entries.sort_by_key(|e| e.all_rank);
    let mut plan = Plan {
        benches: vec![],
        skipped: vec![],
        far_nodes_by_default: true,
        interleave_parts: true,
    };
    for e in &entries {
        // What a family refuses when it plans is bad input (Setup::plan).
        let p = e
            .setup_for_all(m)
            .map_err(invalid)?
            .plan_all(&opts)
            .map_err(|e| invalid(anyhow!(e)))?;
        plan.benches.extend(p.benchmarks);
        plan.skipped.extend(p.skipped);
    }
    Ok(Intent::Measure {
        plan,
        best_effort: true,
        pairs_by_default: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::bench::Options;

    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    /// Every line of every command's help, short and long, at most `width` characters.
    fn help_fits(cmd: &mut clap::Command, path: &str, width: usize) {
        for help in [cmd.render_help(), cmd.render_long_help()] {
            for l in help.to_string().lines() {
                let n = l.chars().count();
                assert!(
                    n <= width,
                    "`{path} --help` at {width}: {n} characters: {l}"
                );
            }
        }
        for sc in cmd.get_subcommands_mut() {
            let p = format!("{path} {}", sc.get_name());
            help_fits(sc, &p, width);
        }
    }

    #[test]
    fn every_help_is_wrapped_to_the_terminal_width() {
        for width in [80, 100, MAX_HELP_WIDTH] {
            let mut cmd = command().term_width(width);
            cmd.build();
            help_fits(&mut cmd, "cxlchar", width);
        }
        // A wider terminal: no wider than the widest help.
        let mut cmd = command().term_width(200);
        cmd.build();
        help_fits(&mut cmd, "cxlchar", 200);
    }

    #[test]
    fn every_entry_is_reachable_and_all_ranks_are_distinct() {
        let cmd = command();
        let mut ranks = Vec::new();
        for e in registry() {
            let mut c = &cmd;
            for w in &e.path {
                c = c
                    .find_subcommand(w)
                    .unwrap_or_else(|| panic!("{:?} is not a command", e.path));
            }
            assert!(c.get_arguments().any(|a| a.get_id() == "quick"));
            ranks.extend(e.all_rank);
        }
        let n = ranks.len();
        ranks.sort();
        ranks.dedup();
        assert_eq!(ranks.len(), n, "two entries share a rank in `all`");
    }

    #[test]
    fn an_entry_sharing_all_s_options_finds_every_one_of_them_there() {
        let cmd = command();
        let all = cmd.find_subcommand("all").unwrap();
        for e in registry().iter().filter(|e| e.args_from_all) {
            let own = (e.augment)(clap::Command::new("x"));
            for a in own.get_arguments() {
                assert!(
                    all.get_arguments().any(|b| b.get_id() == a.get_id()),
                    "{:?} reads --{} from `all`, which lacks it",
                    e.path,
                    a.get_id()
                );
            }
        }
    }

    /// The options `arg` of the command at `path` needs to apply (its `requires`, and what
    /// the command needs: `pcie mmio --bar`), with a value each.
    fn needed_with(path: &[String], arg: &clap::Arg) -> Vec<String> {
        let bar = "--bar=pci:0000:00:00.0/0".to_string();
        let mut v: Vec<String> = match arg.get_long().unwrap_or_default() {
            l if l.starts_with("fleet-") => vec!["--fleet-out=f.json".into()],
            "offset" | "len" => vec!["--pool=file:p".into()],
            "bar-offset" => vec![bar.clone()],
            _ => vec![],
        };
        if path.join(" ") == "pcie mmio" && arg.get_long() != Some("bar") && !v.contains(&bar) {
            v.push(bar);
        }
        v
    }

    /// A kind of option: `is` tells one; an option whose long name `looks` like one must
    /// be one (`rule` says what that takes).
    #[derive(Clone, Copy)]
    struct OptionKind {
        is: fn(&clap::Arg) -> bool,
        looks: fn(&str) -> bool,
        rule: &'static str,
    }

    /// Every option of every command of `kind`, with the words that lead to it.
    fn options_of_kind(kind: OptionKind) -> Vec<(Vec<String>, clap::Arg)> {
        fn walk(
            c: &clap::Command,
            kind: OptionKind,
            path: &mut Vec<String>,
            out: &mut Vec<(Vec<String>, clap::Arg)>,
        ) {
            for a in c.get_arguments() {
                let long = a.get_long().unwrap_or_default();
                assert_eq!(
                    (kind.is)(a),
                    (kind.looks)(long),
                    "{path:?} --{long}: {}",
                    kind.rule
                );
                if (kind.is)(a) {
                    out.push((path.clone(), a.clone()));
                }
            }
            for s in c.get_subcommands() {
                path.push(s.get_name().to_string());
                walk(s, kind, path, out);
                path.pop();
            }
        }
        let mut out = Vec::new();
        walk(&command(), kind, &mut vec![], &mut out);
        out
    }

    /// Every size-like option of every command, with the words that lead to it.
    fn size_options() -> Vec<(Vec<String>, clap::Arg)> {
        options_of_kind(OptionKind {
            is: is_size_arg,
            looks: |long| {
                ["size", "chunk", "cell", "offset", "len", "slot", "locality", "range"]
                    .iter()
                    .any(|w| long.contains(w))
            },
            rule: "a size option takes value_name = \"SIZE\" (or \"OFFSET\") and a bench_core::units parser",
        })
    }

    #[test]
    fn every_size_option_speaks_the_one_size_grammar() {
        let opts = size_options();
        let longs: Vec<String> = opts
            .iter()
            .map(|(p, a)| format!("{} --{}", p.join(" "), a.get_long().unwrap()))
            .collect();
        for known in [
            "mem latency --max-size",
            "mem latency --sizes",
            "mem latency --slot",
            "mem bandwidth --sizes",
            "mem agents --size",
            "mem scan --size",
            "mem scan --range",
            "mem alltoall-order --ref-size",
            "mem copy-threshold --max-size",
            "pool atomics --size",
            "pool flush-bw --chunk",
            "pool msg --offset",
            "pool msg-scale --cells",
            "pcie mmio --bar-offset",
            "all --bar-offset",
            "gpu --max-size",
        ] {
            assert!(longs.iter().any(|l| l == known), "{known} not in {longs:?}");
        }
        let value = |m: &ArgMatches, id: &str| -> u64 {
            if let Ok(Some(v)) = m.try_get_one::<usize>(id) {
                *v as u64
            } else if let Ok(Some(v)) = m.try_get_one::<u64>(id) {
                *v
            } else {
                panic!("--{id} has no usize/u64 value")
            }
        };
        for (path, arg) in &opts {
            let long = arg.get_long().unwrap();
            let parse = |v: &str| {
                let mut argv = vec!["cxlchar".to_string()];
                argv.extend(path.iter().cloned());
                argv.push(format!("--{long}={v}"));
                argv.extend(needed_with(path, arg));
                command().try_get_matches_from(argv)
            };
            for v in ["64K", "64KiB", "65536", "64k", "64kib"] {
                let mut m = &parse(v).unwrap_or_else(|e| panic!("{path:?} --{long} {v}: {e}"));
                for w in path {
                    m = m.subcommand_matches(w).unwrap();
                }
                assert_eq!(
                    value(m, arg.get_id().as_str()),
                    65536,
                    "{path:?} --{long} {v}"
                );
            }
            for v in ["64KB", "64kb", "abc", "1.5K", "64 K", "-64K", ""] {
                let e = parse(v).expect_err(&format!("{path:?} --{long} accepted {v:?}"));
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{path:?} --{long} {v:?}: {e}"
                );
            }
            let help = arg.get_help().unwrap().to_string();
            assert!(
                help.contains(bench_core::units::SIZE_HELP),
                "{path:?} --{long}: {help}"
            );
        }
    }

    /// Every option whose name says it is a wait, with the words that lead to it; each
    /// must be a duration option.
    fn duration_options() -> Vec<(Vec<String>, clap::Arg)> {
        options_of_kind(OptionKind {
            is: is_duration_arg,
            looks: |long| long.contains("timeout") || long == "budget",
            rule: "a duration option takes value_name = \"DURATION\" and bench_core::units::parse_duration",
        })
    }

    #[test]
    fn every_duration_option_is_bounded_at_parse_time() {
        let opts = duration_options();
        let longs: Vec<String> = opts
            .iter()
            .map(|(p, a)| format!("{} --{}", p.join(" "), a.get_long().unwrap()))
            .collect();
        for known in [
            "all --fleet-timeout",
            "mem latency --fleet-timeout",
            "pool msg --timeout",
            "pool msg --peer-timeout",
            "verbs --timeout",
        ] {
            assert!(longs.iter().any(|l| l == known), "{known} not in {longs:?}");
        }
        for (path, arg) in &opts {
            let long = arg.get_long().unwrap();
            let parse = |v: &str| {
                let mut argv = vec!["cxlchar".to_string()];
                argv.extend(path.iter().cloned());
                argv.push(format!("--{long}={v}"));
                argv.extend(needed_with(path, arg));
                command().try_get_matches_from(argv)
            };
            parse("90s").unwrap_or_else(|e| panic!("{path:?} --{long} 90s: {e}"));
            parse("1w").unwrap_or_else(|e| panic!("{path:?} --{long} 1w: {e}"));
            for v in ["500000000000years", "8d", "169h", "0s", "30", "abc"] {
                let e = parse(v).expect_err(&format!("{path:?} --{long} accepted {v:?}"));
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{path:?} --{long} {v:?}: {e}"
                );
            }
            let help = arg.get_help().unwrap().to_string();
            assert!(
                help.contains(bench_core::units::DURATION_HELP),
                "{path:?} --{long}: {help}"
            );
        }
    }

    #[test]
    fn all_configurations_are_the_benchmarks_defaults() {
        let all = command().try_get_matches_from(["cxlchar", "all"]).unwrap();
        let all = all.subcommand_matches("all").unwrap();
        let opts = Options {
            cpus: vec![0, 1],
            ..Default::default()
        };
        let names = |e: &Entry| -> Vec<String> {
            match e.setup_for_all(all).unwrap().plan_all(&opts) {
                Ok(p) => p
                    .benchmarks
                    .iter()
                    .map(|b| b.name().to_string())
                    .chain(p.skipped.iter().map(|s| format!("skip {}", s.benchmark)))
                    .collect(),
                Err(e) => vec![format!("error {e}")],
            }
        };
        let reg = registry();
        let find = |p: &str| reg.iter().find(|e| e.path.join(" ") == p).unwrap();
        assert_eq!(names(find("mem latency")), ["mem.latency"]);
        assert_eq!(names(find("mem bandwidth")), ["mem.bandwidth"]);
        assert_eq!(names(find("pool msg")), ["pool.msg"]);
        assert_eq!(names(find("pcie mmio")), ["skip pcie.mmio"]);
        assert_eq!(names(find("pcie post-parts")), ["pcie.post-parts"]);
        let one_node = bench_core::topology::Topology::system().nodes.len() < 2;
        assert_eq!(
            names(find("mem matrix")),
            [if one_node {
                "skip mem.matrix"
            } else {
                "mem.matrix"
            }]
        );
        // The defaults from clap are the benchmarks' own defaults.
        let m = bench_mem::latency::LatencyArgs::augment_args(clap::Command::new("x"))
            .get_matches_from(["x"]);
        let lat = bench_mem::latency::LatencyArgs::from_arg_matches(&m).unwrap();
        assert_eq!(
            lat.bench().unwrap(),
            bench_mem::latency::LatencyBench::default()
        );
    }
}
