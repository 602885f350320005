//! Reading a params.json for the consumers (`model`, `check`, `diff`) and `plot`: one
//! loader into the typed [`ParamsFile`], with one clear error per way it can be wrong:
//! unreadable, not JSON, truncated, not a params.json, another schema version, or a
//! layout that does not match this version.
//!
//! A fleet file (`format: "cxlchar-fleet"`, [`crate::document::fleet`]) is read by
//! [`load_any`] (`check`, `diff`, `report`, `plot` take either): the same input rules, its
//! own `fleet_schema_version` (another one is refused, naming both), and every host's and
//! pair's params held to the params.json rules above. [`load`] refuses a fleet file with
//! the way to get one host's params out of it (`model`, `export`). Fields added to schema version 1 after its
//! first files (`prefetch_check`, `dram_sizing`, counters) have serde defaults, so those
//! files still load.
//!
//! Every input file of a consumer (params.json, a check spec) is read with [`read_input`]:
//! a regular file (a FIFO, a device such as `/dev/zero` or a directory is refused before it
//! is read, so nothing blocks or reads forever) of at most [`MAX_INPUT_BYTES`], read with a
//! bound of one byte more; and only when the memory to hold it parsed
//! ([`PARSED_BYTES_PER_BYTE`] times its size) can be had now, so that a memory limit
//! (`ulimit -v`) is an error naming the need, not an abort mid-parse. A key given twice
//! in one JSON object is an error, not "the last one wins".

use crate::document::fleet::{FleetFile, FLEET_FORMAT, FLEET_SCHEMA_VERSION};
use anyhow::{anyhow, bail, Context, Result};
use bench_core::params::{ParamsFile, SCHEMA_VERSION};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Largest input file a consumer reads: 256 MiB (a full `all` run's params.json is a few
/// MiB).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Memory a consumer needs to hold an input, per byte of it: the text, its JSON tree and
/// the typed document take about 7 bytes per byte of a large params.json; 8 leaves a
/// margin.
pub const PARSED_BYTES_PER_BYTE: u64 = 8;

/// Whether `bytes` of memory can be had now: reserved (not touched) and given back. A
/// process under a memory limit (`ulimit -v`, no overcommit) is refused here instead of
/// aborting later in an allocation it cannot fail.
fn can_hold(bytes: u64) -> bool {
    let mut probe: Vec<u8> = Vec::new();
    usize::try_from(bytes).is_ok_and(|n| probe.try_reserve_exact(n).is_ok())
}

/// Reads an input file as UTF-8 text: a regular file of at most [`MAX_INPUT_BYTES`],
/// whose parsed form fits the memory this process may take ([`PARSED_BYTES_PER_BYTE`]);
/// `what` names it in the errors ("spec ", "" for a params.json).
pub fn read_input(path: &Path, what: &str) -> Result<String> {
    let name = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("reading {what}{name}"))?;
    if !meta.is_file() {
        bail!(
            "reading {what}{name}: not a regular file (a directory, FIFO, socket or device): \
             give a params.json or spec file"
        );
    }
    // O_NONBLOCK: should the path have become a FIFO since, opening it does not wait for
    // a writer; reads of a regular file ignore the flag.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("reading {what}{name}"))?;
    let meta = f
        .metadata()
        .with_context(|| format!("reading {what}{name}"))?;
    if !meta.is_file() {
        bail!("reading {what}{name}: not a regular file");
    }
    let too_large = || {
        anyhow!(
            "{what}{name} is larger than {} MiB, the most a consumer reads: it is not a \
             params.json or spec written for cxlchar",
            MAX_INPUT_BYTES >> 20
        )
    };
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_large());
    }
    let need = meta.len().saturating_mul(PARSED_BYTES_PER_BYTE);
    let mut bytes = Vec::new();
    if !can_hold(need) || bytes.try_reserve_exact(meta.len() as usize + 1).is_err() {
        bail!(
            "{what}{name} is {}: reading it takes about {} of memory, more than this process \
             may allocate now (a memory limit such as ulimit -v, or the machine's free \
             memory): raise the limit, or read it where memory allows",
            bench_core::units::human_bytes(meta.len()),
            bench_core::units::human_bytes(need)
        );
    }
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {what}{name}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{what}{name} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Reads and validates a params.json (a fleet file is refused: [`load_any`] reads both).
pub fn load(path: &Path) -> Result<ParamsFile> {
    let text = read_input(path, "")?;
    parse(&text, &path.display().to_string())
}

/// What a consumer was given: one host's params.json or a fleet file.
#[derive(Debug, Clone)]
pub enum Input {
    /// A params.json (boxed, as the fleet file: both are large).
    Params(Box<ParamsFile>),
    /// A fleet file.
    Fleet(Box<FleetFile>),
}

/// Reads and validates a params.json or a fleet file (told apart by `format`).
pub fn load_any(path: &Path) -> Result<Input> {
    let text = read_input(path, "")?;
    parse_any(&text, &path.display().to_string())
}

/// Validates the text of a params.json or a fleet file; `name` is used in the errors.
pub fn parse_any(text: &str, name: &str) -> Result<Input> {
    let value = parse_json(text, name)?;
    match value.as_object().and_then(|o| o.get("format")) {
        Some(f) if f.as_str() == Some(FLEET_FORMAT) => {
            fleet_from_value(value, name).map(|f| Input::Fleet(Box::new(f)))
        }
        Some(f) if value.get("schema_version").is_none() => bail!(
            "{name} has format {f}, which cxlchar does not read (a fleet file says \
             \"{FLEET_FORMAT}\"; a params.json has no format and a schema_version)"
        ),
        _ => from_value(value, name).map(|p| Input::Params(Box::new(p))),
    }
}

fn fleet_from_value(value: serde_json::Value, name: &str) -> Result<FleetFile> {
    let version = match value.get("fleet_schema_version") {
        None => bail!(
            "{name} says format \"{FLEET_FORMAT}\" but has no fleet_schema_version: it was \
             not written by cxlchar"
        ),
        Some(v) => v.as_u64().ok_or_else(|| {
            anyhow!("{name}: fleet_schema_version is {v}, expected a non-negative integer")
        })?,
    };
    let ours = u64::from(FLEET_SCHEMA_VERSION);
    if version != ours {
        bail!(
            "{name} has fleet_schema_version {version}, this cxlchar reads fleet schema \
             version {ours}: {}",
            if version > ours {
                "use the cxlchar that wrote it, or a newer one"
            } else {
                "re-run the fleet job with this cxlchar"
            }
        );
    }
    // Every embedded params.json passes the params.json rules first (the error names the
    // host or pair), so the layout error below is about the fleet's own fields.
    for (list, what) in [("hosts", "host"), ("pairs", "pair")] {
        let Some(items) = value.get(list).and_then(|v| v.as_array()) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let Some(obj) = item.as_object() else {
                continue;
            };
            let label = match what {
                "host" => format!(
                    "host {}",
                    obj.get("host").and_then(|h| h.as_str()).unwrap_or("?")
                ),
                _ => format!(
                    "pair {} ({} -> {})",
                    obj.get("kind").and_then(|h| h.as_str()).unwrap_or("?"),
                    obj.get("client").and_then(|h| h.as_str()).unwrap_or("?"),
                    obj.get("server").and_then(|h| h.as_str()).unwrap_or("?")
                ),
            };
            let Some(p) = obj.get("params") else {
                bail!("{name}: {list}[{i}] ({label}) has no params");
            };
            from_value(
                p.clone(),
                &format!("{name}: {list}[{i}] ({label})'s params"),
            )?;
        }
    }
    let fleet: FleetFile = serde_json::from_value(value).map_err(|e| {
        anyhow!("{name} says fleet_schema_version {version} but does not match its layout: {e}")
    })?;
    if fleet.hosts.is_empty() {
        bail!("{name} is a fleet file without hosts: the job gathered nothing");
    }
    Ok(fleet)
}

/// A JSON document walked only to find a key given twice in one object; the error names
/// the key.
struct NoDuplicateKeys;

impl<'de> DeserializeSeed<'de> for NoDuplicateKeys {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicateKeys {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoDuplicateKeys)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key \"{k}\" is given twice in one object"
                )));
            }
            map.next_value_seed(NoDuplicateKeys)?;
        }
        Ok(())
    }
}

/// Validates the text of a params.json; `name` is used in the error messages.
pub fn parse(text: &str, name: &str) -> Result<ParamsFile> {
    let value = parse_json(text, name)?;
    if value.get("format").and_then(|f| f.as_str()) == Some(FLEET_FORMAT) {
        bail!(
            "{name} is a fleet file (format \"{FLEET_FORMAT}\": every host of a launcher job): \
             this command reads one host's params.json; take one out with e.g. \
             `jq '.hosts[] | select(.host == \"NAME\") | .params' {name}`"
        );
    }
    from_value(value, name)
}

/// The JSON of an input: not truncated, JSON, no key twice in one object.
fn parse_json(text: &str, name: &str) -> Result<serde_json::Value> {
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
    let mut de = serde_json::Deserializer::from_str(text);
    NoDuplicateKeys
        .deserialize(&mut de)
        .map_err(|e| anyhow!("{name} is not a valid params.json or fleet file: {e}"))?;
    Ok(value)
}

/// A params.json from its JSON: the schema version, then the layout.
fn from_value(value: serde_json::Value, name: &str) -> Result<ParamsFile> {
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
        let e = parse(
            "{\"schema_version\": 1, \"a\": {\"x\": 1, \"x\": 2}}",
            "x.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"x\" is given twice"), "{e}");
        let deep = "[".repeat(100_000);
        let e = parse(&deep, "x.json").unwrap_err().to_string();
        assert!(e.contains("not JSON"), "{e}");
    }

    #[test]
    fn only_bounded_regular_files_are_read() {
        let e = read_input(Path::new("/dev/zero"), "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_input(dir.path(), "spec ").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: c is a valid NUL-terminated path; mkfifo only creates a node there.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&fifo, "").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read_input(&big, "").unwrap_err().to_string();
        assert!(e.contains("larger than 256 MiB"), "{e}");
        let bin = dir.path().join("bin.json");
        std::fs::write(&bin, b"{\xff}").unwrap();
        let e = read_input(&bin, "").unwrap_err().to_string();
        assert!(e.contains("not UTF-8"), "{e}");
        std::fs::write(&bin, b"{}").unwrap();
        assert_eq!(read_input(&bin, "").unwrap(), "{}");
    }
}
