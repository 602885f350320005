//! What `cxlchar gpu` runs, validated before the driver is touched.

use crate::shape::transfer_sizes;
use bench_core::effort::Effort;
use bench_core::units::parse_positive_size;
use bench_core::units::{format_size, GIB, KIB};
use thiserror::Error;

/// Smallest copy of the bandwidth sweep.
pub const MIN_SIZE: usize = 4 * KIB;
/// Largest `--max-size` accepted (a host buffer and a device buffer of this size are
/// allocated).
pub const MAX_SIZE: usize = 64 * GIB;
/// Largest stream count of the contention test.
pub const MAX_STREAMS: usize = 64;
/// Stream counts of the contention test when none are given.
pub const DEFAULT_STREAMS: [usize; 4] = [1, 2, 4, 8];

/// A part of the GPU family, for `--parts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum GpuPart {
    /// `gpu.bw`: pinned and pageable host memory sweeps and the small-copy latency.
    Host,
    /// `gpu.pool`: the bandwidth sweep on each target's registered memory.
    Sweep,
    /// `gpu.pool`: k concurrent copies on one GPU (each direction and mixed), and one copy
    /// on each of several GPUs.
    Contention,
    /// `gpu.pool`: CPU agents streaming the target beside the GPU's copies.
    WithCpu,
}

impl GpuPart {
    /// Every part, in the order a run measures them.
    pub const ALL: [GpuPart; 4] = [
        GpuPart::Host,
        GpuPart::Sweep,
        GpuPart::Contention,
        GpuPart::WithCpu,
    ];
}

/// The GPU family's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuConfig {
    /// The parts to measure (`None`: every part).
    pub parts: Option<Vec<GpuPart>>,
    /// Measure only this device (`None`: every device for the host sweep, device 0 for the
    /// target sweep and the stream contention, every device for the multi-GPU contention).
    pub device: Option<usize>,
    /// Largest copy of the sweep (`None`: 1 GiB, the same with --quick).
    pub max_size: Option<usize>,
    /// Concurrent stream counts of the contention test (`None`: 1, 2, 4, 8).
    pub streams: Option<Vec<usize>>,
    /// Bytes of each concurrent transfer (`None`: 64 MiB; quick: 8 MiB).
    pub contention_size: Option<usize>,
}

/// A configuration that cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// `--max-size` out of range.
    #[error(
        "--max-size {given} is out of range: it must be between {} and {}",
        format_size(MIN_SIZE),
        format_size(MAX_SIZE)
    )]
    MaxSize {
        /// The value given (bytes).
        given: usize,
    },
    /// `--streams` empty or out of range.
    #[error("--streams must list counts between 1 and {MAX_STREAMS} (e.g. 1,2,4,8), got {0:?}")]
    Streams(Vec<usize>),
    /// `--contention-size` out of range.
    #[error(
        "--contention-size {given} is out of range: it must be between {} and {}",
        format_size(MIN_SIZE),
        format_size(MAX_SIZE)
    )]
    ContentionSize {
        /// The value given (bytes).
        given: usize,
    },
    /// `--device` beyond the devices the driver reports.
    #[error("--device {given} does not exist: the driver reports {count} GPU(s) (0..{count}); see `cxlchar targets`")]
    Device {
        /// The ordinal given.
        given: usize,
        /// Devices present.
        count: usize,
    },
}

impl GpuConfig {
    /// Checks the values that do not need the driver.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(m) = self.max_size {
            if !(MIN_SIZE..=MAX_SIZE).contains(&m) {
                return Err(ConfigError::MaxSize { given: m });
            }
        }
        if let Some(s) = &self.streams {
            if s.is_empty() || s.iter().any(|&k| k == 0 || k > MAX_STREAMS) {
                return Err(ConfigError::Streams(s.clone()));
            }
        }
        if let Some(c) = self.contention_size {
            if !(MIN_SIZE..=MAX_SIZE).contains(&c) {
                return Err(ConfigError::ContentionSize { given: c });
            }
        }
        Ok(())
    }

    /// Checks `--device` against the devices present.
    pub fn validate_device(&self, count: usize) -> Result<(), ConfigError> {
        match self.device {
            Some(d) if d >= count => Err(ConfigError::Device { given: d, count }),
            _ => Ok(()),
        }
    }

    /// Whether `part` is measured.
    pub fn runs(&self, part: GpuPart) -> bool {
        self.parts.as_ref().is_none_or(|p| p.contains(&part))
    }

    /// Largest copy of the sweep.
    pub fn max_size(&self, effort: &Effort) -> usize {
        self.max_size.unwrap_or(effort.gpu.sweep_max_bytes)
    }

    /// Copy sizes of the sweep: from 4 KiB by the effort's factor (4; quick: 16) up to and
    /// including the largest (1 GiB, with and without `--quick`).
    pub fn sizes(&self, effort: &Effort) -> Vec<usize> {
        transfer_sizes(MIN_SIZE, self.max_size(effort), effort.gpu.sweep_step)
    }

    /// Stream counts of the contention test, ascending, with 1 (the reference) included.
    pub fn stream_counts(&self) -> Vec<usize> {
        let mut v = self
            .streams
            .clone()
            .unwrap_or_else(|| DEFAULT_STREAMS.to_vec());
        v.push(1);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Bytes of each concurrent transfer, and of each GPU copy beside the CPU agents
    /// ([`crate::with_cpu`]): the same with and without `--quick`.
    pub fn contention_size(&self, effort: &Effort) -> usize {
        self.contention_size.unwrap_or(effort.gpu.contention_bytes)
    }

    /// Host bytes the target sweep and the contention tests need on a memory target, with
    /// `gpus` devices taking part in the multi-GPU test.
    pub fn target_bytes(&self, effort: &Effort, gpus: usize) -> usize {
        let k = self.stream_counts().last().copied().unwrap_or(1).max(gpus);
        self.max_size(effort)
            .max(k.saturating_mul(self.contention_size(effort)))
    }
}

/// GPU <-> memory DMA (seed 003): host-to-device and device-to-host bandwidth from
/// pageable, pinned (cuMemAllocHost) and each --target's memory (registered with
/// cuMemHostRegister), 4 KiB .. 1 GiB, and how 1..k concurrent copies share it. CUDA is
/// loaded at run time: without a driver or a GPU the family is skipped, with the reason.
#[derive(Debug, Clone, clap::Args)]
pub struct GpuArgs {
    /// Measure only this GPU (CUDA ordinal, see `cxlchar targets`). Default: every GPU
    /// for host memory, GPU 0 for the targets, all GPUs at once for multi-GPU contention.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// Largest copy of the sweeps (default 1G, the same with --quick); sizes grow from 4K
    /// by x4 (quick x16, the largest always included).
    #[arg(long, value_name = "SIZE", value_parser = parse_copy_size)]
    pub max_size: Option<usize>,
    /// Concurrent copies (streams on one GPU) of the contention test, comma-separated
    /// (default 1,2,4,8; 1 is always measured as the reference).
    #[arg(long, value_name = "K,..", value_delimiter = ',', value_parser = parse_stream_count)]
    pub streams: Option<Vec<usize>>,
    /// Bytes of each concurrent copy in the contention test (default 64M, the same with
    /// --quick).
    #[arg(long, value_name = "SIZE", value_parser = parse_copy_size)]
    pub contention_size: Option<usize>,
    /// Measure only these parts, comma-separated (default all): host (pinned and
    /// pageable sweeps, small-copy latency), sweep (each target's registered memory),
    /// contention (concurrent copies), with-cpu (CPU agents beside the GPU). A comparison
    /// against one reference runs only its part.
    #[arg(long, value_name = "PART,..", value_delimiter = ',', value_enum)]
    pub parts: Option<Vec<GpuPart>>,
}

/// `--max-size`, `--contention-size`: a copy size between [`MIN_SIZE`] and [`MAX_SIZE`]
/// (a bad value is a command-line error, status 2).
fn parse_copy_size(s: &str) -> Result<usize, String> {
    let v = parse_positive_size(s)?;
    if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
        return Err(format!(
            "{} is out of range: a copy is between {} and {}",
            format_size(v),
            format_size(MIN_SIZE),
            format_size(MAX_SIZE)
        ));
    }
    Ok(v)
}

/// One count of `--streams`: between 1 and [`MAX_STREAMS`].
fn parse_stream_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(k) if (1..=MAX_STREAMS).contains(&k) => Ok(k),
        _ => Err(format!(
            "{s:?} is no stream count: give counts between 1 and {MAX_STREAMS} (e.g. 1,2,4,8)"
        )),
    }
}

impl GpuArgs {
    /// The configuration of the options, validated.
    pub fn config(&self) -> Result<GpuConfig, ConfigError> {
        let c = GpuConfig {
            parts: self.parts.clone(),
            device: self.device,
            max_size: self.max_size,
            streams: self.streams.clone(),
            contention_size: self.contention_size,
        };
        c.validate()?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::units::MIB;

    #[test]
    fn defaults_are_valid_and_sized() {
        let c = GpuConfig::default();
        c.validate().unwrap();
        let (quick, full) = (&bench_core::effort::QUICK, &bench_core::effort::FULL);
        assert_eq!(c.max_size(full), GIB);
        assert_eq!(
            c.max_size(quick),
            GIB,
            "the headline size does not change with --quick"
        );
        assert_eq!(c.sizes(full).len(), 10); // 4K 16K ... 1G
        assert_eq!(
            c.sizes(quick),
            [4 << 10, 64 << 10, MIB, 16 * MIB, 256 * MIB, GIB]
        );
        assert_eq!(c.stream_counts(), vec![1, 2, 4, 8]);
        assert_eq!(c.contention_size(quick), c.contention_size(full));
        assert_eq!(c.target_bytes(quick, 1), GIB);
        assert_eq!(c.target_bytes(full, 1), GIB);
        assert_eq!(c.target_bytes(quick, 32), 32 * 64 * MIB);
    }

    #[test]
    fn bad_values_are_errors_that_name_the_option() {
        let bad = [
            GpuConfig {
                max_size: Some(100),
                ..Default::default()
            },
            GpuConfig {
                max_size: Some(MAX_SIZE + 1),
                ..Default::default()
            },
            GpuConfig {
                streams: Some(vec![]),
                ..Default::default()
            },
            GpuConfig {
                streams: Some(vec![2, 0]),
                ..Default::default()
            },
            GpuConfig {
                streams: Some(vec![MAX_STREAMS + 1]),
                ..Default::default()
            },
            GpuConfig {
                contention_size: Some(1),
                ..Default::default()
            },
        ];
        for c in bad {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.starts_with("--"), "{e}");
        }
    }

    #[test]
    fn streams_always_include_the_single_stream_reference() {
        let c = GpuConfig {
            streams: Some(vec![8, 2, 2]),
            ..Default::default()
        };
        c.validate().unwrap();
        assert_eq!(c.stream_counts(), vec![1, 2, 8]);
    }

    #[test]
    fn device_out_of_range_is_an_error() {
        let c = GpuConfig {
            device: Some(2),
            ..Default::default()
        };
        assert!(c.validate_device(3).is_ok());
        let e = c.validate_device(2).unwrap_err().to_string();
        assert!(e.contains("--device 2") && e.contains("2 GPU"), "{e}");
    }

    #[test]
    fn max_size_is_always_the_last_size() {
        let c = GpuConfig {
            max_size: Some(3 * MIB),
            ..Default::default()
        };
        let s = c.sizes(&bench_core::effort::FULL);
        assert_eq!(s.first(), Some(&MIN_SIZE));
        assert_eq!(s.last(), Some(&(3 * MIB)));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn bad_options_are_errors() {
        let a = GpuArgs {
            device: None,
            max_size: Some(100),
            streams: None,
            contention_size: None,
            parts: None,
        };
        assert!(a.config().unwrap_err().to_string().contains("--max-size"));
        let a = GpuArgs {
            streams: Some(vec![0]),
            max_size: None,
            ..a
        };
        assert!(a.config().unwrap_err().to_string().contains("--streams"));
    }

    #[test]
    fn parts_choose_what_runs_and_none_runs_all() {
        let all = GpuConfig::default();
        assert!(GpuPart::ALL.iter().all(|&p| all.runs(p)));
        let some = GpuConfig {
            parts: Some(vec![GpuPart::Host, GpuPart::Contention]),
            ..Default::default()
        };
        assert!(some.runs(GpuPart::Host) && some.runs(GpuPart::Contention));
        assert!(!some.runs(GpuPart::Sweep) && !some.runs(GpuPart::WithCpu));
    }
}
