//! pf's fragment reassembly: 1,000 UDP datagrams of 4,000 octets, each in three fragments of
//! a 1,500-octet MTU (1,480 + 1,480 + 1,048 data octets), every fourth datagram's fragments
//! out of order, IPv4 and IPv6. Issue 17's target: 1,000 datagrams in under a millisecond.
//!
//! `cargo bench -p sift-firewall --bench reassembly`; the median per iteration is the time
//! for all 1,000 datagrams (`target/criterion/reassembly/*/new/estimates.json`).
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sift_firewall::fragment::{FragLimits, Reassembler, Reassembly};

const DATAGRAMS: usize = 1000;
const PAYLOAD: usize = 4000;

fn v4(id: u16, off: usize, mf: bool, data: &[u8]) -> Vec<u8> {
    let total = (20 + data.len()) as u16;
    let flags = (off / 8) as u16 | if mf { 0x2000 } else { 0 };
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&flags.to_be_bytes());
    p.extend_from_slice(&[64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    p.extend_from_slice(data);
    p
}

fn v6(id: u32, off: usize, mf: bool, data: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[44, 64]);
    p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    p.extend_from_slice(&[17, 0]);
    p.extend_from_slice(&(off as u16 | u16::from(mf)).to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(data);
    p
}

/// The fragments of every datagram, in arrival order.
fn fragments(six: bool) -> Vec<Vec<u8>> {
    let data: Vec<u8> = (0..PAYLOAD).map(|i| i as u8).collect();
    let size = if six { 1448 } else { 1480 };
    let mut out = Vec::new();
    for d in 0..DATAGRAMS {
        let mut frags: Vec<Vec<u8>> = data
            .chunks(size)
            .enumerate()
            .map(|(i, c)| {
                let (off, mf) = (i * size, (i + 1) * size < PAYLOAD);
                if six { v6(d as u32, off, mf, c) } else { v4(d as u16, off, mf, c) }
            })
            .collect();
        if d % 4 == 0 {
            frags.reverse();
        }
        out.extend(frags);
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("reassembly");
    g.throughput(Throughput::Elements(DATAGRAMS as u64));
    for (name, six) in [("ipv4_1000_datagrams", false), ("ipv6_1000_datagrams", true)] {
        let frags = fragments(six);
        let mut r = Reassembler::new(FragLimits::default());
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut done = 0;
                for f in &frags {
                    if let Reassembly::Complete(d) = r.push(f, 0) {
                        done += d.bytes.len();
                    }
                }
                assert_eq!(done, DATAGRAMS * (PAYLOAD + if six { 40 } else { 20 }));
                done
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).sample_size(30);
    targets = bench
}
criterion_main!(benches);
