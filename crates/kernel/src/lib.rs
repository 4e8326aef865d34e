//! The Linux kernel as a classic-BPF oracle and as engines.
//!
//! The kernel has its own classic-BPF checker (`bpf_check_classic`, `check_load_and_stores`)
//! and its own interpreter/JIT for socket filters. Those are a second opinion, independent of
//! libpcap, on what a program may do and what it returns; they are also what actually runs when
//! a capture filter is attached to a socket. This crate asks the kernel directly:
//!
//! * [`check_classic`]: does `SO_ATTACH_FILTER` accept the program?
//! * [`UnixDgramFilter`]: what does the attached program do to a given datagram? The kernel
//!   runs a socket's filter on every datagram queued to it: 0 drops it, a smaller value
//!   truncates it to that many bytes, anything else lets it through whole. `AF_UNIX` datagram
//!   sockets see exactly the bytes sent, from offset 0, and need no privilege.
//! * [`VethSocketFilter`] (root): the classic program on an `AF_PACKET` socket on a veth pair
//!   in a private network namespace, fed Ethernet frames through the real receive path; it
//!   reports which frames arrive and how much of each ([`kernel_view`] says what the filter
//!   sees: the outer VLAN tag is gone).
//! * [`KernelEbpf`] (root): sift's own classic → eBPF translation ([`sift_ebpf::translate`])
//!   loaded with `bpf(BPF_PROG_LOAD)` as a `SCHED_CLS` program and run per packet with
//!   `BPF_PROG_TEST_RUN` (return value, or the kernel's ns per run).
//! * [`attach`] (root): eBPF programs deployed on interfaces: XDP (native, generic) and TC
//!   (ingress, egress) through `bpf_link`s or netlink, pinned in the BPF file system so that
//!   they outlive the process, replaced atomically, detached, listed.
//! * [`livegen`] (root): a traffic generator inside the kernel (`BPF_PROG_TEST_RUN` in XDP
//!   live-frames mode) for the receive-path benchmarks.
//!
//! The system calls are `sift-sys`'s safe wrappers; this crate has no `unsafe` code.
#![forbid(unsafe_code)]

use std::io;
use std::os::fd::OwnedFd;

use sift_sys::socket;

pub mod attach;
pub mod livegen;
pub mod object;
pub mod pair;
mod testrun;
mod veth;

// The eBPF types in `KernelEbpf`'s API, so that its callers need not name `sift-ebpf`.
pub use sift_ebpf::{EbpfProgram, TranslateError, TranslateReason};
pub use testrun::{EbpfError, KernelEbpf, MAX_PACKET};
pub use veth::{MAX_FRAME, VethError, VethSocketFilter, kernel_view};

/// One classic BPF instruction: sift-insn's [`Insn`](sift_insn::Insn), which is laid out
/// exactly like C's `struct sock_filter`.
pub use sift_insn::Insn as RawInsn;

/// The kernel's limit on classic program length (`BPF_MAXINSNS`).
pub use sift_insn::code::BPF_MAXINSNS;

/// Socket buffer size requested for [`UnixDgramFilter`] (both directions). Large enough for
/// any datagram up to 256 KiB plus overhead.
const BUFFER_BYTES: usize = 4 << 20;

/// Whether the kernel's `SO_ATTACH_FILTER` accepts `prog`.
///
/// The program is attached to a throwaway `AF_UNIX` datagram socket. `Err` carries the errno:
/// `EINVAL` for a program the kernel's checker rejects (including an empty one and one longer
/// than [`BPF_MAXINSNS`]); other errors mean the question could not be asked (e.g. `EMFILE`),
/// and [`is_rejection`] tells the two apart.
pub fn check_classic(prog: &[RawInsn]) -> io::Result<()> {
    let fd = socket::unix_dgram()?;
    socket::attach_filter(&fd, prog)
}

/// Whether an error from [`check_classic`] or [`UnixDgramFilter::new`] is the kernel rejecting
/// the program (`EINVAL`, or `ENOMEM` for a program too large to allocate) rather than a failure
/// to ask.
pub fn is_rejection(err: &io::Error) -> bool {
    socket::is_filter_rejection(err)
}

/// A connected pair of `AF_UNIX` datagram sockets with a classic program attached
/// (`SO_ATTACH_FILTER`) to the receiving end: [`UnixDgramFilter::deliver`] shows what the
/// kernel's filter does to a datagram.
#[derive(Debug)]
pub struct UnixDgramFilter {
    tx: OwnedFd,
    rx: OwnedFd,
    /// Receive buffer, kept larger than the largest datagram delivered so far.
    buf: Vec<u8>,
}

impl UnixDgramFilter {
    /// Creates the socket pair and attaches `prog` to the receiving end. `EINVAL` means the
    /// kernel rejected the program.
    pub fn new(prog: &[RawInsn]) -> io::Result<Self> {
        let (tx, rx) = socket::unix_dgram_pair()?;
        // Best effort: the forced sizes need root, the plain ones are capped by the sysctls.
        // AF_UNIX datagram size is bounded by the send buffer.
        let _ = socket::set_send_buffer(&tx, BUFFER_BYTES);
        let _ = socket::set_receive_buffer(&rx, BUFFER_BYTES);
        socket::attach_filter(&rx, prog)?;
        Ok(UnixDgramFilter { tx, rx, buf: vec![0; 2048] })
    }

    /// Replaces the attached program (the socket pair is reused, which is cheaper than a new
    /// one). On error the previous program stays attached.
    pub fn set_filter(&mut self, prog: &[RawInsn]) -> io::Result<()> {
        socket::attach_filter(&self.rx, prog)
    }

    /// Sends `datagram` and receives it on the other end without blocking.
    ///
    /// Returns `Some(n)`, the number of bytes that arrived (the kernel truncates the datagram
    /// to the filter's return value when that is smaller than its length), or `None` when the
    /// filter dropped it (returned 0). Datagrams are handled one at a time, so nothing is ever
    /// left in flight between calls.
    pub fn deliver(&mut self, datagram: &[u8]) -> io::Result<Option<usize>> {
        if self.buf.len() <= datagram.len() {
            self.buf.resize(datagram.len() + 1, 0);
        }
        let sent = socket::send(&self.tx, datagram)?;
        if sent != datagram.len() {
            return Err(io::Error::other(format!(
                "short send: {sent} of {} bytes",
                datagram.len()
            )));
        }
        // AF_UNIX queues the datagram (or drops it in the filter) inside send(), so a
        // non-blocking receive now sees it or nothing.
        socket::recv(&self.rx, &mut self.buf, socket::Wait::Never)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use sift_insn::code::{
        BPF_A, BPF_ABS, BPF_B, BPF_JA, BPF_JMP, BPF_K, BPF_LD, BPF_MEM, BPF_RET, BPF_ST,
    };

    const RET_K: u16 = BPF_RET | BPF_K;
    const LDB_ABS: u16 = BPF_LD | BPF_B | BPF_ABS;
    const LD_MEM: u16 = BPF_LD | BPF_MEM;
    const ST: u16 = BPF_ST;
    const JA: u16 = BPF_JMP | BPF_JA;
    const RET_A: u16 = BPF_RET | BPF_A;

    fn ret(k: u32) -> RawInsn {
        RawInsn::new(RET_K, 0, 0, k)
    }

    /// The kernel is always there on Linux, but a sandbox may forbid AF_UNIX sockets or
    /// SO_ATTACH_FILTER; that is a missing oracle, not a bug.
    fn available() -> bool {
        sift_testkit::oracle(
            "kernel SO_ATTACH_FILTER on AF_UNIX",
            UnixDgramFilter::new(&[ret(u32::MAX)]),
        )
        .is_some()
    }

    #[test]
    fn ret_zero_drops() {
        if !available() {
            return;
        }
        let mut f = UnixDgramFilter::new(&[ret(0)]).unwrap();
        assert_eq!(f.deliver(b"hello, world").unwrap(), None);
        assert_eq!(f.deliver(&[]).unwrap(), None);
    }

    #[test]
    fn ret_all_delivers_everything() {
        if !available() {
            return;
        }
        let mut f = UnixDgramFilter::new(&[ret(u32::MAX)]).unwrap();
        assert_eq!(f.deliver(b"hello, world").unwrap(), Some(12));
        let big = vec![0xa5; 65535];
        assert_eq!(f.deliver(&big).unwrap(), Some(65535));
        let jumbo = vec![0x5a; 262144];
        assert_eq!(f.deliver(&jumbo).unwrap(), Some(262144));
        assert_eq!(f.deliver(b"x").unwrap(), Some(1));
    }

    #[test]
    fn ret_five_truncates() {
        if !available() {
            return;
        }
        let mut f = UnixDgramFilter::new(&[ret(5)]).unwrap();
        assert_eq!(f.deliver(b"hello, world").unwrap(), Some(5));
        assert_eq!(f.deliver(b"hey").unwrap(), Some(3), "shorter than the return value: whole");
    }

    #[test]
    fn load_past_the_end_drops() {
        if !available() {
            return;
        }
        let prog = [RawInsn::new(LDB_ABS, 0, 0, 100), ret(u32::MAX)];
        let mut f = UnixDgramFilter::new(&prog).unwrap();
        assert_eq!(f.deliver(&[0; 50]).unwrap(), None);
        assert_eq!(f.deliver(&[0; 101]).unwrap(), Some(101));
        assert_eq!(f.deliver(&[0; 100]).unwrap(), None, "offset 100 is the 101st byte");
    }

    #[test]
    fn filter_sees_the_datagram_from_offset_zero() {
        if !available() {
            return;
        }
        // ldb [2]; ret a: returns the third byte.
        let prog = [RawInsn::new(LDB_ABS, 0, 0, 2), RawInsn::new(RET_A, 0, 0, 0)];
        let mut f = UnixDgramFilter::new(&prog).unwrap();
        assert_eq!(f.deliver(&[9, 9, 7, 9, 9, 9, 9, 9, 9, 9]).unwrap(), Some(7));
        assert_eq!(f.deliver(&[9, 9, 0, 9]).unwrap(), None);
        f.set_filter(&[ret(2)]).unwrap();
        assert_eq!(f.deliver(&[1, 2, 3]).unwrap(), Some(2));
        // A rejected replacement leaves the old program in place.
        assert_eq!(f.set_filter(&[]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
        assert_eq!(f.deliver(&[1, 2, 3]).unwrap(), Some(2));
    }

    #[test]
    fn check_classic_verdicts() {
        if !available() {
            return;
        }
        let einval = |r: io::Result<()>| r.map_err(|e| e.raw_os_error());
        assert_eq!(einval(check_classic(&[ret(0xffff)])), Ok(()));
        let valid = [
            RawInsn::new(ST, 0, 0, 0),
            RawInsn::new(LD_MEM, 0, 0, 0),
            RawInsn::new(RET_A, 0, 0, 0),
        ];
        assert_eq!(einval(check_classic(&valid)), Ok(()));
        assert_eq!(einval(check_classic(&[])), Err(Some(libc::EINVAL)));
        // ja with k = 0xffffffff: "backward" (out of range, jumps are unsigned in the kernel).
        let backward = [ret(0), RawInsn::new(JA, 0, 0, u32::MAX), ret(1)];
        assert_eq!(einval(check_classic(&backward)), Err(Some(libc::EINVAL)));
        let too_long = vec![ret(0); BPF_MAXINSNS + 1];
        assert_eq!(einval(check_classic(&too_long)), Err(Some(libc::EINVAL)));
        assert_eq!(einval(check_classic(&vec![ret(0); BPF_MAXINSNS])), Ok(()));
        let load_before_store = [RawInsn::new(LD_MEM, 0, 0, 0), RawInsn::new(RET_A, 0, 0, 0)];
        assert_eq!(einval(check_classic(&load_before_store)), Err(Some(libc::EINVAL)));
        // Does not end in ret.
        assert_eq!(
            einval(check_classic(&[RawInsn::new(LDB_ABS, 0, 0, 0)])),
            Err(Some(libc::EINVAL))
        );
        // Longer than a sock_fprog can count: refused before the syscall, same errno.
        let huge = vec![ret(0); 70_000];
        let err = check_classic(&huge).unwrap_err();
        assert!(is_rejection(&err));
    }

    #[test]
    fn many_deliveries_stay_in_step() {
        if !available() {
            return;
        }
        // ldb [0]; ret a: the first byte decides, so drops and passes interleave.
        let prog = [RawInsn::new(LDB_ABS, 0, 0, 0), RawInsn::new(RET_A, 0, 0, 0)];
        let mut f = UnixDgramFilter::new(&prog).unwrap();
        let mut pkt = [0u8; 64];
        for i in 0..20_000u32 {
            pkt[0] = (i % 97) as u8;
            let want = if pkt[0] == 0 { None } else { Some(usize::from(pkt[0]).min(64)) };
            assert_eq!(f.deliver(&pkt).unwrap(), want, "datagram {i}");
        }
    }
}
