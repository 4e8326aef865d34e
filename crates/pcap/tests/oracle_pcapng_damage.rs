//! Damaged pcapng, sift against the system libpcap: for every class of damage (empty and short
//! bodies of each block type, trailing lengths that differ from the leading one for each block
//! type, option lists cut short or running past the body, unknown blocks, odd section headers,
//! files that end early), in both byte orders, sift delivers exactly the packets libpcap's
//! `pcap_next_ex` delivers and ends with an error exactly where libpcap does. Where libpcap reads
//! past damage (it skips statistics blocks and blocks it does not know unread, and does not check
//! the first section header's trailer or any section header's options), sift reads on and counts
//! what it skipped ([`sift_pcap::Reader::skipped_damage`]).
//!
//! Differences kept on purpose are listed in [`DELIBERATE`], each with its reason.

mod common;

use common::*;
use sift_libpcap::Libpcap;

/// Cases where sift reads more than libpcap 1.10, on purpose.
const DELIBERATE: &[(&str, &str)] = &[
    (
        "section in the other byte order",
        "sift reads every section in its own byte order (the format allows it); libpcap 1.10 \
         refuses a second section whose byte order differs from the first's",
    ),
    (
        "interface of another link type",
        "sift keeps each packet's interface and link type; libpcap 1.10 refuses a second \
         interface whose link type differs from the first's",
    ),
    (
        "interface of another snapshot length",
        "sift keeps each interface's snapshot length; libpcap 1.10 refuses a second interface \
         whose snapshot length differs from the first's",
    ),
    (
        "no interface description block",
        "a capture with no interface holds no packets: sift reads it as empty, libpcap fails \
         at open (\"the capture file has no Interface Description Blocks\")",
    ),
];

/// What a reader made of a file: the packets (seconds, nanoseconds, wire length, bytes) and
/// the error that ended the read, if any.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    packets: Vec<(u64, u32, u32, Vec<u8>)>,
    error: Option<String>,
}

fn libpcap_outcome(pcap: &Libpcap, path: &std::path::Path) -> Outcome {
    match pcap.read_offline(path, true) {
        Ok(c) => Outcome {
            packets: c
                .packets
                .into_iter()
                .map(|p| (p.ts_sec as u64, p.ts_frac, p.wirelen, p.data))
                .collect(),
            error: c.error,
        },
        Err(e) => Outcome { packets: Vec::new(), error: Some(e.to_string()) },
    }
}

fn sift_outcome(bytes: &[u8]) -> (Outcome, u64) {
    let mut reader = match sift_pcap::Reader::from_bytes(bytes.to_vec()) {
        Ok(r) => r,
        Err(e) => return (Outcome { packets: Vec::new(), error: Some(e.to_string()) }, 0),
    };
    let mut packets = Vec::new();
    let error = loop {
        match reader.next_packet() {
            Ok(Some(p)) => {
                packets.push((p.timestamp.secs, p.timestamp.nanos, p.wire_len, p.data.to_vec()))
            }
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    (Outcome { packets, error }, reader.skipped_damage().count)
}

/// A block with an explicit trailing length (`None`: the right one).
fn raw_block(e: &mut Enc, block_type: u32, body: &[u8], trailer: Option<u32>) {
    let padded = body.len().next_multiple_of(4);
    let len = (padded + 12) as u32;
    e.u32(block_type);
    e.u32(len);
    e.buf.extend_from_slice(body);
    e.pad4();
    e.u32(trailer.unwrap_or(len));
}

/// An option: code, length, value padded to 4.
fn opt(b: &mut Enc, code: u16, value: &[u8]) {
    b.u16(code);
    b.u16(value.len() as u16);
    b.buf.extend_from_slice(value);
    b.pad4();
}

/// An option header announcing `length` bytes, with no value after it.
fn opt_header(b: &mut Enc, code: u16, length: u16) {
    b.u16(code);
    b.u16(length);
}

fn shb_body(big: bool, major: u16, minor: u16, options: impl FnOnce(&mut Enc)) -> Vec<u8> {
    let mut b = Enc::new(big);
    b.u32(0x1A2B_3C4D);
    b.u16(major);
    b.u16(minor);
    b.u64(u64::MAX);
    options(&mut b);
    b.buf
}

fn idb_body(big: bool, snaplen: u32, options: impl FnOnce(&mut Enc)) -> Vec<u8> {
    let mut b = Enc::new(big);
    b.u16(1);
    b.u16(0);
    b.u32(snaplen);
    options(&mut b);
    b.buf
}

fn isb_body(big: bool, iface: u32, options: impl FnOnce(&mut Enc)) -> Vec<u8> {
    let mut b = Enc::new(big);
    b.u32(iface);
    b.u32(0);
    b.u32(0);
    options(&mut b);
    b.buf
}

fn epb_body(big: bool, iface: u32, p: &Pkt, caplen: u32, data: &[u8]) -> Vec<u8> {
    let mut b = Enc::new(big);
    let units = p.secs * 1_000_000 + u64::from(p.nanos) / 1000;
    b.u32(iface);
    b.u32((units >> 32) as u32);
    b.u32(units as u32);
    b.u32(caplen);
    b.u32(p.wire_len);
    b.buf.extend_from_slice(data);
    b.pad4();
    b.buf
}

/// A file: SHB, IDB (Ethernet, `snaplen`), three packets, whatever `damage` adds, three more
/// packets. `first_shb` replaces the first section header when given.
fn file(
    big: bool,
    snaplen: u32,
    first_shb: Option<&BlockWriter>,
    damage: &dyn Fn(&mut Enc, &[Pkt]),
) -> Vec<u8> {
    let pkts = packets(6, 77);
    let mut e = Enc::new(big);
    match first_shb {
        Some(f) => f(&mut e),
        None => shb(&mut e),
    }
    raw_block(&mut e, 1, &idb_body(big, snaplen, |b| b.u32(0)), None);
    for p in &pkts[..3] {
        epb(&mut e, 0, 6, p);
    }
    damage(&mut e, &pkts);
    for p in &pkts[3..] {
        epb(&mut e, 0, 6, p);
    }
    e.buf
}

type Damage = Box<dyn Fn(&mut Enc, &[Pkt])>;
/// Appends a block (or several) to a file.
type BlockWriter = dyn Fn(&mut Enc);

/// Every damage class, by name: what is inserted after the third packet.
fn damages() -> Vec<(&'static str, Damage)> {
    let mut cases: Vec<(&'static str, Damage)> = Vec::new();
    let mut add = |name, f: Damage| cases.push((name, f));
    // Blocks libpcap does not know: skipped whatever they hold.
    add("unknown block, empty body", Box::new(|e, _| raw_block(e, 0x0BAD, &[], None)));
    add("unknown block with a body", Box::new(|e, _| raw_block(e, 0x0BAD, &[7; 24], None)));
    add("custom block", Box::new(|e, _| raw_block(e, 0x4000_0BAD, &[1, 2, 3, 4, 5], None)));
    add("name resolution block of garbage", Box::new(|e, _| raw_block(e, 4, &[0xff; 8], None)));
    add("decryption secrets block, short", Box::new(|e, _| raw_block(e, 0x0A, &[1], None)));
    // Interface statistics: libpcap skips them unread.
    add("statistics block, empty body", Box::new(|e, _| raw_block(e, 5, &[], None)));
    add("statistics block, 4-byte body", Box::new(|e, _| raw_block(e, 5, &[0; 4], None)));
    add("statistics block, 8-byte body", Box::new(|e, _| raw_block(e, 5, &[0; 8], None)));
    add(
        "statistics block, unknown interface",
        Box::new(|e, _| {
            let big = e.big;
            raw_block(e, 5, &isb_body(big, 9, |b| b.u32(0)), None)
        }),
    );
    add(
        "statistics block, option past the body",
        Box::new(|e, _| {
            let big = e.big;
            raw_block(e, 5, &isb_body(big, 0, |b| opt_header(b, 4, 200)), None)
        }),
    );
    add(
        "statistics block, options without end",
        Box::new(|e, _| {
            let big = e.big;
            raw_block(e, 5, &isb_body(big, 0, |b| opt(b, 4, &[1; 8])), None)
        }),
    );
    add(
        "statistics block, short counter",
        Box::new(|e, _| {
            let big = e.big;
            raw_block(e, 5, &isb_body(big, 0, |b| opt(b, 4, &[1; 3])), None)
        }),
    );
    // A second interface description (same link type and snapshot length, as libpcap 1.10
    // requires), damaged.
    add("interface block, empty body", Box::new(|e, _| raw_block(e, 1, &[], None)));
    add("interface block, 4-byte body", Box::new(|e, _| raw_block(e, 1, &[1, 0, 0, 0], None)));
    let idb = |name, options: fn(&mut Enc)| -> (&'static str, Damage) {
        (
            name,
            Box::new(move |e: &mut Enc, _: &[Pkt]| {
                let big = e.big;
                raw_block(e, 1, &idb_body(big, 0, options), None)
            }),
        )
    };
    for (name, f) in [
        idb("interface block, no options", |_| {}),
        idb("interface block, options without end", |b| opt(b, 2, b"eth1")),
        idb("interface block, option past the body", |b| opt_header(b, 2, 100)),
        idb("interface block, end of options with a length", |b| {
            opt_header(b, 0, 4);
            b.u32(0)
        }),
        idb("interface block, garbage after the end of options", |b| {
            b.u32(0);
            b.u32(0xffff_ffff)
        }),
        idb("interface block, comment of odd length", |b| {
            opt(b, 1, b"hello");
            b.u32(0)
        }),
        idb("interface block, if_tsresol of 2 bytes", |b| {
            opt(b, 9, &[6, 0]);
            b.u32(0)
        }),
        idb("interface block, if_tsresol twice", |b| {
            opt(b, 9, &[6]);
            opt(b, 9, &[6]);
            b.u32(0)
        }),
        idb("interface block, if_tsresol 10^-20", |b| {
            opt(b, 9, &[20]);
            b.u32(0)
        }),
        idb("interface block, if_tsresol 2^-64", |b| {
            opt(b, 9, &[0x80 | 64]);
            b.u32(0)
        }),
        idb("interface block, if_tsresol empty", |b| {
            opt(b, 9, &[]);
            b.u32(0)
        }),
        idb("interface block, if_tsoffset of 4 bytes", |b| {
            opt(b, 14, &[0; 4]);
            b.u32(0)
        }),
        idb("interface block, if_tsoffset twice", |b| {
            opt(b, 14, &[0; 8]);
            opt(b, 14, &[0; 8]);
            b.u32(0)
        }),
        idb("interface block, unknown option", |b| {
            opt(b, 0x7777, &[1, 2, 3]);
            b.u32(0)
        }),
    ] {
        add(name, f);
    }
    add(
        "interface of another link type",
        Box::new(|e, p| {
            let mut b = Enc::new(e.big);
            b.u16(113);
            b.u16(0);
            b.u32(0);
            raw_block(e, 1, &b.buf, None);
            epb(e, 1, 6, &p[0]);
        }),
    );
    add(
        "interface of another snapshot length",
        Box::new(|e, p| {
            let big = e.big;
            raw_block(e, 1, &idb_body(big, 2000, |_| {}), None);
            epb(e, 1, 6, &p[0]);
        }),
    );
    // Packet blocks.
    add("enhanced packet block, empty body", Box::new(|e, _| raw_block(e, 6, &[], None)));
    add("enhanced packet block, 16-byte body", Box::new(|e, _| raw_block(e, 6, &[0; 16], None)));
    add(
        "enhanced packet block, caplen past the body",
        Box::new(|e, p| {
            let big = e.big;
            raw_block(e, 6, &epb_body(big, 0, &p[0], 100, &[0; 40]), None)
        }),
    );
    add(
        "enhanced packet block, option past the body",
        Box::new(|e, p| {
            let big = e.big;
            let mut body = epb_body(big, 0, &p[0], p[0].data.len() as u32, &p[0].data);
            let mut o = Enc::new(big);
            opt_header(&mut o, 2, 300);
            body.extend_from_slice(&o.buf);
            raw_block(e, 6, &body, None)
        }),
    );
    add(
        "enhanced packet block, unknown interface",
        Box::new(|e, p| {
            let big = e.big;
            raw_block(e, 6, &epb_body(big, 3, &p[0], 4, &[1, 2, 3, 4]), None)
        }),
    );
    add("packet block, empty body", Box::new(|e, _| raw_block(e, 2, &[], None)));
    add("packet block, 16-byte body", Box::new(|e, _| raw_block(e, 2, &[0; 16], None)));
    add("simple packet block, empty body", Box::new(|e, _| raw_block(e, 3, &[], None)));
    add(
        "simple packet block, length past the data",
        Box::new(|e, _| {
            let mut b = Enc::new(e.big);
            b.u32(1000);
            b.buf.extend_from_slice(&[9; 12]);
            raw_block(e, 3, &b.buf, None)
        }),
    );
    add(
        "simple packet block, length within the data",
        Box::new(|e, _| {
            let mut b = Enc::new(e.big);
            b.u32(5);
            b.buf.extend_from_slice(&[9; 12]);
            raw_block(e, 3, &b.buf, None)
        }),
    );
    // Trailing lengths that differ from the leading ones, for each block type.
    for (name, block_type) in [
        ("trailer mismatch: interface block", 1u32),
        ("trailer mismatch: enhanced packet block", 6),
        ("trailer mismatch: packet block", 2),
        ("trailer mismatch: simple packet block", 3),
        ("trailer mismatch: statistics block", 5),
        ("trailer mismatch: unknown block", 0x0BAD),
    ] {
        add(
            name,
            Box::new(move |e, p| {
                let big = e.big;
                let body = match block_type {
                    1 => idb_body(big, 0, |b| b.u32(0)),
                    6 => epb_body(big, 0, &p[0], 4, &[1, 2, 3, 4]),
                    2 => {
                        let mut b = epb_body(big, 0, &p[0], 4, &[1, 2, 3, 4]);
                        b[2] = 0;
                        b[3] = 0;
                        b
                    }
                    3 => vec![4, 0, 0, 0, 1, 2, 3, 4],
                    5 => isb_body(big, 0, |b| b.u32(0)),
                    _ => vec![0; 8],
                };
                let len = (body.len().next_multiple_of(4) + 12) as u32;
                raw_block(e, block_type, &body, Some(len + 4))
            }),
        );
    }
    add(
        "trailer mismatch: later section header",
        Box::new(|e, _| {
            let big = e.big;
            raw_block(e, 0x0A0D_0D0A, &shb_body(big, 1, 0, |_| {}), Some(99));
            raw_block(e, 1, &idb_body(big, 0, |b| b.u32(0)), None);
        }),
    );
    // Later section headers.
    let section = |name, major, minor, options: fn(&mut Enc)| -> (&'static str, Damage) {
        (
            name,
            Box::new(move |e: &mut Enc, _: &[Pkt]| {
                let big = e.big;
                raw_block(e, 0x0A0D_0D0A, &shb_body(big, major, minor, options), None);
                raw_block(e, 1, &idb_body(big, 0, |b| b.u32(0)), None);
            }),
        )
    };
    for (name, f) in [
        section("later section header", 1, 0, |_| {}),
        section("later section header, version 1.3", 1, 3, |_| {}),
        section("later section header, version 2.0", 2, 0, |_| {}),
        section("later section header, option past the body", 1, 0, |b| opt_header(b, 4, 64)),
        section("later section header, options without end", 1, 0, |b| opt(b, 4, b"x")),
    ] {
        add(name, f);
    }
    add("later section header, empty body", Box::new(|e, _| raw_block(e, 0x0A0D_0D0A, &[], None)));
    add(
        "section in the other byte order",
        Box::new(|e, _| {
            let mut other = Enc::new(!e.big);
            shb(&mut other);
            raw_block(&mut other, 1, &idb_body(!e.big, 0, |b| b.u32(0)), None);
            e.buf.extend_from_slice(&other.buf);
            // The packets after it are in the first section's byte order: start a section
            // in that order again.
            shb(e);
            let big = e.big;
            raw_block(e, 1, &idb_body(big, 0, |b| b.u32(0)), None);
        }),
    );
    // Lengths.
    for (name, length) in [
        ("block length 13", 13u32),
        ("block length 8", 8),
        ("block length 0", 0),
        ("block length past 16 MiB", (16 << 20) + 4),
    ] {
        add(
            name,
            Box::new(move |e, _| {
                e.u32(0x0BAD);
                e.u32(length);
                e.buf.extend_from_slice(&[0; 64]);
            }),
        );
    }
    cases
}

#[test]
fn damaged_pcapng_reads_like_libpcap() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut deliberate_differences = 0;
    let mut differences = Vec::new();
    let mut compare = |name: String, bytes: Vec<u8>| {
        let path = dir.path().join("case.pcapng");
        std::fs::write(&path, &bytes).unwrap();
        let theirs = libpcap_outcome(&pcap, &path);
        let (ours, skipped) = sift_outcome(&bytes);
        let same = ours.packets == theirs.packets && ours.error.is_some() == theirs.error.is_some();
        let deliberate = DELIBERATE.iter().any(|(d, _)| name.starts_with(d));
        eprintln!(
            "{name}: libpcap {} packets{}, sift {} packets{}{}",
            theirs.packets.len(),
            theirs.error.as_deref().map(|e| format!(" then \"{e}\"")).unwrap_or_default(),
            ours.packets.len(),
            ours.error.as_deref().map(|e| format!(" then \"{e}\"")).unwrap_or_default(),
            if skipped > 0 { format!(" ({skipped} skipped)") } else { String::new() },
        );
        if same == deliberate {
            differences.push(name);
        }
        checked += 1;
        deliberate_differences += usize::from(deliberate);
    };
    for big in [false, true] {
        let order = if big { "big-endian" } else { "little-endian" };
        for (name, damage) in damages() {
            compare(format!("{name} ({order})"), file(big, 0, None, &*damage));
        }
        // The first section header: its trailer and options, which libpcap never reads.
        let first_shb: [(&str, &BlockWriter); 4] = [
            ("first section header, trailer mismatch", &|e: &mut Enc| {
                let big = e.big;
                raw_block(e, 0x0A0D_0D0A, &shb_body(big, 1, 0, |_| {}), Some(7))
            }),
            ("first section header, option past the body", &|e: &mut Enc| {
                let big = e.big;
                raw_block(e, 0x0A0D_0D0A, &shb_body(big, 1, 0, |b| opt_header(b, 4, 64)), None)
            }),
            ("first section header, version 1.2", &|e: &mut Enc| {
                let big = e.big;
                raw_block(e, 0x0A0D_0D0A, &shb_body(big, 1, 2, |_| {}), None)
            }),
            ("first section header, version 1.1", &|e: &mut Enc| {
                let big = e.big;
                raw_block(e, 0x0A0D_0D0A, &shb_body(big, 1, 1, |_| {}), None)
            }),
        ];
        for (name, shb) in first_shb {
            compare(format!("{name} ({order})"), file(big, 0, Some(shb), &|_, _| {}));
        }
        // Snapshot lengths: a packet longer than the interface's snapshot length.
        compare(
            format!("caplen above the snapshot length ({order})"),
            file(big, 64, None, &|_, _| {}),
        );
        // Where the file ends.
        let whole = file(big, 0, None, &|_, _| {});
        for (name, cut) in [
            ("file cut inside the last block", whole.len() - 5),
            ("file cut inside the last block header", whole.len() - (whole.len() - 8) % 4 - 4),
        ] {
            compare(format!("{name} ({order})"), whole[..cut].to_vec());
        }
        let mut trailing = whole.clone();
        trailing.extend_from_slice(&[0; 3]);
        compare(format!("3 bytes after the last block ({order})"), trailing);
        // No interface, or a packet before any.
        let mut e = Enc::new(big);
        shb(&mut e);
        compare(format!("no interface description block ({order})"), e.buf.clone());
        epb(&mut e, 0, 6, &packets(1, 5)[0]);
        compare(format!("packet before any interface ({order})"), e.buf);
        let mut e = Enc::new(big);
        shb(&mut e);
        raw_block(&mut e, 5, &[], None);
        raw_block(&mut e, 1, &idb_body(big, 0, |b| b.u32(0)), None);
        epb(&mut e, 0, 6, &packets(1, 5)[0]);
        compare(format!("statistics block before any interface ({order})"), e.buf);
    }
    assert!(
        differences.is_empty(),
        "sift and libpcap differ on {} of {checked} damaged files (or agree where a difference \
         is listed as deliberate): {differences:#?}",
        differences.len()
    );
    eprintln!(
        "{} of {checked} damaged pcapng files read exactly as libpcap reads them, {} differ \
         on purpose",
        checked - deliberate_differences,
        deliberate_differences
    );
}
