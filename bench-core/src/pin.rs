//! CPU lists and thread pinning.
//!
//! CPU lists use the kernel's syntax (`0-3,6,8-9`), as taskset and numactl do. The allowed
//! set is the process's affinity mask as `core_affinity` reports it (cpuset cgroups and
//! `taskset` shrink it); asking for a CPU outside it is an error, not a silent fallback.

use crate::CoreError;

/// Parses a CPU list such as `0-3,6`. Order is kept, duplicates are an error.
pub fn parse_cpu_list(spec: &str) -> Result<Vec<usize>, CoreError> {
    let err = |reason: String| CoreError::CpuList {
        spec: spec.to_string(),
        reason,
    };
    let mut out = Vec::new();
    if spec.trim().is_empty() {
        return Err(err("empty list".into()));
    }
    for part in spec.split(',') {
        let part = part.trim();
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| err(format!("'{s}' is not a CPU number")))
        };
        let range: Vec<usize> = match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(err(format!("range '{part}' is reversed")));
                }
                (a..=b).collect()
            }
            None => vec![num(part)?],
        };
        for c in range {
            if out.contains(&c) {
                return Err(err(format!("CPU {c} is listed twice")));
            }
            out.push(c);
        }
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

/// Checks that every CPU in `cpus` is in `allowed`.
pub fn check_allowed(cpus: &[usize], allowed: &[usize]) -> Result<(), CoreError> {
    for &c in cpus {
        if !allowed.contains(&c) {
            return Err(CoreError::CpuNotAllowed {
                cpu: c,
                allowed: format_cpu_list(allowed),
            });
        }
    }
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub fn pin_current(cpu: usize) -> Result<(), CoreError> {
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
    fn formats_compactly() {
        assert_eq!(format_cpu_list(&[3, 0, 1, 2, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[]), "");
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
