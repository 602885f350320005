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
        let root = SVGBackend::with_string(&mut svg, (760, 700)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
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
    Ok(Some(svg))
}
