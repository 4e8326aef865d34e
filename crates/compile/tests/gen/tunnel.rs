//! `geneve` and `vxlan` on frames that really carry the tunnels (random packet sets rarely
//! do): Geneve against the system libpcap's programs, VXLAN (new in libpcap 1.11, which the
//! system library lacks) against the values the frames were built to have.

use crate::common::unoptimized;
use sift_compile::pipeline::{self, LinkType};
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

/// The inner IP packet a spec describes.
fn inner_ip(s: &Spec) -> Vec<u8> {
    let app = l4(s.inner_tcp, 40000, s.inner_port, b"hello");
    let proto = if s.inner_tcp { 6 } else { 17 };
    if s.inner_v6 {
        ipv6(proto, s.inner_src_last, &app)
    } else {
        ipv4(proto, [10, 9, 9, s.inner_src_last], [10, 9, 9, 1], &app)
    }
}

fn frame(s: &Spec) -> Vec<u8> {
    let inner_ip = inner_ip(s);
    let inner = ether(s.inner_src_last, if s.inner_v6 { 0x86dd } else { 0x0800 }, &inner_ip);
    wrap(s, &inner, &inner_ip)
}

/// The outer Ethernet/IP/UDP and tunnel headers of `s` around an inner Ethernet frame (or,
/// for a Geneve protocol type other than Ethernet, around `inner_ip`).
fn wrap(s: &Spec, inner: &[u8], inner_ip: &[u8]) -> Vec<u8> {
    let mut tun = Vec::new();
    if s.geneve {
        tun.extend_from_slice(&[s.opts & 0x3f, 0]);
        tun.extend_from_slice(&s.proto.to_be_bytes());
        tun.extend_from_slice(&(s.vni << 8).to_be_bytes());
        tun.extend(std::iter::repeat_n(0xa5, usize::from(s.opts) * 4));
        if s.proto == 0x6558 {
            tun.extend_from_slice(inner);
        } else {
            tun.extend_from_slice(inner_ip);
        }
    } else {
        tun.extend_from_slice(&[0x08, 0, 0, 0]);
        tun.extend_from_slice(&(s.vni << 8).to_be_bytes());
        tun.extend_from_slice(inner);
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
    let opts = unoptimized(LinkType::EN10MB, &r).snaplen(65535);
    let c = pipeline::compile(expr, &opts).unwrap_or_else(|e| panic!("{expr}: {e}"));
    sift_vm::Interpreter::new(&c.program)
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
        let reference = pcap
            .compile(sift_compile::pipeline::LinkType::EN10MB, 65535, expr, false, 0xffff_ffff)
            .expect(expr);
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

/// What the inner Ethernet frame carries before its IP packet.
#[derive(Clone, Copy, Debug)]
enum Shim {
    /// 802.1Q tags with these VLAN ids, outermost first.
    Vlan(&'static [u16]),
    /// MPLS labels, outermost first (the last with the bottom-of-stack bit).
    Mpls(&'static [u32]),
    /// A PPPoE session with this id, carrying PPP.
    Pppoe(u16),
}

/// An inner Ethernet frame: the spec's addresses and IP packet behind `shim`.
fn shimmed(s: &Spec, shim: Shim) -> Vec<u8> {
    let ip = inner_ip(s);
    let ip_type: u16 = if s.inner_v6 { 0x86dd } else { 0x0800 };
    match shim {
        Shim::Vlan(ids) => {
            let mut body = Vec::new();
            for (i, id) in ids.iter().enumerate() {
                body.extend_from_slice(&id.to_be_bytes());
                let next = if i + 1 == ids.len() { ip_type } else { 0x8100 };
                body.extend_from_slice(&next.to_be_bytes());
            }
            body.extend_from_slice(&ip);
            ether(s.inner_src_last, 0x8100, &body)
        }
        Shim::Mpls(labels) => {
            let mut body = Vec::new();
            for (i, l) in labels.iter().enumerate() {
                let bos = u32::from(i + 1 == labels.len()) << 8;
                body.extend_from_slice(&((l << 12) | bos | 64).to_be_bytes());
            }
            body.extend_from_slice(&ip);
            ether(s.inner_src_last, 0x8847, &body)
        }
        Shim::Pppoe(session) => {
            let ppp_proto: u16 = if s.inner_v6 { 0x57 } else { 0x21 };
            let mut body = vec![0x11, 0];
            body.extend_from_slice(&session.to_be_bytes());
            body.extend_from_slice(&((ip.len() + 2) as u16).to_be_bytes());
            body.extend_from_slice(&ppp_proto.to_be_bytes());
            body.extend_from_slice(&ip);
            ether(s.inner_src_last, 0x8864, &body)
        }
    }
}

/// Frames with a tunnel inside a tunnel, and with VLAN tags, MPLS labels or PPPoE inside
/// one, plus the single-tunnel frames (what must not match).
fn nested_frames(geneve: bool) -> Vec<(String, Vec<u8>)> {
    let specs = specs(geneve);
    let mut out: Vec<(String, Vec<u8>)> =
        specs.iter().map(|s| (format!("single {s:?}"), frame(s))).collect();
    // Each spec inside a few outer ones (the outer's own inner fields unused, Ethernet inside).
    for (i, outer) in specs.iter().enumerate().filter(|(i, _)| i % 5 == 0) {
        let outer = Spec { proto: 0x6558, ..*outer };
        for (j, inner) in specs.iter().enumerate() {
            let f = wrap(&outer, &frame(inner), &[]);
            out.push((format!("outer {i} around {j}"), f));
        }
    }
    // Three deep.
    for (i, s) in specs.iter().enumerate().step_by(3) {
        let outer = Spec { proto: 0x6558, ..specs[(i * 7) % specs.len()] };
        let mid = Spec { proto: 0x6558, ..specs[(i * 5 + 1) % specs.len()] };
        let f = wrap(&outer, &wrap(&mid, &frame(s), &[]), &[]);
        out.push((format!("three deep around {i}"), f));
    }
    const SHIMS: [Shim; 6] = [
        Shim::Vlan(&[5]),
        Shim::Vlan(&[5, 6]),
        Shim::Mpls(&[100]),
        Shim::Mpls(&[100, 200]),
        Shim::Pppoe(9),
        Shim::Pppoe(10),
    ];
    for s in &specs {
        for shim in SHIMS {
            let s = Spec { proto: 0x6558, ..*s };
            let inner = shimmed(&s, shim);
            out.push((format!("{shim:?} in {s:?}"), wrap(&s, &inner, &[])));
        }
    }
    out
}

/// Expressions with a tunnel inside a tunnel or a shim inside one; `TUN` is the tunnel.
const NESTED: &[&str] = &[
    "TUN and TUN",
    "TUN 7 and TUN 8",
    "TUN and TUN 7 and tcp",
    "TUN and TUN and tcp dst port 80",
    "TUN and TUN and ip6 src 2001::c",
    "TUN and TUN and ether src 02:00:00:00:00:0c",
    "TUN and not TUN",
    "TUN and TUN and TUN",
    "TUN and vlan",
    "TUN and vlan 5 and ip",
    "TUN and vlan and vlan 6 and tcp",
    "TUN and vlan 5 and vlan and ip6 src 2001::c",
    "TUN and mpls",
    "TUN and mpls 100 and ip",
    "TUN and mpls and mpls 200 and udp port 53",
    "TUN and pppoes",
    "TUN and pppoes 9 and ip",
    "TUN and pppoes and ip6 and tcp port 80",
    "TUN and pppoes 10 and ip src 10.9.9.12",
    "TUN and vlan and not mpls",
    "not TUN or (TUN and tcp)",
];

#[test]
fn nested_geneve_matches_libpcap() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let frames = nested_frames(true);
    for tmpl in NESTED {
        let expr = tmpl.replace("TUN", "geneve");
        let vm = sift(&expr);
        let reference = pcap
            .compile(sift_compile::pipeline::LinkType::EN10MB, 65535, &expr, false, 0xffff_ffff)
            .expect(&expr);
        let mut accepted = 0;
        for (what, f) in &frames {
            let want = pcap.filter(&reference, f, f.len() as u32);
            let got = vm.run(f, f.len() as u32);
            assert_eq!(got, want, "{expr}: {what}");
            accepted += usize::from(want != 0);
        }
        // Each expression matches some frames and not others (the frames exercise it).
        if expr != "geneve and not geneve" {
            assert!(accepted > 0 && accepted < frames.len(), "{expr}: {accepted} accepted");
        }
    }
}

/// VXLAN is new in libpcap 1.11, which the system library lacks: sift's nested VXLAN programs
/// must give the same verdicts as its Geneve ones, on frames that differ only in the tunnel
/// (Geneve without options, Ethernet inside, at VXLAN's port), and `vxlan and vxlan` equals
/// the corpus's libpcap 1.11 listing.
#[test]
fn nested_vxlan_agrees_with_nested_geneve() {
    let frames = |geneve: bool| -> Vec<(String, Vec<u8>)> {
        nested_frames(false)
            .into_iter()
            .map(|(w, f)| (w, if geneve { vxlan_as_geneve(&f) } else { f }))
            .collect()
    };
    let (vx, gn) = (frames(false), frames(true));
    for tmpl in NESTED {
        let (ve, ge) = (tmpl.replace("TUN", "vxlan"), tmpl.replace("TUN", "geneve"));
        let (vm_v, vm_g) = (sift(&ve), sift(&ge));
        let mut accepted = 0;
        for ((what, fv), (_, fg)) in vx.iter().zip(&gn) {
            let got = vm_v.run(fv, fv.len() as u32);
            assert_eq!(got, vm_g.run(fg, fg.len() as u32), "{ve}: {what}");
            accepted += usize::from(got != 0);
        }
        if ve != "vxlan and not vxlan" {
            assert!(accepted > 0 && accepted < vx.len(), "{ve}: {accepted} accepted");
        }
    }
    let Some(corpus) = sift_filetests::Corpus::load_default() else { return };
    let case = corpus.accept.iter().find(|c| c.expr == "vxlan and vxlan").expect("corpus case");
    let listing = sift_insn::text::parse_listing(&case.unopt).expect("listing");
    let v = sift_verify::validate(&listing.0, sift_verify::Mode::Libpcap).unwrap();
    let reference = sift_vm::Interpreter::new(&v);
    let vm = sift("vxlan and vxlan");
    for (what, f) in &vx {
        let len = f.len() as u32;
        assert_eq!(vm.run(f, len) != 0, reference.run(f, len) != 0, "vxlan and vxlan: {what}");
    }
}

/// Rewrites every VXLAN header (UDP port 4789, `08 00 00 00` flags) of a frame built here
/// into a Geneve header with the same VNI at the same place, port 6081, Ethernet inside.
fn vxlan_as_geneve(f: &[u8]) -> Vec<u8> {
    let mut f = f.to_vec();
    let mut i = 0;
    while i + 12 <= f.len() {
        if f[i..i + 2] == [0x12, 0xb5] && f[i + 6..i + 10] == [0x08, 0, 0, 0] {
            f[i..i + 2].copy_from_slice(&6081u16.to_be_bytes());
            f[i + 6..i + 10].copy_from_slice(&[0, 0, 0x65, 0x58]);
        }
        i += 1;
    }
    f
}
