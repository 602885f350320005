//! `cxlchar plot`: charts from a real params.json, charts for the other families when
//! their measurements are present, and one clear error per kind of bad input.

mod common;
use common::*;

use predicates::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn sample_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/plots/params-quick.json")
}

fn sample() -> Value {
    serde_json::from_str(&std::fs::read_to_string(sample_path()).unwrap()).unwrap()
}

/// A data line: a polyline in a series colour (axes and grids are black or grey), with
/// at least two points.
fn has_data_line(svg: &str) -> bool {
    svg.split("<polyline").skip(1).any(|e| {
        let tag = &e[..e.find("/>").unwrap_or(e.len())];
        let points = tag.split("points=\"").nth(1).map_or(0, |p| {
            p.split_whitespace()
                .take_while(|t| !t.starts_with('"'))
                .count()
        });
        tag.contains("stroke-width=\"2\"") && !tag.contains("#000000") && points >= 3
    })
}

fn svg(dir: &Path, name: &str) -> String {
    let s = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(s.starts_with("<svg"), "{name} is an SVG");
    s
}

#[test]
fn latency_chart_has_each_target_and_a_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("plots");
    cxlchar()
        .arg("plot")
        .arg(sample_path())
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("latency.svg"))
        .stderr(predicate::str::contains("skipped bandwidth.svg"))
        .stderr(predicate::str::contains("skipped c2c.svg"));
    let s = svg(&out, "latency.svg");
    assert!(has_data_line(&s), "a data line is drawn");
    let doc = sample();
    for m in doc["measurements"].as_array().unwrap() {
        assert!(s.contains(m["target"].as_str().unwrap()), "target named");
    }
    // The caches of the environment are marked.
    for c in doc["environment"]["topology"]["caches"].as_array().unwrap() {
        if c["kind"] != "Instruction" {
            assert!(
                s.contains(&format!("L{}", c["level"])),
                "cache L{} marked",
                c["level"]
            );
        }
    }
    assert!(!out.join("bandwidth.svg").exists());
}

fn measurement(bench: &str, id: &str, unit: &str, params: Value, p50: f64) -> Value {
    json!({
        "id": id, "benchmark": bench, "target": "anon", "parameters": params, "unit": unit,
        "method": "synthetic", "distribution": {"n": 1, "min": p50, "p50": p50, "p90": p50,
        "p99": p50, "p999": p50, "max": p50, "mean": p50, "stdev": 0.0}
    })
}

#[test]
fn other_families_are_drawn_when_present() {
    let mut doc = sample();
    let ms = doc["measurements"].as_array_mut().unwrap();
    for (i, size) in [4096u64, 65536, 1 << 20].iter().enumerate() {
        for k in ["read", "copy_nt"] {
            ms.push(measurement(
                "mem.bandwidth",
                &format!("bw/{k}/{size}"),
                "GB/s",
                json!({"kernel": k, "size_bytes": size}),
                10.0 + i as f64,
            ));
        }
        ms.push(measurement(
            "pool.flush",
            &format!("fl/{size}"),
            "ns",
            json!({"method": "clflushopt", "size_bytes": size}),
            50.0 * (i + 1) as f64,
        ));
        ms.push(measurement(
            "mem.loaded",
            &format!("ld/{i}"),
            "ns",
            json!({"injected_bw_gbs": 5.0 * i as f64, "delay_pause": 100 - 10 * i}),
            90.0 + 20.0 * i as f64,
        ));
    }
    for a in 0..2 {
        for b in 0..2 {
            if a != b {
                ms.push(measurement(
                    "pool.c2c",
                    &format!("c2c/{a}/{b}"),
                    "ns",
                    json!({"kind": "ping-pong", "cpu_a": a, "cpu_b": b}),
                    70.0,
                ));
            }
        }
    }
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("p.json");
    std::fs::write(&input, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = d.path().join("plots");
    cxlchar()
        .arg("plot")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let bw = svg(&out, "bandwidth.svg");
    assert!(bw.contains("copy_nt") && bw.contains("read") && has_data_line(&bw));
    assert!(svg(&out, "flush.svg").contains("clflushopt"));
    assert!(has_data_line(&svg(&out, "loaded-latency.svg")));
    let c2c = svg(&out, "c2c-ping_pong.svg");
    assert!(c2c.contains("<rect"), "heatmap cells");
}

fn plot_fails(content: &[u8], expect: &str) {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("p.json");
    std::fs::write(&input, content).unwrap();
    let out = d.path().join("plots");
    cxlchar()
        .arg("plot")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains(expect));
    assert!(!out.exists(), "nothing written for bad input");
}

#[test]
fn another_schema_version_is_refused() {
    let mut doc = sample();
    doc["schema_version"] = json!(2);
    plot_fails(
        serde_json::to_string(&doc).unwrap().as_bytes(),
        "has schema_version 2, newer than this cxlchar understands (1)",
    );
}

#[test]
fn a_truncated_file_is_named_truncated() {
    let text = std::fs::read(sample_path()).unwrap();
    plot_fails(&text[..text.len() / 2], "is truncated");
}

#[test]
fn text_that_is_not_json_is_named() {
    plot_fails(b"mem_lat_ns = 90\n", "is not JSON");
}

#[test]
fn json_of_another_shape_is_named() {
    plot_fails(
        b"{\"schema_version\": 1}",
        "says schema_version 1 but does not match its layout",
    );
    plot_fails(b"[1, 2]", "has no schema_version");
}

#[test]
fn a_missing_file_is_named() {
    cxlchar()
        .args(["plot", "/no/such/params.json", "--out", "/tmp/unused-plots"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("reading /no/such/params.json"));
}

/// A real `cxlchar all --quick` run (every family this VM has: latency, bandwidth, copy
/// threshold, loaded latency, atomics, core-to-core, flush, messaging).
fn all_quick_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/plots/params-all-quick.json")
}

/// The point counts of the data lines of an SVG (polylines of width 2 in a series colour
/// with at least 3 points: legend samples have 2), sorted.
fn data_line_lengths(svg: &str) -> Vec<usize> {
    let mut v: Vec<usize> = svg
        .split("<polyline")
        .skip(1)
        .filter_map(|e| {
            let tag = &e[..e.find("/>").unwrap_or(e.len())];
            if !tag.contains("stroke-width=\"2\"") || tag.contains("#000000") {
                return None;
            }
            let pts = tag.split("points=\"").nth(1)?;
            let n = pts[..pts.find('"')?].split_whitespace().count();
            (n >= 3).then_some(n)
        })
        .collect();
    v.sort_unstable();
    v
}

/// Whether `label` is the text of a `<text>` element (plotters puts it on its own line).
fn has_text(svg: &str, label: &str) -> bool {
    svg.lines().any(|l| l.trim() == label)
}

/// Expected series of a chart: label -> number of points, from the measurements of
/// `bench` with the label and x taken from the parameters the benchmarks emit.
fn expected_series(
    doc: &Value,
    bench: &str,
    label: impl Fn(&Value) -> String,
    x: &str,
) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for v in doc["measurements"].as_array().unwrap() {
        if v["benchmark"] == bench && v["parameters"][x].is_number() {
            *m.entry(label(v)).or_insert(0) += 1;
        }
    }
    m
}

fn check_chart(out: &Path, file: &str, series: &std::collections::BTreeMap<String, usize>) {
    assert!(!series.is_empty(), "{file}: the run has data for it");
    let s = svg(out, file);
    for name in series.keys() {
        assert!(has_text(&s, name), "{file}: series '{name}' in the legend");
    }
    let mut want: Vec<usize> = series.values().copied().filter(|&n| n >= 3).collect();
    want.sort_unstable();
    assert_eq!(
        data_line_lengths(&s),
        want,
        "{file}: one line per series with all its points"
    );
}

#[test]
fn every_chart_of_a_real_all_run_has_each_expected_series() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(all_quick_path()).unwrap()).unwrap();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("plots");
    let o = cxlchar()
        .arg("plot")
        .arg(all_quick_path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = |v: &Value, k: &str| match &v["parameters"][k] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let t = |v: &Value| v["target"].as_str().unwrap().to_string();
    check_chart(
        &out,
        "latency.svg",
        &expected_series(
            &doc,
            "mem.latency",
            |v| format!("{} ({})", t(v), p(v, "order")),
            "size_bytes",
        ),
    );
    // Bandwidth: the kernels measured at several sizes as lines (the 1-thread read
    // sweep), every kernel's 1-thread and all-thread point as a bar, none as a lone dot.
    let bw = expected_series(
        &doc,
        "mem.bandwidth",
        |v| format!("{} {}t ({})", p(v, "kernel"), p(v, "threads"), t(v)),
        "size_bytes",
    );
    let (swept, single): (BTreeMap<String, usize>, BTreeMap<String, usize>) =
        bw.into_iter().partition(|(_, n)| *n >= 2);
    assert_eq!(swept.keys().collect::<Vec<_>>(), ["read 1t (anon)"]);
    check_chart(&out, "bandwidth.svg", &swept);
    let bars = svg(&out, "bandwidth-kernels.svg");
    let labels = bars
        .split("<g class=\"bar-labels\">")
        .nth(1)
        .expect("bar labels");
    let labels = &labels[..labels.find("</g>").unwrap()];
    assert_eq!(
        labels.matches("<text").count(),
        single.len() + swept.len(),
        "a bar per kernel and thread count: {single:?} and the sweep's DRAM point"
    );
    check_chart(
        &out,
        "copy-threshold.svg",
        &expected_series(
            &doc,
            "mem.copy-threshold",
            |v| format!("{} P={} ({})", p(v, "method"), p(v, "threads"), t(v)),
            "block_bytes",
        ),
    );
    let loaded = expected_series(
        &doc,
        "mem.loaded",
        |v| format!("{} {} p50", t(v), p(v, "mix")),
        "injected_bw_gbs",
    );
    assert!(loaded.len() >= 2, "read and read-write curves: {loaded:?}");
    check_chart(&out, "loaded-latency.svg", &loaded);
    check_chart(
        &out,
        "flush.svg",
        &expected_series(
            &doc,
            "pool.flush",
            |v| format!("{} ({})", p(v, "method"), t(v)),
            "size_bytes",
        ),
    );
    // Core-to-core: one heatmap per kind, every measured pair a cell (both halves).
    let kinds = expected_series(&doc, "pool.c2c", |v| p(v, "kind"), "cpu_a");
    assert_eq!(kinds.keys().collect::<Vec<_>>(), ["cas", "flag"]);
    for (kind, pairs) in kinds {
        let s = svg(&out, &format!("c2c-{kind}.svg"));
        // The background, the hatch of the pairs not measured (the diagonal) and the
        // colour scale's group are not cells.
        let scale = s
            .find("<g class=\"colour-scale\">")
            .expect("a colour scale");
        let hatched = s[..scale].matches("<g class=\"not-measured\">").count();
        assert_eq!(hatched, 1, "c2c-{kind}: the diagonal is not measured");
        let cells = s[..scale].matches("<rect").count() - 1 - hatched;
        assert_eq!(
            cells,
            2 * pairs,
            "c2c-{kind}: a cell per pair and direction"
        );
        for v in doc["measurements"].as_array().unwrap() {
            if v["benchmark"] == "pool.c2c" && v["parameters"]["kind"] == kind.as_str() {
                let p50 = v["distribution"]["p50"].as_f64().unwrap();
                assert!(
                    has_text(&s, &format!("{p50:.0}")),
                    "c2c-{kind}: value shown"
                );
            }
        }
    }
}
