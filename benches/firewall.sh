#!/usr/bin/env bash
# Benchmark (issue 24): pf's decision engine, each figure beside the naive way in the same run.
#
#   first packet      a flow's first packet through a 1,000-rule set: rules only (skip steps;
#                     naive: every rule tried) and with its state created (target ≤ 1.5 µs)
#   table lookup      longest-prefix match among 1,000,000 prefixes, addresses out of cache
#                     (target ≤ 250 ns; naive: a scan of 1,024 prefixes, scaled to a million)
#   state inserts     1,000,000 states created (target ≥ 1 M/s)
#   established       packets of established flows among 1,000,000 states (target ≥ 3 Mpps;
#                     naive: the same packets through the rules alone, `no state`)
#   expiry            the longest a packet waits while a million states expire (≤ 10 ms)
#   nat established   packets of established NATed flows among 1,000,000 translated states,
#                     each rewritten in place (issue 17: target ≥ 2 Mpps)
#
#   benches/firewall.sh            # both benches (criterion `eval`, plain `state`), then the table
#
# With SIFT_REPORT_ONLY=1 the eval bench is not run (its table is printed from target/criterion);
# the state bench always runs (it is one pass of a few seconds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
results=${CARGO_TARGET_DIR:-$PWD/target}/criterion
if [ "${SIFT_REPORT_ONLY:-0}" != 1 ]; then
    rm -rf "$results"/first_packet_1000_rules "$results"/table_1000000_prefixes
    cargo bench -p sift-firewall --bench eval
fi
state=$(cargo bench -p sift-firewall --bench state 2>/dev/null | grep -E '^(insert|established|same|expiry|nat)')
echo "$state"
python3 - "$results" "$state" <<'PY'
import json, os, re, sys

root, state = sys.argv[1], sys.argv[2]
BATCH = 1024


def per_item(group, name):
    path = os.path.join(root, group, name, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / BATCH
    except (OSError, KeyError, ValueError):
        return None


def ns(v):
    return "-" if v is None else (f"{v / 1000:.2f} µs" if v >= 1000 else f"{v:.0f} ns")


def verdict(ok):
    return "met" if ok else "MISSED"


rows = []
skip = per_item("first_packet_1000_rules", "skip_steps")
naive = per_item("first_packet_1000_rules", "naive")
keep = per_item("first_packet_1000_rules", "skip_steps_keeping_state")
if skip is not None:
    rows.append(("first packet, rules", ns(skip), ns(naive), f"{naive / skip:.1f}x" if naive else "-",
                 "≤ 1.5 µs", verdict(skip <= 1500)))
if keep is not None:
    rows.append(("first packet, state kept", ns(keep), "", "", "≤ 1.5 µs", verdict(keep <= 1500)))
trie = per_item("table_1000000_prefixes", "trie")
scan = per_item("table_1000000_prefixes", "scan_1024_prefixes")
if trie is not None:
    scaled = None if scan is None else scan * 1_000_000 / 1024
    rows.append(("table lookup, 10^6 prefixes", ns(trie), ns(scaled) + " (scan, scaled)",
                 f"{scaled / trie:.0f}x" if scaled else "-", "≤ 250 ns", verdict(trie <= 250)))
m = re.search(r"= ([\d.]+) M states/s", state)
if m:
    rate = float(m.group(1))
    rows.append(("state inserts", f"{rate:.2f} M/s", "", "", "≥ 1 M/s", verdict(rate >= 1)))
est = re.search(r"established: ([\d.]+) ns/packet = ([\d.]+) Mpps", state)
rules = re.search(r"rules only .*: ([\d.]+) ns/packet", state)
if est:
    e = float(est.group(1))
    r = float(rules.group(1)) if rules else None
    rows.append(("established, 10^6 states", f"{float(est.group(2)):.2f} Mpps", ns(r) + " (rules alone)",
                 f"{e / r:.1f}x rules" if r else "-", "≥ 3 Mpps", verdict(float(est.group(2)) >= 3)))
nat = re.search(r"nat established: ([\d.]+) ns/packet = ([\d.]+) Mpps", state)
if nat:
    rows.append(("NAT established, 10^6 states", f"{float(nat.group(2)):.2f} Mpps", "", "", "≥ 2 Mpps",
                 verdict(float(nat.group(2)) >= 2)))
exp = re.search(r"longest packet ([\d.]+) µs", state)
if exp:
    us = float(exp.group(1))
    rows.append(("expiry stall", f"{us / 1000:.2f} ms", "", "", "≤ 10 ms", verdict(us <= 10_000)))

print(f"\n{'figure':28} {'sift':>12} {'naive':>28} {'ratio':>10}  {'target':>9}")
for r in rows:
    print(f"{r[0]:28} {r[1]:>12} {r[2]:>28} {r[3]:>10}  {r[4]:>9} {r[5]}")
PY
