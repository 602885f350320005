"""ReFrame tests that run cxlchar on the nodes of a partition.

Each test runs one cxlchar command on one node (``all`` by default) with ``--out
params.json`` in its stage directory, and exposes the measured keys of that file as
ReFrame performance variables, each with the unit cxlchar gives it. References come from a
cxlchar spec file (the same TOML ``cxlchar check --spec`` reads; one source of truth for
bounds): its absolute bounds become ReFrame references, and the whole spec, relative bounds
included (``expr = "2.5 * mem_lat_ns"``), is checked by ``cxlchar check`` after the run,
whose verdict is part of the test's sanity.

Variables (``-S name=value`` on ReFrame's command line, or a subclass):

- ``cxlchar``: the binary (default: ``$CXLCHAR``, else ``cxlchar`` on the PATH).
- ``command``: the cxlchar command and options, comma-separated with ``-S``
  (default ``all``; e.g. ``-S command=mem,latency,--quick``).
- ``spec``: a spec file (default: ``$CXLCHAR_SPEC``, else none: no references, no check).
- ``keys``: the keys to report (default: every measured key without an ``@target``
  suffix).

One test per node: run with ``--distribute=all`` (or ``idle``) under Slurm, and ReFrame
makes one copy of each test per node of the partition. On a laptop or CI machine the
generic local system runs one.

    reframe -c contrib/reframe/cxlchar_checks.py -r --report-junit cxlchar.xml
    reframe -c contrib/reframe/cxlchar_checks.py -r --distribute=idle \\
        -S spec=results/specs/cxl-expander.toml --report-junit cxlchar.xml
"""

import json
import os
import shlex

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import (run_after, run_before, sanity_function,
                                   variable)

#: The unit ReFrame shows for a key whose params.json entry names none: cxlchar's keys
#: carry their unit in their name (``_ns``, ``_gbs``, ``_bytes``).
SUFFIX_UNITS = (("_ns", "ns"), ("_gbs", "GB/s"), ("_bytes", "B"), ("_ratio", ""))

#: How cxlchar check reports: 0 every bound held, 1 a bound failed, 3 a required key was
#: not measured, 2 the spec or the file is invalid.
CHECK_PASSED = 0


def unit_of(key, info):
    """The unit of ``key``: params.json's ``param_info``, else the name's suffix."""
    unit = (info.get(key) or {}).get("unit")
    if unit:
        return unit
    for suffix, u in SUFFIX_UNITS:
        if key.endswith(suffix):
            return u
    return ""


def references_from_spec(path, units):
    """ReFrame references from a spec's absolute bounds (``value = N``).

    A key bounded above and below becomes ``(max, min/max - 1, 0, unit)``; above only
    ``(max, None, 0, unit)``; below only ``(min, 0, None, unit)``. Bounds written as an
    expression of other keys are left to ``cxlchar check``, which the test runs too.
    """
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    lo, hi = {}, {}
    for b in spec.get("bound", []):
        if "value" not in b or "key" not in b:
            continue
        v = float(b["value"])
        if b.get("op") in ("<=", "<"):
            hi[b["key"]] = min(v, hi.get(b["key"], v))
        elif b.get("op") in (">=", ">"):
            lo[b["key"]] = max(v, lo.get(b["key"], v))
    refs = {}
    for key in set(lo) | set(hi):
        unit = units.get(key, unit_of(key, {}))
        if key in hi and key in lo and hi[key] != 0:
            refs[key] = (hi[key], lo[key] / hi[key] - 1, 0, unit)
        elif key in hi:
            refs[key] = (hi[key], None, 0, unit)
        elif lo[key] != 0:
            refs[key] = (lo[key], 0, None, unit)
    return refs


@sn.deferrable
def param(path, key):
    """The value of ``key`` in the params file at ``path``."""
    with open(path) as f:
        return json.load(f)["params"][key]


class CxlcharBase(rfm.RunOnlyRegressionTest):
    """Runs one cxlchar command on one node and reports its keys."""

    cxlchar = variable(str, value=os.environ.get("CXLCHAR", "cxlchar"))
    command = variable(typ.List[str], value=["all"])
    spec = variable(str, type(None), value=os.environ.get("CXLCHAR_SPEC"))
    keys = variable(typ.List[str], type(None), value=None)

    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    num_tasks = 1
    num_tasks_per_node = 1
    time_limit = "1h"
    tags = {"cxlchar"}

    @run_before("run")
    def set_command(self):
        self.executable = self.cxlchar
        self.executable_opts = list(self.command) + ["--out", "params.json"]
        if self.spec:
            spec = os.path.abspath(self.spec)
            self.postrun_cmds = [
                f"{shlex.quote(self.cxlchar)} check --spec {shlex.quote(spec)} "
                "params.json --junit check.xml > check.txt; "
                'echo "cxlchar check exit: $?"'
            ]

    @sanity_function
    def validate(self):
        """cxlchar wrote a complete params.json (it exits 0 only when what was asked was
        measured, and replaces --out only with a complete file), and the spec held."""
        ok = sn.assert_true(
            sn.path_exists(os.path.join(self.stagedir, "params.json")),
            msg="cxlchar wrote no params.json (see the test's stderr)",
        )
        if not self.spec:
            return ok
        code = sn.extractsingle(r"cxlchar check exit: (\d+)", self.stdout, 1, int)
        return sn.all([
            ok,
            sn.assert_eq(code, CHECK_PASSED,
                         msg="cxlchar check exited {0}: see check.txt"),
        ])

    @run_before("performance")
    def set_perf_variables(self):
        path = os.path.join(self.stagedir, "params.json")
        with open(path) as f:
            doc = json.load(f)
        params, info = doc.get("params", {}), doc.get("param_info", {})
        keys = self.keys or sorted(k for k in params if "@" not in k)
        units = {k: unit_of(k, info) for k in keys}
        self.perf_variables = {
            k: sn.make_performance_function(param(path, k), units[k])
            for k in keys if k in params
        }
        if self.spec:
            refs = references_from_spec(self.spec, units)
            self.reference = {"*": {k: r for k, r in refs.items() if k in params}}


@rfm.simple_test
class CxlcharAll(CxlcharBase):
    """``cxlchar all`` (or the ``command`` given) on one node: every measured key a
    performance variable, the spec's bounds its references."""

    descr = "cxlchar: memory, interconnect and device costs as model parameters"
