//! CSPF, the CMU/Stanford packet filter (Mogul, Rashid and Accetta, SOSP 1987), as an engine of
//! sift: its 16-bit stack-machine instructions ([`insn`]), an interpreter with the paper's
//! checks ([`vm`]), a text form ([`text`]), the priority demultiplexer ([`demux`]), and a
//! compiler from pcap-filter expressions for what CSPF can express ([`compile_text`],
//! [`compile`]).
//!
//! Why it exists: sift compares engines. The BPF paper (McCanne and Jacobson, 1993) measured
//! BPF against CSPF (its Figure 8); with both engines fed from the same filter text, sift can
//! check that they agree packet by packet and count what each executes.
//!
//! **One meaning for every primitive.** What `host`, `port` or `vlan` mean is decided once, by
//! sift's code generator (`sift_compile::gen`); CSPF is one of its targets (the `tree` module
//! implements `sift_compile::gen::Target` with a predicate tree over field tests), and this
//! crate adds only what is CSPF's own: its limits, its refusals, and its instruction selection
//! (the `codegen` module).
//!
//! What CSPF can express: tests of 16-bit packet words at fixed offsets, combined with
//! comparisons and `AND`/`OR`/`XOR`, and the short-circuit returns, on link types whose header
//! has a fixed length ([`SUPPORTED`]). So `ether proto`, `ip`, `arp`, `ip6`, `ether host`,
//! `host`/`net` (an IPv4 address is two words), `proto`, `tcp`/`udp`/`icmp` (a byte at an odd
//! offset is its word `& 0x00ff`), 802.2 LLC/SNAP protocols, `vlan`, `mpls`, `pppoes`,
//! `gateway`, `ip6` ports, and relations `field [& mask] op constant` compile. Fields after the
//! IPv4 header (TCP/UDP ports, `tcp[…]`) need the indirect-push extension the BPF paper added
//! ([`Options::indirect`]); the packet length, arithmetic on packet data, computed offsets,
//! `protochain` and tunnels cannot be expressed, and the errors say so
//! (`sift_compile::CompileErrorKind::TargetLimit`).
//!
//! **Same verdicts as BPF.** The compiled program accepts exactly the packets sift's classic
//! BPF program accepts, including packets too short for some fields (see the `codegen` module's
//! stages), with two exceptions [`CspfProgram::exact_for`] names: CSPF cannot read the last
//! byte of an odd-length packet, and with the extension, short packets whose IPv4 header has
//! options. The differential test checks this on millions of expression/packet runs
//! (`tests/differential.rs`).
//!
//! ```
//! use sift_wire::LinkType;
//!
//! let resolver = sift_filter::TableResolver::well_known();
//! let opts = sift_cspf::Options::new(&resolver);
//! let prog = sift_cspf::compile_text("ip and udp", LinkType::EN10MB, &opts).unwrap();
//! let mut pkt = vec![0u8; 42];
//! pkt[12..14].copy_from_slice(&[0x08, 0x00]);
//! pkt[23] = 17;
//! assert_eq!(prog.run(&pkt), (true, 5));
//! print!("{}", prog.to_text());
//! let err = sift_cspf::compile_text("tcp port 80", LinkType::EN10MB, &opts).unwrap_err();
//! assert!(sift_cspf::needs_indirect(&err));
//! assert!(err.to_string().ends_with("(needs the indirect-push extension: --cspf-indirect)"));
//! ```
#![forbid(unsafe_code)]

mod codegen;
pub mod demux;
pub mod insn;
pub mod text;
mod tree;
pub mod vm;

use std::fmt;

use sift_compile::pipeline::ByteOrder;
use sift_compile::{CompileError, CompileErrorKind};
use sift_filter::Resolver;
use sift_filter::ast::Expr;
use sift_wire::LinkType;

pub use demux::{Delivery, Demux, Filter};
pub use insn::{Action, Insn, Op};
pub use tree::SUPPORTED;
pub use vm::{End, Fault, Machine, Run, ShortCircuit};

/// Whether `e` says the expression is fine but needs the indirect-push extension
/// ([`Options::indirect`]).
pub fn needs_indirect(e: &CompileError) -> bool {
    matches!(
        e.kind,
        CompileErrorKind::TargetLimit { target: "CSPF", option: Some(tree::INDIRECT_OPTION), .. }
    )
}

/// Compiler options.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Allow the indirect-push extension (fields after a variable-length IPv4 header).
    pub indirect: bool,
    /// The short-circuit semantics the program will run with (the compiled code gives the same
    /// verdicts under both; this only selects the machine).
    pub short_circuit: ShortCircuit,
    /// The longest program, in words.
    pub max_words: usize,
    /// Resolves host, network, service and protocol names.
    pub resolver: &'a dyn Resolver,
    /// The byte order of the capture file the packets come from (`None`: none), as for
    /// classic BPF (`sift_compile::pipeline::Options::savefile`: loopback address families).
    pub savefile: Option<ByteOrder>,
}

impl<'a> Options<'a> {
    /// The defaults (no extension, the paper's semantics, 255 words) with `resolver`.
    pub fn new(resolver: &'a dyn Resolver) -> Options<'a> {
        Options {
            indirect: false,
            short_circuit: ShortCircuit::PushResult,
            max_words: vm::MAX_WORDS,
            resolver,
            savefile: None,
        }
    }

    /// The same options for packets from a capture file in byte order `savefile`.
    pub fn with_savefile(self, savefile: Option<ByteOrder>) -> Options<'a> {
        Options { savefile, ..self }
    }

    /// The same options with the indirect-push extension on or off.
    pub fn with_indirect(self, indirect: bool) -> Options<'a> {
        Options { indirect, ..self }
    }
}

impl fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("indirect", &self.indirect)
            .field("short_circuit", &self.short_circuit)
            .field("max_words", &self.max_words)
            .field("savefile", &self.savefile)
            .finish_non_exhaustive()
    }
}

/// What a compiled program knows about the packets on which it may disagree with a
/// byte-addressed filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Exactness {
    /// Odd ends of fixed fields: a packet of exactly that length ends inside a word.
    pub odd_fixed_ends: Vec<u32>,
    /// Odd ends of fields after the IPv4 header (relative to its end).
    pub odd_ind_ends: Vec<u32>,
    /// The IPv4 header offset, when fields after it are read.
    pub ipv4_nl: Option<u32>,
    /// The deepest end (in whole words) of a field after the IPv4 header, relative to it.
    pub max_ind_end: u32,
}

/// A CSPF program and the machine it runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CspfProgram {
    words: Vec<u16>,
    machine: Machine,
    exact: Exactness,
}

impl CspfProgram {
    /// A program from raw words (for example assembled text) on `machine`.
    pub fn from_words(words: Vec<u16>, machine: Machine) -> CspfProgram {
        CspfProgram { words, machine, exact: Exactness::default() }
    }

    /// The instruction words.
    pub fn words(&self) -> &[u16] {
        &self.words
    }

    /// The machine it runs on.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The same program on another machine (for example with the other short-circuit
    /// semantics).
    pub fn with_machine(mut self, machine: Machine) -> CspfProgram {
        self.machine = machine;
        self
    }

    /// Runs the program: `(accepted, instructions executed)`.
    pub fn run(&self, pkt: &[u8]) -> (bool, u32) {
        let r = self.machine.run(&self.words, pkt);
        (r.accept, r.executed)
    }

    /// Runs the program and says how it ended.
    pub fn run_detailed(&self, pkt: &[u8]) -> Run {
        self.machine.run(&self.words, pkt)
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        text::disassemble(&self.words)
    }

    /// Whether the verdict on `pkt` is guaranteed to be the one sift's classic BPF program
    /// for the same expression gives. It is not when the packet's length is odd and a field
    /// the expression tests ends at its last byte (CSPF reads whole words, so that byte is out
    /// of reach), and, for programs using the indirect-push extension, when the byte where an
    /// IPv4 header would start says it is longer than 20 bytes and the packet ends before the
    /// deepest field after it (such fields are read in the order a 20-byte header gives).
    /// Where it is not exact, CSPF can only reject a packet BPF accepts, never the reverse.
    /// Always true for programs made with [`CspfProgram::from_words`].
    pub fn exact_for(&self, pkt: &[u8]) -> bool {
        let e = &self.exact;
        let len = pkt.len();
        if e.odd_fixed_ends.iter().any(|&end| end as usize == len) {
            return false;
        }
        if let Some(nl) = e.ipv4_nl
            && let Some(&b) = pkt.get(nl as usize)
        {
            let ihl = usize::from(b & 0xf);
            let t = nl as usize + 4 * ihl;
            if e.odd_ind_ends.iter().any(|&end| t + end as usize == len) {
                return false;
            }
            // Fields after the IPv4 header are ordered as if it were 20 bytes long: with
            // options, they lie further on than assumed, and a packet that ends before them
            // may be rejected where BPF would accept it.
            if ihl > 5 && len < t + e.max_ind_end as usize {
                return false;
            }
        }
        true
    }
}

/// Compiles `expr` (`None`: the empty filter, which accepts everything) for `link` (one of
/// [`SUPPORTED`]).
pub fn compile(
    expr: Option<&Expr>,
    link: LinkType,
    opts: &Options<'_>,
) -> Result<CspfProgram, CompileError> {
    let machine = Machine {
        short_circuit: opts.short_circuit,
        indirect: opts.indirect,
        stack_depth: vm::STACK_DEPTH,
        max_words: opts.max_words,
    };
    let Some(expr) = expr else {
        return Ok(CspfProgram { words: Vec::new(), machine, exact: Exactness::default() });
    };
    let tree = tree::build(expr, link, opts.indirect, opts.savefile, opts.resolver)?;
    let limits = codegen::Limits { max_words: opts.max_words, stack_depth: vm::STACK_DEPTH };
    let (insns, exact) = codegen::generate(&tree, &limits).map_err(|e| e.at(expr.span))?;
    Ok(CspfProgram { words: insn::encode(&insns), machine, exact })
}

/// Parses `src` (checking names with the options' resolver) and compiles it for `link`.
pub fn compile_text(
    src: &str,
    link: LinkType,
    opts: &Options<'_>,
) -> Result<CspfProgram, CompileError> {
    let expr = sift_filter::parse_with(src, opts.resolver)?;
    compile(expr.as_ref(), link, opts)
}
