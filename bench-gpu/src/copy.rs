//! The timed loops. Each creates its own streams and events, so that when it returns (or
//! fails) every copy it enqueued has completed ([`Stream`] synchronizes on drop) before
//! any buffer it was lent can be freed.

use crate::contention::{contention_sample, ContentionSample};
use crate::cuda::{CudaError, Device, DeviceBuffer, Dir, Event, Gate, HostSpan, Stream};
use crate::shape::{copies_per_sample, host_offset, SweepPoint};
use bench_core::counters::{self, CounterGroup, MeasurementCounters, ThreadCounts};
use bench_core::effort::Effort;
use bench_core::timer::Timer;
use std::sync::Barrier;

/// Samples and batching of a sweep.
#[derive(Debug, Clone, Copy)]
pub struct SweepPlan {
    /// Timed samples per point (after one untimed warm-up sample).
    pub samples: usize,
    /// Bytes a sample aims to move (small copies are batched up to this).
    pub bytes_per_sample: usize,
    /// Most copies in one sample.
    pub max_copies: usize,
}

impl SweepPlan {
    /// The effort's samples and copies.
    pub fn new(effort: &Effort) -> SweepPlan {
        let (bytes_per_sample, max_copies) = effort.gpu.sweep_sample_bytes;
        SweepPlan {
            samples: effort.gpu.sweep_samples,
            bytes_per_sample,
            max_copies,
        }
    }
}

/// One sample: `copies` copies of `size` between `host` (walking through it) and the
/// device buffer, between two events; returns (events ns, host ns).
#[allow(clippy::too_many_arguments)]
fn sample(
    s: &Stream<'_>,
    start: &Event<'_>,
    end: &Event<'_>,
    dir: Dir,
    buf: &DeviceBuffer<'_>,
    host: HostSpan<'_>,
    size: usize,
    copies: usize,
    first: usize,
    timer: &Timer,
) -> Result<(f64, f64), CudaError> {
    let t0 = timer.start();
    start.record(s)?;
    for c in 0..copies {
        s.copy(
            dir,
            buf,
            0,
            host,
            host_offset(first + c, size, host.len()),
            size,
        )?;
    }
    end.record(s)?;
    end.synchronize()?;
    let t1 = timer.stop();
    Ok((start.elapsed_ns(end)?, timer.elapsed_ns(t0, t1)))
}

/// Bandwidth sweep in one direction between `host` and `buf` over `sizes` (each at most
/// both lengths), reporting each size through `progress`.
#[allow(clippy::too_many_arguments)]
pub fn sweep(
    dev: &Device,
    buf: &DeviceBuffer<'_>,
    host: HostSpan<'_>,
    dir: Dir,
    sizes: &[usize],
    plan: SweepPlan,
    timer: &Timer,
    progress: &dyn Fn(usize),
) -> Result<Vec<SweepPoint>, CudaError> {
    let s = Stream::new(dev)?;
    let (e0, e1) = (Event::new(dev)?, Event::new(dev)?);
    let mut group = CounterGroup::open_with_timer(timer);
    let mut out = Vec::with_capacity(sizes.len());
    for &size in sizes {
        progress(size);
        let copies = copies_per_sample(size, plan.bytes_per_sample, plan.max_copies);
        sample(&s, &e0, &e1, dir, buf, host, size, copies, 0, timer)?; // warm-up
                                                                       // The samples of a point are one counted section, repeated while disturbed.
        let ((events_ns, host_ns), c) =
            counters::try_retry_undisturbed(counters::DEFAULT_MAX_ATTEMPTS, || {
                let mut ev = counters::sample_buffer(plan.samples);
                let mut h = counters::sample_buffer(plan.samples);
                let (r, c) = group.count(|| -> Result<(), CudaError> {
                    for i in 0..plan.samples {
                        let (e, t) = sample(
                            &s,
                            &e0,
                            &e1,
                            dir,
                            buf,
                            host,
                            size,
                            copies,
                            (i + 1) * copies,
                            timer,
                        )?;
                        ev.push(e);
                        h.push(t);
                    }
                    Ok(())
                });
                r.map(|()| ((ev, h), ThreadCounts::single(c)))
            })?;
        let point = SweepPoint {
            dir,
            size,
            copies,
            events_ns,
            host_ns,
            counters: Some(c.with_per_op("copy", (plan.samples * copies) as u64)),
        };
        out.push(point);
    }
    Ok(out)
}

/// Small-copy latency: `samples` times one copy of `bytes` enqueued then
/// `cuStreamSynchronize`, timed on the host; ns each.
pub fn latency(
    dev: &Device,
    buf: &DeviceBuffer<'_>,
    host: HostSpan<'_>,
    dir: Dir,
    bytes: usize,
    samples: usize,
    timer: &Timer,
) -> Result<(Vec<f64>, MeasurementCounters), CudaError> {
    let s = Stream::new(dev)?;
    for _ in 0..samples.div_ceil(10).max(10) {
        s.copy(dir, buf, 0, host, 0, bytes)?;
        s.synchronize()?;
    }
    let mut group = CounterGroup::open_with_timer(timer);
    let (v, c) = counters::try_retry_undisturbed(counters::DEFAULT_MAX_ATTEMPTS, || {
        let mut v = counters::sample_buffer(samples);
        let (r, c) = group.count(|| -> Result<(), CudaError> {
            for _ in 0..samples {
                let t0 = timer.start();
                s.copy(dir, buf, 0, host, 0, bytes)?;
                s.synchronize()?;
                let t1 = timer.stop();
                v.push(timer.elapsed_ns(t0, t1));
            }
            Ok(())
        });
        r.map(|()| (v, ThreadCounts::single(c)))
    })?;
    Ok((v, c.with_per_op("copy", samples as u64)))
}

/// Concurrent copies of `bytes_each` on one device, one stream each, transfer `i` in
/// direction `dirs[i]` between `host[i * bytes_each..]` and `buf[i * bytes_each..]`. In
/// each round every copy is enqueued behind a closed [`Gate`] and released together; each
/// is timed from the gate event to its own end event (all on the device's clock).
#[allow(clippy::too_many_arguments)]
pub fn contention_streams(
    dev: &Device,
    buf: &DeviceBuffer<'_>,
    host: HostSpan<'_>,
    dirs: &[Dir],
    bytes_each: usize,
    rounds: usize,
    timer: &Timer,
) -> Result<(Vec<ContentionSample>, MeasurementCounters), CudaError> {
    let k = dirs.len();
    let streams: Vec<Stream<'_>> = (0..k).map(|_| Stream::new(dev)).collect::<Result<_, _>>()?;
    let starts: Vec<Event<'_>> = (0..k).map(|_| Event::new(dev)).collect::<Result<_, _>>()?;
    let ends: Vec<Event<'_>> = (0..k).map(|_| Event::new(dev)).collect::<Result<_, _>>()?;
    // Declared last, dropped first: an open gate never holds the streams' last sync.
    let gate = Gate::new(dev)?;
    let t = Timed {
        streams: &streams,
        starts: &starts,
        ends: &ends,
        gate: &gate,
        buf,
        host,
        dirs,
        bytes_each,
    };
    let mut group = CounterGroup::open_with_timer(timer);
    let (out, c) = counters::try_retry_undisturbed(counters::DEFAULT_MAX_ATTEMPTS, || {
        let (r, c) = group.count(|| t.rounds(rounds));
        r.map(|out| (out, ThreadCounts::single(c)))
    })?;
    Ok((out, c.with_per_op("round", rounds as u64)))
}

/// The streams, events, gate and copies of [`contention_streams`].
struct Timed<'a, 'd> {
    streams: &'a [Stream<'d>],
    starts: &'a [Event<'d>],
    ends: &'a [Event<'d>],
    gate: &'a Gate<'d>,
    buf: &'a DeviceBuffer<'d>,
    host: HostSpan<'a>,
    dirs: &'a [Dir],
    bytes_each: usize,
}

impl Timed<'_, '_> {
    /// The rounds (a warm-up round first, untimed).
    fn rounds(&self, rounds: usize) -> Result<Vec<ContentionSample>, CudaError> {
        let mut out = Vec::with_capacity(rounds);
        for round in 0..=rounds {
            self.gate.close()?;
            // Opened whatever happened: a failed enqueue must not leave the gate shut.
            let queued = self.enqueue();
            self.gate.open();
            queued?;
            for e in self.ends {
                e.synchronize()?;
            }
            if round == 0 {
                continue; // warm-up
            }
            let g = self.gate.event();
            let mut iv = Vec::with_capacity(self.dirs.len());
            for (s, e) in self.starts.iter().zip(self.ends) {
                iv.push((g.elapsed_ns(s)?, g.elapsed_ns(e)?));
            }
            if let Some(s) = contention_sample(&iv, self.bytes_each as u64) {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// Every stream: wait for the gate, start event, its copy, end event.
    fn enqueue(&self) -> Result<(), CudaError> {
        let each = self.bytes_each;
        for (i, &dir) in self.dirs.iter().enumerate() {
            let off = i * each;
            self.streams[i].wait(self.gate.event())?;
            self.starts[i].record(&self.streams[i])?;
            self.streams[i].copy(dir, self.buf, off, self.host, off, each)?;
            self.ends[i].record(&self.streams[i])?;
        }
        Ok(())
    }
}

/// One copy of `bytes_each` on each device at once (a thread per device, released
/// together by a barrier), transfer `i` between `host[i * bytes_each..]` and `bufs[i]`;
/// timed on the host timer (events of different devices share no clock), each from the
/// earliest start of its round.
pub fn contention_devices(
    devs: &[Device],
    bufs: &[DeviceBuffer<'_>],
    host: HostSpan<'_>,
    dir: Dir,
    bytes_each: usize,
    rounds: usize,
    timer: &Timer,
) -> Result<(Vec<ContentionSample>, MeasurementCounters), CudaError> {
    let g = devs.len().min(bufs.len());
    let barrier = Barrier::new(g);
    type Timed = (Vec<(u64, u64)>, ThreadCounts);
    let per_device: Vec<Result<Timed, CudaError>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..g)
            .map(|i| {
                let (dev, buf, barrier) = (&devs[i], &bufs[i], &barrier);
                sc.spawn(move || {
                    // Every thread passes the barrier rounds + 1 times whatever happens,
                    // so that one device's failure cannot leave the others waiting.
                    let stream = dev.make_current().and_then(|_| Stream::new(dev));
                    let mut err = stream.as_ref().err().cloned();
                    let mut times = Vec::with_capacity(rounds);
                    // Each thread counts its own copies (the barrier waits are not part of
                    // the counted sections: a blocking barrier switches context by design).
                    let mut group = CounterGroup::open_with_timer(timer);
                    let mut counted = Vec::with_capacity(rounds);
                    for round in 0..=rounds {
                        barrier.wait();
                        let (Ok(s), None) = (&stream, &err) else {
                            continue;
                        };
                        let ((t0, r, t1), c) = group.count(|| {
                            let t0 = timer.start();
                            let r = s
                                .copy(dir, buf, 0, host, i * bytes_each, bytes_each)
                                .and_then(|_| s.synchronize());
                            (t0, r, timer.stop())
                        });
                        match r {
                            Ok(()) if round > 0 => {
                                times.push((t0, t1));
                                counted.push(c);
                            }
                            Ok(()) => {}
                            Err(e) => err = Some(e),
                        }
                    }
                    let counts = bench_core::counters::Counts::sum(&counted);
                    match err {
                        Some(e) => Err(e),
                        None => Ok((
                            times,
                            ThreadCounts::measuring(format!("GPU {i} copy thread"), counts),
                        )),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a copy thread panicked"))
            .collect()
    });
    let (per_device, threads): (Vec<Vec<(u64, u64)>>, Vec<ThreadCounts>) = per_device
        .into_iter()
        .collect::<Result<Vec<Timed>, _>>()?
        .into_iter()
        .unzip();
    let c = MeasurementCounters::from_threads(&threads, 1).with_per_op("round", rounds as u64);
    let mut out = Vec::with_capacity(rounds);
    for r in 0..rounds {
        let base = per_device.iter().map(|t| t[r].0).min().unwrap_or(0);
        let iv: Vec<(f64, f64)> = per_device
            .iter()
            .map(|t| {
                let (a, b) = t[r];
                (
                    timer.ticks_to_ns(a.wrapping_sub(base) as f64),
                    timer.ticks_to_ns(b.wrapping_sub(base) as f64),
                )
            })
            .collect();
        if let Some(s) = contention_sample(&iv, bytes_each as u64) {
            out.push(s);
        }
    }
    Ok((out, c))
}
