//! Text and Graphviz dumps of a [`Cfg`].
//!
//! **Why it exists.** Golden tests of the code generator and the optimizer compare graphs as
//! text, and `--dump-cfg` shows them to people. Both dumps list the blocks reachable from the
//! entry in layout order ([`Cfg::layout_order`]), so a dump reads top to bottom like the
//! emitted program; statements use tcpdump's `-d` spelling (a `protochain` walk, one
//! statement, has a line of its own: [`Walk::text`]). Only reachable blocks are shown, so
//! leftovers in the arena never change a dump.
//!
//! Text form:
//!
//! ```text
//! b0:
//!     ldh      [12]
//!     jeq      #0x800 -> b1, b3
//! b1:
//!     ...
//! ```

use crate::ir::*;
use sift_insn::Insn;
use sift_insn::code::*;
use sift_insn::text::{ListingStyle, image};
use std::fmt::Write;

/// One statement in `-d` spelling, without the index: `ldh      [12]`; a `protochain` walk
/// as [`Walk::text`] (`walk     ip6 #0x6 [x + 14] M[0]`).
pub fn stmt_text(s: Stmt) -> String {
    match s {
        Stmt::Walk(w) => w.text(),
        s => insn_text(&s.to_insn().expect("every statement but a walk is one instruction")),
    }
}

fn insn_text(insn: &Insn) -> String {
    let line = image(insn, 0, ListingStyle::Libpcap111);
    // "(000) " prefix; conditional jumps also carry " jt 1\tjf 1".
    let body = &line[6..];
    let body = body.split(" jt ").next().unwrap_or(body);
    body.trim_end().to_string()
}

/// The terminator in `-d` spelling with block names: `jeq      #0x800 -> b1, b3`,
/// `ja b4`, `ret      #0`.
pub fn term_text(t: &Terminator) -> String {
    match *t {
        Terminator::Branch { op, operand, jt, jf } => {
            let (src, k) = match operand {
                Operand::K(k) => (BPF_K, k),
                Operand::X => (BPF_X, 0),
            };
            let insn = Insn::jump(BPF_JMP | op.code() | src, k, 0, 0);
            format!("{} -> {jt}, {jf}", insn_text(&insn))
        }
        Terminator::Jump(b) => format!("{:<8} {b}", "ja"),
        Terminator::Ret(RetVal::K(k)) => insn_text(&Insn::stmt(BPF_RET | BPF_K, k)),
        Terminator::Ret(RetVal::A) => insn_text(&Insn::stmt(BPF_RET | BPF_A, 0)),
    }
}

/// The text dump: each reachable block in layout order, its statements indented, then its
/// terminator with successor names (true first).
pub fn text(cfg: &Cfg) -> String {
    let mut out = String::new();
    for b in cfg.layout_order() {
        let block = cfg.block(b);
        let _ = writeln!(out, "{b}:");
        for s in &block.stmts {
            let _ = writeln!(out, "    {}", stmt_text(*s));
        }
        let _ = writeln!(out, "    {}", term_text(&block.term));
    }
    out
}

impl std::fmt::Display for Cfg {
    /// The [`text`] dump.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&text(self))
    }
}

/// Escapes a label for Graphviz.
fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Graphviz `dot` dump: one box per reachable block (statements left-aligned), true edges
/// solid and labelled `T`, false edges dashed and labelled `F`.
pub fn dot(cfg: &Cfg) -> String {
    let mut out = String::from("digraph cfg {\n    node [shape=box, fontname=monospace];\n");
    for b in cfg.layout_order() {
        let block = cfg.block(b);
        let mut label = format!("{b}\\l");
        for s in &block.stmts {
            label.push_str(&dot_escape(&stmt_text(*s)));
            label.push_str("\\l");
        }
        let last = match block.term {
            Terminator::Branch { .. } => {
                let t = term_text(&block.term);
                t.split(" -> ").next().unwrap_or(&t).to_string()
            }
            Terminator::Jump(_) => String::new(),
            _ => term_text(&block.term),
        };
        if !last.is_empty() {
            label.push_str(&dot_escape(&last));
            label.push_str("\\l");
        }
        let _ = writeln!(out, "    {b} [label=\"{label}\"];");
        match block.term {
            Terminator::Branch { jt, jf, .. } => {
                let _ = writeln!(out, "    {b} -> {jt} [label=\"T\"];");
                let _ = writeln!(out, "    {b} -> {jf} [label=\"F\", style=dashed];");
            }
            Terminator::Jump(t) => {
                let _ = writeln!(out, "    {b} -> {t};");
            }
            Terminator::Ret(_) => {}
        }
    }
    out.push_str("}\n");
    out
}

/// Why [`parse`] refused a text dump: the 1-based line and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TextError {}

fn block_name(s: &str) -> Option<BlockId> {
    let n = s.trim().strip_prefix('b')?;
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    n.parse::<u32>().ok().filter(|&n| n < u32::MAX).map(BlockId)
}

/// One `-d` line without its index, through `sift-insn`'s listing parser.
fn parse_insn(text: &str) -> Result<Insn, String> {
    let prog = sift_insn::text::parse_listing(&format!("(000) {text}\n")).map_err(|e| e.message)?;
    match prog.insns() {
        [insn] => Ok(*insn),
        _ => Err("expected one instruction".into()),
    }
}

/// Reads the [`text`] dump back into a graph, so that tests (of optimizer passes, say) can
/// write their input graphs by hand. Block `bN` becomes [`BlockId`] `N`; the first block is
/// the entry; ids that no block names are filled with unreachable `ret #0` blocks. Comments
/// start with `;`. `parse(&text(cfg))` has the same [`text`] as `cfg`.
pub fn parse(src: &str) -> Result<Cfg, TextError> {
    let err = |line: usize, message: String| TextError { line, message };
    let mut blocks: Vec<(BlockId, Block, usize)> = Vec::new();
    let mut current: Option<(BlockId, Vec<Stmt>, usize)> = None;
    for (i, raw) in src.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.split(';').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_suffix(':') {
            if let Some((id, _, start)) = &current {
                return Err(err(*start, format!("block {id} has no terminator")));
            }
            let id = block_name(name)
                .ok_or_else(|| err(line_no, format!("`{name}` is not a block name")))?;
            if blocks.iter().any(|(b, _, _)| *b == id) {
                return Err(err(line_no, format!("block {id} is defined twice")));
            }
            current = Some((id, Vec::new(), line_no));
            continue;
        }
        let Some((_, stmts, _)) = current.as_mut() else {
            return Err(err(line_no, "statement outside a block".into()));
        };
        let term = if let Some(rest) =
            line.strip_prefix("ja ").or_else(|| line.strip_prefix("ja\t"))
        {
            let t = block_name(rest)
                .ok_or_else(|| err(line_no, format!("`{}` is not a block name", rest.trim())))?;
            Some(Terminator::Jump(t))
        } else if let Some((insn, targets)) = line.split_once("->") {
            let (jt, jf) = targets
                .split_once(',')
                .and_then(|(t, f)| Some((block_name(t)?, block_name(f)?)))
                .ok_or_else(|| err(line_no, "expected `-> bT, bF`".into()))?;
            let insn =
                parse_insn(&format!("{} jt 1 jf 1", insn.trim())).map_err(|m| err(line_no, m))?;
            let (op, operand) = crate::lift::branch(&insn)
                .ok_or_else(|| err(line_no, "not a conditional jump".into()))?;
            Some(Terminator::Branch { op, operand, jt, jf })
        } else if let Some(w) = Walk::parse(line) {
            stmts.push(Stmt::Walk(w));
            None
        } else {
            let insn = parse_insn(line).map_err(|m| err(line_no, m))?;
            match (insn.code, Stmt::from_insn(&insn)) {
                (_, Some(s)) => {
                    stmts.push(s);
                    None
                }
                (c, None) if c == BPF_RET | BPF_K => Some(Terminator::Ret(RetVal::K(insn.k))),
                (c, None) if c == BPF_RET | BPF_A => Some(Terminator::Ret(RetVal::A)),
                _ => return Err(err(line_no, format!("`{line}` is not a statement"))),
            }
        };
        if let Some(term) = term {
            let (id, stmts, start) = current.take().expect("inside a block");
            blocks.push((id, Block { stmts, term }, start));
        }
    }
    if let Some((id, _, start)) = current {
        return Err(err(start, format!("block {id} has no terminator")));
    }
    let Some(entry) = blocks.first().map(|(id, _, _)| *id) else {
        return Err(err(1, "no blocks".into()));
    };
    let len = blocks.iter().map(|(id, _, _)| id.index() + 1).max().unwrap_or(0);
    let placeholder = Block { stmts: Vec::new(), term: Terminator::Ret(RetVal::K(0)) };
    let mut cfg = Cfg { blocks: vec![placeholder; len], entry };
    for (id, block, start) in blocks {
        for s in block.term.succs() {
            if s.index() >= len {
                return Err(err(start, format!("block {id} jumps to {s}, which is not defined")));
            }
        }
        cfg.blocks[id.index()] = block;
    }
    Ok(cfg)
}
