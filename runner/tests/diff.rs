//! `cxlchar diff` on two back-to-back `all --quick` runs of the 2-vCPU development guest
//! (tests/data/vm-quick-{a,b}.json.gz, one after the other while other builds ran: A with
//! most of its measurements disturbed, B with few) and on edited copies of them: the noisy
//! side named first, the noise taken from what each run recorded, a method compared as an
//! identity, a file compared with itself unchanged, and the commands diff suggests quoted.

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};

/// A fixture, decompressed.
fn run(name: &str) -> Value {
    let gz = data(name);
    let o = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(o.status.success(), "gzip -dc {}", gz.display());
    serde_json::from_slice(&o.stdout).unwrap()
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

fn diff_json(a: &Path, b: &Path) -> Value {
    let out = cxlchar()
        .args(["diff", "--all", "--format", "json"])
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn diff_text(a: &Path, b: &Path) -> String {
    let out = cxlchar().arg("diff").arg(a).arg(b).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn key(v: &Value, name: &str) -> Value {
    v["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
        .clone()
}

fn measurement_mut<'v>(d: &'v mut Value, id: &str) -> &'v mut Value {
    d["measurements"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no measurement {id}"))
}

#[test]
fn a_file_compared_with_itself_is_0_changed() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["vm-quick-a.json.gz", "vm-quick-b.json.gz"] {
        let a = write(dir.path(), "a.json", &run(name));
        let v = diff_json(&a, &a);
        let bl = &v["bottom_line"];
        assert_eq!(bl["beyond_noise"], 0, "{bl}");
        assert_eq!(bl["not_comparable"], 0, "{bl}");
        assert_eq!(
            bl["no_distribution"], 0,
            "unchanged is within any noise: {bl}"
        );
        assert_eq!(bl["within_noise"], bl["keys"], "{bl}");
        let text = diff_text(&a, &a);
        let bottom = text
            .lines()
            .find(|l| l.starts_with("bottom line: "))
            .expect(&text);
        assert!(bottom.contains(": 0 changed beyond noise"), "{text}");
    }
}

/// The user's case: two quick runs one after the other. A was mostly disturbed (60 % of
/// its measurements): that comes first, before any count of changes, and mem_lat_ns is
/// compared (its method text differs only in the figures of the DRAM check).
#[test]
fn back_to_back_runs_name_the_noisy_side_first_and_compare_mem_lat_ns() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &run("vm-quick-a.json.gz"));
    let b = write(dir.path(), "b.json", &run("vm-quick-b.json.gz"));
    let text = diff_text(&a, &b);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with("noise: A is mostly disturbed: 196 of 325 measurements (60 %)"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("noise: B is noisy: 28 of 322"),
        "{text}"
    );
    assert!(lines[3].starts_with("bottom line: "), "{text}");
    let v = diff_json(&a, &b);
    assert_eq!(v["disturbance"][0]["mostly_disturbed"], true);
    assert_eq!(v["disturbance"][1]["mostly_disturbed"], false);
    let lat = key(&v, "mem_lat_ns");
    assert_ne!(lat["verdict"], "not comparable", "{lat}");
    assert!(
        lat["not_comparable"].as_array().unwrap().is_empty(),
        "{lat}"
    );
    assert!(["yes", "no"].contains(&lat["significant"].as_str().unwrap()));
    // A's figures stand on disturbed samples: their noise is widened.
    assert!(
        lat["noise_source"]
            .as_str()
            .unwrap()
            .starts_with("A: measurement, widened (disturbed)"),
        "{lat}"
    );
    // The DRAM checks of both runs checked their working sets: another size is the same
    // method, the DRAM point (noted).
    let bw = key(&v, "mem_bw_gbs");
    assert_ne!(bw["verdict"], "not comparable", "{bw}");
    assert!(
        bw["notes"][0]
            .as_str()
            .unwrap()
            .contains("each run's DRAM working set, checked by its DRAM check: agree vs grown"),
        "{bw}"
    );
}

/// The method of mem_lat_ns once after one pass of the DRAM check and once after two
/// (other figures, the verdict NOISY, the mean of the passes): the same method. Another
/// chain is another method.
#[test]
fn a_method_is_an_identity_not_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let d = run("vm-quick-b.json.gz");
    let a = write(dir.path(), "a.json", &d);
    let method = d["param_info"]["mem_lat_ns"]["method"].as_str().unwrap();
    assert!(method.contains("(see dram_check)"), "{method}");
    let mut e = d.clone();
    let two = method
        .replace("agree at 132M", "NOISY at 132M")
        .replace("148.5 vs 264M 147.8", "151.2 vs 264M 139.9")
        + "; the mean of the check's two passes";
    e["param_info"]["mem_lat_ns"]["method"] = two.into();
    let b = write(dir.path(), "b.json", &e);
    let c = key(&diff_json(&a, &b), "mem_lat_ns");
    assert!(c["not_comparable"].as_array().unwrap().is_empty(), "{c}");

    let mut e = d.clone();
    e["param_info"]["mem_lat_ns"]["method"] = method
        .replacen("randomized-256 chain", "aligned-256 chain", 1)
        .into();
    let b = write(dir.path(), "c.json", &e);
    let c = key(&diff_json(&a, &b), "mem_lat_ns");
    assert_eq!(c["verdict"], "not comparable", "{c}");
    assert!(
        c["not_comparable"][0]
            .as_str()
            .unwrap()
            .starts_with("method \"randomized-256 chain"),
        "{c}"
    );
}

/// A run whose samples were tight but whose DRAM check found its passes 10 % apart: a
/// change of 5 % between two such runs is within their noise, which the check recorded;
/// the samples' own `p90 - p50` alone would call it significant.
#[test]
fn the_noise_between_runs_includes_the_dram_checks_passes() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = run("vm-quick-b.json.gz");
    let id = d["param_info"]["mem_lat_ns"]["from"][0]
        .as_str()
        .unwrap()
        .to_string();
    let p50 = d["params"]["mem_lat_ns"].as_f64().unwrap();
    {
        let m = measurement_mut(&mut d, &id);
        m["distribution"]["min"] = (p50 - 0.5).into();
        m["distribution"]["p90"] = (p50 + 0.5).into();
        m["counters"]["disturbed"] = false.into();
    }
    let check = d["dram_check"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["benchmark"] == "mem.latency")
        .unwrap();
    let s = check["compared_bytes"][0].clone();
    check["points"] = serde_json::json!([
        {"bytes": s, "value": p50, "pass": 1, "id": id},
        {"bytes": s, "value": p50 * 1.1, "pass": 2},
    ]);
    let a = write(dir.path(), "a.json", &d);
    let mut e = d.clone();
    e["params"]["mem_lat_ns"] = (p50 * 1.05).into();
    let m = measurement_mut(&mut e, &id);
    for q in ["min", "p50", "p90"] {
        let x = m["distribution"][q].as_f64().unwrap();
        m["distribution"][q] = (x * 1.05).into();
    }
    let b = write(dir.path(), "b.json", &e);
    let c = key(&diff_json(&a, &b), "mem_lat_ns");
    assert_eq!(c["significant"], "no", "{c}");
    assert!(
        c["noise_source"]
            .as_str()
            .unwrap()
            .contains("DRAM check spread"),
        "{c}"
    );
    assert!(c["threshold"].as_f64().unwrap() > 0.05 * p50, "{c}");
}

/// A figure whose measurement stayed disturbed is compared with both half-spreads of its
/// samples: the lower tail of a disturbed bandwidth is where its median may sit.
#[test]
fn a_disturbed_figure_is_compared_with_its_widened_spread() {
    let dir = tempfile::tempdir().unwrap();
    let d = run("vm-quick-b.json.gz");
    let k = "l1_lat_ns";
    let id = d["param_info"][k]["from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .find(|id| {
            d["measurements"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["id"] == id.as_str() && m["distribution"]["p50"] == d["params"][k])
        })
        .expect("the key's own measurement");
    let p50 = d["params"][k].as_f64().unwrap();
    let mut quiet = d.clone();
    {
        let m = measurement_mut(&mut quiet, &id);
        m["distribution"]["p90"] = (p50 * 1.01).into();
        m["distribution"]["min"] = (p50 * 0.8).into();
        m["counters"]["disturbed"] = false.into();
    }
    let mut moved = quiet.clone();
    moved["params"][k] = (p50 * 1.1).into();
    {
        let m = measurement_mut(&mut moved, &id);
        for q in ["min", "p50", "p90"] {
            let x = m["distribution"][q].as_f64().unwrap();
            m["distribution"][q] = (x * 1.1).into();
        }
    }
    let a = write(dir.path(), "a.json", &quiet);
    let b = write(dir.path(), "b.json", &moved);
    assert_eq!(key(&diff_json(&a, &b), k)["significant"], "yes");
    for doc in [&mut quiet, &mut moved] {
        measurement_mut(doc, &id)["counters"]["disturbed"] = true.into();
    }
    let a = write(dir.path(), "a.json", &quiet);
    let b = write(dir.path(), "b.json", &moved);
    let c = key(&diff_json(&a, &b), k);
    assert_eq!(c["significant"], "no", "{c}");
    assert_eq!(c["noise_source"], "measurement, widened (disturbed)", "{c}");
}

/// The command diff (and every reader of one params.json) suggests for a fleet file
/// names the file as one shell word: pasted, it runs `jq` on that very file and nothing
/// else, whatever the name holds.
#[test]
fn suggested_commands_quote_hostile_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let fleet =
        std::fs::read_to_string(repo("results/fleet/outlier-zen4-2026-11-24-1.json")).unwrap();
    let names = [
        "fleet'; touch PWNED5; '.json",
        "x$(touch PWNED6)y.json",
        "a`touch PWNED7`.json",
        "two\nlines.json",
    ];
    for name in names {
        std::fs::write(dir.path().join(name), &fleet).unwrap();
        for args in [
            vec!["diff", "../good.json", name],
            vec!["model", name],
            vec!["check", "--spec", "../spec.toml", name],
        ] {
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    a.replace("../good.json", data("params-a.json").to_str().unwrap())
                        .replace(
                            "../spec.toml",
                            repo("results/specs/cxl-expander.toml").to_str().unwrap(),
                        )
                })
                .collect();
            let out = cxlchar()
                .args(&args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            let err = String::from_utf8(out.stderr).unwrap();
            let Some(at) = err.find("`jq ") else {
                // `check` reads a fleet file: nothing to suggest.
                assert_eq!(args[0], "check", "{err}");
                continue;
            };
            // The last backquote closes it (a name may hold backquotes).
            let cmd = &err[at + 1..err.rfind('`').unwrap()];
            assert!(!cmd.contains('\n'), "one line: {cmd:?}");
            // The pasted command, with jq standing in as a printer of its arguments.
            let o = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("jq() {{ printf '%s\\0' \"$@\"; }}; {cmd}"))
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(o.status.success(), "{cmd}: {o:?}");
            let words: Vec<&[u8]> = o.stdout.split(|b| *b == 0).collect();
            assert_eq!(words[1], name.as_bytes(), "{cmd}");
        }
    }
    for p in ["PWNED5", "PWNED6", "PWNED7"] {
        assert!(
            !dir.path().join(p).exists(),
            "{p}: a suggested command ran it"
        );
    }
}
