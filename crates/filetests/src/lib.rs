//! The test harness for sift's filter compiler (issue 4).
//!
//! A compiler is trusted only as far as its tests are, so the harness is built, and calibrated,
//! before the compiler exists: with libpcap's own compiler plugged in as the candidate, every
//! runner must pass except for documented differences between libpcap 1.10 (the machine's
//! library) and 1.11 (which produced the corpus). Then a failure with sift's compiler plugged in
//! means a bug in the compiler, not in the harness.
//!
//! * [`LinkType`]: [`sift_wire`]'s link types (names, DLT and LINKTYPE numbers, which differ on
//!   Linux); the corpus names them as `tcpdump -y` does.
//! * [`corpus`]: libpcap's `TESTrun` corpus as typed accept, reject and apply cases.
//! * [`link`] and [`packets`]: deterministic packet sets per link type, from `sift-gen` and
//!   link-layer wrappers around its frames, plus prefixes, random bytes and corpus captures.
//! * [`exprgen`]: a seeded generator of pcap-filter expressions.
//! * [`runner`]: the [`Candidate`] trait a compiler implements, and the
//!   runners `check_accept`, `check_reject`, `check_apply` and `check_differential`.
//! * [`known`]: the 1.10-versus-1.11 differences the calibration tolerates, each explained.
//!
//! # Plugging a compiler in
//!
//! Implement [`Candidate`] (or wrap a closure in [`FnCandidate`]) and hand it to the runners;
//! each returns a [`Report`] to print and assert on. [`check_corpus`] runs the three corpus
//! runners with the default packet sets in one call.
//!
//! ```no_run
//! use sift_filetests::{Candidate, CompileRequest, Corpus, ExprGen, LibpcapCandidate, Options};
//!
//! struct Sift;
//!
//! impl Candidate for Sift {
//!     fn name(&self) -> String {
//!         "sift-compile".into()
//!     }
//!     fn compile(&self, req: &CompileRequest<'_>) -> Result<Vec<sift_insn::Insn>, String> {
//!         // sift_compile::pipeline::compile(req.expr, &Options::new(link, &resolver)…)
//!         //     .map(|c| c.program.insns().to_vec())
//!         //     .map_err(|e| e.libpcap_message())  // the corpus compares libpcap's wording
//!         Err(format!("not written yet: {}", req.expr))
//!     }
//! }
//!
//! let corpus = Corpus::load_default().expect("corpus");
//! let reports = sift_filetests::check_corpus(&Sift, &corpus);
//! println!("{}\n{}\n{}", reports.accept, reports.reject, reports.apply);
//!
//! // Random expressions against the system libpcap.
//! let pcap = sift_libpcap::Libpcap::load().expect("libpcap");
//! let reference = LibpcapCandidate { pcap: &pcap, optimize: false };
//! let en10mb = sift_filetests::LinkType::EN10MB;
//! let set = sift_filetests::PacketSet::generate(en10mb, 1, 2000, 300);
//! let exprs = ExprGen::new(1, "EN10MB").take(1000);
//! let report =
//!     sift_filetests::check_differential(&Sift, &reference, &exprs, &set, Options::default());
//! assert_eq!(report.failed(), 0, "{report}");
//! ```
//!
//! Failures of libpcap 1.10 itself are classified by [`known::classify`]; a failure of sift's
//! compiler that falls into one of those categories is probably sift agreeing with 1.11.
#![forbid(unsafe_code)]

pub mod corpus;
pub mod exprgen;
pub mod known;
pub mod link;
pub mod packets;
pub mod runner;

pub use corpus::{AcceptCase, ApplyCase, Corpus, RejectCase, Skip};
pub use exprgen::ExprGen;
pub use packets::{Frame, PacketSet};
pub use runner::{
    Candidate, Category, CompileRequest, CorpusReports, Failure, FnCandidate, LibpcapCandidate,
    Options, PacketSets, Report, check_accept, check_apply, check_corpus, check_differential,
    check_reject,
};
/// Link types are [`sift_wire`]'s (one table for the workspace).
pub use sift_wire::LinkType;
