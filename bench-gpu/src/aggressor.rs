//! The GPU as a DMA aggressor ([`bench_core::dma`]): `mem.interference`'s `gpu` column.
//!
//! The runner hands [`GpuProbe`] to the memory families; it finds the first GPU through
//! [`crate::discovery::probe`] (the reason when there is none or the driver cannot be
//! loaded). A session registers a span of a target's region with `cuMemHostRegister`
//! (page-locked and mapped for DMA, as `gpu.pool` registers its target) and allocates one
//! copy of device memory; its copies are the loop of the GPU beside CPU agents
//! ([`crate::with_cpu::CopyLoop`]: one stream, back-to-back copies walking through the
//! span, batches of four timed by CUDA events), driven by a thread pinned to an
//! aggressor CPU while the victim measures on its own CPUs.

use crate::cuda::{CudaError, Device, DeviceBuffer, Event, Registration, Stream};
use crate::discovery::probe;
use crate::with_cpu::CopyLoop;
use bench_core::dma::{DmaAggressor, DmaDir, DmaProbe, DmaRate, DmaSession};
use bench_core::effort::Effort;
use bench_core::units::format_size;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Copies per event-timed batch (as beside CPU agents).
const BATCH: usize = 4;

/// Finds GPU 0 through the CUDA driver.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuProbe;

impl DmaProbe for GpuProbe {
    fn find(&self) -> Result<Arc<dyn DmaAggressor>, String> {
        let inv = probe().map_err(|e| e.to_string())?;
        let info = inv
            .devices
            .first()
            .ok_or_else(|| "no CUDA device: the driver reports 0 GPUs".to_string())?;
        let dev = Device::open(info.ordinal).map_err(|e| format!("GPU {}: {e}", info.ordinal))?;
        Ok(Arc::new(GpuAggressor {
            dev,
            parameters: info.parameters(&inv.driver_version),
        }))
    }
}

/// One GPU, its primary context retained while the aggressor lives.
#[derive(Debug)]
pub struct GpuAggressor {
    dev: Device,
    parameters: serde_json::Value,
}

impl DmaAggressor for GpuAggressor {
    fn name(&self) -> String {
        format!("gpu:{}", self.dev.ordinal())
    }

    fn parameters(&self) -> serde_json::Value {
        self.parameters.clone()
    }

    /// The copies of `gpu.pool`'s contention and CPU-agents tests.
    fn copy_bytes(&self, effort: &Effort) -> usize {
        effort.gpu.contention_bytes
    }

    fn device_bytes(&self, effort: &Effort) -> usize {
        self.copy_bytes(effort)
    }

    fn attach<'m>(
        &'m self,
        host: &'m mut [u8],
        effort: &Effort,
    ) -> Result<Box<dyn DmaSession + 'm>, String> {
        let copy_bytes = self.copy_bytes(effort);
        if host.len() < copy_bytes {
            return Err(format!(
                "{} of host memory holds no copy of {}",
                format_size(host.len()),
                format_size(copy_bytes)
            ));
        }
        let len = host.len();
        let reg = Registration::new(&self.dev, host)
            .map_err(|e| format!("{} cannot be registered for DMA: {e}", format_size(len)))?;
        let buf = DeviceBuffer::new(&self.dev, copy_bytes)
            .map_err(|e| format!("{}: {e}", self.name()))?;
        Ok(Box::new(GpuSession {
            dev: &self.dev,
            reg,
            buf,
            copy_bytes,
            host_bytes: len,
            name: self.name(),
        }))
    }
}

/// A registered span and a device buffer of one copy.
struct GpuSession<'m> {
    dev: &'m Device,
    reg: Registration<'m, 'm>,
    buf: DeviceBuffer<'m>,
    copy_bytes: usize,
    host_bytes: usize,
    name: String,
}

/// The copy loop in `dir` between `buf` and `host` on the calling thread, pinned to
/// `cpu`, until `stop` is set (`started` set after the first batch).
struct Copies<'a, 'd> {
    dev: &'d Device,
    buf: &'a DeviceBuffer<'d>,
    host: crate::cuda::HostSpan<'a>,
    copy_bytes: usize,
    name: &'a str,
}

impl Copies<'_, '_> {
    fn run(
        &self,
        dir: DmaDir,
        cpu: usize,
        started: &AtomicBool,
        stop: &AtomicBool,
    ) -> Result<DmaRate, String> {
        bench_core::pin::pin_current(cpu).map_err(|e| e.to_string())?;
        let cuda = |e: CudaError| format!("{}: {e}", self.name);
        let stream = Stream::new(self.dev).map_err(cuda)?;
        let (e0, e1) = (
            Event::new(self.dev).map_err(cuda)?,
            Event::new(self.dev).map_err(cuda)?,
        );
        let l = CopyLoop {
            stream: &stream,
            e0: &e0,
            e1: &e1,
            buf: self.buf,
            host: self.host,
            dir,
            copy_bytes: self.copy_bytes,
            batch: BATCH,
        };
        let r = l.run(&mut |_| {
            started.store(true, Ordering::Release);
            stop.load(Ordering::Acquire)
        });
        r.map_err(cuda)
    }
}

impl DmaSession for GpuSession<'_> {
    fn describe(&self) -> String {
        format!(
            "{}: one stream of back-to-back {} copies walking through {} of the target registered with cuMemHostRegister, in batches of {BATCH} timed with CUDA events (GB/s = bytes / the batch's event time, GB = 1e9 B)",
            self.name,
            format_size(self.copy_bytes),
            format_size(self.host_bytes),
        )
    }

    fn copy_beside(
        &mut self,
        dir: DmaDir,
        cpu: usize,
        beside: &mut dyn FnMut(),
    ) -> Result<DmaRate, String> {
        let started = AtomicBool::new(false);
        let stop = AtomicBool::new(false);
        let copies = Copies {
            dev: self.dev,
            buf: &self.buf,
            host: self.reg.span(),
            copy_bytes: self.copy_bytes,
            name: &self.name,
        };
        std::thread::scope(|s| {
            let h = s.spawn(|| copies.run(dir, cpu, &started, &stop));
            // The copies are flowing (one batch done) before the victim starts.
            while !started.load(Ordering::Acquire) && !h.is_finished() {
                std::thread::yield_now();
            }
            if started.load(Ordering::Acquire) {
                beside();
            }
            stop.store(true, Ordering::Release);
            h.join()
                .unwrap_or_else(|_| Err("the GPU's copy thread panicked".to_string()))
        })
    }
}
