//! `cxlchar export`: the Mess curves read back by a reader written from Mess's documented
//! readers, OpenMetrics parsed by a real parser (prometheus_client, `#[ignore]`d: run with
//! `cargo test -p cxlchar --test export -- --ignored` where Debian's
//! python3-prometheus-client is installed, as .ci/run does), CSV read back with the csv
//! crate, and the exit statuses.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A real quick run written by an earlier version, with `mem.loaded` curves of the old mixes
/// (read, read-write): the compatibility case.
fn fixture() -> PathBuf {
    repo("results/plots/params-all-quick.json")
}

/// The `mem.loaded` measurements of a params document: id -> (mix, read_pct, GB/s, p50 ns).
fn loaded(doc: &Value) -> Vec<(String, String, String, f64, f64)> {
    doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["benchmark"] == "mem.loaded")
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["target"].as_str().unwrap().to_string(),
                m["parameters"]["mix"].as_str().unwrap().to_string(),
                m["parameters"]["injected_bw_gbs"].as_f64().unwrap(),
                m["distribution"]["p50"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The Mess readers (bsc-mem/Mess-simulator `Standalone/bw_lat_mem_ctrl.cpp`,
/// `Integrated/ZSim+Standalone/src/mess_mem_ctrl.cpp`), as they behave: open
/// `bwlat_<i>.txt` for i = 0, 2, ..., 100; read whitespace-separated number pairs until
/// the first token that is not a number (C++ `>>`), so a header or comment ends the curve.
/// Returns percentage -> points, and fails on a token left unread.
fn mess_reader(dir: &Path) -> BTreeMap<u32, Vec<(f64, f64)>> {
    let mut curves = BTreeMap::new();
    for i in (0..=100).step_by(2) {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("bwlat_{i}.txt"))) else {
            continue;
        };
        let toks: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(toks.len() % 2, 0, "bwlat_{i}: odd number of fields");
        let nums: Vec<f64> = toks
            .iter()
            .map(|t| {
                t.parse::<f64>().unwrap_or_else(|_| {
                    panic!("bwlat_{i}: {t} is not a number: the reader stops there")
                })
            })
            .collect();
        let pts: Vec<(f64, f64)> = nums.chunks(2).map(|c| (c[0], c[1])).collect();
        assert!(
            !pts.is_empty(),
            "bwlat_{i}: an empty curve breaks the readers"
        );
        for l in text.lines() {
            assert_eq!(
                l.split('\t').count(),
                2,
                "bwlat_{i}: tab-separated pair: {l:?}"
            );
        }
        curves.insert(i, pts);
    }
    for e in std::fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().to_string();
        let p: u32 = n
            .strip_prefix("bwlat_")
            .and_then(|r| r.strip_suffix(".txt"))
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("{n}: not a curve file name"));
        assert!(
            p.is_multiple_of(2) && p <= 100,
            "{n}: the readers never open it"
        );
    }
    curves
}

fn run_export(args: &[&str]) -> std::process::Output {
    cxlchar().arg("export").args(args).output().unwrap()
}

fn check_curves(doc: &Value, dir: &Path, ghz: f64, pct_of: &dyn Fn(&str) -> u32) {
    let pts = loaded(doc);
    assert!(!pts.is_empty());
    let mut by_target: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for p in &pts {
        by_target.entry(p.1.clone()).or_default().push(p.clone());
    }
    for (target, pts) in by_target {
        let curves = mess_reader(&dir.join(target.replace(':', "_")));
        let mut by_mix: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for p in pts {
            by_mix.entry(p.2.clone()).or_default().push(p);
        }
        assert_eq!(curves.len(), by_mix.len(), "one file per mix");
        for (mix, mut want) in by_mix {
            let got = &curves[&pct_of(&mix)];
            assert_eq!(got.len(), want.len(), "{mix}: every point, none invented");
            want.sort_by(|a, b| b.3.total_cmp(&a.3));
            for w in got.windows(2) {
                assert!(w[0].0 >= w[1].0, "{mix}: highest bandwidth first");
            }
            for (g, w) in got.iter().zip(&want) {
                let mbs = w.3 * 1000.0;
                assert!(
                    (g.0 - mbs).abs() <= 1e-9 * mbs.max(1.0),
                    "{}: {} MB/s vs {mbs}",
                    w.0,
                    g.0
                );
                let cyc = w.4 * ghz;
                assert!(
                    (g.1 - cyc).abs() <= 1e-9 * cyc,
                    "{}: {} cycles vs {cyc}",
                    w.0,
                    g.1
                );
            }
        }
    }
}

#[test]
fn mess_curves_read_back_in_mb_s_and_cycles_at_the_tsc_frequency() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mess");
    let o = run_export(&[fixture().to_str().unwrap(), "--mess", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = read_json(&fixture());
    let ghz = doc["timer"]["freq_hz"].as_f64().unwrap() / 1e9;
    check_curves(&doc, &out, ghz, &|m| match m {
        "read" => 100,
        "read-write" => 68,
        _ => panic!("{m}"),
    });
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    assert!(readme.contains("TSC frequency"), "{readme}");
    assert!(readme.contains(&format!("{ghz} GHz")), "{readme}");
    assert!(readme.contains("mix read-write, 67% reads"), "{readme}");
    assert!(readme.contains("no uncore counters"), "{readme}");
}

#[test]
fn mess_curves_of_the_new_mixes_use_the_recorded_read_share() {
    let mut doc = read_json(&fixture());
    // The mixes of part A's loaded latency, with their read_pct.
    let new = [("read", "read", 100), ("read-write", "2r1w", 75)];
    for m in doc["measurements"].as_array_mut().unwrap() {
        if m["benchmark"] != "mem.loaded" {
            continue;
        }
        let old = m["parameters"]["mix"].as_str().unwrap().to_string();
        let (_, mix, pct) = new.iter().find(|n| n.0 == old).unwrap();
        m["parameters"]["mix"] = json!(mix);
        m["parameters"]["read_pct"] = json!(pct);
    }
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = d.path().join("mess");
    let o = run_export(&[
        p.to_str().unwrap(),
        "--mess",
        out.to_str().unwrap(),
        "--cpu-ghz",
        "2.1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_curves(&doc, &out, 2.1, &|m| match m {
        "read" => 100,
        "2r1w" => 76,
        _ => panic!("{m}"),
    });
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    assert!(readme.contains("given with --cpu-ghz"), "{readme}");
    assert!(
        readme.contains("mix 2r1w, 75% reads (recorded read_pct)"),
        "{readme}"
    );
}

/// The fixture's `mem.loaded` measurements replaced by one synthetic curve per read share
/// in `shares` on its first target (mix `shareP`, or the named mix of that share), each of
/// five points: delays 0, 10, 100, 1000 and idle, bandwidth falling with the delay and the
/// share, latency rising with the bandwidth.
fn family_doc(shares: &[(u32, &str)]) -> Value {
    let mut doc = read_json(&fixture());
    let ms = doc["measurements"].as_array_mut().unwrap();
    let template = ms
        .iter()
        .find(|m| m["benchmark"] == "mem.loaded")
        .unwrap()
        .clone();
    ms.retain(|m| m["benchmark"] != "mem.loaded");
    let target = template["target"].as_str().unwrap().to_string();
    for &(pct, mix) in shares {
        for (k, delay) in [Some(0), Some(10), Some(100), Some(1000), None]
            .into_iter()
            .enumerate()
        {
            let mut m = template.clone();
            let bw = if delay.is_some() {
                (50.0 + pct as f64) / (1.0 + k as f64)
            } else {
                0.0
            };
            let label = delay.map_or("idle".to_string(), |d| format!("d{d}"));
            m["id"] = json!(format!("mem.loaded/{target}/{mix}/{label}"));
            m["parameters"]["mix"] = json!(mix);
            m["parameters"]["read_pct"] = json!(pct);
            m["parameters"]["delay_pause"] = json!(delay);
            m["parameters"]["injected_bw_gbs"] = json!(bw);
            m["distribution"]["p50"] = json!(90.0 + bw);
            ms.push(m);
        }
    }
    doc
}

/// The name `mem loaded --mess-family` gives share `p`'s curve.
fn family_mix(p: u32) -> &'static str {
    match p {
        100 => "read",
        80 => "3r1w",
        0 => "nt-write",
        _ => Box::leak(format!("share{p}").into_boxed_str()),
    }
}

#[test]
fn a_mess_family_reads_back_as_51_curves_highest_bandwidth_first() {
    let shares: Vec<(u32, &str)> = (0..=100)
        .rev()
        .step_by(2)
        .map(|p| (p, family_mix(p)))
        .collect();
    assert_eq!(shares.len(), 51);
    let doc = family_doc(&shares);
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = d.path().join("mess");
    let o = run_export(&[
        p.to_str().unwrap(),
        "--mess",
        out.to_str().unwrap(),
        "--cpu-ghz",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_curves(&doc, &out, 2.0, &|m| {
        shares.iter().find(|s| s.1 == m).map(|s| s.0).unwrap()
    });
    let target = loaded(&doc)[0].1.replace(':', "_");
    let curves = mess_reader(&out.join(&target));
    assert_eq!(curves.len(), 51);
    for (pct, pts) in &curves {
        assert_eq!(pts.len(), 5, "bwlat_{pct}");
        assert!(
            pts.windows(2).all(|w| w[0].0 > w[1].0),
            "bwlat_{pct}: decreasing bandwidth"
        );
    }
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    assert!(
        readme.contains(&format!(
            "{target}: measured 51 of 51: 0..100; not measured, to interpolate: none"
        )),
        "{readme}"
    );
}

#[test]
fn a_partial_family_names_the_shares_to_interpolate_and_a_share_beats_a_mix_for_its_file() {
    // Every 10 % (a --quick family), plus 1r1w (66.7 %, file 68) beside share68 and
    // 2r1w (75 %, file 76) alone.
    let mut shares: Vec<(u32, &str)> = (0..=100)
        .rev()
        .step_by(10)
        .map(|p| (p, family_mix(p)))
        .collect();
    shares.extend([(68, "share68"), (67, "1r1w"), (75, "2r1w")]);
    let doc = family_doc(&shares);
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = d.path().join("mess");
    let o = run_export(&[
        p.to_str().unwrap(),
        "--mess",
        out.to_str().unwrap(),
        "--cpu-ghz",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let target = loaded(&doc)[0].1.replace(':', "_");
    let curves = mess_reader(&out.join(&target));
    assert_eq!(curves.len(), 13);
    // bwlat_68 is share68's curve: its top bandwidth is (50 + 68) GB/s.
    assert_eq!(curves[&68][0].0, 118_000.0);
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    assert!(
        readme.contains(&format!(
            "{target}: measured 13 of 51: 0, 10, 20, 30, 40, 50, 60, 68..70, 76, 80, 90, 100; \
             not measured, to interpolate: 2..8, 12..18, 22..28, 32..38, 42..48, 52..58, 62..66, 72..74, 78, 82..88, 92..98"
        )),
        "{readme}"
    );
    assert!(
        readme.contains("mix 1r1w of") && readme.contains("bwlat_68.txt holds mix share68"),
        "{readme}"
    );
    // Two mixes at one file, neither exact there: refused.
    let doc = family_doc(&[(67, "1r1w"), (67, "other")]);
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = run_export(&[
        p.to_str().unwrap(),
        "--mess",
        d.path().join("m2").to_str().unwrap(),
        "--cpu-ghz",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot hold them all"));
}

#[test]
fn mess_latency_in_ns_for_the_zsim_reader() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mess");
    let o = run_export(&[
        fixture().to_str().unwrap(),
        "--mess",
        out.to_str().unwrap(),
        "--mess-latency",
        "ns",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_curves(&read_json(&fixture()), &out, 1.0, &|m| {
        if m == "read" {
            100
        } else {
            68
        }
    });
}

#[test]
fn no_loaded_curve_is_exit_3_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mess");
    let om = d.path().join("m.om");
    let o = run_export(&[
        data("params-a.json").to_str().unwrap(),
        "--mess",
        out.to_str().unwrap(),
        "--openmetrics",
        om.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no mem.loaded measurements") && err.contains("mem loaded"),
        "{err}"
    );
    assert!(!out.exists() && !om.exists());
}

#[test]
fn bad_input_and_refused_outputs_are_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 1, \"tool\"").unwrap();
    let o = run_export(&[bad.to_str().unwrap(), "--csv", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("truncated"));
    // The input as output.
    let p = d.path().join("p.json");
    std::fs::copy(fixture(), &p).unwrap();
    let o = run_export(&[p.to_str().unwrap(), "--csv", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read(&p).unwrap(),
        std::fs::read(fixture()).unwrap()
    );
    // A file where the directory should be.
    let o = run_export(&[p.to_str().unwrap(), "--mess", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    // Both to stdout; no format at all (clap).
    let o = run_export(&[p.to_str().unwrap(), "--csv", "-", "--openmetrics", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run_export(&[p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = run_export(&[p.to_str().unwrap(), "--mess", "x", "--cpu-ghz", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn csv_reads_back_one_row_per_measurement() {
    let o = run_export(&[fixture().to_str().unwrap(), "--csv", "-"]);
    assert!(o.status.success());
    let doc = read_json(&fixture());
    let ms = doc["measurements"].as_array().unwrap();
    let mut r = csv::Reader::from_reader(&o.stdout[..]);
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(&h[..5], ["id", "benchmark", "target", "unit", "n"]);
    assert_eq!(
        h.last().unwrap(),
        "disturbed",
        "the flag is the last column"
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), ms.len());
    let mut flagged = 0;
    for (row, m) in rows.iter().zip(ms) {
        assert_eq!(&row[0], m["id"].as_str().unwrap());
        // A spreadsheet tells a flagged figure from a clean one.
        let disturbed = m["counters"]["disturbed"]
            .as_bool()
            .expect("counters recorded");
        assert_eq!(&row[h.len() - 1], if disturbed { "true" } else { "false" });
        flagged += usize::from(disturbed);
        assert_eq!(
            row[4].parse::<u64>().unwrap(),
            m["distribution"]["n"].as_u64().unwrap()
        );
        // Six significant digits in every figure column (export::csv::number).
        let p50: f64 = row[6].parse().unwrap();
        let want = m["distribution"]["p50"].as_f64().unwrap();
        assert!((p50 - want).abs() <= want.abs() * 5e-6, "{p50} vs {want}");
    }
    assert!(
        flagged > 0 && flagged < rows.len(),
        "the run has both: {flagged}"
    );
}

#[test]
fn openmetrics_to_stdout_ends_with_eof() {
    let o = run_export(&[fixture().to_str().unwrap(), "--openmetrics", "-"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.ends_with("# EOF\n"));
    assert_eq!(text.matches("# EOF").count(), 1);
    assert!(text.contains("# TYPE cxlchar_mem_lat_ns gauge\n"));
    assert!(text
        .contains("cxlchar_mem_lat_ns{key=\"mem_lat_ns@anon\",target=\"anon\",noisy=\"false\"} "));
    // HELP is plain text: the registry's inline Markdown (`**local**`) is not carried.
    for help in text.lines().filter(|l| l.starts_with("# HELP ")) {
        assert!(!help.contains("**") && !help.contains('`'), "{help}");
    }
}

/// Every file and folder below `d`, as paths relative to it, sorted (links not followed).
fn tree(d: &Path) -> Vec<String> {
    let mut v = Vec::new();
    let mut todo = vec![d.to_path_buf()];
    while let Some(p) = todo.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            v.push(path.strip_prefix(d).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                todo.push(path);
            }
        }
    }
    v.sort();
    v
}

#[test]
fn mess_never_writes_through_a_symlinked_folder_below_the_one_given() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("bwlat_100.txt"), "theirs").unwrap();
    let out = d.path().join("mess");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("anon")).unwrap();
    let o = run_export(&[fixture().to_str().unwrap(), "--mess", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("symbolic link") && err.contains("anon"),
        "{err}"
    );
    assert_eq!(tree(&victim), ["bwlat_100.txt"], "wrote through the link");
    assert_eq!(
        std::fs::read_to_string(victim.join("bwlat_100.txt")).unwrap(),
        "theirs"
    );
    assert_eq!(tree(&out), ["anon"], "the refused export left files");
    assert!(std::fs::symlink_metadata(out.join("anon"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_refused_mess_export_leaves_nothing_behind() {
    // Two targets: anon, then one whose temporary file's path is too long for a path
    // (PATH_MAX) while its file's own path is not.
    let mut doc = read_json(&fixture());
    let long = "t".repeat(250);
    let ms = doc["measurements"].as_array_mut().unwrap();
    let copies: Vec<Value> = ms
        .iter()
        .filter(|m| m["benchmark"] == "mem.loaded")
        .map(|m| {
            let mut c = m.clone();
            c["target"] = json!(long);
            c
        })
        .collect();
    ms.extend(copies);
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    // A folder path so deep that DIR/<long>/bwlat_100.txt is 4095 bytes.
    let file_part = 1 + long.len() + "/bwlat_100.txt".len();
    let mut out = d.path().join("deep");
    while out.as_os_str().len() + 201 + file_part < 4095 {
        out.push("d".repeat(200));
    }
    let pad = 4095 - file_part - out.as_os_str().len() - 1;
    out.push("e".repeat(pad));
    assert_eq!(
        out.join(&long).join("bwlat_100.txt").as_os_str().len(),
        4095
    );
    let above = d.path().join("deep");
    let o = run_export(&[p.to_str().unwrap(), "--mess", out.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !above.exists(),
        "the refused export left {:?}",
        tree(d.path())
    );
    // Into an existing folder: nothing new in it either.
    std::fs::create_dir_all(&out).unwrap();
    let o = run_export(&[p.to_str().unwrap(), "--mess", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(tree(&out).is_empty(), "left {:?}", tree(&out));
}

/// The fixture with one change made by `edit`, written to `d/name`.
fn edited_fixture(d: &Path, name: &str, edit: impl Fn(&mut Value)) -> PathBuf {
    let mut doc = read_json(&fixture());
    edit(&mut doc);
    let p = d.join(name);
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    p
}

/// Figures no memory gives (an infinite bandwidth once in MB/s, a clock that makes a
/// latency 300 digits long or 0 cycles) are refused with status 2 and the reason, and
/// nothing is written.
#[test]
fn mess_refuses_figures_no_memory_gives() {
    let d = tempfile::tempdir().unwrap();
    let first_loaded = |doc: &mut Value| -> usize {
        doc["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .position(|m| m["benchmark"] == "mem.loaded")
            .unwrap()
    };
    let cases: Vec<(&str, PathBuf, &[&str])> = vec![
        (
            "injected_bw_gbs",
            edited_fixture(d.path(), "bw.json", |doc| {
                let i = first_loaded(doc);
                doc["measurements"][i]["parameters"]["injected_bw_gbs"] = json!(1e306);
            }),
            &[],
        ),
        (
            "latency",
            edited_fixture(d.path(), "lat.json", |doc| {
                let i = first_loaded(doc);
                doc["measurements"][i]["distribution"]["p50"] = json!(1e300);
            }),
            &["--mess-latency", "ns"],
        ),
        (
            "timer.freq_hz",
            edited_fixture(d.path(), "fast.json", |doc| {
                doc["timer"]["freq_hz"] = json!(1.7e308);
            }),
            &[],
        ),
        (
            "timer.freq_hz",
            edited_fixture(d.path(), "slow.json", |doc| {
                doc["timer"]["freq_hz"] = json!(5e-324);
            }),
            &[],
        ),
    ];
    for (what, p, extra) in cases {
        let out = d.path().join("mess");
        let mut args = vec![p.to_str().unwrap(), "--mess", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run_export(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(what), "{what} named: {err}");
        assert!(!out.exists(), "{what}: wrote {:?}", tree(d.path()));
    }
    // A clock given with --cpu-ghz replaces a damaged timer.freq_hz.
    let p = d.path().join("fast.json");
    let out = d.path().join("given");
    let o = run_export(&[
        p.to_str().unwrap(),
        "--mess",
        out.to_str().unwrap(),
        "--cpu-ghz",
        "2.5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let curves: Vec<String> = tree(&out)
        .into_iter()
        .filter(|f| f.contains("bwlat_"))
        .collect();
    assert!(!curves.is_empty(), "{:?}", tree(&out));
    for f in curves {
        let text = std::fs::read_to_string(out.join(&f)).unwrap();
        assert!(text.lines().all(|l| l.len() < 80), "{f}: {text}");
    }
}

/// A folder name with an ESC is shown as `\x1b` in the "wrote" lines, as are the
/// target names and the machine in README.txt.
#[test]
fn mess_output_lines_show_control_characters_as_escapes() {
    let d = tempfile::tempdir().unwrap();
    let p = edited_fixture(d.path(), "p.json", |doc| {
        doc["environment"]["cpu"]["model"] = json!("CPU\u{1b}[2J\u{202e}x");
    });
    let out = d.path().join("me\u{1b}[31mss");
    let o = run_export(&[p.to_str().unwrap(), "--mess", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("wrote ") && err.contains("me\\x1b[31mss"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "a raw ESC on stderr: {err:?}");
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    assert!(readme.contains("CPU\\x1b[2J\\u{202e}x"), "{readme}");
    assert!(!readme.contains('\u{1b}') && !readme.contains('\u{202e}'));
}

/// The fixture with a stranger's names: a spreadsheet formula as a target, ANSI escape
/// sequences and a line break in another target and a key.
fn hostile_fixture(d: &Path) -> PathBuf {
    let mut doc = read_json(&fixture());
    let ms = doc["measurements"].as_array_mut().unwrap();
    ms[0]["target"] = json!("=HYPERLINK(\"http://x.example/\",\"ok\")");
    ms[1]["target"] = json!("\u{1b}[2J\u{1b}[31mred\u{1b}[0m\nnext");
    ms[2]["id"] = json!("@SUM(1+1)");
    doc["params"]["mem_lat_ns@\u{1b}[31manon"] = json!(91.5);
    let p = d.join("hostile.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    p
}

#[test]
fn csv_and_openmetrics_of_a_strangers_names_are_safe() {
    let d = tempfile::tempdir().unwrap();
    let p = hostile_fixture(d.path());
    let o = run_export(&[p.to_str().unwrap(), "--csv", "-"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\x1b'), "an escape sequence in the CSV");
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(
        rows.len(),
        read_json(&p)["measurements"].as_array().unwrap().len()
    );
    assert_eq!(&rows[0][2], "'=HYPERLINK(\"http://x.example/\",\"ok\")");
    assert_eq!(&rows[1][2], "\\x1b[2J\\x1b[31mred\\x1b[0m\\x0anext");
    assert_eq!(&rows[2][0], "'@SUM(1+1)");
    let o = run_export(&[p.to_str().unwrap(), "--openmetrics", "-"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\x1b'), "an escape sequence in OpenMetrics");
    assert!(
        text.contains(
            "key=\"mem_lat_ns@\\\\x1b[31manon\",target=\"\\\\x1b[31manon\",noisy=\"false\"} 91.5\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"));
}

/// The Debian package's interpreter (a pyenv or venv python3 first on PATH does not see
/// Debian's dist-packages); CXLCHAR_PYTHON overrides.
fn python() -> String {
    std::env::var("CXLCHAR_PYTHON").unwrap_or_else(|_| {
        if Path::new("/usr/bin/python3").exists() {
            "/usr/bin/python3".into()
        } else {
            "python3".into()
        }
    })
}

const PARSE: &str = r#"
import json, sys
try:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
except ImportError as e:
    print("MISSING prometheus_client: install Debian's python3-prometheus-client: %s" % e)
    sys.exit(99)
fams = {}
for f in text_string_to_metric_families(sys.stdin.read()):
    fams[f.name] = {"type": f.type, "unit": f.unit, "help": f.documentation,
                    "samples": [[s.name, s.labels, s.value] for s in f.samples]}
print(json.dumps(fams))
"#;

/// The families prometheus_client's OpenMetrics parser reads from `text` (name ->
/// type, unit, help, samples); fails when the parser rejects it.
fn parse_openmetrics(text: &[u8]) -> Value {
    use std::io::Write;
    let mut child = std::process::Command::new(python())
        .args(["-c", PARSE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}: python3 is needed for this test", python()));
    child.stdin.take().unwrap().write_all(text).unwrap();
    let r = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&r.stdout);
    assert_ne!(r.status.code(), Some(99), "{out}");
    assert!(
        r.status.success(),
        "the parser rejected the text: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
#[ignore = "needs Debian's python3-prometheus-client; .ci/run installs it and runs this"]
fn openmetrics_of_a_strangers_names_parses_with_prometheus_client() {
    let d = tempfile::tempdir().unwrap();
    let o = run_export(&[
        hostile_fixture(d.path()).to_str().unwrap(),
        "--openmetrics",
        "-",
    ]);
    assert!(o.status.success());
    let fams = parse_openmetrics(&o.stdout);
    let s: Vec<&Value> = fams["cxlchar_mem_lat_ns"]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s[1]["key"] == "mem_lat_ns@\\x1b[31manon")
        .collect();
    assert_eq!(s.len(), 1, "{fams}");
    assert_eq!(s[0][1]["target"], "\\x1b[31manon");
    assert_eq!(s[0][2].as_f64(), Some(91.5));
    let targets: Vec<&str> = fams["cxlchar_measurement_ns"]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1]["target"].as_str().unwrap())
        .collect();
    assert!(
        targets.contains(&"\\x1b[2J\\x1b[31mred\\x1b[0m\\x0anext"),
        "{targets:?}"
    );
    assert!(
        !fams.to_string().contains("\\u001b"),
        "an escape survived: {fams}"
    );
}

#[test]
#[ignore = "needs Debian's python3-prometheus-client; .ci/run installs it and runs this"]
fn openmetrics_parses_with_prometheus_client() {
    let o = run_export(&[fixture().to_str().unwrap(), "--openmetrics", "-"]);
    assert!(o.status.success());
    let fams = parse_openmetrics(&o.stdout);
    let doc = read_json(&fixture());
    // Every measured value is one sample of its family, with its value: a qualified key
    // always, an unqualified one only where it does not repeat its `key@target` (the
    // same figure under the target param_info names), so that sum() counts it once.
    let params = doc["params"].as_object().unwrap();
    let repeats = |bare: &str| -> bool {
        let Some(t) = doc["param_info"][bare]["target"].as_str() else {
            return false;
        };
        params.get(&format!("{bare}@{t}")) == params.get(bare)
    };
    let (mut n, mut skipped) = (0, 0);
    for (k, v) in params {
        let base = k.split('@').next().unwrap();
        let f = &fams[format!("cxlchar_{base}")];
        assert_eq!(f["type"], "gauge", "{k}");
        let s: Vec<&Value> = f["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s[1]["key"] == k.as_str())
            .collect();
        if !k.contains('@') && repeats(k) {
            assert!(
                s.is_empty(),
                "{k} repeats its key@target and is written again"
            );
            skipped += 1;
            continue;
        }
        assert_eq!(s.len(), 1, "{k}");
        assert_eq!(s[0][2].as_f64().unwrap(), v.as_f64().unwrap(), "{k}");
        n += 1;
    }
    assert!(
        n > 10 && skipped > 0,
        "{n} written, {skipped} repeats left out"
    );
    assert_eq!(fams["cxlchar_nt_copy_threshold_bytes"]["unit"], "bytes");
    assert_eq!(fams["cxlchar_mem_lat_ns"]["unit"], "");
    assert!(fams["cxlchar_mem_lat_ns"]["help"]
        .as_str()
        .unwrap()
        .contains("[ns]"));
    // Every measurement: 6 quantiles and a count in the summary of its unit.
    let ms = doc["measurements"].as_array().unwrap();
    let mut seen = 0;
    for (name, f) in fams.as_object().unwrap() {
        if !name.starts_with("cxlchar_measurement_") {
            continue;
        }
        assert_eq!(f["type"], "summary");
        for s in f["samples"].as_array().unwrap() {
            if s[0] == name.as_str() {
                seen += 1;
            }
        }
    }
    assert_eq!(seen, 6 * ms.len());
    // The flags as labels: every gauge says whether its key is noisy; every measurement
    // (all of this run's recorded counters) whether it was disturbed.
    for (name, f) in fams.as_object().unwrap() {
        for s in f["samples"].as_array().unwrap() {
            let label = if name.starts_with("cxlchar_measurement_") {
                "disturbed"
            } else {
                "noisy"
            };
            let v = s[1][label]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: {s}"));
            assert!(v == "true" || v == "false", "{name}: {s}");
        }
    }
    for m in ms {
        let want = m["counters"]["disturbed"].as_bool().unwrap().to_string();
        let unit = if m["unit"] == "GB/s" {
            "gbs".to_string()
        } else {
            m["unit"].as_str().unwrap().to_ascii_lowercase()
        };
        let samples = fams[format!("cxlchar_measurement_{unit}")]["samples"]
            .as_array()
            .unwrap_or_else(|| panic!("the {unit} summary"));
        let mine: Vec<&Value> = samples.iter().filter(|s| s[1]["id"] == m["id"]).collect();
        assert!(!mine.is_empty(), "{}", m["id"]);
        for s in mine {
            assert_eq!(s[1]["disturbed"], want.as_str(), "{}", m["id"]);
        }
    }
    let lat = &fams["cxlchar_measurement_ns"]["samples"];
    let m = ms.iter().find(|m| m["unit"] == "ns").unwrap();
    let p50 = lat
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[1]["id"] == m["id"] && s[1]["quantile"] == "0.5")
        .unwrap();
    assert_eq!(
        p50[2].as_f64().unwrap(),
        m["distribution"]["p50"].as_f64().unwrap()
    );
}
