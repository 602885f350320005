//! The one home of cache-line and store primitives: flush (clflush, clflushopt, clwb, by
//! line or by range), fences (`sfence`, `mfence`), non-temporal stores (fill, copy, one
//! 64-byte line), volatile stores for uncached and write-combining mappings (MMIO), and
//! the runtime checks that say which of them this CPU has. The pool, flush and chase code,
//! the MMIO benchmark and the bandwidth kernels' fences all use these.
//!
//! Everything arch-specific sits behind `#[cfg(target_arch = "x86_64")]`; elsewhere every
//! method reports itself unavailable and the benchmarks skip with that reason.

/// Cache line size assumed by the pool layouts (bytes).
pub const LINE: usize = 64;

/// A way to make written data visible in memory (written back past the caches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlushMethod {
    /// `clflush` on every line (ordered by itself; no fence needed).
    Clflush,
    /// `clflushopt` on every line, then `sfence`.
    ClflushoptSfence,
    /// `clwb` on every line, then `sfence` (line may stay cached, clean).
    ClwbSfence,
    /// The data written with non-temporal stores (`movntdq`/`movnti`), then `sfence`.
    NtStoreSfence,
}

impl FlushMethod {
    /// Every method, in output order.
    pub const ALL: [FlushMethod; 4] = [
        FlushMethod::Clflush,
        FlushMethod::ClflushoptSfence,
        FlushMethod::ClwbSfence,
        FlushMethod::NtStoreSfence,
    ];

    /// Short name used in keys (`clflushopt`).
    pub fn name(self) -> &'static str {
        match self {
            FlushMethod::Clflush => "clflush",
            FlushMethod::ClflushoptSfence => "clflushopt",
            FlushMethod::ClwbSfence => "clwb",
            FlushMethod::NtStoreSfence => "ntstore",
        }
    }

    /// What the method does, in words.
    pub fn describe(self) -> &'static str {
        match self {
            FlushMethod::Clflush => "stores, then clflush on every line",
            FlushMethod::ClflushoptSfence => "stores, then clflushopt on every line, then sfence",
            FlushMethod::ClwbSfence => "stores, then clwb on every line, then sfence",
            FlushMethod::NtStoreSfence => {
                "non-temporal stores (movntdq, movnti for the tail; at least 8 B), then sfence"
            }
        }
    }

    /// `Ok` when this CPU has the method, else why not (CPUID bit named).
    pub fn available(self) -> Result<(), String> {
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
                FlushMethod::NtStoreSfence => (std::is_x86_feature_detected!("sse2"), "SSE2"),
            };
            if ok {
                Ok(())
            } else {
                Err(format!("this CPU does not report {what}"))
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Err(format!(
                "{} is an x86_64 instruction; this build is for {}",
                self.name(),
                std::env::consts::ARCH
            ))
        }
    }
}

/// The best available invalidation for readers of non-coherent memory (clflushopt, else
/// clflush), or why none exists.
pub fn invalidate_method() -> Result<FlushMethod, String> {
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
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (m, ptr, len);
    }
}

/// Invalidates `[ptr, ptr+len)` before reading data another agent wrote without
/// coherence: `mfence`, then clflushopt (or clflush) on every line, then `mfence`.
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

/// `sfence` (a compiler fence elsewhere).
#[inline(always)]
pub fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no memory operands; SSE is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// `mfence` (a SeqCst fence elsewhere).
#[inline(always)]
pub fn full_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: mfence has no memory operands; SSE2 is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_mfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
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
/// plain stores elsewhere). No fence: follow it with [`store_fence`].
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
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        std::ptr::write_bytes(dst, byte, LINE)
    };
}

/// Fills `len` bytes at `dst` with `byte` using non-temporal stores (16 B `movntdq`
/// where aligned, 8 B `movnti` otherwise; the length is rounded up to 8 B). Does not
/// fence.
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
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        std::ptr::write_bytes(dst, byte, len.next_multiple_of(8))
    };
}

/// Copies `len` bytes with non-temporal stores where possible (see [`nt_fill`]): the
/// destination 16-byte aligned part uses `movntdq`, the rest plain stores. No fence.
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
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded caller guarantee.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}

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
