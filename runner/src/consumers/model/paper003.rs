//! Seed 003 (CCCL): pool bandwidth under contention (GPU DMA, else CPU agents; with the
//! agents spread over two targets when measured) and the pool latency factor.

use super::eval::{Ctx, Model};

/// The agents' directions, what they stand for, and the GPU direction they match.
const AGENT_DIRS: [(&str, &str); 2] = [
    ("write", "rank -> pool (as GPU -> pool)"),
    ("read", "pool -> rank (as pool -> GPU)"),
];

/// The agent counts k with a value of `{family}_{dir}_k{k}_bw_gbs` (unqualified) in the
/// inputs, what-ifs included, in increasing order.
fn agent_counts(c: &Ctx, family: &str, dir: &str) -> Vec<u32> {
    let head = format!("{family}_{dir}_k");
    let mut ks: Vec<u32> = c
        .inputs
        .base
        .keys()
        .chain(c.inputs.overrides.keys())
        .filter_map(|k| k.strip_prefix(&head)?.strip_suffix("_bw_gbs")?.parse().ok())
        .filter(|&k: &u32| k >= 1)
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// The one-target agent family for `dir`: far memory (`cxl_agents`, the pool device)
/// before local memory (`agents`), with where it was measured; `None` without B(1).
fn agent_family(c: &mut Ctx, dir: &str) -> Option<(&'static str, &'static str)> {
    if c.has(&format!("cxl_agents_{dir}_k1_bw_gbs")) {
        Some((
            "cxl_agents",
            "far memory (a memory-only node or dax device)",
        ))
    } else if c.has(&format!("agents_{dir}_k1_bw_gbs")) {
        Some((
            "agents",
            "local memory (not a CXL device: the method, not the pool's figure)",
        ))
    } else {
        None
    }
}

/// B(k) of CPU agents on one target, per direction; `false` when no direction has B(1).
fn eval_agents(c: &mut Ctx) -> bool {
    let mut any = false;
    for (d, what) in AGENT_DIRS {
        let Some((fam, place)) = agent_family(c, d) else {
            continue;
        };
        any = true;
        let ks = agent_counts(c, fam, d);
        let b1 = c.need(&format!("{fam}_{d}_k1_bw_gbs"));
        c.out(
            &format!("bw_{d}_k1_gbs"),
            b1,
            "GB/s",
            &format!("{what}, one CPU agent alone on {place}"),
        );
        for &k in ks.iter().filter(|&&k| k > 1) {
            let bk = c.need(&format!("{fam}_{d}_k{k}_bw_gbs"));
            c.out(
                &format!("bw_{d}_k{k}_gbs"),
                bk,
                "GB/s",
                &format!("{what}, per agent with {k} concurrent on one target, measured"),
            );
            c.out(
                &format!("slowdown_{d}_k{k}_ratio"),
                b1 / bk,
                "ratio",
                &format!("B(1)/B({k}): {k} when the target is shared evenly and one agent saturates it (Observation 2); 1 when the agents do not contend"),
            );
        }
        let list: Vec<String> = ks.iter().map(u32::to_string).collect();
        c.notes.push(format!(
            "no GPU DMA keys: {d} evaluated with CPU agents (pinned threads, cxlchar mem agents) on {place}: {fam}_{d}_k{{{}}}_bw_gbs, each agent moving the same S",
            list.join(",")
        ));
    }
    any
}

/// The spread counterpart: the same agents round robin over two targets, and its gain
/// over one target at the same k (the independence interleaving relies on).
fn eval_spread(c: &mut Ctx) {
    for (d, what) in AGENT_DIRS {
        let ks = agent_counts(c, "agents_spread", d);
        if ks.is_empty() {
            continue;
        }
        let one = agent_family(c, d).map(|(f, _)| f);
        for k in ks {
            let v = c.need(&format!("agents_spread_{d}_k{k}_bw_gbs"));
            c.out(
                &format!("spread_bw_{d}_k{k}_gbs"),
                v,
                "GB/s",
                &format!(
                    "{what}, per agent with {k} agents round robin over two targets, measured"
                ),
            );
            let key = one.map(|f| format!("{f}_{d}_k{k}_bw_gbs"));
            if let Some(key) = key.filter(|k| c.has(k)) {
                let bk = c.need(&key);
                c.out(
                    &format!("spread_gain_{d}_k{k}_ratio"),
                    v / bk,
                    "ratio",
                    &format!("spread / one target ({key}): up to 2 when each target saturates and the two are independent (CCCL Sec. 3.2's interleaving); 1 when one target does not contend"),
                );
            }
        }
    }
}

fn eval_003_contention(c: &mut Ctx) {
    let dirs = [("h2d", "pool -> GPU"), ("d2h", "GPU -> pool")];
    if !dirs
        .iter()
        .any(|(d, _)| c.has(&format!("gpu_pool_{d}_bw_gbs")))
    {
        if !eval_agents(c) {
            c.need_note(
                "gpu_pool_h2d_bw_gbs",
                "or gpu_pool_d2h_bw_gbs (one direction suffices); without a GPU, CPU agents: cxl_agents_write_k1_bw_gbs (cxlchar mem agents --target node:N) or agents_write_k1_bw_gbs (cxlchar mem agents)",
            );
            return;
        }
        eval_spread(c);
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
    eval_spread(c);
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
            title: "per-transfer pool bandwidth under k concurrent transfers (GPU DMA, else CPU agents), and spread over two targets",
            source: "seed 003 (CCCL), Sec. 2.3, Observation 2 (Fig. 3b, 3c); Sec. 3.2 (interleaving across devices)",
            equation: "B(k) = B(1) / k (bandwidth shared evenly among k transfers to one device); measured gpu_pool_<dir>_k<k>_bw_gbs preferred; without GPU keys, CPU agents' measured (cxl_)agents_<dir>_k<k>_bw_gbs and B(1)/B(k); spread: agents_spread_<dir>_k<k>_bw_gbs and its gain over one target",
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
