//! A random XDP program generator for the soundness and kernel tests: context loads, packet
//! accesses behind random guards (masked, compared or unbounded variable offsets), stack
//! stores and loads at random offsets, map lookups with or without null checks, scalar
//! arithmetic, comparisons, bpf-to-bpf calls, forward branches.

use sift_ebpf::{AluOp, Cond, ImmKind, Insn, MapSpec, MapType, Operand, Size, Width};

pub use sift_testkit::Rng;

pub const VALUE_SIZE: u32 = 16;
/// Scalar registers the generator plays with (r2/r3 hold data/data_end, r6 the context).
const SCALARS: [u8; 4] = [4, 5, 7, 8];
const SIZES: [Size; 4] = [Size::B, Size::H, Size::W, Size::DW];

fn alu(op: AluOp, dst: u8, src: Operand, w32: bool) -> Insn {
    Insn::Alu { width: if w32 { Width::W32 } else { Width::W64 }, op, dst, src }
}

fn mov(dst: u8, imm: i32) -> Insn {
    alu(AluOp::Mov, dst, Operand::Imm(imm), false)
}

fn reload_packet() -> Vec<Insn> {
    vec![
        Insn::Load { size: Size::W, dst: 2, src: 6, off: 0 },
        Insn::Load { size: Size::W, dst: 3, src: 6, off: 4 },
    ]
}

/// One generated piece: instructions, and whether it must stay whole (a forward jump may skip
/// it but not land inside it).
fn piece(r: &mut Rng) -> Vec<Insn> {
    match r.below(10) {
        // Scalar arithmetic.
        0 | 1 => {
            let ops = [
                AluOp::Add,
                AluOp::Sub,
                AluOp::Mul,
                AluOp::And,
                AluOp::Or,
                AluOp::Xor,
                AluOp::Lsh,
                AluOp::Rsh,
                AluOp::Arsh,
                AluOp::Div,
                AluOp::Mod,
                AluOp::Mov,
            ];
            let op = r.pick(&ops);
            let dst = r.pick(&SCALARS);
            let w32 = r.chance(30);
            let src = if r.chance(60) {
                let imm = if matches!(op, AluOp::Lsh | AluOp::Rsh | AluOp::Arsh) {
                    r.range(0, if w32 { 31 } else { 63 }) as i32
                } else if matches!(op, AluOp::Div | AluOp::Mod) {
                    r.range(1, 100) as i32
                } else {
                    r.pick(&[0, 1, 2, 7, 8, 14, 15, 255, -1, -8, 0x7fff_ffff])
                };
                Operand::Imm(imm)
            } else {
                Operand::Reg(r.pick(&SCALARS))
            };
            vec![alu(op, dst, src, w32)]
        }
        // A context load (any offset and size; most are refused).
        2 => {
            let off = if r.chance(80) { r.range(0, 6) as i16 * 4 } else { r.range(-4, 30) as i16 };
            let size = if r.chance(80) { Size::W } else { r.pick(&SIZES) };
            vec![Insn::Load { size, dst: r.pick(&SCALARS), src: 6, off }]
        }
        // A packet access behind a guard of its own.
        3 | 4 => {
            let p = r.pick(&SCALARS);
            let mut v = vec![alu(AluOp::Mov, p, Operand::Reg(2), false)];
            let mut bound: Option<(u8, i32)> = None;
            if r.chance(30) {
                // A variable offset, masked, bounded by a comparison, or neither.
                let s = r.pick(&SCALARS.iter().copied().filter(|&x| x != p).collect::<Vec<_>>());
                match r.below(3) {
                    0 => v.push(alu(
                        AluOp::And,
                        s,
                        Operand::Imm(r.pick(&[3, 7, 15, 31, 0xff])),
                        false,
                    )),
                    1 => bound = Some((s, r.pick(&[0, 3, 8, 40, 1000]))),
                    _ => {}
                }
                v.push(alu(AluOp::Add, p, Operand::Reg(s), false));
            }
            let base = r.range(0, 24) as i32;
            if base != 0 {
                v.push(alu(AluOp::Add, p, Operand::Imm(base), false));
            }
            let size = r.pick(&SIZES);
            let off = r.range(-2, 20) as i16;
            let guard = r.range(0, 24) as i32;
            let t = if p == 4 { 5 } else { 4 };
            // t = p + guard; if t > data_end skip the access.
            v.push(alu(AluOp::Mov, t, Operand::Reg(p), false));
            v.push(alu(AluOp::Add, t, Operand::Imm(guard), false));
            let (cond, swap) =
                r.pick(&[(Cond::Gt, false), (Cond::Ge, false), (Cond::Lt, true), (Cond::Le, true)]);
            let access = if r.chance(50) {
                Insn::Load { size, dst: t, src: p, off }
            } else {
                Insn::Store { size, dst: p, off, src: Operand::Imm(0x5a) }
            };
            if swap {
                // if data_end < t skip / if data_end <= t skip
                v.push(Insn::Jmp { width: Width::W64, cond, dst: 3, src: Operand::Reg(t), off: 1 });
            } else {
                v.push(Insn::Jmp { width: Width::W64, cond, dst: t, src: Operand::Reg(3), off: 1 });
            }
            v.push(access);
            if let Some((s, k)) = bound {
                // if s > k skip the whole piece (the bound is checked before p is made).
                let width = if r.chance(30) { Width::W32 } else { Width::W64 };
                let j = Insn::Jmp {
                    width,
                    cond: Cond::Gt,
                    dst: s,
                    src: Operand::Imm(k),
                    off: v.len() as i16,
                };
                v.insert(0, j);
            }
            v
        }
        // A call to the subprogram with a pointer into this frame.
        9 => {
            let mut v = vec![
                alu(AluOp::Mov, 1, Operand::Reg(10), false),
                alu(AluOp::Add, 1, Operand::Imm(-(r.range(0, 4) as i32) * 8), false),
                Insn::Call(sift_ebpf::CallTarget::Local(i32::MIN)),
                alu(AluOp::Mov, r.pick(&SCALARS), Operand::Reg(0), false),
            ];
            v.extend(reload_packet());
            v.push(mov(4, 1));
            v.push(mov(5, 2));
            v
        }
        // The stack.
        5 => {
            let size = r.pick(&SIZES);
            let off =
                if r.chance(70) { -(r.range(1, 8) as i16) * 8 } else { r.range(-520, 8) as i16 };
            if r.chance(50) {
                vec![Insn::Store { size, dst: 10, off, src: Operand::Reg(r.pick(&SCALARS)) }]
            } else {
                vec![Insn::Load { size, dst: r.pick(&SCALARS), src: 10, off }]
            }
        }
        // A map lookup and an access to the value.
        6 => {
            let mut v = vec![
                Insn::Store {
                    size: Size::W,
                    dst: 10,
                    off: -4,
                    src: Operand::Imm(r.range(0, 5) as i32),
                },
                Insn::LdImm64 { dst: 1, kind: ImmKind::MapFd, imm: 0 },
                alu(AluOp::Mov, 2, Operand::Reg(10), false),
                alu(AluOp::Add, 2, Operand::Imm(-4), false),
                Insn::Call(sift_ebpf::CallTarget::Helper(1)),
            ];
            let size = r.pick(&SIZES);
            let off = r.range(-2, 18) as i16;
            let access = if r.chance(50) {
                Insn::Load { size, dst: 0, src: 0, off }
            } else {
                Insn::Store { size, dst: 0, off, src: Operand::Imm(1) }
            };
            if r.chance(85) {
                v.push(Insn::Jmp {
                    width: Width::W64,
                    cond: Cond::Eq,
                    dst: 0,
                    src: Operand::Imm(0),
                    off: 1,
                });
            }
            v.push(access);
            v.extend(reload_packet());
            v.push(mov(4, 1));
            v.push(mov(5, 2));
            v
        }
        // A comparison that bounds a scalar (and may be skipped around nothing).
        7 => {
            let conds =
                [Cond::Gt, Cond::Ge, Cond::Lt, Cond::Le, Cond::Sgt, Cond::Slt, Cond::Eq, Cond::Ne];
            vec![Insn::Jmp {
                width: if r.chance(25) { Width::W32 } else { Width::W64 },
                cond: r.pick(&conds),
                dst: r.pick(&SCALARS),
                src: Operand::Imm(r.range(0, 40) as i32),
                off: 0,
            }]
        }
        // A stack pointer moved, then used.
        _ => {
            let p = r.pick(&SCALARS);
            let off = r.range(-40, 0) as i32;
            let size = r.pick(&SIZES);
            vec![
                alu(AluOp::Mov, p, Operand::Reg(10), false),
                alu(AluOp::Add, p, Operand::Imm(off), false),
                Insn::Store { size, dst: p, off: r.range(-8, 8) as i16, src: Operand::Imm(3) },
            ]
        }
    }
}

/// A program: prologue, pieces with forward jumps between them, `r0` from a scalar, exit.
pub fn program(r: &mut Rng) -> Vec<Insn> {
    let mut pieces: Vec<Vec<Insn>> = vec![{
        let mut p = vec![alu(AluOp::Mov, 6, Operand::Reg(1), false)];
        p.extend(reload_packet());
        for &s in &SCALARS {
            p.push(mov(s, r.range(0, 64) as i32));
        }
        p
    }];
    let n = r.range(1, 10);
    for _ in 0..n {
        pieces.push(piece(r));
    }
    pieces.push(vec![alu(AluOp::Mov, 0, Operand::Reg(r.pick(&SCALARS)), false), Insn::Exit]);
    // Forward jumps over whole pieces, inserted before a random piece.
    let jumps = r.below(3);
    for _ in 0..jumps {
        let at = r.range(1, pieces.len() as i64 - 1) as usize;
        let skip = r.range(1, (pieces.len() - at - 1).max(1) as i64) as usize;
        let slots: usize = pieces[at..at + skip].iter().flatten().map(Insn::slots).sum();
        let cond = r.pick(&[Cond::Gt, Cond::Eq, Cond::Ne, Cond::Set, Cond::Slt]);
        let j = Insn::Jmp {
            width: Width::W64,
            cond,
            dst: r.pick(&SCALARS),
            src: Operand::Imm(r.range(0, 20) as i32),
            off: slots as i16,
        };
        pieces.insert(at, vec![j]);
    }
    let mut main: Vec<Insn> = pieces.into_iter().flatten().collect();
    // The subprogram: a store and a load through the caller's pointer in r1.
    let sub_start: usize = main.iter().map(Insn::slots).sum();
    let mut slot = 0i64;
    for insn in &mut main {
        if let Insn::Call(sift_ebpf::CallTarget::Local(imm)) = insn {
            *imm = (sub_start as i64 - slot - 1) as i32;
        }
        slot += insn.slots() as i64;
    }
    let calls = main.iter().any(|i| matches!(i, Insn::Call(sift_ebpf::CallTarget::Local(_))));
    if calls {
        let off = |r: &mut Rng| {
            if r.chance(80) { -(r.range(1, 2) as i16) * 8 } else { r.range(-16, 8) as i16 }
        };
        let (store_off, load_off) = (off(r), off(r));
        main.extend([
            Insn::Store { size: r.pick(&SIZES), dst: 1, off: store_off, src: Operand::Imm(9) },
            Insn::Load { size: r.pick(&SIZES), dst: 0, src: 1, off: load_off },
            Insn::Exit,
        ]);
    }
    main
}

pub fn map_spec() -> MapSpec {
    MapSpec {
        name: "values".into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: VALUE_SIZE,
        max_entries: 4,
        flags: 0,
        initial: Vec::new(),
    }
}
