//! The one heatmap of cxlchar's charts: a matrix of labelled rows and columns, white
//! (low) to dark red (high), the value written in each cell when the matrix is small.
//! Drawn for `pool.c2c` (CPU x CPU), the fleet's pair matrices (host x host) and the NUMA
//! node matrices (CPU node x memory node).

use anyhow::Result;
use plotters::prelude::*;

/// White (low) to dark red (high).
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(255.0, 160.0), lerp(245.0, 20.0), lerp(235.0, 20.0))
}

/// The colour scale right of the matrix, as an SVG group (`<g class="colour-scale">`): a
/// vertical bar of stripes from `lo` (bottom) to `hi` (top) at x `left`, each end and the
/// middle labelled with its value.
fn colour_scale(left: u32, lo: f64, hi: f64, format: &dyn Fn(f64) -> String) -> String {
    const STEPS: u32 = 32;
    let (top, step, w) = (70, 15, 22);
    let mut g = String::from("<g class=\"colour-scale\">\n");
    for i in 0..STEPS {
        let t = 1.0 - (f64::from(i) + 0.5) / f64::from(STEPS);
        let c = heat(t);
        g.push_str(&format!(
            "<rect x=\"{left}\" y=\"{}\" width=\"{w}\" height=\"{step}\" fill=\"#{:02X}{:02X}{:02X}\"/>\n",
            top + i * step,
            c.0,
            c.1,
            c.2
        ));
    }
    g.push_str(&format!(
        "<rect x=\"{left}\" y=\"{top}\" width=\"{w}\" height=\"{}\" fill=\"none\" stroke=\"#000000\"/>\n",
        STEPS * step
    ));
    for (t, y) in [
        (1.0, top),
        (0.5, top + STEPS * step / 2),
        (0.0, top + STEPS * step),
    ] {
        let v = if hi > lo { lo + (hi - lo) * t } else { lo };
        g.push_str(&format!(
            "<text x=\"{}\" y=\"{y}\" dy=\"0.35em\" font-family=\"sans-serif\" font-size=\"13\" fill=\"#000000\">{}</text>\n",
            left + w + 6,
            crate::output::markup::escape(&format(v))
        ));
    }
    g.push_str("</g>\n");
    g
}

/// A heatmap to draw.
pub(crate) struct Heatmap<'a> {
    /// The title (drawn above).
    pub title: String,
    /// Row labels, in order.
    pub labels: &'a [String],
    /// Column labels, in order (`None`: the row labels, a square matrix).
    pub col_labels: Option<&'a [String]>,
    /// Description of the rows (y axis) and the columns (x axis).
    pub row_desc: &'a str,
    /// Description of the columns.
    pub col_desc: &'a str,
    /// Cells `(row, column, value)`, indices into the row and column labels; absent
    /// cells stay blank.
    pub cells: &'a [(usize, usize, f64)],
    /// How a value is written in its cell.
    pub format: &'a dyn Fn(f64) -> String,
}

/// Renders `h` as an SVG document; `None` when it has no cell.
pub(crate) fn render(h: &Heatmap) -> Result<Option<String>> {
    if h.cells.is_empty() || h.labels.is_empty() {
        return Ok(None);
    }
    let lo = h.cells.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    let hi = h
        .cells
        .iter()
        .map(|c| c.2)
        .fold(f64::NEG_INFINITY, f64::max);
    let cols = h.col_labels.unwrap_or(h.labels);
    let (nr, nc) = (h.labels.len(), cols.len().max(1));
    let (last_r, last_c) = (nr.saturating_sub(1).max(1), nc.saturating_sub(1).max(1));
    let label_area = h
        .labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(2)
        .clamp(3, 24) as u32
        * 8
        + 24;
    let mut svg = String::new();
    // The backend borrows `svg` until it is dropped at the end of this block.
    {
        let root = SVGBackend::with_string(&mut svg, (860, 620)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, _) = root.split_horizontally(760);
        let mut chart = ChartBuilder::on(&area)
            .caption(&h.title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(label_area)
            // A discrete range is inclusive: 0..last gives n segments.
            .build_cartesian_2d((0..last_c).into_segmented(), (0..last_r).into_segmented())?;
        // Labels at cell centres name the row or column.
        let label = |names: &[String], v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        let row_label = |v: &SegmentValue<usize>| label(h.labels, v);
        let col_label = |v: &SegmentValue<usize>| label(cols, v);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(h.col_desc)
            .y_desc(h.row_desc)
            .x_labels(nc.min(32))
            .y_labels(nr.min(32))
            .x_label_formatter(&col_label)
            .y_label_formatter(&row_label)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 15))
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
        chart.draw_series(h.cells.iter().map(|&(r, c, v)| {
            Rectangle::new(
                [
                    (SegmentValue::Exact(c), SegmentValue::Exact(r)),
                    (SegmentValue::Exact(c + 1), SegmentValue::Exact(r + 1)),
                ],
                shade(v).filled(),
            )
        }))?;
        if nr.max(nc) <= 16 {
            chart.draw_series(h.cells.iter().map(|&(r, c, v)| {
                Text::new(
                    (h.format)(v),
                    (SegmentValue::CenterOf(c), SegmentValue::CenterOf(r)),
                    ("sans-serif", 12).into_font(),
                )
            }))?;
        }
        root.present()?;
    }
    super::lines::insert_before_end(&mut svg, &colour_scale(772, lo, hi, h.format));
    Ok(Some(svg))
}
