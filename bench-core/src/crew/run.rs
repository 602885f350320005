//! The threads of a windowed crew: pinned, released together, stopped together, each
//! recording its call boundaries; the first thread keeps the books between windows.

use super::evidence;
use super::record::{WindowRecord, Windows};
use super::window::{Trace, WindowFigure};
use super::{Crew, CrewError, Member, Seat, Stop, WindowPlan};
use crate::counters::{CounterGroup, Counts};
use crate::pin::SpinBarrier;
use crate::timer::Timer;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Call boundaries kept at each end of a window: the common window's edges lie within the
/// skew of a thread's own start and end, a few calls at most.
const EDGE_POINTS: usize = 64;

/// One thread's call boundaries in one window: the first and the last [`EDGE_POINTS`]
/// (ticks, bytes), without allocating inside the window.
#[derive(Clone)]
struct Recorder {
    start: u64,
    head: Vec<(u64, u64)>,
    tail: Vec<(u64, u64)>,
    /// Next slot of `tail` (a ring once full).
    at: usize,
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
            start: 0,
            head: Vec::with_capacity(EDGE_POINTS),
            tail: vec![(0, 0); EDGE_POINTS],
            at: 0,
        }
    }

    fn begin(&mut self, start: u64) {
        self.start = start;
        self.head.clear();
        self.at = 0;
    }

    #[inline]
    fn push(&mut self, p: (u64, u64)) {
        if self.head.len() < EDGE_POINTS {
            self.head.push(p);
        } else {
            self.tail[self.at % EDGE_POINTS] = p;
            self.at += 1;
        }
    }

    /// The trace in ns since `base` (ticks).
    fn trace(&self, timer: &Timer, base: u64) -> Trace {
        let ns = |t: u64| timer.ticks_to_ns(t.wrapping_sub(base) as f64);
        let kept = self.at.min(EDGE_POINTS);
        let first = self.at - kept;
        let tail = (first..self.at).map(|i| self.tail[i % EDGE_POINTS]);
        Trace {
            start_ns: ns(self.start),
            points: self
                .head
                .iter()
                .copied()
                .chain(tail)
                .map(|(t, b)| (ns(t), b))
                .collect(),
        }
    }
}

/// What each thread hands over after a window.
#[derive(Default)]
struct Slot {
    rec: Option<Recorder>,
    seen: Counts,
}

/// The state the threads share.
struct Shared<'a> {
    seats: &'a [Seat],
    plan: WindowPlan,
    beside: bool,
    stop: Stop,
    /// Between windows: everyone, after the books are kept.
    gate: SpinBarrier,
    /// The release of a window (and the caller's section beside it).
    release: SpinBarrier,
    /// The end of a window.
    end: SpinBarrier,
    go_on: AtomicBool,
    run: AtomicUsize,
    slots: Vec<Mutex<Slot>>,
    records: Mutex<Vec<WindowRecord>>,
    steal: Mutex<Option<BTreeMap<usize, u64>>>,
}

impl Shared<'_> {
    fn check(&self) -> Result<(), ()> {
        if self.stop.aborted() {
            Err(())
        } else {
            Ok(())
        }
    }

    fn wait(&self, b: &SpinBarrier) -> Result<(), ()> {
        b.wait_or(|| self.check())
    }

    fn cpus(&self) -> Vec<usize> {
        self.seats.iter().map(|s| s.cpu).collect()
    }
}

impl Crew<'_> {
    /// Runs windows of the members `make` builds (thread `t` builds its own on its CPU)
    /// until [`WindowPlan::windows`] undisturbed ones, or [`WindowPlan::max_windows`] in
    /// all (see the module documentation).
    pub fn windows<M: Member>(
        &self,
        plan: WindowPlan,
        make: &(dyn Fn(usize) -> Result<M, M::Error> + Sync),
    ) -> Result<Windows, CrewError<M::Error>>
    where
        M::Error: Send,
    {
        self.drive(plan, make, None::<&mut dyn FnMut(usize)>)
            .map(|(w, _)| w)
    }

    /// Runs [`WindowPlan::windows`] windows (no more: the caller decides on retries), each
    /// released together with `beside(window)` on the calling thread and ended when it
    /// returns; the caller pins itself to a CPU the crew does not use. Returns the windows
    /// and what `beside` returned for each.
    pub fn windows_beside<M: Member, R>(
        &self,
        plan: WindowPlan,
        make: &(dyn Fn(usize) -> Result<M, M::Error> + Sync),
        beside: &mut dyn FnMut(usize) -> R,
    ) -> Result<(Windows, Vec<R>), CrewError<M::Error>>
    where
        M::Error: Send,
    {
        self.drive(plan, make, Some(beside))
    }

    fn drive<M: Member, R>(
        &self,
        plan: WindowPlan,
        make: &(dyn Fn(usize) -> Result<M, M::Error> + Sync),
        mut beside: Option<&mut dyn FnMut(usize) -> R>,
    ) -> Result<(Windows, Vec<R>), CrewError<M::Error>>
    where
        M::Error: Send,
    {
        let n = self.seats.len();
        let with_caller = beside.is_some() as usize;
        let sh = Shared {
            seats: &self.seats,
            plan,
            beside: beside.is_some(),
            stop: Stop::default(),
            gate: SpinBarrier::new(n),
            release: SpinBarrier::new(n + with_caller),
            end: SpinBarrier::new(n + with_caller),
            go_on: AtomicBool::new(true),
            run: AtomicUsize::new(0),
            slots: (0..n).map(|_| Mutex::new(Slot::default())).collect(),
            records: Mutex::new(Vec::new()),
            steal: Mutex::new(None),
        };
        let timer = self.timer;
        let (outcomes, besides) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|t| {
                    let sh = &sh;
                    s.spawn(move || {
                        let r = member_thread(sh, timer, t, make);
                        if r.is_err() {
                            sh.stop.abort();
                        }
                        r
                    })
                })
                .collect();
            let mut besides = Vec::new();
            if let Some(f) = beside.as_mut() {
                for w in 0..plan.windows.max(1) {
                    if sh.wait(&sh.release).is_err() {
                        break;
                    }
                    besides.push(f(w));
                    sh.stop.set(true);
                    if sh.wait(&sh.end).is_err() {
                        break;
                    }
                }
            }
            let outcomes: Vec<_> = handles
                .into_iter()
                .enumerate()
                .map(|(t, h)| h.join().unwrap_or(Err(Fail::Panicked(t))))
                .collect();
            (outcomes, besides)
        });
        let mut first: Option<CrewError<M::Error>> = None;
        for o in outcomes {
            match o {
                Ok(()) | Err(Fail::Stopped) => {}
                Err(Fail::Pin(thread, reason)) => {
                    first.get_or_insert(CrewError::Pin {
                        thread,
                        cpu: self.seats[thread].cpu,
                        reason,
                    });
                }
                Err(Fail::Member(thread, source)) => {
                    first.get_or_insert(CrewError::Member {
                        thread,
                        cpu: self.seats[thread].cpu,
                        source,
                    });
                }
                Err(Fail::Panicked(thread)) => {
                    first.get_or_insert(CrewError::Panicked { thread });
                }
            }
        }
        if let Some(e) = first {
            return Err(e);
        }
        let records = sh.records.into_inner().unwrap_or_default();
        Ok((Windows::new(plan, &self.seats, records), besides))
    }
}

/// Why a thread left.
enum Fail<E> {
    Pin(usize, String),
    Member(usize, E),
    Panicked(usize),
    /// Another thread failed first.
    Stopped,
}

fn member_thread<M: Member>(
    sh: &Shared<'_>,
    timer: &Timer,
    t: usize,
    make: &(dyn Fn(usize) -> Result<M, M::Error> + Sync),
) -> Result<(), Fail<M::Error>> {
    let seat = sh.seats[t];
    crate::pin::pin_current(seat.cpu).map_err(|e| Fail::Pin(t, e.to_string()))?;
    let mut m = make(t).map_err(|e| Fail::Member(t, e))?;
    let mut ev = CounterGroup::open_with_timer(timer);
    m.warm(&sh.stop).map_err(|e| Fail::Member(t, e))?;
    let mut rec = Recorder::new();
    let window_ticks = (sh.plan.window.as_nanos() as f64 * timer.ticks_to_ns(1.0).recip()) as u64;
    loop {
        sh.wait(&sh.gate).map_err(|()| Fail::Stopped)?;
        if !sh.go_on.load(Ordering::Acquire) {
            return Ok(());
        }
        if t == 0 {
            *sh.steal.lock().unwrap_or_else(|e| e.into_inner()) = evidence::steal_ticks(&sh.cpus());
        }
        ev.start();
        sh.wait(&sh.release).map_err(|()| Fail::Stopped)?;
        let start = timer.start();
        rec.begin(start);
        let mut bytes = 0u64;
        loop {
            bytes += m.call(&sh.stop).map_err(|e| Fail::Member(t, e))?;
            let now = timer.stop();
            rec.push((now, bytes));
            if t == 0 && !sh.beside && now.wrapping_sub(start) >= window_ticks {
                sh.stop.set(true);
            }
            if sh.stop.is_set() {
                break;
            }
        }
        let seen = ev.stop();
        m.finish(&sh.stop).map_err(|e| Fail::Member(t, e))?;
        {
            let mut slot = sh.slots[t].lock().unwrap_or_else(|e| e.into_inner());
            let kept = slot.rec.replace(rec);
            rec = kept.unwrap_or_else(Recorder::new);
            slot.seen = seen;
        }
        sh.wait(&sh.end).map_err(|()| Fail::Stopped)?;
        if t == 0 {
            keep_books(sh, timer);
        }
    }
}

/// After a window, on the first thread: the window's figures and evidence recorded, and
/// whether another window runs.
fn keep_books(sh: &Shared<'_>, timer: &Timer) {
    let after = evidence::steal_ticks(&sh.cpus());
    let before = sh.steal.lock().unwrap_or_else(|e| e.into_inner()).take();
    let mut seen: Vec<Counts> = Vec::with_capacity(sh.seats.len());
    let mut recs = Vec::with_capacity(sh.seats.len());
    for slot in &sh.slots {
        let s = slot.lock().unwrap_or_else(|e| e.into_inner());
        seen.push(s.seen.clone());
        recs.push(s.rec.clone());
    }
    let base = recs.iter().flatten().map(|r| r.start).min().unwrap_or(0);
    let traces: Vec<Trace> = sh
        .seats
        .iter()
        .zip(&recs)
        .filter(|(s, _)| s.measuring)
        .filter_map(|(_, r)| r.as_ref().map(|r| r.trace(timer, base)))
        .collect();
    let mut figure = WindowFigure::of(&traces);
    let length_ns = figure
        .as_ref()
        .map_or(sh.plan.window.as_nanos() as f64, |f| f.common_ns);
    let mut why: Vec<String> = sh
        .seats
        .iter()
        .enumerate()
        .zip(&seen)
        .flat_map(|((t, s), seen)| {
            let role = if s.measuring { "thread" } else { "helper" };
            evidence::judge(seen, length_ns)
                .into_iter()
                .map(move |d| format!("{role} {t} (CPU {}): {d}", s.cpu))
        })
        .collect();
    let stolen = match (before, after) {
        (Some(b), Some(a)) => evidence::stolen(&b, &a),
        _ => Vec::new(),
    };
    why.extend(stolen.iter().cloned());
    if let Some(f) = figure.as_mut() {
        f.disturbances = why.clone();
    }
    let mut records = sh.records.lock().unwrap_or_else(|e| e.into_inner());
    records.push(WindowRecord {
        figure,
        disturbances: why,
        stolen,
        seen,
    });
    let run = sh.run.fetch_add(1, Ordering::Relaxed) + 1;
    let clean = records
        .iter()
        .filter(|r| r.figure.as_ref().is_some_and(WindowFigure::clean))
        .count();
    let more = if sh.beside {
        run < sh.plan.windows.max(1)
    } else {
        clean < sh.plan.windows.max(1) && run < sh.plan.max_windows.max(sh.plan.windows).max(1)
    };
    sh.go_on.store(more, Ordering::Release);
    sh.stop.set(false);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Context;
    use std::convert::Infallible;
    use std::time::Duration;

    /// A member that spins for `ns` per call and counts 1000 bytes.
    struct Spin(u64);
    impl Member for Spin {
        type Error = Infallible;
        fn call(&mut self, _stop: &Stop) -> Result<u64, Infallible> {
            let t = std::time::Instant::now();
            while (t.elapsed().as_nanos() as u64) < self.0 {
                std::hint::spin_loop();
            }
            Ok(1000)
        }
    }

    fn plan(windows: usize) -> WindowPlan {
        WindowPlan {
            window: Duration::from_millis(5),
            windows,
            max_windows: 3 * windows,
        }
    }

    #[test]
    fn the_recorder_keeps_both_edges_in_time_order() {
        let timer = Timer::fallback(crate::timer::Calibration::QUICK, "test");
        let mut r = Recorder::new();
        r.begin(1000);
        for i in 1..=500u64 {
            r.push((1000 + i * 10, i * 7));
        }
        let t = r.trace(&timer, 1000);
        assert_eq!(t.points.len(), 2 * EDGE_POINTS);
        assert!(t.points.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(t.points[0], (10.0, 7));
        assert_eq!(*t.points.last().unwrap(), (5000.0, 3500));
        assert_eq!(t.bytes(), 3500);
        // A short window keeps every point.
        r.begin(0);
        r.push((5, 1));
        r.push((9, 2));
        assert_eq!(r.trace(&timer, 0).points, vec![(5.0, 1), (9.0, 2)]);
    }

    #[test]
    fn every_member_runs_in_every_window_and_the_books_add_up() {
        let ctx = Context::quick_local();
        let crew = Crew::of(&ctx, 2);
        let w = crew
            .windows(plan(3), &|_t| Ok::<_, Infallible>(Spin(20_000)))
            .unwrap();
        assert!(w.run() >= 3 && w.run() <= 9, "{}", w.run());
        assert!(w.clean_count() >= 3 || w.run() == 9);
        for r in w.records() {
            // No common time: a thread was held off the whole window, which says so.
            let Some(f) = r.figure.as_ref() else {
                assert!(!r.disturbances.is_empty(), "{r:?}");
                continue;
            };
            assert_eq!(f.thread_gbs.len(), 2);
            // 1000 bytes per 20 us call: 0.05 GB/s per thread (the spin may overrun).
            assert!(
                f.aggregate_gbs > 0.0 && f.aggregate_gbs <= 0.1 + 1e-9,
                "{f:?}"
            );
            // A thread preempted at the release starts late: such a window says so.
            assert!(f.common_ns >= 4e6 || !f.clean(), "{f:?}");
        }
        assert!(w.aggregate().is_some());
        assert_eq!(w.noisy().is_some(), w.clean_count() == 0);
    }

    #[test]
    fn a_section_beside_the_crew_runs_once_per_window() {
        let ctx = Context::quick_local();
        let crew = Crew::of(&ctx, 1);
        let mut calls = 0;
        let (w, rs) = crew
            .windows_beside(plan(2), &|_t| Ok::<_, Infallible>(Spin(10_000)), &mut |i| {
                calls += 1;
                std::thread::sleep(Duration::from_millis(3));
                i
            })
            .unwrap();
        assert_eq!(rs, vec![0, 1]);
        assert_eq!(calls, 2);
        assert_eq!(w.run(), 2);
        for r in w.records() {
            let f = r.figure.as_ref().unwrap();
            assert!(f.common_ns >= 2e6 || !f.clean(), "{f:?}");
        }
    }

    /// A member that fails in its third call.
    struct Breaks(usize);
    impl Member for Breaks {
        type Error = String;
        fn warm(&mut self, _stop: &Stop) -> Result<(), String> {
            Ok(())
        }
        fn call(&mut self, _stop: &Stop) -> Result<u64, String> {
            self.0 += 1;
            if self.0 == 3 {
                Err("broken".into())
            } else {
                Ok(1)
            }
        }
    }

    #[test]
    fn a_failing_member_stops_the_crew_with_its_error() {
        let ctx = Context::quick_local();
        let crew = Crew::of(&ctx, 2);
        let e = crew.windows(plan(2), &|_t| Ok(Breaks(0))).unwrap_err();
        match e {
            CrewError::Member { source, .. } => assert_eq!(source, "broken"),
            other => panic!("{other}"),
        }
        let e = crew
            .windows(plan(2), &|t| {
                if t == 1 {
                    Err("no member".to_string())
                } else {
                    Ok(Breaks(10))
                }
            })
            .unwrap_err();
        assert!(e.to_string().contains("no member"), "{e}");
    }

    #[test]
    fn a_thread_that_cannot_be_pinned_is_an_error() {
        let timer = Timer::fallback(crate::timer::Calibration::QUICK, "test");
        let crew = Crew::on(&timer, &[crate::pin::CPU_NUMBER_LIMIT - 1]);
        // (past the affinity mask: refused rather than a panic in the pinning call)
        let e = crew
            .windows(plan(1), &|_t| Ok::<_, Infallible>(Spin(1000)))
            .unwrap_err();
        assert!(matches!(e, CrewError::Pin { .. }), "{e}");
    }
}
