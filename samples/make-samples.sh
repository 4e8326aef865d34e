#!/usr/bin/env bash
# Regenerates the real captures in this directory (see README.md).
#
# Builds three network namespaces joined by two veth pairs, runs ping (IPv4 and IPv6), an HTTP
# GET, DNS queries and a TCP echo exchange between them, and captures with tcpdump (pcap) and
# dumpcap (pcapng, two interfaces). Only addresses inside these namespaces are ever used
# (documentation ranges 192.0.2.0/24, 198.51.100.0/24, 2001:db8::/32). Everything it creates
# (namespaces, veths, processes, temp files) is removed on exit, also on failure or Ctrl-C.
#
#   sift-s-cli  sift-s-c0 ---- sift-s-s0  sift-s-srv   192.0.2.1/24      192.0.2.2/24
#                                                      2001:db8:1::1/64  2001:db8:1::2/64
#               sift-s-c1 ---- sift-s-d0  sift-s-dns   198.51.100.1/24   198.51.100.53/24
#                                                      2001:db8:2::1/64  2001:db8:2::53/64
#
# Needs root, iproute2, tcpdump, python3; dumpcap for mixed.pcapng; curl optional.
# Usage: samples/make-samples.sh [output-dir]   (default: the directory of this script)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "${1:-$HERE}"
OUT="$(cd "${1:-$HERE}" && pwd)"
PY="${PYTHON:-python3}"
TOOLS="$HERE/sample_tools.py"
NS_CLI=sift-s-cli
NS_SRV=sift-s-srv
NS_DNS=sift-s-dns
NAMESPACES=("$NS_CLI" "$NS_SRV" "$NS_DNS")

die() { echo "make-samples: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces, raw sockets, capture)"
for tool in ip tcpdump "$PY"; do command -v "$tool" >/dev/null || die "$tool not found"; done

WORK="$(mktemp -d /tmp/sift-samples.XXXXXX)"
PIDS=()

cleanup() {
    local rc=$?
    set +e
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    for ns in "${NAMESPACES[@]}"; do
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# Starts a background process, remembering its pid in $LAST_PID (and PIDS for cleanup). Pass
# an external command (ip netns exec …), not a shell function: `ip netns exec` execs its
# command, so $LAST_PID is then the capture or server process itself.
LAST_PID=
spawn() {
    local log=$1; shift
    "$@" >"$log" 2>&1 &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
}

# Waits until file $1 contains text $2 (a capture that is listening, a server that is ready).
wait_for() {
    local i
    for i in $(seq 100); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$1" >&2
    die "timed out waiting for '$2' in $1"
}

# Stops a background process started by spawn (SIGTERM: tcpdump and dumpcap flush and close;
# a SIGINT would also trip this shell's own INT trap).
stop() {
    local pid=$1
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    local kept=()
    for p in "${PIDS[@]}"; do [[ $p == "$pid" ]] || kept+=("$p"); done
    PIDS=("${kept[@]}")
}

# tcpdump in the client namespace on one interface, into $WORK/$2. Immediate mode: with
# libpcap's default TPACKET_V3 ring, packets in a block that has not timed out yet (1 s) are
# lost when tcpdump is stopped, which would empty these sub-second captures.
start_tcpdump() {
    spawn "$WORK/$2.log" ip netns exec "$NS_CLI" tcpdump -i "$1" -s 262144 --immediate-mode -U -Z root -w "$WORK/$2"
    wait_for "$WORK/$2.log" "listening on"
}

# ---- Network ---------------------------------------------------------------------------------

for ns in "${NAMESPACES[@]}"; do
    ip netns del "$ns" 2>/dev/null || true # leftovers of an interrupted run
    ip netns add "$ns"
    # No duplicate address detection or router solicitations: keeps the captures to our traffic.
    in_ns "$ns" sysctl -qw net.ipv6.conf.default.dad_transmits=0 net.ipv6.conf.all.dad_transmits=0 \
        net.ipv6.conf.default.router_solicitations=0 net.ipv6.conf.default.accept_ra=0
    in_ns "$ns" ip link set lo up
done

ip -n "$NS_CLI" link add sift-s-c0 type veth peer name sift-s-s0 netns "$NS_SRV"
ip -n "$NS_CLI" link add sift-s-c1 type veth peer name sift-s-d0 netns "$NS_DNS"
ip -n "$NS_CLI" addr add 192.0.2.1/24 dev sift-s-c0
ip -n "$NS_CLI" addr add 2001:db8:1::1/64 dev sift-s-c0 nodad
ip -n "$NS_SRV" addr add 192.0.2.2/24 dev sift-s-s0
ip -n "$NS_SRV" addr add 2001:db8:1::2/64 dev sift-s-s0 nodad
ip -n "$NS_CLI" addr add 198.51.100.1/24 dev sift-s-c1
ip -n "$NS_CLI" addr add 2001:db8:2::1/64 dev sift-s-c1 nodad
ip -n "$NS_DNS" addr add 198.51.100.53/24 dev sift-s-d0
ip -n "$NS_DNS" addr add 2001:db8:2::53/64 dev sift-s-d0 nodad
for dev in "$NS_CLI sift-s-c0" "$NS_CLI sift-s-c1" "$NS_SRV sift-s-s0" "$NS_DNS sift-s-d0"; do
    set -- $dev
    ip -n "$1" link set "$2" up
done
sleep 2 # let link-up chatter (MLD reports) pass before any capture starts

# ---- Servers ---------------------------------------------------------------------------------

mkdir -p "$WORK/www"
cat >"$WORK/www/index.html" <<'HTML'
<!doctype html>
<html><head><title>sift sample</title></head>
<body><h1>sift</h1><p>A page served inside a network namespace, captured for sift's samples.</p></body>
</html>
HTML

http_get() {
    if command -v curl >/dev/null; then
        in_ns "$NS_CLI" curl -sS -o /dev/null -w "GET $1: %{http_code}\n" "$1"
    else
        in_ns "$NS_CLI" "$PY" -c 'import sys, urllib.request, urllib.error
try: print("GET", sys.argv[1] + ":", urllib.request.urlopen(sys.argv[1]).status)
except urllib.error.HTTPError as e: print("GET", sys.argv[1] + ":", e.code)' "$1"
    fi
}

# ---- ping.pcap: ICMP and ICMPv6 echo, with the ARP / neighbour discovery they trigger --------

start_tcpdump sift-s-c0 ping.pcap
CAP=$LAST_PID
in_ns "$NS_CLI" "$PY" "$TOOLS" ping 192.0.2.2 3
in_ns "$NS_CLI" "$PY" "$TOOLS" ping 2001:db8:1::2 3
sleep 0.3
stop "$CAP"

spawn "$WORK/http.log" ip netns exec "$NS_SRV" "$PY" -u -m http.server 80 --bind 192.0.2.2 --directory "$WORK/www"
in_ns "$NS_CLI" "$PY" "$TOOLS" wait-tcp 192.0.2.2 80

# ---- http.pcap: two GETs (200, 404) on TCP port 80; http.server answers HTTP/1.0 and closes

start_tcpdump sift-s-c0 http.pcap
CAP=$LAST_PID
http_get http://192.0.2.2/index.html
http_get http://192.0.2.2/missing.html
sleep 0.3
stop "$CAP"

# ---- dns.pcap: A, AAAA and NXDOMAIN over IPv4, A over IPv6 -----------------------------------

spawn "$WORK/dns4.log" ip netns exec "$NS_DNS" "$PY" -u "$TOOLS" dns-server 198.51.100.53 192.0.2.2 2001:db8:1::2 3
wait_for "$WORK/dns4.log" "ready"
DNS4=$LAST_PID
spawn "$WORK/dns6.log" ip netns exec "$NS_DNS" "$PY" -u "$TOOLS" dns-server 2001:db8:2::53 192.0.2.2 2001:db8:1::2 1
wait_for "$WORK/dns6.log" "ready"
DNS6=$LAST_PID
start_tcpdump sift-s-c1 dns.pcap
CAP=$LAST_PID
in_ns "$NS_CLI" "$PY" "$TOOLS" dns-query 198.51.100.53 www.example.com A
in_ns "$NS_CLI" "$PY" "$TOOLS" dns-query 198.51.100.53 www.example.com AAAA
in_ns "$NS_CLI" "$PY" "$TOOLS" dns-query 198.51.100.53 missing.example.invalid A
in_ns "$NS_CLI" "$PY" "$TOOLS" dns-query 2001:db8:2::53 api.example.net A
sleep 0.3
stop "$CAP"
wait "$DNS4" "$DNS6" 2>/dev/null || true

# ---- tcp.pcap: handshake, data both ways (one segment larger than the MSS), orderly close ----

spawn "$WORK/echo.log" ip netns exec "$NS_SRV" "$PY" -u "$TOOLS" echo-server 192.0.2.2 7 1
wait_for "$WORK/echo.log" "ready"
ECHO=$LAST_PID
start_tcpdump sift-s-c0 tcp.pcap
CAP=$LAST_PID
in_ns "$NS_CLI" "$PY" "$TOOLS" echo-client 192.0.2.2 7
sleep 0.3
stop "$CAP"
wait "$ECHO" 2>/dev/null || true

# ---- mixed.pcapng: everything once, both client interfaces, dumpcap ---------------------------

if command -v dumpcap >/dev/null; then
    spawn "$WORK/dns-mixed.log" ip netns exec "$NS_DNS" "$PY" -u "$TOOLS" dns-server 2001:db8:2::53 192.0.2.2 2001:db8:1::2 1
    wait_for "$WORK/dns-mixed.log" "ready"
    DNS6=$LAST_PID
    spawn "$WORK/echo-mixed.log" ip netns exec "$NS_SRV" "$PY" -u "$TOOLS" echo-server 2001:db8:1::2 7 1
    wait_for "$WORK/echo-mixed.log" "ready"
    ECHO=$LAST_PID
    spawn "$WORK/mixed.log" ip netns exec "$NS_CLI" dumpcap -q -i sift-s-c0 -i sift-s-c1 -s 262144 -w "$WORK/mixed.pcapng"
    CAP=$LAST_PID
    # dumpcap announces nothing with -q; wait until it has written the section header.
    for _ in $(seq 100); do [[ -s $WORK/mixed.pcapng ]] && break; sleep 0.1; done
    sleep 0.5
    in_ns "$NS_CLI" "$PY" "$TOOLS" ping 192.0.2.2 1
    in_ns "$NS_CLI" "$PY" "$TOOLS" ping 2001:db8:2::53 1
    in_ns "$NS_CLI" "$PY" "$TOOLS" dns-query 2001:db8:2::53 www.example.com AAAA
    http_get http://192.0.2.2/index.html
    in_ns "$NS_CLI" "$PY" "$TOOLS" echo-client 2001:db8:1::2 7
    sleep 1.5 # dumpcap's ring blocks time out after 1 s; let the last one be delivered
    stop "$CAP"
    wait "$DNS6" "$ECHO" 2>/dev/null || true
else
    echo "make-samples: dumpcap not found, mixed.pcapng not regenerated" >&2
fi

# ---- Install ---------------------------------------------------------------------------------

for f in ping.pcap http.pcap dns.pcap tcp.pcap mixed.pcapng; do
    [[ -s $WORK/$f ]] || continue
    cp "$WORK/$f" "$OUT/$f"
    chmod 644 "$OUT/$f" # dumpcap creates its files 0600
    if command -v capinfos >/dev/null; then
        printf '%-14s %4s packets, %6s bytes\n' "$f" "$(capinfos -c -M -T -r "$OUT/$f" | cut -f2)" "$(stat -c %s "$OUT/$f")"
    fi
done
