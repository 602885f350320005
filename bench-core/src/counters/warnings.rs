//! Run warnings from what the counters saw: measurements still disturbed after their
//! retries, counters denied by `perf_event_paranoid`, missing hardware counters, and a
//! core clock that disagrees with the TSC.

use super::counts::{MeasurementCounters, HARDWARE};
use crate::params::{Measurement, Warning};

/// Relative disagreement between the core clock (cycles / TSC time) and the TSC above
/// which a warning is raised.
pub const CLOCK_TOLERANCE: f64 = 0.05;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::test_util::{measurement, sw};
    use crate::counters::Counts;

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
        let m = |c: MeasurementCounters| measurement("ns", c);
        // 3 GHz core vs 2 GHz TSC: warned; vs 3 GHz TSC: not.
        assert!(warnings_for("anon", &[m(mc.clone())], 2e9)
            .iter()
            .any(|w| w.code == "core_clock"));
        assert!(!warnings_for("anon", &[m(mc)], 3e9)
            .iter()
            .any(|w| w.code == "core_clock"));
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
        let m = measurement("GB/s", mc);
        assert!(!warnings_for("anon", &[m], 3e9)
            .iter()
            .any(|w| w.code == "core_clock"));
    }
}
