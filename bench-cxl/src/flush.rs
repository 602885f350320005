//! `pool.flush`: what it costs to write a buffer and make it visible in memory, by size
//! (1 B .. 128 KiB) and method (seed 002, "cache flush vs uncacheable").
//!
//! Each sample writes the whole buffer (`memset`, or non-temporal stores for the NT
//! method) and then makes it visible with the method; the sample is the time of both,
//! as in cMPI's microbenchmark. `stores` (no flush) is the reference row. Methods this
//! CPU lacks are skipped with the CPUID bit that is missing. The methods are the
//! architecture's ([`FlushMethod::ALL`]): clflush, clflushopt, clwb and NT stores on
//! x86_64; `dc civac`, `dc cvac` and `stnp` on AArch64 (each probed first: a kernel that
//! traps EL0 cache maintenance gives a skip with the signal). Writes to an uncacheable
//! (`resourceN` of a PCI BAR) and a write-combining (`resourceN_wc`) mapping are
//! measured when such a file is given (`uc_resource`) and writing is allowed;
//! otherwise they are skipped with the reason. The file is mapped through bench-core's
//! write guard: it must be a PCI device's `resourceN` file (a regular file is refused),
//! and a device with a kernel driver bound is refused unless `force`.

use crate::cacheline::{
    flush_range, invalidate_method, nt_fill, store_fence, FlushMethod, STORE_FENCE,
};
use crate::measurement;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Requirements,
    Setup,
};
use bench_core::counters::{self, CounterGroup, MeasurementCounters};
use bench_core::memory::{guard, Access, Region, Window, WindowSource};
use bench_core::params::Skipped;
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use bench_core::units::format_size;
use std::path::PathBuf;

/// Largest size measured.
pub const MAX_SIZE: usize = 128 * 1024;

/// Sizes measured: 1 B .. 128 KiB, powers of two.
pub fn sizes() -> Vec<usize> {
    (0..=17).map(|s| 1usize << s).collect()
}

/// A column of the flush table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Stores only, nothing flushed (the reference).
    Stores,
    /// A flush method.
    Flush(FlushMethod),
    /// Plain stores to an uncacheable mapping (`resourceN`).
    Uncacheable,
    /// Stores to a write-combining mapping (`resourceN_wc`), then sfence.
    WriteCombining,
}

impl Column {
    /// Every column, in output order.
    pub fn all() -> Vec<Column> {
        let mut v = vec![Column::Stores];
        v.extend(FlushMethod::ALL.map(Column::Flush));
        v.extend([Column::Uncacheable, Column::WriteCombining]);
        v
    }
    /// Name in keys and ids.
    pub fn name(self) -> &'static str {
        match self {
            Column::Stores => "stores",
            Column::Flush(m) => m.name(),
            Column::Uncacheable => "uc",
            Column::WriteCombining => "wc",
        }
    }
}

/// Short size label used in keys: `64b`, `4k`, `128k`.
pub fn size_label(size: usize) -> String {
    if size >= 1024 {
        format!("{}k", size / 1024)
    } else {
        format!("{size}b")
    }
}

/// The flush-cost benchmark.
#[derive(Debug, Clone, Default)]
pub struct FlushBench {
    /// A PCI BAR resource file (`/sys/bus/pci/devices/.../resource2`) to measure
    /// uncacheable writes on; its `_wc` sibling, if present, gives write-combining.
    pub uc_resource: Option<PathBuf>,
    /// The user allowed writing into `uc_resource` (its contents are destroyed).
    pub allow_write: bool,
    /// Use `uc_resource` even when a kernel driver is bound to its device (`--force`).
    pub force: bool,
    /// Where sysfs is read (`None`: `/`; tests use a fake tree).
    pub sysfs_root: Option<PathBuf>,
}

impl FlushBench {
    /// Why a column cannot be measured here, if it cannot.
    pub fn column_skip(&self, c: Column) -> Option<String> {
        match c {
            Column::Stores => None,
            Column::Flush(m) => m.available().err(),
            Column::Uncacheable | Column::WriteCombining => self.bar_window(c).err(),
        }
    }

    /// The BAR window a UC/WC column writes into, after the write guard: the file
    /// exists, writing is allowed, it is a PCI device's resource file, and no driver is
    /// bound to the device unless `force`. At most [`MAX_SIZE`] bytes of the BAR.
    fn bar_window(&self, c: Column) -> Result<Window, String> {
        let Some(p) = &self.uc_resource else {
            return Err(
                "no uncacheable/write-combining mapping offered: pass --uc-resource /sys/bus/pci/devices/<bdf>/resourceN (a PCI BAR such as ivshmem's; resourceN_wc gives write-combining) with --allow-write".into(),
            );
        };
        let p = if c == Column::WriteCombining {
            PathBuf::from(format!("{}_wc", p.display()))
        } else {
            p.clone()
        };
        if !p.exists() {
            return Err(format!("{} does not exist", p.display()));
        }
        let access = Access {
            allow_write: self.allow_write,
            force: self.force,
        };
        let root = self.root();
        let refused = |e: guard::MapError| e.to_string();
        guard::require_write(&p.display().to_string(), access).map_err(refused)?;
        let (bar, wc) = guard::check_bar_path(&p, &root).map_err(refused)?;
        let (_, info) = bar.resolve(&root, access, 0, 1).map_err(refused)?;
        Ok(Window {
            source: WindowSource::Bar { bar, wc },
            offset: 0,
            len: (info.size_bytes as usize).min(MAX_SIZE),
            write: true,
            magic: None,
        })
    }

    fn root(&self) -> PathBuf {
        self.sysfs_root.clone().unwrap_or_else(guard::system_root)
    }

    /// Maps a UC/WC column's BAR window (see [`FlushBench::bar_window`]).
    fn map_column(&self, c: Column) -> Result<(Region, String), String> {
        let w = self.bar_window(c)?;
        let access = Access {
            allow_write: self.allow_write,
            force: self.force,
        };
        let base = self.uc_resource.clone().unwrap_or_default();
        let on = if c == Column::WriteCombining {
            format!("{}_wc", base.display())
        } else {
            base.display().to_string()
        };
        let r = Region::map_window(&w, access, &self.root()).map_err(|e| e.to_string())?;
        Ok((r, on))
    }
}

fn samples(ctx: &Context, size: usize) -> usize {
    let base = ctx.effort.pool.flush_samples;
    if size >= 32 * 1024 {
        base / 2
    } else {
        base
    }
}

/// Times `n` samples of "write `size` bytes at `p` then make them visible with `c`",
/// after 3 untimed ones, with the counters of the sampling loop (per write + make-visible
/// operation, repeated up to [`counters::DEFAULT_MAX_ATTEMPTS`] times while disturbed).
/// Returns the repetitions per sample too.
fn time_cell(
    ctx: &Context,
    group: &mut CounterGroup,
    p: *mut u8,
    size: usize,
    c: Column,
    n: usize,
) -> (Vec<f64>, MeasurementCounters, usize) {
    // Small sizes repeat the write + flush a few times per sample (the timer's
    // resolution is ~10 ns in a VM), and as many times as a sample needs to last the
    // timer's shortest batch (timed on the warm-up); each repetition writes new values.
    let mut reps = (4096 / size).clamp(1, 16);
    let one = |i: usize, reps: usize| {
        for r in 0..reps {
            let byte = ((i * reps + r) as u8) | 1;
            match c {
                Column::Flush(FlushMethod::NtStoreSfence) => {
                    // SAFETY: p is 64-aligned with at least MAX_SIZE bytes mapped.
                    unsafe { nt_fill(p, size, byte) };
                    store_fence();
                }
                Column::Flush(m) => {
                    // SAFETY: p has at least `size` writable bytes.
                    unsafe { std::ptr::write_bytes(p, byte, size) };
                    // SAFETY: mapped range; the method was checked available by the caller.
                    unsafe { flush_range(m, p, size) };
                }
                Column::Stores | Column::Uncacheable => {
                    // SAFETY: p has at least `size` writable bytes.
                    unsafe { std::ptr::write_bytes(p, byte, size) };
                }
                Column::WriteCombining => {
                    // SAFETY: p has at least `size` writable bytes.
                    unsafe { std::ptr::write_bytes(p, byte, size) };
                    store_fence();
                }
            }
            // The stores must happen: the buffer is "read" here as far as the compiler knows.
            std::hint::black_box(p);
        }
    };
    let t0 = ctx.timer.start();
    for i in 0..3 {
        one(i, reps); // warm-up, not a sample
    }
    let t1 = ctx.timer.stop();
    let est = ctx.timer.elapsed_ns(t0, t1) / (3 * reps) as f64;
    reps = ctx.timer.batch_ops(est, 0.0, reps).min(1 << 16);
    let mut v = counters::sample_buffer(n);
    let (v, counters) = counters::measure_undisturbed(
        group,
        counters::DEFAULT_MAX_ATTEMPTS,
        &mut v,
        |v| {
            v.clear();
            for i in 3..n + 3 {
                let t0 = ctx.timer.start();
                one(i, reps);
                let t1 = ctx.timer.stop();
                v.push(ctx.timer.elapsed_ns(t0, t1) / reps as f64);
            }
        },
        |v| v.clone(),
    );
    (v, counters.with_per_op("op", (n * reps) as u64), reps)
}

impl Benchmark for FlushBench {
    fn name(&self) -> &'static str {
        "pool.flush"
    }
    fn requires(&self) -> Requirements {
        Requirements::default()
    }
    fn region_bytes(&self, _ctx: &Context, _target: &bench_core::memory::TargetSpec) -> usize {
        MAX_SIZE
    }

    fn memory(
        &self,
        ctx: &Context,
        target: &bench_core::memory::TargetSpec,
    ) -> bench_core::memory::budget::Need {
        let bytes = target.mapped_bytes(self.region_bytes(ctx, target), &ctx.topology);
        bench_core::memory::budget::Need::on_target(
            bytes,
            "the 128 KiB buffer written and made visible (the uncacheable and write-combining columns write a BAR window: device memory)",
        )
    }

    fn cost(&self, ctx: &Context, _target: Option<&bench_core::memory::TargetSpec>) -> Cost {
        let e = &ctx.plan.expect;
        let mut cost = Cost::new();
        for c in Column::all() {
            if self.column_skip(c).is_some() {
                continue;
            }
            // Each line written and made visible: about a memory access (an uncached
            // mapping: one per 8-byte store).
            let per_line_ns = match c {
                Column::Stores => 2.0,
                Column::Uncacheable => 8.0 * e.load_ns,
                _ => e.load_ns,
            };
            let mut each = 0.0;
            for size in sizes() {
                let reps = (4096 / size).clamp(1, 16);
                let n = samples(ctx, size) + 3;
                let run = (n * reps) as f64 * (size.div_ceil(64) as f64 * per_line_ns) * 1e-9;
                each += e.section_s(1, run);
            }
            cost.add(c.name(), 1, each);
        }
        cost
    }
    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        if region.len() < MAX_SIZE {
            return Err(NotRun::skip("region smaller than 128 KiB"));
        }
        let target = region.origin().to_string();
        let placement = region.placement().clone();
        let mut report = Report::default();
        let p = region.as_mut_ptr();
        let mut group = CounterGroup::open_with_timer(&ctx.timer);
        for c in Column::all() {
            if let Some(reason) = self.column_skip(c) {
                report.skipped.push(Skipped {
                    benchmark: format!("pool.flush/{}", c.name()),
                    target: target.clone(),
                    reason,
                });
                continue;
            }
            let (mut map, on) = match c {
                Column::Uncacheable | Column::WriteCombining => match self.map_column(c) {
                    Ok((m, on)) => (Some(m), on),
                    Err(reason) => {
                        report.skipped.push(Skipped {
                            benchmark: format!("pool.flush/{}", c.name()),
                            target: target.clone(),
                            reason,
                        });
                        continue;
                    }
                },
                _ => (None, target.clone()),
            };
            ctx.progress(&format!("pool.flush on {on}: {}", c.name()));
            let (ptr, cap) = match map.as_mut() {
                Some(m) => (m.as_mut_ptr(), m.len()),
                None => (p, MAX_SIZE),
            };
            for size in sizes().into_iter().filter(|&s| s <= cap) {
                let (v, counters, reps) =
                    time_cell(ctx, &mut group, ptr, size, c, samples(ctx, size));
                let Some(d) = Distribution::from_samples(&v) else {
                    return Err(NotRun::skip("the timer produced no usable samples"));
                };
                let id = format!("pool.flush/{target}/{}/{}", c.name(), format_size(size));
                let method = match c {
                    Column::Stores => "memset only (the reference: nothing flushed)".to_string(),
                    Column::Flush(m) => m.describe().to_string(),
                    Column::Uncacheable => format!("memset into the uncacheable mapping {on}"),
                    Column::WriteCombining => {
                        format!("memset into the write-combining mapping {on}, then {STORE_FENCE}")
                    }
                };
                let value = d.p50;
                if size == 64 || size == 4096 {
                    if let Column::Flush(_) | Column::Uncacheable | Column::WriteCombining = c {
                        report.params.push(Param::new(
                            format!("flush_{}_{}_ns", c.name(), size_label(size)),
                            value,
                            &target,
                            format!("p50 of: write {} then {}", format_size(size), method),
                            vec![id.clone()],
                        ));
                    }
                }
                if size == 64
                    && invalidate_method().ok().map(Column::Flush) == Some(c)
                    && !report.params.iter().any(|p| p.key == "flush_cost_ns")
                {
                    report.params.push(Param::new(
                        "flush_cost_ns",
                        value,
                        &target,
                        format!("p50 of: write one 64 B line then {} (clflushopt+sfence where the CPU has it, else clflush; dc civac + dsb sy on AArch64)", method),
                        vec![id.clone()],
                    ));
                }
                report.measurements.push(measurement(
                    id,
                    self.name(),
                    &target,
                    serde_json::json!({"size_bytes": size, "method": c.name(), "table": "flush_cost_ns", "repetitions_per_sample": reps}),
                    "ns",
                    format!("time of one sample: {method}"),
                    d,
                    if map.is_some() { None } else { Some(placement.clone()) },
                    counters,
                ));
            }
            ctx.point_done();
        }
        ctx.progress(&format!(
            "pool.flush on {target}: p50 ns, write + make visible\n{}",
            flush_table(&report)
        ));
        Ok(report)
    }
}

/// Renders the size x method table (p50 ns) of a flush report.
pub fn flush_table(report: &Report) -> String {
    let cols: Vec<&str> = Column::all().iter().map(|c| c.name()).collect();
    let mut out = format!("{:>8}", "size");
    for c in &cols {
        out += &format!("{c:>12}");
    }
    out.push('\n');
    for size in sizes() {
        out += &format!("{:>8}", format_size(size));
        for c in &cols {
            let v = report
                .measurements
                .iter()
                .find(|m| m.parameters["method"] == *c && m.parameters["size_bytes"] == size);
            match v {
                Some(m) => out += &format!("{:>12.1}", m.distribution.p50),
                None => out += &format!("{:>12}", "-"),
            }
        }
        out.push('\n');
    }
    out
}

/// Cost of writing 1 B..128 KiB and making it visible (clflush, clflushopt, clwb, NT).
#[derive(Debug, Clone, clap::Args)]
pub struct FlushArgs {
    /// PCI BAR resource file for uncacheable writes (its `_wc` sibling gives
    /// write-combining), e.g. /sys/bus/pci/devices/0000:00:04.0/resource2. Needs
    /// --allow-write.
    #[arg(long, value_name = "FILE")]
    pub uc_resource: Option<PathBuf>,
    /// Write into --uc-resource even when a kernel driver is bound to its device; needs
    /// --uc-resource.
    #[arg(long, requires = "uc_resource")]
    pub force: bool,
}

impl Setup for FlushArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        if self.uc_resource.is_some() && !opts.allow_write {
            return Err("--uc-resource maps a device BAR for writing, which destroys its contents; pass --allow-write to accept that".into());
        }
        let bench = FlushBench {
            uc_resource: self.uc_resource.clone(),
            allow_write: opts.allow_write,
            force: self.force,
            sysfs_root: None,
        };
        // A --uc-resource the user named is checked by the write guard here, before
        // anything runs (a PCI BAR's resource file, no driver bound unless --force): a
        // refusal is an error, not a skip. Only the write-combining column may still be
        // skipped (no resourceN_wc).
        if let Some(p) = &self.uc_resource {
            bench
                .bar_window(Column::Uncacheable)
                .map_err(|e| format!("--uc-resource {}: {e}", p.display()))?;
        }
        Ok(Planned::one(bench))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_its_region_in_whole_pages_of_the_target() {
        let ctx = Context::quick_local();
        let b = FlushBench::default();
        let anon = bench_core::memory::TargetSpec::Anon;
        let need = b.memory(&ctx, &anon);
        assert_eq!((need.bytes, need.on_target_bytes), (MAX_SIZE, MAX_SIZE));
        assert!(need.what.contains("128 KiB"), "{}", need.what);
        let huge = bench_core::memory::TargetSpec::Hugetlb(bench_core::memory::HugeSize::M2);
        assert_eq!(b.memory(&ctx, &huge).bytes, 2 << 20);
    }

    #[test]
    fn sizes_span_1b_to_128k() {
        let s = sizes();
        assert_eq!(s.len(), 18);
        assert_eq!(s[0], 1);
        assert_eq!(*s.last().unwrap(), MAX_SIZE);
        assert_eq!(size_label(64), "64b");
        assert_eq!(size_label(4096), "4k");
    }

    #[test]
    fn uc_wc_without_a_resource_are_skipped_with_what_to_do() {
        let b = FlushBench::default();
        let r = b.column_skip(Column::Uncacheable).unwrap();
        assert!(r.contains("--uc-resource"), "{r}");
        assert!(b.column_skip(Column::WriteCombining).is_some());
        assert!(b.column_skip(Column::Stores).is_none());
    }

    #[test]
    fn uc_resource_needs_allow_write() {
        let dir = tempfile::tempdir().unwrap();
        bench_core::pci::write_fake_pci(dir.path()).unwrap();
        // BAR0 of the ivshmem-like device: no driver, no resource0_wc.
        let f = dir
            .path()
            .join("sys/bus/pci/devices/0000:00:02.0/resource0");
        let mut b = FlushBench {
            uc_resource: Some(f),
            allow_write: false,
            force: false,
            sysfs_root: Some(dir.path().into()),
        };
        assert!(b
            .column_skip(Column::Uncacheable)
            .unwrap()
            .contains("--allow-write"));
        assert!(b
            .column_skip(Column::WriteCombining)
            .unwrap()
            .contains("does not exist"));
        b.allow_write = true;
        assert!(b.column_skip(Column::Uncacheable).is_none());
        let w = b.bar_window(Column::Uncacheable).unwrap();
        assert_eq!(w.len, 256, "the BAR's size, at most MAX_SIZE");
    }

    #[test]
    fn a_regular_file_is_not_a_uc_resource() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("resource2");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        let b = FlushBench {
            uc_resource: Some(f),
            allow_write: true,
            force: true,
            sysfs_root: Some(dir.path().into()),
        };
        let r = b.column_skip(Column::Uncacheable).unwrap();
        assert!(r.contains("not the resourceN file of a PCI device"), "{r}");
    }

    #[test]
    fn a_driver_bound_uc_resource_needs_force() {
        let dir = tempfile::tempdir().unwrap();
        bench_core::pci::write_fake_pci(dir.path()).unwrap();
        let f = dir
            .path()
            .join("sys/bus/pci/devices/0000:3b:00.0/resource1");
        std::fs::write(&f, "").unwrap();
        let mut b = FlushBench {
            uc_resource: Some(f),
            allow_write: true,
            force: false,
            sysfs_root: Some(dir.path().into()),
        };
        let r = b.column_skip(Column::Uncacheable).unwrap();
        assert!(r.contains("mlx5_core") && r.contains("--force"), "{r}");
        b.force = true;
        assert!(b.column_skip(Column::Uncacheable).is_none());
    }

    #[test]
    fn missing_cpu_features_are_skips_with_the_cpuid_bit() {
        let b = FlushBench::default();
        for m in FlushMethod::ALL {
            match (m.available(), b.column_skip(Column::Flush(m))) {
                (Ok(()), None) => {}
                (Err(a), Some(b)) => assert_eq!(a, b),
                other => panic!("inconsistent availability for {m:?}: {other:?}"),
            }
        }
    }
}
