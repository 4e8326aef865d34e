//! CSPF as a target of sift's code generator: the generator (`sift_compile::gen`, after
//! libpcap's gencode) decides what every primitive means, and this module builds it as a
//! predicate tree over *field tests* (the leaves), in exactly the order and with exactly the
//! loads the classic BPF program evaluates them: `and`/`or` are left-to-right short-circuit,
//! and a leaf is one BPF comparison (`ld`, optional `and #mask`, `jeq`/`jgt`/`jge`/`jset`).
//! The CSPF code generator ([`crate::codegen`]) needs that order to give the same verdict as
//! the BPF program on packets too short for some of the fields.
//!
//! Only what CSPF can express is built: fields at fixed offsets, or (with the indirect-push
//! extension) right after a variable-length IPv4 header, compared with constants, and
//! relations between such a field (optionally `& constant`) and a constant. Everything else
//! (the packet length, arithmetic on packet data, computed offsets, loops, tunnels) is a typed
//! refusal ([`CompileErrorKind::TargetLimit`]) saying why; so is a link type whose header
//! length varies ([`SUPPORTED`]).

use sift_compile::build::Cmp as GenCmp;
use sift_compile::error::Need;
use sift_compile::r#gen::{self as generator, Extension, Gen, Link, Loc, Target};
use sift_compile::ir::Size;
use sift_compile::{CompileError, CompileErrorKind};
use sift_filter::Resolver;
use sift_filter::ast::{ArithOp, Expr, Proto};
use sift_wire::LinkType;

/// Where a field is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Base {
    /// `off` bytes from the start of the packet.
    Fixed,
    /// `off` bytes after the IPv4 header whose first byte is at `nl` (`4 * (pkt[nl] & 0xf)`
    /// bytes long): BPF's `ldx 4*([nl]&0xf); ld [x + nl + off]`.
    AfterIpv4 {
        /// Offset of the IPv4 header.
        nl: u32,
    },
}

/// A packet field: `size` (1, 2 or 4) bytes at `off` from `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Field {
    pub base: Base,
    pub off: u32,
    pub size: u32,
}

impl Field {
    /// One past the last byte, relative to the base.
    pub fn end(self) -> u32 {
        self.off.saturating_add(self.size)
    }
}

/// A leaf comparison: `(field & mask) CMP value` (`Set`: `(field & mask) & value != 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cmp {
    Eq,
    Gt,
    Ge,
    Set,
}

/// One field test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Leaf {
    pub field: Field,
    pub mask: u32,
    pub cmp: Cmp,
    pub value: u32,
}

/// A predicate tree; `And`/`Or` evaluate their operands left to right with short circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tree {
    Const(bool),
    Leaf(Leaf),
    Not(Box<Tree>),
    And(Vec<Tree>),
    Or(Vec<Tree>),
}

fn and(a: Tree, b: Tree) -> Tree {
    match (a, b) {
        (Tree::And(mut xs), Tree::And(ys)) => {
            xs.extend(ys);
            Tree::And(xs)
        }
        (Tree::And(mut xs), y) => {
            xs.push(y);
            Tree::And(xs)
        }
        (x, Tree::And(mut ys)) => {
            ys.insert(0, x);
            Tree::And(ys)
        }
        (x, y) => Tree::And(vec![x, y]),
    }
}

fn or(a: Tree, b: Tree) -> Tree {
    match (a, b) {
        (Tree::Or(mut xs), Tree::Or(ys)) => {
            xs.extend(ys);
            Tree::Or(xs)
        }
        (Tree::Or(mut xs), y) => {
            xs.push(y);
            Tree::Or(xs)
        }
        (x, Tree::Or(mut ys)) => {
            ys.insert(0, x);
            Tree::Or(ys)
        }
        (x, y) => Tree::Or(vec![x, y]),
    }
}

fn not(a: Tree) -> Tree {
    match a {
        Tree::Not(x) => *x,
        x => Tree::Not(Box::new(x)),
    }
}

impl Tree {
    /// Calls `f` on every leaf.
    pub fn for_each_leaf(&self, f: &mut dyn FnMut(&Leaf)) {
        match self {
            Tree::Const(_) => {}
            Tree::Leaf(l) => f(l),
            Tree::Not(x) => x.for_each_leaf(f),
            Tree::And(xs) | Tree::Or(xs) => xs.iter().for_each(|x| x.for_each_leaf(f)),
        }
    }
}

/// The link types the CSPF compiler supports: those whose link-layer header has a fixed
/// length the generator's link model knows (CSPF reads only fixed offsets).
pub const SUPPORTED: &[LinkType] = &[
    LinkType::EN10MB,
    LinkType::LINUX_SLL,
    LinkType::RAW,
    LinkType::IPV4,
    LinkType::IPV6,
    LinkType::NULL,
    LinkType::LOOP,
];

type R<T> = Result<T, CompileError>;

/// The name CSPF's refusals give.
const TARGET: &str = "CSPF";

/// A refusal: what CSPF cannot do, and why.
fn cannot(need: Need, because: &'static str) -> CompileError {
    CompileError::new(
        CompileErrorKind::TargetLimit { target: TARGET, need, because, option: None },
        None,
    )
}

/// The refusal of a field after a variable-length IPv4 header without the extension.
fn needs_indirect() -> CompileError {
    CompileError::new(
        CompileErrorKind::TargetLimit {
            target: TARGET,
            need: Need::AfterIpv4,
            because: "the header's length varies and CSPF reads only fixed offsets",
            option: Some(INDIRECT_OPTION),
        },
        None,
    )
}

/// The option that provides fields after the IPv4 header.
pub(crate) const INDIRECT_OPTION: &str = "the indirect-push extension: --cspf-indirect";

/// Builds the tree for `expr` on `link`.
pub(crate) fn build(
    expr: &Expr,
    link: LinkType,
    indirect: bool,
    savefile: Option<sift_compile::pipeline::ByteOrder>,
    resolver: &dyn Resolver,
) -> R<Tree> {
    if !SUPPORTED.contains(&link) {
        return Err(CompileError::new(
            CompileErrorKind::TargetLinkType {
                target: TARGET,
                link,
                supported: SUPPORTED,
                kind: "fixed-length link headers",
            },
            None,
        ));
    }
    let mut g = Gen::new(Cspf { indirect }, link, None, false, resolver)?.with_savefile(savefile);
    g.expr(expr)
}

/// The CSPF target: trees of field tests.
pub(crate) struct Cspf {
    /// Whether the indirect-push extension may be used (fields after the IPv4 header).
    indirect: bool,
}

/// An operand of a relation: a constant, or a packet field (optionally masked) with the
/// protocol check its load needs.
pub(crate) enum Operand {
    Const(u32),
    Field { field: Field, guard: Option<Tree>, mask: u32 },
}

fn bytes(size: Size) -> u32 {
    match size {
        Size::B => 1,
        Size::H => 2,
        Size::W => 4,
    }
}

impl Cspf {
    /// The field `size` bytes at `loc` plus `index`.
    fn field(&self, loc: Loc, index: u32, size: Size) -> R<Field> {
        let size = bytes(size);
        match loc {
            Loc::Abs(off) => Ok(Field { base: Base::Fixed, off: off.saturating_add(index), size }),
            Loc::AfterIpv4 { hdr, off } => {
                if !self.indirect {
                    return Err(needs_indirect());
                }
                let off = off.wrapping_sub(hdr).saturating_add(index);
                Ok(Field { base: Base::AfterIpv4 { nl: hdr }, off, size })
            }
        }
    }
}

/// `(field & mask) cmp value` as a leaf (negated where the comparison is a negation).
fn leaf(field: Field, cmp: GenCmp, value: u32, mask: u32) -> Tree {
    let t = |cmp| Tree::Leaf(Leaf { field, mask, cmp, value });
    match cmp {
        GenCmp::Eq => t(Cmp::Eq),
        GenCmp::Ne => not(t(Cmp::Eq)),
        GenCmp::Gt => t(Cmp::Gt),
        GenCmp::Ge => t(Cmp::Ge),
        GenCmp::Lt => not(t(Cmp::Ge)),
        GenCmp::Le => not(t(Cmp::Gt)),
        GenCmp::Set => t(Cmp::Set),
        GenCmp::Clear => not(t(Cmp::Set)),
    }
}

const NO_ARITHMETIC: &str = "it has no arithmetic on packet data (a relation must be a field, \
                             optionally `& constant`, against a constant)";

impl Target for Cspf {
    type Pred = Tree;
    type Value = Operand;

    fn test(
        &mut self,
        link: &Link,
        field: generator::Field,
        cmp: GenCmp,
        value: u32,
        mask: u32,
    ) -> R<Tree> {
        let Some(loc) = link.resolve(field.base, field.off) else {
            return Err(cannot(Need::RuntimeOffset, "it reads only fixed offsets"));
        };
        Ok(leaf(self.field(loc, 0, field.size)?, cmp, value, mask))
    }

    fn and(&mut self, p: Tree, q: Tree) -> Tree {
        and(p, q)
    }

    fn or(&mut self, p: Tree, q: Tree) -> Tree {
        or(p, q)
    }

    fn not(&mut self, p: Tree) -> Tree {
        not(p)
    }

    fn always(&mut self) -> Tree {
        Tree::Const(true)
    }

    fn never(&mut self) -> Tree {
        Tree::Const(false)
    }

    fn len_test(&mut self, _: GenCmp, _: u32) -> R<Tree> {
        Err(cannot(Need::PacketLength, "its only operands are packet words and constants"))
    }

    fn imm(&mut self, k: u32) -> R<Operand> {
        Ok(Operand::Const(k))
    }

    fn wire_len(&mut self) -> R<Operand> {
        Err(cannot(Need::PacketLength, "its only operands are packet words and constants"))
    }

    fn load(&mut self, index: Operand, at: Loc, size: Size, guard: Option<Tree>) -> R<Operand> {
        let Operand::Const(k) = index else {
            return Err(cannot(Need::ComputedIndex, "it reads only fixed offsets"));
        };
        Ok(Operand::Field { field: self.field(at, k, size)?, guard, mask: u32::MAX })
    }

    fn take_guard(&mut self, v: &mut Operand) -> Option<Tree> {
        match v {
            Operand::Const(_) => None,
            Operand::Field { guard, .. } => guard.take(),
        }
    }

    fn arith(&mut self, op: ArithOp, a: Operand, b: Operand) -> R<Operand> {
        use sift_compile::error::ArithError;
        let arith_error = |e| CompileError::new(CompileErrorKind::Arithmetic(e), None);
        match (op, a, b) {
            (ArithOp::And, Operand::Field { field, guard, mask }, Operand::Const(m))
            | (ArithOp::And, Operand::Const(m), Operand::Field { field, guard, mask }) => {
                Ok(Operand::Field { field, guard, mask: mask & m })
            }
            (op, Operand::Const(x), Operand::Const(y)) => Ok(Operand::Const(match op {
                ArithOp::Add => x.wrapping_add(y),
                ArithOp::Sub => x.wrapping_sub(y),
                ArithOp::Mul => x.wrapping_mul(y),
                ArithOp::Div if y != 0 => x / y,
                ArithOp::Mod if y != 0 => x % y,
                ArithOp::Div => return Err(arith_error(ArithError::DivisionByZero)),
                ArithOp::Mod => return Err(arith_error(ArithError::ModulusByZero)),
                ArithOp::And => x & y,
                ArithOp::Or => x | y,
                ArithOp::Xor => x ^ y,
                ArithOp::Shl if y <= 31 => x << y,
                ArithOp::Shr if y <= 31 => x >> y,
                ArithOp::Shl | ArithOp::Shr => {
                    return Err(arith_error(ArithError::ShiftTooLarge));
                }
            })),
            _ => Err(cannot(Need::Arithmetic, NO_ARITHMETIC)),
        }
    }

    fn neg(&mut self, a: Operand) -> R<Operand> {
        match a {
            Operand::Const(v) => Ok(Operand::Const(v.wrapping_neg())),
            Operand::Field { .. } => Err(cannot(Need::Arithmetic, NO_ARITHMETIC)),
        }
    }

    fn relation(&mut self, cmp: GenCmp, a: Operand, b: Operand) -> R<Tree> {
        let (field, guard, mask, k, cmp) = match (a, b) {
            (Operand::Const(x), Operand::Const(y)) => return Ok(Tree::Const(cmp.eval(x, y))),
            (Operand::Field { field, guard, mask }, Operand::Const(k)) => {
                (field, guard, mask, k, cmp)
            }
            (Operand::Const(k), Operand::Field { field, guard, mask }) => {
                let flipped = match cmp {
                    GenCmp::Gt => GenCmp::Lt,
                    GenCmp::Ge => GenCmp::Le,
                    GenCmp::Lt => GenCmp::Gt,
                    GenCmp::Le => GenCmp::Ge,
                    c => c,
                };
                (field, guard, mask, k, flipped)
            }
            (Operand::Field { .. }, Operand::Field { .. }) => {
                return Err(cannot(
                    Need::FieldComparison,
                    "a relation must be a field, optionally `& constant`, against a constant",
                ));
            }
        };
        let p = leaf(field, cmp, k, mask);
        Ok(match guard {
            Some(g) => and(g, p),
            None => p,
        })
    }

    fn extension(_: &mut Gen<'_, Cspf>, ext: Extension) -> R<Tree> {
        Err(match ext {
            Extension::Protochain { .. } => {
                cannot(Need::Loop, "it needs a loop over IPv6 extension headers")
            }
            Extension::Tunnel { .. } => cannot(
                Need::Tunnel,
                "the inner headers sit after a UDP header whose offset varies, and after a \
                 tunnel header of variable length",
            ),
            Extension::VlanMetadata { .. } => cannot(Need::Metadata, "it reads only packet words"),
            Extension::ByteAccumulator { .. } => {
                cannot(Need::Accumulator, "libpcap tests an unloaded accumulator there")
            }
            _ => cannot(Need::RuntimeOffset, "it reads only fixed offsets"),
        })
    }

    fn index_load_var(_: &mut Gen<'_, Cspf>, _: Proto, _: Operand, _: Size) -> R<Operand> {
        Err(cannot(Need::RuntimeOffset, "it reads only fixed offsets"))
    }
}
