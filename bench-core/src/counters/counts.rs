//! What a counted section saw: [`Counts`] of one thread's section, [`ThreadCounts`] of
//! each thread of a section, and the [`MeasurementCounters`] recorded with a measurement.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Name under which a reason is recorded when no hardware counter could be opened.
pub const HARDWARE: &str = "hardware";

/// Counts of one section. `None`: not counted (the reason is in `unavailable`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    /// Context switches of the measuring thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switches: Option<u64>,
    /// Migrations of the measuring thread to another CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_migrations: Option<u64>,
    /// Minor page faults (no I/O).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor_faults: Option<u64>,
    /// Major page faults (I/O).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major_faults: Option<u64>,
    /// Core cycles (user mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    /// Instructions retired (user mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// L1 data cache load misses (generic event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1d_load_misses: Option<u64>,
    /// Last-level cache load misses (generic event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc_load_misses: Option<u64>,
    /// Data TLB load misses (generic event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtlb_load_misses: Option<u64>,
    /// Time the thread waited on a run queue (runnable, not running), ns, from the
    /// scheduler's own record (`/proc/thread-self/schedstat`; `None` where it is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_queue_wait_ns: Option<u64>,
    /// Counters that could not be counted, by name (or [`HARDWARE`] for all hardware
    /// events), with the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
    /// Duration of the section, ns (TSC time when opened with a timer).
    #[serde(default)]
    pub section_ns: f64,
}

impl Counts {
    /// What disturbed the section, one phrase per kind (`"2 context switches"`); empty
    /// when nothing was seen (or nothing could be counted).
    pub fn disturbances(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut add = |n: Option<u64>, what: &str| {
            if let Some(n) = n.filter(|&n| n > 0) {
                v.push(format!("{n} {what}"));
            }
        };
        add(self.context_switches, "context switches");
        add(self.cpu_migrations, "CPU migrations");
        add(self.minor_faults, "minor page faults");
        add(self.major_faults, "major page faults");
        if let Some(w) = self.run_queue_wait_ns.filter(|&w| w > 0) {
            v.push(format!("{:.0} us on its run queue", w as f64 / 1e3));
        }
        v
    }

    /// True when a context switch, a migration or a page fault was seen.
    pub fn is_disturbed(&self) -> bool {
        !self.disturbances().is_empty()
    }

    pub(super) fn disturbance_total(&self) -> u64 {
        [
            self.context_switches,
            self.cpu_migrations,
            self.minor_faults,
            self.major_faults,
            self.run_queue_wait_ns.map(|w| (w > 0) as u64),
        ]
        .iter()
        .map(|x| x.unwrap_or(0))
        .sum()
    }

    /// True when at least one hardware counter was counted.
    pub fn has_hardware(&self) -> bool {
        self.cycles.is_some()
            || self.instructions.is_some()
            || self.l1d_load_misses.is_some()
            || self.llc_load_misses.is_some()
            || self.dtlb_load_misses.is_some()
    }

    /// Core clock over the section, GHz: cycles / section time (needs the cycle counter).
    pub fn core_ghz(&self) -> Option<f64> {
        let c = self.cycles?;
        (self.section_ns > 0.0).then(|| c as f64 / self.section_ns)
    }

    /// The counts of several threads' sections added up. A counter is summed when every
    /// part counted it, and is absent otherwise (its reasons are kept in `unavailable`);
    /// `section_ns` is the longest section. No parts: nothing counted.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Counts>) -> Counts {
        let parts: Vec<&Counts> = parts.into_iter().collect();
        let add = |get: fn(&Counts) -> Option<u64>| -> Option<u64> {
            if parts.is_empty() {
                return None;
            }
            parts.iter().map(|c| get(c)).sum()
        };
        let mut unavailable = BTreeMap::new();
        for c in &parts {
            for (k, r) in &c.unavailable {
                unavailable.entry(k.clone()).or_insert_with(|| r.clone());
            }
        }
        Counts {
            context_switches: add(|c| c.context_switches),
            cpu_migrations: add(|c| c.cpu_migrations),
            minor_faults: add(|c| c.minor_faults),
            major_faults: add(|c| c.major_faults),
            cycles: add(|c| c.cycles),
            instructions: add(|c| c.instructions),
            l1d_load_misses: add(|c| c.l1d_load_misses),
            llc_load_misses: add(|c| c.llc_load_misses),
            dtlb_load_misses: add(|c| c.dtlb_load_misses),
            run_queue_wait_ns: add(|c| c.run_queue_wait_ns),
            unavailable,
            section_ns: parts.iter().map(|c| c.section_ns).fold(0.0, f64::max),
        }
    }
}

/// The counts of one thread of a counted section (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct ThreadCounts {
    /// Which thread, as disturbances name it (`"thread 1 (CPU 3)"`).
    pub label: String,
    pub counts: Counts,
    /// A measuring thread (its work is timed: summed into the record) or a helper
    /// (checked for disturbances only).
    pub measuring: bool,
    /// What else disturbed the thread's section, beyond its counts (time the hypervisor
    /// stole from its CPU), one phrase each.
    pub also: Vec<String>,
}

impl ThreadCounts {
    /// The counts of the one thread that measures (single-threaded sections).
    pub fn single(counts: Counts) -> Vec<ThreadCounts> {
        vec![ThreadCounts {
            label: "measuring thread".into(),
            counts,
            measuring: true,
            also: Vec::new(),
        }]
    }

    /// A measuring thread's counts.
    pub fn measuring(label: impl Into<String>, counts: Counts) -> ThreadCounts {
        ThreadCounts {
            label: label.into(),
            counts,
            measuring: true,
            also: Vec::new(),
        }
    }

    /// A helper thread's counts (a traffic injector, a ping-pong partner).
    pub fn helper(label: impl Into<String>, counts: Counts) -> ThreadCounts {
        ThreadCounts {
            label: label.into(),
            counts,
            measuring: false,
            also: Vec::new(),
        }
    }

    /// What disturbed the thread: its counts' disturbances and the phrases in `also`.
    pub fn disturbances(&self) -> Vec<String> {
        let mut v = self.counts.disturbances();
        v.extend(self.also.iter().cloned());
        v
    }

    /// The number of disturbing events (what the retries compare).
    pub(super) fn disturbance_total(&self) -> u64 {
        self.counts.disturbance_total() + self.also.len() as u64
    }
}

/// The counter evidence recorded with one measurement (`counters` in params.json).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MeasurementCounters {
    /// The counts of the kept attempt.
    #[serde(flatten)]
    pub counts: Counts,
    /// Attempts made (1 when the first was undisturbed).
    pub attempts: u32,
    /// True when even the kept attempt was disturbed.
    pub disturbed: bool,
    /// What disturbed the kept attempt (empty when undisturbed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbances: Vec<String>,
    /// Hardware counts per operation of the benchmark (`llc_load_misses_per_load`), when
    /// hardware counters were available.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub per_op: BTreeMap<String, f64>,
    /// Measuring threads whose counts are summed here (1, not written: one thread).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub threads: u32,
    /// Helper threads that ran alongside (traffic injectors, a ping-pong partner): checked
    /// for disturbances, not summed into the counts (0, not written: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub helper_threads: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for MeasurementCounters {
    fn default() -> Self {
        MeasurementCounters {
            counts: Counts::default(),
            attempts: 0,
            disturbed: false,
            disturbances: Vec::new(),
            per_op: BTreeMap::new(),
            threads: 1,
            helper_threads: 0,
        }
    }
}

impl MeasurementCounters {
    /// The record of an attempt made of the counts of its threads: the measuring threads'
    /// counts summed, and every disturbance of any thread (named by thread when there is
    /// more than one).
    pub fn from_threads(threads: &[ThreadCounts], attempts: u32) -> MeasurementCounters {
        let measuring: Vec<&Counts> = threads
            .iter()
            .filter(|t| t.measuring)
            .map(|t| &t.counts)
            .collect();
        let counts = match measuring.as_slice() {
            [one] => (*one).clone(),
            many => Counts::sum(many.iter().copied()),
        };
        let disturbances: Vec<String> = if threads.len() == 1 {
            threads[0].disturbances()
        } else {
            threads
                .iter()
                .flat_map(|t| {
                    t.disturbances()
                        .into_iter()
                        .map(move |d| format!("{}: {d}", t.label))
                })
                .collect()
        };
        MeasurementCounters {
            disturbed: !disturbances.is_empty(),
            disturbances,
            attempts,
            counts,
            per_op: BTreeMap::new(),
            threads: measuring.len().max(1) as u32,
            helper_threads: (threads.len() - measuring.len()) as u32,
        }
    }

    /// Core clock of one measuring thread over the section, GHz (the summed cycles over
    /// the section time, per measuring thread).
    pub fn core_ghz(&self) -> Option<f64> {
        Some(self.counts.core_ghz()? / self.threads.max(1) as f64)
    }

    /// Adds per-operation figures (`<counter>_per_<op>`) for `ops` operations in the section.
    pub fn with_per_op(mut self, op: &str, ops: u64) -> MeasurementCounters {
        if ops == 0 {
            return self;
        }
        let c = &self.counts;
        for (name, v) in [
            ("cycles", c.cycles),
            ("instructions", c.instructions),
            ("l1d_load_misses", c.l1d_load_misses),
            ("llc_load_misses", c.llc_load_misses),
            ("dtlb_load_misses", c.dtlb_load_misses),
        ] {
            if let Some(v) = v {
                self.per_op
                    .insert(format!("{name}_per_{op}"), v as f64 / ops as f64);
            }
        }
        self
    }

    /// A short text for progress lines: per-op hardware figures, or the disturbance.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = self
            .per_op
            .iter()
            .filter(|(k, _)| !k.starts_with("instructions"))
            .map(|(k, v)| format!("{k} {v:.3}"))
            .collect();
        if self.disturbed {
            parts.push(format!("disturbed: {}", self.disturbances.join(", ")));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" [{}]", parts.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::test_util::sw;

    #[test]
    fn counts_of_threads_add_up_and_missing_counters_stay_missing() {
        let mut a = sw(1, 2);
        a.cycles = Some(100);
        let mut b = sw(0, 3);
        b.section_ns = 1500.0;
        b.unavailable.insert("cycles".into(), "not here".into());
        let s = Counts::sum([&a, &b]);
        assert_eq!(s.context_switches, Some(1));
        assert_eq!(s.minor_faults, Some(5));
        assert_eq!(s.cycles, None, "counted on one thread only: not a sum");
        assert_eq!(s.unavailable["cycles"], "not here");
        assert_eq!(s.section_ns, 1500.0);
        assert_eq!(Counts::sum([]).context_switches, None);
    }

    #[test]
    fn a_disturbance_on_any_thread_flags_the_attempt() {
        let threads = vec![
            ThreadCounts::measuring("thread 0 (CPU 0)", sw(0, 0)),
            ThreadCounts::measuring("thread 1 (CPU 1)", sw(2, 0)),
            ThreadCounts::helper("traffic thread 0 (CPU 2)", sw(0, 0)),
        ];
        let mc = MeasurementCounters::from_threads(&threads, 1);
        assert!(mc.disturbed);
        assert_eq!(
            mc.disturbances,
            vec!["thread 1 (CPU 1): 2 context switches"]
        );
        assert_eq!((mc.threads, mc.helper_threads), (2, 1));
        assert_eq!(
            mc.counts.context_switches,
            Some(2),
            "measuring threads summed"
        );
        // A helper's disturbance flags it too, but its counts are not summed.
        let threads = vec![
            ThreadCounts::measuring("chase thread", sw(0, 0)),
            ThreadCounts::helper("traffic thread 0 (CPU 1)", sw(0, 7)),
        ];
        let mc = MeasurementCounters::from_threads(&threads, 1);
        assert!(mc.disturbed);
        assert_eq!(mc.counts.minor_faults, Some(0));
        assert!(mc.disturbances[0].starts_with("traffic thread 0 (CPU 1): 7 minor"));
        let json = serde_json::to_value(&mc).unwrap();
        assert!(
            json.get("threads").is_none(),
            "one measuring thread: not written"
        );
        assert_eq!(json["helper_threads"], 1);
        let back: MeasurementCounters = serde_json::from_value(json).unwrap();
        assert_eq!(back, mc);
        // One thread: the phrases carry no label (there is no other thread to tell apart).
        let mc = MeasurementCounters::from_threads(&ThreadCounts::single(sw(1, 0)), 1);
        assert_eq!(mc.disturbances, vec!["1 context switches"]);
    }
}
