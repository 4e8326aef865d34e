//! Random eBPF programs the kernel's verifier accepts, for differential tests of sift's eBPF
//! engines (the VM against the kernel, the JIT against the VM).
//!
//! Every instruction class appears: 32- and 64-bit ALU with immediates and registers, signed
//! division and modulo, sign-extending moves and loads, byte swaps, `lddw`, packet and stack
//! loads and stores, atomics with and without fetch, `xchg`, `cmpxchg`, forward `JMP`/`JMP32`
//! branches of every condition, `ja` and `gotol`, bpf-to-bpf calls, and map helper calls on an
//! array and a hash map ([`map_specs`]): lookups with loads, stores and atomics on the value
//! behind the null check, updates with each flag, deletes. A program runs as XDP; its prologue
//! proves [`PROVEN`] bytes of packet and initialises [`STACK`] bytes of stack, and its
//! epilogue stores every scalar register ([`SCALARS`]) into the packet, so the output packet
//! carries the whole register state.

use sift_ebpf::opcode::{alu, class, jmp, mode, size, source, swap};
use sift_ebpf::{EbpfInsn, MapSpec, MapType, helper_ids};

use crate::Rng;

/// Immediates that hit the edges (0, ±1, the sign bits) as often as random values.
fn imm(r: &mut Rng) -> i32 {
    match r.below(6) {
        0 => r.pick(&[0, 1, -1, i32::MIN, i32::MAX, 0x8000, 0xffff, 31, 32, 63]),
        1 => r.below(64) as i32,
        _ => r.next() as i32,
    }
}

/// Registers that hold scalars throughout; r6 is the context, r7 the packet (64 bytes proven
/// readable), r10 the frame.
pub const SCALARS: [u8; 8] = [0, 1, 2, 3, 4, 5, 8, 9];
/// Bytes of packet the prologue proves present.
pub const PROVEN: i16 = 64;
/// Stack bytes the prologue initialises.
pub const STACK: i16 = 64;

/// One generated instruction, or a forward branch whose offset is fixed once the body is laid
/// out (`skip` body items).
enum Item {
    Insn(EbpfInsn),
    Lddw(u8, u64),
    Branch {
        code: u8,
        dst: u8,
        src: u8,
        imm: i32,
        skip: usize,
    },
    /// A conditional branch over the next slot, then `ja` (16-bit offset) or, with `long`,
    /// `gotol` (ISA v4: offset in the immediate) skipping `skip` items: the branch makes the
    /// item after the `ja` reachable (the verifier refuses unreachable code).
    Goto {
        cond: EbpfInsn,
        long: bool,
        skip: usize,
    },
    Call,
    /// A fixed sequence (a map operation: key on the stack, the helper call, the value's
    /// accesses behind a null check, r0 and the clobbered r1–r5 given fresh values).
    Seq(Vec<EbpfInsn>),
}

impl Item {
    fn slots(&self) -> usize {
        match self {
            Item::Lddw(..) | Item::Goto { .. } => 2,
            Item::Seq(v) => v.len(),
            _ => 1,
        }
    }
}

fn ins(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Item {
    Item::Insn(EbpfInsn::new(code, dst, src, off, imm))
}

fn lddw(dst: u8, v: u64) -> [EbpfInsn; 2] {
    [
        EbpfInsn::new(class::LD | size::DW | mode::IMM, dst, 0, 0, v as u32 as i32),
        EbpfInsn::new(0, 0, 0, 0, (v >> 32) as u32 as i32),
    ]
}

const SIZES: [(u8, i16); 4] = [(size::B, 1), (size::H, 2), (size::W, 4), (size::DW, 8)];

fn alu_item(r: &mut Rng) -> Item {
    let wide = r.chance(60);
    let cls = if wide { class::ALU64 } else { class::ALU };
    let dst = r.pick(&SCALARS);
    let src = r.pick(&SCALARS);
    let op = r.pick(&[
        alu::ADD,
        alu::SUB,
        alu::MUL,
        alu::DIV,
        alu::OR,
        alu::AND,
        alu::LSH,
        alu::RSH,
        alu::NEG,
        alu::MOD,
        alu::XOR,
        alu::MOV,
        alu::ARSH,
        alu::END,
    ]);
    let bits = if wide { 64 } else { 32 };
    match op {
        alu::NEG => ins(cls | op, dst, 0, 0, 0),
        alu::END => {
            let width = r.pick(&[16, 32, 64]);
            match r.below(3) {
                0 => ins(class::ALU | op | swap::TO_LE, dst, 0, 0, width),
                1 => ins(class::ALU | op | swap::TO_BE, dst, 0, 0, width),
                // `bswap` (ISA v4): ALU64 class, to-le bit clear.
                _ => ins(class::ALU64 | op, dst, 0, 0, width),
            }
        }
        // The verifier refuses immediate shifts of the width or more.
        alu::LSH | alu::RSH | alu::ARSH if r.chance(50) => {
            ins(cls | op | source::K, dst, 0, 0, r.below(bits) as i32)
        }
        alu::LSH | alu::RSH | alu::ARSH => ins(cls | op | source::X, dst, src, 0, 0),
        alu::DIV | alu::MOD => {
            // offset 1: the signed forms (ISA v4).
            let signed = i16::from(r.chance(50));
            if r.chance(50) {
                let mut k = imm(r);
                if k == 0 {
                    k = -1;
                }
                ins(cls | op | source::K, dst, 0, signed, k)
            } else {
                ins(cls | op | source::X, dst, src, signed, 0)
            }
        }
        alu::MOV if r.chance(30) => {
            // Sign-extending moves (ISA v4): 64-bit from 8/16/32, 32-bit from 8/16.
            let from = if wide { r.pick(&[8, 16, 32]) } else { r.pick(&[8, 16]) };
            ins(cls | op | source::X, dst, src, from, 0)
        }
        _ if r.chance(50) => ins(cls | op | source::K, dst, 0, 0, imm(r)),
        _ => ins(cls | op | source::X, dst, src, 0, 0),
    }
}

fn mem_item(r: &mut Rng) -> Item {
    let (sz, n) = r.pick(&SIZES);
    let reg = r.pick(&SCALARS);
    if r.chance(50) {
        // The packet: any offset whose access stays within the proven bytes.
        let off = r.below((PROVEN - n + 1) as u64) as i16;
        match r.below(4) {
            0 => ins(class::LDX | mode::MEM | sz, reg, 7, off, 0),
            1 if sz != size::DW => ins(class::LDX | mode::MEMSX | sz, reg, 7, off, 0),
            2 => ins(class::ST | mode::MEM | sz, 7, 0, off, imm(r)),
            _ => ins(class::STX | mode::MEM | sz, 7, reg, off, 0),
        }
    } else {
        // The stack: aligned to the access size, as the kernel requires.
        let off = -(n * (1 + r.below((STACK / n) as u64) as i16));
        match r.below(5) {
            0 => ins(class::LDX | mode::MEM | sz, reg, 10, off, 0),
            1 if sz != size::DW => ins(class::LDX | mode::MEMSX | sz, reg, 10, off, 0),
            2 => ins(class::ST | mode::MEM | sz, 10, 0, off, imm(r)),
            3 if sz == size::W || sz == size::DW => atomic_item(r, sz, off),
            _ => ins(class::STX | mode::MEM | sz, 10, reg, off, 0),
        }
    }
}

fn atomic_item(r: &mut Rng, sz: u8, off: i16) -> Item {
    const FETCH: i32 = 0x01;
    let op = match r.below(6) {
        0 => alu::ADD as i32,
        1 => alu::OR as i32,
        2 => alu::AND as i32,
        3 => alu::XOR as i32,
        4 => 0xe0 | FETCH, // xchg
        _ => 0xf0 | FETCH, // cmpxchg
    };
    let fetch = if op & 0xe0 == 0xe0 || r.chance(50) { FETCH } else { 0 };
    ins(class::STX | mode::ATOMIC | sz, 10, r.pick(&SCALARS), off, op | fetch)
}

fn branch_item(r: &mut Rng, left: usize) -> Item {
    let goto = r.chance(15);
    let cls = if r.chance(50) { class::JMP } else { class::JMP32 };
    let cond = r.pick(&[
        jmp::JEQ,
        jmp::JGT,
        jmp::JGE,
        jmp::JSET,
        jmp::JNE,
        jmp::JSGT,
        jmp::JSGE,
        jmp::JLT,
        jmp::JLE,
        jmp::JSLT,
        jmp::JSLE,
    ]);
    let (code, src, imm) = if r.chance(50) {
        (cls | cond | source::K, 0, imm(r))
    } else {
        (cls | cond | source::X, r.pick(&SCALARS), 0)
    };
    let (dst, skip) = (r.pick(&SCALARS), 1 + r.below(left as u64) as usize);
    if goto {
        let cond = EbpfInsn::new(code, dst, src, 1, imm);
        return Item::Goto { cond, long: r.chance(50), skip };
    }
    Item::Branch { code, dst, src, imm, skip }
}

/// The maps every program has: map 0 an array, map 1 a hash, both 4-byte keys and 32-byte
/// values, 4 entries (keys past the array's end and a full hash give the helpers' errors).
pub fn map_specs() -> Vec<MapSpec> {
    [MapType::Array, MapType::Hash]
        .into_iter()
        .map(|map_type| MapSpec {
            name: map_type.name().to_lowercase(),
            map_type,
            key_size: 4,
            value_size: MAP_VALUE as u32,
            max_entries: 4,
            flags: 0,
            initial: Vec::new(),
        })
        .collect()
}

/// The maps' value size.
pub const MAP_VALUE: i16 = 32;
/// Where a map operation's key is (below the initialised stack).
const KEY_AT: i16 = -STACK - 8;

/// A map operation: `map_lookup_elem` (then loads, stores and atomics on the value behind the
/// null check), `map_update_elem` with a flag (the value from the stack) or
/// `map_delete_elem`; `r0` ends a number, r1–r5 fresh.
fn map_item(r: &mut Rng) -> Item {
    use sift_ebpf::reg::*;
    let map = r.below(2) as i32;
    let mut v = vec![
        EbpfInsn::new(class::ST | mode::MEM | size::W, R10, 0, KEY_AT, r.below(6) as i32),
        // lddw r1, map_fd(map): src 1 (BPF_PSEUDO_MAP_FD), the map's index until loaded.
        EbpfInsn::new(class::LD | size::DW | mode::IMM, R1, 1, 0, map),
        EbpfInsn::new(0, 0, 0, 0, 0),
        EbpfInsn::mov64_reg(R2, R10),
        EbpfInsn::new(class::ALU64 | alu::ADD | source::K, R2, 0, 0, KEY_AT.into()),
    ];
    let call = |id: u32| EbpfInsn::new(class::JMP | jmp::CALL, 0, 0, 0, id as i32);
    let lookup = r.below(2) == 0;
    match if lookup { 0 } else { 2 + r.below(2) } {
        0 => {
            v.push(call(helper_ids::id::MAP_LOOKUP_ELEM));
            let mut ops = Vec::new();
            for _ in 0..1 + r.below(4) {
                let (sz, n) = r.pick(&SIZES);
                let off = n * r.below((MAP_VALUE / n) as u64) as i16;
                let reg = r.pick(&[R8, R9]);
                ops.push(match r.below(4) {
                    0 => EbpfInsn::new(class::LDX | mode::MEM | sz, reg, R0, off, 0),
                    1 => EbpfInsn::new(class::STX | mode::MEM | sz, R0, reg, off, 0),
                    2 => EbpfInsn::new(class::ST | mode::MEM | sz, R0, 0, off, imm(r)),
                    _ if sz == size::W || sz == size::DW => {
                        let op = r.pick(&[0x00, 0x01, 0x41, 0x51, 0xa1, 0xe1, 0x40, 0xa0]);
                        EbpfInsn::new(class::STX | mode::ATOMIC | sz, R0, reg, off, op)
                    }
                    _ => EbpfInsn::new(class::LDX | mode::MEM | sz, reg, R0, off, 0),
                });
            }
            v.push(EbpfInsn::new(class::JMP | jmp::JEQ | source::K, R0, 0, ops.len() as i16, 0));
            v.extend(ops);
        }
        2 => {
            v.push(EbpfInsn::mov64_reg(R3, R10));
            v.push(EbpfInsn::new(class::ALU64 | alu::ADD | source::K, R3, 0, 0, (-STACK).into()));
            v.push(EbpfInsn::new(class::ALU64 | alu::MOV | source::K, R4, 0, 0, r.below(3) as i32));
            v.push(call(helper_ids::id::MAP_UPDATE_ELEM));
        }
        _ => v.push(call(helper_ids::id::MAP_DELETE_ELEM)),
    }
    // r0 is a number again (a lookup left a pointer); the call clobbered r1–r5. An update's
    // or delete's result is kept in r9 first, so that it reaches the packet.
    if !lookup {
        v.push(EbpfInsn::new(class::ALU64 | alu::XOR | source::X, R9, R0, 0, 0));
    }
    for reg in 0..=5 {
        v.push(EbpfInsn::new(class::ALU64 | alu::MOV | source::K, reg, 0, 0, imm(r)));
    }
    Item::Seq(v)
}

/// A program the kernel should accept, and its slots.
pub fn program(r: &mut Rng) -> Vec<EbpfInsn> {
    use sift_ebpf::reg::*;
    let mut out = vec![
        EbpfInsn::mov64_reg(R6, R1),
        EbpfInsn::new(class::LDX | mode::MEM | size::W, R7, R6, 0, 0),
        EbpfInsn::new(class::LDX | mode::MEM | size::W, R8, R6, 4, 0),
        EbpfInsn::mov64_reg(R9, R7),
        EbpfInsn::new(class::ALU64 | alu::ADD | source::K, R9, 0, 0, PROVEN.into()),
        EbpfInsn::new(class::JMP | jmp::JLE | source::X, R9, R8, 2, 0),
        EbpfInsn::new(class::ALU64 | alu::MOV | source::K, R0, 0, 0, 0),
        EbpfInsn::new(class::JMP | jmp::EXIT, 0, 0, 0, 0),
    ];
    for &reg in &SCALARS {
        if r.chance(30) {
            out.extend(lddw(reg, r.next()));
        } else {
            out.push(EbpfInsn::new(class::ALU64 | alu::MOV | source::K, reg, 0, 0, imm(r)));
        }
    }
    for k in 1..=STACK / 8 {
        out.push(EbpfInsn::new(
            class::STX | mode::MEM | size::DW,
            R10,
            r.pick(&SCALARS),
            -8 * k,
            0,
        ));
    }
    // The body.
    let n = 4 + r.below(40) as usize;
    let mut items = Vec::new();
    let (mut branches, mut calls) = (0, 0);
    while items.len() < n {
        let left = n - items.len();
        let pick = r.below(100);
        let item = if pick < 45 {
            alu_item(r)
        } else if pick < 75 {
            mem_item(r)
        } else if pick < 85 && branches < 6 {
            branches += 1;
            branch_item(r, left)
        } else if pick < 90 && calls < 2 {
            calls += 1;
            Item::Call
        } else if pick < 93 {
            Item::Lddw(r.pick(&SCALARS), r.next())
        } else if pick < 98 {
            map_item(r)
        } else {
            alu_item(r)
        };
        items.push(item);
    }
    // Lay the body out: where each item starts (in slots, from the body's start).
    let mut starts = Vec::with_capacity(items.len() + 1);
    let mut at = 0usize;
    for it in &items {
        starts.push(at);
        at += match it {
            // A call is followed by fresh values in r1–r5, which it clobbers.
            Item::Call => 6,
            other => other.slots(),
        };
    }
    starts.push(at);
    debug_assert_eq!(body_start(&out), out.len());
    let body_start = out.len();
    let epilogue = 8 + 2; // eight stores, r0's copy, exit
    let sub_start = body_start + at + epilogue;
    for (i, it) in items.iter().enumerate() {
        let here = body_start + starts[i];
        match *it {
            Item::Insn(insn) => out.push(insn),
            Item::Lddw(dst, v) => out.extend(lddw(dst, v)),
            Item::Seq(ref v) => out.extend(v),
            Item::Branch { code, dst, src, imm, skip } => {
                let target = starts[(i + skip).min(items.len())];
                let off = (target - starts[i] - 1) as i16;
                out.push(EbpfInsn::new(code, dst, src, off, imm));
            }
            Item::Goto { cond, long, skip } => {
                out.push(cond);
                let off = starts[(i + skip).min(items.len())] - starts[i] - 2;
                out.push(if long {
                    EbpfInsn::new(class::JMP32 | jmp::JA, 0, 0, 0, off as i32)
                } else {
                    EbpfInsn::new(class::JMP | jmp::JA, 0, 0, off as i16, 0)
                });
            }
            Item::Call => {
                let off = (sub_start - here - 1) as i32;
                out.push(EbpfInsn::new(class::JMP | jmp::CALL, 0, 1, 0, off));
                for reg in 1..=5 {
                    out.push(EbpfInsn::new(class::ALU64 | alu::MOV | source::K, reg, 0, 0, imm(r)));
                }
            }
        }
    }
    // The epilogue: every scalar register into the packet, then r0 out.
    for (k, &reg) in SCALARS.iter().enumerate() {
        out.push(EbpfInsn::new(class::STX | mode::MEM | size::DW, R7, reg, 8 * k as i16, 0));
    }
    out.push(EbpfInsn::mov64_reg(R0, R0));
    out.push(EbpfInsn::new(class::JMP | jmp::EXIT, 0, 0, 0, 0));
    assert_eq!(out.len(), sub_start);
    if calls == 0 {
        // The verifier refuses unreachable code.
        return out;
    }
    // The subprogram: arithmetic on its arguments and its own stack.
    out.push(EbpfInsn::mov64_reg(R0, r.pick(&[R1, R2, R3, R4, R5])));
    for _ in 0..1 + r.below(5) {
        let op = r.pick(&[alu::ADD, alu::SUB, alu::MUL, alu::XOR, alu::OR, alu::AND]);
        let cls = if r.chance(50) { class::ALU64 } else { class::ALU };
        out.push(EbpfInsn::new(cls | op | source::X, R0, r.pick(&[R1, R2, R3, R4, R5]), 0, 0));
    }
    out.push(EbpfInsn::new(class::STX | mode::MEM | size::DW, R10, R0, -8, 0));
    out.push(EbpfInsn::new(
        class::LDX | mode::MEM | size::W,
        R1,
        R10,
        -8 + 4 * r.below(2) as i16,
        0,
    ));
    out.push(EbpfInsn::new(class::ALU64 | alu::ADD | source::X, R0, R1, 0, 0));
    out.push(EbpfInsn::new(class::JMP | jmp::EXIT, 0, 0, 0, 0));
    out
}

/// Where the body starts: after the prologue, the registers' values and the stack's.
pub fn body_start(prog: &[EbpfInsn]) -> usize {
    let stack_init = |i: &EbpfInsn| i.dst == 10 && i.code == (class::STX | mode::MEM | size::DW);
    let last = prog.iter().take(40).rposition(stack_init).expect("the stack's initialisation");
    last + 1
}
