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
use std::io::Write;

fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .context("writing to stdout")?;
    out.flush().context("writing to stdout")
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
        Format::Table => print(&printable_lines(&table())),
        Format::Json => {
            print(&(serde_json::to_string_pretty(doc)? + "\n"))?;
            for w in warnings {
                eprintln!("warning: {}", printable_lines(w));
            }
            Ok(())
        }
    }
}

/// Runs a consumer: errors are printed and become [`Status::Invalid`].
pub fn run(f: impl FnOnce() -> Result<Status>) -> Status {
    match f() {
        Ok(c) => c,
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
        Format::Table => print(&printable_lines(&model::render_table(
            &results,
            &inputs.overrides,
        )))?,
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

/// `cxlchar check`.
pub fn check_cmd(a: &CheckArgs) -> Result<Status> {
    if let Some(j) = &a.junit {
        junit::check_output(j, &[&a.params, &a.spec])?;
    }
    let spec_name = a.spec.display().to_string();
    let text = load::read_input(&a.spec, "spec ")?;
    let spec = spec::parse(&text, &spec_name)?;
    let file = match load::load_any(&a.params)? {
        load::Input::Params(p) => p,
        load::Input::Fleet(f) => return check_fleet_cmd(a, &spec, &f),
    };
    let results = check::check(&spec, &file);
    let params_name = a.params.display().to_string();
    if let Some(j) = &a.junit {
        let xml = junit::render(&spec.name, &params_name, &results);
        crate::document::write::write_atomic(j, &xml)
            .with_context(|| format!("writing {}", j.display()))?;
    }
    let doc = serde_json::json!({
        "spec": spec_name,
        "params": params_name,
        "exit_code": check::exit_code(&results),
        "results": results,
    });
    emit(
        a.format,
        "check",
        || check::render_table(&spec, &params_name, &results),
        &doc,
        &[],
    )?;
    Ok(check::exit_code(&results))
}

/// `cxlchar check` on a fleet file.
fn check_fleet_cmd(
    a: &CheckArgs,
    spec: &spec::Spec,
    fleet: &crate::document::fleet::FleetFile,
) -> Result<Status> {
    let suites = check::check_fleet(spec, fleet);
    let fleet_name = a.params.display().to_string();
    let code = check::fleet_exit_code(&suites);
    if let Some(j) = &a.junit {
        let xml = junit::render_fleet(&spec.name, &fleet_name, &suites);
        crate::document::write::write_atomic(j, &xml)
            .with_context(|| format!("writing {}", j.display()))?;
    }
    let doc = serde_json::json!({
        "spec": a.spec.display().to_string(),
        "fleet": fleet_name,
        "exit_code": code,
        "suites": suites,
    });
    emit(
        a.format,
        "check",
        || check::render_fleet_table(spec, &fleet_name, &suites),
        &doc,
        &[],
    )?;
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
                fleet.display()
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
