//! # bench-pcie
//!
//! PCIe discovery and MMIO costs (seed 004, Breaking Band: the PIO copy of a 64-byte
//! descriptor to a NIC's write-combining BAR, and the uncached round trip).
//!
//! * [`discovery`]: every PCI device from sysfs: ids, driver, NUMA node, link speed and
//!   width (current and maximum), memory BARs with sizes and whether `resourceN_wc` exists;
//! * [`bar`]: the `pci:DOMAIN:BUS:DEV.FN/BAR` spec, its validation and mapping (re-exported
//!   from bench-core, which maps every BAR behind its write guard);
//! * [`mmio`]: the `pcie.mmio` benchmark: uncached 8-byte read round trip (a dependent
//!   chain of reads: `pcie_rtt_ns`), uncached 8-byte write cost, and write-combining copies
//!   of 8..256 bytes + sfence (`pio_copy_64b_ns`);
//! * [`post_parts`]: the `pcie.post-parts` benchmark: seed 004's LLP_post components as
//!   micro-operations (descriptor stores into a host ring, the store barriers, the DBC
//!   store; with a BAR the whole post with its PIO copy).
//!
//! Reads only by default; any write needs `--allow-write`, and a device with a kernel
//! driver bound is refused unless `--force`.
#![deny(missing_docs)]

pub mod bar;
pub mod discovery;
pub mod mmio;
pub mod post_parts;
