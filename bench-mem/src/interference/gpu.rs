//! The `gpu` column of `mem.interference`: the GPU as aggressor, through the DMA
//! aggressor the runner hands the family ([`bench_core::dma`]; this crate never links a
//! GPU driver).
//!
//! For each memory target B, the aggressor part of B's region (the part the aggressor
//! CPUs stream in the CPU cells, grown to whole copies) is registered for the GPU's DMA;
//! for each direction (h2d: the GPU reads B; d2h: it writes B) the GPU copies back to
//! back alone (one loaded-latency point's time), then, for each victim target A, beside
//! the victim's chase on A and beside the victim crew reading A, the copies driven from
//! the first aggressor CPU. The victim's figures alone are the ones the CPU cells use.

use super::measure::{Rig, BATCH};
use super::record::{Cell, Column, Point, Run, Sampled};
use super::split::Tier;
use super::{Gpus, NAME};
use crate::chase::Chain;
use bench_core::bench::{NotRun, Options, Report};
use bench_core::dma::{DmaAggressor, DmaDir, DmaRate, DmaSession};
use bench_core::effort::Effort;
use bench_core::params::Skipped;
use bench_core::units::format_size;
use serde_json::json;
use std::sync::Arc;

/// The GPU as aggressor of a run.
#[derive(Debug, Clone)]
pub enum Dma {
    /// A device was found: its copies are the `gpu` column.
    Found(Arc<dyn DmaAggressor>),
    /// A plan for another machine (`--sysfs`) whose PCI bus shows this many NVIDIA
    /// GPUs: priced as if one were found, never measured.
    Planned(usize),
    /// No GPU can be used: why.
    Absent(String),
}

impl Dma {
    /// What `opts` offers: the runner's probe on this machine, the PCI bus of the
    /// `--sysfs` tree for another; `gpus` is what the PCI bus showed.
    pub fn of(opts: &Options, gpus: &Gpus) -> Dma {
        if opts.sysfs.is_some() {
            return match gpus {
                Ok(n) if *n > 0 => Dma::Planned(*n),
                _ => Dma::Absent(absent_reason(gpus, None)),
            };
        }
        match &opts.dma {
            None => Dma::Absent(absent_reason(gpus, None)),
            Some(p) => p
                .find()
                .map_or_else(|e| Dma::Absent(absent_reason(gpus, Some(&e))), Dma::Found),
        }
    }

    /// Bytes of each copy, where the GPU is (or is planned as) an aggressor.
    pub fn copy_bytes(&self, effort: &Effort) -> Option<usize> {
        match self {
            Dma::Found(d) => Some(d.copy_bytes(effort)),
            Dma::Planned(_) => Some(effort.gpu.contention_bytes),
            Dma::Absent(_) => None,
        }
    }

    /// Device memory the GPU's copies take (on the GPU, not the host).
    pub fn device_bytes(&self, effort: &Effort) -> Option<usize> {
        match self {
            Dma::Found(d) => Some(d.device_bytes(effort)),
            Dma::Planned(_) => Some(effort.gpu.contention_bytes),
            Dma::Absent(_) => None,
        }
    }

    /// The `skipped` entry of a column that is not measured; `None` for a found GPU.
    pub fn skipped(&self) -> Option<Skipped> {
        let reason = match self {
            Dma::Found(_) => return None,
            Dma::Planned(n) => format!("planned for another machine ({n} NVIDIA GPU(s) on its PCI bus): the GPU column is measured only where the run finds the GPU through its driver"),
            Dma::Absent(why) => why.clone(),
        };
        Some(Skipped {
            benchmark: NAME.into(),
            target: "gpu".into(),
            reason,
        })
    }
}

/// Why the `gpu` column is not measured, from the PCI bus's GPUs and the driver's error
/// (`None`: no driver probe is built in).
pub fn absent_reason(gpus: &Gpus, driver: Option<&str>) -> String {
    let driver = match driver {
        Some(e) => format!("the CUDA driver: {e}"),
        None => "this build has no GPU driver probe".to_string(),
    };
    match gpus {
        Ok(0) => format!("no GPU: no NVIDIA GPU on the PCI bus ({driver}), so the matrix has no `gpu` aggressor"),
        Ok(n) => format!("{n} NVIDIA GPU(s) on the PCI bus, but the GPU cannot be used as aggressor: {driver}"),
        Err(e) => format!("GPUs not probed on the PCI bus ({e}) and none found through the driver ({driver}), so the matrix has no `gpu` aggressor"),
    }
}

/// A point's reason, as a `skipped` entry says it.
fn why(e: NotRun) -> String {
    match e {
        NotRun::Skipped { reason } => reason,
        NotRun::Failed(e) => e.to_string(),
    }
}

/// `len` bytes at `base`, the aggressor part of a placed region.
///
/// # Safety
/// `[base, base + len)` lies in a region the run holds for the returned lifetime, and
/// nothing else touches it meanwhile (the aggressor CPUs are idle in the GPU cells; the
/// victim works on its own slices and chase span).
unsafe fn part<'r>(base: usize, len: usize) -> &'r mut [u8] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(base as *mut u8, len) }
}

impl Run<'_> {
    /// The GPU's column name for target `b` (`gpu:0 on anon`).
    pub(super) fn gpu_name(&self, b: usize) -> String {
        let gpu = match &self.bench.dma {
            Dma::Found(d) => d.name(),
            _ => "gpu".into(),
        };
        format!("{gpu} on {}", self.name(b))
    }

    /// The cells of the `gpu` column, or none with the reason in `skipped`.
    pub(super) fn gpu_column(
        &self,
        rig: &mut Rig<'_>,
        rep: &mut Report,
        chains: &[Chain<'_>],
        alone: &[(Point, Point)],
    ) -> Vec<Cell> {
        let dev = match &self.bench.dma {
            Dma::Found(d) => d.clone(),
            other => {
                rep.skipped.extend(other.skipped());
                return Vec::new();
            }
        };
        let mut cells = Vec::new();
        for b in 0..self.bench.targets.len() {
            let on = GpuOn {
                dev: &*dev,
                b,
                chains,
                alone,
            };
            if let Err(reason) = self.gpu_on(&on, rig, rep, &mut cells) {
                rep.skipped.push(Skipped {
                    benchmark: NAME.into(),
                    target: self.gpu_name(b),
                    reason,
                });
            }
        }
        cells
    }

    /// The GPU's copies of target `on.b`'s aggressor part, alone and beside each victim.
    fn gpu_on(
        &self,
        on: &GpuOn<'_, '_>,
        rig: &mut Rig<'_>,
        rep: &mut Report,
        cells: &mut Vec<Cell>,
    ) -> Result<(), String> {
        let b = on.b;
        let len = self.layouts[b].aggressor_part;
        // SAFETY: the aggressor part of b's region, held by the run until every point is
        // done; the aggressor CPUs are idle from here on and the victim streams only its
        // own slices and chase span.
        let host = unsafe { part(self.aggressor(b).base, len) };
        let mut s = on.dev.attach(host, self.ctx.effort)?;
        self.ctx.point_done();
        let how = s.describe();
        let cpu = self.split.aggressor[0];
        for dir in DmaDir::ALL {
            let window = self.ctx.effort.mem.loaded_point;
            let r = s.copy_beside(dir, cpu, &mut || std::thread::sleep(window))?;
            self.ctx.point_done();
            let id = format!(
                "{NAME}/aggressor/{}/{}/{}/alone/bw",
                on.dev.name(),
                self.name(b),
                dir.name()
            );
            let with = format!(
                "alone (the victim and aggressor CPUs idle) for {} ms",
                window.as_millis()
            );
            let g_alone = self.gpu_point(rep, on, (None, dir), (id, &with, &how), &r)?;
            for (a, chain) in on.chains.iter().enumerate() {
                let cell =
                    self.gpu_cell((rig, rep, &mut *s), on, (a, chain, dir), (&g_alone, &how))?;
                match cell {
                    Ok(c) => cells.push(c),
                    Err(reason) => rep.skipped.push(Skipped {
                        benchmark: NAME.into(),
                        target: format!("{} under {}", self.name(a), self.gpu_name(b)),
                        reason,
                    }),
                }
            }
        }
        Ok(())
    }

    /// Victim `a` beside the GPU's copies in `dir` on `on.b`: its chase, its crew, and the
    /// GPU's bandwidth beside each; the cell (or why it has no ratio).
    fn gpu_cell(
        &self,
        (rig, rep, s): (&mut Rig<'_>, &mut Report, &mut dyn DmaSession),
        on: &GpuOn<'_, '_>,
        (a, chain, dir): (usize, &Chain<'_>, DmaDir),
        (g_alone, how): (&Point, &str),
    ) -> Result<Result<Cell, String>, String> {
        let (b, gpu) = (on.b, on.dev.name());
        let head = format!(
            "{NAME}/{}/under/{gpu}/{}/{}",
            self.name(a),
            self.name(b),
            dir.name()
        );
        let cpu = self.split.aggressor[0];
        let copies = format!(
            "the GPU {} {} back to back ({how}), driven from CPU {cpu}",
            dir.verb(),
            self.name(b)
        );
        let (l, _) = rig
            .latency_beside_dma(chain, s, dir)
            .map_err(|e| e.reason)?;
        self.ctx.point_done();
        let mut p = self.gpu_parameters(Some(a), b, dir, on.dev);
        p["chase"] = chain.describe();
        p["aggressor_bw_gbs"] = json!(l.aggressor_gbs);
        let lat = self.record(rep, Sampled {
            id: format!("{head}/lat"),
            on: a,
            unit: "ns",
            samples: &l.batches,
            method: format!("distribution: means of {BATCH}-load dependent chase batches on CPU {} over {} touched of the victim target (ns per load, timer overhead subtracted), while {copies} (its bandwidth beside the chase: aggressor_bw_gbs); retried while the chase was disturbed", self.split.victim[0], format_size(self.layouts[a].touched)),
            noisy: l.noisy,
            counters: Some(l.counters),
            parameters: p,
        }).map_err(why)?;
        let (w, g) = rig
            .bandwidth_beside_dma(self.victim(a), s, dir)
            .map_err(|e| e.reason)?;
        self.ctx.point_done();
        let mut p = self.gpu_parameters(Some(a), b, dir, on.dev);
        p["crew"] = w.crew.clone();
        let v = self.record(rep, Sampled {
            id: format!("{head}/bw"),
            on: a,
            unit: "GB/s",
            samples: &w.victim,
            method: format!("the victim CPUs {:?} each read their own {} slice of {} (vector loads) while {copies}; sample = a window's sum of the threads' own rates (GB = 1e9 B), every used window of the crew (the undisturbed ones, else all, flagged noisy)", self.split.victim, format_size(self.layouts[a].victim_each), self.name(a)),
            noisy: w.noisy,
            counters: Some(w.counters),
            parameters: p,
        }).map_err(why)?;
        let with = format!(
            "while the victim CPUs {:?} read {}",
            self.split.victim,
            self.name(a)
        );
        let gt = self.gpu_point(
            rep,
            on,
            (Some(a), dir),
            (format!("{head}/aggressor-bw"), &with, how),
            &g,
        )?;
        let al = [&on.alone[a].0, &on.alone[a].1, g_alone];
        Ok(self.cell((a, Column::Gpu(b, dir)), al, &[lat, v, gt], l.aggressor_gbs))
    }

    /// Records the GPU's copies `r` in `dir` on `on.b`, beside victim `a` (if any).
    fn gpu_point(
        &self,
        rep: &mut Report,
        on: &GpuOn<'_, '_>,
        (a, dir): (Option<usize>, DmaDir),
        (id, with, how): (String, &str, &str),
        r: &DmaRate,
    ) -> Result<Point, String> {
        let b = on.b;
        let mut p = self.gpu_parameters(a, b, dir, on.dev);
        p["gpu_moved_bytes"] = json!(r.bytes);
        p["gpu_timed_ns"] = json!(r.timed_ns);
        p["gpu_aggregate_gbs"] = json!(r.aggregate_gbs());
        self.record(rep, Sampled {
            id,
            on: b,
            unit: "GB/s",
            samples: &r.batch_gbs,
            method: format!("the GPU's bandwidth {with}: {how}; the GPU {} the {} aggressor part of {}; sample = one event-timed batch (its bytes / its CUDA event time)", dir.verb(), format_size(self.layouts[b].aggressor_part), self.name(b)),
            noisy: None,
            counters: None,
            parameters: p,
        })
        .map_err(why)
    }

    /// The parameters of a GPU point: victim `a` (if any), the GPU copying `dir` on `b`,
    /// and the device's own (its name, PCI address, driver).
    fn gpu_parameters(
        &self,
        a: Option<usize>,
        b: usize,
        dir: DmaDir,
        dev: &dyn DmaAggressor,
    ) -> serde_json::Value {
        let mut p = self.parameters(a, None);
        p["aggressor"] = json!(self.gpu_name(b));
        p["aggressor_tier"] = json!(Tier::Gpu.name());
        p["aggressor_target"] = json!(self.name(b));
        p["mix"] = json!(dir.name());
        p["gpu_part_bytes"] = json!(self.layouts[b].aggressor_part);
        p["gpu_copy_cpu"] = json!(self.split.aggressor[0]);
        if let (Some(o), serde_json::Value::Object(d)) = (p.as_object_mut(), dev.parameters()) {
            for (k, v) in d {
                o.entry(k).or_insert(v);
            }
        }
        p
    }
}

/// What the GPU cells of one target share.
struct GpuOn<'a, 'c> {
    dev: &'a dyn DmaAggressor,
    b: usize,
    chains: &'a [Chain<'c>],
    alone: &'a [(Point, Point)],
}
