//! Progress of a measuring run, on stderr only.
//!
//! When stderr is a terminal: the run's plan first ([`Progress::announce`]), then a bar
//! over the plan's seconds ([`crate::schedule`]: every (benchmark, target) unit with its
//! points) with the elapsed time, an ETA, the current benchmark/target and the last
//! progress message of the benchmark. The bar moves point by point: each point a
//! benchmark reports done ([`bench_core::bench::Context::point_done`]) credits that
//! point's planned seconds, and a unit's end credits what is left of it. A terminal that
//! cannot move the cursor (`TERM=dumb`, or no `TERM` at all) gets the plan and the progress
//! messages as plain lines. When stderr is not a terminal (a pipe, a file, CI): nothing.
//!
//! The measuring threads never draw and never wait for the display: what they report
//! (a point done, a message, a unit's start and end) goes into [`Shown`], atomics and two
//! strings behind locks held only for a copy. One display thread ([`painter`]) sleeps,
//! wakes once a second (sooner when something was reported), reads that state and draws:
//! the elapsed time ticks while a long point runs. The display thread takes a string's
//! lock only with `try_lock` (a frame that cannot get it draws the old text), and only it
//! calls into the bar while a run measures, so no lock is ever held across a call into the
//! bar and a terminal that does not read its output stalls the display, never the run.
//!
//! The ETA ([`eta`]) is the planned seconds left times how much slower or faster than
//! planned this machine has been so far, that ratio starting from 1 (the plan) and
//! following the observed one as work is done. Units that turn out to be skipped leave
//! the total. The bar is cleared before anything goes to stdout.

use bench_core::plan::Cost;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Fixed-point scale of the bar's position and length (planned seconds x 1000).
const SCALE: f64 = 1000.0;

/// How often the display redraws when nothing is reported (the elapsed time ticks).
const TICK: Duration = Duration::from_secs(1);

/// The shortest time between two frames (reports sooner than this wait for the next).
const FRAME: Duration = Duration::from_millis(100);

/// Plain lines a dumb terminal is owed at most; older ones are dropped (and counted).
const LINES_HELD: usize = 256;

/// How the run's progress is shown.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// A bar on a terminal.
    Bar,
    /// Plain lines on stderr (a terminal that cannot draw a bar).
    Lines,
    /// Nothing (stderr is not a terminal).
    Silent,
}

/// What the measuring side reports and the display reads: atomics, and strings whose
/// locks are held only for a copy or a swap.
struct Shown {
    /// When the display began (the epoch of `point_since_ms`).
    epoch: Instant,
    /// Credited planned work (fixed point).
    pos: AtomicU64,
    /// The planned work of the run (fixed point); 1 until known.
    len: AtomicU64,
    /// Planned work of the point under way (fixed point), 0 between units.
    next_point: AtomicU64,
    /// When the point under way began, in ms since `epoch`.
    point_since_ms: AtomicU64,
    /// Bumped on every report: the display draws when it changed.
    generation: AtomicU64,
    /// The unit under way (`mem.latency on anon`).
    prefix: Mutex<String>,
    /// The benchmark's last message.
    message: Mutex<String>,
    /// Lines owed to a dumb terminal, and how many were dropped.
    lines: Mutex<(VecDeque<String>, usize)>,
    /// The display thread is to draw its last frame and end.
    stop: AtomicBool,
}

impl Shown {
    fn new() -> Shown {
        Shown {
            epoch: Instant::now(),
            pos: AtomicU64::new(0),
            len: AtomicU64::new(1),
            next_point: AtomicU64::new(0),
            point_since_ms: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            prefix: Mutex::new(String::new()),
            message: Mutex::new(String::new()),
            lines: Mutex::new((VecDeque::new(), 0)),
            stop: AtomicBool::new(false),
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// The planned work of the point under way that has run so far (fixed point).
    fn under_way(&self) -> u64 {
        let since = self.point_since_ms.load(Ordering::Relaxed);
        let ran = Duration::from_millis(self.now_ms().saturating_sub(since));
        in_flight(ran, self.next_point.load(Ordering::Relaxed))
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// A lock for the reporting side: held only for a copy, so waiting is short.
fn hold<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A lock for the display: `None` when someone holds it (this frame draws the old text).
fn peek<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The unit under way: its points, how many are done, what was credited. Only the
/// reporting side touches it (the display reads [`Shown`]).
struct Under {
    cost: Cost,
    /// Its planned seconds (fixed point).
    weight: u64,
    /// Credited to the bar so far (fixed point).
    credited: u64,
    /// Points reported done.
    done: usize,
}

impl Under {
    /// The planned seconds of the next point (fixed point), within what is left.
    fn next_point(&self) -> u64 {
        let s = self.cost.seconds_of_first(self.done + 1) - self.cost.seconds_of_first(self.done);
        ((s * SCALE).round() as u64).min(self.weight.saturating_sub(self.credited))
    }
}

type Current = Arc<Mutex<Option<Under>>>;

/// The progress display of one run; cleared when dropped.
pub struct Progress {
    mode: Mode,
    shown: Arc<Shown>,
    current: Current,
    /// The bar (mode `Bar`); only the display thread draws it while it runs.
    bar: Option<ProgressBar>,
    painter: Option<JoinHandle<()>>,
}

/// Seconds in fixed point.
pub fn fixed(seconds: f64) -> u64 {
    (seconds.max(0.0) * SCALE).round() as u64
}

impl Progress {
    /// The display for this process's stderr: a bar when it is a terminal that can draw
    /// one, plain lines on a dumb terminal, else nothing.
    pub fn for_stderr() -> Progress {
        let mode = if !std::io::stderr().is_terminal() {
            Mode::Silent
        } else if std::env::var_os("TERM").is_none_or(|t| t == "dumb" || t.is_empty()) {
            // A terminal that says nothing of itself may not move the cursor either.
            Mode::Lines
        } else {
            Mode::Bar
        };
        let bar = (mode == Mode::Bar)
            .then(|| ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr()));
        Progress::with(mode, bar)
    }

    /// A display in `mode` drawing `bar` (a hidden bar in tests).
    fn with(mode: Mode, bar: Option<ProgressBar>) -> Progress {
        let shown = Arc::new(Shown::new());
        if let Some(bar) = &bar {
            bar.set_style(style());
        }
        let painter = match mode {
            Mode::Silent => None,
            _ => {
                let (s, b) = (shown.clone(), bar.clone());
                std::thread::Builder::new()
                    .name("cxlchar-progress".into())
                    .spawn(move || painter(&s, b.as_ref()))
                    .ok()
            }
        };
        Progress {
            mode,
            shown,
            current: Arc::new(Mutex::new(None)),
            bar,
            painter,
        }
    }

    /// Whether anything is shown (stderr is a terminal).
    pub fn shown(&self) -> bool {
        self.mode != Mode::Silent
    }

    /// Prints `text` (the plan) above the bar, on a terminal only. Called before anything
    /// is measured: the only call into the bar from outside the display thread.
    pub fn announce(&self, text: &str) {
        match (&self.mode, &self.bar) {
            (Mode::Bar, Some(bar)) => bar.suspend(|| eprint!("{text}")),
            (Mode::Lines, _) => {
                self.flush_lines();
                eprint!("{text}");
            }
            _ => {}
        }
    }

    /// The callback of [`bench_core::bench::Context::progress`]: the message of the bar,
    /// a plain line, or nothing. It only stores the text for the display thread.
    pub fn callback(&self) -> Arc<dyn Fn(&str) + Send + Sync> {
        let shown = self.shown.clone();
        let wake = self.waker();
        match self.mode {
            Mode::Bar => Arc::new(move |m: &str| {
                // The bar has one row for it: a table's first line (its title).
                let first = m.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                let mut msg = hold(&shown.message);
                msg.clear();
                msg.push_str(first.trim_end());
                drop(msg);
                shown.changed();
                wake();
            }),
            Mode::Lines => Arc::new(move |m: &str| {
                let mut l = hold(&shown.lines);
                if l.0.len() >= LINES_HELD {
                    l.0.pop_front();
                    l.1 += 1;
                }
                l.0.push_back(m.to_string());
                drop(l);
                shown.changed();
                wake();
            }),
            Mode::Silent => Arc::new(|_: &str| {}),
        }
    }

    /// Wakes the display thread (cheap: no lock, no drawing on the caller's thread).
    fn waker(&self) -> impl Fn() + Send + Sync + 'static {
        let t = self.painter.as_ref().map(|h| h.thread().clone());
        move || {
            if let Some(t) = &t {
                t.unpark();
            }
        }
    }

    /// The callback of [`bench_core::bench::Context::point_done`]: the unit under way
    /// credits its next point's planned seconds.
    pub fn point_callback(&self) -> Arc<dyn Fn() + Send + Sync> {
        let current = self.current.clone();
        let shown = self.shown.clone();
        Arc::new(move || {
            let mut c = hold(&current);
            if let Some(u) = c.as_mut() {
                let d = u.next_point();
                u.credited += d;
                u.done += 1;
                shown.pos.fetch_add(d, Ordering::Relaxed);
                shown.next_point.store(u.next_point(), Ordering::Relaxed);
                shown
                    .point_since_ms
                    .store(shown.now_ms(), Ordering::Relaxed);
                shown.changed();
            }
        })
    }

    /// Sets the total work: the planned seconds of the units to run.
    pub fn set_total(&self, seconds: f64) {
        self.shown
            .len
            .store(fixed(seconds).max(2), Ordering::Relaxed);
        self.shown.changed();
    }

    /// A unit begins: `bench` on `target`, planned as `cost`.
    pub fn start(&self, bench: &str, target: &str, cost: &Cost) {
        let u = Under {
            cost: cost.clone(),
            weight: fixed(cost.seconds()),
            credited: 0,
            done: 0,
        };
        self.shown
            .next_point
            .store(u.next_point(), Ordering::Relaxed);
        self.shown
            .point_since_ms
            .store(self.shown.now_ms(), Ordering::Relaxed);
        *hold(&self.current) = Some(u);
        let unit = format!("{bench} on {target}");
        bench_core::cleanup::set_activity(&unit);
        *hold(&self.shown.prefix) = unit;
        self.shown.changed();
        (self.waker())();
    }

    /// The unit under way ended (measured, or skipped after it had started): what it
    /// had left is credited. Returns the points it reported done.
    pub fn done(&self) -> usize {
        let u = hold(&self.current).take();
        let Some(u) = u else { return 0 };
        self.shown
            .pos
            .fetch_add(u.weight.saturating_sub(u.credited), Ordering::Relaxed);
        self.shown.next_point.store(0, Ordering::Relaxed);
        self.shown.changed();
        u.done
    }

    /// A unit of `seconds` will not run (skipped before it started): it leaves the total,
    /// so that the ETA is not drawn from work that took no time.
    pub fn dropped(&self, seconds: f64) {
        let d = fixed(seconds);
        let _ = self
            .shown
            .len
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                Some(l.saturating_sub(d).max(2))
            });
        self.shown.changed();
    }

    /// Prints the lines owed to a dumb terminal (the display thread's job, done here when
    /// the plan must come after them).
    fn flush_lines(&self) {
        print_lines(&self.shown);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.shown.stop.store(true, Ordering::Release);
        if let Some(h) = self.painter.take() {
            h.thread().unpark();
            let _ = h.join();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The display thread: sleeps, and draws what [`Shown`] holds once a second or soon after
/// a report, until told to stop.
fn painter(shown: &Shown, bar: Option<&ProgressBar>) {
    let mut drawn = u64::MAX;
    let mut last = Instant::now() - TICK;
    let mut unit = String::new();
    loop {
        let stop = shown.stop.load(Ordering::Acquire);
        let generation = shown.generation.load(Ordering::Acquire);
        if stop || generation != drawn || last.elapsed() >= TICK {
            if frame(shown, bar, &mut unit) {
                drawn = generation;
            }
            last = Instant::now();
        }
        if stop {
            return;
        }
        std::thread::park_timeout(TICK.saturating_sub(last.elapsed()).max(FRAME));
        // Reports closer together than a frame are drawn together.
        std::thread::sleep(FRAME.saturating_sub(last.elapsed()));
    }
}

/// Draws one frame; `false` when a string was busy (the next wake draws it).
/// `unit` is the unit the last frame showed (kept when the report's string is busy).
fn frame(shown: &Shown, bar: Option<&ProgressBar>, unit: &mut String) -> bool {
    let Some(bar) = bar else {
        print_lines(shown);
        return true;
    };
    // Each string is copied out and its lock released before anything calls into the
    // bar: a draw can block on the terminal, and the reporting side takes these locks.
    let mut whole = true;
    match peek(&shown.prefix).map(|p| p.clone()) {
        Some(p) => *unit = p,
        None => whole = false,
    }
    match peek(&shown.message).map(|m| m.clone()) {
        Some(m) if m != bar.message() => bar.set_message(m),
        Some(_) => {}
        None => whole = false,
    }
    let state = State {
        elapsed: bar.elapsed(),
        done: shown.pos.load(Ordering::Relaxed) + shown.under_way(),
        pos: shown.pos.load(Ordering::Relaxed),
        len: shown.len.load(Ordering::Relaxed),
    };
    bar.set_prefix(first_line(unit, &state, stderr_columns()));
    bar.tick();
    whole
}

/// The width of the terminal stderr is, read at every frame (a resize redraws at the new
/// width).
fn stderr_columns() -> usize {
    crate::output::width::stderr_columns().unwrap_or(80)
}

/// What the first line of the bar shows.
struct State {
    elapsed: Duration,
    /// Planned work credited and under way (fixed point), for the ETA.
    done: u64,
    /// Planned work credited (fixed point), for the bar and percentage.
    pos: u64,
    len: u64,
}

/// The bar's first line, at most `width` characters: the unit under way, the bar, the
/// percentage, the elapsed time and the ETA. A narrow terminal gets a shorter bar, then
/// none, then the words left out; the unit is shortened last.
fn first_line(unit: &str, s: &State, width: usize) -> String {
    let pct = if s.len <= 1 {
        0
    } else {
        (s.pos.min(s.len) * 100 / s.len) as u32
    };
    let eta = match eta(s.elapsed, s.done, s.len) {
        Some(d) => format!("~{}", format_eta(d)),
        None => "estimating".into(),
    };
    let elapsed = format_eta(s.elapsed);
    let long = format!("{pct:>3}%  {elapsed} elapsed, ETA {eta}");
    let short = format!("{pct:>3}% {elapsed} ETA {eta}");
    let unit_w = unit.chars().count();
    for tail in [&long, &short] {
        let rest = width.saturating_sub(unit_w + 2 + tail.chars().count());
        // "[" + bar + "] " around at least 10 cells.
        if rest >= 13 {
            let cells = (rest - 3).min(30);
            let fill = (pct as usize * cells / 100).min(cells);
            let arrow = usize::from(fill < cells && fill > 0);
            let bar = format!(
                "{}{}{}",
                "=".repeat(fill.saturating_sub(arrow)),
                ">".repeat(arrow),
                " ".repeat(cells - fill.saturating_sub(arrow) - arrow)
            );
            return format!("{unit}  [{bar}] {tail}");
        }
        if width >= unit_w + 2 + tail.chars().count() {
            return format!("{unit}  {tail}");
        }
    }
    let room = width.saturating_sub(short.chars().count() + 2);
    let cut: String = if unit_w > room {
        unit.chars()
            .take(room.saturating_sub(1))
            .chain(['…'])
            .collect()
    } else {
        unit.to_string()
    };
    let line = format!("{cut}  {short}");
    line.chars().take(width).collect()
}

/// Prints and forgets the lines owed to a dumb terminal, each fitted to its width.
fn print_lines(shown: &Shown) {
    let (lines, dropped) = match peek(&shown.lines) {
        Some(mut l) => (std::mem::take(&mut l.0), std::mem::take(&mut l.1)),
        None => return,
    };
    if dropped > 0 {
        eprintln!("({dropped} progress messages not shown)");
    }
    let width = Some(stderr_columns());
    for l in lines {
        eprintln!("{}", crate::output::width::fit(&l, width));
    }
}

/// The bar's layout: its first line ([`first_line`], composed by the display thread at
/// each frame for the terminal's width), the benchmark's last message on a second line.
fn style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix}\n  {wide_msg}").expect("the template is valid")
}

/// The planned work of a point of weight `w` that has run for `ran`: its seconds so far,
/// at most its weight.
pub fn in_flight(ran: Duration, w: u64) -> u64 {
    ((ran.as_secs_f64() * SCALE) as u64).min(w)
}

/// Seconds of planned work behind the observed speed at the start: the ETA trusts the
/// plan first and this machine's pace more as work is done.
const PRIOR_SECONDS: f64 = 20.0;

/// The estimated time left: the planned seconds left (`total - done`, in units of
/// planned seconds x [`SCALE`]), times this machine's pace so far: (elapsed + prior) /
/// (planned seconds done + prior), 1 before anything is done; `done` includes the point
/// under way as far as it ran ([`in_flight`]). `None` while the total is unknown; zero
/// once all is done.
pub fn eta(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    // 1: the placeholder length before the plan's total is known (timer calibration).
    if total <= 1 {
        return None;
    }
    let left = total.saturating_sub(done) as f64 / SCALE;
    let pace = (elapsed.as_secs_f64() + PRIOR_SECONDS) / (done as f64 / SCALE + PRIOR_SECONDS);
    Some(Duration::from_secs_f64(left * pace))
}

/// `45s`, `3m05s`, `1h02m`.
pub fn format_eta(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

#[cfg(test)]
mod tests;
