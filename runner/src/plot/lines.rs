//! Line charts: a series per curve, log or linear axes, vertical markers.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::Series;

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

/// A line chart's title, axes and markers.
pub(super) struct LineChart<'a> {
    pub title: String,
    /// X axis description.
    pub x_desc: &'a str,
    /// Y axis description.
    pub y_desc: String,
    /// Logarithmic x.
    pub log_x: bool,
    /// Logarithmic y.
    pub log_y: bool,
    /// X values are sizes in bytes (ticks as 4K, 1M).
    pub size_x: bool,
    /// Vertical markers: (x, label).
    pub marks: Vec<(f64, String)>,
    /// A linear y axis starts at zero (so that bars of bandwidth compare by height).
    pub zero_y: bool,
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

/// Largest magnitude drawn (and, on a log axis, 1/it the smallest): far beyond any
/// measured figure, and small enough that the axis ranges and ticks stay finite (an axis
/// from 5e-324 to 1e308 made plotters loop forever).
const PLOTTABLE_ABS: f64 = 1e30;

fn plottable(v: f64, log: bool) -> bool {
    v.is_finite() && v.abs() <= PLOTTABLE_ABS && (!log || v >= 1.0 / PLOTTABLE_ABS)
}

/// Canvas width of a line chart: at most the report's content width, so the page shows
/// it at its own scale (labels at their drawn size).
const WIDTH: u32 = 1040;
/// Canvas height unless the legend needs more.
const HEIGHT: u32 = 500;
/// Font sizes (px) of the tick labels, the axis descriptions and the legend and markers.
pub(super) const TICK_PX: u32 = 14;
const DESC_PX: u32 = 15;
const LEGEND_PX: u32 = 13;
/// Height of one legend entry.
const LEGEND_ROW: u32 = 18;

/// The x range: the data's, widened to show every marker within 64 x of the data (the
/// 300 MiB L3 of a run whose largest point is 128 MiB).
fn x_bounds(c: &LineChart, series: &[Series]) -> (f64, f64) {
    let (mut x0, mut x1) = bounds(series, c.log_x, |p| p.0);
    if c.log_x {
        for (m, _) in &c.marks {
            if *m > x1 && *m <= x1 * 64.0 {
                x1 = m * 1.4;
            }
            if *m < x0 && *m * 64.0 >= x0 && *m > 0.0 {
                x0 = m / 1.4;
            }
        }
    }
    (x0, x1)
}

/// Whether positive values spanning `lo..hi` read better on a log axis (a decade or more).
pub(super) fn spans_decades(series: &[Series]) -> bool {
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = ys.fold((f64::INFINITY, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    lo.is_finite() && hi / lo >= 10.0
}

/// The legend's width for `series`: room for the longest label, within 160..=320 px.
fn legend_width(series: &[Series]) -> u32 {
    let chars = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0) as u32;
    (chars * 7 + 48).clamp(160, 320)
}

/// The legend as SVG, drawn right of the plot area (never over data): a framed
/// `<g class="legend">` of a swatch and a label per series, top-aligned at `top`.
pub(super) fn legend_svg(series: &[Series], left: u32, width: u32, top: u32) -> String {
    let mut g = format!(
        "<g class=\"legend\">\n<rect x=\"{left}\" y=\"{top}\" width=\"{width}\" height=\"{}\" \
         fill=\"#FFFFFF\" stroke=\"#999999\"/>\n",
        series.len() as u32 * LEGEND_ROW + 10
    );
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[s.color.unwrap_or(i) % COLORS.len()];
        let y = top + 5 + i as u32 * LEGEND_ROW + LEGEND_ROW / 2;
        let dash = if s.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        g.push_str(&format!(
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#{:02X}{:02X}{:02X}\" \
             stroke-width=\"{}\"{dash}/>\n<text x=\"{}\" y=\"{y}\" dy=\"0.35em\" \
             font-family=\"sans-serif\" font-size=\"{LEGEND_PX}\" fill=\"#000000\">\n{}\n</text>\n",
            left + 8,
            left + 30,
            color.0,
            color.1,
            color.2,
            if s.dashed { 1 } else { 2 },
            left + 36,
            crate::output::markup::escape(&s.name)
        ));
    }
    g.push_str("</g>\n");
    g
}

/// Labels beside the one-point series (which have no line to follow to the legend): each
/// right of its point, moved down as little as needed so that no two overprint, with a
/// thin leader when moved; left out when the label would run past `right`.
fn lone_labels(series: &[Series], lone: &mut [((i32, i32), usize)], right: u32) -> String {
    lone.sort_by_key(|((_, y), _)| *y);
    let row = LEGEND_PX as i32 + 3;
    let mut g = String::from("<g class=\"point-labels\">\n");
    // A qualifier all of several labels share (` (anon)`: one target) is said once by
    // the legend.
    let common = lone
        .first()
        .and_then(|(_, i)| series[*i].name.rfind(" (").map(|a| &series[*i].name[a..]))
        .filter(|suf| lone.len() > 1 && lone.iter().all(|(_, i)| series[*i].name.ends_with(suf)))
        .unwrap_or("");
    let mut last = i32::MIN;
    for ((x, y), i) in lone.iter() {
        let s = &series[*i];
        let name = &s.name[..s.name.len() - common.len()];
        let width = name.chars().count() as i32 * 7;
        let ty = (*y).max(last + row);
        if x + 10 + width > right as i32 {
            continue;
        }
        last = ty;
        if ty != *y {
            g.push_str(&format!(
                "<line x1=\"{x}\" y1=\"{y}\" x2=\"{}\" y2=\"{ty}\" stroke=\"#AAAAAA\" stroke-width=\"1\"/>\n",
                x + 8
            ));
        }
        let color = COLORS[s.color.unwrap_or(*i) % COLORS.len()];
        g.push_str(&format!(
            "<text x=\"{}\" y=\"{ty}\" dy=\"0.35em\" font-family=\"sans-serif\" \
             font-size=\"{}\" fill=\"#{:02X}{:02X}{:02X}\">{}</text>\n",
            x + 10,
            LEGEND_PX - 1,
            color.0 / 2,
            color.1 / 2,
            color.2 / 2,
            crate::output::markup::escape(name)
        ));
    }
    g.push_str("</g>\n");
    g
}

/// Inserts `part` before the closing `</svg>` of `svg`.
pub(crate) fn insert_before_end(svg: &mut String, part: &str) {
    if let Some(at) = svg.rfind("</svg>") {
        svg.insert_str(at, part);
    }
}

/// The series with only their plottable points, the empty ones left out.
fn plottable_series(c: &LineChart, series: &[Series]) -> Vec<Series> {
    series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            dashed: s.dashed,
            color: s.color,
            points: s
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| plottable(x, c.log_x) && plottable(y, c.log_y))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// Where a marker's label goes: right of the marker, or left of it in the right fifth
/// of the axis (so that none is clipped): (x offset, anchor).
fn mark_anchor(log_x: bool, x: f64, x0: f64, x1: f64) -> (i32, HPos) {
    let frac = if log_x {
        (x / x0).ln() / (x1 / x0).ln()
    } else {
        (x - x0) / (x1 - x0)
    };
    if frac > 0.8 {
        (-4, HPos::Right)
    } else {
        (4, HPos::Left)
    }
}

/// Renders the series as an SVG document; `None` when there is nothing to draw. Points
/// that are not finite, beyond [`PLOTTABLE_ABS`] or not positive on a log axis are left
/// out. A [`Series::dashed`] series is drawn dashed, without markers. The legend sits
/// right of the plot area; each marker is a grey vertical with its label at the top.
pub(super) fn render_lines(c: &LineChart, series: &[Series]) -> Result<Option<String>> {
    let series = plottable_series(c, series);
    let series = series.as_slice();
    if series.is_empty() {
        return Ok(None);
    }
    let (x0, x1) = x_bounds(c, series);
    let (mut y0, y1) = bounds(series, c.log_y, |p| p.1);
    if c.zero_y && !c.log_y {
        y0 = y0.min(0.0);
    }
    let legend_w = legend_width(series);
    let height = HEIGHT.max(series.len() as u32 * LEGEND_ROW + 80);
    let plot_w = WIDTH - legend_w - 16;
    let mut svg = String::new();
    // One-point series (a DRAM figure beside a cache sweep): pixel position and index.
    let mut lone: Vec<((i32, i32), usize)> = vec![];
    // The backend borrows `svg` until it is dropped at the end of this block.
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, _) = root.split_horizontally(plot_w);
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart;
                let fmt_x = |x: &f64| {
                    if c.size_x {
                        tick_size(*x)
                    } else {
                        tick(*x)
                    }
                };
                let fmt_y = |y: &f64| tick(*y);
                chart
                    .configure_mesh()
                    .x_desc(c.x_desc)
                    .y_desc(c.y_desc.as_str())
                    .x_label_formatter(&fmt_x)
                    .y_label_formatter(&fmt_y)
                    .label_style(("sans-serif", TICK_PX))
                    .axis_desc_style(("sans-serif", DESC_PX))
                    .light_line_style(RGBColor(246, 246, 246))
                    .draw()?;
                let grey = RGBColor(120, 120, 120);
                for (row, (x, label)) in c
                    .marks
                    .iter()
                    .filter(|(x, _)| *x >= x0 && *x <= x1)
                    .enumerate()
                {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(*x, y0), (*x, y1)],
                        grey.stroke_width(1),
                    )))?;
                    // Labels in two rows, so that close markers do not overprint; left of
                    // a marker in the right fifth of the axis, so that none is clipped.
                    let (dx, h) = mark_anchor(c.log_x, *x, x0, x1);
                    chart.draw_series(std::iter::once(
                        EmptyElement::at((*x, y1))
                            + Text::new(
                                label.clone(),
                                (dx, 4 + (row % 2) as i32 * (LEGEND_PX as i32 + 4)),
                                ("sans-serif", LEGEND_PX)
                                    .into_font()
                                    .color(&grey)
                                    .pos(Pos::new(h, VPos::Top)),
                            ),
                    ))?;
                }
                for (i, s) in series.iter().enumerate() {
                    let color = COLORS[s.color.unwrap_or(i) % COLORS.len()];
                    if s.dashed {
                        // Dashes of width 1 (each dash its own 2-point path), no markers.
                        chart.draw_series(DashedLineSeries::new(
                            s.points.clone(),
                            6,
                            4,
                            color.stroke_width(1),
                        ))?;
                        continue;
                    }
                    chart.draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))?;
                    // Markers too, so that a one-point series shows.
                    chart
                        .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
                    if let [p] = s.points.as_slice() {
                        lone.push((chart.backend_coord(p), i));
                    }
                }
            }};
        }
        // Sizes on powers of two, so that the ticks read 4 KiB, 8 KiB, ... exactly.
        let xbase = if c.size_x { 2.0 } else { 10.0 };
        let mut b = ChartBuilder::on(&area);
        b.caption(&c.title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(80);
        match (c.log_x, c.log_y) {
            (true, true) => {
                body!(b.build_cartesian_2d((x0..x1).log_scale().base(xbase), (y0..y1).log_scale())?)
            }
            (true, false) => body!(b.build_cartesian_2d((x0..x1).log_scale().base(xbase), y0..y1)?),
            (false, true) => body!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?),
            (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1)?),
        }
        root.present()?;
    }
    insert_before_end(&mut svg, &lone_labels(series, &mut lone, plot_w + 4));
    insert_before_end(&mut svg, &legend_svg(series, plot_w + 8, legend_w, 48));
    Ok(Some(svg))
}

/// A tick label: at most 4 significant digits, no float noise (`0.30000000000000004`).
pub(super) fn tick(v: f64) -> String {
    crate::output::num(Some(v))
}

/// A size tick in binary units (`4 KiB`, `1 MiB`, `1.5 GiB`).
pub(super) fn tick_size(v: f64) -> String {
    if v < 1.0 {
        return tick(v);
    }
    bench_core::units::human_bytes(v.round() as u64)
}
