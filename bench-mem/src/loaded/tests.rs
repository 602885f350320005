//! Tests of `loaded.rs`.

use super::*;
use clap::Parser;

#[derive(Debug, clap::Parser)]
struct Cli {
    #[command(flatten)]
    args: LoadedArgs,
}

fn parse(args: &[&str]) -> Result<Vec<Mix>, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("loaded").chain(args.iter().copied()))?;
    Ok(plan_curves(&cli.args.mix, &[])
        .into_iter()
        .map(|t| t.named().expect("named mixes only"))
        .collect())
}

/// The curves and the adaptive flag `mem loaded ARGS` plans under `effort`.
fn planned(
    args: &[&str],
    effort: &'static bench_core::effort::Effort,
) -> Result<(Vec<Traffic>, bool), String> {
    let cli = Cli::try_parse_from(std::iter::once("loaded").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    let shares = cli.args.shares(effort.mem.loaded_family_step_pct);
    Ok((plan_curves(&cli.args.mix, &shares), !shares.is_empty()))
}

#[test]
fn read_pct_lists_parse_and_bad_ones_say_why() {
    let full = &bench_core::effort::FULL;
    let pcts = |args: &[&str]| -> Result<Vec<u32>, String> {
        planned(args, full).map(|(c, _)| c.iter().map(|t| t.read_pct()).collect())
    };
    assert_eq!(pcts(&["--read-pct", "100,98,50"]).unwrap(), [100, 98, 50]);
    assert_eq!(
        pcts(&["--read-pct", "100:90:5", "--read-pct", "0,95"]).unwrap(),
        [100, 95, 90, 0]
    );
    assert_eq!(pcts(&["--read-pct", "0:6:3"]).unwrap(), [0, 3, 6]);
    // --read-pct replaces the default mixes; with --mix both.
    let (c, adaptive) = planned(&["--read-pct", "98", "--mix", "1r1w"], full).unwrap();
    assert_eq!(
        c.iter().map(|t| t.name()).collect::<Vec<_>>(),
        ["1r1w", "share98"]
    );
    assert!(adaptive);
    let (c, adaptive) = planned(&[], full).unwrap();
    assert_eq!(c.len(), 5);
    assert!(!adaptive);
    for (bad, why) in [
        ("101", "outside 0..=100"),
        ("-1", "outside 0..=100"),
        ("", "empty"),
        ("50,,40", "empty"),
        ("50.5", "not a whole percentage"),
        ("abc", "not a whole percentage"),
        ("100:0:0", "step"),
        ("100:0", "FROM:TO:STEP"),
    ] {
        let e = pcts(&["--read-pct", bad]).unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

#[test]
fn mess_family_is_51_shares_and_11_with_quick() {
    use bench_core::effort::{FULL, QUICK};
    for (effort, n) in [(&FULL, 51), (&QUICK, 11)] {
        let (c, adaptive) = planned(&["--mess-family"], effort).unwrap();
        assert!(adaptive);
        let pcts: Vec<u32> = c.iter().map(|t| t.read_pct()).collect();
        let step = 100 / (n - 1);
        let want: Vec<u32> = (0..n).map(|i| 100 - i * step).collect();
        assert_eq!(pcts, want);
        // The named mixes among them keep their names (and keys).
        assert_eq!(c[0].name(), "read");
        assert_eq!(c.last().unwrap().name(), "nt-write");
    }
    // Shares given twice, or as a named mix, are measured once.
    let (c, _) = planned(
        &["--mess-family", "--read-pct", "98,7", "--mix", "read"],
        &FULL,
    )
    .unwrap();
    assert_eq!(c.len(), 52);
    assert_eq!(c[0].name(), "read");
    assert_eq!(c[1].name(), "share98");
    assert_eq!(c[2].name(), "share7");
}

#[test]
fn mixes_parse_with_lists_repeats_and_the_old_name() {
    assert_eq!(parse(&[]).unwrap(), Mix::ALL.to_vec());
    assert_eq!(parse(&["--mix", "read"]).unwrap(), vec![Mix::Read]);
    assert_eq!(
        parse(&["--mix", "nt-write,3r1w", "--mix", "2r1w", "--mix", "3r1w"]).unwrap(),
        vec![Mix::NtWrite, Mix::R3W1, Mix::R2W1]
    );
    assert_eq!(parse(&["--mix", "read-write"]).unwrap(), vec![Mix::R1W1]);
    assert_eq!(
        parse(&["--mix", "1r1w,read-write"]).unwrap(),
        vec![Mix::R1W1]
    );
    assert!(parse(&["--mix", "copy"]).is_err());
    for m in Mix::ALL {
        assert_eq!(parse(&["--mix", m.name()]).unwrap(), vec![m]);
    }
}

#[test]
fn read_shares_and_ratios_are_the_contract() {
    let want = [
        (Mix::Read, 100, "1:0"),
        (Mix::R3W1, 80, "3:1"),
        (Mix::R2W1, 75, "2:1"),
        (Mix::R1W1, 67, "1:1"),
        (Mix::NtWrite, 0, "0:1"),
    ];
    for (m, pct, ratio) in want {
        assert_eq!(m.read_pct(), pct, "{}", m.name());
        let l = m.lines();
        assert_eq!(l.ratio(), ratio, "{}", m.name());
        // Whole 256-byte vector steps in each part, at most 4 KiB per chunk.
        assert_eq!(l.loaded % 4, 0);
        assert_eq!(l.stored() % 4, 0);
        assert!(l.chunk_bytes() <= 4096 && l.chunk_bytes() >= 3840);
        assert_eq!(Traffic::mix(m).name(), m.name());
    }
    // Key parts are well formed and distinct.
    let parts: Vec<_> = Mix::ALL.iter().filter_map(|m| m.key_part()).collect();
    assert_eq!(parts, ["3r1w", "2r1w", "1r1w", "nt_write"]);
    for p in parts {
        for k in [
            format!("loaded_lat_max_bw_{p}_gbs"),
            format!("loaded_lat_at_max_bw_{p}_ns"),
            format!("loaded_lat_p99_at_max_bw_{p}_ns"),
        ] {
            assert!(bench_core::keys::lookup(&k).is_some(), "{k} not registered");
        }
    }
}

/// Runs `chunks` chunks of `mix` over a buffer of `len` bytes filled with 0x11.
fn run_chunks(lines: Lines, isa: kernels::Isa, len: usize, chunks: usize) -> (Vec<u8>, Issued) {
    let mut buf = vec![0x11u8; len];
    let mut left = chunks;
    let done = traffic(&mut buf, lines, isa, 0, || {
        let go = left > 0;
        left = left.saturating_sub(1);
        go
    });
    (buf, done)
}

#[test]
fn traffic_issues_its_ratio_and_stores_only_where_it_should() {
    let isas = IsaSet::detect();
    for isa in [
        kernels::Isa::Scalar,
        kernels::Isa::Sse2,
        kernels::Isa::Avx2,
        kernels::Isa::Avx512,
    ]
    .into_iter()
    .filter(|&i| isas.has(i))
    {
        let shares = (0..=100).step_by(2).map(Traffic::share);
        for t in Mix::ALL.map(Traffic::mix).into_iter().chain(shares) {
            let (mix, lines) = (t.name(), t.lines);
            let chunk = lines.chunk_bytes();
            let (r, w) = (lines.loaded, lines.stored());
            // Five chunks fit (plus a partial one that is never touched); seven run,
            // so the last two wrap to the start.
            let len = 5 * chunk + chunk / 2;
            let (buf, done) = run_chunks(lines, isa, len, 7);
            assert_eq!(done.loaded, 7 * (r * LINE) as u64, "{mix}");
            assert_eq!(done.stored, 7 * (w * LINE) as u64, "{mix}");
            if w > 0 {
                assert_eq!(done.loaded * w as u64, done.stored * r as u64);
            }
            for (i, c) in buf.chunks(chunk).enumerate() {
                if i == 5 {
                    assert!(c.iter().all(|&b| b == 0x11), "tail untouched");
                    continue;
                }
                let (ld, st) = c.split_at(r * LINE);
                assert!(ld.iter().all(|&b| b == 0x11), "{mix}: loads only");
                assert!(
                    st.iter().all(|&b| b == STORE_BYTE),
                    "{mix}: chunk {i} fully stored"
                );
            }
        }
    }
}

#[test]
fn max_bandwidth_index_ignores_idle() {
    assert_eq!(max_bandwidth_index(&[10.0, 14.0, 3.0, 0.0]), Some(1));
    assert_eq!(max_bandwidth_index(&[0.0]), None);
    assert_eq!(max_bandwidth_index(&[]), None);
}

#[test]
fn one_cpu_is_a_reasoned_skip() {
    let ctx = Context {
        cpus: vec![bench_core::pin::allowed_cpus()[0]],
        ..Context::quick_local()
    };
    let b = LoadedLatencyBench::default();
    let e = b
        .check(&ctx, &bench_core::memory::TargetSpec::Anon)
        .unwrap_err();
    assert!(e.reason.contains("needs 2 CPUs"), "{e}");
}

#[test]
fn memory_is_the_region_a_run_grows_to_and_the_rigs_buffers() {
    let ctx = Context::quick_local();
    if ctx.cpus.len() < 2 {
        bench_core::testing::unavailable("2 CPUs", "one chases, the others inject");
        return;
    }
    let ctx = ctx.with_cpus(&ctx.cpus[..2]);
    // 256 MiB offered: the chase and the traffic 64 MiB each (a quarter), each check's
    // larger point 128 MiB (half), which no check can grow past.
    ctx.sizing.assume_available("anon", Some(256 << 20));
    let b = LoadedLatencyBench {
        curves: vec![Traffic::mix(Mix::Read)],
        adaptive: false,
    };
    let anon = bench_core::memory::TargetSpec::Anon;
    let need = b.memory(&ctx, &anon);
    assert_eq!(need.on_target_bytes, 128 << 20, "{need:?}");
    assert!(
        need.bytes - need.on_target_bytes >= 2 * RIG_BYTES,
        "{need:?}"
    );
    let mut r =
        bench_core::memory::Region::allocate(&anon, b.region_bytes(&ctx, &anon), &ctx.topology)
            .unwrap();
    let rep = b.run(&ctx, Input::Region(&mut r)).unwrap();
    assert!(!rep.measurements.is_empty());
    assert_eq!(
        anon.mapped_bytes(r.len(), &ctx.topology),
        need.on_target_bytes,
        "the region the run grew to is the plan's"
    );
}
