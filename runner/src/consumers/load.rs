//! Reading a params.json for the consumers (`model`, `check`, `diff`) and `plot`: one
//! loader into the typed [`ParamsFile`], with one clear error per way it can be wrong:
//! unreadable, not JSON, truncated, not a params.json, another schema version, or a
//! layout that does not match this version. Fields added to schema version 1 after its
//! first files (`prefetch_check`, `dram_sizing`, counters) have serde defaults, so those
//! files still load.

use anyhow::{anyhow, bail, Context, Result};
use bench_core::params::{ParamsFile, SCHEMA_VERSION};
use std::path::Path;

/// Reads and validates a params.json.
pub fn load(path: &Path) -> Result<ParamsFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Validates the text of a params.json; `name` is used in the error messages.
pub fn parse(text: &str, name: &str) -> Result<ParamsFile> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            anyhow!(
                "{name} is truncated (the JSON ends early, at line {} column {}): was the run \
                 interrupted? cxlchar writes params.json atomically, so re-run it or restore a \
                 complete copy",
                e.line(),
                e.column()
            )
        } else {
            anyhow!("{name} is not JSON: {e}")
        }
    })?;
    let Some(obj) = value.as_object() else {
        bail!(
            "{name} is JSON but not a params.json: the top level is not an object, so it has \
             no schema_version"
        );
    };
    let version = match obj.get("schema_version") {
        None => bail!("{name} has no schema_version: it is not a params.json written by cxlchar"),
        Some(v) => v.as_u64().ok_or_else(|| {
            anyhow!("{name}: schema_version is {v}, expected a non-negative integer")
        })?,
    };
    let ours = u64::from(SCHEMA_VERSION);
    if version > ours {
        bail!(
            "{name} has schema_version {version}, newer than this cxlchar understands \
             ({ours}): use the cxlchar that wrote it, or a newer one"
        );
    }
    if version < ours {
        bail!(
            "{name} has schema_version {version}, older than this cxlchar reads ({ours}): \
             re-run the measurement with this cxlchar"
        );
    }
    serde_json::from_value::<ParamsFile>(value).map_err(|e| {
        anyhow!("{name} says schema_version {version} but does not match its layout: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_problem() {
        let e = parse("hello", "x.json").unwrap_err().to_string();
        assert!(e.contains("not JSON"), "{e}");
        let e = parse("{\"schema_version\": 1, \"tool\"", "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = parse("[1]", "x.json").unwrap_err().to_string();
        assert!(e.contains("not a params.json"), "{e}");
        let e = parse("{}", "x.json").unwrap_err().to_string();
        assert!(e.contains("no schema_version"), "{e}");
        let e = parse("{\"schema_version\": 99}", "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("newer") && e.contains("99"), "{e}");
        let e = parse("{\"schema_version\": 0}", "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("older"), "{e}");
        let e = parse("{\"schema_version\": 1}", "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not match its layout"), "{e}");
    }
}
