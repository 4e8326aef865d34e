//! Per-packet cost of a many-filter decision program against one filter, in memory (the quick
//! figure while developing; `sift bench --filters` measures a capture as the offline paths
//! read it).
//!
//! `cargo run --release -p sift --example multi_cost -- [FRAMES]`; `SIZES=1,1000` the set sizes,
//! `REPS` the rounds, `INTERP=1` members on the interpreter, `SUMMARY=1` the index's tables,
//! `PHASES=1` the compile time by stage (parse and generate, optimize and emit, analyse).

use sift::filter::{Engine, Target};
use sift::multi::MultiFilter;
use sift_compile::multi::{Decide, FilterSet};
use sift_filter::TableResolver;
use sift_gen::{Config, Generator, Link};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let frames: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let mut g = Generator::new(9, Config::with_link(Link::Ethernet));
    let mut pkts = Vec::with_capacity(frames);
    for _ in 0..frames {
        let mut buf = Vec::new();
        let m = g.next_frame(&mut buf);
        pkts.push((buf, m.wire_len));
    }
    let resolver = TableResolver::well_known();
    let target = Target::file(sift_wire::LinkType::EN10MB, 262_144);
    let sizes: Vec<usize> = std::env::var("SIZES").ok().map_or(vec![1, 100, 1000, 10_000], |s| {
        s.split(',').filter_map(|x| x.parse().ok()).collect()
    });
    for n in sizes {
        let text = sift_gen::filters::realistic_file(n, 42);
        let set = FilterSet::parse(text.as_bytes()).unwrap();
        if std::env::var("PHASES").is_ok() {
            let opts = target.options(true, &resolver);
            let t = Instant::now();
            let graphs: Vec<_> = set
                .filters()
                .iter()
                .map(|f| sift_compile::pipeline::graph(&f.expr, &opts.optimize(false)).unwrap())
                .collect();
            let generated = t.elapsed();
            let t = Instant::now();
            let mut compiled = Vec::new();
            for g in graphs {
                let mut cfg = g.cfg;
                let stats = Some(sift_compile::optimize(&mut cfg));
                compiled.push(sift_compile::pipeline::finish(
                    sift_compile::pipeline::Graph { cfg, stats },
                    &opts,
                ));
            }
            let fin = t.elapsed();
            let t = Instant::now();
            for c in compiled.iter().flatten() {
                std::hint::black_box(sift_compile::multi::anchor::prepare(&c.cfg));
            }
            println!(
                "phases: parse+gen {:?}, optimize+emit {:?}, prepare {:?}",
                generated,
                fin,
                t.elapsed()
            );
        }
        let t = Instant::now();
        let prog = sift::multi::compile(&set, &target, true, &resolver, "set").unwrap();
        let compile = t.elapsed();
        let t = Instant::now();
        if std::env::var("SUMMARY").is_ok() {
            print!("{}", prog.summary());
        }
        let engine = if std::env::var("INTERP").is_ok() { Engine::Interp } else { Engine::Jit };
        let mf = MultiFilter::new(prog, engine);
        let jit = t.elapsed();
        let one = mf.member_engine(0).expect("first filter runs");
        let mut d = mf.decision();
        let mut ones = Vec::new();
        let mut alls = Vec::new();
        let mut firsts = Vec::new();
        let mut sink = 0usize;
        let mut cands = 0usize;
        let refs: Vec<sift_vm::PacketRef<'_>> =
            pkts.iter().map(|(p, w)| sift_vm::PacketRef::new(p, *w)).collect();
        let mut verdicts = Vec::new();
        let reps: usize = std::env::var("REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
        for _ in 0..reps {
            let t = Instant::now();
            for b in refs.chunks(1024) {
                sink += one.run_batch(b, &mut verdicts);
            }
            ones.push(t.elapsed().as_nanos() as f64 / frames as f64);
            let t = Instant::now();
            for b in refs.chunks(1024) {
                sink += mf.decide_batch(b, Decide::All, &mut d, |_, m| cands += m.len());
            }
            alls.push(t.elapsed().as_nanos() as f64 / frames as f64);
            let t = Instant::now();
            for b in refs.chunks(1024) {
                sink += mf.decide_batch(b, Decide::First, &mut d, |_, _| {});
            }
            firsts.push(t.elapsed().as_nanos() as f64 / frames as f64);
        }
        let (o, a, f) = (median(ones), median(alls), median(firsts));
        println!(
            "{n:>6} filters: compile {:>7.1} ms + jit {:>6.1} ms; one {o:.1} ns, all {a:.1} ns ({:.1}x), first {f:.1} ns ({:.1}x); {:.2} matches/pkt [{}]",
            compile.as_secs_f64() * 1e3,
            jit.as_secs_f64() * 1e3,
            a / o,
            f / o,
            cands as f64 / (reps * frames) as f64,
            sink % 7
        );
    }
}
