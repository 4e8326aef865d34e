//! eBPF in the conformance suite's assembly syntax (`mov32 %r0, 0`, `ldxw %r0, [%r1+4]`,
//! `lock fetch add [%r10-8], %r1`, `jne %r0, %r1, label`, `call local func`): an assembler
//! with labels and located errors ([`assemble`], [`AsmError`]) and the printer back
//! ([`print()`]), so that test programs are written, read and round-tripped in one notation.
//!
//! The syntax is upstream `bpf_conformance`'s (and ubpf's): one instruction per line, `#`
//! starts a comment, `name:` defines a label, a jump or `call local` target is a label or
//! `+N`/`-N`, and the first `exit` is also the label `exit`. sift adds spellings for what that
//! assembler lacks: `ja32 TARGET` (gotol), `ldabs{b,h,w} IMM`, `ldind{b,h,w} %rN, IMM`,
//! `call runtime N` (a kernel function by BTF id), `call %rN` (callx) and the pseudo `lddw`
//! forms `lddw %r1, map_fd(3)` / `map_value(3, 16)` / `btf_id(7)` / `func(+4)` / `map_idx(0)` /
//! `map_idx_value(0, 8)`.

use std::collections::HashMap;
use std::fmt::Write as _;

use thiserror::Error;

use crate::insn::Reg;
use crate::isa::{
    AluOp, AtomicOp, ByteOrder, CallTarget, Cond, ImmKind, Insn, Located, Operand, Size, Width,
};

/// A located assembly error: 1-based line and column, and what is wrong (in upstream's
/// wording where it has one: "Invalid mnemonic: ldxq", "Invalid register: %r50", …).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{line}:{column}: {message}")]
pub struct AsmError {
    /// Line, from 1.
    pub line: usize,
    /// Column (in characters), from 1.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// One token of a line with the column it starts at.
#[derive(Clone, Copy)]
struct Tok<'a> {
    text: &'a str,
    col: usize,
}

struct Line<'a> {
    no: usize,
    mnemonic: Tok<'a>,
    operands: Vec<Tok<'a>>,
}

impl Line<'_> {
    fn err(&self, col: usize, message: impl Into<String>) -> AsmError {
        AsmError { line: self.no, column: col, message: message.into() }
    }
}

/// Splits `text` (from column `base`) on commas outside brackets and parentheses, trimming.
fn split_operands<'a>(text: &'a str, base: usize) -> Vec<Tok<'a>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let push = |out: &mut Vec<Tok<'a>>, s: usize, e: usize| {
        let piece = &text[s..e];
        let trimmed = piece.trim_start();
        let lead = piece.len() - trimmed.len();
        let trimmed = trimmed.trim_end();
        if !trimmed.is_empty() {
            out.push(Tok { text: trimmed, col: base + text[..s + lead].chars().count() });
        }
    };
    for (i, ch) in text.char_indices() {
        match ch {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                push(&mut out, start, i);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&mut out, start, text.len());
    out
}

fn parse_int(t: &str) -> Option<i128> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if h.is_empty() || h.len() > 20 {
            return None;
        }
        i128::from_str_radix(h, 16).ok()?
    } else {
        if body.is_empty() || body.len() > 25 || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

fn is_hex(t: &str) -> bool {
    t.trim_start_matches(['-', '+']).starts_with("0x")
}

/// What a jump or local call's target operand names.
#[derive(Clone, Debug)]
enum Target {
    Rel(i64),
    Label(String, usize, usize),
}

struct Pending {
    /// Index in `insns`.
    at: usize,
    label: String,
    line: usize,
    col: usize,
}

struct Asm<'a> {
    line: &'a Line<'a>,
}

impl Asm<'_> {
    fn reg(&self, t: Tok<'_>) -> Result<Reg, AsmError> {
        let bad = || self.line.err(t.col, format!("Invalid register: {}", t.text));
        let n = t.text.strip_prefix("%r").or_else(|| t.text.strip_prefix('r')).ok_or_else(bad)?;
        match n.parse::<u8>() {
            Ok(r) if r <= 15 && (n == "0" || !n.starts_with('0')) => Ok(r),
            _ => Err(bad()),
        }
    }

    fn imm32(&self, t: Tok<'_>) -> Result<i32, AsmError> {
        let v = parse_int(t.text)
            .ok_or_else(|| self.line.err(t.col, format!("Invalid immediate: {}", t.text)))?;
        // Decimal must fit a signed 32-bit value; hex may also be written as its unsigned bits.
        let ok = if is_hex(t.text) && v >= 0 {
            v <= i128::from(u32::MAX)
        } else {
            (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v)
        };
        if !ok {
            return Err(self.line.err(t.col, format!("Immediate out of 32-bit range: {}", t.text)));
        }
        Ok(v as i64 as i32)
    }

    fn imm64(&self, t: Tok<'_>) -> Result<u64, AsmError> {
        let v = parse_int(t.text)
            .ok_or_else(|| self.line.err(t.col, format!("Invalid immediate: {}", t.text)))?;
        if !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&v) {
            return Err(self.line.err(t.col, format!("Immediate out of 64-bit range: {}", t.text)));
        }
        Ok(v as i64 as u64)
    }

    fn off16(&self, text: &str, col: usize) -> Result<i16, AsmError> {
        let v =
            parse_int(text).ok_or_else(|| self.line.err(col, format!("Invalid offset: {text}")))?;
        if !(i128::from(i16::MIN)..=i128::from(i16::MAX)).contains(&v) {
            return Err(self.line.err(col, format!("Offset out of 16-bit range: {text}")));
        }
        Ok(v as i16)
    }

    /// `[%rN+off]`, `[%rN-off]` or `[%rN]`.
    fn mem(&self, t: Tok<'_>) -> Result<(Reg, i16), AsmError> {
        let bad =
            || self.line.err(t.col, format!("Failed to decode register and offset: {}", t.text));
        let inner = t.text.strip_prefix('[').and_then(|s| s.strip_suffix(']')).ok_or_else(bad)?;
        let split = inner.find(['+', '-']).unwrap_or(inner.len());
        let (r, o) = inner.split_at(split);
        let reg = self.reg(Tok { text: r.trim(), col: t.col + 1 })?;
        let off = if o.trim().is_empty() {
            0
        } else {
            self.off16(&o.replace(' ', ""), t.col + 1 + split)?
        };
        Ok((reg, off))
    }

    fn operand(&self, t: Tok<'_>) -> Result<Operand, AsmError> {
        if t.text.starts_with('%') {
            Ok(Operand::Reg(self.reg(t)?))
        } else {
            Ok(Operand::Imm(self.imm32(t)?))
        }
    }

    fn target(&self, t: Tok<'_>) -> Result<Target, AsmError> {
        if t.text.starts_with(['+', '-']) {
            let v = parse_int(t.text)
                .ok_or_else(|| self.line.err(t.col, format!("Invalid offset: {}", t.text)))?;
            Ok(Target::Rel(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64))
        } else if t.text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && !t.text.is_empty()
        {
            Ok(Target::Label(t.text.to_string(), self.line.no, t.col))
        } else {
            Err(self.line.err(t.col, format!("Invalid jump target: {}", t.text)))
        }
    }

    fn count(&self, n: usize) -> Result<(), AsmError> {
        if self.line.operands.len() != n {
            return Err(self.line.err(
                self.line.mnemonic.col,
                format!("Invalid number of operands for mnemonic: {}", self.line.mnemonic.text),
            ));
        }
        Ok(())
    }
}

const ALU_OPS: [(&str, AluOp); 14] = [
    ("add", AluOp::Add),
    ("sub", AluOp::Sub),
    ("mul", AluOp::Mul),
    ("div", AluOp::Div),
    ("sdiv", AluOp::SDiv),
    ("or", AluOp::Or),
    ("and", AluOp::And),
    ("lsh", AluOp::Lsh),
    ("rsh", AluOp::Rsh),
    ("mod", AluOp::Mod),
    ("smod", AluOp::SMod),
    ("xor", AluOp::Xor),
    ("mov", AluOp::Mov),
    ("arsh", AluOp::Arsh),
];

const CONDS: [(&str, Cond); 11] = [
    ("jeq", Cond::Eq),
    ("jgt", Cond::Gt),
    ("jge", Cond::Ge),
    ("jset", Cond::Set),
    ("jne", Cond::Ne),
    ("jsgt", Cond::Sgt),
    ("jsge", Cond::Sge),
    ("jlt", Cond::Lt),
    ("jle", Cond::Le),
    ("jslt", Cond::Slt),
    ("jsle", Cond::Sle),
];

const ATOMICS: [(&str, AtomicOp); 6] = [
    ("add", AtomicOp::Add),
    ("or", AtomicOp::Or),
    ("and", AtomicOp::And),
    ("xor", AtomicOp::Xor),
    ("xchg", AtomicOp::Xchg),
    ("cmpxchg", AtomicOp::Cmpxchg),
];

const SIZES: [(&str, Size); 4] = [("b", Size::B), ("h", Size::H), ("w", Size::W), ("dw", Size::DW)];

const IMM_KINDS: [(&str, ImmKind); 6] = [
    ("map_fd", ImmKind::MapFd),
    ("map_value", ImmKind::MapValue),
    ("btf_id", ImmKind::BtfId),
    ("func", ImmKind::Func),
    ("map_idx", ImmKind::MapIdx),
    ("map_idx_value", ImmKind::MapIdxValue),
];

fn size_suffix(s: &str) -> Option<Size> {
    SIZES.iter().find(|(n, _)| *n == s).map(|&(_, z)| z)
}

/// Splits a width suffix: `add32` → (`add`, 32 bits), `add64`/`add` → 64 bits.
fn width_suffix(m: &str) -> (&str, Width) {
    if let Some(b) = m.strip_suffix("32") {
        (b, Width::W32)
    } else {
        (m.strip_suffix("64").unwrap_or(m), Width::W64)
    }
}

enum Parsed {
    Insn(Insn),
    /// A jump or local call whose target is resolved after every label is known.
    Branch(Insn, Target),
}

fn parse_insn(a: &Asm<'_>) -> Result<Parsed, AsmError> {
    let l = a.line;
    let m = l.mnemonic.text;
    let ops = &l.operands;
    let invalid = || l.err(l.mnemonic.col, format!("Invalid mnemonic: {m}"));
    let insn = match m {
        "exit" => {
            a.count(0)?;
            Insn::Exit
        }
        "ja" | "ja32" => {
            a.count(1)?;
            let t = a.target(ops[0])?;
            return Ok(Parsed::Branch(Insn::Ja { off: 0, long: m == "ja32" }, t));
        }
        "call" => {
            match ops.len() {
                1 if ops[0].text.contains(char::is_whitespace) => {
                    // `call local f`: the mode and the target are one comma-free operand.
                    let t = ops[0];
                    let sp = t.text.find(char::is_whitespace).unwrap_or(0);
                    let target = t.text[sp..].trim_start();
                    let tcol = t.col + t.text.len() - target.len();
                    let mode = Tok { text: &t.text[..sp], col: t.col };
                    return parse_call_mode(a, mode, Tok { text: target, col: tcol });
                }
                1 if ops[0].text.starts_with('%') => Insn::Callx { dst: a.reg(ops[0])? },
                1 => Insn::Call(CallTarget::Helper(a.imm32(ops[0])?)),
                2 => {
                    // Upstream splits on spaces: `call local f` has the mode as its first operand.
                    return parse_call_mode(a, ops[0], ops[1]);
                }
                _ => return Err(a.count(1).unwrap_err()),
            }
        }
        "lddw" => {
            a.count(2)?;
            let dst = a.reg(ops[0])?;
            parse_lddw(a, dst, ops[1])?
        }
        "lock" => return parse_lock(a),
        "neg" | "neg32" | "neg64" => {
            a.count(1)?;
            Insn::Neg { width: width_suffix(m).1, dst: a.reg(ops[0])? }
        }
        _ => {
            if let Some((order, rest)) = m
                .strip_prefix("bswap")
                .map(|r| (ByteOrder::Swap, r))
                .or_else(|| m.strip_prefix("swap").map(|r| (ByteOrder::Swap, r)))
                .or_else(|| m.strip_prefix("be").map(|r| (ByteOrder::Be, r)))
                .or_else(|| m.strip_prefix("le").map(|r| (ByteOrder::Le, r)))
                && let Ok(bits @ (16 | 32 | 64)) = rest.parse::<u8>()
            {
                a.count(1)?;
                Insn::Endian { order, bits, dst: a.reg(ops[0])? }
            } else if let Some(rest) = m.strip_prefix("movsx") {
                let (bits, width) = match rest {
                    "832" => (8, Width::W32),
                    "1632" => (16, Width::W32),
                    "864" => (8, Width::W64),
                    "1664" => (16, Width::W64),
                    "3264" => (32, Width::W64),
                    _ => return Err(invalid()),
                };
                a.count(2)?;
                Insn::MovSx { width, bits, dst: a.reg(ops[0])?, src: a.reg(ops[1])? }
            } else if let Some(rest) = m.strip_prefix("ldxs")
                && let Some(size @ (Size::B | Size::H | Size::W)) = size_suffix(rest)
            {
                a.count(2)?;
                let (src, off) = a.mem(ops[1])?;
                Insn::LoadSx { size, dst: a.reg(ops[0])?, src, off }
            } else if let Some(size) = m.strip_prefix("ldx").and_then(size_suffix) {
                a.count(2)?;
                let (src, off) = a.mem(ops[1])?;
                Insn::Load { size, dst: a.reg(ops[0])?, src, off }
            } else if let Some(size) = m.strip_prefix("stx").and_then(size_suffix) {
                a.count(2)?;
                let (dst, off) = a.mem(ops[0])?;
                Insn::Store { size, dst, off, src: Operand::Reg(a.reg(ops[1])?) }
            } else if let Some(size) = m.strip_prefix("st").and_then(size_suffix) {
                a.count(2)?;
                let (dst, off) = a.mem(ops[0])?;
                Insn::Store { size, dst, off, src: Operand::Imm(a.imm32(ops[1])?) }
            } else if let Some(size @ (Size::B | Size::H | Size::W)) =
                m.strip_prefix("ldabs").and_then(size_suffix)
            {
                a.count(1)?;
                Insn::LdAbs { size, imm: a.imm32(ops[0])? }
            } else if let Some(size @ (Size::B | Size::H | Size::W)) =
                m.strip_prefix("ldind").and_then(size_suffix)
            {
                a.count(2)?;
                Insn::LdInd { size, src: a.reg(ops[0])?, imm: a.imm32(ops[1])? }
            } else {
                let (base, width) = width_suffix(m);
                if let Some(&(_, op)) = ALU_OPS.iter().find(|(n, _)| *n == base) {
                    a.count(2)?;
                    Insn::Alu { width, op, dst: a.reg(ops[0])?, src: a.operand(ops[1])? }
                } else if let Some(&(_, cond)) = CONDS.iter().find(|(n, _)| *n == base) {
                    a.count(3)?;
                    let dst = a.reg(ops[0])?;
                    let src = a.operand(ops[1])?;
                    let t = a.target(ops[2])?;
                    return Ok(Parsed::Branch(Insn::Jmp { width, cond, dst, src, off: 0 }, t));
                } else {
                    return Err(invalid());
                }
            }
        }
    };
    Ok(Parsed::Insn(insn))
}

fn parse_call_mode(a: &Asm<'_>, mode: Tok<'_>, target: Tok<'_>) -> Result<Parsed, AsmError> {
    Ok(match mode.text {
        "helper" => Parsed::Insn(Insn::Call(CallTarget::Helper(a.imm32(target)?))),
        "local" => Parsed::Branch(Insn::Call(CallTarget::Local(0)), a.target(target)?),
        "runtime" => {
            Parsed::Insn(Insn::Call(CallTarget::Kfunc { btf_id: a.imm32(target)?, module: 0 }))
        }
        _ => return Err(a.line.err(mode.col, "Invalid call mode")),
    })
}

fn parse_lddw(a: &Asm<'_>, dst: Reg, t: Tok<'_>) -> Result<Insn, AsmError> {
    let Some(open) = t.text.find('(') else {
        return Ok(Insn::LdImm64 { dst, kind: ImmKind::Imm, imm: a.imm64(t)? });
    };
    let name = &t.text[..open];
    let Some(&(_, kind)) = IMM_KINDS.iter().find(|(n, _)| *n == name) else {
        return Err(a.line.err(t.col, format!("Invalid lddw operand: {}", t.text)));
    };
    let Some(inner) = t.text[open + 1..].strip_suffix(')') else {
        return Err(a.line.err(t.col, format!("Invalid lddw operand: {}", t.text)));
    };
    // `name(lo)` or `name(lo, hi)`: the map value forms always carry the offset (hi).
    let args = split_operands(inner, t.col + open + 1);
    if args.is_empty() || args.len() > 2 {
        return Err(a.line.err(t.col, format!("Invalid number of arguments for {name}")));
    }
    let lo = a.imm32(args[0])? as u32;
    let hi = if args.len() == 2 { a.imm32(args[1])? as u32 } else { 0 };
    Ok(Insn::LdImm64 { dst, kind, imm: u64::from(lo) | (u64::from(hi) << 32) })
}

/// `lock [fetch] OP [%rN+off], %rM` (upstream splits on spaces, so the first operand token
/// holds `[fetch] OP [mem]`).
fn parse_lock(a: &Asm<'_>) -> Result<Parsed, AsmError> {
    let l = a.line;
    let bad = || l.err(l.mnemonic.col, "Invalid number of operands for lock");
    if l.operands.len() != 2 {
        return Err(bad());
    }
    let first = l.operands[0];
    let words: Vec<&str> = first.text.split_whitespace().collect();
    let (fetch, name, mem) = match words.as_slice() {
        ["fetch", op, mem] => (true, *op, *mem),
        [op, mem] => (false, *op, *mem),
        _ => return Err(bad()),
    };
    let (base, width) = width_suffix(name);
    let Some(&(_, op)) = ATOMICS.iter().find(|(n, _)| *n == base) else {
        return Err(l.err(first.col, format!("Invalid mnemonic: lock {name}")));
    };
    let mem_col = first.col + first.text.find(mem).unwrap_or(0);
    let (dst, off) = a.mem(Tok { text: mem, col: mem_col })?;
    let src = a.reg(l.operands[1])?;
    let fetch = fetch || matches!(op, AtomicOp::Xchg | AtomicOp::Cmpxchg);
    Ok(Parsed::Insn(Insn::Atomic { width, op, fetch, dst, src, off }))
}

/// Assembles a program; jump targets resolve to labels anywhere in the text.
pub fn assemble(text: &str) -> Result<Vec<Insn>, AsmError> {
    let mut insns: Vec<Insn> = Vec::new();
    let mut slot = 0usize;
    let mut slots_at: Vec<usize> = Vec::new();
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut pending_rel: Vec<(usize, i64, usize, usize)> = Vec::new();
    let mut exit_seen = false;
    for (no, raw) in text.lines().enumerate() {
        let no = no + 1;
        let code = raw.split('#').next().unwrap_or("");
        let mut rest = code.trim_start();
        let mut col = code.len() - rest.len() + 1;
        // Labels: `name:` (optionally followed by an instruction on the same line).
        while let Some(colon) = rest.find(':') {
            let name = &rest[..colon];
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                break;
            }
            if labels.insert(name.to_string(), slot).is_some() {
                return Err(AsmError {
                    line: no,
                    column: col,
                    message: format!("Duplicate label: {name}"),
                });
            }
            let after = &rest[colon + 1..];
            let trimmed = after.trim_start();
            col += colon + 1 + (after.len() - trimmed.len());
            rest = trimmed;
        }
        let rest = rest.trim_end();
        if rest.is_empty() {
            continue;
        }
        if rest.starts_with("--") {
            return Err(AsmError {
                line: no,
                column: col,
                message: format!("Invalid mnemonic: {rest}"),
            });
        }
        let mlen = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let mnemonic = Tok { text: &rest[..mlen], col };
        let operands = split_operands(&rest[mlen..], col + mlen);
        let line = Line { no, mnemonic, operands };
        let a = Asm { line: &line };
        if mnemonic.text == "exit" && !exit_seen {
            exit_seen = true;
            labels.entry("exit".to_string()).or_insert(slot);
        }
        let insn = match parse_insn(&a)? {
            Parsed::Insn(i) => i,
            Parsed::Branch(i, Target::Rel(off)) => {
                pending_rel.push((insns.len(), off, no, mnemonic.col));
                i
            }
            Parsed::Branch(i, Target::Label(label, line, col)) => {
                pending.push(Pending { at: insns.len(), label, line, col });
                i
            }
        };
        slots_at.push(slot);
        slot += insn.slots();
        insns.push(insn);
    }
    let set = |insn: &mut Insn, off: i64, line: usize, col: usize| -> Result<(), AsmError> {
        let range_err =
            || AsmError { line, column: col, message: format!("Jump offset out of range: {off}") };
        match insn {
            Insn::Ja { off: o, long } => {
                let lim = if *long { i64::from(i32::MAX) } else { i64::from(i16::MAX) };
                if off > lim || off < -lim - 1 {
                    return Err(range_err());
                }
                *o = off as i32;
            }
            Insn::Jmp { off: o, .. } => {
                *o = i16::try_from(off).map_err(|_| range_err())?;
            }
            Insn::Call(CallTarget::Local(o)) => {
                *o = i32::try_from(off).map_err(|_| range_err())?;
            }
            _ => {}
        }
        Ok(())
    };
    for (at, off, line, col) in pending_rel {
        set(&mut insns[at], off, line, col)?;
    }
    for p in pending {
        let Some(&target) = labels.get(&p.label) else {
            return Err(AsmError {
                line: p.line,
                column: p.col,
                message: format!("Invalid label: {}", p.label),
            });
        };
        let off = target as i64 - slots_at[p.at] as i64 - 1;
        set(&mut insns[p.at], off, p.line, p.col)?;
    }
    Ok(insns)
}

fn r(reg: Reg) -> String {
    format!("%r{reg}")
}

fn imm(v: i32) -> String {
    if (-4096..=4096).contains(&v) { v.to_string() } else { format!("{:#x}", v as u32) }
}

fn rel(off: i64) -> String {
    format!("{off:+}")
}

fn mem(base: Reg, off: i16) -> String {
    if off == 0 { format!("[%r{base}]") } else { format!("[%r{base}{off:+}]") }
}

fn sfx(width: Width) -> &'static str {
    if width == Width::W32 { "32" } else { "" }
}

fn size_name(size: Size) -> &'static str {
    match size {
        Size::B => "b",
        Size::H => "h",
        Size::W => "w",
        Size::DW => "dw",
    }
}

/// One instruction in the conformance syntax (jump targets as `+N`/`-N`).
pub fn print_insn(insn: &Insn) -> String {
    match *insn {
        Insn::Alu { width, op, dst, src } => {
            let name = ALU_OPS.iter().find(|(_, o)| *o == op).map_or("?", |(n, _)| n);
            let s = match src {
                Operand::Reg(s) => r(s),
                Operand::Imm(i) => imm(i),
            };
            format!("{name}{} {}, {s}", sfx(width), r(dst))
        }
        Insn::MovSx { width, bits, dst, src } => {
            let w = if width == Width::W32 { 32 } else { 64 };
            format!("movsx{bits}{w} {}, {}", r(dst), r(src))
        }
        Insn::Neg { width, dst } => format!("neg{} {}", sfx(width), r(dst)),
        Insn::Endian { order, bits, dst } => {
            let n = match order {
                ByteOrder::Le => "le",
                ByteOrder::Be => "be",
                ByteOrder::Swap => "bswap",
            };
            format!("{n}{bits} {}", r(dst))
        }
        Insn::Load { size, dst, src, off } => {
            format!("ldx{} {}, {}", size_name(size), r(dst), mem(src, off))
        }
        Insn::LoadSx { size, dst, src, off } => {
            format!("ldxs{} {}, {}", size_name(size), r(dst), mem(src, off))
        }
        Insn::Store { size, dst, off, src: Operand::Reg(s) } => {
            format!("stx{} {}, {}", size_name(size), mem(dst, off), r(s))
        }
        Insn::Store { size, dst, off, src: Operand::Imm(i) } => {
            format!("st{} {}, {}", size_name(size), mem(dst, off), imm(i))
        }
        Insn::Atomic { width, op, fetch, dst, src, off } => {
            let name = ATOMICS.iter().find(|(_, o)| *o == op).map_or("?", |(n, _)| n);
            let f = if fetch
                && matches!(op, AtomicOp::Add | AtomicOp::Or | AtomicOp::And | AtomicOp::Xor)
            {
                "fetch "
            } else {
                ""
            };
            format!("lock {f}{name}{} {}, {}", sfx(width), mem(dst, off), r(src))
        }
        Insn::LdImm64 { dst, kind: ImmKind::Imm, imm } => format!("lddw {}, {imm:#x}", r(dst)),
        Insn::LdImm64 { dst, kind, imm } => {
            let name = IMM_KINDS.iter().find(|(_, k)| *k == kind).map_or("?", |(n, _)| n);
            let (lo, hi) = (imm as u32 as i32, (imm >> 32) as u32 as i32);
            if hi != 0 || matches!(kind, ImmKind::MapValue | ImmKind::MapIdxValue) {
                format!("lddw {}, {name}({lo}, {hi})", r(dst))
            } else {
                format!("lddw {}, {name}({lo})", r(dst))
            }
        }
        Insn::LdAbs { size, imm: i } => format!("ldabs{} {}", size_name(size), imm(i)),
        Insn::LdInd { size, src, imm: i } => {
            format!("ldind{} {}, {}", size_name(size), r(src), imm(i))
        }
        Insn::Ja { off, long } => format!("ja{} {}", if long { "32" } else { "" }, rel(off.into())),
        Insn::Jmp { width, cond, dst, src, off } => {
            let name = CONDS.iter().find(|(_, c)| *c == cond).map_or("?", |(n, _)| n);
            let s = match src {
                Operand::Reg(s) => r(s),
                Operand::Imm(i) => imm(i),
            };
            format!("{name}{} {}, {s}, {}", sfx(width), r(dst), rel(off.into()))
        }
        Insn::Call(CallTarget::Helper(i)) => format!("call {i}"),
        Insn::Call(CallTarget::Local(i)) => format!("call local {}", rel(i.into())),
        Insn::Call(CallTarget::Kfunc { btf_id, .. }) => format!("call runtime {btf_id}"),
        Insn::Callx { dst } => format!("call {}", r(dst)),
        Insn::Exit => "exit".to_string(),
    }
}

/// A program in the conformance syntax, one instruction a line.
pub fn print(insns: &[Insn]) -> String {
    let mut s = String::new();
    for i in insns {
        let _ = writeln!(s, "{}", print_insn(i));
    }
    s
}

/// Typed instructions without their slot indices (for [`print()`]).
pub fn strip(located: &[Located]) -> Vec<Insn> {
    located.iter().map(|l| l.insn).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_exit_label_and_relative_targets() {
        let p = assemble("mov %r0, 1\nja L\nL: jne %r0, 1, exit\ncall local f\nexit\nf:\nexit\n")
            .unwrap();
        assert_eq!(p[1], Insn::Ja { off: 0, long: false });
        assert_eq!(
            p[2],
            Insn::Jmp { width: Width::W64, cond: Cond::Ne, dst: 0, src: Operand::Imm(1), off: 1 }
        );
        assert_eq!(p[3], Insn::Call(CallTarget::Local(1)));
        // Labels count slots, so a lddw before a label moves it by two.
        let p = assemble("ja end\nlddw %r0, 0x1122334455667788\nend:\nexit").unwrap();
        assert_eq!(p[0], Insn::Ja { off: 2, long: false });
    }

    #[test]
    fn errors_are_located_in_upstreams_words() {
        let e = |t: &str| assemble(t).unwrap_err().to_string();
        assert_eq!(e("mov %r0, 1\nldxq %r0, %r1\n"), "2:1: Invalid mnemonic: ldxq");
        assert_eq!(e("or %r0, %r50"), "1:9: Invalid register: %r50");
        assert_eq!(e("  lock or [%r10-8]"), "1:3: Invalid number of operands for lock");
        assert_eq!(e("lock"), "1:1: Invalid number of operands for lock");
        assert_eq!(e("ja NOT_A_LABEL\nexit"), "1:4: Invalid label: NOT_A_LABEL");
        assert_eq!(e("lddw %r0"), "1:1: Invalid number of operands for mnemonic: lddw");
        assert_eq!(e("ldxb %r0, %r1"), "1:11: Failed to decode register and offset: %r1");
        assert_eq!(e("ldxb %r0, [%r1+0x10000]"), "1:15: Offset out of 16-bit range: +0x10000");
        assert_eq!(e("mov32 %r0, 2147483648"), "1:12: Immediate out of 32-bit range: 2147483648");
        assert_eq!(e("mov32 %r0, 0x100000000"), "1:12: Immediate out of 32-bit range: 0x100000000");
        assert!(assemble("mov32 %r0, 0xffffffff").is_ok());
    }

    #[test]
    fn every_form_round_trips_through_text() {
        let text = "add32 %r1, -3\nsdiv %r2, %r3\nsmod32 %r2, 7\nmovsx3264 %r0, %r1\nneg32 %r4\n\
                    be16 %r1\nle64 %r2\nbswap32 %r3\nldxsh %r0, [%r1+2]\nldxdw %r0, [%r10-8]\n\
                    stb [%r1], 5\nstxw [%r10-4], %r2\nlock fetch xor32 [%r10-4], %r1\n\
                    lock cmpxchg [%r10-8], %r2\nlock add [%r1+8], %r3\nlddw %r1, map_value(3, 16)\n\
                    lddw %r2, map_fd(1)\nlddw %r3, 0xffffffffffffffff\nldabsh 12\nldindw %r1, -4\n\
                    ja32 -1\njsle32 %r1, %r2, +0\njset %r1, 0x80000000, -3\ncall 7\ncall local +2\n\
                    call runtime 99\ncall %r2\nexit\n";
        let p = assemble(text).unwrap();
        assert_eq!(print(&p), text);
        assert_eq!(assemble(&print(&p)).unwrap(), p);
    }
}
