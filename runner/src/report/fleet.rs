//! The report page of a fleet file: the job, the hosts, each key's distribution across
//! hosts with the outliers of [`crate::fleet::outliers`], the pair heatmaps inline, the
//! pairs not measured and, with `--spec`, the verdict per host and pair. Self-contained
//! like the params.json page (same head, style, escaping and render check).

use super::html::{esc, table};
use super::{acceptance, head, links, plots, tail, warning_table, Acceptance};
use crate::consumers::check::{self, FleetSuite};
use crate::document::fleet::FleetFile;
use crate::exit::Status;
use crate::fleet::outliers;
use crate::fleet::summary::{self, outlier_text};
use crate::output::num;
use crate::plot::Chart;
use std::fmt::Write as _;

/// The acceptance part of a fleet page.
pub struct FleetAcceptance<'a> {
    /// Spec name (its path as given).
    pub spec: &'a str,
    /// One suite per host and pair.
    pub suites: &'a [FleetSuite],
}

/// The title line.
pub fn title(f: &FleetFile) -> String {
    format!(
        "cxlchar {} fleet report: {} host(s) under {} job {}, {}",
        f.cxlchar_version,
        f.hosts.len(),
        f.launcher.kind,
        f.launcher.job,
        f.started_at
    )
}

fn hosts(f: &FleetFile) -> String {
    let rows: Vec<Vec<String>> = f
        .hosts
        .iter()
        .map(|h| {
            let e = &h.params.environment;
            let ranks: Vec<String> = h.ranks.iter().map(|r| r.to_string()).collect();
            let warnings: Vec<String> = h
                .params
                .warnings
                .iter()
                .map(|w| format!("<code>{}</code>: {}", esc(&w.code), esc(&w.message)))
                .collect();
            vec![
                format!("<b>{}</b>", esc(&h.host)),
                esc(&ranks.join(", ")),
                format!("<span class=\"n\">{}</span>", h.measuring_rank),
                esc(&h.address),
                esc(&format!("{} ({} CPUs)", e.cpu.model, e.cpu.logical_cpus)),
                esc(&format!(
                    "{}, {}",
                    e.kernel,
                    e.hypervisor
                        .as_deref()
                        .map_or("bare metal".to_string(), |h| format!("{h} guest"))
                )),
                format!("<span class=\"n\">{}</span>", h.params.params.len()),
                format!("<span class=\"n\">{}</span>", h.params.skipped.len()),
                if warnings.is_empty() {
                    "-".into()
                } else {
                    warnings.join("<br>")
                },
            ]
        })
        .collect();
    table(
        "hosts",
        &[
            "host",
            "ranks",
            "measuring rank",
            "address",
            "CPU",
            "kernel, hypervisor",
            "keys",
            "skipped",
            "warnings",
        ],
        &rows,
    )
}

fn keys(f: &FleetFile) -> String {
    let d = summary::distributions(f);
    if d.is_empty() {
        return "<p class=\"note\">No key is measured on every host.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = d
        .iter()
        .map(|d| {
            let flagged = d.verdict.outliers().count() > 0;
            let out = esc(&outlier_text(&d.verdict));
            vec![
                format!("<code>{}</code>", esc(&d.key)),
                esc(&d.unit),
                format!("<span class=\"n\">{}</span>", d.verdict.n),
                format!("<span class=\"n\">{}</span>", esc(&num(Some(d.min)))),
                format!("<span class=\"n\">{}</span>", esc(&num(d.verdict.median))),
                format!("<span class=\"n\">{}</span>", esc(&num(Some(d.max)))),
                format!("<span class=\"n\">{}</span>", esc(&num(d.verdict.mad))),
                if flagged {
                    format!("<span class=\"fail\">{out}</span>")
                } else {
                    out
                },
            ]
        })
        .collect();
    table(
        "distribution",
        &[
            "key", "unit", "hosts", "min", "median", "max", "MAD", "outliers",
        ],
        &rows,
    )
}

fn pairs_skipped(f: &FleetFile) -> String {
    if f.pairs_skipped.is_empty() {
        return "<p class=\"note\">Every pair of every kind was measured.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = f
        .pairs_skipped
        .iter()
        .map(|p| {
            vec![
                esc(p.kind.name()),
                esc(&if p.hosts.is_empty() {
                    "(all)".to_string()
                } else {
                    p.hosts.join(", ")
                }),
                esc(&p.reason),
            ]
        })
        .collect();
    table("pairs-skipped", &["kind", "hosts", "reason"], &rows)
}

fn fleet_acceptance(a: &FleetAcceptance) -> String {
    let code = check::fleet_exit_code(a.suites);
    let rows: Vec<Vec<String>> = a
        .suites
        .iter()
        .map(|x| {
            let (class, label) = match x.exit_code {
                Status::Success => ("pass", "pass"),
                Status::Failed => ("fail", "FAIL"),
                _ => ("nm", "NOT MEASURED"),
            };
            vec![
                format!("<a href=\"#acc-{}\">{}</a>", esc(&x.name), esc(&x.name)),
                esc(x.kind),
                format!("<span class=\"{class}\">{label}</span>"),
                esc(&x.source),
            ]
        })
        .collect();
    let mut s = format!(
        "<p>Spec <code>{}</code> on every host (and on every pair whose keys a bound names): \
         {} of {} pass (<code>cxlchar check</code> would exit {code}).</p>\n{}",
        esc(a.spec),
        a.suites
            .iter()
            .filter(|x| x.exit_code == Status::Success)
            .count(),
        a.suites.len(),
        table("verdicts", &["suite", "kind", "verdict", "params"], &rows)
    );
    for x in a.suites {
        let _ = write!(
            s,
            "<h3 id=\"acc-{}\">{} {}</h3>\n{}",
            esc(&x.name),
            esc(x.kind),
            esc(&x.name),
            acceptance(&Acceptance {
                spec: a.spec,
                results: &x.results
            })
        );
    }
    s
}

/// The page's links: the sections it has (Acceptance only with a spec).
fn nav(with_acceptance: bool) -> Vec<(&'static str, &'static str)> {
    let mut nav = vec![("run", "Run"), ("hosts", "Hosts")];
    if with_acceptance {
        nav.push(("acceptance", "Acceptance"));
    }
    nav.extend([
        ("keys", "Keys across hosts"),
        ("pairs", "Pairs"),
        ("skipped", "Pairs not measured"),
    ]);
    nav
}

/// The Run table: the file, who wrote it, the command line and the launcher's job.
fn run_table(f: &FleetFile, source: &str) -> String {
    let vars: Vec<String> = f
        .launcher
        .variables
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    table(
        "run",
        &["item", "value"],
        &[
            vec!["file".into(), format!("<code>{}</code>", esc(source))],
            vec![
                "written by".into(),
                esc(&format!(
                    "cxlchar {} (fleet schema version {})",
                    f.cxlchar_version, f.fleet_schema_version
                )),
            ],
            vec![
                "command line".into(),
                format!(
                    "<code>{}</code>",
                    esc(&crate::output::shell::command(&f.command_line))
                ),
            ],
            vec![
                "launcher".into(),
                esc(&format!(
                    "{} job {}, {} rank(s); {}",
                    f.launcher.kind,
                    f.launcher.job,
                    f.launcher.ranks,
                    if vars.is_empty() {
                        "no variables recorded".to_string()
                    } else {
                        vars.join(" ")
                    }
                )),
            ],
            vec![
                "started / finished".into(),
                esc(&format!("{} / {}", f.started_at, f.finished_at)),
            ],
            vec![
                "report by".into(),
                esc(&format!("cxlchar {}", env!("CARGO_PKG_VERSION"))),
            ],
        ],
    )
}

/// The fleet's own warnings (not a host's) with their remediation.
fn warnings(f: &FleetFile) -> String {
    warning_table(&f.warnings)
}

/// The whole fleet page.
pub fn render(
    f: &FleetFile,
    source: &str,
    charts: &[Chart],
    acc: Option<&FleetAcceptance>,
) -> String {
    let title = title(f);
    let mut s = head(&title);
    s.push_str(&links(&nav(acc.is_some())));
    let _ = write!(s, "<h2 id=\"run\">Run</h2>\n{}", run_table(f, source));
    if !f.warnings.is_empty() {
        let _ = write!(s, "<h3>Fleet warnings</h3>\n{}", warnings(f));
    }
    let _ = write!(
        s,
        "<h2 id=\"hosts\">Hosts ({})</h2>\n<p>One measuring rank per host (the lowest on it); \
         each host's full params.json is in the fleet file (<code>hosts[].params</code>), \
         where <code>cxlchar report</code> on it shows its environment and charts.</p>\n{}",
        f.hosts.len(),
        hosts(f)
    );
    if let Some(a) = acc {
        let _ = write!(
            s,
            "<h2 id=\"acceptance\">Acceptance</h2>\n{}",
            fleet_acceptance(a)
        );
    }
    let _ = write!(
        s,
        "<h2 id=\"keys\">Keys across hosts</h2>\n<p>Each key every host has: its distribution \
         across hosts and the outlier hosts. Rule: {}. Within 1 % of the median is never an \
         outlier; the side (worse, better) follows the key's unit: ns higher is worse, GB/s \
         and Mmsg/s lower is worse.</p>\n{}",
        esc(outliers::RULE),
        keys(f)
    );
    let drawn = charts.iter().filter(|c| c.svg.is_some()).count();
    let _ = write!(
        s,
        "<h2 id=\"pairs\">Pairs ({} measured, {drawn} matrices drawn)</h2>\n{}",
        f.pairs.len(),
        plots(charts)
    );
    let _ = write!(
        s,
        "<h2 id=\"skipped\">Pairs not measured ({})</h2>\n{}",
        f.pairs_skipped.len(),
        pairs_skipped(f)
    );
    s.push_str(&tail());
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::summary::tests::fleet;

    #[test]
    fn the_page_names_the_outlier_and_draws_the_measured_matrices() {
        let mut f = fleet(&[100.0, 101.0, 99.0, 170.0]);
        f.hosts[3].host = "<sick>".into();
        let charts = crate::plot::pairs::charts(&f).unwrap();
        let page = render(&f, "fleet.json", &charts, None);
        assert!(page.contains("&lt;sick&gt; (z = +"), "the outlier, escaped");
        assert!(!page.contains("<sick>"));
        // Verbs pairs measured: two SVGs; pool: none, with the fleet's reason.
        assert_eq!(page.matches("<svg").count(), 2);
        assert!(page.contains("no host maps a CXL pool"));
        assert!(page.contains(&esc(outliers::RULE)));
    }
}
