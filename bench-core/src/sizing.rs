//! The DRAM working set: how many bytes a family must touch on a target so that its loads
//! miss every cache level.
//!
//! sysfs's last-level cache size is an upper bound, not what a thread sees: a VM's or a
//! partitioned (CAT) share, a sub-NUMA cluster or a victim L3 can behave far smaller.
//! Sizing every DRAM working set from sysfs makes runs slow on CPUs that report hundreds
//! of MiB of L3 while reaching DRAM latency at a few MiB. So the latency sweep finds the
//! **DRAM plateau** (flat over two doublings, at the latency of a cold lap whose lines
//! were flushed: see `bench-mem`'s `levels`) and records here, per target:
//!
//! * `touched_bytes` = [`SAFETY_FACTOR`] x the plateau's start, which is at least
//!   [`SAFETY_FACTOR`] x the effective LLC (the last size below the plateau);
//! * bounded by [`SAFETY_FACTOR`] x the sysfs LLC (past it, the cache cannot matter) and
//!   by [`MEMORY_SHARE_DIVISOR`] of the available memory.
//!
//! Families that run after the sweep (pool atomics, loaded latency, the bandwidth DRAM
//! point) take their size from the [`SizingBook`]; without a sweep in the run they fall
//! back to [`SAFETY_FACTOR`] x the sysfs LLC. Every size says which rule chose it.

use crate::target::TargetSpec;
use crate::topology::Topology;
use crate::units::MIB;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Working set / cache size for the DRAM point (4 x LLC: a random chase then hits the
/// cache on at most a quarter of its loads even if the whole cache were its own).
pub const SAFETY_FACTOR: usize = 4;

/// Smallest DRAM working set chosen from sysfs (a few MiB of LLC still gets this much).
pub const FALLBACK_FLOOR_BYTES: usize = 64 * MIB;

/// DRAM working set when the machine reports no cache sizes at all.
pub const NO_CACHE_INFO_BYTES: usize = 256 * MIB;

/// Smallest working set of a streaming DRAM point ([`crate::bench::Context::dram_stream_bytes`]).
pub const STREAM_FLOOR_BYTES: usize = 1024 * MIB;

/// The same with `--quick`.
pub const STREAM_FLOOR_QUICK_BYTES: usize = 128 * MIB;

/// One chase spans at most this fraction (1/N) of the available memory.
pub const MEMORY_SHARE_DIVISOR: usize = 4;

/// Which rule chose a DRAM working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizingRule {
    /// The latency sweep's DRAM plateau on this target, times the safety factor.
    SweepPlateau,
    /// The safety factor times the sysfs LLC (the sweep hit that bound first, or did not
    /// run in this invocation).
    SysfsLlc,
    /// No cache sizes in sysfs: a fixed size.
    NoCacheInfo,
    /// Given explicitly by the user.
    User,
    /// The memory the target offers bounded it below the other rules (a quarter of
    /// `MemAvailable`, a NUMA node's memory, half a dax device).
    MemoryBound,
}

impl SizingRule {
    /// In words, for method strings.
    pub fn describe(self) -> &'static str {
        match self {
            SizingRule::SweepPlateau => {
                "4 x the start of the DRAM plateau found by this run's latency sweep"
            }
            SizingRule::SysfsLlc => "4 x the last-level cache size from sysfs",
            SizingRule::NoCacheInfo => "a fixed 256 MiB (no cache sizes in sysfs)",
            SizingRule::User => "given on the command line",
            SizingRule::MemoryBound => "bounded by the memory the target offers (a quarter of MemAvailable, a node's memory, half a dax device)",
        }
    }
}

/// The DRAM working set of one target and how it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DramSizing {
    /// Bytes of distinct lines to touch (before the memory cap of a given layout).
    pub touched_bytes: usize,
    /// The rule that chose it.
    pub rule: SizingRule,
    /// Start of the DRAM plateau in the sweep (touched bytes), if one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau_start_bytes: Option<usize>,
    /// Largest sweep size still faster than the plateau: the cache a chase really sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_llc_bytes: Option<usize>,
    /// The last-level cache size sysfs reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysfs_llc_bytes: Option<usize>,
    /// Measurement ids the plateau was found from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<String>,
}

impl DramSizing {
    /// The sysfs rule: 4 x LLC, at least [`FALLBACK_FLOOR_BYTES`]; a fixed size without
    /// cache information.
    pub fn from_sysfs(llc: Option<usize>) -> DramSizing {
        match llc {
            Some(l) => DramSizing {
                touched_bytes: (SAFETY_FACTOR * l).max(FALLBACK_FLOOR_BYTES),
                rule: SizingRule::SysfsLlc,
                plateau_start_bytes: None,
                effective_llc_bytes: None,
                sysfs_llc_bytes: Some(l),
                from: vec![],
            },
            None => DramSizing {
                touched_bytes: NO_CACHE_INFO_BYTES,
                rule: SizingRule::NoCacheInfo,
                plateau_start_bytes: None,
                effective_llc_bytes: None,
                sysfs_llc_bytes: None,
                from: vec![],
            },
        }
    }

    /// The sweep rule: 4 x the plateau's start, bounded by the sysfs rule.
    pub fn from_plateau(
        plateau_start: usize,
        effective_llc: Option<usize>,
        sysfs_llc: Option<usize>,
        from: Vec<String>,
    ) -> DramSizing {
        let bound = DramSizing::from_sysfs(sysfs_llc);
        let own = SAFETY_FACTOR * plateau_start;
        if sysfs_llc.is_some() && own >= bound.touched_bytes {
            return DramSizing {
                plateau_start_bytes: Some(plateau_start),
                effective_llc_bytes: effective_llc,
                from,
                ..bound
            };
        }
        DramSizing {
            touched_bytes: own,
            rule: SizingRule::SweepPlateau,
            plateau_start_bytes: Some(plateau_start),
            effective_llc_bytes: effective_llc,
            sysfs_llc_bytes: sysfs_llc,
            from,
        }
    }

    /// The touched bytes for a chase spanning `span_per_touched` bytes per touched byte,
    /// bounded by the available memory; the second value says when the bound applied.
    pub fn touched_for(&self, span_per_touched: usize, available: Option<usize>) -> (usize, bool) {
        cap_by_memory(self.touched_bytes, span_per_touched, available)
    }

    /// One sentence for method strings: the rule, the figures it used.
    pub fn explain(&self) -> String {
        let mut s = format!("DRAM working set: {}", self.rule.describe());
        if let Some(p) = self.plateau_start_bytes {
            s.push_str(&format!(" (plateau from {}", crate::units::format_size(p)));
            if let Some(e) = self.effective_llc_bytes {
                s.push_str(&format!(", effective LLC {}", crate::units::format_size(e)));
            }
            s.push(')');
        }
        if let Some(l) = self.sysfs_llc_bytes {
            s.push_str(&format!("; sysfs LLC {}", crate::units::format_size(l)));
        }
        s
    }
}

/// `touched` bounded so that its span (`touched x span_per_touched`) stays within
/// 1/[`MEMORY_SHARE_DIVISOR`] of `available`; `true` when the bound applied.
pub fn cap_by_memory(
    touched: usize,
    span_per_touched: usize,
    available: Option<usize>,
) -> (usize, bool) {
    let Some(avail) = available else {
        return (touched, false);
    };
    let max_span = avail / MEMORY_SHARE_DIVISOR;
    let max_touched = max_span / span_per_touched.max(1);
    if touched > max_touched {
        // Whole MiB, at least one.
        ((max_touched / MIB).max(1) * MIB, true)
    } else {
        (touched, false)
    }
}

/// The memory a chase on `target` may draw from, in the units [`cap_by_memory`] takes
/// (it allows 1/[`MEMORY_SHARE_DIVISOR`] of it per chase): the system's `MemAvailable`,
/// and for a NUMA node also that node's memory, for a dax device half the device (a chase
/// and a check chain twice its span fit), for reserved huge pages the free pool.
pub fn available_for(target: &TargetSpec, topo: &Topology) -> Option<usize> {
    let sys = available_memory_bytes();
    let own = match target {
        TargetSpec::Node(n) => topo
            .nodes
            .iter()
            .find(|x| x.id == *n)
            .map(|x| x.mem_total_bytes as usize),
        // Each node holds its share of the region: the tightest node bounds it.
        TargetSpec::Interleave(il) => il
            .expected_shares()
            .into_iter()
            .filter_map(|(n, share)| {
                let mem = topo.node(n)?.mem_total_bytes as f64;
                Some((mem / share.max(f64::MIN_POSITIVE)) as usize)
            })
            .min(),
        TargetSpec::Dax(p) => topo
            .dax
            .iter()
            .find(|d| &d.path == p)
            .map(|d| d.size_bytes as usize / 2 * MEMORY_SHARE_DIVISOR),
        TargetSpec::Hugetlb(h) => topo
            .hugepages
            .iter()
            .find(|x| x.page_size_bytes == h.bytes())
            .map(|x| x.free as usize * x.page_size_bytes * MEMORY_SHARE_DIVISOR),
        _ => None,
    };
    match (sys, own) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `MemAvailable` of /proc/meminfo in bytes.
pub fn available_memory_bytes() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&s)
}

fn parse_mem_available(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The DRAM working sets found in one run, by target (`anon`, `node:1`, ...): the
/// latency sweep writes, the families after it read.
#[derive(Debug, Clone, Default)]
pub struct SizingBook(Arc<Mutex<BTreeMap<String, DramSizing>>>);

impl SizingBook {
    /// Records the sizing of `target`.
    pub fn record(&self, target: &str, sizing: DramSizing) {
        self.lock().insert(target.to_string(), sizing);
    }

    /// The sizing recorded for `target`, if the sweep ran on it.
    pub fn get(&self, target: &str) -> Option<DramSizing> {
        self.lock().get(target).cloned()
    }

    /// Everything recorded.
    pub fn all(&self) -> BTreeMap<String, DramSizing> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, DramSizing>> {
        // A panic while holding the lock leaves a map that is still consistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_rule_is_four_times_llc_with_a_floor() {
        let s = DramSizing::from_sysfs(Some(32 * MIB));
        assert_eq!(s.touched_bytes, 128 * MIB);
        assert_eq!(s.rule, SizingRule::SysfsLlc);
        assert_eq!(
            DramSizing::from_sysfs(Some(4 * MIB)).touched_bytes,
            64 * MIB
        );
        assert_eq!(DramSizing::from_sysfs(None).rule, SizingRule::NoCacheInfo);
    }

    #[test]
    fn plateau_rule_touches_four_times_the_effective_llc() {
        // An Intel guest: sysfs 480 MiB, DRAM plateau from 32 MiB, last cache-like point 16 MiB.
        let s = DramSizing::from_plateau(32 * MIB, Some(16 * MIB), Some(480 * MIB), vec![]);
        assert_eq!(s.rule, SizingRule::SweepPlateau);
        assert_eq!(s.touched_bytes, 128 * MIB);
        assert!(s.touched_bytes >= SAFETY_FACTOR * s.effective_llc_bytes.unwrap());
        assert!(s.explain().contains("plateau from 32M"), "{}", s.explain());
        // A plateau past the sysfs bound: the bound wins, and says so.
        let s = DramSizing::from_plateau(64 * MIB, Some(32 * MIB), Some(32 * MIB), vec![]);
        assert_eq!(s.rule, SizingRule::SysfsLlc);
        assert_eq!(s.touched_bytes, 128 * MIB);
    }

    #[test]
    fn memory_bounds_the_span() {
        // 8 GiB available, 256-byte slots (4 bytes spanned per touched byte): at most 512 MiB touched.
        let avail = Some(8192 * MIB);
        assert_eq!(cap_by_memory(1920 * MIB, 4, avail), (512 * MIB, true));
        assert_eq!(cap_by_memory(128 * MIB, 4, avail), (128 * MIB, false));
        assert_eq!(cap_by_memory(128 * MIB, 4, None), (128 * MIB, false));
    }

    #[test]
    fn meminfo_is_parsed() {
        let s = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(parse_mem_available(s), Some(23_000_000 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
        assert!(available_memory_bytes().is_some_and(|b| b > 0));
        let topo = Topology::system();
        let anon = available_for(&TargetSpec::Anon, &topo).unwrap();
        assert!(anon > 0);
        // A node never offers more than its own memory.
        if let Some(n) = topo.nodes.first() {
            let node = available_for(&TargetSpec::Node(n.id), &topo).unwrap();
            assert!(node <= (n.mem_total_bytes as usize).max(anon) && node <= anon);
        }
    }

    #[test]
    fn an_interleave_is_bounded_by_its_tightest_node() {
        let dir = tempfile::tempdir().unwrap();
        crate::topology::write_fake_sysfs(dir.path()).unwrap();
        let topo = Topology::read(dir.path());
        let small = 446_464 * 1024; // node 1 of the fake tree
        let t = |s: &str| s.parse::<TargetSpec>().unwrap();
        // Half of the pages on node 1: twice its memory, at most.
        let even = available_for(&t("interleave:0,1"), &topo).unwrap();
        assert!(even <= 2 * small, "{even}");
        // A quarter on node 1: four times its memory, at most.
        let w = available_for(&t("interleave:0=3,1=1"), &topo).unwrap();
        assert!(w <= 4 * small && w >= even, "{w}");
    }

    #[test]
    fn book_records_per_target() {
        let b = SizingBook::default();
        assert!(b.get("anon").is_none());
        b.record("anon", DramSizing::from_sysfs(Some(MIB)));
        let c = b.clone();
        assert_eq!(c.get("anon").unwrap().rule, SizingRule::SysfsLlc);
        assert!(c.get("node:1").is_none());
    }
}
