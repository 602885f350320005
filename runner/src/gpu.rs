//! The GPU part of `cxlchar targets` (bench-gpu), and the GPU the memory families may
//! use as a DMA aggressor ([`dma_probe`]). The `gpu` command and the GPU part of
//! `cxlchar all` are planned by `bench_gpu::config::GpuArgs` (see the registry).

use crate::output::table::{Align::*, TextTable};
use bench_core::units::human_bytes;
use bench_gpu::discovery::GpuInventory;
use std::fmt::Write;

/// The GPU as a DMA aggressor for the families that take one (`mem.interference`'s
/// `gpu` column), handed to them in [`bench_core::bench::Options::dma`]: bench-mem does
/// not link the CUDA driver crate, the runner does. Probed only by a family that plans
/// the column (no GPU or no driver: the reason it records).
pub fn dma_probe() -> std::sync::Arc<dyn bench_core::dma::DmaProbe> {
    std::sync::Arc::new(bench_gpu::aggressor::GpuProbe)
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
            let mut t = TextTable::new(&[
                ("gpu", Left),
                ("name", Left),
                ("memory", Right),
                ("cc", Left),
                ("copy engines", Right),
                ("pci", Left),
                ("link", Left),
                ("node", Right),
            ])
            .indent(2);
            for g in &inv.devices {
                t.row([
                    format!("gpu:{}", g.ordinal),
                    g.name.clone(),
                    human_bytes(g.total_mem_bytes),
                    g.compute_capability.to_string(),
                    g.copy_engines.to_string(),
                    g.pci_bus_id.clone(),
                    bench_gpu::discovery::link_text(&g.link),
                    g.numa_node.map_or("-".into(), |n| n.to_string()),
                ]);
            }
            s.push_str(&t.render());
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
    fn no_driver_is_named_in_the_inventory() {
        if bench_gpu::cuda::library_present() {
            return;
        }
        let t = inventory_table(&bench_gpu::discovery::probe());
        assert!(
            t.starts_with("GPUs: none (no GPU: ") && t.contains("libcuda"),
            "{t}"
        );
        let j = inventory_json(&bench_gpu::discovery::probe());
        assert!(j["skipped"].as_str().unwrap().contains("libcuda"));
    }
}
