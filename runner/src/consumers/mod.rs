//! Consumers of params.json: `cxlchar model` (the seed papers' models), `cxlchar check`
//! (acceptance bounds, JUnit) and `cxlchar diff` (two runs compared against their noise).
//! `check` and `diff` also read fleet files ([`crate::document::fleet`]): a verdict per host
//! (and pair), hosts and pairs compared by name; `model` refuses one, naming the way to
//! take one host's params out.
//!
//! Exit status of the three commands: 0 success; 1 a `check` bound failed; 2 invalid
//! input (unreadable or invalid params.json or spec, bad --what-if); 3 the file lacks what
//! was asked (`check`: a non-optional key not measured and nothing failed; `model`: no
//! model could be evaluated, or a model named with --model was refused).

pub mod check;
pub mod diff;
pub mod junit;
pub mod keys;
pub mod model;
pub mod spec;

#[cfg(test)]
mod proptests;

use crate::cli::{CheckArgs, DiffArgs, Format, ModelArgs};
use crate::document::load;
use crate::exit::Status;
use crate::output::text::printable_lines;
use anyhow::{Context, Result};

fn print(text: &str) -> Result<()> {
    crate::output::stdout::print(text)
}

/// A table for people fitted to the terminal stdout is (whole lines on a pipe).
fn fit_stdout(text: &str) -> String {
    crate::output::width::fit(text, crate::output::width::stdout_columns())
}

/// Prints a consumer's result: the text of `table`, or `doc` as JSON (then `warnings` go
/// to stderr as well; the table shows them inline); csv and markdown are refused.
fn emit<T: serde::Serialize>(
    format: Format,
    cmd: &str,
    table: impl FnOnce() -> String,
    doc: &T,
    warnings: &[String],
) -> Result<()> {
    match format {
        Format::Csv | Format::Markdown => anyhow::bail!(
            "--format csv|markdown export a run's measurements; {cmd} prints table or json"
        ),
        Format::Table => print(&fit_stdout(&printable_lines(&table()))),
        Format::Json => {
            print(&(serde_json::to_string_pretty(doc)? + "\n"))?;
            for w in warnings {
                eprintln!("warning: {}", printable_lines(w));
            }
            Ok(())
        }
    }
}

/// Runs a consumer: errors are printed and become [`Status::Invalid`]; a reader that went
/// away (a broken pipe on stdout) ends it quietly with status 0 ([`crate::output::stdout`]).
pub fn run(f: impl FnOnce() -> Result<Status>) -> Status {
    match f() {
        Ok(c) => c,
        Err(e) if crate::output::stdout::is_broken_pipe(&e) => Status::Success,
        Err(e) => {
            eprintln!("error: {}", printable_lines(&format!("{e:#}")));
            Status::Invalid
        }
    }
}

/// `cxlchar model`.
pub fn model_cmd(a: &ModelArgs) -> Result<Status> {
    let file = load::load(&a.params)?;
    let mut inputs = model::Inputs::from_file(&file);
    inputs.msg_baseline = a.baseline;
    if let Some(w) = &a.workload {
        inputs.workload = Some(std::sync::Arc::new(model::Workload::load(w)?));
    }
    inputs.apply(&a.what_if)?;
    let results = model::evaluate(&inputs, &a.model)?;
    match a.format {
        Format::Csv | Format::Markdown => anyhow::bail!(
            "--format csv|markdown export a run's measurements; model prints table or json"
        ),
        Format::Table => print(&fit_stdout(&printable_lines(&model::render_table(
            &results,
            &inputs.overrides,
        ))))?,
        Format::Json => {
            let doc = serde_json::json!({
                "params": a.params.display().to_string(),
                "what_if": inputs.overrides,
                "baseline": inputs.msg_baseline.name(),
                "workload": a.workload.as_ref().map(|w| w.display().to_string()),
                "models": results,
            });
            print(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
        }
    }
    let evaluated = results.iter().filter(|r| r.evaluated()).count();
    let code = if (!a.model.is_empty() && evaluated < results.len()) || evaluated == 0 {
        Status::NotMeasured
    } else {
        Status::Success
    };
    Ok(code)
}

/// The one params file of `check`'s positional arguments. A spec among them (a shell
/// that expanded `--spec *.toml` gives `--spec a.toml b.toml p.json`) is named as such,
/// with the fix: repeat --spec.
fn check_params(a: &CheckArgs) -> Result<&std::path::Path> {
    // A `.toml` name, or a small regular file (only a regular file is read: never a
    // device or a FIFO) that parses as a spec with bounds or required keys.
    let is_spec = |p: &std::path::Path| {
        let parses = || -> Option<bool> {
            let m = std::fs::metadata(p).ok()?;
            if !m.is_file() || m.len() > 1 << 20 {
                return None;
            }
            let text = std::fs::read_to_string(p).ok()?;
            let s = spec::parse(&text, &p.display().to_string()).ok()?;
            Some(!s.bounds.is_empty() || !s.required.is_empty())
        };
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
            || parses().unwrap_or(false)
    };
    if let Some(spec) = a.params.iter().find(|p| is_spec(p)) {
        anyhow::bail!(
            "{} is a spec, not a params file: repeat --spec for each spec (--spec a.toml \
             --spec b.toml PARAMS_JSON)",
            spec.display()
        );
    }
    match a.params.as_slice() {
        [one] => Ok(one),
        more => anyhow::bail!(
            "check reads one params file, {} given ({}): run check once per file",
            more.len(),
            more.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The worst of several exit statuses: a failure, else a key not measured, else success.
fn worst(codes: impl IntoIterator<Item = Status>) -> Status {
    codes
        .into_iter()
        .fold(Status::Success, |w, c| match (w, c) {
            (Status::Failed, _) | (_, Status::Failed) => Status::Failed,
            (Status::NotMeasured, _) | (_, Status::NotMeasured) => Status::NotMeasured,
            _ => w,
        })
}

/// `cxlchar check`: every `--spec` against the params (or fleet) file, each shown on
/// its own; the exit status is the worst.
pub fn check_cmd(a: &CheckArgs) -> Result<Status> {
    let params = check_params(a)?;
    if let Some(j) = &a.junit {
        let mut inputs: Vec<&std::path::Path> = a.spec.iter().map(|p| p.as_path()).collect();
        inputs.push(params);
        junit::check_output(j, &inputs)?;
    }
    let mut specs = Vec::new();
    for p in &a.spec {
        let text = load::read_input(p, "spec ")?;
        specs.push((
            p.display().to_string(),
            spec::parse(&text, &p.display().to_string())?,
        ));
    }
    let file = match load::load_any(params)? {
        load::Input::Params(p) => p,
        load::Input::Fleet(f) => return check_fleet_cmd(a, params, &specs, &f),
    };
    let params_name = params.display().to_string();
    let results: Vec<Vec<check::CheckResult>> =
        specs.iter().map(|(_, s)| check::check(s, &file)).collect();
    if let Some(j) = &a.junit {
        let suites: Vec<(&str, &[check::CheckResult])> = specs
            .iter()
            .zip(&results)
            .map(|((_, s), r)| (s.name.as_str(), r.as_slice()))
            .collect();
        let xml = junit::render(&params_name, &suites);
        crate::document::write::write_atomic(j, &xml)
            .with_context(|| format!("writing {}", j.display()))?;
    }
    let docs: Vec<serde_json::Value> = specs
        .iter()
        .zip(&results)
        .map(|((name, _), r)| {
            serde_json::json!({
                "spec": name,
                "params": params_name,
                "exit_code": check::exit_code(r),
                "results": r,
            })
        })
        .collect();
    let code = worst(results.iter().map(|r| check::exit_code(r)));
    // The verdict is the status, also when the reader of the table went away.
    verdict_kept(emit(
        a.format,
        "check",
        || {
            let tables: Vec<String> = specs
                .iter()
                .zip(&results)
                .map(|((_, s), r)| check::render_table(s, &params_name, r))
                .collect();
            tables.join("\n")
        },
        &one_or_all(docs, code),
        &[],
    ))?;
    Ok(code)
}

/// `check`'s printing: a closed stdout is no error (the verdict stays the status).
fn verdict_kept(r: Result<()>) -> Result<()> {
    match r {
        Err(e) if crate::output::stdout::is_broken_pipe(&e) => Ok(()),
        r => r,
    }
}

/// A check's JSON document: one spec's as it is, several as `{exit_code, checks: [...]}`.
fn one_or_all(mut docs: Vec<serde_json::Value>, code: Status) -> serde_json::Value {
    if docs.len() == 1 {
        docs.remove(0)
    } else {
        serde_json::json!({ "exit_code": code, "checks": docs })
    }
}

/// `cxlchar check` on a fleet file.
fn check_fleet_cmd(
    a: &CheckArgs,
    params: &std::path::Path,
    specs: &[(String, spec::Spec)],
    fleet: &crate::document::fleet::FleetFile,
) -> Result<Status> {
    let fleet_name = params.display().to_string();
    let suites: Vec<Vec<check::FleetSuite>> = specs
        .iter()
        .map(|(_, s)| check::check_fleet(s, fleet))
        .collect();
    if let Some(j) = &a.junit {
        let parts: Vec<(&str, &[check::FleetSuite])> = specs
            .iter()
            .zip(&suites)
            .map(|((_, s), x)| (s.name.as_str(), x.as_slice()))
            .collect();
        let xml = junit::render_fleet(&fleet_name, &parts);
        crate::document::write::write_atomic(j, &xml)
            .with_context(|| format!("writing {}", j.display()))?;
    }
    let docs: Vec<serde_json::Value> = specs
        .iter()
        .zip(&suites)
        .map(|((name, _), x)| {
            serde_json::json!({
                "spec": name,
                "fleet": fleet_name,
                "exit_code": check::fleet_exit_code(x),
                "suites": x,
            })
        })
        .collect();
    let code = worst(suites.iter().map(|x| check::fleet_exit_code(x)));
    // The verdict is the status, also when the reader of the table went away.
    verdict_kept(emit(
        a.format,
        "check",
        || {
            let tables: Vec<String> = specs
                .iter()
                .zip(&suites)
                .map(|((_, s), x)| check::render_fleet_table(s, &fleet_name, x))
                .collect();
            tables.join("\n")
        },
        &one_or_all(docs, code),
        &[],
    ))?;
    Ok(code)
}

/// `cxlchar diff`.
pub fn diff_cmd(a: &DiffArgs) -> Result<Status> {
    let (fa, fb) = match (load::load_any(&a.a)?, load::load_any(&a.b)?) {
        (load::Input::Params(x), load::Input::Params(y)) => (x, y),
        (load::Input::Fleet(x), load::Input::Fleet(y)) => return diff_fleet_cmd(a, &x, &y),
        (x, _) => {
            let (fleet, params) = if matches!(x, load::Input::Fleet(_)) {
                (&a.a, &a.b)
            } else {
                (&a.b, &a.a)
            };
            anyhow::bail!(
                "{} is a fleet file and {} one host's params.json: diff compares two \
                 params.json files or two fleet files (take one host's params out of the \
                 fleet with `jq '.hosts[] | select(.host == \"NAME\") | .params' {}`)",
                fleet.display(),
                params.display(),
                crate::output::shell::quote_path(fleet)
            )
        }
    };
    let r = diff::diff(&fa, &fb);
    let (na, nb) = (a.a.display().to_string(), a.b.display().to_string());
    emit(
        a.format,
        "diff",
        || diff::render_table(&r, &na, &nb, a.all),
        &r,
        &r.warnings,
    )?;
    Ok(Status::Success)
}

/// `cxlchar diff` on two fleet files.
fn diff_fleet_cmd(
    a: &DiffArgs,
    fa: &crate::document::fleet::FleetFile,
    fb: &crate::document::fleet::FleetFile,
) -> Result<Status> {
    let r = diff::diff_fleet(fa, fb);
    let (na, nb) = (a.a.display().to_string(), a.b.display().to_string());
    emit(
        a.format,
        "diff",
        || diff::render_fleet_table(&r, &na, &nb, a.all),
        &r,
        &r.warnings,
    )?;
    Ok(Status::Success)
}
