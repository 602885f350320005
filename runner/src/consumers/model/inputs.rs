//! What a model may read: the file's params, the environment's L2 size, and the
//! `--what-if` overrides.

use crate::consumers::keys;
use anyhow::{bail, Result};
use bench_core::params::ParamsFile;
use std::collections::BTreeMap;

/// Which messaging stands for seed 000's `MPI_LAT`/`MPI_BW` (`cxlchar model --baseline`).
///
/// The paper's baseline is the network: MPI between nodes (osu_latency/osu_bw). Shared-memory
/// messaging through the pool is not that baseline (run by `cxlchar all` on a /dev/shm file
/// it is local DRAM), so it stands in only when the user asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Baseline {
    /// MPI (`mpi_lat_ns` + `mpi_bw_gbs`, supplied with --what-if), else RDMA verbs
    /// (`verbs_lat_ns` + `verbs_bw_gbs`).
    #[default]
    Network,
    /// Shared-memory messaging through the pool: the Hockney fit (`pool_hockney_lat_ns` +
    /// `pool_hockney_bw_gbs`), else the ring's figures (`pool_msg_lat_ns` + `pool_msg_bw_gbs`).
    Shm,
}

impl Baseline {
    /// The `--baseline` value.
    pub fn name(self) -> &'static str {
        match self {
            Baseline::Network => "network",
            Baseline::Shm => "shm",
        }
    }
}

/// One `--what-if` override.
#[derive(Debug, Clone, PartialEq)]
pub enum WhatIf {
    /// `KEY=VALUE`: use VALUE (also for keys the file lacks).
    Set(String, f64),
    /// `KEY*FACTOR`: scale the file's value.
    Scale(String, f64),
}

/// Parses `KEY=VALUE` or `KEY*FACTOR`.
pub fn parse_what_if(s: &str) -> Result<WhatIf, String> {
    let (key, val, set) = if let Some((k, v)) = s.split_once('=') {
        (k.trim(), v.trim(), true)
    } else if let Some((k, v)) = s.split_once('*') {
        (k.trim(), v.trim(), false)
    } else {
        return Err(format!(
            "`{s}`: expected KEY=VALUE or KEY*FACTOR (e.g. pio_copy_64b_ns=0, llp_post_inline_ns*0.5)"
        ));
    };
    if !keys::plausible(key) {
        return Err(format!(
            "`{key}` is not a params key (lowercase, ending in a unit: {})",
            keys::unit_suffixes().join(", ")
        ));
    }
    let v: f64 = val
        .parse()
        .map_err(|_| format!("`{val}` in `{s}` is not a number"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "`{val}` in `{s}`: must be a finite, non-negative number"
        ));
    }
    Ok(if set {
        WhatIf::Set(key.into(), v)
    } else {
        WhatIf::Scale(key.into(), v)
    })
}

/// A value as an error message shows it: as Rust writes it, in exponent notation when it
/// is very large or very small (`1e308`, not 309 digits).
pub(super) fn shown(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The values a model may read: the file's params (plus `l2_size_bytes` from the
/// environment's cache list when the file has no such key), and the what-if overrides.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Values as measured.
    pub base: BTreeMap<String, f64>,
    /// What-if values, replacing or adding to `base`.
    pub overrides: BTreeMap<String, f64>,
    /// The messaging seed 000's models take as the message baseline.
    pub msg_baseline: Baseline,
    /// Seed 000's workload (`--workload FILE`): what its data-access model needs beyond
    /// the hardware parameters.
    pub workload: Option<std::sync::Arc<super::Workload>>,
}

impl Inputs {
    /// Inputs from a params file.
    pub fn from_file(file: &ParamsFile) -> Inputs {
        let mut base: BTreeMap<String, f64> = file
            .params
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        if !base.contains_key("l2_size_bytes") {
            if let Some(l2) = file
                .environment
                .topology
                .caches
                .iter()
                .find(|c| c.level == 2 && !c.kind.eq_ignore_ascii_case("instruction"))
            {
                base.insert("l2_size_bytes".into(), l2.size_bytes as f64);
            }
        }
        Inputs {
            base,
            overrides: BTreeMap::new(),
            msg_baseline: Baseline::default(),
            workload: None,
        }
    }

    /// Applies what-ifs; scaling a key the file lacks is an error naming it, and so is
    /// a key that is neither in the file nor in the key registry, and a scaled value that
    /// is no longer a finite number (`mem_lat_ns*1e308`).
    pub fn apply(&mut self, what_ifs: &[WhatIf]) -> Result<()> {
        for w in what_ifs {
            let (k, given) = match w {
                WhatIf::Set(k, v) => (k, format!("{k}={}", shown(*v))),
                WhatIf::Scale(k, f) => (k, format!("{k}*{}", shown(*f))),
            };
            if !keys::known(k) && self.get(k).is_none() {
                bail!(
                    "--what-if {given}: {k} is not in the file and is not a params key cxlchar \
                     knows: no benchmark produces it and no model reads it (docs/params.md lists \
                     every key)"
                );
            }
            match w {
                WhatIf::Set(k, v) => {
                    self.overrides.insert(k.clone(), *v);
                }
                WhatIf::Scale(k, f) => {
                    let Some(cur) = self.overrides.get(k).or(self.base.get(k)).copied() else {
                        let (b, cmd) = keys::producer(k);
                        bail!(
                            "--what-if {given}: {k} is not in the file (produced by {b}: {cmd}); \
                             use {k}=VALUE to supply it"
                        );
                    };
                    let v = cur * f;
                    if !v.is_finite() {
                        bail!(
                            "--what-if {given}: {k} = {} x {} is not a finite number (it \
                             overflows a 64-bit float): give a smaller factor, or {k}=VALUE",
                            shown(cur),
                            shown(*f)
                        );
                    }
                    self.overrides.insert(k.clone(), v);
                }
            }
        }
        Ok(())
    }

    /// The what-if value, else the file's.
    pub(super) fn get(&self, key: &str) -> Option<f64> {
        self.overrides.get(key).or(self.base.get(key)).copied()
    }

    /// The file's values alone.
    pub(super) fn baseline(&self) -> Inputs {
        Inputs {
            base: self.base.clone(),
            overrides: BTreeMap::new(),
            msg_baseline: self.msg_baseline,
            workload: self.workload.clone(),
        }
    }
}
