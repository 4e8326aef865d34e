//! Packets as text: tcpdump's lines (`-e`, `-q`, `-t…`, `-x…`, `-A…`, `-#`, `-v`, `-S`, `-K`,
//! `-T`) or JSON Lines (`--json`), through sift-decode, for the default mode and live capture
//! alike. Times of day are local, as tcpdump's: the offset from UTC of each packet's instant
//! comes from the C library's time zone rules (`TZ`), through [`local_offset`].

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
    /// The printer the options ask for; `nano` for nanosecond timestamps, `packet_type` for `-T`.
    pub(crate) fn new(
        args: &DumpArgs,
        nano: bool,
        packet_type: Option<sift_decode::PacketType>,
    ) -> PacketPrinter {
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
            // As tcpdump: -X wins over -x, which wins over -A.
            let hex = match (args.hex_ascii, args.hex, args.ascii) {
                (0, 0, 0) => HexDump::None,
                (0, 0, 1) => HexDump::Ascii,
                (0, 0, _) => HexDump::AsciiLink,
                (0, 1, _) => HexDump::Hex,
                (0, _, _) => HexDump::HexLink,
                (1, _, _) => HexDump::HexAscii,
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
                number: args.number,
                skip_checksums: args.skip_checksums,
                packet_type,
                zone: Some(local_offset),
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

/// The local time zone's offset from UTC at `secs`, in seconds, as the C library's
/// `localtime` gives it (what tcpdump prints with). Packets come in time order, so the last
/// answer is kept for the next packet of the same second.
pub(crate) fn local_offset(secs: i64) -> i64 {
    use std::cell::Cell;
    thread_local! {
        static LAST: Cell<Option<(i64, i64)>> = const { Cell::new(None) };
    }
    if let Some((at, offset)) = LAST.get()
        && at == secs
    {
        return offset;
    }
    let offset = offset_at(secs).unwrap_or(0);
    LAST.set(Some((secs, offset)));
    offset
}

/// The offset at `secs`: the local calendar time `localtime` gives, read back, minus `secs`
/// (exact to the second, unlike `%z`).
fn offset_at(secs: i64) -> Option<i64> {
    let text = sift_capture::strftime_local("%Y %j %H %M %S", secs).ok()?;
    let mut fields = text.split(' ').map(|f| f.parse::<i64>().ok());
    let (year, yday, h, m, s) =
        (fields.next()??, fields.next()??, fields.next()??, fields.next()??, fields.next()??);
    // Days from 1970-01-01 to January 1st of `year` (proleptic Gregorian).
    let y = year - 1;
    let days =
        365 * (year - 1970) + (y / 4 - y / 100 + y / 400) - (1969 / 4 - 1969 / 100 + 1969 / 400);
    let local = (days + yday - 1) * 86_400 + h * 3600 + m * 60 + s;
    Some(local - secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_read_back_from_the_c_library() {
        // The process's zone is whatever TZ says; UTC is exact in any case.
        let t = 1_700_000_000;
        let text = sift_capture::strftime_local("%z", t).unwrap();
        let sign = if text.starts_with('-') { -1 } else { 1 };
        let hhmm: i64 = text[1..].parse().unwrap();
        let expected = sign * (hhmm / 100 * 3600 + hhmm % 100 * 60);
        assert_eq!(offset_at(t), Some(expected), "{text}");
        assert_eq!(local_offset(t), expected);
        assert_eq!(local_offset(t), expected, "from the cache");
        assert_eq!(offset_at(0).map(|o| o.abs() < 86_400), Some(true));
    }
}
