//! The generated code, disassembled (iced-x86): how many packet-length checks each path runs.
//!
//! A length check is a `cmp` whose first operand is `rsi` (the captured length). The walker
//! follows every path through the code (it is a DAG: all jumps go forward) from the entry to a
//! `ret` and reports the most checks any path performs, and how many there are in all.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register};
use sift_jit::JitFilter;
use sift_verify::{Mode, validate};

fn compile(src: &str) -> JitFilter {
    let prog = sift_insn::asm::assemble(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let v = validate(&prog, Mode::Linux).expect("valid");
    JitFilter::compile(&v).expect("compiles")
}

fn is_length_check(i: &Instruction) -> bool {
    i.mnemonic() == Mnemonic::Cmp
        && i.op0_kind() == OpKind::Register
        && i.op0_register() == Register::RSI
}

/// (most checks on one path, checks in the code, paths).
fn checks_per_path(code: &[u8]) -> (usize, usize, usize) {
    let mut decoder = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
    let insns: Vec<Instruction> = decoder.iter().collect();
    let index_of =
        |ip: u64| insns.iter().position(|i| i.ip() == ip).expect("jump into an instruction");
    // Most checks from instruction i to a ret, and the number of paths, computed backward.
    let n = insns.len();
    let mut most = vec![0usize; n + 1];
    let mut paths = vec![0usize; n + 1];
    for i in (0..n).rev() {
        let ins = &insns[i];
        let own = usize::from(is_length_check(ins));
        let (m, p) = match ins.flow_control() {
            FlowControl::Return => (0, 1),
            FlowControl::UnconditionalBranch => {
                let t = index_of(ins.near_branch_target());
                (most[t], paths[t])
            }
            FlowControl::ConditionalBranch => {
                let t = index_of(ins.near_branch_target());
                assert!(t > i, "backward jump");
                (most[t].max(most[i + 1]), paths[t] + paths[i + 1])
            }
            _ => (most[i + 1], paths[i + 1]),
        };
        most[i] = m + own;
        paths[i] = p;
    }
    let total = insns.iter().filter(|i| is_length_check(i)).count();
    (most[0], total, paths[0])
}

#[test]
fn straight_line_loads_check_once() {
    // Five absolute loads on one path: one check, for the furthest (ld [40] needs 44 bytes);
    // the two paths are "accept" and the check's jump to the reject exit.
    let jit = compile("ldb [0]\nldh [12]\nld [40]\nldb [23]\nldh [20]\nret a\n");
    assert_eq!(checks_per_path(jit.code()), (1, 1, 2));
    let src = "ldb [0]\nldh [12]\nld [40]\nret a\n";
    let prog = sift_insn::asm::assemble(src).unwrap();
    let v = validate(&prog, Mode::Linux).unwrap();
    let interp = sift_vm::Interpreter::new(&v);
    let data = [7u8; 64];
    for len in 0..=64 {
        assert_eq!(jit_run(src, &data[..len]), interp.run(&data[..len], 64));
    }
}

fn jit_run(src: &str, pkt: &[u8]) -> u32 {
    compile(src).run(pkt, 64)
}

#[test]
fn early_rejects_let_the_check_move_up() {
    // "ip and tcp and dst port 80": the non-IPv4 and non-TCP exits return 0, so the checks
    // for ldb [23] and ldh [20] join the first one; only the [x+16] load, whose offset
    // depends on the IPv4 header length, needs its own.
    let src = "\
        ldh [12]\n\
        jne #0x800, drop\n\
        ldb [23]\n\
        jne #6, drop\n\
        ldh [20]\n\
        jset #0x1fff, drop\n\
        ldxb 4*([14]&0xf)\n\
        ldh [x+16]\n\
        jne #80, drop\n\
        ret #262144\n\
        drop: ret #0\n";
    let (most, total, paths) = checks_per_path(compile(src).code());
    assert_eq!(most, 2, "one hoisted check plus the indexed load's");
    assert_eq!(total, 2);
    assert!(paths >= 5);
}

#[test]
fn branches_check_what_they_need_once_each() {
    // "ip or ip6 then a field of each": the IPv4 path needs 30 bytes, the IPv6 path 54; the
    // common ldh [12] check (14) is subsumed on each path by the path's own check.
    let src = "\
        ldh [12]\n\
        jeq #0x800, v4, v6\n\
        v4: ld [26]\n\
        jeq #0x0a000001, yes, no\n\
        v6: jne #0x86dd, no\n\
        ld [50]\n\
        jeq #1, yes, no\n\
        yes: ret #65535\n\
        no: ret #0\n";
    let jit = compile(src);
    let (most, total, _) = checks_per_path(jit.code());
    assert!(most <= 2, "at most the entry check and one per branch, got {most}");
    assert!(total <= 3);
    // And the semantics hold at every length.
    let mut v4 = [0u8; 64];
    v4[12] = 0x08;
    v4[26..30].copy_from_slice(&[10, 0, 0, 1]);
    let mut v6 = [0u8; 64];
    v6[12] = 0x86;
    v6[13] = 0xdd;
    v6[53] = 1;
    let prog = sift_insn::asm::assemble(src).unwrap();
    let interp = sift_vm::Interpreter::new(&validate(&prog, Mode::Linux).unwrap());
    for pkt in [&v4, &v6] {
        for len in 0..=64 {
            assert_eq!(jit.run(&pkt[..len], 64), interp.run(&pkt[..len], 64), "len {len}");
        }
    }
}

#[test]
fn paths_that_can_only_reject_compile_to_a_reject() {
    // Every path returns 0: no load, no check, just "return 0".
    let jit = compile("ldh [12]\njeq #1, a, b\na: ret #0\nb: ret #0\n");
    let (most, total, _) = checks_per_path(jit.code());
    assert_eq!((most, total), (0, 0));
    assert_eq!(jit.run(&[0; 64], 64), 0);
}
