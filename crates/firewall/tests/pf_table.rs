//! OpenBSD's `regress/sys/net/pf_table`: a table loaded from `table.in` (networks, some
//! negated) matches every address of `table.hit` and none of `table.miss`; and the trie
//! agrees with a linear scan of the entries (the longest covering prefix decides) under random
//! additions and deletions.

use std::net::IpAddr;

use proptest::prelude::*;
use sift_firewall::table::{self, Prefix, Table};

fn addresses(text: &str) -> Vec<IpAddr> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.parse().unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn pf_table_corpus() {
    let Some(dir) = sift_testkit::corpus("pf/pf_table") else { return };
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let entries = table::load_file(&dir.join("table.in")).unwrap();
    assert!(entries.iter().any(|e| e.negated));
    let mut t = Table::with_entries("__regress_tbl", &entries);
    assert_eq!(t.len(), entries.len());
    let hits = addresses(&read("table.hit"));
    let misses = addresses(&read("table.miss"));
    assert!(!hits.is_empty() && !misses.is_empty());
    for a in &hits {
        assert!(t.matches(*a), "hit {a} does not match");
    }
    for a in &misses {
        assert!(!t.matches(*a), "miss {a} matches");
    }
    let c = t.counters();
    assert_eq!((c.matches, c.misses), (hits.len() as u64, misses.len() as u64));
}

/// The linear reference: the longest prefix covering `a` decides.
fn scan(entries: &[Prefix], a: IpAddr) -> bool {
    entries
        .iter()
        .filter(|e| {
            e.addr.is_ipv4() == a.is_ipv4()
                && table::key_of(a) & table::mask(e.len) == table::key_of(e.addr)
        })
        .max_by_key(|e| e.len)
        .is_some_and(|e| !e.negated)
}

fn small_v4() -> impl Strategy<Value = IpAddr> {
    // A few bits of variety in the high byte and the low bytes, so prefixes nest.
    (0u8..4, 0u8..4, any::<u8>()).prop_map(|(a, b, c)| IpAddr::from([10 + a, b, 0, c & 0x1f]))
}

fn small_v6() -> impl Strategy<Value = IpAddr> {
    (0u16..4, 0u16..4).prop_map(|(a, b)| IpAddr::from([0x2001, 0xdb8, a, 0, 0, 0, 0, b]))
}

fn prefix() -> impl Strategy<Value = Prefix> {
    prop_oneof![
        (small_v4(), 0u8..=32, any::<bool>()).prop_map(|(a, l, n)| Prefix::new(a, l, n).unwrap()),
        (small_v6(), prop_oneof![0u8..=64, 100u8..=128], any::<bool>())
            .prop_map(|(a, l, n)| Prefix::new(a, l, n).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn trie_is_a_longest_prefix_scan(
        ops in prop::collection::vec((any::<bool>(), prefix()), 1..60),
        probes in prop::collection::vec(prop_oneof![small_v4(), small_v6()], 1..40),
    ) {
        let mut t = Table::new("t");
        let mut model: Vec<Prefix> = Vec::new();
        for (add, p) in ops {
            let same = |e: &Prefix| e.addr == p.addr && e.len == p.len;
            if add {
                if !model.iter().any(same) {
                    model.push(p);
                }
                t.add(p);
            } else {
                let present = model.iter().position(|e| same(e) && e.negated == p.negated);
                prop_assert_eq!(t.delete(&p), present.is_some());
                if let Some(i) = present {
                    model.remove(i);
                }
            }
            prop_assert_eq!(t.len(), model.len());
        }
        for a in probes {
            prop_assert_eq!(t.test(a), scan(&model, a), "{}", a);
        }
        let mut listed = t.entries();
        listed.sort_by_key(|e| (e.addr, e.len));
        model.sort_by_key(|e| (e.addr, e.len));
        prop_assert_eq!(listed, model);
    }
}
