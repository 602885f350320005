#!/usr/bin/env bash
# Compare cxlchar's verbs figures with perftest (ib_send_lat, ib_write_lat, ib_write_bw)
# on a machine with an RDMA device (a real NIC, or the lab's soft-RoCE rxe0), and print
# the ratios.
#
#   ci/compare-verbs.sh [OPTIONS]                    # both ends on this host (loopback)
#   ci/compare-verbs.sh --serve [OPTIONS]            # on host B: cxlchar and perftest servers
#   ci/compare-verbs.sh --remote HOST [OPTIONS]      # on host A, against B; prints the table
#
# Options: --device NAME (default: first of ibv_devices), --iters N (perftest -n, default
# 1000), --sizes "8 64 ..." (default 8 B .. 1 MiB), --quick (cxlchar --quick: sizes 8,
# 4096, 1 MiB), --max-inline N (skip asking cxlchar for the granted max inline),
# --out FILE (the table as JSON, for checks; cxlchar's params.json beside it as
# FILE-cxlchar.json), --each-timeout S (seconds one perftest measurement may take, the
# client's connection attempts included, default 300), --runs N (cxlchar runs each side
# makes while the last one failed, default 2; give both sides the same), --run-timeout S
# (seconds one cxlchar run may take, default 600), --timeout S (cxlchar --timeout: its
# connection wait and every completion wait, default 60). CXLCHAR_BIN: use this cxlchar
# binary (built with --features verbs) instead of building one.
#
# The two sides stay in step when a run fails: a --serve run whose client left before the
# end fails too, both sides then start the next run, and both go on to perftest after the
# last one (the script then exits 1, after the table of what perftest measured).
#
# Method: same sizes, same operation (send/recv ping-pong for latency, RDMA write stream
# for bandwidth), inline matched per size (cxlchar inlines a message when it fits the QP's
# granted max inline; perftest gets -I SIZE for those sizes and -I 0 otherwise), same
# topology (loopback pair against perftest on one host; --server/--connect against
# perftest between the two hosts). perftest reports t_typical (median) half round trips
# and average bandwidth (--report_gbits / 8 = GB/s); cxlchar its p50. Ratio = cxlchar /
# perftest. Both sides of --serve/--remote must be given the same --sizes and --iters.
#
# rxe (soft-RoCE) numbers are an emulation: the "NIC" is kernel code on the same CPUs,
# and in the lab also under TCG. Compare the shape (latency growth with size, inline vs
# not) and the ratio to perftest only, never the absolute figures.
set -euo pipefail
DEV=""
ITERS=1000
MODE=local
HOST=""
SIZES="8 64 512 4096 32768 262144 1048576"
QUICK=""
MAXINL=""
OUTF=""
EACH=300
RUNS=2
RUN_TMO=600
CXT=60
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEV="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --max-inline) MAXINL="$2"; shift 2 ;;
    --out) OUTF="$2"; shift 2 ;;
    --each-timeout) EACH="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --run-timeout) RUN_TMO="$2"; shift 2 ;;
    --timeout) CXT="$2"; shift 2 ;;
    --serve) MODE=serve; shift ;;
    --remote) MODE=remote; HOST="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
for t in ib_send_lat ib_write_lat ib_write_bw ibv_devices; do
  command -v "$t" >/dev/null || { echo "$t not found: apt-get install perftest ibverbs-utils" >&2; exit 2; }
done
if [ -z "$DEV" ]; then
  DEV=$(ibv_devices 2>/dev/null | awk 'NR>2 && $1!="" {print $1; exit}')
  [ -n "$DEV" ] || { echo "no RDMA device (ibv_devices lists none)" >&2; exit 2; }
fi
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

if [ -n "${CXLCHAR_BIN:-}" ]; then
  CX=$CXLCHAR_BIN
else
  cargo build --release -q -p cxlchar --features verbs
  CX=target/release/cxlchar
fi

# max inline granted to cxlchar's QPs (from its post measurements, or --max-inline)
max_inline() {
  if [ -n "$MAXINL" ]; then echo "$MAXINL"; return; fi
  [ -f "$W/post.json" ] || "$CX" verbs post --quick --device "$DEV" --format json > "$W/post.json"
  python3 - "$W/post.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
mi=[m["parameters"].get("max_inline_bytes") for m in d["measurements"] if m["id"].startswith("verbs.post/")]
mi=[x for x in mi if x is not None]
print(mi[0] if mi else 0)
PY
}

# One perftest client measurement: the result line's column, retried while the server is
# not up, for at most EACH seconds in all.
client() { # column tool args...
  local col=$1 tool=$2; shift 2
  local dest=127.0.0.1 out="" size left end
  [ "$MODE" = remote ] && dest=$HOST
  size=$(printf '%s\n' "$@" | awk 'p {print; exit} $0=="-s" {p=1}')
  end=$((SECONDS + EACH))
  while left=$((end - SECONDS)); [ "$left" -gt 0 ]; do
    out=$(timeout "$left" "$tool" -d "$DEV" "$@" "$dest" 2>&1 || true)
    if v=$(awk -v s="$size" -v c="$col" '$1==s && NF>=c && $2 ~ /^[0-9]+$/ {print $c; f=1; exit} END {exit !f}' <<<"$out"); then
      echo "$v"; return 0
    fi
    sleep 1
  done
  echo "$tool $* against $dest: no result within ${EACH}s; last output:" >&2
  tail -5 <<<"$out" >&2
  echo nan
}

# One perftest measurement: server here and client (local), or client only (remote).
pair() { # column tool args...
  local col=$1 tool=$2; shift 2
  if [ "$MODE" = local ]; then
    timeout "$EACH" "$tool" -d "$DEV" "$@" >/dev/null 2>&1 &
    local sp=$!
    client "$col" "$tool" "$@"
    wait $sp || true
  else
    client "$col" "$tool" "$@"
  fi
}

FAILED=""
if [ "$MODE" = serve ]; then
  echo "== serving cxlchar verbs --server on $DEV, then perftest for sizes: $SIZES" >&2
  for ((r = 1; r <= RUNS; r++)); do
    echo "== cxlchar verbs --server, run $r of $RUNS" >&2
    if timeout "$RUN_TMO" "$CX" verbs --server --device "$DEV" --timeout "$((RUN_TMO / 2))s" $QUICK >&2; then
      FAILED=""; break
    fi
    FAILED="cxlchar verbs --server: no run of $RUNS served its client to the end"
    echo "cxlchar verbs --server: run $r failed (above)" >&2
  done
  MI=$(max_inline)
  for s in $SIZES; do
    I=$(( s <= MI ? s : 0 ))
    for t in "ib_send_lat" "ib_write_lat" "ib_write_bw --report_gbits"; do
      # shellcheck disable=SC2086
      timeout "$EACH" $t -d "$DEV" -s "$s" -I "$I" -n "$ITERS" >/dev/null 2>&1 \
        || echo "server $t -s $s ended with an error" >&2
    done
  done
  [ -z "$FAILED" ] || { echo "$FAILED" >&2; exit 1; }
  exit 0
fi

if [ "$MODE" = local ]; then
  echo "== cxlchar verbs (device $DEV, loopback pair)" >&2
  "$CX" verbs --device "$DEV" $QUICK --format json > "$W/cx.json"
else
  # Each run's progress and errors go straight to this script's stderr (a run killed by
  # its bound still leaves them); a run's skip reasons are in its JSON.
  FAILED="cxlchar verbs --connect $HOST: no run of $RUNS measured"
  for ((r = 1; r <= RUNS; r++)); do
    echo "== cxlchar verbs --connect $HOST (device $DEV), run $r of $RUNS" >&2
    rc=0
    timeout "$RUN_TMO" "$CX" verbs --connect "$HOST" --device "$DEV" --timeout "${CXT}s" $QUICK --format json > "$W/cx.json" || rc=$?
    if [ "$rc" = 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(m["id"].startswith("verbs.lat/") for m in d["measurements"]) else 1)' "$W/cx.json"; then
      FAILED=""; break
    fi
    [ "$rc" != 124 ] || echo "cxlchar verbs --connect: run $r killed after ${RUN_TMO}s" >&2
    python3 -c 'import json,sys; [print("skipped: %s: %s" % (s["benchmark"], s["reason"]), file=sys.stderr) for s in json.load(open(sys.argv[1])).get("skipped", [])]' "$W/cx.json" >&2 || true
    echo "cxlchar verbs --connect: run $r failed (exit $rc)" >&2
    sleep 2
  done
fi
if [ -n "$FAILED" ]; then
  # perftest still runs (the other side serves it either way): what it measures tells a
  # broken link from a cxlchar failure. The max inline then comes from a loopback run.
  echo '{"measurements": [], "params": {}, "skipped": []}' > "$W/cx.json"
else
  cp "$W/cx.json" "$W/post.json"   # its post measurements carry the granted max inline
fi
[ -z "$OUTF" ] || cp "$W/cx.json" "${OUTF%.json}-cxlchar.json"
MI=$(max_inline)

: > "$W/rows.txt"
for s in $SIZES; do
  I=$(( s <= MI ? s : 0 ))
  sl=$(pair 5 ib_send_lat -s "$s" -I "$I" -n "$ITERS")
  wl=$(pair 5 ib_write_lat -s "$s" -I "$I" -n "$ITERS")
  wb=$(pair 4 ib_write_bw -s "$s" -I "$I" -n "$ITERS" --report_gbits)
  echo "$s $I $sl $wl $wb" >> "$W/rows.txt"
done

python3 - "$W/cx.json" "$W/rows.txt" "$MODE" "$DEV" "$MI" "${OUTF:-}" <<'PY'
import json, math, sys
cx = json.load(open(sys.argv[1]))
mode, dev, mi, outf = sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
def p50(prefix, suffix):
    v = [m["distribution"]["p50"] for m in cx["measurements"]
         if m["id"].startswith(prefix) and m["id"].endswith(suffix)]
    return v[0] if v else float("nan")
def ratio(a, b):
    return a / b if (a == a and b == b and b > 0) else float("nan")
rows = []
for line in open(sys.argv[2]):
    s, inl, sl, wl, wb = line.split()
    s = int(s)
    sl_ns = float(sl) * 1000 if sl != "nan" else float("nan")   # perftest: usec
    wl_ns = float(wl) * 1000 if wl != "nan" else float("nan")
    wb_gbs = float(wb) / 8 if wb != "nan" else float("nan")     # Gb/s -> GB/s
    cl = p50("verbs.lat/", "/send/%dB" % s)
    cb = p50("verbs.bw/", "/write/%dB" % s)
    rows.append(dict(size_bytes=s, inline_bytes=int(inl),
                     cxlchar_lat_ns=cl, perftest_send_lat_ns=sl_ns, lat_ratio=ratio(cl, sl_ns),
                     perftest_write_lat_ns=wl_ns,
                     cxlchar_bw_gbs=cb, perftest_write_bw_gbs=wb_gbs, bw_ratio=ratio(cb, wb_gbs)))
print("%-9s %6s %14s %14s %7s %12s %12s %7s %13s" % ("size", "inline", "cx_lat_ns", "send_lat_ns",
      "ratio", "cx_bw_GBs", "wr_bw_GBs", "ratio", "write_lat_ns"))
f = lambda x, p: ("%.*f" % (p, x)) if x == x else "nan"
for r in rows:
    print("%-9d %6d %14s %14s %7s %12s %12s %7s %13s" % (r["size_bytes"], r["inline_bytes"],
          f(r["cxlchar_lat_ns"], 0), f(r["perftest_send_lat_ns"], 0), f(r["lat_ratio"], 2),
          f(r["cxlchar_bw_gbs"], 3), f(r["perftest_write_bw_gbs"], 3), f(r["bw_ratio"], 2),
          f(r["perftest_write_lat_ns"], 0)))
print("ratio = cxlchar / perftest (%s, %s; rxe is an emulation: compare shape and ratio only)" % (dev, mode))
if outf:
    clean = lambda x: None if isinstance(x, float) and math.isnan(x) else x
    json.dump(dict(device=dev, mode=mode, max_inline_bytes=mi,
                   rows=[{k: clean(v) for k, v in r.items()} for r in rows]),
              open(outf, "w"), indent=1)
PY
[ -z "$FAILED" ] || { echo "$FAILED" >&2; exit 1; }
