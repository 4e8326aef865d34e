//! The `sift` binary end to end: one test binary for everything that needs no set-up beyond
//! temporary files (live capture, which needs network namespaces, is `tests/live.rs`;
//! `sift compile` is `tests/compile_cli.rs`). Oracle tests compare with tcpdump, editcap,
//! mergecap, capinfos, tshark and libpcap where they are installed.

/// The sequential path's batches: `-c N` and damage as one packet at a time.
mod batches;
/// `sift bpf …` (check, run, asm, disasm) and `sift bench` on files.
mod bpf;
/// An input truncated while it is read, or named as the output too.
mod changed_input;
/// `sift -r IN -w OUT` against tcpdump, editcap, capinfos and tshark; damaged inputs.
mod copy;
/// `sift diff` over the libpcap corpus's expressions.
mod diff;
/// `sift ebpf` (exec as the conformance plugin, asm, disasm, run).
mod ebpf;
/// `sift ebpf run PROG.o`: ELF objects of the C corpus (compiled by clang at test time).
mod ebpf_elf;
/// Filter mistakes: sift's located messages (golden).
mod errors;
/// `sift -r X -w A EXPR` against tcpdump, on samples and generated captures.
mod filter;
/// tcpdump's command-line habits, flags, local time, exit statuses; output errors, bounded
/// text reads, filter files with any byte in comments.
mod habits;
/// `sift inject` argument checks that need no privileges.
mod inject;
/// Several inputs merged by time against mergecap; `--count` against tcpdump.
mod merge_count;
/// Packets for the pf tests, shared with the namespace tests.
#[path = "../pf_support/packets.rs"]
mod packets;
/// The parallel path gives the sequential path's output, byte for byte.
mod parallel;
/// `sift pfctl` and `sift pf check` against pfctl's regression data.
mod pf;
/// `sift pf`: directions from pcapng `epb_flags`, `--in`/`--out`, inference.
mod pf_direction;
/// `sift pf -w`: translated packets, their checksums checked by tshark.
mod pf_nat;
/// Printed lines against `tcpdump -n`; `--json`.
mod print;
/// `--split`: each filter's file as written alone, `--first`, counts, located errors.
mod split;
/// tcpdump's 830 test captures copied and filtered as tcpdump does (issue 15's acceptance).
mod tcpdump_corpus;
