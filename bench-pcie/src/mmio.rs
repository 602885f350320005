//! `pcie.mmio`: MMIO costs on a device BAR (seed 004's PIO copy and PCIe round trip).
//!
//! * uncached 8-byte reads in a dependent chain (each address depends on the previous
//!   value, so reads cannot overlap): `pcie_rtt_ns`, the CPU <-> device round trip;
//! * uncached 8-byte writes (posted) then `sfence`: `mmio_write_8b_ns` (needs --allow-write);
//! * write-combining copies of 8..256 bytes with 8-byte stores, each followed by `sfence`
//!   (the doorbell/PIO path of a NIC): `pio_copy_64b_ns` and `pio_copy_<n>b_ns`
//!   (needs --allow-write and a `resourceN_wc`).
//!
//! Every sample is a batch of operations timed with the cycle timer (overhead
//! subtracted), divided by the batch length.

use crate::bar::{Access, BarError, BarSpec};
use crate::discovery::{Bar, PciDevice};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Setup, Skip,
    Subject,
};
use bench_core::cacheline::{store_8b_volatile, store_fence, wc_store};
use bench_core::counters::{self, CounterGroup, MeasurementCounters};
use bench_core::memory::{Region, Window, WindowSource};
use bench_core::params::{Measurement, Warning};
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Window of the BAR the benchmark touches (bytes, a power of two).
pub const WINDOW: usize = 4096;
/// Copy sizes of the write-combining measurement.
pub const WC_SIZES: [usize; 6] = [8, 16, 32, 64, 128, 256];
/// Operations per timed sample.
const BATCH: usize = 32;
const MAX_SAMPLES: usize = 100_000;

/// The MMIO benchmark on one BAR.
#[derive(Debug, Clone)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct MmioBench {
    pub bar: BarSpec,
    /// Offset of the measured window in the BAR.
    pub offset: u64,
    /// Write consent and driver override.
    pub access: Access,
    /// Filesystem root for sysfs (`/`).
    pub root: PathBuf,
}

impl MmioBench {
    /// Checks the spec against the machine: bad input is an error before anything runs.
    pub fn validate(&self) -> Result<(PciDevice, Bar), BarError> {
        let (dev, bar) = self.bar.resolve(
            &self.root,
            self.access,
            self.offset,
            self.window(None) as u64,
        )?;
        Ok((dev, bar))
    }

    /// Maps the measured window of the BAR through the write guard: uncached
    /// (`resourceN`) or write-combining (`resourceN_wc`), writable only with
    /// `--allow-write`.
    pub(crate) fn map(&self, wc: bool, len: usize) -> Result<Region, BarError> {
        let w = Window {
            source: WindowSource::Bar {
                bar: self.bar.clone(),
                wc,
            },
            offset: self.offset,
            len,
            write: self.access.allow_write,
            magic: None,
        };
        Region::map_window(&w, self.access, &self.root)
    }

    pub(crate) fn window(&self, bar: Option<&Bar>) -> usize {
        match bar {
            Some(b) => {
                // The largest power of two that fits in the BAR after the offset, at most WINDOW.
                let avail = (b.size_bytes.saturating_sub(self.offset) as usize).min(WINDOW);
                if avail == 0 {
                    0
                } else {
                    1 << (usize::BITS - 1 - avail.leading_zeros())
                }
            }
            None => 64,
        }
    }
}

/// Batches of `batch` calls of `op` for the budget (30 ms with `--quick`, else 200 ms):
/// the distribution of ns per operation (cycle timer, overhead subtracted, divided by
/// the batch length), with the counters of the sampling loop (per operation; repeated
/// while disturbed, up to [`counters::DEFAULT_MAX_ATTEMPTS`] times). Shared by
/// `pcie.mmio` and `pcie.post-parts`.
pub(crate) fn sample_batches(
    ctx: &Context,
    batch: usize,
    mut op: impl FnMut(),
) -> Option<(Distribution, MeasurementCounters)> {
    let budget = ctx.effort.pcie.mmio_point;
    for _ in 0..batch {
        op();
    }
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let mut s = counters::sample_buffer(MAX_SAMPLES);
    let (s, c) = counters::measure_undisturbed(
        &mut group,
        counters::DEFAULT_MAX_ATTEMPTS,
        &mut s,
        |s| {
            s.clear();
            let end = Instant::now() + budget;
            while s.len() < 32 || (Instant::now() < end && s.len() < MAX_SAMPLES) {
                let a = ctx.timer.start();
                for _ in 0..batch {
                    op();
                }
                let b = ctx.timer.stop();
                s.push(ctx.timer.elapsed_ns(a, b) / batch as f64);
            }
        },
        |s| s.clone(),
    );
    let c = c.with_per_op("op", (s.len() * batch) as u64);
    ctx.point_done();
    Some((Distribution::from_samples(&s)?, c))
}

/// The planned seconds of one [`sample_batches`] point: the budget (at least 32 batches
/// of `batch` operations of `op_ns`), repeated where disturbed.
pub(crate) fn batches_s(ctx: &Context, batch: usize, op_ns: f64) -> f64 {
    let batch_s = batch as f64 * op_ns * 1e-9;
    let run = ctx
        .effort
        .pcie
        .mmio_point
        .as_secs_f64()
        .min(MAX_SAMPLES as f64 * batch_s)
        .max(32.0 * batch_s);
    ctx.plan.expect.section_s(1, run)
}

/// One dependent uncached 8-byte read: the next offset depends on the value read.
#[inline(always)]
fn chained_read(base: *const u8, mask: usize, off: &mut usize, v: &mut u64, zero: u64) {
    let o = (*off + (*v & zero) as usize) & mask & !7;
    // SAFETY: o < window (masked), 8-aligned; base maps at least `mask + 1` bytes.
    *v = unsafe { core::ptr::read_volatile(base.add(o) as *const u64) };
    *off = off.wrapping_add(64);
}

/// 8-byte volatile stores of `len` bytes at `dst` (the write-combining copy), then a
/// store fence.
#[inline(always)]
fn store_then_fence(dst: *mut u8, len: usize, val: u64) {
    // SAFETY: the caller passes a window of at least `len` bytes, 8-aligned.
    unsafe { wc_store(dst, len, val) };
    store_fence();
}

impl MmioBench {
    /// The device it measures, as shown in `target` fields.
    pub fn target(&self) -> String {
        self.bar.to_string()
    }
}

impl Benchmark for MmioBench {
    fn name(&self) -> &'static str {
        "pcie.mmio"
    }

    fn subject(&self) -> Subject {
        Subject::Device {
            target: self.target(),
        }
    }

    fn cost(&self, ctx: &Context, _target: Option<&bench_core::memory::TargetSpec>) -> Cost {
        let mut c = Cost::new();
        // Uncached reads (about a microsecond each), uncached and write-combining writes.
        c.add(
            "MMIO read, write, write-combining copy",
            3,
            batches_s(ctx, BATCH, 1000.0),
        );
        c
    }

    fn run(&self, ctx: &Context, _input: Input<'_>) -> Result<Report, NotRun> {
        let (dev, bar) = self.validate().map_err(|e| Skip::new(e.to_string()))?;
        let window = self.window(Some(&bar)).max(64);
        let target = self.target();
        if let Some(&cpu) = ctx.cpus.first() {
            bench_core::pin::pin_current(cpu).map_err(|e| Skip::new(e.to_string()))?;
        }
        let mut rep = Report::default();
        let mut uc = self
            .map(false, window)
            .map_err(|e| Skip::new(e.to_string()))?;
        let mask = window - 1;
        let base_params = json!({
            "device": dev.address, "vendor": dev.vendor, "device_id": dev.device,
            "bar": bar.index, "bar_size_bytes": bar.size_bytes, "offset_bytes": self.offset,
            "window_bytes": window, "ops_per_batch": BATCH, "driver": dev.driver,
            "numa_node": dev.numa_node, "cpu": ctx.cpus.first(),
        });
        let push = |rep: &mut Report,
                    id: &str,
                    key: &str,
                    what: &str,
                    method: &str,
                    (d, counters): (Distribution, MeasurementCounters),
                    extra: serde_json::Value| {
            let mid = format!("pcie.mmio/{target}/{id}");
            let mut p = base_params.clone();
            if let (Some(o), Some(e)) = (p.as_object_mut(), extra.as_object()) {
                o.extend(e.clone());
            }
            rep.params.push(Param::new(
                key,
                d.p50,
                &target,
                format!("p50 of {what}"),
                vec![mid.clone()],
            ));
            rep.measurements.push(Measurement {
                id: mid,
                benchmark: "pcie.mmio".into(),
                target: target.clone(),
                parameters: p,
                unit: "ns".into(),
                method: method.into(),
                distribution: d,
                placement: None,
                counters: Some(counters),
            });
        };
        // Uncached dependent reads.
        let zero = std::hint::black_box(0u64);
        let (mut off, mut v) = (0usize, 0u64);
        let base = uc.as_ptr();
        let d = sample_batches(ctx, BATCH, || {
            chained_read(base, mask, &mut off, &mut v, zero)
        })
        .ok_or_else(|| Skip::new("no valid read samples"))?;
        std::hint::black_box(v);
        push(&mut rep, "read_uc_8b", "pcie_rtt_ns", "uncached 8-byte dependent reads",
            "dependent chain of uncached 8-byte reads through resourceN (each address depends on the previous value); batches of 32, timer overhead subtracted", d, json!({"op": "read", "mapping": "uc", "bytes": 8}));
        if !self.access.allow_write {
            rep.warnings.push(Warning {
                code: "mmio_readonly".into(),
                message: format!("{target}: write and write-combining costs not measured (reads only by default)"),
                remediation: "pass --allow-write if the BAR's contents may be overwritten".into(),
            });
            return Ok(rep);
        }
        let ptr = uc.as_mut_ptr();
        let mut i = 0usize;
        let d = sample_batches(ctx, BATCH, || {
            // SAFETY: (i*8) & mask < window, 8-aligned.
            unsafe { store_8b_volatile(ptr.add((i * 8) & mask & !7), i as u64) };
            i += 1;
        })
        .ok_or_else(|| Skip::new("no valid write samples"))?;
        store_fence();
        push(&mut rep, "write_uc_8b", "mmio_write_8b_ns", "uncached 8-byte writes",
            "posted uncached 8-byte writes through resourceN, batches of 32 (fence after the batch); timer overhead subtracted", d, json!({"op": "write", "mapping": "uc", "bytes": 8}));
        drop(uc);
        let mut wc = match self.map(true, window) {
            Ok(m) => m,
            Err(e) => {
                rep.warnings.push(Warning {
                    code: "mmio_wc".into(),
                    message: format!("{target}: write-combining copies not measured: {e}"),
                    remediation: String::new(),
                });
                return Ok(rep);
            }
        };
        let wptr = wc.as_mut_ptr();
        for size in WC_SIZES.into_iter().filter(|&s| s <= window) {
            let slots = (window / 256).max(1);
            let mut k = 0usize;
            let d = sample_batches(ctx, BATCH, || {
                // SAFETY: slot * 256 + size <= window.
                store_then_fence(unsafe { wptr.add((k % slots) * 256) }, size, k as u64);
                k += 1;
            })
            .ok_or_else(|| Skip::new("no valid write-combining samples"))?;
            push(&mut rep, &format!("wc_copy_{size}b"), &format!("pio_copy_{size}b_ns"),
                &format!("{size}-byte write-combining copies + sfence"),
                &format!("{size} bytes stored with 8-byte volatile stores through resourceN_wc, then sfence (the PIO/doorbell path); batches of 32, timer overhead subtracted"),
                d, json!({"op": "wc_copy", "mapping": "wc", "bytes": size}));
        }
        Ok(rep)
    }
}

/// MMIO costs on one BAR: uncached read round trip (pcie_rtt_ns); with --allow-write
/// also uncached writes and write-combining 8..256-byte copies (pio_copy_64b_ns).
#[derive(Debug, Clone, clap::Args)]
pub struct MmioArgs {
    /// A PCI BAR to measure with MMIO: pci:DOMAIN:BUS:DEV.FN/BAR (see `cxlchar pcie list`).
    /// Only reads unless --allow-write.
    #[arg(long, value_name = "pci:D:B:D.F/N", value_parser = parse_bar)]
    pub bar: Option<BarSpec>,
    /// Offset of the measured window in the BAR (bytes); needs --bar.
    #[arg(long, value_name = "OFFSET", default_value = "0", requires = "bar", value_parser = bench_core::units::parse_offset)]
    pub bar_offset: u64,
    /// Measure a BAR even when a kernel driver is bound to its device; needs --bar.
    #[arg(long, requires = "bar")]
    pub force: bool,
}

fn parse_bar(s: &str) -> Result<BarSpec, String> {
    s.parse()
        .map_err(|e: bench_core::pci::BarSpecError| e.to_string())
}

impl MmioArgs {
    /// The benchmark on `--bar`, validated (a bad BAR is an error before measuring);
    /// `None` without `--bar`.
    pub fn bench(&self, opts: &Options) -> Result<Option<MmioBench>, BarError> {
        let Some(bar) = &self.bar else {
            return Ok(None);
        };
        let b = MmioBench {
            bar: bar.clone(),
            offset: self.bar_offset,
            access: Access {
                allow_write: opts.allow_write,
                force: self.force,
            },
            root: "/".into(),
        };
        b.validate()?;
        Ok(Some(b))
    }
}

impl Setup for MmioArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        match self.bench(opts)? {
            Some(b) => Ok(Planned::one(b)),
            None => Err("cxlchar pcie mmio needs --bar pci:DOMAIN:BUS:DEV.FN/N".into()),
        }
    }

    /// In `all`, MMIO runs only on a BAR named with `--bar`; without one it is skipped.
    fn plan_all(&self, opts: &Options) -> Result<Planned, BoxError> {
        match self.bench(opts)? {
            Some(b) => Ok(Planned::one(b)),
            None => Ok(Planned::skip("pcie.mmio", "no BAR named: MMIO runs only on a BAR given with --bar pci:DOMAIN:BUS:DEV.FN/N (see `cxlchar pcie list`), since device registers can have side effects")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::write_fake_pci;

    fn bench(root: PathBuf, index: usize, allow_write: bool) -> MmioBench {
        MmioBench {
            bar: BarSpec {
                address: "0000:00:02.0".into(),
                index,
            },
            offset: 0,
            access: Access {
                allow_write,
                force: false,
            },
            root,
        }
    }

    #[test]
    fn validation_uses_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        assert!(bench(dir.path().into(), 2, false).validate().is_ok());
        assert!(bench(dir.path().into(), 3, false).validate().is_err());
    }

    /// Runs against the lab's ivshmem BAR (CXLCHAR_LAB_BAR=/sys/.../resource2).
    #[test]
    #[ignore = "needs a PCI BAR: runs in the emulated lab (ci/lab/run)"]
    fn lab_mmio_on_ivshmem_measures_reads_writes_and_wc() {
        let res = std::env::var("CXLCHAR_LAB_BAR").expect("CXLCHAR_LAB_BAR");
        let dev_dir = std::path::Path::new(&res).parent().unwrap();
        let address = dev_dir.file_name().unwrap().to_string_lossy().to_string();
        let b = MmioBench {
            bar: BarSpec { address, index: 2 },
            offset: 0,
            access: Access {
                allow_write: true,
                force: false,
            },
            root: "/".into(),
        };
        let ctx = Context::quick_local();
        let rep = b.run(&ctx, Input::Device).unwrap();
        let keys: Vec<&str> = rep.params.iter().map(|p| p.key.as_str()).collect();
        for k in [
            "pcie_rtt_ns",
            "mmio_write_8b_ns",
            "pio_copy_64b_ns",
            "pio_copy_256b_ns",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert!(rep.params.iter().all(|p| p.value >= 0.0));
        for m in &rep.measurements {
            let c = m
                .counters
                .as_ref()
                .expect("every MMIO measurement carries counters");
            assert!((1..=3).contains(&c.attempts));
        }
    }
}
