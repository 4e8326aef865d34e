//! TCP headers (RFC 9293) and their options.

use crate::bytes::{get16, get32, need, options_area, ports, set16, set32, tlv, view, walk};
use crate::checksum;
use crate::{Error, Header, Result};

/// Bytes in a header without options.
pub const HEADER_LEN: usize = 20;
/// The longest header (data offset 15).
pub const MAX_HEADER_LEN: usize = 60;

/// Flag bits of [`TcpPacket::flags`].
pub mod flags {
    /// FIN.
    pub const FIN: u16 = 0x001;
    /// SYN.
    pub const SYN: u16 = 0x002;
    /// RST.
    pub const RST: u16 = 0x004;
    /// PSH.
    pub const PSH: u16 = 0x008;
    /// ACK.
    pub const ACK: u16 = 0x010;
    /// URG.
    pub const URG: u16 = 0x020;
    /// ECE.
    pub const ECE: u16 = 0x040;
    /// CWR.
    pub const CWR: u16 = 0x080;
    /// AE (accurate ECN, formerly NS).
    pub const AE: u16 = 0x100;
}

/// Option kinds.
pub mod option {
    /// End of option list.
    pub const EOL: u8 = 0;
    /// No operation.
    pub const NOP: u8 = 1;
    /// Maximum segment size.
    pub const MSS: u8 = 2;
    /// Window scale.
    pub const WINDOW_SCALE: u8 = 3;
    /// SACK permitted.
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK blocks.
    pub const SACK: u8 = 5;
    /// Timestamps.
    pub const TIMESTAMPS: u8 = 8;
}

/// Field offsets.
pub mod field {
    pub use crate::ports::{DST_PORT, SRC_PORT};
    /// Sequence number.
    pub const SEQ: usize = 4;
    /// Acknowledgment number.
    pub const ACK: usize = 8;
    /// Data offset (4 bits), reserved (3) and flags (9).
    pub const FLAGS: usize = 12;
    /// Window.
    pub const WINDOW: usize = 14;
    /// Checksum.
    pub const CHECKSUM: usize = 16;
    /// Urgent pointer.
    pub const URGENT: usize = 18;
}

view! {
    /// A TCP header and its segment's data. The view's buffer is the whole segment: the
    /// checksum covers it.
    TcpPacket
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// The fixed header must fit, the data offset be at least 5 and the header fit.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Tcp, data, HEADER_LEN)?;
        let hlen = self.header_len();
        if hlen < HEADER_LEN {
            return Err(Error::invalid(
                Header::Tcp,
                field::FLAGS,
                "data offset",
                (hlen / 4) as u32,
            ));
        }
        need(Header::Tcp, data, hlen)
    }

    /// Sequence number.
    #[inline]
    pub fn seq_number(&self) -> u32 {
        get32(self.buffer.as_ref(), field::SEQ)
    }

    /// Acknowledgment number.
    #[inline]
    pub fn ack_number(&self) -> u32 {
        get32(self.buffer.as_ref(), field::ACK)
    }

    /// Header length in bytes (data offset × 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::FLAGS] >> 4) * 4
    }

    /// The nine flag bits ([`flags`]).
    #[inline]
    pub fn flags(&self) -> u16 {
        get16(self.buffer.as_ref(), field::FLAGS) & 0x01ff
    }

    /// FIN.
    #[inline]
    pub fn fin(&self) -> bool {
        self.flags() & flags::FIN != 0
    }

    /// SYN.
    #[inline]
    pub fn syn(&self) -> bool {
        self.flags() & flags::SYN != 0
    }

    /// RST.
    #[inline]
    pub fn rst(&self) -> bool {
        self.flags() & flags::RST != 0
    }

    /// ACK.
    #[inline]
    pub fn ack(&self) -> bool {
        self.flags() & flags::ACK != 0
    }

    /// Window.
    #[inline]
    pub fn window_len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::WINDOW)
    }

    /// Checksum.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Urgent pointer.
    #[inline]
    pub fn urgent_at(&self) -> u16 {
        get16(self.buffer.as_ref(), field::URGENT)
    }

    /// Whether the checksum over the whole buffer is right, with the pseudo-header of the
    /// enclosing IP header (4- or 16-byte addresses).
    pub fn verify_checksum(&self, src: &[u8], dst: &[u8]) -> bool {
        let data = self.buffer.as_ref();
        let pseudo = checksum::pseudo(src, dst, crate::ipproto::TCP, data.len() as u32);
        checksum::finish(checksum::add(pseudo, data)) == 0
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> TcpPacket<&'a T> {
    /// The segment's data.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    /// Sets the sequence number.
    #[inline]
    pub fn set_seq_number(&mut self, seq: u32) {
        set32(self.buffer.as_mut(), field::SEQ, seq);
    }

    /// Sets the acknowledgment number.
    #[inline]
    pub fn set_ack_number(&mut self, ack: u32) {
        set32(self.buffer.as_mut(), field::ACK, ack);
    }

    /// Sets the header length in bytes (a multiple of 4, at most 60), keeping the flags.
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        let word = get16(self.buffer.as_ref(), field::FLAGS) & 0x0fff;
        set16(self.buffer.as_mut(), field::FLAGS, word | (((len / 4) as u16 & 15) << 12));
    }

    /// Sets the nine flag bits, keeping the data offset (the reserved bits become zero).
    #[inline]
    pub fn set_flags(&mut self, flags: u16) {
        let word = get16(self.buffer.as_ref(), field::FLAGS) & 0xf000;
        set16(self.buffer.as_mut(), field::FLAGS, word | (flags & 0x01ff));
    }

    /// Sets the window.
    #[inline]
    pub fn set_window_len(&mut self, window: u16) {
        set16(self.buffer.as_mut(), field::WINDOW, window);
    }

    /// Sets the checksum.
    #[inline]
    pub fn set_checksum(&mut self, checksum: u16) {
        set16(self.buffer.as_mut(), field::CHECKSUM, checksum);
    }

    /// Sets the urgent pointer.
    #[inline]
    pub fn set_urgent_at(&mut self, at: u16) {
        set16(self.buffer.as_mut(), field::URGENT, at);
    }

    /// Computes and stores the checksum over the whole buffer with the pseudo-header of the
    /// enclosing IP header.
    pub fn fill_checksum(&mut self, src: &[u8], dst: &[u8]) {
        self.set_checksum(0);
        let data = self.buffer.as_ref();
        let pseudo = checksum::pseudo(src, dst, crate::ipproto::TCP, data.len() as u32);
        let sum = checksum::finish(checksum::add(pseudo, data));
        self.set_checksum(sum);
    }

    /// Updates the checksum for a change of the aligned bytes `old` to `new` outside the
    /// header's own fields: an address of the pseudo-header, rewritten by NAT.
    pub fn adjust_checksum(&mut self, old: &[u8], new: &[u8]) {
        self.set_checksum(checksum::update_bytes(self.checksum(), old, new));
    }

    /// Sets the source port and updates the checksum incrementally (RFC 1624).
    pub fn rewrite_src_port(&mut self, port: u16) {
        self.set_checksum(checksum::update16(self.checksum(), self.src_port(), port));
        self.set_src_port(port);
    }

    /// Sets the destination port and updates the checksum incrementally.
    pub fn rewrite_dst_port(&mut self, port: u16) {
        self.set_checksum(checksum::update16(self.checksum(), self.dst_port(), port));
        self.set_dst_port(port);
    }

    /// The segment's data, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// One TCP option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcpOption<'a> {
    /// End of option list.
    EndOfList,
    /// No operation (padding).
    Nop,
    /// Maximum segment size.
    Mss(u16),
    /// Window scale shift.
    WindowScale(u8),
    /// SACK permitted.
    SackPermitted,
    /// SACK blocks, raw: pairs of 32-bit left and right edges ([`TcpOption::sack_blocks`]).
    Sack(&'a [u8]),
    /// Timestamps.
    Timestamps {
        /// TSval.
        value: u32,
        /// TSecr.
        echo: u32,
    },
    /// Any other option.
    Unknown {
        /// Its kind.
        kind: u8,
        /// Its data (after kind and length).
        data: &'a [u8],
    },
}

impl TcpOption<'_> {
    /// The option's kind.
    pub fn kind(&self) -> u8 {
        match self {
            TcpOption::EndOfList => option::EOL,
            TcpOption::Nop => option::NOP,
            TcpOption::Mss(_) => option::MSS,
            TcpOption::WindowScale(_) => option::WINDOW_SCALE,
            TcpOption::SackPermitted => option::SACK_PERMITTED,
            TcpOption::Sack(_) => option::SACK,
            TcpOption::Timestamps { .. } => option::TIMESTAMPS,
            TcpOption::Unknown { kind, .. } => *kind,
        }
    }

    /// The SACK blocks of a [`TcpOption::Sack`] (none for other options).
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let raw: &[u8] = if let TcpOption::Sack(raw) = self { raw } else { &[] };
        raw.chunks_exact(8).map(|b| (get32(b, 0), get32(b, 4)))
    }

    /// The option's length on the wire.
    pub fn buffer_len(&self) -> usize {
        match self {
            TcpOption::EndOfList | TcpOption::Nop => 1,
            TcpOption::Mss(_) => 4,
            TcpOption::WindowScale(_) => 3,
            TcpOption::SackPermitted => 2,
            TcpOption::Sack(raw) => 2 + raw.len(),
            TcpOption::Timestamps { .. } => 10,
            TcpOption::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Writes the option at the start of `buf` and returns its length, or `None` (writing
    /// nothing) when `buf` is too short or the option too long for its length byte.
    pub fn emit(&self, buf: &mut [u8]) -> Option<usize> {
        let len = self.buffer_len();
        if len > buf.len() || len > 255 {
            return None;
        }
        buf[0] = self.kind();
        if len > 1 {
            buf[1] = len as u8;
        }
        match *self {
            TcpOption::EndOfList | TcpOption::Nop | TcpOption::SackPermitted => {}
            TcpOption::Mss(v) => set16(buf, 2, v),
            TcpOption::WindowScale(s) => buf[2] = s,
            TcpOption::Sack(data) | TcpOption::Unknown { data, .. } => {
                buf[2..len].copy_from_slice(data);
            }
            TcpOption::Timestamps { value, echo } => {
                set32(buf, 2, value);
                set32(buf, 6, echo);
            }
        }
        Some(len)
    }
}

/// Writes `options` in order at the start of `buf` until one does not fit (the rest are
/// dropped); returns the bytes written. With a 40-byte `buf` this is what fits in a header.
pub fn emit_options(options: &[TcpOption<'_>], buf: &mut [u8]) -> usize {
    let mut at = 0;
    for opt in options {
        match opt.emit(&mut buf[at..]) {
            Some(n) => at += n,
            None => break,
        }
    }
    at
}

walk! {
    /// The options of a header, one by one. An end-of-list option ends the walk; a missing or
    /// impossible length, or a known option of the wrong length, is an error (and ends it).
    TcpOptions => TcpOption<'a>, option_at
}

options_area!(TcpPacket, TcpOptions);
ports!(TcpPacket);

fn option_at(data: &[u8], at: usize) -> Option<Result<(TcpOption<'_>, usize)>> {
    let single = [option::EOL, option::NOP];
    let (kind, value, next) = match tlv(data, at, Header::TcpOption, &single, true)? {
        Ok(found) => found,
        Err(e) => return Some(Err(e)),
    };
    let opt = match (kind, value.len()) {
        (option::EOL, _) => return Some(Ok((TcpOption::EndOfList, data.len()))),
        (option::NOP, _) => TcpOption::Nop,
        (option::MSS, 2) => TcpOption::Mss(get16(value, 0)),
        (option::WINDOW_SCALE, 1) => TcpOption::WindowScale(value[0]),
        (option::SACK_PERMITTED, 0) => TcpOption::SackPermitted,
        (option::SACK, n) if n > 0 && n % 8 == 0 => TcpOption::Sack(value),
        (option::TIMESTAMPS, 8) => {
            TcpOption::Timestamps { value: get32(value, 0), echo: get32(value, 4) }
        }
        (option::MSS | option::WINDOW_SCALE | option::SACK_PERMITTED, n)
        | (option::SACK | option::TIMESTAMPS, n) => {
            let len = (n + 2) as u32;
            return Some(Err(Error::invalid(Header::TcpOption, at + 1, "length", len)));
        }
        _ => TcpOption::Unknown { kind, data: value },
    };
    Some(Ok((opt, next)))
}

/// The fields of a TCP header. The data offset comes from the options; the checksum is filled
/// by [`TcpPacket::fill_checksum`] once the payload is in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TcpRepr<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// The nine flag bits ([`flags`]).
    pub flags: u16,
    /// Window.
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Raw options; [`TcpRepr::emit`] pads them to a multiple of 4 with end-of-list bytes.
    pub options: &'a [u8],
}

impl<'a> TcpRepr<'a> {
    /// Reads a checked header (reserved bits are ignored; the checksum is not verified).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &TcpPacket<&'a T>) -> Result<TcpRepr<'a>> {
        packet.check_len()?;
        Ok(TcpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            seq: packet.seq_number(),
            ack: packet.ack_number(),
            flags: packet.flags(),
            window: packet.window_len(),
            urgent: packet.urgent_at(),
            options: packet.options(),
        })
    }

    /// The header's length: 20 bytes and the options padded to 4 (at most 40 bytes of them).
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.options.len().min(MAX_HEADER_LEN - HEADER_LEN).div_ceil(4) * 4
    }

    /// Writes the header with a zero checksum (the buffer must hold
    /// [`TcpRepr::buffer_len`] bytes; options past 40 bytes are dropped).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut TcpPacket<T>) {
        let hlen = self.buffer_len();
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_seq_number(self.seq);
        packet.set_ack_number(self.ack);
        set16(packet.as_bytes_mut(), field::FLAGS, 0);
        packet.set_header_len(hlen);
        packet.set_flags(self.flags);
        packet.set_window_len(self.window);
        packet.set_checksum(0);
        packet.set_urgent_at(self.urgent);
        let opts = &self.options[..self.options.len().min(hlen - HEADER_LEN)];
        let area = packet.options_mut();
        area[..opts.len()].copy_from_slice(opts);
        area[opts.len()..].fill(option::EOL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYN with MSS, SACK-permitted, timestamps, NOP, window scale; then two data bytes.
    fn segment() -> Vec<u8> {
        let mut s = vec![0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0xa0, 0x02, 0xfa, 0xf0];
        s.extend_from_slice(&[0, 0, 0, 0]);
        s.extend_from_slice(&[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7]);
        s.extend_from_slice(b"hi");
        s
    }

    const SRC: [u8; 4] = [192, 0, 2, 1];
    const DST: [u8; 4] = [192, 0, 2, 2];

    #[test]
    fn deconstruct() {
        let mut bytes = segment();
        TcpPacket::new_unchecked(&mut bytes[..]).fill_checksum(&SRC, &DST);
        let p = TcpPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.seq_number()), (12345, 80, 1));
        assert_eq!((p.header_len(), p.flags(), p.window_len()), (40, flags::SYN, 64240));
        assert!(p.syn() && !p.ack() && !p.fin() && !p.rst());
        assert!(p.verify_checksum(&SRC, &DST));
        assert!(!p.verify_checksum(&DST, &[192, 0, 2, 3]));
        assert_eq!(p.payload(), b"hi");
        let opts: Vec<_> = p.option_iter().map(|o| o.unwrap()).collect();
        assert_eq!(
            opts,
            [
                TcpOption::Mss(1460),
                TcpOption::SackPermitted,
                TcpOption::Timestamps { value: 7, echo: 0 },
                TcpOption::Nop,
                TcpOption::WindowScale(7),
            ]
        );
    }

    fn last(o: &[u8]) -> Result<TcpOption<'_>> {
        TcpOptions::new(o).last().unwrap()
    }

    #[test]
    fn checks_and_bad_options() {
        let bytes = segment();
        assert!(TcpPacket::new_checked(&bytes[..39]).is_err());
        let mut b = bytes.clone();
        b[12] = 0x40;
        let e = TcpPacket::new_checked(&b[..]).unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (12, crate::ErrorKind::Invalid { field: "data offset", value: 4 })
        );
        assert!(last(&[2, 3, 0]).is_err(), "MSS of length 3");
        assert!(last(&[5, 2]).is_err(), "SACK without blocks");
        assert!(last(&[99, 1]).is_err(), "length below 2");
        assert!(last(&[99, 9, 0]).is_err(), "length past the area");
        assert!(last(&[1, 99]).is_err(), "no length byte");
        assert_eq!(last(&[99, 3, 7]).unwrap(), TcpOption::Unknown { kind: 99, data: &[7] });
        assert_eq!(TcpOptions::new(&[0, 2, 4, 0]).count(), 1, "EOL ends the walk");
        let sack = [5, 18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4];
        let blocks: Vec<_> = last(&sack).unwrap().sack_blocks().collect();
        assert_eq!(blocks, [(1, 2), (3, 4)]);
    }

    #[test]
    fn options_emit_what_they_parse() {
        let sack = [0, 0, 0, 1, 0, 0, 0, 2];
        for opt in [
            TcpOption::Mss(1400),
            TcpOption::WindowScale(9),
            TcpOption::SackPermitted,
            TcpOption::Sack(&sack),
            TcpOption::Timestamps { value: 1, echo: 2 },
            TcpOption::Unknown { kind: 30, data: &[1, 2, 3] },
            TcpOption::Nop,
        ] {
            let mut buf = [0u8; 40];
            let n = opt.emit(&mut buf).unwrap();
            assert_eq!(n, opt.buffer_len());
            assert_eq!(TcpOptions::new(&buf[..n]).next().unwrap().unwrap(), opt);
            assert_eq!(opt.emit(&mut buf[..n - 1]), None);
        }
        let mut area = [0u8; 40];
        let four = [TcpOption::Timestamps { value: 1, echo: 2 }; 5];
        assert_eq!(emit_options(&four, &mut area), 40, "four of five fit");
        let n = emit_options(&[TcpOption::Nop, TcpOption::Mss(1), TcpOption::Nop], &mut area);
        assert_eq!(&area[..n], &[1, 2, 4, 0, 1, 1]);
    }

    #[test]
    fn rewrites_keep_the_checksum_right() {
        let mut bytes = segment();
        let mut p = TcpPacket::new_unchecked(&mut bytes[..]);
        p.fill_checksum(&SRC, &DST);
        p.rewrite_src_port(0);
        p.rewrite_dst_port(0xffff);
        p.adjust_checksum(&SRC, &[10, 0, 0, 1]);
        assert!(p.verify_checksum(&[10, 0, 0, 1], &DST));
    }

    #[test]
    fn repr_round_trips() {
        let mut bytes = segment();
        TcpPacket::new_unchecked(&mut bytes[..]).fill_checksum(&SRC, &DST);
        let repr = TcpRepr::parse(&TcpPacket::new_unchecked(&bytes[..])).unwrap();
        let mut out = vec![0xee; bytes.len()];
        let mut p = TcpPacket::new_unchecked(&mut out[..]);
        repr.emit(&mut p);
        p.payload_mut().copy_from_slice(b"hi");
        p.fill_checksum(&SRC, &DST);
        assert_eq!(out, bytes);
    }
}
