//! Property tests of the consumers (`model`, `check`, `diff`, `plot`), run in-process:
//! over params files of the right shape whose numbers are replaced by generated values
//! (extreme, negative and, in the typed document, non-finite), over random text given as
//! a params.json or a spec, and over generated specs. Each property: no panic, and the
//! result is a value or a clean error. Case counts are bounded so the suite stays fast.

use super::{check, diff, junit, model, spec};
use crate::document::load;
use bench_core::params::ParamsFile;
use proptest::prelude::*;
use serde_json::Value;

/// The two shapes of params.json the properties start from: a full quick run (every
/// family, so plot draws) and the consumers' test file.
const BASES: [&str; 2] = [
    include_str!("../../../results/plots/params-quick.json"),
    include_str!("../../tests/data/params-a.json"),
];

/// Any f64, weighted towards the values that break arithmetic.
fn wild_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(-1.0),
        Just(1e308),
        Just(-1e308),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        -1e6..1e6f64,
        any::<f64>(),
    ]
}

/// `v` with numbers replaced, in document order, from `vals` (cycled) where `mask` says;
/// integers stay integers (a float there is a clean layout error, tried too).
fn replace_numbers(v: &mut Value, vals: &[f64], mask: &[bool], i: &mut usize) {
    match v {
        Value::Number(n) => {
            let k = *i % vals.len();
            *i += 1;
            if !mask[k % mask.len()] {
                return;
            }
            let x = vals[k];
            *v = if n.is_f64() || k.is_multiple_of(7) {
                serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
            } else if x.is_finite() {
                Value::from(x.abs().min(u64::MAX as f64) as u64)
            } else {
                Value::from(u64::MAX)
            };
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace_numbers(x, vals, mask, i)),
        Value::Object(o) => o
            .values_mut()
            .for_each(|x| replace_numbers(x, vals, mask, i)),
        _ => {}
    }
}

/// A spec of the right shape over the file's keys and registered keys.
fn spec_text() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("mem_lat_ns".to_string()),
        Just("cxl_lat_ns".to_string()),
        Just("mem_bw_gbs".to_string()),
        Just("nt_copy_bw_gbs".to_string()),
        Just("mem_lat_ns@anon".to_string()),
        "[a-z_]{1,12}_(ns|gbs)",
        ".{0,8}",
    ];
    let limit = prop_oneof![
        wild_f64().prop_map(|v| format!("value = {v:?}").replace("NaN", "nan")),
        wild_f64().prop_map(|v| format!("value = \"{v}\"")),
        (wild_f64(), "[a-z_]{1,10}_ns", wild_f64())
            .prop_map(|(a, k, b)| format!("expr = \"{a:e} * {k} + {b:e}\"")),
        "[0-9a-z_ .*/+()@:-]{0,40}".prop_map(|e| format!("expr = \"{e}\"")),
    ];
    let op = prop_oneof![Just("<="), Just("<"), Just(">="), Just(">"), Just("=~")];
    let bound = (key, op, limit, any::<bool>()).prop_map(|(k, op, l, opt)| {
        format!("[[bound]]\nkey = {k:?}\nop = \"{op}\"\n{l}\noptional = {opt}\n")
    });
    (
        proptest::collection::vec("[a-z_@:0-9]{0,16}", 0..4),
        proptest::collection::vec(bound, 0..6),
    )
        .prop_map(|(req, bounds)| format!("required = {req:?}\n{}", bounds.concat()))
}

/// Every output (and baseline) of evaluated models is a finite number; a model that
/// would give another is the error that names it.
fn assert_finite_models(inputs: &model::Inputs) {
    match model::evaluate(inputs, &[]) {
        Ok(results) => {
            for r in &results {
                for o in &r.outputs {
                    assert!(o.value.is_finite(), "{} {} = {}", r.id, o.name, o.value);
                    assert!(o.baseline.is_none_or(f64::is_finite), "{} {}", r.id, o.name);
                }
            }
            let _ = model::render_table(&results, &inputs.overrides);
            serde_json::to_string(&results).expect("model results serialize");
        }
        Err(e) => assert!(e.to_string().contains("not a finite number"), "{e}"),
    }
}

/// Runs every consumer on `f` (and `diff` against `other` both ways); panics are the
/// failures proptest reports.
fn consume(f: &ParamsFile, other: &ParamsFile, spec_text: &str) {
    let mut inputs = model::Inputs::from_file(f);
    if inputs
        .apply(&[model::parse_what_if("mem_lat_ns*1e308").unwrap()])
        .is_ok()
    {
        assert!(inputs.overrides.values().all(|v| v.is_finite()));
    }
    assert_finite_models(&inputs);
    for (a, b) in [(f, other), (other, f), (f, f)] {
        let r = diff::diff(a, b);
        let _ = diff::render_table(&r, "a.json", "b.json", true);
        serde_json::to_string(&r).expect("diff report serializes");
    }
    if let Ok(s) = spec::parse(spec_text, "s.toml") {
        let results = check::check(&s, f);
        let code = check::exit_code(&results);
        assert!([0, 1, 3].contains(&code.code()), "check exit code {code:?}");
        let _ = check::render_table(&s, "p.json", &results);
        let _ = junit::render("p.json", &[(&s.name, &results)]);
        serde_json::to_string(&results).expect("check results serialize");
    }
}

fn base(i: usize) -> (Value, ParamsFile) {
    let text = BASES[i % BASES.len()];
    (
        serde_json::from_str(text).unwrap(),
        load::parse(text, "base.json").unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A params file of the right shape with its numbers replaced (finite extremes in
    /// the text), loaded and consumed.
    #[test]
    fn valid_shaped_params_text(
        which in 0..2usize,
        vals in proptest::collection::vec(wild_f64(), 1..64),
        mask in proptest::collection::vec(any::<bool>(), 1..16),
        s in spec_text(),
    ) {
        let (mut v, other) = base(which);
        replace_numbers(&mut v, &vals, &mask, &mut 0);
        let text = serde_json::to_string(&v).unwrap();
        if let Ok(f) = load::parse(&text, "p.json") {
            consume(&f, &other, &s);
        }
    }

    /// The typed document with non-finite and extreme values in params and in every
    /// measurement's distribution.
    #[test]
    fn non_finite_values_in_the_document(
        which in 0..2usize,
        vals in proptest::collection::vec(wild_f64(), 1..64),
        extra in proptest::collection::vec((0..64usize, wild_f64()), 0..16),
        s in spec_text(),
    ) {
        let (_, other) = base(which);
        let mut f = other.clone();
        let mut k = 0;
        let mut next = || { k += 1; vals[k % vals.len()] };
        for v in f.params.values_mut() {
            *v = next();
        }
        let names: Vec<&str> = bench_core::keys::all()
            .iter()
            .filter(|d| !d.is_pattern())
            .map(|d| d.name)
            .collect();
        for (i, v) in extra {
            f.params.insert(names[i % names.len()].to_string(), v);
        }
        for m in &mut f.measurements {
            let d = &mut m.distribution;
            for x in [&mut d.min, &mut d.p50, &mut d.p90, &mut d.p99, &mut d.p999, &mut d.max, &mut d.mean, &mut d.stdev] {
                *x = next();
            }
        }
        consume(&f, &other, &s);
    }

    /// A `--what-if` of any number: parsed only when finite and not negative, applied only
    /// when the value it gives is finite (else the error names the key), and the models
    /// evaluated on it give finite numbers or the error naming the output.
    #[test]
    fn what_ifs_are_finite_or_refused_naming_the_key(
        which in 0..2usize,
        whats in proptest::collection::vec(
            (
                prop_oneof![
                    Just("mem_lat_ns"),
                    Just("l2_lat_ns"),
                    Just("mpi_lat_ns"),
                    Just("mpi_bw_gbs"),
                    Just("cxl_atomic_lat_ns"),
                    Just("cxl_lat_ns"),
                    Just("mem_bw_gbs"),
                    Just("l2_size_bytes"),
                ],
                any::<bool>(),
                wild_f64(),
                any::<bool>(),
            ),
            1..6,
        ),
    ) {
        let (_, f) = base(which);
        let mut inputs = model::Inputs::from_file(&f);
        for (key, set, v, exp) in whats {
            let num = if exp { format!("{v:e}") } else { format!("{v}") };
            let text = format!("{key}{}{num}", if set { "=" } else { "*" });
            let w = match model::parse_what_if(&text) {
                Ok(w) => w,
                Err(e) => {
                    prop_assert!(!(v.is_finite() && v >= 0.0), "{text} refused: {e}");
                    continue;
                }
            };
            prop_assert!(v.is_finite() && v >= 0.0, "{text} accepted");
            match inputs.apply(&[w]) {
                Ok(()) => prop_assert!(inputs.overrides.values().all(|x| x.is_finite())),
                Err(e) => prop_assert!(e.to_string().contains(key), "{e}"),
            }
        }
        assert_finite_models(&inputs);
    }

    /// Random text as a params.json and as a spec: a value or a clean error.
    #[test]
    fn random_text(bytes in proptest::collection::vec(any::<u8>(), 0..512), s in ".{0,200}") {
        let text = String::from_utf8_lossy(&bytes);
        let _ = load::parse(&text, "p.json");
        let _ = spec::parse(&text, "s.toml");
        let _ = spec::parse(&s, "s.toml");
        let _ = load::parse(&s, "p.json");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// `plot` over the full run with extreme and non-finite distributions: every chart is
    /// drawn or skipped, or a clean error.
    #[test]
    fn plot_survives_extreme_values(vals in proptest::collection::vec(wild_f64(), 1..32)) {
        let (_, mut f) = base(0);
        let mut k = 0;
        for m in &mut f.measurements {
            let d = &mut m.distribution;
            for x in [&mut d.p50, &mut d.p99, &mut d.mean, &mut d.stdev] {
                k += 1;
                *x = vals[k % vals.len()];
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let _ = crate::plot::plot(&f, dir.path());
    }
}

/// The case that hung `plot` (a log axis from 5e-324 to 1e308): the points are left out,
/// the run ends, and the chart with nothing left to draw is skipped with its reason.
#[test]
fn plot_of_a_subnormal_to_huge_latency_ends() {
    let (_, mut f) = base(0);
    let mut n = 0usize;
    for m in f
        .measurements
        .iter_mut()
        .filter(|m| m.benchmark == "mem.latency")
    {
        m.distribution.p50 = if n.is_multiple_of(2) { 5e-324 } else { 1e308 };
        n += 1;
    }
    assert!(n >= 2, "the base file has mem.latency measurements");
    let dir = tempfile::tempdir().unwrap();
    let out = crate::plot::plot(&f, dir.path()).unwrap();
    assert!(
        out.skipped.iter().any(|s| s.starts_with("latency.svg")),
        "{:?}",
        out.skipped
    );
    assert!(!dir.path().join("latency.svg").exists());
}
