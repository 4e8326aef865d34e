# Shared set-up of the benchmark scripts (sourced): builds sift in release mode and sets
#   $work  scratch directory (SIFT_BENCH_DIR, default /tmp/sift-bench)
#   $sift  the release binary
# and `capture N` prints the path of a generated N-packet capture (sift gen, seed 1), making it
# once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=${SIFT_BENCH_DIR:-/tmp/sift-bench}
mkdir -p "$work"
cargo build --release -q -p sift-cli
sift=${CARGO_TARGET_DIR:-$PWD/target}/release/sift
capture() {
    local path=$work/gen-$1.pcap
    [ -s "$path" ] || "$sift" gen -c "$1" -w "$path"
    echo "$path"
}
need() { command -v "$1" >/dev/null || { echo "needs $1 (apt-get install $1)"; exit 1; }; }
