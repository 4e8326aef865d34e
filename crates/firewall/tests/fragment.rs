//! pf's fragment reassembly ([`sift_firewall::fragment`]) on golden case files, and property
//! tests.
//!
//! Each file in `tests/fragment/` is one scenario, most of them rebuilding a test of OpenBSD's
//! `regress/sys/net/pf_fragment` (the file's comment names it). A line pushes a fragment,
//! expires queues or reports counts, and ends with ` => ` and the outcome; a complete datagram
//! is followed by its data as runs of fill bytes. `BLESS=1` rewrites the outcomes.
//!
//! Line forms (offsets and lengths in octets; `at=` is the time in seconds, default the last):
//!
//! ```text
//! limits frags=N timeout=T      # before any packet
//! nodf                          # set reassemble yes no-df
//! v4 id=1 off=0 mf=1 fill=A*16 [proto=P] [src=N] [df=1] [at=T]
//! v4 id=1..200 off=8 mf=1 fill=C*8     # one fragment for each id, outcomes counted
//! v6 id=1 off=0 mf=1 fill=A*8+X*8 [nh=58] [hop=1] [src=N] [at=T]
//! raw 4500...                   # any bytes, in hex
//! expire at=T
//! stats
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use sift_firewall::Reason;
use sift_firewall::fragment::{FragLimits, Reassembler, Reassembly, refragment6};

/// An IPv4 fragment from 10.0.0.`src` to 10.0.0.2.
fn v4(id: u16, off: u16, mf: bool, df: bool, proto: u8, src: u8, data: &[u8]) -> Vec<u8> {
    let total = (20 + data.len()) as u16;
    let flags = (off / 8) | if mf { 0x2000 } else { 0 } | if df { 0x4000 } else { 0 };
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&flags.to_be_bytes());
    p.extend_from_slice(&[64, proto, 0, 0, 10, 0, 0, src, 10, 0, 0, 2]);
    let sum = sift_wire::checksum::internet(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(data);
    p
}

/// An IPv6 fragment from fd00::`src` to fd00::2, with a hop-by-hop header first if `hop`.
fn v6(id: u32, off: u16, mf: bool, nh: u8, hop: bool, src: u8, data: &[u8]) -> Vec<u8> {
    let ext = if hop { 8 } else { 0 };
    let plen = (ext + 8 + data.len()) as u16;
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&plen.to_be_bytes());
    p.extend_from_slice(&[if hop { 0 } else { 44 }, 64]);
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[15] = src;
    p.extend_from_slice(&a);
    a[15] = 2;
    p.extend_from_slice(&a);
    if hop {
        p.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]);
    }
    let offlg = off | u16::from(mf);
    p.extend_from_slice(&[nh, 0]);
    p.extend_from_slice(&offlg.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(data);
    p
}

/// `A*16+X*8` → the bytes.
fn fill(spec: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for run in spec.split('+').filter(|r| !r.is_empty()) {
        let (c, n) = run.split_once('*').unwrap_or((run, "1"));
        let n: usize = n.parse().unwrap_or_else(|_| panic!("bad run {run}"));
        out.extend(std::iter::repeat_n(c.as_bytes()[0], n));
    }
    out
}

/// The bytes as runs: `A*16 B*8`.
fn runs(data: &[u8]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        let n = data[i..].iter().take_while(|&&x| x == b).count();
        let c = if b.is_ascii_graphic() { (b as char).to_string() } else { format!("\\x{b:02x}") };
        out.push(format!("{c}*{n}"));
        i += n;
    }
    out.join(" ")
}

fn reason(r: Reason) -> &'static str {
    r.name()
}

/// The outcome of a push, and the data line of a complete datagram.
fn outcome(r: &Reassembly) -> (String, Option<String>) {
    match r {
        Reassembly::NotFragment => ("not-fragment".into(), None),
        Reassembly::Held => ("held".into(), None),
        Reassembly::Dropped(why) => (format!("dropped {}", reason(*why)), None),
        Reassembly::Complete(d) => {
            let b = &d.bytes;
            if b[0] >> 4 == 4 {
                let hlen = usize::from(b[0] & 15) * 4;
                assert_eq!(sift_wire::checksum::internet(&b[..hlen]), 0, "IPv4 header checksum");
                assert_eq!(usize::from(u16::from_be_bytes([b[2], b[3]])), b.len());
                let off = u16::from_be_bytes([b[6], b[7]]);
                (format!("complete len={} off={off:#x}", b.len()), Some(runs(&b[hlen..])))
            } else {
                let rf = d.refrag.expect("IPv6 refrag");
                let hdr = usize::from(rf.hdrlen);
                assert_eq!(usize::from(u16::from_be_bytes([b[4], b[5]])) + 40, b.len());
                let nh = if rf.extoff != 0 { b[usize::from(rf.extoff)] } else { b[6] };
                (
                    format!(
                        "complete len={} hdrlen={hdr} nh={nh} maxlen={} id={}",
                        b.len(),
                        rf.maxlen,
                        rf.id
                    ),
                    Some(runs(&b[hdr..])),
                )
            }
        }
    }
}

/// `key=value` words of a line.
fn words(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace().skip(1).filter_map(|w| w.split_once('=')).collect()
}

fn num<T: std::str::FromStr>(w: &BTreeMap<&str, &str>, k: &str, default: T) -> T {
    w.get(k).map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("bad {k}={v}")))
}

/// Runs one case file, returning its text with the outcomes written.
fn run_case(text: &str) -> String {
    let mut out = String::new();
    let mut limits = FragLimits::default();
    let mut r: Option<Reassembler> = None;
    let mut no_df = false;
    let mut now = 0u64;
    for line in text.lines() {
        if line.starts_with("  data ") {
            continue;
        }
        let input = line.split(" => ").next().unwrap_or(line).trim_end();
        let kind = input.split_whitespace().next().unwrap_or("");
        if kind.is_empty() || kind.starts_with('#') {
            out.push_str(input);
            out.push('\n');
            continue;
        }
        let w = words(input);
        let result = match kind {
            "limits" => {
                limits.frags = num(&w, "frags", limits.frags);
                limits.timeout_secs = num(&w, "timeout", limits.timeout_secs);
                out.push_str(input);
                out.push('\n');
                continue;
            }
            "nodf" => {
                no_df = true;
                out.push_str(input);
                out.push('\n');
                continue;
            }
            _ => {
                let ra = r.get_or_insert_with(|| Reassembler::new(limits).with_no_df(no_df));
                now = num(&w, "at", now);
                match kind {
                    "expire" => (format!("freed {}", ra.expire(now)), None),
                    "stats" => {
                        (format!("fragments={} queues={}", ra.fragments(), ra.queues()), None)
                    }
                    "raw" => {
                        let hex = input.split_whitespace().nth(1).unwrap_or("");
                        let bytes: Vec<u8> = (0..hex.len() / 2)
                            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                            .collect();
                        outcome(&ra.push(&bytes, now))
                    }
                    "v4" | "v6" => {
                        let ids = w.get("id").copied().unwrap_or("1");
                        let (lo, hi) = match ids.split_once("..") {
                            Some((a, b)) => (a.parse::<u32>().unwrap(), b.parse::<u32>().unwrap()),
                            None => (ids.parse().unwrap(), ids.parse().unwrap()),
                        };
                        let data = fill(w.get("fill").copied().unwrap_or(""));
                        let off = num(&w, "off", 0u16);
                        let mf = num(&w, "mf", 0u8) != 0;
                        let src = num(&w, "src", 1u8);
                        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
                        let mut last = (String::new(), None);
                        for id in lo..=hi {
                            let pkt = if kind == "v4" {
                                v4(
                                    id as u16,
                                    off,
                                    mf,
                                    num(&w, "df", 0u8) != 0,
                                    num(&w, "proto", 17u8),
                                    src,
                                    &data,
                                )
                            } else {
                                v6(
                                    id,
                                    off,
                                    mf,
                                    num(&w, "nh", 17u8),
                                    num(&w, "hop", 0u8) != 0,
                                    src,
                                    &data,
                                )
                            };
                            last = outcome(&ra.push(&pkt, now));
                            *seen.entry(last.0.clone()).or_default() += 1;
                        }
                        if lo == hi {
                            last
                        } else {
                            let s: Vec<String> =
                                seen.iter().map(|(k, n)| format!("{k} x{n}")).collect();
                            (s.join(", "), None)
                        }
                    }
                    other => panic!("unknown line kind {other:?}"),
                }
            }
        };
        out.push_str(&format!("{input} => {}\n", result.0));
        if let Some(data) = result.1 {
            out.push_str(&format!("  data {data}\n"));
        }
    }
    out
}

#[test]
fn golden_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fragment");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "frag"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "case files: {}", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        sift_testkit::golden(&f, &run_case(&text));
    }
}

/// A UDP-like datagram of `len` octets cut into fragments of `size` (a multiple of 8).
fn cut(data: &[u8], size: usize) -> Vec<(u16, bool, &[u8])> {
    data.chunks(size)
        .enumerate()
        .map(|(i, c)| ((i * size) as u16, (i + 1) * size < data.len(), c))
        .collect()
}

#[test]
fn refragment6_cuts_as_received() {
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut r = Reassembler::new(FragLimits::default());
    let mut done = None;
    for (off, mf, c) in cut(&data, 1232) {
        if let Reassembly::Complete(d) = r.push(&v6(77, off, mf, 17, true, 1, c), 0) {
            done = Some(d);
        }
    }
    let d = done.expect("complete");
    let rf = d.refrag.unwrap();
    assert_eq!((rf.hdrlen, rf.extoff, rf.maxlen, rf.id), (48, 40, 1232, 77));
    let frags = refragment6(&d.bytes, &rf).unwrap();
    let again: Vec<Vec<u8>> =
        cut(&data, 1232).iter().map(|&(off, mf, c)| v6(77, off, mf, 17, true, 1, c)).collect();
    assert_eq!(frags, again);
    // Fewer than 8 octets per fragment: pf drops.
    assert_eq!(
        refragment6(&d.bytes, &sift_firewall::fragment::Refrag { maxlen: 7, ..rf }),
        Err(Reason::Fragment)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any order of a non-overlapping fragment set gives back the datagram.
    #[test]
    fn any_order_reassembles(
        len in 1usize..6000,
        size in 8usize..200, // at least 64 octets: PF_FRAG_ENTRY_LIMIT fragments per 4,096
        v6_ in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let size = size * 8;
        let data: Vec<u8> = (0..len).map(|i| (i as u64 ^ seed) as u8).collect();
        let mut frags: Vec<Vec<u8>> = cut(&data, size)
            .into_iter()
            .map(|(off, mf, c)| if v6_ { v6(9, off, mf, 17, false, 1, c) } else { v4(9, off, mf, false, 17, 1, c) })
            .collect();
        // A seeded shuffle.
        let mut s = seed | 1;
        for i in (1..frags.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            frags.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let mut r = Reassembler::new(FragLimits::default());
        let n = frags.len();
        let single = n == 1;
        for (i, f) in frags.iter().enumerate() {
            let got = r.push(f, 0);
            if single {
                prop_assert_eq!(got, Reassembly::NotFragment);
            } else if i + 1 < n {
                prop_assert_eq!(got, Reassembly::Held);
            } else {
                let Reassembly::Complete(d) = got else { panic!("{got:?}") };
                let hdr = if v6_ { 40 } else { 20 };
                prop_assert_eq!(&d.bytes[hdr..], &data[..]);
                prop_assert_eq!(r.fragments(), 0);
            }
        }
    }

    /// A flood of random fragments stays within the limits.
    #[test]
    fn floods_stay_bounded(
        pkts in proptest::collection::vec((0u16..64, 0u16..8192, any::<bool>(), 0usize..1500, any::<bool>(), 0u8..4), 1..400),
        frags in 1usize..64,
    ) {
        let limits = FragLimits { frags, timeout_secs: 60 };
        let mut r = Reassembler::new(limits);
        let data = vec![0xabu8; 1500];
        for (t, &(id, off, mf, len, is6, src)) in pkts.iter().enumerate() {
            let off = off * 8;
            let p = if is6 { v6(id.into(), off, mf, 6, false, src, &data[..len]) } else { v4(id, off, mf, false, 6, src, &data[..len]) };
            let _ = r.push(&p, t as u64 / 10);
            prop_assert!(r.fragments() <= frags);
            prop_assert!(r.held_bytes() <= frags * 3 * 65536);
            prop_assert!(r.memory() <= (frags + 1) * (3 * 65536 + 1024) + 4096);
        }
        r.expire(u64::MAX);
        prop_assert_eq!(r.fragments(), 0);
    }
}
