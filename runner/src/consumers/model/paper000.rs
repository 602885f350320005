//! Seed 000 (Message-Free Communication via CXL.mem): message vs CXL transfer time
//! (Sec. IV-A, eqs. (1), (2)), the data-access model (Sec. IV-B, IV-C, eqs. (3)-(10)) of a
//! workload given with `--workload` ([`super::workload`]), and a cxlchar extension that
//! adds one streaming read of the buffer.

use super::eval::{Ctx, Model};
use super::inputs::Baseline;

/// Message sizes at which the transfer models are tabulated (bytes).
pub const SIZES: [f64; 5] = [64.0, 4096.0, 65536.0, 1048576.0, 16777216.0];

fn size_name(m: f64) -> String {
    let m = m as u64;
    if m >= 1 << 20 && m.is_multiple_of(1 << 20) {
        format!("{}m", m >> 20)
    } else if m >= 1 << 10 && m.is_multiple_of(1 << 10) {
        format!("{}k", m >> 10)
    } else {
        format!("{m}")
    }
}

/// Seed 000's network baseline (Sec. V-B: osu_latency/osu_bw), in order of preference.
const NETWORK_PATHS: [(&str, &str, &str); 2] = [
    (
        "mpi_lat_ns",
        "mpi_bw_gbs",
        "network: MPI (osu_latency/osu_bw), the paper's baseline",
    ),
    (
        "verbs_lat_ns",
        "verbs_bw_gbs",
        "network: RDMA verbs (ib_send_lat/ib_write_bw), standing in for MPI without MPI's \
         software overhead",
    ),
];

/// Shared-memory messaging, used only with `--baseline shm`.
const SHM_PATHS: [(&str, &str, &str); 2] = [
    (
        "pool_hockney_lat_ns",
        "pool_hockney_bw_gbs",
        "shared memory (--baseline shm): pool messaging, Hockney fit over message sizes",
    ),
    (
        "pool_msg_lat_ns",
        "pool_msg_bw_gbs",
        "shared memory (--baseline shm): pool ring messaging (cMPI-style)",
    ),
];

/// The message baseline of seed 000's Hockney term (`MPI_LAT`, `MPI_BW`): the first pair
/// present among the network paths, or, with `--baseline shm`, among the shared-memory
/// paths. The note names the one used.
fn msg_path(c: &mut Ctx) -> (f64, f64) {
    let (paths, alt) = match c.inputs.msg_baseline {
        Baseline::Network => (
            NETWORK_PATHS,
            "the network baseline: MPI figures supplied with --what-if mpi_lat_ns=.. \
             --what-if mpi_bw_gbs=.., or the pair verbs_lat_ns + verbs_bw_gbs (cxlchar verbs); \
             shared-memory messaging (pool_*) stands in only with --baseline shm",
        ),
        Baseline::Shm => (
            SHM_PATHS,
            "--baseline shm: or the pair pool_msg_lat_ns + pool_msg_bw_gbs",
        ),
    };
    for (l, b, what) in paths {
        if c.has(l) && c.has(b) {
            c.notes.push(format!(
                "message baseline: {what} ({l}, {b} as MPI_LAT, MPI_BW)"
            ));
            return (c.need(l), c.need(b));
        }
    }
    let (l, b, _) = paths[0];
    (c.need_note(l, alt), c.need_note(b, alt))
}

fn eval_000_transfer(c: &mut Ctx) {
    let (lat, bw) = msg_path(c);
    let atomic = c.need("cxl_atomic_lat_ns");
    if !c.missing.is_empty() {
        return;
    }
    let t_cxl = 2.0 * atomic;
    c.out(
        "t_cxl_transfer_ns",
        t_cxl,
        "ns",
        "CXL transfer: 2 x CXL_ATOMIC_LAT, independent of size (eq. 2)",
    );
    for m in SIZES {
        c.out(
            &format!("t_msg_transfer_{}_ns", size_name(m)),
            lat + m / bw,
            "ns",
            &format!("message transfer of {} bytes (eq. 1)", m as u64),
        );
    }
    let cross = ((t_cxl - lat) * bw).max(0.0);
    c.out(
        "crossover_bytes",
        cross,
        "bytes",
        "message size above which the CXL transfer (eq. 2) is cheaper than the message (eq. 1); 0: CXL cheaper at every size",
    );
}

/// Seed 000's whole model for one workload: eqs. (1)-(10).
fn eval_000_access(c: &mut Ctx) {
    let (mpi_lat_ns, mpi_bw_gbs) = msg_path(c);
    let hw = super::workload::Hardware {
        mem_lat_ns: c.need("mem_lat_ns"),
        cxl_lat_ns: c.need("cxl_lat_ns"),
        cxl_atomic_lat_ns: c.need("cxl_atomic_lat_ns"),
        mpi_lat_ns,
        mpi_bw_gbs,
    };
    let Some(w) = c.inputs.workload.clone() else {
        c.need_input(
            "--workload FILE",
            "a TOML file of the workload's PAPI metrics (eq. 3), its MPI trace (message \
             sizes) and its traced load samples by data source (eqs. 5-10); docs/consumers.md \
             shows one",
        );
        return;
    };
    if !c.missing.is_empty() {
        return;
    }
    c.notes.extend(w.interpretation());
    let a = w.evaluate(&hw);
    for (set, ws) in [("first", a.first), ("subsequent", a.subsequent)] {
        for class in super::workload::Class::ALL {
            c.out(
                &format!("w_{set}_{}_ratio", class.name()),
                ws[class as usize],
                "ratio",
                &format!(
                    "weight of {} for {set} loads (eqs. 3, 4, footnote 17; CXL term eq. {})",
                    class.name().to_uppercase(),
                    class.equation()
                ),
            );
        }
    }
    let rows = [
        (
            "t_transfer_mpi_ns",
            a.t_transfer_mpi_ns,
            "MPI transfer over the trace (eq. 1)",
        ),
        (
            "t_transfer_cxl_ns",
            a.t_transfer_cxl_ns,
            "CXL transfer: 2 atomics per message (eq. 2)",
        ),
        (
            "t_access_mpi_ns",
            a.t_access_mpi_ns,
            "data access, MPI scenario (eq. 5)",
        ),
        (
            "t_access_cxl_ns",
            a.t_access_cxl_ns,
            "data access, CXL scenario (eqs. 6-10, weighted)",
        ),
    ];
    for (name, v, note) in rows {
        c.out(name, v, "ns", note);
    }
    let mpi = a.t_transfer_mpi_ns + a.t_access_mpi_ns;
    let cxl = a.t_transfer_cxl_ns + a.t_access_cxl_ns;
    c.out(
        "t_mpi_ns",
        mpi,
        "ns",
        "MPI communication overhead: transfer + access",
    );
    c.out(
        "t_cxl_ns",
        cxl,
        "ns",
        "CXL communication overhead: transfer + access",
    );
    c.out(
        "speedup_cxl_factor",
        mpi / cxl,
        "ratio",
        "MPI overhead / CXL overhead (> 1: CXL faster)",
    );
}

/// The cxlchar extension `000-ext-stream` (not seed 000's data-access model).
fn eval_000_ext_stream(c: &mut Ctx) {
    let (lat, bw) = msg_path(c);
    let atomic = c.need("cxl_atomic_lat_ns");
    let mem_lat = c.need("mem_lat_ns");
    let cxl_lat = c.need("cxl_lat_ns");
    let mem_bw = c.need("mem_bw_gbs");
    let cxl_bw = if !c.has("cxl_bw_gbs") && c.has("cxl_bw_factor") {
        c.notes
            .push("CXL_BW = mem_bw_gbs x cxl_bw_factor (local-vs-pool bandwidth factor)".into());
        mem_bw * c.need("cxl_bw_factor")
    } else {
        c.need_note(
            "cxl_bw_gbs",
            "or cxl_bw_factor (pool/local bandwidth ratio)",
        )
    };
    if !c.missing.is_empty() {
        return;
    }
    c.notes.push(
        "cxlchar extension, not seed 000's model: the data access is one cold streaming read \
         of the buffer (lat + m/bw, with a CXL bandwidth term the paper does not have); the \
         paper's data-access model, eqs. (3)-(10), is 000-access (needs --workload)"
            .into(),
    );
    let mpi = |m: f64| lat + m / bw + mem_lat + m / mem_bw;
    let cxl = |m: f64| 2.0 * atomic + cxl_lat + m / cxl_bw;
    for m in SIZES {
        let (a, b) = (mpi(m), cxl(m));
        c.out(
            &format!("t_msg_total_{}_ns", size_name(m)),
            a,
            "ns",
            "message: MPI_LAT + m/MPI_BW + MEM_LAT + m/MEM_BW",
        );
        c.out(
            &format!("t_cxl_total_{}_ns", size_name(m)),
            b,
            "ns",
            "CXL: 2 x CXL_ATOMIC_LAT + CXL_LAT + m/CXL_BW",
        );
        c.out(
            &format!("speedup_cxl_{}_factor", size_name(m)),
            a / b,
            "ratio",
            "message time / CXL time (> 1: CXL faster)",
        );
    }
    // lat + mem_lat + m*(1/bw + 1/mem_bw) = 2a + cxl_lat + m/cxl_bw
    let slope = 1.0 / bw + 1.0 / mem_bw - 1.0 / cxl_bw;
    let offset = 2.0 * atomic + cxl_lat - lat - mem_lat;
    let (cross, note) = if slope.abs() < 1e-15 {
        (
            0.0,
            "parallel lines: one path is faster at every size (see the speedups)",
        )
    } else {
        let m = offset / slope;
        if m <= 0.0 {
            (
                0.0,
                "no crossover at a positive size: one path is faster at every size (see the speedups)",
            )
        } else if slope > 0.0 {
            (m, "CXL faster above this size, message path below")
        } else {
            (m, "CXL faster below this size, message path above")
        }
    };
    c.out("crossover_bytes", cross, "bytes", note);
}

/// The models of seed 000.
pub(super) fn models() -> Vec<Model> {
    vec![
        Model {
            id: "000-transfer",
            title: "message vs CXL transfer time (Hockney vs 2 atomics)",
            source: "seed 000 (Message-Free Communication via CXL.mem), Sec. IV-A, eqs. (1), (2)",
            equation: "T_msg(m) = MPI_LAT + m / MPI_BW;  T_cxl = 2 x CXL_ATOMIC_LAT;  crossover m* = (2 x CXL_ATOMIC_LAT - MPI_LAT) x MPI_BW",
            eval: eval_000_transfer,
        },
        Model {
            id: "000-access",
            title: "communication overhead of a workload: transfer + data access, MPI vs CXL",
            source: "seed 000 (Message-Free Communication via CXL.mem), Sec. IV, eqs. (1)-(10); workload from --workload",
            equation: "T = T_Transfer + T_Access;  T_Access^MPI = sum(lat) x rate / lpf (5);  T_Access^CXL = sum over classes W_c x eq. (6)-(10), weights from eqs. (3), (4) for first (1/n) and subsequent loads",
            eval: eval_000_access,
        },
        Model {
            id: "000-ext-stream",
            title: "EXTENSION (not in seed 000): message vs CXL transfer plus one streaming read of the buffer",
            source: "cxlchar extension of seed 000's eqs. (1), (2); its data-access term is not the paper's eqs. (3)-(10)",
            equation: "T_msg(m) = MPI_LAT + m/MPI_BW + MEM_LAT + m/MEM_BW;  T_cxl(m) = 2 x CXL_ATOMIC_LAT + CXL_LAT + m/CXL_BW",
            eval: eval_000_ext_stream,
        },
    ]
}
