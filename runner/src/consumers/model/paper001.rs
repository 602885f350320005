//! Seed 001 (HINT): the temporal/non-temporal copy threshold per processes per node.

use super::eval::{Ctx, Model};

/// The processes-per-node counts the model reports.
const PPN: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// Every output line names its source in its name and note: `_measured_` (a crossover of
/// `mem copy-threshold`) or `_rule_` (L2 / P); where both exist for a P, both are printed
/// with their ratio. Nothing falls back silently from one to the other.
fn eval_001(c: &mut Ctx) {
    let has_l2 = c.has("l2_size_bytes");
    let has_all = c.has("nt_copy_threshold_bytes");
    let measured: Vec<(u32, String)> = PPN
        .iter()
        .map(|&p| (p, format!("nt_copy_threshold_p{p}_bytes")))
        .filter(|(_, k)| c.has(k))
        .collect();
    if !has_l2 && !has_all && measured.is_empty() {
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
    c.notes.push(
        "each line's source is in its name: _measured_ = mem copy-threshold's crossover, _rule_ = L2 / P; where both exist for a P, measured_over_rule_factor = measured / rule"
            .into(),
    );
    if has_all {
        let t = c.need("nt_copy_threshold_bytes");
        c.out(
            "nt_threshold_all_cpus_measured_bytes",
            t,
            "bytes",
            "measured: crossover with P = every --cpu of the run (nt_copy_threshold_bytes; its P is the largest nt_copy_threshold_p{P}_bytes of the same run)",
        );
    }
    let l2 = has_l2.then(|| c.need("l2_size_bytes"));
    for p in PPN {
        let m = measured
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, k)| k.clone());
        let mv = m.as_ref().map(|k| c.need(k));
        if let Some(v) = mv {
            c.out(
                &format!("nt_threshold_p{p}_measured_bytes"),
                v,
                "bytes",
                &format!("measured: smallest block from which NT copies win, {p} processes per node (mem copy-threshold)"),
            );
        }
        if let Some(l2) = l2 {
            let rule = l2 / f64::from(p);
            c.out(
                &format!("nt_threshold_p{p}_rule_bytes"),
                rule,
                "bytes",
                &format!("rule: L2 / P with P = {p} (HINT's initial T, Sec. V-E), not measured"),
            );
            if let Some(v) = mv {
                c.out(
                    &format!("nt_threshold_p{p}_measured_over_rule_factor"),
                    v / rule,
                    "ratio",
                    &format!("measured / rule at P = {p}"),
                );
            }
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
            equation: "T(P) = L2 / P (rule, initial threshold; copies below T temporal, the rest non-temporal), printed beside the measured nt_copy_threshold_p{P}_bytes with measured / rule",
            eval: eval_001,
        },
    ]
}
