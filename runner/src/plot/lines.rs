//! Line charts: a series per curve, log or linear axes, vertical markers.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{Series, Stroke};

pub(super) const COLORS: [RGBColor; 12] = [
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
    /// Widen the x axis to show the markers a little beyond the data (a working-set
    /// sweep's next cache level); else the axis stops where the data stops.
    pub widen_to_marks: bool,
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
pub(super) const WIDTH: u32 = 1040;
/// Canvas height unless the legend needs more.
pub(super) const HEIGHT: u32 = 500;
/// Font sizes (px) of the tick labels, the axis descriptions and the legend and markers.
pub(super) const TICK_PX: u32 = 14;
pub(super) const DESC_PX: u32 = 15;
pub(super) const LEGEND_PX: u32 = 13;
/// Height of one legend entry.
pub(super) const LEGEND_ROW: u32 = 18;

/// The x range: the data's, widened (when the chart asks) to show every marker within
/// 64 x of the data (the 300 MiB L3 of a run whose largest point is 128 MiB).
fn x_bounds(c: &LineChart, series: &[Series]) -> (f64, f64) {
    let (mut x0, mut x1) = bounds(series, c.log_x, |p| p.0);
    if c.log_x && c.widen_to_marks {
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

/// Width of a character of the legend's and labels' 13 px sans-serif, px: the widest
/// average of the fonts a viewer picks (DejaVu Sans), so that no label runs out of its
/// box.
const CHAR_PX: f64 = 7.8;
/// Width of a legend beside its labels: the frame's padding and the line sample.
pub(super) const LEGEND_PAD: u32 = 44;
/// The legend's width bounds, px.
pub(super) const LEGEND_MIN: u32 = 160;
pub(super) const LEGEND_MAX: u32 = 330;

/// Pixels `text` takes in the legend's font.
pub(super) fn text_px(text: &str) -> u32 {
    (text.chars().count() as f64 * CHAR_PX).ceil() as u32
}

/// The legend's text: an optional heading (a prefix every label shares, said once when
/// the labels do not fit otherwise: `NVIDIA H200 (gpu 0)`) and each series' label as one
/// or more lines (wrapped at spaces to fit [`LEGEND_MAX`]).
struct LegendText {
    heading: Option<String>,
    lines: Vec<Vec<String>>,
    width: u32,
}

/// Splits `text` at spaces into lines of at most `chars` characters (a longer word is a
/// line of its own).
fn wrap(text: &str, chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for w in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + w.chars().count() <= chars => {
                l.push(' ');
                l.push_str(w);
            }
            _ => lines.push(w.to_string()),
        }
    }
    lines
}

fn legend_text(series: &[Series]) -> LegendText {
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let widest = |ns: &[&str]| ns.iter().map(|n| text_px(n)).max().unwrap_or(0);
    let mut heading = None;
    let mut shown: Vec<&str> = names.clone();
    if widest(&names) + LEGEND_PAD > LEGEND_MAX && names.len() > 1 {
        // The longest prefix, up to a space, that every label shares.
        let first = names[0];
        let mut cut = 0;
        for (i, c) in first.char_indices() {
            if c == ' '
                && names
                    .iter()
                    .all(|n| n.len() > i && n.starts_with(&first[..=i]))
            {
                cut = i + 1;
            }
        }
        if cut > 0 {
            heading = Some(first[..cut].trim_end().to_string());
            shown = names.iter().map(|n| &n[cut..]).collect();
        }
    }
    let fit = ((LEGEND_MAX - LEGEND_PAD) as f64 / CHAR_PX).floor() as usize;
    let lines: Vec<Vec<String>> = shown.iter().map(|n| wrap(n, fit)).collect();
    let text_w = lines
        .iter()
        .flatten()
        .map(|l| text_px(l))
        .max()
        .unwrap_or(0);
    let heading_w = heading.as_deref().map_or(0, |h| text_px(h) + 16);
    let width = (text_w + LEGEND_PAD)
        .max(heading_w)
        .clamp(LEGEND_MIN, LEGEND_MAX);
    LegendText {
        heading,
        lines,
        width,
    }
}

/// The legend's height for `t`.
fn legend_height(t: &LegendText) -> u32 {
    let rows = t.lines.iter().map(Vec::len).sum::<usize>() + usize::from(t.heading.is_some());
    rows as u32 * LEGEND_ROW + 10
}

/// The legend as SVG, drawn right of the plot area (never over data): a framed
/// `<g class="legend">` of a swatch and a label per series (after a heading the labels
/// share), top-aligned at `top`.
fn legend_svg(series: &[Series], t: &LegendText, left: u32, top: u32) -> String {
    let mut g = format!(
        "<g class=\"legend\">\n<rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{}\" \
         fill=\"#FFFFFF\" stroke=\"#999999\"/>\n",
        t.width,
        legend_height(t)
    );
    let mut row = 0u32;
    let y_of = |row: u32| top + 5 + row * LEGEND_ROW + LEGEND_ROW / 2;
    if let Some(h) = &t.heading {
        g.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-family=\"sans-serif\" \
             font-size=\"{LEGEND_PX}\" font-weight=\"bold\" fill=\"#000000\">\n{}\n</text>\n",
            left + 8,
            y_of(row),
            crate::output::markup::escape(h)
        ));
        row += 1;
    }
    for (i, (s, lines)) in series.iter().zip(&t.lines).enumerate() {
        let color = COLORS[s.color.unwrap_or(i) % COLORS.len()];
        let y = y_of(row);
        let (dash, width) = match s.stroke {
            Stroke::Solid => ("", 2),
            Stroke::Companion => (" stroke-dasharray=\"6 4\"", 1),
            Stroke::Dashed => (" stroke-dasharray=\"8 5\"", 2),
        };
        g.push_str(&format!(
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#{:02X}{:02X}{:02X}\" \
             stroke-width=\"{width}\"{dash}/>\n",
            left + 8,
            left + 30,
            color.0,
            color.1,
            color.2,
        ));
        for l in lines {
            g.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-family=\"sans-serif\" \
                 font-size=\"{LEGEND_PX}\" fill=\"#000000\">\n{}\n</text>\n",
                left + 36,
                y_of(row),
                crate::output::markup::escape(l)
            ));
            row += 1;
        }
    }
    g.push_str("</g>\n");
    g
}

/// Left edge of the plot area, px (the margin and the y labels): no point label starts
/// left of it.
const PLOT_LEFT: i32 = 100;

/// Labels beside the one-point series (which have no line to follow to the legend): each
/// right of its point (left of it where it would run past `right`), moved down as little
/// as needed so that no two overprint, with a thin leader when moved; each on a white
/// ground with a halo, so that a line crossing it does not strike it through; left out
/// only when it fits on neither side.
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
        let width = text_px(name) as i32;
        let ty = (*y).max(last + row);
        // Text start and the end its leader points to.
        let (tx, lead) = if x + 10 + width <= right as i32 {
            (x + 10, x + 8)
        } else if x - 10 - width >= PLOT_LEFT {
            (x - 10 - width, x - 8)
        } else {
            continue;
        };
        last = ty;
        if ty != *y {
            g.push_str(&format!(
                "<line x1=\"{x}\" y1=\"{y}\" x2=\"{lead}\" y2=\"{ty}\" stroke=\"#AAAAAA\" stroke-width=\"1\"/>\n"
            ));
        }
        let color = COLORS[s.color.unwrap_or(*i) % COLORS.len()];
        g.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#FFFFFF\" \
             fill-opacity=\"0.85\"/>\n<text x=\"{tx}\" y=\"{ty}\" dy=\"0.35em\" \
             font-family=\"sans-serif\" font-size=\"{}\" fill=\"#{:02X}{:02X}{:02X}\" \
             stroke=\"#FFFFFF\" stroke-width=\"4\" stroke-linejoin=\"round\" \
             paint-order=\"stroke\">{}</text>\n",
            tx - 2,
            ty - row / 2,
            width + 4,
            row,
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
            stroke: s.stroke,
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
/// out. A [`Stroke::Companion`] series is drawn thin and dashed without markers; a
/// [`Stroke::Dashed`] one dashed with open markers, over the solid ones (a curve that
/// lies on another shows both). Log axes are labelled by [`super::ticks::log_ticks`].
/// The legend sits right of the plot area; each marker is a grey vertical with its label
/// at the top.
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
    let legend = legend_text(series);
    let height = HEIGHT.max(legend_height(&legend) + 70);
    let plot_w = WIDTH - legend.width - 16;
    let fmt_x = |x: &f64| {
        if c.size_x {
            tick_size(*x)
        } else {
            tick(*x)
        }
    };
    let fmt_y = |y: &f64| tick(*y);
    let (x_bold, x_light) = super::ticks::log_ticks(x0, x1, c.size_x, &|v| fmt_x(&v));
    let (y_bold, y_light) = super::ticks::log_ticks(y0, y1, false, &|v| fmt_y(&v));
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
                // The dashed series last, over the solid ones.
                let order = series
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.stroke != Stroke::Dashed)
                    .chain(
                        series
                            .iter()
                            .enumerate()
                            .filter(|(_, s)| s.stroke == Stroke::Dashed),
                    );
                for (i, s) in order {
                    let color = COLORS[s.color.unwrap_or(i) % COLORS.len()];
                    match s.stroke {
                        Stroke::Companion => {
                            // Dashes of width 1 (each dash its own 2-point path), no markers.
                            chart.draw_series(DashedLineSeries::new(
                                s.points.clone(),
                                6,
                                4,
                                color.stroke_width(1),
                            ))?;
                            continue;
                        }
                        Stroke::Dashed => {
                            chart.draw_series(DashedLineSeries::new(
                                s.points.clone(),
                                8,
                                5,
                                color.stroke_width(2),
                            ))?;
                            // Open markers, larger than the solid ones' dots: both show
                            // where the curves meet.
                            chart.draw_series(
                                s.points
                                    .iter()
                                    .map(|&p| Circle::new(p, 5, color.stroke_width(2))),
                            )?;
                        }
                        Stroke::Solid => {
                            chart.draw_series(LineSeries::new(
                                s.points.clone(),
                                color.stroke_width(2),
                            ))?;
                            // Markers too, so that a one-point series shows.
                            chart.draw_series(
                                s.points.iter().map(|&p| Circle::new(p, 3, color.filled())),
                            )?;
                        }
                    }
                    if let [p] = s.points.as_slice() {
                        lone.push((chart.backend_coord(p), i));
                    }
                }
            }};
        }
        let mut b = ChartBuilder::on(&area);
        b.caption(&c.title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(80);
        // Log axes labelled where log_ticks says (sizes on powers of two, so that the
        // ticks read 4 KiB, 16 KiB, ... exactly).
        let log_x = || {
            (x0..x1)
                .log_scale()
                .with_key_points(x_bold.clone())
                .with_light_points(x_light.clone())
        };
        let log_y = || {
            (y0..y1)
                .log_scale()
                .with_key_points(y_bold.clone())
                .with_light_points(y_light.clone())
        };
        match (c.log_x, c.log_y) {
            (true, true) => body!(b.build_cartesian_2d(log_x(), log_y())?),
            (true, false) => body!(b.build_cartesian_2d(log_x(), y0..y1)?),
            (false, true) => body!(b.build_cartesian_2d(x0..x1, log_y())?),
            (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1)?),
        }
        root.present()?;
    }
    insert_before_end(&mut svg, &lone_labels(series, &mut lone, plot_w + 4));
    insert_before_end(&mut svg, &legend_svg(series, &legend, plot_w + 8, 48));
    Ok(Some(svg))
}

/// A tick label: at most 4 significant digits, no float noise (`0.30000000000000004`)
/// and no trailing zeros (`0.5`, not `0.5000`).
pub(super) fn tick(v: f64) -> String {
    let s = crate::output::num(Some(v));
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A size tick in binary units (`4 KiB`, `1 MiB`, `1.5 GiB`).
pub(super) fn tick_size(v: f64) -> String {
    if v < 1.0 {
        return tick(v);
    }
    bench_core::units::human_bytes(v.round() as u64)
}
