//! The one home of cache-line and store primitives: flush (clflush, clflushopt, clwb on
//! x86_64; `dc civac`, `dc cvac` on AArch64; by line or by range), fences (`sfence`,
//! `mfence`; `dsb st`, `dsb sy`), non-temporal stores (fill, copy, one 64-byte line:
//! `movntdq`/`movnti`, `stnp`), volatile stores for uncached and write-combining mappings
//! (MMIO), and the runtime checks that say which of them this CPU has. The pool, flush
//! and chase code, the MMIO benchmark and the bandwidth kernels' fences all use these.
//!
//! Everything arch-specific sits behind `#[cfg(target_arch = ...)]` for x86_64 and
//! aarch64; elsewhere every method reports itself unavailable and the benchmarks skip
//! with that reason. AArch64's cache maintenance by address is allowed at EL0 only when
//! the kernel sets SCTLR_EL1.UCI (Linux does): each instruction is tried once in a forked
//! child first ([`FlushMethod::available`]), so a kernel that traps it (SIGILL) gives a
//! skip with the reason, never a crashed run.

/// Cache line size assumed by the pool layouts (bytes).
pub const LINE: usize = 64;

/// The instruction [`store_fence`] issues, for method descriptions.
pub const STORE_FENCE: &str = if cfg!(target_arch = "aarch64") {
    "dsb st"
} else {
    "sfence"
};

/// A way to make written data visible in memory (written back past the caches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlushMethod {
    /// `clflush` on every line (ordered by itself; no fence needed).
    Clflush,
    /// `clflushopt` on every line, then `sfence`.
    ClflushoptSfence,
    /// `clwb` on every line, then `sfence` (line may stay cached, clean).
    ClwbSfence,
    /// The data written with non-temporal stores (`movntdq`/`movnti`), then `sfence`;
    /// on AArch64 `stnp` pairs (a non-temporal *hint* the core may ignore), then `dsb st`.
    NtStoreSfence,
    /// AArch64 `dc civac` (clean and invalidate to the point of coherency) on every line,
    /// then `dsb sy`: the analogue of `clflushopt` + `sfence`.
    DcCivacDsb,
    /// AArch64 `dc cvac` (clean to the point of coherency; the line may stay cached) on
    /// every line, then `dsb sy`: the analogue of `clwb` + `sfence`.
    DcCvacDsb,
}

impl FlushMethod {
    /// Every method of this architecture, in output order (x86_64's four; AArch64's
    /// `dc civac`, `dc cvac` and `stnp`).
    #[cfg(not(target_arch = "aarch64"))]
    pub const ALL: [FlushMethod; 4] = [
        FlushMethod::Clflush,
        FlushMethod::ClflushoptSfence,
        FlushMethod::ClwbSfence,
        FlushMethod::NtStoreSfence,
    ];
    /// Every method of this architecture, in output order (x86_64's four; AArch64's
    /// `dc civac`, `dc cvac` and `stnp`).
    #[cfg(target_arch = "aarch64")]
    pub const ALL: [FlushMethod; 3] = [
        FlushMethod::DcCivacDsb,
        FlushMethod::DcCvacDsb,
        FlushMethod::NtStoreSfence,
    ];

    /// Every method of every architecture (for the key registry and documentation).
    pub const EVERY: [FlushMethod; 6] = [
        FlushMethod::Clflush,
        FlushMethod::ClflushoptSfence,
        FlushMethod::ClwbSfence,
        FlushMethod::NtStoreSfence,
        FlushMethod::DcCivacDsb,
        FlushMethod::DcCvacDsb,
    ];

    /// Short name used in keys (`clflushopt`).
    pub fn name(self) -> &'static str {
        match self {
            FlushMethod::Clflush => "clflush",
            FlushMethod::ClflushoptSfence => "clflushopt",
            FlushMethod::ClwbSfence => "clwb",
            FlushMethod::NtStoreSfence => "ntstore",
            FlushMethod::DcCivacDsb => "civac",
            FlushMethod::DcCvacDsb => "cvac",
        }
    }

    /// What the method does, in words.
    pub fn describe(self) -> &'static str {
        match self {
            FlushMethod::Clflush => "stores, then clflush on every line",
            FlushMethod::ClflushoptSfence => "stores, then clflushopt on every line, then sfence",
            FlushMethod::ClwbSfence => "stores, then clwb on every line, then sfence",
            FlushMethod::NtStoreSfence if cfg!(target_arch = "aarch64") => {
                "non-temporal stores (stnp pairs: a hint the core may ignore; plain stores for an unaligned head and the tail; at least 8 B), then dsb st"
            }
            FlushMethod::NtStoreSfence => {
                "non-temporal stores (movntdq, movnti for the tail; at least 8 B), then sfence"
            }
            FlushMethod::DcCivacDsb => {
                "stores, then dc civac (clean and invalidate to the point of coherency) on every line, then dsb sy"
            }
            FlushMethod::DcCvacDsb => {
                "stores, then dc cvac (clean to the point of coherency; the line may stay cached) on every line, then dsb sy"
            }
        }
    }

    /// Whether the method is an instruction of this build's architecture.
    pub fn native(self) -> bool {
        let dc = matches!(self, FlushMethod::DcCivacDsb | FlushMethod::DcCvacDsb);
        let arm = dc || self == FlushMethod::NtStoreSfence;
        (cfg!(target_arch = "aarch64") && arm) || (cfg!(target_arch = "x86_64") && !dc)
    }

    /// `Ok` when this CPU has the method, else why not (the CPUID bit missing on x86_64;
    /// on AArch64 the signal a probe of the instruction raised).
    pub fn available(self) -> Result<(), String> {
        if !self.native() {
            return Err(format!(
                "{} is {} instruction; this build is for {}",
                self.name(),
                match self {
                    FlushMethod::DcCivacDsb | FlushMethod::DcCvacDsb => "an AArch64",
                    _ => "an x86_64",
                },
                std::env::consts::ARCH
            ));
        }
        #[cfg(target_arch = "x86_64")]
        {
            let (ok, what) = match self {
                FlushMethod::Clflush => (
                    std::is_x86_feature_detected!("sse2"),
                    "CLFSH (CPUID.1:EDX[19])",
                ),
                FlushMethod::ClflushoptSfence => {
                    (x86::cpuid7_ebx_bit(23), "CLFLUSHOPT (CPUID.(7,0):EBX[23])")
                }
                FlushMethod::ClwbSfence => (x86::cpuid7_ebx_bit(24), "CLWB (CPUID.(7,0):EBX[24])"),
                _ => (std::is_x86_feature_detected!("sse2"), "SSE2"),
            };
            if ok {
                Ok(())
            } else {
                Err(format!("this CPU does not report {what}"))
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            match self {
                FlushMethod::DcCivacDsb => arm::probe_civac().clone(),
                FlushMethod::DcCvacDsb => arm::probe_cvac().clone(),
                // stnp is in the base A64 instruction set.
                _ => Ok(()),
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            unreachable!("no method is native to {}", std::env::consts::ARCH)
        }
    }
}

/// The best available invalidation for readers of non-coherent memory (clflushopt, else
/// clflush; `dc civac` on AArch64), or why none exists.
pub fn invalidate_method() -> Result<FlushMethod, String> {
    if cfg!(target_arch = "aarch64") {
        return FlushMethod::DcCivacDsb
            .available()
            .map(|_| FlushMethod::DcCivacDsb);
    }
    FlushMethod::ClflushoptSfence
        .available()
        .map(|_| FlushMethod::ClflushoptSfence)
        .or_else(|_| {
            FlushMethod::Clflush
                .available()
                .map(|_| FlushMethod::Clflush)
        })
}

/// Writes back (and for clflush/clflushopt evicts) every line of `[ptr, ptr+len)`, then
/// fences as the method requires. `NtStoreSfence` only fences (the data was streamed).
///
/// # Safety
/// `ptr..ptr+len` must be mapped; `m.available()` must be `Ok`.
#[inline]
pub unsafe fn flush_range(m: FlushMethod, ptr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if len == 0 {
            return;
        }
        let start = (ptr as usize) & !(LINE - 1);
        let end = ptr as usize + len;
        match m {
            // SAFETY: the caller guarantees the range is mapped and the feature present.
            FlushMethod::Clflush => unsafe { x86::clflush_lines(start, end) },
            // SAFETY: as above.
            FlushMethod::ClflushoptSfence => unsafe { x86::clflushopt_lines(start, end) },
            // SAFETY: as above.
            FlushMethod::ClwbSfence => unsafe { x86::clwb_lines(start, end) },
            FlushMethod::NtStoreSfence => store_fence(),
            FlushMethod::DcCivacDsb | FlushMethod::DcCvacDsb => {
                unreachable!("{} is not available on x86_64", m.name())
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if len == 0 {
            return;
        }
        let start = (ptr as usize) & !(LINE - 1);
        let end = ptr as usize + len;
        match m {
            // SAFETY: the caller guarantees the range is mapped and the method available
            // (probed: EL0 may issue it).
            FlushMethod::DcCivacDsb => unsafe { arm::civac_lines(start, end) },
            // SAFETY: as above.
            FlushMethod::DcCvacDsb => unsafe { arm::cvac_lines(start, end) },
            FlushMethod::NtStoreSfence => store_fence(),
            _ => unreachable!("{} is not available on aarch64", m.name()),
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (m, ptr, len);
    }
}

/// Invalidates `[ptr, ptr+len)` before reading data another agent wrote without
/// coherence: `mfence`, then clflushopt (or clflush) on every line, then `mfence`
/// (`dsb sy`, `dc civac`, `dsb sy` on AArch64).
///
/// # Safety
/// The range must be mapped; `m` must be available.
#[inline]
pub unsafe fn invalidate_range(m: FlushMethod, ptr: *const u8, len: usize) {
    full_fence();
    // SAFETY: forwarded caller guarantee.
    unsafe { flush_range(m, ptr, len) };
    full_fence();
}

/// `sfence`; on AArch64 `dsb st` (earlier stores, non-temporal ones included, complete
/// before any later instruction); a SeqCst fence elsewhere.
#[inline(always)]
pub fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no memory operands; SSE is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier with no operands; it orders memory, so no `nomem`.
    unsafe {
        core::arch::asm!("dsb st", options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// `mfence`; on AArch64 `dsb sy` (every earlier access and cache maintenance complete);
/// a SeqCst fence elsewhere.
#[inline(always)]
pub fn full_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: mfence has no memory operands; SSE2 is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_mfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier with no operands; it orders memory, so no `nomem`.
    unsafe {
        core::arch::asm!("dsb sy", options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// Writes back and evicts the line holding `p` with `clflush` (ordered by itself).
///
/// # Safety
/// `p` must be mapped; `FlushMethod::Clflush.available()` must be `Ok`.
#[inline(always)]
pub unsafe fn clflush_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        x86::clflush_line(p as usize)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Writes back and evicts the line holding `p` with `clflushopt` (weakly ordered: fence
/// with [`store_fence`]).
///
/// # Safety
/// `p` must be mapped; `FlushMethod::ClflushoptSfence.available()` must be `Ok`.
#[inline(always)]
pub unsafe fn clflushopt_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        x86::clflushopt_line(p as usize)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Writes back the line holding `p` with `clwb` (it may stay cached; fence with
/// [`store_fence`]).
///
/// # Safety
/// `p` must be mapped; `FlushMethod::ClwbSfence.available()` must be `Ok`.
#[inline(always)]
pub unsafe fn clwb_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        x86::clwb_line(p as usize)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// One 8-byte volatile store: the uncached (MMIO) write. The compiler neither drops,
/// merges nor reorders it with other volatile accesses; no fence.
///
/// # Safety
/// `dst` must be 8-byte aligned with 8 writable bytes.
#[inline(always)]
pub unsafe fn store_8b_volatile(dst: *mut u8, v: u64) {
    // SAFETY: forwarded caller guarantee.
    unsafe { core::ptr::write_volatile(dst as *mut u64, v) };
}

/// Stores `val` into `len` bytes at `dst` with 8-byte volatile stores (`len` a multiple
/// of 8): the write-combining copy of the PIO/doorbell path, which a WC mapping merges
/// into bursts. No fence: follow it with [`store_fence`].
///
/// # Safety
/// `dst` must be 8-byte aligned with `len` writable bytes.
#[inline(always)]
pub unsafe fn wc_store(dst: *mut u8, len: usize, val: u64) {
    for i in (0..len).step_by(8) {
        // SAFETY: i + 8 <= len, inside the caller's range; 8-aligned.
        unsafe { store_8b_volatile(dst.add(i), val) };
    }
}

/// A 64-byte write-combining copy ([`wc_store`] of one line). No fence.
///
/// # Safety
/// `dst` must be 8-byte aligned with 64 writable bytes.
#[inline(always)]
pub unsafe fn wc_store_64b(dst: *mut u8, val: u64) {
    // SAFETY: forwarded caller guarantee.
    unsafe { wc_store(dst, 64, val) };
}

/// Writes one 64-byte line at `dst` with non-temporal stores (four 16-byte `movntdq`;
/// two `stnp` of q-register pairs on AArch64; plain stores elsewhere). No fence: follow
/// it with [`store_fence`].
///
/// # Safety
/// `dst` must be 16-byte aligned with 64 writable bytes.
#[inline(always)]
pub unsafe fn nt_store_64b(dst: *mut u8, byte: u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        x86::nt_store_64b(dst, byte)
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        arm::nt_store_64b(dst, byte)
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        std::ptr::write_bytes(dst, byte, LINE)
    };
}

/// Fills `len` bytes at `dst` with `byte` using non-temporal stores (16 B `movntdq`
/// where aligned, 8 B `movnti` otherwise; the length is rounded up to 8 B; on AArch64
/// 16 B `stnp` pairs of x registers, a plain 8 B store for an unaligned head or tail).
/// Does not fence.
///
/// # Safety
/// `dst` must be 8-byte aligned and `len.next_multiple_of(8)` bytes from it writable.
#[inline]
pub unsafe fn nt_fill(dst: *mut u8, len: usize, byte: u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        x86::nt_fill(dst, len, byte)
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        arm::nt_fill(dst, len, byte)
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        std::ptr::write_bytes(dst, byte, len.next_multiple_of(8))
    };
}

/// Copies `len` bytes with non-temporal stores where possible (see [`nt_fill`]): the
/// destination 16-byte aligned part uses `movntdq` (`stnp` of q-register pairs on
/// AArch64), the rest plain stores. No fence.
///
/// # Safety
/// Both ranges valid, not overlapping.
#[inline]
pub unsafe fn nt_copy(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        x86::nt_copy(dst, src, len)
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        arm::nt_copy(dst, src, len)
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}

#[cfg(target_arch = "aarch64")]
mod arm;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::LINE;
    use core::arch::x86_64::*;

    /// # Safety
    /// Lines mapped.
    #[inline]
    #[allow(clippy::missing_safety_doc)]
    pub unsafe fn clflush_lines(start: usize, end: usize) {
        let mut a = start;
        while a < end {
            // SAFETY: mapped per caller.
            unsafe { clflush_line(a) };
            a += LINE;
        }
    }

    /// # Safety
    /// Line mapped.
    #[inline(always)]
    pub unsafe fn clflush_line(a: usize) {
        // SAFETY: mapped per caller; clflush is SSE2 (baseline).
        unsafe { _mm_clflush(a as *const u8) };
    }

    /// # Safety
    /// Line mapped; CPU has clflushopt.
    #[inline(always)]
    pub unsafe fn clflushopt_line(a: usize) {
        // SAFETY: mapped per caller; the CPU has CLFLUSHOPT (checked by the caller
        // through FlushMethod::available). clflushopt does not modify flags.
        unsafe {
            core::arch::asm!("clflushopt [{0}]", in(reg) a, options(nostack, preserves_flags))
        };
    }

    /// # Safety
    /// Line mapped; CPU has clwb.
    #[inline(always)]
    pub unsafe fn clwb_line(a: usize) {
        // SAFETY: mapped per caller; the CPU has CLWB (checked by the caller).
        unsafe { core::arch::asm!("clwb [{0}]", in(reg) a, options(nostack, preserves_flags)) };
    }

    /// # Safety
    /// `dst` 16-aligned with 64 writable bytes.
    #[inline(always)]
    pub unsafe fn nt_store_64b(dst: *mut u8, byte: u8) {
        let v = _mm_set1_epi8(byte as i8);
        // SAFETY: four aligned 16-byte stores inside the caller's 64 bytes.
        unsafe {
            _mm_stream_si128(dst as *mut __m128i, v);
            _mm_stream_si128(dst.add(16) as *mut __m128i, v);
            _mm_stream_si128(dst.add(32) as *mut __m128i, v);
            _mm_stream_si128(dst.add(48) as *mut __m128i, v);
        }
    }

    /// Whether CPUID leaf 7 subleaf 0 reports EBX bit `bit` (23: CLFLUSHOPT, 24: CLWB).
    /// Stable Rust has neither `is_x86_feature_detected!("clflushopt")` nor the
    /// `_mm_clflushopt`/`_mm_clwb` intrinsics, hence CPUID and `asm!`.
    pub fn cpuid7_ebx_bit(bit: u32) -> bool {
        let max = __cpuid(0).eax;
        if max < 7 {
            return false;
        }
        let r = __cpuid_count(7, 0);
        r.ebx & (1 << bit) != 0
    }

    /// # Safety
    /// Lines mapped; CPU has clflushopt.
    #[inline]
    pub unsafe fn clflushopt_lines(start: usize, end: usize) {
        let mut a = start;
        while a < end {
            // SAFETY: mapped per caller; the CPU has CLFLUSHOPT (checked by the caller).
            unsafe { clflushopt_line(a) };
            a += LINE;
        }
        // SAFETY: sfence has no operands.
        unsafe { _mm_sfence() };
    }

    /// # Safety
    /// Lines mapped; CPU has clwb.
    #[inline]
    pub unsafe fn clwb_lines(start: usize, end: usize) {
        let mut a = start;
        while a < end {
            // SAFETY: mapped per caller; the CPU has CLWB (checked by the caller).
            unsafe { clwb_line(a) };
            a += LINE;
        }
        // SAFETY: sfence has no operands.
        unsafe { _mm_sfence() };
    }

    /// # Safety
    /// See `super::nt_fill`.
    #[inline]
    pub unsafe fn nt_fill(dst: *mut u8, len: usize, byte: u8) {
        let len = len.next_multiple_of(8);
        let w8 = i64::from_ne_bytes([byte; 8]);
        let mut off = 0;
        // SAFETY: (whole block) dst..dst+len writable and 8-aligned per caller.
        unsafe {
            while off < len && !(dst as usize + off).is_multiple_of(16) {
                _mm_stream_si64(dst.add(off) as *mut i64, w8);
                off += 8;
            }
            let v = _mm_set1_epi8(byte as i8);
            while off + 16 <= len {
                _mm_stream_si128(dst.add(off) as *mut __m128i, v);
                off += 16;
            }
            while off < len {
                _mm_stream_si64(dst.add(off) as *mut i64, w8);
                off += 8;
            }
        }
    }

    /// # Safety
    /// See `super::nt_copy`.
    #[inline]
    pub unsafe fn nt_copy(dst: *mut u8, src: *const u8, len: usize) {
        let mut off = 0;
        // SAFETY: (whole block) ranges valid per caller; unaligned loads, aligned stores.
        unsafe {
            while off < len && !(dst as usize + off).is_multiple_of(16) {
                *dst.add(off) = *src.add(off);
                off += 1;
            }
            while off + 16 <= len {
                let v = _mm_loadu_si128(src.add(off) as *const __m128i);
                _mm_stream_si128(dst.add(off) as *mut __m128i, v);
                off += 16;
            }
            while off < len {
                *dst.add(off) = *src.add(off);
                off += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nt_fill_and_copy_write_the_bytes() {
        let mut buf = vec![0u64; 64];
        let p = buf.as_mut_ptr() as *mut u8;
        // SAFETY: 512 B buffer, 8-aligned; 100 rounds up to 104.
        unsafe { nt_fill(p.add(8), 100, 0xab) };
        store_fence();
        // SAFETY: in bounds.
        let s = unsafe { std::slice::from_raw_parts(p, 512) };
        assert!(s[8..112].iter().all(|&b| b == 0xab));
        assert_eq!(s[7], 0);
        assert_eq!(s[112], 0);
        let src: Vec<u8> = (0..200u8).collect();
        // SAFETY: 200 B from offset 3 fits in 512 B; distinct buffers.
        unsafe { nt_copy(p.add(3), src.as_ptr(), 200) };
        store_fence();
        // SAFETY: in bounds.
        let s = unsafe { std::slice::from_raw_parts(p, 512) };
        assert_eq!(&s[3..203], &src[..]);
    }

    #[test]
    fn line_and_mmio_stores_write_exactly_their_bytes() {
        let mut buf = vec![0u64; 32]; // 256 B, 8-aligned
        let p = buf.as_mut_ptr() as *mut u8;
        let line = ((p as usize).next_multiple_of(64) - p as usize) + 64;
        // SAFETY: `line` is a 64-aligned offset with 64 bytes after it inside the buffer.
        unsafe { nt_store_64b(p.add(line), 0x3c) };
        store_fence();
        // SAFETY: 8-aligned offsets inside the buffer.
        unsafe {
            wc_store_64b(p, 0x0101_0101_0101_0101);
            store_8b_volatile(p.add(248), 0x0202_0202_0202_0202);
        }
        // SAFETY: in bounds.
        let s = unsafe { std::slice::from_raw_parts(p, 256) };
        assert!(s[..64].iter().all(|&b| b == 1), "wc_store_64b");
        assert!(
            s[line..line + 64].iter().all(|&b| b == 0x3c),
            "nt_store_64b"
        );
        assert!(s[248..].iter().all(|&b| b == 2), "store_8b_volatile");
        let untouched = (64..248).filter(|i| !(line..line + 64).contains(i));
        assert!(untouched.into_iter().all(|i| s[i] == 0), "wrote outside");
        for (m, f) in [
            (FlushMethod::Clflush, clflush_line as unsafe fn(*const u8)),
            (FlushMethod::ClflushoptSfence, clflushopt_line),
            (FlushMethod::ClwbSfence, clwb_line),
        ] {
            if m.available().is_ok() {
                // SAFETY: mapped line; the method is available.
                unsafe { f(p.add(line)) };
                store_fence();
                full_fence();
            }
        }
        // SAFETY: in bounds.
        let s = unsafe { std::slice::from_raw_parts(p, 256) };
        assert!(
            s[line..line + 64].iter().all(|&b| b == 0x3c),
            "flush kept data"
        );
    }

    #[test]
    fn the_methods_of_the_other_architecture_say_so() {
        for m in FlushMethod::EVERY {
            assert_eq!(FlushMethod::ALL.contains(&m), m.native(), "{m:?}");
            if !m.native() {
                let e = m.available().unwrap_err();
                assert!(
                    e.contains(std::env::consts::ARCH) && e.contains(m.name()),
                    "{e}"
                );
            }
        }
        match invalidate_method() {
            Ok(m) => assert!(m.native() && m != FlushMethod::NtStoreSfence, "{m:?}"),
            Err(why) => crate::testing::unavailable("a cache flush instruction", &why),
        }
        if cfg!(target_arch = "aarch64") {
            assert!(FlushMethod::NtStoreSfence.describe().contains("stnp"));
            assert!(FlushMethod::DcCvacDsb.describe().contains("dc cvac"));
        }
    }

    #[test]
    fn flushed_lines_keep_their_data() {
        let mut buf = vec![0u8; 4096 + 64];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = i as u8;
        }
        for m in FlushMethod::ALL {
            if m.available().is_ok() {
                // SAFETY: the buffer is mapped; the method is available.
                unsafe { flush_range(m, buf.as_ptr().wrapping_add(3), 4096) };
                // SAFETY: as above.
                unsafe { invalidate_range(m, buf.as_ptr(), 64) };
            }
        }
        assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
    }

    #[test]
    fn every_method_either_runs_or_says_why_not() {
        let buf = vec![1u8; 4096];
        for m in FlushMethod::ALL {
            match m.available() {
                // SAFETY: the buffer is mapped; the method is available.
                Ok(()) => unsafe { flush_range(m, buf.as_ptr(), buf.len()) },
                Err(why) => assert!(!why.is_empty()),
            }
        }
        assert_eq!(buf.iter().map(|&b| b as usize).sum::<usize>(), 4096);
    }
}
