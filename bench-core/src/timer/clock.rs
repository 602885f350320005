//! Portable fallback: `clock_gettime(CLOCK_MONOTONIC_RAW)` in nanoseconds.

/// Nanoseconds on `CLOCK_MONOTONIC_RAW` (not slewed by NTP).
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists on every
    // Linux since 2.6.28, and the call cannot fail with a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
