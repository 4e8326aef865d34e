//! Any bytes as a filter-set file and a packet: reading the set never panics; a set that
//! compiles decides the packet (with the interpreter as the engine) exactly as running each
//! filter alone does, for the set of matches and for CSPF's first match.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_compile::multi::{self, Decide, FilterSet};
use sift_compile::pipeline::{LinkType, Options};
use sift_filter::TableResolver;
use sift_verify::Mode;
use sift_vm::Interpreter;

fuzz_target!(|data: &[u8]| {
    // The set is the text up to the first NUL (a few lines at most, to keep runs fast); the
    // packet is the rest.
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (text, pkt) = (&data[..cut], data.get(cut + 1..).unwrap_or(&[]));
    let Ok(set) = FilterSet::parse(text) else { return };
    if set.len() > 16 {
        return;
    }
    let resolver = TableResolver::well_known();
    let link = if pkt.first().is_some_and(|b| b & 1 == 1) { LinkType::RAW } else { LinkType::EN10MB };
    let opts = Options::new(link, &resolver).mode(Mode::LibpcapLoops);
    let Ok(prog) = multi::compile(&set, &opts) else { return };
    let alone: Vec<Option<Interpreter>> = prog
        .members
        .iter()
        .map(|m| m.compiled.as_ref().map(|c| Interpreter::new(&c.program)))
        .collect();
    let wire = pkt.len() as u32 + u32::from(pkt.last().copied().unwrap_or(0) % 4);
    let run = |r: u32| alone[r as usize].as_ref().is_some_and(|i| i.run(pkt, wire) != 0);
    let expect: Vec<u32> = (0..prog.len() as u32).filter(|&r| run(r)).collect();
    let mut scratch = prog.scratch();
    let (mut cands, mut got) = (Vec::new(), Vec::new());
    prog.decide(pkt, wire, Decide::All, &mut scratch, &mut cands, &mut got, run);
    assert_eq!(got, expect, "set of matches");
    let mut first = Vec::new();
    for &r in &expect {
        first.push(r);
        if !prog.members[r as usize].spec.cont {
            break;
        }
    }
    prog.decide(pkt, wire, Decide::First, &mut scratch, &mut cands, &mut got, run);
    assert_eq!(got, first, "first match");
});
