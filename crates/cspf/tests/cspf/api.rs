//! The API `sift diff` uses: compile, run, `exact_for`, errors; and the demultiplexer with
//! compiled filters, checked against sift's BPF verdicts.

use sift_compile::CompileErrorKind;
use sift_compile::pipeline::{self, LinkType};
use sift_cspf::{Demux, Filter, Options};
use sift_filter::TableResolver;
use sift_gen::{Config, Generator, Link};
use sift_vm::Interpreter;

#[test]
fn exact_for_names_the_odd_length_blind_spot() {
    let r = TableResolver::well_known();
    let p =
        sift_cspf::compile_text("ip[0] & 0xf > 5", LinkType::EN10MB, &Options::new(&r)).unwrap();
    // The IPv4 version/IHL byte is byte 14: a 15-byte packet holds it, CSPF's word 7 is not
    // whole, so that length alone is not exact.
    let mut pkt = vec![0u8; 16];
    pkt[12] = 8;
    pkt[14] = 0x46;
    assert!(p.exact_for(&pkt));
    assert!(p.run(&pkt).0);
    assert!(!p.exact_for(&pkt[..15]));
    assert!(!p.run(&pkt[..15]).0, "word 7 is past the end");
    assert!(p.exact_for(&pkt[..14]));
}

#[test]
fn exact_for_with_the_extension() {
    let r = TableResolver::well_known();
    let opts = Options::new(&r).with_indirect(true);
    let p = sift_cspf::compile_text("tcp dst port 80", LinkType::EN10MB, &opts).unwrap();
    let mut pkt = vec![0u8; 74];
    pkt[12] = 0x08;
    pkt[14] = 0x45;
    pkt[23] = 6;
    pkt[36..38].copy_from_slice(&80u16.to_be_bytes());
    assert!(p.exact_for(&pkt));
    assert!(p.run(&pkt).0);
    // A bare 54-byte ACK (no Ethernet padding, as captured on the sending host) is shorter
    // than the IPv6 port fields the program also tests; it is still judged as BPF does.
    assert!(p.exact_for(&pkt[..54]));
    assert!(p.run(&pkt[..54]).0);
    assert!(!p.run(&pkt[..37]).0);
    // With IPv4 options the port lies further on than the program assumes: a short packet is
    // not exact (CSPF may reject where BPF accepts).
    pkt[14] = 0x46;
    pkt[36..38].fill(0);
    pkt[40..42].copy_from_slice(&80u16.to_be_bytes());
    assert!(p.exact_for(&pkt));
    assert!(p.run(&pkt).0);
    assert!(p.exact_for(&pkt[..42]));
    assert!(p.run(&pkt[..42]).0);
    assert!(!p.exact_for(&pkt[..41]));
}

#[test]
fn errors_say_why_and_where() {
    let r = TableResolver::well_known();
    let en10mb = LinkType::EN10MB;
    let e = sift_cspf::compile_text("ip and tcp port 80", en10mb, &Options::new(&r)).unwrap_err();
    assert!(sift_cspf::needs_indirect(&e), "{e}");
    assert_eq!(e.span.map(|s| (s.start, s.end)), Some((16, 18)));
    let e = sift_cspf::compile_text("ip", LinkType::IEEE802_11, &Options::new(&r)).unwrap_err();
    assert!(matches!(e.kind, CompileErrorKind::TargetLinkType { .. }), "{e}");
    let e = sift_cspf::compile_text("greater 100", en10mb, &Options::new(&r)).unwrap_err();
    assert!(e.render("greater 100").contains("^^^^^^^^^^^"), "{}", e.render("greater 100"));
    assert!(sift_cspf::compile(None, en10mb, &Options::new(&r)).unwrap().words().is_empty());
}

fn bpf(expr: &str, r: &TableResolver) -> Interpreter {
    let opts = pipeline::Options::new(LinkType::EN10MB, r).snaplen(65535).optimize(false);
    Interpreter::new(&pipeline::compile(expr, &opts).unwrap().program)
}

#[test]
fn demultiplexer_with_compiled_filters() {
    // A monitor that passes packets on (priority 200), then IPv4 TCP (20), then ARP (10), then
    // everything IP (5): each packet goes to the monitor and to the first of the others that
    // accepts it, as the paper's section 3.2 describes.
    let r = TableResolver::well_known();
    let opts = Options::new(&r);
    let filters = [
        (200, true, "ether multicast or not ether multicast"),
        (5, false, "ip or ip6"),
        (20, false, "ip and tcp"),
        (10, false, "arp"),
    ];
    let mut d = Demux::new();
    for (priority, cont, expr) in filters {
        let program = sift_cspf::compile_text(expr, LinkType::EN10MB, &opts).unwrap();
        d.add(Filter { priority, continue_lower: cont, program });
    }
    let oracles: Vec<Interpreter> = filters.iter().map(|f| bpf(f.2, &r)).collect();
    let mut order: Vec<usize> = (0..filters.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(filters[i].0));
    let mut g = Generator::new(0xde, Config::with_link(Link::Ethernet));
    let mut buf = Vec::new();
    let (mut to_arp, mut only_monitor) = (0, 0);
    for _ in 0..3000 {
        g.next_frame(&mut buf);
        let mut want = Vec::new();
        for &i in &order {
            if oracles[i].run(&buf, buf.len() as u32) != 0 {
                want.push(i);
                if !filters[i].1 {
                    break;
                }
            }
        }
        let got = d.deliver(&buf);
        assert_eq!(got.ports, want);
        to_arp += usize::from(got.ports.contains(&3));
        only_monitor += usize::from(got.ports == [0]);
    }
    assert!(to_arp > 0 && only_monitor > 0, "{to_arp} {only_monitor}");
}
