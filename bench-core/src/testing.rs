//! Support for tests that need something a machine may lack (software counters, a cache
//! flush instruction, free huge pages, a GPU).
//!
//! Such a test never passes silently: [`unavailable`] prints a `SKIPPED` line that names
//! what is missing, and fails the test when the environment variable `CXLCHAR_REQUIRE`
//! lists it (`CXLCHAR_REQUIRE=counters,gpu`, or `all`), so that a machine that must have
//! it (the lab, the GPU script, a bare-metal run) turns the skip into a failure.

/// The environment variable that turns a skip into a failure.
pub const REQUIRE_VAR: &str = "CXLCHAR_REQUIRE";

/// Whether `CXLCHAR_REQUIRE` (a comma-separated list, or `all`) demands `what`.
pub fn required(what: &str) -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| demands(&v, what))
}

/// Whether the list `spec` (as in `CXLCHAR_REQUIRE`) demands `what`.
pub fn demands(spec: &str, what: &str) -> bool {
    spec.split(',')
        .map(str::trim)
        .any(|w| w == what || w == "all")
}

/// Reports that `what` is not available here, with the reason, so that the test calling
/// it can return: prints a visible `SKIPPED` line, and panics (fails the test) when
/// `CXLCHAR_REQUIRE` demands `what`.
pub fn unavailable(what: &str, reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_string();
    if required(what) {
        panic!("{test}: {what} is required ({REQUIRE_VAR}) but unavailable: {reason}");
    }
    eprintln!(
        "SKIPPED {test}: {what} unavailable here: {reason} (set {REQUIRE_VAR}={what} to make this a failure)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_or_all_demands() {
        assert!(demands("counters", "counters"));
        assert!(demands("gpu, counters", "counters"));
        assert!(demands("all", "gpu"));
        assert!(!demands("gpu", "counters"));
        assert!(!demands("", "counters"));
        assert!(!demands("counters2", "counters"));
    }
}
