//! CPU lists and thread pinning.
//!
//! CPU lists use the kernel's syntax (`0-3,6,8-9`), as taskset and numactl do. The allowed
//! set is the process's affinity mask as `core_affinity` reports it (cpuset cgroups and
//! `taskset` shrink it); asking for a CPU outside it is an error, not a silent fallback.

use crate::CoreError;

/// The largest CPU number any list may name, plus one: above Linux's largest `NR_CPUS`
/// (8192), so every real list parses, while `0-4294967295` is refused before anything is
/// allocated for it.
pub const CPU_NUMBER_LIMIT: usize = 1 << 16;

/// Parses a CPU list such as `0-3,6`. Order is kept, duplicates are an error, and no CPU
/// number may reach [`CPU_NUMBER_LIMIT`].
pub fn parse_cpu_list(spec: &str) -> Result<Vec<usize>, CoreError> {
    parse_below(spec, CPU_NUMBER_LIMIT).map_err(|e| CoreError::CpuList {
        spec: shortened(spec),
        reason: match e {
            Bad::List(r) => r,
            Bad::Above(c) => {
                format!("CPU {c} is above the largest CPU number Linux supports")
            }
        },
    })
}

/// `spec` for a message: its first 64 characters, then `...` (a list read from a file can
/// be a page long).
fn shortened(spec: &str) -> String {
    match spec.char_indices().nth(64) {
        Some((i, _)) => format!("{}...", &spec[..i]),
        None => spec.to_string(),
    }
}

/// Parses a CPU list given by the user (`--cpu`): as [`parse_cpu_list`] (an absurd list,
/// `0-4294967295`, is one clear error rather than an allocation the size of the list).
/// Whether its CPUs may be used is checked against the machine the run is for: this one
/// ([`check_allowed`] against [`allowed_cpus`]) or, for a plan of another machine's sysfs
/// tree, that tree's online CPUs.
pub fn parse_user_cpu_list(spec: &str) -> Result<Vec<usize>, CoreError> {
    parse_cpu_list(spec)
}

/// Why a list did not parse below a limit.
enum Bad {
    /// Malformed, with the reason.
    List(String),
    /// Names this CPU, at or above the limit.
    Above(usize),
}

/// Parses a CPU list whose numbers must be below `limit`. Every range is checked before
/// any is expanded, and duplicates are found on the ranges (sorted), so the work and the
/// list returned grow with the CPUs named (at most `limit`), never with `limit` itself.
fn parse_below(spec: &str, limit: usize) -> Result<Vec<usize>, Bad> {
    if spec.trim().is_empty() {
        return Err(Bad::List("empty list".into()));
    }
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| Bad::List(format!("'{s}' is not a CPU number")))
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(Bad::List(format!("range '{part}' is reversed")));
                }
                (a, b)
            }
            None => {
                let a = num(part)?;
                (a, a)
            }
        };
        if b >= limit {
            return Err(Bad::Above(b));
        }
        ranges.push((a, b));
    }
    let mut sorted = ranges.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[1].0 <= w[0].1) {
        return Err(Bad::List(format!("CPU {} is listed twice", w[1].0)));
    }
    // No overlap and every CPU below `limit`: at most `limit` CPUs.
    let mut out = Vec::with_capacity(ranges.iter().map(|(a, b)| b - a + 1).sum());
    for (a, b) in ranges {
        out.extend(a..=b);
    }
    Ok(out)
}

/// Formats CPUs as a compact list (`0-3,6`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    let mut v: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    v.sort_unstable();
    v
}

/// Checks that every CPU in `cpus` is in `allowed` (looked up in a sorted copy: the work
/// grows with the CPUs, not their product).
pub fn check_allowed(cpus: &[usize], allowed: &[usize]) -> Result<(), CoreError> {
    let mut sorted = allowed.to_vec();
    sorted.sort_unstable();
    for &c in cpus {
        if sorted.binary_search(&c).is_err() {
            return Err(CoreError::CpuNotAllowed {
                cpu: c,
                allowed: format_cpu_list(allowed),
            });
        }
    }
    Ok(())
}

/// Pins the calling thread to `cpu` (a CPU number past the fixed `cpu_set_t`, 1024, is
/// refused: the affinity call cannot name it).
pub fn pin_current(cpu: usize) -> Result<(), CoreError> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(CoreError::Pin { cpu });
    }
    if core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
        Ok(())
    } else {
        Err(CoreError::Pin { cpu })
    }
}

/// The CPU the calling thread runs on now (`sched_getcpu`), if known.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a value.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// A barrier that spins instead of sleeping: the threads sit on their own CPUs, and a
/// sleeping barrier would put a (voluntary) context switch into every sample, which the
/// counters would rightly report as a disturbance. After a long wait it yields, so that
/// threads sharing a CPU still progress.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    count: std::sync::atomic::AtomicUsize,
    generation: std::sync::atomic::AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `n` threads (reusable: one generation after another).
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            count: Default::default(),
            generation: Default::default(),
        }
    }

    /// Waits until all `n` threads have arrived.
    pub fn wait(&self) {
        match self.wait_or(|| Ok::<(), std::convert::Infallible>(())) {
            Ok(()) => {}
            Err(e) => match e {},
        }
    }

    /// [`wait`](Self::wait), calling `check` every few thousand spins; its error (a peer
    /// gave up, a deadline passed) ends the wait. A thread that leaves with an error has
    /// still arrived: the others are released when the rest arrive.
    pub fn wait_or<E>(&self, mut check: impl FnMut() -> Result<(), E>) -> Result<(), E> {
        use std::sync::atomic::Ordering;
        let gen = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return Ok(());
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1 << 12) {
                check()?;
            }
            if spins.is_multiple_of(1 << 16) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list(" 5 , 1-2").unwrap(), vec![5, 1, 2]);
    }

    #[test]
    fn rejects_bad_lists() {
        for bad in ["", "a", "3-1", "1,1", "1-", "-2", "1,,2"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn absurd_lists_are_one_error() {
        let e = parse_cpu_list("0-4294967295").unwrap_err().to_string();
        assert!(e.contains("4294967295") && e.contains("Linux"), "{e}");
        let e = parse_user_cpu_list("0-4294967295").unwrap_err().to_string();
        assert!(e.contains("4294967295") && e.contains("Linux"), "{e}");
        // A CPU this machine lacks parses: a plan for another machine may name it.
        assert_eq!(parse_user_cpu_list("4000").unwrap(), vec![4000]);
        assert_eq!(parse_user_cpu_list("0").unwrap(), vec![0]);
        assert!(parse_cpu_list("65536").is_err());
        assert_eq!(parse_cpu_list("0-65535").unwrap().len(), CPU_NUMBER_LIMIT);
    }

    #[test]
    fn formats_compactly() {
        assert_eq!(format_cpu_list(&[3, 0, 1, 2, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn duplicates_are_found_on_the_ranges() {
        for (bad, cpu) in [("1,1", 1), ("0-3,2", 2), ("5-9,0-5", 5), ("8,0-65535", 8)] {
            let e = parse_cpu_list(bad).unwrap_err().to_string();
            assert!(
                e.contains(&format!("CPU {cpu} is listed twice")),
                "{bad}: {e}"
            );
        }
        assert_eq!(parse_cpu_list("4-5,0-3").unwrap(), [4, 5, 0, 1, 2, 3]);
    }

    #[test]
    fn disallowed_cpu_is_named() {
        let e = check_allowed(&[0, 4096], &[0, 1]).unwrap_err().to_string();
        assert!(e.contains("4096") && e.contains("0-1"), "{e}");
    }

    #[test]
    fn pins_to_an_allowed_cpu() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let c = *allowed.last().unwrap();
        std::thread::spawn(move || {
            pin_current(c).unwrap();
            assert_eq!(current_cpu(), Some(c));
        })
        .join()
        .unwrap();
    }
}
