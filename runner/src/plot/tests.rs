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
    for f in [all_quick(), h200()] {
        let s = svg(&charts(&f).unwrap(), "bandwidth.svg");
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
