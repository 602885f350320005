#!/usr/bin/env bash
# Compare cxlchar's pinned host <-> GPU bandwidth with nvbandwidth's copy-engine tests on a
# machine with an NVIDIA GPU, and print the ratios: each table as soon as its runs are
# done, each cxlchar run only the part it compares (`cxlchar gpu --parts ...`, --quick:
# fewer sizes and samples, the same copies), so the whole comparison fits in about 90 s on
# a 16-core host with an H200.
#
#   ci/compare-gpu.sh [--device N] [--size-mib MIB] [--rounds R] [--contention-mib C]
#
# Rows: single copies each way (pinned, MIB each) against nvbandwidth's copy-engine tests;
# one copy each way at once (cxlchar gpu.pool's mixed k = 2 on registered anon, MIB each)
# against nvbandwidth's bidirectional copy-engine tests; k = 2, 4, 8 concurrent copies of
# one direction (C MiB each, default 64) against ci/anchors/gpu_streams.cu, a plain
# cudaMemcpyAsync loop on registered memory, built with nvcc when it is on PATH (else that
# row says so): the aggregate bandwidths are compared, and cxlchar's per-transfer p50 and
# its verdict (interleaved or in turn) are printed beside them.
#
# Method: the same copy size (nvbandwidth --bufferSize = cxlchar --max-size), pinned host
# memory on both sides (nvbandwidth: cuMemHostAlloc PORTABLE; cxlchar gpu.bw: cuMemAllocHost),
# cxlchar pinned to the first CPU of the GPU's NUMA node (nvbandwidth sets that affinity
# itself), GB = 1e9 bytes on both. nvbandwidth reports the median of its trials; cxlchar
# the p50 of its event-timed samples (gpu.bw/gpu:N/pinned/<dir>/<size>/events). Tools run
# alternately, R rounds; ratio = median(cxlchar) / median(nvbandwidth).
# nvbandwidth gates its stream with a spin kernel until every copy is enqueued; cxlchar
# does not, so compare large sizes (the default 512 MiB) for the keys.
set -euo pipefail
DEV=0
MIB=512
ROUNDS=3
CMIB=64
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEV="$2"; shift 2 ;;
    --size-mib) MIB="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --contention-mib) CMIB="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
command -v nvbandwidth >/dev/null || { echo "nvbandwidth not found: build it from NVIDIA's nvbandwidth repository and put it on PATH" >&2; exit 2; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cargo build --release -q -p cxlchar
CX=target/release/cxlchar

$CX targets --format json > "$W/targets.json"
CPU=$(python3 - "$W/targets.json" "$DEV" <<'PY'
import json,sys
t=json.load(open(sys.argv[1])); d=int(sys.argv[2])
g=t["gpus"]
if not g.get("devices"):
    sys.exit("no GPU: %s" % g.get("skipped", "unknown"))
devs=[x for x in g["devices"] if x["ordinal"]==d]
if not devs:
    sys.exit("GPU %d does not exist" % d)
node=devs[0]["numa_node"]
cpus=[n["cpus"] for n in t["topology"]["nodes"] if n["id"]==node and n["cpus"]]
print(cpus[0][0] if cpus else "")
PY
)
CPUARG=()
[ -n "$CPU" ] && CPUARG=(--cpu "$CPU")
# nvbandwidth's --bufferSize is in MiB in current versions, in bytes in old ones.
if nvbandwidth -h 2>&1 | grep -q "in MiB"; then NVB=(-b "$MIB"); else NVB=(--bufferSize "$((MIB << 20))"); fi

nvb() { # testcase -> GB/s of the CPU row, device column
  nvbandwidth -t "$1" "${NVB[@]}" | awk -v c="$DEV" '
    /bandwidth \(GB\/s\)/ {hdr=1; next}
    hdr && $1=="0" && NF>c+1 {print $(c+2); exit}'
}
CXG=("$CX" gpu --quick --device "$DEV" --target anon "${CPUARG[@]}" --format json)
echo "== [${SECONDS} s] pinned copies, $ROUNDS rounds (cxlchar gpu --parts host; nvbandwidth *_memcpy_ce)" >&2
: > "$W/rows"
for r in $(seq 1 "$ROUNDS"); do
  "${CXG[@]}" --parts host --max-size "${MIB}M" > "$W/cx$r.json"
  h=$(nvb host_to_device_memcpy_ce); d=$(nvb device_to_host_memcpy_ce)
  echo "$r ${h:-nan} ${d:-nan}" >> "$W/rows"
done
python3 - "$W" "$DEV" "$MIB" "$ROUNDS" <<'PY'
import json,statistics,sys
w,dev,mib,rounds=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4])
size="%dM"%mib if mib<1024 or mib%1024 else "%dG"%(mib//1024)
nv={"h2d":[], "d2h":[]}
for line in open(w+"/rows"):
    _,h,d=line.split(); nv["h2d"].append(float(h)); nv["d2h"].append(float(d))
print("%-5s %12s %12s %7s" % ("dir", "cxlchar", "nvbandwidth", "ratio"))
for dirn in ("h2d","d2h"):
    cx=[]
    for r in range(1,rounds+1):
        doc=json.load(open("%s/cx%d.json"%(w,r)))
        cx+=[m["distribution"]["p50"] for m in doc["measurements"]
             if m["id"]=="gpu.bw/gpu:%d/pinned/%s/%s/events"%(dev,dirn,size)]
    c=statistics.median(cx) if cx else float("nan")
    n=statistics.median(nv[dirn]) if nv[dirn] else float("nan")
    print("%-5s %12.2f %12.2f %7.3f" % (dirn, c, n, c/n if n==n and n>0 else float("nan")))
print("GB/s (1e9 B/s), %s copies, GPU %d; ratio = cxlchar / nvbandwidth, medians of %d alternated rounds\n" % (size, dev, rounds), flush=True)
PY

echo "== [${SECONDS} s] one copy each way at once (cxlchar gpu --parts contention --streams 2; nvbandwidth *_bidirectional_memcpy_ce)" >&2
"${CXG[@]}" --parts contention --streams 2 --contention-size "${MIB}M" > "$W/bidir.json"
echo "$(nvb host_to_device_bidirectional_memcpy_ce) $(nvb device_to_host_bidirectional_memcpy_ce)" > "$W/nvbidir"
python3 - "$W" "$MIB" <<'PY'
import json,sys
w,mib=sys.argv[1],int(sys.argv[2])
p = json.load(open(w + "/bidir.json")).get("params", {})
nvb = [float(x) if x not in ("", "nan") else float("nan") for x in (open(w + "/nvbidir").read().split() + ["nan", "nan"])[:2]]
print("%-12s %12s %12s %7s" % ("both ways", "cxlchar", "nvbandwidth", "ratio"))
for dirn, n in zip(("h2d", "d2h"), nvb):
    c = p.get("gpu_reg_mixed_%s_k2_bw_gbs@anon" % dirn, float("nan"))
    print("%-12s %12.2f %12.2f %7.3f" % (dirn, c, n, c / n if n == n and n > 0 else float("nan")))
print("one copy each way at once, %d MiB each (cxlchar gpu.pool mixed k = 2 on registered anon; nvbandwidth *_bidirectional_memcpy_ce)\n" % mib, flush=True)
PY

echo "== [${SECONDS} s] k concurrent copies of one direction (cxlchar gpu --parts contention; a plain cudaMemcpyAsync loop)" >&2
"${CXG[@]}" --parts contention --streams 1,2,4,8 --contention-size "${CMIB}M" > "$W/streams.json"
if command -v nvcc >/dev/null; then
  nvcc -O2 -o "$W/gpu_streams" ci/anchors/gpu_streams.cu \
    && "$W/gpu_streams" "$DEV" "$CMIB" "$((ROUNDS * 5))" 2 4 8 > "$W/loop.txt" \
    || echo "gpu_streams failed" > "$W/loop.txt"
else
  echo "nvcc not found: no plain-loop reference (install the CUDA toolkit)" > "$W/loop.txt"
fi
python3 - "$W" <<'PY'
import json,sys
w=sys.argv[1]
def sharing(doc, dirn, k):
    for m in doc["measurements"]:
        if m["id"].endswith("/contention/%s/k%d/first_end_ratio" % (dirn, k)) and m["target"] == "anon":
            return m["parameters"].get("sharing") or "-"
    return "-"
doc = json.load(open(w + "/streams.json"))
p = doc.get("params", {})
loop = {}
lines = open(w + "/loop.txt").read().splitlines()
for line in lines[1:]:
    f = line.split()
    if len(f) == 4 and f[0] in ("h2d", "d2h"):
        loop[(f[0], int(f[1]))] = float(f[2])
print("%-8s %10s %10s %7s %12s %12s" % ("k", "cx_agg", "loop_agg", "ratio", "cx_per_p50", "cx_sharing"))
for dirn in ("h2d", "d2h"):
    for k in (2, 4, 8):
        c = p.get("gpu_reg_%s_k%d_agg_bw_gbs@anon" % (dirn, k), float("nan"))
        per = p.get("gpu_reg_%s_k%d_bw_gbs@anon" % (dirn, k), float("nan"))
        l = loop.get((dirn, k), float("nan"))
        print("%-8s %10.2f %10.2f %7.3f %12.2f %12s" % ("%s k=%d" % (dirn, k), c, l, c / l if l == l and l > 0 else float("nan"), per, sharing(doc, dirn, k)))
if not loop:
    print("plain loop: " + (lines[0] if lines else "no output"))
print("k concurrent copies of one direction on registered anon; aggregate ratio = cxlchar / plain loop; cxlchar per-transfer is timed from its gate (a copy served in turn perceives less)", flush=True)
PY
echo "== done [${SECONDS} s]" >&2
