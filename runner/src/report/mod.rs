//! `cxlchar report PARAMS_JSON --out report.html [--spec SPEC_TOML]`: one self-contained
//! HTML page of a params.json that leads with the answer: with `--spec` the verdict banner
//! ([`headline::verdict`]), then the headline table ([`headline::headline`]: idle latency
//! and bandwidth per cache level and target, far-memory factors, the loaded-latency knee,
//! each GPU by name, core-to-core latency, the self-checks), then every chart of
//! [`crate::plot`] inline as SVG (the GPU's under their own heading) with a one-sentence
//! caption and the method behind a `<details>` (the charts not drawn in one line), then
//! the details ([`detail_sections`]: the acceptance results of
//! [`crate::consumers::check`], the self-checks, the firmware vs measured ([`firmware`]),
//! the keys ([`keys`]), the warnings grouped by code, the environment, the run and the
//! skipped entries; a section with nothing to show is one line saying why). A print
//! stylesheet keeps it to a few pages.
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

mod environment;
pub mod firmware;
pub mod fleet;
pub mod headline;
pub mod html;
pub mod keys;
mod warnings;

use crate::cli::ReportArgs;
use crate::consumers::check::{self, CheckResult, Outcome};
use crate::consumers::spec;
use crate::document::load;
use crate::exit::Status;
use crate::output::num;
use crate::plot::Chart;
use anyhow::Result;
use bench_core::params::ParamsFile;
use bench_core::units::format_size;
use html::{esc, table};
use std::fmt::Write as _;
use warnings::{warning_table, warnings};

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
            eprintln!(
                "wrote {}",
                crate::output::text::printable_lines(&a.out.display().to_string())
            );
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
    eprintln!(
        "wrote {}",
        crate::output::text::printable_lines(&a.out.display().to_string())
    );
    Ok(Status::Success)
}

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:1em auto;max-width:1100px;padding:0 1em;color:#222}
h1{font-size:1.3em;margin:.3em 0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.4em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#555;font-style:italic}.pass{color:#176317}.fail{color:#b00000;font-weight:bold}
.nm{color:#8a5a00}figure.plot{margin:1em 0;border:1px solid #eee;padding:.5em}
figure.plot svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.95em;color:#333;margin-top:.4em}code{font-size:.9em}
figcaption details{font-size:.9em;color:#555}summary{cursor:pointer;color:#335}
nav{margin:.8em 0}nav a{margin-right:.8em}
.verdict{border:2px solid;border-radius:6px;padding:.4em 1em;margin:.6em 0}
.verdict .big{font-size:2em;font-weight:bold;margin:.1em 0}.verdict p{margin:.3em 0}
.v-pass{border-color:#176317;background:#eef8ee}.v-pass .big{color:#176317}
.v-fail{border-color:#b00000;background:#fdeeee}.v-fail .big{color:#b00000}
.v-nm{border-color:#8a5a00;background:#fdf6e8}.v-nm .big{color:#8a5a00}
table.headline td{padding:.15em .6em}table.headline td:nth-child(4){max-width:34em}table.headline a{color:inherit;text-decoration:none}
table.headline a:hover{text-decoration:underline}
table.keys td:nth-child(5){max-width:36em}.nw{white-space:nowrap}
@media print{
body{max-width:none;margin:0;font-size:10pt}nav{display:none}
h2{break-after:avoid;margin-top:1em}figure.plot{break-inside:avoid;border:none;margin:.4em 0}
figure.plot svg{max-height:8.5cm;width:auto}
details:not([open])>:not(summary){display:none}summary{list-style:none;color:#555}
tr{break-inside:avoid}a{color:inherit;text-decoration:none}
}
";

/// Registers the CSP violation counter before anything loads.
const HEAD_SCRIPT: &str = "window.cxlcharViolations=0;\
document.addEventListener('securitypolicyviolation',function(){window.cxlcharViolations++;});";

/// Measures the rendered charts and records them (and any resource the page requested),
/// the page's height and where the verdict, the headline table and the first chart start
/// (px from the top; -1 when absent) in `data-rendered` on `<html>`; run at the end of
/// the body and again on load.
const RENDER_CHECK: &str = "(function(){function rec(){var r=[];\
document.querySelectorAll('figure.plot svg').forEach(function(s){var b=s.getBoundingClientRect();\
r.push(Math.round(b.width)+'x'+Math.round(b.height));});\
var n=performance.getEntriesByType?performance.getEntriesByType('resource').length:-1;\
function top(q){var e=document.querySelector(q);\
return e?Math.round(e.getBoundingClientRect().top+window.scrollY):-1;}\
document.documentElement.setAttribute('data-rendered','svgs='+r.length+';sizes='+r.join(',')+\
';resources='+n+';violations='+window.cxlcharViolations+\
';height='+document.documentElement.scrollHeight+';verdict='+top('#verdict')+\
';headline='+top('table.headline')+';chart='+top('figure.plot'));}\
rec();window.addEventListener('load',rec);})();";

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

/// The self-checks: the DRAM check each DRAM key stands on (working sets confirmed
/// against a larger one), then the prefetch check of each idle-latency DRAM point (the
/// page says "none in this file" when there is neither).
fn checks(f: &ParamsFile) -> String {
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
                Verdict::Noisy => ("fail", "NOISY"),
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
                keys_cell(&c.keys),
            ]
        })
        .collect()
}

/// How many keys a self-check row names before it folds the rest.
const KEYS_SHOWN: usize = 3;

/// The keys a DRAM check stands for: a few, then the count and all of them behind a
/// `<details>` (a check of `all` stands for dozens).
fn keys_cell(keys: &[String]) -> String {
    let code = |k: &String| format!("<code>{}</code>", esc(k));
    if keys.len() <= KEYS_SHOWN + 1 {
        return keys.iter().map(code).collect::<Vec<_>>().join(" ");
    }
    format!(
        "{} <details><summary>and {} more</summary>{}</details>",
        keys[..KEYS_SHOWN]
            .iter()
            .map(code)
            .collect::<Vec<_>>()
            .join(" "),
        keys.len() - KEYS_SHOWN,
        keys[KEYS_SHOWN..]
            .iter()
            .map(code)
            .collect::<Vec<_>>()
            .join(" ")
    )
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

/// The drawn charts as figures, then the others in one line ([`not_drawn`]).
fn plots(charts: &[Chart]) -> String {
    let mut s = String::new();
    for c in charts {
        if let Some(svg) = &c.svg {
            let _ = write!(
                s,
                "<figure class=\"plot\" id=\"plot-{}\" data-family=\"{}\">\n{svg}\n\
                 <figcaption>{}<details><summary>how it was measured ({})</summary>{}\
                 </details></figcaption></figure>\n",
                esc(&c.file),
                esc(&c.family),
                esc(&c.summary()),
                esc(&c.file),
                esc(&c.caption)
            );
        }
    }
    s.push_str(&not_drawn(charts));
    s
}

/// The charts not drawn, in one line, their files grouped by why (`numa-latency.svg,
/// numa-bandwidth.svg: no mem.matrix measurements in this file`), each file with its
/// chart's anchor; nothing when every chart is drawn.
fn not_drawn(charts: &[Chart]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = vec![];
    for c in charts.iter().filter(|c| c.svg.is_none()) {
        let file = format!("<b id=\"plot-{}\">{}</b>", esc(&c.file), esc(&c.file));
        match groups.iter_mut().find(|(note, _)| *note == c.note) {
            Some((_, files)) => files.push(file),
            None => groups.push((&c.note, vec![file])),
        }
    }
    if groups.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(note, files)| format!("{}: {}", files.join(", "), esc(note)))
        .collect();
    format!(
        "<p class=\"note nodata\">Not drawn: {}.</p>\n",
        parts.join("; ")
    )
}

/// The skipped entries' table (the page says "nothing was skipped" without one).
fn skipped(f: &ParamsFile) -> String {
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
        title_html(title)
    )
}

/// The title as the page's heading: each word with a hyphen (the date and time, a kernel
/// release) kept on one line, so that a narrow page breaks the title between words,
/// never inside a timestamp.
fn title_html(title: &str) -> String {
    title
        .split(' ')
        .map(|w| {
            if w.contains('-') {
                format!("<span class=\"nw\">{}</span>", esc(w))
            } else {
                esc(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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

/// The run table: file, writer, command line, times.
fn run_table(f: &ParamsFile, source: &str) -> String {
    table(
        "run",
        &["item", "value"],
        &[
            vec!["file".into(), format!("<code>{}</code>", esc(source))],
            vec![
                "written by".into(),
                esc(&match &f.tool.commit {
                    Some(c) => format!("{} {} (commit {c})", f.tool.name, f.tool.version),
                    None => format!("{} {}", f.tool.name, f.tool.version),
                }),
            ],
            vec![
                "command line".into(),
                format!(
                    "<code>{}</code>",
                    esc(&crate::output::shell::command(&f.command_line))
                ),
            ],
            vec![
                "started / finished".into(),
                esc(&format!("{} / {}", f.started_at, f.finished_at)),
            ],
            vec![
                "host".into(),
                "not recorded by name in params.json: see the environment".into(),
            ],
            vec![
                "report by".into(),
                esc(&format!("cxlchar {}", env!("CARGO_PKG_VERSION"))),
            ],
        ],
    )
}

/// The charts: the memory and pool charts, then the GPU's under their own heading.
fn chart_sections(charts: &[Chart]) -> String {
    let is_gpu = |c: &&Chart| c.family.starts_with("gpu");
    let main: Vec<Chart> = charts.iter().filter(|c| !is_gpu(c)).cloned().collect();
    let gpu: Vec<Chart> = charts.iter().filter(is_gpu).cloned().collect();
    let drawn = charts.iter().filter(|c| c.svg.is_some()).count();
    let mut s = format!("<h2 id=\"plots\">Charts ({drawn} drawn)</h2>\n");
    s.push_str(&plots(&main));
    if !gpu.is_empty() {
        s.push_str("<h3 id=\"gpu\">GPU</h3>\n");
        s.push_str(&plots(&gpu));
    }
    s
}

/// One part of the details: a section under its heading, or, where the section has
/// nothing to show, one line in its place saying why (no heading, no link in the
/// navigation; the line keeps the section's id, so that links to it still land).
struct Section {
    id: &'static str,
    /// The heading; `None`: the section is left out and `body` is the line.
    heading: Option<String>,
    body: String,
}

impl Section {
    fn full(id: &'static str, heading: String, body: String) -> Section {
        Section {
            id,
            heading: Some(heading),
            body,
        }
    }

    /// The line that stands for section `name` left out, and why.
    fn left_out(id: &'static str, name: &str, why: &str) -> Section {
        Section {
            id,
            heading: None,
            body: format!(
                "<p class=\"note left-out\" id=\"{id}\"><b>{}</b>: {}.</p>\n",
                esc(name),
                esc(why)
            ),
        }
    }

    /// The section as HTML.
    fn html(&self) -> String {
        match &self.heading {
            Some(h) => format!("<h2 id=\"{}\">{}</h2>\n{}", self.id, esc(h), self.body),
            None => self.body.clone(),
        }
    }
}

/// The details below the charts, in order: acceptance, self-checks, firmware vs measured,
/// keys, warnings, environment, run, skipped; a section with nothing to show is one line
/// saying why ([`Section::left_out`]).
fn detail_sections(
    f: &ParamsFile,
    source: &str,
    acc: Option<&Acceptance>,
    rows: &[keys::KeyRow],
) -> Vec<Section> {
    let mut v: Vec<Section> = vec![];
    if let Some(a) = acc {
        v.push(Section::full(
            "acceptance",
            "Acceptance".into(),
            acceptance(a),
        ));
    }
    v.push(if f.dram_check.is_empty() && f.prefetch_check.is_empty() {
        Section::left_out(
            "checks",
            "Self-checks",
            "none in this file (no DRAM key was measured, or the file predates them)",
        )
    } else {
        Section::full(
            "checks",
            format!(
                "Self-checks ({} DRAM, {} prefetch)",
                f.dram_check.len(),
                f.prefetch_check.len()
            ),
            checks(f),
        )
    });
    const FIRMWARE: &str = "Firmware (HMAT/CDAT) vs measured";
    v.push(match firmware::left_out(f) {
        Some(why) => Section::left_out("firmware", FIRMWARE, why),
        None => Section::full("firmware", FIRMWARE.into(), firmware::section(f)),
    });
    v.push(Section::full(
        "keys",
        format!("Keys ({})", rows.len()),
        format!(
            "<p>Each key as the models read it (a <code>key@target</code> that is the same \
             figure as <code>key</code> is listed with it); the meaning is the key registry's, \
             the method and the measurement ids are the file's.</p>\n{}",
            keys::keys_table(rows)
        ),
    ));
    v.push(if f.warnings.is_empty() {
        Section::left_out(
            "warnings",
            "Warnings",
            "none: nothing in the environment is known to distort these figures",
        )
    } else {
        Section::full(
            "warnings",
            format!("Warnings ({})", f.warnings.len()),
            warnings(f),
        )
    });
    v.push(Section::full(
        "environment",
        "Environment".into(),
        environment::environment(f),
    ));
    v.push(Section::full("run", "Run".into(), run_table(f, source)));
    v.push(if f.skipped.is_empty() {
        Section::left_out("skipped", "Skipped", "nothing was skipped")
    } else {
        Section::full(
            "skipped",
            format!("Skipped ({})", f.skipped.len()),
            skipped(f),
        )
    });
    v
}

/// The whole page: the verdict (with a spec) and the headline first, then the charts,
/// then the details.
pub fn render(f: &ParamsFile, source: &str, charts: &[Chart], acc: Option<&Acceptance>) -> String {
    let title = title(f);
    let mut s = head(&title);
    if let Some(a) = acc {
        s.push_str(&headline::verdict(a));
    }
    let rows = keys::folded(f);
    let _ = write!(
        s,
        "<h2 id=\"headline\">Headline</h2>\n{}",
        headline::headline(f, &rows)
    );
    let details = detail_sections(f, source, acc, &rows);
    let mut nav: Vec<(&str, &str)> = vec![("headline", "Headline"), ("plots", "Charts")];
    if charts.iter().any(|c| c.family.starts_with("gpu")) {
        nav.push(("gpu", "GPU"));
    }
    let names: Vec<(&str, String)> = details
        .iter()
        .filter_map(|d| {
            let h = d.heading.as_deref()?;
            Some((d.id, h.split(" (").next().unwrap_or(h).to_string()))
        })
        .collect();
    nav.extend(names.iter().map(|(id, n)| (*id, n.as_str())));
    s.push_str(&links(&nav));
    s.push_str(&chart_sections(charts));
    s.push_str("<div class=\"details\">\n");
    for d in &details {
        s.push_str(&d.html());
    }
    s.push_str("</div>\n");
    s.push_str(&tail());
    s
}

#[cfg(test)]
mod tests;
