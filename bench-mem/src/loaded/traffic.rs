//! The traffic of `mem.loaded`'s injecting threads: what one chunk loads and stores
//! ([`Lines`]), the named mixes of `--mix` ([`Mix`]) and the read shares of `--read-pct`
//! ([`Lines::for_share`]), both one [`Traffic`], and the loop that streams it
//! ([`traffic`]).
//!
//! **Read share.** A chunk loads `loaded` lines, then stores `temporal` lines with
//! temporal vector stores, then `nt` lines with non-temporal (streaming) stores + sfence.
//! A temporal store reads its line first (the read for ownership), a streaming store does
//! not, so the chunk's memory traffic is `loaded + temporal` lines read and
//! `temporal + nt` lines written: the read share is
//! `(loaded + temporal) / (loaded + 2 temporal + nt)`. Every part is a multiple of four
//! lines (256 B, one unrolled step of the widest vector kernel, so no scalar tail), and
//! every line is the same number of vector instructions, so the share holds for bytes
//! and for instructions alike (a store instruction's RFO counted as a read).
//!
//! With temporal stores only, the share is `(r + t) / (r + 2t)`, at least 50 %: below
//! that, some stores must be streaming. [`Lines::for_share`] takes loads and temporal
//! stores for shares of 50 % and more (`r : t = (2p - 100) : (100 - p)`, 100 % all loads,
//! 50 % all temporal stores) and temporal and streaming stores below
//! (`t : n = p : (100 - 2p)`, 0 % all streaming stores), a path without jumps from
//! all reads to all non-temporal writes. Both ratios are exact for every integer share
//! p: the chunk is that ratio reduced, times four lines, scaled to about 64 lines
//! (44 .. 396 lines; 98 % is 192 loaded + 4 stored lines, 75 % the 40 + 20 of `2r1w`).

use crate::kernels;

/// Bytes of a cache line.
pub const LINE: usize = 64;
/// Lines of the chunk the injection delay is counted against (4 KiB).
const PACE_LINES: usize = 64;
/// Lines of one unrolled step of the widest vector kernel (4 x 64 B).
const STEP_LINES: usize = 4;
/// The byte the traffic stores.
pub const STORE_BYTE: u8 = 0x5a;

/// Cache lines of one chunk: loaded, then stored with temporal stores, then stored with
/// non-temporal stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lines {
    /// Lines loaded (vector loads).
    pub loaded: usize,
    /// Lines stored whole with temporal vector stores (each with its RFO read).
    pub temporal: usize,
    /// Lines stored whole with non-temporal stores (no RFO; sfence after the chunk).
    pub nt: usize,
}

impl Lines {
    /// The chunk of read share `pct` (0..=100; larger values are taken as 100): exact
    /// for every integer, see the module doc.
    pub fn for_share(pct: u32) -> Lines {
        let p = pct.min(100) as usize;
        // (loaded, temporal, nt) in the share's ratio, not yet reduced.
        let (a, b, c) = if p >= 50 {
            (2 * p - 100, 100 - p, 0)
        } else {
            (0, p, 100 - 2 * p)
        };
        let g = gcd(gcd(a, b), c);
        let units = (a + b + c) / g;
        // Steps of four lines, about 64 lines in all.
        let k = STEP_LINES * ((PACE_LINES / STEP_LINES + units / 2) / units).max(1);
        Lines {
            loaded: a / g * k,
            temporal: b / g * k,
            nt: c / g * k,
        }
    }

    /// Lines stored (temporal and non-temporal).
    pub fn stored(self) -> usize {
        self.temporal + self.nt
    }

    /// Lines of the chunk.
    pub fn total(self) -> usize {
        self.loaded + self.stored()
    }

    /// Bytes of the chunk.
    pub fn chunk_bytes(self) -> usize {
        self.total() * LINE
    }

    /// Memory traffic of one chunk in lines: (read, written). A temporal store reads its
    /// line (RFO) and writes it back.
    pub fn traffic_lines(self) -> (usize, usize) {
        (self.loaded + self.temporal, self.stored())
    }

    /// The exact read share of the memory traffic, in percent.
    pub fn read_share(self) -> f64 {
        let (r, w) = self.traffic_lines();
        if r + w == 0 {
            return 0.0;
        }
        100.0 * r as f64 / (r + w) as f64
    }

    /// The read share rounded to an integer percentage (the `read_pct` parameter).
    pub fn read_pct(self) -> u32 {
        self.read_share().round() as u32
    }

    /// Load : store instructions (and bytes), reduced (`"3:1"`).
    pub fn ratio(self) -> String {
        let (r, w) = (self.loaded, self.stored());
        let g = gcd(r, w).max(1);
        format!("{}:{}", r / g, w / g)
    }

    /// Pause instructions after a chunk for an injection delay of `delay` pauses per
    /// 64 lines (4 KiB), whole 64-line parts rounded, at least one: a chunk of up to
    /// 95 lines takes `delay`, one of 196 lines `3 x delay`.
    pub fn pauses(self, delay: u32) -> u64 {
        let parts = ((self.total() + PACE_LINES / 2) / PACE_LINES).max(1);
        delay as u64 * parts as u64
    }

    /// What one chunk does, for the method string.
    pub fn chunk_text(self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.loaded > 0 {
            parts.push(format!("{} lines loaded (vector loads)", self.loaded));
        }
        for (n, how) in [
            (self.temporal, "stored whole (temporal vector stores)"),
            (
                self.nt,
                "stored with non-temporal vector stores, then sfence",
            ),
        ] {
            if n > 0 {
                let which = if parts.is_empty() { "" } else { "the next " };
                parts.push(format!("{which}{n} lines {how}"));
            }
        }
        parts.join(", then ")
    }

    /// What a store is, for the output.
    pub fn store_kind(self) -> &'static str {
        match (self.temporal > 0, self.nt > 0) {
            (false, false) => "none",
            (false, true) => "non-temporal (streaming) stores + sfence per chunk",
            (true, false) => "temporal vector stores (storeu)",
            (true, true) => {
                "temporal vector stores (storeu), then non-temporal (streaming) stores + sfence per chunk"
            }
        }
    }
}

/// The named traffic mixes (also the `--mix` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Mix {
    /// All loads (100 % reads).
    Read,
    /// 3 loads : 1 temporal store (80 % reads with the store's RFO; like MLC -W3).
    #[value(name = "3r1w")]
    R3W1,
    /// 2 loads : 1 temporal store (75 % reads; like MLC -W2).
    #[value(name = "2r1w")]
    R2W1,
    /// 1 load : 1 temporal store (67 % reads; like MLC -W5). `read-write`, the name of the
    /// copy traffic it replaces, is accepted for it.
    #[value(name = "1r1w", alias = "read-write")]
    R1W1,
    /// All non-temporal stores + sfence (0 % reads; like MLC -W6).
    #[value(name = "nt-write")]
    NtWrite,
}

impl Mix {
    /// Every mix, in the order measured by default.
    pub const ALL: [Mix; 5] = [Mix::Read, Mix::R3W1, Mix::R2W1, Mix::R1W1, Mix::NtWrite];

    /// Name in ids, in the `mix` parameter and as given to `--mix`.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::R3W1 => "3r1w",
            Mix::R2W1 => "2r1w",
            Mix::R1W1 => "1r1w",
            Mix::NtWrite => "nt-write",
        }
    }

    /// The part of the params keys naming the mix (`None` for reads, whose keys carry no
    /// mix: `loaded_lat_max_bw_gbs`).
    pub fn key_part(self) -> Option<&'static str> {
        match self {
            Mix::Read => None,
            Mix::R3W1 => Some("3r1w"),
            Mix::R2W1 => Some("2r1w"),
            Mix::R1W1 => Some("1r1w"),
            Mix::NtWrite => Some("nt_write"),
        }
    }

    /// The mix's chunk: each part a multiple of 4 lines, at most 64 lines (4 KiB). Read,
    /// 3r1w, 2r1w and nt-write are the chunks of their shares (100, 80, 75, 0 %,
    /// [`Lines::for_share`]); 1r1w is 1:1, 66.7 %, no integer share.
    pub fn lines(self) -> Lines {
        let (loaded, temporal, nt) = match self {
            Mix::Read => (64, 0, 0),
            Mix::R3W1 => (48, 16, 0),
            Mix::R2W1 => (40, 20, 0),
            Mix::R1W1 => (32, 32, 0),
            Mix::NtWrite => (0, 0, 64),
        };
        Lines {
            loaded,
            temporal,
            nt,
        }
    }

    /// Read share of the memory traffic in percent, rounded (see [`Lines::read_share`]).
    pub fn read_pct(self) -> u32 {
        self.lines().read_pct()
    }
}

/// One curve's traffic: a chunk, named by the mix it is, else by its read share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Traffic {
    /// The chunk.
    pub lines: Lines,
}

impl Traffic {
    /// A named mix's traffic.
    pub fn mix(mix: Mix) -> Traffic {
        Traffic { lines: mix.lines() }
    }

    /// The traffic of read share `pct` (0..=100): a named mix where its chunk is the
    /// share's (100 `read`, 80 `3r1w`, 75 `2r1w`, 0 `nt-write`).
    pub fn share(pct: u32) -> Traffic {
        Traffic {
            lines: Lines::for_share(pct),
        }
    }

    /// The named mix with this chunk, if any.
    pub fn named(self) -> Option<Mix> {
        Mix::ALL.into_iter().find(|m| m.lines() == self.lines)
    }

    /// Name in ids and the `mix` parameter: the mix's name, else `share<P>` with P the
    /// read share (`share98`).
    pub fn name(self) -> String {
        match self.named() {
            Some(m) => m.name().to_string(),
            None => format!("share{}", self.lines.read_pct()),
        }
    }

    /// The part of the params keys naming the traffic: keys come from named mixes only
    /// (`None` for others and for `read`: see [`Traffic::has_keys`]).
    pub fn key_part(self) -> Option<&'static str> {
        self.named().and_then(Mix::key_part)
    }

    /// Whether the curve gives `loaded_lat_*` keys (it is one of the named mixes).
    pub fn has_keys(self) -> bool {
        self.named().is_some()
    }

    /// The read share, rounded (the `read_pct` parameter).
    pub fn read_pct(self) -> u32 {
        self.lines.read_pct()
    }
}

/// Greatest common divisor (`gcd(0, 0) = 0`).
pub fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Bytes a traffic thread issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Issued {
    /// Bytes loaded.
    pub loaded: u64,
    /// Bytes stored.
    pub stored: u64,
    /// Checksum of what was loaded (for `black_box`).
    pub acc: u64,
}

impl Issued {
    /// Adds what another stretch issued.
    pub fn add(&mut self, o: Issued) {
        self.loaded += o.loaded;
        self.stored += o.stored;
        self.acc ^= o.acc;
    }
}

/// One traffic thread's stream: chunks of `lines` through `buf` in turn (wrapping before
/// a chunk would pass its end), [`Lines::pauses`] of `delay` after each chunk, while
/// `go()` says so (asked before each chunk). `buf` must hold at least one chunk; `isa`
/// must be usable.
pub fn traffic(
    buf: &mut [u8],
    lines: Lines,
    isa: kernels::Isa,
    delay: u32,
    mut go: impl FnMut() -> bool,
) -> Issued {
    let mut off = 0usize;
    let mut out = Issued::default();
    while go() {
        out.add(traffic_chunks(buf, lines, isa, delay, &mut off, 1));
    }
    out
}

/// `n` chunks of the stream of [`traffic`], from the chunk at `*off` (which moves on,
/// wrapping before a chunk would pass the buffer's end).
pub fn traffic_chunks(
    buf: &mut [u8],
    lines: Lines,
    isa: kernels::Isa,
    delay: u32,
    off: &mut usize,
    n: usize,
) -> Issued {
    let chunk = lines.chunk_bytes();
    let (rb, tb) = (lines.loaded * LINE, lines.temporal * LINE);
    assert!(
        chunk > 0 && buf.len() >= chunk,
        "traffic buffer smaller than one chunk"
    );
    let pauses = lines.pauses(delay);
    let mut out = Issued::default();
    for _ in 0..n {
        if *off + chunk > buf.len() {
            *off = 0;
        }
        let (ld, st) = buf[*off..*off + chunk].split_at_mut(rb);
        let (tmp, nt) = st.split_at_mut(tb);
        if !ld.is_empty() {
            out.acc ^= kernels::read(isa, ld);
        }
        if !tmp.is_empty() {
            kernels::write(isa, false, tmp, STORE_BYTE);
        }
        if !nt.is_empty() {
            kernels::write(isa, true, nt, STORE_BYTE);
        }
        out.loaded += rb as u64;
        out.stored += (chunk - rb) as u64;
        *off += chunk;
        for _ in 0..pauses {
            std::hint::spin_loop();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read share in percent of traffic counted in `unit`-byte instructions: loads plus
    /// one RFO read per temporal store instruction, over that plus store instructions.
    fn share_in(l: Lines, unit: usize) -> (usize, usize) {
        let per_line = LINE / unit;
        let (ld, tmp, nt) = (l.loaded * per_line, l.temporal * per_line, l.nt * per_line);
        (ld + tmp, ld + 2 * tmp + nt)
    }

    #[test]
    fn every_whole_share_is_exact_in_bytes_and_instructions() {
        for p in 0..=100u32 {
            let l = Lines::for_share(p);
            // Bytes: reads (loads + RFO) : all traffic is exactly p : 100.
            let (r, w) = l.traffic_lines();
            assert_eq!(100 * r, p as usize * (r + w), "{p}: {l:?}");
            assert_eq!(l.read_pct(), p);
            assert!((l.read_share() - p as f64).abs() < 1e-9);
            // Instructions of every vector width (and 8-byte scalar words): whole unrolled
            // steps, no scalar tail, the same share.
            for width in [8, 16, 32, 64] {
                let (reads, all) = share_in(l, width);
                assert_eq!(100 * reads, p as usize * all, "{p} at {width} B");
            }
            for part in [l.loaded, l.temporal, l.nt] {
                assert_eq!(part % STEP_LINES, 0, "{p}: {l:?}");
            }
            assert!((44..=396).contains(&l.total()), "{p}: {} lines", l.total());
            // Temporal stores with loads from 50 %, with streaming stores below.
            if p >= 50 {
                assert_eq!(l.nt, 0, "{p}");
            } else {
                assert_eq!(l.loaded, 0, "{p}");
            }
        }
        assert_eq!(
            Lines::for_share(98),
            Lines {
                loaded: 192,
                temporal: 4,
                nt: 0
            }
        );
        assert_eq!(Lines::for_share(101), Lines::for_share(100));
    }

    #[test]
    fn named_mixes_are_shares_where_a_share_is_theirs() {
        for (p, m) in [
            (100, Mix::Read),
            (80, Mix::R3W1),
            (75, Mix::R2W1),
            (0, Mix::NtWrite),
        ] {
            assert_eq!(Traffic::share(p).named(), Some(m));
            assert_eq!(Traffic::share(p).name(), m.name());
        }
        // 1r1w is 66.7 %, recorded as 67; share 67 is other traffic.
        assert_eq!(Mix::R1W1.read_pct(), 67);
        assert_eq!(Traffic::share(67).named(), None);
        assert_eq!(Traffic::share(67).name(), "share67");
        assert!(Traffic::share(67).key_part().is_none() && !Traffic::share(67).has_keys());
        assert!(Traffic::mix(Mix::Read).has_keys());
        // Every even share outside the named ones has its own name.
        let names: std::collections::BTreeSet<String> = (0..=100)
            .step_by(2)
            .map(|p| Traffic::share(p).name())
            .collect();
        assert_eq!(names.len(), 51);
    }

    #[test]
    fn pauses_scale_with_4_kib_parts_and_chunks_say_what_they_do() {
        assert_eq!(Mix::Read.lines().pauses(10), 10);
        assert_eq!(Mix::R2W1.lines().pauses(10), 10);
        assert_eq!(Lines::for_share(98).pauses(10), 30);
        assert_eq!(Lines::for_share(98).pauses(0), 0);
        assert_eq!(
            Mix::R3W1.lines().chunk_text(),
            "48 lines loaded (vector loads), then the next 16 lines stored whole (temporal vector stores)"
        );
        assert_eq!(
            Mix::NtWrite.lines().chunk_text(),
            "64 lines stored with non-temporal vector stores, then sfence"
        );
        let l = Lines::for_share(20);
        assert!(l.temporal > 0 && l.nt > 0);
        assert_eq!(
            l.chunk_text(),
            format!(
                "{} lines stored whole (temporal vector stores), then the next {} lines stored with non-temporal vector stores, then sfence",
                l.temporal, l.nt
            )
        );
        assert!(l.store_kind().contains("non-temporal") && l.store_kind().contains("storeu"));
        assert_eq!(l.ratio(), "0:1");
    }
}
