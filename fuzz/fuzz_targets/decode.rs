//! Any bytes as a packet of any link type, printed with any option set and as JSON: the decoder
//! and both renderers never panic, the text ends with exactly one trailing newline per packet
//! (two for VXLAN and `-v` lines is fine, but never none), and the JSON is one line of UTF-8.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_decode::{HexDump, JsonWriter, Options, PacketType, Printer, TimeFormat};
use sift_pcap::Timestamp;

const LINK_TYPES: [u16; 9] = [1, 113, 276, 101, 0, 108, 228, 229, 147];

fuzz_target!(|input: &[u8]| {
    let [sel, flags, extra, data @ ..] = input else { return };
    let link_type = sift_pcap::LinkType::new(LINK_TYPES[usize::from(*sel) % LINK_TYPES.len()]);
    let opts = Options {
        link_header: flags & 1 != 0,
        quiet: flags & 2 != 0,
        verbose: (flags >> 2) & 3,
        hex: match (flags >> 4) & 7 {
            1 => HexDump::Hex,
            2 => HexDump::HexLink,
            3 => HexDump::HexAscii,
            4 => HexDump::HexAsciiLink,
            5 => HexDump::Ascii,
            6 => HexDump::AsciiLink,
            _ => HexDump::None,
        },
        time: if flags & 0x80 != 0 { TimeFormat::DeltaPrevious } else { TimeFormat::TimeOfDay },
        nano: extra & 1 != 0,
        absolute_seq: extra & 2 != 0,
        number: sel & 0x10 != 0,
        skip_checksums: sel & 0x20 != 0,
        packet_type: match sel >> 6 {
            1 => Some(PacketType::Domain),
            2 => Some(PacketType::Vxlan),
            _ => None,
        },
        // A zone far west of UTC: local times before the epoch.
        zone: (extra & 0x80 != 0).then_some((|_| -12 * 3600) as sift_decode::UtcOffset),
    };
    // The wire length is the captured length or more (a truncated capture).
    let wire = data.len() as u32 + u32::from(extra >> 2) * 7;
    let ts = Timestamp::new(u64::from(*extra) * 1_000_003, u32::from(*sel) * 3_900_001);
    let mut printer = Printer::new(opts);
    let mut out = Vec::new();
    // Twice, so the TCP conversation table and time deltas see a second packet.
    for _ in 0..2 {
        let before = out.len();
        printer.print(&mut out, link_type, ts, wire, data);
        assert!(out.len() > before && out.ends_with(b"\n"));
    }
    let mut json = Vec::new();
    JsonWriter::new().write(&mut json, link_type, ts, wire, data);
    let text = std::str::from_utf8(&json).expect("JSON is UTF-8");
    assert_eq!(text.matches('\n').count(), 1);
    assert!(text.starts_with('{') && text.ends_with("}\n"));
});
