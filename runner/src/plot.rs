//! `cxlchar plot params.json --out DIR`: SVG charts of a params.json (plotters, SVG
//! backend; text is laid out with plotters' built-in estimate and drawn by the viewer's
//! fonts, so no font or image library is needed).
//!
//! Charts, each drawn only when its measurements are in the file:
//! * `latency.svg`: `mem.latency` p50 vs working-set size per target and order (log x,
//!   log y), with the cache sizes of `environment.topology.caches` marked;
//! * `bandwidth.svg`: `mem.bandwidth*` p50 per kernel, thread count and target vs size;
//! * `copy-threshold.svg`: `mem.copy-threshold*` all-to-all copy bandwidth vs block size per
//!   method (temporal, NT, hybrid) and thread count;
//! * `loaded-latency.svg`: `mem.loaded*` latency vs achieved bandwidth (or injection delay),
//!   one curve per traffic mix;
//! * `flush.svg`: `pool.flush*` cost vs size per method (the flush-cost matrix as lines);
//! * `c2c-<kind>.svg`: `pool.c2c*` core-to-core p50 as a heatmap.

use anyhow::{bail, Context, Result};
use bench_core::params::{Measurement, ParamsFile, SCHEMA_VERSION};
use bench_core::units::format_size;
use plotters::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `plot` did.
#[derive(Debug, Default)]
pub struct PlotOutcome {
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Charts not drawn, with why.
    pub skipped: Vec<String>,
}

/// Reads and checks a params.json: names the problem when the file is not JSON, is
/// truncated, is of another schema version, or does not have the schema's shape.
pub fn load(path: &Path) -> Result<ParamsFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| match e.classify() {
        serde_json::error::Category::Eof => anyhow::anyhow!(
            "{} is truncated (JSON ends early: {e}); was the run interrupted?",
            path.display()
        ),
        _ => anyhow::anyhow!("{} is not JSON: {e}", path.display()),
    })?;
    match v.get("schema_version").and_then(Value::as_u64) {
        Some(n) if n == SCHEMA_VERSION as u64 => {}
        Some(n) => bail!(
            "{} has schema version {n}; this cxlchar reads schema version {SCHEMA_VERSION}",
            path.display()
        ),
        None => bail!(
            "{} has no schema_version: not a cxlchar params.json",
            path.display()
        ),
    }
    serde_json::from_value(v).with_context(|| {
        format!(
            "{} does not match the params.json schema version {SCHEMA_VERSION}",
            path.display()
        )
    })
}

const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(0, 128, 128),
    RGBColor(0, 0, 128),
    RGBColor(128, 0, 0),
];

/// One line of a chart.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

fn num(m: &Measurement, key: &str) -> Option<f64> {
    m.parameters.get(key).and_then(Value::as_f64)
}

fn text(m: &Measurement, key: &str) -> Option<String> {
    match m.parameters.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Groups measurements into series named by `name(m)`, points `(x(m), p50)`, sorted by x.
fn series_by(
    ms: &[&Measurement],
    name: impl Fn(&Measurement) -> String,
    x: impl Fn(&Measurement) -> Option<f64>,
) -> Vec<Series> {
    let mut map: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for m in ms {
        if let Some(xv) = x(m) {
            map.entry(name(m))
                .or_default()
                .push((xv, m.distribution.p50));
        }
    }
    map.into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name, points }
        })
        .collect()
}

struct LineChart<'a> {
    title: String,
    x_desc: &'a str,
    y_desc: String,
    log_x: bool,
    log_y: bool,
    size_x: bool,
    /// Vertical markers: (x, label).
    marks: Vec<(f64, String)>,
}

fn bounds(series: &[Series], log: bool, pick: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
    let vals = series
        .iter()
        .flat_map(|s| s.points.iter().map(&pick))
        .filter(|v| v.is_finite() && (!log || *v > 0.0));
    let (mut lo, mut hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() {
        (lo, hi) = (1.0, 10.0);
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
        ((lo - pad).min(0.0_f64.max(lo - pad)), hi + pad)
    }
}

/// Draws the series into `path`; `false` (and no file) when there is nothing to draw.
fn draw_lines(path: &Path, c: &LineChart, series: &[Series]) -> Result<bool> {
    if series.is_empty() {
        return Ok(false);
    }
    let (x0, x1) = bounds(series, c.log_x, |p| p.0);
    let (y0, y1) = bounds(series, c.log_y, |p| p.1);
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            let fmt_x = |x: &f64| {
                if c.size_x {
                    format_size(*x as usize)
                } else {
                    format!("{x}")
                }
            };
            chart
                .configure_mesh()
                .x_desc(c.x_desc)
                .y_desc(c.y_desc.as_str())
                .x_label_formatter(&fmt_x)
                .draw()?;
            for (x, label) in &c.marks {
                if *x < x0 || *x > x1 {
                    continue;
                }
                let grey = RGBColor(150, 150, 150);
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(*x, y0), (*x, y1)],
                    grey.stroke_width(1),
                )))?;
                chart.draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x, y1 * 0.97),
                    ("sans-serif", 14).into_font().color(&grey),
                )))?;
            }
            for (i, s) in series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                chart
                    .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))?
                    .label(s.name.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
                // Markers too, so that a one-point series shows.
                chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()?;
        }};
    }
    // Sizes on powers of two, so that the ticks read 4K, 8K, ... exactly.
    let xbase = if c.size_x { 2.0 } else { 10.0 };
    let mut b = ChartBuilder::on(&root);
    b.caption(&c.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72);
    match (c.log_x, c.log_y) {
        (true, true) => {
            body!(b.build_cartesian_2d((x0..x1).log_scale().base(xbase), (y0..y1).log_scale())?)
        }
        (true, false) => body!(b.build_cartesian_2d((x0..x1).log_scale().base(xbase), y0..y1)?),
        (false, true) => body!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?),
        (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1)?),
    }
    root.present()?;
    Ok(true)
}

fn family<'a>(f: &'a ParamsFile, prefix: &str) -> Vec<&'a Measurement> {
    f.measurements
        .iter()
        .filter(|m| m.benchmark == prefix || m.benchmark.starts_with(&format!("{prefix}.")))
        .collect()
}

/// First string-valued parameter among `keys`, for naming a series.
fn first_text(m: &Measurement, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| text(m, k))
}

fn first_num(m: &Measurement, keys: &[&str]) -> Option<f64> {
    keys.iter().find_map(|k| num(m, k))
}

fn unit_of(ms: &[&Measurement]) -> String {
    ms.first().map(|m| m.unit.clone()).unwrap_or_default()
}

/// Draws every chart whose data is in `f` into `dir`.
pub fn plot(f: &ParamsFile, dir: &Path) -> Result<PlotOutcome> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = PlotOutcome::default();
    let mut emit = |name: &str,
                    what: &str,
                    ms: &[&Measurement],
                    draw: &dyn Fn(&Path) -> Result<bool>|
     -> Result<()> {
        if ms.is_empty() {
            out.skipped
                .push(format!("{name}: no {what} measurements in the file"));
            return Ok(());
        }
        let p = dir.join(name);
        if draw(&p).with_context(|| format!("drawing {}", p.display()))? {
            out.written.push(p);
        } else {
            out.skipped.push(format!(
                "{name}: {what} measurements lack the parameters to plot"
            ));
        }
        Ok(())
    };

    // Latency vs working-set size.
    let lat = family(f, "mem.latency");
    let caches: Vec<(f64, String)> = f
        .environment
        .topology
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| {
            (
                c.size_bytes as f64,
                format!("L{} {}", c.level, format_size(c.size_bytes)),
            )
        })
        .collect();
    emit("latency.svg", "mem.latency", &lat, &|p| {
        let s = series_by(
            &lat,
            |m| {
                format!(
                    "{} ({})",
                    m.target,
                    text(m, "order").unwrap_or_else(|| "chase".into())
                )
            },
            |m| num(m, "size_bytes"),
        );
        draw_lines(
            p,
            &LineChart {
                title: "Load latency vs working-set size (p50)".into(),
                x_desc: "working set (bytes)",
                y_desc: format!("latency ({})", unit_of(&lat)),
                log_x: true,
                log_y: true,
                size_x: true,
                marks: caches.clone(),
            },
            &s,
        )
    })?;

    // Bandwidth per kernel and size.
    let bw = family(f, "mem.bandwidth");
    emit("bandwidth.svg", "mem.bandwidth", &bw, &|p| {
        let by_size = bw.iter().any(|m| num(m, "size_bytes").is_some());
        let s = series_by(
            &bw,
            |m| {
                let k = first_text(m, &["kernel", "op", "mode", "test"])
                    .unwrap_or_else(|| m.benchmark.clone());
                // One thread and all threads are separate curves (same sizes).
                match (by_size, num(m, "threads")) {
                    (true, Some(t)) => format!("{k} {t}t ({})", m.target),
                    _ => format!("{k} ({})", m.target),
                }
            },
            |m| {
                if by_size {
                    num(m, "size_bytes")
                } else {
                    first_num(m, &["threads", "cpus"])
                }
            },
        );
        draw_lines(
            p,
            &LineChart {
                title: "Bandwidth per kernel (p50)".into(),
                x_desc: if by_size { "size (bytes)" } else { "threads" },
                y_desc: format!("bandwidth ({})", unit_of(&bw)),
                log_x: by_size,
                log_y: false,
                size_x: by_size,
                marks: if by_size { caches.clone() } else { vec![] },
            },
            &s,
        )
    })?;

    // Copy threshold: all-to-all copy bandwidth vs block size, per method and threads.
    let ct = family(f, "mem.copy-threshold");
    emit("copy-threshold.svg", "mem.copy-threshold", &ct, &|p| {
        let s = series_by(
            &ct,
            |m| {
                let k = first_text(m, &["method", "kernel"]).unwrap_or_else(|| "copy".into());
                match num(m, "threads") {
                    Some(t) => format!("{k} P={t} ({})", m.target),
                    None => format!("{k} ({})", m.target),
                }
            },
            |m| first_num(m, &["block_bytes", "size_bytes"]),
        );
        draw_lines(
            p,
            &LineChart {
                title: "All-to-all copy bandwidth by block size (p50): temporal vs NT vs hybrid"
                    .into(),
                x_desc: "block size (bytes)",
                y_desc: format!("bandwidth ({})", unit_of(&ct)),
                log_x: true,
                log_y: false,
                size_x: true,
                marks: caches.clone(),
            },
            &s,
        )
    })?;

    // Loaded latency: latency vs achieved bandwidth (or injection delay).
    let loaded: Vec<&Measurement> = family(f, "mem.loaded")
        .into_iter()
        .filter(|m| m.unit == "ns")
        .collect();
    emit("loaded-latency.svg", "mem.loaded", &loaded, &|p| {
        let bw_key = loaded.iter().find_map(|m| {
            m.parameters.as_object().and_then(|o| {
                o.iter()
                    .find(|(k, v)| k.ends_with("_gbs") && v.is_number())
                    .map(|(k, _)| k.clone())
            })
        });
        let x_keys: Vec<&str> = match &bw_key {
            Some(k) => vec![k.as_str()],
            None => vec![
                "delay_pause",
                "delay",
                "injection_delay",
                "delay_cycles",
                "threads",
            ],
        };
        let s = series_by(
            &loaded,
            |m| {
                let k = first_text(m, &["mix", "kernel", "traffic", "mode"]).unwrap_or_default();
                format!("{} {k}", m.target).trim().to_string()
            },
            |m| first_num(m, &x_keys),
        );
        draw_lines(
            p,
            &LineChart {
                title: "Loaded latency (p50)".into(),
                x_desc: if bw_key.is_some() {
                    "achieved bandwidth (GB/s)"
                } else {
                    "injection delay / load"
                },
                y_desc: "latency (ns)".into(),
                log_x: false,
                log_y: false,
                size_x: false,
                marks: vec![],
            },
            &s,
        )
    })?;

    // Flush-cost matrix: cost vs size per method.
    let flush = family(f, "pool.flush");
    emit("flush.svg", "pool.flush", &flush, &|p| {
        let s = series_by(
            &flush,
            |m| {
                let k = first_text(m, &["method", "op", "kind"]).unwrap_or_default();
                format!("{k} ({})", m.target)
            },
            |m| num(m, "size_bytes"),
        );
        draw_lines(
            p,
            &LineChart {
                title: "Flush cost vs size (p50)".into(),
                x_desc: "size (bytes)",
                y_desc: format!("cost ({})", unit_of(&flush)),
                log_x: true,
                log_y: true,
                size_x: true,
                marks: vec![],
            },
            &s,
        )
    })?;

    // Core-to-core heatmaps, one per kind.
    let c2c = family(f, "pool.c2c");
    let kinds: Vec<String> = {
        let mut k: Vec<String> = c2c
            .iter()
            .map(|m| text(m, "kind").unwrap_or_else(|| "c2c".into()))
            .collect();
        k.sort();
        k.dedup();
        k
    };
    if kinds.is_empty() {
        emit("c2c.svg", "pool.c2c", &[], &|_| Ok(false))?;
    }
    for kind in kinds {
        let ms: Vec<&Measurement> = c2c
            .iter()
            .copied()
            .filter(|m| text(m, "kind").unwrap_or_else(|| "c2c".into()) == kind)
            .collect();
        let name = format!(
            "c2c-{}.svg",
            kind.replace(|c: char| !c.is_alphanumeric(), "_")
        );
        emit(&name, "pool.c2c", &ms, &|p| draw_heatmap(p, &kind, &ms))?;
    }
    Ok(out)
}

/// White (low) to dark red (high).
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(255.0, 160.0), lerp(245.0, 20.0), lerp(235.0, 20.0))
}

fn draw_heatmap(path: &Path, kind: &str, ms: &[&Measurement]) -> Result<bool> {
    let mut cells: Vec<(usize, usize, f64)> = ms
        .iter()
        .filter_map(|m| {
            Some((
                num(m, "cpu_a")? as usize,
                num(m, "cpu_b")? as usize,
                m.distribution.p50,
            ))
        })
        .collect();
    if cells.is_empty() {
        return Ok(false);
    }
    // A pair is measured once (a < b): show it in both halves of the matrix.
    let mirrored: Vec<(usize, usize, f64)> = cells
        .iter()
        .filter(|&&(a, b, _)| a != b && !cells.iter().any(|c| c.0 == b && c.1 == a))
        .map(|&(a, b, v)| (b, a, v))
        .collect();
    cells.extend(mirrored);
    let mut cpus: Vec<usize> = cells.iter().flat_map(|c| [c.0, c.1]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let idx = |c: usize| cpus.iter().position(|&x| x == c).unwrap_or(0);
    let lo = cells.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    let hi = cells.iter().map(|c| c.2).fold(f64::NEG_INFINITY, f64::max);
    let n = cpus.len();
    let last = n.saturating_sub(1).max(1);
    let root = SVGBackend::new(path, (760, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Core-to-core {kind} (p50 {}, {lo:.1}..{hi:.1})", ms[0].unit),
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(48)
        // A discrete range is inclusive: 0..last gives n segments.
        .build_cartesian_2d((0..last).into_segmented(), (0..last).into_segmented())?;
    // Labels at cell centres name the CPU.
    let label = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => cpus.get(*i).map_or(String::new(), |c| c.to_string()),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("cpu b")
        .y_desc("cpu a")
        .x_labels(n.min(32))
        .y_labels(n.min(32))
        .x_label_formatter(&label)
        .y_label_formatter(&label)
        .draw()?;
    let span = hi - lo;
    // One value (or all equal): a mid colour, not the colour of "lowest".
    let shade = |v: f64| {
        if span > 1e-12 {
            heat((v - lo) / span)
        } else {
            heat(0.5)
        }
    };
    chart.draw_series(cells.iter().map(|&(a, b, v)| {
        let (i, j) = (idx(b), idx(a));
        Rectangle::new(
            [
                (SegmentValue::Exact(i), SegmentValue::Exact(j)),
                (SegmentValue::Exact(i + 1), SegmentValue::Exact(j + 1)),
            ],
            shade(v).filled(),
        )
    }))?;
    if n <= 16 {
        chart.draw_series(cells.iter().map(|&(a, b, v)| {
            Text::new(
                format!("{v:.0}"),
                (
                    SegmentValue::CenterOf(idx(b)),
                    SegmentValue::CenterOf(idx(a)),
                ),
                ("sans-serif", 12).into_font(),
            )
        }))?;
    }
    root.present()?;
    Ok(true)
}
