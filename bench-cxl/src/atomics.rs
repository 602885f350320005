//! `pool.atomics`: latency of dependent atomic read-modify-writes on a target, next to
//! the plain dependent-load latency on the same lines (seed 000's `CXL_ATOMIC_LAT`).
//!
//! Method: the working set is split into cache lines visited in one cycle, in a
//! TLB-local order (blocks of 256 KiB in a scrambled order, lines scrambled within a
//! block, like multichase's default). Line `g(j)` holds `j+1`, the position that
//! follows it; each operation's result is the next position, so every operation waits
//! for the previous one. Operations: plain load, `lock xadd` (fetch-add 0), successful
//! `lock cmpxchg` (compare the known successor, write it back) and `xchg` (swap the
//! known successor in). The memory never changes; only the operation differs, so
//! `atomic - load` is the cost of atomicity on that memory. The scrambling `g` is a few
//! ALU operations per step, the same for every operation.

use crate::measurement;
use bench_core::bench::{Benchmark, Context, Param, Report, Requirements, Skip};
use bench_core::counters::{self, CounterGroup};
use bench_core::stats::Distribution;
use bench_core::target::Region;
use bench_core::units::{format_size, MIB};
use std::sync::atomic::{AtomicU64, Ordering};

/// Operations measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// Plain load (the reference).
    Load,
    /// `fetch_add(0)` (`lock xadd`).
    FetchAdd,
    /// Successful `compare_exchange` (`lock cmpxchg`).
    Cas,
    /// `swap` (`xchg`).
    Exchange,
}

impl AtomicOp {
    /// All, in output order.
    pub const ALL: [AtomicOp; 4] = [
        AtomicOp::Load,
        AtomicOp::FetchAdd,
        AtomicOp::Cas,
        AtomicOp::Exchange,
    ];
    /// Name in keys and ids.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Load => "load",
            AtomicOp::FetchAdd => "fetch_add",
            AtomicOp::Cas => "cas",
            AtomicOp::Exchange => "exchange",
        }
    }
}

/// The atomic latency benchmark.
#[derive(Debug, Clone, Default)]
pub struct AtomicsBench {
    /// Working set (bytes, rounded down to a power of two); default: 2x LLC, at least
    /// 64 MiB, at most 1 GiB (quick: 64 MiB).
    pub size: Option<usize>,
}

const BLOCK_LINES: usize = 4096; // 256 KiB blocks

fn scramble(x: usize, bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    let mask = (1usize << bits) - 1;
    let mut x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) & mask;
    x ^= x >> bits.div_ceil(2);
    x = x.wrapping_mul(0xC2B2_AE3D_27D4_EB4F | 1) & mask;
    x ^= x >> bits.div_ceil(3).max(1);
    x
}

/// Line index of chain position `j` (a bijection on `0..lines`, `lines` a power of two).
#[inline(always)]
pub fn line_of(j: usize, lines: usize) -> usize {
    let total = lines.trailing_zeros();
    let lo_bits = total.min(BLOCK_LINES.trailing_zeros());
    let hi_bits = total - lo_bits;
    let lo = j & ((1 << lo_bits) - 1);
    let hi = j >> lo_bits;
    (scramble(hi, hi_bits) << lo_bits) | scramble(lo, lo_bits)
}

fn default_size(ctx: &Context) -> usize {
    if ctx.quick {
        return 64 * MIB;
    }
    let llc = ctx.topology.llc_bytes().unwrap_or(32 * MIB);
    (2 * llc)
        .clamp(64 * MIB, 1024 * MIB)
        .next_power_of_two()
        .min(1024 * MIB)
}

/// Builds the chain in `mem` (`lines` lines of 64 B).
fn build(mem: &mut [u8], lines: usize) {
    for j in 0..lines {
        let l = line_of(j, lines);
        let next = ((j + 1) & (lines - 1)) as u64;
        mem[l * 64..l * 64 + 8].copy_from_slice(&next.to_ne_bytes());
    }
}

/// Runs `steps` dependent operations from position `start`; returns the end position.
#[inline(never)]
fn chase(base: *const u8, lines: usize, op: AtomicOp, start: usize, steps: usize) -> usize {
    let mut j = start;
    let mask = lines - 1;
    for _ in 0..steps {
        let l = line_of(j, lines);
        // SAFETY: l < lines and the region holds lines*64 bytes, 64-aligned (page
        // aligned base), so the pointer is a valid, aligned AtomicU64.
        let a = unsafe { &*(base.add(l * 64) as *const AtomicU64) };
        let succ = ((j + 1) & mask) as u64;
        j = match op {
            AtomicOp::Load => a.load(Ordering::Relaxed),
            AtomicOp::FetchAdd => a.fetch_add(0, Ordering::SeqCst),
            AtomicOp::Cas => {
                match a.compare_exchange(succ, succ, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(v) | Err(v) => v,
                }
            }
            AtomicOp::Exchange => a.swap(succ, Ordering::SeqCst),
        } as usize
            & mask;
    }
    j
}

impl Benchmark for AtomicsBench {
    fn name(&self) -> &'static str {
        "pool.atomics"
    }
    fn description(&self) -> &'static str {
        "dependent atomic RMW latency (fetch-add, CAS, exchange) vs plain load on the same lines"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({ "size_bytes": self.size, "block_bytes": BLOCK_LINES * 64 })
    }
    fn requires(&self) -> Requirements {
        Requirements::default()
    }
    fn region_bytes(&self, ctx: &Context) -> usize {
        self.size.unwrap_or_else(|| default_size(ctx))
    }
    fn run(&self, ctx: &Context, region: &mut Region) -> Result<Report, Skip> {
        let len = region.len();
        if len < 4096 {
            return Err(Skip::new("region smaller than 4 KiB"));
        }
        let big = 1usize << (usize::BITS - 1 - len.leading_zeros());
        let target = region.spec().to_string();
        let placement = region.placement().clone();
        let mut report = Report::default();
        let sizes = [4096usize, big];
        let samples = if ctx.quick { 15 } else { 60 };
        let mut group = CounterGroup::open_with_timer(&ctx.timer);
        for (si, &size) in sizes.iter().enumerate() {
            let lines = size / 64;
            build(&mut region.as_mut_slice()[..size], lines);
            let base = region.as_ptr();
            // Steps per sample: about 1 ms at memory latency, whole laps for small sets.
            let steps = if si == 0 { 20_000 } else { 8_000.min(lines) };
            let mut p50 = [0f64; 4];
            let mut ids: Vec<String> = Vec::new();
            for (oi, op) in AtomicOp::ALL.into_iter().enumerate() {
                ctx.progress(&format!(
                    "pool.atomics on {target}: {} over {}",
                    op.name(),
                    format_size(size)
                ));
                let mut pos = chase(base, lines, op, 0, steps.min(lines)); // warm-up
                let mut v = counters::sample_buffer(samples);
                let (v, counters) = counters::measure_undisturbed(
                    &mut group,
                    counters::DEFAULT_MAX_ATTEMPTS,
                    &mut v,
                    |v| {
                        v.clear();
                        for _ in 0..samples {
                            let t0 = ctx.timer.start();
                            pos = chase(base, lines, op, pos, steps);
                            let t1 = ctx.timer.stop();
                            v.push(ctx.timer.elapsed_ns(t0, t1) / steps as f64);
                        }
                    },
                    |v| v.clone(),
                );
                std::hint::black_box(pos);
                let counters = counters.with_per_op("op", (samples * steps) as u64);
                let Some(d) = Distribution::from_samples(&v) else {
                    return Err(Skip::new("the timer produced no usable samples"));
                };
                p50[oi] = d.p50;
                let id = format!("pool.atomics/{target}/{}/{}", op.name(), format_size(size));
                ids.push(id.clone());
                report.measurements.push(measurement(
                    id,
                    self.name(),
                    &target,
                    serde_json::json!({"op": op.name(), "size_bytes": size, "steps_per_sample": steps, "order": "tlb-local 256 KiB"}),
                    "ns",
                    format!("per-operation latency of a dependent chain of {} over {} of 64 B lines (each result is the next position)", op.name(), format_size(size)),
                    d,
                    Some(placement.clone()),
                    counters,
                ));
            }
            if si == 1 {
                let method = |what: &str| {
                    format!(
                        "p50 of {what} over {} (dependent chain, TLB-local order)",
                        format_size(size)
                    )
                };
                let median_atomic = {
                    let mut a = [p50[1], p50[2], p50[3]];
                    a.sort_by(f64::total_cmp);
                    a[1]
                };
                report.params.push(Param::new(
                    "atomic_lat_ns",
                    median_atomic,
                    "ns",
                    &target,
                    method("the median of fetch-add, CAS and exchange latencies"),
                    ids[1..].to_vec(),
                ));
                report.params.push(Param::new(
                    "atomic_load_lat_ns",
                    p50[0],
                    "ns",
                    &target,
                    method("plain loads"),
                    vec![ids[0].clone()],
                ));
                for (oi, op) in AtomicOp::ALL.into_iter().enumerate().skip(1) {
                    report.params.push(Param::new(
                        format!("atomic_{}_lat_ns", op.name()),
                        p50[oi],
                        "ns",
                        &target,
                        method(op.name()),
                        vec![ids[oi].clone()],
                    ));
                }
                report.params.push(Param::new(
                    "atomic_extra_lat_ns",
                    (median_atomic - p50[0]).max(0.0),
                    "ns",
                    &target,
                    "atomic_lat_ns - atomic_load_lat_ns (same lines)",
                    ids.clone(),
                ));
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_order_is_a_permutation() {
        for lines in [1usize, 2, 64, 4096, 8192, 1 << 16] {
            let mut seen = vec![false; lines];
            for j in 0..lines {
                let l = line_of(j, lines);
                assert!(!seen[l], "line {l} visited twice for {lines} lines");
                seen[l] = true;
            }
        }
    }

    #[test]
    fn every_op_follows_the_chain_and_leaves_memory_unchanged() {
        let lines = 8192;
        let mut mem = vec![0u64; lines * 8];
        // SAFETY: reinterpreting u64s as bytes of the same allocation.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr() as *mut u8, lines * 64) };
        build(bytes, lines);
        let before = bytes.to_vec();
        for op in AtomicOp::ALL {
            assert_eq!(chase(bytes.as_ptr(), lines, op, 5, 1000), 1005, "{op:?}");
            assert_eq!(
                chase(bytes.as_ptr(), lines, op, 0, lines),
                0,
                "{op:?} full lap"
            );
        }
        assert_eq!(bytes, &before[..]);
    }
}
