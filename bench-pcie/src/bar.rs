//! `pci:DOMAIN:BUS:DEV.FN/BAR`: a device BAR as a benchmark target. The spec, its lookup
//! in sysfs ([`BarSpec::resolve`]), the write guard ([`Access`]: `--allow-write`, and a
//! device with a kernel driver bound refused unless `--force`) and the mapping
//! (`bench_core::memory::Region::map_window`: uncached `resourceN`, write-combining
//! `resourceN_wc`) live in bench-core, shared with the pool and the flush costs; they are
//! re-exported here.

pub use bench_core::memory::{Access, MapError as BarError};
pub use bench_core::pci::{BarSpec, BarSpecError};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::write_fake_pci;
    use bench_core::memory::{Region, Window, WindowSource};

    #[test]
    fn resolves_against_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let root = dir.path();
        let ro = Access {
            allow_write: false,
            force: false,
        };
        let (_, bar) = BarSpec {
            address: "0000:00:02.0".into(),
            index: 2,
        }
        .resolve(root, ro, 0, 4096)
        .unwrap();
        assert_eq!(bar.size_bytes, 64 << 20);
        let e = BarSpec {
            address: "0000:00:02.0".into(),
            index: 2,
        }
        .resolve(root, ro, 64 << 20, 8)
        .unwrap_err();
        assert!(matches!(e, BarError::OffsetPastBar { .. }), "{e}");
        let e = BarSpec {
            address: "0000:00:02.0".into(),
            index: 4,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "device 0000:00:02.0 has no BAR 4 (BARs: 0,2)"
        );
        // The driver is checked first; forced past it, an I/O BAR is still refused.
        let e = BarSpec {
            address: "0000:3b:00.0".into(),
            index: 0,
        }
        .resolve(
            root,
            Access {
                allow_write: false,
                force: true,
            },
            0,
            8,
        )
        .unwrap_err();
        assert!(matches!(e, BarError::NotMemory { .. }), "{e}");
        let e = BarSpec {
            address: "0000:3b:00.0".into(),
            index: 1,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert!(
            e.to_string().contains("mlx5_core") && e.to_string().contains("--force"),
            "{e}"
        );
        let forced = Access {
            allow_write: false,
            force: true,
        };
        assert!(BarSpec {
            address: "0000:3b:00.0".into(),
            index: 1
        }
        .resolve(root, forced, 0, 8)
        .is_ok());
        let e = BarSpec {
            address: "0000:99:00.0".into(),
            index: 0,
        }
        .resolve(root, ro, 0, 8)
        .unwrap_err();
        assert!(matches!(e, BarError::NoDevice(_)));
    }

    #[test]
    fn a_driver_bound_bar_is_not_mapped_without_force() {
        let dir = tempfile::tempdir().unwrap();
        write_fake_pci(dir.path()).unwrap();
        let w = Window {
            source: WindowSource::Bar {
                bar: "pci:0000:3b:00.0/1".parse().unwrap(),
                wc: false,
            },
            offset: 0,
            len: 4096,
            write: false,
            magic: None,
        };
        let e = Region::map_window(&w, Access::default(), dir.path()).unwrap_err();
        assert!(matches!(e, BarError::DriverBound { .. }), "{e}");
    }
}
