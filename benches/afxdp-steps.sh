#!/usr/bin/env bash
# Benchmark (issue 19): the seed's AF_XDP optimisation steps (../shared/seeds/002_…, §4.5) as a
# figure: sift's datapath (crates/xdp) measured by its xdpsock example in rxdrop and l2fwd mode
# after each design change, each row keeping the changes above it, then the xdpsock-style
# baseline (the rings only: no pool, no metadata, no pipeline):
#
#   1 non-PMD poll()          poll() before each batch, batch 32, list_head pool, metadata
#                             allocated per packet, TX kicked every batch
#   2 PMD, batch 32           a thread spinning on its rings
#   3 shared mutex pool       one pool per port behind a mutex (OVS's first UMEM pool)
#   4 per-queue ptr_stack     a lock-free stack per queue
#   5 metadata array          packet metadata in an array reused across batches
#   6 TX kick at 512          sendto only once 512 frames wait (l2fwd; rxdrop sends nothing)
#   7 batch 64                sift's default
#   baseline                  xdpsock's loop on the same rings
#
# The generator hands the kernel 256 frames per test-run batch (they reach the socket's RX
# ring together, so the datapath's batches are full more often). Each figure is the best of
# REPEAT runs (5 by default; the runs go round the steps, so that a burst of other work on the
# machine hits every step alike): interference only slows a run down.
#
# "Mpps" is frames received (rxdrop) or sent back (l2fwd) per second, "% base" its share of the
# baseline's. The generator is the kernel's live-frames test run on the same two CPUs, and in
# copy mode on veth it does the expensive part of receiving (XDP and the copy into the UMEM,
# some 300 ns a frame), so rxdrop's Mpps is the generator's rate (last column), whatever the
# datapath does. What each design costs by itself is "ns/pkt": the datapath thread's own time
# per frame (in PMD mode, the time of its rounds that received frames; with poll(), its CPU
# time, as it sleeps between batches). l2fwd's rate is bounded by the datapath thread, which
# also runs the kernel's copy-mode transmission (a socket buffer per frame) in its sendto calls.
# Needs root; runs in a private network namespace. Do not run it while building or testing.
#
#   benches/afxdp-steps.sh [FRAMES [REPEAT]]    # frames per run, default 2000000; runs, 5
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
frames=${1:-2000000}
repeat=${2:-5}
cargo build --release -q -p sift-xdp --example xdpsock
xdpsock=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/xdpsock

steps=(
    "1 non-PMD poll()|--poll --batch 32 --pool list --meta alloc --kick every"
    "2 PMD, batch 32|--batch 32 --pool list --meta alloc --kick every"
    "3 shared mutex pool|--batch 32 --pool mutex --meta alloc --kick every"
    "4 per-queue ptr_stack|--batch 32 --pool stack --meta alloc --kick every"
    "5 metadata array|--batch 32 --pool stack --meta array --kick every"
    "6 TX kick at 512|--batch 32 --pool stack --meta array --kick 512"
    "7 batch 64|--batch 64 --pool stack --meta array --kick 512"
    "baseline|--baseline --batch 64 --kick 512"
)

# One run of a mode: its RESULT line's fields.
run_once() {
    "$xdpsock" "$1" --frames "$frames" --gen-batch 256 $2 | grep '^RESULT' || echo "RESULT failed=1"
}

declare -A result
for _ in $(seq "$repeat"); do
    for step in "${steps[@]}"; do
        name=${step%%|*}
        flags=${step#*|}
        for mode in rxdrop l2fwd; do
            result[$name/$mode]+="$(run_once "$mode" "$flags");"
        done
    done
done

python3 - "$frames" "$repeat" <<PY
import sys
frames, repeat = int(sys.argv[1]), int(sys.argv[2])
rows = """$(for step in "${steps[@]}"; do name=${step%%|*}; echo "$name|${result[$name/rxdrop]}|${result[$name/l2fwd]}"; done)""".strip().split("\n")

def parse(runs, rate):
    """The best rate, work ns/pkt and generator rate of a mode's runs (None when none ran)."""
    vals = {"rate": [], "work": [], "gen": []}
    for line in filter(None, runs.split(";")):
        f = dict(kv.split("=") for kv in line.split()[1:])
        if "failed" in f:
            continue
        vals["rate"].append(float(f[rate]))
        vals["work"].append(float(f["work_ns"]))
        vals["gen"].append(float(f["gen_mfps"]))
    best = {"rate": max, "work": min, "gen": max}
    return {k: best[k](v) if v else None for k, v in vals.items()}

table = []
for row in rows:
    name, rx, fwd = row.split("|")
    table.append((name, parse(rx, "rx_mpps"), parse(fwd, "fwd_mpps")))
base_rx, base_fwd = table[-1][1]["rate"], table[-1][2]["rate"]

def num(v, fmt):
    return "-" if v is None else format(v, fmt)

def pct(v, b):
    return "-" if v is None or not b else f"{100 * v / b:.0f}%"

print(f"AF_XDP optimisation steps: veth, copy mode, {frames} frames of 60 bytes per run, best of {repeat}")
print(f"{'step':<24} {'rxdrop Mpps':>11} {'% base':>6} {'ns/pkt':>7} {'l2fwd Mpps':>10} {'% base':>6} {'ns/pkt':>7} {'gen Mfps':>8}")
for name, rx, fwd in table:
    print(
        f"{name:<24} {num(rx['rate'], '.2f'):>11} {pct(rx['rate'], base_rx):>6} {num(rx['work'], '.1f'):>7}"
        f" {num(fwd['rate'], '.2f'):>10} {pct(fwd['rate'], base_fwd):>6} {num(fwd['work'], '.1f'):>7}"
        f" {num(rx['gen'], '.2f'):>8}"
    )
PY
