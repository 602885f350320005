//! # bench-core
//!
//! The measuring instrument that every cxlchar benchmark family stands on:
//!
//! * [`timer`]: a cycle timer (`rdtscp`/`lfence` on x86_64, `cntvct_el0` on aarch64)
//!   calibrated against `CLOCK_MONOTONIC_RAW`, with its own overhead measured so that it
//!   can be subtracted, and a portable `clock_gettime` fallback;
//! * [`pin`]: CPU lists (`0-3,6`) and thread pinning with `core_affinity`;
//! * [`target`]: memory targets (`anon`, `thp`, `hugetlb:2M`, `node:N`, `dax:/dev/daxX.Y`,
//!   `file:PATH`) allocated as a [`target::Region`] whose placement is verified;
//! * [`topology`]: what the machine offers (NUMA nodes, caches, dax devices, hugepage
//!   pools), read from sysfs under a configurable root so that it can be tested;
//! * [`env`](mod@env): the environment that changes results, and warnings that say how to fix it;
//! * [`stats`]: samples to distributions (hdrhistogram percentiles, exact mean/stdev), the
//!   one median and the one Hockney fit (weighted by 1/t^2, latency never negative);
//! * [`params`]: the `params.json` document (schema version, measurements, skipped);
//! * [`keys`]: the registry of params keys (unit, meaning, producer, far-memory name,
//!   the models that read it);
//! * [`pci`]: the `pci:DOMAIN:BUS:DEV.FN/BAR` spelling of a PCI BAR;
//! * [`counters`]: software and hardware event counts around a timed section (perf_event),
//!   disturbance detection and retries;
//! * [`chase`]: the prefetcher-proof pointer chase every latency family uses (one touched
//!   line per slot at a random line and word, TLB-local random order, full lap before timing);
//! * [`sizing`]: the DRAM working set of a target (from the latency sweep's DRAM plateau,
//!   else from sysfs), shared by every family that must miss the caches;
//! * [`cacheline`]: flush, fence and non-temporal store primitives;
//! * [`lockstep`]: pinned threads running timed samples together (the multi-threaded
//!   bandwidth families of bench-mem and bench-cxl);
//! * [`testing`]: tests that need what a machine may lack say so visibly, and fail where
//!   `CXLCHAR_REQUIRE` demands it;
//! * [`bench`](mod@bench): the [`bench::Benchmark`] trait that each benchmark implements.
#![deny(missing_docs)]

pub mod bench;
pub mod cacheline;
pub mod chase;
pub mod cleanup;
pub mod counters;
pub mod cxl;
pub mod env;
pub mod error;
pub mod keys;
pub mod lockstep;
pub mod params;
pub mod pci;
pub mod pin;
pub mod sizing;
pub mod stats;
pub mod target;
pub mod testing;
pub mod timer;
pub mod topology;

pub use error::CoreError;

/// Size units used in parsers and displays (binary, as sizes of memory are).
pub mod units {
    /// One KiB.
    pub const KIB: usize = 1 << 10;
    /// One MiB.
    pub const MIB: usize = 1 << 20;
    /// One GiB.
    pub const GIB: usize = 1 << 30;

    /// Largest size a `--size`-style argument may give: 128 TiB, the user address space of
    /// an x86-64 process with 4-level paging, so no buffer of more can ever be mapped.
    pub const MAX_SIZE_BYTES: usize = 1 << 47;

    /// A `--size`-style argument: [`parse_size`], zero is refused, and so is a size above
    /// [`MAX_SIZE_BYTES`] (one clear error at parse time rather than a failed allocation).
    pub fn parse_positive_size(s: &str) -> Result<usize, String> {
        let v = parse_size(s)?;
        if v == 0 {
            return Err("size must be positive".into());
        }
        if v > MAX_SIZE_BYTES {
            return Err(format!(
                "size '{s}' is larger than any memory a process can map (128 TiB)"
            ));
        }
        Ok(v)
    }

    /// A byte offset argument (`--bar-offset`, `--offset`): [`parse_size`], zero allowed.
    pub fn parse_offset(s: &str) -> Result<u64, String> {
        parse_size(s).map(|v| v as u64)
    }

    /// Parses a size such as `4096`, `64K`, `2M`, `1G` (binary units, optional `iB`/`B`).
    pub fn parse_size(s: &str) -> Result<usize, String> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        let body = lower
            .strip_suffix("ib")
            .or_else(|| lower.strip_suffix('b'))
            .unwrap_or(&lower);
        let (num, mult) = match body.chars().last() {
            Some('k') => (&body[..body.len() - 1], KIB),
            Some('m') => (&body[..body.len() - 1], MIB),
            Some('g') => (&body[..body.len() - 1], GIB),
            _ => (body, 1),
        };
        let n: usize = num.trim().parse().map_err(|_| {
            format!("invalid size '{s}': expected a number with an optional K/M/G suffix")
        })?;
        n.checked_mul(mult)
            .ok_or_else(|| format!("size '{s}' is too large"))
    }

    /// Formats a byte count with the largest binary unit that divides it (`64K`, `1G`).
    pub fn format_size(bytes: usize) -> String {
        if bytes >= GIB && bytes.is_multiple_of(GIB) {
            format!("{}G", bytes / GIB)
        } else if bytes >= MIB && bytes.is_multiple_of(MIB) {
            format!("{}M", bytes / MIB)
        } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
            format!("{}K", bytes / KIB)
        } else {
            format!("{bytes}")
        }
    }

    /// Formats a byte count for people: `512 B`, `4.3 GiB`, `32 MiB`.
    pub fn human_bytes(bytes: u64) -> String {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = bytes as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 || v.fract() == 0.0 {
            format!("{v:.0} {}", UNITS[i])
        } else {
            format!("{v:.1} {}", UNITS[i])
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        #[test]
        fn sizes_round_trip() {
            assert_eq!(parse_size("64K").unwrap(), 65536);
            assert_eq!(parse_size("2MiB").unwrap(), 2 * MIB);
            assert_eq!(parse_size("1g").unwrap(), GIB);
            assert_eq!(parse_size("100").unwrap(), 100);
            assert!(parse_size("abc").is_err());
            assert_eq!(parse_positive_size("128G").unwrap(), 128 * GIB);
            let e = parse_positive_size("1000000G").unwrap_err();
            assert!(e.contains("larger than any memory"), "{e}");
            assert!(parse_positive_size("0").is_err());
            assert!(parse_positive_size("99999999999999999999G").is_err());
            assert!(parse_size("").is_err());
            assert_eq!(format_size(3 * MIB), "3M");
            assert_eq!(format_size(100), "100");
            assert_eq!(human_bytes(512), "512 B");
            assert_eq!(human_bytes(32 << 20), "32 MiB");
            assert_eq!(human_bytes(4548824 * 1024), "4.3 GiB");
        }
    }
}
