//! Work requests: the kind ([`Op`]), a prepared request re-linked before each post, and
//! one-off posts.

use super::qp::Side;
use crate::error::VerbsError;
use ibverbs_sys as ffi;
use std::ptr::null_mut;

fn send_flag(f: ffi::ibv_send_flags) -> u32 {
    f.0
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
    pub(super) fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Send => "send",
        }
    }
}

/// A prepared work request (its sge lives next to it; re-link before each post).
pub(super) struct Wr {
    sge: ffi::ibv_sge,
    wr: ffi::ibv_send_wr,
}

impl Wr {
    pub(super) fn new(side: &Side, op: Op, size: usize, inline: bool, signaled: bool) -> Wr {
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

    pub(super) fn set_signaled(&mut self, on: bool) {
        let s = send_flag(ffi::ibv_send_flags::IBV_SEND_SIGNALED);
        if on {
            self.wr.send_flags |= s;
        } else {
            self.wr.send_flags &= !s;
        }
    }

    #[inline(always)]
    pub(super) fn link(&mut self) -> &mut ffi::ibv_send_wr {
        self.wr.sg_list = &mut self.sge;
        self.wr.next = null_mut();
        &mut self.wr
    }
}

/// Posts one work request (untimed).
pub(super) fn post_one(
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
