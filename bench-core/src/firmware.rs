//! What the firmware advertises beside what a run measured, and weighted interleave
//! weights from measured bandwidths: the `hmat_vs_measured` and `interleave_weights`
//! sections of params.json (the runner fills them after a run; `docs/firmware.md`).
//!
//! Both ratios read the same way: **1 = as advertised, above 1 = better than advertised,
//! 0.8 = 20 % worse**:
//! * latency: `lat_ratio` = advertised read latency / measured idle latency;
//! * bandwidth: `bw_ratio` = measured read bandwidth / advertised read bandwidth.
//!
//! The advertised figures come from the kernel's numaperf files
//! ([`crate::topology::hmat`]), bandwidth converted from the kernel's MB/s to GB/s
//! (GB = 10^9 bytes, MB = 10^6 bytes).

use serde::{Deserialize, Serialize};

/// One measured node target with what the firmware advertises for it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HmatComparison {
    /// The NUMA node the target's memory is on (`anon`: the measuring CPUs' node).
    pub node: usize,
    /// The node of the measuring CPUs (the initiator).
    pub initiator_node: usize,
    /// The access class the advertised figures come from (1: CPU initiators, else 0);
    /// `None` when the node advertises nothing.
    pub access_class: Option<u8>,
    /// Whether that class lists the initiator node (else the figures are another
    /// initiator's, e.g. the other socket's).
    pub initiator_listed: bool,
    /// Advertised read latency, ns.
    pub advertised_lat_ns: Option<f64>,
    /// Measured idle load latency, ns (the key named in `lat_key`).
    pub measured_lat_ns: Option<f64>,
    /// The params key of the measured latency (`mem_lat_ns@anon`, `cxl_lat_ns@node:1`).
    pub lat_key: Option<String>,
    /// advertised / measured latency (>= 1: as fast as advertised or faster); only when
    /// `initiator_listed`.
    pub lat_ratio: Option<f64>,
    /// Advertised read bandwidth, GB/s (the kernel's MB/s / 1000).
    pub advertised_bw_gbs: Option<f64>,
    /// Measured read bandwidth, all threads, GB/s (the key named in `bw_key`).
    pub measured_bw_gbs: Option<f64>,
    /// The params key of the measured bandwidth (`mem_bw_gbs@anon`, `cxl_bw_gbs@node:1`).
    pub bw_key: Option<String>,
    /// measured / advertised bandwidth (>= 1: as advertised or better); only when
    /// `initiator_listed`.
    pub bw_ratio: Option<f64>,
}

/// advertised / measured latency, when both are positive.
pub fn lat_ratio(advertised_ns: Option<f64>, measured_ns: Option<f64>) -> Option<f64> {
    positive_ratio(advertised_ns?, measured_ns?)
}

/// measured / advertised bandwidth, when both are positive.
pub fn bw_ratio(measured_gbs: Option<f64>, advertised_gbs: Option<f64>) -> Option<f64> {
    positive_ratio(measured_gbs?, advertised_gbs?)
}

fn positive_ratio(num: f64, den: f64) -> Option<f64> {
    (num.is_finite() && den.is_finite() && num > 0.0 && den > 0.0).then(|| num / den)
}

/// One node's weight from its measured bandwidth.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeWeight {
    /// The node.
    pub node: usize,
    /// The target its bandwidth was measured on (`anon`, `node:1`).
    pub target: String,
    /// The params key of that bandwidth.
    pub bw_key: String,
    /// Its measured read bandwidth, GB/s.
    pub bw_gbs: f64,
    /// The weight proportional to it ([`weights_from_bandwidths`]).
    pub weight: u8,
    /// The kernel's current weight for the node, `None` when the kernel has none.
    pub kernel_weight: Option<u8>,
}

/// What an interleaved target gained over plain local memory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InterleaveGain {
    /// The interleave target (`interleave:0=4,1=1`).
    pub target: String,
    /// Its read bandwidth, GB/s.
    pub bw_gbs: f64,
    /// The plain target compared with (`anon`, or the measuring CPUs' `node:N`).
    pub baseline_target: String,
    /// Its read bandwidth, GB/s.
    pub baseline_bw_gbs: f64,
    /// bw_gbs / baseline_bw_gbs (above 1: interleaving gained bandwidth).
    pub gain_ratio: f64,
}

/// Weighted interleave weights from the run's measured bandwidths, the kernel's current
/// ones, and the commands that would set them (never run by cxlchar).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InterleaveWeights {
    /// Every node measured with a read bandwidth (at least two for weights), node order.
    pub nodes: Vec<NodeWeight>,
    /// The target that measures these weights once set (`interleave:0=4,1=1`), when
    /// there are weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The shell lines (as root) that set the kernel's weights to them.
    pub commands: Vec<String>,
    /// The interleaved targets of the run, with their gain over plain local memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gains: Vec<InterleaveGain>,
}

/// Largest relative error of a weight against its bandwidth share before a finer scale
/// is tried.
pub const WEIGHT_TOLERANCE: f64 = 0.05;

/// The finest scale tried: the smallest weight is at most this.
pub const MAX_SMALLEST_WEIGHT: u32 = 10;

/// Integer weights (1..=255, the kernel's range) proportional to `bw` (all positive):
/// for the smallest weight k = 1, 2, ... 10, each weight is round(k x bw / min(bw)); the
/// first k where every weight / k is within [`WEIGHT_TOLERANCE`] of bw / min(bw) is
/// taken (else the k with the smallest largest error); weights are capped at 255 and
/// divided by their greatest common divisor. 250 and 60 GB/s give 4 and 1 (4 is within 4 % of 4.17). Empty when any
/// bandwidth is not positive.
pub fn weights_from_bandwidths(bw: &[f64]) -> Vec<u8> {
    if bw.is_empty() || bw.iter().any(|b| !(b.is_finite() && *b > 0.0)) {
        return Vec::new();
    }
    let min = bw.iter().cloned().fold(f64::INFINITY, f64::min);
    let rel: Vec<f64> = bw.iter().map(|b| b / min).collect();
    let scaled = |k: u32| -> Vec<u32> {
        rel.iter()
            .map(|r| ((r * k as f64).round() as u32).clamp(1, 255))
            .collect()
    };
    let err = |k: u32, w: &[u32]| {
        w.iter()
            .zip(&rel)
            .map(|(w, r)| ((*w as f64 / k as f64) - r).abs() / r)
            .fold(0.0, f64::max)
    };
    let tried: Vec<(f64, Vec<u32>)> = (1..=MAX_SMALLEST_WEIGHT)
        .map(|k| {
            let w = scaled(k);
            (err(k, &w), w)
        })
        .collect();
    let w = match tried.iter().find(|(e, _)| *e <= WEIGHT_TOLERANCE) {
        Some((_, w)) => w,
        // Nothing fits (a ratio beyond 255): the least wrong, the smallest k on a tie.
        None => {
            &tried
                .iter()
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("ten scales tried")
                .1
        }
    };
    let g = w.iter().fold(0, |g, &x| gcd(g, x)).max(1);
    w.iter().map(|x| (x / g) as u8).collect()
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The shell line that sets node `node`'s weight to `w` (as root).
pub fn weight_command(node: usize, w: u8) -> String {
    format!(
        "echo {w} > /{}/node{node}",
        crate::memory::interleave::WEIGHTS_DIR
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_bandwidth() {
        assert_eq!(weights_from_bandwidths(&[250.0, 60.0]), vec![4, 1]);
        assert_eq!(weights_from_bandwidths(&[100.0, 100.0]), vec![1, 1]);
        // 2.5: k = 1 gives 3 (20 % off), k = 2 gives 5 and 2.
        assert_eq!(weights_from_bandwidths(&[50.0, 20.0]), vec![5, 2]);
        // Three nodes, any order.
        assert_eq!(weights_from_bandwidths(&[30.0, 90.0, 60.0]), vec![1, 3, 2]);
        // A ratio beyond 255 is capped.
        assert_eq!(weights_from_bandwidths(&[1000.0, 1.0]), vec![255, 1]);
        assert!(weights_from_bandwidths(&[]).is_empty());
        assert!(weights_from_bandwidths(&[10.0, 0.0]).is_empty());
        assert!(weights_from_bandwidths(&[10.0, f64::NAN]).is_empty());
    }

    #[test]
    fn weights_are_in_the_kernels_range_and_reduced() {
        for bw in [[1.0, 1.7], [3.3, 7.1], [120.0, 37.0], [9.0, 3.0]] {
            let w = weights_from_bandwidths(&bw);
            assert!(w.iter().all(|&x| x >= 1));
            let g = w.iter().fold(0u32, |g, &x| gcd(g, x as u32));
            assert_eq!(g, 1, "{bw:?} -> {w:?} not reduced");
            let (r, want) = (w[0] as f64 / w[1] as f64, bw[0] / bw[1]);
            assert!((r - want).abs() <= 0.06 * want, "{bw:?} -> {w:?}");
        }
    }

    #[test]
    fn ratios_read_the_same_way() {
        // Latency 25 % above the advertised 200 ns: 0.8; bandwidth 20 % below: 0.8.
        assert_eq!(lat_ratio(Some(200.0), Some(250.0)), Some(0.8));
        assert_eq!(bw_ratio(Some(48.0), Some(60.0)), Some(0.8));
        assert_eq!(lat_ratio(None, Some(250.0)), None);
        assert_eq!(bw_ratio(Some(48.0), Some(0.0)), None);
        assert_eq!(
            weight_command(1, 3),
            "echo 3 > /sys/kernel/mm/mempolicy/weighted_interleave/node1"
        );
    }
}
