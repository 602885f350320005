//! Every measuring command typed into a terminal, as people run them: on a pty of 80 x 24
//! and of 200 x 50 with stdout and stderr on it, and with stdout on a pipe and stderr on
//! the pty. Each must end within a bound with its documented status, print its plan, draw
//! its bar and clear it, and leave a summary whose every line fits the width. Ctrl-C
//! through the pty, a resize while a run draws, `TERM=dumb`, `NO_COLOR` and no `TERM` at
//! all are cases too. (A run that hung on every terminal once passed every test that
//! piped its output.)

mod common;
use common::pty::{self, drawn_lines, Ended, Session, Stdout, Term};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

/// One measuring run at a time: they share two CPUs and gigabytes of memory.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// The measuring commands of `cxlchar --help`: every command and subcommand whose help
/// offers `--quick`.
const MEASURING: &[&str] = &[
    "all",
    "mem latency",
    "mem loaded",
    "mem copy-threshold",
    "mem alltoall-order",
    "mem bandwidth",
    "mem agents",
    "mem matrix",
    "mem scan",
    "mem interference",
    "pcie mmio",
    "pcie post-parts",
    "pool atomics",
    "pool c2c",
    "pool flush",
    "pool flush-bw",
    "pool msg",
    "pool msg-scale",
    "verbs",
    "gpu",
];

/// The commands listed under `Commands:` in `help`.
fn commands_of(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  ") || l.is_empty())
        .filter(|l| l.len() > 2 && !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

fn help_of(words: &[&str]) -> String {
    let mut args: Vec<&str> = words.to_vec();
    args.push("--help");
    let out = common::cxlchar().args(&args).output().unwrap();
    assert!(out.status.success(), "cxlchar {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_measuring_commands_tested_here_are_those_of_help() {
    let mut found = Vec::new();
    for c in commands_of(&help_of(&[])) {
        let h = help_of(&[&c]);
        let subs = commands_of(&h);
        if subs.is_empty() {
            if h.contains("--quick") {
                found.push(c.clone());
            }
            continue;
        }
        for s in subs {
            if help_of(&[&c, &s]).contains("--quick") {
                found.push(format!("{c} {s}"));
            }
        }
    }
    let mut want: Vec<String> = MEASURING.iter().map(|s| s.to_string()).collect();
    want.sort();
    found.sort();
    assert_eq!(
        found, want,
        "a measuring command without its terminal test, or gone"
    );
}

/// What a command must end with on this machine: its status and, where it is not 0, what
/// its message says (the hardware this machine lacks, named).
fn expected(cmd: &str) -> (i32, &'static str) {
    match cmd {
        // No BAR is given: bad input, the option named.
        "pcie mmio" => (2, "--bar"),
        "verbs" if !has_rdma() => (3, "verbs"),
        "gpu" if !has_cuda() => (3, "gpu"),
        // They bind to a node; qemu-user has no mbind: refused, the call named.
        "mem matrix" | "mem agents" if common::mbind_unavailable().is_some() => (3, "mbind"),
        _ => (0, ""),
    }
}

fn has_rdma() -> bool {
    cfg!(feature = "verbs")
        && std::fs::read_dir("/sys/class/infiniband").is_ok_and(|mut d| d.next().is_some())
}

fn has_cuda() -> bool {
    ["/dev/nvidia0", "/dev/nvidiactl"]
        .iter()
        .all(|p| Path::new(p).exists())
}

/// The bound a command must end within (its plan is seconds here; minutes on a guest
/// with a large L3 are still a hang's opposite).
fn bound(cmd: &str) -> Duration {
    Duration::from_secs(if cmd == "all" { 420 } else { 180 })
}

fn args_of(cmd: &str, extra: &[&'static str]) -> Vec<String> {
    cmd.split(' ')
        .chain(extra.iter().copied())
        .map(str::to_string)
        .collect()
}

/// Whether a drawn line is a frame of the progress bar.
fn is_frame(l: &str) -> bool {
    l.contains(" ETA ")
}

/// The lines drawn wider than `cols`. A frame of the bar is drawn as its two rows, each
/// padded to the width (the terminal's wrap moves to the second): it fits when it is
/// exactly two rows and the second is the message's (indented by two spaces); a first
/// row that overflowed would push the message off its row.
fn too_wide(lines: &[String], cols: u16) -> Vec<String> {
    let w = usize::from(cols);
    lines
        .iter()
        .filter(|l| {
            let n = l.chars().count();
            if is_frame(l) {
                let second: String = l.chars().skip(w).take(2).collect();
                n != 2 * w || second != "  "
            } else {
                n > w
            }
        })
        .cloned()
        .collect()
}

/// Checks one run of `cmd` as `t` ran it.
fn check_run(cmd: &str, t: &Term, e: &Ended, stdout_file: Option<&Path>) {
    let (status, says) = expected(cmd);
    let text = e.text();
    let at = format!(
        "cxlchar {cmd} --quick at {} x {} ({:?})",
        t.cols, t.rows, t.stdout
    );
    assert!(
        !e.timed_out,
        "{at} did not end within {:?}:\n{text}",
        bound(cmd)
    );
    assert_eq!(e.code, Some(status), "{at}:\n{text}");
    let lines = drawn_lines(&text);
    assert!(
        too_wide(&lines, t.cols).is_empty(),
        "{at}: lines wider than the terminal: {:#?}",
        too_wide(&lines, t.cols)
    );
    if status == 2 {
        assert!(text.contains(says), "{at}: no word of {says}:\n{text}");
        return;
    }
    assert!(
        lines.iter().any(|l| l.starts_with("plan: "))
            && lines.iter().any(|l| l.starts_with("total: ")),
        "{at}: no plan:\n{text}"
    );
    assert!(
        lines.iter().any(|l| is_frame(l)),
        "{at}: no bar drawn:\n{text}"
    );
    let last = text.rfind(" ETA ").unwrap();
    assert!(
        text[last..].contains("\x1b[2K"),
        "{at}: the bar was not cleared:\n{:?}",
        &text[last..]
    );
    let summary = match stdout_file {
        Some(f) => {
            let s = std::fs::read_to_string(f).unwrap();
            assert!(!s.contains('\x1b'), "{at}: an escape sequence on a pipe");
            assert!(
                !text[last..].contains("summary ("),
                "{at}: the summary went to the pty, not the pipe"
            );
            s
        }
        None => text[last..].to_string(),
    };
    if status == 0 {
        assert!(
            summary.contains("summary ("),
            "{at}: no summary:\n{summary}"
        );
    } else {
        assert!(
            text.contains(says) && text.contains("skipped")
                || text.contains("nothing was measured"),
            "{at}: exit {status} without naming what is missing ({says}):\n{text}"
        );
    }
}

/// Runs `cmd --quick` on 80 x 24 and 200 x 50 with stdout on the pty, and on 80 x 24 with
/// stdout on a pipe.
fn on_terminals(cmd: &str) {
    let _t = turn();
    let args = args_of(cmd, &["--quick"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for (cols, rows) in [(80, 24), (200, 50)] {
        let t = Term::new(cols, rows);
        let e = pty::run(&args, &t, bound(cmd));
        check_run(cmd, &t, &e, None);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stdout.txt");
    let mut t = Term::new(80, 24);
    t.stdout = Stdout::Pipe(file.clone());
    let e = pty::run(&args, &t, bound(cmd));
    check_run(cmd, &t, &e, Some(&file));
}

macro_rules! on_a_terminal {
    ($($name:ident: $cmd:expr,)*) => {
        $(
            #[test]
            fn $name() {
                on_terminals($cmd);
            }
        )*
        /// Every command of [`MEASURING`] has its test above.
        const TESTED: &[&str] = &[$($cmd),*];
    };
}

on_a_terminal! {
    all_quick: "all",
    mem_latency: "mem latency",
    mem_loaded: "mem loaded",
    mem_copy_threshold: "mem copy-threshold",
    mem_alltoall_order: "mem alltoall-order",
    mem_bandwidth: "mem bandwidth",
    mem_agents: "mem agents",
    mem_matrix: "mem matrix",
    mem_scan: "mem scan",
    mem_interference: "mem interference",
    pcie_mmio: "pcie mmio",
    pcie_post_parts: "pcie post-parts",
    pool_atomics: "pool atomics",
    pool_c2c: "pool c2c",
    pool_flush: "pool flush",
    pool_flush_bw: "pool flush-bw",
    pool_msg: "pool msg",
    pool_msg_scale: "pool msg-scale",
    verbs: "verbs",
    gpu: "gpu",
}

#[test]
fn every_measuring_command_has_its_terminal_test() {
    assert_eq!(TESTED, MEASURING);
}

#[test]
fn all_plan_prints_the_plan_fitted_and_measures_nothing() {
    let _t = turn();
    for (cols, rows) in [(80, 24), (200, 50)] {
        let t = Term::new(cols, rows);
        let e = pty::run(&["all", "--plan"], &t, Duration::from_secs(60));
        let text = e.text();
        assert_eq!(e.code, Some(0), "{text}");
        let lines = drawn_lines(&text);
        assert!(lines.iter().any(|l| l.starts_with("plan")), "{text}");
        assert!(lines.iter().any(|l| l.starts_with("total: ")), "{text}");
        assert!(
            too_wide(&lines, cols).is_empty(),
            "{:#?}",
            too_wide(&lines, cols)
        );
        assert!(!text.contains(" ETA "), "--plan drew a bar: {text}");
    }
}

/// The pty's text once `pred` holds, or a failure showing what was drawn.
fn wait_or_fail(s: &mut Session, what: &str, limit: Duration, pred: impl Fn(&str) -> bool) {
    if !s.wait_for(limit, pred) {
        panic!("never saw {what} within {limit:?}:\n{}", s.text());
    }
}

#[test]
fn ctrl_c_exits_130_with_one_line_and_leaves_out_untouched() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("params.json");
    std::fs::write(&out, "the previous run's file\n").unwrap();
    let mut t = Term::new(100, 30);
    t.cwd = Some(dir.path().to_path_buf());
    let mut s = Session::start(&["all", "--quick", "--out", "params.json"], &t);
    wait_or_fail(
        &mut s,
        "a family under way",
        Duration::from_secs(120),
        |x| x.contains("mem.latency on anon  ["),
    );
    std::thread::sleep(Duration::from_millis(300));
    s.type_bytes(b"\x03");
    let e = s.finish(Duration::from_secs(150));
    let text = e.text();
    assert_eq!(e.code, Some(130), "{text}");
    let said: Vec<String> = drawn_lines(&text)
        .into_iter()
        .filter(|l| l.contains("interrupted"))
        .collect();
    assert_eq!(
        said,
        ["cxlchar: interrupted by SIGINT during mem.latency on anon; params.json left untouched (not written)"],
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "the previous run's file\n",
        "--out was changed"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [std::ffi::OsString::from("params.json")],
        "files left behind"
    );
}

#[test]
fn a_resize_while_a_run_draws_redraws_at_the_new_width() {
    let _t = turn();
    let mut s = Session::start(&["all", "--quick"], &Term::new(200, 50));
    // A frame drawn at 200 columns (two rows padded to the width).
    wait_or_fail(
        &mut s,
        "a frame 200 columns wide",
        Duration::from_secs(120),
        |x| {
            drawn_lines(x)
                .iter()
                .any(|l| is_frame(l) && l.chars().count() == 400)
        },
    );
    let before = s.text().len();
    s.resize(80, 24);
    wait_or_fail(
        &mut s,
        "a frame after the resize",
        Duration::from_secs(30),
        |x| x.len() > before && x[before..].matches(" ETA ").count() >= 2,
    );
    let after = s.text()[before..].to_string();
    s.type_bytes(b"\x03");
    let e = s.finish(Duration::from_secs(150));
    assert_eq!(e.code, Some(130), "{}", e.text());
    let frames: Vec<String> = drawn_lines(&after);
    // The first frame may have been drawn before the signal arrived; the later ones are
    // at the new width.
    let bars: Vec<&String> = frames.iter().filter(|l| is_frame(l)).collect();
    let last = bars.last().expect("a frame after the resize");
    assert_eq!(last.chars().count(), 160, "two rows of 80: {last:?}");
    assert!(too_wide(&[last.to_string()], 80).is_empty(), "{last:?}");
}

#[test]
fn term_dumb_no_term_and_no_color_are_terminals_too() {
    let _t = turn();
    let args = ["mem", "latency", "--quick"];
    // A dumb terminal: the plan and the messages as plain lines, no escape at all.
    let mut dumb = Term::new(80, 24);
    dumb.term = Some("dumb".into());
    let e = pty::run(&args, &dumb, Duration::from_secs(180));
    let text = e.text();
    assert_eq!(e.code, Some(0), "{text}");
    assert_eq!(
        pty::escapes(&text),
        0,
        "escapes on a dumb terminal: {text:?}"
    );
    let lines = drawn_lines(&text);
    assert!(lines.iter().any(|l| l.starts_with("plan: ")), "{text}");
    assert!(lines.iter().any(|l| l.contains("placing memory")), "{text}");
    assert!(
        too_wide(&lines, 80).is_empty(),
        "{:#?}",
        too_wide(&lines, 80)
    );
    // NO_COLOR: the bar, and no colour (SGR) sequence.
    let mut plain = Term::new(80, 24);
    plain.env.push(("NO_COLOR".into(), "1".into()));
    let e = pty::run(&args, &plain, Duration::from_secs(180));
    check_run("mem latency", &plain, &e, None);
    let sgr = regex_free_sgr(&e.text());
    assert!(sgr.is_empty(), "colour under NO_COLOR: {sgr:?}");
}

/// The SGR (colour) sequences of `raw`: `ESC [ digits ; ... m`.
fn regex_free_sgr(raw: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in raw.match_indices("\x1b[") {
        let rest = &raw[i + 2..];
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(rest.len());
        if rest[n..].starts_with('m') {
            found.push(rest[..=n].to_string());
        }
    }
    found
}
