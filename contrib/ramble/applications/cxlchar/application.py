# cxlchar as a Ramble application (Benchpark runs experiments through Ramble).
# UNTESTED: no Ramble installation has run it yet; see contrib/spack/README.md.

from ramble.appkit import *


class Cxlchar(ExecutableApplication):
    """Memory, interconnect and device costs of a node as model parameters (params.json):
    cxlchar all, or one family, with its headline keys as figures of merit."""

    name = "cxlchar"

    tags("memory", "latency", "bandwidth", "cxl", "rdma", "gpu")

    software_spec("cxlchar", pkg_spec="cxlchar")

    required_package("cxlchar")

    executable(
        "measure",
        "cxlchar {command} --out {experiment_run_dir}/params.json",
        use_mpi=False,
    )
    # One line per headline key, from params.json, for the figures of merit below.
    executable(
        "keys",
        "python3 -c \"import json; p=json.load(open('{experiment_run_dir}/params.json'))['params']; "
        "[print(f'cxlchar {k} = {p[k]}') for k in sorted(p) if '@' not in k]\"",
        use_mpi=False,
        output_capture=">>",
    )

    workload("all", executables=["measure", "keys"])
    workload("quick", executables=["measure", "keys"])

    workload_variable(
        "command",
        default="all",
        description="The cxlchar command and options",
        workloads=["all"],
    )
    workload_variable(
        "command",
        default="all --quick",
        description="The cxlchar command and options",
        workloads=["quick"],
    )

    for key, unit in (
        ("mem_lat_ns", "ns"),
        ("l1_lat_ns", "ns"),
        ("l2_lat_ns", "ns"),
        ("l3_lat_ns", "ns"),
        ("mem_bw_gbs", "GB/s"),
        ("mem_write_bw_gbs", "GB/s"),
        ("nt_copy_bw_gbs", "GB/s"),
        ("cxl_lat_ns", "ns"),
        ("cxl_bw_gbs", "GB/s"),
    ):
        figure_of_merit(
            key,
            fom_regex=r"cxlchar " + key + r" = (?P<value>[0-9.eE+-]+)",
            group_name="value",
            units=unit,
        )

    success_criteria("wrote_params", mode="string", match=r"cxlchar mem_lat_ns = ")
