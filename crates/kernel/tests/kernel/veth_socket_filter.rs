//! The kernel's socket filter on a veth pair (`AF_PACKET` + `SO_ATTACH_FILTER`) against sift's
//! interpreter, on sift-gen Ethernet traffic with filters compiled by sift.

use sift_compile::pipeline::{self, LinkType};
use sift_filter::TableResolver;
use sift_gen::{Config, Generator};
use sift_insn::{Insn, Opcode};
use sift_kernel::{VethError, VethSocketFilter, kernel_view};
use sift_verify::Mode;
use sift_vm::{Flavor, Interpreter};

fn engine(prog: &[Insn]) -> Option<VethSocketFilter> {
    match VethSocketFilter::new(prog) {
        Ok(e) => Some(e),
        Err(VethError::Unavailable(why)) => {
            sift_testkit::oracle_missing("kernel veth + AF_PACKET", why)
        }
        Err(e) => panic!("{e}"),
    }
}

/// Generated Ethernet frames (captured bytes only; some cut short by the generator).
fn frames(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let cfg = Config { truncate: 0.05, malformed: 0.05, encapsulation: 0.2, ..Config::default() };
    let mut g = Generator::new(seed, cfg);
    (0..n)
        .map(|_| {
            let mut buf = Vec::new();
            g.next_frame(&mut buf);
            buf
        })
        .collect()
}

const EXPRESSIONS: &[&str] = &[
    "",
    "tcp",
    "udp port 53",
    "ip and tcp[tcpflags] & tcp-syn != 0",
    "ip6",
    "arp or icmp or icmp6",
    "vlan",
    "vlan and udp",
    "host 10.0.0.1 or net 192.168.0.0/16",
    "ip[2:2] > 576",
    "len > 200 and len < 1000",
    "tcp port 80 or tcp port 443",
    "ip proto 132",
    "ether broadcast or ether multicast",
    "ip6 and udp",
    "mpls",
    "pppoes",
    "ip[6:2] & 0x1fff != 0",
];

#[test]
fn compiled_filters_agree_with_the_interpreter() {
    if engine(&[Insn::stmt(Opcode::RetK.code(), u32::MAX)]).is_none() {
        return;
    }
    let resolver = TableResolver::well_known();
    let packets = frames(0x0e7, 1500);
    let mut total = 0;
    let mut delivered = 0;
    let mut untagged = 0;
    for (e, expr) in EXPRESSIONS.iter().enumerate() {
        for snaplen in [262_144u32, 96] {
            let opts = pipeline::Options::new(LinkType::EN10MB, &resolver)
                .snaplen(snaplen)
                .optimize(false)
                .mode(Mode::Linux);
            let valid = pipeline::compile(expr, &opts)
                .unwrap_or_else(|err| panic!("{expr:?}: {err}"))
                .program;
            let prog = &valid;
            let interp = Interpreter::with_flavor(&valid, Flavor::Linux);
            let mut eng = engine(prog.insns()).unwrap();
            let got = eng.run_batch(packets.iter().map(Vec::as_slice)).unwrap();
            for (i, (pkt, got)) in packets.iter().zip(got).enumerate() {
                let want = kernel_view(pkt).map(|v| {
                    let ret = interp.run(&v, v.len() as u32);
                    ret.min(v.len() as u32)
                });
                assert_eq!(
                    got, want,
                    "filter {e} {expr:?} (snaplen {snaplen}), packet {i}: {pkt:02x?}"
                );
                total += 1;
                if got.is_some_and(|n| n > 0) {
                    delivered += 1;
                }
                if kernel_view(pkt).is_some_and(|v| v.len() != pkt.len()) {
                    untagged += 1;
                }
            }
        }
    }
    eprintln!(
        "veth AF_PACKET: {total} (filter, frame) verdicts agree ({delivered} delivered, \
         {untagged} seen untagged)"
    );
    assert!(delivered > 0 && delivered < total);
}

#[test]
fn truncation_and_short_frames() {
    let Some(mut eng) = engine(&[Insn::stmt(Opcode::RetK.code(), 20)]) else { return };
    assert_eq!(eng.run(&[0xaa; 60]).unwrap(), Some(20));
    assert_eq!(eng.run(&[0xaa; 15]).unwrap(), Some(15));
    assert_eq!(eng.run(&[0xaa; 13]).unwrap(), None, "shorter than an Ethernet header");
    // A VLAN frame loses its tag before the filter sees it.
    let mut tagged = vec![0xaa; 64];
    tagged[12..16].copy_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    eng.set_filter(&[Insn::stmt(Opcode::RetK.code(), u32::MAX)]).unwrap();
    assert_eq!(eng.run(&tagged).unwrap(), Some(60));
    assert_eq!(eng.run(&tagged[..19]).unwrap(), None, "too short to untag");
    // ld [12:2]; ret a: the filter reads the inner EtherType where the tag was.
    eng.set_filter(&[Insn::stmt(Opcode::LdAbsH.code(), 12), Insn::stmt(Opcode::RetA.code(), 0)])
        .unwrap();
    tagged[16..18].copy_from_slice(&[0x00, 0x05]);
    assert_eq!(eng.run(&tagged).unwrap(), Some(5), "0x8100 would have kept 60 bytes");
    // Large frames pass whole.
    eng.set_filter(&[Insn::stmt(Opcode::RetK.code(), u32::MAX)]).unwrap();
    assert_eq!(eng.run(&vec![0x55; 9000]).unwrap(), Some(9000));
    assert_eq!(eng.run(&vec![0x55; 65_000]).unwrap(), Some(65_000));
    let max = sift_kernel::MAX_FRAME;
    assert_eq!(eng.run(&vec![0x55; max]).unwrap(), Some(max as u32));
    assert_eq!(eng.run(&vec![0x55; max + 1]).unwrap(), None, "longer than the MTU allows");
}

#[test]
fn accept_all_never_loses_a_frame() {
    // If the filtered socket ever lagged behind the monitor, some verdicts would read 0 here.
    let Some(mut eng) = engine(&[Insn::stmt(Opcode::RetK.code(), u32::MAX)]) else { return };
    for (i, f) in frames(3, 3000).iter().enumerate() {
        let want = kernel_view(f).map(|v| v.len() as u32);
        assert_eq!(eng.run(f).unwrap(), want, "frame {i}");
    }
}

#[test]
fn rejected_program_is_reported() {
    if engine(&[Insn::stmt(Opcode::RetK.code(), 1)]).is_none() {
        return;
    }
    match VethSocketFilter::new(&[Insn::stmt(Opcode::LdAbsB.code(), 0)]) {
        Err(VethError::Rejected(e)) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL)),
        other => panic!("{other:?}"),
    }
}
