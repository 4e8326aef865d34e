//! Properties of the emitted code, decoded with iced-x86: eBPF registers live in the kernel
//! JIT's machine registers; accesses inside the current frame are one unchecked instruction
//! at `[rbp + off]`; 32-bit ALU operations use 32-bit operands; no `idiv` runs without the
//! guard against `-1`; every other memory operand is the run context (`r12`) or an address
//! in `r11` that a bounds check or the Rust lookup produced; the code is never writable and
//! executable at once; blinded code holds none of the program's immediates.

#[path = "support/random_programs.rs"]
mod random_programs;

use iced_x86::{
    Decoder, DecoderOptions, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind,
    Register,
};
use sift_ebpf::EbpfInsn;
use sift_ebpf_jit::{JitCode, JitOptions, REGS, compile};
use sift_ebpf_vm::{Vm, test_helpers};
use sift_testkit::Rng;

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> EbpfInsn {
    EbpfInsn { code, dst, src, off, imm }
}

const EXIT: EbpfInsn = EbpfInsn { code: 0x95, dst: 0, src: 0, off: 0, imm: 0 };

fn code(slots: &[EbpfInsn], opts: &JitOptions) -> JitCode {
    let vm = Vm::load(slots, test_helpers()).unwrap();
    compile(&vm, opts).unwrap()
}

fn decode(bytes: &[u8]) -> Vec<Instruction> {
    Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE).into_iter().collect()
}

/// The instructions of program 0's body up to its first `exit` (the epilogue: the frame's
/// pad dropped, or the first pop of a register a frame saves).
fn body(slots: &[EbpfInsn]) -> Vec<Instruction> {
    let c = code(slots, &JitOptions::default());
    let start = c.body_offsets()[0];
    let all = decode(&c.bytes()[start..]);
    all[..epilogue(&all)].to_vec()
}

/// Where the first epilogue of `code` starts.
fn epilogue(code: &[Instruction]) -> usize {
    code.iter()
        .position(|i| {
            let frame = [Register::RBP, Register::RBX, Register::R13, Register::R14, Register::R15];
            (i.mnemonic() == Mnemonic::Pop && frame.contains(&i.op0_register()))
                || (i.mnemonic() == Mnemonic::Lea && i.op0_register() == Register::RSP)
        })
        .unwrap()
}

/// iced's name of a machine register of `sift_x86`.
fn iced(r: sift_x86::Reg, bits: u32) -> Register {
    let q = [
        Register::RAX,
        Register::RCX,
        Register::RDX,
        Register::RBX,
        Register::RSP,
        Register::RBP,
        Register::RSI,
        Register::RDI,
        Register::R8,
        Register::R9,
        Register::R10,
        Register::R11,
        Register::R12,
        Register::R13,
        Register::R14,
        Register::R15,
    ][r as usize];
    if bits == 64 {
        q
    } else {
        let d = [
            Register::EAX,
            Register::ECX,
            Register::EDX,
            Register::EBX,
            Register::ESP,
            Register::EBP,
            Register::ESI,
            Register::EDI,
            Register::R8D,
            Register::R9D,
            Register::R10D,
            Register::R11D,
            Register::R12D,
            Register::R13D,
            Register::R14D,
            Register::R15D,
        ];
        d[r as usize]
    }
}

#[test]
fn ebpf_registers_are_the_kernel_jits_machine_registers() {
    let kernel = ["rax", "rdi", "rsi", "rdx", "rcx", "r8", "rbx", "r13", "r14", "r15"];
    for (k, name) in kernel.iter().enumerate() {
        assert_eq!(format!("{:?}", iced(REGS[k], 64)).to_lowercase(), *name);
    }
    for d in 0..10u8 {
        for s in 0..10u8 {
            let b = body(&[insn(0x0f, d, s, 0, 0), EXIT]);
            assert_eq!(b.len(), 1, "add r{d}, r{s}");
            assert_eq!(b[0].mnemonic(), Mnemonic::Add);
            assert_eq!(b[0].op0_register(), iced(REGS[usize::from(d)], 64));
            assert_eq!(b[0].op1_register(), iced(REGS[usize::from(s)], 64));
        }
        let b = body(&[insn(0xb7, d, 0, 0, 0x1234), EXIT]);
        assert_eq!((b.len(), b[0].op0_register()), (1, iced(REGS[usize::from(d)], 64)));
    }
}

#[test]
fn frame_accesses_are_single_unchecked_instructions() {
    for (k, size) in [(0x10u8, 1i16), (0x08, 2), (0x00, 4), (0x18, 8)] {
        for off in [-512, -256, -17, -size] {
            for slot in [
                insn(0x61 | k, 3, 10, off, 0),
                insn(0x63 | k, 10, 6, off, 0),
                insn(0x62 | k, 10, 0, off, 77),
            ] {
                let b = body(&[slot, EXIT]);
                assert_eq!(b.len(), 1, "{slot:?}: {b:?}");
                assert_eq!(b[0].memory_base(), Register::RBP);
                assert_eq!(b[0].memory_displacement64() as i64, i64::from(off));
            }
        }
        // Outside the frame: checked.
        let b = body(&[insn(0x61 | k, 3, 10, 8, 0), EXIT]);
        assert!(b.iter().any(|i| i.mnemonic() == Mnemonic::Jae), "{b:?}");
    }
}

#[test]
fn alu32_operations_use_32_bit_operands() {
    let ops = [
        (0x00, Mnemonic::Add),
        (0x10, Mnemonic::Sub),
        (0x20, Mnemonic::Imul),
        (0x40, Mnemonic::Or),
        (0x50, Mnemonic::And),
        (0x60, Mnemonic::Shl),
        (0x70, Mnemonic::Shr),
        (0xa0, Mnemonic::Xor),
        (0xb0, Mnemonic::Mov),
        (0xc0, Mnemonic::Sar),
    ];
    for d in 0..10u8 {
        for (op, m) in ops {
            for x in [0u8, 0x08] {
                let s = if x == 0 { 0 } else { (d + 3) % 10 };
                let imm = if x == 0 { 5 } else { 0 };
                let b = body(&[insn(0x04 | op | x, d, s, 0, imm), EXIT]);
                let main: Vec<_> = b.iter().filter(|i| i.mnemonic() == m).collect();
                assert!(!main.is_empty(), "{op:#x}{x:#x} r{d}: {b:?}");
                for i in main {
                    // The operation is on the register (or, for a shift of r4 by
                    // another register, on its copy in r11), 32 bits wide.
                    let r = i.op0_register();
                    let dst = iced(REGS[usize::from(d)], 32);
                    assert!(r == dst || r == Register::R11D, "{op:#x}{x:#x} r{d}: {b:?}");
                }
            }
        }
        let b = body(&[insn(0x84, d, 0, 0, 0), EXIT]);
        assert_eq!(b[0].op0_register(), iced(REGS[usize::from(d)], 32));
    }
}

fn is_imm(i: &Instruction) -> bool {
    !matches!(i.op1_kind(), OpKind::Register | OpKind::Memory)
}

/// Checks every instruction of `code`: `idiv` only after `cmp _, -1; je`, and memory
/// operands only at `[r12 + …]`, `[rbp + off]` inside the frame, `[r11]` after a check
/// or a call into Rust produced `r11` (and no write to `r11` since), or — a counted loop's
/// unchecked copy, whose entry checked the ranges — `[base + r10 + off]` or
/// `[base + r11 + off]` with the index a delta loaded from the run context (and not
/// written since).
fn check_code(c: &JitCode) {
    let insns = decode(c.bytes());
    let mut info = InstructionInfoFactory::new();
    let mut r11_checked = false;
    let mut delta_in = [false; 2]; // r10, r11
    for (k, i) in insns.iter().enumerate() {
        if i.mnemonic() == Mnemonic::Idiv {
            let guard = insns[k.saturating_sub(12)..k].windows(2).any(|w| {
                w[0].mnemonic() == Mnemonic::Cmp
                    && is_imm(&w[0])
                    && w[0].immediate(1) as i64 == -1
                    && w[1].mnemonic() == Mnemonic::Je
            });
            // Or the divisor is a constant other than 0 and -1: `mov r11, c` (blinded: then
            // `xor r11, key`) before it.
            let window = &insns[k.saturating_sub(12)..k];
            let constant = window
                .iter()
                .rposition(|w| {
                    w.mnemonic() == Mnemonic::Mov && w.op0_register() == Register::R11 && is_imm(w)
                })
                .map(|at| {
                    let mut v = window[at].immediate(1);
                    if let Some(x) =
                        window.get(at + 1).filter(|x| x.mnemonic() == Mnemonic::Xor && is_imm(x))
                    {
                        v ^= x.immediate(1);
                    }
                    v
                });
            let wide = i.op0_register() == Register::R11;
            let safe_constant = constant.is_some_and(|v| {
                let v = if wide { v } else { v & 0xffff_ffff };
                v != 0 && v != if wide { u64::MAX } else { 0xffff_ffff }
            });
            assert!(guard || safe_constant, "idiv without a -1 guard at {k}: {window:?}");
        }
        let reads_memory = (0..i.op_count()).any(|o| i.op_kind(o) == OpKind::Memory);
        let index = i.memory_index();
        let delta_index =
            (index == Register::R10 && delta_in[0]) || (index == Register::R11 && delta_in[1]);
        // `lea` and the multi-byte `nop` (loop alignment) name memory without accessing it.
        let touches = !matches!(i.mnemonic(), Mnemonic::Lea | Mnemonic::Nop);
        if reads_memory && touches && !delta_index {
            match i.memory_base() {
                Register::R12 | Register::RIP => {}
                Register::RBP => {
                    let d = i.memory_displacement64() as i64;
                    let size = i.memory_size().size() as i64;
                    assert!(d >= -512 && d + size <= 0, "frame access {:?} at {k}", i.mnemonic());
                }
                Register::R11 => assert!(r11_checked, "unchecked [r11] at {k}: {:?}", i.mnemonic()),
                _ => panic!("memory operand {:?} base {:?} at {k}", i.mnemonic(), i.memory_base()),
            }
        }
        // r11 becomes a checked address after `jae slow; add r11, [r12 + host]` and after a
        // call (the Rust lookup returns it); any other write makes it unchecked.
        let prev = k.checked_sub(1).map(|p| insns[p].mnemonic());
        let checked = i.mnemonic() == Mnemonic::Add
            && i.op0_register() == Register::R11
            && i.memory_base() == Register::R12
            && prev == Some(Mnemonic::Jae);
        let writes = |r: Register, info: &mut InstructionInfoFactory| {
            info.info(i).used_registers().iter().any(|u| {
                u.register().full_register() == r
                    && matches!(
                        u.access(),
                        OpAccess::Write | OpAccess::ReadWrite | OpAccess::CondWrite
                    )
            })
        };
        if checked || i.mnemonic() == Mnemonic::Call {
            r11_checked = true;
        } else if writes(Register::R11, &mut info) {
            r11_checked = false;
        }
        for (k, r) in [Register::R10, Register::R11].into_iter().enumerate() {
            let loaded = i.mnemonic() == Mnemonic::Mov
                && i.op0_register() == r
                && i.op1_kind() == OpKind::Memory
                && i.memory_base() == Register::R12;
            if loaded {
                delta_in[k] = true;
            } else if writes(r, &mut info) || i.mnemonic() == Mnemonic::Call {
                delta_in[k] = false;
            }
        }
    }
}

#[test]
fn memory_is_reached_only_through_checks_and_idiv_is_guarded() {
    let mut rng = Rng(0x5a4e_5e5e);
    let mut checked = 0;
    while checked < 300 {
        let p = random_programs::program(&mut rng);
        let Ok(vm) = Vm::load(&p, test_helpers()) else { continue };
        for opts in [JitOptions::default(), JitOptions { blinding: true, ..JitOptions::default() }]
        {
            check_code(&compile(&vm, &opts).unwrap());
        }
        checked += 1;
    }
    // Signed division by a register on every pair, both sizes.
    for class in [0x04u8, 0x07] {
        for op in [0x30u8, 0x90] {
            for d in 0..10 {
                check_code(&code(
                    &[insn(class | op | 8, d, (d + 1) % 10, 1, 0), EXIT],
                    &JitOptions::default(),
                ));
            }
        }
    }
}

#[test]
fn code_is_never_writable_and_executable() {
    let c = code(&[insn(0xb7, 0, 0, 0, 1), EXIT], &JitOptions::default());
    let at = c.bytes().as_ptr() as u64;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let line = maps
        .lines()
        .find(|l| {
            let (range, _) = l.split_once(' ').unwrap();
            let (lo, hi) = range.split_once('-').unwrap();
            let (lo, hi) =
                (u64::from_str_radix(lo, 16).unwrap(), u64::from_str_radix(hi, 16).unwrap());
            (lo..hi).contains(&at)
        })
        .unwrap();
    let perms = line.split_whitespace().nth(1).unwrap();
    assert_eq!(&perms[..3], "r-x", "{line}");
}

#[test]
fn blinded_code_holds_no_program_immediate() {
    let k = 0x5eed_c0de_i32;
    let slots = [
        insn(0x07, 1, 0, 0, k),
        insn(0x04, 2, 0, 0, k),
        insn(0xb7, 3, 0, 0, k),
        insn(0x15, 1, 0, 0, k),
        insn(0x7a, 10, 0, -8, k),
        insn(0x18, 4, 0, 0, k),
        insn(0, 0, 0, 0, k),
        insn(0x27, 5, 0, 0, k),
        insn(0x37, 5, 0, 0, k),
        EXIT,
    ];
    let has = |c: &JitCode| c.bytes().windows(4).filter(|w| *w == k.to_le_bytes()).count();
    assert!(has(&code(&slots, &JitOptions::default())) >= 8);
    let blinded = code(&slots, &JitOptions { blinding: true, ..JitOptions::default() });
    assert_eq!(has(&blinded), 0);
}

/// Verified mode: an XDP program whose accesses the verifier fixes (context loads, packet
/// loads and stores behind a bounds check, stack through a copied frame pointer, a map value)
/// has no bounds check and no call into Rust for them: each access is
/// `mov r11, [r12 + delta]` then the access at `[base + r11 + off]`, and the body has no
/// `jae` at all.
#[test]
fn verified_accesses_are_two_instructions_without_checks() {
    use sift_ebpf::{MapSpec, MapType, ProgType};
    use sift_ebpf_vm::{Helpers, Map, register_map_helpers};
    let p = [
        insn(0x61, 2, 1, 0, 0),   // r2 = data
        insn(0x61, 3, 1, 4, 0),   // r3 = data_end
        insn(0xbf, 4, 2, 0, 0),   // r4 = r2
        insn(0x07, 4, 0, 0, 14),  // r4 += 14
        insn(0x2d, 4, 3, 9, 0),   // if r4 > r3 goto out
        insn(0x71, 0, 2, 12, 0),  // r0 = *(u8 *)(r2 + 12)
        insn(0x73, 2, 0, 13, 0),  // *(u8 *)(r2 + 13) = r0
        insn(0xbf, 5, 10, 0, 0),  // r5 = r10
        insn(0x07, 5, 0, 0, -16), // r5 += -16
        insn(0x7b, 5, 0, 0, 0),   // *(u64 *)(r5 + 0) = r0
        insn(0x18, 6, 2, 0, 0),   // r6 = map_value(0) + 0
        insn(0, 0, 0, 0, 0),
        insn(0x61, 7, 6, 4, 0), // r7 = *(u32 *)(r6 + 4)
        insn(0x63, 6, 7, 0, 0), // *(u32 *)(r6 + 0) = r7
        insn(0xb7, 0, 0, 0, 2), // out: r0 = XDP_PASS
        EXIT,
    ];
    let spec = MapSpec {
        name: "m".into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        flags: 0,
        initial: Vec::new(),
    };
    let mut helpers = Helpers::new();
    register_map_helpers(&mut helpers);
    let maps = vec![Map::from_spec(&spec).unwrap()];
    let vm = Vm::load_with_maps(&p, helpers, maps).unwrap();
    let verifier = sift_ebpf_verifier::Options { privileged: true };
    let c = sift_ebpf_jit::compile_verified(&vm, ProgType::Xdp, &verifier, &JitOptions::default())
        .unwrap();
    let start = c.body_offsets()[0];
    let all = decode(&c.bytes()[start..]);
    let body = &all[..epilogue(&all)];
    assert!(!body.iter().any(|i| matches!(i.mnemonic(), Mnemonic::Jae | Mnemonic::Call)));
    // Every memory operand other than the run context's is `[base + r11*1 + off]` right
    // after `mov r11, [r12 + delta]`.
    let mut accesses = 0;
    for (k, i) in body.iter().enumerate() {
        for op in 0..i.op_count() {
            if i.op_kind(op) != OpKind::Memory || i.memory_base() == Register::R12 {
                continue;
            }
            accesses += 1;
            assert_eq!(i.memory_index(), Register::R11, "{i:?}");
            assert_eq!(i.memory_index_scale(), 1, "{i:?}");
            let prev = &body[k - 1];
            assert_eq!(prev.mnemonic(), Mnemonic::Mov, "{prev:?} before {i:?}");
            assert_eq!(prev.op0_register(), Register::R11, "{prev:?} before {i:?}");
            assert_eq!(prev.memory_base(), Register::R12, "{prev:?} before {i:?}");
        }
    }
    assert_eq!(accesses, 7, "{}", body.iter().map(|i| format!("{i:?}\n")).collect::<String>());
}

/// A counted loop's unchecked copy (clang's memcpy loop): its entry checked both accesses'
/// ranges over every iteration, so inside the loop each is one instruction,
/// `[base + r10 + off]` with the region's delta in r10, and the loop has no bounds check, no
/// call into Rust and no budget charge (r9 is charged when the loop ends); the checked copy
/// beside it keeps the inline checks.
#[test]
fn a_counted_loops_hoisted_accesses_have_no_per_iteration_check() {
    let slots = [
        insn(0x79, 2, 1, 0, 0),  // r2 = n
        insn(0x07, 1, 0, 0, 8),  // r1 += 8
        insn(0xbf, 4, 2, 0, 0),  // r4 = n
        insn(0x67, 4, 0, 0, 3),  // r4 <<= 3
        insn(0xb7, 5, 0, 0, 0),  // r5 = 0
        insn(0xbf, 0, 1, 0, 0),  // loop: r0 = r1
        insn(0x0f, 0, 4, 0, 0),  // r0 += r4
        insn(0x79, 6, 1, 0, 0),  // r6 = *(u64 *)(r1 + 0)
        insn(0x7b, 0, 6, 0, 0),  // *(u64 *)(r0 + 0) = r6
        insn(0x07, 1, 0, 0, 8),  // r1 += 8
        insn(0x07, 5, 0, 0, 1),  // r5 += 1
        insn(0x2d, 2, 5, -7, 0), // if r2 > r5 goto loop
        EXIT,
    ];
    let c = code(&slots, &JitOptions::default());
    check_code(&c);
    let all = decode(c.bytes());
    // Each loop: a backward conditional jump and the instructions from its target to it.
    let loops: Vec<&[Instruction]> = all
        .iter()
        .enumerate()
        .filter(|(_, i)| i.is_jcc_short_or_near() && i.near_branch_target() < i.ip())
        .map(|(k, i)| {
            let start = all.iter().position(|j| j.ip() == i.near_branch_target()).unwrap();
            &all[start..=k]
        })
        .collect();
    let indexed = |l: &[Instruction]| {
        l.iter()
            .filter(|i| {
                (0..i.op_count()).any(|o| i.op_kind(o) == OpKind::Memory)
                    && i.memory_index() == Register::R10
            })
            .count()
    };
    let fast: Vec<_> = loops.iter().filter(|l| indexed(l) > 0).collect();
    assert_eq!(fast.len(), 1, "loops with r10-indexed accesses among {}", loops.len());
    let fast = fast[0];
    assert_eq!(indexed(fast), 2, "{fast:?}");
    let mut info = InstructionInfoFactory::new();
    for i in fast.iter() {
        assert!(!matches!(i.mnemonic(), Mnemonic::Jae | Mnemonic::Jb | Mnemonic::Call), "{i:?}");
        assert!(
            !(0..i.op_count())
                .any(|o| i.op_kind(o) == OpKind::Memory && i.memory_base() == Register::R12),
            "a run-context operand in the loop: {i:?}"
        );
        let budget =
            info.info(i).used_registers().iter().any(|u| {
                u.register().full_register() == Register::R9 && u.access() != OpAccess::Read
            });
        assert!(!budget, "a budget charge in the loop: {i:?}");
    }
    // The checked copy: inline checks (`jae slow`) in its loop.
    assert!(
        loops.iter().any(|l| l.iter().any(|i| i.mnemonic() == Mnemonic::Jae)),
        "no checked copy"
    );
}
