//! Bandwidth kernels: read, write, non-temporal write, copy, non-temporal copy, memset,
//! and (AArch64) `dc zva` zeroing.
//!
//! Each kernel exists per ISA (AVX-512, AVX2, SSE2 on x86_64; SVE and NEON on AArch64;
//! and a scalar version), chosen at run time from what the CPU has ([`IsaSet::detect`])
//! or forced (`--isa`). The vector loops are unrolled four vectors deep; reads fold every
//! loaded vector into accumulators that are returned, so the compiler can neither drop
//! nor fuse the loads; stores go through intrinsics or `asm!` (`storeu`/`stream`,
//! `stp`/`stnp`, `st1b`/`stnt1b`), never through `memcpy`.
//! Non-temporal stores need aligned destinations: a scalar head runs up to the vector
//! alignment, a scalar tail finishes odd sizes, and every NT kernel ends with `sfence`
//! (`dsb st` on AArch64: [`store_fence`](crate::cacheline::store_fence), the one home of
//! fence and flush primitives; the loops themselves are kernels, not primitives).
//! [`Isa::nt_store`] names the non-temporal store of each ISA: on AArch64 `stnp` and SVE's
//! `stnt1b` are hints a core may ignore, and where an ISA has none the NT kernels are
//! refused ([`supported`]), never run as plain stores. `zva-write` zeroes with `dc zva`
//! (whole blocks of DCZID_EL0's size, no read for ownership) where DCZID_EL0 allows it.
//! `memset` is the C library's (`ptr::write_bytes`), as tinymembench and mbw measure it.

use std::fmt;

/// An instruction set the kernels are written for (also the `--isa` values; x86_64's
/// narrowest first, then AArch64's).
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
    /// AArch64 Advanced SIMD (NEON, 16-byte vectors).
    Neon,
    /// AArch64 SVE (vectors of the CPU's length, 16 to 256 bytes, read at run time).
    Sve,
}

impl Isa {
    /// Every ISA, in `--isa` order.
    pub const ALL: [Isa; 6] = [
        Isa::Scalar,
        Isa::Sse2,
        Isa::Avx2,
        Isa::Avx512,
        Isa::Neon,
        Isa::Sve,
    ];

    /// Preference order of [`IsaSet::choose`]: widest first.
    const PREFERENCE: [Isa; 6] = [
        Isa::Avx512,
        Isa::Avx2,
        Isa::Sse2,
        Isa::Sve,
        Isa::Neon,
        Isa::Scalar,
    ];

    /// Vector width in bytes (SVE: this CPU's vector length; 0 where it has no SVE).
    pub fn width_bytes(self) -> usize {
        match self {
            Isa::Scalar => 8,
            Isa::Sse2 | Isa::Neon => 16,
            Isa::Avx2 => 32,
            Isa::Avx512 => 64,
            Isa::Sve => sve_vector_bytes().unwrap_or(0),
        }
    }

    /// The non-temporal store of this ISA's kernels, or why it has none (the NT kernels
    /// are then refused: never plain stores under an NT name).
    pub fn nt_store(self) -> Result<String, String> {
        Ok(match self {
            Isa::Scalar if cfg!(target_arch = "x86_64") => "movnti (8 B)".into(),
            Isa::Scalar if cfg!(target_arch = "aarch64") => {
                "stnp of x-register pairs (16 B; a non-temporal hint the core may ignore)".into()
            }
            Isa::Scalar => {
                return Err(format!(
                    "the scalar kernels have no non-temporal store on {}",
                    std::env::consts::ARCH
                ))
            }
            Isa::Sse2 => "movntdq (16 B)".into(),
            Isa::Avx2 => "vmovntdq (32 B)".into(),
            Isa::Avx512 => "vmovntdq (64 B)".into(),
            Isa::Neon => {
                "stnp of q-register pairs (32 B; a non-temporal hint the core may ignore)".into()
            }
            Isa::Sve => format!(
                "stnt1b ({} B vectors; a non-temporal hint the core may ignore)",
                self.width_bytes()
            ),
        })
    }

    /// The plain store of this ISA's write and copy kernels.
    pub fn store(self) -> String {
        match self {
            Isa::Scalar => "8-byte volatile stores".into(),
            Isa::Sse2 => "movdqu (16 B)".into(),
            Isa::Avx2 => "vmovdqu (32 B)".into(),
            Isa::Avx512 => "vmovdqu64 (64 B)".into(),
            Isa::Neon => "stp of q-register pairs (32 B)".into(),
            Isa::Sve => format!("st1b ({} B vectors)", self.width_bytes()),
        }
    }

    /// Name as given to `--isa` and recorded in the output.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
            Isa::Sve => "sve",
        }
    }

    /// Parses an `--isa` value.
    pub fn parse(s: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == s)
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
    /// AArch64 Advanced SIMD (NEON) usable.
    pub neon: bool,
    /// AArch64 SVE usable.
    pub sve: bool,
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
    /// No vector ISA: the scalar kernels only.
    pub const NONE: IsaSet = IsaSet {
        avx512: false,
        avx2: false,
        sse2: false,
        neon: false,
        sve: false,
    };

    /// What this CPU supports (the OS must also enable the registers, which
    /// `is_x86_feature_detected!` / `is_aarch64_feature_detected!` check).
    pub fn detect() -> IsaSet {
        #[cfg(target_arch = "x86_64")]
        {
            IsaSet {
                avx512: std::arch::is_x86_feature_detected!("avx512f"),
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                sse2: std::arch::is_x86_feature_detected!("sse2"),
                ..IsaSet::NONE
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            IsaSet {
                neon: std::arch::is_aarch64_feature_detected!("neon"),
                sve: std::arch::is_aarch64_feature_detected!("sve"),
                ..IsaSet::NONE
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            IsaSet::NONE
        }
    }

    /// Whether `isa` is usable.
    pub fn has(self, isa: Isa) -> bool {
        match isa {
            Isa::Scalar => true,
            Isa::Sse2 => self.sse2,
            Isa::Avx2 => self.avx2,
            Isa::Avx512 => self.avx512,
            Isa::Neon => self.neon,
            Isa::Sve => self.sve,
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
            None => Ok(Isa::PREFERENCE
                .into_iter()
                .find(|&i| self.has(i))
                .unwrap_or(Isa::Scalar)),
        }
    }

    /// Usable ISAs, widest first.
    pub fn list(self) -> Vec<&'static str> {
        Isa::PREFERENCE
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
    /// Zeroing whole blocks with AArch64 `dc zva` (no read for ownership; block size
    /// from DCZID_EL0), plain stores for an unaligned head and the tail.
    ZvaWrite,
}

impl Kernel {
    /// The kernels every architecture has (the default of `mem bandwidth` on x86_64).
    pub const ALL: [Kernel; 6] = [
        Kernel::Read,
        Kernel::Write,
        Kernel::NtWrite,
        Kernel::Copy,
        Kernel::NtCopy,
        Kernel::Memset,
    ];

    /// The default kernels of this architecture: [`Kernel::ALL`], and `zva-write` on
    /// AArch64 (where DCZID_EL0 prohibits it, its run is skipped with that reason).
    pub fn defaults() -> Vec<Kernel> {
        let mut v = Kernel::ALL.to_vec();
        if cfg!(target_arch = "aarch64") {
            v.push(Kernel::ZvaWrite);
        }
        v
    }

    /// Name in ids and `--kernel`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::NtWrite => "nt-write",
            Kernel::Copy => "copy",
            Kernel::NtCopy => "nt-copy",
            Kernel::Memset => "memset",
            Kernel::ZvaWrite => "zva-write",
        }
    }

    /// Whether the kernel's stores are non-temporal.
    pub fn is_nt(self) -> bool {
        matches!(self, Kernel::NtWrite | Kernel::NtCopy)
    }

    /// Whether the kernel reads a source and writes a destination (each half the footprint).
    pub fn is_copy(self) -> bool {
        matches!(self, Kernel::Copy | Kernel::NtCopy)
    }
}

/// `Ok` when `kernel` can run with `isa` on this CPU, else why not, as a skip reason: a
/// non-temporal kernel needs the ISA's non-temporal store ([`Isa::nt_store`]),
/// `zva-write` needs `dc zva` allowed at EL0 ([`zva_block_bytes`]).
pub fn supported(kernel: Kernel, isa: Isa) -> Result<(), String> {
    match kernel {
        Kernel::NtWrite | Kernel::NtCopy => isa.nt_store().map(|_| ()),
        Kernel::ZvaWrite => zva_block_bytes().map(|_| ()),
        _ => Ok(()),
    }
}

/// `isa` when it has a non-temporal store, else why not: for the families that stream
/// with non-temporal stores (a skip there, never plain stores under an NT name).
pub fn with_nt_store(isa: Isa) -> Result<Isa, String> {
    isa.nt_store().map(|_| isa)
}

/// The store instruction `kernel` issues with `isa`, as recorded with its measurements.
pub fn store_instruction(kernel: Kernel, isa: Isa) -> String {
    match kernel {
        Kernel::Read => "none (loads only)".into(),
        Kernel::NtWrite | Kernel::NtCopy => {
            isa.nt_store().unwrap_or_else(|why| format!("none: {why}"))
        }
        Kernel::Memset => "the C library's memset".into(),
        Kernel::ZvaWrite => match zva_block_bytes() {
            Ok(b) => format!("dc zva ({b} B blocks, zeroes; plain stores for head and tail)"),
            Err(why) => format!("none: {why}"),
        },
        Kernel::Write | Kernel::Copy => isa.store(),
    }
}

/// The SVE vector length of this CPU in bytes, or `None` without SVE.
pub fn sve_vector_bytes() -> Option<usize> {
    #[cfg(target_arch = "aarch64")]
    {
        arm::sve_vector_bytes()
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        None
    }
}

/// The block `dc zva` zeroes (DCZID_EL0.BS), or why it cannot be used: not AArch64, or
/// DCZID_EL0.DZP set (the kernel or hypervisor prohibits it at EL0).
pub fn zva_block_bytes() -> Result<usize, String> {
    #[cfg(target_arch = "aarch64")]
    {
        arm::zva_block_bytes()
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        Err(format!(
            "dc zva is an AArch64 instruction; this build is for {}",
            std::env::consts::ARCH
        ))
    }
}

/// Runs `kernel` with `isa` over `buf` (the whole buffer for read/write/memset/zva-write;
/// the first half is copied onto the second for copies). Returns a value derived from what
/// was read (feed it to `black_box`). `isa` must be usable ([`IsaSet::has`]) and the
/// kernel supported ([`supported`]); `zva-write` writes zeros whatever `val` is.
pub fn run(kernel: Kernel, isa: Isa, buf: &mut [u8], val: u8) -> u64 {
    match kernel {
        Kernel::ZvaWrite => {
            zva_write(buf);
            0
        }
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

/// Zeroes `buf` with `dc zva` on every whole block (plain stores for the unaligned head
/// and the tail). [`zva_block_bytes`] must be `Ok`.
pub fn zva_write(buf: &mut [u8]) {
    #[cfg(target_arch = "aarch64")]
    {
        let block = zva_block_bytes().expect("dc zva checked available by the caller");
        // SAFETY: the slice is valid and exclusive; DCZID_EL0 allows dc zva.
        unsafe { arm::zva::write(buf, block) }
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        let _ = buf;
        panic!("{}", zva_block_bytes().unwrap_err());
    }
}

/// Loads every byte of `buf`; returns the xor of all 8-byte words (tail bytes included).
pub fn read(isa: Isa, buf: &[u8]) -> u64 {
    match isa {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: the caller chose a usable ISA (checked by IsaSet); the slice is valid.
        Isa::Sve => unsafe { arm::sve::read(buf) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above.
        Isa::Neon => unsafe { arm::neon::read(buf) },
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

/// Stores `val` into every byte of `buf` (non-temporal stores + sfence when `nt`; the
/// ISA must have one: [`Isa::nt_store`]).
pub fn write(isa: Isa, nt: bool, buf: &mut [u8], val: u8) -> u64 {
    assert!(
        !nt || isa.nt_store().is_ok(),
        "{isa} has no non-temporal store"
    );
    match isa {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: the caller chose a usable ISA; the slice is valid and exclusive.
        Isa::Sve => unsafe { arm::sve::write(buf, val, nt) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above.
        Isa::Neon => unsafe { arm::neon::write(buf, val, nt) },
        #[cfg(target_arch = "aarch64")]
        Isa::Scalar if nt => arm::scalar_nt::write(buf, val),
        #[cfg(target_arch = "x86_64")]
        Isa::Scalar if nt => x86::scalar_nt::write(buf, val),
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

/// Copies `src` onto `dst` (same length; non-temporal stores + sfence when `nt`; the ISA
/// must have one: [`Isa::nt_store`]).
pub fn copy(isa: Isa, nt: bool, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    assert!(
        !nt || isa.nt_store().is_ok(),
        "{isa} has no non-temporal store"
    );
    match isa {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: the caller chose a usable ISA; the slices are valid, equal and disjoint.
        Isa::Sve => unsafe { arm::sve::copy(dst, src, nt) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above.
        Isa::Neon => unsafe { arm::neon::copy(dst, src, nt) },
        #[cfg(target_arch = "aarch64")]
        Isa::Scalar if nt => arm::scalar_nt::copy(dst, src),
        #[cfg(target_arch = "x86_64")]
        Isa::Scalar if nt => x86::scalar_nt::copy(dst, src),
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

#[cfg(target_arch = "aarch64")]
mod arm;

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
    /// The scalar kernels' non-temporal stores: `movnti` of 8-byte words (plain stores
    /// for an unaligned head and the tail), then `sfence`.
    pub mod scalar_nt {
        use core::arch::x86_64::_mm_stream_si64;

        pub fn write(buf: &mut [u8], val: u8) {
            let w = i64::from_ne_bytes([val; 8]);
            let p = buf.as_mut_ptr();
            let len = buf.len();
            let head = ((8 - (p as usize % 8)) % 8).min(len);
            let body = (len - head) / 8 * 8;
            for k in (0..head).chain(head + body..len) {
                // SAFETY: k < len.
                unsafe { *p.add(k) = val };
            }
            let mut i = head;
            while i < head + body {
                // SAFETY: i + 8 <= len; p + i is 8-aligned; movnti is SSE2 (baseline).
                unsafe { _mm_stream_si64(p.add(i) as *mut i64, w) };
                i += 8;
            }
            crate::cacheline::store_fence();
        }

        pub fn copy(dst: &mut [u8], src: &[u8]) {
            let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
            let len = dst.len();
            let head = ((8 - (d as usize % 8)) % 8).min(len);
            let body = (len - head) / 8 * 8;
            for k in (0..head).chain(head + body..len) {
                // SAFETY: k < len for both slices.
                unsafe { *d.add(k) = *s.add(k) };
            }
            let mut i = head;
            while i < head + body {
                // SAFETY: i + 8 <= len; d + i is 8-aligned; the load is unaligned.
                unsafe {
                    let w = (s.add(i) as *const i64).read_unaligned();
                    _mm_stream_si64(d.add(i) as *mut i64, w)
                };
                i += 8;
            }
            crate::cacheline::store_fence();
        }
    }

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
mod tests;
