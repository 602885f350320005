//! `cxlchar gpu`, and the GPU part of `cxlchar all` and `cxlchar targets` (bench-gpu).
//!
//! The family is planned after one discovery: without a usable driver or device it is a
//! single `gpu` entry in `skipped` with the reason (nothing is allocated); otherwise a
//! `gpu.bw` device benchmark per GPU (pageable and pinned host memory, target `gpu:N`)
//! and one `gpu.pool` memory benchmark, which the runner places on every target like the
//! memory families, so that `gpu.pool` keys are qualified and renamed on far memory.

use crate::cli::{GpuArgs, RunArgs};
use crate::run::{FamilySkip, Plan};
use anyhow::Result;
use bench_core::bench::{Benchmark, DeviceBenchmark};
use bench_core::units::human_bytes;
use bench_gpu::config::GpuConfig;
use bench_gpu::discovery::GpuInventory;
use bench_gpu::host::GpuHostBench;
use bench_gpu::pool::GpuPoolBench;
use std::fmt::Write;

/// The GPU family's part of a plan.
pub struct GpuPart {
    /// `gpu.pool` (run on every memory target).
    pub benches: Vec<Box<dyn Benchmark>>,
    /// `gpu.bw`, one per GPU.
    pub device_benches: Vec<Box<dyn DeviceBenchmark>>,
    /// The family skipped as a whole, with the reason.
    pub skip: Option<FamilySkip>,
}

/// The configuration of the options, validated.
pub fn config(a: &GpuArgs) -> Result<GpuConfig> {
    let c = GpuConfig {
        device: a.device,
        max_size: a.max_size,
        streams: a.streams.clone(),
        contention_size: a.contention_size,
    };
    c.validate()?;
    Ok(c)
}

/// Plans the family: benchmarks when a GPU can be used, else the skip with its reason. A
/// `--device` beyond the GPUs present is an error.
pub fn part(config: GpuConfig) -> Result<GpuPart> {
    config.validate()?;
    let inv = match bench_gpu::discovery::probe() {
        Ok(inv) => inv,
        Err(e) => {
            return Ok(GpuPart {
                benches: vec![],
                device_benches: vec![],
                skip: Some(FamilySkip {
                    benchmark: bench_gpu::FAMILY,
                    reason: e.to_string(),
                }),
            })
        }
    };
    let n = inv.devices.len();
    config.validate_device(n)?;
    let devices: Vec<usize> = match config.device {
        Some(d) => vec![d],
        None => (0..n).collect(),
    };
    Ok(GpuPart {
        device_benches: devices
            .into_iter()
            .map(|device| {
                Box::new(GpuHostBench {
                    device,
                    config: config.clone(),
                }) as Box<dyn DeviceBenchmark>
            })
            .collect(),
        benches: vec![Box::new(GpuPoolBench { config, gpus: n })],
        skip: None,
    })
}

/// `cxlchar gpu`.
pub fn run(run: &RunArgs, a: &GpuArgs) -> Result<()> {
    let p = part(config(a)?)?;
    crate::measure(
        run,
        Plan {
            benches: p.benches,
            device_benches: p.device_benches,
            family_skips: p.skip.into_iter().collect(),
            far_nodes_by_default: true,
        },
    )
}

/// The GPU section of `cxlchar targets` (table).
pub fn inventory_table(probe: &Result<GpuInventory, bench_gpu::cuda::Unavailable>) -> String {
    let mut s = String::new();
    match probe {
        Err(e) => {
            let _ = writeln!(s, "GPUs: none (no GPU: {e})");
        }
        Ok(inv) => {
            let _ = writeln!(s, "GPUs (CUDA driver {}):", inv.driver_version);
            for g in &inv.devices {
                let _ = writeln!(
                    s,
                    "  gpu:{}  {}  {}  cc {}  copy engines {}  pci {}  link {}  node {}",
                    g.ordinal,
                    g.name,
                    human_bytes(g.total_mem_bytes),
                    g.compute_capability,
                    g.copy_engines,
                    g.pci_bus_id,
                    bench_gpu::discovery::link_text(&g.link),
                    g.numa_node.map_or("-".into(), |n| n.to_string())
                );
            }
        }
    }
    s
}

/// The GPU section of `cxlchar targets --format json`.
pub fn inventory_json(
    probe: &Result<GpuInventory, bench_gpu::cuda::Unavailable>,
) -> serde_json::Value {
    match probe {
        Ok(inv) => {
            serde_json::json!({"driver_version": inv.driver_version, "devices": inv.devices})
        }
        Err(e) => serde_json::json!({"devices": [], "skipped": e.to_string()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_plans_a_family_skip_and_nothing_else() {
        if bench_gpu::cuda::library_present() {
            return;
        }
        let p = part(GpuConfig::default()).unwrap();
        assert!(p.benches.is_empty() && p.device_benches.is_empty());
        let s = p.skip.unwrap();
        assert_eq!(s.benchmark, "gpu");
        assert!(s.reason.contains("libcuda"), "{}", s.reason);
        let t = inventory_table(&bench_gpu::discovery::probe());
        assert!(
            t.starts_with("GPUs: none (no GPU: ") && t.contains("libcuda"),
            "{t}"
        );
        let j = inventory_json(&bench_gpu::discovery::probe());
        assert!(j["skipped"].as_str().unwrap().contains("libcuda"));
    }

    #[test]
    fn bad_options_are_errors() {
        let a = GpuArgs {
            device: None,
            max_size: Some(100),
            streams: None,
            contention_size: None,
        };
        assert!(config(&a).unwrap_err().to_string().contains("--max-size"));
        let a = GpuArgs {
            streams: Some(vec![0]),
            max_size: None,
            ..a
        };
        assert!(config(&a).unwrap_err().to_string().contains("--streams"));
    }
}
