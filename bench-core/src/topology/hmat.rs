//! What the firmware advertises about a memory node, as Linux exposes it (numaperf,
//! `Documentation/admin-guide/mm/numaperf.rst`): the access coordinates the kernel took
//! from the ACPI HMAT (and, for CXL memory onlined as a node, computed from the devices'
//! CDAT and the HMAT of their host bridge's generic port), and the memory-side caches.
//!
//! * `nodeN/accessC/initiators/{read,write}_{latency,bandwidth}`: latency in nanoseconds,
//!   bandwidth in MB/s (the kernel's unit; taken as 10^6 bytes/s), of node N's memory
//!   from the initiator nodes linked as `accessC/initiators/nodeX`. Access class 0 is the
//!   best performance from any initiator (CPUs or devices), class 1 from CPU initiators
//!   only.
//! * `nodeN/memory_side_cache/indexM/{size,line_size,indexing,write_policy}`: a cache in
//!   front of node N's memory (bytes, bytes, 0 direct-mapped / 1 indexed / 2 other,
//!   0 write-back / 1 write-through / 2 other).
//!
//! Absent files are "not advertised" (`None`), never zero; a partial table keeps what is
//! present. QEMU's `-machine hmat=on` guests show the same files.

use crate::sysfs::{read_trim, read_u64};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// The performance figures of one access class (a node's or a CXL region's): `None`
/// where the kernel does not advertise one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold, units in the names (MB/s as the kernel writes it).
#[allow(missing_docs)]
pub struct AccessCoords {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_latency_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_latency_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bandwidth_mbs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bandwidth_mbs: Option<u64>,
}

impl AccessCoords {
    /// Reads the four figures in `dir` (`nodeN/accessC/initiators`, `regionZ/accessC`).
    pub fn read(dir: &Path) -> AccessCoords {
        AccessCoords {
            read_latency_ns: read_u64(&dir.join("read_latency")),
            write_latency_ns: read_u64(&dir.join("write_latency")),
            read_bandwidth_mbs: read_u64(&dir.join("read_bandwidth")),
            write_bandwidth_mbs: read_u64(&dir.join("write_bandwidth")),
        }
    }

    /// Whether no figure is advertised.
    pub fn is_empty(&self) -> bool {
        *self == AccessCoords::default()
    }

    /// The advertised read bandwidth in GB/s (MB/s / 1000).
    pub fn read_bandwidth_gbs(&self) -> Option<f64> {
        self.read_bandwidth_mbs.map(|v| v as f64 / 1000.0)
    }
}

/// One access class of a memory node (`nodeN/accessC`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeAccess {
    /// 0: the best initiators of any kind; 1: the best CPU initiators.
    pub class: u8,
    /// The initiator nodes the figures are for (`accessC/initiators/nodeX` links).
    pub initiators: Vec<usize>,
    /// The figures (`accessC/initiators/*`).
    #[serde(flatten)]
    pub coords: AccessCoords,
}

/// One memory-side cache of a node (`nodeN/memory_side_cache/indexM`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct MemorySideCache {
    /// M of `indexM` (the cache level, 1 nearest the CPUs).
    pub index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_bytes: Option<u64>,
    /// `direct-mapped`, `indexed` or `other`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexing: Option<String>,
    /// `write-back`, `write-through` or `other`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_policy: Option<String>,
}

/// Numbered entries `prefix<N>` of `dir`, sorted by N.
fn numbered(dir: &Path, prefix: &str) -> Vec<u32> {
    let mut v: Vec<u32> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// The access classes of node directory `node_dir` (`.../node/nodeN`), class order;
/// empty when the kernel advertises none.
pub fn read_access(node_dir: &Path) -> Vec<NodeAccess> {
    numbered(node_dir, "access")
        .into_iter()
        .filter_map(|c| {
            let class = u8::try_from(c).ok()?;
            let dir = node_dir.join(format!("access{c}/initiators"));
            let initiators = numbered(&dir, "node")
                .into_iter()
                .map(|n| n as usize)
                .collect();
            Some(NodeAccess {
                class,
                initiators,
                coords: AccessCoords::read(&dir),
            })
        })
        .collect()
}

/// The memory-side caches of node directory `node_dir`, index order.
pub fn read_memory_side_caches(node_dir: &Path) -> Vec<MemorySideCache> {
    let base = node_dir.join("memory_side_cache");
    let word = |v: Option<u64>, names: [&str; 2]| {
        v.map(|v| match v {
            0 => names[0].to_string(),
            1 => names[1].to_string(),
            _ => "other".to_string(),
        })
    };
    numbered(&base, "index")
        .into_iter()
        .map(|i| {
            let dir = base.join(format!("index{i}"));
            MemorySideCache {
                index: i,
                size_bytes: read_u64(&dir.join("size")),
                line_bytes: read_u64(&dir.join("line_size")),
                indexing: word(
                    read_trim(&dir.join("indexing")).and_then(|s| s.parse().ok()),
                    ["direct-mapped", "indexed"],
                ),
                write_policy: word(
                    read_trim(&dir.join("write_policy")).and_then(|s| s.parse().ok()),
                    ["write-back", "write-through"],
                ),
            }
        })
        .collect()
}

/// What a node advertises for CPUs of `initiator` node: access class 1 (CPU initiators)
/// when the kernel has it, else class 0, preferring a class that lists `initiator`. The
/// flag says whether the chosen class lists it (else the figures are another
/// initiator's). `None` when the node advertises no figure at all.
pub fn advertised_for(access: &[NodeAccess], initiator: usize) -> Option<(&NodeAccess, bool)> {
    let usable = |a: &&NodeAccess| !a.coords.is_empty();
    let by_class = |c: u8| access.iter().filter(usable).find(|a| a.class == c);
    let listed = |a: &NodeAccess| a.initiators.contains(&initiator);
    for c in [1, 0] {
        if let Some(a) = by_class(c).filter(|a| listed(a)) {
            return Some((a, true));
        }
    }
    by_class(1)
        .or_else(|| by_class(0))
        .or_else(|| access.iter().find(usable))
        .map(|a| (a, false))
}

/// Writes node `node`'s numaperf files below `root` for tests: access class `class`
/// from `initiators`, each `Some` figure as a file (`None` writes nothing).
#[doc(hidden)]
pub fn write_fake_access(
    root: &Path,
    node: usize,
    class: u8,
    initiators: &[usize],
    coords: &AccessCoords,
) -> std::io::Result<()> {
    let dir = root.join(format!(
        "sys/devices/system/node/node{node}/access{class}/initiators"
    ));
    fs::create_dir_all(&dir)?;
    for i in initiators {
        // As the kernel links them: to the initiator node's directory.
        let link = dir.join(format!("node{i}"));
        if fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(format!("../../../node{i}"), link)?;
        }
    }
    let files = [
        ("read_latency", coords.read_latency_ns),
        ("write_latency", coords.write_latency_ns),
        ("read_bandwidth", coords.read_bandwidth_mbs),
        ("write_bandwidth", coords.write_bandwidth_mbs),
    ];
    for (name, v) in files {
        if let Some(v) = v {
            fs::write(dir.join(name), format!("{v}\n"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coords(rl: Option<u64>, rb: Option<u64>) -> AccessCoords {
        AccessCoords {
            read_latency_ns: rl,
            write_latency_ns: rl,
            read_bandwidth_mbs: rb,
            write_bandwidth_mbs: rb,
        }
    }

    #[test]
    fn full_partial_and_absent_tables() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_fake_access(root, 1, 0, &[0], &coords(Some(250), Some(60000))).unwrap();
        // Class 1: latency only (a partial table).
        let partial = AccessCoords {
            read_latency_ns: Some(270),
            ..Default::default()
        };
        write_fake_access(root, 1, 1, &[0], &partial).unwrap();
        let n1 = root.join("sys/devices/system/node/node1");
        let a = read_access(&n1);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].class, 0);
        assert_eq!(a[0].initiators, vec![0]);
        assert_eq!(a[0].coords.read_bandwidth_mbs, Some(60000));
        assert_eq!(a[0].coords.read_bandwidth_gbs(), Some(60.0));
        assert_eq!(a[1].coords.read_latency_ns, Some(270));
        assert_eq!(
            a[1].coords.read_bandwidth_mbs, None,
            "absent is None, not 0"
        );
        assert_eq!(a[1].coords.write_latency_ns, None);
        // A node without accessN directories advertises nothing.
        let n0 = root.join("sys/devices/system/node/node0");
        fs::create_dir_all(&n0).unwrap();
        assert!(read_access(&n0).is_empty());
        assert!(read_memory_side_caches(&n0).is_empty());
    }

    #[test]
    fn memory_side_caches() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path().join("node1/memory_side_cache/index1");
        fs::create_dir_all(&c).unwrap();
        fs::write(c.join("size"), "4294967296\n").unwrap();
        fs::write(c.join("line_size"), "64\n").unwrap();
        fs::write(c.join("indexing"), "0\n").unwrap();
        fs::write(c.join("write_policy"), "1\n").unwrap();
        let c2 = dir.path().join("node1/memory_side_cache/index2");
        fs::create_dir_all(&c2).unwrap();
        fs::write(c2.join("indexing"), "2\n").unwrap();
        let m = read_memory_side_caches(&dir.path().join("node1"));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].index, 1);
        assert_eq!(m[0].size_bytes, Some(4 << 30));
        assert_eq!(m[0].line_bytes, Some(64));
        assert_eq!(m[0].indexing.as_deref(), Some("direct-mapped"));
        assert_eq!(m[0].write_policy.as_deref(), Some("write-through"));
        assert_eq!(m[1].size_bytes, None);
        assert_eq!(m[1].indexing.as_deref(), Some("other"));
        assert_eq!(m[1].write_policy, None);
    }

    #[test]
    fn cpu_class_first_and_the_initiator_listed() {
        let a = |class, init: Vec<usize>, c| NodeAccess {
            class,
            initiators: init,
            coords: c,
        };
        let both = vec![
            a(0, vec![0], coords(Some(100), Some(1000))),
            a(1, vec![0], coords(Some(110), Some(900))),
        ];
        let (got, listed) = advertised_for(&both, 0).unwrap();
        assert_eq!((got.class, listed), (1, true));
        // Initiator 2 is listed nowhere: class 1's figures, flagged.
        let (got, listed) = advertised_for(&both, 2).unwrap();
        assert_eq!((got.class, listed), (1, false));
        // Only class 0 lists the initiator.
        let split = vec![
            a(0, vec![2], coords(Some(100), None)),
            a(1, vec![0], coords(Some(110), None)),
        ];
        assert_eq!(advertised_for(&split, 2).unwrap().0.class, 0);
        // Empty tables advertise nothing.
        let empty = vec![a(1, vec![0], AccessCoords::default())];
        assert!(advertised_for(&empty, 0).is_none());
        assert!(advertised_for(&[], 0).is_none());
    }
}
