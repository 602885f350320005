//! The top of the report, answer first: the verdict banner of a spec and the headline
//! table (as Intel MLC's blocks: idle latency per cache level and target, bandwidth per
//! level and target with 1 thread and all threads, far-memory factors, the loaded-latency
//! knee, each GPU by name with its link and copy bandwidth, core-to-core latency and the
//! self-checks' verdicts). Every figure carries its unit and links to its key's row in
//! the details, which names the measurements it comes from.

use super::html::{esc, table};
use super::keys::{anchor, KeyRow};
use super::Acceptance;
use crate::consumers::check::{self, Outcome};
use crate::output::num;
use bench_core::keys::parameters::{GPU, LINK};
use bench_core::params::ParamsFile;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The verdict banner: PASS, FAIL or NOT MEASURED in large type, the counts, and each
/// failing (or missing required) bound with its measured figure and limit.
pub fn verdict(a: &Acceptance) -> String {
    let count = |o: Outcome| a.results.iter().filter(|r| r.outcome == o).count();
    let (pass, fail, nm) = (
        count(Outcome::Pass),
        count(Outcome::Fail),
        count(Outcome::NotMeasured),
    );
    let missing = a
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::NotMeasured && !r.optional)
        .count();
    let (class, word) = if fail > 0 {
        ("fail", "FAIL")
    } else if missing > 0 {
        ("nm", "NOT MEASURED")
    } else {
        ("pass", "PASS")
    };
    let mut s = format!(
        "<section id=\"verdict\" class=\"verdict v-{class}\"><p class=\"big\">{word}</p>\
         <p>Spec <code>{}</code>: {pass} passed, {fail} failed, {nm} not measured \
         (<code>cxlchar check</code> would exit {}). <a href=\"#acceptance\">All checks</a></p>\n",
        esc(a.spec),
        check::exit_code(a.results)
    );
    let bad: Vec<String> = a
        .results
        .iter()
        .filter(|r| {
            r.outcome == Outcome::Fail || (r.outcome == Outcome::NotMeasured && !r.optional)
        })
        .map(|r| {
            let what = if r.outcome == Outcome::Fail {
                format!(
                    "measured {}, limit {}",
                    esc(&num(r.measured)),
                    esc(&num(r.limit))
                )
            } else {
                "not measured".into()
            };
            format!(
                "<li><a href=\"#{}\"><code>{}</code></a>: {what}{}</li>",
                anchor(&r.key),
                esc(&r.name),
                if r.reason.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", esc(&r.reason))
                }
            )
        })
        .collect();
    if !bad.is_empty() {
        s.push_str(&format!("<ul>{}</ul>\n", bad.join("")));
    }
    s.push_str("</section>\n");
    s
}

/// The headline rows: (block, figure, key). A key absent from the file is left out,
/// unless a warning says why it is absent: then the row says so.
const ROWS: &[(&str, &str, &str)] = &[
    ("Idle latency", "L1", "l1_lat_ns"),
    ("Idle latency", "L2", "l2_lat_ns"),
    ("Idle latency", "L3", "l3_lat_ns"),
    ("Idle latency", "L4", "l4_lat_ns"),
    ("Idle latency", "DRAM", "mem_lat_ns"),
    ("Idle latency", "DRAM, random order", "mem_lat_random_ns"),
    ("Idle latency", "far memory", "cxl_lat_ns"),
    ("Bandwidth", "L1, 1 thread", "l1_bw_gbs"),
    ("Bandwidth", "L2, 1 thread", "l2_bw_gbs"),
    ("Bandwidth", "L3, 1 thread", "l3_bw_gbs"),
    ("Bandwidth", "DRAM read, 1 thread", "mem_bw_1t_gbs"),
    ("Bandwidth", "DRAM read, all threads", "mem_bw_gbs"),
    ("Bandwidth", "DRAM write, all threads", "mem_write_bw_gbs"),
    ("Bandwidth", "DRAM copy, all threads", "copy_bw_gbs"),
    ("Bandwidth", "far memory read, 1 thread", "cxl_bw_1t_gbs"),
    ("Bandwidth", "far memory read, all threads", "cxl_bw_gbs"),
    (
        "Loaded latency",
        "highest injected bandwidth",
        "loaded_lat_max_bw_gbs",
    ),
    (
        "Loaded latency",
        "p50 latency there",
        "loaded_lat_at_max_bw_ns",
    ),
    (
        "Loaded latency",
        "p99 latency there",
        "loaded_lat_p99_at_max_bw_ns",
    ),
    ("Core to core", "flag hand-off", "c2c_flag_lat_ns"),
    ("Core to core", "compare-and-swap", "c2c_cas_lat_ns"),
    ("Core to core", "flag, same LLC", "c2c_flag_same_llc_lat_ns"),
    (
        "Core to core",
        "flag, across LLCs",
        "c2c_flag_cross_llc_lat_ns",
    ),
    (
        "Core to core",
        "flag, across sockets",
        "c2c_flag_cross_socket_lat_ns",
    ),
    ("GPU", "host -> GPU, pinned", "gpu_h2d_bw_gbs"),
    ("GPU", "GPU -> host, pinned", "gpu_d2h_bw_gbs"),
    (
        "GPU",
        "host -> GPU, registered target",
        "gpu_reg_h2d_bw_gbs",
    ),
    (
        "GPU",
        "GPU -> host, registered target",
        "gpu_reg_d2h_bw_gbs",
    ),
    ("GPU", "far memory -> GPU", "gpu_pool_h2d_bw_gbs"),
    ("GPU", "GPU -> far memory", "gpu_pool_d2h_bw_gbs"),
    ("GPU", "copy latency", "gpu_copy_lat_ns"),
];

/// The far-memory factors: (figure, far key, local key); far / local.
const FACTORS: &[(&str, &str, &str)] = &[
    ("idle latency, far / local", "cxl_lat_ns", "mem_lat_ns"),
    ("read bandwidth, far / local", "cxl_bw_gbs", "mem_bw_gbs"),
    (
        "1-thread read bandwidth, far / local",
        "cxl_bw_1t_gbs",
        "mem_bw_1t_gbs",
    ),
];

/// A value with its unit, linked to its key's row; a noisy one says so, with why in its
/// title.
fn cell(r: &KeyRow) -> String {
    let noisy = r
        .info
        .and_then(|i| i.noisy.as_deref())
        .map_or(String::new(), |why| {
            format!(" <span class=\"fail\" title=\"{}\">noisy</span>", esc(why))
        });
    format!(
        "<a href=\"#{}\"><span class=\"n\">{}</span> {}</a>{noisy}",
        anchor(&r.key),
        esc(&num(Some(r.value))),
        esc(&r.unit)
    )
}

/// Each GPU of the run: device -> (name, link), from its measurements' parameters.
pub fn gpus(f: &ParamsFile) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for m in &f.measurements {
        let Some(name) = m.parameters.get(GPU).and_then(|v| v.as_str()) else {
            continue;
        };
        let dev = m
            .parameters
            .get("device")
            .map_or_else(|| "0".into(), |v| v.to_string());
        let link = m
            .parameters
            .get(LINK)
            .and_then(|v| v.as_str())
            .unwrap_or("link not recorded");
        out.entry(format!("gpu:{dev}"))
            .or_insert_with(|| (name.to_string(), link.to_string()));
    }
    out
}

/// The headline table: a row per figure and target present in the file.
/// `rows` are the file's keys as [`super::keys::folded`] gives them.
pub fn headline(f: &ParamsFile, rows: &[KeyRow]) -> String {
    let gpus = gpus(f);
    let mut out: Vec<Vec<String>> = vec![];
    let mut last_block = "";
    let mut block = |b: &'static str| {
        if b == last_block {
            String::new()
        } else {
            last_block = b;
            format!("<b>{}</b>", esc(b))
        }
    };
    links_rows(f, rows, &mut out, &mut block);
    for (b, label, key) in ROWS {
        if *b == "GPU" && *key == "gpu_h2d_bw_gbs" {
            // Each GPU by name and link, then its figures.
            for (dev, (name, link)) in &gpus {
                out.push(vec![
                    block(b),
                    "device".into(),
                    esc(dev),
                    format!("<b>{}</b>, {}", esc(name), esc(link)),
                ]);
            }
        }
        let mut any = false;
        for r in rows.iter().filter(|r| r.base == *key) {
            out.push(vec![block(b), esc(label), esc(&r.target), cell(r)]);
            any = true;
        }
        if !any {
            // A figure the run looked for and did not give says why, here.
            for (target, why) in why_not(f, key) {
                out.push(vec![block(b), esc(label), esc(&target), why]);
            }
        }
    }
    for (label, far, local) in FACTORS {
        let (Some(x), Some(y)) = (
            rows.iter().find(|r| r.base == *far),
            rows.iter().find(|r| r.base == *local),
        ) else {
            continue;
        };
        if y.value == 0.0 {
            continue;
        }
        out.push(vec![
            block("Far memory"),
            esc(label),
            esc(&format!("{} / {}", x.target, y.target)),
            format!(
                "<span class=\"n\">{:.2}</span> x (<a href=\"#{}\">far</a>, <a href=\"#{}\">local</a>)",
                x.value / y.value,
                anchor(&x.key),
                anchor(&y.key)
            ),
        ]);
    }
    out.push(vec![
        block("Self-checks"),
        "DRAM / prefetch".into(),
        String::new(),
        checks_verdict(f),
    ]);
    out.push(vec![
        block("Self-checks"),
        "disturbed measurements".into(),
        String::new(),
        disturbed(f),
    ]);
    let noisy: Vec<&KeyRow> = rows
        .iter()
        .filter(|r| r.info.is_some_and(|i| i.noisy.is_some()))
        .collect();
    if !noisy.is_empty() {
        out.push(vec![
            block("Self-checks"),
            "noisy keys".into(),
            String::new(),
            noisy_keys(&noisy),
        ]);
    }
    let mut s = table("headline", &["", "figure", "target", "value"], &out);
    if out.len() == 1 {
        s.insert_str(
            0,
            "<p class=\"note\">None of the headline keys is in this file: see the details.</p>\n",
        );
    }
    s
}

/// The PCIe links first when the file judged any: the count of degraded links (linked to
/// its key) and a row per degraded link naming both ends and what it runs at.
fn links_rows(
    f: &ParamsFile,
    rows: &[KeyRow],
    out: &mut Vec<Vec<String>>,
    block: &mut impl FnMut(&'static str) -> String,
) {
    use bench_core::pci::links::{degraded, judged_links, LINK_DEGRADED};
    let judged = judged_links(&f.links);
    let Some(r) = rows.iter().find(|r| r.base == crate::links::KEY) else {
        return;
    };
    let bad = degraded(&f.links);
    let verdict = if bad.is_empty() {
        format!("all {judged} at their capability")
    } else {
        format!(
            "<span class=\"fail\">{} of {judged} below their capability</span>",
            bad.len()
        )
    };
    out.push(vec![
        block("PCIe links"),
        "degraded links".into(),
        esc(&r.target),
        format!("{}: {verdict}", cell(r)),
    ]);
    for l in &bad {
        out.push(vec![
            block("PCIe links"),
            format!("<span class=\"fail\">{LINK_DEGRADED}</span>"),
            esc(&l.device.bdf),
            esc(&l.describe()),
        ]);
    }
}

/// How many noisy keys a headline cell names; the rest are behind a `<details>`.
const NOISY_NAMED: usize = 5;

/// The noisy keys in one cell: their count, the first [`NOISY_NAMED`] of them (the
/// headline's own keys first, in the table's order, then the others in the file's), each
/// linked to its row, and the rest behind a `<details>`.
fn noisy_keys(noisy: &[&KeyRow]) -> String {
    let rank = |r: &KeyRow| {
        ROWS.iter()
            .position(|(_, _, k)| *k == r.base)
            .unwrap_or(ROWS.len())
    };
    let mut keys: Vec<&KeyRow> = noisy.to_vec();
    // Stable: keys of one headline row (or none) keep the file's order.
    keys.sort_by_key(|r| rank(r));
    let link = |r: &&KeyRow| format!("<a href=\"#{}\">{}</a>", anchor(&r.key), esc(&r.key));
    let shown: Vec<String> = keys.iter().take(NOISY_NAMED).map(link).collect();
    let (count, verb) = match keys.len() {
        1 => ("1 key".to_string(), "stands"),
        n => (format!("{n} keys"), "stand"),
    };
    let mut s = format!(
        "<span class=\"fail\">{count}</span> {verb} only on disturbed windows or a noisy \
         self-check (why: each key's row): {}",
        shown.join(", ")
    );
    if keys.len() > NOISY_NAMED {
        let rest: Vec<String> = keys[NOISY_NAMED..].iter().map(link).collect();
        let _ = write!(
            s,
            "<details><summary>and {} more</summary>{}</details>",
            rest.len(),
            rest.join(", ")
        );
    }
    s
}

/// Why the file has no `key`, per target, from the warnings that name it
/// (`anon: l3_lat_ns: no sweep point between 2097152 and 16777216 bytes`): (target, the
/// reason as HTML, sizes in binary units, linked to the warnings).
fn why_not(f: &ParamsFile, key: &str) -> Vec<(String, String)> {
    f.warnings
        .iter()
        .filter_map(|w| {
            let (target, rest) = w.message.split_once(": ")?;
            let reason = rest.strip_prefix(key)?.strip_prefix(": ")?;
            // The remediation says what it means ("none needed: the chase reaches DRAM
            // latency before this level's window").
            let means = w.remediation.strip_prefix("none needed: ").unwrap_or("");
            Some((
                target.to_string(),
                format!(
                    "<a href=\"#warnings\">not measured</a>: {}{}",
                    esc(&sizes_in_binary_units(reason)),
                    if means.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", esc(means))
                    }
                ),
            ))
        })
        .collect()
}

/// `between 2097152 and 16777216 bytes` as `between 2 MiB and 16 MiB`: each number of
/// bytes of a text that speaks of bytes, from 1 KiB up, in binary units.
fn sizes_in_binary_units(text: &str) -> String {
    if !text.ends_with(" bytes") && !text.contains(" bytes ") {
        return text.to_string();
    }
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut converted = false;
    for w in words {
        match w.parse::<u64>() {
            Ok(n) if n >= 1024 => {
                out.push(bench_core::units::human_bytes(n));
                converted = true;
            }
            _ if w == "bytes" && converted => converted = false,
            _ => {
                out.push(w.to_string());
                converted = false;
            }
        }
    }
    out.join(" ")
}

/// The share of the run's measurements disturbed in every attempt (context switches,
/// migrations, faults in the timed section: their figures stand with a warning), linked
/// to the warnings.
fn disturbed(f: &ParamsFile) -> String {
    let (n, recorded) = f.disturbed_measurements();
    if recorded == 0 {
        return "not recorded in this file".into();
    }
    format!(
        "<a href=\"#warnings\"><span class=\"{}\">{}</span> disturbed in every attempt</a>",
        if n > 0 { "nm" } else { "pass" },
        super::warnings::share_of(n, recorded)
    )
}

/// The self-checks in one cell: how many DRAM checks agree, grew or are unconfirmed, and
/// the prefetch checks' verdicts, linked to the self-check section.
fn checks_verdict(f: &ParamsFile) -> String {
    use bench_core::dram_check::Verdict;
    if f.dram_check.is_empty() && f.prefetch_check.is_empty() {
        return "<a href=\"#checks\">none in this file</a>".into();
    }
    let n = |v: Verdict| f.dram_check.iter().filter(|c| c.verdict == v).count();
    let unconf = n(Verdict::Unconfirmed);
    let noisy = n(Verdict::Noisy);
    let mut s = String::from("<a href=\"#checks\">");
    if f.dram_check.is_empty() {
        s.push_str("DRAM: no check in this file");
    } else {
        let _ = write!(
            s,
            "DRAM: {} agree, {} grown, <span class=\"{}\">{unconf} unconfirmed</span>",
            n(Verdict::Agree),
            n(Verdict::Grown),
            if unconf > 0 { "fail" } else { "pass" }
        );
        if noisy > 0 {
            let _ = write!(s, ", <span class=\"fail\">{noisy} noisy</span>");
        }
    }
    let mut verdicts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &f.prefetch_check {
        *verdicts.entry(c.verdict.as_str()).or_default() += 1;
    }
    if !verdicts.is_empty() {
        let v: Vec<String> = verdicts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = write!(s, "; prefetch: {}", esc(&v.join(", ")));
    }
    s.push_str("</a>");
    s
}
