#!/usr/bin/env python3
"""Prints the test executables in cargo's JSON messages (stdin), one path a line.

    cargo test --no-run --message-format=json | ci/test-binaries.py [--lib] [--with-dir]

--lib: only the crates' unit-test binaries (the #[ignore]d lab_* tests live there).
--with-dir: each line is "executable<TAB>package directory<TAB>target name" (a test runs
in its package's directory, as cargo runs it).
Used by ci/lab/run, ci/gpu-tests.sh and ci/arm-check.
"""
import os
import json
import sys

only_lib = "--lib" in sys.argv[1:]
with_dir = "--with-dir" in sys.argv[1:]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    # A test harness, not a program built for one (the cxlchar binary the tests run).
    if not m.get("profile", {}).get("test"):
        continue
    if only_lib and m["target"]["kind"] != ["lib"]:
        continue
    if with_dir:
        pkg = os.path.dirname(m["manifest_path"])
        print(f'{m["executable"]}\t{pkg}\t{m["target"]["name"]}')
    else:
        print(m["executable"])
