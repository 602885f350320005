//! A run's memory, planned like its time: what each family will map at most at once
//! ([`Need`], from [`crate::bench::Benchmark::memory`]) held against what this machine
//! lets the process map now ([`Limits`]): `MemAvailable`, the cgroup's `memory.max`
//! less what it uses, the address-space limit (`RLIMIT_AS`) less what is mapped, and the
//! target's own: a node's free memory, a dax device's size, the free huge pages. A need
//! that does not fit is refused before anything is mapped ([`Refusal`], exit 2), naming
//! the need, what is available and the option that would fit.

use super::TargetSpec;
use crate::topology::Topology;
use crate::units::{format_size, human_bytes};
use std::path::Path;

/// What one family maps at most at once on one target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Need {
    /// Bytes mapped at the peak (its region as it grows, its own buffers), all of it.
    pub bytes: usize,
    /// Of which on the target itself (the rest is the CPUs' local memory: private
    /// buffers); a target with memory of its own (a node, a dax device, huge pages) must
    /// hold this part.
    pub on_target_bytes: usize,
    /// What makes up the peak, in words (`a 2 GiB chain at 2 S (the DRAM check)`).
    pub what: String,
    /// The option that bounds it and the largest value that would fit `available` bytes
    /// (`--size 4G`), where the family has one.
    pub fit: Option<Fit>,
    /// Bytes mapped at the peak where a DRAM check finds its working set in a cache and
    /// grows it (bounded by half the memory the target offers); 0 when nothing grows
    /// past `bytes`.
    pub grows_to_bytes: usize,
}

/// The option that bounds a family's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    /// The option (`--size`).
    pub option: &'static str,
    /// Bytes of memory mapped per byte of the option's value (a chain spanning its
    /// working set: 1; two buffers of each size: 2), and the fixed rest.
    pub per_byte: usize,
    /// Bytes mapped whatever the option says.
    pub fixed_bytes: usize,
}

impl Need {
    /// `bytes`, all of it on the target, made up as `what`.
    pub fn on_target(bytes: usize, what: impl Into<String>) -> Need {
        Need {
            bytes,
            on_target_bytes: bytes,
            what: what.into(),
            fit: None,
            grows_to_bytes: 0,
        }
    }

    /// The same need, whose region of `region_bytes` (part of `bytes`) a DRAM check may
    /// grow to `largest_bytes`: the peak it then reaches.
    pub fn growing(mut self, region_bytes: usize, largest_bytes: usize) -> Need {
        if largest_bytes > region_bytes {
            self.grows_to_bytes = self.bytes - region_bytes.min(self.bytes) + largest_bytes;
        }
        self
    }

    /// The most this need maps: `bytes`, or where a check grows, `grows_to_bytes`.
    pub fn most_bytes(&self) -> usize {
        self.bytes.max(self.grows_to_bytes)
    }

    /// The same need, bounded by `option` as `fit` says.
    pub fn with_fit(mut self, option: &'static str, per_byte: usize, fixed_bytes: usize) -> Need {
        self.fit = Some(Fit {
            option,
            per_byte: per_byte.max(1),
            fixed_bytes,
        });
        self
    }

    /// The larger of two needs (two parts of a family that map one after the other).
    pub fn max(self, other: Need) -> Need {
        if other.bytes > self.bytes {
            other
        } else {
            self
        }
    }
}

/// One bound on what the process may map, with where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// Bytes.
    pub bytes: usize,
    /// Where it comes from (`MemAvailable`, `cgroup memory.max`, `RLIMIT_AS`, `node 1's
    /// MemFree`).
    pub source: String,
    /// Whether it bounds address space (every byte mapped) rather than the system's
    /// memory (what a dax device, a file or reserved huge pages hold is not).
    pub address_space: bool,
}

impl Bound {
    /// A bound on the system's memory.
    pub fn memory(bytes: usize, source: impl Into<String>) -> Bound {
        Bound {
            bytes,
            source: source.into(),
            address_space: false,
        }
    }
}

/// What this machine lets the process map now, for any target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Limits {
    /// The system's bounds (the tightest decides).
    pub system: Vec<Bound>,
}

impl Limits {
    /// The limits of this process now (nothing read blocks: every file is small and
    /// read with a bound).
    pub fn read() -> Limits {
        let mut system = Vec::new();
        if let Some(b) = crate::sizing::available_memory_bytes() {
            system.push(Bound::memory(b, "MemAvailable of /proc/meminfo"));
        }
        if let Some(b) = cgroup_room(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup")) {
            system.push(b);
        }
        if let Some(b) = address_space_room() {
            system.push(b);
        }
        Limits { system }
    }

    /// The tightest bound for a need on `target`: the system's (on its memory the part
    /// that lies in system memory: all of it for `anon`, `thp`, a node or an interleave,
    /// the rest beside a dax device, a file or huge pages; on address space all of it),
    /// and the target's own memory for the part that lies there.
    pub fn tightest(
        &self,
        target: &TargetSpec,
        topo: &Topology,
        need: &Need,
    ) -> Option<(Bound, usize)> {
        let own_memory = matches!(
            target,
            TargetSpec::Dax(_) | TargetSpec::File(_) | TargetSpec::Hugetlb(_)
        );
        let in_system = match own_memory {
            true => need.bytes.saturating_sub(need.on_target_bytes),
            false => need.bytes,
        };
        let mut bounds: Vec<(Bound, usize)> = self
            .system
            .iter()
            .map(|b| {
                let part = if b.address_space {
                    need.bytes
                } else {
                    in_system
                };
                (b.clone(), part)
            })
            .collect();
        if let Some(own) = target_room(target, topo) {
            bounds.push((own, need.on_target_bytes));
        }
        // The bound with the least room left once the need is placed.
        bounds
            .into_iter()
            .min_by_key(|(b, n)| b.bytes as i128 - *n as i128)
    }

    /// `Err` when `need` (of `family` on `target`) does not fit.
    pub fn check(
        &self,
        family: &str,
        target: &TargetSpec,
        topo: &Topology,
        need: &Need,
    ) -> Result<(), Box<Refusal>> {
        let Some((bound, part)) = self.tightest(target, topo, need) else {
            return Ok(());
        };
        if part <= bound.bytes {
            return Ok(());
        }
        Err(Box::new(Refusal {
            family: family.to_string(),
            target: target.to_string(),
            need: need.clone(),
            part_bytes: part,
            bound,
        }))
    }
}

/// A family whose memory does not fit: the need, the bound and what would fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The family (`mem.agents`).
    pub family: String,
    /// The target.
    pub target: String,
    /// What it would map.
    pub need: Need,
    /// The part of it the bound applies to.
    pub part_bytes: usize,
    /// The bound it exceeds.
    pub bound: Bound,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} on {} would map {} ({}), but {} is {}: nothing was measured",
            self.family,
            self.target,
            human(self.part_bytes),
            self.need.what,
            self.bound.source,
            human(self.bound.bytes)
        )?;
        if let Some(fit) = &self.need.fit {
            let room = self.bound.bytes.saturating_sub(fit.fixed_bytes) / fit.per_byte;
            // Whole MiB, below what fits (a size near the bound leaves nothing for the rest).
            let mib = (room / 10 * 9) >> 20;
            if mib > 0 {
                write!(f, "; {} {}M or less fits", fit.option, mib)?;
            } else {
                write!(f, "; no {} fits", fit.option)?;
            }
        } else {
            write!(f, "; free memory, or measure another target")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refusal {}

/// Bytes for people (`26 GiB`, `4.3 GiB`).
fn human(bytes: usize) -> String {
    human_bytes(bytes as u64)
}

/// The room a target's own memory leaves: a node's free memory, a dax device's size, the
/// reserved huge pages that are free. `None`: the system's memory is the target's, or the
/// target has none at all (no huge pages reserved, a device that is not there): placing
/// it fails, and the run skips it with the reason and the remedy.
fn target_room(target: &TargetSpec, topo: &Topology) -> Option<Bound> {
    target_bound(target, topo).filter(|b| b.bytes > 0)
}

fn target_bound(target: &TargetSpec, topo: &Topology) -> Option<Bound> {
    match target {
        TargetSpec::Node(n) => {
            let b = crate::sizing::available_for(target, topo)?;
            Some(Bound::memory(b, format!("node {n}'s free memory")))
        }
        TargetSpec::Dax(p) => topo.dax.iter().find(|d| &d.path == p).map(|d| {
            Bound::memory(
                d.size_bytes as usize,
                format!("the size of {}", p.display()),
            )
        }),
        TargetSpec::Hugetlb(h) => topo
            .hugepages
            .iter()
            .find(|x| x.page_size_bytes == h.bytes())
            .map(|x| {
                Bound::memory(
                    (x.free as usize).saturating_mul(x.page_size_bytes),
                    format!("the free {} huge pages", format_size(x.page_size_bytes)),
                )
            }),
        _ => None,
    }
}

/// The room the process's cgroup (v2) leaves: the smallest `memory.max - memory.current`
/// of its cgroup and every ancestor that sets a limit. `cgroup` is `/proc/self/cgroup`,
/// `root` the cgroup2 mount.
pub fn cgroup_room(cgroup: &Path, root: &Path) -> Option<Bound> {
    let text = crate::sysfs::read_trim(cgroup)?;
    // cgroup v2: the one line `0::/path`.
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mut dir = root.join(rel.trim_start_matches('/'));
    let mut best: Option<Bound> = None;
    loop {
        let max = crate::sysfs::read_trim(&dir.join("memory.max"));
        let cur = crate::sysfs::read_u64(&dir.join("memory.current"));
        if let (Some(max), Some(cur)) = (max, cur) {
            if let Ok(max) = max.parse::<u64>() {
                let room = max.saturating_sub(cur) as usize;
                if best.as_ref().is_none_or(|b| room < b.bytes) {
                    best = Some(Bound {
                        address_space: false,
                        bytes: room,
                        source: format!(
                            "the room under {} ({} of {} used)",
                            dir.join("memory.max").display(),
                            human(cur as usize),
                            human(max as usize)
                        ),
                    });
                }
            }
        }
        if dir == root || !dir.pop() || !dir.starts_with(root) {
            break;
        }
    }
    best
}

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`, `VmSize`).
fn status_bytes(field: &str) -> Option<u64> {
    let status = crate::sysfs::read_trim(Path::new("/proc/self/status"))?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The process's peak resident set, made its current one (`5` into
/// `/proc/self/clear_refs`, which changes nothing but that counter): returns the
/// resident set now, the baseline [`peak_rss_since`] takes. `None` where the kernel
/// cannot (then no peak is recorded).
pub fn reset_peak_rss() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    status_bytes("VmRSS")
}

/// The most memory the process held at once since [`reset_peak_rss`] returned
/// `baseline`: its peak resident set (`VmHWM`) less the baseline.
pub fn peak_rss_since(baseline: u64) -> Option<u64> {
    Some(status_bytes("VmHWM")?.saturating_sub(baseline))
}

/// The room `RLIMIT_AS` leaves: the limit less the address space mapped now (`VmSize`).
fn address_space_room() -> Option<Bound> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `lim`, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let used = status_bytes("VmSize")?;
    Some(Bound {
        address_space: true,
        bytes: lim.rlim_cur.saturating_sub(used) as usize,
        source: format!(
            "the room under RLIMIT_AS ({} of {} mapped)",
            human(used as usize),
            human(lim.rlim_cur as usize)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{GIB, MIB};

    fn limits(bytes: usize) -> Limits {
        Limits {
            system: vec![Bound::memory(bytes, "MemAvailable")],
        }
    }

    #[test]
    fn a_need_that_fits_passes_and_one_that_does_not_names_the_option_that_would() {
        let topo = Topology::read(Path::new("/nonexistent"));
        let l = limits(10 * GIB);
        let fits = Need::on_target(4 * GIB, "a chain");
        assert!(l
            .check("mem.latency", &TargetSpec::Anon, &topo, &fits)
            .is_ok());
        let big = Need::on_target(26 * GIB, "2 agents x 13 GiB, each with a private buffer")
            .with_fit("--size", 2, 64 * MIB);
        let e = l
            .check("mem.agents", &TargetSpec::Anon, &topo, &big)
            .unwrap_err();
        let s = e.to_string();
        assert!(
            s.starts_with("mem.agents on anon would map 26 GiB (2 agents"),
            "{s}"
        );
        assert!(s.contains("MemAvailable is 10 GiB"), "{s}");
        // (10 GiB - 64 MiB) / 2, nine tenths of it, in MiB.
        let want = ((10 * GIB - 64 * MIB) / 2 / 10 * 9) >> 20;
        assert!(
            s.ends_with(&format!("; --size {want}M or less fits")),
            "{s}"
        );
        let none = Need::on_target(26 * GIB, "x");
        assert!(l
            .check("x", &TargetSpec::Anon, &topo, &none)
            .unwrap_err()
            .to_string()
            .ends_with("free memory, or measure another target"));
    }

    #[test]
    fn the_tightest_bound_decides() {
        let topo = Topology::read(Path::new("/nonexistent"));
        let l = Limits {
            system: vec![
                Bound::memory(20 * GIB, "MemAvailable"),
                Bound::memory(3 * GIB, "cgroup"),
            ],
        };
        let e = l
            .check(
                "f",
                &TargetSpec::Anon,
                &topo,
                &Need::on_target(4 * GIB, "y"),
            )
            .unwrap_err();
        assert_eq!(e.bound.source, "cgroup");
    }

    #[test]
    fn what_a_dax_device_or_huge_pages_hold_is_not_system_memory_but_is_address_space() {
        let topo = Topology::read(Path::new("/nonexistent"));
        let dax = TargetSpec::Dax("/dev/dax0.0".into());
        // 30 GiB on the device, 1 GiB of private buffers beside it.
        let need = Need {
            bytes: 31 * GIB,
            on_target_bytes: 30 * GIB,
            what: "a chain".into(),
            fit: None,
            grows_to_bytes: 0,
        };
        assert!(limits(10 * GIB).check("f", &dax, &topo, &need).is_ok());
        assert!(limits(10 * GIB)
            .check("f", &TargetSpec::Anon, &topo, &need)
            .is_err());
        let mut small_as = limits(10 * GIB);
        small_as.system.push(Bound {
            bytes: 16 * GIB,
            source: "RLIMIT_AS".into(),
            address_space: true,
        });
        let e = small_as.check("f", &dax, &topo, &need).unwrap_err();
        assert_eq!(e.bound.source, "RLIMIT_AS");
        assert_eq!(e.part_bytes, 31 * GIB);
    }

    #[test]
    fn the_peak_resident_set_follows_what_the_process_touches() {
        let Some(base) = reset_peak_rss() else {
            // Only where the kernel does not let this process write clear_refs.
            let writable = std::fs::OpenOptions::new()
                .write(true)
                .open("/proc/self/clear_refs")
                .is_ok();
            assert!(!writable, "clear_refs is writable, yet no peak was read");
            return;
        };
        let v = vec![1u8; 64 * MIB];
        std::hint::black_box(&v);
        let peak = peak_rss_since(base).unwrap();
        assert!(peak >= 60 * MIB as u64, "{peak}");
        drop(v);
        // The peak stays after the memory is gone, until reset.
        assert!(peak_rss_since(base).unwrap() >= 60 * MIB as u64);
        let again = reset_peak_rss().unwrap();
        assert!(peak_rss_since(again).unwrap() < 32 * MIB as u64);
    }

    #[test]
    fn the_cgroup_room_is_the_smallest_of_the_cgroup_and_its_ancestors() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("cg");
        let leaf = root.join("a/b");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(root.join("a/memory.max"), "4294967296\n").unwrap();
        std::fs::write(root.join("a/memory.current"), "1073741824\n").unwrap();
        std::fs::write(leaf.join("memory.max"), "max\n").unwrap();
        std::fs::write(leaf.join("memory.current"), "1024\n").unwrap();
        let me = d.path().join("cgroup");
        std::fs::write(&me, "0::/a/b\n").unwrap();
        let b = cgroup_room(&me, &root).unwrap();
        assert_eq!(b.bytes, 3 * GIB, "{b:?}");
        assert!(b.source.contains("a/memory.max"), "{}", b.source);
        // No limit anywhere: no bound.
        std::fs::write(root.join("a/memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_room(&me, &root), None);
        // cgroup v1 (no 0:: line): none.
        std::fs::write(&me, "4:memory:/a\n").unwrap();
        assert_eq!(cgroup_room(&me, &root), None);
    }
}
