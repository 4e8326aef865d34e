//! tcpdump as the oracle for copying: `tcpdump [--nano] -r IN -w OUT` against this crate's
//! reader and pcap writer used as `sift -r IN -w OUT` uses them (the first interface's link
//! type and snapshot length in the header, the precision asked for, every packet written), byte
//! for byte, both one packet at a time ([`PcapWriter::write`]) and as the parallel copy
//! assembles a file ([`PcapBytes::verbatim`] ranges taken from the input where a record already
//! is what the writer writes, [`PcapWriter::record_header`] otherwise).
//!
//! The inputs are files built here with what captures should not hold but do — fractions of a
//! second of a second or more, seconds with the top bit set, bogus snapshot lengths (also on the
//! link types whose largest is not 256 KiB), pcapng resolutions and offsets that put times past
//! 2106 and before 1970, in both byte orders — and every capture of tcpdump's own test corpus
//! (`../shared/corpus/tcpdump/tests`). The counts callers warn with are checked too.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use sift_pcap::split::PcapBytes;
use sift_pcap::{Adjustments, ChangedTimestamps, PcapWriter, Precision, Reader, Timestamp};

/// What a copy produced: the bytes (`None` when the input does not open), and the counts.
struct Copy {
    bytes: Option<Vec<u8>>,
    adjustments: Adjustments,
    wrapped: ChangedTimestamps,
}

/// `sift -r input -w OUT [--nano]`, one packet at a time: what the file holds up to the end
/// or the first damage (tcpdump also keeps what it wrote before an error).
fn copy(input: &[u8], precision: Precision) -> Copy {
    let Ok(mut reader) = Reader::from_bytes(input.to_vec()) else {
        return Copy {
            bytes: None,
            adjustments: Adjustments::default(),
            wrapped: Default::default(),
        };
    };
    let Some(first) = reader.interfaces().first().cloned() else {
        return Copy {
            bytes: None,
            adjustments: reader.adjustments(),
            wrapped: Default::default(),
        };
    };
    let mut w =
        PcapWriter::new(Vec::new(), first.link_type, first.link_type_ext, first.snaplen, precision)
            .unwrap();
    while let Ok(Some(p)) = reader.next_packet() {
        w.write(p.timestamp, p.wire_len, p.data).unwrap();
    }
    let wrapped = w.wrapped();
    Copy { bytes: Some(w.finish().unwrap()), adjustments: reader.adjustments(), wrapped }
}

/// The parallel copy's assembly of a pcap input: the header the writer starts with, then each
/// record verbatim from the input where it already is what the writer writes, encoded
/// otherwise; also how many records were verbatim.
fn copy_in_pieces(input: &[u8], precision: Precision) -> Option<(Vec<u8>, usize)> {
    let reader = Reader::from_bytes(input.to_vec()).ok()?;
    let file: PcapBytes<'_> = reader.pcap_bytes()?;
    let iface = &reader.interfaces()[0];
    let header =
        PcapWriter::new(Vec::new(), iface.link_type, iface.link_type_ext, iface.snaplen, precision)
            .unwrap()
            .finish()
            .unwrap();
    let mut out = header;
    let mut verbatim = 0;
    for p in file.records(file.first_record(), file.len()) {
        let Ok(p) = p else { break };
        if let Some(range) = file.verbatim(&p, precision) {
            out.extend_from_slice(&file.bytes()[range.start as usize..range.end as usize]);
            verbatim += 1;
        } else {
            let h = PcapWriter::<std::io::Sink>::record_header(
                precision,
                p.timestamp,
                p.wire_len,
                p.data.len(),
            )
            .unwrap();
            out.extend_from_slice(&h);
            out.extend_from_slice(p.data);
        }
    }
    Some((out, verbatim))
}

/// `tcpdump [--nano] -r input -w OUT`: the output's bytes, `None` when tcpdump wrote none.
fn tcpdump_copy(tcpdump: &Path, dir: &Path, input: &Path, precision: Precision) -> Option<Vec<u8>> {
    let out = dir.join("tcpdump-out.pcap");
    let _ = std::fs::remove_file(&out);
    let mut c = Command::new(tcpdump);
    if precision == Precision::Nano {
        c.arg("--nano");
    }
    c.arg("-r").arg(input).arg("-w").arg(&out);
    let _ = c.output().expect("tcpdump runs");
    std::fs::read(&out).ok()
}

/// Copies `input` with both paths at both precisions and compares with tcpdump; returns the
/// micro-precision copy (for the caller's count checks).
fn check(tcpdump: &Path, dir: &Path, name: &str, input: &[u8]) -> Copy {
    let path = dir.join(name);
    std::fs::write(&path, input).unwrap();
    let mut micro = None;
    for precision in [Precision::Micro, Precision::Nano] {
        let theirs = tcpdump_copy(tcpdump, dir, &path, precision);
        let ours = copy(input, precision);
        assert!(ours.bytes == theirs, "{name} {precision:?}: the copy differs from tcpdump's");
        if let Some((pieces, _)) = copy_in_pieces(input, precision) {
            assert!(Some(pieces) == theirs, "{name} {precision:?}: the parallel copy differs");
        }
        if precision == Precision::Micro {
            micro = Some(ours);
        }
    }
    micro.unwrap()
}

/// One record of a pcap file, its fields as they are to be written.
struct Rec {
    secs: u32,
    frac: u32,
}

fn pcap_with(big: bool, nano: bool, link_type: u32, snaplen: u32, recs: &[Rec]) -> Vec<u8> {
    let data: Vec<u8> = (0u8..60).collect();
    let mut e = Enc::new(big);
    e.u32(if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    e.u16(2);
    e.u16(4);
    e.u32(0);
    e.u32(0);
    e.u32(snaplen);
    e.u32(link_type);
    for r in recs {
        e.u32(r.secs);
        e.u32(r.frac);
        e.u32(data.len() as u32);
        e.u32(data.len() as u32 + 4);
        e.buf.extend_from_slice(&data);
    }
    e.buf
}

/// Fractions around every boundary that matters: a second, 2^31 ns, 2^32 ns, 2^31, 2^32 − 1.
const FRACTIONS: &[u32] = &[
    0,
    999_999,
    1_000_000,
    2_147_483,
    2_147_484,
    4_294_967,
    4_294_968,
    999_999_999,
    1_000_000_000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fc18,
    u32::MAX,
];

#[test]
fn pcap_fields_are_copied_as_tcpdump_copies_them() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut recs: Vec<Rec> =
        FRACTIONS.iter().map(|&frac| Rec { secs: 1_418_145_370, frac }).collect();
    for secs in [0x7fff_ffff, 0x8000_0000, u32::MAX, 0] {
        recs.push(Rec { secs, frac: 5 });
    }
    for big in [false, true] {
        for nano in [false, true] {
            let name = format!(
                "fields-{}-{}.pcap",
                ["le", "be"][usize::from(big)],
                ["micro", "nano"][usize::from(nano)]
            );
            let input = pcap_with(big, nano, 1, 262_144, &recs);
            let copied = check(&tcpdump, dir.path(), &name, &input);
            // Fractions of a second or more are kept, and counted for a warning.
            let per_sec = if nano { 1_000_000_000 } else { 1_000_000 };
            let odd = recs.iter().filter(|r| r.frac >= per_sec).count() as u64;
            let first = recs.iter().position(|r| r.frac >= per_sec).unwrap();
            assert_eq!(copied.adjustments.odd_fractions, odd, "{name}");
            assert_eq!(
                copied.adjustments.first_odd_fraction,
                Some(24 + first as u64 * 76),
                "{name}"
            );
            assert_eq!(copied.wrapped.count, 0, "{name}: a pcap input never wraps");
            // A little-endian microsecond file copied at microseconds is all verbatim.
            if !big && !nano {
                let (_, verbatim) = copy_in_pieces(&input, Precision::Micro).unwrap();
                assert_eq!(verbatim, recs.len(), "{name}: records copied raw");
            }
        }
    }
}

#[test]
fn bogus_snapshot_lengths_are_written_as_libpcap_reads_them() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let recs = [Rec { secs: 1, frac: 0 }];
    // Ethernet, D-Bus (128 MiB), USBPcap (1 MiB), EBHSCR (8 MiB).
    for link in [1, 231, 249, 279] {
        for snaplen in [0, 65_535, 262_145, 0x7fff_ffff, 0x8000_0000, u32::MAX] {
            let name = format!("snap-{link}-{snaplen}.pcap");
            let copied =
                check(&tcpdump, dir.path(), &name, &pcap_with(false, false, link, snaplen, &recs));
            let bogus = snaplen == 0 || snaplen > 0x7fff_ffff;
            assert_eq!(copied.adjustments.snaplens, u64::from(bogus), "{name}");
            assert_eq!(copied.adjustments.first_snaplen, bogus.then_some(snaplen), "{name}");
        }
    }
}

/// A pcapng file: one interface with `tsresol` (`None`: the default µs), `tsoffset` and
/// `snaplen`; an EPB per timestamp count, then a simple packet block.
fn pcapng_with(
    big: bool,
    tsresol: Option<u8>,
    tsoffset: i64,
    snaplen: u32,
    counts: &[u64],
) -> Vec<u8> {
    let data: Vec<u8> = (0u8..42).collect();
    let mut e = Enc::new(big);
    shb(&mut e);
    let mut b = Enc::new(big);
    b.u16(1);
    b.u16(0);
    b.u32(snaplen);
    if let Some(r) = tsresol {
        b.u16(9);
        b.u16(1);
        b.buf.extend_from_slice(&[r, 0, 0, 0]);
    }
    b.u16(14);
    b.u16(8);
    b.u64(tsoffset as u64);
    b.u32(0);
    block(&mut e, 1, &b.buf);
    for &t in counts {
        let mut b = Enc::new(big);
        b.u32(0);
        b.u32((t >> 32) as u32);
        b.u32(t as u32);
        b.u32(data.len() as u32);
        b.u32(data.len() as u32);
        b.buf.extend_from_slice(&data);
        block(&mut e, 6, &b.buf);
    }
    let mut b = Enc::new(big);
    b.u32(data.len() as u32);
    b.buf.extend_from_slice(&data);
    block(&mut e, 3, &b.buf);
    e.buf
}

#[test]
fn pcapng_times_past_2106_and_before_1970_are_written_wrapped() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    const T: u64 = 1 << 32;
    // (resolution byte, if_tsoffset, counts, how many of the packets a pcap record cannot hold)
    let cases: &[(Option<u8>, i64, &[u64], u64)] = &[
        (None, 0, &[(T + 5) * 1_000_000 + 123_456, 1_418_145_370_000_000], 1),
        (Some(9), 0, &[(T + 5) * 1_000_000_000 + 123_456_789, 5], 1),
        (Some(0), 0, &[T + 1, u64::MAX, 12_345], 2),
        (Some(6), -2_000_000_000, &[5_000_007, 1_000_000, 0], 4),
        (Some(9), -10, &[5_000_000_007, 12_000_000_000], 2),
        (Some(6), 1 << 33, &[1_000_001], 2),
        (Some(0x80 | 30), 0, &[(1_418_145_370 << 30) + 12_345, ((T + 3) << 30) + (1 << 29)], 1),
        (Some(12), -5, &[14_181_453_999_999_999_999], 1),
        (Some(19), 0, &[18_000_000_000_000_000_123], 0),
        (Some(3), 7, &[1_418_145_370_999], 0),
        (Some(6), i64::MIN, &[5], 2),
    ];
    for big in [false, true] {
        for (i, &(tsresol, tsoffset, counts, wrapped)) in cases.iter().enumerate() {
            let name = format!("times-{i}-{}.pcapng", ["le", "be"][usize::from(big)]);
            let input = pcapng_with(big, tsresol, tsoffset, 0, counts);
            let copied = check(&tcpdump, dir.path(), &name, &input);
            // The simple packet block counts too: its time is 0 plus the offset.
            assert_eq!(copied.wrapped.count, wrapped, "{name}: packets wrapped");
            assert_eq!(copied.adjustments.snaplens, 1, "{name}: snaplen 0 read as 262144");
        }
    }
    // A bogus interface snapshot length, both kinds.
    for snaplen in [u32::MAX, 300_000] {
        let name = format!("ng-snap-{snaplen}.pcapng");
        check(&tcpdump, dir.path(), &name, &pcapng_with(false, None, 0, snaplen, &[1_000_000]));
    }
}

/// The first offset whose bytes differ, for messages.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()))
}

#[test]
fn tcpdump_corpus_copies_byte_for_byte() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let corpus = sift_testkit::shared_dir().join("corpus/tcpdump/tests");
    if !corpus.is_dir() {
        sift_testkit::oracle_missing::<()>(
            "tcpdump corpus",
            format!("{} is missing", corpus.display()),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    files.sort();
    let (mut copied, mut refused, mut adjusted) = (0, 0, Adjustments::default());
    for path in &files {
        let input = std::fs::read(path).unwrap();
        let theirs = tcpdump_copy(&tcpdump, dir.path(), path, Precision::Micro);
        let ours = copy(&input, Precision::Micro);
        let name = path.file_name().unwrap().to_string_lossy();
        match (&ours.bytes, &theirs) {
            (Some(a), Some(b)) if a != b => {
                panic!("{name}: the copies differ from byte {}", first_difference(a, b))
            }
            (Some(_), Some(_)) => copied += 1,
            (None, None) => refused += 1,
            (a, b) => panic!(
                "{name}: sift wrote {:?} bytes, tcpdump {:?}",
                a.as_ref().map(Vec::len),
                b.as_ref().map(Vec::len)
            ),
        }
        if let Some((pieces, _)) = copy_in_pieces(&input, Precision::Micro) {
            assert!(Some(pieces) == theirs, "{name}: the parallel copy differs");
        }
        adjusted.snaplens += ours.adjustments.snaplens;
        adjusted.odd_fractions += ours.adjustments.odd_fractions;
    }
    eprintln!(
        "{copied} captures copied as tcpdump copies them, {refused} refused by both; \
         {} bogus snapshot lengths, {} records with odd fractions among them",
        adjusted.snaplens, adjusted.odd_fractions
    );
    assert!(copied > 800, "only {copied} captures copied");
    // The corpus holds both kinds of oddity (lisp_invalid_length.pcap, timestamp_invalid_*).
    assert!(adjusted.snaplens > 0 && adjusted.odd_fractions > 0);
}

#[test]
fn a_copy_keeps_the_timestamp_it_was_given() {
    // Without tcpdump: what the writer writes for a record kept as recorded is what was read.
    let recs: Vec<Rec> = FRACTIONS.iter().map(|&frac| Rec { secs: 7, frac }).collect();
    for big in [false, true] {
        let input = pcap_with(big, false, 1, 262_144, &recs);
        let out = copy(&input, Precision::Micro).bytes.unwrap();
        let mut r = Reader::from_bytes(out).unwrap();
        let mut fracs = Vec::new();
        while let Some(p) = r.next_packet().unwrap() {
            let t: Timestamp = p.timestamp;
            fracs.push(t.timeval(sift_pcap::FracUnit::Micros).frac as u32);
        }
        assert_eq!(fracs, FRACTIONS, "big={big}");
    }
}
