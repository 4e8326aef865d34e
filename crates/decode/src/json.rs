//! The JSON renderer: one object per packet, one packet per line (JSON Lines).
//!
//! The object carries the capture metadata (time, lengths, link type), a few summary fields
//! for quick filtering in jq, pandas or DuckDB (`src`, `dst`, `sport`, `dport`, `proto` of the
//! outermost IP packet and its transport), and `layers`: every decoded layer, outermost first,
//! each an object with a `proto` name and its header fields. `schema/packet.schema.json`
//! describes it; a test validates generated traffic against it.
//!
//! JSON is written by hand into the caller's buffer (strings escaped per RFC 8259), so the
//! renderer allocates nothing per packet.

use sift_pcap::{LinkType, Timestamp};

use crate::decode::{self, Decoded, Layer, Unknown};
use crate::names;
use crate::out::{Out, be16, be32, u8_at};
use crate::time::civil_from_days;

/// Writes packets as JSON Lines. Stateless apart from the options; cheap to create.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonWriter {
    _private: (),
}

/// An object under construction: tracks whether a comma is due.
struct Obj<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Obj<'o> {
    fn open(out: &'o mut Vec<u8>) -> Obj<'o> {
        out.push(b'{');
        Obj { out, first: true }
    }
    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.s(k);
        self.out.s("\":");
        self.out
    }
    fn num(&mut self, k: &str, v: u64) {
        self.key(k).u(v);
    }
    fn bool(&mut self, k: &str, v: bool) {
        self.key(k).s(if v { "true" } else { "false" });
    }
    fn str(&mut self, k: &str, v: &str) {
        let o = self.key(k);
        string(o, v.as_bytes());
    }
    fn ip4(&mut self, k: &str, a: &[u8]) {
        let o = self.key(k);
        o.push(b'"');
        o.ip4(a);
        o.push(b'"');
    }
    fn ip6(&mut self, k: &str, a: &[u8]) {
        let o = self.key(k);
        o.push(b'"');
        o.ip6(a);
        o.push(b'"');
    }
    fn mac(&mut self, k: &str, a: &[u8]) {
        let o = self.key(k);
        o.push(b'"');
        o.mac(a);
        o.push(b'"');
    }
    fn hex(&mut self, k: &str, a: &[u8]) {
        let o = self.key(k);
        o.push(b'"');
        for b in a {
            o.hex_width(u64::from(*b), 2);
        }
        o.push(b'"');
    }
    fn close(self) {
        self.out.push(b'}');
    }
}

/// A JSON string with RFC 8259 escaping; bytes that are not UTF-8 become U+FFFD.
fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.s("\\\""),
                '\\' => out.s("\\\\"),
                '\n' => out.s("\\n"),
                '\r' => out.s("\\r"),
                '\t' => out.s("\\t"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.s("\\u");
                    out.hex_width(u64::from(c as u32), 4);
                }
                c => {
                    let mut b = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        if !chunk.invalid().is_empty() {
            out.s("\u{fffd}");
        }
    }
    out.push(b'"');
}

/// Name of a link type for the `link_type_name` field.
fn link_name(t: LinkType) -> &'static str {
    t.name().unwrap_or("unknown")
}

impl JsonWriter {
    /// A writer.
    pub fn new() -> JsonWriter {
        JsonWriter::default()
    }

    /// Appends one JSON object and `\n` for the packet.
    pub fn write(
        &mut self,
        out: &mut Vec<u8>,
        link_type: LinkType,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
    ) {
        let d = decode::decode(link_type, data, wire_len);
        self.write_decoded(out, ts, wire_len, &d);
    }

    /// Appends one JSON object and `\n` for an already decoded packet.
    pub fn write_decoded(
        &mut self,
        out: &mut Vec<u8>,
        ts: Timestamp,
        wire_len: u32,
        d: &Decoded<'_>,
    ) {
        // The point in time, also for a record whose fraction field is a second or more (kept
        // as recorded for copies and tcpdump-style printing).
        let ts = ts.instant();
        let mut o = Obj::open(out);
        {
            let k = o.key("time");
            k.push(b'"');
            let (y, m, day) = civil_from_days((ts.secs / 86_400) as i64);
            k.dec_width(y.max(0) as u64, 4);
            k.push(b'-');
            k.dec_width(u64::from(m), 2);
            k.push(b'-');
            k.dec_width(u64::from(day), 2);
            k.push(b'T');
            let s = ts.secs % 86_400;
            k.dec_width(s / 3600, 2);
            k.push(b':');
            k.dec_width(s / 60 % 60, 2);
            k.push(b':');
            k.dec_width(s % 60, 2);
            k.push(b'.');
            k.dec_width(u64::from(ts.nanos), 9);
            k.s("Z\"");
        }
        o.num("ts_sec", ts.secs);
        o.num("ts_nsec", u64::from(ts.nanos));
        o.num("caplen", d.data.len() as u64);
        o.num("len", u64::from(wire_len));
        o.num("link_type", u64::from(d.link_type.number()));
        o.str("link_type_name", link_name(d.link_type));
        let layers = d.layers();
        // Summary of the outermost IP packet and its transport.
        if let Some(pos) = layers.iter().position(|l| matches!(l, Layer::Ipv4(_) | Layer::Ipv6(_)))
        {
            match layers[pos] {
                Layer::Ipv4(ip) => {
                    o.ip4("src", &ip.src);
                    o.ip4("dst", &ip.dst);
                }
                Layer::Ipv6(ip) => {
                    o.ip6("src", &ip.src);
                    o.ip6("dst", &ip.dst);
                }
                _ => {}
            }
            let transport = layers[pos + 1..].iter().find(|l| !matches!(l, Layer::Ipv6Ext(_)));
            match transport {
                Some(Layer::Tcp(t)) => {
                    o.str("proto", "tcp");
                    o.num("sport", u64::from(t.sport));
                    o.num("dport", u64::from(t.dport));
                }
                Some(Layer::Udp(u)) => {
                    o.str("proto", "udp");
                    o.num("sport", u64::from(u.sport));
                    o.num("dport", u64::from(u.dport));
                }
                Some(Layer::Sctp(s)) => {
                    o.str("proto", "sctp");
                    o.num("sport", u64::from(s.sport));
                    o.num("dport", u64::from(s.dport));
                }
                Some(Layer::Icmp(_)) => o.str("proto", "icmp"),
                Some(Layer::Icmpv6(_)) => o.str("proto", "icmp6"),
                Some(Layer::Gre(_)) => o.str("proto", "gre"),
                _ => {}
            }
        }
        let truncated = layers.iter().any(|l| matches!(l, Layer::Truncated { .. }))
            || (d.data.len() as u64) < u64::from(wire_len);
        o.bool("truncated", truncated);
        o.bool("malformed", layers.iter().any(|l| matches!(l, Layer::Malformed { .. })));
        let out = o.key("layers");
        out.push(b'[');
        for (i, l) in layers.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            layer(out, d, l);
        }
        out.push(b']');
        out.push(b'}');
        out.push(b'\n');
    }
}

fn offset_in(d: &Decoded<'_>, part: &[u8]) -> u64 {
    (part.as_ptr() as usize).saturating_sub(d.data.as_ptr() as usize) as u64
}

fn layer(out: &mut Vec<u8>, d: &Decoded<'_>, l: &Layer<'_>) {
    let mut o = Obj::open(out);
    match *l {
        Layer::Ether(e) => {
            o.str("proto", "ether");
            o.mac("src", &e.src);
            o.mac("dst", &e.dst);
            if e.ethertype >= 0x600 {
                o.num("ethertype", u64::from(e.ethertype));
            } else {
                o.num("length_field", u64::from(e.ethertype));
            }
        }
        Layer::Sll(s) => {
            o.str("proto", if s.version == 2 { "sll2" } else { "sll" });
            o.num("pkttype", u64::from(s.pkttype));
            o.num("hatype", u64::from(s.hatype));
            o.hex("addr", s.addr);
            o.num("ethertype", u64::from(s.protocol));
            if s.version == 2 {
                o.num("ifindex", u64::from(s.ifindex));
            }
        }
        Layer::Loopback(l) => {
            o.str("proto", "loopback");
            o.num("family", u64::from(l.family));
        }
        Layer::Vlan(v) => {
            o.str("proto", "vlan");
            o.num("tpid", u64::from(v.tpid));
            o.num("pcp", u64::from(v.pcp));
            o.bool("dei", v.dei);
            o.num("vid", u64::from(v.vid));
            o.num("ethertype", u64::from(v.ethertype));
        }
        Layer::Mpls(m) => {
            o.str("proto", "mpls");
            o.num("label", u64::from(m.label));
            o.num("tc", u64::from(m.tc));
            o.bool("bottom", m.bottom);
            o.num("ttl", u64::from(m.ttl));
        }
        Layer::Pppoe(p) => {
            o.str("proto", "pppoe");
            o.num("code", u64::from(p.code));
            o.num("session", u64::from(p.session));
            o.num("length", u64::from(p.payload_len));
            if p.code == 0 {
                o.num("ppp_protocol", u64::from(p.ppp_protocol));
            }
        }
        Layer::Arp(a) => {
            o.str("proto", "arp");
            o.num("htype", u64::from(a.htype));
            o.num("ptype", u64::from(a.ptype));
            o.num("op", u64::from(a.op));
            if a.complete && a.hlen == 6 && a.plen == 4 {
                o.mac("sha", a.sha);
                o.ip4("spa", a.spa);
                o.mac("tha", a.tha);
                o.ip4("tpa", a.tpa);
            } else {
                o.hex("sha", a.sha);
                o.hex("spa", a.spa);
                o.hex("tha", a.tha);
                o.hex("tpa", a.tpa);
            }
        }
        Layer::Ipv4(ip) => {
            o.str("proto", "ipv4");
            o.num("hlen", u64::from(ip.hlen));
            o.num("tos", u64::from(ip.tos));
            o.num("total_len", u64::from(ip.total_len));
            o.num("id", u64::from(ip.id));
            o.bool("df", ip.dont_fragment());
            o.bool("mf", ip.more_fragments());
            o.num("frag_offset", u64::from(ip.frag_offset()));
            o.num("ttl", u64::from(ip.ttl));
            o.num("protocol", u64::from(ip.protocol));
            o.num("checksum", u64::from(ip.checksum));
            o.ip4("src", &ip.src);
            o.ip4("dst", &ip.dst);
            if !ip.options.is_empty() {
                o.hex("options", ip.options);
            }
        }
        Layer::Ipv6(ip) => {
            o.str("proto", "ipv6");
            o.num("class", u64::from(ip.class));
            o.num("flow", u64::from(ip.flow));
            o.num("payload_len", u64::from(ip.payload_len));
            o.num("next", u64::from(ip.next));
            o.num("hlim", u64::from(ip.hlim));
            o.ip6("src", &ip.src);
            o.ip6("dst", &ip.dst);
        }
        Layer::Ipv6Ext(x) => {
            o.str(
                "proto",
                match x.kind {
                    0 => "ipv6_hopopts",
                    43 => "ipv6_routing",
                    44 => "ipv6_fragment",
                    _ => "ipv6_dstopts",
                },
            );
            o.num("next", u64::from(x.next));
            o.num("hdr_len", u64::from(x.hdr_len));
            if x.kind == 44 {
                let offlg = be16(x.header, 2).unwrap_or(0);
                o.num("frag_offset", u64::from(offlg & 0xfff8));
                o.bool("mf", offlg & 1 != 0);
                o.num("id", u64::from(be32(x.header, 4).unwrap_or(0)));
            } else if x.kind == 43 {
                o.num("routing_type", u64::from(u8_at(x.header, 2).unwrap_or(0)));
                o.num("segments_left", u64::from(u8_at(x.header, 3).unwrap_or(0)));
            }
        }
        Layer::Tcp(t) => {
            o.str("proto", "tcp");
            o.num("sport", u64::from(t.sport));
            o.num("dport", u64::from(t.dport));
            o.num("seq", u64::from(t.seq));
            o.num("ack", u64::from(t.ack));
            o.num("hlen", u64::from(t.hlen));
            o.num("flags", u64::from(t.flags));
            {
                let k = o.key("flags_text");
                k.push(b'"');
                names::tcp_flag_letters(k, t.flags, true);
                k.push(b'"');
            }
            o.num("win", u64::from(t.win));
            o.num("checksum", u64::from(t.checksum));
            o.num("urp", u64::from(t.urp));
            o.num("payload_len", u64::from(t.len.saturating_sub(u32::from(t.hlen))));
            tcp_options(&mut o, t.options);
        }
        Layer::Udp(u) => {
            o.str("proto", "udp");
            o.num("sport", u64::from(u.sport));
            o.num("dport", u64::from(u.dport));
            o.num("ulen", u64::from(u.ulen));
            o.num("checksum", u64::from(u.checksum));
        }
        Layer::Sctp(s) => {
            o.str("proto", "sctp");
            o.num("sport", u64::from(s.sport));
            o.num("dport", u64::from(s.dport));
            o.num("vtag", u64::from(s.vtag));
            o.num("checksum", u64::from(s.checksum));
            let k = o.key("chunks");
            k.push(b'[');
            let mut off = 0;
            let mut n = 0;
            while let (Some(t), Some(f), Some(len)) =
                (u8_at(s.chunks, off), u8_at(s.chunks, off + 1), be16(s.chunks, off + 2))
            {
                if n > 0 {
                    k.push(b',');
                }
                let mut c = Obj::open(k);
                c.num("type", u64::from(t));
                c.str("name", names::sctp_chunk(t).unwrap_or("unknown"));
                c.num("flags", u64::from(f));
                c.num("len", u64::from(len));
                c.close();
                n += 1;
                if len < 4 || n >= 64 {
                    break;
                }
                off += (usize::from(len) + 3) & !3;
            }
            k.push(b']');
        }
        Layer::Icmp(m) | Layer::Icmpv6(m) => {
            let v6 = matches!(l, Layer::Icmpv6(_));
            o.str("proto", if v6 { "icmp6" } else { "icmp" });
            o.num("type", u64::from(m.icmp_type));
            o.num("code", u64::from(m.code));
            o.num("checksum", u64::from(m.checksum));
            let echo =
                if v6 { matches!(m.icmp_type, 128 | 129) } else { matches!(m.icmp_type, 0 | 8) };
            if let (true, Some(id), Some(seq)) = (echo, be16(m.rest, 0), be16(m.rest, 2)) {
                o.num("id", u64::from(id));
                o.num("seq", u64::from(seq));
            }
            if let (true, Some(t)) = (v6 && matches!(m.icmp_type, 135 | 136), m.rest.get(4..20)) {
                o.ip6("target", t);
            }
        }
        Layer::Gre(g) => {
            o.str("proto", "gre");
            o.num("flags", u64::from(g.flags));
            o.num("version", u64::from(g.flags & 7));
            o.num("protocol", u64::from(g.protocol));
            if let Some(k) = g.key {
                o.num("key", u64::from(k));
            }
            if let Some(s) = g.seq {
                o.num("seq", u64::from(s));
            }
        }
        Layer::Vxlan(v) => {
            o.str("proto", "vxlan");
            o.num("flags", u64::from(v.flags));
            o.num("vni", u64::from(v.vni));
        }
        Layer::Geneve(g) => {
            o.str("proto", "geneve");
            o.num("version", u64::from(g.version));
            o.num("opt_len", u64::from(g.opt_len));
            o.bool("oam", g.oam);
            o.bool("critical", g.critical);
            o.num("protocol", u64::from(g.protocol));
            o.num("vni", u64::from(g.vni));
        }
        Layer::Dns(dns) => dns_fields(&mut o, dns),
        Layer::Payload { data, len } => {
            o.str("proto", "payload");
            o.num("offset", offset_in(d, data));
            o.num("captured", data.len() as u64);
            o.num("len", u64::from(len));
        }
        Layer::Truncated { proto, data, len } => {
            o.str("proto", "truncated");
            o.str("layer", proto.name());
            o.num("offset", offset_in(d, data));
            o.num("captured", data.len() as u64);
            o.num("len", u64::from(len));
        }
        Layer::Malformed { proto, why, data, .. } => {
            o.str("proto", "malformed");
            o.str("layer", proto.name());
            o.str("reason", why);
            o.num("offset", offset_in(d, data));
        }
        Layer::Unknown { what, data, len } => {
            o.str("proto", "unknown");
            let (kind, value) = match what {
                Unknown::EtherType(t) => ("ethertype", u64::from(t)),
                Unknown::IpProto(p) => ("ip_proto", u64::from(p)),
                Unknown::Fragment(p) => ("ip_fragment", u64::from(p)),
                Unknown::Family(f) => ("family", u64::from(f)),
                Unknown::Ppp(p) => ("ppp_protocol", u64::from(p)),
                Unknown::LinkType(t) => ("link_type", u64::from(t.number())),
            };
            o.str("kind", kind);
            o.num("value", value);
            o.num("offset", offset_in(d, data));
            o.num("captured", data.len() as u64);
            o.num("len", u64::from(len));
        }
    }
    o.close();
}

fn tcp_options(o: &mut Obj<'_>, opts: &[u8]) {
    let k = o.key("options");
    k.push(b'[');
    let mut off = 0;
    let mut n = 0;
    while let Some(&kind) = opts.get(off) {
        if n > 0 {
            k.push(b',');
        }
        n += 1;
        let mut e = Obj::open(k);
        e.num("kind", u64::from(kind));
        if kind == 0 || kind == 1 {
            e.str("name", if kind == 0 { "eol" } else { "nop" });
            e.close();
            off += 1;
            if kind == 0 {
                break;
            }
            continue;
        }
        let len = opts.get(off + 1).copied().unwrap_or(0);
        let body_end = (off + usize::from(len)).min(opts.len());
        let body = opts.get(off + 2..body_end).unwrap_or(&[]);
        match (kind, body.len()) {
            (2, 2) => {
                e.str("name", "mss");
                e.num("value", u64::from(be16(body, 0).unwrap_or(0)));
            }
            (3, 1) => {
                e.str("name", "wscale");
                e.num("value", u64::from(body[0]));
            }
            (4, 0) => e.str("name", "sackOK"),
            (8, 8) => {
                e.str("name", "ts");
                e.num("val", u64::from(be32(body, 0).unwrap_or(0)));
                e.num("ecr", u64::from(be32(body, 4).unwrap_or(0)));
            }
            _ => {
                e.hex("data", body);
            }
        }
        e.close();
        if len < 2 {
            break;
        }
        off += usize::from(len);
    }
    k.push(b']');
}

fn dns_name_string(out: &mut Vec<u8>, msg: &[u8], at: usize) -> Option<usize> {
    out.push(b'"');
    let mut any = false;
    let end = decode::dns_name(msg, at, |label| {
        any = true;
        for &b in label {
            match b {
                b'"' => out.s("\\\""),
                b'\\' => out.s("\\\\\\\\"),
                b'.' => out.s("\\\\."),
                0x21..=0x7e => out.push(b),
                _ => {
                    out.s("\\\\");
                    out.dec_width(u64::from(b), 3);
                }
            }
        }
        out.push(b'.');
    });
    if !any {
        out.push(b'.');
    }
    out.push(b'"');
    end
}

fn dns_fields(o: &mut Obj<'_>, dns: decode::Dns<'_>) {
    o.str("proto", "dns");
    o.num("id", u64::from(dns.id));
    o.bool("qr", dns.flags & 0x8000 != 0);
    o.num("opcode", u64::from((dns.flags >> 11) & 15));
    o.num("rcode", u64::from(dns.flags & 15));
    o.num("flags", u64::from(dns.flags));
    o.num("qdcount", u64::from(dns.qdcount));
    o.num("ancount", u64::from(dns.ancount));
    o.num("nscount", u64::from(dns.nscount));
    o.num("arcount", u64::from(dns.arcount));
    let msg = dns.msg;
    let mut cp = 12;
    let mut complete = true;
    {
        let k = o.key("questions");
        k.push(b'[');
        for q in 0..dns.qdcount.min(32) {
            let Some(after) = decode::dns_name(msg, cp, |_| {}) else {
                complete = false;
                break;
            };
            let (Some(t), Some(c)) = (be16(msg, after), be16(msg, after + 2)) else {
                complete = false;
                break;
            };
            if q > 0 {
                k.push(b',');
            }
            k.s("{\"name\":");
            dns_name_string(k, msg, cp);
            k.s(",\"type\":");
            k.u(u64::from(t));
            k.s(",\"class\":");
            k.u(u64::from(c));
            k.push(b'}');
            cp = after + 4;
        }
        k.push(b']');
    }
    {
        let k = o.key("answers");
        k.push(b'[');
        let mut n = 0;
        if complete {
            for _ in 0..dns.ancount.min(64) {
                let Some(after) = decode::dns_name(msg, cp, |_| {}) else { break };
                let (Some(t), Some(c), Some(ttl), Some(rdlen)) = (
                    be16(msg, after),
                    be16(msg, after + 2),
                    be32(msg, after + 4),
                    be16(msg, after + 8),
                ) else {
                    break;
                };
                let rd = after + 10;
                let Some(rdata) = msg.get(rd..rd + usize::from(rdlen)) else { break };
                if n > 0 {
                    k.push(b',');
                }
                n += 1;
                k.s("{\"name\":");
                dns_name_string(k, msg, cp);
                k.s(",\"type\":");
                k.u(u64::from(t));
                k.s(",\"class\":");
                k.u(u64::from(c));
                k.s(",\"ttl\":");
                k.u(u64::from(ttl));
                k.s(",\"data\":");
                match (t, rdata.len()) {
                    (1, 4) => {
                        k.push(b'"');
                        k.ip4(rdata);
                        k.push(b'"');
                    }
                    (28, 16) => {
                        k.push(b'"');
                        k.ip6(rdata);
                        k.push(b'"');
                    }
                    (2 | 5 | 12 | 39, _) => {
                        dns_name_string(k, msg, rd);
                    }
                    _ => {
                        k.push(b'"');
                        for b in rdata {
                            k.hex_width(u64::from(*b), 2);
                        }
                        k.push(b'"');
                    }
                }
                k.push(b'}');
                cp = rd + usize::from(rdlen);
            }
        }
        k.push(b']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        let mut v = Vec::new();
        string(&mut v, b"a\"b\\c\n\x01\xffz");
        assert_eq!(String::from_utf8(v).unwrap(), "\"a\\\"b\\\\c\\n\\u0001\u{fffd}z\"");
    }
}
