//! `scan-<target>.svg`: a `mem.scan` strip chart, each range's bandwidth by its place in
//! the scanned region, one curve per kernel (read, non-temporal write), each kernel's
//! median dashed, the slow ranges and every change of backing (node, CXL region and
//! memdevs, DIMM) marked as labelled verticals.

use anyhow::Result;
use bench_core::keys::parameters::{KERNEL, SCAN};
use bench_core::params::Measurement;
use serde_json::Value;

use super::data::{text, Series, Stroke};
use super::lines::{render_lines, LineChart};

/// Most marks a chart carries (slow ranges and backing changes): beyond it, the first
/// ones, and the caption says how many are in params.json.
const MARKS_MAX: usize = 24;

/// Bytes of a GiB, the x axis' unit.
const GIB: f64 = (1u64 << 30) as f64;

/// One range of a scan's measurement as the chart reads it.
struct Range {
    offset: f64,
    physical: Option<f64>,
    gbs: f64,
    slow: bool,
    backed_by: String,
}

fn ranges(m: &Measurement) -> Vec<Range> {
    let Some(list) = m
        .parameters
        .get(SCAN)
        .and_then(|s| s.get("ranges"))
        .and_then(Value::as_array)
    else {
        return vec![];
    };
    list.iter()
        .filter_map(|r| {
            Some(Range {
                offset: r.get("offset_bytes")?.as_f64()?,
                physical: r
                    .get("physical")
                    .and_then(|p| p.get("first"))
                    .and_then(Value::as_f64),
                gbs: r.get("gbs")?.as_f64()?,
                slow: r.get("slow").and_then(Value::as_bool).unwrap_or(false),
                backed_by: r
                    .get("backed_by")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            })
        })
        .collect()
}

/// The targets the scan measured, in the file's order.
pub(super) fn targets(ms: &[&Measurement]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for m in ms {
        if !out.contains(&m.target) {
            out.push(m.target.clone());
        }
    }
    out
}

/// Whether every range of every measurement has a physical address, rising with the
/// offset: then the chart's x is the physical address, else the offset in the region.
fn by_physical(all: &[Vec<Range>]) -> bool {
    all.iter().all(|rs| {
        !rs.is_empty()
            && rs.iter().all(|r| r.physical.is_some())
            && rs.windows(2).all(|w| w[0].physical < w[1].physical)
    })
}

/// The chart's marks: where the backing changes (labelled with the new backing) and
/// each slow range (`slow: range 3`), at most [`MARKS_MAX`].
fn marks(rs: &[Range], x: &dyn Fn(&Range) -> f64) -> Vec<(f64, String)> {
    let mut out = vec![];
    for (i, r) in rs.iter().enumerate() {
        let changed = i == 0 || rs[i - 1].backed_by != r.backed_by;
        if changed && !r.backed_by.is_empty() && rs.iter().any(|o| o.backed_by != r.backed_by) {
            out.push((x(r), r.backed_by.clone()));
        }
        if r.slow {
            out.push((x(r), format!("slow: range {i}")));
        }
    }
    out.truncate(MARKS_MAX);
    out
}

/// Renders the strip chart of `target` as an SVG document; `None` when its measurements
/// record no ranges.
pub(super) fn render(ms: &[&Measurement], target: &str) -> Result<Option<String>> {
    let mine: Vec<&Measurement> = ms.iter().copied().filter(|m| m.target == target).collect();
    let all: Vec<Vec<Range>> = mine.iter().map(|m| ranges(m)).collect();
    // The place of a range: its offset from the first range's start, as physical
    // addresses where every range has a rising one, in MiB or GiB (linear ticks at round
    // values; a size axis would tick at 190.7 MiB).
    let physical = by_physical(&all);
    let base = match physical {
        true => all
            .iter()
            .filter_map(|rs| rs.first()?.physical)
            .fold(f64::INFINITY, f64::min),
        false => 0.0,
    };
    let last = all
        .iter()
        .flatten()
        .map(|r| match physical {
            true => r.physical.unwrap_or(0.0) - base,
            false => r.offset,
        })
        .fold(0.0, f64::max);
    let (unit, unit_name) = if last >= 2.0 * GIB {
        (GIB, "GiB")
    } else {
        (GIB / 1024.0, "MiB")
    };
    let x = move |r: &Range| {
        let at = match (physical, r.physical) {
            (true, Some(p)) => p - base,
            _ => r.offset,
        };
        at / unit
    };
    let x_desc = match physical {
        true => format!(
            "physical address of the range's first page, {unit_name} above {:#x}",
            base as u64
        ),
        false => format!("offset of the range in the scanned region ({unit_name})"),
    };
    let mut series = vec![];
    let mut marked = vec![];
    for (i, (m, rs)) in mine.iter().zip(&all).enumerate() {
        if rs.is_empty() {
            continue;
        }
        let kernel = text(m, KERNEL).unwrap_or_else(|| m.id.clone());
        let median = m
            .parameters
            .get(SCAN)
            .and_then(|s| s.get("median_gbs"))
            .and_then(Value::as_f64);
        series.push(Series {
            name: format!("{kernel} (each range)"),
            points: rs.iter().map(|r| (x(r), r.gbs)).collect(),
            stroke: Stroke::Solid,
            color: Some(i),
        });
        if let (Some(med), Some(first), Some(last)) = (median, rs.first(), rs.last()) {
            series.push(Series {
                name: format!("{kernel} median"),
                points: vec![(x(first), med), (x(last), med)],
                stroke: Stroke::Companion,
                color: Some(i),
            });
        }
        for mk in marks(rs, &x) {
            if !marked.contains(&mk) {
                marked.push(mk);
            }
        }
    }
    if series.is_empty() {
        return Ok(None);
    }
    marked.truncate(MARKS_MAX);
    render_lines(
        &LineChart {
            title: format!("Bandwidth by address range on {target} (p50 of each range)"),
            x_desc: &x_desc,
            y_desc: "bandwidth (GB/s)".into(),
            log_x: false,
            log_y: false,
            size_x: false,
            marks: marked,
            zero_y: true,
            widen_to_marks: false,
        },
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn range(i: usize, gbs: f64, slow: bool, backed_by: &str, phys: Option<u64>) -> Value {
        json!({
            "index": i, "offset_bytes": i << 30, "gbs": gbs, "slow": slow,
            "backed_by": backed_by,
            "physical": phys.map(|p| json!({"first": p})),
        })
    }

    fn rs(v: Vec<Value>) -> Vec<Range> {
        let mut m = crate::plot::tests::all_quick().measurements[0].clone();
        m.parameters = json!({ "kernel": "read", "scan": { "median_gbs": 10.0, "ranges": v } });
        ranges(&m)
    }

    #[test]
    fn marks_name_each_change_of_backing_and_each_slow_range() {
        let r = rs(vec![
            range(0, 10.0, false, "mem0", None),
            range(1, 10.1, false, "mem0", None),
            range(2, 4.0, true, "mem1", None),
            range(3, 10.0, false, "mem1", None),
        ]);
        let m = marks(&r, &|r| r.offset);
        let labels: Vec<&str> = m.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(labels, ["mem0", "mem1", "slow: range 2"]);
        assert_eq!(m[1].0, (2u64 << 30) as f64);
    }

    #[test]
    fn the_chart_draws_each_kernel_with_its_marks() {
        let mut m = crate::plot::tests::all_quick().measurements[0].clone();
        m.target = "node:1".into();
        m.parameters = json!({ "kernel": "read", "scan": { "median_gbs": 10.0, "ranges": [
            range(0, 10.0, false, "mem0", Some(0x1_0000_0000)),
            range(1, 10.2, false, "mem0", Some(0x1_4000_0000)),
            range(2, 4.0, true, "mem1", Some(0x1_8000_0000)),
            range(3, 10.1, false, "mem1", Some(0x1_c000_0000)),
        ] } });
        let svg = render(&[&m], "node:1").unwrap().expect("drawn");
        for text in [
            "read (each range)",
            "read median",
            "slow: range 2",
            "mem1",
            "above 0x100000000",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(render(&[&m], "node:2").unwrap().is_none());
    }

    #[test]
    fn one_backing_throughout_is_not_marked() {
        let r = rs(vec![
            range(0, 10.0, false, "node 0", None),
            range(1, 10.0, false, "node 0", None),
        ]);
        assert!(marks(&r, &|r| r.offset).is_empty());
    }

    #[test]
    fn physical_axis_only_when_every_range_has_a_rising_address() {
        let rising = rs(vec![
            range(0, 1.0, false, "", Some(0x1000_0000)),
            range(1, 1.0, false, "", Some(0x5000_0000)),
        ]);
        let falling = rs(vec![
            range(0, 1.0, false, "", Some(0x5000_0000)),
            range(1, 1.0, false, "", Some(0x1000_0000)),
        ]);
        let missing = rs(vec![
            range(0, 1.0, false, "", Some(0x1000_0000)),
            range(1, 1.0, false, "", None),
        ]);
        assert!(by_physical(&[rising]));
        assert!(!by_physical(&[falling]));
        assert!(!by_physical(&[missing]));
    }
}
