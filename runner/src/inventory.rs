//! `cxlchar targets` and `cxlchar env`: what the machine offers and how it is set up.

use crate::cli::Format;
use crate::output::stdout::print;
use crate::output::table::{Align::*, TextTable};
use crate::output::warnings::render_warnings;
use crate::output::width::{fit, stdout_columns};
use anyhow::Result;
use bench_core::cxl::{CxlBus, Memdev};
use bench_core::env::Environment;
use bench_core::memory::TargetSpec;
use bench_core::timer::{Calibration, Timer};
use bench_core::topology::Topology;
use bench_core::units::{format_size, human_bytes};
use serde_json::json;
use std::fmt::Write;

/// Target specs this machine offers, each with a note.
pub fn offered(topo: &Topology) -> Vec<(String, String)> {
    let mut v = vec![
        (
            "anon".to_string(),
            "anonymous memory, 4 KiB pages (default)".to_string(),
        ),
        (
            "thp".to_string(),
            "transparent huge pages (MADV_HUGEPAGE)".to_string(),
        ),
    ];
    for p in &topo.hugepages {
        let spec = match p.page_size_bytes {
            s if s == 2 << 20 => "hugetlb:2M",
            s if s == 1 << 30 => "hugetlb:1G",
            _ => continue,
        };
        let note = if p.free == 0 {
            format!(
                "no pages reserved (echo N > /sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages)",
                p.page_size_bytes / 1024
            )
        } else {
            format!("{} of {} pages free", p.free, p.total)
        };
        v.push((spec.to_string(), note));
    }
    for n in &topo.nodes {
        if n.mem_total_bytes == 0 {
            continue;
        }
        let note = if n.likely_far_memory {
            format!(
                "{} memory, no CPUs: {}",
                human_bytes(n.mem_total_bytes),
                bench_core::cxl::describe_shares(&n.backing)
            )
        } else {
            format!(
                "{} memory, CPUs {}",
                human_bytes(n.mem_total_bytes),
                bench_core::pin::format_cpu_list(&n.cpus)
            )
        };
        v.push((TargetSpec::Node(n.id).to_string(), note));
    }
    v.extend(interleave_offered(topo));
    // A dax device onlined as system RAM has no character device: its node is the target.
    for d in topo.dax.iter().filter(|d| d.is_devdax()) {
        v.push((
            TargetSpec::Dax(d.path.clone()).to_string(),
            format!(
                "device-dax {}, align {}, node {}{} (needs --allow-write)",
                human_bytes(d.size_bytes),
                format_size(d.align_bytes as usize),
                d.target_node.map_or("?".into(), |n| n.to_string()),
                d.backing
                    .as_ref()
                    .map_or(String::new(), |b| format!(", {}", b.describe()))
            ),
        ));
    }
    v.extend(cxl_offered(topo));
    v
}

/// The `cxl:` names: every region, and every memory device in exactly one region, with
/// what each resolves to (or why it does not).
pub fn cxl_offered(topo: &Topology) -> Vec<(String, String)> {
    let names = topo.cxl.regions.iter().map(|r| r.name.clone()).chain(
        topo.cxl
            .memdevs
            .iter()
            .filter(|m| topo.cxl.regions_of(&m.name).len() == 1)
            .map(|m| m.name.clone()),
    );
    names
        .filter_map(|n| bench_core::memory::CxlName::new(&n).ok())
        .map(|spec| {
            let note = match spec.resolve(topo) {
                Ok(t) => format!(
                    "= {t}: {}{}",
                    bench_core::cxl::describe_shares(&bench_core::memory::backing_of(&t, topo)),
                    if t.is_destructive() {
                        " (needs --allow-write)"
                    } else {
                        ""
                    }
                ),
                Err(bench_core::CoreError::TargetSpec { reason, .. }) => {
                    format!("unavailable: {reason}")
                }
                Err(e) => format!("unavailable: {e}"),
            };
            (spec.to_string(), note)
        })
        .collect()
}

/// The CXL part of `cxlchar targets`: memory devices with their serial, capacity, PCI
/// function and link, port path and host bridge; decoders; regions with their devices;
/// and what backs each dax device and memory-only node.
pub fn cxl_table(topo: &Topology) -> String {
    let mut s = String::new();
    let cxl = &topo.cxl;
    if cxl.is_empty() {
        let _ = writeln!(s, "CXL: none (no /sys/bus/cxl devices)");
        backing_lines(&mut s, topo);
        return s;
    }
    let _ = writeln!(
        s,
        "CXL memory devices:{}",
        if cxl.memdevs.is_empty() { " none" } else { "" }
    );
    for m in &cxl.memdevs {
        memdev_lines(&mut s, cxl, m);
    }
    decoder_lines(&mut s, cxl);
    region_lines(&mut s, cxl);
    backing_lines(&mut s, topo);
    s
}

/// An address in hex, `-` when unknown.
fn hex_or_dash(a: Option<u64>) -> String {
    a.map_or("-".into(), |a| format!("{a:#x}"))
}

/// Interleave ways, `?` when unknown.
fn ways_or_unknown(w: Option<u32>) -> String {
    w.map_or("?".into(), |w| w.to_string())
}

/// Interleave granularity in bytes, `?` when unknown.
fn granularity_or_unknown(g: Option<u64>) -> String {
    g.map_or("?".into(), |g| format!("{g} B"))
}

/// One memory device: serial and capacities, PCI function and link, port path, regions.
fn memdev_lines(s: &mut String, cxl: &CxlBus, m: &Memdev) {
    let _ = writeln!(
        s,
        "  {}  serial {}  volatile {}  persistent {}  firmware {}",
        m.name,
        m.serial.as_deref().unwrap_or("?"),
        human_bytes(m.ram_bytes),
        human_bytes(m.pmem_bytes),
        m.firmware_version.as_deref().unwrap_or("?")
    );
    let _ = writeln!(
        s,
        "      PCI {} {}",
        m.pci.as_deref().unwrap_or("-"),
        m.link
            .as_ref()
            .and_then(|l| l.describe())
            .map_or("no PCIe link info".into(), |l| format!("link {l}"))
    );
    let _ = writeln!(
        s,
        "      ports {}  (host bridge {}; PCI path {})",
        if m.ports.is_empty() {
            "?".into()
        } else {
            m.ports.join(" -> ")
        },
        m.host_bridge.as_deref().unwrap_or("?"),
        if m.pci_path.is_empty() {
            "?".into()
        } else {
            m.pci_path.join(" -> ")
        }
    );
    let regions: Vec<&str> = cxl
        .regions_of(&m.name)
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    let _ = writeln!(
        s,
        "      regions {}",
        if regions.is_empty() {
            "none".into()
        } else {
            regions.join(", ")
        }
    );
}

/// The decoders table.
fn decoder_lines(s: &mut String, cxl: &CxlBus) {
    let _ = writeln!(s, "CXL decoders:");
    let mut t = TextTable::new(&[
        ("decoder", Left),
        ("kind", Left),
        ("port", Left),
        ("start", Left),
        ("size", Right),
        ("ways", Right),
        ("granularity", Right),
        ("mode", Left),
        ("region", Left),
    ])
    .indent(2);
    for d in &cxl.decoders {
        t.row([
            d.name.clone(),
            format!("{:?}", d.kind).to_lowercase(),
            d.port.clone(),
            hex_or_dash(d.start),
            human_bytes(d.size_bytes),
            ways_or_unknown(d.interleave_ways),
            granularity_or_unknown(d.interleave_granularity_bytes),
            d.mode.clone().unwrap_or_else(|| "-".into()),
            d.region.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    s.push_str(&t.render());
}

/// The regions table, each region followed by its devices by position.
fn region_lines(s: &mut String, cxl: &CxlBus) {
    let _ = writeln!(
        s,
        "CXL regions:{}",
        if cxl.regions.is_empty() { " none" } else { "" }
    );
    if cxl.regions.is_empty() {
        return;
    }
    let mut t = TextTable::new(&[
        ("region", Left),
        ("mode", Left),
        ("start", Left),
        ("size", Right),
        ("ways", Right),
        ("granularity", Right),
        ("state", Left),
        ("window", Left),
    ])
    .indent(2);
    for r in &cxl.regions {
        t.row([
            r.name.clone(),
            r.mode.clone().unwrap_or_else(|| "?".into()),
            hex_or_dash(r.start),
            human_bytes(r.size_bytes),
            ways_or_unknown(r.interleave_ways),
            granularity_or_unknown(r.interleave_granularity_bytes),
            if r.committed {
                "committed"
            } else {
                "NOT committed"
            }
            .to_string(),
            r.root_decoder.clone().unwrap_or_else(|| "?".into()),
        ]);
    }
    s.push_str(&t.render_with(|i| {
        cxl.regions[i]
            .targets
            .iter()
            .map(|t| {
                format!(
                    "      position {}: {} on {}",
                    t.position,
                    t.decoder,
                    t.memdev.as_deref().unwrap_or("?")
                )
            })
            .collect()
    }));
}

/// What backs each dax device and memory-only node.
fn backing_lines(s: &mut String, topo: &Topology) {
    if topo.dax.is_empty() && !topo.nodes.iter().any(|n| n.likely_far_memory) {
        return;
    }
    let _ = writeln!(s, "what backs the dax devices and memory-only nodes:");
    let mut t = TextTable::new(&[("device", Left), ("mode", Left), ("backed by", Left)]).indent(2);
    for d in &topo.dax {
        t.row([
            d.name.clone(),
            d.mode.clone().unwrap_or_else(|| "?".into()),
            d.backing.as_ref().map_or("?".into(), |b| b.describe()),
        ]);
    }
    for n in topo.nodes.iter().filter(|n| n.likely_far_memory) {
        t.row([format!("node {}", n.id), "-".into(), n.describe()]);
    }
    s.push_str(&t.render());
}

/// The nodes with memory, which interleaving spreads pages over.
fn memory_nodes(topo: &Topology) -> Vec<usize> {
    topo.nodes
        .iter()
        .filter(|n| n.mem_total_bytes > 0)
        .map(|n| n.id)
        .collect()
}

/// The `interleave:` targets: plain interleave over the nodes with memory, and weighted
/// interleave at the kernel's current weights (or why it is unavailable); none on a
/// machine with fewer than two nodes with memory (interleaving over one node is that node).
pub fn interleave_offered(topo: &Topology) -> Vec<(String, String)> {
    use bench_core::memory::interleave::{NO_WEIGHTED_INTERLEAVE, WEIGHTS_DIR};
    let nodes = memory_nodes(topo);
    if nodes.len() < 2 {
        return vec![];
    }
    let list = |f: &dyn Fn(usize) -> String| nodes.iter().map(|&n| f(n)).collect::<Vec<_>>();
    let mut v = vec![(
        format!("interleave:{}", list(&|n| n.to_string()).join(",")),
        "MPOL_INTERLEAVE over any of these nodes (pages round robin); `mem bandwidth` and `all` measure each node next to it".to_string(),
    )];
    match &topo.weighted_interleave {
        None => v.push((
            "interleave:A=wA,B=wB".into(),
            format!("unavailable: {NO_WEIGHTED_INTERLEAVE}"),
        )),
        Some(w) => {
            let cur = |n: usize| w.get(&n).map_or("?".into(), |w| w.to_string());
            v.push((
                format!("interleave:{}", list(&|n| format!("{n}={}", cur(n))).join(",")),
                format!(
                    "MPOL_WEIGHTED_INTERLEAVE at the kernel's current weights {}; these are system-wide and cxlchar never writes them (as root: echo W > /{WEIGHTS_DIR}/nodeN)",
                    list(&|n| format!("node{n}={}", cur(n))).join(" ")
                ),
            ))
        }
    }
    v
}

/// `cxlchar targets`.
pub fn targets(format: Format) -> Result<()> {
    let topo = Topology::system();
    let offered = offered(&topo);
    let links = crate::links::read(std::path::Path::new("/"));
    match format {
        Format::Csv | Format::Markdown => {
            anyhow::bail!("--format csv/markdown is for measurements; use table or json here")
        }
        Format::Json => {
            let v = json!({
                "topology": topo,
                "pci": bench_pcie::discovery::devices(std::path::Path::new("/")),
                "gpus": crate::gpu::inventory_json(&bench_gpu::discovery::probe()),
                "links": crate::links::json(&links),
                "targets": offered.iter().map(|(s, n)| json!({"spec": s, "note": n})).collect::<Vec<_>>(),
            });
            print(serde_json::to_string_pretty(&v)? + "\n")?;
        }
        Format::Table => print(fit(
            &targets_table(&topo, &offered, &links)?,
            stdout_columns(),
        ))?,
    }
    Ok(())
}

/// The readable `cxlchar targets`: nodes, dax devices, CXL, hugepages, interleave,
/// caches, PCI devices, their links, GPUs and the offered targets.
fn targets_table(
    topo: &Topology,
    offered: &[(String, String)],
    links: &[bench_core::pci::links::DeviceLink],
) -> Result<String, std::fmt::Error> {
    let mut s = String::new();
    node_lines(&mut s, topo)?;
    dax_lines(&mut s, topo)?;
    s.push_str(&cxl_table(topo));
    hugepage_lines(&mut s, topo)?;
    interleave_line(&mut s, topo)?;
    cache_lines(&mut s, topo)?;
    s.push_str(&pci_table(&bench_pcie::discovery::devices(
        std::path::Path::new("/"),
    )));
    s.push_str(&crate::links::targets_lines(links));
    s.push_str(&crate::gpu::inventory_table(&bench_gpu::discovery::probe()));
    writeln!(s, "\ntargets (--target):")?;
    let mut t = TextTable::new(&[("spec", Left), ("what", Left)]).indent(2);
    for (spec, note) in offered {
        t.row([spec.as_str(), note.as_str()]);
    }
    s.push_str(&t.render());
    Ok(s)
}

/// The NUMA nodes: CPUs, memory, distances and whether (and which) far memory.
fn node_lines(s: &mut String, topo: &Topology) -> std::fmt::Result {
    writeln!(s, "NUMA nodes:")?;
    let mut t = TextTable::new(&[
        ("node", Right),
        ("cpus", Left),
        ("memory", Right),
        ("distances", Left),
        ("far memory", Left),
    ])
    .indent(2);
    for n in &topo.nodes {
        t.row([
            n.id.to_string(),
            if n.cpus.is_empty() {
                "-".into()
            } else {
                bench_core::pin::format_cpu_list(&n.cpus)
            },
            human_bytes(n.mem_total_bytes),
            n.distances
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            if !n.likely_far_memory {
                "no"
            } else if n.is_cxl() {
                "yes: CXL"
            } else {
                "yes: not CXL"
            }
            .to_string(),
        ]);
    }
    s.push_str(&t.render());
    Ok(())
}

/// The dax devices: size, alignment, node, and a note for one onlined as system RAM.
fn dax_lines(s: &mut String, topo: &Topology) -> std::fmt::Result {
    writeln!(
        s,
        "dax devices:{}",
        if topo.dax.is_empty() { " none" } else { "" }
    )?;
    if topo.dax.is_empty() {
        return Ok(());
    }
    let mut t = TextTable::new(&[
        ("device", Left),
        ("size", Right),
        ("align", Right),
        ("node", Right),
        ("note", Left),
    ])
    .indent(2);
    for d in &topo.dax {
        t.row([
            d.path.display().to_string(),
            human_bytes(d.size_bytes),
            human_bytes(d.align_bytes),
            d.target_node.map_or("?".into(), |n| n.to_string()),
            match d.mode.as_deref() {
                Some("system-ram") => "onlined as system RAM: no character device",
                _ => "",
            }
            .to_string(),
        ]);
    }
    s.push_str(&t.render());
    Ok(())
}

/// The hugepage pools: page size, pages reserved and free.
fn hugepage_lines(s: &mut String, topo: &Topology) -> std::fmt::Result {
    writeln!(
        s,
        "hugepage pools:{}",
        if topo.hugepages.is_empty() {
            " none"
        } else {
            ""
        }
    )?;
    if topo.hugepages.is_empty() {
        return Ok(());
    }
    let mut t = TextTable::new(&[("page", Right), ("total", Right), ("free", Right)]).indent(2);
    for p in &topo.hugepages {
        t.row([
            human_bytes(p.page_size_bytes as u64),
            p.total.to_string(),
            p.free.to_string(),
        ]);
    }
    s.push_str(&t.render());
    Ok(())
}

/// The interleave policies the kernel offers, with the current weights.
fn interleave_line(s: &mut String, topo: &Topology) -> std::fmt::Result {
    let nodes = memory_nodes(topo).len();
    if nodes < 2 {
        return writeln!(
            s,
            "interleave: none offered ({nodes} node{} with memory; interleaving needs two)",
            if nodes == 1 { "" } else { "s" }
        );
    }
    match &topo.weighted_interleave {
        None => writeln!(
            s,
            "interleave: MPOL_INTERLEAVE; weighted interleave unavailable: {}",
            bench_core::memory::interleave::NO_WEIGHTED_INTERLEAVE
        ),
        Some(w) => writeln!(
            s,
            "interleave: MPOL_INTERLEAVE and MPOL_WEIGHTED_INTERLEAVE, current weights {}",
            if w.is_empty() {
                "none listed".into()
            } else {
                w.iter()
                    .map(|(n, w)| format!("node{n}={w}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        ),
    }
}

/// CPU 0's caches: level, type, size, line and the CPUs sharing each.
fn cache_lines(s: &mut String, topo: &Topology) -> std::fmt::Result {
    writeln!(s, "caches (CPU 0):")?;
    let mut t = TextTable::new(&[
        ("level", Left),
        ("type", Left),
        ("size", Right),
        ("line", Right),
        ("shared by CPUs", Left),
    ])
    .indent(2);
    for c in &topo.caches {
        t.row([
            format!("L{}", c.level),
            c.kind.clone(),
            human_bytes(c.size_bytes as u64),
            format!("{} B", c.line_bytes),
            c.shared_cpus.clone(),
        ]);
    }
    s.push_str(&t.render());
    Ok(())
}

/// `cxlchar env`.
pub fn env(format: Format) -> Result<()> {
    let env = Environment::capture();
    let timer = Timer::calibrate(Calibration::QUICK);
    let mut warnings = env.warnings(timer.info().invariant);
    warnings.extend(bench_core::pci::links::warnings(&crate::links::read(
        std::path::Path::new("/"),
    )));
    match format {
        Format::Csv | Format::Markdown => {
            anyhow::bail!("--format csv/markdown is for measurements; use table or json here")
        }
        Format::Json => {
            let v = json!({"environment": env, "timer": timer.info(), "warnings": warnings});
            print(serde_json::to_string_pretty(&v)? + "\n")?;
        }
        Format::Table => {
            let t = timer.info();
            let mut s = String::new();
            writeln!(
                s,
                "cpu:            {} ({}), {} logical CPUs, {} per core, {} socket(s)",
                env.cpu.model,
                env.cpu.vendor,
                env.cpu.logical_cpus,
                env.cpu.threads_per_core,
                env.cpu.sockets
            )?;
            writeln!(s, "flags:          {}", env.cpu.flags.join(" "))?;
            writeln!(s, "kernel:         {} ({})", env.kernel, env.arch)?;
            writeln!(
                s,
                "hypervisor:     {}",
                env.hypervisor.as_deref().unwrap_or("none")
            )?;
            writeln!(
                s,
                "governor:       {}",
                if env.governors.is_empty() {
                    "n/a (no cpufreq)".into()
                } else {
                    env.governors.join(",")
                }
            )?;
            writeln!(
                s,
                "turbo:          {}",
                env.turbo.map_or("n/a".into(), |b| b.to_string())
            )?;
            writeln!(
                s,
                "smt active:     {}",
                env.smt_active.map_or("n/a".into(), |b| b.to_string())
            )?;
            writeln!(
                s,
                "thp:            enabled={} defrag={}",
                env.thp_enabled.as_deref().unwrap_or("n/a"),
                env.thp_defrag.as_deref().unwrap_or("n/a")
            )?;
            writeln!(
                s,
                "numa balancing: {}",
                env.numa_balancing.map_or("n/a".into(), |b| b.to_string())
            )?;
            writeln!(s, "prefetchers:    {}", env.prefetchers.summary())?;
            writeln!(
                s,
                "perf paranoid:  {}",
                env.perf_event_paranoid
                    .map_or("n/a".into(), |b| b.to_string())
            )?;
            writeln!(s, "memory:         {}", human_bytes(env.mem_total_bytes))?;
            writeln!(s, "allowed CPUs:   {}", env.allowed_cpus)?;
            writeln!(
                s,"timer:          {:?}, {:.4} GHz ({}), spread {:.0} ppm, overhead {:.1} ns, tick {:.2} ns, resolution {:.2} ns (timed batches >= {:.1} us), invariant {}", t.source, t.freq_hz / 1e9, t.freq_method, t.calibration_spread_ppm, t.overhead_ns, t.tick_ns, t.resolution_ns, t.min_batch_ns / 1e3, t.invariant.map_or("unknown".into(), |b| b.to_string()))?;
            s.push_str(&render_warnings(&warnings));
            print(fit(&s, stdout_columns()))?;
        }
    }
    Ok(())
}

/// `cxlchar pcie list` (and the PCI part of `cxlchar targets`).
pub fn pci_table(devs: &[bench_pcie::discovery::PciDevice]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "PCI devices:{}",
        if devs.is_empty() { " none" } else { "" }
    );
    if devs.is_empty() {
        return s;
    }
    let mut t = TextTable::new(&[
        ("address", Left),
        ("id", Left),
        ("class", Left),
        ("driver", Left),
        ("node", Right),
        ("link", Left),
    ])
    .indent(2);
    for d in devs {
        t.row([
            d.address.clone(),
            format!("{}:{}", d.vendor, d.device),
            d.class.clone(),
            d.driver.clone().unwrap_or_else(|| "-".into()),
            d.numa_node.map_or("-".into(), |n| n.to_string()),
            d.link
                .describe()
                .unwrap_or_else(|| "no PCIe link info".into()),
        ]);
    }
    s.push_str(&t.render_with(|i| {
        let d = &devs[i];
        d.bars
            .iter()
            .filter(|b| b.memory)
            .map(|b| {
                format!(
                    "      pci:{}/{}  {}{}{}{}",
                    d.address,
                    b.index,
                    human_bytes(b.size_bytes),
                    if b.prefetchable { ", prefetchable" } else { "" },
                    if b.is_64bit { ", 64-bit" } else { "" },
                    if b.wc_available {
                        ", WC mapping (resource_wc)"
                    } else {
                        ""
                    }
                )
            })
            .collect()
    }));
    s
}

/// `cxlchar pcie list`.
pub fn pci(format: Format) -> Result<()> {
    let devs = bench_pcie::discovery::devices(std::path::Path::new("/"));
    match format {
        Format::Csv | Format::Markdown => {
            anyhow::bail!("--format csv/markdown is for measurements; use table or json here")
        }
        Format::Json => print(serde_json::to_string_pretty(&devs)? + "\n")?,
        Format::Table => print(fit(&pci_table(&devs), stdout_columns()))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn lab(name: &str) -> Topology {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../bench-core/tests/fixtures")
            .join(name);
        assert!(
            p.join("sys/bus/cxl").is_dir(),
            "fixture {} missing",
            p.display()
        );
        Topology::read(&p)
    }

    #[test]
    fn targets_lists_the_lab_cxl_device_with_its_chain() {
        let t = lab("sysfs-cxl-devdax");
        let table = cxl_table(&t);
        for want in [
            "mem0  serial 0x1234",
            "persistent 512 MiB",
            "PCI 0000:0d:00.0 link 2.5 GT/s PCIe x1",
            "ports root0 -> port1 -> endpoint2",
            "host bridge ACPI0016:00",
            "regions region1",
            // region, mode, start, size, ways, granularity, state, window
            "region1 pmem 0x1d0000000 512 MiB 1 256 B committed decoder0.0",
            "decoder2.0 endpoint endpoint2 0x1d0000000 512 MiB 1 256 B pmem region1",
            "position 0: decoder2.0 on mem0",
            "dax1.0",
            "CXL pmem region1 (1-way: mem0 serial 0x1234 at 0000:0d:00.0)",
            "NVDIMM persistent memory (nd region0), not CXL",
        ] {
            // Column widths aside: words in order.
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                table.lines().any(|l| words(l).contains(&words(want))),
                "missing {want:?} in\n{table}"
            );
        }
        let offered = offered(&t);
        let get = |spec: &str| {
            offered
                .iter()
                .find(|(s, _)| s == spec)
                .map(|(_, n)| n.clone())
                .unwrap_or_else(|| panic!("{spec} not offered: {offered:?}"))
        };
        assert!(get("cxl:region1").starts_with("= dax:/dev/dax1.0: CXL pmem region1"));
        assert!(get("cxl:mem0").starts_with("= dax:/dev/dax1.0"));
        assert!(get("dax:/dev/dax1.0").contains("mem0 serial 0x1234"));
    }

    #[test]
    fn interleave_is_offered_over_two_nodes_and_never_over_one() {
        let mut t = Topology::read(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../bench-core/tests/fixtures/sysfs-hmat-2socket"),
        );
        let specs = |t: &Topology| -> Vec<String> {
            offered(t).into_iter().map(|(s, _)| s).collect::<Vec<_>>()
        };
        assert!(memory_nodes(&t).len() >= 2, "{:?}", t.nodes);
        assert!(
            specs(&t).iter().any(|s| s.starts_with("interleave:0,1")),
            "{:?}",
            specs(&t)
        );
        t.nodes.retain(|n| n.id == 0);
        let one = specs(&t);
        assert!(!one.iter().any(|s| s.starts_with("interleave:")), "{one:?}");
        assert!(one.iter().any(|s| s == "node:0"), "{one:?}");
        let mut line = String::new();
        interleave_line(&mut line, &t).unwrap();
        assert!(line.contains("none offered (1 node with memory"), "{line}");
    }

    #[test]
    fn a_machine_without_cxl_says_so() {
        let d = tempfile::tempdir().unwrap();
        let t = Topology::read(d.path());
        assert!(cxl_table(&t).starts_with("CXL: none"));
        assert!(cxl_offered(&t).is_empty());
    }
}
