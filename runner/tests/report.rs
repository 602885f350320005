//! `cxlchar report`: the page from a real `all --quick` run, bad input (exit 2, nothing
//! written), and (ignored by default: it needs Chromium) the page rendered in a real
//! headless Chromium: every chart drawn with a non-zero size, no request made.
//!
//! Run the browser test with `cargo test -p cxlchar --test report -- --ignored` after
//! `ci/test-deps` (Debian's `chromium`); `CXLCHAR_CHROMIUM` names another binary.

mod common;
use common::*;

use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn all_quick() -> PathBuf {
    repo("results/plots/params-all-quick.json")
}

const SPEC: &str = "required = [\"mem_lat_ns\"]\n\
    [[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1000\n\
    [[bound]]\nkey = \"cxl_lat_ns\"\nop = \"<=\"\nexpr = \"2.5 * mem_lat_ns\"\noptional = true\n";

/// Writes the report of the sample run (with a spec) into `dir`; returns its path.
fn write_report(dir: &Path) -> PathBuf {
    let spec = dir.join("spec.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = dir.join("report.html");
    cxlchar()
        .arg("report")
        .arg(all_quick())
        .arg("--out")
        .arg(&out)
        .arg("--spec")
        .arg(&spec)
        .assert()
        .success()
        // As `export` says it: on stderr, stdout left empty for a pipeline.
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::starts_with("wrote ").and(predicate::str::contains("report.html")));
    out
}

/// The charts of the sample run: latency, bandwidth (the sweep and the kernels' bars),
/// copy threshold, loaded latency, flush, core-to-core cas and flag.
const CHARTS: usize = 8;

#[test]
fn a_real_run_gives_a_page_with_every_chart() {
    let d = tempfile::tempdir().unwrap();
    let out = write_report(d.path());
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<figure class=\"plot\"").count(), CHARTS);
    assert_eq!(html.matches("<svg").count(), CHARTS);
    for id in [
        "run",
        "environment",
        "warnings",
        "acceptance",
        "keys",
        "plots",
        "skipped",
    ] {
        assert!(html.contains(&format!("<h2 id=\"{id}\">")), "{id}");
    }
    assert!(html.contains("2 passed, 0 failed, 1 not measured"));
    assert!(html.contains("no mem.alltoall-order measurements in this file"));
    // Only the report and the spec: no temp file left.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r.html");
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 1, \"tool\"").unwrap();
    cxlchar()
        .arg("report")
        .arg(&bad)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is truncated"));
    cxlchar()
        .args(["report", "/no/such/params.json", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("reading /no/such/params.json"));
    let spec = d.path().join("s.toml");
    std::fs::write(
        &spec,
        "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"~\"\nvalue = 1\n",
    )
    .unwrap();
    cxlchar()
        .arg("report")
        .arg(all_quick())
        .arg("--out")
        .arg(&out)
        .arg("--spec")
        .arg(&spec)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("s.toml:"));
    assert!(!out.exists(), "nothing written for bad input");
    // A directory, or the input itself, is never overwritten.
    cxlchar()
        .arg("report")
        .arg(all_quick())
        .arg("--out")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a directory"));
    let copy = d.path().join("p.json");
    std::fs::copy(all_quick(), &copy).unwrap();
    cxlchar()
        .arg("report")
        .arg(&copy)
        .arg("--out")
        .arg(&copy)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("it is the input"));
}

/// The Chromium binary: `CXLCHAR_CHROMIUM`, else `chromium` or `chromium-browser` on PATH.
/// Missing is a loud failure (the test is only run when asked for).
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CXLCHAR_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "chromium not found on PATH (nor CXLCHAR_CHROMIUM): the browser test needs it; \
         install it with ci/test-deps (Debian: apt-get install --no-install-recommends chromium)"
    );
}

/// Runs headless Chromium on `page` with `args` (bounded to 120 s); returns stdout.
fn headless(page: &Path, profile: &Path, args: &[&str]) -> String {
    let o = assert_cmd::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .timeout(Duration::from_secs(120))
        .output()
        .expect("chromium runs");
    assert!(
        o.status.success(),
        "chromium failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The `data-rendered` record the page's script writes: (svg sizes, resources, violations).
fn rendered(dom: &str) -> (Vec<(u32, u32)>, i64, i64) {
    let at = dom
        .find("data-rendered=\"")
        .unwrap_or_else(|| panic!("the page's script ran: no data-rendered in\n{dom}"));
    let rest = &dom[at + "data-rendered=\"".len()..];
    let rec = &rest[..rest.find('"').unwrap()];
    let field = |k: &str| -> &str {
        rec.split(';')
            .find_map(|f| f.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} in {rec}"))
    };
    let sizes: Vec<(u32, u32)> = field("sizes")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (w, h) = s.split_once('x').unwrap();
            (w.parse().unwrap(), h.parse().unwrap())
        })
        .collect();
    assert_eq!(field("svgs").parse::<usize>().unwrap(), sizes.len());
    (
        sizes,
        field("resources").parse().unwrap(),
        field("violations").parse().unwrap(),
    )
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(
        png.len() > 24 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "a PNG"
    );
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

#[test]
#[ignore = "needs Chromium (ci/test-deps); run with --ignored"]
fn the_page_renders_in_headless_chromium_without_network() {
    let d = tempfile::tempdir().unwrap();
    let page = write_report(d.path());
    let profile = d.path().join("profile");
    let dom = headless(&page, &profile, &["--dump-dom"]);
    let html = std::fs::read_to_string(&page).unwrap();
    let title = &html[html.find("<title>").unwrap()..html.find("</title>").unwrap()];
    assert!(dom.contains(title), "title in the rendered DOM");
    let (sizes, resources, violations) = rendered(&dom);
    assert_eq!(sizes.len(), CHARTS, "every chart is an svg in the DOM");
    for (w, h) in &sizes {
        assert!(
            *w > 100 && *h > 100,
            "a chart is drawn with a size: {sizes:?}"
        );
    }
    assert_eq!(resources, 0, "no resource requested");
    assert_eq!(violations, 0, "nothing blocked by the page's policy");

    // A screenshot of the page's size, with something drawn on it (a blank page of this
    // size compresses to a few KiB).
    let shot = d.path().join("shot.png");
    headless(
        &page,
        &profile,
        &[
            "--window-size=1200,2400",
            "--hide-scrollbars",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert_eq!(png_size(&png), (1200, 2400));
    assert!(
        png.len() > 40_000,
        "a page with text and charts: {} bytes",
        png.len()
    );

    // The check catches a request: the same page with an external image reports it.
    let leaky = d.path().join("leaky.html");
    std::fs::write(
        &leaky,
        html.replacen("<body>", "<body><img src=\"http://127.0.0.1:9/x.png\">", 1),
    )
    .unwrap();
    let (_, resources, violations) = rendered(&headless(&leaky, &profile, &["--dump-dom"]));
    assert!(
        resources + violations > 0,
        "an external request is detected"
    );
}

/// One field of the page's `data-rendered` record, as a number.
fn rendered_field(dom: &str, k: &str) -> i64 {
    let at = dom.find("data-rendered=\"").expect("data-rendered");
    let rest = &dom[at + "data-rendered=\"".len()..];
    let rec = &rest[..rest.find('"').unwrap()];
    rec.split(';')
        .find_map(|f| f.strip_prefix(&format!("{k}=")))
        .unwrap_or_else(|| panic!("{k} in {rec}"))
        .parse()
        .unwrap()
}

/// The number of attribute `name` in the tag text `tag`.
fn attr(tag: &str, name: &str) -> Option<f64> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..at + tag[at..].find('"')?].parse().ok()
}

/// Every data point of an SVG: each circle's centre and each polyline's vertices, outside
/// the legend group.
fn data_points(svg: &str) -> Vec<(f64, f64)> {
    let body = match (svg.find("<g class=\"legend\">"), svg.rfind("</g>")) {
        (Some(a), Some(b)) if b > a => format!("{}{}", &svg[..a], &svg[b..]),
        _ => svg.to_string(),
    };
    let mut pts = vec![];
    for e in body.split("<circle").skip(1) {
        let tag = &e[..e.find('>').unwrap_or(e.len())];
        if let (Some(x), Some(y)) = (attr(tag, "cx"), attr(tag, "cy")) {
            pts.push((x, y));
        }
    }
    for e in body.split("<polyline").skip(1) {
        let tag = &e[..e.find('>').unwrap_or(e.len())];
        let Some(p) = tag.split("points=\"").nth(1) else {
            continue;
        };
        for xy in p[..p.find('"').unwrap_or(0)].split_whitespace() {
            if let Some((x, y)) = xy.split_once(',') {
                pts.push((x.parse().unwrap(), y.parse().unwrap()));
            }
        }
    }
    pts
}

/// Asserts that no chart's legend box covers a data point of its chart; returns how many
/// charts have a legend.
fn legends_clear_of_data(html: &str) -> usize {
    let mut legends = 0;
    for s in html.split("<svg").skip(1) {
        let svg = &s[..s.find("</svg>").expect("a closed svg")];
        let Some(at) = svg.find("<g class=\"legend\">") else {
            continue;
        };
        legends += 1;
        let rect = &svg[at + svg[at..].find("<rect").unwrap()..];
        let rect = &rect[..rect.find('>').unwrap()];
        let (x, y, w, h) = (
            attr(rect, "x").unwrap(),
            attr(rect, "y").unwrap(),
            attr(rect, "width").unwrap(),
            attr(rect, "height").unwrap(),
        );
        let pts = data_points(svg);
        assert!(!pts.is_empty(), "a chart with a legend has data points");
        for (px, py) in pts {
            assert!(
                !(px >= x && px <= x + w && py >= y && py <= y + h),
                "data point ({px}, {py}) under the legend box ({x}, {y}, {w} x {h})"
            );
        }
    }
    legends
}

/// The server run (16-core guest with an NVIDIA H200, `all --quick`), decompressed.
fn server_run(dir: &Path) -> PathBuf {
    let gz = repo("runner/tests/data/h200-all-quick.json.gz");
    let o = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(o.status.success(), "gzip -dc {}", gz.display());
    let p = dir.join("h200.json");
    std::fs::write(&p, o.stdout).unwrap();
    p
}

/// Renders `params` with `spec` into `dir/name`, and the page in Chromium at 1400 x 900;
/// returns (html, dom).
fn render_at_1400(dir: &Path, params: &Path, spec: &str, name: &str) -> (String, String) {
    let sp = dir.join(format!("{name}.toml"));
    std::fs::write(&sp, spec).unwrap();
    let out = dir.join(format!("{name}.html"));
    cxlchar()
        .arg("report")
        .arg(params)
        .arg("--out")
        .arg(&out)
        .arg("--spec")
        .arg(&sp)
        .assert()
        .success();
    let dom = headless(
        &out,
        &dir.join(format!("profile-{name}")),
        &["--window-size=1400,900", "--dump-dom"],
    );
    (std::fs::read_to_string(&out).unwrap(), dom)
}

/// The answer comes first: the verdict banner and the headline table start within the
/// first screen, before the first chart.
fn answer_first(dom: &str, what: &str) {
    let (verdict, headline, chart) = (
        rendered_field(dom, "verdict"),
        rendered_field(dom, "headline"),
        rendered_field(dom, "chart"),
    );
    assert!(
        (0..900).contains(&verdict) && (0..900).contains(&headline),
        "{what}: verdict at {verdict} px, headline at {headline} px: within the first 900 px"
    );
    assert!(
        verdict < headline && (chart < 0 || headline < chart),
        "{what}: verdict ({verdict}) before headline ({headline}) before charts ({chart})"
    );
}

#[test]
#[ignore = "needs Chromium (ci/test-deps) and a quick run; run with --ignored"]
fn the_answer_comes_first_and_charts_are_readable_in_chromium() {
    let d = tempfile::tempdir().unwrap();
    // This machine: a quick run made now.
    let local = d.path().join("local.json");
    cxlchar()
        .args(["all", "--quick", "--out"])
        .arg(&local)
        .timeout(Duration::from_secs(1200))
        .assert()
        .success();
    let (html, dom) = render_at_1400(d.path(), &local, SPEC, "local");
    answer_first(&dom, "this machine");
    legends_clear_of_data(&html);

    // The GPU server: its GPU named in the headline, GPU charts drawn, a short page.
    let server = server_run(d.path());
    let spec = "required = [\"mem_lat_ns\", \"gpu_h2d_bw_gbs\"]\n\
        [[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 1000\n\
        [[bound]]\nkey = \"gpu_h2d_bw_gbs\"\nop = \">=\"\nvalue = 1000\n";
    let (html, dom) = render_at_1400(d.path(), &server, spec, "server");
    answer_first(&dom, "server");
    assert!(
        html.contains("<p class=\"big\">FAIL</p>"),
        "the failing bound gives FAIL"
    );
    let head = &html[html.find("<table class=\"headline\"").unwrap()..];
    let head = &head[..head.find("</table>").unwrap()];
    assert!(
        head.contains("NVIDIA H200"),
        "the GPU is named in the headline"
    );
    assert!(head.contains("GB/s"), "figures carry their unit");
    for f in ["plot-gpu-bw.svg", "plot-gpu-contention.svg"] {
        assert!(
            html.contains(&format!("<figure class=\"plot\" id=\"{f}\"")),
            "{f} drawn"
        );
    }
    assert!(legends_clear_of_data(&html) >= 8, "the charts have legends");
    assert!(!html.contains("**"), "no raw Markdown on the page");
    let height = rendered_field(&dom, "height");
    assert!(
        height < 15_000,
        "the server's page is {height} px tall at 1400 px wide"
    );
}
