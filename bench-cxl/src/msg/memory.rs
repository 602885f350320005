//! What `pool.msg` maps at most at once ([`Benchmark::memory`]): the runner's page, the
//! pool window ([`MsgBench::pool_spec`]: cxlchar's own file in /dev/shm of the effort's
//! size, or the `--pool` window of `--len`), the leader's source and destination buffers
//! of the longest message ([`max_message_of`]), and the forked follower's receive buffer
//! of the same length. A window of a dax device or a PCI BAR is device memory, not the
//! system's: it is named, not counted.

use super::*;
use bench_core::memory::budget::Need;
use bench_core::memory::TargetSpec;
use bench_core::units::human_bytes;

/// The need of a run of `b` (its region on `target`).
pub(super) fn need(b: &MsgBench, ctx: &Context, target: &TargetSpec) -> Need {
    let region = target.mapped_bytes(b.region_bytes(ctx, target), &ctx.topology);
    let (spec, _) = b.pool_spec(ctx.effort);
    let window = spec.len;
    let page = bench_core::memory::page_size();
    let buffer = max_message_of(window).div_ceil(page) * page;
    // The leader's two buffers, and the forked follower's one (a follower of `--role`
    // runs elsewhere).
    let buffers = if b.role.is_some() { 2 } else { 3 };
    let (counted, kind) = match &spec.source {
        PoolSource::File(_) => (window.div_ceil(page) * page, "a pool file's pages"),
        PoolSource::Dax(_) => (0, "device memory, not counted"),
        PoolSource::Pci(_) => (0, "a BAR: device memory, not counted"),
    };
    let need = Need {
        bytes: region + counted + buffers * buffer,
        on_target_bytes: region,
        what: format!(
            "the {} pool window ({kind}) and {buffers} message buffers of {}",
            human_bytes(window as u64),
            human_bytes(buffer as u64)
        ),
        fit: None,
        grows_to_bytes: 0,
    };
    // `--len` sizes a `--pool` window; cxlchar's own is the effort's.
    match (&b.pool, counted) {
        (Some(_), 1..) => need.with_fit("--len", 1, region + buffers * buffer),
        _ => need,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_the_window_and_the_buffers_a_run_maps() {
        let ctx = Context::quick_local();
        let b = MsgBench::default();
        let need = need(&b, &ctx, &TargetSpec::Anon);
        // The window and the buffers of the run's own pool, as it maps them.
        let (spec, _) = b.pool_spec(ctx.effort);
        let pool = PoolMap::open(&spec).unwrap();
        let window = pool.len();
        let buffer = max_message(&pool);
        drop(pool);
        if let PoolSource::File(p) = &spec.source {
            std::fs::remove_file(p).unwrap();
        }
        assert_eq!(window, ctx.effort.pool.msg_window_bytes);
        assert_eq!(need.on_target_bytes, 4096);
        assert_eq!(
            need.bytes,
            4096 + window + 3 * buffer.next_multiple_of(4096)
        );
        assert!(need.fit.is_none(), "--len sizes a --pool window only");
        // A --pool on a device-dax: the window is the device's, not counted.
        let dax = MsgBench {
            pool: Some(PoolSpec {
                source: PoolSource::Dax("/dev/dax0.0".into()),
                offset: 0,
                len: 1 << 30,
                allow_write: true,
                force: false,
                scratch: false,
            }),
            role: Some(Role::Leader),
            ..Default::default()
        };
        let need = super::need(&dax, &ctx, &TargetSpec::Anon);
        assert_eq!(need.bytes, 4096 + 2 * (4 << 20), "{need:?}");
        assert!(need.what.contains("not counted"), "{}", need.what);
    }
}
