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
# Mpps is frames received (rxdrop) or sent back (l2fwd) per second, with "% base" the share of
# the baseline; the generator is the kernel's live-frames test run on the same two CPUs, so
# every figure is also bounded by it (its rate is the last column). Needs root; runs in a
# private network namespace. Do not run it while building or testing.
#
#   benches/afxdp-steps.sh [FRAMES]      # frames per run, default 3000000
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
frames=${1:-3000000}
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

# One run: prints "MPPS GEN_MFPS LOST PMD_NS" for the mode.
measure() {
    local mode=$1 flags=$2 line field
    line=$("$xdpsock" "$mode" --frames "$frames" $flags | grep '^RESULT') || {
        echo "- - - -"
        return
    }
    field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
    if [ "$mode" = rxdrop ]; then
        echo "$(field rx_mpps) $(field gen_mfps) $(field lost) $(field pmd_ns)"
    else
        echo "$(field fwd_mpps) $(field gen_mfps) $(field lost) $(field pmd_ns)"
    fi
}

declare -A result
for step in "${steps[@]}"; do
    name=${step%%|*}
    flags=${step#*|}
    for mode in rxdrop l2fwd; do
        result[$name/$mode]=$(measure "$mode" "$flags")
    done
done

python3 - "$frames" <<PY
import sys
frames = int(sys.argv[1])
rows = """$(for step in "${steps[@]}"; do name=${step%%|*}; echo "$name|${result[$name/rxdrop]}|${result[$name/l2fwd]}"; done)""".strip().split("\n")
table = []
for row in rows:
    name, rx, fwd = row.split("|")
    table.append((name, rx.split(), fwd.split()))
base = {m: float(v[0]) if v[0] != "-" else None for m, v in zip(("rx", "fwd"), table[-1][1:])}
def pct(v, b):
    try:
        return f"{100 * float(v) / b:5.0f}%"
    except (TypeError, ValueError, ZeroDivisionError):
        return "     -"
print(f"AF_XDP optimisation steps, veth copy mode, {frames} frames of 60 bytes per run")
print(f"{'step':<24} {'rxdrop Mpps':>11} {'% base':>6} {'ns/pkt':>7} {'l2fwd Mpps':>10} {'% base':>6} {'ns/pkt':>7} {'gen Mfps':>8}")
for name, rx, fwd in table:
    print(f"{name:<24} {rx[0]:>11} {pct(rx[0], base['rx'])} {rx[3]:>7} {fwd[0]:>10} {pct(fwd[0], base['fwd'])} {fwd[3]:>7} {rx[1]:>8}")
PY
