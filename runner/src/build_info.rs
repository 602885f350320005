//! Which build this is: the crate's version and the commit it was built from
//! (`build.rs`), as `--version` prints them and every params and fleet file records them.

/// The commit the binary was built from (12 hex digits, `-dirty` when tracked files
/// differed from it), a packager's value, or `unknown`.
pub const COMMIT: &str = env!("CXLCHAR_COMMIT");

/// `--version`'s text: `0.1.0 (commit 1234567890ab)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CXLCHAR_COMMIT"),
    ")"
);

/// The commit for a file's `tool.commit`: `None` when the build did not know it.
pub fn commit() -> Option<String> {
    (COMMIT != "unknown").then(|| COMMIT.to_string())
}
