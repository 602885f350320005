//! Report assembly: the measurements (with placement and counters) and the params of one
//! verbs run.

use bench_core::bench::{Param, Report};
use bench_core::counters::MeasurementCounters;
use bench_core::memory::Region;
use bench_core::params::Measurement;
use bench_core::stats::Distribution;

/// Collects measurements and params of one run.
pub(super) struct Out<'a> {
    pub(super) rep: Report,
    pub(super) target: &'a str,
    pub(super) region: &'a Region,
}

impl Out<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn meas(
        &mut self,
        id: String,
        params: serde_json::Value,
        unit: &str,
        method: &str,
        s: &[f64],
        counters: MeasurementCounters,
    ) -> Option<f64> {
        let d = Distribution::from_samples(s)?;
        let p50 = d.p50;
        self.rep.measurements.push(Measurement {
            id,
            benchmark: "verbs".into(),
            target: self.target.into(),
            parameters: params,
            unit: unit.into(),
            method: method.into(),
            distribution: d,
            placement: Some(self.region.placement().clone()),
            counters: Some(counters),
        });
        Some(p50)
    }

    /// A key (its unit from the registry, [`bench_core::keys`]); a non-finite value is
    /// not published.
    pub(super) fn param(&mut self, key: &str, value: f64, method: &str, from: Vec<String>) {
        if !value.is_finite() {
            return;
        }
        self.rep
            .params
            .push(Param::new(key, value, self.target, method, from));
    }
}
