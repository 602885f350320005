//! Files to remove when cxlchar is interrupted: the temporary file of an atomic write, a
//! pool file cxlchar created itself. A creator [`register`]s the path and holds the
//! [`Registered`] guard while the file is unfinished; dropping the guard unregisters it
//! (the creator then removes or renames the file itself). [`install`] (once, by the
//! runner) sets a handler for SIGINT, SIGTERM, SIGHUP (a closed ssh session or terminal)
//! and SIGQUIT that unlinks every registered path, writes one line on stderr saying what
//! was interrupted ([`set_activity`]) and what became of the result file
//! ([`set_result_path`]), and exits 128 + the signal (130, 143, 129, 131), as
//! docs/safety.md states. SIGPIPE stays ignored (Rust's default): a write to a closed
//! stdout fails with EPIPE, which the runner ends quietly, its files removed as on any
//! other error.
//!
//! A run's result file changes that status once it is in place: the writer marks its
//! finished temporary file with the run's status ([`Registered::commits`]) before the
//! rename and calls [`complete`] after it. The handler then tells the two sides of the
//! rename apart by its own `unlink(2)` of the temporary file: removed, the rename never
//! happened and the result is untouched (128 + the signal); already gone, the result is
//! in place and the run exits with its status ([`status_on_signal`]).
//!
//! The handler is async-signal-safe: the paths live in a fixed, pre-allocated table of
//! NUL-terminated buffers, the texts of its line in fixed double buffers (no allocation,
//! no lock), and it calls only `unlink(2)`, `write(2)` on stderr, reads `errno` and calls
//! `_exit(2)`.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicU8, AtomicUsize, Ordering};

/// The signals the handler takes: interrupt, terminate, hang-up, quit.
pub const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Registered paths at most at a time (a run has a few: one temp file, one pool file).
pub const SLOTS: usize = 16;
/// Longest path, in bytes with its terminating NUL (`PATH_MAX`).
pub const PATH_BYTES: usize = 4096;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

/// No exit status recorded: a signal exits 128 + the signal.
const NO_STATUS: i32 = -1;

/// The exit status of a run whose result is in place ([`complete`]), or [`NO_STATUS`].
static COMPLETED: AtomicI32 = AtomicI32::new(NO_STATUS);

struct Slot {
    state: AtomicU8,
    /// The run's exit status once this temporary file is renamed into place
    /// ([`Registered::commits`]), or [`NO_STATUS`].
    commit: AtomicI32,
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: a slot's buffer is written only by the thread that moved its state FREE ->
// WRITING (a compare-exchange: one owner), and read (by the handler) only in state READY,
// which the owner publishes with Release after writing.
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)] // the initializer of each slot
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    commit: AtomicI32::new(NO_STATUS),
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

impl Registered {
    /// Marks the registered file, finished and about to be renamed into place as the
    /// run's result, with the status the run exits with: from now on a signal that finds
    /// the file already gone (renamed) exits `status`, one that removes it exits 128 +
    /// the signal. Call it only once the file exists, and [`Self::cancel_commit`] before
    /// removing it oneself; after the rename succeeds, call [`complete`] before the guard
    /// is dropped.
    pub fn commits(&self, status: i32) {
        TABLE[self.slot].commit.store(status, Ordering::SeqCst);
    }

    /// Undoes [`Self::commits`]: the rename failed and the file will be removed.
    pub fn cancel_commit(&self) {
        TABLE[self.slot].commit.store(NO_STATUS, Ordering::SeqCst);
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let s = &TABLE[self.slot];
        s.commit.store(NO_STATUS, Ordering::SeqCst);
        s.state.store(FREE, Ordering::Release);
    }
}

/// Records that the run's result is in place (its file renamed over the destination):
/// SIGINT and SIGTERM from now on exit `status`, the run being complete.
pub fn complete(status: i32) {
    COMPLETED.store(status, Ordering::SeqCst);
}

/// The status a signal ends the process with: `completed`, the status recorded by
/// [`complete`]; else `renamed`, the status of a committed temporary file the handler
/// found already renamed; else 128 + `sig` (interrupted, the result untouched). A
/// negative value stands for none.
pub fn status_on_signal(sig: i32, completed: i32, renamed: i32) -> i32 {
    if completed >= 0 {
        completed
    } else if renamed >= 0 {
        renamed
    } else {
        128 + sig
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

/// A text the handler writes, set by one thread at a time: two buffers, the one not
/// being read is written and then published, so the handler always reads a whole text.
struct Note<const N: usize> {
    /// Which buffer is published (0 or 1), or `NONE` before any text.
    active: AtomicUsize,
    lens: [AtomicUsize; 2],
    bufs: [UnsafeCell<[u8; N]>; 2],
    /// Serializes writers (the handler never takes it).
    writer: std::sync::Mutex<()>,
}

const NONE: usize = usize::MAX;

// SAFETY: a buffer is written only by the writer holding `writer`, and only the buffer
// that is not published; the handler reads only the published one.
unsafe impl<const N: usize> Sync for Note<N> {}

impl<const N: usize> Note<N> {
    const fn new() -> Self {
        Note {
            active: AtomicUsize::new(NONE),
            lens: [AtomicUsize::new(0), AtomicUsize::new(0)],
            bufs: [UnsafeCell::new([0; N]), UnsafeCell::new([0; N])],
            writer: std::sync::Mutex::new(()),
        }
    }

    /// Publishes `text` (cut at `N` bytes, at a character boundary), or none.
    fn set(&self, text: Option<&str>) {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let Some(text) = text else {
            self.active.store(NONE, Ordering::Release);
            return;
        };
        let mut n = text.len().min(N);
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        let next = match self.active.load(Ordering::Acquire) {
            0 => 1,
            _ => 0,
        };
        // SAFETY: the writer lock is held and `next` is not the published buffer.
        let buf = unsafe { &mut *self.bufs[next].get() };
        buf[..n].copy_from_slice(&text.as_bytes()[..n]);
        self.lens[next].store(n, Ordering::Relaxed);
        self.active.store(next, Ordering::Release);
    }

    /// The published text (async-signal-safe: no allocation, no lock).
    fn get(&self) -> Option<&[u8]> {
        let i = self.active.load(Ordering::Acquire);
        if i > 1 {
            return None;
        }
        let n = self.lens[i].load(Ordering::Relaxed);
        // SAFETY: buffer `i` is published: no writer touches it until another is.
        Some(unsafe { &(&*self.bufs[i].get())[..n] })
    }
}

/// What the run is doing (`mem.latency on anon`), for the line a signal prints.
static ACTIVITY: Note<256> = Note::new();
/// The result file (`--out`) the run will replace, for the same line.
static RESULT: Note<PATH_BYTES> = Note::new();

/// Records what the run is doing now, for the line a signal prints ("interrupted during
/// `activity`"); `""` for nothing in particular.
pub fn set_activity(activity: &str) {
    ACTIVITY.set(Some(activity).filter(|a| !a.is_empty()));
}

/// Records the result file the run replaces at its end (`--out`), or none: the line a
/// signal prints says whether it was left untouched or is already in place.
pub fn set_result_path(path: Option<&Path>) {
    RESULT.set(path.map(|p| p.to_str().unwrap_or("--out")));
}

/// The name of a handled signal.
fn signal_name(sig: libc::c_int) -> &'static [u8] {
    match sig {
        libc::SIGINT => b"SIGINT",
        libc::SIGTERM => b"SIGTERM",
        libc::SIGHUP => b"SIGHUP",
        libc::SIGQUIT => b"SIGQUIT",
        _ => b"a signal",
    }
}

/// The parts of the line a signal prints: `interrupted by SIGINT during mem.latency on
/// anon; params.json left untouched`. `in_place`: the result file is already written.
fn signal_line<'a>(
    sig: &'a [u8],
    activity: Option<&'a [u8]>,
    result: Option<&'a [u8]>,
    in_place: bool,
) -> [&'a [u8]; 7] {
    let (during, what) = match activity {
        Some(a) => (&b" during "[..], a),
        None => (&b""[..], &b""[..]),
    };
    let (file, fate): (&[u8], &[u8]) = match (result, in_place) {
        (Some(r), false) => (r, b" left untouched (not written)"),
        (Some(r), true) => (r, b" was already written and is complete"),
        (None, _) => (b"", b"nothing written (no --out)"),
    };
    [
        b"\ncxlchar: interrupted by ",
        sig,
        during,
        what,
        b"; ",
        file,
        fate,
    ]
}

/// Writes `parts` and a newline on stderr (async-signal-safe; errors are ignored: a
/// hung-up terminal cannot take it).
fn write_stderr(parts: &[&[u8]]) {
    for p in parts.iter().chain([&&b"\n"[..]]) {
        // SAFETY: write(2) is async-signal-safe; `p` is a valid buffer of its length.
        let _ = unsafe { libc::write(2, p.as_ptr().cast(), p.len()) };
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let mut renamed = NO_STATUS;
    for s in &TABLE {
        if s.state.load(Ordering::Acquire) == READY {
            // SAFETY: a READY slot holds a NUL-terminated path; unlink(2) is
            // async-signal-safe and a missing file is harmless.
            let rc = unsafe { libc::unlink(s.path.get().cast::<libc::c_char>()) };
            // Read after the unlink: a writer cancels its commit before removing the
            // file itself, so a file gone while still committed was renamed.
            let commit = s.commit.load(Ordering::SeqCst);
            if rc != 0
                && commit >= 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)
            {
                renamed = commit;
            }
        }
    }
    let status = status_on_signal(sig, COMPLETED.load(Ordering::SeqCst), renamed);
    let in_place = status != 128 + sig;
    write_stderr(&signal_line(
        signal_name(sig),
        ACTIVITY.get(),
        RESULT.get(),
        in_place,
    ));
    // SAFETY: _exit(2) is async-signal-safe and runs no destructors.
    unsafe { libc::_exit(status) };
}

/// Installs the handler of [`SIGNALS`] (once per process; later calls do nothing).
pub fn install() -> std::io::Result<()> {
    static ONCE: std::sync::OnceLock<std::io::Result<()>> = std::sync::OnceLock::new();
    let r = ONCE.get_or_init(|| {
        for sig in SIGNALS {
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

    #[test]
    fn a_complete_run_keeps_its_status_and_an_interrupted_one_exits_128_plus_the_signal() {
        let term = libc::SIGTERM;
        assert_eq!(status_on_signal(term, NO_STATUS, NO_STATUS), 143);
        assert_eq!(status_on_signal(libc::SIGINT, NO_STATUS, NO_STATUS), 130);
        assert_eq!(status_on_signal(term, NO_STATUS, 0), 0, "renamed: complete");
        assert_eq!(status_on_signal(term, 0, NO_STATUS), 0, "completed");
        assert_eq!(status_on_signal(term, 4, 0), 4, "the recorded status wins");
    }

    #[test]
    fn a_note_holds_the_last_text_whole_and_cut_at_a_character() {
        let n: Note<8> = Note::new();
        assert_eq!(n.get(), None);
        n.set(Some("mem.lat"));
        assert_eq!(n.get(), Some(&b"mem.lat"[..]));
        n.set(Some("pool.c2c on anon"));
        assert_eq!(n.get(), Some(&b"pool.c2c"[..]));
        n.set(Some("ééééé"));
        assert_eq!(
            n.get(),
            Some("éééé".as_bytes()),
            "cut at a character boundary"
        );
        n.set(None);
        assert_eq!(n.get(), None);
    }

    #[test]
    fn the_signal_line_says_what_was_interrupted_and_what_became_of_the_result() {
        let line = |a, r, p| signal_line(b"SIGINT", a, r, p).concat();
        assert_eq!(
            line(Some(&b"mem.latency on anon"[..]), Some(&b"p.json"[..]), false),
            b"\ncxlchar: interrupted by SIGINT during mem.latency on anon; p.json left untouched (not written)"
        );
        assert_eq!(
            line(None, Some(&b"p.json"[..]), true),
            b"\ncxlchar: interrupted by SIGINT; p.json was already written and is complete"
        );
        assert_eq!(
            line(None, None, false),
            b"\ncxlchar: interrupted by SIGINT; nothing written (no --out)"
        );
    }

    /// The environment variable that makes [`signal_child`] act out one case.
    const CHILD: &str = "BENCH_CORE_CLEANUP_SIGNAL_CASE";

    /// Acts out one case of a result file and a SIGTERM in this process (run by
    /// [`a_signal_after_the_rename_exits_with_the_runs_status`] as a child; does nothing
    /// in a plain test run): `dir` holds the destination `out` and its temporary file.
    #[test]
    fn signal_child() {
        let Ok(case) = std::env::var(CHILD) else {
            return;
        };
        let dir = std::path::PathBuf::from(std::env::var("BENCH_CORE_CLEANUP_DIR").unwrap());
        let tmp = dir.join(".out.tmp");
        install().unwrap();
        let g = register(&tmp).unwrap();
        std::fs::write(&tmp, "result").unwrap();
        match case.as_str() {
            // Interrupted while the result is written: nothing committed.
            "writing" => {}
            // Committed, not renamed yet: the handler removes the file, the run counts
            // as interrupted.
            "committed" => g.commits(0),
            // Renamed, not yet recorded as complete.
            "renamed" => {
                g.commits(0);
                std::fs::rename(&tmp, dir.join("out")).unwrap();
            }
            // Renamed and recorded; the guard dropped.
            "complete" => {
                g.commits(0);
                std::fs::rename(&tmp, dir.join("out")).unwrap();
                complete(0);
                drop(g);
            }
            // The rename failed: the commit is cancelled and the file removed.
            "cancelled" => {
                g.commits(0);
                g.cancel_commit();
                std::fs::remove_file(&tmp).unwrap();
            }
            c => panic!("unknown case {c}"),
        }
        // SAFETY: raise(3) sends SIGTERM to this thread; the handler exits the process.
        unsafe { libc::raise(libc::SIGTERM) };
        unreachable!("the handler exits");
    }

    #[test]
    fn a_signal_after_the_rename_exits_with_the_runs_status() {
        let exe = std::env::current_exe().unwrap();
        for (case, status, out) in [
            ("writing", 143, false),
            ("committed", 143, false),
            ("renamed", 0, true),
            ("complete", 0, true),
            ("cancelled", 143, false),
        ] {
            let d = tempfile::tempdir().unwrap();
            let o = std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "cleanup::tests::signal_child",
                    "--test-threads=1",
                ])
                .env(CHILD, case)
                .env("BENCH_CORE_CLEANUP_DIR", d.path())
                .output()
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(status),
                "{case}: {}",
                String::from_utf8_lossy(&o.stdout)
            );
            assert_eq!(d.path().join("out").exists(), out, "{case}");
            assert!(
                !d.path().join(".out.tmp").exists(),
                "{case}: temporary file left"
            );
        }
    }
}
