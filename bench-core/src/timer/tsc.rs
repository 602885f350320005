//! x86_64 time-stamp counter.
//!
//! Start: `lfence; rdtsc; lfence` (earlier instructions retire before the read; later
//! ones do not start before it). Stop: `rdtscp; lfence` (the section's instructions have
//! retired before the read; nothing after starts early). This is Intel's recommended
//! sequence for benchmarking short sections.

use core::arch::x86_64::{__cpuid, __rdtscp, _mm_lfence, _rdtsc};

/// Whether `rdtscp` exists (CPUID 0x8000_0001 EDX bit 27).
pub fn available() -> bool {
    // cpuid exists on every x86_64 CPU; leaf 0x8000_0000 reports the highest extended
    // leaf, so 0x8000_0001 is only read when it exists.
    let max_ext = __cpuid(0x8000_0000).eax;
    if max_ext < 0x8000_0001 {
        return false;
    }
    let edx = __cpuid(0x8000_0001).edx;
    edx & (1 << 27) != 0
}

/// Invariant TSC: both `constant_tsc` and `nonstop_tsc` in /proc/cpuinfo, or, when that
/// file cannot be read, CPUID 0x8000_0007 EDX bit 8.
pub fn invariant() -> Option<bool> {
    // The first CPU's flags: the head of the file (it grows with the CPUs).
    if let Some(text) = crate::sysfs::read_head(std::path::Path::new("/proc/cpuinfo"), 1 << 20) {
        if let Some(flags) = text.lines().find(|l| l.starts_with("flags")) {
            let has = |f: &str| flags.split_whitespace().any(|w| w == f);
            return Some(has("constant_tsc") && has("nonstop_tsc"));
        }
    }
    // The extended leaf is checked before it is read.
    let max_ext = __cpuid(0x8000_0000).eax;
    if max_ext < 0x8000_0007 {
        return None;
    }
    Some(__cpuid(0x8000_0007).edx & (1 << 8) != 0)
}

/// Counter read that opens a timed section.
#[inline(always)]
pub fn start() -> u64 {
    // SAFETY: lfence and rdtsc exist on every x86_64 CPU and touch no memory.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Counter read that closes a timed section.
#[inline(always)]
pub fn stop() -> u64 {
    let mut aux = 0u32;
    // SAFETY: `available()` was checked before a Tsc timer is built; `aux` is a valid
    // u32 the instruction writes the processor id into.
    unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
}
