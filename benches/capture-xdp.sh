#!/usr/bin/env bash
# Benchmark (issue 19): capture over AF_XDP against sift -i over TPACKET_V3 and tcpdump, on one
# veth, in the same run.
#
#   benches/capture-xdp.sh [FRAMES] [ROUNDS] [RATE]     (needs root: a network namespace)
#
# A private namespace holds a veth pair gen0 - cap0 (MTU 1500, GRO on cap0 so frames redirected
# into it are received; IPv6 off). The kernel's live-frames generator (the `livegen` example:
# BPF_PROG_TEST_RUN redirecting one 60-byte UDP frame out of gen0) sends FRAMES frames as fast
# as it can (or paced to RATE Mpps, in chunks: each of its system calls costs ~16 ms, so pacing
# is coarse), while one capturer at a time writes to /dev/null: `sift -i cap0 --xdp`, `sift -i
# cap0 -B 8192` (TPACKET_V3) and `tcpdump -i cap0 -B 8192`. Each gets SIGINT once the sender is
# done and prints tcpdump's counters. Per capturer and round: frames captured, lost (sent -
# captured), the kernel's drops, and the rate captured (captured / the sender's time); then the
# medians.
#
# The generator, the receive path and the capturer share the two CPUs: the figures are the
# whole machine's. With AF_PACKET the receive path runs in the sender's system call, so the
# sender slows down to what the ring takes; with AF_XDP the frames are only queued there.
# Do not run it while building or testing.
source "$(dirname "$0")/common.sh"
frames=${1:-2000000}
rounds=${2:-3}
rate=${3:-}
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
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-10s %6s %10s %10s %10s %9s\n' capturer round captured lost "drop(krn)" "got Mpps"
for cap in sift-xdp sift-ring tcpdump; do
    : >"$work/mpps.$cap"; : >"$work/lost.$cap"
    for round in $(seq "$rounds"); do
        case $cap in
            sift-xdp) cmd=("$sift" -i cap0 --xdp -w /dev/null) ;;
            sift-ring) cmd=("$sift" -i cap0 -B 8192 -w /dev/null) ;;
            tcpdump) cmd=(tcpdump -i cap0 -B 8192 -w /dev/null) ;;
        esac
        ip netns exec "$ns" "${cmd[@]}" 2>"$work/cap.err" &
        c=$!
        for _ in $(seq 100); do grep -q 'listening on' "$work/cap.err" 2>/dev/null && break; sleep 0.05; done
        sleep 0.3
        x "$livegen" -i gen0 --frames "$frames" ${rate:+--rate "$rate"} >"$work/gen.out"
        sleep 1.2  # TPACKET_V3 hands a block over after its timeout
        kill -INT $c
        wait $c || true
        got=$(stat_of "$work/cap.err" captured)
        drop=$(stat_of "$work/cap.err" "dropped by kernel")
        secs=$(awk '{print $5}' "$work/gen.out")
        lost=$((frames - got))
        mpps=$(echo "scale=3; $got / $secs / 1000000" | bc)
        printf '%-10s %6s %10s %10s %10s %9s\n' "$cap" "$round" "$got" "$lost" "$drop" "$mpps"
        echo "$mpps" >>"$work/mpps.$cap"; echo "$lost" >>"$work/lost.$cap"
    done
done
echo
for cap in sift-xdp sift-ring tcpdump; do
    printf '%-10s median %s Mpps captured, median %s of %s frames lost\n' "$cap" \
        "$(median <"$work/mpps.$cap")" "$(median <"$work/lost.$cap")" "$frames"
done
