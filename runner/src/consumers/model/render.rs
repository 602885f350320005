//! The results of `cxlchar model` as a readable report.

use super::eval::ModelResult;
use crate::output::table::{Align::*, TextTable};
use std::collections::BTreeMap;

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if (v.fract() == 0.0 && a < 1e15) || a >= 1e5 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// The results as a readable report.
pub fn render_table(results: &[ModelResult], what_ifs: &BTreeMap<String, f64>) -> String {
    let mut s = String::new();
    if !what_ifs.is_empty() {
        s.push_str("what-if: ");
        let w: Vec<String> = what_ifs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        s.push_str(&w.join(", "));
        s.push_str("\n\n");
    }
    for r in results {
        s.push_str(&format!("{}  {}  [{}]\n", r.id, r.title, r.status));
        s.push_str(&format!("  source:   {}\n", r.source));
        s.push_str(&format!("  equation: {}\n", r.equation));
        if r.evaluated() {
            let ins: Vec<String> = r
                .inputs
                .iter()
                .map(|i| {
                    format!(
                        "{} = {}{}",
                        i.key,
                        fmt_num(i.value),
                        if i.what_if { " (what-if)" } else { "" }
                    )
                })
                .collect();
            s.push_str(&format!("  read:     {}\n", ins.join(", ")));
            for n in &r.notes {
                s.push_str(&format!("  note:     {n}\n"));
            }
            let mut t = TextTable::new(&[
                ("output", Left),
                ("value", Right),
                ("unit", Left),
                ("meaning", Left),
            ])
            .indent(2);
            for o in &r.outputs {
                let base = match o.baseline {
                    Some(b) if b != o.value && b.is_finite() && o.value != 0.0 => {
                        format!("  (baseline {}, x{:.3})", fmt_num(b), b / o.value)
                    }
                    Some(_) => "  (unchanged)".into(),
                    None => String::new(),
                };
                t.row([
                    o.name.clone(),
                    fmt_num(o.value),
                    o.unit.to_string(),
                    format!("{}{base}", o.note),
                ]);
            }
            s.push_str(&t.render());
        } else {
            for m in &r.missing {
                s.push_str(&format!(
                    "  missing:  {} (produced by {}: {}){}\n",
                    m.key,
                    m.benchmark,
                    m.command,
                    if m.note.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", m.note)
                    }
                ));
            }
        }
        s.push('\n');
    }
    let n = results.iter().filter(|r| r.evaluated()).count();
    s.push_str(&format!(
        "{n} of {} models evaluated; refused models name the keys they need and the command that produces each\n",
        results.len()
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::super::{evaluate, Inputs};
    use super::*;
    use bench_core::keys::Unit;
    use bench_core::params::ParamsFile;

    /// Every model evaluated on a full run of the development VM, with the keys it could
    /// not find there (far memory, MPI) supplied: each output whose name carries a unit
    /// suffix is printed with that unit.
    #[test]
    fn every_printed_output_unit_is_the_unit_of_its_name() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results/host/amd-epyc-zen4-kvm-2vcpu.json");
        let f: ParamsFile = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let mut inputs = Inputs::from_file(&f);
        for r in evaluate(&inputs, &[]).unwrap() {
            for m in r.missing.iter().filter(|m| Unit::of_name(&m.key).is_some()) {
                inputs.base.insert(m.key.clone(), 100.0);
            }
        }
        let results = evaluate(&inputs, &[]).unwrap();
        let text = render_table(&results, &BTreeMap::new());
        let mut checked = 0;
        for o in results.iter().flat_map(|r| &r.outputs) {
            let Some(u) = Unit::of_name(&o.name) else {
                continue;
            };
            assert_eq!(o.unit, u.symbol(), "{}", o.name);
            let row = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(o.name.as_str()))
                .unwrap_or_else(|| panic!("no row for {} in\n{text}", o.name));
            assert_eq!(
                row.split_whitespace().nth(2),
                Some(u.symbol()),
                "unit column of {row}"
            );
            checked += 1;
        }
        assert!(checked >= 10, "only {checked} outputs with a unit suffix");
    }
}
