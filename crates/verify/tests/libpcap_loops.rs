//! `Mode::LibpcapLoops` is libpcap's own rule: it accepts exactly the programs libpcap's
//! `bpf_filter` runs (`sift_libpcap::Libpcap::check_runnable`: `bpf_validate` minus the codes
//! that abort, which `sift-libpcap`'s oracle test checks against the system library), backward
//! `ja`s included; `Mode::Libpcap` is the same minus every program with a backward jump.

use sift_insn::{Insn, Opcode};
use sift_libpcap::Libpcap;
use sift_verify::{Mode, Reason, validate};

use sift_testkit::Rng;

fn insn(rng: &mut Rng, len: usize) -> Insn {
    let code = match rng.below(8) {
        0 => rng.next() as u16,
        1 => Opcode::Ja.code(),
        2 => Opcode::RetK.code(),
        _ => Opcode::ALL[rng.below(Opcode::ALL.len() as u64) as usize].code(),
    };
    let k = match rng.below(6) {
        0 => rng.next() as u32,
        1 => (rng.below(len as u64 + 2) as u32).wrapping_neg(),
        2 => u32::MAX - rng.below(4) as u32,
        _ => rng.below(len as u64 + 2) as u32,
    };
    let off = |rng: &mut Rng| rng.below(len as u64 + 1) as u8;
    Insn::new(code, off(rng), off(rng), k)
}

#[test]
fn libpcap_loops_mode_accepts_what_libpcap_runs() {
    let mut rng = Rng(0x0dd_b10c_5eed);
    let (mut accepted, mut loops) = (0, 0);
    for _ in 0..200_000 {
        let len = rng.below(9) as usize;
        let prog: Vec<Insn> = (0..len).map(|_| insn(&mut rng, len)).collect();
        let ours = validate(&prog, Mode::LibpcapLoops);
        let theirs = Libpcap::check_runnable(&prog);
        assert_eq!(ours.is_ok(), theirs.is_ok(), "{prog:?}: {ours:?} / {theirs:?}");
        let forward = validate(&prog, Mode::Libpcap);
        match &ours {
            Ok(v) if v.is_acyclic() => assert!(forward.is_ok(), "{prog:?}"),
            Ok(_) => {
                loops += 1;
                assert!(matches!(forward, Err(e) if e.reason == Reason::JumpBackward), "{prog:?}");
            }
            Err(_) => assert!(forward.is_err(), "{prog:?}"),
        }
        accepted += usize::from(ours.is_ok());
    }
    assert!(accepted > 5000 && loops > 300, "{accepted} accepted, {loops} loops");
}
