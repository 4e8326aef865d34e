//! The tcpdump-style renderer: one line per packet, as `tcpdump -n` prints it.
//!
//! [`Printer`] holds the options and the state tcpdump keeps between packets: the previous and
//! first timestamps (for `-ttt`/`-ttttt`) and the TCP conversations whose initial sequence numbers
//! make later sequence numbers relative. It walks the layers from [`crate::decode`] and writes
//! into the caller's buffer; once the buffer and the conversation table are warm it does not
//! allocate.
//!
//! Lines match tcpdump 4.99 byte for byte for the common protocols (checked by the oracle test
//! `tests/tcpdump_oracle.rs`); rarer ones get a tcpdump-like line. VXLAN, like tcpdump, puts its
//! inner frame on a second line, and `-v` puts an IPv4 packet's transport on a second line.

use std::collections::HashMap;

use sift_pcap::Timestamp;

use crate::decode::{self, Decoded, Dns, Ipv4, Ipv6, Layer, Proto, Unknown};
use crate::names;
use crate::out::{Out, be16, be32, u8_at};
use crate::time::{self, TimeFormat};

/// Hex dump options (`-x`, `-xx`, `-X`, `-XX`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HexDump {
    /// None.
    #[default]
    None,
    /// `-x`: hex of the packet after the link-layer header.
    Hex,
    /// `-xx`: hex of the whole packet.
    HexLink,
    /// `-X`: hex and ASCII after the link-layer header.
    HexAscii,
    /// `-XX`: hex and ASCII of the whole packet.
    HexAsciiLink,
}

/// Printing options, named after tcpdump's flags. Names are always numeric (`-n`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `-e`: print the link-layer header.
    pub link_header: bool,
    /// `-q`: quiet, less protocol information.
    pub quiet: bool,
    /// `-t` … `-ttttt`.
    pub time: TimeFormat,
    /// Nanosecond timestamps (`--time-stamp-precision=nano`).
    pub nano: bool,
    /// `-x`/`-xx`/`-X`/`-XX`.
    pub hex: HexDump,
    /// `-v` count.
    pub verbose: u8,
    /// `-S`: absolute TCP sequence numbers.
    pub absolute_seq: bool,
}

/// A fast hasher for the conversation table (keys come from the capture being printed, as in
/// tcpdump's own fixed hash table; this is a local tool, not a service facing hostile input).
#[derive(Default, Clone, Copy)]
struct ConvHasher(u64);

impl std::hash::Hasher for ConvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

type ConvMap = HashMap<ConvKey, ConvSeq, std::hash::BuildHasherDefault<ConvHasher>>;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ConvKey {
    src: [u8; 16],
    dst: [u8; 16],
    ports: u32,
    v6: bool,
}

#[derive(Clone, Copy)]
struct ConvSeq {
    seq: u32,
    ack: u32,
}

/// The tcpdump-style printer. See the module documentation.
#[derive(Default)]
pub struct Printer {
    opts: Options,
    prev: Option<Timestamp>,
    first: Option<Timestamp>,
    tcp: ConvMap,
    ifnames: Option<Vec<(u32, String)>>,
}

/// Position of the nearest enclosing IP header, for the address part of transport lines.
#[derive(Clone, Copy)]
enum IpRef<'a> {
    V4(Ipv4<'a>),
    V6(Ipv6<'a>),
}

impl IpRef<'_> {
    fn addr(&self, out: &mut Vec<u8>, src: bool) {
        match self {
            IpRef::V4(ip) => out.ip4(if src { ip.src } else { ip.dst }),
            IpRef::V6(ip) => out.ip6(if src { ip.src } else { ip.dst }),
        }
    }
}

struct Walk<'p, 'a> {
    p: &'p mut Printer,
    d: &'p Decoded<'a>,
    out: &'p mut Vec<u8>,
    /// Whether a truncation mark was printed (tcpdump then dumps `-x` from byte 0).
    truncated: bool,
}

impl Printer {
    /// A printer with the given options.
    pub fn new(opts: Options) -> Printer {
        Printer { opts, ..Printer::default() }
    }

    /// The options in use.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Appends the line(s) for one packet, ending with `\n`, to `out`.
    pub fn print(
        &mut self,
        out: &mut Vec<u8>,
        link_type: u16,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
    ) {
        let d = decode::decode(link_type, data, wire_len);
        self.print_decoded(out, ts, &d);
    }

    /// Appends the line(s) for an already decoded packet.
    pub fn print_decoded(&mut self, out: &mut Vec<u8>, ts: Timestamp, d: &Decoded<'_>) {
        if self.first.is_none() {
            self.first = Some(ts);
        }
        if self.opts.time != TimeFormat::None {
            time::write(out, self.opts.time, ts, self.prev, self.first, self.opts.nano);
            out.push(b' ');
        }
        self.prev = Some(ts);
        if d.data.is_empty() || (d.wire_len as usize) < d.data.len() {
            out.extend_from_slice(b"[Invalid header: ");
            if d.data.is_empty() {
                out.extend_from_slice(b"caplen==0");
                if d.wire_len == 0 {
                    out.extend_from_slice(b", len==0");
                }
            } else {
                out.s("len(");
                out.u(u64::from(d.wire_len));
                out.s(") < caplen(");
                out.u(d.data.len() as u64);
                out.s(")");
            }
            out.extend_from_slice(b"]\n");
            return;
        }
        if self.opts.link_header
            && matches!(
                d.link_type,
                decode::linktype::RAW | decode::linktype::IPV4 | decode::linktype::IPV6
            )
        {
            out.extend_from_slice(b"ip: ");
        }
        let mut w = Walk { p: self, d, out, truncated: false };
        w.layer(0);
        let truncated = w.truncated;
        let hex = self.opts.hex;
        if hex != HexDump::None {
            // After a truncated packet tcpdump has lost the link-layer header length and dumps
            // everything.
            let from = match hex {
                HexDump::Hex | HexDump::HexAscii if !truncated => {
                    d.link_header_len.min(d.data.len())
                }
                _ => 0,
            };
            let ascii = matches!(hex, HexDump::HexAscii | HexDump::HexAsciiLink);
            hex_dump(out, &d.data[from..], ascii);
        }
        out.push(b'\n');
    }

    fn ifname(&mut self, index: u32) -> Option<&str> {
        let names = self.ifnames.get_or_insert_with(|| {
            let mut v = Vec::new();
            if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
                for e in dir.flatten() {
                    let idx = std::fs::read_to_string(e.path().join("ifindex"))
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok());
                    if let (Some(i), Some(n)) = (idx, e.file_name().to_str()) {
                        v.push((i, n.to_owned()));
                    }
                }
            }
            v
        });
        names.iter().find(|(i, _)| *i == index).map(|(_, n)| n.as_str())
    }
}

/// How an IPv4 options area ended.
enum OptEnd {
    /// Printed to its end (or to a bad length).
    Done,
    /// An option's data was cut by the capture (tcpdump's `[truncated-option]`).
    Cut,
    /// An option's type or length byte was not captured.
    Gone,
}

/// tcpdump's `hex_and_ascii_print` / `hex_print` layout: 16 bytes per line, `\n\t0xOFFS:  `.
pub(crate) fn hex_dump(out: &mut Vec<u8>, data: &[u8], ascii: bool) {
    hex_dump_with(out, "\n\t", data, ascii);
}

/// [`hex_dump`] with another line prefix (tcpdump indents option dumps further).
pub(crate) fn hex_dump_with(out: &mut Vec<u8>, prefix: &str, data: &[u8], ascii: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (line, chunk) in data.chunks(16).enumerate() {
        out.s(prefix);
        out.s("0x");
        out.hex_width((line * 16) as u64, 4);
        out.s(": ");
        let start = out.len();
        for pair in chunk.chunks(2) {
            out.push(b' ');
            for b in pair {
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
        }
        if ascii {
            // Hex column is 40 characters wide, then two spaces.
            let used = out.len() - start;
            for _ in used..40 {
                out.push(b' ');
            }
            out.s("  ");
            for b in chunk {
                out.push(if (0x21..0x7f).contains(b) { *b } else { b'.' });
            }
        }
    }
}

fn pkttype_name(t: u16) -> &'static str {
    match t {
        0 => "In",
        1 => "B",
        2 => "M",
        3 => "P",
        4 => "Out",
        _ => "?",
    }
}

fn ethertype_text(out: &mut Vec<u8>, t: u16) {
    out.s("ethertype ");
    out.s(names::ethertype(t).unwrap_or("Unknown"));
    out.s(" (0x");
    out.hex_width(u64::from(t), 4);
    out.s(")");
}

impl<'a> Walk<'_, 'a> {
    fn o(&self) -> &Options {
        &self.p.opts
    }

    fn at(&self, i: usize) -> Option<Layer<'a>> {
        self.d.layers().get(i).copied()
    }

    /// The nearest IP header before layer `i`, and whether it is directly before it.
    fn ip_before(&self, i: usize) -> Option<(IpRef<'a>, bool)> {
        let layers = self.d.layers();
        let mut j = i;
        while j > 0 {
            j -= 1;
            match layers[j] {
                Layer::Ipv4(ip) => return Some((IpRef::V4(ip), j + 1 == i)),
                Layer::Ipv6(ip) => return Some((IpRef::V6(ip), j + 1 == i)),
                Layer::Ipv6Ext(_) => {}
                _ => return None,
            }
        }
        None
    }

    /// A truncation mark where tcpdump gives up through its longjmp (it then also forgets the
    /// link-layer header length for `-x`).
    fn trunc(&mut self, proto: &str) {
        self.truncated = true;
        self.trunc_soft(proto);
    }

    /// A truncation mark where tcpdump's printer returns normally.
    fn trunc_soft(&mut self, proto: &str) {
        self.out.s(" [|");
        self.out.s(proto);
        self.out.s("]");
    }

    fn layer(&mut self, i: usize) {
        let Some(layer) = self.at(i) else { return };
        match layer {
            Layer::Ether(e) => self.ether(i, e),
            Layer::Sll(s) => self.sll(i, s),
            Layer::Loopback(l) => {
                if self.o().link_header {
                    if self.o().quiet {
                        self.out.s(names::bsd_af(l.family).unwrap_or("Unknown"));
                    } else {
                        self.out.s("AF ");
                        self.out.s(names::bsd_af(l.family).unwrap_or("Unknown"));
                        self.out.s(" (");
                        self.out.u(u64::from(l.family));
                        self.out.s(")");
                    }
                    self.out.s(", length ");
                    self.out.u(u64::from(l.len));
                    self.out.s(": ");
                }
                if let Some(Layer::Unknown { .. }) = self.at(i + 1) {
                    if !self.o().link_header {
                        self.out.s("AF ");
                        self.out.s(names::bsd_af(l.family).unwrap_or("Unknown"));
                        self.out.s(" (");
                        self.out.u(u64::from(l.family));
                        self.out.s("), length ");
                        self.out.u(u64::from(l.len));
                        self.out.s(": ");
                    }
                    return;
                }
                self.layer(i + 1)
            }
            Layer::Vlan(v) => self.vlan(i, v),
            Layer::Mpls(_) => self.mpls(i),
            Layer::Pppoe(p) => self.pppoe(i, p),
            Layer::Arp(a) => self.arp(a),
            Layer::Ipv4(ip) => self.ipv4(i, ip),
            Layer::Ipv6(ip) => self.ipv6(i, ip),
            Layer::Ipv6Ext(_) => self.layer(i + 1),
            Layer::Tcp(t) => self.tcp(i, t),
            Layer::Udp(u) => self.udp(i, u),
            Layer::Sctp(s) => self.sctp(i, s),
            Layer::Icmp(m) => self.icmp(m),
            Layer::Icmpv6(m) => self.icmp6(i, m),
            Layer::Gre(g) => self.gre(i, g),
            Layer::Vxlan(v) => {
                self.out.s("VXLAN, flags [");
                self.out.s(if v.flags & 0x08 != 0 { "I" } else { "." });
                self.out.s("] (0x");
                self.out.hex_width(u64::from(v.flags), 2);
                self.out.s("), vni ");
                self.out.u(u64::from(v.vni));
                self.out.s("\n");
                self.layer(i + 1);
            }
            Layer::Geneve(g) => self.geneve(i, g),
            Layer::Dns(dns) => self.dns(dns),
            Layer::Payload { .. } => {}
            Layer::Truncated { proto, data, len } => self.truncated(i, proto, data, len),
            Layer::Malformed { proto, why, data, len } => self.malformed(proto, why, data, len),
            Layer::Unknown { what, data, len } => self.unknown(i, what, data, len),
        }
    }

    fn unknown(&mut self, i: usize, what: Unknown, data: &'a [u8], len: u32) {
        match what {
            Unknown::EtherType(t) => {
                let prev = i.checked_sub(1).and_then(|j| self.at(j));
                match prev {
                    // After a link header printed without -e, tcpdump names the type; after
                    // one printed with -e it has said everything already. Then it dumps the
                    // payload (unless -x does).
                    Some(Layer::Ether(e)) => {
                        if !self.o().link_header {
                            self.out.mac(e.src);
                            self.out.s(" > ");
                            self.out.mac(e.dst);
                            self.out.s(", ");
                            ethertype_text(self.out, t);
                            self.out.s(", length ");
                            self.out.u(u64::from(e.len));
                            self.out.s(": ");
                        }
                        self.default_print(data);
                    }
                    Some(Layer::Sll(_)) => self.default_print(data),
                    _ => ethertype_text(self.out, t),
                }
            }
            Unknown::IpProto(59) if matches!(self.ip_before(i), Some((IpRef::V6(_), _))) => {
                self.out.s("no next header");
            }
            Unknown::IpProto(p) => {
                self.out.s(" ip-proto-");
                self.out.u(u64::from(p));
                self.out.s(" ");
                self.out.u(u64::from(len));
            }
            Unknown::Fragment(p) => {
                self.out.s(" ip-proto-");
                self.out.u(u64::from(p));
            }
            Unknown::Family(_) => {}
            Unknown::Ppp(0xc021) => {
                let (Some(code), Some(id)) = (u8_at(data, 0), u8_at(data, 1)) else {
                    return self.trunc("ppp");
                };
                const CODES: [&str; 12] = [
                    "Vend-Ext",
                    "Conf-Request",
                    "Conf-Ack",
                    "Conf-Nack",
                    "Conf-Reject",
                    "Term-Request",
                    "Term-Ack",
                    "Code-Reject",
                    "Prot-Reject",
                    "Echo-Request",
                    "Echo-Reply",
                    "Discard-Req",
                ];
                self.out.s("LCP, ");
                self.out.s(CODES.get(usize::from(code)).copied().unwrap_or("unknown"));
                self.out.s(" (0x");
                self.out.hex_width(u64::from(code), 2);
                self.out.s("), id ");
                self.out.u(u64::from(id));
                self.out.s(", length ");
                self.out.u(u64::from(len) + 2);
            }
            Unknown::Ppp(p) => {
                self.out.s("unknown PPP protocol (0x");
                self.out.hex_width(u64::from(p), 4);
                self.out.s(")");
            }
            Unknown::LinkType(t) => {
                self.out.s("unsupported link type ");
                self.out.u(u64::from(t));
                self.out.s(", length ");
                self.out.u(u64::from(len));
            }
        }
    }

    /// tcpdump's default printer for undecoded payloads: a hex and ASCII dump, unless `-x`
    /// and friends dump the packet anyway.
    fn default_print(&mut self, data: &[u8]) {
        if self.o().hex == HexDump::None {
            hex_dump(self.out, data, true);
        }
    }

    fn truncated(&mut self, i: usize, proto: Proto, data: &'a [u8], len: u32) {
        match proto {
            // With the version byte there, tcpdump's header check returns normally; without it
            // the read of the version gives up.
            Proto::Ipv4 if data.is_empty() => self.trunc("ip"),
            Proto::Ipv4 => {
                if !self.o().link_header {
                    self.out.s("IP ");
                }
                self.trunc_soft("ip");
            }
            Proto::Ipv6 => self.trunc_soft("ip6"),
            // SCTP checks its common header before printing anything.
            Proto::Sctp => self.trunc_soft("sctp"),
            Proto::Tcp | Proto::Udp => {
                if let Some((ip, direct)) = self.ip_before(i) {
                    match (be16(data, 0), be16(data, 2)) {
                        (Some(sp), Some(dp)) => self.endpoints(ip, direct, Some((sp, dp))),
                        // Without ports, UDP after IPv6 extension headers prints no
                        // addresses; TCP always does.
                        _ if proto == Proto::Udp && !direct => {}
                        _ => {
                            self.endpoints(ip, true, None);
                            if proto != Proto::Udp {
                                self.out.pop();
                            }
                        }
                    }
                }
                self.trunc_soft(proto.name());
            }
            Proto::Icmp => self.trunc("icmp"),
            Proto::Icmpv6 => {
                if let Some(&t) = data.first() {
                    self.out.s("ICMP6, ");
                    match names::icmp6_type(t) {
                        Some(n) => self.out.s(n),
                        None => {
                            self.out.s("unknown icmp6 type (");
                            self.out.u(u64::from(t));
                            self.out.s(")");
                        }
                    }
                    if self.o().verbose > 0 && matches!(t, 135 | 136) {
                        self.out.s(", length ");
                        self.out.u(u64::from(len));
                    }
                }
                self.trunc("icmp6");
            }
            Proto::Mpls => {
                self.out.s("MPLS");
                self.trunc("mpls");
            }
            Proto::Gre => match be16(data, 0) {
                Some(f) => {
                    self.out.s("GREv");
                    self.out.u(u64::from(f & 7));
                    if self.o().verbose > 0 && f & 7 == 0 {
                        self.gre_flags(f);
                    }
                    self.trunc_soft("gre");
                }
                None => self.trunc_soft("gre"),
            },
            Proto::Geneve => {
                self.out.s("Geneve");
                self.trunc_soft("geneve");
            }
            Proto::Vxlan => {
                self.out.s("VXLAN");
                if let Some(&f) = data.first() {
                    self.out.s(", flags [");
                    self.out.s(if f & 0x08 != 0 { "I" } else { "." });
                    self.out.s("] (0x");
                    self.out.hex_width(u64::from(f), 2);
                    self.out.s("), ");
                    if let Some(vni) = data.get(4..7) {
                        self.out.s("vni ");
                        self.out.u(u64::from(u32::from_be_bytes([0, vni[0], vni[1], vni[2]])));
                        self.out.s("\n");
                    }
                }
                self.trunc("vxlan");
            }
            Proto::Routing => {
                let x = decode::Ipv6Ext { kind: 43, next: 0, header: data, hdr_len: 0, len };
                self.ipv6_ext(x);
                // ipv6_ext closed the parenthesis; tcpdump stops before it.
                if self.out.ends_with(b") ") {
                    self.out.truncate(self.out.len() - 2);
                }
                self.trunc("rt6");
            }
            Proto::Arp => self.trunc("arp"),
            Proto::Dns => self.trunc_soft("domain"),
            // A link header shorter than its fixed size: tcpdump skips what there is, so `-x`
            // has nothing left to dump.
            // Options headers: reading the length byte gives up, the length check returns.
            Proto::HopOpts | Proto::DstOpts if data.len() < 2 => self.trunc(proto.name()),
            Proto::Ether | Proto::Vlan | Proto::HopOpts | Proto::DstOpts => {
                self.trunc_soft(proto.name())
            }
            other => self.trunc(other.name()),
        }
    }

    fn malformed(&mut self, proto: Proto, why: &str, data: &'a [u8], len: u32) {
        match proto {
            Proto::Ipv4 => {
                if !self.o().link_header && why == "hlen" {
                    self.out.s("IP ");
                }
                match why {
                    "raw-version" => {
                        self.out.s("unknown ip ");
                        self.out.u(u64::from(data.first().map_or(0, |b| b >> 4)));
                    }
                    "version" => {
                        let v = data.first().map_or(0, |b| b >> 4);
                        if v == 6 {
                            self.out.s("IP6, wrong link-layer encapsulation");
                        } else {
                            self.out.s("IP");
                            self.out.u(u64::from(v));
                        }
                        self.out.s(" (invalid)");
                    }
                    "hlen" => {
                        self.out.s("bad-hlen ");
                        self.out.u(u64::from(data[0] & 15) * 4);
                    }
                    _ => {
                        self.out.s("bad-len ");
                        self.out.u(u64::from(be16(data, 2).unwrap_or(0)));
                    }
                }
            }
            Proto::Ipv6 => match why {
                "version" => {
                    if !self.o().link_header {
                        self.out.s("IP6 ");
                    }
                    self.out.s("version error: ");
                    self.out.u(u64::from(data.first().map_or(0, |b| b >> 4)));
                    self.out.s(" != 6");
                }
                _ => {
                    self.out.s("[header+payload length ");
                    self.out.u(40 + u64::from(be16(data, 4).unwrap_or(0)));
                    self.out.s(" > length ");
                    self.out.u(u64::from(len));
                    self.out.s("] (invalid)");
                }
            },
            other => {
                self.out.s(other.name());
                self.out.s(" (invalid)");
            }
        }
    }

    fn ether(&mut self, i: usize, e: decode::Ether<'a>) {
        let eflag = self.o().link_header;
        if let Some(Layer::Truncated { proto: Proto::Vlan, .. }) = self.at(i + 1) {
            // A cut 802.1Q tag: tcpdump stops inside its link-layer header.
            if eflag {
                self.out.mac(e.src);
                self.out.s(" > ");
                self.out.mac(e.dst);
                self.out.s(", ");
            }
            return self.trunc_soft("vlan");
        }
        if eflag {
            self.out.mac(e.src);
            self.out.s(" > ");
            self.out.mac(e.dst);
            self.out.s(", ");
            if e.ethertype < 0x600 {
                self.out.s("802.3, length ");
                self.out.u(u64::from(e.len));
                self.out.s(": ");
            } else if self.o().quiet {
                match names::ethertype(e.ethertype) {
                    Some(n) => self.out.s(n),
                    None => {
                        self.out.s("ethertype Unknown (0x");
                        self.out.hex_width(u64::from(e.ethertype), 4);
                        self.out.s(")");
                    }
                }
                self.out.s(", length ");
                self.out.u(u64::from(e.len));
                self.out.s(": ");
            } else {
                ethertype_text(self.out, e.ethertype);
                self.out.s(", length ");
                self.out.u(u64::from(e.len));
                self.out.s(": ");
            }
        } else if e.ethertype < 0x600 {
            self.out.mac(e.src);
            self.out.s(" > ");
            self.out.mac(e.dst);
            self.out.s(", 802.3, length ");
            self.out.u(u64::from(e.len));
            self.out.s(": ");
        }
        self.layer(i + 1);
    }

    fn sll(&mut self, i: usize, s: decode::Sll<'a>) {
        // An unknown protocol makes tcpdump print the header as -e would.
        let unknown = matches!(self.at(i + 1), Some(Layer::Unknown { .. }));
        let eflag = self.o().link_header || unknown;
        if s.version == 2 {
            let name = self.p.ifname(s.ifindex).unwrap_or("?");
            self.out.extend_from_slice(name.as_bytes());
            for _ in name.len()..5 {
                self.out.push(b' ');
            }
            self.out.push(b' ');
            let t = pkttype_name(s.pkttype);
            self.out.s(t);
            for _ in t.len()..3 {
                self.out.push(b' ');
            }
            self.out.push(b' ');
            if eflag {
                self.out.s("ifindex ");
                self.out.u(u64::from(s.ifindex));
                self.out.push(b' ');
            }
        } else if eflag {
            let t = pkttype_name(s.pkttype);
            for _ in t.len()..3 {
                self.out.push(b' ');
            }
            self.out.s(t);
            self.out.push(b' ');
        }
        if eflag {
            if s.addr.len() == 6 {
                self.out.mac(s.addr);
                self.out.push(b' ');
            }
            if !self.o().quiet {
                if s.protocol < 0x600 {
                    match s.protocol {
                        1 => self.out.s("802.3"),
                        4 => self.out.s("802.2"),
                        p => {
                            self.out.s("ethertype Unknown (0x");
                            self.out.hex_width(u64::from(p), 4);
                            self.out.s(")");
                        }
                    }
                } else {
                    ethertype_text(self.out, s.protocol);
                }
                self.out.s(", length ");
                self.out.u(u64::from(s.len));
                self.out.s(": ");
            }
        }
        self.layer(i + 1);
    }

    fn vlan(&mut self, i: usize, v: decode::Vlan) {
        if self.o().link_header {
            self.out.s("vlan ");
            self.out.u(u64::from(v.vid));
            self.out.s(", p ");
            self.out.u(u64::from(v.pcp));
            if v.dei {
                self.out.s(", DEI");
            }
            self.out.s(", ");
            if let Some(Layer::Truncated { proto: Proto::Vlan, .. }) = self.at(i + 1) {
                return self.trunc_soft("vlan");
            }
            match names::ethertype(v.ethertype) {
                Some(n) if self.o().quiet => self.out.s(n),
                _ => ethertype_text(self.out, v.ethertype),
            }
            self.out.s(", ");
        }
        self.layer(i + 1);
    }

    fn mpls(&mut self, i: usize) {
        let mut j = i;
        self.out.s("MPLS");
        while let Some(Layer::Mpls(m)) = self.at(j) {
            self.out.s(if j > i && self.o().verbose > 0 { "\n\t(label " } else { " (label " });
            self.out.u(u64::from(m.label));
            self.out.s(", tc ");
            self.out.u(u64::from(m.tc));
            if m.bottom {
                self.out.s(", [S]");
            }
            self.out.s(", ttl ");
            self.out.u(u64::from(m.ttl));
            self.out.s(")");
            j += 1;
        }
        match self.at(j) {
            Some(Layer::Truncated { proto: Proto::Mpls, .. }) => self.trunc("mpls"),
            Some(Layer::Payload { data, .. }) => self.default_print(data),
            None => {}
            Some(_) => {
                self.out.s(if self.o().verbose > 0 { "\n\t" } else { " " });
                self.layer(j);
            }
        }
    }

    fn pppoe(&mut self, i: usize, p: decode::Pppoe<'a>) {
        self.out.s("PPPoE ");
        self.out.s(match p.code {
            0 => "",
            0x09 => "PADI",
            0x07 => "PADO",
            0x19 => "PADR",
            0x65 => "PADS",
            0xa7 => "PADT",
            _ => "Unknown",
        });
        if p.code == 0 {
            self.out.s(" [ses 0x");
            self.out.hex(u64::from(p.session));
            self.out.s("] ");
            let cut = matches!(self.at(i + 1), Some(Layer::Truncated { proto: Proto::Ppp, .. }));
            if self.o().link_header && !cut {
                match p.ppp_protocol {
                    0x0021 => self.out.s("IP"),
                    0x0057 => self.out.s("IP6"),
                    _ => self.out.s("unknown"),
                }
                self.out.s(" (0x");
                self.out.hex_width(u64::from(p.ppp_protocol), 4);
                self.out.s("), length ");
                self.out.u(u64::from(p.payload_len));
                self.out.s(": ");
            }
            self.layer(i + 1);
        } else {
            if p.session != 0 {
                self.out.s(" [ses 0x");
                self.out.hex(u64::from(p.session));
                self.out.s("]");
            }
            self.pppoe_tags(p.tags);
        }
    }

    fn pppoe_tags(&mut self, tags: &[u8]) {
        let mut off = 0;
        while let (Some(t), Some(l)) = (be16(tags, off), be16(tags, off + 2)) {
            let body = tags.get(off + 4..off + 4 + usize::from(l)).unwrap_or(&[]);
            let name = match t {
                0 => "EOL",
                0x0101 => "Service-Name",
                0x0102 => "AC-Name",
                0x0103 => "Host-Uniq",
                0x0104 => "AC-Cookie",
                0x0105 => "Vendor-Specific",
                0x0110 => "Relay-Session-ID",
                0x0120 => "PPP-Max-Payload",
                0x0201 => "Service-Name-Error",
                0x0202 => "AC-System-Error",
                0x0203 => "Generic-Error",
                _ => "",
            };
            self.out.s(" [");
            if name.is_empty() {
                self.out.s("TAG-0x");
                self.out.hex(u64::from(t));
            } else {
                self.out.s(name);
            }
            if !body.is_empty() {
                self.out.s(" ");
                let printable = body.iter().all(|b| (0x20..0x7f).contains(b));
                if printable {
                    self.out.extend_from_slice(body);
                } else {
                    self.out.s("0x");
                    for b in body {
                        for nib in [b >> 4, b & 15] {
                            self.out.push(b"0123456789ABCDEF"[usize::from(nib)]);
                        }
                    }
                }
            }
            self.out.s("]");
            off += 4 + usize::from(l);
            if t == 0 {
                break;
            }
        }
    }

    fn arp(&mut self, a: decode::Arp<'a>) {
        if !a.complete {
            self.trunc("arp");
            return;
        }
        if !self.o().link_header {
            self.out.s("ARP, ");
        }
        if self.o().verbose > 0
            && a.ptype == 0x0800
            && a.hlen == 6
            && a.plen == 4
            && (a.htype == 1 || a.htype == 6)
        {
            self.out.s(if a.htype == 1 { "Ethernet" } else { "IEEE 802" });
            self.out.s(" (len 6), IPv4 (len 4), ");
        }
        let ethernet_ipv4 = a.ptype == 0x0800 && a.hlen == 6 && a.plen == 4;
        if !ethernet_ipv4 || !(a.htype == 1 || a.htype == 6) {
            // Not Ethernet/IPv4: tcpdump prints the numbers.
            self.out.s("hardware #");
            self.out.u(u64::from(a.htype));
            self.out.s(", length ");
            self.out.u(u64::from(a.len));
            return;
        }
        if !a.complete {
            self.trunc("arp");
            return;
        }
        match a.op {
            1 => {
                self.out.s("Request who-has ");
                self.out.ip4(a.tpa);
                if a.tha.iter().any(|b| *b != 0) {
                    self.out.s(" (");
                    self.out.mac(a.tha);
                    self.out.s(")");
                }
                self.out.s(" tell ");
                self.out.ip4(a.spa);
            }
            2 => {
                self.out.s("Reply ");
                self.out.ip4(a.spa);
                self.out.s(" is-at ");
                self.out.mac(a.sha);
            }
            3 => {
                self.out.s("Reverse Request who-is ");
                self.out.mac(a.tha);
                self.out.s(" tell ");
                self.out.mac(a.sha);
            }
            4 => {
                self.out.s("Reverse Reply ");
                self.out.mac(a.tha);
                self.out.s(" at ");
                self.out.ip4(a.tpa);
            }
            8 => {
                self.out.s("Inverse Request who-is ");
                self.out.mac(a.tha);
                self.out.s(" tell ");
                self.out.mac(a.sha);
            }
            9 => {
                self.out.s("Inverse Reply ");
                self.out.mac(a.sha);
                self.out.s(" at ");
                self.out.ip4(a.spa);
            }
            op => {
                self.out.s("Unknown (");
                self.out.u(u64::from(op));
                self.out.s(")");
            }
        }
        self.out.s(", length ");
        self.out.u(u64::from(a.len));
    }

    fn ipv4(&mut self, i: usize, ip: Ipv4<'a>) {
        if !self.o().link_header {
            self.out.s("IP ");
        }
        if ip.missing > 0 {
            self.out.s("truncated-ip - ");
            self.out.u(u64::from(ip.missing));
            self.out.s(" bytes missing! ");
        }
        if let Some(Layer::Malformed { .. }) = self.at(i + 1) {
            return self.layer(i + 1);
        }
        if self.o().verbose > 0 && self.ipv4_verbose(ip) {
            return;
        }
        let next = self.at(i + 1);
        let first_fragment = ip.frag & 0x1fff == 0;
        let ports_follow = matches!(ip.protocol, 6 | 17 | 132 | 33);
        if !first_fragment {
            self.out.ip4(ip.src);
            self.out.s(" > ");
            self.out.ip4(ip.dst);
            self.out.s(":");
            return self.layer(i + 1);
        }
        if !ports_follow {
            self.out.ip4(ip.src);
            self.out.s(" > ");
            self.out.ip4(ip.dst);
            self.out.s(": ");
        }
        if let Some(Layer::Truncated { proto: Proto::Ipv4, .. }) = next {
            self.out.s(" [remaining caplen(");
            self.out.u(self.d.data.len().saturating_sub(self.offset_of(ip.header)) as u64);
            self.out.s(") < header length(");
            self.out.u(u64::from(ip.hlen));
            self.out.s(")]");
            self.trunc("ip");
            return;
        }
        self.layer(i + 1);
    }

    fn offset_of(&self, part: &[u8]) -> usize {
        // Offsets of borrowed slices within the packet, from their addresses.
        let base = self.d.data.as_ptr() as usize;
        (part.as_ptr() as usize).saturating_sub(base)
    }

    /// The `-v` header line; returns true when the packet ends there (options cut short).
    fn ipv4_verbose(&mut self, ip: Ipv4<'a>) -> bool {
        self.out.s("(tos 0x");
        self.out.hex(u64::from(ip.tos));
        match ip.tos & 3 {
            1 => self.out.s(",ECT(1)"),
            2 => self.out.s(",ECT(0)"),
            3 => self.out.s(",CE"),
            _ => {}
        }
        if ip.ttl >= 1 {
            self.out.s(", ttl ");
            self.out.u(u64::from(ip.ttl));
        }
        self.out.s(", id ");
        self.out.u(u64::from(ip.id));
        self.out.s(", offset ");
        self.out.u(u64::from(ip.frag_offset()));
        self.out.s(", flags [");
        let mut any = false;
        for (bit, name) in [(0x8000u16, "rsvd"), (0x4000, "DF"), (0x2000, "+")] {
            if ip.frag & bit != 0 {
                if any {
                    self.out.s(", ");
                }
                self.out.s(name);
                any = true;
            }
        }
        if !any {
            self.out.s("none");
        }
        self.out.s("], proto ");
        self.out.s(names::ip_proto(ip.protocol).unwrap_or("unknown"));
        self.out.s(" (");
        self.out.u(u64::from(ip.protocol));
        self.out.s("), length ");
        self.out.u(u64::from(ip.total_len));
        let mut cut = false;
        if ip.hlen > 20 {
            self.out.s(", options (");
            match self.ipv4_options(ip.options, usize::from(ip.hlen) - 20) {
                OptEnd::Done => {}
                OptEnd::Cut => {
                    self.out.s(" [truncated-option]");
                    cut = true;
                }
                OptEnd::Gone => {
                    // Reading an option's type or length byte gave up.
                    self.trunc("ip");
                    return true;
                }
            }
            self.out.s(")");
        }
        if !cut && ip.header.len() == usize::from(ip.hlen) && checksum(0, ip.header) != 0 {
            self.out.s(", bad cksum ");
            self.out.hex(u64::from(ip.checksum));
            self.out.s(" (->");
            let mut copy = [0u8; 60];
            copy[..ip.header.len()].copy_from_slice(ip.header);
            copy[10] = 0;
            copy[11] = 0;
            self.out.hex(u64::from(checksum(0, &copy[..ip.header.len()])));
            self.out.s(")!");
        }
        self.out.s(")\n    ");
        if cut {
            // Options cut by the capture: tcpdump names the addresses and stops.
            self.out.ip4(ip.src);
            self.out.s(" > ");
            self.out.ip4(ip.dst);
            self.out.s(": ");
            self.trunc_soft("ip");
        }
        cut
    }

    /// Prints the options area (`full` bytes long, `opts` of it captured).
    fn ipv4_options(&mut self, opts: &[u8], full: usize) -> OptEnd {
        let mut off = 0;
        let mut sep = "";
        while off < full {
            let Some(&t) = opts.get(off) else { return OptEnd::Gone };
            self.out.s(sep);
            sep = ",";
            let name = match t {
                0 => "EOL",
                1 => "NOP",
                7 => "RR",
                68 => "timestamp",
                82 => "traceroute",
                130 => "security",
                131 => "LSRR",
                137 => "SSRR",
                148 => "RA",
                _ => "",
            };
            if name.is_empty() {
                self.out.s("unknown ");
                self.out.u(u64::from(t));
            } else {
                self.out.s(name);
            }
            let len = if t == 0 || t == 1 {
                1
            } else {
                let Some(l) = opts.get(off + 1).copied() else { return OptEnd::Gone };
                if l < 2 {
                    self.out.s(" [bad length ");
                    self.out.u(u64::from(l));
                    self.out.s("]");
                    return OptEnd::Done;
                }
                usize::from(l)
            };
            if len > full - off {
                self.out.s(" [bad length ");
                self.out.u(len as u64);
                self.out.s("]");
                return OptEnd::Done;
            }
            let Some(o) = opts.get(off..off + len) else { return OptEnd::Cut };
            match t {
                0 => return OptEnd::Done,
                68 => self.ip_ts(o),
                7 | 131 | 137 => {
                    if len < 3 {
                        self.out.s(" [bad length ");
                        self.out.u(len as u64);
                        self.out.s("]");
                    } else {
                        if (len + 1) & 3 != 0 {
                            self.out.s(" [bad length ");
                            self.out.u(len as u64);
                            self.out.s("]");
                        }
                        let ptr = usize::from(o[2]).wrapping_sub(1);
                        if ptr < 3 || (ptr + 1) & 3 != 0 || ptr > len + 1 {
                            self.out.s(" [bad ptr ");
                            self.out.u(u64::from(o[2]));
                            self.out.s("]");
                        }
                        let mut k = 3;
                        while k < len {
                            let Some(a) = o.get(k..k + 4) else { return OptEnd::Done };
                            self.out.s(" ");
                            self.out.ip4(a);
                            if ptr > k {
                                self.out.s(",");
                            }
                            k += 4;
                        }
                    }
                }
                148 => {
                    if len < 4 {
                        self.out.s(" [bad length ");
                        self.out.u(len as u64);
                        self.out.s("]");
                    } else {
                        let v = be16(o, 2).unwrap_or(0);
                        if v != 0 {
                            self.out.s(" value ");
                            self.out.u(u64::from(v));
                        }
                    }
                }
                _ => {}
            }
            off += len;
        }
        OptEnd::Done
    }

    fn ip_ts(&mut self, o: &[u8]) {
        let length = o.len();
        if length < 4 {
            self.out.s("[bad length ");
            self.out.u(length as u64);
            self.out.s("]");
            return;
        }
        self.out.s(" TS{");
        let flag = o[3] & 15;
        let hoplen = if flag != 0 { 8 } else { 4 };
        if (length - 4) & (hoplen - 1) != 0 {
            self.out.s("[bad length ");
            self.out.u(length as u64);
            self.out.s("]");
        }
        let ptr = usize::from(o[2]).wrapping_sub(1);
        let mut len = 0;
        if ptr < 4 || (ptr.wrapping_sub(4)) & (hoplen - 1) != 0 || ptr > length + 1 {
            self.out.s("[bad ptr ");
            self.out.u(u64::from(o[2]));
            self.out.s("]");
        }
        let known = match flag {
            0 => {
                self.out.s("TSONLY");
                true
            }
            1 => {
                self.out.s("TS+ADDR");
                true
            }
            3 => {
                self.out.s("PRESPEC");
                true
            }
            f => {
                self.out.s("[bad ts type ");
                self.out.u(u64::from(f));
                self.out.s("]");
                false
            }
        };
        if known {
            let mut ty = " ";
            len = 4;
            while len < length {
                if ptr == len {
                    ty = " ^ ";
                }
                let Some(v) = be32(o, len + hoplen - 4) else { break };
                self.out.s(ty);
                self.out.u(u64::from(v));
                self.out.s("@");
                if hoplen == 8 {
                    self.out.ip4(&o[len..len + 4]);
                }
                ty = " ";
                len += hoplen;
            }
        }
        if ptr == len {
            self.out.s(" ^ ");
        }
        if o[3] >> 4 != 0 {
            self.out.s(" [");
            self.out.u(u64::from(o[3] >> 4));
            self.out.s(" hops not recorded]} ");
        } else {
            self.out.s("}");
        }
    }

    fn ipv6(&mut self, i: usize, ip: Ipv6<'a>) {
        if !self.o().link_header {
            self.out.s("IP6 ");
        }
        if ip.missing > 0 {
            self.out.s("truncated-ip6 - ");
            self.out.u(u64::from(ip.missing));
            self.out.s(" bytes missing!");
        }
        if let Some(Layer::Malformed { .. }) = self.at(i + 1) {
            return self.layer(i + 1);
        }
        if self.o().verbose > 0 {
            self.out.s("(");
            if ip.class != 0 {
                self.out.s("class 0x");
                self.out.hex_width(u64::from(ip.class), 2);
                self.out.s(", ");
            }
            if ip.flow != 0 {
                self.out.s("flowlabel 0x");
                self.out.hex_width(u64::from(ip.flow), 5);
                self.out.s(", ");
            }
            self.out.s("hlim ");
            self.out.u(u64::from(ip.hlim));
            self.out.s(", next-header ");
            self.out.s(names::ip_proto(ip.next).unwrap_or("unknown"));
            self.out.s(" (");
            self.out.u(u64::from(ip.next));
            self.out.s(") payload length: ");
            self.out.u(u64::from(ip.payload_len));
            self.out.s(") ");
        }
        if !matches!(ip.next, 6 | 17 | 132 | 33) {
            self.out.ip6(ip.src);
            self.out.s(" > ");
            self.out.ip6(ip.dst);
            self.out.s(": ");
        }
        let mut j = i + 1;
        while let Some(Layer::Ipv6Ext(x)) = self.at(j) {
            self.ipv6_ext(x);
            j += 1;
            if x.kind == 44 {
                let offlg = be16(x.header, 2).unwrap_or(0);
                if offlg & 0xfff8 != 0 {
                    return;
                }
            }
        }
        match self.at(j) {
            Some(Layer::Truncated { proto: Proto::Ipv6Ext, .. }) => self.trunc_soft("ip6"),
            _ => self.layer(j),
        }
    }

    fn ipv6_ext(&mut self, x: decode::Ipv6Ext<'a>) {
        match x.kind {
            0 | 60 => {
                self.out.s(if x.kind == 0 { "HBH " } else { "DSTOPT " });
                if self.o().verbose > 0 {
                    self.ipv6_opts(x.header.get(2..).unwrap_or(&[]));
                }
            }
            44 => {
                let offlg = be16(x.header, 2).unwrap_or(0);
                if self.o().verbose > 0 && x.header.len() < 8 {
                    // -v also prints the identification, which was not captured.
                    return self.trunc("frag6");
                }
                self.out.s("frag (");
                if self.o().verbose > 0 {
                    self.out.s("0x");
                    self.out.hex_width(u64::from(be32(x.header, 4).unwrap_or(0)), 8);
                    self.out.s(":");
                }
                self.out.u(u64::from(offlg & 0xfff8));
                self.out.s("|");
                self.out.u(u64::from(x.len));
                self.out.s(")");
                if offlg & 0xfff8 == 0 {
                    self.out.s(" ");
                }
            }
            43 => {
                let h = x.header;
                self.out.s("RT6");
                let fields = [" (len=", ", type=", ", segleft="];
                for (k, name) in fields.iter().enumerate() {
                    let Some(v) = u8_at(h, k + 1) else {
                        self.out.s(") ");
                        return;
                    };
                    self.out.s(name);
                    self.out.u(u64::from(v));
                    if k == 1 && v == 0 {
                        self.out.s(" [Deprecated]");
                    }
                }
                let rtype = h[2];
                if rtype == 4 {
                    let Some(last) = u8_at(h, 4) else {
                        self.out.s(") ");
                        return;
                    };
                    self.out.s(", last-entry=");
                    self.out.u(u64::from(last));
                    if self.o().verbose > 0 {
                        let Some(flags) = u8_at(h, 5) else {
                            self.out.s(") ");
                            return;
                        };
                        self.out.s(", flags=0x");
                        self.out.hex(u64::from(flags));
                    }
                    let Some(tag) = be16(h, 6) else {
                        self.out.s(") ");
                        return;
                    };
                    self.out.s(", tag=");
                    self.out.hex(u64::from(tag));
                    for k in 0..=usize::from(last) {
                        let at = 8 + 16 * k;
                        let Some(a) = h.get(at..at + 16) else { break };
                        self.out.s(", [");
                        self.out.u(k as u64);
                        self.out.s("]");
                        self.out.ip6(a);
                    }
                } else if rtype == 0 || rtype == 2 {
                    let mut at = 8;
                    let mut k = 0;
                    while let Some(a) = h.get(at..at + 16) {
                        self.out.s(", [");
                        self.out.u(k);
                        self.out.s("]");
                        self.out.ip6(a);
                        at += 16;
                        k += 1;
                    }
                }
                self.out.s(") ");
            }
            _ => {}
        }
    }

    fn ipv6_opts(&mut self, mut opts: &[u8]) {
        while let Some(&t) = opts.first() {
            if t == 0 {
                self.out.s("(pad1)");
                opts = &opts[1..];
                continue;
            }
            let Some(&l) = opts.get(1) else { break };
            let body = opts.get(2..2 + usize::from(l)).unwrap_or(&[]);
            match t {
                1 => {
                    self.out.s("(padn)");
                }
                5 => {
                    self.out.s("(rtalert: 0x");
                    self.out.hex_width(u64::from(be16(body, 0).unwrap_or(0)), 4);
                    self.out.s(") ");
                }
                0xc2 => {
                    self.out.s("(jumbo: ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s(") ");
                }
                _ => {
                    self.out.s("(opt_type 0x");
                    self.out.hex_width(u64::from(t), 2);
                    self.out.s(": len=");
                    self.out.u(u64::from(l));
                    self.out.s(") ");
                }
            }
            opts = opts.get(2 + usize::from(l)..).unwrap_or(&[]);
        }
        self.out.s(" ");
    }

    /// `src.sport > dst.dport: ` (or ports only after IPv6 extension headers, or addresses
    /// only without ports).
    fn endpoints(&mut self, ip: IpRef<'a>, direct: bool, ports: Option<(u16, u16)>) {
        match ports {
            Some((sp, dp)) => {
                if direct {
                    ip.addr(self.out, true);
                    self.out.push(b'.');
                }
                self.out.u(u64::from(sp));
                self.out.s(" > ");
                if direct {
                    ip.addr(self.out, false);
                    self.out.push(b'.');
                }
                self.out.u(u64::from(dp));
                self.out.s(": ");
            }
            None => {
                ip.addr(self.out, true);
                self.out.s(" > ");
                ip.addr(self.out, false);
                self.out.s(": ");
            }
        }
    }

    fn tcp(&mut self, i: usize, t: decode::Tcp<'a>) {
        let Some((ip, direct)) = self.ip_before(i) else { return };
        self.endpoints(ip, direct, Some((t.sport, t.dport)));
        let hlen = u32::from(t.hlen);
        let length = t.len;
        if hlen < 20 {
            self.out.s(" tcp ");
            self.out.u(u64::from(length.wrapping_sub(hlen)));
            self.out.s(" [bad hdr length ");
            self.out.u(u64::from(hlen));
            self.out.s(" - too short, < 20]");
            return;
        }
        if self.o().quiet {
            self.out.s("tcp ");
            self.out.u(u64::from(length.wrapping_sub(hlen)));
            if hlen > length {
                self.out.s(" [bad hdr length ");
                self.out.u(u64::from(hlen));
                self.out.s(" - too long, > ");
                self.out.u(u64::from(length));
                self.out.s("]");
            }
            return;
        }
        self.out.s("Flags [");
        let flags = t.flags;
        let start = self.out.len();
        // tcpdump 4.99 prints the eight classic flags only (not AE).
        for (bit, c) in [
            (0x01u16, b'F'),
            (0x02, b'S'),
            (0x04, b'R'),
            (0x08, b'P'),
            (0x10, b'.'),
            (0x20, b'U'),
            (0x40, b'E'),
            (0x80, b'W'),
        ] {
            if flags & bit != 0 {
                self.out.push(c);
            }
        }
        if self.out.len() == start {
            self.out.s("none");
        }
        self.out.s("]");
        let (mut seq, mut ack) = (t.seq, t.ack);
        let (mut thseq, mut thack, mut rev) = (0u32, 0u32, false);
        if !self.o().absolute_seq && flags & 0x10 != 0 {
            let (src, dst, v6): (&[u8], &[u8], bool) = match ip {
                IpRef::V4(h) => (h.src, h.dst, false),
                IpRef::V6(h) => (h.src, h.dst, true),
            };
            rev = t.sport > t.dport || (t.sport == t.dport && src > dst);
            let mut key = ConvKey { src: [0; 16], dst: [0; 16], ports: 0, v6 };
            let (a, b) = if rev { (dst, src) } else { (src, dst) };
            key.src[..a.len()].copy_from_slice(a);
            key.dst[..b.len()].copy_from_slice(b);
            key.ports = if rev {
                u32::from(t.dport) << 16 | u32::from(t.sport)
            } else {
                u32::from(t.sport) << 16 | u32::from(t.dport)
            };
            let entry = self.p.tcp.get(&key).copied();
            let state = match entry {
                Some(s) if flags & 0x02 == 0 => {
                    if rev {
                        seq = seq.wrapping_sub(s.ack);
                        ack = ack.wrapping_sub(s.seq);
                    } else {
                        seq = seq.wrapping_sub(s.seq);
                        ack = ack.wrapping_sub(s.ack);
                    }
                    s
                }
                _ => {
                    let s = if rev {
                        ConvSeq { ack: seq, seq: ack.wrapping_sub(1) }
                    } else {
                        ConvSeq { seq, ack: ack.wrapping_sub(1) }
                    };
                    self.p.tcp.insert(key, s);
                    s
                }
            };
            thseq = state.seq;
            thack = state.ack;
        }
        if hlen > length {
            self.out.s(" [bad hdr length ");
            self.out.u(u64::from(hlen));
            self.out.s(" - too long, > ");
            self.out.u(u64::from(length));
            self.out.s("]");
            return;
        }
        if self.o().verbose > 0 && !self.fragmented(i) {
            self.transport_checksum(ip, i, 6, t.len, 16);
        }
        let dlen = length - hlen;
        if self.o().verbose > 1 || dlen > 0 || flags & 0x07 != 0 {
            self.out.s(", seq ");
            self.out.u(u64::from(seq));
            if dlen > 0 {
                self.out.s(":");
                self.out.u(u64::from(seq.wrapping_add(dlen)));
            }
        }
        if flags & 0x10 != 0 {
            self.out.s(", ack ");
            self.out.u(u64::from(ack));
        }
        self.out.s(", win ");
        self.out.u(u64::from(t.win));
        if flags & 0x20 != 0 {
            self.out.s(", urg ");
            self.out.u(u64::from(t.urp));
        }
        if hlen > 20 {
            let ok = self.tcp_options(t, rev, thseq, thack);
            if !ok {
                return;
            }
        }
        self.out.s(", length ");
        self.out.u(u64::from(dlen));
        if dlen == 0 {
            return;
        }
        if flags & 0x04 != 0 && self.o().verbose > 0 {
            return;
        }
        let body = match self.at(i + 1) {
            Some(Layer::Payload { data, .. }) => data,
            Some(Layer::Dns(dns)) => {
                self.out.s(" ");
                return self.dns(dns);
            }
            Some(Layer::Truncated { proto: Proto::Dns, .. }) => {
                self.out.s(" ");
                return self.trunc_soft("domain");
            }
            _ => &[][..],
        };
        let port = |p: u16| t.sport == p || t.dport == p;
        if port(22) {
            if let Some(line) = ssh_banner(body, dlen as usize) {
                self.out.s(": SSH: ");
                self.out.extend_from_slice(line);
            }
        } else if port(80) || port(8080) {
            self.out.s(": ");
            self.http(body, dlen as usize, "HTTP");
        } else if port(554) || port(8554) {
            self.out.s(": ");
            self.http(body, dlen as usize, "RTSP");
        }
    }

    fn fragmented(&self, i: usize) -> bool {
        self.d.layers()[..i].iter().any(|l| match l {
            Layer::Ipv4(ip) => ip.frag & 0x3fff != 0,
            Layer::Ipv6Ext(x) => x.kind == 44,
            _ => false,
        })
    }

    /// Returns false when the options were bad (tcpdump then stops the line).
    fn tcp_options(&mut self, t: decode::Tcp<'a>, rev: bool, thseq: u32, thack: u32) -> bool {
        let mut hlen = usize::from(t.hlen) - 20;
        let cp = t.options;
        let mut at = 0;
        let mut ch = false;
        self.out.s(", options [");
        while hlen > 0 {
            if ch {
                self.out.s(",");
            }
            let Some(opt) = u8_at(cp, at) else {
                self.trunc("tcp");
                return false;
            };
            at += 1;
            let len;
            if opt == 0 || opt == 1 {
                len = 1;
            } else {
                let Some(l) = u8_at(cp, at) else {
                    self.trunc("tcp");
                    return false;
                };
                at += 1;
                len = usize::from(l);
                if len < 2 || len > hlen {
                    return self.bad_opt(ch);
                }
                hlen -= 1;
            }
            hlen -= 1;
            let name = match opt {
                0 => "eol",
                1 => "nop",
                2 => "mss",
                3 => "wscale",
                4 => "sackOK",
                5 => "sack",
                6 => "echo",
                7 => "echoreply",
                8 => "TS",
                11 => "cc",
                12 => "ccnew",
                13 => "ccecho",
                19 => "md5",
                20 => "scps",
                27 => "snack",
                28 => "uto",
                29 => "tcp-ao",
                30 => "mptcp",
                34 => "tfo",
                253 | 254 => "exp",
                _ => "",
            };
            if name.is_empty() {
                self.out.s("unknown-");
                self.out.u(u64::from(opt));
            } else {
                self.out.s(name);
            }
            let mut datalen = 0usize;
            // `Err(true)`: not captured (truncation), `Err(false)`: beyond the option length.
            let check = |need: usize, hlen: usize| -> Result<(), bool> {
                if need > hlen {
                    Err(false)
                } else if at + need > cp.len() {
                    Err(true)
                } else {
                    Ok(())
                }
            };
            let r: Result<(), bool> = (|| {
                match opt {
                    2 => {
                        datalen = 2;
                        check(2, hlen)?;
                        self.out.s(" ");
                        self.out.u(u64::from(be16(cp, at).unwrap_or(0)));
                    }
                    3 => {
                        datalen = 1;
                        check(1, hlen)?;
                        self.out.s(" ");
                        self.out.u(u64::from(cp[at]));
                    }
                    5 => {
                        datalen = len - 2;
                        if !datalen.is_multiple_of(8) {
                            self.out.s(" invalid sack");
                        } else {
                            self.out.s(" ");
                            self.out.u((datalen / 8) as u64);
                            self.out.s(" ");
                            let mut k = 0;
                            while k < datalen {
                                check(k + 4, hlen)?;
                                let s = be32(cp, at + k).unwrap_or(0);
                                check(k + 8, hlen)?;
                                let e = be32(cp, at + k + 4).unwrap_or(0);
                                let base = if rev { thseq } else { thack };
                                self.out.s("{");
                                self.out.u(u64::from(s.wrapping_sub(base)));
                                self.out.s(":");
                                self.out.u(u64::from(e.wrapping_sub(base)));
                                self.out.s("}");
                                k += 8;
                            }
                        }
                    }
                    6 | 7 | 11 | 12 | 13 => {
                        datalen = 4;
                        check(4, hlen)?;
                        self.out.s(" ");
                        self.out.u(u64::from(be32(cp, at).unwrap_or(0)));
                    }
                    8 => {
                        datalen = 8;
                        check(8, hlen)?;
                        self.out.s(" val ");
                        self.out.u(u64::from(be32(cp, at).unwrap_or(0)));
                        self.out.s(" ecr ");
                        self.out.u(u64::from(be32(cp, at + 4).unwrap_or(0)));
                    }
                    28 => {
                        datalen = 2;
                        check(2, hlen)?;
                        let v = be16(cp, at).unwrap_or(0);
                        self.out.s(" 0x");
                        self.out.hex(u64::from(v));
                        let secs =
                            if v & 1 != 0 { u32::from(v >> 1) * 60 } else { u32::from(v >> 1) };
                        self.out.s(" ");
                        self.out.u(u64::from(secs));
                    }
                    0 | 1 => {}
                    19 if len == 18 => {
                        datalen = 16;
                        check(16, hlen)?;
                        self.out.s(" shared secret not supplied with -M, can't check - ");
                        for k in 0..16 {
                            self.out.hex_width(u64::from(cp[at + k]), 2);
                        }
                    }
                    34 => {
                        datalen = len - 2;
                        self.out.s(" ");
                        if datalen == 0 {
                            self.out.s(" cookiereq");
                        } else if !datalen.is_multiple_of(2) || !(4..=16).contains(&datalen) {
                            self.out.s(" (invalid)");
                        } else {
                            check(datalen, hlen)?;
                            self.out.s(" cookie ");
                            for k in 0..datalen {
                                self.out.hex_width(u64::from(cp[at + k]), 2);
                            }
                        }
                    }
                    _ => {
                        datalen = len - 2;
                        if datalen > 0 {
                            self.out.s(" 0x");
                        }
                        for k in 0..datalen {
                            check(k + 1, hlen)?;
                            self.out.hex_width(u64::from(cp[at + k]), 2);
                        }
                    }
                }
                Ok(())
            })();
            match r {
                Ok(()) => {}
                Err(true) => {
                    self.trunc_soft("tcp");
                    if ch {
                        self.out.s(">");
                    }
                    return false;
                }
                Err(false) => return self.bad_opt(true),
            }
            at += datalen;
            hlen -= datalen;
            let mut used = datalen + 1;
            if opt > 1 {
                used += 1;
            }
            if used != len {
                self.out.s("[len ");
                self.out.u(len as u64);
                self.out.s("]");
            }
            ch = true;
            if opt == 0 {
                break;
            }
        }
        self.out.s("]");
        true
    }

    fn bad_opt(&mut self, ch: bool) -> bool {
        self.out.s("[bad opt]");
        if ch {
            self.out.s("]");
        }
        false
    }

    /// `, cksum 0x1234 (correct)` for TCP (`at` = checksum offset 16) with -v.
    fn transport_checksum(&mut self, ip: IpRef<'a>, i: usize, proto: u8, len: u32, at: usize) {
        let Some(seg) = self.segment(i, len) else { return };
        let stored = be16(seg, at).unwrap_or(0);
        let sum = pseudo_checksum(ip, proto, seg);
        self.out.s(", cksum 0x");
        self.out.hex_width(u64::from(stored), 4);
        if sum == 0 {
            self.out.s(" (correct)");
        } else {
            self.out.s(" (incorrect -> 0x");
            self.out.hex_width(u64::from(should_be(stored, sum)), 4);
            self.out.s(")");
        }
    }

    /// The captured bytes of layer `i` when all `len` of them were captured.
    fn segment(&self, i: usize, len: u32) -> Option<&'a [u8]> {
        let start = match self.d.layers()[i] {
            Layer::Tcp(t) => t.options.as_ptr() as usize - 20,
            Layer::Udp(_) => return self.udp_bytes(i, len),
            _ => return None,
        };
        let off = start - self.d.data.as_ptr() as usize;
        self.d.data.get(off..off + len as usize)
    }

    fn udp_bytes(&self, i: usize, len: u32) -> Option<&'a [u8]> {
        // UDP keeps no slice; find it right after the previous layer's header.
        let prev = i.checked_sub(1)?;
        let start = match self.d.layers()[prev] {
            Layer::Ipv4(ip) => self.offset_of(ip.header) + usize::from(ip.hlen),
            Layer::Ipv6(ip) => self.offset_of(ip.src) - 8 + 40,
            Layer::Ipv6Ext(x) => self.offset_of(x.header) + x.hdr_len as usize,
            _ => return None,
        };
        self.d.data.get(start..start + len as usize)
    }

    fn udp(&mut self, i: usize, u: decode::Udp) {
        let Some((ip, direct)) = self.ip_before(i) else { return };
        let ports = Some((u.sport, u.dport));
        let length = u.len;
        if length < 8 {
            self.endpoints(ip, direct, ports);
            self.out.s("truncated-udp ");
            self.out.u(u64::from(length));
            return;
        }
        let mut ulen = u32::from(u.ulen);
        if ulen == 0 && length > 65535 {
            ulen = length;
        }
        if ulen < 8 {
            self.endpoints(ip, direct, ports);
            self.out.s("truncated-udplength ");
            self.out.u(u64::from(ulen));
            return;
        }
        let ulen = ulen - 8;
        let length = (length - 8).min(ulen);
        self.endpoints(ip, direct, ports);
        let fragmented = self.fragmented(i);
        if self.o().verbose > 0 && !fragmented {
            let v6 = matches!(ip, IpRef::V6(_));
            if v6 || self.o().verbose > 1 {
                if !v6 && u.checksum == 0 {
                    self.out.s("[no cksum] ");
                } else if let Some(seg) = self.udp_bytes(i, length + 8) {
                    let sum = pseudo_checksum(ip, 17, seg);
                    if sum == 0 {
                        self.out.s("[udp sum ok] ");
                    } else {
                        self.out.s("[bad udp cksum 0x");
                        self.out.hex_width(u64::from(u.checksum), 4);
                        self.out.s(" -> 0x");
                        self.out.hex_width(u64::from(should_be(u.checksum, sum)), 4);
                        self.out.s("!] ");
                    }
                }
            }
        }
        if !self.o().quiet {
            match self.at(i + 1) {
                Some(Layer::Dns(dns)) => return self.dns(dns),
                Some(Layer::Truncated { proto: Proto::Dns, .. }) => {
                    // tcpdump's domain printer reads the id first.
                    return self.trunc_soft("domain");
                }
                Some(Layer::Vxlan(_) | Layer::Geneve(_))
                | Some(Layer::Truncated { proto: Proto::Vxlan | Proto::Geneve, .. }) => {
                    return self.layer(i + 1);
                }
                Some(Layer::Payload { data, .. }) if (u.sport == 514 || u.dport == 514) => {
                    return self.syslog(data, length);
                }
                _ => {}
            }
        }
        if ulen > length && !fragmented {
            self.out.s("UDP, bad length ");
            self.out.u(u64::from(ulen));
            self.out.s(" > ");
            self.out.u(u64::from(length));
        } else {
            self.out.s("UDP, length ");
            self.out.u(u64::from(ulen));
        }
    }

    fn syslog(&mut self, data: &[u8], len: u32) {
        // The priority is read before anything is printed.
        let invalid = |w: &mut Self| w.out.s(" (invalid)");
        let Some(&first) = data.first() else { return self.trunc("syslog") };
        if first != b'<' {
            return invalid(self);
        }
        let mut pri: u32 = 0;
        let mut k = 1;
        loop {
            let Some(&c) = data.get(k) else { return self.trunc("syslog") };
            if k <= 3 && c.is_ascii_digit() {
                pri = pri * 10 + u32::from(c - b'0');
                k += 1;
            } else {
                break;
            }
        }
        if data.get(k) != Some(&b'>') {
            return invalid(self);
        }
        let fac = (pri >> 3) as usize;
        // tcpdump's "unknown (N)" for facilities past the table; N is at most 124.
        let mut fac_buf = *b"unknown (   )";
        let fac_name: &str = match names::SYSLOG_FACILITY.get(fac) {
            Some(n) => n,
            None => {
                let digits = [
                    b'0' + (fac / 100) as u8,
                    b'0' + (fac / 10 % 10) as u8,
                    b'0' + (fac % 10) as u8,
                ];
                let skip = if fac >= 100 {
                    0
                } else if fac >= 10 {
                    1
                } else {
                    2
                };
                let n = 3 - skip;
                fac_buf[9..9 + n].copy_from_slice(&digits[skip..]);
                fac_buf[9 + n] = b')';
                std::str::from_utf8(&fac_buf[..10 + n]).unwrap_or("unknown")
            }
        };
        self.out.s("SYSLOG");
        if self.o().verbose > 0 {
            self.out.s(", length: ");
            self.out.u(u64::from(len));
            self.out.s("\n\tFacility ");
            self.out.s(fac_name);
            self.out.s(" (");
            self.out.u(fac as u64);
            self.out.s("), Severity ");
            self.out.s(names::SYSLOG_SEVERITY[(pri & 7) as usize]);
            self.out.s(" (");
            self.out.u(u64::from(pri & 7));
            self.out.s(")\n\tMsg: ");
            for k2 in k + 1..len as usize {
                let Some(&c) = data.get(k2) else {
                    self.trunc("syslog");
                    return;
                };
                if (0x20..0x7f).contains(&c) {
                    self.out.push(c);
                } else {
                    self.out.s("\\0x");
                    self.out.hex_width(u64::from(c), 2);
                }
            }
            if self.o().verbose > 1 {
                hex_dump(self.out, &data[..data.len().min(len as usize)], false);
            }
            return;
        }
        self.out.s(" ");
        self.out.s(fac_name);
        self.out.s(".");
        self.out.s(names::SYSLOG_SEVERITY[(pri & 7) as usize]);
        self.out.s(", length: ");
        self.out.u(u64::from(len));
    }

    fn http(&mut self, body: &[u8], len: usize, name: &str) {
        const CMDS: &[&str] = &[
            "OPTIONS",
            "GET",
            "HEAD",
            "POST",
            "PUT",
            "DELETE",
            "TRACE",
            "CONNECT",
            "PROPFIND",
            "PROPPATCH",
            "MKCOL",
            "COPY",
            "MOVE",
            "LOCK",
            "UNLOCK",
            "POLL",
            "BCOPY",
            "BMOVE",
            "SEARCH",
            "BDELETE",
            "BPROPFIND",
            "BPROPPATCH",
            "SUBSCRIBE",
            "UNSUBSCRIBE",
            "NOTIFY",
            "ACL",
            "BIND",
            "CHECKIN",
            "CHECKOUT",
            "LABEL",
            "LINK",
            "MERGE",
            "MKACTIVITY",
            "MKWORKSPACE",
            "REBIND",
            "REPORT",
            "UNBIND",
            "UNCHECKOUT",
            "UNLINK",
            "UPDATE",
            "VERSION-CONTROL",
            "BASELINE-CONTROL",
            "MKREDIRECTREF",
            "UPDATEREDIRECTREF",
            "ORDERPATCH",
            "DESCRIBE",
            "ANNOUNCE",
            "GET_PARAMETER",
            "PAUSE",
            "PLAY",
            "RECORD",
            "REDIRECT",
            "SETUP",
            "SET_PARAMETER",
            "TEARDOWN",
        ];
        let body = &body[..body.len().min(len)];
        let mut print = false;
        let (idx, tok) = fetch_token(body, 0, len);
        if idx != 0 {
            if CMDS.iter().any(|c| c.as_bytes().eq_ignore_ascii_case(tok)) {
                print = true;
            }
            let (idx2, tok2) = fetch_token(body, idx, len);
            if idx2 != 0 && tok2.len() == 3 && tok2.iter().all(u8::is_ascii_digit) {
                print = true;
            }
        }
        self.out.s(name);
        if print {
            if self.o().verbose > 0 {
                self.out.s(", length: ");
                self.out.u(len as u64);
                let mut at = 0;
                while at < len {
                    match print_txt_line(self.out, "\n\t", body, at, len) {
                        Ok(Some(next)) => at = next,
                        Ok(None) => break,
                        Err(()) => {
                            self.trunc(&name.to_ascii_lowercase());
                            break;
                        }
                    }
                }
            } else if print_txt_line(self.out, ": ", body, 0, len).is_err() {
                self.trunc(&name.to_ascii_lowercase());
            }
        }
    }

    fn sctp(&mut self, i: usize, s: decode::Sctp<'a>) {
        // Unlike TCP and UDP, tcpdump's SCTP printer always shows the addresses.
        let Some((ip, _)) = self.ip_before(i) else { return };
        self.endpoints(ip, true, Some((s.sport, s.dport)));
        self.out.s("sctp");
        let mut sep = if self.o().verbose >= 2 { "\n\t" } else { " (" };
        let mut off = 0;
        let chunks = s.chunks;
        let mut remaining = s.len.saturating_sub(12) as usize;
        let mut n = 0;
        while remaining > 0 {
            let Some(ctype) = u8_at(chunks, off) else {
                self.trunc_soft("sctp");
                return;
            };
            let (Some(flags), Some(clen)) = (u8_at(chunks, off + 1), be16(chunks, off + 2)) else {
                self.trunc_soft("sctp");
                return;
            };
            let clen = usize::from(clen);
            if off + clen > chunks.len() {
                self.trunc_soft("sctp");
                return;
            }
            n += 1;
            self.out.s(sep);
            self.out.u(n);
            self.out.s(") ");
            if clen < 4 {
                self.out.s("[Bad chunk length ");
                self.out.u(clen as u64);
                self.out.s(", < size of chunk descriptor]");
                return;
            }
            let align = (4 - clen % 4) % 4;
            if clen > remaining {
                self.out.s("[Bad chunk length ");
                self.out.u(clen as u64);
                self.out.s(", > remaining data in packet]");
                return;
            }
            self.out.s("[");
            match names::sctp_chunk(ctype) {
                Some(name) => self.out.s(name),
                None => {
                    self.out.s("Unknown chunk type: 0x");
                    self.out.hex(u64::from(ctype));
                }
            }
            self.out.s("] ");
            let body = chunks.get(off + 4..off + clen).unwrap_or(&[]);
            let need = |k: usize| body.len() >= k;
            match ctype {
                0 => {
                    if flags & 4 != 0 {
                        self.out.s("(U)");
                    }
                    if flags & 2 != 0 {
                        self.out.s("(B)");
                    }
                    if flags & 1 != 0 {
                        self.out.s("(E)");
                    }
                    if flags & 7 != 0 {
                        self.out.s(" ");
                    }
                    if !need(12) {
                        self.trunc_soft("sctp");
                        return;
                    }
                    self.out.s("[TSN: ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s("] [SID: ");
                    self.out.u(u64::from(be16(body, 4).unwrap_or(0)));
                    self.out.s("] [SSEQ ");
                    self.out.u(u64::from(be16(body, 6).unwrap_or(0)));
                    self.out.s("] [PPID 0x");
                    self.out.hex(u64::from(be32(body, 8).unwrap_or(0)));
                    self.out.s("] ");
                    if self.o().verbose > 1 {
                        self.out.s("[Payload:");
                        hex_dump(self.out, &body[12..], true);
                        self.out.s("]");
                    }
                }
                1 | 2 => {
                    if !need(16) {
                        self.trunc_soft("sctp");
                        return;
                    }
                    self.out.s("[init tag: ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s("] [rwnd: ");
                    self.out.u(u64::from(be32(body, 4).unwrap_or(0)));
                    self.out.s("] [OS: ");
                    self.out.u(u64::from(be16(body, 8).unwrap_or(0)));
                    self.out.s("] [MIS: ");
                    self.out.u(u64::from(be16(body, 10).unwrap_or(0)));
                    self.out.s("] [init TSN: ");
                    self.out.u(u64::from(be32(body, 12).unwrap_or(0)));
                    self.out.s("] ");
                }
                3 => {
                    if !need(12) {
                        self.trunc_soft("sctp");
                        return;
                    }
                    let gaps = be16(body, 8).unwrap_or(0);
                    let dups = be16(body, 10).unwrap_or(0);
                    self.out.s("[cum ack ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s("] [a_rwnd ");
                    self.out.u(u64::from(be32(body, 4).unwrap_or(0)));
                    self.out.s("] [#gap acks ");
                    self.out.u(u64::from(gaps));
                    self.out.s("] [#dup tsns ");
                    self.out.u(u64::from(dups));
                    self.out.s("] ");
                }
                _ => {}
            }
            if self.o().verbose < 2 {
                sep = ", (";
            }
            let step = clen + align;
            if align > 0 && off + step > chunks.len() && remaining > clen {
                self.trunc_soft("sctp");
                return;
            }
            off += step;
            remaining = remaining.saturating_sub(step);
        }
    }

    fn icmp(&mut self, m: decode::Icmp<'a>) {
        // tcpdump formats the whole message before printing it: a truncated one prints only
        // the truncation mark.
        let mark = self.out.len();
        self.icmp_text(m);
        if self.out.ends_with(b" [|icmp]") {
            self.out.truncate(mark);
            self.trunc("icmp");
        }
    }

    fn icmp_text(&mut self, m: decode::Icmp<'a>) {
        self.out.s("ICMP ");
        let rest = m.rest;
        match m.icmp_type {
            0 | 8 => {
                self.out.s(if m.icmp_type == 0 { "echo reply" } else { "echo request" });
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    self.trunc("icmp");
                    return;
                };
                self.out.s(", id ");
                self.out.u(u64::from(id));
                self.out.s(", seq ");
                self.out.u(u64::from(seq));
            }
            3 => {
                // The embedded header names what was unreachable.
                let inner = rest.get(4..).unwrap_or(&[]);
                let dst = inner.get(16..20);
                let ihl = inner.first().map_or(0, |b| usize::from(b & 15) * 4);
                let proto = u8_at(inner, 9).unwrap_or(0);
                let Some(dst) = dst else {
                    self.trunc("icmp");
                    return;
                };
                match m.code {
                    0 => {
                        self.out.s("net ");
                        self.out.ip4(dst);
                        self.out.s(" unreachable");
                    }
                    1 => {
                        self.out.s("host ");
                        self.out.ip4(dst);
                        self.out.s(" unreachable");
                    }
                    2 => {
                        self.out.ip4(dst);
                        self.out.s(" protocol ");
                        self.out.u(u64::from(proto));
                        self.out.s(" unreachable");
                    }
                    3 => {
                        let Some(port) = be16(inner, ihl + 2) else {
                            self.trunc("icmp");
                            return;
                        };
                        self.out.ip4(dst);
                        match proto {
                            6 => self.out.s(" tcp port "),
                            17 => self.out.s(" udp port "),
                            p => {
                                self.out.s(" protocol ");
                                self.out.u(u64::from(p));
                                self.out.s(" port ");
                            }
                        }
                        self.out.u(u64::from(port));
                        self.out.s(" unreachable");
                    }
                    c => {
                        self.out.ip4(dst);
                        self.out.s(" unreachable - code ");
                        self.out.u(u64::from(c));
                    }
                }
            }
            13 => {
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    self.trunc("icmp");
                    return;
                };
                self.out.s("time stamp query id ");
                self.out.u(u64::from(id));
                self.out.s(" seq ");
                self.out.u(u64::from(seq));
            }
            11 => {
                self.out.s(if m.code == 0 {
                    "time exceeded in-transit"
                } else {
                    "ip reassembly time exceeded"
                });
            }
            t => {
                let name = match t {
                    4 => "source quench",
                    5 => "redirect",
                    9 => "router advertisement",
                    10 => "router solicitation",
                    12 => "parameter problem",
                    13 => "time stamp request",
                    14 => "time stamp reply",
                    15 => "information request",
                    16 => "information reply",
                    17 => "address mask request",
                    18 => "address mask reply",
                    _ => "",
                };
                if name.is_empty() {
                    self.out.s("type-#");
                    self.out.u(u64::from(t));
                } else {
                    self.out.s(name);
                }
            }
        }
        self.out.s(", length ");
        self.out.u(u64::from(m.len));
    }

    fn icmp6(&mut self, i: usize, m: decode::Icmp<'a>) {
        let verbose = self.o().verbose > 0;
        if let (true, Some((ip, _)), Some(seg)) =
            (verbose && !self.fragmented(i), self.ip_before(i), self.icmp6_bytes(i, m))
        {
            let sum = pseudo_checksum(ip, 58, seg);
            if sum == 0 {
                self.out.s("[icmp6 sum ok] ");
            } else {
                self.out.s("[bad icmp6 cksum 0x");
                self.out.hex_width(u64::from(m.checksum), 4);
                self.out.s(" -> 0x");
                self.out.hex_width(u64::from(should_be(m.checksum, sum)), 4);
                self.out.s("!] ");
            }
        }
        if verbose && matches!(m.icmp_type, 128 | 129 | 135 | 136) {
            return self.icmp6_verbose(m);
        }
        self.out.s("ICMP6, ");
        let rest = m.rest;
        match names::icmp6_type(m.icmp_type) {
            Some(n) => self.out.s(n),
            None => {
                self.out.s("unknown icmp6 type (");
                self.out.u(u64::from(m.icmp_type));
                self.out.s(")");
            }
        }
        match m.icmp_type {
            128 | 129 => {
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    self.trunc("icmp6");
                    return;
                };
                self.out.s(", id ");
                self.out.u(u64::from(id));
                self.out.s(", seq ");
                self.out.u(u64::from(seq));
            }
            135 | 136 => {
                let Some(target) = rest.get(4..20) else {
                    self.trunc("icmp6");
                    return;
                };
                self.out.s(if m.icmp_type == 135 { ", who has " } else { ", tgt is " });
                self.out.ip6(target);
            }
            1 => {
                // The embedded IPv6 header names what was unreachable.
                let inner = rest.get(4..).unwrap_or(&[]);
                let Some(dst) = inner.get(24..40) else { return self.trunc("icmp6") };
                let what = match m.code {
                    0 => ", unreachable route ",
                    1 => ", unreachable prohibited ",
                    2 => ", beyond scope ",
                    3 => ", unreachable address ",
                    4 => ", unreachable port, ",
                    _ => "",
                };
                if what.is_empty() {
                    self.out.s(", unknown code (");
                    self.out.u(u64::from(m.code));
                    self.out.s(")");
                } else if m.code == 4 {
                    let (Some(&nh), Some(dport)) = (inner.get(6), be16(inner, 42)) else {
                        return self.trunc("icmp6");
                    };
                    self.out.s(what);
                    self.out.ip6(dst);
                    match nh {
                        6 => self.out.s(" tcp port "),
                        17 => self.out.s(" udp port "),
                        _ => {
                            self.out.s(" protocol ");
                            self.out.u(u64::from(nh));
                            self.out.s(" port ");
                        }
                    }
                    self.out.u(u64::from(dport));
                } else {
                    self.out.s(what);
                    self.out.ip6(dst);
                }
            }
            2 => {
                let Some(mtu) = be32(rest, 0) else { return self.trunc("icmp6") };
                self.out.s(", mtu ");
                self.out.u(u64::from(mtu));
            }
            143 => {
                let Some(n) = be16(rest, 2) else {
                    self.trunc("icmp6");
                    return;
                };
                self.out.s(", ");
                self.out.u(u64::from(n));
                self.out.s(" group record(s)");
                if self.o().verbose > 0 {
                    // Each record: type, aux length, source count, group, sources, aux data.
                    let mut at = 4;
                    for _ in 0..n {
                        let (Some(rtype), Some(aux), Some(nsrc), Some(group)) = (
                            u8_at(rest, at),
                            u8_at(rest, at + 1),
                            be16(rest, at + 2),
                            rest.get(at + 4..at + 20),
                        ) else {
                            return self.trunc("icmp6");
                        };
                        self.out.s(" [gaddr ");
                        self.out.ip6(group);
                        self.out.s(match rtype {
                            1 => " is_in",
                            2 => " is_ex",
                            3 => " to_in",
                            4 => " to_ex",
                            5 => " allow",
                            6 => " block",
                            _ => " [invalid]",
                        });
                        if self.o().verbose > 1 {
                            self.out.s(" {");
                            for k in 0..usize::from(nsrc) {
                                let Some(src) = rest.get(at + 20 + 16 * k..at + 36 + 16 * k) else {
                                    return self.trunc("icmp6");
                                };
                                self.out.s(" ");
                                self.out.ip6(src);
                            }
                            self.out.s(" }]");
                        } else {
                            self.out.s(", ");
                            self.out.u(u64::from(nsrc));
                            self.out.s(" source(s)]");
                        }
                        at += 20 + 16 * usize::from(nsrc) + 4 * usize::from(aux);
                    }
                    return;
                }
            }
            _ => {}
        }
        self.out.s(", length ");
        self.out.u(u64::from(m.len));
    }

    /// The whole ICMPv6 message when it was captured.
    fn icmp6_bytes(&self, _i: usize, m: decode::Icmp<'a>) -> Option<&'a [u8]> {
        let start = self.offset_of(m.rest).checked_sub(4)?;
        self.d.data.get(start..start + m.len as usize)
    }

    fn icmp6_verbose(&mut self, m: decode::Icmp<'a>) {
        let rest = m.rest;
        self.out.s("ICMP6, ");
        self.out.s(names::icmp6_type(m.icmp_type).unwrap_or(""));
        match m.icmp_type {
            128 | 129 => {
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    return self.trunc("icmp6");
                };
                self.out.s(", id ");
                self.out.u(u64::from(id));
                self.out.s(", seq ");
                self.out.u(u64::from(seq));
            }
            _ => {
                self.out.s(", length ");
                self.out.u(u64::from(m.len));
                let Some(target) = rest.get(4..20) else { return self.trunc("icmp6") };
                if m.icmp_type == 135 {
                    self.out.s(", who has ");
                    self.out.ip6(target);
                } else {
                    self.out.s(", tgt is ");
                    self.out.ip6(target);
                    let f = rest[0];
                    self.out.s(", Flags [");
                    let start = self.out.len();
                    for (bit, name) in [(0x80u8, "router"), (0x40, "solicited"), (0x20, "override")]
                    {
                        if f & bit != 0 {
                            if self.out.len() > start {
                                self.out.s(", ");
                            }
                            self.out.s(name);
                        }
                    }
                    if self.out.len() == start {
                        self.out.s("none");
                    }
                    self.out.s("]");
                }
                let want = (m.len as usize).saturating_sub(4);
                let end = want.min(rest.len());
                let mut opts = &rest[20.min(end)..end];
                // The option walk stops quietly at the end of the capture, but marks an
                // option cut in the middle.
                let mut missing = false;
                while !opts.is_empty() {
                    if opts.len() < 2 {
                        missing = true;
                        break;
                    }
                    let (t, l) = (opts[0], usize::from(opts[1]));
                    if l == 0 {
                        break;
                    }
                    if opts.len() < l * 8 {
                        missing = true;
                        break;
                    }
                    let body = &opts[2..l * 8];
                    self.out.s("\n\t  ");
                    self.out.s(match t {
                        1 => "source link-address",
                        2 => "destination link-address",
                        3 => "prefix info",
                        5 => "mtu",
                        _ => "unknown",
                    });
                    self.out.s(" option (");
                    self.out.u(u64::from(t));
                    self.out.s("), length ");
                    self.out.u((l * 8) as u64);
                    self.out.s(" (");
                    self.out.u(l as u64);
                    self.out.s("): ");
                    if t == 1 || t == 2 {
                        self.out.mac(&body[..6.min(body.len())]);
                    }
                    if self.o().verbose > 1 {
                        let shown =
                            if t == 1 || t == 2 { &body[..6.min(body.len())] } else { body };
                        hex_dump_with(self.out, "\n\t    ", shown, false);
                    }
                    opts = &opts[l * 8..];
                }
                if missing {
                    self.trunc("icmp6");
                }
            }
        }
    }

    fn gre_flags(&mut self, flags: u16) {
        self.out.s(", Flags [");
        let start = self.out.len();
        for (bit, name) in [
            (0x8000u16, "checksum present"),
            (0x2000, "key present"),
            (0x1000, "sequence# present"),
        ] {
            if flags & bit != 0 {
                if self.out.len() > start {
                    self.out.s(", ");
                }
                self.out.s(name);
            }
        }
        if self.out.len() == start {
            self.out.s("none");
        }
        self.out.s("]");
    }

    fn gre(&mut self, i: usize, g: decode::Gre) {
        let version = g.flags & 7;
        self.out.s("GREv");
        self.out.u(u64::from(version));
        if version > 1 {
            self.out.s(" (invalid)");
            return;
        }
        if self.o().verbose > 0 {
            self.gre_flags(g.flags);
        }
        if self.o().link_header {
            self.out.s(", proto ");
            self.out.s(names::ethertype(g.protocol).unwrap_or("unknown"));
            self.out.s(" (0x");
            self.out.hex_width(u64::from(g.protocol), 4);
            self.out.s(")");
        }
        if let Some(k) = g.key {
            self.out.s(", key=0x");
            self.out.hex(u64::from(k));
        }
        if let Some(s) = g.seq {
            self.out.s(", seq ");
            self.out.u(u64::from(s));
        }
        self.out.s(", length ");
        self.out.u(u64::from(g.len));
        self.out.s(if self.o().verbose > 0 { "\n\t" } else { ": " });
        match g.protocol {
            0x0800 | 0x86dd | 0x6558 | 0x8847 => self.layer(i + 1),
            p => {
                self.out.s("gre-proto-0x");
                self.out.hex(u64::from(p));
            }
        }
    }

    fn geneve(&mut self, i: usize, g: decode::Geneve<'a>) {
        self.out.s("Geneve");
        if g.version != 0 {
            self.out.s(" version ");
            self.out.u(u64::from(g.version));
            return;
        }
        self.out.s(", Flags [");
        match (g.oam, g.critical) {
            (false, false) => self.out.s("none"),
            (true, false) => self.out.s("O"),
            (false, true) => self.out.s("C"),
            (true, true) => self.out.s("O, C"),
        }
        self.out.s("], vni 0x");
        self.out.hex(u64::from(g.vni));
        if self.o().link_header {
            self.out.s(", proto ");
            self.out.s(names::ethertype(g.protocol).unwrap_or("unknown"));
            self.out.s(" (0x");
            self.out.hex_width(u64::from(g.protocol), 4);
            self.out.s(")");
        }
        if g.opt_len > 0 {
            self.out.s(", options [");
            if self.o().verbose > 0 {
                let mut opts = g.options;
                let mut first = true;
                while let (Some(class), Some(t), Some(l)) =
                    (be16(opts, 0), u8_at(opts, 2), u8_at(opts, 3))
                {
                    if !first {
                        self.out.s(", ");
                    }
                    first = false;
                    let len = 4 + usize::from(l & 0x1f) * 4;
                    self.out.s("class ");
                    self.out.s(if class == 0 { "Standard" } else { "Unknown" });
                    self.out.s(" (0x");
                    self.out.hex(u64::from(class));
                    self.out.s(") type 0x");
                    self.out.hex(u64::from(t));
                    if t & 0x80 != 0 {
                        self.out.s("(C)");
                    }
                    self.out.s(" len ");
                    self.out.u(len as u64);
                    if self.o().verbose > 1 && len > 4 {
                        self.out.s(" data");
                        let mut k = 4;
                        while let Some(w) = be32(opts, k).filter(|_| k < len) {
                            self.out.s(" ");
                            self.out.hex_width(u64::from(w), 8);
                            k += 4;
                        }
                    }
                    opts = opts.get(len..).unwrap_or(&[]);
                }
            } else {
                self.out.u(u64::from(g.opt_len));
                self.out.s(" bytes");
            }
            self.out.s("]");
        }
        self.out.s(if self.o().verbose > 0 { "\n\t" } else { ": " });
        match self.at(i + 1) {
            Some(Layer::Truncated { proto: Proto::Geneve, .. }) => self.trunc("geneve"),
            _ => self.layer(i + 1),
        }
    }

    fn dns(&mut self, dns: Dns<'a>) {
        let msg = dns.msg;
        let f = dns.flags;
        let opcode = (f >> 11) & 15;
        let ops = [
            "",
            " inv_q",
            " stat",
            " op3",
            " notify",
            " update",
            " op6",
            " op7",
            " op8",
            " updateA",
            " updateD",
            " updateDA",
            " updateM",
            " updateMA",
            " zoneInit",
            " zoneRef",
        ];
        self.out.u(u64::from(dns.id));
        self.out.s(ops[usize::from(opcode)]);
        let v = self.o().verbose;
        let mut cp = 12usize;
        if f & 0x8000 != 0 {
            let rcode = f & 15;
            let rname = match rcode {
                0 => "",
                1 => " FormErr",
                2 => " ServFail",
                3 => " NXDomain",
                4 => " NotImp",
                5 => " Refused",
                6 => " YXDomain",
                7 => " YXRRSet",
                8 => " NXRRSet",
                9 => " NotAuth",
                10 => " NotZone",
                _ => "",
            };
            if rname.is_empty() && rcode > 10 {
                self.out.s(" Resp");
                self.out.u(u64::from(rcode));
            } else {
                self.out.s(rname);
            }
            if f & 0x0400 != 0 {
                self.out.s("*");
            }
            if f & 0x0080 == 0 {
                self.out.s("-");
            }
            if f & 0x0200 != 0 {
                self.out.s("|");
            }
            if dns.qdcount != 1 {
                self.out.s(" [");
                self.out.u(u64::from(dns.qdcount));
                self.out.s("q]");
            }
            for q in 0..dns.qdcount {
                if v > 1 {
                    if q != 0 {
                        self.out.s(",");
                    }
                    self.out.s(" q:");
                    match self.dns_question(msg, cp) {
                        Some(n) => cp = n,
                        None => return self.trunc_soft("domain"),
                    }
                } else {
                    match decode::dns_name(msg, cp, |_| {}) {
                        Some(n) => cp = n + 4,
                        None => return self.trunc_soft("domain"),
                    }
                }
            }
            self.out.s(" ");
            self.out.u(u64::from(dns.ancount));
            self.out.s("/");
            self.out.u(u64::from(dns.nscount));
            self.out.s("/");
            self.out.u(u64::from(dns.arcount));
            let mut left = dns.ancount;
            if left > 0 {
                match self.dns_record(msg, cp) {
                    Some(n) => cp = n,
                    None => return self.trunc_soft("domain"),
                }
                left -= 1;
                while cp < msg.len() && left > 0 {
                    self.out.s(",");
                    match self.dns_record(msg, cp) {
                        Some(n) => cp = n,
                        None => return self.trunc_soft("domain"),
                    }
                    left -= 1;
                }
            }
            if left > 0 {
                return self.trunc_soft("domain");
            }
        } else {
            if f & 0x0100 != 0 {
                self.out.s("+");
            }
            if f & 0x0010 != 0 {
                self.out.s("%");
            }
            if f & 0x6cf != 0 {
                self.out.s(" [b2&3=0x");
                self.out.hex(u64::from(f));
                self.out.s("]");
            }
            if opcode == 1 {
                if dns.qdcount != 0 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.qdcount));
                    self.out.s("q]");
                }
                if dns.ancount != 1 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.ancount));
                    self.out.s("a]");
                }
            } else {
                if dns.ancount != 0 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.ancount));
                    self.out.s("a]");
                }
                if dns.qdcount != 1 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.qdcount));
                    self.out.s("q]");
                }
            }
            if dns.nscount != 0 {
                self.out.s(" [");
                self.out.u(u64::from(dns.nscount));
                self.out.s("n]");
            }
            if dns.arcount != 0 {
                self.out.s(" [");
                self.out.u(u64::from(dns.arcount));
                self.out.s("au]");
            }
            let mut left = dns.qdcount;
            if left > 0 {
                match self.dns_question(msg, cp) {
                    Some(n) => cp = n,
                    None => return self.trunc_soft("domain"),
                }
                left -= 1;
                while cp < msg.len() && left > 0 {
                    match self.dns_question(msg, cp) {
                        Some(n) => cp = n,
                        None => return self.trunc_soft("domain"),
                    }
                    left -= 1;
                }
            }
            if left > 0 {
                return self.trunc_soft("domain");
            }
        }
        self.out.s(" (");
        self.out.u(u64::from(dns.len));
        self.out.s(")");
    }

    fn dns_name_text(&mut self, msg: &[u8], at: usize) -> Option<usize> {
        let start = self.out.len();
        let out = &mut *self.out;
        let end = decode::dns_name(msg, at, |label| {
            for &b in label {
                if b == b'.' || b == b'\\' {
                    out.push(b'\\');
                    out.push(b);
                } else if (0x21..0x7f).contains(&b) {
                    out.push(b);
                } else {
                    out.push(b'\\');
                    out.dec_width(u64::from(b), 3);
                }
            }
            out.push(b'.');
        });
        if end.is_some() && self.out.len() == start {
            self.out.push(b'.');
        }
        end
    }

    fn dns_question(&mut self, msg: &[u8], at: usize) -> Option<usize> {
        let after = decode::dns_name(msg, at, |_| {})?;
        let qtype = be16(msg, after)?;
        let qclass = be16(msg, after + 2)?;
        self.out.s(" ");
        self.dns_type_text(qtype);
        if qclass != 1 {
            self.dns_class_text(qclass);
        }
        self.out.s("? ");
        self.dns_name_text(msg, at)?;
        Some(after + 4)
    }

    fn dns_type_text(&mut self, t: u16) {
        match names::dns_type(t) {
            Some(n) => self.out.s(n),
            None => {
                self.out.s("Type");
                self.out.u(u64::from(t));
            }
        }
    }

    fn dns_class_text(&mut self, c: u16) {
        self.out.s(" ");
        match c & 0x7fff {
            1 => self.out.s("IN"),
            3 => self.out.s("CHAOS"),
            4 => self.out.s("HS"),
            255 => self.out.s("ANY"),
            other => {
                self.out.s("(Class ");
                self.out.u(u64::from(other));
                self.out.s(")");
            }
        }
    }

    fn dns_record(&mut self, msg: &[u8], at: usize) -> Option<usize> {
        // A record whose name or fixed fields were not captured prints nothing and ends the
        // section quietly (tcpdump returns the end of the capture).
        let after_name = if self.o().verbose > 0 {
            self.out.s(" ");
            self.dns_name_text(msg, at)?
        } else {
            match decode::dns_name(msg, at, |_| {}) {
                Some(n) => n,
                None => return Some(msg.len()),
            }
        };
        if after_name + 10 > msg.len() {
            return Some(msg.len());
        }
        let rtype = be16(msg, after_name)?;
        let class = be16(msg, after_name + 2)?;
        let rdlen = usize::from(be16(msg, after_name + 8)?);
        let rdata = after_name + 10;
        let end = rdata + rdlen;
        if class != 1 && rtype != 41 {
            self.dns_class_text(class);
        }
        self.out.s(" ");
        self.dns_type_text(rtype);
        match rtype {
            1 => {
                let a = msg.get(rdata..rdata + 4)?;
                self.out.s(" ");
                self.out.ip4(a);
            }
            28 => {
                let a = msg.get(rdata..rdata + 16)?;
                self.out.s(" ");
                self.out.ip6(a);
            }
            2 | 5 | 12 | 39 => {
                self.out.s(" ");
                self.dns_name_text(msg, rdata)?;
            }
            16 => {
                let mut at = rdata;
                while at < end {
                    let n = usize::from(*msg.get(at)?);
                    let text = msg.get(at + 1..at + 1 + n)?;
                    self.out.s(" \"");
                    for &c in text {
                        if (0x20..0x7f).contains(&c) {
                            self.out.push(c);
                        } else {
                            self.out.s("\\0x");
                            self.out.hex_width(u64::from(c), 2);
                        }
                    }
                    self.out.s("\"");
                    at += 1 + n;
                }
            }
            15 => {
                self.out.s(" ");
                self.dns_name_text(msg, rdata + 2)?;
                self.out.s(" ");
                self.out.u(u64::from(be16(msg, rdata)?));
            }
            _ => {}
        }
        Some(end)
    }
}

/// An SSH version line (`SSH-…`) at the start of `p`, without its line end.
fn ssh_banner(p: &[u8], len: usize) -> Option<&[u8]> {
    let p = &p[..p.len().min(len)];
    if !p.starts_with(b"SSH-") {
        return None;
    }
    let mut idx = 4;
    while idx < len {
        let c = *p.get(idx)?;
        if c == b'\n' {
            break;
        } else if c == b'\r' {
            if p.get(idx + 1) == Some(&b'\n') {
                break;
            }
            return None;
        } else if !(0x20..0x7f).contains(&c) {
            return None;
        }
        idx += 1;
    }
    Some(&p[..idx])
}

/// One token of a text protocol line, as tcpdump's `fetch_token`: returns the index after the
/// token and its trailing blanks (0 when there is no token) and the token.
fn fetch_token(p: &[u8], mut idx: usize, len: usize) -> (usize, &[u8]) {
    let start = idx;
    while idx < len {
        let Some(&c) = p.get(idx) else { return (0, &[]) };
        if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' {
            break;
        }
        if !(0x20..0x7f).contains(&c) {
            return (0, &[]);
        }
        if idx - start + 2 > 129 {
            return (0, &[]);
        }
        idx += 1;
    }
    if idx == start {
        return (0, &[]);
    }
    let tok = &p[start..idx];
    while idx < len {
        let Some(&c) = p.get(idx) else { break };
        if c == b'\r' || c == b'\n' {
            break;
        }
        if !(0x20..0x7f).contains(&c) {
            break;
        }
        if c != b' ' && c != b'\t' {
            break;
        }
        idx += 1;
    }
    (idx, tok)
}

/// tcpdump's `print_txt_line`: prints one line with `prefix`; `Ok(Some(next))` after a line
/// end, `Ok(None)` when the text stops being a line, `Err` when the text ends before a line
/// end (the line is printed; tcpdump then marks the truncation).
fn print_txt_line(
    out: &mut Vec<u8>,
    prefix: &str,
    p: &[u8],
    mut idx: usize,
    len: usize,
) -> Result<Option<usize>, ()> {
    let start = idx;
    while idx < len {
        let Some(&c) = p.get(idx) else { return Err(()) };
        if c == b'\n' {
            out.s(prefix);
            out.extend_from_slice(&p[start..idx]);
            return Ok(Some(idx + 1));
        } else if c == b'\r' {
            if idx + 1 >= len {
                return Ok(None);
            }
            let Some(&n) = p.get(idx + 1) else { return Err(()) };
            if n == b'\n' {
                out.s(prefix);
                out.extend_from_slice(&p[start..idx]);
                return Ok(Some(idx + 2));
            }
            return Ok(None);
        } else if !(0x20..0x7f).contains(&c) && c != b'\t' {
            return Ok(None);
        }
        idx += 1;
    }
    out.s(prefix);
    out.extend_from_slice(&p[start..idx]);
    Err(())
}

/// The Internet checksum (ones' complement sum, complemented) of `data` added to `acc`.
pub(crate) fn checksum(acc: u32, data: &[u8]) -> u16 {
    let mut sum = u64::from(acc);
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [b] = chunks.remainder() {
        sum += u64::from(*b) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn pseudo_checksum(ip: IpRef<'_>, proto: u8, seg: &[u8]) -> u16 {
    let mut acc: u32 = 0;
    let mut add = |d: &[u8]| {
        for c in d.chunks(2) {
            acc += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
        }
    };
    match ip {
        IpRef::V4(h) => {
            add(h.src);
            add(h.dst);
        }
        IpRef::V6(h) => {
            add(h.src);
            add(h.dst);
        }
    }
    let len = seg.len() as u32;
    acc += (len >> 16) + (len & 0xffff) + u32::from(proto);
    checksum(acc, seg)
}

/// tcpdump's `in_cksum_shouldbe`: the checksum the field should have held.
fn should_be(stored: u16, sum: u16) -> u16 {
    let mut s = u32::from(stored) + u32::from(sum);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s as u16
}
