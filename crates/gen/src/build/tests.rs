use super::*;
use sift_wire::checksum::internet;
use sift_wire::tcp::{TcpOption, TcpRepr, emit_options, flags};

fn get16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

#[test]
fn ethernet_ipv4_udp_links_protocols_and_lengths() {
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.ethernet([2; 6], [4; 6])
        .ipv4(&ipv4_header([10, 0, 0, 1], [10, 0, 0, 2]))
        .udp(1000, 53)
        .payload(b"hi");
    let n = p.finish();
    assert_eq!(n, 14 + 20 + 8 + 2);
    assert_eq!(&buf[12..14], &[0x08, 0x00]);
    assert_eq!(buf[14 + 9], 17);
    assert_eq!(get16(&buf, 16), 30);
    assert_eq!(internet(&buf[14..34]), 0);
    assert_eq!(get16(&buf, 34 + 4), 10);
}

#[test]
fn protocol_fields_follow_the_next_layer() {
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.ethernet([2; 6], [4; 6])
        .vlan(true, 0, 100)
        .vlan(false, 3, 200)
        .pppoe_session(7)
        .ipv6(&ipv6_header([1; 16], [2; 16]));
    p.ipv6_hop_by_hop(false).ipv6_fragment(0, false, 1).icmpv6_echo(true, 1, 1);
    p.finish();
    assert_eq!(&buf[12..14], &[0x88, 0xa8]);
    assert_eq!(&buf[14..16], &[0x00, 100]);
    assert_eq!(&buf[16..18], &[0x81, 0x00]);
    assert_eq!(&buf[18..20], &[0x60, 200]);
    assert_eq!(&buf[20..22], &[0x88, 0x64]);
    assert_eq!(&buf[28..30], &[0x00, 0x57]); // PPP: IPv6
    assert_eq!(get16(&buf, 26), (buf.len() - 28) as u16); // PPPoE length
    let ip = 30;
    assert_eq!(buf[ip + 6], 0); // hop-by-hop
    assert_eq!(buf[ip + 40], 44); // then fragment
    assert_eq!(buf[ip + 48], 58); // then ICMPv6
}

#[test]
fn raw_link_layers_name_the_family() {
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.null_header().ipv6(&ipv6_header([1; 16], [2; 16]));
    p.finish();
    assert_eq!(&buf[..4], &[24, 0, 0, 0]);
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.loop_header().ipv4(&ipv4_header([1; 4], [2; 4]));
    p.finish();
    assert_eq!(&buf[..4], &[0, 0, 0, 2]);
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.linux_sll2(4, 3, [2; 6]).arp(1, [2; 6], [1; 4], [0; 6], [2; 4]);
    p.finish();
    assert_eq!(&buf[..2], &[0x08, 0x06]);
    assert_eq!(buf.len(), 20 + 28);
}

#[test]
fn oversized_options_are_cut_not_panicking() {
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut p = Packet::new(&mut buf, &mut scratch);
    let mut area = [0u8; 40];
    let n = emit_options(&[TcpOption::Timestamps { value: 1, echo: 2 }; 10], &mut area);
    p.ipv4(&Ipv4Repr { options: &[1; 100], ..ipv4_header([1; 4], [2; 4]) }).tcp(&TcpRepr {
        src_port: 1,
        dst_port: 2,
        seq: 0,
        ack: 0,
        flags: flags::SYN,
        window: 0,
        urgent: 0,
        options: &area[..n],
    });
    p.finish();
    assert_eq!(buf[0], 0x4f);
    assert_eq!(buf[60 + 12] >> 4, 15, "four timestamps fill the 40 option bytes");
}

#[test]
fn a_shortened_buffer_does_not_panic() {
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.ethernet([2; 6], [4; 6]).ipv4(&ipv4_header([1; 4], [2; 4])).udp(1, 2);
    p.buf_mut().truncate(20);
    p.ipv6(&ipv6_header([1; 16], [2; 16]));
    assert_eq!(p.finish(), 60);
}
