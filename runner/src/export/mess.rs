//! `mem.loaded` curves in the Mess benchmark's bandwidth-latency curve format.
//!
//! The format, as Mess documents and reads it (bsc-mem/Mess-simulator):
//!
//! * `Standalone/data/README.md`: one file `bwlat_X.txt` per curve, X the read
//!   percentage of the memory traffic (`bwlat_0.txt` all writes, `bwlat_100.txt` all
//!   reads); two columns, bandwidth in MB/s and latency in CPU cycles.
//! * `Standalone/README.md`: the simulator takes `frequencyCurve`, the CPU frequency in
//!   GHz the curves were measured at, to turn those cycles back into time.
//! * The readers, `Standalone/bw_lat_mem_ctrl.cpp` and
//!   `Integrated/ZSim+Standalone/src/mess_mem_ctrl.cpp`: open `bwlat_<i>.txt` for
//!   i = 0, 2, ..., 100 (even integers only; traffic is rounded to the nearest even
//!   percentage, half up), read `bandwidth latency` pairs with `>>` (any whitespace, no
//!   header, no comment lines) and search each curve from its first point, the highest
//!   bandwidth, downwards: points in decreasing bandwidth order. The ZSim reader
//!   multiplies column 2 by the CPU frequency, i.e. it takes nanoseconds; the standalone
//!   one and the data README take cycles. [`LatencyUnit`] writes either.
//! * Mess's own writer of these files (its `save_curves_to_file`, "a format expected by
//!   Profet"): bandwidth GB/s x 1000 -> MB/s, latency ns x `CPU_FREQ` -> cycles,
//!   tab-separated, no header, no index. The files in the simulator's
//!   `Standalone/data/<system>/` and `Integrated/ZSim+Standalone/memory_curve/cxl/`
//!   directories are such files (tab-separated, highest bandwidth first).
//!
//! What we write, per target and traffic mix of `mem.loaded`: `DIR/<target>/bwlat_<P>.txt`
//! with one line per measured point (each delay and the idle point), `bandwidth<TAB>latency`:
//! bandwidth = the traffic threads' `injected_bw_gbs` x 1000 (MB/s, bytes loaded + stored by
//! the traffic threads, not counting RFO reads nor the chase, MB = 10^6 B), latency = the
//! chase's p50 in ns, x the CPU frequency in GHz for cycles. P is the mix's read share
//! (`read_pct`, or for files written before it: `read` 100, `read-write` 67) rounded as the
//! readers round, to an even integer: a `mem loaded --mess-family` run gives all 51 files
//! (`bwlat_0` .. `bwlat_100`), one per share. Where two mixes of a target round to one file
//! (`1r1w`, 66.7 %, and `share68`), the one measured at exactly that share is written and
//! the other listed as left out. `DIR/README.txt` says all of this for the files written,
//! and per target which even shares were measured and which a reader must interpolate:
//! nothing is interpolated here, a percentage without a mix has no file.

use anyhow::{anyhow, bail, Result};
use bench_core::keys::parameters::{INJECTED_BW_GBS, MIX, READ_PCT};
use bench_core::params::{Measurement, ParamsFile};
use bench_core::timer::TimerSource;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The unit of the latency column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LatencyUnit {
    /// CPU cycles at the `--cpu-ghz` frequency (Mess's data README and its standalone
    /// simulator, which takes that frequency as `frequencyCurve`).
    Cycles,
    /// Nanoseconds (the ZSim-integrated Mess reader, which multiplies by its own CPU
    /// frequency).
    Ns,
}

/// The read share (percent) of a traffic mix, for files without `read_pct`: the mix as
/// `mem loaded --mix` names it ([`bench_mem::loaded::Mix`], `read-write` being the old
/// name of `1r1w`), its read share as the benchmark defines it.
fn read_pct_of_mix(mix: &str) -> Option<u32> {
    <bench_mem::loaded::Mix as clap::ValueEnum>::from_str(mix, false)
        .ok()
        .map(|m| m.read_pct())
}

/// The file percentage the Mess readers use for traffic of `pct` percent reads: the
/// nearest even integer, halves rounded up (`floor(pct / 2 + 0.5) * 2`).
pub fn file_pct(pct: u32) -> u32 {
    pct.div_ceil(2) * 2
}

/// A target name as a directory name: every character outside `[A-Za-z0-9._-]` becomes
/// `_` (`node:1` -> `node_1`).
pub fn sanitize(target: &str) -> String {
    let s: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        format!("_{s}")
    } else {
        s
    }
}

/// One measured point of a curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The traffic threads' bandwidth, GB/s.
    pub bw_gbs: f64,
    /// p50 of the chase latency, ns.
    pub lat_ns: f64,
    /// The measurement's id.
    pub id: String,
}

/// One curve: a target and a traffic mix.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub target: String,
    /// The mix's name.
    pub mix: String,
    /// Its read share in percent, as recorded (or mapped from the mix name).
    pub read_pct: u32,
    /// Whether `read_pct` came from the measurement (else from the mix name).
    pub read_pct_recorded: bool,
    /// Points, highest bandwidth first.
    pub points: Vec<Point>,
}

impl Curve {
    /// The file name: `bwlat_<even pct>.txt`.
    pub fn file_name(&self) -> String {
        format!("bwlat_{}.txt", file_pct(self.read_pct))
    }
}

/// The curves of a params file, and the measurements left out (with why).
#[derive(Debug, Default)]
pub struct Curves {
    /// Curves by (target, mix), each with at least one point.
    pub curves: Vec<Curve>,
    /// `id: reason` of each `mem.loaded` measurement not written.
    pub left_out: Vec<String>,
}

fn read_pct_param(m: &Measurement) -> Result<Option<u32>, String> {
    match m.parameters.get(READ_PCT) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(p) if p <= 100 => Ok(Some(p as u32)),
            _ => Err(format!("read_pct {v} is not an integer 0..100")),
        },
    }
}

/// Collects the `mem.loaded` curves of `file`: one per (target, mix), points sorted by
/// decreasing bandwidth (ties: higher latency first).
pub fn curves(file: &ParamsFile) -> Curves {
    let mut out = Curves::default();
    let mut by: BTreeMap<(String, String), Curve> = BTreeMap::new();
    let mut order = Vec::new();
    for m in file
        .measurements
        .iter()
        .filter(|m| m.benchmark == "mem.loaded")
    {
        let Some(mix) = m.parameters.get(MIX).and_then(|v| v.as_str()) else {
            out.left_out.push(format!("{}: no \"mix\" parameter", m.id));
            continue;
        };
        let (read_pct, recorded) = match read_pct_param(m) {
            Err(e) => {
                out.left_out.push(format!("{}: {e}", m.id));
                continue;
            }
            Ok(Some(p)) => (p, true),
            Ok(None) => match read_pct_of_mix(mix) {
                Some(p) => (p, false),
                None => {
                    out.left_out.push(format!(
                        "{}: mix \"{mix}\" has no read_pct and no known read share",
                        m.id
                    ));
                    continue;
                }
            },
        };
        let bw = m
            .parameters
            .get(INJECTED_BW_GBS)
            .and_then(|v| v.as_f64())
            .filter(|b| b.is_finite() && *b >= 0.0);
        let Some(bw_gbs) = bw else {
            out.left_out
                .push(format!("{}: no finite injected_bw_gbs >= 0", m.id));
            continue;
        };
        let lat_ns = m.distribution.p50;
        if m.unit != "ns" || !lat_ns.is_finite() || lat_ns <= 0.0 {
            out.left_out.push(format!(
                "{}: p50 {lat_ns} {} is not a positive latency in ns",
                m.id, m.unit
            ));
            continue;
        }
        let key = (m.target.clone(), mix.to_string());
        let c = by.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            Curve {
                target: m.target.clone(),
                mix: mix.to_string(),
                read_pct,
                read_pct_recorded: recorded,
                points: Vec::new(),
            }
        });
        if c.read_pct != read_pct {
            out.left_out.push(format!(
                "{}: read_pct {read_pct} differs from the {}% of the mix's other points",
                m.id, c.read_pct
            ));
            continue;
        }
        c.points.push(Point {
            bw_gbs,
            lat_ns,
            id: m.id.clone(),
        });
    }
    for k in order {
        let mut c = by.remove(&k).expect("key recorded");
        c.points.sort_by(|a, b| {
            b.bw_gbs
                .total_cmp(&a.bw_gbs)
                .then(b.lat_ns.total_cmp(&a.lat_ns))
        });
        out.curves.push(c);
    }
    out
}

/// The CPU frequency used for cycles, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Frequency {
    pub ghz: f64,
    /// Where it came from, for README.txt.
    pub source: String,
}

/// The frequency for the latency column: `--cpu-ghz` when given, else the TSC frequency
/// the run calibrated (`timer.freq_hz`, the nominal frequency on an invariant TSC), else
/// the `@ N.NNGHz` of the CPU model name.
pub fn frequency(file: &ParamsFile, cpu_ghz: Option<f64>) -> Result<Frequency> {
    if let Some(g) = cpu_ghz {
        if !cpu_clock(g) {
            bail!("--cpu-ghz {g}: give the CPU frequency in GHz ({MIN_GHZ} <= f < {MAX_GHZ})");
        }
        return Ok(Frequency {
            ghz: g,
            source: "given with --cpu-ghz".into(),
        });
    }
    let t = &file.timer;
    if t.source == TimerSource::Tsc && t.invariant != Some(false) && t.freq_hz > 0.0 {
        if !cpu_clock(t.freq_hz / 1e9) {
            bail!(
                "the params file's timer.freq_hz {} Hz is no CPU clock ({MIN_GHZ} <= f < \
                 {MAX_GHZ} GHz): the cycle column cannot be computed from it; give --cpu-ghz, \
                 or --mess-latency ns",
                t.freq_hz
            );
        }
        return Ok(Frequency {
            ghz: t.freq_hz / 1e9,
            source: format!(
                "the TSC frequency of the run (params.json timer.freq_hz, {}; the nominal \
                 frequency of an invariant TSC: cores running at another clock (turbo, \
                 power saving) make the cycle figures off by that ratio; give --cpu-ghz to \
                 choose)",
                t.freq_method
            ),
        });
    }
    if let Some(g) = model_ghz(&file.environment.cpu.model).filter(|g| cpu_clock(*g)) {
        return Ok(Frequency {
            ghz: g,
            source: format!(
                "the nominal frequency in the CPU model name \"{}\" (environment.cpu.model)",
                file.environment.cpu.model
            ),
        });
    }
    Err(anyhow!(
        "no CPU frequency in the params file (timer {:?}, model name \"{}\"): give \
         --cpu-ghz, or --mess-latency ns",
        t.source,
        file.environment.cpu.model
    ))
}

/// The CPU clocks the cycle column is computed with, GHz: from 10 MHz up to (not
/// including) 100 GHz, so that a cycle count is neither 0 nor hundreds of digits long.
pub const MIN_GHZ: f64 = 0.01;
/// See [`MIN_GHZ`].
pub const MAX_GHZ: f64 = 100.0;

fn cpu_clock(ghz: f64) -> bool {
    ghz.is_finite() && (MIN_GHZ..MAX_GHZ).contains(&ghz)
}

/// The largest bandwidth a curve point may have, GB/s (100 TB/s: beyond any memory).
pub const MAX_BW_GBS: f64 = 1e5;
/// The smallest bandwidth above 0 a curve point may have, GB/s (1 kB/s).
pub const MIN_BW_GBS: f64 = 1e-6;
/// The range of a point's latency, ns (10 ps .. 1 s): what a load can take.
pub const LAT_NS: std::ops::RangeInclusive<f64> = 0.01..=1e9;

/// Refuses a point whose figures no memory gives (a damaged or forged file: a bandwidth
/// of 1e306 GB/s would be written as `inf` MB/s): the export writes nothing then.
fn check_point(c: &Curve, p: &Point) -> Result<()> {
    let bw_ok = p.bw_gbs == 0.0 || (MIN_BW_GBS..=MAX_BW_GBS).contains(&p.bw_gbs);
    if !bw_ok {
        bail!(
            "{} (target {}, mix {}): injected_bw_gbs {} GB/s is no memory bandwidth (0, or \
             {MIN_BW_GBS} to {MAX_BW_GBS} GB/s): the params file is damaged; nothing written",
            p.id,
            c.target,
            c.mix,
            p.bw_gbs
        );
    }
    if !LAT_NS.contains(&p.lat_ns) {
        bail!(
            "{} (target {}, mix {}): p50 latency {} ns is no load latency ({} to {} ns): \
             the params file is damaged; nothing written",
            p.id,
            c.target,
            c.mix,
            p.lat_ns,
            LAT_NS.start(),
            LAT_NS.end()
        );
    }
    Ok(())
}

/// `2.10` from `Intel(R) Xeon(R) Platinum 8160 CPU @ 2.10GHz`.
fn model_ghz(model: &str) -> Option<f64> {
    let (_, rest) = model.rsplit_once('@')?;
    let rest = rest.trim();
    let num = rest.strip_suffix("GHz")?.trim();
    num.parse::<f64>()
        .ok()
        .filter(|g| *g > 0.0 && g.is_finite())
}

/// One written file: its path relative to DIR and its text.
#[derive(Debug, Clone)]
pub struct MessFile {
    /// `<target>/bwlat_<P>.txt` or `README.txt`.
    pub rel: String,
    /// The file's contents.
    pub text: String,
}

/// Renders the files of DIR: one per curve and README.txt. `source` names the params
/// file in README.txt. Fails when the file has no `mem.loaded` point, two targets would
/// share one folder, two mixes one file with neither measured at exactly its share
/// ([`one_curve_per_file`]), or a target's folder name is too long for a file system.
pub fn render(
    file: &ParamsFile,
    source: &str,
    unit: LatencyUnit,
    cpu_ghz: Option<f64>,
) -> Result<Vec<MessFile>> {
    if let (LatencyUnit::Ns, Some(g)) = (unit, cpu_ghz) {
        bail!(
            "--cpu-ghz {g} converts the latency column to cycles, and --mess-latency ns writes \
             it in ns: drop --cpu-ghz, or --mess-latency ns"
        );
    }
    let cs = curves(file);
    if cs.curves.is_empty() {
        let why = if cs.left_out.is_empty() {
            String::new()
        } else {
            format!(" (left out: {})", cs.left_out.join("; "))
        };
        bail!(NoCurves(format!(
            "{source} has no mem.loaded measurements to export as Mess curves{why}: run \
             `cxlchar mem loaded --out FILE` (or `cxlchar all`) first"
        )));
    }
    for c in &cs.curves {
        for p in &c.points {
            check_point(c, p)?;
        }
    }
    let freq = match unit {
        LatencyUnit::Cycles => Some(frequency(file, cpu_ghz)?),
        LatencyUnit::Ns => None,
    };
    let mut cs = cs;
    let kept = one_curve_per_file(&mut cs)?;
    let mut files = Vec::new();
    let mut dirs: BTreeMap<String, String> = BTreeMap::new();
    for c in &kept {
        let dir = sanitize(&c.target);
        if dir.len() > super::outdir::NAME_MAX_BYTES {
            bail!(
                "target {:?} gives the folder name {dir}, {} bytes, more than the {} a file \
                 name may have: shorten the target's name in the params file",
                c.target,
                dir.len(),
                super::outdir::NAME_MAX_BYTES
            );
        }
        if let Some(other) = dirs.insert(dir.clone(), c.target.clone()) {
            if other != c.target {
                bail!(
                    "targets {other} and {} both map to the directory {dir}",
                    c.target
                );
            }
        }
        let rel = format!("{dir}/{}", c.file_name());
        let mut text = String::new();
        for p in &c.points {
            let lat = match &freq {
                Some(f) => p.lat_ns * f.ghz,
                None => p.lat_ns,
            };
            writeln!(text, "{}\t{}", p.bw_gbs * 1000.0, lat)?;
        }
        files.push(MessFile { rel, text });
    }
    cs.curves = kept;
    files.push(MessFile {
        rel: "README.txt".into(),
        text: readme(file, source, unit, freq.as_ref(), &cs)?,
    });
    Ok(files)
}

/// Takes `cs`'s curves, one per file (target and even share): where two mixes of a
/// target round to one file, the one measured at exactly that share is written and the
/// other left out with why (`1r1w`, 66.7 %, beside `share68`); two or none measured
/// exactly there cannot share the file, an error.
fn one_curve_per_file(cs: &mut Curves) -> Result<Vec<Curve>> {
    let mut by_file: BTreeMap<(String, u32), Vec<Curve>> = BTreeMap::new();
    let mut order = Vec::new();
    for c in std::mem::take(&mut cs.curves) {
        let k = (c.target.clone(), file_pct(c.read_pct));
        if !by_file.contains_key(&k) {
            order.push(k.clone());
        }
        by_file.entry(k).or_default().push(c);
    }
    let mut kept = Vec::new();
    for k in order {
        let mut group = by_file.remove(&k).expect("key recorded");
        if group.len() == 1 {
            kept.extend(group);
            continue;
        }
        let exact: Vec<usize> = (0..group.len())
            .filter(|&i| group[i].read_pct == k.1)
            .collect();
        let names: Vec<&str> = group.iter().map(|c| c.mix.as_str()).collect();
        let [i] = exact[..] else {
            bail!(
                "mixes {} of {} all have {}% reads as Mess rounds them: one file bwlat_{}.txt \
                 cannot hold them all (measure one of them only, or one at exactly {}%)",
                names.join(", "),
                k.0,
                k.1,
                k.1,
                k.1
            );
        };
        let keep = group.swap_remove(i);
        for c in group {
            cs.left_out.push(format!(
                "mix {} of {} ({}% reads, {} points): bwlat_{}.txt holds mix {}, measured at exactly {}%",
                c.mix,
                c.target,
                c.read_pct,
                c.points.len(),
                k.1,
                keep.mix,
                k.1
            ));
        }
        kept.push(keep);
    }
    Ok(kept)
}

/// Even percentages 0..=100 as runs: `2..18, 22, 26..30` (each run every 2 %).
pub fn even_runs(pcts: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &p in pcts {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 2 == p => *hi = p,
            _ => runs.push((p, p)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}..{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The error of a params file without curves (the command exits 3 on it).
#[derive(Debug)]
pub struct NoCurves(pub String);

impl std::fmt::Display for NoCurves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoCurves {}

fn readme(
    file: &ParamsFile,
    source: &str,
    unit: LatencyUnit,
    freq: Option<&Frequency>,
    cs: &Curves,
) -> Result<String> {
    let mut s = String::new();
    writeln!(
        s,
        "Mess bandwidth-latency curves exported by cxlchar {}",
        file.tool.version
    )?;
    writeln!(s, "source: {source}")?;
    writeln!(
        s,
        "measured: {} .. {} by `{}`",
        file.started_at,
        file.finished_at,
        crate::output::shell::command(&file.command_line)
    )?;
    writeln!(
        s,
        "machine: {} ({} logical CPUs){}",
        file.environment.cpu.model,
        file.environment.cpu.logical_cpus,
        file.environment
            .hypervisor
            .as_deref()
            .map_or(String::new(), |h| format!(", virtualized ({h})"))
    )?;
    writeln!(s)?;
    writeln!(
        s,
        "format: <target>/bwlat_<P>.txt, one line per measured point, `bandwidth<TAB>latency`,"
    )?;
    writeln!(
        s,
        "no header, highest bandwidth first (the order Mess's readers search in)."
    )?;
    writeln!(
        s,
        "P: the read share of the memory traffic in percent (a store's RFO read counts as a"
    )?;
    writeln!(
        s,
        "read), rounded to an even integer as the Mess readers round (they open bwlat_0 .."
    )?;
    writeln!(
        s,
        "bwlat_100 in steps of 2). Percentages without a file were not measured (listed below"
    )?;
    writeln!(
        s,
        "per target): a reader must interpolate them between the nearest measured shares;"
    )?;
    writeln!(s, "cxlchar writes no interpolated curve.")?;
    writeln!(
        s,
        "column 1: bandwidth in MB/s (MB = 10^6 bytes) = injected_bw_gbs x 1000: the bytes the"
    )?;
    writeln!(
        s,
        "  traffic threads loaded + stored per second (not counting RFO reads, nor the chase,"
    )?;
    writeln!(
        s,
        "  nor other traffic: no uncore counters, unlike Mess's own measurement)."
    )?;
    match (unit, freq) {
        (LatencyUnit::Cycles, Some(f)) => {
            writeln!(s, "column 2: latency in CPU cycles = p50 of the chase's load-to-use latency (ns) x {} GHz.", f.ghz)?;
            writeln!(s, "  frequency: {}.", f.source)?;
            writeln!(s, "  Give this frequency to the Mess simulator as the curves' frequency (frequencyCurve).")?;
        }
        _ => {
            writeln!(s, "column 2: latency in ns = p50 of the chase's load-to-use latency (--mess-latency ns, for")?;
            writeln!(
                s,
                "  the ZSim-integrated Mess reader, which converts ns to cycles itself)."
            )?;
        }
    }
    writeln!(s, "idle points (no traffic threads) have bandwidth 0.")?;
    writeln!(s)?;
    writeln!(s, "files:")?;
    for c in &cs.curves {
        let how = if c.read_pct_recorded {
            "recorded read_pct"
        } else {
            "mapped from the mix name"
        };
        writeln!(
            s,
            "  {}/{}: target {}, mix {}, {}% reads ({how}), {} points ({} .. {})",
            sanitize(&c.target),
            c.file_name(),
            c.target,
            c.mix,
            c.read_pct,
            c.points.len(),
            c.points.first().map_or("", |p| &p.id),
            c.points.last().map_or("", |p| &p.id),
        )?;
    }
    writeln!(s)?;
    writeln!(s, "read shares (even percent, as the files name them):")?;
    let mut targets: Vec<&str> = Vec::new();
    for c in &cs.curves {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    for t in targets {
        let have: Vec<u32> = (0..=100)
            .step_by(2)
            .filter(|&p| {
                cs.curves
                    .iter()
                    .any(|c| c.target == t && file_pct(c.read_pct) == p)
            })
            .collect();
        let missing: Vec<u32> = (0..=100).step_by(2).filter(|p| !have.contains(p)).collect();
        writeln!(
            s,
            "  {}: measured {} of 51: {}; not measured, to interpolate: {}",
            sanitize(t),
            have.len(),
            even_runs(&have),
            if missing.is_empty() {
                "none".to_string()
            } else {
                even_runs(&missing)
            }
        )?;
    }
    if !cs.left_out.is_empty() {
        writeln!(s)?;
        writeln!(s, "mem.loaded measurements not written:")?;
        for l in &cs.left_out {
            writeln!(s, "  {l}")?;
        }
    }
    // Names, ids and the machine come from the file: their control characters as escapes.
    Ok(crate::output::text::printable_lines(&s).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_to_the_readers_even_steps() {
        for (p, f) in [
            (100, 100),
            (80, 80),
            (75, 76),
            (67, 68),
            (0, 0),
            (1, 2),
            (99, 100),
        ] {
            assert_eq!(file_pct(p), f, "{p}");
            // The readers: floor(100 * r * 0.5 + 0.5) * 2.
            assert_eq!(((p as f64 * 0.5 + 0.5).floor() as u32) * 2, f, "{p}");
        }
    }

    #[test]
    fn targets_become_plain_directory_names() {
        assert_eq!(sanitize("node:1"), "node_1");
        assert_eq!(sanitize("interleave:0,1"), "interleave_0_1");
        assert_eq!(sanitize("dax:/dev/dax0.0"), "dax__dev_dax0.0");
        assert_eq!(sanitize(".."), "_..");
        assert_eq!(sanitize(""), "_");
    }

    #[test]
    fn model_names_give_a_frequency() {
        assert_eq!(
            model_ghz("Intel(R) Xeon(R) Platinum 8160 CPU @ 2.10GHz"),
            Some(2.1)
        );
        assert_eq!(model_ghz("AMD EPYC 9654 96-Core Processor"), None);
    }

    #[test]
    fn even_shares_list_as_runs() {
        assert_eq!(even_runs(&[0, 2, 4, 8, 10, 100]), "0..4, 8..10, 100");
        assert_eq!(even_runs(&[]), "");
        let all: Vec<u32> = (0..=100).step_by(2).collect();
        assert_eq!(even_runs(&all), "0..100");
    }

    #[test]
    fn mixes_map_to_the_contract_read_shares() {
        assert_eq!(read_pct_of_mix("read"), Some(100));
        assert_eq!(read_pct_of_mix("read-write"), Some(67));
        assert_eq!(read_pct_of_mix("nt-write"), Some(0));
        assert_eq!(read_pct_of_mix("bogus"), None);
    }
}
