//! What `pool.msg-scale` maps at most at once ([`Benchmark::memory`]): the runner's
//! page, the pool window (cxlchar's own file sized for the largest pair count's queues of
//! the largest cell, [`layout`], or the `--pool` window of `--len`), and every thread's
//! own buffers at the largest pair count: its message (at most the largest of
//! [`sizes`]) and its latency samples (this window's and the next's), with every
//! sender's samples of the windows kept for the figure. A window of a dax device or a
//! PCI BAR is device memory: named, not counted.

use super::*;
use bench_core::memory::budget::Need;
use bench_core::units::human_bytes;

impl MsgScaleBench {
    /// The largest cell of the run: the pairs sweep's and the cell-size sweep's.
    pub(super) fn max_cell(&self) -> usize {
        self.cells
            .iter()
            .copied()
            .chain([self.pairs_cell])
            .max()
            .unwrap_or(self.pairs_cell)
    }

    /// The need of a run (its region on `target`).
    pub(super) fn memory_need(&self, ctx: &Context, target: &TargetSpec) -> Need {
        let region = target.mapped_bytes(self.region_bytes(ctx, target), &ctx.topology);
        let (run, _) = pair_rungs(&ctx.ladder(None));
        let Some(pmax) = run.iter().map(|r| r.pairs).max() else {
            return Need::on_target(region, "its page: no pair of CPUs to run");
        };
        let (spec, _) = self.pool_spec(layout(pmax, self.max_cell()).total);
        let page = bench_core::memory::page_size();
        let (window, kind) = match &spec.source {
            PoolSource::File(_) => (spec.len.div_ceil(page) * page, "a pool file's pages"),
            _ => (0, "device memory, not counted"),
        };
        let cap = ctx.effort.pool.msg_scale_round_trips as usize;
        let message = sizes(ctx.effort.pool.msg_scale_every_size)
            .last()
            .copied()
            .unwrap_or(LAT_BYTES);
        let windows = ctx.effort.crew.max_windows;
        // Each of the 2 P threads: its message and two sample buffers; each sender's
        // samples of every window.
        let threads = 2 * pmax * (message + 2 * cap * 8) + pmax * windows * cap * 8;
        let need = Need {
            bytes: region + window + threads,
            on_target_bytes: region,
            what: format!(
                "the {} pool window ({kind}) and the buffers of {pmax} pair(s) of threads ({})",
                human_bytes(spec.len as u64),
                human_bytes(threads as u64)
            ),
            fit: None,
            grows_to_bytes: 0,
        };
        match (&self.pool, window) {
            (Some(_), 1..) => need.with_fit("--len", 1, region + threads),
            _ => need,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_the_window_the_run_sizes_and_the_threads_buffers() {
        let ctx = Context::quick_local();
        let b = MsgScaleBench {
            pool: None,
            cells: vec![16 << 10, 64 << 10],
            pairs_cell: 64 << 10,
            mode: Coherence::Coherent,
        };
        let need = b.memory(&ctx, &TargetSpec::Anon);
        let (run, _) = pair_rungs(&ctx.ladder(None));
        let Some(p) = run.iter().map(|r| r.pairs).max() else {
            assert_eq!(need.bytes, 4096);
            return;
        };
        let window = layout(p, 64 << 10).total.next_multiple_of(4096);
        let (spec, _) = b.pool_spec(layout(p, b.max_cell()).total);
        assert_eq!(spec.len, window);
        assert!(need.bytes > 4096 + window, "{need:?}");
        let threads = need.bytes - 4096 - window;
        // At least every thread's largest message.
        assert!(threads >= 2 * p * (1 << 20), "{need:?}");
    }
}
