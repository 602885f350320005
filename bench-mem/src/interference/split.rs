//! The pure parts of `mem.interference`: the tier of a target, the split of the run's
//! CPUs into a victim side and an aggressor side that share no core, the ratios of
//! recorded figures with their noisy flags, and which target pair gives each tier pair's
//! keys.

use bench_core::memory::TargetSpec;
use bench_core::topology::places::Places;
use bench_core::topology::Topology;

/// Where a target's memory sits, as the interference keys name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Memory next to CPUs: `anon`, `thp`, `hugetlb`, a file, a node with CPUs, an
    /// interleave over nodes not all far.
    Dram,
    /// Far memory: a memory-only (CPU-less) node, a dax device, CXL memory, an interleave
    /// of far nodes only.
    Far,
    /// A GPU's copies (an aggressor only).
    Gpu,
}

impl Tier {
    /// The tier's name in keys (`dram`, `far`, `gpu`).
    pub fn name(self) -> &'static str {
        match self {
            Tier::Dram => "dram",
            Tier::Far => "far",
            Tier::Gpu => "gpu",
        }
    }
}

/// The tier of `target` on `topo`: far where the runner names its keys as far memory
/// ([`TargetSpec::is_far_memory`]: a CPU-less node, a dax device not on a node with CPUs,
/// an interleave of such nodes), else DRAM.
pub fn tier(target: &TargetSpec, topo: &Topology) -> Tier {
    if target.is_far_memory(topo) {
        Tier::Far
    } else {
        Tier::Dram
    }
}

/// The run's CPUs split into a victim side and an aggressor side on different cores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The victim's CPUs: the first chases (latency), all stream (bandwidth).
    pub victim: Vec<usize>,
    /// The aggressor CPUs.
    pub aggressor: Vec<usize>,
    /// Cores of each side: (victim, aggressor).
    pub cores: (usize, usize),
}

/// Splits `cpus` by core (SMT siblings are one core): the cores in the order of the run's
/// CPUs nearest the first ([`Places::nearest_first`]: the first CPU's L3, node and socket
/// before the others), the first half of them (at least one) the victim's, the rest the
/// aggressors', each side with every CPU of the run on its cores. Victim and aggressors
/// never share a core. Fewer than two cores: the reason.
pub fn split(topo: &Topology, cpus: &[usize]) -> Result<Split, String> {
    let places = Places::of(topo, cpus);
    // Cores in the order their first CPU appears nearest first, each with its CPUs.
    let mut cores: Vec<(usize, Vec<usize>)> = Vec::new();
    for cpu in places.nearest_first() {
        let core = places.get(cpu).map_or(usize::MAX - cpu, |p| p.core);
        match cores.iter_mut().find(|(c, _)| *c == core) {
            Some((_, v)) => v.push(cpu),
            None => cores.push((core, vec![cpu])),
        }
    }
    if cores.len() < 2 {
        return Err(format!(
            "needs CPUs on two cores (the victim and its aggressors never share a core); the run's CPUs {cpus:?} are on {} core(s): give CPUs of another core with --cpu",
            cores.len()
        ));
    }
    let nv = cores.len() / 2;
    let side = |r: &[(usize, Vec<usize>)]| -> Vec<usize> {
        let mut v: Vec<usize> = r.iter().flat_map(|(_, c)| c.iter().copied()).collect();
        // The first core's first thread first (the chasing CPU), then by thread.
        v.sort_by_key(|&c| {
            (
                places.get(c).map_or(0, |p| p.thread),
                cpus.iter().position(|&x| x == c),
            )
        });
        v
    };
    Ok(Split {
        victim: side(&cores[..nv]),
        aggressor: side(&cores[nv..]),
        cores: (nv, cores.len() - nv),
    })
}

/// One side's figure: its value and why it is noisy (`None`: it is not).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The value (ns or GB/s).
    pub value: f64,
    /// Why it stands on disturbed samples.
    pub noisy: Option<String>,
}

impl Figure {
    /// A figure.
    pub fn new(value: f64, noisy: Option<String>) -> Figure {
        Figure { value, noisy }
    }
}

/// together / alone, noisy when either is (the reasons of both, alone's first); `None`
/// when alone is not a positive finite number or together is not finite.
pub fn ratio(together: &Figure, alone: &Figure) -> Option<Figure> {
    if !(alone.value.is_finite() && alone.value > 0.0 && together.value.is_finite()) {
        return None;
    }
    Some(Figure {
        value: together.value / alone.value,
        noisy: join_noisy(&[
            alone.noisy.as_ref().map(|w| format!("alone: {w}")),
            together.noisy.as_ref().map(|w| format!("together: {w}")),
        ]),
    })
}

/// The reasons given, joined (`None` when none is).
pub fn join_noisy(why: &[Option<String>]) -> Option<String> {
    let v: Vec<&str> = why.iter().flatten().map(String::as_str).collect();
    (!v.is_empty()).then(|| v.join("; "))
}

/// The pairs (victim index, aggressor index) of `tiers` (one per target, in run order)
/// that give each tier pair's keys: the first pair of that tier pair, victim-major, a
/// target under itself before any other of its tier (the baseline); with the tier pair.
pub fn key_pairs(tiers: &[Tier]) -> Vec<((Tier, Tier), (usize, usize))> {
    let n = tiers.len();
    let mut out: Vec<((Tier, Tier), (usize, usize))> = Vec::new();
    let mut order: Vec<(usize, usize)> = Vec::new();
    for a in 0..n {
        order.push((a, a));
        order.extend((0..n).filter(|&b| b != a).map(|b| (a, b)));
    }
    for (a, b) in order {
        let t = (tiers[a], tiers[b]);
        if !out.iter().any(|(x, _)| *x == t) {
            out.push((t, (a, b)));
        }
    }
    out
}

/// The key of a victim tier under an aggressor tier (`xtier_dram_under_far_lat_ratio`);
/// `what` is `lat` or `bw`.
pub fn key(victim: Tier, aggressor: Tier, what: &str) -> String {
    format!(
        "xtier_{}_under_{}_{what}_ratio",
        victim.name(),
        aggressor.name()
    )
}

/// The victims of `tiers` (one per target, in run order) that give each victim tier's
/// keys under the GPU: the first target of that tier, under the GPU's copies of itself
/// (as a target under itself is its tier pair's baseline); with the tier.
pub fn gpu_key_victims(tiers: &[Tier]) -> Vec<(Tier, usize)> {
    let mut out: Vec<(Tier, usize)> = Vec::new();
    for (a, &t) in tiers.iter().enumerate() {
        if !out.iter().any(|(x, _)| *x == t) {
            out.push((t, a));
        }
    }
    out
}
