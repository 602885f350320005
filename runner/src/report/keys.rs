//! The keys of a params.json as the report shows them: `key` and `key@target` folded into
//! one row when they are the same measurement (same value from the same measurements), a
//! stable anchor per key for the headline's links, the registry's meaning rendered from
//! its inline Markdown, and each method behind a `<details>`.

use super::html::{esc, table};
use crate::output::markup::inline_html;
use crate::output::num;
use bench_core::keys::KeyDef;
use bench_core::params::{ParamInfo, ParamsFile};
use std::ops::Bound;

/// One row of the keys table.
pub struct KeyRow<'a> {
    /// The key as the models read it (unqualified where the file has it so).
    pub key: String,
    /// The key without its `@target` qualifier.
    pub base: String,
    /// The target it was measured on.
    pub target: String,
    /// Its value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// What the file says about it.
    pub info: Option<&'a ParamInfo>,
    /// Its definition in this cxlchar's key registry (looked up once per key).
    pub def: Option<&'static KeyDef>,
    /// The qualified names folded into this row (`mem_lat_ns@anon`).
    pub aliases: Vec<String>,
}

/// The id of a key's row: `key-` and the key with every character that is not
/// alphanumeric, `_` or `-` as `-` (`mem_lat_ns@node:1` -> `key-mem_lat_ns-node-1`).
pub fn anchor(key: &str) -> String {
    let k: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("key-{k}")
}

/// The keys of `f`, a `key@target` folded into `key` when both are the same figure from
/// the same measurements; in the file's order.
pub fn folded(f: &ParamsFile) -> Vec<KeyRow<'_>> {
    let same = |a: &str, b: &str| {
        f.params.get(a) == f.params.get(b)
            && match (f.param_info.get(a), f.param_info.get(b)) {
                (Some(x), Some(y)) => x.from == y.from,
                (None, None) => true,
                _ => false,
            }
    };
    let mut rows = vec![];
    for (k, v) in &f.params {
        let info = f.param_info.get(k);
        let (base, qual) = bench_core::keys::split_target(k);
        let (base, qual) = (base.to_string(), qual.map(str::to_string));
        let target = qual
            .clone()
            .or_else(|| info.map(|i| i.target.clone()))
            .unwrap_or_default();
        // The same measurement under both names (the pool families record the shared
        // segment's name as the target and qualify with the region's).
        if qual.is_some() && f.params.contains_key(&base) && same(k, &base) {
            continue;
        }
        let aliases: Vec<String> = if qual.is_none() {
            // The keys are sorted: the qualified ones of `k` follow `k@` in a row.
            let prefix = format!("{k}@");
            f.params
                .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                .map(|(q, _)| q)
                .take_while(|q| q.starts_with(&prefix))
                .filter(|q| same(k, q))
                .cloned()
                .collect()
        } else {
            vec![]
        };
        let def = bench_core::keys::lookup(k);
        let unit = info
            .map(|i| i.unit.clone())
            .or_else(|| def.map(|d| d.unit.symbol().to_string()))
            .unwrap_or_default();
        rows.push(KeyRow {
            key: k.clone(),
            base,
            target,
            value: *v,
            unit,
            info,
            def,
            aliases,
        });
    }
    rows
}

/// A key's meaning in a few words for the summary line of its details: the registry's
/// meaning up to its first comma, colon or parenthesis, in plain text.
fn summary(def: Option<&KeyDef>) -> String {
    let Some(d) = def else {
        return "not in the registry".into();
    };
    let m = crate::output::markup::plain(d.meaning.trim());
    let end = m
        .char_indices()
        .find(|&(i, c)| matches!(c, ',' | ':' | ';') || (c == '(' && i > 24))
        .map_or(m.len(), |(i, _)| i);
    let short: String = m[..end].trim().chars().take(70).collect();
    short
}

/// The family a key comes from: the benchmark of its first measurement, else the
/// registry's producer, else `other`.
fn family(r: &KeyRow) -> String {
    r.info
        .and_then(|i| i.from.first())
        .and_then(|id| id.split('/').next())
        .map(String::from)
        .or_else(|| r.def.map(|d| d.benchmark.to_string()))
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "other".into())
}

/// One row of the keys table: key, value, unit, target, and the meaning, method,
/// measurements and folded aliases behind a `<details>`.
fn row(r: &KeyRow) -> Vec<String> {
    let meaning = r.def.map_or_else(
        || "(not in this cxlchar's key registry)".to_string(),
        |d| inline_html(d.meaning.trim()),
    );
    let method = r.info.map(|i| i.method.as_str()).unwrap_or("");
    let from = r
        .info
        .map(|i| {
            i.from
                .iter()
                .map(|id| format!("<code>{}</code>", esc(id)))
                .collect::<Vec<_>>()
                .join("<br>")
        })
        .unwrap_or_default();
    let also = if r.aliases.is_empty() {
        String::new()
    } else {
        format!(
            "<br><b>also read as</b> {}",
            r.aliases
                .iter()
                .map(|a| format!("<code id=\"{}\">{}</code>", anchor(a), esc(a)))
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    vec![
        format!("<code id=\"{}\">{}</code>", anchor(&r.key), esc(&r.key)),
        format!("<span class=\"n\">{}</span>", esc(&num(Some(r.value)))),
        esc(&r.unit),
        esc(&r.target),
        format!(
            "<details><summary>{}</summary>{meaning}<br><b>method</b>: {}<br>\
             <b>measured from</b>: {from}{also}</details>",
            esc(&summary(r.def)),
            esc(method)
        ),
    ]
}

/// The keys, one collapsible table per family (`mem.latency: 5 keys`), each row with its
/// meaning, method and measurements behind a `<details>` (a link to a key opens them).
/// `keys` are the file's keys as [`folded`] gives them.
pub fn keys_table(keys: &[KeyRow]) -> String {
    if keys.is_empty() {
        return "<p class=\"note\">No params keys in this file.</p>\n".into();
    }
    let mut groups: std::collections::BTreeMap<String, Vec<Vec<String>>> = Default::default();
    for r in keys {
        groups.entry(family(r)).or_default().push(row(r));
    }
    let mut s = String::new();
    for (fam, rows) in &groups {
        s.push_str(&format!(
            "<details class=\"keygroup\"><summary><b>{}</b>: {} key(s)</summary>\n{}</details>\n",
            esc(fam),
            rows.len(),
            table(
                "keys",
                &[
                    "key",
                    "value",
                    "unit",
                    "target",
                    "meaning, method and measurements"
                ],
                rows,
            )
        ));
    }
    s
}
