#!/usr/bin/env bash
# Benchmark (issues 3, 6 and 15): sift's interpreter and JIT against libpcap's bpf_filter, in one
# `sift bench` run per filter over a generated mixed IPv4/IPv6/TCP/UDP capture.
#
#   benches/engines.sh [PACKETS] [SECONDS] [RUNS]
#
# Two tables: (1) "same program": every engine runs libpcap's own optimized program (from
# `tcpdump -d`), which isolates the engines; (2) "as users get it": sift's engines run sift's
# compilation of the expression, libpcap runs pcap_compile's optimized program. sift's engines
# run as `sift -r` runs them, on batches of packets (`interp`, `jit`); libpcap's bpf_filter has
# no batch form and runs one call per packet. Each engine is timed RUNS times (default 3),
# alternating with the others in the same `sift bench` run; the median is kept. Ratios are
# libpcap / engine. The floors are timed in the same turns: `floor`, a pass that loads each
# packet's first byte and filters nothing, and `floor-pf`, the same load through the JIT's batch
# loop with its prefetch, the bound of `jit` (`l/fpf`: the largest ratio the JIT could reach).
#
# With SIFT_SINGLE=1 the engines' one-call-per-packet forms (`interp-single`, `jit-single`) are
# timed too (columns is, js and their ratios).
#
# With SIFT_BEFORE=/path/to/an/older/sift, that binary's interpreter and JIT are timed in the
# same loop (its `sift bench` runs right after the current one, on the same capture), and the
# table gains its figures and the ratios before / now (> 1: now faster).
source "$(dirname "$0")/common.sh"
packets=${1:-2000}
seconds=${2:-1}
runs=${3:-3}
cap=$(capture "$packets")
filters=(
    '(tcp and portrange 0-1024) or (udp and portrange 1025-2048)'
    'src net 10.0.0.0/8 or (dst net 128.3.0.0/16 and port 22) or src net 2001:470::/28'
    'tcp port 80 and (tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420)'
    'tcp port 443 or udp port 53'
    'icmp6 or (ip6 and udp port 53)'
    'vlan and ip and host 10.1.2.3'
)
engines=(interp jit libpcap floor floor-pf)
[ -n "${SIFT_SINGLE:-}" ] && engines+=(interp-single jit-single)
rounds=()
for _ in $(seq "$runs"); do
    for e in "${engines[@]}"; do rounds+=(--engine "$e"); done
done
echo "$("$sift" bench -r "$cap" --seconds 0.01 --engine jit -- ip | head -1 | cut -d, -f1);" \
    "$runs runs of ${seconds}s per engine, medians"
table() { # mode: program | expression
    local head=("filter ($1)" interp jit libpcap floor floor-pf "l/i" "l/j" "l/fpf")
    local fmt='%-80s %8s %8s %8s %6s %8s %7s %7s %7s'
    if [ -n "${SIFT_SINGLE:-}" ]; then
        head+=(is js "l/is" "l/js")
        fmt+=' %8s %8s %7s %7s'
    fi
    if [ -n "${SIFT_BEFORE:-}" ]; then
        head+=(i-before j-before "i-b/n" "j-b/n")
        fmt+=' %9s %9s %7s %7s'
    fi
    # shellcheck disable=SC2059
    printf "$fmt\n" "${head[@]}"
    for f in "${filters[@]}"; do
        if [ "$1" = program ]; then
            tcpdump -d -r "$cap" "$f" 2>/dev/null > "$work/prog.txt"
            src=(--program "$work/prog.txt")
        else
            src=(-- "$f")
        fi
        if ! out=$("$sift" bench -r "$cap" --seconds "$seconds" "${rounds[@]}" "${src[@]}" 2>&1); then
            printf '%-80s %s\n' "$f" "skipped: ${out##*sift: }"
            continue
        fi
        before=""
        if [ -n "${SIFT_BEFORE:-}" ]; then
            before=$("$SIFT_BEFORE" bench -r "$cap" --seconds "$seconds" \
                $(for _ in $(seq "$runs"); do echo --engine interp --engine jit; done) \
                "${src[@]}" 2>&1) || before=""
        fi
        python3 - "$f" <<PY
import statistics, sys
def medians(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "ns/packet":
            out.setdefault(parts[0], []).append(float(parts[1]))
    return {k: statistics.median(v) for k, v in out.items()}
now, old = medians("""$out"""), medians("""$before""")
i, j, l = now["interp"], now["jit"], now["libpcap"]
fl, fp = now["floor"], now["floor-pf"]
line = f"{sys.argv[1]:80} {i:8.2f} {j:8.2f} {l:8.2f} {fl:6.2f} {fp:8.2f} {l / i:6.2f}x {l / j:6.2f}x {l / fp:6.2f}x"
if "interp-single" in now:
    si, sj = now["interp-single"], now["jit-single"]
    line += f" {si:8.2f} {sj:8.2f} {l / si:6.2f}x {l / sj:6.2f}x"
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
