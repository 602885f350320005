//! What backs each range of a scan, named from its physical addresses: the memory blocks
//! and NUMA nodes they lie in, the CXL region (or window, NVDIMM, driver's memory) the
//! decoders put them in with its memory devices, their interleave positions and PCIe
//! links ([`bench_core::cxl`]), and the DIMMs the firmware's SMBIOS tables map there
//! ([`super::smbios`]).
//!
//! Physical addresses come from `/proc/self/pagemap` (every page of the range; its frame
//! numbers read as zero without CAP_SYS_ADMIN, and the range is then named by its virtual
//! offset and the nodes of a sample of its pages), or for a dax device from its mapping
//! ranges (device offset to address: exact, no privilege needed). Everything else is read
//! below a root (`/` on a machine), so the naming is tested on the lab's sysfs trees.

use super::smbios;
use bench_core::cxl::{self, Backing, BackingShare, CxlBus, Range};
use bench_core::topology::Topology;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A range's physical addresses, and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Physical {
    /// Contiguous runs of physical addresses, in the range's order.
    pub runs: Vec<Range>,
    /// `pagemap`, or the dax device's mapping ranges.
    pub source: String,
}

/// A range's physical addresses in short (its runs are not kept: a range of scattered
/// 4 KiB pages has hundreds of thousands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The lowest address.
    pub start: u64,
    /// One past the highest.
    pub end: u64,
    /// The address of its first byte.
    pub first: u64,
    /// Bytes (the sum of its runs).
    pub bytes: u64,
    /// Contiguous runs.
    pub runs: usize,
    /// Where the addresses came from.
    pub source: String,
}

impl Span {
    fn of(p: &Physical) -> Span {
        Span {
            start: p.runs.iter().map(|r| r.start).min().unwrap_or(0),
            end: p.runs.iter().map(|r| r.end).max().unwrap_or(0),
            first: p.runs.first().map_or(0, |r| r.start),
            bytes: p.runs.iter().map(|r| r.end - r.start).sum(),
            runs: p.runs.len(),
            source: p.source.clone(),
        }
    }
}

/// What a range is named by.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    /// Its physical addresses, or why they are not known (then it is named by its
    /// virtual offset).
    pub physical: Result<Span, String>,
    /// The memory blocks its pages lie in (`memoryN`, N = address / block size).
    pub blocks: BTreeSet<u64>,
    /// Bytes per NUMA node (from its blocks; sampled pages where no address is known).
    pub nodes: BTreeMap<i64, u64>,
    /// How the nodes were found.
    pub nodes_from: String,
    /// What backs its bytes (CXL region and devices, window, NVDIMM, driver, not CXL).
    pub backing: Vec<BackingShare>,
    /// The PCIe link of each CXL memory device that backs it.
    pub links: BTreeMap<String, String>,
    /// Bytes per DIMM (SMBIOS type 20 -> 17), with the DIMM's interleave position.
    pub dimms: Vec<(String, Option<u8>, u64)>,
}

/// What names ranges on one machine, read once.
#[derive(Debug, Clone, Default)]
pub struct Namer {
    block_bytes: Option<u64>,
    block_node: BTreeMap<u64, usize>,
    bus: CxlBus,
    nvdimm: Vec<(Range, String)>,
    driver_ram: Vec<(Range, String)>,
    dimms: Vec<smbios::Mapped>,
    links: BTreeMap<String, String>,
}

/// The hexadecimal attribute at `p` (`block_size_bytes`), if readable.
fn read_hex(p: &Path) -> Option<u64> {
    let s = std::fs::read_to_string(p).ok()?;
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

impl Namer {
    /// Everything below `root` that names an address, with `topo`'s CXL bus and dax
    /// devices (read from the same root).
    pub fn read(root: &Path, topo: &Topology) -> Namer {
        let mem = root.join("sys/devices/system/memory");
        let mut block_node = BTreeMap::new();
        for n in &topo.nodes {
            let dir = root.join(format!("sys/devices/system/node/node{}", n.id));
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.filter_map(|e| e.ok()) {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(b) = name.strip_prefix("memory").and_then(|b| b.parse().ok()) {
                    block_node.insert(b, n.id);
                }
            }
        }
        let nvdimm = topo
            .dax
            .iter()
            .filter_map(|d| match &d.backing {
                Some(Backing::Nvdimm { nd_region }) => Some((d, nd_region)),
                _ => None,
            })
            .flat_map(|(d, nd)| {
                let dir: PathBuf = root.join("sys/bus/dax/devices").join(&d.name);
                cxl::dax_ranges(&dir)
                    .into_iter()
                    .map(move |r| (r, nd.clone()))
            })
            .collect();
        let links = topo
            .cxl
            .memdevs
            .iter()
            .filter_map(|m| Some((m.name.clone(), m.link.as_ref()?.describe()?)))
            .collect();
        Namer {
            block_bytes: read_hex(&mem.join("block_size_bytes")).filter(|&b| b > 0),
            block_node,
            bus: topo.cxl.clone(),
            nvdimm,
            driver_ram: cxl::driver_ram(root),
            dimms: smbios::read(root),
            links,
        }
    }

    /// The name of a range with these physical addresses (or none known).
    pub fn name(&self, physical: Result<Physical, String>) -> Named {
        let mut n = Named {
            physical: physical.as_ref().map(Span::of).map_err(Clone::clone),
            blocks: BTreeSet::new(),
            nodes: BTreeMap::new(),
            nodes_from: String::new(),
            backing: vec![],
            links: BTreeMap::new(),
            dimms: vec![],
        };
        let Ok(p) = &physical else {
            return n;
        };
        if let Some(bs) = self.block_bytes {
            for r in &p.runs {
                let (first, last) = (r.start / bs, (r.end.max(r.start + 1) - 1) / bs);
                for b in first..=last {
                    n.blocks.insert(b);
                    let lo = r.start.max(b * bs);
                    let hi = r.end.min((b + 1) * bs);
                    let node = self.block_node.get(&b).map_or(-1, |&x| x as i64);
                    *n.nodes.entry(node).or_insert(0) += hi.saturating_sub(lo);
                }
            }
            n.nodes_from = "the memory blocks of its physical addresses (nodeN/memoryM)".into();
        }
        n.backing = cxl::node_backing(&self.bus, &p.runs, &self.nvdimm, &self.driver_ram);
        for s in &n.backing {
            if let Backing::CxlRegion { memdevs, .. } = &s.backing {
                for m in memdevs {
                    if let Some(l) = self.links.get(&m.memdev) {
                        n.links.insert(m.memdev.clone(), l.clone());
                    }
                }
            }
        }
        n.dimms = self.dimms_of(&p.runs);
        n
    }

    /// Bytes of `runs` per SMBIOS-mapped DIMM, most first.
    fn dimms_of(&self, runs: &[Range]) -> Vec<(String, Option<u8>, u64)> {
        let mut out: Vec<(String, Option<u8>, u64)> = Vec::new();
        for d in &self.dimms {
            let bytes: u64 = runs
                .iter()
                .map(|r| r.end.min(d.end).saturating_sub(r.start.max(d.start)))
                .sum();
            if bytes == 0 {
                continue;
            }
            match out
                .iter_mut()
                .find(|(n, p, _)| *n == d.name() && *p == d.interleave_position)
            {
                Some(e) => e.2 += bytes,
                None => out.push((d.name(), d.interleave_position, bytes)),
            }
        }
        out.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        out
    }
}

/// What backs a range, for people: the CXL region with its devices (and each device's
/// link), or what else holds it; shares when mixed.
pub fn describe(n: &Named) -> String {
    let one = |s: &BackingShare| match &s.backing {
        Backing::NotCxl => "not CXL (in no CXL window, NVDIMM or driver's memory)".to_string(),
        b @ Backing::CxlRegion { memdevs, .. } => {
            let links: Vec<String> = memdevs
                .iter()
                .filter_map(|m| Some(format!("{} {}", m.memdev, n.links.get(&m.memdev)?)))
                .collect();
            match links.is_empty() {
                true => b.describe(),
                false => format!("{}; links: {}", b.describe(), links.join(", ")),
            }
        }
        b => b.describe(),
    };
    match n.backing.as_slice() {
        [] => match &n.physical {
            Ok(_) => "backing unknown".into(),
            Err(_) => "backing unknown (no physical address)".into(),
        },
        [s] => one(s),
        many => many
            .iter()
            .map(|s| format!("{} of {}", bench_core::units::human_bytes(s.bytes), one(s)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Memory block numbers as a compact list (`memory59-61,70`).
pub fn block_list(blocks: &BTreeSet<u64>) -> String {
    let v: Vec<usize> = blocks.iter().map(|&b| b as usize).collect();
    match v.is_empty() {
        true => String::new(),
        false => format!("memory{}", bench_core::pin::format_cpu_list(&v)),
    }
}

/// A range's name for params.json (`scan.ranges[i]`, beside its figures).
pub fn to_json(n: &Named) -> Value {
    let (physical, source) = match &n.physical {
        Ok(p) => (
            json!({
                "start": p.start, "end": p.end,
                "span": format!("{:#x}-{:#x}", p.start, p.end.saturating_sub(1)),
                "first": p.first,
                "bytes": p.bytes,
                "contiguous_runs": p.runs,
            }),
            p.source.clone(),
        ),
        Err(why) => (Value::Null, format!("virtual offsets only: {why}")),
    };
    let dimms: Vec<Value> = n
        .dimms
        .iter()
        .map(|(name, pos, bytes)| json!({"dimm": name, "interleave_position": pos, "bytes": bytes}))
        .collect();
    let nodes: BTreeMap<String, u64> = n.nodes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    json!({
        "physical": physical,
        "addresses_from": source,
        "memory_blocks": block_list(&n.blocks),
        "memory_block_count": n.blocks.len(),
        "nodes": nodes,
        "nodes_from": n.nodes_from,
        "backing": serde_json::to_value(&n.backing).unwrap_or(Value::Null),
        "backed_by": describe(n),
        "links": n.links,
        "dimms": dimms,
    })
}

/// The physical runs of pagemap entries (`entries[i]` for the i-th base page of `page`
/// bytes), adjacent frames merged; an error when a page is absent or every frame number
/// reads zero (no CAP_SYS_ADMIN).
pub fn runs_of_pagemap(entries: &[u64], page: u64) -> Result<Vec<Range>, String> {
    const PRESENT: u64 = 1 << 63;
    const PFN: u64 = (1 << 55) - 1;
    let mut runs: Vec<Range> = Vec::new();
    for (i, &e) in entries.iter().enumerate() {
        if e & PRESENT == 0 {
            return Err(format!("page {i} of the range is not present (pagemap)"));
        }
        let pfn = e & PFN;
        if pfn == 0 {
            return Err(
                "pagemap gives no page frame numbers without CAP_SYS_ADMIN (run as root to name the physical addresses)"
                    .into(),
            );
        }
        let a = pfn * page;
        match runs.last_mut() {
            Some(r) if r.end == a => r.end = a + page,
            _ => runs.push(Range {
                start: a,
                end: a + page,
            }),
        }
    }
    Ok(runs)
}

/// The physical runs of `len` bytes at `ptr` in this process, from `/proc/self/pagemap`
/// (read in bounded chunks).
pub fn pagemap_runs(ptr: *const u8, len: usize) -> Result<Physical, String> {
    use std::os::unix::fs::FileExt;
    // The base page the kernel indexes pagemap by (4 KiB, or 16/64 KiB on some Arm kernels).
    let page = bench_core::memory::page_size() as u64;
    let f = std::fs::File::open("/proc/self/pagemap")
        .map_err(|e| format!("cannot open /proc/self/pagemap: {e}"))?;
    let first = ptr as u64 / page;
    let pages = (len as u64).div_ceil(page);
    const CHUNK: u64 = 1 << 16;
    let mut runs: Vec<Range> = Vec::new();
    let mut buf = vec![0u8; (CHUNK * 8) as usize];
    let mut i = 0;
    while i < pages {
        let n = CHUNK.min(pages - i);
        let b = &mut buf[..(n * 8) as usize];
        f.read_exact_at(b, (first + i) * 8)
            .map_err(|e| format!("reading /proc/self/pagemap: {e}"))?;
        let entries: Vec<u64> = b
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        for r in runs_of_pagemap(&entries, page)? {
            match runs.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => runs.push(r),
            }
        }
        i += n;
    }
    Ok(Physical {
        runs,
        source: "pagemap (every page of the range)".into(),
    })
}

/// The physical runs of the device offsets `[offset, offset + len)` of the dax device
/// whose ranges are `mapping` (in device order).
pub fn dax_runs(mapping: &[Range], name: &str, offset: u64, len: u64) -> Result<Physical, String> {
    let mut runs = Vec::new();
    let (lo, hi) = (offset, offset + len);
    let mut at = 0u64;
    for m in mapping {
        let size = m.end - m.start;
        let (a, b) = (lo.max(at), hi.min(at + size));
        if a < b {
            runs.push(Range {
                start: m.start + (a - at),
                end: m.start + (b - at),
            });
        }
        at += size;
    }
    let covered: u64 = runs.iter().map(|r| r.end - r.start).sum();
    if covered != len {
        return Err(format!(
            "{name}'s mapping ranges cover {covered} of the range's {len} bytes"
        ));
    }
    Ok(Physical {
        runs,
        source: format!("{name}'s mapping ranges (sysfs mappingN: device offset to address)"),
    })
}
