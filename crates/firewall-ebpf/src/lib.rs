//! pf rule sets in the Linux kernel: one fixed eBPF program, written in C (`bpf/pf.bpf.c`) and
//! committed compiled (`bpf/pf.bpf.o`, so building sift never needs clang), that runs
//! OpenBSD pf's `pf_test` as `sift_firewall::Firewall::test` does, at XDP (packets going in)
//! and at TC ingress and egress, with the rule set as data in maps.
//!
//! Why a fixed program and data: a rule set compiled to code would cost the verifier and the
//! instruction cache in proportion to its rules; bit-vector classification does not. Every
//! field the rules test (direction, protocol, fragment, addresses through LPM tries, ports, TCP
//! flags, ICMP type and code, TOS) maps the packet's value to a *class*; every class is a bit
//! vector of the rules that field lets through; the AND of the packet's vectors are the rules
//! that match, and pf's winner is the lowest quick one, else the highest, else pf's default
//! (pass). sift-firewall's classifier makes the classes ([`Tables`]); this crate checks and
//! writes them ([`image`]), and refuses what the program cannot do ([`RuleSet::check`]:
//! translation, `route-to`, `synproxy`, `modulate state`, scrubbing, `block return`, source
//! tracking, per-rule timeouts, … each refusal naming the rule).
//!
//! Before the rules the program looks the packet up in the state table (an LRU hash with pf's
//! state key), tracks TCP as `pf_tcp_track_full`/`pf_tcp_track_sloppy` (windows, sequence
//! checks, peer states) and expires states on `bpf_ktime_get_ns` with pf's timeouts; a passing
//! `keep state` rule creates the state. Counters are per-CPU arrays (per rule: packets, bytes,
//! states and where classifications stopped; global: pf's reasons, state searches, inserts,
//! removals), and `log` rules write pflog records into a ring buffer.
//!
//! The same object runs in sift's eBPF VM ([`vm::VmPf`]) and in the kernel
//! ([`kernel::KernelPf`], loaded by `sift_kernel::object`); [`read`] turns the maps back into
//! sift-firewall's `State`s (`pfctl -ss`), rule counters (`pfctl -vsr`), global counters
//! (`pfctl -si`) and a pflog capture.
//!
//! What differs from the userspace engine, by design:
//!
//! * The clock is the kernel's (`bpf_ktime_get_ns` in whole seconds, CLOCK_MONOTONIC); a
//!   state's `creation` and `last` are on it. The VM's clock is the embedder's.
//! * Fragments are judged one by one, without reassembly (as `Firewall::test`; pf with
//!   `set reassemble no`), and never create states.
//! * A full state table evicts its least recently used state (LRU) where pf refuses the new
//!   one (`set limit states` sizes the table); adaptive timeouts are not applied; states are
//!   not purged in the background: an expired state is removed when a packet finds it.
//! * A VLAN-tagged frame is judged on the interface the program serves.
//! * Concurrent packets of one connection on two CPUs update its state without a lock.
#![forbid(unsafe_code)]

pub mod image;
pub mod kernel;
pub mod layout;
pub mod read;
mod refuse;
pub mod vm;

use sift_ebpf_elf::Object;
use sift_firewall::{Firewall, Settings, Verdict};
use sift_pf::host::Host;

pub use image::Image;
pub use sift_firewall::classify::{ClassifyError, Prefix4, Prefix6, RuleMeta, Tables};

/// The compiled program: `clang -O2 -g -target bpf` of `bpf/pf.bpf.c` (the test
/// `committed_object_is_the_source` rebuilds it and compares).
pub const OBJECT: &[u8] = include_bytes!("../bpf/pf.bpf.o");

/// The program's object, read with `sift-ebpf-elf`.
pub fn object() -> Result<Object> {
    Ok(Object::parse(OBJECT)?)
}

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// XDP: packets arriving (`pf_xdp`).
    Xdp,
    /// TC ingress: packets arriving (`pf_tc_in`).
    TcIngress,
    /// TC egress: packets leaving (`pf_tc_out`).
    TcEgress,
}

impl Hook {
    /// The program's name in the object.
    pub fn program(self) -> &'static str {
        match self {
            Hook::Xdp => layout::program::XDP,
            Hook::TcIngress => layout::program::TC_IN,
            Hook::TcEgress => layout::program::TC_OUT,
        }
    }

    /// The direction of its packets.
    pub fn direction(self) -> sift_firewall::packet::Direction {
        match self {
            Hook::Xdp | Hook::TcIngress => sift_firewall::packet::Direction::In,
            Hook::TcEgress => sift_firewall::packet::Direction::Out,
        }
    }

    /// The verdict a program's return value means (XDP's `XDP_PASS`/`XDP_DROP`, TC's
    /// `TC_ACT_OK`/`TC_ACT_SHOT`); `None` for any other value.
    pub fn verdict(self, ret: u64) -> Option<Verdict> {
        match (self, ret) {
            (Hook::Xdp, 2) | (Hook::TcIngress | Hook::TcEgress, 0) => Some(Verdict::Pass),
            (Hook::Xdp, 1) | (Hook::TcIngress | Hook::TcEgress, 2) => Some(Verdict::Block),
            _ => None,
        }
    }
}

/// Why a rule set cannot run in the kernel, or an engine failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule does something the program cannot do.
    #[error("rule {nr} ({text}): {what} cannot run in the kernel")]
    Unsupported {
        /// pf's rule number (`@N`).
        nr: u32,
        /// The rule as pfctl prints it.
        text: String,
        /// What.
        what: String,
    },
    /// The rule set cannot be classified.
    #[error("{0}")]
    Classify(ClassifyError),
    /// The classifier's tables are inconsistent.
    #[error("classifier tables: {0}")]
    Tables(String),
    /// The committed object could not be read.
    #[error("the pf program's object: {0}")]
    Elf(#[from] sift_ebpf_elf::ElfError),
    /// sift's VM refused the program or a map.
    #[error("sift's VM: {0}")]
    VmLoad(#[from] sift_ebpf_vm::LoadError),
    /// sift's VM could not create a map.
    #[error("sift's VM: {0}")]
    VmMap(#[from] sift_ebpf_vm::MapError),
    /// A map update in sift's VM failed (errno).
    #[error("sift's VM: map {map}: update failed (errno {errno})")]
    VmUpdate {
        /// The map.
        map: String,
        /// The kernel-style errno.
        errno: i64,
    },
    /// A run in sift's VM failed.
    #[error("sift's VM: {0}")]
    VmRun(#[from] sift_ebpf_vm::RunError),
    /// The kernel refused or failed.
    #[error("kernel: {0}")]
    Kernel(#[from] sift_kernel::object::ObjectError),
    /// `BPF_PROG_TEST_RUN` failed.
    #[error("kernel: BPF_PROG_TEST_RUN: {0}")]
    TestRun(std::io::Error),
    /// A program returned something that is not a verdict.
    #[error("program {program} returned {ret}")]
    BadReturn {
        /// The program.
        program: &'static str,
        /// What it returned.
        ret: u64,
    },
    /// The kernel's pflog ring buffer could not be read.
    #[error("kernel: pflog ring buffer: {0}")]
    Ring(std::io::Error),
    /// A pflog capture could not be written.
    #[error("pflog capture: {0}")]
    Capture(String),
    /// The maps could not be pinned.
    #[error("pinning the maps: {0}")]
    Pin(std::io::Error),
    /// No map or program of that name in the object.
    #[error("the object has no {0}")]
    Missing(String),
}

/// This crate's results.
pub type Result<T> = std::result::Result<T, Error>;

/// A rule set ready for the program: the maps' entries and what reading them back needs.
#[derive(Clone, Debug)]
pub struct RuleSet {
    /// The maps' entries.
    pub image: Image,
    /// The rules by index.
    pub rules: Vec<RuleMeta>,
    /// The interface the classes were made for.
    pub ifname: String,
    /// The state options (timeouts, limit, `if-bound`).
    pub settings: Settings,
    /// Each rule's `log` bits as pf has them (by rule index).
    pub log_bits: Vec<u8>,
    /// Whether each rule's states are bound to the interface (by rule index).
    pub if_bound: Vec<bool>,
}

impl RuleSet {
    /// The rule set `fw` has loaded (its main rule set), for interface `ifname`, under the
    /// state options `settings`: classified (`Firewall::classify`), checked
    /// ([`RuleSet::check`]). A refusal names the rule as pfctl prints it (`host` gives the
    /// names).
    pub fn compile(
        fw: &Firewall,
        host: &dyn Host,
        ifname: &str,
        settings: &Settings,
    ) -> Result<RuleSet> {
        let tables = fw.classify(ifname).map_err(|e| match e {
            ClassifyError::Rule { nr, what } => {
                let id = sift_firewall::RuleId { ruleset: 0, nr };
                let text = fw.rule(id).map_or_else(String::new, |r| sift_pf::print::rule(r, host));
                Error::Unsupported { nr, text, what: what.to_string() }
            }
            other => Error::Classify(other),
        })?;
        let mut rs = RuleSet::from_tables(&tables, settings, ifname)?;
        rs.check(fw, host, &tables, settings)?;
        Ok(rs)
    }

    /// A rule set from the classifier's tables for interface `ifname`.
    pub fn from_tables(tables: &Tables, settings: &Settings, ifname: &str) -> Result<RuleSet> {
        let image = Image::new(tables, settings)?;
        let log_bits =
            tables.rules.iter().map(|r| u8::from(r.log) | (u8::from(r.log_all) << 1)).collect();
        Ok(RuleSet {
            image,
            rules: tables.rules.clone(),
            ifname: ifname.to_string(),
            settings: settings.clone(),
            log_bits,
            if_bound: vec![settings.if_bound; tables.rules.len()],
        })
    }

    /// The object's maps as this rule set sizes them: the state table to `set limit states`,
    /// the bit vectors to the classes, the address tries to their entries.
    pub fn map_specs(&self, object: &Object) -> Vec<sift_ebpf::MapSpec> {
        use layout::map;
        let mut specs = object.maps.clone();
        for m in &mut specs {
            let trie = [map::SRC4, map::DST4, map::SRC6, map::DST6]
                .iter()
                .position(|&t| t == m.name)
                .map(|i| self.image.tries[i].len());
            if m.name == map::STATES {
                m.max_entries = self.image.state_limit;
            } else if m.name == map::BITS {
                m.max_entries = self.image.classes_needed();
            } else if let Some(n) = trie {
                m.max_entries = u32::try_from(n).unwrap_or(u32::MAX).max(1);
            }
        }
        specs
    }
}
