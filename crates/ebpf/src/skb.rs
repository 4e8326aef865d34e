//! `struct __sk_buff` field offsets (uapi `linux/bpf.h`): the context a socket-filter or
//! `SCHED_CLS` program reads through `r1`.
//!
//! The translation reads the packet pointers and lengths from it, and a test run writes the
//! wire length and the control block into it; both must agree on where the fields are.

/// `len`: the skb's length (the captured bytes in a test run).
pub const LEN: i16 = 0;
/// `cb[0]`.
pub const CB0: i16 = 48;
/// `cb[1]`.
pub const CB1: i16 = 52;
/// `data`.
pub const DATA: i16 = 76;
/// `data_end`.
pub const DATA_END: i16 = 80;
/// `wire_len`.
pub const WIRE_LEN: i16 = 160;
/// `sizeof(struct __sk_buff)`.
pub const SIZE: usize = 192;
