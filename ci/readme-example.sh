#!/usr/bin/env bash
# The README's example output and run times, measured anew on this machine: a release
# build runs `cxlchar all --quick` and `cxlchar all` into results/readme/, then the test
# that renders the README's generated blocks from those files rewrites them
# (runner/src/export/readme.rs). Commit README.md and results/readme/ together.
# About 3 minutes on a 2-vCPU guest, plus the build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p cxlchar
bin=target/release/cxlchar
mkdir -p results/readme
"$bin" all --quick --out results/readme/all-quick.json >/dev/null
"$bin" all --out results/readme/all.json >/dev/null
CXLCHAR_BLESS=1 cargo test -p cxlchar --bin cxlchar export::readme
git --no-pager diff --stat -- README.md results/readme
