//! Compile time of long host lists, `not (host 10.0.0.1 or … )`, optimized, next to the
//! system libpcap's `pcap_compile(…, optimize=1)` (libpcap only up to 300 terms: it needs about
//! 2 s for 300 and 90 s for 1,000 on the reference machine, quadratic in time and memory).
//! Also sift without the optimizer, to show what optimizing costs.

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{BenchmarkId, Criterion, black_box, criterion_group, criterion_main};
use sift_compile::pipeline::{self, LinkType, Options};
use sift_filter::TableResolver;
use std::time::Duration;

fn hosts(n: usize) -> String {
    let list: Vec<String> = (1..=n)
        .map(|i| format!("host 10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255))
        .collect();
    format!("not ({})", list.join(" or "))
}

fn bench(c: &mut Criterion) {
    let resolver = TableResolver::empty();
    let optimized = Options::new(LinkType::EN10MB, &resolver);
    let unoptimized = optimized.optimize(false);
    let pcap = sift_libpcap::Libpcap::load().ok();
    let mut g = c.benchmark_group("host_chain");
    g.sample_size(10).warm_up_time(Duration::from_millis(500));
    for n in [100usize, 300, 1000, 3000, 10_000] {
        let src = hosts(n);
        g.bench_with_input(BenchmarkId::new("sift_optimized", n), &src, |b, src| {
            b.iter(|| pipeline::compile(black_box(src), &optimized).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("sift_unoptimized", n), &src, |b, src| {
            b.iter(|| pipeline::compile(black_box(src), &unoptimized).unwrap())
        });
        if let Some(pcap) = &pcap
            && n <= 300
        {
            g.bench_with_input(BenchmarkId::new("libpcap_optimized", n), &src, |b, src| {
                b.iter(|| {
                    pcap.compile(
                        sift_compile::pipeline::LinkType::EN10MB,
                        262144,
                        black_box(src),
                        true,
                        0xffff_ffff,
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
