//! The report's warnings: grouped by code, with the share of the run's measurements each
//! code's messages name. Linear in the size of the file: each message is searched for
//! every measurement id at once ([`IdMatcher`]), never id by id.

use super::html::{esc, table};
use bench_core::params::{ParamsFile, Warning};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The warnings section of a params.json.
pub(super) fn warnings(f: &ParamsFile) -> String {
    if f.warnings.is_empty() {
        return "<p class=\"note\">No warnings: nothing in the environment is known to distort \
                these figures.</p>\n"
            .into();
    }
    let ids: Vec<&str> = f.measurements.iter().map(|m| m.id.as_str()).collect();
    warning_groups(&f.warnings, &ids, Some(f.disturbed_measurements()))
}

/// Warnings grouped by code (a fleet's own warnings: no measurement share).
pub(super) fn warning_table(warnings: &[Warning]) -> String {
    warning_groups(warnings, &[], None)
}

/// The code of the warnings that name the measurements still disturbed after their
/// retries (`bench_core::counters::warnings_for`).
const DISTURBED: &str = "disturbed";

/// `n` of `of` as the page writes a share: "N of M (P %)".
pub(super) fn share_of(n: usize, of: usize) -> String {
    format!("{n} of {of} ({:.0} %)", 100.0 * n as f64 / of as f64)
}

/// Whether `c` can continue a measurement id (`k1` continues as `k16`).
fn continues_id(c: char) -> bool {
    c.is_alphanumeric() || "/_-.:@".contains(c)
}

/// The longest id searched for, bytes: ids are a benchmark, a target and a few
/// parameters; a longer one (a forged file) is never found, which keeps the search of a
/// message linear in its length.
const MAX_ID_BYTES: usize = 512;

/// The measurement ids a text names: an id followed by a character that cannot continue
/// an id ([`continues_id`]), so `k1` is not found in `k16`, or by a `:` or `.` that ends
/// a phrase. A trie of the ids spelled backwards, walked back from each place an id can
/// end.
pub(super) struct IdMatcher {
    /// (node, byte) -> child node; node 0 is the root.
    edges: HashMap<(u32, u8), u32>,
    /// The id (index into the ids given) that ends at each node.
    id_at: Vec<Option<u32>>,
}

impl IdMatcher {
    /// The matcher of `ids` (empty ones and those longer than [`MAX_ID_BYTES`] are never
    /// found).
    pub(super) fn new(ids: &[&str]) -> Self {
        let mut m = IdMatcher {
            edges: HashMap::new(),
            id_at: vec![None],
        };
        for (i, id) in ids.iter().enumerate() {
            if id.is_empty() || id.len() > MAX_ID_BYTES {
                continue;
            }
            let mut node = 0u32;
            for &b in id.as_bytes().iter().rev() {
                let next = m.id_at.len() as u32;
                node = *m.edges.entry((node, b)).or_insert_with(|| {
                    m.id_at.push(None);
                    next
                });
            }
            // A repeated id: its first index stands for all.
            m.id_at[node as usize].get_or_insert(i as u32);
        }
        m
    }

    /// Calls `found` with the index of every id `text` names (an id named twice, twice).
    pub(super) fn named_in(&self, text: &str, mut found: impl FnMut(usize)) {
        let bytes = text.as_bytes();
        // An id ends before a character that cannot continue it, or before a `:` or `.`
        // that ends a phrase (`a/k16: noisy figure`, `... of a/k16.`).
        let ends = text
            .char_indices()
            .filter(|&(i, c)| {
                !continues_id(c)
                    || (matches!(c, ':' | '.')
                        && text[i + 1..].chars().next().is_none_or(char::is_whitespace))
            })
            .map(|(i, _)| i)
            .chain(std::iter::once(text.len()));
        for end in ends {
            let mut node = 0u32;
            for &b in bytes[..end].iter().rev().take(MAX_ID_BYTES) {
                let Some(&next) = self.edges.get(&(node, b)) else {
                    break;
                };
                node = next;
                if let Some(i) = self.id_at[node as usize] {
                    found(i as usize);
                }
            }
        }
    }
}

/// Whether the measurement id `id` is named in `text` ([`IdMatcher`]).
#[cfg(test)]
pub(super) fn names(text: &str, id: &str) -> bool {
    let mut hit = false;
    IdMatcher::new(&[id]).named_in(text, |_| hit = true);
    hit
}

/// The warnings by code, codes in the order they first appear.
fn by_code(warnings: &[Warning]) -> Vec<(&str, Vec<&Warning>)> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<(&str, Vec<&Warning>)> = Vec::new();
    for w in warnings {
        let i = *at.entry(w.code.as_str()).or_insert_with(|| {
            groups.push((w.code.as_str(), Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(w);
    }
    groups
}

/// How many of `ids` the messages `ws` name, as "N of M (P %)", or `-`.
fn share(matcher: &IdMatcher, ids: &[&str], ws: &[&Warning]) -> String {
    let mut hit = vec![false; ids.len()];
    for w in ws {
        matcher.named_in(&w.message, |i| hit[i] = true);
    }
    // Repeated ids count as often as they are in the run, as the first of them.
    let mut first: HashMap<&str, usize> = HashMap::new();
    let named = ids
        .iter()
        .enumerate()
        .filter(|&(i, id)| hit[*first.entry(id).or_insert(i)])
        .count();
    if named == 0 || ids.is_empty() {
        return "-".to_string();
    }
    share_of(named, ids.len())
}

/// Warnings grouped by code: how many, the share of the run's measurements `ids` they
/// name, the first message and each distinct remediation; every message behind a
/// `<details>`. The `disturbed` code's share is `disturbed` (disturbed, recorded:
/// [`ParamsFile::disturbed_measurements`], the headline's count) when given and recorded.
fn warning_groups(warnings: &[Warning], ids: &[&str], disturbed: Option<(usize, usize)>) -> String {
    let matcher = IdMatcher::new(ids);
    let rows: Vec<Vec<String>> = by_code(warnings)
        .into_iter()
        .map(|(code, ws)| {
            let share = match disturbed {
                Some((n, recorded)) if code == DISTURBED && recorded > 0 => format!(
                    "<span title=\"of the measurements that recorded their disturbances\">{}</span>",
                    share_of(n, recorded)
                ),
                _ => share(&matcher, ids, &ws),
            };
            let mut fixes: Vec<&str> = ws.iter().map(|w| w.remediation.as_str()).collect();
            fixes.sort_unstable();
            fixes.dedup();
            let first = &ws[0].message;
            let short: String = first.chars().take(240).collect();
            let mut what = esc(&short);
            if short.len() < first.len() {
                what.push_str(" ...");
            }
            if ws.len() > 1 || short.len() < first.len() {
                let all: Vec<String> = ws
                    .iter()
                    .map(|w| format!("<li>{}</li>", esc(&w.message)))
                    .collect();
                let _ = write!(
                    what,
                    "<details><summary>all {} message(s)</summary><ul>{}</ul></details>",
                    ws.len(),
                    all.join("")
                );
            }
            vec![
                format!("<code>{}</code>", esc(code)),
                format!("<span class=\"n\">{}</span>", ws.len()),
                share,
                what,
                fixes
                    .iter()
                    .map(|f| esc(f))
                    .collect::<Vec<_>>()
                    .join("<br>"),
            ]
        })
        .collect();
    table(
        "warnings",
        &[
            "code",
            "count",
            "measurements named",
            "warning",
            "remediation",
        ],
        &rows,
    )
}
