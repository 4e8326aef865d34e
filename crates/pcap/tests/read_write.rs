//! Reading every format and variant, and writing then reading back.

mod common;

use common::*;
use sift_pcap::{Format, Interface, PcapWriter, PcapngWriter, Precision, Timestamp, TsResolution};

#[test]
fn pcap_all_magics_and_byte_orders() {
    let pkts = packets(300, 1);
    for big in [false, true] {
        for nano in [false, true] {
            let file = pcap_file(big, nano, 1, 65535, &pkts);
            let expected = if nano { pkts.clone() } else { to_micro(&pkts) };
            let mut r = sift_pcap::Reader::from_bytes(file.clone()).unwrap();
            assert_eq!(
                r.format(),
                Format::Pcap {
                    precision: if nano { Precision::Nano } else { Precision::Micro },
                    big_endian: big,
                    version: (2, 4)
                }
            );
            assert_eq!(r.interfaces()[0].link_type.number(), 1);
            assert_eq!(r.interfaces()[0].snaplen, 65535);
            let (got, err) = read_all(&mut r);
            assert!(err.is_none(), "{err:?}");
            assert_eq!(got, expected, "big={big} nano={nano}");
            for chunk in [1, 7, 4096] {
                let (got, err) = read_stream(&file, chunk).unwrap();
                assert!(err.is_none());
                assert_eq!(got, expected, "stream chunk {chunk}");
            }
        }
    }
}

#[test]
fn pcap_link_type_upper_bits_are_kept_and_reserved_bits_rejected() {
    let pkts = packets(3, 2);
    // FCS bits (28-31) are legal and carried to the writer.
    let file = pcap_file(false, false, 1 | 0x1000_0000, 100, &pkts);
    let r = sift_pcap::Reader::from_bytes(file).unwrap();
    assert_eq!(r.interfaces()[0].link_type_ext, 0x1000_0000);
    let bad = pcap_file(true, false, 1 | 0x0001_0000, 100, &pkts);
    let e = sift_pcap::Reader::from_bytes(bad).err().unwrap();
    assert_eq!(e.offset, 20);
    assert!(e.to_string().contains("reserved bits"), "{e}");
}

/// A pcapng file with two sections in different byte orders, interfaces of different link
/// types and resolutions, and every packet block kind plus blocks to skip.
fn multi_section(pkts: &[Pkt]) -> (Vec<u8>, Vec<Pkt>) {
    let mut expected = Vec::new();
    let mut le = Enc::new(false);
    shb(&mut le);
    idb(&mut le, 1, 0, "eth0", 6);
    idb(&mut le, 113, 65535, "any", 9);
    // An unknown block (a Name Resolution Block) to be skipped.
    block(&mut le, 4, &[0, 0, 0, 0]);
    for (i, p) in pkts[..40].iter().enumerate() {
        let iface = (i % 2) as u32;
        epb(&mut le, iface, if iface == 0 { 6 } else { 9 }, p);
        let nanos = if iface == 0 { p.nanos / 1000 * 1000 } else { p.nanos };
        expected.push(Pkt { nanos, interface: iface, ..p.clone() });
    }
    isb(&mut le, 1, 40, 2);
    let mut be = Enc::new(true);
    shb(&mut be);
    idb(&mut be, 101, 0, "tun0", 0x80 | 30);
    for p in &pkts[40..60] {
        pb(&mut be, 0, 0x80 | 30, p);
        let nanos = (((u64::from(p.nanos) << 30) / 1_000_000_000 * 1_000_000_000) >> 30) as u32;
        expected.push(Pkt { nanos, interface: 2, ..p.clone() });
    }
    for p in &pkts[60..70] {
        // Simple packet blocks carry the whole packet up to the snaplen (none here) and no time.
        let p = Pkt { wire_len: p.data.len() as u32, ..p.clone() };
        spb(&mut be, &p);
        expected.push(Pkt { secs: 0, nanos: 0, interface: 2, ..p });
    }
    let mut file = le.buf;
    file.extend_from_slice(&be.buf);
    (file, expected)
}

#[test]
fn pcapng_sections_interfaces_and_block_kinds() {
    let pkts = packets(70, 3);
    let (file, expected) = multi_section(&pkts);
    let mut r = sift_pcap::Reader::from_bytes(file.clone()).unwrap();
    let (got, err) = read_all(&mut r);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
    let ifaces = r.interfaces();
    assert_eq!(ifaces.len(), 3);
    assert_eq!((ifaces[0].link_type.number(), ifaces[0].name.as_deref()), (1, Some("eth0")));
    assert_eq!((ifaces[1].link_type.number(), ifaces[1].ts_resolution), (113, TsResolution::NANO));
    assert_eq!(ifaces[1].stats.unwrap().received, Some(40));
    assert_eq!(ifaces[1].stats.unwrap().dropped, Some(2));
    assert_eq!((ifaces[2].link_type.number(), ifaces[2].section), (101, 1));
    assert_eq!(ifaces[2].ts_resolution, TsResolution::Binary(30));
    let (streamed, err) = read_stream(&file, 5).unwrap();
    assert!(err.is_none());
    assert_eq!(streamed, expected);
}

#[test]
fn pcap_writer_round_trip_both_precisions() {
    let pkts = packets(500, 4);
    for precision in [Precision::Micro, Precision::Nano] {
        let mut w = PcapWriter::new(Vec::new(), sift_pcap::LinkType::new(1), 0, 262_144, precision)
            .unwrap();
        for p in &pkts {
            w.write(Timestamp::new(p.secs, p.nanos), p.wire_len, &p.data).unwrap();
        }
        let bytes = w.finish().unwrap();
        let nano = precision == Precision::Nano;
        // The writer's output equals the independent encoder's, byte for byte.
        assert_eq!(bytes, pcap_file(false, nano, 1, 262_144, &pkts));
        let (got, err) = read_bytes(&bytes).unwrap();
        assert!(err.is_none());
        assert_eq!(got, if nano { pkts.clone() } else { to_micro(&pkts) });
    }
}

#[test]
fn pcapng_writer_round_trip_keeps_interfaces_and_nanoseconds() {
    let pkts = packets(70, 5);
    let (file, expected) = multi_section(&pkts);
    let mut r = sift_pcap::Reader::from_bytes(file).unwrap();
    let mut w = PcapngWriter::new(Vec::new()).unwrap();
    let mut described = 0;
    while let Some((p, ifaces)) = r.next_with_interfaces().unwrap() {
        while described < ifaces.len() {
            w.add_interface(&ifaces[described]).unwrap();
            described += 1;
        }
        w.write(p.interface, p.timestamp, p.wire_len, p.data).unwrap();
    }
    let bytes = w.finish().unwrap();
    let mut back = sift_pcap::Reader::from_bytes(bytes).unwrap();
    let (got, err) = read_all(&mut back);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, expected);
    let ifaces = back.interfaces();
    assert_eq!(ifaces.len(), 3);
    assert_eq!(ifaces[0].name.as_deref(), Some("eth0"));
    assert_eq!(ifaces[1].ts_resolution, TsResolution::NANO);
    assert_eq!(ifaces[2].link_type.number(), 101);
    // Every interface gets statistics at the end, counting the packets written for it.
    assert_eq!(ifaces[0].stats.unwrap().delivered, Some(20));
    assert_eq!(ifaces[2].stats.unwrap().delivered, Some(30));
}

#[test]
fn writers_change_what_the_format_cannot_hold_and_count_it() {
    // A pcap record's seconds are 32 bits: later (or, modulo 2^64, earlier) times are written
    // modulo 2^32, as tcpdump writes them, and counted; nothing is refused.
    let mut w =
        PcapWriter::new(Vec::new(), sift_pcap::LinkType::new(1), 0, 100, Precision::Micro).unwrap();
    w.write(Timestamp::new(7, 5_000), 1, &[0]).unwrap();
    let late = Timestamp::new((1 << 33) + 9, 123_456_789);
    w.write(late, 1, &[0]).unwrap();
    w.write(Timestamp::new(3u64.wrapping_sub(5), 0), 1, &[0]).unwrap();
    assert_eq!(w.wrapped(), sift_pcap::ChangedTimestamps { count: 2, first: Some(late) });
    let bytes = w.finish().unwrap();
    let fields = |at: usize| {
        let u = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        (u(at), u(at + 4))
    };
    assert_eq!(fields(24), (7, 5));
    assert_eq!(fields(24 + 17), (9, 123_456));
    assert_eq!(fields(24 + 34), (u32::MAX - 1, 0));
    // pcapng counts in 64 bits of the interface's unit: what does not fit is clamped, counted.
    let mut ng = PcapngWriter::new(Vec::new()).unwrap();
    assert!(ng.write(0, Timestamp::new(1, 0), 1, &[0]).is_err(), "no interface yet");
    ng.add_interface(&Interface::new(sift_pcap::LinkType::new(1), 0, TsResolution::NANO)).unwrap();
    let far = Timestamp::new(u64::MAX / 2, 0);
    ng.write(0, far, 1, &[0]).unwrap();
    ng.write(0, Timestamp::new(u64::MAX, 0), 1, &[0]).unwrap();
    ng.write(0, Timestamp::new(5, 0), 1, &[0]).unwrap();
    assert_eq!(ng.clamped(), sift_pcap::ChangedTimestamps { count: 2, first: Some(far) });
    let mut back = sift_pcap::Reader::from_bytes(ng.finish().unwrap()).unwrap();
    let (got, err) = read_all(&mut back);
    assert!(err.is_none(), "{err:?}");
    let times: Vec<(u64, u32)> = got.iter().map(|p| (p.secs, p.nanos)).collect();
    let last = Timestamp::from_units(u64::MAX, TsResolution::NANO);
    assert_eq!(times, [(last.secs, last.nanos), (0, 0), (5, 0)]);
}

#[test]
fn timestamp_conversions_are_exact_for_common_resolutions() {
    let t = Timestamp::new(1_700_000_000, 123_456_789);
    assert_eq!(
        Timestamp::from_units(t.to_units(TsResolution::NANO).unwrap(), TsResolution::NANO),
        t
    );
    let micro =
        Timestamp::from_units(t.to_units(TsResolution::MICRO).unwrap(), TsResolution::MICRO);
    assert_eq!(micro, Timestamp::new(1_700_000_000, 123_456_000));
    assert_eq!(TsResolution::from_option_byte(0x80 | 64), None);
    assert_eq!(TsResolution::from_option_byte(20), None);
}
