//! How a figure was measured, as diff compares it: an identity, not a sentence.
//!
//! Compared are the measurement parameters that say what a figure means ([`SHAPE`]: the
//! footprint, threads, slot, page size, layout, kernel, ...) and the identity of the method
//! text: its first clause (up to the first `; ` or ` (`: what was measured, before the
//! details of how it was sized and checked), with its figures (`132M`, `1.006x`, `5%`)
//! masked. Sample counts, laps, seeds, a self-check's verdict and the passes it needed
//! are outcomes of a run, not how it measured. A working-set size that each run's DRAM
//! check of the same kernel and pattern checked (verdict agree, grown or noisy: not
//! `unconfirmed`) is the same method, the DRAM point, at another size: the difference is
//! noted, the figures stay comparable.

use super::side::Side;
use bench_core::dram_check::{DramCheck, Verdict};
use bench_core::params::Measurement;
use std::collections::{BTreeMap, BTreeSet};

/// The measurement parameters that say how a figure was measured (what it means), with
/// the words people read: a footprint, thread count, slot, layout or method that differs
/// makes two figures not comparable. Sample counts, laps and seeds (what `--quick`
/// changes) are not among them.
const SHAPE: &[(&str, &str)] = &[
    ("size_bytes", "footprint"),
    ("working_set_bytes", "footprint"),
    ("size_bytes_per_agent", "footprint per agent"),
    ("touched_bytes", "touched"),
    ("buffer_bytes", "buffer"),
    ("chase_bytes", "chase footprint"),
    ("part_bytes_per_thread", "part per thread"),
    ("traffic_bytes_per_thread", "traffic per thread"),
    ("bytes_each", "transfer size"),
    ("block_bytes", "block"),
    ("chunk_bytes", "chunk"),
    ("cell_bytes", "cell"),
    ("slot_bytes", "slot"),
    ("page_size_bytes", "page size"),
    ("threads", "threads"),
    ("agents", "agents"),
    ("pairs", "pairs"),
    ("streams", "streams"),
    ("traffic_threads", "traffic threads"),
    ("cpus", "CPUs"),
    ("layout", "layout"),
    ("order", "order"),
    ("isa", "ISA"),
    ("kernel", "kernel"),
    ("source", "host memory"),
    ("timing", "timing"),
    ("mode", "mode"),
    ("mix", "mix"),
    ("op", "op"),
    ("method", "method"),
];

/// The [`SHAPE`] parameters that are a DRAM working set (what a DRAM check confirms).
const WORKING_SET: &[&str] = &[
    "size_bytes",
    "working_set_bytes",
    "size_bytes_per_agent",
    "touched_bytes",
    "chase_bytes",
    "part_bytes_per_thread",
    "traffic_bytes_per_thread",
];

/// A parameter's value as people read it: sizes in binary units.
fn shape_value(name: &str, v: &serde_json::Value) -> String {
    match (name.contains("bytes"), v.as_u64(), v.as_str()) {
        (true, Some(b), _) => bench_core::units::human_bytes(b),
        (_, _, Some(s)) => s.to_string(),
        _ => v.to_string(),
    }
}

/// For each [`SHAPE`] parameter, the set of its values over `ms`.
fn shape_of(ms: &[&Measurement]) -> BTreeMap<&'static str, BTreeSet<String>> {
    let mut out: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for m in ms {
        for (name, _) in SHAPE {
            if let Some(v) = m.parameters.get(*name).filter(|v| !v.is_null()) {
                out.entry(name).or_default().insert(shape_value(name, v));
            }
        }
    }
    out
}

/// How two sets of measurements behind one figure differ: a parameter with one value on
/// each side and two different values (a parameter that varies within a side is a
/// sweep's points, which `--quick` may thin). Each difference once; those of the
/// parameters in `noted` go to the second list (not a difference of method).
fn shape_differences(
    a: &[&Measurement],
    b: &[&Measurement],
    noted: &[&str],
) -> (Vec<String>, Vec<String>) {
    let (sa, sb) = (shape_of(a), shape_of(b));
    let (mut out, mut notes): (Vec<String>, Vec<String>) = (vec![], vec![]);
    for (name, label) in SHAPE {
        let (Some(x), Some(y)) = (sa.get(name), sb.get(name)) else {
            continue;
        };
        if x.len() == 1 && y.len() == 1 && x != y {
            let d = format!(
                "{label} {} vs {}",
                x.iter().next().map_or("", |v| v.as_str()),
                y.iter().next().map_or("", |v| v.as_str())
            );
            let to = if noted.contains(name) {
                &mut notes
            } else {
                &mut out
            };
            if !to.contains(&d) {
                to.push(d);
            }
        }
    }
    (out, notes)
}

/// Whether a word of a method is a figure: a number, with a size, time, ratio or percent
/// unit glued to it (`132M`, `1.006x`, `5%`, `[0,`), not a name that holds digits
/// (`randomized-256`, `avx512`, `1r1w`).
fn is_figure(w: &str) -> bool {
    let w = w.trim_matches(|c: char| "()[]{},;:.\"'".contains(c));
    let digits = w.trim_start_matches(['+', '-', '~']);
    let end = digits
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(digits.len());
    let (num, unit) = digits.split_at(end);
    num.chars().next().is_some_and(|c| c.is_ascii_digit())
        && [
            "", "%", "x", "K", "M", "G", "T", "KiB", "MiB", "GiB", "TiB", "B", "ns", "us", "ms",
            "s",
        ]
        .contains(&unit)
}

/// The identity of a method text ([`super::method`]'s module text): its first clause, its
/// figures masked as `#`, as words.
pub fn method_identity(m: &str) -> Vec<String> {
    let end = [m.find("; "), m.find(" (")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(m.len());
    m[..end]
        .split_whitespace()
        .map(|w| {
            if is_figure(w) {
                "#".to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// How two method texts differ in their identity: the first words that differ.
pub fn method_difference(a: &str, b: &str) -> Option<String> {
    let (wa, wb) = (method_identity(a), method_identity(b));
    if wa == wb {
        return None;
    }
    let at = wa.iter().zip(&wb).take_while(|(x, y)| x == y).count();
    let part = |w: &[String]| words_from(w, at).join(" ");
    Some(format!("method \"{}\" vs \"{}\"", part(&wa), part(&wb)))
}

/// Up to 6 words of `w` from `at`, with `...` where the text goes on.
fn words_from(w: &[String], at: usize) -> Vec<&str> {
    let mut v: Vec<&str> = w.iter().skip(at).take(6).map(|s| s.as_str()).collect();
    if w.len() > at + 6 {
        v.push("...");
    }
    v
}

/// The smallest and largest value of a size parameter over `ms`.
fn size_range(ms: &[&Measurement], name: &str) -> Option<(u64, u64)> {
    let v: Vec<u64> = ms
        .iter()
        .filter_map(|m| m.parameters.get(name).and_then(|v| v.as_u64()))
        .collect();
    Some((*v.iter().min()?, *v.iter().max()?))
}

/// For a key that is a size found in a sweep (`nt_copy_threshold_bytes`): the swept
/// ranges of the size parameters, where they differ (a threshold searched up to 1 MiB is
/// not one searched up to 16 MiB).
fn range_differences(a: &[&Measurement], b: &[&Measurement]) -> Vec<String> {
    let h = bench_core::units::human_bytes;
    SHAPE
        .iter()
        .filter(|(name, _)| name.contains("bytes"))
        .filter_map(|(name, label)| {
            let (x, y) = (size_range(a, name)?, size_range(b, name)?);
            (x != y && (x.0 != x.1 || y.0 != y.1)).then(|| {
                format!(
                    "{label} range {}..{} vs {}..{}",
                    h(x.0),
                    h(x.1),
                    h(y.0),
                    h(y.1)
                )
            })
        })
        .collect()
}

/// The kernels (benchmark, pattern, kernel) of the DRAM checks that stand for a figure,
/// and their verdicts; `None` when there is none or one could not confirm any size
/// (`unconfirmed`: the size may be in a cache). A `noisy` check kept its rule's size.
fn checked_kernels(checks: &[&DramCheck]) -> Option<(BTreeSet<String>, Vec<&'static str>)> {
    if checks.is_empty() || checks.iter().any(|c| c.verdict == Verdict::Unconfirmed) {
        return None;
    }
    let kernels = checks
        .iter()
        .map(|c| format!("{} {:?} {}", c.benchmark, c.pattern, c.kernel))
        .collect();
    let mut verdicts: Vec<&str> = checks.iter().map(|c| c.verdict.name()).collect();
    verdicts.sort_unstable();
    verdicts.dedup();
    Some((kernels, verdicts))
}

/// How A and B measured `key`: the differences of method (empty: the same way) and the
/// differences noted beside a comparable figure (the DRAM working sets of two runs whose
/// DRAM checks of the same kernels checked them).
pub(super) fn key_differences(sa: &Side, sb: &Side, key: &str) -> (Vec<String>, Vec<String>) {
    let (fa, fb) = (sa.from(key), sb.from(key));
    let checked = match (
        checked_kernels(&sa.checks_of_key(key)),
        checked_kernels(&sb.checks_of_key(key)),
    ) {
        (Some((ka, va)), Some((kb, vb))) if ka == kb => Some((va.join("/"), vb.join("/"))),
        _ => None,
    };
    let noted = if checked.is_some() { WORKING_SET } else { &[] };
    let (mut d, mut notes) = shape_differences(&fa, &fb, noted);
    if let Some((va, vb)) = checked {
        for n in &mut notes {
            n.push_str(&format!(
                " (each run's DRAM working set, checked by its DRAM check: {va} vs {vb})"
            ));
        }
    }
    if bench_core::keys::base_name(key).ends_with("_bytes") {
        d.extend(range_differences(&fa, &fb));
    }
    if d.is_empty() {
        if let (Some(x), Some(y)) = (sa.f.param_info.get(key), sb.f.param_info.get(key)) {
            d.extend(method_difference(&x.method, &y.method));
        }
    }
    (d, notes)
}

/// How A and B measured one measurement differently (empty: the same way).
pub(super) fn measurement_differences(x: &Measurement, y: &Measurement) -> Vec<String> {
    let (mut d, _) = shape_differences(&[x], &[y], &[]);
    if d.is_empty() {
        d.extend(method_difference(&x.method, &y.method));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_is_its_first_clause_with_figures_masked() {
        // The producer's text of mem_lat_ns, once after one pass of the DRAM check and
        // once after two: the same method.
        let one = "p50 of the randomized-256 chain at the DRAM point, 132M touched in 528M \
                   of memory (dependent pointer chase, tlb-local order); DRAM check: \
                   mem.latency tlb-local randomized-256 chase on CPUs 0: agree at 132M (S \
                   132M 138.2 vs 264M 139.1 ns; 1.006x, tolerance 5%) (see dram_check)";
        let two = "p50 of the randomized-256 chain at the DRAM point, 264M touched in 1056M \
                   of memory (dependent pointer chase, tlb-local order); DRAM check: \
                   mem.latency tlb-local randomized-256 chase on CPUs 0: NOISY at 264M (S \
                   264M 148.5 vs 528M 140.8 ns; 1.055x, tolerance 5%) (see dram_check); the \
                   mean of the check's two passes";
        assert_eq!(method_difference(one, two), None);
        assert_eq!(
            method_identity(one).join(" "),
            "p50 of the randomized-256 chain at the DRAM point, # touched in # of memory"
        );
        // A name with digits is no figure: another slot is another method.
        let other = one.replace("randomized-256 chain", "randomized-512 chain");
        assert_eq!(
            method_difference(one, &other).as_deref(),
            Some("method \"randomized-256 chain at the DRAM point, ...\" vs \"randomized-512 chain at the DRAM point, ...\"")
        );
        // The sample count of a quick run is a figure; the kernel is not.
        let q = "p50 over 9 windows of read by 1 thread(s) (the bytes), 264M footprint";
        let f = "p50 over 45 windows of read by 1 thread(s) (the bytes), 1G footprint";
        assert_eq!(method_difference(q, f), None);
        let w = "p50 over 9 windows of write by 1 thread(s) (the bytes), 264M footprint";
        assert!(method_difference(q, w).is_some());
        for (w, fig) in [
            ("132M", true),
            ("1.006x,", true),
            ("5%)", true),
            ("[0,", true),
            ("~50", true),
            ("avx512", false),
            ("1r1w", false),
            ("randomized-256", false),
            ("64-byte", false),
            ("thread(s)", false),
        ] {
            assert_eq!(is_figure(w), fig, "{w}");
        }
    }
}
