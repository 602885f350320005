//! aarch64 generic timer: the virtual count `cntvct_el0`, frequency from `cntfrq_el0`.

/// Reads `cntvct_el0` after an `isb`, so that earlier instructions have completed.
#[inline(always)]
pub fn read() -> u64 {
    let v: u64;
    // SAFETY: cntvct_el0 is readable at EL0 on Linux (the kernel enables it); the asm
    // only writes the output register.
    unsafe {
        core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, nomem))
    };
    v
}

/// Counter frequency in Hz from `cntfrq_el0`.
pub fn frequency_hz() -> u64 {
    let f: u64;
    // SAFETY: cntfrq_el0 is readable at EL0; the asm only writes the output register.
    unsafe { core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nostack, nomem)) };
    f
}
