//! A chain of `jeq` on the same A (as `vlan` compiles: 0x8100, 0x88a8, 0x9100) runs as one
//! fused step, with the same return values and instruction counts as the chain itself.

use sift_insn::asm::assemble;
use sift_verify::{Mode, validate};
use sift_vm::Interpreter;

#[test]
fn fused_chains_return_and_count_like_the_chain() {
    let prog = assemble(
        "ldh [12]\njeq #0x8100, tag, n1\nn1: jeq #0x88a8, tag, n2\nn2: jeq #0x9100, tag, n3\n\
         n3: jeq #0x0800, ip, drop\ntag: ret #1\nip: ret #2\ndrop: ret #0\n",
    )
    .unwrap();
    let v = validate(&prog, Mode::Libpcap).unwrap();
    let i = Interpreter::new(&v);
    // (EtherType, return value, instructions executed: ldh, the jeqs up to the match, ret)
    for (ethertype, ret, executed) in
        [(0x8100u16, 1, 3), (0x88a8, 1, 4), (0x9100, 1, 5), (0x0800, 2, 6), (0x86dd, 0, 6)]
    {
        let mut pkt = [0u8; 14];
        pkt[12..14].copy_from_slice(&ethertype.to_be_bytes());
        let c = i.run_counted(&pkt, 14);
        assert_eq!((c.ret, c.executed), (ret, executed), "EtherType {ethertype:#06x}");
        assert_eq!(i.run(&pkt, 14), ret);
    }
    // A jump into the middle of the chain still runs the rest of it.
    let prog = assemble(
        "ldb [0]\njeq #1, mid, start\nstart: jeq #7, yes, mid\nmid: jeq #9, yes, last\n\
         last: jeq #11, yes, no\nyes: ret #1\nno: ret #0\n",
    )
    .unwrap();
    let v = validate(&prog, Mode::Libpcap).unwrap();
    let i = Interpreter::new(&v);
    for (b, ret) in [(1u8, 0), (7, 1), (9, 1), (11, 1), (12, 0)] {
        assert_eq!(i.run(&[b], 1), ret, "byte {b}");
    }
}
