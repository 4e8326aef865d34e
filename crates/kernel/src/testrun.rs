//! The kernel's eBPF verifier and JIT as an engine: sift's translation of a classic program
//! ([`sift_ebpf::from_cbpf`]) loaded with `bpf(BPF_PROG_LOAD)` as a `SCHED_CLS` program and run on each
//! packet with `BPF_PROG_TEST_RUN`.
//!
//! What a test run does with a packet (`net/bpf/test_run.c`, checked on 6.18): it copies the
//! bytes into a fresh linear skb (one page: at most [`MAX_PACKET`] bytes, at least 14), runs
//! `eth_type_trans` (which needs those 14 bytes and pulls them), resets the network header
//! there, and for `SCHED_CLS` pushes the Ethernet header back, so the program sees the bytes
//! from offset 0 and `__sk_buff.len` = the number of bytes given. Nothing else about the bytes
//! changes. The wire length is `__sk_buff.wire_len`, set from the context passed in (0 means
//! "the skb's length"; it may not be below the skb's length nor above 64 KiB). So:
//!
//! * a packet of 14 bytes or more with `caplen <= wire_len <= 65536` is run as it is, with the
//!   wire length in the context;
//! * a test run also refuses (`EINVAL`) an IPv4 EtherType (0x0800) with fewer than 20 bytes
//!   after the Ethernet header and an IPv6 one (0x86dd) with fewer than 40 (measured);
//! * any packet refused that way, or with an odd wire length, is padded with zeros to the
//!   length a test run takes, and its real captured and wire lengths travel in `cb[0]`/`cb[1]`,
//!   which the translated prologue reads instead (see [`sift_ebpf::from_cbpf`]); the padding is never
//!   read, because every load is checked against the real captured length first;
//! * a packet longer than [`MAX_PACKET`] cannot be run (an `InvalidInput` error).
//!
//! The return value of a test run is the program's `r0`, i.e. the classic return value.
//!
//! The bytes are opaque to the engine (the padding above is invisible to the program), so it
//! runs programs for any link type; only `SKF_NET_OFF` loads assume a 14-byte link header.
use std::io;
use std::os::fd::OwnedFd;

use sift_ebpf::{EbpfProgram, TranslateError, skb};
use sift_sys::bpf::{self, BPF_PROG_TYPE_SCHED_CLS};
use sift_verify::Validated;

/// The longest packet a `SCHED_CLS` test run takes on x86-64 (4 KiB page − `NET_SKB_PAD` −
/// `skb_shared_info`); measured on 6.18.
pub const MAX_PACKET: usize = 3712;

/// The Ethernet header a test run needs in front of everything.
const ETH_HLEN: usize = 14;
/// The verifier log buffer asked for after a refusal. The kernel keeps the log's tail (where
/// the reason is) when it does not fit.
const LOG_SIZE: usize = 4 << 20;

/// `GSO_LEGACY_MAX_SIZE`: the largest wire length the context may carry.
const MAX_WIRE_LEN: u32 = 65536;

/// Why the eBPF engine could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum EbpfError {
    /// The kernel cannot be asked (not root, `bpf(2)` not available or forbidden).
    #[error("kernel eBPF engine unavailable: {0}")]
    Unavailable(io::Error),
    /// The classic program has something the translation does not handle.
    #[error("cannot translate to eBPF: {0}")]
    Translate(#[from] TranslateError),
    /// The kernel's verifier refused the translation; `log` is its log.
    #[error("the kernel's verifier rejected the eBPF program ({errno}):\n{log}")]
    Rejected {
        /// The error `BPF_PROG_LOAD` returned.
        errno: io::Error,
        /// The verifier log (level 1); its tail when it was longer than the buffer.
        log: String,
    },
}

/// A classic program translated to eBPF and loaded into the kernel, run with
/// `BPF_PROG_TEST_RUN`.
#[derive(Debug)]
pub struct KernelEbpf {
    fd: OwnedFd,
    program: EbpfProgram,
}

impl KernelEbpf {
    /// Translates and loads `prog`. Ancillary loads and loops (a program validated under
    /// `Mode::LibpcapLoops` whose `protochain` walk loops: `TranslateReason::Loop`) are not
    /// translated ([`EbpfError::Translate`]); compile for the kernel (`Mode::Libpcap` or
    /// `Mode::Linux`, whose walks are unrolled) to run such a filter here.
    pub fn new(prog: &Validated) -> Result<KernelEbpf, EbpfError> {
        let program = sift_ebpf::translate(prog.insns())?;
        KernelEbpf::load(program)
    }

    /// Loads an eBPF program meant to run as `SCHED_CLS` (normally one from
    /// [`sift_ebpf::translate`]).
    ///
    /// A refusal is confirmed before it is reported: the program is loaded again with the
    /// verifier's log, and when that load fails only because the log did not fit (`ENOSPC`:
    /// the verifier finished but its log was longer than the buffer) or succeeds, the first
    /// failure was not the verifier's word on the program, so it is loaded once more without
    /// a log. [`EbpfError::Rejected`] carries the first error and the log's tail.
    pub fn load(program: EbpfProgram) -> Result<KernelEbpf, EbpfError> {
        let bytes = program.to_bytes();
        let errno = match bpf::prog_load(BPF_PROG_TYPE_SCHED_CLS, &bytes, None) {
            Ok(fd) => return Ok(KernelEbpf { fd, program }),
            Err(e) if bpf::is_unavailable(&e) => return Err(EbpfError::Unavailable(e)),
            Err(errno) => errno,
        };
        // Load again to get the verifier's log (costly, so only on failure).
        let mut log = vec![0u8; LOG_SIZE];
        let again = bpf::prog_load(BPF_PROG_TYPE_SCHED_CLS, &bytes, Some(&mut log));
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let log = String::from_utf8_lossy(&log[..end]).into_owned();
        match again {
            Ok(fd) => Ok(KernelEbpf { fd, program }),
            Err(e) if bpf::is_log_truncated(&e) => {
                match bpf::prog_load(BPF_PROG_TYPE_SCHED_CLS, &bytes, None) {
                    Ok(fd) => Ok(KernelEbpf { fd, program }),
                    Err(_) => Err(EbpfError::Rejected { errno, log }),
                }
            }
            Err(_) => Err(EbpfError::Rejected { errno, log }),
        }
    }

    /// The eBPF program the kernel runs.
    pub fn program(&self) -> &EbpfProgram {
        &self.program
    }

    /// Runs the program once on `pkt` (the captured bytes) with wire length `wire_len`; returns
    /// the classic return value (0 rejects; otherwise the number of bytes to keep).
    pub fn run(&self, pkt: &[u8], wire_len: u32) -> io::Result<u32> {
        self.test_run(pkt, wire_len, 1).map(|r| r.retval)
    }

    /// Runs the program `repeat` times on the packet inside the kernel and returns the kernel's
    /// own measure: the mean time per run in nanoseconds (it includes the test-run loop's
    /// overhead, about 25–30 ns on the machines sift is tested on).
    pub fn time(&self, pkt: &[u8], wire_len: u32, repeat: u32) -> io::Result<u32> {
        self.test_run(pkt, wire_len, repeat.max(1)).map(|r| r.duration_ns)
    }

    fn test_run(&self, pkt: &[u8], wire_len: u32, repeat: u32) -> io::Result<bpf::TestRun> {
        if pkt.len() > MAX_PACKET {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "packet of {} bytes is longer than BPF_PROG_TEST_RUN takes ({MAX_PACKET})",
                    pkt.len()
                ),
            ));
        }
        let mut ctx = [0u8; skb::SIZE];
        let caplen = pkt.len() as u32;
        let put = |ctx: &mut [u8], off: i16, v: u32| {
            let off = off as usize;
            ctx[off..off + 4].copy_from_slice(&v.to_le_bytes());
        };
        if pkt.len() >= min_len(pkt) && wire_len >= caplen && wire_len <= MAX_WIRE_LEN {
            put(&mut ctx, skb::WIRE_LEN, wire_len);
            return bpf::prog_test_run(&self.fd, pkt, &ctx, repeat);
        }
        put(&mut ctx, skb::CB0, caplen + 1);
        put(&mut ctx, skb::CB1, wire_len);
        let mut padded = pkt.to_vec();
        if padded.len() < ETH_HLEN {
            padded.resize(ETH_HLEN, 0);
        }
        let need = min_len(&padded);
        if padded.len() < need {
            padded.resize(need, 0);
        }
        bpf::prog_test_run(&self.fd, &padded, &ctx, repeat)
    }
}

/// The shortest packet a test run accepts: an Ethernet header, plus a whole IPv4 or IPv6
/// header when the EtherType says there is one (measured: 33 bytes of type 0x0800 and 53 of
/// 0x86dd give `EINVAL`).
fn min_len(pkt: &[u8]) -> usize {
    match pkt.get(12..14) {
        Some([0x08, 0x00]) => ETH_HLEN + 20,
        Some([0x86, 0xdd]) => ETH_HLEN + 40,
        _ => ETH_HLEN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_ebpf::{EbpfInsn, EbpfProgram};
    use sift_sys::bpf::BPF_PROG_TYPE_SOCKET_FILTER;

    /// Why not `SOCKET_FILTER`: its test run hands the program the packet from the network
    /// header on (the Ethernet header is pulled), and `skb->len` is 14 short.
    #[test]
    fn socket_filter_test_runs_start_at_the_network_header() {
        let mut frame = [0u8; 64];
        frame[12..14].copy_from_slice(&[0x08, 0x00]);
        frame[14] = 0x45;
        // r6 = r1; r0 = ldabs_b [0]; exit
        let ld_abs = EbpfProgram {
            insns: vec![
                EbpfInsn::mov64_reg(6, 1),
                EbpfInsn::new(0x30, 0, 0, 0, 0),
                EbpfInsn::exit(),
            ],
        };
        // r0 = skb->len; exit
        let len = EbpfProgram { insns: vec![EbpfInsn::load(0x00, 0, 1, 0), EbpfInsn::exit()] };
        let load = |p: &EbpfProgram| {
            sift_testkit::oracle(
                "kernel bpf(2) BPF_PROG_LOAD",
                bpf::prog_load(BPF_PROG_TYPE_SOCKET_FILTER, &p.to_bytes(), None),
            )
        };
        let (Some(ld_abs), Some(len)) = (load(&ld_abs), load(&len)) else { return };
        assert_eq!(bpf::prog_test_run(&ld_abs, &frame, &[], 1).unwrap().retval, 0x45);
        assert_eq!(bpf::prog_test_run(&len, &frame, &[], 1).unwrap().retval, 50);
    }

    #[test]
    fn min_len_follows_the_ethertype() {
        let mut f = [0u8; 14];
        assert_eq!(min_len(&f), 14);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(min_len(&f), 34);
        f[12..14].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(min_len(&f), 54);
        assert_eq!(min_len(&[0x86, 0xdd]), 14);
    }
}
