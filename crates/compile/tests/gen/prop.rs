//! Property: random and/or/not trees of random comparisons and arithmetic relations, built
//! with the builder, emitted and run in sift-vm, agree with a direct evaluation of the tree.

use proptest::prelude::*;
use sift_compile::build::{BuildError, Builder, Cmp, Load, Pred, Value};
use sift_compile::ir::{AluOp, Size, Src, Stmt};

#[derive(Clone, Debug)]
enum Arith {
    Imm(u32),
    Len,
    /// `P[k:size]` through an index value (gencode's `gen_load` without a header base).
    Pkt(Box<Arith>, Size),
    Op(AluOp, Box<Arith>, Box<Arith>),
    Neg(Box<Arith>),
}

#[derive(Clone, Debug)]
enum Tree {
    /// `pad` dead `ld #0` statements before the load stretch the program so that branches
    /// need trampolines.
    Cmp {
        size: Size,
        off: u32,
        cmp: Cmp,
        value: u32,
        mask: u32,
        pad: usize,
    },
    Rel(Cmp, Arith, Arith),
    True,
    False,
    Not(Box<Tree>),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
}

/// The comparison, written out independently of the crate's own `Cmp::eval`.
fn holds(cmp: Cmp, a: u32, v: u32) -> bool {
    match cmp {
        Cmp::Eq => a == v,
        Cmp::Ne => a != v,
        Cmp::Gt => a > v,
        Cmp::Ge => a >= v,
        Cmp::Lt => a < v,
        Cmp::Le => a <= v,
        Cmp::Set => a & v != 0,
        Cmp::Clear => a & v == 0,
    }
}

/// The ALU operation, independently of `AluOp::eval` (`None`: division by zero aborts).
fn alu(op: AluOp, a: u32, b: u32) -> Option<u32> {
    Some(match op {
        AluOp::Add => a.wrapping_add(b),
        AluOp::Sub => a.wrapping_sub(b),
        AluOp::Mul => a.wrapping_mul(b),
        AluOp::Div => a.checked_div(b)?,
        AluOp::Mod => a.checked_rem(b)?,
        AluOp::And => a & b,
        AluOp::Or => a | b,
        AluOp::Xor => a ^ b,
        AluOp::Lsh => {
            if b >= 32 {
                0
            } else {
                a << b
            }
        }
        AluOp::Rsh => {
            if b >= 32 {
                0
            } else {
                a >> b
            }
        }
    })
}

/// A run-time abort: an out-of-bounds load or a division by zero ends the program with 0.
struct Abort;

fn load(pkt: &[u8], off: u32, size: Size) -> Result<u32, Abort> {
    let off = off as usize;
    let n = size.bytes() as usize;
    let bytes = pkt.get(off..off.checked_add(n).ok_or(Abort)?).ok_or(Abort)?;
    Ok(bytes.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)))
}

fn eval_arith(a: &Arith, pkt: &[u8], wire: u32) -> Result<u32, Abort> {
    Ok(match a {
        Arith::Imm(k) => *k,
        Arith::Len => wire,
        Arith::Pkt(i, size) => {
            let i = eval_arith(i, pkt, wire)?;
            // `ld [x + 0]`: the offset is X + 0, checked for overflow like libpcap.
            load(pkt, i, *size)?
        }
        Arith::Op(op, x, y) => {
            let (x, y) = (eval_arith(x, pkt, wire)?, eval_arith(y, pkt, wire)?);
            alu(*op, x, y).ok_or(Abort)?
        }
        Arith::Neg(x) => eval_arith(x, pkt, wire)?.wrapping_neg(),
    })
}

fn eval(t: &Tree, pkt: &[u8], wire: u32) -> Result<bool, Abort> {
    Ok(match t {
        Tree::Cmp { size, off, cmp, value, mask, .. } => {
            holds(*cmp, load(pkt, *off, *size)? & mask, *value)
        }
        Tree::Rel(cmp, a, b) => {
            let (a, b) = (eval_arith(a, pkt, wire)?, eval_arith(b, pkt, wire)?);
            match cmp {
                // `sub x; jeq #0`
                Cmp::Eq | Cmp::Ne => holds(*cmp, a.wrapping_sub(b), 0),
                _ => holds(*cmp, a, b),
            }
        }
        Tree::True => true,
        Tree::False => false,
        Tree::Not(p) => !eval(p, pkt, wire)?,
        Tree::And(p, q) => eval(p, pkt, wire)? && eval(q, pkt, wire)?,
        Tree::Or(p, q) => eval(p, pkt, wire)? || eval(q, pkt, wire)?,
    })
}

fn build_arith(b: &mut Builder, a: &Arith) -> Result<Value, BuildError> {
    match a {
        Arith::Imm(k) => b.imm(*k),
        Arith::Len => b.len(),
        Arith::Pkt(i, size) => {
            let i = build_arith(b, i)?;
            b.load(i, &[], 0, *size, None)
        }
        Arith::Op(op, x, y) => {
            let x = build_arith(b, x)?;
            let y = build_arith(b, y)?;
            b.arith(*op, x, y)
        }
        Arith::Neg(x) => {
            let x = build_arith(b, x)?;
            Ok(b.neg(x))
        }
    }
}

fn build(b: &mut Builder, t: &Tree) -> Result<Pred, BuildError> {
    Ok(match t {
        Tree::Cmp { size, off, cmp, value, mask, pad } => {
            let mut stmts = vec![Stmt::Ld(Src::Imm(0)); *pad];
            stmts.push(Stmt::Ld(Src::Abs(*size, *off)));
            b.cmp(Load::Stmts(stmts), *cmp, *value, *mask)
        }
        Tree::Rel(cmp, x, y) => {
            let x = build_arith(b, x)?;
            let y = build_arith(b, y)?;
            b.relation(*cmp, x, y)
        }
        Tree::True => b.always(),
        Tree::False => b.never(),
        Tree::Not(p) => !build(b, p)?,
        Tree::And(p, q) => {
            let p = build(b, p)?;
            let q = build(b, q)?;
            b.and(p, q)
        }
        Tree::Or(p, q) => {
            let p = build(b, p)?;
            let q = build(b, q)?;
            b.or(p, q)
        }
    })
}

fn interesting_u32() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..4, Just(0x80), Just(0xff), Just(0xffff), Just(u32::MAX), any::<u32>()]
}

fn size() -> impl Strategy<Value = Size> {
    prop_oneof![Just(Size::B), Just(Size::H), Just(Size::W)]
}

fn cmp_op() -> impl Strategy<Value = Cmp> {
    prop_oneof![
        Just(Cmp::Eq),
        Just(Cmp::Ne),
        Just(Cmp::Gt),
        Just(Cmp::Ge),
        Just(Cmp::Lt),
        Just(Cmp::Le),
        Just(Cmp::Set),
        Just(Cmp::Clear),
    ]
}

fn alu_op() -> impl Strategy<Value = AluOp> {
    prop_oneof![
        Just(AluOp::Add),
        Just(AluOp::Sub),
        Just(AluOp::Mul),
        Just(AluOp::Div),
        Just(AluOp::Mod),
        Just(AluOp::And),
        Just(AluOp::Or),
        Just(AluOp::Xor),
        Just(AluOp::Lsh),
        Just(AluOp::Rsh),
    ]
}

fn arith() -> impl Strategy<Value = Arith> {
    let leaf = prop_oneof![interesting_u32().prop_map(Arith::Imm), Just(Arith::Len)];
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            ((0u32..14).prop_map(Arith::Imm), size()).prop_map(|(i, s)| Arith::Pkt(Box::new(i), s)),
            (inner.clone(), size()).prop_map(|(i, s)| Arith::Pkt(Box::new(i), s)),
            (alu_op(), inner.clone(), inner.clone()).prop_map(|(op, x, y)| Arith::Op(
                op,
                Box::new(x),
                Box::new(y)
            )),
            inner.prop_map(|x| Arith::Neg(Box::new(x))),
        ]
    })
}

fn tree() -> impl Strategy<Value = Tree> {
    let pad = prop_oneof![8 => Just(0usize), 1 => 0usize..300];
    let cmp = (size(), 0u32..14, cmp_op(), interesting_u32(), interesting_u32(), pad).prop_map(
        |(size, off, cmp, value, mask, pad)| Tree::Cmp { size, off, cmp, value, mask, pad },
    );
    let leaf = prop_oneof![
        8 => cmp,
        2 => (cmp_op(), arith(), arith()).prop_map(|(c, a, b)| Tree::Rel(c, a, b)),
        1 => Just(Tree::True),
        1 => Just(Tree::False),
    ];
    leaf.prop_recursive(6, 48, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|p| Tree::Not(Box::new(p))),
            (inner.clone(), inner.clone()).prop_map(|(p, q)| Tree::And(Box::new(p), Box::new(q))),
            (inner.clone(), inner).prop_map(|(p, q)| Tree::Or(Box::new(p), Box::new(q))),
        ]
    })
}

fn packet() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(prop_oneof![0u8..4, Just(0x80), Just(0xff), any::<u8>()], 0..18)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn emitted_program_agrees_with_tree(t in tree(), pkts in proptest::collection::vec(packet(), 1..8), extra in 0u32..4) {
        let mut b = Builder::new();
        let p = match build(&mut b, &t) {
            Ok(p) => p,
            // Constant division by zero or more than 16 live values: refused at compile time.
            Err(BuildError::DivisionByZero | BuildError::ModulusByZero | BuildError::TooManyRegisters) => return Ok(()),
            Err(e) => panic!("{e}"),
        };
        let cfg = b.finish(p, 1);
        crate::common::check_dominators(&cfg);
        let (prog, stats) = sift_compile::emit::emit_with_stats(&cfg).unwrap();
        // Lifting and re-emitting is the identity (trampolines included).
        let again = sift_compile::emit::emit(&sift_compile::lift::lift(&prog).unwrap()).unwrap();
        prop_assert_eq!(&again, &prog);
        if stats.trampolines > 0 {
            prop_assert!(prog.iter().any(|i| i.code == sift_insn::code::BPF_JMP | sift_insn::code::BPF_JA));
        }
        let v = sift_verify::validate(&prog, sift_verify::Mode::Libpcap)
            .unwrap_or_else(|e| panic!("{e}\n{}", sift_insn::text::listing(&prog)));
        if prog.len() <= sift_insn::code::BPF_MAXINSNS {
            // Scratch words are stored before they are loaded on every path, so the kernel's
            // checker accepts what the builder makes.
            prop_assert!(sift_verify::validate(&prog, sift_verify::Mode::Linux).is_ok());
        }
        let vm = sift_vm::Interpreter::new(&v);
        for pkt in &pkts {
            let wire = pkt.len() as u32 + extra;
            let want = match eval(&t, pkt, wire) { Ok(true) => 1, Ok(false) | Err(Abort) => 0 };
            prop_assert_eq!(vm.run(pkt, wire), want, "packet {:02x?}\n{}", pkt, sift_compile::print::text(&cfg));
        }
    }
}
