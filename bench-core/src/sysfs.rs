//! Reading sysfs attributes: one trimmed line, or a number written in decimal or `0x` hex.
//! Shared by the topology and the CXL discovery, which both read under a configurable root.

use std::fs;
use std::path::Path;

/// The attribute at `p`, trimmed; `None` when it cannot be read.
pub(crate) fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// The attribute at `p` as a number (decimal, or hex with `0x`).
pub(crate) fn read_u64(p: &Path) -> Option<u64> {
    let s = read_trim(p)?;
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}
