//! `geneve` and `vxlan` on frames that really carry the tunnels (random packet sets rarely
//! do): Geneve against the system libpcap's programs, VXLAN (new in libpcap 1.11, which the
//! system library lacks) against the values the frames were built to have.

use sift_compile::{Context, compile_str};
use sift_filter::TableResolver;
use sift_libpcap::Libpcap;

/// What a crafted frame carries.
#[derive(Clone, Copy, Debug)]
struct Spec {
    outer_v6: bool,
    geneve: bool,
    /// The UDP destination port (the tunnel's, or another).
    port: u16,
    vni: u32,
    /// Geneve option words.
    opts: u8,
    /// Geneve protocol type (0x6558: Ethernet inside).
    proto: u16,
    inner_v6: bool,
    inner_tcp: bool,
    inner_src_last: u8,
    inner_port: u16,
}

fn ipv4(proto: u8, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, proto, 0, 0];
    let len = (20 + payload.len()) as u16;
    h[2..4].copy_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(payload);
    h
}

fn ipv6(next: u8, src_last: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(&[next, 64]);
    let mut src = [0u8; 16];
    src[0] = 0x20;
    src[1] = 0x01;
    src[15] = src_last;
    h.extend_from_slice(&src);
    let mut dst = [0u8; 16];
    dst[0] = 0xfe;
    dst[1] = 0x80;
    dst[15] = 1;
    h.extend_from_slice(&dst);
    h.extend_from_slice(payload);
    h
}

fn l4(tcp: bool, sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&sport.to_be_bytes());
    h.extend_from_slice(&dport.to_be_bytes());
    if tcp {
        h.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0x10, 0, 0, 0, 0, 0]);
    } else {
        h.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
        h.extend_from_slice(&[0, 0]);
    }
    h.extend_from_slice(data);
    h
}

fn ether(src_last: u8, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, src_last];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn frame(s: &Spec) -> Vec<u8> {
    let app = l4(s.inner_tcp, 40000, s.inner_port, b"hello");
    let proto = if s.inner_tcp { 6 } else { 17 };
    let inner_ip = if s.inner_v6 {
        ipv6(proto, s.inner_src_last, &app)
    } else {
        ipv4(proto, [10, 9, 9, s.inner_src_last], [10, 9, 9, 1], &app)
    };
    let inner = ether(s.inner_src_last, if s.inner_v6 { 0x86dd } else { 0x0800 }, &inner_ip);
    let mut tun = Vec::new();
    if s.geneve {
        tun.extend_from_slice(&[s.opts & 0x3f, 0]);
        tun.extend_from_slice(&s.proto.to_be_bytes());
        tun.extend_from_slice(&(s.vni << 8).to_be_bytes());
        tun.extend(std::iter::repeat_n(0xa5, usize::from(s.opts) * 4));
        if s.proto == 0x6558 {
            tun.extend_from_slice(&inner);
        } else {
            tun.extend_from_slice(&inner_ip);
        }
    } else {
        tun.extend_from_slice(&[0x08, 0, 0, 0]);
        tun.extend_from_slice(&(s.vni << 8).to_be_bytes());
        tun.extend_from_slice(&inner);
    }
    let udp = l4(false, 5555, s.port, &tun);
    if s.outer_v6 {
        ether(0x0b, 0x86dd, &ipv6(17, 7, &udp))
    } else {
        ether(0x0b, 0x0800, &ipv4(17, [192, 0, 2, 7], [192, 0, 2, 8], &udp))
    }
}

/// Deterministic specs covering both tunnels, both IP versions, options, VNIs, ports.
fn specs(geneve: bool) -> Vec<Spec> {
    let mut out = Vec::new();
    let mut n = 0u32;
    for outer_v6 in [false, true] {
        for port in [if geneve { 6081 } else { 4789 }, 4790] {
            for vni in [7, 8] {
                for inner_v6 in [false, true] {
                    for inner_tcp in [false, true] {
                        n += 1;
                        out.push(Spec {
                            outer_v6,
                            geneve,
                            port,
                            vni,
                            opts: (n % 4) as u8,
                            proto: if geneve && n.is_multiple_of(5) {
                                if inner_v6 { 0x86dd } else { 0x0800 }
                            } else {
                                0x6558
                            },
                            inner_v6,
                            inner_tcp,
                            inner_src_last: if n.is_multiple_of(3) { 0x0c } else { 0x0d },
                            inner_port: if n.is_multiple_of(2) { 80 } else { 53 },
                        });
                    }
                }
            }
        }
    }
    out
}

fn sift(expr: &str) -> sift_vm::Interpreter {
    let r = TableResolver::well_known();
    let ctx =
        Context { link_type: 1, snaplen: 65535, netmask: None, linux_ext: false, resolver: &r };
    let p = compile_str(expr, &ctx).unwrap_or_else(|e| panic!("{expr}: {}", e.message));
    let v = sift_verify::validate(&p.0, sift_verify::Mode::Libpcap).unwrap();
    sift_vm::Interpreter::new(&v)
}

#[test]
fn geneve_matches_libpcap_on_geneve_frames() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let frames: Vec<Vec<u8>> = specs(true).iter().map(frame).collect();
    let mut accepted = 0;
    for expr in [
        "geneve",
        "geneve 7",
        "geneve and ip",
        "geneve and ip6",
        "geneve and tcp",
        "geneve 7 and udp port 53",
        "geneve and tcp dst port 80",
        "geneve and ip src 10.9.9.12",
        "geneve and ip6 src 2001::c",
        "geneve and ether src 02:00:00:00:00:0c",
        "geneve and ip[9] = 6",
        "geneve and tcp[2:2] = 80",
        "not geneve 8 or udp",
    ] {
        let vm = sift(expr);
        let reference = pcap.compile(1, 65535, expr, false, 0xffff_ffff).expect(expr);
        for (i, f) in frames.iter().enumerate() {
            let want = pcap.filter(&reference, f, f.len() as u32);
            let got = vm.run(f, f.len() as u32);
            assert_eq!(got, want, "{expr}: frame {i}");
            accepted += usize::from(want != 0);
        }
    }
    assert!(accepted > 50, "the frames must match some filters ({accepted})");
}

#[test]
fn vxlan_finds_what_the_frames_carry() {
    let specs = specs(false);
    type Expect<'a> = &'a dyn Fn(&Spec) -> bool;
    let checks: [(&str, Expect<'_>); 8] = [
        ("vxlan", &|s| s.port == 4789),
        ("vxlan 7", &|s| s.port == 4789 && s.vni == 7),
        ("vxlan and ip", &|s| s.port == 4789 && !s.inner_v6),
        ("vxlan and ip6", &|s| s.port == 4789 && s.inner_v6),
        ("vxlan and tcp", &|s| s.port == 4789 && s.inner_tcp),
        ("vxlan 8 and udp port 53", &|s| {
            s.port == 4789 && s.vni == 8 && !s.inner_tcp && s.inner_port == 53
        }),
        ("vxlan and ip src 10.9.9.12", &|s| {
            s.port == 4789 && !s.inner_v6 && s.inner_src_last == 0x0c
        }),
        ("vxlan and ether src 02:00:00:00:00:0c", &|s| s.port == 4789 && s.inner_src_last == 0x0c),
    ];
    for (expr, want) in checks {
        let vm = sift(expr);
        let mut accepted = 0;
        for (i, s) in specs.iter().enumerate() {
            let f = frame(s);
            let got = vm.run(&f, f.len() as u32) != 0;
            assert_eq!(got, want(s), "{expr}: frame {i} {s:?}");
            accepted += usize::from(got);
        }
        assert!(accepted > 0 && accepted < specs.len(), "{expr}: {accepted} accepted");
    }
}
