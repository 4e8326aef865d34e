//! `sift pf -w` writes packets as pf sends them on: a capture on the outer interface of a
//! NAT (connections out from inner hosts, the servers' answers in) comes out translated, the
//! answers translated back, and tshark, an implementation apart from sift's, finds every IP,
//! TCP, UDP and ICMP checksum good.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use crate::packets::{TcpSpec, flags, tcp, udp};
use sift_pcap::Direction;

const INNER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 5);
const OUTER: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 7);

/// A TCP handshake and a UDP exchange from the inner host, as they pass em0: the inner
/// host's packets before translation (pf translates them going out), the server's answers to
/// the outer address with the port kept (`static-port`).
fn capture(path: &Path) {
    use Direction::{Inbound, Outbound};
    let syn = TcpSpec {
        src: (INNER, 40000),
        dst: (SERVER, 80),
        seq: 1000,
        ack: 0,
        flags: flags::SYN,
        win: 64240,
    };
    let synack = TcpSpec {
        src: (SERVER, 80),
        dst: (OUTER, 40000),
        seq: 5000,
        ack: 1001,
        flags: flags::SYN | flags::ACK,
        win: 65160,
    };
    let ack = TcpSpec { seq: 1001, ack: 5001, flags: flags::ACK, ..syn };
    let packets = [
        (Outbound, tcp(&syn, 1, b"")),
        (Inbound, tcp(&synack, 2, b"")),
        (Outbound, tcp(&ack, 3, b"hello")),
        (Outbound, udp((INNER, 5353), (SERVER, 53), 4, b"query")),
        (Inbound, udp((SERVER, 53), (OUTER, 5353), 5, b"answer")),
        (Inbound, tcp(&TcpSpec { dst: (OUTER, 23), ..synack }, 6, b"")),
    ];
    crate::pf_direction::write_em0(path, &packets, true);
}

#[test]
fn pf_writes_translated_packets_with_good_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let (cap, rules, out) =
        (dir.path().join("in.pcapng"), dir.path().join("pf.conf"), dir.path().join("out.pcap"));
    capture(&cap);
    std::fs::write(
        &rules,
        "match out on em0 from 10.0.0.0/8 nat-to 192.0.2.1 static-port\n\
         block return in quick on em0 proto tcp to port 23\npass\n",
    )
    .unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(["pf", "-f", rules.to_str().unwrap(), "-r", cap.to_str().unwrap()])
        .args(["-w", out.to_str().unwrap(), "--verdicts", "--host", "openbsd"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let verdicts = String::from_utf8(run.stdout).unwrap();
    assert_eq!(
        verdicts,
        "1 pass @2 match\n2 pass state match\n3 pass state match\n4 pass @2 match\n\
         5 pass state match\n6 block @1 match\n"
    );
    // Addresses as pf sends them: out from the outer address, answers to the inner host, and
    // the reset pf sends for the blocked segment.
    let mut reader = sift_pcap::open(&out).unwrap();
    let mut seen = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        let ip = crate::packets::ipv4_of_ether(p.data).unwrap();
        let h = crate::packets::parse_ipv4(ip).unwrap();
        seen.push((h.src, h.dst));
    }
    assert_eq!(
        seen,
        [
            (OUTER, SERVER),
            (SERVER, INNER),
            (OUTER, SERVER),
            (OUTER, SERVER),
            (SERVER, INNER),
            (OUTER, SERVER)
        ]
    );
    let Some(tshark) = sift_testkit::tool("tshark") else { return };
    let t = Command::new(tshark)
        .args(["-r", out.to_str().unwrap(), "-o", "ip.check_checksum:TRUE"])
        .args(["-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"])
        .args(["-T", "fields", "-e", "ip.checksum.status", "-e", "tcp.checksum.status"])
        .args(["-e", "udp.checksum.status"])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    // tshark's status: 1 good, 0 bad, 2 unverified.
    let lines = String::from_utf8(t.stdout).unwrap();
    assert_eq!(lines.lines().count(), 6, "{lines}");
    for l in lines.lines() {
        let fields: Vec<&str> = l.split('\t').filter(|f| !f.is_empty()).collect();
        assert_eq!(fields, ["1", "1"], "a checksum tshark does not accept: {lines}");
    }
}
