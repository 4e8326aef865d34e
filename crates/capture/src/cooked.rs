//! What libpcap does to packets and filters between the kernel and the user on Linux.
//!
//! * **Cooked headers.** On `any` (and on devices without a usable link header) the socket is
//!   `SOCK_DGRAM`: the kernel hands over the packet from the network header on, plus a
//!   `sockaddr_ll`. libpcap builds a `LINUX_SLL` (16 bytes) or `LINUX_SLL2` (20 bytes) header
//!   from it; [`sll_header`] and [`sll2_header`] build the same bytes.
//! * **Filter offsets.** The filter is compiled against the cooked header, but the kernel runs
//!   it on the packet without one, so [`fix_program`] rewrites the loads as libpcap's
//!   `fix_program`/`fix_offset` do: offsets past the header move back by its length, the
//!   protocol, packet-type and (SLL2) interface-index fields become ancillary loads, and any
//!   other load inside the header makes the program impossible to run in the kernel.
//! * **VLAN tags.** The kernel strips the outer 802.1Q tag into packet metadata before the
//!   taps see the frame; libpcap puts it back (after the MAC addresses, or before the protocol
//!   field of an SLL header; not for SLL2), and so does [`insert_vlan`].

use sift_insn::Insn;
use sift_insn::code::{
    BPF_ABS, BPF_IND, BPF_LD, BPF_LDX, BPF_MSH, SKF_AD_IFINDEX, SKF_AD_OFF, SKF_AD_PKTTYPE,
    SKF_AD_PROTOCOL, class, mode,
};

/// Length of a `LINUX_SLL` header.
pub const SLL_HDR_LEN: usize = 16;
/// Length of a `LINUX_SLL2` header.
pub const SLL2_HDR_LEN: usize = 20;

/// The cooked header format of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cooked {
    /// `LINUX_SLL` (link type 113).
    Sll,
    /// `LINUX_SLL2` (link type 276), libpcap's default on `any`.
    Sll2,
}

impl Cooked {
    /// The header length.
    pub fn header_len(self) -> usize {
        match self {
            Cooked::Sll => SLL_HDR_LEN,
            Cooked::Sll2 => SLL2_HDR_LEN,
        }
    }

    /// The pcap link type.
    pub fn link_type(self) -> u16 {
        match self {
            Cooked::Sll => 113,
            Cooked::Sll2 => 276,
        }
    }
}

/// The `sockaddr_ll` fields a cooked header is made of (as the kernel reports them in the ring).
pub use sift_sys::ring::LinkAddr;

/// The 16-byte `LINUX_SLL` header, as libpcap builds it.
pub fn sll_header(a: &LinkAddr) -> [u8; SLL_HDR_LEN] {
    let mut h = [0u8; SLL_HDR_LEN];
    h[0..2].copy_from_slice(&u16::from(a.pkttype).to_be_bytes());
    h[2..4].copy_from_slice(&a.hatype.to_be_bytes());
    h[4..6].copy_from_slice(&u16::from(a.halen).to_be_bytes());
    let n = usize::from(a.halen.min(8));
    h[6..6 + n].copy_from_slice(&a.addr[..n]);
    h[14..16].copy_from_slice(&a.protocol.to_be_bytes());
    h
}

/// The 20-byte `LINUX_SLL2` header, as libpcap builds it.
pub fn sll2_header(a: &LinkAddr) -> [u8; SLL2_HDR_LEN] {
    let mut h = [0u8; SLL2_HDR_LEN];
    h[0..2].copy_from_slice(&a.protocol.to_be_bytes());
    h[4..8].copy_from_slice(&a.ifindex.to_be_bytes());
    h[8..10].copy_from_slice(&a.hatype.to_be_bytes());
    h[10] = a.pkttype;
    h[11] = a.halen;
    let n = usize::from(a.halen.min(8));
    h[12..12 + n].copy_from_slice(&a.addr[..n]);
    h
}

/// Where libpcap reinserts a stripped VLAN tag: after the two MAC addresses on Ethernet,
/// before the protocol field of `LINUX_SLL`; `None` for SLL2 and other link types.
pub fn vlan_offset(link_type: u16) -> Option<usize> {
    match link_type {
        1 => Some(12),
        113 => Some(SLL_HDR_LEN - 2),
        _ => None,
    }
}

/// Reinserts a stripped tag (TPID and TCI, host order) at `offset` in `frame`, when the frame
/// is long enough, as libpcap does. Returns whether it did.
pub fn insert_vlan(frame: &mut Vec<u8>, offset: usize, tpid: u16, tci: u16) -> bool {
    if frame.len() < offset {
        return false;
    }
    let mut tag = [0u8; 4];
    tag[0..2].copy_from_slice(&tpid.to_be_bytes());
    tag[2..4].copy_from_slice(&tci.to_be_bytes());
    frame.splice(offset..offset, tag);
    true
}

/// Why a cooked-capture filter cannot run in the kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "instruction {index} reads the {header}-byte cooked header (offset {offset}) in a way the \
     kernel cannot supply"
)]
pub struct UnfixableLoad {
    /// The instruction's index.
    pub index: usize,
    /// The offset it loads.
    pub offset: u32,
    /// The cooked header's length.
    pub header: usize,
}

/// Rewrites packet loads of a filter compiled for a cooked link type so that the kernel, which
/// runs it on the packet without the cooked header, computes the same thing (libpcap's
/// `fix_program`). Ancillary and negative offsets are left alone.
pub fn fix_program(prog: &[Insn], cooked: Cooked) -> Result<Vec<Insn>, UnfixableLoad> {
    let mut out = prog.to_vec();
    for (index, insn) in out.iter_mut().enumerate() {
        let (class, mode) = (class(insn.code), mode(insn.code));
        if class != BPF_LD && class != BPF_LDX {
            continue;
        }
        if mode != BPF_ABS && mode != BPF_IND && mode != BPF_MSH {
            continue;
        }
        insn.k = fix_offset(insn.k, mode == BPF_ABS && class == BPF_LD, cooked)
            .ok_or(UnfixableLoad { index, offset: insn.k, header: cooked.header_len() })?;
    }
    Ok(out)
}

/// libpcap's `fix_offset`, except that only absolute loads become ancillary loads: the kernel
/// has no indexed ancillary loads, and an indexed load's `k` says nothing about where in the
/// header `x + k` falls (sift's unoptimized code reads `link[12]` as `ldb [x + 0]` with X = 12,
/// which libpcap's rewriting would turn into a protocol load).
fn fix_offset(k: u32, absolute: bool, cooked: Cooked) -> Option<u32> {
    let hdr = cooked.header_len() as u32;
    if k >= hdr {
        // Includes the ancillary range (SKF_AD_OFF…), which is far above any header: libpcap
        // checks `(int)k > 0` for what stays unfixable, so negative offsets pass through.
        if (k as i32) < 0 {
            return Some(k);
        }
        return Some(k - hdr);
    }
    if !absolute {
        return None;
    }
    match (cooked, k) {
        (Cooked::Sll, 14) | (Cooked::Sll2, 0) => Some(SKF_AD_OFF + SKF_AD_PROTOCOL),
        (Cooked::Sll, 0) | (Cooked::Sll2, 10) => Some(SKF_AD_OFF + SKF_AD_PKTTYPE),
        (Cooked::Sll2, 4) => Some(SKF_AD_OFF + SKF_AD_IFINDEX),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_insn::code::{BPF_B, BPF_H, BPF_JEQ, BPF_JMP, BPF_K, BPF_RET, BPF_W};

    fn ld(size: u16, k: u32) -> Insn {
        Insn::stmt(BPF_LD | size | BPF_ABS, k)
    }

    #[test]
    fn sll2_offsets_move_back_and_fields_become_ancillary() {
        let prog = [
            ld(BPF_H, 0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, 3),
            ld(BPF_B, 10),
            ld(BPF_W, 4),
            ld(BPF_B, 20 + 9),
            Insn::stmt(BPF_RET | BPF_K, 262_144),
        ];
        let fixed = fix_program(&prog, Cooked::Sll2).unwrap();
        assert_eq!(fixed[0].k, SKF_AD_OFF + SKF_AD_PROTOCOL);
        assert_eq!(fixed[1], prog[1]);
        assert_eq!(fixed[2].k, SKF_AD_OFF + SKF_AD_PKTTYPE);
        assert_eq!(fixed[3].k, SKF_AD_OFF + SKF_AD_IFINDEX);
        assert_eq!(fixed[4].k, 9);
        assert_eq!(fixed[5], prog[5]);
    }

    #[test]
    fn sll_fields_and_unfixable_loads() {
        let fixed =
            fix_program(&[ld(BPF_H, 14), ld(BPF_H, 0), ld(BPF_B, 16)], Cooked::Sll).unwrap();
        assert_eq!(fixed[0].k, SKF_AD_OFF + SKF_AD_PROTOCOL);
        assert_eq!(fixed[1].k, SKF_AD_OFF + SKF_AD_PKTTYPE);
        assert_eq!(fixed[2].k, 0);
        // The link-layer address cannot be supplied by the kernel.
        let err = fix_program(&[ld(BPF_B, 0), ld(BPF_W, 6)], Cooked::Sll).unwrap_err();
        assert_eq!(err, UnfixableLoad { index: 1, offset: 6, header: 16 });
        // Indexed loads into the header cannot be rewritten, whatever their k.
        let ind = Insn::stmt(BPF_LD | BPF_B | sift_insn::code::BPF_IND, 0);
        assert!(fix_program(&[ind], Cooked::Sll2).is_err());
        let ind_l3 = Insn::stmt(BPF_LD | BPF_B | sift_insn::code::BPF_IND, 29);
        assert_eq!(fix_program(&[ind_l3], Cooked::Sll2).unwrap()[0].k, 9);
        // Ancillary loads stay as they are.
        let anc = ld(BPF_W, SKF_AD_OFF + SKF_AD_IFINDEX);
        assert_eq!(fix_program(&[anc], Cooked::Sll2).unwrap(), vec![anc]);
    }

    #[test]
    fn headers_match_libpcap_layout() {
        let a = LinkAddr {
            protocol: 0x0800,
            ifindex: 7,
            hatype: 1,
            pkttype: 4,
            halen: 6,
            addr: [2, 0, 0, 0, 0, 1, 0xee, 0xee],
        };
        assert_eq!(sll2_header(&a), [8, 0, 0, 0, 0, 0, 0, 7, 0, 1, 4, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(sll_header(&a), [0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 8, 0]);
    }

    #[test]
    fn vlan_reinsertion() {
        let mut f = (0u8..20).collect::<Vec<_>>();
        assert!(insert_vlan(&mut f, 12, 0x8100, 0x2064));
        assert_eq!(&f[10..18], &[10, 11, 0x81, 0, 0x20, 0x64, 12, 13]);
        let mut short = vec![0u8; 5];
        assert!(!insert_vlan(&mut short, 12, 0x8100, 1));
        assert_eq!(vlan_offset(276), None);
    }
}
