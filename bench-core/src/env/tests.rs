//! Tests of `env.rs`.

use super::*;

#[test]
fn prefetcher_summary_names_the_state() {
    let unit = |name: &str, enabled| PrefetcherUnit {
        name: name.into(),
        enabled,
    };
    let p = Prefetchers::from_units(
        "MSR x",
        vec![unit("l1_stream", true), unit("l1_region", false)],
    );
    assert_eq!(p.summary(), "DISABLED: l1_region (MSR x)");
    let p = Prefetchers::from_units("MSR x", vec![unit("l1_stream", true)]);
    assert_eq!(p.summary(), "all enabled (MSR x)");
    assert!(Prefetchers::unknown("no msr")
        .summary()
        .starts_with("unknown (no msr"));
}

#[test]
fn bracketed_choice() {
    assert_eq!(
        bracketed("always [madvise] never").as_deref(),
        Some("madvise")
    );
    assert_eq!(bracketed("nothing"), None);
}

#[test]
fn captures_this_machine() {
    let e = Environment::capture();
    assert!(e.cpu.logical_cpus >= 1);
    assert!(!e.kernel.is_empty());
    assert!(e.mem_total_bytes > 0);
}

#[test]
fn distorting_settings_warn_with_remedy() {
    let mut e = Environment::capture();
    e.governors = vec!["powersave".into()];
    e.numa_balancing = Some(true);
    e.smt_active = Some(true);
    let w = e.warnings(Some(false));
    for code in ["governor", "numa_balancing", "smt", "tsc"] {
        let x = w
            .iter()
            .find(|x| x.code == code)
            .unwrap_or_else(|| panic!("no {code} warning"));
        assert!(!x.remediation.is_empty());
    }
    e.governors = vec!["performance".into()];
    e.numa_balancing = Some(false);
    e.smt_active = Some(false);
    e.cpu.threads_per_core = 1;
    e.turbo = None;
    e.hypervisor = None;
    e.prefetchers = Prefetchers::unknown("test");
    assert!(e.warnings(Some(true)).is_empty());
}

fn names_off(units: &[PrefetcherUnit]) -> Vec<&str> {
    units
        .iter()
        .filter(|u| !u.enabled)
        .map(|u| u.name.as_str())
        .collect()
}

#[test]
fn decodes_intel_misc_feature_control() {
    // Sapphire Rapids (family 6, model 0x8f).
    let on = decode_prefetchers("GenuineIntel", 6, 0x8f, 0).unwrap();
    let names: Vec<&str> = on.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        names,
        ["l2_streamer", "l2_adjacent_line", "dcu_next_line", "dcu_ip"]
    );
    assert!(on.iter().all(|u| u.enabled));
    let off = decode_prefetchers("GenuineIntel", 6, 0x8f, 0xf).unwrap();
    assert_eq!(off.len(), 4);
    assert!(off.iter().all(|u| !u.enabled));
    // Only bit 3 (DCU IP); bits above 3 are not decoded.
    let ip = decode_prefetchers("GenuineIntel", 6, 0x55, 0b1000 | 0x20).unwrap();
    assert_eq!(names_off(&ip), ["dcu_ip"]);
    // Xeon Phi and Atom server cores have other layouts.
    let phi = decode_prefetchers("GenuineIntel", 6, 0x57, 0b01).unwrap();
    assert_eq!(names_off(&phi), ["dcu_next_line"]);
    let atom = decode_prefetchers("GenuineIntel", 6, 0x5f, 0b100).unwrap();
    assert_eq!(atom.len(), 2);
    assert_eq!(names_off(&atom), ["dcu_next_line"]);
    // Core 2 and client Atoms: not decoded.
    assert!(decode_prefetchers("GenuineIntel", 6, 0x0f, 0).is_err());
    assert!(decode_prefetchers("GenuineIntel", 6, 0x1d, 0).is_err());
    assert!(decode_prefetchers("GenuineIntel", 6, 0x1a, 0).is_ok());
    assert!(decode_prefetchers("GenuineIntel", 6, 0x37, 0).is_err());
    assert!(decode_prefetchers("GenuineIntel", 15, 4, 0).is_err());
}

#[test]
fn decodes_amd_prefetch_control() {
    for family in [0x19, 0x1a] {
        let on = decode_prefetchers("AuthenticAMD", family, 0x11, 0).unwrap();
        let names: Vec<&str> = on.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "l1_stream",
                "l1_stride",
                "l1_region",
                "l2_stream",
                "l2_up_down"
            ]
        );
        assert!(on.iter().all(|u| u.enabled));
        let region = decode_prefetchers("AuthenticAMD", family, 0x11, 0b100).unwrap();
        assert_eq!(names_off(&region), ["l1_region"]);
        // Bit 4 is reserved, bit 5 is UpDown.
        let ud = decode_prefetchers("AuthenticAMD", family, 0x11, 0b11_0000).unwrap();
        assert_eq!(names_off(&ud), ["l2_up_down"]);
    }
    let e = decode_prefetchers("AuthenticAMD", 0x17, 0x31, 0).unwrap_err();
    assert!(
        e.contains("no documented prefetcher MSR") && e.contains("0x17"),
        "{e}"
    );
    let e = decode_prefetchers("CentaurHauls", 6, 0x0f, 0).unwrap_err();
    assert!(e.contains("CentaurHauls"), "{e}");
}

#[test]
fn prefetcher_state_follows_units() {
    let all = Prefetchers::from_units(
        "src",
        decode_prefetchers("AuthenticAMD", 0x19, 0x11, 0).unwrap(),
    );
    assert_eq!(all.state, PREFETCHERS_ALL_ENABLED);
    assert!(all.reason.is_none() && all.disabled().is_empty());
    let some = Prefetchers::from_units(
        "src",
        decode_prefetchers("GenuineIntel", 6, 0x8f, 0b0101).unwrap(),
    );
    assert_eq!(some.state, PREFETCHERS_SOME_DISABLED);
    assert_eq!(some.disabled(), ["l2_streamer", "dcu_next_line"]);
    let none = Prefetchers::from_units(
        "src",
        decode_prefetchers("GenuineIntel", 6, 0x8f, 0xf).unwrap(),
    );
    assert_eq!(none.state, PREFETCHERS_SOME_DISABLED);
    let empty = Prefetchers::from_units("src", Vec::new());
    assert_eq!(empty.state, PREFETCHERS_UNKNOWN);
    assert!(empty.reason.is_some());
}

#[test]
fn prefetchers_captured_or_unknown_with_reason() {
    let p = Environment::capture().prefetchers;
    println!("prefetchers on this machine: {p:?}");
    assert!(
        [
            PREFETCHERS_ALL_ENABLED,
            PREFETCHERS_SOME_DISABLED,
            PREFETCHERS_UNKNOWN
        ]
        .contains(&p.state.as_str()),
        "{p:?}"
    );
    let unknown = p.state == PREFETCHERS_UNKNOWN;
    assert_eq!(
        unknown,
        p.reason.is_some() && p.units.is_empty(),
        "state and reason disagree: {p:?}"
    );
    if unknown {
        assert!(!p.reason.as_deref().unwrap().trim().is_empty(), "{p:?}");
        assert!(p.source.is_empty(), "{p:?}");
    } else {
        assert!(p.source.starts_with("MSR 0x"), "{p:?}");
    }
}

#[test]
fn disabled_prefetchers_warn_unknown_does_not() {
    let mut e = Environment::capture();
    e.prefetchers = Prefetchers::from_units(
        "MSR 0x1a4 (MISC_FEATURE_CONTROL) on CPU 0 via /dev/cpu/0/msr = 0x5",
        decode_prefetchers("GenuineIntel", 6, 0x8f, 0x5).unwrap(),
    );
    let w = e.warnings(None);
    let x = w
        .iter()
        .find(|x| x.code == "prefetchers")
        .expect("no prefetchers warning");
    assert!(
        x.message.contains("l2_streamer") && x.message.contains("dcu_next_line"),
        "{}",
        x.message
    );
    assert!(!x.message.contains("dcu_ip"), "{}", x.message);
    assert!(x.remediation.contains("wrmsr"));
    e.prefetchers = Prefetchers::unknown("not root");
    assert!(e.warnings(None).iter().all(|x| x.code != "prefetchers"));
    e.prefetchers = Prefetchers::from_units(
        "src",
        decode_prefetchers("GenuineIntel", 6, 0x8f, 0).unwrap(),
    );
    assert!(e.warnings(None).iter().all(|x| x.code != "prefetchers"));
}

#[test]
fn old_files_without_prefetchers_still_read() {
    let e = Environment::capture();
    let mut v = serde_json::to_value(&e).unwrap();
    assert!(v["prefetchers"]["units"].is_array());
    v.as_object_mut().unwrap().remove("prefetchers");
    let back: Environment = serde_json::from_value(v).unwrap();
    assert_eq!(back.prefetchers.state, PREFETCHERS_UNKNOWN);
    assert!(back.prefetchers.reason.is_some());
    assert!(back.prefetchers.units.is_empty());
}
