//! `pcie.post-parts`: the components of seed 004's LLP_post (Sec. 4.1, Table 1) as
//! micro-operations timed on their own.
//!
//! The paper profiles the provider's post path (`uct_ep_put_short` of UCX's rc_mlx5)
//! with timers around its regions: message descriptor (MD) setup, a store barrier, the
//! DoorBell counter (DBC) update, a store barrier, the 64-byte PIO copy to the NIC's
//! device memory, and misc (calls, branches). cxlchar cannot profile a provider it does
//! not build, so this benchmark times the operations those regions are made of, on a
//! descriptor ring in host memory shaped like a send queue:
//!
//! * `md_write_64b_ns`: the eight 8-byte stores of a 64-byte descriptor into the next
//!   slot of the ring (cached stores; the words are computed from the post index, so
//!   the content changes every post as a real WQE's does). Stand-in for `md_setup_ns`,
//!   which also covers the provider computing its fields and the inline memcpy.
//! * `store_barrier_ns`: the `sfence` after the descriptor, as the difference of the
//!   p50s of "descriptor + sfence" and "descriptor alone" (a timer read around a lone
//!   fence would not see the stores it waits for). Stand-in for `md_barrier_ns`; x86
//!   orders cached stores by itself (TSO), so in a stream of posts this fence can cost
//!   next to nothing, unlike the paper's aarch64 `dmb st`.
//! * `dbc_store_barrier_ns`: the `sfence` after the 8-byte DBC store (a counter in its
//!   own line after the ring, as mlx5's doorbell record), as the difference of the p50s
//!   of "descriptor + sfence + DBC store + sfence" and the same without the last fence.
//!   Stand-in for `dbc_barrier_ns`.
//! * `post_host_microops_ns`: the host-memory part of a post as one sequence (descriptor
//!   + sfence + DBC store + sfence).
//! * `post_microops_ns` (needs `--bar` and `--allow-write`): the whole PIO post as one
//!   sequence: the host part, then the descriptor copied to the BAR's write-combining
//!   mapping with 8-byte stores, then `sfence` (x86 must flush the write-combining
//!   buffer; the paper's aarch64 server did without the flush).
//!
//! The doorbell write alone (`mmio_write_8b_ns`) and the PIO copy alone
//! (`pio_copy_64b_ns`) are `pcie mmio`'s keys on the same BAR; this benchmark does not
//! define them a second time. Every sample is a batch of back-to-back posts timed with
//! the cycle timer (overhead subtracted) divided by the batch length, so every figure is
//! the per-post cost in a stream of posts, the regime of seed 004's injection loop.

use crate::mmio::{sample_batches, MmioArgs, MmioBench};
use bench_core::bench::{
    Benchmark, BoxError, Context, Input, NotRun, Options, Param, Planned, Report, Setup, Skip,
};
use bench_core::cacheline::{store_8b_volatile, store_fence, LINE};
use bench_core::counters::MeasurementCounters;
use bench_core::memory::{Region, TargetSpec};
use bench_core::params::{Measurement, Skipped, Warning};
use bench_core::plan::Cost;
use bench_core::stats::Distribution;
use serde_json::json;

/// Slots of the descriptor ring: 256 descriptors of 64 bytes (a 16 KiB send queue, the
/// size of a 256-entry queue of 64-byte WQE basic blocks).
pub const SLOTS: usize = 256;
/// Bytes of one descriptor (one mlx5 WQE basic block; the paper's PIO copy is 64 B).
pub const DESC_BYTES: usize = 64;
/// Bytes of the region: the ring, then the DoorBell counter in its own line.
pub const RING_BYTES: usize = SLOTS * DESC_BYTES + LINE;
/// Offset of the DoorBell counter in the region.
pub const DBC_OFFSET: usize = SLOTS * DESC_BYTES;
/// Posts per timed sample: one lap of the ring (a batch of 256 posts of a few ns each
/// keeps the timer's resolution and overhead small against the figure).
pub const BATCH: usize = SLOTS;
/// Distance between the two PIO buffers a post alternates between (as mlx5's BlueFlame
/// registers, 256 B apart; the paper's trace shows the same alternation).
pub const PIO_STRIDE: usize = 256;

/// The producer side of a descriptor ring: which slot the next post writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    slots: usize,
    head: u64,
}

impl Ring {
    /// A ring of `slots` descriptors (at least one), empty.
    pub fn new(slots: usize) -> Ring {
        Ring {
            slots: slots.max(1),
            head: 0,
        }
    }

    /// The next post: its index (the producer counter, what the DBC holds after it) and
    /// the byte offset of its slot; advances the head, wrapping at the end of the ring.
    #[inline(always)]
    pub fn advance(&mut self) -> (u64, usize) {
        let i = self.head;
        self.head = self.head.wrapping_add(1);
        (i, (i % self.slots as u64) as usize * DESC_BYTES)
    }
}

/// The descriptor of post `i`: 8 words laid out as an RDMA-write WQE with inline data
/// (control segment: opcode and index, queue number and size, flags, immediate; remote
/// address segment: address, key; inline segment: byte count, the 8-byte payload). Every
/// word that a real post changes changes here.
#[inline(always)]
pub fn descriptor(i: u64) -> [u64; 8] {
    const OPCODE_RDMA_WRITE: u64 = 0x08;
    const QPN: u64 = 0x1234;
    const DS: u64 = 3; // 16-byte segments: control, remote address, inline (+ payload)
    const INLINE: u64 = 0x8000_0000;
    [
        ((i & 0xffff) << 8) | OPCODE_RDMA_WRITE,
        (QPN << 8) | DS,
        0x08, // signaled
        0,
        0x7f00_0000_0000u64.wrapping_add(i.wrapping_mul(8)),
        0x00ab_cdef,
        INLINE | 8,
        i,
    ]
}

/// A barrier's cost as the difference of the p50 of a sequence with it and without it;
/// `None` when noise makes it negative (no key is then published).
pub fn barrier_cost(with_ns: f64, without_ns: f64) -> Option<f64> {
    let d = with_ns - without_ns;
    (d.is_finite() && d >= 0.0).then_some(d)
}

/// Eight 8-byte volatile stores of `d` at `dst`.
///
/// # Safety
/// `dst` 8-aligned with 64 writable bytes.
#[inline(always)]
unsafe fn store_descriptor(dst: *mut u8, d: &[u64; 8]) {
    for (k, w) in d.iter().enumerate() {
        // SAFETY: k * 8 + 8 <= 64, inside the caller's range; 8-aligned.
        unsafe { store_8b_volatile(dst.add(k * 8), *w) };
    }
}

/// How far a timed post goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Upto {
    /// The descriptor stores.
    Md,
    /// + sfence.
    MdBarrier,
    /// + the DBC store.
    Dbc,
    /// + sfence (the host part of a post).
    DbcBarrier,
    /// + the 64-byte PIO copy + sfence (needs a BAR).
    Pio,
}

/// The ring and the PIO window one post writes.
struct PostPath {
    ring: *mut u8,
    pio: Option<(*mut u8, usize)>,
    state: Ring,
}

impl PostPath {
    /// One post up to `upto`.
    #[inline(always)]
    fn post(&mut self, upto: Upto) {
        let (i, off) = self.state.advance();
        let d = descriptor(i);
        // SAFETY: off + 64 <= SLOTS * DESC_BYTES <= the region's length; 8-aligned.
        unsafe { store_descriptor(self.ring.add(off), &d) };
        if upto == Upto::Md {
            return;
        }
        store_fence();
        if upto == Upto::MdBarrier {
            return;
        }
        // SAFETY: DBC_OFFSET + 8 <= RING_BYTES <= the region's length; 8-aligned.
        unsafe { store_8b_volatile(self.ring.add(DBC_OFFSET), i.wrapping_add(1)) };
        if upto == Upto::Dbc {
            return;
        }
        store_fence();
        if upto == Upto::DbcBarrier {
            return;
        }
        if let Some((wc, bufs)) = self.pio {
            let b = (i % bufs as u64) as usize * PIO_STRIDE;
            // SAFETY: b + 64 <= bufs * PIO_STRIDE <= the mapped window; 8-aligned.
            unsafe { store_descriptor(wc.add(b), &d) };
            store_fence();
        }
    }
}

/// The post-parts benchmark on one memory target, with an optional BAR.
#[derive(Debug, Clone)]
pub struct PostPartsBench {
    /// The BAR of the PIO copy (`--bar`), if any.
    pub bar: Option<MmioBench>,
}

const NAME: &str = "pcie.post-parts";

impl PostPartsBench {
    /// Why the PIO part cannot run, or the BAR (writable) to run it on.
    fn pio_bench(&self) -> Result<&MmioBench, String> {
        match &self.bar {
            None => Err(format!(
                "post_microops_ns (the whole post made of micro-ops: descriptor, barriers, DBC store, 64 B write-combining PIO copy + sfence) needs a device BAR: pass --bar pci:DOMAIN:BUS:DEV.FN/N --allow-write (see `cxlchar pcie list`); {}",
                Self::REUSED
            )),
            Some(b) if !b.access.allow_write => Err(format!(
                "post_microops_ns needs --allow-write to write the PIO copy to {} (device memory may be overwritten); {}",
                b.target(),
                Self::REUSED
            )),
            Some(b) => Ok(b),
        }
    }

    const REUSED: &'static str = "the doorbell write and the PIO copy alone are pcie mmio's mmio_write_8b_ns and pio_copy_64b_ns (cxlchar pcie mmio --bar ... --allow-write), not measured again here";

    /// The skipped entry for the doorbell and PIO copy without a writable BAR.
    fn doorbell_skip(&self, target: &str) -> Option<Skipped> {
        let reason = match &self.bar {
            None => "doorbell (8 B uncached write: mmio_write_8b_ns) and PIO copy (64 B write-combining copy + sfence: pio_copy_64b_ns): no BAR named; both are produced by `cxlchar pcie mmio --bar pci:DOMAIN:BUS:DEV.FN/N --allow-write`, which this benchmark reuses rather than redefines".to_string(),
            Some(b) if !b.access.allow_write => format!("doorbell and PIO copy on {}: writes need --allow-write", b.target()),
            Some(_) => return None,
        };
        Some(Skipped {
            benchmark: NAME.into(),
            target: target.into(),
            reason,
        })
    }
}

impl Benchmark for PostPartsBench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn region_bytes(&self, _ctx: &Context, _target: &TargetSpec) -> usize {
        RING_BYTES
    }

    fn memory(&self, ctx: &Context, target: &TargetSpec) -> bench_core::memory::budget::Need {
        let bytes = target.mapped_bytes(self.region_bytes(ctx, target), &ctx.topology);
        bench_core::memory::budget::Need::on_target(
            bytes,
            "the descriptor ring (256 x 64 B) and its doorbell counter (the PIO copy writes a BAR window: device memory)",
        )
    }

    fn cost(&self, ctx: &Context, _target: Option<&TargetSpec>) -> Cost {
        let mut c = Cost::new();
        c.add(
            "descriptor, barrier and doorbell parts",
            4,
            // Stores into a ring in the caches: a few ns each.
            crate::mmio::batches_s(ctx, BATCH, 3.0),
        );
        if self.pio_bench().is_ok() {
            c.add("PIO copy", 1, crate::mmio::batches_s(ctx, BATCH, 500.0));
        }
        c
    }

    fn run(&self, ctx: &Context, input: Input<'_>) -> Result<Report, NotRun> {
        let region = input.region()?;
        if region.len() < RING_BYTES {
            return Err(NotRun::skip(format!(
                "region of {} B is smaller than the {RING_BYTES} B ring",
                region.len()
            )));
        }
        let target = region.origin().to_string();
        if let Some(&cpu) = ctx.cpus.first() {
            bench_core::pin::pin_current(cpu).map_err(|e| Skip::new(e.to_string()))?;
        }
        let mut rep = Report::default();
        let base = json!({
            "ring_slots": SLOTS, "descriptor_bytes": DESC_BYTES, "dbc_offset_bytes": DBC_OFFSET,
            "posts_per_batch": BATCH, "cpu": ctx.cpus.first(),
            "stores": "8-byte volatile stores (cacheline::store_8b_volatile), descriptor words computed from the post index",
            "barrier": "sfence (cacheline::store_fence)",
        });
        let mut path = PostPath {
            ring: region.as_mut_ptr(),
            pio: None,
            state: Ring::new(SLOTS),
        };
        host_parts(ctx, region, &mut rep, &base, &mut path)?;
        rep.skipped.extend(self.doorbell_skip(&target));
        self.pio_part(ctx, region, &mut rep, &base, &mut path)?;
        Ok(rep)
    }
}

/// The host's parts of a post on the ring in `region`: the descriptor stores, the
/// barriers after them and after the doorbell store, and the sequence as a whole.
fn host_parts(
    ctx: &Context,
    region: &Region,
    rep: &mut Report,
    base: &serde_json::Value,
    path: &mut PostPath,
) -> Result<(), NotRun> {
    let target = region.origin().to_string();
    let p50 = |rep: &mut Report, path: &mut PostPath, upto: Upto, id: &str, what: &str| {
        let (d, c) = sample_batches(ctx, BATCH, || path.post(upto))
            .ok_or_else(|| Skip::new(format!("no valid samples of {what}")))?;
        let v = d.p50;
        push_measurement(rep, region, base, &target, id, what, d, c);
        Ok::<_, NotRun>(v)
    };
    let md = p50(
        rep,
        path,
        Upto::Md,
        "md_write_64b",
        "64 B descriptor stores into the next ring slot",
    )?;
    let md_b = p50(
        rep,
        path,
        Upto::MdBarrier,
        "md_write_64b_sfence",
        "64 B descriptor stores + sfence",
    )?;
    let dbc = p50(
        rep,
        path,
        Upto::Dbc,
        "md_sfence_dbc",
        "descriptor + sfence + 8 B DBC store",
    )?;
    let host = p50(
        rep,
        path,
        Upto::DbcBarrier,
        "post_host",
        "descriptor + sfence + 8 B DBC store + sfence",
    )?;
    let mid = |id: &str| format!("{NAME}/{target}/{id}");
    rep.params.push(Param::new(
        "md_write_64b_ns",
        md,
        &target,
        "p50 of 64 B descriptor stores (8 x 8 B) into the next slot of a 256-slot ring, batches of back-to-back posts (stand-in for seed 004's MD setup)",
        vec![mid("md_write_64b")],
    ));
    let barrier = |rep: &mut Report,
                   key: &str,
                   with: f64,
                   without: f64,
                   what: &str,
                   ids: [&str; 2]| {
        match barrier_cost(with, without) {
        Some(v) => rep.params.push(Param::new(
            key,
            v,
            &target,
            format!("p50({what} + sfence) - p50({what}): the sfence after it"),
            ids.iter().map(|i| mid(i)).collect(),
        )),
        None => rep.warnings.push(Warning {
            code: "post-parts-negative-barrier".into(),
            message: format!("{target}: {key} not published: p50 with the sfence ({with:.2} ns) is below p50 without it ({without:.2} ns), noise larger than the barrier"),
            remediation: "run without --quick on an idle, pinned core".into(),
        }),
    }
    };
    barrier(
        rep,
        "store_barrier_ns",
        md_b,
        md,
        "descriptor",
        ["md_write_64b_sfence", "md_write_64b"],
    );
    barrier(
        rep,
        "dbc_store_barrier_ns",
        host,
        dbc,
        "descriptor + sfence + DBC store",
        ["post_host", "md_sfence_dbc"],
    );
    rep.params.push(Param::new(
        "post_host_microops_ns",
        host,
        &target,
        "p50 of descriptor + sfence + DBC store + sfence as one sequence, batches of back-to-back posts",
        vec![mid("post_host")],
    ));
    Ok(())
}

impl PostPartsBench {
    /// The whole post with the PIO copy of the descriptor into the BAR's write-combining
    /// window (`--bar`); a skipped entry when there is no BAR or no WC mapping of it.
    fn pio_part(
        &self,
        ctx: &Context,
        region: &Region,
        rep: &mut Report,
        base: &serde_json::Value,
        path: &mut PostPath,
    ) -> Result<(), NotRun> {
        let target = region.origin().to_string();
        let mid = |id: &str| format!("{NAME}/{target}/{id}");
        let bar = match self.pio_bench() {
            Ok(b) => b,
            Err(reason) => {
                rep.skipped.push(Skipped {
                    benchmark: NAME.into(),
                    target: target.clone(),
                    reason,
                });
                return Ok(());
            }
        };
        let (dev, b) = bar.validate().map_err(|e| Skip::new(e.to_string()))?;
        let window = bar.window(Some(&b)).max(DESC_BYTES);
        let mut wc = match bar.map(true, window) {
            Ok(m) => m,
            Err(e) => {
                rep.skipped.push(Skipped {
                    benchmark: NAME.into(),
                    target: target.clone(),
                    reason: format!(
                        "post_microops_ns: no write-combining mapping of {}: {e}",
                        bar.target()
                    ),
                });
                return Ok(());
            }
        };
        let bufs = (window / PIO_STRIDE).clamp(1, 2);
        path.pio = Some((wc.as_mut_ptr(), bufs));
        let (d, c) = sample_batches(ctx, BATCH, || path.post(Upto::Pio))
            .ok_or_else(|| Skip::new("no valid samples of the whole post"))?;
        let v = d.p50;
        let extra = json!({
            "bar": bar.target(), "device": dev.address, "vendor": dev.vendor, "device_id": dev.device,
            "bar_offset_bytes": bar.offset, "window_bytes": window, "pio_buffers": bufs, "pio_stride_bytes": PIO_STRIDE,
            "pio": "the 64 B descriptor copied with 8 x 8 B volatile stores through resourceN_wc, then sfence",
        });
        let mut params = base.clone();
        if let (Some(o), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        push_measurement(
            rep,
            region,
            &params,
            &target,
            "post_pio",
            "descriptor + sfence + DBC store + sfence + 64 B PIO copy + sfence",
            d,
            c,
        );
        rep.params.push(Param::new(
            "post_microops_ns",
            v,
            &target,
            format!(
                "p50 of the whole PIO post as micro-ops (ring on {target}, PIO copy to {})",
                bar.target()
            ),
            vec![mid("post_pio")],
        ));
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn push_measurement(
    rep: &mut Report,
    region: &Region,
    params: &serde_json::Value,
    target: &str,
    id: &str,
    what: &str,
    d: Distribution,
    c: MeasurementCounters,
) {
    let mut p = params.clone();
    p["sequence"] = json!(what);
    rep.measurements.push(Measurement {
        id: format!("{NAME}/{target}/{id}"),
        benchmark: NAME.into(),
        target: target.into(),
        parameters: p,
        unit: "ns".into(),
        method: format!("cycle timer around batches of {BATCH} back-to-back posts ({what}), timer overhead subtracted, divided by {BATCH}"),
        distribution: d,
        placement: Some(region.placement().clone()),
        counters: Some(c),
    });
}

/// Seed 004's LLP_post components as micro-operations: the 64 B descriptor stores into a
/// 256-slot ring in host memory (md_write_64b_ns), the sfence after them
/// (store_barrier_ns), the sfence after the 8 B DoorBell-counter store
/// (dbc_store_barrier_ns), the host part as one sequence (post_host_microops_ns); with
/// --bar and --allow-write also the whole post with the 64 B write-combining PIO copy
/// (post_microops_ns). Batches of 256 back-to-back posts (one lap of the ring), p50 of 30 ms (--quick) or
/// 200 ms of batches. The doorbell write and the PIO copy alone are `pcie mmio`'s keys.
#[derive(Debug, Clone, clap::Args)]
pub struct PostPartsArgs {
    /// The BAR of the PIO copy and its options, as `pcie mmio` takes them.
    #[command(flatten)]
    pub mmio: MmioArgs,
}

impl Setup for PostPartsArgs {
    fn plan(&self, opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(PostPartsBench {
            bar: self.mmio.bench(opts)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::memory::TargetSpec;

    #[test]
    fn memory_is_the_ring_in_whole_pages_of_the_target() {
        let ctx = Context::quick_local();
        let b = PostPartsBench { bar: None };
        let need = b.memory(&ctx, &TargetSpec::Anon);
        assert_eq!(need.bytes, RING_BYTES.next_multiple_of(4096));
        assert!(need.bytes >= b.region_bytes(&ctx, &TargetSpec::Anon));
        // A huge page holds it on a hugetlb target: that is what it takes there.
        let huge = TargetSpec::Hugetlb(bench_core::memory::HugeSize::G1);
        assert_eq!(b.memory(&ctx, &huge).on_target_bytes, 1 << 30);
    }

    #[test]
    fn the_ring_advances_one_slot_per_post_and_wraps() {
        let mut r = Ring::new(4);
        let got: Vec<(u64, usize)> = (0..6).map(|_| r.advance()).collect();
        assert_eq!(
            got,
            vec![(0, 0), (1, 64), (2, 128), (3, 192), (4, 0), (5, 64)]
        );
        let mut r = Ring::new(SLOTS);
        for _ in 0..SLOTS * 3 + 7 {
            let (_, off) = r.advance();
            assert!(off + DESC_BYTES <= DBC_OFFSET, "slot past the ring: {off}");
            assert_eq!(off % DESC_BYTES, 0);
        }
        assert_eq!(
            Ring::new(0).advance(),
            (0, 0),
            "a ring has at least one slot"
        );
    }

    #[test]
    fn the_descriptor_changes_every_post() {
        let (a, b) = (descriptor(7), descriptor(8));
        assert_ne!(a, b);
        assert_ne!(a[0], b[0], "index in the control segment");
        assert_ne!(a[4], b[4], "remote address");
        assert_ne!(a[7], b[7], "payload");
        assert_eq!(a[1], b[1], "queue number does not change");
    }

    #[test]
    fn a_barrier_is_a_non_negative_difference() {
        assert_eq!(barrier_cost(12.5, 10.0), Some(2.5));
        assert_eq!(barrier_cost(10.0, 10.0), Some(0.0));
        assert_eq!(barrier_cost(9.0, 10.0), None);
        assert_eq!(barrier_cost(f64::NAN, 10.0), None);
    }

    fn run_here(bar: Option<MmioBench>) -> Report {
        let ctx = Context::quick_local();
        let mut region = Region::allocate(&TargetSpec::Anon, RING_BYTES, &ctx.topology).unwrap();
        PostPartsBench { bar }
            .run(&ctx, Input::Region(&mut region))
            .unwrap()
    }

    #[test]
    fn without_a_bar_the_host_parts_run_and_the_bar_parts_are_skipped_with_reasons() {
        let rep = run_here(None);
        let keys: Vec<&str> = rep.params.iter().map(|p| p.key.as_str()).collect();
        assert!(keys.contains(&"md_write_64b_ns"), "{keys:?}");
        assert!(keys.contains(&"post_host_microops_ns"), "{keys:?}");
        assert!(!keys.contains(&"post_microops_ns"));
        assert!(!keys.contains(&"pio_copy_64b_ns") && !keys.contains(&"mmio_write_8b_ns"));
        // A barrier is either published or explained.
        for k in ["store_barrier_ns", "dbc_store_barrier_ns"] {
            assert!(
                keys.contains(&k) || rep.warnings.iter().any(|w| w.message.contains(k)),
                "{k}"
            );
        }
        assert!(rep.params.iter().all(|p| p.value >= 0.0));
        assert_eq!(rep.skipped.len(), 2, "{:?}", rep.skipped);
        assert!(rep.skipped[0].reason.contains("pio_copy_64b_ns"));
        assert!(rep.skipped[0].reason.contains("mmio_write_8b_ns"));
        assert!(rep.skipped[1].reason.contains("post_microops_ns"));
        assert!(rep.skipped[1].reason.contains("--bar"));
        assert_eq!(rep.measurements.len(), 4);
        assert!(rep.measurements.iter().all(|m| m.counters.is_some()));
    }

    #[test]
    fn a_bar_without_write_consent_is_skipped_saying_so() {
        let b = MmioBench {
            bar: crate::bar::BarSpec {
                address: "0000:00:02.0".into(),
                index: 2,
            },
            offset: 0,
            access: crate::bar::Access::default(),
            root: "/nonexistent".into(),
        };
        let p = PostPartsBench { bar: Some(b) };
        assert!(p.pio_bench().unwrap_err().contains("--allow-write"));
        assert!(p
            .doorbell_skip("anon")
            .unwrap()
            .reason
            .contains("--allow-write"));
    }
}
