//! Tests of `interference.rs`: the tier of a target, the CPU split on fixture
//! topologies, the ratios and noisy flags of recorded figures, the key pairs, the plan.

use super::*;
use bench_core::dma::{DmaAggressor, DmaDir, DmaProbe, DmaRate, DmaSession};
use bench_core::memory::HugeSize;
use bench_core::topology::fixtures::Server;
use bench_core::topology::places::Places;
use std::sync::Arc;

#[test]
fn tiers_are_dram_next_to_cpus_and_far_without_them() {
    let topo = Server::cxl_host().topology();
    let far = topo.nodes.iter().find(|n| n.cpus.is_empty()).unwrap().id;
    let near = topo.nodes.iter().find(|n| !n.cpus.is_empty()).unwrap().id;
    for t in [
        TargetSpec::Anon,
        TargetSpec::Thp,
        TargetSpec::Hugetlb(HugeSize::M2),
        TargetSpec::Node(near),
    ] {
        assert_eq!(tier(&t, &topo), Tier::Dram, "{t}");
    }
    for t in [TargetSpec::Node(far), TargetSpec::Dax("/dev/dax0.0".into())] {
        assert_eq!(tier(&t, &topo), Tier::Far, "{t}");
    }
    assert_eq!(
        [Tier::Dram, Tier::Far, Tier::Gpu].map(Tier::name),
        ["dram", "far", "gpu"]
    );
}

/// The cores of `cpus` on `topo`.
fn cores_of(topo: &Topology, cpus: &[usize]) -> Vec<usize> {
    let p = Places::of(topo, cpus);
    cpus.iter().map(|&c| p.get(c).unwrap().core).collect()
}

#[test]
fn the_guest_splits_into_one_victim_and_one_aggressor_cpu() {
    let topo = Server::guest_2vcpu_amd().topology();
    let s = split::split(&topo, &[0, 1]).unwrap();
    assert_eq!(s.victim, [0]);
    assert_eq!(s.aggressor, [1]);
    assert_eq!(s.cores, (1, 1));
    // The run's first CPU is the victim's, whatever its number.
    assert_eq!(split::split(&topo, &[1, 0]).unwrap().victim, [1]);
}

#[test]
fn smt_siblings_stay_on_one_side() {
    // 32 CPUs, CPU c on core c mod 16: c and c + 16 are siblings.
    let topo = Server::intel_2s_snc().topology();
    let cpus: Vec<usize> = (0..32).collect();
    let s = split::split(&topo, &cpus).unwrap();
    assert_eq!(s.cores, (8, 8));
    assert_eq!(s.victim.len() + s.aggressor.len(), 32);
    let (v, a) = (cores_of(&topo, &s.victim), cores_of(&topo, &s.aggressor));
    assert!(v.iter().all(|c| !a.contains(c)), "{v:?} / {a:?}");
    // The chasing CPU is the first CPU, its first thread; first threads before second.
    assert_eq!(s.victim[0], 0);
    assert!(s.victim[..8].iter().all(|&c| c < 16), "{:?}", s.victim);
    // Three cores: one for the victim, two for the aggressors.
    let s = split::split(&topo, &[0, 16, 1, 17, 2]).unwrap();
    assert_eq!(s.cores, (1, 2));
    assert_eq!(s.victim, [0, 16]);
    assert_eq!(s.aggressor.len(), 3);
}

#[test]
fn fewer_than_two_cores_is_a_reason() {
    let topo = Server::intel_2s_snc().topology();
    for cpus in [vec![0, 16], vec![3]] {
        let e = split::split(&topo, &cpus).unwrap_err();
        assert!(e.contains("two cores") && e.contains("1 core(s)"), "{e}");
    }
}

#[test]
fn ratios_are_together_over_alone_and_noisy_from_either_side() {
    let quiet = |v| Figure::new(v, None);
    let r = ratio(&quiet(150.0), &quiet(100.0)).unwrap();
    assert!((r.value - 1.5).abs() < 1e-12);
    assert_eq!(r.noisy, None);
    let r = ratio(&quiet(3.0), &Figure::new(4.0, Some("preempted".into()))).unwrap();
    assert!((r.value - 0.75).abs() < 1e-12);
    assert_eq!(r.noisy.as_deref(), Some("alone: preempted"));
    let r = ratio(&Figure::new(3.0, Some("run queue".into())), &quiet(4.0)).unwrap();
    assert_eq!(r.noisy.as_deref(), Some("together: run queue"));
    let both = ratio(
        &Figure::new(3.0, Some("b".into())),
        &Figure::new(4.0, Some("a".into())),
    )
    .unwrap();
    assert_eq!(both.noisy.as_deref(), Some("alone: a; together: b"));
    // No ratio from an alone figure that is not a positive number.
    for alone in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(ratio(&quiet(1.0), &quiet(alone)).is_none(), "{alone}");
    }
    assert!(ratio(&quiet(f64::NAN), &quiet(1.0)).is_none());
    assert_eq!(split::join_noisy(&[None, None]), None);
}

#[test]
fn each_tier_pair_takes_its_first_target_pair_a_target_under_itself_first() {
    use Tier::{Dram as D, Far as F};
    // anon and thp: one DRAM, the baseline anon under anon.
    assert_eq!(key_pairs(&[D, D]), vec![((D, D), (0, 0))]);
    assert_eq!(
        key_pairs(&[D, F]),
        vec![
            ((D, D), (0, 0)),
            ((D, F), (0, 1)),
            ((F, F), (1, 1)),
            ((F, D), (1, 0)),
        ]
    );
    // A far target first: its baseline first, DRAM under DRAM from the DRAM target.
    assert_eq!(
        key_pairs(&[F, D, F]),
        vec![
            ((F, F), (0, 0)),
            ((F, D), (0, 1)),
            ((D, D), (1, 1)),
            ((D, F), (1, 0)),
        ]
    );
    assert!(key_pairs(&[]).is_empty());
}

#[test]
fn every_key_is_registered_as_a_ratio() {
    for v in [Tier::Dram, Tier::Far] {
        for a in [Tier::Dram, Tier::Far, Tier::Gpu] {
            for what in ["lat", "bw"] {
                let k = key(v, a, what);
                let def = bench_core::keys::lookup(&k).unwrap_or_else(|| panic!("{k}"));
                assert_eq!(def.unit, bench_core::keys::Unit::Ratio, "{k}");
                assert_eq!(def.benchmark, NAME, "{k}");
            }
        }
    }
    assert_eq!(
        key(Tier::Dram, Tier::Far, "lat"),
        "xtier_dram_under_far_lat_ratio"
    );
}

fn bench(targets: Vec<TargetSpec>) -> InterferenceBench {
    InterferenceBench {
        targets,
        mixes: vec![Mix::Read, Mix::R1W1],
        gpus: Ok(0),
        dma: Dma::Absent("no GPU here".into()),
    }
}

fn guest_ctx(cpus: Vec<usize>) -> Context {
    Context {
        topology: Server::guest_2vcpu_amd().topology(),
        cpus,
        ..Context::quick_local()
    }
}

#[test]
fn the_plan_counts_every_point_and_the_memory_every_region() {
    let ctx = guest_ctx(vec![0, 1]);
    let b = bench(vec![TargetSpec::Anon, TargetSpec::Thp]);
    let c = b.cost(&ctx, None);
    // Regions, 2 chains, 2 + 2 victim points alone, 2 x 2 aggressor points alone, and
    // 2 x 2 x 2 pairs of a latency and a bandwidth point.
    assert_eq!(c.count(), 1 + 2 + 4 + 4 + 16);
    assert!(c.seconds() > 0.0 && c.seconds().is_finite());
    let need = b.memory(&ctx, &TargetSpec::Anon);
    let split = split::split(&ctx.topology, &ctx.cpus).unwrap();
    let regions: usize = b
        .targets
        .iter()
        .map(|t| t.mapped_bytes(b.layout(&ctx, t, &split).len, &ctx.topology))
        .sum();
    assert_eq!(need.on_target_bytes, regions);
    assert!(need.bytes > regions, "chain scratch and samples beside");
    let l = b.layout(&ctx, &TargetSpec::Anon, &split);
    assert!(l.victim_each >= MIN_SLICE_BYTES && l.victim_each.is_multiple_of(4096));
    assert_eq!(l.len, l.span + l.victim_each + l.aggressor_each);
    // One CPU: nothing planned, nothing mapped.
    let one = guest_ctx(vec![0]);
    assert_eq!(b.cost(&one, None).count(), 0);
    assert_eq!(b.memory(&one, &TargetSpec::Anon).bytes, 0);
    assert_eq!(b.label(), "anon+thp");
}

#[test]
fn one_cpu_is_skipped_with_the_reason() {
    let ctx = guest_ctx(vec![0]);
    match bench(vec![TargetSpec::Anon]).run(&ctx, Input::Device) {
        Err(NotRun::Skipped { reason }) => assert!(reason.contains("two cores"), "{reason}"),
        Err(NotRun::Failed(e)) => panic!("failed: {e}"),
        Ok(_) => panic!("ran on one CPU"),
    }
}

#[test]
fn all_takes_it_with_two_targets_or_a_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let plan = |s: &Server, targets: Vec<TargetSpec>| {
        let root = dir.path().join(s.name.replace(['/', ' '], "_"));
        bench_core::topology::fixtures::write_server(&root, s).unwrap();
        let opts = Options {
            cpus: vec![0, 1],
            targets,
            sysfs: Some(root),
            ..Options::default()
        };
        let a = InterferenceArgs { mix: vec![] };
        (a.plan_all(&opts).unwrap(), a.plan(&opts).unwrap())
    };
    let guest = Server::guest_2vcpu_amd();
    let (all, own) = plan(&guest, vec![TargetSpec::Anon]);
    assert!(all.benchmarks.is_empty() && all.skipped.is_empty());
    assert_eq!(
        own.benchmarks.len(),
        1,
        "the command itself runs the baseline"
    );
    let (all, _) = plan(&guest, vec![TargetSpec::Anon, TargetSpec::Thp]);
    assert_eq!(all.benchmarks.len(), 1);
    assert_eq!(all.benchmarks[0].name(), NAME);
    // A GPU on the bus: part of `all` with one target, its column skipped with the reason.
    let (all, _) = plan(&Server::h200_host(), vec![TargetSpec::Anon]);
    assert_eq!(all.benchmarks.len(), 1);
    let gpu = InterferenceArgs { mix: vec![] }.bench(&Options {
        sysfs: Some(
            dir.path()
                .join(Server::h200_host().name.replace(['/', ' '], "_")),
        ),
        ..Options::default()
    });
    assert_eq!(gpu.gpus, Ok(1));
    // Planned for that machine (--sysfs): priced, never measured, said so.
    assert!(matches!(gpu.dma, Dma::Planned(1)), "{:?}", gpu.dma);
    let s = gpu.dma.skipped().unwrap();
    assert!(s.reason.contains("another machine"), "{}", s.reason);
    // Default targets: anon and every far node.
    let cxl = Server::cxl_host().topology();
    let far = cxl.nodes.iter().find(|n| n.cpus.is_empty()).unwrap().id;
    assert_eq!(
        targets_of(&Options::default(), &cxl),
        vec![TargetSpec::Anon, TargetSpec::Node(far)]
    );
}

#[test]
fn each_victim_tier_is_keyed_under_the_gpu_copying_its_first_target() {
    use Tier::{Dram as D, Far as F};
    assert_eq!(gpu_key_victims(&[D, D]), vec![(D, 0)]);
    assert_eq!(gpu_key_victims(&[F, D, F, D]), vec![(F, 0), (D, 1)]);
    assert!(gpu_key_victims(&[]).is_empty());
    for v in [Tier::Dram, Tier::Far] {
        for what in ["lat", "bw"] {
            let k = key(v, Tier::Gpu, what);
            assert_eq!(k, format!("xtier_{}_under_gpu_{what}_ratio", v.name()));
            let def = bench_core::keys::lookup(&k).unwrap_or_else(|| panic!("{k}"));
            assert_eq!(def.name, format!("xtier_{{victim}}_under_gpu_{what}_ratio"));
        }
    }
}

/// A DMA aggressor that moves nothing: its session runs the victim's side and reports
/// the same recorded batches (GB/s) every time, h2d 10, d2h 8; or refuses to attach.
#[derive(Debug)]
struct FakeDma {
    refuse: Option<&'static str>,
}

struct FakeSession;

impl DmaAggressor for FakeDma {
    fn name(&self) -> String {
        "gpu:7".into()
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"gpu": "Test DMA", "victim": "never overrides"})
    }
    fn copy_bytes(&self, _: &bench_core::effort::Effort) -> usize {
        4 * MIB
    }
    fn device_bytes(&self, _: &bench_core::effort::Effort) -> usize {
        4 * MIB
    }
    fn attach<'m>(
        &'m self,
        host: &'m mut [u8],
        _: &bench_core::effort::Effort,
    ) -> Result<Box<dyn DmaSession + 'm>, String> {
        assert!(host.len().is_multiple_of(4 * MIB), "whole copies");
        match self.refuse {
            Some(why) => Err(why.into()),
            None => Ok(Box::new(FakeSession)),
        }
    }
}

impl DmaSession for FakeSession {
    fn describe(&self) -> String {
        "test copies".into()
    }
    fn copy_beside(
        &mut self,
        dir: DmaDir,
        _cpu: usize,
        beside: &mut dyn FnMut(),
    ) -> Result<DmaRate, String> {
        beside();
        let gbs = if dir == DmaDir::H2d { 10.0 } else { 8.0 };
        Ok(DmaRate {
            batch_gbs: vec![gbs; 4],
            bytes: 4 << 20,
            timed_ns: (4 << 20) as f64 / gbs,
        })
    }
}

#[derive(Debug)]
struct Probe(Result<(), &'static str>);

impl DmaProbe for Probe {
    fn find(&self) -> Result<Arc<dyn DmaAggressor>, String> {
        self.0
            .map(|()| Arc::new(FakeDma { refuse: None }) as Arc<dyn DmaAggressor>)
            .map_err(String::from)
    }
}

#[test]
fn the_gpu_column_says_why_it_is_not_measured() {
    let with = |probe: Option<Probe>, sysfs: bool| Options {
        dma: probe.map(|p| Arc::new(p) as Arc<dyn DmaProbe>),
        sysfs: sysfs.then(|| "/nonexistent".into()),
        ..Options::default()
    };
    let reason = |d: Dma| match d {
        Dma::Absent(r) => {
            let s = d_skipped(&Dma::Absent(r.clone()));
            assert_eq!(s.target, "gpu");
            r
        }
        other => panic!("{other:?}"),
    };
    // No probe built in, no GPU on the bus.
    let r = reason(Dma::of(&with(None, false), &Ok(0)));
    assert!(
        r.starts_with("no GPU: no NVIDIA GPU on the PCI bus") && r.contains("no GPU driver probe"),
        "{r}"
    );
    // GPUs on the bus, the driver not loadable: its words.
    let no_lib = "no CUDA driver library: libcuda could not be loaded";
    let r = reason(Dma::of(&with(Some(Probe(Err(no_lib))), false), &Ok(2)));
    assert!(
        r.contains("2 NVIDIA GPU(s) on the PCI bus") && r.contains(no_lib),
        "{r}"
    );
    let r = reason(Dma::of(
        &with(Some(Probe(Err(no_lib))), false),
        &Err("unreadable".into()),
    ));
    assert!(
        r.contains("not probed") && r.contains("unreadable") && r.contains(no_lib),
        "{r}"
    );
    // Found: measured, nothing skipped.
    let found = Dma::of(&with(Some(Probe(Ok(()))), false), &Ok(0));
    assert!(matches!(found, Dma::Found(_)) && found.skipped().is_none());
    // Another machine's plan: never probed here.
    assert!(matches!(
        Dma::of(&with(Some(Probe(Ok(()))), true), &Ok(1)),
        Dma::Planned(1)
    ));
    assert!(matches!(
        Dma::of(&with(Some(Probe(Ok(()))), true), &Ok(0)),
        Dma::Absent(_)
    ));
}

fn d_skipped(d: &Dma) -> bench_core::params::Skipped {
    d.skipped().expect("a column not measured is skipped")
}

#[test]
fn the_plan_prices_the_gpu_cells_and_their_memory_is_on_the_gpu() {
    let ctx = guest_ctx(vec![0, 1]);
    let cpu_only = bench(vec![TargetSpec::Anon, TargetSpec::Thp]);
    let gpu = InterferenceBench {
        dma: Dma::Planned(1),
        ..cpu_only.clone()
    };
    let (c0, c1) = (cpu_only.cost(&ctx, None), gpu.cost(&ctx, None));
    // The registrations, 2 targets x 2 directions alone, 2 x 2 x 2 cells of two points.
    assert_eq!(c1.count(), c0.count() + 1 + 4 + 16);
    assert!(c1.seconds() > c0.seconds());
    let split = split::split(&ctx.topology, &ctx.cpus).unwrap();
    let copy = ctx.effort.gpu.contention_bytes;
    let l = gpu.layout(&ctx, &TargetSpec::Anon, &split);
    assert!(l.aggressor_part >= l.aggressor_each && l.aggressor_part.is_multiple_of(copy));
    assert_eq!(l.len, l.span + l.victim_each + l.aggressor_part);
    let need = gpu.memory(&ctx, &TargetSpec::Anon);
    assert!(
        need.what
            .contains("device memory on the GPU, not on the host"),
        "{}",
        need.what
    );
    assert!(cpu_only
        .memory(&ctx, &TargetSpec::Anon)
        .what
        .find("GPU")
        .is_none());
}

/// Runs the family on this machine's first two CPUs (on two cores) with `dma`; `None`
/// (said so) where it has no two cores.
fn run_with(dma: Dma) -> Option<Report> {
    let ctx = Context::quick_local();
    let cpus: Vec<usize> = ctx.cpus.iter().copied().take(2).collect();
    let ctx = ctx.with_cpus(&cpus);
    if let Err(why) = split::split(&ctx.topology, &ctx.cpus) {
        bench_core::testing::unavailable("two cores for mem.interference", &why);
        return None;
    }
    let b = InterferenceBench {
        mixes: vec![Mix::Read],
        dma,
        ..bench(vec![TargetSpec::Anon])
    };
    match b.run(&ctx, Input::Device) {
        Ok(r) => Some(r),
        Err(NotRun::Skipped { reason }) => {
            bench_core::testing::unavailable("mem.interference on this machine", &reason);
            None
        }
        Err(NotRun::Failed(e)) => panic!("failed: {e}"),
    }
}

#[test]
fn the_gpu_column_records_both_sides_and_keys_from_h2d() {
    let Some(rep) = run_with(Dma::Found(Arc::new(FakeDma { refuse: None }))) else {
        return;
    };
    let m = rep.interference.as_ref().unwrap();
    assert_eq!(m.aggressors, ["anon", "gpu:7 on anon"]);
    assert_eq!(m.mixes, ["read", "h2d", "d2h"]);
    let gpu: Vec<_> = m
        .cells
        .iter()
        .filter(|c| c.aggressor_tier == "gpu")
        .collect();
    assert_eq!(gpu.len(), 2, "{:?}", m.cells);
    for (c, gbs) in gpu.iter().zip([10.0, 8.0]) {
        assert_eq!(c.aggressor, "gpu:7 on anon");
        // The GPU's figures are the session's recorded batches (histogram precision).
        let near = |v: f64, want: f64| (v / want - 1.0).abs() < 0.01;
        assert!(near(c.aggressor_bw_alone_gbs, gbs), "{c:?}");
        assert!(near(c.aggressor_bw_together_gbs, gbs), "{c:?}");
        assert!(near(c.aggressor_bw_ratio, 1.0) && near(c.aggressor_bw_beside_chase_gbs, gbs));
        assert!(near(c.lat_ratio, c.lat_together_ns / c.lat_alone_ns));
        assert!(near(c.bw_ratio, c.bw_together_gbs / c.bw_alone_gbs));
        assert_eq!(c.from.len(), 6);
        // The victim alone is the CPU cells' own point.
        assert!(c
            .from
            .contains(&"mem.interference/anon/alone/lat".to_string()));
        let id = format!(
            "mem.interference/anon/under/gpu:7/anon/{}/aggressor-bw",
            c.mix
        );
        assert!(c.from.contains(&id), "{:?}", c.from);
    }
    let key = |k: &str| rep.params.iter().find(|p| p.key == k);
    for k in [
        "xtier_dram_under_gpu_lat_ratio",
        "xtier_dram_under_gpu_bw_ratio",
    ] {
        let p = key(k).unwrap_or_else(|| panic!("{k}"));
        let h2d = gpu.iter().find(|c| c.mix == "h2d").unwrap();
        let want = if k.contains("lat") {
            h2d.lat_ratio
        } else {
            h2d.bw_ratio
        };
        assert_eq!(p.value, want, "{k} from the h2d cell");
    }
    assert!(key("xtier_dram_under_dram_lat_ratio").is_some());
    let g = rep
        .measurements
        .iter()
        .find(|m| m.id == "mem.interference/aggressor/gpu:7/anon/d2h/alone/bw")
        .expect("the GPU alone");
    assert_eq!(g.parameters["gpu"], "Test DMA");
    assert_eq!(g.parameters["aggressor_tier"], "gpu");
    assert!(
        g.parameters["victim"].is_null(),
        "the device's parameters never override"
    );
    assert!(
        rep.skipped.iter().all(|s| s.target != "gpu"),
        "{:?}",
        rep.skipped
    );
}

#[test]
fn a_gpu_that_refuses_its_memory_is_skipped_and_the_cpu_cells_stay() {
    let refuse = "cuMemHostRegister_v2 failed: CUDA_ERROR_TEST (refused)";
    let Some(rep) = run_with(Dma::Found(Arc::new(FakeDma {
        refuse: Some(refuse),
    }))) else {
        return;
    };
    let s = rep
        .skipped
        .iter()
        .find(|s| s.target == "gpu:7 on anon")
        .expect("the GPU column's reason");
    assert_eq!(s.reason, refuse);
    let m = rep.interference.as_ref().unwrap();
    assert_eq!(m.aggressors, ["anon"]);
    assert!(m.cells.iter().all(|c| c.aggressor_tier != "gpu") && !m.cells.is_empty());
    assert!(rep.params.iter().all(|p| !p.key.contains("under_gpu")));
    // Absent: the reason in `skipped`, no cell.
    let Some(rep) = run_with(Dma::Absent("no GPU: test".into())) else {
        return;
    };
    assert!(rep
        .skipped
        .iter()
        .any(|s| s.target == "gpu" && s.reason == "no GPU: test"));
}
