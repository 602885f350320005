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
//! [`measure_undisturbed`] repeats a section that was disturbed, up to a bound, and keeps
//! the least disturbed attempt; [`warnings_for`] turns what the counters saw into run
//! warnings (disturbed samples, `perf_event_paranoid`, core clock vs TSC).

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
}

/// The counter evidence recorded with one measurement (`counters` in params.json).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
}

impl MeasurementCounters {
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
/// samples vector filled once and cleared), or its first touch is a page fault.
pub fn measure_undisturbed<S, T>(
    group: &mut CounterGroup,
    max_attempts: u32,
    state: &mut S,
    mut section: impl FnMut(&mut S),
    mut collect: impl FnMut(&S) -> T,
) -> (T, MeasurementCounters) {
    let max_attempts = max_attempts.max(1);
    let mut best: Option<(T, Counts)> = None;
    let mut attempts = 0;
    while attempts < max_attempts {
        attempts += 1;
        group.start();
        section(state);
        let c = group.stop();
        let clean = !c.is_disturbed();
        if best
            .as_ref()
            .is_none_or(|(_, b)| c.disturbance_total() < b.disturbance_total())
        {
            best = Some((collect(state), c));
        }
        if clean {
            break;
        }
    }
    let (r, counts) = best.expect("at least one attempt ran");
    let disturbances = counts.disturbances();
    (
        r,
        MeasurementCounters {
            disturbed: !disturbances.is_empty(),
            disturbances,
            attempts,
            counts,
            per_op: BTreeMap::new(),
        },
    )
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
        let ghz: Vec<f64> = with
            .iter()
            .filter_map(|(_, c)| c.counts.core_ghz())
            .collect();
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

    #[test]
    fn paranoid_and_missing_pmu_reasons_say_what_to_do() {
        let e = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(reason(&e, Some(3)).contains("sysctl kernel.perf_event_paranoid=1"));
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert!(reason(&e, Some(2)).contains("no hardware PMU"));
    }
}
