//! `pool.flush-bw`: aggregated bandwidth of writing data and making it visible in memory
//! from many threads (seed 002, Table 1 "CXL Memory Sharing (with cache flushing)"
//! bandwidth, 9.5 GB/s).
//!
//! cMPI's microbenchmark: "each thread accesses 512 bytes with cache flushing on a dax
//! device region. We measure aggregated bandwidth." Here T pinned threads (every `--cpu`)
//! each walk through their own disjoint part of the target's region, one chunk (512 B by
//! default) at a time: memset-like stores (`ptr::write_bytes`) of the chunk, then the
//! flush method on its lines (clflushopt + sfence, clflush, clwb + sfence). `stores`
//! (the same stores, nothing flushed) is the reference, so the figure next to it says what
//! flushing costs. The region is the streaming DRAM working set of the threads' CPUs
//! ([`bench_core::sizing`]: 4 x every cache they can fill, confirmed by a DRAM check), so
//! that the stores reference also reaches memory; each point goes on through the parts
//! where the one before stopped, so no point writes lines the previous one left in the
//! caches. The threads are a crew ([`bench_core::crew`]): released together into windows,
//! each writing [`SAMPLE_BYTES_PER_THREAD`] (whole chunks) per call, over and over, until
//! all stop together; a window's bandwidth is the bytes all threads wrote in the time all
//! of them ran / that time (GB = 1e9 B; each byte counted once, as written: the write-back
//! the flush causes is not counted again). The best method and the reference are also measured at
//! every rung of the thread ladder below T (1, 2, 4, ... and each level of the machine: one
//! core, one L3, one node, one socket; [`bench_core::topology::ladder`]; fewer rungs with
//! `--quick`), each on its rung's CPUs.

use crate::cacheline::{flush_range, invalidate_method, FlushMethod, LINE};
use crate::measurement;
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Setup,
};
use bench_core::crew::{Crew, Member, Stop, Windows};
use bench_core::memory::budget::Need;
use bench_core::memory::{OnMemory, TargetSpec};
use bench_core::params::{Skipped, Warning};
use bench_core::plan::Cost;
use bench_core::topology::ladder::{Ladder, Threads};
use bench_core::units::{format_size, human_bytes, parse_positive_size, MIB};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Default chunk: the 512 bytes each of cMPI's threads writes and flushes at a time.
pub const DEFAULT_CHUNK: usize = 512;

/// Largest `--chunk`.
pub const MAX_CHUNK: usize = MIB;

/// Bytes each thread writes in one timed sample (rounded down to whole chunks, at most
/// its part of the region).
pub const SAMPLE_BYTES_PER_THREAD: usize = MIB;

/// A column of the flush-bandwidth table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Stores only, nothing flushed (the reference).
    Stores,
    /// Stores, then a flush method on the chunk's lines.
    Flush(FlushMethod),
}

impl Column {
    /// Every column, in output order (the flush methods that write back cached lines;
    /// non-temporal stores are `mem bandwidth`'s `nt_write_bw_gbs`).
    #[cfg(not(target_arch = "aarch64"))]
    pub const ALL: [Column; 4] = [
        Column::Stores,
        Column::Flush(FlushMethod::ClflushoptSfence),
        Column::Flush(FlushMethod::Clflush),
        Column::Flush(FlushMethod::ClwbSfence),
    ];
    /// Every column, in output order: AArch64's `dc civac` and `dc cvac`.
    #[cfg(target_arch = "aarch64")]
    pub const ALL: [Column; 3] = [
        Column::Stores,
        Column::Flush(FlushMethod::DcCivacDsb),
        Column::Flush(FlushMethod::DcCvacDsb),
    ];

    /// Name in keys, ids and `parameters.method`.
    pub fn name(self) -> &'static str {
        match self {
            Column::Stores => "stores",
            Column::Flush(m) => m.name(),
        }
    }

    /// What one chunk's step does, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Column::Stores => "stores (memset) only, nothing flushed (the reference)",
            Column::Flush(m) => m.describe(),
        }
    }

    /// Why this CPU cannot run the column, if it cannot (the missing CPUID bit).
    pub fn unavailable(self) -> Option<String> {
        match self {
            Column::Stores => None,
            Column::Flush(m) => m.available().err(),
        }
    }
}

/// Why a region cannot be split into chunks for a thread count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The chunk is not a positive multiple of a cache line.
    #[error("chunk of {0} bytes is not a positive multiple of {LINE} bytes")]
    Chunk(usize),
    /// No threads.
    #[error("no threads")]
    NoThreads,
    /// Each thread's part would be smaller than one chunk.
    #[error(
        "a region of {len} bytes gives {threads} threads less than one {chunk}-byte chunk each"
    )]
    TooSmall {
        /// Region bytes.
        len: usize,
        /// Threads.
        threads: usize,
        /// Chunk bytes.
        chunk: usize,
    },
}

/// How the threads walk the region: thread `t` owns bytes `[t x part, (t + 1) x part)`
/// and writes its chunks in address order, wrapping around at the end of its part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    /// Bytes written and flushed at a time.
    pub chunk: usize,
    /// Threads.
    pub threads: usize,
    /// Bytes each thread owns (whole chunks).
    pub part: usize,
    /// Chunks each thread writes per sample.
    pub chunks_per_sample: usize,
}

impl ChunkLayout {
    /// Splits `len` bytes among `threads` for `chunk`-byte steps, each thread writing at
    /// most `sample_bytes` (at least one chunk) per sample.
    pub fn new(
        len: usize,
        threads: usize,
        chunk: usize,
        sample_bytes: usize,
    ) -> Result<ChunkLayout, LayoutError> {
        if chunk == 0 || !chunk.is_multiple_of(LINE) {
            return Err(LayoutError::Chunk(chunk));
        }
        if threads == 0 {
            return Err(LayoutError::NoThreads);
        }
        let part = len / threads / chunk * chunk;
        if part == 0 {
            return Err(LayoutError::TooSmall {
                len,
                threads,
                chunk,
            });
        }
        let chunks_per_sample = (sample_bytes.min(part) / chunk).max(1);
        Ok(ChunkLayout {
            chunk,
            threads,
            part,
            chunks_per_sample,
        })
    }

    /// Chunks in one thread's part.
    pub fn chunks_per_part(&self) -> usize {
        self.part / self.chunk
    }

    /// Byte offset in the region of thread `t`'s `i`-th chunk (counting on across laps).
    pub fn offset(&self, t: usize, i: usize) -> usize {
        t * self.part + (i % self.chunks_per_part()) * self.chunk
    }

    /// Bytes one thread writes per sample.
    pub fn thread_bytes_per_sample(&self) -> usize {
        self.chunks_per_sample * self.chunk
    }

    /// Bytes all threads write per sample: the numerator of a sample's bandwidth.
    pub fn bytes_per_sample(&self) -> usize {
        self.threads * self.thread_bytes_per_sample()
    }

    /// Bytes the walk covers over all threads (the working set).
    pub fn working_set(&self) -> usize {
        self.threads * self.part
    }
}

/// The flush-bandwidth benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushBwBench {
    /// Bytes written and flushed at a time (a multiple of 64).
    pub chunk: usize,
    /// Thread counts (`None`: the thread ladder); the largest gives the headline figures.
    pub threads: Option<Threads>,
    /// Working set over all threads (`None`: the target's DRAM working set).
    pub size: Option<usize>,
}

impl Default for FlushBwBench {
    fn default() -> Self {
        FlushBwBench {
            chunk: DEFAULT_CHUNK,
            threads: None,
            size: None,
        }
    }
}

/// The working set (bytes) and the rule that chose it: `--size` as given, else the
/// streaming DRAM footprint of the `threads` threads' CPUs ([`Context::dram_stream_bytes`]:
/// 4 x the caches they can fill, at least 1 GiB, as `mem bandwidth`'s DRAM point), so
/// that even the stores reference leaves the caches.
fn working_set(
    size: Option<usize>,
    ctx: &Context,
    target: &impl OnMemory,
    threads: usize,
) -> (usize, String) {
    match size {
        Some(s) => (s, "given with --size".to_string()),
        None => {
            let (bytes, sizing) = ctx.dram_stream_bytes(target, &ctx.cpus_for(threads));
            let why = format!(
                "the streaming DRAM footprint of the threads' CPUs, as mem bandwidth's: {}",
                sizing.explain()
            );
            (bytes, why)
        }
    }
}

/// One planned point: a column at a thread count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// What each step does.
    pub column: Column,
    /// Threads.
    pub threads: usize,
}

/// The points of a run with `t` threads: every column at `t`, and the best method
/// (`best`) and the reference at each of the `lower` counts.
pub fn points(t: usize, lower: &[usize], best: Option<Column>) -> Vec<Point> {
    let mut v: Vec<Point> = Column::ALL
        .iter()
        .map(|&column| Point { column, threads: t })
        .collect();
    for &n in lower.iter().filter(|&&n| n < t) {
        for column in [Some(Column::Stores), best].into_iter().flatten() {
            v.push(Point { column, threads: n });
        }
    }
    v
}

/// The best available flush for the headline key: clflushopt + sfence, else clflush
/// (`dc civac` + `dsb sy` on AArch64).
pub fn best_column() -> Option<Column> {
    invalidate_method().ok().map(Column::Flush)
}

impl FlushBwBench {
    /// The rungs measured: the thread ladder of the run's CPUs, or `--threads`; the
    /// largest is the headline count.
    fn ladder(&self, ctx: &Context) -> Ladder {
        ctx.ladder(self.threads.as_ref())
    }

    fn threads(&self, ctx: &Context) -> usize {
        self.ladder(ctx).top().map_or(1, |r| r.threads).max(1)
    }

    /// Measures one point from chunk `start` on: the crew's windows, the layout, and the
    /// chunk where the walk stopped.
    fn measure(
        &self,
        ctx: &Context,
        base: *mut u8,
        len: usize,
        p: Point,
        start: usize,
    ) -> Result<(Windows, ChunkLayout, usize), NotRun> {
        let layout = ChunkLayout::new(len, p.threads, self.chunk, SAMPLE_BYTES_PER_THREAD)
            .map_err(|e| NotRun::skip(e.to_string()))?;
        let cursors: Vec<AtomicUsize> = (0..p.threads).map(|_| AtomicUsize::new(start)).collect();
        let base = base as usize;
        let column = p.column;
        let w = Crew::of(ctx, p.threads)
            .windows(ctx.effort.crew, &|t| {
                Ok(Walker {
                    base,
                    layout,
                    column,
                    t,
                    cursor: &cursors[t],
                })
            })
            .map_err(|e| NotRun::skip(e.reason()))?;
        let end = cursors
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .max()
            .unwrap_or(start);
        Ok((w, layout, end))
    }
}

/// One thread of a flush-bandwidth crew: its chunks in address order through its own part,
/// written and (for a flush column) made visible, [`ChunkLayout::chunks_per_sample`] of
/// them per call; `cursor` is where it goes on.
struct Walker<'a> {
    base: usize,
    layout: ChunkLayout,
    column: Column,
    t: usize,
    cursor: &'a AtomicUsize,
}

impl Member for Walker<'_> {
    type Error = std::convert::Infallible;

    fn call(&mut self, _stop: &Stop) -> Result<u64, Self::Error> {
        let l = self.layout;
        // Only thread t uses cursor t.
        let first = self
            .cursor
            .fetch_add(l.chunks_per_sample, Ordering::Relaxed);
        for i in first..first + l.chunks_per_sample {
            let ptr = (self.base + l.offset(self.t, i)) as *mut u8;
            let byte = (i as u8) | 1;
            // SAFETY: offset(t, i) + chunk <= threads x part <= len: the chunk lies in
            // thread t's own part of the mapped, writable region, which outlives the crew;
            // no other thread writes it.
            unsafe { std::ptr::write_bytes(ptr, byte, l.chunk) };
            if let Column::Flush(m) = self.column {
                // SAFETY: the chunk is mapped (above); the caller checked that the CPU has
                // the method.
                unsafe { flush_range(m, ptr, l.chunk) };
            }
            std::hint::black_box(ptr);
        }
        Ok(l.thread_bytes_per_sample() as u64)
    }
}

impl Benchmark for FlushBwBench {
    fn name(&self) -> &'static str {
        "pool.flush-bw"
    }

    fn region_bytes(&self, ctx: &Context, target: &TargetSpec) -> usize {
        working_set(self.size, ctx, target, self.threads(ctx)).0
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> Need {
        self.memory_need(ctx, target)
    }

    fn cost(&self, ctx: &Context, target: Option<&TargetSpec>) -> Cost {
        let target = target.unwrap_or(&TargetSpec::Anon);
        let ladder = self.ladder(ctx);
        let t = self.threads(ctx);
        let (len, _) = working_set(self.size, ctx, target, t);
        let lower: Vec<usize> = ladder.counts();
        let mut cost = Cost::new();
        for p in points(t, &lower, best_column()) {
            if p.column.unavailable().is_some() {
                continue;
            }
            let cpus = ladder
                .rung(p.threads)
                .map_or_else(|| ctx.cpus_for(p.threads), |r| r.cpus.clone());
            let per_thread = SAMPLE_BYTES_PER_THREAD.min(len / p.threads.max(1));
            let flush = matches!(p.column, Column::Flush(_));
            // Flushing each line costs about as much as writing it back from DRAM.
            let each = ctx.plan.expect.crew_point_s(
                &ctx.topology,
                &cpus,
                per_thread * if flush { 2 } else { 1 },
                &ctx.effort.crew,
                false,
            );
            cost.add(format!("{} {}t", p.column.name(), p.threads), 1, each);
        }
        cost
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        let t = self.threads(ctx);
        let (want, why) = working_set(self.size, ctx, region.origin(), t);
        let mut len = want.min(region.len());
        if let Err(e) = ChunkLayout::new(len, t, self.chunk, SAMPLE_BYTES_PER_THREAD) {
            return Err(NotRun::skip(e.to_string()));
        }
        let target = region.origin().to_string();
        let mut rep = Report::default();
        let check = match self.size {
            Some(_) => None,
            None => {
                let (i, confirmed) = self.dram_check(ctx, region, &mut rep, t, len, &why)?;
                len = confirmed;
                Some(i)
            }
        };
        let placement = region.placement().clone();
        let base = region.as_mut_ptr();
        if t == 1 {
            rep.warnings.push(Warning {
                code: "flush_bw_threads".into(),
                message: format!(
                    "{target}: one thread: the aggregated flush bandwidth is a single-thread figure"
                ),
                remediation: "give more CPUs with --cpu".into(),
            });
        }
        let best = best_column();
        self.skip_unavailable(&target, &mut rep);
        let sweep = Sweep {
            bench: self,
            ctx,
            ladder: self.ladder(ctx),
            target,
            why,
            placement,
            base,
            len,
            threads: t,
            best,
        };
        sweep.run(&mut rep)?;
        ctx.progress(&format!(
            "{} on {}: p50 GB/s, {} B chunks written + made visible\n{}",
            self.name(),
            sweep.target,
            self.chunk,
            flush_bw_table(&rep)
        ));
        if let Some(i) = check {
            // The keys at every thread count: their CPUs are among the check's.
            let keys: Vec<String> = rep.params.iter().map(|p| p.key.clone()).collect();
            ctx.sizing.cover(i, keys);
        }
        Ok(rep)
    }
}

/// The points of one run and what they share: the region's working set, the rule that
/// sized it, and the headline thread count and flush method.
struct Sweep<'a> {
    bench: &'a FlushBwBench,
    ctx: &'a Context,
    /// The rungs: each point's CPUs.
    ladder: Ladder,
    target: String,
    /// The rule that chose the working set (in every measurement's method).
    why: String,
    placement: bench_core::memory::Placement,
    base: *mut u8,
    /// The working set's bytes.
    len: usize,
    /// The headline thread count.
    threads: usize,
    best: Option<Column>,
}

impl Sweep<'_> {
    /// Measures every point this CPU can run, each going on where the one before stopped.
    fn run(&self, rep: &mut Report) -> Result<(), NotRun> {
        // Where the next point starts in each thread's part (chunks): where the last ended.
        let mut cursor = 0usize;
        for p in points(self.threads, &self.ladder.counts(), self.best) {
            if p.column.unavailable().is_some() {
                continue;
            }
            cursor = self.point(p, cursor, rep)?;
        }
        Ok(())
    }

    /// One point from chunk `cursor` on: its measurement and keys. Returns the chunk where
    /// it stopped.
    fn point(&self, p: Point, cursor: usize, rep: &mut Report) -> Result<usize, NotRun> {
        let (bench, target, why) = (self.bench, &self.target, &self.why);
        // The rung's CPUs: thread t on rung.cpus[t].
        let rung = self.ladder.rung(p.threads);
        let ctx = &match rung {
            Some(r) => self.ctx.with_cpus(&r.cpus),
            None => self.ctx.clone(),
        };
        let (w, layout, end) = bench.measure(ctx, self.base, self.len, p, cursor)?;
        let Some(d) = w.aggregate() else {
            return Err(NotRun::skip("no window in which every thread wrote"));
        };
        let bytes: u64 = w.used().iter().map(|f| f.bytes).sum();
        let counters = w.counters().with_per_op("byte", bytes);
        let id = format!(
            "{}/{target}/{}/{}t/{}",
            bench.name(),
            p.column.name(),
            p.threads,
            format_size(bench.chunk)
        );
        ctx.progress(&format!("{id}: {:.2} GB/s{}", d.p50, counters.summary()));
        ctx.point_done();
        rep.warnings.extend(w.warnings(target, &id));
        let method = format!(
            "each thread writes {} B chunks in address order through its own {} part of a {} working set ({why}), {} B per call; for each chunk: {}; bytes counted once as written; {}",
            bench.chunk,
            format_size(layout.part),
            format_size(layout.working_set()),
            layout.thread_bytes_per_sample(),
            p.column.describe(),
            w.method()
        );
        let noisy = w.noisy();
        for k in self.keys(p) {
            rep.params.push(
                Param::new(k, d.p50, target, method.clone(), vec![id.clone()]).noisy(noisy.clone()),
            );
        }
        rep.measurements.push(measurement(
            id,
            bench.name(),
            target,
            serde_json::json!({
                "method": p.column.name(),
                "threads": p.threads,
                "cpus": (0..p.threads).map(|i| ctx.cpus[i % ctx.cpus.len()]).collect::<Vec<_>>(),
                "rung": rung.map(|r| r.label.clone()),
                "chunk_bytes": bench.chunk,
                "part_bytes_per_thread": layout.part,
                "working_set_bytes": layout.working_set(),
                "working_set_rule": why,
                "chunks_per_call_per_thread": layout.chunks_per_sample,
                "crew": w.parameters(),
                "bytes_counted": "written (once; the flush's write-back is not counted again)",
                "table": "flush_bw_gbs",
            }),
            "GB/s",
            method,
            d,
            Some(self.placement.clone()),
            counters,
        ));
        Ok(end)
    }

    /// The keys of a point: each column's at the headline thread count, the best method's
    /// as `flush_bw_gbs` there and as `flush_bw_t{N}_gbs` at every count.
    fn keys(&self, p: Point) -> Vec<String> {
        let mut keys = Vec::new();
        if p.threads == self.threads {
            match p.column {
                Column::Stores => keys.push("flush_bw_stores_gbs".to_string()),
                Column::Flush(m) => keys.push(format!("flush_bw_{}_gbs", m.name())),
            }
            if Some(p.column) == self.best {
                keys.push("flush_bw_gbs".into());
            }
        }
        if Some(p.column) == self.best {
            keys.push(format!("flush_bw_t{}_gbs", p.threads));
        }
        keys
    }
}

impl FlushBwBench {
    /// Lists each column this CPU cannot run as skipped, with the missing CPUID bit.
    fn skip_unavailable(&self, target: &str, rep: &mut Report) {
        for c in Column::ALL {
            if let Some(reason) = c.unavailable() {
                rep.skipped.push(Skipped {
                    benchmark: format!("{}/{}", self.name(), c.name()),
                    target: target.to_string(),
                    reason,
                });
            }
        }
    }

    /// The DRAM check of `threads` threads' working set of `len` bytes: the covering check
    /// of this run (`mem bandwidth`'s, same CPUs) if there is one, else the stores
    /// reference at `len` and at a larger working set, the region grown for it. Returns
    /// the check's index in the run's book and the working set that stands.
    fn dram_check(
        &self,
        ctx: &Context,
        region: &mut bench_core::memory::Region,
        rep: &mut Report,
        threads: usize,
        len: usize,
        why: &str,
    ) -> Result<(usize, usize), NotRun> {
        use bench_core::dram_check::{self as dc, CheckInfo, Pattern};
        let target = region.origin().to_string();
        let cpus = ctx.cpus_for(threads);
        if let Some(i) = ctx.sizing.covering(&target, Pattern::Stream, &cpus, len) {
            return Ok((i, len));
        }
        let plan = check_plan(ctx, region.origin(), len);
        let p = Point {
            column: Column::Stores,
            threads,
        };
        let outcome = dc::run(plan, |bytes, pass| {
            region.grow(bytes, &ctx.topology).map_err(NotRun::skip)?;
            // One pass over the whole working set first: the timed samples then write
            // lines last touched a whole working set before, as a stream over it does.
            region.as_mut_slice()[..bytes].fill(pass);
            let (w, layout, _) = self.measure(ctx, region.as_mut_ptr(), bytes, p, 0)?;
            let Some(d) = w.aggregate() else {
                return Err(NotRun::skip("no window in which every thread wrote"));
            };
            let counters = w.counters();
            let id = format!(
                "{}/{target}/check/stores/{threads}t/{}{}",
                self.name(),
                format_size(bytes),
                bench_core::dram_check::pass_suffix(pass)
            );
            let v = d.p50;
            rep.measurements.push(measurement(
                id.clone(),
                self.name(),
                &target,
                serde_json::json!({"method": "stores", "threads": threads, "chunk_bytes": self.chunk, "working_set_bytes": layout.working_set(), "pass": pass, "crew": w.parameters()}),
                "GB/s",
                "the stores reference over a working set, a point of the DRAM check".into(),
                d,
                Some(region.placement().clone()),
                counters,
            ));
            Ok::<_, NotRun>((v, Some(id)))
        })?;
        let check = outcome.into_check(
            &plan,
            CheckInfo {
                target,
                benchmark: self.name().into(),
                pattern: Pattern::Stream,
                kernel: format!("stores in {} B chunks", self.chunk),
                cpus,
                unit: "GB/s".into(),
                sizing: why.into(),
                keys: vec![],
            },
        );
        rep.warnings.extend(dc::warning(&check));
        let size = check.reported_bytes;
        Ok((ctx.sizing.record_check(check), size))
    }
}

/// The plan of the DRAM check of `len` bytes of stores on `target`: the working set and
/// twice it, the larger within 1/[`bench_core::sizing::CHECK_MEMORY_SHARE_DIVISOR`] of
/// the memory the target offers.
fn check_plan(ctx: &Context, target: &impl OnMemory, len: usize) -> bench_core::dram_check::Plan {
    bench_core::dram_check::Plan {
        start_bytes: len,
        floor_bytes: len,
        max_bytes: ctx.check_span_limit(target).max(len),
        better: bench_core::dram_check::Better::Higher,
    }
}

impl FlushBwBench {
    /// What a run on `target` maps at most at once: the region, grown for the DRAM
    /// check's larger point (none with `--size`, or when a check of this run covers the
    /// working set); the walkers write into it and allocate nothing.
    fn memory_need(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let t = self.threads(ctx);
        let (want, _) = working_set(self.size, ctx, target, t);
        let placed = self.region_bytes(ctx, target);
        let len = want.min(placed);
        let covered = ctx
            .sizing
            .covering(
                &target.to_string(),
                bench_core::dram_check::Pattern::Stream,
                &ctx.cpus_for(t),
                len,
            )
            .is_some();
        let (grown, what) = match self.size {
            None if !covered => {
                let plan = check_plan(ctx, target, len);
                let larger = plan.first_larger_bytes();
                let largest = placed.max(plan.largest_bytes());
                (
                    placed.max(larger),
                    format!(
                        "the DRAM check's larger point, {} written by {t} thread(s) (twice their CPUs' streaming DRAM footprint); a check that finds the working set in a cache grows it, up to a {} region (half the memory the target offers at most)",
                        human_bytes(larger as u64),
                        human_bytes(target.mapped_bytes(largest, &ctx.topology) as u64)
                    ),
                )
            }
            Some(_) => (placed, format!("the working set of {t} thread(s) (--size)")),
            None => (
                placed,
                format!("the working set of {t} thread(s) (its DRAM check made by this run)"),
            ),
        };
        let region = target.mapped_bytes(grown, &ctx.topology);
        Need::on_target(
            region,
            format!("a {} region for {what}", human_bytes(region as u64)),
        )
        .with_fit("--size", 1, 0)
    }
}

/// Renders the threads x method table (p50 GB/s) of a flush-bandwidth report.
pub fn flush_bw_table(report: &Report) -> String {
    let mut threads: Vec<u64> = report
        .measurements
        .iter()
        .filter_map(|m| m.parameters["threads"].as_u64())
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let mut out = format!("{:>8}", "threads");
    for c in Column::ALL {
        out += &format!("{:>12}", c.name());
    }
    out.push('\n');
    for t in threads {
        out += &format!("{t:>8}");
        for c in Column::ALL {
            match report
                .measurements
                .iter()
                .find(|m| m.parameters["method"] == c.name() && m.parameters["threads"] == t)
            {
                Some(m) => out += &format!("{:>12.2}", m.distribution.p50),
                None => out += &format!("{:>12}", "-"),
            }
        }
        out.push('\n');
    }
    out
}

/// `--chunk`: a size that is a positive multiple of 64 bytes, at most 1 MiB.
fn parse_chunk(s: &str) -> Result<usize, String> {
    let v = parse_positive_size(s)?;
    if !v.is_multiple_of(LINE) {
        return Err(format!(
            "chunk must be a multiple of {LINE} bytes (whole cache lines are flushed)"
        ));
    }
    if v > MAX_CHUNK {
        return Err(format!("chunk must be at most {}", format_size(MAX_CHUNK)));
    }
    Ok(v)
}

/// Aggregated bandwidth of writing and flushing from many threads (seed 002 Table 1 "CXL
/// Memory Sharing (with cache flushing)" bandwidth, GB = 10^9 B/s).
///
/// T pinned threads (one per --cpu) each walk their own part of the target's DRAM
/// working set, writing a --chunk (512 B) with memset-like stores, then making it visible
/// with clflushopt+sfence, clflush or clwb+sfence (methods the CPU lacks are skipped);
/// "stores" (nothing flushed) is the reference. Bandwidth = bytes written by all threads /
/// the slowest thread's time. The best method and the reference are also measured at
/// each rung of the thread ladder below T (1, 2, 4, ... and each level of the machine;
/// 3 rungs with --quick).
#[derive(Debug, Clone, clap::Args)]
pub struct FlushBwArgs {
    /// Bytes each thread writes and flushes at a time: a multiple of 64, at most 1M
    /// (cMPI used 512).
    #[arg(long, value_name = "SIZE", default_value = "512", value_parser = parse_chunk)]
    pub chunk: usize,
    /// Thread counts, comma-separated (1,2,3), or `every` (1 .. the CPUs); the largest
    /// gives the headline figures (default: the thread ladder up to every --cpu).
    #[arg(long, value_name = "LIST|every")]
    pub threads: Option<Threads>,
    /// Working set over all threads (default: the target's DRAM working set, 4 x the
    /// caches the measuring CPUs can fill, at least 64M, checked by the DRAM check; the
    /// same with --quick). A given size is measured as given, without the check.
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub size: Option<usize>,
}

impl Setup for FlushBwArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        let cpus = opts.cpus.len();
        if let Some(t) = &self.threads {
            t.check("--threads", "thread", cpus)?;
        }
        if let Some(s) = self.size {
            let t = self
                .threads
                .as_ref()
                .and_then(|t| t.counts(cpus).into_iter().max())
                .unwrap_or(cpus)
                .max(1);
            ChunkLayout::new(s, t, self.chunk, SAMPLE_BYTES_PER_THREAD)
                .map_err(|e| format!("--size {}: {e}", format_size(s)))?;
        }
        Ok(Planned::one(FlushBwBench {
            chunk: self.chunk,
            threads: self.threads.clone(),
            size: self.size,
        }))
    }
}

#[cfg(test)]
mod tests;
