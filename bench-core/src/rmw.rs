//! Atomic read-modify-write instructions, chosen and named: compare-and-swap, fetch-add
//! and swap on one 64-bit word, as the pool atomics and the core-to-core ping-pong issue
//! them.
//!
//! On x86_64 they are `lock cmpxchg`, `lock xadd` and `xchg` (what the standard
//! library's atomics compile to). On AArch64 the instruction depends on the CPU: the
//! Large System Extensions (LSE, Armv8.1: `casal`, `ldaddal`, `swpal`, one instruction
//! that the interconnect may execute far from the core) when the CPU has them, else an
//! exclusive-load / exclusive-store loop (`ldaxr` / `stlxr`, LL/SC). A build's standard
//! atomics would pick one of the two behind a helper call at run time, unnamed; here the
//! choice is explicit ([`Rmw::native`], or [`Rmw::new`] to force one) and every
//! measurement records it ([`Rmw::instruction`]). All are sequentially consistent
//! (acquire + release on AArch64, as compilers emit for `SeqCst`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which instruction family issues the operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwIsa {
    /// x86_64 `lock`-prefixed instructions.
    X86Lock,
    /// AArch64 LSE single instructions (`casal`, `ldaddal`, `swpal`).
    Lse,
    /// AArch64 load-exclusive / store-exclusive loops (`ldaxr` / `stlxr`).
    LlSc,
    /// The standard library's atomics on another architecture (instruction unknown).
    Portable,
}

/// An operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// Compare-and-swap.
    Cas,
    /// Fetch-and-add.
    FetchAdd,
    /// Swap.
    Swap,
}

impl RmwIsa {
    /// Short name recorded with measurements (`x86-lock`, `lse`, `llsc`, `portable`).
    pub fn name(self) -> &'static str {
        match self {
            RmwIsa::X86Lock => "x86-lock",
            RmwIsa::Lse => "lse",
            RmwIsa::LlSc => "llsc",
            RmwIsa::Portable => "portable",
        }
    }

    /// The instruction (or loop) that performs `op`.
    pub fn instruction(self, op: RmwOp) -> &'static str {
        match (self, op) {
            (RmwIsa::X86Lock, RmwOp::Cas) => "lock cmpxchg",
            (RmwIsa::X86Lock, RmwOp::FetchAdd) => "lock xadd",
            (RmwIsa::X86Lock, RmwOp::Swap) => "xchg",
            (RmwIsa::Lse, RmwOp::Cas) => "casal (LSE)",
            (RmwIsa::Lse, RmwOp::FetchAdd) => "ldaddal (LSE)",
            (RmwIsa::Lse, RmwOp::Swap) => "swpal (LSE)",
            (RmwIsa::LlSc, RmwOp::Cas) => "ldaxr/cmp/stlxr loop (LL/SC)",
            (RmwIsa::LlSc, RmwOp::FetchAdd) => "ldaxr/add/stlxr loop (LL/SC)",
            (RmwIsa::LlSc, RmwOp::Swap) => "ldaxr/stlxr loop (LL/SC)",
            (RmwIsa::Portable, _) => "the standard library's atomic (instruction not named)",
        }
    }

    /// `Ok` when this CPU can issue the family, else why not.
    pub fn available(self) -> Result<(), String> {
        let arch = std::env::consts::ARCH;
        match self {
            RmwIsa::X86Lock if cfg!(target_arch = "x86_64") => Ok(()),
            RmwIsa::LlSc if cfg!(target_arch = "aarch64") => Ok(()),
            RmwIsa::Lse if cfg!(target_arch = "aarch64") => {
                if lse_detected() {
                    Ok(())
                } else {
                    Err("this CPU does not report LSE atomics (Armv8.1 `atomics` in /proc/cpuinfo, HWCAP_ATOMICS)".into())
                }
            }
            RmwIsa::Portable if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) => {
                Ok(())
            }
            other => Err(format!(
                "{} atomics are not instructions of this build ({arch})",
                other.name()
            )),
        }
    }
}

impl fmt::Display for RmwIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "aarch64")]
fn lse_detected() -> bool {
    std::arch::is_aarch64_feature_detected!("lse")
}

#[cfg(not(target_arch = "aarch64"))]
fn lse_detected() -> bool {
    false
}

/// A usable instruction family: built only by [`Rmw::native`] or a checked [`Rmw::new`],
/// so its operations never trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rmw(RmwIsa);

impl Rmw {
    /// This CPU's best: `lock` on x86_64, LSE where the CPU has it, else LL/SC.
    pub fn native() -> Rmw {
        if cfg!(target_arch = "x86_64") {
            Rmw(RmwIsa::X86Lock)
        } else if cfg!(target_arch = "aarch64") {
            Rmw(if lse_detected() {
                RmwIsa::Lse
            } else {
                RmwIsa::LlSc
            })
        } else {
            Rmw(RmwIsa::Portable)
        }
    }

    /// `isa`, if this CPU can issue it.
    pub fn new(isa: RmwIsa) -> Result<Rmw, String> {
        isa.available().map(|()| Rmw(isa))
    }

    /// The family.
    pub fn isa(self) -> RmwIsa {
        self.0
    }

    /// The instruction that performs `op`.
    pub fn instruction(self, op: RmwOp) -> &'static str {
        self.0.instruction(op)
    }

    /// Compare-and-swap: writes `new` when `a` holds `expected`; returns what `a` held.
    #[inline(always)]
    pub fn cas(self, a: &AtomicU64, expected: u64, new: u64) -> u64 {
        match self.0 {
            #[cfg(target_arch = "aarch64")]
            RmwIsa::Lse => arm::cas_lse(a, expected, new),
            #[cfg(target_arch = "aarch64")]
            RmwIsa::LlSc => arm::cas_llsc(a, expected, new),
            _ => match a.compare_exchange(expected, new, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(v) | Err(v) => v,
            },
        }
    }

    /// Fetch-and-add: adds `v`; returns what `a` held.
    #[inline(always)]
    pub fn fetch_add(self, a: &AtomicU64, v: u64) -> u64 {
        match self.0 {
            #[cfg(target_arch = "aarch64")]
            RmwIsa::Lse => arm::fetch_add_lse(a, v),
            #[cfg(target_arch = "aarch64")]
            RmwIsa::LlSc => arm::fetch_add_llsc(a, v),
            _ => a.fetch_add(v, Ordering::SeqCst),
        }
    }

    /// Swap: writes `v`; returns what `a` held.
    #[inline(always)]
    pub fn swap(self, a: &AtomicU64, v: u64) -> u64 {
        match self.0 {
            #[cfg(target_arch = "aarch64")]
            RmwIsa::Lse => arm::swap_lse(a, v),
            #[cfg(target_arch = "aarch64")]
            RmwIsa::LlSc => arm::swap_llsc(a, v),
            _ => a.swap(v, Ordering::SeqCst),
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    //! The instructions. LSE ones are assembled with `.arch_extension lse` and issued
    //! only through an [`super::Rmw`] that checked the CPU has them.
    use std::sync::atomic::AtomicU64;

    #[inline(always)]
    pub fn cas_lse(a: &AtomicU64, expected: u64, new: u64) -> u64 {
        let mut old = expected;
        // SAFETY: `a` is a valid, aligned AtomicU64 (shared mutation through atomics is
        // what AtomicU64 allows); the CPU has LSE (checked when the Rmw was built).
        unsafe {
            core::arch::asm!(
                ".arch_extension lse",
                "casal {old}, {new}, [{p}]",
                old = inout(reg) old,
                new = in(reg) new,
                p = in(reg) a.as_ptr(),
                options(nostack, preserves_flags)
            )
        };
        old
    }

    #[inline(always)]
    pub fn fetch_add_lse(a: &AtomicU64, v: u64) -> u64 {
        let old: u64;
        // SAFETY: as in `cas_lse`.
        unsafe {
            core::arch::asm!(
                ".arch_extension lse",
                "ldaddal {v}, {old}, [{p}]",
                v = in(reg) v,
                old = out(reg) old,
                p = in(reg) a.as_ptr(),
                options(nostack, preserves_flags)
            )
        };
        old
    }

    #[inline(always)]
    pub fn swap_lse(a: &AtomicU64, v: u64) -> u64 {
        let old: u64;
        // SAFETY: as in `cas_lse`.
        unsafe {
            core::arch::asm!(
                ".arch_extension lse",
                "swpal {v}, {old}, [{p}]",
                v = in(reg) v,
                old = out(reg) old,
                p = in(reg) a.as_ptr(),
                options(nostack, preserves_flags)
            )
        };
        old
    }

    #[inline(always)]
    pub fn cas_llsc(a: &AtomicU64, expected: u64, new: u64) -> u64 {
        let old: u64;
        // SAFETY: `a` is a valid, aligned AtomicU64; exclusives are base A64. A failed
        // compare clears the exclusive monitor (clrex) as compilers do.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldaxr {old}, [{p}]",
                "cmp {old}, {exp}",
                "b.ne 3f",
                "stlxr {st:w}, {new}, [{p}]",
                "cbnz {st:w}, 2b",
                "b 4f",
                "3:",
                "clrex",
                "4:",
                old = out(reg) old,
                st = out(reg) _,
                exp = in(reg) expected,
                new = in(reg) new,
                p = in(reg) a.as_ptr(),
                options(nostack)
            )
        };
        old
    }

    #[inline(always)]
    pub fn fetch_add_llsc(a: &AtomicU64, v: u64) -> u64 {
        let old: u64;
        // SAFETY: as in `cas_llsc`.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldaxr {old}, [{p}]",
                "add {sum}, {old}, {v}",
                "stlxr {st:w}, {sum}, [{p}]",
                "cbnz {st:w}, 2b",
                old = out(reg) old,
                sum = out(reg) _,
                st = out(reg) _,
                v = in(reg) v,
                p = in(reg) a.as_ptr(),
                options(nostack, preserves_flags)
            )
        };
        old
    }

    #[inline(always)]
    pub fn swap_llsc(a: &AtomicU64, v: u64) -> u64 {
        let old: u64;
        // SAFETY: as in `cas_llsc`.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldaxr {old}, [{p}]",
                "stlxr {st:w}, {v}, [{p}]",
                "cbnz {st:w}, 2b",
                old = out(reg) old,
                st = out(reg) _,
                v = in(reg) v,
                p = in(reg) a.as_ptr(),
                options(nostack, preserves_flags)
            )
        };
        old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family this CPU can issue.
    fn usable() -> Vec<Rmw> {
        [RmwIsa::X86Lock, RmwIsa::Lse, RmwIsa::LlSc, RmwIsa::Portable]
            .into_iter()
            .filter_map(|i| Rmw::new(i).ok())
            .collect()
    }

    #[test]
    fn every_usable_family_computes_the_operations() {
        let all = usable();
        assert!(!all.is_empty());
        assert!(all.contains(&Rmw::native()));
        for r in all {
            let a = AtomicU64::new(5);
            assert_eq!(
                r.cas(&a, 4, 9),
                5,
                "{:?}: a failed CAS returns the value",
                r
            );
            assert_eq!(
                a.load(Ordering::SeqCst),
                5,
                "{r:?}: a failed CAS writes nothing"
            );
            assert_eq!(r.cas(&a, 5, 9), 5, "{r:?}");
            assert_eq!(a.load(Ordering::SeqCst), 9, "{r:?}");
            assert_eq!(r.fetch_add(&a, 3), 9, "{r:?}");
            assert_eq!(r.fetch_add(&a, 0), 12, "{r:?}");
            assert_eq!(r.swap(&a, 77), 12, "{r:?}");
            assert_eq!(a.load(Ordering::SeqCst), 77, "{r:?}");
        }
    }

    #[test]
    fn contended_increments_are_not_lost() {
        for r in usable() {
            let a = AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..10_000 {
                            r.fetch_add(&a, 1);
                        }
                    });
                    s.spawn(|| {
                        for _ in 0..10_000 {
                            // A CAS loop: every increment lands exactly once.
                            let mut cur = a.load(Ordering::Relaxed);
                            loop {
                                let seen = r.cas(&a, cur, cur + 1);
                                if seen == cur {
                                    break;
                                }
                                cur = seen;
                            }
                        }
                    });
                }
            });
            assert_eq!(a.load(Ordering::SeqCst), 80_000, "{r:?}");
        }
    }

    #[test]
    fn the_native_family_and_the_others_say_what_they_are() {
        let n = Rmw::native();
        let i = n.instruction(RmwOp::Cas);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(i, "lock cmpxchg");
            let e = RmwIsa::Lse.available().unwrap_err();
            assert!(e.contains("x86_64"), "{e}");
        }
        if cfg!(target_arch = "aarch64") {
            assert!(matches!(n.isa(), RmwIsa::Lse | RmwIsa::LlSc));
            assert!(i.starts_with("casal") || i.starts_with("ldaxr"), "{i}");
            assert!(Rmw::new(RmwIsa::LlSc).is_ok(), "LL/SC is base A64");
            if let Err(e) = RmwIsa::Lse.available() {
                assert!(e.contains("LSE"), "{e}");
            }
            assert!(RmwIsa::X86Lock.available().is_err());
        }
    }
}
