//! Damaged input is normal input: every way a file can be broken ends the read with a located
//! error, never a panic, and every intact packet before the damage is delivered.

mod common;

use common::*;
use proptest::prelude::*;

/// Cutting a file at any byte delivers exactly the records that fit before the cut.
#[test]
fn truncation_at_every_offset_keeps_the_intact_prefix() {
    let pkts = packets(12, 10);
    let pcap = pcap_file(false, true, 1, 65535, &pkts);
    // Record boundaries, to know how many packets are complete at each cut.
    let mut ends = Vec::new();
    let mut at = 24;
    for p in &pkts {
        at += 16 + p.data.len();
        ends.push(at);
    }
    for cut in 0..pcap.len() {
        let bytes = &pcap[..cut];
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        match read_bytes(bytes) {
            Err(e) => assert!(cut < 24, "cut {cut}: open failed: {e}"),
            Ok((got, err)) => {
                assert_eq!(got, pkts[..complete], "cut {cut}");
                let at_boundary = cut == 24 || ends.contains(&cut);
                assert_eq!(err.is_none(), at_boundary, "cut {cut}: {err:?}");
                if let Some(e) = err {
                    let start = if complete == 0 { 24 } else { ends[complete - 1] };
                    assert_eq!(e.offset, start as u64, "cut {cut}: {e}");
                }
            }
        }
        // The streaming path agrees.
        if let Ok((got, err)) = read_stream(bytes, 3) {
            assert_eq!(got, pkts[..complete]);
            assert_eq!(err.is_none(), cut == 24 || ends.contains(&cut));
        }
    }
}

#[test]
fn pcapng_truncation_at_every_offset() {
    let pkts = packets(8, 11);
    let mut e = Enc::new(true);
    shb(&mut e);
    idb(&mut e, 1, 0, "eth0", 9);
    let mut ends = Vec::new();
    for p in &pkts {
        epb(&mut e, 0, 9, p);
        ends.push(e.buf.len());
    }
    let file = e.buf;
    for cut in 0..file.len() {
        let complete = ends.iter().filter(|&&x| x <= cut).count();
        if let Ok((got, err)) = read_bytes(&file[..cut]) {
            assert_eq!(got, pkts[..complete], "cut {cut}");
            if !ends.contains(&cut) && cut > ends[0] {
                assert!(err.is_some(), "cut {cut} must report the damage");
            }
        }
    }
}

#[test]
fn absurd_caplen_is_an_error_after_the_good_packets() {
    let pkts = packets(5, 12);
    let mut file = pcap_file(false, false, 1, 65535, &pkts);
    let at = file.len();
    // A record announcing 300,000 captured bytes.
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&300_000u32.to_le_bytes());
    file.extend_from_slice(&300_000u32.to_le_bytes());
    file.extend_from_slice(&[0; 64]);
    let (got, err) = read_bytes(&file).unwrap();
    assert_eq!(got, to_micro(&pkts));
    let e = err.unwrap();
    assert_eq!(e.offset, at as u64);
    assert_eq!(
        e.to_string(),
        format!("byte {at}: invalid captured length 300000: larger than the limit of 262144")
    );
}

#[test]
fn caplen_above_snaplen_is_cut_like_libpcap() {
    let pkts: Vec<Pkt> = packets(6, 13).into_iter().filter(|p| p.data.len() > 64).collect();
    let file = pcap_file(false, true, 1, 64, &pkts);
    let mut r = sift_pcap::Reader::from_bytes(file).unwrap();
    let (got, err) = read_all(&mut r);
    assert!(err.is_none());
    for (g, p) in got.iter().zip(&pkts) {
        assert_eq!(g.data, p.data[..64]);
    }
    assert_eq!(r.clipped_records().count, pkts.len() as u64);
    assert_eq!(r.clipped_records().first_offset, Some(24));
}

#[test]
fn bad_magic_garbage_and_empty() {
    let e = read_bytes(b"GET / HTTP/1.1\r\n").err().unwrap();
    assert_eq!(e.to_string(), "byte 0: not a pcap or pcapng file (magic number 0x47455420)");
    let e = sift_pcap::Reader::from_bytes(Vec::new()).err().unwrap();
    assert_eq!(e.to_string(), "byte 0: the file is empty");
    let e = read_bytes(&[0xd4, 0xc3]).err().unwrap();
    assert!(e.to_string().contains("truncated file header"), "{e}");
    // A pcapng-looking start with a broken byte-order magic is not pcapng.
    let e = read_bytes(&[0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4]).err().unwrap();
    assert!(e.to_string().contains("not a pcap or pcapng file"), "{e}");
}

#[test]
fn bad_pcapng_block_lengths() {
    let pkts = packets(3, 14);
    let mut base = Enc::new(false);
    shb(&mut base);
    idb(&mut base, 1, 0, "eth0", 6);
    for p in &pkts {
        epb(&mut base, 0, 6, p);
    }
    let good_end = base.buf.len();
    for (bad_len, what) in
        [(13u32, "bad length 13"), (8, "bad length 8"), (u32::MAX - 3, "bad length")]
    {
        let mut e = Enc { big: false, buf: base.buf.clone() };
        e.u32(6);
        e.u32(bad_len);
        e.buf.extend_from_slice(&[0; 40]);
        let (got, err) = read_bytes(&e.buf).unwrap();
        assert_eq!(got.len(), 3);
        let err = err.unwrap();
        assert_eq!(err.offset, good_end as u64 + 4);
        assert!(err.to_string().contains(what), "{err}");
    }
    // Trailer that disagrees with the header.
    let mut e = Enc { big: false, buf: base.buf.clone() };
    block(&mut e, 6, &[0; 20]);
    let n = e.buf.len();
    e.buf[n - 4] = 99;
    let (got, err) = read_bytes(&e.buf).unwrap();
    assert_eq!(got.len(), 3);
    assert!(err.unwrap().to_string().contains("does not match its trailing length"));
    // A packet naming an interface that was never described.
    let mut e = Enc { big: false, buf: base.buf.clone() };
    epb(&mut e, 7, 6, &pkts[0]);
    let (_, err) = read_bytes(&e.buf).unwrap();
    assert!(
        err.unwrap().to_string().contains("names interface 7, but the section describes only 1")
    );
    // An option running past the end of its block.
    let mut e = Enc { big: false, buf: base.buf.clone() };
    let mut body = Enc::new(false);
    body.u16(1);
    body.u16(0);
    body.u32(0);
    body.u16(2);
    body.u16(200);
    block(&mut e, 1, &body.buf);
    let (_, err) = read_bytes(&e.buf).unwrap();
    assert!(err.unwrap().to_string().contains("runs past the end"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random byte flips and cuts never panic, and the two reading paths agree on everything.
    #[test]
    fn random_damage_never_panics_and_paths_agree(
        seed in 0u64..1000,
        flips in proptest::collection::vec((0usize..4000, any::<u8>()), 0..6),
        cut in 0usize..5000,
        ng in any::<bool>(),
        big in any::<bool>(),
    ) {
        let pkts = packets(6, seed);
        let mut file = if ng {
            let mut e = Enc::new(big);
            shb(&mut e);
            idb(&mut e, 1, 0, "x", 9);
            for p in &pkts { epb(&mut e, 0, 9, p); }
            isb(&mut e, 0, 6, 0);
            e.buf
        } else {
            pcap_file(big, false, 1, 65535, &pkts)
        };
        for (at, v) in flips {
            if !file.is_empty() {
                let i = at % file.len();
                file[i] ^= v;
            }
        }
        file.truncate(cut.min(file.len()));
        let whole = read_bytes(&file);
        let streamed = read_stream(&file, 13);
        match (whole, streamed) {
            (Ok((a, ea)), Ok((b, eb))) => {
                prop_assert_eq!(a, b);
                prop_assert_eq!(ea.map(|e| e.to_string()), eb.map(|e| e.to_string()));
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "paths disagree: {:?} vs {:?}", a.map(|x| x.0.len()), b.map(|x| x.0.len())),
        }
    }
}

#[test]
fn streaming_skips_large_unknown_blocks() {
    let pkts = packets(3, 15);
    let mut e = Enc::new(false);
    shb(&mut e);
    idb(&mut e, 1, 0, "eth0", 6);
    block(&mut e, 0x0BAD, &vec![0xAB; 3 << 20]);
    for p in &pkts {
        epb(&mut e, 0, 6, p);
    }
    let (got, err) = read_stream(&e.buf, 1 << 16).unwrap();
    assert!(err.is_none());
    assert_eq!(got, to_micro(&pkts));
}
