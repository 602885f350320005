//! Line charts: a series per curve, log or linear axes, vertical markers.

use anyhow::Result;
use bench_core::units::format_size;
use plotters::prelude::*;

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

/// Renders the series as an SVG document; `None` when there is nothing to draw. Points
/// that are not finite, beyond [`PLOTTABLE_ABS`] or not positive on a log axis are left
/// out. A [`Series::dashed`] series is drawn dashed, without markers.
pub(super) fn render_lines(c: &LineChart, series: &[Series]) -> Result<Option<String>> {
    let series: Vec<Series> = series
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
        .collect();
    let series = series.as_slice();
    if series.is_empty() {
        return Ok(None);
    }
    let (x0, x1) = bounds(series, c.log_x, |p| p.0);
    let (y0, y1) = bounds(series, c.log_y, |p| p.1);
    let mut svg = String::new();
    // The backend borrows `svg` until it is dropped at the end of this block.
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
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
                    let color = COLORS[s.color.unwrap_or(i) % COLORS.len()];
                    if s.dashed {
                        // Dashes of width 1 (each dash its own 2-point path), no markers.
                        chart
                            .draw_series(DashedLineSeries::new(
                                s.points.clone(),
                                6,
                                4,
                                color.stroke_width(1),
                            ))?
                            .label(s.name.clone())
                            .legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 8, y)], color.stroke_width(1))
                            });
                        continue;
                    }
                    chart
                        .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))?
                        .label(s.name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                    // Markers too, so that a one-point series shows.
                    chart
                        .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
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
    }
    Ok(Some(svg))
}
