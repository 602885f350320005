#!/usr/bin/env bash
# A planted outlier, found: four hosts simulated on this machine under Open MPI's mpirun
# (CXLCHAR_FLEET_HOSTNAME gives each rank its own host name; hosts of one machine measure
# one after the other), each rank confined to one CPU with taskset. Host h3 shares its CPU
# with a busy loop for the whole job (a disturbing load: the measuring thread gets about
# half the CPU); h0..h2 run on a CPU nothing else uses. The fleet summary and report must
# name h3 as the outlier of the bandwidth keys. Used for docs/fleet.md; not a test (its
# verdict rests on timing).
#
#   ci/fleet-outlier.sh [OUTDIR]      # default target/fleet-outlier; needs mpirun, 2 CPUs
#
# Environment: CXLCHAR_BIN (default target/release/cxlchar, built if missing), FLEET_CMD
# (default "mem bandwidth --quick").
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/fleet-outlier}
CX=${CXLCHAR_BIN:-target/release/cxlchar}
CMD=${FLEET_CMD:-mem bandwidth --quick}
command -v mpirun.openmpi >/dev/null || { echo "mpirun.openmpi missing: apt-get install openmpi-bin" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (one quiet, one disturbed)" >&2; exit 1; }
[ -x "$CX" ] || cargo build --release -q -p cxlchar
CX=$(realpath "$CX")
mkdir -p "$OUT"
rm -f "$OUT/fleet.json"
# The disturbing load: a busy loop on CPU 1 for the whole job.
taskset -c 1 sh -c 'while :; do :; done' &
HOG=$!
trap 'kill $HOG 2>/dev/null || true' EXIT
# shellcheck disable=SC2016
mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -np 4 sh -c '
  r=$OMPI_COMM_WORLD_RANK
  cpu=0; [ "$r" = 3 ] && cpu=1
  CXLCHAR_FLEET_HOSTNAME=h$r exec taskset -c $cpu "$0" $1 --fleet-out "$2"
' "$CX" "$CMD" "$OUT/fleet.json" | tee "$OUT/fleet.txt"
kill $HOG 2>/dev/null || true
"$CX" report "$OUT/fleet.json" --out "$OUT/fleet.html"
echo "wrote $OUT/fleet.json, $OUT/fleet.txt, $OUT/fleet.html"
