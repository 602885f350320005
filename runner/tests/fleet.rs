//! Fleet runs (`--fleet-out`) end to end: ranks started with a launcher's environment
//! (the variables srun and mpirun set), the fleet file rank 0 writes, and every way a job
//! can go wrong (a rank that dies, never comes, runs another version or another command,
//! an incomplete launcher environment). The `mpirun_*` and `hydra_*` tests are
//! `#[ignore]`d: they need Open MPI's `mpirun.openmpi` and MPICH's `mpiexec.hydra`
//! (Debian's openmpi-bin and mpich, installed by ci/test-deps) and run in `.ci/run`; the two-guest `srun` run is in the lab (runner/tests/lab.rs).
//!
//! Strangers: a process that holds rank 0's first rendezvous port before rank 0 does and
//! plays its coordinator (the ranks ignore it, write nothing it names, never exit 0 on
//! its word, and the job completes on the next port), a coordinator of the same job run
//! by another user (root only: `#[ignore]`d, run by `.ci/run`), and a stranger's endless
//! first line (cut at its bound).

mod common;

use common::cxlchar_process;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The quick measuring command every rank runs (one size: a second or two).
const QUICK: &[&str] = &["mem", "latency", "--quick", "--sizes", "1M"];

/// Every launcher variable a rank could inherit from the test's own environment.
const LAUNCHER_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_MCA_ess_base_jobid",
    "OMPI_MCA_orte_num_nodes",
    "OMPI_MCA_orte_hnp_uri",
    "PMIX_NAMESPACE",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALNRANKS",
    "SLURM_PROCID",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_NTASKS",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "SLURM_STEPID",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
    "SLURM_NODEID",
    "CXLCHAR_FLEET_HOSTNAME",
    "CXLCHAR_FLEET_KEY",
    "OMPI_MCA_orte_precondition_transports",
];

/// A rank of an Open MPI job on one machine: `OMPI_*` as mpirun sets them.
fn ompi_rank(job: &str, rank: usize, size: usize, host: Option<&str>, args: &[&str]) -> Command {
    ompi_rank_of(cxlchar_process(), job, rank, size, host, args)
}

/// [`ompi_rank`] of the cxlchar command `c`.
fn ompi_rank_of(
    mut c: Command,
    job: &str,
    rank: usize,
    size: usize,
    host: Option<&str>,
    args: &[&str],
) -> Command {
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.env("OMPI_COMM_WORLD_RANK", rank.to_string())
        .env("OMPI_COMM_WORLD_SIZE", size.to_string())
        .env("OMPI_MCA_ess_base_jobid", job)
        .env("OMPI_MCA_orte_num_nodes", "1")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(h) = host {
        c.env("CXLCHAR_FLEET_HOSTNAME", h);
    }
    c
}

fn spawn(mut c: Command) -> Child {
    c.spawn().expect("start cxlchar")
}

/// Waits for `child` at most `limit`; kills it and fails past that.
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn args_with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Reads a fleet file and checks it against results/schema/fleet.schema.json.
fn read_fleet(p: &Path) -> Value {
    let f = common::read_json(p);
    common::assert_fleet_schema_valid(&f);
    f
}

#[test]
fn two_simulated_hosts_give_one_fleet_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let o = out.to_str().unwrap();
    let args = args_with(QUICK, &["--fleet-out", o]);
    let r0 = spawn(ompi_rank("t-two", 0, 2, Some("h0"), &args));
    let r1 = spawn(ompi_rank("t-two", 1, 2, Some("h1"), &args));
    let o1 = wait_bounded(r1, Duration::from_secs(120), "rank 1");
    let o0 = wait_bounded(r0, Duration::from_secs(120), "rank 0");
    assert!(o0.status.success(), "rank 0: {}", stderr(&o0));
    assert!(o1.status.success(), "rank 1: {}", stderr(&o1));
    assert!(o1.stdout.is_empty(), "only rank 0 prints the fleet");
    assert!(stderr(&o1).contains("measured host h1"), "{}", stderr(&o1));
    let f = read_fleet(&out);
    assert_eq!(f["format"], "cxlchar-fleet");
    assert_eq!(f["fleet_schema_version"], 1);
    assert_eq!(f["cxlchar_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(f["launcher"]["kind"], "openmpi");
    assert_eq!(f["launcher"]["job"], "t-two");
    assert_eq!(f["launcher"]["ranks"], 2);
    assert_eq!(f["launcher"]["variables"]["OMPI_COMM_WORLD_SIZE"], "2");
    let hosts = f["hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["h0", "h1"]);
    for (i, h) in hosts.iter().enumerate() {
        assert_eq!(h["ranks"], serde_json::json!([i]));
        assert_eq!(h["measuring_rank"], i);
        assert_eq!(h["params"]["schema_version"], 1);
        assert!(
            !h["params"]["measurements"].as_array().unwrap().is_empty(),
            "host {i} measured nothing"
        );
    }
    // One machine: measured in turn, and the file says so.
    let codes: Vec<&str> = f["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"fleet_shared_machine"), "{codes:?}");
    let (a, b) = (
        &hosts[0]["params"]["finished_at"],
        &hosts[1]["params"]["started_at"],
    );
    assert!(
        a.as_str().unwrap() <= b.as_str().unwrap(),
        "hosts of one machine overlapped: h0 ended {a}, h1 started {b}"
    );
    // No pairs asked for by a single-family command.
    assert!(f["pairs"].as_array().unwrap().is_empty());
    assert!(f["pairs_skipped"].as_array().unwrap().is_empty());
}

#[test]
fn ranks_of_one_host_measure_once_under_slurm() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let args = args_with(QUICK, &["--fleet-out", out.to_str().unwrap()]);
    let rank = |r: usize| {
        let mut c = cxlchar_process();
        for v in LAUNCHER_VARS {
            c.env_remove(v);
        }
        c.env("SLURM_PROCID", r.to_string())
            .env("SLURM_STEP_NUM_TASKS", "2")
            .env("SLURM_JOB_ID", "4242")
            .env("SLURM_STEP_ID", "0")
            .env("SLURM_STEP_NODELIST", "localhost")
            .env("SLURM_NODEID", "0")
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        spawn(c)
    };
    let (r0, r1) = (rank(0), rank(1));
    let o1 = wait_bounded(r1, Duration::from_secs(120), "rank 1");
    let o0 = wait_bounded(r0, Duration::from_secs(120), "rank 0");
    assert!(o0.status.success(), "rank 0: {}", stderr(&o0));
    assert!(o1.status.success(), "rank 1: {}", stderr(&o1));
    assert!(stderr(&o1).contains("waits"), "{}", stderr(&o1));
    let f = read_fleet(&out);
    assert_eq!(f["launcher"]["kind"], "slurm");
    assert_eq!(f["launcher"]["job"], "4242.0");
    let hosts = f["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "two ranks on one host: one host entry");
    assert_eq!(hosts[0]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(hosts[0]["measuring_rank"], 0);
}

#[test]
fn a_rank_that_dies_ends_the_job_with_no_fleet_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    // Rank 1 waits its turn (one machine) while rank 0 measures; then it is killed.
    let args = args_with(
        &["mem", "latency", "--quick"],
        &[
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "20s",
        ],
    );
    let r0 = spawn(ompi_rank("t-dies", 0, 2, Some("h0"), &args));
    let mut r1 = spawn(ompi_rank("t-dies", 1, 2, Some("h1"), &args));
    std::thread::sleep(Duration::from_millis(1500));
    r1.kill().unwrap();
    let _ = r1.wait();
    let start = Instant::now();
    let o0 = wait_bounded(r0, Duration::from_secs(60), "rank 0 after rank 1 died");
    assert!(!o0.status.success(), "rank 0 succeeded without rank 1");
    let e = stderr(&o0);
    assert!(
        e.contains("rank 1") && e.contains("died or was killed"),
        "{e}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(45),
        "took {:?}",
        start.elapsed()
    );
    assert!(!out.exists(), "a failed job left a fleet file");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a temp file was left"
    );
}

#[test]
fn rank_0_dying_ends_the_other_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    // Rank 1 measures a long sweep while rank 0 (same host name: rank 0 measures, rank 1
    // waits) ... here rank 0 is the one killed, while rank 1 waits.
    let args = args_with(
        &["mem", "latency", "--quick"],
        &[
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "20s",
        ],
    );
    let mut r0 = spawn(ompi_rank("t-r0dies", 0, 2, Some("same"), &args));
    let r1 = spawn(ompi_rank("t-r0dies", 1, 2, Some("same"), &args));
    std::thread::sleep(Duration::from_millis(1500));
    r0.kill().unwrap();
    let _ = r0.wait();
    let o1 = wait_bounded(r1, Duration::from_secs(40), "rank 1 after rank 0 died");
    assert!(!o1.status.success());
    let e = stderr(&o1);
    assert!(e.contains("rank 0"), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_rank_that_never_comes_is_named_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let args = args_with(
        QUICK,
        &[
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "2s",
        ],
    );
    let o = wait_bounded(
        spawn(ompi_rank("t-never", 0, 3, None, &args)),
        Duration::from_secs(30),
        "rank 0 alone",
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("rank(s) 1, 2 never connected"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn ranks_running_another_command_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let o = out.to_str().unwrap();
    let a0 = args_with(QUICK, &["--fleet-out", o, "--fleet-timeout", "10s"]);
    let a1 = args_with(
        QUICK,
        &["--fleet-out", o, "--fleet-timeout", "10s", "--seed", "7"],
    );
    let r0 = spawn(ompi_rank("t-cmd", 0, 2, Some("h0"), &a0));
    let r1 = spawn(ompi_rank("t-cmd", 1, 2, Some("h1"), &a1));
    let o0 = wait_bounded(r0, Duration::from_secs(40), "rank 0");
    let o1 = wait_bounded(r1, Duration::from_secs(40), "rank 1");
    assert!(!o0.status.success() && !o1.status.success());
    assert!(
        stderr(&o0).contains("every rank must run the same command"),
        "{}",
        stderr(&o0)
    );
    assert!(stderr(&o1).contains("refused"), "{}", stderr(&o1));
    assert!(!out.exists());
}

#[test]
fn another_cxlchar_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let port = free_port();
    let ps = port.to_string();
    let args = args_with(
        QUICK,
        &[
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "20s",
            "--fleet-port",
            &ps,
        ],
    );
    let r0 = spawn(ompi_rank("t-version", 0, 2, Some("h0"), &args));
    // Rank 1 is this test, speaking the protocol with another version.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut s = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("rank 0 never listened on {port}: {e}"),
        }
    };
    let mut command_line: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    command_line.insert(0, String::new());
    command_line.remove(0);
    let nonce = "0123456789abcdef0123456789abcdef";
    let proof = hello_proof(
        "openmpi:t-version",
        1,
        nonce,
        s.local_addr().unwrap(),
        s.peer_addr().unwrap(),
    );
    let hello = serde_json::json!({"hello": {
        "job_key": "openmpi:t-version", "rank": 1, "size": 2, "version": "0.0.0-other",
        "command_line": command_line, "host": "h1", "machine": "m1",
        "candidates": {"verbs": {"Err": "test"}, "pools": []},
        "nonce": nonce, "proof": proof
    }});
    writeln!(s, "{hello}").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut line = String::new();
    BufReader::new(&s).read_line(&mut line).unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    let reason = reply["refused"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"));
    assert!(
        reason.contains("0.0.0-other") && reason.contains(env!("CARGO_PKG_VERSION")),
        "{reason}"
    );
    let o0 = wait_bounded(r0, Duration::from_secs(30), "rank 0");
    assert!(!o0.status.success());
    assert!(stderr(&o0).contains("same version"), "{}", stderr(&o0));
    assert!(!out.exists());
}

/// A rank's proof in its hello for a job without a secret, as docs/fleet.md specifies it:
/// HMAC-SHA256, keyed with the framed `cxlchar-fleet key 1` and job key, over the framed
/// `hello`, job key, rank (u64 LE), nonce and the connection's two ends (each part framed
/// by its length as a u64 LE).
fn hello_proof(
    job_key: &str,
    rank: u64,
    nonce: &str,
    rank_end: SocketAddr,
    rank0_end: SocketAddr,
) -> String {
    fn framed(out: &mut Vec<u8>, p: &[u8]) {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    let mut key = Vec::new();
    framed(&mut key, b"cxlchar-fleet key 1");
    framed(&mut key, job_key.as_bytes());
    let mut msg = Vec::new();
    for p in [
        b"hello".as_slice(),
        job_key.as_bytes(),
        &rank.to_le_bytes(),
        nonce.as_bytes(),
        rank_end.to_string().as_bytes(),
        rank0_end.to_string().as_bytes(),
    ] {
        framed(&mut msg, p);
    }
    let mut m = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    m.update(&msg);
    m.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The eight rendezvous ports of job `job_key`, as every rank derives them (FNV-1a of the
/// key; runner/src/fleet/launcher.rs, `Launch::ports`).
fn derived_ports(job_key: &str) -> Vec<u16> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in job_key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (0..8u64)
        .map(|i| 20_000 + ((h.wrapping_add(i.wrapping_mul(7919))) % 20_000) as u16)
        .collect()
}

/// An Open MPI job name starting with `prefix` whose first rendezvous port this test
/// could bind on the loopback, and that bound port (the squatter's).
fn job_with_first_port(prefix: &str) -> (String, TcpListener) {
    for i in 0..1000 {
        let job = format!("{prefix}-{}-{i}", std::process::id());
        let ports = derived_ports(&format!("openmpi:{job}"));
        if let Ok(l) = TcpListener::bind(("127.0.0.1", ports[0])) {
            return (job, l);
        }
    }
    panic!("no job name with a free first rendezvous port");
}

/// A hostile process on rank 0's first rendezvous port, playing rank 0's coordinator to
/// every rank that knocks: it reads the hello, admits the rank (even connections with an
/// admission that echoes the job key and a forged proof, odd ones as rank 0 did before
/// proofs, `"admitted"`), orders pool pairs on the paths it names, measuring, and
/// declares the job done; then it records whatever the rank sends back.
struct Squatter {
    hellos: Arc<Mutex<Vec<Value>>>,
    replies: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Squatter {
    fn new(listener: TcpListener, job_key: &str, paths: &[PathBuf]) -> Squatter {
        let hellos: Arc<Mutex<Vec<Value>>> = Arc::default();
        let replies: Arc<Mutex<Vec<String>>> = Arc::default();
        let stop: Arc<AtomicBool> = Arc::default();
        let (h, r, st) = (hellos.clone(), replies.clone(), stop.clone());
        let job_key = job_key.to_string();
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        listener.set_nonblocking(true).unwrap();
        let thread = std::thread::spawn(move || {
            let mut n = 0usize;
            while !st.load(Ordering::SeqCst) {
                let Ok((s, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                s.set_nonblocking(false).unwrap();
                let (h, r, job_key, paths) = (h.clone(), r.clone(), job_key.clone(), paths.clone());
                let i = n;
                n += 1;
                std::thread::spawn(move || squat_one(s, i, &job_key, &paths, &h, &r));
            }
        });
        Squatter {
            hellos,
            replies,
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> (Vec<Value>, Vec<String>) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
        // The connection threads end when their rank closes (or in 5 s).
        std::thread::sleep(Duration::from_millis(300));
        let h = self.hellos.lock().unwrap().clone();
        let r = self.replies.lock().unwrap().clone();
        (h, r)
    }
}

fn squat_one(
    s: TcpStream,
    i: usize,
    job_key: &str,
    paths: &[String],
    hellos: &Mutex<Vec<Value>>,
    replies: &Mutex<Vec<String>>,
) {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    let _ = r.by_ref().take(1 << 20).read_line(&mut line);
    hellos
        .lock()
        .unwrap()
        .push(serde_json::from_str(&line).unwrap_or(Value::String(line)));
    let mut w = s;
    let admit = if i.is_multiple_of(2) {
        json!({"admitted": {"job_key": job_key, "proof": "ab".repeat(32)}})
    } else {
        json!("admitted")
    };
    let mut out = vec![admit];
    for p in paths {
        let pair = json!({
            "spec": format!("file:{p}"), "offset": 0, "len": 8 << 20, "peer": "squatter",
            "identity": "cxl:serials=0x1234:ways=1:gran=256:offset=0:size=8388608",
        });
        out.push(json!({ "measure_pool": pair.clone() }));
        out.push(json!({ "serve_pool": pair }));
    }
    out.push(json!("measure"));
    out.push(json!({"done": {"ok": true, "message": "the squatter says the job is done"}}));
    for m in out {
        if writeln!(w, "{m}").is_err() {
            break;
        }
    }
    loop {
        let mut l = String::new();
        match r.by_ref().take(1 << 20).read_line(&mut l) {
            Ok(0) | Err(_) => return,
            Ok(_) => replies.lock().unwrap().push(l),
        }
    }
}

/// The paths a squatter names: a new file in a victim folder, a new file in /dev/shm, and
/// an existing zero-filled file (whose first bytes a pool header would replace). The
/// /dev/shm file is removed when the test ends, also when it fails.
struct Victims(Vec<PathBuf>);

impl Victims {
    fn new(dir: &Path) -> Victims {
        let victim = dir.join("victim");
        std::fs::create_dir(&victim).unwrap();
        let zeros = dir.join("zeros");
        std::fs::write(&zeros, vec![0u8; 8 << 20]).unwrap();
        Victims(vec![
            victim.join("pool"),
            PathBuf::from(format!(
                "/dev/shm/cxlchar-squatted-{}-{}",
                std::process::id(),
                dir.file_name().unwrap().to_string_lossy()
            )),
            zeros,
        ])
    }
}

impl Drop for Victims {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0[1]);
    }
}

/// Asserts that nothing the squatter named was created or written (and removes what was).
fn assert_untouched(paths: &[PathBuf]) {
    let mut touched = Vec::new();
    for p in &paths[..2] {
        if p.exists() {
            touched.push(p.display().to_string());
            let _ = std::fs::remove_file(p);
        }
    }
    let zeros = std::fs::read(&paths[2]).unwrap();
    if zeros.len() != 8 << 20 || zeros.iter().any(|&b| b != 0) {
        touched.push(paths[2].display().to_string());
    }
    assert!(
        touched.is_empty(),
        "a rank wrote where a squatter said: {touched:?}"
    );
}

#[test]
fn a_squatter_on_rank_0s_first_port_is_ignored_and_the_job_completes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let victims = Victims::new(dir.path());
    let paths = &victims.0;
    let (job, listener) = job_with_first_port("t-squat");
    let key = format!("openmpi:{job}");
    let squatter = Squatter::new(listener, &key, paths);
    let args = args_with(
        QUICK,
        &[
            "--allow-write",
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "30s",
        ],
    );
    // Rank 1 first: it knocks at the squatter's port before rank 0 listens on the next.
    let r1 = spawn(ompi_rank(&job, 1, 2, Some("h1"), &args));
    std::thread::sleep(Duration::from_millis(500));
    let r0 = spawn(ompi_rank(&job, 0, 2, Some("h0"), &args));
    let o1 = wait_bounded(r1, Duration::from_secs(120), "rank 1");
    let o0 = wait_bounded(r0, Duration::from_secs(120), "rank 0");
    let (hellos, replies) = squatter.finish();
    assert_untouched(paths);
    assert!(
        hellos
            .iter()
            .any(|h| h["hello"]["job_key"] == key.as_str() && h["hello"]["rank"] == 1),
        "rank 1 never knocked at the squatter's port: the test proves nothing: {hellos:?}"
    );
    assert!(
        replies.is_empty(),
        "rank 1 answered the squatter's commands: {replies:?}"
    );
    assert!(o0.status.success(), "rank 0: {}", stderr(&o0));
    assert!(o1.status.success(), "rank 1: {}", stderr(&o1));
    assert!(
        stderr(&o1).contains("which is not rank 0 of this job"),
        "{}",
        stderr(&o1)
    );
    let f = read_fleet(&out);
    let names: Vec<&str> = f["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["h0", "h1"]);
}

#[test]
fn a_rank_never_exits_0_on_a_squatters_word() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let victims = Victims::new(dir.path());
    let paths = &victims.0;
    let (job, listener) = job_with_first_port("t-squat-alone");
    let key = format!("openmpi:{job}");
    let squatter = Squatter::new(listener, &key, paths);
    let args = args_with(
        QUICK,
        &[
            "--allow-write",
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "3s",
        ],
    );
    // Rank 0 never comes: the squatter is all rank 1 finds.
    let o1 = wait_bounded(
        spawn(ompi_rank(&job, 1, 2, Some("h1"), &args)),
        Duration::from_secs(60),
        "rank 1",
    );
    let (hellos, replies) = squatter.finish();
    assert_untouched(paths);
    // Rank 1 knocks again and again until its timeout: both kinds of admission were tried.
    assert!(
        hellos.len() >= 2,
        "rank 1 knocked at the squatter's port {} time(s)",
        hellos.len()
    );
    assert!(
        replies.is_empty(),
        "rank 1 answered the squatter: {replies:?}"
    );
    assert_eq!(o1.status.code(), Some(1), "rank 1: {}", stderr(&o1));
    let e = stderr(&o1);
    assert!(
        e.contains("could not reach rank 0") && e.contains("without proving it is rank 0"),
        "{e}"
    );
    assert!(!out.exists());
}

#[test]
fn a_strangers_endless_first_line_is_cut_at_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let port = free_port();
    let ps = port.to_string();
    let args = args_with(
        QUICK,
        &[
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "30s",
            "--fleet-port",
            &ps,
        ],
    );
    let r0 = spawn(ompi_rank("t-endless", 0, 2, Some("h0"), &args));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut s = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("rank 0 never listened on {port}: {e}"),
        }
    };
    // 64 MiB without a newline, more than loopback buffers hold: rank 0 stops reading
    // after its first-message bound and closes, so the write fails. Before the bound, it
    // read (and held) every byte, up to 256 MiB.
    let line = vec![b'{'; 64 << 20];
    s.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
    let sent = s.write_all(&line);
    assert!(
        sent.is_err(),
        "rank 0 read 64 MiB of a stranger's first line"
    );
    drop(s);
    // The job still completes with its real rank 1.
    let r1 = spawn(ompi_rank("t-endless", 1, 2, Some("h1"), &args));
    let o1 = wait_bounded(r1, Duration::from_secs(120), "rank 1");
    let o0 = wait_bounded(r0, Duration::from_secs(120), "rank 0");
    assert!(o0.status.success(), "rank 0: {}", stderr(&o0));
    assert!(o1.status.success(), "rank 1: {}", stderr(&o1));
    let e = stderr(&o0);
    assert!(
        e.contains("not a rank of this job") && e.contains("longer than 16 KiB"),
        "{e}"
    );
    read_fleet(&out);
}

/// The uid of this process (the owner of /proc/self).
fn my_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

#[test]
#[ignore = "needs root, to start a process of another user; run by .ci/run"]
fn a_coordinator_of_another_user_is_a_stranger_even_with_the_job_key() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    assert_eq!(
        my_uid(),
        0,
        "this test starts a process of user nobody (65534): run it as root"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("fleet.json");
    // A copy of the binary that user nobody can run, wherever the build lies.
    let bin = dir.path().join("cxlchar");
    std::fs::copy(assert_cmd::cargo::cargo_bin("cxlchar"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (job, listener) = job_with_first_port("t-other-user");
    let first = listener.local_addr().unwrap().port();
    drop(listener);
    let args = args_with(
        QUICK,
        &[
            "--fleet-out",
            out.to_str().unwrap(),
            "--fleet-timeout",
            "30s",
        ],
    );
    // User nobody starts a rank 0 of the same job, with the same command: with no secret
    // in the environment its proofs are good, and only its owner gives it away.
    let mut impostor = Command::new(&bin);
    impostor.current_dir(dir.path()).uid(65534).gid(65534);
    let mut impostor = ompi_rank_of(impostor, &job, 0, 2, Some("h0"), &args);
    impostor.stdout(Stdio::null());
    let mut nobody = spawn(impostor);
    // Wait until it holds the first port.
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpListener::bind(("127.0.0.1", first)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "user nobody's rank 0 never bound port {first}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let r0 = spawn(ompi_rank(&job, 0, 2, Some("h0"), &args));
    let r1 = spawn(ompi_rank(&job, 1, 2, Some("h1"), &args));
    let o1 = wait_bounded(r1, Duration::from_secs(120), "rank 1");
    let o0 = wait_bounded(r0, Duration::from_secs(120), "rank 0");
    let _ = nobody.kill();
    let on = nobody.wait_with_output().unwrap();
    assert!(o0.status.success(), "rank 0: {}", stderr(&o0));
    assert!(o1.status.success(), "rank 1: {}", stderr(&o1));
    // Rank 1 knocked at nobody's port and went on. Whichever side looked first turned
    // the other away by its owner: rank 1 (before sending its hello), or nobody's rank 0
    // (which then closed before rank 1 looked).
    let (e1, en) = (stderr(&o1), stderr(&on));
    assert!(
        e1.contains(&format!(
            "ignored 127.0.0.1:{first}, which is not rank 0 of this job"
        )),
        "{e1}"
    );
    assert!(
        e1.contains("is a process of user 65534, not of this job's user 0")
            || en.contains("is a process of user 0, not of this job's user 65534"),
        "rank 1: {e1}\nnobody's rank 0: {en}"
    );
    assert!(
        !en.contains("rank 1"),
        "rank 1 reached user nobody's rank 0: {en}"
    );
    assert_eq!(read_fleet(&out)["hosts"].as_array().unwrap().len(), 2);
}

#[test]
fn an_incomplete_launcher_environment_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let o = out.to_str().unwrap();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[],
            "none of SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK is set",
        ),
        (
            &[("OMPI_COMM_WORLD_RANK", "0")],
            "OMPI_COMM_WORLD_SIZE is not set",
        ),
        (
            &[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2")],
            "OMPI_MCA_ess_base_jobid is not set",
        ),
        (&[("SLURM_PROCID", "0")], "SLURM_STEP_NUM_TASKS is not set"),
        (
            &[
                ("SLURM_PROCID", "0"),
                ("SLURM_STEP_NUM_TASKS", "2"),
                ("SLURM_JOB_ID", "1"),
                ("SLURM_STEP_ID", "0"),
                ("SLURM_NODEID", "0"),
            ],
            "SLURM_STEP_NODELIST is not set",
        ),
        (
            &[("SLURM_PROCID", "x"), ("SLURM_STEP_NUM_TASKS", "2")],
            "SLURM_PROCID=\"x\"",
        ),
        (
            &[("PMI_RANK", "0"), ("PMI_SIZE", "2")],
            "MPI_LOCALNRANKS is not set",
        ),
    ];
    for (env, needle) in cases {
        let mut c = cxlchar_process();
        for v in LAUNCHER_VARS {
            c.env_remove(v);
        }
        c.envs(env.iter().copied())
            .args(QUICK)
            .args(["--fleet-out", o]);
        let r = wait_bounded(
            spawn({
                c.stdout(Stdio::piped()).stderr(Stdio::piped());
                c
            }),
            Duration::from_secs(30),
            needle,
        );
        assert_eq!(r.status.code(), Some(1), "{env:?}: {}", stderr(&r));
        assert!(stderr(&r).contains(needle), "{env:?}: {}", stderr(&r));
        assert!(!out.exists());
    }
}

#[test]
fn fleet_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let o = out.to_str().unwrap();
    // --out with --fleet-out: the fleet file has every host's params.
    let r = ompi_rank(
        "t-opts",
        0,
        1,
        None,
        &args_with(QUICK, &["--fleet-out", o, "--out", "p.json"]),
    )
    .output()
    .unwrap();
    assert!(!r.status.success());
    assert!(
        stderr(&r).contains("--out and --fleet-out"),
        "{}",
        stderr(&r)
    );
    // --fleet-pairs needs --fleet-out.
    let r = cxlchar_process()
        .args(QUICK)
        .args(["--fleet-pairs", "verbs"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(!out.exists());
}

// ---- real launchers (ignored: ci/test-deps installs openmpi-bin and mpich, CI runs them) ----

/// A real launcher `program` from Debian's `package`, with no launcher variable inherited
/// and its output captured; fails loudly when it is missing.
fn launcher(program: &str, package: &str) -> Command {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{program} is missing: install Debian's {package} (ci/test-deps does)"
    );
    let mut c = Command::new(program);
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Open MPI's mpirun by its own name (`mpirun` is an alternative MPICH also provides).
fn mpirun() -> Command {
    let mut c = launcher("mpirun.openmpi", "openmpi-bin");
    // CI runs as root; the VM has fewer cores than ranks.
    c.args(["--allow-run-as-root", "--oversubscribe"])
        .env("OMPI_MCA_plm_rsh_agent", "false");
    c
}

#[test]
#[ignore = "needs Open MPI's mpirun (ci/test-deps); run by .ci/run"]
fn mpirun_np2_one_host_one_measuring_rank() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let mut c = mpirun();
    c.args(["-np", "2"])
        .arg(assert_cmd::cargo::cargo_bin("cxlchar"))
        .args(QUICK)
        .args(["--fleet-out", out.to_str().unwrap()]);
    let o = wait_bounded(spawn(c), Duration::from_secs(180), "mpirun -np 2");
    assert!(o.status.success(), "{}", stderr(&o));
    let f = read_fleet(&out);
    assert_eq!(f["launcher"]["kind"], "openmpi");
    assert_eq!(f["launcher"]["ranks"], 2);
    let hosts = f["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0]["ranks"], serde_json::json!([0, 1]));
    assert!(stderr(&o).contains("waits"), "{}", stderr(&o));
    // Open MPI binds a rank to one core by default (np <= cores): the file says when the
    // measuring rank saw fewer CPUs than its host has.
    let env = &hosts[0]["params"]["environment"];
    let allowed = env["allowed_cpus"].as_str().unwrap();
    let count = bench_core::pin::parse_cpu_list(allowed).unwrap().len();
    let bound = f["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "fleet_rank_bound");
    assert_eq!(
        bound,
        count < env["cpu"]["logical_cpus"].as_u64().unwrap() as usize,
        "allowed {allowed}: {}",
        f["warnings"]
    );
}

#[test]
#[ignore = "needs Open MPI's mpirun (ci/test-deps); run by .ci/run"]
fn mpirun_np4_simulated_hosts_measure_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let cx = assert_cmd::cargo::cargo_bin("cxlchar");
    let mut c = mpirun();
    // Each rank its own host name: four hosts of one machine.
    c.args(["-np", "4", "sh", "-c"]).arg(format!(
        "CXLCHAR_FLEET_HOSTNAME=h$OMPI_COMM_WORLD_RANK exec {} {} --fleet-out {}",
        cx.display(),
        QUICK.join(" "),
        out.display()
    ));
    let o = wait_bounded(spawn(c), Duration::from_secs(300), "mpirun -np 4");
    assert!(o.status.success(), "{}", stderr(&o));
    let f = read_fleet(&out);
    let hosts = f["hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["h0", "h1", "h2", "h3"]);
    // In turn: each host's run ends before the next one's starts.
    let mut spans: Vec<(String, String)> = hosts
        .iter()
        .map(|h| {
            (
                h["params"]["started_at"].as_str().unwrap().to_string(),
                h["params"]["finished_at"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort();
    for w in spans.windows(2) {
        assert!(w[0].1 <= w[1].0, "overlapping host runs: {w:?}");
    }
}

#[test]
#[ignore = "needs MPICH's mpiexec.hydra (ci/test-deps); run by .ci/run"]
fn hydra_np2_one_host() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let mut c = launcher("mpiexec.hydra", "mpich");
    c.args(["-n", "2"])
        .arg(assert_cmd::cargo::cargo_bin("cxlchar"))
        .args(QUICK)
        .args(["--fleet-out", out.to_str().unwrap()]);
    let o = wait_bounded(spawn(c), Duration::from_secs(180), "mpiexec.hydra -n 2");
    assert!(o.status.success(), "{}", stderr(&o));
    let f = read_fleet(&out);
    assert_eq!(f["launcher"]["kind"], "hydra");
    assert_eq!(f["launcher"]["ranks"], 2);
    assert_eq!(f["hosts"].as_array().unwrap().len(), 1);
    assert_eq!(f["hosts"][0]["ranks"], serde_json::json!([0, 1]));
}
