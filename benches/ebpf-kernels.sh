#!/usr/bin/env bash
# Benchmark (issue 18): the eBPF engines on the C kernels of crates/ebpf-jit/benches/kernels/
# (log2, prime, memcpy, switch, strcmp, parse; eunomia-bpf/bpf-benchmark's style), the per-call
# cost and JIT compile times, in one criterion run (`cargo bench -p sift-ebpf-jit --bench
# kernels`), then per group the medians of every engine present and the issue's ratios:
#
#   jit/rbpf     sift-jit ÷ rbpf-jit      (target ≤ 0.5: sift's JIT ≥ 2x faster)
#   jit/native   sift-jit ÷ native -O2 C  (target ≤ 1 where the JIT's code can match it)
#   int/rbpf     sift-interp ÷ rbpf-interp (target ≤ 1)
#
# and the absolute targets: per-call ≤ 10 ns, compile ≤ 50 µs (100 instructions) and ≤ 20 ms
# (65,536). A ratio whose engine is not measured (sift-jit before the JIT lands) prints "-".
#
#   benches/ebpf-kernels.sh [CRITERION ARGS]   # e.g. --quick, or a filter: kernel-prime
#
# With SIFT_REPORT_ONLY=1 the bench is not run; the table is printed from the last results in
# target/criterion. Otherwise the previous results of these groups are removed first, so an
# engine missing from this run cannot show an old figure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
results=${CARGO_TARGET_DIR:-$PWD/target}/criterion
if [ "${SIFT_REPORT_ONLY:-0}" != 1 ]; then
    rm -rf "$results"/kernel-* "$results"/per-call "$results"/compile-*
    cargo bench -p sift-ebpf-jit --bench kernels -- "$@"
fi
python3 - "$results" <<'PY'
import json, os, sys

root = sys.argv[1]
engines = ["native", "sift-jit", "sift-interp", "sift-load", "rbpf-jit", "rbpf-interp"]
kernels = ["log2", "prime", "memcpy", "switch", "strcmp", "parse"]
groups = [f"kernel-{k}" for k in kernels] + ["per-call", "compile-100", "compile-65536"]
limits = {"per-call": 10, "compile-100": 50_000, "compile-65536": 20_000_000}


def median(group, engine):
    path = os.path.join(root, group, engine, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"]
    except (OSError, KeyError, ValueError):
        return None


def time(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}"


table = {g: {e: median(g, e) for e in engines} for g in groups}
present = [e for e in engines if any(table[g][e] is not None for g in groups)]
if not present:
    sys.exit(f"no results under {root}/<group>/<engine>/new/estimates.json")
header = ["group"] + present + ["jit/rbpf", "jit/native", "int/rbpf", "target"]
rows = []
for g in groups:
    m = table[g]
    if all(v is None for v in m.values()):
        continue
    target = ""
    if g in limits:
        jit = m["sift-jit"]
        verdict = "" if jit is None else (" ok" if jit <= limits[g] else " MISSED")
        target = f"sift-jit ≤ {time(limits[g])}{verdict}"
    rows.append([g] + [time(m[e]) for e in present] + [
        ratio(m["sift-jit"], m["rbpf-jit"]),
        ratio(m["sift-jit"], m["native"]),
        ratio(m["sift-interp"], m["rbpf-interp"]),
        target,
    ])
widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
for r in [header] + rows:
    print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
print("\nmedians of one criterion run; ratios < 1: sift faster (targets: jit/rbpf ≤ 0.5, "
      "jit/native ≤ 1, int/rbpf ≤ 1)")
PY
