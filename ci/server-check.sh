#!/usr/bin/env bash
# Run the reference tools at THEIR OWN DEFAULTS next to cxlchar, on this machine, in one
# sitting, and print the ratio table (Markdown) naming the CPU: the check that cxlchar's
# DRAM figures leave every cache on a server, not only on a 2-vCPU guest.
#
#   ci/server-check.sh bundle DIR        build cxlchar and the references into DIR (here)
#   ci/server-check.sh run [OPTIONS]     measure (there: any machine with a few cores)
#
# run options:
#   --bundle DIR     binaries from `bundle` (default: target/server-check)
#   --out DIR        logs, params files and table.md (default: target/server-check-out),
#                    and all of it in DIR.tgz
#   --deadline S     end every step by S seconds after the start (default 480): a step
#                    still running then is stopped (SIGTERM) and listed as not finished, a
#                    step that would start later as not run; neither gives a figure
#   --no-full-all    do not run the full `cxlchar all` (only `all --quick`)
#   -h, --help       this text
#
# The bundle (DIR/bin, DIR/lib, DIR/src; nothing of it is committed):
#   cxlchar          release build of this checkout, stripped
#   multichase       google/multichase, static (MULTICHASE_DIR: a clone of it, outside the tree)
#   stream           STREAM (STREAM_DIR: a clone holding stream.c), OpenMP, 200M elements;
#                    src/stream.c is rebuilt there with larger arrays when gcc is present and
#                    the machine's caches ask for more (each array >= 4 x every cache)
#   likwid-bench     Debian's likwid with its libraries (apt-get download), when available
#   nvbandwidth      NVBANDWIDTH=PATH (a build of NVIDIA/nvbandwidth), when given
#
# Rows (cxlchar / reference; GB = 1e9 B; copies count bytes read + written):
#   mem_lat_ns       vs multichase defaults (stride 256, its mixer, 4 KiB pages) at the span of
#                    cxlchar's DRAM chain (same touched lines), target 0.95..1.05; and for
#                    information multichase -m 64m, 1g, 4g and its default 256 MiB
#   mem_bw_gbs       (every CPU, read) vs cxlchar's own 4 GiB figure and likwid-bench
#                    load_avx512 at the same footprint, target 0.95..1.05
#   all-thread       every all-thread kernel against likwid-bench at the same threads and
#   kernels          footprint (read / load, nt-write / store_mem, copy / copy), 1 thread and
#                    every CPU, three rounds alternating the tools, medians, target
#                    0.95..1.05; each cxlchar figure with the spread of its windows
#   STREAM           Copy and Triad with the write-allocate bytes counted (x 1.5, x 4/3:
#                    the memory traffic of temporal stores) beside cxlchar's copy
#   copy / nt-copy   vs cxlchar at 4 GiB; STREAM Copy / Triad with every thread (information:
#                    STREAM's copy is a memcpy, which glibc may run with streaming stores)
#   quick vs full    the same keys from `all --quick` and `all` (same working sets)
#   gpu              gpu_h2d_bw_gbs / gpu_d2h_bw_gbs vs nvbandwidth copy engine, when a GPU
#                    and nvbandwidth are there
# Exit 0 when it ran (missed targets are a result), 2 on usage errors or a missing bundle.
set -uo pipefail

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
die2() { echo "server-check: $*" >&2; exit 2; }

REPO=$(cd "$(dirname "$0")/.." && pwd)

# ---- bundle --------------------------------------------------------------------------
bundle() {
  local dir=$1
  [ -n "$dir" ] || die2 "bundle needs a folder"
  mkdir -p "$dir/bin" "$dir/lib" "$dir/src" || die2 "cannot create $dir"
  dir=$(cd "$dir" && pwd)
  local mc=${MULTICHASE_DIR:-/tmp/refs/multichase} st=${STREAM_DIR:-/tmp/refs/STREAM}
  [ -f "$mc/multichase.c" ] || die2 "MULTICHASE_DIR ($mc) holds no multichase.c: clone google/multichase there"
  [ -f "$st/stream.c" ] || die2 "STREAM_DIR ($st) holds no stream.c: clone a STREAM repository there"
  (cd "$REPO" && cargo build --release -q -p cxlchar) || die2 "cargo build failed"
  cp "$REPO/target/release/cxlchar" "$dir/bin/" && strip "$dir/bin/cxlchar"
  make -s -C "$mc" clean >/dev/null 2>&1
  make -s -C "$mc" multichase CFLAGS="-O2 -pthread" LDFLAGS="-static" >/dev/null \
    || die2 "multichase did not build"
  cp "$mc/multichase" "$dir/bin/" && strip "$dir/bin/multichase"
  cp "$st/stream.c" "$dir/src/"
  gcc -O3 -march=x86-64-v3 -fopenmp -mcmodel=medium -DSTREAM_ARRAY_SIZE=200000000 \
    -DNTIMES=10 "$st/stream.c" -o "$dir/bin/stream" || die2 "stream did not build"
  cp -L "$(gcc -print-file-name=libgomp.so.1)" "$dir/lib/"
  if command -v apt-get >/dev/null; then
    local tmp; tmp=$(mktemp -d)
    if (cd "$tmp" && apt-get download likwid liblua5.3-0 libhwloc15 >/dev/null 2>&1); then
      for d in "$tmp"/*.deb; do dpkg -x "$d" "$tmp/x"; done
      cp "$tmp/x/usr/bin/likwid-bench" "$tmp/x/usr/sbin/likwid-accessD" "$dir/bin/"
      cp -a "$tmp"/x/usr/lib/x86_64-linux-gnu/*.so* "$dir/lib/"
    else
      echo "server-check: likwid not bundled (apt-get download failed)" >&2
    fi
    rm -rf "$tmp"
  fi
  du -sh "$dir"
}

# ---- helpers ---------------------------------------------------------------------------
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
# Runs "$@" when the deadline allows, logging to $OUT/$name.log; returns its status.
step() {
  local name=$1; shift
  if [ "$(elapsed)" -ge "$DEADLINE" ]; then
    echo "== [$(elapsed)s] $name: not run (deadline ${DEADLINE}s reached)" | tee -a "$OUT/steps.txt"
    return 99
  fi
  echo "== [$(elapsed)s] $name: $*" | tee -a "$OUT/steps.txt" >&2
  local t; t=$(date +%s.%N)
  timeout --signal=TERM --kill-after=10 $(( DEADLINE - $(elapsed) )) "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    echo "$name: not finished (deadline ${DEADLINE}s reached)" | tee -a "$OUT/steps.txt" >&2
    rm -f "$OUT/$name.seconds"
    return $rc
  fi
  local dt; dt=$(python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.1f}')" "$(date +%s.%N)" "$t")
  echo "$name rc=$rc ${dt}s" | tee -a "$OUT/steps.txt" >&2
  echo "$dt" > "$OUT/$name.seconds"
  return $rc
}
# Every all-thread kernel against likwid-bench at the same threads and footprint (the
# footprint of cxlchar's all-thread DRAM point, in bytes; likwid's MB are 1e6 B): three
# rounds, the two tools alternating, one line per figure in $OUT/kernels.tsv
# (kernel threads round cxlchar likwid spread).
kernels_vs_likwid() {
  local cx=$1 ncpu=$2 bw=$3 fp
  fp=$(python3 - "$bw" "$ncpu" <<'EOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d.get("dram_check", []) if c["benchmark"] == "mem.bandwidth" and c["threads"] == int(sys.argv[2])]
print(c[0]["reported_bytes"] if c else "")
EOF
)
  [ -n "$fp" ] || { echo "kernels vs likwid: skipped: no all-thread DRAM footprint in bw.json" >> "$OUT/steps.txt"; return; }
  local suf=avx; grep -qw avx512f /proc/cpuinfo && suf=avx512
  local mb=$(( fp / 1000000 ))
  : > "$OUT/kernels.tsv"
  for r in 1 2 3; do
    for pair in read:load nt-write:store_mem copy:copy; do
      local k=${pair%%:*} lk=${pair#*:}
      step "cx_${k}_$r" "$cx" mem bandwidth --quick --kernel "$k" --sizes "$fp" --out "$OUT/cx_${k}_$r.json" || continue
      for t in 1 "$ncpu"; do
        step "lk_${k}_${t}t_$r" likwid-bench -t "${lk}_$suf" -w "N:${mb}MB:$t" || continue
        python3 - "$OUT/cx_${k}_$r.json" "$k" "$t" "$r" "$(awk '/^MByte\/s:/ {print $2/1000}' "$OUT/lk_${k}_${t}t_$r.log")" >> "$OUT/kernels.tsv" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); k, t, r, lk = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
m = [m for m in d["measurements"] if m["parameters"].get("kernel") == k and m["parameters"].get("threads") == t and not m["id"].endswith("/bulk-sync")]
if m and lk:
    x = m[0]["distribution"]
    print(k, t, r, x["p50"], lk, (x["max"] - x["min"]) / x["p50"] if x["p50"] else 0, sep="\t")
EOF
      done
    done
  done
}

# ---- run --------------------------------------------------------------------------------
run() {
  local bundle_dir=$REPO/target/server-check
  OUT=$REPO/target/server-check-out
  DEADLINE=480
  local full_all=1
  while [ $# -gt 0 ]; do
    case "$1" in
      --bundle|--out|--deadline)
        [ $# -ge 2 ] || die2 "$1 needs a value (see --help)"
        case "$1" in
          --bundle) bundle_dir=$2 ;;
          --out) OUT=$2 ;;
          --deadline) DEADLINE=$2 ;;
        esac
        shift 2 ;;
      --no-full-all) full_all=0; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die2 "unknown argument: $1 (see --help)" ;;
    esac
  done
  [[ "$DEADLINE" =~ ^[1-9][0-9]*$ ]] || die2 "--deadline wants seconds, got '$DEADLINE'"
  local B=$bundle_dir/bin
  export LD_LIBRARY_PATH="$bundle_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$B:$PATH"
  local CX=${CXLCHAR_BIN:-$B/cxlchar}
  [ -x "$CX" ] || die2 "no cxlchar in $B (run: ci/server-check.sh bundle $bundle_dir)"
  [ -x "$B/multichase" ] || die2 "no multichase in $B (run: ci/server-check.sh bundle $bundle_dir)"
  mkdir -p "$OUT" || die2 "cannot create $OUT"
  OUT=$(cd "$OUT" && pwd)
  : > "$OUT/steps.txt"
  local ncpu; ncpu=$(nproc)

  # The machine, and the caches every CPU can fill together (the sizing rule's input).
  { lscpu; grep -E "MemTotal|MemAvailable" /proc/meminfo; uname -r;
    cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; } > "$OUT/machine.txt" 2>&1
  read -r REACH1 REACHALL < <(python3 - <<'EOF'
import glob, os
def reach(cpus):
    seen = {}
    for c in cpus:
        own = []
        for d in glob.glob(f"/sys/devices/system/cpu/cpu{c}/cache/index*"):
            r = lambda f: open(os.path.join(d, f)).read().strip()
            try:
                if r("type") == "Instruction":
                    continue
                lvl, size, shared = int(r("level")), r("size"), r("shared_cpu_list")
            except OSError:
                continue
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
            own.append((lvl, int(size.rstrip("KMG")) * mult, shared))
        if not own:
            continue
        top = max(l for l, _, _ in own)
        for l, s, sh in own:
            if l >= 2 or l == top:
                seen[(l, sh)] = s
    return sum(seen.values())
cpus = sorted(int(p[len("/sys/devices/system/cpu/cpu"):]) for p in glob.glob("/sys/devices/system/cpu/cpu[0-9]*"))
print(reach(cpus[:1]), reach(cpus))
EOF
)
  echo "caches: CPU 0 reaches $((REACH1 >> 20)) MiB, all $ncpu CPUs $((REACHALL >> 20)) MiB" | tee -a "$OUT/machine.txt" >&2

  # STREAM's arrays: each >= 4 x every cache (its own rule), rebuilt here when needed.
  local need=$(( (4 * REACHALL / 8 + 9999999) / 10000000 * 10000000 ))
  [ "$need" -lt 200000000 ] && need=200000000
  local STREAM=$B/stream
  if [ "$need" -gt 200000000 ]; then
    if command -v gcc >/dev/null && [ -f "$bundle_dir/src/stream.c" ]; then
      gcc -O3 -march=native -fopenmp -mcmodel=medium -DSTREAM_ARRAY_SIZE=$need -DNTIMES=10 \
        "$bundle_dir/src/stream.c" -o "$OUT/stream" && STREAM=$OUT/stream
    else
      STREAM=""
      echo "stream: skipped: its 200M-element arrays are below 4 x the caches here and gcc is missing" >> "$OUT/steps.txt"
    fi
  fi

  # 1. Idle latency: cxlchar's DRAM point, then multichase at its defaults.
  step lat "$CX" mem latency --out "$OUT/lat.json"
  step latq "$CX" mem latency --quick --out "$OUT/latq.json"
  local span
  span=$(python3 - "$OUT/lat.json" <<'EOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d.get("dram_check", []) if c["benchmark"] == "mem.latency"][0]
print(f"{c['reported_bytes'] * 4 >> 20}m")
EOF
)
  [ -n "$span" ] || span=4g
  step mc_dram taskset -c 0 "$B/multichase" -m "$span"
  step mc_64m taskset -c 0 "$B/multichase" -m 64m
  step mc_1g taskset -c 0 "$B/multichase" -m 1g
  step mc_4g taskset -c 0 "$B/multichase" -m 4g
  step mc_default taskset -c 0 "$B/multichase"
  step mc_dram2 taskset -c 0 "$B/multichase" -m "$span"

  # 2. Bandwidth: cxlchar's DRAM points (with their check), its own 4 GiB figures, likwid,
  #    STREAM.
  step bw "$CX" mem bandwidth --out "$OUT/bw.json"
  step bwq "$CX" mem bandwidth --quick --out "$OUT/bwq.json"
  step bw4g "$CX" mem bandwidth --sizes 4G --kernel read,copy,nt-copy --out "$OUT/bw4g.json"
  local fp_all
  fp_all=$(python3 - "$OUT/bw.json" "$ncpu" <<'EOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d.get("dram_check", []) if c["benchmark"] == "mem.bandwidth" and c["threads"] == int(sys.argv[2])]
print(c[0]["reported_bytes"] // 10**6 if c else "")
EOF
)
  if command -v likwid-bench >/dev/null && [ -n "$fp_all" ]; then
    step likwid_load likwid-bench -t load_avx512 -w "N:${fp_all}MB:$ncpu"
    step likwid_load4g likwid-bench -t load_avx512 -w "N:4GB:$ncpu"
  else
    echo "likwid-bench: skipped: not installed (or no DRAM footprint from cxlchar)" >> "$OUT/steps.txt"
  fi
  if [ -n "$STREAM" ]; then
    step stream env OMP_NUM_THREADS="$ncpu" "$STREAM"
  fi
  if command -v likwid-bench >/dev/null && [ -n "$fp_all" ]; then
    kernels_vs_likwid "$CX" "$ncpu" "$OUT/bw.json"
  fi

  # 3. `all --quick` and `all`: the same keys from both, and their run times.
  step allq "$CX" all --quick --out "$OUT/allq.json"
  if [ "$full_all" = 1 ]; then
    step all "$CX" all --out "$OUT/all.json"
  fi

  # 4. GPU DMA against nvbandwidth.
  local nvb=${NVBANDWIDTH:-$B/nvbandwidth}
  if command -v nvidia-smi >/dev/null && [ -x "$nvb" ]; then
    step nvb "$nvb" -t host_to_device_memcpy_ce -t device_to_host_memcpy_ce
  else
    echo "nvbandwidth: skipped: $(command -v nvidia-smi >/dev/null && echo "no nvbandwidth binary (set NVBANDWIDTH)" || echo "no GPU driver (nvidia-smi)")" >> "$OUT/steps.txt"
  fi

  table "$ncpu" | tee "$OUT/table.md"
  # One file for machines that hand back few (the lent GPU machine returns a handful).
  tar czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")" 2>/dev/null \
    && echo "archive: $OUT.tgz" >&2
}

# ---- the table -----------------------------------------------------------------------------
table() {
  local ncpu=$1
  mc() { awk 'NF==1 && $1+0>0 {v=$1} END {print v}' "$OUT/$1.log" 2>/dev/null; }
  st() { awk -v k="$1:" '$1==k {print $2/1000}' "$OUT/stream.log" 2>/dev/null; }
  lk() { awk '/^MByte\/s:/ {print $2/1000}' "$OUT/$1.log" 2>/dev/null; }
  python3 - "$OUT" "$ncpu" \
    "$(mc mc_dram)" "$(mc mc_dram2)" "$(mc mc_64m)" "$(mc mc_1g)" "$(mc mc_4g)" "$(mc mc_default)" \
    "$(st Copy)" "$(st Triad)" "$(lk likwid_load)" "$(lk likwid_load4g)" <<'EOF'
import json, os, re, sys, statistics
out, ncpu = sys.argv[1], int(sys.argv[2])
mc_dram, mc_dram2, mc64, mc1g, mc4g, mcdef, st_copy, st_triad, lk_load, lk_load4g = [
    float(x) if x else None for x in sys.argv[3:13]]
def load(n):
    try:
        return json.load(open(os.path.join(out, n)))
    except Exception:
        return None
def key(d, k):
    return None if d is None else d["params"].get(k)
def meas(d, i):
    if d is None:
        return None
    m = [m for m in d["measurements"] if m["id"] == i]
    return m[0]["distribution"]["p50"] if m else None
def secs(n):
    try:
        return float(open(os.path.join(out, n + ".seconds")).read())
    except Exception:
        return None
lat, latq, bw, bwq, bw4g, allq, allf = map(load, ["lat.json", "latq.json", "bw.json", "bwq.json", "bw4g.json", "allq.json", "all.json"])
cpu = "unknown CPU"
try:
    t = open(os.path.join(out, "machine.txt")).read()
    model = re.search(r"Model name:\s*(.*)", t).group(1).strip()
    fam = re.search(r"CPU family:\s*(\d+)", t).group(1)
    mod = re.search(r"Model:\s*(\d+)", t).group(1)
    l3 = re.search(r"L3 cache:\s*(.*)", t)
    cpu = f"{model} (family {fam} model {mod}), {ncpu} CPUs, L3 {l3.group(1).strip() if l3 else '?'}"
except Exception:
    pass
rows = []
def row(fig, cx, ref_name, ref, target=None, note=""):
    ratio = cx / ref if cx is not None and ref else None
    if target and ratio is not None:
        met = "yes" if target[0] <= ratio <= target[1] else "**no**"
        tg = f"{target[0]}..{target[1]}"
    else:
        met, tg = "-", "info"
    f = lambda v: "-" if v is None else f"{v:.4g}"
    rows.append(f"| {fig} | {f(cx)} | {ref_name} | {f(ref)} | {'-' if ratio is None else f'{ratio:.3f}'} | {tg} | {met} | {note} |")
mcd = statistics.median([x for x in [mc_dram, mc_dram2] if x]) if (mc_dram or mc_dram2) else None
chk = lambda d, b, t=None: next((c for c in (d or {}).get("dram_check", []) if c["benchmark"] == b and (t is None or c["threads"] == t)), None)
lc = chk(lat, "mem.latency")
size = lambda c: f"{c['reported_bytes'] >> 20} MiB, check {c['verdict']}" if c else "no check"
row("mem_lat_ns (mem latency)", key(lat, "mem_lat_ns"), "multichase defaults, same span", mcd, (0.95, 1.05), size(lc))
row("mem_lat_ns (mem latency --quick)", key(latq, "mem_lat_ns"), "multichase defaults, same span", mcd, (0.95, 1.05))
row("mem_lat_ns (mem latency)", key(lat, "mem_lat_ns"), "multichase -m 4g", mc4g)
row("mem_lat_ns (mem latency)", key(lat, "mem_lat_ns"), "multichase -m 1g", mc1g)
row("mem_lat_ns (mem latency)", key(lat, "mem_lat_ns"), "multichase -m 64m", mc64)
row("mem_lat_ns (mem latency)", key(lat, "mem_lat_ns"), "multichase default (256 MiB)", mcdef)
bc = chk(bw, "mem.bandwidth", ncpu)
b4 = lambda k: meas(bw4g, f"mem.bandwidth/anon/{k}/{ncpu}t/4G")
row(f"mem_bw_gbs ({ncpu} threads, read)", key(bw, "mem_bw_gbs"), "cxlchar read at 4 GiB", b4("read"), (0.95, 1.05), size(bc))
row(f"mem_bw_gbs (--quick)", key(bwq, "mem_bw_gbs"), "cxlchar read at 4 GiB", b4("read"), (0.95, 1.05))
row(f"mem_bw_gbs", key(bw, "mem_bw_gbs"), "likwid-bench load_avx512, same footprint", lk_load, (0.95, 1.05))
row(f"mem_bw_gbs", key(bw, "mem_bw_gbs"), "likwid-bench load_avx512, 4 GB", lk_load4g)
row(f"copy_bw_gbs ({ncpu} threads)", key(bw, "copy_bw_gbs"), "cxlchar copy at 4 GiB", b4("copy"), (0.95, 1.05))
row(f"nt_copy_bw_gbs ({ncpu} threads)", key(bw, "nt_copy_bw_gbs"), "cxlchar nt-copy at 4 GiB", b4("nt-copy"), (0.95, 1.05))
row("copy_bw_gbs", key(bw, "copy_bw_gbs"), f"STREAM Copy, {ncpu} threads", st_copy, None, "STREAM's copy is memcpy")
row("nt_copy_bw_gbs", key(bw, "nt_copy_bw_gbs"), f"STREAM Copy, {ncpu} threads", st_copy)
row("mem_bw_gbs", key(bw, "mem_bw_gbs"), f"STREAM Triad, {ncpu} threads", st_triad)
# Every all-thread kernel against likwid-bench, alternated rounds, medians.
try:
    rows_k = [l.split("\t") for l in open(os.path.join(out, "kernels.tsv")).read().splitlines() if l.strip()]
except Exception:
    rows_k = []
likwid_name = {"read": "load", "nt-write": "store_mem", "copy": "copy"}
for k in ["read", "nt-write", "copy"]:
    for t in sorted({int(r[1]) for r in rows_k if r[0] == k}):
        rs = [r for r in rows_k if r[0] == k and int(r[1]) == t]
        cx = statistics.median(float(r[3]) for r in rs)
        lk = statistics.median(float(r[4]) for r in rs)
        spread = max(float(r[5]) for r in rs)
        row(f"{k}, {t} thread(s), crew window aggregate", cx, f"likwid-bench {likwid_name[k]}, same threads and footprint", lk, (0.95, 1.05),
            f"medians of {len(rs)} alternated rounds; cxlchar's windows up to {spread * 100:.0f} % apart")
if st_copy:
    row("copy_bw_gbs", key(bw, "copy_bw_gbs"), "STREAM Copy x 1.5 (write-allocate counted)", st_copy * 1.5, None, "the memory traffic of STREAM's temporal stores")
if st_triad:
    row("mem_bw_gbs", key(bw, "mem_bw_gbs"), "STREAM Triad x 4/3 (write-allocate counted)", st_triad * 4 / 3)
for k in ["mem_lat_ns", "mem_bw_gbs", "mem_bw_1t_gbs", "copy_bw_gbs", "loaded_lat_at_max_bw_ns", "atomic_load_lat_ns", "flush_bw_stores_gbs"]:
    row(f"{k}: all --quick vs all", key(allq, k), "cxlchar all", key(allf, k), (0.95, 1.05) if k in ("mem_lat_ns", "mem_bw_gbs") else None)
print(f"### {cpu}\n")
print("| figure | cxlchar | reference | ref | ratio | target | met | note |")
print("|---|---:|---|---:|---:|---|---|---|")
print("\n".join(rows))
print()
steps = open(os.path.join(out, "steps.txt")).read() if os.path.exists(os.path.join(out, "steps.txt")) else ""
for n, what in [("allq", "cxlchar all --quick"), ("all", "cxlchar all")]:
    s = secs(n)
    state = "not finished by the deadline" if f"{n}: not finished" in steps else "not run"
    print(f"- {what}: {state if s is None else f'{s:.1f} s'}")
for d, what in [(allq, "all --quick"), (allf, "all")]:
    for c in (d or {}).get("dram_check", []):
        print(f"- DRAM check ({what}): {c['benchmark']} {c['kernel']} on CPUs {c['cpus']}: {c['verdict']} at {c['reported_bytes'] >> 20} MiB (ratio {c['ratio']:.3f})")
EOF
}

case "${1:-}" in
  bundle) shift; bundle "${1:-}" ;;
  run) shift; run "$@" ;;
  -h|--help|"") usage; [ -n "${1:-}" ] ;;
  *) die2 "unknown command: $1 (bundle or run; see --help)" ;;
esac
