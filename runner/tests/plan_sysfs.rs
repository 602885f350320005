//! `--plan --sysfs ROOT` on trees a hostile or broken copy can be: a FIFO or a device in
//! place of an attribute, a size past 64 bits, 65536 CPUs, a `--cpu` of that tree's CPUs.
//! Every command runs as a child with a timeout, so a read that waits fails its test
//! instead of hanging the suite.

mod common;
use bench_core::topology::fixtures::{write_server, Server};
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Far more than any of these plans takes; a FIFO waited on never returns.
const TIMEOUT: Duration = Duration::from_secs(20);

/// `cxlchar ARGS --plan --sysfs ROOT` with the timeout.
fn plan(root: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    cxlchar()
        .args(args)
        .arg("--plan")
        .arg("--sysfs")
        .arg(root)
        .timeout(TIMEOUT)
        .assert()
}

/// Asserts that the plan of `root` fails (not a timeout) and says `needle`.
fn refused(root: &Path, needle: &str) {
    let o = plan(root, &["all"]).failure().get_output().clone();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code().is_some(),
        "killed after {TIMEOUT:?} (blocked on a read?): {err}"
    );
    assert!(err.contains(needle), "{needle} not in: {err}");
}

/// The 16-CPU host with its GPU below a new temporary root.
fn h200_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_server(dir.path(), &Server::h200_host()).unwrap();
    dir
}

/// Runs `check` with the file `rel` of `root` replaced by what `put` makes at its path,
/// then puts the file back.
fn with_replaced(root: &Path, rel: &str, put: impl Fn(&Path), check: impl FnOnce(&Path)) {
    let p = root.join(rel);
    let kept = root.join("kept");
    std::fs::rename(&p, &kept).unwrap();
    put(&p);
    check(&p);
    std::fs::remove_file(&p).unwrap();
    std::fs::rename(&kept, &p).unwrap();
}

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", p.display());
}

#[test]
fn a_fifo_in_place_of_a_file_is_refused_by_name_not_waited_on() {
    let dir = h200_tree();
    let root = dir.path();
    for rel in [
        "sys/devices/system/cpu/online",
        "sys/devices/system/node/online",
        "sys/devices/system/node/node0/meminfo",
        "sys/devices/system/node/node0/distance",
        "sys/devices/system/cpu/cpu0/cache/index2/size",
        "sys/devices/system/cpu/cpu3/cache/index3/shared_cpu_list",
        "sys/devices/system/cpu/cpu5/topology/thread_siblings_list",
        "sys/bus/pci/devices/0000:18:00.0/vendor",
    ] {
        with_replaced(root, rel, mkfifo, |p| {
            refused(
                root,
                &format!("{}: not a regular file but a FIFO", p.display()),
            )
        });
    }
    // Put back, the tree plans.
    plan(root, &["all"]).success();
}

#[test]
fn a_device_linked_in_place_of_a_file_is_refused_unread() {
    let dir = h200_tree();
    let root = dir.path();
    for (rel, dev) in [
        ("sys/devices/system/cpu/online", "/dev/zero"),
        ("sys/devices/system/node/node0/meminfo", "/dev/urandom"),
    ] {
        let t0 = Instant::now();
        with_replaced(
            root,
            rel,
            |p| std::os::unix::fs::symlink(dev, p).unwrap(),
            |p| {
                refused(
                    root,
                    &format!("{}: not a regular file but a character device", p.display()),
                )
            },
        );
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{rel}: {:?}",
            t0.elapsed()
        );
    }
    // Without NUMA sysfs, the memory is proc/meminfo's.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
    std::fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-3\n").unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("proc/meminfo")).unwrap();
    refused(
        dir.path(),
        "proc/meminfo: not a regular file but a character device",
    );
}

#[test]
fn a_memtotal_past_64_bits_is_refused_not_read_as_zero() {
    let dir = h200_tree();
    let p = dir.path().join("sys/devices/system/node/node0/meminfo");
    std::fs::write(&p, format!("Node 0 MemTotal:       {} kB\n", 1u64 << 54)).unwrap();
    refused(
        dir.path(),
        &format!(
            "{}: MemTotal 18014398509481984 kB is more bytes than 64 bits hold",
            p.display()
        ),
    );
}

/// A tree whose `cpu/online` is `0-(cpus - 1)` and that says nothing else.
fn bare_tree(cpus: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cpu = dir.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(cpu.join("online"), format!("0-{}\n", cpus - 1)).unwrap();
    dir
}

/// `ARGS --plan --sysfs ROOT --format json` run in at most 1 GiB of address space, and
/// how long it took.
fn json_plan_in_1_gib(root: &Path, args: &[&str]) -> (serde_json::Value, Duration) {
    let t0 = Instant::now();
    let o = assert_cmd::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$@\"")
        .arg("sh")
        .arg(assert_cmd::cargo::cargo_bin("cxlchar"))
        .args(args)
        .args(["--plan", "--format", "json", "--sysfs"])
        .arg(root)
        .timeout(TIMEOUT)
        .assert()
        .success()
        .get_output()
        .clone();
    let took = t0.elapsed();
    (serde_json::from_slice(&o.stdout).unwrap(), took)
}

fn points(v: &serde_json::Value, family: &str) -> u64 {
    v["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["benchmark"] == family)
        .unwrap_or_else(|| panic!("{family} planned: {v}"))["points"]
        .as_u64()
        .unwrap()
}

/// Generous for a loaded 2-vCPU machine: these plans are arithmetic, well under a second.
const BOUND: Duration = Duration::from_secs(5);

#[test]
fn a_plan_of_65536_cpus_is_arithmetic_in_bounded_time_and_memory() {
    let dir = bare_tree(1 << 16);
    let (v, took) = json_plan_in_1_gib(dir.path(), &["all"]);
    assert_eq!(v["machine"]["cpus"], 65536);
    assert!(took < BOUND, "all --plan of 65536 CPUs took {took:?}");
    // Every pair, counted: 2^31 of them would be 32 GiB listed. Each CPU is its own LLC
    // in a tree without caches: one class, across LLCs; CAS and flag, after the placing.
    let (v, took) = json_plan_in_1_gib(dir.path(), &["pool", "c2c", "--pairs", "all"]);
    let n = 65536u64;
    assert_eq!(points(&v, "pool.c2c"), 1 + 2 * n * (n - 1) / 2);
    assert!(
        took < BOUND,
        "pool c2c --plan --pairs all of 65536 CPUs took {took:?}"
    );
}

#[test]
fn cpu_is_checked_against_the_trees_cpus() {
    // CPUs 4000 and 4001 are the tree's, not this machine's.
    let dir = bare_tree(4096);
    let (v, _) = json_plan_in_1_gib(dir.path(), &["all", "--cpu", "4000-4001"]);
    assert_eq!(v["machine"]["cpus"], 2);
    let o = plan(dir.path(), &["all", "--cpu", "5000"])
        .failure()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("--sysfs {}", dir.path().display()))
            && err.contains("CPU 5000 is not in the allowed set 0-4095"),
        "{err}"
    );
    // The issue's own: two CPUs of the 16-CPU host.
    let dir = h200_tree();
    let (v, _) = json_plan_in_1_gib(dir.path(), &["all", "--cpu", "2-3"]);
    assert_eq!(v["machine"]["cpus"], 2);
    // Without --sysfs a CPU this machine lacks is still refused.
    assert_bad_input(
        &["mem", "latency", "--quick", "--cpu", "65535"],
        "CPU 65535 is not in the allowed set",
    );
}

#[test]
fn the_plan_says_each_degraded_link_of_the_tree() {
    let dir = h200_tree();
    bench_core::pci::links::write_fake_links(dir.path()).unwrap();
    let o = plan(dir.path(), &["all", "--quick"])
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&o.stderr);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("link_degraded: "))
        .collect();
    assert_eq!(said.len(), 2, "{err}");
    assert!(
        said[0].contains("0000:01:00.0 (gpu 0x10de:0x0001) -> port 0000:00:01.0: runs at 16 GT/s x8, below the 16 GT/s x16 both ends can do"),
        "{err}"
    );
    assert!(said[1].contains("0000:02:00.0 (cxl"), "{err}");
    // The port that caps the NVMe drive is not a degraded link.
    assert!(!err.contains("0000:03:00.0"), "{err}");
    let o = plan(dir.path(), &["all", "--quick", "--format", "json"])
        .success()
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let links = &v["machine"]["links"];
    assert_eq!(links["pcie_links_degraded"], 2, "{links}");
    assert_eq!(links["judged"], 5, "{links}");
    let nvme = links["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["bdf"] == "0000:03:00.0")
        .unwrap();
    assert_eq!(nvme["degraded"], false);
    assert_eq!(nvme["ports"][0]["link"]["max_width_lanes"], 8);
}

#[test]
fn a_fifo_in_place_of_a_link_attribute_is_refused_by_name() {
    let dir = h200_tree();
    bench_core::pci::links::write_fake_links(dir.path()).unwrap();
    let rel = "sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0/current_link_width";
    // Named as read: through the device's entry in sys/bus/pci/devices.
    with_replaced(dir.path(), rel, mkfifo, |_| {
        refused(
            dir.path(),
            "0000:02:00.0/current_link_width: not a regular file but a FIFO",
        )
    });
}
