# ReFrame's configuration of the emulated lab (ci/lab/guest.sh): the two guests lab-a and
# lab-b, one Slurm partition `lab` without accounting (so ReFrame's squeue scheduler, not
# sacct), a job per test running cxlchar directly on its node (cxlchar is not an MPI
# program: the local launcher). `reframe --distribute=idle` makes one test per node.
site_configuration = {
    "systems": [
        {
            "name": "lab",
            "descr": "cxlchar's emulated lab: two QEMU guests under Slurm",
            "hostnames": ["lab-a", "lab-b"],
            "partitions": [
                {
                    "name": "lab",
                    "descr": "both guests, one TCG vCPU each",
                    "scheduler": "squeue",
                    "launcher": "local",
                    "access": ["-p lab"],
                    "environs": ["builtin"],
                    "max_jobs": 2,
                }
            ],
        }
    ],
    "environments": [{"name": "builtin"}],
}
