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
#
# Conventions (all one-way: the time for one core to hand the line to the other):
#   core-to-core-latency -b 1 (CAS) and -b 2 (two lines, store/load): round trip / 2,
#     mean of samples of 5000 round trips;
#   multichase pingpong: counts 2 transfers per round trip (one-way), best of 5 x 0.25 s;
#     -u = plain load + store, -l = locked CAS; -r N = N pause instructions per poll
#     (cxlchar polls with one pause per failed poll: compared with -r 1);
#   cxlchar pool c2c: round trip / 2, p50 of 40 samples x 5000 round trips (one line).
# The tools run alternately, ROUNDS times each, on the same two CPUs; ratios are
# median(cxlchar) / median(tool). Close to 1.0 is the goal (within 5%).
set -euo pipefail
ROUNDS=5
CPUS=0,1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --cpus) CPUS="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
C2C="${C2C_BIN:-$(command -v core-to-core-latency || echo /tmp/c2c/bin/core-to-core-latency)}"
MC_DIR="${MULTICHASE_DIR:-/tmp/anchors/multichase}"
[ -x "$C2C" ] || { echo "core-to-core-latency not found: cargo install core-to-core-latency --root /tmp/c2c, or set C2C_BIN" >&2; exit 2; }
[ -x "$MC_DIR/pingpong" ] || { echo "multichase pingpong not found in $MC_DIR: build google/multichase there (make), or set MULTICHASE_DIR" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read params.json" >&2; exit 2; }
cargo build --release -q -p cxlchar
CX=target/release/cxlchar
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
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }
m_cas=$(med "${cx_cas[@]}"); m_flag=$(med "${cx_flag[@]}")
m_c2c=$(med "${c2c_cas[@]}"); m_rw=$(med "${c2c_rw[@]}")
m_l=$(med "${pp_l[@]}"); m_u=$(med "${pp_u[@]}"); m_u0=$(med "${pp_u0[@]}")
echo "| cxlchar key | cxlchar (ns, median of $ROUNDS) | reference | reference (ns) | ratio |"
echo "|---|---|---|---|---|"
echo "| c2c_cas_lat_ns | $m_cas | core-to-core-latency -b 1 | $m_c2c | $(ratio "$m_cas" "$m_c2c") |"
echo "| c2c_cas_lat_ns | $m_cas | pingpong -l -r 1 | $m_l | $(ratio "$m_cas" "$m_l") |"
echo "| c2c_flag_lat_ns | $m_flag | pingpong -u -r 1 | $m_u | $(ratio "$m_flag" "$m_u") |"
echo "| c2c_flag_lat_ns | $m_flag | pingpong -u -r 0 | $m_u0 | $(ratio "$m_flag" "$m_u0") |"
echo "| c2c_flag_lat_ns | $m_flag | core-to-core-latency -b 2 (two lines) | $m_rw | $(ratio "$m_flag" "$m_rw") |"
