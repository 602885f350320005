//! The summary's lines after the figures: what a person checks before trusting them (the
//! self-checks' verdicts, how much stands on disturbed samples, the warnings by code, what
//! was skipped).

use super::{Lines, NOISY_MARK};
use crate::output::text::printable;
use bench_core::dram_check::Verdict;
use bench_core::params::ParamsFile;
use bench_core::units::human_bytes;
use std::collections::BTreeMap;

/// The width a warning's message is abridged for when there is no terminal.
const PIPE_WIDTH: usize = 160;

/// At most this many self-checks that did not confirm their figures get a line each.
const MAX_PROBLEMS: usize = 4;

/// At most this many warning codes get a line each (the rest are counted).
const MAX_CODES: usize = 8;

/// How many noisy keys the summary names; the rest are counted.
const NOISY_NAMED: usize = 2;

/// `text` whole when it has at most `max` characters, else its beginning up to the last
/// clause boundary (`; `, `: `, `, `, `. `, ` (`) in the second half of `max` characters,
/// or else the last space, marked with ` ...`: words are never cut. A boundary earlier
/// than that, such as the colon after a message's subject (`anon: mem.bandwidth (read,
/// CPUs 0-1): `), would keep who the message is about without what happened.
pub fn abridge(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(4)).collect();
    let clause = ["; ", ": ", ", ", ". ", " ("]
        .iter()
        .filter_map(|b| head.rfind(b).map(|i| i + b.len().min(1)))
        .max()
        .filter(|i| *i >= head.len() / 2);
    let at = clause.or_else(|| head.rfind(' ')).unwrap_or(head.len());
    format!("{} ...", head[..at].trim_end())
}

/// The characters of about two lines of `width` after a prefix of `indent` columns, less
/// what breaking at spaces leaves at the ends of the lines: what a text is abridged to.
pub(super) fn two_lines(width: usize, indent: usize) -> usize {
    (2 * width.saturating_sub(indent)).saturating_sub(8).max(40)
}

/// The verdicts of the self-checks, counted (`DRAM 2 agree, 1 NOISY | prefetch 1 agree`),
/// then a line for each check that did not confirm its figures, naming its threads.
pub(super) fn self_checks(f: &ParamsFile, out: &mut Lines) {
    if f.dram_check.is_empty() && f.prefetch_check.is_empty() {
        out.row("self-checks", "", "none recorded in this file");
        return;
    }
    let word = |v: Verdict| match v {
        Verdict::Unconfirmed => "UNCONFIRMED",
        Verdict::Noisy => "NOISY",
        v => v.name(),
    };
    let mut parts = Vec::new();
    if !f.dram_check.is_empty() {
        let counts: Vec<String> = [
            Verdict::Agree,
            Verdict::Grown,
            Verdict::Unconfirmed,
            Verdict::Noisy,
        ]
        .into_iter()
        .filter_map(|v| {
            let n = f.dram_check.iter().filter(|c| c.verdict == v).count();
            (n > 0).then(|| format!("{n} {}", word(v)))
        })
        .collect();
        parts.push(format!("DRAM {}", counts.join(", ")));
    }
    let mut verdicts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &f.prefetch_check {
        *verdicts.entry(c.verdict.as_str()).or_default() += 1;
    }
    if !verdicts.is_empty() {
        let v: Vec<String> = verdicts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        parts.push(format!("prefetch {}", v.join(", ")));
    }
    out.row("self-checks", "", parts.join(" | "));
    let mut problems: Vec<(String, String)> = f
        .dram_check
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Unconfirmed | Verdict::Noisy))
        .map(|c| {
            let [a, b] = c.compared_bytes;
            let text = format!(
                "DRAM check {} {}, {} thread(s) (CPUs {}) on {} at {} ({} vs {}: {:.3}x)",
                c.benchmark,
                c.kernel,
                c.threads,
                c.cpus,
                c.target,
                human_bytes(c.reported_bytes as u64),
                human_bytes(a as u64),
                human_bytes(b as u64),
                c.ratio
            );
            (word(c.verdict).to_string(), text)
        })
        .collect();
    problems.extend(
        f.prefetch_check
            .iter()
            .filter(|c| c.verdict != "agree")
            .map(|c| {
                let text = format!(
                    "prefetch check on {} at {} (ratio {:.3})",
                    c.target,
                    human_bytes(c.touched_bytes as u64),
                    c.ratio
                );
                (c.verdict.to_uppercase(), text)
            }),
    );
    for (verdict, text) in problems.iter().take(MAX_PROBLEMS) {
        out.row("", &format!("{verdict}: "), text.as_str());
    }
    if problems.len() > MAX_PROBLEMS {
        let more = problems.len() - MAX_PROBLEMS;
        out.row("", "", format!("(+{more} more: --verbose)"));
    }
}

/// How much of the file stands on disturbed samples: the noisy keys (named, and what
/// their `*` means) and the share of disturbed measurements, when there are any.
pub(super) fn quality(f: &ParamsFile, out: &mut Lines) {
    let noisy_keys = |qualified: bool| -> Vec<&str> {
        f.param_info
            .iter()
            .filter(|(k, i)| i.noisy.is_some() && (qualified || !k.contains('@')))
            .map(|(k, _)| k.as_str())
            .collect()
    };
    // The unqualified keys; the qualified ones where only they are noisy (their figures
    // are marked too).
    let mut noisy = noisy_keys(false);
    if noisy.is_empty() {
        noisy = noisy_keys(true);
    }
    let (disturbed, n) = f.disturbed_measurements();
    if !noisy.is_empty() {
        out.row(
            "noisy keys",
            "",
            format!(
                "{} marked {NOISY_MARK} ({}): on disturbed samples (why: param_info); rerun \
                 on a quiet machine",
                noisy.len(),
                named_first(&noisy, NOISY_NAMED)
            ),
        );
    }
    if disturbed > 0 {
        out.row(
            "disturbed",
            "",
            format!(
                "{disturbed} of {n} measurements ({:.0} %) disturbed in every attempt",
                disturbed as f64 * 100.0 / n as f64
            ),
        );
    }
}

/// The headline's keys first (those a reader looks for), then the others in order, at most
/// `most` of them named and the rest counted (`+32 more`).
fn named_first(keys: &[&str], most: usize) -> String {
    const HEADLINE: [&str; 7] = [
        "mem_lat_ns",
        "mem_bw_gbs",
        "mem_write_bw_gbs",
        "nt_write_bw_gbs",
        "copy_bw_gbs",
        "nt_copy_bw_gbs",
        "mem_bw_1t_gbs",
    ];
    let mut v: Vec<&str> = HEADLINE
        .iter()
        .copied()
        .filter(|h| keys.contains(h))
        .collect();
    v.extend(keys.iter().copied().filter(|k| !HEADLINE.contains(k)));
    let mut s = v[..v.len().min(most)].join(", ");
    if v.len() > most {
        s.push_str(&format!(", +{} more", v.len() - most));
    }
    s
}

/// The warnings: their count and where each is in full, then one line per code (its
/// count when more than one) with its first message, abridged to about two lines of
/// `width` ([`abridge`]); `written`: the run wrote a params.json, where each is in full.
pub(super) fn warnings(f: &ParamsFile, out: &mut Lines, width: Option<usize>, written: bool) {
    if f.warnings.is_empty() {
        out.row("warnings", "", "none");
        return;
    }
    let mut by_code: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for w in &f.warnings {
        by_code.entry(&w.code).or_default().push(&w.message);
    }
    let full = if written {
        "--verbose, params.json"
    } else {
        "--verbose"
    };
    out.row(
        &format!("warnings ({})", f.warnings.len()),
        "",
        format!("first message per code (in full: {full})"),
    );
    let width = width.unwrap_or(PIPE_WIDTH);
    for (code, messages) in by_code.iter().take(MAX_CODES) {
        let count = match messages.len() {
            1 => String::new(),
            n => format!(" ({n})"),
        };
        let prefix = format!("  {code}{count}:  ");
        let first = messages[0].split_whitespace().collect::<Vec<_>>().join(" ");
        let room = two_lines(width, printable(&prefix).chars().count());
        out.push(prefix, abridge(&first, room));
    }
    if by_code.len() > MAX_CODES {
        let more = by_code.len() - MAX_CODES;
        out.push("  ", format!("(+{more} more codes: --verbose)"));
    }
}

/// What was skipped, by target in the order first met (benchmarks of no target first),
/// each benchmark once with its count: `gpu, verbs; on anon: pool.flush/uc, pcie.post-parts (2)`.
pub(super) fn skipped(f: &ParamsFile, out: &mut Lines) {
    if f.skipped.is_empty() {
        return;
    }
    let mut by_target: Vec<(&str, Vec<(&str, usize)>)> = vec![("", vec![])];
    for k in &f.skipped {
        let t = match by_target.iter().position(|(t, _)| *t == k.target) {
            Some(i) => i,
            None => {
                by_target.push((&k.target, vec![]));
                by_target.len() - 1
            }
        };
        let names = &mut by_target[t].1;
        match names.iter_mut().find(|(b, _)| *b == k.benchmark) {
            Some((_, n)) => *n += 1,
            None => names.push((&k.benchmark, 1)),
        }
    }
    let parts: Vec<String> = by_target
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(t, names)| {
            let names = grouped(names);
            match *t {
                "" => names.join(", "),
                t => format!("on {t}: {}", names.join(", ")),
            }
        })
        .collect();
    out.row(
        &format!("skipped ({})", f.skipped.len()),
        "",
        format!("{} (reasons: --verbose)", parts.join("; ")),
    );
}

/// Skipped parts in words, one family's parts together: `pool.flush (uc, wc)` for
/// `pool.flush/uc` and `pool.flush/wc`, `pcie.post-parts (2)` for a part skipped twice.
fn grouped(names: &[(&str, usize)]) -> Vec<String> {
    let mut by: Vec<(&str, Vec<String>)> = Vec::new();
    for &(b, n) in names {
        let (family, part) = match b.split_once('/') {
            Some((f, p)) => (f, Some(p)),
            None => (b, None),
        };
        let item = match (part, n) {
            (Some(p), 1) => p.to_string(),
            (Some(p), n) => format!("{p} x{n}"),
            (None, 1) => String::new(),
            (None, n) => n.to_string(),
        };
        match by.iter_mut().find(|(f, _)| *f == family) {
            Some((_, items)) => items.push(item),
            None => by.push((family, vec![item])),
        }
    }
    by.into_iter()
        .map(|(f, items)| {
            let items: Vec<String> = items.into_iter().filter(|i| !i.is_empty()).collect();
            if items.is_empty() {
                f.to_string()
            } else {
                format!("{f} ({})", items.join(", "))
            }
        })
        .collect()
}
