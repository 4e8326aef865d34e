//! pcapng packet flags (`epb_flags`, `pack_flags`): the direction of each packet, read from
//! hand-built blocks in both byte orders and written back by the pcapng writer.

mod common;

use common::*;
use sift_pcap::{Direction, Interface, PacketFlags, PcapngWriter, Reader, Timestamp, TsResolution};

/// Options: `epb_flags` = `flags` (in the file's byte order), then `opt_endofopt`.
fn flags_option(big: bool, flags: u32) -> Vec<u8> {
    let mut o = Enc::new(big);
    // A comment first: the flags need not be the first option.
    o.u16(1);
    o.u16(3);
    o.buf.extend_from_slice(b"hi\0\0");
    o.u16(2);
    o.u16(4);
    o.u32(flags);
    o.u32(0);
    o.buf
}

fn read_flags(bytes: Vec<u8>) -> Vec<Option<PacketFlags>> {
    let mut r = Reader::from_bytes(bytes).unwrap();
    let mut out = Vec::new();
    while let Some((_, _, flags)) = r.next_with_flags().unwrap() {
        out.push(flags);
    }
    out
}

#[test]
fn enhanced_packet_blocks_give_their_direction_in_both_byte_orders() {
    let pkts = packets(7, 3);
    for big in [false, true] {
        let mut e = Enc::new(big);
        shb(&mut e);
        idb(&mut e, 1, 65535, "eth0", 6);
        let words = [1, 2, 0, 3, 0x0001_0002];
        for (p, &w) in pkts.iter().zip(&words) {
            epb_with_options(&mut e, 0, 6, p, &flags_option(big, w));
        }
        // No options at all; options whose length runs past the block (ignored, as libpcap
        // ignores packet options: the packet is still delivered).
        epb_with_options(&mut e, 0, 6, &pkts[5], &[]);
        let mut bad = Enc::new(big);
        bad.u16(2);
        bad.u16(40);
        bad.u32(1);
        epb_with_options(&mut e, 0, 6, &pkts[6], &bad.buf);
        let got = read_flags(e.buf.clone());
        let dirs: Vec<_> = got.iter().map(|f| f.and_then(PacketFlags::direction)).collect();
        assert_eq!(
            dirs,
            [
                Some(Direction::Inbound),
                Some(Direction::Outbound),
                None,
                None,
                Some(Direction::Outbound),
                None,
                None
            ],
            "big={big}"
        );
        assert_eq!(got[4], Some(PacketFlags(0x0001_0002)), "the other bits are kept");
        assert_eq!((got[2], got[5], got[6]), (Some(PacketFlags(0)), None, None));
        // The packets themselves read as before.
        let (all, err) = read_bytes(&e.buf).unwrap();
        assert!(err.is_none());
        assert_eq!(all, to_micro(&pkts));
    }
}

#[test]
fn other_records_have_no_flags() {
    let pkts = packets(3, 4);
    let mut e = Enc::new(false);
    shb(&mut e);
    idb(&mut e, 1, 65535, "eth0", 6);
    // The common encoder's obsolete Packet Block has no options; its simple one cannot.
    pb(&mut e, 0, 6, &pkts[0]);
    spb(&mut e, &pkts[1]);
    // Its EPB carries `epb_flags` = 1.
    epb(&mut e, 0, 6, &pkts[2]);
    let got = read_flags(e.buf);
    assert_eq!(got, [None, None, Some(PacketFlags(1))]);
    let pcap = pcap_file(false, false, 1, 65535, &pkts);
    assert_eq!(read_flags(pcap), [None, None, None]);
}

#[test]
fn the_writer_writes_flags_that_read_back() {
    let pkts = packets(20, 5);
    let mut w = PcapngWriter::new(Vec::new()).unwrap();
    let mut iface = Interface::new(sift_pcap::LinkType::new(1), 65535, TsResolution::NANO);
    iface.name = Some("fw0".into());
    w.add_interface(&iface).unwrap();
    iface.name = Some("fw1".into());
    w.add_interface(&iface).unwrap();
    let want: Vec<(u32, Option<PacketFlags>)> = (0..pkts.len())
        .map(|i| {
            let dir = [Direction::Inbound, Direction::Outbound][i % 2];
            let flags = (i % 3 != 2).then(|| PacketFlags::with_direction(dir));
            ((i / 2 % 2) as u32, flags)
        })
        .collect();
    for (p, &(iface, flags)) in pkts.iter().zip(&want) {
        let ts = Timestamp { secs: p.secs, nanos: p.nanos };
        match flags {
            Some(f) => w.write_with_flags(iface, ts, p.wire_len, &p.data, f).unwrap(),
            None => w.write(iface, ts, p.wire_len, &p.data).unwrap(),
        }
    }
    let bytes = w.finish().unwrap();
    let mut r = Reader::from_bytes(bytes.clone()).unwrap();
    let mut got = Vec::new();
    while let Some((p, ifaces, flags)) = r.next_with_flags().unwrap() {
        assert_eq!(
            ifaces[p.interface as usize].name.as_deref(),
            Some(["fw0", "fw1"][p.interface as usize])
        );
        got.push((p.interface, flags));
    }
    assert_eq!(got, want);
    let (all, err) = read_bytes(&bytes).unwrap();
    assert!(err.is_none());
    let expected: Vec<Pkt> =
        pkts.iter().zip(&want).map(|(p, &(i, _))| Pkt { interface: i, ..p.clone() }).collect();
    assert_eq!(all, expected);
}

/// Wireshark reads the direction sift's writer records (`frame.packet_flags_direction`).
#[test]
fn tshark_reads_the_written_direction() {
    let Some(tshark) = sift_testkit::tool("tshark") else { return };
    let pkts = packets(4, 6);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flags.pcapng");
    let mut w = PcapngWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    w.add_interface(&Interface::new(sift_pcap::LinkType::new(1), 65535, TsResolution::MICRO))
        .unwrap();
    let dirs = [Direction::Outbound, Direction::Inbound, Direction::Inbound, Direction::Outbound];
    for (p, d) in pkts.iter().zip(dirs) {
        let ts = Timestamp { secs: p.secs, nanos: 0 };
        w.write_with_flags(0, ts, p.wire_len, &p.data, PacketFlags::with_direction(d)).unwrap();
    }
    w.finish().unwrap();
    let out = std::process::Command::new(tshark)
        .args(["-r", path.to_str().unwrap(), "-T", "fields", "-e", "frame.packet_flags_direction"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(got, "0x00000002 0x00000001 0x00000001 0x00000002");
}
