//! [`Region::allocate`]: a region of a memory target mapped, placed, pre-faulted and
//! verified. One function per kind of target maps it; the placement proof is read
//! afterwards, from the pages themselves where the kernel can tell.

use super::{
    backing_of, interleave, map_anon, mbind_nodes, open_rw, page_size, pages_per_node, populate,
    reserve, thp_fraction, unavailable, HugeSize, Interleave, Mapping, Origin, Placement, Region,
    TargetSpec, Verification, MPOL_BIND,
};
use crate::topology::Topology;
use crate::units::{format_size, MIB};
use crate::CoreError;
use memmap2::{Advice, MmapMut, MmapOptions};
use std::path::Path;

impl Region {
    /// Maps `len` bytes of `spec`, places them, touches every page and verifies placement.
    pub fn allocate(spec: &TargetSpec, len: usize, topo: &Topology) -> Result<Region, CoreError> {
        if len == 0 {
            return Err(unavailable(spec, "zero-length region"));
        }
        let page = page_size();
        let mut region = match spec {
            TargetSpec::Anon => {
                let map = map_anon(spec, len, None)?;
                let _ = map.advise(Advice::NoHugePage);
                Region::new(spec, map, 0, len, page)
            }
            TargetSpec::Thp => {
                let align = 2 * MIB;
                let map = map_anon(spec, len + align, None)?;
                let offset = (align - (map.as_ptr() as usize % align)) % align;
                let _ = map.advise(Advice::HugePage);
                Region::new(spec, map, offset, len, 2 * MIB)
            }
            TargetSpec::Hugetlb(hs) => Region::hugetlb(spec, *hs, len, topo)?,
            TargetSpec::Node(n) => Region::on_node(spec, *n, len, topo)?,
            TargetSpec::Interleave(il) => Region::interleaved(spec, il, len, topo)?,
            TargetSpec::Dax(path) => Region::dax(spec, path, len, topo)?,
            TargetSpec::File(path) => Region::file(spec, path, len, topo)?,
        };
        region.prefault(topo);
        region.placement = region.verify(spec, topo)?;
        region.placement.backing = backing_of(spec, topo);
        Ok(region)
    }

    /// Reserved huge pages: unavailable (with the command that reserves them) when the
    /// pool has too few free.
    fn hugetlb(
        spec: &TargetSpec,
        hs: HugeSize,
        len: usize,
        topo: &Topology,
    ) -> Result<Region, CoreError> {
        let pool = topo
            .hugepages
            .iter()
            .find(|p| p.page_size_bytes == hs.bytes());
        let need = len.div_ceil(hs.bytes()) as u64;
        let sysfs = format!(
            "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
            hs.bytes() / 1024
        );
        match pool {
            None => {
                return Err(unavailable(
                    spec,
                    format!("the kernel offers no {} huge pages", format_size(hs.bytes())),
                ))
            }
            Some(p) if p.free < need => {
                return Err(unavailable(
                    spec,
                    format!(
                        "{} free {} huge pages, {need} needed: reserve them with `echo {} > {sysfs}` (as root)",
                        p.free,
                        format_size(hs.bytes()),
                        p.total + need - p.free
                    ),
                ))
            }
            _ => {}
        }
        let map = map_anon(spec, need as usize * hs.bytes(), Some(hs))?;
        Ok(Region::new(spec, map, 0, len, hs.bytes()))
    }

    /// Anonymous memory bound to node `n` (`mbind(MPOL_BIND)`), 4 KiB pages.
    fn on_node(
        spec: &TargetSpec,
        n: usize,
        len: usize,
        topo: &Topology,
    ) -> Result<Region, CoreError> {
        spec.validate(topo)?;
        Region::bound(spec, len, MPOL_BIND, &[n], |e| {
            format!("mbind(MPOL_BIND, node {n}) failed: {e}")
        })
    }

    /// Anonymous memory in 4 KiB pages (interleaving and binding are per page: huge pages
    /// would place 2 MiB at a time) under the policy `mode` over `nodes`; `failed` says
    /// why the policy could not be set.
    fn bound(
        spec: &TargetSpec,
        len: usize,
        mode: libc::c_long,
        nodes: &[usize],
        failed: impl FnOnce(std::io::Error) -> String,
    ) -> Result<Region, CoreError> {
        let map = map_anon(spec, len, None)?;
        let _ = map.advise(Advice::NoHugePage);
        mbind_nodes(map.as_ptr() as *mut u8, map.len(), mode, nodes)
            .map_err(|e| unavailable(spec, failed(e)))?;
        Ok(Region::new(spec, map, 0, len, page_size()))
    }

    /// Anonymous memory interleaved (plain or weighted) over the nodes of `il`.
    fn interleaved(
        spec: &TargetSpec,
        il: &Interleave,
        len: usize,
        topo: &Topology,
    ) -> Result<Region, CoreError> {
        spec.validate(topo)?;
        // A kernel without weighted interleave: skipped with that reason (a
        // weight mismatch was refused by validate). Weights changed since the
        // topology was read show in the share check.
        il.check_weights(topo.weighted_interleave.as_ref())
            .map_err(|e| unavailable(spec, e.to_string()))?;
        Region::bound(spec, len, il.mode(), il.nodes(), |e| {
            format!("mbind({}, nodes {il}) failed: {e}", il.policy_name())
        })
    }

    /// A device-dax mapped shared, its length rounded up to the device's alignment.
    fn dax(
        spec: &TargetSpec,
        path: &Path,
        len: usize,
        topo: &Topology,
    ) -> Result<Region, CoreError> {
        spec.validate(topo)?;
        let dev = topo.dax_device(path);
        let align = dev
            .map(|d| d.align_bytes as usize)
            .unwrap_or(2 * MIB)
            .max(page_size());
        let maplen = len.div_ceil(align) * align;
        if let Some(d) = dev {
            if (maplen as u64) > d.size_bytes {
                return Err(unavailable(
                    spec,
                    format!(
                        "device holds {} bytes, {} needed (rounded to its {} alignment)",
                        d.size_bytes,
                        maplen,
                        format_size(align)
                    ),
                ));
            }
        }
        let file = open_rw(spec, path)?;
        // SAFETY: a device-dax mapping is shared device memory; cxlchar owns its
        // contents for the run (the user opted in with --allow-write) and nothing
        // else in this process aliases it.
        let map = unsafe { MmapOptions::new().len(maplen).map_mut(&file) }
            .map_err(|e| unavailable(spec, format!("mmap of {} failed: {e}", path.display())))?;
        if !(map.as_ptr() as usize).is_multiple_of(align) {
            return Err(unavailable(
                spec,
                format!("mapping not aligned to the device's {}", format_size(align)),
            ));
        }
        Ok(Region::new(spec, map, 0, len, align))
    }

    /// A user's file mapped shared, its blocks reserved first (a hole that cannot be
    /// filled would SIGBUS the prefault).
    fn file(
        spec: &TargetSpec,
        path: &Path,
        len: usize,
        topo: &Topology,
    ) -> Result<Region, CoreError> {
        spec.validate(topo)?;
        let file = open_rw(spec, path)?;
        let flen = file.metadata().map(|m| m.len()).unwrap_or(0);
        if flen < len as u64 {
            return Err(unavailable(
                spec,
                format!(
                    "{} holds {flen} bytes, {len} needed (grow it with fallocate -l)",
                    path.display()
                ),
            ));
        }
        reserve::reserve(&file, path, 0, len as u64)
            .map_err(|e| unavailable(spec, e.to_string()))?;
        // SAFETY: the file is mapped shared for the run; the user opted in to
        // its contents being overwritten with --allow-write.
        let map = unsafe { MmapOptions::new().len(len).map_mut(&file) }
            .map_err(|e| unavailable(spec, format!("mmap of {} failed: {e}", path.display())))?;
        Ok(Region::new(spec, map, 0, len, page_size()))
    }

    fn new(spec: &TargetSpec, map: MmapMut, offset: usize, len: usize, page: usize) -> Region {
        Region {
            origin: Origin::Target(spec.clone()),
            map: Mapping::Rw(map),
            offset,
            len,
            placement: Placement::unverified(page),
        }
    }

    /// Faults every page in: the calling thread and helpers pinned to the other CPUs of
    /// its NUMA node (the node the default policy places anonymous memory on) take
    /// 64 MiB parts in turn, each with `MADV_POPULATE_WRITE` where the kernel has it
    /// (Linux 5.14), else by writing a byte per page. A helper that cannot be pinned
    /// there does nothing.
    fn prefault(&mut self, topo: &Topology) {
        const PART: usize = 64 * MIB;
        let len = self.len;
        let base = self.as_mut_ptr() as usize;
        let parts = len.div_ceil(PART);
        let here = crate::pin::current_cpu();
        let helpers: Vec<usize> = here
            .and_then(|c| topo.nodes.iter().find(|n| n.cpus.contains(&c)))
            .map(|n| {
                n.cpus
                    .iter()
                    .copied()
                    .filter(|&x| Some(x) != here)
                    .collect()
            })
            .unwrap_or_default();
        let helpers = &helpers[..helpers.len().min(parts.saturating_sub(1)).min(15)];
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if i >= parts {
                break;
            }
            let lo = i * PART;
            populate(base + lo, PART.min(len - lo));
        };
        std::thread::scope(|s| {
            for &cpu in helpers {
                let work = &work;
                s.spawn(move || {
                    if crate::pin::pin_current(cpu).is_ok() {
                        work();
                    }
                });
            }
            work();
        });
    }

    /// The placement proof of a region just allocated on `spec`: the node of every page
    /// (move_pages(2)), then what the kind of target lets one check of it.
    fn verify(&self, spec: &TargetSpec, topo: &Topology) -> Result<Placement, CoreError> {
        let mut p = self.placement.clone();
        let query_page = page_size();
        let nodes = pages_per_node(self.as_ptr(), self.len, query_page);
        p.pages_checked = nodes.values().sum();
        p.pages_per_node = nodes;
        match spec {
            TargetSpec::Anon => {
                p.verification = Verification::Reported;
                p.method = "move_pages(2) query of every page".into();
            }
            TargetSpec::Thp => self.thp_share(&mut p, query_page),
            TargetSpec::Hugetlb(_) => {
                p.verification = Verification::Verified;
                p.method = "MAP_HUGETLB mapping (fails without huge pages)".into();
            }
            TargetSpec::Node(n) => node_proof(spec, *n, &mut p)?,
            TargetSpec::Interleave(il) => interleave_proof(spec, il, &mut p)?,
            TargetSpec::Dax(path) => dax_proof(path, topo, &mut p),
            TargetSpec::File(path) => {
                p.verification = Verification::Unverified;
                p.method = "file mapping; the kernel does not report its medium".into();
                p.warning = Some(format!(
                    "placement of {} cannot be verified (page cache or fs-dax): treat its latency as unproven",
                    path.display()
                ));
            }
        }
        Ok(p)
    }

    /// The share of a `thp` region backed by huge pages (from smaps): a warning below 90%.
    fn thp_share(&self, p: &mut Placement, query_page: usize) {
        let frac = thp_fraction(self.as_ptr(), self.len);
        p.thp_fraction = frac;
        p.verification = Verification::Reported;
        p.method = "AnonHugePages of /proc/self/smaps".into();
        match frac {
            Some(f) if f >= 0.9 => {}
            Some(f) => {
                p.page_size_bytes = query_page;
                p.warning = Some(format!(
                    "only {:.0}% of the thp region is backed by huge pages; check /sys/kernel/mm/transparent_hugepage/{{enabled,defrag}}",
                    f * 100.0
                ))
            }
            None => p.warning = Some("cannot read /proc/self/smaps to confirm huge pages".into()),
        }
    }
}

/// A `node:N` region is verified only when every page is on node N.
fn node_proof(spec: &TargetSpec, n: usize, p: &mut Placement) -> Result<(), CoreError> {
    p.method = format!(
        "mbind(MPOL_BIND) + move_pages(2) query of every page ({} pages)",
        p.pages_checked
    );
    let on = p.pages_per_node.get(&(n as i64)).copied().unwrap_or(0);
    if on != p.pages_checked || p.pages_checked == 0 {
        return Err(unavailable(
            spec,
            format!(
                "placement check failed: {on} of {} pages on node {n} (pages per node: {:?})",
                p.pages_checked, p.pages_per_node
            ),
        ));
    }
    p.verification = Verification::Verified;
    Ok(())
}

/// An interleave is verified when each node's share of the pages is within the
/// tolerance of the expected share ([`interleave::check_shares`]).
fn interleave_proof(
    spec: &TargetSpec,
    il: &Interleave,
    p: &mut Placement,
) -> Result<(), CoreError> {
    let (proof, failed) = interleave::check_shares(il, &p.pages_per_node);
    p.method = format!(
        "mbind({}) over nodes {} + move_pages(2) query of every page ({} pages); measured share per node within {:.1} points of the expected {}",
        il.policy_name(),
        il,
        p.pages_checked,
        100.0 * proof.tolerance,
        if il.is_weighted() {
            "weight / sum of weights (weights read from /sys/kernel/mm/mempolicy/weighted_interleave)"
        } else {
            "equal shares"
        }
    );
    p.interleave = Some(proof);
    if let Some(msg) = failed {
        return Err(unavailable(spec, msg));
    }
    p.verification = Verification::Verified;
    Ok(())
}

/// A dax device listed in sysfs is verified by its size, alignment and target node; one
/// that is not cannot be placed and carries a warning.
fn dax_proof(path: &Path, topo: &Topology, p: &mut Placement) {
    match topo.dax_device(path) {
        Some(d) => {
            p.verification = Verification::Verified;
            p.method = format!(
                "device-dax {}: sysfs size {} B, align {} B, target_node {}",
                d.name,
                d.size_bytes,
                d.align_bytes,
                d.target_node.map_or("unknown".into(), |n| n.to_string())
            );
        }
        None => {
            p.verification = Verification::Unverified;
            p.method = "device not listed under /sys/bus/dax/devices".into();
            p.warning = Some(format!(
                "{} is not a device-dax listed in sysfs; where its memory is cannot be verified",
                path.display()
            ));
        }
    }
}
