//! The verbs backend (feature `verbs`): device, RC queue pairs, memory registration on a
//! cxlchar target, the TCP QP-info exchange, and the measurements.
//!
//! Raw `ibverbs-sys` calls, because the safe `ibverbs` crate has no max-inline setting
//! and no registration of caller-owned memory. `ibv_post_send`, `ibv_post_recv` and
//! `ibv_poll_cq` are inline functions in verbs.h; like rust-ibverbs we call them through
//! the context's ops table.

use crate::config::{Peer, VerbsConfig};
use crate::error::VerbsError;
use crate::wire::{Command, QpInfo, QP_INFO_BYTES};
use bench_core::bench::{Context, Param, Report};
use bench_core::counters::{
    self, CounterGroup, MeasurementCounters, ThreadCounts, DEFAULT_MAX_ATTEMPTS as MAX_ATTEMPTS,
};
use bench_core::params::{Measurement, ParamInfo, Warning};
use bench_core::stats::{hockney_fit, Distribution, HOCKNEY_WEIGHTS};
use bench_core::target::Region;
use ibverbs_sys as ffi;
use serde_json::json;
use std::ffi::CStr;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

/// Send queue depth asked for.
pub const SQ_DEPTH: u32 = 128;
/// Receive queue depth (kept full on both sides).
pub const RQ_DEPTH: u32 = 256;
/// Largest message (bytes).
pub const MAX_MSG: usize = 1 << 20;
/// Per side: source buffer `[0, MAX_MSG)`, destination buffer `[MAX_MSG, 2 MAX_MSG)`.
const SIDE_BYTES: usize = 2 * MAX_MSG;
/// Completion queue entries of the send CQ.
const SCQ_DEPTH: i32 = 1024;
/// Inline size asked for at QP creation (reduced until the device accepts).
const INLINE_ASK: [u32; 4] = [256, 128, 64, 0];
/// Sizes of the post breakdown.
pub const POST_SIZES: [usize; 5] = [8, 64, 256, 1024, 4096];
/// Sizes of latency and bandwidth.
pub const LAT_SIZES: [usize; 7] = [8, 64, 512, 4096, 32768, 262144, MAX_MSG];
const QUICK_SIZES: [usize; 3] = [8, 4096, MAX_MSG];
const BURST: usize = 16;

fn send_flag(f: ffi::ibv_send_flags) -> u32 {
    f.0
}

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
    ctx: *mut ffi::ibv_context,
    /// Device name.
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

/// One RC queue pair with its send and receive CQs and its half of the buffers.
pub struct Side {
    qp: *mut ffi::ibv_qp,
    scq: *mut ffi::ibv_cq,
    rcq: *mut ffi::ibv_cq,
    base: *mut u8,
    lkey: u32,
    rkey: u32,
    psn: u32,
    /// Inline data the QP accepts (bytes).
    pub max_inline: u32,
    /// Peer's destination buffer (address, rkey).
    remote: (u64, u32),
}

impl Side {
    fn info(&self, dev: &Device) -> QpInfo {
        QpInfo {
            lid: dev.lid,
            // SAFETY: qp is a live QP.
            qpn: unsafe { (*self.qp).qp_num },
            psn: self.psn,
            rkey: self.rkey,
            mtu: dev.mtu,
            gid: dev.gid,
            addr: self.base as u64 + MAX_MSG as u64,
            len: MAX_MSG as u64,
        }
    }

    /// Posts one work request (the measured call).
    #[inline(always)]
    fn post(&self, wr: &mut ffi::ibv_send_wr) -> i32 {
        let mut bad = null_mut();
        // SAFETY: qp is live; its context's ops table is filled by the provider; wr and
        // its sg_list point to live memory for the duration of the call.
        unsafe {
            let ctx = (*self.qp).context;
            match (*ctx).ops.post_send {
                Some(f) => f(self.qp, wr, &mut bad),
                None => libc::ENOSYS,
            }
        }
    }

    fn post_recv(&self, size: usize) -> Result<(), VerbsError> {
        let mut sge = ffi::ibv_sge {
            addr: self.base as u64 + MAX_MSG as u64,
            length: size.max(1) as u32,
            lkey: self.lkey,
        };
        let mut wr = ffi::ibv_recv_wr {
            wr_id: 0,
            next: null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        let mut bad = null_mut();
        // SAFETY: as in post.
        let rc = unsafe {
            let ctx = (*self.qp).context;
            match (*ctx).ops.post_recv {
                Some(f) => f(self.qp, &mut wr, &mut bad),
                None => libc::ENOSYS,
            }
        };
        if rc != 0 {
            return Err(VerbsError::code("ibv_post_recv", rc));
        }
        Ok(())
    }

    #[inline(always)]
    fn poll(cq: *mut ffi::ibv_cq, wc: &mut [ffi::ibv_wc]) -> i32 {
        // SAFETY: cq is live; wc has wc.len() entries.
        unsafe {
            let ctx = (*cq).context;
            match (*ctx).ops.poll_cq {
                Some(f) => f(cq, wc.len() as i32, wc.as_mut_ptr()),
                None => -libc::ENOSYS,
            }
        }
    }

    /// Polls `cq` once (untimed) and fails on a poll error or an error completion;
    /// returns the number of completions reaped.
    fn reap(cq: *mut ffi::ibv_cq, wcs: &mut [ffi::ibv_wc]) -> Result<usize, VerbsError> {
        let r = Side::poll(cq, wcs);
        if r < 0 {
            return Err(VerbsError::code("ibv_poll_cq", r));
        }
        for c in &wcs[..r as usize] {
            if let Some((st, v)) = c.error() {
                return Err(completion_error(st, v));
            }
        }
        Ok(r as usize)
    }

    /// Waits for `n` completions on `cq`, checking their status.
    fn wait(
        cq: *mut ffi::ibv_cq,
        n: usize,
        timeout: Duration,
        what: &'static str,
    ) -> Result<(), VerbsError> {
        let mut wc = [ffi::ibv_wc::default(); BURST];
        let mut got = 0;
        let end = Instant::now() + timeout;
        let mut spins = 0u32;
        while got < n {
            let k = (n - got).min(BURST);
            let r = Self::poll(cq, &mut wc[..k]);
            if r < 0 {
                return Err(VerbsError::code("ibv_poll_cq", r));
            }
            for c in &wc[..r as usize] {
                if let Some((status, vendor_err)) = c.error() {
                    return Err(completion_error(status, vendor_err));
                }
            }
            got += r as usize;
            spins = spins.wrapping_add(1);
            if r == 0 && spins.is_multiple_of(1024) && Instant::now() > end {
                return Err(VerbsError::CompletionTimeout(timeout, what));
            }
        }
        Ok(())
    }

    fn wait_send(&self, n: usize, t: Duration) -> Result<(), VerbsError> {
        Self::wait(self.scq, n, t, "send completion")
    }

    /// Waits for `n` receives and re-posts them (the receive queue stays full).
    fn wait_recv(&self, n: usize, t: Duration) -> Result<(), VerbsError> {
        Self::wait(self.rcq, n, t, "receive completion")?;
        for _ in 0..n {
            self.post_recv(MAX_MSG)?;
        }
        Ok(())
    }

    fn modify(
        &self,
        attr: &mut ffi::ibv_qp_attr,
        mask: ffi::ibv_qp_attr_mask,
    ) -> Result<(), VerbsError> {
        // SAFETY: qp live, attr valid.
        let rc = unsafe { ffi::ibv_modify_qp(self.qp, attr, mask.0 as i32) };
        if rc != 0 {
            return Err(VerbsError::code("ibv_modify_qp", rc));
        }
        Ok(())
    }

    /// INIT -> RTR -> RTS against `remote`.
    fn connect(&mut self, dev: &Device, remote: &QpInfo) -> Result<(), VerbsError> {
        use ffi::ibv_qp_attr_mask as M;
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_INIT,
            pkey_index: 0,
            port_num: dev.port,
            qp_access_flags: (ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
                | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
                | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_READ)
                .0,
            ..Default::default()
        };
        self.modify(
            &mut a,
            M::IBV_QP_STATE | M::IBV_QP_PKEY_INDEX | M::IBV_QP_PORT | M::IBV_QP_ACCESS_FLAGS,
        )?;
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_RTR,
            path_mtu: dev.mtu.min(remote.mtu) as _,
            dest_qp_num: remote.qpn,
            rq_psn: remote.psn,
            max_dest_rd_atomic: 1,
            min_rnr_timer: 12,
            ..Default::default()
        };
        a.ah_attr.dlid = remote.lid;
        a.ah_attr.sl = 0;
        a.ah_attr.port_num = dev.port;
        if dev.roce || remote.lid == 0 {
            a.ah_attr.is_global = 1;
            a.ah_attr.grh.dgid.raw = remote.gid;
            a.ah_attr.grh.sgid_index = dev.gid_index;
            a.ah_attr.grh.hop_limit = 64;
        }
        self.modify(
            &mut a,
            M::IBV_QP_STATE
                | M::IBV_QP_AV
                | M::IBV_QP_PATH_MTU
                | M::IBV_QP_DEST_QPN
                | M::IBV_QP_RQ_PSN
                | M::IBV_QP_MAX_DEST_RD_ATOMIC
                | M::IBV_QP_MIN_RNR_TIMER,
        )?;
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_RTS,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            sq_psn: self.psn,
            max_rd_atomic: 1,
            ..Default::default()
        };
        self.modify(
            &mut a,
            M::IBV_QP_STATE
                | M::IBV_QP_TIMEOUT
                | M::IBV_QP_RETRY_CNT
                | M::IBV_QP_RNR_RETRY
                | M::IBV_QP_SQ_PSN
                | M::IBV_QP_MAX_QP_RD_ATOMIC,
        )?;
        self.remote = (remote.addr, remote.rkey);
        Ok(())
    }
}

fn completion_error(status: u32, vendor_err: u32) -> VerbsError {
    // SAFETY: ibv_wc_status_str returns a static string for any value.
    let name = unsafe { CStr::from_ptr(ffi::ibv_wc_status_str(status)) }
        .to_string_lossy()
        .into_owned();
    VerbsError::Completion {
        status,
        name,
        vendor_err,
    }
}

/// Device, protection domain, registered region and one or two queue pairs.
pub struct Resources {
    pd: *mut ffi::ibv_pd,
    mr: *mut ffi::ibv_mr,
    /// Queue pairs: two for loopback (a -> b), one otherwise.
    pub sides: Vec<Side>,
    /// The device (closed after every child).
    pub dev: Device,
    /// The registered buffers (freed last).
    pub region: Region,
}

impl Drop for Resources {
    fn drop(&mut self) {
        // SAFETY: every handle is live and owned here; children go before parents.
        unsafe {
            for s in &self.sides {
                ffi::ibv_destroy_qp(s.qp);
                ffi::ibv_destroy_cq(s.scq);
                ffi::ibv_destroy_cq(s.rcq);
            }
            if !self.mr.is_null() {
                ffi::ibv_dereg_mr(self.mr);
            }
            ffi::ibv_dealloc_pd(self.pd);
        }
    }
}

fn psn_seed(i: u32) -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(1);
    (t ^ (i.wrapping_mul(0x9e37_79b9))) & 0x00ff_ffff
}

/// Opens the device, registers a region on the configured target and creates `n` queue
/// pairs (not yet connected).
pub fn setup(cfg: &VerbsConfig, ctx: &Context, n: usize) -> Result<Resources, VerbsError> {
    let dev = open_device(cfg.device.as_deref(), cfg.gid_index)?;
    let bytes = SIDE_BYTES * n;
    let region = Region::allocate(&cfg.target, bytes, &ctx.topology)
        .map_err(|e| VerbsError::Region(e.to_string()))?;
    // SAFETY: dev.ctx is open.
    let pd = unsafe { ffi::ibv_alloc_pd(dev.ctx) };
    if pd.is_null() {
        return Err(VerbsError::last("ibv_alloc_pd"));
    }
    let mut res = Resources {
        pd,
        mr: null_mut(),
        sides: Vec::new(),
        dev,
        region,
    };
    let access = (ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
        | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
        | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_READ)
        .0;
    let base = res.region.as_mut_ptr();
    // SAFETY: pd live; [base, base+bytes) is the region's mapping, alive as long as res.
    let mr = unsafe { ffi::ibv_reg_mr(pd, base as *mut _, bytes, access as i32) };
    if mr.is_null() {
        return Err(VerbsError::RegMr {
            bytes,
            source: std::io::Error::last_os_error(),
        });
    }
    res.mr = mr;
    // SAFETY: mr live.
    let (lkey, rkey) = unsafe { ((*mr).lkey, (*mr).rkey) };
    for i in 0..n {
        // SAFETY: ctx live; no completion channel.
        let scq = unsafe { ffi::ibv_create_cq(res.dev.ctx, SCQ_DEPTH, null_mut(), null_mut(), 0) };
        if scq.is_null() {
            return Err(VerbsError::last("ibv_create_cq"));
        }
        // SAFETY: as above.
        let rcq = unsafe {
            ffi::ibv_create_cq(res.dev.ctx, RQ_DEPTH as i32 * 2, null_mut(), null_mut(), 0)
        };
        if rcq.is_null() {
            // SAFETY: scq live, unused.
            unsafe { ffi::ibv_destroy_cq(scq) };
            return Err(VerbsError::last("ibv_create_cq"));
        }
        let mut qp = null_mut();
        let mut max_inline = 0;
        let mut last_err = None;
        for ask in INLINE_ASK {
            let mut init = ffi::ibv_qp_init_attr {
                send_cq: scq,
                recv_cq: rcq,
                qp_type: ffi::ibv_qp_type::IBV_QPT_RC,
                sq_sig_all: 0,
                ..Default::default()
            };
            init.cap.max_send_wr = SQ_DEPTH;
            init.cap.max_recv_wr = RQ_DEPTH;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            init.cap.max_inline_data = ask;
            // SAFETY: pd live, init valid; the provider writes the granted caps back.
            qp = unsafe { ffi::ibv_create_qp(pd, &mut init) };
            if !qp.is_null() {
                max_inline = init.cap.max_inline_data;
                break;
            }
            last_err = Some(VerbsError::last("ibv_create_qp"));
        }
        if qp.is_null() {
            // SAFETY: cqs live, unused.
            unsafe {
                ffi::ibv_destroy_cq(scq);
                ffi::ibv_destroy_cq(rcq);
            }
            return Err(last_err.unwrap_or_else(|| VerbsError::last("ibv_create_qp")));
        }
        res.sides.push(Side {
            qp,
            scq,
            rcq,
            // SAFETY: i * SIDE_BYTES + SIDE_BYTES <= bytes.
            base: unsafe { base.add(i * SIDE_BYTES) },
            lkey,
            rkey,
            psn: psn_seed(i as u32),
            max_inline,
            remote: (0, 0),
        });
    }
    Ok(res)
}

/// Connects two local queue pairs to each other (loopback).
pub fn connect_loopback(res: &mut Resources) -> Result<(), VerbsError> {
    let ia = res.sides[0].info(&res.dev);
    let ib = res.sides[1].info(&res.dev);
    let (a, b) = res.sides.split_at_mut(1);
    a[0].connect(&res.dev, &ib)?;
    b[0].connect(&res.dev, &ia)?;
    for s in &res.sides {
        for _ in 0..RQ_DEPTH {
            s.post_recv(MAX_MSG)?;
        }
    }
    Ok(())
}

fn io_err(peer: &str, timeout: Duration) -> impl Fn(std::io::Error) -> VerbsError + '_ {
    move |source| VerbsError::Exchange {
        peer: peer.to_string(),
        source,
        timeout,
    }
}

/// Exchanges QP info on an open stream (ours first, then theirs), with timeouts.
pub fn exchange(
    s: &mut TcpStream,
    ours: &QpInfo,
    peer: &str,
    timeout: Duration,
) -> Result<QpInfo, VerbsError> {
    let e = io_err(peer, timeout);
    s.set_read_timeout(Some(timeout)).map_err(&e)?;
    s.set_write_timeout(Some(timeout)).map_err(&e)?;
    s.write_all(&ours.encode()).map_err(&e)?;
    let mut buf = [0u8; QP_INFO_BYTES];
    s.read_exact(&mut buf).map_err(&e)?;
    QpInfo::decode(&buf).map_err(|source| VerbsError::Wire {
        peer: peer.to_string(),
        source,
    })
}

/// Connects to a server (every resolved address, each with the timeout).
pub fn tcp_connect(host: &str, port: u16, timeout: Duration) -> Result<TcpStream, VerbsError> {
    let peer = format!("{host}:{port}");
    let e = io_err(&peer, timeout);
    let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(&e)?.collect();
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => return Ok(s),
            Err(x) => last = x,
        }
    }
    Err(e(last))
}

/// Accepts one client within the timeout.
pub fn tcp_accept(port: u16, timeout: Duration) -> Result<(TcpStream, String), VerbsError> {
    let peer = format!("0.0.0.0:{port}");
    let e = io_err(&peer, timeout);
    let l = TcpListener::bind(("0.0.0.0", port)).map_err(&e)?;
    l.set_nonblocking(true).map_err(&e)?;
    let end = Instant::now() + timeout;
    loop {
        match l.accept() {
            Ok((s, a)) => {
                s.set_nonblocking(false).map_err(&e)?;
                return Ok((s, a.to_string()));
            }
            Err(x) if x.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > end {
                    return Err(e(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no client connected",
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(x) => return Err(e(x)),
        }
    }
}

/// The other end as the measuring side sees it.
enum Remote<'a> {
    /// The second local queue pair.
    Local(&'a Side),
    /// A `--server` over TCP.
    Tcp(&'a mut TcpStream, String),
}

impl Remote<'_> {
    fn command(&mut self, c: Command, t: Duration) -> Result<(), VerbsError> {
        if let Remote::Tcp(s, peer) = self {
            s.write_all(&c.encode()).map_err(io_err(peer, t))?;
        }
        Ok(())
    }

    fn ack(&mut self, t: Duration) -> Result<(), VerbsError> {
        if let Remote::Tcp(s, peer) = self {
            let mut b = [0u8; 1];
            s.read_exact(&mut b).map_err(io_err(peer, t))?;
        }
        Ok(())
    }

    /// Local: consume `n` receives on the peer queue pair.
    fn drain(&self, n: usize, t: Duration) -> Result<(), VerbsError> {
        if let Remote::Local(b) = self {
            b.wait_recv(n, t)?;
        }
        Ok(())
    }
}

/// Serves a client's commands on a connected queue pair until `Quit` or EOF.
fn serve(side: &Side, s: &mut TcpStream, peer: &str, t: Duration) -> Result<u64, VerbsError> {
    // Commands can be far apart (the client measures in between).
    let idle = t.saturating_mul(30);
    s.set_read_timeout(Some(idle)).map_err(io_err(peer, idle))?;
    let mut served = 0;
    loop {
        let mut b = [0u8; 9];
        match s.read_exact(&mut b) {
            Ok(()) => {}
            Err(x) if x.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(served),
            Err(x) => return Err(io_err(peer, idle)(x)),
        }
        let c = Command::decode(&b).map_err(|source| VerbsError::Wire {
            peer: peer.into(),
            source,
        })?;
        served += 1;
        match c {
            Command::Quit => return Ok(served),
            Command::Pong { size, iters } => {
                let size = (size as usize).min(MAX_MSG);
                let mut sig = 0;
                for i in 0..iters {
                    side.wait_recv(1, t)?;
                    let signaled = i % 32 == 31 || i + 1 == iters;
                    post_one(
                        side,
                        Op::Send,
                        size,
                        size <= side.max_inline as usize,
                        signaled,
                    )?;
                    if signaled {
                        sig += 1;
                    }
                }
                side.wait_send(sig, t)?;
            }
            Command::Sink { size: _, count } => {
                side.wait_recv(count as usize, t)?;
                s.write_all(&[1]).map_err(io_err(peer, t))?;
            }
        }
    }
}

/// Work request kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// RDMA write into the peer's buffer.
    Write,
    /// Send, consumed by a posted receive.
    Send,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Send => "send",
        }
    }
}

/// A prepared work request (its sge lives next to it; re-link before each post).
struct Wr {
    sge: ffi::ibv_sge,
    wr: ffi::ibv_send_wr,
}

impl Wr {
    fn new(side: &Side, op: Op, size: usize, inline: bool, signaled: bool) -> Wr {
        let sge = ffi::ibv_sge {
            addr: side.base as u64,
            length: size as u32,
            lkey: side.lkey,
        };
        let mut wr = ffi::ibv_send_wr {
            num_sge: 1,
            opcode: match op {
                Op::Write => ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE,
                Op::Send => ffi::ibv_wr_opcode::IBV_WR_SEND,
            },
            ..Default::default()
        };
        let mut f = 0;
        if inline {
            f |= send_flag(ffi::ibv_send_flags::IBV_SEND_INLINE);
        }
        if signaled {
            f |= send_flag(ffi::ibv_send_flags::IBV_SEND_SIGNALED);
        }
        wr.send_flags = f;
        if op == Op::Write {
            wr.wr.rdma.remote_addr = side.remote.0;
            wr.wr.rdma.rkey = side.remote.1;
        }
        Wr { sge, wr }
    }

    fn set_signaled(&mut self, on: bool) {
        let s = send_flag(ffi::ibv_send_flags::IBV_SEND_SIGNALED);
        if on {
            self.wr.send_flags |= s;
        } else {
            self.wr.send_flags &= !s;
        }
    }

    #[inline(always)]
    fn link(&mut self) -> &mut ffi::ibv_send_wr {
        self.wr.sg_list = &mut self.sge;
        self.wr.next = null_mut();
        &mut self.wr
    }
}

fn post_one(
    side: &Side,
    op: Op,
    size: usize,
    inline: bool,
    signaled: bool,
) -> Result<(), VerbsError> {
    let mut w = Wr::new(side, op, size, inline, signaled);
    let rc = side.post(w.link());
    if rc != 0 {
        return Err(VerbsError::code("ibv_post_send", rc));
    }
    Ok(())
}

/// Collects measurements and params of one run.
struct Out<'a> {
    rep: Report,
    target: &'a str,
    region: &'a Region,
}

impl Out<'_> {
    #[allow(clippy::too_many_arguments)]
    fn meas(
        &mut self,
        id: String,
        params: serde_json::Value,
        unit: &str,
        method: &str,
        s: &[f64],
        counters: MeasurementCounters,
    ) -> Option<f64> {
        let d = Distribution::from_samples(s)?;
        let p50 = d.p50;
        self.rep.measurements.push(Measurement {
            id,
            benchmark: "verbs".into(),
            target: self.target.into(),
            parameters: params,
            unit: unit.into(),
            method: method.into(),
            distribution: d,
            placement: Some(self.region.placement().clone()),
            counters: Some(counters),
        });
        Some(p50)
    }

    fn param(&mut self, key: &str, value: f64, unit: &str, method: &str, from: Vec<String>) {
        if !value.is_finite() {
            return;
        }
        self.rep.params.push(Param {
            key: key.into(),
            value,
            info: ParamInfo {
                unit: unit.into(),
                target: self.target.into(),
                method: method.into(),
                from,
            },
        });
    }
}

/// Runs the configured measurements (or serves them with `--server`).
pub fn run(cfg: &VerbsConfig, target: &str, ctx: &Context) -> Result<Report, VerbsError> {
    if let Some(&cpu) = ctx.cpus.first() {
        // Best effort: an unpinned run is still a run (the env warnings say so).
        let _ = bench_core::pin::pin_current(cpu);
    }
    let t = cfg.timeout;
    match &cfg.peer {
        Peer::Loopback => {
            let mut res = setup(cfg, ctx, 2)?;
            connect_loopback(&mut res)?;
            ctx.progress(&format!(
                "verbs: {} port {} gid {} loopback, max inline {} B",
                res.dev.name, res.dev.port, res.dev.gid_index, res.sides[0].max_inline
            ));
            let a = &res.sides[0];
            let b = &res.sides[1];
            measure(cfg, ctx, target, &res.region, a, Remote::Local(b))
        }
        Peer::Server { port } => {
            let mut res = setup(cfg, ctx, 1)?;
            ctx.progress(&format!("verbs: waiting {t:?} for a client on port {port}"));
            let (mut s, peer) = tcp_accept(*port, t)?;
            let ours = res.sides[0].info(&res.dev);
            let theirs = exchange(&mut s, &ours, &peer, t)?;
            let dev = &res.dev;
            let side = &mut res.sides[0];
            side.connect(dev, &theirs)?;
            for _ in 0..RQ_DEPTH {
                side.post_recv(MAX_MSG)?;
            }
            // Ready: the client may post.
            s.write_all(&[1]).map_err(io_err(&peer, t))?;
            let n = serve(side, &mut s, &peer, t)?;
            let mut rep = Report::default();
            rep.warnings.push(Warning {
                code: "verbs-server".into(),
                message: format!(
                    "served {n} commands of {peer}; the client reports the measurements"
                ),
                remediation: String::new(),
            });
            Ok(rep)
        }
        Peer::Connect { host, port } => {
            let mut res = setup(cfg, ctx, 1)?;
            let peer = format!("{host}:{port}");
            let mut s = tcp_connect(host, *port, t)?;
            let ours = res.sides[0].info(&res.dev);
            let theirs = exchange(&mut s, &ours, &peer, t)?;
            let dev = &res.dev;
            let side = &mut res.sides[0];
            side.connect(dev, &theirs)?;
            for _ in 0..RQ_DEPTH {
                side.post_recv(MAX_MSG)?;
            }
            let mut ready = [0u8; 1];
            s.read_exact(&mut ready).map_err(io_err(&peer, t))?;
            let side = &res.sides[0];
            let rep = measure(
                cfg,
                ctx,
                target,
                &res.region,
                side,
                Remote::Tcp(&mut s, peer.clone()),
            )?;
            let _ = s.write_all(&Command::Quit.encode());
            Ok(rep)
        }
    }
}

fn measure(
    cfg: &VerbsConfig,
    ctx: &Context,
    target: &str,
    region: &Region,
    a: &Side,
    mut remote: Remote<'_>,
) -> Result<Report, VerbsError> {
    let mut out = Out {
        rep: Report::default(),
        target,
        region,
    };
    if cfg.mode.post() {
        post_breakdown(cfg, ctx, a, &mut remote, &mut out)?;
    }
    if cfg.mode.lat() {
        latency(cfg, ctx, a, &mut remote, &mut out)?;
    }
    if cfg.mode.bw() {
        bandwidth(cfg, ctx, a, &mut out)?;
    }
    Ok(out.rep)
}

fn post_breakdown(
    cfg: &VerbsConfig,
    ctx: &Context,
    a: &Side,
    remote: &mut Remote<'_>,
    out: &mut Out<'_>,
) -> Result<(), VerbsError> {
    let t = cfg.timeout;
    // Counters of this thread (the peer is another queue pair of this thread, or another
    // process): every measured loop is one counted section, repeated while disturbed.
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let rounds = if ctx.quick { 8 } else { 200 };
    let sizes: &[usize] = if ctx.quick { &[8, 4096] } else { &POST_SIZES };
    let mut post_inline_id = None;
    let mut post_dma_id = None;
    for op in [Op::Write, Op::Send] {
        for &size in sizes {
            for inline in [true, false] {
                if inline && size > a.max_inline as usize {
                    continue;
                }
                for signaled in [true, false] {
                    ctx.progress(&format!(
                        "verbs.post {} {} B {} {}",
                        op.name(),
                        size,
                        if inline { "inline" } else { "dma" },
                        if signaled { "signaled" } else { "unsignaled" }
                    ));
                    let total = (rounds + 1) * BURST;
                    let mut buf = counters::sample_buffer(rounds * BURST);
                    let (s, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
                        if op == Op::Send {
                            remote.command(
                                Command::Sink {
                                    size: size as u32,
                                    count: total as u32,
                                },
                                t,
                            )?;
                        }
                        let mut w = Wr::new(a, op, size, inline, signaled);
                        buf.clear();
                        let (r, c) = group.count(|| -> Result<(), VerbsError> {
                            for r in 0..=rounds {
                                for j in 0..BURST {
                                    let last = j == BURST - 1;
                                    w.set_signaled(signaled || last);
                                    let wr = w.link();
                                    let t0 = ctx.timer.start();
                                    let rc = a.post(wr);
                                    let t1 = ctx.timer.stop();
                                    if rc != 0 {
                                        return Err(VerbsError::code("ibv_post_send", rc));
                                    }
                                    // Round 0 warms up; the forced-signaled last post of an
                                    // unsignaled burst is not the measured kind.
                                    if r > 0 && (signaled || !last) {
                                        buf.push(ctx.timer.elapsed_ns(t0, t1));
                                    }
                                }
                                a.wait_send(if signaled { BURST } else { 1 }, t)?;
                                if op == Op::Send {
                                    remote.drain(BURST, t)?;
                                }
                            }
                            Ok(())
                        });
                        r?;
                        if op == Op::Send {
                            remote.ack(t)?;
                        }
                        Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
                    })?;
                    let mc = mc.with_per_op("message", total as u64);
                    let id = format!(
                        "verbs.post/{}/{}/{}/{}/{}B",
                        out.target,
                        op.name(),
                        if inline { "inline" } else { "dma" },
                        if signaled { "signaled" } else { "unsignaled" },
                        size
                    );
                    out.meas(
                        id.clone(),
                        json!({"op": op.name(), "size_bytes": size, "inline": inline, "signaled": signaled, "burst": BURST, "max_inline_bytes": a.max_inline}),
                        "ns",
                        "cycle timer around one ibv_post_send (timer overhead subtracted), bursts of 16 posts then the completions are polled (untimed)",
                        &s,
                        mc,
                    );
                    if op == Op::Write && size == 8 && signaled {
                        if inline {
                            post_inline_id = Some(id);
                        } else {
                            post_dma_id = Some(id);
                        }
                    }
                }
            }
        }
    }
    let p50 = |out: &Out<'_>, id: &Option<String>| {
        id.as_ref().and_then(|id| {
            out.rep
                .measurements
                .iter()
                .find(|m| &m.id == id)
                .map(|m| m.distribution.p50)
        })
    };
    let post_inline = p50(out, &post_inline_id);
    let post_dma = p50(out, &post_dma_id);
    if let (Some(v), Some(id)) = (post_inline, &post_inline_id) {
        out.param(
            "llp_post_inline_ns",
            v,
            "ns",
            "median ibv_post_send of a signaled 8-byte inline RDMA write (seed 004 LLP_post)",
            vec![id.clone()],
        );
    }
    if let (Some(v), Some(id)) = (post_dma, &post_dma_id) {
        out.param(
            "llp_post_ns",
            v,
            "ns",
            "median ibv_post_send of a signaled 8-byte RDMA write, payload by DMA (not inline)",
            vec![id.clone()],
        );
    }

    // Polls: empty CQ, and a CQ holding completions.
    let mut wc = [ffi::ibv_wc::default(); 1];
    let n = if ctx.quick { 2000 } else { 100_000 };
    let mut buf = counters::sample_buffer(n);
    let (empty, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
        buf.clear();
        let (r, c) = group.count(|| -> Result<(), VerbsError> {
            for _ in 0..n {
                let t0 = ctx.timer.start();
                let r = Side::poll(a.scq, &mut wc);
                let t1 = ctx.timer.stop();
                if r == 0 {
                    buf.push(ctx.timer.elapsed_ns(t0, t1));
                } else if r > 0 {
                    if let Some((st, v)) = wc[0].error() {
                        return Err(completion_error(st, v));
                    }
                }
            }
            Ok(())
        });
        r?;
        Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
    })?;
    let mc = mc.with_per_op("poll", n as u64);
    let empty_id = format!("verbs.poll/{}/empty", out.target);
    out.meas(
        empty_id,
        json!({"entries": 1, "cq": "empty"}),
        "ns",
        "cycle timer around ibv_poll_cq(1) on an empty send CQ",
        &empty,
        mc,
    );

    let inline8 = a.max_inline >= 8;
    // How long BURST completions take to arrive: settle at twice that before polling.
    let t0 = Instant::now();
    for _ in 0..BURST {
        post_one(a, Op::Write, 8, inline8, true)?;
    }
    a.wait_send(BURST, t)?;
    let settle = (t0.elapsed() * 2).max(Duration::from_micros(20));
    let prog_rounds = if ctx.quick { 10 } else { 500 };
    let mut buf = counters::sample_buffer(prog_rounds * BURST);
    let (full, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
        buf.clear();
        let (r, c) = group.count(|| -> Result<(), VerbsError> {
            for _ in 0..prog_rounds {
                for _ in 0..BURST {
                    post_one(a, Op::Write, 8, inline8, true)?;
                }
                let end = Instant::now() + settle;
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
                let mut got = 0;
                for _ in 0..BURST {
                    let t0 = ctx.timer.start();
                    let r = Side::poll(a.scq, &mut wc);
                    let t1 = ctx.timer.stop();
                    if r < 0 {
                        return Err(VerbsError::code("ibv_poll_cq", r));
                    }
                    if r == 1 {
                        if let Some((st, v)) = wc[0].error() {
                            return Err(completion_error(st, v));
                        }
                        buf.push(ctx.timer.elapsed_ns(t0, t1));
                        got += 1;
                    } else {
                        break;
                    }
                }
                a.wait_send(BURST - got, t)?;
            }
            Ok(())
        });
        r?;
        Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
    })?;
    let mc = mc.with_per_op("message", (prog_rounds * BURST) as u64);
    let prog_id = format!("verbs.poll/{}/completion", out.target);
    let prog = out.meas(
        prog_id.clone(),
        json!({"entries": 1, "cq": "one or more completions waiting"}),
        "ns",
        "cycle timer around ibv_poll_cq(1) returning one completion of an 8-byte RDMA write",
        &full,
        mc,
    );
    if let Some(v) = prog {
        out.param(
            "llp_prog_ns",
            v,
            "ns",
            "median ibv_poll_cq returning one completion (seed 004 LLP_prog)",
            vec![prog_id.clone()],
        );
    }

    // Busy post: fill the send queue without polling, then time failing posts.
    let limit = (SCQ_DEPTH as usize / 2).min(4 * SQ_DEPTH as usize);
    let attempts = if ctx.quick { 1000 } else { 20_000 };
    let mut buf = counters::sample_buffer(attempts);
    let ((busy, outstanding), mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
        let mut w = Wr::new(a, Op::Write, 8, inline8, true);
        let mut outstanding = 0usize;
        let mut tries = 0;
        buf.clear();
        let (r, c) = group.count(|| -> Result<(), VerbsError> {
            while tries < attempts && outstanding < limit {
                let wr = w.link();
                let t0 = ctx.timer.start();
                let rc = a.post(wr);
                let t1 = ctx.timer.stop();
                if rc == 0 {
                    outstanding += 1;
                } else if rc == libc::ENOMEM || rc == -libc::ENOMEM {
                    buf.push(ctx.timer.elapsed_ns(t0, t1));
                    tries += 1;
                } else {
                    return Err(VerbsError::code("ibv_post_send", rc));
                }
            }
            Ok(())
        });
        r?;
        a.wait_send(outstanding, t)?;
        Ok::<_, VerbsError>(((buf.clone(), outstanding), ThreadCounts::single(c)))
    })?;
    let mc = mc.with_per_op("message", (outstanding + busy.len()) as u64);
    let busy_id = format!("verbs.post/{}/busy", out.target);
    let busy_p50 = out.meas(
        busy_id.clone(),
        json!({"queue": "send queue full", "depth_asked": SQ_DEPTH}),
        "ns",
        "cycle timer around ibv_post_send refused (ENOMEM) on a full send queue",
        &busy,
        mc,
    );
    match busy_p50 {
        Some(v) => out.param("busy_post_ns", v, "ns", "median refused ibv_post_send on a full send queue (seed 004 busy post)", vec![busy_id]),
        None => out.rep.warnings.push(Warning {
            code: "verbs-busy-post".into(),
            message: format!("the send queue never refused a post ({outstanding} accepted without polling): this provider frees queue slots as the NIC completes, so busy_post_ns is not measured"),
            remediation: String::new(),
        }),
    }

    // Injection: put_bw style, 8-byte inline writes, every one signaled, poll a batch
    // of 16 after every 16 posts, busy posts when the queue is full.
    let msgs = if ctx.quick { 2000 } else { 50_000 };
    let reps = if ctx.quick { 3 } else { 10 };
    let mut wcs = [ffi::ibv_wc::default(); BURST];
    let depth = SQ_DEPTH as usize;
    let ((inj, rate), mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
        let mut inj = Vec::with_capacity(reps);
        let mut rate = Vec::with_capacity(reps);
        let (r, c) = group.count(|| -> Result<(), VerbsError> {
            for _ in 0..reps {
                let mut w = Wr::new(a, Op::Write, 8, inline8, true);
                let mut posted = 0usize;
                let mut done = 0usize;
                let wall = Instant::now();
                let c0 = ctx.timer.start();
                let mut stalled: Option<Instant> = None;
                while posted < msgs {
                    let ok = posted - done < depth && a.post(w.link()) == 0;
                    if ok {
                        posted += 1;
                    }
                    if !ok || posted.is_multiple_of(BURST) {
                        let r = Side::reap(a.scq, &mut wcs)?;
                        done += r;
                        if r > 0 {
                            stalled = None;
                        } else if !ok {
                            // Only a full queue with nothing completing can stall.
                            let since = *stalled.get_or_insert_with(Instant::now);
                            if since.elapsed() > t {
                                return Err(VerbsError::CompletionTimeout(t, "injection loop"));
                            }
                        }
                    }
                }
                let c1 = ctx.timer.stop();
                a.wait_send(posted - done, t)?;
                let total = wall.elapsed().as_nanos() as f64;
                inj.push(ctx.timer.elapsed_ns(c0, c1) / msgs as f64);
                rate.push(msgs as f64 / total * 1e3);
            }
            Ok(())
        });
        r?;
        Ok::<_, VerbsError>(((inj, rate), ThreadCounts::single(c)))
    })?;
    let mc = mc.with_per_op("message", (msgs * reps) as u64);
    let inj_id = format!("verbs.inject/{}/write/8B", out.target);
    let inj_p50 = out.meas(inj_id.clone(), json!({"messages": msgs, "size_bytes": 8, "inline": inline8, "signaled": "every message", "poll_batch": BURST, "depth": depth}), "ns", "CPU time of a put_bw-style loop (post, poll a batch of 16 every 16 posts, busy posts when full) divided by the messages", &inj, mc.clone());
    if let Some(v) = inj_p50 {
        out.param("inj_overhead_ns", v, "ns", "seed 004 Inj_overhead = LLP_post + LLP_prog + Misc: CPU time per message of a continuous 8-byte inline RDMA-write stream", vec![inj_id.clone()]);
        if let (Some(p), Some(g)) = (post_inline, prog) {
            if let Some(m) = out.rep.measurements.iter_mut().find(|m| m.id == inj_id) {
                m.parameters["misc_ns"] = json!(v - p - g);
            }
        }
    }
    let rate_id = format!("verbs.rate/{}/write/8B", out.target);
    if let Some(v) = out.meas(
        rate_id.clone(),
        json!({"messages": msgs, "size_bytes": 8}),
        "Mmsg/s",
        "messages over wall time from the first post to the last completion of the injection loop",
        &rate,
        mc,
    ) {
        out.param("msg_rate_mps", v, "Mmsg/s", "8-byte inline RDMA writes per microsecond, one core, one QP (ib_write_bw -s 8 msg rate)", vec![rate_id]);
    }
    Ok(())
}

fn sizes(ctx: &Context) -> &'static [usize] {
    if ctx.quick {
        &QUICK_SIZES
    } else {
        &LAT_SIZES
    }
}

fn latency(
    cfg: &VerbsConfig,
    ctx: &Context,
    a: &Side,
    remote: &mut Remote<'_>,
    out: &mut Out<'_>,
) -> Result<(), VerbsError> {
    let t = cfg.timeout;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let mut points = Vec::new();
    let mut ids = Vec::new();
    for &size in sizes(ctx) {
        let iters = match (ctx.quick, size) {
            (true, _) => 60,
            (false, s) if s >= 262_144 => 200,
            _ => 2000,
        };
        let warm = iters / 10;
        ctx.progress(&format!("verbs.lat send/recv {size} B"));
        let inline = size <= a.max_inline as usize;
        let mut buf = counters::sample_buffer(iters);
        let (s, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            remote.command(
                Command::Pong {
                    size: size as u32,
                    iters: (iters + warm) as u32,
                },
                t,
            )?;
            buf.clear();
            let mut w = Wr::new(a, Op::Send, size, inline, false);
            let mut wb = match remote {
                Remote::Local(b) => Some(Wr::new(b, Op::Send, size, inline, false)),
                Remote::Tcp(..) => None,
            };
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for i in 0..iters + warm {
                    let signaled = i % 32 == 31;
                    w.set_signaled(signaled);
                    let t0 = ctx.timer.start();
                    let rc = a.post(w.link());
                    if rc != 0 {
                        return Err(VerbsError::code("ibv_post_send", rc));
                    }
                    if let (Remote::Local(b), Some(wb)) = (&*remote, wb.as_mut()) {
                        b.wait_recv(1, t)?;
                        wb.set_signaled(signaled);
                        let rc = b.post(wb.link());
                        if rc != 0 {
                            return Err(VerbsError::code("ibv_post_send", rc));
                        }
                    }
                    a.wait_recv(1, t)?;
                    let t1 = ctx.timer.stop();
                    if i >= warm {
                        buf.push(ctx.timer.elapsed_ns(t0, t1) / 2.0);
                    }
                    if signaled {
                        a.wait_send(1, t)?;
                        if let Remote::Local(b) = &*remote {
                            b.wait_send(1, t)?;
                        }
                    }
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>((buf.clone(), ThreadCounts::single(c)))
        })?;
        // Messages of the section: one each way per round trip.
        let mc = mc.with_per_op("message", 2 * (iters + warm) as u64);
        let id = format!("verbs.lat/{}/send/{}B", out.target, size);
        if let Some(v) = out.meas(id.clone(), json!({"op": "send/recv ping-pong", "size_bytes": size, "inline": inline, "iterations": iters}), "ns", "half round trip of a send/recv ping-pong, cycle timer per round trip (ib_send_lat)", &s, mc) {
            points.push((size as f64, v));
            ids.push(id.clone());
            if size == 8 {
                out.param("verbs_lat_ns", v, "ns", "median half round trip of an 8-byte send/recv ping-pong (seed 004 Latency; ib_send_lat -s 8)", vec![id]);
            }
        }
    }
    if let Ok(h) = hockney_fit(&points) {
        let m = format!(
            "least-squares fit of T(s) = lat + s/bw to the median half round trips, {HOCKNEY_WEIGHTS}{} (r2 = {:.4})",
            if h.latency_constrained {
                "; latency held at 0 (the unconstrained fit was negative)"
            } else {
                ""
            },
            h.r2
        );
        out.param("verbs_hockney_lat_ns", h.lat_ns, "ns", &m, ids.clone());
        out.param("verbs_hockney_bw_gbs", h.bw_gbs, "GB/s", &m, ids);
    }
    Ok(())
}

fn bandwidth(
    cfg: &VerbsConfig,
    ctx: &Context,
    a: &Side,
    out: &mut Out<'_>,
) -> Result<(), VerbsError> {
    let t = cfg.timeout;
    let mut group = CounterGroup::open_with_timer(&ctx.timer);
    let window = 64usize.min(SQ_DEPTH as usize);
    let mut best = None;
    for &size in sizes(ctx) {
        ctx.progress(&format!("verbs.bw write {size} B"));
        let msgs = if ctx.quick {
            ((4 << 20) / size).clamp(64, 2000)
        } else {
            ((256 << 20) / size).clamp(256, 100_000)
        };
        let reps = if ctx.quick { 2 } else { 5 };
        let inline = size <= a.max_inline as usize;
        let mut wcs = [ffi::ibv_wc::default(); BURST];
        let (s, mc) = counters::try_retry_undisturbed(MAX_ATTEMPTS, || {
            let mut s = Vec::with_capacity(reps);
            let (r, c) = group.count(|| -> Result<(), VerbsError> {
                for _ in 0..reps {
                    let mut w = Wr::new(a, Op::Write, size, inline, true);
                    let (mut posted, mut done) = (0usize, 0usize);
                    let start = Instant::now();
                    while done < msgs {
                        while posted < msgs && posted - done < window {
                            let rc = a.post(w.link());
                            if rc != 0 {
                                return Err(VerbsError::code("ibv_post_send", rc));
                            }
                            posted += 1;
                        }
                        let r = Side::reap(a.scq, &mut wcs)?;
                        done += r;
                        if r == 0 && start.elapsed() > t.saturating_mul(4) {
                            return Err(VerbsError::CompletionTimeout(t, "bandwidth stream"));
                        }
                    }
                    let ns = start.elapsed().as_nanos() as f64;
                    s.push((msgs * size) as f64 / ns);
                }
                Ok(())
            });
            r?;
            Ok::<_, VerbsError>((s, ThreadCounts::single(c)))
        })?;
        let mc = mc.with_per_op("message", (msgs * reps) as u64);
        let id = format!("verbs.bw/{}/write/{}B", out.target, size);
        if let Some(v) = out.meas(id.clone(), json!({"op": "write", "size_bytes": size, "inline": inline, "window": window, "messages": msgs}), "GB/s", "bytes of a stream of signaled RDMA writes (64 outstanding) over wall time to the last completion (ib_write_bw)", &s, mc) {
            best = Some((size, v, id));
        }
    }
    if let Some((size, v, id)) = best {
        out.param("verbs_bw_gbs", v, "GB/s", &format!("median streaming RDMA-write bandwidth at {size} B messages, 64 outstanding (ib_write_bw)"), vec![id]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab_ctx() -> Context {
        Context {
            progress: std::sync::Arc::new(|m| eprintln!("{m}")),
            ..Context::quick_local()
        }
    }

    fn lab_cfg() -> VerbsConfig {
        VerbsConfig {
            device: Some(std::env::var("CXLCHAR_LAB_RDMA").unwrap_or_else(|_| "rxe0".into())),
            timeout: Duration::from_secs(30),
            ..Default::default()
        }
    }

    /// A loopback RC pair on rxe0: an RDMA write and a send land the right bytes.
    #[test]
    #[ignore = "needs an RDMA device: runs in the emulated lab (ci/lab/run, rxe0 in guest a)"]
    fn lab_loopback_pair_moves_the_right_bytes() {
        let ctx = lab_ctx();
        let cfg = lab_cfg();
        let mut res = setup(&cfg, &ctx, 2).unwrap();
        connect_loopback(&mut res).unwrap();
        let (a, b) = (&res.sides[0], &res.sides[1]);
        for (op, size) in [(Op::Write, 4096usize), (Op::Send, 100), (Op::Write, 8)] {
            let pattern: Vec<u8> = (0..size).map(|i| (i * 7 + size) as u8 ^ 0x5a).collect();
            // SAFETY: both buffers lie in the registered region, MAX_MSG bytes each.
            unsafe {
                std::ptr::copy_nonoverlapping(pattern.as_ptr(), a.base, size);
                std::ptr::write_bytes(b.base.add(MAX_MSG), 0, size);
            }
            let inline = size <= a.max_inline as usize;
            post_one(a, op, size, inline, true).unwrap();
            a.wait_send(1, cfg.timeout).unwrap();
            if op == Op::Send {
                b.wait_recv(1, cfg.timeout).unwrap();
            }
            // SAFETY: as above; the completion orders the NIC's write before this read.
            let got = unsafe { std::slice::from_raw_parts(b.base.add(MAX_MSG), size) };
            assert_eq!(got, &pattern[..], "{op:?} {size} B");
        }
        // Nothing left over: an empty CQ polls 0.
        let mut wc = [ffi::ibv_wc::default(); 1];
        assert_eq!(Side::poll(a.scq, &mut wc), 0);
    }

    /// The whole family on rxe0 loopback returns every key.
    #[test]
    #[ignore = "needs an RDMA device: runs in the emulated lab (ci/lab/run, rxe0 in guest a)"]
    fn lab_post_breakdown_returns_all_keys() {
        let ctx = lab_ctx();
        let cfg = lab_cfg();
        let rep = run(&cfg, "rdma:rxe0/loopback", &ctx).unwrap();
        let keys: Vec<&str> = rep.params.iter().map(|p| p.key.as_str()).collect();
        eprintln!(
            "{:?}",
            rep.params
                .iter()
                .map(|p| (&p.key, p.value))
                .collect::<Vec<_>>()
        );
        for k in [
            "llp_post_inline_ns",
            "llp_post_ns",
            "llp_prog_ns",
            "inj_overhead_ns",
            "msg_rate_mps",
            "verbs_lat_ns",
            "verbs_bw_gbs",
            "verbs_hockney_lat_ns",
            "verbs_hockney_bw_gbs",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert!(
            keys.contains(&"busy_post_ns")
                || rep.warnings.iter().any(|w| w.code == "verbs-busy-post"),
            "busy post neither measured nor explained"
        );
        assert!(rep.params.iter().all(|p| p.value.is_finite()));
        let m = |k: &str| rep.params.iter().find(|p| p.key == k).unwrap().value;
        assert!(m("msg_rate_mps") > 0.0 && m("verbs_bw_gbs") > 0.0);
        assert!(rep
            .measurements
            .iter()
            .any(|m| m.id.contains("/send/inline/")));
        for m in &rep.measurements {
            let c = m
                .counters
                .as_ref()
                .expect("every verbs measurement carries counters");
            assert!((1..=3).contains(&c.attempts), "{}", m.id);
            if c.counts.llc_load_misses.is_some() {
                assert!(c
                    .per_op
                    .keys()
                    .any(|k| k.starts_with("llc_load_misses_per_")));
            }
        }
    }

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

    #[test]
    fn unreachable_peer_times_out() {
        // 192.0.2.0/24 is TEST-NET-1: nothing answers; the connect must give up in time.
        let t = Duration::from_millis(300);
        let t0 = Instant::now();
        let r = tcp_connect("192.0.2.123", 9, t);
        assert!(r.is_err());
        assert!(t0.elapsed() < Duration::from_secs(5));
        let s = r.unwrap_err().to_string();
        assert!(s.contains("192.0.2.123:9"), "{s}");
    }

    #[test]
    fn accept_times_out_and_exchange_detects_mismatch() {
        let t0 = Instant::now();
        assert!(tcp_accept(0, Duration::from_millis(100)).is_err());
        assert!(t0.elapsed() < Duration::from_secs(5));

        // A fake peer that answers with another wire version.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; QP_INFO_BYTES];
            s.read_exact(&mut b).unwrap();
            b[5] ^= 0xff;
            s.write_all(&b).unwrap();
        });
        let mut s = tcp_connect("127.0.0.1", port, Duration::from_secs(2)).unwrap();
        let ours = QpInfo {
            qpn: 17,
            mtu: 3,
            ..Default::default()
        };
        let e = exchange(&mut s, &ours, "peer", Duration::from_secs(2)).unwrap_err();
        h.join().unwrap();
        assert!(
            matches!(
                e,
                VerbsError::Wire {
                    source: crate::wire::WireError::VersionMismatch { .. },
                    ..
                }
            ),
            "{e}"
        );

        // A silent peer: the exchange gives up after the timeout.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let _keep = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            std::thread::sleep(Duration::from_secs(2));
            drop(s);
        });
        let mut s = tcp_connect("127.0.0.1", port, Duration::from_secs(2)).unwrap();
        let t0 = Instant::now();
        let e = exchange(&mut s, &ours, "silent", Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, VerbsError::Exchange { .. }), "{e}");
        assert!(t0.elapsed() < Duration::from_millis(1900));
    }
}
