#!/usr/bin/env bash
# Benchmark (issue 19): capture over AF_XDP against sift -i over TPACKET_V3 and tcpdump, on one
# veth, in the same run.
#
#   benches/capture-xdp.sh [FRAMES] [RATES...]     (needs root: a network namespace)
#
# A private namespace holds a veth pair gen0 - cap0 (MTU 1500, GRO on cap0 so frames redirected
# into it are received; IPv6 off). The kernel's live-frames generator (the `livegen` example:
# BPF_PROG_TEST_RUN redirecting one 60-byte UDP frame out of gen0) sends FRAMES frames at each
# rate in Mpps (paced in chunks of 4,096; `max` = unpaced), while one capturer at a time writes
# to /dev/null: `sift -i cap0 --xdp`, `sift -i cap0` (TPACKET_V3 ring, 8 MiB) and `tcpdump -i
# cap0 -B 8192`. Each capturer gets SIGINT once the sender is done and prints tcpdump's
# counters. The table gives, per capturer and rate, frames captured, lost (sent - captured:
# the kernel's drops and what never reached the socket) and the rate the capturer kept up with;
# the last lines give each capturer's highest rate without a loss.
#
# The generator and the receive path share the two CPUs with the capturer: the figures are
# the whole machine's, as on any one box. Do not run it while building or testing.
source "$(dirname "$0")/common.sh"
frames=${1:-2000000}
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(0.25 0.5 1 1.5 2 max)
need tcpdump
need ethtool
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
cargo build --release -q -p sift-kernel --example livegen
livegen=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/livegen
ns=sift-xdpbench-$$
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
x() { ip netns exec "$ns" "$@"; }
x sysctl -qw net.ipv6.conf.all.disable_ipv6=1
x sysctl -qw net.ipv6.conf.default.disable_ipv6=1
x ip link add gen0 numtxqueues 1 numrxqueues 1 type veth peer name cap0 numtxqueues 1 numrxqueues 1
x ip link set gen0 up
x ip link set cap0 up
x ip link set lo up
x ethtool -K cap0 gro on >/dev/null

stat_of() { # file, what ("captured" | "dropped by kernel")
    grep -E "packets? $2" "$1" | head -1 | awk '{print $1}'
}
declare -A best
printf '%-10s %6s %10s %10s %10s %9s\n' capturer rate captured lost "drop(krn)" "got Mpps"
for cap in sift-xdp sift-ring tcpdump; do
    best[$cap]=0
    for rate in "${rates[@]}"; do
        case $cap in
            sift-xdp) cmd=("$sift" -i cap0 --xdp -w /dev/null) ;;
            sift-ring) cmd=("$sift" -i cap0 -B 8192 -w /dev/null) ;;
            tcpdump) cmd=(tcpdump -i cap0 -B 8192 -w /dev/null) ;;
        esac
        ip netns exec "$ns" "${cmd[@]}" 2>"$work/cap.err" &
        c=$!
        for _ in $(seq 100); do grep -q 'listening on' "$work/cap.err" 2>/dev/null && break; sleep 0.05; done
        sleep 0.3
        if [ "$rate" = max ]; then
            x "$livegen" -i gen0 --frames "$frames" >"$work/gen.out"
        else
            x "$livegen" -i gen0 --frames "$frames" --rate "$rate" >"$work/gen.out"
        fi
        sleep 1.2  # TPACKET_V3 hands a block over after its timeout
        kill -INT $c
        wait $c || true
        got=$(stat_of "$work/cap.err" captured)
        drop=$(stat_of "$work/cap.err" "dropped by kernel")
        secs=$(awk '{print $5}' "$work/gen.out")
        lost=$((frames - got))
        mpps=$(echo "scale=3; $got / $secs / 1000000" | bc)
        printf '%-10s %6s %10s %10s %10s %9s\n' "$cap" "$rate" "$got" "$lost" "$drop" "$mpps"
        if [ "$lost" = 0 ] && [ "$rate" != max ]; then best[$cap]=$rate; fi
    done
done
echo
for cap in sift-xdp sift-ring tcpdump; do
    echo "$cap: highest rate without a loss ${best[$cap]} Mpps"
done
