//! Shared helpers: gencode's primitives rebuilt by hand over the builder, packet builders,
//! and run helpers.
#![allow(dead_code)]

use sift_compile::build::{Builder, Cmp, Load, Pred};
use sift_compile::ir::{BlockId, Cfg, Size};
use sift_compile::pipeline::{LinkType, Options};
use sift_filter::Resolver;
use sift_insn::Program;
use sift_verify::{Mode, validate};
use sift_vm::Interpreter;

/// The link types with fixed link-layer offsets that `sift_filetests::ExprGen` generates for:
/// the optimizer's tests run on each.
pub const FIXED_LINKS: &[&str] = &[
    "EN10MB",
    "RAW",
    "IPV4",
    "IPV6",
    "LINUX_SLL",
    "LINUX_SLL2",
    "NULL",
    "LOOP",
    "PPP",
    "C_HDLC",
    "FDDI",
    "IEEE802",
    "SLIP",
];

pub const SNAPLEN: u32 = 262144;

/// A link type named as `tcpdump -y` names it, or given as a DLT number.
pub fn link(name: &str) -> LinkType {
    match name.parse::<i32>() {
        Ok(dlt) => LinkType::from_dlt(dlt).expect("a DLT number"),
        Err(_) => LinkType::from_name(name).expect("a link type name"),
    }
}

/// Pipeline options for `link` with `resolver`, unoptimized (libpcap's `-O`), with libpcap's
/// loops (`protochain`'s walk as libpcap emits it: the program sift runs on capture files).
pub fn unoptimized<'a>(link: LinkType, resolver: &'a dyn Resolver) -> Options<'a> {
    Options::new(link, resolver).optimize(false).mode(Mode::LibpcapLoops)
}
pub const ETH_IP: u32 = 0x800;
pub const ETH_IP6: u32 = 0x86dd;
pub const TCP: u32 = 6;
pub const UDP: u32 = 17;
pub const SCTP: u32 = 132;

/// gencode's `gen_linktype` on Ethernet: `ldh [12]; jeq #type`.
pub fn linktype(b: &mut Builder, ethertype: u32) -> Pred {
    b.cmp(Load::Abs(Size::H, 12), Cmp::Eq, ethertype, u32::MAX)
}

/// `gen_proto(v, Q_IP)`: IPv4 and the protocol byte.
pub fn proto_ip(b: &mut Builder, v: u32) -> Pred {
    let b0 = linktype(b, ETH_IP);
    let b1 = b.cmp(Load::Abs(Size::B, 23), Cmp::Eq, v, u32::MAX);
    b.and(b0, b1)
}

/// `gen_proto(v, Q_IPV6)`: IPv6 and the next header, directly or after a fragment header.
pub fn proto_ip6(b: &mut Builder, v: u32) -> Pred {
    let b0 = linktype(b, ETH_IP6);
    let b2 = b.cmp(Load::Abs(Size::B, 20), Cmp::Eq, 44, u32::MAX);
    let b1 = b.cmp(Load::Abs(Size::B, 54), Cmp::Eq, v, u32::MAX);
    let b1 = b.and(b2, b1);
    let b2 = b.cmp(Load::Abs(Size::B, 20), Cmp::Eq, v, u32::MAX);
    let b1 = b.or(b2, b1);
    b.and(b0, b1)
}

/// `gen_proto(v, Q_DEFAULT)`: `ip proto v or ip6 proto v`.
pub fn proto_any(b: &mut Builder, v: u32) -> Pred {
    let b0 = proto_ip(b, v);
    let b1 = proto_ip6(b, v);
    b.or(b0, b1)
}

/// `gen_portop(port, proto, Q_DST)`: protocol, not a later fragment, destination port past
/// the variable-length IPv4 header.
pub fn portop(b: &mut Builder, port: u32, proto: u32) -> Pred {
    let tmp = b.cmp(Load::Abs(Size::B, 23), Cmp::Eq, proto, u32::MAX);
    let b0 = b.cmp(Load::Abs(Size::H, 20), Cmp::Clear, 0x1fff, u32::MAX);
    let b0 = b.and(tmp, b0);
    let b1 = b.cmp(Load::AfterIpv4(14, Size::H, 16), Cmp::Eq, port, u32::MAX);
    b.and(b0, b1)
}

/// `gen_port(port, PROTO_UNDEF, Q_DST)`.
pub fn port(b: &mut Builder, port: u32) -> Pred {
    let b0 = linktype(b, ETH_IP);
    let tmp = portop(b, port, TCP);
    let b1 = portop(b, port, UDP);
    let b1 = b.or(tmp, b1);
    let tmp = portop(b, port, SCTP);
    let b1 = b.or(tmp, b1);
    b.and(b0, b1)
}

/// `gen_portop6(port, proto, Q_DST)`.
pub fn portop6(b: &mut Builder, port: u32, proto: u32) -> Pred {
    let b0 = b.cmp(Load::Abs(Size::B, 20), Cmp::Eq, proto, u32::MAX);
    let b1 = b.cmp(Load::Abs(Size::H, 56), Cmp::Eq, port, u32::MAX);
    b.and(b0, b1)
}

/// `gen_port6(port, PROTO_UNDEF, Q_DST)`.
pub fn port6(b: &mut Builder, port: u32) -> Pred {
    let b0 = linktype(b, ETH_IP6);
    let tmp = portop6(b, port, TCP);
    let b1 = portop6(b, port, UDP);
    let b1 = b.or(tmp, b1);
    let tmp = portop6(b, port, SCTP);
    let b1 = b.or(tmp, b1);
    b.and(b0, b1)
}

/// `ip and tcp and dst port 80`, built in gencode's order.
pub fn ip_tcp_dst_port_80() -> Cfg {
    let mut b = Builder::new();
    let ip = linktype(&mut b, ETH_IP);
    let tcp = proto_any(&mut b, TCP);
    let p = b.and(ip, tcp);
    let v4 = port(&mut b, 80);
    let v6 = port6(&mut b, 80);
    let dst = b.or(v6, v4);
    let p = b.and(p, dst);
    b.finish(p, SNAPLEN)
}

/// Emits, validates (Linux mode when `linux`) and prepares an interpreter.
pub fn compile(cfg: &Cfg, linux: bool) -> (Program, Interpreter) {
    let prog = sift_compile::emit::emit(cfg).expect("emit");
    let mode = if linux { Mode::Linux } else { Mode::Libpcap };
    let v = validate(&prog, mode).unwrap_or_else(|e| panic!("{e}\n{}", listing(&prog)));
    let vm = Interpreter::new(&v);
    (prog, vm)
}

pub fn listing(prog: &[sift_insn::Insn]) -> String {
    sift_insn::text::listing(prog)
}

// ---- packets ------------------------------------------------------------------------------

pub fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    p.extend(ethertype.to_be_bytes());
    p.extend(payload);
    p
}

pub fn l4(sport: u16, dport: u16) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend(sport.to_be_bytes());
    h.extend(dport.to_be_bytes());
    h.extend([0u8; 16]);
    h
}

/// IPv4 with `ihl` 32-bit words of header and the 16-bit flags/fragment field.
pub fn ipv4(proto: u8, ihl: u8, frag: u16, payload: &[u8]) -> Vec<u8> {
    let hl = usize::from(ihl) * 4;
    let mut h = vec![0u8; hl];
    h[0] = 0x40 | ihl;
    let total = (hl + payload.len()) as u16;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[6..8].copy_from_slice(&frag.to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&[10, 0, 0, 1]);
    h[16..20].copy_from_slice(&[10, 0, 0, 2]);
    h.extend(payload);
    eth(0x0800, &h)
}

/// IPv6, optionally with a fragment header in front of `proto`.
pub fn ipv6(proto: u8, frag_header: bool, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 40];
    h[0] = 0x60;
    h[6] = if frag_header { 44 } else { proto };
    h[7] = 64;
    if frag_header {
        h.extend([proto, 0, 0, 0, 0, 0, 0, 1]);
    }
    h.extend(payload);
    let len = (h.len() - 40) as u16;
    h[4..6].copy_from_slice(&len.to_be_bytes());
    eth(0x86dd, &h)
}

/// A spread of packets around `ip and tcp and dst port 80` (and their truncations).
pub fn port_packets() -> Vec<Vec<u8>> {
    let mut pkts = vec![
        ipv4(6, 5, 0, &l4(1234, 80)),
        ipv4(6, 5, 0, &l4(1234, 81)),
        ipv4(6, 5, 0, &l4(80, 1234)),
        ipv4(17, 5, 0, &l4(1234, 80)),
        ipv4(132, 5, 0, &l4(1234, 80)),
        ipv4(6, 6, 0, &l4(1234, 80)),
        ipv4(6, 15, 0, &l4(1234, 80)),
        ipv4(6, 5, 0x2000, &l4(1234, 80)),
        ipv4(6, 5, 0x0010, &l4(1234, 80)),
        ipv4(1, 5, 0, &l4(1234, 80)),
        ipv6(6, false, &l4(1234, 80)),
        ipv6(17, false, &l4(1234, 80)),
        ipv6(6, true, &l4(1234, 80)),
        ipv6(6, false, &l4(1234, 8080)),
        eth(0x0806, &[0u8; 28]),
        Vec::new(),
    ];
    let full = pkts.clone();
    for p in &full {
        for cut in [13, 14, 15, 24, 34, 35, 36, 37, 50, 54, 55, 56, 57] {
            if cut < p.len() {
                pkts.push(p[..cut].to_vec());
            }
        }
    }
    pkts
}

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Dominators against the definition: `a` dominates `b` iff `b` is unreachable once `a` is
/// removed (or `a == b`).
pub fn check_dominators(cfg: &Cfg) {
    let facts = sift_compile::analysis::Facts::new(cfg);
    let reach_without = |skip: BlockId| {
        let mut seen = vec![false; cfg.len()];
        let mut work = vec![];
        if cfg.entry != skip {
            seen[cfg.entry.index()] = true;
            work.push(cfg.entry);
        }
        while let Some(b) = work.pop() {
            for s in cfg.block(b).term.succs() {
                if s != skip && !seen[s.index()] {
                    seen[s.index()] = true;
                    work.push(s);
                }
            }
        }
        seen
    };
    for &a in facts.order() {
        let seen = reach_without(a);
        for &b in facts.order() {
            assert_eq!(facts.dominates(a, b), a == b || !seen[b.index()], "{a} dom {b}");
        }
    }
    assert_eq!(facts.idom(cfg.entry), None);
    for &b in &facts.order()[1..] {
        let d = facts.idom(b).unwrap();
        assert!(facts.dominates(d, b) && d != b);
        assert!(facts.pos(d) < facts.pos(b));
        assert!(!facts.preds(b).is_empty());
    }
}
