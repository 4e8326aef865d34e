//! The caches are exact: for every packet, the actions the datapath returns (from the
//! microflow cache, a megaflow or an upcall) are the actions of the first rule that matches,
//! found by a plain scan of the rules with `Match::matches` (no masks, no caches). Rule sets
//! are random with overlapping wildcards, prefixes and priorities, traffic is `sift_gen`'s
//! mixed with truncated, damaged and random frames, and the rules change under the traffic
//! (added, removed, replaced, a whole new set) while the caches revalidate. Per-rule counters
//! of the cached table (after crediting the caches' hits) equal the reference's.
//!
//! `SIFT_FLOW_PACKETS=N` sets the total (default: 1,200,000, which takes a few seconds with
//! the test profile's optimizations).

use std::sync::Arc;

use sift_flow::testgen::{self, Entropy, Frames, XorShift};
use sift_flow::{
    Actions, CacheConfig, Counters, Datapath, FlowKey, FlowTable, Hit, PortMap, Rule, SlowPath,
    parse_rules, rules::print,
};

const DEFAULT_PACKETS: u64 = 1_200_000;

fn packets() -> u64 {
    std::env::var("SIFT_FLOW_PACKETS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_PACKETS)
}

/// The reference: the first rule whose match holds, by a plain scan.
fn naive(t: &FlowTable, key: &FlowKey) -> Option<usize> {
    t.rules().position(|(r, _)| r.matches.matches(key))
}

fn random_rules(e: &mut XorShift, ports: &PortMap, n: usize) -> Vec<Rule> {
    let text = testgen::rule_set_text(e, n);
    parse_rules(&text, ports).unwrap_or_else(|err| panic!("{}", err.render("random", &text)))
}

fn same_stats(dp: &mut Datapath<FlowTable>, reference: &FlowTable, ports: &PortMap, at: u64) {
    dp.sync_stats();
    let table = dp.slow_path();
    assert_eq!(table.len(), reference.len());
    for ((r, got), (_, want)) in table.rules().zip(reference.rules()) {
        assert_eq!(got, want, "packet {at}: counters of `{}`", print::rule(r, ports));
    }
    assert_eq!(table.miss_stats(), reference.miss_stats(), "packet {at}: table misses");
}

/// Changes the rules of both tables the same way.
fn change(
    e: &mut XorShift,
    dp: &mut Datapath<FlowTable>,
    reference: &mut FlowTable,
    ports: &PortMap,
) {
    match e.below(5) {
        0 => {
            let n = 20 + e.below(150) as usize;
            let fresh = random_rules(e, ports, n);
            reference.clear();
            for r in &fresh {
                reference.add(r.clone());
            }
            dp.update(|t| {
                t.clear();
                for r in fresh {
                    t.add(r);
                }
            });
        }
        1 if !reference.is_empty() => {
            let victim = reference.rule(e.below(reference.len() as u64) as usize).unwrap().clone();
            assert!(reference.remove(victim.priority, &victim.matches));
            assert!(dp.update(|t| t.remove(victim.priority, &victim.matches)));
        }
        2 if !reference.is_empty() => {
            // Same match and priority, new actions: replaced in place of the old rule.
            let old = reference.rule(e.below(reference.len() as u64) as usize).unwrap().clone();
            let actions =
                Arc::new(Actions::new(vec![sift_flow::Action::Output(1 + e.below(4) as u32)]));
            let new = Rule { actions, ..old };
            reference.add(new.clone());
            dp.update(|t| t.add(new));
        }
        _ => {
            let n = 1 + e.below(8) as usize;
            for r in random_rules(e, ports, n) {
                reference.add(r.clone());
                dp.update(|t| t.add(r));
            }
        }
    }
}

fn run(seed: u64, packets: u64, config: CacheConfig, change_every: u64) -> Counters {
    let mut e = XorShift(seed);
    let ports = testgen::ports();
    let n = 20 + e.below(150) as usize;
    let rules = random_rules(&mut e, &ports, n);
    let mut reference = FlowTable::with_rules(rules.clone());
    let mut dp = Datapath::new(FlowTable::with_rules(rules), config);
    let drop = Actions::drop();
    let mut frames = Frames::new(seed);
    let mut buf = Vec::new();
    for i in 0..packets {
        if i > 0 && i % change_every == 0 {
            same_stats(&mut dp, &reference, &ports, i);
            change(&mut e, &mut dp, &mut reference, &ports);
        }
        frames.next(&mut e, &mut buf);
        dp.set_now(i + 1);
        // Port 5 is no port of the rules: only wildcarded `in_port`s match it.
        let in_port = 1 + e.below(5) as u32;
        let key = FlowKey::extract(in_port, &buf);
        let want = naive(&reference, &key);
        let tag = want.map_or(sift_flow::NO_RULE, |w| w as u64);
        reference.credit(tag, 1, buf.len() as u64);
        let expected = want.map_or(&drop, |w| &*reference.rule(w).unwrap().actions);
        let (got, hit) = dp.lookup(&key, &buf);
        if **got != *expected {
            let rule = want
                .map_or("(none: drop)".into(), |w| print::rule(reference.rule(w).unwrap(), &ports));
            panic!(
                "seed {seed}, packet {i} ({hit:?}): got {}, the rules say {} (rule {rule})\nkey {key:?}\nframe {buf:02x?}",
                print::actions(got, &ports),
                print::actions(expected, &ports),
            );
        }
    }
    same_stats(&mut dp, &reference, &ports, packets);
    dp.counters()
}

#[test]
fn cached_actions_equal_the_rules() {
    let total = packets();
    let start = std::time::Instant::now();
    // Default sizes; small caches that evict all the time; no microflow cache.
    let configs = [
        (1, CacheConfig { seed: Some(1), ..CacheConfig::default() }, 20_011),
        (2, CacheConfig { microflow_entries: 256, megaflow_limit: 300, seed: Some(2) }, 9_973),
        (3, CacheConfig { microflow_entries: 0, megaflow_limit: 4096, seed: Some(3) }, 50_021),
    ];
    let mut sum = Counters::default();
    for (seed, config, change_every) in configs {
        let c = run(seed, total / 3, config, change_every);
        eprintln!("seed {seed}: {c:?}");
        assert!(c.megaflow_hits > 0 && c.misses > 0 && c.updates > 0, "seed {seed}: {c:?}");
        if config.microflow_entries > 0 {
            assert!(c.microflow_hits > 0, "seed {seed}: {c:?}");
        }
        if config.megaflow_limit < 1000 {
            assert!(c.evicted > 0, "seed {seed}: {c:?}");
        }
        sum.microflow_hits += c.microflow_hits;
        sum.megaflow_hits += c.megaflow_hits;
        sum.misses += c.misses;
        sum.revalidated_kept += c.revalidated_kept;
    }
    assert!(sum.revalidated_kept > 0, "revalidation never kept a megaflow: {sum:?}");
    eprintln!("{total} packets in {:?}", start.elapsed());
}

#[test]
fn hits_move_from_slow_path_to_caches() {
    // The same packet: a miss, then microflow hits; without the microflow cache, megaflow
    // hits; after a rule change, a miss again.
    let ports = testgen::ports();
    let rules = parse_rules("udp,tp_dst=53,actions=output:p2\nactions=drop\n", &ports).unwrap();
    let mut frame = Vec::new();
    let mut scratch = Vec::new();
    let mut p = sift_gen::build::Packet::new(&mut frame, &mut scratch);
    p.ethernet([2; 6], [4; 6])
        .ipv4(&sift_gen::build::ipv4_header([10, 0, 0, 1], [10, 0, 0, 53]))
        .udp(999, 53);
    p.finish();
    let key = FlowKey::extract(1, &frame);
    for micro in [8192, 0] {
        let config =
            CacheConfig { microflow_entries: micro, seed: Some(9), ..CacheConfig::default() };
        let mut dp = Datapath::new(FlowTable::with_rules(rules.clone()), config);
        let second = if micro > 0 { Hit::Microflow } else { Hit::Megaflow };
        assert_eq!(dp.lookup(&key, &frame).1, Hit::Miss);
        assert_eq!(dp.lookup(&key, &frame).1, second);
        assert_eq!(dp.lookup(&key, &frame).1, second);
        let other_port = FlowKey::extract(3, &frame);
        assert_eq!(dp.lookup(&other_port, &frame).1, Hit::Megaflow, "in_port is not consulted");
        // A rule that consults nothing the megaflow does not: the megaflow is revalidated
        // and kept, with the new rule's actions.
        dp.update(|t| {
            t.add(parse_rules("priority=40000,udp,actions=drop", &ports).unwrap().remove(0))
        });
        let (a, hit) = dp.lookup(&key, &frame);
        assert!(a.is_drop());
        assert_eq!(hit, Hit::Megaflow);
        // One that consults the source address: the megaflow goes, the next packet is a miss.
        let r =
            parse_rules("priority=50000,udp,nw_src=10.0.0.1,actions=output:p3", &ports).unwrap();
        dp.update(|t| t.add(r[0].clone()));
        let (a, hit) = dp.lookup(&key, &frame);
        assert_eq!((a.single_output(), hit), (Some(3), Hit::Miss));
        dp.sync_stats();
        let counts: Vec<u64> = dp.slow_path().rules().map(|(_, s)| s.packets).collect();
        // Each new rule decided once; the DNS rule its upcall and three cached hits.
        assert_eq!(counts, [1, 1, 4, 0]);
    }
}
