//! The kernel's CXL bus (`/sys/bus/cxl`), read-only: memory devices, decoders and
//! regions, and what backs a dax device or a memory-only NUMA node.
//!
//! Linux 6.1 has no sysfs link from an nd region, a dax device or a memory block to the
//! CXL region behind it, so the mapping is made **by address**, the one way that holds
//! on every kernel: a dax device's ranges (`mappingN/start..end`, or `resource`+`size`)
//! and a node's online memory blocks (`phys_index` x `block_size_bytes`) are looked up in
//! the CXL regions (`regionN/resource`, `size`) and, failing that, in the CXL fixed memory
//! windows (root decoders' `start`, `size`). A region names its memory devices through
//! its endpoint decoders (`regionN/targetK` -> `decoderE.D` under `endpointE`, whose
//! `uport` is the `memN`), and a memory device its PCI function (its parent directory).
//!
//! Everything is read below a root (normally `/`), so the parsers are tested against
//! sysfs trees copied from the lab's QEMU guest (`tests/fixtures/sysfs-cxl-*`). Missing
//! files mean "not offered": a machine without CXL has an empty [`CxlBus`].

use crate::pci::Link;
use crate::sysfs::{read_trim, read_u64};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// One CXL memory device (`/sys/bus/cxl/devices/memN`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Memdev {
    /// Kernel name, e.g. `mem0`.
    pub name: String,
    /// Device serial number as the kernel prints it (`0x1234`), if offered.
    pub serial: Option<String>,
    /// Volatile capacity in bytes (`ram/size`).
    pub ram_bytes: u64,
    /// Persistent capacity in bytes (`pmem/size`).
    pub pmem_bytes: u64,
    /// Firmware version, if offered.
    pub firmware_version: Option<String>,
    /// The PCI function (`0000:0d:00.0`), if the device is one.
    pub pci: Option<String>,
    /// The PCI function's link (speed and width).
    pub link: Option<Link>,
    /// The PCI path from the host bridge: `pci0000:0c`, root port, ..., the function.
    pub pci_path: Vec<String>,
    /// The CXL port path from the root: `root0`, the host bridge's port, any switch
    /// ports, the endpoint (`["root0", "port1", "endpoint2"]`).
    pub ports: Vec<String>,
    /// The host bridge's firmware device (the `uport` of the port under the root, e.g.
    /// `ACPI0016:00`).
    pub host_bridge: Option<String>,
    /// The QoS class the kernel matched from the device's CDAT for its volatile
    /// partition (`ram/qos_class`, Linux 6.8+); `None` when not advertised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_qos_class: Option<i64>,
    /// The same for the persistent partition (`pmem/qos_class`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmem_qos_class: Option<i64>,
}

/// What a decoder decodes for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DecoderKind {
    /// A platform fixed memory window (CFMWS): `cxl_decoder_root`.
    Root,
    /// A host bridge's or switch's decoder: `cxl_decoder_switch`.
    Switch,
    /// A memory device's HDM decoder: `cxl_decoder_endpoint`.
    Endpoint,
    /// A devtype this reader does not know.
    Other,
}

/// One HDM decoder (`/sys/bus/cxl/devices/decoderP.D`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Decoder {
    /// Kernel name, e.g. `decoder2.0`.
    pub name: String,
    /// Root, switch or endpoint.
    pub kind: DecoderKind,
    /// The port it belongs to (`root0`, `port1`, `endpoint2`).
    pub port: String,
    /// Host physical address where its range starts, if programmed.
    pub start: Option<u64>,
    /// Size of its range in bytes.
    pub size_bytes: u64,
    /// Interleave ways (sysfs `interleave_ways`), if readable.
    pub interleave_ways: Option<u32>,
    /// Interleave granularity in bytes.
    pub interleave_granularity_bytes: Option<u64>,
    /// The downstream targets it interleaves over, as the kernel lists them.
    pub target_list: Option<String>,
    /// The region it is committed to, if any.
    pub region: Option<String>,
    /// An endpoint decoder's partition: `ram` or `pmem`.
    pub mode: Option<String>,
}

/// One memory device of a region, in interleave position order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct RegionTarget {
    pub position: u32,
    /// The endpoint decoder.
    pub decoder: String,
    /// The memory device behind it, if found.
    pub memdev: Option<String>,
}

/// One CXL region (`/sys/bus/cxl/devices/regionN`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CxlRegion {
    /// Kernel name, e.g. `region1`.
    pub name: String,
    /// `pmem` or `ram` (the kernel's `mode`, or what the region's children and endpoint
    /// decoders say on kernels without it).
    pub mode: Option<String>,
    /// Host physical address of its start.
    pub start: Option<u64>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Interleave ways (sysfs `interleave_ways`), if readable.
    pub interleave_ways: Option<u32>,
    /// Interleave granularity in bytes.
    pub interleave_granularity_bytes: Option<u64>,
    /// Whether its decoders are committed.
    pub committed: bool,
    /// The root decoder (fixed memory window) it was carved from.
    pub root_decoder: Option<String>,
    /// Its memory devices.
    pub targets: Vec<RegionTarget>,
    /// The access coordinates the kernel computed for it from the devices' CDAT and the
    /// platform's HMAT (`regionN/accessC/*`, Linux 6.9+: class 0 from the nearest
    /// initiator, class 1 from the nearest CPU); empty when not advertised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<RegionAccess>,
}

/// One access class of a CXL region (`regionN/accessC`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RegionAccess {
    /// 0: the nearest initiator of any kind; 1: the nearest CPU.
    pub class: u8,
    /// The figures (latency ns, bandwidth MB/s).
    #[serde(flatten)]
    pub coords: crate::topology::hmat::AccessCoords,
}

/// The access classes of the region at `dir` that advertise a figure.
fn read_region_access(dir: &Path) -> Vec<RegionAccess> {
    (0..=1u8)
        .map(|class| RegionAccess {
            class,
            coords: crate::topology::hmat::AccessCoords::read(&dir.join(format!("access{class}"))),
        })
        .filter(|a| !a.coords.is_empty())
        .collect()
}

/// The kernel's CXL bus: empty on a machine without CXL.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct CxlBus {
    pub memdevs: Vec<Memdev>,
    /// Decoders (root decoders are the fixed memory windows).
    pub decoders: Vec<Decoder>,
    pub regions: Vec<CxlRegion>,
}

/// A memory device named in a [`Backing`]: enough to name the device under test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemdevRef {
    /// Kernel name, e.g. `mem0`.
    pub memdev: String,
    /// Serial number, if offered.
    pub serial: Option<String>,
    /// PCI function, if any.
    pub pci: Option<String>,
    /// Interleave position in the region.
    pub position: u32,
}

/// What memory (a dax device's range, a node's online memory) is backed by.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Backing {
    /// A CXL region and the memory devices it interleaves over.
    CxlRegion {
        /// The region, e.g. `region1`.
        region: String,
        /// `pmem` or `ram`, if known.
        mode: Option<String>,
        /// The region's interleave ways, if known.
        interleave_ways: Option<u32>,
        /// Interleave granularity in bytes.
        interleave_granularity_bytes: Option<u64>,
        /// The fixed memory window (root decoder) it lies in.
        window: Option<String>,
        /// Its memory devices, in position order.
        memdevs: Vec<MemdevRef>,
    },
    /// A CXL fixed memory window with no region the kernel knows (memory the platform
    /// firmware programmed): CXL, but the device cannot be named.
    CxlWindow {
        /// The root decoder, e.g. `decoder0.0`.
        window: String,
    },
    /// Persistent memory of an NVDIMM (an nd region not behind CXL).
    Nvdimm {
        /// The nd region, e.g. `region0`.
        nd_region: String,
    },
    /// Memory a driver onlined as system RAM (`System RAM (NVIDIA)` in /proc/iomem: the
    /// GPU memory of a Grace Hopper or Grace Blackwell node; `System RAM (virtio_mem)`),
    /// in no CXL window.
    Driver {
        /// The /proc/iomem resource name, e.g. `System RAM (NVIDIA)`.
        resource: String,
    },
    /// Memory in no CXL window and no NVDIMM: another socket's DRAM, HBM, EFI
    /// specific-purpose memory or an emulated node.
    NotCxl,
}

impl Backing {
    /// Whether this is CXL memory.
    pub fn is_cxl(&self) -> bool {
        matches!(self, Backing::CxlRegion { .. } | Backing::CxlWindow { .. })
    }

    /// Whether this is a GPU's memory onlined by its driver (NVIDIA's, AMD's).
    pub fn is_gpu(&self) -> bool {
        match self {
            Backing::Driver { resource } => {
                let r = resource.to_ascii_lowercase();
                r.contains("nvidia") || r.contains("amdgpu")
            }
            _ => false,
        }
    }

    /// One line for people: `CXL pmem region1 (1-way: mem0 serial 0x1234 at 0000:0d:00.0)`.
    pub fn describe(&self) -> String {
        match self {
            Backing::CxlRegion {
                region,
                mode,
                interleave_ways,
                memdevs,
                ..
            } => {
                let devs: Vec<String> = memdevs
                    .iter()
                    .map(|m| {
                        let mut s = m.memdev.clone();
                        if let Some(sn) = &m.serial {
                            s.push_str(&format!(" serial {sn}"));
                        }
                        if let Some(p) = &m.pci {
                            s.push_str(&format!(" at {p}"));
                        }
                        s
                    })
                    .collect();
                format!(
                    "CXL {}{region} ({}-way: {})",
                    mode.as_ref().map_or(String::new(), |m| format!("{m} ")),
                    interleave_ways.map_or("?".into(), |w| w.to_string()),
                    if devs.is_empty() {
                        "memory devices unknown".into()
                    } else {
                        devs.join(", ")
                    }
                )
            }
            Backing::CxlWindow { window } => format!(
                "CXL window {window} with no region (programmed by firmware: the device is not named)"
            ),
            Backing::Nvdimm { nd_region } => {
                format!("NVDIMM persistent memory (nd {nd_region}), not CXL")
            }
            Backing::Driver { resource } if self.is_gpu() => format!(
                "GPU memory onlined by its driver (/proc/iomem: {resource}), not CXL: far memory of the GPU"
            ),
            Backing::Driver { resource } => format!(
                "memory onlined by a driver (/proc/iomem: {resource}), not CXL"
            ),
            Backing::NotCxl => "not CXL (in no CXL window: another socket's memory, HBM, or emulated)".into(),
        }
    }
}

/// How much of a node's online memory each backing holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct BackingShare {
    pub backing: Backing,
    /// Online bytes of the node in it.
    pub bytes: u64,
}

/// An address range `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// The name of what a sysfs link points to.
fn link_name(p: &Path) -> Option<String> {
    fs::read_link(p)
        .ok()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// Entries of a bus directory whose names start with `prefix` and then a digit, with
/// their resolved directories (relative links resolved against the tree, so a copied
/// tree resolves inside itself).
fn bus_devices(root: &Path, bus: &str, prefix: &str) -> Vec<(String, PathBuf)> {
    let base = root.join("sys/bus").join(bus).join("devices");
    let Ok(rd) = fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut v: Vec<(String, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix(prefix)?;
            if !rest.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let dir = fs::canonicalize(e.path()).ok()?;
            Some((name, dir))
        })
        .collect();
    v.sort_by_key(|a| natural_key(&a.0));
    v
}

/// Sort key that orders `region2` before `region10`.
fn natural_key(s: &str) -> (String, Vec<u64>) {
    let prefix: String = s.chars().take_while(|c| !c.is_ascii_digit()).collect();
    let nums = s[prefix.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse().ok())
        .collect();
    (prefix, nums)
}

use crate::pci::is_pci_address;

impl CxlBus {
    /// Reads the CXL bus below `root` (`/` on a real machine).
    pub fn read(root: &Path) -> CxlBus {
        let decoders: Vec<Decoder> = bus_devices(root, "cxl", "decoder")
            .into_iter()
            .map(|(name, dir)| read_decoder(name, &dir))
            .collect();
        // Endpoint port name -> memdev name, through the port's `uport` link.
        let endpoints: Vec<(String, String, PathBuf)> = bus_devices(root, "cxl", "endpoint")
            .into_iter()
            .filter_map(|(name, dir)| Some((name, link_name(&dir.join("uport"))?, dir)))
            .collect();
        let memdevs = bus_devices(root, "cxl", "mem")
            .into_iter()
            .map(|(name, dir)| read_memdev(name, &dir, &endpoints))
            .collect();
        let regions = bus_devices(root, "cxl", "region")
            .into_iter()
            .map(|(name, dir)| read_region(name, &dir, &decoders, &endpoints))
            .collect();
        CxlBus {
            memdevs,
            decoders,
            regions,
        }
    }

    /// Whether the machine shows any CXL object.
    pub fn is_empty(&self) -> bool {
        self.memdevs.is_empty() && self.decoders.is_empty() && self.regions.is_empty()
    }

    /// The memory device named `name`.
    pub fn memdev(&self, name: &str) -> Option<&Memdev> {
        self.memdevs.iter().find(|m| m.name == name)
    }

    /// The region named `name`.
    pub fn region(&self, name: &str) -> Option<&CxlRegion> {
        self.regions.iter().find(|r| r.name == name)
    }

    /// The regions a memory device takes part in.
    pub fn regions_of(&self, memdev: &str) -> Vec<&CxlRegion> {
        self.regions
            .iter()
            .filter(|r| {
                r.targets
                    .iter()
                    .any(|t| t.memdev.as_deref() == Some(memdev))
            })
            .collect()
    }

    /// The fixed memory windows (root decoders).
    pub fn windows(&self) -> impl Iterator<Item = &Decoder> {
        self.decoders.iter().filter(|d| d.kind == DecoderKind::Root)
    }

    /// What backs the address range `r`: the CXL region holding it, else the CXL
    /// window, else `None` (not CXL; the caller knows whether it is an NVDIMM).
    pub fn backing_of(&self, r: Range) -> Option<Backing> {
        let inside = |start: Option<u64>, size: u64| {
            start.is_some_and(|s| size > 0 && r.start >= s && r.end <= s.saturating_add(size))
        };
        if let Some(reg) = self.regions.iter().find(|g| inside(g.start, g.size_bytes)) {
            return Some(self.region_backing(reg));
        }
        self.windows()
            .find(|w| inside(w.start, w.size_bytes))
            .map(|w| Backing::CxlWindow {
                window: w.name.clone(),
            })
    }

    /// The [`Backing`] that names a region and its devices.
    pub fn region_backing(&self, reg: &CxlRegion) -> Backing {
        Backing::CxlRegion {
            region: reg.name.clone(),
            mode: reg.mode.clone(),
            interleave_ways: reg.interleave_ways,
            interleave_granularity_bytes: reg.interleave_granularity_bytes,
            window: reg.root_decoder.clone(),
            memdevs: reg
                .targets
                .iter()
                .filter_map(|t| {
                    let name = t.memdev.as_ref()?;
                    let m = self.memdev(name);
                    Some(MemdevRef {
                        memdev: name.clone(),
                        serial: m.and_then(|m| m.serial.clone()),
                        pci: m.and_then(|m| m.pci.clone()),
                        position: t.position,
                    })
                })
                .collect(),
        }
    }
}

fn read_decoder(name: String, dir: &Path) -> Decoder {
    let kind = match read_trim(&dir.join("devtype")).as_deref() {
        Some("cxl_decoder_root") => DecoderKind::Root,
        Some("cxl_decoder_switch") => DecoderKind::Switch,
        Some("cxl_decoder_endpoint") => DecoderKind::Endpoint,
        _ => DecoderKind::Other,
    };
    let nonempty = |s: Option<String>| s.filter(|s| !s.is_empty());
    Decoder {
        kind,
        port: dir
            .parent()
            .and_then(|p| p.file_name())
            .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
        start: read_u64(&dir.join("start")),
        size_bytes: read_u64(&dir.join("size")).unwrap_or(0),
        interleave_ways: read_u64(&dir.join("interleave_ways")).map(|v| v as u32),
        interleave_granularity_bytes: read_u64(&dir.join("interleave_granularity")),
        target_list: nonempty(read_trim(&dir.join("target_list"))),
        region: nonempty(read_trim(&dir.join("region"))),
        mode: nonempty(read_trim(&dir.join("mode"))).filter(|m| m != "none"),
        name,
    }
}

/// The components of `p` from the first one starting with `prefix` on.
fn components_from(p: &Path, prefix: &str) -> Vec<String> {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .skip_while(|c| !c.starts_with(prefix))
        .collect()
}

fn read_memdev(name: String, dir: &Path, endpoints: &[(String, String, PathBuf)]) -> Memdev {
    let parent = dir.parent();
    let pci = parent
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| is_pci_address(n));
    let pci_path = match (&pci, parent) {
        (Some(_), Some(p)) => components_from(p, "pci"),
        _ => Vec::new(),
    };
    // The endpoint port whose uport is this memdev: its path below the root, and the port
    // right under the root, the host bridge's, whose uport names the bridge.
    let endpoint = endpoints.iter().find(|(_, m, _)| *m == name).map(|e| &e.2);
    let ports = endpoint.map_or_else(Vec::new, |ep| components_from(ep, "root"));
    let host_bridge = endpoint.and_then(|ep| {
        ep.ancestors()
            .find(|a| {
                a.parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|n| n.to_string_lossy().starts_with("root"))
            })
            .and_then(|hb| link_name(&hb.join("uport")))
    });
    let qos =
        |part: &str| read_trim(&dir.join(part).join("qos_class")).and_then(|s| s.parse().ok());
    Memdev {
        ram_qos_class: qos("ram"),
        pmem_qos_class: qos("pmem"),
        serial: read_trim(&dir.join("serial")),
        ram_bytes: read_u64(&dir.join("ram/size")).unwrap_or(0),
        pmem_bytes: read_u64(&dir.join("pmem/size")).unwrap_or(0),
        firmware_version: read_trim(&dir.join("firmware_version")),
        link: match (&pci, parent) {
            (Some(_), Some(p)) => Some(Link::read(p)),
            _ => None,
        },
        pci,
        pci_path,
        ports,
        host_bridge,
        name,
    }
}

fn read_region(
    name: String,
    dir: &Path,
    decoders: &[Decoder],
    endpoints: &[(String, String, PathBuf)],
) -> CxlRegion {
    let ways = read_u64(&dir.join("interleave_ways")).map(|v| v as u32);
    let mut targets = Vec::new();
    // Positions 0..ways (up to 16 when the kernel does not say).
    for k in 0..ways.unwrap_or(16) {
        let Some(dec) = read_trim(&dir.join(format!("target{k}"))).filter(|s| !s.is_empty()) else {
            continue;
        };
        let port = decoders
            .iter()
            .find(|d| d.name == dec)
            .map(|d| d.port.clone());
        let memdev = port.and_then(|p| {
            endpoints
                .iter()
                .find(|(ep, _, _)| *ep == p)
                .map(|(_, m, _)| m.clone())
        });
        targets.push(RegionTarget {
            position: k,
            decoder: dec,
            memdev,
        });
    }
    // Kernels before the region `mode` attribute: a pmem region has a pmem_regionN child,
    // a ram region a dax_regionN child; else the endpoint decoders' mode.
    let mode = read_trim(&dir.join("mode"))
        .filter(|m| !m.is_empty() && m != "none")
        .or_else(|| {
            let children: Vec<String> = fs::read_dir(dir)
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            if children.iter().any(|c| c.starts_with("pmem_region")) {
                Some("pmem".into())
            } else if children.iter().any(|c| c.starts_with("dax_region")) {
                Some("ram".into())
            } else {
                None
            }
        })
        .or_else(|| {
            targets
                .iter()
                .find_map(|t| decoders.iter().find(|d| d.name == t.decoder)?.mode.clone())
        });
    CxlRegion {
        mode,
        access: read_region_access(dir),
        start: read_u64(&dir.join("resource")),
        size_bytes: read_u64(&dir.join("size")).unwrap_or(0),
        interleave_ways: ways,
        interleave_granularity_bytes: read_u64(&dir.join("interleave_granularity")),
        committed: read_trim(&dir.join("commit")).as_deref() == Some("1"),
        root_decoder: dir
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n.starts_with("decoder")),
        targets,
        name,
    }
}

/// The address ranges of a dax device (`/sys/bus/dax/devices/daxX.Y`): its `mappingN`
/// ranges, or `resource` + `size` on kernels without them.
pub fn dax_ranges(dir: &Path) -> Vec<Range> {
    let mut v = Vec::new();
    for k in 0..64 {
        let m = dir.join(format!("mapping{k}"));
        let (Some(s), Some(e)) = (read_u64(&m.join("start")), read_u64(&m.join("end"))) else {
            break;
        };
        v.push(Range {
            start: s,
            end: e.saturating_add(1),
        });
    }
    if v.is_empty() {
        if let (Some(s), Some(n)) = (read_u64(&dir.join("resource")), read_u64(&dir.join("size"))) {
            if n > 0 {
                v.push(Range {
                    start: s,
                    end: s.saturating_add(n),
                });
            }
        }
    }
    v
}

/// What backs a dax device whose sysfs directory is `dir` (resolved): the CXL region or
/// window holding its first range, else an NVDIMM when it sits under an nd region, else
/// [`Backing::NotCxl`].
pub fn dax_backing(bus: &CxlBus, dir: &Path) -> Backing {
    if let Some(b) = dax_ranges(dir).first().and_then(|r| bus.backing_of(*r)) {
        return b;
    }
    let nd_region = dir
        .ancestors()
        .filter_map(|a| a.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .find(|n| n.starts_with("region"));
    let under_nd = dir
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with("ndbus"));
    match (under_nd, nd_region) {
        (true, Some(r)) => Backing::Nvdimm { nd_region: r },
        _ => Backing::NotCxl,
    }
}

/// The online memory ranges of NUMA node `node`, from its memory blocks
/// (`/sys/devices/system/node/nodeN/memoryM`, `phys_index` x `block_size_bytes`),
/// adjacent blocks merged.
pub fn node_ranges(root: &Path, node: usize) -> Vec<Range> {
    let mem = root.join("sys/devices/system/memory");
    let Some(block) = read_trim(&mem.join("block_size_bytes"))
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
    else {
        return Vec::new();
    };
    let Ok(rd) = fs::read_dir(root.join(format!("sys/devices/system/node/node{node}"))) else {
        return Vec::new();
    };
    let mut idx: Vec<u64> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let m: u64 = name.strip_prefix("memory")?.parse().ok()?;
            let dir = mem.join(&name);
            if read_trim(&dir.join("state")).is_some_and(|s| s != "online") {
                return None;
            }
            // phys_index is hex; the block's number is the fallback.
            Some(
                read_trim(&dir.join("phys_index"))
                    .and_then(|s| u64::from_str_radix(&s, 16).ok())
                    .unwrap_or(m),
            )
        })
        .collect();
    idx.sort_unstable();
    let mut out: Vec<Range> = Vec::new();
    for i in idx {
        // A block past the 64-bit address space (a copied tree can say anything) is none.
        let (Some(s), Some(e)) = (
            i.checked_mul(block),
            i.checked_add(1).and_then(|j| j.checked_mul(block)),
        ) else {
            continue;
        };
        match out.last_mut() {
            Some(r) if r.end == s => r.end = e,
            _ => out.push(Range { start: s, end: e }),
        }
    }
    out
}

/// The driver-managed system RAM of /proc/iomem below `root`: top-level resources named
/// `System RAM (<driver>)` (a GPU driver's memory, virtio-mem, kmem), with their ranges.
/// Unprivileged readers see every address as 0, so nothing matches: not CXL, unnamed.
pub fn driver_ram(root: &Path) -> Vec<(Range, String)> {
    let Some(text) = crate::sysfs::read_table(&root.join("proc/iomem")) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| {
            let (span, name) = l.split_once(" : ")?;
            let name = name.trim();
            if !(name.starts_with("System RAM (") && name.ends_with(')')) {
                return None;
            }
            let (a, b) = span.trim().split_once('-')?;
            let start = u64::from_str_radix(a, 16).ok()?;
            let end = u64::from_str_radix(b, 16).ok()?.checked_add(1)?;
            (end > start && start > 0).then(|| (Range { start, end }, name.to_string()))
        })
        .collect()
}

/// What backs a node's online memory, with bytes per backing (NVDIMM memory onlined by
/// kmem is found through the dax devices `nvdimm_dax`: `(range, nd region)`; memory a
/// driver onlined through `driver_ram`, [`driver_ram`]'s resources).
pub fn node_backing(
    bus: &CxlBus,
    ranges: &[Range],
    nvdimm_dax: &[(Range, String)],
    driver_ram: &[(Range, String)],
) -> Vec<BackingShare> {
    let mut out: Vec<BackingShare> = Vec::new();
    let mut add = |b: Backing, n: u64| match out.iter_mut().find(|s| s.backing == b) {
        Some(s) => s.bytes += n,
        None => out.push(BackingShare {
            backing: b,
            bytes: n,
        }),
    };
    for r in ranges {
        // Blocks are looked up one by one: a merged range may span regions.
        let block = 128 << 20;
        let mut a = r.start;
        while a < r.end {
            let e = (a + block).min(r.end);
            let piece = Range { start: a, end: e };
            let inside = |d: &Range| piece.start >= d.start && piece.end <= d.end;
            let b = bus.backing_of(piece).unwrap_or_else(|| {
                if let Some((_, nd)) = nvdimm_dax.iter().find(|(d, _)| inside(d)) {
                    return Backing::Nvdimm {
                        nd_region: nd.clone(),
                    };
                }
                driver_ram
                    .iter()
                    .find(|(d, _)| inside(d))
                    .map_or(Backing::NotCxl, |(_, r)| Backing::Driver {
                        resource: r.clone(),
                    })
            });
            add(b, e - a);
            a = e;
        }
    }
    out
}

/// One line for a node's backings: `CXL pmem region1 (...)`, or the shares when mixed.
pub fn describe_shares(shares: &[BackingShare]) -> String {
    match shares {
        [] => "backing unknown (no memory block information)".into(),
        [one] => one.backing.describe(),
        many => many
            .iter()
            .map(|s| {
                format!(
                    "{} of {}",
                    crate::units::human_bytes(s.bytes),
                    s.backing.describe()
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        let mut v = vec!["region10", "region2", "region1"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(v, ["region1", "region2", "region10"]);
        assert!(is_pci_address("0000:0d:00.0"));
        assert!(!is_pci_address("pci0000:0c"));
        assert!(!is_pci_address("mem0"));
    }

    #[test]
    fn a_machine_without_cxl_has_an_empty_bus() {
        let d = tempfile::tempdir().unwrap();
        let bus = CxlBus::read(d.path());
        assert!(bus.is_empty());
        assert_eq!(
            bus.backing_of(Range {
                start: 0,
                end: 4096
            }),
            None
        );
        assert!(node_ranges(d.path(), 0).is_empty());
    }

    #[test]
    fn node_shares_split_by_address() {
        let bus = CxlBus {
            memdevs: vec![],
            decoders: vec![Decoder {
                name: "decoder0.0".into(),
                kind: DecoderKind::Root,
                port: "root0".into(),
                start: Some(0x1_0000_0000),
                size_bytes: 0x1_0000_0000,
                interleave_ways: Some(1),
                interleave_granularity_bytes: Some(256),
                target_list: None,
                region: None,
                mode: None,
            }],
            regions: vec![CxlRegion {
                name: "region0".into(),
                mode: Some("ram".into()),
                start: Some(0x1_0000_0000),
                size_bytes: 0x1000_0000,
                interleave_ways: Some(1),
                interleave_granularity_bytes: Some(256),
                committed: true,
                root_decoder: Some("decoder0.0".into()),
                targets: vec![],
                access: vec![],
            }],
        };
        let mib = 1u64 << 20;
        let ranges = [
            // 256 MiB in region0, then 128 MiB in the window only, then 128 MiB outside.
            Range {
                start: 0x1_0000_0000,
                end: 0x1_0000_0000 + 384 * mib,
            },
            Range {
                start: 0x8000_0000,
                end: 0x8000_0000 + 128 * mib,
            },
        ];
        let nv = [(
            Range {
                start: 0x8000_0000,
                end: 0x9000_0000,
            },
            "region7".to_string(),
        )];
        let s = node_backing(&bus, &ranges, &nv, &[]);
        assert_eq!(s.len(), 3, "{s:?}");
        assert!(matches!(&s[0].backing, Backing::CxlRegion { region, .. } if region == "region0"));
        assert_eq!(s[0].bytes, 256 * mib);
        assert!(matches!(&s[1].backing, Backing::CxlWindow { window } if window == "decoder0.0"));
        assert_eq!(s[1].bytes, 128 * mib);
        assert!(matches!(&s[2].backing, Backing::Nvdimm { nd_region } if nd_region == "region7"));
        assert!(!s[2].backing.is_cxl() && s[0].backing.is_cxl() && s[1].backing.is_cxl());
        assert!(describe_shares(&s).contains("256 MiB of CXL ram region0"));
        assert_eq!(
            node_backing(&bus, &ranges[1..], &[], &[])[0].backing,
            Backing::NotCxl
        );
    }
}
