//! The XDP program in front of the sockets: sift's own redirect program, or one the caller
//! supplies, loaded with its maps, the sockets put in its `XSKMAP` by queue, and attached to
//! the interface through a `bpf_link` that is not pinned.
//!
//! Frames reach an `AF_XDP` socket only through an XDP program calling
//! `bpf_redirect_map(xskmap, key, flags)`. sift's program ([`redirect_program`]) is four
//! instructions built with `sift-ebpf`, no C: the key is the frame's receive queue
//! (`ctx->rx_queue_index`), so each queue's frames go to that queue's socket, and the low bits
//! of `flags` are the action when the map has no socket for the queue ([`Fallback`]). A
//! caller-supplied program ([`XdpProgram::Custom`]: a compiled pcap filter that redirects only
//! what matches) gets the same treatment through the name of its `XSKMAP`.
//!
//! The link is not pinned: the program is detached when the datapath drops it, or when the
//! process dies, and nothing is left behind on the interface.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use sift_ebpf::isa::{AluOp, CallTarget, ImmKind, Insn, Operand, Size, Width};
use sift_ebpf::{EbpfInsn, MapSpec, MapType, ProgType, encode_program, helper_ids, reg};
use sift_kernel::attach::XdpMode;
use sift_kernel::object::{KernelMap, KernelObject, ObjectLoader, ProgramSource};
use sift_sys::{bpf, netlink};

use crate::Error;

/// The name of sift's `XSKMAP`.
pub const XSKMAP: &str = sift_ebpf::xdp_md::XSK_MAP;

/// What happens to a frame whose queue has no socket (the datapath is stopping, or a queue was
/// left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Fallback {
    /// `XDP_DROP`.
    #[default]
    Drop,
    /// `XDP_PASS`: the kernel's stack gets it.
    Pass,
}

impl Fallback {
    /// The XDP action's number.
    pub fn action(self) -> i32 {
        match self {
            Fallback::Drop => 1,
            Fallback::Pass => 2,
        }
    }
}

/// A caller's XDP program: its slots (map references as `lddw` pseudo instructions with a
/// map's index in `maps`, as `sift-ebpf-elf` and `sift_compile::ebpf` leave them), its maps,
/// and which of them is the `XSKMAP` the sockets go into (its `max_entries` is raised to the
/// interface's number of queues when smaller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomProgram {
    /// The program.
    pub insns: Vec<EbpfInsn>,
    /// Its maps, in the order the program's references index them.
    pub maps: Vec<MapSpec>,
    /// The name of its `XSKMAP`.
    pub xskmap: String,
}

/// The XDP program a port uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum XdpProgram {
    /// sift's: every frame to its queue's socket ([`redirect_program`]).
    Redirect {
        /// For frames of queues without a socket.
        fallback: Fallback,
    },
    /// The caller's.
    Custom(CustomProgram),
}

impl Default for XdpProgram {
    fn default() -> Self {
        XdpProgram::Redirect { fallback: Fallback::Drop }
    }
}

/// sift's redirect program and its one map ([`XSKMAP`], index 0):
///
/// ```text
/// r2 = *(u32 *)(r1 + 16)          ; ctx->rx_queue_index
/// r1 = map[0]                     ; xsks
/// r3 = fallback                   ; the action when xsks[r2] is empty
/// call bpf_redirect_map
/// exit
/// ```
pub fn redirect_program(fallback: Fallback) -> CustomProgram {
    let insns = [
        Insn::Load {
            size: Size::W,
            dst: reg::R2,
            src: reg::R1,
            off: sift_ebpf::xdp_md::RX_QUEUE_INDEX,
        },
        Insn::LdImm64 { dst: reg::R1, kind: ImmKind::MapFd, imm: 0 },
        Insn::Alu {
            width: Width::W64,
            op: AluOp::Mov,
            dst: reg::R3,
            src: Operand::Imm(fallback.action()),
        },
        Insn::Call(CallTarget::Helper(helper_ids::id::REDIRECT_MAP as i32)),
        Insn::Exit,
    ];
    CustomProgram {
        insns: encode_program(&insns),
        maps: vec![xskmap_spec(XSKMAP, 1)],
        xskmap: XSKMAP.to_string(),
    }
}

/// An `XSKMAP` of `entries` sockets named `name`.
pub fn xskmap_spec(name: &str, entries: u32) -> MapSpec {
    sift_ebpf::xdp_md::xsk_map_spec(name, entries)
}

/// A program attached to an interface with sockets in its `XSKMAP`; detached on drop.
#[derive(Debug)]
pub(crate) struct Attached {
    object: KernelObject,
    xskmap: String,
    link: Option<OwnedFd>,
}

impl Attached {
    /// Loads `program` for `iface` (with `queues` receive queues), puts each `(queue, socket)`
    /// into its `XSKMAP` and attaches it in `mode`.
    pub(crate) fn attach(
        iface: &str,
        ifindex: u32,
        queues: u32,
        program: &XdpProgram,
        mode: XdpMode,
        sockets: &[(u32, BorrowedFd<'_>)],
    ) -> Result<Attached, Error> {
        let custom;
        let prog = match program {
            XdpProgram::Redirect { fallback } => {
                custom = redirect_program(*fallback);
                &custom
            }
            XdpProgram::Custom(c) => c,
        };
        let xsk_error = |what: String| Error::XskMap { iface: iface.to_string(), what };
        let Some(spec) = prog.maps.iter().find(|m| m.name == prog.xskmap) else {
            return Err(xsk_error(format!(
                "no map named {:?} (the program's maps: {})",
                prog.xskmap,
                prog.maps.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
            )));
        };
        if spec.map_type != MapType::Xskmap || spec.key_size != 4 || spec.value_size != 4 {
            return Err(xsk_error(format!(
                "map {:?} is a {} map of {}-byte keys and {}-byte values, not an XSKMAP of 4 and 4",
                spec.name,
                spec.map_type.name(),
                spec.key_size,
                spec.value_size
            )));
        }
        let source = ProgramSource {
            name: "sift_xsk",
            section: "xdp",
            prog_type: ProgType::Xdp,
            insns: &prog.insns,
        };
        let program_error = |source| Error::Program { iface: iface.to_string(), source };
        let object = ObjectLoader::new(&prog.maps, &[source], "GPL")
            .max_entries(&prog.xskmap, spec.max_entries.max(queues))
            .load()
            .map_err(program_error)?;
        let mut attached = Attached { object, xskmap: prog.xskmap.clone(), link: None };
        let map = attached.object.map(&attached.xskmap).map_err(program_error)?;
        for (queue, fd) in sockets {
            map.update(&queue.to_le_bytes(), &fd.as_raw_fd().to_le_bytes(), 0)
                .map_err(program_error)?;
        }
        let prog_fd = attached.object.program("sift_xsk").map_err(program_error)?.fd();
        let flags = match mode {
            XdpMode::Native => netlink::XDP_FLAGS_DRV_MODE,
            XdpMode::Generic => netlink::XDP_FLAGS_SKB_MODE,
        };
        let at =
            bpf::LinkCreate { ifindex, attach_type: bpf::BPF_XDP, flags, ..Default::default() };
        let link = bpf::link_create(prog_fd, &at).map_err(|source| {
            let hint = match source.raw_os_error() {
                Some(libc::EBUSY) => " (another XDP program is attached to the interface)",
                Some(libc::EEXIST) => " (an XDP program is attached in the other mode)",
                Some(libc::EOPNOTSUPP) => " (the driver has no native XDP: try generic mode)",
                Some(libc::ERANGE) => {
                    " (the interface's MTU is larger than native XDP takes on it: lower it, e.g. \
                     to 1500 or 3000 on veth, or use generic mode)"
                }
                _ => "",
            };
            Error::Attach { iface: iface.to_string(), source, hint }
        })?;
        attached.link = Some(link);
        Ok(attached)
    }

    /// Takes the sockets out of the `XSKMAP`: from now on frames get the fallback action (or
    /// whatever the caller's program does when the redirect fails). Errors are ignored: this
    /// runs when stopping, and a map entry that cannot be deleted only means frames keep
    /// arriving in a ring nobody reads.
    /// Another handle on the program's map `name`.
    pub(crate) fn map(&self, name: &str) -> Result<KernelMap, Error> {
        let map = self.object.map(name).map_err(|e| Error::Config { what: e.to_string() })?;
        map.try_clone().map_err(|e| Error::Config { what: format!("map {name}: {e}") })
    }

    pub(crate) fn remove_sockets(&self, queues: impl IntoIterator<Item = u32>) {
        if let Ok(map) = self.object.map(&self.xskmap) {
            for q in queues {
                let _ = map.delete(&q.to_le_bytes());
            }
        }
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        // The link is not pinned: closing it detaches the program. Detach explicitly anyway,
        // so that the hook is free at once even if a descriptor of the link leaked to a child.
        if let Some(link) = self.link.take() {
            let _ = bpf::link_detach(&link);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_program_reads_the_queue_and_names_the_map() {
        let p = redirect_program(Fallback::Pass);
        let listing = sift_ebpf::decode_program(&p.insns)
            .unwrap()
            .iter()
            .map(|l| format!("{:?}", l.insn))
            .collect::<Vec<_>>();
        assert_eq!(listing.len(), 5, "{listing:?}");
        assert_eq!(p.insns[0].off, 16, "rx_queue_index");
        assert_eq!((p.insns[1].code, p.insns[1].src, p.insns[1].imm), (0x18, 1, 0), "map 0");
        assert_eq!(p.insns[3].imm, 2, "XDP_PASS");
        assert_eq!(p.insns[4].imm, 51, "bpf_redirect_map");
        assert_eq!(redirect_program(Fallback::Drop).insns[3].imm, 1);
        assert_eq!(p.maps, [xskmap_spec("xsks", 1)]);
    }
}
