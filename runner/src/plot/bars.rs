//! Grouped bar charts: a group of bars per category (a kernel), a bar per series (a
//! thread count and target), the value above each bar, the legend right of the plot area.
//! For figures that are one point each: a line through them, or a column of dots at one
//! size, would say nothing a bar does not say better.

use anyhow::Result;
use plotters::prelude::*;

use super::lines::{
    insert_before_end, text_px, tick, COLORS, DESC_PX, HEIGHT, LEGEND_MAX, LEGEND_MIN, LEGEND_PAD,
    LEGEND_PX, LEGEND_ROW, TICK_PX, WIDTH,
};

/// A bar chart's title, y axis and categories.
pub(super) struct BarChart {
    pub title: String,
    /// Y axis description.
    pub y_desc: String,
    /// The categories along x, in order (each a group of bars).
    pub categories: Vec<String>,
}

/// One series of bars: its legend label and its value in each category (`None`: no bar).
pub(super) struct BarGroup {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// Its colour's index (series of one target share one).
    pub color: usize,
    /// Drawn in a light shade of its colour (the 1-thread bar beside the all-thread one).
    pub light: bool,
}

impl BarGroup {
    /// The colour its bars and swatch are filled with.
    fn fill(&self) -> RGBColor {
        let c = COLORS[self.color % COLORS.len()];
        if self.light {
            let mix = |v: u8| ((v as u16 + 2 * 255) / 3) as u8;
            RGBColor(mix(c.0), mix(c.1), mix(c.2))
        } else {
            c
        }
    }
}

/// The share of a category's width its bars take (the rest is the gap between groups).
const GROUP_SHARE: f64 = 0.8;

/// The legend's width for `groups`, px.
fn legend_width(groups: &[BarGroup]) -> u32 {
    let widest = groups.iter().map(|g| text_px(&g.name)).max().unwrap_or(0);
    (widest + LEGEND_PAD).clamp(LEGEND_MIN, LEGEND_MAX)
}

/// The legend as SVG: a framed `<g class="legend">` of a swatch and a label per series,
/// at (`left`, `top`).
fn legend_svg(groups: &[BarGroup], width: u32, left: u32, top: u32) -> String {
    let mut g = format!(
        "<g class=\"legend\">\n<rect x=\"{left}\" y=\"{top}\" width=\"{width}\" height=\"{}\" \
         fill=\"#FFFFFF\" stroke=\"#999999\"/>\n",
        groups.len() as u32 * LEGEND_ROW + 10
    );
    for (i, s) in groups.iter().enumerate() {
        let c = s.fill();
        let y = top + 5 + i as u32 * LEGEND_ROW + LEGEND_ROW / 2;
        g.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"22\" height=\"10\" fill=\"#{:02X}{:02X}{:02X}\"/>\n\
             <text x=\"{}\" y=\"{y}\" dy=\"0.35em\" font-family=\"sans-serif\" \
             font-size=\"{LEGEND_PX}\" fill=\"#000000\">\n{}\n</text>\n",
            left + 8,
            y - 5,
            c.0,
            c.1,
            c.2,
            left + 36,
            crate::output::markup::escape(&s.name)
        ));
    }
    g.push_str("</g>\n");
    g
}

/// The category names under the x axis: (centre x, axis y, name).
fn category_labels(names: &[(i32, i32, &str)]) -> String {
    let mut g = String::from("<g class=\"categories\">\n");
    for (x, y, name) in names {
        g.push_str(&format!(
            "<text x=\"{x}\" y=\"{}\" dy=\"0.7em\" text-anchor=\"middle\" \
             font-family=\"sans-serif\" font-size=\"{TICK_PX}\" fill=\"#000000\">{}</text>\n",
            y + 8,
            crate::output::markup::escape(name)
        ));
    }
    g.push_str("</g>\n");
    g
}

/// The value labels above the bars: (bar centre x, bar top y, bar width in px, value);
/// horizontal where every label fits its bar's width, else all turned upright (so that
/// none runs into its neighbour's).
fn value_labels(bars: &[(i32, i32, i32, f64)]) -> String {
    let mut g = String::from("<g class=\"bar-labels\">\n");
    let flat = bars
        .iter()
        .all(|&(_, _, w, v)| text_px(&tick(v)) as i32 <= w);
    let style = format!("font-family=\"sans-serif\" font-size=\"{LEGEND_PX}\" fill=\"#000000\"");
    for &(x, y, _, v) in bars {
        let label = tick(v);
        if flat {
            g.push_str(&format!(
                "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" {style}>{label}</text>\n",
                y - 4
            ));
        } else {
            g.push_str(&format!(
                "<text x=\"{x}\" y=\"{}\" dy=\"0.35em\" transform=\"rotate(-90 {x} {})\" {style}>{label}</text>\n",
                y - 4,
                y - 4
            ));
        }
    }
    g.push_str("</g>\n");
    g
}

/// Renders the bars as an SVG document; `None` when no series has a finite value. The
/// y axis starts at zero (bars compare by height) and leaves room above the tallest bar
/// for its label.
pub(super) fn render_bars(c: &BarChart, groups: &[BarGroup]) -> Result<Option<String>> {
    let finite = |v: &Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0);
    let top = groups
        .iter()
        .flat_map(|g| g.values.iter().filter_map(finite))
        .fold(f64::NAN, f64::max);
    if !top.is_finite() || c.categories.is_empty() {
        return Ok(None);
    }
    let y1 = if top > 0.0 { top * 1.18 } else { 1.0 };
    let n = c.categories.len();
    let legend_w = legend_width(groups);
    let height = HEIGHT.max(groups.len() as u32 * LEGEND_ROW + 80);
    let plot_w = WIDTH - legend_w - 16;
    let mut svg = String::new();
    let mut tops: Vec<(i32, i32, i32, f64)> = vec![];
    // Each category's name under its group, centred (plotters would label the axis at
    // values of its own choosing).
    let mut names: Vec<(i32, i32, &str)> = vec![];
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, _) = root.split_horizontally(plot_w);
        let mut chart = ChartBuilder::on(&area)
            .caption(&c.title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..n as f64, 0.0..y1)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_desc("kernel")
            .y_desc(c.y_desc.as_str())
            .y_label_formatter(&|y: &f64| tick(*y))
            .label_style(("sans-serif", TICK_PX))
            .axis_desc_style(("sans-serif", DESC_PX))
            .light_line_style(RGBColor(246, 246, 246))
            .draw()?;
        let w = GROUP_SHARE / groups.len() as f64;
        for (j, g) in groups.iter().enumerate() {
            let color = g.fill();
            for (i, v) in g.values.iter().enumerate() {
                let Some(v) = finite(v) else { continue };
                let x0 = i as f64 + (1.0 - GROUP_SHARE) / 2.0 + j as f64 * w;
                let x1 = x0 + w * 0.9;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, v)],
                    color.filled(),
                )))?;
                let (l, t) = chart.backend_coord(&(x0, v));
                let (r, _) = chart.backend_coord(&(x1, v));
                tops.push(((l + r) / 2, t, r - l, v));
            }
        }
        for (i, name) in c.categories.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            names.push((x, y, name));
        }
        root.present()?;
    }
    insert_before_end(&mut svg, &category_labels(&names));
    insert_before_end(&mut svg, &value_labels(&tops));
    insert_before_end(&mut svg, &legend_svg(groups, legend_w, plot_w + 8, 48));
    Ok(Some(svg))
}
