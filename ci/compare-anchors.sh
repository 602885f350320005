#!/usr/bin/env bash
# Compare cxlchar's idle memory latency with reference tools run with THEIR OWN
# DEFAULTS, on the CPU this runs on, and print a Markdown table naming that CPU.
#
#   ci/compare-anchors.sh [--rounds N] [--cpu C] [--quick] [--out FILE.json] [--full-all]
#
#   --rounds N     rounds per comparison, tools alternating (default 3)
#   --cpu C        CPU to pin every measurement to (default 0)
#   --quick        1 round, and no slot sweep on THP
#   --out FILE     also write the table as JSON (cpu, date, rows[], timings)
#   --full-all     also time the full `cxlchar all` (target <= 120 s)
#   -h, --help     this text
#
# Environment: CXLCHAR_BIN   a prebuilt cxlchar (default: cargo build --release -p cxlchar)
#              MULTICHASE_DIR a built checkout of google/multichase (git clone it; make),
#                             outside the tree, never committed. Default /tmp/anchors/multichase
# Needs: taskset, python3, gcc (builds ci/anchors/sattolo.c into a temp dir).
#
# Sizes: T = touched bytes = smallest power of two >= 4x the LLC (sysfs); with 256-byte
# slots (one chased line per slot) the memory spanned is 4T, which is multichase's -m.
# Rows (each: medians over the rounds, ratio = cxlchar / reference):
#   A  cxlchar mem latency defaults (randomized, slot 256, tlb-local) vs multichase -m 4T
#      (its defaults: stride 256 with the mixer, 4 KiB pages, 256 KiB TLB locality); 0.97..1.03
#   B  slot invariance at T, slots 128/256/512/1024, anon (4 KiB) and THP; spread <= 3%
#   C  --layout aligned vs randomized at slot 256 (what prefetchers gain; informational)
#   D  --target thp --order random vs ci/anchors/sattolo.c --thp (plain Sattolo cycle); 0.97..1.03
#   E  legacy stride-matched: --layout aligned --slot 64 vs multichase -m T -s 64 (informational)
#   F  time of `cxlchar all --quick` (<= 20 s: 16 commands since session 5) and, with --full-all, `cxlchar all` (<= 120 s)
# Progress goes to stderr, the report to stdout. Exit 0 when it ran (missed targets
# included: it is a report), 2 on usage errors or missing tools.
set -euo pipefail

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
die2() { echo "compare-anchors: $*" >&2; exit 2; }

ROUNDS=3
CPU=0
QUICK=0
OUT=
FULL_ALL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds|--cpu|--out)
      [ $# -ge 2 ] || die2 "$1 needs a value (see --help)"
      case "$1" in
        --rounds) ROUNDS="$2" ;;
        --cpu) CPU="$2" ;;
        --out) OUT="$2" ;;
      esac
      shift 2 ;;
    --quick) QUICK=1; shift ;;
    --full-all) FULL_ALL=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die2 "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die2 "--rounds wants a positive integer, got '$ROUNDS'"
[[ "$CPU" =~ ^[0-9]+$ ]] || die2 "--cpu wants one CPU number, got '$CPU'"
[ "$QUICK" = 1 ] && ROUNDS=1
if [ -n "$OUT" ]; then
  case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac   # before the cd below
fi

cd "$(dirname "$0")/.."
REPO=$PWD

# ---- tools -------------------------------------------------------------------------
command -v taskset >/dev/null || die2 "taskset not found (util-linux)"
command -v python3 >/dev/null || die2 "python3 is needed to read params.json"
command -v gcc >/dev/null || die2 "gcc not found: it builds ci/anchors/sattolo.c (apt-get install gcc)"
taskset -c "$CPU" true 2>/dev/null || die2 "CPU $CPU is not usable here (taskset -c $CPU failed)"
MC_DIR="${MULTICHASE_DIR:-/tmp/anchors/multichase}"
MC="$MC_DIR/multichase"
[ -x "$MC" ] || die2 "multichase not found in $MC_DIR: clone google/multichase there and run make, or set MULTICHASE_DIR"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ -n "${CXLCHAR_BIN:-}" ]; then
  CX="$CXLCHAR_BIN"
  [ -x "$CX" ] || die2 "CXLCHAR_BIN=$CX is not executable"
else
  command -v cargo >/dev/null || die2 "cargo not found (or set CXLCHAR_BIN to a built cxlchar)"
  echo "building cxlchar (cargo build --release -p cxlchar)..." >&2
  cargo build --release -q -p cxlchar || die2 "cargo build failed"
  CX="$REPO/target/release/cxlchar"
fi
"$CX" mem latency --help 2>/dev/null | grep -q -- '--slot' \
  || die2 "$CX has no 'mem latency --slot' option (an older build?)"

gcc -O2 -std=c99 -Wall -o "$TMP/sattolo" "$REPO/ci/anchors/sattolo.c" \
  || die2 "gcc failed to build ci/anchors/sattolo.c"
SAT="$TMP/sattolo"

# ---- helpers (numbers and JSON in python) ------------------------------------------
cat > "$TMP/h.py" <<'PY'
import json, math, os, statistics, sys

def nums(csv):
    out = []
    for x in csv.split(","):
        try:
            v = float(x)
        except ValueError:
            continue
        if not math.isnan(v):
            out.append(v)
    return out

def med(vals):
    return statistics.median(vals) if vals else float("nan")

def f2(v):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else "%.2f" % v

def rows_file():
    return os.path.join(os.environ["TMP"], "rows.jsonl")

def add(row):
    with open(rows_file(), "a") as f:
        f.write(json.dumps(row) + "\n")

def within(r, lo, hi):
    return "yes" if lo <= r <= hi else "no"

cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "median":
    print(med(nums(",".join(a))))
elif cmd in ("p50", "thp_fraction"):
    # file size_bytes order slot layout -> p50 (ns) of that point, or its placement's
    # thp_fraction. Matches the parameters, not the id label; skips the prefetch
    # self-check chains (ids .../check/...) and the cold-lap point.
    path, size, order, slot, layout = a[0], int(a[1]), a[2], int(a[3]), a[4]
    try:
        d = json.load(open(path))
    except Exception as e:
        print("nan" if cmd == "p50" else "n/a")
        sys.stderr.write("compare-anchors: unreadable cxlchar JSON: %s\n" % e); sys.exit(0)
    def ok(m):
        p = m.get("parameters", {})
        return (int(p.get("size_bytes", -1)) == size and p.get("order") == order
                and int(p.get("slot_bytes", slot)) == slot and p.get("layout", layout) == layout
                and "/check/" not in m.get("id", "") and "cold-lap" not in m.get("id", ""))
    hit = [m for m in d.get("measurements", []) if ok(m)]
    if cmd == "thp_fraction":
        v = (hit[0].get("placement") or {}).get("thp_fraction") if hit else None
        print("n/a" if v is None else "%.3f" % v)
    elif hit:
        print(hit[0]["distribution"]["p50"])
    else:
        print("nan")
        sys.stderr.write("compare-anchors: no point with size_bytes=%d order=%s slot=%d layout=%s in %s\n"
                         % (size, order, slot, layout, [m.get("id") for m in d.get("measurements", [])]))
elif cmd == "extra":
    # file -> print params.mem_lat_ns and prefetch_check (raw) when present
    try:
        d = json.load(open(a[0]))
    except Exception:
        sys.exit(0)
    out = {}
    if isinstance(d.get("params"), dict) and "mem_lat_ns" in d["params"]:
        out["mem_lat_ns"] = d["params"]["mem_lat_ns"]
    if "prefetch_check" in d:
        out["prefetch_check"] = d["prefetch_check"]
    print(json.dumps(out))
elif cmd == "pair":
    # name reference target(lo..hi|info) refvals cxvals note
    name, ref, target, rv, cv, note = a
    r, c = nums(rv), nums(cv)
    mr, mc = med(r), med(c)
    ratio = mc / mr if r and c and mr > 0 else float("nan")
    if not r or not c:
        met = "failed"
    elif target == "info" or math.isnan(ratio):
        met = "-"
    else:
        lo, hi = (float(x) for x in target.split(".."))
        met = within(ratio, lo, hi)
    if "{rounds}" in note:
        note = note.replace("{rounds}", "rounds: reference %s, cxlchar %s" % (
            " ".join("%.2f" % x for x in r) or "n/a", " ".join("%.2f" % x for x in c) or "n/a"))
    add(dict(row=name, reference=ref, ref_ns=mr, cxlchar_ns=mc, ratio=ratio, target=target,
             met=met, ref_samples=r, cxlchar_samples=c, note=note))
elif cmd == "spread":
    # name reference max_pct meds(csv) note -> spread = (max-min)/median of the medians
    name, ref, limit, mv, note = a
    v = nums(mv)
    sp = 100 * (max(v) - min(v)) / med(v) if len(v) >= 2 else float("nan")
    met = "-" if math.isnan(sp) else ("yes" if sp <= float(limit) else "no")
    note = note.replace("{medians}", "medians " + " ".join("%.2f" % x for x in v))
    add(dict(row=name, reference=ref, ref_ns=None, cxlchar_ns=None, ratio=None,
             spread_pct=sp, target="<= %s%%" % limit, met=met, note=note))
elif cmd == "skip":
    name, ref, why = a
    add(dict(row=name, reference=ref, ref_ns=None, cxlchar_ns=None, ratio=None,
             target="-", met="skipped", note=why))
elif cmd == "timing":
    # name seconds(or nan) limit note
    name, secs, limit, note = a
    s = float(secs)
    met = "-" if math.isnan(s) else ("yes" if s <= float(limit) else "no")
    with open(os.path.join(os.environ["TMP"], "timings.jsonl"), "a") as f:
        f.write(json.dumps(dict(name=name, seconds=None if math.isnan(s) else s,
                                target_s=float(limit), met=met, note=note)) + "\n")
elif cmd == "render":
    # header.json out.json|"" -> markdown on stdout
    hdr = json.load(open(a[0]))
    rows = [json.loads(l) for l in open(rows_file())] if os.path.exists(rows_file()) else []
    tp = os.path.join(os.environ["TMP"], "timings.jsonl")
    tims = [json.loads(l) for l in open(tp)] if os.path.exists(tp) else []
    print("| row | reference | ref (ns) | cxlchar (ns) | ratio | target | met |")
    print("|---|---|---:|---:|---:|---|---|")
    for r in rows:
        if r.get("met") == "skipped":
            ratio = "skipped: " + r["note"]
        elif "spread_pct" in r:
            ratio = "spread " + (f2(r["spread_pct"]) + "%" if not math.isnan(r["spread_pct"]) else "n/a")
        else:
            ratio = "n/a" if r["ratio"] is None or math.isnan(r["ratio"]) else "%.3f" % r["ratio"]
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["row"], r["reference"], f2(r["ref_ns"]) if r["ref_ns"] is not None else "-",
            f2(r["cxlchar_ns"]) if r["cxlchar_ns"] is not None else "-", ratio, r["target"], r["met"]))
    for t in tims:
        secs = "failed" if t["seconds"] is None else "%.1f s" % t["seconds"]
        print("| %s | - | - | %s | - | <= %g s | %s |" % (t["name"], secs, t["target_s"], t["met"]))
    notes = [(r["row"], r["note"]) for r in rows if r.get("note") and r.get("met") != "skipped"]
    notes += [(t["name"], t["note"]) for t in tims if t.get("note")]
    if notes:
        print()
        for n, t in notes:
            print("- %s: %s" % (n, t))
    if len(a) > 1 and a[1]:
        doc = dict(hdr)
        for r in rows:
            for k, v in list(r.items()):
                if isinstance(v, float) and math.isnan(v):
                    r[k] = None
        doc["rows"] = rows
        doc["timings"] = tims
        tmp = a[1] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, a[1])
PY
export TMP
h() { python3 "$TMP/h.py" "$@"; }
log() { echo "[compare-anchors] $*" >&2; }
join() { local IFS=,; echo "$*"; }

# Byte counts as K/M/G labels (exact binary multiples; else plain bytes).
label() {
  local b=$1
  if (( b % (1 << 30) == 0 )); then echo "$((b >> 30))G"
  elif (( b % (1 << 20) == 0 )); then echo "$((b >> 20))M"
  elif (( b % (1 << 10) == 0 )); then echo "$((b >> 10))K"
  else echo "$b"; fi
}
lower() { label "$1" | tr 'KMG' 'kmg'; }   # multichase wants lower-case suffixes
to_bytes() { # "32768K" / "1M" / "123" -> bytes
  local s=$1 n=${1%[KkMmGg]}
  case "$s" in
    *[Kk]) echo $((n << 10)) ;; *[Mm]) echo $((n << 20)) ;; *[Gg]) echo $((n << 30)) ;; *) echo "$n" ;;
  esac
}

# ---- the cxlchar calls (all of them are here) --------------------------------------
# cx_point SIZE_BYTES ORDER [mem latency flags...] -> p50 (ns) of the point with that
# size_bytes (touched), order, slot and layout (from the flags; defaults 256, randomized);
# "nan" if the run or the lookup fails. The JSON of the run stays in $TMP/cx-last.json.
# Rows B..E pass --no-prefetch-check: the self-check runs extra chains at the DRAM point
# (slower) and changes nothing in the point measured; row A runs the plain defaults.
cx_point() {
  local size=$1 order=$2 slot=256 layout=randomized i; shift 2
  local args=("$@")
  for ((i = 0; i + 1 < ${#args[@]}; i++)); do   # what to look for in the output
    case "${args[i]}" in --slot) slot=${args[i+1]} ;; --layout) layout=${args[i+1]} ;; esac
  done
  if "$CX" mem latency --sizes "$(label "$size")" --cpu "$CPU" --format json "$@" \
       > "$TMP/cx-last.json" 2> "$TMP/cx-last.err"; then
    h p50 "$TMP/cx-last.json" "$size" "$order" "$slot" "$layout"
  else
    log "cxlchar mem latency $* failed: $(tail -n 3 "$TMP/cx-last.err")"
    echo nan
  fi
}
# cx_all_seconds [all flags...] -> wall seconds of `cxlchar all` as a user runs it (every CPU,
# no --cpu), or "nan" if it failed
cx_all_seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  if "$CX" all "$@" > /dev/null 2> "$TMP/all.err"; then
    t1=$(date +%s.%N)
    python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1"
  else
    log "cxlchar all $* failed: $(tail -n 3 "$TMP/all.err")"
    echo nan
  fi
}

# ---- the reference tools -----------------------------------------------------------
mc_run() { # multichase flags... -> ns per load (its best sample of 10), or nan
  local v
  if v=$(taskset -c "$CPU" "$MC" -n 10 "$@" 2> "$TMP/mc.err") && [[ "$(echo "$v" | tr -d ' \n')" =~ ^[0-9.]+$ ]]; then
    echo "$v" | tr -d ' \n'; echo
  else
    log "multichase $* failed: $(tail -n 3 "$TMP/mc.err") $v"
    echo nan
  fi
}
sat_run() { # sattolo args... -> median ns per load, or nan; stderr line kept in $TMP/sat.err
  local v
  if v=$(taskset -c "$CPU" "$SAT" "$@" 2> "$TMP/sat.err"); then
    echo "$v"
  else
    log "sattolo $* failed: $(cat "$TMP/sat.err")"
    echo nan
  fi
}

# ---- the machine -------------------------------------------------------------------
cpuinfo() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true; }
MODEL=$(cpuinfo 'model name'); VENDOR=$(cpuinfo vendor_id)
FAMILY=$(cpuinfo 'cpu family'); MODELNO=$(cpuinfo model); STEPPING=$(cpuinfo stepping)
if [ -z "$MODEL" ] && command -v lscpu >/dev/null; then   # e.g. non-x86 /proc/cpuinfo
  MODEL=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
  VENDOR=$(lscpu | sed -n 's/^Vendor ID: *//p' | head -1)
fi
FMS="family ${FAMILY:-?} model ${MODELNO:-?} stepping ${STEPPING:-?}"
if [[ "$FAMILY" =~ ^[0-9]+$ && "$MODELNO" =~ ^[0-9]+$ ]]; then
  FMS="$FMS ($(printf '0x%x/0x%x' "$FAMILY" "$MODELNO"))"
fi

CACHE_DIR=/sys/devices/system/cpu/cpu$CPU/cache
[ -d "$CACHE_DIR" ] || CACHE_DIR=/sys/devices/system/cpu/cpu0/cache
CACHES=""; LLC=0; LLC_LEVEL=0
for d in "$CACHE_DIR"/index*; do
  [ -r "$d/size" ] || continue
  lvl=$(cat "$d/level"); typ=$(cat "$d/type"); sz=$(cat "$d/size")
  [ "$typ" = Instruction ] && continue
  name="L$lvl"; [ "$typ" = Data ] && name="L${lvl}d"
  CACHES="$CACHES${CACHES:+, }$name $sz"
  b=$(to_bytes "$sz")
  if (( lvl > LLC_LEVEL || (lvl == LLC_LEVEL && b > LLC) )); then LLC=$b; LLC_LEVEL=$lvl; fi
done
(( LLC > 0 )) || die2 "no cache sizes in $CACHE_DIR (sysfs): cannot size the DRAM point"

VIRT=""
if command -v lscpu >/dev/null; then
  hv=$(lscpu | sed -n 's/^Hypervisor vendor: *//p' | head -1)
  vt=$(lscpu | sed -n 's/^Virtualization type: *//p' | head -1)
  [ -n "$hv" ] && VIRT="hypervisor $hv${vt:+ ($vt)}"
fi
if command -v systemd-detect-virt >/dev/null; then
  vm=$(systemd-detect-virt --vm 2>/dev/null || true)
  ct=$(systemd-detect-virt --container 2>/dev/null || true)
  [ -n "$vm" ] && [ "$vm" != none ] && VIRT="$VIRT${VIRT:+; }vm: $vm"
  [ -n "$ct" ] && [ "$ct" != none ] && VIRT="$VIRT${VIRT:+; }container: $ct"
fi
[ -n "$VIRT" ] || VIRT="none detected (bare metal?)"
THP_MODE=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "n/a")
DATE=$(date -u +%FT%TZ)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
MEM_AVAIL=$(( $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024 ))

T=1; while (( T < 4 * LLC )); do T=$((T * 2)); done   # touched bytes
SPAN=$((T * 4))                                      # spanned with 256-byte slots
fits() { (( $1 <= MEM_AVAIL / 2 )); }                 # span bytes -> fits in MemAvailable/2?
span_of() { echo $(( T * $1 / 64 )); }               # slot -> span bytes at T

CXVER=$("$CX" --version 2>/dev/null | head -1 || true)
MCVER=$(git -C "$MC_DIR" log -1 --format=%h 2>/dev/null || echo "unknown commit")

python3 - "$TMP/header.json" <<'PY' "$MODEL" "$VENDOR" "$FAMILY" "$MODELNO" "$STEPPING" "$CACHES" "$LLC" \
  "$VIRT" "$(uname -r)" "$THP_MODE" "$DATE" "$ROUNDS" "$CPU" "$T" "$SPAN" "$CXVER" "$MCVER" "$QUICK"
import json, sys
(out, model, vendor, family, modelno, stepping, caches, llc, virt, kernel, thp, date, rounds, cpu,
 t, span, cxver, mcver, quick) = sys.argv[1:]
json.dump(dict(
    cpu=dict(model=model, vendor=vendor, family=family, model_number=modelno, stepping=stepping,
             caches=caches, llc_bytes=int(llc), virtualization=virt, kernel=kernel, thp=thp),
    date=date, rounds=int(rounds), quick=quick == "1", cpu_used=int(cpu), touched_bytes=int(t),
    span_bytes=int(span), cxlchar=cxver, multichase=mcver), open(out, "w"))
PY

# ---- measurements ------------------------------------------------------------------
# Each round alternates the tools and flips their order on odd rounds, so a slow drift
# (frequency, a neighbour VM) does not favour one side.
TL=$(label "$T"); SPL=$(label "$SPAN")
log "CPU $CPU: ${MODEL:-unknown}; LLC $(label "$LLC"); touched T=$TL, span $SPL; $ROUNDS round(s)"

# A: defaults vs defaults.
mc=(); cx=()
for r in $(seq "$ROUNDS"); do
  for who in mc cx; do
    if (( r % 2 == 0 )); then who=$([ "$who" = mc ] && echo cx || echo mc); fi
    if [ "$who" = mc ]; then mc+=("$(mc_run -m "$(lower "$SPAN")")"); log "A round $r multichase -m $(lower "$SPAN"): ${mc[-1]}"
    else cx+=("$(cx_point "$T" tlb-local)"); log "A round $r cxlchar --sizes $TL: ${cx[-1]}"; fi
  done
done
EXTRA=$(h extra "$TMP/cx-last.json")
h pair "A: mem_lat_ns vs multichase default" "multichase -m $(lower "$SPAN") -n 10" 0.97..1.03 \
  "$(join "${mc[@]}")" "$(join "${cx[@]}")" \
  "cxlchar mem latency --sizes $TL (randomized, slot 256, tlb-local) p50; multichase best of 10 samples; {rounds}"

# B: slot invariance at T, 4 KiB pages, then THP.
TARGETS=(anon); [ "$QUICK" = 1 ] || TARGETS+=(thp)
for tgt in "${TARGETS[@]}"; do
  slots=(); skipped=()
  for s in 128 256 512 1024; do
    sp=$(span_of "$s")
    if fits "$sp"; then slots+=("$s"); else skipped+=("$s"); fi
  done
  declare -A vals=(); thpf=()
  for r in $(seq "$ROUNDS"); do
    order=("${slots[@]}")
    if (( r % 2 == 0 )); then order=(); for ((i = ${#slots[@]} - 1; i >= 0; i--)); do order+=("${slots[i]}"); done; fi
    for s in "${order[@]}"; do
      v=$(cx_point "$T" tlb-local --no-prefetch-check --target "$tgt" --slot "$s")
      [ "$tgt" = thp ] && thpf+=("$(h thp_fraction "$TMP/cx-last.json" "$T" tlb-local "$s" randomized)")
      vals[$s]="${vals[$s]:-}${vals[$s]:+,}$v"
      log "B round $r $tgt slot $s: $v"
    done
  done
  meds=()
  ref256=${vals[256]:-nan}
  for s in "${slots[@]}"; do
    h pair "B: slot $s, $tgt" "cxlchar slot 256" info "$ref256" "${vals[$s]}" ""
    meds+=("$(h median "${vals[$s]}")")
  done
  for s in "${skipped[@]}"; do
    h skip "B: slot $s, $tgt" "-" "span $(label "$(span_of "$s")") > MemAvailable/2 ($(label $((MEM_AVAIL / 2 / 1048576 * 1048576))))"
  done
  pages="4 KiB pages"; [ "$tgt" = thp ] && pages="THP, cxlchar thp_fraction per run ${thpf[*]}"
  h spread "B: slot spread, $tgt" "slots ${slots[*]}" 3 "$(join "${meds[@]}")" \
    "touched $TL, randomized, tlb-local, $pages; {medians}"
  unset vals
done

# C: aligned vs randomized (slot 256).
al=(); rn=()
for r in $(seq "$ROUNDS"); do
  for who in al rn; do
    if (( r % 2 == 0 )); then who=$([ "$who" = al ] && echo rn || echo al); fi
    if [ "$who" = al ]; then al+=("$(cx_point "$T" tlb-local --no-prefetch-check --layout aligned --slot 256)"); log "C round $r aligned: ${al[-1]}"
    else rn+=("$(cx_point "$T" tlb-local --no-prefetch-check)"); log "C round $r randomized: ${rn[-1]}"; fi
  done
done
h pair "C: aligned / randomized, slot 256" "cxlchar randomized (default)" info \
  "$(join "${rn[@]}")" "$(join "${al[@]}")" "cxlchar column = --layout aligned; below 1 = what a prefetcher gains on a naive chain; {rounds}"

# D: full random on THP vs a plain Sattolo chase with THP.
if fits "$SPAN"; then
  st=(); cx=(); shares=(); cxthp=()
  for r in $(seq "$ROUNDS"); do
    for who in st cx; do
      if (( r % 2 == 0 )); then who=$([ "$who" = st ] && echo cx || echo st); fi
      if [ "$who" = st ]; then
        st+=("$(sat_run "$(label "$SPAN")" 256 --thp)")
        shares+=("$(sed -n 's/.*thp_share=\([0-9.]*\).*/\1/p' "$TMP/sat.err" | tail -1)")
        log "D round $r sattolo: ${st[-1]} (THP share ${shares[-1]:-?})"
      else
        cx+=("$(cx_point "$T" random --no-prefetch-check --target thp --order random --slot 256)")
        cxthp+=("$(h thp_fraction "$TMP/cx-last.json" "$T" random 256 randomized)")
        log "D round $r cxlchar thp random: ${cx[-1]}"
      fi
    done
  done
  minshare=$(python3 -c 'import sys; v=[float(x) for x in sys.argv[1:] if x]; print(min(v) if v else -1)' "${shares[@]}")
  tgtD=0.97..1.03
  if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 0.9 else 1)' "$minshare"; then :; else tgtD=info; fi
  h pair "D: full random, THP" "sattolo $(label "$SPAN") 256 --thp" "$tgtD" "$(join "${st[@]}")" "$(join "${cx[@]}")" \
    "sattolo THP share (min over rounds) $minshare$([ $tgtD = info ] && echo ' (< 0.9: informational)'), cxlchar thp_fraction ${cxthp[*]}; sattolo median of 10 batches; {rounds}"
else
  h skip "D: full random, THP" "sattolo" "span $(label "$SPAN") > MemAvailable/2"
fi

# E: legacy stride-matched (64-byte stride, touches T in both).
mc=(); cx=()
for r in $(seq "$ROUNDS"); do
  for who in mc cx; do
    if (( r % 2 == 0 )); then who=$([ "$who" = mc ] && echo cx || echo mc); fi
    if [ "$who" = mc ]; then mc+=("$(mc_run -m "$(lower "$T")" -s 64)"); log "E round $r multichase -s 64: ${mc[-1]}"
    else cx+=("$(cx_point "$T" tlb-local --no-prefetch-check --layout aligned --slot 64)"); log "E round $r cxlchar aligned slot 64: ${cx[-1]}"; fi
  done
done
h pair "E: legacy stride 64" "multichase -m $(lower "$T") -s 64 -n 10" info "$(join "${mc[@]}")" "$(join "${cx[@]}")" \
  "cxlchar --layout aligned --slot 64; {rounds}"

# F: wall time of `cxlchar all`.
log "F timing cxlchar all --quick..."
h timing "F: cxlchar all --quick" "$(cx_all_seconds --quick --out "$TMP/q.json")" 20 ""
if [ "$FULL_ALL" = 1 ]; then
  log "F timing cxlchar all (full)..."
  h timing "F: cxlchar all" "$(cx_all_seconds --out "$TMP/full.json")" 120 ""
fi

# ---- report ------------------------------------------------------------------------
echo "## cxlchar idle latency vs reference tools at their defaults"
echo
echo "- CPU: ${MODEL:-unknown} (${VENDOR:-?}, $FMS); measured on CPU $CPU"
echo "- caches (sysfs): $CACHES; DRAM point: touched $TL (>= 4x LLC $(label "$LLC")), span $SPL with 256-B slots"
echo "- virtualization: $VIRT; kernel $(uname -r); THP: $THP_MODE"
echo "- load average (1/5/15 min) at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg): other work on these CPUs or this memory skews every row"
echo "- date $DATE; $ROUNDS round(s)$([ "$QUICK" = 1 ] && echo ' (--quick)'); ${CXVER:-cxlchar}; multichase $MCVER"
if [ -n "$EXTRA" ] && [ "$EXTRA" != "{}" ]; then
  echo "- cxlchar extras (last default run): \`$EXTRA\`"
fi
echo
if [ -n "$OUT" ]; then
  python3 - "$TMP/header.json" "$EXTRA" "$LOAD_START" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, sys
h = json.load(open(sys.argv[1])); e = json.loads(sys.argv[2] or "{}"); h.update(e)
h["loadavg"] = dict(start=sys.argv[3], end=sys.argv[4])
json.dump(h, open(sys.argv[1], "w"))
PY
fi
h render "$TMP/header.json" "$OUT"
[ -n "$OUT" ] && echo "(JSON written to $OUT)" >&2
exit 0
