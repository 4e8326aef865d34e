//! The few x86-64 instruction encodings the JIT needs, written as bytes.
//!
//! Register use is fixed (see the crate documentation): A in `eax`, X in `ecx`, the packet
//! pointer in `rdi`, the captured length in `rsi`, the wire length in `r8d`, scratch memory at
//! `[rsp]`, temporaries `r9`–`r11`. Each function appends one instruction (or a fixed short
//! sequence) and is named after its assembly. Encodings follow the Intel SDM; the tests
//! disassemble the JIT's output to check them.

/// Condition codes (the low nibble of `Jcc`); `cc ^ 1` is the negation.
pub(crate) mod cc {
    /// Below (unsigned `<`).
    pub const B: u8 = 0x2;
    /// Above or equal (unsigned `>=`).
    pub const AE: u8 = 0x3;
    /// Equal.
    pub const E: u8 = 0x4;
    /// Not equal.
    pub const NE: u8 = 0x5;
    /// Above (unsigned `>`).
    pub const A: u8 = 0x7;
}

/// An instruction stream being assembled.
#[derive(Default)]
pub(crate) struct Asm {
    pub bytes: Vec<u8>,
}

impl Asm {
    fn b(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn imm32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// `xor eax, eax`
    pub fn zero_a(&mut self) {
        self.b(&[0x31, 0xC0]);
    }

    /// `xor ecx, ecx`
    pub fn zero_x(&mut self) {
        self.b(&[0x31, 0xC9]);
    }

    /// `mov r8d, edx` (keep the wire length out of `div`'s way)
    pub fn save_wire_len(&mut self) {
        self.b(&[0x41, 0x89, 0xD0]);
    }

    /// `sub rsp, 64` and zero the 16 scratch words.
    pub fn enter_frame(&mut self) {
        self.b(&[0x48, 0x83, 0xEC, 0x40]);
        // xor r9d, r9d; mov [rsp + 8j], r9 for j in 0..8
        self.b(&[0x45, 0x31, 0xC9]);
        for j in 0..8u8 {
            self.b(&[0x4C, 0x89, 0x4C, 0x24, 8 * j]);
        }
    }

    /// `add rsp, 64` (when there is a frame) then `ret`.
    pub fn leave(&mut self, frame: bool) {
        if frame {
            self.b(&[0x48, 0x83, 0xC4, 0x40]);
        }
        self.b(&[0xC3]);
    }

    /// `mov eax, imm32`
    pub fn mov_a_imm(&mut self, k: u32) {
        if k == 0 {
            self.zero_a();
        } else {
            self.b(&[0xB8]);
            self.imm32(k);
        }
    }

    /// `mov ecx, imm32`
    pub fn mov_x_imm(&mut self, k: u32) {
        if k == 0 {
            self.zero_x();
        } else {
            self.b(&[0xB9]);
            self.imm32(k);
        }
    }

    /// `mov eax, r8d` (A = wire length)
    pub fn mov_a_len(&mut self) {
        self.b(&[0x44, 0x89, 0xC0]);
    }

    /// `mov ecx, r8d` (X = wire length)
    pub fn mov_x_len(&mut self) {
        self.b(&[0x44, 0x89, 0xC1]);
    }

    /// `mov eax, [rsp + 4k]`
    pub fn ld_mem(&mut self, k: u8) {
        self.b(&[0x8B, 0x44, 0x24, 4 * k]);
    }

    /// `mov ecx, [rsp + 4k]`
    pub fn ldx_mem(&mut self, k: u8) {
        self.b(&[0x8B, 0x4C, 0x24, 4 * k]);
    }

    /// `mov [rsp + 4k], eax`
    pub fn st(&mut self, k: u8) {
        self.b(&[0x89, 0x44, 0x24, 4 * k]);
    }

    /// `mov [rsp + 4k], ecx`
    pub fn stx(&mut self, k: u8) {
        self.b(&[0x89, 0x4C, 0x24, 4 * k]);
    }

    /// `cmp rsi, need` (need ≤ i32::MAX) or `mov r9, need; cmp rsi, r9`. Sets CF when the
    /// captured length is below `need`.
    pub fn cmp_caplen(&mut self, need: u64) {
        if let Ok(n) = i32::try_from(need) {
            self.b(&[0x48, 0x81, 0xFE]);
            self.imm32(n as u32);
        } else {
            self.b(&[0x49, 0xB9]);
            self.bytes.extend_from_slice(&need.to_le_bytes());
            self.b(&[0x4C, 0x39, 0xCE]);
        }
    }

    /// r9 = X + k as a 64-bit sum (no 32-bit wrap), r11 = r9 + size; `cmp rsi, r11`.
    pub fn ind_address_and_check(&mut self, k: u32, size: u8) {
        // mov r9d, ecx (zero-extends)
        self.b(&[0x41, 0x89, 0xC9]);
        if k != 0 {
            // mov r10d, k; add r9, r10
            self.b(&[0x41, 0xBA]);
            self.imm32(k);
            self.b(&[0x4D, 0x01, 0xD1]);
        }
        // lea r11, [r9 + size]; cmp rsi, r11
        self.b(&[0x4D, 0x8D, 0x59, size]);
        self.b(&[0x4C, 0x39, 0xDE]);
    }

    /// `mov r9d, k` (for absolute offsets that do not fit a signed displacement).
    pub fn mov_r9_imm(&mut self, k: u32) {
        self.b(&[0x41, 0xB9]);
        self.imm32(k);
    }

    /// Loads into eax from `[rdi + disp32]` (`disp` < 2^31) or `[rdi + r9]`, big-endian, of
    /// `size` 4, 2 or 1 bytes.
    pub fn load_a(&mut self, at: Addr, size: u8) {
        match size {
            4 => self.mem_op(&[0x8B], 0, at),
            2 => self.mem_op(&[0x0F, 0xB7], 0, at),
            _ => self.mem_op(&[0x0F, 0xB6], 0, at),
        }
        match size {
            // bswap eax
            4 => self.b(&[0x0F, 0xC8]),
            // rol ax, 8 (the upper half is already zero)
            2 => self.b(&[0x66, 0xC1, 0xC0, 0x08]),
            _ => {}
        }
    }

    /// `movzx ecx, byte [..]; and ecx, 0xf; shl ecx, 2`
    pub fn msh(&mut self, at: Addr) {
        self.mem_op(&[0x0F, 0xB6], 1, at);
        self.b(&[0x83, 0xE1, 0x0F, 0xC1, 0xE1, 0x02]);
    }

    /// `opcode reg, [rdi + disp32]` or `opcode reg, [rdi + r9]` with `reg` 0 (eax) or 1 (ecx).
    fn mem_op(&mut self, opcode: &[u8], reg: u8, at: Addr) {
        match at {
            Addr::Disp(d) => {
                self.b(opcode);
                self.b(&[0x80 | (reg << 3) | 0x07]);
                self.imm32(d);
            }
            Addr::R9 => {
                // REX.X for r9 as the SIB index; SIB: scale 1, index r9, base rdi.
                self.b(&[0x42]);
                self.b(opcode);
                self.b(&[(reg << 3) | 0x04, 0x0F]);
            }
        }
    }

    /// ALU with a constant: `op eax, imm32` for add, sub, and, or, xor; `imul eax, eax, imm32`.
    pub fn alu_k(&mut self, op: AluOp, k: u32) {
        match op {
            AluOp::Add => self.b(&[0x05]),
            AluOp::Sub => self.b(&[0x2D]),
            AluOp::And => self.b(&[0x25]),
            AluOp::Or => self.b(&[0x0D]),
            AluOp::Xor => self.b(&[0x35]),
            AluOp::Mul => self.b(&[0x69, 0xC0]),
        }
        self.imm32(k);
    }

    /// ALU with X: `op eax, ecx`, `imul eax, ecx`.
    pub fn alu_x(&mut self, op: AluOp) {
        match op {
            AluOp::Add => self.b(&[0x01, 0xC8]),
            AluOp::Sub => self.b(&[0x29, 0xC8]),
            AluOp::And => self.b(&[0x21, 0xC8]),
            AluOp::Or => self.b(&[0x09, 0xC8]),
            AluOp::Xor => self.b(&[0x31, 0xC8]),
            AluOp::Mul => self.b(&[0x0F, 0xAF, 0xC1]),
        }
    }

    /// `xor edx, edx; mov r9d, k; div r9d` (k ≠ 0), then `mov eax, edx` for the remainder.
    pub fn div_k(&mut self, k: u32, remainder: bool) {
        self.b(&[0x31, 0xD2]);
        self.mov_r9_imm(k);
        self.b(&[0x41, 0xF7, 0xF1]);
        if remainder {
            self.b(&[0x89, 0xD0]);
        }
    }

    /// `test ecx, ecx` (followed by a `jz` to the reject path).
    pub fn test_x(&mut self) {
        self.b(&[0x85, 0xC9]);
    }

    /// `xor edx, edx; div ecx`, then `mov eax, edx` for the remainder (X ≠ 0 checked before).
    pub fn div_x(&mut self, remainder: bool) {
        self.b(&[0x31, 0xD2, 0xF7, 0xF1]);
        if remainder {
            self.b(&[0x89, 0xD0]);
        }
    }

    /// `shl eax, k` / `shr eax, k` for k < 32.
    pub fn shift_k(&mut self, left: bool, k: u8) {
        self.b(&[0xC1, if left { 0xE0 } else { 0xE8 }, k]);
    }

    /// A shift by X with libpcap's rule (X ≥ 32 gives 0), branch-free:
    /// `xor r9d, r9d; shl/shr eax, cl; cmp ecx, 31; cmova eax, r9d`.
    pub fn shift_x(&mut self, left: bool) {
        self.b(&[0x45, 0x31, 0xC9]);
        self.b(&[0xD3, if left { 0xE0 } else { 0xE8 }]);
        self.b(&[0x83, 0xF9, 0x1F]);
        self.b(&[0x41, 0x0F, 0x47, 0xC1]);
    }

    /// `neg eax`
    pub fn neg(&mut self) {
        self.b(&[0xF7, 0xD8]);
    }

    /// `mov ecx, eax`
    pub fn tax(&mut self) {
        self.b(&[0x89, 0xC1]);
    }

    /// `mov eax, ecx`
    pub fn txa(&mut self) {
        self.b(&[0x89, 0xC8]);
    }

    /// `cmp eax, imm32` (or `test eax, eax` for 0), or `test eax, imm32` for `jset`.
    pub fn cmp_a_k(&mut self, k: u32, test: bool) {
        if test {
            self.b(&[0xA9]);
            self.imm32(k);
        } else if k == 0 {
            self.b(&[0x85, 0xC0]);
        } else {
            self.b(&[0x3D]);
            self.imm32(k);
        }
    }

    /// `cmp eax, ecx` or `test eax, ecx`.
    pub fn cmp_a_x(&mut self, test: bool) {
        self.b(&[if test { 0x85 } else { 0x39 }, 0xC8]);
    }
}

/// Where a packet load reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Addr {
    /// `[rdi + disp32]`, displacement below 2^31.
    Disp(u32),
    /// `[rdi + r9]`.
    R9,
}

/// The ALU operations with a plain two-operand encoding.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AluOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
}
