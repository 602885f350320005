//! Exporters: one module per output format, all behind [`Exporter`].

pub mod command;
pub mod csv;
pub mod json;
pub mod markdown;
pub mod mess;
pub mod openmetrics;
pub mod outdir;
pub mod summary;
pub mod table;

#[cfg(test)]
mod readme;
#[cfg(test)]
mod tests;

use bench_core::params::ParamsFile;

/// Renders a params document in one format.
pub trait Exporter {
    /// The document as text.
    fn render(&self, file: &ParamsFile) -> anyhow::Result<String>;
}

/// What a measuring command prints for `--format` (and `--verbose`): the table format is
/// the summary ([`summary::SummaryExporter`], fitted to `width`, the terminal's) unless
/// `verbose` asks for the full tables; both say where every figure is: `out`, the file
/// `--out` writes, or that nothing is written.
pub fn for_run(
    f: crate::cli::Format,
    verbose: bool,
    width: Option<usize>,
    out: Option<&std::path::Path>,
) -> Box<dyn Exporter> {
    let out = out.map(|p| p.to_path_buf());
    match f {
        crate::cli::Format::Table if !verbose => Box::new(summary::SummaryExporter { width, out }),
        crate::cli::Format::Table => Box::new(table::TableExporter { out }),
        _ => for_format(f),
    }
}

/// The exporter for a `--format` value.
pub fn for_format(f: crate::cli::Format) -> Box<dyn Exporter> {
    match f {
        crate::cli::Format::Json => Box::new(json::JsonExporter),
        crate::cli::Format::Table => Box::new(table::TableExporter::default()),
        crate::cli::Format::Csv => Box::new(csv::CsvExporter),
        crate::cli::Format::Markdown => Box::new(markdown::MarkdownExporter),
    }
}
