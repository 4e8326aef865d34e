//! `sift pf` takes each packet's direction from the pcapng flags (`epb_flags`) that recorded
//! it; `--in`/`--out` override them, and a capture without them falls back to inference.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use crate::packets::{TcpSpec, ether, flags, icmp_echo, tcp};
use sift_pcap::{Direction, Interface, LinkType, PacketFlags, PcapngWriter, Timestamp};

const HOST: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 7);
const STRANGER: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 9);

/// A ping out and its reply, a stranger's ping in, a TCP handshake out (SYN, SYN-ACK, ACK),
/// each with its direction; written with `epb_flags` when `flagged`.
fn capture(path: &Path, flagged: bool) {
    use Direction::{Inbound, Outbound};
    let syn = TcpSpec {
        src: (HOST, 40000),
        dst: (PEER, 80),
        seq: 1000,
        ack: 0,
        flags: flags::SYN,
        win: 64240,
    };
    let synack = TcpSpec {
        src: syn.dst,
        dst: syn.src,
        seq: 5000,
        ack: 1001,
        flags: flags::SYN | flags::ACK,
        win: 65160,
    };
    let ack = TcpSpec { seq: 1001, ack: 5001, flags: flags::ACK, ..syn };
    let packets = [
        (Outbound, icmp_echo(HOST, PEER, 8, 77, 1, 1)),
        (Inbound, icmp_echo(PEER, HOST, 0, 77, 1, 2)),
        (Inbound, icmp_echo(STRANGER, HOST, 8, 78, 1, 3)),
        (Outbound, tcp(&syn, 4, b"")),
        (Inbound, tcp(&synack, 5, b"")),
        (Outbound, tcp(&ack, 6, b"")),
    ];
    write_em0(path, &packets, flagged);
}

/// Writes IP `packets` as Ethernet frames of interface `em0` one second apart, with their
/// directions in `epb_flags` when `flagged`.
pub(crate) fn write_em0(path: &Path, packets: &[(Direction, Vec<u8>)], flagged: bool) {
    let mut w = PcapngWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    let mut iface = Interface::new(LinkType::new(1), 65535, sift_pcap::TsResolution::MICRO);
    iface.name = Some("em0".into());
    w.add_interface(&iface).unwrap();
    for (i, (dir, ip)) in packets.iter().enumerate() {
        let frame = ether(ip);
        let ts = Timestamp { secs: 1_700_000_000 + i as u64, nanos: 0 };
        let len = frame.len() as u32;
        if flagged {
            w.write_with_flags(0, ts, len, &frame, PacketFlags::with_direction(*dir)).unwrap();
        } else {
            w.write(0, ts, len, &frame).unwrap();
        }
    }
    w.finish().unwrap();
}

fn verdicts(rules: &Path, cap: &Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(["pf", "-f", rules.to_str().unwrap(), "-r", cap.to_str().unwrap(), "--verdicts"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn pf_run_judges_each_packet_in_its_recorded_direction() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let rules = d.join("out-only.conf");
    std::fs::write(&rules, "block in all\npass out all\n").unwrap();
    let flagged = d.join("flagged.pcapng");
    capture(&flagged, true);
    // Out by `pass out` (a state), the reply in by that state, the stranger in by `block in`.
    assert_eq!(
        verdicts(&rules, &flagged, &[]),
        "1 pass @1 match\n2 pass state match\n3 block @0 match\n\
         4 pass @1 match\n5 pass state match\n6 pass state match\n"
    );
    // `--out` overrides the flags: every packet leaves and nothing is blocked; the replies,
    // leaving too, answer no state, and `pass out all` (flags S/SA keep state) matches neither
    // an echo reply (pf creates no state on ICMP replies) nor a SYN-ACK: the default passes
    // them. The last ACK leaves as its SYN did: their state.
    let all_out = verdicts(&rules, &flagged, &["--out", "em0"]);
    assert_eq!(
        all_out,
        "1 pass @1 match\n2 pass @-1 match\n3 pass @1 match\n\
         4 pass @1 match\n5 pass @-1 match\n6 pass state match\n"
    );
    // `--in` too: all blocked by `block in all`.
    let all_in = verdicts(&rules, &flagged, &["--in", "em0"]);
    assert_eq!(all_in.matches("block @0").count(), 6, "{all_in}");
    // Without flags the direction is inferred: a packet answering no state is inbound, so the
    // outgoing ping and SYN are blocked as if they came in.
    let bare = d.join("bare.pcapng");
    capture(&bare, false);
    let inferred = verdicts(&rules, &bare, &[]);
    assert!(inferred.starts_with("1 block @0 match\n2 block @0 match\n"), "{inferred}");
}
