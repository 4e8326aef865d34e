//! A traffic generator inside the kernel: one frame transmitted millions of times through an
//! interface by `BPF_PROG_TEST_RUN` in live-frames mode.
//!
//! Why it exists: measuring a receive path (XDP programs, `AF_XDP` sockets, capture) needs a
//! sender faster than the receiver, on the same two-CPU machine, in a private namespace.
//! pktgen is not in every kernel and user-space senders (`AF_PACKET`, trafgen) stop near one
//! million frames a second. An XDP program that only calls `bpf_redirect(ifindex, 0)`, run
//! with `BPF_F_TEST_XDP_LIVE_FRAMES`, transmits each copy of the frame out of that interface
//! without a socket buffer (about 2 to 3.5 million frames a second here; see
//! `docs/capture-notes.md`). The benchmarks of `sift-kernel` (`examples/xdp_veth_rate.rs`)
//! and `sift-xdp` (`examples/xdpsock.rs`) share this one copy.
//!
//! Two facts of veth to know: the frames leave through the interface's peer's receive queue
//! only when the peer runs NAPI (GRO on, or an XDP program attached); otherwise they vanish
//! without a counter moving. And they bypass the sending interface's taps (a capture on it
//! sees nothing).

use std::io;
use std::os::fd::OwnedFd;

use sift_ebpf::isa::{AluOp, CallTarget, Insn, Operand, Width};
use sift_ebpf::{EbpfProgram, encode_program, helper_ids, reg};
use sift_sys::bpf;

use crate::attach::{AttachError, Hook, XdpMode, load};

/// Frames handed to the program at a time by default (the kernel allows 1 to 256).
pub const BATCH: u32 = 64;

/// The generator: its program loaded, redirecting to one interface.
#[derive(Debug)]
pub struct LiveGen {
    prog: OwnedFd,
    ifindex: u32,
}

/// The generator's program: `return bpf_redirect(ifindex, 0)`.
pub fn program(ifindex: u32) -> EbpfProgram {
    let mov =
        |dst, imm| Insn::Alu { width: Width::W64, op: AluOp::Mov, dst, src: Operand::Imm(imm) };
    let insns = [
        mov(reg::R1, ifindex as i32),
        mov(reg::R2, 0),
        Insn::Call(CallTarget::Helper(helper_ids::id::REDIRECT as i32)),
        Insn::Exit,
    ];
    EbpfProgram { insns: encode_program(&insns) }
}

impl LiveGen {
    /// Loads the program that sends out of interface `ifindex` (of the namespace the sending
    /// thread will be in).
    pub fn new(ifindex: u32) -> Result<LiveGen, AttachError> {
        let prog = load(&program(ifindex), Hook::Xdp { mode: XdpMode::Native }, "sift_livegen")?;
        Ok(LiveGen { prog, ifindex })
    }

    /// The interface the frames go out of.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Sends `frame` `count` times, `batch` (1 to 256) at a time, and returns when every copy
    /// was handled. Call it from a thread in the interface's namespace (the test run's
    /// ingress interface is that namespace's loopback). The time the call takes is the
    /// generator's rate; frames the receiver could not take are counted at the sending
    /// interface (`tx_dropped`), not here.
    pub fn send(&self, frame: &[u8], count: u32, batch: u32) -> io::Result<()> {
        bpf::prog_test_run_xdp_live(&self.prog, frame, count, batch)
    }
}

/// A 60-byte IPv4/UDP frame (10.0.0.1:1234 → 10.0.0.2:9, checksum filled, payload zero) from
/// `src` to `dst`. With a `dst` the receiver does not have, the stack drops it as `OTHERHOST`
/// after the taps (and XDP) have seen it.
pub fn udp_frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let ip = &mut f[14..34];
    ip.copy_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    let sum = ip.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum::<u32>();
    let sum = !((sum & 0xffff) + (sum >> 16)) as u16;
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f[34..42].copy_from_slice(&[0x04, 0xd2, 0x00, 0x09, 0x00, 26, 0, 0]);
    f
}

/// The destination MAC [`udp_frame`] is given by the benchmarks: locally administered, nobody's.
pub const NOBODY: [u8; 6] = [0x02, 0, 0x5e, 0x51, 0xf7, 0x99];
/// The source MAC the benchmarks give it.
pub const SENDER: [u8; 6] = [0x02, 0, 0x5e, 0x51, 0xf7, 0x01];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_checksum_and_program() {
        let f = udp_frame(NOBODY, SENDER);
        assert_eq!(f.len(), 60);
        let sum = f[14..34].chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])));
        let sum = sum.sum::<u32>();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff, "the IPv4 header sums to ones");
        let p = program(7);
        assert_eq!(p.insns.len(), 4);
        assert_eq!((p.insns[0].imm, p.insns[2].imm), (7, 23));
    }
}
