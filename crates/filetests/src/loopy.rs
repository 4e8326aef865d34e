//! A step-limited interpreter for programs with backward jumps.
//!
//! libpcap's `protochain` emits a backward `ja` to walk IPv6 extension headers. `sift-verify`
//! refuses such programs (the kernel would too), so `sift-vm` cannot run them, yet the corpus
//! expects them to work in userland. The harness runs them here instead: the same semantics as
//! libpcap's `bpf_filter` (loads past the captured length end the program with 0, and so does
//! division by a zero X; shifts by X of 32 or more give 0, scratch memory starts zeroed), plus a
//! step limit so that a looping program ends (with 0) instead of hanging the test.

use sift_insn::{Insn, Opcode};

/// Most instructions executed before the program is stopped.
pub const STEP_LIMIT: usize = 1 << 20;

/// Whether `prog` can be run here: libpcap's `bpf_filter` would run it (jumps inside the
/// program, including backward `ja`; known opcodes; scratch indices below 16).
pub fn runnable(prog: &[Insn]) -> bool {
    sift_libpcap::Libpcap::check_runnable(prog).is_ok()
}

fn load(pkt: &[u8], at: u32, size: usize) -> Option<u32> {
    let at = at as usize;
    let b = pkt.get(at..at.checked_add(size)?)?;
    Some(b.iter().fold(0u32, |acc, &x| (acc << 8) | u32::from(x)))
}

/// Runs `prog` (which must satisfy [`runnable`]) on a packet.
pub fn run(prog: &[Insn], pkt: &[u8], wire_len: u32) -> u32 {
    use Opcode::*;
    let (mut a, mut x, mut mem) = (0u32, 0u32, [0u32; 16]);
    let mut pc = 0usize;
    for _ in 0..STEP_LIMIT {
        let Some(insn) = prog.get(pc) else { return 0 };
        let k = insn.k;
        pc += 1;
        let jump = |cond: bool| if cond { usize::from(insn.jt) } else { usize::from(insn.jf) };
        match insn.opcode() {
            RetK => return k,
            RetA => return a,
            LdAbsW | LdAbsH | LdAbsB | LdIndW | LdIndH | LdIndB => {
                let size = match insn.opcode() {
                    LdAbsW | LdIndW => 4,
                    LdAbsH | LdIndH => 2,
                    _ => 1,
                };
                let at = if matches!(insn.opcode(), LdIndW | LdIndH | LdIndB) {
                    match x.checked_add(k) {
                        Some(v) => v,
                        None => return 0,
                    }
                } else {
                    k
                };
                match load(pkt, at, size) {
                    Some(v) => a = v,
                    None => return 0,
                }
            }
            LdLen => a = wire_len,
            LdxLen => x = wire_len,
            LdImm => a = k,
            LdxImm => x = k,
            LdMem => a = mem[k as usize & 15],
            LdxMem => x = mem[k as usize & 15],
            St => mem[k as usize & 15] = a,
            Stx => mem[k as usize & 15] = x,
            LdxMsh => match load(pkt, k, 1) {
                Some(v) => x = (v & 0xf) << 2,
                None => return 0,
            },
            Ja => pc = pc.wrapping_add(k as i32 as isize as usize),
            JeqK => pc += jump(a == k),
            JgtK => pc += jump(a > k),
            JgeK => pc += jump(a >= k),
            JsetK => pc += jump(a & k != 0),
            JeqX => pc += jump(a == x),
            JgtX => pc += jump(a > x),
            JgeX => pc += jump(a >= x),
            JsetX => pc += jump(a & x != 0),
            AddK => a = a.wrapping_add(k),
            SubK => a = a.wrapping_sub(k),
            MulK => a = a.wrapping_mul(k),
            DivK => a = a.checked_div(k).unwrap_or(0),
            ModK => a = a.checked_rem(k).unwrap_or(0),
            AndK => a &= k,
            OrK => a |= k,
            XorK => a ^= k,
            LshK => a = a.checked_shl(k).unwrap_or(0),
            RshK => a = a.checked_shr(k).unwrap_or(0),
            AddX => a = a.wrapping_add(x),
            SubX => a = a.wrapping_sub(x),
            MulX => a = a.wrapping_mul(x),
            // libpcap's bpf_filter ends the program with 0 on a division by a zero X.
            DivX | ModX if x == 0 => return 0,
            DivX => a /= x,
            ModX => a %= x,
            AndX => a &= x,
            OrX => a |= x,
            XorX => a ^= x,
            LshX => a = a.checked_shl(x).unwrap_or(0),
            RshX => a = a.checked_shr(x).unwrap_or(0),
            Neg => a = a.wrapping_neg(),
            Tax => x = a,
            Txa => a = x,
            _ => return 0,
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_insn::code::{BPF_ABS, BPF_B, BPF_JA, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET};

    #[test]
    fn loops_end_and_loads_stop() {
        // (0) ldb [0]; (1) jeq #1 jt 2 jf 3; (2) ja 0 (back to 0); (3) ret #7
        let prog = [
            Insn::stmt(BPF_LD | BPF_B | BPF_ABS, 0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
            Insn::stmt(BPF_JMP | BPF_JA, (-3i32) as u32),
            Insn::stmt(BPF_RET | BPF_K, 7),
        ];
        assert!(runnable(&prog));
        assert_eq!(run(&prog, &[2], 1), 7);
        assert_eq!(run(&prog, &[1], 1), 0, "an endless loop is stopped");
        assert_eq!(run(&prog, &[], 0), 0, "a load past the end returns 0");
    }

    #[test]
    fn division_by_zero_x_ends_the_program() {
        use sift_insn::code::{BPF_ALU, BPF_DIV, BPF_X};
        // (0) ld #5; (1) div x (X = 0); (2) ret #7
        let prog = [
            Insn::stmt(BPF_LD | sift_insn::code::BPF_IMM, 5),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::stmt(BPF_RET | BPF_K, 7),
        ];
        assert_eq!(run(&prog, &[], 0), 0, "as libpcap's bpf_filter");
        let pcap = sift_libpcap::Libpcap::load();
        if let Ok(pcap) = pcap {
            assert_eq!(pcap.filter(&prog, &[], 0), 0);
        }
    }
}
