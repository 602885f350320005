//! The registry's entries, grouped by the benchmark that produces them (the order of
//! `docs/params.md`'s key reference).

use super::{KeyDef, Origin, Unit, Values, Var};

use Unit::{
    Bytes, Count, Factor, GigabytesPerSecond as Gbs, MegamessagesPerSecond as Mps,
    Nanoseconds as Ns, Ranges, Ratio,
};

const LAT: &str = "cxlchar mem latency";
const LAT_FAR: &str =
    "cxlchar mem latency --target node:N (a memory-only node) or --target dax:/dev/daxX.Y";
const BW: &str = "cxlchar mem bandwidth";
const BW_FAR: &str = "cxlchar mem bandwidth --target node:N or --target dax:/dev/daxX.Y";
const CT: &str = "cxlchar mem copy-threshold";
const HMAT_LAT: &str = "cxlchar mem latency --target node:N (on a machine whose firmware advertises HMAT/CDAT figures)";
const HMAT_BW: &str = "cxlchar mem bandwidth --target node:N (on a machine whose firmware advertises HMAT/CDAT figures)";
const INTERLEAVE_BW: &str = "cxlchar mem bandwidth --target anon --target interleave:A=wA,B=wB";
const AO: &str = "cxlchar mem alltoall-order";
const LOADED: &str = "cxlchar mem loaded";
const LOADED_OLD: &str =
    "cxlchar mem loaded of earlier versions, before the 1r1w mixes (no longer written; the 1r1w keys replace it)";
const ATOMICS: &str = "cxlchar pool atomics";
const ATOMICS_FAR: &str =
    "cxlchar pool atomics --target node:N (a memory-only node) or --target dax:/dev/daxX.Y";
const C2C: &str = "cxlchar pool c2c";
const FLUSH: &str = "cxlchar pool flush";
const FLUSH_BW: &str = "cxlchar pool flush-bw";
const FLUSH_BW_FAR: &str =
    "cxlchar pool flush-bw --target dax:/dev/daxX.Y (or node:N, a memory-only node)";
const MSG: &str = "cxlchar pool msg --target dax:/dev/daxX.Y (shared pool, two processes)";
const MSG_SCALE: &str = "cxlchar pool msg-scale (add --pool dax:/dev/daxX.Y for a CXL pool, --noncoherent for the _noncoherent keys)";
const MMIO: &str = "cxlchar pcie mmio --bar pci:DOMAIN:BUS:DEV.FN/N";
const POST_PARTS: &str = "cxlchar pcie post-parts";
const POST_PARTS_BAR: &str = "cxlchar pcie post-parts --bar pci:DOMAIN:BUS:DEV.FN/N --allow-write";
const VERBS: &str = "cxlchar verbs (needs an RDMA device; build with --features verbs)";
const GPU: &str = "cxlchar gpu (needs a CUDA GPU)";
const AGENTS: &str = "cxlchar mem agents";
const AGENTS_FAR: &str =
    "cxlchar mem agents --target node:N (a memory-only node) or --target dax:/dev/daxX.Y";
const AGENTS_SPREAD: &str =
    "cxlchar mem agents --spread node:A,node:B (two memory targets; default: two far-memory nodes)";
const INTERFERENCE: &str = "cxlchar mem interference (two targets or more: --target anon --target node:N, or a GPU (its copies are the `gpu` column); part of `cxlchar all` with two targets or a GPU)";
const MATRIX: &str =
    "cxlchar mem matrix (part of `cxlchar all` on a machine with more than one NUMA node)";
const GPU_POOL: &str =
    "cxlchar gpu --target node:N or dax:/dev/daxX.Y (a CUDA GPU and a far-memory target)";
const OSU: &str = "osu_latency / osu_bw (not measured by cxlchar; supply with --what-if KEY=VALUE)";
const PROFILE: &str =
    "an MPI/UCX profile (not measured by cxlchar; supply with --what-if KEY=VALUE)";
const POST_PROFILE: &str = "a cycle-timer profile of the provider's post path (seed 004 Sec. 4.1: timers around the regions of uct_ep_put_short); not measured by cxlchar, whose verbs benchmark measures the whole PIO + inline post as llp_post_inline_ns; supply with --what-if KEY=VALUE";
const WIRE: &str = "a PCIe analyzer trace of a ping-pong (seed 004 Sec. 4.3: Wire from the downstream ping to the upstream completion, Switch as the difference with and without a switch); not measured by cxlchar; supply with --what-if KEY=VALUE";
const RC_TO_MEM: &str = "a PCIe analyzer trace of a ping-pong (seed 004 Sec. 4.3: the pong-to-ping gap minus 2 x PCIe, LLP_prog and LLP_post); not measured by cxlchar; supply with --what-if KEY=VALUE";
const PCIE_ONE_WAY: &str = "a PCIe analyzer at the NIC's link (seed 004 Sec. 4.3: the NIC's 64 B MWr to the root complex's ACK DLLP, halved); not measured by cxlchar, whose pcie_rtt_ns / 2 (a CPU uncached-read round trip, cxlchar pcie mmio) the latency models use instead, with a note; supply with --what-if KEY=VALUE";
const ENV_L2: &str = "read from environment.topology.caches (an L2 entry) of the params file; supply with --what-if KEY=VALUE";

const T0: &str = "000-transfer";
const TT: &str = "000-ext-stream";
const A0: &str = "000-access";
const N1: &str = "001-nt-threshold";
const C3: &str = "003-contention";
const F3: &str = "003-latency-factor";
const P4: &str = "004-llp-post";
const I4: &str = "004-injection";
const IM4: &str = "004-injection-mpi";
const L4: &str = "004-latency";
const E4: &str = "004-latency-e2e";

/// Models that read the message baseline of seed 000 (network: MPI, else verbs; with
/// `--baseline shm`, the pool's messaging).
const MSG_PATH: &[&str] = &[T0, A0, TT];
/// Models that read LLP_post (its total or its components).
const LLP_POST: &[&str] = &[P4, I4, IM4, L4, E4];
/// Models that read the small-message latency terms of seed 004.
const LATENCY: &[&str] = &[L4, E4];

/// A measured key of `benchmark`.
const fn key(
    name: &'static str,
    unit: Unit,
    benchmark: &'static str,
    command: &'static str,
    meaning: &'static str,
    method: &'static str,
    papers: &'static str,
) -> KeyDef {
    KeyDef {
        name,
        vars: &[],
        unit,
        meaning,
        method,
        origin: Origin::Measured,
        benchmark,
        command,
        far: None,
        papers,
        models: &[],
    }
}

/// A model input that cxlchar does not measure.
const fn external(
    name: &'static str,
    unit: Unit,
    command: &'static str,
    meaning: &'static str,
    papers: &'static str,
    models: &'static [&'static str],
) -> KeyDef {
    KeyDef {
        origin: Origin::External,
        models,
        ..key(
            name,
            unit,
            "external",
            command,
            meaning,
            "supplied with --what-if",
            papers,
        )
    }
}

impl KeyDef {
    const fn far(self, far: &'static str) -> KeyDef {
        KeyDef {
            far: Some(far),
            ..self
        }
    }
    const fn of(self, local: &'static str) -> KeyDef {
        KeyDef {
            origin: Origin::Far { local },
            ..self
        }
    }
    const fn ratio(self, num: &'static str, den: &'static str) -> KeyDef {
        KeyDef {
            origin: Origin::Ratio { num, den },
            ..self
        }
    }
    const fn vars(self, vars: &'static [Var]) -> KeyDef {
        KeyDef { vars, ..self }
    }
    const fn models(self, models: &'static [&'static str]) -> KeyDef {
        KeyDef { models, ..self }
    }
}

const DIR: Var = Var {
    name: "dir",
    values: Values::OneOf(&["h2d", "d2h"]),
    meaning: "the copy direction (h2d: memory -> GPU, a DMA read; d2h: GPU -> memory, a DMA write)",
};
const AGENT_DIR: Var = Var {
    name: "dir",
    values: Values::OneOf(&["write", "read"]),
    meaning: "what each agent's transfer does (write: its private local buffer copied into the target, a rank publishing its chunk into the pool, as GPU -> pool; read: the target copied into its private buffer, as pool -> GPU)",
};
const LOADED_MIX: Var = Var {
    name: "mix",
    values: Values::OneOf(&["3r1w", "2r1w", "1r1w", "nt_write"]),
    meaning: "the traffic mix (`--mix`): loads : stores by instruction count 3:1, 2:1, 1:1 with temporal stores (80, 75, 67 % reads counting each store's RFO), or all non-temporal stores (`nt-write`, 0 % reads)",
};
const XTIER_VICTIM: Var = Var {
    name: "victim",
    values: Values::OneOf(&["dram", "far"]),
    meaning: "the tier of the victim's target (dram: anon, thp, hugetlb, a node with CPUs; far: a memory-only node, a dax device, CXL)",
};
const XTIER_AGGRESSOR: Var = Var {
    name: "aggressor",
    values: Values::OneOf(&["dram", "far"]),
    meaning: "the tier of the target the aggressor CPUs stream (dram, far as for the victim; the GPU as aggressor has its own keys, `xtier_{victim}_under_gpu_*`)",
};
const AGENTS_K: Var = Var {
    name: "k",
    values: Values::Count,
    meaning:
        "the number of concurrent agents (pinned threads on distinct CPUs, k >= 1): a rung of the thread ladder (1, 2, 4, ... and each level of the machine), or `--agents`",
};
const K: Var = Var {
    name: "k",
    values: Values::Count,
    meaning: "the number of concurrent copies (k > 1, `--streams`)",
};
const FLUSH_METHOD: Var = Var {
    name: "method",
    values: Values::OneOf(&["clflushopt", "clflush", "clwb", "civac", "cvac"]),
    meaning: "the flush method (x86_64: clflushopt + sfence, clflush, clwb + sfence; AArch64: `civac` = dc civac + dsb sy, the clflushopt analogue, `cvac` = dc cvac + dsb sy, the clwb analogue)",
};
const C2C_KIND: Var = Var {
    name: "kind",
    values: Values::OneOf(&["cas", "flag"]),
    meaning:
        "the ping-pong: `cas` (compare-and-swap on both sides) or `flag` (plain loads and stores)",
};
const C2C_CLASS: Var = Var {
    name: "class",
    values: Values::OneOf(&["same_llc", "cross_llc", "cross_socket"]),
    meaning: "what the two CPUs share: the last-level cache, one NUMA node but two LLCs, nothing (two sockets)",
};
const THREADS: Var = Var {
    name: "N",
    values: Values::Count,
    meaning: "the thread count (a rung of the thread ladder, or `--threads`)",
};

const MODE: Var = Var {
    name: "mode",
    values: Values::OneOf(&["", "_noncoherent"]),
    meaning: "the protocol: empty = coherent (plain loads and stores), `_noncoherent` = the writer flushes + fences, the reader invalidates (--noncoherent)",
};
const PAIRS: Var = Var {
    name: "P",
    values: Values::Count,
    meaning: "the number of sender/receiver pairs (2P pinned threads): half of a rung of the thread ladder",
};
const KIB: Var = Var {
    name: "kib",
    values: Values::Count,
    meaning: "the cell size in KiB (header + payload, `--cells`)",
};

/// Every key cxlchar produces, derives or reads.
pub static REGISTRY: &[KeyDef] = &[
    // ---------------------------------------------------------------- mem.latency
    key("l1_lat_ns", Ns, "mem.latency", LAT, "L1D load-to-use latency", "median of sweep p50s with working set <= L1/2", "000 (data access: cache hits)"),
    key("l2_lat_ns", Ns, "mem.latency", LAT, "L2 load latency", "median of sweep p50s in [2 x L1, L2/2]", "000"),
    key("l3_lat_ns", Ns, "mem.latency", LAT, "L3 load latency", "median of sweep p50s in [2 x L2, L3/2] below the DRAM plateau and under half the cold lap (absent, with a note, when the chase reaches DRAM before that window)", "000"),
    key("l4_lat_ns", Ns, "mem.latency", LAT, "L4 load latency (machines with a fourth cache level)", "median of sweep p50s in [2 x L3, L4/2]", ""),
    key("mem_lat_ns", Ns, "mem.latency", LAT, "idle DRAM load latency (MEM_LAT)", "p50 of the default chain (tlb-local order, every line of 256-byte slots, one per phase, at random offsets) at the DRAM point, 4 x the caches the CPU can fill, confirmed by the DRAM check against a larger working set (`dram_check`); the slower chain when the prefetch self-check disagrees", "000 (MEM_LAT, local access formula); 002 Table 1 \"Main Memory\" latency (100 ns, MLC); 003 Table 1 local DRAM latency (MLC)").far("cxl_lat_ns").models(&[A0, TT, F3]),
    key("mem_lat_random_ns", Ns, "mem.latency", LAT, "DRAM latency with a page walk on most loads", "p50 of a full-random chase at the DRAM point", "000 (upper bound of access cost)").far("cxl_lat_random_ns"),
    key("page_walk_ns", Ns, "mem.latency", LAT, "added cost of TLB misses per load", "`mem_lat_random_ns - mem_lat_ns` at the DRAM point", ""),
    key("cxl_lat_ns", Ns, "mem.latency", LAT_FAR, "idle far-memory (CXL) load latency (CXL_LAT)", "`mem_lat_ns` measured on a memory-only NUMA node or a dax device", "000 (CXL_LAT, pool access formula); 002 Table 1 \"CXL Memory Sharing (with caching; no cache flushing)\" latency (790 ns, MLC); 003 Table 1 CXL memory pool latency (MLC)").of("mem_lat_ns").models(&[A0, TT, F3]),
    key("cxl_lat_random_ns", Ns, "mem.latency", LAT_FAR, "far-memory latency with page walks", "`mem_lat_random_ns` on the far target", "000").of("mem_lat_random_ns"),
    key("cxl_lat_factor", Factor, "mem.latency", LAT_FAR, "far/local latency factor", "`cxl_lat_ns / mem_lat_ns`, derived by the runner", "000 (latency factor of pool accesses)").ratio("cxl_lat_ns", "mem_lat_ns"),
    // ---------------------------------------------------------------- mem.bandwidth
    key("l1_bw_gbs", Gbs, "mem.bandwidth", BW, "L1-resident load bandwidth, 1 thread", "read kernel at L1/2; one pinned thread, p50 over the undisturbed windows of its bytes / the window", "000 (data access from cache)"),
    key("l2_bw_gbs", Gbs, "mem.bandwidth", BW, "L2-resident load bandwidth, 1 thread", "read kernel at L2/2; one pinned thread, p50 over the undisturbed windows of its bytes / the window", "000 (L2_BW)"),
    key("l3_bw_gbs", Gbs, "mem.bandwidth", BW, "L3-resident load bandwidth, 1 thread", "read kernel at min(2 x L2, L3/2); one pinned thread, p50 over the undisturbed windows of its bytes / the window", "000"),
    key("mem_bw_gbs", Gbs, "mem.bandwidth", BW, "DRAM load bandwidth, all threads", "read kernel over 4 x the caches the threads' CPUs can fill (every LLC and L2 instance; the same with --quick), confirmed by the DRAM check (`dram_check`); the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", "000 (MEM_BW, local access formula); 002 Table 1 \"Main Memory\" bandwidth (132.8 GB/s, MLC)").far("cxl_bw_gbs").models(&[TT]),
    key("mem_write_bw_gbs", Gbs, "mem.bandwidth", BW, "DRAM store bandwidth, all threads", "write kernel (temporal stores); the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", "000"),
    key("nt_write_bw_gbs", Gbs, "mem.bandwidth", BW, "DRAM non-temporal store bandwidth, all threads", "streaming stores + sfence (x86_64: movntdq family); on AArch64 `stnp` (NEON, scalar) or SVE `stnt1b` + dsb st: non-temporal *hints* a core may ignore, so the key can equal `mem_write_bw_gbs` there (the measurement's `store` names the instruction); an ISA without a non-temporal store skips it with the reason; the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", "001 (NT stores)"),
    key("copy_bw_gbs", Gbs, "mem.bandwidth", BW, "DRAM copy bandwidth (read + written), all threads", "loads + temporal stores; the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", "001 (temporal copy)"),
    key("nt_copy_bw_gbs", Gbs, "mem.bandwidth", BW, "DRAM copy bandwidth with NT stores, all threads", "loads + streaming stores + sfence (AArch64: `stnp` / SVE `stnt1b` hints + dsb st, as `nt_write_bw_gbs`); the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", "001 (non-temporal copy)"),
    key("memset_bw_gbs", Gbs, "mem.bandwidth", BW, "C library memset bandwidth, all threads", "`ptr::write_bytes`; the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", ""),
    key("zva_write_bw_gbs", Gbs, "mem.bandwidth", BW, "DRAM bandwidth of zeroing whole blocks without read for ownership, all threads (AArch64 only)", "`dc zva` on every block of DCZID_EL0's size (plain stores for an unaligned head and the tail): AArch64's no-RFO write, zeros only; skipped with the reason where DCZID_EL0.DZP prohibits it, absent on x86_64; the crew's window aggregate: the bytes all threads moved in the time all of them ran / that time, p50 over the undisturbed windows (the bulk-synchronous figure, threads x the slowest thread's rate, is the measurement's `/bulk-sync` twin)", "001 (the write that needs no read for ownership)"),
    key("mem_bw_1t_gbs", Gbs, "mem.bandwidth", BW, "`mem_bw_gbs` with one thread", "read kernel, DRAM size, one thread (the likwid-bench comparison); one pinned thread, p50 over the undisturbed windows of its bytes / the window", "000").far("cxl_bw_1t_gbs"),
    key("{kernel}_1t_gbs", Gbs, "mem.bandwidth", BW, "the DRAM keys above with one thread", "as the all-thread key, one thread (the likwid-bench comparison)", "000, 001").vars(&[Var {
        name: "kernel",
        values: Values::OneOf(&["mem_write_bw", "nt_write_bw", "copy_bw", "nt_copy_bw", "memset_bw", "zva_write_bw"]),
        meaning: "the all-thread key without `_gbs`",
    }]),
    key("cxl_bw_gbs", Gbs, "mem.bandwidth", BW_FAR, "`mem_bw_gbs` on far memory", "read kernel on a memory-only node or dax target", "000 (pool bandwidth); 002 Table 1 \"CXL Memory Sharing (with caching; no cache flushing)\" bandwidth (9.9 GB/s, MLC)").of("mem_bw_gbs").models(&[TT]),
    key("cxl_bw_1t_gbs", Gbs, "mem.bandwidth", BW_FAR, "`mem_bw_1t_gbs` on far memory", "read kernel, one thread, on a memory-only node or dax target", "000").of("mem_bw_1t_gbs"),
    key("cxl_bw_factor", Factor, "mem.bandwidth", BW_FAR, "far/local bandwidth factor", "`cxl_bw_gbs / mem_bw_gbs`, derived by the runner", "000 (bandwidth factor of pool accesses)").ratio("cxl_bw_gbs", "mem_bw_gbs").models(&[TT]),
    key("hmat_lat_ratio", Ratio, "mem.latency", HMAT_LAT, "advertised read latency (ACPI HMAT / CXL CDAT, the kernel's numaperf access1, else access0) / measured idle latency, qualified by the target (`hmat_lat_ratio@node:1`; 1 = as advertised, above 1 = faster, 0.8 = 25 % slower)", "derived by the runner from `mem_lat_ns@T` (or `cxl_lat_ns@T`) and `environment.topology.nodes[].access` (`hmat_vs_measured`)", "none (firmware check)"),
    key("hmat_bw_ratio", Ratio, "mem.bandwidth", HMAT_BW, "measured read bandwidth / advertised read bandwidth (MB/s / 1000), qualified by the target (`hmat_bw_ratio@node:1`; 1 = as advertised, 0.8 = 20 % less)", "derived by the runner from `mem_bw_gbs@T` (or `cxl_bw_gbs@T`) and `environment.topology.nodes[].access` (`hmat_vs_measured`)", "none (firmware check)"),
    key("interleave_gain_ratio", Ratio, "mem.bandwidth", INTERLEAVE_BW, "read bandwidth on an interleaved target / on plain local memory (`anon`, else the CPUs' `node:N`), qualified by the interleave target (`interleave_gain_ratio@interleave:0=4,1=1`)", "derived by the runner (`interleave_weights.gains`)", "none (tiering check)"),
    // ---------------------------------------------------------------- mem.copy-threshold
    key("nt_copy_threshold_bytes", Bytes, "mem.copy-threshold", CT, "block size from which NT copies win, P = all `--cpu`", "smallest S from which NT p50 >= 0.98 x temporal p50 at every larger S; each thread pushes its own send buffer (HINT's column-wise order with a rotated start; the paper shows its hybrid copy with the Hilbert order, Fig. 9 and 11, and does not name Fig. 8's order; `mem alltoall-order` compares the orders); sizes bounded by a quarter of the target's available memory (at most 1 GiB with --quick)", "001 (hybrid threshold T)").models(&[N1]),
    key("nt_copy_threshold_p{N}_bytes", Bytes, "mem.copy-threshold", CT, "the same for P threads", "as above, P one rung of the thread ladder (1, 2, 4, ... and each level of the machine: one core, one L3, one node, one socket, all CPUs; every P 1..n in versions before the ladder), the rung's CPUs in the measurements' `rung`", "001 (T per processes per node)").vars(&[Var {
        name: "N",
        values: Values::Count,
        meaning: "the thread count P (a rung of the thread ladder)",
    }]).models(&[N1]),
    key("nt_copy_rule_bytes", Bytes, "mem.copy-threshold", CT, "HINT's rule of thumb L2 / P, P = all `--cpu`", "sysfs L2 size / P", "001 (initial T)"),
    // ---------------------------------------------------------------- mem.alltoall-order
    key("alltoall_{order}_p{N}_gbs", Gbs, "mem.alltoall-order", AO, "intra-node all-to-all bandwidth in one memory copy order, P threads, temporal copy, at `--ref-size` (64 KiB)", "p50 over lockstep samples of P pinned threads doing rounds of 2 x P^2 x S bytes (read + written) over the slowest thread; the per-size winner of the orders is in the measurements' parameters (`winner`, `of_winner`)", "001 (Fig. 6: row-wise vs column-wise vs Hilbert per message size and PPN; the paper prints latency curves, no values)").vars(&[
        Var {
            name: "order",
            values: Values::OneOf(&["row", "column", "hilbert"]),
            meaning: "the copy order (Hilbert only for a power-of-two P)",
        },
        Var {
            name: "N",
            values: Values::Count,
            meaning: "the thread count P (a rung of the thread ladder from 2 up, or `--threads`)",
        },
    ]),
    // ---------------------------------------------------------------- mem.agents
    key("agents_{dir}_k{k}_bw_gbs", Gbs, "mem.agents", AGENTS, "per-agent bandwidth B(k) with k CPU agents on one **local** target, each moving its own transfer of the same size S at once", "p50 over every agent's own rate (its bytes / its own time) in every undisturbed window of the crew; agents pinned to distinct CPUs, start together (spinning barrier), each on its own range [t S, (t+1) S) of the target with a private buffer on its CPU's node; non-temporal stores; bytes transferred counted once; S such that one agent's source + destination (2 S) span the streaming DRAM footprint of the first CPU and two agents' (4 S) that of every CPU (4 x the caches those CPUs can fill, `dram_check`), >= 64 MiB, the same with `--quick`; `--size`", "003 B(k), Observation 2 (CPU agents in place of GPU DMA)").vars(&[AGENT_DIR, AGENTS_K]).far("cxl_agents_{dir}_k{k}_bw_gbs").models(&[C3]),
    key("agents_{dir}_k{k}_agg_bw_gbs", Gbs, "mem.agents", AGENTS, "aggregate bandwidth of the k agents on one local target", "the crew's window aggregate: the bytes all k agents moved (each byte once, not read + written) in the time all of them ran / that time, p50 over the undisturbed windows", "003 (does concurrency add bandwidth?)").vars(&[AGENT_DIR, AGENTS_K]).far("cxl_agents_{dir}_k{k}_agg_bw_gbs"),
    key("cxl_agents_{dir}_k{k}_bw_gbs", Gbs, "mem.agents", AGENTS_FAR, "per-agent bandwidth B(k) with k CPU agents on one **far** target (memory-only node, dax): the pool device shared by k ranks", "`agents_{dir}_k{k}_bw_gbs` renamed by the runner on far targets (as `mem_lat_ns` -> `cxl_lat_ns`)", "003 B(k), Observation 2").vars(&[AGENT_DIR, AGENTS_K]).of("agents_{dir}_k{k}_bw_gbs").models(&[C3]),
    key("cxl_agents_{dir}_k{k}_agg_bw_gbs", Gbs, "mem.agents", AGENTS_FAR, "aggregate bandwidth of the k agents on one far target", "`agents_{dir}_k{k}_agg_bw_gbs` renamed on far targets", "003").vars(&[AGENT_DIR, AGENTS_K]).of("agents_{dir}_k{k}_agg_bw_gbs"),
    key("agents_spread_{dir}_k{k}_bw_gbs", Gbs, "mem.agents-spread", AGENTS_SPREAD, "per-agent bandwidth with the same k agents round robin over two targets (agent t on target t mod 2)", "as `agents_{dir}_k{k}_bw_gbs`, same S, agent t at [(t div 2) S, ...) of target t mod 2; k >= 2; both regions placed and verified by bench_core::memory", "003 Sec. 3.2 (interleaving over devices restores each rank's bandwidth)").vars(&[AGENT_DIR, AGENTS_K]).models(&[C3]),
    key("agents_spread_{dir}_k{k}_agg_bw_gbs", Gbs, "mem.agents-spread", AGENTS_SPREAD, "aggregate bandwidth of the k agents spread over two targets", "as `agents_{dir}_k{k}_agg_bw_gbs`: the crew's window aggregate over the two targets, bytes counted once", "003 Sec. 3.2").vars(&[AGENT_DIR, AGENTS_K]),
    key("xtier_{victim}_under_{aggressor}_lat_ratio", Ratio, "mem.interference", INTERFERENCE, "the victim's load latency while aggressor CPUs stream another (or the same) target at full rate, over its latency alone: one CPU chasing a target of tier `victim` while CPUs on other cores read a target of tier `aggressor` (1 = unharmed, 1.5 = 50 % slower)", "p50 of the victim's 256-load chase batch means (the prefetcher-proof chain over 4 x the caches of the run's CPUs) beside the aggressors' read traffic (no injection delay), over the p50 alone; the first target pair of each tier pair in run order (the same target first), every pair in `interference`; noisy when either side is", "none (co-location: who loses what)").vars(&[XTIER_VICTIM, XTIER_AGGRESSOR]),
    key("xtier_{victim}_under_{aggressor}_bw_ratio", Ratio, "mem.interference", INTERFERENCE, "the victim CPUs' read bandwidth while the aggressor CPUs stream at full rate, over their bandwidth alone (1 = unharmed, 0.6 = 40 % less)", "the victim CPUs' summed own rates (read stream of their own DRAM-sized slices of the victim target) in the crew's undisturbed windows beside the aggressors' read traffic, p50, over the same alone; pairs as the lat ratio", "none (co-location: who loses what)").vars(&[XTIER_VICTIM, XTIER_AGGRESSOR]),
    key("xtier_{victim}_under_gpu_lat_ratio", Ratio, "mem.interference", INTERFERENCE, "the victim's load latency while a GPU copies host memory to itself (h2d: the GPU reads the target) back to back, over its latency alone: one CPU chasing a target of tier `victim` while the GPU's DMA reads the same target (1 = unharmed, 1.5 = 50 % slower)", "p50 of the victim's 256-load chase batch means (the chain of the CPU cells) while one CUDA stream copies back to back (bench-gpu's copy loop: copies of the contention size walking through the registered aggressor part of the target, event-timed batches of 4, driven from the first aggressor CPU), over the p50 alone; the first target of each tier in run order under the GPU's copies of itself, every target pair and both directions (h2d, d2h) in `interference`; noisy when either side is; skipped with the reason where no GPU can be used", "none (co-location: what a GPU's DMA costs the CPUs)").vars(&[XTIER_VICTIM]),
    key("xtier_{victim}_under_gpu_bw_ratio", Ratio, "mem.interference", INTERFERENCE, "the victim CPUs' read bandwidth while a GPU copies the same target to itself (h2d) back to back, over their bandwidth alone (1 = unharmed, 0.6 = 40 % less); the GPU's own bandwidth alone and beside the victim is in `interference` (aggressor_bw_*)", "the victim CPUs' summed own rates in the crew's undisturbed windows (as `xtier_{victim}_under_{aggressor}_bw_ratio`) while the GPU's copies run, p50, over the same alone; pairs as the lat ratio", "none (co-location: what a GPU's DMA costs the CPUs)").vars(&[XTIER_VICTIM]),
    // ---------------------------------------------------------------- mem.matrix
    key("numa_local_lat_ns", Ns, "mem.matrix", MATRIX, "idle load latency from a CPU node to its own memory: the matrix's local cell (the initiator is the first CPU node measured (the lowest id of `--cpu-nodes`)); node to node, unlike `mem_lat_ns` (the run's first CPU to a --target)", "p50 of the default chase (tlb-local order, every line of 256-byte slots, one per phase, at random offsets) pinned to the first of the initiator's allowed CPUs, memory bound to the target node and verified page by page, over 4 x the caches all the initiator's allowed CPUs can fill (`Context::dram_touched`); the same with --quick", "MLC's latency matrix (diagonal)"),
    key("numa_remote_lat_ns", Ns, "mem.matrix", MATRIX, "idle load latency from a CPU node to the memory of a node with CPUs on another socket (the initiator is the first CPU node measured (the lowest id of `--cpu-nodes`); a node with CPUs at a SLIT distance of at least twice the local one, or any other node with CPUs when the kernel reports no distances)", "median over the initiator's remote-socket cells (mean of the two middle values for an even count) of each cell's p50: p50 of the default chase (tlb-local order, every line of 256-byte slots, one per phase, at random offsets) pinned to the first of the initiator's allowed CPUs, memory bound to the target node and verified page by page, over 4 x the caches all the initiator's allowed CPUs can fill (`Context::dram_touched`); the same with --quick", "MLC's latency matrix (remote socket)"),
    key("numa_far_lat_ns", Ns, "mem.matrix", MATRIX, "idle load latency from a CPU node to a node without CPUs (CXL or other far memory; the initiator is the first CPU node measured (the lowest id of `--cpu-nodes`)); node to node, unlike `cxl_lat_ns` (the run's first CPU to a far --target)", "median over the initiator's far cells (mean of the two middle values for an even count) of each cell's p50: p50 of the default chase (tlb-local order, every line of 256-byte slots, one per phase, at random offsets) pinned to the first of the initiator's allowed CPUs, memory bound to the target node and verified page by page, over 4 x the caches all the initiator's allowed CPUs can fill (`Context::dram_touched`); the same with --quick", "MLC's latency matrix (CPU-less node)"),
    key("numa_local_bw_gbs", Gbs, "mem.matrix", MATRIX, "read bandwidth of all of a CPU node's CPUs from its own memory: the matrix's local cell (the initiator is the first CPU node measured (the lowest id of `--cpu-nodes`)); unlike `mem_bw_gbs` (the run's CPUs to a --target)", "p50 over the undisturbed windows of the crew's window aggregate (as `mem_bw_gbs`) of the read kernel (`mem bandwidth`'s) run by every allowed CPU of the initiator, each over its own slice of a region bound to the target node (verified page by page), streamed bytes 4 x the caches those CPUs can fill (`Context::dram_stream_bytes`); GB = 1e9 B", "MLC's bandwidth matrix (diagonal)"),
    key("numa_remote_bw_gbs", Gbs, "mem.matrix", MATRIX, "read bandwidth of all of a CPU node's CPUs from the memory of a node with CPUs on another socket (the initiator is the first CPU node measured (the lowest id of `--cpu-nodes`); remote as for `numa_remote_lat_ns`)", "median over the initiator's remote-socket cells (mean of the two middle values for an even count) of each cell's p50: p50 over the undisturbed windows of the crew's window aggregate (as `mem_bw_gbs`) of the read kernel (`mem bandwidth`'s) run by every allowed CPU of the initiator, each over its own slice of a region bound to the target node (verified page by page), streamed bytes 4 x the caches those CPUs can fill (`Context::dram_stream_bytes`); GB = 1e9 B", "MLC's bandwidth matrix (remote socket)"),
    key("numa_far_bw_gbs", Gbs, "mem.matrix", MATRIX, "read bandwidth of all of a CPU node's CPUs from a node without CPUs (CXL or other far memory; the initiator is the first CPU node measured (the lowest id of `--cpu-nodes`)); unlike `cxl_bw_gbs` (the run's CPUs to a far --target)", "median over the initiator's far cells (mean of the two middle values for an even count) of each cell's p50: p50 over the undisturbed windows of the crew's window aggregate (as `mem_bw_gbs`) of the read kernel (`mem bandwidth`'s) run by every allowed CPU of the initiator, each over its own slice of a region bound to the target node (verified page by page), streamed bytes 4 x the caches those CPUs can fill (`Context::dram_stream_bytes`); GB = 1e9 B", "MLC's bandwidth matrix (CPU-less node)"),
    // ---------------------------------------------------------------- mem.loaded
    key("loaded_lat_max_bw_gbs", Gbs, "mem.loaded", LOADED, "largest injected read bandwidth of the curve (all-load traffic, `mix` read)", "max of the points' `injected_bw_gbs`: bytes loaded by the traffic threads inside the window in which all of them ran (a crew released with the chase, stopped when it is done) / that window, GB = 1e9 B", "000 (latency under bandwidth load)"),
    key("loaded_lat_at_max_bw_ns", Ns, "mem.loaded", LOADED, "chase latency at that point (read traffic)", "the point's p50 of 256-load batch means (ns per load, as MLC's average)", "000"),
    key("loaded_lat_p99_at_max_bw_ns", Ns, "mem.loaded", LOADED, "per-load tail latency at that point (read traffic)", "the point's `per_load_p99_ns`: p99 of single timed chase loads (timer overhead subtracted) interleaved with the batches", "000 (latency under bandwidth load, tail)"),
    key("loaded_lat_max_bw_{mix}_gbs", Gbs, "mem.loaded", LOADED, "largest injected bandwidth of the curve with loads and stores", "max of the points' `injected_bw_gbs`: bytes loaded + stored by the traffic threads' instructions inside the window in which all of them ran (a crew released with the chase) / that window (RFO not counted), GB = 1e9 B", "000 (latency under bandwidth load; MLC -W3/-W2/-W5/-W6)").vars(&[LOADED_MIX]),
    key("loaded_lat_at_max_bw_{mix}_ns", Ns, "mem.loaded", LOADED, "chase latency at that point", "the point's p50 of 256-load batch means", "000").vars(&[LOADED_MIX]),
    key("loaded_lat_p99_at_max_bw_{mix}_ns", Ns, "mem.loaded", LOADED, "per-load tail latency at that point", "the point's `per_load_p99_ns`", "000").vars(&[LOADED_MIX]),
    key("loaded_lat_max_bw_rw_gbs", Gbs, "mem.loaded", LOADED_OLD, "largest injected bandwidth with read + write (copy) traffic, in files of earlier versions (now `loaded_lat_max_bw_1r1w_gbs`)", "max of the points' `injected_bw_gbs` (bytes read + written by a copy within each chunk)", "000"),
    key("loaded_lat_at_max_bw_rw_ns", Ns, "mem.loaded", LOADED_OLD, "chase latency at that point, copy traffic, in files of earlier versions (now `loaded_lat_at_max_bw_1r1w_ns`)", "the point's p50", "000"),
    // ---------------------------------------------------------------- pool.atomics
    key("atomic_lat_ns", Ns, "pool.atomics", ATOMICS, "latency of one atomic RMW on the target's memory", "median of the p50 per-op latencies of dependent chains of fetch-add, CAS, exchange (x86_64: lock xadd, lock cmpxchg, xchg; AArch64: LSE ldaddal, casal, swpal where the CPU has LSE, else ldaxr/stlxr loops, which a contended or far line can make slower: each measurement's `instruction` names them) over the DRAM working set of the first CPU (4 x the caches it can fill, checked: `dram_check`; every line of 256-byte slots one per phase at random offsets, TLB-local order; each operation goes on where the previous stopped; the known successor for CAS/exchange comes from a counter, off the dependency chain)", "000 (`CXL_ATOMIC_LAT` on local memory)").far("cxl_atomic_lat_ns"),
    key("cxl_atomic_lat_ns", Ns, "pool.atomics", ATOMICS_FAR, "`atomic_lat_ns` measured on far memory (memory-only NUMA node, dax)", "as `atomic_lat_ns`, renamed by the runner for far targets", "000 `CXL_ATOMIC_LAT`; transfer = 2 x this").of("atomic_lat_ns").models(MSG_PATH),
    key("atomic_load_lat_ns", Ns, "pool.atomics", ATOMICS, "plain dependent-load latency on the same lines", "same chain with plain loads", "000 (reference for \"atomic vs regular load\")"),
    key("atomic_{op}_lat_ns", Ns, "pool.atomics", ATOMICS, "per-operation atomic latency", "p50 of the dependent chain of that op", "000").vars(&[Var {
        name: "op",
        values: Values::OneOf(&["fetch_add", "cas", "exchange"]),
        meaning: "the atomic operation",
    }]),
    key("atomic_extra_lat_ns", Ns, "pool.atomics", ATOMICS, "cost of atomicity over a plain load", "`atomic_lat_ns - atomic_load_lat_ns`", "000 (the paper's \"ca. 150 ns longer\")"),
    // ---------------------------------------------------------------- pool.c2c
    key("c2c_cas_lat_ns", Ns, "pool.c2c", C2C, "one-way core-to-core latency, CAS ping-pong", "median over the machine's pair classes (SMT siblings, same L2, same LLC, across LLCs, nodes, sockets) of each class's median p50 of round trip / 2 (CAS: lock cmpxchg; AArch64 LSE casal, else an ldaxr/stlxr loop, named in each measurement), a few pairs per class spread over the machine (8, 4 with --quick; every pair with `--pairs all`). **Changed meaning**: versions before the pair classes took the median over every CPU pair, which weighs the classes by how many pairs they have (on two sockets, half the pairs cross them); on a one-LLC machine the two agree", "000 (synchronization cost), 002"),
    key("c2c_cas_min_lat_ns", Ns, "pool.c2c", C2C, "same, best pair", "minimum over the pairs measured", "000"),
    key("c2c_flag_lat_ns", Ns, "pool.c2c", C2C, "one-way core-to-core latency, store/load flag ping-pong", "as `c2c_cas_lat_ns` (median over pair classes of each class's median p50 of round trip / 2; **changed meaning**: before the pair classes, the median over every pair)", "002 (flag-based queues)"),
    key("c2c_flag_min_lat_ns", Ns, "pool.c2c", C2C, "same, best pair", "minimum over the pairs measured", "002"),
    key("c2c_{kind}_{class}_lat_ns", Ns, "pool.c2c", C2C, "one-way core-to-core latency between two CPUs of one pair class: `same_llc` two cores sharing the last-level cache (an L3, a CCX), `cross_llc` two LLCs of one NUMA node (EPYC CCXs), `cross_socket` two sockets (MLC's remote-socket transfer)", "median over the class's measured pairs (a few per class, spread over the machine with --seed; all with `--pairs all`) of the p50 of round trip / 2; the class's min and max are in its `pool.c2c/<target>/<kind>/class/<class>` measurement; absent when the machine has no such pair", "000 (synchronization cost), 002; MLC --c2c_latency (local L2 HIT/HITM, remote socket)").vars(&[C2C_KIND, C2C_CLASS]),
    key("c2c_bw_{class}_gbs", Gbs, "pool.c2c", C2C, "cache-to-cache bandwidth between two CPUs of one pair class (the classes of `c2c_{kind}_{class}_lat_ns`): lines Modified in the writer's cache, read by the other CPU", "per direction of each measured pair (both ways): the writer stores every byte of a buffer of half its own L2 instance (whole 4 KiB pages; plain temporal stores: every line Modified in its cache) and hands it over through a flag, the reader reads every line once (the read kernel's vector loads) and hands it back, 40 rounds (10 with --quick) after an untimed one; per round the buffer's bytes / the reader's time of the read, GB = 1e9 B; the key is the median over the class's directions of their p50s (the class's min and max in its `pool.c2c/<target>/bw/class/<class>` measurement); absent when the machine has no such pair or sysfs gives no L2 size", "MLC --c2c_bandwidth").vars(&[C2C_CLASS]),
    // ---------------------------------------------------------------- pool.flush
    key("flush_cost_ns", Ns, "pool.flush", FLUSH, "write one 64 B line and make it visible in memory", "p50 of memset 64 B + clflushopt + sfence (clflush where clflushopt is absent; on AArch64 dc civac + dsb sy, probed first: skipped where the kernel traps EL0 cache maintenance)", "002 (software coherence per write); 002 Table 1 \"CXL Memory Sharing (with cache flushing)\" latency (2.2 us: memset + cache flush on the dax device, small sizes; the row's 9.5 GB/s, many threads writing and flushing 512 B each, is `cxl_flush_bw_gbs` of `pool flush-bw`)"),
    key("flush_{method}_{size}_ns", Ns, "pool.flush", FLUSH, "write `size` bytes and make them visible with `method`", "p50 of memset + flush (+ sfence); NT stores + sfence; UC/WC: plain writes to a BAR mapping", "002 (Figure 11: cflush vs cflushopt vs uncacheable; Table 1 \"with cache flushing\" latency is memset + flush)").vars(&[
        Var {
            name: "method",
            values: Values::OneOf(&["clflush", "clflushopt", "clwb", "ntstore", "civac", "cvac", "uc", "wc"]),
            meaning: "the flush method: x86_64 clflush, clflushopt + sfence, clwb + sfence, ntstore (movntdq/movnti + sfence); AArch64 civac (dc civac + dsb sy), cvac (dc cvac + dsb sy), ntstore (`stnp` + dsb st: a non-temporal hint, unlike x86's streaming stores); uc/wc: plain writes to a BAR mapping (wc + sfence, dsb st on AArch64)",
        },
        Var {
            name: "size",
            values: Values::OneOf(&["64b", "4k"]),
            meaning: "the bytes written",
        },
    ]),
    // ---------------------------------------------------------------- pool.flush-bw
    key("flush_bw_gbs", Gbs, "pool.flush-bw", FLUSH_BW, "aggregated bandwidth of writing 512 B chunks and flushing each, all threads (one per `--cpu`), on **local** memory: the local-memory counterpart of the paper's row, which was measured on a dax device (that figure is `cxl_flush_bw_gbs`)", "each pinned thread walks its own part of the working set of `mem bandwidth`'s DRAM point for the threads' CPUs (4 x the caches they can fill, at least 64 MiB, the same with --quick; checked: `dram_check`): memset a 512 B chunk (`--chunk`), clflushopt on its lines + sfence (clflush where clflushopt is absent; dc civac + dsb sy on AArch64); the crew's window aggregate: the bytes all threads wrote in the time all of them ran / that time, p50 over the undisturbed windows; GB = 1e9 B, bytes counted once as written", "002 Table 1 \"CXL Memory Sharing (with cache flushing)\" bandwidth (9.5 GB/s; local-memory counterpart)").far("cxl_flush_bw_gbs"),
    key("flush_bw_{method}_gbs", Gbs, "pool.flush-bw", FLUSH_BW, "`flush_bw_gbs` with one flush method", "as `flush_bw_gbs`, the chunk made visible with `method` (methods the CPU lacks are skipped with the CPUID bit)", "002 Table 1 \"CXL Memory Sharing (with cache flushing)\" bandwidth (9.5 GB/s), by method").vars(&[FLUSH_METHOD]).far("cxl_flush_bw_{method}_gbs"),
    key("flush_bw_stores_gbs", Gbs, "pool.flush-bw", FLUSH_BW, "the reference of `flush_bw_gbs`: the same 512 B chunks written by the same threads, nothing flushed", "as `flush_bw_gbs` without the flush (the lines leave the cache by eviction)", "002 Table 1 (what flushing costs: compare with `flush_bw_gbs`)").far("cxl_flush_bw_stores_gbs"),
    key("flush_bw_t{N}_gbs", Gbs, "pool.flush-bw", FLUSH_BW, "`flush_bw_gbs` with N threads", "as `flush_bw_gbs` with N pinned threads: N each rung of the thread ladder up to T (1, 2, 4, ... and each level of the machine; 3 rungs with --quick; every N in 1..=T in versions before the ladder), on the rung's CPUs", "002 Table 1 \"CXL Memory Sharing (with cache flushing)\" bandwidth (9.5 GB/s), by thread count").vars(&[THREADS]).far("cxl_flush_bw_t{N}_gbs"),
    key("cxl_flush_bw_gbs", Gbs, "pool.flush-bw", FLUSH_BW_FAR, "`flush_bw_gbs` on far memory (dax device, memory-only node): many threads writing 512 B chunks and flushing each", "as `flush_bw_gbs`, renamed by the runner for far targets", "002 Table 1 \"CXL Memory Sharing (with cache flushing)\" bandwidth (9.5 GB/s: threads writing 512 B with cache flushing on a dax device region, aggregated)").of("flush_bw_gbs"),
    key("cxl_flush_bw_{method}_gbs", Gbs, "pool.flush-bw", FLUSH_BW_FAR, "`flush_bw_{method}_gbs` on far memory", "as `flush_bw_{method}_gbs`, renamed for far targets", "002 Table 1 \"CXL Memory Sharing (with cache flushing)\" bandwidth (9.5 GB/s), by method").vars(&[FLUSH_METHOD]).of("flush_bw_{method}_gbs"),
    key("cxl_flush_bw_stores_gbs", Gbs, "pool.flush-bw", FLUSH_BW_FAR, "`flush_bw_stores_gbs` on far memory", "as `flush_bw_stores_gbs`, renamed for far targets", "002 Table 1 (the no-flush reference on the same target)").of("flush_bw_stores_gbs"),
    key("cxl_flush_bw_t{N}_gbs", Gbs, "pool.flush-bw", FLUSH_BW_FAR, "`flush_bw_t{N}_gbs` on far memory", "as `flush_bw_t{N}_gbs`, renamed for far targets", "002 Table 1 \"CXL Memory Sharing (with cache flushing)\" bandwidth (9.5 GB/s), by thread count").vars(&[THREADS]).of("flush_bw_t{N}_gbs"),
    // ---------------------------------------------------------------- pool.msg
    key("pool_flag_lat_ns", Ns, "pool.msg", MSG, "one-way flag latency between two processes through the pool (coherent)", "p50 of round trip / 2 of a store/load flag in the pool header", "002 (flag-based synchronization; not a Table 1 row)"),
    key("pool_flag_lat_noncoherent_ns", Ns, "pool.msg", MSG, "same with flush after store and invalidate before load", "as above, clflushopt + fences", "002"),
    key("pool_msg_lat_ns", Ns, "pool.msg", MSG, "one-way latency of an 8 B message through an SPSC ring in the pool (coherent)", "p50 of echo round trip / 2", "002 (two-sided messages through SPSC rings in CXL SHM, Sec. 3, Fig. 8; not a Table 1 row); 000 with --baseline shm").models(MSG_PATH),
    key("pool_msg_lat_noncoherent_ns", Ns, "pool.msg", MSG, "same, non-coherent protocol", "writer flushes + sfence, reader invalidates", "002"),
    key("pool_msg_bw_gbs", Gbs, "pool.msg", MSG, "ring streaming bandwidth (payload, 1e9 B/s), best message size (coherent)", "p50 of repeated streams of N messages until acknowledged", "002 (two-sided message bandwidth, Fig. 7; not a Table 1 row); 000 with --baseline shm").models(MSG_PATH),
    key("pool_msg_bw_noncoherent_gbs", Gbs, "pool.msg", MSG, "same, non-coherent protocol", "as above", "002"),
    key("pool_hockney_lat_ns", Ns, "pool.msg", MSG, "Hockney latency of pool messaging", "weighted least squares (1/t^2) fit of t(s) = lat + s/bw to p50 one-way ring latencies, 8 B .. 4 MiB", "000 (Hockney model, with --baseline shm)").models(MSG_PATH),
    key("pool_hockney_lat_noncoherent_ns", Ns, "pool.msg", MSG, "same, non-coherent protocol", "same fit", "000"),
    key("pool_hockney_bw_gbs", Gbs, "pool.msg", MSG, "Hockney bandwidth of pool messaging", "same fit", "000 (with --baseline shm)").models(MSG_PATH),
    key("pool_hockney_bw_noncoherent_gbs", Gbs, "pool.msg", MSG, "same, non-coherent protocol", "same fit", "000"),
    // ---------------------------------------------------------------- pool.msg-scale
    key("pool_pairs{mode}_lat_p{P}_ns", Ns, "pool.msg-scale", MSG_SCALE, "one-way latency of an 8 B message with P sender/receiver pairs messaging at once, each pair through its own SPSC queue of cells (64 KiB, `--pairs-cell`) in one pool window", "p50 over the samples of all pairs of echo round trip / 2 (pinned threads, one CPU each)", "002 Fig. 8 (two-sided latency as the process count grows 2 .. 32 = P 1 .. 16; small messages)").vars(&[MODE, PAIRS]),
    key("pool_pairs{mode}_bw_p{P}_gbs", Gbs, "pool.msg-scale", MSG_SCALE, "aggregate two-sided bandwidth of P pairs (payload counted once, 1e9 B/s), best message size of 1 KiB .. 1 MiB, 64 KiB cells (`--pairs-cell`)", "largest over message sizes of the p50 over undisturbed windows of the crew's aggregate: the payload all receivers copied out (each byte once) in the time all pairs ran / that time", "002 Fig. 7 (two-sided bandwidth as the process count grows; cMPI ~6 GB/s at 32 processes)").vars(&[MODE, PAIRS]),
    key("pool_cell{mode}_bw_{kib}k_gbs", Gbs, "pool.msg-scale", MSG_SCALE, "peak aggregate bandwidth with cells of `kib` KiB at the largest pair count, over message sizes 1 KiB .. 1 MiB (messages longer than a cell's payload split into cell-sized chunks)", "largest p50 of the cell size's bandwidth curve (as `pool_pairs_bw_p{P}_gbs`)", "002 Fig. 9 (bandwidth per cell size 16/32/64/128 KB; 3.6 / 3.9 / ~6 GB/s peaks at 32 processes)").vars(&[MODE, KIB]),
    key("pool_cell{mode}_peak_msg_{kib}k_bytes", Bytes, "pool.msg-scale", MSG_SCALE, "message size at which the bandwidth with `kib` KiB cells peaks", "argmax of the same curve (smallest size on a tie)", "002 Fig. 9 / Sec. 4.3 (the peak sits just below the cell size, then splitting lowers bandwidth)").vars(&[MODE, KIB]),
    key("pool_cell{mode}_best_bytes", Bytes, "pool.msg-scale", MSG_SCALE, "the cell size with the highest peak bandwidth", "argmax over `--cells` of `pool_cell_bw_{kib}k_gbs`", "002 Sec. 4.3 (64 KB chosen for Figs. 7-8; larger cells do not help)").vars(&[MODE]),
    // ---------------------------------------------------------------- pcie.mmio
    key("pcie_rtt_ns", Ns, "pcie.mmio", MMIO, "CPU <-> device round trip of an uncached 8-byte read", "dependent chain of uncached reads (each address depends on the value read)", "004 (stand-in for the latency model's PCIe: half of it is not the analyzer's link-level figure)").models(LATENCY),
    key("mmio_write_8b_ns", Ns, "pcie.mmio", MMIO, "issue cost of a posted uncached 8-byte write", "back-to-back uncached writes, fence after each batch", "004 (doorbell write)"),
    key("pio_copy_64b_ns", Ns, "pcie.mmio", MMIO, "64-byte write-combining copy + sfence (the PIO copy of a descriptor)", "8-byte volatile stores through `resourceN_wc`, then sfence", "004 (post = setup + barriers + PIO copy + misc)").models(LLP_POST),
    key("pio_copy_{n}b_ns", Ns, "pcie.mmio", MMIO, "the same for other sizes", "as above", "004 (what-if on descriptor size)").vars(&[Var {
        name: "n",
        values: Values::OneOf(&["8", "16", "32", "128", "256"]),
        meaning: "bytes copied",
    }]),
    // ---------------------------------------------------------------- pcie.post-parts
    key("md_write_64b_ns", Ns, "pcie.post-parts", POST_PARTS, "the stores of one 64-byte message descriptor into the next slot of a send-queue ring in host memory (micro-op stand-in for md_setup_ns, which also covers computing the fields and the inline memcpy in the provider)", "p50 of batches of 256 back-to-back posts, each 8 x 8-byte volatile stores of a descriptor computed from the post index into a 256-slot ring of 64-byte slots (cached)", "004 Table 1 MD setup (stand-in, not the paper's profile)").models(&[P4]),
    key("store_barrier_ns", Ns, "pcie.post-parts", POST_PARTS, "the sfence after a 64-byte descriptor write (micro-op stand-in for md_barrier_ns: x86 sfence where the paper's aarch64 has dmb st; x86 orders cached stores by itself (TSO), so a provider may issue only a compiler barrier there, and this is the cost when a fence is issued)", "p50(descriptor stores + sfence) - p50(descriptor stores), batches of 256 back-to-back posts; absent, with a warning, when noise makes it negative", "004 Table 1 barrier for MD (stand-in)").models(&[P4]),
    key("dbc_store_barrier_ns", Ns, "pcie.post-parts", POST_PARTS, "the sfence after the 8-byte DoorBell-counter store that follows a fenced descriptor write (micro-op stand-in for dbc_barrier_ns)", "p50(descriptor + sfence + DBC store + sfence) - p50(descriptor + sfence + DBC store); absent, with a warning, when negative", "004 Table 1 barrier for DBC (stand-in)").models(&[P4]),
    key("post_host_microops_ns", Ns, "pcie.post-parts", POST_PARTS, "the host-memory part of a post as one sequence: descriptor stores, sfence, DBC store, sfence", "p50 of batches of 256 back-to-back sequences", "004 LLP_post without its PIO copy and misc (stand-in)"),
    key("post_microops_ns", Ns, "pcie.post-parts", POST_PARTS_BAR, "a whole PIO post made of micro-ops: the host part, then the 64-byte descriptor copied to a BAR's write-combining mapping, then sfence", "p50 of batches of 256 back-to-back sequences; the PIO copy alternates between two buffers 256 B apart (as mlx5 BlueFlame)", "004 LLP_post without misc (stand-in, compare with llp_post_inline_ns)").models(&[P4]),
    // ---------------------------------------------------------------- verbs
    key("llp_post_inline_ns", Ns, "verbs", VERBS, "CPU cost of posting one small inline work request (descriptor setup, barriers, doorbell/PIO copy, misc)", "p50 of `ibv_post_send` of a signaled 8-byte inline RDMA write, bursts of 16", "004 LLP_post (Table 1: PIO + inline, 175.42 ns)").models(LLP_POST),
    key("llp_post_ns", Ns, "verbs", VERBS, "the same post with the payload read by DMA (not inline)", "p50 of `ibv_post_send`, signaled 8-byte RDMA write without IBV_SEND_INLINE", "004 (a post without inlining: not the paper's LLP_post, read by no model)"),
    key("llp_prog_ns", Ns, "verbs", VERBS, "CPU cost of dequeuing one completion", "p50 of `ibv_poll_cq(1)` returning one completion of an 8-byte write", "004 LLP_prog").models(&[I4, L4, E4]),
    key("busy_post_ns", Ns, "verbs", VERBS, "cost of a post refused because the send queue is full", "p50 of `ibv_post_send` returning ENOMEM on a full queue (absent, with a warning, when the provider never refuses)", "004 busy post (part of Misc)"),
    key("inj_overhead_ns", Ns, "verbs", VERBS, "CPU time per message injected in a continuous stream", "CPU time of a put_bw-style loop (post; poll a batch of 16 every 16 posts; busy posts when full) / messages, 8-byte inline writes", "004 Inj_overhead = LLP_post + LLP_prog + Misc"),
    key("inj_misc_ns", Ns, "verbs", VERBS, "per-message overhead of the injection stream beyond post and progress (busy posts, loop and polling bookkeeping): seed 004's Misc", "inj_overhead_ns - llp_post_inline_ns - llp_prog_ns, p50s of the same run; absent, with a warning, when noise makes it negative; --what-if inj_misc_ns=VALUE overrides it", "004 Table 1 / eq. (1) Misc (the paper's is busy post + measurement update of UCX put_bw)").models(&[I4]),
    key("msg_rate_mps", Mps, "verbs", VERBS, "message rate of one core on one QP", "messages / wall time to the last completion of the same loop", "004 (1 / Inj_overhead)"),
    key("verbs_lat_ns", Ns, "verbs", VERBS, "one-way small-message latency", "p50 half round trip of an 8-byte send/recv ping-pong (ib_send_lat)", "004 Latency; 000 MPI_LAT (network baseline without MPI); 002 Table 1 RoCEv2 latency (PerfTest)").models(MSG_PATH),
    key("verbs_bw_gbs", Gbs, "verbs", VERBS, "streaming bandwidth", "p50 of RDMA-write streams of the largest size (1 MiB), 64 outstanding (ib_write_bw)", "000 MPI_BW (network baseline without MPI); 002 Table 1 RoCEv2 bandwidth (PerfTest)").models(MSG_PATH),
    key("verbs_hockney_lat_ns", Ns, "verbs", VERBS, "Hockney start-up latency", "Hockney fit (bench_core::stats::hockney_fit: least squares weighted by 1/t^2, latency held at 0 when it would be negative) of p50 half round trips, 8 B .. 1 MiB: its latency", "000 Hockney `MPI_LAT + s / MPI_BW`"),
    key("verbs_hockney_bw_gbs", Gbs, "verbs", VERBS, "Hockney asymptotic bandwidth", "the same fit's bandwidth (inverse slope)", "000 Hockney"),
    // ---------------------------------------------------------------- gpu.bw
    key("gpu_h2d_bw_gbs", Gbs, "gpu.bw", GPU, "host -> GPU copy bandwidth from pinned memory", "p50 of the event-timed bandwidth at the largest size (1 GiB, the same with --quick), `cuMemAllocHost` buffer", "003 (per-device bandwidth, reference for the pool figures)"),
    key("gpu_d2h_bw_gbs", Gbs, "gpu.bw", GPU, "GPU -> host, pinned", "as above, device to host", "003"),
    key("gpu_copy_lat_ns", Ns, "gpu.bw", GPU, "cost of one small copy: 8 B pinned `cuMemcpyHtoDAsync` + `cuStreamSynchronize`", "p50 of back-to-back samples on the host timer (overhead subtracted)", "003 (doorbell / small-message cost)"),
    // ---------------------------------------------------------------- gpu.pool
    key("gpu_reg_{dir}_bw_gbs", Gbs, "gpu.pool", GPU, "copy bandwidth between a GPU and a **local** target's memory registered with `cuMemHostRegister`", "as `gpu_h2d_bw_gbs`, on the target's region", "003").vars(&[DIR]).far("gpu_pool_{dir}_bw_gbs"),
    key("gpu_reg_{dir}_k{k}_bw_gbs", Gbs, "gpu.pool", GPU, "per-transfer bandwidth with k concurrent copies (k streams on one GPU, each to its own range of the same target): what each requester perceives when k hit the device at once", "p50 over transfers and rounds of bytes / (the transfer's end - the common start); every copy of a round enqueued behind one gate (a host function on a gate stream, then the gate event the k streams wait on) and released together; CUDA events; a device that runs them in turn gives B/(i t) to the i-th (`gpu_in_turn` warning, `sharing` and `completion_order` in the measurement); 64 MiB each (the same with --quick; `--contention-size`)", "003 B(k), Observation 2").vars(&[DIR, K]).far("gpu_pool_{dir}_k{k}_bw_gbs"),
    key("gpu_reg_{dir}_k{k}_agg_bw_gbs", Gbs, "gpu.pool", GPU, "aggregate bandwidth of the k concurrent copies", "p50 over rounds of k x bytes / (last end - the common start, the gate)", "003 (does concurrency add bandwidth? one DMA engine per direction)").vars(&[DIR, K]).far("gpu_pool_{dir}_k{k}_agg_bw_gbs"),
    key("gpu_reg_mixed_{dir}_k{k}_bw_gbs", Gbs, "gpu.pool", GPU, "per-transfer bandwidth of the `dir` copies when k/2 copies go each way at once (k even; one reads while the other writes)", "as `gpu_reg_{dir}_k{k}_bw_gbs`, the k copies alternating h2d, d2h behind one gate; p50 over the `dir` transfers and rounds (nvbandwidth's bidirectional copy-engine tests are k = 2)", "003 Sec. 2.3 (one server reads while the other writes)").vars(&[DIR, K]).far("gpu_pool_mixed_{dir}_k{k}_bw_gbs"),
    key("gpu_reg_mixed_k{k}_agg_bw_gbs", Gbs, "gpu.pool", GPU, "aggregate bandwidth of k/2 copies each way at once, both directions counted", "p50 over rounds of k x bytes / (last end - the gate)", "003 Sec. 2.3").vars(&[K]).far("gpu_pool_mixed_k{k}_agg_bw_gbs"),
    key("gpu_reg_{dir}_share_min_ratio", Ratio, "gpu.pool", GPU, "fairness at the largest k: k x the smallest transfer's share of the summed per-transfer bandwidth, each timed from the common start (1 = even sharing; 1/H(k), 0.37 at k = 8, = the transfers ran in turn; -> 0 = a transfer starves)", "p50 over rounds", "003 Observation 2 (bandwidth \"distributed approximately evenly\")").vars(&[DIR]).far("gpu_pool_{dir}_share_min_ratio"),
    key("gpu_reg_{dir}_beside_cpu_bw_gbs", Gbs, "gpu.pool", GPU, "the GPU's copy bandwidth in `dir` while CPU agents (every CPU of the run after the first, pinned) stream the same target with the same access (h2d: they read it; d2h: they write it with non-temporal stores): what a GPU's DMA keeps when the host's cores use the pool too", "p50 over rounds of one stream's back-to-back copies (64 MiB, or `--contention-size`), event-timed batches walking through a part of the region sized as the agents' streaming DRAM working set; the agents stream a second part of the same size; GPU alone, agents alone and together interleaved in every round", "003 Sec. 2.3 (a CCCL rank's GPU and the host's CPUs on one pool)").vars(&[DIR]).far("gpu_pool_{dir}_beside_cpu_bw_gbs"),
    key("gpu_reg_{dir}_beside_cpu_ratio", Ratio, "gpu.pool", GPU, "the GPU's bandwidth beside the CPU agents / the same copies with the CPUs idle (1 = the CPUs cost the GPU nothing)", "ratio of the two p50s of the same run", "003 Sec. 2.3").vars(&[DIR]).far("gpu_pool_{dir}_beside_cpu_ratio"),
    key("gpu_reg_cpu_beside_{dir}_bw_gbs", Gbs, "gpu.pool", GPU, "the CPU agents' summed bandwidth on the target while the GPU copies in `dir` on it (the agents' access as in `gpu_reg_{dir}_beside_cpu_bw_gbs`)", "p50 over rounds of the crew's window aggregate (the bytes all agents moved in the time all of them ran / that window, each byte once), each agent streaming its own slice in parts of about 0.1 ms", "003 Sec. 2.3").vars(&[DIR]).far("gpu_pool_cpu_beside_{dir}_bw_gbs"),
    key("gpu_reg_cpu_beside_{dir}_ratio", Ratio, "gpu.pool", GPU, "the CPU agents' summed bandwidth beside the GPU / the agents alone (1 = the GPU costs the CPUs nothing)", "ratio of the two p50s of the same run", "003 Sec. 2.3").vars(&[DIR]).far("gpu_pool_cpu_beside_{dir}_ratio"),
    key("gpu_pool_{dir}_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "the same on **far** memory (memory-only node, dax): pool -> GPU and GPU -> pool", "`gpu_reg_*` renamed by the runner on far targets (as `mem_lat_ns` -> `cxl_lat_ns`)", "003 B(1), Observation 1 (~20 GB/s)").vars(&[DIR]).of("gpu_reg_{dir}_bw_gbs").models(&[C3]),
    key("gpu_pool_{dir}_k{k}_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "per-transfer bandwidth with k concurrent copies, far memory", "`gpu_reg_{dir}_k{k}_bw_gbs` renamed on far targets", "003 B(k), Observation 2").vars(&[DIR, K]).of("gpu_reg_{dir}_k{k}_bw_gbs").models(&[C3]),
    key("gpu_pool_{dir}_k{k}_agg_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "aggregate bandwidth of the k concurrent copies, far memory", "`gpu_reg_{dir}_k{k}_agg_bw_gbs` renamed on far targets", "003").vars(&[DIR, K]).of("gpu_reg_{dir}_k{k}_agg_bw_gbs"),
    key("gpu_pool_{dir}_share_min_ratio", Ratio, "gpu.pool", GPU_POOL, "fairness at the largest k, far memory", "`gpu_reg_{dir}_share_min_ratio` renamed on far targets", "003 Observation 2").vars(&[DIR]).of("gpu_reg_{dir}_share_min_ratio"),
    key("gpu_pool_mixed_{dir}_k{k}_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "per-transfer bandwidth of the `dir` copies with k/2 each way at once, far memory", "`gpu_reg_mixed_{dir}_k{k}_bw_gbs` renamed on far targets", "003 Sec. 2.3").vars(&[DIR, K]).of("gpu_reg_mixed_{dir}_k{k}_bw_gbs"),
    key("gpu_pool_mixed_k{k}_agg_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "aggregate bandwidth of k/2 copies each way at once, far memory", "`gpu_reg_mixed_k{k}_agg_bw_gbs` renamed on far targets", "003 Sec. 2.3").vars(&[K]).of("gpu_reg_mixed_k{k}_agg_bw_gbs"),
    key("gpu_pool_{dir}_beside_cpu_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "the GPU's copy bandwidth beside CPU agents streaming the same far target", "`gpu_reg_{dir}_beside_cpu_bw_gbs` renamed on far targets", "003 Sec. 2.3").vars(&[DIR]).of("gpu_reg_{dir}_beside_cpu_bw_gbs"),
    key("gpu_pool_{dir}_beside_cpu_ratio", Ratio, "gpu.pool", GPU_POOL, "the GPU's bandwidth beside the CPU agents / alone, far memory", "`gpu_reg_{dir}_beside_cpu_ratio` renamed on far targets", "003 Sec. 2.3").vars(&[DIR]).of("gpu_reg_{dir}_beside_cpu_ratio"),
    key("gpu_pool_cpu_beside_{dir}_bw_gbs", Gbs, "gpu.pool", GPU_POOL, "the CPU agents' summed bandwidth on a far target while the GPU copies on it", "`gpu_reg_cpu_beside_{dir}_bw_gbs` renamed on far targets", "003 Sec. 2.3").vars(&[DIR]).of("gpu_reg_cpu_beside_{dir}_bw_gbs"),
    key("gpu_pool_cpu_beside_{dir}_ratio", Ratio, "gpu.pool", GPU_POOL, "the CPU agents' bandwidth beside the GPU / alone, far memory", "`gpu_reg_cpu_beside_{dir}_ratio` renamed on far targets", "003 Sec. 2.3").vars(&[DIR]).of("gpu_reg_cpu_beside_{dir}_ratio"),
    // ---------------------------------------------------------------- mem.scan
    key("scan_bw_min_gbs", Gbs, "mem.scan", "cxlchar mem scan", "read bandwidth of the slowest address range of a large region, all CPUs of the target's node", "read kernel over each range in turn (1 GiB on far memory, 256 MiB elsewhere, at least the DRAM working set; `--range`), each range the p50 of the crew's undisturbed windows' aggregates; the least range (its backing in the measurement's `scan.ranges`)", "").far("cxl_scan_bw_min_gbs"),
    key("scan_bw_median_gbs", Gbs, "mem.scan", "cxlchar mem scan", "read bandwidth of the median address range", "as `scan_bw_min_gbs`: the median of the ranges' figures", "").far("cxl_scan_bw_median_gbs"),
    key("scan_nt_write_bw_min_gbs", Gbs, "mem.scan", "cxlchar mem scan", "non-temporal write bandwidth of the slowest address range", "as `scan_bw_min_gbs` with the non-temporal store kernel (x86_64: movntdq family + sfence; AArch64: `stnp`/`stnt1b` hints)", "").far("cxl_scan_nt_write_bw_min_gbs"),
    key("scan_nt_write_bw_median_gbs", Gbs, "mem.scan", "cxlchar mem scan", "non-temporal write bandwidth of the median address range", "as `scan_nt_write_bw_min_gbs`: the median of the ranges' figures", "").far("cxl_scan_nt_write_bw_median_gbs"),
    key("scan_slow_ranges", Ranges, "mem.scan", "cxlchar mem scan", "address ranges slower than the median by more than the run's noise, reads or non-temporal writes (0: every range streams alike)", "a range is slow when its figure < median - max(3 x 1.4826 x MAD, its own windows' half-range, 3 % of the median), the median and MAD over the undisturbed ranges; a noisy range is never slow; at least 4 ranges (else absent, with a `scan_few_ranges` warning); listed with their backing in a `scan_slow_ranges` warning", "").far("cxl_scan_slow_ranges"),
    key("cxl_scan_bw_min_gbs", Gbs, "mem.scan", "cxlchar mem scan --target node:N (a memory-only node) or --target dax:/dev/daxX.Y; part of cxlchar all on far memory", "`scan_bw_min_gbs` on far memory", "`scan_bw_min_gbs` renamed by the runner on far targets", "").of("scan_bw_min_gbs"),
    key("cxl_scan_bw_median_gbs", Gbs, "mem.scan", "cxlchar mem scan --target node:N (a memory-only node) or --target dax:/dev/daxX.Y; part of cxlchar all on far memory", "`scan_bw_median_gbs` on far memory", "`scan_bw_median_gbs` renamed on far targets", "").of("scan_bw_median_gbs"),
    key("cxl_scan_nt_write_bw_min_gbs", Gbs, "mem.scan", "cxlchar mem scan --target node:N (a memory-only node) or --target dax:/dev/daxX.Y; part of cxlchar all on far memory", "`scan_nt_write_bw_min_gbs` on far memory", "`scan_nt_write_bw_min_gbs` renamed on far targets", "").of("scan_nt_write_bw_min_gbs"),
    key("cxl_scan_nt_write_bw_median_gbs", Gbs, "mem.scan", "cxlchar mem scan --target node:N (a memory-only node) or --target dax:/dev/daxX.Y; part of cxlchar all on far memory", "`scan_nt_write_bw_median_gbs` on far memory", "`scan_nt_write_bw_median_gbs` renamed on far targets", "").of("scan_nt_write_bw_median_gbs"),
    key("cxl_scan_slow_ranges", Ranges, "mem.scan", "cxlchar mem scan --target node:N (a memory-only node) or --target dax:/dev/daxX.Y; part of cxlchar all on far memory", "`scan_slow_ranges` on far memory: ranges of a CXL node or device slower than the median (one device of an interleave behind a narrow link, a degraded DIMM)", "`scan_slow_ranges` renamed on far targets", "").of("scan_slow_ranges"),
    // ---------------------------------------------------------------- pcie.links
    key("pcie_links_degraded", Count, "pcie.links", "cxlchar targets (every run records the links)", "PCIe links running below the speed or width both ends can do (0: every judged link at its capability)", "each device's current_link_speed/width against the lower of its own and its immediate upstream port's max_link_speed/width, from sysfs; one link per device and port (its functions together); a GPU judged by width only (it lowers its speed when idle); absent when no link could be judged; each degraded link a `link_degraded` warning, every link in params.json's `links`", ""),
    // ---------------------------------------------------------------- not measured
    external("mpi_lat_ns", Ns, OSU, "MPI small-message latency (MPI_LAT)", "000 (Hockney term)", MSG_PATH),
    external("mpi_bw_gbs", Gbs, OSU, "MPI bandwidth (MPI_BW)", "000 (Hockney term)", MSG_PATH),
    external("md_setup_ns", Ns, POST_PROFILE, "message descriptor setup (micro-op stand-in measured by cxlchar: md_write_64b_ns, `cxlchar pcie post-parts`)", "004 Table 1", LLP_POST),
    external("md_barrier_ns", Ns, POST_PROFILE, "barrier for the message descriptor (micro-op stand-in: store_barrier_ns, `cxlchar pcie post-parts`)", "004 Table 1", LLP_POST),
    external("dbc_barrier_ns", Ns, POST_PROFILE, "barrier for the doorbell counter (micro-op stand-in: dbc_store_barrier_ns, `cxlchar pcie post-parts`)", "004 Table 1", LLP_POST),
    external("post_misc_ns", Ns, POST_PROFILE, "miscellaneous in LLP_post (no micro-op stand-in: the 004-llp-post model shows llp_post_inline_ns minus the micro-ops as a gap that holds it)", "004 Table 1", LLP_POST),
    external("hlp_post_ns", Ns, PROFILE, "MPI/UCP part of a post (HLP_post)", "004 Sec. 5", &[IM4, E4]),
    external("hlp_tx_prog_ns", Ns, PROFILE, "MPI/UCP send-side progress", "004 Sec. 5", &[]),
    external("hlp_rx_prog_ns", Ns, PROFILE, "MPI/UCP receive-side progress (HLP_rx_prog)", "004 Sec. 5", &[E4]),
    external("post_prog_ns", Ns, PROFILE, "progress of a post (Post_prog)", "004 Sec. 5", &[IM4]),
    external("hlp_misc_ns", Ns, PROFILE, "amortized busy posts per operation", "004 Sec. 5", &[IM4]),
    external("pcie_ns", Ns, PCIE_ONE_WAY, "one-way PCIe latency at the link, NIC <-> root complex (PCIe analyzer)", "004 Table 1 (PCIe)", LATENCY),
    external("rc_to_mem_8b_ns", Ns, RC_TO_MEM, "root complex to memory, 8 bytes", "004 Table 1 (RC-to-MEM)", LATENCY),
    external("net_ns", Ns, WIRE, "network (wire + switch)", "004 Table 1 (Network)", LATENCY),
    external("net_wire_ns", Ns, WIRE, "wire", "004 Table 1", LATENCY),
    external("net_switch_ns", Ns, WIRE, "switch (0 for a direct link)", "004 Table 1", LATENCY),
    KeyDef {
        origin: Origin::Environment,
        models: &[N1],
        ..key("l2_size_bytes", Bytes, "environment", ENV_L2, "size of one L2 cache instance", "environment.topology.caches, unless the file has the key", "001 (L2 / P rule)")
    },
];
