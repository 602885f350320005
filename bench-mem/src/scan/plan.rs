//! The ranges of a scan: how large each is, how many there are, and which bound decided.
//!
//! A range is at least the DRAM working set of the scan's CPUs (4 x the caches they can
//! fill, [`bench_core::sizing`]): smaller, it would be streamed from the caches once
//! warm. By default it is 1 GiB on far memory and 256 MiB elsewhere (at least that
//! working set, in whole 2 MiB or the target's larger pages). The region is a whole number
//! of ranges: as many as fit in half the memory the target offers
//! ([`bench_core::bench::Context::check_span_limit`]: the bound of every family's largest
//! working set) and as a time bound allows (a scan of its ranges priced by the plan's
//! model, [`Pricing`]: [`FAR_BOUND`] on far memory, [`NEAR_BOUND`] elsewhere, with the
//! windows of a full run and of a quick one, both, so that the region is the same with
//! and without `--quick`). Where the memory the target offers holds fewer than
//! [`MIN_DEFAULT_RANGES`] default ranges, the range shrinks to an eighth of that region
//! (never below the working set). `--range` and `--size` replace the defaults and bound
//! them.

use bench_core::crew::{Stream, WindowPlan};
use bench_core::plan::Expect;
use bench_core::topology::Topology;
use bench_core::units::{format_size, human_bytes, GIB, MIB};

/// The default range on far memory (a memory-only node, a dax device).
pub const FAR_RANGE_BYTES: usize = GIB;
/// The default range on other targets (`anon`, a node with CPUs).
pub const NEAR_RANGE_BYTES: usize = 256 * MIB;
/// The fewest ranges a default layout aims at (the outlier rule needs several).
pub const MIN_DEFAULT_RANGES: usize = 8;
/// The most ranges a scan takes (each is recorded with its backing in params.json).
pub const MAX_RANGES: usize = 4096;
/// Ranges are whole multiples of this (and of the target's page).
pub const GRANULE_BYTES: usize = 2 * MIB;

/// A time bound of a default scan: seconds with a full run's windows and with a quick
/// run's, priced by the plan's model ([`Pricing`]); both hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBound {
    /// Seconds with the full run's windows.
    pub full_s: f64,
    /// Seconds with `--quick`'s windows.
    pub quick_s: f64,
}

/// The bound on far memory: a minute with a full run's windows, 15 s with a quick one's
/// (the 8-core fixture with a 128 GiB CXL node, `Server::cxl_host`: 46 ranges of 1 GiB).
pub const FAR_BOUND: TimeBound = TimeBound {
    full_s: 60.0,
    quick_s: 15.0,
};

/// The bound elsewhere (a scan of local memory is asked for, never part of `all`): a few
/// seconds.
pub const NEAR_BOUND: TimeBound = TimeBound {
    full_s: 6.0,
    quick_s: 2.0,
};

/// What the user asked: `--range`, `--size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Asked {
    /// `--range`.
    pub range: Option<usize>,
    /// `--size`.
    pub size: Option<usize>,
}

/// What the layout of one target is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The target is far memory.
    pub far: bool,
    /// The target's page (4 KiB, a dax device's alignment, a huge page).
    pub page_bytes: usize,
    /// Half the memory the target offers (`None`: not known).
    pub offers_bytes: Option<usize>,
    /// The DRAM working set of the scan's CPUs (a range below it may be cached).
    pub working_set_bytes: usize,
}

impl Facts {
    fn granule(&self) -> usize {
        GRANULE_BYTES.max(self.page_bytes).max(1)
    }

    fn down(&self, b: usize) -> usize {
        b / self.granule() * self.granule()
    }

    fn up(&self, b: usize) -> usize {
        b.div_ceil(self.granule()) * self.granule()
    }

    fn bound(&self) -> TimeBound {
        if self.far {
            FAR_BOUND
        } else {
            NEAR_BOUND
        }
    }
}

/// The price of a scan's ranges ([`Expect::crew_point_s`] for each kernel over a range,
/// and the range's pages populated first).
#[derive(Debug, Clone, Copy)]
pub struct Pricing<'a> {
    /// The model's expectations (quiet: the layout must not depend on the load now).
    pub expect: Expect,
    /// The machine.
    pub topo: &'a Topology,
    /// The scan's CPUs.
    pub cpus: &'a [usize],
    /// Kernels run over each range (read, and non-temporal write where it runs).
    pub kernels: usize,
}

impl Pricing<'_> {
    /// Seconds of one kernel over a range of `range` bytes with `plan`'s windows.
    pub fn kernel_s(&self, range: usize, plan: &WindowPlan) -> f64 {
        let threads = self.cpus.len().max(1);
        let slice = Stream::slice_of(range, threads, 0).1;
        self.expect
            .crew_point_s(self.topo, self.cpus, slice, plan, false)
    }

    /// Seconds of one range: its pages populated, then every kernel.
    pub fn range_s(&self, range: usize, plan: &WindowPlan) -> f64 {
        self.expect.populate_s(range) + self.kernels as f64 * self.kernel_s(range, plan)
    }

    /// The most ranges of `range` bytes within `bound` (with a full run's windows and
    /// with a quick run's), at least 1.
    pub fn ranges_within(&self, range: usize, bound: TimeBound) -> usize {
        let fit = |s: f64, plan: &WindowPlan| (s / self.range_s(range, plan).max(1e-9)) as usize;
        fit(bound.full_s, &bench_core::effort::FULL.crew)
            .min(fit(bound.quick_s, &bench_core::effort::QUICK.crew))
            .max(1)
    }
}

/// A scan's ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Bytes of each range.
    pub range_bytes: usize,
    /// How many.
    pub ranges: usize,
    /// Why these, in words.
    pub why: String,
    /// The ranges are smaller than the DRAM working set of the scan's CPUs.
    pub below_working_set: bool,
}

impl Layout {
    /// The region: the ranges end to end.
    pub fn region_bytes(&self) -> usize {
        self.range_bytes * self.ranges
    }
}

/// The layout of a scan on a target with `facts`, as `asked` (see the module
/// documentation).
pub fn layout(asked: Asked, facts: &Facts, pricing: &Pricing<'_>) -> Layout {
    let ws = facts.up(facts.working_set_bytes.max(1));
    let default_range = facts.up(if facts.far {
        FAR_RANGE_BYTES
    } else {
        NEAR_RANGE_BYTES
    });
    let (range, ranges, why) = match (asked.range, asked.size) {
        (Some(r), Some(s)) => {
            let n = (s / r).clamp(1, MAX_RANGES);
            let rest = s.saturating_sub(n * r);
            let why = match rest {
                0 => format!(
                    "--size {} in ranges of --range {}",
                    format_size(s),
                    format_size(r)
                ),
                _ => format!(
                    "--size {} in whole ranges of --range {} (the last {} not scanned)",
                    format_size(s),
                    format_size(r),
                    human_bytes(rest as u64)
                ),
            };
            (r, n, why)
        }
        (Some(r), None) => {
            let (n, what) = bounded(r, facts, pricing);
            (
                r,
                n,
                format!("ranges of --range {}: {what}", format_size(r)),
            )
        }
        (None, Some(s)) => {
            let mut r = default_range.max(ws);
            if s / r < MIN_DEFAULT_RANGES {
                r = facts
                    .down(s / MIN_DEFAULT_RANGES)
                    .max(ws)
                    .min(facts.down(s).max(facts.granule()));
            }
            let n = (s / r).clamp(1, MAX_RANGES);
            (
                r,
                n,
                format!("--size {} in ranges of {}", format_size(s), format_size(r)),
            )
        }
        (None, None) => default_layout(default_range.max(ws), ws, facts, pricing),
    };
    Layout {
        range_bytes: range,
        ranges,
        why,
        below_working_set: range < facts.working_set_bytes,
    }
}

/// The default layout: ranges of `range` (at least the working set `ws`), shrunk where
/// fewer than [`MIN_DEFAULT_RANGES`] would fit in the memory the target offers.
fn default_layout(
    range: usize,
    ws: usize,
    facts: &Facts,
    pricing: &Pricing<'_>,
) -> (usize, usize, String) {
    let offers = facts.offers_bytes.unwrap_or(usize::MAX);
    // A target that offers less than one range: one range, all of it.
    if offers < range {
        let r = facts.down(offers).max(facts.granule());
        if r <= ws {
            return (
                r,
                1,
                format!(
                    "one range of {}: half the memory the target offers, less than the DRAM working set of the CPUs ({})",
                    format_size(r),
                    format_size(ws)
                ),
            );
        }
    }
    let (n, what) = bounded(range, facts, pricing);
    // Smaller ranges help where memory is short; where time is, a range's price is
    // mostly its windows, and they would only make the region smaller.
    let memory_bound = facts.offers_bytes.is_some_and(|o| o / range.max(1) <= n);
    if n >= MIN_DEFAULT_RANGES || range <= ws || !memory_bound {
        return (
            range,
            n,
            format!("ranges of {}: {what}", format_size(range)),
        );
    }
    let region = if offers < range { offers } else { n * range };
    let smaller = facts.down(region / MIN_DEFAULT_RANGES).max(ws).min(range);
    let (n, what) = bounded(smaller, facts, pricing);
    (
        smaller,
        n,
        format!(
            "ranges of {} (the default {} would give fewer than {MIN_DEFAULT_RANGES}): {what}",
            format_size(smaller),
            format_size(range)
        ),
    )
}

/// The most ranges of `range` within half the memory the target offers and the time
/// bound, at least 1 and at most [`MAX_RANGES`]; and which bound decided, in words.
fn bounded(range: usize, facts: &Facts, pricing: &Pricing<'_>) -> (usize, String) {
    let bound = facts.bound();
    let by_time = pricing.ranges_within(range, bound);
    let by_memory = facts.offers_bytes.map(|o| o / range.max(1));
    let time = format!(
        "the time bound ({} s with a full run's windows, {} s with --quick's, as the plan prices them)",
        bound.full_s, bound.quick_s
    );
    let (n, what) = match by_memory {
        Some(m) if m <= by_time => (
            m,
            format!(
                "as many as fit in half the memory the target offers ({}), within {time}",
                human_bytes((m * range) as u64)
            ),
        ),
        _ => (by_time, format!("as many as {time} allows")),
    };
    let n = n.clamp(1, MAX_RANGES);
    (n, format!("{n} range(s), {what}"))
}
