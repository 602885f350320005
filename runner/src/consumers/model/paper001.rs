//! Seed 001 (HINT): the temporal/non-temporal copy threshold per processes per node.

use super::eval::{Ctx, Model};

fn eval_001(c: &mut Ctx) {
    let has_l2 = c.has("l2_size_bytes");
    let has_meas = c.has("nt_copy_threshold_bytes");
    if !has_l2 && !has_meas {
        c.need_note(
            "nt_copy_threshold_bytes",
            "or l2_size_bytes / environment.topology.caches (an L2 entry) for the L2/P rule",
        );
        return;
    }
    if has_l2 {
        c.notes.push(
            "l2_size_bytes: the file's key, else environment.topology.caches (size of one L2 instance)"
                .into(),
        );
    }
    if has_meas {
        let t = c.need("nt_copy_threshold_bytes");
        c.out(
            "nt_threshold_measured_bytes",
            t,
            "bytes",
            "measured temporal/NT crossover (one process)",
        );
    }
    for p in [1u32, 2, 4, 8, 16, 32, 64, 128] {
        let k = format!("nt_copy_threshold_p{p}_bytes");
        if c.has(&k) {
            let v = c.need(&k);
            c.out(
                &format!("nt_threshold_p{p}_bytes"),
                v,
                "bytes",
                &format!("measured with {p} processes per node"),
            );
        } else if has_l2 {
            let l2 = c.need("l2_size_bytes");
            c.out(
                &format!("nt_threshold_p{p}_bytes"),
                l2 / f64::from(p),
                "bytes",
                &format!("L2 / P with P = {p} processes per node (rule of thumb)"),
            );
        }
    }
}

/// The models of seed 001.
pub(super) fn models() -> Vec<Model> {
    vec![
        Model {
            id: "001-nt-threshold",
            title: "temporal/non-temporal copy switch size per processes per node",
            source: "seed 001 (HINT), Sec. V-E, Algorithm 4",
            equation: "T(P) = L2 / P (initial threshold; copies below T temporal, the rest non-temporal); measured nt_copy_threshold_*_bytes preferred",
            eval: eval_001,
        },
    ]
}
