//! Result shaping of the sweeps and the latency: pure functions from timings to
//! bandwidths, measurements and params (contention: [`crate::contention`]). Nothing here touches the driver, so all of it is tested on
//! synthetic timings.
//!
//! Conventions: GB = 10^9 bytes, so bytes per nanosecond is GB/s. A sweep point holds the
//! elapsed time of each sample (a batch of `copies` back-to-back copies) twice: on the
//! GPU's clock (CUDA events around the batch) and on the host's cycle timer (from before
//! the first copy is enqueued to after the end event has completed).

use crate::cuda::Dir;
use bench_core::bench::{Param, Report, Skip};
use bench_core::counters::MeasurementCounters;
use bench_core::memory::Placement;
use bench_core::params::Measurement;
use bench_core::stats::Distribution;
use bench_core::units::format_size;
use serde_json::{json, Value};

/// Bandwidth in GB/s (10^9 B/s) of `bytes` moved in `ns` nanoseconds; `None` for a time
/// that is not positive and finite (an event pair that did not time anything).
pub fn bandwidth_gbs(bytes: u64, ns: f64) -> Option<f64> {
    (ns.is_finite() && ns > 0.0).then(|| bytes as f64 / ns)
}

/// Copy sizes from `min` multiplied by `factor` while below `max`, then `max` itself.
pub fn transfer_sizes(min: usize, max: usize, factor: usize) -> Vec<usize> {
    let factor = factor.max(2);
    let mut v = Vec::new();
    let mut s = min.max(1);
    while s < max {
        v.push(s);
        s = s.saturating_mul(factor);
    }
    v.push(max);
    v
}

/// Copies per sample: enough to move about `bytes_per_sample` (small copies are batched
/// so that one sample is long against the timers' resolution), at least 1, at most
/// `max_copies`.
pub fn copies_per_sample(size: usize, bytes_per_sample: usize, max_copies: usize) -> usize {
    (bytes_per_sample / size.max(1)).clamp(1, max_copies.max(1))
}

/// Host offset of the `i`-th copy of `size` bytes in a span of `span` bytes: consecutive
/// copies walk through the span (so that small copies do not re-read one cached range).
pub fn host_offset(i: usize, size: usize, span: usize) -> usize {
    let slots = (span / size.max(1)).max(1);
    (i % slots) * size
}

/// Splits `sizes` into those of at most `limit` bytes and the rest (each in order).
pub fn split_fitting(sizes: &[usize], limit: usize) -> (Vec<usize>, Vec<usize>) {
    sizes.iter().partition(|&&s| s <= limit)
}

/// The timings of one point of a bandwidth sweep.
#[derive(Debug, Clone, PartialEq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct SweepPoint {
    pub dir: Dir,
    /// Bytes per copy.
    pub size: usize,
    /// Copies per sample.
    pub copies: usize,
    /// Elapsed ns of each sample between CUDA events.
    pub events_ns: Vec<f64>,
    /// Elapsed ns of each sample on the host cycle timer (enqueue to completion seen).
    pub host_ns: Vec<f64>,
    /// Counter evidence of the samples' section (per copy).
    pub counters: Option<MeasurementCounters>,
}

/// How a point was timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// CUDA events recorded on the stream (the GPU's clock).
    Events,
    /// The host's calibrated cycle timer around enqueue and completion.
    Host,
}

impl Timing {
    /// `events` / `host` (ids and parameters).
    pub fn name(self) -> &'static str {
        match self {
            Timing::Events => "events",
            Timing::Host => "host",
        }
    }
}

/// What every measurement of one series shares.
#[derive(Debug, Clone)]
pub struct Labels {
    /// Benchmark name (`gpu.bw`).
    pub bench: String,
    /// Id prefix (`gpu.bw/gpu:0/pinned`).
    pub id_prefix: String,
    /// Target field (`gpu:0`, `node:1`).
    pub target: String,
    /// Host memory in words (`pinned host memory (cuMemAllocHost)`).
    pub memory: String,
    /// Parameters merged into every measurement's parameters (an object).
    pub parameters: Value,
    /// Where the host memory is.
    pub placement: Option<Placement>,
    /// The host timer, as named in methods (`Tsc`).
    pub host_timer: String,
}

pub(crate) fn merged(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(o), Value::Object(e)) = (out.as_object_mut(), extra) {
        o.extend(e);
    }
    out
}

/// The report of a benchmark whose parts failed into `skipped`: itself, or a skip with
/// every part's reason when not one measurement remains.
pub fn finished(report: Report) -> Result<Report, Skip> {
    if report.measurements.is_empty() {
        let why: Vec<String> = report.skipped.iter().map(|s| s.reason.clone()).collect();
        return Err(Skip::new(format!(
            "nothing could be measured: {}",
            why.join("; ")
        )));
    }
    Ok(report)
}

pub(crate) fn method_of(timing: Timing, host_timer: &str, what: &str) -> String {
    match timing {
        Timing::Events => format!("{what}; timed with CUDA events recorded on the stream before and after the batch (GPU clock, ~0.5 us resolution)"),
        Timing::Host => format!("{what}; timed with the host cycle timer ({host_timer}) from before the first enqueue to after the end event completed (includes enqueue and completion latency)"),
    }
}

/// Measurements of a sweep (two per point and direction: CUDA events and host timer) and,
/// with `key_prefix`, the params `<prefix>_<dir>_bw_gbs`: the p50 of the event-timed
/// bandwidth at the largest size measured in that direction.
pub fn sweep_report(
    points: &[SweepPoint],
    l: &Labels,
    key_prefix: Option<&str>,
) -> (Vec<Measurement>, Vec<Param>) {
    let mut ms = Vec::new();
    let mut params = Vec::new();
    for dir in Dir::ALL {
        let mut largest: Option<(usize, f64, String)> = None;
        for p in points.iter().filter(|p| p.dir == dir) {
            let bytes = (p.size * p.copies) as u64;
            for (timing, ns) in [(Timing::Events, &p.events_ns), (Timing::Host, &p.host_ns)] {
                let gbs: Vec<f64> = ns.iter().filter_map(|&t| bandwidth_gbs(bytes, t)).collect();
                let Some(d) = Distribution::from_samples(&gbs) else {
                    continue;
                };
                let id = format!(
                    "{}/{}/{}/{}",
                    l.id_prefix,
                    dir.name(),
                    format_size(p.size),
                    timing.name()
                );
                if timing == Timing::Events && largest.as_ref().is_none_or(|x| p.size >= x.0) {
                    largest = Some((p.size, d.p50, id.clone()));
                }
                ms.push(Measurement {
                    id,
                    benchmark: l.bench.clone(),
                    target: l.target.clone(),
                    parameters: merged(
                        &l.parameters,
                        json!({"dir": dir.name(), "size_bytes": p.size, "copies_per_sample": p.copies, "timing": timing.name()}),
                    ),
                    unit: "GB/s".into(),
                    method: method_of(
                        timing,
                        &l.host_timer,
                        &format!(
                            "bandwidth of {} back-to-back cuMemcpy{}Async copies of {} {} {}, per sample (GB = 1e9 B)",
                            p.copies,
                            if dir == Dir::H2d { "HtoD" } else { "DtoH" },
                            format_size(p.size),
                            if dir == Dir::H2d { "from" } else { "to" },
                            l.memory
                        ),
                    ),
                    distribution: d,
                    placement: l.placement.clone(),
                    counters: p.counters.clone(),
                });
            }
        }
        if let (Some(prefix), Some((size, v, id))) = (key_prefix, largest) {
            params.push(Param::new(
                format!("{prefix}_{}_bw_gbs", dir.name()),
                v,
                &l.target,
                format!(
                    "p50 of the CUDA-event-timed {} bandwidth at the largest size ({}), {}",
                    dir.name(),
                    format_size(size),
                    l.memory
                ),
                vec![id],
            ));
        }
    }
    (ms, params)
}

/// Measurement and param of the small-copy latency: each sample is one copy of `bytes`
/// enqueued and waited for with `cuStreamSynchronize`, on the host timer; the param
/// `key` (if any) is the p50 of the host-to-device series.
pub fn latency_report(
    samples_ns: &[(Dir, Vec<f64>, Option<MeasurementCounters>)],
    bytes: usize,
    l: &Labels,
    key: Option<&str>,
) -> (Vec<Measurement>, Vec<Param>) {
    let mut ms = Vec::new();
    let mut params = Vec::new();
    for (dir, ns, counters) in samples_ns {
        let Some(d) = Distribution::from_samples(ns) else {
            continue;
        };
        let id = format!("{}/{}/{}B", l.id_prefix, dir.name(), bytes);
        if let (Some(k), Dir::H2d) = (key, dir) {
            params.push(Param::new(
                k,
                d.p50,
                &l.target,
                format!("p50 of one {bytes}-byte cuMemcpyHtoDAsync from {} plus cuStreamSynchronize, back to back, on the host timer", l.memory),
                vec![id.clone()],
            ));
        }
        ms.push(Measurement {
            id,
            benchmark: l.bench.clone(),
            target: l.target.clone(),
            parameters: merged(&l.parameters, json!({"dir": dir.name(), "size_bytes": bytes, "timing": "host"})),
            unit: "ns".into(),
            method: format!(
                "one {bytes}-byte async copy {} {} enqueued, then cuStreamSynchronize, per sample, back to back; host cycle timer ({}), its overhead subtracted",
                if *dir == Dir::H2d { "from" } else { "to" },
                l.memory,
                l.host_timer
            ),
            distribution: d,
            placement: l.placement.clone(),
            counters: counters.clone(),
        });
    }
    (ms, params)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::units::{KIB, MIB};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    pub(crate) fn labels() -> Labels {
        Labels {
            bench: "gpu.bw".into(),
            id_prefix: "gpu.bw/gpu:0/pinned".into(),
            target: "gpu:0".into(),
            memory: "pinned host memory".into(),
            parameters: json!({"device": 0}),
            placement: None,
            host_timer: "Tsc".into(),
        }
    }

    #[test]
    fn bandwidth_is_bytes_per_ns() {
        // 1 GB in 1 s is 1 GB/s; 25e9 bytes in 1e9 ns is 25 GB/s.
        assert!(close(bandwidth_gbs(1_000_000_000, 1e9).unwrap(), 1.0));
        assert!(close(bandwidth_gbs(25_000_000_000, 1e9).unwrap(), 25.0));
        assert!(close(bandwidth_gbs(1 << 30, 42_949_672.96).unwrap(), 25.0));
        assert_eq!(bandwidth_gbs(4096, 0.0), None);
        assert_eq!(bandwidth_gbs(4096, -3.0), None);
        assert_eq!(bandwidth_gbs(4096, f64::NAN), None);
    }

    #[test]
    fn sizes_grow_by_the_factor_and_end_at_max() {
        assert_eq!(
            transfer_sizes(4 * KIB, 64 * MIB, 16),
            vec![4 * KIB, 64 * KIB, MIB, 16 * MIB, 64 * MIB]
        );
        assert_eq!(transfer_sizes(4 * KIB, 4 * KIB, 4), vec![4 * KIB]);
        let s = transfer_sizes(4 * KIB, 1 << 30, 4);
        assert_eq!(s.len(), 10);
        assert_eq!(s[9], 1 << 30);
    }

    #[test]
    fn small_copies_are_batched() {
        assert_eq!(copies_per_sample(4 * KIB, 64 * MIB, 256), 256);
        assert_eq!(copies_per_sample(MIB, 64 * MIB, 256), 64);
        assert_eq!(copies_per_sample(1 << 30, 64 * MIB, 256), 1);
        assert_eq!(host_offset(0, MIB, 4 * MIB), 0);
        assert_eq!(host_offset(5, MIB, 4 * MIB), MIB);
        assert_eq!(host_offset(7, 4 * MIB, 4 * MIB), 0);
    }

    #[test]
    fn sizes_above_free_memory_are_split_off() {
        let (fit, rest) = split_fitting(&[4 * KIB, MIB, 64 * MIB], 2 * MIB);
        assert_eq!(fit, vec![4 * KIB, MIB]);
        assert_eq!(rest, vec![64 * MIB]);
        assert!(split_fitting(&[MIB], 0).0.is_empty());
    }

    fn point(dir: Dir, size: usize, copies: usize, ns: f64) -> SweepPoint {
        SweepPoint {
            dir,
            size,
            copies,
            events_ns: vec![ns, ns * 1.1, ns * 0.9],
            host_ns: vec![ns * 1.2; 3],
            counters: None,
        }
    }

    #[test]
    fn sweep_params_come_from_the_largest_size_on_events() {
        let points = vec![
            point(Dir::H2d, MIB, 4, 4.0 * MIB as f64 / 10.0), // 10 GB/s
            point(Dir::H2d, 64 * MIB, 1, 64.0 * MIB as f64 / 25.0), // 25 GB/s
            point(Dir::D2h, 64 * MIB, 1, 64.0 * MIB as f64 / 20.0), // 20 GB/s
        ];
        let (ms, params) = sweep_report(&points, &labels(), Some("gpu"));
        assert_eq!(ms.len(), 6, "events and host per point");
        let h2d = params.iter().find(|p| p.key == "gpu_h2d_bw_gbs").unwrap();
        assert!((h2d.value - 25.0).abs() < 0.05, "{}", h2d.value);
        assert_eq!(h2d.info.from, vec!["gpu.bw/gpu:0/pinned/h2d/64M/events"]);
        assert!(ms.iter().any(|m| m.id == h2d.info.from[0]));
        let d2h = params.iter().find(|p| p.key == "gpu_d2h_bw_gbs").unwrap();
        assert!((d2h.value - 20.0).abs() < 0.05);
        let host = ms
            .iter()
            .find(|m| m.id.ends_with("64M/host") && m.id.contains("h2d"))
            .unwrap();
        assert!(
            host.distribution.p50 < h2d.value,
            "host timing includes enqueue"
        );
        assert!(host.method.contains("Tsc"));
        assert_eq!(host.parameters["device"], 0);
        assert_eq!(host.parameters["timing"], "host");
        assert!(ms.iter().all(|m| m.unit == "GB/s"));
        // Without a key prefix: measurements only.
        assert!(sweep_report(&points, &labels(), None).1.is_empty());
    }

    #[test]
    fn failed_timings_are_never_summarized() {
        let p = SweepPoint {
            dir: Dir::H2d,
            size: MIB,
            copies: 1,
            events_ns: vec![0.0, -1.0],
            host_ns: vec![],
            counters: None,
        };
        let (ms, params) = sweep_report(&[p], &labels(), Some("gpu"));
        assert!(ms.is_empty() && params.is_empty());
    }

    #[test]
    fn latency_param_is_the_h2d_median() {
        let s = vec![
            (Dir::H2d, vec![9000.0, 10000.0, 11000.0], None),
            (Dir::D2h, vec![8000.0; 3], None),
        ];
        let (ms, params) = latency_report(&s, 8, &labels(), Some("gpu_copy_lat_ns"));
        assert_eq!(ms.len(), 2);
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].key, "gpu_copy_lat_ns");
        assert!((params[0].value - 10000.0).abs() < 20.0);
        assert_eq!(params[0].info.unit, "ns");
    }
}
