//! What the generator asks of the machine it generates for.
//!
//! **Why it exists.** What a primitive *means* (`host 10.0.0.1` is "IPv4 or ARP or RARP, and
//! the address at offset 12 or 16 of that header"; `tcp port 80` is "IPv4, protocol 6, not a
//! later fragment, and 80 in one of the two halfwords after the IPv4 header, or the same over
//! IPv6") is the same for every engine sift compiles for. It is written once, in the generator
//! ([`Gen`]), in terms of this trait: tests of packet fields, `and`/`or`/`not`, constants, and
//! arithmetic values for relations. Classic BPF ([`super::Bpf`]) implements it with libpcap's
//! block algebra; the 1987 CMU/Stanford packet filter (`sift-cspf`) with its predicate tree. A
//! target that cannot do something (CSPF has no packet length, no arithmetic, no loops) refuses
//! with a typed error ([`crate::CompileErrorKind::TargetLimit`]).
//!
//! Primitives that only classic BPF can express at all (the `protochain` walk, tunnels with
//! run-time offsets, VLAN tags from socket metadata, libpcap's accumulator tests, loads behind
//! variable-length link headers) are [`Extension`]s: [`Target::extension`] gets the whole
//! generator, so BPF's implementation builds them with its builder, and other targets refuse.

use sift_filter::ast::{ArithOp, ByteOp, Proto};

use super::link::Link;
use super::{Base, Gen};
use crate::build::Cmp;
use crate::error::CompileError;
use crate::ir::Size;

/// A packet field: `size` bytes `off` bytes from `base`, which the link-layer model places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Where the offset counts from.
    pub base: Base,
    /// The offset from the base (may wrap: MPLS's bottom-of-stack bit is 2 bytes before the
    /// network header).
    pub off: u32,
    /// 1, 2 or 4 bytes.
    pub size: Size,
}

/// Where a field is once the link-layer model has resolved its base to a constant
/// ([`Link::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// At a fixed offset from the start of the packet.
    Abs(u32),
    /// At `off + 4 * (packet[hdr] & 0xf)`: after the variable-length IPv4 header whose first
    /// byte is at `hdr` (classic BPF's `ldx 4*([hdr]&0xf); ld [x + off]`).
    AfterIpv4 {
        /// The offset of the IPv4 header.
        hdr: u32,
        /// The offset added to the header's length.
        off: u32,
    },
}

/// A primitive only classic BPF can express (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Extension {
    /// `[ip|ip6] protochain v`: a walk along the header chain.
    Protochain {
        /// The protocol looked for.
        v: u32,
        /// `ip`, `ip6`, or both when `None`.
        proto: Option<Proto>,
    },
    /// `geneve [vni]` or `vxlan [vni]`: later primitives look inside the tunnel, at offsets
    /// computed at run time.
    Tunnel {
        /// Geneve rather than VXLAN.
        geneve: bool,
        /// The network identifier, if given.
        vni: Option<u32>,
    },
    /// The first `vlan [id]` of a live Linux Ethernet capture: the tag may be in the socket's
    /// metadata rather than in the packet.
    VlanMetadata {
        /// The VLAN id, if given.
        id: Option<u32>,
    },
    /// libpcap's `byte N & V` / `byte N | V`, which test the accumulator without loading it.
    ByteAccumulator {
        /// `&` or `|`.
        op: ByteOp,
        /// The constant.
        value: u32,
    },
}

/// A machine the generator compiles for. See the module documentation.
pub trait Target: Sized {
    /// A predicate under construction.
    type Pred;
    /// An arithmetic value under construction (an operand of a relation).
    type Value;

    /// `(field & mask) cmp value`, the field placed by `link` (`mask` all ones: no mask).
    fn test(
        &mut self,
        link: &Link,
        field: Field,
        cmp: Cmp,
        value: u32,
        mask: u32,
    ) -> Result<Self::Pred, CompileError>;
    /// `p && q`, `q` evaluated only when `p` holds.
    fn and(&mut self, p: Self::Pred, q: Self::Pred) -> Self::Pred;
    /// `p || q`, `q` evaluated only when `p` does not hold.
    fn or(&mut self, p: Self::Pred, q: Self::Pred) -> Self::Pred;
    /// `!p`.
    fn not(&mut self, p: Self::Pred) -> Self::Pred;
    /// The predicate that always holds.
    fn always(&mut self) -> Self::Pred;
    /// The predicate that never holds.
    fn never(&mut self) -> Self::Pred;
    /// The packet's wire length compared with `n` (`less`, `greater`).
    fn len_test(&mut self, cmp: Cmp, n: u32) -> Result<Self::Pred, CompileError>;

    /// The constant `k`.
    fn imm(&mut self, k: u32) -> Result<Self::Value, CompileError>;
    /// The packet's wire length.
    fn wire_len(&mut self) -> Result<Self::Value, CompileError>;
    /// `size` bytes at `at` plus the value of `index` (`proto[index:size]`), meaningful when
    /// `guard` (the protocol check) holds; keeps `index`'s own guard before it.
    fn load(
        &mut self,
        index: Self::Value,
        at: Loc,
        size: Size,
        guard: Option<Self::Pred>,
    ) -> Result<Self::Value, CompileError>;
    /// Takes a value's guard away (libpcap keeps only the left operand's).
    fn take_guard(&mut self, v: &mut Self::Value) -> Option<Self::Pred>;
    /// `a op b`.
    fn arith(
        &mut self,
        op: ArithOp,
        a: Self::Value,
        b: Self::Value,
    ) -> Result<Self::Value, CompileError>;
    /// `-a`.
    fn neg(&mut self, a: Self::Value) -> Result<Self::Value, CompileError>;
    /// `a cmp b`, behind both operands' guards.
    fn relation(
        &mut self,
        cmp: Cmp,
        a: Self::Value,
        b: Self::Value,
    ) -> Result<Self::Pred, CompileError>;

    /// A classic-BPF-only primitive on `g`, or the target's refusal.
    fn extension(g: &mut Gen<'_, Self>, ext: Extension) -> Result<Self::Pred, CompileError>;
    /// `proto[index:size]` when the link-layer header or payload starts at a run-time offset
    /// (or inside a tunnel), or the target's refusal.
    fn index_load_var(
        g: &mut Gen<'_, Self>,
        proto: Proto,
        index: Self::Value,
        size: Size,
    ) -> Result<Self::Value, CompileError>;
}
