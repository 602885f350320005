#!/usr/bin/env bash
# Compare cxlchar's loaded latency (`mem loaded`) with multichase's `multiload` run with
# ITS OWN DEFAULTS (best of 5 samples of 0.5 s, stride 256, 256 KiB TLB locality, 4 KiB
# pages), on the CPUs this runs on, and print a Markdown table naming the CPU.
#
#   ci/compare-loaded.sh [--rounds N] [--cpus A,B] [--out FILE.json]
#
#   --rounds N     rounds per comparison, tools alternating (default 3)
#   --cpus A,B     chase CPU A and traffic CPU B (default 0,1): one chase thread and one
#                  traffic thread in both tools (multiload -t 2 pins threads 0 and 1 to the
#                  first CPUs of its affinity mask; it is started under taskset -c A,B)
#   --out FILE     also write the rows as JSON
#   -h, --help     this text
#
# Environment: CXLCHAR_BIN    a prebuilt cxlchar (default: cargo build --release -p cxlchar)
#              MULTICHASE_DIR a built checkout of google/multichase (multiload is built
#                             by its make), outside the tree. Default /tmp/anchors/multichase
#
# Sizes: cxlchar chooses its own (chase over 4x the DRAM plateau start, else 4x the LLC);
# multiload gets -m = the span of cxlchar's chase (its chase then spans the same memory,
# each load thread streams over -m bytes of its own).
# Rows (medians over the rounds, ratio = cxlchar / multiload):
#   idle     cxlchar `--mix read` idle point p50 vs multiload latency only (-t 1)   0.95..1.05
#   read     full load (delay 0): chase p50 and traffic GB/s vs -c chaseload -l stream-sum (1:0)
#   1r1w     full load vs -l stream-copy (1:1, b[i] = a[i], temporal stores)
#   2r1w     full load vs -l stream-triad (2:1, a[i] = b[i] + c[i], temporal stores)
# Full-load rows: informational, both ratios shown: the latency under load depends on
# how much the traffic thread injects (AVX-512/AVX2 kernels here, compiled C loops in
# multiload), so compare the latency ratio together with the bandwidth ratio. multiload
# counts the bytes of every array a loop touches (reads + writes), as cxlchar does;
# its MiB/s are converted to GB/s (x 1.048576 / 1000). 3r1w and nt-write have no
# multiload counterpart (its memcpy-libc and memset-libc loads both run memset()).
# Exit 0 when it ran (missed targets included: it is a report), 2 on usage errors or
# missing tools.
set -euo pipefail

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
die2() { echo "compare-loaded: $*" >&2; exit 2; }

ROUNDS=3
CPUS=0,1
OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds|--cpus|--out)
      [ $# -ge 2 ] || die2 "$1 needs a value (see --help)"
      case "$1" in
        --rounds) ROUNDS="$2" ;;
        --cpus) CPUS="$2" ;;
        --out) OUT="$2" ;;
      esac
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die2 "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die2 "--rounds wants a positive integer, got '$ROUNDS'"
[[ "$CPUS" =~ ^[0-9]+,[0-9]+$ ]] || die2 "--cpus wants two CPU numbers A,B, got '$CPUS'"
if [ -n "$OUT" ]; then
  case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
fi
cd "$(dirname "$0")/.."
REPO=$PWD

command -v taskset >/dev/null || die2 "taskset not found (util-linux)"
command -v python3 >/dev/null || die2 "python3 is needed to read params.json"
taskset -c "$CPUS" true 2>/dev/null || die2 "CPUs $CPUS are not usable here (taskset -c $CPUS failed)"
ML="${MULTICHASE_DIR:-/tmp/anchors/multichase}/multiload"
[ -x "$ML" ] || die2 "multiload not found at $ML: clone google/multichase, run make, or set MULTICHASE_DIR"
if [ -n "${CXLCHAR_BIN:-}" ]; then
  CX="$CXLCHAR_BIN"
  [ -x "$CX" ] || die2 "CXLCHAR_BIN=$CX is not executable"
else
  command -v cargo >/dev/null || die2 "cargo not found (or set CXLCHAR_BIN to a built cxlchar)"
  echo "building cxlchar (cargo build --release -p cxlchar)..." >&2
  cargo build --release -q -p cxlchar || die2 "cargo build failed"
  CX="$REPO/target/release/cxlchar"
fi
"$CX" mem loaded --help | grep -q 2r1w || die2 "$CX has no 'mem loaded --mix 2r1w' (an older build?)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMP

cat > "$TMP/h.py" <<'PY'
import json, math, statistics, sys
cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "cx":
    # file mix -> "idle_p50 full_p50 full_gbs chase_span_bytes"
    d = json.load(open(a[0]))
    ms = [m for m in d.get("measurements", []) if m.get("benchmark") == "mem.loaded"
          and m.get("parameters", {}).get("mix") == a[1]]
    idle = [m for m in ms if m["parameters"].get("delay_pause") is None]
    full = [m for m in ms if m["parameters"].get("delay_pause") == 0]
    if not idle or not full:
        sys.exit("compare-loaded: no idle or delay-0 point for mix %s in %s" % (a[1], a[0]))
    p = full[0]["parameters"]
    span = p.get("chase", {}).get("span_bytes") or 4 * p["chase_bytes"]
    print(idle[0]["distribution"]["p50"], full[0]["distribution"]["p50"],
          p["injected_bw_gbs"], int(span))
elif cmd == "ml":
    # multiload stdout -> "chase_ns load_gbs" (LdAvgMibs, MiB/s -> GB/s)
    lines = [l for l in open(a[0]).read().splitlines() if l.count(",") >= 10]
    head = [h.strip() for h in lines[0].split(",")]
    row = [x.strip() for x in lines[-1].split(",")]
    v = dict(zip(head, row))
    gbs = float(v["LdAvgMibs"]) * 1.048576 / 1000 if v.get("LdAvgMibs") not in (None, "", "0") else float("nan")
    print(v["ChaseNS"], gbs)
elif cmd == "row":
    name, ref, target, cl, rl, cb, rb = a
    nums = lambda s: [float(x) for x in s.split(",") if x and not math.isnan(float(x))]
    med = lambda v: statistics.median(v) if v else float("nan")
    mcl, mrl, mcb, mrb = med(nums(cl)), med(nums(rl)), med(nums(cb)), med(nums(rb))
    lr = mcl / mrl if mrl > 0 else float("nan")
    br = mcb / mrb if mrb and mrb > 0 else float("nan")
    met = "-"
    if target != "info" and not math.isnan(lr):
        lo, hi = (float(x) for x in target.split(".."))
        met = "yes" if lo <= lr <= hi else "no"
    with open(sys.argv[0].replace("h.py", "rows.jsonl"), "a") as f:
        f.write(json.dumps(dict(row=name, reference=ref, cxlchar_ns=mcl, ref_ns=mrl, lat_ratio=lr,
                                cxlchar_gbs=mcb, ref_gbs=mrb, bw_ratio=br, target=target, met=met,
                                rounds=dict(cx_ns=nums(cl), ref_ns=nums(rl), cx_gbs=nums(cb), ref_gbs=nums(rb)))) + "\n")
elif cmd == "table":
    cpu, out = a[0], a[1]
    rows = [json.loads(l) for l in open(sys.argv[0].replace("h.py", "rows.jsonl"))]
    f = lambda v: "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else "%.2f" % v
    print("CPU: %s\n" % cpu)
    print("| row | reference | cxlchar ns | ref ns | latency ratio | cxlchar GB/s | ref GB/s | bw ratio | target | met |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (r["row"], r["reference"], f(r["cxlchar_ns"]), f(r["ref_ns"]),
              f(r["lat_ratio"]), f(r["cxlchar_gbs"]), f(r["ref_gbs"]), f(r["bw_ratio"]), r["target"], r["met"]))
    if out:
        json.dump(dict(cpu=cpu, rows=rows), open(out, "w"), indent=1)
PY

CPU_NAME=$(python3 - <<'PY'
import re
t = open("/proc/cpuinfo").read()
name = re.search(r"model name\s*:\s*(.*)", t)
fam = re.search(r"cpu family\s*:\s*(\d+)", t); mod = re.search(r"model\s*:\s*(\d+)", t)
print("%s (family %s, model %s)" % (name.group(1) if name else "?", fam.group(1) if fam else "?", mod.group(1) if mod else "?"))
PY
)
A=${CPUS%,*}
declare -A CL RL CB RB
for mix in read 1r1w 2r1w; do CL[$mix]=; RL[$mix]=; CB[$mix]=; RB[$mix]=; done
IDLE_C=; IDLE_R=
for r in $(seq 1 "$ROUNDS"); do
  for mix in read 1r1w 2r1w; do
    echo "round $r: cxlchar mem loaded --mix $mix" >&2
    "$CX" mem loaded --mix "$mix" --cpu "$CPUS" --format json > "$TMP/cx.json" 2>/dev/null \
      || die2 "cxlchar mem loaded --mix $mix failed"
    read -r idle full gbs span < <(python3 "$TMP/h.py" cx "$TMP/cx.json" "$mix")
    CL[$mix]+="$full,"; CB[$mix]+="$gbs,"
    [ "$mix" = read ] && IDLE_C+="$idle,"
    case $mix in read) load=stream-sum ;; 1r1w) load=stream-copy ;; 2r1w) load=stream-triad ;; esac
    echo "round $r: multiload -t 2 -m $span -c chaseload -l $load" >&2
    taskset -c "$CPUS" "$ML" -t 2 -m "$span" -c chaseload -l "$load" > "$TMP/ml.txt" \
      || die2 "multiload -l $load failed"
    read -r ns mgbs < <(python3 "$TMP/h.py" ml "$TMP/ml.txt")
    RL[$mix]+="$ns,"; RB[$mix]+="$mgbs,"
    if [ "$mix" = read ]; then
      echo "round $r: multiload -t 1 -m $span (latency only)" >&2
      taskset -c "$A" "$ML" -t 1 -m "$span" > "$TMP/ml0.txt" || die2 "multiload latency-only failed"
      read -r ns0 _ < <(python3 "$TMP/h.py" ml "$TMP/ml0.txt")
      IDLE_R+="$ns0,"
    fi
  done
done
python3 "$TMP/h.py" row idle "multiload -t 1 (latency only)" 0.95..1.05 "$IDLE_C" "$IDLE_R" "" ""
python3 "$TMP/h.py" row "read, delay 0" "multiload -c chaseload -l stream-sum" info "${CL[read]}" "${RL[read]}" "${CB[read]}" "${RB[read]}"
python3 "$TMP/h.py" row "1r1w, delay 0" "multiload -c chaseload -l stream-copy" info "${CL[1r1w]}" "${RL[1r1w]}" "${CB[1r1w]}" "${RB[1r1w]}"
python3 "$TMP/h.py" row "2r1w, delay 0" "multiload -c chaseload -l stream-triad" info "${CL[2r1w]}" "${RL[2r1w]}" "${CB[2r1w]}" "${RB[2r1w]}"
python3 "$TMP/h.py" table "$CPU_NAME" "$OUT"
