//! CSPF against sift's classic BPF program for the same expression: on EN10MB packet sets
//! (sift-gen traffic, scrambled copies, every short prefix, random frames) the accept/reject
//! verdicts must be identical on every packet the program calls exact
//! ([`sift_cspf::CspfProgram::exact_for`]), under both short-circuit semantics, with and
//! without the indirect-push extension. Run with `--nocapture` for the figures.

use std::collections::BTreeMap;

use sift_compile::pipeline::{self, LinkType};
use sift_cspf::{CspfProgram, Machine, Options, ShortCircuit};
use sift_filetests::{ExprGen, PacketSet};
use sift_filter::SystemResolver;
use sift_vm::Interpreter;

/// Expressions written by hand: what the paper and the BPF paper filter on, and the corners.
const HAND: &[&str] = &[
    "",
    "ip",
    "arp",
    "rarp",
    "ip6",
    "ether proto 0x0800",
    "ether proto 0x88cc",
    "not ip",
    "ip or arp",
    "arp or ip",
    "ip and not arp",
    "ip and udp",
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "igmp",
    "sctp",
    "ip proto 47",
    "ip6 proto 17",
    "proto 6",
    "host 10.0.0.1",
    "ip host 10.0.0.1",
    "arp host 10.0.0.1",
    "src host 10.0.0.1",
    "dst host 10.0.0.53",
    "src host 10.0.0.1 and dst host 10.0.0.53",
    "host 10.0.0.1 and host 10.0.0.53",
    "ip src and dst host 10.0.0.1",
    "net 10.0.0.0/8",
    "net 10.0.0.0/24",
    "src net 10.1",
    "dst net 192.0.2.0 mask 255.255.255.0",
    "ip6 host 2001:db8:1::1",
    "ip6 net 2001:db8::/32",
    "host 2001:db8:1::53",
    "ether host 02:00:00:00:00:01",
    "ether src 02:00:00:00:00:01",
    "ether dst ff:ff:ff:ff:ff:ff",
    "ether broadcast",
    "ether multicast",
    "broadcast or multicast",
    "ip multicast",
    "ip6 multicast",
    "ip[0] & 0xf > 5",
    "ip[0] & 0xf != 5",
    "ip[6:2] & 0x1fff = 0",
    "ip[8] < 64",
    "ip[2:2] > 1000",
    "ip[12:4] = 0x0a000001",
    "ether[12:2] = 0x86dd",
    "ether[0] & 1 = 1",
    "ether[13] = 6",
    "ether[1:4] = 0x01020304",
    "ether[3:2] >= 0x100",
    "ether[5:4] > 0x10000000",
    "link[12:2] = 0x0800",
    "arp[6:2] = 2",
    "ip6[6] = 58",
    "icmp6[0] = 135",
    "byte 23 = 6",
    "byte 14 > 0x44",
    "byte 14 < 0x46",
    "1 = 1",
    "1 = 2",
    "not (ip or ip6)",
    "ip or ip6 or arp",
    "(ip and udp) or arp",
    "arp or (ip and ip[19] = 1)",
    "(ip and ip[60:2] = 0) or arp",
    "not (ip and ip[40:2] = 0)",
    "ip and not (udp or tcp)",
    "ip6 and tcp",
    "ip6 port 53",
    // What the shared code generator gave CSPF: 802.2 LLC/SNAP, PPPoE, DECnet, direction.
    "atalk",
    "aarp or ipx",
    "stp or netbeui",
    "iso or clnp or isis",
    "l1 or psnp",
    "llc",
    "llc u or llc s",
    "ether proto \\ipx",
    "pppoes and ip",
    "pppoes 3 and ip6",
    "pppoed",
    "decnet host 1.2",
    "decnet src 10.20",
    "inbound",
    "outbound and ip",
    // With the extension only.
    "tcp port 80",
    "udp port 53",
    "port 53",
    "tcp dst port 80",
    "tcp src port 1024",
    "tcp portrange 1000-2000",
    "tcp[13] & 2 != 0",
    "tcp[tcpflags] & tcp-syn != 0",
    "udp[2:2] = 53",
    "icmp[icmptype] = icmp-echo",
    "tcp[0:4] = 0x00500050",
    "tcp[1] = 80",
    "ip and (tcp dst port 21 or tcp dst port 23 or tcp dst port 25 or tcp dst port 80)",
    "host 10.0.0.1 and tcp port 80",
    "tcp port 80 or ip6[40:2] = 0",
    "not tcp port 22",
];

struct Bpf(Interpreter);

fn bpf(expr: &str, link: LinkType, resolver: &SystemResolver) -> Option<Bpf> {
    let opts = pipeline::Options::new(link, resolver).optimize(false);
    let prog = pipeline::compile(expr, &opts).ok()?;
    Some(Bpf(Interpreter::new(&prog.program)))
}

#[derive(Default)]
struct Tally {
    exprs: usize,
    both: usize,
    needs_indirect: usize,
    refused: BTreeMap<String, (usize, String)>,
    runs: usize,
    inexact: usize,
    inexact_differ: usize,
    mismatches: Vec<String>,
}

fn check(exprs: &[String], set: &PacketSet, resolver: &SystemResolver, indirect: bool) -> Tally {
    check_with(exprs, set, resolver, indirect, sift_cspf::vm::MAX_WORDS)
}

fn check_with(
    exprs: &[String],
    set: &PacketSet,
    resolver: &SystemResolver,
    indirect: bool,
    max_words: usize,
) -> Tally {
    let mut t = Tally::default();
    for expr in exprs {
        let Some(b) = bpf(expr, set.link, resolver) else { continue };
        t.exprs += 1;
        let opts = Options { max_words, ..Options::new(resolver).with_indirect(indirect) };
        let prog = match sift_cspf::compile_text(expr, set.link, &opts) {
            Ok(p) => p,
            Err(e) => {
                if sift_cspf::needs_indirect(&e) {
                    t.needs_indirect += 1;
                } else {
                    let key: String = e
                        .to_string()
                        .chars()
                        .take(70)
                        .map(|c| if c.is_ascii_digit() { 'N' } else { c })
                        .collect();
                    let e = t.refused.entry(key).or_insert((0, expr.clone()));
                    e.0 += 1;
                }
                continue;
            }
        };
        t.both += 1;
        let consume = prog
            .clone()
            .with_machine(Machine { short_circuit: ShortCircuit::Consume, ..*prog.machine() });
        for f in &set.frames {
            let want = b.0.run(&f.data, f.wire_len()) != 0;
            for p in [&prog, &consume] {
                let r = p.run_detailed(&f.data);
                let got = r.accept;
                // Compiled code never faults except on a short packet: the stack depth and
                // program length were checked at compile time.
                if let sift_cspf::End::Fault(fault) = r.end
                    && !matches!(fault, sift_cspf::Fault::OutOfPacket { .. })
                    && t.mismatches.len() < 20
                {
                    t.mismatches.push(format!("`{expr}`: {fault:?}\n{}", p.to_text()));
                }
                t.runs += 1;
                if !p.exact_for(&f.data) {
                    t.inexact += 1;
                    t.inexact_differ += usize::from(got != want);
                } else if got != want && t.mismatches.len() < 20 {
                    t.mismatches.push(mismatch(expr, p, &f.data, want));
                }
            }
        }
    }
    t
}

fn mismatch(expr: &str, p: &CspfProgram, pkt: &[u8], want: bool) -> String {
    let hex: String = pkt.iter().take(80).map(|b| format!("{b:02x}")).collect();
    format!(
        "`{expr}` ({:?}): BPF {want}, CSPF {} on {} bytes {hex}\n{}",
        p.machine().short_circuit,
        !want,
        pkt.len(),
        p.to_text()
    )
}

fn report(name: &str, t: &Tally) {
    println!(
        "{name}: {} expressions sift compiles, {} expressible in CSPF, {} need the extension, \
         {} runs, {} inexact runs ({} of them differ), {} mismatches",
        t.exprs,
        t.both,
        t.needs_indirect,
        t.runs,
        t.inexact,
        t.inexact_differ,
        t.mismatches.len()
    );
    for (why, (n, example)) in &t.refused {
        println!("  refused {n:>4}: {why}… (e.g. `{example}`)");
    }
}

fn packets() -> PacketSet {
    packets_for("EN10MB")
}

fn packets_for(link: &str) -> PacketSet {
    let lt = LinkType::from_name(link).expect("known link type");
    PacketSet::generate(lt, 0xc5bf, 1500, 300)
}

#[test]
fn hand_written_expressions_agree_with_bpf() {
    let resolver = SystemResolver::new();
    let set = packets();
    let exprs: Vec<String> = HAND.iter().map(|s| s.to_string()).collect();
    for indirect in [false, true] {
        let t = check(&exprs, &set, &resolver, indirect);
        report(&format!("hand, indirect={indirect}"), &t);
        assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
        assert!(t.both >= if indirect { 85 } else { 70 }, "only {} expressible", t.both);
    }
}

#[test]
fn corpus_captures_agree_with_bpf() {
    // Real traffic (libpcap's test captures), truncated packets included.
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let resolver = SystemResolver::new();
    let en10mb = LinkType::from_name("EN10MB").expect("EN10MB");
    let mut set = PacketSet::empty(en10mb);
    let n = set.add_captures(&dir.join("captures"));
    assert!(n > 100, "only {n} EN10MB packets in the corpus captures");
    let mut exprs: Vec<String> = HAND.iter().map(|s| s.to_string()).collect();
    exprs.extend(ExprGen::new(0xca9, "EN10MB").take(400));
    let t = check(&exprs, &set, &resolver, true);
    report(&format!("corpus captures ({n} packets), indirect=true"), &t);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
}

#[test]
fn generated_expressions_agree_with_bpf() {
    let resolver = SystemResolver::new();
    let set = packets().thin(2);
    let exprs = ExprGen::new(0xc5f, "EN10MB").take(1500);
    let t = check(&exprs, &set, &resolver, true);
    report("generated, indirect=true", &t);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert!(t.both >= 500, "only {} expressible", t.both);
    // Longer programs than a 1987 filter could hold exercise the stages harder.
    let t = check_with(&exprs, &set, &resolver, true, 4096);
    report("generated, indirect=true, 4096 words", &t);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
}

#[test]
fn other_link_types_agree_with_bpf() {
    let resolver = SystemResolver::new();
    for link in ["RAW", "LINUX_SLL", "NULL", "LOOP"] {
        let set = packets_for(link).thin(2);
        let mut exprs: Vec<String> = HAND.iter().map(|s| s.to_string()).collect();
        exprs.extend(ExprGen::new(0x5e7, link).take(400));
        let t = check(&exprs, &set, &resolver, true);
        report(&format!("{link}, indirect=true"), &t);
        assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
        assert!(t.both >= 100, "only {} expressible on {link}", t.both);
    }
}
