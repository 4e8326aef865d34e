//! Rules drawn from the input's first bytes, then frames from the rest (a length byte, an
//! in_port byte, the frame): the cached datapath (small caches, so evictions happen) gives
//! every frame the actions of the first matching rule found by a plain scan, across rule
//! changes; executing the actions on the frame never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_flow::testgen::{self, Bytes, Entropy, XorShift};
use sift_flow::{
    Actions, CacheConfig, Datapath, FlowKey, FlowTable, VecFrame, execute, parse_rules,
};

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let ports = testgen::ports();
    // The rules come from a generator seeded by the input, so they always parse.
    let mut e = XorShift(input.next_u64());
    let n = 1 + input.below(40) as usize;
    let text = testgen::rule_set_text(&mut e, n);
    let rules = parse_rules(&text, &ports).expect("generated rules parse");
    let mut reference = FlowTable::with_rules(rules.clone());
    let config = CacheConfig { microflow_entries: 16, megaflow_limit: 8, seed: Some(1) };
    let mut dp = Datapath::new(FlowTable::with_rules(rules), config);
    let drop = Actions::drop();
    while !input.is_empty() {
        let len = input.below(256) as usize;
        let control = input.next_u64();
        let frame = input.take(len).to_vec();
        if control & 0xff == 0 {
            let r = parse_rules(&testgen::rule_text(&mut e), &ports).unwrap().remove(0);
            reference.add(r.clone());
            dp.update(|t| t.add(r));
        }
        let in_port = 1 + ((control >> 8) % 5) as u32;
        let key = FlowKey::extract(in_port, &frame);
        let want = reference.rules().position(|(r, _)| r.matches.matches(&key));
        let expected = want.map_or(&drop, |w| &*reference.rule(w).unwrap().actions);
        let (got, _) = dp.lookup(&key, &frame);
        assert_eq!(**got, *expected, "key {key:?}");
        let actions = got.clone();
        let mut f = VecFrame::new(&frame, ((control >> 16) % 12) as usize);
        let _ = execute(&actions, &mut f, in_port, |_, b| assert!(b.len() <= frame.len() + 12));
    }
});
