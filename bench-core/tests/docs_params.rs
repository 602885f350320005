//! `docs/params.md` holds the key reference rendered from the key registry
//! (`bench_core::keys::markdown`). This test fails when they differ; with
//! `CXLCHAR_BLESS=1` it rewrites the generated section instead:
//!
//! ```text
//! CXLCHAR_BLESS=1 cargo test -p bench-core --test docs_params
//! ```

use std::path::Path;

#[test]
fn docs_params_key_reference_is_the_registrys() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/params.md");
    let text = std::fs::read_to_string(&path).expect("docs/params.md");
    let want = bench_core::keys::splice_markdown(&text).unwrap_or_else(|| {
        panic!(
            "docs/params.md lacks the markers {} and {}",
            bench_core::keys::DOC_BEGIN,
            bench_core::keys::DOC_END
        )
    });
    if want == text {
        return;
    }
    if std::env::var_os("CXLCHAR_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, want).expect("writing docs/params.md");
        return;
    }
    let first = text
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .map_or(text.lines().count().min(want.lines().count()), |i| i);
    panic!(
        "docs/params.md differs from the key registry (bench-core/src/keys/table.rs) from \
         line {}: run `CXLCHAR_BLESS=1 cargo test -p bench-core --test docs_params` to \
         regenerate it",
        first + 1
    );
}
