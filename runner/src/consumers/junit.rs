//! JUnit XML for `cxlchar check --junit`: one test case per check. A failed bound is a
//! `<failure>`; a non-optional check that was not measured is an `<error>` (so no CI
//! counts it as passed); an optional one is `<skipped>`.

use super::check::{CheckResult, Outcome};
pub use crate::output::markup::escape;
use std::path::Path;

/// Refuses a `--junit` path before anything is read or written: it must be a regular file
/// or a new path ([`crate::document::write::check_output`]) and none of `inputs` (the params
/// file, the spec), even through another name.
pub fn check_output(junit: &Path, inputs: &[&Path]) -> anyhow::Result<()> {
    crate::document::write::check_output(junit).map_err(|e| e.context("--junit"))?;
    crate::document::write::check_not_input(junit, inputs).map_err(|e| e.context("--junit"))
}

/// The JUnit document of one params.json: one test suite per spec (`(spec name, its
/// results)`).
pub fn render(params: &str, specs: &[(&str, &[CheckResult])]) -> String {
    let parts: Vec<Suite> = specs
        .iter()
        .map(|(name, results)| Suite {
            name,
            classname: name,
            params,
            results,
        })
        .collect();
    document(&parts)
}

/// The JUnit document of a fleet file checked against one spec or several (`(spec
/// name, its suites)`): one test suite per spec and host (and per pair whose keys a
/// bound names), named `<spec> <host>`; test cases `cxlchar.check.<spec>.<host>`.
pub fn render_fleet(fleet: &str, specs: &[(&str, &[super::check::FleetSuite])]) -> String {
    let names: Vec<(String, String, String, &[CheckResult])> = specs
        .iter()
        .flat_map(|(spec, suites)| {
            suites.iter().map(move |s| {
                (
                    format!("{spec} {}", s.name),
                    format!("{spec}.{}", s.name.replace(' ', "_")),
                    format!("{fleet}: {}", s.source),
                    s.results.as_slice(),
                )
            })
        })
        .collect();
    let parts: Vec<Suite> = names
        .iter()
        .map(|(n, c, p, results)| Suite {
            name: n,
            classname: c,
            params: p,
            results,
        })
        .collect();
    document(&parts)
}

/// One `<testsuite>`.
struct Suite<'a> {
    name: &'a str,
    classname: &'a str,
    params: &'a str,
    results: &'a [CheckResult],
}

fn counts(results: &[CheckResult]) -> (usize, usize, usize) {
    let failures = results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .count();
    let errors = results
        .iter()
        .filter(|r| r.outcome == Outcome::NotMeasured && !r.optional)
        .count();
    let skipped = results
        .iter()
        .filter(|r| r.outcome == Outcome::NotMeasured && r.optional)
        .count();
    (failures, errors, skipped)
}

fn document(suites: &[Suite]) -> String {
    let (mut n, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
    for s in suites {
        let (f, e, k) = counts(s.results);
        n += s.results.len();
        failures += f;
        errors += e;
        skipped += k;
    }
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"cxlchar check\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n"
    ));
    for suite in suites {
        testsuite(&mut s, suite);
    }
    s.push_str("</testsuites>\n");
    s
}

fn testsuite(s: &mut String, suite: &Suite) {
    let results = suite.results;
    let (failures, errors, skipped) = counts(results);
    s.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n",
        escape(suite.name),
        results.len()
    ));
    s.push_str(&format!(
        "    <properties><property name=\"params\" value=\"{}\"/></properties>\n",
        escape(suite.params)
    ));
    for r in results {
        s.push_str(&format!(
            "    <testcase classname=\"cxlchar.check.{}\" name=\"{}\">",
            escape(suite.classname),
            escape(&r.name)
        ));
        let detail = format!(
            "measured={} limit={} margin={} (spec line {}){}",
            r.measured.map(|v| v.to_string()).unwrap_or("-".into()),
            r.limit.map(|v| v.to_string()).unwrap_or("-".into()),
            r.margin.map(|v| v.to_string()).unwrap_or("-".into()),
            r.line,
            if r.why.is_empty() {
                String::new()
            } else {
                format!("; rationale: {}", r.why)
            }
        );
        match r.outcome {
            Outcome::Pass => {
                s.push_str(&format!("<system-out>{}</system-out>", escape(&detail)));
            }
            Outcome::Fail => s.push_str(&format!(
                "<failure message=\"{}\" type=\"bound\">{}</failure>",
                escape(&r.reason),
                escape(&detail)
            )),
            Outcome::NotMeasured if r.optional => s.push_str(&format!(
                "<skipped message=\"not measured (optional): {}\"/>",
                escape(&r.reason)
            )),
            Outcome::NotMeasured => s.push_str(&format!(
                "<error message=\"not measured: {}\" type=\"not-measured\">{}</error>",
                escape(&r.reason),
                escape(&detail)
            )),
        }
        s.push_str("</testcase>\n");
    }
    s.push_str("  </testsuite>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
        assert_eq!(escape("x\u{1}y"), "xy");
    }
}
