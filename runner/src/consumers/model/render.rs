//! The results of `cxlchar model` as a readable report.

use super::eval::ModelResult;
use crate::output::table::{Align::*, TextTable};
use std::collections::{BTreeMap, BTreeSet};

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

/// The results as a readable report: what was evaluated first, then each evaluated
/// model, each refused one in a line with the keys it lacks, and each missing key once
/// with what measures it.
pub fn render_table(results: &[ModelResult], what_ifs: &BTreeMap<String, f64>) -> String {
    let mut s = headline(results);
    if !what_ifs.is_empty() {
        s.push_str("what-if: ");
        let w: Vec<String> = what_ifs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        s.push_str(&w.join(", "));
        s.push('\n');
    }
    for r in results.iter().filter(|r| r.evaluated()) {
        s.push('\n');
        evaluated(&mut s, r);
    }
    let refused: Vec<&ModelResult> = results.iter().filter(|r| !r.evaluated()).collect();
    if refused.is_empty() {
        return s;
    }
    s.push_str("\nrefused (the keys each lacks):\n");
    let mut t = TextTable::new(&[("model", Left), ("lacks", Left)]).indent(2);
    for r in &refused {
        let keys: Vec<&str> = r.missing.iter().map(|m| m.key.as_str()).collect();
        t.row([r.id.clone(), keys.join(", ")]);
    }
    s.push_str(&t.render());
    s.push_str("\nmissing keys, each once, with what measures it:\n");
    let (outside, ours): (Vec<Group>, Vec<Group>) = missing_groups(&refused)
        .into_iter()
        .partition(|g| g.benchmark == "external");
    for g in &ours {
        missing_group(&mut s, g);
    }
    if !outside.is_empty() {
        s.push_str(
            "not measured by cxlchar, supplied with --what-if KEY=VALUE (docs/params.md says \
             how each is measured):\n",
        );
        for g in &outside {
            missing_group(&mut s, g);
        }
    }
    s
}

/// The first lines: how many models were evaluated (named), how many refused for how
/// many keys.
fn headline(results: &[ModelResult]) -> String {
    let ok: Vec<&str> = results
        .iter()
        .filter(|r| r.evaluated())
        .map(|r| r.id.as_str())
        .collect();
    let mut s = format!(
        "{} of {} models evaluated{}\n",
        ok.len(),
        results.len(),
        if ok.is_empty() {
            String::new()
        } else {
            format!(": {}", ok.join(", "))
        }
    );
    let refused = results.len() - ok.len();
    if refused > 0 {
        let keys: BTreeSet<&str> = results
            .iter()
            .flat_map(|r| r.missing.iter().map(|m| m.key.as_str()))
            .collect();
        s.push_str(&format!(
            "{refused} refused for want of {} {}, each listed once at the end with what \
             measures it\n",
            keys.len(),
            if keys.len() == 1 { "key" } else { "keys" }
        ));
    }
    s
}

/// An evaluated model: source, equation, the keys it read, notes and outputs.
fn evaluated(s: &mut String, r: &ModelResult) {
    s.push_str(&format!("{}  {}  [{}]\n", r.id, r.title, r.status));
    s.push_str(&format!("  source:   {}\n", r.source));
    s.push_str(&format!("  equation: {}\n", r.equation));
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
}

/// Missing keys measured the same way (one benchmark and command), with the remarks the
/// refusing models made on them.
struct Group<'r> {
    benchmark: &'r str,
    command: &'r str,
    keys: Vec<&'r str>,
    /// Each remark once, with the keys it was made on.
    notes: Vec<(&'r str, Vec<&'r str>)>,
}

/// The missing keys of `refused`, each once, grouped by what measures them, in the order
/// the models name them.
fn missing_groups<'r>(refused: &[&'r ModelResult]) -> Vec<Group<'r>> {
    let mut groups: Vec<Group> = vec![];
    for m in refused.iter().flat_map(|r| &r.missing) {
        let i = match groups
            .iter()
            .position(|g| g.benchmark == m.benchmark && g.command == m.command)
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    benchmark: &m.benchmark,
                    command: &m.command,
                    keys: vec![],
                    notes: vec![],
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        if !g.keys.contains(&m.key.as_str()) {
            g.keys.push(&m.key);
        }
        if m.note.is_empty() {
            continue;
        }
        match g.notes.iter_mut().find(|(n, _)| *n == m.note) {
            Some((_, on)) if !on.contains(&m.key.as_str()) => on.push(&m.key),
            Some(_) => {}
            None => g.notes.push((&m.note, vec![&m.key])),
        }
    }
    groups
}

/// One group of missing keys: the keys and what measures them, then the remarks (named by
/// key where a remark is not on every key of the group).
fn missing_group(s: &mut String, g: &Group) {
    let how = match g.benchmark {
        // What to run instead: its first clause (the rest is docs/params.md's).
        "external" => {
            let c = g.command;
            let end = [c.find(" ("), c.find("; ")]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(c.len());
            c[..end].to_string()
        }
        "user input" | "environment" => g.command.to_string(),
        _ => format!("run {}", g.command),
    };
    s.push_str(&format!("  {}: {how}\n", g.keys.join(", ")));
    for (note, on) in &g.notes {
        if on.len() == g.keys.len() {
            s.push_str(&format!("    {note}\n"));
        } else {
            s.push_str(&format!("    {}: {note}\n", on.join(", ")));
        }
    }
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
