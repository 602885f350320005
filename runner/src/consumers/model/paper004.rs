//! Seed 004 (Breaking Band): the LLP post breakdown, injection overhead and
//! small-message latency of RDMA (Sec. 4, 5).

use super::eval::{Ctx, Model};

const LLP_COMPONENTS: [&str; 5] = [
    "md_setup_ns",
    "md_barrier_ns",
    "dbc_barrier_ns",
    "pio_copy_64b_ns",
    "post_misc_ns",
];

/// The measured LLP_post: the PIO + inline post of seed 004 (Table 1, 175.42 ns), which
/// `cxlchar verbs` writes as `llp_post_inline_ns`; its `llp_post_ns` is the non-inline DMA
/// post, not the paper's LLP_post, and no model reads it.
const LLP_POST: &str = "llp_post_inline_ns";

/// LLP_post: the sum of its Table 1 components when all are present; else
/// `llp_post_inline_ns`, with what-ifs on components applied as deltas to it.
fn llp_post(c: &mut Ctx) -> f64 {
    if c.overridden(LLP_POST) {
        for k in LLP_COMPONENTS {
            if c.overridden(k) {
                c.notes.push(format!(
                    "--what-if {k} has no effect here: {LLP_POST} is given directly"
                ));
            }
        }
        return c.need(LLP_POST);
    }
    if LLP_COMPONENTS.iter().all(|k| c.has(k)) {
        c.notes
            .push("LLP_post = sum of its components (Table 1 rows 1-5)".into());
        return LLP_COMPONENTS.iter().map(|k| c.need(k)).sum();
    }
    let mut v = c.need_note(
        LLP_POST,
        "or all of md_setup_ns, md_barrier_ns, dbc_barrier_ns, pio_copy_64b_ns, post_misc_ns; \
         the paper's LLP_post is a PIO + inline post, so llp_post_ns (a non-inline DMA post) \
         does not stand in for it",
    );
    for k in LLP_COMPONENTS {
        if c.overridden(k) {
            match c.inputs.base.get(k).copied() {
                Some(b) => {
                    let new = c.need(k);
                    v += new - b;
                    c.notes.push(format!(
                        "what-if on {k} applied to {LLP_POST} as a change of {:+.2} ns",
                        new - b
                    ));
                }
                None => {
                    c.need_note(
                        &format!("{k}@measured"),
                        &format!("the measured {k} is needed to apply --what-if {k} to {LLP_POST}"),
                    );
                }
            }
        }
    }
    v
}

/// The micro-op stand-ins of the post components (`cxlchar pcie post-parts`, and
/// `pcie mmio`'s PIO copy), each with the paper's component it stands in for.
pub(super) const MICROOPS: [(&str, &str); 4] = [
    ("md_write_64b_ns", "md_setup_ns"),
    ("store_barrier_ns", "md_barrier_ns"),
    ("dbc_store_barrier_ns", "dbc_barrier_ns"),
    ("pio_copy_64b_ns", "pio_copy_64b_ns"),
];

/// The note every micro-op composition carries.
pub(super) const MICROOPS_NOTE: &str = "micro-op stand-ins, NOT the paper's profile: seed 004 \
     (Sec. 4.1) times the regions of the provider's post path (md_setup_ns, md_barrier_ns, \
     dbc_barrier_ns, post_misc_ns, supplied with --what-if); cxlchar pcie post-parts times the \
     operations they are made of (md_write_64b_ns: descriptor stores only, without computing \
     the fields or the inline memcpy; store_barrier_ns and dbc_store_barrier_ns: x86 sfence \
     where the paper has aarch64 dmb st; pio_copy_64b_ns from cxlchar pcie mmio)";

/// The profile path applies when any profile-only component is present or the micro-op
/// stand-ins are absent.
fn use_microops(c: &mut Ctx) -> bool {
    let profile = LLP_COMPONENTS
        .iter()
        .filter(|k| **k != "pio_copy_64b_ns")
        .any(|k| c.has(k));
    let stand_in = MICROOPS
        .iter()
        .filter(|(k, _)| *k != "pio_copy_64b_ns")
        .any(|(k, _)| c.has(k));
    !profile && stand_in
}

/// The sum of the micro-op stand-ins of LLP_post's categories (misc excluded).
pub(super) fn microops_sum(values: &[f64]) -> f64 {
    values.iter().sum()
}

fn eval_004_post_microops(c: &mut Ctx) {
    c.notes.push(MICROOPS_NOTE.into());
    let note = "micro-op stand-in (cxlchar pcie post-parts; the PIO copy from cxlchar pcie mmio \
                --bar ... --allow-write); or supply the paper's profile (md_setup_ns, \
                md_barrier_ns, dbc_barrier_ns, pio_copy_64b_ns, post_misc_ns) with --what-if";
    let vals: Vec<f64> = MICROOPS.iter().map(|(k, _)| c.need_note(k, note)).collect();
    let (has_sequence, has_post) = (c.has("post_microops_ns"), c.has(LLP_POST));
    if !c.missing.is_empty() {
        return;
    }
    let sum = microops_sum(&vals);
    c.out(
        "microops_sum_ns",
        sum,
        "ns",
        "micro-op stand-in of LLP_post without misc: md_write_64b_ns (MD setup) + \
         store_barrier_ns (MD barrier) + dbc_store_barrier_ns (DBC barrier) + pio_copy_64b_ns \
         (PIO copy); not the paper's profile",
    );
    if has_sequence {
        let seq = c.need("post_microops_ns");
        c.out(
            "microops_sequence_ns",
            seq,
            "ns",
            "the same micro-ops measured as one sequence (post_microops_ns)",
        );
    }
    if has_post {
        let m = c.need(LLP_POST);
        c.out(
            "llp_post_measured_ns",
            m,
            "ns",
            "LLP_post measured: ibv_post_send of an 8-byte inline write (llp_post_inline_ns)",
        );
        c.out(
            "microops_gap_ns",
            m - sum,
            "ns",
            "llp_post_inline_ns - microops_sum_ns: the post's misc (calls, branches, locking) \
             plus what the micro-ops miss (computing the descriptor, the inline memcpy, the DBC \
             increment); not the paper's post_misc_ns",
        );
    } else {
        c.notes.push(format!(
            "no {LLP_POST} (cxlchar verbs on an RDMA device): the gap to the measured post is not shown"
        ));
    }
}

fn eval_004_post(c: &mut Ctx) {
    if use_microops(c) {
        return eval_004_post_microops(c);
    }
    let v: f64 = LLP_COMPONENTS.iter().map(|k| c.need(k)).sum();
    if c.missing.is_empty() {
        c.out(
            "llp_post_sum_ns",
            v,
            "ns",
            "LLP_post (PIO + inline post) from its components",
        );
        if c.has(LLP_POST) && !c.overridden(LLP_POST) {
            let m = c.need(LLP_POST);
            c.out(
                "llp_post_residual_ns",
                m - v,
                "ns",
                "measured llp_post_inline_ns minus the sum of components",
            );
        }
    } else {
        c.notes.push(
            "the paper's components come from a profile of the provider; cxlchar pcie \
             post-parts measures micro-op stand-ins (md_write_64b_ns, store_barrier_ns, \
             dbc_store_barrier_ns), which this model composes when the profile is absent"
                .into(),
        );
    }
}

fn eval_004_injection(c: &mut Ctx) {
    let post = llp_post(c);
    let prog = c.need("llp_prog_ns");
    let misc = c.need_note(
        "inj_misc_ns",
        "per-message harness overhead (busy posts, measurement); --what-if inj_misc_ns=0 for none",
    );
    if c.missing.is_empty() {
        let inj = post + prog + misc;
        c.out(
            "inj_overhead_ns",
            inj,
            "ns",
            "time between messages at the NIC",
        );
        c.out(
            "msg_rate_mps",
            1e3 / inj,
            "Mmsg/s",
            "single-core message rate 1/Inj_overhead",
        );
    }
}

fn eval_004_injection_hlp(c: &mut Ctx) {
    let llp = llp_post(c);
    let hlp = c.need("hlp_post_ns");
    let prog = c.need("post_prog_ns");
    let misc = c.need_note(
        "hlp_misc_ns",
        "amortized busy posts per operation; --what-if hlp_misc_ns=0 for none",
    );
    if c.missing.is_empty() {
        c.out("post_ns", llp + hlp, "ns", "Post = LLP_post + HLP_post");
        let t = llp + hlp + prog + misc;
        c.out("cpu_time_ns", t, "ns", "overall injection overhead (eq. 2)");
        c.out("msg_rate_mps", 1e3 / t, "Mmsg/s", "1/CPU_time");
    }
}

/// The note a latency model carries when `pcie_rtt_ns / 2` stands in for the paper's PCIe.
pub(super) const PCIE_STAND_IN: &str = "PCIe = pcie_rtt_ns / 2, a stand-in that is NOT the \
     paper's PCIe: seed 004 (Sec. 4.3) measures PCIe with a PCIe analyzer at the link, as half \
     the time from the NIC's 64 B MWr to the root complex's ACK DLLP (137.49 ns); pcie_rtt_ns \
     is a CPU uncached 8 B read round trip (core, uncore and root complex to the device and \
     its completion back), which adds the CPU-side path the analyzer does not see; the model \
     counts the difference twice (2 x PCIe)";

fn pcie_one_way(c: &mut Ctx) -> f64 {
    if c.has("pcie_ns") || !c.has("pcie_rtt_ns") {
        return c.need_note(
            "pcie_ns",
            "or pcie_rtt_ns (cxlchar pcie mmio), whose half stands in with a note: a CPU \
             uncached-read round trip, not the analyzer's link-level figure",
        );
    }
    c.notes.push(PCIE_STAND_IN.into());
    c.need("pcie_rtt_ns") / 2.0
}

fn network(c: &mut Ctx) -> f64 {
    if c.has("net_ns") {
        return c.need("net_ns");
    }
    let note = "or net_ns (= wire + switch); --what-if net_switch_ns=0 for a direct link";
    c.need_note("net_wire_ns", note) + c.need_note("net_switch_ns", note)
}

fn latency_004(c: &mut Ctx) -> f64 {
    let post = llp_post(c);
    let pcie = pcie_one_way(c);
    let net = network(c);
    let rc = c.need("rc_to_mem_8b_ns");
    let prog = c.need("llp_prog_ns");
    post + 2.0 * pcie + net + rc + prog
}

fn eval_004_latency(c: &mut Ctx) {
    let l = latency_004(c);
    if c.missing.is_empty() {
        c.out(
            "latency_ns",
            l,
            "ns",
            "LLP-level one-way latency of a small message",
        );
    }
}

fn eval_004_e2e(c: &mut Ctx) {
    let l = latency_004(c);
    let hp = c.need("hlp_post_ns");
    let hr = c.need("hlp_rx_prog_ns");
    if c.missing.is_empty() {
        let e2e = l + hp + hr;
        c.out("latency_e2e_ns", e2e, "ns", "end-to-end latency with MPI");
        let net = network(c);
        c.out(
            "network_share_ratio",
            net / e2e,
            "ratio",
            "share of the network (wire + switch) in the end-to-end latency",
        );
    }
}

/// The models of seed 004.
pub(super) fn models() -> Vec<Model> {
    vec![
        Model {
            id: "004-llp-post",
            title: "breakdown of an LLP post",
            source: "seed 004 (Breaking Band), Sec. 4.1, Table 1, Fig. 4",
            equation: "LLP_post = MD setup + MD barrier + DoorBell-counter barrier + PIO copy (64 B) + misc",
            eval: eval_004_post,
        },
        Model {
            id: "004-injection",
            title: "injection overhead (LLP)",
            source: "seed 004, Sec. 4.2, eq. (1)",
            equation: "Inj_overhead = LLP_post + LLP_prog + Misc",
            eval: eval_004_injection,
        },
        Model {
            id: "004-injection-mpi",
            title: "overall injection overhead (with MPI/UCP)",
            source: "seed 004, Sec. 5, eq. (2)",
            equation: "CPU_time = Post + Post_prog + Misc,  Post = LLP_post + HLP_post",
            eval: eval_004_injection_hlp,
        },
        Model {
            id: "004-latency",
            title: "small-message latency (LLP)",
            source: "seed 004, Sec. 4.3",
            equation: "Latency = LLP_post + 2 x PCIe + Network + RC-to-MEM(8B) + LLP_prog",
            eval: eval_004_latency,
        },
        Model {
            id: "004-latency-e2e",
            title: "end-to-end latency (with MPI/UCP)",
            source: "seed 004, Sec. 5",
            equation: "Latency = HLP_post + LLP_post + 2 x PCIe + Network + RC-to-MEM(8B) + LLP_prog + HLP_rx_prog",
            eval: eval_004_e2e,
        },
    ]
}
