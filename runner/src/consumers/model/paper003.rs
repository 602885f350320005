//! Seed 003 (CCCL): GPU <-> pool bandwidth under contention and the pool latency factor.

use super::eval::{Ctx, Model};

fn eval_003_contention(c: &mut Ctx) {
    let dirs = [("h2d", "pool -> GPU"), ("d2h", "GPU -> pool")];
    if !dirs
        .iter()
        .any(|(d, _)| c.has(&format!("gpu_pool_{d}_bw_gbs")))
    {
        c.need_note(
            "gpu_pool_h2d_bw_gbs",
            "or gpu_pool_d2h_bw_gbs (one direction suffices)",
        );
        return;
    }
    for (d, what) in dirs {
        let k1 = format!("gpu_pool_{d}_bw_gbs");
        if !c.has(&k1) {
            continue;
        }
        let b1 = c.need(&k1);
        for k in 1u32..=4 {
            let per_k = format!("gpu_pool_{d}_k{k}_bw_gbs");
            let (v, note) = if k > 1 && c.has(&per_k) {
                (
                    c.need(&per_k),
                    format!("{what}, measured per transfer with {k} concurrent"),
                )
            } else {
                (
                    b1 / f64::from(k),
                    format!("{what}, B(1)/{k}: even share of one device among {k} transfers"),
                )
            };
            c.out(&format!("bw_{d}_k{k}_gbs"), v, "GB/s", &note);
        }
    }
}

fn eval_003_latfactor(c: &mut Ctx) {
    let cxl = c.need("cxl_lat_ns");
    let mem = c.need("mem_lat_ns");
    if c.missing.is_empty() {
        c.out(
            "cxl_lat_factor",
            cxl / mem,
            "ratio",
            "pool (CXL) idle latency / local DRAM idle latency",
        );
    }
}

/// The models of seed 003.
pub(super) fn models() -> Vec<Model> {
    vec![
        Model {
            id: "003-contention",
            title: "per-transfer GPU <-> pool bandwidth under k concurrent transfers",
            source: "seed 003 (CCCL), Sec. 2.3, Observation 2 (Fig. 3b, 3c)",
            equation: "B(k) = B(1) / k (bandwidth shared evenly among k transfers to one device); measured gpu_pool_<dir>_k<k>_bw_gbs preferred",
            eval: eval_003_contention,
        },
        Model {
            id: "003-latency-factor",
            title: "pool latency relative to local DRAM",
            source: "seed 003, Sec. 2.3, Table 1",
            equation: "factor = CXL_LAT / MEM_LAT",
            eval: eval_003_latfactor,
        },
    ]
}
