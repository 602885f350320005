//! Files to remove when cxlchar is interrupted: the temporary file of an atomic write, a
//! pool file cxlchar created itself. A creator [`register`]s the path and holds the
//! [`Registered`] guard while the file is unfinished; dropping the guard unregisters it
//! (the creator then removes or renames the file itself). [`install`] (once, by the
//! runner) sets a SIGINT/SIGTERM handler that unlinks every registered path and exits
//! 130 / 143 (128 + the signal), as docs/safety.md states.
//!
//! The handler is async-signal-safe: the paths live in a fixed, pre-allocated table of
//! NUL-terminated buffers (no allocation, no lock), and it calls only `unlink(2)` and
//! `_exit(2)`.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

/// Registered paths at most at a time (a run has a few: one temp file, one pool file).
pub const SLOTS: usize = 16;
/// Longest path, in bytes with its terminating NUL (`PATH_MAX`).
pub const PATH_BYTES: usize = 4096;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

struct Slot {
    state: AtomicU8,
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: a slot's buffer is written only by the thread that moved its state FREE ->
// WRITING (a compare-exchange: one owner), and read (by the handler) only in state READY,
// which the owner publishes with Release after writing.
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)] // the initializer of each slot
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    path: UnsafeCell::new([0; PATH_BYTES]),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// Why a path could not be registered.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CleanupError {
    /// Every slot is taken.
    #[error("the cleanup table is full ({SLOTS} paths)")]
    Full,
    /// The path does not fit a slot, or holds a NUL byte.
    #[error("path {0} cannot be registered for cleanup (too long, or a NUL byte)")]
    BadPath(String),
}

/// A registered path; unregisters it when dropped.
#[derive(Debug)]
#[must_use = "the path is unregistered when the guard is dropped"]
pub struct Registered {
    slot: usize,
}

impl Drop for Registered {
    fn drop(&mut self) {
        TABLE[self.slot].state.store(FREE, Ordering::Release);
    }
}

/// Registers `path` for removal on SIGINT/SIGTERM until the guard is dropped. The path
/// need not exist yet (register before creating, so no window is left uncovered).
pub fn register(path: &Path) -> Result<Registered, CleanupError> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= PATH_BYTES || bytes.contains(&0) {
        return Err(CleanupError::BadPath(path.display().to_string()));
    }
    for (i, s) in TABLE.iter().enumerate() {
        if s.state
            .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: this thread owns the slot (state WRITING); the handler reads only
            // READY slots.
            let buf = unsafe { &mut *s.path.get() };
            buf[..bytes.len()].copy_from_slice(bytes);
            buf[bytes.len()] = 0;
            s.state.store(READY, Ordering::Release);
            return Ok(Registered { slot: i });
        }
    }
    Err(CleanupError::Full)
}

/// The paths registered now (for tests and diagnostics).
pub fn registered() -> Vec<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    TABLE
        .iter()
        .filter(|s| s.state.load(Ordering::Acquire) == READY)
        .map(|s| {
            // SAFETY: a READY slot holds a NUL-terminated path its owner finished writing.
            let buf = unsafe { &*s.path.get() };
            let n = buf.iter().position(|&b| b == 0).unwrap_or(0);
            std::ffi::OsStr::from_bytes(&buf[..n]).into()
        })
        .collect()
}

extern "C" fn on_signal(sig: libc::c_int) {
    for s in &TABLE {
        if s.state.load(Ordering::Acquire) == READY {
            // SAFETY: a READY slot holds a NUL-terminated path; unlink(2) is
            // async-signal-safe and a missing file is harmless.
            unsafe { libc::unlink(s.path.get().cast::<libc::c_char>()) };
        }
    }
    // SAFETY: _exit(2) is async-signal-safe and runs no destructors.
    unsafe { libc::_exit(128 + sig) };
}

/// Installs the SIGINT/SIGTERM handler (once per process; later calls do nothing).
pub fn install() -> std::io::Result<()> {
    static ONCE: std::sync::OnceLock<std::io::Result<()>> = std::sync::OnceLock::new();
    let r = ONCE.get_or_init(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction is a valid start; the handler is an extern "C"
            // fn that only unlinks and exits (async-signal-safe).
            let rc = unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut())
            };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    });
    match r {
        Ok(()) => Ok(()),
        Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is global: these tests take turns.
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_guard_unregisters_its_path() {
        let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let p = Path::new("/tmp/cxlchar-cleanup-test-a");
        let g = register(p).unwrap();
        assert!(registered().iter().any(|r| r == p));
        drop(g);
        assert!(!registered().iter().any(|r| r == p));
    }

    #[test]
    fn bad_paths_are_refused_and_the_table_has_a_bound() {
        let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let long = "x".repeat(PATH_BYTES);
        assert!(matches!(
            register(Path::new(&long)),
            Err(CleanupError::BadPath(_))
        ));
        // Fill the table, then one more fails.
        let mut held = Vec::new();
        while let Ok(g) = register(Path::new("/tmp/cxlchar-cleanup-test-b")) {
            held.push(g);
            assert!(held.len() <= SLOTS);
        }
        assert_eq!(
            register(Path::new("/tmp/x")).unwrap_err(),
            CleanupError::Full
        );
    }
}
