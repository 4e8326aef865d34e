#!/usr/bin/env bash
# Reads and prints a generated 10,000-rule pf.conf as `sift pfctl -nv` does (lexing, macros,
# list expansion, checks, canonical printing), in release mode; the target is under 100 ms.
#   benches/pf-parse.sh [RULES] [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo run --release -q -p sift-pf --example pf_parse_bench -- "${1:-10000}" "${2:-20}"
