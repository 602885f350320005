//! Progress of a measuring run, on stderr only.
//!
//! When stderr is a terminal: a bar over the run's units of work (each planned
//! (benchmark, target) pair and each device benchmark, weighted by its expected seconds,
//! [`expected_seconds`]) with the elapsed time, an ETA, the current benchmark/target and
//! the last progress message of the benchmark. A terminal that cannot move the cursor
//! (`TERM=dumb`) gets the progress messages as plain lines. When stderr is not a terminal
//! (a pipe, a file, CI): nothing.
//!
//! The weights are the seconds each family took in a recorded `all --quick` on the
//! 2-vCPU development guest (a full run: [`FULL_FACTOR`] times as long), scaled by the
//! thread counts where a family's points grow with the CPUs. The ETA ([`eta`]) is the
//! expected seconds left times how much slower or faster than expected this machine has
//! been so far, that ratio starting from 1 (the recorded run) and following the observed
//! one as work is done. Units that turn out to be skipped leave the total. A bar is
//! redrawn once a second by indicatif's ticker thread, so the elapsed time ticks (a run
//! whose stderr is not a terminal has no such thread), and it is cleared before anything
//! goes to stdout.

use bench_core::bench::Benchmark;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Fixed-point scale of the bar's position and length (units of expected cost x 1000).
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

/// The progress display of one run; cleared when dropped.
pub struct Progress {
    mode: Mode,
    /// The unit under way: when it began and its weight (for the ETA, [`eta`]).
    current: Arc<Mutex<Option<(Instant, u64)>>>,
}

/// A full run's families take this many times the seconds of a `--quick` one (the
/// development guest: `all` about 155 s, `all --quick` about 35 s).
pub const FULL_FACTOR: f64 = 4.5;

/// Seconds a benchmark took in `all --quick` on the 2-vCPU development guest, per target
/// (recorded with `TERM=dumb`'s progress lines); `None` for a family not recorded.
fn recorded_quick_seconds(bench: &str) -> Option<f64> {
    Some(match bench {
        "mem.latency" => 12.0,
        "mem.bandwidth" => 6.0,
        "mem.copy-threshold" => 3.6,
        "mem.alltoall-order" => 1.5,
        "mem.loaded" => 6.0,
        "mem.agents" => 10.0,
        "mem.agents-spread" => 0.5,
        "pool.atomics" => 2.8,
        "pool.c2c" => 0.3,
        "pool.flush" => 0.2,
        "pool.flush-bw" => 0.7,
        "pool.msg" => 0.5,
        "pool.msg-scale" => 0.5,
        "pcie.mmio" | "pcie.post-parts" => 0.3,
        "verbs" => 1.0,
        "gpu.bw" | "gpu.pool" | "gpu.lat" => 3.0,
        _ => return None,
    })
}

/// How many times more work a family does on `cpus` CPUs than on the 2 it was recorded
/// on: the agents' and all-to-all's thread sweeps grow with the CPUs (k = 1..8 and the
/// whole set), the core-to-core pairs with their number (sampled: the square root).
fn cpu_scale(bench: &str, cpus: usize) -> f64 {
    let n = cpus.max(1) as f64;
    match bench {
        "mem.agents" => (n.min(8.0) + f64::from(n > 8.0)) / 2.0,
        "mem.alltoall-order" | "mem.copy-threshold" | "pool.msg-scale" => (n / 2.0).log2() + 1.0,
        "pool.c2c" => (n * (n - 1.0) / 2.0).max(1.0).sqrt(),
        _ => 1.0,
    }
    .max(1.0)
}

/// The seconds `bench` is expected to take on one target with `cpus` CPUs: its own
/// estimate where it gives one ([`Benchmark::expected_cost`] other than the default 1),
/// else the recorded run's, scaled (a family not recorded: 1 s).
pub fn expected_seconds(bench: &str, own: f64, quick: bool, cpus: usize) -> f64 {
    let base = if own.is_finite() && own > 0.0 && own != 1.0 {
        own
    } else {
        recorded_quick_seconds(bench).unwrap_or(1.0)
    };
    let level = if quick { 1.0 } else { FULL_FACTOR };
    base * level * cpu_scale(bench, cpus)
}

/// A benchmark's weight on the bar: its expected seconds, in fixed point.
pub fn weight(bench: &dyn Benchmark, ctx: &bench_core::bench::Context) -> u64 {
    let quick = ctx.effort.level == bench_core::effort::Level::Quick;
    let c = expected_seconds(
        bench.name(),
        bench.expected_cost(ctx),
        quick,
        ctx.cpus.len(),
    );
    (c * SCALE).round().max(1.0) as u64
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
            // The elapsed time and the ETA move between a benchmark's messages.
            bar.enable_steady_tick(Duration::from_secs(1));
            Mode::Bar(bar)
        };
        Progress { mode, current }
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

    /// Sets the total work: the sum of the units' [`weight`]s.
    pub fn set_total(&self, total: u64) {
        if let Mode::Bar(bar) = &self.mode {
            bar.set_length(total);
        }
    }

    /// A unit of weight `w` begins: `bench` on `target`.
    pub fn start(&self, bench: &str, target: &str, w: u64) {
        if let Mode::Bar(bar) = &self.mode {
            *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), w));
            bar.set_prefix(format!("{bench} on {target}"));
        }
    }

    /// A unit of weight `w` ran (measured, or skipped after it had started).
    pub fn done(&self, w: u64) {
        if let Mode::Bar(bar) = &self.mode {
            *self.current.lock().unwrap_or_else(|p| p.into_inner()) = None;
            bar.inc(w);
        }
    }

    /// A unit of weight `w` will not run (skipped before it started): it leaves the
    /// total, so that the ETA is not drawn from work that took no time.
    pub fn dropped(&self, w: u64) {
        if let Mode::Bar(bar) = &self.mode {
            bar.set_length(bar.length().unwrap_or(0).saturating_sub(w));
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
fn style(current: Arc<Mutex<Option<(Instant, u64)>>>) -> ProgressStyle {
    ProgressStyle::with_template(
        "[{bar:30}] {percent:>3}% {elapsed} elapsed, ETA {eta_estimate}  {prefix}\n  {wide_msg}",
    )
    .expect("the template is valid")
    .progress_chars("=> ")
    .with_key(
        "eta_estimate",
        move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            // The unit under way counts as done for as long as it has run, up to its weight.
            let under_way = current
                .lock()
                .map_or(0, |c| c.map_or(0, |(t, w)| in_flight(t.elapsed(), w)));
            let text = match eta(s.elapsed(), s.pos() + under_way, s.len().unwrap_or(0)) {
                Some(d) => format!("~{}", format_eta(d)),
                None => "estimating".into(),
            };
            let _ = w.write_str(&text);
        },
    )
}

/// The expected work of a unit of weight `w` that has run for `ran`: its seconds so far,
/// at most its weight.
pub fn in_flight(ran: Duration, w: u64) -> u64 {
    ((ran.as_secs_f64() * SCALE) as u64).min(w)
}

/// Seconds of expected work behind the observed speed at the start: the ETA trusts the
/// recorded weights first and this machine's pace more as work is done.
const PRIOR_SECONDS: f64 = 20.0;

/// The estimated time left: the expected seconds left (`total - done`, in units of
/// expected seconds x [`SCALE`]), times this machine's pace so far: (elapsed + prior) /
/// (expected seconds done + prior), 1 before anything is done; `done` includes the unit
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
    fn weights_follow_the_recorded_run_effort_and_cpus() {
        let q = |b: &str, cpus| expected_seconds(b, 1.0, true, cpus);
        assert!(
            q("mem.latency", 2) > q("pool.flush", 2),
            "latency is the long one"
        );
        assert_eq!(
            expected_seconds("mem.latency", 1.0, false, 2),
            q("mem.latency", 2) * FULL_FACTOR
        );
        assert!(
            q("mem.agents", 16) > q("mem.agents", 2),
            "the agents' sweep grows"
        );
        assert_eq!(
            q("mem.latency", 16),
            q("mem.latency", 2),
            "latency runs on one CPU"
        );
        assert_eq!(q("unknown.family", 2), 1.0);
        assert_eq!(
            expected_seconds("mem.latency", 7.0, true, 2),
            7.0,
            "a family's own"
        );
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
    fn a_hidden_bar_tracks_weights() {
        let bar = ProgressBar::hidden();
        bar.set_length(5000);
        let p = Progress {
            mode: Mode::Bar(bar.clone()),
            current: Arc::new(Mutex::new(None)),
        };
        p.start("mem.latency", "anon", 2000);
        assert!(p.current.lock().unwrap().is_some(), "a unit under way");
        p.done(2000);
        p.dropped(1000);
        assert_eq!((bar.position(), bar.length()), (2000, Some(4000)));
        (p.callback())("placing memory...");
        assert_eq!(bar.message(), "placing memory...");
        drop(p);
        assert!(bar.is_finished());
    }
}
