#!/usr/bin/env bash
# Many filters, one pass (issue 20): what a set of N realistic filters costs per packet when
# decided together, against one filter, against every filter run separately (sift's JIT), and
# against one tcpdump (or one `sift -r`) per filter. Everything in one run, on one machine:
#
#   1. `sift bench --filters` for sets of 1, 1,000 and 10,000 filters (`sift gen --filters N`)
#      over a generated capture larger than the caches (BIG packets, about 110 MB): the decision
#      program (every match and first match; JIT and interpreter), the set's first filter alone,
#      every filter separately, medians of rounds, their ratios, and the compile time;
#   2. the 1,000-filter set end to end: `sift -r CAP --split SET -w 'out-%s.pcap'` against 1,000
#      `sift -r CAP -w out-NAME.pcap EXPR` runs and 1,000 `tcpdump -r CAP -w /dev/null EXPR`
#      runs, REPEAT times each, ratios of the medians. Those 2,000 processes run on a smaller
#      capture (SMALL packets, about 11 MB): on the big one 1,000 tcpdumps take several minutes
#      per repetition. The script says which capture each figure is on.
#
# Usage: benches/multi-filters.sh   (SIFT_BENCH_DIR, BIG=200000, SMALL=20000, REPEAT=3)
# Run it on a quiet machine: nothing else building or measuring.
source "$(dirname "$0")/common.sh"
need tcpdump
big_n=${BIG:-200000}
small_n=${SMALL:-20000}
repeat=${REPEAT:-3}
big=$(capture "$big_n")
small=$(capture "$small_n")
size() { du -m "$1" | cut -f1; }
echo "captures: $big ($(size "$big") MB), $small ($(size "$small") MB)"

for n in 1 1000 10000; do
    [ -s "$work/filters-$n.txt" ] || "$sift" gen --filters "$n" -w "$work/filters-$n.txt"
done

echo
echo "== sift bench --filters, over $big_n packets in memory"
for n in 1 1000 10000; do
    echo
    "$sift" bench --filters "$work/filters-$n.txt" -r "$big" --rounds 5
done

# The median of the numbers on standard input.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l; }

set1000=$work/filters-1000.txt
out=$work/split-out
echo
echo "== 1,000 filters end to end, over $small ($small_n packets), $repeat times each"
split_t=(); sift_t=(); tcpdump_t=()
for r in $(seq "$repeat"); do
    rm -rf "$out"; mkdir -p "$out"
    t=$(now)
    "$sift" -r "$small" --split "$set1000" -w "$out/split-%s.pcap" 2>/dev/null
    split_t+=("$(since "$t")")

    t=$(now)
    while read -r name expr; do
        "$sift" -r "$small" -w "$out/alone-$name.pcap" -- "$expr" 2>/dev/null
    done < "$set1000"
    sift_t+=("$(since "$t")")

    t=$(now)
    while read -r name expr; do
        tcpdump -r "$small" -w /dev/null -- "$expr" 2>/dev/null
    done < "$set1000"
    tcpdump_t+=("$(since "$t")")
done
# The same packets either way (a spot check of 20 filters).
for name in $(awk 'NR % 50 == 1 { print $1 }' "$set1000"); do
    cmp -s "$out/split-$name.pcap" "$out/alone-$name.pcap" || { echo "differs: $name"; exit 1; }
done
m_split=$(printf '%s\n' "${split_t[@]}" | median)
m_sift=$(printf '%s\n' "${sift_t[@]}" | median)
m_tcpdump=$(printf '%s\n' "${tcpdump_t[@]}" | median)
printf '%-46s %8.2f s  (runs: %s)\n' "sift --split, 1,000 files written" "$m_split" "${split_t[*]}"
printf '%-46s %8.2f s  (runs: %s)\n' "1,000 sift -r -w runs" "$m_sift" "${sift_t[*]}"
printf '%-46s %8.2f s  (runs: %s)\n' "1,000 tcpdump -r -w /dev/null runs" "$m_tcpdump" "${tcpdump_t[*]}"
printf 'ratio 1,000 sift -r runs / sift --split: %.1fx\n' "$(echo "$m_sift / $m_split" | bc -l)"
printf 'ratio 1,000 tcpdump runs / sift --split: %.1fx\n' "$(echo "$m_tcpdump / $m_split" | bc -l)"
