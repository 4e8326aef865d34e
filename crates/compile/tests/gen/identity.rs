//! The code generator against the system libpcap's unoptimized programs: byte identity for a
//! list of core expressions (and the same return value everywhere when not identical).

use crate::common::unoptimized;
use sift_compile::pipeline::{self, LinkType, Options};
use sift_filter::TableResolver;
use sift_libpcap::Libpcap;

/// `(DLT, expression)`: core expressions over the supported link types.
pub const CORE: &[(i32, &str)] = &[
    (1, "ip"),
    (1, "ip6"),
    (1, "arp"),
    (1, "rarp"),
    (1, "tcp"),
    (1, "udp"),
    (1, "sctp"),
    (1, "icmp"),
    (1, "icmp6"),
    (1, "igmp"),
    (1, "igrp"),
    (1, "pim"),
    (1, "vrrp"),
    (1, "ah"),
    (1, "esp"),
    (1, "ip proto 47"),
    (1, "ip6 proto 47"),
    (1, "proto 47"),
    (1, "ether proto 0x88cc"),
    (1, "ip proto \\tcp"),
    (1, "host 10.1.2.3"),
    (1, "src host 10.1.2.3"),
    (1, "dst host 10.1.2.3"),
    (1, "src and dst host 10.1.2.3"),
    (1, "ip host 10.1.2.3"),
    (1, "arp src host 10.1.2.3"),
    (1, "host 10"),
    (1, "host 10.1"),
    (1, "net 10"),
    (1, "net 10.1"),
    (1, "net 10.0.0.0/8"),
    (1, "net 192.168.0.0 mask 255.255.0.0"),
    (1, "dst net 172.16.0.0/12"),
    (1, "host ::1"),
    (1, "src host fe80::1"),
    (1, "net fe80::/10"),
    (1, "ip6 net 2001:db8::/32"),
    (1, "ether host 00:11:22:33:44:55"),
    (1, "ether src 00:11:22:33:44:55"),
    (1, "ether dst 00:11:22:33:44:55"),
    (1, "ether broadcast"),
    (1, "broadcast"),
    (1, "ether multicast"),
    (1, "multicast"),
    (1, "ip multicast"),
    (1, "ip6 multicast"),
    (1, "port 80"),
    (1, "tcp port 80"),
    (1, "udp src port 53"),
    (1, "sctp dst port 9"),
    (1, "tcp src and dst port 22"),
    (1, "port http"),
    (1, "tcp port http"),
    (1, "udp port domain"),
    (1, "portrange 1-1023"),
    (1, "tcp portrange 6000-6010"),
    (1, "udp dst portrange 100-100"),
    (1, "less 100"),
    (1, "greater 1000"),
    (1, "len > 64"),
    (1, "len - 14 <= 1500"),
    (1, "ip[0] & 0xf != 5"),
    (1, "ip[0]+ip[1] > 5"),
    (1, "ip[6:2] & 0x1fff = 0"),
    (1, "tcp[13] & 2 != 0"),
    (1, "tcp[tcpflags] & (tcp-syn|tcp-ack) = tcp-syn"),
    (1, "udp[0:2] = 53"),
    (1, "icmp[icmptype] = icmp-echo"),
    (1, "icmp6[0] = 128"),
    (1, "ether[0] & 1 = 1"),
    (1, "ether[12:2] = 0x800"),
    (1, "arp[6:2] = 1"),
    (1, "ip6[6] = 17"),
    (1, "tcp[ip[0] & 0xf] = 1"),
    (1, "ip[2:2] - 20 > 40 * 2"),
    (1, "-len < 5"),
    (1, "ip[0] % 3 = 1 or ip[1] ^ 4 = 0"),
    (1, "ip[0] << 2 >> 1 = 10"),
    (1, "ip[0] / 2 = 2"),
    (1, "byte 1 = 2"),
    (1, "byte 1 < 2"),
    (1, "byte 1 > 2"),
    (1, "byte 1 & 2"),
    (1, "not ip"),
    (1, "ip and tcp and dst port 80"),
    (1, "tcp or udp or icmp"),
    (1, "not (tcp port 22 or udp port 53) and ip"),
    (1, "host 10.0.0.1 and not port 22"),
    (1, "ip and (tcp[13] & 2 != 0 or udp) and not host 1.2.3.4"),
    (12, "ip"),
    (12, "ip6"),
    (12, "arp"),
    (12, "tcp port 80"),
    (12, "host 10.1.2.3"),
    (12, "net 10.0.0.0/8"),
    (12, "host ::1"),
    (12, "ip[0] & 0xf > 5"),
    (12, "tcp[13] = 2"),
    (12, "icmp6[0] = 128"),
    (228, "ip"),
    (228, "tcp"),
    (228, "udp port 53"),
    (228, "host 1.2.3.4"),
    (229, "ip6"),
    (229, "tcp"),
    (229, "host ::1"),
    (113, "ip"),
    (113, "ip6"),
    (113, "arp"),
    (113, "tcp port 80"),
    (113, "host 10.1.2.3"),
    (113, "ip6 net 2001:db8::/32"),
    (113, "tcp[13] & 2 != 0"),
    (276, "ip"),
    (276, "udp port 53"),
    (276, "host 10.1.2.3"),
    (0, "ip"),
    (0, "ip6"),
    (0, "tcp port 80"),
    (0, "host 10.1.2.3"),
    (108, "ip"),
    (108, "ip6"),
    (108, "udp"),
    (108, "host 10.1.2.3"),
    (9, "ip"),
    (9, "ip6"),
    (9, "tcp port 80"),
    (9, "host 10.1.2.3"),
    (104, "ip"),
    (104, "tcp port 80"),
    (104, "host ::1"),
    // PPPoE's PPP header follows the 802.2 LLC/SNAP header on FDDI and 802.5.
    (10, "pppoes 5 and ip"),
    (6, "pppoes and tcp"),
    // Tunnels in tunnels, and shims inside a tunnel.
    (1, "geneve and geneve and tcp port 80"),
    (1, "geneve and pppoes 7 and ip6"),
    (1, "geneve and vlan 5 and mpls and ip"),
    (1, "vlan"),
    (1, "vlan 100"),
    (1, "vlan 100 and ip"),
    (1, "vlan and vlan 20 and tcp port 80"),
    (1, "vlan 5 and host 10.0.0.1"),
    (1, "vlan and ether[12:2] = 0x800"),
    (1, "mpls"),
    (1, "mpls 42"),
    (1, "mpls and ip"),
    (1, "mpls 1 and mpls 2 and host 10.0.0.1"),
    (1, "mpls and ip6 and udp port 53"),
    (1, "vlan and mpls and ip"),
    (1, "pppoed"),
    (1, "pppoes"),
    (1, "pppoes 7"),
    (1, "pppoes and ip"),
    (1, "pppoes 7 and tcp port 80"),
    (1, "pppoes and ip6 and host ::1"),
    (9, "mpls 3 and ip"),
    (104, "mpls and ip6"),
    (113, "inbound"),
    (113, "outbound and ip"),
    (276, "inbound"),
    (276, "ifindex 3"),
    (1, "ether proto 0x42"),
    (1, "ether proto \\iso"),
    (1, "ether proto \\netbeui"),
    (1, "ether proto 6"),
    (1, "ether proto \\ipx"),
    (1, "ether proto \\atalk"),
    (1, "ether proto \\aarp"),
    (1, "ether proto 0x8137"),
    (1, "atalk"),
    (1, "aarp"),
    (1, "decnet"),
    (1, "lat"),
    (1, "sca"),
    (1, "moprc"),
    (1, "mopdl"),
    (1, "iso"),
    (1, "stp"),
    (1, "ipx"),
    (1, "netbeui"),
    (1, "lat[0] = 1"),
    (1, "decnet[1:2] > 7"),
    (113, "ether proto 0x42"),
    (113, "iso"),
    (113, "ipx"),
    (113, "atalk"),
    (113, "aarp"),
    (113, "ether proto 0x8137"),
    (276, "stp"),
    (276, "ipx"),
    (276, "netbeui"),
    (9, "iso"),
    (9, "stp"),
    (9, "ipx"),
    (9, "atalk"),
    (9, "ether proto 0x42"),
    (104, "iso"),
    (104, "stp"),
    (12, "ipx"),
    (10, "ip or ip6 or arp"),
    (10, "tcp port 80"),
    (10, "host 10.1.2.3"),
    (10, "ether host 00:11:22:33:44:55"),
    (10, "ether src 00:11:22:33:44:55 and ip6"),
    (10, "broadcast"),
    (10, "multicast"),
    (10, "ip multicast"),
    (10, "iso or stp or ipx or netbeui or atalk or aarp"),
    (10, "decnet or lat"),
    (10, "ether proto 0x42"),
    (10, "tcp[13] & 2 != 0"),
    (10, "ether[1] = 2"),
    (6, "ip or ip6 or arp"),
    (6, "udp port 53"),
    (6, "ether dst 00:11:22:33:44:55"),
    (6, "broadcast or multicast"),
    (6, "iso or stp or ipx or atalk"),
    (6, "host ::1"),
    (8, "ip"),
    (8, "tcp port 80"),
    (8, "host 10.1.2.3"),
    (1, "llc"),
    (1, "llc i"),
    (1, "llc s"),
    (1, "llc u"),
    (1, "llc rr"),
    (1, "llc rnr"),
    (1, "llc ui"),
    (1, "llc xid"),
    (1, "llc frmr or llc test"),
    (10, "llc"),
    (10, "llc sabme"),
    (6, "llc i"),
    (1, "iso proto 0x81"),
    (1, "clnp or esis or isis"),
    (1, "isis proto 17"),
    (10, "clnp"),
    (113, "esis"),
    (9, "isis"),
    (104, "iso proto 1"),
    (1, "fddi broadcast or tr multicast"),
    (10, "ether broadcast and ppp multicast"),
    (1, "l1"),
    (1, "l2"),
    (1, "iih"),
    (1, "lsp"),
    (1, "snp"),
    (1, "csnp"),
    (10, "psnp"),
    (8, "inbound"),
    (8, "outbound and ip"),
    (1, "decnet host 50.764"),
    (1, "decnet src 1.2"),
    (1, "decnet dst host 63.1023"),
    (1, "decnet src and dst 10.10"),
];

/// Unoptimized options for a DLT number (the libpcap oracle's numbering).
fn opts(dlt: i32, resolver: &TableResolver) -> Options<'_> {
    unoptimized(LinkType::from_dlt(dlt).expect("a DLT number"), resolver)
}

#[test]
fn core_expressions_are_byte_identical_to_libpcap() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let resolver = TableResolver::well_known();
    let (mut same, mut differ) = (0, Vec::new());
    for &(dlt, expr) in CORE {
        let ours = pipeline::compile(expr, &opts(dlt, &resolver))
            .unwrap_or_else(|e| panic!("DLT {dlt} `{expr}`: {}", e.render(expr)));
        let theirs = pcap
            .compile(
                LinkType::from_dlt(dlt).expect("a DLT number"),
                262144,
                expr,
                false,
                0xffff_ffff,
            )
            .unwrap_or_else(|e| panic!("libpcap DLT {dlt} `{expr}`: {e}"));
        if ours.program.insns() == theirs.as_slice() {
            same += 1;
        } else {
            differ.push(format!(
                "DLT {dlt} `{expr}`:\n--- sift\n{}--- libpcap\n{}",
                sift_insn::text::listing(ours.program.insns()),
                sift_insn::text::listing(&theirs)
            ));
        }
    }
    println!("byte-identical to libpcap -O: {same} of {}", CORE.len());
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
    assert!(same >= 249, "only {same} identical (pinned: 249)");
}

/// With Linux extensions (a live capture), direction and interface index come from the
/// socket's metadata, as libpcap 1.10 on Linux generates them for `pcap_open_dead` handles.
#[test]
fn linux_extensions_are_byte_identical_to_libpcap() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let resolver = TableResolver::well_known();
    for (dlt, expr) in [
        (1, "inbound"),
        (1, "outbound and tcp"),
        (1, "ifindex 7"),
        (113, "ifindex 2"),
        (12, "inbound"),
    ] {
        let live = opts(dlt, &resolver).linux_ext(true);
        let ours = pipeline::compile(expr, &live).unwrap_or_else(|e| panic!("`{expr}`: {e}"));
        let theirs = pcap
            .compile(
                LinkType::from_dlt(dlt).expect("a DLT number"),
                262144,
                expr,
                false,
                0xffff_ffff,
            )
            .unwrap();
        assert_eq!(
            sift_insn::text::listing(ours.program.insns()),
            sift_insn::text::listing(&theirs),
            "DLT {dlt} `{expr}`"
        );
        // Without them (a savefile), libpcap 1.11's refusal.
        let err = pipeline::compile(expr, &opts(dlt, &resolver)).unwrap_err();
        assert!(
            matches!(
                err.kind,
                sift_compile::CompileErrorKind::NotOnLinkType {
                    what: sift_compile::error::LinkFeature::Direction(_)
                        | sift_compile::error::LinkFeature::Ifindex,
                    ..
                }
            ),
            "{err}"
        );
    }
}
