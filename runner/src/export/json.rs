//! params.json: pretty JSON ([`JsonExporter`]); written atomically by
//! [`crate::document::write`].

use super::Exporter;
use anyhow::Result;
use bench_core::params::ParamsFile;

/// Renders the params document as pretty-printed JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, file: &ParamsFile) -> Result<String> {
        let mut s = serde_json::to_string_pretty(file)?;
        s.push('\n');
        Ok(s)
    }
}
