//! `--help` as people read it: every measuring command's own options first, the options
//! every measuring command shares in a short group, the fleet options under their heading,
//! and two commands to paste at the end (also of `cxlchar --help`); `--quick` says in one
//! sentence what it changes.

mod common;
use common::*;

/// `cxlchar ARGS --help` on a pipe 100 columns wide.
fn help(args: &[&str]) -> String {
    let out = cxlchar()
        .args(args)
        .arg("--help")
        .env("COLUMNS", "100")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The commands a help lists (its `Commands:` section), less `help`.
fn commands_of(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// Every command that measures (its help has `--quick`), found as a user finds them: from
/// `cxlchar --help` down through each group's help.
fn measuring_commands() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut todo: Vec<Vec<String>> = commands_of(&help(&[]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let subs = commands_of(&text);
        if subs.is_empty() {
            if text.contains("--quick") {
                out.push(path);
            }
        } else {
            todo.extend(subs.into_iter().map(|s| {
                let mut p = path.clone();
                p.push(s);
                p
            }));
        }
    }
    out.sort();
    out
}

/// The line where a section of `text` starts (its heading, `Options:`), if it has one.
fn section(text: &str, heading: &str) -> Option<usize> {
    text.lines().position(|l| l == heading)
}

/// One option as a help shows it: its long name, the lines of its entry (the option's
/// line and the text below it, blank lines left out) and that text in one line.
struct Entry {
    long: String,
    lines: usize,
    text: String,
}

/// The long name of an option line (indented as clap indents an option, 2 or 6 spaces,
/// not as the text of one) and the text after it on that line (short layout).
fn option_line(l: &str) -> Option<(String, String)> {
    let t = l.trim_start();
    let indent = l.len() - t.len();
    if !(indent == 2 || indent == 6) || !t.starts_with('-') {
        return None;
    }
    let long_at = t.find("--")?;
    let rest = &t[long_at + 2..];
    let end = rest.find([' ', ',']).unwrap_or(rest.len());
    let after = rest[end..].trim_start();
    // The value name, then the help (two spaces or more after the option).
    let help = match after.find("  ") {
        Some(i) if after.starts_with('<') => after[i..].trim(),
        _ if after.starts_with('<') => "",
        _ => after,
    };
    Some((rest[..end].to_string(), help.to_string()))
}

/// The options of lines `from..to` of `text` (the heading at `from`), in the order shown.
fn entries(text: &str, from: usize, to: usize) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for l in text.lines().skip(from + 1).take(to - from - 1) {
        if let Some((long, help)) = option_line(l) {
            out.push(Entry {
                long,
                lines: 1,
                text: help,
            });
        } else if let Some(e) = out.last_mut() {
            if !l.trim().is_empty() {
                e.lines += 1;
                if !e.text.is_empty() {
                    e.text.push(' ');
                }
                e.text.push_str(l.trim());
            }
        }
    }
    out
}

/// The long names of the options of lines `from..to` of `text`.
fn options_in(text: &str, from: usize, to: usize) -> Vec<String> {
    entries(text, from, to)
        .into_iter()
        .map(|e| e.long)
        .collect()
}

const COMMON: &str = "Common options (in full: cxlchar all --help):";
const FLEET: &str = "Fleet (under srun or mpirun; see docs/fleet.md):";
const SHARED: [&str; 12] = [
    "out",
    "quick",
    "target",
    "cpu",
    "format",
    "verbose",
    "seed",
    "allow-write",
    "best-effort",
    "plan",
    "sysfs",
    "budget",
];

#[test]
fn every_measuring_command_shows_its_own_options_first_then_the_common_group_then_fleet() {
    let cmds = measuring_commands();
    assert!(
        cmds.len() >= 17 && cmds.contains(&vec!["mem".into(), "latency".into()]),
        "{cmds:?}"
    );
    for path in cmds.iter().filter(|p| p[0] != "all") {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let name = path.join(" ");
        let own =
            section(&text, "Options:").unwrap_or_else(|| panic!("{name}: no Options\n{text}"));
        let common =
            section(&text, COMMON).unwrap_or_else(|| panic!("{name}: no common group\n{text}"));
        let fleet =
            section(&text, FLEET).unwrap_or_else(|| panic!("{name}: no fleet heading\n{text}"));
        let end =
            section(&text, "Examples:").unwrap_or_else(|| panic!("{name}: no examples\n{text}"));
        assert!(
            own < common && common < fleet && fleet < end,
            "{name}: order\n{text}"
        );
        let own_opts = options_in(&text, own, common);
        for s in SHARED.iter().chain(&["fleet-out"]) {
            assert!(
                !own_opts.iter().any(|o| o == s),
                "{name}: --{s} among its own options"
            );
        }
        assert!(own_opts.iter().any(|o| o == "help"), "{name}: {own_opts:?}");
        let common_opts = options_in(&text, common, fleet);
        assert_eq!(common_opts, SHARED, "{name}: the common group");
        let fleet_opts = options_in(&text, fleet, end);
        assert!(
            !fleet_opts.is_empty() && fleet_opts.iter().all(|o| o.starts_with("fleet-")),
            "{name}: {fleet_opts:?}"
        );
        // Short: each shared option in its first paragraph, at most three lines of text.
        for e in entries(&text, common, fleet) {
            assert!(
                e.lines <= 4,
                "{name}: --{} is long in the common group: {}",
                e.long,
                e.text
            );
        }
    }
}

#[test]
fn every_measuring_command_and_the_top_help_end_with_two_examples() {
    let mut cmds = measuring_commands();
    cmds.push(vec![]);
    for path in &cmds {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let lines: Vec<&str> = text.trim_end().lines().collect();
        let n = lines.len();
        assert!(n > 3, "{text}");
        assert_eq!(
            lines[n - 3],
            "Examples:",
            "{path:?}: the end of --help\n{text}"
        );
        for l in &lines[n - 2..] {
            assert!(l.starts_with("  cxlchar "), "{path:?}: {l}");
            // Each example is a command of this command line (it parses: the help of
            // its command comes back).
            let words: Vec<&str> = l.split_whitespace().skip(1).collect();
            let cmd_words: Vec<&str> = words
                .iter()
                .take_while(|w| !w.starts_with('-'))
                .copied()
                .collect();
            cxlchar().args(&cmd_words).arg("--help").assert().success();
        }
        if !path.is_empty() {
            let own = format!("  cxlchar {} ", path.join(" "));
            assert!(
                lines[n - 2..].iter().any(|l| l.starts_with(&own)),
                "{path:?}: no example runs it\n{text}"
            );
        }
    }
    let top = help(&[]);
    assert!(top.contains("  cxlchar all --out params.json\n"), "{top}");
    assert!(
        top.contains("  cxlchar report params.json --out report.html"),
        "{top}"
    );
}

#[test]
fn quick_says_what_it_changes_in_one_sentence() {
    for path in measuring_commands() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let n = text.lines().count();
        let said = entries(&text, 0, n)
            .into_iter()
            .find(|e| e.long == "quick")
            .unwrap_or_else(|| panic!("{path:?}: no --quick\n{text}"))
            .text;
        assert!(
            said.contains("fewer points and samples") && said.contains("working sets"),
            "{path:?}: {said}"
        );
        assert!(!said.contains("rung"), "{path:?}: {said}");
        // One sentence: no sentence ends inside it.
        let inner = said.trim_end_matches('.');
        assert!(
            !inner.contains(". ") && !inner.contains("; "),
            "{path:?}: {said}"
        );
    }
}

#[test]
fn all_help_has_the_common_options_in_full() {
    let text = help(&["all"]);
    let common = section(&text, "Common options (every measuring command):").expect(&text);
    let fleet = section(&text, FLEET).expect(&text);
    assert!(common < fleet, "{text}");
    assert_eq!(options_in(&text, common, fleet), SHARED, "{text}");
    // The whole text of an option that leaf commands show in short.
    assert!(
        text.contains("MPOL_INTERLEAVE") && text.contains("budget_cut"),
        "{text}"
    );
    let lat = help(&["mem", "latency"]);
    assert!(
        !lat.contains("MPOL_INTERLEAVE") && !lat.contains("budget_cut"),
        "{lat}"
    );
}
