//! `cxlchar model`: the seed papers' models evaluated from a params.json.
//!
//! Each model states its equation with paper and section, the keys it read, and refuses
//! when a key is missing, naming the key and the benchmark that produces it. What-if
//! overrides (`KEY=VALUE`, `KEY*FACTOR`) re-evaluate every model; the result is shown
//! beside the baseline (the file's own values) with the speedup.
//!
//! One file per seed paper's models (`paper000` .. `paper004`); every key a model reads
//! is a registry key ([`bench_core::keys`]) whose entry lists that model (a test checks
//! it). `inputs` holds the values and the what-ifs, `eval` the evaluation context and
//! result types, `render` the table.

mod eval;
mod inputs;
mod paper000;
mod paper001;
mod paper003;
mod paper004;
mod render;
pub mod workload;

pub use eval::{evaluate, Model};
pub use inputs::{parse_what_if, Baseline, Inputs, WhatIf};
pub use render::render_table;
pub use workload::Workload;

/// All models, in output order.
pub fn models() -> Vec<Model> {
    [
        paper000::models(),
        paper001::models(),
        paper003::models(),
        paper004::models(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests;
