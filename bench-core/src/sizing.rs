//! The DRAM working set: how many bytes a family must touch on a target so that its loads
//! miss every cache level the CPUs it runs on can fill.
//!
//! **The rule.** A family running on a set of CPUs touches at least [`SAFETY_FACTOR`] x
//! the caches those CPUs can fill together: every distinct last-level instance and every
//! L2 instance they use, from sysfs ([`crate::topology::CacheReach`]). One thread of a
//! 16-core server with one shared 300 MiB L3 reaches 302 MiB; its 16 threads 332 MiB; 16
//! threads spread over the CCDs of an EPYC reach many 32 MiB L3s, one thread only one.
//! The latency sweep may find a **DRAM plateau** ([`SizingRule::SweepPlateau`]: flat over
//! two doublings at the latency of a cold lap) that starts later than the caches sysfs
//! names (a memory-side cache, an L4): then [`SAFETY_FACTOR`] x its start wins. A plateau
//! that starts earlier (a VM whose effective LLC is far smaller than sysfs says) does not
//! lower the rule: a random chase can reach DRAM-like latency long before 16 streaming
//! threads leave a 300 MiB L3.
//!
//! **Bounds.** A chase spans at most 1/[`MEMORY_SHARE_DIVISOR`] of the memory the target
//! offers ([`available_for`], read once per run: [`SizingBook::available`]); a size the
//! bound lowered says so ([`SizingRule::MemoryBound`]). Streaming points are at least
//! [`STREAM_FLOOR_BYTES`]. `--quick` changes none of this: the working set
//! that makes a figure DRAM is the same in a quick and a full run.
//!
//! **The check.** Every DRAM key is confirmed at run time by [`crate::dram_check`]: its
//! kernel at the size S chosen here and at 2S must agree, else S grows. The checks a run
//! made are kept in the [`SizingBook`] with the sizes, and lift later families' sizes.

use crate::dram_check::{DramCheck, Pattern};
use crate::memory::{OnMemory, TargetSpec};
use crate::topology::{CacheReach, Topology};
use crate::units::MIB;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Working set / cache size for a DRAM point (a random chase then hits the cache on at
/// most a quarter of its loads even if every cache were its own; a stream on none).
pub const SAFETY_FACTOR: usize = 4;

/// Smallest DRAM working set of a chase (a few MiB of cache still gets this much).
pub const FALLBACK_FLOOR_BYTES: usize = 64 * MIB;

/// DRAM working set when the machine reports no cache sizes at all.
pub const NO_CACHE_INFO_BYTES: usize = 256 * MIB;

/// Smallest working set of a streaming DRAM point ([`crate::bench::Context::dram_stream_bytes`]),
/// with and without `--quick` (the cache rule and the DRAM check decide above it).
pub const STREAM_FLOOR_BYTES: usize = 64 * MIB;

/// One chase spans at most this fraction (1/N) of the available memory.
pub const MEMORY_SHARE_DIVISOR: usize = 4;

/// The larger size of a DRAM check spans at most this fraction (1/N) of the available
/// memory (it runs alone, after the family's own working set is released or reused).
pub const CHECK_MEMORY_SHARE_DIVISOR: usize = 2;

/// Which rule chose a DRAM working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizingRule {
    /// The latency sweep's DRAM plateau on this target, times the safety factor (it
    /// started past the caches sysfs names).
    SweepPlateau,
    /// The safety factor times the caches the family's CPUs can fill (sysfs instances).
    CacheReach,
    /// The safety factor times CPU 0's last-level cache. Never chosen: it stays so that a
    /// params.json that records it still reads.
    SysfsLlc,
    /// No cache sizes in sysfs: a fixed size.
    NoCacheInfo,
    /// Given explicitly by the user.
    User,
    /// The memory the target offers bounded it below the other rules (a quarter of
    /// `MemAvailable`, a node's free memory, half a dax device).
    MemoryBound,
    /// Grown by this run's DRAM check: the rule's size still ran faster than twice it.
    Check,
}

impl SizingRule {
    /// In words, for method strings.
    pub fn describe(self) -> &'static str {
        match self {
            SizingRule::SweepPlateau => {
                "4 x the start of the DRAM plateau found by this run's latency sweep (past the caches sysfs names)"
            }
            SizingRule::CacheReach => {
                "4 x the caches the measuring CPUs can fill (every distinct LLC and L2 instance of their CPU set, sysfs)"
            }
            SizingRule::SysfsLlc => "4 x the last-level cache size from sysfs",
            SizingRule::NoCacheInfo => "a fixed 256 MiB (no cache sizes in sysfs)",
            SizingRule::User => "given on the command line",
            SizingRule::MemoryBound => "bounded by the memory the target offers (a quarter of MemAvailable, a node's free memory, half a dax device)",
            SizingRule::Check => "grown by this run's DRAM check (the smaller size ran faster than twice it)",
        }
    }
}

/// The DRAM working set of one family on one target and how it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DramSizing {
    /// Bytes of distinct lines to touch (before the memory cap of a given layout).
    pub touched_bytes: usize,
    /// The rule that chose it.
    pub rule: SizingRule,
    /// The caches of the CPU set it was sized for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_reach: Option<CacheReach>,
    /// Start of the DRAM plateau in the sweep (touched bytes), if one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau_start_bytes: Option<usize>,
    /// Largest sweep size still faster than the plateau: the cache a chase really sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_llc_bytes: Option<usize>,
    /// The last-level cache size sysfs reports for CPU 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysfs_llc_bytes: Option<usize>,
    /// Measurement ids the size was found or confirmed from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<String>,
}

impl DramSizing {
    /// The cache rule for a CPU set: [`SAFETY_FACTOR`] x the caches it can fill, at least
    /// [`FALLBACK_FLOOR_BYTES`]; a fixed size without cache information. `sysfs_llc` is
    /// recorded for reference.
    pub fn for_cpus(reach: Option<CacheReach>, sysfs_llc: Option<usize>) -> DramSizing {
        match reach {
            Some(r) => DramSizing {
                touched_bytes: (SAFETY_FACTOR * r.total_bytes).max(FALLBACK_FLOOR_BYTES),
                rule: SizingRule::CacheReach,
                cache_reach: Some(r),
                plateau_start_bytes: None,
                effective_llc_bytes: None,
                sysfs_llc_bytes: sysfs_llc,
                from: vec![],
            },
            None => DramSizing {
                touched_bytes: NO_CACHE_INFO_BYTES,
                rule: SizingRule::NoCacheInfo,
                cache_reach: None,
                plateau_start_bytes: None,
                effective_llc_bytes: None,
                sysfs_llc_bytes: sysfs_llc,
                from: vec![],
            },
        }
    }

    /// `self` (the cache rule) with a DRAM plateau found at `plateau_start`: the plateau
    /// is recorded, and [`SAFETY_FACTOR`] x its start wins only where it is larger.
    pub fn with_plateau(
        self,
        plateau_start: usize,
        effective_llc: Option<usize>,
        from: Vec<String>,
    ) -> DramSizing {
        let own = SAFETY_FACTOR * plateau_start;
        let (touched_bytes, rule) = if own > self.touched_bytes {
            (own, SizingRule::SweepPlateau)
        } else {
            (self.touched_bytes, self.rule)
        };
        DramSizing {
            touched_bytes,
            rule,
            plateau_start_bytes: Some(plateau_start),
            effective_llc_bytes: effective_llc,
            from,
            ..self
        }
    }

    /// `self` at least `bytes`, which `rule` chose (a check's grown size).
    pub fn at_least(mut self, bytes: usize, rule: SizingRule) -> DramSizing {
        if bytes > self.touched_bytes {
            self.touched_bytes = bytes;
            self.rule = rule;
        }
        self
    }

    /// The touched bytes for a chase spanning `span_per_touched` bytes per touched byte,
    /// bounded by the available memory; the second value says when the bound applied.
    pub fn touched_for(&self, span_per_touched: usize, available: Option<usize>) -> (usize, bool) {
        cap_by_memory(self.touched_bytes, span_per_touched, available)
    }

    /// One sentence for method strings: the rule, the figures it used.
    pub fn explain(&self) -> String {
        let mut s = format!("DRAM working set: {}", self.rule.describe());
        if let Some(r) = &self.cache_reach {
            s.push_str(&format!(" ({})", r.describe()));
        }
        if let Some(p) = self.plateau_start_bytes {
            s.push_str(&format!(
                "; latency plateau from {}",
                crate::units::format_size(p)
            ));
            if let Some(e) = self.effective_llc_bytes {
                s.push_str(&format!(", effective LLC {}", crate::units::format_size(e)));
            }
        }
        if self.cache_reach.is_none() {
            if let Some(l) = self.sysfs_llc_bytes {
                s.push_str(&format!("; sysfs LLC {}", crate::units::format_size(l)));
            }
        }
        s
    }
}

/// The footprint of a streaming DRAM point for a working set of `bytes`: at least
/// [`STREAM_FLOOR_BYTES`], in whole MiB.
pub fn stream_bytes(bytes: usize) -> usize {
    bytes.max(STREAM_FLOOR_BYTES).div_ceil(MIB) * MIB
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
/// and for a NUMA node also what that node has free, for a dax device half the device (a chase
/// and a check chain twice its span fit), for reserved huge pages the free pool; for a BAR
/// window the system's alone.
pub fn available_for(target: &impl OnMemory, topo: &Topology) -> Option<usize> {
    let sys = available_memory_bytes();
    let Some(target) = target.memory_target() else {
        return sys;
    };
    let own = match target {
        TargetSpec::Node(n) => node_offers(topo, *n),
        // Each node holds its share of the region: the tightest node bounds it.
        TargetSpec::Interleave(il) => il
            .expected_shares()
            .into_iter()
            .filter_map(|(n, share)| {
                let mem = node_offers(topo, n)? as f64;
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

/// The memory NUMA node `n` offers: its memory, and no more than it has free now (its
/// sysfs `MemFree`, when this machine has that node). A CPU-less node is never
/// reclaimed into: a run that counted its whole memory would be killed by the OOM
/// killer once the node's own kernel allocations and another family's region share it.
fn node_offers(topo: &Topology, n: usize) -> Option<usize> {
    let total = topo.node(n)?.mem_total_bytes as usize;
    let path = format!("/sys/devices/system/node/node{n}/meminfo");
    let free = crate::sysfs::read_trim(Path::new(&path)).and_then(|m| parse_node_mem_free(&m));
    Some(free.map_or(total, |f| f.min(total)))
}

/// `Node N MemFree:` of a node's meminfo, in bytes (`None` when absent or past 64 bits).
fn parse_node_mem_free(meminfo: &str) -> Option<usize> {
    let b = crate::sysfs::meminfo_bytes(meminfo, "MemFree").ok()??;
    usize::try_from(b).ok()
}

/// `MemAvailable` of /proc/meminfo in bytes.
pub fn available_memory_bytes() -> Option<usize> {
    let s = crate::sysfs::read_trim(Path::new("/proc/meminfo"))?;
    parse_mem_available(&s)
}

fn parse_mem_available(meminfo: &str) -> Option<usize> {
    let b = crate::sysfs::meminfo_bytes(meminfo, "MemAvailable").ok()??;
    usize::try_from(b).ok()
}

/// What one run learned about DRAM working sets, shared by its families: the latency
/// sweep's sizing of each target (its DRAM plateau), and every DRAM check made
/// ([`crate::dram_check`]) with the keys it covers.
#[derive(Debug, Clone, Default)]
pub struct SizingBook(Arc<Mutex<Book>>);

#[derive(Debug, Default)]
struct Book {
    sizes: BTreeMap<String, DramSizing>,
    checks: Vec<DramCheck>,
    available: BTreeMap<String, Option<usize>>,
}

impl SizingBook {
    /// Records the sizing of `target` (the latency sweep's).
    pub fn record(&self, target: &str, sizing: DramSizing) {
        self.lock().sizes.insert(target.to_string(), sizing);
    }

    /// The sizing recorded for `target`, if the sweep ran on it.
    pub fn get(&self, target: &str) -> Option<DramSizing> {
        self.lock().sizes.get(target).cloned()
    }

    /// Everything recorded.
    pub fn all(&self) -> BTreeMap<String, DramSizing> {
        self.lock().sizes.clone()
    }

    /// The memory `target` offers ([`available_for`]), read the first time it is asked in
    /// this run and the same ever after: a bound that does not move with the regions the
    /// run itself holds at the moment (a family asking while its own region is mapped
    /// would otherwise size itself smaller than the runner placed it).
    pub fn available(&self, target: &impl OnMemory, topo: &Topology) -> Option<usize> {
        *self
            .lock()
            .available
            .entry(target.to_string())
            .or_insert_with(|| available_for(target, topo))
    }

    /// Sets the memory `target` offers to `bytes`, as if this run had read it: a plan
    /// for another machine (`--plan --sysfs`) gives that machine's memory.
    pub fn assume_available(&self, target: &str, bytes: Option<usize>) {
        self.lock().available.insert(target.to_string(), bytes);
    }

    /// Records a DRAM check; returns its index (for [`SizingBook::cover`]).
    pub fn record_check(&self, check: DramCheck) -> usize {
        let mut b = self.lock();
        b.checks.push(check);
        b.checks.len() - 1
    }

    /// The check that covers a working set of `bytes` of `pattern` on `target` run by
    /// `cpus`: a check of the same target and pattern whose CPUs include them and whose
    /// size is at most `bytes` (more CPUs fill more caches, and a larger set than a
    /// confirmed one misses the caches too), or that started at `bytes` (whatever it
    /// concluded, a second check from the same size would repeat its points under the same
    /// measurement ids). An unconfirmed check covers as well: the keys then stand on it,
    /// warning included, rather than on a second check that the same noise or memory bound
    /// would leave unconfirmed.
    pub fn covering(
        &self,
        target: &str,
        pattern: Pattern,
        cpus: &[usize],
        bytes: usize,
    ) -> Option<usize> {
        self.lock().checks.iter().position(|c| {
            c.target == target
                && c.pattern == pattern
                && (c.reported_bytes <= bytes || c.start_bytes == bytes)
                && c.covers_cpus(cpus)
        })
    }

    /// The largest size a check of `pattern` on `target` grew to for CPUs among `cpus` (a
    /// set that includes those CPUs fills at least their caches): the smaller sizes ran
    /// faster in every pass, confirmed or not at the size it stopped; `None` when no check
    /// grew.
    pub fn grown(&self, target: &str, pattern: Pattern, cpus: &[usize]) -> Option<usize> {
        self.lock()
            .checks
            .iter()
            .filter(|c| c.target == target && c.pattern == pattern && c.grew())
            .filter(|c| c.cpu_list().iter().all(|x| cpus.contains(x)))
            .map(|c| c.reported_bytes)
            .max()
    }

    /// Adds `keys` to the keys check `index` covers.
    pub fn cover(&self, index: usize, keys: impl IntoIterator<Item = String>) {
        if let Some(c) = self.lock().checks.get_mut(index) {
            for k in keys {
                if !c.keys.contains(&k) {
                    c.keys.push(k);
                }
            }
        }
    }

    /// Every check of the run, in the order made.
    pub fn checks(&self) -> Vec<DramCheck> {
        self.lock().checks.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        // A panic while holding the lock leaves a book that is still consistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixtures::{write_server, Server};
    use crate::units::GIB;

    fn topo(s: &Server) -> Topology {
        let dir = tempfile::tempdir().unwrap();
        write_server(dir.path(), s).unwrap();
        Topology::read(dir.path())
    }

    /// (chase touched bytes, stream footprint) the rule picks for `cpus`.
    fn rule(t: &Topology, cpus: &[usize]) -> (usize, usize) {
        let s = DramSizing::for_cpus(t.cache_reach(cpus), t.llc_bytes());
        assert_eq!(s.rule, SizingRule::CacheReach);
        (s.touched_bytes, stream_bytes(s.touched_bytes))
    }

    #[test]
    fn the_h200_host_sizes_from_its_shared_300m_l3() {
        let t = topo(&Server::h200_host());
        // One thread: its L2 and the L3; 4 x 302 MiB.
        assert_eq!(rule(&t, &[0]), (1208 * MIB, 1208 * MIB));
        // 16 threads: the L3 once, sixteen L2s; 4 x 332 MiB, past the 128 MiB that put
        // the 16-thread read inside the cache (282 GB/s against 104 at 4 GiB).
        let all: Vec<usize> = (0..16).collect();
        assert_eq!(rule(&t, &all), (1328 * MIB, 1328 * MIB));
        assert!(rule(&t, &all).1 > 4 * 300 * MIB);
    }

    #[test]
    fn two_sockets_with_snc_count_one_l3_per_socket() {
        let s = Server::intel_2s_snc();
        let t = topo(&s);
        assert_eq!(t.nodes.len(), 4, "SNC2 on two sockets");
        // One thread: 60 MiB L3 + 2 MiB L2.
        assert_eq!(rule(&t, &[0]), (248 * MIB, 248 * MIB));
        // SMT siblings share the L2: no second L2.
        assert_eq!(rule(&t, &[0, 16]).0, 248 * MIB);
        // One SNC node (4 cores, 8 CPUs): still the whole socket's L3.
        assert_eq!(rule(&t, &s.node_cpus(0)), (272 * MIB, 272 * MIB));
        // One socket (16 CPUs): the L3 and 8 L2s.
        let socket = s.sharing(3, 0);
        assert_eq!(socket.len(), 16);
        assert_eq!(rule(&t, &socket), (304 * MIB, 304 * MIB));
        // Both sockets: two L3s, 16 L2s.
        let all: Vec<usize> = (0..32).collect();
        let r = t.cache_reach(&all).unwrap();
        assert_eq!((r.llc_instances, r.mid_instances), (2, 16));
        assert_eq!(rule(&t, &all), (608 * MIB, 608 * MIB));
    }

    #[test]
    fn an_epyc_counts_the_ccds_its_cpus_spread_over() {
        let s = Server::epyc_12ccd();
        let t = topo(&s);
        assert_eq!(t.nodes.len(), 2);
        // One thread sees one CCD's 32 MiB (+1 MiB L2): 132 MiB.
        assert_eq!(rule(&t, &[0]), (132 * MIB, 132 * MIB));
        // One CCD, both threads of its 8 cores: 32 + 8 MiB.
        let ccd = s.sharing(3, 0);
        assert_eq!(ccd.len(), 16);
        assert_eq!(rule(&t, &ccd), (160 * MIB, 160 * MIB));
        // One NPS2 node: six CCDs.
        assert_eq!(rule(&t, &s.node_cpus(0)), (960 * MIB, 960 * MIB));
        // The socket (all 192 CPUs): twelve L3s of 32 MiB, 96 L2s: 480 MiB.
        let all: Vec<usize> = (0..192).collect();
        let r = t.cache_reach(&all).unwrap();
        assert_eq!((r.llc_instances, r.mid_instances), (12, 96));
        assert_eq!(rule(&t, &all), (1920 * MIB, 1920 * MIB));
        // Sixteen threads on sixteen CCD-distinct cores reach 12 L3s, sixteen on one
        // CCD's CPUs one: the CPU set, not the thread count, decides.
        let spread: Vec<usize> = (0..12).map(|c| 8 * c).collect();
        assert_eq!(t.cache_reach(&spread).unwrap().llc_instances, 12);
        assert!(rule(&t, &spread).0 > 4 * rule(&t, &ccd).0 / 2);
    }

    #[test]
    fn a_cpu_less_cxl_node_adds_no_cache() {
        let s = Server::cxl_host();
        let t = topo(&s);
        assert!(t.nodes[1].likely_far_memory && t.nodes[1].cpus.is_empty());
        assert_eq!(rule(&t, &[0]), (132 * MIB, 132 * MIB));
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(rule(&t, &all), (160 * MIB, 160 * MIB));
        // A machine with next to no cache still streams the floor.
        assert_eq!(stream_bytes(MIB), STREAM_FLOOR_BYTES);
        // The far node's memory bounds a chase on it, not its (absent) caches.
        let far = TargetSpec::Node(1);
        let avail = available_for(&far, &t).unwrap();
        assert!(avail <= 128 * GIB);
        let (touched, capped) =
            DramSizing::for_cpus(t.cache_reach(&all), t.llc_bytes()).touched_for(4, Some(avail));
        assert_eq!((touched, capped), (160 * MIB, false));
    }

    #[test]
    fn without_per_cpu_caches_cpu0_stands_for_every_cpu() {
        // A tree without cache instances: only CPU 0's caches (L2 1 MiB private, L3
        // 32 MiB "0").
        let dir = tempfile::tempdir().unwrap();
        crate::topology::write_fake_sysfs(dir.path()).unwrap();
        let mut t = Topology::read(dir.path());
        t.cache_instances.clear();
        let r = t.cache_reach(&[0, 1]).unwrap();
        // CPU 0 shares nothing with CPU 1, so CPU 1 gets its own of each: the safe side.
        assert_eq!(r.total_bytes, 2 * (32 + 1) * MIB);
        assert_eq!(
            DramSizing::for_cpus(None, None).rule,
            SizingRule::NoCacheInfo
        );
    }

    #[test]
    fn a_later_plateau_wins_an_earlier_one_does_not() {
        let t = topo(&Server::h200_host());
        let base = DramSizing::for_cpus(t.cache_reach(&[0]), t.llc_bytes());
        // The VM's chase reached DRAM latency at 16 MiB: the cache rule still stands.
        let s = base.clone().with_plateau(16 * MIB, Some(8 * MIB), vec![]);
        assert_eq!(
            (s.touched_bytes, s.rule),
            (1208 * MIB, SizingRule::CacheReach)
        );
        assert!(s.explain().contains("plateau from 16M"), "{}", s.explain());
        assert!(s.explain().contains("LLC 300M"), "{}", s.explain());
        // A memory-side cache past the L3: the plateau wins.
        let s = base.with_plateau(GIB, None, vec![]);
        assert_eq!(
            (s.touched_bytes, s.rule),
            (4 * GIB, SizingRule::SweepPlateau)
        );
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
        let node = "Node 1 MemTotal:  446464 kB\nNode 1 MemFree:   400000 kB\n";
        assert_eq!(parse_node_mem_free(node), Some(400_000 * 1024));
        assert_eq!(parse_node_mem_free("Node 1 MemTotal: 1 kB\n"), None);
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
    fn book_records_sizes_and_checks_that_cover() {
        use crate::dram_check::{run, Better, CheckInfo, Plan};
        let b = SizingBook::default();
        assert!(b.get("anon").is_none());
        b.record("anon", DramSizing::for_cpus(None, None));
        let c = b.clone();
        assert_eq!(c.get("anon").unwrap().rule, SizingRule::NoCacheInfo);
        assert!(c.get("node:1").is_none());
        let plan = Plan {
            start_bytes: GIB,
            floor_bytes: GIB,
            max_bytes: 8 * GIB,
            better: Better::Higher,
        };
        let o = run::<()>(plan, |_, _| Ok((10.0, None))).unwrap();
        let info = CheckInfo {
            target: "anon".into(),
            benchmark: "mem.bandwidth".into(),
            pattern: Pattern::Stream,
            kernel: "read".into(),
            cpus: vec![0, 1],
            unit: "GB/s".into(),
            sizing: String::new(),
            keys: vec!["mem_bw_gbs".into()],
        };
        let i = b.record_check(o.into_check(&plan, info.clone()));
        // Covered: same target and pattern, CPUs among the check's, at least its size.
        assert_eq!(b.covering("anon", Pattern::Stream, &[1], 2 * GIB), Some(i));
        assert_eq!(b.covering("anon", Pattern::Stream, &[0, 1], GIB), Some(i));
        assert_eq!(b.covering("anon", Pattern::Stream, &[0], GIB / 2), None);
        assert_eq!(b.covering("anon", Pattern::Chase, &[0], GIB), None);
        assert_eq!(b.covering("node:1", Pattern::Stream, &[0], GIB), None);
        assert_eq!(b.covering("anon", Pattern::Stream, &[2], GIB), None);
        // A check that grew past its start still covers a second one from the same start:
        // that one would measure the same points under the same ids.
        let grew = run::<()>(plan, |bytes, _| {
            Ok((if bytes == GIB { 20.0 } else { 10.0 }, None))
        })
        .unwrap();
        let mut info2 = info.clone();
        info2.target = "node:2".into();
        let j = b.record_check(grew.into_check(&plan, info2));
        assert!(b.checks()[j].reported_bytes > GIB, "{:?}", b.checks()[j]);
        assert_eq!(b.covering("node:2", Pattern::Stream, &[0], GIB), Some(j));
        assert_eq!(b.covering("node:2", Pattern::Stream, &[0], GIB + 1), None);
        b.cover(i, ["flush_bw_gbs".to_string(), "mem_bw_gbs".to_string()]);
        assert_eq!(b.checks()[0].keys, vec!["mem_bw_gbs", "flush_bw_gbs"]);
        assert_eq!(b.grown("anon", Pattern::Stream, &[0, 1]), None);
    }
}
