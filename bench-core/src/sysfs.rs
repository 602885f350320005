//! Reading sysfs and procfs files (and the copy of another machine's below `--sysfs ROOT`):
//! the one place the workspace reads them.
//!
//! Every read is bounded and never blocks: the path must be a regular file (checked
//! before it is opened and again on the opened file, so a FIFO, a device such as
//! `/dev/zero` linked in place of an attribute, a socket or a directory is refused without
//! waiting on it), it is opened with `O_NONBLOCK`, and at most a cap of bytes is read: a
//! sysfs attribute is at most a page ([`ATTRIBUTE_MAX_BYTES`], the largest page Linux
//! uses), a procfs table that grows with the machine (`/proc/stat`, `/proc/self/smaps`,
//! `/proc/iomem`) at most [`TABLE_MAX_BYTES`]. A file that is not there reads as `None`
//! ("not offered"); one refused for what it is (not a regular file, too large, not text,
//! a number that overflows) also reads as `None` for the readers that take `None`, and is
//! recorded so that [`checked`] can fail with a message naming it: a plan for another
//! machine's tree (`--plan --sysfs ROOT`) refuses such a tree rather than plan a machine
//! it misread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The most bytes a sysfs attribute (or a small procfs file such as `/proc/meminfo` or
/// `/proc/loadavg`) may have: 64 KiB, the largest page size Linux runs with (a sysfs
/// attribute is at most one page).
pub const ATTRIBUTE_MAX_BYTES: usize = 64 << 10;

/// The most bytes a procfs table that grows with the machine may have (`/proc/stat` is
/// about 100 bytes per CPU, `/proc/self/smaps` about 1 KiB per mapping): 64 MiB.
pub const TABLE_MAX_BYTES: usize = 64 << 20;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not a regular file (a FIFO, a device, a socket, a directory).
    #[error("{}: not a regular file but {kind}: a sysfs or procfs file is a regular file (refused without reading it)", path.display())]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NotRegular { path: PathBuf, kind: &'static str },
    /// Larger than its cap.
    #[error("{}: larger than {max_bytes} bytes, more than such a file holds (refused)", path.display())]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    TooLarge { path: PathBuf, max_bytes: usize },
    /// Not UTF-8 text.
    #[error("{}: not text (invalid UTF-8)", path.display())]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    NotText { path: PathBuf },
    /// Read, but what it says is out of range (a size that overflows 64 bits, a CPU list
    /// naming more CPUs than Linux supports).
    #[error("{}: {what}", path.display())]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Invalid { path: PathBuf, what: String },
    /// Could not be opened or read (permissions, an attribute the driver refuses).
    #[error("cannot read {}: {source}", path.display())]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ReadError {
    /// Whether the file was refused for what it is or holds (recorded for [`checked`]),
    /// rather than not readable the way a kernel attribute can be (permissions, `EIO`).
    fn is_refusal(&self) -> bool {
        !matches!(self, ReadError::Io { .. })
    }
}

thread_local! {
    /// The refusals of this thread's reads inside [`checked`] (`None` outside it).
    static REFUSED: RefCell<Option<Vec<ReadError>>> = const { RefCell::new(None) };
}

/// Records a refusal for the [`checked`] call around this read, if any.
pub(crate) fn record(e: ReadError) {
    REFUSED.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            // The first few say enough; a hostile tree can hold millions.
            if v.len() < 16 {
                v.push(e);
            }
        }
    });
}

/// Runs `f` (on this thread), failing with the first file refused while it ran: a file
/// that is not a regular file, larger than its cap, not text, or out of range. The reads
/// inside `f` still return `None` for such files; this says which one it was.
pub fn checked<T>(f: impl FnOnce() -> T) -> Result<T, ReadError> {
    let outer = REFUSED.with(|r| r.replace(Some(Vec::new())));
    let out = f();
    let mine = REFUSED.with(|r| r.replace(outer)).unwrap_or_default();
    match mine.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn kind_of(t: &fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

fn regular(p: &Path, t: &fs::FileType) -> Result<(), ReadError> {
    if t.is_file() {
        Ok(())
    } else {
        Err(ReadError::NotRegular {
            path: p.to_path_buf(),
            kind: kind_of(t),
        })
    }
}

fn io(p: &Path, source: std::io::Error) -> ReadError {
    ReadError::Io {
        path: p.to_path_buf(),
        source,
    }
}

/// Whether an error says the file is not there (a missing file or directory, or a
/// component that is a file).
fn absent(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

/// Opens `p` for reading when it is a regular file (following links), without blocking:
/// `Ok(None)` when it does not exist.
pub fn open_regular(p: &Path) -> Result<Option<File>, ReadError> {
    let meta = match fs::metadata(p) {
        Ok(m) => m,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(io(p, e)),
    };
    // Checked before opening: opening a FIFO or a device can block or act.
    regular(p, &meta.file_type())?;
    let f = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(p)
    {
        Ok(f) => f,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(io(p, e)),
    };
    // And again on what was opened: the path may have been replaced in between.
    regular(p, &f.metadata().map_err(|e| io(p, e))?.file_type())?;
    Ok(Some(f))
}

/// Reads what remains of the open file `f` (named `p` in errors), at most `max_bytes`.
pub fn read_open(f: &mut File, p: &Path, max_bytes: usize) -> Result<String, ReadError> {
    let mut buf = Vec::new();
    f.take(max_bytes as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| io(p, e))?;
    if buf.len() > max_bytes {
        return Err(ReadError::TooLarge {
            path: p.to_path_buf(),
            max_bytes,
        });
    }
    String::from_utf8(buf).map_err(|_| ReadError::NotText {
        path: p.to_path_buf(),
    })
}

/// The text of the regular file `p`, at most `max_bytes` of it: `Ok(None)` when it does
/// not exist.
pub fn read_bounded(p: &Path, max_bytes: usize) -> Result<Option<String>, ReadError> {
    match open_regular(p)? {
        Some(mut f) => read_open(&mut f, p, max_bytes).map(Some),
        None => Ok(None),
    }
}

/// The first `max_bytes` of the regular file `p`, cut after its last whole line: for a
/// file of which only the start matters (`/proc/cpuinfo`'s first CPU on a machine of
/// thousands).
pub fn read_head(p: &Path, max_bytes: usize) -> Option<String> {
    let mut f = take_refusal(open_regular(p))??;
    let mut buf = Vec::new();
    f.by_ref()
        .take(max_bytes as u64)
        .read_to_end(&mut buf)
        .ok()?;
    if buf.len() == max_bytes {
        let end = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        buf.truncate(end);
    }
    match String::from_utf8(buf) {
        Ok(s) => Some(s),
        Err(_) => {
            record(ReadError::NotText {
                path: p.to_path_buf(),
            });
            None
        }
    }
}

/// `Ok(x)` as `Some(x)`; a refusal recorded for [`checked`], any error `None`.
fn take_refusal<T>(r: Result<T, ReadError>) -> Option<T> {
    match r {
        Ok(x) => Some(x),
        Err(e) => {
            if e.is_refusal() {
                record(e);
            }
            None
        }
    }
}

/// The text of the file at `p`, at most `max_bytes`; `None` when it cannot be read (a
/// refused file is recorded for [`checked`]).
pub fn read_text(p: &Path, max_bytes: usize) -> Option<String> {
    take_refusal(read_bounded(p, max_bytes)).flatten()
}

/// The sysfs attribute (or small procfs file) at `p`, trimmed; `None` when it cannot be
/// read.
pub fn read_trim(p: &Path) -> Option<String> {
    read_text(p, ATTRIBUTE_MAX_BYTES).map(|s| s.trim().to_string())
}

/// The procfs table at `p` (up to [`TABLE_MAX_BYTES`]); `None` when it cannot be read.
pub fn read_table(p: &Path) -> Option<String> {
    read_text(p, TABLE_MAX_BYTES)
}

/// The attribute at `p` as a number (decimal, or hex with `0x`).
pub fn read_u64(p: &Path) -> Option<u64> {
    let s = read_trim(p)?;
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The CPU (or node) list of the attribute at `p` (`0-3,8`; empty text is the empty
/// list). `None` when it cannot be read; a list that does not parse (or names a CPU at or
/// above [`crate::pin::CPU_NUMBER_LIMIT`], as `0-4294967295` would) is recorded as a
/// refusal, and is never expanded.
pub fn read_cpu_list(p: &Path) -> Option<Vec<usize>> {
    let s = read_trim(p)?;
    if s.is_empty() {
        return Some(Vec::new());
    }
    match crate::pin::parse_cpu_list(&s) {
        Ok(v) => Some(v),
        Err(e) => {
            record(ReadError::Invalid {
                path: p.to_path_buf(),
                what: e.to_string(),
            });
            None
        }
    }
}

/// CPU lists read from many files of which most say the same (every CPU of an L3 lists
/// its sharers, every thread of a core its siblings): each distinct text is parsed once,
/// into a sorted list, and the CPUs of all the distinct lists together are bounded
/// ([`CpuLists::MAX_CPUS`]), so a tree whose every CPU lists a different long list is
/// refused rather than expanded into the square of its CPUs.
#[derive(Debug)]
pub struct CpuLists {
    parsed: HashMap<String, Option<Listed>>,
    left: usize,
}

/// A list [`CpuLists`] read.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Its number among the distinct texts read (the same text, the same number).
    pub id: usize,
    /// Its CPUs, sorted.
    pub cpus: Rc<[usize]>,
    /// Whether this read was the first of its text.
    pub new: bool,
}

impl Default for CpuLists {
    fn default() -> Self {
        CpuLists::new()
    }
}

impl CpuLists {
    /// The most CPUs the distinct lists may name together: 64 lists of every CPU Linux
    /// supports (a real machine's caches and cores name each CPU a few times).
    pub const MAX_CPUS: usize = 64 * crate::pin::CPU_NUMBER_LIMIT;

    /// No list read yet.
    pub fn new() -> CpuLists {
        CpuLists {
            parsed: HashMap::new(),
            left: Self::MAX_CPUS,
        }
    }

    /// The list in the attribute at `p`; `None` when it cannot be read or is refused
    /// ([`read_cpu_list`]), or when the distinct lists would name more than
    /// [`CpuLists::MAX_CPUS`] CPUs (recorded).
    pub fn read(&mut self, p: &Path) -> Option<Listed> {
        let text = read_trim(p)?;
        if let Some(known) = self.parsed.get(&text) {
            return known.clone().map(|l| Listed { new: false, ..l });
        }
        let listed = self.parse(p, &text).map(|cpus| Listed {
            id: self.parsed.len(),
            cpus,
            new: true,
        });
        self.parsed.insert(text, listed.clone());
        listed
    }

    fn parse(&mut self, p: &Path, text: &str) -> Option<Rc<[usize]>> {
        if text.is_empty() {
            return Some(Rc::from(Vec::new()));
        }
        let mut v = match crate::pin::parse_cpu_list(text) {
            Ok(v) => v,
            Err(e) => {
                record(ReadError::Invalid {
                    path: p.to_path_buf(),
                    what: e.to_string(),
                });
                return None;
            }
        };
        if !self.charge(v.len(), p) {
            return None;
        }
        v.sort_unstable();
        Some(Rc::from(v))
    }

    /// Counts `n` more CPUs of distinct lists (one derived from the list at `p`) against
    /// the bound: `false`, with a refusal of `p` recorded, once past it.
    pub fn charge(&mut self, n: usize, p: &Path) -> bool {
        if n > self.left {
            self.left = 0;
            record(ReadError::Invalid {
                path: p.to_path_buf(),
                what: format!(
                    "the distinct CPU lists of the tree name more than {} CPUs together, more than a machine's caches and cores do",
                    Self::MAX_CPUS
                ),
            });
            return false;
        }
        self.left -= n;
        true
    }
}

/// A field of a meminfo file (`/proc/meminfo`'s `MemTotal:  1024 kB`, a node's
/// `Node 0 MemTotal:  1024 kB`) in bytes: `Ok(None)` when the field is absent or not a
/// number; an error when the bytes overflow 64 bits (never a wrapped, small number).
pub fn meminfo_bytes(text: &str, field: &str) -> Result<Option<u64>, String> {
    let key = format!("{field}:");
    let Some(line) = text
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == key))
    else {
        return Ok(None);
    };
    let mut it = line.split_whitespace().skip_while(|w| *w != key).skip(1);
    let Some(v) = it.next().and_then(|v| v.parse::<u64>().ok()) else {
        return Ok(None);
    };
    match it.next() {
        Some(u) if u.eq_ignore_ascii_case("kb") => v
            .checked_mul(1024)
            .map(Some)
            .ok_or_else(|| format!("{field} {v} kB is more bytes than 64 bits hold")),
        _ => Ok(Some(v)),
    }
}

/// [`meminfo_bytes`] of the file at `p`, with an overflow recorded as a refusal of `p`
/// (and read as unknown, `None`).
pub fn read_meminfo_bytes(p: &Path, field: &str) -> Option<u64> {
    let text = read_trim(p)?;
    match meminfo_bytes(&text, field) {
        Ok(v) => v,
        Err(what) => {
            record(ReadError::Invalid {
                path: p.to_path_buf(),
                what,
            });
            None
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
