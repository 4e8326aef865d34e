//! Differential: sift's classic → eBPF translation (`sift_ebpf::translate`, the program the
//! kernel runs under `BPF_PROG_TEST_RUN`) run on this VM over an `__sk_buff` context, against
//! the classic interpreter in its Linux flavor, on random validated programs and packets. The
//! kernel test (`sift-kernel`'s `ebpf_testrun`) checks the same translation in the kernel; this
//! one needs no root and checks the VM's ALU, jumps, loads and byte swaps against an
//! independent reference.

use sift_ebpf::{NET_HEADER, TranslateReason, skb, translate, translate_local_exits};
use sift_ebpf_vm::memory::PACKET_BASE;
use sift_ebpf_vm::{Helpers, Vm};
use sift_verify::{Mode, validate};
use sift_vm::testgen::{self, GenConfig, Rng};
use sift_vm::{Flavor, Interpreter, PacketMeta};

fn meta(wire_len: u32) -> PacketMeta {
    PacketMeta {
        wire_len,
        mac_header: Some(0),
        net_header: Some(NET_HEADER),
        ..PacketMeta::default()
    }
}

/// The `__sk_buff` a test run gives a `SCHED_CLS` program: lengths and the packet pointers.
fn sk_buff(caplen: usize, wire_len: u32) -> Vec<u8> {
    let mut ctx = vec![0u8; skb::SIZE];
    let mut put =
        |off: i16, v: u32| ctx[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
    put(skb::LEN, caplen as u32);
    put(skb::DATA, PACKET_BASE as u32);
    put(skb::DATA_END, PACKET_BASE as u32 + caplen as u32);
    put(skb::WIRE_LEN, wire_len);
    ctx
}

#[test]
fn translated_programs_agree_with_the_classic_interpreter() {
    let mut rng = Rng::new(0xeb9f_0001);
    let cfg = GenConfig::linux();
    let (mut pairs, mut programs, mut local) = (0usize, 0usize, 0usize);
    while pairs < 40_000 {
        let prog = testgen::program(&mut rng, &cfg);
        let packets: Vec<_> = (0..12).map(|_| testgen::packet(&mut rng)).collect();
        let Ok(valid) = validate(&prog, Mode::Linux) else { continue };
        let use_local = programs % 4 == 3;
        let translated =
            if use_local { translate_local_exits(valid.insns()) } else { translate(valid.insns()) };
        let ebpf = match translated {
            Ok(p) => p,
            Err(e) if matches!(e.reason, TranslateReason::Ancillary(_)) => continue,
            Err(e) => panic!("program {programs}: {e}"),
        };
        let mut vm = Vm::load(&ebpf.insns, Helpers::new())
            .unwrap_or_else(|e| panic!("program {programs}: {e}\n{ebpf}"));
        let interp = Interpreter::with_flavor(&valid, Flavor::Linux);
        for (i, (pkt, wire)) in packets.iter().enumerate() {
            let want = interp.run_with_meta(pkt, &meta(*wire));
            let mut ctx = sk_buff(pkt.len(), *wire);
            let mut data = pkt.clone();
            let got = vm.run_with_packet(&mut ctx, &mut data).unwrap_or_else(|e| {
                panic!("program {programs}, packet {i}: {e}\nclassic: {prog:?}\neBPF:\n{ebpf}")
            });
            assert_eq!(
                got,
                u64::from(want),
                "program {programs}, packet {i}: {pkt:02x?}\nclassic: {prog:?}\neBPF:\n{ebpf}"
            );
            pairs += 1;
        }
        programs += 1;
        local += usize::from(use_local);
    }
    println!(
        "{pairs} (program, packet) pairs over {programs} programs ({local} with local exits) agree"
    );
}
