//! The entry points of the generator from before [`crate::pipeline`]: a [`Context`] with the
//! link type as a DLT number, [`compile`] and [`compile_str`] (no validation), and the
//! name/number conversions the CLI did itself. Kept for the CLI until the library facade moves
//! to the pipeline; nothing else uses them.

use std::fmt;

use sift_filter::Resolver;
use sift_filter::ast::Expr;
use sift_insn::Program;
use sift_wire::LinkType;

use super::generate;
use super::link::Link;
use crate::error::{CompileError, CompileErrorKind as K};
use crate::ir::Cfg;
use crate::pipeline::Options;

/// The DLT number of a supported link type named as `tcpdump -y` names it (`EN10MB`, `RAW`…,
/// with or without `DLT_`, any case), or given as a number.
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`], which takes a
/// [`sift_wire::LinkType`] (`LinkType::from_name`) and converts to DLT numbers itself.
pub fn link_type_by_name(name: &str) -> Option<i32> {
    let bare = name.strip_prefix("DLT_").unwrap_or(name);
    if let Ok(n) = bare.parse() {
        return Some(n);
    }
    LinkType::from_name(name).filter(|&t| Link::supports(t)).map(LinkType::dlt)
}

/// The Linux DLT number for a LINKTYPE number as stored in pcap and pcapng files
/// ([`LinkType::dlt`]).
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`], which converts
/// link types itself.
pub fn dlt_from_linktype(linktype: u16) -> i32 {
    LinkType::new(linktype).dlt()
}

/// What the generator needs besides the expression, with the link type as a DLT number.
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`], whose
/// [`Options`] take a [`sift_wire::LinkType`].
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The link type as a **DLT** number on Linux (`DLT_EN10MB` = 1, `DLT_RAW` = 12,
    /// `DLT_LINUX_SLL` = 113…), as `pcap_open_dead` and `tcpdump -y` take it.
    pub link_type: i32,
    /// The snapshot length: the value `ret` gives for an accepted packet.
    pub snaplen: u32,
    /// The IPv4 netmask (for `ip broadcast`), `None` when not known.
    pub netmask: Option<u32>,
    /// Whether Linux ancillary loads may be used (a live Linux capture): `inbound`/`outbound`
    /// and `ifindex` on link types without the information in the packet, and `vlan` on
    /// Ethernet (the tag may be in the socket's metadata).
    pub linux_ext: bool,
    /// Resolves host, network, service, protocol and ether names.
    pub resolver: &'a dyn Resolver,
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("link_type", &self.link_type)
            .field("snaplen", &self.snaplen)
            .field("netmask", &self.netmask)
            .field("linux_ext", &self.linux_ext)
            .finish_non_exhaustive()
    }
}

impl<'a> Context<'a> {
    /// The pipeline's options for this context (unoptimized, libpcap's validation rules).
    pub fn options(&self) -> Options<'a> {
        // A DLT number that is no link type's (101 is LINKTYPE_RAW, not a Linux DLT) gets a
        // number no link type has, which the generator refuses.
        let link = LinkType::from_dlt(self.link_type).unwrap_or(LinkType::new(u16::MAX));
        Options {
            snaplen: self.snaplen,
            netmask: self.netmask,
            linux_ext: self.linux_ext,
            optimize: false,
            ..Options::new(link, self.resolver)
        }
    }
}

/// Generates the graph for `expr` (`None`: the empty filter, which accepts everything).
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline`] (whose
/// [`generate`] is this with [`Options`]).
pub fn compile(expr: Option<&Expr>, ctx: &Context<'_>) -> Result<Cfg, CompileError> {
    generate(expr, &ctx.options())
}

/// Parses `src` (checking names with the context's resolver), generates and emits it.
///
/// Kept for the CLI until the library facade moves to [`crate::pipeline::compile`] (which
/// also validates).
pub fn compile_str(src: &str, ctx: &Context<'_>) -> Result<Program, CompileError> {
    let expr = sift_filter::parse_with(src, ctx.resolver)?;
    let cfg = compile(expr.as_ref(), ctx)?;
    crate::emit::emit(&cfg).map_err(|e| CompileError::new(K::Internal(e.to_string()), None))
}
