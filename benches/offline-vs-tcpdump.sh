#!/usr/bin/env bash
# Benchmark (issue 7): the offline pipeline against tcpdump, same file, same run.
#
#   benches/offline-vs-tcpdump.sh [PACKETS] [RUNS]
#
# On a ~2-million-packet generated capture (sift gen, seed 1): the filtered copy
# `-r X -w A tcp`, printing `-n -r X tcp > /dev/null`, and `--count tcp`, each timed with
# hyperfine for tcpdump, sift on one thread (SIFT_THREADS=1) and sift on every core. Prints
# medians, MB/s, packets/s, CPU times and the ratios, and the floor of the copy (writing the
# same output bytes with dd). Outputs are checked to be identical first.
source "$(dirname "$0")/common.sh"
packets=${1:-2000000}
runs=${2:-7}
input=$(capture "$packets")
need hyperfine
need tcpdump
bytes=$(stat -c %s "$input")
cores=$(nproc)

tcpdump -r "$input" -w "$work/t.pcap" tcp 2>/dev/null
"$sift" -r "$input" -w "$work/s.pcap" tcp 2>/dev/null
cmp "$work/t.pcap" "$work/s.pcap" && echo "filtered copy: byte-identical to tcpdump"
echo "tcpdump --count: $(tcpdump --count -r "$input" tcp 2>/dev/null); sift --count: $("$sift" --count -r "$input" tcp 2>/dev/null)"

# Each run starts by removing the previous outputs, which drops their dirty pages: no writeback
# of an earlier run overlaps a timed one. (A `sync` there instead made every writer slower and
# noisier on the development machine: dd of the same bytes took 0.7 s instead of 0.27 s.)
bench() { # name, then the three commands (tcpdump, sift 1 thread, sift all cores)
    local name=$1; shift
    hyperfine -N --warmup 1 --runs "$runs" --export-json "$work/$name.json" \
        --prepare "rm -f $work/out-t.pcap $work/out-s.pcap" \
        --command-name tcpdump "$1" --command-name "sift-1" "$2" --command-name "sift-$cores" "$3" \
        >/dev/null
    python3 - "$work/$name.json" "$bytes" "$packets" "$name" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["results"]
size, packets, name = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
med = {r["command"]: statistics.median(r["times"]) for r in runs}
cpu = {r["command"]: (r["user"], r["system"]) for r in runs}
t = med["tcpdump"]
for cmd, m in med.items():
    u, s = cpu[cmd]
    print(f"{name:14} {cmd:8} median {m:6.3f} s (min {min(next(r['times'] for r in runs if r['command'] == cmd)):6.3f})  "
          f"{size / m / 1e6:7.0f} MB/s  {packets / m / 1e6:6.2f} Mpkt/s  {t / m:5.2f}x tcpdump  "
          f"cpu: user {u:5.2f} s, system {s:5.2f} s (means)")
PY
}
# hyperfine -N runs without a shell: the printing runs go through sh -c for the redirection.
bench copy-tcp \
    "tcpdump -r $input -w $work/out-t.pcap tcp" \
    "env SIFT_THREADS=1 $sift -r $input -w $work/out-s.pcap tcp" \
    "$sift -r $input -w $work/out-s.pcap tcp"
# The floor of any filtered copy on this machine: writing the same output bytes (read from the
# page cache with 128 KiB reads and written to the same file system) and nothing else.
hyperfine -N --warmup 1 --runs "$runs" --export-json "$work/floor.json" \
    --prepare "rm -f $work/out-d.pcap" \
    "dd if=$work/t.pcap of=$work/out-d.pcap bs=128k status=none" >/dev/null
python3 - "$work/floor.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"copy-floor     dd       median {statistics.median(r['times']):6.3f} s "
      f"(writing the same output bytes, nothing else)")
PY
bench print-tcp \
    "sh -c 'tcpdump -n -r $input tcp > /dev/null 2>&1'" \
    "sh -c 'SIFT_THREADS=1 $sift -n -r $input tcp > /dev/null 2>&1'" \
    "sh -c '$sift -n -r $input tcp > /dev/null 2>&1'"
bench count-tcp \
    "tcpdump --count -r $input tcp" \
    "env SIFT_THREADS=1 $sift --count -r $input tcp" \
    "$sift --count -r $input tcp"
