//! Golden listings of the code generator: expression → `-d` listing (unoptimized), or the
//! rendered error followed by libpcap's wording of it, one file per theme in `tests/data/gen/`.
//! `BLESS=1` rewrites them.

use crate::common::{link, unoptimized};
use sift_compile::pipeline;
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
            ("7", "ip"),
            ("LINUX_SLL", "ether proto 1000"),
        ],
    );
}
