//! Random eBPF programs over the whole ISA for the JIT's tests (`differential.rs` runs them
//! on both engines, `shapes.rs` checks the code made for them): ALU and ALU32 with the edge
//! immediates, byte swaps, sign extension, division by 0 and -1, loads and stores in and
//! out of the frame, the stack and the input memory, out-of-bounds accesses, atomics,
//! forward jumps of every condition, counted loops, bpf-to-bpf calls, helpers (ubpf's test
//! helpers), legacy packet loads. Programs expect `r1` to point at 64 bytes of memory.

use sift_ebpf::EbpfInsn;
use sift_testkit::Rng;

/// An instruction with the fields its form does not use zeroed (the decoder refuses others).
pub fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> EbpfInsn {
    let (mut src, mut off, mut imm) = (src, off, imm);
    let class = code & 7;
    let x = code & 0x08 != 0;
    match class {
        4 | 7 => {
            let op = code & 0xf0;
            if op == 0xd0 || op == 0x80 || !x {
                src = 0;
            }
            if (x && op != 0xd0) || op == 0x80 {
                imm = 0;
            }
            if !(matches!(op, 0x30 | 0x90) || (op == 0xb0 && x)) {
                off = 0;
            }
            if op == 0x80 || op == 0xd0 {
                off = 0;
            }
        }
        1 => imm = 0,
        2 => src = 0,
        3 if code & 0xe0 == 0x60 => imm = 0,
        5 | 6 if !matches!(code & 0xf0, 0x00 | 0x80 | 0x90) => {
            if x {
                imm = 0;
            } else {
                src = 0;
            }
        }
        _ => {}
    }
    EbpfInsn { code, dst, src, off, imm }
}

const EDGE_IMMS: [i32; 14] = [0, 1, -1, 2, 7, 31, 32, 33, 63, 64, i32::MIN, i32::MAX, 0xff, -0x80];

fn imm(rng: &mut Rng) -> i32 {
    if rng.chance(40) { rng.pick(&EDGE_IMMS) } else { rng.next() as i32 }
}

/// A register the body may write: r0–r7 (r8 counts the loop, r9 keeps the memory pointer).
fn reg(rng: &mut Rng) -> u8 {
    rng.below(8) as u8
}

/// A source register (r10 too).
fn sreg(rng: &mut Rng) -> u8 {
    rng.below(11) as u8
}

/// One random straight-line or forward-jumping instruction (or a few) appended to `p`;
/// `room` is how many slots a forward jump may skip.
fn straight(rng: &mut Rng, p: &mut Vec<EbpfInsn>, room: usize) {
    let sizes = [0x00u8, 0x08, 0x10, 0x18]; // W, H, B, DW
    match rng.below(20) {
        0..=5 => {
            // ALU / ALU64, imm or reg.
            let class = rng.pick(&[0x04u8, 0x07]);
            let op = rng.pick(&[
                0x00u8, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0,
            ]);
            let x = if rng.chance(50) && op != 0x80 { 0x08 } else { 0 };
            let off = if matches!(op, 0x30 | 0x90) && rng.chance(50) { 1 } else { 0 };
            p.push(insn(class | op | x, reg(rng), sreg(rng), off, imm(rng)));
        }
        6 => {
            // movsx (ALU64 8/16/32, ALU32 8/16)
            let class = rng.pick(&[0x04u8, 0x07]);
            let off = if class == 0x07 { rng.pick(&[8i16, 16, 32]) } else { rng.pick(&[8i16, 16]) };
            p.push(insn(class | 0xb8, reg(rng), sreg(rng), off, 0));
        }
        7 => {
            let code = rng.pick(&[0xd4u8, 0xdc, 0xd7]);
            p.push(insn(code, reg(rng), 0, 0, rng.pick(&[16, 32, 64])));
        }
        8 => {
            let v = rng.next();
            let d = reg(rng);
            p.push(insn(0x18, d, 0, 0, v as i32));
            p.push(insn(0, 0, 0, 0, (v >> 32) as i32));
        }
        9..=12 => {
            // A load or store: through r10 (in and out of the frame), r1 (the memory), or
            // r6 (a copy of r10 - 64 set at the start).
            let size = rng.pick(&sizes);
            let n = [4i16, 2, 1, 8][usize::from(size >> 3)];
            let (base, off) = match rng.below(4) {
                0 | 1 => (10u8, -(rng.range(1, 64) as i16) - rng.range(0, 8) as i16 * n),
                2 => (1u8, rng.range(-4, 68) as i16),
                _ => (6u8, rng.range(-8, 72) as i16),
            };
            let off = if rng.chance(5) { rng.range(-600, 100) as i16 } else { off };
            match rng.below(4) {
                0 => p.push(insn(0x61 | size, reg(rng), base, off, 0)),
                1 => p.push(insn(0x62 | size, base, 0, off, imm(rng))),
                2 => p.push(insn(0x63 | size, base, sreg(rng), off, 0)),
                _ if size != 0x18 && size != 0x00 => {
                    p.push(insn(0x81 | size, reg(rng), base, off, 0));
                }
                _ => p.push(insn(0x81, reg(rng), base, off, 0)),
            }
            // Keep r1 and r6 pointers most of the time.
            fix_pointers(p);
        }
        13 => {
            // Atomics on the frame or the memory.
            let size = rng.pick(&[0x00u8, 0x18]);
            let n = if size == 0 { 4 } else { 8 };
            let (base, off) = if rng.chance(50) {
                (10u8, -(rng.range(1, 8) as i16) * n)
            } else {
                (1u8, rng.range(0, 7) as i16 * n)
            };
            let op = rng.pick(&[0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1]);
            let src = if op & 1 != 0 { reg(rng).max(2) } else { sreg(rng) };
            p.push(insn(0xc3 | size, base, src, off, op));
            fix_pointers(p);
        }
        14..=16 if room > 0 => {
            // A forward conditional jump.
            let class = rng.pick(&[0x05u8, 0x06]);
            let op =
                rng.pick(&[0x10u8, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0]);
            let x = if rng.chance(50) { 0x08 } else { 0 };
            let off = rng.range(0, room.min(6) as i64) as i16;
            p.push(insn(class | op | x, sreg(rng), sreg(rng), off, imm(rng)));
        }
        17 => {
            // A helper: gather_bytes, no_op, sqrti, memfrob over the memory.
            match rng.below(4) {
                0 => p.push(insn(0x85, 0, 0, 0, 0)),
                1 => p.push(insn(0x85, 0, 0, 0, 2)),
                2 => p.push(insn(0x85, 0, 0, 0, 3)),
                _ => {
                    p.push(insn(0xbf, 7, 1, 0, 0));
                    p.push(insn(0xbf, 1, 1, 0, 0));
                    p.push(insn(0xb7, 2, 0, 0, rng.range(0, 70) as i32));
                    p.push(insn(0x85, 0, 0, 0, 1));
                    p.push(insn(0xbf, 1, 7, 0, 0));
                }
            }
        }
        18 => {
            // Legacy packet loads over the input memory.
            let size = rng.pick(&[0x00u8, 0x08, 0x10]);
            if rng.chance(50) {
                p.push(insn(0x20 | size, 0, 0, 0, rng.range(-2, 66) as i32));
            } else {
                p.push(insn(0x40 | size, 0, reg(rng), 0, rng.range(-2, 66) as i32));
            }
        }
        _ => p.push(insn(0xbf, reg(rng).max(2), sreg(rng), 0, 0)),
    }
}

/// Most of the time, `r1` stays the memory and `r6` a stack pointer, so that accesses hit.
fn fix_pointers(p: &mut [EbpfInsn]) {
    if let Some(last) = p.last()
        && last.code & 7 == 1
        && matches!(last.dst, 1 | 6)
    {
        let l = p.len() - 1;
        p[l].dst = 0;
    }
}

/// A random program: a preamble (registers set, `r6` a stack pointer, `r1` saved in `r9`),
/// a body with a counted loop and a call, and a function.
pub fn program(rng: &mut Rng) -> Vec<EbpfInsn> {
    let mut p = Vec::new();
    for r in [0u8, 2, 3, 4, 5, 7, 8] {
        p.push(insn(0xb7, r, 0, 0, imm(rng)));
    }
    p.push(insn(0xbf, 6, 10, 0, 0));
    p.push(insn(0x07, 6, 0, 0, -64));
    p.push(insn(0xbf, 9, 1, 0, 0));
    let body = rng.range(5, 40) as usize;
    let with_loop = rng.chance(30);
    let with_call = rng.chance(30);
    let mut loop_start = 0;
    if with_loop {
        p.push(insn(0xb7, 8, 0, 0, rng.range(1, 5) as i32));
        loop_start = p.len();
    }
    let start = p.len();
    while p.len() - start < body {
        let left = body - (p.len() - start);
        straight(rng, &mut p, left.saturating_sub(1));
        if rng.chance(10) {
            p.push(insn(0xbf, 1, 9, 0, 0));
        }
    }
    // Jumps that went past the body land on this instruction or before the loop's end.
    let end = p.len();
    for (k, i) in p.iter_mut().enumerate().take(end).skip(start) {
        if matches!(i.code & 7, 5 | 6) && i.code & 0xf0 != 0x80 && i.code & 0xf0 != 0x90 {
            let t = k as i64 + 1 + i64::from(i.off);
            if t > end as i64 {
                i.off = (end - k - 1) as i16;
            }
        }
    }
    if with_call {
        p.push(insn(0x85, 0, 1, 0, 0)); // patched below
    }
    if with_loop {
        p.push(insn(0x07, 8, 0, 0, -1));
        let back = loop_start as i64 - (p.len() as i64 + 1);
        p.push(insn(0x55, 8, 0, back as i16, 0));
    }
    // r0 mixes in a few stack words so that stack contents count.
    for k in 1..4 {
        p.push(insn(0x79, 2, 10, -8 * k, 0));
        p.push(insn(0xaf, 0, 2, 0, 0));
    }
    p.push(insn(0x95, 0, 0, 0, 0));
    if with_call {
        let f = p.len();
        let call = p.iter().position(|i| i.code == 0x85 && i.src == 1).unwrap();
        p[call].imm = (f as i64 - call as i64 - 1) as i32;
        let fstart = p.len();
        for _ in 0..rng.range(1, 8) {
            straight(rng, &mut p, 0);
        }
        let _ = fstart;
        p.push(insn(0x95, 0, 0, 0, 0));
    }
    p
}
