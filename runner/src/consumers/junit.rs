//! JUnit XML for `cxlchar check --junit`: one test case per check. A failed bound is a
//! `<failure>`; a non-optional check that was not measured is an `<error>` (so no CI
//! counts it as passed); an optional one is `<skipped>`.

use super::check::{CheckResult, Outcome};
pub use crate::output::markup::escape;
use std::path::Path;

/// Refuses a `--junit` path before anything is read or written: it must be a regular file
/// or a new path ([`crate::export::json::check_output`]) and none of `inputs` (the params
/// file, the spec), even through another name.
pub fn check_output(junit: &Path, inputs: &[&Path]) -> anyhow::Result<()> {
    crate::export::json::check_output(junit).map_err(|e| e.context("--junit"))?;
    crate::export::json::check_not_input(junit, inputs).map_err(|e| e.context("--junit"))
}

/// The JUnit document.
pub fn render(suite: &str, params: &str, results: &[CheckResult]) -> String {
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
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"cxlchar check\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n",
        n = results.len()
    ));
    s.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n",
        escape(suite),
        results.len()
    ));
    s.push_str(&format!(
        "    <properties><property name=\"params\" value=\"{}\"/></properties>\n",
        escape(params)
    ));
    for r in results {
        s.push_str(&format!(
            "    <testcase classname=\"cxlchar.check.{}\" name=\"{}\">",
            escape(suite),
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
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
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
