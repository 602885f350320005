//! What /proc/cpuinfo and DMI say on Arm servers: the core behind `CPU implementer` and
//! `CPU part` (Arm's cpuinfo has no model name), and whether the machine is a virtual
//! machine (Arm guests have no `hypervisor` CPU flag).

/// A virtual machine told by its firmware's DMI strings (Arm guests have no `hypervisor`
/// CPU flag): QEMU/KVM, Amazon EC2 (all but `.metal` instances), Azure, Google Cloud.
pub fn dmi_hypervisor(vendor: Option<&str>, product: Option<&str>) -> Option<String> {
    let (v, p) = (vendor?.trim(), product.unwrap_or("").trim());
    match v {
        "QEMU" => Some("KVM or QEMU (DMI)".into()),
        "Amazon EC2" if !p.ends_with(".metal") => Some(format!("Amazon EC2 Nitro ({p})")),
        "Microsoft Corporation" if p == "Virtual Machine" => Some("Hyper-V (DMI)".into()),
        "Google" if p == "Google Compute Engine" => Some("Google Compute Engine (DMI)".into()),
        _ => None,
    }
}

/// The vendor and core of an Arm CPU from /proc/cpuinfo's `CPU implementer` and
/// `CPU part` (MIDR_EL1 fields), e.g. `("Arm", "Arm Neoverse V2 (implementer 0x41,
/// part 0xd4f)")`; unknown parts keep their numbers.
pub fn arm_core(implementer: &str, part: Option<&str>) -> (String, String) {
    let num = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    let (imp, prt) = (num(implementer), part.and_then(num));
    let vendor = match imp {
        Some(0x41) => "Arm",
        Some(0x42) => "Broadcom",
        Some(0x46) => "Fujitsu",
        Some(0x48) => "HiSilicon",
        Some(0x4e) => "NVIDIA",
        Some(0x51) => "Qualcomm",
        Some(0x61) => "Apple",
        Some(0x6d) => "Microsoft",
        Some(0xc0) => "Ampere",
        _ => "unknown Arm implementer",
    };
    let core = match (imp, prt) {
        (Some(0x41), Some(0xd03)) => "Cortex-A53",
        (Some(0x41), Some(0xd07)) => "Cortex-A57",
        (Some(0x41), Some(0xd08)) => "Cortex-A72",
        (Some(0x41), Some(0xd0b)) => "Cortex-A76",
        (Some(0x41), Some(0xd0c)) => "Neoverse N1 (Ampere Altra, Graviton2)",
        (Some(0x41), Some(0xd40)) => "Neoverse V1 (Graviton3)",
        (Some(0x41), Some(0xd49)) => "Neoverse N2 (Azure Cobalt 100)",
        (Some(0x41), Some(0xd4f)) => "Neoverse V2 (NVIDIA Grace, Graviton4, Google Axion)",
        (Some(0x41), Some(0xd8e)) => "Neoverse N3",
        (Some(0x41), Some(0xd84)) => "Neoverse V3",
        (Some(0xc0), Some(0xac3)) => "AmpereOne",
        (Some(0xc0), Some(0xac4)) => "AmpereOne (AC04)",
        (Some(0x46), Some(0x001)) => "A64FX",
        (Some(0x48), Some(0xd01)) => "TaiShan v110 (Kunpeng 920)",
        _ => "",
    };
    let ids = format!(
        "implementer {}, part {}",
        implementer.trim(),
        part.map_or("unknown", str::trim)
    );
    let model = if core.is_empty() {
        format!("{vendor} core ({ids})")
    } else {
        format!("{vendor} {core} ({ids})")
    };
    (vendor.to_string(), model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_servers_are_named_by_implementer_and_part() {
        let (v, m) = arm_core("0x41", Some("0xd4f"));
        assert_eq!(v, "Arm");
        assert!(
            m.contains("Neoverse V2") && m.contains("Grace") && m.contains("0xd4f"),
            "{m}"
        );
        let (v, m) = arm_core("0xc0", Some("0xac3"));
        assert_eq!(
            (v.as_str(), m.contains("AmpereOne")),
            ("Ampere", true),
            "{m}"
        );
        assert!(arm_core("0x41", Some("0xd0c")).1.contains("Altra"));
        let (v, m) = arm_core("0x99", None);
        assert_eq!(v, "unknown Arm implementer");
        assert!(m.contains("implementer 0x99, part unknown"), "{m}");
    }

    #[test]
    fn cloud_guests_are_virtual_machines_and_metal_is_not() {
        assert!(dmi_hypervisor(Some("Amazon EC2"), Some("c7g.xlarge"))
            .unwrap()
            .contains("c7g.xlarge"));
        assert_eq!(dmi_hypervisor(Some("Amazon EC2"), Some("c7g.metal")), None);
        assert!(dmi_hypervisor(Some("QEMU"), Some("KVM Virtual Machine")).is_some());
        assert_eq!(dmi_hypervisor(Some("Supermicro"), Some("ARS-111GL")), None);
        assert_eq!(dmi_hypervisor(None, None), None);
    }
}
