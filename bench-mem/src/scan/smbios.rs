//! The DIMMs behind a physical address, where the firmware's SMBIOS tables say: each
//! Memory Device Mapped Address structure (type 20) maps an address range to a Memory
//! Device (type 17), whose Device Locator and Bank Locator strings name the DIMM slot
//! (`DIMM_A1`, `P0 CHANNEL A`). Linux shows the structures as
//! `/sys/firmware/dmi/entries/T-N/raw` (readable by root). Type 20 is optional: many
//! platforms leave it out, and then no DIMM is named. EDAC's sysfs (`edac/mc/mcN/dimmM`)
//! names the DIMMs and their sizes but maps no address to them, so it cannot name a
//! range's DIMM.

use std::path::Path;

/// An address range mapped to one memory device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// The device's Device Locator (the slot), if the structure names one.
    pub locator: Option<String>,
    /// Its Bank Locator, if any.
    pub bank: Option<String>,
    /// Its position in an interleave (1-based; `None`: not interleaved or unknown).
    pub interleave_position: Option<u8>,
}

impl Mapped {
    /// The DIMM for people: `DIMM_A1 (P0 CHANNEL A)`, or its handle's lack of a name.
    pub fn name(&self) -> String {
        match (&self.locator, &self.bank) {
            (Some(l), Some(b)) => format!("{l} ({b})"),
            (Some(l), None) => l.clone(),
            (None, Some(b)) => b.clone(),
            (None, None) => "unnamed memory device".into(),
        }
    }
}

/// One structure's formatted area and strings.
struct Structure<'a> {
    kind: u8,
    handle: u16,
    formatted: &'a [u8],
    strings: Vec<String>,
}

fn parse(raw: &[u8]) -> Option<Structure<'_>> {
    let len = *raw.get(1)? as usize;
    if len < 4 || raw.len() < len {
        return None;
    }
    let formatted = &raw[..len];
    // Strings follow the formatted area, each NUL-terminated, the set ended by a NUL.
    let strings = raw[len..]
        .split(|&b| b == 0)
        .take_while(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).trim().to_string())
        .collect();
    Some(Structure {
        kind: raw[0],
        handle: u16::from_le_bytes([raw[2], raw[3]]),
        formatted,
        strings,
    })
}

impl Structure<'_> {
    fn u8_at(&self, off: usize) -> Option<u8> {
        self.formatted.get(off).copied()
    }
    fn u16_at(&self, off: usize) -> Option<u16> {
        Some(u16::from_le_bytes(
            self.formatted.get(off..off + 2)?.try_into().ok()?,
        ))
    }
    fn u32_at(&self, off: usize) -> Option<u32> {
        Some(u32::from_le_bytes(
            self.formatted.get(off..off + 4)?.try_into().ok()?,
        ))
    }
    fn u64_at(&self, off: usize) -> Option<u64> {
        Some(u64::from_le_bytes(
            self.formatted.get(off..off + 8)?.try_into().ok()?,
        ))
    }
    /// String number `n` of the byte at `off` (0: none).
    fn string_at(&self, off: usize) -> Option<String> {
        let n = self.u8_at(off)? as usize;
        let s = self.strings.get(n.checked_sub(1)?)?;
        (!s.is_empty()).then(|| s.clone())
    }
}

/// A type 20 structure: (start, end, device handle, interleave position).
fn mapped_range(s: &Structure<'_>) -> Option<(u64, u64, u16, Option<u8>)> {
    let start_kib = s.u32_at(0x04)?;
    let end_kib = s.u32_at(0x08)?;
    let (start, end) = if start_kib == u32::MAX {
        // SMBIOS 2.7+: the extended addresses, in bytes (the end inclusive).
        (s.u64_at(0x13)?, s.u64_at(0x1B)?.checked_add(1)?)
    } else {
        (start_kib as u64 * 1024, (end_kib as u64 + 1) * 1024)
    };
    let position = s.u8_at(0x11).filter(|&p| p != 0 && p != 0xFF);
    (end > start).then_some((start, end, s.u16_at(0x0C)?, position))
}

/// Every address range SMBIOS maps to a memory device, from the structures below `root`
/// (`sys/firmware/dmi/entries`); empty when the tables are unreadable or have no type 20.
pub fn read(root: &Path) -> Vec<Mapped> {
    let dir = root.join("sys/firmware/dmi/entries");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut raws: Vec<(String, Vec<u8>)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("17-") || n.starts_with("20-"))
        .filter_map(|n| {
            // A structure is at most a few hundred bytes: bound what is read.
            let raw = read_bounded(&dir.join(&n).join("raw"), 4096)?;
            Some((n, raw))
        })
        .collect();
    raws.sort();
    let structures: Vec<Structure<'_>> = raws.iter().filter_map(|(_, r)| parse(r)).collect();
    let device = |h: u16| structures.iter().find(|s| s.kind == 17 && s.handle == h);
    let mut out: Vec<Mapped> = structures
        .iter()
        .filter(|s| s.kind == 20)
        .filter_map(mapped_range)
        .map(|(start, end, handle, position)| {
            let d = device(handle);
            Mapped {
                start,
                end,
                locator: d.and_then(|d| d.string_at(0x10)),
                bank: d.and_then(|d| d.string_at(0x11)),
                interleave_position: position,
            }
        })
        .collect();
    out.sort_by_key(|m| (m.start, m.end));
    out
}

fn read_bounded(p: &Path, most: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut v = Vec::new();
    std::fs::File::open(p)
        .ok()?
        .take(most)
        .read_to_end(&mut v)
        .ok()?;
    Some(v)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A type 17 structure with handle `h`, Device Locator `loc` and Bank Locator `bank`.
    pub(crate) fn type17(h: u16, loc: &str, bank: &str) -> Vec<u8> {
        let mut v = vec![0u8; 0x28];
        v[0] = 17;
        v[1] = 0x28;
        v[2..4].copy_from_slice(&h.to_le_bytes());
        v[0x0C..0x0E].copy_from_slice(&0x4000u16.to_le_bytes()); // 16 GiB in MB
        v[0x10] = 1;
        v[0x11] = 2;
        for s in [loc, bank] {
            v.extend(s.as_bytes());
            v.push(0);
        }
        v.push(0);
        v
    }

    /// A type 20 structure mapping `[start, end)` to device `dev` at interleave position
    /// `pos`, in the extended form when `extended`.
    pub(crate) fn type20(
        h: u16,
        start: u64,
        end: u64,
        dev: u16,
        pos: u8,
        extended: bool,
    ) -> Vec<u8> {
        let mut v = vec![0u8; 0x23];
        v[0] = 20;
        v[1] = 0x23;
        v[2..4].copy_from_slice(&h.to_le_bytes());
        if extended {
            v[0x04..0x08].copy_from_slice(&u32::MAX.to_le_bytes());
            v[0x13..0x1B].copy_from_slice(&start.to_le_bytes());
            v[0x1B..0x23].copy_from_slice(&(end - 1).to_le_bytes());
        } else {
            v[0x04..0x08].copy_from_slice(&((start / 1024) as u32).to_le_bytes());
            v[0x08..0x0C].copy_from_slice(&((end / 1024 - 1) as u32).to_le_bytes());
        }
        v[0x0C..0x0E].copy_from_slice(&dev.to_le_bytes());
        v[0x11] = pos;
        v.extend([0, 0]);
        v
    }

    /// Writes `structures` (name, raw) as `sys/firmware/dmi/entries/NAME/raw` below `root`.
    pub(crate) fn write(root: &Path, structures: &[(&str, Vec<u8>)]) {
        for (name, raw) in structures {
            let d = root.join("sys/firmware/dmi/entries").join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("raw"), raw).unwrap();
        }
    }

    #[test]
    fn type_20_ranges_name_their_type_17_dimms() {
        let d = tempfile::tempdir().unwrap();
        let g = 1u64 << 30;
        write(
            d.path(),
            &[
                ("17-0", type17(0x1100, "DIMM_A1", "P0 CHANNEL A")),
                ("17-1", type17(0x1101, "DIMM_B1", "P0 CHANNEL B")),
                // Two DIMMs interleaved over the first 4 GiB, then one of them alone.
                ("20-0", type20(0x1400, 0, 4 * g, 0x1100, 1, false)),
                ("20-1", type20(0x1401, 0, 4 * g, 0x1101, 2, false)),
                ("20-2", type20(0x1402, 4 * g, 600 * g, 0x1100, 0, true)),
                // Something that is not an SMBIOS structure is left out.
                ("20-3", vec![20, 2]),
            ],
        );
        let m = read(d.path());
        assert_eq!(m.len(), 3, "{m:#?}");
        assert_eq!((m[0].start, m[0].end), (0, 4 * g));
        assert_eq!(m[0].name(), "DIMM_A1 (P0 CHANNEL A)");
        assert_eq!(m[0].interleave_position, Some(1));
        assert_eq!(m[1].locator.as_deref(), Some("DIMM_B1"));
        assert_eq!((m[2].start, m[2].end), (4 * g, 600 * g));
        assert_eq!(m[2].interleave_position, None);
        assert!(read(&d.path().join("none")).is_empty());
    }
}
