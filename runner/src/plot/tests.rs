//! The charts as a reader sees them, on the real runs in the repository (this guest's
//! quick run and the 16-core server's with an H200): axes labelled at enough values and
//! never twice, labels clear of the lines, legends that hold their text, both directions
//! of a GPU visible, heatmaps that tell "not measured" from "low", and axes that stop
//! where the data stops.

use super::*;
use crate::document::load;

/// This guest's quick run (results/plots).
pub(crate) fn all_quick() -> ParamsFile {
    load::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/plots/params-all-quick.json"),
    )
    .unwrap()
}

/// The 16-core server's quick run with an NVIDIA H200 (runner/tests/data, gzipped).
pub(crate) fn h200() -> ParamsFile {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-all-quick.json.gz");
    let o = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(o.status.success(), "gzip -dc {}", gz.display());
    load::parse(&String::from_utf8(o.stdout).unwrap(), "h200").unwrap()
}

fn svg(charts: &[Chart], file: &str) -> String {
    charts
        .iter()
        .find(|c| c.file == file)
        .and_then(|c| c.svg.clone())
        .unwrap_or_else(|| panic!("{file} drawn"))
}

/// The texts plotters drew that read as numbers (the tick labels of a chart whose x axis
/// is in binary sizes), in drawing order.
fn numeric_labels(svg: &str) -> Vec<String> {
    svg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('<') && l.parse::<f64>().is_ok())
        .map(String::from)
        .collect()
}

#[test]
fn log_axes_are_labelled_at_enough_values_and_never_twice() {
    let server = charts(&h200()).unwrap();
    let gpu = numeric_labels(&svg(&server, "gpu-bw.svg"));
    assert!(
        gpu.len() >= 4,
        "a 0.5 .. 55 GB/s axis labelled at {gpu:?} only"
    );
    for (name, cs) in [
        ("server", &server),
        ("guest", &charts(&all_quick()).unwrap()),
    ] {
        for file in ["bandwidth.svg", "latency.svg", "gpu-bw.svg", "flush.svg"] {
            let Some(s) = cs
                .iter()
                .find(|c| c.file == file)
                .and_then(|c| c.svg.as_ref())
            else {
                continue;
            };
            let l = numeric_labels(s);
            let mut d = l.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), l.len(), "{name} {file}: a label twice in {l:?}");
            assert!(l.len() >= 3, "{name} {file}: {l:?}");
        }
    }
}

#[test]
fn point_labels_sit_on_a_ground_with_a_halo() {
    // The latency sweep's one-point series: the random-order chase at DRAM.
    for f in [all_quick(), h200()] {
        let s = svg(&charts(&f).unwrap(), "latency.svg");
        let g = &s[s.find("<g class=\"point-labels\">").expect("point labels")..];
        let g = &g[..g.find("</g>").unwrap()];
        let texts = g.matches("<text").count();
        assert!(texts > 0, "the one-point series are labelled");
        assert_eq!(g.matches("paint-order=\"stroke\"").count(), texts, "{g}");
        assert_eq!(
            g.matches("<rect").count(),
            texts,
            "a ground under each: {g}"
        );
    }
}

/// Every legend's text fits its box, at the widest average character of the fonts a
/// viewer picks (7.8 px at 13 px).
#[test]
fn legend_text_fits_its_box() {
    for f in [all_quick(), h200()] {
        for c in charts(&f).unwrap() {
            let Some(s) = c.svg else { continue };
            let Some(at) = s.find("<g class=\"legend\">") else {
                continue;
            };
            let g = &s[at..];
            let w: f64 = g
                .split("width=\"")
                .nth(1)
                .and_then(|r| r[..r.find('"')?].parse().ok())
                .unwrap();
            for t in g.split("<text").skip(1) {
                let text = t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].trim();
                let need = text.chars().count() as f64 * 7.8 + 36.0;
                assert!(need <= w, "{}: \"{text}\" needs {need} px of {w}", c.file);
            }
        }
    }
}

#[test]
fn the_gpu_copies_towards_the_host_stay_visible_over_those_towards_it() {
    let s = svg(&charts(&h200()).unwrap(), "gpu-contention.svg");
    let legend = &s[s.find("<g class=\"legend\">").unwrap()..];
    let entries: Vec<&str> = legend.split("<line").skip(1).collect();
    assert!(!entries.is_empty());
    for e in entries {
        let label = e.split("</text>").next().unwrap();
        let dashed = e[..e.find("/>").unwrap()].contains("stroke-dasharray=\"8 5\"");
        assert_eq!(
            label.contains("d2h"),
            dashed,
            "{label}: d2h dashed, h2d solid"
        );
    }
    // Open rings mark the dashed curves' points, drawn after (over) the solid ones.
    let rings = s.find("r=\"5\"").expect("open markers");
    let last_dot = s.rfind("r=\"3\"").unwrap_or(0);
    assert!(rings > last_dot, "the dashed curves are drawn last");
}

fn heat(cells: &[(usize, usize, f64)], n: usize) -> String {
    let labels: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    heatmap::render(&heatmap::Heatmap {
        title: "t".into(),
        labels: &labels,
        col_labels: None,
        row_desc: "a",
        col_desc: "b",
        cells,
        format: &|v| format!("{v:.0}"),
    })
    .unwrap()
    .unwrap()
}

fn scale_texts(s: &str) -> Vec<String> {
    let g = &s[s.find("<g class=\"colour-scale\">").unwrap()..];
    g.split("<text")
        .skip(1)
        .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
        .collect()
}

#[test]
fn a_heatmap_scale_reads_distinct_values_and_not_measured_is_no_colour() {
    // Two CPUs, one pair measured both ways at one value: one label, not three alike.
    let s = heat(&[(0, 1, 100.0), (1, 0, 100.0)], 2);
    assert_eq!(scale_texts(&s), ["100 (every cell)", "not measured"]);
    assert!(
        s.contains("class=\"not-measured\""),
        "the diagonal is hatched"
    );
    // Close values: as many decimals as tell them apart.
    let s = heat(&[(0, 1, 99.6), (1, 0, 100.4)], 2);
    let t = scale_texts(&s);
    assert_eq!(t.len(), 4, "{t:?}");
    let mut d = t[..3].to_vec();
    d.dedup();
    assert_eq!(d.len(), 3, "three different values: {t:?}");
    // Every cell measured: no hatch, no key for it.
    let s = heat(&[(0, 0, 1.0), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 4.0)], 2);
    assert!(!s.contains("not-measured"));
    assert_eq!(scale_texts(&s), ["4", "2", "1"]);
}

#[test]
fn the_all_to_all_axis_stops_where_its_data_stops() {
    // The server's all-to-all runs to 1 MiB blocks; its L2 is 2 MiB: not on the axis.
    let s = svg(&charts(&h200()).unwrap(), "alltoall-order.svg");
    assert!(
        !s.lines().any(|l| l.trim() == "L2 2 MiB"),
        "the axis runs past the data to the L2 marker"
    );
    // The latency sweep still shows the next level beyond its last point.
    let s = svg(&charts(&h200()).unwrap(), "latency.svg");
    assert!(s.lines().any(|l| l.trim() == "L3 300 MiB"));
}

/// The guest's quick run with the 2-thread read's DRAM check as a run writes it now: the
/// footprint and twice it, each pass repeated, each with its bulk-synchronous figure.
fn with_dram_check() -> ParamsFile {
    let mut f = all_quick();
    let at = "mem.bandwidth/anon/read/2t/128M";
    let base = f
        .measurements
        .iter()
        .find(|m| m.id == at)
        .expect("the guest's 2-thread DRAM read")
        .clone();
    let mut add = |suffix: &str, size: u64, p50: f64| {
        let mut m = base.clone();
        m.id = format!("mem.bandwidth/anon/read/2t/{suffix}");
        m.parameters["size_bytes"] = serde_json::json!(size);
        m.distribution.p50 = p50;
        f.measurements.push(m);
    };
    add("256M", 256 << 20, 15.0);
    add("128M/repeat", 128 << 20, 20.0);
    add("256M/repeat", 256 << 20, 16.0);
    add("128M/bulk-sync", 128 << 20, 3.0);
    let point = |id: &str, bytes: u64, pass: u8| {
        serde_json::json!({"bytes": bytes, "value": 20.0, "pass": pass,
            "id": format!("mem.bandwidth/anon/read/2t/{id}")})
    };
    f.dram_check.push(
        serde_json::from_value(serde_json::json!({
            "target": "anon", "benchmark": "mem.bandwidth", "pattern": "stream",
            "kernel": "read (avx512)", "cpus": "0-1", "threads": 2, "unit": "GB/s",
            "better": "higher", "start_bytes": 128u64 << 20, "sizing": "4 x the caches",
            "points": [point("128M", 128 << 20, 1), point("256M", 256 << 20, 1),
                point("128M/repeat", 128 << 20, 2), point("256M/repeat", 256 << 20, 2)],
            "compared_bytes": [128u64 << 20, 256u64 << 20], "ratio": 1.0, "tolerance": 0.05,
            "verdict": "agree", "reported_bytes": 128u64 << 20, "repeated": true,
            "keys": ["mem_bw_gbs@anon"]
        }))
        .unwrap(),
    );
    f
}

/// The texts of the `<g class="NAME">` group of an SVG (empty when it has none).
fn group_texts(svg: &str, name: &str) -> Vec<String> {
    let Some(at) = svg.find(&format!("<g class=\"{name}\">")) else {
        return vec![];
    };
    let g = &svg[at..];
    let g = &g[..g.find("</g>").unwrap()];
    g.split("<text")
        .skip(1)
        .map(|t| {
            t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()]
                .trim()
                .to_string()
        })
        .collect()
}

/// The bandwidth of a key as the bars label it.
fn bar_label(f: &ParamsFile, key: &str) -> String {
    lines::tick(f.params[key])
}

#[test]
fn the_bandwidth_sweep_and_the_kernels_bars_split_one_thread_sweeps_from_single_points() {
    for (name, f) in [
        ("guest", all_quick()),
        ("guest, DRAM check", with_dram_check()),
        ("server", h200()),
    ] {
        let cs = charts(&f).unwrap();
        // The sweep: the 1-thread read through the caches, no lone dot of another kernel.
        let sweep = svg(&cs, "bandwidth.svg");
        assert_eq!(
            group_texts(&sweep, "legend"),
            ["read 1t (anon)"],
            "{name}: only the sweep"
        );
        assert!(
            group_texts(&sweep, "point-labels").is_empty(),
            "{name}: no one-point series: {:?}",
            group_texts(&sweep, "point-labels")
        );
        // The bars: each of the six kernels with 1 thread and all threads, each bar the
        // figure its key reports (the DRAM check's second size and repeats, and the
        // bulk-synchronous figures, are not bars).
        let bars = svg(&cs, "bandwidth-kernels.svg");
        let all = f.environment.cpu.logical_cpus;
        assert_eq!(
            group_texts(&bars, "legend"),
            ["1 thread".to_string(), format!("{all} threads")],
            "{name}"
        );
        assert_eq!(
            group_texts(&bars, "categories"),
            ["read", "write", "nt-write", "copy", "nt-copy", "memset"],
            "{name}"
        );
        let labels = group_texts(&bars, "bar-labels");
        assert_eq!(labels.len(), 12, "{name}: {labels:?}");
        for key in [
            "mem_bw_1t_gbs@anon",
            "mem_bw_gbs@anon",
            "mem_write_bw_gbs@anon",
            "copy_bw_gbs@anon",
        ] {
            let want = bar_label(&f, key);
            assert!(labels.contains(&want), "{name}: {key} {want} in {labels:?}");
        }
    }
}

#[test]
fn a_size_measured_twice_is_drawn_once_at_the_mean_of_its_passes() {
    let base = all_quick()
        .measurements
        .into_iter()
        .find(|m| m.benchmark == "mem.bandwidth")
        .unwrap();
    let ms: Vec<Measurement> = [(1u64 << 20, 40.0), (1 << 20, 60.0), (1 << 30, 10.0)]
        .iter()
        .enumerate()
        .map(|(i, &(size, p50))| {
            let mut m = base.clone();
            m.id = format!("bw/{i}");
            m.parameters = serde_json::json!({"kernel": "read", "threads": 1, "size_bytes": size});
            m.distribution.p50 = p50;
            m
        })
        .collect();
    let refs: Vec<&Measurement> = ms.iter().collect();
    let s = bandwidth::render_sweeps(&refs, &[]).unwrap().unwrap();
    // One line of two points (1 MiB at 50, 1 GiB at 10), not a column at 1 MiB.
    let lines: Vec<&str> = s
        .split("<polyline")
        .skip(1)
        .map(|e| &e[..e.find("/>").unwrap()])
        .filter(|tag| tag.contains("stroke-width=\"2\"") && !tag.contains("#000000"))
        .collect();
    assert_eq!(lines.len(), 1, "{s}");
    let pts = lines[0].split("points=\"").nth(1).unwrap();
    assert_eq!(pts[..pts.find('"').unwrap()].split_whitespace().count(), 2);
}

#[test]
fn bar_labels_turn_upright_together_when_one_does_not_fit() {
    let group = |name: &str, v: f64| bars::BarGroup {
        name: name.into(),
        values: vec![Some(v); 6],
        color: 0,
        light: false,
    };
    let chart = bars::BarChart {
        title: "t".into(),
        y_desc: "GB/s".into(),
        categories: (0..6).map(|i| format!("k{i}")).collect(),
    };
    let wide = bars::render_bars(&chart, &[group("a", 123.4), group("b", 5.0)])
        .unwrap()
        .unwrap();
    assert!(
        !wide.contains("rotate(-90"),
        "two bars a group: labels fit flat"
    );
    let many: Vec<bars::BarGroup> = (0..8).map(|i| group(&format!("s{i}"), 123.4)).collect();
    let narrow = bars::render_bars(&chart, &many).unwrap().unwrap();
    assert_eq!(
        narrow.matches("rotate(-90").count(),
        6 * 8,
        "eight bars a group: every label upright"
    );
    assert!(
        bars::render_bars(&chart, &[]).unwrap().is_none(),
        "no bar, no chart"
    );
}
