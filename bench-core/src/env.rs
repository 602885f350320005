//! Environment capture: the machine and the settings that change results.
//!
//! [`Environment::capture`] reads /proc and /sys once; [`Environment::warnings`] turns
//! distorting settings into [`Warning`]s that say how to fix them, as hyperfine does.

use crate::params::Warning;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::fs;

/// CPU identity and shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuInfo {
    /// `model name` from /proc/cpuinfo.
    pub model: String,
    /// `vendor_id`.
    pub vendor: String,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// Threads per core (SMT width).
    pub threads_per_core: usize,
    /// Physical packages.
    pub sockets: usize,
    /// Relevant ISA and timer flags present (avx512f, avx2, clflushopt, clwb,
    /// constant_tsc, nonstop_tsc, rdtscp, ...).
    pub flags: Vec<String>,
}

/// Everything recorded about the machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    /// CPU.
    pub cpu: CpuInfo,
    /// Topology (nodes, caches, dax, hugepages).
    pub topology: Topology,
    /// `uname -r`.
    pub kernel: String,
    /// Machine architecture (`x86_64`).
    pub arch: String,
    /// Hypervisor vendor when virtualized (`KVM`), else `None`.
    pub hypervisor: Option<String>,
    /// cpufreq scaling governors in use (empty when the kernel exposes no cpufreq, as
    /// in most VMs).
    pub governors: Vec<String>,
    /// Turbo/boost enabled, when the kernel tells.
    pub turbo: Option<bool>,
    /// SMT active (`/sys/devices/system/cpu/smt/active`), when the kernel tells.
    pub smt_active: Option<bool>,
    /// THP mode (`always`, `madvise`, `never`).
    pub thp_enabled: Option<String>,
    /// THP defrag mode.
    pub thp_defrag: Option<String>,
    /// Automatic NUMA balancing on.
    pub numa_balancing: Option<bool>,
    /// `kernel.perf_event_paranoid`.
    pub perf_event_paranoid: Option<i64>,
    /// Total memory in bytes.
    pub mem_total_bytes: u64,
    /// CPUs this process may run on, as a CPU list.
    pub allowed_cpus: String,
}

fn read(p: &str) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// The bracketed choice of a sysfs multiple-choice file (`always [madvise] never`).
pub fn bracketed(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

const INTERESTING_FLAGS: &[&str] = &[
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx2",
    "avx",
    "sse2",
    "clflush",
    "clflushopt",
    "clwb",
    "movdir64b",
    "movdiri",
    "rdtscp",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "hypervisor",
    "erms",
    "fsrm",
    "asimd",
    "sve",
];

impl Environment {
    /// Reads the environment of this machine.
    pub fn capture() -> Environment {
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let flags_line = field("flags")
            .or_else(|| field("Features"))
            .unwrap_or_default();
        let flags: Vec<String> = INTERESTING_FLAGS
            .iter()
            .filter(|f| flags_line.split_whitespace().any(|w| w == **f))
            .map(|f| f.to_string())
            .collect();
        let topology = Topology::system();
        let logical = crate::pin::allowed_cpus().len().max(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        );
        let online = read("/sys/devices/system/cpu/online")
            .and_then(|s| crate::pin::parse_cpu_list(&s).ok())
            .map(|v| v.len())
            .unwrap_or(logical);
        let mut packages: Vec<String> = Vec::new();
        let mut siblings_max = 1usize;
        for c in 0..online {
            if let Some(p) = read(&format!(
                "/sys/devices/system/cpu/cpu{c}/topology/physical_package_id"
            )) {
                if !packages.contains(&p) {
                    packages.push(p);
                }
            }
            if let Some(s) = read(&format!(
                "/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"
            )) {
                if let Ok(v) = crate::pin::parse_cpu_list(&s) {
                    siblings_max = siblings_max.max(v.len());
                }
            }
        }
        let mut governors: Vec<String> = Vec::new();
        for c in 0..online {
            if let Some(g) = read(&format!(
                "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
            )) {
                if !governors.contains(&g) {
                    governors.push(g);
                }
            }
        }
        let turbo = read("/sys/devices/system/cpu/intel_pstate/no_turbo")
            .map(|s| s == "0")
            .or_else(|| read("/sys/devices/system/cpu/cpufreq/boost").map(|s| s == "1"));
        let mut uts: libc::utsname = unsafe_zeroed_utsname();
        // SAFETY: `uts` is a valid, writable utsname.
        let kernel = if unsafe { libc::uname(&mut uts) } == 0 {
            cstr(&uts.release)
        } else {
            String::new()
        };
        let mem_total_bytes = read("/proc/meminfo")
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .unwrap_or(0)
            * 1024;
        Environment {
            cpu: CpuInfo {
                model: field("model name").unwrap_or_else(|| "unknown".into()),
                vendor: field("vendor_id").unwrap_or_else(|| "unknown".into()),
                logical_cpus: online,
                threads_per_core: siblings_max,
                sockets: packages.len().max(1),
                flags,
            },
            topology,
            kernel,
            arch: std::env::consts::ARCH.to_string(),
            hypervisor: hypervisor(&flags_line),
            governors,
            turbo,
            smt_active: read("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
            thp_enabled: read("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| bracketed(&s)),
            thp_defrag: read("/sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|s| bracketed(&s)),
            numa_balancing: read("/proc/sys/kernel/numa_balancing").map(|s| s != "0"),
            perf_event_paranoid: read("/proc/sys/kernel/perf_event_paranoid")
                .and_then(|s| s.parse().ok()),
            mem_total_bytes,
            allowed_cpus: crate::pin::format_cpu_list(&crate::pin::allowed_cpus()),
        }
    }

    /// Settings that distort results, each with how to fix it.
    pub fn warnings(&self, tsc_invariant: Option<bool>) -> Vec<Warning> {
        let mut w = Vec::new();
        let mut add = |code: &str, message: String, remediation: &str| {
            w.push(Warning {
                code: code.into(),
                message,
                remediation: remediation.into(),
            })
        };
        if let Some(h) = &self.hypervisor {
            add(
                "virtualized",
                format!("running under a hypervisor ({h}): latencies include nested paging and the host's scheduling"),
                "for reference figures run on bare metal, or pin the vCPUs on the host and back the guest with huge pages",
            );
        }
        if self.governors.iter().any(|g| g != "performance") {
            add(
                "governor",
                format!(
                    "CPU frequency governor is '{}', not 'performance'",
                    self.governors.join(",")
                ),
                "sudo cpupower frequency-set -g performance",
            );
        }
        if self.turbo == Some(true) {
            add(
                "turbo",
                "turbo/boost is on: the core clock varies with load and temperature".into(),
                "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo (Intel) or echo 0 > /sys/devices/system/cpu/cpufreq/boost",
            );
        }
        if self.smt_active == Some(true) || self.cpu.threads_per_core > 1 {
            add(
                "smt",
                "SMT is active: a sibling thread shares the core's caches and ports".into(),
                "echo off > /sys/devices/system/cpu/smt/control, or keep the sibling idle with --cpu",
            );
        }
        if self.numa_balancing == Some(true) {
            add(
                "numa_balancing",
                "automatic NUMA balancing is on: pages may migrate during a run".into(),
                "echo 0 > /proc/sys/kernel/numa_balancing",
            );
        }
        if tsc_invariant == Some(false) {
            add(
                "tsc",
                "the TSC is not invariant (constant_tsc/nonstop_tsc missing): cycle timing may drift".into(),
                "use a machine with an invariant TSC; results fall back on calibration only",
            );
        }
        w
    }
}

fn hypervisor(flags: &str) -> Option<String> {
    if !flags.split_whitespace().any(|f| f == "hypervisor") {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // Leaf 0x4000_0000 is the hypervisor leaf, valid when the hypervisor flag is set.
        let r = core::arch::x86_64::__cpuid(0x4000_0000);
        let mut b = Vec::with_capacity(12);
        for v in [r.ebx, r.ecx, r.edx] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let sig = String::from_utf8_lossy(&b).trim_matches('\0').to_string();
        let name = match sig.as_str() {
            "KVMKVMKVM" => "KVM",
            "Microsoft Hv" => "Hyper-V",
            "VMwareVMware" => "VMware",
            "XenVMMXenVMM" => "Xen",
            "TCGTCGTCGTCG" => "QEMU TCG",
            _ => sig.as_str(),
        };
        Some(name.to_string())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Some("unknown".into())
    }
}

fn unsafe_zeroed_utsname() -> libc::utsname {
    // SAFETY: utsname is plain old data (arrays of c_char); all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

fn cstr(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_choice() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("nothing"), None);
    }

    #[test]
    fn captures_this_machine() {
        let e = Environment::capture();
        assert!(e.cpu.logical_cpus >= 1);
        assert!(!e.kernel.is_empty());
        assert!(e.mem_total_bytes > 0);
    }

    #[test]
    fn distorting_settings_warn_with_remedy() {
        let mut e = Environment::capture();
        e.governors = vec!["powersave".into()];
        e.numa_balancing = Some(true);
        e.smt_active = Some(true);
        let w = e.warnings(Some(false));
        for code in ["governor", "numa_balancing", "smt", "tsc"] {
            let x = w
                .iter()
                .find(|x| x.code == code)
                .unwrap_or_else(|| panic!("no {code} warning"));
            assert!(!x.remediation.is_empty());
        }
        e.governors = vec!["performance".into()];
        e.numa_balancing = Some(false);
        e.smt_active = Some(false);
        e.cpu.threads_per_core = 1;
        e.turbo = None;
        e.hypervisor = None;
        assert!(e.warnings(Some(true)).is_empty());
    }
}
