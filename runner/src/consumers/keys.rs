//! The consumers' view of the key registry ([`bench_core::keys`]): which benchmark (and
//! command) produces a key, so that a refusal can say what to run, and whether a name is
//! a params key cxlchar knows.

use bench_core::keys::{self, Unit};
use bench_core::params::ParamsFile;

/// Whether `key@target` in `f` is the same figure as its unqualified `key` (which names
/// the first target's figure: `param_info[key].target` is `target`, the values equal):
/// one measured value under two names, shown once (`diff`'s rows, OpenMetrics' series).
pub fn repeats_bare(f: &ParamsFile, key: &str) -> bool {
    let (bare, Some(target)) = bench_core::keys::split_target(key) else {
        return false;
    };
    f.param_info.get(bare).is_some_and(|i| i.target == target)
        && f.params.get(bare) == f.params.get(key)
}

/// The benchmark that produces `key` (qualifier `@target` ignored) and how to run it;
/// `external` keys name what to run instead, an unregistered key gives `unknown`.
pub fn producer(key: &str) -> (&'static str, &'static str) {
    match keys::lookup(key) {
        Some(d) => (d.benchmark, d.command),
        None => ("unknown", "no cxlchar benchmark is known to produce it"),
    }
}

/// The unit suffixes a params key may end in (`_ns`, `_gbs`, ...).
pub fn unit_suffixes() -> Vec<&'static str> {
    Unit::ALL.iter().map(|u| u.suffix()).collect()
}

/// Whether `key` has the shape of a params key: lowercase snake case ending in a unit
/// suffix, optionally qualified by `@target` ([`keys::well_formed`]).
pub fn plausible(key: &str) -> bool {
    keys::well_formed(key)
}

/// Whether `key` is a params key cxlchar knows: well formed and in the registry
/// (produced by a benchmark, derived by the runner, or an external model input).
pub fn known(key: &str) -> bool {
    keys::well_formed(key) && keys::lookup(key).is_some()
}

/// Why `key` is refused, or `None` when it is a known key.
pub fn refusal(key: &str) -> Option<String> {
    if !keys::well_formed(key) {
        return Some(format!(
            "`{key}` is not a params key: keys are lowercase snake case ending in a unit ({}), \
             optionally `@target`",
            unit_suffixes().join(", ")
        ));
    }
    if keys::lookup(key).is_none() {
        return Some(format!(
            "`{key}` is not a params key cxlchar knows: no benchmark produces it and no model \
             reads it (docs/params.md lists every key)"
        ));
    }
    None
}

/// Whether the benchmark that produces `key` appears in the file's `skipped` list, and why.
pub fn skipped_reason(key: &str, skipped: &[bench_core::params::Skipped]) -> Option<String> {
    let (bench, _) = producer(key);
    let family = bench.split('.').next().unwrap_or(bench);
    skipped
        .iter()
        .find(|s| s.benchmark == bench || s.benchmark == family)
        .map(|s| {
            if s.target.is_empty() {
                format!("{} skipped: {}", s.benchmark, s.reason)
            } else {
                format!("{} on {} skipped: {}", s.benchmark, s.target, s.reason)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plausible_keys() {
        for k in [
            "mem_lat_ns",
            "cxl_lat_ns@node:1",
            "nt_copy_bw_gbs",
            "cxl_lat_factor",
            "msg_rate_mps",
        ] {
            assert!(plausible(k), "{k}");
        }
        for k in [
            "gpu_pool_h2d_bw_gbs_k2",
            "mem_lat",
            "Mem_lat_ns",
            "mem lat_ns",
            "_ns",
            "mem_lat_ns@",
            "9_ns",
        ] {
            assert!(!plausible(k), "{k}");
        }
    }

    #[test]
    fn every_produced_key_is_known_and_unknown_ones_are_refused_clearly() {
        for k in [
            "msg_rate_mps",
            "busy_post_ns",
            "inj_overhead_ns",
            "verbs_hockney_lat_ns",
            "verbs_hockney_bw_gbs",
            "gpu_pool_h2d_k2_bw_gbs@node:1",
            "flush_clwb_4k_ns",
            "mpi_lat_ns",
        ] {
            assert!(known(k), "{k}");
            assert!(refusal(k).is_none(), "{k}");
            assert_ne!(producer(k).0, "unknown", "{k}");
        }
        let r = refusal("zzz_ns").unwrap();
        assert!(r.contains("not a params key cxlchar knows"), "{r}");
        let r = refusal("zzz").unwrap();
        assert!(r.contains("_mps"), "{r}");
    }

    #[test]
    fn producers_name_a_command() {
        assert_eq!(producer("cxl_atomic_lat_ns").0, "pool.atomics");
        assert_eq!(producer("mem_lat_ns@anon").0, "mem.latency");
        assert_eq!(producer("msg_rate_mps").0, "verbs");
        assert_eq!(producer("mpi_lat_ns").0, "external");
        assert!(producer("mpi_lat_ns").1.contains("--what-if"));
        assert_eq!(producer("zzz_ns").0, "unknown");
    }
}
