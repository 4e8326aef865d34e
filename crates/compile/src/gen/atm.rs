//! Telephony link layers: SunATM's pseudo-header fields and circuits (`vpi`, `vci`, `lane`,
//! `llc`, `oam`, `metac`, `connectmsg`…) and SS7 (MTP2's `fisu`/`lssu`/`msu` and MTP3's
//! `sio`/`opc`/`dpc`/`sls`, with their `h` forms for high-speed links) (gencode's
//! `gen_atmfield_code`, `gen_atmtype_abbrev`, `gen_atmmulti_abbrev`, `gen_mtp2type_abbrev`,
//! `gen_mtp3field_code`).
//!
//! Both follow libpcap 1.10 (tcpdump's library) where 1.11 changed them: `!=` compares as `==`
//! (the relation's negation applies only to `>` and `>=` in gencode's `gen_ncmp`), and the
//! field offsets count from the link-layer header even after `lane` moved it.

use super::*;
use sift_filter::lexer::Kw;

/// Where the PDU starts after the SunATM pseudo-header (flags with the protocol type, VPI,
/// VCI): `SUNATM_PKT_BEGIN_POS`.
pub(super) const SUNATM_PKT_BEGIN: u32 = 4;
/// Protocol types (the low nibble of the pseudo-header's first byte): LANE and LLC.
const PT_LANE: u32 = 1;
pub(super) const PT_LLC: u32 = 2;
/// The Q.2931 message type's offset in a signalling PDU, and the message types
/// `connectmsg`/`metaconnect` look for.
const MSG_TYPE_POS: u32 = 5;
const SETUP: u32 = 0x05;
const CALL_PROCEED: u32 = 0x02;
const CONNECT: u32 = 0x07;
const CONNECT_ACK: u32 = 0x0f;
const RELEASE: u32 = 0x4d;
const RELEASE_DONE: u32 = 0x5a;

/// A field of the SunATM pseudo-header or PDU (gencode's `A_*` field codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AtmField {
    /// The virtual path identifier (a byte at 1).
    Vpi,
    /// The virtual channel identifier (a halfword at 2).
    Vci,
    /// The protocol type (the low nibble of the byte at 0).
    ProtoType,
    /// A Q.2931 message type.
    MsgType,
}

/// A relation of a field primitive as libpcap 1.10's grammar and `gen_ncmp` make it: `!=`
/// compares as `==`.
fn field_cmp(op: RelOp) -> Cmp {
    match op {
        RelOp::Gt => Cmp::Gt,
        RelOp::Ge => Cmp::Ge,
        RelOp::Eq | RelOp::Ne => Cmp::Eq,
        RelOp::Le => Cmp::Le,
        RelOp::Lt => Cmp::Lt,
    }
}

impl<T: Target> Gen<'_, T> {
    /// gencode's `gen_atmfield_code`: `field cmp v`.
    pub(super) fn atm_field(&mut self, field: AtmField, cmp: Cmp, v: u32) -> R<T::Pred> {
        let (off, size, mask) = match field {
            AtmField::Vpi => (1, Size::B, u32::MAX),
            AtmField::Vci => (2, Size::H, u32::MAX),
            AtmField::ProtoType => (0, Size::B, 0x0f),
            AtmField::MsgType => (SUNATM_PKT_BEGIN + MSG_TYPE_POS, Size::B, u32::MAX),
        };
        self.cmp(Base::LinkHdr, off, size, cmp, v, mask)
    }

    /// Refuses an ATM primitive off raw ATM.
    fn need_atm(&self, what: &'static str) -> R<()> {
        if self.link.atm {
            return Ok(());
        }
        Err(CompileError::new(
            K::NotOnLinkType { what: LinkFeature::Atm(what), link: self.link.link_type },
            None,
        ))
    }

    /// `vpi 0 and vci n`: a well-known circuit.
    fn atm_circuit(&mut self, vci: u32) -> R<T::Pred> {
        let b0 = self.atm_field(AtmField::Vpi, Cmp::Eq, 0)?;
        let b1 = self.atm_field(AtmField::Vci, Cmp::Eq, vci)?;
        Ok(self.and(b0, b1))
    }

    /// Q.2931 messages of the given types, or-ed in gencode's order (each new one in front).
    fn atm_messages(&mut self, types: &[u32]) -> R<T::Pred> {
        let b0 = self.atm_field(AtmField::MsgType, Cmp::Eq, types[0])?;
        let b1 = self.atm_field(AtmField::MsgType, Cmp::Eq, types[1])?;
        let mut b1 = self.or(b0, b1);
        for &t in &types[2..] {
            let b0 = self.atm_field(AtmField::MsgType, Cmp::Eq, t)?;
            b1 = self.or(b0, b1);
        }
        Ok(b1)
    }

    /// `vpi`/`vci` with a list of values or a relation.
    pub(super) fn atm_relation(&mut self, field: Kw, cmp: &FieldCmp) -> R<T::Pred> {
        let f = if field == Kw::Vpi { AtmField::Vpi } else { AtmField::Vci };
        self.need_atm(field.as_str())?;
        match cmp {
            FieldCmp::Rel(op, v) => self.atm_field(f, field_cmp(*op), *v),
            FieldCmp::Any(values) => {
                let mut acc: Option<T::Pred> = None;
                for &v in values {
                    let p = self.atm_field(f, Cmp::Eq, v)?;
                    acc = Some(match acc {
                        Some(a) => self.or(a, p),
                        None => p,
                    });
                }
                Ok(acc.unwrap_or_else(|| self.t.never()))
            }
        }
    }

    /// The ATM abbreviations (gencode's `gen_atmtype_abbrev`, `gen_atmmulti_abbrev`).
    pub(super) fn atm_abbrev(&mut self, k: Kw) -> R<T::Pred> {
        self.need_atm(k.as_str())?;
        match k {
            Kw::Lane => {
                let b = self.atm_field(AtmField::ProtoType, Cmp::Eq, PT_LANE)?;
                // Later tests see LANE-encapsulated Ethernet after the 2-byte LE header
                // (gencode's PUSH_LINKHDR: the previous link type is remembered).
                let hdr = SUNATM_PKT_BEGIN + 2;
                self.link = Link {
                    link_type: LinkType::EN10MB,
                    kind: link::Kind::Ether,
                    off_linkhdr: hdr,
                    off_linktype: Some(hdr + 12),
                    off_linkpl: hdr + 14,
                    off_nl: 0,
                    off_nl_nosnap: 3,
                    mac: Some((6, 0)),
                    lane: self.link.link_type == LinkType::SUNATM,
                    ..self.link
                };
                Ok(b)
            }
            Kw::Metac => self.atm_circuit(1),
            Kw::Bcc => self.atm_circuit(2),
            Kw::Oamf4sc => self.atm_circuit(3),
            Kw::Oamf4ec => self.atm_circuit(4),
            Kw::Sc => self.atm_circuit(5),
            Kw::Ilmic => self.atm_circuit(16),
            Kw::Oam | Kw::Oamf4 => {
                // OAM F4 cells: segment or end-to-end.
                let b0 = self.atm_field(AtmField::Vci, Cmp::Eq, 3)?;
                let b1 = self.atm_field(AtmField::Vci, Cmp::Eq, 4)?;
                let b1 = self.or(b0, b1);
                let b0 = self.atm_field(AtmField::Vpi, Cmp::Eq, 0)?;
                Ok(self.and(b0, b1))
            }
            Kw::Connectmsg => {
                let msgs = [SETUP, CALL_PROCEED, CONNECT, CONNECT_ACK, RELEASE, RELEASE_DONE];
                let b1 = self.atm_messages(&msgs)?;
                let b0 = self.atm_circuit(5)?;
                Ok(self.and(b0, b1))
            }
            Kw::Metaconnect => {
                let b1 =
                    self.atm_messages(&[SETUP, CALL_PROCEED, CONNECT, RELEASE, RELEASE_DONE])?;
                let b0 = self.atm_circuit(1)?;
                Ok(self.and(b0, b1))
            }
            k => Err(CompileError::unsupported(format!("`{}`", k.as_str()), None)),
        }
    }

    /// The offset of MTP2's length indicator, or the refusal off SS7.
    fn ss7_li(&self, what: &'static str) -> R<u32> {
        self.link.ss7.ok_or_else(|| {
            CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Ss7(what), link: self.link.link_type },
                None,
            )
        })
    }

    /// MTP2 signal units by their length indicator (gencode's `gen_mtp2type_abbrev`): FISU 0,
    /// LSSU 1 or 2, MSU 3 or more (6 bits; the `h` forms for high-speed links: 9 bits of a
    /// halfword two bytes on, shifted by 7).
    pub(super) fn mtp2(&mut self, k: Kw) -> R<T::Pred> {
        let li = self.ss7_li(k.as_str())?;
        let (off, size, mask, two) = match k {
            Kw::Fisu | Kw::Lssu | Kw::Msu => (li, Size::B, 0x3f, 2),
            _ => (li.wrapping_add(2), Size::H, 0xff80, 0x0100),
        };
        match k {
            Kw::Fisu | Kw::Hfisu => self.cmp(Base::Packet, off, size, Cmp::Eq, 0, mask),
            Kw::Lssu | Kw::Hlssu => {
                let b0 = self.cmp(Base::Packet, off, size, Cmp::Le, two, mask)?;
                let b1 = self.cmp(Base::Packet, off, size, Cmp::Gt, 0, mask)?;
                Ok(self.and(b1, b0))
            }
            _ => self.cmp(Base::Packet, off, size, Cmp::Gt, two, mask),
        }
    }

    /// MTP3 routing label fields (gencode's `gen_mtp3field_code`): the service information
    /// octet, the 14-bit point codes and the 4-bit link selection, as they sit in the label
    /// (the `h` forms three bytes further on, for high-speed links).
    pub(super) fn mtp3(&mut self, field: Kw, cmp: &FieldCmp) -> R<T::Pred> {
        let high = matches!(field, Kw::Hsio | Kw::Hopc | Kw::Hdpc | Kw::Hsls);
        let f = match field {
            Kw::Sio | Kw::Hsio => Mtp3::Sio,
            Kw::Opc | Kw::Hopc => Mtp3::Opc,
            Kw::Dpc | Kw::Hdpc => Mtp3::Dpc,
            _ => Mtp3::Sls,
        };
        let li = self.ss7_li(f.name())?;
        let (off, size, mask) = f.place();
        let off = li.wrapping_add(off).wrapping_add(if high { 3 } else { 0 });
        match cmp {
            FieldCmp::Rel(op, v) => {
                self.cmp(Base::Packet, off, size, field_cmp(*op), f.encode(*v), mask)
            }
            FieldCmp::Any(values) => {
                let mut acc: Option<T::Pred> = None;
                for &v in values {
                    let p = self.cmp(Base::Packet, off, size, Cmp::Eq, f.encode(v), mask)?;
                    acc = Some(match acc {
                        Some(a) => self.or(a, p),
                        None => p,
                    });
                }
                Ok(acc.unwrap_or_else(|| self.t.never()))
            }
        }
    }
}

/// An MTP3 routing label field.
#[derive(Clone, Copy)]
enum Mtp3 {
    /// The service information octet.
    Sio,
    /// The originating point code.
    Opc,
    /// The destination point code.
    Dpc,
    /// The signalling link selection.
    Sls,
}

impl Mtp3 {
    /// The keyword libpcap names in its messages.
    fn name(self) -> &'static str {
        match self {
            Mtp3::Sio => "sio",
            Mtp3::Opc => "opc",
            Mtp3::Dpc => "dpc",
            Mtp3::Sls => "sls",
        }
    }

    /// Where the field is after the length indicator: offset, load size, mask.
    fn place(self) -> (u32, Size, u32) {
        match self {
            Mtp3::Sio => (1, Size::B, u32::MAX),
            Mtp3::Opc => (2, Size::W, 0x00c0_ff0f),
            Mtp3::Dpc => (2, Size::W, 0xff3f_0000),
            Mtp3::Sls => (5, Size::B, 0xf0),
        }
    }

    /// A value as it sits in the label (the point codes' bits are spread over the word).
    fn encode(self, v: u32) -> u32 {
        match self {
            Mtp3::Sio => v,
            Mtp3::Opc => ((v & 0x3c00) >> 10) + ((v & 0x03fc) << 6) + ((v & 0x0003) << 22),
            Mtp3::Dpc => ((v & 0x00ff) << 24) + ((v & 0x3f00) << 8),
            Mtp3::Sls => v << 4,
        }
    }
}
