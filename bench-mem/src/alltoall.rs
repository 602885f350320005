//! The intra-node all-to-all that `mem.copy-threshold` and `mem.alltoall-order` time
//! (seed 001, HINT): the buffer layout, the copy methods, the schedules (which copies a
//! thread does, in which order), and the block sizes the memory allows.
//!
//! **Buffers.** P threads; thread u owns a send buffer of P blocks of S bytes at
//! `u * 2PS` and a receive buffer of P slots at `u * 2PS + PS`. One round moves every
//! send block j of thread i into receive slot i of thread j (MPI_Alltoall, self-copy
//! included): P x P copies of S bytes.
//!
//! **The receive buffer matrix** (HINT Sec. V-A): row d is thread d's receive buffer,
//! column s holds the blocks that came from thread s, so cell (d, s) is the copy
//! "send block d of thread s -> receive slot s of thread d". HINT's three orders are
//! traversals of this matrix, each split among the threads by its Algorithm 1:
//!
//! * **row-wise** ([`Order::Row`], `get_bounds_row`): thread r does row r, left to right:
//!   it pulls its own receive buffer linearly (slot 0, 1, ...) from every sender;
//! * **column-wise** ([`Order::Column`], `get_bounds_col`): thread r does column r, top
//!   to bottom: it pushes its own send buffer linearly (block 0, 1, ...) to every receiver;
//! * **Hilbert** ([`Order::Hilbert`], `get_bounds_hilbert`): the matrix is numbered along
//!   a Hilbert curve (starting at (0, 0), ending at (0, P-1), as in Fig. 5(a)) and cut into
//!   P sub-grids of `rows x cols` cells, rows = the smallest power of two >= sqrt(P),
//!   cols = P / rows; thread r takes the r-th sub-grid in row-major order of sub-grids and
//!   does its cells in curve order (Algorithm 2: flatten, sort by sequence number). P must
//!   be a power of two, as in the paper.
//!
//! The paper names the tuple fields of Fig. 5 (seq, src, dst) with "row = source rank",
//! while its prose says the row-wise order "accesses memory addresses in the receive
//! buffer matrix linearly", the column-wise one the send buffer matrix, and
//! `get_bounds_row` returns "the row corresponding to the receive buffer for a rank"; we
//! follow the prose (and Fig. 1(b), where a pushing process walks down a column).
//!
//! `mem.copy-threshold` uses a fourth schedule, [`pairwise_push`]: column-wise (each thread
//! pushes its own send buffer) with a rotated start (block r+1 first, its own block last),
//! the pairwise-exchange pattern that spreads the receivers over the threads at each step.

use crate::kernels::{self, Isa, IsaSet};
use bench_core::bench::Context;
use bench_core::effort::Effort;
use bench_core::memory::{OnMemory, TargetSpec};
use bench_core::params::Warning;
use bench_core::sizing::MEMORY_SHARE_DIVISOR;
use bench_core::units::{format_size, KIB, MIB};

/// A copy method of the all-to-all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Loads + stores.
    Temporal,
    /// Loads + streaming stores (+ sfence).
    #[value(name = "nt")]
    NonTemporal,
    /// Temporal up to the threshold, streaming stores for the rest (HINT).
    Hybrid,
}

impl Method {
    /// Its name in ids and parameters.
    pub fn name(self) -> &'static str {
        match self {
            Method::Temporal => "temporal",
            Method::NonTemporal => "nt",
            Method::Hybrid => "hybrid",
        }
    }
}

/// One of HINT's memory copy orders (traversals of the receive buffer matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// Row-wise: each thread fills its own receive buffer, slot by slot.
    Row,
    /// Column-wise: each thread sends its own send buffer, block by block.
    Column,
    /// Hilbert curve, split into sub-grids (P a power of two).
    Hilbert,
}

impl Order {
    /// All three, in the paper's order of presentation.
    pub const ALL: [Order; 3] = [Order::Hilbert, Order::Row, Order::Column];

    /// Its name in ids, parameters and keys.
    pub fn name(self) -> &'static str {
        match self {
            Order::Row => "row",
            Order::Column => "column",
            Order::Hilbert => "hilbert",
        }
    }

    /// Why this order cannot run with `p` threads, if it cannot.
    pub fn unsupported(self, p: usize) -> Option<String> {
        (self == Order::Hilbert && !p.is_power_of_two()).then(|| {
            format!(
                "the Hilbert order needs a power-of-two thread count (HINT Sec. V-A: a 2^k x 2^k \
                 curve over the receive buffer matrix); P = {p} is not one"
            )
        })
    }
}

/// One copy of a round: send block `dst` of thread `src` into receive slot `src` of thread
/// `dst` (cell (dst, src) of the receive buffer matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Copy {
    /// The sending thread.
    pub src: usize,
    /// The receiving thread.
    pub dst: usize,
}

/// The Hilbert curve position (row, column) of step `d` on an `n x n` grid (`n` a power
/// of two): starts at (0, 0), ends at (0, n-1). Built from the lowest quadrant up: at each
/// scale the two bits of `d` pick the quadrant (U shape: (0,0), (0,1), (1,1), (1,0)), and
/// the position found so far is reflected into the orientation of that quadrant.
pub fn hilbert_cell(n: usize, d: usize) -> (usize, usize) {
    debug_assert!(n.is_power_of_two() && d < n * n);
    let (mut row, mut col) = (0usize, 0usize);
    let mut rest = d;
    let mut side = 1usize;
    while side < n {
        let q = rest & 3;
        let (qr, qc) = match q {
            0 => (0, 0),
            1 => (0, 1),
            2 => (1, 1),
            _ => (1, 0),
        };
        match q {
            // First quadrant: the sub-curve is mirrored across the main diagonal.
            0 => std::mem::swap(&mut row, &mut col),
            // Last quadrant: mirrored across the anti-diagonal.
            3 => {
                let (r, c) = (side - 1 - col, side - 1 - row);
                row = r;
                col = c;
            }
            _ => {}
        }
        row += qr * side;
        col += qc * side;
        rest >>= 2;
        side <<= 1;
    }
    // Built as (x, y) with the U opening the other way; the paper's figure is its
    // transpose.
    (col, row)
}

/// The receive buffer matrix numbered along the Hilbert curve: `grid[row][col]` = the
/// cell's step, from 0 (Fig. 5(a) numbers from 1).
pub fn hilbert_grid(n: usize) -> Vec<Vec<usize>> {
    let mut g = vec![vec![0usize; n]; n];
    for d in 0..n * n {
        let (r, c) = hilbert_cell(n, d);
        g[r][c] = d;
    }
    g
}

/// HINT's sub-grid shape for P threads (Algorithm 1, `get_bounds_hilbert`): rows = the
/// smallest power of two >= sqrt(P), cols = P / rows.
pub fn hilbert_subgrid(p: usize) -> (usize, usize) {
    let mut rows = 1usize;
    while rows * rows < p {
        rows <<= 1;
    }
    (rows, p / rows)
}

/// The copies thread `rank` does in one round under `order`, in the order it does them;
/// `None` where the order does not support `p` ([`Order::unsupported`]).
pub fn work(order: Order, p: usize, rank: usize) -> Option<Vec<Copy>> {
    if order.unsupported(p).is_some() || rank >= p {
        return None;
    }
    Some(match order {
        Order::Row => (0..p).map(|s| Copy { src: s, dst: rank }).collect(),
        Order::Column => (0..p).map(|d| Copy { src: rank, dst: d }).collect(),
        Order::Hilbert => {
            let grid = hilbert_grid(p);
            let (rows, cols) = hilbert_subgrid(p);
            let per_band = p / cols;
            let (r0, c0) = ((rank / per_band) * rows, (rank % per_band) * cols);
            let mut cells: Vec<(usize, Copy)> = (r0..r0 + rows)
                .flat_map(|d| (c0..c0 + cols).map(move |s| (d, s)))
                .map(|(d, s)| (grid[d][s], Copy { src: s, dst: d }))
                .collect();
            cells.sort_unstable();
            cells.into_iter().map(|(_, c)| c).collect()
        }
    })
}

/// `mem.copy-threshold`'s schedule: thread `rank` pushes its own send buffer (column
/// `rank`), starting at block `rank + 1` and ending with its own block.
pub fn pairwise_push(p: usize, rank: usize) -> Vec<Copy> {
    (1..=p)
        .map(|k| Copy {
            src: rank,
            dst: (rank + k) % p,
        })
        .collect()
}

/// Buffer bytes of an all-to-all among `p` threads with `s`-byte blocks: 2 x P^2 x S.
pub fn buffer_bytes(p: usize, s: usize) -> usize {
    2 * p * p * s
}

/// Performs `copies` of one round over the buffers at `base` (layout in the module
/// documentation), with `t_hyb` temporal bytes per block for the hybrid method.
///
/// # Safety
/// `base` must point to at least [`buffer_bytes`]`(p, s)` writable bytes that no one else
/// touches except the other threads of the same round, and every copy's `src` and `dst`
/// must be below `p`; no two threads of a round may be given the same copy.
pub unsafe fn run_copies(
    base: usize,
    p: usize,
    s: usize,
    copies: &[Copy],
    method: Method,
    isa: Isa,
    t_hyb: usize,
) {
    for c in copies {
        debug_assert!(c.src < p && c.dst < p);
        let from = base + c.src * 2 * p * s + c.dst * s;
        let to = base + c.dst * 2 * p * s + p * s + c.src * s;
        // SAFETY: by the caller's contract both blocks lie inside the buffers; a send block
        // and a receive slot never overlap, and only this thread writes slot `src` of
        // thread `dst` in this round.
        let (d, sr) = unsafe {
            (
                std::slice::from_raw_parts_mut(to as *mut u8, s),
                std::slice::from_raw_parts(from as *const u8, s),
            )
        };
        match method {
            Method::Temporal => kernels::copy(isa, false, d, sr),
            Method::NonTemporal => kernels::copy(isa, true, d, sr),
            Method::Hybrid => {
                let h = t_hyb.min(s);
                kernels::copy(isa, false, &mut d[..h], &sr[..h]);
                kernels::copy(isa, true, &mut d[h..], &sr[h..]);
            }
        }
    }
}

/// Fallback buffer budget when the target's available memory is unknown.
pub const UNKNOWN_MEMORY_BUDGET: usize = 1 << 30;

/// Largest block size of the sweeps by default (`--max-size`).
pub const DEFAULT_MAX_SIZE: usize = 16 * MIB;

/// The bytes of buffers an all-to-all may allocate on a target offering `available` bytes
/// (`bench_core::sizing::available_for`): 1/[`MEMORY_SHARE_DIVISOR`] of it, as every
/// memory-bounded size in cxlchar; [`UNKNOWN_MEMORY_BUDGET`] when unknown; at most the
/// effort's cap (`--quick`: 1 GiB).
pub fn buffer_budget(available: Option<usize>, effort: &Effort) -> usize {
    let b = available.map_or(UNKNOWN_MEMORY_BUDGET, |a| a / MEMORY_SHARE_DIVISOR);
    effort
        .mem
        .alltoall_buffer_cap_bytes
        .map_or(b, |cap| b.min(cap))
}

/// Block sizes 1 KiB .. `max` in powers of four (`quick`) or two, `max` itself last.
pub fn block_sizes(effort: &Effort, max: usize) -> Vec<usize> {
    let step = effort.mem.alltoall_block_step;
    let max = max.max(KIB);
    let mut v = vec![KIB];
    while *v.last().expect("non-empty") < max {
        let n = v.last().expect("non-empty") * step;
        v.push(n.min(max));
    }
    v
}

/// The sizes of `sizes` whose buffers for `p` threads fit in `budget` bytes, and the
/// first size that does not (if any).
pub fn sizes_within(sizes: &[usize], p: usize, budget: usize) -> (Vec<usize>, Option<usize>) {
    let fit: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|&s| buffer_bytes(p, s) <= budget)
        .collect();
    let cut = sizes.iter().copied().find(|&s| buffer_bytes(p, s) > budget);
    (fit, cut)
}

/// The thread count and block size whose buffers are the largest of an all-to-all sweep
/// over `counts` threads and `sizes` on `target` within [`buffer_budget`].
pub fn largest_buffers(
    ctx: &Context,
    target: &TargetSpec,
    counts: &[usize],
    sizes: &[usize],
) -> Option<(usize, usize)> {
    let budget = buffer_budget(ctx.available(target), ctx.effort);
    counts
        .iter()
        .filter_map(|&p| {
            let (fit, _) = sizes_within(sizes, p, budget);
            fit.last().map(|&s| (p, s))
        })
        .max_by_key(|&(p, s)| buffer_bytes(p, s))
}

/// The region an all-to-all sweep over `counts` threads and `sizes` asks for on `target`:
/// the largest buffers any count needs within [`buffer_budget`] (at least 1 MiB).
pub fn region_bytes(
    ctx: &Context,
    target: &TargetSpec,
    counts: &[usize],
    sizes: &[usize],
) -> usize {
    largest_buffers(ctx, target, counts, sizes)
        .map_or(0, |(p, s)| buffer_bytes(p, s))
        .max(MIB)
}

/// What an all-to-all sweep maps on `target`: its region ([`region_bytes`]) and nothing
/// beside it (the buffers are the region), bounded by `--max-size`.
pub fn memory(
    ctx: &Context,
    target: &TargetSpec,
    counts: &[usize],
    sizes: &[usize],
) -> bench_core::memory::budget::Need {
    let bytes = target.mapped_bytes(region_bytes(ctx, target, counts, sizes), &ctx.topology);
    let what = match largest_buffers(ctx, target, counts, sizes) {
        Some((p, s)) => format!(
            "the buffers of {p} thread(s) at {} blocks (2 x P^2 x S = {}); the block sizes stop where they would pass {}",
            format_size(s),
            format_size(buffer_bytes(p, s)),
            budget_rule(ctx.available(target), ctx.effort)
        ),
        None => "1 MiB: no block size fits the buffer budget".into(),
    };
    let per_byte = largest_buffers(ctx, target, counts, sizes).map_or(1, |(p, _)| 2 * p * p);
    bench_core::memory::budget::Need::on_target(bytes, what).with_fit("--max-size", per_byte, 0)
}

/// The planned seconds of one (P, S) point of an all-to-all on `cpus` (P = their number)
/// under a sampling time of `point`: rounds of 2 x P^2 x S bytes (at least 1 MiB a
/// sample), in the caches the CPUs fill where the buffers fit there, else at DRAM
/// bandwidth ([`bench_core::plan::Expect::bandwidth_point_s`]).
pub fn point_s(ctx: &Context, cpus: &[usize], s: usize, point: std::time::Duration) -> f64 {
    let p = cpus.len().max(1);
    let rounds = (MIB / (p * s)).max(1);
    let bytes = buffer_bytes(p, s) * rounds;
    let in_cache = ctx
        .cache_reach(cpus)
        .is_some_and(|r| buffer_bytes(p, s) <= r.total_bytes);
    let budget = bench_core::effort::Budget {
        time: point,
        min_samples: 5,
        max_samples: 1000,
    };
    ctx.plan
        .expect
        .bandwidth_point_s(&ctx.topology, cpus, bytes / p, &budget, in_cache)
}

/// In words, where [`buffer_budget`] came from.
pub fn budget_rule(available: Option<usize>, effort: &Effort) -> String {
    let base = if available.is_some() {
        "a quarter of the memory the target offers (MemAvailable; a node's free memory, half a dax device, the free huge pages)"
    } else {
        "1 GiB (the memory the target offers is unknown)"
    };
    match effort.mem.alltoall_buffer_cap_bytes {
        Some(cap) => format!("{base}, at most {}", format_size(cap)),
        None => base.to_string(),
    }
}

/// The block sizes a benchmark's region holds, per thread count, with the `size_bound`
/// warning for the sizes it cannot: the one sizing step both all-to-all benchmarks take.
pub struct RegionSizes {
    target: String,
    budget: usize,
    rule: String,
}

impl RegionSizes {
    /// For a region of `region_len` bytes on `target`, sized by [`region_bytes`].
    pub fn new(ctx: &Context, target: &impl OnMemory, region_len: usize) -> RegionSizes {
        let words = budget_rule(ctx.available(target), ctx.effort);
        RegionSizes {
            target: target.to_string(),
            budget: region_len,
            rule: format!("this run's region, sized to {words}"),
        }
    }

    /// The sizes of `wanted` whose buffers for `p` threads fit; the warning for the rest
    /// goes to `warnings`.
    pub fn sizes(&self, wanted: &[usize], p: usize, warnings: &mut Vec<Warning>) -> Vec<usize> {
        let (sizes, cut) = sizes_within(wanted, p, self.budget);
        warnings.extend(size_bound_warning(
            &self.target,
            p,
            &sizes,
            cut,
            self.budget,
            &self.rule,
        ));
        sizes
    }
}

/// The `size_bound` warning for `p` threads when the buffers of `cut` and larger sizes
/// do not fit in `budget` bytes (`budget_rule` says where the budget came from); `None`
/// when nothing was cut.
pub fn size_bound_warning(
    target: &str,
    p: usize,
    reached: &[usize],
    cut: Option<usize>,
    budget: usize,
    budget_rule: &str,
) -> Option<Warning> {
    let cut = cut?;
    Some(Warning {
        code: "size_bound".into(),
        message: format!(
            "{target}: with {p} thread(s) the block sizes stop at {} (not reached: {} and larger, which need 2 x P^2 x S = {} of buffers; the budget is {budget_rule} = {})",
            reached.last().map_or_else(|| "none".into(), |&s| format_size(s)),
            format_size(cut),
            format_size(buffer_bytes(p, cut)),
            format_size(budget),
        ),
        remediation: "run without --quick (it caps the buffers at 1 GiB, a full run at 8 GiB), free memory or use a target with more (the budget is a quarter of what it offers), lower --max-size, or test fewer threads (--threads)".into(),
    })
}

/// The ISA to copy with (`forced` or the widest the CPU has) after checking that every
/// requested thread count is between 1 and the `cpus` allowed (`--cpu`): a thread per CPU,
/// never more.
pub fn check_setup(
    forced: Option<Isa>,
    threads: Option<&[usize]>,
    cpus: usize,
) -> Result<Isa, String> {
    let isa = IsaSet::detect()
        .choose(forced)
        .map_err(|e| e.to_string())
        .and_then(kernels::with_nt_store)?;
    for &t in threads.into_iter().flatten() {
        if t == 0 || t > cpus {
            return Err(format!(
                "{t} threads requested but only {cpus} CPUs are allowed (--cpu)"
            ));
        }
    }
    Ok(isa)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::IsaSet;
    use std::collections::BTreeSet;

    const K: usize = 1024;

    /// Fig. 5(a) of the paper: the 4 x 4 tuple grid's sequence numbers (from 1).
    #[test]
    fn hilbert_grid_is_the_papers_figure_5a() {
        let g = hilbert_grid(4);
        let fig: [[usize; 4]; 4] = [
            [1, 2, 15, 16],
            [4, 3, 14, 13],
            [5, 8, 9, 12],
            [6, 7, 10, 11],
        ];
        for r in 0..4 {
            for c in 0..4 {
                assert_eq!(g[r][c] + 1, fig[r][c], "cell ({r}, {c})");
            }
        }
    }

    #[test]
    fn hilbert_steps_are_neighbours_and_cover_the_grid() {
        for n in [1usize, 2, 4, 8, 16, 32, 64] {
            let mut seen = BTreeSet::new();
            let mut prev = hilbert_cell(n, 0);
            assert_eq!(prev, (0, 0));
            seen.insert(prev);
            for d in 1..n * n {
                let c = hilbert_cell(n, d);
                assert!(c.0 < n && c.1 < n);
                assert_eq!(
                    prev.0.abs_diff(c.0) + prev.1.abs_diff(c.1),
                    1,
                    "n={n} step {d}"
                );
                assert!(seen.insert(c), "n={n}: ({}, {}) twice", c.0, c.1);
                prev = c;
            }
            assert_eq!(seen.len(), n * n);
            if n > 1 {
                assert_eq!(prev, (0, n - 1), "ends at the top right");
            }
        }
    }

    #[test]
    fn subgrids_follow_algorithm_1() {
        assert_eq!(hilbert_subgrid(1), (1, 1));
        assert_eq!(hilbert_subgrid(2), (2, 1));
        assert_eq!(hilbert_subgrid(4), (2, 2));
        assert_eq!(hilbert_subgrid(8), (4, 2));
        assert_eq!(hilbert_subgrid(16), (4, 4));
        assert_eq!(hilbert_subgrid(32), (8, 4));
        // Fig. 5(a): rank 0 does (0,0), (0,1), (1,1), (1,0) in curve order.
        let w = work(Order::Hilbert, 4, 0).unwrap();
        let cells: Vec<(usize, usize)> = w.iter().map(|c| (c.dst, c.src)).collect();
        assert_eq!(cells, [(0, 0), (0, 1), (1, 1), (1, 0)]);
        // Rank 1 takes the sub-grid to its right (Algorithm 1 moves along Y first).
        let w = work(Order::Hilbert, 4, 1).unwrap();
        assert!(w.iter().all(|c| c.dst < 2 && c.src >= 2), "{w:?}");
    }

    /// Every order gives every (src, dst) pair to exactly one thread, P copies each, and
    /// the Hilbert sub-grids are contiguous blocks of the shape of Algorithm 1.
    #[test]
    fn every_order_splits_the_round_disjointly_and_completely() {
        for p in 1..=64usize {
            for order in Order::ALL {
                if order.unsupported(p).is_some() {
                    assert!(work(order, p, 0).is_none());
                    continue;
                }
                let mut all = BTreeSet::new();
                for r in 0..p {
                    let w = work(order, p, r).unwrap();
                    assert_eq!(w.len(), p, "{order:?} P={p} rank {r}");
                    for c in &w {
                        assert!(all.insert(*c), "{order:?} P={p}: {c:?} twice");
                    }
                    if order == Order::Hilbert {
                        let (rows, cols) = hilbert_subgrid(p);
                        let (d0, s0) = (w[0].dst / rows * rows, w[0].src / cols * cols);
                        assert!(w.iter().all(|c| (d0..d0 + rows).contains(&c.dst)
                            && (s0..s0 + cols).contains(&c.src)));
                        let g = hilbert_grid(p);
                        assert!(w
                            .windows(2)
                            .all(|x| g[x[0].dst][x[0].src] < g[x[1].dst][x[1].src]));
                    }
                }
                assert_eq!(all.len(), p * p, "{order:?} P={p}");
            }
            let pw: BTreeSet<Copy> = (0..p).flat_map(|r| pairwise_push(p, r)).collect();
            assert_eq!(pw.len(), p * p);
        }
        assert!(Order::Hilbert
            .unsupported(12)
            .unwrap()
            .contains("power-of-two"));
        assert!(work(Order::Row, 4, 4).is_none());
    }

    #[test]
    fn row_pulls_and_column_pushes_linearly() {
        let row = work(Order::Row, 8, 3).unwrap();
        assert!(row
            .iter()
            .enumerate()
            .all(|(i, c)| c.dst == 3 && c.src == i));
        let col = work(Order::Column, 8, 3).unwrap();
        assert!(col
            .iter()
            .enumerate()
            .all(|(i, c)| c.src == 3 && c.dst == i));
        let pw = pairwise_push(4, 1);
        assert_eq!(pw.iter().map(|c| c.dst).collect::<Vec<_>>(), [2, 3, 0, 1]);
    }

    /// The data moved is the same whatever the order: every block lands in its slot.
    #[test]
    fn every_schedule_moves_every_block_to_its_slot() {
        let (p, s) = (4usize, 4096usize + 40);
        let isa = IsaSet::detect().choose(None).unwrap();
        let mut schedules: Vec<(&str, Vec<Vec<Copy>>)> =
            vec![("pairwise", (0..p).map(|t| pairwise_push(p, t)).collect())];
        for o in Order::ALL {
            schedules.push((o.name(), (0..p).map(|t| work(o, p, t).unwrap()).collect()));
        }
        for (name, sched) in &schedules {
            for method in [Method::Temporal, Method::NonTemporal, Method::Hybrid] {
                let mut mem = vec![0u8; buffer_bytes(p, s)];
                for t in 0..p {
                    for j in 0..p {
                        mem[t * 2 * p * s + j * s..t * 2 * p * s + (j + 1) * s]
                            .fill((10 * t + j + 1) as u8);
                    }
                }
                let base = mem.as_mut_ptr() as usize;
                for copies in sched {
                    // SAFETY: `mem` holds 2 x p x p x s bytes and is only touched here.
                    unsafe { run_copies(base, p, s, copies, method, isa, 1000) };
                }
                for j in 0..p {
                    for t in 0..p {
                        let slot = j * 2 * p * s + p * s + t * s;
                        assert!(
                            mem[slot..slot + s]
                                .iter()
                                .all(|&b| b == (10 * t + j + 1) as u8),
                            "{name} {method:?}: slot {t} of {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sizes_are_bounded_by_memory_and_max() {
        use bench_core::effort::{FULL, QUICK};
        let q = block_sizes(&QUICK, DEFAULT_MAX_SIZE);
        assert_eq!((q[0], *q.last().unwrap()), (K, 16 * K * K));
        assert_eq!(block_sizes(&FULL, DEFAULT_MAX_SIZE).len(), 15);
        assert_eq!(
            block_sizes(&FULL, MIB),
            [
                K,
                2 * K,
                4 * K,
                8 * K,
                16 * K,
                32 * K,
                64 * K,
                128 * K,
                256 * K,
                512 * K,
                MIB
            ]
        );
        assert_eq!(*block_sizes(&QUICK, 100 * K).last().unwrap(), 100 * K);
        assert_eq!(block_sizes(&QUICK, 10), [K]);
        // A 1 GiB budget: P = 32 stops at 512 KiB.
        let all = block_sizes(&FULL, MIB);
        let (fit, cut) = sizes_within(&all, 32, 1 << 30);
        assert_eq!((*fit.last().unwrap(), cut), (512 * K, Some(MIB)));
        // 8 GiB available -> 2 GiB budget: P = 32 reaches 1 MiB.
        let b = buffer_budget(Some(8 << 30), &FULL);
        assert_eq!(b, 2 << 30);
        assert_eq!(buffer_budget(Some(8 << 30), &QUICK), 1 << 30);
        assert_eq!(buffer_budget(Some(2 << 30), &QUICK), 512 * MIB);
        assert!(budget_rule(Some(1), &QUICK).contains("at most 1G"));
        assert!(budget_rule(None, &FULL).contains("at most 8G"));
        assert_eq!(
            buffer_budget(Some(1 << 40), &FULL),
            8 << 30,
            "a full run's cap"
        );
        let (fit, cut) = sizes_within(&all, 32, b);
        assert_eq!((*fit.last().unwrap(), cut), (MIB, None));
        assert_eq!(buffer_budget(None, &FULL), UNKNOWN_MEMORY_BUDGET);
        // Nothing fits: empty, cut at the first size.
        assert_eq!(sizes_within(&all, 32, 1000), (vec![], Some(K)));
        let w = size_bound_warning("anon", 32, &[K, 512 * K], Some(MIB), 1 << 30, "a quarter")
            .expect("a cut is a warning");
        let m = &w.message;
        assert!(
            m.contains("stop at 512K") && m.contains("1M and larger") && m.contains("2G"),
            "{m}"
        );
        assert!(w.remediation.contains("--max-size") && w.remediation.contains("--quick"));
        assert!(size_bound_warning("anon", 32, &[K], None, 1 << 30, "a quarter").is_none());
        assert!(check_setup(None, Some(&[1, 2]), 2).is_ok());
        assert!(check_setup(None, Some(&[3]), 2)
            .unwrap_err()
            .contains("only 2 CPUs"));
        assert!(check_setup(None, Some(&[0]), 2).is_err());
    }
}
