//! The rule, the noise of each key and the bottom line, on synthetic changes.

use super::noise::{check_spread, Noise, Noisy};
use super::*;
use bench_core::dram_check::{Better, CheckPoint, DramCheck, Pattern, Verdict};
use bench_core::stats::Distribution;

fn d(p50: f64, p90: f64, stdev: f64, n: u64) -> Distribution {
    Distribution {
        n,
        min: p50 * 0.9,
        p50,
        p90,
        p99: p90,
        p999: p90,
        max: p90,
        mean: p50,
        stdev,
    }
}

#[test]
fn rule() {
    let a = Noise::of(&d(100.0, 103.0, 4.0, 100), false);
    let b = Noise::of(&d(100.0, 104.0, 4.0, 100), false);
    let m = |n: Noise| -> Noisy { Ok((n, "measurement".into())) };
    // h: sqrt(3^2 + 4^2) = 5.
    assert!((threshold(a, b) - 5.0).abs() < 1e-9);
    let c = change("mem_lat_ns", "ns", Some(100.0), Some(104.0), m(a), m(b));
    assert_eq!(c.significant, "no");
    assert_eq!(c.direction, "up");
    assert_eq!(c.verdict, "worse");
    assert_eq!(c.class(), Class::Within);
    let c = change("mem_lat_ns", "ns", Some(100.0), Some(90.0), m(a), m(b));
    assert_eq!(c.significant, "yes");
    assert_eq!(c.verdict, "better");
    assert_eq!(c.noise_source, "measurement");
    let none: Noisy = Err("no distribution in GB/s: derived from ns measurements".into());
    let c = change("x_gbs", "GB/s", Some(10.0), Some(12.0), none.clone(), m(b));
    assert_eq!(c.significant, "unknown");
    assert_eq!(c.verdict, "better");
    assert_eq!(c.class(), Class::NoDistribution);
    assert_eq!(
        c.noise_source,
        "A: no distribution in GB/s: derived from ns measurements"
    );
    assert_eq!(signif_cell(&c), "no distribution");
    let c = change(
        "x_ns",
        "ns",
        Some(10.0),
        None,
        m(a),
        Err("in one file only".into()),
    );
    assert_eq!(c.direction, "only-a");
    assert_eq!(c.significant, "unknown");
    assert_eq!(c.class(), Class::OneFile);
    // A size that moved has a verdict too.
    let c = change(
        "x_bytes",
        "bytes",
        Some(64.0),
        Some(65536.0),
        none.clone(),
        none,
    );
    assert_eq!(c.verdict, "changed");
}

#[test]
fn the_bottom_line_counts_every_key_once_and_names_the_largest_changes() {
    let m = |h: f64| -> Noisy { Ok((Noise { h }, "measurement".into())) };
    let none = || -> Noisy { Err("no distribution: no measurement recorded".into()) };
    let mut v = vec![
        change("a_ns", "ns", Some(100.0), Some(150.0), m(1.0), m(1.0)),
        change("b_ns", "ns", Some(100.0), Some(90.0), m(1.0), m(1.0)),
        change("c_gbs", "GB/s", Some(10.0), Some(10.1), m(1.0), m(1.0)),
        change("d_bytes", "bytes", Some(64.0), Some(128.0), none(), none()),
        change(
            "e_ns",
            "ns",
            Some(1.0),
            None,
            m(1.0),
            Err("in one file only".into()),
        ),
        change("f_ns", "ns", Some(100.0), Some(300.0), m(1.0), m(1.0)),
    ];
    v[5] = unless_measured_differently(v[5].clone(), vec!["threads 2 vs 16".into()]);
    let b = BottomLine::of(&v);
    assert_eq!(
        (b.keys, b.beyond_noise, b.better, b.worse, b.within_noise),
        (6, 2, 1, 1, 1)
    );
    assert_eq!(
        (b.not_comparable, b.no_distribution, b.one_file_only),
        (1, 1, 1)
    );
    assert_eq!(
        b.largest,
        vec!["a_ns", "b_ns"],
        "by |percent|, comparable only"
    );
    let s = b.sentence("keys");
    assert!(s.starts_with("6 keys: 2 changed beyond noise (1 better, 1 worse), 1 within"));
    let quiet = |file: &str| Disturbance {
        file: file.into(),
        disturbed_measurements: 0,
        recorded_measurements: 10,
        noisy_keys: 0,
        mostly_disturbed: false,
    };
    let r = DiffReport {
        rule: RULE.into(),
        disturbance: [quiet("A"), quiet("B")],
        bottom_line: b,
        warnings: vec![],
        params: v,
        measurements: vec![],
    };
    let text = render_table(&r, "a.json", "b.json", false);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with("bottom line: 6 keys: "), "{text}");
    assert!(
        lines[2].starts_with("largest changes beyond noise"),
        "{text}"
    );
    assert!(lines[4].trim_start().starts_with("a_ns "), "{text}");
    let row = lines.iter().find(|l| l.contains("d_bytes")).expect(&text);
    assert!(
        row.contains("no distribution") && row.contains("changed"),
        "{row}"
    );
}

/// The spread of a run's samples: the upper half, the lower half too with few samples (a
/// crew's windows) or disturbed samples, never the p99 of rare interruptions.
#[test]
fn the_noise_is_the_spread_the_run_recorded() {
    let mut many = d(100.0, 103.0, 4.0, 500);
    many.min = 80.0;
    many.p99 = 5000.0;
    assert_eq!(Noise::of(&many, false).h, 3.0);
    assert_eq!(Noise::of(&many, true).h, 20.0, "widened: p50 - min");
    let mut windows = d(30.0, 31.0, 1.0, 5);
    windows.min = 26.0;
    assert_eq!(
        Noise::of(&windows, false).h,
        4.0,
        "p10 of 5 windows is their min"
    );
}

fn check(points: &[(usize, f64, u8)], verdict: Verdict, ratio: f64) -> DramCheck {
    DramCheck {
        target: "anon".into(),
        benchmark: "mem.latency".into(),
        pattern: Pattern::Chase,
        kernel: "tlb-local randomized-256 chase".into(),
        cpus: "0".into(),
        threads: 1,
        unit: "ns".into(),
        better: Better::Lower,
        start_bytes: 1 << 27,
        sizing: "DRAM working set: 4 x the caches".into(),
        points: points
            .iter()
            .map(|&(bytes, value, pass)| CheckPoint {
                bytes,
                value,
                pass,
                id: None,
            })
            .collect(),
        compared_bytes: [1 << 27, 1 << 28],
        ratio,
        tolerance: 0.05,
        verdict,
        note: None,
        reported_bytes: 1 << 27,
        repeated: points.len() > 2,
        keys: vec!["mem_lat_ns@anon".into()],
    }
}

/// A DRAM check measured one kernel at two sizes and in passes: how far those figures lay
/// apart is a spread between measurements, relative.
#[test]
fn the_dram_checks_passes_and_sizes_are_a_spread_between_measurements() {
    let (s, ss) = (1usize << 27, 1usize << 28);
    let agree = check(&[(s, 100.0, 1), (ss, 102.0, 1)], Verdict::Agree, 1.02);
    assert!((check_spread(&agree) - 0.02).abs() < 1e-12);
    let passes = check(
        &[(s, 100.0, 1), (ss, 110.0, 1), (s, 120.0, 2), (ss, 112.0, 2)],
        Verdict::Noisy,
        1.01,
    );
    // Passes at S: 100 and 120 around a mean of 110; the sizes of a noisy check are no
    // agreement.
    assert!((check_spread(&passes) - 20.0 / 110.0).abs() < 1e-12);
}
