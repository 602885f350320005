//! Where a pool is ([`PoolSource`]: a file, a device-dax or a PCI BAR), which window of
//! it ([`PoolSpec`]) and its mapping ([`PoolMap`]): a bench-core
//! [`Region`] window, mapped through the write guard
//! (`--allow-write` for devices, what the path really is, a BAR whose device has a driver
//! bound refused unless `--force`).

use super::header::{Header, HEADER_BYTES, MAGIC};
use super::PoolError;
use crate::cacheline::invalidate_method;
use bench_core::memory::{guard, Access, MapError, Region, Window, WindowSource};
use bench_core::pci::BarSpec;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Smallest usable window: header plus two 32 KiB rings.
pub const MIN_POOL_BYTES: usize = HEADER_BYTES + 2 * (32 * 1024 + crate::ring::RING_HEADER);
/// Default window length in bytes (32 MiB).
pub const DEFAULT_POOL_BYTES: usize = 32 << 20;

/// Where the pool lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolSource {
    /// A shared file (created when missing).
    File(PathBuf),
    /// A device-dax.
    Dax(PathBuf),
    /// A PCI BAR, by its sysfs resource file (`/sys/bus/pci/devices/<bdf>/resourceN`).
    Pci(PathBuf),
}

impl FromStr for PoolSource {
    type Err = PoolError;
    fn from_str(s: &str) -> Result<Self, PoolError> {
        let (kind, path) = s.split_once(':').unwrap_or(("file", s));
        if path.is_empty() {
            return Err(PoolError::Spec(s.into()));
        }
        match kind {
            "file" => Ok(PoolSource::File(path.into())),
            "dax" => Ok(PoolSource::Dax(path.into())),
            "cxl" => PoolSource::from_cxl(s, &bench_core::topology::Topology::system()),
            "pci" if path.starts_with('/') => Ok(PoolSource::Pci(path.into())),
            "pci" => {
                // The same spelling as `cxlchar pcie` (`pci:DOMAIN:BUS:DEV.FN/BAR`).
                let bar: BarSpec = s.parse().map_err(|_| PoolError::Spec(s.into()))?;
                Ok(PoolSource::Pci(bar.resource_path()))
            }
            _ => Err(PoolError::Spec(s.into())),
        }
    }
}

impl PoolSource {
    /// `cxl:regionN` / `cxl:memN`: the region's devdax device on this machine (a pool is
    /// mapped shared, by other processes or hosts too, so a NUMA node cannot be one).
    pub fn from_cxl(s: &str, topo: &bench_core::topology::Topology) -> Result<Self, PoolError> {
        let cxl = |reason: String| PoolError::Cxl {
            spec: s.into(),
            reason,
        };
        let name = bench_core::memory::CxlName::new(s.strip_prefix("cxl:").unwrap_or(s))
            .map_err(|e| cxl(e.to_string()))?;
        match name.resolve(topo) {
            Ok(bench_core::memory::TargetSpec::Dax(p)) => Ok(PoolSource::Dax(p)),
            Ok(other) => Err(cxl(format!(
                "it is {other}, not a devdax device: a pool must be mapped shared (create a devdax namespace on the region: ndctl create-namespace -m devdax --map=mem)"
            ))),
            Err(bench_core::CoreError::TargetSpec { reason, .. }) => Err(cxl(reason)),
            Err(e) => Err(cxl(e.to_string())),
        }
    }
}

impl std::fmt::Display for PoolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolSource::File(p) => write!(f, "file:{}", p.display()),
            PoolSource::Dax(p) => write!(f, "dax:{}", p.display()),
            PoolSource::Pci(p) => match BarSpec::from_resource_path(p) {
                Some(bar) => write!(f, "{bar}"),
                None => write!(f, "pci:{}", p.display()),
            },
        }
    }
}

/// Role in a two-sided run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Drives the tests and writes the results.
    Leader,
    /// Answers the leader's commands.
    Follower,
}

impl FromStr for Role {
    type Err = PoolError;
    fn from_str(s: &str) -> Result<Self, PoolError> {
        match s {
            "leader" => Ok(Role::Leader),
            "follower" => Ok(Role::Follower),
            _ => Err(PoolError::Role(s.into())),
        }
    }
}

/// A pool window and how to open it.
#[derive(Debug, Clone)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct PoolSpec {
    pub source: PoolSource,
    /// Byte offset of the window (a multiple of the page size).
    pub offset: u64,
    /// Window length (bytes).
    pub len: usize,
    /// Writing into dax/pci is allowed.
    pub allow_write: bool,
    /// Overwrite foreign data / take over a live run.
    pub force: bool,
    /// The file is cxlchar's own, created here and now (the default pool in /dev/shm):
    /// created exclusively, and written without `allow_write`.
    pub scratch: bool,
}

/// A mapped pool window: a bench-core [`Region`] (its one owner of mappings).
#[derive(Debug)]
pub struct PoolMap {
    region: Region,
    name: String,
}

impl PoolSpec {
    /// A fresh scratch file of `len` bytes for this process (`/dev/shm`, else the
    /// temporary directory): cxlchar's own pool when no `--pool` is given, created
    /// exclusively and removed by its user.
    pub fn scratch_file(len: usize) -> PoolSpec {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let path = dir.join(format!("cxlchar-pool-{}-{nanos}", std::process::id()));
        PoolSpec {
            source: PoolSource::File(path),
            offset: 0,
            len,
            allow_write: false,
            force: false,
            scratch: true,
        }
    }

    /// The window this spec names, for the write guard: a file pool is created and grown
    /// as needed (a user's file only with `allow_write`); a BAR named by its resource file
    /// is the BAR that file is. Its magic is the pool header's: the guard refuses a window
    /// holding anything but zeros or a pool header, before writing, unless `force`.
    pub fn window(&self, root: &Path) -> Result<Window, MapError> {
        let source = match &self.source {
            PoolSource::File(p) if self.scratch => WindowSource::Scratch(p.clone()),
            PoolSource::File(p) => WindowSource::File {
                path: p.clone(),
                create: true,
            },
            PoolSource::Dax(p) => WindowSource::Dax(p.clone()),
            PoolSource::Pci(p) => {
                // Consent first: without it, nothing about the device is looked at.
                guard::require_write(&self.source.to_string(), self.access())?;
                let (bar, wc) = guard::check_bar_path(p, root)?;
                WindowSource::Bar { bar, wc }
            }
        };
        Ok(Window {
            source,
            offset: self.offset,
            len: self.len,
            write: true,
            magic: Some(MAGIC.to_le_bytes()),
        })
    }

    /// Write consent and the driver override.
    pub fn access(&self) -> Access {
        Access {
            allow_write: self.allow_write,
            force: self.force,
        }
    }
}

/// The two rings (offset, length) of a window of `len` bytes: its two halves after the
/// header, whole lines each.
pub fn rings_of(len: usize) -> [(usize, usize); 2] {
    let half = (len.saturating_sub(HEADER_BYTES) / 2) & !63;
    [(HEADER_BYTES, half), (HEADER_BYTES + half, half)]
}

impl PoolMap {
    /// Maps the window (creating a missing file of the `file:` kind).
    pub fn open(spec: &PoolSpec) -> Result<PoolMap, PoolError> {
        Self::open_below(spec, &guard::system_root())
    }

    /// [`open`](Self::open) with sysfs read below `root` (tests use a fake tree).
    pub fn open_below(spec: &PoolSpec, root: &Path) -> Result<PoolMap, PoolError> {
        if spec.len < MIN_POOL_BYTES {
            return Err(PoolError::TooSmall {
                have: spec.len,
                need: MIN_POOL_BYTES,
            });
        }
        let name = spec.source.to_string();
        let refused = |e: MapError| match e {
            MapError::WriteNotAllowed(_) => PoolError::NeedsAllowWrite(name.clone()),
            e => PoolError::Map(e),
        };
        let window = spec.window(root).map_err(refused)?;
        let region = Region::map_window(&window, spec.access(), root).map_err(refused)?;
        Ok(PoolMap { region, name })
    }

    /// Base address of the window.
    pub fn ptr(&self) -> *mut u8 {
        // Mapped writable (a pool window is always mapped with write intent); every
        // access goes through raw pointers and atomics, never references.
        self.region.as_ptr() as *mut u8
    }
    /// Window length in bytes.
    pub fn len(&self) -> usize {
        self.region.len()
    }
    /// Whether the window is empty (never: open refuses small windows).
    pub fn is_empty(&self) -> bool {
        self.region.is_empty()
    }
    /// The pool's name (its spec).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The header view of this window.
    pub fn header(&self) -> Header {
        Header::new(self.ptr(), invalidate_method().ok())
    }
    /// Faults every page of the window in, then reports on which NUMA nodes its pages
    /// are (`move_pages(2)` query), for the measurements' `placement`.
    pub fn placement(&self) -> bench_core::memory::Placement {
        let page = bench_core::memory::page_size();
        for o in (0..self.len()).step_by(page) {
            // SAFETY: o < len: inside the mapping; a volatile read faults the page in.
            unsafe { self.ptr().add(o).read_volatile() };
        }
        let per_node = bench_core::memory::pages_per_node(self.ptr(), self.len(), page);
        bench_core::memory::Placement {
            verification: bench_core::memory::Verification::Reported,
            method: format!(
                "move_pages(2) query of every page of the pool window {}",
                self.name()
            ),
            page_size_bytes: page,
            pages_checked: per_node.values().sum(),
            pages_per_node: per_node,
            thp_fraction: None,
            warning: None,
            interleave: None,
            // What the window's device is (a CXL region and its memory devices, ...).
            backing: self.region.placement().backing.clone(),
        }
    }
    /// Bytes of each ring region (header excluded), and their offsets.
    pub fn rings(&self) -> [(usize, usize); 2] {
        rings_of(self.len())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_cxl_pool_is_the_regions_devdax_device() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../bench-core/tests/fixtures/sysfs-cxl-devdax");
        let topo = bench_core::topology::Topology::read(&fixture);
        assert_eq!(
            PoolSource::from_cxl("cxl:region1", &topo).unwrap(),
            PoolSource::Dax("/dev/dax1.0".into())
        );
        let e = PoolSource::from_cxl("cxl:region7", &topo)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("pool cxl:region7: no CXL region region7"),
            "{e}"
        );
        let e = PoolSource::from_cxl("cxl:bogus", &topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cxl:regionN or cxl:memN"), "{e}");
    }

    pub(crate) fn spec(path: &Path) -> PoolSpec {
        PoolSpec {
            source: PoolSource::File(path.into()),
            offset: 0,
            len: MIN_POOL_BYTES,
            allow_write: true,
            force: false,
            scratch: false,
        }
    }

    #[test]
    fn specs_and_roles_parse_or_say_what_is_allowed() {
        assert_eq!(
            "dax:/dev/dax0.0".parse::<PoolSource>().unwrap(),
            PoolSource::Dax("/dev/dax0.0".into())
        );
        assert_eq!(
            "/dev/shm/x".parse::<PoolSource>().unwrap(),
            PoolSource::File("/dev/shm/x".into())
        );
        assert!(matches!(
            "nvme:/x".parse::<PoolSource>(),
            Err(PoolError::Spec(_))
        ));
        // A BAR has one spelling in output, whichever of its two forms was given.
        let by_bar = "pci:0000:00:04.0/2".parse::<PoolSource>().unwrap();
        let by_path = "pci:/sys/bus/pci/devices/0000:00:04.0/resource2"
            .parse::<PoolSource>()
            .unwrap();
        assert_eq!(by_bar, by_path);
        assert_eq!(
            by_bar,
            PoolSource::Pci("/sys/bus/pci/devices/0000:00:04.0/resource2".into())
        );
        assert_eq!(by_bar.to_string(), "pci:0000:00:04.0/2");
        assert_eq!(
            "pci:/tmp/bar".parse::<PoolSource>().unwrap().to_string(),
            "pci:/tmp/bar"
        );
        for bad in ["pci:0000:00:04.0", "pci:00:04.0/2", "pci:0000:00:04.0/7"] {
            let e = bad.parse::<PoolSource>().unwrap_err().to_string();
            assert!(e.contains("pci:DOMAIN:BUS:DEV.FN/BAR"), "{bad}: {e}");
        }
        assert_eq!("leader".parse::<Role>().unwrap(), Role::Leader);
        let e = "boss".parse::<Role>().unwrap_err().to_string();
        assert!(e.contains("leader or follower"), "{e}");
    }

    #[test]
    fn devices_need_allow_write_and_small_windows_are_refused() {
        let s = PoolSpec {
            source: PoolSource::Dax("/dev/dax9.9".into()),
            allow_write: false,
            ..spec(Path::new("/nonexistent"))
        };
        assert!(matches!(
            PoolMap::open(&s),
            Err(PoolError::NeedsAllowWrite(_))
        ));
        let s = PoolSpec {
            source: PoolSource::Pci("/sys/bus/pci/devices/0000:00:00.0/resource9".into()),
            allow_write: false,
            ..spec(Path::new("/nonexistent"))
        };
        assert!(matches!(
            PoolMap::open(&s),
            Err(PoolError::NeedsAllowWrite(_))
        ));
        let dir = tempfile::tempdir().unwrap();
        let s = PoolSpec {
            len: 4096,
            ..spec(&dir.path().join("p"))
        };
        let e = PoolMap::open(&s).unwrap_err();
        assert!(matches!(e, PoolError::TooSmall { .. }), "{e}");
    }

    #[test]
    fn a_driver_bound_bar_pool_needs_force_and_a_device_node_is_no_pool_file() {
        let dir = tempfile::tempdir().unwrap();
        bench_core::pci::write_fake_pci(dir.path()).unwrap();
        let nic = dir
            .path()
            .join("sys/bus/pci/devices/0000:3b:00.0/resource1");
        let s = PoolSpec {
            source: PoolSource::Pci(nic),
            allow_write: true,
            ..spec(Path::new("/nonexistent"))
        };
        let e = PoolMap::open_below(&s, dir.path()).unwrap_err();
        assert!(
            matches!(e, PoolError::Map(MapError::DriverBound { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("--force"), "{e}");
        // A regular file given as a BAR is refused for what it is.
        let f = dir.path().join("resource2");
        std::fs::write(&f, vec![0u8; MIN_POOL_BYTES]).unwrap();
        let s = PoolSpec {
            source: PoolSource::Pci(f),
            allow_write: true,
            force: true,
            ..spec(Path::new("/nonexistent"))
        };
        let e = PoolMap::open_below(&s, dir.path()).unwrap_err();
        assert!(matches!(e, PoolError::Map(MapError::NotBar(_))), "{e}");
        let e = PoolMap::open(&spec(Path::new("/dev/zero"))).unwrap_err();
        assert!(
            matches!(e, PoolError::Map(MapError::NotRegularFile { .. })),
            "{e}"
        );
    }

    #[test]
    fn a_user_s_pool_file_needs_allow_write_and_cxlchar_s_scratch_file_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        let s = PoolSpec {
            allow_write: false,
            ..spec(&user)
        };
        let e = PoolMap::open(&s).unwrap_err();
        assert!(matches!(e, PoolError::NeedsAllowWrite(_)), "{e}");
        assert!(e.to_string().contains("--allow-write"), "{e}");
        assert!(!user.exists());
        let scratch = dir.path().join("scratch");
        let s = PoolSpec { scratch: true, ..s };
        let s = PoolSpec {
            source: PoolSource::File(scratch.clone()),
            ..s
        };
        let pool = PoolMap::open(&s).unwrap();
        assert_eq!(pool.len(), MIN_POOL_BYTES);
        drop(pool);
        // A scratch file is only ever a fresh one.
        std::fs::write(&scratch, b"data").unwrap();
        assert!(PoolMap::open(&s).is_err());
        assert_eq!(std::fs::read(&scratch).unwrap(), b"data");
    }
}
