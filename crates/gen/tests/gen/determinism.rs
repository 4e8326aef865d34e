//! The stream is a pure function of (seed, config), and a pinned digest catches accidental
//! changes to it.
//!
//! **If `pinned_digests` fails** after a deliberate change to the generator (a new protocol, a
//! different mix), every capture, golden file and benchmark input generated from a seed
//! changes too. Make sure that is intended, say so in the commit message, and update the
//! digests to the values printed by the failure.

use crate::common;

use sift_gen::{Config, Generator, Link};

fn fnv1a(acc: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *acc ^= u64::from(b);
        *acc = acc.wrapping_mul(0x0100_0000_01b3);
    }
}

fn digest(seed: u64, cfg: Config, n: usize) -> u64 {
    let mut g = Generator::new(seed, cfg);
    let mut buf = Vec::new();
    let mut acc = 0xcbf2_9ce4_8422_2325u64;
    for _ in 0..n {
        let m = g.next_frame(&mut buf);
        fnv1a(&mut acc, &m.ts_sec.to_le_bytes());
        fnv1a(&mut acc, &m.ts_nsec.to_le_bytes());
        fnv1a(&mut acc, &m.wire_len.to_le_bytes());
        fnv1a(&mut acc, &[u8::from(m.malformed)]);
        fnv1a(&mut acc, &(buf.len() as u32).to_le_bytes());
        fnv1a(&mut acc, &buf);
    }
    acc
}

#[test]
fn same_seed_same_bytes() {
    for link in Link::ALL {
        let cfg = Config { malformed: 0.02, truncate: 0.02, ..Config::with_link(link) };
        let a = common::frames(&mut Generator::new(11, cfg), 3000);
        let b = common::frames(&mut Generator::new(11, cfg), 3000);
        assert!(a == b, "{link:?}: two generators with one seed disagree");
        let c = common::frames(&mut Generator::new(12, cfg), 3000);
        assert!(a != c, "{link:?}: seeds 11 and 12 give the same stream");
    }
}

#[test]
fn buffer_contents_do_not_leak_between_frames() {
    // A dirty, oversized buffer gives the same frames as a fresh one.
    let cfg = Config::default();
    let mut g1 = Generator::new(3, cfg);
    let mut g2 = Generator::new(3, cfg);
    let mut dirty = vec![0xee; 100_000];
    for _ in 0..2000 {
        let mut fresh = Vec::new();
        let m1 = g1.next_frame(&mut fresh);
        let m2 = g2.next_frame(&mut dirty);
        assert_eq!((m1, &fresh), (m2, &dirty));
    }
}

#[test]
fn pinned_digests() {
    let cases: [(&str, Config, u64); 3] = [
        ("default EN10MB", Config::default(), 0x5ddb_4f78_4042_8ff6),
        ("LINUX_SLL2", Config::with_link(Link::LinuxSll2), 0xca18_4ec0_02a1_b1d2),
        (
            "RAW, malformed and truncated",
            Config { malformed: 0.05, truncate: 0.05, snaplen: 96, ..Config::with_link(Link::Raw) },
            0xaece_dad1_c61b_73d8,
        ),
    ];
    let mut report = String::new();
    for (name, cfg, pinned) in cases {
        let got = digest(1, cfg, 20_000);
        if got != pinned {
            report.push_str(&format!("  {name}: pinned {pinned:#018x}, got {got:#018x}\n"));
        }
    }
    assert!(
        report.is_empty(),
        "the generated stream changed:\n{report}If the change is intended, update the digests in this test \
         (see the note at the top of the file)."
    );
}
