//! The points of `mem.interference`: the victim's chase alone or beside the aggressor
//! crew, and one crew of victim and aggressor streams whose two sides are summed apart.

use super::split::Split;
use crate::chase::Chain;
use crate::kernels::Isa;
use crate::loaded::{Inject, Lines, Mix};
use bench_core::bench::{Context, Skip};
use bench_core::counters::{self, CounterGroup, Counts, MeasurementCounters, ThreadCounts};
use bench_core::crew::{Crew, WindowPlan, Windows};
use bench_core::dma::{DmaDir, DmaRate, DmaSession};
use std::convert::Infallible;
use std::time::Instant;

/// Loads per batch sample of the chase.
pub const BATCH: usize = 256;
/// Most chase batch samples of one point.
const MAX_SAMPLES: usize = 200_000;

/// Bytes of the rig's sample buffer, touched when the rig is made.
pub const RIG_BYTES: usize = MAX_SAMPLES * 8;

/// One side's buffers: thread `t` streams `[base + t each, + each)`.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// Address of thread 0's buffer.
    pub base: usize,
    /// Bytes of each thread's buffer (at least one chunk of its traffic).
    pub each: usize,
}

/// A latency point: the chase's batch means, the aggressors' bandwidth beside it (0 when
/// alone), why it is noisy, its counters and the crew's parameters.
pub struct Lat {
    pub batches: Vec<f64>,
    pub aggressor_gbs: f64,
    pub noisy: Option<String>,
    pub counters: MeasurementCounters,
    pub crew: serde_json::Value,
}

/// A bandwidth point: per used window, each side's summed own rates (GB/s), why it is
/// noisy, the counters and the crew's parameters.
pub struct Bw {
    pub victim: Vec<f64>,
    pub aggressor: Vec<f64>,
    pub noisy: Option<String>,
    pub counters: MeasurementCounters,
    pub crew: serde_json::Value,
}

/// What every point shares: the context, the kernels, the split and the chase's buffers.
pub struct Rig<'a> {
    pub ctx: &'a Context,
    pub isa: Isa,
    pub split: &'a Split,
    group: CounterGroup,
    samples: Vec<f64>,
}

/// Why a retried section is noisy: it was disturbed in every attempt.
fn retried_noisy(clean: bool, c: &MeasurementCounters) -> Option<String> {
    (!clean).then(|| {
        format!(
            "disturbed in every one of {} attempt(s): {}",
            c.attempts,
            c.disturbances.join("; ")
        )
    })
}

impl<'a> Rig<'a> {
    /// A rig; pins the calling thread to the victim's first CPU (the chase's).
    pub fn new(ctx: &'a Context, isa: Isa, split: &'a Split) -> Result<Rig<'a>, Skip> {
        bench_core::pin::pin_current(split.victim[0]).map_err(|e| Skip::new(e.to_string()))?;
        Ok(Rig {
            ctx,
            isa,
            split,
            group: CounterGroup::open_with_timer(&ctx.timer),
            samples: counters::sample_buffer(MAX_SAMPLES),
        })
    }

    /// The chase for the point's time (at least 32 batches): batch means; counted.
    fn chase(&mut self, chain: &Chain<'_>) -> Counts {
        let timer = &self.ctx.timer;
        let end = Instant::now() + self.ctx.effort.mem.loaded_point;
        let (samples, mut p) = (&mut self.samples, chain.cursor());
        samples.clear();
        let ((), c) = self.group.count(|| {
            while (Instant::now() < end || samples.len() < 32) && samples.len() < MAX_SAMPLES {
                let a = timer.start();
                p = chain.walk(p, BATCH);
                let b = timer.stop();
                samples.push(timer.elapsed_ns(a, b) / BATCH as f64);
            }
        });
        std::hint::black_box(p);
        c
    }

    /// The victim's chase over `chain`, alone or beside the aggressors streaming `agg`,
    /// retried while a thread was disturbed as a crew's window would be
    /// ([`bench_core::crew::evidence::clean`]).
    pub fn latency(&mut self, chain: &Chain<'_>, agg: Option<(Side, Lines)>) -> Result<Lat, Skip> {
        let ((batches, gbs, crew), c, clean) = counters::try_retry_judged(
            counters::DEFAULT_MAX_ATTEMPTS,
            || self.latency_attempt(chain, agg),
            bench_core::crew::evidence::clean,
        )?;
        let noisy = retried_noisy(clean, &c);
        let counters = c.with_per_op("load", (BATCH * batches.len()) as u64);
        Ok(Lat {
            batches,
            aggressor_gbs: gbs,
            noisy,
            counters,
            crew,
        })
    }

    /// One attempt of [`Rig::latency`]: (batch means, aggressor GB/s, crew) and counts.
    #[allow(clippy::type_complexity)]
    fn latency_attempt(
        &mut self,
        chain: &Chain<'_>,
        agg: Option<(Side, Lines)>,
    ) -> Result<((Vec<f64>, f64, serde_json::Value), Vec<ThreadCounts>), Skip> {
        let label = format!("chase thread (CPU {})", self.split.victim[0]);
        let Some((side, lines)) = agg else {
            let c = self.chase(chain);
            let out = (self.samples.clone(), 0.0, serde_json::Value::Null);
            return Ok((out, vec![ThreadCounts::measuring(label, c)]));
        };
        let plan = WindowPlan {
            window: self.ctx.effort.mem.loaded_point,
            windows: 1,
            max_windows: 1,
        };
        let isa = self.isa;
        let cpus = self.split.aggressor.clone();
        let crew = Crew::on(&self.ctx.timer, &cpus);
        let (w, mut chase) = crew
            .windows_beside(
                plan,
                &|t| Ok::<_, Infallible>(inject(side, t, lines, isa)),
                &mut |_| self.chase(chain),
            )
            .map_err(|e| Skip::new(e.reason()))?;
        let rec = &w.records()[0];
        let mut threads = vec![ThreadCounts::measuring(label, chase.remove(0))];
        for (t, mut tc) in rec.thread_counts(w.seats()).into_iter().enumerate() {
            tc.measuring = false;
            tc.label = format!("aggressor thread {t} (CPU {})", cpus[t]);
            threads.push(tc);
        }
        let gbs = rec.figure.as_ref().map_or(0.0, |f| f.aggregate_gbs);
        Ok(((self.samples.clone(), gbs, w.parameters()), threads))
    }

    /// The victim's chase over `chain` while the device of `dma` copies in `dir` back to
    /// back (its copies driven from the first aggressor CPU), retried while the chase was
    /// disturbed; the point and what the copies moved beside the chase.
    pub fn latency_beside_dma(
        &mut self,
        chain: &Chain<'_>,
        dma: &mut dyn DmaSession,
        dir: DmaDir,
    ) -> Result<(Lat, DmaRate), Skip> {
        let cpu = self.split.aggressor[0];
        let label = format!("chase thread (CPU {})", self.split.victim[0]);
        let ((batches, rate), c, clean) = counters::try_retry_judged(
            counters::DEFAULT_MAX_ATTEMPTS,
            || {
                let mut counts = None;
                let rate = dma
                    .copy_beside(dir, cpu, &mut || counts = Some(self.chase(chain)))
                    .map_err(Skip::new)?;
                let c = counts.ok_or_else(|| Skip::new("the device's copies never started"))?;
                let threads = vec![ThreadCounts::measuring(label.clone(), c)];
                Ok(((self.samples.clone(), rate), threads))
            },
            bench_core::crew::evidence::clean,
        )?;
        let noisy = retried_noisy(clean, &c);
        let counters = c.with_per_op("load", (BATCH * batches.len()) as u64);
        let lat = Lat {
            batches,
            aggressor_gbs: rate.aggregate_gbs().unwrap_or(0.0),
            noisy,
            counters,
            crew: serde_json::Value::Null,
        };
        Ok((lat, rate))
    }

    /// The victim CPUs reading `victim` in the effort's crew windows while the device of
    /// `dma` copies in `dir` back to back (driven from the first aggressor CPU); the
    /// victim's point (its `aggressor` samples empty) and what the copies moved.
    pub fn bandwidth_beside_dma(
        &self,
        victim: Side,
        dma: &mut dyn DmaSession,
        dir: DmaDir,
    ) -> Result<(Bw, DmaRate), Skip> {
        let mut bw = None;
        let rate = dma
            .copy_beside(dir, self.split.aggressor[0], &mut || {
                bw = Some(self.bandwidth(Some(victim), None))
            })
            .map_err(Skip::new)?;
        let bw = bw.ok_or_else(|| Skip::new("the device's copies never started"))??;
        Ok((bw, rate))
    }

    /// One crew: the victim CPUs reading `victim` (if any), the aggressor CPUs streaming
    /// `agg` (if any), all released together into the effort's windows; each side's
    /// figure per used window is the sum of its threads' own rates.
    pub fn bandwidth(&self, victim: Option<Side>, agg: Option<(Side, Lines)>) -> Result<Bw, Skip> {
        let mut cpus: Vec<usize> = Vec::new();
        if victim.is_some() {
            cpus.extend(&self.split.victim);
        }
        let kv = cpus.len();
        if agg.is_some() {
            cpus.extend(&self.split.aggressor);
        }
        let isa = self.isa;
        let read = Mix::Read.lines();
        let w = Crew::on(&self.ctx.timer, &cpus)
            .windows(self.ctx.effort.mem.interference_crew, &|t| {
                Ok::<_, Infallible>(match (victim, agg) {
                    (Some(v), _) if t < kv => inject(v, t, read, isa),
                    (_, Some((a, lines))) => inject(a, t - kv, lines, isa),
                    _ => unreachable!("a thread of neither side"),
                })
            })
            .map_err(|e| Skip::new(e.reason()))?;
        let (v, a) = sides(&w, kv);
        Ok(Bw {
            victim: v,
            aggressor: a,
            noisy: w.noisy(),
            counters: w.counters(),
            crew: w.parameters(),
        })
    }
}

/// Per used window of `w`, the summed own rates of threads `..kv` and of the rest.
fn sides(w: &Windows, kv: usize) -> (Vec<f64>, Vec<f64>) {
    let used = w.used();
    let sum = |f: &bench_core::crew::WindowFigure, r: std::ops::Range<usize>| -> f64 {
        f.thread_gbs.get(r).map_or(0.0, |v| v.iter().sum())
    };
    let n = w.seats().len();
    let v = used.iter().map(|f| sum(f, 0..kv)).collect();
    let a = used.iter().map(|f| sum(f, kv..n)).collect();
    (v, a)
}

/// Thread `t`'s stream of `lines` with no injection delay over its buffer of `side`.
fn inject<'b>(side: Side, t: usize, lines: Lines, isa: Isa) -> Inject<'b> {
    // SAFETY: thread t of a side owns [base + t each, + each) of a region the run holds
    // until every crew is done (the regions outlive the rig); no other thread, and not
    // the chase (its own span of the region), touches it while the crew runs.
    let buf = unsafe {
        std::slice::from_raw_parts_mut((side.base + t * side.each) as *mut u8, side.each)
    };
    Inject::new(buf, lines, isa, 0)
}
