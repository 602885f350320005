//! A DMA aggressor: a device (a GPU) that copies to and from host memory back to back
//! while a CPU-side measurement runs, as `mem.interference`'s `gpu` column needs it.
//!
//! The families that measure CPUs (bench-mem) cannot depend on a device's driver crate
//! (bench-gpu): they see a device only through these traits, and the runner hands them
//! the implementation ([`crate::bench::Options::dma`]) where one is built in. A probe
//! that finds no device says why (no GPU, no driver: the driver's own words), and the
//! family records that reason in `skipped`, never a figure.

use crate::effort::Effort;
use std::fmt::Debug;
use std::sync::Arc;

/// The direction of a device's copies, as host memory sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DmaDir {
    /// Host to device: the device reads host memory.
    H2d,
    /// Device to host: the device writes host memory.
    D2h,
}

impl DmaDir {
    /// Both directions, reads first.
    pub const ALL: [DmaDir; 2] = [DmaDir::H2d, DmaDir::D2h];

    /// `h2d` or `d2h`.
    pub fn name(self) -> &'static str {
        match self {
            DmaDir::H2d => "h2d",
            DmaDir::D2h => "d2h",
        }
    }

    /// What the device does to host memory (`reads`, `writes`).
    pub fn verb(self) -> &'static str {
        match self {
            DmaDir::H2d => "reads",
            DmaDir::D2h => "writes",
        }
    }
}

/// What a device's copies moved: one bandwidth per timed batch of copies (bytes / the
/// batch's device-timed span, GB = 1e9 B) and the totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DmaRate {
    /// GB/s of each timed batch (batches the device timed as taking no time left out).
    pub batch_gbs: Vec<f64>,
    /// Bytes copied in the timed batches.
    pub bytes: u64,
    /// The batches' device-timed nanoseconds, summed.
    pub timed_ns: f64,
}

impl DmaRate {
    /// Bytes over the batches' time (GB/s); `None` when no batch was timed.
    pub fn aggregate_gbs(&self) -> Option<f64> {
        (self.timed_ns > 0.0).then(|| self.bytes as f64 / self.timed_ns)
    }
}

/// A device that can copy to and from host memory as an aggressor.
pub trait DmaAggressor: Send + Sync + Debug {
    /// Its name in ids and cells (`gpu:0`).
    fn name(&self) -> String;

    /// What every measurement of its copies records of it (name, PCI address, driver).
    fn parameters(&self) -> serde_json::Value;

    /// Bytes of each copy for `effort`; the host memory it copies holds whole copies.
    fn copy_bytes(&self, effort: &Effort) -> usize;

    /// Device memory a session takes (on the device, not on the host).
    fn device_bytes(&self, effort: &Effort) -> usize;

    /// Prepares copies between `host` and the device: `host` is page-locked and mapped
    /// for the device's DMA (registered) while the session lives, and a device buffer
    /// of one copy is allocated. `effort` gives the copy size. The reason when the
    /// device or its driver refuses (the driver's words).
    fn attach<'m>(
        &'m self,
        host: &'m mut [u8],
        effort: &Effort,
    ) -> Result<Box<dyn DmaSession + 'm>, String>;
}

/// Copies between one registered span of host memory and a device.
pub trait DmaSession {
    /// How the copies run (a sentence for the measurements' methods).
    fn describe(&self) -> String;

    /// Copies in `dir` back to back on a thread pinned to `cpu`, walking through the
    /// host span in timed batches, from before `beside` runs on the calling thread until
    /// it returns (at least one batch); what they moved. The driver's words on failure.
    fn copy_beside(
        &mut self,
        dir: DmaDir,
        cpu: usize,
        beside: &mut dyn FnMut(),
    ) -> Result<DmaRate, String>;
}

/// Finds the device a family may use as a DMA aggressor on this machine.
pub trait DmaProbe: Send + Sync + Debug {
    /// The first device, or why there is none (no device, the driver not loadable, the
    /// driver's error), in words for a `skipped` entry.
    fn find(&self) -> Result<Arc<dyn DmaAggressor>, String>;
}
