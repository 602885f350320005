//! What `cxlchar gpu` plans: one discovery, then a `gpu.bw` benchmark per GPU and one
//! `gpu.pool` benchmark placed on every memory target.

use crate::config::{GpuArgs, GpuPart};
use crate::host::GpuHostBench;
use crate::pool::GpuPoolBench;
use bench_core::bench::{Benchmark, BoxError, Options, Planned, Setup};

impl Setup for GpuArgs {
    /// Planned after one discovery: without a usable driver or device the family is one
    /// `gpu` skip with the reason (nothing is allocated); otherwise a `gpu.bw` device
    /// benchmark per GPU (pageable and pinned host memory, target `gpu:N`) and one
    /// `gpu.pool` memory benchmark, placed on every target like the memory families (so
    /// its keys are qualified and renamed on far memory). A `--device` beyond the GPUs
    /// present is an error.
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        let config = self.config()?;
        let n = match &opts.sysfs {
            // A plan for another machine: its GPUs as its PCI bus lists them.
            Some(root) => match sysfs_gpus(root)? {
                0 => {
                    return Ok(Planned::skip(
                        crate::FAMILY,
                        format!(
                            "no NVIDIA GPU in {}",
                            root.join("sys/bus/pci/devices").display()
                        ),
                    ))
                }
                n => n,
            },
            None => match crate::discovery::probe() {
                Ok(inv) => inv.devices.len(),
                Err(e) => return Ok(Planned::skip(crate::FAMILY, e.to_string())),
            },
        };
        config.validate_device(n)?;
        let devices: Vec<usize> = match config.device {
            Some(d) => vec![d],
            None => (0..n).collect(),
        };
        let host = if config.runs(GpuPart::Host) {
            devices
        } else {
            Vec::new()
        };
        let mut benchmarks: Vec<Box<dyn Benchmark>> = host
            .into_iter()
            .map(|device| {
                Box::new(GpuHostBench {
                    device,
                    config: config.clone(),
                }) as Box<dyn Benchmark>
            })
            .collect();
        let on_targets = [GpuPart::Sweep, GpuPart::Contention, GpuPart::WithCpu];
        if on_targets.iter().any(|&p| config.runs(p)) {
            benchmarks.push(Box::new(GpuPoolBench { config, gpus: n }));
        }
        Ok(Planned {
            benchmarks,
            skipped: vec![],
        })
    }

    fn far_nodes_by_default(&self) -> bool {
        true
    }
}

/// The NVIDIA GPUs of the sysfs tree below `root` ([`bench_core::pci::nvidia_gpus`]).
pub fn sysfs_gpus(root: &std::path::Path) -> Result<usize, bench_core::sysfs::ReadError> {
    bench_core::pci::nvidia_gpus(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_plans_a_family_skip_and_nothing_else() {
        if crate::cuda::library_present() {
            return;
        }
        let a = GpuArgs {
            device: None,
            max_size: None,
            streams: None,
            contention_size: None,
            parts: None,
        };
        let p = a.plan(&Options::default()).unwrap();
        assert!(p.benchmarks.is_empty());
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(p.skipped[0].benchmark, "gpu");
        assert!(
            p.skipped[0].reason.contains("libcuda"),
            "{}",
            p.skipped[0].reason
        );
    }

    #[test]
    fn bad_options_are_errors_of_the_plan() {
        let a = GpuArgs {
            device: None,
            max_size: Some(100),
            streams: None,
            contention_size: None,
            parts: None,
        };
        assert!(a.plan(&Options::default()).is_err());
    }
}
