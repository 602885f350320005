//! Shaping of concurrent transfers (seed 003, Observation 2: what each requester perceives
//! when k requesters hit one device): per-transfer and aggregate bandwidth from a common
//! start, fairness, completion order and whether the device interleaved the transfers or
//! ran them in turn. Pure functions, tested on synthetic timings.
//!
//! Every round is timed from one origin: on one GPU the gate event (every copy enqueued
//! behind a closed [`crate::cuda::Gate`], so none starts before all are queued); across
//! GPUs the earliest start (threads released together by a barrier). A transfer's
//! bandwidth is its bytes over the time from that origin to its end: a copy that waits
//! behind others perceives less, which is what seed 003's ranks see.

use crate::cuda::Dir;
use crate::shape::{bandwidth_gbs, merged, method_of, Labels, Timing};
use bench_core::bench::Param;
use bench_core::counters::MeasurementCounters;
use bench_core::params::{Measurement, Warning};
use bench_core::stats::Distribution;
use bench_core::units::format_size;
use serde_json::json;

/// One round of concurrent transfers, shaped.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentionSample {
    /// Each transfer's bytes over the time from the round's origin to its end, GB/s.
    pub per_transfer_gbs: Vec<f64>,
    /// All bytes over the time from the origin to the last end, GB/s.
    pub aggregate_gbs: f64,
    /// Each transfer's share of the summed per-transfer bandwidth (sums to 1).
    pub shares: Vec<f64>,
    /// `k x` the smallest share: 1 when the device is shared evenly, towards 0 when one
    /// transfer starves or waits behind the others.
    pub share_min_ratio: f64,
    /// Fraction of the round during which every transfer was in flight (last start to
    /// first end over origin to last end; 0 when they did not all overlap).
    pub overlap: f64,
    /// Transfer indices in the order they completed.
    pub order: Vec<usize>,
    /// First end over last end, both from the origin: 1/k when the transfers ran one
    /// after another, about 1 when the device interleaved them.
    pub first_end_ratio: f64,
}

/// Shapes one round of `k` transfers of `bytes_each` from their (start, end) times in ns
/// after the round's origin. `None` for no transfers, an end not after the origin, or a
/// start after its end.
pub fn contention_sample(intervals_ns: &[(f64, f64)], bytes_each: u64) -> Option<ContentionSample> {
    if intervals_ns.is_empty() || intervals_ns.iter().any(|&(s, e)| s.is_nan() || s > e) {
        return None;
    }
    let per: Vec<f64> = intervals_ns
        .iter()
        .map(|&(_, e)| bandwidth_gbs(bytes_each, e))
        .collect::<Option<_>>()?;
    let max = |f: fn(&(f64, f64)) -> f64| intervals_ns.iter().map(f).fold(f64::MIN, f64::max);
    let min = |f: fn(&(f64, f64)) -> f64| intervals_ns.iter().map(f).fold(f64::MAX, f64::min);
    let (last_start, first_end, last_end) = (max(|x| x.0), min(|x| x.1), max(|x| x.1));
    let k = intervals_ns.len();
    let aggregate_gbs = bandwidth_gbs(bytes_each * k as u64, last_end)?;
    let sum: f64 = per.iter().sum();
    let shares: Vec<f64> = per.iter().map(|b| b / sum).collect();
    let min_share = shares.iter().copied().fold(f64::INFINITY, f64::min);
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| intervals_ns[a].1.total_cmp(&intervals_ns[b].1));
    Some(ContentionSample {
        per_transfer_gbs: per,
        aggregate_gbs,
        share_min_ratio: k as f64 * min_share,
        shares,
        overlap: ((first_end - last_start.max(0.0)) / last_end).clamp(0.0, 1.0),
        order,
        first_end_ratio: first_end / last_end,
    })
}

/// How a device served k concurrent transfers of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// One transfer: nothing to share.
    Alone,
    /// All finished close together (the first after at least `sqrt(1/k)` of the round).
    Interleaved,
    /// They finished one after another (near t, 2t, .., kt): one engine ran them in turn.
    InTurn,
}

impl Sharing {
    /// The verdict for a first-end ratio of `k` transfers: the nearer (on a log scale) of
    /// 1/k (in turn) and 1 (interleaved).
    pub fn of(first_end_ratio: f64, k: usize) -> Sharing {
        if k < 2 {
            Sharing::Alone
        } else if first_end_ratio >= (1.0 / k as f64).sqrt() {
            Sharing::Interleaved
        } else {
            Sharing::InTurn
        }
    }

    /// `alone`, `interleaved`, `in turn`.
    pub fn name(self) -> &'static str {
        match self {
            Sharing::Alone => "alone",
            Sharing::Interleaved => "interleaved",
            Sharing::InTurn => "in turn",
        }
    }
}

/// The directions of the transfers of one contention point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Every transfer in this direction.
    One(Dir),
    /// Half each way at once (transfer `i`: host to device when `i` is even): seed 003's
    /// "one reads while the other writes".
    Mixed,
}

impl Flow {
    /// The direction of transfer `i`.
    pub fn dir_of(self, i: usize) -> Dir {
        match self {
            Flow::One(d) => d,
            Flow::Mixed if i.is_multiple_of(2) => Dir::H2d,
            Flow::Mixed => Dir::D2h,
        }
    }

    /// `h2d`, `d2h`, `mixed` (ids and keys).
    pub fn name(self) -> &'static str {
        match self {
            Flow::One(d) => d.name(),
            Flow::Mixed => "mixed",
        }
    }
}

/// One contention configuration and its rounds.
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct ContentionPoint {
    /// Directions of the transfers.
    pub flow: Flow,
    /// Concurrent streams on one device (`devices.len() == 1`), or one stream on each of
    /// `devices`.
    pub streams: usize,
    /// Device ordinals taking part.
    pub devices: Vec<usize>,
    /// Bytes of each transfer.
    pub bytes_each: usize,
    /// How the rounds were timed.
    pub timing: Timing,
    pub rounds: Vec<ContentionSample>,
    /// Counter evidence of the rounds' section (per round).
    pub counters: Option<MeasurementCounters>,
}

impl ContentionPoint {
    fn label(&self) -> String {
        if self.devices.len() > 1 {
            format!("gpus{}", self.devices.len())
        } else {
            format!("k{}", self.streams)
        }
    }

    fn transfers(&self) -> usize {
        self.devices.len().max(self.streams)
    }

    /// Per-transfer bandwidths of every round, of the transfers in `dir`.
    fn per_transfer(&self, dir: Dir) -> Vec<f64> {
        let flow = self.flow;
        self.rounds
            .iter()
            .flat_map(|r| {
                r.per_transfer_gbs
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| flow.dir_of(*i) == dir)
                    .map(|(_, v)| *v)
            })
            .collect()
    }

    /// The median round's first-end ratio, its verdict and its completion order.
    fn sharing(&self) -> Option<(f64, Sharing, Vec<usize>)> {
        let mut rs: Vec<&ContentionSample> = self.rounds.iter().collect();
        rs.sort_by(|a, b| a.first_end_ratio.total_cmp(&b.first_end_ratio));
        let mid = rs.get(rs.len() / 2)?;
        let r = mid.first_end_ratio;
        Some((r, Sharing::of(r, self.transfers()), mid.order.clone()))
    }
}

/// One measured series of a point, before it becomes a [`Measurement`].
struct Series {
    suffix: String,
    samples: Vec<f64>,
    unit: &'static str,
    meaning: String,
}

/// The series of a point: per transfer (one per direction of a mixed point), aggregate,
/// smallest share and first-end ratio.
fn series(p: &ContentionPoint) -> Vec<Series> {
    let origin = if p.timing == Timing::Events {
        "the gate that released them all"
    } else {
        "the earliest start"
    };
    let mut out = Vec::new();
    let per_meaning = format!("each transfer's bytes over the time from {origin} to its end");
    match p.flow {
        Flow::One(d) => out.push(Series {
            suffix: "per_transfer".into(),
            samples: p.per_transfer(d),
            unit: "GB/s",
            meaning: per_meaning,
        }),
        Flow::Mixed => {
            for d in Dir::ALL {
                out.push(Series {
                    suffix: format!("{}_per_transfer", d.name()),
                    samples: p.per_transfer(d),
                    unit: "GB/s",
                    meaning: format!("{} transfers only: {per_meaning}", d.name()),
                });
            }
        }
    }
    out.push(Series {
        suffix: "aggregate".into(),
        samples: p.rounds.iter().map(|r| r.aggregate_gbs).collect(),
        unit: "GB/s",
        meaning: format!("all bytes over the time from {origin} to the last end"),
    });
    out.push(Series {
        suffix: "share_min".into(),
        samples: p.rounds.iter().map(|r| r.share_min_ratio).collect(),
        unit: "ratio",
        meaning: "k x the smallest share of the summed per-transfer bandwidth (1 = even)".into(),
    });
    out.push(Series {
        suffix: "first_end_ratio".into(),
        samples: p.rounds.iter().map(|r| r.first_end_ratio).collect(),
        unit: "ratio",
        meaning: format!("the first end over the last end, both from {origin} (1/k: the transfers ran in turn; about 1: interleaved)"),
    });
    out
}

/// Measurements of contention points (each series a distribution over rounds) and, with
/// `key_prefix`, params from the one-device points timed with events:
/// `<p>_<dir>_k<k>_bw_gbs` (p50 per-transfer bandwidth with k concurrent),
/// `<p>_<dir>_k<k>_agg_bw_gbs` (p50 aggregate) for k > 1,
/// `<p>_<dir>_share_min_ratio` (p50 of k x smallest share at the largest k), and for the
/// mixed points `<p>_mixed_<dir>_k<k>_bw_gbs` and `<p>_mixed_k<k>_agg_bw_gbs`. A device
/// that ran one direction's transfers in turn raises a `gpu_in_turn` warning; transfers
/// on several GPUs that overlapped for less than half of a round (median) a `gpu_overlap`
/// one.
pub fn contention_report(
    points: &[ContentionPoint],
    l: &Labels,
    key_prefix: Option<&str>,
) -> (Vec<Measurement>, Vec<Param>, Vec<Warning>) {
    let mut ms = Vec::new();
    let mut params = Vec::new();
    let mut warnings = Vec::new();
    let mut share_at_max: [Option<(usize, f64, String)>; 2] = [None, None];
    for p in points {
        let overlap: Vec<f64> = p.rounds.iter().map(|r| r.overlap).collect();
        let overlap_p50 = bench_core::stats::median(&overlap).unwrap_or(0.0);
        let n = p.transfers();
        let sharing = p.sharing();
        let base = merged(
            &l.parameters,
            json!({
                "dir": p.flow.name(),
                "streams": p.streams,
                "devices": p.devices,
                "transfers": n,
                "bytes_each": p.bytes_each,
                "timing": p.timing.name(),
                "overlap_p50": overlap_p50,
                "sharing": sharing.as_ref().map(|s| s.1.name()),
                "completion_order": sharing.as_ref().map(|s| s.2.clone()),
            }),
        );
        let what = describe(p, &l.memory);
        let prefix = format!("{}/{}/{}", l.id_prefix, p.flow.name(), p.label());
        let mut ids = std::collections::BTreeMap::new();
        for s in series(p) {
            let Some(d) = Distribution::from_samples(&s.samples) else {
                continue;
            };
            let id = format!("{prefix}/{}", s.suffix);
            ids.insert(s.suffix.clone(), (id.clone(), d.p50));
            ms.push(Measurement {
                id,
                benchmark: l.bench.clone(),
                target: l.target.clone(),
                parameters: base.clone(),
                unit: s.unit.into(),
                method: method_of(p.timing, &l.host_timer, &format!("{}; {what}", s.meaning)),
                distribution: d,
                placement: l.placement.clone(),
                counters: p.counters.clone(),
            });
        }
        warnings.extend(point_warnings(p, &what, overlap_p50, sharing.as_ref()));
        let Some(kp) = key_prefix else { continue };
        if p.devices.len() > 1 || p.timing != Timing::Events || p.streams < 2 {
            continue;
        }
        let k = p.streams;
        let mut key = |suffix: &str, name: String, meaning: String| {
            if let Some((id, v)) = ids.get(suffix) {
                params.push(Param::new(name, *v, &l.target, meaning, vec![id.clone()]));
            }
        };
        match p.flow {
            Flow::One(dir) => {
                let d = dir.name();
                key("per_transfer", format!("{kp}_{d}_k{k}_bw_gbs"), format!("p50 per-transfer bandwidth (bytes / time from the common start to its end) of {what}"));
                key(
                    "aggregate",
                    format!("{kp}_{d}_k{k}_agg_bw_gbs"),
                    format!("p50 aggregate bandwidth of {what}"),
                );
                if let Some((id, v)) = ids.get("share_min") {
                    let slot = &mut share_at_max[usize::from(dir == Dir::D2h)];
                    if slot.as_ref().is_none_or(|s| k >= s.0) {
                        *slot = Some((k, *v, id.clone()));
                    }
                }
            }
            Flow::Mixed => {
                for dir in Dir::ALL {
                    let d = dir.name();
                    key(
                        &format!("{d}_per_transfer"),
                        format!("{kp}_mixed_{d}_k{k}_bw_gbs"),
                        format!("p50 per-transfer bandwidth of the {d} transfers of {what}"),
                    );
                }
                key(
                    "aggregate",
                    format!("{kp}_mixed_k{k}_agg_bw_gbs"),
                    format!("p50 aggregate bandwidth, both directions, of {what}"),
                );
            }
        }
    }
    if let Some(kp) = key_prefix {
        for (dir, s) in Dir::ALL.iter().zip(share_at_max) {
            if let Some((k, v, id)) = s {
                params.push(Param::new(
                    format!("{kp}_{}_share_min_ratio", dir.name()),
                    v,
                    &l.target,
                    format!("p50 over rounds of k x the smallest share among k = {k} concurrent {} transfers on one GPU, timed from a common start (1 = bandwidth shared evenly; 1/H(k) = in turn; towards 0 = a transfer starved)", dir.name()),
                    vec![id],
                ));
            }
        }
    }
    (ms, params, warnings)
}

/// "k concurrent h2d copies of 64M each (k streams on GPU 0), each on its own range of ...".
fn describe(p: &ContentionPoint, memory: &str) -> String {
    let n = p.transfers();
    let who = if p.devices.len() > 1 {
        format!("one stream on each of GPUs {:?}", p.devices)
    } else {
        format!(
            "{} streams on GPU {}",
            p.streams,
            p.devices.first().copied().unwrap_or(0)
        )
    };
    let dirs = match p.flow {
        Flow::One(d) => d.name().to_string(),
        Flow::Mixed => format!("{} h2d and {} d2h", n.div_ceil(2), n / 2),
    };
    let gate = if p.timing == Timing::Events {
        ", all enqueued behind one gate and released together"
    } else {
        ", released together by a barrier"
    };
    format!(
        "{n} concurrent {dirs} copies of {} each ({who}{gate}), each on its own range of {memory}",
        format_size(p.bytes_each)
    )
}

fn point_warnings(
    p: &ContentionPoint,
    what: &str,
    overlap_p50: f64,
    sharing: Option<&(f64, Sharing, Vec<usize>)>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let one_device = p.devices.len() <= 1;
    if let (Flow::One(_), true, Some((r, Sharing::InTurn, _))) = (p.flow, one_device, sharing) {
        out.push(Warning {
            code: "gpu_in_turn".into(),
            message: format!(
                "{what}: the device ran them one after another (the first finished after {:.0}% of the round; in turn gives 1/k = {:.0}%): each copy's bandwidth depends on its place in the queue, and the per-transfer figures are what each requester perceived from the common start",
                r * 100.0,
                100.0 / p.transfers() as f64
            ),
            remediation: "nothing to fix in the run: this is how the device shares one direction (seed 003, Observation 1: one copy engine per direction); models that assume even sharing should take the aggregate over k".into(),
        });
    }
    if p.devices.len() > 1 && overlap_p50 < 0.5 {
        out.push(Warning {
            code: "gpu_overlap".into(),
            message: format!(
                "{what}: the transfers were all in flight for only {:.0}% of a round (median), so the per-transfer figures mix contention with issue skew",
                overlap_p50 * 100.0
            ),
            remediation: "use a larger --contention-size so that each transfer lasts much longer than it takes to start them all".into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::tests::labels;

    /// k transfers of 1 GB from the gate: `in_turn` ends at t, 2t, .., kt; else all at kt.
    fn round(k: usize, t_ns: f64, in_turn: bool) -> ContentionSample {
        let iv: Vec<(f64, f64)> = (0..k)
            .map(|i| {
                if in_turn {
                    (i as f64 * t_ns, (i + 1) as f64 * t_ns)
                } else {
                    (0.0, k as f64 * t_ns)
                }
            })
            .collect();
        contention_sample(&iv, 1_000_000_000).unwrap()
    }

    fn cpoint(flow: Flow, k: usize, engine_gbs: f64, in_turn: bool) -> ContentionPoint {
        ContentionPoint {
            flow,
            streams: k,
            devices: vec![0],
            bytes_each: 1_000_000_000,
            timing: Timing::Events,
            rounds: (0..5)
                .map(|_| round(k, 1e9 / engine_gbs, in_turn))
                .collect(),
            counters: None,
        }
    }

    #[test]
    fn even_sharing_gives_equal_shares_and_interleaved() {
        let s = round(2, 50e6, false); // 20 GB/s engine, each 10
        assert!((s.per_transfer_gbs[0] - 10.0).abs() < 1e-9);
        assert!((s.aggregate_gbs - 20.0).abs() < 1e-9);
        assert!((s.share_min_ratio - 1.0).abs() < 1e-9);
        assert!((s.overlap - 1.0).abs() < 1e-9);
        assert_eq!(Sharing::of(s.first_end_ratio, 2), Sharing::Interleaved);
    }

    #[test]
    fn transfers_in_turn_perceive_their_place_in_the_queue() {
        // One 20 GB/s engine, 4 copies one after another: 20, 10, 6.7, 5 GB/s from the gate.
        let s = round(4, 50e6, true);
        let want = [20.0, 10.0, 20.0 / 3.0, 5.0];
        for (v, w) in s.per_transfer_gbs.iter().zip(want) {
            assert!((v - w).abs() < 1e-9, "{:?}", s.per_transfer_gbs);
        }
        assert!((s.aggregate_gbs - 20.0).abs() < 1e-9);
        assert_eq!(s.order, vec![0, 1, 2, 3]);
        assert!((s.first_end_ratio - 0.25).abs() < 1e-12);
        assert_eq!(s.overlap, 0.0);
        // k x min share = 4 x 5 / 41.67 = 1 / H(4).
        assert!((s.share_min_ratio - 1.0 / (1.0 + 0.5 + 1.0 / 3.0 + 0.25)).abs() < 1e-9);
        assert_eq!(Sharing::of(s.first_end_ratio, 4), Sharing::InTurn);
    }

    #[test]
    fn bad_rounds_are_dropped() {
        assert!(contention_sample(&[], 100).is_none());
        assert!(contention_sample(&[(0.0, 0.0)], 100).is_none());
        assert!(contention_sample(&[(5.0, 1.0)], 100).is_none());
        assert!(contention_sample(&[(f64::NAN, 1.0)], 100).is_none());
        assert!(contention_sample(&[(0.0, 10.0), (20.0, 30.0)], 100).is_some());
    }

    #[test]
    fn verdicts_split_at_the_geometric_mean() {
        assert_eq!(Sharing::of(0.5, 1), Sharing::Alone);
        assert_eq!(Sharing::of(0.70, 2), Sharing::InTurn);
        assert_eq!(Sharing::of(0.71, 2), Sharing::Interleaved);
        assert_eq!(Sharing::of(0.125, 8), Sharing::InTurn);
        assert_eq!(Sharing::of(0.9, 8), Sharing::Interleaved);
    }

    #[test]
    fn keys_of_an_even_device_name_k_and_share() {
        let points = vec![
            cpoint(Flow::One(Dir::H2d), 1, 20.0, false),
            cpoint(Flow::One(Dir::H2d), 2, 20.0, false),
            cpoint(Flow::One(Dir::H2d), 4, 20.0, false),
        ];
        let (ms, params, warnings) = contention_report(&points, &labels(), Some("gpu_reg"));
        assert_eq!(ms.len(), 12);
        assert!(warnings.is_empty(), "{warnings:?}");
        let get = |k: &str| params.iter().find(|p| p.key == k).map(|p| p.value);
        assert!((get("gpu_reg_h2d_k2_bw_gbs").unwrap() - 10.0).abs() < 0.02);
        assert!((get("gpu_reg_h2d_k4_bw_gbs").unwrap() - 5.0).abs() < 0.01);
        assert!((get("gpu_reg_h2d_k4_agg_bw_gbs").unwrap() - 20.0).abs() < 0.05);
        assert!((get("gpu_reg_h2d_share_min_ratio").unwrap() - 1.0).abs() < 0.01);
        assert_eq!(
            get("gpu_reg_h2d_k1_bw_gbs"),
            None,
            "k = 1 is the sweep's key"
        );
        assert_eq!(get("gpu_reg_d2h_share_min_ratio"), None);
        let m = ms
            .iter()
            .find(|m| m.id == "gpu.bw/gpu:0/pinned/h2d/k4/per_transfer")
            .unwrap();
        assert_eq!(m.distribution.n, 20, "every transfer of every round");
        assert_eq!(m.parameters["streams"], 4);
        assert_eq!(m.parameters["sharing"], "interleaved");
        for p in &params {
            assert!(
                p.info.from.iter().all(|f| ms.iter().any(|m| &m.id == f)),
                "{}",
                p.key
            );
        }
    }

    #[test]
    fn a_device_that_runs_copies_in_turn_never_claims_full_bandwidth_per_copy() {
        // The H200's behaviour: 8 copies, one engine of 55 GB/s, one after another.
        let points = vec![cpoint(Flow::One(Dir::H2d), 8, 55.0, true)];
        let (ms, params, warnings) = contention_report(&points, &labels(), Some("gpu_reg"));
        let get = |k: &str| params.iter().find(|p| p.key == k).unwrap().value;
        let agg = get("gpu_reg_h2d_k8_agg_bw_gbs");
        let per = get("gpu_reg_h2d_k8_bw_gbs");
        assert!((agg - 55.0).abs() < 0.1);
        // p50 of 55/i for i = 1..8: between 55/5 and 55/4; never the engine's 55.
        assert!(per > 55.0 / 8.0 && per < 0.3 * agg, "{per}");
        assert!(get("gpu_reg_h2d_share_min_ratio") < 0.4);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].code, "gpu_in_turn");
        let m = ms
            .iter()
            .find(|m| m.id.ends_with("/k8/first_end_ratio"))
            .unwrap();
        assert!((m.distribution.p50 - 0.125).abs() < 1e-9);
        assert_eq!(m.parameters["sharing"], "in turn");
        assert_eq!(
            m.parameters["completion_order"],
            json!([0, 1, 2, 3, 4, 5, 6, 7])
        );
    }

    #[test]
    fn mixed_points_key_each_direction() {
        // 2 each way on two engines of 20 GB/s, each engine shared by its two: 10 each.
        let points = vec![cpoint(Flow::Mixed, 4, 40.0, false)];
        let (ms, params, _) = contention_report(&points, &labels(), Some("gpu_reg"));
        let get = |k: &str| params.iter().find(|p| p.key == k).map(|p| p.value);
        assert!((get("gpu_reg_mixed_h2d_k4_bw_gbs").unwrap() - 10.0).abs() < 0.01);
        assert!((get("gpu_reg_mixed_d2h_k4_bw_gbs").unwrap() - 10.0).abs() < 0.01);
        assert!((get("gpu_reg_mixed_k4_agg_bw_gbs").unwrap() - 40.0).abs() < 0.05);
        assert_eq!(get("gpu_reg_mixed_share_min_ratio"), None);
        let m = ms
            .iter()
            .find(|m| m.id.ends_with("/mixed/k4/h2d_per_transfer"))
            .unwrap();
        assert_eq!(m.distribution.n, 10, "the two h2d transfers of each round");
        assert!(m.method.contains("2 h2d and 2 d2h"), "{}", m.method);
    }

    #[test]
    fn multi_gpu_points_are_measurements_only_and_skew_warns() {
        let mut p = cpoint(Flow::One(Dir::D2h), 1, 10.0, false);
        p.devices = vec![0, 1];
        p.timing = Timing::Host;
        p.rounds = (0..3)
            .map(|_| contention_sample(&[(0.0, 10.0), (20.0, 30.0)], 100).unwrap())
            .collect();
        let (ms, params, warnings) = contention_report(&[p], &labels(), Some("gpu_reg"));
        assert_eq!(ms.len(), 4);
        assert!(ms[0].id.contains("/gpus2/"));
        assert!(params.is_empty());
        assert!(
            warnings.iter().any(|w| w.code == "gpu_overlap"),
            "{warnings:?}"
        );
    }
}
