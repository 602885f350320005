//! `cxlchar plot params.json --out DIR`: SVG charts of a params.json (plotters, SVG
//! backend; text is laid out with plotters' built-in estimate and drawn by the viewer's
//! fonts, so no font or image library is needed).
//!
//! The file is read by the consumers' loader ([`crate::consumers::load`]); each chart
//! reads its measurements' parameters by their registered names
//! ([`bench_core::keys::parameters`]). Charts, each drawn only when its measurements are
//! in the file, one module each:
//! * `latency.svg` ([`latency`]): `mem.latency` p50 vs working-set size per target and
//!   order (log x, log y), with the cache sizes of `environment.topology.caches` marked;
//! * `bandwidth.svg` ([`bandwidth`]): `mem.bandwidth*` p50 per kernel, thread count and
//!   target vs size;
//! * `copy-threshold.svg` ([`copy_threshold`]): `mem.copy-threshold*` all-to-all copy
//!   bandwidth vs block size per method (temporal, NT, hybrid) and thread count;
//! * `alltoall-order.svg` ([`alltoall_order`]): `mem.alltoall-order*` all-to-all
//!   bandwidth vs block size per copy order, method and thread count;
//! * `loaded-latency.svg` ([`loaded`]): `mem.loaded*` latency vs injected bandwidth (or
//!   injection delay), one curve per traffic mix;
//! * `flush.svg` ([`flush`]): `pool.flush*` cost vs size per method (the flush-cost matrix
//!   as lines);
//! * `c2c-<kind>.svg` ([`c2c`]): `pool.c2c*` core-to-core p50 as a heatmap.

mod alltoall_order;
mod bandwidth;
mod c2c;
mod copy_threshold;
mod data;
mod flush;
mod latency;
mod lines;
mod loaded;

use anyhow::{Context, Result};
use bench_core::keys::parameters::KIND;
use bench_core::params::{Measurement, ParamsFile};
use std::path::{Path, PathBuf};

pub use crate::consumers::load::load;

/// What `plot` did.
#[derive(Debug, Default)]
pub struct PlotOutcome {
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Charts not drawn, with why.
    pub skipped: Vec<String>,
}

/// Draws every chart whose data is in `f` into `dir`.
pub fn plot(f: &ParamsFile, dir: &Path) -> Result<PlotOutcome> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = PlotOutcome::default();
    let mut emit = |name: &str,
                    what: &str,
                    ms: &[&Measurement],
                    draw: &dyn Fn(&Path) -> Result<bool>|
     -> Result<()> {
        if ms.is_empty() {
            out.skipped
                .push(format!("{name}: no {what} measurements in the file"));
            return Ok(());
        }
        let p = dir.join(name);
        crate::export::json::check_output(&p)?;
        if draw(&p).with_context(|| format!("drawing {}", p.display()))? {
            out.written.push(p);
        } else {
            out.skipped.push(format!(
                "{name}: {what} measurements lack the parameters to plot"
            ));
        }
        Ok(())
    };
    let caches = data::cache_marks(f);

    let lat = data::family(f, "mem.latency");
    emit("latency.svg", "mem.latency", &lat, &|p| {
        latency::draw(p, &lat, &caches)
    })?;

    let bw = data::family(f, "mem.bandwidth");
    emit("bandwidth.svg", "mem.bandwidth", &bw, &|p| {
        bandwidth::draw(p, &bw, &caches)
    })?;

    let ct = data::family(f, "mem.copy-threshold");
    emit("copy-threshold.svg", "mem.copy-threshold", &ct, &|p| {
        copy_threshold::draw(p, &ct, &caches)
    })?;

    let ao = data::family(f, "mem.alltoall-order");
    emit("alltoall-order.svg", "mem.alltoall-order", &ao, &|p| {
        alltoall_order::draw(p, &ao, &caches)
    })?;

    let ld: Vec<&Measurement> = data::family(f, "mem.loaded")
        .into_iter()
        .filter(|m| m.unit == "ns")
        .collect();
    emit("loaded-latency.svg", "mem.loaded", &ld, &|p| {
        loaded::draw(p, &ld)
    })?;

    let fl = data::family(f, "pool.flush");
    emit("flush.svg", "pool.flush", &fl, &|p| flush::draw(p, &fl))?;

    // Core-to-core heatmaps, one per kind.
    let cc = data::family(f, "pool.c2c");
    let kind_of = |m: &Measurement| data::text(m, KIND).unwrap_or_else(|| "c2c".into());
    let mut kinds: Vec<String> = cc.iter().map(|m| kind_of(m)).collect();
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() {
        emit("c2c.svg", "pool.c2c", &[], &|_| Ok(false))?;
    }
    for kind in kinds {
        let ms: Vec<&Measurement> = cc.iter().copied().filter(|m| kind_of(m) == kind).collect();
        let name = format!(
            "c2c-{}.svg",
            kind.replace(|c: char| !c.is_alphanumeric(), "_")
        );
        emit(&name, "pool.c2c", &ms, &|p| {
            c2c::draw_heatmap(p, &kind, &ms)
        })?;
    }
    Ok(out)
}
