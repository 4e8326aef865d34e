//! Executing actions on a frame: outputs, field rewrites with their checksums, VLAN tags.
//!
//! **Why a trait for the frame.** The frames live where the ports put them: UMEM chunks of an
//! AF_XDP socket with headroom in front, or a `Vec` in tests. [`FrameMut`] is what the
//! actions need of either: the bytes, and growing or shrinking at the front by a VLAN tag's
//! four bytes (the MAC addresses move, the rest stays where it is). [`VecFrame`] is the
//! `Vec`-backed one.
//!
//! Actions run in order as OpenFlow says: an output sends the frame as the earlier actions
//! left it; output to the ingress port is skipped (only `in_port` sends back); `set_field` on
//! `in_port` changes what later actions take as the ingress port. A rewrite whose header the
//! frame does not have (truncated, or a later fragment for ports) does nothing. Checksums are
//! updated incrementally (RFC 1624, through `sift_wire`'s `rewrite_*` and `adjust_checksum`):
//! the IPv4 header's for its fields, TCP's and UDP's for ports and for the addresses of the
//! pseudo-header (an absent UDP checksum, 0, stays absent), ICMPv6's for IPv6 addresses.
//! SCTP's CRC32c is recomputed, keeping whatever error it had (a frame that arrived with a
//! bad CRC leaves with one).

use sift_wire::checksum;
use sift_wire::ethernet::{self, VLAN_TAG_LEN};
use sift_wire::icmp;
use sift_wire::ipv4::Ipv4Packet;
use sift_wire::ipv6::Ipv6Packet;
use sift_wire::sctp::SctpPacket;
use sift_wire::tcp::TcpPacket;
use sift_wire::udp::UdpPacket;
use sift_wire::{ethertype, ipproto};

use crate::key::PortNo;
use crate::layout::{L4, Layout, Net};
use crate::rules::{Action, Actions, SetField};

/// A frame the actions can change.
pub trait FrameMut {
    /// The frame.
    fn bytes(&self) -> &[u8];
    /// The frame, writable.
    fn bytes_mut(&mut self) -> &mut [u8];
    /// Grows the frame by `n` bytes at the front (their contents unspecified); false if the
    /// headroom is too small (the frame is unchanged).
    fn push_front(&mut self, n: usize) -> bool;
    /// Removes `n` bytes at the front; false if the frame is shorter (the frame is
    /// unchanged).
    fn pull_front(&mut self, n: usize) -> bool;
}

/// A frame in a `Vec` with headroom in front.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VecFrame {
    buf: Vec<u8>,
    start: usize,
}

impl VecFrame {
    /// A copy of `frame` with `headroom` bytes in front.
    pub fn new(frame: &[u8], headroom: usize) -> VecFrame {
        let mut buf = vec![0; headroom];
        buf.extend_from_slice(frame);
        VecFrame { buf, start: headroom }
    }

    /// The room left in front.
    pub fn headroom(&self) -> usize {
        self.start
    }
}

impl FrameMut for VecFrame {
    fn bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..]
    }

    fn push_front(&mut self, n: usize) -> bool {
        if n > self.start {
            return false;
        }
        self.start -= n;
        true
    }

    fn pull_front(&mut self, n: usize) -> bool {
        if n > self.buf.len() - self.start {
            return false;
        }
        self.start += n;
        true
    }
}

/// What executing actions did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Executed {
    /// Frames handed to the output function.
    pub outputs: usize,
    /// Outputs to the ingress port skipped, and rewrites with no header to act on.
    pub skipped: usize,
}

/// Why executing stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// A VLAN tag did not fit in the frame's headroom (the actions before it were done).
    #[error("action {action}: no headroom for a {needed}-byte VLAN tag")]
    NoHeadroom {
        /// The index of the action.
        action: usize,
        /// The bytes it needed.
        needed: usize,
    },
}

/// Runs `actions` on `frame`, received on `in_port`; each output hands the port and the
/// frame as it is at that point to `output`.
pub fn execute<F: FrameMut + ?Sized>(
    actions: &Actions,
    frame: &mut F,
    in_port: PortNo,
    mut output: impl FnMut(PortNo, &[u8]),
) -> Result<Executed, ExecError> {
    let mut done = Executed::default();
    let mut in_port = in_port;
    let mut layout: Option<Layout> = None;
    for (i, a) in actions.as_slice().iter().enumerate() {
        match *a {
            Action::Output(p) if p == in_port => done.skipped += 1,
            Action::Output(p) => {
                output(p, frame.bytes());
                done.outputs += 1;
            }
            Action::InPort => {
                output(in_port, frame.bytes());
                done.outputs += 1;
            }
            Action::PushVlan(tpid) => {
                let l = *layout.get_or_insert_with(|| Layout::of(frame.bytes()));
                let tci = if l.tags > 0 { l.tcis[0] } else { 0 };
                if push_vlan(frame, tpid, tci, i)? {
                    layout = None;
                } else {
                    done.skipped += 1;
                }
            }
            Action::PopVlan => {
                let l = *layout.get_or_insert_with(|| Layout::of(frame.bytes()));
                if l.tags > 0 && pop_vlan(frame) {
                    layout = None;
                } else {
                    done.skipped += 1;
                }
            }
            Action::Set(SetField::InPort(p)) => in_port = p,
            Action::Set(SetField::VlanVid(vid)) => {
                if !set_tci(frame, &mut layout, 0x0fff, vid & 0x0fff, i)? {
                    done.skipped += 1;
                }
            }
            Action::Set(SetField::VlanPcp(pcp)) => {
                if !set_tci(frame, &mut layout, 0xe000, u16::from(pcp & 7) << 13, i)? {
                    done.skipped += 1;
                }
            }
            Action::Set(f) => {
                let l = *layout.get_or_insert_with(|| Layout::of(frame.bytes()));
                if !rewrite(frame.bytes_mut(), &l, f) {
                    done.skipped += 1;
                }
            }
        }
    }
    Ok(done)
}

/// Inserts a tag with `tpid` and `tci` after the MAC addresses; false without an Ethernet
/// header.
fn push_vlan<F: FrameMut + ?Sized>(
    frame: &mut F,
    tpid: u16,
    tci: u16,
    action: usize,
) -> Result<bool, ExecError> {
    if frame.bytes().len() < ethernet::HEADER_LEN {
        return Ok(false);
    }
    if !frame.push_front(VLAN_TAG_LEN) {
        return Err(ExecError::NoHeadroom { action, needed: VLAN_TAG_LEN });
    }
    let b = frame.bytes_mut();
    b.copy_within(VLAN_TAG_LEN..VLAN_TAG_LEN + 12, 0);
    b[12..14].copy_from_slice(&tpid.to_be_bytes());
    b[14..16].copy_from_slice(&tci.to_be_bytes());
    Ok(true)
}

/// Removes the outer tag (the caller checked there is one).
fn pop_vlan<F: FrameMut + ?Sized>(frame: &mut F) -> bool {
    let b = frame.bytes_mut();
    if b.len() < ethernet::HEADER_LEN + VLAN_TAG_LEN {
        return false;
    }
    b.copy_within(0..12, VLAN_TAG_LEN);
    frame.pull_front(VLAN_TAG_LEN)
}

/// Sets the `bits` of the outer tag's TCI to `value`, pushing an 802.1Q tag with that value
/// on an untagged frame (OVS's `mod_vlan_vid`/`mod_vlan_pcp`).
fn set_tci<F: FrameMut + ?Sized>(
    frame: &mut F,
    layout: &mut Option<Layout>,
    bits: u16,
    value: u16,
    action: usize,
) -> Result<bool, ExecError> {
    let l = *layout.get_or_insert_with(|| Layout::of(frame.bytes()));
    if !l.eth {
        return Ok(false);
    }
    if l.tags == 0 {
        let pushed = push_vlan(frame, ethertype::VLAN, value, action)?;
        *layout = None;
        return Ok(pushed);
    }
    let tci = (l.tcis[0] & !bits) | value;
    frame.bytes_mut()[14..16].copy_from_slice(&tci.to_be_bytes());
    layout.as_mut().expect("set above").tcis[0] = tci;
    Ok(true)
}

/// Rewrites a MAC, IP or transport field in place; false when the frame lacks the header.
fn rewrite(b: &mut [u8], l: &Layout, f: SetField) -> bool {
    match f {
        SetField::EthSrc(mac) | SetField::EthDst(mac) => {
            if !l.eth {
                return false;
            }
            let mut eth = ethernet::EthernetFrame::new_unchecked(&mut *b);
            if matches!(f, SetField::EthSrc(_)) {
                eth.set_src_addr(mac);
            } else {
                eth.set_dst_addr(mac);
            }
            true
        }
        SetField::Ipv4Src(a) | SetField::Ipv4Dst(a) => {
            let Net::Ipv4 { .. } = l.net else { return false };
            let mut ip = Ipv4Packet::new_unchecked(&mut b[l.l3..]);
            let old = if matches!(f, SetField::Ipv4Src(_)) {
                ip.rewrite_src_addr(a)
            } else {
                ip.rewrite_dst_addr(a)
            };
            pseudo_header_changed(b, l, &old, &a);
            true
        }
        SetField::Ipv6Src(a) | SetField::Ipv6Dst(a) => {
            if l.net != Net::Ipv6 {
                return false;
            }
            let mut ip = Ipv6Packet::new_unchecked(&mut b[l.l3..]);
            let old = if matches!(f, SetField::Ipv6Src(_)) {
                let old = ip.src_addr();
                ip.set_src_addr(a);
                old
            } else {
                let old = ip.dst_addr();
                ip.set_dst_addr(a);
                old
            };
            pseudo_header_changed(b, l, &old, &a);
            true
        }
        SetField::NwTos(tos) => match l.net {
            Net::Ipv4 { .. } => {
                // The TOS shares a 16-bit word with version and header length.
                let ver_ihl = u16::from(b[l.l3]) << 8;
                let mut ip = Ipv4Packet::new_unchecked(&mut b[l.l3..]);
                let old_tos = ip.tos();
                let new_tos = (tos & 0xfc) | (old_tos & 3);
                let sum = checksum::update16(
                    ip.checksum(),
                    ver_ihl | u16::from(old_tos),
                    ver_ihl | u16::from(new_tos),
                );
                ip.set_tos(new_tos);
                ip.set_checksum(sum);
                true
            }
            Net::Ipv6 => {
                let mut ip = Ipv6Packet::new_unchecked(&mut b[l.l3..]);
                let tc = (tos & 0xfc) | (ip.traffic_class() & 3);
                ip.set_traffic_class(tc);
                true
            }
            _ => false,
        },
        SetField::NwTtl(ttl) => match l.net {
            Net::Ipv4 { .. } => {
                Ipv4Packet::new_unchecked(&mut b[l.l3..]).rewrite_ttl(ttl);
                true
            }
            Net::Ipv6 => {
                Ipv6Packet::new_unchecked(&mut b[l.l3..]).set_hop_limit(ttl);
                true
            }
            _ => false,
        },
        SetField::TpSrc(port) | SetField::TpDst(port) => {
            let Some(L4 { start, end }) = l.l4 else { return false };
            let src = matches!(f, SetField::TpSrc(_));
            let t = &mut b[start..end];
            match l.nw_proto {
                ipproto::TCP => {
                    let mut p = TcpPacket::new_unchecked(t);
                    if src { p.rewrite_src_port(port) } else { p.rewrite_dst_port(port) }
                }
                ipproto::UDP => {
                    let mut p = UdpPacket::new_unchecked(t);
                    if src { p.rewrite_src_port(port) } else { p.rewrite_dst_port(port) }
                }
                ipproto::SCTP => {
                    let mut p = SctpPacket::new_unchecked(t);
                    // Keep the CRC's error, if it had one: stored ^ computed stays the same.
                    let stored = p.checksum();
                    p.fill_checksum();
                    let error = stored ^ p.checksum();
                    if src {
                        p.set_src_port(port)
                    } else {
                        p.set_dst_port(port)
                    }
                    p.fill_checksum();
                    let crc = p.checksum() ^ error;
                    p.set_checksum(crc);
                }
                _ => return false,
            }
            true
        }
        SetField::InPort(_) | SetField::VlanVid(_) | SetField::VlanPcp(_) => false,
    }
}

/// Updates the transport checksum for an address of its pseudo-header changed from `old` to
/// `new` (TCP, UDP, and ICMPv6 over IPv6; ICMPv4 and SCTP do not cover addresses).
fn pseudo_header_changed(b: &mut [u8], l: &Layout, old: &[u8], new: &[u8]) {
    let Some(L4 { start, end }) = l.l4 else { return };
    let t = &mut b[start..end];
    match l.nw_proto {
        ipproto::TCP => TcpPacket::new_unchecked(t).adjust_checksum(old, new),
        ipproto::UDP => UdpPacket::new_unchecked(t).adjust_checksum(old, new),
        ipproto::ICMPV6 if l.net == Net::Ipv6 => {
            let c = icmp::field::CHECKSUM;
            let sum = u16::from_be_bytes([t[c], t[c + 1]]);
            let sum = checksum::update_bytes(sum, old, new);
            t[c..c + 2].copy_from_slice(&sum.to_be_bytes());
        }
        _ => {}
    }
}
