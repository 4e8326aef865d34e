//! Packets as text: tcpdump's lines (`-e`, `-q`, `-t…`, `-x…`, `-v`, `-S`) or JSON Lines
//! (`--json`), through sift-decode, for the default mode and live capture alike.

use std::io::{self, Write};

use sift_pcap::Packet;

use crate::dump::DumpArgs;

/// How packets are printed: tcpdump's text or JSON Lines, into a reused buffer.
pub(crate) struct PacketPrinter {
    kind: PrinterKind,
    buf: Vec<u8>,
}

enum PrinterKind {
    Text(sift_decode::Printer),
    Json(sift_decode::JsonWriter),
}

impl PacketPrinter {
    /// The printer the options ask for; `nano` for nanosecond timestamps.
    pub(crate) fn new(args: &DumpArgs, nano: bool) -> PacketPrinter {
        use sift_decode::{HexDump, TimeFormat};
        let kind = if args.json {
            PrinterKind::Json(sift_decode::JsonWriter::new())
        } else {
            let time = match args.time {
                0 => TimeFormat::TimeOfDay,
                1 => TimeFormat::None,
                2 => TimeFormat::Epoch,
                3 => TimeFormat::DeltaPrevious,
                4 => TimeFormat::DateTime,
                _ => TimeFormat::DeltaFirst,
            };
            let hex = match (args.hex_ascii, args.hex) {
                (0, 0) => HexDump::None,
                (0, 1) => HexDump::Hex,
                (0, _) => HexDump::HexLink,
                (1, _) => HexDump::HexAscii,
                _ => HexDump::HexAsciiLink,
            };
            PrinterKind::Text(sift_decode::Printer::new(sift_decode::Options {
                link_header: args.link_header,
                quiet: args.quiet,
                time,
                nano,
                hex,
                verbose: args.verbose,
                absolute_seq: args.absolute_seq,
            }))
        };
        PacketPrinter { kind, buf: Vec::with_capacity(1 << 12) }
    }

    /// Prints one packet to `out`.
    pub(crate) fn print(&mut self, out: &mut impl Write, packet: &Packet<'_>) -> io::Result<()> {
        self.buf.clear();
        let (lt, ts, len, data) =
            (packet.link_type, packet.timestamp, packet.wire_len, packet.data);
        match &mut self.kind {
            PrinterKind::Text(p) => p.print(&mut self.buf, lt, ts, len, data),
            PrinterKind::Json(j) => j.write(&mut self.buf, lt, ts, len, data),
        }
        out.write_all(&self.buf)
    }
}
