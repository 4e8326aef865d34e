//! The opcode bit fields and Linux's ancillary-data offsets, named as in `<pcap/bpf.h>` and
//! `<linux/filter.h>`.
//!
//! An opcode is `class | size | mode` for loads, `class | op | src` for ALU and jumps,
//! `class | rval` for returns and `class | miscop` for MISC. The extractor functions mirror the C
//! macros (`BPF_CLASS`, `BPF_SIZE`…); like them, they ignore bits 8..15 of the code.
#![allow(missing_docs)] // The names are the documentation: they are libpcap's and Linux's own.

// Instruction classes (`BPF_CLASS`).
pub const BPF_LD: u16 = 0x00;
pub const BPF_LDX: u16 = 0x01;
pub const BPF_ST: u16 = 0x02;
pub const BPF_STX: u16 = 0x03;
pub const BPF_ALU: u16 = 0x04;
pub const BPF_JMP: u16 = 0x05;
pub const BPF_RET: u16 = 0x06;
pub const BPF_MISC: u16 = 0x07;

// Load sizes (`BPF_SIZE`).
pub const BPF_W: u16 = 0x00;
pub const BPF_H: u16 = 0x08;
pub const BPF_B: u16 = 0x10;

// Load modes (`BPF_MODE`).
pub const BPF_IMM: u16 = 0x00;
pub const BPF_ABS: u16 = 0x20;
pub const BPF_IND: u16 = 0x40;
pub const BPF_MEM: u16 = 0x60;
pub const BPF_LEN: u16 = 0x80;
pub const BPF_MSH: u16 = 0xa0;

// ALU operations (`BPF_OP`).
pub const BPF_ADD: u16 = 0x00;
pub const BPF_SUB: u16 = 0x10;
pub const BPF_MUL: u16 = 0x20;
pub const BPF_DIV: u16 = 0x30;
pub const BPF_OR: u16 = 0x40;
pub const BPF_AND: u16 = 0x50;
pub const BPF_LSH: u16 = 0x60;
pub const BPF_RSH: u16 = 0x70;
pub const BPF_NEG: u16 = 0x80;
pub const BPF_MOD: u16 = 0x90;
pub const BPF_XOR: u16 = 0xa0;

// Jump operations (`BPF_OP`).
pub const BPF_JA: u16 = 0x00;
pub const BPF_JEQ: u16 = 0x10;
pub const BPF_JGT: u16 = 0x20;
pub const BPF_JGE: u16 = 0x30;
pub const BPF_JSET: u16 = 0x40;

// Operand source (`BPF_SRC`).
pub const BPF_K: u16 = 0x00;
pub const BPF_X: u16 = 0x08;

// Return value source (`BPF_RVAL`).
pub const BPF_A: u16 = 0x10;

// MISC operations (`BPF_MISCOP`).
pub const BPF_TAX: u16 = 0x00;
pub const BPF_TXA: u16 = 0x80;

/// Number of scratch memory words `M[0..16]`.
pub const BPF_MEMWORDS: u32 = 16;
/// Linux's limit on a classic program's length (`BPF_MAXINSNS`).
pub const BPF_MAXINSNS: usize = 4096;

/// Ancillary data: loads at `SKF_AD_OFF + x` read packet metadata instead of packet bytes.
pub const SKF_AD_OFF: u32 = 0xffff_f000; // -0x1000
pub const SKF_AD_PROTOCOL: u32 = 0;
pub const SKF_AD_PKTTYPE: u32 = 4;
pub const SKF_AD_IFINDEX: u32 = 8;
pub const SKF_AD_NLATTR: u32 = 12;
pub const SKF_AD_NLATTR_NEST: u32 = 16;
pub const SKF_AD_MARK: u32 = 20;
pub const SKF_AD_QUEUE: u32 = 24;
pub const SKF_AD_HATYPE: u32 = 28;
pub const SKF_AD_RXHASH: u32 = 32;
pub const SKF_AD_CPU: u32 = 36;
pub const SKF_AD_ALU_XOR_X: u32 = 40;
pub const SKF_AD_VLAN_TAG: u32 = 44;
pub const SKF_AD_VLAN_TAG_PRESENT: u32 = 48;
pub const SKF_AD_PAY_OFFSET: u32 = 52;
pub const SKF_AD_RANDOM: u32 = 56;
pub const SKF_AD_VLAN_TPID: u32 = 60;
/// One past the last ancillary offset Linux knows.
pub const SKF_AD_MAX: u32 = 64;
/// Loads at `SKF_NET_OFF + x` read relative to the network header (Linux).
pub const SKF_NET_OFF: u32 = 0xfff0_0000; // -0x100000
/// Loads at `SKF_LL_OFF + x` read relative to the link-layer header (Linux).
pub const SKF_LL_OFF: u32 = 0xffe0_0000; // -0x200000

/// `BPF_CLASS(code)`.
pub const fn class(code: u16) -> u16 {
    code & 0x07
}
/// `BPF_SIZE(code)`.
pub const fn size(code: u16) -> u16 {
    code & 0x18
}
/// `BPF_MODE(code)`.
pub const fn mode(code: u16) -> u16 {
    code & 0xe0
}
/// `BPF_OP(code)`.
pub const fn op(code: u16) -> u16 {
    code & 0xf0
}
/// `BPF_SRC(code)`.
pub const fn src(code: u16) -> u16 {
    code & 0x08
}
/// `BPF_RVAL(code)`.
pub const fn rval(code: u16) -> u16 {
    code & 0x18
}
/// `BPF_MISCOP(code)`.
pub const fn miscop(code: u16) -> u16 {
    code & 0xf8
}

/// The ancillary offsets Linux knows with libpcap's `bpf_image` name and `bpf_asm`'s keyword,
/// in offset order. A load of `SKF_AD_OFF + offset` is printed `[name]` by libpcap.
pub const ANCILLARY: [(u32, &str, &str); 16] = [
    (SKF_AD_PROTOCOL, "proto", "proto"),
    (SKF_AD_PKTTYPE, "type", "type"),
    (SKF_AD_IFINDEX, "ifidx", "ifidx"),
    (SKF_AD_NLATTR, "nla", "nla"),
    (SKF_AD_NLATTR_NEST, "nlan", "nlan"),
    (SKF_AD_MARK, "mark", "mark"),
    (SKF_AD_QUEUE, "queue", "queue"),
    (SKF_AD_HATYPE, "hatype", "hatype"),
    (SKF_AD_RXHASH, "rxhash", "rxhash"),
    (SKF_AD_CPU, "cpu", "cpu"),
    (SKF_AD_ALU_XOR_X, "xor_x", "xor_x"),
    (SKF_AD_VLAN_TAG, "vlan_tci", "vlan_tci"),
    (SKF_AD_VLAN_TAG_PRESENT, "vlanp", "vlan_pr"),
    (SKF_AD_PAY_OFFSET, "poff", "poff"),
    (SKF_AD_RANDOM, "random", "rand"),
    (SKF_AD_VLAN_TPID, "vlan_tpid", "vlan_tpid"),
];

/// libpcap's `bpf_image` name for an absolute load at `k`, if `k` is a known ancillary offset.
pub fn ancillary_image_name(k: u32) -> Option<&'static str> {
    ancillary_offset(k).and_then(|off| ANCILLARY.iter().find(|a| a.0 == off)).map(|a| a.1)
}

/// `bpf_asm`'s keyword for an absolute load at `k`, if `k` is a known ancillary offset.
pub fn ancillary_asm_name(k: u32) -> Option<&'static str> {
    ancillary_offset(k).and_then(|off| ANCILLARY.iter().find(|a| a.0 == off)).map(|a| a.2)
}

/// The ancillary offset (`k - SKF_AD_OFF`) when `k` is one Linux knows.
pub fn ancillary_offset(k: u32) -> Option<u32> {
    let off = k.checked_sub(SKF_AD_OFF)?;
    (off < SKF_AD_MAX && off % 4 == 0).then_some(off)
}

/// The absolute-load offset for an ancillary name in either spelling (also `vlan_avail`, the old
/// `bpf_asm` keyword for VLAN_TAG_PRESENT).
pub fn ancillary_by_name(name: &str) -> Option<u32> {
    if name == "vlan_avail" {
        return Some(SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT);
    }
    ANCILLARY.iter().find(|a| a.1 == name || a.2 == name).map(|a| SKF_AD_OFF + a.0)
}
