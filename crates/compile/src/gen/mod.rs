//! The code generator: pcap-filter syntax tree ([`sift_filter::ast`]) → IR ([`crate::ir::Cfg`]).
//!
//! **Why it exists.** This is libpcap's `gencode.c` for sift: each primitive becomes a
//! [`Pred`] built with [`crate::build::Builder`] in the same order as gencode builds its
//! blocks, so [`crate::emit::emit`] reproduces libpcap's *unoptimized* program (`tcpdump -O
//! -d`) instruction for instruction for the supported subset, and returns the same value on
//! every packet in any case.
//!
//! **Link types** ([`Context::link_type`] is a **DLT** number as on Linux, what
//! `pcap_open_dead` and the harness take, e.g. `DLT_RAW` = 12): EN10MB, RAW, IPV4, IPV6,
//! LINUX_SLL, LINUX_SLL2, NULL, LOOP, ENC, PPP, PPP_SERIAL, PPP_PPPD, PPP_ETHER, C_HDLC, FDDI,
//! IEEE802 (Token Ring), SLIP, PFLOG, IEEE802_11, IEEE802_11_RADIO (radiotap),
//! IEEE802_11_RADIO_AVS, PRISM_HEADER, PPI, IP_OVER_FC, NETANALYZER, NETANALYZER_TRANSPARENT,
//! DSA_TAG_BRCM and DSA_TAG_DSA ([`link_type_by_name`]). Others give "link type … is not
//! supported by sift yet".
//!
//! **Variable offsets.** 802.11 headers, radio headers and pflog headers have run-time
//! lengths. As in gencode (`off_linkhdr`/`off_linkpl` with `is_variable`), a load that needs
//! such an offset reads it from a scratch word allocated on first use (`ldx M[r]; ld [x+k]`),
//! and `Gen::vloffsets` puts the code computing the used words before the whole filter
//! (gencode's `insert_compute_vloffsets`: radiotap/PPI little-endian length, AVS length,
//! Prism-or-AVS, the 802.11 header length with QoS and radiotap padding, pflog's rounded
//! length; PPI's DLT check). `vxlan`/`geneve` compute the inner frame's offsets into three
//! more words and every later primitive looks inside the tunnel.
//!
//! **Primitives:** protocol abbreviations (`ip ip6 arp rarp tcp udp sctp icmp icmp6 igmp igrp
//! pim vrrp carp ah esp atalk aarp decnet lat sca moprc mopdl iso stp ipx netbeui`, with
//! libpcap's 802.2/SNAP checks on Ethernet, Linux cooked, 802.x and 802.11), `[ip|ip6|ether]
//! proto N|name` (IPv6 with libpcap's fragment-header rule, libpcap 1.11's range errors),
//! `[ip|ip6] protochain` (see below), `[src|dst] host` (IPv4, IPv6, names through the
//! [`Resolver`]; `ip`/`arp`/`rarp`), `net` (`/len`, `mask`, short forms, names), `ether
//! host|src|dst` (802.11: gencode's frame-type and DS-bit rules), `wlan addr1..4|ra|ta`,
//! `[ether] broadcast`, `ip broadcast` (with a netmask), `[ether|ip|ip6] multicast`,
//! `[tcp|udp|sctp] port|portrange`, `gateway`, `less`/`greater`, `byte`, relations over
//! arithmetic with `len` and `proto[i:n]` accessors (link, radio, network and IPv4 transport
//! protocols, `icmp6`), `vlan` and `mpls` (which move later offsets, as in libpcap),
//! `pppoed`/`pppoes` (the link layer becomes PPP), `geneve`/`vxlan [vni]`, 802.11 `type`/
//! `subtype`/`dir`, pflog `on`/`ifname`/`rset`/`ruleset`/`rnr`/`srnr`/`reason`/`action`,
//! `inbound`/`outbound` (Linux cooked, SLIP, pflog, pppd, DSA tags, or any link type with
//! [`Context::linux_ext`]), `ifindex` (LINUX_SLL2, or with `linux_ext`), `llc
//! [i|s|u|subtype]`, `iso`/`clnp`/`esis`/`isis` and the IS-IS PDU abbreviations, `iso|isis
//! proto`, `decnet [src|dst] host`, `and`/`or`/`not` and the empty filter. Everything else
//! (ATM and MTP primitives, ARCnet addresses, DECnet names) answers an error containing
//! [`UNSUPPORTED`]. Tunnels nest, and `vlan`, `mpls` and `pppoes` work inside them, at the
//! run-time offsets the tunnel computed. `vlan` with [`Context::linux_ext`] on Ethernet
//! follows libpcap 1.11's `gen_vlan_bpf_extensions` (the tag from the socket metadata or from
//! the packet).
//!
//! **`protochain`.** libpcap walks the header chain with a backward `ja`; sift's programs
//! are acyclic, so the walk is unrolled [`PROTOCHAIN_STEPS`] (128) header advances deep. The
//! result equals libpcap's on every packet whose walk ends within that many advances (checked
//! against libpcap's own looping program in `tests/gen_protochain.rs`); a longer walk makes
//! the term false. A filter may hold [`PROTOCHAIN_WALKS`] walks (each IPv6 walk is about
//! 3,300 instructions).
//!
//! **Fidelity:** libpcap 1.10.3 (the system library) where it and 1.11 (the corpus) differ,
//! except `gateway`, which follows 1.11's reading ("the protocol, and none of the host's
//! addresses", per protocol) and `net NAME`, whose value the resolver gives left-aligned.
//!
//! **Invariant:** nothing here recurses over `and`/`or` runs (they are flat in the AST); the
//! recursion over `not`, parentheses and arithmetic is bounded by the parser's
//! [`sift_filter::MAX_DEPTH`].

mod link;

use crate::build::{BuildError, Builder, Cmp, Load, Pred, Value};
use crate::error::{
    AddressKind, ArithError, CompileError, CompileErrorKind as K, LinkFeature, MplsConflict,
    NameKind, QualifierError as Q, Quantity, Resource,
};
use crate::ir::{AluOp, Cfg, JmpOp, Operand, Size, Slot, Src, Stmt, XSrc};
use crate::pipeline::Options;
use link::{Link, Prefix, ethertype};
use sift_filter::Resolver;
use sift_filter::ast::*;
use sift_insn::Program;
use sift_wire::LinkType;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// The DLT number of a supported link type named as `tcpdump -y` names it (`EN10MB`, `RAW`…,
/// with or without `DLT_`, any case), or given as a number.
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`], which takes a
/// [`sift_wire::LinkType`] (`LinkType::from_name`) and converts to DLT numbers itself.
pub fn link_type_by_name(name: &str) -> Option<i32> {
    let bare = name.strip_prefix("DLT_").unwrap_or(name);
    if let Ok(n) = bare.parse() {
        return Some(n);
    }
    LinkType::from_name(name).filter(|&t| Link::supports(t)).map(LinkType::dlt)
}

/// The Linux DLT number for a LINKTYPE number as stored in pcap and pcapng files
/// ([`LinkType::dlt`]).
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`], which converts
/// link types itself.
pub fn dlt_from_linktype(linktype: u16) -> i32 {
    LinkType::new(linktype).dlt()
}

/// What the generator needs besides the expression, with the link type as a DLT number.
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`], whose
/// [`Options`] take a [`sift_wire::LinkType`].
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The link type as a **DLT** number on Linux (`DLT_EN10MB` = 1, `DLT_RAW` = 12,
    /// `DLT_LINUX_SLL` = 113…), as `pcap_open_dead` and `tcpdump -y` take it.
    pub link_type: i32,
    /// The snapshot length: the value `ret` gives for an accepted packet.
    pub snaplen: u32,
    /// The IPv4 netmask (for `ip broadcast`), `None` when not known.
    pub netmask: Option<u32>,
    /// Whether Linux ancillary loads may be used (a live Linux capture): `inbound`/`outbound`
    /// and `ifindex` on link types without the information in the packet, and `vlan` on
    /// Ethernet (the tag may be in the socket's metadata).
    pub linux_ext: bool,
    /// Resolves host, network, service, protocol and ether names.
    pub resolver: &'a dyn Resolver,
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("link_type", &self.link_type)
            .field("snaplen", &self.snaplen)
            .field("netmask", &self.netmask)
            .field("linux_ext", &self.linux_ext)
            .finish_non_exhaustive()
    }
}

type R<T> = Result<T, CompileError>;

impl<'a> Context<'a> {
    /// The pipeline's options for this context (unoptimized, libpcap's validation rules).
    pub fn options(&self) -> Options<'a> {
        // A DLT number that is no link type's (101 is LINKTYPE_RAW, not a Linux DLT) gets a
        // number no link type has, which the generator refuses.
        let link = LinkType::from_dlt(self.link_type).unwrap_or(LinkType::new(u16::MAX));
        Options {
            snaplen: self.snaplen,
            netmask: self.netmask,
            linux_ext: self.linux_ext,
            optimize: false,
            ..Options::new(link, self.resolver)
        }
    }
}

/// Generates the graph for `expr` (`None`: the empty filter, which accepts everything).
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`] (whose
/// [`generate`] is this with [`Options`]).
pub fn compile(expr: Option<&Expr>, ctx: &Context<'_>) -> Result<Cfg, CompileError> {
    generate(expr, &ctx.options())
}

/// Generates the unoptimized graph for `expr` (`None`: the empty filter, which accepts
/// everything) with the link type, snapshot length, netmask, Linux extensions and resolver of
/// `opts` (its `optimize` and `mode` are the pipeline's business).
pub fn generate(expr: Option<&Expr>, opts: &Options<'_>) -> Result<Cfg, CompileError> {
    let link = Link::new(opts.link)?;
    let mut g = Gen {
        b: Builder::new(),
        link,
        netmask: opts.netmask,
        linux_ext: opts.linux_ext,
        resolver: opts.resolver,
        label_depth: 0,
        vlan_depth: 0,
        hdr_reg: None,
        pl_reg: None,
        reg_error: false,
        walks: 0,
        vlan_words: None,
        outer: link,
    };
    match expr {
        None => Ok(g.b.accept_all(opts.snaplen)),
        Some(e) => {
            let p = g.expr(e)?;
            let p = g.vloffsets(p)?;
            Ok(g.b.finish(p, opts.snaplen))
        }
    }
}

/// Parses `src` (checking names with the context's resolver), generates and emits it.
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline::compile`] (which
/// also validates).
pub fn compile_str(src: &str, ctx: &Context<'_>) -> Result<Program, CompileError> {
    let expr = sift_filter::parse_with(src, ctx.resolver)?;
    let cfg = compile(expr.as_ref(), ctx)?;
    crate::emit::emit(&cfg).map_err(|e| CompileError::new(K::Internal(e.to_string()), None))
}

/// Where a value is compared (gencode's `OR_*` offset bases, constant-offset link types only).
#[derive(Clone, Copy)]
enum Base {
    /// From the start of the packet (`OR_LINKHDR`).
    LinkHdr,
    /// From the network-layer header (`OR_LINKPL` + `off_nl`).
    Net,
    /// From the type field (`OR_LINKTYPE`).
    LinkType,
    /// From the link-layer payload, before `off_nl` (`OR_LLC`, `OR_LINKPL` without `off_nl`).
    LinkPl,
    /// From the 802.2 payload without SNAP (`OR_LINKPL_NOSNAP`).
    NoSnap,
    /// Past the IPv4 header (`OR_TRAN_IPV4`).
    TranV4,
    /// Past the fixed IPv6 header (`OR_TRAN_IPV6`).
    TranV6,
}

/// IP protocol numbers (`sift_wire::ipproto`) as the generator compares them: 32-bit values.
mod ipproto {
    use sift_wire::ipproto as ip;

    pub const HOPOPTS: u32 = ip::HOPOPTS as u32;
    pub const ICMP: u32 = ip::ICMP as u32;
    pub const IGMP: u32 = ip::IGMP as u32;
    pub const TCP: u32 = ip::TCP as u32;
    pub const IGRP: u32 = ip::IGRP as u32;
    pub const UDP: u32 = ip::UDP as u32;
    pub const ROUTING: u32 = ip::ROUTING as u32;
    pub const FRAGMENT: u32 = ip::FRAGMENT as u32;
    pub const ESP: u32 = ip::ESP as u32;
    pub const AH: u32 = ip::AH as u32;
    pub const ICMPV6: u32 = ip::ICMPV6 as u32;
    pub const NONE: u32 = ip::NONE as u32;
    pub const DSTOPTS: u32 = ip::DSTOPTS as u32;
    pub const PIM: u32 = ip::PIM as u32;
    pub const VRRP: u32 = ip::VRRP as u32;
    pub const SCTP: u32 = ip::SCTP as u32;
}

/// Linux's ancillary-data offsets (`SKF_AD_OFF` is -4096).
const SKF_AD_OFF: u32 = 0xffff_f000;
const SKF_AD_PKTTYPE: u32 = 4;
const SKF_AD_IFINDEX: u32 = 8;

/// How many extension or AH headers the unrolled `protochain` walk advances over (see
/// `Gen::protochain`).
pub const PROTOCHAIN_STEPS: usize = 128;

/// How many unrolled `protochain` walks one filter may hold (each is about 3,300 instructions
/// for IPv6 at 128 steps; the default `protochain` is two walks, IPv4 and IPv6).
pub const PROTOCHAIN_WALKS: u32 = 8;

/// gencode's `PROTO_UNDEF`: a port on TCP, UDP or SCTP.
const PROTO_UNDEF: Option<u32> = None;

struct Gen<'a> {
    b: Builder,
    /// The link-layer model; `vlan`, `mpls` and `pppoes` move its offsets for what follows,
    /// as in gencode.
    link: Link,
    /// The IPv4 netmask (for `ip broadcast`), `None` when not known.
    netmask: Option<u32>,
    /// Whether Linux ancillary loads may be used (a live Linux capture).
    linux_ext: bool,
    /// Resolves host, network, service, protocol and ether names.
    resolver: &'a dyn Resolver,
    /// MPLS labels matched so far (gencode's `label_stack_depth`).
    label_depth: u32,
    /// VLAN tags matched so far (gencode's `vlan_stack_depth`).
    vlan_depth: u32,
    /// The scratch word holding the link-layer header's offset, once a load needed it
    /// (gencode's `off_linkhdr.reg`; variable-length radio headers only).
    hdr_reg: Option<Slot>,
    /// The scratch word holding the link-layer payload's offset, once a load needed it
    /// (gencode's `off_linkpl.reg`; 802.11 and pflog).
    pl_reg: Option<Slot>,
    /// Whether allocating one of those words failed (reported when the expression is done).
    reg_error: bool,
    /// Unrolled `protochain` walks generated so far.
    walks: u32,
    /// The payload and type offset words of `vlan` with Linux extensions (zeroed first).
    vlan_words: Option<(Slot, Slot)>,
    /// The capture's own link layer (what the offsets computed first are about, even after
    /// `vxlan`/`geneve` moved `link` into the tunnel).
    outer: Link,
}

fn size_of(n: u8) -> Size {
    match n {
        1 => Size::B,
        2 => Size::H,
        _ => Size::W,
    }
}

impl Gen<'_> {
    // ---- loads and comparisons ----------------------------------------------------------

    fn load(&mut self, base: Base, off: u32, size: Size) -> Load {
        let nl = self.link.nl();
        if let Some(t) = self.link.tunnel {
            // Inside vxlan/geneve: every base is a scratch word the tunnel check filled.
            let ind = |k: u32| Stmt::Ld(Src::Ind(size, k));
            let with = |r: Slot, k: u32| Load::Stmts(vec![Stmt::Ldx(XSrc::Mem(r)), ind(k)]);
            return match base {
                Base::LinkHdr => match t.hdr {
                    Some(r) => with(r, self.link.off_linkhdr.wrapping_add(off)),
                    None => Load::Abs(size, self.link.off_linkhdr.wrapping_add(off)),
                },
                Base::LinkType => with(t.lt, self.link.off_linktype.unwrap_or(0) + off),
                Base::Net => with(t.pl, nl.wrapping_add(off)),
                Base::LinkPl => with(t.pl, self.link.off_linkpl + off),
                Base::NoSnap => with(t.pl, self.link.off_linkpl + self.link.off_nl_nosnap + off),
                Base::TranV6 => with(t.pl, nl + 40 + off),
                Base::TranV4 => {
                    let mut v = self.iphdrlen_var(t.pl);
                    v.push(ind(nl + off));
                    Load::Stmts(v)
                }
            };
        }
        if self.link.var_hdr() && matches!(base, Base::LinkHdr | Base::LinkType) {
            // gencode's gen_abs_offset_varpart(&off_linkhdr): relative to the radio header's
            // length, computed into a scratch word first.
            let r = self.hdr_reg();
            let k = match base {
                Base::LinkType => self.link.off_linktype.unwrap_or(0) + off,
                _ => self.link.off_linkhdr.wrapping_add(off),
            };
            return Load::Stmts(vec![Stmt::Ldx(XSrc::Mem(r)), Stmt::Ld(Src::Ind(size, k))]);
        }
        if self.link.var_pl && !matches!(base, Base::LinkHdr | Base::LinkType) {
            let r = self.pl_reg();
            let ldx = Stmt::Ldx(XSrc::Mem(r));
            let ind = |k: u32| Stmt::Ld(Src::Ind(size, k));
            return Load::Stmts(match base {
                Base::Net => vec![ldx, ind(nl.wrapping_add(off))],
                Base::LinkPl => vec![ldx, ind(self.link.off_linkpl + off)],
                Base::NoSnap => {
                    vec![ldx, ind(self.link.off_linkpl + self.link.off_nl_nosnap + off)]
                }
                Base::TranV6 => vec![ldx, ind(nl + 40 + off)],
                _ => {
                    // gen_loadx_iphdrlen with a variable payload offset.
                    let mut v = self.iphdrlen_var(r);
                    v.push(ind(nl + off));
                    v
                }
            });
        }
        match base {
            Base::LinkHdr => Load::Abs(size, self.link.off_linkhdr.wrapping_add(off)),
            Base::Net => Load::Abs(size, nl.wrapping_add(off)),
            Base::LinkType => Load::Abs(size, self.link.off_linktype.unwrap_or(0) + off),
            Base::LinkPl => Load::Abs(size, self.link.off_linkpl + off),
            Base::NoSnap => Load::Abs(size, self.link.off_linkpl + self.link.off_nl_nosnap + off),
            Base::TranV4 => Load::AfterIpv4(nl, size, nl + off),
            Base::TranV6 => Load::Abs(size, nl + 40 + off),
        }
    }

    /// `ldx M[r]; ldb [x + nl]; and #0xf; lsh #2; add x; tax`: X = the offset of the IPv4
    /// payload when the network layer starts at the run-time offset in `M[r]` (gencode's
    /// `gen_loadx_iphdrlen` with a variable offset).
    fn iphdrlen_var(&self, r: Slot) -> Vec<Stmt> {
        vec![
            Stmt::Ldx(XSrc::Mem(r)),
            Stmt::Ld(Src::Ind(Size::B, self.link.nl())),
            Stmt::Alu(AluOp::And, Operand::K(0xf)),
            Stmt::Alu(AluOp::Lsh, Operand::K(2)),
            Stmt::Alu(AluOp::Add, Operand::X),
            Stmt::Tax,
        ]
    }

    /// A scratch word for a variable offset (gencode's `alloc_reg` in
    /// `gen_abs_offset_varpart`); a failure is reported when the expression is done.
    fn var_slot(b: &mut Builder, failed: &mut bool) -> Slot {
        b.alloc_slot().unwrap_or_else(|_| {
            *failed = true;
            Slot::new(0).expect("slot 0 exists")
        })
    }

    /// The scratch word holding the link-layer header offset, allocated on first use.
    fn hdr_reg(&mut self) -> Slot {
        match self.hdr_reg {
            Some(r) => r,
            None => {
                let r = Self::var_slot(&mut self.b, &mut self.reg_error);
                self.hdr_reg = Some(r);
                r
            }
        }
    }

    /// The scratch word holding the link-layer payload offset, allocated on first use.
    fn pl_reg(&mut self) -> Slot {
        match self.pl_reg {
            Some(r) => r,
            None => {
                let r = Self::var_slot(&mut self.b, &mut self.reg_error);
                self.pl_reg = Some(r);
                r
            }
        }
    }

    /// gencode's `gen_ncmp`/`gen_mcmp`/`gen_cmp`.
    fn cmp(&mut self, base: Base, off: u32, size: Size, cmp: Cmp, v: u32, mask: u32) -> Pred {
        let load = self.load(base, off, size);
        self.b.cmp(load, cmp, v, mask)
    }

    fn eq(&mut self, base: Base, off: u32, size: Size, v: u32) -> Pred {
        self.cmp(base, off, size, Cmp::Eq, v, u32::MAX)
    }

    fn linktype(&mut self, ll_proto: u32) -> R<Pred> {
        if self.label_depth > 0 {
            // Inside MPLS: the bottom-of-stack bit and the IP version (gen_mpls_linktype).
            let version = match ll_proto {
                ethertype::IP | 0x21 => 0x40,
                ethertype::IPV6 | 0x57 => 0x60,
                _ => {
                    return Err(CompileError::new(
                        K::AfterMpls(MplsConflict::Protocol(ll_proto)),
                        None,
                    ));
                }
            };
            let b0 = self.cmp(Base::Net, 0u32.wrapping_sub(2), Size::B, Cmp::Eq, 1, 1);
            let b1 = self.cmp(Base::Net, 0, Size::B, Cmp::Eq, version, 0xf0);
            return Ok(self.b.and(b0, b1));
        }
        if matches!(self.link.kind, link::Kind::Ether | link::Kind::Sll)
            && (ll_proto <= link::ETHERMTU
                || matches!(ll_proto, ethertype::ATALK | ethertype::AARP))
        {
            return Ok(self.llc_linktype(ll_proto));
        }
        let tunnel = self.link.tunnel.filter(|_| self.link.kind == link::Kind::Ether);
        if tunnel.is_some_and(|t| t.geneve) {
            // Geneve's protocol type, or the inner Ethernet type (gencode's is_geneve).
            return Ok(self.eq(Base::LinkType, 0, Size::H, ll_proto));
        }
        if self.link.tunnel.is_some() && self.link.kind == link::Kind::Ppp {
            // PPP at a run-time offset (`pppoes` inside a tunnel or after `vlan` with Linux
            // extensions).
            return Ok(self.eq(Base::LinkType, 0, Size::H, link::ppp_type(ll_proto)));
        }
        if tunnel.is_some() && ll_proto > link::ETHERMTU {
            // Ethernet at run-time offsets (inside vxlan, after `vlan` with Linux
            // extensions): the type field through its word.
            return Ok(self.eq(Base::LinkType, 0, Size::H, ll_proto));
        }
        match self.link.kind {
            link::Kind::Llc => return Ok(self.llc802_linktype(ll_proto)),
            link::Kind::Wlan => {
                // A data frame (gen_check_802_11_data_frame), then the 802.2 payload.
                let b0 = self.wlan_data_frame();
                let b1 = self.llc802_linktype(ll_proto);
                return Ok(self.b.and(b0, b1));
            }
            link::Kind::Pflog => {
                // The address family, in the header's second byte (Linux's AF_INET6).
                return Ok(match ll_proto {
                    ethertype::IP => self.eq(Base::LinkHdr, 1, Size::B, 2),
                    ethertype::IPV6 => self.eq(Base::LinkHdr, 1, Size::B, 10),
                    _ => self.b.never(),
                });
            }
            _ => {}
        }
        self.link.linktype(&mut self.b, ll_proto)
    }

    /// gencode's `gen_ether_linktype` and `gen_linux_sll_linktype` for 802.2/SNAP-encapsulated
    /// protocols (LLC SAPs, IPX, AppleTalk).
    fn llc_linktype(&mut self, ll_proto: u32) -> Pred {
        use link::llcsap;
        let ether = self.link.kind == link::Kind::Ether;
        // "This is an 802.2 frame": a length, not a type (Ethernet), or LINUX_SLL_P_802_2.
        let is_8022 = |g: &mut Self| {
            if ether {
                !g.cmp(Base::LinkType, 0, Size::H, Cmp::Gt, link::ETHERMTU, u32::MAX)
            } else {
                g.eq(Base::LinkType, 0, Size::H, 4)
            }
        };
        match ll_proto {
            llcsap::ISONS | llcsap::IP | llcsap::NETBEUI => {
                let b0 = is_8022(self);
                let b1 = self.eq(Base::LinkPl, 0, Size::H, (ll_proto << 8) | ll_proto);
                self.b.and(b0, b1)
            }
            llcsap::IPX if ether => {
                let b0 = self.eq(Base::LinkPl, 0, Size::B, llcsap::IPX);
                let b1 = self.eq(Base::LinkPl, 0, Size::H, 0xffff);
                let b1 = self.b.or(b0, b1);
                let b0 = self.snap(0x000000, ethertype::IPX);
                let b1 = self.b.or(b0, b1);
                let b0 = is_8022(self);
                let b1 = self.b.and(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, ethertype::IPX);
                self.b.or(b0, b1)
            }
            llcsap::IPX => {
                let b0 = self.eq(Base::LinkPl, 0, Size::B, llcsap::IPX);
                let b1 = self.snap(0x000000, ethertype::IPX);
                let b1 = self.b.or(b0, b1);
                let b0 = is_8022(self);
                let b1 = self.b.and(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, 1); // LINUX_SLL_P_802_3
                let b1 = self.b.or(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, ethertype::IPX);
                self.b.or(b0, b1)
            }
            ethertype::ATALK | ethertype::AARP => {
                let b0 = is_8022(self);
                let b1 = if ll_proto == ethertype::ATALK {
                    self.snap(0x080007, ethertype::ATALK)
                } else {
                    self.snap(0x000000, ethertype::AARP)
                };
                let b1 = self.b.and(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, ll_proto);
                self.b.or(b0, b1)
            }
            _ if ether => {
                let b0 = is_8022(self);
                let b1 = self.eq(Base::LinkType, 2, Size::B, ll_proto);
                self.b.and(b0, b1)
            }
            _ => {
                let b0 = is_8022(self);
                let b1 = self.eq(Base::LinkPl, 0, Size::B, ll_proto);
                self.b.and(b0, b1)
            }
        }
    }

    /// gencode's `gen_llc_linktype` (FDDI, Token Ring): the DSAP, or the SNAP type field.
    fn llc802_linktype(&mut self, ll_proto: u32) -> Pred {
        use link::llcsap;
        match ll_proto {
            llcsap::IP | llcsap::ISONS | llcsap::NETBEUI => {
                self.eq(Base::LinkPl, 0, Size::H, (ll_proto << 8) | ll_proto)
            }
            llcsap::IPX => self.eq(Base::LinkPl, 0, Size::B, llcsap::IPX),
            ethertype::ATALK => self.snap(0x080007, ethertype::ATALK),
            p if p <= link::ETHERMTU => self.eq(Base::LinkPl, 0, Size::B, p),
            p => self.eq(Base::LinkPl, 6, Size::H, p),
        }
    }

    /// An 802.11 data frame: type bits `10` in the frame control (libpcap 1.11's
    /// `gen_check_802_11_data_frame`, one masked comparison).
    fn wlan_data_frame(&mut self) -> Pred {
        self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Eq, 0x08, 0x0c)
    }

    /// gencode's `gen_llc`: "an 802.2 LLC frame".
    fn llc_frame(&mut self) -> R<Pred> {
        let not_here = || {
            CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Llc, link: self.link.link_type },
                None,
            )
        };
        if matches!(
            self.link.link_type,
            LinkType::IP_OVER_FC | LinkType::NETANALYZER | LinkType::NETANALYZER_TRANSPARENT
        ) {
            return Err(not_here());
        }
        match self.link.kind {
            link::Kind::Wlan => Ok(self.wlan_data_frame()),
            link::Kind::Ether => {
                let b0 = !self.cmp(Base::LinkType, 0, Size::H, Cmp::Gt, link::ETHERMTU, u32::MAX);
                // Not NetWare over raw 802.3 (DSAP and SSAP 0xff).
                let b1 = !self.eq(Base::LinkPl, 0, Size::H, 0xffff);
                Ok(self.b.and(b0, b1))
            }
            link::Kind::Llc => Ok(self.b.always()),
            _ => Err(not_here()),
        }
    }

    /// `llc [i|s|u|subtype]` (gencode's `gen_llc_*`).
    fn llc(&mut self, kind: Option<&str>) -> R<Pred> {
        let b0 = self.llc_frame()?;
        let Some(kind) = kind else { return Ok(b0) };
        let b1 = match kind {
            "i" => !self.cmp(Base::LinkPl, 2, Size::B, Cmp::Set, 1, u32::MAX),
            "s" => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, 1, 3),
            "u" => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, 3, 3),
            k => {
                let s_sub = match k {
                    "rr" => Some(0x01),
                    "rnr" => Some(0x05),
                    "rej" => Some(0x09),
                    _ => None,
                };
                let u_sub = match k {
                    "ui" => Some(0x03),
                    "ua" => Some(0x63),
                    "disc" => Some(0x43),
                    "dm" => Some(0x0f),
                    "sabme" => Some(0x6f),
                    "test" => Some(0xe3),
                    "xid" => Some(0xaf),
                    "frmr" => Some(0x87),
                    _ => None,
                };
                match (s_sub, u_sub) {
                    (Some(v), _) => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, v, 0x0f),
                    (None, Some(v)) => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, v, 0xef),
                    (None, None) => {
                        return Err(CompileError::new(
                            K::NameUnknown { what: NameKind::LlcType, name: k.into() },
                            None,
                        ));
                    }
                }
            }
        };
        Ok(self.b.and(b0, b1))
    }

    /// gencode's `gen_snap`: an LLC/SNAP header with `orgcode` and `ptype`.
    fn snap(&mut self, orgcode: u32, ptype: u32) -> Pred {
        let [_, o1, o2, o3] = orgcode.to_be_bytes();
        let [p1, p2] = (ptype as u16).to_be_bytes();
        self.bcmp(Base::LinkPl, 0, &[0xaa, 0xaa, 0x03, o1, o2, o3, p1, p2])
    }

    /// gencode's `gen_ipfrag`: not a fragment other than the first.
    fn ipfrag(&mut self) -> Pred {
        !self.cmp(Base::Net, 6, Size::H, Cmp::Set, 0x1fff, u32::MAX)
    }

    // ---- variable-length headers ----------------------------------------------------------

    /// gencode's `insert_compute_vloffsets` (and, for PPI, `gen_ppi_dlt_check`): code before
    /// `p` that computes the run-time offsets `p`'s loads use. Only the offsets some load
    /// needed are computed.
    fn vloffsets(&mut self, p: Pred) -> R<Pred> {
        use Stmt::*;
        // The payload offset is computed from the header offset.
        if self.pl_reg.is_some() && self.outer.var_hdr() && self.hdr_reg.is_none() {
            self.hdr_reg();
        }
        if self.reg_error {
            return Err(BuildError::TooManyRegisters.into());
        }
        // libpcap's quirk, kept: after `vxlan`/`geneve` gencode's offset registers are the
        // tunnel's, and `insert_compute_vloffsets` (which runs last) writes the outer
        // header's offsets into *those*; the outer loads read words nothing wrote (zero).
        let (hdr_reg, pl_reg) = match self.link.tunnel {
            Some(t) if self.outer.var_hdr() || self.outer.var_pl => (t.hdr, Some(t.pl)),
            _ => (self.hdr_reg, self.pl_reg),
        };
        let ldb = |k| Ld(Src::Abs(Size::B, k));
        // The header offset: statements leaving it in X and its word, after an optional
        // branchy head (Prism/AVS).
        let (head, mut stmts): (Option<Pred>, Vec<Stmt>) = match (self.outer.prefix, hdr_reg) {
            (Prefix::Radiotap | Prefix::Ppi, Some(r)) => (
                None,
                vec![
                    ldb(3),
                    Alu(AluOp::Lsh, Operand::K(8)),
                    Tax,
                    ldb(2),
                    Alu(AluOp::Or, Operand::X),
                    St(r),
                    Tax,
                ],
            ),
            (Prefix::Avs, Some(r)) => (None, vec![Ld(Src::Abs(Size::W, 4)), St(r), Tax]),
            (Prefix::Prism, Some(r)) => {
                // An AVS header (its cookie in the first word) gives its length at 4; a Prism
                // header is 144 bytes.
                let c = self.b.branch(
                    vec![Ld(Src::Abs(Size::W, 0)), Alu(AluOp::And, Operand::K(0xffff_f000))],
                    JmpOp::Jeq,
                    Operand::K(0x8021_1000),
                );
                let avs = self.b.straight(vec![Ld(Src::Abs(Size::W, 4))]);
                let prism = self.b.straight(vec![Ld(Src::Imm(144))]);
                let h = self.b.ite(c, avs, prism);
                (Some(self.b.join(h)), vec![St(r), Tax])
            }
            _ => (None, Vec::new()),
        };
        let body = match (self.outer.kind, pl_reg) {
            (link::Kind::Wlan, Some(pl)) => {
                // gen_load_802_11_header_len: 24 bytes, 2 more for QoS data frames, and with
                // radiotap, rounded up to 4 when the flags say there is padding.
                if stmts.is_empty() {
                    stmts.push(Ldx(XSrc::Imm(self.outer.off_linkhdr)));
                }
                stmts.extend([
                    Txa,
                    Alu(AluOp::Add, Operand::K(24)),
                    St(pl),
                    Ld(Src::Ind(Size::B, 0)),
                ]);
                let data1 =
                    self.b.branch(std::mem::take(&mut stmts), JmpOp::Jset, Operand::K(0x08));
                let data2 = self.b.branch(Vec::new(), JmpOp::Jset, Operand::K(0x04));
                let is_data = self.b.and(data1, !data2);
                let qos = self.b.branch(Vec::new(), JmpOp::Jset, Operand::K(0x80));
                let add2 =
                    self.b.straight(vec![Ld(Src::Mem(pl)), Alu(AluOp::Add, Operand::K(2)), St(pl)]);
                let qos = self.b.and(qos, add2);
                let qos = self.b.join(qos);
                let rest = if self.outer.prefix == Prefix::Radiotap {
                    let flags = self.b.branch(
                        vec![Ld(Src::Abs(Size::W, 4))],
                        JmpOp::Jset,
                        Operand::K(0x0000_0002u32.swap_bytes()),
                    );
                    let ext = self.b.branch(
                        Vec::new(),
                        JmpOp::Jset,
                        Operand::K(0x8000_0000u32.swap_bytes()),
                    );
                    let tsft = self.b.branch(
                        Vec::new(),
                        JmpOp::Jset,
                        Operand::K(0x0000_0001u32.swap_bytes()),
                    );
                    let pad16 = self.b.branch(vec![ldb(16)], JmpOp::Jset, Operand::K(0x20));
                    let pad8 = self.b.branch(vec![ldb(8)], JmpOp::Jset, Operand::K(0x20));
                    let pad = self.b.ite(tsft, pad16, pad8);
                    let round = self.b.straight(vec![
                        Ld(Src::Mem(pl)),
                        Alu(AluOp::Add, Operand::K(3)),
                        Alu(AluOp::And, Operand::K(!3)),
                        St(pl),
                    ]);
                    let pad = self.b.and(pad, round);
                    let r = self.b.and(flags, !ext);
                    let r = self.b.and(r, pad);
                    let r = self.b.join(r);
                    let qos = self.b.seq(qos, r);
                    Some(qos)
                } else {
                    Some(qos)
                };
                let body = match rest {
                    Some(q) => self.b.and(is_data, q),
                    None => is_data,
                };
                Some(self.b.join(body))
            }
            (link::Kind::Pflog, Some(pl)) => {
                // gen_load_pflog_llprefixlen: the header length, rounded up to 4.
                stmts.extend([
                    ldb(0),
                    Alu(AluOp::Add, Operand::K(3)),
                    Alu(AluOp::And, Operand::K(0xffff_fffc)),
                    St(pl),
                    Tax,
                ]);
                None
            }
            _ => None,
        };
        if stmts.is_empty()
            && head.is_none()
            && let Some((pl, lt)) = self.vlan_words
        {
            // gencode's is_vlan_vloffset: the words start at zero.
            stmts.extend([Ld(Src::Imm(0)), St(pl), St(lt)]);
        }
        let mut p = match body {
            Some(body) => self.b.seq(body, p),
            None => {
                if !stmts.is_empty() {
                    self.b.prepend(&p, &stmts);
                }
                p
            }
        };
        if let Some(h) = head {
            p = self.b.seq(h, p);
        }
        if self.outer.prefix == Prefix::Ppi && self.link.tunnel.is_none() {
            // gen_ppi_dlt_check: the PPI header's DLT (little-endian) is DLT_IEEE802_11.
            // (libpcap tests the link type at the end: after vxlan/geneve there is none.)
            let check = self.b.cmp(Load::Abs(Size::W, 4), Cmp::Eq, 105u32.swap_bytes(), u32::MAX);
            p = self.b.and(check, p);
        }
        Ok(p)
    }

    // ---- boolean structure --------------------------------------------------------------

    fn expr(&mut self, e: &Expr) -> R<Pred> {
        match &e.kind {
            ExprKind::Chain { first, rest } => {
                let mut acc = self.expr(first)?;
                for (op, _, e) in rest {
                    let p = self.expr(e)?;
                    acc = match op {
                        BoolOp::And => self.b.and(acc, p),
                        BoolOp::Or => self.b.or(acc, p),
                    };
                }
                Ok(acc)
            }
            ExprKind::Not(e) => Ok(!self.expr(e)?),
            ExprKind::Prim(p) => self.prim(p).map_err(|err| err.at(e.span)),
            ExprKind::Rel { op, lhs, rhs } => {
                let a = self.arith(lhs)?;
                let c = self.arith(rhs)?;
                let cmp = match op {
                    RelOp::Gt => Cmp::Gt,
                    RelOp::Ge => Cmp::Ge,
                    RelOp::Eq => Cmp::Eq,
                    RelOp::Le => Cmp::Le,
                    RelOp::Lt => Cmp::Lt,
                    RelOp::Ne => Cmp::Ne,
                };
                Ok(self.b.relation(cmp, a, c))
            }
        }
    }

    // ---- arithmetic ---------------------------------------------------------------------

    fn arith(&mut self, a: &Arith) -> R<Value> {
        let r = match &a.kind {
            ArithKind::Num(n) => self.b.imm(*n)?,
            ArithKind::Len => self.b.len()?,
            ArithKind::Neg(x) => {
                let v = self.arith(x)?;
                self.b.neg(v)
            }
            ArithKind::Bin { op, lhs, rhs } => {
                let x = self.arith(lhs)?;
                let mut y = self.arith(rhs)?;
                // libpcap 1.10 looks at the *first* statement of the right operand: a constant
                // there (even the index of `proto[k]`) counts as the divisor or shift.
                if let Some(Stmt::Ld(Src::Imm(k))) = y.stmts().first() {
                    let msg = match op {
                        ArithOp::Div if *k == 0 => Some(ArithError::DivisionByZero),
                        ArithOp::Mod if *k == 0 => Some(ArithError::ModulusByZero),
                        ArithOp::Shl | ArithOp::Shr if *k > 31 => Some(ArithError::ShiftTooLarge),
                        _ => None,
                    };
                    if let Some(msg) = msg {
                        return Err(CompileError::new(K::Arithmetic(msg), Some(a.span)));
                    }
                }
                // gencode's gen_arth keeps the left operand's protocol check only.
                drop(y.take_guard());
                let op = match op {
                    ArithOp::Add => AluOp::Add,
                    ArithOp::Sub => AluOp::Sub,
                    ArithOp::Mul => AluOp::Mul,
                    ArithOp::Div => AluOp::Div,
                    ArithOp::Mod => AluOp::Mod,
                    ArithOp::And => AluOp::And,
                    ArithOp::Or => AluOp::Or,
                    ArithOp::Xor => AluOp::Xor,
                    ArithOp::Shl => AluOp::Lsh,
                    ArithOp::Shr => AluOp::Rsh,
                };
                self.b.arith(op, x, y).map_err(|e| CompileError::from(e).at(a.span))?
            }
            ArithKind::Load { proto, index, size } => {
                let idx = self.arith(index)?;
                self.index_load(*proto, idx, size_of(*size)).map_err(|e| e.at(a.span))?
            }
        };
        Ok(r)
    }

    /// gencode's `gen_load`: `proto[index:size]`.
    fn index_load(&mut self, proto: Proto, mut idx: Value, size: Size) -> R<Value> {
        if self.link.var_hdr() || self.link.var_pl || self.link.tunnel.is_some() {
            return self.index_load_var(proto, idx, size);
        }
        let nl = self.link.nl();
        match proto {
            p if p.is_link() => Ok(self.b.load(idx, &[], self.link.off_linkhdr, size, None)?),
            Proto::Radio => Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Radio, link: self.link.link_type },
                None,
            )),
            p if Self::is_net_proto(p) => {
                let guard = self.abbrev(proto)?;
                Ok(self.b.load(idx, &[], nl, size, Some(guard))?)
            }
            p if Self::is_tran_proto(p) => {
                let old = idx.take_guard();
                let p = self.abbrev(proto)?;
                let frag = self.ipfrag();
                let mut g = self.b.and(p, frag);
                if let Some(old) = old {
                    g = self.b.and(old, g);
                }
                let ip = self.abbrev(Proto::Ip)?;
                let g = self.b.and(ip, g);
                Ok(self.b.load(idx, &[Stmt::Ldx(XSrc::Msh(nl))], nl, size, Some(g))?)
            }
            Proto::Icmp6 => {
                let old = idx.take_guard();
                let mut g = self.abbrev(Proto::Ip6)?;
                if let Some(old) = old {
                    g = self.b.and(old, g);
                }
                let nh = self.eq(Base::Net, 6, Size::B, ipproto::ICMPV6);
                let g = self.b.and(g, nh);
                Ok(self.b.load(idx, &[], nl + 40, size, Some(g))?)
            }
            p => Err(CompileError::unsupported(format!("`{}[…]`", p.as_str()), None)),
        }
    }

    fn is_net_proto(p: Proto) -> bool {
        matches!(
            p,
            Proto::Ip
                | Proto::Arp
                | Proto::Rarp
                | Proto::Ip6
                | Proto::Atalk
                | Proto::Decnet
                | Proto::Sca
                | Proto::Lat
                | Proto::Moprc
                | Proto::Mopdl
        )
    }

    fn is_tran_proto(p: Proto) -> bool {
        matches!(
            p,
            Proto::Sctp
                | Proto::Tcp
                | Proto::Udp
                | Proto::Icmp
                | Proto::Igmp
                | Proto::Igrp
                | Proto::Pim
                | Proto::Vrrp
                | Proto::Carp
        )
    }

    /// `gen_load` when the link-layer header or payload starts at a run-time offset: the
    /// offset's scratch word is allocated while the load is built, before the protocol
    /// checks, as in gencode.
    fn index_load_var(&mut self, proto: Proto, mut idx: Value, size: Size) -> R<Value> {
        let nl = self.link.nl();
        let var_hdr = self.link.var_hdr();
        match proto {
            Proto::Radio => {
                if !matches!(self.link.prefix, Prefix::Radiotap | Prefix::Avs | Prefix::Prism) {
                    return Err(CompileError::new(
                        K::NotOnLinkType { what: LinkFeature::Radio, link: self.link.link_type },
                        None,
                    ));
                }
                Ok(self.b.load(idx, &[], 0, size, None)?)
            }
            p if p.is_link() && self.link.tunnel.is_some() => {
                let hdr = self.link.off_linkhdr;
                match self.link.tunnel.and_then(|t| t.hdr) {
                    Some(r) => Ok(self.b.load(idx, &[Stmt::Ldx(XSrc::Mem(r))], hdr, size, None)?),
                    None => Ok(self.b.load(idx, &[], hdr, size, None)?),
                }
            }
            p if p.is_link() => {
                let hdr = self.link.off_linkhdr;
                if !var_hdr {
                    return Ok(self.b.load(idx, &[], hdr, size, None)?);
                }
                let (mut slot, mut failed) = (self.hdr_reg, false);
                let v = self.b.load_via(
                    idx,
                    |b| {
                        let r = *slot.get_or_insert_with(|| Self::var_slot(b, &mut failed));
                        vec![Stmt::Ldx(XSrc::Mem(r))]
                    },
                    hdr,
                    size,
                    None,
                )?;
                self.hdr_reg = slot;
                self.reg_error |= failed;
                Ok(v)
            }
            p if Self::is_net_proto(p) || p == Proto::Icmp6 || Self::is_tran_proto(p) => {
                let tran = Self::is_tran_proto(p);
                let old = if tran || p == Proto::Icmp6 { idx.take_guard() } else { None };
                let tunnel_pl = self.link.tunnel.map(|t| t.pl);
                let (mut slot, mut failed) = (tunnel_pl.or(self.pl_reg), false);
                let iphdr = |r: Slot| {
                    let mut v = vec![Stmt::Ldx(XSrc::Mem(r))];
                    if tran {
                        v.extend([
                            Stmt::Ld(Src::Ind(Size::B, nl)),
                            Stmt::Alu(AluOp::And, Operand::K(0xf)),
                            Stmt::Alu(AluOp::Lsh, Operand::K(2)),
                            Stmt::Alu(AluOp::Add, Operand::X),
                            Stmt::Tax,
                        ]);
                    }
                    v
                };
                let off = if p == Proto::Icmp6 { nl + 40 } else { nl };
                let v = self.b.load_via(
                    idx,
                    |b| iphdr(*slot.get_or_insert_with(|| Self::var_slot(b, &mut failed))),
                    off,
                    size,
                    None,
                )?;
                if tunnel_pl.is_none() {
                    self.pl_reg = slot;
                }
                self.reg_error |= failed;
                let g = if tran {
                    let pp = self.abbrev(proto)?;
                    let frag = self.ipfrag();
                    let mut g = self.b.and(pp, frag);
                    if let Some(old) = old {
                        g = self.b.and(old, g);
                    }
                    let ip = self.abbrev(Proto::Ip)?;
                    self.b.and(ip, g)
                } else if p == Proto::Icmp6 {
                    let mut g = self.abbrev(Proto::Ip6)?;
                    if let Some(old) = old {
                        g = self.b.and(old, g);
                    }
                    let nh = self.eq(Base::Net, 6, Size::B, ipproto::ICMPV6);
                    self.b.and(g, nh)
                } else {
                    self.abbrev(proto)?
                };
                Ok(self.b.guarded(v, g))
            }
            p => Err(CompileError::unsupported(format!("`{}[…]`", p.as_str()), None)),
        }
    }

    // ---- protocols ----------------------------------------------------------------------

    /// gencode's `gen_proto_abbrev`.
    fn abbrev(&mut self, p: Proto) -> R<Pred> {
        use ipproto::*;
        match p {
            Proto::Ip => self.linktype(ethertype::IP),
            Proto::Ip6 => self.linktype(ethertype::IPV6),
            Proto::Arp => self.linktype(ethertype::ARP),
            Proto::Rarp => self.linktype(ethertype::REVARP),
            Proto::Tcp => self.proto(TCP, None),
            Proto::Udp => self.proto(UDP, None),
            Proto::Sctp => self.proto(SCTP, None),
            Proto::Icmp => self.proto(ICMP, Some(Proto::Ip)),
            Proto::Igmp => self.proto(IGMP, Some(Proto::Ip)),
            Proto::Igrp => self.proto(IGRP, Some(Proto::Ip)),
            Proto::Pim => self.proto(PIM, None),
            Proto::Vrrp | Proto::Carp => self.proto(VRRP, Some(Proto::Ip)),
            Proto::Icmp6 => self.proto(ICMPV6, Some(Proto::Ip6)),
            Proto::Ah => self.proto(AH, None),
            Proto::Atalk => self.linktype(ethertype::ATALK),
            Proto::Aarp => self.linktype(ethertype::AARP),
            Proto::Decnet => self.linktype(ethertype::DECNET),
            Proto::Sca => self.linktype(ethertype::SCA),
            Proto::Lat => self.linktype(ethertype::LAT),
            Proto::Mopdl => self.linktype(ethertype::MOPDL),
            Proto::Moprc => self.linktype(ethertype::MOPRC),
            Proto::Iso => self.linktype(link::llcsap::ISONS),
            Proto::Clnp => self.proto(0x81, Some(Proto::Iso)),
            Proto::Esis => self.proto(0x82, Some(Proto::Iso)),
            Proto::Isis => self.proto(0x83, Some(Proto::Iso)),
            // IS-IS PDU types: L1/L2 LAN hello 15/16, point-to-point hello 17, L1/L2 LSP
            // 18/20, CSNP 24/25, PSNP 26/27.
            Proto::L1 => self.isis_any(&[15, 17, 18, 24, 26]),
            Proto::L2 => self.isis_any(&[16, 17, 20, 25, 27]),
            Proto::Iih => self.isis_any(&[15, 16, 17]),
            Proto::Lsp => self.isis_any(&[18, 20]),
            Proto::Snp => self.isis_any(&[24, 25, 26, 27]),
            Proto::Csnp => self.isis_any(&[24, 25]),
            Proto::Psnp => self.isis_any(&[26, 27]),
            Proto::Stp => self.linktype(link::llcsap::BPDU),
            Proto::Ipx => self.linktype(link::llcsap::IPX),
            Proto::Netbeui => self.linktype(link::llcsap::NETBEUI),
            Proto::Esp => self.proto(ESP, None),
            p if p.is_link() => Err(CompileError::new(Q::LinkAlone, None)),
            p => Err(CompileError::unsupported(format!("`{}`", p.as_str()), None)),
        }
    }

    /// Any of the IS-IS PDU types, or-ed in gencode's order (each new one in front).
    fn isis_any(&mut self, types: &[u32]) -> R<Pred> {
        let b0 = self.proto(types[0], Some(Proto::Isis))?;
        let b1 = self.proto(types[1], Some(Proto::Isis))?;
        let mut b1 = self.b.or(b0, b1);
        for &t in &types[2..] {
            let b0 = self.proto(t, Some(Proto::Isis))?;
            b1 = self.b.or(b0, b1);
        }
        Ok(b1)
    }

    /// gencode's `gen_proto(v, proto, Q_DEFAULT)`: `[ip|ip6|link] proto v`.
    fn proto(&mut self, v: u32, proto: Option<Proto>) -> R<Pred> {
        match proto {
            None => {
                let b0 = self.proto(v, Some(Proto::Ip))?;
                let b1 = self.proto(v, Some(Proto::Ip6))?;
                Ok(self.b.or(b0, b1))
            }
            Some(Proto::Ip) => {
                let b0 = self.linktype(ethertype::IP)?;
                let b1 = self.eq(Base::Net, 9, Size::B, v);
                Ok(self.b.and(b0, b1))
            }
            Some(Proto::Ip6) => {
                let b0 = self.linktype(ethertype::IPV6)?;
                // Also a fragment header before the final header.
                let b2 = self.eq(Base::Net, 6, Size::B, ipproto::FRAGMENT);
                let b1 = self.eq(Base::Net, 40, Size::B, v);
                let b1 = self.b.and(b2, b1);
                let b2 = self.eq(Base::Net, 6, Size::B, v);
                let b1 = self.b.or(b2, b1);
                Ok(self.b.and(b0, b1))
            }
            Some(p) if p.is_link() => {
                // libpcap 1.11's range checks.
                let what = match self.link.kind {
                    link::Kind::Ppp => Quantity::PppProtocol,
                    link::Kind::CHdlc => Quantity::HdlcProtocol,
                    _ => Quantity::EtherType,
                };
                if v > 65535 {
                    return Err(CompileError::new(
                        K::OutOfRange { what, value: v.into(), max: 65535 },
                        None,
                    ));
                }
                if matches!(
                    self.link.kind,
                    link::Kind::Ether | link::Kind::Sll | link::Kind::Llc | link::Kind::Wlan
                ) && (256..=link::ETHERMTU).contains(&v)
                {
                    return Err(CompileError::new(
                        K::OutOfRange { what: Quantity::LlcDsap, value: v.into(), max: 255 },
                        None,
                    ));
                }
                self.linktype(v)
            }
            Some(Proto::Iso) => {
                let b0 = self.linktype(link::llcsap::ISONS)?;
                let b1 = self.eq(Base::NoSnap, 0, Size::B, v);
                Ok(self.b.and(b0, b1))
            }
            Some(Proto::Isis) => {
                let b0 = self.proto(0x83, Some(Proto::Iso))?;
                let b1 = self.eq(Base::NoSnap, 4, Size::B, v);
                Ok(self.b.and(b0, b1))
            }
            Some(p @ (Proto::Arp | Proto::Rarp)) => {
                Err(CompileError::new(Q::NoEncapsulation(p), None))
            }
            Some(
                p @ (Proto::Tcp
                | Proto::Udp
                | Proto::Sctp
                | Proto::Icmp
                | Proto::Icmp6
                | Proto::Igmp),
            ) => Err(CompileError::new(Q::OnProto(p), None)),
            Some(p) => Err(CompileError::unsupported(format!("`{} proto`", p.as_str()), None)),
        }
    }

    /// gencode's `gen_protochain`: follow the IPv6 extension headers (hop-by-hop,
    /// destination options, routing, fragment) and AH headers from the network header, and
    /// test whether one of them or the final header is protocol `v`.
    ///
    /// libpcap walks the chain with a backward `ja`. sift's programs are acyclic, so the walk
    /// is unrolled [`PROTOCHAIN_STEPS`] times: the program gives libpcap's result on every
    /// packet whose walk ends (finds `v`, `IPPROTO_NONE`, a header that is neither an
    /// extension nor AH, or runs out of packet) within that many header advances, and
    /// rejects packets whose walk is longer. libpcap's own oddities are kept: a load past
    /// the captured data ends the whole program with 0, and after an AH header the offset is
    /// the AH length alone (not added to the previous offset).
    fn protochain(&mut self, v: u32, proto: Option<Proto>) -> R<Pred> {
        // gencode allocates a scratch word first, also for the default case (where it is
        // never freed).
        let reg = self.b.alloc_slot()?;
        let v6 = match proto {
            Some(Proto::Ip) => false,
            Some(Proto::Ip6) => true,
            None => {
                let b0 = self.protochain(v, Some(Proto::Ip))?;
                let b1 = self.protochain(v, Some(Proto::Ip6))?;
                return Ok(self.b.or(b0, b1));
            }
            _ => return Err(CompileError::new(Q::Protochain, None)),
        };
        if self.link.var_pl || self.link.tunnel.is_some() {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Protochain, link: self.link.link_type },
                None,
            ));
        }
        self.walks += 1;
        if self.walks > PROTOCHAIN_WALKS {
            return Err(CompileError::new(
                K::ResourceLimit {
                    what: Resource::ProtochainWalks,
                    limit: PROTOCHAIN_WALKS.into(),
                },
                None,
            ));
        }
        let b0 = self.linktype(if v6 { ethertype::IPV6 } else { ethertype::IP })?;
        let nl = self.link.nl();
        let start = if v6 {
            vec![Stmt::Ld(Src::Abs(Size::B, nl + 6)), Stmt::Ldx(XSrc::Imm(40))]
        } else {
            vec![Stmt::Ld(Src::Abs(Size::B, nl + 9)), Stmt::Ldx(XSrc::Msh(nl))]
        };
        let k = |v| Operand::K(v);
        // Built from the last step back to the first: `next` is the rest of the walk.
        let mut next = self.b.branch(Vec::new(), JmpOp::Jeq, k(v));
        for step in (0..PROTOCHAIN_STEPS).rev() {
            let found =
                self.b.branch(if step == 0 { start.clone() } else { Vec::new() }, JmpOp::Jeq, k(v));
            let none = self.b.branch(Vec::new(), JmpOp::Jeq, k(ipproto::NONE));
            // AH: A = its next header, X = (its length + 2) * 4.
            let ah = self.b.branch(Vec::new(), JmpOp::Jeq, k(ipproto::AH));
            let ah_body = self.b.straight(vec![
                Stmt::Txa,
                Stmt::Ld(Src::Ind(Size::B, nl)),
                Stmt::St(reg),
                Stmt::Txa,
                Stmt::Alu(AluOp::Add, k(1)),
                Stmt::Tax,
                Stmt::Ld(Src::Ind(Size::B, nl)),
                Stmt::Alu(AluOp::Add, k(2)),
                Stmt::Alu(AluOp::Mul, k(4)),
                Stmt::Tax,
                Stmt::Ld(Src::Mem(reg)),
            ]);
            let ah = self.b.and(ah, ah_body);
            let advance = if v6 {
                // Hop-by-hop, destination options, routing, fragment: A = the next header,
                // X += (the length + 1) * 8.
                let mut ext = self.b.branch(Vec::new(), JmpOp::Jeq, k(ipproto::HOPOPTS));
                for h in [ipproto::DSTOPTS, ipproto::ROUTING, ipproto::FRAGMENT] {
                    let e = self.b.branch(Vec::new(), JmpOp::Jeq, k(h));
                    ext = self.b.or(ext, e);
                }
                let body = self.b.straight(vec![
                    Stmt::Ld(Src::Ind(Size::B, nl)),
                    Stmt::St(reg),
                    Stmt::Ld(Src::Ind(Size::B, nl + 1)),
                    Stmt::Alu(AluOp::Add, k(1)),
                    Stmt::Alu(AluOp::Mul, k(8)),
                    Stmt::Alu(AluOp::Add, Operand::X),
                    Stmt::Tax,
                    Stmt::Ld(Src::Mem(reg)),
                ]);
                self.b.ite(ext, body, ah)
            } else {
                ah
            };
            // Neither v nor IPPROTO_NONE: advance (false exits: no further header).
            let adv = self.b.and(!none, advance);
            let adv = self.b.and(adv, next);
            next = self.b.or(found, adv);
        }
        if proto.is_some() {
            self.b.free_slot(reg);
        }
        Ok(self.b.and(b0, next))
    }

    // ---- primitives ---------------------------------------------------------------------

    fn prim(&mut self, p: &Primitive) -> R<Pred> {
        match p {
            Primitive::Proto(p) => self.abbrev(*p),
            Primitive::Id { quals, id, id_span } => self.id(quals, id).map_err(|e| e.at(*id_span)),
            Primitive::Less(n) => Ok(self.b.cmp(Load::Len, Cmp::Le, *n, u32::MAX)),
            Primitive::Greater(n) => Ok(self.b.cmp(Load::Len, Cmp::Ge, *n, u32::MAX)),
            Primitive::Byte { index, op, value } => Ok(self.byte(*index, *op, *value)),
            Primitive::Broadcast(proto) => self.broadcast(*proto),
            Primitive::Multicast(proto) => self.multicast(*proto),
            Primitive::Vlan(id) => self.vlan(*id),
            Primitive::Mpls(label) => self.mpls(*label),
            Primitive::Pppoed => self.linktype(ethertype::PPPOE_DISCOVERY),
            Primitive::Pppoes(sess) => self.pppoes(*sess),
            Primitive::Inbound | Primitive::Outbound
                if matches!(
                    self.link.link_type,
                    LinkType::DSA_TAG_BRCM | LinkType::DSA_TAG_DSA
                ) && self.link.tunnel.is_none() =>
            {
                // The switch tag's direction bits (libpcap 1.11).
                let inbound = matches!(p, Primitive::Inbound);
                let (v, mask) = match (self.link.link_type, inbound) {
                    (LinkType::DSA_TAG_BRCM, true) => (0, 0xe0),
                    (LinkType::DSA_TAG_BRCM, false) => (0x20, 0xe0),
                    (_, true) => (0, 0x40),
                    (_, false) => (0x40, 0xc0),
                };
                Ok(self.cmp(Base::LinkHdr, 12, Size::B, Cmp::Eq, v, mask))
            }
            Primitive::Inbound | Primitive::Outbound => {
                let outbound = match self.link.kind {
                    link::Kind::Sll => self.eq(Base::LinkHdr, 0, Size::H, 4),
                    link::Kind::Sll2 => self.eq(Base::LinkHdr, 10, Size::B, 4),
                    link::Kind::Ppp if self.link.link_type == LinkType::PPP_PPPD => {
                        // The pppd direction byte: PPP_PPPD_IN 0, PPP_PPPD_OUT 1.
                        let v = if matches!(p, Primitive::Inbound) { 0 } else { 1 };
                        return Ok(self.eq(Base::LinkHdr, 0, Size::B, v));
                    }
                    link::Kind::Pflog => {
                        // The pflog direction byte: PF_IN 1, PF_OUT 2.
                        let v = if matches!(p, Primitive::Inbound) { 1 } else { 2 };
                        return Ok(self.eq(Base::LinkHdr, 60, Size::B, v));
                    }
                    link::Kind::Raw if self.link.link_type == LinkType::SLIP => {
                        // `link[0] != 0` (SLIPDIR_IN is 0), through the arithmetic helpers.
                        // gencode's C arguments are evaluated right to left (scratch words).
                        let zero = self.b.imm(0)?;
                        let idx = self.b.imm(0)?;
                        let v = self.b.load(idx, &[], self.link.off_linkhdr, Size::B, None)?;
                        self.b.relation(Cmp::Ne, v, zero)
                    }
                    // A live Linux capture: the packet type from the socket's metadata.
                    _ if self.linux_ext => {
                        self.eq(Base::LinkHdr, SKF_AD_OFF + SKF_AD_PKTTYPE, Size::H, 4)
                    }
                    _ => {
                        // libpcap 1.11's wording (1.10 emits the ancillary load anyway).
                        let inbound = matches!(p, Primitive::Inbound);
                        return Err(CompileError::new(
                            K::NotOnLinkType {
                                what: LinkFeature::Direction(inbound),
                                link: self.link.link_type,
                            },
                            None,
                        ));
                    }
                };
                Ok(if matches!(p, Primitive::Inbound) { !outbound } else { outbound })
            }
            Primitive::Ifindex(n) => match self.link.kind {
                link::Kind::Sll2 => Ok(self.eq(Base::LinkHdr, 4, Size::W, *n)),
                _ if self.linux_ext => {
                    Ok(self.eq(Base::LinkHdr, SKF_AD_OFF + SKF_AD_IFINDEX, Size::W, *n))
                }
                _ => Err(CompileError::new(
                    K::NotOnLinkType { what: LinkFeature::Ifindex, link: self.link.link_type },
                    None,
                )),
            },
            Primitive::Geneve(vni) => self.tunnel(true, *vni),
            Primitive::Vxlan(vni) => self.tunnel(false, *vni),
            Primitive::Llc(kind) => self.llc(kind.as_deref()),
            Primitive::PfIfname(name) => self.pf_name(name, 4, "ifname", "interface"),
            Primitive::PfRuleset(name) => self.pf_name(name, 20, "ruleset", "ruleset"),
            Primitive::PfRulenum(n) => self.pf_field(36, Size::W, *n, "rnr"),
            Primitive::PfSubrulenum(n) => self.pf_field(40, Size::W, *n, "srnr"),
            Primitive::PfReason(n) => self.pf_field(3, Size::B, *n, "reason"),
            Primitive::PfAction(n) => self.pf_field(2, Size::B, *n, "action"),
            Primitive::WlanType { ty, subtype, .. } => match subtype {
                None => self.wlan_fc(0, *ty, 0x0c, "type/subtype"),
                Some(st) => self.wlan_fc(0, *ty | *st, 0xfc, "type/subtype"),
            },
            Primitive::WlanSubtype { type_subtype, .. } => {
                self.wlan_fc(0, *type_subtype, 0xfc, "type/subtype")
            }
            Primitive::WlanDir { dir, .. } => self.wlan_fc(1, *dir, 0x03, "dir"),
            Primitive::Atm(_) | Primitive::AtmField { .. } => {
                Err(CompileError::unsupported("ATM primitives", None))
            }
            Primitive::Mtp2(_) | Primitive::Mtp3Field { .. } => {
                Err(CompileError::unsupported("MTP2/MTP3 primitives", None))
            }
        }
    }

    /// gencode's `gen_geneve`/`gen_vxlan`: UDP to port 6081 (Geneve, version 0) or 4789
    /// (VXLAN, I flag), over IPv4 or IPv6, with the VNI if given; then the offsets of the
    /// inner frame go into scratch words, and every later primitive looks inside the tunnel
    /// (an Ethernet frame; for Geneve, the link type is Geneve's protocol type unless that
    /// is Ethernet).
    fn tunnel(&mut self, geneve: bool, vni: Option<u32>) -> R<Pred> {
        if let Some(v) = vni
            && v > 0xff_ffff
        {
            return Err(CompileError::new(
                K::OutOfRange { what: Quantity::Vni { geneve }, value: v.into(), max: 0xff_ffff },
                None,
            ));
        }
        let port = if geneve { 6081 } else { 4789 };
        // The word holding the run-time payload offset, if there is one: an outer tunnel's
        // (a tunnel in a tunnel), or the variable link header's.
        let var = match self.link.tunnel {
            Some(t) => Some(t.pl),
            None if self.link.var_pl => Some(self.pl_reg()),
            None => None,
        };
        let mut sides = Vec::new();
        for v6 in [false, true] {
            let b0 = self.port(None, port, Some(ipproto::UDP), Dir::Dst, v6)?;
            let base = if v6 { Base::TranV6 } else { Base::TranV4 };
            let flags = if geneve {
                self.cmp(base, 8, Size::B, Cmp::Eq, 0, 0xc0)
            } else {
                self.cmp(base, 8, Size::B, Cmp::Eq, 0x08, u32::MAX)
            };
            let mut b = self.b.and(b0, flags);
            if let Some(v) = vni {
                let c = self.cmp(base, 12, Size::W, Cmp::Eq, v << 8, 0xffff_ff00);
                b = self.b.and(b, c);
            }
            // A = X = the offset of the UDP header from the network header (plus the
            // variable payload offset), by a test that always holds.
            let nl = self.link.nl();
            let stmts = match (v6, var) {
                (false, None) => vec![Stmt::Ldx(XSrc::Msh(nl)), Stmt::Txa],
                (false, Some(r)) => {
                    let mut v = self.iphdrlen_var(r);
                    v.push(Stmt::Txa);
                    v
                }
                (true, None) => vec![Stmt::Ld(Src::Imm(40)), Stmt::Tax],
                (true, Some(r)) => {
                    vec![
                        Stmt::Ldx(XSrc::Mem(r)),
                        Stmt::Ld(Src::Imm(40)),
                        Stmt::Alu(AluOp::Add, Operand::X),
                        Stmt::Tax,
                    ]
                }
            };
            let set_x = self.b.branch(stmts, JmpOp::Jeq, Operand::X);
            sides.push(self.b.and(b, set_x));
        }
        let v6 = sides.pop().expect("two sides");
        let v4 = sides.pop().expect("two sides");
        let b = self.b.or(v4, v6);
        let udp = self.link.nl() + 8;
        let k = Operand::K;
        let (hdr, lt, pl, offsets) = if geneve {
            let lt = self.b.alloc_slot()?;
            let hdr = self.b.alloc_slot()?;
            let pl = self.b.alloc_slot()?;
            // X = the Geneve header; the inner frame follows its options.
            let head = self.b.branch(
                vec![
                    Stmt::Alu(AluOp::Add, k(udp)),
                    Stmt::Tax,
                    Stmt::Alu(AluOp::Add, k(2)),
                    Stmt::St(lt),
                    Stmt::Ld(Src::Ind(Size::B, 0)),
                    Stmt::Alu(AluOp::And, k(0x3f)),
                    Stmt::Alu(AluOp::Mul, k(4)),
                    Stmt::Alu(AluOp::Add, k(8)),
                    Stmt::Alu(AluOp::Add, Operand::X),
                    Stmt::St(hdr),
                    Stmt::Ld(Src::Ind(Size::H, 2)),
                    Stmt::Ldx(XSrc::Mem(hdr)),
                ],
                JmpOp::Jeq,
                k(ethertype::TEB),
            );
            // Transparent Ethernet bridging: the type and payload of the inner Ethernet.
            let eth = self.b.straight(vec![
                Stmt::Txa,
                Stmt::Alu(AluOp::Add, k(12)),
                Stmt::St(lt),
                Stmt::Alu(AluOp::Add, k(2)),
                Stmt::Tax,
            ]);
            let head = self.b.and(head, eth);
            let head = self.b.join(head);
            let done = self.b.branch(vec![Stmt::Stx(pl), Stmt::Ld(Src::Imm(0))], JmpOp::Jeq, k(0));
            (hdr, lt, pl, self.b.seq(head, done))
        } else {
            let hdr = self.b.alloc_slot()?;
            let lt = self.b.alloc_slot()?;
            let pl = self.b.alloc_slot()?;
            let done = self.b.branch(
                vec![
                    Stmt::Alu(AluOp::Add, k(udp)),
                    Stmt::Alu(AluOp::Add, k(8)),
                    Stmt::St(hdr),
                    Stmt::Alu(AluOp::Add, k(12)),
                    Stmt::St(lt),
                    Stmt::Alu(AluOp::Add, k(2)),
                    Stmt::Tax,
                    Stmt::Stx(pl),
                    Stmt::Ld(Src::Imm(0)),
                ],
                JmpOp::Jeq,
                k(0),
            );
            (hdr, lt, pl, done)
        };
        let b = self.b.and(b, offsets);
        // Later primitives see an Ethernet frame at those offsets.
        self.link = Link {
            link_type: LinkType::EN10MB,
            kind: link::Kind::Ether,
            off_linkhdr: 0,
            off_linktype: Some(0),
            off_linkpl: 0,
            off_nl: 0,
            off_nl_nosnap: 3,
            mac: Some((6, 0)),
            prefix: Prefix::None,
            var_pl: false,
            tunnel: Some(link::Tunnel { hdr: Some(hdr), lt, pl, geneve }),
        };
        Ok(b)
    }

    /// gencode's `gen_p80211_type`/`gen_p80211_fcdir`: masked frame-control bits.
    fn wlan_fc(&mut self, off: u32, v: u32, mask: u32, what: &'static str) -> R<Pred> {
        if self.link.kind != link::Kind::Wlan {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Wlan(what), link: self.link.link_type },
                None,
            ));
        }
        Ok(self.cmp(Base::LinkHdr, off, Size::B, Cmp::Eq, v, mask))
    }

    /// A pflog header field (gencode's `gen_pf_rnr`, `gen_pf_reason`…).
    fn pf_field(&mut self, off: u32, size: Size, v: u32, what: &'static str) -> R<Pred> {
        if self.link.kind != link::Kind::Pflog {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Pflog(what), link: self.link.link_type },
                None,
            ));
        }
        Ok(self.eq(Base::LinkHdr, off, size, v))
    }

    /// A pflog name field of 16 bytes, compared over the name's length (gencode's
    /// `gen_pf_ifname`, `gen_pf_ruleset`).
    fn pf_name(&mut self, name: &str, off: u32, what: &'static str, noun: &'static str) -> R<Pred> {
        if self.link.kind != link::Kind::Pflog {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Pflog(what), link: self.link.link_type },
                None,
            ));
        }
        if name.len() >= 16 {
            return Err(CompileError::new(
                K::OutOfRange {
                    what: Quantity::NameLength { noun },
                    value: name.len() as u64,
                    max: 15,
                },
                None,
            ));
        }
        if name.is_empty() {
            return Ok(self.b.always());
        }
        Ok(self.bcmp(Base::LinkHdr, off, name.as_bytes()))
    }

    /// gencode's `gen_vlan` without BPF extensions: the three VLAN EtherTypes, the VLAN id,
    /// then every later offset moves 4 bytes on.
    fn vlan(&mut self, id: Option<u32>) -> R<Pred> {
        if self.label_depth > 0 {
            return Err(CompileError::new(K::AfterMpls(MplsConflict::Vlan), None));
        }
        // PPI's header is named even after `pppoes` moved the link layer on.
        let vlan_error =
            |link| CompileError::new(K::NotOnLinkType { what: LinkFeature::Vlan, link }, None);
        if self.link.prefix == Prefix::Ppi {
            return Err(vlan_error(LinkType::PPI));
        }
        if !matches!(self.link.kind, link::Kind::Ether | link::Kind::Wlan) {
            return Err(vlan_error(self.link.link_type));
        }
        // Only the capture's own outermost header can have its tag in the metadata.
        if self.linux_ext
            && self.vlan_depth == 0
            && self.link.link_type == LinkType::EN10MB
            && self.link.tunnel.is_none()
        {
            return self.vlan_linux(id);
        }
        let b0 = self.linktype(ethertype::VLAN)?;
        let b1 = self.linktype(ethertype::QINQ)?;
        let b1 = self.b.or(b0, b1);
        let b2 = self.linktype(ethertype::QINQ_9100)?;
        let mut b = self.b.or(b1, b2);
        if let Some(id) = id {
            let c = self.cmp(Base::Net, 0, Size::H, Cmp::Eq, id, 0x0fff);
            b = self.b.and(b, c);
        }
        self.link.off_linkpl += 4;
        self.link.off_linktype = self.link.off_linktype.map(|o| o + 4);
        self.vlan_depth += 1;
        Ok(b)
    }

    /// gencode's `gen_vlan_bpf_extensions` (a live Linux capture, first `vlan`): the kernel
    /// may have taken the tag out of the packet into its metadata (`vlanp`, `vlan_tci`), or
    /// left it in. The type and payload offsets become run-time words, 0 or 4 (zeroed before
    /// the filter, moved when the tag is in the packet), for every later primitive.
    fn vlan_linux(&mut self, id: Option<u32>) -> R<Pred> {
        const SKF_AD_VLAN_TAG: u32 = 44;
        const SKF_AD_VLAN_TAG_PRESENT: u32 = 48;
        let pl = self.b.alloc_slot()?;
        let lt = self.b.alloc_slot()?;
        let present = self.b.cmp(
            Load::Abs(Size::B, SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT),
            Cmp::Eq,
            1,
            u32::MAX,
        );
        let k = Operand::K;
        let moved = self.b.straight(vec![
            Stmt::Ld(Src::Mem(pl)),
            Stmt::Alu(AluOp::Add, k(4)),
            Stmt::St(pl),
            Stmt::Ld(Src::Mem(lt)),
            Stmt::Alu(AluOp::Add, k(4)),
            Stmt::St(lt),
        ]);
        let b0 = self.linktype(ethertype::VLAN)?;
        let b1 = self.linktype(ethertype::QINQ)?;
        let b1 = self.b.or(b0, b1);
        let b2 = self.linktype(ethertype::QINQ_9100)?;
        let in_packet = self.b.or(b1, b2);
        let in_packet = self.b.seq(moved, in_packet);
        let mut b = self.b.or(present, in_packet);
        if let Some(id) = id {
            // The VID from the metadata, or from the tag in the packet.
            let c = self.b.cmp(
                Load::Abs(Size::B, SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT),
                Cmp::Eq,
                1,
                u32::MAX,
            );
            let meta =
                self.b.straight(vec![Stmt::Ld(Src::Abs(Size::H, SKF_AD_OFF + SKF_AD_VLAN_TAG))]);
            let pkt = self.b.straight(vec![Stmt::Ld(Src::Abs(Size::H, self.link.nl()))]);
            let tci = self.b.ite(c, meta, pkt);
            let tci = self.b.join(tci);
            let vid = self.b.branch(vec![Stmt::Alu(AluOp::And, k(0x0fff))], JmpOp::Jeq, k(id));
            let vid = self.b.seq(tci, vid);
            b = self.b.and(b, vid);
        }
        self.link.tunnel = Some(link::Tunnel { hdr: None, lt, pl, geneve: false });
        self.vlan_words = Some((pl, lt));
        self.vlan_depth += 1;
        Ok(b)
    }

    /// gencode's `gen_mpls`: later network-layer offsets move 4 bytes on.
    fn mpls(&mut self, label: Option<u32>) -> R<Pred> {
        let mut b = if self.label_depth > 0 {
            // The previous label's bottom-of-stack bit is clear.
            self.cmp(Base::Net, 0u32.wrapping_sub(2), Size::B, Cmp::Eq, 0, 1)
        } else {
            match self.link.kind {
                link::Kind::Ether | link::Kind::CHdlc => self.linktype(ethertype::MPLS)?,
                link::Kind::Ppp if self.link.link_type == LinkType::PPP => {
                    self.eq(Base::LinkType, 0, Size::H, 0x0281)
                }
                _ => {
                    return Err(CompileError::new(
                        K::NotOnLinkType { what: LinkFeature::Mpls, link: self.link.link_type },
                        None,
                    ));
                }
            }
        };
        if let Some(label) = label {
            if label > 0xfffff {
                return Err(CompileError::new(
                    K::OutOfRange { what: Quantity::MplsLabel, value: label.into(), max: 0xfffff },
                    None,
                ));
            }
            let c = self.cmp(Base::Net, 0, Size::W, Cmp::Eq, label << 12, 0xffff_f000);
            b = self.b.and(b, c);
        }
        self.link.off_nl += 4;
        self.link.off_nl_nosnap += 4;
        self.label_depth += 1;
        Ok(b)
    }

    /// gencode's `gen_pppoes`: the session EtherType and id, then the link layer becomes PPP
    /// 6 bytes into the payload.
    fn pppoes(&mut self, sess: Option<u32>) -> R<Pred> {
        let mut b = self.linktype(ethertype::PPPOE_SESSION)?;
        if let Some(sess) = sess {
            let c = self.cmp(Base::Net, 0, Size::W, Cmp::Eq, sess, 0xffff);
            b = self.b.and(b, c);
        }
        // Past the PPPoE header, which follows any 802.2 LLC/SNAP header (gencode's
        // PUSH_LINKHDR: at a run-time offset when the payload is at one).
        let hdr = self.link.nl() + 6;
        if let Some(t) = self.link.tunnel {
            self.link.tunnel = Some(link::Tunnel { hdr: Some(t.pl), lt: t.pl, ..t });
        }
        self.link.kind = link::Kind::Ppp;
        self.link.mac = None;
        self.link.link_type = LinkType::PPP;
        self.link.off_linkhdr = hdr;
        self.link.off_linktype = Some(hdr);
        self.link.off_linkpl = hdr + 2;
        self.link.off_nl = 0;
        self.link.off_nl_nosnap = 0;
        Ok(b)
    }

    /// gencode's `gen_byteop` (libpcap 1.10's `&` and `|` forms test A without loading it).
    fn byte(&mut self, idx: u32, op: ByteOp, val: u32) -> Pred {
        match op {
            ByteOp::Eq => self.eq(Base::LinkHdr, idx, Size::B, val),
            ByteOp::Lt => self.cmp(Base::LinkHdr, idx, Size::B, Cmp::Lt, val, u32::MAX),
            ByteOp::Gt => self.cmp(Base::LinkHdr, idx, Size::B, Cmp::Gt, val, u32::MAX),
            ByteOp::And | ByteOp::Or => {
                let alu = if op == ByteOp::And { AluOp::And } else { AluOp::Or };
                let p =
                    self.b.branch(vec![Stmt::Alu(alu, Operand::K(val))], JmpOp::Jeq, Operand::K(0));
                !p
            }
        }
    }

    fn broadcast(&mut self, proto: Option<Proto>) -> R<Pred> {
        match proto {
            p if p.is_none_or(Proto::is_link) => {
                if !self.link.is_ether() {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::Broadcast,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                self.mac_host([0xff; 6], Dir::Dst)
            }
            Some(Proto::Ip) => {
                let Some(netmask) = self.netmask else {
                    return Err(CompileError::new(K::NetmaskUnknown, None));
                };
                let b0 = self.linktype(ethertype::IP)?;
                let hostmask = !netmask;
                let b1 = self.cmp(Base::Net, 16, Size::W, Cmp::Eq, 0, hostmask);
                let b2 = self.cmp(Base::Net, 16, Size::W, Cmp::Eq, hostmask, hostmask);
                let b2 = self.b.or(b1, b2);
                Ok(self.b.and(b0, b2))
            }
            _ => Err(CompileError::new(Q::Broadcast, None)),
        }
    }

    fn multicast(&mut self, proto: Option<Proto>) -> R<Pred> {
        match proto {
            p if p.is_none_or(Proto::is_link) => {
                if !self.link.is_ether() {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::Multicast,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                if self.link.kind == link::Kind::Wlan {
                    let mut f = |g: &mut Self, off: u32| g.lh_set(off, 1);
                    return Ok(self.wlan_by_frame(&mut f, false));
                }
                let (_, dst) = self.link.mac.unwrap_or((6, 0));
                Ok(self.cmp(Base::LinkHdr, dst, Size::B, Cmp::Set, 1, u32::MAX))
            }
            Some(Proto::Ip) => {
                let b0 = self.linktype(ethertype::IP)?;
                let b1 = self.cmp(Base::Net, 16, Size::B, Cmp::Ge, 224, u32::MAX);
                Ok(self.b.and(b0, b1))
            }
            Some(Proto::Ip6) => {
                let b0 = self.linktype(ethertype::IPV6)?;
                let b1 = self.eq(Base::Net, 24, Size::B, 255);
                Ok(self.b.and(b0, b1))
            }
            _ => Err(CompileError::new(Q::Multicast, None)),
        }
    }

    // ---- qualified ids ------------------------------------------------------------------

    fn id(&mut self, q: &Quals, id: &Id) -> R<Pred> {
        let proto = q.proto.map(|p| p.0);
        let dir = q.dir.map_or(Dir::SrcOrDst, |d| d.0);
        let ty = q.ty.map(|t| t.0);
        if !matches!(dir, Dir::Src | Dir::Dst | Dir::SrcOrDst | Dir::SrcAndDst) {
            let dspan = q.dir.map(|d| d.1);
            let d = dir.as_str();
            if let Some(t @ (QualType::Port | QualType::Portrange)) = ty {
                let t = if t == QualType::Port { "port" } else { "portrange" };
                return Err(CompileError::new(Q::DirOnPort { dir: d, target: t }, dspan));
            }
            let wlan_dir = matches!(
                dir,
                Dir::Addr1 | Dir::Addr2 | Dir::Addr3 | Dir::Addr4 | Dir::Ra | Dir::Ta
            );
            if !wlan_dir {
                return Err(CompileError::unsupported(format!("`{d}`"), dspan));
            }
            let mac_id = match id {
                Id::Mac(_) => true,
                Id::Name(_) => q.proto.is_some_and(|p| p.0.is_link()),
                _ => false,
            };
            if self.link.kind != link::Kind::Wlan
                || !mac_id
                || !matches!(ty, None | Some(QualType::Host))
            {
                return Err(CompileError::new(Q::WlanDir { dir: d }, dspan));
            }
        }
        if q.proto.is_some_and(|p| p.0 == Proto::Decnet)
            && matches!(ty, None | Some(QualType::Host))
        {
            return self.decnet_host(id, dir);
        }
        if let Some((p, span)) = q.proto
            && !(p.qualifies_id()
                || (matches!(p, Proto::Iso | Proto::Isis) && ty == Some(QualType::Proto)))
        {
            return Err(CompileError::unsupported(
                format!("`{}` qualifiers", p.as_str()),
                Some(span),
            ));
        }
        match ty {
            None | Some(QualType::Host | QualType::Net) => self.host_like(proto, dir, ty, id),
            Some(QualType::Port) => self.port_id(proto, dir, id, false),
            Some(QualType::Portrange) => self.port_id(proto, dir, id, true),
            Some(QualType::Proto) => {
                let v = match id {
                    Id::Num(n) => *n,
                    Id::Name(s) => self.proto_number(proto, s)?,
                    _ => {
                        return Err(CompileError::new(
                            K::AddressInvalid { what: AddressKind::Protocol, text: String::new() },
                            None,
                        ));
                    }
                };
                self.proto(v, proto)
            }
            Some(QualType::Protochain) => {
                let v = match id {
                    Id::Num(n) => *n,
                    Id::Name(s) => self.proto_number(proto, s)?,
                    _ => {
                        return Err(CompileError::new(
                            K::AddressInvalid { what: AddressKind::Protocol, text: String::new() },
                            None,
                        ));
                    }
                };
                self.protochain(v, proto)
            }
            Some(QualType::Gateway) => match id {
                Id::Name(s) => self.gateway(proto, q.dir.is_some(), s),
                _ => Err(CompileError::new(
                    K::AddressInvalid { what: AddressKind::Gateway, text: String::new() },
                    None,
                )),
            },
        }
    }

    /// gencode's `gen_dnhostop`: a DECnet `area.node` address in the four header layouts.
    fn decnet_host(&mut self, id: &Id, dir: Dir) -> R<Pred> {
        let addr = match id {
            Id::Num(n) => *n,
            Id::V4(s) => {
                let mut parts = s.split('.').map(parse_num);
                match (parts.next().flatten(), parts.next().flatten(), parts.next()) {
                    (Some(area), Some(node), None) => {
                        if area > 63 {
                            return Err(CompileError::new(
                                K::OutOfRange {
                                    what: Quantity::DecnetArea,
                                    value: area.into(),
                                    max: 63,
                                },
                                None,
                            ));
                        }
                        if node > 1023 {
                            return Err(CompileError::new(
                                K::OutOfRange {
                                    what: Quantity::DecnetNode,
                                    value: node.into(),
                                    max: 1023,
                                },
                                None,
                            ));
                        }
                        (area << 10) | node
                    }
                    _ => {
                        return Err(CompileError::new(
                            K::AddressInvalid { what: AddressKind::Decnet, text: s.clone() },
                            None,
                        ));
                    }
                }
            }
            _ => return Err(CompileError::unsupported("DECnet names", None)),
        };
        self.dnhostop(addr, dir)
    }

    fn dnhostop(&mut self, addr: u32, dir: Dir) -> R<Pred> {
        let (sh, lh) = match dir {
            Dir::Dst => (1, 7),
            Dir::Src => (3, 15),
            _ => {
                let b0 = self.dnhostop(addr, Dir::Src)?;
                let b1 = self.dnhostop(addr, Dir::Dst)?;
                return Ok(if dir == Dir::SrcAndDst {
                    self.b.and(b0, b1)
                } else {
                    self.b.or(b0, b1)
                });
            }
        };
        // Fields in DECnet's little-endian order, as gencode's ntohs() on this machine.
        let a = u32::from((addr as u16).swap_bytes());
        let b0 = self.linktype(ethertype::DECNET)?;
        // Long header with pad, long without, short with pad, short without.
        let tmp = self.cmp(Base::Net, 2, Size::H, Cmp::Eq, 0x8106, 0xff07);
        let b1 = self.eq(Base::Net, 2 + 1 + lh, Size::H, a);
        let b1 = self.b.and(tmp, b1);
        let tmp = self.cmp(Base::Net, 2, Size::B, Cmp::Eq, 0x06, 0x07);
        let b2 = self.eq(Base::Net, 2 + lh, Size::H, a);
        let b2 = self.b.and(tmp, b2);
        let b1 = self.b.or(b2, b1);
        let tmp = self.cmp(Base::Net, 2, Size::H, Cmp::Eq, 0x8102, 0xff07);
        let b2 = self.eq(Base::Net, 2 + 1 + sh, Size::H, a);
        let b2 = self.b.and(tmp, b2);
        let b1 = self.b.or(b2, b1);
        let tmp = self.cmp(Base::Net, 2, Size::B, Cmp::Eq, 0x02, 0x07);
        let b2 = self.eq(Base::Net, 2 + sh, Size::H, a);
        let b2 = self.b.and(tmp, b2);
        let b1 = self.b.or(b2, b1);
        Ok(self.b.and(b0, b1))
    }

    fn proto_number(&self, proto: Option<Proto>, s: &str) -> R<u32> {
        if proto.is_some_and(Proto::is_link) {
            let v = match s {
                "ip" => ethertype::IP,
                "ip6" => ethertype::IPV6,
                "arp" => ethertype::ARP,
                "rarp" => ethertype::REVARP,
                "decnet" => ethertype::DECNET,
                "lat" => ethertype::LAT,
                "sca" => ethertype::SCA,
                "moprc" => ethertype::MOPRC,
                "mopdl" => ethertype::MOPDL,
                "loopback" => ethertype::LOOPBACK,
                "atalk" => ethertype::ATALK,
                "aarp" => ethertype::AARP,
                "ipx" => link::llcsap::IPX,
                "lldp" => ethertype::LLDP,
                // Slow protocols (LACP, IEEE 802.3 annex 57A).
                "slow" => 0x8809,
                "iso" => 0xfe,
                "stp" => 0x42,
                "netbeui" => 0xf0,
                _ => {
                    return Err(CompileError::new(
                        K::NameUnknown { what: NameKind::EtherProto, name: s.into() },
                        None,
                    ));
                }
            };
            return Ok(v);
        }
        if proto == Some(Proto::Iso) {
            // pcap_nametoosi
            return match s {
                "clnp" => Ok(0x81),
                "esis" => Ok(0x82),
                "isis" => Ok(0x83),
                _ => Err(CompileError::new(
                    K::NameUnknown { what: NameKind::OsiProto, name: s.into() },
                    None,
                )),
            };
        }
        if !matches!(proto, None | Some(Proto::Ip | Proto::Ip6)) {
            return Err(CompileError::new(
                K::NameUnknown { what: NameKind::Protocol, name: s.into() },
                None,
            ));
        }
        self.resolver.protocol(s).map(u32::from).ok_or_else(|| {
            CompileError::new(K::NameUnknown { what: NameKind::IpProto, name: s.into() }, None)
        })
    }

    fn host_like(
        &mut self,
        proto: Option<Proto>,
        dir: Dir,
        ty: Option<QualType>,
        id: &Id,
    ) -> R<Pred> {
        let is_net = ty == Some(QualType::Net);
        let link = proto.is_some_and(Proto::is_link);
        match id {
            Id::Num(n) => {
                if link {
                    return Err(CompileError::new(Q::LinkNumber, None));
                }
                let (mut v, mut mask) = (*n, u32::MAX);
                if is_net {
                    while v != 0 && v & 0xff00_0000 == 0 {
                        v <<= 8;
                        mask <<= 8;
                    }
                }
                self.host(v, mask, proto, dir, is_net)
            }
            Id::V4(s) => {
                if link {
                    return Err(CompileError::new(Q::LinkNumber, None));
                }
                let (v, n) = v4(s)?;
                let mask = u32::MAX.checked_shl(32 - 8 * n).unwrap_or(0);
                self.host(v, mask, proto, dir, is_net)
            }
            Id::V4Prefix { addr, len } => {
                let (v, _) = v4(addr)?;
                let mask = if *len == 0 { 0 } else { u32::MAX << (32 - len) };
                if !is_net {
                    return Err(CompileError::new(Q::MaskOnHost, None));
                }
                self.host(v, mask, proto, dir, true)
            }
            Id::V4Mask { addr, mask } => {
                let (v, _) = v4(addr)?;
                let (m, _) = v4(mask)?;
                if !is_net {
                    return Err(CompileError::new(Q::MaskOnHost, None));
                }
                self.host(v, m, proto, dir, true)
            }
            Id::V6(a) => self.host6(*a, 128, proto, dir, is_net),
            Id::V6Prefix(a, len) => {
                if !is_net && *len != 128 {
                    return Err(CompileError::new(Q::MaskOnHost, None));
                }
                self.host6(*a, *len, proto, dir, is_net)
            }
            Id::Mac(m) => {
                if is_net || !(proto.is_none() || link) {
                    return Err(CompileError::new(Q::MacNonEther, None));
                }
                if !self.link.is_ether() {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::MacAddress,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                self.mac_host(*m, dir)
            }
            Id::Arc(_) => Err(CompileError::unsupported("ARCnet addresses", None)),
            Id::Name(s) => self.host_name(proto, dir, is_net, s),
        }
    }

    fn host_name(&mut self, proto: Option<Proto>, dir: Dir, is_net: bool, s: &str) -> R<Pred> {
        let resolver = self.resolver;
        if is_net {
            let Some(mut v) = resolver.network(s) else {
                return Err(CompileError::new(
                    K::NameUnknown { what: NameKind::Network, name: s.into() },
                    None,
                ));
            };
            // libpcap left-justifies getnetbyname's number byte by byte, widening the mask
            // only while it shifts; the resolver's numbers are already left-aligned.
            let mut mask = u32::MAX;
            while v != 0 && v & 0xff00_0000 == 0 {
                v <<= 8;
                mask <<= 8;
            }
            return self.host(v, mask, proto, dir, true);
        }
        if proto.is_some_and(Proto::is_link) {
            if !self.link.is_ether() {
                return Err(CompileError::new(
                    K::NotOnLinkType { what: LinkFeature::MacHostName, link: self.link.link_type },
                    None,
                ));
            }
            let Some(mac) = resolver.ether(s) else {
                return Err(CompileError::new(
                    K::NameUnknown { what: NameKind::EtherHost, name: s.into() },
                    None,
                ));
            };
            return self.mac_host(mac, dir);
        }
        let (mut tproto, mut tproto6) = (proto, proto);
        if self.link.off_linktype.is_none() && proto.is_none() {
            tproto = Some(Proto::Ip);
            tproto6 = Some(Proto::Ip6);
        }
        let mut acc: Option<Pred> = None;
        for addr in resolver.host(s) {
            let tmp = match addr {
                IpAddr::V4(a) => {
                    if tproto == Some(Proto::Ip6) {
                        continue;
                    }
                    self.host(u32::from(a), u32::MAX, tproto, dir, false)?
                }
                IpAddr::V6(a) => {
                    if matches!(tproto6, Some(Proto::Ip | Proto::Arp | Proto::Rarp)) {
                        continue;
                    }
                    self.host6(a, 128, tproto6, dir, false)?
                }
            };
            acc = Some(match acc {
                Some(b) => self.b.or(b, tmp),
                None => tmp,
            });
        }
        acc.ok_or_else(|| unknown_host(s))
    }

    /// gencode's `gateway NAME`: the MAC address of `NAME` in either direction, and none of
    /// its IPv4 addresses.
    fn gateway(&mut self, proto: Option<Proto>, has_dir: bool, s: &str) -> R<Pred> {
        let resolver = self.resolver;
        let Some(mac) = resolver.ether(s) else {
            return Err(CompileError::new(
                K::NameUnknown { what: NameKind::GatewayEther, name: s.into() },
                None,
            ));
        };
        let addrs = resolver.host(s);
        if addrs.is_empty() {
            return Err(unknown_host(s));
        }
        if has_dir {
            return Err(CompileError::new(Q::GatewayDirection, None));
        }
        if self.label_depth > 0 {
            return Err(CompileError::new(K::AfterMpls(MplsConflict::Gateway), None));
        }
        if !matches!(proto, None | Some(Proto::Ip | Proto::Arp | Proto::Rarp)) {
            return Err(CompileError::new(Q::GatewayProto, None));
        }
        if !self.link.is_ether() {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Gateway, link: self.link.link_type },
                None,
            ));
        }
        let v4: Vec<u32> = addrs
            .iter()
            .filter_map(|a| match a {
                IpAddr::V4(a) => Some(u32::from(*a)),
                IpAddr::V6(_) => None,
            })
            .collect();
        if v4.is_empty() {
            return Err(unknown_host(s));
        }
        // libpcap 1.11's reading (the corpus): per protocol, the protocol and none of the
        // addresses, the protocols or-ed: `(ip and not (src or dst in A)) or (arp and …)…`.
        let b0 = self.mac_host(mac, Dir::SrcOrDst)?;
        let protos: &[(u32, u32, u32)] = match proto {
            Some(Proto::Ip) => &[(ethertype::IP, 12, 16)],
            Some(Proto::Arp) => &[(ethertype::ARP, 14, 24)],
            Some(Proto::Rarp) => &[(ethertype::REVARP, 14, 24)],
            _ if self.label_depth > 0 => &[(ethertype::IP, 12, 16)],
            _ => &[(ethertype::IP, 12, 16), (ethertype::ARP, 14, 24), (ethertype::REVARP, 14, 24)],
        };
        let mut acc: Option<Pred> = None;
        for &(ll, src, dst) in protos {
            let lt = self.linktype(ll)?;
            let mut m: Option<Pred> = None;
            for &a in &v4 {
                let s1 = self.eq(Base::Net, src, Size::W, a);
                let d1 = self.eq(Base::Net, dst, Size::W, a);
                let sd = self.b.or(s1, d1);
                m = Some(match m {
                    Some(b) => self.b.or(b, sd),
                    None => sd,
                });
            }
            let m = m.expect("at least one address");
            let g = self.b.and(lt, !m);
            acc = Some(match acc {
                Some(b) => self.b.or(b, g),
                None => g,
            });
        }
        let acc = acc.expect("at least one protocol");
        Ok(self.b.and(b0, acc))
    }

    /// gencode's `gen_host` for IPv4.
    fn host(
        &mut self,
        addr: u32,
        mask: u32,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
    ) -> R<Pred> {
        match proto {
            None if self.label_depth > 0 => self.host(addr, mask, Some(Proto::Ip), dir, is_net),
            None => {
                let b0 = self.host(addr, mask, Some(Proto::Ip), dir, is_net)?;
                let b1 = self.host(addr, mask, Some(Proto::Arp), dir, is_net)?;
                let b1 = self.b.or(b0, b1);
                let b0 = self.host(addr, mask, Some(Proto::Rarp), dir, is_net)?;
                Ok(self.b.or(b1, b0))
            }
            Some(Proto::Ip) => self.hostop(addr, mask, dir, ethertype::IP, 12, 16),
            Some(Proto::Arp) => self.hostop(addr, mask, dir, ethertype::ARP, 14, 24),
            Some(Proto::Rarp) => self.hostop(addr, mask, dir, ethertype::REVARP, 14, 24),
            Some(p) if p.is_link() => {
                Err(CompileError::new(Q::OnHost { proto: None, v6: false, net: is_net }, None))
            }
            Some(p) => {
                Err(CompileError::new(Q::OnHost { proto: Some(p), v6: false, net: is_net }, None))
            }
        }
    }

    fn hostop(&mut self, addr: u32, mask: u32, dir: Dir, ll: u32, src: u32, dst: u32) -> R<Pred> {
        match dir {
            Dir::Src | Dir::Dst => {
                let off = if dir == Dir::Src { src } else { dst };
                let b0 = self.linktype(ll)?;
                let b1 = self.cmp(Base::Net, off, Size::W, Cmp::Eq, addr, mask);
                Ok(self.b.and(b0, b1))
            }
            _ => {
                let b0 = self.hostop(addr, mask, Dir::Src, ll, src, dst)?;
                let b1 = self.hostop(addr, mask, Dir::Dst, ll, src, dst)?;
                Ok(if dir == Dir::SrcAndDst { self.b.and(b0, b1) } else { self.b.or(b0, b1) })
            }
        }
    }

    /// gencode's `gen_host6`.
    fn host6(
        &mut self,
        addr: Ipv6Addr,
        len: u32,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
    ) -> R<Pred> {
        match proto {
            None | Some(Proto::Ip6) => {
                let bits = u128::from(addr);
                let mask: u128 = if len == 0 { 0 } else { u128::MAX << (128 - len.min(128)) };
                if bits & !mask != 0 {
                    return Err(CompileError::new(
                        K::AddressInvalid { what: AddressKind::Ipv6Network, text: String::new() },
                        None,
                    ));
                }
                self.hostop6(bits, mask, dir, 8, 24)
            }
            Some(p) if p.is_link() => {
                Err(CompileError::new(Q::OnHost { proto: None, v6: true, net: is_net }, None))
            }
            Some(p) => {
                Err(CompileError::new(Q::OnHost { proto: Some(p), v6: true, net: is_net }, None))
            }
        }
    }

    fn hostop6(&mut self, addr: u128, mask: u128, dir: Dir, src: u32, dst: u32) -> R<Pred> {
        match dir {
            Dir::Src | Dir::Dst => {
                let off = if dir == Dir::Src { src } else { dst };
                let word = |x: u128, i: u32| (x >> (96 - 32 * i)) as u32;
                let mut b1 =
                    self.cmp(Base::Net, off + 12, Size::W, Cmp::Eq, word(addr, 3), word(mask, 3));
                for i in (0..3).rev() {
                    let b0 = self.cmp(
                        Base::Net,
                        off + 4 * i,
                        Size::W,
                        Cmp::Eq,
                        word(addr, i),
                        word(mask, i),
                    );
                    b1 = self.b.and(b0, b1);
                }
                let b0 = self.linktype(ethertype::IPV6)?;
                Ok(self.b.and(b0, b1))
            }
            _ => {
                let b0 = self.hostop6(addr, mask, Dir::Src, src, dst)?;
                let b1 = self.hostop6(addr, mask, Dir::Dst, src, dst)?;
                Ok(if dir == Dir::SrcAndDst { self.b.and(b0, b1) } else { self.b.or(b0, b1) })
            }
        }
    }

    /// gencode's `gen_bcmp` over the link header: words from the end, then a half word.
    fn bcmp(&mut self, base: Base, off: u32, bytes: &[u8]) -> Pred {
        let mut size = bytes.len();
        let mut acc: Option<Pred> = None;
        let mut push = |g: &mut Self, p: Pred| {
            acc = Some(match acc.take() {
                Some(b) => g.b.and(b, p),
                None => p,
            });
        };
        while size >= 4 {
            let w = u32::from_be_bytes(bytes[size - 4..size].try_into().expect("4 bytes"));
            let p = self.eq(base, off + size as u32 - 4, Size::W, w);
            push(self, p);
            size -= 4;
        }
        while size >= 2 {
            let h = u32::from(u16::from_be_bytes([bytes[size - 2], bytes[size - 1]]));
            let p = self.eq(base, off + size as u32 - 2, Size::H, h);
            push(self, p);
            size -= 2;
        }
        if size > 0 {
            let p = self.eq(base, off, Size::B, u32::from(bytes[0]));
            push(self, p);
        }
        acc.expect("non-empty comparison")
    }

    /// `link[off] & bit` as a branch on the link header (gencode's hand-built `jset` blocks).
    fn lh_set(&mut self, off: u32, bit: u32) -> Pred {
        self.cmp(Base::LinkHdr, off, Size::B, Cmp::Set, bit, u32::MAX)
    }

    /// gencode's `gen_wlanhostop` parts shared by source, destination and multicast: for
    /// data frames `data_tods` (To DS set) or `data_notods`; for management frames `mgmt`;
    /// never for control frames. Each test is built by `f` at the given offset.
    fn wlan_by_frame(&mut self, f: &mut dyn FnMut(&mut Self, u32) -> Pred, src: bool) -> Pred {
        let b0 = if src {
            // From DS set: SA at 24 with To DS, at 16 without; From DS clear: at 10.
            let b1 = self.lh_set(1, 0x01);
            let b0 = f(self, 24);
            let b0 = self.b.and(b1, b0);
            let b2 = !self.lh_set(1, 0x01);
            let b1 = f(self, 16);
            let b1 = self.b.and(b2, b1);
            let b0 = self.b.or(b1, b0);
            let b1 = self.lh_set(1, 0x02);
            let b0 = self.b.and(b1, b0);
            let b2 = !self.lh_set(1, 0x02);
            let b1 = f(self, 10);
            let b1 = self.b.and(b2, b1);
            self.b.or(b1, b0)
        } else {
            // DA at 16 with To DS, at 4 without.
            let b1 = self.lh_set(1, 0x01);
            let b0 = f(self, 16);
            let b0 = self.b.and(b1, b0);
            let b2 = !self.lh_set(1, 0x01);
            let b1 = f(self, 4);
            let b1 = self.b.and(b2, b1);
            self.b.or(b1, b0)
        };
        // Data frames.
        let b1 = self.lh_set(0, 0x08);
        let b0 = self.b.and(b1, b0);
        // Management frames: SA at 10, DA at 4.
        let b2 = !self.lh_set(0, 0x08);
        let b1 = f(self, if src { 10 } else { 4 });
        let b1 = self.b.and(b2, b1);
        let b0 = self.b.or(b1, b0);
        // Not control frames (nor the reserved type).
        let b1 = !self.lh_set(0, 0x04);
        self.b.and(b1, b0)
    }

    /// Neither a CTS nor an ACK control frame (which have no second address).
    fn wlan_not_cts_ack(&mut self) -> Pred {
        let b0 = !self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Eq, 0x04, 0x0c);
        let b1 = !self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Eq, 0xc0, 0xf0);
        let b2 = !self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Eq, 0xd0, 0xf0);
        let b2 = self.b.and(b1, b2);
        self.b.or(b0, b2)
    }

    /// gencode's `gen_wlanhostop`: an 802.11 address in the direction `dir`.
    fn wlanhostop(&mut self, mac: [u8; 6], dir: Dir) -> R<Pred> {
        let mut bcmp = |g: &mut Self, off: u32| g.bcmp(Base::LinkHdr, off, &mac);
        Ok(match dir {
            Dir::Src => self.wlan_by_frame(&mut bcmp, true),
            Dir::Dst => self.wlan_by_frame(&mut bcmp, false),
            Dir::SrcAndDst | Dir::SrcOrDst => {
                let b0 = self.wlanhostop(mac, Dir::Src)?;
                let b1 = self.wlanhostop(mac, Dir::Dst)?;
                if dir == Dir::SrcAndDst { self.b.and(b0, b1) } else { self.b.or(b0, b1) }
            }
            Dir::Addr1 => self.bcmp(Base::LinkHdr, 4, &mac),
            Dir::Addr2 => {
                let b2 = self.wlan_not_cts_ack();
                let b1 = self.bcmp(Base::LinkHdr, 10, &mac);
                self.b.and(b2, b1)
            }
            Dir::Addr3 => {
                let b0 = !self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Eq, 0x04, 0x0c);
                let b1 = self.bcmp(Base::LinkHdr, 16, &mac);
                self.b.and(b0, b1)
            }
            Dir::Addr4 => {
                let b0 = self.cmp(Base::LinkHdr, 1, Size::B, Cmp::Eq, 0x03, 0x03);
                let b1 = self.bcmp(Base::LinkHdr, 24, &mac);
                self.b.and(b0, b1)
            }
            Dir::Ra => {
                let b1 = self.lh_set(0, 0x08);
                let b0 = self.bcmp(Base::LinkHdr, 4, &mac);
                self.b.and(b1, b0)
            }
            Dir::Ta => {
                let b2 = self.wlan_not_cts_ack();
                let b1 = self.lh_set(0, 0x08);
                let b2 = self.b.and(b1, b2);
                let b1 = self.bcmp(Base::LinkHdr, 10, &mac);
                self.b.and(b2, b1)
            }
        })
    }

    /// A MAC address in direction `dir`: 802.11's address rules or Ethernet's.
    fn mac_host(&mut self, mac: [u8; 6], dir: Dir) -> R<Pred> {
        if self.link.kind == link::Kind::Wlan {
            self.wlanhostop(mac, dir)
        } else {
            Ok(self.ehostop(mac, dir))
        }
    }

    /// gencode's `gen_ehostop` for Ethernet.
    fn ehostop(&mut self, mac: [u8; 6], dir: Dir) -> Pred {
        match dir {
            Dir::Src => {
                let (src, _) = self.link.mac.unwrap_or((6, 0));
                self.bcmp(Base::LinkHdr, src, &mac)
            }
            Dir::Dst => {
                let (_, dst) = self.link.mac.unwrap_or((6, 0));
                self.bcmp(Base::LinkHdr, dst, &mac)
            }
            _ => {
                let b0 = self.ehostop(mac, Dir::Src);
                let b1 = self.ehostop(mac, Dir::Dst);
                if dir == Dir::SrcAndDst { self.b.and(b0, b1) } else { self.b.or(b0, b1) }
            }
        }
    }

    // ---- ports --------------------------------------------------------------------------

    fn port_id(&mut self, proto: Option<Proto>, dir: Dir, id: &Id, range: bool) -> R<Pred> {
        let qual = match proto {
            None => PROTO_UNDEF,
            Some(Proto::Tcp) => Some(ipproto::TCP),
            Some(Proto::Udp) => Some(ipproto::UDP),
            Some(Proto::Sctp) => Some(ipproto::SCTP),
            Some(_) => {
                return Err(CompileError::new(Q::OnPort { range }, None));
            }
        };
        let (lo, hi, real) = match id {
            Id::Num(n) => (*n, *n, qual),
            Id::Name(s) if range => {
                let Some((a, b)) = s.split_once('-') else {
                    return Err(CompileError::new(
                        K::NameUnknown { what: NameKind::PortRange, name: s.clone() },
                        None,
                    ));
                };
                let (a, pa) = self.port_number(a, qual)?;
                let (b, pb) = self.port_number(b, qual)?;
                (a, b, if pa == pb { pa } else { PROTO_UNDEF })
            }
            Id::Name(s) => {
                let (p, real) = self.port_number(s, qual)?;
                (p, p, real)
            }
            _ => {
                return Err(CompileError::new(
                    K::AddressInvalid { what: AddressKind::Port, text: String::new() },
                    None,
                ));
            }
        };
        if lo > 65535 || hi > 65535 {
            return Err(CompileError::new(
                K::OutOfRange { what: Quantity::Port, value: lo.max(hi).into(), max: 65535 },
                None,
            ));
        }
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        let b = self.port(Some((lo, hi)).filter(|_| range), lo, real, dir, false)?;
        let b6 = self.port(Some((lo, hi)).filter(|_| range), lo, real, dir, true)?;
        Ok(self.b.or(b6, b))
    }

    /// A service name or number, checked against the qualifier (gencode's `gen_scode`).
    fn port_number(&self, s: &str, qual: Option<u32>) -> R<(u32, Option<u32>)> {
        if let Some(n) = parse_num(s) {
            return Ok((n, qual));
        }
        let Some(svc) = self.resolver.service(s) else {
            return Err(CompileError::new(
                K::NameUnknown { what: NameKind::Port, name: s.into() },
                None,
            ));
        };
        let (port, real) = match (svc.tcp, svc.udp, svc.sctp) {
            (Some(t), Some(u), _) if t == u => (t, PROTO_UNDEF),
            (Some(t), _, _) => (t, Some(ipproto::TCP)),
            (None, Some(u), _) => (u, Some(ipproto::UDP)),
            (None, None, Some(s)) => (s, Some(ipproto::SCTP)),
            (None, None, None) => {
                return Err(CompileError::new(
                    K::NameUnknown { what: NameKind::Port, name: s.into() },
                    None,
                ));
            }
        };
        let name = |p| match p {
            ipproto::TCP => "tcp",
            ipproto::UDP => "udp",
            _ => "sctp",
        };
        match (qual, real) {
            (Some(q), Some(r)) if q != r => {
                Err(CompileError::new(K::PortWrongProto { name: s.into(), proto: name(r) }, None))
            }
            (Some(q), _) => Ok((u32::from(port), Some(q))),
            (None, r) => Ok((u32::from(port), r)),
        }
    }

    /// gencode's `gen_port`/`gen_portrange` (`v6` false) and their IPv6 versions.
    fn port(
        &mut self,
        range: Option<(u32, u32)>,
        port: u32,
        proto: Option<u32>,
        dir: Dir,
        v6: bool,
    ) -> R<Pred> {
        let b0 = self.linktype(if v6 { ethertype::IPV6 } else { ethertype::IP })?;
        let b1 = match proto {
            Some(p) => self.portop(range, port, p, dir, v6),
            None => {
                let tmp = self.portop(range, port, ipproto::TCP, dir, v6);
                let b1 = self.portop(range, port, ipproto::UDP, dir, v6);
                let b1 = self.b.or(tmp, b1);
                let tmp = self.portop(range, port, ipproto::SCTP, dir, v6);
                self.b.or(tmp, b1)
            }
        };
        Ok(self.b.and(b0, b1))
    }

    fn portop(
        &mut self,
        range: Option<(u32, u32)>,
        port: u32,
        proto: u32,
        dir: Dir,
        v6: bool,
    ) -> Pred {
        let b0 = if v6 {
            self.eq(Base::Net, 6, Size::B, proto)
        } else {
            let tmp = self.eq(Base::Net, 9, Size::B, proto);
            let frag = self.ipfrag();
            self.b.and(tmp, frag)
        };
        let base = if v6 { Base::TranV6 } else { Base::TranV4 };
        let b1 = match dir {
            Dir::Src => self.portatom(base, 0, range, port),
            Dir::Dst => self.portatom(base, 2, range, port),
            _ => {
                let tmp = self.portatom(base, 0, range, port);
                let b1 = self.portatom(base, 2, range, port);
                if dir == Dir::SrcAndDst { self.b.and(tmp, b1) } else { self.b.or(tmp, b1) }
            }
        };
        self.b.and(b0, b1)
    }

    fn portatom(&mut self, base: Base, off: u32, range: Option<(u32, u32)>, port: u32) -> Pred {
        match range {
            Some((lo, hi)) => {
                let b1 = self.cmp(base, off, Size::H, Cmp::Ge, lo, u32::MAX);
                let b2 = self.cmp(base, off, Size::H, Cmp::Le, hi, u32::MAX);
                self.b.and(b1, b2)
            }
            _ => self.eq(base, off, Size::H, port),
        }
    }
}

use sift_diag::number::parse_c_u32 as parse_num;

/// Dotted IPv4 text as libpcap's `__pcap_atoin`, shifted left: `(value, parts)`.
fn v4(s: &str) -> R<(u32, u32)> {
    sift_filter::semantic::ipv4_parts(s).ok_or_else(|| {
        CompileError::new(K::AddressInvalid { what: AddressKind::Ipv4, text: s.into() }, None)
    })
}

/// "unknown host 'NAME'".
fn unknown_host(name: &str) -> CompileError {
    CompileError::new(K::NameUnknown { what: NameKind::Host, name: name.into() }, None)
}
