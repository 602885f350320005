//! The phases of `mem.latency`'s run, in order: the cold-lap reference, the sweep up to
//! the DRAM plateau, the cache levels below it, the memory figure, and the DRAM point with
//! its check, the full-random figure and the prefetch self-check.

use super::*;

/// A memory figure: its value (ns), the measurements it comes from, and how.
pub(super) type Figure = (f64, Vec<String>, String);

/// A warning about `target`.
pub(super) fn warn(
    report: &mut Report,
    target: &str,
    code: &str,
    message: String,
    remediation: &str,
) {
    report.warnings.push(Warning {
        code: code.into(),
        message: format!("{target}: {message}"),
        remediation: remediation.into(),
    })
}

impl LatencyBench {
    /// The cold-lap reference (p50 and measurement id): the latency of loads that miss
    /// every cache; `None` in full-random order or, with a warning, when it cannot be taken.
    pub(super) fn cold_reference(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        cold_size: usize,
        span_limit: usize,
    ) -> Result<Option<(f64, String)>, NotRun> {
        let target = region.origin().to_string();
        let mut cold_ns = None;
        if self.order != ChaseOrder::Random {
            self.ensure(ctx, region, self.layout.span_bytes(cold_size), span_limit)
                .map_err(Skip::new)?;
            match self.cold_lap(ctx, region, cold_size) {
                Ok(p) => {
                    let id = format!("mem.latency/{target}/cold-lap/{}", format_size(cold_size));
                    ctx.progress(&format!(
                        "mem.latency {target} cold lap {:>6}: {:8.2} ns",
                        format_size(cold_size),
                        p.d.p50
                    ));
                    let method = format!(
                        "{}; every element's line flushed (clflushopt/clflush) before each of 3 timed laps: the latency of loads that miss every cache, the reference that places the DRAM plateau",
                        self.method(self.layout, self.order)
                    );
                    cold_ns = Some((self.record(report, region, &id, method, p), id));
                }
                Err(why) => warn(report, &target,
                    "latency_cold_lap",
                    format!("no cold-lap reference ({why}): the sweep runs to the DRAM point (4 x the caches the CPU can fill)"),
                    "none needed; sizes follow the cache rule",
                ),
            }
        }
        Ok(cold_ns)
    }

    /// The sweep up to 4 x the DRAM plateau's start (found against the cold lap) or up to
    /// `cap`: its points, and the plateau.
    pub(super) fn sweep(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        (cap, span_limit): (usize, usize),
        cold_ns: &Option<(f64, String)>,
    ) -> Result<(Vec<SweepPoint>, Option<DramPlateau>), NotRun> {
        let target = region.origin().to_string();
        let sizes = self.sweep_sizes(cap, ctx.effort);
        let mut points: Vec<SweepPoint> = Vec::new();
        let mut plateau: Option<DramPlateau> = None;
        let mut stop_at: Option<usize> = None;
        for &size in &sizes {
            if stop_at.is_some_and(|s| size > s) {
                break;
            }
            if let Err(why) = self.ensure(ctx, region, self.layout.span_bytes(size), span_limit) {
                warn(
                    report,
                    &target,
                    "latency_size",
                    why,
                    "use a smaller --max-size or free memory",
                );
                break;
            }
            let p = self.measure(ctx, region, size, self.layout, self.order)?;
            ctx.progress(&format!(
                "mem.latency {target} {:>6}: {:8.2} ns{}",
                format_size(size),
                p.d.p50,
                p.counters.summary()
            ));
            let id = format!(
                "mem.latency/{target}/{}/{}",
                self.order.name(),
                format_size(size)
            );
            let lat = self.record(report, region, &id, self.method(self.layout, self.order), p);
            points.push(SweepPoint {
                size_bytes: size,
                lat_ns: lat,
                id,
            });
            if let (Some((c, _)), None) = (&cold_ns, &plateau) {
                plateau = dram_plateau(&points, *c);
                if let (Some(pl), None) = (&plateau, &self.sizes) {
                    // The curve goes on to 4 x the plateau's start; the DRAM point and its
                    // check come after the sweep.
                    let want = (sizing::SAFETY_FACTOR * points[pl.start].size_bytes)
                        .max(MIN_DRAM_POINT_BYTES)
                        .min(cap);
                    stop_at = Some(sizes.iter().copied().find(|&x| x >= want).unwrap_or(cap));
                }
            }
        }
        if points.is_empty() {
            return Err(NotRun::skip("no sweep point fits the region"));
        }
        Ok((points, plateau))
    }

    /// The cache levels' params from the points below the plateau (transition points left
    /// out), with a warning for each level without a figure; the memory figure from the
    /// sysfs window (>= 4 x LLC) when no plateau was found.
    pub(super) fn cache_levels(
        &self,
        ctx: &Context,
        report: &mut Report,
        target: &str,
        (points, plateau): (&[SweepPoint], &Option<DramPlateau>),
        cold_ns: &Option<(f64, String)>,
    ) -> Option<Figure> {
        let caches: Vec<usize> = (1..=4)
            .filter_map(|l| ctx.topology.cache_bytes(l))
            .collect();
        // Below the plateau, points at more than half the cold lap are transitions (part
        // cache hits, part DRAM): no cache level's figure comes from them.
        let below: Vec<SweepPoint> = match (&plateau, &cold_ns) {
            (Some(pl), Some((c, _))) => points[..pl.start]
                .iter()
                .filter(|p| p.lat_ns < TRANSITION_SHARE * c)
                .cloned()
                .collect(),
            _ => points.to_vec(),
        };
        let (found, notes) = plateaus(&below, &caches);
        for note in notes {
            if note.starts_with("mem_lat_ns") && (plateau.is_some() || cold_ns.is_some()) {
                continue; // memory comes from the plateau or the cold-lap tail below
            }
            if self.sizes.is_some() && note.contains("no sweep point") {
                continue; // explicit sizes: levels without a point are the user's choice
            }
            let remediation = if note.contains("latency rises") {
                "none needed: the value comes from the points before the rise"
            } else if plateau.is_some() {
                "none needed: the chase reaches DRAM latency before this level's window (the effective cache is smaller than sysfs reports)"
            } else {
                "widen the sweep with --max-size/--min-size"
            };
            warn(report, target, "latency_plateau", note, remediation);
        }
        let order_name = self.order.name();
        let mut mem: Option<(f64, Vec<String>, String)> = None;
        for p in found {
            if p.key == "mem_lat_ns" {
                if plateau.is_none() {
                    let m = format!(
                        "median of the p50 latencies of {} sweep points from {} up ({order_name} order, {}); no DRAM plateau found, so the sysfs window (>= 4 x LLC)",
                        p.ids.len(),
                        format_size(p.window.0),
                        self.layout.label()
                    );
                    mem = Some((p.value_ns, p.ids, m));
                }
                continue;
            }
            let hi = if p.window.1 == usize::MAX {
                "up".to_string()
            } else {
                format!("to {}", format_size(p.window.1))
            };
            report.params.push(Param::new(
                p.key.clone(),
                p.value_ns,
                target,
                format!(
                    "median of the p50 latencies of {} sweep points from {} {hi} ({order_name} order, {}; sizes are touched bytes)",
                    p.ids.len(),
                    format_size(p.window.0),
                    self.layout.label()
                ),
                p.ids,
            ));
        }
        mem
    }

    /// The memory figure: the DRAM plateau's median, else the points near the largest size
    /// that reach 90% of the cold lap, else `mem` (the sysfs window's).
    pub(super) fn memory_figure(
        &self,
        (points, plateau): (&[SweepPoint], &Option<DramPlateau>),
        cold_ns: &Option<(f64, String)>,
        mut mem: Option<Figure>,
    ) -> Option<Figure> {
        let order_name = self.order.name();
        if let Some(pl) = &plateau {
            let run: Vec<&SweepPoint> = points[pl.start..].iter().collect();
            let lats: Vec<f64> = run.iter().map(|p| p.lat_ns).collect();
            let value = median(&lats).expect("non-empty plateau");
            let (c, cold_id) = cold_ns.clone().expect("a plateau needs the cold lap");
            let mut ids: Vec<String> = run.iter().map(|p| p.id.clone()).collect();
            ids.push(cold_id.clone());
            let m = format!(
                "median of the p50 latencies of the {} sweep points of the DRAM plateau, {} to {} touched ({order_name} order, {}): flat within {:.0}% over two doublings and >= {:.0}% of a cold lap ({c:.1} ns, every line flushed)",
                run.len(),
                format_size(run[0].size_bytes),
                format_size(run[run.len() - 1].size_bytes),
                self.layout.label(),
                (crate::levels::DRAM_FLAT - 1.0) * 100.0,
                crate::levels::DRAM_REF_SHARE * 100.0
            );
            mem = Some((value, ids, m));
        } else if let (None, Some((c, cold_id))) = (&mem, &cold_ns) {
            // No flat plateau below the cap (memory-bound cap, or a noisy machine), and the
            // sysfs window (>= 4 x LLC) holds no point: take the points within two
            // doublings of the largest size that reach 90% of the cold lap.
            let last = points.last().map_or(0, |p| p.size_bytes);
            let floor = crate::levels::DRAM_REF_SHARE * c;
            let tail: Vec<&SweepPoint> = points
                .iter()
                .filter(|p| 4 * p.size_bytes >= last && p.lat_ns >= floor)
                .collect();
            if let Some(v) = median(&tail.iter().map(|p| p.lat_ns).collect::<Vec<_>>()) {
                let mut ids: Vec<String> = tail.iter().map(|p| p.id.clone()).collect();
                ids.push(cold_id.clone());
                let m = format!(
                    "median of the p50 latencies of the {} sweep points from {} to {} touched at >= {:.0}% of a cold lap ({c:.1} ns): no plateau flat over two doublings fit below the largest size the target allowed ({order_name} order, {})",
                    tail.len(),
                    format_size(tail[0].size_bytes),
                    format_size(last),
                    crate::levels::DRAM_REF_SHARE * 100.0,
                    self.layout.label()
                );
                mem = Some((v, ids, m));
            }
        }
        mem
    }

    /// The DRAM working set of this target for the first CPU: the cache rule's, raised by
    /// a plateau that starts past the caches sysfs names (bounded by memory).
    pub(super) fn dram_sizing(
        &self,
        cap_rule: &DramSizing,
        (points, plateau): (&[SweepPoint], &Option<DramPlateau>),
        mem: &Option<Figure>,
        available: Option<usize>,
    ) -> DramSizing {
        let mut sizing_rec = cap_rule.clone();
        if let (Some(pl), Some((_, ids, _))) = (&plateau, &mem) {
            // A plateau that starts past the caches sysfs names raises the DRAM point.
            sizing_rec = sizing_rec.with_plateau(
                points[pl.start].size_bytes,
                pl.effective_llc_bytes,
                ids.clone(),
            );
            let (t, bounded) = sizing_rec.touched_for(self.layout.span_per_touched(), available);
            if bounded && t < sizing_rec.touched_bytes {
                sizing_rec.rule = sizing::SizingRule::MemoryBound;
            }
            sizing_rec.touched_bytes = self.layout.round_touched(t);
        }
        sizing_rec
    }

    /// The DRAM point (the working set of `sizing_rec`, or with sizes the user bounded the
    /// largest point when the sweep reached DRAM), confirmed by the DRAM check against a
    /// larger one and recorded in the run's sizing book; then its figures.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dram(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        mut sizing_rec: DramSizing,
        floor: usize,
        (points, mem): (&[SweepPoint], &Option<Figure>),
    ) -> Result<(), NotRun> {
        let target = region.origin().to_string();
        let start = if self.sizes.is_none() && self.max_size.is_none() {
            Some(sizing_rec.touched_bytes)
        } else {
            mem.as_ref().and(points.last().map(|p| p.size_bytes))
        };
        let dram = match start {
            Some(start) => self.dram_point(
                ctx,
                region,
                report,
                start,
                floor,
                points,
                sizing_rec.explain(),
            )?,
            None => None,
        };
        if let Some(DramPoint { check, .. }) = &dram {
            if check.verdict == dram_check::Verdict::Grown {
                sizing_rec.rule = sizing::SizingRule::Check;
            }
            sizing_rec.touched_bytes = check.reported_bytes;
        }
        if self.sizes.is_none() {
            ctx.sizing.record(&target, sizing_rec.clone());
        }
        if let Some(dram) = dram {
            self.dram_figures(ctx, region, report, dram, &sizing_rec)?;
        }
        Ok(())
    }

    /// `mem_lat_ns` at the DRAM point (after the prefetch self-check), and the full-random
    /// figure and page-walk cost there.
    fn dram_figures(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        DramPoint {
            check,
            size,
            value,
            ids,
        }: DramPoint,
        sizing_rec: &DramSizing,
    ) -> Result<(), NotRun> {
        let target = region.origin().to_string();
        let default_id = ids[0].clone();
        // The check's verdict and figures are in dram_check, not in the method: a method
        // says how the figure was measured, the same in every run that measured it so.
        let method = format!(
            "p50 of the {} chain at the DRAM point, {} touched in {} of memory ({}; {}); DRAM working set checked by the DRAM check of the {} (see dram_check)",
            self.layout.label(),
            format_size(size),
            format_size(self.layout.span_bytes(size)),
            self.method(self.layout, self.order),
            sizing_rec.explain(),
            check.kernel
        );
        let method = if ids.len() > 1 {
            format!("{method}; the mean of the check's two passes")
        } else {
            method
        };
        let check_index = ctx.sizing.record_check(check);
        ctx.sizing.cover(
            check_index,
            ["mem_lat_ns", "mem_lat_random_ns", "page_walk_ns"].map(String::from),
        );
        let mut random = None;
        if self.random_at_max && self.order != ChaseOrder::Random {
            let p = self.measure(ctx, region, size, self.layout, ChaseOrder::Random)?;
            ctx.progress(&format!(
                "mem.latency {target} {:>6}: {:8.2} ns (full random)",
                format_size(size),
                p.d.p50
            ));
            let id = format!("mem.latency/{target}/random/{}", format_size(size));
            let method = self.method(self.layout, ChaseOrder::Random);
            let v = self.record(report, region, &id, method, p);
            random = Some((v, id));
        }
        let (reported, method, from) = if self.prefetch_check && self.order != ChaseOrder::Random {
            self.checked_figure(
                ctx,
                region,
                report,
                (size, value),
                (default_id, method, ids),
            )?
        } else {
            (value, method, ids)
        };
        report
            .params
            .push(Param::new("mem_lat_ns", reported, &target, method, from));
        if let Some((v, id)) = random {
            report.params.push(Param::new(
                "mem_lat_random_ns",
                v,
                &target,
                format!(
                    "p50 latency of a full-random chase over the DRAM point, {} touched in {} of memory (page walks included)",
                    format_size(size),
                    format_size(self.layout.span_bytes(size))
                ),
                vec![id.clone()],
            ));
            report.params.push(Param::new(
                "page_walk_ns",
                (v - reported).max(0.0),
                &target,
                "mem_lat_random_ns - mem_lat_ns: the added cost of TLB misses per load at the DRAM point",
                vec![id],
            ));
        }
        Ok(())
    }

    /// The prefetch self-check at the DRAM point of `size` (the default chain's `value`),
    /// and what it makes of `mem_lat_ns`: (value, method, measurement ids), the slower
    /// chain's where chains built differently disagree, with a warning.
    fn checked_figure(
        &self,
        ctx: &Context,
        region: &mut Region,
        report: &mut Report,
        (size, value): (usize, f64),
        (default_id, mut method, mut from): (String, String, Vec<String>),
    ) -> Result<(f64, String, Vec<String>), NotRun> {
        let target = region.origin().to_string();
        let (check, repeats) = self.prefetch_check(ctx, region, report, size, value, default_id)?;
        // The check's figure is mem_lat_ns whatever the verdict: after a repeat the
        // default chain's figure is the mean of its two passes.
        let default_ns = check.chains[0].lat_ns;
        let reported = check.reported_ns;
        if let Some((_, id)) = repeats.iter().find(|(i, _)| *i == 0) {
            method =
                format!("{method}; mean of two passes (the self-check repeated on a disagreement)");
            from.push(id.clone());
        }
        if check.verdict == "unchecked" {
            warn(report, &target,
                "prefetch_check",
                format!(
                    "the prefetch self-check compared nothing at {}: the {} chain could not be placed in the target's memory",
                    format_size(size),
                    self.layout.twin().layout.name()
                ),
                "free memory or use a larger target; mem_lat_ns is the default chain's figure, unchecked",
            );
        } else if check.verdict == "disagree" {
            let chains = check
                .chains
                .iter()
                .map(|c| format!("{} {:.1} ns", c.label, c.lat_ns))
                .collect::<Vec<_>>()
                .join(", ");
            let (message, remediation) = if check.reported_ns > default_ns {
                method = format!(
                    "the slowest chain of the prefetch self-check at the DRAM point {} (the same slot built two ways disagreed: {chains})",
                    format_size(size)
                );
                from = check.chains.iter().map(|c| c.id.clone()).collect();
                from.extend(repeats.iter().map(|(_, id)| id.clone()));
                (
                    format!(
                        "chains built differently disagree at {} by {:.1}% (more than {:.0}%): a prefetcher helps the default {} chain; mem_lat_ns reports the slower, defeated figure ({:.1} ns; chains {chains})",
                        format_size(size),
                        (check.ratio - 1.0) * 100.0,
                        CHECK_TOLERANCE * 100.0,
                        self.layout.label(),
                        reported
                    ),
                    "compare with a larger --slot and, where you can, with the prefetchers disabled (MSR 0x1a4 on Intel, 0xc0000108 on AMD, as root) to see which one learns the chain",
                )
            } else {
                (
                    format!(
                        "chains built differently disagree at {} (chains {chains}): a prefetcher helps the faster one; the default {} chain is the slower and stands as mem_lat_ns",
                        format_size(size),
                        self.layout.label()
                    ),
                    "none needed for mem_lat_ns; chases built with a fixed offset (a plain C chase, the aligned layout) read low on this CPU",
                )
            };
            warn(report, &target, "prefetch_check", message, remediation);
        }
        report.prefetch_checks.push(check);
        Ok((reported, method, from))
    }
}
