//! Why a compiled filter has no eBPF form, and where in its graph.

use std::fmt;

use crate::ir::BlockId;
use sift_wire::LinkType;

/// Where in the filter's graph ([`crate::pipeline::Compiled::cfg`]) a refusal comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// The block.
    pub block: BlockId,
    /// The statement's index in the block (`None`: its terminator).
    pub stmt: Option<usize>,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stmt {
            Some(s) => write!(f, "block {}, statement {s}", self.block),
            None => write!(f, "block {}, terminator", self.block),
        }
    }
}

/// What cannot be expressed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EbpfGenErrorKind {
    /// XDP, TC and `AF_PACKET` sockets see Ethernet frames; a filter compiled for another link
    /// type would read the wrong bytes.
    #[error(
        "eBPF filters run on Ethernet frames (XDP, TC, AF_PACKET sockets); the filter was \
         compiled for link type {0}: compile it for EN10MB"
    )]
    LinkType(LinkType),
    /// A Linux ancillary load (`ld [SKF_AD_OFF + n]`, what `inbound`, `ifindex` or `vlan` compile
    /// to with Linux extensions): socket metadata eBPF programs do not read this way.
    #[error(
        "the Linux ancillary load SKF_AD_OFF+{offset} (socket metadata: `inbound`, `ifindex`, \
         `vlan` with Linux extensions) has no eBPF form: compile without Linux extensions"
    )]
    Ancillary {
        /// `n` of `SKF_AD_OFF + n`.
        offset: u32,
    },
    /// A jump spans more than eBPF's 16-bit offset reaches (32,767 instructions).
    #[error("a jump spans {distance} instructions, more than eBPF's 32,767")]
    JumpTooFar {
        /// The distance in instruction slots.
        distance: i64,
    },
    /// Redirecting to AF_XDP sockets is an XDP program's verdict, and needs verdicts (not raw
    /// values).
    #[error("redirecting matches to AF_XDP sockets needs an XDP program returning verdicts")]
    XskHook,
    /// A multi program ([`crate::ebpf::lower_multi`]) neither counts nor redirects: its result
    /// is the map it writes and its return value.
    #[error(
        "a program for many filters writes its result to a map and returns it: counting and \
         AF_XDP redirects are for single filters"
    )]
    MultiOptions,
    /// A filter of a multi program has no eBPF form (the location is in its own graph).
    #[error("filter `{name}` (rank {rank}): {kind}")]
    Member {
        /// Its rank in the set.
        rank: u32,
        /// Its name.
        name: String,
        /// Why.
        kind: Box<EbpfGenErrorKind>,
    },
    /// Beyond a limit of the kernel's: the program's size, or the result map's value.
    #[error("{what} would take {size}, more than the kernel's limit of {limit}")]
    TooLarge {
        /// What ("the program's instruction slots", "the result map's value bytes").
        what: &'static str,
        /// How much it would take.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The graph breaks the IR's invariants (a bug of whatever built it).
    #[error("the filter's graph is invalid: {0}")]
    BadGraph(String),
}

/// A refusal: what, and where ([`At`]; `None` when it concerns the whole filter).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct EbpfGenError {
    /// What cannot be expressed.
    pub kind: EbpfGenErrorKind,
    /// Where in the graph.
    pub at: Option<At>,
}

impl fmt::Display for EbpfGenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(at) => write!(f, "{at}: {}", self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl EbpfGenError {
    pub(crate) fn new(kind: EbpfGenErrorKind, at: Option<At>) -> EbpfGenError {
        EbpfGenError { kind, at }
    }
}
