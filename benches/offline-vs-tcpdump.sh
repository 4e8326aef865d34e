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
#
# With SIFT_BEFORE=/path/to/an/older/sift the older binary runs in the same hyperfine runs
# (columns `before-1` and `before-N`), so a change is compared with what it replaces on the same
# machine state: `after/before` is printed per task.
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
bench() { # name, a command with {tool} for the program; sift runs as -1 (SIFT_THREADS=1) and -N
    local name=$1 cmd=$2
    local args=(--command-name tcpdump "${cmd//\{tool\}/tcpdump}")
    local bins=("sift:$sift")
    [ -n "${SIFT_BEFORE:-}" ] && bins+=("before:$SIFT_BEFORE")
    for b in "${bins[@]}"; do
        local label=${b%%:*} bin=${b#*:}
        local c=${cmd//\{tool\}/$bin}
        args+=(--command-name "$label-1" "env SIFT_THREADS=1 $c" --command-name "$label-$cores" "$c")
    done
    hyperfine -N --warmup 1 --runs "$runs" --export-json "$work/$name.json" \
        --prepare "rm -f $work/out-t.pcap $work/out-s.pcap" "${args[@]}" >/dev/null
    python3 - "$work/$name.json" "$bytes" "$packets" "$name" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["results"]
size, packets, name = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
med = {r["command"]: statistics.median(r["times"]) for r in runs}
cpu = {r["command"]: (r["user"], r["system"]) for r in runs}
t = med["tcpdump"]
for cmd, m in med.items():
    u, s = cpu[cmd]
    print(f"{name:14} {cmd:9} median {m:6.3f} s (min {min(next(r['times'] for r in runs if r['command'] == cmd)):6.3f})  "
          f"{size / m / 1e6:7.0f} MB/s  {packets / m / 1e6:6.2f} Mpkt/s  {t / m:5.2f}x tcpdump  "
          f"cpu: user {u:5.2f} s, system {s:5.2f} s (means)")
for cmd, m in med.items():
    if cmd.startswith("before-"):
        after = med["sift-" + cmd[len("before-"):]]
        print(f"{name:14} sift-{cmd[7:]} / before-{cmd[7:]}: {after / m:5.3f} (time ratio; < 1 is faster)")
PY
}
# hyperfine -N runs without a shell: the printing runs go through sh -c for the redirection.
# {tool} is tcpdump or a sift binary; the output file is out-t for tcpdump and out-s for sift.
bench copy "{tool} -r $input -w $work/out-s.pcap"
bench copy-tcp "{tool} -r $input -w $work/out-s.pcap tcp"
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
bench print-tcp "sh -c '{tool} -n -r $input tcp > /dev/null 2>&1'"
bench count-tcp "{tool} --count -r $input tcp"
