//! `gpu.bw`: host <-> device copy bandwidth from pageable memory and from pinned memory
//! allocated by CUDA (`cuMemAllocHost`), 4 KiB .. 1 GiB, both directions, and the latency
//! of a small pinned copy. A device benchmark: one per GPU, target `gpu:N`.
//!
//! Params: `gpu_h2d_bw_gbs`, `gpu_d2h_bw_gbs` (pinned, largest size, CUDA events, p50)
//! and `gpu_copy_lat_ns` (8-byte pinned host-to-device copy + stream synchronize, p50).

use crate::config::GpuConfig;
use crate::copy::{self, SweepPlan};
use crate::cuda::{CudaError, Device, DeviceBuffer, Dir, HostSpan, PinnedBuffer};
use crate::discovery::{probe, GpuInfo, GpuInventory};
use crate::shape::{latency_report, split_fitting, sweep_report, Labels};
use bench_core::bench::{Benchmark, Context, Input, NotRun, Report, Skip, Subject};
use bench_core::counters::MeasurementCounters;
use bench_core::memory::{page_size, pages_per_node, Placement, Verification};
use bench_core::params::Skipped;
use bench_core::plan::Cost;
use bench_core::units::{format_size, human_bytes};

/// Bytes of the small-copy latency test.
pub const LAT_BYTES: usize = 8;

/// Host <-> device bandwidth from pageable and pinned memory on one GPU.
#[derive(Debug, Clone, Default)]
pub struct GpuHostBench {
    /// Device ordinal.
    pub device: usize,
    /// Sizes and options.
    pub config: GpuConfig,
}

/// The placement of a host buffer, as the kernel reports it (every page queried).
pub(crate) fn host_placement(span: &HostSpan<'_>, what: &str) -> Placement {
    let page = page_size();
    let nodes = pages_per_node(span.as_ptr(), span.len(), page);
    Placement {
        verification: Verification::Reported,
        method: format!("move_pages(2) query of every page of {what}"),
        page_size_bytes: page,
        pages_checked: nodes.values().sum(),
        pages_per_node: nodes,
        thp_fraction: None,
        warning: None,
        interleave: None,
        backing: Vec::new(),
    }
}

fn skip_of(device: usize) -> impl Fn(CudaError) -> Skip {
    move |e| Skip::new(format!("GPU {device}: {e}"))
}

impl GpuHostBench {
    fn skipped(&self, reason: String) -> Skipped {
        Skipped {
            benchmark: self.name().into(),
            target: self.target(),
            reason,
        }
    }

    /// One host memory kind, both directions: measurements and (pinned) params.
    #[allow(clippy::too_many_arguments)]
    fn measure_source(
        &self,
        ctx: &Context,
        dev: &Device,
        buf: &DeviceBuffer<'_>,
        span: HostSpan<'_>,
        sizes: &[usize],
        labels: &Labels,
        key: Option<&str>,
        report: &mut Report,
    ) -> Result<(), CudaError> {
        let plan = SweepPlan::new(ctx.effort);
        let mut points = Vec::new();
        for dir in Dir::ALL {
            let name = format!("{} on {}", labels.memory, self.target());
            points.extend(copy::sweep(
                dev,
                buf,
                span,
                dir,
                sizes,
                plan,
                &ctx.timer,
                &|size| {
                    ctx.progress(&format!(
                        "gpu.bw: {} {} {name}",
                        dir.name(),
                        format_size(size)
                    ))
                },
            )?);
            ctx.point_done();
        }
        let (ms, ps) = sweep_report(&points, labels, key);
        report.measurements.extend(ms);
        report.params.extend(ps);
        Ok(())
    }
}

impl GpuHostBench {
    /// The device it measures, as shown in `target` fields.
    pub fn target(&self) -> String {
        format!("gpu:{}", self.device)
    }
}

impl Benchmark for GpuHostBench {
    fn name(&self) -> &'static str {
        "gpu.bw"
    }

    fn subject(&self) -> Subject {
        Subject::Device {
            target: self.target(),
        }
    }

    /// The host buffer of the largest copy: pinned (cuMemAllocHost), released before the
    /// pageable one of the same size is filled. Device memory is the GPU's; a copy too
    /// large for 90% of it is skipped, so the buffers may be smaller than planned.
    fn memory(
        &self,
        ctx: &Context,
        _target: &bench_core::memory::TargetSpec,
    ) -> bench_core::memory::budget::Need {
        let max = self.config.sizes(ctx.effort).last().copied().unwrap_or(0);
        let page = page_size();
        let bytes = max.div_ceil(page) * page;
        bench_core::memory::budget::Need::on_target(
            bytes,
            format!(
                "a host buffer of the largest copy, {}: pinned, then pageable",
                human_bytes(bytes as u64)
            ),
        )
        .with_fit("--max-size", 1, 0)
    }

    fn cost(&self, ctx: &Context, _target: Option<&bench_core::memory::TargetSpec>) -> Cost {
        let e = &ctx.plan.expect;
        let sizes = self.config.sizes(ctx.effort);
        let max = sizes.last().copied().unwrap_or(0);
        let mut c = Cost::new();
        // Pinned: allocated, swept, the small copies' latency; pageable: filled, swept.
        c.add("pinned host memory", 1, e.populate_s(max));
        c.extend(crate::cost::sweep_cost(
            ctx,
            &sizes,
            e.gpu_copy_gbs,
            "pinned",
        ));
        c.add(
            "small-copy latency",
            1,
            2.0 * ctx.effort.gpu.latency_samples as f64 * e.gpu_launch_us * 2e-6,
        );
        c.add("pageable host memory", 1, e.populate_s(max));
        c.extend(crate::cost::sweep_cost(
            ctx,
            &sizes,
            e.gpu_pageable_gbs,
            "pageable",
        ));
        c
    }

    fn run(&self, ctx: &Context, _input: Input<'_>) -> Result<Report, NotRun> {
        self.config
            .validate()
            .map_err(|e| Skip::new(e.to_string()))?;
        let inv = probe().map_err(|e| Skip::new(e.to_string()))?;
        let info = self.info(&inv)?;
        let skip = skip_of(self.device);
        let dev = Device::open(self.device).map_err(&skip)?;
        let mut report = Report::default();
        let (sizes, max) = self.fitting_sizes(ctx, &dev, &mut report)?;
        let buf = DeviceBuffer::new(&dev, max).map_err(&skip)?;
        let run = HostRun {
            bench: self,
            ctx,
            dev: &dev,
            buf: &buf,
            sizes: &sizes,
            info,
            driver_version: &inv.driver_version,
        };
        run.pinned(&mut report, max);
        run.pageable(&mut report, max);
        Ok(crate::shape::finished(report)?)
    }
}

impl GpuHostBench {
    /// The inventory's entry of this device, or a skip when the driver has no such GPU.
    fn info<'i>(&self, inv: &'i GpuInventory) -> Result<&'i GpuInfo, NotRun> {
        let count = inv.devices.len();
        if self.device >= count {
            return Err(NotRun::skip(format!(
                "GPU {} does not exist: the driver reports {count} GPU(s)",
                self.device
            )));
        }
        Ok(&inv.devices[self.device])
    }

    /// The copy sizes that fit in 90% of the free device memory and the largest of them;
    /// the others are recorded as skipped.
    fn fitting_sizes(
        &self,
        ctx: &Context,
        dev: &Device,
        report: &mut Report,
    ) -> Result<(Vec<usize>, usize), NotRun> {
        let (free, _) = dev.mem_info().map_err(skip_of(self.device))?;
        let (sizes, too_big) = split_fitting(&self.config.sizes(ctx.effort), free / 10 * 9);
        for s in too_big {
            report.skipped.push(self.skipped(format!(
                "copies of {}: more than 90% of the {} of device memory free",
                format_size(s),
                human_bytes(free as u64)
            )));
        }
        let Some(&max) = sizes.last() else {
            return Err(NotRun::skip(format!(
                "GPU {}: only {} of device memory free, less than the smallest copy",
                self.device,
                human_bytes(free as u64)
            )));
        };
        Ok((sizes, max))
    }
}

/// What the host memory kinds of one run share: the device, its copy buffer and sizes.
struct HostRun<'a> {
    bench: &'a GpuHostBench,
    ctx: &'a Context,
    dev: &'a Device,
    buf: &'a DeviceBuffer<'a>,
    sizes: &'a [usize],
    info: &'a GpuInfo,
    driver_version: &'a str,
}

impl HostRun<'_> {
    /// Labels of one host memory kind's measurements (`source`: `pinned`, `pageable`).
    fn labels(&self, memory: &str, source: &str, placement: Placement) -> Labels {
        let b = self.bench;
        Labels {
            bench: b.name().into(),
            id_prefix: format!("gpu.bw/{}/{source}", b.target()),
            target: b.target(),
            memory: memory.into(),
            parameters: {
                let mut p = self.info.parameters(self.driver_version);
                p["source"] = source.into();
                p
            },
            placement: Some(placement),
            host_timer: format!("{:?}", self.ctx.timer.source()),
        }
    }

    /// Records a part that failed as skipped, with the driver's error.
    fn failed(&self, report: &mut Report, what: &str, e: CudaError) {
        report.skipped.push(
            self.bench
                .skipped(format!("{what}: {}", skip_of(self.bench.device)(e).reason)),
        )
    }

    /// Pinned memory allocated by CUDA: the keys. A part that fails is recorded as
    /// skipped with the driver's error; the other parts still run.
    fn pinned(&self, report: &mut Report, max: usize) {
        match PinnedBuffer::new(self.dev, max) {
            Ok(mut pinned) => {
                let span = pinned.span();
                let labels = self.labels(
                    "pinned host memory (cuMemAllocHost)",
                    "pinned",
                    host_placement(&span, "the cuMemAllocHost buffer"),
                );
                if let Err(e) = self.bench.measure_source(
                    self.ctx,
                    self.dev,
                    self.buf,
                    span,
                    self.sizes,
                    &labels,
                    Some("gpu"),
                    report,
                ) {
                    self.failed(report, "pinned bandwidth sweep", e);
                }
                self.latency(report, span, labels);
            }
            Err(e) => self.failed(
                report,
                &format!("pinned host memory of {}", format_size(max)),
                e,
            ),
        }
    }

    /// The small pinned copy's latency, both directions (`gpu_copy_lat_ns`).
    fn latency(&self, report: &mut Report, span: HostSpan<'_>, labels: Labels) {
        let ctx = self.ctx;
        ctx.progress(&format!(
            "gpu.bw: {LAT_BYTES}-byte copies on {}",
            self.bench.target()
        ));
        let samples = ctx.effort.gpu.latency_samples;
        type Lat = (Dir, Vec<f64>, Option<MeasurementCounters>);
        let lat: Result<Vec<Lat>, CudaError> = Dir::ALL
            .into_iter()
            .map(|dir| {
                copy::latency(
                    self.dev, self.buf, span, dir, LAT_BYTES, samples, &ctx.timer,
                )
                .map(|(v, c)| (dir, v, Some(c)))
            })
            .collect();
        match lat {
            Ok(lat) => {
                let labels = Labels {
                    id_prefix: format!("gpu.lat/{}/pinned", self.bench.target()),
                    ..labels
                };
                let (ms, ps) = latency_report(&lat, LAT_BYTES, &labels, Some("gpu_copy_lat_ns"));
                report.measurements.extend(ms);
                report.params.extend(ps);
            }
            Err(e) => self.failed(report, "small-copy latency", e),
        }
    }

    /// Pageable memory (the driver stages it through its own pinned buffers).
    fn pageable(&self, report: &mut Report, max: usize) {
        let mut pageable = vec![0u8; max];
        pageable.fill(0x5a); // fault every page in before timing
        let span = HostSpan::pageable(&mut pageable);
        let labels = self.labels(
            "pageable host memory (malloc)",
            "pageable",
            host_placement(&span, "the pageable buffer"),
        );
        if let Err(e) = self.bench.measure_source(
            self.ctx, self.dev, self.buf, span, self.sizes, &labels, None, report,
        ) {
            self.failed(report, "pageable bandwidth sweep", e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_the_host_buffer_of_the_largest_copy() {
        let ctx = Context::quick_local();
        let anon = bench_core::memory::TargetSpec::Anon;
        let b = GpuHostBench::default();
        let need = b.memory(&ctx, &anon);
        let largest = b.config.sizes(ctx.effort).last().copied().unwrap();
        assert_eq!(need.bytes, largest.next_multiple_of(page_size()));
        let b = GpuHostBench {
            config: GpuConfig {
                max_size: Some(64 << 20),
                ..Default::default()
            },
            ..Default::default()
        };
        let need = b.memory(&ctx, &anon);
        assert_eq!(need.bytes, 64 << 20);
        assert_eq!(need.fit.unwrap().option, "--max-size");
    }

    #[test]
    fn target_names_the_device() {
        let b = GpuHostBench {
            device: 3,
            ..Default::default()
        };
        assert_eq!(b.target(), "gpu:3");
        assert_eq!(b.name(), "gpu.bw");
    }

    /// Without libcuda (this CI): a skip whose reason names libcuda. With a GPU: params.
    #[test]
    fn no_driver_is_a_skip_with_the_reason() {
        let b = GpuHostBench::default();
        let ctx = Context::quick_local();
        match b.run(&ctx, Input::Device) {
            Err(s) if !crate::cuda::library_present() => {
                assert!(
                    s.skip_reason().unwrap().contains("libcuda"),
                    "{}",
                    s.skip_reason().unwrap()
                )
            }
            Err(s) => assert!(!s.skip_reason().unwrap().is_empty()),
            Ok(rep) => assert!(rep.params.iter().any(|p| p.key == "gpu_h2d_bw_gbs")),
        }
    }

    #[test]
    fn bad_config_is_a_skip_before_the_driver() {
        let b = GpuHostBench {
            device: 0,
            config: GpuConfig {
                max_size: Some(1),
                ..Default::default()
            },
        };
        let s = b.run(&Context::quick_local(), Input::Device).unwrap_err();
        assert!(
            s.skip_reason().unwrap().contains("--max-size"),
            "{}",
            s.skip_reason().unwrap()
        );
    }
}
