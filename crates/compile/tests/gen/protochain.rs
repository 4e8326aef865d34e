//! `protochain` in both of its forms against libpcap's own loop, run by libpcap's `bpf_filter`.
//!
//! sift emits the walk as libpcap's loop for its own engines (`Mode::LibpcapLoops`) and
//! unrolled for the kernel (`Mode::Libpcap`, `Mode::Linux`; see `sift_compile::walk`). The
//! claims tested here, with libpcap's `bpf_filter` as the oracle:
//!
//! * the unoptimized loop form is libpcap's program, instruction for instruction;
//! * the loop form (unoptimized and optimized, in `sift-vm` and `sift-jit`, one packet at a
//!   time and in batches) returns libpcap's value on every packet on which libpcap's loop ends,
//!   and 0 where it never ends (an AH chain that cycles: the loop budget runs out);
//! * the unrolled form (unoptimized and optimized) returns libpcap's value on every packet
//!   whose walks end within the unrolled depth; past it (and on cycles) a lone `protochain`
//!   term is false.
//!
//! Packets: generated frames on three link types with IPv4 or IPv6 and random chains of
//! hop-by-hop, destination-options, routing, fragment and AH headers (0 to 160 of them, so
//! both sides of the unrolled depth are covered) ending in a random final header, sometimes cut
//! short, plus AH chains that cycle; and every packet of the libpcap and tcpdump test captures.
//! Each walk is simulated first (as libpcap's code does it, including its AH quirk: the offset
//! after an AH header is the AH length alone) to measure its length and to keep libpcap away
//! from the packets on which its loop never ends.

use crate::common::unoptimized;
use sift_compile::ir::{Stmt, Walk};
use sift_compile::pipeline::{self, ByteOrder, Compiled, LinkType, Mode, Options, WalkForm};
use sift_compile::walk::MIN_UNROLLED_STEPS;
use sift_filter::SystemResolver;
use sift_jit::{JitFilter, PacketRef};
use sift_libpcap::Libpcap;
use sift_vm::Interpreter;

/// The loop budget the engines get here: far more than any walk that ends needs on these
/// packets (a few thousand), far less than `sift_verify::LOOP_BUDGET`, so that cycling chains
/// stay cheap. `cycles_end_at_the_default_budget` runs the default one.
const BUDGET: u32 = 1 << 16;

use sift_testkit::Rng;

const EXT: [u8; 4] = [0, 60, 43, 44];
const AH: u8 = 51;

/// The link-layer header before an IPv4 or IPv6 packet.
fn link_header(link: LinkType, v6: bool) -> Vec<u8> {
    let ethertype: [u8; 2] = if v6 { [0x86, 0xdd] } else { [0x08, 0x00] };
    match link {
        LinkType::EN10MB => {
            let mut h = vec![0u8; 12];
            h.extend_from_slice(&ethertype);
            h
        }
        LinkType::LINUX_SLL => {
            let mut h = vec![0u8; 14];
            h.extend_from_slice(&ethertype);
            h
        }
        LinkType::RAW => Vec::new(),
        _ => unreachable!("the links framed here"),
    }
}

/// A frame with `n` chained headers after the IP header.
fn frame(rng: &mut Rng, link: LinkType, v6: bool, n: usize) -> Vec<u8> {
    let mut f = link_header(link, v6);
    let nl = f.len();
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
            let at = f.len() - nl;
            let len = rng.below(4) as u8;
            let body = usize::from(len + 2) * 4;
            let mut h = vec![0u8; body];
            h[0] = next;
            h[1] = len;
            f.extend_from_slice(&h);
            // What libpcap reads next: the header at (len + 2) * 4.
            let target = body;
            if target + 2 <= f.len() - nl && target != at {
                f[nl + target] = kinds.get(i + 1).copied().unwrap_or(next);
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

/// Frames whose AH chain cycles in libpcap's walk: an AH header at 40 whose length sends the
/// walk back to 40 (IPv6, directly or after an extension header), and AH headers at 24 and
/// 32 sending it to each other (IPv4, whose header is 20 bytes long, with options).
fn cycling(link: LinkType) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for first in [AH, 0] {
        let mut f = link_header(link, true);
        let mut h = [0u8; 40];
        h[0] = 0x60;
        h[6] = first;
        f.extend_from_slice(&h);
        if first == 0 {
            // Hop-by-hop (8 bytes) to AH at 48, which sends the walk to 48.
            f.extend_from_slice(&[AH, 0, 0, 0, 0, 0, 0, 0]);
            f.extend_from_slice(&[AH, 10, 0, 0, 0, 0, 0, 0]);
        } else {
            // AH at 40: next AH, length 8, so (8 + 2) * 4 = 40 again.
            f.extend_from_slice(&[AH, 8, 0, 0, 0, 0, 0, 0]);
        }
        f.extend_from_slice(&[0u8; 16]);
        out.push(f);
    }
    let mut f = link_header(link, false);
    let mut h = [0u8; 24];
    h[0] = 0x46; // 24 bytes of header: the walk starts at 24
    h[9] = AH;
    f.extend_from_slice(&h);
    // At 24: AH, length 6 → (6 + 2) * 4 = 32; at 32: AH, length 4 → 24.
    f.extend_from_slice(&[AH, 6, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[AH, 4, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[0u8; 8]);
    out.push(f);
    out
}

/// How libpcap's walk ends on a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// After `steps` header advances (found, `IPPROTO_NONE`, another header, or a load past
    /// the end).
    After { steps: usize },
    /// Never (libpcap's loop does not end).
    Never,
}

/// libpcap's walk `w`, simulated on `f` as if the link-layer test before it had passed.
fn simulate(f: &[u8], w: &Walk) -> End {
    let nl = w.nl as usize;
    let at = |i: usize| f.get(i).copied().map(u32::from);
    let (Some(mut a), Some(x0)) = (at(nl + if w.ipv6 { 6 } else { 9 }), at(nl)) else {
        return End::After { steps: 0 };
    };
    let mut x: u32 = if w.ipv6 { 40 } else { (x0 & 0xf) * 4 };
    let mut seen = std::collections::HashSet::new();
    for steps in 0.. {
        if a == w.want || a == 59 {
            return End::After { steps };
        }
        if !seen.insert((a, x)) {
            return End::Never;
        }
        let base = (x as usize).checked_add(nl);
        let (Some(next), Some(len)) =
            (base.and_then(at), base.and_then(|b| b.checked_add(1)).and_then(at))
        else {
            return End::After { steps };
        };
        if w.ipv6 && EXT.contains(&(a as u8)) && a < 256 {
            x = x.wrapping_add((len + 1) * 8);
        } else if a == u32::from(AH) {
            x = (len + 2) * 4;
        } else {
            return End::After { steps };
        }
        a = next;
    }
    unreachable!()
}

/// How every walk of the program ends on `f`: `Never` if one never ends, else the longest.
fn simulate_all(f: &[u8], walks: &[Walk]) -> End {
    let mut longest = 0;
    for w in walks {
        match simulate(f, w) {
            End::Never => return End::Never,
            End::After { steps } => longest = longest.max(steps),
        }
    }
    End::After { steps: longest }
}

/// The walks of a compiled program.
fn walks(c: &Compiled) -> Vec<Walk> {
    let mut out = Vec::new();
    for b in c.cfg.layout_order() {
        for s in &c.cfg.block(b).stmts {
            if let Stmt::Walk(w) = s {
                out.push(*w);
            }
        }
    }
    out
}

/// One expression compiled in every form, for one link type.
struct Forms {
    expr: String,
    /// The expression is one `protochain` term of one walk: the program returns 0 where the
    /// unrolled walk is cut short (and wherever the walk does not run).
    lone: bool,
    walks: Vec<Walk>,
    /// The unrolled depth.
    depth: usize,
    /// The loop form, unoptimized and optimized, in the interpreter and the JIT.
    looped: Vec<(&'static str, Interpreter, Option<JitFilter>)>,
    /// The unoptimized loop form with twice the budget (see [`Tally::check`]).
    probe: Interpreter,
    /// The unrolled form, unoptimized and optimized, in the interpreter.
    unrolled: Vec<(&'static str, Interpreter)>,
    libpcap: Vec<sift_libpcap::RawInsn>,
}

fn forms(
    expr: &str,
    opts: &Options<'_>,
    libpcap: Vec<sift_libpcap::RawInsn>,
) -> Result<Forms, String> {
    let compile = |optimize: bool, mode: Mode| {
        pipeline::compile(expr, &opts.optimize(optimize).mode(mode))
            .map_err(|e| format!("`{expr}` on {}: {e}", opts.link))
    };
    // An optimized program that "rejects all packets" returns 0 on every one (libpcap runs no
    // optimizer on `protochain`, so it has no such answer): `ret #0` stands for it.
    let rejects_all = || {
        let ret0 = [sift_insn::Insn::stmt(sift_insn::code::BPF_RET, 0)];
        sift_verify::validate(&ret0, Mode::Libpcap).unwrap()
    };
    let optimized = |mode: Mode| match pipeline::compile(expr, &opts.optimize(true).mode(mode)) {
        Ok(c) => {
            let want = if mode == Mode::LibpcapLoops { Some(WalkForm::Loop) } else { None };
            // (The optimizer may drop every walk: on a link type without IPv6, say.)
            match (want, c.walk_form) {
                (Some(w), Some(got)) => assert_eq!(got, w, "`{expr}`"),
                (None, Some(WalkForm::Unrolled(_))) | (_, None) => {}
                (_, got) => panic!("`{expr}` for {mode:?}: {got:?}"),
            }
            Ok(c.program)
        }
        Err(e) if e.is_rejects_all() => Ok(rejects_all()),
        Err(e) => Err(format!("`{expr}` on {}: {e}", opts.link)),
    };
    let loop_unopt = compile(false, Mode::LibpcapLoops)?;
    if loop_unopt.program.insns() != libpcap.as_slice() {
        return Err(format!(
            "`{expr}` on {}: the unoptimized loop form is not libpcap's program:\n{}\n{}",
            opts.link,
            sift_insn::text::listing(loop_unopt.program.insns()),
            sift_insn::text::listing(&libpcap)
        ));
    }
    assert_eq!(loop_unopt.walk_form, Some(WalkForm::Loop), "`{expr}`");
    assert!(!loop_unopt.program.is_acyclic(), "`{expr}`: a loop");
    let probe = Interpreter::new(&loop_unopt.program).with_loop_budget(2 * BUDGET);
    let mut looped = Vec::new();
    for (name, program) in
        [("loop", loop_unopt.program.clone()), ("loop optimized", optimized(Mode::LibpcapLoops)?)]
    {
        let jit = JitFilter::compile_with_loop_budget(&program, BUDGET).ok();
        looped.push((name, Interpreter::new(&program).with_loop_budget(BUDGET), jit));
    }
    let kernel_unopt = compile(false, Mode::Libpcap)?;
    let Some(WalkForm::Unrolled(depth)) = kernel_unopt.walk_form else {
        return Err(format!("`{expr}`: {:?}, not unrolled", kernel_unopt.walk_form));
    };
    let mut unrolled = Vec::new();
    for (name, program) in
        [("unrolled", kernel_unopt.program), ("unrolled optimized", optimized(Mode::Libpcap)?)]
    {
        assert!(program.is_acyclic(), "`{expr}`: unrolled");
        assert!(program.insns().len() <= sift_insn::code::BPF_MAXINSNS, "`{expr}`");
        unrolled.push((name, Interpreter::new(&program)));
    }
    let walks = walks(&loop_unopt);
    Ok(Forms {
        expr: expr.to_owned(),
        lone: walks.len() == 1 && [" and ", " or ", "not "].iter().all(|w| !expr.contains(w)),
        walks,
        depth,
        looped,
        probe,
        unrolled,
        libpcap,
    })
}

#[derive(Default, Debug)]
struct Tally {
    /// Packet runs equal to libpcap's (all forms), accepted ones among them.
    equal: usize,
    accepted: usize,
    /// The longest walk of a packet a lone `protochain` term accepts.
    longest: usize,
    /// Walks past the unrolled depth (the loop form checked, the unrolled one false when
    /// alone, else not judged).
    beyond: usize,
    /// Cycling walks (0 from the loop form; libpcap not run).
    cycles: usize,
    wrong: Vec<String>,
}

impl Tally {
    /// Runs every form of `f` on `pkt` and checks them against libpcap.
    ///
    /// Whether libpcap's loop ends on the packet is asked of sift's interpreter running the
    /// same program (the unoptimized loop form is libpcap's, checked in [`forms`]): a run that
    /// spends the loop budget (it runs longer with twice the budget) is a cycle, which the
    /// simulation must confirm; libpcap runs the packet otherwise, since its `bpf_filter` takes
    /// the same path. (The simulation alone cannot tell: it runs every walk, also those the
    /// program's link-layer test skips.)
    fn check(&mut self, pcap: &Libpcap, f: &Forms, what: &str, pkt: &[u8], wire: u32) {
        let end = simulate_all(pkt, &f.walks);
        let spent = f.looped[0].1.run_counted(pkt, wire).executed
            != f.probe.run_counted(pkt, wire).executed;
        let mut fail = |engine: &str, got: u32, want: u32| {
            if got != want && self.wrong.len() < 30 {
                self.wrong.push(format!(
                    "`{}` {what} ({end:?}): {engine} {got}, expected {want}; {:02x?}",
                    f.expr,
                    &pkt[..pkt.len().min(64)]
                ));
            }
        };
        if spent && end != End::Never {
            fail("loop (spent the budget on a walk that ends)", 0, 1);
        }
        let want = if spent {
            self.cycles += 1;
            0
        } else {
            pcap.filter(&f.libpcap, pkt, wire)
        };
        if let (End::After { steps }, true) = (end, want != 0 && f.lone) {
            self.longest = self.longest.max(steps);
        }
        for (name, vm, jit) in &f.looped {
            fail(name, vm.run(pkt, wire), want);
            if let Some(j) = jit {
                fail(&format!("{name} (JIT)"), j.run(pkt, wire), want);
            }
        }
        // Within the depth, the unrolled form is exact; past it (or on a cycle) a lone term is
        // false. A walk of exactly the depth may end either way.
        let within = !spent && matches!(end, End::After { steps } if steps < f.depth);
        let past = spent || matches!(end, End::After { steps } if steps > f.depth);
        for (name, vm) in &f.unrolled {
            if within {
                fail(name, vm.run(pkt, wire), want);
            } else if past && f.lone {
                fail(name, vm.run(pkt, wire), 0);
            }
        }
        if within {
            self.equal += 1;
            self.accepted += usize::from(want != 0);
        } else if !spent {
            self.beyond += 1;
        }
    }

    /// The JIT's batch function against its single-packet one.
    fn check_batches(&mut self, f: &Forms, frames: &[Vec<u8>]) {
        let refs: Vec<PacketRef> =
            frames.iter().map(|p| PacketRef::new(p, p.len() as u32)).collect();
        let mut verdicts = Vec::new();
        for (name, _, jit) in &f.looped {
            let Some(j) = jit else { continue };
            j.run_batch(&refs, &mut verdicts);
            for (p, &v) in frames.iter().zip(&verdicts) {
                let one = j.run(p, p.len() as u32);
                if v != one && self.wrong.len() < 30 {
                    self.wrong.push(format!("`{}` {name}: batch {v}, single {one}", f.expr));
                }
            }
        }
    }
}

/// The expressions, per link type: `protochain` alone for several protocols, both walks, and
/// with other terms (more walks, `not`, `or`, `and`).
const LONE: &[&str] = &[
    "ip6 protochain 17",
    "ip6 protochain 6",
    "ip6 protochain 58",
    "ip6 protochain 59",
    "ip6 protochain 44",
    "ip6 protochain 0",
    "ip6 protochain 51",
    "ip protochain 17",
    "ip protochain 6",
    "ip protochain 51",
    "protochain 17",
    "protochain 1",
];
const COMBINED: &[&str] = &[
    "not ip6 protochain 6",
    "ip6 protochain 17 or tcp",
    "ip6 protochain 6 and ip6 protochain 17",
    // The second walk starts where the first began, whatever the first left in X.
    "ip6 protochain 44 and ip6 protochain 60",
    "ip6 protochain 58 and len > 100",
    "protochain 6 and not ip6 protochain 51",
    "ip protochain 51 or ip6 protochain 51",
    "ip6 protochain 17 and host ::1",
];

#[test]
fn protochain_forms_match_libpcap_on_generated_chains() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let resolver = SystemResolver::new();
    let mut t = Tally::default();
    for (link, count, exprs) in [
        (LinkType::EN10MB, 2000, [LONE, COMBINED].concat()),
        (LinkType::LINUX_SLL, 600, vec![LONE[0], LONE[7], LONE[10], COMBINED[0], COMBINED[2]]),
        (LinkType::RAW, 600, vec![LONE[1], LONE[8], LONE[11], COMBINED[1], COMBINED[4]]),
    ] {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(link.number()));
        let mut frames = cycling(link);
        for i in 0..count {
            let v6 = i % 3 != 0;
            let n = match rng.below(10) {
                0..=5 => rng.below(5) as usize,
                6 | 7 => rng.below(40) as usize,
                _ if v6 => 100 + rng.below(60) as usize,
                _ => rng.below(8) as usize,
            };
            frames.push(frame(&mut rng, link, v6, n));
        }
        let opts = unoptimized(link, &resolver).snaplen(65535);
        for expr in exprs {
            let theirs =
                pcap.compile(link, 65535, expr, false, 0xffff_ffff).expect("libpcap compiles");
            let f = forms(expr, &opts, theirs).unwrap_or_else(|e| panic!("{e}"));
            for (i, p) in frames.iter().enumerate() {
                t.check(&pcap, &f, &format!("{link} frame {i}"), p, p.len() as u32);
            }
            t.check_batches(&f, &frames);
        }
    }
    println!(
        "protochain, generated chains: {} runs equal to libpcap in every form ({} accepted, \
         walks up to {} headers), {} beyond the unrolled depth, {} cycling (loop form: 0)",
        t.equal, t.accepted, t.longest, t.beyond, t.cycles
    );
    assert!(t.wrong.is_empty(), "{} wrong:\n{}", t.wrong.len(), t.wrong.join("\n"));
    assert!(t.equal > 20_000 && t.accepted > 2000 && t.longest > 100, "{t:?}");
    assert!(t.beyond > 100 && t.cycles > 30, "the packets must cross the depth and cycle: {t:?}");
}

/// The expressions run over the test captures.
const ON_CAPTURES: &[&str] = &[
    "ip6 protochain 6",
    "ip6 protochain 17",
    "ip6 protochain 58",
    "ip6 protochain 51",
    "ip protochain 6",
    "protochain 17",
    "ip6 protochain 6 or udp port 53",
    "not ip6 protochain 44",
];

/// Every packet of the libpcap and tcpdump test captures, grouped by what a program is
/// compiled for: link type, snapshot length and the file's byte order.
type Groups = std::collections::BTreeMap<(u16, u32, bool), Vec<(Vec<u8>, u32)>>;

fn captures() -> Option<Groups> {
    let shared = sift_testkit::shared_dir().join("corpus");
    let mut paths = Vec::new();
    for dir in [shared.join("libpcap").join("captures"), shared.join("tcpdump").join("tests")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return sift_testkit::oracle_missing("test captures", dir.display());
        };
        paths.extend(
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng")),
        );
    }
    paths.sort();
    let mut groups = Groups::new();
    for path in paths {
        let Ok(mut reader) = sift_pcap::open(&path) else { continue };
        while let Ok(Some((p, ifaces))) = reader.next_with_interfaces() {
            let iface = &ifaces[p.interface as usize];
            let key = (p.link_type.number(), iface.snaplen, iface.big_endian);
            groups.entry(key).or_default().push((p.data.to_vec(), p.wire_len));
        }
    }
    Some(groups)
}

#[test]
fn protochain_forms_match_libpcap_on_the_test_captures() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let Some(groups) = captures() else { return };
    let resolver = SystemResolver::new();
    let mut t = Tally::default();
    let (mut compiled, mut refused, mut packets) = (0, 0, 0);
    for ((link, snaplen, big), pkts) in &groups {
        let link = LinkType::new(*link);
        packets += pkts.len();
        let opts = unoptimized(link, &resolver)
            .snaplen(*snaplen)
            .savefile(Some(ByteOrder::from_big_endian(*big)));
        for expr in ON_CAPTURES {
            let Ok(theirs) = pcap.compile_savefile(link, *snaplen, *big, expr, false, 0) else {
                refused += 1;
                continue;
            };
            let f = match forms(expr, &opts, theirs) {
                Ok(f) => f,
                Err(e) if pipeline::compile(expr, &opts).is_err() => {
                    // Refused by sift too (the link-type tests check refusals); not run.
                    let _ = e;
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            compiled += 1;
            for (i, (p, wire)) in pkts.iter().enumerate() {
                t.check(&pcap, &f, &format!("{link} packet {i}"), p, *wire);
            }
        }
    }
    println!(
        "protochain, test captures: {packets} packets in {} groups, {compiled} programs \
         ({refused} refused), {} runs equal to libpcap in every form ({} accepted, walks up to \
         {} headers), {} beyond the unrolled depth, {} cycling",
        groups.len(),
        t.equal,
        t.accepted,
        t.longest,
        t.beyond,
        t.cycles
    );
    assert!(t.wrong.is_empty(), "{} wrong:\n{}", t.wrong.len(), t.wrong.join("\n"));
    assert!(t.accepted > 100 && t.longest >= 2, "the captures must exercise the walk: {t:?}");
}

/// With the default loop budget, the engines end a cycling walk with 0 (`protochain` alone,
/// and negated: the run ends, the term is not merely false), and the unrolled form calls the
/// lone term false and its negation true.
#[test]
fn cycles_end_at_the_default_budget() {
    let resolver = SystemResolver::new();
    for f in cycling(LinkType::EN10MB) {
        for (expr, unrolled) in [("protochain 6", 0), ("not protochain 6", 65535)] {
            let opts = unoptimized(LinkType::EN10MB, &resolver).snaplen(65535);
            for optimize in [false, true] {
                let c = pipeline::compile(expr, &opts.optimize(optimize)).unwrap();
                let vm = Interpreter::new(&c.program);
                assert_eq!(vm.run(&f, f.len() as u32), 0, "`{expr}` on {f:02x?}");
                if let Ok(j) = JitFilter::compile(&c.program) {
                    assert_eq!(j.run(&f, f.len() as u32), 0, "`{expr}` (JIT) on {f:02x?}");
                }
                let k =
                    pipeline::compile(expr, &opts.optimize(optimize).mode(Mode::Linux)).unwrap();
                let vm = Interpreter::new(&k.program);
                assert_eq!(vm.run(&f, f.len() as u32), unrolled, "`{expr}` unrolled");
            }
        }
    }
}

/// The unrolled depth is the largest that fits the kernel's 4,096 instructions, shrinking as
/// the rest of the program grows, never below `MIN_UNROLLED_STEPS`; the loop form's size does
/// not depend on it.
#[test]
fn unrolled_depth_fits_the_kernel_limit() {
    let resolver = SystemResolver::new();
    let opts = Options::new(LinkType::EN10MB, &resolver).mode(Mode::Linux);
    let hosts: Vec<String> = (1..=40).map(|i| format!("host ::{i:x}")).collect();
    let long = format!("ip6 protochain 6 and ({})", hosts.join(" or "));
    let mut last = usize::MAX;
    for expr in ["ip6 protochain 6", "ip6 protochain 6 and host ::1", long.as_str()] {
        for optimize in [false, true] {
            let c = pipeline::compile(expr, &opts.optimize(optimize)).unwrap();
            let Some(WalkForm::Unrolled(n)) = c.walk_form else { panic!("{:?}", c.walk_form) };
            let len = c.program.insns().len();
            assert!(len <= 4096 && n >= MIN_UNROLLED_STEPS, "`{expr}`: {n} steps, {len}");
            // One step more does not fit (an IPv6 step is 28 instructions).
            assert!(len + 28 > 4096, "`{expr}`: {n} steps, {len} instructions");
            if !optimize {
                assert!(n <= last, "`{expr}`: deeper than a shorter expression");
                last = n;
            }
            println!("`{}`: {n} steps, {len} instructions", &expr[..expr.len().min(40)]);
        }
    }
    // Eight IPv6 walks (the most a filter may hold) still fit, at the least depth or more.
    let eight = ["ip6 protochain 6"; 8].join(" or ");
    let c = pipeline::compile(&eight, &opts.optimize(false)).unwrap();
    assert!(matches!(c.walk_form, Some(WalkForm::Unrolled(n)) if n >= MIN_UNROLLED_STEPS));
    // The loop form is libpcap's size whatever the rest.
    let c = pipeline::compile("ip6 protochain 6", &opts.mode(Mode::LibpcapLoops)).unwrap();
    assert_eq!((c.walk_form, c.program.insns().len()), (Some(WalkForm::Loop), 36));
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
