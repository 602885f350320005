//! What `--help` and a command-line error show beyond each option's own text: a measuring
//! command's own options first, the options every measuring command shares as a short
//! group (their first paragraph; `cxlchar all --help` has them in full), the fleet options
//! under their heading, two commands to paste at the end of `cxlchar --help` and of every
//! measuring command, and the "did you mean" of a mistyped long option that clap's own
//! matching misses.

use crate::cli::{RunArgs, FLEET_HEADING};
use clap::builder::StyledStr;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Args;
use std::ffi::OsString;
use std::fmt::Write as _;

/// The heading of the shared options in a measuring command's `--help`.
pub const COMMON_SHORT_HEADING: &str = "Common options (in full: cxlchar all --help)";

/// Two commands to paste at the end of `cxlchar --help`.
pub const TOP_EXAMPLES: [&str; 2] = [
    "cxlchar all --out params.json",
    "cxlchar report params.json --out report.html",
];

/// Two commands at the end of each measuring command's `--help`, by its path: a short
/// look first, then a run as it is usually made. Each must parse (tested).
pub const EXAMPLES: &[(&str, [&str; 2])] = &[
    (
        "all",
        [
            "cxlchar all --quick --plan",
            "cxlchar all --out params.json",
        ],
    ),
    (
        "mem latency",
        [
            "cxlchar mem latency --quick",
            "cxlchar mem latency --target node:1 --out latency.json",
        ],
    ),
    (
        "mem loaded",
        [
            "cxlchar mem loaded --quick",
            "cxlchar mem loaded --mess-family --out loaded.json",
        ],
    ),
    (
        "mem copy-threshold",
        [
            "cxlchar mem copy-threshold --quick",
            "cxlchar mem copy-threshold --threads 1,2,4 --out threshold.json",
        ],
    ),
    (
        "mem alltoall-order",
        [
            "cxlchar mem alltoall-order --quick",
            "cxlchar mem alltoall-order --max-size 1M --out alltoall.json",
        ],
    ),
    (
        "mem bandwidth",
        [
            "cxlchar mem bandwidth --quick",
            "cxlchar mem bandwidth --target node:1 --kernel read,copy --out bandwidth.json",
        ],
    ),
    (
        "mem interference",
        [
            "cxlchar mem interference --quick --target anon --target thp",
            "cxlchar mem interference --target anon --target node:1 --out interference.json",
        ],
    ),
    (
        "mem agents",
        [
            "cxlchar mem agents --quick",
            "cxlchar mem agents --target node:1 --agents 1,2,4 --out agents.json",
        ],
    ),
    (
        "mem matrix",
        [
            "cxlchar mem matrix --quick",
            "cxlchar mem matrix --loaded --out matrix.json",
        ],
    ),
    (
        "mem scan",
        [
            "cxlchar mem scan --quick",
            "cxlchar mem scan --target node:1 --range 1G --out scan.json",
        ],
    ),
    (
        "pcie mmio",
        [
            "cxlchar pcie list",
            "cxlchar pcie mmio --bar pci:0000:03:00.0/0 --out mmio.json",
        ],
    ),
    (
        "pcie post-parts",
        [
            "cxlchar pcie post-parts --quick",
            "cxlchar pcie post-parts --bar pci:0000:03:00.0/0 --out post-parts.json",
        ],
    ),
    (
        "pool atomics",
        [
            "cxlchar pool atomics --quick",
            "cxlchar pool atomics --target node:1 --out atomics.json",
        ],
    ),
    (
        "pool c2c",
        [
            "cxlchar pool c2c --quick",
            "cxlchar pool c2c --pairs all --out c2c.json",
        ],
    ),
    (
        "pool flush",
        [
            "cxlchar pool flush --quick",
            "cxlchar pool flush --target node:1 --out flush.json",
        ],
    ),
    (
        "pool flush-bw",
        [
            "cxlchar pool flush-bw --quick",
            "cxlchar pool flush-bw --threads 1,2,4 --out flush-bw.json",
        ],
    ),
    (
        "pool msg",
        [
            "cxlchar pool msg --quick",
            "cxlchar pool msg --pool dax:/dev/dax0.0 --allow-write --out msg.json",
        ],
    ),
    (
        "pool msg-scale",
        [
            "cxlchar pool msg-scale --quick",
            "cxlchar pool msg-scale --cells 16K,64K --out msg-scale.json",
        ],
    ),
    (
        "verbs",
        [
            "cxlchar verbs --quick",
            "cxlchar verbs --connect HOST --out verbs.json",
        ],
    ),
    (
        "gpu",
        [
            "cxlchar gpu --quick",
            "cxlchar gpu --target node:1 --out gpu.json",
        ],
    ),
];

/// The examples of the command at `path` (`"mem latency"`).
pub fn examples_of(path: &str) -> Option<&'static [&'static str; 2]> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| e)
}

/// An `Examples:` section (headed as clap heads its sections in `cmd`) of `lines`.
pub fn examples(cmd: &clap::Command, lines: &[&str]) -> StyledStr {
    let h = cmd.get_styles().get_header();
    let mut s = StyledStr::new();
    let _ = write!(s, "{h}Examples:{h:#}");
    for l in lines {
        let _ = write!(s, "\n  {l}");
    }
    s
}

/// The shared options of `leaf` (a measuring command that has just been given them) as
/// its `--help` shows them: each with its first paragraph only (which names the values an
/// option takes: the list of values with their help is left out), under
/// [`COMMON_SHORT_HEADING`] or the fleet heading. `all --help` keeps them in full.
pub fn shorten_common(mut leaf: clap::Command) -> clap::Command {
    let ids: Vec<clap::Id> = RunArgs::augment_args(clap::Command::new("common"))
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect();
    for id in ids {
        leaf = leaf.mut_arg(id, |a| {
            let fleet = a.get_help_heading() == Some(FLEET_HEADING);
            let mut a = a.long_help(None);
            if a.get_action().takes_values() && !a.get_possible_values().is_empty() {
                a = a.hide_possible_values(true);
            }
            if fleet {
                a
            } else {
                a.help_heading(COMMON_SHORT_HEADING)
            }
        });
    }
    leaf
}

/// Adds to `err` (clap's error for `argv` on `cmd`) the long option the user most likely
/// meant when clap found none: clap suggests only names very close by its own measure
/// (`--ouput` is not close enough to `--out`); this takes any long option of the command
/// within two edits (a letter added, dropped, changed or two swapped).
pub fn suggest_long(mut err: clap::Error, cmd: &clap::Command, argv: &[OsString]) -> clap::Error {
    if err.kind() != ErrorKind::UnknownArgument
        || err.get(ContextKind::SuggestedArg).is_some()
        || err.get(ContextKind::Suggested).is_some()
    {
        return err;
    }
    let Some(ContextValue::String(given)) = err.get(ContextKind::InvalidArg) else {
        return err;
    };
    let Some(name) = given.strip_prefix("--") else {
        return err;
    };
    let name = name.split('=').next().unwrap_or(name).to_string();
    let leaf = leaf_of(cmd, argv);
    if let Some(best) = nearest_long(leaf, &name) {
        err.insert(
            ContextKind::SuggestedArg,
            ContextValue::String(format!("--{best}")),
        );
    }
    err
}

/// The (sub)command `argv` names: its leading words that are subcommands.
fn leaf_of<'a>(cmd: &'a clap::Command, argv: &[OsString]) -> &'a clap::Command {
    let mut c = cmd;
    for w in argv.iter().skip(1) {
        let Some(w) = w.to_str() else { break };
        match c.find_subcommand(w) {
            Some(s) if !w.starts_with('-') => c = s,
            _ => break,
        }
    }
    c
}

/// The visible long option of `cmd` nearest to `name`: within one edit of a name of up
/// to three letters, two of a longer one.
fn nearest_long(cmd: &clap::Command, name: &str) -> Option<String> {
    let max = if name.chars().count() <= 3 { 1 } else { 2 };
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .chain(["help", "version"])
        .map(|l| (edits(name, l), l))
        .filter(|(d, _)| *d <= max)
        .min_by_key(|(d, _)| *d)
        .map(|(_, l)| l.to_string())
}

/// The optimal string alignment distance of `a` and `b`: letters added, dropped or
/// changed, and two neighbours swapped, each one edit.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, v) in d[0].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_measuring_command_has_two_examples_that_parse_and_run_it() {
        let mut paths: Vec<String> = crate::registry::registry_paths();
        paths.push("all".into());
        for path in &paths {
            let ex = examples_of(path).unwrap_or_else(|| panic!("no examples of {path}"));
            let own = format!("cxlchar {path} ");
            assert!(ex.iter().any(|l| l.starts_with(&own)), "{path}: {ex:?}");
        }
        assert_eq!(
            EXAMPLES.len(),
            paths.len(),
            "examples of a command that is not one"
        );
        for line in EXAMPLES.iter().flat_map(|(_, e)| e).chain(&TOP_EXAMPLES) {
            let argv: Vec<&str> = line.split_whitespace().collect();
            crate::registry::command()
                .try_get_matches_from(&argv)
                .unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(
                line.chars()
                    .all(|c| c.is_ascii_alphanumeric() || " -_.,:/=".contains(c)),
                "{line}: nothing a shell would read differently"
            );
        }
    }

    #[test]
    fn edits_count_letters_added_dropped_changed_and_swapped() {
        assert_eq!(edits("ouput", "out"), 2);
        assert_eq!(edits("out", "out"), 0);
        assert_eq!(edits("otu", "out"), 1);
        assert_eq!(edits("targt", "target"), 1);
        assert_eq!(edits("", "abc"), 3);
    }

    #[test]
    fn a_mistyped_option_gets_the_nearest_and_a_far_one_none() {
        let cmd = crate::registry::command();
        let lat = cmd
            .find_subcommand("mem")
            .and_then(|m| m.find_subcommand("latency"))
            .unwrap();
        assert_eq!(nearest_long(lat, "ouput").as_deref(), Some("out"));
        assert_eq!(nearest_long(lat, "quikc").as_deref(), Some("quick"));
        assert_eq!(nearest_long(lat, "xyzzyplugh"), None);
        assert_eq!(nearest_long(lat, "zz"), None);
        assert_eq!(nearest_long(lat, "ot").as_deref(), Some("out"));
        let argv: Vec<OsString> = ["cxlchar", "mem", "latency", "--quick"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(leaf_of(&cmd, &argv).get_name(), "latency");
    }
}
