// Every view over arbitrary bytes: checked constructors, every getter, every walk, and the
// setters on a copy. Shared by the property test `views_never_panic` and the fuzz target
// `fuzz/fuzz_targets/wire_views.rs` (which includes this file), so both exercise the same
// surface. Nothing here may panic on any input.

#[allow(dead_code)]
pub fn exercise(data: &[u8]) {
    use sift_wire::{
        arp::*, ethernet::*, geneve::*, gre::*, icmp::*, ipv4::*, ipv6::*, ipv6ext::*, loopback::*,
        mpls::*, pppoe::*, sctp::*, sll::*, tcp::*, udp::*, vxlan::*,
    };
    use std::hint::black_box as bb;

    // Each view also starts one byte in, so unaligned starts are covered.
    for start in [0, 1.min(data.len())] {
        let d = &data[start..];
        let mut copy = d.to_vec();
        let c = &mut copy[..];
        let sel = d.first().copied().unwrap_or(0);

        if let Ok(f) = EthernetFrame::new_checked(d) {
            bb((f.dst_addr(), f.src_addr(), f.ethertype(), f.payload()));
            let _ = EthernetRepr::parse(&f);
        }
        if let Ok(mut f) = EthernetFrame::new_checked(&mut *c) {
            f.set_dst_addr([sel; 6]);
            f.set_src_addr([1; 6]);
            f.set_ethertype(0x0800);
            f.payload_mut().fill(sel);
        }
        if let Ok(t) = VlanTag::new_checked(d) {
            bb((t.tci(), t.pcp(), t.dei(), t.vid(), t.ethertype(), t.payload()));
            let _ = VlanRepr::parse(&t);
        }
        if let Ok(mut t) = VlanTag::new_checked(&mut *c) {
            t.set_pcp(sel);
            t.set_dei(true);
            t.set_vid(u16::from(sel));
            t.set_ethertype(1);
        }
        if let Ok(p) = SllPacket::new_checked(d) {
            bb((p.packet_type(), p.hatype(), p.addr(), p.addr_bytes(), p.protocol(), p.payload()));
            let _ = SllRepr::parse(&p);
        }
        if let Ok(mut p) = SllPacket::new_checked(&mut *c) {
            p.set_addr(&[sel; 12]);
            p.set_protocol(2);
        }
        if let Ok(p) = Sll2Packet::new_checked(d) {
            bb((p.protocol(), p.ifindex(), p.hatype(), p.packet_type(), p.addr(), p.payload()));
            let _ = SllRepr::parse_v2(&p);
        }
        if let Ok(mut p) = Sll2Packet::new_checked(&mut *c) {
            p.set_addr(&[sel; 3]);
            p.set_ifindex(9);
        }
        if let Ok(p) = LoopbackPacket::new_checked(d) {
            bb((p.family_be(), p.family_le(), p.family_any_order(), p.payload()));
        }
        if let Ok(p) = MplsPacket::new_checked(d) {
            bb((p.label(), p.traffic_class(), p.bottom(), p.ttl(), p.payload()));
            let _ = MplsRepr::parse(&p);
        }
        if let Ok(mut p) = MplsPacket::new_checked(&mut *c) {
            p.set_ttl(sel);
        }
        if let Ok(p) = PppoePacket::new_checked(d) {
            bb((p.ver_type(), p.code(), p.session_id(), p.payload_len(), p.payload()));
            let _ = PppoeSessionRepr::parse(&p);
            if p.code() == 0 {
                bb(p.ppp_protocol());
            }
        }
        if let Ok(p) = ArpPacket::new_checked(d) {
            bb((p.htype(), p.ptype(), p.op(), p.total_len(), p.addr_offsets()));
            bb((
                p.sender_hw_addr(),
                p.sender_proto_addr(),
                p.target_hw_addr(),
                p.target_proto_addr(),
            ));
            let _ = ArpRepr::parse(&p);
        }
        if let Ok(mut p) = ArpPacket::new_checked(&mut *c) {
            let (h, pl) = (usize::from(p.hlen()), usize::from(p.plen()));
            p.set_sender_hw_addr(&vec![sel; h]);
            p.set_target_proto_addr(&vec![sel; pl]);
            p.set_op(2);
        }
        if let Ok(p) = Ipv4Packet::new_checked(d) {
            bb((p.version(), p.header_len(), p.tos(), p.dscp(), p.ecn(), p.total_len()));
            bb((p.ident(), p.dont_frag(), p.more_frags(), p.frag_offset(), p.ttl(), p.protocol()));
            bb((p.checksum(), p.src_addr(), p.dst_addr(), p.verify_checksum(), p.pseudo_header(9)));
            bb((p.header(), p.options(), p.payload()));
            for o in p.option_iter() {
                let _ = bb(o);
            }
            let _ = Ipv4Repr::parse(&p);
        }
        if let Ok(mut p) = Ipv4Packet::new_checked(&mut *c) {
            p.rewrite_src_addr([sel; 4]);
            p.rewrite_dst_addr([1, 2, 3, 4]);
            p.rewrite_ttl(sel);
            p.set_dont_frag(true);
            p.set_more_frags(false);
            p.set_frag_offset(u16::from(sel));
            p.options_mut().fill(1);
            p.payload_mut().fill(sel);
            p.fill_checksum();
            assert!(p.verify_checksum());
        }
        if let Ok(p) = Ipv6Packet::new_checked(d) {
            bb((p.version(), p.traffic_class(), p.flow_label(), p.payload_len(), p.next_header()));
            bb((p.hop_limit(), p.src_addr(), p.dst_addr(), p.pseudo_header(6, 7), p.payload()));
            let mut walk = p.ext_headers();
            for h in walk.by_ref() {
                let Ok(h) = h else { break };
                bb((h.kind(), h.next_header(), h.header_len(), h.header(), h.data(), h.payload()));
                bb((h.routing_type(), h.segments_left()));
                if h.kind() == 44 {
                    bb((h.frag_offset(), h.more_frags(), h.frag_ident()));
                    let _ = Ipv6FragmentRepr::parse(&h);
                } else if h.kind() == 51 {
                    bb((h.ah_spi(), h.ah_seq()));
                } else {
                    let _ = Ipv6ExtRepr::parse(&h);
                    for o in h.option_iter() {
                        let _ = bb(o);
                    }
                }
            }
            bb(walk.upper_layer());
            let _ = Ipv6Repr::parse(&p);
        }
        if let Ok(mut p) = Ipv6Packet::new_checked(&mut *c) {
            p.set_traffic_class(sel);
            p.set_flow_label(u32::from(sel) << 12);
            p.set_hop_limit(1);
            p.payload_mut().fill(0);
        }
        for kind in [0u8, 43, 44, 51, 60] {
            if let Ok(mut h) = Ipv6ExtHeader::new_checked(kind, &mut *c) {
                h.set_next_header(59);
                if kind == 44 {
                    h.set_frag(u16::from(sel), true);
                    h.set_frag_ident(7);
                } else {
                    h.data_mut().fill(0);
                }
            }
        }
        if let Ok(p) = TcpPacket::new_checked(d) {
            bb((p.src_port(), p.dst_port(), p.seq_number(), p.ack_number(), p.header_len()));
            bb((p.flags(), p.syn(), p.ack(), p.fin(), p.rst(), p.window_len(), p.checksum()));
            bb((p.urgent_at(), p.options(), p.payload(), p.verify_checksum(&[1; 4], &[2; 4])));
            for o in p.option_iter().flatten() {
                bb((o.kind(), o.buffer_len(), o.sack_blocks().count()));
                let mut buf = [0u8; 40];
                bb(o.emit(&mut buf[..usize::from(sel) % 41]));
            }
            let _ = TcpRepr::parse(&p);
        }
        if let Ok(mut p) = TcpPacket::new_checked(&mut *c) {
            p.rewrite_src_port(u16::from(sel));
            p.rewrite_dst_port(0xffff);
            p.adjust_checksum(&[1; 16], &[2; 16]);
            p.set_flags(0x1ff);
            p.options_mut().fill(1);
            p.fill_checksum(&[1; 16], &[2; 16]);
            assert!(p.verify_checksum(&[1; 16], &[2; 16]));
        }
        if let Ok(p) = UdpPacket::new_checked(d) {
            bb((p.src_port(), p.dst_port(), p.len(), p.is_empty(), p.checksum(), p.payload()));
            bb(p.verify_checksum(&[1; 16], &[2; 16]));
            let _ = UdpRepr::parse(&p);
        }
        if let Ok(mut p) = UdpPacket::new_checked(&mut *c) {
            p.rewrite_src_port(u16::from(sel));
            p.adjust_checksum(&[1; 4], &[2; 4]);
            p.fill_checksum(&[1; 4], &[2; 4]);
            assert!(p.verify_checksum(&[1; 4], &[2; 4]));
            p.payload_mut().fill(0);
        }
        if let Ok(p) = IcmpPacket::new_checked(d) {
            bb((p.msg_type(), p.msg_code(), p.checksum(), p.rest_of_header(), p.echo_ident()));
            bb((p.echo_seq_no(), p.payload(), p.verify_checksum()));
            let _ = IcmpRepr::parse(&p);
        }
        if let Ok(mut p) = IcmpPacket::new_checked(&mut *c) {
            p.set_echo_ident(1);
            p.set_echo_seq_no(2);
            p.fill_checksum();
            assert!(p.verify_checksum());
        }
        if let Ok(p) = Icmpv6Packet::new_checked(d) {
            bb((p.msg_type(), p.msg_code(), p.checksum(), p.rest_of_header(), p.payload()));
            bb(p.verify_checksum(&[1; 16], &[2; 16]));
            let _ = IcmpRepr::parse_v6(&p);
        }
        if let Ok(mut p) = Icmpv6Packet::new_checked(&mut *c) {
            p.fill_checksum(&[1; 16], &[2; 16]);
            assert!(p.verify_checksum(&[1; 16], &[2; 16]));
        }
        if let Ok(p) = SctpPacket::new_checked(d) {
            bb((
                p.src_port(),
                p.dst_port(),
                p.verification_tag(),
                p.checksum(),
                p.checksum_field(),
            ));
            bb((p.verify_checksum(), p.payload()));
            for chunk in p.chunks() {
                let Ok(ch) = chunk else { break };
                bb((ch.chunk_type(), ch.flags(), ch.len(), ch.is_empty(), ch.padded_len()));
                bb(ch.value());
                let _ = SctpChunkRepr::parse(&ch);
            }
            let _ = SctpRepr::parse(&p);
        }
        if let Ok(mut p) = SctpPacket::new_checked(&mut *c) {
            p.fill_checksum();
            assert!(p.verify_checksum());
        }
        if let Ok(p) = GrePacket::new_checked(d) {
            bb((p.flags(), p.version(), p.protocol_type(), p.header_len(), p.checksum()));
            bb((p.key(), p.seq(), p.verify_checksum(), p.payload()));
            let _ = GreRepr::parse(&p);
        }
        if let Ok(mut p) = GrePacket::new_checked(&mut *c) {
            p.set_key(1);
            p.set_seq(2);
            p.fill_checksum();
            assert!(p.verify_checksum());
        }
        if let Ok(p) = VxlanPacket::new_checked(d) {
            bb((p.flags(), p.vni(), p.payload()));
            let _ = VxlanRepr::parse(&p);
        }
        if let Ok(p) = GenevePacket::new_checked(d) {
            bb((p.version(), p.options_len(), p.oam(), p.critical(), p.protocol_type(), p.vni()));
            bb((p.options(), p.payload()));
            for o in p.option_iter() {
                let _ = bb(o);
            }
            let _ = GeneveRepr::parse(&p);
        }
        if let Ok(mut p) = GenevePacket::new_checked(&mut *c) {
            p.set_flags(true, true);
            p.set_vni(u32::from(sel));
            p.options_mut().fill(0);
        }
        // The walks also run on their own over any bytes.
        for o in Ipv4Options::new(d) {
            let _ = bb(o);
        }
        for o in TcpOptions::new(d) {
            let _ = bb(o);
        }
        for o in GeneveOptions::new(d) {
            let _ = bb(o);
        }
        for h in ExtHeaders::new(sel % 64, d) {
            let _ = bb(h);
        }
    }
}
