//! `--target cxl:...` from the command line. This machine has no CXL bus, so a `cxl:` name
//! is refused with the lists of what exists (the lab, which has a CXL Type-3 device,
//! measures `cxl:regionN` for real: runner/tests/lab.rs); malformed names are command-line
//! errors.

mod common;
use common::*;

use std::path::Path;

#[test]
fn a_cxl_region_that_does_not_exist_is_refused_naming_what_exists() {
    assert_bad_input(
        &["mem", "latency", "--quick", "--target", "cxl:region999"],
        "no CXL region region999 (regions: ",
    );
}

#[test]
fn malformed_cxl_names_are_command_line_errors() {
    for spec in ["cxl:", "cxl:dax0.0", "cxl:region"] {
        cxlchar()
            .args(["mem", "latency", "--quick", "--target", spec])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("cxl:regionN or cxl:memN"));
    }
}

#[test]
fn targets_says_whether_there_is_cxl() {
    let t = json_stdout(&["targets", "--format", "json"]);
    let has_bus = Path::new("/sys/bus/cxl/devices")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some());
    // The topology carries the bus only when there is one.
    assert_eq!(
        t["topology"].get("cxl").is_some(),
        has_bus,
        "{}",
        t["topology"]
    );
    let out = cxlchar()
        .arg("targets")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    if !has_bus {
        assert!(
            text.contains("CXL: none (no /sys/bus/cxl devices)"),
            "{text}"
        );
    }
}

#[test]
fn a_measurement_naming_its_cxl_device_is_valid_params_json() {
    // The chain as the lab fixture gives it, in a real quick run's measurement.
    let fixture = repo("bench-core/tests/fixtures/sysfs-cxl-devdax");
    let topo = bench_core::topology::Topology::read(&fixture);
    let region1 = bench_core::memory::CxlName::new("region1").unwrap();
    let chain = bench_core::memory::backing_of(&region1.resolve(&topo).unwrap(), &topo);
    assert_eq!(chain.len(), 1, "{chain:?}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    cxlchar()
        .args(["mem", "latency", "--quick", "--sizes", "1M", "--out"])
        .arg(&out)
        .assert()
        .success();
    let mut doc = read_json(&out);
    let m = &mut doc["measurements"][0]["placement"];
    assert!(m.is_object(), "a latency measurement has a placement");
    m["backing"] = serde_json::to_value(&chain).unwrap();
    assert_schema_valid(&doc);
    let b = &doc["measurements"][0]["placement"]["backing"][0]["backing"];
    assert_eq!(b["kind"], "cxl_region");
    assert_eq!(b["memdevs"][0]["serial"], "0x1234");
}
