//! PCIe link health: every PCI device with a link, its chain of ports up to the root, and
//! whether its link runs below what both ends can do (`link_degraded`).
//!
//! A device's upstream ports are the PCI addresses in the real path of its sysfs
//! directory (`…/pci0000:00/0000:00:01.0/0000:01:00.0`). A link joins a device that faces
//! upstream (an endpoint, a switch's upstream port) and its immediate upstream port (a
//! root port, a switch's downstream port); a bridge at an even depth below the root bus
//! (a root port, a switch's downstream port) faces down, and its link is judged with the
//! device below it. The link can run at most at the lower of the two ends' maximum speed
//! and width; it is degraded when its current speed or width is below that. A GPU lowers
//! its link speed when idle, so a GPU's link is judged by its width only (its speed is
//! still recorded). Every attribute is read through [`crate::sysfs`]; `Unknown`, a width
//! of 0 or a missing attribute leaves that half of the link unjudged.

use crate::sysfs::ReadError;
use crate::warning::Warning;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The most PCI devices read (a large server has a few hundred functions).
pub const MAX_DEVICES: usize = 4096;

/// The most upstream ports followed from one device (PCIe allows a few switch levels).
pub const MAX_DEPTH: usize = 32;

/// A link's speed and width as one end reports them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkFigures {
    /// `current_link_speed` in GT/s (`None`: not offered or `Unknown`).
    pub current_speed_gts: Option<f64>,
    /// `current_link_width` in lanes (`None`: not offered or 0).
    pub current_width_lanes: Option<u32>,
    /// `max_link_speed` in GT/s.
    pub max_speed_gts: Option<f64>,
    /// `max_link_width` in lanes.
    pub max_width_lanes: Option<u32>,
}

impl LinkFigures {
    /// Whether the device offers any link attribute.
    pub fn any(&self) -> bool {
        self.current_speed_gts.is_some()
            || self.current_width_lanes.is_some()
            || self.max_speed_gts.is_some()
            || self.max_width_lanes.is_some()
    }

    /// `16 GT/s x8 (max 32 GT/s x16)`.
    pub fn describe(&self) -> String {
        format!(
            "{} (max {})",
            speed_width(self.current_speed_gts, self.current_width_lanes),
            speed_width(self.max_speed_gts, self.max_width_lanes)
        )
    }
}

/// One port above a device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortLink {
    /// `DOMAIN:BUS:DEV.FN`.
    pub bdf: String,
    /// What its link attributes say.
    pub link: LinkFigures,
}

/// What a device is, from its class code.
pub fn class_name(class_code: &str) -> &'static str {
    let code = u32::from_str_radix(class_code.trim().trim_start_matches("0x"), 16).unwrap_or(0);
    match (code >> 16, (code >> 8) & 0xff) {
        (0x03, _) => "gpu",
        (0x02, _) => "nic",
        (0x05, 0x02) => "cxl",
        (0x01, 0x08) => "nvme",
        (0x06, _) => "bridge",
        _ => "other",
    }
}

/// One PCI device with a link: its figures, its ports and the verdict on its link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceLink {
    /// `DOMAIN:BUS:DEV.FN`.
    pub bdf: String,
    /// `gpu`, `nic`, `cxl`, `nvme`, `bridge` or `other` ([`class_name`]).
    pub class: String,
    /// The class code (`0x030200`).
    pub class_code: String,
    /// Vendor id (`0x10de`).
    pub vendor: String,
    /// Device id (`0x2335`).
    pub device: String,
    /// Its own link attributes.
    pub link: LinkFigures,
    /// Its upstream ports, the immediate one first, up to the root port.
    pub ports: Vec<PortLink>,
    /// The speed both ends of its link can run (the lower maximum), when judged.
    pub capable_speed_gts: Option<f64>,
    /// The width both ends can run, when judged.
    pub capable_width_lanes: Option<u32>,
    /// Whether its link was judged (it faces upstream, has a port and figures to compare).
    pub judged: bool,
    /// Its link runs below what both ends can do.
    pub degraded: bool,
    /// Why: what it runs at against what it could, or why it was not judged.
    pub reason: String,
}

impl DeviceLink {
    /// What its link runs at: its own current speed and width, else its port's.
    pub fn current(&self) -> (Option<f64>, Option<u32>) {
        let port = self.ports.first().map(|p| &p.link);
        (
            self.link
                .current_speed_gts
                .or(port.and_then(|p| p.current_speed_gts)),
            self.link
                .current_width_lanes
                .or(port.and_then(|p| p.current_width_lanes)),
        )
    }
}

/// `16 GT/s x8`, with `?` for what is unknown.
fn speed_width(speed: Option<f64>, width: Option<u32>) -> String {
    format!(
        "{} x{}",
        speed.map_or("?".into(), gts),
        width.map_or("?".into(), |w| w.to_string())
    )
}

/// `16 GT/s`, `2.5 GT/s`.
pub fn gts(v: f64) -> String {
    format!("{} GT/s", (v * 10.0).round() / 10.0)
}

/// GT/s of a `*_link_speed` attribute (`16.0 GT/s PCIe`, `2.5 GT/s`); `None` for
/// `Unknown`, 0 or anything else.
pub fn parse_speed_gts(s: &str) -> Option<f64> {
    let mut words = s.split_whitespace();
    let v: f64 = words.next()?.parse().ok()?;
    (words.next() == Some("GT/s") && v.is_finite() && v > 0.0).then_some(v)
}

/// Lanes of a `*_link_width` attribute (`16`, `x16`); `None` for 0 or anything else.
pub fn parse_width_lanes(s: &str) -> Option<u32> {
    s.trim()
        .trim_start_matches('x')
        .parse()
        .ok()
        .filter(|&w| w > 0)
}

/// The link attributes of the device directory `dir`.
pub fn read_figures(dir: &Path) -> LinkFigures {
    let attr = |n: &str| crate::sysfs::read_trim(&dir.join(n));
    LinkFigures {
        current_speed_gts: attr("current_link_speed").and_then(|s| parse_speed_gts(&s)),
        current_width_lanes: attr("current_link_width").and_then(|s| parse_width_lanes(&s)),
        max_speed_gts: attr("max_link_speed").and_then(|s| parse_speed_gts(&s)),
        max_width_lanes: attr("max_link_width").and_then(|s| parse_width_lanes(&s)),
    }
}

/// Whether a directory name is a PCI address.
fn is_bdf(name: &str) -> bool {
    super::is_pci_address(name)
}

/// The upstream ports of the device whose real sysfs directory is `real` (immediate
/// first), up to [`MAX_DEPTH`], inside `root_real` only.
fn upstream_dirs(real: &Path, root_real: &Path) -> Vec<PathBuf> {
    real.ancestors()
        .skip(1)
        .take_while(|p| p.starts_with(root_real))
        .take_while(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_bdf))
        .take(MAX_DEPTH)
        .map(Path::to_path_buf)
        .collect()
}

/// The two ends' lower maximum, when both say.
fn lower<T: PartialOrd + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b < a { b } else { a }),
        _ => None,
    }
}

/// Speeds closer than this are the same (sysfs prints one decimal).
const SPEED_EPSILON_GTS: f64 = 0.05;

/// Judges the link of `d` against its immediate port: sets `capable_*`, `judged`,
/// `degraded` and `reason`.
fn judge(d: &mut DeviceLink) {
    let faces_down = d.class == "bridge" && d.ports.len().is_multiple_of(2);
    let Some(port) = d.ports.first().cloned() else {
        d.reason = if d.class == "bridge" {
            "a root port: its link is judged with the device below it".into()
        } else {
            "no upstream port in sysfs (on the root bus): not judged".into()
        };
        return;
    };
    if faces_down {
        d.reason = "a switch downstream port: its link is judged with the device below it".into();
        return;
    }
    let speed = lower(d.link.max_speed_gts, port.link.max_speed_gts);
    let width = lower(d.link.max_width_lanes, port.link.max_width_lanes);
    let (cur_speed, cur_width) = d.current();
    let speed_judged = speed.is_some() && cur_speed.is_some() && d.class != "gpu";
    let width_judged = width.is_some() && cur_width.is_some();
    d.capable_speed_gts = speed;
    d.capable_width_lanes = width;
    if !speed_judged && !width_judged {
        d.reason = format!(
            "not judged: {} (port {} {})",
            d.link.describe(),
            port.bdf,
            port.link.describe()
        );
        return;
    }
    d.judged = true;
    let slow = speed_judged && cur_speed.unwrap() + SPEED_EPSILON_GTS < speed.unwrap();
    let narrow = width_judged && cur_width.unwrap() < width.unwrap();
    d.degraded = slow || narrow;
    let ends = format!(
        "{} max {}, port {} max {}",
        d.bdf,
        speed_width(d.link.max_speed_gts, d.link.max_width_lanes),
        port.bdf,
        speed_width(port.link.max_speed_gts, port.link.max_width_lanes)
    );
    let now = speed_width(cur_speed, cur_width);
    let could = speed_width(speed, width);
    d.reason = if d.degraded {
        format!("runs at {now}, below the {could} both ends can do ({ends})")
    } else {
        let idle = matches!((cur_speed, speed), (Some(c), Some(s)) if c + SPEED_EPSILON_GTS < s);
        let gpu = if d.class == "gpu" && idle {
            "; judged by width: a GPU lowers its link speed when idle"
        } else {
            ""
        };
        format!("at its capability: {now} of {could} ({ends}){gpu}")
    };
}

/// Every PCI device below `root` (`/` on a real machine) that offers a link attribute,
/// sorted by address, each judged. At most [`MAX_DEVICES`] are read; a tree with more is
/// recorded as a refusal for [`crate::sysfs::checked`].
pub fn read(root: &Path) -> Vec<DeviceLink> {
    let base = root.join("sys/bus/pci/devices");
    let Ok(rd) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let root_real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut entries: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .take(MAX_DEVICES + 1)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_bdf))
        .collect();
    if entries.len() > MAX_DEVICES {
        crate::sysfs::record(ReadError::Invalid {
            path: base.clone(),
            what: format!("more than {MAX_DEVICES} PCI devices (refused)"),
        });
        entries.truncate(MAX_DEVICES);
    }
    entries.sort();
    let mut ports: HashMap<PathBuf, LinkFigures> = HashMap::new();
    let mut out = Vec::new();
    for dir in entries {
        let link = read_figures(&dir);
        if !link.any() {
            continue;
        }
        let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        let chain = upstream_dirs(&real, &root_real)
            .into_iter()
            .map(|p| PortLink {
                bdf: p.file_name().unwrap_or_default().to_string_lossy().into(),
                link: ports
                    .entry(p.clone())
                    .or_insert_with(|| read_figures(&p))
                    .clone(),
            })
            .collect();
        let attr = |n: &str| crate::sysfs::read_trim(&dir.join(n)).unwrap_or_default();
        let class_code = attr("class");
        let mut d = DeviceLink {
            bdf: dir.file_name().unwrap_or_default().to_string_lossy().into(),
            class: class_name(&class_code).into(),
            class_code,
            vendor: attr("vendor"),
            device: attr("device"),
            link,
            ports: chain,
            capable_speed_gts: None,
            capable_width_lanes: None,
            judged: false,
            degraded: false,
            reason: String::new(),
        };
        judge(&mut d);
        out.push(d);
    }
    out
}

/// One degraded link: the functions of one device behind one port run below it.
#[derive(Debug, Clone, PartialEq)]
pub struct DegradedLink<'a> {
    /// The first function of the device (the one named).
    pub device: &'a DeviceLink,
    /// How many functions share the link.
    pub functions: usize,
}

impl DegradedLink<'_> {
    /// The upstream port's address.
    pub fn port(&self) -> &str {
        self.device.ports.first().map_or("?", |p| p.bdf.as_str())
    }

    /// `0000:01:00.0 (gpu) at 16 GT/s x8 of 16 GT/s x16, port 0000:00:01.0`: one line.
    pub fn short(&self) -> String {
        let d = self.device;
        let (s, w) = d.current();
        format!(
            "{} ({}) at {} of {}, port {}",
            d.bdf,
            d.class,
            speed_width(s, w),
            speed_width(d.capable_speed_gts, d.capable_width_lanes),
            self.port()
        )
    }

    /// `0000:01:00.0 (gpu 0x10de:0x2335) -> port 0000:00:01.0: runs at …`.
    pub fn describe(&self) -> String {
        let d = self.device;
        let more = match self.functions {
            0 | 1 => String::new(),
            n => format!(", and its {} other functions", n - 1),
        };
        format!(
            "{} ({} {}:{}{more}) -> port {}: {}",
            d.bdf,
            d.class,
            d.vendor,
            d.device,
            self.port(),
            d.reason
        )
    }
}

/// The degraded links of `devices`: one per device (its functions together) and port, in
/// address order.
pub fn degraded(devices: &[DeviceLink]) -> Vec<DegradedLink<'_>> {
    let mut by_link: BTreeMap<(String, String), DegradedLink<'_>> = BTreeMap::new();
    for d in devices.iter().filter(|d| d.degraded) {
        let slot = d.bdf.rsplit_once('.').map_or(d.bdf.as_str(), |(s, _)| s);
        let port = d.ports.first().map_or("", |p| p.bdf.as_str());
        by_link
            .entry((port.to_string(), slot.to_string()))
            .and_modify(|l| l.functions += 1)
            .or_insert(DegradedLink {
                device: d,
                functions: 1,
            });
    }
    by_link.into_values().collect()
}

/// How many links of `devices` were judged (one per device and port, as [`degraded`]).
pub fn judged_links(devices: &[DeviceLink]) -> usize {
    let mut seen = std::collections::BTreeSet::new();
    for d in devices.iter().filter(|d| d.judged) {
        let slot = d.bdf.rsplit_once('.').map_or(d.bdf.as_str(), |(s, _)| s);
        let port = d.ports.first().map_or("", |p| p.bdf.as_str());
        seen.insert((port, slot));
    }
    seen.len()
}

/// The warning code of a degraded link.
pub const LINK_DEGRADED: &str = "link_degraded";

/// A `link_degraded` warning per degraded link, naming both ends.
pub fn warnings(devices: &[DeviceLink]) -> Vec<Warning> {
    degraded(devices)
        .iter()
        .map(|l| Warning {
            code: LINK_DEGRADED.into(),
            message: format!("PCIe link below its capability: {}", l.describe()),
            remediation: format!(
                "reseat the card or move it to a slot wired for its full width; check the BIOS's bifurcation and link-speed settings for the slot of port {}; `lspci -vv -s {}` shows LnkCap and LnkSta",
                l.port(),
                l.device.bdf
            ),
        })
        .collect()
}

/// Writes a fake sysfs PCI tree with links for tests, each device a link in
/// `sys/bus/pci/devices` to its directory below `sys/devices/pci0000:00`:
///
/// * root port 0000:00:01.0 (16 GT/s x16) and a GPU 0000:01:00.0 (16 GT/s x16) at x8:
///   degraded by width;
/// * root port 0000:00:02.0 (32 GT/s x16) and a CXL memory device 0000:02:00.0
///   (32 GT/s x16) at 16 GT/s: degraded by speed;
/// * root port 0000:00:03.0 (16 GT/s x8) and an NVMe drive 0000:03:00.0 (32 GT/s x16) at
///   16 GT/s x8: the port caps it, not degraded;
/// * root port 0000:00:04.0, switch upstream port 0000:04:00.0, downstream port
///   0000:05:00.0 and a NIC 0000:06:00.0, all at 32 GT/s x16: not degraded.
#[doc(hidden)]
pub fn write_fake_links(root: &Path) -> std::io::Result<()> {
    let devices = [
        (
            "0000:00:01.0",
            "0x060400",
            "0x8086",
            "16.0 GT/s PCIe",
            8,
            "16.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:01.0/0000:01:00.0",
            "0x030200",
            "0x10de",
            "16.0 GT/s PCIe",
            8,
            "16.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:02.0",
            "0x060400",
            "0x8086",
            "16.0 GT/s PCIe",
            16,
            "32.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:02.0/0000:02:00.0",
            "0x050210",
            "0x8086",
            "16.0 GT/s PCIe",
            16,
            "32.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:03.0",
            "0x060400",
            "0x8086",
            "16.0 GT/s PCIe",
            8,
            "16.0 GT/s PCIe",
            8,
        ),
        (
            "0000:00:03.0/0000:03:00.0",
            "0x010802",
            "0x144d",
            "16.0 GT/s PCIe",
            8,
            "32.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:04.0",
            "0x060400",
            "0x8086",
            "32.0 GT/s PCIe",
            16,
            "32.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:04.0/0000:04:00.0",
            "0x060400",
            "0x1000",
            "32.0 GT/s PCIe",
            16,
            "32.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:04.0/0000:04:00.0/0000:05:00.0",
            "0x060400",
            "0x1000",
            "32.0 GT/s PCIe",
            16,
            "32.0 GT/s PCIe",
            16,
        ),
        (
            "0000:00:04.0/0000:04:00.0/0000:05:00.0/0000:06:00.0",
            "0x020000",
            "0x15b3",
            "32.0 GT/s PCIe",
            16,
            "32.0 GT/s PCIe",
            16,
        ),
    ];
    let bus = root.join("sys/bus/pci/devices");
    std::fs::create_dir_all(&bus)?;
    for (rel, class, vendor, cur, cur_w, max, max_w) in devices {
        let dir = root.join("sys/devices/pci0000:00").join(rel);
        std::fs::create_dir_all(&dir)?;
        for (name, body) in [
            ("class", class.to_string()),
            ("vendor", vendor.to_string()),
            ("device", "0x0001".to_string()),
            ("current_link_speed", cur.to_string()),
            ("current_link_width", cur_w.to_string()),
            ("max_link_speed", max.to_string()),
            ("max_link_width", max_w.to_string()),
        ] {
            std::fs::write(dir.join(name), format!("{body}\n"))?;
        }
        let bdf = rel.rsplit('/').next().unwrap_or(rel);
        std::os::unix::fs::symlink(
            Path::new("../../../devices/pci0000:00").join(rel),
            bus.join(bdf),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
