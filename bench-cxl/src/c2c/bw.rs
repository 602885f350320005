//! `pool.c2c`'s cache-to-cache bandwidth (Intel MLC's `--c2c_bandwidth`): for each pair
//! of the latency classes, one CPU (the writer) fills a buffer with plain stores, so that
//! every line of it is Modified in the writer's cache, and hands it over through a flag;
//! the other (the reader) reads every line once with the streaming read kernel, timed on
//! the reader, and hands it back; in rounds, then the roles reverse.
//!
//! * **Buffer**: half the writer's own L2 instance (sysfs; CPU 0's L2 where sysfs lists
//!   none for the writer), in whole 4 KiB pages, at most [`MAX_BUFFER_BYTES`]. Half, so
//!   that the lines stay in the writer's L2: on 4 KiB pages the buffer's physical pages
//!   fall on the L2's sets unevenly, and a buffer of the whole L2 would see some lines
//!   evicted to the L3 (read from there, not from the writer's cache); half leaves room
//!   for that, the stack, the flag and the page tables, and is still 8 to 16 times an L1.
//! * **Rounds**: the latency's samples per pair (40, 10 with `--quick`) per direction,
//!   after one untimed round; in round `k` the writer stores `k`'s byte into every byte,
//!   so every round changes every line.
//! * **Figure**: bytes read / the reader's time of the read ([`gbs`]; GB = 10^9 B), per
//!   round; a direction's measurement holds the rounds' distribution; a class's key
//!   (`c2c_bw_<class>_gbs`) is the median over its pairs, both directions, of their p50s.
//!
//! The two threads alternate rather than run at once, so this is a pair driver like the
//! ping-pong's, not the crew's rounds (where every thread works in every round); its
//! attempts are judged as the crew judges its rounds ([`bench_core::crew::evidence`]).

use super::{class_key, C2cBench, Pairs, STOP};
use crate::measurement;
use bench_core::bench::{Context, NotRun, Param, Report};
use bench_core::counters::{self, CounterGroup, MeasurementCounters, ThreadCounts};
use bench_core::kernels::{self, Isa, IsaSet};
use bench_core::memory::{Placement, Region};
use bench_core::params::{Measurement, Skipped};
use bench_core::plan::{Cost, Expect};
use bench_core::stats::{median, Distribution};
use bench_core::topology::pairs::{ClassPairs, PairClass};
use bench_core::topology::Topology;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the buffer starts in the region: after the page of the ping-pong's line (the
/// line at offset 0 is the hand-off flag here too).
pub const BUFFER_OFFSET: usize = 4096;
/// The buffer's unit: whole pages.
const GRANULE: usize = 4096;
/// The largest buffer, whatever sysfs says an L2 holds (today's largest L2 instances
/// are 4 MiB).
pub const MAX_BUFFER_BYTES: usize = 32 << 20;
/// The buffer's share of the writer's L2: 1 / this.
pub const L2_SHARE: usize = 2;
/// How long one thread of a pair waits for the other before it gives up.
const STALL: Duration = Duration::from_secs(10);

/// Where a CPU's L2 size comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Source {
    /// Its own L2 instance (sysfs `cpuN/cache/index*`).
    Own,
    /// CPU 0's L2 (sysfs lists no L2 instance of this CPU).
    Cpu0,
}

impl L2Source {
    /// In words, for the measurement's parameters.
    pub fn describe(self) -> &'static str {
        match self {
            L2Source::Own => "its own L2 instance (sysfs)",
            L2Source::Cpu0 => "CPU 0's L2 (sysfs lists no L2 instance of this CPU)",
        }
    }
}

/// A writer's L2: its size and where that comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterL2 {
    /// Bytes.
    pub bytes: usize,
    /// Where it comes from.
    pub source: L2Source,
}

/// The buffer a writer with an L2 of `l2` bytes fills: 1 / [`L2_SHARE`] of it in whole
/// pages, at least one page, at most [`MAX_BUFFER_BYTES`].
pub fn buffer_bytes(l2: usize) -> usize {
    (l2 / L2_SHARE / GRANULE * GRANULE).clamp(GRANULE, MAX_BUFFER_BYTES)
}

/// The L2 of each of `cpus` that has one: its own instance, else CPU 0's. One pass over
/// the instances (each list parsed once): the work grows with the CPUs listed.
pub fn l2_of(topo: &Topology, cpus: &[usize]) -> BTreeMap<usize, WriterL2> {
    let mut wanted = cpus.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut of = BTreeMap::new();
    for c in topo
        .cache_instances
        .iter()
        .filter(|c| c.level == 2 && c.kind != "Instruction" && c.size_bytes > 0)
    {
        for cpu in bench_core::pin::parse_cpu_list(&c.cpus).unwrap_or_default() {
            if wanted.binary_search(&cpu).is_ok() {
                of.entry(cpu).or_insert(WriterL2 {
                    bytes: c.size_bytes,
                    source: L2Source::Own,
                });
            }
        }
    }
    if let Some(bytes) = topo.cache_bytes(2).filter(|&b| b > 0) {
        for cpu in wanted {
            of.entry(cpu).or_insert(WriterL2 {
                bytes,
                source: L2Source::Cpu0,
            });
        }
    }
    of
}

/// The largest buffer a writer among `cpus` fills; `None` when no L2 is known.
pub fn largest_buffer(topo: &Topology, cpus: &[usize]) -> Option<usize> {
    l2_of(topo, cpus)
        .values()
        .map(|l| buffer_bytes(l.bytes))
        .max()
}

/// GB/s of `bytes` read in `ns` nanoseconds (bytes per ns = 10^9 B/s); NaN for a time
/// that is not positive (never summarized: [`Distribution::from_samples`]).
pub fn gbs(bytes: usize, ns: f64) -> f64 {
    if ns > 0.0 {
        bytes as f64 / ns
    } else {
        f64::NAN
    }
}

/// The buffer a pair passes between its threads: part of the region, written by one
/// thread and read by the other in turn, the flag saying whose turn it is.
#[derive(Debug, Clone, Copy)]
struct Shared {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the pointer is into the region, which outlives the scoped threads that use it;
// the threads touch the bytes only in turn, ordered by the flag's release / acquire.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    /// The bytes, to write.
    ///
    /// # Safety
    /// The caller's turn: no other view of the bytes is used until it hands them over.
    unsafe fn bytes_mut<'a>(self) -> &'a mut [u8] {
        // SAFETY: ptr..ptr+len is inside the region (checked when built); the caller
        // holds the turn.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The bytes, to read.
    ///
    /// # Safety
    /// The caller's turn: nobody writes the bytes until it hands them over.
    unsafe fn bytes<'a>(self) -> &'a [u8] {
        // SAFETY: as for `bytes_mut`; no writer while the caller holds the turn.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// The byte the writer stores in round `k`: consecutive rounds differ.
fn fill(k: u64) -> u8 {
    (k % 255) as u8 + 1
}

/// Waits until `flag` holds `want`: false when it holds STOP or the other thread has
/// not moved for [`STALL`] (the clock is read only after a while of spinning).
fn wait_for(flag: &AtomicU64, want: u64) -> bool {
    let mut since: Option<Instant> = None;
    let mut spins = 0u32;
    loop {
        match flag.load(Ordering::Acquire) {
            v if v == want => return true,
            STOP => return false,
            _ => {}
        }
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(4096) && since.get_or_insert_with(Instant::now).elapsed() > STALL {
            return false;
        }
        std::hint::spin_loop();
    }
}

/// The writer's side of `rounds` + 1 rounds (the first untimed): wait for its turn
/// (`2k`), store round `k`'s byte into every byte with the write kernel's plain stores,
/// hand over (`2k + 1`). False when the reader stopped.
fn write_rounds(flag: &AtomicU64, buf: Shared, isa: Isa, rounds: u64) -> bool {
    for k in 0..=rounds {
        if !wait_for(flag, 2 * k) {
            return false;
        }
        // SAFETY: the flag holds 2k: the reader is done with round k - 1 and reads
        // nothing until this thread stores 2k + 1.
        let bytes = unsafe { buf.bytes_mut() };
        kernels::write(isa, false, bytes, fill(k));
        flag.store(2 * k + 1, Ordering::Release);
    }
    true
}

/// The reader's round `k`: wait for the writer's hand-over (`2k + 1`), read every line
/// (timed), check the first and last byte are the writer's, hand back (`2k + 2`).
/// Returns the read's time in ns.
fn read_round(
    ctx: &Context,
    flag: &AtomicU64,
    buf: Shared,
    isa: Isa,
    k: u64,
) -> Result<f64, String> {
    if !wait_for(flag, 2 * k + 1) {
        return Err(format!("the writer stopped before round {k}"));
    }
    // SAFETY: the flag holds 2k + 1: the writer is done with round k and writes nothing
    // until this thread stores 2k + 2.
    let bytes = unsafe { buf.bytes() };
    let t0 = ctx.timer.start();
    let x = kernels::read(isa, bytes);
    let t1 = ctx.timer.stop();
    std::hint::black_box(x);
    let want = fill(k);
    let seen = (bytes[0], bytes[bytes.len() - 1]);
    if seen != (want, want) {
        flag.store(STOP, Ordering::SeqCst);
        return Err(format!(
            "round {k}: the reader found bytes {seen:?} where the writer stored {want}: the hand-over is broken"
        ));
    }
    flag.store(2 * k + 2, Ordering::Release);
    Ok(ctx.timer.elapsed_ns(t0, t1))
}

/// One attempt: the writer on a thread of its own pinned to `writer`, the reader on the
/// calling thread (pinned to `reader` by the caller); the reader's timed rounds counted
/// (the first, untimed round before the count), the writer's whole loop as a helper's.
#[allow(clippy::too_many_arguments)]
fn transfer_once<'v>(
    ctx: &Context,
    group: &mut CounterGroup,
    v: &'v mut Vec<f64>,
    flag: &AtomicU64,
    buf: Shared,
    isa: Isa,
    (writer, reader): (usize, usize),
    rounds: u64,
) -> Result<(&'v Vec<f64>, Vec<ThreadCounts>), String> {
    flag.store(0, Ordering::SeqCst);
    v.clear();
    let out = std::thread::scope(|s| {
        // The writer's own failure carries its reason; `None`: the reader stopped it.
        let w = s.spawn(move || {
            if bench_core::pin::pin_current(writer).is_err() {
                flag.store(STOP, Ordering::SeqCst);
                return Err(Some(format!("could not pin the writer to CPU {writer}")));
            }
            let mut g = CounterGroup::open();
            match g.count(|| write_rounds(flag, buf, isa, rounds)) {
                (true, c) => Ok(c),
                (false, _) => Err(None),
            }
        });
        let ours = read_round(ctx, flag, buf, isa, 0).and_then(|_| {
            let (r, c) = group.count(|| {
                for k in 1..=rounds {
                    v.push(read_round(ctx, flag, buf, isa, k)?);
                }
                Ok::<(), String>(())
            });
            r.map(|()| c)
        });
        if ours.is_err() {
            flag.store(STOP, Ordering::SeqCst);
        }
        let theirs = w
            .join()
            .unwrap_or_else(|_| Err(Some("the writer panicked".into())));
        match (ours, theirs) {
            (Ok(o), Ok(t)) => Ok((o, t)),
            // A writer that could not go on stopped the reader: its reason is the cause.
            (_, Err(Some(why))) | (Err(why), _) => Err(why),
            (Ok(_), Err(None)) => Err(format!("the writer on CPU {writer} stopped early")),
        }
    });
    let (ours, theirs) = out?;
    Ok((
        v,
        vec![
            ThreadCounts::measuring(format!("reader on CPU {reader}"), ours),
            ThreadCounts::helper(format!("writer on CPU {writer}"), theirs),
        ],
    ))
}

/// The reader's time of each of `rounds` timed reads (ns) of `buf`, written by `writer`
/// before each, with the counter evidence (repeated while disturbed, judged as the
/// crew's rounds, up to [`counters::DEFAULT_MAX_ATTEMPTS`] attempts).
fn transfer(
    ctx: &Context,
    flag: &AtomicU64,
    buf: Shared,
    isa: Isa,
    (writer, reader): (usize, usize),
    rounds: u64,
) -> Result<(Vec<f64>, MeasurementCounters), String> {
    bench_core::pin::pin_current(reader).map_err(|e| format!("pinning to CPU {reader}: {e}"))?;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let mut v = counters::sample_buffer(rounds as usize);
    let out = counters::try_retry_judged(
        counters::DEFAULT_MAX_ATTEMPTS,
        || {
            transfer_once(
                ctx,
                &mut group,
                &mut v,
                flag,
                buf,
                isa,
                (writer, reader),
                rounds,
            )
            .map(|(v, threads)| (v.clone(), threads))
        },
        bench_core::crew::evidence::clean,
    );
    let _ = bench_core::pin::pin_current(ctx.cpus[0]);
    let (v, c, _) = out?;
    Ok((v, c.with_per_op("byte", rounds * buf.len as u64)))
}

/// One direction measured: (class, writer, reader, p50 GB/s, id, disturbed).
type Cell = (PairClass, usize, usize, f64, String, bool);

/// What every direction of a run shares: the flag, the start of the buffer, the ISA,
/// the rounds, the target and the region's placement.
struct Rig<'r> {
    flag: &'r AtomicU64,
    base: *mut u8,
    isa: Isa,
    rounds: u64,
    target: String,
    placement: Placement,
}

impl C2cBench {
    /// The bandwidth of every pair of `classes`, both directions, on `region`: a
    /// measurement per direction, one per class, and the classes' keys. What cannot run
    /// here (no L2 known, no vector ISA, a direction that fails) is recorded in `skipped`,
    /// and the latencies measured before it are kept.
    pub(super) fn bandwidth(
        &self,
        ctx: &Context,
        region: &mut Region,
        classes: &[ClassPairs],
        report: &mut Report,
    ) -> Result<(), NotRun> {
        let target = region.origin().to_string();
        let skip = |report: &mut Report, reason: String| {
            report.skipped.push(Skipped {
                benchmark: "pool.c2c/bw".into(),
                target: target.clone(),
                reason,
            })
        };
        let l2 = l2_of(&ctx.topology, &ctx.cpus);
        let Some(largest) = l2.values().map(|l| buffer_bytes(l.bytes)).max() else {
            skip(report, "the cache-to-cache bandwidth sizes its buffer to the writer's L2, and sysfs gives no L2 size for the run's CPUs".into());
            return Ok(());
        };
        let isa = match IsaSet::detect().choose(None) {
            Ok(i) => i,
            Err(e) => {
                skip(report, e.to_string());
                return Ok(());
            }
        };
        if region.len() < BUFFER_OFFSET + largest {
            return Err(NotRun::failed(format!(
                "the region of {} bytes cannot hold the {largest}-byte buffer",
                region.len()
            )));
        }
        let placement = region.placement().clone();
        let base = region.as_mut_ptr();
        // SAFETY: offset 0 is an aligned AtomicU64 of the region's first page, which only
        // this benchmark touches while the borrow lasts.
        let flag = unsafe { &*(base as *const AtomicU64) };
        let rig = Rig {
            flag,
            base,
            isa,
            rounds: ctx.effort.pool.c2c.0.max(1) as u64,
            target: target.clone(),
            placement,
        };
        let mut cells: Vec<Cell> = Vec::new();
        let mut unknown: Vec<usize> = Vec::new();
        'pairs: for cp in classes {
            for &(a, b) in &cp.pairs {
                for (w, r) in [(a, b), (b, a)] {
                    let Some(wl2) = l2.get(&w).copied() else {
                        unknown.push(w);
                        continue;
                    };
                    match direction(ctx, &rig, (cp.class, w, r), wl2) {
                        Ok((m, cell)) => {
                            report.measurements.push(m);
                            cells.push(cell);
                        }
                        Err(why) => {
                            skip(report, format!("cache-to-cache bandwidth from CPU {w} to CPU {r}: {why}; the pairs after it are not measured"));
                            break 'pairs;
                        }
                    }
                }
                ctx.point_done();
            }
        }
        if !unknown.is_empty() {
            unknown.sort_unstable();
            unknown.dedup();
            skip(report, format!("no L2 size known for writer CPU(s) {} (sysfs): their directions are not measured", bench_core::pin::format_cpu_list(&unknown)));
        }
        if self.pairs == Pairs::All {
            let flat: Vec<(usize, usize, f64)> = cells.iter().map(|c| (c.1, c.2, c.3)).collect();
            ctx.progress(&format!(
                "pool.c2c cache-to-cache bandwidth (GB/s, p50; row writer, column reader):\n{}",
                direction_table(&ctx.cpus, &flat)
            ));
        }
        class_figures((&rig.target, &rig.placement), isa, classes, &cells, report);
        Ok(())
    }
}

/// One direction: `w` writes a buffer of half its L2 (`wl2`), `r` reads it, the rig's
/// rounds; its measurement and its cell.
fn direction(
    ctx: &Context,
    rig: &Rig<'_>,
    (class, w, r): (PairClass, usize, usize),
    wl2: WriterL2,
) -> Result<(Measurement, Cell), String> {
    let len = buffer_bytes(wl2.bytes);
    // SAFETY: BUFFER_OFFSET + len is within the region (the caller checked it for the
    // largest buffer of the run's CPUs, which this one is at most).
    let ptr = unsafe { rig.base.add(BUFFER_OFFSET) };
    let buf = Shared { ptr, len };
    ctx.progress(&format!(
        "pool.c2c on {}: bw {} {w}->{r}",
        rig.target,
        class.name()
    ));
    let (times, counters) = transfer(ctx, rig.flag, buf, rig.isa, (w, r), rig.rounds)?;
    let per_round: Vec<f64> = times.iter().map(|&ns| gbs(len, ns)).collect();
    let d = Distribution::from_samples(&per_round).ok_or("the timer produced no usable samples")?;
    let id = format!("pool.c2c/{}/bw/{w}-{r}", rig.target);
    let cell = (class, w, r, d.p50, id.clone(), counters.disturbed);
    let m = direction_measurement(
        id,
        (&rig.target, &rig.placement),
        (class, w, r),
        (wl2, len, rig.rounds, rig.isa),
        d,
        counters,
    );
    Ok((m, cell))
}

/// The measurement of one direction.
fn direction_measurement(
    id: String,
    (target, placement): (&str, &Placement),
    (class, w, r): (PairClass, usize, usize),
    (wl2, len, rounds, isa): (WriterL2, usize, u64, Isa),
    d: Distribution,
    counters: MeasurementCounters,
) -> Measurement {
    measurement(
        id,
        "pool.c2c",
        target,
        serde_json::json!({
            "kind": "bw", "instruction": instruction(isa), "isa": isa.name(),
            "cpu_a": w, "cpu_b": r, "writer_cpu": w, "reader_cpu": r,
            "pair_class": class.name(), "size_bytes": len,
            "writer_l2_bytes": wl2.bytes, "writer_l2": wl2.source.describe(),
            "rounds": rounds,
        }),
        "GB/s",
        format!(
            "cache-to-cache bandwidth from CPU {w} to CPU {r} ({}): per round, CPU {w} stores every byte of a {len}-byte buffer (1/{L2_SHARE} of its {}-byte L2: the lines Modified in its cache) and hands it over through a flag, CPU {r} reads every line once; the buffer's bytes / CPU {r}'s time of the read, GB = 1e9 B; {rounds} rounds after an untimed one; distribution over the rounds",
            class.describe(),
            wl2.bytes
        ),
        d,
        Some(placement.clone()),
        counters,
    )
}

/// The instructions of a round, in words.
fn instruction(isa: Isa) -> String {
    format!(
        "writer: plain (temporal) stores, {}; reader: {} vector loads ({} B)",
        isa.store(),
        isa.name(),
        isa.width_bytes()
    )
}

/// Per class: a summary measurement (the directions' p50s: median, min, max) and its
/// key where the models read one (`c2c_bw_<class>_gbs`), flagged noisy where a direction
/// stayed disturbed after its retries.
fn class_figures(
    (target, placement): (&str, &Placement),
    isa: Isa,
    classes: &[ClassPairs],
    cells: &[Cell],
    report: &mut Report,
) {
    for cp in classes {
        let of: Vec<&Cell> = cells.iter().filter(|c| c.0 == cp.class).collect();
        let p50s: Vec<f64> = of.iter().map(|c| c.3).collect();
        let ids: Vec<String> = of.iter().map(|c| c.4.clone()).collect();
        let Some(d) = Distribution::from_samples(&p50s) else {
            continue;
        };
        let med = median(&p50s).unwrap_or(f64::NAN);
        let pairs = of.len().div_ceil(2);
        report.measurements.push(Measurement {
            id: format!("pool.c2c/{target}/bw/class/{}", cp.class.name()),
            benchmark: "pool.c2c".into(),
            target: target.into(),
            parameters: serde_json::json!({
                "kind": "bw", "instruction": instruction(isa), "isa": isa.name(),
                "pair_class": cp.class.name(), "pairs_measured": pairs, "pairs_in_class": cp.total,
                "directions_measured": of.len(),
                "median_gbs": med, "min_gbs": d.min, "max_gbs": d.max,
                "directions": of.iter().map(|c| format!("{}->{}", c.1, c.2)).collect::<Vec<_>>(),
                "summary_of": ids.clone(),
            }),
            unit: "GB/s".into(),
            method: format!(
                "the p50 cache-to-cache bandwidth of {} directions ({pairs} of the {} CPU pairs of the class, {}, each way), picked spread over the machine with the run's seed; distribution over those directions",
                of.len(),
                cp.total,
                cp.class.describe()
            ),
            distribution: d,
            placement: Some(placement.clone()),
            counters: None,
        });
        let Some(stem) = class_key(cp.class) else {
            continue;
        };
        let disturbed = of.iter().filter(|c| c.5).count();
        let noisy = (disturbed > 0).then(|| {
            format!(
                "{disturbed} of {} directions stayed disturbed after their retries",
                of.len()
            )
        });
        report.params.push(
            Param::new(
                key(stem),
                med,
                target,
                format!(
                    "median over {} directions ({pairs} of the {} CPU pairs that are {}, each way) of the p50 cache-to-cache bandwidth: bytes of a buffer of half the writer's L2, written with plain stores, read by the other CPU / the reader's time of the read",
                    of.len(),
                    cp.total,
                    cp.class.describe()
                ),
                ids,
            )
            .noisy(noisy),
        );
    }
}

/// The key of a class stem (`same_llc`): `c2c_bw_same_llc_gbs`.
pub fn key(stem: &str) -> String {
    format!("c2c_bw_{stem}_gbs")
}

/// A matrix of directions (row: writer, column: reader), every CPU a row and a column,
/// the diagonal blank, `-` where a direction was not measured.
pub fn direction_table(cpus: &[usize], cells: &[(usize, usize, f64)]) -> String {
    let mut s = String::from("     ");
    for c in cpus {
        s += &format!("{c:>8}");
    }
    s.push('\n');
    for r in cpus {
        s += &format!("{r:>4}:");
        for c in cpus {
            if r == c {
                s += &format!("{:>8}", "");
                continue;
            }
            match cells.iter().find(|x| x.0 == *r && x.1 == *c) {
                Some(x) => s += &format!("{:>8.1}", x.2),
                None => s += &format!("{:>8}", "-"),
            }
        }
        s.push('\n');
    }
    s
}

/// What the bandwidth adds to the plan: a point per pair of each class (both directions:
/// the untimed round and the timed rounds, each round a pass of the writer and one of the
/// reader over the buffer, priced as lines moving between two cores, and two hand-overs),
/// each direction a section repeated while disturbed. Nothing where no L2 is known (the
/// run skips it).
pub(super) fn cost(ctx: &Context, counts: &[(PairClass, usize)], per_class: usize) -> Cost {
    let mut cost = Cost::new();
    let Some(buffer) = largest_buffer(&ctx.topology, &ctx.cpus) else {
        return cost;
    };
    let rounds = ctx.effort.pool.c2c.0.max(1);
    let e = &ctx.plan.expect;
    for &(class, total) in counts {
        let each = 2.0 * direction_s(e, buffer, rounds, class == PairClass::CrossSocket);
        cost.add(
            format!("bw {} pairs", class.name()),
            total.min(per_class),
            each,
        );
    }
    cost
}

/// Seconds of one direction of `rounds` timed rounds over `buffer` bytes.
pub fn direction_s(e: &Expect, buffer: usize, rounds: usize, cross_socket: bool) -> f64 {
    let rt = if cross_socket {
        e.round_trip_cross_socket_ns
    } else {
        e.round_trip_ns
    };
    let round = 2.0 * Expect::stream_s(buffer, e.pair_copy_gbs) + e.handoffs_s(2.0, rt);
    e.section_s(2, (rounds + 1) as f64 * round)
}

#[cfg(test)]
mod tests;
