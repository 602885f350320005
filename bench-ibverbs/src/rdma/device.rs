//! The RDMA device: listing, opening the first device (or the named one) with an active
//! port, and choosing its GID.

use crate::error::VerbsError;
use ibverbs_sys as ffi;
use std::ffi::CStr;

/// Names of the RDMA devices of this machine.
pub fn device_names() -> Result<Vec<String>, VerbsError> {
    let mut n = 0i32;
    // SAFETY: n is a valid out pointer; the list is freed below.
    let list = unsafe { ffi::ibv_get_device_list(&mut n) };
    if list.is_null() {
        return Err(VerbsError::NoDevices(std::io::Error::last_os_error()));
    }
    let mut names = Vec::new();
    for i in 0..n.max(0) as usize {
        // SAFETY: list has n valid entries; names are NUL-terminated C strings.
        let name = unsafe { CStr::from_ptr(ffi::ibv_get_device_name(*list.add(i))) };
        names.push(name.to_string_lossy().into_owned());
    }
    // SAFETY: list came from ibv_get_device_list.
    unsafe { ffi::ibv_free_device_list(list) };
    Ok(names)
}

/// An open device with its chosen port and GID.
pub struct Device {
    pub(super) ctx: *mut ffi::ibv_context,
    /// Device name (`rxe0`, `mlx5_0`).
    pub name: String,
    /// Active port.
    pub port: u8,
    /// GID index used.
    pub gid_index: u8,
    /// Port GID.
    pub gid: [u8; 16],
    /// Port LID.
    pub lid: u16,
    /// Active MTU enum.
    pub mtu: u8,
    /// Ethernet (RoCE) link layer: addressing by GID.
    pub roce: bool,
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: ctx came from ibv_open_device; every child was destroyed before.
        unsafe { ffi::ibv_close_device(self.ctx) };
    }
}

fn query_port(ctx: *mut ffi::ibv_context, port: u8) -> Option<ffi::ibv_port_attr> {
    let mut attr = ffi::ibv_port_attr::default();
    // SAFETY: ctx is open; attr is a valid out struct of the current layout.
    let rc = unsafe { ffi::ibv_query_port(ctx, port, &mut attr as *mut _ as *mut _) };
    (rc == 0).then_some(attr)
}

fn choose_gid(ctx: *mut ffi::ibv_context, port: u8, len: i32, ask: Option<u8>) -> (u8, [u8; 16]) {
    let query = |i: u8| {
        let mut g = ffi::ibv_gid::default();
        // SAFETY: ctx is open; g is a valid out union.
        let rc = unsafe { ffi::ibv_query_gid(ctx, port, i as i32, &mut g) };
        // SAFETY: raw is the 16-byte view of the union (zeroed by default, filled on success).
        let raw = unsafe { g.raw };
        (rc == 0).then_some(raw)
    };
    if let Some(i) = ask {
        return (i, query(i).unwrap_or([0; 16]));
    }
    for i in 0..len.clamp(0, 16) as u8 {
        if let Some(g) = query(i) {
            if g[..10].iter().all(|&b| b == 0) && g[10] == 0xff && g[11] == 0xff {
                return (i, g);
            }
        }
    }
    (0, query(0).unwrap_or([0; 16]))
}

/// Opens `name` (or the first device with an active port) on its first active port.
pub fn open_device(name: Option<&str>, gid_index: Option<u8>) -> Result<Device, VerbsError> {
    let names = device_names()?;
    if names.is_empty() {
        return Err(VerbsError::EmptyDeviceList);
    }
    if let Some(n) = name {
        if !names.iter().any(|d| d == n) {
            return Err(VerbsError::DeviceNotFound {
                name: n.into(),
                available: names.join(", "),
            });
        }
    }
    let mut nlist = 0i32;
    // SAFETY: as in device_names.
    let list = unsafe { ffi::ibv_get_device_list(&mut nlist) };
    if list.is_null() {
        return Err(VerbsError::NoDevices(std::io::Error::last_os_error()));
    }
    let mut found = None;
    for i in 0..nlist.max(0) as usize {
        // SAFETY: list has nlist valid entries.
        let dev = unsafe { *list.add(i) };
        // SAFETY: dev is valid while the list lives.
        let dname = unsafe { CStr::from_ptr(ffi::ibv_get_device_name(dev)) }
            .to_string_lossy()
            .into_owned();
        if name.is_some_and(|n| n != dname) {
            continue;
        }
        // SAFETY: dev is valid; the context outlives the list (rdma-core refcounts it).
        let ctx = unsafe { ffi::ibv_open_device(dev) };
        if ctx.is_null() {
            if name.is_some() {
                // SAFETY: list from ibv_get_device_list.
                unsafe { ffi::ibv_free_device_list(list) };
                return Err(VerbsError::last("ibv_open_device"));
            }
            continue;
        }
        let mut dattr = ffi::ibv_device_attr::default();
        // SAFETY: ctx open, dattr valid out struct.
        let nports = if unsafe { ffi::ibv_query_device(ctx, &mut dattr) } == 0 {
            dattr.phys_port_cnt
        } else {
            1
        };
        let mut chosen = None;
        for p in 1..=nports {
            if let Some(a) = query_port(ctx, p) {
                if a.state == ffi::ibv_port_state::IBV_PORT_ACTIVE {
                    chosen = Some((p, a));
                    break;
                }
            }
        }
        match chosen {
            Some((port, a)) => {
                let (gi, gid) = choose_gid(ctx, port, a.gid_tbl_len, gid_index);
                found = Some(Device {
                    ctx,
                    name: dname,
                    port,
                    gid_index: gi,
                    gid,
                    lid: a.lid,
                    mtu: a.active_mtu as u8,
                    roce: a.link_layer as u32 == ffi::IBV_LINK_LAYER_ETHERNET,
                });
                break;
            }
            None => {
                // SAFETY: ctx from ibv_open_device, nothing allocated on it.
                unsafe { ffi::ibv_close_device(ctx) };
                if name.is_some() {
                    // SAFETY: list from ibv_get_device_list.
                    unsafe { ffi::ibv_free_device_list(list) };
                    return Err(VerbsError::PortDown(dname));
                }
            }
        }
    }
    // SAFETY: list from ibv_get_device_list.
    unsafe { ffi::ibv_free_device_list(list) };
    found.ok_or_else(|| VerbsError::PortDown(format!("every device ({})", names.join(", "))))
}
#[cfg(test)]
mod tests {
    use super::*;

    /// On a machine without an RDMA device (this CI host), opening a device is an
    /// error with a reason, never a panic or a hang.
    #[test]
    fn no_device_is_a_clear_error() {
        match open_device(None, None) {
            Ok(d) => {
                // A machine with RDMA: the device must have an active port.
                assert!(d.port >= 1);
            }
            Err(e) => {
                let s = e.to_string();
                assert!(
                    matches!(
                        e,
                        VerbsError::NoDevices(_)
                            | VerbsError::EmptyDeviceList
                            | VerbsError::PortDown(_)
                    ),
                    "{s}"
                );
                assert!(s.contains("RDMA") || s.contains("port"), "{s}");
            }
        }
        match open_device(Some("no_such_dev0"), None) {
            Ok(_) => panic!("a device named no_such_dev0 opened"),
            Err(e) => assert!(
                matches!(
                    e,
                    VerbsError::NoDevices(_)
                        | VerbsError::EmptyDeviceList
                        | VerbsError::DeviceNotFound { .. }
                ),
                "{e}"
            ),
        }
    }
}
