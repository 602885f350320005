//! Seed 000's data-access model (Sec. IV-B, IV-C, eqs. (3)-(10)): the workload input file
//! and the arithmetic.
//!
//! The model needs what a params file cannot hold: the workload's PAPI metrics (they give
//! the class weights of eqs. (3), (4)), its MPI trace (message sizes for eqs. (1), (2)) and
//! its traced load samples on MPI buffers (latency and data source, for eqs. (5)-(10)).
//! `cxlchar model --workload FILE` reads them from a TOML file:
//!
//! ```toml
//! accesses_per_element = 4  # n: 1/n of each sample is a first load (Sec. IV-B 2)
//! sample_period = 10007     # `rate` of eqs. (5)-(10): loads per sample
//!
//! [metrics]                 # eq. (3)'s values, as fractions
//! mbw = 0.25                # memory throughput / peak memory bandwidth
//! mlat = 0.08               # L3 load misses / all loads
//! cbw = 0.40                # cache throughput / cache bandwidth (the larger of L1, L2)
//! clat = 0.20               # loads that reach L2 / all loads
//!
//! [parameters]              # optional; the defaults are the paper's (Sec. V-B)
//! thr_mbw = [0.03, 0.33]    # THR_L, THR_U of each class
//! thr_mlat = [0.01, 0.2]
//! thr_cbw = [0.1, 0.75]
//! thr_clat = [0.05, 0.5]
//! lpf_lat = 1.5             # LPF_LAT
//! lpf_bw = 3.0              # LPF_BW
//! compute_max_weight = 0.5  # COMPUTE_MAX_WEIGHT (footnote 17)
//! element_bytes = 8         # footnote 20: one load per 64 B line is not a demand hit
//! cxl_fraction = 1.0        # footnote 19: the part of each sample that is a CXL access
//!
//! [[transfer]]              # the MPI trace: message sizes, how many of each
//! bytes = 65536
//! count = 1000
//!
//! [[samples]]               # load samples on MPI buffers
//! source = "miss"           # hit | lfb | miss (the sample's data source)
//! lat_ns = 250.0            # its latency
//! count = 12                # how many samples had it (default 1)
//! ```
//!
//! Where the paper leaves a choice open, the choice is stated in the model's notes
//! ([`Workload::interpretation`]).

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;
use std::path::Path;

/// A workload class of Sec. IV-B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Memory bandwidth limited.
    Mbw,
    /// Memory latency limited.
    Mlat,
    /// Cache bandwidth limited.
    Cbw,
    /// Cache latency limited.
    Clat,
    /// None of the above.
    Compute,
}

impl Class {
    /// Every class, in the paper's order.
    pub const ALL: [Class; 5] = [
        Class::Mbw,
        Class::Mlat,
        Class::Cbw,
        Class::Clat,
        Class::Compute,
    ];

    /// Name in output names (`w_mbw`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Mbw => "mbw",
            Class::Mlat => "mlat",
            Class::Cbw => "cbw",
            Class::Clat => "clat",
            Class::Compute => "compute",
        }
    }

    /// The equation of its CXL scenario.
    pub fn equation(self) -> &'static str {
        match self {
            Class::Mlat => "(6)",
            Class::Mbw => "(7)",
            Class::Cbw => "(8)",
            Class::Clat => "(9)",
            Class::Compute => "(10)",
        }
    }
}

/// A load sample's data source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A cache hit (demand or prefetch: footnote 20 splits them).
    Hit,
    /// A line fill buffer hit (the line was being fetched).
    Lfb,
    /// A cache miss (served by memory).
    Miss,
}

/// The PAPI-derived metrics of eq. (3).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Memory throughput as a fraction of the peak memory bandwidth.
    pub mbw: f64,
    /// L3 load misses as a fraction of all loads.
    pub mlat: f64,
    /// Cache throughput as a fraction of the cache bandwidth (the larger of L1 and L2).
    pub cbw: f64,
    /// Loads that reach L2 as a fraction of all loads.
    pub clat: f64,
}

/// The model's heuristic parameters (defaults: the paper's, Sec. V-B).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Parameters {
    /// THR_L, THR_U of memory bandwidth.
    pub thr_mbw: [f64; 2],
    /// THR_L, THR_U of memory latency.
    pub thr_mlat: [f64; 2],
    /// THR_L, THR_U of cache bandwidth.
    pub thr_cbw: [f64; 2],
    /// THR_L, THR_U of cache latency.
    pub thr_clat: [f64; 2],
    /// LPF_LAT: load parallelism of latency-limited code.
    pub lpf_lat: f64,
    /// LPF_BW: load parallelism of bandwidth-limited code.
    pub lpf_bw: f64,
    /// COMPUTE_MAX_WEIGHT (footnote 17).
    pub compute_max_weight: f64,
    /// Bytes per load (footnote 20: one load per 64 B line is not a demand hit).
    pub element_bytes: f64,
    /// Part of each sample modeled as a CXL access, the rest as DDR (footnote 19).
    pub cxl_fraction: f64,
}

impl Default for Parameters {
    fn default() -> Self {
        Parameters {
            thr_mbw: [0.03, 0.33],
            thr_mlat: [0.01, 0.2],
            thr_cbw: [0.1, 0.75],
            thr_clat: [0.05, 0.5],
            lpf_lat: 1.5,
            lpf_bw: 3.0,
            compute_max_weight: 0.5,
            element_bytes: 8.0,
            cxl_fraction: 1.0,
        }
    }
}

/// Messages of one size in the MPI trace.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// Message size in bytes.
    pub bytes: f64,
    /// How many messages of this size.
    #[serde(default = "one")]
    pub count: f64,
}

/// Load samples of one latency and data source.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// Where the loads were served from (cache, fill buffer or memory).
    pub source: Source,
    /// Latency (ns).
    pub lat_ns: f64,
    /// How many samples.
    #[serde(default = "one")]
    pub count: f64,
}

fn one() -> f64 {
    1.0
}

/// A workload: the inputs of eqs. (1)-(10) that are not hardware parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// n: accesses per element on average; 1/n of each sample is a first load.
    pub accesses_per_element: f64,
    /// `rate` of eqs. (5)-(10): loads per sample (the sampling period).
    pub sample_period: f64,
    /// Eq. (3)'s metrics.
    pub metrics: Metrics,
    /// Thresholds and factors.
    #[serde(default)]
    pub parameters: Parameters,
    /// The MPI trace.
    #[serde(default)]
    pub transfer: Vec<Transfer>,
    /// Load samples on MPI buffers.
    #[serde(default)]
    pub samples: Vec<Sample>,
}

/// The hardware parameters the model reads from the params file.
#[derive(Debug, Clone, Copy)]
pub struct Hardware {
    /// MEM_LAT (ns).
    pub mem_lat_ns: f64,
    /// CXL_LAT (ns).
    pub cxl_lat_ns: f64,
    /// CXL_ATOMIC_LAT (ns).
    pub cxl_atomic_lat_ns: f64,
    /// MPI_LAT (ns).
    pub mpi_lat_ns: f64,
    /// MPI_BW (GB/s = bytes/ns).
    pub mpi_bw_gbs: f64,
}

/// Class weights: `[mbw, mlat, cbw, clat, compute]`.
pub type Weights = [f64; 5];

/// What the model computes.
#[derive(Debug, Clone)]
pub struct Access {
    /// Weights of the first load (MBW, MLAT, Compute; normalized).
    pub first: Weights,
    /// Weights of subsequent loads (all five classes; normalized).
    pub subsequent: Weights,
    /// Eq. (5): data access time, MPI scenario (ns).
    pub t_access_mpi_ns: f64,
    /// Eqs. (6)-(10) weighted: data access time, CXL scenario (ns).
    pub t_access_cxl_ns: f64,
    /// Eq. (1) over the trace (ns).
    pub t_transfer_mpi_ns: f64,
    /// Eq. (2) over the trace (ns).
    pub t_transfer_cxl_ns: f64,
}

/// Eq. (3): a class weight from its metric and thresholds.
pub fn weight(val: f64, thr: [f64; 2]) -> f64 {
    let [l, u] = thr;
    if val <= l {
        0.0
    } else if val >= u {
        1.0
    } else {
        ((val - l) / (u - l)).powi(2)
    }
}

/// Eqs. (3), (4): the raw weights `[mbw, mlat, cbw, clat]` (MLAT less MBW, CLAT less the
/// other three, never below 0).
pub fn raw_weights(m: &Metrics, p: &Parameters) -> [f64; 4] {
    let mbw = weight(m.mbw, p.thr_mbw);
    let mlat = (weight(m.mlat, p.thr_mlat) - mbw).max(0.0);
    let cbw = weight(m.cbw, p.thr_cbw);
    let clat = (weight(m.clat, p.thr_clat) - (mbw + mlat + cbw)).max(0.0);
    [mbw, mlat, cbw, clat]
}

/// Footnote 17: the classes in `used` (plus Compute) normalized to sum to 1. Below 1 the
/// remainder goes to Compute up to `cmax`, and what is left of it is split equally over
/// the used classes; above 1 every weight is divided by the sum.
pub fn normalize(raw: [f64; 4], used: &[Class], cmax: f64) -> Weights {
    let mut w = [0.0; 5];
    for c in used {
        w[*c as usize] = raw[*c as usize];
    }
    let s: f64 = w[..4].iter().sum();
    if s > 1.0 {
        for v in &mut w[..4] {
            *v /= s;
        }
    } else {
        let r = 1.0 - s;
        let compute = r.min(cmax);
        w[Class::Compute as usize] = compute;
        let extra = (r - compute) / used.len() as f64;
        for c in used {
            w[*c as usize] += extra;
        }
    }
    w
}

impl Workload {
    /// Reads and checks a workload file.
    pub fn load(path: &Path) -> Result<Workload> {
        let text = crate::document::load::read_input(path, "workload ")?;
        Self::parse(&text).with_context(|| format!("workload {}", path.display()))
    }

    /// Parses and checks a workload's TOML text.
    pub fn parse(text: &str) -> Result<Workload> {
        let w: Workload = toml::from_str(text)?;
        w.check()?;
        Ok(w)
    }

    fn check(&self) -> Result<()> {
        let m = &self.metrics;
        for (name, v) in [
            ("metrics.mbw", m.mbw),
            ("metrics.mlat", m.mlat),
            ("metrics.cbw", m.cbw),
            ("metrics.clat", m.clat),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                bail!("{name} = {v}: a metric is a finite fraction >= 0");
            }
        }
        let p = &self.parameters;
        for (name, [l, u]) in [
            ("thr_mbw", p.thr_mbw),
            ("thr_mlat", p.thr_mlat),
            ("thr_cbw", p.thr_cbw),
            ("thr_clat", p.thr_clat),
        ] {
            if !(l.is_finite() && u.is_finite() && 0.0 <= l && l < u) {
                bail!("parameters.{name} = [{l}, {u}]: need 0 <= THR_L < THR_U");
            }
        }
        let positive = [("lpf_lat", p.lpf_lat), ("lpf_bw", p.lpf_bw)];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                bail!("parameters.{name} = {v}: must be > 0");
            }
        }
        if !(self.sample_period.is_finite() && self.sample_period > 0.0) {
            bail!("sample_period = {}: must be > 0", self.sample_period);
        }
        let unit = [
            ("compute_max_weight", p.compute_max_weight),
            ("cxl_fraction", p.cxl_fraction),
        ];
        for (name, v) in unit {
            if !(0.0..=1.0).contains(&v) {
                bail!("parameters.{name} = {v}: must be within [0, 1]");
            }
        }
        if !(self.accesses_per_element.is_finite() && self.accesses_per_element >= 1.0) {
            bail!(
                "accesses_per_element = {}: must be >= 1",
                self.accesses_per_element
            );
        }
        if !(p.element_bytes > 0.0 && p.element_bytes <= 64.0) {
            bail!(
                "parameters.element_bytes = {}: must be within (0, 64]",
                p.element_bytes
            );
        }
        for (i, t) in self.transfer.iter().enumerate() {
            if !(t.bytes.is_finite() && t.bytes >= 0.0 && t.count.is_finite() && t.count >= 0.0) {
                bail!(
                    "transfer #{}: bytes and count must be finite and >= 0",
                    i + 1
                );
            }
        }
        for (i, s) in self.samples.iter().enumerate() {
            if !(s.lat_ns.is_finite() && s.lat_ns >= 0.0 && s.count.is_finite() && s.count >= 0.0) {
                bail!(
                    "samples #{}: lat_ns and count must be finite and >= 0",
                    i + 1
                );
            }
        }
        if self.transfer.is_empty() && self.samples.is_empty() {
            bail!("no [[transfer]] and no [[samples]]: nothing to model");
        }
        Ok(())
    }

    /// The choices made where the paper leaves one open.
    pub fn interpretation(&self) -> Vec<String> {
        let p = &self.parameters;
        vec![
            format!(
                "eq. (5)'s lpf is the class's factor, as in eqs. (6)-(10): LPF_LAT = {} for MLAT, \
                 CLAT; LPF_BW = {} for MBW, CBW, Compute (the paper names no single lpf)",
                p.lpf_lat, p.lpf_bw
            ),
            format!(
                "footnote 20: {:.1} % of loads are demand hits (1 - element_bytes/64); a hit \
                 sample is a demand hit by that fraction of all samples over the hit fraction \
                 (capped at 1), the rest a prefetch hit",
                self.demand_fraction() * 100.0
            ),
            format!(
                "first loads (1/n, n = {}) weigh MBW, MLAT, Compute; subsequent loads all five \
                 classes; CXL_LAT - MEM_LAT is the penalty of a load from CXL",
                self.accesses_per_element
            ),
        ]
    }

    /// Fraction of all loads that are demand hits (footnote 20).
    fn demand_fraction(&self) -> f64 {
        1.0 - self.parameters.element_bytes / 64.0
    }

    /// Share of the hit samples that are demand hits (footnote 20).
    pub fn demand_share_of_hits(&self) -> f64 {
        let total: f64 = self.samples.iter().map(|s| s.count).sum();
        let hits: f64 = self
            .samples
            .iter()
            .filter(|s| s.source == Source::Hit)
            .map(|s| s.count)
            .sum();
        if hits <= 0.0 || total <= 0.0 {
            return 1.0;
        }
        (self.demand_fraction() / (hits / total)).min(1.0)
    }

    /// The class's load parallelism factor.
    fn lpf(&self, c: Class) -> f64 {
        match c {
            Class::Mlat | Class::Clat => self.parameters.lpf_lat,
            _ => self.parameters.lpf_bw,
        }
    }

    /// One sample's load time under CXL in class `c`, before the LPF (eqs. (6)-(10)).
    fn cxl_load_ns(&self, c: Class, s: &Sample, hw: &Hardware) -> f64 {
        let (lat, cxl) = (s.lat_ns, hw.cxl_lat_ns);
        let d = hw.cxl_lat_ns - hw.mem_lat_ns;
        let congested = cxl.max(lat + d);
        match (s.source, c) {
            (Source::Hit, Class::Mbw | Class::Cbw) => {
                let dem = self.demand_share_of_hits();
                dem * lat + (1.0 - dem) * (lat + d)
            }
            (Source::Hit, _) => lat,
            (Source::Lfb, Class::Mlat) => lat + d,
            (Source::Lfb, Class::Mbw) => congested,
            (Source::Lfb, Class::Cbw | Class::Clat) => lat,
            (Source::Lfb, Class::Compute) => lat + d / 2.0,
            (Source::Miss, Class::Mbw | Class::Cbw) => congested,
            (Source::Miss, _) => cxl,
        }
    }

    /// Per class: (MPI, CXL) data access time of all samples (ns), eqs. (5)-(10).
    pub fn per_class(&self, hw: &Hardware) -> [(f64, f64); 5] {
        let p = &self.parameters;
        let f = p.cxl_fraction;
        Class::ALL.map(|c| {
            let (mut mpi, mut cxl) = (0.0, 0.0);
            for s in &self.samples {
                mpi += s.count * s.lat_ns;
                cxl += s.count * (f * self.cxl_load_ns(c, s, hw) + (1.0 - f) * s.lat_ns);
            }
            let k = self.sample_period / self.lpf(c);
            (mpi * k, cxl * k)
        })
    }

    /// The whole model.
    pub fn evaluate(&self, hw: &Hardware) -> Access {
        let p = &self.parameters;
        let raw = raw_weights(&self.metrics, p);
        let first = normalize(raw, &[Class::Mbw, Class::Mlat], p.compute_max_weight);
        let subsequent = normalize(
            raw,
            &[Class::Mbw, Class::Mlat, Class::Cbw, Class::Clat],
            p.compute_max_weight,
        );
        let n = self.accesses_per_element;
        let per = self.per_class(hw);
        let mix = |pick: fn(&(f64, f64)) -> f64| {
            (0..5)
                .map(|i| (first[i] / n + subsequent[i] * (n - 1.0) / n) * pick(&per[i]))
                .sum::<f64>()
        };
        let msgs: f64 = self.transfer.iter().map(|t| t.count).sum();
        Access {
            first,
            subsequent,
            t_access_mpi_ns: mix(|x| x.0),
            t_access_cxl_ns: mix(|x| x.1),
            t_transfer_mpi_ns: self
                .transfer
                .iter()
                .map(|t| t.count * (hw.mpi_lat_ns + t.bytes / hw.mpi_bw_gbs))
                .sum(),
            t_transfer_cxl_ns: msgs * 2.0 * hw.cxl_atomic_lat_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's hardware parameters for the Optane-mimicked CXL (Sec. V-B): MEM_LAT
    /// 86 ns, CXL_LAT 417 ns, CXL atomic 653 ns; MPI cross-NUMA 650 ns, 4.090 GB/s.
    const PAPER_HW: Hardware = Hardware {
        mem_lat_ns: 86.0,
        cxl_lat_ns: 417.0,
        cxl_atomic_lat_ns: 653.0,
        mpi_lat_ns: 650.0,
        mpi_bw_gbs: 4.090,
    };

    fn metrics(mbw: f64, mlat: f64, cbw: f64, clat: f64) -> Metrics {
        Metrics {
            mbw,
            mlat,
            cbw,
            clat,
        }
    }

    /// The defaults are the paper's heuristic parameters, Sec. V-B ("0.03-0.33 for MBW,
    /// 0.01-0.2 for MLAT, 0.1-0.75 for CBW, and 0.05-0.5 for CLAT. LPF_LAT is set to 1.5,
    /// LPF_BW is 3, and COMPUTE_MAX_WEIGHT is 0.5").
    #[test]
    fn defaults_are_the_papers_parameters() {
        let p = Parameters::default();
        assert_eq!(p.thr_mbw, [0.03, 0.33]);
        assert_eq!(p.thr_mlat, [0.01, 0.2]);
        assert_eq!(p.thr_cbw, [0.1, 0.75]);
        assert_eq!(p.thr_clat, [0.05, 0.5]);
        assert_eq!((p.lpf_lat, p.lpf_bw, p.compute_max_weight), (1.5, 3.0, 0.5));
    }

    /// Eq. (3): 0 at or below THR_L, 1 at or above THR_U, quadratic between. The paper
    /// prints no evaluated weight; the values are the equation's, by hand.
    #[test]
    fn eq3_is_zero_quadratic_one() {
        let t = [0.03, 0.33];
        assert_eq!(weight(0.03, t), 0.0);
        assert_eq!(weight(0.5, t), 1.0);
        assert!((weight(0.18, t) - 0.25).abs() < 1e-12); // halfway: (1/2)^2
        assert!(weight(0.10, t) < weight(0.20, t));
    }

    /// Eq. (4) and the MLAT rule: MLAT less MBW, CLAT less the other three, never < 0.
    #[test]
    fn eq4_deducts_and_clamps() {
        let p = Parameters::default();
        // MBW saturated: MLAT (also saturated) is deducted to 0, CLAT to 0.
        let r = raw_weights(&metrics(0.5, 0.5, 0.0, 0.9), &p);
        assert_eq!(r, [1.0, 0.0, 0.0, 0.0]);
        // Nothing above thresholds but CLAT: it keeps its own weight.
        let r = raw_weights(&metrics(0.0, 0.0, 0.0, 0.275), &p);
        assert_eq!(r[..3], [0.0, 0.0, 0.0]);
        assert!((r[3] - 0.25).abs() < 1e-12);
    }

    /// Footnote 17: remainder to Compute up to COMPUTE_MAX_WEIGHT, the rest split equally;
    /// above 1, divided by the sum. Every set sums to 1.
    #[test]
    fn footnote17_normalization() {
        let used = [Class::Mbw, Class::Mlat];
        // Sum 0.2: Compute 0.5, the other 0.3 split over MBW and MLAT.
        let w = normalize([0.2, 0.0, 0.9, 0.9], &used, 0.5);
        assert!((w[0] - 0.35).abs() < 1e-12 && (w[1] - 0.15).abs() < 1e-12);
        assert_eq!((w[2], w[3], w[4]), (0.0, 0.0, 0.5));
        // Sum 0.7: Compute 0.3.
        let w = normalize([0.4, 0.3, 0.0, 0.0], &used, 0.5);
        assert!((w[4] - 0.3).abs() < 1e-12);
        // Sum 2 over four classes: halved, no Compute.
        let all = [Class::Mbw, Class::Mlat, Class::Cbw, Class::Clat];
        let w = normalize([1.0, 0.5, 0.5, 0.0], &all, 0.5);
        assert_eq!(w, [0.5, 0.25, 0.25, 0.0, 0.0]);
        for w in [
            normalize([0.0; 4], &all, 0.5),
            normalize([0.1, 0.2, 0.3, 0.0], &all, 0.2),
        ] {
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    fn one_class_workload(m: Metrics, samples: Vec<Sample>) -> Workload {
        Workload {
            accesses_per_element: 1.0,
            sample_period: 1.0,
            metrics: m,
            parameters: Parameters {
                compute_max_weight: 0.0,
                ..Default::default()
            },
            transfer: vec![],
            samples,
        }
    }

    fn s(source: Source, lat_ns: f64) -> Sample {
        Sample {
            source,
            lat_ns,
            count: 1.0,
        }
    }

    /// A purely memory-latency-bound workload follows eq. (6): hits unchanged, LFB
    /// + (CXL_LAT - MEM_LAT), misses at CXL_LAT, over LPF_LAT; eq. (5) is the plain sum.
    #[test]
    fn eq6_memory_latency_class() {
        let w = one_class_workload(
            metrics(0.0, 0.5, 0.0, 0.0),
            vec![
                s(Source::Hit, 4.0),
                s(Source::Lfb, 50.0),
                s(Source::Miss, 90.0),
            ],
        );
        let a = w.evaluate(&PAPER_HW);
        assert_eq!(a.subsequent, [0.0, 1.0, 0.0, 0.0, 0.0]);
        let d = 417.0 - 86.0;
        assert!((a.t_access_mpi_ns - (4.0 + 50.0 + 90.0) / 1.5).abs() < 1e-9);
        assert!((a.t_access_cxl_ns - (4.0 + (50.0 + d) + 417.0) / 1.5).abs() < 1e-9);
    }

    /// Eq. (7): under memory-bandwidth pressure the prefetch share of hits pays the CXL
    /// penalty and LFB/miss samples pay max(CXL_LAT, lat + penalty), over LPF_BW.
    #[test]
    fn eq7_memory_bandwidth_class() {
        let mut w = one_class_workload(
            metrics(0.5, 0.0, 0.0, 0.0),
            vec![s(Source::Hit, 4.0), s(Source::Miss, 500.0)],
        );
        // 8-byte loads: 7/8 of loads are demand hits, but only 1/2 of samples hit: every
        // hit is a demand hit.
        assert_eq!(w.demand_share_of_hits(), 1.0);
        let d = 417.0 - 86.0;
        let a = w.evaluate(&PAPER_HW);
        assert!((a.t_access_cxl_ns - (4.0 + (500.0 + d)) / 3.0).abs() < 1e-9);
        // 32-byte loads: half of the loads are demand hits, all samples hit: half of
        // each hit is a prefetch hit.
        w.parameters.element_bytes = 32.0;
        w.samples = vec![s(Source::Hit, 4.0)];
        assert!((w.demand_share_of_hits() - 0.5).abs() < 1e-12);
        let a = w.evaluate(&PAPER_HW);
        assert!((a.t_access_cxl_ns - (4.0 + d / 2.0) / 3.0).abs() < 1e-9);
    }

    /// Eqs. (8)-(10): cache classes see no LFB penalty, Compute half of it; misses pay
    /// max(CXL_LAT, lat + penalty) under cache bandwidth (8), CXL_LAT otherwise.
    #[test]
    fn eq8_to_10_cache_and_compute_classes() {
        let w = one_class_workload(
            metrics(0.0, 0.0, 0.0, 0.0),
            vec![s(Source::Lfb, 50.0), s(Source::Miss, 500.0)],
        );
        let per = w.per_class(&PAPER_HW);
        let d = 417.0 - 86.0;
        for (c, expect) in [
            (Class::Cbw, (50.0 + 500.0 + d) / 3.0),
            (Class::Clat, (50.0 + 417.0) / 1.5),
            (Class::Compute, (50.0 + d / 2.0 + 417.0) / 3.0),
        ] {
            assert!((per[c as usize].1 - expect).abs() < 1e-9, "{c:?}");
        }
    }

    /// Eqs. (1), (2) over a trace with the paper's cross-NUMA MPI figures (650 ns,
    /// 4.090 GB/s) and Optane atomic (653 ns), Sec. V-B.
    #[test]
    fn eq1_eq2_over_the_trace() {
        let mut w = one_class_workload(metrics(0.0, 0.0, 0.0, 0.0), vec![]);
        w.transfer = vec![
            Transfer {
                bytes: 4090.0,
                count: 10.0,
            },
            Transfer {
                bytes: 0.0,
                count: 5.0,
            },
        ];
        let a = w.evaluate(&PAPER_HW);
        assert!((a.t_transfer_mpi_ns - (10.0 * (650.0 + 1000.0) + 5.0 * 650.0)).abs() < 1e-6);
        assert!((a.t_transfer_cxl_ns - 15.0 * 2.0 * 653.0).abs() < 1e-9);
    }

    /// First loads use only MBW, MLAT, Compute: with n = 2, half of the CLAT-only
    /// workload's samples are weighted as Compute.
    #[test]
    fn first_and_subsequent_loads() {
        let mut w = one_class_workload(metrics(0.0, 0.0, 0.0, 0.9), vec![s(Source::Lfb, 50.0)]);
        w.parameters.compute_max_weight = 1.0;
        w.accesses_per_element = 2.0;
        let a = w.evaluate(&PAPER_HW);
        assert_eq!(a.first, [0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(a.subsequent, [0.0, 0.0, 0.0, 1.0, 0.0]);
        let d = 417.0 - 86.0;
        let expect = 0.5 * (50.0 + d / 2.0) / 3.0 + 0.5 * 50.0 / 1.5;
        assert!((a.t_access_cxl_ns - expect).abs() < 1e-9);
    }

    #[test]
    fn parse_checks_the_file() {
        let ok = "accesses_per_element=2\nsample_period=100\n[metrics]\nmbw=0.1\nmlat=0.1\ncbw=0.1\nclat=0.1\n[[samples]]\nsource=\"miss\"\nlat_ns=100\n";
        let w = Workload::parse(ok).unwrap();
        assert_eq!(w.parameters.lpf_bw, 3.0);
        assert_eq!(w.samples[0].count, 1.0);
        for (bad, why) in [
            (ok.replace("mbw=0.1", "mbw=-1"), "metrics.mbw"),
            (ok.replace("\"miss\"", "\"dram\""), "unknown variant"),
            (ok.replace("[metrics]", "[metrics]\nmbww=1"), "unknown field"),
            (format!("{ok}[parameters]\nthr_mbw=[0.5,0.1]\n"), "THR_L < THR_U"),
            (format!("{ok}[parameters]\ncxl_fraction=2\n"), "[0, 1]"),
            (
                "accesses_per_element=2\nsample_period=100\n[metrics]\nmbw=0.1\nmlat=0.1\ncbw=0.1\nclat=0.1\n"
                    .to_string(),
                "nothing to model",
            ),
            (ok.replace("sample_period=100", "sample_period=0"), "sample_period"),
            (ok.replace("accesses_per_element=2\n", ""), "accesses_per_element"),
        ] {
            let e = format!("{:#}", Workload::parse(&bad).unwrap_err());
            assert!(e.contains(why), "{why}: {e}");
        }
    }
}
