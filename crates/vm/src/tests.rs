//! Unit tests of the interpreter's semantics, written in assembler.

use super::*;
use crate::testgen::{self, GenConfig, Rng};
use sift_insn::asm::assemble;
use sift_verify::{Mode, validate};

fn interp(src: &str, flavor: Flavor) -> Interpreter {
    let prog = assemble(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let v = validate(&prog, Mode::Libpcap).unwrap_or_else(|e| panic!("{e}\n{src}"));
    Interpreter::with_flavor(&v, flavor)
}

fn run(src: &str, pkt: &[u8]) -> u32 {
    interp(src, Flavor::Libpcap).run(pkt, pkt.len() as u32)
}

#[test]
fn loads_past_the_end_reject() {
    let pkt = [1u8, 2, 3, 4, 5, 6];
    assert_eq!(run("ld [2]\nret a", &pkt), 0x0304_0506);
    assert_eq!(run("ld [3]\nret a", &pkt), 0);
    assert_eq!(run("ldh [4]\nret a", &pkt), 0x0506);
    assert_eq!(run("ldh [5]\nret a", &pkt), 0);
    assert_eq!(run("ldb [5]\nret a", &pkt), 6);
    assert_eq!(run("ldb [6]\nret #1", &pkt), 0);
    assert_eq!(run("ld [4294967295]\nret #1", &pkt), 0);
    assert_eq!(run("ldx #4294967295\nldb [x + 1]\nret #1", &pkt), 0, "no 32-bit wrap in [x+k]");
    assert_eq!(run("ldx #2\nld [x + 2]\nret a", &pkt), 0);
    assert_eq!(run("ldx #2\nldh [x + 2]\nret a", &pkt), 0x0506);
    assert_eq!(run("ldxb 4*([0]&0xf)\ntxa\nret a", &[0x45]), 20);
    assert_eq!(run("ldxb 4*([1]&0xf)\nret #1", &[0x45]), 0);
    assert_eq!(run("ld [0]\nret #1", &[]), 0);
}

#[test]
fn arithmetic_edges() {
    assert_eq!(run("ld #7\nldx #0\ndiv x\nret #5", &[]), 0, "div by X=0 ends the filter");
    assert_eq!(run("ld #7\nldx #0\nmod x\nret #5", &[]), 0);
    assert_eq!(run("ld #7\nldx #2\nmod x\nret a", &[]), 1);
    assert_eq!(run("ld #7\ndiv #2\nret a", &[]), 3);
    assert_eq!(run("ld #1\nldx #32\nlsh x\nret a", &[]), 0);
    assert_eq!(run("ld #1\nldx #31\nlsh x\nret a", &[]), 0x8000_0000);
    assert_eq!(run("ld #1\nlsh #32\nret a", &[]), 0, "constant shifts ≥ 32 give 0");
    assert_eq!(run("ld #0xffffffff\nrsh #33\nret a", &[]), 0);
    assert_eq!(run("ld #5\nneg\nret a", &[]), 5u32.wrapping_neg());
    assert_eq!(run("ld #0xffffffff\nadd #2\nret a", &[]), 1);
    assert_eq!(run("ld #0x10000\nmul #0x10000\nret a", &[]), 0);
    assert_eq!(run("ld M[3]\nret a", &[]), 0, "memory starts zeroed");
    assert_eq!(run("ld #9\nst M[3]\nld #0\nldx M[3]\ntxa\nret a", &[]), 9);
    assert_eq!(run("ld #len\nret a", &[0; 7]), 7);
    assert_eq!(interp("ld #len\nret a", Flavor::Libpcap).run(&[0; 7], 1500), 1500);
    assert_eq!(interp("ldx #len\ntxa\nret a", Flavor::Libpcap).run(&[], 60), 60);
}

#[test]
fn jumps() {
    let src = "ldb [0]\njeq #1, one, other\none: ret #11\nother: jgt #5, big\nret #22\nbig: jset #0x80, neg, pos\nneg: ret #33\npos: ja end\nret #99\nend: ret #44";
    assert_eq!(run(src, &[1]), 11);
    assert_eq!(run(src, &[2]), 22);
    assert_eq!(run(src, &[0x81]), 33);
    assert_eq!(run(src, &[6]), 44);
}

#[test]
fn ancillary_flavors() {
    let vlan = "ldb vlan_tci\nret a";
    let meta =
        PacketMeta { wire_len: 1, vlan_tci: 0x123, vlan_present: true, ..PacketMeta::new(1) };
    // libpcap: only byte loads of the two VLAN fields, only with aux data.
    assert_eq!(interp(vlan, Flavor::Libpcap).run(&[0], 1), 0);
    assert_eq!(interp(vlan, Flavor::Libpcap).run_with_meta(&[0], &meta), 0x123);
    assert_eq!(interp("ldb vlan_pr\nret a", Flavor::Libpcap).run_with_meta(&[0], &meta), 1);
    assert_eq!(interp("ldh vlan_tci\nret a", Flavor::Libpcap).run_with_meta(&[0], &meta), 0);
    assert_eq!(interp("ld ifidx\nret #1", Flavor::Libpcap).run_with_meta(&[0], &meta), 0);
    // Linux: every size, every field.
    assert_eq!(interp("ldh vlan_tci\nret a", Flavor::Linux).run_with_meta(&[0], &meta), 0x123);
    let m = PacketMeta {
        protocol: 0x800,
        pkttype: 4,
        ifindex: Some(7),
        hatype: Some(1),
        mark: 99,
        queue: 3,
        rxhash: 0xabcd,
        cpu: 2,
        vlan_tpid: 0x88a8,
        pay_offset: 34,
        random: 1234,
        ..PacketMeta::new(10)
    };
    for (name, want) in [
        ("proto", 0x800),
        ("type", 4),
        ("ifidx", 7),
        ("hatype", 1),
        ("mark", 99),
        ("queue", 3),
        ("rxhash", 0xabcd),
        ("cpu", 2),
        ("vlan_tpid", 0x88a8),
        ("poff", 34),
        ("rand", 1234),
    ] {
        assert_eq!(
            interp(&format!("ld {name}\nret a"), Flavor::Linux).run_with_meta(&[0; 10], &m),
            want,
            "{name}"
        );
    }
    assert_eq!(
        interp("ld ifidx\nret #1", Flavor::Linux).run_with_meta(&[0], &PacketMeta::new(1)),
        0,
        "no device"
    );
    assert_eq!(interp("ld #0xf0\nldx #0x0f\nld [xor_x]\nret a", Flavor::Linux).run(&[], 0), 0xff);
    // Header-relative loads.
    let hm = PacketMeta { mac_header: Some(0), net_header: Some(14), ..PacketMeta::new(20) };
    let pkt: Vec<u8> = (0..20).collect();
    assert_eq!(
        interp("ldb [4293918721]\nret a", Flavor::Linux).run_with_meta(&pkt, &hm),
        15,
        "SKF_NET_OFF + 1"
    );
    assert_eq!(
        interp("ldb [4292870146]\nret a", Flavor::Linux).run_with_meta(&pkt, &hm),
        2,
        "SKF_LL_OFF + 2"
    );
    assert_eq!(interp("ldb [4293918721]\nret a", Flavor::Libpcap).run_with_meta(&pkt, &hm), 0);
}

#[test]
fn linux_flavor_differences() {
    // [x + k] wraps in 32 bits in the kernel.
    let src = "ldx #0xffffffff\nldb [x + 3]\nret a";
    assert_eq!(interp(src, Flavor::Libpcap).run(&[10, 11, 12], 3), 0);
    assert_eq!(interp(src, Flavor::Linux).run(&[10, 11, 12], 3), 12);
    // Shifts by X are masked to 5 bits in the kernel.
    let src = "ld #1\nldx #33\nlsh x\nret a";
    assert_eq!(interp(src, Flavor::Libpcap).run(&[], 0), 0);
    assert_eq!(interp(src, Flavor::Linux).run(&[], 0), 2);
}

#[test]
fn netlink_attributes() {
    // Two attributes: type 1 (len 8) then type 5 (len 12, nested: type 9 len 8).
    let mut pkt = vec![];
    pkt.extend_from_slice(&[8, 0, 1, 0, 0xaa, 0xbb, 0xcc, 0xdd]);
    pkt.extend_from_slice(&[12, 0, 5, 0, 8, 0, 9, 0, 1, 2, 3, 4]);
    let find = |src: &str| interp(src, Flavor::Linux).run(&pkt, pkt.len() as u32);
    assert_eq!(find("ld #0\nldx #5\nld nla\nret a"), 8);
    assert_eq!(find("ld #0\nldx #7\nld nla\nret a"), 0);
    assert_eq!(find("ld #8\nldx #9\nld nlan\nret a"), 12);
    assert_eq!(find("ld #1000\nldx #9\nld nlan\nret a"), 0);
}

#[test]
fn counting() {
    let i = interp("ldb [0]\njeq #1, a, b\na: ret #1\nb: ld #2\nret a", Flavor::Libpcap);
    assert_eq!(i.run_counted(&[1], 1), Counted { ret: 1, executed: 3, out_of_budget: false });
    assert_eq!(i.run_counted(&[2], 1), Counted { ret: 2, executed: 4, out_of_budget: false });
    assert_eq!(i.run_counted(&[], 0), Counted { ret: 0, executed: 1, out_of_budget: false });
}

/// Random valid programs (anything libpcap mode accepts, including uninitialised reads and big
/// shifts) never panic and never run longer than their length, in both flavors.
#[test]
fn random_programs_terminate_quickly() {
    let mut rng = Rng::new(7);
    let cfg = GenConfig::anything();
    for _ in 0..20_000 {
        let prog = testgen::program(&mut rng, &cfg);
        let v = validate(&prog, Mode::Libpcap).expect("generator makes valid programs");
        let (pkt, wire) = testgen::packet(&mut rng);
        for flavor in [Flavor::Libpcap, Flavor::Linux] {
            let i = Interpreter::with_flavor(&v, flavor);
            let c = i.run_counted(&pkt, wire);
            assert!(c.executed as usize <= prog.len());
            assert_eq!(c.ret, i.run(&pkt, wire));
        }
    }
}

/// The generator's Linux programs pass the Linux validator.
#[test]
fn generated_linux_programs_are_linux_valid() {
    let mut rng = Rng::new(8);
    for _ in 0..20_000 {
        let prog = testgen::program(&mut rng, &GenConfig::linux());
        if let Err(e) = validate(&prog, Mode::Linux) {
            panic!("{e}\n{}", sift_insn::asm::disassemble(&prog));
        }
        let prog = testgen::program(&mut rng, &GenConfig::libpcap());
        validate(&prog, Mode::Libpcap).unwrap();
    }
}

/// The `portrange` fusion (`ldh [x+k]; jge #0; jgt #n` as one step) still counts every
/// instruction, including when the load fails.
#[test]
fn range_fusion_counts_each_instruction() {
    let src = "ldxb 4*([0]&0xf)\nldh [x+0]\njge #0, hi, drop\nhi: jgt #100, drop, ok\nok: ret #1\ndrop: ret #0\n";
    let prog = sift_insn::asm::assemble(src).unwrap();
    let v = sift_verify::validate(&prog, sift_verify::Mode::Linux).unwrap();
    let i = Interpreter::new(&v);
    let mut pkt = [0x41u8, 0, 0, 0, 0, 50, 0, 0];
    assert_eq!(i.run_counted(&pkt, 8), Counted { ret: 1, executed: 5, out_of_budget: false });
    pkt[4] = 1;
    assert_eq!(i.run_counted(&pkt, 8), Counted { ret: 0, executed: 5, out_of_budget: false });
    assert_eq!(i.run_counted(&pkt[..5], 8), Counted { ret: 0, executed: 2, out_of_budget: false });
    let abs = "ldh [4]\njge #0, hi, drop\nhi: jgt #100, drop, ok\nok: ret #1\ndrop: ret #0\n";
    let prog = sift_insn::asm::assemble(abs).unwrap();
    let i = Interpreter::new(&sift_verify::validate(&prog, sift_verify::Mode::Linux).unwrap());
    assert_eq!(i.run_counted(&pkt, 8), Counted { ret: 0, executed: 4, out_of_budget: false });
    assert_eq!(i.run_counted(&pkt[..5], 8), Counted { ret: 0, executed: 1, out_of_budget: false });
}

#[test]
fn predecoded_instructions_are_16_bytes() {
    assert_eq!(std::mem::size_of::<Op>(), 16);
}

/// Random programs over random batches (empty and cut-short packets, sizes around the group
/// size): `run_batch` gives each packet the value `run` gives it, whatever the grouping, in
/// both flavors, and counts the accepted ones.
#[test]
fn batches_give_every_packet_its_run_value() {
    let mut rng = Rng::new(0xBA7C);
    let mut verdicts = vec![0xdead_beef; 5];
    for cfg in [GenConfig::anything(), GenConfig::libpcap()] {
        for _ in 0..400 {
            let prog = testgen::program(&mut rng, &cfg);
            let v = validate(&prog, Mode::Libpcap).expect("generator makes valid programs");
            let n = rng.pick(&[0usize, 1, 2, 15, 16, 17, 63, 64, 65, 100]);
            let packets: Vec<(Vec<u8>, u32)> = (0..n)
                .map(|_| {
                    let (mut p, wire) = testgen::packet(&mut rng);
                    match rng.below(6) {
                        0 => p.clear(),
                        1 => p.truncate(rng.below(p.len() as u64 + 1) as usize),
                        _ => {}
                    }
                    (p, wire)
                })
                .collect();
            let batch: Vec<PacketRef<'_>> =
                packets.iter().map(|(p, w)| PacketRef::new(p, *w)).collect();
            for flavor in [Flavor::Libpcap, Flavor::Linux] {
                let i = Interpreter::with_flavor(&v, flavor);
                let want: Vec<u32> = packets.iter().map(|(p, w)| i.run(p, *w)).collect();
                let accepted = want.iter().filter(|&&r| r != 0).count();
                assert_eq!(i.run_batch(&batch, &mut verdicts), accepted);
                assert_eq!(verdicts, want, "{}", sift_insn::asm::disassemble(&prog));
                for group in [0, 1, 3, 16, 64, 1000] {
                    verdicts.push(1);
                    assert_eq!(i.run_batch_grouped(&batch, &mut verdicts, group), accepted);
                    assert_eq!(verdicts, want, "groups of {group}");
                }
            }
        }
    }
}

#[test]
fn packet_refs_describe_their_slice() {
    let bytes: Vec<u8> = (0..100).collect();
    let p = PacketRef::new(&bytes[3..10], 99);
    assert_eq!((p.data(), p.wire_len()), (&bytes[3..10], 99));
    assert_eq!(PacketRef::from((&bytes[..], 7)), PacketRef::new(&bytes, 7));
    assert_eq!(PacketRef::SIZE, std::mem::size_of::<PacketRef<'_>>());
    // The three fields generated code reads do not overlap each other or the slice.
    let fields = [
        (PacketRef::ADDR_OFFSET, std::mem::size_of::<usize>()),
        (PacketRef::CAPLEN_OFFSET, 4),
        (PacketRef::WIRE_LEN_OFFSET, 4),
    ];
    for (i, &(at, len)) in fields.iter().enumerate() {
        assert!(at >= 16 && at + len <= PacketRef::SIZE, "after the slice, inside");
        for &(other, other_len) in &fields[..i] {
            assert!(at + len <= other || other + other_len <= at);
        }
    }
    assert_eq!(PacketRef::SIZE, 32, "two descriptors per cache line");
}

/// `M[0] += 1` until it reaches `n`, then return it: a loop of eight instructions whose `ja`
/// jumps back over eight (three `ldx #0`, `ld M[0]; add #1; st M[0]; jeq #n; ja`), so `n - 1`
/// backward jumps of 8, which divides the budget.
pub(crate) fn counting_loop(n: u32) -> Validated {
    use sift_insn::Insn;
    let prog = [
        Insn::stmt(0x01, 0),            // 0: ldx #0
        Insn::stmt(0x01, 0),            // 1: ldx #0
        Insn::stmt(0x01, 0),            // 2: ldx #0
        Insn::stmt(0x60, 0),            // 3: ld M[0]
        Insn::stmt(0x04, 1),            // 4: add #1
        Insn::stmt(0x02, 0),            // 5: st M[0]
        Insn::jump(0x15, n, 1, 0),      // 6: jeq #n, 8, 7
        Insn::stmt(0x05, u32::MAX - 7), // 7: ja 0 (back over 8)
        Insn::stmt(0x16, 0),            // 8: ret a
    ];
    validate(&prog, Mode::LibpcapLoops).unwrap()
}

#[test]
fn loops_run_until_the_budget_is_spent() {
    use sift_verify::LOOP_BUDGET;
    // Small loops run to their end, as libpcap's `bpf_filter` runs them.
    for n in [1, 2, 100, 70_000] {
        let v = counting_loop(n);
        assert!(!v.is_acyclic());
        for flavor in [Flavor::Libpcap, Flavor::Linux] {
            assert_eq!(Interpreter::with_flavor(&v, flavor).run(&[], 0), n);
        }
    }
    // The last round that fits the budget (spending it exactly), and the first that does not.
    let rounds = LOOP_BUDGET / 8;
    assert_eq!(rounds * 8, LOOP_BUDGET);
    let fits = Interpreter::new(&counting_loop(rounds + 1));
    assert_eq!(fits.run(&[], 0), rounds + 1);
    let counted = fits.run_counted(&[], 0);
    assert_eq!((counted.ret, counted.executed), (rounds + 1, u64::from(rounds) * 8 + 8));
    assert!(!counted.out_of_budget);
    let over = Interpreter::new(&counting_loop(rounds + 2));
    assert_eq!(over.run(&[], 0), 0, "the jump past the budget ends the run with 0");
    assert!(over.run_counted(&[], 0).out_of_budget, "and says so when counting");
    assert_eq!(over.run_batch(&[PacketRef::new(&[], 0); 2], &mut Vec::new()), 0);
    // A loop that never ends, onto itself: bounded by the program's length plus the budget.
    let forever = [sift_insn::Insn::stmt(0x05, u32::MAX), sift_insn::Insn::stmt(0x06, 1)];
    let v = validate(&forever, Mode::LibpcapLoops).unwrap();
    let counted = Interpreter::new(&v).run_counted(&[], 0);
    assert_eq!((counted.ret, counted.executed), (0, u64::from(LOOP_BUDGET) + 1));
    assert!(counted.out_of_budget);
    assert!(counted.executed <= forever.len() as u64 + u64::from(LOOP_BUDGET));
}
