//! Fields: the packet values a filter's branches compare, as functions of the packet alone.
//!
//! **Why it exists.** Filters written separately test the same places (`ld [26]` for an IPv4
//! source, `ldh [x + 14]` for a TCP port after `ldxb 4*([14]&0xf)`): to share those loads and
//! merge the comparisons, a branch's accumulator must be known as a function of the packet that
//! does not depend on the path taken to it. [`Sym`] is that knowledge, propagated through a
//! filter's graph by [`super::anchor`]; [`Field::eval`] computes a field exactly as sift's
//! classic engines load it (the same bounds, big-endian, `None` where they would end the run
//! with 0), so a value read here is the value the filter compared.

use crate::ir::{AluOp, Operand, Size, Slot, Src, Stmt, XSrc};

/// Where a field's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Base {
    /// `P[k:size]`.
    Abs(Size, u32),
    /// `P[4*(P[msh]&0xf) + k : size]`: after `ldxb 4*([msh]&0xf)`.
    Ind {
        /// The width.
        size: Size,
        /// The offset added to the header length.
        k: u32,
        /// Where the header-length byte is.
        msh: u32,
    },
    /// The wire length.
    Len,
}

/// A field: a base loaded and masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Field {
    /// What is loaded.
    pub base: Base,
    /// Which bits are kept.
    pub mask: u32,
}

impl Field {
    /// The whole value at `base`.
    pub fn whole(base: Base) -> Field {
        Field { base, mask: u32::MAX }
    }

    /// How many bits the field can vary in.
    pub fn bits(&self) -> u32 {
        let width = match self.base {
            Base::Abs(s, _) | Base::Ind { size: s, .. } => s.bytes() * 8,
            Base::Len => 32,
        };
        let wmask = if width == 32 { u32::MAX } else { (1 << width) - 1 };
        (self.mask & wmask).count_ones()
    }

    /// The field's value in a packet of `pkt` captured bytes and `wire_len` on the wire;
    /// `None` where a classic engine's load would end the run with 0.
    #[inline(always)]
    pub fn eval(&self, pkt: &[u8], wire_len: u32) -> Option<u32> {
        let raw = match self.base {
            Base::Abs(size, k) => load(pkt, k as usize, size)?,
            Base::Ind { size, k, msh } => {
                let x = 4 * u32::from(*pkt.get(msh as usize)? & 0xf);
                load(pkt, x as usize + k as usize, size)?
            }
            Base::Len => wire_len,
        };
        Some(raw & self.mask)
    }
}

#[inline]
fn load(pkt: &[u8], at: usize, size: Size) -> Option<u32> {
    Some(match size {
        Size::B => u32::from(*pkt.get(at)?),
        Size::H => {
            let b = pkt.get(at..at.checked_add(2)?)?;
            u32::from(u16::from_be_bytes([b[0], b[1]]))
        }
        Size::W => {
            let b = pkt.get(at..at.checked_add(4)?)?;
            u32::from_be_bytes([b[0], b[1], b[2], b[3]])
        }
    })
}

impl std::fmt::Display for Field {
    /// As classic BPF loads it: `ldh [12]`, `ld [26] & 0xffff0000`, `ldh [4*([14]&0xf) + 16]`,
    /// `len`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |s: Size| match s {
            Size::W => "ld",
            Size::H => "ldh",
            Size::B => "ldb",
        };
        let full = match self.base {
            Base::Abs(s, k) => {
                write!(f, "{} [{k}]", name(s))?;
                s.bytes()
            }
            Base::Ind { size, k, msh } => {
                write!(f, "{} [4*([{msh}]&0xf) + {k}]", name(size))?;
                size.bytes()
            }
            Base::Len => {
                write!(f, "len")?;
                4
            }
        };
        let wmask = if full == 4 { u32::MAX } else { (1u32 << (8 * full)) - 1 };
        if self.mask & wmask != wmask {
            write!(f, " & {:#x}", self.mask & wmask)?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Cond {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {:#x}", self.field, if self.eq { "==" } else { "!=" }, self.value)
    }
}

/// A condition on a field: `field == value` or `field != value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cond {
    /// The field.
    pub field: Field,
    /// `==` (true) or `!=`.
    pub eq: bool,
    /// The value (within the field's mask).
    pub value: u32,
}

impl Cond {
    /// Whether the packet meets the condition (`false` where the field cannot be loaded).
    #[inline]
    pub fn holds(&self, pkt: &[u8], wire_len: u32) -> bool {
        self.field.eval(pkt, wire_len).is_some_and(|v| (v == self.value) == self.eq)
    }
}

/// What is known about a register at some point of a filter, on every path to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sym {
    /// Nothing useful (or different on different paths).
    Unknown,
    /// A constant.
    Const(u32),
    /// A field of the packet.
    Field(Field),
    /// `4*(P[k]&0xf)` (X after `ldxb`).
    Msh(u32),
}

impl Sym {
    /// The value both paths agree on.
    pub fn meet(self, other: Sym) -> Sym {
        if self == other { self } else { Sym::Unknown }
    }
}

/// The registers of classic BPF, symbolically.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Regs {
    /// The accumulator.
    pub a: Sym,
    /// The index register.
    pub x: Sym,
    /// The scratch words.
    pub m: [Sym; Slot::COUNT],
}

impl Regs {
    /// At a program's start: A and X are 0, scratch words unknown.
    pub fn entry() -> Regs {
        Regs { a: Sym::Const(0), x: Sym::Const(0), m: [Sym::Unknown; Slot::COUNT] }
    }

    /// What both states agree on.
    pub fn meet(&self, other: &Regs) -> Regs {
        let mut m = self.m;
        for (a, b) in m.iter_mut().zip(other.m) {
            *a = a.meet(b);
        }
        Regs { a: self.a.meet(other.a), x: self.x.meet(other.x), m }
    }

    /// Runs one statement.
    pub fn step(&mut self, stmt: &Stmt) {
        match *stmt {
            Stmt::Ld(src) => {
                self.a = match src {
                    Src::Abs(size, k) => Sym::Field(Field::whole(Base::Abs(size, k))),
                    Src::Ind(size, k) => match self.x {
                        Sym::Msh(msh) => Sym::Field(Field::whole(Base::Ind { size, k, msh })),
                        Sym::Const(c) => match c.checked_add(k) {
                            Some(at) => Sym::Field(Field::whole(Base::Abs(size, at))),
                            None => Sym::Unknown,
                        },
                        _ => Sym::Unknown,
                    },
                    Src::Len => Sym::Field(Field::whole(Base::Len)),
                    Src::Imm(k) => Sym::Const(k),
                    Src::Mem(m) => self.m[m.index()],
                }
            }
            Stmt::Ldx(src) => {
                self.x = match src {
                    XSrc::Imm(k) => Sym::Const(k),
                    XSrc::Len => Sym::Field(Field::whole(Base::Len)),
                    XSrc::Mem(m) => self.m[m.index()],
                    XSrc::Msh(k) => Sym::Msh(k),
                }
            }
            Stmt::St(m) => self.m[m.index()] = self.a,
            Stmt::Stx(m) => self.m[m.index()] = self.x,
            Stmt::Alu(AluOp::And, Operand::K(k)) => {
                self.a = match self.a {
                    Sym::Field(f) => Sym::Field(Field { mask: f.mask & k, ..f }),
                    Sym::Const(c) => Sym::Const(c & k),
                    _ => Sym::Unknown,
                }
            }
            Stmt::Alu(op, Operand::K(k)) => {
                self.a = match self.a {
                    Sym::Const(c) => Sym::Const(op.eval(c, k)),
                    _ => Sym::Unknown,
                }
            }
            Stmt::Alu(..) | Stmt::Neg => self.a = Sym::Unknown,
            Stmt::Tax => self.x = self.a,
            Stmt::Txa => self.a = self.x,
            Stmt::Walk(_) => {
                self.a = Sym::Unknown;
                self.x = Sym::Unknown;
                let defs = stmt.defs();
                for (i, m) in self.m.iter_mut().enumerate() {
                    if defs.contains(crate::ir::RegSet(1 << i)) {
                        *m = Sym::Unknown;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_load_as_the_interpreter_does() {
        let pkt: Vec<u8> = (0u8..40).collect();
        let f = |base, mask| Field { base, mask };
        assert_eq!(f(Base::Abs(Size::W, 0), u32::MAX).eval(&pkt, 99), Some(0x0001_0203));
        assert_eq!(f(Base::Abs(Size::H, 38), 0xff).eval(&pkt, 99), Some(0x27));
        assert_eq!(f(Base::Abs(Size::H, 39), u32::MAX).eval(&pkt, 99), None);
        assert_eq!(f(Base::Abs(Size::B, u32::MAX), u32::MAX).eval(&pkt, 99), None);
        // P[14] = 14: header length 4*14 = 56, beyond the packet.
        let ind = |k| f(Base::Ind { size: Size::B, k, msh: 1 }, u32::MAX);
        // P[1] = 1: header length 4.
        assert_eq!(ind(10).eval(&pkt, 99), Some(14));
        assert_eq!(ind(36).eval(&pkt, 99), None);
        assert_eq!(ind(u32::MAX).eval(&pkt, 99), None);
        assert_eq!(f(Base::Len, 0xff).eval(&pkt, 0x1234), Some(0x34));
        assert_eq!(f(Base::Abs(Size::H, 0), 0xffff).bits(), 16);
        assert_eq!(f(Base::Abs(Size::H, 0), 0xffff_0fff).bits(), 12);
    }
}
