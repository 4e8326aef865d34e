#!/usr/bin/env bash
# Benchmark (issues 3 and 6): sift's interpreter and JIT against libpcap's bpf_filter, in one
# `sift bench` run per filter over a generated mixed IPv4/IPv6/TCP/UDP capture.
#
#   benches/engines.sh [PACKETS] [SECONDS]
#
# Two tables: (1) "same program": every engine runs libpcap's own optimized program (from
# `tcpdump -d`), which isolates the engines; (2) "as users get it": sift's engines run sift's
# compilation of the expression, libpcap runs pcap_compile's optimized program. Each engine is
# timed twice, alternating; the better of the two is kept. Ratios are libpcap / engine.
#
# With SIFT_BEFORE=/path/to/an/older/sift, that binary's interpreter and JIT are timed in the
# same loop (its `sift bench` runs right after the current one, on the same capture), and the
# table gains its figures and the ratios before / now (> 1: now faster).
source "$(dirname "$0")/common.sh"
packets=${1:-2000}
seconds=${2:-1}
cap=$(capture "$packets")
filters=(
    '(tcp and portrange 0-1024) or (udp and portrange 1025-2048)'
    'src net 10.0.0.0/8 or (dst net 128.3.0.0/16 and port 22) or src net 2001:470::/28'
    'tcp port 80 and (tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420)'
    'tcp port 443 or udp port 53'
    'icmp6 or (ip6 and udp port 53)'
    'vlan and ip and host 10.1.2.3'
)
table() { # mode: program | expression
    if [ -n "${SIFT_BEFORE:-}" ]; then
        printf '%-80s %9s %9s %9s %7s %7s %9s %9s %7s %7s\n' "filter ($1)" interp jit libpcap \
            "i-x" "j-x" "i-before" "j-before" "i-b/n" "j-b/n"
    else
        printf '%-80s %9s %9s %9s %7s %7s\n' "filter ($1)" interp jit libpcap "i-x" "j-x"
    fi
    for f in "${filters[@]}"; do
        if [ "$1" = program ]; then
            tcpdump -d -r "$cap" "$f" 2>/dev/null > "$work/prog.txt"
            src=(--program "$work/prog.txt")
        else
            src=(-- "$f")
        fi
        if ! out=$("$sift" bench -r "$cap" --seconds "$seconds" \
            --engine interp --engine jit --engine libpcap \
            --engine interp --engine jit --engine libpcap "${src[@]}" 2>&1); then
            printf '%-80s %s\n' "$f" "skipped: ${out##*sift: }"
            continue
        fi
        before=""
        if [ -n "${SIFT_BEFORE:-}" ]; then
            before=$("$SIFT_BEFORE" bench -r "$cap" --seconds "$seconds" \
                --engine interp --engine jit --engine interp --engine jit "${src[@]}" 2>&1) || before=""
        fi
        python3 - "$f" <<PY
import sys
def best(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "ns/packet":
            out[parts[0]] = min(out.get(parts[0], 1e9), float(parts[1]))
    return out
now, old = best("""$out"""), best("""$before""")
i, j, l = now["interp"], now["jit"], now["libpcap"]
line = f"{sys.argv[1]:80} {i:9.2f} {j:9.2f} {l:9.2f} {l / i:6.2f}x {l / j:6.2f}x"
if old:
    bi, bj = old["interp"], old["jit"]
    line += f" {bi:9.2f} {bj:9.2f} {bi / i:6.2f}x {bj / j:6.2f}x"
print(line)
PY
    done
}
table program
echo
table expression
