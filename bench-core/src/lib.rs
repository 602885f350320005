//! # bench-core
//!
//! The measuring instrument that every cxlchar benchmark family stands on:
//!
//! * [`timer`]: a cycle timer (`rdtscp`/`lfence` on x86_64, `cntvct_el0` on aarch64)
//!   calibrated against `CLOCK_MONOTONIC_RAW`, with its own overhead measured so that it
//!   can be subtracted, and a portable `clock_gettime` fallback;
//! * [`pin`]: CPU lists (`0-3,6`) and thread pinning with `core_affinity`;
//! * [`memory`]: memory targets (`anon`, `thp`, `hugetlb:2M`, `node:N`, `dax:/dev/daxX.Y`,
//!   `file:PATH`, and the `cxl:` names that resolve to one) and the [`memory::Region`]s on
//!   them, whose placement is verified;
//! * [`effort`]: how many points, samples and how much time each family takes, quick or
//!   full: the one place where `--quick` is decided;
//! * [`topology`]: what the machine offers (NUMA nodes, caches, dax devices, hugepage
//!   pools), read from sysfs under a configurable root so that it can be tested;
//! * [`env`](mod@env): the environment that changes results, and warnings that say how to fix it;
//! * [`stats`]: samples to distributions (hdrhistogram percentiles, exact mean/stdev), the
//!   one median and the one Hockney fit (weighted by 1/t^2, latency never negative);
//! * [`firmware`]: advertised (HMAT/CDAT) figures beside measured ones, and weighted
//!   interleave weights from measured bandwidths;
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
//! * [`cacheline`]: flush, fence and non-temporal store primitives (x86_64 and AArch64);
//! * [`kernels`]: the streaming loops (read, write, non-temporal write, copy, memset,
//!   `dc zva`) per ISA (AVX-512/AVX2/SSE2, SVE/NEON, scalar), for every family that
//!   streams memory from CPUs (bench-mem's bandwidth and agents, the CPU agents beside
//!   bench-gpu's DMA);
//! * [`rmw`]: atomic compare-and-swap, fetch-add and swap as named instructions (`lock`,
//!   AArch64 LSE or LL/SC);
//! * [`crew`]: the one driver of pinned threads running a kernel together: windows in
//!   which every thread ran (the all-thread bandwidth figures, with their self-check and
//!   disturbance evidence) and lockstep rounds (the collective copies);
//! * [`dma`]: the traits through which a device that copies to and from host memory (a
//!   GPU) is a family's aggressor without the family depending on its driver;
//! * [`plan`]: the cost model of a run (each benchmark's points and their seconds) and the
//!   progress it reports point by point;
//! * [`testing`]: tests that need what a machine may lack say so visibly, and fail where
//!   `CXLCHAR_REQUIRE` demands it;
//! * [`bench`](mod@bench): the [`bench::Benchmark`] trait that each benchmark implements.
#![deny(missing_docs)]

pub mod bench;
pub mod cacheline;
pub mod chase;
pub mod cleanup;
pub mod counters;
pub mod crew;
pub mod cxl;
pub mod dma;
pub mod dram_check;
pub mod effort;
pub mod env;
pub mod error;
pub mod firmware;
pub mod kernels;
pub mod keys;
pub mod memory;
pub mod params;
pub mod pci;
pub mod pin;
pub mod plan;
pub mod rmw;
pub mod sizing;
pub mod stats;
pub mod sysfs;
pub mod testing;
pub mod timer;
pub mod topology;
pub mod warning;

pub use error::CoreError;

/// Size units used in parsers and displays (binary, as sizes of memory are), and the one
/// parser of durations on the command line.
pub mod units {
    use std::time::Duration;

    /// One KiB.
    pub const KIB: usize = 1 << 10;
    /// One MiB.
    pub const MIB: usize = 1 << 20;
    /// One GiB.
    pub const GIB: usize = 1 << 30;
    /// One TiB.
    pub const TIB: usize = 1 << 40;

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

    /// How every size on the command line is written, for `--help` texts (the one grammar
    /// of [`parse_size`]).
    pub const SIZE_HELP: &str = "SIZE: bytes, or with K/M/G/T (KiB, MiB, GiB, TiB)";

    /// Parses a size: the one grammar of every size on the command line.
    ///
    /// A whole number of bytes (`4096`), or a whole number with a binary unit: `K`, `M`,
    /// `G` or `T`, alone or followed by `iB` (`64K` = `64KiB` = 65536). Units are binary
    /// (powers of 1024), as sizes of memory are. Letters may be of either case (`64k`,
    /// `64kib`). A lone `B` after the number means bytes (`512B`). Refused: `KB`, `MB`,
    /// `GB`, `TB` (1000 or 1024? this tool's GB is 10^9 bytes in bandwidths, so a size
    /// says `K`/`KiB`), fractions, signs, spaces inside, and anything else.
    pub fn parse_size(s: &str) -> Result<usize, String> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        let digits = lower.bytes().take_while(u8::is_ascii_digit).count();
        let (num, unit) = lower.split_at(digits);
        let mult = match unit {
            "" | "b" => 1,
            "k" | "kib" => KIB,
            "m" | "mib" => MIB,
            "g" | "gib" => GIB,
            "t" | "tib" => TIB,
            "kb" | "mb" | "gb" | "tb" if !num.is_empty() => {
                let u = t[digits..].to_ascii_uppercase();
                let bin = &u[..1];
                return Err(format!(
                    "size '{s}': '{}' is ambiguous (1000 or 1024?); write {num}{bin} or {num}{bin}iB (binary: 1024)",
                    &t[digits..]
                ));
            }
            _ => return Err(invalid(s)),
        };
        let n: usize = num.parse().map_err(|_| invalid(s))?;
        n.checked_mul(mult)
            .ok_or_else(|| format!("size '{s}' is too large"))
    }

    fn invalid(s: &str) -> String {
        format!("invalid size '{s}': expected a whole number of bytes with an optional K/M/G/T (KiB, MiB, GiB, TiB) suffix")
    }

    /// Longest duration a `--timeout`-style argument may give: one week. Every wait of
    /// cxlchar (a peer, a rank, a completion) is meant in seconds or minutes; a week is far
    /// above any of them and far below what a deadline (`Instant + duration`) can hold.
    pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

    /// How every duration on the command line is written, for `--help` texts.
    pub const DURATION_HELP: &str =
        "DURATION: a number with a unit (500ms, 30s, 2m, 1h), above zero and at most 1 week";

    /// A `--timeout`-style argument: humantime's grammar (`30s`, `2m`, `1h 30m`, `500ms`),
    /// zero refused (a wait of nothing fails at once), and so is anything above
    /// [`MAX_DURATION`], at parse time rather than as an overflowing deadline later.
    pub fn parse_duration(s: &str) -> Result<Duration, String> {
        // humantime's own messages suggest forms (`10sec`) that --help does not use:
        // every refusal here speaks the grammar of DURATION_HELP.
        let d = humantime::parse_duration(s.trim()).map_err(|e| {
            let forms = "a duration is a number with a unit: 500ms, 30s, 2m, 1h";
            match e {
                humantime::DurationError::UnknownUnit { unit, .. } if unit.is_empty() => {
                    let n = s.trim();
                    format!("invalid duration '{s}': no unit (did you mean {n}s?); {forms}")
                }
                humantime::DurationError::UnknownUnit { unit, .. } => {
                    format!("invalid duration '{s}': unknown unit '{unit}'; {forms}")
                }
                _ => format!("invalid duration '{s}': {forms}"),
            }
        })?;
        if d.is_zero() {
            return Err(format!(
                "duration '{s}' is zero: give a positive duration (e.g. 30s)"
            ));
        }
        if d > MAX_DURATION {
            return Err(format!(
                "duration '{s}' is longer than {}, the longest wait cxlchar accepts: give at most 1w (7d)",
                humantime::format_duration(MAX_DURATION)
            ));
        }
        Ok(d)
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

        #[test]
        fn one_grammar_for_every_size() {
            for (s, v) in [
                ("65536", 65536),
                ("64K", 65536),
                ("64k", 65536),
                ("64KiB", 65536),
                ("64kib", 65536),
                ("512B", 512),
                (" 2M ", 2 * MIB),
                ("2MiB", 2 * MIB),
                ("1G", GIB),
                ("1GiB", GIB),
                ("2T", 2 * TIB),
                ("2TiB", 2 * TIB),
                ("0", 0),
            ] {
                assert_eq!(parse_size(s), Ok(v), "{s}");
            }
            for s in [
                "", "abc", "K", "KiB", "64KB", "64kb", "64MB", "1GB", "1TB", "1.5G", "-1", "+1",
                "64 K", "64Ki", "64KiBB", "64X", "0x40", "64iB",
            ] {
                assert!(parse_size(s).is_err(), "{s} was accepted");
            }
            let e = parse_size("64KB").unwrap_err();
            assert!(e.contains("ambiguous") && e.contains("64K or 64KiB"), "{e}");
            assert!(parse_size("abc").unwrap_err().contains("K/M/G/T"));
            assert_eq!(parse_offset("4K"), Ok(4096));
        }

        #[test]
        fn durations_are_positive_and_bounded() {
            assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
            assert_eq!(parse_duration(" 2m "), Ok(Duration::from_secs(120)));
            assert_eq!(parse_duration("1w"), Ok(MAX_DURATION));
            assert_eq!(parse_duration("7d"), Ok(MAX_DURATION));
            let e = parse_duration("500000000000years").unwrap_err();
            assert!(
                e.contains("longer than 7days") && e.contains("at most 1w"),
                "{e}"
            );
            assert!(parse_duration("0s").unwrap_err().contains("is zero"));
            assert!(parse_duration("").is_err());
            assert!(parse_duration("30").unwrap_err().contains("with a unit"));
            // The forms of --help, never humantime's `10sec`.
            let e = parse_duration("10").unwrap_err();
            assert!(
                e.contains("did you mean 10s?") && !e.contains("sec "),
                "{e}"
            );
            let e = parse_duration("10x").unwrap_err();
            assert!(e.contains("unknown unit 'x'") && e.contains("30s"), "{e}");
            assert!(!e.contains("hours"), "{e}");
            assert!(parse_duration("-1s").is_err());
        }

        proptest::proptest! {
            /// Every duration up to the bound is accepted as itself; every one above is
            /// refused, whatever its unit; nothing the parser accepts overflows a deadline.
            #[test]
            fn the_duration_bound_holds_for_every_value(
                secs in proptest::prop_oneof![0u64..1_300_000, 0u64..=u64::MAX / 2],
                unit in proptest::sample::select(vec![("s", 1u64), ("m", 60), ("h", 3600), ("d", 86400)]),
            ) {
                let text = format!("{secs}{}", unit.0);
                let total = secs.checked_mul(unit.1);
                match parse_duration(&text) {
                    Ok(d) => {
                        proptest::prop_assert!(!d.is_zero() && d <= MAX_DURATION);
                        proptest::prop_assert_eq!(Some(d.as_secs()), total);
                        proptest::prop_assert!(std::time::Instant::now().checked_add(d).is_some());
                    }
                    Err(e) => proptest::prop_assert!(
                        total.is_none_or(|t| t == 0 || t > MAX_DURATION.as_secs()),
                        "{} refused: {}", text, e
                    ),
                }
            }

            /// A size is accepted exactly when it is above zero and at most
            /// [`MAX_SIZE_BYTES`], in every unit, and then as its value.
            #[test]
            fn the_size_bound_holds_for_every_value(
                n in proptest::prop_oneof![0u64..4096, 0u64..=u64::MAX],
                unit in proptest::sample::select(vec![("", 1u64), ("K", 1 << 10), ("MiB", 1 << 20), ("g", 1 << 30), ("T", 1 << 40)]),
            ) {
                let text = format!("{n}{}", unit.0);
                let bytes = n.checked_mul(unit.1);
                match parse_positive_size(&text) {
                    Ok(v) => proptest::prop_assert_eq!(Some(v as u64), bytes),
                    Err(_) => proptest::prop_assert!(
                        bytes.is_none_or(|b| b == 0 || b > MAX_SIZE_BYTES as u64)
                    ),
                }
            }

            /// Arbitrary text never panics the parser, and what it accepts is in bounds.
            #[test]
            fn any_text_is_parsed_or_refused(s in "\\PC{0,24}") {
                if let Ok(d) = parse_duration(&s) {
                    proptest::prop_assert!(!d.is_zero() && d <= MAX_DURATION);
                }
            }
        }
    }
}
