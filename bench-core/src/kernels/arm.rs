//! AArch64 kernels: NEON (`ldp`/`stp`/`stnp` of q registers), SVE (`ld1b`/`st1b`/
//! `stnt1b`, four vectors of the CPU's length per step), the scalar kernels'
//! non-temporal stores (`stnp` of x registers), and `dc zva` zeroing.
//!
//! The store loops are `asm!`, so that the plain and the non-temporal kernel differ in
//! exactly one instruction (`stp` vs `stnp`, `st1b` vs `stnt1b`) and the compiler cannot
//! turn a store loop into `memset`. Every non-temporal kernel ends with `dsb st`
//! ([`crate::cacheline::store_fence`]).

use std::sync::OnceLock;

/// The SVE vector length in bytes (`cntb`), read once; `None` without SVE.
pub fn sve_vector_bytes() -> Option<usize> {
    static VL: OnceLock<Option<usize>> = OnceLock::new();
    *VL.get_or_init(|| {
        if std::arch::is_aarch64_feature_detected!("sve") {
            // SAFETY: the CPU has SVE (just checked).
            Some(unsafe { sve::cntb() })
        } else {
            None
        }
    })
}

/// The `dc zva` block from DCZID_EL0 (4 << BS bytes), or why it is not allowed (DZP).
pub fn zva_block_bytes() -> Result<usize, String> {
    let id: u64;
    // SAFETY: DCZID_EL0 is readable at EL0 on every AArch64 CPU; writes one register.
    unsafe {
        core::arch::asm!("mrs {0}, dczid_el0", out(reg) id, options(nomem, nostack, preserves_flags))
    };
    if id & 0x10 != 0 {
        return Err(
            "dc zva is prohibited at EL0 here (DCZID_EL0.DZP = 1: the kernel or hypervisor disabled it)"
                .into(),
        );
    }
    Ok(4usize << (id & 0xf))
}

/// Plain bytes from `from` to `to` (head and tail of the vector kernels).
///
/// # Safety
/// `p + to` within the caller's slice.
#[inline(always)]
unsafe fn fill_bytes(p: *mut u8, from: usize, to: usize, val: u8) {
    for k in from..to {
        // SAFETY: k < to <= len per caller.
        unsafe { *p.add(k) = val };
    }
}

/// Plain byte copy from `from` to `to`.
///
/// # Safety
/// Both pointers valid up to `to`.
#[inline(always)]
unsafe fn copy_bytes(d: *mut u8, s: *const u8, from: usize, to: usize) {
    for k in from..to {
        // SAFETY: k < to <= len per caller.
        unsafe { *d.add(k) = *s.add(k) };
    }
}

/// Head (bytes up to `align`), body (whole `step`s) and tail of a buffer at `p`.
fn split(p: usize, len: usize, align: usize, step: usize) -> (usize, usize) {
    let head = ((align - p % align) % align).min(len);
    let body = (len - head) / step * step;
    (head, body)
}

pub mod neon {
    //! 16-byte vectors, 64 bytes per step.
    use core::arch::aarch64::*;

    /// Xor of all loaded data.
    ///
    /// # Safety
    /// NEON usable (baseline on AArch64 Linux).
    #[target_feature(enable = "neon")]
    pub unsafe fn read(buf: &[u8]) -> u64 {
        let p = buf.as_ptr();
        let n = buf.len() / 64 * 64;
        let (mut a0, mut a1, mut a2, mut a3) =
            (vdupq_n_u8(0), vdupq_n_u8(0), vdupq_n_u8(0), vdupq_n_u8(0));
        let mut i = 0;
        while i < n {
            // SAFETY: i + 64 <= n <= len; unaligned loads.
            unsafe {
                a0 = veorq_u8(a0, vld1q_u8(p.add(i)));
                a1 = veorq_u8(a1, vld1q_u8(p.add(i + 16)));
                a2 = veorq_u8(a2, vld1q_u8(p.add(i + 32)));
                a3 = veorq_u8(a3, vld1q_u8(p.add(i + 48)));
            }
            i += 64;
        }
        let acc = vreinterpretq_u64_u8(veorq_u8(veorq_u8(a0, a1), veorq_u8(a2, a3)));
        let r = vgetq_lane_u64::<0>(acc) ^ vgetq_lane_u64::<1>(acc);
        r ^ super::super::scalar::read(&buf[n..])
    }

    /// Fills `buf` with `val`: `stp` (or `stnp` + `dsb st` when `nt`) of q-register
    /// pairs from 16-byte alignment on.
    ///
    /// # Safety
    /// NEON usable; `buf` exclusive.
    #[target_feature(enable = "neon")]
    pub unsafe fn write(buf: &mut [u8], val: u8, nt: bool) {
        let len = buf.len();
        let p = buf.as_mut_ptr();
        let (head, body) = super::split(p as usize, len, 16, 64);
        let v = vdupq_n_u8(val);
        // SAFETY: head <= len.
        unsafe { super::fill_bytes(p, 0, head, val) };
        let mut i = head;
        while i < head + body {
            // SAFETY: i + 64 <= len; p + i is 16-aligned; writes only those 64 bytes.
            unsafe {
                let q = p.add(i);
                if nt {
                    core::arch::asm!(
                        "stnp {v:q}, {v:q}, [{q}]",
                        "stnp {v:q}, {v:q}, [{q}, #32]",
                        v = in(vreg) v, q = in(reg) q,
                        options(nostack, preserves_flags)
                    );
                } else {
                    core::arch::asm!(
                        "stp {v:q}, {v:q}, [{q}]",
                        "stp {v:q}, {v:q}, [{q}, #32]",
                        v = in(vreg) v, q = in(reg) q,
                        options(nostack, preserves_flags)
                    );
                }
            }
            i += 64;
        }
        // SAFETY: head + body <= len.
        unsafe { super::fill_bytes(p, head + body, len, val) };
        if nt {
            crate::cacheline::store_fence();
        }
    }

    /// Copies `src` onto `dst`: `ldp` then `stp` (or `stnp` + `dsb st`) of q-register
    /// pairs from 16-byte destination alignment on.
    ///
    /// # Safety
    /// NEON usable; slices equal in length and disjoint.
    #[target_feature(enable = "neon")]
    pub unsafe fn copy(dst: &mut [u8], src: &[u8], nt: bool) {
        let len = dst.len();
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        let (head, body) = super::split(d as usize, len, 16, 64);
        // SAFETY: head <= len.
        unsafe { super::copy_bytes(d, s, 0, head) };
        let mut i = head;
        while i < head + body {
            // SAFETY: i + 64 <= len in both slices; v0..v3 are declared clobbered.
            unsafe {
                let (dq, sq) = (d.add(i), s.add(i));
                if nt {
                    core::arch::asm!(
                        "ldp q0, q1, [{s}]",
                        "ldp q2, q3, [{s}, #32]",
                        "stnp q0, q1, [{d}]",
                        "stnp q2, q3, [{d}, #32]",
                        s = in(reg) sq, d = in(reg) dq,
                        out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                        options(nostack, preserves_flags)
                    );
                } else {
                    core::arch::asm!(
                        "ldp q0, q1, [{s}]",
                        "ldp q2, q3, [{s}, #32]",
                        "stp q0, q1, [{d}]",
                        "stp q2, q3, [{d}, #32]",
                        s = in(reg) sq, d = in(reg) dq,
                        out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                        options(nostack, preserves_flags)
                    );
                }
            }
            i += 64;
        }
        // SAFETY: head + body <= len.
        unsafe { super::copy_bytes(d, s, head + body, len) };
        if nt {
            crate::cacheline::store_fence();
        }
    }
}

pub mod sve {
    //! Vectors of the CPU's length (VL bytes), four per step (`ld1b`/`st1b`/`stnt1b`
    //! with an all-true predicate; the body is whole steps, bytes before and after).

    /// `cntb`: the vector length in bytes.
    ///
    /// # Safety
    /// The CPU has SVE.
    #[target_feature(enable = "sve")]
    pub unsafe fn cntb() -> usize {
        let n: usize;
        // SAFETY: SVE present per caller; writes one register.
        unsafe {
            core::arch::asm!("cntb {0}", out(reg) n, options(nomem, nostack, preserves_flags))
        };
        n
    }

    fn step() -> usize {
        4 * super::sve_vector_bytes().expect("SVE checked by the caller")
    }

    /// Xor of all loaded data (four accumulators, reduced with `eorv`).
    ///
    /// # Safety
    /// The CPU has SVE.
    #[target_feature(enable = "sve")]
    pub unsafe fn read(buf: &[u8]) -> u64 {
        let n = buf.len() / step() * step();
        let mut r: u64 = 0;
        if n > 0 {
            let p = buf.as_ptr();
            // SAFETY: loads [p, p + n), n a positive multiple of 4 VL; z0..z7 (v0..v7),
            // p0 and p1 are declared clobbered.
            unsafe {
                core::arch::asm!(
                    "ptrue p0.b",
                    "dup z0.d, #0",
                    "dup z1.d, #0",
                    "dup z2.d, #0",
                    "dup z3.d, #0",
                    "2:",
                    "ld1b z4.b, p0/z, [{p}]",
                    "ld1b z5.b, p0/z, [{p}, #1, mul vl]",
                    "ld1b z6.b, p0/z, [{p}, #2, mul vl]",
                    "ld1b z7.b, p0/z, [{p}, #3, mul vl]",
                    "eor z0.d, z0.d, z4.d",
                    "eor z1.d, z1.d, z5.d",
                    "eor z2.d, z2.d, z6.d",
                    "eor z3.d, z3.d, z7.d",
                    "addvl {p}, {p}, #4",
                    "cmp {p}, {e}",
                    "b.lo 2b",
                    "eor z0.d, z0.d, z1.d",
                    "eor z2.d, z2.d, z3.d",
                    "eor z0.d, z0.d, z2.d",
                    "ptrue p1.d",
                    "eorv d0, p1, z0.d",
                    "fmov {r}, d0",
                    p = inout(reg) p => _,
                    e = in(reg) p.add(n),
                    r = out(reg) r,
                    out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                    out("v4") _, out("v5") _, out("v6") _, out("v7") _,
                    out("p0") _, out("p1") _,
                    options(nostack, readonly)
                )
            };
        }
        r ^ super::super::scalar::read(&buf[n..])
    }

    /// Fills `buf` with `val`: `st1b` (or `stnt1b` + `dsb st` when `nt`) of four vectors
    /// per step from 64-byte alignment on.
    ///
    /// # Safety
    /// The CPU has SVE; `buf` exclusive.
    #[target_feature(enable = "sve")]
    pub unsafe fn write(buf: &mut [u8], val: u8, nt: bool) {
        let len = buf.len();
        let p = buf.as_mut_ptr();
        let (head, body) = super::split(p as usize, len, 64, step());
        // SAFETY: head <= len.
        unsafe { super::fill_bytes(p, 0, head, val) };
        if body > 0 {
            // SAFETY: stores [p + head, p + head + body), a positive multiple of 4 VL;
            // z0 (v0) and p0 are declared clobbered.
            unsafe {
                let q = p.add(head);
                let e = q.add(body);
                if nt {
                    core::arch::asm!(
                        "ptrue p0.b",
                        "dup z0.b, {v:w}",
                        "2:",
                        "stnt1b z0.b, p0, [{q}]",
                        "stnt1b z0.b, p0, [{q}, #1, mul vl]",
                        "stnt1b z0.b, p0, [{q}, #2, mul vl]",
                        "stnt1b z0.b, p0, [{q}, #3, mul vl]",
                        "addvl {q}, {q}, #4",
                        "cmp {q}, {e}",
                        "b.lo 2b",
                        v = in(reg) val as u32, q = inout(reg) q => _, e = in(reg) e,
                        out("v0") _, out("p0") _,
                        options(nostack)
                    );
                } else {
                    core::arch::asm!(
                        "ptrue p0.b",
                        "dup z0.b, {v:w}",
                        "2:",
                        "st1b z0.b, p0, [{q}]",
                        "st1b z0.b, p0, [{q}, #1, mul vl]",
                        "st1b z0.b, p0, [{q}, #2, mul vl]",
                        "st1b z0.b, p0, [{q}, #3, mul vl]",
                        "addvl {q}, {q}, #4",
                        "cmp {q}, {e}",
                        "b.lo 2b",
                        v = in(reg) val as u32, q = inout(reg) q => _, e = in(reg) e,
                        out("v0") _, out("p0") _,
                        options(nostack)
                    );
                }
            }
        }
        // SAFETY: head + body <= len.
        unsafe { super::fill_bytes(p, head + body, len, val) };
        if nt {
            crate::cacheline::store_fence();
        }
    }

    /// Copies `src` onto `dst`: `ld1b` then `st1b` (or `stnt1b` + `dsb st`) of four
    /// vectors per step from 64-byte destination alignment on.
    ///
    /// # Safety
    /// The CPU has SVE; slices equal in length and disjoint.
    #[target_feature(enable = "sve")]
    pub unsafe fn copy(dst: &mut [u8], src: &[u8], nt: bool) {
        let len = dst.len();
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        let (head, body) = super::split(d as usize, len, 64, step());
        // SAFETY: head <= len.
        unsafe { super::copy_bytes(d, s, 0, head) };
        if body > 0 {
            // SAFETY: [head, head + body) of both slices, a positive multiple of 4 VL;
            // z0..z3 (v0..v3) and p0 are declared clobbered.
            unsafe {
                let (dq, sq) = (d.add(head), s.add(head));
                let e = dq.add(body);
                if nt {
                    core::arch::asm!(
                        "ptrue p0.b",
                        "2:",
                        "ld1b z0.b, p0/z, [{s}]",
                        "ld1b z1.b, p0/z, [{s}, #1, mul vl]",
                        "ld1b z2.b, p0/z, [{s}, #2, mul vl]",
                        "ld1b z3.b, p0/z, [{s}, #3, mul vl]",
                        "stnt1b z0.b, p0, [{d}]",
                        "stnt1b z1.b, p0, [{d}, #1, mul vl]",
                        "stnt1b z2.b, p0, [{d}, #2, mul vl]",
                        "stnt1b z3.b, p0, [{d}, #3, mul vl]",
                        "addvl {s}, {s}, #4",
                        "addvl {d}, {d}, #4",
                        "cmp {d}, {e}",
                        "b.lo 2b",
                        s = inout(reg) sq => _, d = inout(reg) dq => _, e = in(reg) e,
                        out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("p0") _,
                        options(nostack)
                    );
                } else {
                    core::arch::asm!(
                        "ptrue p0.b",
                        "2:",
                        "ld1b z0.b, p0/z, [{s}]",
                        "ld1b z1.b, p0/z, [{s}, #1, mul vl]",
                        "ld1b z2.b, p0/z, [{s}, #2, mul vl]",
                        "ld1b z3.b, p0/z, [{s}, #3, mul vl]",
                        "st1b z0.b, p0, [{d}]",
                        "st1b z1.b, p0, [{d}, #1, mul vl]",
                        "st1b z2.b, p0, [{d}, #2, mul vl]",
                        "st1b z3.b, p0, [{d}, #3, mul vl]",
                        "addvl {s}, {s}, #4",
                        "addvl {d}, {d}, #4",
                        "cmp {d}, {e}",
                        "b.lo 2b",
                        s = inout(reg) sq => _, d = inout(reg) dq => _, e = in(reg) e,
                        out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("p0") _,
                        options(nostack)
                    );
                }
            }
        }
        // SAFETY: head + body <= len.
        unsafe { super::copy_bytes(d, s, head + body, len) };
        if nt {
            crate::cacheline::store_fence();
        }
    }
}

pub mod scalar_nt {
    //! The scalar kernels' non-temporal stores: `stnp` of two x registers per 16 bytes
    //! from 16-byte alignment on (bytes before and after), then `dsb st`.

    pub fn write(buf: &mut [u8], val: u8) {
        let len = buf.len();
        let p = buf.as_mut_ptr();
        let (head, body) = super::split(p as usize, len, 16, 16);
        let w = u64::from_ne_bytes([val; 8]);
        // SAFETY: head <= len.
        unsafe { super::fill_bytes(p, 0, head, val) };
        let mut i = head;
        while i < head + body {
            // SAFETY: i + 16 <= len; writes only those 16 bytes.
            unsafe {
                core::arch::asm!(
                    "stnp {w}, {w}, [{q}]",
                    w = in(reg) w, q = in(reg) p.add(i),
                    options(nostack, preserves_flags)
                )
            };
            i += 16;
        }
        // SAFETY: head + body <= len.
        unsafe { super::fill_bytes(p, head + body, len, val) };
        crate::cacheline::store_fence();
    }

    pub fn copy(dst: &mut [u8], src: &[u8]) {
        let len = dst.len();
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        let (head, body) = super::split(d as usize, len, 16, 16);
        // SAFETY: head <= len.
        unsafe { super::copy_bytes(d, s, 0, head) };
        let mut i = head;
        while i < head + body {
            // SAFETY: i + 16 <= len in both slices; the loads are unaligned reads.
            unsafe {
                let a = (s.add(i) as *const u64).read_unaligned();
                let b = (s.add(i + 8) as *const u64).read_unaligned();
                core::arch::asm!(
                    "stnp {a}, {b}, [{q}]",
                    a = in(reg) a, b = in(reg) b, q = in(reg) d.add(i),
                    options(nostack, preserves_flags)
                )
            };
            i += 16;
        }
        // SAFETY: head + body <= len.
        unsafe { super::copy_bytes(d, s, head + body, len) };
        crate::cacheline::store_fence();
    }
}

pub mod zva {
    //! `dc zva`: each instruction zeroes one aligned block of DCZID_EL0's size.

    /// Zeroes `buf`: plain stores up to block alignment, `dc zva` per whole block, plain
    /// stores for the tail.
    ///
    /// # Safety
    /// `block` is DCZID_EL0's block and DZP is clear; `buf` exclusive.
    pub unsafe fn write(buf: &mut [u8], block: usize) {
        let len = buf.len();
        let p = buf.as_mut_ptr();
        let (head, body) = super::split(p as usize, len, block, block);
        // SAFETY: head <= len.
        unsafe { super::fill_bytes(p, 0, head, 0) };
        let mut i = head;
        while i < head + body {
            // SAFETY: p + i is block-aligned and the whole block lies in `buf`.
            unsafe {
                core::arch::asm!("dc zva, {0}", in(reg) p.add(i), options(nostack, preserves_flags))
            };
            i += block;
        }
        // SAFETY: head + body <= len.
        unsafe { super::fill_bytes(p, head + body, len, 0) };
    }
}
