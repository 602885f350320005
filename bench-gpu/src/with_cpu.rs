//! CPU agents and GPU DMA on one memory target at once (seed 003 Sec. 2.3: a CCCL rank's
//! GPU copies through the pool while the host's CPUs stream it too).
//!
//! The target's registered region is split in two parts of the same size, each sized as a
//! streaming DRAM working set of the agents' CPUs ([`bench_core::bench::Context::dram_stream_bytes`]),
//! so that neither side works out of the last-level cache:
//!
//! * the GPU part: one stream copies `copy_bytes` back to back, walking through it, in
//!   event-timed batches (GPU bandwidth = bytes / the batches' event time);
//! * the CPU part: one agent per CPU after the first (which drives the GPU), a crew
//!   ([`bench_core::crew`]) each streaming its own slice with the access the GPU makes (the
//!   GPU reads the target, h2d: the agents read; the GPU writes it, d2h: the agents write
//!   with non-temporal stores, as `mem agents` does); the CPU figure is the crew's window
//!   aggregate: the bytes all agents moved in the time all of them ran / that time.
//!
//! Each round times three windows of the same length (with and without `--quick`: fewer
//! rounds with it): the GPU alone, the agents alone, and both at once (released together,
//! the GPU's end stopping the agents after their call).
//! The ratios together / alone say what each side loses to the other.

use crate::cuda::{CudaError, Device, DeviceBuffer, Dir, Event, HostSpan, Stream};
use crate::shape::{host_offset, merged, Labels};
use bench_core::bench::Param;
use bench_core::counters::{CounterGroup, Counts, MeasurementCounters, ThreadCounts};
use bench_core::crew::{self, Crew, WindowPlan};
use bench_core::dma::DmaRate;
use bench_core::effort::Effort;
use bench_core::kernels::{Isa, Kernel};
use bench_core::params::Measurement;
use bench_core::stats::Distribution;
use bench_core::timer::Timer;
use bench_core::units::format_size;
use serde_json::json;
use std::time::Duration;

/// Each agent's slice is a whole number of these.
pub const CHUNK_BYTES: usize = 4 << 20;

/// Most GPU copies in one window (a bound for drivers whose copies take no host time).
const MAX_COPIES: usize = 4096;

/// Windows, their length and the GPU's copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WithCpuPlan {
    /// Length of one timed window, ns.
    pub window_ns: f64,
    /// Timed rounds (each: GPU alone, agents alone, together), after one untimed round.
    pub rounds: usize,
    /// Bytes of each GPU copy.
    pub copy_bytes: usize,
    /// GPU copies per event-timed batch.
    pub batch: usize,
}

impl WithCpuPlan {
    /// The effort's windows and rounds (shorter and fewer with `--quick`), the same
    /// copies and footprints.
    pub fn new(effort: &Effort, copy_bytes: usize) -> WithCpuPlan {
        let (window, rounds) = effort.gpu.with_cpu;
        WithCpuPlan {
            window_ns: window.as_nanos() as f64,
            rounds,
            copy_bytes,
            batch: 4,
        }
    }
}

/// The agents' access beside a GPU copying in `dir` (the same access to the target).
pub fn cpu_access(dir: Dir) -> &'static str {
    match dir {
        Dir::H2d => "read",
        Dir::D2h => "nt-write",
    }
}

/// Bytes of each part (GPU, CPU) for a streaming working set of `stream_bytes`: whole
/// copies for the GPU, whole chunks per agent for the CPUs.
pub fn part_bytes(stream_bytes: usize, copy_bytes: usize, agents: usize) -> (usize, usize) {
    let gpu = stream_bytes.max(copy_bytes).div_ceil(copy_bytes.max(1)) * copy_bytes.max(1);
    let per_agent = stream_bytes.div_ceil(agents.max(1)).div_ceil(CHUNK_BYTES) * CHUNK_BYTES;
    (gpu, per_agent * agents.max(1))
}

/// The GPU side: a stream's copies between `host` (the GPU's part) and `buf`.
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct GpuSide<'a, 'd> {
    pub dev: &'d Device,
    /// Device memory of at least one copy.
    pub buf: &'a DeviceBuffer<'d>,
    /// The GPU's part of the registered region.
    pub host: HostSpan<'a>,
}

/// The CPU side: agent `i` on `cpus[i]` streams the `i`-th slice of `host`.
pub struct CpuSide<'a> {
    /// The agents' CPUs.
    pub cpus: &'a [usize],
    /// The CPUs' part of the registered region (no DMA touches it).
    pub host: HostSpan<'a>,
    /// The kernels' ISA (usable on this CPU).
    pub isa: Isa,
}

/// Which sides run in a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    GpuAlone,
    CpuAlone,
    Together,
}

/// Samples (GB/s, one per round) of one direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WithCpuPoint {
    /// The GPU's direction (the agents' access follows it).
    pub dir: Option<Dir>,
    /// Number of CPU agents.
    pub agents: usize,
    /// The agents' CPUs.
    pub cpus: Vec<usize>,
    /// The agents' kernels' ISA.
    pub isa: Option<Isa>,
    /// Bytes of the GPU's part and of the CPUs' part.
    pub gpu_bytes: usize,
    /// Bytes the agents stream, all slices together.
    pub cpu_bytes: usize,
    /// Bytes of each GPU copy.
    pub copy_bytes: usize,
    /// How the parts were sized (a sentence for the method).
    pub sizing: String,
    /// Length of a window, ms.
    pub window_ms: f64,
    /// GPU copies per event-timed batch.
    pub batch: usize,
    /// The GPU with the CPUs idle.
    pub gpu_alone: Vec<f64>,
    /// The GPU while the agents stream.
    pub gpu_beside_cpu: Vec<f64>,
    /// The agents (summed) with the GPU idle.
    pub cpu_alone: Vec<f64>,
    /// The agents (summed) while the GPU copies.
    pub cpu_beside_gpu: Vec<f64>,
    /// Counts of each series' threads over its windows, by series name.
    pub counts: std::collections::BTreeMap<&'static str, SeriesCounts>,
}

/// Counts of the threads of one series (the GPU's driving thread, or each agent), summed
/// over the series' windows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesCounts {
    threads: Vec<(String, Option<Counts>)>,
}

impl SeriesCounts {
    /// Adds one window's counts of thread `i` (named `label`).
    fn add(&mut self, i: usize, label: String, c: Counts) {
        if self.threads.len() <= i {
            self.threads.resize(i + 1, (String::new(), None));
        }
        let (l, slot) = &mut self.threads[i];
        *l = label;
        *slot = Some(match slot.take() {
            None => c,
            Some(sum) => {
                let mut both = Counts::sum([&sum, &c]);
                both.section_ns = sum.section_ns + c.section_ns;
                both
            }
        });
    }

    /// The record of the series: every thread measuring, one attempt.
    pub fn record(&self) -> Option<MeasurementCounters> {
        let threads: Vec<ThreadCounts> = self
            .threads
            .iter()
            .filter_map(|(l, c)| Some(ThreadCounts::measuring(l.clone(), c.clone()?)))
            .collect();
        (!threads.is_empty()).then(|| MeasurementCounters::from_threads(&threads, 1))
    }
}

impl WithCpuPoint {
    fn samples_mut(&mut self, series: &str) -> &mut Vec<f64> {
        match series {
            "gpu_alone" => &mut self.gpu_alone,
            "gpu_beside_cpu" => &mut self.gpu_beside_cpu,
            "cpu_alone" => &mut self.cpu_alone,
            _ => &mut self.cpu_beside_gpu,
        }
    }
}

/// Measures one direction: `plan.rounds` rounds of the three windows.
pub fn measure(
    gpu: &GpuSide<'_, '_>,
    cpu: &CpuSide<'_>,
    dir: Dir,
    plan: WithCpuPlan,
    timer: &Timer,
) -> Result<WithCpuPoint, CudaError> {
    let stream = Stream::new(gpu.dev)?;
    let (e0, e1) = (Event::new(gpu.dev)?, Event::new(gpu.dev)?);
    let g = GpuLoop {
        side: gpu,
        stream: &stream,
        e0: &e0,
        e1: &e1,
        dir,
        plan,
    };
    let mut p = WithCpuPoint {
        dir: Some(dir),
        agents: cpu.cpus.len(),
        cpus: cpu.cpus.to_vec(),
        isa: Some(cpu.isa),
        gpu_bytes: gpu.host.len(),
        cpu_bytes: cpu.host.len(),
        copy_bytes: plan.copy_bytes,
        window_ms: plan.window_ns / 1e6,
        batch: plan.batch,
        ..WithCpuPoint::default()
    };
    for round in 0..=plan.rounds {
        for mode in [Mode::GpuAlone, Mode::CpuAlone, Mode::Together] {
            let w = window(mode, &g, cpu, timer)?;
            if round == 0 {
                continue; // warm-up
            }
            let (gpu_series, cpu_series) = match mode {
                Mode::GpuAlone => (Some("gpu_alone"), None),
                Mode::CpuAlone => (None, Some("cpu_alone")),
                Mode::Together => (Some("gpu_beside_cpu"), Some("cpu_beside_gpu")),
            };
            if let (Some(name), Some((gbs, c))) = (gpu_series, w.gpu) {
                p.samples_mut(name).extend(gbs);
                let label = "the GPU's driving thread".to_string();
                p.counts.entry(name).or_default().add(0, label, c);
            }
            if let Some(name) = cpu_series {
                p.samples_mut(name).extend(w.cpu_gbs);
                for (i, c) in w.agent_counts.into_iter().enumerate() {
                    let label = format!("agent {i} (CPU {})", cpu.cpus[i]);
                    p.counts.entry(name).or_default().add(i, label, c);
                }
            }
        }
    }
    Ok(p)
}

/// The GPU's copy loop of one window.
struct GpuLoop<'a, 'b, 'd> {
    side: &'a GpuSide<'b, 'd>,
    stream: &'a Stream<'d>,
    e0: &'a Event<'d>,
    e1: &'a Event<'d>,
    dir: Dir,
    plan: WithCpuPlan,
}

impl GpuLoop<'_, '_, '_> {
    /// Batches of copies until the window has passed; GB/s over the batches' event time.
    fn run(&self, timer: &Timer) -> Result<Option<f64>, CudaError> {
        let t0 = timer.start();
        let l = CopyLoop {
            stream: self.stream,
            e0: self.e0,
            e1: self.e1,
            buf: self.side.buf,
            host: self.side.host,
            dir: self.dir,
            copy_bytes: self.plan.copy_bytes,
            batch: self.plan.batch,
        };
        let rate = l.run(&mut |copies| {
            timer.elapsed_ns(t0, timer.stop()) >= self.plan.window_ns || copies >= MAX_COPIES
        })?;
        Ok(rate.aggregate_gbs())
    }
}

/// One stream's back-to-back copies between a device buffer and a span of host memory,
/// walking through the span, in batches each timed by a pair of CUDA events: the copy
/// loop of the GPU beside CPU agents here and of the GPU as `mem.interference`'s
/// aggressor ([`crate::aggressor`]).
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct CopyLoop<'a, 'h, 'd> {
    pub stream: &'a Stream<'d>,
    pub e0: &'a Event<'d>,
    pub e1: &'a Event<'d>,
    /// Device memory of at least one copy.
    pub buf: &'a DeviceBuffer<'d>,
    /// The host memory copied to or from (whole copies of it, in turn).
    pub host: HostSpan<'h>,
    pub dir: Dir,
    pub copy_bytes: usize,
    /// Copies per event-timed batch.
    pub batch: usize,
}

impl CopyLoop<'_, '_, '_> {
    /// Batches until `done(copies so far)` (asked after each batch, so at least one runs):
    /// every batch's bytes and event time, and the rate of each batch the events timed
    /// as taking time.
    pub fn run(&self, done: &mut dyn FnMut(usize) -> bool) -> Result<DmaRate, CudaError> {
        let (each, span) = (self.copy_bytes, self.host.len());
        let mut rate = DmaRate::default();
        let mut c = 0usize;
        loop {
            self.e0.record(self.stream)?;
            for _ in 0..self.batch {
                let off = host_offset(c, each, span);
                self.stream
                    .copy(self.dir, self.buf, 0, self.host, off, each)?;
                c += 1;
            }
            self.e1.record(self.stream)?;
            self.e1.synchronize()?;
            let ns = self.e0.elapsed_ns(self.e1)?;
            let bytes = (self.batch * each) as u64;
            rate.bytes += bytes;
            rate.timed_ns += ns;
            if ns > 0.0 {
                rate.batch_gbs.push(bytes as f64 / ns);
            }
            if done(c) {
                return Ok(rate);
            }
        }
    }
}

/// What one window measured.
struct WindowOut {
    /// The GPU's GB/s (None when it moved nothing) and its driving thread's counts.
    gpu: Option<(Option<f64>, Counts)>,
    /// The agents' window aggregate, when every agent was pinned and streamed.
    cpu_gbs: Option<f64>,
    /// Each agent's counts.
    agent_counts: Vec<Counts>,
}

/// One window in `mode`: the GPU's loop on this thread, the agents a crew on their CPUs.
fn window(
    mode: Mode,
    g: &GpuLoop<'_, '_, '_>,
    cpu: &CpuSide<'_>,
    timer: &Timer,
) -> Result<WindowOut, CudaError> {
    let mut group = CounterGroup::open_with_timer(timer);
    if mode == Mode::GpuAlone {
        let (r, c) = group.count(|| g.run(timer));
        return Ok(WindowOut {
            gpu: Some((r?, c)),
            cpu_gbs: None,
            agent_counts: Vec::new(),
        });
    }
    let length = Duration::from_nanos(g.plan.window_ns as u64);
    let mut gpu = None;
    let agents = match mode {
        Mode::CpuAlone => agents_window(cpu, g.dir, length, timer, None),
        _ => agents_window(
            cpu,
            g.dir,
            length,
            timer,
            Some(&mut || gpu = Some(group.count(|| g.run(timer)))),
        ),
    };
    let gpu = match gpu {
        Some((r, c)) => Some((r?, c)),
        None => None,
    };
    let (cpu_gbs, agent_counts) = agents.unwrap_or((None, Vec::new()));
    Ok(WindowOut {
        gpu,
        cpu_gbs,
        agent_counts,
    })
}

/// One window of the CPU agents alone (`beside` none: `length` long) or released together
/// with `beside` on the calling thread and ended by it: the crew's window aggregate (GB/s;
/// `None` when no window had every agent streaming) and each agent's counts; `None` when
/// an agent could not be pinned. The agents' access follows the GPU's direction
/// ([`cpu_access`]); a part of the CPU side's span each, in agent order.
pub fn agents_window(
    cpu: &CpuSide<'_>,
    dir: Dir,
    length: Duration,
    timer: &Timer,
    beside: Option<&mut dyn FnMut()>,
) -> Option<(Option<f64>, Vec<Counts>)> {
    let slice = cpu.host.len() / cpu.cpus.len().max(1);
    let kernel = match dir {
        Dir::H2d => Kernel::Read,
        Dir::D2h => Kernel::NtWrite,
    };
    let make = |i: usize| {
        let part = cpu.host.sub(i * slice, slice);
        // SAFETY: `part` is agent i's slice of the CPUs' part: no DMA reaches the CPUs'
        // part and the slices of the agents are disjoint, so nothing else touches it
        // while the crew runs.
        let mem = unsafe { part.as_mut_slice() };
        // SAFETY: as above; the slice outlives the crew.
        Ok::<_, std::convert::Infallible>(unsafe {
            crew::Stream::new(kernel, cpu.isa, mem.as_mut_ptr(), mem.len())
        })
    };
    let plan = WindowPlan {
        window: length,
        windows: 1,
        max_windows: 1,
    };
    let crew = Crew::on(timer, cpu.cpus);
    let run = match beside {
        None => crew.windows(plan, &make),
        Some(f) => crew
            .windows_beside(plan, &make, &mut |_| f())
            .map(|(w, _)| w),
    };
    let w = run.ok()?;
    let rec = &w.records()[0];
    Some((
        rec.figure.as_ref().map(|f| f.aggregate_gbs),
        rec.seen.clone(),
    ))
}

/// A series' own parameters: its name, and for the agents alone the stream they ran (the
/// same kernel, CPUs and footprint as a `mem bandwidth` point is the same measurement).
fn series_parameters(p: &WithCpuPoint, dir: Dir, suffix: &str) -> serde_json::Value {
    let mut v = json!({ "series": suffix });
    if let (true, Some(isa)) = (suffix == "cpu_alone", p.isa) {
        let kernel = match dir {
            Dir::H2d => Kernel::Read,
            Dir::D2h => Kernel::NtWrite,
        };
        v["stream"] = crew::stream::signature(kernel, isa, p.cpu_bytes, &p.cpus);
    }
    v
}

/// The measurements of `points` and, with `key_prefix`, the params
/// `<prefix>_<dir>_beside_cpu_{bw_gbs,ratio}` (the GPU) and
/// `<prefix>_cpu_beside_<dir>_{bw_gbs,ratio}` (the agents).
pub fn with_cpu_report(
    points: &[WithCpuPoint],
    l: &Labels,
    key_prefix: Option<&str>,
) -> (Vec<Measurement>, Vec<Param>) {
    let (mut ms, mut params) = (Vec::new(), Vec::new());
    for p in points {
        let Some(dir) = p.dir else { continue };
        let d = dir.name();
        let what = format!(
            "one stream of back-to-back {} {d} copies through {} of {}, beside {} pinned CPU agent(s) each streaming its own slice of {} of the same target ({} ({d} access), in parts of about 0.1 ms each); each part: {}",
            format_size(p.copy_bytes),
            format_size(p.gpu_bytes),
            l.memory,
            p.agents,
            format_size(p.cpu_bytes),
            cpu_access(dir),
            p.sizing,
        );
        let base = merged(
            &l.parameters,
            json!({
                "dir": d,
                "agents": p.agents,
                "cpu_access": cpu_access(dir),
                "copy_bytes": p.copy_bytes,
                "gpu_bytes": p.gpu_bytes,
                "cpu_bytes": p.cpu_bytes,
            }),
        );
        let series = [
            ("gpu_alone", &p.gpu_alone, "the GPU's bandwidth with the agents idle (bytes / the batches' CUDA event time)"),
            ("gpu_beside_cpu", &p.gpu_beside_cpu, "the GPU's bandwidth while the agents stream (bytes / the batches' CUDA event time)"),
            ("cpu_alone", &p.cpu_alone, "the agents' bandwidth with the GPU idle (the crew's window aggregate: the bytes all agents moved in the time all of them ran / that time)"),
            ("cpu_beside_gpu", &p.cpu_beside_gpu, "the agents' bandwidth while the GPU copies (the crew's window aggregate, the window released with the GPU's loop and ended by it)"),
        ];
        let mut p50 = std::collections::BTreeMap::new();
        for (suffix, samples, meaning) in series {
            let Some(dist) = Distribution::from_samples(samples) else {
                continue;
            };
            let id = format!("{}/with-cpu/{d}/{suffix}", l.id_prefix);
            p50.insert(suffix, (id.clone(), dist.p50));
            ms.push(Measurement {
                id,
                benchmark: l.bench.clone(),
                target: l.target.clone(),
                parameters: merged(&base, series_parameters(p, dir, suffix)),
                unit: "GB/s".into(),
                method: format!("{meaning}; {what}; one sample per window ({} ms), the three windows (GPU alone, agents alone, together) interleaved in every round; the GPU timed with CUDA events recorded around each batch of {} copies, the agents by the crew's windows on the host cycle timer ({}); bytes counted once", p.window_ms, p.batch, l.host_timer),
                distribution: dist,
                placement: l.placement.clone(),
                counters: p.counts.get(suffix).and_then(SeriesCounts::record),
            });
        }
        let Some(kp) = key_prefix else { continue };
        let mut pair = |side: &str, with: &str, alone: &str, key: String, meaning: String| {
            let (Some((wi, w)), Some((ai, a))) = (p50.get(with), p50.get(alone)) else {
                return;
            };
            params.push(Param::new(
                format!("{key}_bw_gbs"),
                *w,
                &l.target,
                format!("p50 {side} bandwidth {meaning}"),
                vec![wi.clone()],
            ));
            if *a > 0.0 {
                params.push(Param::new(
                    format!("{key}_ratio"),
                    w / a,
                    &l.target,
                    format!("{side} bandwidth {meaning} / alone (p50s)"),
                    vec![wi.clone(), ai.clone()],
                ));
            }
        };
        pair(
            "the GPU's",
            "gpu_beside_cpu",
            "gpu_alone",
            format!("{kp}_{d}_beside_cpu"),
            format!(
                "while {} CPU agent(s) stream the same target: {what}",
                p.agents
            ),
        );
        pair(
            "the CPU agents' summed",
            "cpu_beside_gpu",
            "cpu_alone",
            format!("{kp}_cpu_beside_{d}"),
            format!("while the GPU copies {d} on the same target: {what}"),
        );
    }
    (ms, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_hold_whole_copies_and_whole_chunks_per_agent() {
        let mib = 1 << 20;
        let (g, c) = part_bytes(1300 * mib, 64 * mib, 15);
        assert_eq!(g % (64 * mib), 0);
        assert!(g >= 1300 * mib && g < 1364 * mib);
        assert_eq!(c % (15 * CHUNK_BYTES), 0);
        assert!(c >= 1300 * mib);
        // A working set below one copy: one copy; one agent.
        assert_eq!(part_bytes(mib, 64 * mib, 1), (64 * mib, 4 * mib));
    }

    fn point() -> WithCpuPoint {
        WithCpuPoint {
            dir: Some(Dir::H2d),
            agents: 3,
            cpus: vec![1, 2, 3],
            isa: Some(Isa::Sse2),
            gpu_bytes: 1 << 30,
            cpu_bytes: 3 << 28,
            copy_bytes: 64 << 20,
            sizing: "DRAM working set: 4 x the caches".into(),
            window_ms: 500.0,
            batch: 4,
            gpu_alone: vec![50.0, 52.0, 51.0],
            gpu_beside_cpu: vec![40.0, 41.0, 39.0],
            cpu_alone: vec![30.0, 30.0, 30.0],
            cpu_beside_gpu: vec![15.0, 15.0, 15.0],
            counts: Default::default(),
        }
    }

    fn labels() -> Labels {
        Labels {
            bench: "gpu.pool".into(),
            id_prefix: "gpu.pool/anon/gpu:0".into(),
            target: "anon".into(),
            memory: "the anon target".into(),
            parameters: json!({"gpu": "fake"}),
            placement: None,
            host_timer: "Tsc".into(),
        }
    }

    #[test]
    fn each_side_has_its_figure_beside_the_other_and_the_ratio_to_alone() {
        let (ms, ps) = with_cpu_report(&[point()], &labels(), Some("gpu_reg"));
        assert_eq!(ms.len(), 4);
        // p50s come from the histogram: within its precision.
        let v = |k: &str| ps.iter().find(|p| p.key == k).map(|p| p.value).unwrap();
        let near = |a: f64, b: f64| (a / b - 1.0).abs() < 0.01;
        assert!(near(v("gpu_reg_h2d_beside_cpu_bw_gbs"), 40.0));
        assert!(near(v("gpu_reg_h2d_beside_cpu_ratio"), 40.0 / 51.0));
        assert!(near(v("gpu_reg_cpu_beside_h2d_bw_gbs"), 15.0));
        assert!(near(v("gpu_reg_cpu_beside_h2d_ratio"), 0.5));
        let ratio = ps
            .iter()
            .find(|p| p.key == "gpu_reg_cpu_beside_h2d_ratio")
            .unwrap();
        assert_eq!(ratio.info.from.len(), 2, "a ratio names both measurements");
        assert!(ms
            .iter()
            .any(|m| m.id == "gpu.pool/anon/gpu:0/with-cpu/h2d/cpu_alone"));
        // The agents alone say which stream they ran, to be held against `mem bandwidth`'s
        // figure of the same stream; beside the GPU they are another measurement.
        for m in &ms {
            let stream = m.parameters.get("stream");
            if m.id.ends_with("/cpu_alone") {
                let s = stream.expect("the agents' stream");
                assert_eq!(s["kernel"], "read");
                assert_eq!(s["cpus"], serde_json::json!([1, 2, 3]));
                assert_eq!(s["footprint_bytes"], 3u64 << 28);
            } else {
                assert!(stream.is_none(), "{}", m.id);
            }
        }
    }

    #[test]
    fn a_side_without_samples_publishes_nothing_for_it() {
        let mut p = point();
        p.cpu_alone.clear();
        let (ms, ps) = with_cpu_report(&[p], &labels(), Some("gpu_reg"));
        assert_eq!(ms.len(), 3);
        assert!(ps.iter().all(|p| !p.key.starts_with("gpu_reg_cpu_beside")));
        assert!(ps.iter().any(|p| p.key == "gpu_reg_h2d_beside_cpu_ratio"));
        let (_, none) = with_cpu_report(&[point()], &labels(), None);
        assert!(none.is_empty());
    }
}
