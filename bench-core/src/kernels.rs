//! Bandwidth kernels: read, write, non-temporal write, copy, non-temporal copy, memset.
//!
//! Each kernel exists per ISA (AVX-512, AVX2, SSE2 on x86_64, and a portable scalar
//! version), chosen at run time from what the CPU has ([`IsaSet::detect`]) or forced
//! (`--isa`). The vector loops are unrolled four vectors deep; reads fold every loaded
//! vector into accumulators that are returned, so the compiler can neither drop nor fuse
//! the loads; stores go through intrinsics (`storeu`/`stream`), never through `memcpy`.
//! Non-temporal stores need aligned destinations: a scalar head runs up to the vector
//! alignment, a scalar tail finishes odd sizes, and every NT kernel ends with `sfence`
//! ([`store_fence`](crate::cacheline::store_fence), the one home of
//! fence and flush primitives; the loops themselves are kernels, not primitives).
//! `memset` is the C library's (`ptr::write_bytes`), as tinymembench and mbw measure it.

use std::fmt;

/// An instruction set the kernels are written for (also the `--isa` values, narrowest
/// first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Isa {
    /// Portable 8-byte words, any architecture.
    Scalar,
    /// x86_64 SSE2 (16-byte vectors).
    Sse2,
    /// x86_64 AVX2 (32-byte vectors).
    Avx2,
    /// x86_64 AVX-512F (64-byte vectors).
    Avx512,
}

impl Isa {
    /// Vector width in bytes.
    pub fn width_bytes(self) -> usize {
        match self {
            Isa::Scalar => 8,
            Isa::Sse2 => 16,
            Isa::Avx2 => 32,
            Isa::Avx512 => 64,
        }
    }

    /// Name as given to `--isa` and recorded in the output.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Parses an `--isa` value.
    pub fn parse(s: &str) -> Option<Isa> {
        [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .find(|i| i.name() == s)
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The ISAs available (detected, or masked for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsaSet {
    /// AVX-512F usable.
    pub avx512: bool,
    /// AVX2 usable.
    pub avx2: bool,
    /// SSE2 usable.
    pub sse2: bool,
}

/// An ISA was forced that the CPU lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the CPU does not support {forced} (available: {available})")]
pub struct IsaError {
    /// The ISA asked for.
    pub forced: Isa,
    /// What the CPU has.
    pub available: String,
}

impl IsaSet {
    /// What this CPU supports (the OS must also enable the registers, which
    /// `is_x86_feature_detected!` checks).
    pub fn detect() -> IsaSet {
        #[cfg(target_arch = "x86_64")]
        {
            IsaSet {
                avx512: std::arch::is_x86_feature_detected!("avx512f"),
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                sse2: std::arch::is_x86_feature_detected!("sse2"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            IsaSet {
                avx512: false,
                avx2: false,
                sse2: false,
            }
        }
    }

    /// Whether `isa` is usable.
    pub fn has(self, isa: Isa) -> bool {
        match isa {
            Isa::Scalar => true,
            Isa::Sse2 => self.sse2,
            Isa::Avx2 => self.avx2,
            Isa::Avx512 => self.avx512,
        }
    }

    /// The widest usable ISA, or the forced one if usable.
    pub fn choose(self, forced: Option<Isa>) -> Result<Isa, IsaError> {
        match forced {
            Some(i) if self.has(i) => Ok(i),
            Some(i) => Err(IsaError {
                forced: i,
                available: self.list().join(", "),
            }),
            None => Ok([Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar]
                .into_iter()
                .find(|&i| self.has(i))
                .unwrap_or(Isa::Scalar)),
        }
    }

    /// Usable ISAs, widest first.
    pub fn list(self) -> Vec<&'static str> {
        [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar]
            .into_iter()
            .filter(|&i| self.has(i))
            .map(Isa::name)
            .collect()
    }
}

/// A bandwidth kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Kernel {
    /// Loads.
    Read,
    /// Stores.
    Write,
    /// Non-temporal (streaming) stores + sfence.
    NtWrite,
    /// Loads + stores.
    Copy,
    /// Loads + non-temporal stores + sfence.
    NtCopy,
    /// The C library's memset.
    Memset,
}

impl Kernel {
    /// All kernels.
    pub const ALL: [Kernel; 6] = [
        Kernel::Read,
        Kernel::Write,
        Kernel::NtWrite,
        Kernel::Copy,
        Kernel::NtCopy,
        Kernel::Memset,
    ];

    /// Name in ids and `--kernel`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::NtWrite => "nt-write",
            Kernel::Copy => "copy",
            Kernel::NtCopy => "nt-copy",
            Kernel::Memset => "memset",
        }
    }

    /// Whether the kernel reads a source and writes a destination (each half the footprint).
    pub fn is_copy(self) -> bool {
        matches!(self, Kernel::Copy | Kernel::NtCopy)
    }
}

/// Runs `kernel` with `isa` over `buf` (the whole buffer for read/write/memset; the first
/// half is copied onto the second for copies). Returns a value derived from what was read
/// (feed it to `black_box`). `isa` must be usable ([`IsaSet::has`]).
pub fn run(kernel: Kernel, isa: Isa, buf: &mut [u8], val: u8) -> u64 {
    match kernel {
        Kernel::Memset => {
            // SAFETY: the pointer and length come from a valid mutable slice.
            unsafe { std::ptr::write_bytes(buf.as_mut_ptr(), val, buf.len()) };
            std::hint::black_box(buf.as_ptr());
            0
        }
        Kernel::Copy | Kernel::NtCopy => {
            let half = buf.len() / 2;
            let (src, dst) = buf.split_at_mut(half);
            copy(isa, kernel == Kernel::NtCopy, &mut dst[..half], src);
            0
        }
        Kernel::Read => read(isa, buf),
        Kernel::Write => write(isa, false, buf, val),
        Kernel::NtWrite => write(isa, true, buf, val),
    }
}

/// Loads every byte of `buf`; returns the xor of all 8-byte words (tail bytes included).
pub fn read(isa: Isa, buf: &[u8]) -> u64 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller chose a usable ISA (checked by IsaSet); the slice is valid.
        Isa::Avx512 => unsafe { x86::avx512::read(buf) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { x86::avx2::read(buf) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Sse2 => unsafe { x86::sse2::read(buf) },
        _ => scalar::read(buf),
    }
}

/// Stores `val` into every byte of `buf` (non-temporal stores + sfence when `nt`).
pub fn write(isa: Isa, nt: bool, buf: &mut [u8], val: u8) -> u64 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller chose a usable ISA; the slice is valid and exclusive.
        Isa::Avx512 => unsafe { x86::avx512::write(buf, val, nt) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { x86::avx2::write(buf, val, nt) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Sse2 => unsafe { x86::sse2::write(buf, val, nt) },
        _ => scalar::write(buf, val),
    }
    0
}

/// Copies `src` onto `dst` (same length; non-temporal stores + sfence when `nt`).
pub fn copy(isa: Isa, nt: bool, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller chose a usable ISA; the slices are valid, equal and disjoint.
        Isa::Avx512 => unsafe { x86::avx512::copy(dst, src, nt) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { x86::avx2::copy(dst, src, nt) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Sse2 => unsafe { x86::sse2::copy(dst, src, nt) },
        _ => scalar::copy(dst, src),
    }
}

mod scalar {
    /// Xor of all 8-byte words, tail bytes folded in.
    pub fn read(buf: &[u8]) -> u64 {
        let mut acc = [0u64; 4];
        let mut chunks = buf.chunks_exact(32);
        for c in &mut chunks {
            for (k, a) in acc.iter_mut().enumerate() {
                *a ^= u64::from_ne_bytes(c[k * 8..k * 8 + 8].try_into().unwrap());
            }
        }
        let mut r = acc[0] ^ acc[1] ^ acc[2] ^ acc[3];
        for (i, b) in chunks.remainder().iter().enumerate() {
            r ^= (*b as u64) << ((i % 8) * 8);
        }
        std::hint::black_box(r)
    }

    pub fn write(buf: &mut [u8], val: u8) {
        let w = u64::from_ne_bytes([val; 8]);
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            // SAFETY: c is 8 bytes; write_volatile keeps the stores from being merged into
            // a memset call (we measure the store loop, not libc).
            unsafe { std::ptr::write_volatile(c.as_mut_ptr() as *mut [u8; 8], w.to_ne_bytes()) };
        }
        for b in chunks.into_remainder() {
            *b = val;
        }
    }

    pub fn copy(dst: &mut [u8], src: &[u8]) {
        let mut d = dst.chunks_exact_mut(8);
        let mut s = src.chunks_exact(8);
        for (dc, sc) in (&mut d).zip(&mut s) {
            let v: [u8; 8] = sc.try_into().unwrap();
            // SAFETY: dc is 8 bytes; volatile keeps the loop from becoming memcpy.
            unsafe { std::ptr::write_volatile(dc.as_mut_ptr() as *mut [u8; 8], v) };
        }
        for (db, sb) in d.into_remainder().iter_mut().zip(s.remainder()) {
            *db = *sb;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// Generates one ISA's kernels from its intrinsics.
    macro_rules! isa_kernels {
        ($m:ident, $feat:literal, $vt:ty, $w:expr, $loadu:ident, $storeu:ident, $stream:ident, $xor:ident, $set1:ident, $zero:ident) => {
            pub mod $m {
                use core::arch::x86_64::*;
                const W: usize = $w;

                /// Xor of all loaded data (vectors, then the scalar tail).
                #[target_feature(enable = $feat)]
                pub unsafe fn read(buf: &[u8]) -> u64 {
                    let p = buf.as_ptr();
                    let n = buf.len() / (4 * W) * (4 * W);
                    let (mut a0, mut a1, mut a2, mut a3) = ($zero(), $zero(), $zero(), $zero());
                    let mut i = 0;
                    while i < n {
                        // SAFETY: i + 4W <= n <= len; unaligned loads.
                        unsafe {
                            a0 = $xor(a0, $loadu(p.add(i) as *const _));
                            a1 = $xor(a1, $loadu(p.add(i + W) as *const _));
                            a2 = $xor(a2, $loadu(p.add(i + 2 * W) as *const _));
                            a3 = $xor(a3, $loadu(p.add(i + 3 * W) as *const _));
                        }
                        i += 4 * W;
                    }
                    let acc = $xor($xor(a0, a1), $xor(a2, a3));
                    let mut words = [0u64; W / 8];
                    // SAFETY: `words` has exactly W bytes.
                    unsafe { $storeu(words.as_mut_ptr() as *mut _, acc) };
                    let mut r = words.iter().fold(0u64, |x, y| x ^ y);
                    r ^= super::super::scalar::read(&buf[n..]);
                    r
                }

                /// Fills `buf` with `val`; streaming stores + sfence when `nt`.
                #[target_feature(enable = $feat)]
                pub unsafe fn write(buf: &mut [u8], val: u8, nt: bool) {
                    let v = $set1(val as i8);
                    let len = buf.len();
                    let p = buf.as_mut_ptr();
                    // Head up to vector alignment (needed by streaming stores).
                    let head = ((W - (p as usize % W)) % W).min(len);
                    for k in 0..head {
                        // SAFETY: k < head <= len.
                        unsafe { *p.add(k) = val };
                    }
                    let body = (len - head) / (4 * W) * (4 * W);
                    let mut i = head;
                    while i < head + body {
                        // SAFETY: i + 4W <= head + body <= len; p+i is W-aligned.
                        unsafe {
                            if nt {
                                $stream(p.add(i) as *mut _, v);
                                $stream(p.add(i + W) as *mut _, v);
                                $stream(p.add(i + 2 * W) as *mut _, v);
                                $stream(p.add(i + 3 * W) as *mut _, v);
                            } else {
                                $storeu(p.add(i) as *mut _, v);
                                $storeu(p.add(i + W) as *mut _, v);
                                $storeu(p.add(i + 2 * W) as *mut _, v);
                                $storeu(p.add(i + 3 * W) as *mut _, v);
                            }
                        }
                        i += 4 * W;
                    }
                    for k in head + body..len {
                        // SAFETY: k < len.
                        unsafe { *p.add(k) = val };
                    }
                    if nt {
                        crate::cacheline::store_fence();
                    }
                }

                /// Copies `src` onto `dst` (same length, disjoint); streaming stores +
                /// sfence when `nt`.
                #[target_feature(enable = $feat)]
                pub unsafe fn copy(dst: &mut [u8], src: &[u8], nt: bool) {
                    let len = dst.len();
                    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
                    let head = ((W - (d as usize % W)) % W).min(len);
                    for k in 0..head {
                        // SAFETY: k < head <= len for both slices.
                        unsafe { *d.add(k) = *s.add(k) };
                    }
                    let body = (len - head) / (4 * W) * (4 * W);
                    let mut i = head;
                    while i < head + body {
                        // SAFETY: i + 4W <= len; d+i is W-aligned; loads are unaligned.
                        unsafe {
                            let x0 = $loadu(s.add(i) as *const _);
                            let x1 = $loadu(s.add(i + W) as *const _);
                            let x2 = $loadu(s.add(i + 2 * W) as *const _);
                            let x3 = $loadu(s.add(i + 3 * W) as *const _);
                            if nt {
                                $stream(d.add(i) as *mut _, x0);
                                $stream(d.add(i + W) as *mut _, x1);
                                $stream(d.add(i + 2 * W) as *mut _, x2);
                                $stream(d.add(i + 3 * W) as *mut _, x3);
                            } else {
                                $storeu(d.add(i) as *mut _, x0);
                                $storeu(d.add(i + W) as *mut _, x1);
                                $storeu(d.add(i + 2 * W) as *mut _, x2);
                                $storeu(d.add(i + 3 * W) as *mut _, x3);
                            }
                        }
                        i += 4 * W;
                    }
                    for k in head + body..len {
                        // SAFETY: k < len.
                        unsafe { *d.add(k) = *s.add(k) };
                    }
                    if nt {
                        crate::cacheline::store_fence();
                    }
                }

                #[allow(dead_code)]
                type V = $vt;
            }
        };
    }

    isa_kernels!(
        avx512,
        "avx512f",
        __m512i,
        64,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_stream_si512,
        _mm512_xor_si512,
        _mm512_set1_epi8,
        _mm512_setzero_si512
    );
    isa_kernels!(
        avx2,
        "avx2",
        __m256i,
        32,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_stream_si256,
        _mm256_xor_si256,
        _mm256_set1_epi8,
        _mm256_setzero_si256
    );
    isa_kernels!(
        sse2,
        "sse2",
        __m128i,
        16,
        _mm_loadu_si128,
        _mm_storeu_si128,
        _mm_stream_si128,
        _mm_xor_si128,
        _mm_set1_epi8,
        _mm_setzero_si128
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usable() -> Vec<Isa> {
        let set = IsaSet::detect();
        [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|&i| set.has(i))
            .collect()
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    const SIZES: [usize; 9] = [0, 1, 7, 63, 64, 65, 255, 1000, 4099];

    #[test]
    fn copies_move_every_byte_on_odd_sizes_and_misaligned_ends() {
        for isa in usable() {
            for nt in [false, true] {
                for &n in &SIZES {
                    for off in [0usize, 1, 13] {
                        let src = pattern(n + off);
                        let mut dst = vec![0xAAu8; n + off + 3];
                        copy(isa, nt, &mut dst[off..off + n], &src[off..off + n]);
                        assert_eq!(
                            &dst[off..off + n],
                            &src[off..off + n],
                            "{isa} nt={nt} n={n} off={off}"
                        );
                        assert!(
                            dst[..off].iter().all(|&b| b == 0xAA),
                            "wrote before the start"
                        );
                        assert!(
                            dst[off + n..].iter().all(|&b| b == 0xAA),
                            "wrote past the end"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn writes_and_memset_fill_exactly() {
        for isa in usable() {
            for kernel in [Kernel::Write, Kernel::NtWrite, Kernel::Memset] {
                for &n in &SIZES {
                    let mut buf = vec![0u8; n + 9];
                    run(kernel, isa, &mut buf[5..5 + n], 0x5C);
                    assert!(
                        buf[5..5 + n].iter().all(|&b| b == 0x5C),
                        "{isa} {kernel:?} n={n}"
                    );
                    assert!(buf[..5].iter().chain(&buf[5 + n..]).all(|&b| b == 0));
                }
            }
        }
    }

    #[test]
    fn reads_see_every_byte() {
        for isa in usable() {
            for &n in &SIZES[1..] {
                let mut buf = pattern(n + 3);
                let b = &mut buf[3..];
                let base = read(isa, b);
                // Flipping any single byte changes the result: every byte was loaded.
                for pos in [0, n / 2, n - 1] {
                    b[pos] ^= 0x10;
                    assert_ne!(read(isa, b), base, "{isa} n={n} pos={pos}");
                    b[pos] ^= 0x10;
                }
                assert_eq!(read(isa, b), base);
            }
        }
    }

    #[test]
    fn run_copy_uses_the_two_halves() {
        let mut buf = pattern(256);
        let want = buf[..128].to_vec();
        run(
            Kernel::NtCopy,
            IsaSet::detect().choose(None).unwrap(),
            &mut buf,
            0,
        );
        assert_eq!(&buf[128..], &want[..]);
    }

    #[test]
    fn dispatch_falls_back_when_features_are_masked() {
        let all = IsaSet {
            avx512: true,
            avx2: true,
            sse2: true,
        };
        assert_eq!(all.choose(None).unwrap(), Isa::Avx512);
        let no512 = IsaSet {
            avx512: false,
            ..all
        };
        assert_eq!(no512.choose(None).unwrap(), Isa::Avx2);
        let sse = IsaSet {
            avx512: false,
            avx2: false,
            sse2: true,
        };
        assert_eq!(sse.choose(None).unwrap(), Isa::Sse2);
        let none = IsaSet {
            avx512: false,
            avx2: false,
            sse2: false,
        };
        assert_eq!(none.choose(None).unwrap(), Isa::Scalar);
        let e = sse.choose(Some(Isa::Avx512)).unwrap_err().to_string();
        assert_eq!(
            e,
            "the CPU does not support avx512 (available: sse2, scalar)"
        );
        assert_eq!(all.choose(Some(Isa::Sse2)).unwrap(), Isa::Sse2);
        assert_eq!(Isa::parse("avx2"), Some(Isa::Avx2));
        assert_eq!(Isa::parse("neon"), None);
    }
}
