//! Tests against the real system libpcap. They skip (or fail under `SIFT_REQUIRE_ORACLES=1`)
//! when libpcap cannot be loaded.

use sift_libpcap::{Error, Libpcap, RawInsn, Unrunnable};

const EN10MB: sift_wire::LinkType = sift_wire::LinkType::EN10MB;
const NETMASK_UNKNOWN: u32 = 0xffff_ffff;

fn pcap() -> Option<Libpcap> {
    sift_testkit::oracle("system libpcap", Libpcap::load())
}

/// An Ethernet + IPv4 + (TCP or UDP) frame from 10.0.0.1:40000 to 10.0.0.2:`dport`.
fn frame(proto: u8, dport: u16) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let l4_len: u16 = if proto == 6 { 20 } else { 8 };
    let total = 20 + l4_len;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0x40,
        0,
        64,
        proto,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&40000u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    if proto == 6 {
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    } else {
        f.extend_from_slice(&[0, 8, 0, 0]);
    }
    f
}

#[test]
fn version_names_libpcap() {
    let Some(p) = pcap() else { return };
    let v = p.version();
    assert!(v.contains("libpcap"), "unexpected version string {v:?}");
}

#[test]
fn compile_tcp_port_80_and_filter() {
    let Some(p) = pcap() else { return };
    let prog = p.compile(EN10MB, 262144, "tcp port 80", true, NETMASK_UNKNOWN).expect("compiles");
    assert!(prog.len() > 5, "suspiciously short program: {prog:?}");
    assert_eq!(prog.last().map(|i| i.code & 0x07), Some(0x06), "does not end in ret: {prog:?}");
    // First instruction of every EN10MB program: ldh [12].
    assert_eq!(prog[0], RawInsn { code: 0x28, jt: 0, jf: 0, k: 12 });
    assert!(p.validate(&prog));

    let tcp80 = frame(6, 80);
    let tcp81 = frame(6, 81);
    let udp80 = frame(17, 80);
    let wire = |f: &[u8]| f.len() as u32;
    assert_eq!(p.filter(&prog, &tcp80, wire(&tcp80)), 262144);
    assert_eq!(p.filter(&prog, &tcp81, wire(&tcp81)), 0);
    assert_eq!(p.filter(&prog, &udp80, wire(&udp80)), 0);
    // A frame cut before the ports cannot match.
    assert_eq!(p.filter(&prog, &tcp80[..30], wire(&tcp80)), 0);

    // The prepared and raw paths agree with `filter`.
    let prepared = p.prepare(&prog).expect("runnable");
    assert_eq!(prepared.run(&tcp80, wire(&tcp80)), 262144);
    assert_eq!(prepared.run(&udp80, wire(&udp80)), 0);
    let f = p.filter_fn();
    // SAFETY: `prog` came from pcap_compile (runnable), `tcp80` is valid for its length, and
    // `p` outlives the call.
    let raw = unsafe { f(prog.as_ptr(), tcp80.as_ptr(), wire(&tcp80), wire(&tcp80)) };
    assert_eq!(raw, 262144);

    // Unoptimized code gives the same verdicts.
    let unopt = p.compile(EN10MB, 262144, "tcp port 80", false, NETMASK_UNKNOWN).expect("compiles");
    assert!(unopt.len() >= prog.len());
    assert_eq!(p.filter(&unopt, &tcp80, wire(&tcp80)), 262144);
    assert_eq!(p.filter(&unopt, &udp80, wire(&udp80)), 0);
}

#[test]
fn filter_uses_wirelen_for_len() {
    let Some(p) = pcap() else { return };
    // ld len; ret a
    let prog =
        [RawInsn { code: 0x80, jt: 0, jf: 0, k: 0 }, RawInsn { code: 0x16, jt: 0, jf: 0, k: 0 }];
    assert_eq!(p.filter(&prog, &[0; 10], 1234), 1234);
    let greater = p.compile(EN10MB, 65535, "greater 100", true, NETMASK_UNKNOWN).expect("compiles");
    assert_ne!(p.filter(&greater, &[0; 60], 200), 0);
    assert_eq!(p.filter(&greater, &[0; 60], 60), 0);
}

#[test]
fn validate_good_and_bad() {
    let Some(p) = pcap() else { return };
    let ret = RawInsn { code: 0x06, jt: 0, jf: 0, k: 0xffff };
    assert!(p.validate(&[ret]));
    assert!(!p.validate(&[]));
    // Jump past the end.
    assert!(!p.validate(&[RawInsn { code: 0x15, jt: 5, jf: 0, k: 0 }, ret]));
    // Does not end in ret.
    assert!(!p.validate(&[ret, RawInsn { code: 0x04, jt: 0, jf: 0, k: 1 }]));
    // Scratch index out of range.
    assert!(!p.validate(&[RawInsn { code: 0x60, jt: 0, jf: 0, k: 16 }, ret]));
    // Division by constant zero.
    assert!(!p.validate(&[RawInsn { code: 0x34, jt: 0, jf: 0, k: 0 }, ret]));

    // `filter` refuses what it cannot run, including `ret x`, which bpf_validate accepts but
    // bpf_filter would abort() on.
    let ret_x = [RawInsn { code: 0x0e, jt: 0, jf: 0, k: 0 }];
    assert!(p.validate(&ret_x));
    assert_eq!(p.try_filter(&ret_x, &[0; 4], 4), Err(Unrunnable::Opcode { index: 0, code: 0x0e }));
    assert_eq!(p.filter(&ret_x, &[0; 4], 4), 0);
    assert_eq!(p.try_filter(&[], &[0; 4], 4), Err(Unrunnable::Empty));
}

#[test]
fn compile_error_text() {
    let Some(p) = pcap() else { return };
    let err =
        p.compile(EN10MB, 262144, "tcp port", true, NETMASK_UNKNOWN).expect_err("must not compile");
    assert!(err.contains("syntax error"), "unexpected error text: {err}");
    let err = p.compile(EN10MB, 262144, "tcp\0", true, NETMASK_UNKNOWN).expect_err("NUL");
    assert!(err.contains("NUL"), "{err}");
    // The compiler is usable again after an error.
    assert!(p.compile(EN10MB, 262144, "udp", true, NETMASK_UNKNOWN).is_ok());
}

#[test]
fn compile_from_many_threads() {
    let Some(p) = pcap() else { return };
    let expected = p
        .compile(EN10MB, 262144, "host 10.0.0.1 and tcp", true, NETMASK_UNKNOWN)
        .expect("compiles");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    let got =
                        p.compile(EN10MB, 262144, "host 10.0.0.1 and tcp", true, NETMASK_UNKNOWN);
                    assert_eq!(got.as_ref(), Ok(&expected));
                }
            });
        }
    });
}

#[test]
fn read_offline_captures() {
    let Some(p) = pcap() else { return };
    let Some(corpus) = sift_testkit::libpcap_corpus() else { return };
    let path = corpus.join("captures").join("vrrp.pcap");
    let micro = p.read_offline(&path, false).expect("vrrp.pcap opens");
    assert_eq!(micro.linktype, EN10MB.dlt());
    assert!(micro.snaplen > 0);
    assert!(!micro.packets.is_empty());
    assert_eq!(micro.error, None);
    for pkt in &micro.packets {
        assert_eq!(pkt.caplen as usize, pkt.data.len());
        assert!(pkt.wirelen >= pkt.caplen);
        assert!(pkt.ts_frac < 1_000_000);
    }
    let nano = p.read_offline(&path, true).expect("vrrp.pcap opens");
    assert_eq!(nano.packets.len(), micro.packets.len());
    for (n, m) in nano.packets.iter().zip(&micro.packets) {
        assert_eq!(n.ts_sec, m.ts_sec);
        assert_eq!(n.ts_frac, m.ts_frac * 1000, "a microsecond file scaled to nanoseconds");
        assert_eq!(n.data, m.data);
    }
    // tcpdump agrees on the count, when it is installed.
    if let Some(tcpdump) = sift_testkit::tool("tcpdump") {
        let out = std::process::Command::new(tcpdump)
            .arg("-nr")
            .arg(&path)
            .output()
            .expect("tcpdump runs");
        let lines = String::from_utf8_lossy(&out.stdout).lines().count();
        assert_eq!(lines, micro.packets.len());
    }
}

#[test]
fn read_offline_rejects_invalid_files() {
    let Some(p) = pcap() else { return };
    let Some(corpus) = sift_testkit::libpcap_corpus() else { return };
    let path = corpus.join("captures").join("pcap-invalid-version-1.pcap");
    match p.read_offline(&path, false) {
        Err(Error::Open(msg)) => assert!(!msg.is_empty()),
        other => panic!("expected Error::Open, got {other:?}"),
    }
    match p.read_offline(std::path::Path::new("/nonexistent/sift.pcap"), false) {
        Err(Error::Open(msg)) => assert!(msg.contains("No such file"), "{msg}"),
        other => panic!("expected Error::Open, got {other:?}"),
    }
}

#[test]
fn libpcap_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Libpcap>();
}

/// Every opcode alone, with k = 1 (0 for `ja`), then `ret`: whatever `check_runnable` accepts, libpcap's
/// own `bpf_validate` accepts too, and running it neither crashes nor aborts.
#[test]
fn runnable_check_is_stricter_than_bpf_validate() {
    let Some(p) = pcap() else { return };
    let ret = RawInsn { code: 0x06, jt: 0, jf: 0, k: 7 };
    let mut accepted = 0;
    for code in 0..=u16::MAX {
        let k = if code == 0x05 { 0 } else { 1 };
        let prog = [RawInsn { code, jt: 0, jf: 0, k }, ret];
        if Libpcap::check_runnable(&prog).is_ok() {
            accepted += 1;
            assert!(p.validate(&prog), "opcode {code:#06x} runnable but bpf_validate rejects it");
            let _ = p.filter(&prog, &[1, 2, 3, 4, 5, 6], 6);
        }
    }
    // 2 returns, 11 loads, 4 memory ops, 21 alu (with neg), 9 jumps, 2 misc.
    assert_eq!(accepted, 49);
}

/// Random short programs (a tiny xorshift, forward jumps only so nothing loops): those the
/// check accepts are accepted by bpf_validate and run without crashing.
#[test]
fn random_programs_run_safely() {
    let Some(p) = pcap() else { return };
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const KNOWN: [u16; 20] = [
        0x06, 0x16, 0x20, 0x28, 0x30, 0x40, 0x48, 0x50, 0x80, 0xb1, 0x00, 0x01, 0x60, 0x02, 0x05,
        0x15, 0x45, 0x34, 0x9c, 0x87,
    ];
    let pkt: Vec<u8> = (0..64u8).collect();
    let mut ran = 0;
    for _ in 0..20_000 {
        let len = (next() % 8 + 1) as usize;
        let prog: Vec<RawInsn> = (0..len)
            .map(|i| {
                let r = next();
                // Mostly opcodes bpf_filter knows, sometimes any byte; usually a final ret.
                let code = if i + 1 == len && r & 0x1c != 0 {
                    0x06 | (r as u16 & 0x10)
                } else if r & 0x3 == 0 {
                    (r >> 2 & 0xff) as u16
                } else {
                    KNOWN[(r >> 40) as usize % KNOWN.len()]
                };
                let left = (len - i - 1) as u64;
                let k = if code == 0x05 { (r >> 8) % (left + 1) } else { (r >> 32) % 80 } as u32;
                RawInsn {
                    code,
                    jt: ((r >> 16) % (left + 1)) as u8,
                    jf: ((r >> 24) % (left + 1)) as u8,
                    k,
                }
            })
            .collect();
        if Libpcap::check_runnable(&prog).is_ok() {
            assert!(p.validate(&prog), "{prog:?}");
            let _ = p.filter(&prog, &pkt, 64);
            ran += 1;
        }
    }
    assert!(ran > 1000, "only {ran} random programs were runnable");
}

/// The constants a program compares the first word of the packet with, in order.
fn words_compared(prog: &[RawInsn]) -> Vec<u32> {
    // `ld [0]` followed by `jeq #k`.
    prog.windows(2)
        .filter(|w| w[0] == RawInsn { code: 0x20, jt: 0, jf: 0, k: 0 } && w[1].code == 0x15)
        .map(|w| w[1].k)
        .collect()
}

/// tcpdump compiles for the file it reads: on DLT_NULL the address family is in the file's
/// byte order and IPv6 is any BSD's AF_INET6; without a file (a dead handle), this host's
/// order and Linux's AF_INET6.
#[test]
fn savefile_handles_follow_the_file_byte_order() {
    let Some(p) = pcap() else { return };
    let null = sift_wire::LinkType::NULL;
    let dead = p.compile(null, 262144, "ip6", false, NETMASK_UNKNOWN).expect("compiles");
    assert_eq!(words_compared(&dead), [10u32.swap_bytes()]);
    let little = p.compile_savefile(null, 262144, false, "ip6", false, NETMASK_UNKNOWN).unwrap();
    assert_eq!(
        words_compared(&little),
        [30u32.swap_bytes(), 24u32.swap_bytes(), 28u32.swap_bytes()]
    );
    let big = p.compile_savefile(null, 262144, true, "ip6", false, NETMASK_UNKNOWN).unwrap();
    assert_eq!(words_compared(&big), [30, 24, 28]);
    let big4 = p.compile_savefile(null, 262144, true, "ip", false, NETMASK_UNKNOWN).unwrap();
    assert_eq!(words_compared(&big4), [2]);
    // DLT_LOOP is big-endian whatever the file's order.
    let lp = sift_wire::LinkType::LOOP;
    let loop_le = p.compile_savefile(lp, 262144, false, "ip", false, NETMASK_UNKNOWN).unwrap();
    assert_eq!(words_compared(&loop_le), [2]);
    // The program returns the file's snapshot length; errors are libpcap's messages.
    assert_eq!(little.last().map(|i| (i.code, i.k)), Some((0x06, 0)));
    assert!(little.iter().any(|i| i.code == 0x06 && i.k == 262144));
    let err = p.compile_savefile(null, 65535, false, "tcp port", true, NETMASK_UNKNOWN);
    assert!(err.unwrap_err().contains("syntax error"));
}
