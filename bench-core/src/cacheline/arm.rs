//! AArch64 cache maintenance and non-temporal stores, and the probe that says whether
//! EL0 may issue `dc civac` / `dc cvac`.

use super::LINE;
use std::sync::OnceLock;

/// Cleans and invalidates every line of `[start, end)` to the point of coherency, then
/// `dsb sy` (the maintenance completes before anything later).
///
/// # Safety
/// Lines mapped; `dc civac` allowed at EL0 ([`probe_civac`]).
#[inline]
pub unsafe fn civac_lines(start: usize, end: usize) {
    let mut a = start;
    while a < end {
        // SAFETY: mapped per caller; EL0 cache maintenance allowed (probed).
        unsafe { civac_line(a) };
        a += LINE;
    }
    // SAFETY: a barrier with no operands.
    unsafe { core::arch::asm!("dsb sy", options(nostack, preserves_flags)) };
}

/// Cleans every line of `[start, end)` to the point of coherency (the lines may stay
/// cached), then `dsb sy`.
///
/// # Safety
/// Lines mapped; `dc cvac` allowed at EL0 ([`probe_cvac`]).
#[inline]
pub unsafe fn cvac_lines(start: usize, end: usize) {
    let mut a = start;
    while a < end {
        // SAFETY: mapped per caller; EL0 cache maintenance allowed (probed).
        unsafe { cvac_line(a) };
        a += LINE;
    }
    // SAFETY: a barrier with no operands.
    unsafe { core::arch::asm!("dsb sy", options(nostack, preserves_flags)) };
}

/// `dc civac` on the line holding `a`.
///
/// # Safety
/// Line mapped; EL0 may issue it.
#[inline(always)]
pub unsafe fn civac_line(a: usize) {
    // SAFETY: mapped per caller; the instruction writes no register.
    unsafe { core::arch::asm!("dc civac, {0}", in(reg) a, options(nostack, preserves_flags)) };
}

/// `dc cvac` on the line holding `a`.
///
/// # Safety
/// Line mapped; EL0 may issue it.
#[inline(always)]
pub unsafe fn cvac_line(a: usize) {
    // SAFETY: mapped per caller; the instruction writes no register.
    unsafe { core::arch::asm!("dc cvac, {0}", in(reg) a, options(nostack, preserves_flags)) };
}

/// One 64-byte line of `byte` with two `stnp` of q-register pairs.
///
/// # Safety
/// `dst` 16-aligned with 64 writable bytes.
#[inline(always)]
pub unsafe fn nt_store_64b(dst: *mut u8, byte: u8) {
    let w = u64::from_ne_bytes([byte; 8]);
    // SAFETY: two 32-byte stores inside the caller's 64 bytes; v0 is declared clobbered.
    unsafe {
        core::arch::asm!(
            "dup v0.2d, {w}",
            "stnp q0, q0, [{p}]",
            "stnp q0, q0, [{p}, #32]",
            w = in(reg) w,
            p = in(reg) dst,
            out("v0") _,
            options(nostack, preserves_flags)
        )
    };
}

/// Non-temporal fill: plain 8-byte stores up to 16-byte alignment, `stnp` of two x
/// registers per 16 bytes, a plain 8-byte store for the tail (length rounded up to 8).
///
/// # Safety
/// See `super::nt_fill`.
#[inline]
pub unsafe fn nt_fill(dst: *mut u8, len: usize, byte: u8) {
    let len = len.next_multiple_of(8);
    let w = u64::from_ne_bytes([byte; 8]);
    let mut off = 0;
    // SAFETY: (whole block) dst..dst+len writable and 8-aligned per caller.
    unsafe {
        while off < len && !(dst as usize + off).is_multiple_of(16) {
            core::ptr::write_volatile(dst.add(off) as *mut u64, w);
            off += 8;
        }
        while off + 16 <= len {
            core::arch::asm!(
                "stnp {w}, {w}, [{p}]",
                w = in(reg) w,
                p = in(reg) dst.add(off),
                options(nostack, preserves_flags)
            );
            off += 16;
        }
        if off < len {
            core::ptr::write_volatile(dst.add(off) as *mut u64, w);
        }
    }
}

/// Non-temporal copy: bytes up to 16-byte destination alignment, then `ldp` + `stnp` of
/// q-register pairs per 32 bytes, then bytes.
///
/// # Safety
/// See `super::nt_copy`.
#[inline]
pub unsafe fn nt_copy(dst: *mut u8, src: *const u8, len: usize) {
    let mut off = 0;
    // SAFETY: (whole block) ranges valid per caller; v0 and v1 are declared clobbered.
    unsafe {
        while off < len && !(dst as usize + off).is_multiple_of(16) {
            *dst.add(off) = *src.add(off);
            off += 1;
        }
        while off + 32 <= len {
            core::arch::asm!(
                "ldp q0, q1, [{s}]",
                "stnp q0, q1, [{d}]",
                s = in(reg) src.add(off),
                d = in(reg) dst.add(off),
                out("v0") _,
                out("v1") _,
                options(nostack, preserves_flags)
            );
            off += 32;
        }
        while off < len {
            *dst.add(off) = *src.add(off);
            off += 1;
        }
    }
}

/// Whether EL0 may issue `dc civac` here (probed once).
pub fn probe_civac() -> &'static Result<(), String> {
    static P: OnceLock<Result<(), String>> = OnceLock::new();
    P.get_or_init(|| probe("dc civac", civac_probe_child))
}

/// Whether EL0 may issue `dc cvac` here (probed once).
pub fn probe_cvac() -> &'static Result<(), String> {
    static P: OnceLock<Result<(), String>> = OnceLock::new();
    P.get_or_init(|| probe("dc cvac", cvac_probe_child))
}

fn civac_probe_child(p: *const u8) {
    // SAFETY: `p` points into the probe's own stack buffer; a trap kills only the child.
    unsafe { civac_lines(p as usize, p as usize + 1) };
}

fn cvac_probe_child(p: *const u8) {
    // SAFETY: as above.
    unsafe { cvac_lines(p as usize, p as usize + 1) };
}

/// Runs `op` on a line of its own in a forked child: `Ok` when the child exits normally,
/// else the signal that killed it, as the reason to skip. The child only issues the
/// instruction and `_exit`s (nothing that allocates or locks after `fork`).
fn probe(what: &str, op: fn(*const u8)) -> Result<(), String> {
    let line = [0u8; 2 * LINE];
    let p = line.as_ptr();
    // SAFETY: fork(2) has no memory preconditions; the child below runs only
    // async-signal-safe code (the instruction, then _exit).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "could not probe {what} (fork failed: {})",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        op(p);
        // SAFETY: _exit ends the child without running the parent's atexit handlers.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid int the kernel writes the child's status into.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(format!(
                "could not probe {what} (waitpid: {})",
                std::io::Error::last_os_error()
            ));
        }
    }
    std::hint::black_box(&line);
    verdict(what, status)
}

/// The probe's verdict from the child's wait status.
fn verdict(what: &str, status: i32) -> Result<(), String> {
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let name = match sig {
            libc::SIGILL => "SIGILL".to_string(),
            libc::SIGSEGV => "SIGSEGV".to_string(),
            libc::SIGBUS => "SIGBUS".to_string(),
            s => format!("signal {s}"),
        };
        return Err(format!(
            "{what} at EL0 raised {name}: this kernel does not let user space clean caches by address (SCTLR_EL1.UCI clear, or trapped)"
        ));
    }
    Err(format!(
        "the probe of {what} exited with status {}",
        libc::WEXITSTATUS(status)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trapped_instruction_is_a_reason_not_a_crash() {
        // A wait status of "killed by SIGILL" (signal number in the low 7 bits).
        let e = verdict("dc civac", libc::SIGILL).unwrap_err();
        assert!(e.contains("SIGILL") && e.contains("SCTLR_EL1.UCI"), "{e}");
        assert!(verdict("dc civac", 0).is_ok());
        assert!(verdict("dc cvac", 3 << 8).unwrap_err().contains("status 3"));
    }

    #[test]
    fn the_probe_runs_in_a_child() {
        // Under Linux (and qemu-user) EL0 may clean by address: the probe passes, and a
        // second call returns the cached verdict.
        assert_eq!(probe_civac(), probe_civac());
        if let Err(why) = probe_civac() {
            crate::testing::unavailable("dc civac", why);
            return;
        }
        assert!(probe_cvac().is_ok(), "{:?}", probe_cvac());
    }
}
