use super::*;

#[test]
fn every_name_ends_in_its_unit_and_resolves_to_its_own_entry() {
    for d in all() {
        assert!(!d.meaning.is_empty() && !d.command.is_empty(), "{}", d.name);
        for name in d.examples() {
            assert!(well_formed(&name), "{name} is not a well-formed key");
            assert_eq!(Unit::of_name(&name), Some(d.unit), "{name}: suffix vs unit");
            let found = lookup(&name).unwrap_or_else(|| panic!("{name} does not resolve"));
            assert_eq!(found.name, d.name, "{name} is shadowed by {}", found.name);
            assert_eq!(
                lookup(&format!("{name}@node:1")).map(|d| d.name),
                Some(d.name)
            );
        }
        for v in d.vars {
            assert!(d.name.contains(&format!("{{{}}}", v.name)), "{}", d.name);
        }
    }
}

#[test]
fn names_are_unique() {
    let mut names: Vec<&str> = all().iter().map(|d| d.name).collect();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len());
}

#[test]
fn far_names_and_their_local_keys_agree() {
    for d in all() {
        for name in d.examples() {
            if let Some(far) = far_name(&name) {
                let f = lookup(&far).unwrap_or_else(|| panic!("far name {far} of {name}"));
                assert_eq!(f.unit, d.unit, "{far}");
                assert_eq!(f.origin, Origin::Far { local: d.name }, "{far}");
            }
        }
        if let Origin::Far { local } = d.origin {
            let l = all()
                .iter()
                .find(|l| l.name == local)
                .unwrap_or_else(|| panic!("{local}"));
            assert!(
                l.far == Some(d.name),
                "{local} names {} as its far name",
                d.name
            );
        }
        if let Origin::Ratio { num, den } = d.origin {
            assert!(lookup(num).is_some() && lookup(den).is_some(), "{}", d.name);
        }
    }
}

#[test]
fn the_runners_renames_are_exactly_these() {
    let renames: Vec<(String, String)> = all()
        .iter()
        .flat_map(|d| d.examples())
        .filter_map(|n| far_name(&n).map(|f| (n, f)))
        .collect();
    for (local, far) in [
        ("mem_lat_ns", "cxl_lat_ns"),
        ("mem_lat_random_ns", "cxl_lat_random_ns"),
        ("mem_bw_gbs", "cxl_bw_gbs"),
        ("mem_bw_1t_gbs", "cxl_bw_1t_gbs"),
        ("atomic_lat_ns", "cxl_atomic_lat_ns"),
        ("gpu_reg_h2d_bw_gbs", "gpu_pool_h2d_bw_gbs"),
        ("gpu_reg_d2h_k4_bw_gbs", "gpu_pool_d2h_k4_bw_gbs"),
        ("gpu_reg_h2d_k2_agg_bw_gbs", "gpu_pool_h2d_k2_agg_bw_gbs"),
        (
            "gpu_reg_d2h_share_min_ratio",
            "gpu_pool_d2h_share_min_ratio",
        ),
        ("flush_bw_gbs", "cxl_flush_bw_gbs"),
        ("flush_bw_clwb_gbs", "cxl_flush_bw_clwb_gbs"),
        ("flush_bw_stores_gbs", "cxl_flush_bw_stores_gbs"),
        ("flush_bw_t2_gbs", "cxl_flush_bw_t2_gbs"),
        ("agents_write_k2_bw_gbs", "cxl_agents_write_k2_bw_gbs"),
        ("agents_read_k1_agg_bw_gbs", "cxl_agents_read_k1_agg_bw_gbs"),
        ("scan_bw_min_gbs", "cxl_scan_bw_min_gbs"),
        ("scan_slow_ranges", "cxl_scan_slow_ranges"),
    ] {
        assert_eq!(far_name(local).as_deref(), Some(far), "{local}");
    }
    // Nothing else is renamed, every gpu_reg_ key becomes its gpu_pool_ twin and every
    // flush_bw_ key its cxl_ twin; a one-target agents_ key its cxl_agents_ twin (the
    // spread's keys, over two targets at once, keep their names).
    for (l, f) in &renames {
        if let Some(rest) = l.strip_prefix("gpu_reg_") {
            assert_eq!(f, &format!("gpu_pool_{rest}"));
        } else if l.starts_with("flush_bw_") || l.starts_with("agents_") || l.starts_with("scan_") {
            assert!(!l.starts_with("agents_spread_"), "{l} -> {f}");
            assert_eq!(f, &format!("cxl_{l}"));
        } else {
            assert!(
                [
                    "mem_lat_ns",
                    "mem_lat_random_ns",
                    "mem_bw_gbs",
                    "mem_bw_1t_gbs",
                    "atomic_lat_ns"
                ]
                .contains(&l.as_str()),
                "{l} -> {f}"
            );
        }
    }
    assert_eq!(far_name("mem_write_bw_gbs"), None);
    assert_eq!(far_name("gpu_h2d_bw_gbs"), None);
    assert_eq!(far_name("flush_cost_ns"), None);
    let r: Vec<_> = ratios().collect();
    assert_eq!(
        r,
        [
            ("cxl_lat_factor", "cxl_lat_ns", "mem_lat_ns"),
            ("cxl_bw_factor", "cxl_bw_gbs", "mem_bw_gbs")
        ]
    );
}

#[test]
fn patterns_match_only_their_values() {
    assert_eq!(
        lookup("flush_clwb_4k_ns").unwrap().name,
        "flush_{method}_{size}_ns"
    );
    assert!(lookup("flush_clwb_8k_ns").is_none());
    assert!(lookup("flush_cost_ns").is_some_and(|d| !d.is_pattern()));
    assert_eq!(
        lookup("nt_copy_threshold_p16_bytes").unwrap().name,
        "nt_copy_threshold_p{N}_bytes"
    );
    assert!(lookup("nt_copy_threshold_p_bytes").is_none());
    assert!(lookup("nt_copy_threshold_p01_bytes").is_none());
    assert_eq!(
        lookup("gpu_pool_h2d_k12_agg_bw_gbs@dax:/dev/dax0.0")
            .unwrap()
            .name,
        "gpu_pool_{dir}_k{k}_agg_bw_gbs"
    );
    assert!(lookup("gpu_pool_x2d_bw_gbs").is_none());
    assert!(lookup("zzz_ns").is_none());
    assert!(lookup("mem_lat").is_none());
    assert_eq!(lookup("mem_lat_ns@anon").unwrap().benchmark, "mem.latency");
}

/// The keys of the families that cannot run on the machines the tests run on (verbs,
/// PCIe MMIO, GPU, pool messaging): every key their code produces, with the unit it is
/// produced with (bench-ibverbs/src/rdma.rs, bench-pcie/src/mmio.rs, bench-gpu/src/
/// shape.rs, bench-cxl/src/msg.rs).
#[test]
fn keys_of_the_families_that_cannot_run_here_are_registered() {
    let produced: &[(&str, &str)] = &[
        ("llp_post_inline_ns", "ns"),
        ("llp_post_ns", "ns"),
        ("llp_prog_ns", "ns"),
        ("busy_post_ns", "ns"),
        ("inj_overhead_ns", "ns"),
        ("inj_misc_ns", "ns"),
        ("msg_rate_mps", "Mmsg/s"),
        ("verbs_lat_ns", "ns"),
        ("verbs_bw_gbs", "GB/s"),
        ("verbs_hockney_lat_ns", "ns"),
        ("verbs_hockney_bw_gbs", "GB/s"),
        ("pcie_rtt_ns", "ns"),
        ("mmio_write_8b_ns", "ns"),
        ("pio_copy_8b_ns", "ns"),
        ("pio_copy_16b_ns", "ns"),
        ("pio_copy_32b_ns", "ns"),
        ("pio_copy_64b_ns", "ns"),
        ("pio_copy_128b_ns", "ns"),
        ("pio_copy_256b_ns", "ns"),
        ("post_microops_ns", "ns"),
        ("gpu_h2d_bw_gbs", "GB/s"),
        ("gpu_d2h_bw_gbs", "GB/s"),
        ("gpu_copy_lat_ns", "ns"),
        ("gpu_reg_h2d_bw_gbs", "GB/s"),
        ("gpu_reg_d2h_bw_gbs", "GB/s"),
        ("gpu_reg_h2d_k2_bw_gbs", "GB/s"),
        ("gpu_reg_d2h_k8_bw_gbs", "GB/s"),
        ("gpu_reg_h2d_k4_agg_bw_gbs", "GB/s"),
        ("gpu_reg_h2d_share_min_ratio", "ratio"),
        ("gpu_reg_d2h_share_min_ratio", "ratio"),
        ("pool_flag_lat_ns", "ns"),
        ("pool_flag_lat_noncoherent_ns", "ns"),
        ("pool_msg_lat_ns", "ns"),
        ("pool_msg_lat_noncoherent_ns", "ns"),
        ("pool_msg_bw_gbs", "GB/s"),
        ("pool_msg_bw_noncoherent_gbs", "GB/s"),
        ("pool_hockney_lat_ns", "ns"),
        ("pool_hockney_lat_noncoherent_ns", "ns"),
        ("pool_hockney_bw_gbs", "GB/s"),
        ("pool_hockney_bw_noncoherent_gbs", "GB/s"),
    ];
    for (key, unit) in produced {
        let d = lookup(key).unwrap_or_else(|| panic!("{key} is not registered"));
        assert_eq!(d.unit.symbol(), *unit, "{key}");
        assert_eq!(d.origin, Origin::Measured, "{key}");
        assert_ne!(d.benchmark, "external", "{key}");
    }
}

#[test]
fn well_formed_shapes() {
    for k in [
        "mem_lat_ns",
        "cxl_lat_ns@node:1",
        "msg_rate_mps",
        "cxl_lat_factor",
        "ok_ns",
    ] {
        assert!(well_formed(k), "{k}");
    }
    for k in [
        "mem_lat",
        "Mem_lat_ns",
        "mem lat_ns",
        "_ns",
        "mem_lat_ns@",
        "9_ns",
        "x_ns@a b",
    ] {
        assert!(!well_formed(k), "{k}");
    }
}

#[test]
fn the_markdown_has_a_row_per_entry() {
    let md = markdown();
    for d in all() {
        assert!(md.contains(&format!("| `{}`", d.name)), "{}", d.name);
    }
    let text = format!("intro\n{DOC_BEGIN}\nSTALE\n{DOC_END}\noutro\n");
    let spliced = splice_markdown(&text).unwrap();
    assert!(spliced.starts_with("intro\n") && spliced.ends_with(&format!("{DOC_END}\noutro\n")));
    assert!(!spliced.contains("STALE") && spliced.contains("| `mem_lat_ns`"));
    assert_eq!(splice_markdown(&spliced).unwrap(), spliced);
    assert!(splice_markdown("no markers").is_none());
}
