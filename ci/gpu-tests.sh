#!/usr/bin/env bash
# The GPU hardware tests (the #[ignore]d tests of bench-gpu/tests/hardware.rs), built here and
# run on a machine with an NVIDIA GPU, where no Rust toolchain is needed.
#
#   ci/gpu-tests.sh --build        # here: build the test binaries into target/gpu-tests/
#   ci/gpu-tests.sh --run          # on the GPU machine (target/gpu-tests/ carried there)
#   ci/gpu-tests.sh                # both, on a GPU machine with a toolchain
#
# The tests demand a GPU: on a machine without one they fail, they never pass by skipping. Exit 0 only when every ignored test ran and passed.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=target/gpu-tests
MODE=${1:-both}
case "$MODE" in
  --build|--run|both) ;;
  -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
  *) echo "unknown argument: $1 (use --build, --run or nothing)" >&2; exit 2 ;;
esac

if [ "$MODE" != --run ]; then
  rm -rf "$DIR"; mkdir -p "$DIR"
  cargo test --release -q -p bench-gpu --no-run --message-format=json 2>/dev/null \
    | ci/test-binaries.py \
    | while read -r t; do cp "$t" "$DIR/"; done
  ls "$DIR"/hardware-* >/dev/null 2>&1 || { echo "no hardware test binary was built" >&2; exit 1; }
  echo "built: $(ls "$DIR" | tr '\n' ' ')"
fi

if [ "$MODE" != --build ]; then
  ls "$DIR"/hardware-* >/dev/null 2>&1 || { echo "no test binaries in $DIR: run --build first" >&2; exit 1; }
  command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "(nvidia-smi not found)"
  rc=0
  for t in "$DIR"/hardware-*; do
    [ -x "$t" ] || continue
    echo "== $(basename "$t") --ignored"
    "$t" --ignored --test-threads 1 || rc=1
  done
  exit $rc
fi
