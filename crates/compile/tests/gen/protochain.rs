//! `protochain` against libpcap's own program, run by libpcap's `bpf_filter`.
//!
//! libpcap walks IPv6 extension headers and AH headers with a backward jump; sift unrolls the
//! walk [`PROTOCHAIN_STEPS`] times (its programs are acyclic). The claim tested here: on every
//! packet whose walk ends within that many header advances, sift's program returns what
//! libpcap's returns; on packets whose walk is longer, sift's `protochain` term is false.
//!
//! Packets are Ethernet frames with IPv4 or IPv6 and random chains of hop-by-hop,
//! destination-options, routing, fragment and AH headers (0 to 160 of them, so both sides of
//! the bound are covered), ending in a random final header, sometimes cut short. The walk is
//! simulated first (as libpcap's code does it, including its AH quirk: the offset after an AH
//! header is the AH length alone) to measure its length and to keep libpcap away from the
//! packets on which its loop never ends.

use crate::common::unoptimized;
use sift_compile::r#gen::PROTOCHAIN_STEPS;
use sift_compile::pipeline::{self, LinkType};
use sift_filter::SystemResolver;
use sift_libpcap::Libpcap;

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

const EXT: [u8; 4] = [0, 60, 43, 44];
const AH: u8 = 51;
const ETH: usize = 14;

/// A frame with `n` chained headers after the IP header.
fn frame(rng: &mut Rng, v6: bool, n: usize) -> Vec<u8> {
    let mut f = vec![0u8; ETH];
    f[12..14].copy_from_slice(if v6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
    let finals = [17u8, 6, 58, 59, 1, 132, 47, 255, 0x11];
    // Long chains are extension headers only (after an AH header libpcap's walk jumps back
    // near the start) and are not cut short.
    let long = n > 60;
    let kinds: Vec<u8> = (0..n)
        .map(|_| {
            if !v6 {
                AH
            } else if long {
                rng.pick(&EXT)
            } else {
                rng.pick(&[0, 60, 43, 44, 44, 43, AH])
            }
        })
        .collect();
    let first = kinds.first().copied().unwrap_or_else(|| rng.pick(&finals));
    if v6 {
        let mut h = [0u8; 40];
        h[0] = 0x60;
        h[6] = first;
        h[7] = 64;
        f.extend_from_slice(&h);
    } else {
        let mut h = [0u8; 20];
        h[0] = 0x45;
        h[9] = first;
        f.extend_from_slice(&h);
    }
    for i in 0..n {
        let next = kinds.get(i + 1).copied().unwrap_or_else(|| rng.pick(&finals));
        if kinds[i] == AH {
            // libpcap continues at (len + 2) * 4 from the network header, not after this
            // header; point it there (a real AH header is read as if at that offset).
            let at = f.len() - ETH;
            let len = rng.below(4) as u8;
            let body = usize::from(len + 2) * 4;
            let mut h = vec![0u8; body];
            h[0] = next;
            h[1] = len;
            f.extend_from_slice(&h);
            // What libpcap reads next: the header at (len + 2) * 4.
            let target = body;
            if target + 2 <= f.len() - ETH && target != at {
                f[ETH + target] = kinds.get(i + 1).copied().unwrap_or(next);
            }
        } else {
            let len = rng.below(3) as u8;
            let mut h = vec![0u8; usize::from(len + 1) * 8];
            h[0] = next;
            h[1] = len;
            f.extend_from_slice(&h);
        }
    }
    let tail = rng.below(24) as usize;
    f.extend((0..tail).map(|_| rng.next() as u8));
    if !long && rng.below(6) == 0 {
        let cut = rng.below(f.len() as u64) as usize;
        f.truncate(cut.max(1));
    }
    f
}

/// How libpcap's walk for `ip`/`ip6 protochain v` ends on `f`.
#[derive(Debug, PartialEq, Eq)]
enum Walk {
    /// After `steps` header advances, with this result (or a load past the end).
    Ends { steps: usize },
    /// Never (libpcap's loop does not end).
    Loops,
}

fn walk(f: &[u8], v6: bool, v: u32) -> Walk {
    let at = |i: usize| f.get(i).copied().map(u32::from);
    let ethertype = if v6 { [0x86, 0xdd] } else { [0x08, 0x00] };
    if f.get(12..14) != Some(&ethertype[..]) {
        return Walk::Ends { steps: 0 };
    }
    let (Some(mut a), Some(x0)) = (at(ETH + if v6 { 6 } else { 9 }), at(ETH)) else {
        return Walk::Ends { steps: 0 };
    };
    let mut x: u32 = if v6 { 40 } else { (x0 & 0xf) * 4 };
    let mut seen = std::collections::HashSet::new();
    for steps in 0.. {
        if a == v || a == 59 {
            return Walk::Ends { steps };
        }
        if !seen.insert((a, x)) {
            return Walk::Loops;
        }
        let base = (x as usize).checked_add(ETH);
        let (Some(next), Some(len)) =
            (base.and_then(at), base.and_then(|b| b.checked_add(1)).and_then(at))
        else {
            return Walk::Ends { steps };
        };
        if v6 && EXT.contains(&(a as u8)) && a < 256 {
            x = x.wrapping_add((len + 1) * 8);
        } else if a == u32::from(AH) {
            x = (len + 2) * 4;
        } else {
            return Walk::Ends { steps };
        }
        a = next;
    }
    unreachable!()
}

#[test]
fn protochain_matches_libpcaps_loop_within_the_bound() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let resolver = SystemResolver::new();
    let opts = unoptimized(LinkType::EN10MB, &resolver).snaplen(65535);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut frames = Vec::new();
    for i in 0..3000 {
        let v6 = i % 3 != 0;
        let n = match rng.below(10) {
            0..=5 => rng.below(5) as usize,
            6 | 7 => rng.below(40) as usize,
            _ if v6 => 100 + rng.below(60) as usize,
            _ => rng.below(8) as usize,
        };
        frames.push(frame(&mut rng, v6, n));
    }
    let (mut runs, mut beyond, mut loops, mut accepted) = (0usize, 0usize, 0usize, 0usize);
    let mut longest = 0;
    for (proto, v) in [
        ("ip6", 17u32),
        ("ip6", 6),
        ("ip6", 58),
        ("ip6", 59),
        ("ip6", 44),
        ("ip6", 0),
        ("ip6", 51),
        ("ip", 17),
        ("ip", 6),
        ("ip", 51),
        ("", 17),
        ("", 1),
    ] {
        let expr = format!("{proto} protochain {v}");
        let sift = pipeline::compile(&expr, &opts).unwrap_or_else(|e| panic!("{expr}: {e}"));
        let vm = sift_vm::Interpreter::new(&sift.program);
        let reference = pcap
            .compile(sift_compile::pipeline::LinkType::EN10MB, 65535, &expr, false, 0xffff_ffff)
            .expect("libpcap compiles");
        for (i, f) in frames.iter().enumerate() {
            let walks: Vec<Walk> = match proto {
                "ip6" => vec![walk(f, true, v)],
                "ip" => vec![walk(f, false, v)],
                _ => vec![walk(f, false, v), walk(f, true, v)],
            };
            let got = vm.run(f, f.len() as u32);
            if walks.contains(&Walk::Loops) {
                loops += 1;
                continue;
            }
            let steps = walks
                .iter()
                .map(|w| match w {
                    Walk::Ends { steps } => *steps,
                    Walk::Loops => 0,
                })
                .max()
                .unwrap_or(0);
            if steps > PROTOCHAIN_STEPS {
                beyond += 1;
                assert_eq!(got, 0, "{expr}: frame {i} walks {steps} headers: sift's term is false");
                continue;
            }
            longest = longest.max(steps);
            let want = pcap.filter(&reference, f, f.len() as u32);
            assert_eq!(
                got, want,
                "{expr}: frame {i} ({steps} headers): libpcap {want}, sift {got}"
            );
            runs += 1;
            accepted += usize::from(want != 0);
        }
    }
    println!(
        "protochain: {runs} runs equal to libpcap ({accepted} accepted, walks up to {longest} \
         headers), {beyond} beyond the {PROTOCHAIN_STEPS}-header bound (sift rejects), \
         {loops} on which libpcap's loop never ends (not run)"
    );
    assert!(
        runs > 20_000 && accepted > 1000 && longest > 100,
        "the packets must exercise the walk"
    );
    assert!(beyond > 100, "the packets must cross the bound");
}

#[test]
fn protochain_is_refused_where_libpcap_refuses_it() {
    let resolver = SystemResolver::new();
    use sift_compile::CompileErrorKind as K;
    use sift_compile::error::LinkFeature;
    let variable_headers =
        |k: &K| matches!(k, K::NotOnLinkType { what: LinkFeature::Protochain, .. });
    let qualifier = |k: &K| {
        matches!(
            k,
            K::Parse { kind: sift_filter::ParseErrorKind::QualifierInvalid { qual, target }, .. }
                if qual == "tcp" && target == "protochain"
        )
    };
    type Check<'a> = &'a dyn Fn(&K) -> bool;
    let cases: [(i32, &str, Check); 2] =
        [(105, "protochain 6", &variable_headers), (1, "tcp protochain 6", &qualifier)];
    for (dlt, expr, want) in cases {
        let link = LinkType::from_dlt(dlt).expect("a DLT number");
        let e = pipeline::compile(expr, &unoptimized(link, &resolver)).expect_err(expr);
        assert!(want(&e.kind), "{expr}: {e}");
    }
}
