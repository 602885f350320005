#!/usr/bin/env bash
# Compare cxlchar's verbs figures with perftest (ib_send_lat, ib_write_lat, ib_write_bw)
# on a machine with an RDMA device (a real NIC, or the lab's soft-RoCE rxe0), and print
# the ratios.
#
#   ci/compare-verbs.sh [--device NAME] [--iters N]              # both ends on this host
#   ci/compare-verbs.sh --serve [--device NAME]                  # on host B: perftest servers
#   ci/compare-verbs.sh --remote HOST [--device NAME]            # on host A, against B
#
# Method: same sizes (8 B .. 1 MiB), same operation (send/recv ping-pong for latency,
# RDMA write stream for bandwidth), inline matched per size (cxlchar inlines a message
# when it fits the QP's granted max inline; perftest gets -I SIZE for those sizes and
# -I 0 otherwise). perftest reports t_typical (median) half round trips and average
# bandwidth (--report_gbits / 8 = GB/s); cxlchar its p50. Ratio = cxlchar / perftest.
#
# rxe (soft-RoCE) numbers are an emulation: the "NIC" is kernel code on the same CPUs,
# and in the lab also under TCG. Compare the shape (latency growth with size, inline vs
# not) and the ratio to perftest only, never the absolute figures.
set -euo pipefail
DEV=""
ITERS=1000
MODE=local
HOST=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEV="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --serve) MODE=serve; shift ;;
    --remote) MODE=remote; HOST="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
for t in ib_send_lat ib_write_lat ib_write_bw; do
  command -v "$t" >/dev/null || { echo "$t not found: apt-get install perftest" >&2; exit 2; }
done
if [ -z "$DEV" ]; then
  DEV=$(ibv_devices 2>/dev/null | awk 'NR>2 && $1!="" {print $1; exit}')
  [ -n "$DEV" ] || { echo "no RDMA device (ibv_devices lists none)" >&2; exit 2; }
fi
SIZES="8 64 512 4096 32768 262144 1048576"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

cargo build --release -q -p cxlchar --features verbs
CX=target/release/cxlchar

# max inline granted to cxlchar's QPs (read from its post measurements)
inline_of() { # size -> perftest -I value
  python3 - "$W/cx.json" "$1" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=int(sys.argv[2])
mi=[m["parameters"].get("max_inline_bytes") for m in d["measurements"] if m["id"].startswith("verbs.post/")]
mi=[x for x in mi if x is not None]
print(s if mi and s<=mi[0] else 0)
PY
}

run_pair() { # tool args... : server here + client to localhost, or client to HOST
  local tool=$1; shift
  case $MODE in
    local)
      timeout 120 "$tool" -d "$DEV" "$@" >/dev/null 2>&1 &
      local sp=$!; sleep 1
      timeout 120 "$tool" -d "$DEV" "$@" 127.0.0.1 || true
      wait $sp || true ;;
    remote) sleep 2; timeout 120 "$tool" -d "$DEV" "$@" "$HOST" || true ;;
  esac
}

if [ "$MODE" = serve ]; then
  # Serve the client's sequence: for each size, the three tools in order.
  $CX verbs post --quick --device "$DEV" --format json > "$W/cx.json" || true
  for s in $SIZES; do
    I=$(inline_of "$s")
    timeout 120 ib_send_lat -d "$DEV" -s "$s" -I "$I" -n "$ITERS" >/dev/null || true
    timeout 120 ib_write_lat -d "$DEV" -s "$s" -I "$I" -n "$ITERS" >/dev/null || true
    timeout 120 ib_write_bw -d "$DEV" -s "$s" -I "$I" -n "$ITERS" --report_gbits >/dev/null || true
  done
  exit 0
fi

echo "== cxlchar verbs (device $DEV, loopback pair)"
$CX verbs --device "$DEV" --format json > "$W/cx.json"

printf "%-9s %14s %14s %7s %14s %14s %7s %12s\n" size cx_lat_ns send_lat_ns ratio cx_bw_GBs write_bw_GBs ratio write_lat_ns
for s in $SIZES; do
  I=$(inline_of "$s")
  sl=$(run_pair ib_send_lat -s "$s" -I "$I" -n "$ITERS" | awk -v s="$s" '$1==s && NF>=5 {print $5*1000}')
  wl=$(run_pair ib_write_lat -s "$s" -I "$I" -n "$ITERS" | awk -v s="$s" '$1==s && NF>=5 {print $5*1000}')
  wb=$(run_pair ib_write_bw -s "$s" -I "$I" -n "$ITERS" --report_gbits | awk -v s="$s" '$1==s && NF>=4 {print $4/8}')
  python3 - "$W/cx.json" "$s" "${sl:-nan}" "${wb:-nan}" "${wl:-nan}" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=sys.argv[2]
sl,wb,wl=(float(x) for x in sys.argv[3:6])
cl=[m["distribution"]["p50"] for m in d["measurements"] if m["id"].startswith("verbs.lat/") and m["id"].endswith("/send/%sB"%s)]
cb=[m["distribution"]["p50"] for m in d["measurements"] if m["id"].startswith("verbs.bw/") and m["id"].endswith("/write/%sB"%s)]
cl=cl[0] if cl else float("nan"); cb=cb[0] if cb else float("nan")
r=lambda a,b: a/b if b==b and b>0 and a==a else float("nan")
print("%-9s %14.0f %14.0f %7.2f %14.3f %14.3f %7.2f %12.0f"%(s,cl,sl,r(cl,sl),cb,wb,r(cb,wb),wl))
PY
done
echo "ratio = cxlchar / perftest (rxe: emulation, compare shape and ratio only)"
