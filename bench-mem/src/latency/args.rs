//! The command-line options of `mem latency` and how they become a [`LatencyBench`].

use super::*;

/// Idle load latency by a pointer chase no prefetcher can learn, over a sweep of touched
/// working sets from 4 KiB to the DRAM plateau.
///
/// Every line of each --slot bytes touched, one per phase of the lap, at a random 8-byte
/// word (the two lines of each 128-byte pair half a lap apart), slots in random order
/// inside 256 KiB TLB-local blocks, one full lap before timing. Sizes are touched bytes
/// (distinct lines x 64; the memory spanned is the size, or size x slot / 64 with a
/// one-line-per-slot --layout). The sweep stops
/// where latency has reached a cold lap's (every line flushed) and stayed flat over two
/// doublings; the DRAM point is 4 x that size (bounded by 4 x the sysfs LLC and the
/// available memory). There a prefetch self-check compares chains built differently, and
/// a full-random chase gives the page-walk cost.
#[derive(Debug, Clone, clap::Args)]
pub struct LatencyArgs {
    /// Bytes of memory per slot (multichase's -s stride): the phased layout visits each of
    /// its lines in a phase of its own, the one-line layouts one line of it. 256 by
    /// default; phased and randomized need a multiple of 128. 128 reads low on CPUs that
    /// fetch beyond the 128-byte pair (about 8% on Zen 4 with one line per slot); 512 and
    /// up pay more page walks per load on 4 KiB pages.
    #[arg(long, value_name = "SIZE", visible_alias = "stride", default_value = "256", value_parser = parse_positive_size)]
    pub slot: usize,
    /// Where the elements sit in their slot: phased (every line, one per phase, at random
    /// words: the chain spans what it touches), randomized (one random line and word per
    /// slot: spans slot / 64 times what it touches), or, for comparisons only, aligned
    /// (offset 0 of every slot: the classic chase) and phased-aligned (every line in
    /// order at offset 0), which some prefetchers learn.
    #[arg(long, value_enum, default_value_t = LayoutArg::Phased)]
    pub layout: LayoutArg,
    /// Skip the prefetch self-check at the DRAM point (differently built chains compared).
    #[arg(long)]
    pub no_prefetch_check: bool,
    /// Chase order: tlb-local (blocks of --tlb-locality visited in random order, lines in
    /// random order within; MLC/multichase idle latency) or random (page walks included).
    #[arg(long, value_enum, default_value_t = OrderArg::TlbLocal)]
    pub order: OrderArg,
    /// Block size of the tlb-local order (multichase -T; default 256K, 64 pages); not with
    /// --order random.
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub tlb_locality: Option<usize>,
    /// Smallest working set (touched bytes: distinct 64-byte lines x 64; default 4 KiB,
    /// or --max-size when that is smaller); not with --sizes.
    #[arg(long, value_name = "SIZE", conflicts_with = "sizes", value_parser = parse_positive_size)]
    pub min_size: Option<usize>,
    /// Largest working set, touched bytes (default: the sweep stops at the DRAM plateau,
    /// at most 4 x the sysfs LLC and a quarter of the available memory); not with --sizes.
    #[arg(long, value_name = "SIZE", conflicts_with = "sizes", value_parser = parse_positive_size)]
    pub max_size: Option<usize>,
    /// Explicit working-set sizes (touched bytes, comma-separated) instead of the sweep;
    /// memory spanned = size x slot / 64.
    #[arg(long, value_name = "SIZE", value_delimiter = ',', value_parser = parse_positive_size)]
    pub sizes: Option<Vec<usize>>,
}

/// `--layout` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    /// Every line of each slot, one per phase, at random words (default).
    Phased,
    /// Every line of each slot, one per phase, in order at offset 0 (prefetchers may
    /// learn it).
    PhasedAligned,
    /// A random line and 8-byte word of each slot.
    Randomized,
    /// Offset 0 of every slot (the classic chase; prefetchers may learn it).
    Aligned,
}

/// `--order` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    /// Random blocks of --tlb-locality bytes, random lines within a block.
    TlbLocal,
    /// One random cycle over all lines.
    Random,
}

impl LatencyArgs {
    /// The benchmark of these options, validated.
    pub fn bench(&self) -> Result<LatencyBench, LatencyParamError> {
        let b = LatencyBench {
            layout: match self.layout {
                LayoutArg::Phased => ChainLayout::phased(self.slot),
                LayoutArg::PhasedAligned => ChainLayout::phased(self.slot).twin(),
                LayoutArg::Randomized => ChainLayout::randomized(self.slot),
                LayoutArg::Aligned => ChainLayout::aligned(self.slot),
            },
            order: match (self.order, self.tlb_locality) {
                (OrderArg::Random, Some(_)) => {
                    return Err(LatencyParamError::LocalityWithoutBlocks)
                }
                (OrderArg::Random, None) => ChaseOrder::Random,
                (OrderArg::TlbLocal, locality) => ChaseOrder::TlbLocal {
                    locality: locality.unwrap_or(bench_core::chase::DEFAULT_TLB_LOCALITY_BYTES),
                },
            },
            // The default lower bound never contradicts the user's upper bound.
            min_size: self.min_size.unwrap_or_else(|| {
                LatencyBench::default()
                    .min_size
                    .min(self.max_size.unwrap_or(usize::MAX))
            }),
            max_size: self.max_size,
            sizes: self.sizes.clone(),
            random_at_max: true,
            prefetch_check: !self.no_prefetch_check,
        };
        b.validate()?;
        Ok(b)
    }
}

impl Setup for LatencyArgs {
    fn plan(&self, _opts: &Options) -> Result<Planned, BoxError> {
        Ok(Planned::one(self.bench()?))
    }
}
