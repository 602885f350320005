//! Environment capture: the machine and the settings that change results.
//!
//! [`Environment::capture`] reads /proc and /sys once; [`Environment::warnings`] turns
//! distorting settings into [`Warning`]s that say how to fix them, as hyperfine does.

mod arm;

pub use arm::{arm_core, dmi_hypervisor};

use crate::topology::Topology;
use crate::warning::Warning;
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
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Environment {
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
    /// Hardware prefetcher state read from the prefetcher control MSR, or `unknown` with
    /// the reason (files written before this field existed read as `unknown`).
    #[serde(default)]
    pub prefetchers: Prefetchers,
}

/// State of the hardware data prefetchers, read (never written) from the vendor's
/// prefetcher control MSR through `/dev/cpu/N/msr`.
///
/// Invariant: `state == "unknown"` exactly when `reason` is `Some` and `units` is empty.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Prefetchers {
    /// `all_enabled`, `some_disabled` (one or more units off, possibly all) or `unknown`.
    pub state: String,
    /// Where the state was read, with the raw MSR value (`MSR 0x1a4
    /// (MISC_FEATURE_CONTROL) on CPU 0 via /dev/cpu/0/msr = 0x0`); empty when unknown.
    pub source: String,
    /// Why the state is unknown, with what to do about it where something can be done;
    /// `None` when it was read.
    pub reason: Option<String>,
    /// The decoded prefetcher units, in MSR bit order; empty when unknown.
    pub units: Vec<PrefetcherUnit>,
}

/// One hardware prefetcher and whether it is on.
///
/// Names: Intel `l2_streamer` (L2 hardware/streamer prefetcher), `l2_adjacent_line`
/// (L2 adjacent cache line prefetcher), `dcu_next_line` (L1D next-line prefetcher),
/// `dcu_ip` (L1D IP-stride prefetcher); AMD `l1_stream`, `l1_stride`, `l1_region`,
/// `l2_stream`, `l2_up_down` (the PPR's `PrefetchControl` field names).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PrefetcherUnit {
    /// Stable unit name (see the type's documentation).
    pub name: String,
    /// `true` when the unit's disable bit is clear.
    pub enabled: bool,
}

/// A sysfs attribute or small procfs file, trimmed (bounded and never blocking:
/// [`crate::sysfs`]).
fn read(p: &str) -> Option<String> {
    crate::sysfs::read_trim(std::path::Path::new(p))
}

/// How much of /proc/cpuinfo is read: its first CPU's fields are what is used, and the
/// file grows by about 1.5 KiB per CPU.
const CPUINFO_HEAD_BYTES: usize = 1 << 20;

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
    "sve2",
    "atomics",
    "dcpop",
];

impl Environment {
    /// Reads the environment of this machine.
    pub fn capture() -> Environment {
        let cpuinfo =
            crate::sysfs::read_head(std::path::Path::new("/proc/cpuinfo"), CPUINFO_HEAD_BYTES)
                .unwrap_or_default();
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
        let mut packages: std::collections::BTreeSet<String> = Default::default();
        let mut siblings_max = 1usize;
        // Each distinct sibling list parsed once (every thread of a core lists the same).
        let mut lists = crate::sysfs::CpuLists::new();
        for c in 0..online {
            if let Some(p) = read(&format!(
                "/sys/devices/system/cpu/cpu{c}/topology/physical_package_id"
            )) {
                packages.insert(p);
            }
            let siblings = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
            if let Some(l) = lists.read(std::path::Path::new(&siblings)) {
                siblings_max = siblings_max.max(l.cpus.len());
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
        let mem_total_bytes =
            crate::sysfs::read_meminfo_bytes(std::path::Path::new("/proc/meminfo"), "MemTotal")
                .unwrap_or(0);
        let vendor = field("vendor_id").unwrap_or_else(|| "unknown".into());
        let hv = hypervisor(&flags_line).or_else(|| {
            dmi_hypervisor(
                read("/sys/class/dmi/id/sys_vendor").as_deref(),
                read("/sys/class/dmi/id/product_name").as_deref(),
            )
        });
        let prefetchers = Prefetchers::capture(
            &vendor,
            field("cpu family").and_then(|s| s.parse().ok()),
            field("model").and_then(|s| s.parse().ok()),
            hv.as_deref(),
        );
        // Arm's /proc/cpuinfo has no model name: the implementer and part say the core.
        let arm = field("CPU implementer").map(|i| arm_core(&i, field("CPU part").as_deref()));
        let vendor = match (&arm, vendor.as_str()) {
            (Some((v, _)), "unknown") => v.clone(),
            _ => vendor,
        };
        Environment {
            cpu: CpuInfo {
                model: field("model name")
                    .or_else(|| arm.map(|(_, m)| m))
                    .unwrap_or_else(|| "unknown".into()),
                vendor,
                logical_cpus: online,
                threads_per_core: siblings_max,
                sockets: packages.len().max(1),
                flags,
            },
            topology,
            kernel,
            arch: std::env::consts::ARCH.to_string(),
            hypervisor: hv,
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
            prefetchers,
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
        if self.prefetchers.state == PREFETCHERS_SOME_DISABLED {
            add(
                "prefetchers",
                format!(
                    "hardware prefetchers disabled: {} ({})",
                    self.prefetchers.disabled().join(", "),
                    self.prefetchers.source
                ),
                "latency and bandwidth figures differ from a default machine; re-enable them (wrmsr) for comparable figures, or keep them off deliberately and say so",
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

/// [`Prefetchers::state`] when every decoded unit is on.
pub const PREFETCHERS_ALL_ENABLED: &str = "all_enabled";
/// [`Prefetchers::state`] when one or more decoded units are off.
pub const PREFETCHERS_SOME_DISABLED: &str = "some_disabled";
/// [`Prefetchers::state`] when the state could not be read.
pub const PREFETCHERS_UNKNOWN: &str = "unknown";

impl Default for Prefetchers {
    /// `unknown`: what a params.json written before prefetchers were recorded reads as.
    fn default() -> Self {
        Prefetchers::unknown(
            "not recorded: the file was written before cxlchar recorded the prefetcher state",
        )
    }
}

impl Prefetchers {
    /// An `unknown` state with its reason.
    pub fn unknown(reason: impl Into<String>) -> Self {
        Prefetchers {
            state: PREFETCHERS_UNKNOWN.into(),
            source: String::new(),
            reason: Some(reason.into()),
            units: Vec::new(),
        }
    }

    /// A decoded state: `all_enabled` when every unit is on, else `some_disabled`; an
    /// empty `units` gives `unknown`.
    pub fn from_units(source: impl Into<String>, units: Vec<PrefetcherUnit>) -> Self {
        if units.is_empty() {
            return Prefetchers::unknown("the prefetcher MSR decoded to no units");
        }
        let state = if units.iter().all(|u| u.enabled) {
            PREFETCHERS_ALL_ENABLED
        } else {
            PREFETCHERS_SOME_DISABLED
        };
        Prefetchers {
            state: state.into(),
            source: source.into(),
            reason: None,
            units,
        }
    }

    /// One line for people: `unknown (why)`, `all enabled (source)` or
    /// `DISABLED: units (source)`.
    pub fn summary(&self) -> String {
        match self.reason.as_deref() {
            Some(why) => format!("unknown ({why})"),
            None if self.disabled().is_empty() => format!("all enabled ({})", self.source),
            None => format!("DISABLED: {} ({})", self.disabled().join(", "), self.source),
        }
    }

    /// Names of the units that are off.
    pub fn disabled(&self) -> Vec<&str> {
        self.units
            .iter()
            .filter(|u| !u.enabled)
            .map(|u| u.name.as_str())
            .collect()
    }

    /// Reads the prefetcher control MSR of the first CPU this process may run on, for a
    /// CPU of `vendor` (`vendor_id` of /proc/cpuinfo), `family` and `model` (the decimal
    /// effective `cpu family` and `model` of /proc/cpuinfo), under `hypervisor` if any.
    ///
    /// Only reads: the device is opened read-only and nothing is ever written to an MSR,
    /// nor is any kernel module loaded. The MSR is read on one CPU only; BIOS settings are
    /// normally the same on every core, but a per-core `wrmsr` would go unseen.
    pub fn capture(
        vendor: &str,
        family: Option<u32>,
        model: Option<u32>,
        hypervisor: Option<&str>,
    ) -> Self {
        if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            return Prefetchers::unknown(format!(
                "no prefetcher control is read on {} ({}): only the x86_64 MSRs of Intel (0x1a4) and AMD (0xc0000108) are decoded",
                std::env::consts::ARCH,
                std::env::consts::OS
            ));
        }
        let layout = match msr_layout(vendor, family, model) {
            Ok(l) => l,
            Err(reason) => return Prefetchers::unknown(reason),
        };
        let cpu = crate::pin::allowed_cpus().first().copied().unwrap_or(0);
        let dev = format!("/dev/cpu/{cpu}/msr");
        let what = format!("MSR {:#x} ({})", layout.msr, layout.name);
        match read_msr(cpu, layout.msr) {
            Ok(value) => {
                let mut source = format!("{what} on CPU {cpu} via {dev} = {value:#x}");
                let extra = value & !layout.mask();
                if extra != 0 {
                    source.push_str(&format!(", other set bits {extra:#x} not decoded"));
                }
                if let Some(h) = hypervisor {
                    source.push_str(&format!(
                        " (inside a {h} guest: the value the hypervisor returns)"
                    ));
                }
                Prefetchers::from_units(source, layout.decode(value))
            }
            Err(MsrError::Missing) => Prefetchers::unknown(format!(
                "{dev} missing: load the msr driver (modprobe msr, as root; the kernel needs CONFIG_X86_MSR) to read {what}"
            )),
            Err(MsrError::Open(e)) => Prefetchers::unknown(open_reason(&dev, &what, &e)),
            Err(MsrError::Read(e)) => Prefetchers::unknown(if e.raw_os_error() == Some(libc::EIO) {
                format!(
                    "reading {what} on CPU {cpu} failed (EIO): {}",
                    match hypervisor {
                        Some(h) => format!("the hypervisor ({h}) does not expose it"),
                        None => "the CPU does not implement it".into(),
                    }
                )
            } else {
                format!("reading {what} on CPU {cpu} failed: {e}")
            }),
        }
    }
}

/// Decodes a prefetcher control MSR value into its units (a set bit disables a unit),
/// for `vendor` (`vendor_id`), `family` and `model` (decimal, as /proc/cpuinfo gives them).
///
/// * Intel (`GenuineIntel`) family 6: MSR 0x1a4 `MISC_FEATURE_CONTROL` (Intel SDM vol. 4;
///   "Disclosure of H/W prefetcher control on some Intel processors"): bit 0
///   `l2_streamer`, bit 1 `l2_adjacent_line`, bit 2 `dcu_next_line`, bit 3 `dcu_ip`.
///   Newer cores (Golden Cove / Sapphire Rapids on) have further bits in this MSR: only
///   these four are decoded. Atom server/embedded cores (Silvermont-D, Goldmont,
///   Goldmont Plus, Tremont, Crestmont) document only bit 0 `l2_streamer` and bit 2
///   `dcu_next_line`; Xeon Phi (Knights Landing/Mill) has bit 0 `dcu_next_line` and bit 1
///   `l2_streamer`. Core 2 and older Atoms (prefetch controls in `IA32_MISC_ENABLE`) are
///   not decoded.
/// * AMD (`AuthenticAMD`) families 0x19 (Zen 3/4) and 0x1A (Zen 5): MSR 0xc0000108
///   `PrefetchControl` (AMD PPR): bit 0 `l1_stream`, bit 1 `l1_stride`, bit 2 `l1_region`,
///   bit 3 `l2_stream`, bit 5 `l2_up_down` (bit 4 is reserved).
///
/// Any other CPU is an error saying that no prefetcher MSR is documented for it.
pub fn decode_prefetchers(
    vendor: &str,
    family: u32,
    model: u32,
    value: u64,
) -> Result<Vec<PrefetcherUnit>, String> {
    Ok(msr_layout(vendor, Some(family), Some(model))?.decode(value))
}

/// A prefetcher control MSR and its disable bits.
struct MsrLayout {
    msr: u32,
    name: &'static str,
    /// (bit, unit name); a set bit disables the unit.
    bits: &'static [(u32, &'static str)],
}

impl MsrLayout {
    fn decode(&self, value: u64) -> Vec<PrefetcherUnit> {
        self.bits
            .iter()
            .map(|&(bit, name)| PrefetcherUnit {
                name: name.into(),
                enabled: value & (1 << bit) == 0,
            })
            .collect()
    }

    fn mask(&self) -> u64 {
        self.bits.iter().fold(0, |m, &(bit, _)| m | 1 << bit)
    }
}

const INTEL_MSR: u32 = 0x1a4;
const INTEL_MSR_NAME: &str = "MISC_FEATURE_CONTROL";

static INTEL_CORE: MsrLayout = MsrLayout {
    msr: INTEL_MSR,
    name: INTEL_MSR_NAME,
    bits: &[
        (0, "l2_streamer"),
        (1, "l2_adjacent_line"),
        (2, "dcu_next_line"),
        (3, "dcu_ip"),
    ],
};

static INTEL_ATOM: MsrLayout = MsrLayout {
    msr: INTEL_MSR,
    name: INTEL_MSR_NAME,
    bits: &[(0, "l2_streamer"), (2, "dcu_next_line")],
};

static INTEL_PHI: MsrLayout = MsrLayout {
    msr: INTEL_MSR,
    name: INTEL_MSR_NAME,
    bits: &[(0, "dcu_next_line"), (1, "l2_streamer")],
};

static AMD_ZEN: MsrLayout = MsrLayout {
    msr: 0xc000_0108,
    name: "PrefetchControl",
    bits: &[
        (0, "l1_stream"),
        (1, "l1_stride"),
        (2, "l1_region"),
        (3, "l2_stream"),
        (5, "l2_up_down"),
    ],
};

/// Family 6 models of Atom server/embedded cores with the two-bit layout: Silvermont-D,
/// Goldmont, Goldmont-D, Goldmont Plus, Tremont-D, Tremont, Tremont-L, Sierra Forest,
/// Grand Ridge.
const INTEL_ATOM_MODELS: &[u32] = &[0x4d, 0x5c, 0x5f, 0x7a, 0x86, 0x96, 0x9c, 0xaf, 0xb6];
/// Family 6 models of Xeon Phi: Knights Landing, Knights Mill.
const INTEL_PHI_MODELS: &[u32] = &[0x57, 0x85];
/// Family 6 models from Nehalem (0x1a) on without a documented MSR 0x1a4 prefetcher
/// control: Dunnington (Penryn, 0x1d), Bonnell, Saltwell, Silvermont and Airmont client
/// Atoms. Models below 0x1a (Core 2 and older) are not decoded either.
const INTEL_UNDOCUMENTED_MODELS: &[u32] = &[
    0x1c, 0x1d, 0x26, 0x27, 0x35, 0x36, 0x37, 0x4a, 0x4c, 0x5a, 0x5d, 0x75,
];

fn msr_layout(
    vendor: &str,
    family: Option<u32>,
    model: Option<u32>,
) -> Result<&'static MsrLayout, String> {
    let hex = |v: Option<u32>| v.map_or("?".to_string(), |v| format!("{v:#x}"));
    let undocumented = || {
        format!(
            "no documented prefetcher MSR for this CPU (vendor {vendor}, family {}, model {})",
            hex(family),
            hex(model)
        )
    };
    match (vendor, family, model) {
        ("GenuineIntel", Some(6), Some(m)) => {
            if INTEL_PHI_MODELS.contains(&m) {
                Ok(&INTEL_PHI)
            } else if INTEL_ATOM_MODELS.contains(&m) {
                Ok(&INTEL_ATOM)
            } else if INTEL_UNDOCUMENTED_MODELS.contains(&m) || m < 0x1a {
                Err(undocumented())
            } else {
                Ok(&INTEL_CORE)
            }
        }
        ("AuthenticAMD", Some(0x19 | 0x1a), _) => Ok(&AMD_ZEN),
        _ => Err(undocumented()),
    }
}

/// Why an MSR could not be read.
enum MsrError {
    /// `/dev/cpu/N/msr` does not exist (no msr driver).
    Missing,
    /// The device exists but could not be opened.
    Open(std::io::Error),
    /// The device opened but the read failed (EIO: the MSR does not exist for this CPU).
    Read(std::io::Error),
}

/// Reads MSR `msr` of CPU `cpu`: a pread of 8 bytes at offset `msr` of the read-only
/// opened `/dev/cpu/N/msr` (the kernel runs `rdmsr` on that CPU). Called on x86_64
/// Linux only ([`Prefetchers::capture`] stops earlier elsewhere).
fn read_msr(cpu: usize, msr: u32) -> Result<u64, MsrError> {
    use std::os::unix::fs::FileExt;
    let f = fs::File::open(format!("/dev/cpu/{cpu}/msr")).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            MsrError::Missing
        } else {
            MsrError::Open(e)
        }
    })?;
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, u64::from(msr))
        .map_err(MsrError::Read)?;
    Ok(u64::from_le_bytes(b))
}

/// The reason for a failed open of `dev`, with what to do.
fn open_reason(dev: &str, what: &str, e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => {
            if effective_uid() == Some(0) {
                format!("opening {dev} was refused although root ({e}): the process lacks CAP_SYS_RAWIO (a container?); grant it to read {what}")
            } else {
                format!("not root: opening {dev} needs root (CAP_SYS_RAWIO) to read {what}")
            }
        }
        Some(libc::ENXIO | libc::ENODEV) => {
            format!("{dev} has no driver behind it: load the msr driver (modprobe msr, as root) to read {what}")
        }
        _ => format!("opening {dev} failed ({e}) to read {what}"),
    }
}

/// The effective uid from /proc/self/status.
fn effective_uid() -> Option<u32> {
    read("/proc/self/status")?
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn unsafe_zeroed_utsname() -> libc::utsname {
    // SAFETY: utsname is plain old data (arrays of c_char); all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

fn cstr(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        // c_char is i8 on x86_64 and u8 on aarch64: the same bits either way.
        .map(|&c| u8::from_ne_bytes(c.to_ne_bytes()))
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests;
