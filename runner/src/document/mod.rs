//! The files cxlchar writes and reads, below every command that does: the params and
//! fleet documents ([`fleet`]; params.json's types are bench-core's `params`), their
//! loading and validation ([`load`]), and atomic writing with the output checks
//! ([`mod@write`]). Commands, consumers, exporters, plot and report sit above it.

pub mod fleet;
pub mod load;
pub mod shape;
pub mod write;

/// Where `doc` breaks params.json's JSON schema (`results/schema/params.schema.json`), one
/// message per error with its place; empty when it is valid.
#[cfg(test)]
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../results/schema/params.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}
