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
//! (`ulimit -v`) is an error naming the need, not an abort mid-parse. The text is then
//! walked once without being built ([`shape`]): what it holds bounds the memory its
//! parsed form takes (a list of a million zeros takes 16 times its text), asked for
//! before it is built, and a key given twice in one JSON object is an error, not "the
//! last one wins". Documents are typed straight from the text (no JSON tree in between),
//! and what a file declares that would size memory is bounded ([`MAX_NUMA_NODES`]).

use crate::document::fleet::{FleetFile, FLEET_FORMAT, FLEET_SCHEMA_VERSION};
use crate::document::shape;
use anyhow::{anyhow, bail, Context, Result};
use bench_core::params::{ParamsFile, SCHEMA_VERSION};
use serde::Deserialize;
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
        // Status 2 from every consumer (`plot` too, which maps no errors of its own).
        return Err(anyhow::Error::new(crate::exit::Exit {
            status: crate::exit::Status::Invalid,
            message: format!(
                "{what}{name} is {}: reading it takes about {} of memory, more than this \
                 process may allocate now (a memory limit such as ulimit -v, or the machine's \
                 free memory): raise the limit, or read it where memory allows",
                bench_core::units::human_bytes(meta.len()),
                bench_core::units::human_bytes(need)
            ),
        }));
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

/// The fields that tell a document apart before it is read as one: read from the text
/// with everything else skipped.
#[derive(Deserialize)]
struct Head {
    format: Option<serde_json::Value>,
    schema_version: Option<serde_json::Value>,
    fleet_schema_version: Option<serde_json::Value>,
}

/// What the text of an input is: checked ([`check_text`]), then its [`Head`] (`None`: the
/// top level is not an object).
fn head(text: &str, name: &str) -> Result<Option<Head>> {
    check_text(text, name)?;
    Ok(serde_json::from_str::<Head>(text).ok())
}

/// Validates the text of a params.json or a fleet file; `name` is used in the errors.
pub fn parse_any(text: &str, name: &str) -> Result<Input> {
    let h = head(text, name)?;
    match h.as_ref().and_then(|h| h.format.as_ref()) {
        Some(f) if f.as_str() == Some(FLEET_FORMAT) => {
            let h = h.as_ref().expect("a format is in a head");
            fleet_from_text(text, h, name).map(|f| Input::Fleet(Box::new(f)))
        }
        Some(f) if h.as_ref().is_some_and(|h| h.schema_version.is_none()) => bail!(
            "{name} has format {f}, which cxlchar does not read (a fleet file says \
             \"{FLEET_FORMAT}\"; a params.json has no format and a schema_version)"
        ),
        _ => params_from_text(text, h.as_ref(), name).map(|p| Input::Params(Box::new(p))),
    }
}

/// Validates the text of a params.json; `name` is used in the error messages.
pub fn parse(text: &str, name: &str) -> Result<ParamsFile> {
    let h = head(text, name)?;
    if h.as_ref()
        .and_then(|h| h.format.as_ref())
        .and_then(|f| f.as_str())
        == Some(FLEET_FORMAT)
    {
        bail!(
            "{name} is a fleet file (format \"{FLEET_FORMAT}\": every host of a launcher job): \
             this command reads one host's params.json; take one out with e.g. \
             `jq '.hosts[] | select(.host == \"NAME\") | .params' {}`",
            crate::output::shell::quote(name)
        );
    }
    params_from_text(text, h.as_ref(), name)
}

/// Refuses a text that is not JSON, is truncated or gives a key twice in one object, and
/// one whose parsed form would take more memory than can be had now: a file of dense
/// small values (a list of a million zeros) takes far more than the
/// [`PARSED_BYTES_PER_BYTE`] the reader allows for. The text is walked once without
/// building anything ([`shape::tally`]); the need is the text and its JSON tree
/// ([`shape::Tally::tree_bytes`], which bounds the typed document too), refused with
/// status 2 naming it, instead of an abort mid-parse.
fn check_text(text: &str, name: &str) -> Result<()> {
    let t = match shape::tally(text) {
        Ok(t) => t,
        Err(e) if e.is_syntax() || e.is_eof() => return Err(json_error(e, name)),
        Err(e) => bail!("{name} is not a valid params.json or fleet file: {e}"),
    };
    let need = (text.len() as u64).saturating_add(t.tree_bytes());
    if !can_hold(need) {
        return Err(anyhow::Error::new(crate::exit::Exit {
            status: crate::exit::Status::Invalid,
            message: format!(
                "{name} is {} and holds {} array elements and {} object members: reading it \
                 takes about {} of memory, more than this process may allocate now (a memory \
                 limit such as ulimit -v, or the machine's free memory): raise the limit, or \
                 read it where memory allows",
                bench_core::units::human_bytes(text.len() as u64),
                t.elements,
                t.members,
                bench_core::units::human_bytes(need)
            ),
        }));
    }
    Ok(())
}

/// The error of a text serde_json refused: truncated, or not JSON.
fn json_error(e: serde_json::Error, name: &str) -> anyhow::Error {
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
}

/// The schema version a params.json says (`None`: its top level is not an object),
/// refused unless it is this cxlchar's.
fn params_version(version: Option<Option<&serde_json::Value>>, name: &str) -> Result<u64> {
    let Some(v) = version else {
        bail!(
            "{name} is JSON but not a params.json: the top level is not an object, so it has \
             no schema_version"
        );
    };
    let version = match v {
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
    Ok(version)
}

/// A params.json from its text, typed without a JSON tree: the schema version, then the
/// layout, then what it declares.
fn params_from_text(text: &str, h: Option<&Head>, name: &str) -> Result<ParamsFile> {
    let version = params_version(h.map(|h| h.schema_version.as_ref()), name)?;
    let file = serde_json::from_str::<ParamsFile>(text).map_err(|e| {
        anyhow!("{name} says schema_version {version} but does not match its layout: {e}")
    })?;
    check_declared(&file, name)?;
    Ok(file)
}

/// A fleet file from its text: its own schema version, then the layout typed without a
/// JSON tree, then every host's and pair's params held to the params.json rules (the
/// error names the host or pair). Only a layout error builds the tree, to name the host
/// or pair whose params are wrong rather than the fleet's own fields.
fn fleet_from_text(text: &str, h: &Head, name: &str) -> Result<FleetFile> {
    let version = match &h.fleet_schema_version {
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
    let fleet = match serde_json::from_str::<FleetFile>(text) {
        Ok(f) => f,
        Err(e) => {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
                embedded_errors(&value, name)?;
            }
            bail!("{name} says fleet_schema_version {version} but does not match its layout: {e}");
        }
    };
    let hosts = fleet
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (format!("hosts[{i}] (host {})", h.host), &h.params));
    let pairs = fleet.pairs.iter().enumerate().map(|(i, p)| {
        (
            format!(
                "pairs[{i}] (pair {} ({} -> {}))",
                p.kind.name(),
                p.client,
                p.server
            ),
            &p.params,
        )
    });
    for (label, p) in hosts.chain(pairs) {
        let what = format!("{name}: {label}'s params");
        let v = serde_json::Value::from(p.schema_version);
        params_version(Some(Some(&v)), &what)?;
        check_declared(p, &what)?;
    }
    if fleet.hosts.is_empty() {
        bail!("{name} is a fleet file without hosts: the job gathered nothing");
    }
    Ok(fleet)
}

/// The first host or pair of a fleet file's tree whose params are not a params.json of
/// this version, as the error for it.
fn embedded_errors(value: &serde_json::Value, name: &str) -> Result<()> {
    for (list, what) in [("hosts", "host"), ("pairs", "pair")] {
        let Some(items) = value.get(list).and_then(|v| v.as_array()) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let Some(obj) = item.as_object() else {
                continue;
            };
            let text = |k: &str| obj.get(k).and_then(|h| h.as_str()).unwrap_or("?");
            let label = match what {
                "host" => format!("host {}", text("host")),
                _ => format!(
                    "pair {} ({} -> {})",
                    text("kind"),
                    text("client"),
                    text("server")
                ),
            };
            let Some(p) = obj.get("params") else {
                bail!("{name}: {list}[{i}] ({label}) has no params");
            };
            let whose = format!("{name}: {list}[{i}] ({label})'s params");
            let version = params_version(p.as_object().map(|o| o.get("schema_version")), &whose)?;
            if let Err(e) = ParamsFile::deserialize(p) {
                bail!("{whose} says schema_version {version} but does not match its layout: {e}");
            }
        }
    }
    Ok(())
}

/// The most NUMA nodes a file may declare (Linux's `MAX_NUMNODES`, 1 << 10).
pub const MAX_NUMA_NODES: usize = 1 << 10;

/// Refuses what no machine has and the charts and models would size memory by: a NUMA
/// matrix of more than [`MAX_NUMA_NODES`] initiators or targets, or more cells than
/// initiators x targets.
fn check_declared(f: &ParamsFile, name: &str) -> Result<()> {
    let Some(m) = &f.numa_matrix else {
        return Ok(());
    };
    for (what, n) in [
        ("initiators", m.initiators.len()),
        ("targets", m.targets.len()),
    ] {
        if n > MAX_NUMA_NODES {
            bail!(
                "{name}: numa_matrix.{what} lists {n} nodes, more than the {MAX_NUMA_NODES} \
                 a Linux machine can have: the file is damaged"
            );
        }
    }
    let most = m.initiators.len() * m.targets.len();
    if m.cells.len() > most {
        bail!(
            "{name}: numa_matrix has {} cells, more than its {} initiators x {} targets: the \
             file is damaged",
            m.cells.len(),
            m.initiators.len(),
            m.targets.len()
        );
    }
    Ok(())
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
