#!/usr/bin/env bash
# Compare cxlchar's bandwidth kernels with likwid-bench (and STREAM when built), one
# thread, same CPU, same footprint, alternately, and print the ratios.
#
#   ci/compare-bandwidth.sh [--rounds N]        (needs: apt-get install likwid)
#
# Conventions: GB = 10^9 bytes (likwid prints MByte/s = 10^6 bytes/s); copies count the
# bytes read plus the bytes written in both tools; likwid's -w S0:1GB:1 is a 1 GB
# footprint for all its streams together, as cxlchar's --sizes is.
# Kernels: likwid load/store/store_mem/copy/copy_mem = cxlchar read/write/nt-write/copy/nt-copy
# (the _avx512 variants on AVX-512 CPUs, _avx otherwise, matching cxlchar's ISA choice).
set -euo pipefail
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
command -v likwid-bench >/dev/null || { echo "likwid-bench not found: apt-get install likwid" >&2; exit 2; }
cargo build --release -q -p cxlchar
CX=target/release/cxlchar
SUF=avx; ISA=avx2
if grep -qw avx512f /proc/cpuinfo; then SUF=avx512; ISA=avx512; fi
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
lk() { likwid-bench -t "$1" -w "S0:$2:1" 2>/dev/null | awk '/^MByte\/s:/ {print $2/1000}'; }
cx() { # kernel size(cxlchar) -> p50 GB/s
  "$CX" mem bandwidth --kernel "$1" --threads 1 --sizes "$2" --cpu 0 --isa "$ISA" --format json > "$TMP/o.json"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([m for m in d['measurements'] if m['parameters']['threads']==1][0]['distribution']['p50'])" "$TMP/o.json"
}
median() { python3 -c 'import sys,statistics; print(statistics.median([float(x) for x in sys.argv[1:]]))' "$@"; }
echo "# cxlchar vs likwid-bench ($SUF kernels) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F), $ROUNDS rounds, 1 thread"
printf "%-10s %-7s %12s %12s %8s\n" kernel size "likwid GB/s" "cxlchar GB/s" ratio
for pair in "load:read:1GB:1G" "store:write:1GB:1G" "store_mem:nt-write:1GB:1G" "copy:copy:1GB:1G" "copy_mem:nt-copy:1GB:1G" "load:read:256kB:256K"; do
  IFS=: read -r lkk cxk lks cxs <<< "$pair"
  l=(); c=()
  for r in $(seq "$ROUNDS"); do
    l+=("$(lk "${lkk}_$SUF" "$lks")")
    c+=("$(cx "$cxk" "$cxs")")
  done
  L=$(median "${l[@]}"); C=$(median "${c[@]}")
  printf "%-10s %-7s %12.2f %12.2f %8.3f\n" "$cxk" "$cxs" "$L" "$C" "$(python3 -c "print($C/$L)")"
done
