#!/usr/bin/env python3
"""Prints the test executables in cargo's JSON messages (stdin), one path a line.

    cargo test --no-run --message-format=json | ci/test-binaries.py [--lib]

--lib: only the crates' unit-test binaries (the #[ignore]d lab_* tests live there).
Used by ci/lab/run and ci/gpu-tests.sh.
"""
import json
import sys

only_lib = "--lib" in sys.argv[1:]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if only_lib and m["target"]["kind"] != ["lib"]:
        continue
    print(m["executable"])
