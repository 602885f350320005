//! The evaluation context of a model and the result types.

use super::inputs::Inputs;
use crate::consumers::keys;
use anyhow::{bail, Result};
use serde::Serialize;

/// A key a model read.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Read {
    pub key: String,
    pub value: f64,
    /// Whether the value came from a --what-if.
    pub what_if: bool,
}

/// A key a model lacked.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Missing {
    pub key: String,
    /// The benchmark that produces it.
    pub benchmark: String,
    /// How to produce it.
    pub command: String,
    /// Alternatives or remarks.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// One derived figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Output {
    /// Name with unit suffix.
    pub name: String,
    /// Value (with what-ifs applied).
    pub value: f64,
    pub unit: String,
    /// What it means.
    pub note: String,
    /// The value without what-ifs, when what-ifs were given and the baseline evaluates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<f64>,
}

/// The result of one model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelResult {
    /// Stable id (`004-injection`).
    pub id: String,
    pub title: String,
    /// Paper and section.
    pub source: String,
    pub equation: String,
    /// `evaluated` or `refused`.
    pub status: String,
    /// Keys read.
    pub inputs: Vec<Read>,
    /// Figures derived (empty when refused).
    pub outputs: Vec<Output>,
    /// Keys missing (empty when evaluated).
    pub missing: Vec<Missing>,
    /// Remarks on how the model was applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ModelResult {
    /// Whether the model produced figures.
    pub fn evaluated(&self) -> bool {
        self.status == "evaluated"
    }

    /// The value of an output by name.
    pub fn output(&self, name: &str) -> Option<f64> {
        self.outputs
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.value)
    }
}

/// Evaluation context: records what was read and what was missing.
pub(super) struct Ctx<'a> {
    pub(super) inputs: &'a Inputs,
    /// Keys read, in order.
    pub(super) read: Vec<Read>,
    /// Keys lacked, in order.
    pub(super) missing: Vec<Missing>,
    /// Remarks on how the model was applied.
    pub(super) notes: Vec<String>,
    pub(super) outputs: Vec<Output>,
    /// Every key the model asked about (read, tested for presence or for a what-if):
    /// each must be a registry key that lists the model.
    pub(super) touched: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(inputs: &'a Inputs) -> Self {
        Ctx {
            inputs,
            read: vec![],
            missing: vec![],
            notes: vec![],
            outputs: vec![],
            touched: vec![],
        }
    }

    fn touch(&mut self, key: &str) {
        if !self.touched.iter().any(|k| k == key) {
            self.touched.push(key.into());
        }
    }

    /// Whether the key has a value.
    pub(super) fn has(&mut self, key: &str) -> bool {
        self.touch(key);
        self.inputs.get(key).is_some()
    }

    /// Whether a what-if gives the key.
    pub(super) fn overridden(&mut self, key: &str) -> bool {
        self.touch(key);
        self.inputs.overrides.contains_key(key)
    }

    /// The key's value, recorded as read; NaN and recorded as missing when absent.
    pub(super) fn need(&mut self, key: &str) -> f64 {
        self.need_note(key, "")
    }

    /// [`Ctx::need`], with a note on alternatives when the key is missing.
    pub(super) fn need_note(&mut self, key: &str, note: &str) -> f64 {
        self.touch(key);
        match self.inputs.get(key) {
            Some(v) => {
                if !self.read.iter().any(|r| r.key == key) {
                    let what_if = self.overridden(key);
                    self.read.push(Read {
                        key: key.into(),
                        value: v,
                        what_if,
                    });
                }
                v
            }
            None => {
                if !self.missing.iter().any(|m| m.key == key) {
                    let (b, c) = keys::producer(key);
                    self.missing.push(Missing {
                        key: key.into(),
                        benchmark: b.into(),
                        command: c.into(),
                        note: note.into(),
                    });
                }
                f64::NAN
            }
        }
    }

    /// Records an input that is not a params key as missing (`what`: the option that
    /// supplies it, `how`: what it holds).
    pub(super) fn need_input(&mut self, what: &str, how: &str) {
        if !self.missing.iter().any(|m| m.key == what) {
            self.missing.push(Missing {
                key: what.into(),
                benchmark: "user input".into(),
                command: how.into(),
                note: String::new(),
            });
        }
    }

    /// Records a derived figure.
    pub(super) fn out(&mut self, name: &str, value: f64, unit: &str, note: &str) {
        self.outputs.push(Output {
            name: name.into(),
            value,
            unit: unit.into(),
            note: note.into(),
            baseline: None,
        });
    }
}

/// A model: id, title, source, equation and the evaluation.
pub struct Model {
    /// Stable id (`004-injection`).
    pub id: &'static str,
    pub title: &'static str,
    /// Paper and section.
    pub source: &'static str,
    pub equation: &'static str,
    pub(super) eval: fn(&mut Ctx),
}

/// Runs one model; also returns every key it asked about.
pub(super) fn run_traced(m: &Model, inputs: &Inputs) -> (ModelResult, Vec<String>) {
    let mut c = Ctx::new(inputs);
    (m.eval)(&mut c);
    let touched = std::mem::take(&mut c.touched);
    (result(m, c), touched)
}

fn run_one(m: &Model, inputs: &Inputs) -> ModelResult {
    run_traced(m, inputs).0
}

fn result(m: &Model, c: Ctx) -> ModelResult {
    let ok = c.missing.is_empty() && !c.outputs.is_empty();
    ModelResult {
        id: m.id.into(),
        title: m.title.into(),
        source: m.source.into(),
        equation: m.equation.into(),
        status: if ok { "evaluated" } else { "refused" }.into(),
        inputs: c.read,
        outputs: if ok { c.outputs } else { vec![] },
        missing: c.missing,
        notes: c.notes,
    }
}

/// Refuses an evaluated model with an output that is not a finite number (inputs so large
/// or so small that the equation overflows, or a zero it divides by): the error names the
/// output and the keys it was computed from.
fn check_finite(r: &ModelResult) -> Result<()> {
    let Some(o) = r.outputs.iter().find(|o| !o.value.is_finite()) else {
        return Ok(());
    };
    let read: Vec<String> = r
        .inputs
        .iter()
        .map(|i| {
            format!(
                "{} = {}{}",
                i.key,
                super::inputs::shown(i.value),
                if i.what_if { " (what-if)" } else { "" }
            )
        })
        .collect();
    bail!(
        "model {}: {} is {}, not a finite number, computed from {}: a value is out of the \
         range the equation can take (too large, too small, or a zero it divides by); check \
         the --what-if values, or the file's",
        r.id,
        o.name,
        o.value,
        read.join(", ")
    )
}

/// Evaluates the models (all, or those named in `only`) on `inputs`; with overrides, each
/// output also carries its baseline value. An output that is not a finite number is an
/// error naming it ([`check_finite`]); a baseline that is not one is left out (the
/// what-ifs may replace the very value that broke it).
pub fn evaluate(inputs: &Inputs, only: &[String]) -> Result<Vec<ModelResult>> {
    let all = super::models();
    for id in only {
        if !all.iter().any(|m| m.id == id) {
            let ids: Vec<&str> = all.iter().map(|m| m.id).collect();
            bail!("unknown model `{id}`; models: {}", ids.join(", "));
        }
    }
    let base = inputs.baseline();
    all.iter()
        .filter(|m| only.is_empty() || only.iter().any(|o| o == m.id))
        .map(|m| {
            let mut r = run_one(m, inputs);
            check_finite(&r)?;
            if !inputs.overrides.is_empty() && r.evaluated() {
                let b = run_one(m, &base);
                for o in &mut r.outputs {
                    o.baseline = b.output(&o.name).filter(|v| v.is_finite());
                }
            }
            Ok(r)
        })
        .collect()
}
