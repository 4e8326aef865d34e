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
//!
//! This module holds the printer, the options and the dispatcher over layers (with tcpdump's
//! truncation and malformation marks); the protocols are printed by the submodules `link`,
//! `ip`, `tcp`, `udp`, `sctp`, `icmp`, `tunnel` and `dns` (and `transport`, what the
//! transports share), which add methods to the same walker.

use std::collections::HashMap;

use sift_pcap::{LinkType, Timestamp};
use sift_wire::{checksum, ipproto, pppoe};

use crate::decode::{self, Decoded, Dns, Ipv4, Ipv6, Layer, PacketType, Proto, Unknown};
use crate::names;
use crate::out::{Out, be16, be32, u8_at};
use crate::time::{self, TimeFormat, UtcOffset};

mod dns;
mod icmp;
mod ip;
mod link;
mod sctp;
mod tcp;
mod transport;
mod tunnel;
mod udp;

/// The packet's bytes after its line (`-x`, `-xx`, `-X`, `-XX`, `-A`, `-AA`; as in tcpdump,
/// `-X` wins over `-x`, which wins over `-A`).
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
    /// `-A`: the packet after the link-layer header as text.
    Ascii,
    /// `-AA`: the whole packet as text.
    AsciiLink,
}

/// Printing options, named after tcpdump's flags. Names are always numeric (`-n`). (Not
/// comparable: [`Options::zone`] is a function.)
#[derive(Clone, Copy, Debug, Default)]
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
    /// `-#`: each line starts with the packet's number.
    pub number: bool,
    /// `-K`: do not verify IP, TCP and UDP checksums (and print nothing about them).
    pub skip_checksums: bool,
    /// `-T TYPE`: transport payloads read as this protocol rather than by port.
    pub packet_type: Option<PacketType>,
    /// The local time zone's offset for the default and `-tttt` formats; `None`: UTC.
    pub zone: Option<UtcOffset>,
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
    /// Packets printed so far (`-#`).
    printed: u64,
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
            IpRef::V4(ip) => out.ip4(if src { &ip.src } else { &ip.dst }),
            IpRef::V6(ip) => out.ip6(if src { &ip.src } else { &ip.dst }),
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
        link_type: LinkType,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
    ) {
        let d = decode::decode_with(link_type, data, wire_len, self.opts.packet_type);
        self.print_decoded(out, ts, &d);
    }

    /// Appends the line(s) for an already decoded packet.
    pub fn print_decoded(&mut self, out: &mut Vec<u8>, ts: Timestamp, d: &Decoded<'_>) {
        if self.first.is_none() {
            self.first = Some(ts);
        }
        self.printed += 1;
        if self.opts.number {
            // tcpdump's "%5u  ".
            let n = self.printed.to_string();
            for _ in n.len()..5 {
                out.push(b' ');
            }
            out.s(&n);
            out.s("  ");
        }
        if self.opts.time != TimeFormat::None {
            let (prev, first, nano, zone) = (self.prev, self.first, self.opts.nano, self.opts.zone);
            time::write(out, self.opts.time, ts, prev, first, nano, zone);
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
            && matches!(d.link_type, LinkType::RAW | LinkType::IPV4 | LinkType::IPV6)
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
                HexDump::Hex | HexDump::HexAscii | HexDump::Ascii if !truncated => {
                    d.link_header_len.min(d.data.len())
                }
                _ => 0,
            };
            match hex {
                // tcpdump prints nothing for -A when nothing follows the link-layer header.
                HexDump::Ascii if from == d.data.len() => {}
                HexDump::Ascii | HexDump::AsciiLink => ascii_dump(out, &d.data[from..]),
                _ => hex_dump(out, &d.data[from..], hex != HexDump::Hex && hex != HexDump::HexLink),
            }
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

/// tcpdump's `ascii_print` (`-A`): a newline, then the bytes as text, with `.` for what is not
/// printable (tabs, spaces and newlines are kept) and carriage returns dropped before a
/// newline or at the end.
pub(crate) fn ascii_dump(out: &mut Vec<u8>, data: &[u8]) {
    out.push(b'\n');
    for (i, &b) in data.iter().enumerate() {
        if b == b'\r' {
            // tcpdump looks at what follows only while at least two bytes remain.
            if data.len() - i > 2 && data[i + 1] != b'\n' {
                out.push(b'.');
            }
        } else if b.is_ascii_graphic() || matches!(b, b'\t' | b' ' | b'\n') {
            out.push(b);
        } else {
            out.push(b'.');
        }
    }
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
                self.out.s(if v.flags & 0x08 != 0 { "I" } else { "invalid" });
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
                            self.out.mac(&e.src);
                            self.out.s(" > ");
                            self.out.mac(&e.dst);
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
            Unknown::IpProto(ipproto::NONE)
                if matches!(self.ip_before(i), Some((IpRef::V6(_), _))) =>
            {
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
            Unknown::Ppp(pppoe::PPP_LCP) => {
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
                self.out.u(u64::from(t.number()));
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
}

/// The Internet checksum over the transport segment `seg` with the pseudo-header of `ip`: 0
/// when the stored checksum is right.
fn pseudo_checksum(ip: IpRef<'_>, proto: u8, seg: &[u8]) -> u16 {
    let (src, dst): (&[u8], &[u8]) = match &ip {
        IpRef::V4(h) => (&h.src, &h.dst),
        IpRef::V6(h) => (&h.src, &h.dst),
    };
    let pseudo = checksum::pseudo(src, dst, proto, seg.len() as u32);
    checksum::finish(checksum::add(pseudo, seg))
}
