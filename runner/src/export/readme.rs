//! The README's example output and run times are this binary's: rendered here from the
//! two runs in `results/readme/` (`all.json`, `all-quick.json`, written by
//! `ci/readme-example.sh` on the machine they name) and compared with the README's
//! generated blocks. A change of the summary's rendering makes the test fail until the
//! README is regenerated: `CXLCHAR_BLESS=1 cargo test -p cxlchar --bin cxlchar readme`.

use super::summary::SummaryExporter;
use super::Exporter;
use bench_core::params::ParamsFile;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The terminal width the example is rendered for.
const EXAMPLE_WIDTH: usize = 100;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn run(name: &str) -> (ParamsFile, Value) {
    let text = std::fs::read_to_string(repo(&format!("results/readme/{name}.json")))
        .unwrap_or_else(|e| panic!("results/readme/{name}.json: {e} (ci/readme-example.sh)"));
    (
        serde_json::from_str(&text).unwrap(),
        serde_json::from_str(&text).unwrap(),
    )
}

/// How long a run took, whole seconds, from its `started_at` and `finished_at`.
fn seconds(v: &Value) -> u64 {
    let t = |k: &str| {
        humantime::parse_rfc3339(v[k].as_str().unwrap_or_else(|| panic!("no {k}")))
            .unwrap_or_else(|e| panic!("{k}: {e}"))
    };
    t("finished_at")
        .duration_since(t("started_at"))
        .unwrap()
        .as_secs_f64()
        .round() as u64
}

/// The machine a run names: `the 2-vCPU AMD EPYC KVM guest with a 32 MiB L3`.
fn machine(v: &Value) -> String {
    let e = &v["environment"];
    let llc = e["topology"]["caches"]
        .as_array()
        .into_iter()
        .flatten()
        .max_by_key(|c| (c["level"].as_u64(), c["size_bytes"].as_u64()))
        .and_then(|c| c["size_bytes"].as_u64())
        .map_or(String::new(), |b| {
            format!(" with a {} L3", bench_core::units::human_bytes(b))
        });
    match e["hypervisor"].as_str() {
        Some(h) => format!(
            "the {}-vCPU {} {h} guest{llc}",
            e["cpu"]["logical_cpus"],
            e["cpu"]["model"].as_str().unwrap_or("?")
        ),
        None => format!(
            "a {}-CPU {} machine{llc}",
            e["cpu"]["logical_cpus"],
            e["cpu"]["model"].as_str().unwrap_or("?")
        ),
    }
}

/// The day a run started (`2026-11-28`).
fn day(v: &Value) -> &str {
    v["started_at"]
        .as_str()
        .map_or("?", |s| s.get(..10).unwrap_or(s))
}

/// The generated blocks: (name, text).
fn blocks() -> Vec<(&'static str, String)> {
    let (all, av) = run("all");
    let (_, qv) = run("all-quick");
    assert_eq!(
        machine(&av),
        machine(&qv),
        "the two runs of results/readme/ are of one machine"
    );
    let commit = av["tool"]["commit"].as_str().unwrap_or("unknown");
    let timings = format!(
        "`cxlchar all --quick --out params.json` took {} s on {} of the example below \
         ({}; the full `cxlchar all` {} s there, release build of commit {commit}).\n",
        seconds(&qv),
        machine(&qv),
        day(&qv),
        seconds(&av),
    );
    let text = SummaryExporter {
        width: Some(EXAMPLE_WIDTH),
        out: Some("params.json".into()),
    }
    .render(&all)
    .unwrap();
    let example = format!(
        "What `cxlchar all --out params.json` printed on {} ({}, commit {commit}), on a \
         {EXAMPLE_WIDTH}-column terminal; `--verbose` adds the full tables, and \
         `results/readme/all.json` is the file it wrote.\n\n```text\n$ cxlchar all --out \
         params.json\n{text}```\n",
        machine(&av),
        day(&av),
    );
    vec![("timings", timings), ("example", example)]
}

/// The README with every generated block replaced by `blocks`.
fn regenerate(readme: &str, blocks: &[(&str, String)]) -> String {
    let mut s = readme.to_string();
    for (name, text) in blocks {
        let open = format!("<!-- generated: {name} -->\n");
        let close = format!("<!-- end: {name} -->");
        let a = s
            .find(&open)
            .unwrap_or_else(|| panic!("README.md has no {open:?}"))
            + open.len();
        let b = a + s[a..]
            .find(&close)
            .unwrap_or_else(|| panic!("README.md has no {close:?}"));
        s.replace_range(a..b, text);
    }
    s
}

#[test]
fn the_readme_example_and_timings_are_this_binarys() {
    let path = repo("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let want = regenerate(&readme, &blocks());
    if std::env::var_os("CXLCHAR_BLESS").is_some_and(|v| !v.is_empty()) {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    assert!(
        readme == want,
        "README.md's generated blocks are stale: run \
         `CXLCHAR_BLESS=1 cargo test -p cxlchar --bin cxlchar readme` (ci/readme-example.sh \
         measures the runs anew)"
    );
}

#[test]
fn the_readme_lists_every_package_the_verbs_build_needs() {
    let deps = std::fs::read_to_string(repo("ci/build-deps")).unwrap();
    let pkgs = deps
        .lines()
        .find_map(|l| l.strip_prefix("PKGS=\""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("ci/build-deps names its packages in PKGS=\"...\"");
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let para = readme
        .split("\n\n")
        .find(|p| p.contains("--features verbs") && p.contains("ci/build-deps"))
        .expect("the README's paragraph on the verbs build");
    for p in pkgs.split_whitespace() {
        assert!(
            para.contains(&format!("`{p}`")),
            "{p} is not named in:\n{para}"
        );
    }
}

#[test]
fn blocks_are_replaced_between_their_marks_only() {
    let r = "a\n<!-- generated: x -->\nold\n<!-- end: x -->\nb\n";
    let got = regenerate(r, &[("x", "new\n".into())]);
    assert_eq!(got, "a\n<!-- generated: x -->\nnew\n<!-- end: x -->\nb\n");
}
