#!/usr/bin/env python3
"""Checks the params file of an aarch64 `cxlchar all --quick` (ci/arm-check): every Arm
path ran and names what it ran. Under emulation the figures are plumbing: only that they
exist and are positive is checked, never a value.

    ci/arm-smoke-check.py target/ci-arm64-params.json
"""
import json
import sys

doc = json.load(open(sys.argv[1]))
params, ms, skipped = doc["params"], doc["measurements"], doc["skipped"]
errors = []


def need(cond, what):
    if not cond:
        errors.append(what)


def skip_reason(prefix):
    return next((s["reason"] for s in skipped if s["benchmark"].startswith(prefix)), None)


env = doc["environment"]
need(env["arch"] == "aarch64", f"arch {env['arch']}")
t = doc["timer"]
need(t["source"] == "cntvct", f"timer {t['source']}")
need(t.get("tick_ns", 0) > 0 and t.get("min_batch_ns", 0) > 0, f"timer limits missing: {t}")
for k in ["mem_lat_ns", "mem_bw_gbs", "mem_write_bw_gbs", "copy_bw_gbs", "atomic_lat_ns",
          "c2c_cas_lat_ns"]:
    need(params.get(k, 0) > 0, f"{k} missing")

# Bandwidth: an Arm ISA, the vector length, and the store each kernel issued.
bw = [m for m in ms if m["benchmark"] == "mem.bandwidth"]
need(bw, "no mem.bandwidth measurement")
for m in bw:
    p = m["parameters"]
    need(p["isa"] in ("sve", "neon"), f"{m['id']}: isa {p['isa']}")
    need(p["vector_bytes"] >= 16, f"{m['id']}: vector_bytes {p['vector_bytes']}")
    if p["kernel"] in ("nt-write", "nt-copy"):
        need("stnp" in p["store"] or "stnt1b" in p["store"], f"{m['id']}: NT store {p['store']}")
    if p["kernel"] == "zva-write":
        need(p["store"].startswith("dc zva"), f"{m['id']}: store {p['store']}")
nt = params.get("nt_write_bw_gbs", 0) > 0 or skip_reason("mem.bandwidth/nt-write")
need(nt, "nt_write_bw_gbs neither measured nor skipped with a reason")
zva = params.get("zva_write_bw_gbs", 0) > 0 or skip_reason("mem.bandwidth/zva-write")
need(zva, "zva_write_bw_gbs neither measured nor skipped with a reason")

# Atomics and core-to-core: the instruction named (LSE or LL/SC).
for bench in ("pool.atomics", "pool.c2c"):
    ins = {m["parameters"].get("instruction") for m in ms if m["benchmark"] == bench}
    need(ins, f"no {bench} measurement")
    for i in ins - {None}:
        ok = any(x in i for x in ("casal", "ldaddal", "swpal", "ldaxr", "plain"))
        need(ok, f"{bench}: instruction {i}")
    need(None not in ins, f"{bench}: a measurement without its instruction")

# Cache maintenance: dc civac / dc cvac measured, or skipped with the probe's reason.
for m in ("civac", "cvac"):
    got = params.get(f"flush_{m}_64b_ns", 0) > 0
    why = skip_reason(f"pool.flush/{m}")
    need(got or (why and "EL0" in why), f"flush_{m}_64b_ns: neither measured nor skipped ({why})")
need(params.get("flush_cost_ns", 0) > 0 or skip_reason("pool.flush/civac"), "flush_cost_ns")
need(not any(k.startswith(("flush_clflush", "flush_clwb")) for k in params),
     "x86 flush keys in an aarch64 run")

if errors:
    print("aarch64 smoke check failed:\n  " + "\n  ".join(errors), file=sys.stderr)
    sys.exit(1)
isa = sorted({m["parameters"]["isa"] for m in bw})
ins = sorted({m["parameters"]["instruction"] for m in ms if m["benchmark"] == "pool.atomics"})
print(f"ok: {sys.argv[1]}: {len(params)} keys, {len(ms)} measurements, {len(skipped)} skipped; "
      f"isa {isa} ({bw[0]['parameters']['vector_bytes']} B vectors), atomics {ins}, "
      f"timer tick {t['tick_ns']:.1f} ns, batches >= {t['min_batch_ns'] / 1e3:.1f} us")
