//! `interference-<lat|bw>-<mix>.svg`: params.json's `interference` (`mem.interference`)
//! as heatmaps, rows = victim targets, columns = aggressor targets, each side labelled
//! with its tier, each cell's ratio together / alone written in it, one latency and one
//! bandwidth heatmap per aggressor traffic mix.

use anyhow::Result;
use bench_core::params::{InterferenceCell, InterferenceMatrix};

use super::heatmap::{self, Heatmap};

/// Which ratio of the cells a heatmap shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Figure {
    /// The victim's latency together / alone.
    Latency,
    /// The victim's bandwidth together / alone.
    Bandwidth,
}

impl Figure {
    fn of(self, c: &InterferenceCell) -> f64 {
        match self {
            Figure::Latency => c.lat_ratio,
            Figure::Bandwidth => c.bw_ratio,
        }
    }

    /// The short name in the file name (`lat`, `bw`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Figure::Latency => "lat",
            Figure::Bandwidth => "bw",
        }
    }
}

/// Each target's label with its tier (`node:1 (far)`), from the cells that name it.
fn labelled(names: &[String], cells: &[&InterferenceCell], victim: bool) -> Vec<String> {
    names
        .iter()
        .map(|n| {
            let tier = cells.iter().find_map(|c| {
                let (t, tier) = if victim {
                    (&c.victim, &c.victim_tier)
                } else {
                    (&c.aggressor, &c.aggressor_tier)
                };
                (t == n).then_some(tier.as_str())
            });
            match tier {
                Some(t) => format!("{n} ({t})"),
                None => n.clone(),
            }
        })
        .collect()
}

/// Renders the `fig` ratios of the cells of `mix` as an SVG document; `None` without a
/// matrix or a cell of that mix.
pub(super) fn render(
    m: Option<&InterferenceMatrix>,
    fig: Figure,
    mix: &str,
) -> Result<Option<String>> {
    let Some(m) = m else {
        return Ok(None);
    };
    let of_mix: Vec<&InterferenceCell> = m.cells.iter().filter(|c| c.mix == mix).collect();
    // The columns of this mix's aggressors only: the GPU's directions (h2d, d2h) have the
    // GPU columns, the CPUs' mixes the target columns.
    let aggressors: Vec<String> = m
        .aggressors
        .iter()
        .filter(|a| of_mix.iter().any(|c| &c.aggressor == *a))
        .cloned()
        .collect();
    let gpu = of_mix.iter().any(|c| c.aggressor_tier == "gpu");
    let pos = |names: &[String], n: &str| names.iter().position(|x| x == n);
    let cells: Vec<(usize, usize, f64)> = of_mix
        .iter()
        .filter_map(|c| {
            let v = fig.of(c);
            v.is_finite().then_some((
                pos(&m.victims, &c.victim)?,
                pos(&aggressors, &c.aggressor)?,
                v,
            ))
        })
        .collect();
    let rows = labelled(&m.victims, &of_mix, true);
    let cols = labelled(&aggressors, &of_mix, false);
    let under = if gpu {
        format!("the GPU's {mix} copies")
    } else {
        format!("{mix} aggressors")
    };
    let title = match fig {
        Figure::Latency => format!("victim latency under {under} (together / alone)"),
        Figure::Bandwidth => format!("victim read bandwidth under {under} (together / alone)"),
    };
    heatmap::render(&Heatmap {
        title,
        labels: &rows,
        col_labels: Some(&cols),
        row_desc: "victim target",
        col_desc: if gpu {
            "GPU copying a target"
        } else {
            "aggressor target"
        },
        cells: &cells,
        format: &|v| format!("{v:.2}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(v: &str, vt: &str, a: &str, at: &str, mix: &str, lat: f64) -> InterferenceCell {
        InterferenceCell {
            victim: v.into(),
            victim_tier: vt.into(),
            aggressor: a.into(),
            aggressor_tier: at.into(),
            mix: mix.into(),
            lat_alone_ns: 100.0,
            lat_together_ns: 100.0 * lat,
            lat_ratio: lat,
            bw_alone_gbs: 10.0,
            bw_together_gbs: 10.0 / lat,
            bw_ratio: 1.0 / lat,
            aggressor_bw_alone_gbs: 8.0,
            aggressor_bw_together_gbs: 6.0,
            aggressor_bw_ratio: 0.75,
            aggressor_bw_beside_chase_gbs: 7.0,
            noisy: None,
            from: vec![],
        }
    }

    fn matrix() -> InterferenceMatrix {
        let t = ["anon", "node:1"];
        let tier = |x: &str| if x == "anon" { "dram" } else { "far" };
        let mut cells = Vec::new();
        for (i, v) in t.iter().enumerate() {
            for (j, a) in t.iter().enumerate() {
                for mix in ["read", "1r1w"] {
                    let lat =
                        1.0 + 0.25 * (2 * i + j) as f64 + if mix == "read" { 0.0 } else { 0.5 };
                    cells.push(cell(v, tier(v), a, tier(a), mix, lat));
                }
            }
        }
        InterferenceMatrix {
            victims: t.map(String::from).to_vec(),
            aggressors: t.map(String::from).to_vec(),
            mixes: vec!["read".into(), "1r1w".into()],
            victim_cpus: vec![0],
            aggressor_cpus: vec![1],
            cells,
        }
    }

    #[test]
    fn victim_rows_and_aggressor_columns_carry_their_tiers_and_ratios() {
        let m = matrix();
        let svg = render(Some(&m), Figure::Latency, "read").unwrap().unwrap();
        for v in [
            "1.00",
            "1.25",
            "1.50",
            "1.75",
            "anon (dram)",
            "node:1 (far)",
            "victim target",
            "aggressor target",
            "read aggressors",
        ] {
            assert!(svg.contains(v), "{v}");
        }
        let svg = render(Some(&m), Figure::Latency, "1r1w").unwrap().unwrap();
        assert!(
            svg.contains("2.25") && !svg.contains(">1.00<"),
            "the 1r1w cells only"
        );
        let svg = render(Some(&m), Figure::Bandwidth, "read")
            .unwrap()
            .unwrap();
        assert!(svg.contains("0.80") && svg.contains("bandwidth"));
        assert_eq!(render(Some(&m), Figure::Latency, "nt-write").unwrap(), None);
        // The GPU's directions: its columns only, named as the GPU's copies.
        let mut g = m.clone();
        g.aggressors.push("gpu:0 on anon".into());
        g.mixes.push("h2d".into());
        g.cells
            .push(cell("anon", "dram", "gpu:0 on anon", "gpu", "h2d", 1.4));
        let svg = render(Some(&g), Figure::Latency, "h2d").unwrap().unwrap();
        assert!(
            svg.contains("1.40") && svg.contains("gpu:0 on anon (gpu)"),
            "{svg}"
        );
        assert!(svg.contains("h2d copies"), "the GPU's title");
        let svg = render(Some(&g), Figure::Latency, "read").unwrap().unwrap();
        assert!(
            !svg.contains("gpu:0"),
            "no GPU column among the CPUs' mixes"
        );
        assert_eq!(render(None, Figure::Latency, "read").unwrap(), None);
    }
}
