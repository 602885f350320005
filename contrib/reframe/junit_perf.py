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
import sys
import xml.etree.ElementTree as ET


def case_name(tc):
    """``CxlcharAll on node7 (system:partition)``: the test, where it ran."""
    nodes = ",".join(tc.get("job_nodelist") or []) or "local"
    return f"{tc.get('display_name') or tc.get('name')} on {nodes} ({tc.get('system')})"


def add_case(suite, tc):
    """One test case with its performance variables as properties."""
    case = ET.SubElement(suite, "testcase", classname=tc.get("filename") or "reframe",
                         name=case_name(tc), time=f"{float(tc.get('time_total') or 0):.3f}")
    props = ET.SubElement(case, "properties")
    for name, pv in sorted((tc.get("perfvalues") or {}).items()):
        value, ref, lower, upper, unit, result = (list(pv) + [None] * 6)[:6]
        attrs = {"name": name.split(":")[-1], "value": repr(value), "unit": unit or ""}
        if ref:
            attrs.update(reference=repr(ref), lower=repr(lower), upper=repr(upper))
        if result:
            attrs["result"] = str(result)
        ET.SubElement(props, "property", attrs)
    if tc.get("result") == "fail":
        f = ET.SubElement(case, "failure", type="failure", message=str(tc.get("fail_phase")))
        f.text = f"{tc.get('fail_phase')}: {tc.get('fail_reason')}"
    return tc.get("result") == "fail"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            report = json.load(f)
        runs = report["runs"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"junit_perf: {argv[1]}: not a ReFrame run report ({e})", file=sys.stderr)
        return 2
    root = ET.Element("testsuites")
    for i, run in enumerate(runs):
        cases = run.get("testcases") or []
        suite = ET.SubElement(root, "testsuite", name=f"ReFrame run {i}", tests=str(len(cases)),
                              failures="0", errors="0")
        failures = sum(add_case(suite, tc) for tc in cases)
        suite.set("failures", str(failures))
    ET.indent(root)
    sys.stdout.write(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
