#!/usr/bin/env python3
"""JUnit XML with performance variables, from a ReFrame run report.

ReFrame's own ``--report-junit`` lists each test case and its verdict but not the figures
it measured. This reads the JSON report (``reframe ... --report-file run.json``) and writes
JUnit XML with one test case per test and node, each carrying its performance variables as
properties (value, unit, and the reference with its bounds where one was set), so a CI
system shows the figures next to the verdicts.

    junit_perf.py run.json > cxlchar-junit.xml
"""

import json
import math
import re
import sys
import xml.etree.ElementTree as ET

# Characters XML 1.0 cannot hold (C0 controls but tab, newline and carriage return; lone
# surrogates; U+FFFE, U+FFFF), and the controls a reader should see rather than obey (DEL,
# C1, the bidirectional-text controls).
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def text(v):
    """``v`` as text a JUnit file can hold: each character XML forbids, or that could
    reorder or recolour what a reader shows, written as its escape (``\\x1b``,
    ``\\u202e``)."""
    s = v if isinstance(v, str) else str(v)
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", s)


def seconds(v):
    """A test case's ``time``: ReFrame's ``time_total`` when it is a finite number of
    seconds, else 0 (JUnit readers take only a number there)."""
    try:
        t = float(v)
    except (TypeError, ValueError):
        return "0.000"
    return f"{t:.3f}" if math.isfinite(t) and t >= 0 else "0.000"


def case_name(tc):
    """``CxlcharAll on node7 (system:partition)``: the test, where it ran."""
    nodelist = tc.get("job_nodelist")
    nodes = ",".join(map(str, nodelist)) if isinstance(nodelist, list) else ""
    return text(f"{tc.get('display_name') or tc.get('name')} on {nodes or 'local'} "
                f"({tc.get('system')})")


def add_case(suite, tc):
    """One test case with its performance variables as properties."""
    if not isinstance(tc, dict):
        tc = {"name": repr(tc)}
    case = ET.SubElement(suite, "testcase", classname=text(tc.get("filename") or "reframe"),
                         name=case_name(tc), time=seconds(tc.get("time_total")))
    props = ET.SubElement(case, "properties")
    perf = tc.get("perfvalues")
    for name, pv in sorted((perf if isinstance(perf, dict) else {}).items()):
        pv = list(pv) if isinstance(pv, (list, tuple)) else [pv]
        value, ref, lower, upper, unit, result = (pv + [None] * 6)[:6]
        attrs = {"name": text(str(name).split(":")[-1]), "value": text(repr(value)),
                 "unit": text(unit or "")}
        if ref:
            attrs.update(reference=text(repr(ref)), lower=text(repr(lower)),
                         upper=text(repr(upper)))
        if result:
            attrs["result"] = text(result)
        ET.SubElement(props, "property", attrs)
    if tc.get("result") == "fail":
        f = ET.SubElement(case, "failure", type="failure", message=text(tc.get("fail_phase")))
        f.text = text(f"{tc.get('fail_phase')}: {tc.get('fail_reason')}")
    return tc.get("result") == "fail"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            report = json.load(f)
        runs = report["runs"]
        if not isinstance(runs, list):
            raise TypeError("runs is not a list")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"junit_perf: {argv[1]}: not a ReFrame run report ({e})", file=sys.stderr)
        return 2
    root = ET.Element("testsuites")
    for i, run in enumerate(runs):
        cases = run.get("testcases") if isinstance(run, dict) else None
        cases = cases if isinstance(cases, list) else []
        suite = ET.SubElement(root, "testsuite", name=f"ReFrame run {i}", tests=str(len(cases)),
                              failures="0", errors="0")
        failures = sum(add_case(suite, tc) for tc in cases)
        suite.set("failures", str(failures))
    ET.indent(root)
    sys.stdout.write(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
