//! The run of `mem.interference` over its placed regions: every point in order, its
//! measurement, the matrix's cells and the keys.

use super::measure::{Rig, Side, BATCH};
use super::split::{gpu_key_victims, join_noisy, key, key_pairs, ratio, Figure, Split, Tier};
use super::{InterferenceBench, Layout, NAME};
use crate::chase::Chain;
use crate::kernels::Isa;
use crate::loaded::Mix;
use bench_core::bench::{Context, NotRun, Param, Report};
use bench_core::counters::MeasurementCounters;
use bench_core::dma::DmaDir;
use bench_core::memory::Placement;
use bench_core::params::{InterferenceCell, InterferenceMatrix, Measurement, Skipped};
use bench_core::stats::Distribution;
use bench_core::units::format_size;
use serde_json::json;

/// What a run measures on: the bench, its context and split, each target's layout, the
/// address past its chase span and its placement, and its tier.
pub(super) struct Run<'a> {
    pub bench: &'a InterferenceBench,
    pub ctx: &'a Context,
    pub split: &'a Split,
    pub isa: Isa,
    pub layouts: &'a [Layout],
    pub bases: &'a [usize],
    pub placements: &'a [Placement],
    pub tiers: Vec<Tier>,
}

/// A recorded point: its p50, why it is noisy, its measurement's id.
#[derive(Debug, Clone)]
pub(super) struct Point {
    p50: f64,
    noisy: Option<String>,
    id: String,
}

impl Point {
    pub(super) fn figure(&self) -> Figure {
        Figure::new(self.p50, self.noisy.clone())
    }
}

/// One point's measurement, before it is recorded.
pub(super) struct Sampled<'s> {
    pub id: String,
    /// Index of the target whose placement it records.
    pub on: usize,
    pub unit: &'static str,
    pub samples: &'s [f64],
    pub method: String,
    pub noisy: Option<String>,
    /// `None` for the GPU's figures (the copies' thread is the driver's, not counted).
    pub counters: Option<MeasurementCounters>,
    pub parameters: serde_json::Value,
}

/// What a cell's aggressor is: the aggressor CPUs streaming target `b` with a mix, or
/// the GPU copying to or from target `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Column {
    Cpu(usize, Mix),
    Gpu(usize, DmaDir),
}

/// A cell with the noisy reasons of its two keys' ratios.
pub(super) struct Cell {
    pub cell: InterferenceCell,
    pub victim: usize,
    pub column: Column,
    pub lat_noisy: Option<String>,
    pub bw_noisy: Option<String>,
}

impl Run<'_> {
    pub(super) fn name(&self, i: usize) -> String {
        self.bench.targets[i].to_string()
    }

    pub(super) fn victim(&self, a: usize) -> Side {
        Side {
            base: self.bases[a],
            each: self.layouts[a].victim_each,
        }
    }

    pub(super) fn aggressor(&self, b: usize) -> Side {
        let l = &self.layouts[b];
        Side {
            base: self.bases[b] + self.split.victim.len() * l.victim_each,
            each: l.aggressor_each,
        }
    }

    /// The parameters every measurement of victim `a` (if any) and aggressor `b` with
    /// `mix` (if any) records.
    pub(super) fn parameters(
        &self,
        a: Option<usize>,
        b: Option<(usize, Mix)>,
    ) -> serde_json::Value {
        let tier = |i: usize| self.tiers[i].name();
        let mut p = json!({
            "victim": a.map(|a| self.name(a)), "victim_tier": a.map(tier),
            "aggressor": b.map(|(b, _)| self.name(b)), "aggressor_tier": b.map(|(b, _)| tier(b)),
            "mix": b.map(|(_, m)| m.name()),
            "victim_cpus": self.split.victim, "aggressor_cpus": self.split.aggressor,
            "cores": {"victim": self.split.cores.0, "aggressor": self.split.cores.1},
            "isa": self.isa.name(),
        });
        if let Some(a) = a {
            let l = &self.layouts[a];
            p["chase_bytes"] = json!(l.touched);
            p["sizing"] = json!(l.sizing.explain());
            p["victim_slice_bytes"] = json!(l.victim_each);
        }
        if let Some((b, m)) = b {
            let lines = m.lines();
            p["aggressor_slice_bytes"] = json!(self.layouts[b].aggressor_each);
            p["read_pct"] = json!(lines.read_pct());
            p["load_store_ratio"] = json!(lines.ratio());
        }
        p
    }

    /// Records `s` as a measurement in `rep`; its point.
    pub(super) fn record(&self, rep: &mut Report, s: Sampled<'_>) -> Result<Point, NotRun> {
        let d = Distribution::from_samples(s.samples)
            .ok_or_else(|| NotRun::skip(format!("{}: no valid samples", s.id)))?;
        let mut parameters = s.parameters;
        parameters["noisy"] = json!(s.noisy);
        self.ctx.progress(&format!(
            "{}: {:.2} {}{}",
            s.id,
            d.p50,
            s.unit,
            s.noisy
                .as_ref()
                .map_or(String::new(), |w| format!(" (noisy: {w})"))
        ));
        let point = Point {
            p50: d.p50,
            noisy: s.noisy,
            id: s.id.clone(),
        };
        rep.measurements.push(Measurement {
            id: s.id,
            benchmark: NAME.into(),
            target: self.name(s.on),
            parameters,
            unit: s.unit.into(),
            method: s.method,
            distribution: d,
            placement: Some(self.placements[s.on].clone()),
            counters: s.counters,
        });
        Ok(point)
    }

    /// The victim's chase on `a`, alone or beside aggressors on `b`; also what the
    /// aggressors moved beside it (GB/s).
    fn latency(
        &self,
        rig: &mut Rig<'_>,
        rep: &mut Report,
        (chain, a): (&Chain<'_>, usize),
        b: Option<(usize, Mix)>,
    ) -> Result<(Point, f64), NotRun> {
        let agg = b.map(|(b, m)| (self.aggressor(b), m.lines()));
        let l = rig.latency(chain, agg)?;
        self.ctx.point_done();
        let (id, beside) = match b {
            None => (format!("{NAME}/{}/alone/lat", self.name(a)), "alone (the aggressor CPUs idle)".to_string()),
            Some((b, m)) => (
                format!("{NAME}/{}/under/{}/{}/lat", self.name(a), self.name(b), m.name()),
                format!("beside the aggressor CPUs {:?} streaming {} with {} traffic at full rate ({}), in one crew window released with the chase (aggressor bandwidth beside it: aggressor_bw_gbs)", self.split.aggressor, self.name(b), m.name(), m.lines().chunk_text()),
            ),
        };
        let mut parameters = self.parameters(Some(a), b);
        parameters["chase"] = chain.describe();
        parameters["aggressor_bw_gbs"] = json!(l.aggressor_gbs);
        parameters["aggressor_crew"] = l.crew.clone();
        let p = self.record(
            rep,
            Sampled {
                id,
                on: a,
                unit: "ns",
                samples: &l.batches,
                method: format!("distribution: means of {BATCH}-load dependent chase batches on CPU {} over {} touched of the victim target (ns per load, timer overhead subtracted), {beside}; retried while a thread was disturbed", self.split.victim[0], format_size(self.layouts[a].touched)),
                noisy: l.noisy,
                counters: Some(l.counters),
                parameters,
            },
        )?;
        Ok((p, l.aggressor_gbs))
    }

    /// The stream crew: the victim CPUs on `a` (if any), the aggressors on `b` (if any);
    /// the points of each side that ran.
    fn bandwidth(
        &self,
        rig: &Rig<'_>,
        rep: &mut Report,
        a: Option<usize>,
        b: Option<(usize, Mix)>,
    ) -> Result<(Option<Point>, Option<Point>), NotRun> {
        let agg = b.map(|(b, m)| (self.aggressor(b), m.lines()));
        let w = rig.bandwidth(a.map(|a| self.victim(a)), agg)?;
        self.ctx.point_done();
        let head = match (a, b) {
            (Some(a), Some((b, m))) => format!(
                "{NAME}/{}/under/{}/{}",
                self.name(a),
                self.name(b),
                m.name()
            ),
            (Some(a), None) => format!("{NAME}/{}/alone", self.name(a)),
            (None, Some((b, m))) => format!("{NAME}/aggressor/{}/{}/alone", self.name(b), m.name()),
            (None, None) => unreachable!("a crew of neither side"),
        };
        let how = "sample = a window's sum of the side's threads' own rates (each thread's bytes loaded + stored / its own time, GB = 1e9 B, RFO not counted), every used window of the crew (the undisturbed ones, else all, flagged noisy); every thread pinned to its own CPU, streaming its own slice at full rate (no injection delay)";
        let mut parameters = self.parameters(a, b);
        parameters["crew"] = w.crew.clone();
        let mut out = (None, None);
        if let Some(a) = a {
            let with = b.map_or("alone (the aggressor CPUs idle)".to_string(), |(b, m)| {
                format!(
                    "while the aggressor CPUs {:?} stream {} with {} traffic in the same windows",
                    self.split.aggressor,
                    self.name(b),
                    m.name()
                )
            });
            out.0 = Some(self.record(rep, Sampled {
                id: format!("{head}/bw"),
                on: a,
                unit: "GB/s",
                samples: &w.victim,
                method: format!("the victim CPUs {:?} each read their own {} slice of {} (vector loads), {with}; {how}", self.split.victim, format_size(self.layouts[a].victim_each), self.name(a)),
                noisy: w.noisy.clone(),
                counters: Some(w.counters.clone()),
                parameters: parameters.clone(),
            })?);
        }
        if let Some((b, m)) = b {
            let with = a.map_or("alone (the victim CPUs idle)".to_string(), |a| {
                format!(
                    "while the victim CPUs {:?} read {} in the same windows",
                    self.split.victim,
                    self.name(a)
                )
            });
            let id = if a.is_some() {
                format!("{head}/aggressor-bw")
            } else {
                format!("{head}/bw")
            };
            out.1 = Some(self.record(rep, Sampled {
                id,
                on: b,
                unit: "GB/s",
                samples: &w.aggressor,
                method: format!("the aggressor CPUs {:?} each stream their own {} slice of {} with {} traffic ({}), {with}; {how}", self.split.aggressor, format_size(self.layouts[b].aggressor_each), self.name(b), m.name(), m.lines().chunk_text()),
                noisy: w.noisy,
                counters: Some(w.counters),
                parameters,
            })?);
        }
        Ok(out)
    }

    /// Every point, the cells and the keys.
    pub fn measure(&self, chains: &[Chain<'_>]) -> Result<Report, NotRun> {
        let mut rig = Rig::new(self.ctx, self.isa, self.split)?;
        let mut rep = Report::default();
        let n = self.bench.targets.len();
        let mixes = &self.bench.mixes;
        let mut alone = Vec::new();
        for (a, chain) in chains.iter().enumerate() {
            let (lat, _) = self.latency(&mut rig, &mut rep, (chain, a), None)?;
            let (bw, _) = self.bandwidth(&rig, &mut rep, Some(a), None)?;
            alone.push((lat, bw.expect("the victim side ran")));
        }
        let mut agg_alone = Vec::new();
        for b in 0..n {
            let mut v = Vec::new();
            for &m in mixes {
                let (_, p) = self.bandwidth(&rig, &mut rep, None, Some((b, m)))?;
                v.push(p.expect("the aggressor side ran"));
            }
            agg_alone.push(v);
        }
        let mut cells = Vec::new();
        for (a, chain) in chains.iter().enumerate() {
            for (b, agg) in agg_alone.iter().enumerate() {
                for (mi, &m) in mixes.iter().enumerate() {
                    let (lat, beside) =
                        self.latency(&mut rig, &mut rep, (chain, a), Some((b, m)))?;
                    let (v, g) = self.bandwidth(&rig, &mut rep, Some(a), Some((b, m)))?;
                    let (v, g) = (v.expect("victim ran"), g.expect("aggressor ran"));
                    let together = [lat, v, g];
                    let al = [&alone[a].0, &alone[a].1, &agg[mi]];
                    match self.cell((a, Column::Cpu(b, m)), al, &together, beside) {
                        Ok(c) => cells.push(c),
                        Err(reason) => rep.skipped.push(Skipped {
                            benchmark: NAME.into(),
                            target: format!("{} under {}", self.name(a), self.name(b)),
                            reason,
                        }),
                    }
                }
            }
        }
        let mut aggressors: Vec<String> = (0..n).map(|i| self.name(i)).collect();
        let mut mix_names: Vec<String> = mixes.iter().map(|m| m.name().to_string()).collect();
        let gpu = self.gpu_column(&mut rig, &mut rep, chains, &alone);
        if !gpu.is_empty() {
            aggressors.extend((0..n).map(|b| self.gpu_name(b)));
            mix_names.extend(DmaDir::ALL.map(|d| d.name().to_string()));
        }
        cells.extend(gpu);
        rep.params = self.keys(&cells);
        rep.interference = Some(InterferenceMatrix {
            victims: (0..n).map(|i| self.name(i)).collect(),
            aggressors,
            mixes: mix_names,
            victim_cpus: self.split.victim.clone(),
            aggressor_cpus: self.split.aggressor.clone(),
            cells: cells.into_iter().map(|c| c.cell).collect(),
        });
        Ok(rep)
    }

    /// The cell of victim `a` under aggressor `b` with `mix`, from the points alone
    /// (victim latency, victim bandwidth, aggressor bandwidth) and together (the same),
    /// and the aggressors' bandwidth beside the chase; why not, when a ratio has no value.
    pub(super) fn cell(
        &self,
        (a, column): (usize, Column),
        alone: [&Point; 3],
        together: &[Point; 3],
        beside_gbs: f64,
    ) -> Result<Cell, String> {
        let r = |i: usize| {
            ratio(&together[i].figure(), &alone[i].figure()).ok_or_else(|| {
                format!(
                    "{} has no ratio: alone {} (measurement {}), together {}",
                    ["latency", "bandwidth", "aggressor bandwidth"][i],
                    alone[i].p50,
                    alone[i].id,
                    together[i].p50
                )
            })
        };
        let (lat, bw, agg) = (r(0)?, r(1)?, r(2)?);
        let from = alone
            .into_iter()
            .chain(together)
            .map(|p| p.id.clone())
            .collect();
        let noisy = join_noisy(&[
            lat.noisy.clone().map(|w| format!("latency {w}")),
            bw.noisy.clone().map(|w| format!("bandwidth {w}")),
            agg.noisy.clone().map(|w| format!("aggressor {w}")),
        ]);
        let (aggressor, aggressor_tier, mix) = match column {
            Column::Cpu(b, m) => (self.name(b), self.tiers[b], m.name()),
            Column::Gpu(b, d) => (self.gpu_name(b), Tier::Gpu, d.name()),
        };
        Ok(Cell {
            cell: InterferenceCell {
                victim: self.name(a),
                victim_tier: self.tiers[a].name().into(),
                aggressor,
                aggressor_tier: aggressor_tier.name().into(),
                mix: mix.into(),
                lat_alone_ns: alone[0].p50,
                lat_together_ns: together[0].p50,
                lat_ratio: lat.value,
                bw_alone_gbs: alone[1].p50,
                bw_together_gbs: together[1].p50,
                bw_ratio: bw.value,
                aggressor_bw_alone_gbs: alone[2].p50,
                aggressor_bw_together_gbs: together[2].p50,
                aggressor_bw_ratio: agg.value,
                aggressor_bw_beside_chase_gbs: beside_gbs,
                noisy,
                from,
            },
            victim: a,
            column,
            lat_noisy: lat.noisy,
            bw_noisy: bw.noisy,
        })
    }

    /// The keys: each tier pair's ratios from its first target pair with the read mix;
    /// each victim tier's under the GPU from its first target under the GPU's h2d copies
    /// of that same target.
    fn keys(&self, cells: &[Cell]) -> Vec<Param> {
        let first = "the first target pair of this tier pair in run order (a target under itself first); every pair in `interference`";
        let mut out = Vec::new();
        for ((tv, ta), (a, b)) in key_pairs(&self.tiers) {
            let on = format!("{} under {}", self.name(a), self.name(b));
            let what = "the aggressors' read traffic";
            self.key_pair(
                &mut out,
                cells,
                (a, Column::Cpu(b, Mix::Read)),
                (tv, ta),
                (&on, what, first),
            );
        }
        for (tv, a) in gpu_key_victims(&self.tiers) {
            let on = format!("{} under {}", self.name(a), self.gpu_name(a));
            let what = "the GPU's h2d copies reading the same target";
            let first = "the first target of this tier in run order under the GPU's copies of itself; every pair and direction in `interference`";
            self.key_pair(
                &mut out,
                cells,
                (a, Column::Gpu(a, DmaDir::H2d)),
                (tv, Tier::Gpu),
                (&on, what, first),
            );
        }
        out
    }

    /// The lat and bw keys of tier pair `tiers` from the cell of `(victim, column)`, if
    /// it was measured; `on`, `beside` and `first` name the pair, the aggressor's
    /// traffic and why this pair.
    fn key_pair(
        &self,
        out: &mut Vec<Param>,
        cells: &[Cell],
        (a, column): (usize, Column),
        (tv, ta): (Tier, Tier),
        (on, beside, first): (&str, &str, &str),
    ) {
        let Some(c) = cells.iter().find(|c| c.victim == a && c.column == column) else {
            return;
        };
        let x = &c.cell;
        out.push(
            Param::new(
                key(tv, ta, "lat"),
                x.lat_ratio,
                on,
                format!(
                    "victim chase p50 {:.1} ns beside {beside} / {:.1} ns alone; {first}",
                    x.lat_together_ns, x.lat_alone_ns
                ),
                x.from.clone(),
            )
            .noisy(c.lat_noisy.clone()),
        );
        out.push(
            Param::new(
                key(tv, ta, "bw"),
                x.bw_ratio,
                on,
                format!("victim CPUs' read bandwidth p50 {:.2} GB/s beside {beside} / {:.2} GB/s alone; {first}", x.bw_together_gbs, x.bw_alone_gbs),
                x.from.clone(),
            )
            .noisy(c.bw_noisy.clone()),
        );
    }
}
