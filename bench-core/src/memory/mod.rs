//! Memory targets and the regions on them: where a benchmark's memory lives, and the
//! proof of it. Every mapping cxlchar makes is a [`Region`] obtained here.
//!
//! `--target` takes the numactl-like syntax below: a [`TargetSpec`], or a CXL name that
//! stands for one on this machine ([`TargetArg`], resolved before anything is placed):
//!
//! | spec | memory | placement proof |
//! |---|---|---|
//! | `anon` (default) | private anonymous mmap, 4 KiB pages (`MADV_NOHUGEPAGE`) | node of every page via move_pages(2), reported |
//! | `thp` | anonymous mmap aligned to 2 MiB with `MADV_HUGEPAGE` | share of huge pages from /proc/self/smaps |
//! | `hugetlb[:2M\|:1G]` | `MAP_HUGETLB` from the reserved pool | the mapping only succeeds with huge pages |
//! | `node:N` | anonymous mmap bound with `mbind(MPOL_BIND)` | **every page** checked with move_pages(2) |
//! | `interleave:A,B[,...]` | anonymous mmap with `mbind(MPOL_INTERLEAVE)` over the nodes | page share per node (move_pages(2) of every page) against equal shares |
//! | `interleave:A=wA,B=wB` | `mbind(MPOL_WEIGHTED_INTERLEAVE)` (Linux 6.9+); the weights must be the kernel's current sysfs weights, which cxlchar never writes | page share per node against weight / sum |
//! | `dax:/dev/daxX.Y` | shared mmap of a device-dax, length a multiple of its alignment | the device's sysfs `target_node` |
//! | `file:PATH` | shared mmap of a file (e.g. on fs-dax/pmem) | none: measured with a warning |
//! | `cxl:regionN`, `cxl:memN` | the region's devdax device, else the NUMA node its memory was onlined into (a memory device: its one region), found by address ([`crate::cxl`]) | that of the `dax:` or `node:` target it resolves to ([`CxlName::resolve`]) |
//!
//! Every placement also records what backs the memory ([`Placement::backing`]): the CXL
//! region and its memory devices with their serials, an NVDIMM, or "not CXL", so a
//! measurement names the device under test.
//!
//! [`Region::allocate`] maps, places, pre-faults and verifies. A file it maps for writing
//! (a `file:` target, a pool file) has its blocks reserved first (`memory::reserve`), so that a
//! full file system is an error, not a SIGBUS. A spec that names
//! something absent is a [`CoreError::TargetSpec`] (the user's mistake); a target that
//! exists but cannot be used now is a [`CoreError::TargetUnavailable`] (reported as
//! skipped).
//!
//! [`Region::map_window`] maps a window of a file, a device-dax or a PCI BAR
//! (`pci:DOMAIN:BUS:DEV.FN/N`, uncached `resourceN` or write-combining `resourceN_wc`)
//! for the pool, the flush costs, MMIO and GPU registration. Region is the one owner of
//! every mapping cxlchar makes, and every mapping outside its own anonymous memory passes
//! the one write [`guard`] (`--allow-write`, what a path really is, driver-bound devices).

mod allocate;
mod arg;
pub mod budget;
pub mod guard;
pub mod interleave;
mod reserve;
mod window;

pub use arg::{CxlName, TargetArg};
pub use guard::{Access, MapError};
pub use interleave::{Interleave, ShareProof};
pub use window::{Window, WindowSource};

use crate::pci::BarSpec;
use crate::topology::Topology;
use crate::units::{format_size, MIB};
use crate::CoreError;
use memmap2::{Mmap, MmapMut, MmapOptions};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Huge page size of a `hugetlb` target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HugeSize {
    /// 2 MiB pages.
    M2,
    /// 1 GiB pages.
    G1,
}

impl HugeSize {
    /// Page size in bytes.
    pub fn bytes(self) -> usize {
        match self {
            HugeSize::M2 => 2 * MIB,
            HugeSize::G1 => 1024 * MIB,
        }
    }
    fn log2(self) -> u8 {
        match self {
            HugeSize::M2 => 21,
            HugeSize::G1 => 30,
        }
    }
}

/// A memory target, as given to `--target`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetSpec {
    /// Private anonymous memory with 4 KiB pages.
    Anon,
    /// Transparent huge pages.
    Thp,
    /// Reserved huge pages.
    Hugetlb(HugeSize),
    /// Memory bound to one NUMA node.
    Node(usize),
    /// Memory interleaved over NUMA nodes (plain or weighted).
    Interleave(Interleave),
    /// A device-dax character device.
    Dax(PathBuf),
    /// A file mapped shared.
    File(PathBuf),
}

impl TargetSpec {
    /// Short kind name: `anon`, `thp`, `hugetlb`, `node`, `interleave`, `dax`, `file`.
    pub fn kind(&self) -> &'static str {
        match self {
            TargetSpec::Anon => "anon",
            TargetSpec::Thp => "thp",
            TargetSpec::Hugetlb(_) => "hugetlb",
            TargetSpec::Node(_) => "node",
            TargetSpec::Interleave(_) => "interleave",
            TargetSpec::Dax(_) => "dax",
            TargetSpec::File(_) => "file",
        }
    }

    /// Whether measuring this target writes into memory that may hold someone's data (a
    /// device or a file), and so needs the user's explicit consent (`--allow-write`).
    pub fn is_destructive(&self) -> bool {
        matches!(self, TargetSpec::Dax(_) | TargetSpec::File(_))
    }

    /// The guard's consent check for a target: one that [`is_destructive`](Self::is_destructive)
    /// needs `--allow-write`.
    pub fn check_write(&self, access: Access) -> Result<(), CoreError> {
        if self.is_destructive() && !access.allow_write {
            return Err(CoreError::WriteNotAllowed {
                target: self.to_string(),
            });
        }
        Ok(())
    }

    /// Whether this target is far memory: a NUMA node with memory and no CPUs (how a CXL
    /// Type-3 expander appears), a dax device whose node has no CPUs (or is unknown), or
    /// an interleave whose nodes are all far.
    pub fn is_far_memory(&self, topo: &Topology) -> bool {
        match self {
            TargetSpec::Node(n) => topo.node(*n).is_some_and(|n| n.likely_far_memory),
            TargetSpec::Interleave(il) => il
                .nodes()
                .iter()
                .all(|n| topo.node(*n).is_some_and(|n| n.likely_far_memory)),
            TargetSpec::Dax(p) => match topo.dax_device(p).and_then(|d| d.target_node) {
                Some(n) if n >= 0 => topo
                    .node(n as usize)
                    .is_none_or(|node| node.cpus.is_empty()),
                _ => true,
            },
            _ => false,
        }
    }

    /// The memory a region of `len` bytes takes on this target ([`Region::allocate`]):
    /// `len` in whole pages of it (a `hugetlb` target's huge pages, a dax device's
    /// alignment, 2 MiB for `thp`, else the base page).
    pub fn mapped_bytes(&self, len: usize, topo: &Topology) -> usize {
        let page = match self {
            TargetSpec::Hugetlb(h) => h.bytes(),
            TargetSpec::Thp => 2 * MIB,
            TargetSpec::Dax(p) => topo
                .dax_device(p)
                .map_or(2 * MIB, |d| d.align_bytes as usize)
                .max(page_size()),
            _ => page_size(),
        }
        .max(1);
        len.div_ceil(page).saturating_mul(page)
    }

    /// Whether this target spreads its pages over several nodes (`interleave:`): its
    /// figures are neither plain local nor plain far memory.
    pub fn is_interleaved(&self) -> bool {
        matches!(self, TargetSpec::Interleave(_))
    }

    /// Checks that the spec names something this machine has. Errors are the user's
    /// mistakes (node out of range, node without memory, missing device or file,
    /// weighted interleave weights that are not the kernel's). A kernel without weighted
    /// interleave is no mistake: [`Region::allocate`] reports it unavailable (skipped).
    pub fn validate(&self, topo: &Topology) -> Result<(), CoreError> {
        let err = |reason: String| CoreError::TargetSpec {
            spec: self.to_string(),
            reason,
        };
        let node_with_memory = |n: usize| {
            let ids: Vec<String> = topo.nodes.iter().map(|n| n.id.to_string()).collect();
            let node = topo.node(n).ok_or_else(|| {
                err(format!(
                    "node {n} does not exist (nodes: {})",
                    ids.join(",")
                ))
            })?;
            if node.mem_total_bytes == 0 {
                return Err(err(format!("node {n} has no memory")));
            }
            Ok(())
        };
        match self {
            TargetSpec::Node(n) => node_with_memory(*n),
            TargetSpec::Interleave(il) => {
                for n in il.nodes() {
                    node_with_memory(*n)?;
                }
                match il.check_weights(topo.weighted_interleave.as_ref()) {
                    Err(interleave::WeightError::Mismatch(m)) => Err(err(m)),
                    _ => Ok(()),
                }
            }
            TargetSpec::Dax(p) => {
                if !p.exists() {
                    let known: Vec<String> = topo
                        .dax
                        .iter()
                        .map(|d| d.path.display().to_string())
                        .collect();
                    return Err(err(format!(
                        "{} does not exist (dax devices: {})",
                        p.display(),
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    )));
                }
                guard::check_dax(p, Path::new("/")).map_err(|e| err(e.to_string()))
            }
            TargetSpec::File(p) => {
                guard::check_file(p, Path::new("/")).map_err(|e| err(e.to_string()))?;
                if !p.is_file() {
                    return Err(err(format!(
                        "{} is not an existing regular file (create one of the size needed, e.g. with fallocate -l 1G)",
                        p.display()
                    )));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetSpec::Anon => write!(f, "anon"),
            TargetSpec::Thp => write!(f, "thp"),
            TargetSpec::Hugetlb(HugeSize::M2) => write!(f, "hugetlb:2M"),
            TargetSpec::Hugetlb(HugeSize::G1) => write!(f, "hugetlb:1G"),
            TargetSpec::Node(n) => write!(f, "node:{n}"),
            TargetSpec::Interleave(il) => write!(f, "interleave:{il}"),
            TargetSpec::Dax(p) => write!(f, "dax:{}", p.display()),
            TargetSpec::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

impl FromStr for TargetSpec {
    type Err = CoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| CoreError::TargetSpec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        match (kind, arg) {
            ("anon", None) => Ok(TargetSpec::Anon),
            ("thp", None) => Ok(TargetSpec::Thp),
            ("hugetlb", None) => Ok(TargetSpec::Hugetlb(HugeSize::M2)),
            // The page size in the one size grammar (`2M`, `2MiB`, `2048K`, `1G`).
            ("hugetlb", Some(a)) => match crate::units::parse_size(a) {
                Ok(v) if v == 2 * crate::units::MIB => Ok(TargetSpec::Hugetlb(HugeSize::M2)),
                Ok(v) if v == crate::units::GIB => Ok(TargetSpec::Hugetlb(HugeSize::G1)),
                Ok(_) => Err(err("hugetlb page size must be 2M or 1G")),
                Err(e) => Err(err(&format!("hugetlb page size must be 2M or 1G ({e})"))),
            },
            ("node", Some(a)) => a
                .parse()
                .map(TargetSpec::Node)
                .map_err(|_| err("node:N needs a node number")),
            ("interleave", Some(a)) => Interleave::parse(a)
                .map(TargetSpec::Interleave)
                .map_err(|e| err(&e)),
            ("interleave", None) => Err(err(
                "interleave needs its nodes: interleave:A,B or interleave:A=wA,B=wB",
            )),
            ("dax", Some(a)) if !a.is_empty() => Ok(TargetSpec::Dax(PathBuf::from(a))),
            ("file", Some(a)) if !a.is_empty() => Ok(TargetSpec::File(PathBuf::from(a))),
            ("cxl", _) => Err(err(
                "a cxl: name stands for the dax: device or node: behind it on a machine (TargetArg::resolve): give that target here",
            )),
            ("node" | "dax" | "file", _) => Err(err("missing argument after ':'")),
            ("anon" | "thp", Some(_)) => Err(err("this target takes no argument")),
            _ => Err(err(
                "unknown target; expected anon, thp, hugetlb[:2M|:1G], node:N, interleave:A,B[,...], interleave:A=wA,B=wB, dax:/dev/daxX.Y, cxl:regionN, cxl:memN or file:PATH",
            )),
        }
    }
}

/// What a [`Region`] maps: memory of a [`TargetSpec`], or a window of a PCI BAR (device
/// memory or registers, mapped only by [`Region::map_window`] after the [`guard`]'s
/// checks; never a `--target`, which the memory benchmarks would write into).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Memory of a target (allocated, or a window of a file or device-dax).
    Target(TargetSpec),
    /// A PCI BAR.
    Bar(BarSpec),
}

impl Origin {
    /// The memory target, `None` for a BAR.
    pub fn target(&self) -> Option<&TargetSpec> {
        match self {
            Origin::Target(t) => Some(t),
            Origin::Bar(_) => None,
        }
    }
}

impl From<TargetSpec> for Origin {
    fn from(t: TargetSpec) -> Self {
        Origin::Target(t)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Target(t) => write!(f, "{t}"),
            Origin::Bar(b) => write!(f, "{b}"),
        }
    }
}

/// What the sizing rules ask of the memory a working set lies on
/// ([`crate::bench::Context::dram_sizing`] and the bounds beside it): its name (the
/// key the run's sizing book files it under) and the memory target behind it. A BAR
/// window has none: it is bounded by the system's memory and its own length alone.
pub trait OnMemory: fmt::Display {
    /// The memory target, `None` for a BAR window.
    fn memory_target(&self) -> Option<&TargetSpec>;
}

impl OnMemory for TargetSpec {
    fn memory_target(&self) -> Option<&TargetSpec> {
        Some(self)
    }
}

impl OnMemory for Origin {
    fn memory_target(&self) -> Option<&TargetSpec> {
        self.target()
    }
}

impl<T: OnMemory + ?Sized> OnMemory for &T {
    fn memory_target(&self) -> Option<&TargetSpec> {
        (**self).memory_target()
    }
}

/// How well the placement of a region is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// Checked page by page (or guaranteed by the mapping) to be where it was asked.
    Verified,
    /// Measured where the kernel put it; nothing was asked, what was seen is reported.
    Reported,
    /// Cannot be checked; results carry a warning.
    Unverified,
}

/// Where a region's memory is, and how that is known. Goes into each measurement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Placement {
    /// Verified, reported or unverified.
    pub verification: Verification,
    /// How it was established.
    pub method: String,
    /// Page size backing the region, in bytes (as far as known).
    pub page_size_bytes: usize,
    /// Pages whose node was queried.
    pub pages_checked: u64,
    /// Pages per NUMA node (`-1`: the kernel could not tell).
    pub pages_per_node: BTreeMap<i64, u64>,
    /// Share of the region backed by transparent huge pages, where that applies.
    pub thp_fraction: Option<f64>,
    /// A warning to surface, if the placement is in doubt.
    pub warning: Option<String>,
    /// For an `interleave:` target: the expected and the measured page share per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<ShareProof>,
    /// What backs the memory, found by address ([`crate::cxl`]): the CXL region with
    /// its memory devices and serials, a CXL window, an NVDIMM, or not CXL. Set for
    /// memory-only nodes, dax devices and interleaves over them; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backing: Vec<crate::cxl::BackingShare>,
}

impl Placement {
    /// Nothing checked yet: unverified, no pages queried, backed by pages of
    /// `page_size_bytes` (as far as known).
    pub fn unverified(page_size_bytes: usize) -> Placement {
        Placement {
            verification: Verification::Unverified,
            method: String::new(),
            page_size_bytes,
            pages_checked: 0,
            pages_per_node: BTreeMap::new(),
            thp_fraction: None,
            warning: None,
            interleave: None,
            backing: Vec::new(),
        }
    }
}

/// A mapping, writable or not.
enum Mapping {
    /// Mapped read-write.
    Rw(MmapMut),
    /// Mapped read-only (a window without write intent).
    Ro(Mmap),
}

/// A mapped memory region of a target: allocated (placed, pre-faulted, verified) or a
/// window of a file, device or BAR.
pub struct Region {
    origin: Origin,
    map: Mapping,
    offset: usize,
    len: usize,
    placement: Placement,
}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region")
            .field("origin", &self.origin)
            .field("len", &self.len)
            .field("placement", &self.placement)
            .finish()
    }
}

fn unavailable(spec: &TargetSpec, reason: impl Into<String>) -> CoreError {
    CoreError::TargetUnavailable {
        target: spec.to_string(),
        reason: reason.into(),
    }
}

impl Region {
    /// Grows the region to `len` bytes if it is smaller: re-allocated on the same target,
    /// placed and verified again ([`Region::allocate`]). The old mapping is released first
    /// (a NUMA node or a dax device may not hold both); if the larger one cannot be had,
    /// the old size is mapped again and the error says why.
    pub fn grow(&mut self, len: usize, topo: &Topology) -> Result<(), String> {
        if len <= self.len() {
            return Ok(());
        }
        let Origin::Target(spec) = self.origin.clone() else {
            return Err(format!(
                "{} is a window of a device: it cannot grow",
                self.origin
            ));
        };
        let old = self.len();
        let placeholder = Region::allocate(&TargetSpec::Anon, 4096, topo)
            .map_err(|e| format!("cannot grow the region: {e}"))?;
        drop(std::mem::replace(self, placeholder));
        match Region::allocate(&spec, len, topo) {
            Ok(r) => {
                *self = r;
                Ok(())
            }
            Err(e) => {
                if let Ok(r) = Region::allocate(&spec, old, topo) {
                    *self = r;
                }
                Err(format!(
                    "cannot grow the region to {}: {e}",
                    format_size(len)
                ))
            }
        }
    }

    /// What the region maps: a memory target's memory or a BAR's window.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The memory target the region is on; `None` for a BAR window.
    pub fn target(&self) -> Option<&TargetSpec> {
        self.origin.target()
    }

    /// Usable length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty (never, once allocated).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Start of the region.
    pub fn as_ptr(&self) -> *const u8 {
        let base = match &self.map {
            Mapping::Rw(m) => m.as_ptr(),
            Mapping::Ro(m) => m.as_ptr(),
        };
        // SAFETY: offset < the mapping's length by construction (the slack of a thp
        // region, the page offset of a window).
        unsafe { base.add(self.offset) }
    }

    /// Whether the region is mapped writable (a window mapped without write intent is not).
    pub fn is_writable(&self) -> bool {
        matches!(self.map, Mapping::Rw(_))
    }

    /// Start of the region, writable.
    ///
    /// # Panics
    /// When the region is mapped read-only ([`is_writable`](Self::is_writable)).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_slice().as_mut_ptr()
    }

    /// The region as a byte slice.
    ///
    /// # Panics
    /// When the region is mapped read-only ([`is_writable`](Self::is_writable)).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let (o, l) = (self.offset, self.len);
        match &mut self.map {
            Mapping::Rw(m) => &mut m[o..o + l],
            Mapping::Ro(_) => panic!(
                "{} is mapped read-only: writing needs --allow-write",
                self.origin
            ),
        }
    }

    /// Where the memory is and how that is known.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }
}

/// What backs a target's memory: a dax device's backing (its whole size), a
/// memory-only node's shares, and those of an interleave's memory-only nodes.
pub fn backing_of(spec: &TargetSpec, topo: &Topology) -> Vec<crate::cxl::BackingShare> {
    let node = |n: usize| topo.node(n).map(|n| n.backing.clone()).unwrap_or_default();
    match spec {
        TargetSpec::Dax(p) => topo
            .dax_device(p)
            .and_then(|d| {
                Some(crate::cxl::BackingShare {
                    backing: d.backing.clone()?,
                    bytes: d.size_bytes,
                })
            })
            .into_iter()
            .collect(),
        TargetSpec::Node(n) => node(*n),
        TargetSpec::Interleave(il) => il.nodes().iter().flat_map(|n| node(*n)).collect(),
        _ => Vec::new(),
    }
}

fn open_rw(spec: &TargetSpec, path: &Path) -> Result<std::fs::File, CoreError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| {
            unavailable(
                spec,
                format!("cannot open {} read-write: {e}", path.display()),
            )
        })
}

fn map_anon(spec: &TargetSpec, len: usize, huge: Option<HugeSize>) -> Result<MmapMut, CoreError> {
    let mut o = MmapOptions::new();
    o.len(len);
    if let Some(h) = huge {
        o.huge(Some(h.log2()));
    }
    o.map_anon()
        .map_err(|e| unavailable(spec, format!("anonymous mmap of {len} bytes failed: {e}")))
}

/// Faults in `[addr, addr + len)` of a mapping of this process for writing.
fn populate(addr: usize, len: usize) {
    const MADV_POPULATE_WRITE: libc::c_int = 23;
    // SAFETY: the range lies inside a live writable mapping owned by the caller (a part of
    // a Region); MADV_POPULATE_WRITE only faults pages in, as writing to them would.
    let r = unsafe { libc::madvise(addr as *mut libc::c_void, len, MADV_POPULATE_WRITE) };
    if r == 0 {
        return;
    }
    let step = page_size();
    let mut a = addr;
    while a < addr + len {
        // SAFETY: as above; one byte per page of the caller's own mapping.
        unsafe { std::ptr::write_volatile(a as *mut u8, 0) };
        a += step;
    }
}

/// The base page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

const MPOL_BIND: libc::c_long = 2;
const MPOL_MF_STRICT: libc::c_ulong = 1;
const MPOL_MF_MOVE: libc::c_ulong = 2;

/// mbind(2) of `[addr, addr+len)` with policy `mode` over `nodes`.
fn mbind_nodes(
    addr: *mut u8,
    len: usize,
    mode: libc::c_long,
    nodes: &[usize],
) -> std::io::Result<()> {
    const WORDS: usize = 16; // 1024 nodes
    let mut mask = [0u64; WORDS];
    for &node in nodes {
        if node >= WORDS * 64 {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        mask[node / 64] |= 1 << (node % 64);
    }
    // SAFETY: addr/len describe a mapping this process owns; mask is a valid bitmap of
    // WORDS*64 bits and maxnode tells the kernel so (+1, as numactl passes it).
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr as usize,
            len,
            mode,
            mask.as_ptr(),
            (WORDS * 64 + 1) as libc::c_ulong,
            MPOL_MF_STRICT | MPOL_MF_MOVE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Queries the node of every `page`-sized page in `[ptr, ptr+len)` with move_pages(2)
/// (no move: `nodes` = NULL). Pages the kernel cannot tell are counted under `-1`
/// (or under the negative errno it returned).
pub fn pages_per_node(ptr: *const u8, len: usize, page: usize) -> BTreeMap<i64, u64> {
    let mut out = BTreeMap::new();
    let start = ptr as usize & !(page - 1);
    let end = ptr as usize + len;
    let n = (end - start).div_ceil(page);
    const CHUNK: usize = 65536;
    let mut pages: Vec<*mut libc::c_void> = Vec::with_capacity(CHUNK.min(n));
    let mut status: Vec<libc::c_int> = vec![0; CHUNK.min(n)];
    let mut i = 0;
    while i < n {
        let m = CHUNK.min(n - i);
        pages.clear();
        pages.extend((0..m).map(|k| (start + (i + k) * page) as *mut libc::c_void));
        // SAFETY: `pages` holds m addresses inside our own mapping, `status` has room for
        // m results, and a NULL `nodes` only queries (nothing is moved).
        let r = unsafe {
            libc::syscall(
                libc::SYS_move_pages,
                0 as libc::c_long,
                m as libc::c_ulong,
                pages.as_ptr(),
                std::ptr::null::<libc::c_int>(),
                status.as_mut_ptr(),
                0 as libc::c_long,
            )
        };
        if r < 0 {
            *out.entry(-1).or_insert(0) += m as u64;
        } else {
            for s in &status[..m] {
                *out.entry(*s as i64).or_insert(0) += 1;
            }
        }
        i += m;
    }
    out
}

/// Share of `[ptr, ptr+len)` backed by transparent huge pages, from /proc/self/smaps.
pub fn thp_fraction(ptr: *const u8, len: usize) -> Option<f64> {
    let text = crate::sysfs::read_table(std::path::Path::new("/proc/self/smaps"))?;
    let (lo, hi) = (ptr as usize, ptr as usize + len);
    let mut in_range = false;
    let mut huge_kb = 0u64;
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                in_range = a < hi && b > lo;
                continue;
            }
        }
        if in_range {
            if let Some(rest) = line.strip_prefix("AnonHugePages:") {
                huge_kb = huge_kb.checked_add(rest.split_whitespace().next()?.parse().ok()?)?;
            }
        }
    }
    Some((huge_kb.checked_mul(1024)? as f64 / len as f64).min(1.0))
}

/// Whether a path looks like a device-dax node (`/dev/daxX.Y`).
pub fn looks_like_dax(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("dax") && n.contains('.'))
}

#[cfg(test)]
mod tests;
