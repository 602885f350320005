//! What a finished run holds its own figures to before it writes them:
//!
//! * a key that a noisy DRAM check stands for ([`bench_core::dram_check::Verdict::Noisy`])
//!   is flagged noisy (`param_info.<key>.noisy`), and so is a far/local factor of a noisy
//!   key;
//! * two families that ran the same stream (the same kernel and ISA, on the same CPUs and
//!   target, over footprints within [`FOOTPRINT_SLACK`] of each other: the measurements'
//!   `stream`, [`bench_core::crew::stream::signature`]) must agree within
//!   [`FAMILY_TOLERANCE`]; where they do not, a warning says which, by how much, and what
//!   each figure's windows show of the moment it was taken.

use bench_core::params::{Measurement, ParamsFile, Warning};
use std::collections::BTreeMap;

/// How far apart two families' figures of the same stream may be.
pub const FAMILY_TOLERANCE: f64 = 0.05;

/// Footprints this close (the larger over the smaller) count as the same working set: two
/// families size their DRAM sets by the same rule, each rounding its own way.
pub const FOOTPRINT_SLACK: f64 = 1.25;

/// Flags the keys of noisy DRAM checks, and the factors of noisy keys.
pub fn flag_noisy_checks(file: &mut ParamsFile) {
    use bench_core::dram_check::Verdict;
    for c in file
        .dram_check
        .iter()
        .filter(|c| c.verdict == Verdict::Noisy)
    {
        let why = format!(
            "the DRAM check of {} on CPUs {} was noisy: {}",
            c.kernel,
            c.cpus,
            c.note.as_deref().unwrap_or("its passes disagreed")
        );
        for key in &c.keys {
            let bare = bench_core::keys::base_name(key).to_string();
            let from = file.param_info.get(key).map(|i| i.from.clone());
            for k in [key.clone(), bare] {
                if let Some(info) = file.param_info.get_mut(&k) {
                    // The bare key is this one only when it comes from the same figures.
                    if k == *key || Some(&info.from) == from.as_ref() {
                        info.noisy.get_or_insert_with(|| why.clone());
                    }
                }
            }
        }
    }
    for (factor, far, local) in bench_core::keys::ratios() {
        let noisy = [far, local]
            .iter()
            .find_map(|k| file.param_info.get(*k).and_then(|i| i.noisy.clone()));
        if let (Some(why), Some(info)) = (noisy, file.param_info.get_mut(factor)) {
            info.noisy.get_or_insert(why);
        }
    }
}

/// A measurement's stream: (target, kernel, isa, cpus) and its footprint.
fn stream_of(m: &Measurement) -> Option<((String, String, String, String), f64)> {
    let s = m.parameters.get("stream")?;
    let key = (
        m.target.clone(),
        s["kernel"].as_str()?.to_string(),
        s["isa"].as_str()?.to_string(),
        s["cpus"].to_string(),
    );
    Some((key, s["footprint_bytes"].as_f64()?))
}

/// The spread of a measurement's windows: (largest - smallest) / median of its
/// aggregates, when it has several.
fn window_spread(m: &Measurement) -> Option<f64> {
    let d = &m.distribution;
    (d.n > 1 && d.p50 > 0.0).then(|| (d.max - d.min) / d.p50)
}

/// What a figure's windows say, for a warning.
fn moment(m: &Measurement) -> String {
    let mut s = match window_spread(m) {
        Some(w) => format!("its windows {:.0} % apart", w * 100.0),
        None => "one window".to_string(),
    };
    let crew = m.parameters.get("crew");
    if let Some(why) = crew.and_then(|c| c["noisy"].as_str()) {
        s.push_str(&format!(", noisy: {why}"));
    } else if let Some(n) = crew.and_then(|c| c["left_out"].as_array()).map(Vec::len) {
        if n > 0 {
            s.push_str(&format!(", {n} disturbed window(s) left out"));
        }
    }
    s
}

/// Warnings for families that measured the same stream and disagree.
pub fn family_agreement(file: &ParamsFile) -> Vec<Warning> {
    let mut groups: BTreeMap<_, Vec<(&Measurement, f64)>> = BTreeMap::new();
    for m in &file.measurements {
        if m.unit != "GB/s" || m.id.ends_with("/bulk-sync") {
            continue;
        }
        if let Some((key, footprint)) = stream_of(m) {
            groups.entry(key).or_default().push((m, footprint));
        }
    }
    let mut out = Vec::new();
    for ((target, kernel, _, cpus), ms) in groups {
        for (i, (a, fa)) in ms.iter().enumerate() {
            for (b, fb) in &ms[i + 1..] {
                let same_set = fa.max(*fb) / fa.min(*fb).max(1.0) <= FOOTPRINT_SLACK;
                if a.benchmark == b.benchmark || !same_set {
                    continue;
                }
                let (va, vb) = (a.distribution.p50, b.distribution.p50);
                let apart = va.max(vb) / va.min(vb).max(1e-12);
                if apart - 1.0 <= FAMILY_TOLERANCE {
                    continue;
                }
                out.push(Warning {
                    code: "family_disagree".into(),
                    message: format!(
                        "{target}: {} and {} ran the same {kernel} stream (CPUs {cpus}, footprints {} and {}) and read {:.1} and {:.1} GB/s, {:.0} % apart (tolerance {:.0} %): {} ({}); {} ({})",
                        a.benchmark,
                        b.benchmark,
                        bench_core::units::format_size(*fa as usize),
                        bench_core::units::format_size(*fb as usize),
                        va,
                        vb,
                        (apart - 1.0) * 100.0,
                        FAMILY_TOLERANCE * 100.0,
                        a.id,
                        moment(a),
                        b.id,
                        moment(b)
                    ),
                    remediation: "the machine's bandwidth moved between the two moments (another tenant, a frequency change, memory placement): rerun on a quiet machine and compare; a model should take the figure whose windows agree".into(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::dram_check::{Better, DramCheck, Pattern, Verdict};
    use bench_core::params::ParamInfo;
    use bench_core::stats::Distribution;
    use serde_json::json;

    fn m(bench: &str, id: &str, p50: f64, footprint: f64, spread: f64) -> Measurement {
        let mut d =
            Distribution::from_samples(&[p50 * (1.0 - spread), p50, p50 * (1.0 + spread)]).unwrap();
        d.p50 = p50;
        Measurement {
            id: id.into(),
            benchmark: bench.into(),
            target: "anon".into(),
            parameters: json!({
                "stream": {"kernel": "read", "isa": "avx512", "footprint_bytes": footprint, "cpus": [1, 2, 3]},
                "crew": {"noisy": null, "left_out": [{"window": 0, "why": ["x"]}]},
            }),
            unit: "GB/s".into(),
            method: String::new(),
            distribution: d,
            placement: None,
            counters: None,
        }
    }

    fn file(ms: Vec<Measurement>) -> ParamsFile {
        let mut f: ParamsFile =
            serde_json::from_str(include_str!("../tests/data/params-a.json")).unwrap();
        f.measurements = ms;
        f
    }

    #[test]
    fn two_families_apart_on_the_same_stream_are_named_with_their_windows() {
        // The H200 host: mem bandwidth 95.4 GB/s, the GPU's agents alone 112.1 GB/s.
        let f = file(vec![
            m("mem.bandwidth", "bw", 95.4, 1392e6, 0.02),
            m("gpu.pool", "agents", 112.1, 1400e6, 0.10),
            m("mem.bandwidth", "bw/bulk-sync", 60.0, 1392e6, 0.0),
        ]);
        let w = family_agreement(&f);
        assert_eq!(w.len(), 1, "{w:?}");
        let msg = &w[0].message;
        assert_eq!(w[0].code, "family_disagree");
        for part in [
            "mem.bandwidth",
            "gpu.pool",
            "95.4",
            "112.1",
            "18 % apart",
            "windows 20 % apart",
            "disturbed window",
        ] {
            assert!(msg.contains(part), "{part}: {msg}");
        }
    }

    #[test]
    fn agreement_other_cpus_sets_or_one_family_say_nothing() {
        let close = file(vec![
            m("mem.bandwidth", "a", 100.0, 1e9, 0.0),
            m("mem.matrix", "b", 104.0, 1.1e9, 0.0),
        ]);
        assert!(family_agreement(&close).is_empty());
        let other_set = file(vec![
            m("mem.bandwidth", "a", 100.0, 1e9, 0.0),
            m("mem.matrix", "b", 150.0, 4e9, 0.0),
        ]);
        assert!(
            family_agreement(&other_set).is_empty(),
            "a 4x larger set is another measurement"
        );
        let mut c = m("mem.matrix", "b", 150.0, 1e9, 0.0);
        c.parameters["stream"]["cpus"] = json!([0, 1]);
        assert!(
            family_agreement(&file(vec![m("mem.bandwidth", "a", 100.0, 1e9, 0.0), c])).is_empty()
        );
        let same = file(vec![
            m("mem.bandwidth", "a", 100.0, 1e9, 0.0),
            m("mem.bandwidth", "a2", 150.0, 1e9, 0.0),
        ]);
        assert!(
            family_agreement(&same).is_empty(),
            "within a family the check is its own"
        );
    }

    #[test]
    fn a_noisy_check_flags_its_keys_and_their_factor() {
        let mut f = file(vec![]);
        let info = |from: &str| ParamInfo {
            unit: "GB/s".into(),
            target: "anon".into(),
            method: "m".into(),
            from: vec![from.into()],
            noisy: None,
        };
        f.param_info.insert("mem_bw_gbs@anon".into(), info("x"));
        f.param_info.insert("mem_bw_gbs".into(), info("x"));
        f.param_info.insert("cxl_bw_gbs".into(), info("y"));
        f.param_info.insert("cxl_bw_factor".into(), info("z"));
        f.params.insert("cxl_bw_factor".into(), 0.5);
        f.dram_check = vec![DramCheck {
            target: "anon".into(),
            benchmark: "mem.bandwidth".into(),
            pattern: Pattern::Stream,
            kernel: "read (avx512)".into(),
            cpus: "0-1".into(),
            threads: 2,
            unit: "GB/s".into(),
            better: Better::Higher,
            start_bytes: 1,
            sizing: String::new(),
            points: vec![],
            compared_bytes: [1, 2],
            ratio: 0.3,
            tolerance: 0.05,
            verdict: Verdict::Noisy,
            note: Some("a size's passes 2.66x apart".into()),
            reported_bytes: 1,
            repeated: true,
            keys: vec!["mem_bw_gbs@anon".into()],
        }];
        flag_noisy_checks(&mut f);
        for k in ["mem_bw_gbs@anon", "mem_bw_gbs", "cxl_bw_factor"] {
            let n = f.param_info[k]
                .noisy
                .as_deref()
                .unwrap_or_else(|| panic!("{k} not flagged"));
            assert!(n.contains("2.66x"), "{n}");
        }
        assert!(f.param_info["cxl_bw_gbs"].noisy.is_none());
    }
}
