#!/usr/bin/env bash
# Compare cxlchar's core-to-core latencies with the reference tools, in one run, and
# print ratios.
#
#   ci/compare-pool.sh [--rounds N] [--cpus A,B]
#
# Reference tools, built outside the project tree (never committed):
#   core-to-core-latency: `cargo install core-to-core-latency --root /tmp/c2c`
#                         (C2C_BIN, default: on PATH, else /tmp/c2c/bin/core-to-core-latency)
#   multichase pingpong:  MULTICHASE_DIR (default /tmp/anchors/multichase), built with make
#   CXLCHAR_BIN: use this cxlchar binary instead of building one.
# Run it on a quiet machine: ping-pong between time-shared vCPUs measures the scheduler.
#
# Conventions (all one-way: the time for one core to hand the line to the other):
#   core-to-core-latency -b 1 (CAS) and -b 2 (two lines, store/load): round trip / 2,
#     mean of samples of 5000 round trips;
#   multichase pingpong: counts 2 transfers per round trip (one-way), best of 5 x 0.25 s;
#     -u = plain load + store, -l = locked CAS; -r N = N pause instructions per poll
#     (cxlchar polls with one pause per failed poll: compared with -r 1);
#   cxlchar pool c2c: round trip / 2, p50 of 40 samples x 5000 round trips (one line).
# The tools run alternately, ROUNDS times each, on the same two CPUs; ratios are
# median(cxlchar) / median(tool), and min/min over rounds (the least disturbed round of
# each, for a shared machine). Close to 1.0 is the goal (within 5%).
set -euo pipefail
ROUNDS=5
CPUS=0,1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --cpus) CPUS="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
C2C="${C2C_BIN:-$(command -v core-to-core-latency || echo /tmp/c2c/bin/core-to-core-latency)}"
MC_DIR="${MULTICHASE_DIR:-/tmp/anchors/multichase}"
[ -x "$C2C" ] || { echo "core-to-core-latency not found: cargo install core-to-core-latency --root /tmp/c2c, or set C2C_BIN" >&2; exit 2; }
[ -x "$MC_DIR/pingpong" ] || { echo "multichase pingpong not found in $MC_DIR: build google/multichase there (make), or set MULTICHASE_DIR" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read params.json" >&2; exit 2; }
if [ -n "${CXLCHAR_BIN:-}" ]; then CX="$CXLCHAR_BIN"; else cargo build --release -q -p cxlchar; CX=target/release/cxlchar; fi
A=${CPUS%,*}; B=${CPUS#*,}
# pingpong tests every allowed CPU pair: restrict it to the two CPUs.
PP() { taskset -c "$CPUS" "$MC_DIR/pingpong" "$@" 2>/dev/null | awk -v a="$A" '$1 == a":" {print $2}'; }
num() { python3 -c 'import re,sys,statistics as s; v=[float(x) for x in re.findall(r"[0-9.]+", sys.stdin.read())]; print(s.median(v) if v else "nan")'; }
declare -a cx_cas cx_flag c2c_cas c2c_rw pp_u pp_l pp_u0
for r in $(seq 1 "$ROUNDS"); do
  json=$($CX pool c2c --cpu "$CPUS" --format json)
  cx_cas+=("$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["params"]["c2c_cas_lat_ns"])')")
  cx_flag+=("$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["params"]["c2c_flag_lat_ns"])')")
  c2c_cas+=("$("$C2C" 5000 40 -b 1 -c "$CPUS" --csv 2>/dev/null | num)")
  c2c_rw+=("$("$C2C" 5000 40 -b 2 -c "$CPUS" --csv 2>/dev/null | num)")
  pp_l+=("$(PP -l -r 1)")
  pp_u+=("$(PP -u -r 1)")
  pp_u0+=("$(PP -u -r 0)")
  echo "round $r: cxlchar cas ${cx_cas[-1]} flag ${cx_flag[-1]} | c2c cas ${c2c_cas[-1]} rw ${c2c_rw[-1]} | pingpong -l ${pp_l[-1]} -u ${pp_u[-1]} -u -r0 ${pp_u0[-1]}" >&2
done
med() { printf '%s\n' "$@" | num; }
mn() { printf '%s\n' "$@" | python3 -c 'import re,sys; v=[float(x) for x in re.findall(r"[0-9.]+", sys.stdin.read())]; print(min(v) if v else "nan")'; }
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }
row() { # key label cxlchar-values... -- tool-values...
  local key="$1" label="$2"; shift 2
  local a=() b=() side=a
  for x in "$@"; do if [ "$x" = "--" ]; then side=b; elif [ $side = a ]; then a+=("$x"); else b+=("$x"); fi; done
  local ma mb na nb
  ma=$(med "${a[@]}"); mb=$(med "${b[@]}"); na=$(mn "${a[@]}"); nb=$(mn "${b[@]}")
  printf '| %s | %s | %.1f | %.1f | %s | %.1f | %.1f | %s |\n' "$key" "$label" "$ma" "$mb" "$(ratio "$ma" "$mb")" "$na" "$nb" "$(ratio "$na" "$nb")"
}
echo "| cxlchar key | reference | cxlchar median | ref median | ratio | cxlchar min | ref min | ratio (min) |"
echo "|---|---|---|---|---|---|---|---|"
row c2c_cas_lat_ns "core-to-core-latency -b 1" "${cx_cas[@]}" -- "${c2c_cas[@]}"
row c2c_cas_lat_ns "pingpong -l -r 1" "${cx_cas[@]}" -- "${pp_l[@]}"
row c2c_flag_lat_ns "pingpong -u -r 1" "${cx_flag[@]}" -- "${pp_u[@]}"
row c2c_flag_lat_ns "pingpong -u -r 0" "${cx_flag[@]}" -- "${pp_u0[@]}"
row c2c_flag_lat_ns "core-to-core-latency -b 2 (two lines)" "${cx_flag[@]}" -- "${c2c_rw[@]}"
echo "(median and minimum over $ROUNDS alternating rounds; one-way ns)"
