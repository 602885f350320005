//! `gpu.pool`: DMA between a GPU and a cxlchar memory target (seed 003, CCCL Sec. 2.3):
//! the target's region is registered with `cuMemHostRegister` (page-locked, mapped for
//! DMA, as CCCL registers its dax mapping with `cudaHostRegister`), then
//!
//! * a bandwidth sweep 4 KiB .. 1 GiB (quick: .. 64 MiB), both directions, timed with
//!   CUDA events and with the host cycle timer;
//! * contention: k = 1, 2, 4, 8 concurrent copies on k streams of one GPU, each to its
//!   own range of the same target, per-transfer and aggregate bandwidth and each
//!   transfer's share; with several GPUs (and no `--device`), one copy on each GPU at
//!   once, timed on the host timer.
//!
//! Params (unqualified names as the benchmark reports them; the runner renames them
//! `gpu_pool_*` on far memory, as it renames `mem_lat_ns` to `cxl_lat_ns`):
//! `gpu_reg_{h2d,d2h}_bw_gbs`, `gpu_reg_{dir}_k{k}_bw_gbs`, `gpu_reg_{dir}_k{k}_agg_bw_gbs`
//! and `gpu_reg_{dir}_share_min_ratio`.

use crate::config::GpuConfig;
use crate::copy::{self, SweepPlan};
use crate::cuda::{CudaError, Device, DeviceBuffer, Dir, Registration};
use crate::discovery::probe;
use crate::shape::{
    contention_report, split_fitting, sweep_report, ContentionPoint, Labels, Timing,
};
use bench_core::bench::{Benchmark, Context, Report, Requirements, Skip};
use bench_core::params::Skipped;
use bench_core::target::Region;
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

impl GpuPoolBench {
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

    fn description(&self) -> &'static str {
        "GPU <-> memory-target DMA bandwidth (registered with cuMemHostRegister) and how concurrent transfers share it"
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "device": self.config.device,
            "max_size_bytes": self.config.max_size,
            "streams": self.config.stream_counts(),
            "contention_bytes": self.config.contention_size,
        })
    }

    fn requires(&self) -> Requirements {
        Requirements::default()
    }

    fn region_bytes(&self, ctx: &Context) -> usize {
        self.config.target_bytes(ctx.quick, self.multi_gpu())
    }

    fn run(&self, ctx: &Context, region: &mut Region) -> Result<Report, Skip> {
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
        let target = region.spec().to_string();
        let placement = region.placement().clone();
        let skip = |e: CudaError| Skip::new(format!("GPU {d0}: {e}"));
        let skipped = |reason: String| Skipped {
            benchmark: "gpu.pool".into(),
            target: target.clone(),
            reason,
        };
        let dev = Device::open(d0).map_err(skip)?;
        let len = region.len();
        let mut reg = Registration::new(&dev, region.as_mut_slice()).map_err(|e| {
            Skip::new(format!(
                "{target} cannot be registered for DMA ({} at {:?}): {e}",
                human_bytes(len as u64),
                placement.method
            ))
        })?;
        let host = reg.span();
        let mut report = Report::default();
        let gpu = format!("gpu:{d0}");
        let labels = Labels {
            bench: self.name().into(),
            id_prefix: format!("gpu.pool/{target}/{gpu}"),
            target: target.clone(),
            memory: format!("the {target} target registered with cuMemHostRegister"),
            parameters: {
                let mut p = info.parameters(&inv.driver_version);
                p["source"] = "registered".into();
                p
            },
            placement: Some(placement.clone()),
            host_timer: format!("{:?}", ctx.timer.source()),
        };

        // Bandwidth sweep.
        let (free, _) = dev.mem_info().map_err(skip)?;
        let limit = (free / 10 * 9).min(len);
        let (sizes, too_big) = split_fitting(&self.config.sizes(ctx.quick), limit);
        for s in too_big {
            report.skipped.push(skipped(format!(
                "copies of {}: the region holds {}, {} of device memory free (90% usable)",
                format_size(s),
                human_bytes(len as u64),
                human_bytes(free as u64)
            )));
        }
        if let Some(&max) = sizes.last() {
            let buf = DeviceBuffer::new(&dev, max).map_err(skip)?;
            let mut points = Vec::new();
            for dir in Dir::ALL {
                points.extend(
                    copy::sweep(
                        &dev,
                        &buf,
                        host,
                        dir,
                        &sizes,
                        SweepPlan::new(ctx.quick),
                        &ctx.timer,
                        &|size| {
                            ctx.progress(&format!(
                                "gpu.pool on {target}: {} {}",
                                dir.name(),
                                format_size(size)
                            ))
                        },
                    )
                    .map_err(skip)?,
                );
            }
            let (ms, ps) = sweep_report(&points, &labels, Some(KEY_PREFIX));
            report.measurements.extend(ms);
            report.params.extend(ps);
        }

        // k streams on one GPU.
        let each = self.config.contention_size(ctx.quick);
        let rounds = if ctx.quick { 5 } else { 20 };
        let (ks, too_many): (Vec<usize>, Vec<usize>) = self
            .config
            .stream_counts()
            .into_iter()
            .partition(|&k| k * each <= limit);
        for k in too_many {
            report.skipped.push(skipped(format!(
                "{k} concurrent copies of {}: the region holds {}, {} of device memory free",
                format_size(each),
                human_bytes(len as u64),
                human_bytes(free as u64)
            )));
        }
        let mut points = Vec::new();
        if let Some(&kmax) = ks.last() {
            let buf = DeviceBuffer::new(&dev, kmax * each).map_err(skip)?;
            for dir in Dir::ALL {
                for &k in &ks {
                    ctx.progress(&format!(
                        "gpu.pool on {target}: {k} concurrent {} copies",
                        dir.name()
                    ));
                    let r = copy::contention_streams(&dev, &buf, host, dir, k, each, rounds)
                        .map_err(skip)?;
                    points.push(ContentionPoint {
                        dir,
                        streams: k,
                        devices: vec![d0],
                        bytes_each: each,
                        timing: Timing::Events,
                        rounds: r,
                    });
                }
            }
        }

        // One copy on each of several GPUs.
        let n = self.multi_gpu().min(count);
        let gs: Vec<usize> = gpu_counts(n)
            .into_iter()
            .filter(|&g| g * each <= len)
            .collect();
        if let Some(&gmax) = gs.last() {
            let devs: Vec<Device> = (0..gmax)
                .map(Device::open)
                .collect::<Result<_, _>>()
                .map_err(skip)?;
            let bufs: Vec<DeviceBuffer<'_>> = devs
                .iter()
                .map(|d| DeviceBuffer::new(d, each))
                .collect::<Result<_, _>>()
                .map_err(skip)?;
            for dir in Dir::ALL {
                for &g in &gs {
                    ctx.progress(&format!(
                        "gpu.pool on {target}: {} copies on {g} GPUs",
                        dir.name()
                    ));
                    let r = copy::contention_devices(
                        &devs[..g],
                        &bufs[..g],
                        host,
                        dir,
                        each,
                        rounds,
                        &ctx.timer,
                    )
                    .map_err(skip)?;
                    points.push(ContentionPoint {
                        dir,
                        streams: 1,
                        devices: (0..g).collect(),
                        bytes_each: each,
                        timing: Timing::Host,
                        rounds: r,
                    });
                }
            }
        }
        let labels = Labels {
            id_prefix: format!("gpu.pool/{target}/{gpu}/contention"),
            ..labels
        };
        let (ms, ps, ws) = contention_report(&points, &labels, Some(KEY_PREFIX));
        report.measurements.extend(ms);
        report.params.extend(ps);
        report.warnings.extend(ws);
        drop(reg);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::target::TargetSpec;

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
        let ctx = Context::quick_local();
        let b = GpuPoolBench::default();
        assert_eq!(b.region_bytes(&ctx), 64 << 20);
        let b = GpuPoolBench {
            gpus: 16,
            ..Default::default()
        };
        assert_eq!(b.region_bytes(&ctx), 16 * (8 << 20));
        let b = GpuPoolBench {
            gpus: 16,
            config: GpuConfig {
                device: Some(0),
                ..Default::default()
            },
        };
        assert_eq!(
            b.region_bytes(&ctx),
            64 << 20,
            "one device: no multi-GPU test"
        );
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
        let mut region =
            Region::allocate(&TargetSpec::Anon, b.region_bytes(&ctx), &ctx.topology).unwrap();
        match b.run(&ctx, &mut region) {
            Err(s) if !crate::cuda::library_present() => {
                assert!(s.reason.contains("libcuda"), "{}", s.reason)
            }
            Err(s) => assert!(!s.reason.is_empty()),
            Ok(rep) => assert!(rep.params.iter().any(|p| p.key == "gpu_reg_h2d_bw_gbs")),
        }
    }
}
