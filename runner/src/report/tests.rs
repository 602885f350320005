//! The page: sections, one inline SVG per chart with data, notes for the others, no
//! external reference, and no markup from the file.

use super::warnings::names;
use super::*;
use crate::consumers::spec;
use bench_core::params::{Measurement, Skipped, Warning};

fn all_quick() -> ParamsFile {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../results/plots/params-all-quick.json");
    load::load(&p).unwrap()
}

fn page(f: &ParamsFile, acc: Option<&Acceptance>) -> (String, Vec<Chart>) {
    let charts = crate::plot::charts(f).unwrap();
    (render(f, "p.json", &charts, acc), charts)
}

/// The values of every `src=` and `href=` attribute (quoted or not) in `html`.
fn references(html: &str) -> Vec<String> {
    let mut out = vec![];
    for attr in ["src=", "href="] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            let v: String = match rest.chars().next() {
                Some(q @ ('"' | '\'')) => rest[1..].chars().take_while(|&c| c != q).collect(),
                _ => rest
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '>')
                    .collect(),
            };
            out.push(v);
        }
    }
    out
}

#[test]
fn sections_and_one_svg_per_chart_with_data() {
    let f = all_quick();
    let (html, charts) = page(&f, None);
    for id in ["run", "environment", "warnings", "keys", "plots", "skipped"] {
        assert!(html.contains(&format!("<h2 id=\"{id}\">")), "section {id}");
    }
    assert!(
        !html.contains("id=\"acceptance\""),
        "no spec, no acceptance"
    );
    assert!(html.contains(&format!("<title>{}</title>", esc(&title(&f)))));
    assert!(html.contains(&esc(&f.environment.cpu.model)));
    let drawn: Vec<&Chart> = charts.iter().filter(|c| c.svg.is_some()).collect();
    // latency, bandwidth (sweep and kernels), copy-threshold, loaded, flush, c2c cas and
    // flag.
    assert_eq!(
        drawn.len(),
        8,
        "{:?}",
        charts.iter().map(|c| &c.file).collect::<Vec<_>>()
    );
    assert_eq!(html.matches("<svg").count(), drawn.len());
    for c in &drawn {
        let at = html.find(&format!("<figure class=\"plot\" id=\"plot-{}\"", c.file));
        let at = at.unwrap_or_else(|| panic!("{} figure", c.file));
        let fig = &html[at..at + html[at..].find("</figure>").unwrap()];
        assert_eq!(fig.matches("<svg").count(), 1, "{}: one svg", c.file);
        assert!(fig.contains("<figcaption>") && fig.contains("method as recorded"));
    }
    // No alltoall-order run and no NUMA matrix in this file: one line says so, no box.
    let lines: Vec<&str> = html.lines().filter(|l| l.contains("Not drawn: ")).collect();
    assert_eq!(
        lines.len(),
        1,
        "one line for every chart not drawn: {lines:?}"
    );
    assert!(
        lines[0].contains(
            "<b id=\"plot-numa-latency.svg\">numa-latency.svg</b>, \
             <b id=\"plot-numa-bandwidth.svg\">numa-bandwidth.svg</b>: no mem.matrix \
             measurements in this file"
        ),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("alltoall-order.svg</b>: no mem.alltoall-order measurements"));
    assert!(!html.contains("id=\"plot-alltoall-order.svg\"><svg"));
    assert!(
        !html.contains("class=\"note nodata\" id="),
        "no line per chart"
    );
    // Every warning with its remediation, every skipped entry with its reason.
    for w in &f.warnings {
        assert!(html.contains(&esc(&w.remediation)), "{}", w.code);
    }
    for k in &f.skipped {
        assert!(html.contains(&esc(&k.reason)), "{}", k.benchmark);
    }
    // Every key with the registry's meaning and the ids it comes from.
    let def = bench_core::keys::lookup("mem_lat_ns").unwrap();
    assert!(html.contains(&esc(def.meaning.trim())));
    for id in &f.param_info["mem_lat_ns"].from {
        assert!(html.contains(&format!("<code>{}</code>", esc(id))));
    }
}

#[test]
fn self_contained_no_external_reference() {
    let (html, _) = page(&all_quick(), None);
    let refs = references(&html);
    assert!(!refs.is_empty(), "the page's own anchors are found");
    for r in &refs {
        assert!(r.starts_with('#'), "reference {r} leaves the page");
    }
    for bad in ["http://", "https://"] {
        for attr in ["src=", "href="] {
            assert!(!html.contains(&format!("{attr}\"{bad}")), "{attr}{bad}");
        }
    }
    for tag in ["<link", "<img", "<iframe", "<object", "@import", "url("] {
        assert!(!html.contains(tag), "{tag}");
    }
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
}

#[test]
fn text_from_the_file_cannot_inject_markup() {
    let evil = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
    let mut f = all_quick();
    f.environment.cpu.model = evil.into();
    f.command_line = vec![evil.into()];
    f.started_at = evil.into();
    f.warnings.push(Warning {
        code: evil.into(),
        message: evil.into(),
        remediation: evil.into(),
    });
    f.skipped.push(Skipped {
        benchmark: evil.into(),
        target: evil.into(),
        reason: evil.into(),
    });
    f.params.insert(evil.into(), 1.0);
    let m: &mut Measurement = f
        .measurements
        .iter_mut()
        .find(|m| m.benchmark == "mem.latency")
        .unwrap();
    m.target = evil.into();
    m.method = evil.into();
    let ld = f
        .measurements
        .iter_mut()
        .find(|m| m.benchmark == "mem.loaded")
        .unwrap();
    ld.parameters["mix"] = evil.into();
    let info = f.param_info.get_mut("mem_lat_ns").unwrap();
    info.from.push(evil.into());
    info.method = evil.into();
    let s = spec::parse(
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1\nwhy = \"<b>x</b>\"\n",
        "s.toml",
    )
    .unwrap();
    let results = check::check(&s, &f);
    let acc = Acceptance {
        spec: evil,
        results: &results,
    };
    let (html, _) = page(&f, Some(&acc));
    // Only the page's own two scripts; no tag from the file.
    assert_eq!(html.matches("<script").count(), 2);
    for bad in ["<img", "<script>alert", "<b>x</b>", "onerror=alert(2)>"] {
        assert!(!html.contains(bad), "{bad} got through");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x"));
    assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"));
    // The SVG labels (target, mix) are escaped by plotters.
    let plots = &html[html.find("id=\"plots\"").unwrap()..];
    assert!(plots.contains("&lt;script&gt;"), "label drawn escaped");
}

#[test]
fn acceptance_results_show_each_outcome() {
    let f = all_quick();
    let s = spec::parse(
        "required = [\"mem_lat_ns\"]\n\
         [[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1e9\n\
         [[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1\nwhy = \"too strict\"\n\
         [[bound]]\nkey = \"cxl_lat_ns\"\nop = \"<=\"\nvalue = 500\n",
        "s.toml",
    )
    .unwrap();
    let results = check::check(&s, &f);
    let acc = Acceptance {
        spec: "s.toml",
        results: &results,
    };
    let (html, _) = page(&f, Some(&acc));
    assert!(html.contains("<h2 id=\"acceptance\">"));
    assert!(html.contains("2 passed, 1 failed, 1 not measured"));
    assert!(html.contains("<span class=\"fail\">FAIL</span>"));
    assert!(html.contains("<span class=\"nm\">NOT MEASURED</span>"));
    assert!(html.contains("rationale: too strict"));
    assert!(html.contains("cxl_lat_ns is absent from the file"));
}

#[test]
fn missing_data_is_a_note_never_an_empty_box() {
    let mut f = all_quick();
    f.measurements.clear();
    let (html, charts) = page(&f, None);
    assert!(charts.iter().all(|c| c.svg.is_none()));
    assert_eq!(html.matches("<svg").count(), 0);
    assert!(!html.contains("<figure"));
    for fam in [
        "mem.latency",
        "mem.bandwidth",
        "mem.loaded",
        "pool.flush",
        "pool.c2c",
    ] {
        assert!(
            html.contains(&format!("no {fam} measurements in this file")),
            "{fam}"
        );
    }
}

fn loaded(target: &str, mix: &str, bw: f64, p50: f64, extra: Option<f64>) -> Measurement {
    let mut params = serde_json::json!({"mix": mix, "injected_bw_gbs": bw, "delay_pause": 0});
    if let Some(p) = extra {
        params["per_load_p99_ns"] = p.into();
    }
    serde_json::from_value(serde_json::json!({
        "id": format!("mem.loaded/{target}/{mix}/d{bw}"), "benchmark": "mem.loaded",
        "target": target, "parameters": params, "unit": "ns", "method": "m",
        "distribution": {"n": 1, "min": p50, "p50": p50, "p90": p50, "p99": p50 * 2.0,
        "p999": p50, "max": p50, "mean": p50, "stdev": 0.0}
    }))
    .unwrap()
}

#[test]
fn loaded_curves_per_target_and_mix_with_p99() {
    let mut f = all_quick();
    f.measurements.retain(|m| m.benchmark != "mem.loaded");
    let mixes = ["read", "3r1w", "2r1w", "1r1w", "nt-write", "read-write"];
    for mix in mixes {
        for (i, bw) in [0.0, 5.0, 10.0].into_iter().enumerate() {
            f.measurements
                .push(loaded("anon", mix, bw, 90.0 + i as f64, None));
        }
    }
    let charts = crate::plot::charts(&f).unwrap();
    let c = charts
        .iter()
        .find(|c| c.file == "loaded-latency.svg")
        .unwrap();
    let svg = c.svg.as_ref().unwrap();
    for mix in mixes {
        for q in ["p50", "p99"] {
            let label = format!("anon {mix} {q}");
            assert!(svg.lines().any(|l| l.trim() == label), "{label}");
        }
    }
    assert!(
        c.caption.contains("p99 of each point's distribution"),
        "{}",
        c.caption
    );
    // With the per-load parameter on every point, the caption says so.
    for m in f
        .measurements
        .iter_mut()
        .filter(|m| m.benchmark == "mem.loaded")
    {
        m.parameters["per_load_p99_ns"] = 500.0.into();
    }
    let charts = crate::plot::charts(&f).unwrap();
    let c = charts
        .iter()
        .find(|c| c.file == "loaded-latency.svg")
        .unwrap();
    assert!(
        c.caption.contains("per_load_p99_ns parameter"),
        "{}",
        c.caption
    );
    assert!(c.caption.contains("injected_bw_gbs"));
}

#[test]
fn the_verdict_and_the_headline_come_before_the_charts() {
    let f = all_quick();
    let s = spec::parse(
        "required = [\"mem_lat_ns\"]\n\
         [[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1\n",
        "s.toml",
    )
    .unwrap();
    let results = check::check(&s, &f);
    let acc = Acceptance {
        spec: "s.toml",
        results: &results,
    };
    let (html, _) = page(&f, Some(&acc));
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s} on the page"));
    assert!(
        at("<section id=\"verdict\" class=\"verdict v-fail\">") < at("table class=\"headline\"")
    );
    assert!(at("table class=\"headline\"") < at("<figure class=\"plot\""));
    assert!(at("<figure class=\"plot\"") < at("<h2 id=\"keys\">"));
    // The failing bound is listed in the banner, linked to its key's row.
    let banner = &html[at("id=\"verdict\"")..at("</section>")];
    assert!(banner.contains(">FAIL<") && banner.contains("mem_lat_ns &lt;= 1"));
    assert!(banner.contains(&format!("href=\"#{}\"", keys::anchor("mem_lat_ns"))));
    assert!(html.contains(&format!("id=\"{}\"", keys::anchor("mem_lat_ns"))));
    // Every headline figure carries a unit; the DRAM latency is there.
    let head = &html[at("table class=\"headline\"")..];
    let head = &head[..head.find("</table>").unwrap()];
    assert!(head.contains("DRAM") && head.contains(" ns</a>"));
    // Without a spec: no banner, the headline first.
    let (html, _) = page(&f, None);
    assert!(!html.contains("id=\"verdict\""));
    assert!(html.find("<h2 id=\"headline\">").unwrap() < html.find("<nav>").unwrap());
}

#[test]
fn a_key_and_its_target_qualified_twin_are_one_row() {
    let mut f = all_quick();
    let v = f.params["mem_lat_ns"];
    let target = f.param_info["mem_lat_ns"].target.clone();
    let twin = format!("mem_lat_ns@{target}");
    f.params.insert(twin.clone(), v);
    f.param_info
        .insert(twin.clone(), f.param_info["mem_lat_ns"].clone());
    // A qualified key with another value is a row of its own.
    f.params.insert("mem_lat_ns@node:7".into(), v + 1.0);
    let rows = keys::folded(&f);
    let lat: Vec<&keys::KeyRow> = rows.iter().filter(|r| r.base == "mem_lat_ns").collect();
    assert_eq!(
        lat.len(),
        2,
        "mem_lat_ns (with its twin) and mem_lat_ns@node:7"
    );
    assert_eq!(lat[0].key, "mem_lat_ns");
    assert_eq!(lat[0].aliases, vec![twin.clone()]);
    assert_eq!(lat[1].target, "node:7");
    let html = keys::keys_table(&keys::folded(&f));
    assert_eq!(html.matches(&format!(">{}</code>", esc(&twin))).count(), 1);
    assert!(html.contains(&format!("id=\"{}\"", keys::anchor(&twin))));
}

#[test]
fn warnings_are_grouped_by_code_with_the_share_they_name() {
    let mut f = all_quick();
    let ids: Vec<String> = f
        .measurements
        .iter()
        .take(3)
        .map(|m| m.id.clone())
        .collect();
    f.warnings = vec![
        Warning {
            code: "crew_skew".into(),
            message: format!(
                "anon: {}: the threads' start and stop skew took 5 %",
                ids[0]
            ),
            remediation: "run on an idle machine".into(),
        },
        Warning {
            code: "crew_skew".into(),
            message: format!("no undisturbed sample for {}; {}", ids[1], ids[2]),
            remediation: "run on an idle machine".into(),
        },
        Warning {
            code: "virtualized".into(),
            message: "under KVM".into(),
            remediation: "bare metal".into(),
        },
    ];
    let html = warnings(&f);
    assert_eq!(html.matches("<code>crew_skew</code>").count(), 1);
    assert_eq!(html.matches("run on an idle machine").count(), 1);
    let n = f.measurements.len();
    assert!(
        html.contains(&format!("3 of {n} (")),
        "three measurements named, one of them before a colon: {html}"
    );
    assert!(html.contains("all 2 message(s)"));
    // An id is not found inside a longer one, and is found before a colon or a full stop
    // that ends a phrase (not before one inside an id: `node:1`).
    assert!(names("a/k16 (x)", "a/k16") && !names("a/k16 (x)", "a/k1"));
    assert!(names("anon: a/k16: noisy figure", "a/k16"));
    assert!(names("the last is a/k16.", "a/k16"));
    assert!(!names("x a/node:1 y", "a/node") && names("x a/node:1 y", "a/node:1"));
}

/// The headline and the warnings count the disturbed measurements alike: of those that
/// recorded their counters (`ParamsFile::disturbed_measurements`), not of all.
#[test]
fn the_headline_and_the_warnings_give_one_count_of_disturbed_measurements() {
    let mut f = all_quick();
    // Two measurements without counters (a file of an earlier version, a family that
    // records none): counted in neither share.
    for m in f
        .measurements
        .iter_mut()
        .filter(|m| m.counters.is_some())
        .take(2)
    {
        m.counters = None;
    }
    let (n, recorded) = f.disturbed_measurements();
    assert!(n > 0 && recorded + 2 == f.measurements.len());
    let want = super::warnings::share_of(n, recorded);
    let (html, _) = page(&f, None);
    let head = &html[html.find("table class=\"headline\"").unwrap()..];
    let head = &head[..head.find("</table>").unwrap()];
    assert!(
        head.contains(&format!(">{want}</span> disturbed")),
        "{head}"
    );
    let w = &html[html.find("table class=\"warnings\"").unwrap()..];
    let row = &w[w.find("<code>disturbed</code>").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains(&format!(">{want}</span>")), "{row}");
    assert!(
        !html.contains(&format!("{n} of {} (", f.measurements.len())),
        "no share of all the measurements"
    );
}

/// The noisy keys: their count, the headline's first (in its order, up to five), the
/// rest behind a `<details>`.
#[test]
fn the_noisy_keys_cell_names_five_headline_keys_and_folds_the_rest() {
    let mut f = all_quick();
    let noisy = [
        "atomic_cas_lat_ns",
        "mem_bw_gbs",
        "c2c_flag_lat_ns",
        "l1_lat_ns",
        "copy_bw_gbs",
        "mem_lat_ns",
        "l2_bw_gbs",
    ];
    for (k, i) in f.param_info.iter_mut() {
        if noisy.contains(&k.split('@').next().unwrap()) {
            i.noisy = Some("no clean window in 9: 9 disturbed".into());
        }
    }
    let (html, _) = page(&f, None);
    let head = &html[html.find("table class=\"headline\"").unwrap()..];
    let cell = &head[head.find("noisy keys</td>").unwrap()..];
    let cell = &cell[..cell.find("</tr>").unwrap()];
    assert!(cell.contains(">7 keys</span> stand only"), "{cell}");
    let link_texts = |s: &str| -> Vec<String> {
        s.split("\">")
            .skip(1)
            .filter_map(|t| t.split_once("</a>").map(|(k, _)| k.to_string()))
            .collect()
    };
    let (shown, rest) = cell.split_once("<details>").expect("the rest folded");
    assert_eq!(
        link_texts(shown),
        [
            "l1_lat_ns",
            "mem_lat_ns",
            "l2_bw_gbs",
            "mem_bw_gbs",
            "copy_bw_gbs"
        ],
        "{cell}"
    );
    assert!(rest.starts_with("<summary>and 2 more</summary>"), "{rest}");
    assert_eq!(
        link_texts(rest),
        ["c2c_flag_lat_ns", "atomic_cas_lat_ns"],
        "the headline's keys first: {rest}"
    );
}

/// A section with nothing to show is one line saying why, keeping its anchor, with no
/// heading and no link in the navigation.
#[test]
fn an_empty_section_is_one_line_saying_why() {
    let mut f = all_quick();
    f.skipped.clear();
    f.dram_check.clear();
    f.prefetch_check.clear();
    crate::firmware::annotate(&mut f, 0);
    assert!(!f.hmat_vs_measured.is_empty(), "anon compared");
    let (html, _) = page(&f, None);
    let nav = &html[html.find("<nav>").unwrap()..html.find("</nav>").unwrap()];
    for (id, name, why) in [
        ("skipped", "Skipped", "nothing was skipped"),
        ("checks", "Self-checks", "none in this file"),
        (
            "firmware",
            "Firmware (HMAT/CDAT) vs measured",
            "the firmware advertises no latency or bandwidth",
        ),
    ] {
        assert!(
            html.contains(&format!(
                "<p class=\"note left-out\" id=\"{id}\"><b>{}</b>: {}",
                esc(name),
                why
            )),
            "{id}"
        );
        assert!(
            !html.contains(&format!("<h2 id=\"{id}\">")),
            "{id}: no heading"
        );
        assert!(
            !nav.contains(&format!("href=\"#{id}\"")),
            "{id}: not in the nav"
        );
    }
    assert!(
        !html.contains("not advertised"),
        "no table of measured figures beside nothing"
    );
    // The headline's link to the self-checks still lands.
    assert!(html.contains("<a href=\"#checks\">none in this file</a>"));
}

#[test]
fn the_timer_reads_in_ghz() {
    let mut f = all_quick();
    f.timer.freq_hz = 2_299_999_404.0;
    let (html, _) = page(&f, None);
    assert!(html.contains(" at 2.300 GHz ("), "the TSC in GHz");
    assert!(!html.contains("2299999404"));
    assert_eq!(
        environment::frequency(24e6),
        "24.00 MHz",
        "an Arm generic timer"
    );
    assert_eq!(environment::frequency(1e9), "1.000 GHz");
}

#[test]
fn the_gpu_is_named_in_the_headline_and_markdown_is_rendered() {
    let mut f = all_quick();
    let mut m = f.measurements[0].clone();
    m.id = "gpu.bw/gpu:0/pinned/h2d/64M/events".into();
    m.benchmark = "gpu.bw".into();
    m.target = "gpu:0".into();
    m.unit = "GB/s".into();
    m.parameters = serde_json::json!({"gpu": "NVIDIA <H200>", "device": 0, "dir": "h2d",
        "source": "pinned", "timing": "events", "size_bytes": 67108864,
        "link": "32.0 GT/s PCIe x16"});
    f.measurements.push(m);
    f.params.insert("gpu_h2d_bw_gbs".into(), 54.5);
    let (html, charts) = page(&f, None);
    let head = &html[html.find("table class=\"headline\"").unwrap()..];
    let head = &head[..head.find("</table>").unwrap()];
    assert!(head.contains("NVIDIA &lt;H200&gt;") && head.contains("32.0 GT/s PCIe x16"));
    assert!(head.contains("54.50</span> GB/s"));
    assert!(charts.iter().any(|c| c.file == "gpu-bw.svg"));
    assert!(html.contains("<h3 id=\"gpu\">GPU</h3>"));
    // The registry's Markdown is markup on the page, never raw.
    assert!(!html.contains("**"), "raw Markdown on the page");
}

/// Bidirectional-text controls from the file or the spec (a target of the firmware
/// table, a spec key, the CPU model) are shown as escapes, never reach the page raw.
#[test]
fn bidi_controls_from_the_file_or_the_spec_are_shown_as_escapes() {
    let mut f = all_quick();
    f.environment.cpu.model = "EPYC \u{2066}x\u{2069}".into();
    f.hmat_vs_measured.insert(
        "node:1\u{202e}lmth.exe".into(),
        bench_core::firmware::HmatComparison {
            node: 1,
            initiator_node: 0,
            access_class: Some(1),
            initiator_listed: true,
            advertised_lat_ns: Some(100.0),
            measured_lat_ns: Some(120.0),
            lat_key: Some("cxl_lat_ns@node:1".into()),
            lat_ratio: Some(0.83),
            advertised_bw_gbs: None,
            measured_bw_gbs: None,
            bw_key: None,
            bw_ratio: None,
        },
    );
    let s = spec::parse(
        "[[bound]]\nkey = \"mem_lat_ns@anon\u{202e}x\"\nop = \"<=\"\nvalue = 1\nwhy = \"a\u{200f}b\"\n",
        "s.toml",
    )
    .unwrap();
    let results = check::check(&s, &f);
    let acc = Acceptance {
        spec: "s\u{202d}.toml",
        results: &results,
    };
    let (html, _) = page(&f, Some(&acc));
    for c in [
        '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
        '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    ] {
        assert!(!html.contains(c), "{c:?} reached the page raw");
    }
    assert!(
        html.contains("node:1\\u{202e}lmth.exe"),
        "the target is shown"
    );
    assert!(html.contains("EPYC \\u{2066}x\\u{2069}"));
}

/// The title breaks between words, never inside the date or the kernel release.
#[test]
fn the_title_never_wraps_inside_the_timestamp() {
    let f = all_quick();
    let (html, _) = page(&f, None);
    let h1 = &html[html.find("<h1>").unwrap()..html.find("</h1>").unwrap()];
    assert!(
        h1.contains(&format!("<span class=\"nw\">{}</span>", f.started_at)),
        "{h1}"
    );
    assert!(html.contains(".nw{white-space:nowrap}"));
}

/// A DRAM check that stands for many keys names a few and folds the rest.
#[test]
fn a_self_check_names_a_few_keys_and_folds_the_rest() {
    let mut f = all_quick();
    let keys: Vec<String> = (0..24).map(|i| format!("k{i}_bw_gbs@anon")).collect();
    let check = serde_json::json!({"target": "anon", "benchmark": "mem.bandwidth",
        "pattern": "stream", "kernel": "read (avx2)", "cpus": "0-1", "threads": 2,
        "unit": "GB/s", "better": "higher", "start_bytes": 1048576, "sizing": "4 x caches",
        "points": [{"bytes": 1048576, "value": 9.5, "pass": 1, "id": "a"},
                   {"bytes": 2097152, "value": 9.4, "pass": 1, "id": "b"}],
        "compared_bytes": [1048576, 2097152], "ratio": 1.01, "tolerance": 0.05,
        "verdict": "agree", "reported_bytes": 1048576, "repeated": false, "keys": keys});
    f.dram_check = vec![serde_json::from_value(check).unwrap()];
    let (html, _) = page(&f, None);
    let t = &html[html.find("<table class=\"dram-checks\"").unwrap()..];
    let t = &t[..t.find("</table>").unwrap()];
    assert!(t.contains("<summary>and 21 more</summary>"), "{t}");
    let shown = &t[..t.find("<details>").unwrap()];
    assert_eq!(shown.matches("<code>").count(), 3, "{shown}");
    assert_eq!(t.matches("<code>").count(), 24, "every key behind the fold");
}

/// The headline says how many measurements were disturbed, and why a level it looked
/// for has no figure.
#[test]
fn the_headline_gives_the_disturbed_share_and_why_a_level_is_missing() {
    let mut f = all_quick();
    f.params.retain(|k, _| !k.starts_with("l3_lat_ns"));
    f.warnings.push(Warning {
        code: "latency_plateau".into(),
        message: "anon: l3_lat_ns: no sweep point between 2097152 and 16777216 bytes".into(),
        remediation: "none needed: the chase reaches DRAM latency before this level's window"
            .into(),
    });
    let disturbed = f
        .measurements
        .iter()
        .filter(|m| m.counters.as_ref().is_some_and(|c| c.disturbed))
        .count();
    let recorded = f
        .measurements
        .iter()
        .filter(|m| m.counters.is_some())
        .count();
    assert!(disturbed > 0 && recorded > disturbed);
    let (html, _) = page(&f, None);
    let head = &html[html.find("table class=\"headline\"").unwrap()..];
    let head = &head[..head.find("</table>").unwrap()];
    let pct = (100.0 * disturbed as f64 / recorded as f64).round();
    assert!(
        head.contains(&format!("{disturbed} of {recorded} ({pct:.0} %)")),
        "{head}"
    );
    assert!(
        head.contains(
            "not measured</a>: no sweep point between 2 MiB and 16 MiB (the chase \
                       reaches DRAM latency"
        ),
        "{head}"
    );
}

#[test]
fn a_noisy_key_is_flagged_in_the_headline_with_why() {
    let mut f = all_quick();
    let key = f
        .param_info
        .keys()
        .find(|k| k.starts_with("mem_bw_gbs"))
        .cloned()
        .expect("the guest's file has mem_bw_gbs");
    for (k, i) in f.param_info.iter_mut() {
        if k.starts_with("mem_bw_gbs") {
            i.noisy = Some("no clean window in 9: 9 disturbed".into());
        }
    }
    let (html, _) = page(&f, None);
    let head = &html[html.find("table class=\"headline\"").unwrap()..];
    let head = &head[..head.find("</table>").unwrap()];
    assert!(
        head.contains("title=\"no clean window in 9: 9 disturbed\">noisy</span>"),
        "{head}"
    );
    assert!(head.contains("noisy keys"), "{head}");
    assert!(
        head.contains(&key[..key.find('@').unwrap_or(key.len())]),
        "{head}"
    );
}

#[test]
fn degraded_pcie_links_lead_the_headline_with_a_row_each() {
    let mut f = all_quick();
    let d = tempfile::tempdir().unwrap();
    bench_core::pci::links::write_fake_links(d.path()).unwrap();
    crate::links::annotate(&mut f, crate::links::read(d.path()));
    let (html, _) = page(&f, None);
    let head = &html[html.find("id=\"headline\"").unwrap()..];
    let head = &head[..head.find("</table>").unwrap()];
    assert!(head.contains("<b>PCIe links</b>"), "{head}");
    assert!(head.contains("2 of 5 below their capability"), "{head}");
    assert_eq!(head.matches(">link_degraded</span>").count(), 2, "{head}");
    assert!(head.contains("0000:02:00.0 (cxl 0x8086:0x0001) -&gt; port 0000:00:02.0"));
    // The links come before the first latency row.
    assert!(head.find("PCIe links").unwrap() < head.find("Idle latency").unwrap_or(usize::MAX));
    // A file without links has no such block.
    let (plain, _) = page(&all_quick(), None);
    assert!(!plain.contains("<b>PCIe links</b>"));
}
