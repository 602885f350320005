//! What says that a window was disturbed: per thread, its [`crate::counters::CounterGroup`]
//! (perf's context switches, migrations and page faults, and the scheduler's own record of
//! the thread, `/proc/thread-self/schedstat`: time waiting on a run queue, parsed here);
//! for the crew's CPUs, the time the hypervisor stole from them (`/proc/stat`). Everything
//! is read outside the timed window (before the release, after the stop).

use std::collections::BTreeMap;

/// The scheduler's record of one thread at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sched {
    /// Time it waited on a run queue (runnable, not running), ns.
    pub wait_ns: u64,
    /// Timeslices it has run (one more each time it is scheduled in).
    pub slices: u64,
}

impl Sched {
    /// Parses `/proc/<pid>/task/<tid>/schedstat`: "run_ns wait_ns timeslices".
    pub fn parse(text: &str) -> Option<Sched> {
        let mut it = text.split_whitespace().map(|w| w.parse::<u64>().ok());
        let _run = it.next()??;
        Some(Sched {
            wait_ns: it.next()??,
            slices: it.next()??,
        })
    }
}

/// The share of a window a thread may wait on its run queue before the window is taken as
/// disturbed: as much as the skew may cost (a kernel worker's 50 us in a 30 ms window
/// moves the aggregate by a tenth of a percent, a preemption of milliseconds does not).
pub const MAX_WAIT_SHARE: f64 = 0.01;

/// What disturbed one thread in a window of `length_ns`, one phrase each (empty:
/// nothing that moves the figure): a run-queue wait over [`MAX_WAIT_SHARE`] of the window
/// (without schedstat: any context switch), any migration or page fault.
pub fn judge(c: &crate::counters::Counts, length_ns: f64) -> Vec<String> {
    let mut v = Vec::new();
    match c.run_queue_wait_ns {
        Some(w) if w as f64 > MAX_WAIT_SHARE * length_ns => v.push(format!(
            "{:.0} us on its run queue ({:.1} % of the window)",
            w as f64 / 1e3,
            w as f64 * 100.0 / length_ns.max(1.0)
        )),
        Some(_) => {}
        None => {
            if let Some(n) = c.context_switches.filter(|&n| n > 0) {
                v.push(format!("{n} context switches"));
            }
        }
    }
    for (n, what) in [
        (c.cpu_migrations, "CPU migrations"),
        (c.minor_faults, "minor page faults"),
        (c.major_faults, "major page faults"),
    ] {
        if let Some(n) = n.filter(|&n| n > 0) {
            v.push(format!("{n} {what}"));
        }
    }
    v
}

/// Whether a section counted on `threads` is clean as a window would be: [`judge`] finds
/// nothing on any thread over its own section (the judgement of the crew's rounds and of
/// the loaded-latency points, for [`crate::counters::retry_judged`]).
pub fn clean(threads: &[crate::counters::ThreadCounts]) -> bool {
    threads
        .iter()
        .all(|t| judge(&t.counts, t.counts.section_ns).is_empty())
}

/// Steal time of each CPU (`/proc/stat`, in clock ticks), for the CPUs in `cpus`.
pub fn steal_ticks(cpus: &[usize]) -> Option<BTreeMap<usize, u64>> {
    let text = crate::sysfs::read_table(std::path::Path::new("/proc/stat"))?;
    Some(parse_steal(&text, cpus))
}

/// The steal column of `/proc/stat`'s `cpuN` lines for the CPUs in `cpus`.
pub fn parse_steal(text: &str, cpus: &[usize]) -> BTreeMap<usize, u64> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu: usize = w.next()?.strip_prefix("cpu")?.parse().ok()?;
            if !cpus.contains(&cpu) {
                return None;
            }
            // user nice system idle iowait irq softirq steal
            let steal = w.nth(7)?.parse().ok()?;
            Some((cpu, steal))
        })
        .collect()
}

/// Phrases for the CPUs whose steal time grew between two readings.
pub fn stolen(before: &BTreeMap<usize, u64>, after: &BTreeMap<usize, u64>) -> Vec<String> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    after
        .iter()
        .filter_map(|(cpu, &a)| {
            let d = a.saturating_sub(*before.get(cpu)?);
            (d > 0).then(|| {
                format!(
                    "CPU {cpu}: {:.0} ms stolen by the hypervisor",
                    d as f64 * 1e3 / hz
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_and_steal_parse() {
        assert_eq!(
            Sched::parse("1074332 74751 2\n"),
            Some(Sched {
                wait_ns: 74751,
                slices: 2
            })
        );
        assert_eq!(Sched::parse("1 2"), None);
        let stat = "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 0 0 0 0 0 0 3 0 0\ncpu1 1 0 0 0 0 0 0 9 0 0\nintr 5\n";
        let s = parse_steal(stat, &[1]);
        assert_eq!(s, BTreeMap::from([(1, 9)]));
        let before = BTreeMap::from([(1, 9)]);
        let after = BTreeMap::from([(1, 10)]);
        let v = stolen(&before, &after);
        assert_eq!(v.len(), 1);
        assert!(v[0].starts_with("CPU 1: "), "{v:?}");
        assert!(stolen(&before, &before).is_empty());
    }

    #[test]
    fn a_short_wait_is_tolerated_a_long_one_or_a_fault_is_not() {
        use crate::counters::Counts;
        let c = |wait: Option<u64>, switches: u64, faults: u64| Counts {
            run_queue_wait_ns: wait,
            context_switches: Some(switches),
            cpu_migrations: Some(0),
            minor_faults: Some(faults),
            major_faults: Some(0),
            ..Default::default()
        };
        // 40 ms window: 100 us is 0.25 %, tolerated; 1.3 ms is 3 %, not.
        assert!(judge(&c(Some(100_000), 2, 0), 40e6).is_empty());
        let long = judge(&c(Some(1_300_000), 3, 0), 40e6);
        assert_eq!(long.len(), 1);
        assert!(long[0].contains("3.2 % of the window"), "{long:?}");
        // Without schedstat a switch is all there is to go by.
        assert_eq!(
            judge(&c(None, 1, 0), 40e6),
            vec!["1 context switches".to_string()]
        );
        assert_eq!(
            judge(&c(Some(0), 0, 3), 40e6),
            vec!["3 minor page faults".to_string()]
        );
    }

    #[test]
    fn a_sleep_shows_as_a_switch_or_a_run_queue_wait_in_the_counters() {
        let mut g = crate::counters::CounterGroup::open();
        g.start();
        // Runnable and not running: another thread hogs this CPU while this one yields.
        std::thread::sleep(std::time::Duration::from_millis(2));
        let c = g.stop();
        if c.context_switches.is_none() && c.run_queue_wait_ns.is_none() {
            crate::testing::unavailable("counters", "neither perf counters nor schedstat");
            return;
        }
        if let Some(n) = c.context_switches {
            assert!(n > 0, "a 2 ms sleep is a context switch: {c:?}");
        }
        // The wait, when there was one, is a phrase of its own.
        let d = c.disturbances();
        assert_eq!(
            d.iter().any(|p| p.contains("run queue")),
            c.run_queue_wait_ns.unwrap_or(0) > 0,
            "{d:?}"
        );
    }
}
