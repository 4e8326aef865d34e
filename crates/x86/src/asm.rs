//! The assembler: an instruction stream with labels, finished into bytes.
//!
//! Instructions are encoded as they are given (see [`crate::encode`] and the methods in
//! [`crate::insn`]) into one byte buffer. Jumps to labels are the exception: their size
//! depends on where the label ends up, so each is recorded with its position in the buffer and
//! sized by [`crate::layout`] when [`Assembler::finish`] is called.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::AsmError;
use crate::layout;
use crate::operand::Label;
use crate::reg::Cond;

/// Tells assemblers apart, so a label used with the wrong one is an error, not a wrong jump.
static NEXT_OWNER: AtomicU32 = AtomicU32::new(1);

/// A jump to a label, sized at [`Assembler::finish`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Jump {
    /// Where it goes in the buffer of fixed-size code.
    pub at: usize,
    /// `None` for `jmp`, else the condition of a `jcc`.
    pub cond: Option<Cond>,
    pub label: u32,
}

/// Where a label was bound.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bound {
    /// Its position in the buffer of fixed-size code.
    pub at: usize,
    /// How many jumps precede it (they lie before it in the final code).
    pub jumps_before: usize,
}

/// A 32-bit field in the fixed-size code holding `label - end` plus its current contents
/// (`call label`, `[rip + label]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fixup {
    /// The field's position in the buffer.
    pub field: usize,
    /// The end of its instruction, which the distance is measured from.
    pub end: usize,
    pub label: u32,
    /// How many jumps precede the instruction.
    pub jumps_before: usize,
}

/// An x86-64 instruction stream under construction.
///
/// Instruction methods are named after the Intel SDM mnemonics and take the operand size
/// first: `asm.add(Size::Dword, Reg::Rax, 1)` is `add eax, 1`. Each returns an error, and
/// emits nothing, when x86-64 has no encoding for its operands. Jumps to labels
/// ([`jmp`](Assembler::jmp), [`jcc`](Assembler::jcc)) are sized when the code is
/// [`finish`](Assembler::finish)ed: rel8 where the label is in reach, rel32 otherwise.
#[derive(Debug)]
pub struct Assembler {
    owner: u32,
    /// Every instruction except label jumps, in order.
    pub(crate) code: Vec<u8>,
    pub(crate) jumps: Vec<Jump>,
    pub(crate) labels: Vec<Option<Bound>>,
    pub(crate) fixups: Vec<Fixup>,
    /// Instructions emitted so far (the next one's number, for errors).
    pub(crate) count: usize,
    /// A `lock` prefix for the next instruction (set only by [`crate::Locked`]).
    pub(crate) lock_next: bool,
}

impl Default for Assembler {
    fn default() -> Assembler {
        Assembler::new()
    }
}

impl Assembler {
    /// An empty instruction stream.
    pub fn new() -> Assembler {
        Assembler::with_capacity(0)
    }

    /// An empty instruction stream with room for `bytes` bytes of code.
    pub fn with_capacity(bytes: usize) -> Assembler {
        Assembler {
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
            code: Vec::with_capacity(bytes),
            jumps: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
            count: 0,
            lock_next: false,
        }
    }

    /// How many instructions have been emitted (label jumps included).
    pub fn instructions(&self) -> usize {
        self.count
    }

    /// A new label, not yet bound to a position.
    pub fn new_label(&mut self) -> Label {
        let index = self.labels.len() as u32;
        self.labels.push(None);
        Label { owner: self.owner, index }
    }

    /// Binds `label` to the current position: the next instruction starts there.
    pub fn bind(&mut self, label: Label) -> Result<(), AsmError> {
        self.check_label(label)?;
        let slot = &mut self.labels[label.index()];
        if slot.is_some() {
            return Err(AsmError::LabelBoundTwice { label: label.index() });
        }
        *slot = Some(Bound { at: self.code.len(), jumps_before: self.jumps.len() });
        Ok(())
    }

    /// Errs unless `label` was made by this assembler.
    pub(crate) fn check_label(&self, label: Label) -> Result<(), AsmError> {
        if label.owner != self.owner || label.index() >= self.labels.len() {
            return Err(AsmError::ForeignLabel { label: label.index() });
        }
        Ok(())
    }

    /// Records a jump to `label`, to be sized at `finish`.
    pub(crate) fn jump(&mut self, cond: Option<Cond>, label: Label) -> Result<(), AsmError> {
        self.check_label(label)?;
        self.jumps.push(Jump { at: self.code.len(), cond, label: label.index });
        self.count += 1;
        Ok(())
    }

    /// Sizes the jumps, resolves the labels and returns the code.
    ///
    /// Errs if a label that is used was never bound, or if the code is too large for rel32
    /// displacements.
    pub fn finish(self) -> Result<Assembled, AsmError> {
        let used = self.jumps.iter().map(|j| j.label).chain(self.fixups.iter().map(|f| f.label));
        for label in used {
            if self.labels[label as usize].is_none() {
                return Err(AsmError::UnboundLabel { label: label as usize });
            }
        }
        let (code, labels) = layout::layout(&self.code, &self.jumps, &self.labels, &self.fixups)?;
        Ok(Assembled { code, labels, owner: self.owner })
    }
}

/// Finished code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    /// The machine code, position-independent.
    pub code: Vec<u8>,
    labels: Vec<Option<usize>>,
    owner: u32,
}

impl Assembled {
    /// Where `label` was bound (a byte offset into [`code`](Assembled::code)), if it was bound
    /// in the assembler that made this code.
    pub fn label_offset(&self, label: Label) -> Option<usize> {
        if label.owner != self.owner {
            return None;
        }
        self.labels.get(label.index()).copied().flatten()
    }
}
