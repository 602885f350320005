#!/usr/bin/env bash
# Compare cxlchar with the reference tools on this machine, in one run, and print ratios.
#
#   ci/compare-anchors.sh [--rounds N] [--cpu C]
#
# Reference tools are built outside the project tree (never committed):
#   multichase: MULTICHASE_DIR points at a built checkout of google/multichase
#               (git clone <its public repository>; make). Default: /tmp/anchors/multichase
#
# Method: for each size the tools run alternately, ROUNDS times each, pinned to the same
# CPU, with the same stride and page mode (4 KiB pages, multichase's default 256 KiB TLB
# locality = cxlchar's tlb-local order). multichase reports its best 0.5 s sample of 10;
# cxlchar its p50 over ~50 us batches. The ratio is median(cxlchar)/median(multichase).
# Also reports mem_lat_ns run-to-run spread and the time of `cxlchar all --quick`.
set -euo pipefail
ROUNDS=5
CPU=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --cpu) CPU="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
MC_DIR="${MULTICHASE_DIR:-/tmp/anchors/multichase}"
if [ ! -x "$MC_DIR/multichase" ]; then
  echo "multichase not found in $MC_DIR: clone google/multichase there and run make, or set MULTICHASE_DIR" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "python3 is needed to read params.json" >&2; exit 2; }
cargo build --release -q -p cxlchar
CX=target/release/cxlchar
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

p50() { # file size-label order -> p50 of that measurement
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["measurements"]:
    if m["id"].endswith("/%s/%s" % (sys.argv[3], sys.argv[2])):
        print(m["distribution"]["p50"]); break
PY
}
median() { python3 -c 'import sys,statistics; print(statistics.median([float(x) for x in sys.argv[1:]]))' "$@"; }
spread() { python3 -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print("%.1f" % (100*(max(v)-min(v))/statistics.median(v)))' "$@"; }

echo "# cxlchar vs multichase on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F), $ROUNDS rounds, CPU $CPU"
printf "%-8s %-7s %12s %12s %8s\n" size stride multichase cxlchar ratio
for stride in 64 256; do
  for size in 16K 256K 1G; do
    mc=(); cx=()
    for r in $(seq "$ROUNDS"); do
      mc+=("$(taskset -c "$CPU" "$MC_DIR/multichase" -m "${size,,}" -s "$stride" -n 10 | tr -d ' ')")
      "$CX" mem latency --sizes "$size" --stride "$stride" --cpu "$CPU" --format json > "$TMP/o.json"
      cx+=("$(p50 "$TMP/o.json" "$size" tlb-local)")
    done
    m=$(median "${mc[@]}"); c=$(median "${cx[@]}")
    printf "%-8s %-7s %12.2f %12.2f %8.3f\n" "$size" "$stride" "$m" "$c" "$(python3 -c "print($c/$m)")"
    if [ "$size" = 1G ] && [ "$stride" = 64 ]; then
      echo "   (1G stride 64: cxlchar spread over $ROUNDS runs $(spread "${cx[@]}")%, multichase $(spread "${mc[@]}")%)"
    fi
  done
done
start=$(date +%s.%N)
"$CX" all --quick --out "$TMP/quick.json" > /dev/null
echo "cxlchar all --quick: $(python3 -c "print('%.1f s' % ($(date +%s.%N) - $start))")"
