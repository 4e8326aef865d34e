//! Differential tests against the running Linux kernel: the Linux-strict validator against
//! `SO_ATTACH_FILTER`, and the interpreter's Linux flavor against the filter the kernel runs on
//! an `AF_UNIX` datagram socket.

use sift_insn::{Insn, asm};
use sift_kernel::{RawInsn, UnixDgramFilter, check_classic, is_rejection};
use sift_verify::{Mode, validate};
use sift_vm::testgen::{self, GenConfig, Rng};
use sift_vm::{Flavor, Interpreter, PacketMeta};
use std::collections::BTreeMap;

fn raw(prog: &[Insn]) -> Vec<RawInsn> {
    prog.iter().map(|i| RawInsn::new(i.code, i.jt, i.jf, i.k)).collect()
}

/// Whether the kernel oracle can be asked at all (a trivial program must attach).
fn kernel_available() -> bool {
    match check_classic(&[RawInsn::new(0x06, 0, 0, 1)]) {
        Ok(()) => true,
        Err(e) => sift_testkit::oracle_missing::<()>("Linux SO_ATTACH_FILTER", e).is_some(),
    }
}

/// The kernel's verdict: Ok(true) accepted, Ok(false) rejected.
fn kernel_accepts(prog: &[Insn]) -> bool {
    match check_classic(&raw(prog)) {
        Ok(()) => true,
        Err(e) if is_rejection(&e) => false,
        Err(e) => panic!("could not ask the kernel: {e}"),
    }
}

/// ≥ 10^4 programs, valid and broken: our Linux-strict validator accepts exactly what the kernel
/// accepts.
#[test]
fn linux_validator_matches_so_attach_filter() {
    if !kernel_available() {
        return;
    }
    let mut rng = Rng::new(0x5eed_0005);
    let configs = [GenConfig::linux(), GenConfig::libpcap(), GenConfig::anything()];
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut mismatches = 0;
    for n in 0..20_000u32 {
        let cfg = &configs[n as usize % configs.len()];
        let mut prog = testgen::program(&mut rng, cfg);
        // Two programs in three are broken on purpose (sometimes twice).
        if n % 3 != 0 {
            for _ in 0..1 + rng.below(2) {
                prog = testgen::mutate(&mut rng, &prog);
            }
        }
        let ours = validate(&prog, Mode::Linux);
        let kernel = kernel_accepts(&prog);
        let class = match &ours {
            Ok(_) => "accepted".to_string(),
            Err(e) => format!("rejected: {}", reason_name(&e.reason)),
        };
        *outcomes.entry(class).or_default() += 1;
        if ours.is_ok() != kernel {
            mismatches += 1;
            if mismatches <= 5 {
                eprintln!(
                    "MISMATCH ours {ours:?} kernel accepts {kernel}\n{}",
                    asm::disassemble(&prog)
                );
            }
        }
    }
    eprintln!("{outcomes:#?}");
    assert_eq!(mismatches, 0);
    assert!(outcomes.get("accepted").copied().unwrap_or(0) > 5000, "{outcomes:?}");
    for reason in [
        "UnknownOpcode",
        "JumpBackward",
        "JumpOutOfRange",
        "ShiftTooLarge",
        "DivisionByZero",
        "MemoryIndex",
    ]
    .iter()
    .chain(&["UninitializedMemory", "UnknownAncillary", "LastNotRet", "TooLong", "Empty"])
    {
        let key = format!("rejected: {reason}");
        assert!(
            outcomes.get(&key).copied().unwrap_or(0) > 0,
            "no program exercised {key}: {outcomes:?}"
        );
    }
}

fn reason_name(r: &sift_verify::Reason) -> String {
    let s = format!("{r:?}");
    s.split(['(', ' ', '{']).next().unwrap_or_default().to_string()
}

/// For programs the kernel accepts, what the kernel delivers through an `AF_UNIX` datagram
/// socket equals our Linux-flavor verdict: 0 drops, otherwise min(return value, length) bytes.
///
/// An `AF_UNIX` skb has no device and no VLAN tag, so the generator leaves ancillary loads
/// out; the wire length is the datagram length.
#[test]
fn linux_flavor_matches_kernel_verdicts() {
    if !kernel_available() {
        return;
    }
    let mut rng = Rng::new(0x5eed_0006);
    let cfg = GenConfig::linux();
    let mut sock =
        UnixDgramFilter::new(&[RawInsn::new(0x06, 0, 0, u32::MAX)]).expect("socket pair");
    let (mut runs, mut mismatches, mut dropped, mut truncated) = (0u64, 0u64, 0u64, 0u64);
    for _ in 0..3_000 {
        let prog = testgen::program(&mut rng, &cfg);
        let v = validate(&prog, Mode::Linux).expect("generated programs are Linux-valid");
        sock.set_filter(&raw(&prog)).expect("kernel accepts the program");
        let ours = Interpreter::with_flavor(&v, Flavor::Linux);
        for _ in 0..8 {
            let (pkt, _) = testgen::packet(&mut rng);
            let len = pkt.len() as u32;
            let ret = ours.run_with_meta(&pkt, &PacketMeta::new(len));
            let expected = if ret == 0 { None } else { Some(ret.min(len) as usize) };
            let got = sock.deliver(&pkt).expect("deliver");
            runs += 1;
            dropped += u64::from(got.is_none());
            truncated += u64::from(got.is_some_and(|n| n < pkt.len()));
            if got != expected {
                mismatches += 1;
                if mismatches <= 5 {
                    eprintln!(
                        "MISMATCH ours {expected:?} (ret {ret}) kernel {got:?}, {} bytes {:02x?}\n{}",
                        pkt.len(),
                        &pkt[..pkt.len().min(64)],
                        asm::disassemble(&prog)
                    );
                }
            }
        }
    }
    eprintln!(
        "{runs} datagrams, {dropped} dropped, {truncated} truncated, {mismatches} mismatches"
    );
    assert_eq!(mismatches, 0);
    assert!(dropped > runs / 10 && runs - dropped > runs / 10, "verdicts too one-sided");
}
