//! # bench-cxl
//!
//! Shared-memory-pool benchmarks (seeds 000 and 002):
//!
//! * [`atomics`]: dependent atomic RMW latency on a target vs plain loads
//!   (`atomic_lat_ns`, seed 000's `CXL_ATOMIC_LAT`);
//! * [`c2c`]: the core-to-core latency matrix (CAS and flag ping-pong);
//! * [`flush`]: the cost of making written data visible in memory, by size and method
//!   (seed 002's clflush / clflushopt+sfence vs uncacheable mappings);
//! * [`flush_bw`]: the aggregated bandwidth of many threads writing and flushing 512 B
//!   chunks (seed 002 Table 1 "with cache flushing" bandwidth);
//! * [`msg`]: messaging through a pool mapped by two processes or two hosts (flag
//!   latency, an SPSC [`ring`], coherent and non-coherent modes, the Hockney fit), with
//!   the rendezvous header of [`pool`];
//! * [`msg_scale`]: seed 002's message scaling (Figs. 7-9): 1 .. #CPUs/2 sender/receiver
//!   pairs, each with its own queue of fixed-size message [`cells`] in one pool window,
//!   and the cell-size sweep.
//!
//! See docs/pool.md for methods, conventions and the pool header layout.
#![deny(missing_docs)]

pub mod atomics;
pub mod c2c;
pub mod cells;
pub use bench_core::cacheline;
pub mod flush;
pub mod flush_bw;
pub mod msg;
pub mod msg_scale;
pub mod pool;
pub mod ring;

use bench_core::counters::MeasurementCounters;
use bench_core::memory::Placement;
use bench_core::params::Measurement;
use bench_core::stats::Distribution;

#[allow(clippy::too_many_arguments)]
pub(crate) fn measurement(
    id: String,
    bench: &str,
    target: &str,
    parameters: serde_json::Value,
    unit: &str,
    method: String,
    distribution: Distribution,
    placement: Option<Placement>,
    counters: MeasurementCounters,
) -> Measurement {
    Measurement {
        id,
        benchmark: bench.into(),
        target: target.into(),
        parameters,
        unit: unit.into(),
        method,
        distribution,
        placement,
        counters: Some(counters),
    }
}
