//! # bench-pcie
//!
//! PCIe discovery from sysfs and MMIO costs on a device BAR (seed 004): uncached read
//! round trip, uncached write, write-combining 64-byte PIO copy. Not implemented yet:
//! `cxlchar` reports this family as skipped with that reason.
#![deny(missing_docs)]

/// Why this family produces no measurements yet (reported as the skip reason).
pub const NOT_IMPLEMENTED: &str = "the PCIe MMIO family is not implemented in this version";
