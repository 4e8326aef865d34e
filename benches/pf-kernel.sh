#!/usr/bin/env bash
# Benchmark (issue 26): pf rule sets in the kernel, timed by the kernel itself
# (BPF_PROG_TEST_RUN, XDP, 10^6 runs of one packet per figure) at 64, 512 and 2,048 realistic
# rules (per host, per subnet, per port, per table): a first packet that keeps no state, a
# first packet that creates a state, and a packet of an established TCP connection. Targets:
# first packets <= 2 us at 2,048 rules (bpfilter: 13.7 us), established flows <= 200 ns.
# Needs root (bpf(2)).
#
#   benches/pf-kernel.sh [REPEAT [RULES...]]     # e.g. benches/pf-kernel.sh 1000000 64 2048
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p sift-firewall-ebpf --example kernel_bench
exec "${CARGO_TARGET_DIR:-$PWD/target}"/release/examples/kernel_bench "$@"
