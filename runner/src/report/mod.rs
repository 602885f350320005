//! `cxlchar report PARAMS_JSON --out report.html [--spec SPEC_TOML]`: one self-contained
//! HTML page of a params.json: the run and its environment, the warnings with their
//! remediation, the key table (value, unit, target, the registry's meaning, the
//! measurements each key comes from), every chart of [`crate::plot`] inline as SVG with a
//! caption saying what was measured (a note where the file has no data for it), the
//! skipped entries with their reasons and, with `--spec`, the acceptance results of
//! [`crate::consumers::check`].
//!
//! Self-contained: inline CSS, inline SVG and one small inline script, no external
//! reference of any kind; a Content-Security-Policy (`default-src 'none'`) forbids the
//! browser any request. Every text from the file or the spec is escaped ([`html::esc`]);
//! the SVG text is escaped by plotters. The inline script only measures the rendered
//! charts and writes what it found into the `data-rendered` attribute of `<html>`
//! (`svgs=N;sizes=WxH,...;resources=R;violations=V`), which the headless-browser test
//! reads.
//!
//! Exit status: 0 the page was written (also when a spec bound fails: the page shows it;
//! `cxlchar check` gives the exit status of a spec); 2 bad input (an unreadable or
//! invalid params.json or spec) or an output that cannot be written.
//!
//! A fleet file gets its own page ([`fleet`]): hosts, each key's distribution across hosts
//! with its outliers, the pair heatmaps, the pairs not measured and, with `--spec`, the
//! verdict per host and pair.

pub mod firmware;
pub mod fleet;
pub mod html;

use crate::cli::ReportArgs;
use crate::consumers::check::{self, CheckResult, Outcome};
use crate::consumers::spec;
use crate::document::load;
use crate::exit::Status;
use crate::output::num;
use crate::plot::Chart;
use anyhow::Result;
use bench_core::env::Environment;
use bench_core::params::ParamsFile;
use bench_core::timer::TimerInfo;
use bench_core::units::format_size;
use html::{esc, table};
use std::fmt::Write as _;

/// The acceptance part of a report: the spec's name and the results.
pub struct Acceptance<'a> {
    /// Spec name (its path as given).
    pub spec: &'a str,
    /// One result per required key and bound.
    pub results: &'a [CheckResult],
}

/// `cxlchar report`.
pub fn report_cmd(a: &ReportArgs) -> Result<Status> {
    let mut inputs = vec![a.params.as_path()];
    if let Some(s) = &a.spec {
        inputs.push(s.as_path());
    }
    crate::document::write::check_output(&a.out).map_err(|e| e.context("--out"))?;
    crate::document::write::check_not_input(&a.out, &inputs)?;
    let spec = match &a.spec {
        Some(p) => {
            let text = load::read_input(p, "spec ")?;
            Some(spec::parse(&text, &p.display().to_string())?)
        }
        None => None,
    };
    let file = match load::load_any(&a.params)? {
        load::Input::Params(p) => p,
        load::Input::Fleet(f) => {
            let suites = spec.as_ref().map(|s| check::check_fleet(s, &f));
            let spec_name = a.spec.as_ref().map(|p| p.display().to_string());
            let acc = match (&spec_name, &suites) {
                (Some(spec), Some(suites)) => Some(fleet::FleetAcceptance { spec, suites }),
                _ => None,
            };
            let charts = crate::plot::pairs::charts(&f)?;
            let page = fleet::render(&f, &a.params.display().to_string(), &charts, acc.as_ref());
            crate::document::write::write_atomic(&a.out, &page)?;
            println!("{}", a.out.display());
            return Ok(Status::Success);
        }
    };
    let spec_name = a.spec.as_ref().map(|p| p.display().to_string());
    let results = spec.as_ref().map(|s| check::check(s, &file));
    let charts = crate::plot::charts(&file)?;
    let acceptance = match (&spec_name, &results) {
        (Some(spec), Some(results)) => Some(Acceptance { spec, results }),
        _ => None,
    };
    let page = render(
        &file,
        &a.params.display().to_string(),
        &charts,
        acceptance.as_ref(),
    );
    crate::document::write::write_atomic(&a.out, &page)?;
    println!("{}", a.out.display());
    Ok(Status::Success)
}

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#555;font-style:italic}.pass{color:#176317}.fail{color:#b00000;font-weight:bold}
.nm{color:#8a5a00}figure.plot{margin:1em 0;border:1px solid #eee;padding:.5em}
figure.plot svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.9em;color:#333;margin-top:.4em}code{font-size:.9em}
nav a{margin-right:.8em}
";

/// Registers the CSP violation counter before anything loads.
const HEAD_SCRIPT: &str = "window.cxlcharViolations=0;\
document.addEventListener('securitypolicyviolation',function(){window.cxlcharViolations++;});";

/// Measures the rendered charts and records them (and any resource the page requested)
/// in `data-rendered` on `<html>`; run at the end of the body and again on load.
const RENDER_CHECK: &str = "(function(){function rec(){var r=[];\
document.querySelectorAll('figure.plot svg').forEach(function(s){var b=s.getBoundingClientRect();\
r.push(Math.round(b.width)+'x'+Math.round(b.height));});\
var n=performance.getEntriesByType?performance.getEntriesByType('resource').length:-1;\
document.documentElement.setAttribute('data-rendered','svgs='+r.length+';sizes='+r.join(',')+\
';resources='+n+';violations='+window.cxlcharViolations);}rec();window.addEventListener('load',rec);})();";

/// The title line: cxlchar, CPU, hypervisor, kernel, date.
pub fn title(f: &ParamsFile) -> String {
    let e = &f.environment;
    let host = match &e.hypervisor {
        Some(h) => format!("{h} guest"),
        None => "bare metal".into(),
    };
    format!(
        "cxlchar {} report: {} ({} CPUs, {host}, kernel {}), {}",
        f.tool.version, e.cpu.model, e.cpu.logical_cpus, e.kernel, f.started_at
    )
}

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "unknown (the kernel does not tell)".into(),
    }
}

/// The environment table: the settings that shape the figures, then the topology.
fn environment(f: &ParamsFile) -> String {
    let mut rows = settings(f);
    topology(&f.environment, &mut rows);
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(k, v)| vec![esc(k), esc(&v)])
        .collect();
    table("env", &["setting", "value"], &rows)
}

/// One row per machine and kernel setting, and the timer's.
fn settings(f: &ParamsFile) -> Vec<(&'static str, String)> {
    let e = &f.environment;
    vec![
        (
            "CPU",
            format!(
                "{} ({}), {} logical CPUs, {} socket(s), {} thread(s) per core",
                e.cpu.model,
                e.cpu.vendor,
                e.cpu.logical_cpus,
                e.cpu.sockets,
                e.cpu.threads_per_core
            ),
        ),
        ("CPU flags", e.cpu.flags.join(" ")),
        ("SMT active", yes_no(e.smt_active)),
        (
            "cpufreq governor",
            if e.governors.is_empty() {
                "none exposed (no cpufreq, as in most VMs)".into()
            } else {
                e.governors.join(", ")
            },
        ),
        ("turbo / boost", yes_no(e.turbo)),
        (
            "transparent huge pages",
            format!(
                "enabled: {}, defrag: {}",
                e.thp_enabled.as_deref().unwrap_or("unknown"),
                e.thp_defrag.as_deref().unwrap_or("unknown")
            ),
        ),
        ("hugepages", hugepages(e)),
        ("automatic NUMA balancing", yes_no(e.numa_balancing)),
        (
            "hypervisor",
            e.hypervisor
                .clone()
                .unwrap_or_else(|| "none (bare metal)".into()),
        ),
        ("kernel / arch", format!("{} / {}", e.kernel, e.arch)),
        ("memory", format_size(e.mem_total_bytes as usize)),
        ("allowed CPUs", e.allowed_cpus.clone()),
        (
            "perf_event_paranoid",
            e.perf_event_paranoid
                .map_or("unknown".into(), |v| v.to_string()),
        ),
        (
            "hardware prefetchers",
            match &e.prefetchers.reason {
                Some(r) => format!("{}: {r}", e.prefetchers.state),
                None => format!("{} ({})", e.prefetchers.state, e.prefetchers.source),
            },
        ),
        ("timer", timer(&f.timer)),
    ]
}

/// Each hugepage size with its total and free pages.
fn hugepages(e: &Environment) -> String {
    e.topology
        .hugepages
        .iter()
        .map(|h| {
            format!(
                "{}: {} total, {} free",
                format_size(h.page_size_bytes),
                h.total,
                h.free
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The timer's source, calibration, overhead and resolution (and fallback, if any).
fn timer(t: &TimerInfo) -> String {
    format!(
        "{} at {:.0} Hz ({}; spread {:.1} ppm), invariant: {}, overhead {:.1} ns, \
         resolution {:.1} ns{}",
        serde_json::to_value(t.source)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_else(|| format!("{:?}", t.source)),
        t.freq_hz,
        t.freq_method,
        t.calibration_spread_ppm,
        yes_no(t.invariant),
        t.overhead_ns,
        t.resolution_ns,
        t.fallback_reason
            .as_ref()
            .map_or(String::new(), |r| format!("; fallback: {r}"))
    )
}

/// Rows for the NUMA nodes, caches, cache instances and dax devices.
fn topology(e: &Environment, rows: &mut Vec<(&'static str, String)>) {
    for n in &e.topology.nodes {
        rows.push((
            "NUMA node",
            format!(
                "node {}: CPUs {:?}, {}, distances {:?}{}",
                n.id,
                n.cpus,
                format_size(n.mem_total_bytes as usize),
                n.distances,
                if n.likely_far_memory {
                    ", likely far memory"
                } else {
                    ""
                }
            ),
        ));
    }
    for c in &e.topology.caches {
        rows.push((
            "cache",
            format!(
                "L{} {}: {}, {}-byte lines, shared by CPUs {}",
                c.level,
                c.kind,
                format_size(c.size_bytes),
                c.line_bytes,
                c.shared_cpus
            ),
        ));
    }
    if !e.topology.cache_instances.is_empty() {
        rows.push(("cache instances (all CPUs)", cache_instances(e)));
    }
    for d in &e.topology.dax {
        rows.push((
            "dax device",
            format!(
                "{} ({}), {}, target node {}",
                d.name,
                d.path.display(),
                format_size(d.size_bytes as usize),
                d.target_node.map_or("-".into(), |n| n.to_string())
            ),
        ));
    }
}

/// Every cache instance, grouped by level and size: what the DRAM sizing rule sums.
fn cache_instances(e: &Environment) -> String {
    let mut groups: std::collections::BTreeMap<(u8, usize), Vec<&str>> = Default::default();
    for c in &e.topology.cache_instances {
        groups
            .entry((c.level, c.size_bytes))
            .or_default()
            .push(c.cpus.as_str());
    }
    groups
        .iter()
        .rev()
        .map(|((l, size), cpus)| {
            let shown: Vec<&str> = cpus.iter().copied().take(4).collect();
            let more = if cpus.len() > 4 { ", ..." } else { "" };
            format!(
                "L{l} {} x {} (CPUs {}{more})",
                cpus.len(),
                format_size(*size),
                shown.join("; ")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn warnings(f: &ParamsFile) -> String {
    if f.warnings.is_empty() {
        return "<p class=\"note\">No warnings: nothing in the environment is known to distort \
                these figures.</p>\n"
            .into();
    }
    warning_table(&f.warnings)
}

/// Warnings as a table of code, warning and remediation (a run's, or a fleet's own).
fn warning_table(warnings: &[bench_core::params::Warning]) -> String {
    let rows: Vec<Vec<String>> = warnings
        .iter()
        .map(|w| {
            vec![
                format!("<code>{}</code>", esc(&w.code)),
                esc(&w.message),
                esc(&w.remediation),
            ]
        })
        .collect();
    table("warnings", &["code", "warning", "remediation"], &rows)
}

/// The self-checks: the DRAM check each DRAM key stands on (working sets confirmed
/// against a larger one), then the prefetch check of each idle-latency DRAM point.
fn checks(f: &ParamsFile) -> String {
    if f.dram_check.is_empty() && f.prefetch_check.is_empty() {
        return "<p class=\"note\">No self-check in this file (no DRAM key was measured, or \
                the file predates them).</p>\n"
            .into();
    }
    let rows = dram_check_rows(f);
    let mut s = String::from(
        "<p>Each DRAM key was measured at a working set of 4 x the caches its CPUs can fill \
         (every distinct LLC and L2 instance, sysfs), then checked: its kernel on the same CPUs \
         at a larger working set must give the same figure within the tolerance, or the set \
         was in a cache and grows. <b>UNCONFIRMED</b> figures stand with a warning.</p>\n",
    );
    if !rows.is_empty() {
        s.push_str(&table(
            "dram-checks",
            &[
                "target",
                "check",
                "verdict",
                "working set",
                "compared (mean of passes)",
                "smaller / larger speed",
                "keys it stands for",
            ],
            &rows,
        ));
    }
    let rows = prefetch_check_rows(f);
    if !rows.is_empty() {
        s.push_str("<p>The prefetch check at each idle-latency DRAM point: chains built differently must agree if no prefetcher helps one of them.</p>\n");
        s.push_str(&table(
            "prefetch-checks",
            &[
                "target",
                "verdict",
                "working set",
                "chains",
                "slowest / default",
            ],
            &rows,
        ));
    }
    s
}

/// One row per DRAM check: target, check, verdict, working set, the compared figures,
/// their ratio and the keys the check stands for.
fn dram_check_rows(f: &ParamsFile) -> Vec<Vec<String>> {
    use bench_core::dram_check::Verdict;
    let fig = |c: &bench_core::dram_check::DramCheck, b: usize| {
        let v: Vec<f64> = c
            .points
            .iter()
            .filter(|p| p.bytes == b)
            .map(|p| p.value)
            .collect();
        let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        format!("{}: {} {}", format_size(b), num(mean), c.unit)
    };
    f.dram_check
        .iter()
        .map(|c| {
            let (class, label) = match c.verdict {
                Verdict::Agree => ("pass", "agree"),
                Verdict::Grown => ("nm", "grown"),
                Verdict::Unconfirmed => ("fail", "UNCONFIRMED"),
            };
            let [a, b] = c.compared_bytes;
            let mut compared = format!("{}<br>{}", esc(&fig(c, a)), esc(&fig(c, b)));
            if let Some(n) = &c.note {
                let _ = write!(compared, "<br><span class=\"note\">{}</span>", esc(n));
            }
            vec![
                esc(&c.target),
                esc(&format!(
                    "{} ({}, {} thread(s), CPUs {})",
                    c.benchmark, c.kernel, c.threads, c.cpus
                )),
                format!("<span class=\"{class}\">{label}</span>"),
                format!(
                    "<span class=\"n\">{}</span>",
                    esc(&format_size(c.reported_bytes))
                ),
                compared,
                format!("<span class=\"n\">{:.3}</span>", c.ratio),
                c.keys
                    .iter()
                    .map(|k| format!("<code>{}</code>", esc(k)))
                    .collect::<Vec<_>>()
                    .join(" "),
            ]
        })
        .collect()
}

/// One row per prefetch check: target, verdict, working set, chains and their ratio.
fn prefetch_check_rows(f: &ParamsFile) -> Vec<Vec<String>> {
    f.prefetch_check
        .iter()
        .map(|c| {
            let chains = c
                .chains
                .iter()
                .map(|x| {
                    format!(
                        "{} {:.1} ns{}",
                        x.label,
                        x.lat_ns,
                        if x.judged { "" } else { " (info)" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                esc(&c.target),
                esc(&c.verdict),
                format!(
                    "<span class=\"n\">{}</span>",
                    esc(&format_size(c.touched_bytes))
                ),
                esc(&chains),
                format!("<span class=\"n\">{:.3}</span>", c.ratio),
            ]
        })
        .collect()
}

fn keys(f: &ParamsFile) -> String {
    if f.params.is_empty() {
        return "<p class=\"note\">No params keys in this file.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = f
        .params
        .iter()
        .map(|(k, v)| {
            let info = f.param_info.get(k);
            let def = bench_core::keys::lookup(k);
            let unit = info
                .map(|i| i.unit.clone())
                .or_else(|| def.map(|d| d.unit.symbol().to_string()))
                .unwrap_or_default();
            let meaning = def.map_or_else(
                || "(not in this cxlchar's key registry)".to_string(),
                |d| d.meaning.to_string(),
            );
            let method = info.map(|i| i.method.as_str()).unwrap_or("");
            let from = info
                .map(|i| {
                    i.from
                        .iter()
                        .map(|id| format!("<code>{}</code>", esc(id)))
                        .collect::<Vec<_>>()
                        .join("<br>")
                })
                .unwrap_or_default();
            vec![
                format!("<code>{}</code>", esc(k)),
                format!("<span class=\"n\">{}</span>", esc(&num(Some(*v)))),
                esc(&unit),
                esc(info.map(|i| i.target.as_str()).unwrap_or("")),
                esc(meaning.trim()),
                esc(method),
                from,
            ]
        })
        .collect();
    table(
        "keys",
        &[
            "key",
            "value",
            "unit",
            "target",
            "meaning",
            "method",
            "measured from",
        ],
        &rows,
    )
}

fn plots(charts: &[Chart]) -> String {
    let mut s = String::new();
    for c in charts {
        match &c.svg {
            Some(svg) => {
                let _ = write!(
                    s,
                    "<figure class=\"plot\" id=\"plot-{}\" data-family=\"{}\">\n{svg}\n<figcaption><b>{}</b>: {}</figcaption></figure>\n",
                    esc(&c.file),
                    esc(&c.family),
                    esc(&c.file),
                    esc(&c.caption)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "<p class=\"note nodata\" id=\"plot-{}\"><b>{}</b>: {}. ({})</p>",
                    esc(&c.file),
                    esc(&c.file),
                    esc(&c.note),
                    esc(&c.caption)
                );
            }
        }
    }
    s
}

fn skipped(f: &ParamsFile) -> String {
    if f.skipped.is_empty() {
        return "<p class=\"note\">Nothing was skipped.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = f
        .skipped
        .iter()
        .map(|k| vec![esc(&k.benchmark), esc(&k.target), esc(&k.reason)])
        .collect();
    table("skipped", &["benchmark", "target", "reason"], &rows)
}

fn acceptance(a: &Acceptance) -> String {
    let rows: Vec<Vec<String>> = a
        .results
        .iter()
        .map(|r| {
            let (class, label) = match r.outcome {
                Outcome::Pass => ("pass", "pass"),
                Outcome::Fail => ("fail", "FAIL"),
                Outcome::NotMeasured if r.optional => ("nm", "not measured (optional)"),
                Outcome::NotMeasured => ("nm", "NOT MEASURED"),
            };
            let mut why = esc(&r.reason);
            if !r.why.is_empty() && r.why != "required" {
                if !why.is_empty() {
                    why.push_str("<br>");
                }
                why.push_str(&format!("rationale: {}", esc(&r.why)));
            }
            vec![
                format!("<span class=\"{class}\">{label}</span>"),
                format!("<code>{}</code>", esc(&r.name)),
                esc(&num(r.measured)),
                esc(&num(r.limit)),
                esc(&num(r.margin)),
                why,
            ]
        })
        .collect();
    let count = |o: Outcome| a.results.iter().filter(|r| r.outcome == o).count();
    format!(
        "<p>Spec <code>{}</code>: {} passed, {} failed, {} not measured (<code>cxlchar check</code> \
         would exit {}).</p>\n{}",
        esc(a.spec),
        count(Outcome::Pass),
        count(Outcome::Fail),
        count(Outcome::NotMeasured),
        check::exit_code(a.results),
        table(
            "acceptance",
            &["result", "check", "measured", "limit", "margin", "reason"],
            &rows
        )
    )
}

/// The start of a page: the doctype, the CSP, the style, the violation counter, the
/// title as `<title>` and `<h1>`.
fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n<script>{HEAD_SCRIPT}</script>\n</head>\n<body>\n\
         <h1>{}</h1>\n",
        esc(title),
        esc(title)
    )
}

/// The navigation bar: a link per `(section id, name)`.
fn links(nav: &[(&str, &str)]) -> String {
    let mut s = String::from("<nav>");
    for (id, name) in nav {
        let _ = write!(s, "<a href=\"#{id}\">{name}</a>");
    }
    s.push_str("</nav>\n");
    s
}

/// The end of a page: the render check, then the closing tags.
fn tail() -> String {
    format!("<script>{RENDER_CHECK}</script>\n</body>\n</html>\n")
}

/// The whole page.
pub fn render(f: &ParamsFile, source: &str, charts: &[Chart], acc: Option<&Acceptance>) -> String {
    let title = title(f);
    let mut s = head(&title);
    let mut nav = vec![
        ("run", "Run"),
        ("environment", "Environment"),
        ("warnings", "Warnings"),
        ("checks", "Self-checks"),
    ];
    if acc.is_some() {
        nav.push(("acceptance", "Acceptance"));
    }
    nav.extend([("keys", "Keys"), ("plots", "Plots"), ("skipped", "Skipped")]);
    s.push_str(&links(&nav));
    let _ = write!(
        s,
        "<h2 id=\"run\">Run</h2>\n{}",
        table(
            "run",
            &["item", "value"],
            &[
                vec!["file".into(), format!("<code>{}</code>", esc(source))],
                vec![
                    "written by".into(),
                    esc(&format!("{} {}", f.tool.name, f.tool.version))
                ],
                vec![
                    "command line".into(),
                    format!("<code>{}</code>", esc(&f.command_line.join(" ")))
                ],
                vec![
                    "started / finished".into(),
                    esc(&format!("{} / {}", f.started_at, f.finished_at))
                ],
                vec![
                    "host".into(),
                    "not recorded by name in params.json: see the environment below".into()
                ],
                vec![
                    "report by".into(),
                    esc(&format!("cxlchar {}", env!("CARGO_PKG_VERSION")))
                ],
            ],
        )
    );
    let _ = write!(
        s,
        "<h2 id=\"environment\">Environment</h2>\n{}",
        environment(f)
    );
    let _ = write!(
        s,
        "<h2 id=\"warnings\">Warnings ({})</h2>\n{}",
        f.warnings.len(),
        warnings(f)
    );
    let _ = write!(
        s,
        "<h2 id=\"checks\">Self-checks ({} DRAM, {} prefetch)</h2>\n{}",
        f.dram_check.len(),
        f.prefetch_check.len(),
        checks(f)
    );
    s.push_str(&firmware::section(f));
    if let Some(a) = acc {
        let _ = write!(
            s,
            "<h2 id=\"acceptance\">Acceptance</h2>\n{}",
            acceptance(a)
        );
    }
    let _ = write!(
        s,
        "<h2 id=\"keys\">Keys ({})</h2>\n<p>Each key as the models read it; the meaning is \
         the key registry's, the method and the measurement ids are the file's.</p>\n{}",
        f.params.len(),
        keys(f)
    );
    let drawn = charts.iter().filter(|c| c.svg.is_some()).count();
    let _ = write!(
        s,
        "<h2 id=\"plots\">Plots ({drawn} drawn)</h2>\n{}",
        plots(charts)
    );
    let _ = write!(
        s,
        "<h2 id=\"skipped\">Skipped ({})</h2>\n{}",
        f.skipped.len(),
        skipped(f)
    );
    s.push_str(&tail());
    s
}

#[cfg(test)]
mod tests;
