//! Progress of a measuring run, on stderr only.
//!
//! When stderr is a terminal: the run's plan first ([`Progress::announce`]), then a bar
//! over the plan's seconds ([`crate::schedule`]: every (benchmark, target) unit with its
//! points) with the elapsed time, an ETA, the current benchmark/target and the last
//! progress message of the benchmark. The bar moves point by point: each point a
//! benchmark reports done ([`bench_core::bench::Context::point_done`]) credits that
//! point's planned seconds, and a unit's end credits what is left of it. A terminal that
//! cannot move the cursor (`TERM=dumb`) gets the plan and the progress messages as plain
//! lines. When stderr is not a terminal (a pipe, a file, CI): nothing.
//!
//! The ETA ([`eta`]) is the planned seconds left times how much slower or faster than
//! planned this machine has been so far, that ratio starting from 1 (the plan) and
//! following the observed one as work is done. Units that turn out to be skipped leave
//! the total. The bar is redrawn only when something happens (a point, a message, a
//! unit's start or end): no ticker thread runs beside the measuring threads. It is
//! cleared before anything goes to stdout.

use bench_core::plan::Cost;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Fixed-point scale of the bar's position and length (planned seconds x 1000).
const SCALE: f64 = 1000.0;

/// How the run's progress is shown.
enum Mode {
    /// A bar on a terminal.
    Bar(ProgressBar),
    /// Plain lines on stderr (a terminal that cannot draw a bar).
    Lines,
    /// Nothing (stderr is not a terminal).
    Silent,
}

/// The unit under way: its points, how many are done, what was credited.
struct Under {
    cost: Cost,
    /// Its planned seconds (fixed point).
    weight: u64,
    /// Credited to the bar so far (fixed point).
    credited: u64,
    /// Points reported done.
    done: usize,
    /// When the last point ended (or the unit began).
    since: Instant,
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
    current: Current,
}

/// Seconds in fixed point.
pub fn fixed(seconds: f64) -> u64 {
    (seconds.max(0.0) * SCALE).round() as u64
}

fn lock(c: &Current) -> std::sync::MutexGuard<'_, Option<Under>> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

impl Progress {
    /// The display for this process's stderr: a bar when it is a terminal that can draw
    /// one, plain lines on a dumb terminal, else nothing.
    pub fn for_stderr() -> Progress {
        let current = Arc::new(Mutex::new(None));
        let mode = if !std::io::stderr().is_terminal() {
            Mode::Silent
        } else if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
            Mode::Lines
        } else {
            // 0 of 1 until the total is known (a length of 0 would draw as 100%).
            let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
            bar.set_style(style(current.clone()));
            Mode::Bar(bar)
        };
        Progress { mode, current }
    }

    /// Whether anything is shown (stderr is a terminal).
    pub fn shown(&self) -> bool {
        !matches!(self.mode, Mode::Silent)
    }

    /// Prints `text` (the plan) above the bar, on a terminal only.
    pub fn announce(&self, text: &str) {
        match &self.mode {
            Mode::Bar(bar) => bar.suspend(|| eprint!("{text}")),
            Mode::Lines => eprint!("{text}"),
            Mode::Silent => {}
        }
    }

    /// The callback of [`bench_core::bench::Context::progress`]: the message of the bar,
    /// a plain line, or nothing.
    pub fn callback(&self) -> Arc<dyn Fn(&str) + Send + Sync> {
        match &self.mode {
            Mode::Bar(bar) => {
                let bar = bar.clone();
                Arc::new(move |m: &str| bar.set_message(m.to_string()))
            }
            Mode::Lines => Arc::new(|m: &str| eprintln!("{m}")),
            Mode::Silent => Arc::new(|_: &str| {}),
        }
    }

    /// The callback of [`bench_core::bench::Context::point_done`]: the unit under way
    /// credits its next point's planned seconds.
    pub fn point_callback(&self) -> Arc<dyn Fn() + Send + Sync> {
        let current = self.current.clone();
        let bar = match &self.mode {
            Mode::Bar(bar) => Some(bar.clone()),
            _ => None,
        };
        Arc::new(move || {
            let mut c = lock(&current);
            if let Some(u) = c.as_mut() {
                let d = u.next_point();
                u.credited += d;
                u.done += 1;
                u.since = Instant::now();
                if let Some(bar) = &bar {
                    bar.inc(d);
                }
            }
        })
    }

    /// Sets the total work: the planned seconds of the units to run.
    pub fn set_total(&self, seconds: f64) {
        if let Mode::Bar(bar) = &self.mode {
            bar.set_length(fixed(seconds).max(2));
        }
    }

    /// A unit begins: `bench` on `target`, planned as `cost`.
    pub fn start(&self, bench: &str, target: &str, cost: &Cost) {
        *lock(&self.current) = Some(Under {
            cost: cost.clone(),
            weight: fixed(cost.seconds()),
            credited: 0,
            done: 0,
            since: Instant::now(),
        });
        if let Mode::Bar(bar) = &self.mode {
            bar.set_prefix(format!("{bench} on {target}"));
        }
    }

    /// The unit under way ended (measured, or skipped after it had started): what it
    /// had left is credited. Returns the points it reported done.
    pub fn done(&self) -> usize {
        let u = lock(&self.current).take();
        let Some(u) = u else { return 0 };
        if let Mode::Bar(bar) = &self.mode {
            bar.inc(u.weight.saturating_sub(u.credited));
        }
        u.done
    }

    /// A unit of `seconds` will not run (skipped before it started): it leaves the total,
    /// so that the ETA is not drawn from work that took no time.
    pub fn dropped(&self, seconds: f64) {
        if let Mode::Bar(bar) = &self.mode {
            bar.set_length(
                bar.length()
                    .unwrap_or(0)
                    .saturating_sub(fixed(seconds))
                    .max(2),
            );
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Mode::Bar(bar) = &self.mode {
            bar.finish_and_clear();
        }
    }
}

/// The bar's layout: bar, percentage, elapsed, ETA, current unit; the benchmark's last
/// message on a second line. `current` is the unit under way ([`Progress::start`]).
fn style(current: Current) -> ProgressStyle {
    ProgressStyle::with_template(
        "[{bar:30}] {percent:>3}% {elapsed} elapsed, ETA {eta_estimate}  {prefix}\n  {wide_msg}",
    )
    .expect("the template is valid")
    .progress_chars("=> ")
    .with_key(
        "eta_estimate",
        move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            // The point under way counts as done for as long as it has run, up to its
            // planned seconds.
            let under_way = lock(&current)
                .as_ref()
                .map_or(0, |u| in_flight(u.since.elapsed(), u.next_point()));
            let text = match eta(s.elapsed(), s.pos() + under_way, s.len().unwrap_or(0)) {
                Some(d) => format!("~{}", format_eta(d)),
                None => "estimating".into(),
            };
            let _ = w.write_str(&text);
        },
    )
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
mod tests {
    use super::*;

    #[test]
    fn eta_is_the_expected_seconds_left_at_this_machines_pace() {
        let s = Duration::from_secs;
        let ms = |x: u64| x * SCALE as u64;
        assert_eq!(eta(s(10), 0, 0), None, "no total: no estimate");
        // Nothing done yet: the recorded seconds as they are.
        assert_eq!(eta(s(0), 0, ms(60)), Some(s(60)));
        // On pace (20 s of 20 expected): the expected seconds left.
        assert_eq!(eta(s(20), ms(20), ms(60)), Some(s(40)));
        // Twice as slow over 100 expected seconds: (200 + 20) / (100 + 20) = 11/6 pace.
        let e = eta(s(200), ms(100), ms(160)).unwrap();
        assert!((e.as_secs_f64() - 60.0 * 11.0 / 6.0).abs() < 1e-6, "{e:?}");
        // A long first family does not extrapolate to the whole run: 40 s spent on 12
        // expected seconds of 60 gives (60 / 32) x 48 s left = 90 s, not 40 / 12 x 48.
        let e = eta(s(40), ms(12), ms(60)).unwrap();
        assert!((e.as_secs_f64() - 90.0).abs() < 1e-6, "{e:?}");
        // All done, or more than a total that shrank: nothing left, never negative.
        assert_eq!(eta(s(10), ms(60), ms(60)), Some(s(0)));
        assert_eq!(eta(s(10), ms(70), ms(60)), Some(s(0)));
        // Mid-way through a 12 s unit on schedule (6 s run, credited in flight) of a 52 s
        // run: its other 6 s and the 40 s after it.
        let done = in_flight(s(6), ms(12));
        assert_eq!(eta(s(6), done, ms(52)), Some(s(46)));
        // A unit that overran its weight is credited its weight, no more.
        assert_eq!(in_flight(s(30), ms(12)), ms(12));
    }

    #[test]
    fn eta_is_formatted_for_people() {
        assert_eq!(format_eta(Duration::from_secs(45)), "45s");
        assert_eq!(format_eta(Duration::from_secs(185)), "3m05s");
        assert_eq!(format_eta(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn the_style_template_parses() {
        let _ = style(Arc::new(Mutex::new(None)));
    }

    #[test]
    fn a_hidden_bar_moves_point_by_point() {
        let bar = ProgressBar::hidden();
        bar.set_length(fixed(10.0));
        let p = Progress {
            mode: Mode::Bar(bar.clone()),
            current: Arc::new(Mutex::new(None)),
        };
        let mut cost = Cost::new();
        cost.add("a", 2, 1.5).add("b", 1, 3.0);
        p.start("mem.latency", "anon", &cost);
        let point = p.point_callback();
        point();
        assert_eq!(bar.position(), fixed(1.5), "the first point's seconds");
        point();
        point();
        assert_eq!(bar.position(), fixed(6.0));
        point();
        assert_eq!(
            bar.position(),
            fixed(6.0),
            "a point beyond the plan credits nothing"
        );
        assert_eq!(p.done(), 4);
        assert_eq!(bar.position(), fixed(6.0));
        let mut short = Cost::new();
        short.add("a", 4, 0.5);
        p.start("mem.bandwidth", "anon", &short);
        point();
        assert_eq!(p.done(), 1);
        assert_eq!(
            bar.position(),
            fixed(8.0),
            "the unit's end credits what it had left"
        );
        p.dropped(1.0);
        assert_eq!(bar.length(), Some(fixed(9.0)));
        (p.callback())("placing memory...");
        assert_eq!(bar.message(), "placing memory...");
        drop(p);
        assert!(bar.is_finished());
    }
}
