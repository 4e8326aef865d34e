#!/usr/bin/env bash
# Benchmark (issue 9): live capture against tcpdump on the same traffic, in the same run.
#
#   benches/live-vs-tcpdump.sh [PACKETS] [ROUNDS]     (needs root: a network namespace)
#
# A private namespace holds a veth pair inj0 - cap0 (IPv6 off, so the kernel adds no traffic
# of its own). sift -i cap0 and tcpdump -i cap0 capture at the same time, each writing to
# /dev/null, while `sift inject --topspeed` sends a generated capture into inj0. Both get
# SIGINT when the sender is done and print their statistics; the table compares captured and
# dropped packets and packets/s, for a filter that matches everything and one that matches
# nothing.
source "$(dirname "$0")/common.sh"
packets=${1:-500000}
rounds=${2:-3}
input=$(capture "$packets")
need tcpdump
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
ns=sift-bench-$$
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
x() { ip netns exec "$ns" "$@"; }
x sysctl -qw net.ipv6.conf.all.disable_ipv6=1
x sysctl -qw net.ipv6.conf.default.disable_ipv6=1
x ip link add inj0 mtu 9000 type veth peer name cap0 mtu 9000
x ip link set inj0 up
x ip link set cap0 up
x ip link set lo up

stat_of() { # file, what ("captured" | "dropped by kernel")
    grep -E "packets? $2" "$1" | head -1 | awk '{print $1}'
}
printf '%-8s %-6s %10s %10s %10s %10s\n' filter round "sift cap" "sift drop" "td cap" "td drop"
for filter in "" "ether proto 0x1234"; do
    name=${filter:-all}; [ -n "$filter" ] && name=none
    for round in $(seq "$rounds"); do
        # `ip netns exec` execs the command, so $! is the capturing process itself.
        ip netns exec "$ns" "$sift" -i cap0 -B 8192 -w /dev/null $filter 2>"$work/sift.err" &
        s=$!
        ip netns exec "$ns" tcpdump -i cap0 -B 8192 -w /dev/null $filter 2>"$work/td.err" &
        t=$!
        sleep 1
        start=$(date +%s.%N)
        x "$sift" inject -i inj0 -r "$input" --topspeed >"$work/inject.out" 2>&1
        end=$(date +%s.%N)
        sleep 0.5
        kill -INT $s $t
        wait $s $t || true
        sc=$(stat_of "$work/sift.err" captured); sd=$(stat_of "$work/sift.err" "dropped by kernel")
        tc=$(stat_of "$work/td.err" captured); td=$(stat_of "$work/td.err" "dropped by kernel")
        printf '%-8s %-6s %10s %10s %10s %10s   (sent %s packets in %.2f s)\n' \
            "$name" "$round" "$sc" "$sd" "$tc" "$td" "$packets" "$(echo "$end - $start" | bc)"
    done
done
