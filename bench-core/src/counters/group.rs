//! [`CounterGroup`]: the software and hardware event counts of the calling thread around
//! one timed section.

use super::counts::Counts;
use super::perf::Groups;
use crate::crew::evidence::Sched;
use crate::timer::Timer;
use std::collections::BTreeMap;
use std::time::Instant;

/// The calling thread's scheduler statistics (run time, run-queue wait, time slices).
const SCHEDSTAT: &str = "/proc/thread-self/schedstat";

/// Counters of the calling thread around one section. Opening never fails: what cannot
/// be opened is recorded as unavailable, with the reason.
pub struct CounterGroup {
    imp: Groups,
    timer: Option<Timer>,
    t0: Option<(Instant, u64)>,
    /// The thread's own schedstat (run-queue wait), where the kernel has it.
    sched: Option<std::fs::File>,
    sched0: Option<Sched>,
}

impl CounterGroup {
    /// Opens the software and (where possible) hardware counters for the calling thread;
    /// the section is timed with `Instant`.
    pub fn open() -> CounterGroup {
        CounterGroup {
            imp: Groups::open(),
            timer: None,
            t0: None,
            sched: crate::sysfs::open_regular(std::path::Path::new(SCHEDSTAT))
                .ok()
                .flatten(),
            sched0: None,
        }
    }

    /// As [`CounterGroup::open`], timing the section with the calibrated timer (TSC), so
    /// that cycles can be compared with TSC time.
    pub fn open_with_timer(timer: &Timer) -> CounterGroup {
        CounterGroup {
            timer: Some(timer.clone()),
            ..CounterGroup::open()
        }
    }

    /// Counters that could not be opened, with the reasons.
    pub fn unavailable(&self) -> &BTreeMap<String, String> {
        self.imp.unavailable()
    }

    fn sched(&mut self) -> Option<Sched> {
        use std::io::{Seek, SeekFrom};
        let f = self.sched.as_mut()?;
        f.seek(SeekFrom::Start(0)).ok()?;
        let s = crate::sysfs::read_open(
            f,
            std::path::Path::new(SCHEDSTAT),
            crate::sysfs::ATTRIBUTE_MAX_BYTES,
        )
        .ok()?;
        Sched::parse(&s)
    }

    /// Resets and starts counting.
    pub fn start(&mut self) {
        self.sched0 = self.sched();
        self.imp.start();
        let ticks = self.timer.as_ref().map_or(0, |t| t.start());
        self.t0 = Some((Instant::now(), ticks));
    }

    /// Counts `section`: starts, runs it, stops; its result with the counts.
    pub fn count<T>(&mut self, section: impl FnOnce() -> T) -> (T, Counts) {
        self.start();
        let r = section();
        (r, self.stop())
    }

    /// Stops counting and returns the counts since [`CounterGroup::start`].
    pub fn stop(&mut self) -> Counts {
        let ticks = self.timer.as_ref().map_or(0, |t| t.stop());
        let now = Instant::now();
        let mut c = self.imp.stop();
        if let (Some(a), Some(b)) = (self.sched0.take(), self.sched()) {
            c.run_queue_wait_ns = Some(b.wait_ns.saturating_sub(a.wait_ns));
        }
        if let Some((t0, ticks0)) = self.t0.take() {
            c.section_ns = match &self.timer {
                Some(t) => t.ticks_to_ns(ticks.wrapping_sub(ticks0) as f64),
                None => now.duration_since(t0).as_nanos() as f64,
            };
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::test_util::{fault_pages, sw_available};
    use crate::counters::HARDWARE;

    #[test]
    fn page_faults_in_a_section_are_counted() {
        let mut g = CounterGroup::open();
        if !sw_available(&g) {
            return;
        }
        g.start();
        assert_eq!(fault_pages(256), 256);
        let c = g.stop();
        let faults = c.minor_faults.unwrap() + c.major_faults.unwrap_or(0);
        assert!(
            faults >= 200,
            "256 fresh pages touched, {faults} faults seen"
        );
        assert!(c.is_disturbed());
        assert!(c.section_ns > 0.0);
        // A section that touches nothing new sees (almost always) no fault; the
        // counter is reset between sections, so it cannot carry the 256 over.
        g.start();
        let c2 = g.stop();
        assert!(c2.minor_faults.unwrap() < 200);
    }

    #[test]
    fn hardware_counters_are_counted_or_unavailable_never_silent() {
        let mut g = CounterGroup::open();
        g.start();
        std::hint::black_box((0..10_000u64).sum::<u64>());
        let c = g.stop();
        for (name, v) in [
            ("cycles", c.cycles),
            ("instructions", c.instructions),
            ("l1d_load_misses", c.l1d_load_misses),
            ("llc_load_misses", c.llc_load_misses),
            ("dtlb_load_misses", c.dtlb_load_misses),
        ] {
            assert!(
                v.is_some()
                    || c.unavailable.contains_key(name)
                    || c.unavailable.contains_key(HARDWARE),
                "{name}: neither counted nor reported unavailable"
            );
        }
        if let Some(r) = c.unavailable.get(HARDWARE) {
            assert!(!r.is_empty());
            assert!(!c.has_hardware());
            let json = serde_json::to_value(&c).unwrap();
            assert!(
                json.get("cycles").is_none(),
                "no zeros for missing counters"
            );
        }
    }

    #[test]
    fn counters_are_per_thread() {
        let mut g = CounterGroup::open();
        if !sw_available(&g) {
            return;
        }
        // Faults in another thread are not this thread's; that thread's own group sees
        // them.
        g.start();
        let theirs = std::thread::spawn(|| {
            let mut g = CounterGroup::open();
            let (n, c) = g.count(|| fault_pages(256));
            assert_eq!(n, 256);
            c
        })
        .join()
        .unwrap();
        let ours = g.stop();
        assert!(theirs.minor_faults.unwrap() >= 200, "{theirs:?}");
        assert!(ours.minor_faults.unwrap() < 100, "{ours:?}");
    }
}
