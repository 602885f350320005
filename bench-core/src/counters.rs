//! Counter evidence around a timed section (Linux `perf_event_open` via `perf-event2`).
//!
//! A [`CounterGroup`] counts, for the calling thread only, across one timed section:
//!
//! * software events, always attempted: context switches, CPU migrations, minor and major
//!   page faults. Any of them in a timed section means the section was disturbed
//!   ([`Counts::disturbances`]);
//! * hardware events where the machine has a PMU: cycles, instructions, L1D / LLC / dTLB
//!   load misses (the kernel's generic events). In a VM without a virtual PMU they fail to
//!   open (`ENOENT`); they are then recorded as *unavailable, with the reason*, never as
//!   zeros.
//!
//! Start and stop are a few system calls (reset + enable, disable + read per group), cheap
//! next to a measurement of milliseconds: wrap a whole measurement, not each batch.
//!
//! ```no_run
//! use bench_core::counters::CounterGroup;
//! let mut g = CounterGroup::open();
//! g.start();
//! // ... the timed section ...
//! let c = g.stop();
//! assert!(c.context_switches.is_some() || c.unavailable.contains_key("context_switches"));
//! ```
//!
//! [`measure_undisturbed`] and [`retry_undisturbed`] repeat a section that was disturbed,
//! up to a bound, and keep the least disturbed attempt; [`warnings_for`] turns what the
//! counters saw into run warnings (disturbed samples, `perf_event_paranoid`, core clock vs
//! TSC).
//!
//! Counters are per thread: a section that runs on several threads (the lockstep
//! bandwidth threads, a ping-pong partner, traffic injectors) opens a [`CounterGroup`] in
//! each thread and hands the counts of every thread, as [`ThreadCounts`], to
//! [`retry_undisturbed`]. The counts of the *measuring* threads are summed
//! ([`Counts::sum`]); *helper* threads are checked for disturbances only. A disturbance on
//! any thread flags (and repeats) the attempt.

use crate::params::{Measurement, Warning};
use crate::timer::Timer;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// Name under which a reason is recorded when no hardware counter could be opened.
pub const HARDWARE: &str = "hardware";

/// Attempts of a disturbed measurement before giving up (the least disturbed is kept).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Relative disagreement between the core clock (cycles / TSC time) and the TSC above
/// which a warning is raised.
pub const CLOCK_TOLERANCE: f64 = 0.05;

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
        v
    }

    /// True when a context switch, a migration or a page fault was seen.
    pub fn is_disturbed(&self) -> bool {
        !self.disturbances().is_empty()
    }

    fn disturbance_total(&self) -> u64 {
        [
            self.context_switches,
            self.cpu_migrations,
            self.minor_faults,
            self.major_faults,
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
            unavailable,
            section_ns: parts.iter().map(|c| c.section_ns).fold(0.0, f64::max),
        }
    }
}

/// The counts of one thread of a counted section (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadCounts {
    /// Which thread, as disturbances name it (`"thread 1 (CPU 3)"`).
    pub label: String,
    /// Its counts.
    pub counts: Counts,
    /// A measuring thread (its work is timed: summed into the record) or a helper
    /// (checked for disturbances only).
    pub measuring: bool,
}

impl ThreadCounts {
    /// The counts of the one thread that measures (single-threaded sections).
    pub fn single(counts: Counts) -> Vec<ThreadCounts> {
        vec![ThreadCounts {
            label: "measuring thread".into(),
            counts,
            measuring: true,
        }]
    }

    /// A measuring thread's counts.
    pub fn measuring(label: impl Into<String>, counts: Counts) -> ThreadCounts {
        ThreadCounts {
            label: label.into(),
            counts,
            measuring: true,
        }
    }

    /// A helper thread's counts (a traffic injector, a ping-pong partner).
    pub fn helper(label: impl Into<String>, counts: Counts) -> ThreadCounts {
        ThreadCounts {
            label: label.into(),
            counts,
            measuring: false,
        }
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
            threads[0].counts.disturbances()
        } else {
            threads
                .iter()
                .flat_map(|t| {
                    t.counts
                        .disturbances()
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

/// Counters of the calling thread around one section. Opening never fails: what cannot
/// be opened is recorded as unavailable, with the reason.
pub struct CounterGroup {
    imp: imp::Groups,
    timer: Option<Timer>,
    t0: Option<(Instant, u64)>,
}

impl CounterGroup {
    /// Opens the software and (where possible) hardware counters for the calling thread;
    /// the section is timed with `Instant`.
    pub fn open() -> CounterGroup {
        CounterGroup {
            imp: imp::Groups::open(),
            timer: None,
            t0: None,
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

    /// Resets and starts counting.
    pub fn start(&mut self) {
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
        if let Some((t0, ticks0)) = self.t0.take() {
            c.section_ns = match &self.timer {
                Some(t) => t.ticks_to_ns(ticks.wrapping_sub(ticks0) as f64),
                None => now.duration_since(t0).as_nanos() as f64,
            };
        }
        c
    }
}

/// Runs `section(state)` inside `group`; while the section is disturbed (context switch,
/// migration, page fault), runs it again, up to `max_attempts` in all. After each attempt,
/// outside the counted section, `collect(state)` takes its result (so copying samples
/// cannot fault inside the section). Returns the result of the first undisturbed
/// attempt, or else of the least disturbed one, with its counts.
///
/// Everything the section writes should be allocated and touched beforehand (e.g. a
/// samples vector from [`sample_buffer`]), or its first touch is a page fault.
pub fn measure_undisturbed<S, T>(
    group: &mut CounterGroup,
    max_attempts: u32,
    state: &mut S,
    mut section: impl FnMut(&mut S),
    mut collect: impl FnMut(&S) -> T,
) -> (T, MeasurementCounters) {
    retry_undisturbed(max_attempts, || {
        let ((), c) = group.count(|| section(state));
        (collect(state), ThreadCounts::single(c))
    })
}

/// Runs `attempt` until one is undisturbed on every thread, up to `max_attempts` in all;
/// each attempt runs and counts its own section (on one thread or several) and returns its
/// result with the counts of each thread. Returns the result of the first undisturbed
/// attempt, or else of the least disturbed one (fewest disturbing events over all its
/// threads), with its record ([`MeasurementCounters::from_threads`]).
pub fn retry_undisturbed<T>(
    max_attempts: u32,
    mut attempt: impl FnMut() -> (T, Vec<ThreadCounts>),
) -> (T, MeasurementCounters) {
    match try_retry_undisturbed(
        max_attempts,
        || Ok::<_, std::convert::Infallible>(attempt()),
    ) {
        Ok(r) => r,
        Err(e) => match e {},
    }
}

/// [`retry_undisturbed`] for attempts that can fail: the first error ends the retries and
/// is returned.
pub fn try_retry_undisturbed<T, E>(
    max_attempts: u32,
    mut attempt: impl FnMut() -> Result<(T, Vec<ThreadCounts>), E>,
) -> Result<(T, MeasurementCounters), E> {
    let max_attempts = max_attempts.max(1);
    let total =
        |t: &[ThreadCounts]| -> u64 { t.iter().map(|c| c.counts.disturbance_total()).sum() };
    let mut best: Option<(T, Vec<ThreadCounts>)> = None;
    let mut attempts = 0;
    while attempts < max_attempts {
        attempts += 1;
        let (r, threads) = attempt()?;
        let clean = !threads.iter().any(|t| t.counts.is_disturbed());
        if best
            .as_ref()
            .is_none_or(|(_, b)| total(&threads) < total(b))
        {
            best = Some((r, threads));
        }
        if clean {
            break;
        }
    }
    let (r, threads) = best.expect("at least one attempt ran");
    Ok((r, MeasurementCounters::from_threads(&threads, attempts)))
}

/// An empty samples vector with room for `capacity` samples whose memory is already
/// touched, so that pushing up to `capacity` samples inside a counted section causes no
/// page fault.
pub fn sample_buffer(capacity: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(capacity);
    v.resize(capacity, 0.0);
    std::hint::black_box(&mut v);
    v.clear();
    v
}

/// Run warnings from the counters of a benchmark's measurements on `target`: measurements
/// that stayed disturbed after their retries, counters denied by `perf_event_paranoid`,
/// hardware counters missing, and a core clock that disagrees with the TSC.
pub fn warnings_for(target: &str, measurements: &[Measurement], tsc_hz: f64) -> Vec<Warning> {
    let mut w = Vec::new();
    let with: Vec<(&Measurement, &MeasurementCounters)> = measurements
        .iter()
        .filter_map(|m| m.counters.as_ref().map(|c| (m, c)))
        .collect();
    let disturbed: Vec<String> = with
        .iter()
        .filter(|(_, c)| c.disturbed)
        .map(|(m, c)| {
            format!(
                "{} ({} after {} attempts)",
                m.id,
                c.disturbances.join(", "),
                c.attempts
            )
        })
        .collect();
    if !disturbed.is_empty() {
        w.push(Warning {
            code: "disturbed".into(),
            message: format!(
                "{target}: no undisturbed sample for {} measurement(s): {}",
                disturbed.len(),
                disturbed.join("; ")
            ),
            remediation: "run on an idle machine, isolate the measuring CPU (isolcpus=, or a cpuset), disable NUMA balancing (sysctl kernel.numa_balancing=0)".into(),
        });
    }
    let mut paranoid = false;
    let mut hw_reason = None;
    for (_, c) in &with {
        for (k, r) in &c.counts.unavailable {
            if r.contains("perf_event_paranoid") {
                paranoid = true;
            }
            if k == HARDWARE && hw_reason.is_none() {
                hw_reason = Some(r.clone());
            }
        }
    }
    if paranoid {
        w.push(Warning {
            code: "perf_paranoid".into(),
            message: "perf_event_open was denied for some counters by kernel.perf_event_paranoid; disturbance detection is incomplete".into(),
            remediation: "sysctl kernel.perf_event_paranoid=1 (or run as root / with CAP_PERFMON)".into(),
        });
    }
    if let Some(r) = hw_reason {
        w.push(Warning {
            code: "hw_counters".into(),
            message: format!("hardware counters unavailable (recorded as such, not as zeros): {r}"),
            remediation: "run on bare metal or give the VM a virtual PMU (e.g. QEMU -cpu host,pmu=on) to get cycles and cache-miss evidence".into(),
        });
    }
    if tsc_hz > 0.0 {
        let ghz: Vec<f64> = with.iter().filter_map(|(_, c)| c.core_ghz()).collect();
        let tsc_ghz = tsc_hz / 1e9;
        let off: Vec<f64> = ghz
            .iter()
            .copied()
            .filter(|g| (g / tsc_ghz - 1.0).abs() > CLOCK_TOLERANCE)
            .collect();
        if !off.is_empty() {
            let lo = off.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = off.iter().copied().fold(0.0, f64::max);
            w.push(Warning {
                code: "core_clock".into(),
                message: format!(
                    "{target}: core clock (cycles / TSC time) was {lo:.3}-{hi:.3} GHz in {} of {} measurements, TSC is {tsc_ghz:.3} GHz: figures in ns are right, but cycles and ns do not convert at the TSC rate",
                    off.len(),
                    ghz.len()
                ),
                remediation: "fix the core clock: cpupower frequency-set -g performance, and disable boost (echo 0 > /sys/devices/system/cpu/cpufreq/boost)".into(),
            });
        }
    }
    w
}

/// Why `perf_event_open` failed, in words that say what to do.
fn reason(e: &std::io::Error, paranoid: Option<i64>) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => format!(
            "{e}: the kernel has no such event here (no hardware PMU, typical of a VM without a virtual PMU)"
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "{e}: denied by kernel.perf_event_paranoid={}; sysctl kernel.perf_event_paranoid=1 allows it",
            paranoid.map_or("?".to_string(), |p| p.to_string())
        ),
        Some(libc::ENOSYS) => format!("{e}: perf_event_open is not available in this kernel"),
        _ => e.to_string(),
    }
}

fn read_paranoid() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{read_paranoid, reason, Counts, HARDWARE};
    use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};
    use perf_event::{Builder, Counter, Group};
    use std::collections::BTreeMap;

    type Slot = (&'static str, Counter);

    /// One perf group with its members.
    struct G {
        group: Group,
        members: Vec<Slot>,
    }

    pub(super) struct Groups {
        sw: Option<G>,
        hw: Option<G>,
        unavailable: BTreeMap<String, String>,
    }

    fn add<E: Event>(
        g: &mut Group,
        name: &'static str,
        ev: E,
        kernel: bool,
        members: &mut Vec<Slot>,
        unavailable: &mut BTreeMap<String, String>,
        paranoid: Option<i64>,
    ) {
        let mut b = Builder::new(ev);
        b.exclude_kernel(!kernel);
        match g.add(&b) {
            Ok(c) => members.push((name, c)),
            Err(e) => {
                unavailable.insert(name.into(), reason(&e, paranoid));
            }
        }
    }

    impl Groups {
        pub(super) fn open() -> Groups {
            let paranoid = read_paranoid();
            let mut unavailable = BTreeMap::new();
            let sw = match Group::new() {
                Ok(mut group) => {
                    let mut members = Vec::new();
                    // Context switches and migrations are counted in kernel mode; with
                    // exclude_kernel they read 0, which would hide a disturbance. Ask
                    // for kernel counting; if paranoid forbids it, say so.
                    for (name, ev) in [
                        ("context_switches", Software::CONTEXT_SWITCHES),
                        ("cpu_migrations", Software::CPU_MIGRATIONS),
                    ] {
                        add(
                            &mut group,
                            name,
                            ev,
                            true,
                            &mut members,
                            &mut unavailable,
                            paranoid,
                        );
                    }
                    // Faults of the section's own user-mode accesses count with
                    // exclude_kernel too; try kernel counting first, then user only.
                    for (name, ev) in [
                        ("minor_faults", Software::PAGE_FAULTS_MIN),
                        ("major_faults", Software::PAGE_FAULTS_MAJ),
                    ] {
                        let mut scratch = BTreeMap::new();
                        add(
                            &mut group,
                            name,
                            ev,
                            true,
                            &mut members,
                            &mut scratch,
                            paranoid,
                        );
                        if !scratch.is_empty() {
                            add(
                                &mut group,
                                name,
                                ev,
                                false,
                                &mut members,
                                &mut unavailable,
                                paranoid,
                            );
                        }
                    }
                    Some(G { group, members })
                }
                Err(e) => {
                    let r = reason(&e, paranoid);
                    for n in [
                        "context_switches",
                        "cpu_migrations",
                        "minor_faults",
                        "major_faults",
                    ] {
                        unavailable.insert(n.into(), r.clone());
                    }
                    None
                }
            };
            let hw = match Group::new() {
                Ok(mut group) => {
                    let mut members = Vec::new();
                    let mut hw_unavail = BTreeMap::new();
                    let cache = |which| Cache {
                        which,
                        operation: CacheOp::READ,
                        result: CacheResult::MISS,
                    };
                    add(
                        &mut group,
                        "cycles",
                        Hardware::CPU_CYCLES,
                        false,
                        &mut members,
                        &mut hw_unavail,
                        paranoid,
                    );
                    add(
                        &mut group,
                        "instructions",
                        Hardware::INSTRUCTIONS,
                        false,
                        &mut members,
                        &mut hw_unavail,
                        paranoid,
                    );
                    for (name, which) in [
                        ("l1d_load_misses", CacheId::L1D),
                        ("llc_load_misses", CacheId::LL),
                        ("dtlb_load_misses", CacheId::DTLB),
                    ] {
                        add(
                            &mut group,
                            name,
                            cache(which),
                            false,
                            &mut members,
                            &mut hw_unavail,
                            paranoid,
                        );
                    }
                    if members.is_empty() {
                        // One reason for the lot: usually ENOENT (no PMU).
                        let r = hw_unavail
                            .get("cycles")
                            .cloned()
                            .unwrap_or_else(|| "no hardware counter opened".into());
                        unavailable.insert(HARDWARE.into(), r);
                        None
                    } else {
                        unavailable.extend(hw_unavail);
                        Some(G { group, members })
                    }
                }
                Err(e) => {
                    unavailable.insert(HARDWARE.into(), reason(&e, paranoid));
                    None
                }
            };
            Groups {
                sw,
                hw,
                unavailable,
            }
        }

        pub(super) fn unavailable(&self) -> &BTreeMap<String, String> {
            &self.unavailable
        }

        pub(super) fn start(&mut self) {
            for g in [&mut self.hw, &mut self.sw].into_iter().flatten() {
                let _ = g.group.reset();
                let _ = g.group.enable();
            }
        }

        pub(super) fn stop(&mut self) -> Counts {
            let mut c = Counts {
                unavailable: self.unavailable.clone(),
                ..Counts::default()
            };
            for g in [&mut self.sw, &mut self.hw].into_iter().flatten() {
                let _ = g.group.disable();
            }
            for g in [&mut self.sw, &mut self.hw].into_iter().flatten() {
                match g.group.read() {
                    Ok(data) => {
                        let running = data.time_running().unwrap_or_default();
                        let enabled = data.time_enabled().unwrap_or_default();
                        if running.is_zero() && !enabled.is_zero() {
                            for (name, _) in &g.members {
                                c.unavailable.insert(
                                    (*name).into(),
                                    "the group was never scheduled on the PMU (counters busy)"
                                        .into(),
                                );
                            }
                            continue;
                        }
                        // Scale a multiplexed group to its enabled time.
                        let scale = if running < enabled && !running.is_zero() {
                            enabled.as_secs_f64() / running.as_secs_f64()
                        } else {
                            1.0
                        };
                        for (name, counter) in &g.members {
                            let Some(v) = data.get(counter).map(|e| e.value()) else {
                                continue;
                            };
                            let v = (v as f64 * scale).round() as u64;
                            let slot = match *name {
                                "context_switches" => &mut c.context_switches,
                                "cpu_migrations" => &mut c.cpu_migrations,
                                "minor_faults" => &mut c.minor_faults,
                                "major_faults" => &mut c.major_faults,
                                "cycles" => &mut c.cycles,
                                "instructions" => &mut c.instructions,
                                "l1d_load_misses" => &mut c.l1d_load_misses,
                                "llc_load_misses" => &mut c.llc_load_misses,
                                _ => &mut c.dtlb_load_misses,
                            };
                            *slot = Some(v);
                        }
                    }
                    Err(e) => {
                        for (name, _) in &g.members {
                            c.unavailable
                                .insert((*name).into(), format!("reading the group failed: {e}"));
                        }
                    }
                }
            }
            c
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Counts, HARDWARE};
    use std::collections::BTreeMap;

    pub(super) struct Groups {
        unavailable: BTreeMap<String, String>,
    }

    impl Groups {
        pub(super) fn open() -> Groups {
            let mut unavailable = BTreeMap::new();
            for n in [
                "context_switches",
                "cpu_migrations",
                "minor_faults",
                "major_faults",
                HARDWARE,
            ] {
                unavailable.insert(n.into(), "perf_event_open is Linux-only".into());
            }
            Groups { unavailable }
        }
        pub(super) fn unavailable(&self) -> &BTreeMap<String, String> {
            &self.unavailable
        }
        pub(super) fn start(&mut self) {}
        pub(super) fn stop(&mut self) -> Counts {
            Counts {
                unavailable: self.unavailable.clone(),
                ..Counts::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Touches `pages` fresh anonymous pages, forcing that many minor faults.
    fn fault_pages(pages: usize) -> usize {
        let page = 4096;
        let mut m = memmap2::MmapMut::map_anon(pages * page).unwrap();
        for i in 0..pages {
            m[i * page] = 1;
        }
        std::hint::black_box(m.iter().step_by(page).map(|&b| b as usize).sum())
    }

    fn sw_available(g: &CounterGroup) -> bool {
        !g.unavailable().contains_key("minor_faults")
    }

    #[test]
    fn page_faults_in_a_section_are_counted() {
        let mut g = CounterGroup::open();
        if !sw_available(&g) {
            eprintln!("software counters unavailable here: {:?}", g.unavailable());
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
    fn disturbed_attempts_are_retried_and_the_clean_one_kept() {
        let mut g = CounterGroup::open();
        if !sw_available(&g) {
            return;
        }
        // Attempts 1 and 2 fault 64 pages each; attempt 3 touches nothing new.
        let mut n = 0u32;
        let (r, c) = measure_undisturbed(
            &mut g,
            5,
            &mut n,
            |n| {
                *n += 1;
                if *n <= 2 {
                    fault_pages(64);
                }
            },
            |n| *n,
        );
        // A stray fault or preemption on a busy machine can cost one more attempt, but
        // the two faulting attempts are never kept.
        assert!(c.attempts >= 3, "{c:?}");
        assert!(r >= 3, "kept attempt {r} was one of the faulting ones");
        if !c.disturbed {
            assert!(c.disturbances.is_empty());
            assert_eq!(c.attempts, r, "the first clean attempt ends the retries");
        }
    }

    #[test]
    fn a_section_that_is_always_disturbed_is_flagged_after_the_bound() {
        let mut g = CounterGroup::open();
        if !sw_available(&g) {
            return;
        }
        let (_, c) = measure_undisturbed(
            &mut g,
            3,
            &mut (),
            |_| {
                fault_pages(32);
            },
            |_| (),
        );
        assert_eq!(c.attempts, 3);
        assert!(c.disturbed);
        assert!(c.disturbances.iter().any(|d| d.contains("page faults")));
        let m = Measurement {
            id: "x/anon/4K".into(),
            benchmark: "x".into(),
            target: "anon".into(),
            parameters: serde_json::json!({}),
            unit: "ns".into(),
            method: "m".into(),
            distribution: crate::stats::Distribution::from_samples(&[1.0]).unwrap(),
            placement: None,
            counters: Some(c),
        };
        let w = warnings_for("anon", &[m], 0.0);
        assert!(w
            .iter()
            .any(|w| w.code == "disturbed" && w.message.contains("x/anon/4K")));
    }

    #[test]
    fn per_op_figures_and_clock_cross_check() {
        let counts = Counts {
            cycles: Some(3_000_000),
            llc_load_misses: Some(500),
            section_ns: 1_000_000.0,
            ..Counts::default()
        };
        assert_eq!(counts.core_ghz(), Some(3.0));
        let mc = MeasurementCounters {
            counts,
            attempts: 1,
            ..Default::default()
        }
        .with_per_op("load", 1000);
        assert_eq!(mc.per_op["llc_load_misses_per_load"], 0.5);
        assert_eq!(mc.per_op["cycles_per_load"], 3000.0);
        assert!(!mc.per_op.contains_key("dtlb_load_misses_per_load"));
        let m = |c: MeasurementCounters| Measurement {
            id: "a".into(),
            benchmark: "b".into(),
            target: "anon".into(),
            parameters: serde_json::json!({}),
            unit: "ns".into(),
            method: "m".into(),
            distribution: crate::stats::Distribution::from_samples(&[1.0]).unwrap(),
            placement: None,
            counters: Some(c),
        };
        // 3 GHz core vs 2 GHz TSC: warned; vs 3 GHz TSC: not.
        assert!(warnings_for("anon", &[m(mc.clone())], 2e9)
            .iter()
            .any(|w| w.code == "core_clock"));
        assert!(!warnings_for("anon", &[m(mc)], 3e9)
            .iter()
            .any(|w| w.code == "core_clock"));
    }

    fn sw(cs: u64, faults: u64) -> Counts {
        Counts {
            context_switches: Some(cs),
            cpu_migrations: Some(0),
            minor_faults: Some(faults),
            major_faults: Some(0),
            section_ns: 1000.0,
            ..Counts::default()
        }
    }

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
        // One thread: the phrases carry no label, as before.
        let mc = MeasurementCounters::from_threads(&ThreadCounts::single(sw(1, 0)), 1);
        assert_eq!(mc.disturbances, vec!["1 context switches"]);
    }

    #[test]
    fn retries_end_at_the_first_attempt_clean_on_every_thread() {
        // Attempt 1: thread 1 disturbed; attempt 2: a helper disturbed; attempt 3: clean.
        let script = [(0, 3, 0), (0, 0, 1), (0, 0, 0), (5, 5, 5)];
        let mut n = 0;
        let (r, mc) = retry_undisturbed(5, || {
            let (x, y, h) = script[n];
            n += 1;
            (
                n,
                vec![
                    ThreadCounts::measuring("thread 0", sw(x, 0)),
                    ThreadCounts::measuring("thread 1", sw(0, y)),
                    ThreadCounts::helper("helper", sw(h, 0)),
                ],
            )
        });
        assert_eq!((r, mc.attempts, mc.disturbed), (3, 3, false));
        assert!(mc.disturbances.is_empty());
        // Always disturbed: the least disturbed attempt over all threads is kept, flagged.
        let script = [(2, 2, 0), (0, 1, 0), (0, 0, 4)];
        let mut n = 0;
        let (r, mc) = retry_undisturbed(3, || {
            let (x, y, h) = script[n];
            n += 1;
            (
                n,
                vec![
                    ThreadCounts::measuring("thread 0", sw(x, 0)),
                    ThreadCounts::measuring("thread 1", sw(0, y)),
                    ThreadCounts::helper("helper", sw(h, 0)),
                ],
            )
        });
        assert_eq!((r, mc.attempts), (2, 3));
        assert!(mc.disturbed);
        assert_eq!(mc.disturbances, vec!["thread 1: 1 minor page faults"]);
        // An error ends the retries.
        let mut calls = 0;
        let e = try_retry_undisturbed(3, || {
            calls += 1;
            Err::<((), Vec<ThreadCounts>), _>("boom")
        });
        assert_eq!((e.unwrap_err(), calls), ("boom", 1));
    }

    #[test]
    fn the_core_clock_of_summed_threads_is_per_thread() {
        let mut c = sw(0, 0);
        c.cycles = Some(6_000_000);
        c.section_ns = 1_000_000.0;
        let mc = MeasurementCounters {
            counts: c,
            attempts: 1,
            threads: 2,
            ..Default::default()
        };
        assert_eq!(mc.core_ghz(), Some(3.0));
        let m = Measurement {
            id: "a".into(),
            benchmark: "b".into(),
            target: "anon".into(),
            parameters: serde_json::json!({}),
            unit: "GB/s".into(),
            method: "m".into(),
            distribution: crate::stats::Distribution::from_samples(&[1.0]).unwrap(),
            placement: None,
            counters: Some(mc),
        };
        assert!(!warnings_for("anon", &[m], 3e9)
            .iter()
            .any(|w| w.code == "core_clock"));
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

    #[test]
    fn a_sample_buffer_is_touched_before_the_section() {
        let mut g = CounterGroup::open();
        if !sw_available(&g) {
            return;
        }
        let mut v = sample_buffer(1 << 20); // 8 MiB
        assert!(v.is_empty() && v.capacity() >= 1 << 20);
        let ((), c) = g.count(|| {
            for i in 0..1 << 20 {
                v.push(i as f64);
            }
        });
        assert!(c.minor_faults.unwrap() < 100, "{c:?}");
    }

    #[test]
    fn paranoid_and_missing_pmu_reasons_say_what_to_do() {
        let e = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(reason(&e, Some(3)).contains("sysctl kernel.perf_event_paranoid=1"));
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert!(reason(&e, Some(2)).contains("no hardware PMU"));
    }
}
