# cxlchar's Spack package (a repository of one package: `spack repo add contrib/spack`).
# UNTESTED: no Spack installation has built it yet; see contrib/spack/README.md.

import os

from spack.package import *


class Cxlchar(CargoPackage):
    """Characterize the memory, interconnect and device costs of a machine (load latency on
    DRAM, CXL and dax memory, bandwidth, non-temporal copies, atomics, flush costs, PCIe
    MMIO, RDMA verbs post costs, GPU DMA) as model parameters (params.json)."""

    # cxlchar has no public home yet: fetch from the clone a site keeps (CXLCHAR_GIT_URL,
    # e.g. file:///opt/src/cxlchar or its internal Git server), or build a checkout with
    # `spack develop --path <checkout> cxlchar@main` inside a Spack environment.
    git = os.environ.get("CXLCHAR_GIT_URL")

    license("Apache-2.0")

    version("main", branch="main")

    variant("verbs", default=False, description="RDMA verbs measurements (links libibverbs)")

    depends_on("rust@1.85:", type="build")
    depends_on("rdma-core", when="+verbs")
    # The GPU family needs no build dependency: it loads the CUDA driver library
    # (libcuda.so.1, from the NVIDIA driver) at run time and is skipped where there is none.

    conflicts("platform=darwin", msg="cxlchar reads Linux sysfs and uses Linux system calls")
    conflicts("platform=windows", msg="cxlchar reads Linux sysfs and uses Linux system calls")

    @property
    def build_directory(self):
        # The repository root is a virtual workspace: the binary's crate is runner/.
        return join_path(self.stage.source_path, "runner")

    @property
    def build_args(self):
        args = ["-j", str(make_jobs), "--locked"]
        if self.spec.satisfies("+verbs"):
            args += ["--features", "verbs"]
        return args

    @run_after("install")
    def install_man_and_completions(self):
        cxlchar = Executable(join_path(self.prefix.bin, "cxlchar"))
        man1 = join_path(self.prefix.share, "man", "man1")
        mkdirp(man1)
        cxlchar("man", "--out", man1)
        for shell, rel in (
            ("bash", join_path("bash-completion", "completions", "cxlchar")),
            ("zsh", join_path("zsh", "site-functions", "_cxlchar")),
            ("fish", join_path("fish", "vendor_completions.d", "cxlchar.fish")),
        ):
            path = join_path(self.prefix.share, rel)
            mkdirp(dirname(path))
            with open(path, "w") as f:
                cxlchar("completions", shell, output=f)

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_version(self):
        Executable(join_path(self.prefix.bin, "cxlchar"))("--version")
