//! `gpu.pool`: DMA between a GPU and a cxlchar memory target (seed 003, CCCL Sec. 2.3):
//! the target's region is registered with `cuMemHostRegister` (page-locked, mapped for
//! DMA, as CCCL registers its dax mapping with `cudaHostRegister`), then
//!
//! * a bandwidth sweep 4 KiB .. 1 GiB (quick: .. 64 MiB), both directions, timed with
//!   CUDA events and with the host cycle timer;
//! * contention: k = 1, 2, 4, 8 concurrent copies on k streams of one GPU, each to its
//!   own range of the same target, all released together by a gate, in each direction
//!   and half each way at once (k even): per-transfer bandwidth from the common start,
//!   aggregate, each transfer's share, the completion order and whether the device
//!   interleaved them or ran them in turn; with several GPUs (and no `--device`), one
//!   copy on each GPU at once, timed on the host timer;
//! * CPU agents beside the GPU ([`with_cpu`]): the CPUs after the first stream one part
//!   of the region while one stream copies through another, each side alone and both at
//!   once, in each direction.
//!
//! Params (unqualified names as the benchmark reports them; the runner renames them
//! `gpu_pool_*` on far memory, as it renames `mem_lat_ns` to `cxl_lat_ns`):
//! `gpu_reg_{h2d,d2h}_bw_gbs`, `gpu_reg_{dir}_k{k}_bw_gbs`, `gpu_reg_{dir}_k{k}_agg_bw_gbs`,
//! `gpu_reg_{dir}_share_min_ratio`, `gpu_reg_mixed_{dir}_k{k}_bw_gbs`,
//! `gpu_reg_mixed_k{k}_agg_bw_gbs`, `gpu_reg_{dir}_beside_cpu_{bw_gbs,ratio}` and
//! `gpu_reg_cpu_beside_{dir}_{bw_gbs,ratio}`.

use crate::config::{GpuConfig, GpuPart};
use crate::contention::{contention_report, ContentionPoint, Flow};
use crate::copy::{self, SweepPlan};
use crate::cuda::{CudaError, Device, DeviceBuffer, Dir, HostSpan, Registration};
use crate::discovery::probe;
use crate::shape::{split_fitting, sweep_report, Labels, SweepPoint, Timing};
use crate::with_cpu::{self, with_cpu_report, CpuSide, GpuSide, WithCpuPlan, WithCpuPoint};
use bench_core::bench::{Benchmark, Context, Input, NotRun, Report, Requirements, Skip};
use bench_core::kernels::{Isa, IsaSet};
use bench_core::memory::budget::Need;
use bench_core::memory::{OnMemory, TargetSpec};
use bench_core::params::Skipped;
use bench_core::plan::Cost;
use bench_core::units::{format_size, human_bytes};

/// Key prefix of this benchmark's params (`gpu_pool_` on far memory, see the module).
pub const KEY_PREFIX: &str = "gpu_reg";

/// GPU <-> memory-target DMA bandwidth and contention.
#[derive(Debug, Clone)]
pub struct GpuPoolBench {
    /// Sizes, streams, device.
    pub config: GpuConfig,
    /// GPUs present (sizes the region for the multi-GPU test; the runner sets it from
    /// discovery, 1 when unknown).
    pub gpus: usize,
}

impl Default for GpuPoolBench {
    fn default() -> Self {
        GpuPoolBench {
            config: GpuConfig::default(),
            gpus: 1,
        }
    }
}

/// The parts of the region the CPU-agents test uses, and how they were sized.
#[derive(Debug, Clone)]
struct WithCpuParts {
    /// The agents' CPUs: every CPU of the run after the first (which drives the GPU).
    agents: Vec<usize>,
    gpu_bytes: usize,
    cpu_bytes: usize,
    sizing: String,
}

impl GpuPoolBench {
    /// The GPU's and the agents' parts for the CPUs after the first (None with one CPU):
    /// each a streaming DRAM working set of the agents' CPUs on `target`.
    fn with_cpu_parts(&self, ctx: &Context, target: &impl OnMemory) -> Option<WithCpuParts> {
        let agents = ctx.cpus.get(1..).filter(|a| !a.is_empty())?;
        let (bytes, sizing) = ctx.dram_stream_bytes(target, agents);
        let (gpu_bytes, cpu_bytes) =
            with_cpu::part_bytes(bytes, self.config.contention_size(ctx.effort), agents.len());
        Some(WithCpuParts {
            agents: agents.to_vec(),
            gpu_bytes,
            cpu_bytes,
            sizing: sizing.explain(),
        })
    }

    fn multi_gpu(&self) -> usize {
        if self.config.device.is_some() {
            1
        } else {
            self.gpus.max(1)
        }
    }
}

/// GPU counts of the multi-GPU test: 2, 4, 8, ... below `n`, and `n`.
pub fn gpu_counts(n: usize) -> Vec<usize> {
    if n < 2 {
        return Vec::new();
    }
    let mut v: Vec<usize> = (1..).map(|i| 1usize << i).take_while(|&g| g < n).collect();
    v.push(n);
    v
}

impl Benchmark for GpuPoolBench {
    fn name(&self) -> &'static str {
        "gpu.pool"
    }

    fn requires(&self) -> Requirements {
        Requirements::default()
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        let base = self.config.target_bytes(ctx.effort, self.multi_gpu());
        self.with_cpu_parts(ctx, target)
            .map_or(base, |w| base.max(w.gpu_bytes + w.cpu_bytes))
    }

    /// The region the runner places and registers (page-locked where it lies, no copy of
    /// it): the sweep's largest copy, the contention's concurrent copies, or the CPU
    /// agents' part beside the GPU's, whichever is largest. Device buffers are the GPU's.
    fn memory(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let effort = ctx.effort;
        let largest = self.config.max_size(effort);
        let k = self
            .config
            .stream_counts()
            .last()
            .copied()
            .unwrap_or(1)
            .max(self.multi_gpu());
        let each = self.config.contention_size(effort);
        let region = self.region_bytes(ctx, target);
        let bytes = target.mapped_bytes(region, &ctx.topology);
        let (what, fit) = if region == largest {
            (
                "the sweep's largest copy".to_string(),
                Some(("--max-size", 1)),
            )
        } else if region == k.saturating_mul(each) {
            (
                format!("{k} concurrent copies of {}", human_bytes(each as u64)),
                Some(("--contention-size", k)),
            )
        } else {
            (
                "the CPU agents' streams beside the GPU's copies (their CPUs' DRAM working set)"
                    .to_string(),
                None,
            )
        };
        let need = Need::on_target(
            bytes,
            format!(
                "a {} region registered for DMA: {what}",
                human_bytes(bytes as u64)
            ),
        );
        match fit {
            Some((option, per_byte)) => need.with_fit(option, per_byte, 0),
            None => need,
        }
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let e = &ctx.plan.expect;
        let g = &ctx.effort.gpu;
        let gbs = e.gpu_copy_gbs;
        let mut c = Cost::new();
        c.extend(crate::cost::sweep_cost(
            ctx,
            &self.config.sizes(ctx.effort),
            gbs,
            "registered",
        ));
        let each = self.config.contention_size(ctx.effort);
        for flow in ["h2d", "d2h", "mixed"] {
            for k in self.config.stream_counts() {
                if flow == "mixed" && (k < 2 || k % 2 != 0) {
                    continue;
                }
                // Both directions at once use both copy engines.
                let g2 = if flow == "mixed" { 2.0 * gbs } else { gbs };
                c.add(
                    format!("{k} concurrent {flow} copies"),
                    1,
                    crate::cost::concurrent_s(ctx, k, each, g.contention_rounds, g2),
                );
            }
        }
        let n = self.multi_gpu();
        if n > 1 {
            c.add(
                format!("one copy on each of {n} GPUs"),
                1,
                crate::cost::concurrent_s(ctx, 1, each, g.contention_rounds, gbs),
            );
        }
        if self.with_cpu_parts(ctx, target).is_some() {
            let (window, rounds) = g.with_cpu;
            c.add(
                "CPU agents beside the GPU, both directions",
                2,
                3.0 * (rounds + 1) as f64 * window.as_secs_f64(),
            );
        }
        c
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let with_cpu = self.with_cpu_parts(ctx, region.origin());
        self.config
            .validate()
            .map_err(|e| Skip::new(e.to_string()))?;
        let inv = probe().map_err(|e| Skip::new(e.to_string()))?;
        let count = inv.devices.len();
        self.config
            .validate_device(count)
            .map_err(|e| Skip::new(e.to_string()))?;
        let d0 = self.config.device.unwrap_or(0);
        let info = &inv.devices[d0];
        let target = region.origin().to_string();
        let placement = region.placement().clone();
        let dev = Device::open(d0).map_err(|e| Skip::new(format!("GPU {d0}: {e}")))?;
        let len = region.len();
        let mut reg = Registration::of_region(&dev, region).map_err(|e| {
            Skip::new(format!(
                "{target} ({} region) cannot be registered for DMA: {e}",
                human_bytes(len as u64)
            ))
        })?;
        let (free, _) = dev
            .mem_info()
            .map_err(|e| Skip::new(format!("GPU {d0}: {e}")))?;
        let run = PoolRun {
            ctx,
            dev: &dev,
            host: reg.span(),
            target: &target,
            len,
            free,
            limit: (free / 10 * 9).min(len),
        };
        let labels = Labels {
            bench: self.name().into(),
            id_prefix: format!("gpu.pool/{target}/gpu:{d0}"),
            target: target.clone(),
            memory: format!("the {target} target registered with cuMemHostRegister"),
            parameters: {
                let mut p = info.parameters(&inv.driver_version);
                p["source"] = "registered".into();
                p
            },
            placement: Some(placement),
            host_timer: format!("{:?}", ctx.timer.source()),
        };
        let mut report = Report::default();
        let part_failed = |report: &mut Report, what: &str, e: CudaError| {
            report
                .skipped
                .push(run.skipped(format!("{what} on GPU {d0}: {e}")))
        };

        // Bandwidth sweep.
        let sweep = self
            .config
            .runs(GpuPart::Sweep)
            .then(|| run.sweep(&self.config, &mut report));
        match sweep {
            None => {}
            Some(Ok(points)) => {
                let (ms, ps) = sweep_report(&points, &labels, Some(KEY_PREFIX));
                report.measurements.extend(ms);
                report.params.extend(ps);
            }
            Some(Err(e)) => part_failed(&mut report, "bandwidth sweep", e),
        }
        // k streams on one GPU, then one copy on each of several GPUs.
        let mut points = Vec::new();
        if self.config.runs(GpuPart::Contention) {
            if let Err(e) = run.streams(&self.config, d0, &mut points, &mut report) {
                part_failed(&mut report, "stream contention", e);
            }
            let n = self.multi_gpu().min(count);
            if let Err(e) = run.devices(&self.config, n, &mut points) {
                part_failed(&mut report, "multi-GPU contention", e);
            }
        }
        let contention = Labels {
            id_prefix: format!("{}/contention", labels.id_prefix),
            ..labels.clone()
        };
        let (ms, ps, ws) = contention_report(&points, &contention, Some(KEY_PREFIX));
        report.measurements.extend(ms);
        report.params.extend(ps);
        report.warnings.extend(ws);
        // CPU agents and the GPU on the same target, each alone and together.
        let beside = self
            .config
            .runs(GpuPart::WithCpu)
            .then(|| run.with_cpu(&self.config, with_cpu.as_ref(), &mut report));
        match beside {
            None => {}
            Some(Ok(points)) => {
                let (ms, ps) = with_cpu_report(&points, &labels, Some(KEY_PREFIX));
                report.measurements.extend(ms);
                report.params.extend(ps);
            }
            Some(Err(e)) => part_failed(&mut report, "CPU agents beside the GPU", e),
        }
        drop(reg);
        Ok(crate::shape::finished(report)?)
    }
}

/// One run of `gpu.pool` on a registered region.
struct PoolRun<'a, 'd> {
    ctx: &'a Context,
    dev: &'d Device,
    host: HostSpan<'a>,
    target: &'a str,
    len: usize,
    free: usize,
    /// Largest footprint on both sides: the region, and 90% of free device memory.
    limit: usize,
}

impl PoolRun<'_, '_> {
    fn skipped(&self, reason: String) -> Skipped {
        Skipped {
            benchmark: "gpu.pool".into(),
            target: self.target.into(),
            reason,
        }
    }

    fn too_big(&self, what: String) -> Skipped {
        self.skipped(format!(
            "{what}: the region holds {}, {} of device memory free (90% usable)",
            human_bytes(self.len as u64),
            human_bytes(self.free as u64)
        ))
    }

    fn sweep(&self, config: &GpuConfig, report: &mut Report) -> Result<Vec<SweepPoint>, CudaError> {
        let (sizes, too_big) = split_fitting(&config.sizes(self.ctx.effort), self.limit);
        for s in too_big {
            report
                .skipped
                .push(self.too_big(format!("copies of {}", format_size(s))));
        }
        let Some(&max) = sizes.last() else {
            return Ok(Vec::new());
        };
        let buf = DeviceBuffer::new(self.dev, max)?;
        let mut points = Vec::new();
        for dir in Dir::ALL {
            points.extend(copy::sweep(
                self.dev,
                &buf,
                self.host,
                dir,
                &sizes,
                SweepPlan::new(self.ctx.effort),
                &self.ctx.timer,
                &|size| {
                    self.ctx.progress(&format!(
                        "gpu.pool on {}: {} {}",
                        self.target,
                        dir.name(),
                        format_size(size)
                    ))
                },
            )?);
        }
        Ok(points)
    }

    fn rounds(&self) -> usize {
        self.ctx.effort.gpu.contention_rounds
    }

    fn streams(
        &self,
        config: &GpuConfig,
        d0: usize,
        points: &mut Vec<ContentionPoint>,
        report: &mut Report,
    ) -> Result<(), CudaError> {
        let each = config.contention_size(self.ctx.effort);
        let (ks, too_many): (Vec<usize>, Vec<usize>) = config
            .stream_counts()
            .into_iter()
            .partition(|&k| k * each <= self.limit);
        for k in too_many {
            report
                .skipped
                .push(self.too_big(format!("{k} concurrent copies of {}", format_size(each))));
        }
        let Some(&kmax) = ks.last() else {
            return Ok(());
        };
        let buf = DeviceBuffer::new(self.dev, kmax * each)?;
        // Each direction alone, then half each way at once (even k).
        let flows = [Flow::One(Dir::H2d), Flow::One(Dir::D2h), Flow::Mixed];
        for flow in flows {
            for &k in &ks {
                if flow == Flow::Mixed && (k < 2 || !k.is_multiple_of(2)) {
                    continue;
                }
                self.ctx.progress(&format!(
                    "gpu.pool on {}: {k} concurrent {} copies",
                    self.target,
                    flow.name()
                ));
                let dirs: Vec<Dir> = (0..k).map(|i| flow.dir_of(i)).collect();
                let (rounds, counters) = copy::contention_streams(
                    self.dev,
                    &buf,
                    self.host,
                    &dirs,
                    each,
                    self.rounds(),
                    &self.ctx.timer,
                )?;
                points.push(ContentionPoint {
                    flow,
                    streams: k,
                    devices: vec![d0],
                    bytes_each: each,
                    timing: Timing::Events,
                    rounds,
                    counters: Some(counters),
                });
            }
        }
        Ok(())
    }

    /// The CPU-agents test in both directions ([`with_cpu`]); a skipped entry when it
    /// cannot run here.
    fn with_cpu(
        &self,
        config: &GpuConfig,
        parts: Option<&WithCpuParts>,
        report: &mut Report,
    ) -> Result<Vec<WithCpuPoint>, CudaError> {
        let Some(parts) = parts else {
            report.skipped.push(self.skipped(
                "CPU agents beside the GPU: needs 2 CPUs (the first drives the GPU, the others stream the target); give more with --cpu".into(),
            ));
            return Ok(Vec::new());
        };
        let copy = config.contention_size(self.ctx.effort);
        if copy > self.limit || parts.gpu_bytes + parts.cpu_bytes > self.len {
            report.skipped.push(self.too_big(format!(
                "CPU agents beside the GPU: copies of {} through {} beside {} of CPU streams ({})",
                format_size(copy),
                format_size(parts.gpu_bytes),
                format_size(parts.cpu_bytes),
                parts.sizing
            )));
            return Ok(Vec::new());
        }
        let isa = IsaSet::detect().choose(None).unwrap_or(Isa::Scalar);
        if let Err(why) = isa.nt_store() {
            report.skipped.push(self.skipped(format!(
                "CPU agents beside the GPU: the device-to-host agents write with non-temporal stores: {why}"
            )));
            return Ok(Vec::new());
        }
        let buf = DeviceBuffer::new(self.dev, copy)?;
        let gpu = GpuSide {
            dev: self.dev,
            buf: &buf,
            host: self.host.sub(0, parts.gpu_bytes),
        };
        let agents = &parts.agents;
        let cpu = CpuSide {
            cpus: agents,
            host: self.host.sub(parts.gpu_bytes, parts.cpu_bytes),
            isa,
        };
        let plan = WithCpuPlan::new(self.ctx.effort, copy);
        let mut points = Vec::new();
        for dir in Dir::ALL {
            self.ctx.progress(&format!(
                "gpu.pool on {}: {} copies beside {} CPU agent(s) ({})",
                self.target,
                dir.name(),
                agents.len(),
                with_cpu::cpu_access(dir)
            ));
            let mut p = with_cpu::measure(&gpu, &cpu, dir, plan, &self.ctx.timer)?;
            p.sizing = parts.sizing.clone();
            if p.cpu_alone.is_empty() || p.cpu_beside_gpu.is_empty() {
                report.skipped.push(self.skipped(format!(
                    "CPU agents beside the GPU ({}): no window in which every agent was pinned to its CPU ({}) and streamed",
                    dir.name(),
                    bench_core::pin::format_cpu_list(agents)
                )));
            }
            points.push(p);
        }
        Ok(points)
    }

    fn devices(
        &self,
        config: &GpuConfig,
        n: usize,
        points: &mut Vec<ContentionPoint>,
    ) -> Result<(), CudaError> {
        let each = config.contention_size(self.ctx.effort);
        let gs: Vec<usize> = gpu_counts(n)
            .into_iter()
            .filter(|&g| g * each <= self.len)
            .collect();
        let Some(&gmax) = gs.last() else {
            return Ok(());
        };
        let devs: Vec<Device> = (0..gmax).map(Device::open).collect::<Result<_, _>>()?;
        let bufs: Vec<DeviceBuffer<'_>> = devs
            .iter()
            .map(|d| DeviceBuffer::new(d, each))
            .collect::<Result<_, _>>()?;
        for dir in Dir::ALL {
            for &g in &gs {
                self.ctx.progress(&format!(
                    "gpu.pool on {}: {} copies on {g} GPUs",
                    self.target,
                    dir.name()
                ));
                let (rounds, counters) = copy::contention_devices(
                    &devs[..g],
                    &bufs[..g],
                    self.host,
                    dir,
                    each,
                    self.rounds(),
                    &self.ctx.timer,
                )?;
                points.push(ContentionPoint {
                    flow: Flow::One(dir),
                    streams: 1,
                    devices: (0..g).collect(),
                    bytes_each: each,
                    timing: Timing::Host,
                    rounds,
                    counters: Some(counters),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::memory::{Region, TargetSpec};

    #[test]
    fn gpu_counts_double_up_to_n() {
        assert!(gpu_counts(0).is_empty());
        assert!(gpu_counts(1).is_empty());
        assert_eq!(gpu_counts(2), vec![2]);
        assert_eq!(gpu_counts(3), vec![2, 3]);
        assert_eq!(gpu_counts(8), vec![2, 4, 8]);
    }

    #[test]
    fn region_fits_the_sweep_and_every_stream() {
        // One CPU: no CPU agents, the sweep and the streams alone size the region.
        let ctx = Context {
            cpus: vec![0],
            ..Context::quick_local()
        };
        let b = GpuPoolBench::default();
        assert_eq!(
            b.region_bytes(&ctx, &TargetSpec::Anon),
            1 << 30,
            "the 1 GiB copy"
        );
        let b = GpuPoolBench {
            gpus: 32,
            ..Default::default()
        };
        assert_eq!(
            b.region_bytes(&ctx, &TargetSpec::Anon),
            32 * (64 << 20),
            "32 GPUs' 64 MiB copies at once"
        );
        let b = GpuPoolBench {
            gpus: 16,
            config: GpuConfig {
                device: Some(0),
                ..Default::default()
            },
        };
        assert_eq!(
            b.region_bytes(&ctx, &TargetSpec::Anon),
            1 << 30,
            "one device: no multi-GPU test"
        );
    }

    #[test]
    fn memory_is_the_region_it_registers_and_names_what_sizes_it() {
        let ctx = Context {
            cpus: vec![0],
            ..Context::quick_local()
        };
        let anon = TargetSpec::Anon;
        let b = GpuPoolBench::default();
        let need = b.memory(&ctx, &anon);
        assert_eq!(need.on_target_bytes, b.region_bytes(&ctx, &anon));
        assert_eq!(
            need.bytes, need.on_target_bytes,
            "device buffers are the GPU's"
        );
        assert!(need.what.contains("largest copy"), "{}", need.what);
        assert_eq!(need.fit.unwrap().option, "--max-size");
        let b = GpuPoolBench {
            gpus: 32,
            ..Default::default()
        };
        let need = b.memory(&ctx, &anon);
        assert_eq!(need.on_target_bytes, 32 * (64 << 20));
        let fit = need.fit.unwrap();
        assert_eq!((fit.option, fit.per_byte), ("--contention-size", 32));
        // With CPU agents their parts may size it: no option bounds that.
        let two = Context {
            cpus: vec![0, 0],
            ..Context::quick_local()
        };
        let b = GpuPoolBench {
            config: GpuConfig {
                max_size: Some(1 << 20),
                contention_size: Some(1 << 20),
                ..Default::default()
            },
            gpus: 1,
        };
        let need = b.memory(&two, &anon);
        assert_eq!(need.on_target_bytes, b.region_bytes(&two, &anon));
        assert!(need.what.contains("CPU agents"), "{}", need.what);
        assert!(need.fit.is_none());
    }

    /// The 16-core H200 host of shared/server-runs (one 300 MiB L3, 2 MiB L2 per core):
    /// 15 agents, each part 4 x (300 + 15 x 2) MiB, whole 64 MiB copies for the GPU and
    /// whole 4 MiB chunks per agent; the same parts with and without --quick.
    #[test]
    fn the_h200_hosts_parts_leave_its_300m_l3() {
        let dir = tempfile::tempdir().unwrap();
        let server = bench_core::topology::fixtures::Server::h200_host();
        bench_core::topology::fixtures::write_server(dir.path(), &server).unwrap();
        let quick = Context {
            topology: bench_core::topology::Topology::read(dir.path()),
            cpus: (0..16).collect(),
            ..Context::quick_local()
        };
        let full = Context {
            effort: &bench_core::effort::FULL,
            ..quick.clone()
        };
        let b = GpuPoolBench::default();
        let p = b.with_cpu_parts(&quick, &TargetSpec::Anon).unwrap();
        let mib = 1 << 20;
        assert_eq!(p.agents, (1..16).collect::<Vec<_>>());
        assert_eq!(p.gpu_bytes, 1344 * mib, "{}", p.sizing);
        assert_eq!(p.cpu_bytes, 15 * 88 * mib, "{}", p.sizing);
        let f = b.with_cpu_parts(&full, &TargetSpec::Anon).unwrap();
        assert_eq!((f.gpu_bytes, f.cpu_bytes), (p.gpu_bytes, p.cpu_bytes));
        assert_eq!(
            b.region_bytes(&quick, &TargetSpec::Anon),
            b.region_bytes(&full, &TargetSpec::Anon)
        );
    }

    /// With CPU agents the region holds the GPU's part and the agents' part, each at
    /// least the agents' streaming DRAM working set, the same with and without --quick.
    #[test]
    fn region_holds_both_parts_of_the_cpu_agents_test() {
        let two = Context {
            cpus: vec![0, 0],
            ..Context::quick_local()
        };
        let b = GpuPoolBench::default();
        let (stream, _) = two.dram_stream_bytes(&TargetSpec::Anon, &[0]);
        let quick = b.region_bytes(&two, &TargetSpec::Anon);
        assert!(quick >= 2 * stream, "{quick} < 2 x {stream}");
        let full = Context {
            effort: &bench_core::effort::FULL,
            ..two.clone()
        };
        let parts = b.with_cpu_parts(&full, &TargetSpec::Anon).unwrap();
        assert_eq!(
            b.with_cpu_parts(&two, &TargetSpec::Anon).unwrap().gpu_bytes,
            parts.gpu_bytes
        );
        assert!(b.region_bytes(&full, &TargetSpec::Anon) >= parts.gpu_bytes + parts.cpu_bytes);
    }

    /// Without libcuda: a skip naming libcuda, after the region was placed.
    #[test]
    fn no_driver_is_a_skip_with_the_reason() {
        let ctx = Context::quick_local();
        let b = GpuPoolBench {
            config: GpuConfig {
                max_size: Some(1 << 20),
                streams: Some(vec![1, 2]),
                contention_size: Some(256 << 10),
                ..Default::default()
            },
            gpus: 1,
        };
        let mut region = Region::allocate(
            &TargetSpec::Anon,
            b.region_bytes(&ctx, &TargetSpec::Anon),
            &ctx.topology,
        )
        .unwrap();
        match b.run(&ctx, Input::Region(&mut region)) {
            Err(s) if !crate::cuda::library_present() => {
                assert!(
                    s.skip_reason().unwrap().contains("libcuda"),
                    "{}",
                    s.skip_reason().unwrap()
                )
            }
            Err(s) => assert!(!s.skip_reason().unwrap().is_empty()),
            Ok(rep) => assert!(rep.params.iter().any(|p| p.key == "gpu_reg_h2d_bw_gbs")),
        }
    }
}
