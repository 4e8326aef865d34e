//! Golden listings of the code generator: expression → `-d` listing (unoptimized), or the
//! rendered error followed by libpcap's wording of it, one file per theme in `tests/data/gen/`.
//! `BLESS=1` rewrites them.

use crate::common::{link, unoptimized};
use sift_compile::pipeline::{self, ByteOrder};
use sift_filter::TableResolver;

fn render(cases: &[(&str, &str)]) -> String {
    let mut resolver = TableResolver::well_known();
    resolver.add_host("dual", "192.0.2.7".parse().unwrap());
    resolver.add_host("dual", "2001:db8::7".parse().unwrap());
    resolver.add_network("lab", 0x0a14_0000);
    resolver.add_ether("gw", [0, 0x11, 0x22, 0x33, 0x44, 0x55]);
    resolver.add_host("gw", "192.0.2.1".parse().unwrap());
    let mut out = String::new();
    for &(name, expr) in cases {
        let opts = unoptimized(link(name), &resolver).netmask(Some(0xffff_ff00));
        out.push_str(&format!("== {name}: {expr}\n"));
        match pipeline::compile(expr, &opts) {
            Ok(c) => out.push_str(&sift_insn::text::listing(c.program.insns())),
            Err(e) => {
                out.push_str(&e.render(expr));
                out.push_str(&format!("libpcap: {}\n", e.libpcap_message()));
            }
        }
        out.push('\n');
    }
    out
}

fn check(name: &str, cases: &[(&str, &str)]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gen").join(name);
    sift_testkit::golden(&path, &render(cases));
}

#[test]
fn protocols() {
    check(
        "protocols.txt",
        &[
            ("EN10MB", ""),
            ("EN10MB", "ip"),
            ("EN10MB", "tcp"),
            ("EN10MB", "icmp6"),
            ("EN10MB", "ip6 proto 47"),
            ("EN10MB", "ether proto \\ip6"),
            ("EN10MB", "not arp"),
            ("RAW", "ip or ip6 or arp"),
            ("IPV4", "udp"),
            ("LINUX_SLL2", "sctp"),
            ("NULL", "ip6"),
            ("PPP", "ip6"),
        ],
    );
}

#[test]
fn addresses() {
    check(
        "addresses.txt",
        &[
            ("EN10MB", "host 10.1.2.3"),
            ("EN10MB", "src net 10.1"),
            ("EN10MB", "ip dst net 172.16.0.0/12"),
            ("EN10MB", "host dual"),
            ("RAW", "host dual"),
            ("EN10MB", "net lab"),
            ("EN10MB", "ip6 src host 2001:db8::1"),
            ("EN10MB", "ether host gw"),
            ("EN10MB", "ether broadcast or ip multicast"),
            ("EN10MB", "ip broadcast"),
            ("EN10MB", "gateway gw"),
            ("FDDI", "ether host 00:11:22:33:44:55"),
        ],
    );
}

#[test]
fn ports_and_arithmetic() {
    check(
        "ports_arith.txt",
        &[
            ("EN10MB", "tcp dst port 80"),
            ("EN10MB", "port domain"),
            ("LINUX_SLL", "udp portrange 1000-2000"),
            ("EN10MB", "less 64 or greater 1500"),
            ("EN10MB", "tcp[tcpflags] & (tcp-syn|tcp-ack) = tcp-syn"),
            ("EN10MB", "ip[0] + ip[1] > 5"),
            ("RAW", "icmp6[0] = 128"),
            ("EN10MB", "vxlan and geneve and pppoes 3 and ip"),
            ("EN10MB", "-len < 5"),
        ],
    );
}

#[test]
fn errors() {
    check(
        "errors.txt",
        &[
            ("EN10MB", "tcp port 70000"),
            ("RAW", "ether host 00:11:22:33:44:55"),
            ("RAW", "broadcast"),
            ("EN10MB", "ip broadcast and len / 0 > 1"),
            ("EN10MB", "len >> ip[40] = 1"),
            ("EN10MB", "vlan 10"),
            ("RAW", "vlan 10"),
            ("EN10MB", "mpls and arp"),
            ("EN10MB", "decnet host gw"),
            ("IEEE802_11", "ip protochain 6"),
            (
                "EN10MB",
                "protochain 1 or protochain 2 or protochain 3 or protochain 4 or protochain 5",
            ),
            ("RAW", "wlan addr1 1:2:3:4:5:6"),
            ("IEEE802_11", "wlan addr2 10.1.2.3"),
            ("EN10MB", "rnr 5"),
            ("PFLOG", "ifname abcdefghijklmnopq"),
            ("EN10MB", "type data"),
            ("EN10MB", "link proto 65536"),
            ("EN10MB", "radio[0] = 1"),
            ("7", "ether host 00:11:22:33:44:55"),
            ("NFLOG", "ip"),
            ("EN10MB", "vpi 1"),
            ("EN10MB", "fisu"),
            ("EN10MB", "link host $12"),
            ("ARCNET", "host $12"),
            ("LINUX_SLL", "ether proto 1000"),
        ],
    );
}

/// Golden cases for the link types beyond Ethernet-like, IP and 802.11 ones (`linktypes.rs`
/// checks each listing against libpcap's): `LINK` alone compiles as for no capture file,
/// `LINK le`/`LINK be` as for a little- or big-endian one.
pub const LINK_TYPE_CASES: &[(&str, &str)] = &[
    ("NULL", "ip6"),
    ("NULL le", "ip6"),
    ("NULL be", "ip6"),
    ("NULL be", "ip"),
    ("LOOP le", "ip6"),
    ("ENC be", "tcp"),
    ("ARCNET", "ip"),
    ("ARCNET", "link host $c0"),
    ("ARCNET_LINUX", "arp or broadcast"),
    ("FRELAY", "iso"),
    ("FRELAY", "isis"),
    ("FRELAY", "tcp port 80"),
    ("MFR", "greater 1000"),
    ("SUNATM", "ip"),
    ("SUNATM", "lane and ether host 1:2:3:4:5:6"),
    ("SUNATM", "vpi != 1 and vci < 32"),
    ("SUNATM", "connectmsg"),
    ("ATM_RFC1483", "atalk"),
    ("ATM_CLIP", "llc"),
    ("IPNET", "ip6 and inbound"),
    ("LTALK", "atalk or ip"),
    ("PPP_BSDOS", "ip"),
    ("SLIP_BSDOS", "ip6"),
    ("SYMANTEC_FIREWALL", "arp"),
    ("BACNET_MS_TP", "udp"),
    ("JUNIPER_ETHER", "ip and outbound"),
    ("JUNIPER_ES", "tcp port 80"),
    ("MTP2", "lssu"),
    ("MTP2_WITH_PHDR", "dpc == 1 or sls (1 or 9)"),
    ("ERF", "opc <= 2"),
    ("NFLOG", "len > 100 and link[0] = 2"),
    ("IPOIB", "less 64"),
    ("IEEE802_15_4", "link[0:2] & 0x7 = 1"),
];

/// A [`LINK_TYPE_CASES`] name: the link type and the capture file's byte order, if any.
pub fn link_and_file(name: &str) -> (pipeline::LinkType, Option<ByteOrder>) {
    let mut words = name.split_whitespace();
    let lt = link(words.next().expect("a link type"));
    let file = match words.next() {
        Some("le") => Some(ByteOrder::Little),
        Some("be") => Some(ByteOrder::Big),
        _ => None,
    };
    (lt, file)
}

#[test]
fn link_types() {
    let resolver = TableResolver::well_known();
    let mut out = String::new();
    for &(name, expr) in LINK_TYPE_CASES {
        let (lt, file) = link_and_file(name);
        let opts = unoptimized(lt, &resolver).savefile(file);
        out.push_str(&format!("== {name}: {expr}\n"));
        match pipeline::compile(expr, &opts) {
            Ok(c) => out.push_str(&sift_insn::text::listing(c.program.insns())),
            Err(e) => out.push_str(&e.render(expr)),
        }
        out.push('\n');
    }
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gen/linktypes.txt");
    sift_testkit::golden(&path, &out);
}
