//! `protochain` walks: one IR statement, expanded only at emission, as a loop or unrolled.
//!
//! **Why it exists.** `ip6 protochain 6` follows the chain of IPv6 extension headers and AH
//! headers from the network header until it finds protocol 6, `IPPROTO_NONE`, a header that
//! is neither, or the end of the packet. libpcap's `gen_protochain` writes that walk as a loop
//! of 29 instructions (17 for IPv4, which only has AH) with a backward `ja`; its `bpf_filter`
//! runs it, and the kernel, whose classic BPF only jumps forward, refuses it. sift's IR and
//! optimizer work on acyclic graphs, and sift's engines bound loops
//! (`sift_verify::LOOP_BUDGET`), so the walk is **one opaque statement**, [`Stmt::Walk`]
//! carrying a [`Walk`], and becomes code only when the graph is emitted
//! ([`crate::emit::emit_as`]), in one of two [`WalkForm`]s:
//!
//! * [`WalkForm::Loop`]: libpcap's own loop, instruction for instruction (so the unoptimized
//!   program equals `tcpdump -d`'s). For sift's engines and libpcap's `bpf_filter`: programs
//!   validated under `Mode::LibpcapLoops` (capture files, `sift bench`, `sift compile`).
//! * [`WalkForm::Unrolled`]`(n)`: `n` header steps of forward-only code, for the kernel
//!   (`Mode::Linux`, and `Mode::Libpcap`, what a live capture attaches with
//!   `SO_ATTACH_FILTER` and what is translated to eBPF). [`crate::pipeline::finish`] picks the
//!   largest `n` that keeps the whole program within the kernel's 4,096 instructions (at least
//!   [`MIN_UNROLLED_STEPS`]).
//!
//! Both forms are self-contained runs of instructions: every jump inside lands inside, and
//! every way out lands on the instruction after the run (the loop ends with libpcap's `add #0`,
//! on which its exits land). So emission lays the block holding a walk out as any other, the
//! walk counting [`Walk::len`] instructions; nothing of the graph changes with the form.
//!
//! **The statement's contract**, which the optimizer relies on without looking inside: it
//! reads A (the first next-header value), X (where that header starts, from the network
//! header) and `M[slot]`, and writes A (the header value the walk stopped at), X (where that
//! header starts) and maybe `M[slot]` (its scratch word; [`Walk::uses`]/[`Walk::defs`] count it
//! as both, so a store before the walk is never thought dead). It reads the packet and may end
//! the program with 0 on packets nothing else predicts (a load past the captured length, or the
//! loop budget), like an `[x + k]` load of unknown X: never moved, never deleted as dead, never
//! skipped by jump threading, and its results are unknown values (the optimizer's
//! `value::Risk::Other` with fresh value numbers). The code generator puts the block's test
//! `jeq #v` right after it, and that test is the only reader of what it leaves in A.
//!
//! **What the forms compute.** The loop follows libpcap exactly, oddities included: a load
//! past the captured data ends the whole program with 0, and after an AH header the offset is
//! the AH length alone (not added to the previous offset), so a chain may cycle — there
//! libpcap's `bpf_filter` never returns, and sift's engines return 0 once the loop budget is
//! spent. The unrolled form gives the loop's result on every packet whose walk ends within `n`
//! header advances; a walk that needs more leaves A = `!v` (not `v`), so the walk's test is
//! false: the `protochain` term is false past the unrolled depth, as it always was in sift.
//! `MIN_UNROLLED_STEPS` covers every packet of the tcpdump and libpcap test corpora many times
//! over (`tests/gen/protochain.rs` checks both forms against libpcap there and on generated
//! chains).

use crate::r#gen::ipproto as proto;
use crate::ir::*;
use sift_insn::Insn;
use sift_insn::code::*;

/// The IPv6 extension headers the walk advances over (in libpcap's order of tests).
const EXTENSIONS: [u32; 4] = [proto::HOPOPTS, proto::DSTOPTS, proto::ROUTING, proto::FRAGMENT];

/// The fewest header steps an unrolled walk gets, even where more would not fit the kernel's
/// limit (the program is then too long for the kernel, which refuses it, and runs in user
/// space). The longest chain in the tcpdump and libpcap test corpora is a handful of headers.
pub const MIN_UNROLLED_STEPS: usize = 16;

/// The most header steps an unrolled walk gets (a bound on the search for the largest that
/// fits; an IPv4 walk of 4,096 instructions has fewer than 300).
pub const MAX_UNROLLED_STEPS: usize = 4096;

/// Instructions per unrolled header step: IPv6 (seven tests, the way out, both advances and
/// the jump between them), IPv4 (three tests, the way out, the AH advance).
const STEP_LEN_V6: usize = 28;
const STEP_LEN_V4: usize = 15;

/// One `protochain` walk (gencode's `gen_protochain` after its start): see the module
/// documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Walk {
    /// The protocol looked for (`v` of `protochain v`).
    pub want: u32,
    /// Where the network-layer header starts: the `k` of the walk's `[x + k]` loads.
    pub nl: u32,
    /// IPv6 (extension headers and AH) or IPv4 (AH only).
    pub ipv6: bool,
    /// The scratch word that keeps the next header while the walk loads a length.
    pub slot: Slot,
}

/// How emission expands the walks of a graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalkForm {
    /// libpcap's loop (a backward `ja`): for engines that run `Mode::LibpcapLoops` programs.
    Loop,
    /// This many header steps, forward-only: for the kernel.
    Unrolled(usize),
}

/// `jeq #k` with relative offsets.
fn jeq(k: u32, jt: usize, jf: usize) -> Insn {
    let off = |o: usize| u8::try_from(o).expect("offsets inside a walk fit in 8 bits");
    Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, off(jt), off(jf))
}

/// `ja` from instruction `at` to `to` (either way: a jump back wraps around in 32 bits, as
/// libpcap computes it).
fn ja(at: usize, to: usize) -> Insn {
    Insn::stmt(BPF_JMP | BPF_JA, (to as u32).wrapping_sub(at as u32 + 1))
}

/// The instruction of one of the walk's own statements (never a walk).
fn insn(s: Stmt) -> Insn {
    s.to_insn().expect("the walk's own statements are single instructions")
}

impl Walk {
    /// The registers the walk reads: A, X and its scratch word (which it may leave as it was).
    pub fn uses(&self) -> RegSet {
        RegSet::A.union(RegSet::X).union(RegSet::mem(self.slot))
    }

    /// The registers the walk writes: A, X and (maybe) its scratch word.
    pub fn defs(&self) -> RegSet {
        self.uses()
    }

    /// `ld [x + nl + d]`, a byte.
    fn byte(&self, d: u32) -> Stmt {
        Stmt::Ld(Src::Ind(Size::B, self.nl.wrapping_add(d)))
    }

    /// Over an IPv6 extension header: A = its next header, X += (its length + 1) * 8.
    fn extension(&self) -> [Stmt; 8] {
        [
            self.byte(0),
            Stmt::St(self.slot),
            self.byte(1),
            Stmt::Alu(AluOp::Add, Operand::K(1)),
            Stmt::Alu(AluOp::Mul, Operand::K(8)),
            Stmt::Alu(AluOp::Add, Operand::X),
            Stmt::Tax,
            Stmt::Ld(Src::Mem(self.slot)),
        ]
    }

    /// Over an AH header, as libpcap: A = its next header, X = (its length + 2) * 4 (not
    /// added to X: libpcap's oddity, kept).
    fn ah(&self) -> [Stmt; 11] {
        [
            Stmt::Txa,
            self.byte(0),
            Stmt::St(self.slot),
            Stmt::Txa,
            Stmt::Alu(AluOp::Add, Operand::K(1)),
            Stmt::Tax,
            self.byte(0),
            Stmt::Alu(AluOp::Add, Operand::K(2)),
            Stmt::Alu(AluOp::Mul, Operand::K(4)),
            Stmt::Tax,
            Stmt::Ld(Src::Mem(self.slot)),
        ]
    }

    /// How many instructions the walk takes in `form`.
    pub fn len(&self, form: WalkForm) -> usize {
        match form {
            WalkForm::Loop if self.ipv6 => 29,
            WalkForm::Loop => 17,
            WalkForm::Unrolled(n) => n * self.step_len() + 2,
        }
    }

    fn step_len(&self) -> usize {
        if self.ipv6 { STEP_LEN_V6 } else { STEP_LEN_V4 }
    }

    /// The walk's instructions in `form`: self-contained, every way out landing just past them.
    pub fn insns(&self, form: WalkForm) -> Vec<Insn> {
        let out = match form {
            WalkForm::Loop => self.looped(),
            WalkForm::Unrolled(n) => self.unrolled(n),
        };
        debug_assert_eq!(out.len(), self.len(form));
        out
    }

    /// libpcap's loop, as `gen_protochain` emits it after its start: every exit lands on the
    /// last instruction (`add #0`), after which the program goes on; the `ja`s back land on
    /// the first.
    fn looped(&self) -> Vec<Insn> {
        let nop = Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 0);
        let end = self.len(WalkForm::Loop) - 1;
        let mut out: Vec<Insn> = Vec::with_capacity(end + 1);
        // Relative offsets from instruction `at` to `to`.
        let rel = |at: usize, to: usize| to - at - 1;
        out.push(jeq(self.want, rel(0, end), 0));
        out.push(jeq(proto::NONE, rel(1, end), 0));
        if self.ipv6 {
            // The extension advance starts at 6; the AH test at 15.
            for (i, &h) in EXTENSIONS.iter().enumerate() {
                let at = 2 + i;
                let jf = if i == 3 { rel(at, 15) } else { 0 };
                out.push(jeq(h, rel(at, 6), jf));
            }
            out.extend(self.extension().map(insn));
            out.push(ja(out.len(), 0));
        } else {
            // Where IPv6's extension tests are, libpcap puts a no-op.
            out.push(nop);
        }
        let at = out.len();
        out.push(jeq(proto::AH, 0, rel(at, end)));
        out.extend(self.ah().map(insn));
        out.push(ja(out.len(), 0));
        out.push(nop);
        out
    }

    /// `n` header steps, each leaving (to just past the walk) on `v`, `IPPROTO_NONE` or a
    /// header it does not advance over, then `jeq #v` once more and A = `!v` when that fails.
    ///
    /// An IPv6 step, from its first instruction:
    ///
    /// ```text
    ///  0    jeq #v        leave
    ///  1    jeq #59       leave
    ///  2-5  jeq #0/#60/#43/#44   ext    (else 6)
    ///  6    jeq #51       ah, leave
    ///  7    leave: ja past the walk
    ///  8-18 ah: the AH advance
    /// 19    ja next step
    /// 20-27 ext: the extension advance, falling into the next step
    /// ```
    ///
    /// An IPv4 step is `jeq #v`, `jeq #59`, `jeq #51`, the way out and the AH advance. Every
    /// conditional jump stays inside its step; the one long jump per step is the `ja` out.
    fn unrolled(&self, n: usize) -> Vec<Insn> {
        let total = self.len(WalkForm::Unrolled(n));
        let mut out: Vec<Insn> = Vec::with_capacity(total);
        for _ in 0..n {
            let base = out.len();
            // Relative offset from step position `at` to step position `to`.
            let rel = |at: usize, to: usize| to - at - 1;
            let leave = if self.ipv6 { 7 } else { 3 };
            out.push(jeq(self.want, rel(0, leave), 0));
            out.push(jeq(proto::NONE, rel(1, leave), 0));
            if self.ipv6 {
                for (i, &h) in EXTENSIONS.iter().enumerate() {
                    out.push(jeq(h, rel(2 + i, 20), 0));
                }
            }
            out.push(jeq(proto::AH, rel(leave - 1, leave + 1), rel(leave - 1, leave)));
            out.push(ja(base + leave, total));
            out.extend(self.ah().map(insn));
            if self.ipv6 {
                out.push(ja(out.len(), base + STEP_LEN_V6));
                out.extend(self.extension().map(insn));
            }
            debug_assert_eq!(out.len() - base, self.step_len());
        }
        out.push(jeq(self.want, 1, 0));
        out.push(Stmt::Ld(Src::Imm(!self.want)).to_insn().expect("a load is an instruction"));
        out
    }

    /// The walk as one line of a graph dump (see [`crate::print`]):
    /// `walk     ip6 #0x6 [x + 14] M[0]`.
    pub fn text(&self) -> String {
        let proto = if self.ipv6 { "ip6" } else { "ip" };
        format!(
            "{:<8} {proto} #{:#x} [x + {}] M[{}]",
            "walk",
            self.want,
            self.nl,
            self.slot.index()
        )
    }

    /// Reads [`Walk::text`] back.
    pub fn parse(text: &str) -> Option<Walk> {
        let rest = text.trim().strip_prefix("walk")?;
        let mut words = rest.split_whitespace();
        let ipv6 = match words.next()? {
            "ip6" => true,
            "ip" => false,
            _ => return None,
        };
        let want = words.next()?.strip_prefix('#')?;
        let want = match want.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => want.parse().ok()?,
        };
        if (words.next()?, words.next()?) != ("[x", "+") {
            return None;
        }
        let nl = words.next()?.strip_suffix(']')?.parse().ok()?;
        let slot = words.next()?.strip_prefix("M[")?.strip_suffix(']')?.parse().ok()?;
        let slot = Slot::new(slot)?;
        words.next().is_none().then_some(Walk { want, nl, ipv6, slot })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(ipv6: bool) -> Walk {
        Walk { want: 6, nl: 14, ipv6, slot: Slot::new(0).unwrap() }
    }

    /// Every jump of every form lands inside the walk or just past it, and only the loop's
    /// `ja`s go back.
    #[test]
    fn forms_are_self_contained() {
        for ipv6 in [false, true] {
            let w = walk(ipv6);
            for form in [WalkForm::Loop, WalkForm::Unrolled(0), WalkForm::Unrolled(3)] {
                let insns = w.insns(form);
                assert_eq!(insns.len(), w.len(form));
                for (i, insn) in insns.iter().enumerate() {
                    let next = i as u32 + 1;
                    let targets: Vec<u32> = if insn.code == BPF_JMP | BPF_JA {
                        vec![next.wrapping_add(insn.k)]
                    } else if insn.code & 0x07 == BPF_JMP {
                        vec![next + u32::from(insn.jt), next + u32::from(insn.jf)]
                    } else {
                        vec![]
                    };
                    for t in targets {
                        assert!(t as usize <= insns.len(), "{form:?} {i}: {t}");
                        assert!(
                            t > i as u32 || form == WalkForm::Loop,
                            "{form:?}: {i} jumps back to {t}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn text_round_trips() {
        for ipv6 in [false, true] {
            let w = Walk { want: 0x11, nl: 4, ipv6, slot: Slot::new(15).unwrap() };
            assert_eq!(Walk::parse(&w.text()), Some(w));
        }
        assert_eq!(walk(true).text(), "walk     ip6 #0x6 [x + 14] M[0]");
        for bad in ["walk ip7 #6 [x + 14] M[0]", "walk ip #6 [x + 14] M[16]", "walk ip #6"] {
            assert_eq!(Walk::parse(bad), None, "{bad}");
        }
    }

    /// A graph holding walks prints and reads back (`print::text`, `print::parse`), and emits
    /// the same program after the round trip.
    #[test]
    fn graphs_with_walks_print_and_parse() {
        let resolver = sift_filter::TableResolver::well_known();
        let opts = crate::pipeline::Options::new(sift_wire::LinkType::EN10MB, &resolver);
        let g = crate::pipeline::graph("protochain 17 and tcp", &opts).unwrap();
        let text = crate::print::text(&g.cfg);
        assert!(text.contains("    walk     ip #0x11 [x + 14] M[1]\n"), "{text}");
        assert!(text.contains("    walk     ip6 #0x11 [x + 14] M[1]\n"), "{text}");
        let back = crate::print::parse(&text).unwrap();
        assert_eq!(crate::print::text(&back), text);
        for form in [WalkForm::Loop, WalkForm::Unrolled(20)] {
            let emit = |cfg: &Cfg| crate::emit::emit_as(cfg, form).unwrap();
            assert_eq!(emit(&back), emit(&g.cfg), "{form:?}");
        }
    }
}
