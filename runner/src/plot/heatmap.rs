//! The one heatmap of cxlchar's charts: a matrix of labelled rows and columns, light
//! (low) to dark red (high), the value written in each cell when the matrix is small; a
//! cell not measured is hatched grey (never the colour of a low value), and says so below
//! the colour scale. Drawn for `pool.c2c` (CPU x CPU), the fleet's pair matrices (host x
//! host), the NUMA node matrices (CPU node x memory node) and the interference matrix
//! (victim target x aggressor target).

use anyhow::Result;
use plotters::prelude::*;

/// Light (low) to dark red (high): the low end a pale orange, distinct from the page and
/// from the hatched grey of a cell not measured.
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(253.0, 160.0), lerp(224.0, 20.0), lerp(190.0, 20.0))
}

/// Canvas width: the matrix (760 px) and the colour scale with its labels.
const WIDTH: u32 = 960;

/// The hatch of what is not measured: a grey rectangle at (x, y), w x h px, crossed by
/// diagonal lines (drawn, not a pattern: the report's page references nothing, not even
/// a fragment of itself), as `<g class="not-measured">`.
fn hatch(x: i32, y: i32, w: i32, h: i32) -> String {
    let mut g = format!(
        "<g class=\"not-measured\">\n<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" \
         fill=\"#E4E4E4\"/>\n"
    );
    const STEP: i32 = 9;
    // Line k: the points u + v = k, u = px - x in 0..=w, v = y + h - py in 0..=h.
    let mut k = STEP;
    while k < w + h {
        let (u1, u2) = ((k - h).max(0), k.min(w));
        g.push_str(&format!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#9A9A9A\" stroke-width=\"1.5\"/>\n",
            x + u1,
            y + h - (k - u1),
            x + u2,
            y + h - (k - u2)
        ));
        k += STEP;
    }
    g.push_str("</g>\n");
    g
}

/// The labels of the colour scale's ends and middle: `format`, or more decimals where
/// that writes two different values alike (99.6 and 100.4 both `100`); one label when
/// every cell has the same value.
fn scale_labels(lo: f64, hi: f64, format: &dyn Fn(f64) -> String) -> Vec<(f64, String)> {
    let mid = lo + (hi - lo) / 2.0;
    let distinct = |l: &[String]| l[0] != l[1] && l[1] != l[2];
    let mut labels: Vec<String> = [hi, mid, lo].iter().map(|&v| format(v)).collect();
    if hi > lo && !distinct(&labels) {
        for d in 0..=6 {
            labels = [hi, mid, lo].iter().map(|v| format!("{v:.d$}")).collect();
            if distinct(&labels) {
                break;
            }
        }
    }
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) || !distinct(&labels) {
        return vec![(0.5, format!("{} (every cell)", format(lo)))];
    }
    vec![
        (1.0, labels[0].clone()),
        (0.5, labels[1].clone()),
        (0.0, labels[2].clone()),
    ]
}

/// The colour scale right of the matrix, as an SVG group (`<g class="colour-scale">`): a
/// vertical bar of stripes from `lo` (bottom) to `hi` (top) at x `left`, each end and the
/// middle labelled with its value (one colour and one label when all cells are equal),
/// and, when some cell is not measured, its hatch with the words below.
fn colour_scale(
    left: u32,
    lo: f64,
    hi: f64,
    format: &dyn Fn(f64) -> String,
    not_measured: bool,
) -> String {
    const STEPS: u32 = 32;
    let (top, step, w) = (70, 15, 22);
    let one = hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater);
    let mut g = String::from("<g class=\"colour-scale\">\n");
    for i in 0..STEPS {
        let t = if one {
            0.5
        } else {
            1.0 - (f64::from(i) + 0.5) / f64::from(STEPS)
        };
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
    for (t, label) in scale_labels(lo, hi, format) {
        let y = top + STEPS * step - (t * f64::from(STEPS * step)).round() as u32;
        g.push_str(&format!(
            "<text x=\"{}\" y=\"{y}\" dy=\"0.35em\" font-family=\"sans-serif\" font-size=\"13\" fill=\"#000000\">{}</text>\n",
            left + w + 6,
            crate::output::markup::escape(&label)
        ));
    }
    if not_measured {
        let y = top + STEPS * step + 24;
        g.push_str(&hatch(left as i32, y as i32, w as i32, w as i32));
        g.push_str(&format!(
            "<rect x=\"{left}\" y=\"{y}\" width=\"{w}\" height=\"{w}\" fill=\"none\" \
             stroke=\"#000000\"/>\n<text x=\"{}\" y=\"{}\" dy=\"0.35em\" \
             font-family=\"sans-serif\" font-size=\"13\" fill=\"#000000\">not measured</text>\n",
            left + w + 6,
            y + w / 2
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
    /// cells are hatched (not measured).
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
    // The backend borrows `svg` until it is dropped at the end of this block; it gives
    // the plot area, (x, y, width, height) px, hatched under the cells.
    let area_px = {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 620)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, _) = root.split_horizontally(760);
        let mut chart = ChartBuilder::on(&area)
            .caption(crate::output::text::printable(&h.title), ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(label_area)
            // A discrete range is inclusive: 0..last gives n segments.
            .build_cartesian_2d((0..last_c).into_segmented(), (0..last_r).into_segmented())?;
        // Labels at cell centres name the row or column.
        // Names from a file (host names): their control characters as escapes.
        let label = |names: &[String], v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => names
                .get(*i)
                .map(|n| crate::output::text::printable(n).into_owned())
                .unwrap_or_default(),
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
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let area_px = (xs.start, ys.start, xs.end - xs.start, ys.end - ys.start);
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
        area_px
    };
    // Every cell not measured shows the hatch: drawn first, under the cells.
    let not_measured = h.cells.len() < nr * nc;
    if not_measured {
        insert_after_background(&mut svg, &hatch(area_px.0, area_px.1, area_px.2, area_px.3));
    }
    super::lines::insert_before_end(&mut svg, &colour_scale(772, lo, hi, h.format, not_measured));
    Ok(Some(svg))
}

/// Inserts `part` after the first element of `svg` that follows its `<svg>` tag (the
/// background plotters fills first), so that what is drawn later covers it.
fn insert_after_background(svg: &mut String, part: &str) {
    let Some(open) = svg.find("<svg") else {
        return;
    };
    let Some(tag_end) = svg[open..].find('>').map(|i| open + i + 1) else {
        return;
    };
    let at = svg[tag_end..]
        .find("<rect")
        .and_then(|r| svg[tag_end + r..].find("/>").map(|e| tag_end + r + e + 2))
        .unwrap_or(tag_end);
    svg.insert_str(at, &format!("\n{part}"));
}
