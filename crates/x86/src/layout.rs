//! Sizing jumps to labels: short (rel8) where the label is in reach, near (rel32) otherwise.
//!
//! The layout starts with every jump short and lengthens each one whose label is out of reach,
//! then recomputes positions and repeats until no jump changes. A jump only ever grows, and
//! growing a jump only moves code apart, so a jump found out of reach stays out of reach: the
//! loop ends after at most one pass per jump (in practice two or three), at the least fixed
//! point — every near jump would miss its label as a short one. (This is the pass that
//! `sift-jit`'s lowering used to do itself; callers now just jump to labels.)

use crate::asm::{Bound, Fixup, Jump};
use crate::error::AsmError;
use crate::reg::Cond;

/// `jmp rel8`, `jcc rel8`.
const SHORT: usize = 2;

/// The length of a jump in its long form: `E9 rel32` or `0F 8x rel32`.
fn long_len(cond: Option<Cond>) -> usize {
    if cond.is_some() { 6 } else { 5 }
}

/// The final code and every label's final offset.
pub(crate) fn layout(
    code: &[u8],
    jumps: &[Jump],
    labels: &[Option<Bound>],
    fixups: &[Fixup],
) -> Result<(Vec<u8>, Vec<Option<usize>>), AsmError> {
    let mut long = vec![false; jumps.len()];
    // grown[k]: how many bytes the first k jumps add to the fixed-size code.
    let mut grown = vec![0usize; jumps.len() + 1];
    let place = |b: &Bound, grown: &[usize]| b.at + grown[b.jumps_before];
    loop {
        for (k, j) in jumps.iter().enumerate() {
            grown[k + 1] = grown[k] + if long[k] { long_len(j.cond) } else { SHORT };
        }
        let mut changed = false;
        for (k, j) in jumps.iter().enumerate() {
            if long[k] {
                continue;
            }
            let end = j.at + grown[k] + SHORT;
            // Bound: `Assembler::finish` checked every used label.
            let Some(Some(target)) = labels.get(j.label as usize) else { continue };
            let rel = place(target, &grown) as i64 - end as i64;
            if i8::try_from(rel).is_err() {
                long[k] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let total = code.len() + grown[jumps.len()];
    if i32::try_from(total).is_err() {
        return Err(AsmError::TooLarge { len: total });
    }
    let offset = |label: u32| match labels.get(label as usize) {
        Some(Some(b)) => Ok(place(b, &grown)),
        _ => Err(AsmError::UnboundLabel { label: label as usize }),
    };
    let mut out = Vec::with_capacity(total);
    let mut copied = 0;
    for (k, j) in jumps.iter().enumerate() {
        out.extend_from_slice(&code[copied..j.at]);
        copied = j.at;
        let len = if long[k] { long_len(j.cond) } else { SHORT };
        let rel = offset(j.label)? as i64 - (out.len() + len) as i64;
        match (j.cond, long[k]) {
            (None, false) => out.extend_from_slice(&[0xEB, rel as u8]),
            (Some(c), false) => out.extend_from_slice(&[0x70 | c.code(), rel as u8]),
            (None, true) => {
                out.push(0xE9);
                out.extend_from_slice(&(rel as i32).to_le_bytes());
            }
            (Some(c), true) => {
                out.extend_from_slice(&[0x0F, 0x80 | c.code()]);
                out.extend_from_slice(&(rel as i32).to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&code[copied..]);
    for f in fixups {
        let field = f.field + grown[f.jumps_before];
        let end = f.end + grown[f.jumps_before];
        let slot = &mut out[field..field + 4];
        let addend = i32::from_le_bytes([slot[0], slot[1], slot[2], slot[3]]);
        let rel = offset(f.label)? as i64 - end as i64 + i64::from(addend);
        let rel = i32::try_from(rel).map_err(|_| AsmError::LabelDisplacement {
            label: f.label as usize,
            displacement: i64::from(addend),
        })?;
        slot.copy_from_slice(&rel.to_le_bytes());
    }
    let offsets = labels.iter().map(|b| b.as_ref().map(|b| place(b, &grown))).collect();
    Ok((out, offsets))
}
