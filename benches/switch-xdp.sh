#!/usr/bin/env bash
# Benchmark (issue 19): the seed's OVS-AFXDP experiments (../shared/seeds/002_…, §4.5) with sift
# switch: rxdrop (one rule, `in_port=cap0,actions=drop`) and l2fwd (one rule sending every frame
# back out of the port it came in on, MAC addresses rewritten: `in_port=cap0,actions=
# mod_dl_src:…,mod_dl_dst:…,in_port`) through the whole flow datapath (flow key, microflow
# cache, actions), against the xdpsock-style baseline of sift-xdp (the rings only, no
# processing: `cargo run -p sift-xdp --example xdpsock -- MODE --baseline`), in the same run.
#
#   benches/switch-xdp.sh [FRAMES] [ROUNDS]     (needs root: network namespaces)
#
# The switch runs in a private namespace on cap0 of a veth pair gen0 - cap0 (GRO on cap0);
# the kernel's live-frames generator (the `livegen` example) sends FRAMES 60-byte UDP frames
# out of gen0 as fast as it can. "Mpps" is frames the switch received (rxdrop) or sent back
# (l2fwd) over the generator's time; xdpsock measures its own the same way in its own
# namespace. The last lines give the medians and the switch's share of the baseline (the seed:
# OVS-AFXDP reached 17 of xdpsock's 19 Mpps in rxdrop). Do not run it while building or testing.
source "$(dirname "$0")/common.sh"
frames=${1:-3000000}
rounds=${2:-3}
need ethtool
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
cargo build --release -q -p sift-kernel --example livegen
cargo build --release -q -p sift-xdp --example xdpsock
examples=${CARGO_TARGET_DIR:-$PWD/target}/release/examples
ns=sift-swbench-$$
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
x() { ip netns exec "$ns" "$@"; }
x sysctl -qw net.ipv6.conf.all.disable_ipv6=1
x ip link add gen0 numtxqueues 1 numrxqueues 1 type veth peer name cap0 numtxqueues 1 numrxqueues 1
x ip link set gen0 up
x ip link set cap0 up
x ethtool -K cap0 gro on >/dev/null
printf 'in_port=cap0,actions=drop\n' >"$work/rxdrop.flows"
printf 'in_port=cap0,actions=mod_dl_src:02:00:5e:51:f7:99,mod_dl_dst:02:00:5e:51:f7:01,in_port\n' \
    >"$work/l2fwd.flows"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-8s %-9s %6s %10s %9s\n' mode engine round frames Mpps
for mode in rxdrop l2fwd; do
    : >"$work/sw.$mode"; : >"$work/base.$mode"
    for round in $(seq "$rounds"); do
        ip netns exec "$ns" "$sift" switch -p cap0 -f "$work/$mode.flows" 2>"$work/sw.err" &
        s=$!
        for _ in $(seq 100); do grep -q 'listening on' "$work/sw.err" 2>/dev/null && break; sleep 0.05; done
        sleep 0.3
        x "$examples/livegen" -i gen0 --frames "$frames" >"$work/gen.out"
        sleep 0.5
        kill -INT $s
        wait $s || true
        secs=$(awk '{print $5}' "$work/gen.out")
        if [ "$mode" = rxdrop ]; then
            n=$(grep -E '^cap0 \(port 1\)' "$work/sw.err" | sed -E 's/.*: ([0-9]+) received.*/\1/')
        else
            n=$(grep -E '^cap0 \(port 1\)' "$work/sw.err" | sed -E 's/.*, ([0-9]+) sent.*/\1/')
        fi
        mpps=$(echo "scale=3; $n / $secs / 1000000" | bc)
        printf '%-8s %-9s %6s %10s %9s\n' "$mode" "switch" "$round" "$n" "$mpps"
        echo "$mpps" >>"$work/sw.$mode"
        "$examples/xdpsock" "$mode" --baseline --frames "$frames" >"$work/base.out" 2>&1 || true
        key=rx_mpps; [ "$mode" = l2fwd ] && key=fwd_mpps
        b=$(grep '^RESULT' "$work/base.out" | tr ' ' '\n' | grep "^$key=" | cut -d= -f2)
        printf '%-8s %-9s %6s %10s %9s\n' "$mode" "baseline" "$round" "$frames" "$b"
        echo "$b" >>"$work/base.$mode"
    done
done
echo
for mode in rxdrop l2fwd; do
    sw=$(median <"$work/sw.$mode"); base=$(median <"$work/base.$mode")
    printf '%-8s switch %s Mpps, baseline %s Mpps: %s%% of the baseline\n' "$mode" "$sw" "$base" \
        "$(echo "scale=1; 100 * $sw / $base" | bc)"
done
