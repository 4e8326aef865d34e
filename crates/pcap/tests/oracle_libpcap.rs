//! The system libpcap as the oracle for reading: for every capture in libpcap's corpus and for
//! generated files in every pcap variant (both byte orders, both precisions) and pcapng (both
//! byte orders, several interfaces), sift's reader returns exactly the packets libpcap's
//! `pcap_next_ex` returns (timestamps to the nanosecond, lengths, bytes, order), and fails
//! where libpcap fails, after the same packets.

mod common;

use std::path::Path;

use common::*;
use sift_libpcap::{Libpcap, OfflineCapture};

fn libpcap() -> Option<Libpcap> {
    sift_testkit::oracle("system libpcap", Libpcap::load())
}

/// Compares sift's reading of `path` with libpcap's; returns the number of packets compared.
fn compare(pcap: &Libpcap, path: &Path) -> usize {
    let name = path.display();
    let theirs: Result<OfflineCapture, _> = pcap.read_offline(path, true);
    let ours = sift_pcap::open(path);
    let (theirs, mut ours) = match (theirs, ours) {
        (Ok(t), Ok(o)) => (t, o),
        (Err(_), Err(_)) => return 0,
        (Ok(t), Err(e)) if t.packets.is_empty() && t.error.is_some() => {
            // libpcap opens lazily for some damage that sift reports at open.
            eprintln!("{name}: both fail (sift at open: {e})");
            return 0;
        }
        (t, o) => panic!("{name}: libpcap {:?} but sift {:?}", t.map(|c| c.packets.len()), o.err()),
    };
    let (packets, error) = read_all(&mut ours);
    assert_eq!(
        packets.len(),
        theirs.packets.len(),
        "{name}: packet count (sift error: {error:?}, libpcap error: {:?})",
        theirs.error
    );
    for (i, (a, b)) in packets.iter().zip(&theirs.packets).enumerate() {
        assert_eq!(a.secs as i64, b.ts_sec, "{name}: packet {i} seconds");
        assert_eq!(a.nanos, b.ts_frac, "{name}: packet {i} nanoseconds");
        assert_eq!(a.wire_len, b.wirelen, "{name}: packet {i} wire length");
        assert_eq!(a.data, b.data, "{name}: packet {i} bytes");
    }
    assert_eq!(
        error.is_some(),
        theirs.error.is_some(),
        "{name}: sift error {error:?}, libpcap error {:?}",
        theirs.error
    );
    if ours.format() != sift_pcap::Format::Pcapng {
        // pcap_datalink answers in DLT numbers (LINKTYPE_RAW, 101, is DLT_RAW, 12, on Linux).
        let dlt = ours.interfaces()[0].link_type.dlt();
        assert_eq!(dlt, theirs.linktype, "{name}: link type");
    }
    packets.len()
}

#[test]
fn libpcap_corpus_captures_read_like_libpcap() {
    let (Some(pcap), Some(corpus)) = (libpcap(), sift_testkit::libpcap_corpus()) else { return };
    let mut files = 0;
    let mut packets = 0;
    for entry in std::fs::read_dir(corpus.join("captures")).unwrap() {
        let path = entry.unwrap().path();
        if path.ends_with("linktype-reserved-field-not-zero.pcap") {
            // libpcap 1.11 rejects reserved link-type bits and so does sift; the installed
            // 1.10.3 does not check them (tcpdump then fails on the unknown link type).
            let e = sift_pcap::open(&path).err().expect("reserved bits are rejected");
            assert_eq!(e.offset, 20);
            files += 1;
            continue;
        }
        packets += compare(&pcap, &path);
        files += 1;
    }
    assert!(files >= 40, "expected the 43 corpus captures, found {files}");
    eprintln!("{files} corpus captures, {packets} packets identical to libpcap's reading");
}

fn generated_frames(n: usize, link: sift_gen::Link, seed: u64) -> Vec<Pkt> {
    let config =
        sift_gen::Config { truncate: 0.1, malformed: 0.02, ..sift_gen::Config::with_link(link) };
    let mut g = sift_gen::Generator::new(seed, config);
    let mut buf = Vec::new();
    (0..n)
        .map(|_| {
            let m = g.next_frame(&mut buf);
            Pkt {
                secs: m.ts_sec,
                nanos: m.ts_nsec,
                wire_len: m.wire_len,
                data: buf.clone(),
                interface: 0,
            }
        })
        .collect()
}

#[test]
fn generated_files_in_every_variant_read_like_libpcap() {
    let Some(pcap) = libpcap() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    for (k, link) in sift_gen::Link::ALL.into_iter().enumerate() {
        let pkts = generated_frames(3000, link, 100 + k as u64);
        let lt = link.linktype();
        for big in [false, true] {
            for nano in [false, true] {
                let path = dir.path().join(format!("{}-{big}-{nano}.pcap", link.name()));
                std::fs::write(&path, pcap_file(big, nano, lt, 262_144, &pkts)).unwrap();
                total += compare(&pcap, &path);
            }
            // pcapng: two interfaces of the link type with µs and ns resolutions. Except for
            // RAW: libpcap 1.10 compares the second IDB's LINKTYPE (101) with the first one's
            // DLT (12) and refuses the file ("an interface has a type 101 different from the
            // type of the first interface"); sift reads such files (see read_write.rs).
            let interfaces = if link == sift_gen::Link::Raw { 1 } else { 2 };
            let mut e = Enc::new(big);
            shb(&mut e);
            idb(&mut e, lt as u16, 262_144, "a", 6);
            if interfaces == 2 {
                idb(&mut e, lt as u16, 0, "b", 9);
            }
            for (i, p) in pkts.iter().enumerate() {
                let iface = (i % interfaces) as u32;
                epb(&mut e, iface, if iface == 0 { 6 } else { 9 }, p);
            }
            let path = dir.path().join(format!("{}-{big}.pcapng", link.name()));
            std::fs::write(&path, e.buf).unwrap();
            total += compare(&pcap, &path);
        }
    }
    // Damaged: the same files cut short, and with an absurd caplen in the middle.
    let pkts = generated_frames(200, sift_gen::Link::Ethernet, 7);
    let whole = pcap_file(false, true, 1, 262_144, &pkts);
    for cut in [25, 40, whole.len() / 3, whole.len() / 2 + 1, whole.len() - 1] {
        let path = dir.path().join(format!("cut-{cut}.pcap"));
        std::fs::write(&path, &whole[..cut]).unwrap();
        compare(&pcap, &path);
    }
    let mut bad = whole.clone();
    let at = 24 + 16 + pkts[0].data.len();
    bad[at + 8..at + 12].copy_from_slice(&400_000u32.to_le_bytes());
    let path = dir.path().join("absurd.pcap");
    std::fs::write(&path, &bad).unwrap();
    assert_eq!(compare(&pcap, &path), 1);
    eprintln!("{total} generated packets identical to libpcap's reading");
}
