//! Which benchmark (and command) produces each model key the consumers read, so that a
//! refusal can say what to run, and whether a name looks like a params key at all.

/// The benchmark that produces `key` (qualifiers `@target` ignored) and how to run it.
pub fn producer(key: &str) -> (&'static str, &'static str) {
    let base = key.split('@').next().unwrap_or(key);
    match base {
        "mem_lat_ns" | "l1_lat_ns" | "l2_lat_ns" | "l3_lat_ns" | "mem_lat_random_ns" => {
            ("mem.latency", "cxlchar mem latency")
        }
        "cxl_lat_ns" | "cxl_lat_random_ns" | "cxl_lat_factor" => (
            "mem.latency",
            "cxlchar mem latency --target node:N (a memory-only node) or --target dax:/dev/daxX.Y",
        ),
        "mem_bw_gbs" | "mem_bw_1t_gbs" | "l1_bw_gbs" | "l2_bw_gbs" | "l3_bw_gbs"
        | "mem_write_bw_gbs" | "nt_write_bw_gbs" | "nt_copy_bw_gbs" | "copy_bw_gbs"
        | "memset_bw_gbs" => ("mem.bandwidth", "cxlchar mem bandwidth"),
        "cxl_bw_gbs" | "cxl_bw_factor" => (
            "mem.bandwidth",
            "cxlchar mem bandwidth --target node:N or --target dax:/dev/daxX.Y",
        ),
        "nt_copy_threshold_bytes" | "nt_copy_rule_bytes" => {
            ("mem.copy-threshold", "cxlchar mem copy-threshold")
        }
        "loaded_lat_max_bw_gbs" | "loaded_lat_at_max_bw_ns" => ("mem.loaded", "cxlchar mem loaded"),
        "cxl_atomic_lat_ns" => (
            "pool.atomics",
            "cxlchar pool atomics --target node:N (a memory-only node) or --target dax:/dev/daxX.Y",
        ),
        "pool_msg_lat_ns" | "pool_msg_bw_gbs" | "pool_hockney_lat_ns" | "pool_hockney_bw_gbs" => (
            "pool.msg",
            "cxlchar pool msg --target dax:/dev/daxX.Y (shared pool, two processes)",
        ),
        "mpi_lat_ns" | "mpi_bw_gbs" => (
            "external",
            "osu_latency / osu_bw (not measured by cxlchar; supply with --what-if KEY=VALUE)",
        ),
        "verbs_lat_ns" | "verbs_bw_gbs" | "llp_post_ns" | "llp_prog_ns" | "md_setup_ns"
        | "md_barrier_ns" | "dbc_barrier_ns" | "post_misc_ns" | "rc_to_mem_8b_ns" | "net_ns"
        | "net_wire_ns" | "net_switch_ns" => (
            "verbs",
            "cxlchar verbs (needs an RDMA device; build with --features verbs)",
        ),
        "pio_copy_64b_ns" | "pcie_rtt_ns" | "pcie_ns" | "mmio_write_8b_ns" => (
            "pcie.mmio",
            "cxlchar pcie mmio --bar pci:DOMAIN:BUS:DEV.FN/N",
        ),
        "inj_misc_ns" | "hlp_post_ns" | "hlp_tx_prog_ns" | "hlp_rx_prog_ns" | "post_prog_ns"
        | "hlp_misc_ns" => (
            "external",
            "an MPI/UCX profile (not measured by cxlchar; supply with --what-if KEY=VALUE)",
        ),
        b if b.starts_with("gpu_pool_") => (
            "gpu",
            "cxlchar gpu --target node:N or dax:/dev/daxX.Y (a CUDA GPU and a far-memory target)",
        ),
        b if b.starts_with("gpu_") => ("gpu", "cxlchar gpu (needs a CUDA GPU)"),
        b if b.starts_with("pool_") || b.starts_with("flush_") => {
            ("pool", "cxlchar pool (needs a shared dax pool)")
        }
        _ => ("unknown", "no cxlchar benchmark is known to produce it"),
    }
}

/// The units a params key may end in.
pub const UNIT_SUFFIXES: &[&str] = &[
    "_ns", "_gbs", "_bytes", "_factor", "_ratio", "_pct", "_hz", "_count",
];

/// Whether `key` looks like a params key: lowercase snake case ending in a unit suffix
/// (optionally followed by `_k<N>`, `_p<N>` style indices are part of the name before the
/// suffix), optionally qualified by `@target`.
pub fn plausible(key: &str) -> bool {
    let (base, target) = match key.split_once('@') {
        Some((b, t)) => (b, Some(t)),
        None => (key, None),
    };
    if let Some(t) = target {
        if t.is_empty() || t.chars().any(char::is_whitespace) {
            return false;
        }
    }
    let mut chars = base.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    first_ok
        && base
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && UNIT_SUFFIXES
            .iter()
            .any(|s| base.ends_with(s) && base.len() > s.len())
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
            "gpu_pool_h2d_bw_gbs_k2",
            "cxl_lat_factor",
        ] {
            // `_k2` after the unit is not a suffix form we accept: check below.
            if k.ends_with("_k2") {
                assert!(!plausible(k), "{k}");
            } else {
                assert!(plausible(k), "{k}");
            }
        }
        for k in [
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
    fn producers_name_a_command() {
        assert_eq!(producer("cxl_atomic_lat_ns").0, "pool.atomics");
        assert_eq!(producer("mem_lat_ns@anon").0, "mem.latency");
        assert_eq!(producer("zzz_ns").0, "unknown");
    }
}
