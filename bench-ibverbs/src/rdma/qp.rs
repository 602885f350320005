//! The RC queue pairs: the registered region on a cxlchar target, one send and one
//! receive CQ per queue pair, posting and polling, and the INIT -> RTR -> RTS transitions
//! (loopback or against a peer's [`QpInfo`]).

use super::device::{open_device, Device};
use super::{BURST, INLINE_ASK, MAX_MSG, RQ_DEPTH, SCQ_DEPTH, SIDE_BYTES, SQ_DEPTH};
use crate::config::VerbsConfig;
use crate::error::VerbsError;
use crate::wire::QpInfo;
use bench_core::bench::Context;
use bench_core::memory::Region;
use ibverbs_sys as ffi;
use std::ffi::CStr;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

/// One RC queue pair with its send and receive CQs and its half of the buffers.
pub struct Side {
    pub(super) qp: *mut ffi::ibv_qp,
    pub(super) scq: *mut ffi::ibv_cq,
    pub(super) rcq: *mut ffi::ibv_cq,
    pub(super) base: *mut u8,
    pub(super) lkey: u32,
    pub(super) rkey: u32,
    pub(super) psn: u32,
    /// Inline data the QP accepts (bytes).
    pub max_inline: u32,
    /// Peer's destination buffer (address, rkey).
    pub(super) remote: (u64, u32),
}

impl Side {
    pub(super) fn info(&self, dev: &Device) -> QpInfo {
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
    pub(super) fn post(&self, wr: &mut ffi::ibv_send_wr) -> i32 {
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

    pub(super) fn post_recv(&self, size: usize) -> Result<(), VerbsError> {
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
    pub(super) fn poll(cq: *mut ffi::ibv_cq, wc: &mut [ffi::ibv_wc]) -> i32 {
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
    pub(super) fn reap(cq: *mut ffi::ibv_cq, wcs: &mut [ffi::ibv_wc]) -> Result<usize, VerbsError> {
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
    pub(super) fn wait(
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

    pub(super) fn wait_send(&self, n: usize, t: Duration) -> Result<(), VerbsError> {
        Self::wait(self.scq, n, t, "send completion")
    }

    /// Waits for `n` receives and re-posts them (the receive queue stays full).
    pub(super) fn wait_recv(&self, n: usize, t: Duration) -> Result<(), VerbsError> {
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
    pub(super) fn connect(&mut self, dev: &Device, remote: &QpInfo) -> Result<(), VerbsError> {
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

pub(super) fn completion_error(status: u32, vendor_err: u32) -> VerbsError {
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
#[cfg(test)]
mod tests {
    use super::super::test_util::{lab_cfg, lab_ctx};
    use super::super::wr::{post_one, Op};
    use super::*;

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
}
