//! `cxlchar plot params.json --out DIR`: SVG charts of a params.json (plotters, SVG
//! backend; text is laid out with plotters' built-in estimate and drawn by the viewer's
//! fonts, so no font or image library is needed).
//!
//! Every chart renders to an SVG document in memory ([`charts`]): `plot` writes each to
//! its file (atomically), `cxlchar report` ([`crate::report`]) inlines them in its page.
//! plotters escapes the text it draws (`<`, `&`, quotes), so a label taken from the file
//! cannot inject markup.
//!
//! The file is read by the consumers' loader ([`crate::document::load`]); each chart
//! reads its measurements' parameters by their registered names
//! ([`bench_core::keys::parameters`]). Charts, each drawn only when its measurements are
//! in the file, one module each:
//! * `latency.svg` ([`latency`]): `mem.latency` p50 vs working-set size per target and
//!   order (log x, log y), with the cache sizes of `environment.topology.caches` marked;
//! * `bandwidth.svg` and `bandwidth-kernels.svg` ([`bandwidth`]): `mem.bandwidth*` p50 vs
//!   size of each size sweep (the 1-thread read sweep), and per kernel with 1 thread and
//!   all threads at the DRAM footprint as grouped bars ([`bars`]);
//! * `copy-threshold.svg` ([`copy_threshold`]): `mem.copy-threshold*` all-to-all copy
//!   bandwidth vs block size per method (temporal, NT, hybrid) and thread count;
//! * `alltoall-order.svg` ([`alltoall_order`]): `mem.alltoall-order*` all-to-all
//!   bandwidth vs block size per copy order, method and thread count;
//! * `loaded-latency.svg` ([`loaded`]): `mem.loaded*` latency vs injected bandwidth (or
//!   injection delay), one curve per (target, traffic mix), p50 solid and p99 dashed;
//! * `flush.svg` ([`flush`]): `pool.flush*` cost vs size per method (the flush-cost matrix
//!   as lines);
//! * `c2c-<kind>.svg` ([`c2c`]): `pool.c2c*` core-to-core p50 as a heatmap;
//! * `numa-latency.svg`, `numa-bandwidth.svg` ([`numa`]): the `mem.matrix` NUMA node
//!   matrices (`numa_matrix`), CPU node x memory node heatmaps.
//! * `scan-<target>.svg` ([`scan`]): `mem.scan` bandwidth of each range by its address,
//!   per kernel, with the median, the slow ranges and each change of backing marked;
//! * `interference-<lat|bw>-<mix>.svg` ([`interference`]): the `mem.interference`
//!   matrix (`interference`), victim target x aggressor target heatmaps of the ratios
//!   together / alone, per aggressor traffic mix.
//! * `gpu-bw.svg` and `gpu-contention.svg` ([`gpu`]): GPU copy bandwidth vs copy size per
//!   host memory and direction, and k concurrent copies' bandwidth vs k.
//!
//! Readability rules every chart follows: the legend right of the plot area (never over
//! data), tick and legend labels of at least 13 px, sizes in binary units, a log axis
//! where the values span a decade or more, every cache level marked.
//!
//! Of a fleet file: `pairs-<key>.svg` ([`pairs`]), each pair matrix as a host x host
//! heatmap (the one heatmap renderer, [`heatmap`], draws both kinds).

mod alltoall_order;
mod bandwidth;
mod bars;
mod c2c;
mod copy_threshold;
mod data;
mod flush;
mod gpu;
mod heatmap;
mod interference;
mod latency;
mod lines;
mod loaded;
pub(crate) mod numa;
pub mod pairs;
mod scan;
#[cfg(test)]
pub(crate) mod tests;
mod ticks;

use anyhow::{Context, Result};
use bench_core::keys::parameters::KIND;
use bench_core::params::{Measurement, ParamsFile};
use std::path::{Path, PathBuf};

use crate::document::load::Input;

/// Reads a params.json or a fleet file.
pub fn load(path: &Path) -> Result<Input> {
    crate::document::load::load_any(path)
}

/// What `plot` draws: a params.json's charts or a fleet file's pair heatmaps.
pub trait Drawable {
    /// Every chart, drawn or with its note.
    fn charts(&self) -> Result<Vec<Chart>>;
}

impl Drawable for ParamsFile {
    fn charts(&self) -> Result<Vec<Chart>> {
        charts(self)
    }
}

impl Drawable for Input {
    fn charts(&self) -> Result<Vec<Chart>> {
        match self {
            Input::Params(p) => charts(p),
            Input::Fleet(f) => pairs::charts(f),
        }
    }
}

/// One chart of a params.json, rendered in memory.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name under `plot --out` (`latency.svg`).
    pub file: String,
    /// The benchmark family it draws (`mem.latency`).
    pub family: String,
    /// What was measured and how it is drawn, with the methods the measurements record.
    pub caption: String,
    /// The SVG document; `None` when nothing was drawn.
    pub svg: Option<String>,
    /// Why nothing was drawn (empty when drawn).
    pub note: String,
}

impl Chart {
    /// The caption's first clause as one sentence (what the chart shows), for the line
    /// under the chart; the whole caption and the methods go in its details.
    pub fn summary(&self) -> String {
        let mut depth = 0i32;
        let mut end = self.caption.len();
        let b = self.caption.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'(' => depth += 1,
                b')' => depth -= 1,
                b';' | b'.' if depth == 0 && b.get(i + 1).is_none_or(|n| *n == b' ') => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        format!("{}.", self.caption[..end].trim_end())
    }
}

/// What `plot` did.
#[derive(Debug, Default)]
pub struct PlotOutcome {
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Charts not drawn, with why.
    pub skipped: Vec<String>,
}

/// How many distinct methods a caption lists before it counts the rest.
const METHODS_LISTED: usize = 3;

/// "N measurements; method: A | B (+k more)".
fn measured(ms: &[&Measurement]) -> String {
    let mut methods: Vec<&str> = ms.iter().map(|m| m.method.as_str()).collect();
    methods.sort_unstable();
    methods.dedup();
    let more = methods.len().saturating_sub(METHODS_LISTED);
    let mut s = format!(
        "{} measurement(s); method as recorded: {}",
        ms.len(),
        methods[..methods.len().min(METHODS_LISTED)].join(" | ")
    );
    if more > 0 {
        s.push_str(&format!(" (+{more} more)"));
    }
    s
}

/// The charts drawn so far, in the order they are drawn.
struct Charts {
    out: Vec<Chart>,
}

impl Charts {
    /// Draws one chart of `ms` with `render`, or records why it is not drawn: no
    /// measurements, or measurements without the parameters to plot.
    fn emit(
        &mut self,
        file: &str,
        family: &str,
        what: &str,
        ms: &[&Measurement],
        render: &dyn Fn() -> Result<Option<String>>,
    ) -> Result<()> {
        let (svg, note) = if ms.is_empty() {
            (None, format!("no {family} measurements in this file"))
        } else {
            match render().with_context(|| format!("drawing {file}"))? {
                Some(svg) => (Some(svg), String::new()),
                None => (
                    None,
                    format!("the {family} measurements lack the parameters to plot"),
                ),
            }
        };
        let caption = if ms.is_empty() {
            what.to_string()
        } else {
            format!("{what} {}.", measured(ms))
        };
        self.out.push(Chart {
            file: file.into(),
            family: family.into(),
            caption,
            svg,
            note,
        });
        Ok(())
    }

    /// The size-swept memory charts (latency, bandwidth, copy threshold, all-to-all
    /// order), each with the cache sizes `caches` marked.
    fn memory(&mut self, f: &ParamsFile, caches: &[(f64, String)]) -> Result<()> {
        let marked = "Grey verticals: the data and unified cache sizes of the environment.";

        let lat = data::family(f, "mem.latency");
        self.emit(
            "latency.svg",
            "mem.latency",
            &format!(
                "mem.latency: p50 load-to-use latency (ns per load of a dependent pointer \
                 chase) vs working-set size, one curve per target and chase order; log-log. \
                 {marked}"
            ),
            &lat,
            &|| latency::render(&lat, caches),
        )?;

        self.bandwidth(f, caches, marked)?;

        let ct = data::family(f, "mem.copy-threshold");
        self.emit(
            "copy-threshold.svg",
            "mem.copy-threshold",
            &format!(
                "mem.copy-threshold: p50 all-to-all copy bandwidth (bytes read + written) vs \
                 block size, per copy method (temporal, non-temporal, hybrid) and thread count \
                 P. {marked}"
            ),
            &ct,
            &|| copy_threshold::render(&ct, caches),
        )?;

        let ao = data::family(f, "mem.alltoall-order");
        self.emit(
            "alltoall-order.svg",
            "mem.alltoall-order",
            &format!(
                "mem.alltoall-order: p50 all-to-all bandwidth vs block size per copy order \
                 (row-wise, column-wise, Hilbert), method and thread count P. {marked}"
            ),
            &ao,
            &|| alltoall_order::render(&ao, caches),
        )
    }

    /// The bandwidth charts ([`bandwidth`]): the size sweeps, and each kernel's figure
    /// with 1 thread and all threads at the DRAM footprint.
    fn bandwidth(&mut self, f: &ParamsFile, caches: &[(f64, String)], marked: &str) -> Result<()> {
        let bw = data::family(f, "mem.bandwidth");
        let split = bandwidth::split(f, &bw);
        self.emit_part(
            "bandwidth.svg",
            "mem.bandwidth",
            &format!(
                "mem.bandwidth: p50 bandwidth vs working-set size of each kernel, thread count \
                 and target measured at several sizes (the 1-thread read sweep through the \
                 cache levels to DRAM); GB/s, GB = 1e9 B, copies count bytes read + written; \
                 the DRAM check's points are drawn with their sweep, a size measured more than \
                 once at the mean of its passes; the kernels measured at one footprint are in \
                 bandwidth-kernels.svg. {marked}"
            ),
            (&bw, &split.sweeps),
            "no mem.bandwidth kernel was measured at several sizes (each is a bar of \
             bandwidth-kernels.svg)",
            &|| bandwidth::render_sweeps(&split.sweeps, caches),
        )?;
        self.emit_part(
            "bandwidth-kernels.svg",
            "mem.bandwidth",
            "mem.bandwidth: p50 bandwidth of each kernel with 1 thread and with all threads \
             at the DRAM footprint, one bar per thread count and target; each bar the point \
             its key reports (mem_bw_1t_gbs, mem_bw_gbs, mem_write_bw_gbs, ...), else the \
             kernel's one size; GB/s, GB = 1e9 B, copies count bytes read + written; the \
             bulk-synchronous figures (/bulk-sync) are in the measurements.",
            (&bw, &split.kernels),
            "no mem.bandwidth kernel was measured at one footprint (each was swept over sizes: \
             bandwidth.svg)",
            &|| bandwidth::render_kernels(&split.kernels, split.reported),
        )
    }

    /// [`Charts::emit`] of a part `ms` of a family's measurements `all`: when the family
    /// has measurements but none for this chart, the note is `none`.
    fn emit_part(
        &mut self,
        file: &str,
        family: &str,
        what: &str,
        (all, ms): (&[&Measurement], &[&Measurement]),
        none: &str,
        render: &dyn Fn() -> Result<Option<String>>,
    ) -> Result<()> {
        if all.is_empty() || !ms.is_empty() {
            return self.emit(file, family, what, ms, render);
        }
        self.out.push(Chart {
            file: file.into(),
            family: family.into(),
            caption: what.to_string(),
            svg: None,
            note: none.into(),
        });
        Ok(())
    }

    /// The loaded-latency chart: chase latency vs injected bandwidth (or delay).
    fn loaded(&mut self, f: &ParamsFile) -> Result<()> {
        let ld: Vec<&Measurement> = data::family(f, "mem.loaded")
            .into_iter()
            .filter(|m| m.unit == "ns")
            .collect();
        let ld_what = if ld.is_empty() {
            "mem.loaded: chase latency under injected memory traffic.".to_string()
        } else {
            format!(
                "mem.loaded: latency per load of a dependent chase on one CPU while the other \
                 CPUs inject memory traffic of the named mix, vs {}; one curve per (target, \
                 mix). Solid: p50; dashed: p99, from {}.",
                if loaded::by_bandwidth(&ld) {
                    "the bandwidth the traffic threads moved (injected_bw_gbs: bytes loaded + \
                     stored / time, GB = 1e9 B, the chase and RFO reads not counted)"
                } else {
                    "the injection delay (no point records its bandwidth)"
                },
                loaded::p99_source(&ld)
            )
        };
        self.emit("loaded-latency.svg", "mem.loaded", &ld_what, &ld, &|| {
            loaded::render(&ld)
        })
    }

    /// The GPU charts: copy bandwidth vs size, and concurrent copies (drawn only when the
    /// file has GPU measurements: most machines have no GPU).
    fn gpu(&mut self, f: &ParamsFile) -> Result<()> {
        let all: Vec<&Measurement> =
            [data::family(f, "gpu.bw"), data::family(f, "gpu.pool")].concat();
        if all.is_empty() {
            return Ok(());
        }
        let sweep: Vec<&Measurement> = all.iter().copied().filter(|m| gpu::is_sweep(m)).collect();
        self.emit(
            "gpu-bw.svg",
            "gpu",
            "gpu.bw and gpu.pool: p50 copy bandwidth between host memory and each GPU vs \
             bytes per copy, one curve per GPU, host memory (pinned, pageable, a target \
             registered with cuMemHostRegister) and direction; GB = 1e9 B, event-timed \
             points where the run has them.",
            &sweep,
            &|| gpu::render_sweep(&sweep),
        )?;
        let cont: Vec<&Measurement> = all
            .iter()
            .copied()
            .filter(|m| gpu::is_contention(m))
            .collect();
        self.emit(
            "gpu-contention.svg",
            "gpu.pool",
            "gpu.pool contention: p50 bandwidth of k concurrent copies (one stream each) \
             between a target and a GPU, per copy and aggregate, vs k; per-copy times k \
             above the aggregate means the copies did not overlap.",
            &cont,
            &|| gpu::render_contention(&cont),
        )
    }

    /// Core-to-core heatmaps, one per kind (one empty chart when there is none).
    fn c2c(&mut self, f: &ParamsFile) -> Result<()> {
        let cc = data::family(f, "pool.c2c");
        let kind_of = |m: &Measurement| data::text(m, KIND).unwrap_or_else(|| "c2c".into());
        let mut kinds: Vec<String> = cc.iter().map(|m| kind_of(m)).collect();
        kinds.sort();
        kinds.dedup();
        if kinds.is_empty() {
            self.emit(
                "c2c.svg",
                "pool.c2c",
                "pool.c2c: core-to-core one-way latency per CPU pair.",
                &[],
                &|| Ok(None),
            )?;
        }
        for kind in kinds {
            let ms: Vec<&Measurement> = cc.iter().copied().filter(|m| kind_of(m) == kind).collect();
            let file = format!(
                "c2c-{}.svg",
                kind.replace(|c: char| !c.is_alphanumeric(), "_")
            );
            self.emit(
                &file,
                "pool.c2c",
                &format!(
                    "pool.c2c ({kind}): p50 core-to-core latency per CPU pair (cpu a row, cpu \
                     b column; a pair measured once is shown in both halves), light low to \
                     dark red high, hatched grey not measured."
                ),
                &ms,
                &|| c2c::render_heatmap(&kind, &ms),
            )?;
        }
        Ok(())
    }

    /// The scan's strip charts, one per target (drawn only when the file has a scan).
    fn scan(&mut self, f: &ParamsFile) -> Result<()> {
        let ms = data::family(f, "mem.scan");
        for target in scan::targets(&ms) {
            let mine: Vec<&Measurement> =
                ms.iter().copied().filter(|m| m.target == target).collect();
            let file = format!(
                "scan-{}.svg",
                target.replace(|c: char| !c.is_alphanumeric(), "_")
            );
            self.emit(
                &file,
                "mem.scan",
                &format!(
                    "mem.scan on {target}: p50 bandwidth of each range of the scanned region \
                     (the crew's windows over all the scan's CPUs; GB = 1e9 B) by its place in \
                     the region, one curve per kernel, its median dashed; labelled verticals \
                     mark the slow ranges (slower than the median by more than the run's \
                     noise) and each change of what backs the ranges (node, CXL region and \
                     memdevs, DIMM: params.json's scan.ranges names every range's backing)."
                ),
                &mine,
                &|| scan::render(&mine, &target),
            )?;
        }
        Ok(())
    }

    /// The NUMA node matrices: latency and bandwidth heatmaps of `numa_matrix`.
    fn numa(&mut self, f: &ParamsFile) -> Result<()> {
        let mx = data::family(f, "mem.matrix");
        let m = f.numa_matrix.as_ref();
        for (file, fig, what) in [
            (
                "numa-latency.svg",
                numa::Figure::Latency,
                "mem.matrix: p50 idle load latency (ns per load of a dependent chase from the \
                 first CPU of the row's node) from each CPU node (row) to each memory node \
                 (column), light low to dark red high, hatched grey not measured.",
            ),
            (
                "numa-bandwidth.svg",
                numa::Figure::Bandwidth,
                "mem.matrix: p50 read bandwidth (GB/s, GB = 1e9 B) of all the row node's CPUs \
                 from each memory node (column), light low to dark red high, hatched grey not \
                 measured.",
            ),
        ] {
            self.emit(file, "mem.matrix", what, &mx, &|| numa::render(m, fig))?;
        }
        Ok(())
    }
}

impl Charts {
    /// The interference matrix: a latency and a bandwidth ratio heatmap per mix of
    /// `interference` (the read mix's names when there is none).
    fn interference(&mut self, f: &ParamsFile) -> Result<()> {
        let ms = data::family(f, "mem.interference");
        let m = f.interference.as_ref();
        let mixes = match m {
            Some(m) if !m.mixes.is_empty() => m.mixes.clone(),
            _ => vec!["read".to_string()],
        };
        for mix in &mixes {
            for fig in [
                interference::Figure::Latency,
                interference::Figure::Bandwidth,
            ] {
                let file = format!(
                    "interference-{}-{}.svg",
                    fig.name(),
                    mix.replace(|c: char| !c.is_alphanumeric(), "_")
                );
                let gpu = m.is_some_and(|m| {
                    m.cells
                        .iter()
                        .any(|c| &c.mix == mix && c.aggressor_tier == "gpu")
                });
                let what = match fig {
                    interference::Figure::Latency if gpu => format!(
                        "mem.interference (the GPU's {mix} copies): the victim's chase latency while the GPU copies to or from the column's target back to back / alone, for each victim target (row) and target the GPU copies (column); above 1 slower, light low to dark red high, hatched grey not measured."
                    ),
                    interference::Figure::Bandwidth if gpu => format!(
                        "mem.interference (the GPU's {mix} copies): the victim CPUs' read bandwidth while the GPU copies to or from the column's target back to back / alone, victim target (row) x target the GPU copies (column); below 1 less, light low to dark red high, hatched grey not measured."
                    ),
                    interference::Figure::Latency => format!(
                        "mem.interference ({mix} aggressors): the victim's chase latency while the aggressor CPUs stream the column's target / alone, for each victim target (row) and aggressor target (column), each labelled with its tier; above 1 slower, light low to dark red high, hatched grey not measured."
                    ),
                    interference::Figure::Bandwidth => format!(
                        "mem.interference ({mix} aggressors): the victim CPUs' read bandwidth while the aggressor CPUs stream the column's target / alone, victim target (row) x aggressor target (column); below 1 less, light low to dark red high, hatched grey not measured."
                    ),
                };
                self.emit(&file, "mem.interference", &what, &ms, &|| {
                    interference::render(m, fig, mix)
                })?;
            }
        }
        Ok(())
    }
}

/// Renders every chart of `f`; a chart whose measurements are absent (or lack the
/// parameters to plot) has `svg: None` and a note saying so.
pub fn charts(f: &ParamsFile) -> Result<Vec<Chart>> {
    let mut c = Charts { out: vec![] };
    let caches = data::cache_marks(f);
    c.memory(f, &caches)?;
    c.loaded(f)?;
    let fl = data::family(f, "pool.flush");
    c.emit(
        "flush.svg",
        "pool.flush",
        "pool.flush: p50 cost of writing and flushing a buffer vs its size, per flush \
         method and target (the flush-cost matrix as lines); log-log.",
        &fl,
        &|| flush::render(&fl),
    )?;
    c.c2c(f)?;
    c.numa(f)?;
    c.scan(f)?;
    c.interference(f)?;
    c.gpu(f)?;
    Ok(c.out)
}

/// Draws every chart whose data is in `f` into `dir`, one SVG file each (written
/// atomically).
pub fn plot(f: &(impl Drawable + ?Sized), dir: &Path) -> Result<PlotOutcome> {
    let charts = f.charts()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = PlotOutcome::default();
    for c in charts {
        match &c.svg {
            Some(svg) => {
                let p = dir.join(&c.file);
                crate::document::write::write_atomic(&p, svg)?;
                out.written.push(p);
            }
            None => out.skipped.push(format!("{}: {}", c.file, c.note)),
        }
    }
    Ok(out)
}
