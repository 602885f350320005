//! The planned seconds of the GPU families' copies (their `Benchmark::cost`): a size
//! sweep in both directions, and rounds of concurrent copies sharing a copy engine.

use bench_core::bench::Context;
use bench_core::plan::Cost;

/// The planned seconds of a size sweep over `sizes` at `gbs` in both directions: per size,
/// one warm-up and the effort's samples, each batching copies up to the bytes a sample
/// aims at.
pub(crate) fn sweep_cost(ctx: &Context, sizes: &[usize], gbs: f64, what: &str) -> Cost {
    let e = &ctx.plan.expect;
    let g = &ctx.effort.gpu;
    let (bytes, most) = g.sweep_sample_bytes;
    let mut c = Cost::new();
    for dir in ["h2d", "d2h"] {
        let mut each = 0.0;
        for &size in sizes {
            let copies = (bytes / size.max(1)).clamp(1, most.max(1)) as f64;
            let sample = copies * (size as f64 / (gbs * 1e9) + e.gpu_launch_us * 1e-6);
            each += (g.sweep_samples + 1) as f64 * sample;
        }
        c.add(format!("{what} {dir}: {} sizes", sizes.len()), 1, each);
    }
    c
}

/// The planned seconds of `rounds` rounds of `k` concurrent copies of `each` bytes on one
/// copy engine at `gbs` (they share it).
pub(crate) fn concurrent_s(ctx: &Context, k: usize, each: usize, rounds: usize, gbs: f64) -> f64 {
    let e = &ctx.plan.expect;
    (rounds + 1) as f64 * (k as f64 * each as f64 / (gbs * 1e9) + e.gpu_launch_us * 1e-6 * k as f64)
}
