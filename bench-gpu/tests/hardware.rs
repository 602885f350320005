//! GPU hardware tests: ignored by default (no GPU in CI). They run on a machine with a GPU
//! through `ci/gpu-tests.sh` (built here with `--build`, run there with `--run`), or with
//! `cargo test -p bench-gpu -- --ignored` where a toolchain and a GPU meet. Without a GPU they
//! fail: they never pass by skipping.

use bench_core::bench::{Benchmark, Context, Input};
use bench_core::memory::{Region, TargetSpec};
use bench_gpu::config::GpuConfig;
use bench_gpu::cuda::{
    self, Device, DeviceBuffer, Dir, HostSpan, PinnedBuffer, Registration, Stream,
};

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

/// Writes a pattern into `host`, copies it to the device, clears the host range, copies
/// it back and checks every byte, at an offset on both sides.
fn round_trip(dev: &Device, host: HostSpan<'_>, len: usize, seed: u8) {
    let buf = DeviceBuffer::new(dev, len + 4096).unwrap();
    let s = Stream::new(dev).unwrap();
    let (host_off, dev_off) = (4096, 512);
    let want = pattern(len, seed);
    // SAFETY: no copy is in flight and no other thread uses the span.
    unsafe { host.write(host_off, &want) };
    s.copy(Dir::H2d, &buf, dev_off, host, host_off, len)
        .unwrap();
    s.synchronize().unwrap();
    // SAFETY: the stream was synchronized; nothing else uses the span.
    unsafe { host.write(host_off, &vec![0u8; len]) };
    s.copy(Dir::D2h, &buf, dev_off, host, host_off, len)
        .unwrap();
    s.synchronize().unwrap();
    let mut got = vec![0u8; len];
    // SAFETY: the stream was synchronized; nothing else uses the span.
    unsafe { host.read(host_off, &mut got) };
    assert!(got == want, "round trip changed the bytes (seed {seed})");
}

#[test]
#[ignore = "needs a CUDA GPU: runs on a GPU machine with ci/gpu-tests.sh"]
fn gpu_round_trip_moves_the_right_bytes() {
    cuda::init().expect("a usable CUDA driver and device");
    let dev = Device::open(0).unwrap();
    let len = 3 << 20;
    // Pageable.
    let mut v = vec![0u8; len + 8192];
    round_trip(&dev, HostSpan::pageable(&mut v), len, 1);
    // Pinned by CUDA.
    let mut pinned = PinnedBuffer::new(&dev, len + 8192).unwrap();
    round_trip(&dev, pinned.span(), len, 2);
    // A cxlchar target registered with cuMemHostRegister.
    let topo = bench_core::topology::Topology::system();
    let mut region = Region::allocate(&TargetSpec::Anon, len + 8192, &topo).unwrap();
    let mut reg = Registration::of_region(&dev, &mut region).unwrap();
    round_trip(&dev, reg.span(), len, 3);
}

#[test]
#[ignore = "needs a CUDA GPU: runs on a GPU machine with ci/gpu-tests.sh"]
fn gpu_benchmarks_produce_their_keys() {
    let ctx = Context::quick_local();
    let config = GpuConfig {
        max_size: Some(4 << 20),
        streams: Some(vec![1, 2]),
        contention_size: Some(1 << 20),
        device: Some(0),
        parts: None,
    };
    let host = bench_gpu::host::GpuHostBench {
        device: 0,
        config: config.clone(),
    };
    let rep = host.run(&ctx, Input::Device).expect("gpu.bw runs");
    for k in ["gpu_h2d_bw_gbs", "gpu_d2h_bw_gbs", "gpu_copy_lat_ns"] {
        let p = rep
            .params
            .iter()
            .find(|p| p.key == k)
            .unwrap_or_else(|| panic!("{k}"));
        assert!(p.value > 0.0, "{k}");
    }
    let pool = bench_gpu::pool::GpuPoolBench { config, gpus: 1 };
    let mut region = Region::allocate(
        &TargetSpec::Anon,
        pool.region_bytes(&ctx, &TargetSpec::Anon),
        &ctx.topology,
    )
    .unwrap();
    let rep = pool
        .run(&ctx, Input::Region(&mut region))
        .expect("gpu.pool runs");
    for k in [
        "gpu_reg_h2d_bw_gbs",
        "gpu_reg_d2h_bw_gbs",
        "gpu_reg_h2d_k2_bw_gbs",
        "gpu_reg_h2d_k2_agg_bw_gbs",
        "gpu_reg_h2d_share_min_ratio",
        "gpu_reg_mixed_h2d_k2_bw_gbs",
        "gpu_reg_mixed_k2_agg_bw_gbs",
    ] {
        assert!(rep.params.iter().any(|p| p.key == k), "{k}");
    }
    for m in &rep.measurements {
        assert!(m.placement.is_some(), "{}", m.id);
    }
}

#[test]
#[ignore = "needs a CUDA GPU: runs on a GPU machine with ci/gpu-tests.sh"]
fn gpu_device_out_of_range_is_a_skip() {
    let ctx = Context::quick_local();
    let b = bench_gpu::host::GpuHostBench {
        device: 4096,
        config: GpuConfig::default(),
    };
    let s = b.run(&ctx, Input::Device).unwrap_err();
    assert!(
        s.skip_reason().unwrap().contains("does not exist"),
        "{}",
        s.skip_reason().unwrap()
    );
}
