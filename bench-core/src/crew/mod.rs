//! The crew: the one driver of every set of pinned threads that runs a kernel together
//! (`mem bandwidth`, `mem agents`, the NUMA matrix's cells, `pool flush-bw`, the traffic of
//! `mem loaded`, the CPU agents beside the GPU, `pool msg-scale`'s pairs, and the lockstep
//! rounds of the all-to-all copies).
//!
//! **Windows** ([`Crew::windows`], [`Crew::windows_beside`]). Every thread is pinned to its
//! own CPU, builds its [`Member`] on that CPU, warms up, and then, for each window, all
//! threads are released together (a spinning barrier), call their member over and over,
//! and stop together (the first thread ends the window after its length, or the caller's
//! section beside the crew ends it). Each thread records its start, its end and the bytes
//! it had moved at each call boundary ([`window::Trace`]); the window's figures
//! ([`WindowFigure`]) are:
//!
//! * the **aggregate**: the bytes all measuring threads moved inside the common window
//!   (the last start to the first end: every thread ran throughout), interpolated inside a
//!   call, over its length: what the all-thread keys publish, as MLC and likwid-bench
//!   report bandwidth;
//! * the sum of the threads' own rates (each thread's bytes over its own time): the
//!   self-check of the aggregate ([`window::OVERLAP_TOLERANCE`], 3 %: otherwise the threads
//!   did not run together, and the window is retried);
//! * the **bulk-synchronous** figure (threads x the slowest thread's rate: equal work,
//!   done when the slowest is done), the spread (slowest / mean) and the start and stop skew.
//!
//! A window in which a thread was preempted, waited on its run queue, migrated, faulted, or
//! lost time to the hypervisor ([`evidence`]) is left out and another window is run, up to
//! [`WindowPlan::max_windows`]; the figure is the median of the undisturbed windows, and
//! when there is none, of all windows, flagged noisy ([`Windows::noisy`]), never the worst.
//! Windows have the same length with and without `--quick` (fewer of them with it): long
//! enough that the skew costs under 1 % of a window.
//!
//! **Rounds** ([`Crew::rounds`]). The lockstep discipline of the collective copies (the
//! all-to-all of `mem copy-threshold` and `mem alltoall-order`), where a round is only done
//! when every thread is done: a barrier before and after each call, per-thread call times.
//!
//! The calling thread only waits while a crew runs (it sleeps in `join`), so no measuring
//! thread shares its CPU with it; a caller that runs a section beside the crew
//! ([`Crew::windows_beside`]: the chase of `mem loaded`, the GPU's copy loop) pins itself
//! to a CPU the crew does not use.

pub mod evidence;
mod record;
mod rounds;
mod run;
pub mod stream;
pub mod window;

pub use record::Windows;
pub use rounds::{gbs, Rounds};
pub use stream::Stream;
pub use window::{Trace, WindowFigure};

use crate::bench::Context;
use crate::timer::Timer;
use std::sync::atomic::{AtomicBool, Ordering};

/// One thread's part of a crew: built on its own (pinned) thread, warmed up before the
/// first window, then called over and over inside each window.
pub trait Member {
    /// What can go wrong in a call (a peer that stalled, data that came back wrong).
    type Error;

    /// Work before the first window (untimed): touch the memory, warm the caches and
    /// TLB. By default one call.
    fn warm(&mut self, stop: &Stop) -> Result<(), Self::Error> {
        self.call(stop).map(|_| ())
    }

    /// One unit of work inside a window; returns the bytes it moved, counted as the family
    /// counts them (a copy: read + written, unless the family says otherwise). A call
    /// should take well under a hundredth of a window; a call that waits on a peer polls
    /// `stop` and gives up once the crew is [aborted](Stop::aborted).
    fn call(&mut self, stop: &Stop) -> Result<u64, Self::Error>;

    /// After each window's last call, untimed, before the threads meet at its end: what
    /// a member owes its peers (a receiver drains what its sender sent). By default
    /// nothing.
    fn finish(&mut self, _stop: &Stop) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The flags that end a window, and the crew.
#[derive(Debug, Default)]
pub struct Stop {
    end: AtomicBool,
    abort: AtomicBool,
}

impl Stop {
    /// True once the window is over.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.end.load(Ordering::Acquire)
    }

    /// True once a thread of the crew failed: a member waiting on a peer gives up.
    #[inline]
    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }

    pub(crate) fn set(&self, v: bool) {
        self.end.store(v, Ordering::Release);
    }

    pub(crate) fn abort(&self) {
        self.abort.store(true, Ordering::Relaxed);
        self.set(true);
    }
}

/// How many windows, and how long (the effort plan's, [`crate::effort`]).
pub use crate::effort::WindowPlan;

/// A thread's seat: its CPU, and whether it measures (its bytes count) or helps (a
/// receiver: checked for disturbances only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seat {
    /// The CPU it is pinned to.
    pub cpu: usize,
    /// Whether its bytes count in the window's figures.
    pub measuring: bool,
}

/// Why a crew did not finish.
#[derive(Debug, thiserror::Error)]
pub enum CrewError<E> {
    /// A thread could not be pinned to its CPU.
    #[error("thread {thread} could not be pinned to CPU {cpu}: {reason}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Pin {
        thread: usize,
        cpu: usize,
        reason: String,
    },
    /// A member failed (the first failure; the others were stopped).
    #[error("thread {thread} (CPU {cpu}): {source}")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Member {
        thread: usize,
        cpu: usize,
        source: E,
    },
    /// A thread panicked.
    #[error("thread {thread} panicked")]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    Panicked { thread: usize },
}

impl CrewError<std::convert::Infallible> {
    /// The error of a crew whose members cannot fail, as a text.
    pub fn reason(&self) -> String {
        self.to_string()
    }
}

/// A set of pinned threads (see the module documentation).
#[derive(Debug, Clone)]
pub struct Crew<'t> {
    timer: &'t Timer,
    seats: Vec<Seat>,
}

impl<'t> Crew<'t> {
    /// Measuring threads on `cpus`, one each, in order.
    pub fn on(timer: &'t Timer, cpus: &[usize]) -> Crew<'t> {
        Crew {
            timer,
            seats: cpus
                .iter()
                .map(|&cpu| Seat {
                    cpu,
                    measuring: true,
                })
                .collect(),
        }
    }

    /// `threads` measuring threads on the run's CPUs (`ctx.cpus`, round robin past the
    /// end, as every multi-threaded family pins them; [`Context::cpus_for`]).
    pub fn of(ctx: &'t Context, threads: usize) -> Crew<'t> {
        let cpus: Vec<usize> = (0..threads.max(1))
            .map(|t| ctx.cpus[t % ctx.cpus.len().max(1)])
            .collect();
        Crew::on(&ctx.timer, &cpus)
    }

    /// Adds helper threads on `cpus` (after the measuring ones; thread numbers go on).
    pub fn with_helpers(mut self, cpus: &[usize]) -> Crew<'t> {
        self.seats.extend(cpus.iter().map(|&cpu| Seat {
            cpu,
            measuring: false,
        }));
        self
    }

    /// The seats, in thread order.
    pub fn seats(&self) -> &[Seat] {
        &self.seats
    }

    /// The measuring threads' CPUs, in thread order.
    pub fn measuring_cpus(&self) -> Vec<usize> {
        self.seats
            .iter()
            .filter(|s| s.measuring)
            .map(|s| s.cpu)
            .collect()
    }
}
