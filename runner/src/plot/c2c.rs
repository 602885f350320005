//! `c2c-<kind>.svg`: `pool.c2c` core-to-core p50 as a heatmap, one per kind.

use anyhow::Result;
use bench_core::keys::parameters::{CPU_A, CPU_B};
use bench_core::params::Measurement;
use plotters::prelude::*;

use super::data::num;

/// White (low) to dark red (high).
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(255.0, 160.0), lerp(245.0, 20.0), lerp(235.0, 20.0))
}

/// Renders the heatmap of one kind as an SVG document; `None` when no pair is measured.
pub(super) fn render_heatmap(kind: &str, ms: &[&Measurement]) -> Result<Option<String>> {
    let mut cells: Vec<(usize, usize, f64)> = ms
        .iter()
        .filter_map(|m| {
            Some((
                num(m, CPU_A)? as usize,
                num(m, CPU_B)? as usize,
                m.distribution.p50,
            ))
        })
        .collect();
    if cells.is_empty() {
        return Ok(None);
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
    let mut svg = String::new();
    // The backend borrows `svg` until it is dropped at the end of this block.
    {
        let root = SVGBackend::with_string(&mut svg, (760, 700)).into_drawing_area();
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
    }
    Ok(Some(svg))
}
