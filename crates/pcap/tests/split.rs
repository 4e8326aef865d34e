//! Reading a pcap file in chunks from guessed sync points, checked the way callers use it
//! (each chunk's guessed start verified against where the previous chunk stopped, redone from
//! there when wrong), gives exactly the packets of one sequential read: for every chunk count,
//! both byte orders and precisions, packets that carry other pcap records in their payload
//! (which fool the guess), and a damaged tail.

mod common;

use common::{Pkt, packets, pcap_file};
use sift_pcap::{Packet, Reader};

fn owned(p: &Packet<'_>) -> (u64, u32, u32, Vec<u8>, u64) {
    (p.timestamp.secs, p.timestamp.nanos, p.wire_len, p.data.to_vec(), p.offset)
}

type Owned = (u64, u32, u32, Vec<u8>, u64);

/// Sequential read: the packets and the error offset, if any.
fn sequential(bytes: &[u8]) -> (Vec<Owned>, Option<u64>) {
    let mut r = Reader::from_bytes(bytes.to_vec()).unwrap();
    let mut out = Vec::new();
    loop {
        match r.next_packet() {
            Ok(Some(p)) => out.push(owned(&p)),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.offset)),
        }
    }
}

/// Chunked read as the CLI does it; also returns how many guesses were wrong.
fn chunked(bytes: &[u8], chunks: u64) -> (Vec<Owned>, Option<u64>, usize) {
    let r = Reader::from_bytes(bytes.to_vec()).unwrap();
    let file = r.pcap_bytes().expect("classic pcap in memory");
    let len = file.len();
    let bounds: Vec<u64> =
        (0..=chunks).map(|i| if i == 0 { file.first_record() } else { len * i / chunks }).collect();
    let mut out = Vec::new();
    let mut wrong = 0;
    let mut prev_stop = file.first_record();
    for i in 0..chunks as usize {
        let guess = if i == 0 { Some(file.first_record()) } else { file.sync(bounds[i]) };
        let start = match guess {
            Some(g) if g == prev_stop => g,
            _ => {
                wrong += 1;
                prev_stop
            }
        };
        let mut records = file.records(start, bounds[i + 1].max(start));
        for p in records.by_ref() {
            match p {
                Ok(p) => out.push(owned(&p)),
                Err(e) => return (out, Some(e.offset), wrong),
            }
        }
        prev_stop = records.stop();
    }
    (out, None, wrong)
}

fn check(bytes: &[u8], what: &str) -> usize {
    let want = sequential(bytes);
    let mut wrong_total = 0;
    for chunks in 1..=9 {
        let (got, err, wrong) = chunked(bytes, chunks);
        assert_eq!(got.len(), want.0.len(), "{what}: {chunks} chunks");
        assert!(got == want.0, "{what}: {chunks} chunks deliver other packets");
        assert_eq!(err, want.1, "{what}: {chunks} chunks");
        wrong_total += wrong;
    }
    wrong_total
}

#[test]
fn chunks_equal_a_sequential_read() {
    for (big, nano) in [(false, false), (true, false), (false, true), (true, true)] {
        let bytes = pcap_file(big, nano, 1, 65535, &packets(3000, 7));
        let wrong = check(&bytes, &format!("big {big} nano {nano}"));
        assert_eq!(wrong, 0, "random payloads should never fool the sync guess");
    }
}

#[test]
fn payloads_that_look_like_records_are_caught() {
    // Every packet's payload is itself a run of valid little-endian pcap records, so a guess
    // can land inside a payload; the verification must catch every such guess.
    let inner = pcap_file(false, false, 1, 65535, &packets(40, 3));
    let pkts: Vec<Pkt> = packets(400, 9)
        .into_iter()
        .map(|mut p| {
            p.data = inner[24..].to_vec();
            p.wire_len = p.data.len() as u32;
            p
        })
        .collect();
    let bytes = pcap_file(false, false, 1, 262144, &pkts);
    let wrong = check(&bytes, "nested records");
    assert!(wrong > 0, "the nested records should fool some guesses (else this test is moot)");
}

#[test]
fn a_damaged_tail_is_reported_after_every_good_packet() {
    let mut bytes = pcap_file(false, false, 1, 65535, &packets(2000, 11));
    bytes.truncate(bytes.len() - 100);
    let (good, err) = sequential(&bytes);
    assert!(err.is_some() && good.len() == 1999);
    check(&bytes, "truncated");
    // A corrupt caplen in the middle.
    let mut bytes = pcap_file(false, false, 1, 65535, &packets(2000, 12));
    let mid = {
        let (pk, _) = sequential(&bytes);
        pk[1000].4 as usize
    };
    bytes[mid + 8..mid + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let (good, err) = sequential(&bytes);
    assert!(err == Some(mid as u64) && good.len() == 1000);
    check(&bytes, "bad caplen");
}
