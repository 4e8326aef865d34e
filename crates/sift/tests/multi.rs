//! The facade's many-filter decisions on both engines equal each filter compiled alone by
//! `sift::filter::compile` (what `sift -r F EXPR` runs) and run on the JIT.

use sift::filter::{Engine, Target};
use sift::multi::{self, MultiFilter};
use sift_compile::multi::Decide;
use sift_filter::TableResolver;
use sift_gen::{Config, Generator, Link};

fn frames(n: usize, link: Link) -> Vec<(Vec<u8>, u32)> {
    let mut g = Generator::new(5, Config::with_link(link));
    (0..n)
        .map(|i| {
            let mut buf = Vec::new();
            let m = g.next_frame(&mut buf);
            // Some truncated copies: the snapshot cut headers short.
            if i % 7 == 0 {
                buf.truncate(i % 60);
            }
            (buf, m.wire_len)
        })
        .collect()
}

#[test]
fn decisions_equal_each_filter_alone_on_both_engines() {
    const _: () = {
        const fn shared<T: Send + Sync>() {}
        shared::<MultiFilter>();
    };
    let resolver = TableResolver::well_known();
    let mut text = sift_gen::filters::realistic_file(600, 8);
    text.push_str("tcpfirst priority 9 continue tcp\nlate priority -1 len > 300\nempty\n");
    let set = multi::parse_set(text.as_bytes(), "set").unwrap();
    let pkts = frames(3000, Link::Ethernet);
    let target = Target::file(sift_wire::LinkType::EN10MB, 262_144);
    let program = multi::compile(&set, &target, true, &resolver, "set").unwrap();
    let alone: Vec<sift_jit::Filter> = set
        .filters()
        .iter()
        .map(|f| {
            sift_jit::Filter::new(
                &sift::filter::compile(&f.expr, &target, true, &resolver).unwrap(),
            )
        })
        .collect();
    for engine in [Engine::Jit, Engine::Interp] {
        let mf = MultiFilter::new(program.clone(), engine);
        let mut d = mf.decision();
        let mut matches = 0;
        for (p, w) in &pkts {
            let expect: Vec<u32> =
                (0..alone.len() as u32).filter(|&r| alone[r as usize].run(p, *w) != 0).collect();
            assert_eq!(mf.decide(p, *w, Decide::All, &mut d), expect.as_slice(), "{engine:?}");
            matches += expect.len();
            let mut first = Vec::new();
            for &r in &expect {
                first.push(r);
                if !set.filters()[r as usize].cont {
                    break;
                }
            }
            assert_eq!(mf.decide(p, *w, Decide::First, &mut d), first.as_slice());
        }
        assert!(matches > pkts.len(), "{matches} matches");
        // The batch path gives the same.
        let refs: Vec<_> = pkts.iter().map(|(p, w)| sift_vm::PacketRef::new(p, *w)).collect();
        let mut seen = 0;
        mf.decide_batch(&refs, Decide::All, &mut d, |_, m| seen += m.len());
        assert_eq!(seen, matches);
    }
}

#[test]
fn set_errors_name_the_file_line_and_column() {
    let resolver = TableResolver::well_known();
    let e = multi::parse_set(b"ok tcp\nbad/name udp\n", "f.txt").unwrap_err();
    assert_eq!(
        e.to_string().lines().next().unwrap(),
        "f.txt:2:1: `bad/name` is not a filter name (1–64 letters, digits, `_`, `-`, `.`; not `.` or `..`)"
    );
    let set = multi::parse_set(b"ok tcp\nbad  port 99999\n", "f.txt").unwrap();
    let target = Target::file(sift_wire::LinkType::EN10MB, 262_144);
    let e = multi::compile(&set, &target, true, &resolver, "f.txt").unwrap_err();
    let text = e.to_string();
    // The column is the offending number's in the file (the expression starts at column 6).
    assert_eq!(
        text,
        "f.txt:2:11: filter `bad`: port 99999 is out of range (0–65535)\n  port 99999\n       ^^^^^",
    );
}
