//! Assemble a sequence, decode it, and compare every instruction with the model.

use std::collections::HashSet;

use iced_x86::{Code, Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};
use sift_x86::{AsmError, Assembler, Label, Size};

use super::model::{self, Expect, Insn, Item, MemSpec, Want};

/// What a run checked.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// The distinct encodings (iced's `Code`: mnemonic and operand form) seen.
    pub forms: HashSet<Code>,
    /// Instructions encoded, decoded and compared.
    pub checked: u64,
    /// Instructions the assembler refused, as the model said it must.
    pub refused: u64,
    /// Label jumps laid out short and near.
    pub short_jumps: u64,
    pub near_jumps: u64,
    /// Sequences whose unbound label was reported.
    pub unbound: u64,
    /// Bytes of code decoded.
    pub bytes: u64,
}

fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 { v } else { v & ((1u64 << bits) - 1) }
}

fn is_immediate(k: OpKind) -> bool {
    matches!(
        k,
        OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate64
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64
    )
}

/// Whether operand `i` of `d` is `want`; `labels` are the final label offsets.
fn operand_is(d: &Instruction, i: u32, want: Want, labels: &[usize]) -> bool {
    let kind = d.op_kind(i);
    match want {
        Want::Reg(r) => kind == OpKind::Register && d.op_register(i) == r,
        Want::Imm(v, bits) => is_immediate(kind) && mask(d.immediate(i), bits) == mask(v, bits),
        Want::Branch(l) => {
            kind == OpKind::NearBranch64 && d.near_branch_target() == labels[l] as u64
        }
        Want::Mem(spec, size) => {
            if kind != OpKind::Memory || (size != 0 && d.memory_size().size() != size) {
                return false;
            }
            let (base, index, scale, disp) = match spec {
                MemSpec::Label(l, disp) => (
                    Register::RIP,
                    Register::None,
                    1,
                    (labels[l] as i64).wrapping_add(i64::from(disp)) as u64,
                ),
                MemSpec::Plain(m) => {
                    let (index, scale) = match m.index_reg() {
                        Some((r, s)) => (model::register(r, Size::Qword), s.factor()),
                        None => (Register::None, 1),
                    };
                    if m.is_rip_relative() {
                        let target = (d.next_ip() as i64).wrapping_add(i64::from(m.displacement()));
                        (Register::RIP, index, scale, target as u64)
                    } else {
                        let base = m
                            .base_reg()
                            .map_or(Register::None, |r| model::register(r, Size::Qword));
                        (base, index, scale, i64::from(m.displacement()) as u64)
                    }
                }
            };
            d.memory_base() == base
                && d.memory_index() == index
                && d.memory_index_scale() == scale
                && d.memory_displacement64() == disp
        }
    }
}

/// Compares one decoded instruction with what the model expects.
fn compare(
    d: &Instruction,
    mnemonic: Mnemonic,
    ops: &[Want],
    lock: bool,
    commutative: bool,
    labels: &[usize],
) -> bool {
    if d.is_invalid()
        || d.mnemonic() != mnemonic
        || d.has_lock_prefix() != lock
        || d.op_count() as usize != ops.len()
    {
        return false;
    }
    let in_order = ops.iter().enumerate().all(|(i, w)| operand_is(d, i as u32, *w, labels));
    in_order
        || (commutative
            && ops.len() == 2
            && operand_is(d, 0, ops[1], labels)
            && operand_is(d, 1, ops[0], labels))
}

/// Assembles `items`, decodes the result and compares it with the model; on a mismatch says
/// which instruction and how.
pub fn run(items: &[Item], nlabels: usize, stats: &mut Stats) -> Result<(), String> {
    let mut asm = Assembler::new();
    let labels: Vec<Label> = (0..nlabels).map(|_| asm.new_label()).collect();
    let mut bound = vec![false; nlabels];
    let mut used = vec![false; nlabels];
    // (label at the instruction's start, the instruction, what it must decode to)
    let mut emitted: Vec<(Label, &Insn, Expect)> = Vec::new();
    for item in items {
        match item {
            Item::Bind(l) => {
                asm.bind(labels[*l]).map_err(|e| format!("bind {l}: {e}"))?;
                bound[*l] = true;
            }
            Item::Insn(insn) => {
                let mark = asm.new_label();
                asm.bind(mark).map_err(|e| format!("bind: {e}"))?;
                match (model::expect(insn), model::emit(&mut asm, insn, &labels)) {
                    (Some(e), Ok(())) => {
                        for l in model::labels_used(insn) {
                            used[l] = true;
                        }
                        emitted.push((mark, insn, e));
                    }
                    (None, Err(AsmError::Operands { .. })) => stats.refused += 1,
                    (Some(_), Err(e)) => return Err(format!("{insn:?}: refused: {e}")),
                    (None, Ok(())) => {
                        return Err(format!("{insn:?}: accepted, but it has no encoding"));
                    }
                    (None, Err(e)) => {
                        return Err(format!("{insn:?}: refused with the wrong error: {e}"));
                    }
                }
            }
        }
    }
    let end = asm.new_label();
    asm.bind(end).map_err(|e| format!("bind: {e}"))?;
    let unbound: Vec<usize> = (0..nlabels).filter(|&l| used[l] && !bound[l]).collect();
    let code = match (asm.finish(), unbound.is_empty()) {
        (Ok(code), true) => code,
        (Err(AsmError::UnboundLabel { label }), false) if unbound.contains(&label) => {
            stats.unbound += 1;
            return Ok(());
        }
        (Ok(_), false) => {
            return Err(format!("labels {unbound:?} are used, never bound, and finish accepted"));
        }
        (Err(e), _) => return Err(format!("finish: {e}")),
    };
    let offsets: Vec<usize> =
        labels.iter().map(|&l| code.label_offset(l).unwrap_or(usize::MAX)).collect();
    let bytes = &code.code;
    let mut decoder = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE);
    let mut d = Instruction::default();
    for (k, (mark, insn, expect)) in emitted.iter().enumerate() {
        let start = code.label_offset(*mark).ok_or("an instruction's label is unbound")?;
        let stop = match emitted.get(k + 1) {
            Some((next, ..)) => code.label_offset(*next),
            None => code.label_offset(end),
        }
        .ok_or("a label is unbound")?;
        let here =
            || format!("{insn:?} at {start:#x}: bytes {:02X?}", &bytes[start..stop.max(start)]);
        decoder.set_position(start).map_err(|e| e.to_string())?;
        decoder.set_ip(start as u64);
        match expect {
            Expect::Nops(len) => {
                if stop - start != *len {
                    return Err(format!(
                        "{}: {} bytes of nops, wanted {len}",
                        here(),
                        stop - start
                    ));
                }
                while decoder.position() < stop {
                    decoder.decode_out(&mut d);
                    if d.mnemonic() != Mnemonic::Nop || decoder.position() > stop {
                        return Err(format!("{}: decoded {:?}", here(), d.code()));
                    }
                    stats.forms.insert(d.code());
                }
            }
            Expect::One { mnemonic, ops, lock, commutative } => {
                decoder.decode_out(&mut d);
                if d.len() != stop - start {
                    return Err(format!(
                        "{}: decoded {} of {} bytes as {:?}",
                        here(),
                        d.len(),
                        stop - start,
                        d.code()
                    ));
                }
                if !compare(&d, *mnemonic, ops, *lock, *commutative, &offsets) {
                    return Err(format!(
                        "{}: decoded {:?} {d:?}, wanted {mnemonic:?} {ops:?}",
                        here(),
                        d.code()
                    ));
                }
                stats.forms.insert(d.code());
                if let Insn::Jmp(l) | Insn::Jcc(_, l) = insn {
                    if d.len() == 2 {
                        stats.short_jumps += 1;
                    } else {
                        stats.near_jumps += 1;
                        // Least fixed point: as a short jump (everything else where it is) it
                        // would not reach.
                        let target = offsets[*l] as i64;
                        let shrink = (d.len() - 2) as i64;
                        let target = if target > start as i64 { target - shrink } else { target };
                        let rel = target - (start as i64 + 2);
                        if i8::try_from(rel).is_ok() {
                            return Err(format!(
                                "{}: near, but a short jump reaches ({rel})",
                                here()
                            ));
                        }
                    }
                }
            }
        }
        stats.checked += 1;
    }
    stats.bytes += bytes.len() as u64;
    Ok(())
}
