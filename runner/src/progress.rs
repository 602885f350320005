//! Progress of a measuring run, on stderr only.
//!
//! When stderr is a terminal: a bar over the run's units of work (each planned
//! (benchmark, target) pair and each device benchmark, weighted by
//! [`Benchmark::expected_cost`]) with the elapsed time, an ETA, the current
//! benchmark/target and the last progress message of the benchmark. A terminal that
//! cannot move the cursor (`TERM=dumb`) gets the progress messages as plain lines. When
//! stderr is not a terminal (a pipe, a file, CI): nothing.
//!
//! The ETA is an estimate: the time per unit of expected cost so far, times the cost
//! still to run ([`eta`]). Units that turn out to be skipped leave the total. The bar is
//! redrawn only when something happens (no redraw thread runs beside the measurements),
//! and it is cleared before anything goes to stdout.

use bench_core::bench::Benchmark;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

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
}

/// A benchmark's weight on the bar, in fixed point.
pub fn weight(bench: &dyn Benchmark, ctx: &bench_core::bench::Context) -> u64 {
    let c = bench.expected_cost(ctx);
    let c = if c.is_finite() && c > 0.0 { c } else { 1.0 };
    (c * SCALE).round().max(1.0) as u64
}

impl Progress {
    /// The display for this process's stderr: a bar when it is a terminal that can draw
    /// one, plain lines on a dumb terminal, else nothing.
    pub fn for_stderr() -> Progress {
        let mode = if !std::io::stderr().is_terminal() {
            Mode::Silent
        } else if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
            Mode::Lines
        } else {
            // 0 of 1 until the total is known (a length of 0 would draw as 100%).
            let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
            bar.set_style(style());
            Mode::Bar(bar)
        };
        Progress { mode }
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

    /// A unit begins: `bench` on `target`.
    pub fn start(&self, bench: &str, target: &str) {
        if let Mode::Bar(bar) = &self.mode {
            bar.set_prefix(format!("{bench} on {target}"));
        }
    }

    /// A unit of weight `w` ran (measured, or skipped after it had started).
    pub fn done(&self, w: u64) {
        if let Mode::Bar(bar) = &self.mode {
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
/// message on a second line.
fn style() -> ProgressStyle {
    ProgressStyle::with_template(
        "[{bar:30}] {percent:>3}% {elapsed} elapsed, ETA {eta_estimate}  {prefix}\n  {wide_msg}",
    )
    .expect("the template is valid")
    .progress_chars("=> ")
    .with_key(
        "eta_estimate",
        |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let text = match eta(s.elapsed(), s.pos(), s.len().unwrap_or(0)) {
                Some(d) => format!("~{}", format_eta(d)),
                None => "estimating".into(),
            };
            let _ = w.write_str(&text);
        },
    )
}

/// The estimated time left: the elapsed time per unit of work done, times the work left.
/// `None` before any work is done (nothing to estimate from); zero once all is done.
pub fn eta(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    if done == 0 {
        return None;
    }
    let left = total.saturating_sub(done);
    Some(elapsed.mul_f64(left as f64 / done as f64))
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
    fn eta_is_time_per_unit_done_times_units_left() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(10), 0, 100), None, "nothing done: no estimate");
        assert_eq!(eta(s(10), 25, 100), Some(s(30)));
        assert_eq!(eta(s(10), 50, 100), Some(s(10)));
        assert_eq!(eta(s(10), 100, 100), Some(s(0)));
        // Work beyond a total that shrank (skipped units): nothing left, never negative.
        assert_eq!(eta(s(10), 120, 100), Some(s(0)));
        // Weighted units: 1 of 4 cost units took 2 s, so 3 more take 6 s.
        assert_eq!(eta(s(2), 1000, 4000), Some(s(6)));
    }

    #[test]
    fn eta_is_formatted_for_people() {
        assert_eq!(format_eta(Duration::from_secs(45)), "45s");
        assert_eq!(format_eta(Duration::from_secs(185)), "3m05s");
        assert_eq!(format_eta(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn the_style_template_parses() {
        let _ = style();
    }

    #[test]
    fn a_hidden_bar_tracks_weights() {
        let bar = ProgressBar::hidden();
        bar.set_length(5000);
        let p = Progress {
            mode: Mode::Bar(bar.clone()),
        };
        p.start("mem.latency", "anon");
        p.done(2000);
        p.dropped(1000);
        assert_eq!((bar.position(), bar.length()), (2000, Some(4000)));
        (p.callback())("placing memory...");
        assert_eq!(bar.message(), "placing memory...");
        drop(p);
        assert!(bar.is_finished());
    }
}
