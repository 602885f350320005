//! The perf_event groups behind a [`super::CounterGroup`]: one group of software events
//! (context switches, migrations, page faults) and one of hardware events (cycles,
//! instructions, cache and TLB misses), opened for the calling thread; what cannot be
//! opened is recorded with the reason. Other systems than Linux record everything as
//! unavailable.

pub(super) use imp::Groups;

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
    crate::sysfs::read_trim(std::path::Path::new("/proc/sys/kernel/perf_event_paranoid"))?
        .parse()
        .ok()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::super::counts::{Counts, HARDWARE};
    use super::{read_paranoid, reason};
    use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};
    use perf_event::{Builder, Counter, Group};
    use std::collections::BTreeMap;

    type Slot = (&'static str, Counter);

    /// One perf group with its members.
    struct G {
        group: Group,
        members: Vec<Slot>,
    }

    pub(in crate::counters) struct Groups {
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
        pub(in crate::counters) fn open() -> Groups {
            let paranoid = read_paranoid();
            let mut unavailable = BTreeMap::new();
            let sw = Self::open_software(paranoid, &mut unavailable);
            let hw = Self::open_hardware(paranoid, &mut unavailable);
            Groups {
                sw,
                hw,
                unavailable,
            }
        }

        /// The software group (context switches, migrations, page faults); what cannot be
        /// opened goes to `unavailable` with the reason.
        fn open_software(
            paranoid: Option<i64>,
            unavailable: &mut BTreeMap<String, String>,
        ) -> Option<G> {
            match Group::new() {
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
                            unavailable,
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
                                unavailable,
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
            }
        }

        /// The hardware group (cycles, instructions, cache and TLB misses); without any
        /// member it is one `unavailable` entry for all of them.
        fn open_hardware(
            paranoid: Option<i64>,
            unavailable: &mut BTreeMap<String, String>,
        ) -> Option<G> {
            match Group::new() {
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
            }
        }

        pub(in crate::counters) fn unavailable(&self) -> &BTreeMap<String, String> {
            &self.unavailable
        }

        pub(in crate::counters) fn start(&mut self) {
            for g in [&mut self.hw, &mut self.sw].into_iter().flatten() {
                let _ = g.group.reset();
                let _ = g.group.enable();
            }
        }

        pub(in crate::counters) fn stop(&mut self) -> Counts {
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
    use super::super::counts::{Counts, HARDWARE};
    use std::collections::BTreeMap;

    pub(in crate::counters) struct Groups {
        unavailable: BTreeMap<String, String>,
    }

    impl Groups {
        pub(in crate::counters) fn open() -> Groups {
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
        pub(in crate::counters) fn unavailable(&self) -> &BTreeMap<String, String> {
            &self.unavailable
        }
        pub(in crate::counters) fn start(&mut self) {}
        pub(in crate::counters) fn stop(&mut self) -> Counts {
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

    #[test]
    fn paranoid_and_missing_pmu_reasons_say_what_to_do() {
        let e = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(reason(&e, Some(3)).contains("sysctl kernel.perf_event_paranoid=1"));
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert!(reason(&e, Some(2)).contains("no hardware PMU"));
    }
}
