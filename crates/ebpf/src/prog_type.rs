//! The kernel's program types (`enum bpf_prog_type`) sift runs: one definition for the ELF
//! loader (types from libbpf's section names), the verifier (what a context allows) and the
//! VM and CLI.

/// A program's type (`enum bpf_prog_type`): the ones sift runs, and none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgType {
    /// `BPF_PROG_TYPE_XDP` (`xdp`, `xdp/…`, `xdp.frags`).
    Xdp,
    /// `BPF_PROG_TYPE_SCHED_CLS` (`tc`, `tc/…`, `tcx/…`, `classifier`, `classifier/…`).
    SchedCls,
    /// `BPF_PROG_TYPE_SOCKET_FILTER` (`socket`, `socket/…`).
    SocketFilter,
    /// No type: the program of an object with only `.text` (ubpf's and rbpf's objects).
    Unspec,
}

impl ProgType {
    /// The kernel's `enum bpf_prog_type` number.
    pub fn number(self) -> u32 {
        match self {
            ProgType::Unspec => 0,
            ProgType::SocketFilter => 1,
            ProgType::SchedCls => 3,
            ProgType::Xdp => 6,
        }
    }

    /// The type a section name gives, as libbpf reads it.
    pub fn from_section(name: &str) -> Option<ProgType> {
        let is = |prefix: &str| name == prefix || name.starts_with(&format!("{prefix}/"));
        if is("xdp") || is("xdp.frags") {
            Some(ProgType::Xdp)
        } else if is("tc") || is("classifier") || name.starts_with("tcx/") {
            Some(ProgType::SchedCls)
        } else if is("socket") {
            Some(ProgType::SocketFilter)
        } else {
            None
        }
    }

    /// The type a name stands for on sift's command line: `xdp`, `tc` / `sched_cls` /
    /// `classifier`, `socket` / `socket_filter`.
    pub fn from_name(name: &str) -> Option<ProgType> {
        Some(match name {
            "xdp" => ProgType::Xdp,
            "tc" | "sched_cls" | "classifier" => ProgType::SchedCls,
            "socket" | "socket_filter" => ProgType::SocketFilter,
            _ => return None,
        })
    }

    /// The kernel's name without `BPF_PROG_TYPE_` (`XDP`, `SCHED_CLS`).
    pub fn name(self) -> &'static str {
        match self {
            ProgType::Xdp => "XDP",
            ProgType::SchedCls => "SCHED_CLS",
            ProgType::SocketFilter => "SOCKET_FILTER",
            ProgType::Unspec => "UNSPEC",
        }
    }
}

impl std::fmt::Display for ProgType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
