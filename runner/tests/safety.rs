//! The write and exit-code rules of docs/safety.md, end to end: what an output path may
//! be, what a run that did not measure what was asked exits with and leaves behind, and
//! what survives a signal.

mod common;
use common::*;

use predicates::prelude::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

fn params_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("params.json");
    std::fs::copy(data("params-a.json"), &p).unwrap();
    p
}

#[test]
fn out_onto_a_device_node_is_refused_and_the_node_survives() {
    cxlchar()
        .args(["mem", "latency", "--quick", "--out", "/dev/null"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a regular file"));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
}

#[test]
fn out_onto_a_symlink_is_refused_and_both_survive() {
    let dir = tempfile::tempdir().unwrap();
    let real = params_file(dir.path());
    let before = std::fs::read(&real).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    cxlchar()
        .args(["mem", "latency", "--quick", "--out"])
        .arg(&link)
        .assert()
        .failure()
        .stderr(predicate::str::contains("symbolic link"));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), before);
}

#[test]
fn out_onto_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    cxlchar()
        .args(["mem", "latency", "--quick", "--out"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains("directory"));
    assert!(dir.path().is_dir());
}

#[test]
fn junit_onto_an_input_is_refused_and_the_input_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let params = params_file(dir.path());
    let spec = dir.path().join("spec.toml");
    std::fs::copy(repo("results/specs/cxl-expander.toml"), &spec).unwrap();
    for target in [&params, &spec] {
        let before = std::fs::read(target).unwrap();
        cxlchar()
            .args(["check", "--spec"])
            .arg(&spec)
            .arg(&params)
            .arg("--junit")
            .arg(target)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the input"));
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
    // Through a hard link too.
    let alias = dir.path().join("alias.xml");
    std::fs::hard_link(&params, &alias).unwrap();
    let before = std::fs::read(&params).unwrap();
    cxlchar()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg(&params)
        .arg("--junit")
        .arg(&alias)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&params).unwrap(), before);
}

#[test]
fn junit_onto_a_device_node_is_refused() {
    cxlchar()
        .args(["check", "--spec"])
        .arg(repo("results/specs/cxl-expander.toml"))
        .arg(data("params-a.json"))
        .args(["--junit", "/dev/null"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a regular file"));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device());
}

#[test]
fn plot_does_not_write_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("charts");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("latency.svg")).unwrap();
    cxlchar()
        .arg("plot")
        .arg(data("params-a.json"))
        .arg("--out")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn man_out_does_not_write_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("man");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("cxlchar.1")).unwrap();
    cxlchar()
        .args(["man", "--out"])
        .arg(&out)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .failure()
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "nothing but the link is left"
    );
}

/// contrib/reframe/junit_perf.py on a ReFrame report with control characters, bidi
/// controls, a lone surrogate and a `time_total` that is no number: it exits 0 with
/// well-formed XML that shows each such character as an escape.
#[test]
fn junit_perf_writes_well_formed_xml_from_a_hostile_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json");
    std::fs::write(
        &report,
        r#"{"runs": [{"testcases": [{
            "name": "CxlcharAll\u001b[31m\u202e", "job_nodelist": ["n\u0001"],
            "system": "s\ud800", "filename": "f\u0007", "time_total": "soon",
            "perfvalues": {"p:mem_lat\u0000ns": [1.5, 2000, null, 0.1, "n\u001bs", "pass"]},
            "result": "fail", "fail_phase": "run\u0002", "fail_reason": "r\u000b"},
            7, {"name": "ok", "time_total": 1e400}]}]}"#,
    )
    .unwrap();
    let o = std::process::Command::new("python3")
        .arg(repo("contrib/reframe/junit_perf.py"))
        .arg(&report)
        .output()
        .expect("python3 runs contrib/reframe/junit_perf.py");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let xml = String::from_utf8(o.stdout).expect("UTF-8");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3, "{xml}");
    assert_eq!(cases[0].attribute("time"), Some("0.000"));
    assert_eq!(cases[2].attribute("time"), Some("0.000"), "1e400 is inf");
    let name = cases[0].attribute("name").unwrap();
    assert!(
        name.contains("\\x1b[31m") && name.contains("\\u202e"),
        "{name}"
    );
    assert!(
        !xml.contains('\u{1b}') && !xml.contains('\u{202e}'),
        "{xml}"
    );
    let prop = cases[0]
        .descendants()
        .find(|n| n.has_tag_name("property"))
        .unwrap();
    assert_eq!(prop.attribute("name"), Some("mem_lat\\x00ns"));
    assert_eq!(prop.attribute("value"), Some("1.5"));
}

#[test]
fn pool_atomics_size_below_one_line_is_a_parse_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = params_file(dir.path());
    let before = std::fs::read(&out).unwrap();
    cxlchar()
        .args(["pool", "atomics", "--quick", "--size", "1", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("smaller than one cache line"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn mem_latency_names_the_size_the_user_gave() {
    cxlchar()
        .args(["mem", "latency", "--quick", "--max-size", "8"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--max-size 8 is smaller"))
        .stderr(predicate::str::contains("4096").not());
}

/// The pool files a `pool msg` with the default pool of process `pid` created
/// (`cxlchar-pool-<pid>-*` in /dev/shm, else the temp dir).
fn pool_files_of(pid: u32) -> Vec<std::path::PathBuf> {
    let dir = if Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let prefix = format!("cxlchar-pool-{pid}-");
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// Waits (at most 30 s) until the default pool of `pid` shows a formed pair (state 2 at
/// byte 32 of its header); returns its path.
fn wait_for_paired_pool(pid: u32) -> std::path::PathBuf {
    let t0 = std::time::Instant::now();
    loop {
        for p in pool_files_of(pid) {
            if std::fs::read(&p)
                .ok()
                .is_some_and(|b| b.len() > 40 && b[32] == 2)
            {
                std::thread::sleep(std::time::Duration::from_millis(200));
                return p;
            }
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(30),
            "the pair never formed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn send(sig: &str, pid: u32) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[test]
fn a_killed_forked_follower_fails_the_run_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = params_file(dir.path());
    let before = std::fs::read(&out).unwrap();
    // A full (not quick) run lasts long enough to kill the follower in the middle.
    let leader = cxlchar_process()
        .args(["pool", "msg", "--peer-timeout", "1s", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = leader.id();
    wait_for_paired_pool(pid);
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .expect("/proc/PID/task/PID/children (CONFIG_PROC_CHILDREN)");
    let child = children
        .split_whitespace()
        .next()
        .expect("the forked follower");
    send("-KILL", child.parse().unwrap());
    let o = leader.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "exit 0 without a follower: {err}");
    assert!(err.contains("stopped responding"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), before, "--out was replaced");
    assert!(pool_files_of(pid).is_empty(), "the pool file survived");
}

#[test]
fn every_handled_signal_leaves_no_temporary_or_pool_file_and_says_so() {
    // SIGTERM, SIGHUP (a closed ssh session: the most common way a long run dies) and
    // SIGQUIT are handled as SIGINT is (its own test is below): 128 + the signal.
    for (sig, name, status) in [
        ("-TERM", "SIGTERM", 143),
        ("-HUP", "SIGHUP", 129),
        ("-QUIT", "SIGQUIT", 131),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = params_file(dir.path());
        let before = std::fs::read(&out).unwrap();
        let run = cxlchar_process()
            .args(["pool", "msg", "--out"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = run.id();
        let pool = wait_for_paired_pool(pid);
        assert!(pool.exists());
        send(sig, pid);
        let o = run.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(status),
            "{name} exits 128 + its number: {err}"
        );
        assert!(
            pool_files_of(pid).is_empty(),
            "{name}: the pool file survived"
        );
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["params.json"], "{name}: a temporary file survived");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            before,
            "{name}: --out changed"
        );
        let said: Vec<&str> = err.lines().filter(|l| l.contains("interrupted")).collect();
        assert_eq!(said.len(), 1, "{name}: {err}");
        assert!(
            said[0].starts_with(&format!(
                "cxlchar: interrupted by {name} during pool.msg on anon"
            )) && said[0].ends_with("params.json left untouched (not written)"),
            "{name}: {err}"
        );
    }
}

#[test]
fn sigint_during_a_measuring_run_exits_130_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = params_file(dir.path());
    let before = std::fs::read(&out).unwrap();
    let run = cxlchar_process()
        .args(["pool", "msg", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = run.id();
    wait_for_paired_pool(pid);
    send("-INT", pid);
    let o = run.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert!(pool_files_of(pid).is_empty(), "the pool file survived");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_run_that_measured_nothing_exits_3_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = params_file(dir.path());
    let before = std::fs::read(&out).unwrap();
    // No such RDMA device (or no verbs feature): the only benchmark is skipped.
    cxlchar()
        .args([
            "verbs",
            "post",
            "--quick",
            "--device",
            "nosuchdev0",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("nothing was measured"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // --best-effort does not turn nothing into a result.
    cxlchar()
        .args(["verbs", "post", "--quick", "--device", "nosuchdev0"])
        .arg("--best-effort")
        .arg("--out")
        .arg(&out)
        .assert()
        .code(3);
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
