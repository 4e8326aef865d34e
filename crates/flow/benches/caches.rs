//! The cost of the datapath's caches in nanoseconds per packet: a microflow hit, a megaflow
//! hit (microflow cache off, or missed because there are more flows than it holds), and a
//! miss (the slow path's classification and the megaflow's installation), with 100 and 1,000
//! rules; and key extraction, which every packet pays first.
//!
//! Rules are `sift_flow::testgen`'s random rule sets (overlapping prefixes, ports, priorities
//! and protocols). Keys come from `sift_gen` traffic: 1,000 distinct flows (they fit in the
//! 8,192-entry microflow cache), and 100,000 flows made from them by varying the client's
//! port (many more than it holds). Each measured iteration is one lookup, so criterion's
//! time is the time per packet. Misses are timed on fresh datapaths over the keys that miss
//! on a fresh datapath, in order (each installs a megaflow).
//!
//! Run: `cargo bench -p sift-flow --bench caches` (not while building: the machine is shared).

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, black_box, criterion_group, criterion_main};
use sift_flow::testgen::{self, XorShift};
use sift_flow::{CacheConfig, Datapath, Field, FlowKey, FlowTable, Hit, parse_rules};
use sift_gen::{Config, Generator};

/// Distinct keys of `sift_gen` traffic with a frame length each.
fn flows(n: usize) -> Vec<(FlowKey, usize)> {
    let config = Config { max_flows: 512, ..Config::default() };
    let mut g = Generator::new(42, config);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while out.len() < n {
        g.next_frame(&mut buf);
        let key = FlowKey::extract(1 + (out.len() % 4) as u32, &buf);
        if seen.insert(key) {
            out.push((key, buf.len()));
        }
    }
    out
}

/// `base` × `per` flows: each base flow with `per` client ports.
fn many_flows(base: &[(FlowKey, usize)], per: u16) -> Vec<(FlowKey, usize)> {
    let mut out = Vec::with_capacity(base.len() * per as usize);
    for p in 0..per {
        for (k, len) in base {
            let mut k = *k;
            k.set(Field::TpSrc, u128::from(32768 + p));
            out.push((k, *len));
        }
    }
    out
}

fn table(rules: usize) -> FlowTable {
    let mut e = XorShift(rules as u64);
    let ports = testgen::ports();
    FlowTable::with_rules(parse_rules(&testgen::rule_set_text(&mut e, rules), &ports).unwrap())
}

const SEED: u64 = 1;

fn config(microflow_entries: usize) -> CacheConfig {
    CacheConfig { microflow_entries, seed: Some(SEED), ..CacheConfig::default() }
}

/// Times `iters` lookups cycling over `keys` on a warmed datapath.
fn hits(dp: &mut Datapath<FlowTable>, keys: &[(FlowKey, usize)], iters: u64) -> Duration {
    let frame = [0u8; 9000];
    for (k, len) in keys {
        dp.lookup(k, &frame[..(*len).min(frame.len())]);
    }
    let start = Instant::now();
    let mut i = 0;
    for _ in 0..iters {
        let (k, len) = &keys[i];
        black_box(dp.lookup(black_box(k), &frame[..(*len).min(frame.len())]));
        i += 1;
        if i == keys.len() {
            i = 0;
        }
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let few = flows(1000);
    let many = many_flows(&few, 100);
    let frame = [0u8; 9000];

    let mut g = c.benchmark_group("extract");
    let mut generator = Generator::new(7, Config::default());
    let frames: Vec<Vec<u8>> = (0..1000)
        .map(|_| {
            let mut b = Vec::new();
            generator.next_frame(&mut b);
            b
        })
        .collect();
    g.bench_function("sift_gen_mix", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters {
                black_box(FlowKey::extract(1, black_box(&frames[i as usize % frames.len()])));
            }
            start.elapsed()
        })
    });
    g.finish();

    for rules in [100, 1000] {
        let t = table(rules);
        let mut g = c.benchmark_group("lookup");
        g.measurement_time(Duration::from_secs(3));

        // The flows whose microflow slots differ (direct mapping: about one in nine of 1,000
        // flows shares a slot with another and would be a megaflow hit).
        let mut slots = std::collections::HashSet::new();
        let unique: Vec<_> =
            few.iter().filter(|(k, _)| slots.insert(k.hash(SEED) & 8191)).copied().collect();
        let mut dp = Datapath::new(t.clone(), config(8192));
        g.bench_with_input(BenchmarkId::new("microflow_hit", rules), &unique, |b, keys| {
            b.iter_custom(|iters| hits(&mut dp, keys, iters))
        });
        let mut warm = Datapath::new(t.clone(), config(8192));
        hits(&mut warm, &unique, 0);
        let before = warm.counters();
        hits(&mut warm, &unique, 0);
        let after = warm.counters();
        assert_eq!(after.microflow_hits - before.microflow_hits, unique.len() as u64);

        let mut dp = Datapath::new(t.clone(), config(0));
        g.bench_with_input(BenchmarkId::new("megaflow_hit", rules), &few, |b, keys| {
            b.iter_custom(|iters| hits(&mut dp, keys, iters))
        });

        let mut dp = Datapath::new(t.clone(), config(8192));
        g.bench_with_input(BenchmarkId::new("100k_flows", rules), &many, |b, keys| {
            b.iter_custom(|iters| hits(&mut dp, keys, iters))
        });
        let c = dp.counters();
        eprintln!(
            "lookup/100k_flows/{rules}: {} microflow hits, {} megaflow hits, {} misses; \
             {} megaflows in {} subtables",
            c.microflow_hits,
            c.megaflow_hits,
            c.misses,
            dp.megaflow_count(),
            dp.subtable_count()
        );

        // The keys that miss on a fresh datapath, in order.
        let mut probe = Datapath::new(t.clone(), config(8192));
        let misses: Vec<(FlowKey, usize)> = many
            .iter()
            .filter(|(k, len)| probe.lookup(k, &frame[..(*len).min(frame.len())]).1 == Hit::Miss)
            .copied()
            .collect();
        eprintln!("lookup/miss/{rules}: {} of {} keys miss", misses.len(), many.len());
        g.bench_with_input(BenchmarkId::new("miss", rules), &misses, |b, keys| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let mut dp = Datapath::new(t.clone(), config(8192));
                    let n = keys.len().min((iters - done) as usize);
                    let start = Instant::now();
                    for (k, len) in &keys[..n] {
                        black_box(dp.lookup(black_box(k), &frame[..(*len).min(frame.len())]));
                    }
                    total += start.elapsed();
                    done += n as u64;
                }
                total
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
