//! Many filters in one eBPF program (`sift_compile::ebpf::lower_multi`): for realistic sets
//! (per host, subnet, port, VLAN, from sift-gen's pools, with priorities and `continue`)
//! and random ones (`ExprGen`), of 1 to 1,000 filters, the set and the first-match index the
//! program writes equal `MultiProgram::decide` with each filter on sift's classic VM — in
//! sift's eBPF VM at every hook (TC also with fragments) after sift's verifier accepts it,
//! and in the kernel (`BPF_PROG_TEST_RUN`, XDP and TC; socket filters loaded only). Larger or
//! more sets: `SIFT_EBPF_MULTI_SETS=N` (N sets of each kind, sizes up to 1,000).

use std::os::fd::AsFd;

use crate::kernel;
use crate::vm::{run, run_tc_nonlinear, verify};
use sift_compile::ebpf::{self, EbpfMultiFilter, EbpfOptions, Hook, MultiResult};
use sift_compile::multi::{self, Decide, FilterSet, FilterSpec, MultiProgram};
use sift_compile::pipeline::{LinkType, Options};
use sift_filter::TableResolver;
use sift_gen::pools;
use sift_testkit::Rng;

const HOOKS: [Hook; 3] = [Hook::Xdp, Hook::Tc, Hook::SocketFilter];
const MODES: [Decide; 2] = [Decide::All, Decide::First];

/// One realistic expression: the kinds of split a tap feeding many consumers makes.
fn realistic_expr(rng: &mut Rng, i: usize) -> String {
    let client = |rng: &mut Rng| pools::FIRST_CLIENT + rng.below(u64::from(pools::CLIENTS)) as u32;
    let server = |rng: &mut Rng| {
        let (net, n) = pools::SERVER_NETS_V4[rng.below(4) as usize];
        format!("{}.{}.{}.{}", net[0], net[1], net[2], 1 + rng.below(u64::from(n)))
    };
    let tcp_port = |rng: &mut Rng| match rng.below(3) {
        0 => pools::TCP_SERVICES[rng.below(5) as usize].1 as u32,
        1 => 1000 + i as u32,
        _ => u32::from(pools::EPHEMERAL.0) + rng.below(2000) as u32,
    };
    let vlan = |rng: &mut Rng| 1 + rng.below(4094);
    match rng.below(20) {
        0..=4 => format!("host 10.0.0.{}", client(rng)),
        5 | 6 => format!("host {}", server(rng)),
        7 => format!("net 10.{}.0.0/16", rng.below(4)),
        8 => format!("src net 198.51.100.{}/30", 4 * rng.below(10)),
        9 | 10 => format!("tcp port {}", tcp_port(rng)),
        11 => format!(
            "udp port {}",
            [53, pools::SYSLOG_PORT, pools::DISCARD_PORT][rng.below(3) as usize]
        ),
        12 => format!("vlan {} and host 10.0.0.{}", vlan(rng), client(rng)),
        13 => format!("vlan {}", vlan(rng)),
        14 => format!("udp port {} and net 10.0.0.0/24", [53, 514][rng.below(2) as usize]),
        15 => format!("tcp dst port {} and src host 10.0.0.{}", tcp_port(rng), client(rng)),
        16 => format!("ip6 host 2001:db8:1::{:x}", pools::FIRST_CLIENT + rng.below(40) as u32),
        17 => format!("sctp port {}", pools::SCTP_PORT),
        // Filters no equality cut anchors: they run on every packet.
        18 => ["tcp", "icmp or icmp6", "greater 600", "not host 10.0.0.10", "arp"]
            [rng.below(5) as usize]
            .to_string(),
        _ => format!("ether host {}", mac(pools::mac_of([10, 0, 0, client(rng) as u8]))),
    }
}

fn mac(m: [u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// A set of `n` filters: realistic ones, or generated expressions (those that compile), with
/// random priorities and `continue` flags.
fn set(n: usize, seed: u64, random: bool, resolver: &TableResolver) -> FilterSet {
    let mut rng = Rng(seed);
    let mut g = sift_filetests::ExprGen::new(seed, "EN10MB");
    let opts = Options::new(LinkType::EN10MB, resolver);
    let mut specs = Vec::new();
    while specs.len() < n {
        let i = specs.len();
        let expr = if random {
            let e = g.expr();
            if sift_compile::pipeline::compile(&e, &opts).is_err() {
                continue;
            }
            e
        } else {
            realistic_expr(&mut rng, i)
        };
        specs.push(FilterSpec {
            name: format!("f{i}"),
            priority: rng.below(3) as i32,
            cont: rng.below(4) == 0,
            expr,
            line: 0,
            expr_column: 1,
        });
    }
    FilterSet::new(specs)
}

/// Frames from sift-gen (VLAN and QinQ often, truncated and malformed ones too), the shared
/// frames of the eBPF tests, and cuts of them.
fn frames(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let config = sift_gen::Config {
        encapsulation: 0.3,
        truncate: 0.05,
        malformed: 0.05,
        ..sift_gen::Config::default()
    };
    let mut g = sift_gen::Generator::new(seed, config);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for _ in 0..n {
        g.next_frame(&mut buf);
        if buf.len() >= 14 && buf.len() <= crate::MAX_FRAME {
            out.push(buf.clone());
        }
    }
    out.extend(crate::base_frames(seed, n / 10).into_iter().take(n / 5));
    let mut rng = Rng(seed ^ 0xc07);
    for i in 0..out.len() / 4 {
        let f = &out[i * 4];
        if f.len() > 14 {
            let cut = 14 + rng.below((f.len() - 14) as u64) as usize;
            out.push(f[..cut].to_vec());
        }
    }
    out
}

/// What `decide` gives with every filter on sift's classic VM (the packet's wire length its
/// captured length, as XDP and a test run see it).
struct Oracle<'a> {
    multi: &'a MultiProgram,
    vms: Vec<Option<sift_vm::Interpreter>>,
    scratch: multi::Scratch,
}

impl<'a> Oracle<'a> {
    fn new(multi: &'a MultiProgram) -> Oracle<'a> {
        let vms = multi
            .members
            .iter()
            .map(|m| m.compiled.as_ref().map(|c| sift_vm::Interpreter::new(&c.program)))
            .collect();
        Oracle { multi, vms, scratch: multi.scratch() }
    }

    fn decide(&mut self, pkt: &[u8], mode: Decide) -> MultiResult {
        let (mut cand, mut matched) = (Vec::new(), Vec::new());
        let vms = &self.vms;
        self.multi.decide(
            pkt,
            pkt.len() as u32,
            mode,
            &mut self.scratch,
            &mut cand,
            &mut matched,
            |r| vms[r as usize].as_ref().is_some_and(|vm| vm.run(pkt, pkt.len() as u32) != 0),
        );
        let first = matched.iter().copied().find(|&r| !self.multi.members[r as usize].spec.cont);
        MultiResult { first, ranks: matched }
    }
}

#[derive(Default)]
struct Tally {
    sets: usize,
    filters: usize,
    runs: usize,
    slots_max: [usize; 3],
    processed_max: u64,
    matched: usize,
    vm_too_large: usize,
    mismatches: Vec<String>,
}

fn compile(set: &FilterSet, resolver: &TableResolver) -> MultiProgram {
    multi::compile(set, &Options::new(LinkType::EN10MB, resolver)).expect("the set compiles")
}

fn lower(m: &MultiProgram, hook: Hook, mode: Decide) -> EbpfMultiFilter {
    ebpf::lower_multi(m, &EbpfOptions::new(hook).raw(), mode)
        .unwrap_or_else(|e| panic!("{hook:?} {mode:?}: {e}"))
}

fn describe(set: &FilterSet, r: &MultiResult) -> String {
    let names: Vec<String> =
        r.ranks.iter().map(|&k| format!("{k}:`{}`", set.filters()[k as usize].expr)).collect();
    format!("first {:?}, [{}]", r.first, names.join(", "))
}

/// One set on sift's eBPF VM, at every hook and in both modes.
fn check_vm(set: &FilterSet, m: &MultiProgram, packets: &[Vec<u8>], t: &mut Tally) {
    let mut oracle = Oracle::new(m);
    t.sets += 1;
    t.filters += m.len();
    for mode in MODES {
        let want: Vec<MultiResult> = packets.iter().map(|p| oracle.decide(p, mode)).collect();
        t.matched += want.iter().filter(|w| !w.ranks.is_empty()).count();
        for (h, hook) in HOOKS.into_iter().enumerate() {
            let lowered = lower(m, hook, mode);
            t.slots_max[h] = t.slots_max[h].max(lowered.filter.len());
            match verify(&lowered.filter).0 {
                Ok(r) => t.processed_max = t.processed_max.max(r.processed),
                Err(e) => {
                    t.mismatches.push(format!(
                        "{} filters {hook:?} {mode:?}: sift's verifier: {e}",
                        m.len()
                    ));
                    continue;
                }
            }
            if lowered.filter.len() > sift_ebpf_vm::program::MAX_INSNS {
                // Beyond what sift's VM loads (the kernel test runs it).
                t.vm_too_large += 1;
                continue;
            }
            let mut vm = crate::vm::load(&lowered.filter);
            let mut rng = Rng(0x3a17 + h as u64);
            for (p, w) in packets.iter().zip(&want) {
                let mut runs = vec![(run(&mut vm, hook, p), "")];
                if hook == Hook::Tc {
                    let linear = rng.below(p.len() as u64 + 1) as usize;
                    runs.push((run_tc_nonlinear(&mut vm, p, linear), " (fragments)"));
                }
                for (ret, how) in runs {
                    t.runs += 1;
                    let value = vm.maps()[0].lookup(&0u32.to_le_bytes()).expect("element 0");
                    let got = lowered.layout.decode(value);
                    let want_ret = w.first.map_or(0, |f| u64::from(f) + 1);
                    if (got.as_ref() != Some(w) || ret != want_ret) && t.mismatches.len() < 10 {
                        t.mismatches.push(format!(
                            "{} filters {hook:?}{how} {mode:?} on {p:02x?}:\n  got {} (returned {ret})\n  want {}",
                            m.len(),
                            got.map_or("an unreadable value".into(), |g| describe(set, &g)),
                            describe(set, w)
                        ));
                    }
                }
            }
        }
    }
}

/// Sizes of the default run (and of each extra set under `SIFT_EBPF_MULTI_SETS`).
const SIZES: [usize; 5] = [1, 5, 40, 200, 1000];

fn extra_sets() -> usize {
    std::env::var("SIFT_EBPF_MULTI_SETS").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn report(what: &str, t: &Tally) {
    println!(
        "{what}: {} sets, {} filters, {} runs ({} packet decisions matched some filter); \
         largest program XDP {} TC {} socket {} slots ({} verified only: beyond the VM's \
         65,536); sift's verifier at most {} processed; {} mismatches",
        t.sets,
        t.filters,
        t.runs,
        t.matched,
        t.slots_max[0],
        t.slots_max[1],
        t.slots_max[2],
        t.vm_too_large,
        t.processed_max,
        t.mismatches.len()
    );
}

#[test]
fn realistic_sets_decide_on_the_vm_as_each_filter_alone() {
    let resolver = crate::resolver();
    let packets = frames(0x5e7, 600);
    let mut t = Tally::default();
    let mut seed = 1;
    for round in 0..=extra_sets() {
        for &n in &SIZES {
            let n = if round == 0 { n } else { 1 + Rng(seed).below(1000) as usize };
            let s = set(n, seed, false, &resolver);
            seed += 1;
            check_vm(&s, &compile(&s, &resolver), &packets, &mut t);
        }
    }
    report("realistic sets, VM", &t);
    assert!(t.matched > 100, "the sets match too little traffic to test anything");
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}

#[test]
fn random_sets_decide_on_the_vm_as_each_filter_alone() {
    let resolver = crate::resolver();
    let packets = frames(0xa11, 300);
    let mut t = Tally::default();
    let mut seed = 100;
    for _ in 0..=extra_sets() {
        for n in [1, 3, 10, 60] {
            let s = set(n, seed, true, &resolver);
            seed += 1;
            check_vm(&s, &compile(&s, &resolver), &packets, &mut t);
        }
    }
    report("random sets, VM", &t);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}

/// The number of possible CPUs (per-CPU map values come one per possible CPU).
fn possible_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    text.trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0),
            None => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// One test run with the result map zeroed first, and the result the run's CPU wrote.
fn kernel_run(l: &kernel::Loaded, f: &EbpfMultiFilter, pkt: &[u8]) -> Option<(u32, MultiResult)> {
    let size = f.layout.value_size() as usize;
    let cpus = possible_cpus();
    let zero = vec![0u8; size * cpus];
    let key = 0u32.to_le_bytes();
    sift_sys::bpf::map_update_elem(l.maps[0].as_fd(), &key, &zero, 0).expect("map update");
    let ret = kernel::run(l, pkt)?;
    let mut values = vec![0u8; size * cpus];
    sift_sys::bpf::map_lookup_elem(l.maps[0].as_fd(), &key, &mut values).expect("map lookup");
    let mut found = MultiResult::default();
    for v in values.chunks(size) {
        let r = f.layout.decode(v).expect("a readable value");
        if r.first.is_some() || !r.ranks.is_empty() {
            found = r;
        }
    }
    Some((ret, found))
}

#[test]
fn sets_decide_in_the_kernel_as_each_filter_alone() {
    if !kernel::available() {
        return;
    }
    let resolver = crate::resolver();
    let packets = frames(0x4e7, 400);
    let (mut runs, mut loaded, mut mismatches) = (0usize, 0usize, Vec::new());
    let mut seed = 900;
    let mut sets = Vec::new();
    for round in 0..=extra_sets() {
        for &n in &SIZES {
            let n = if round == 0 { n } else { 1 + Rng(seed).below(1000) as usize };
            sets.push(set(n, seed, false, &resolver));
            seed += 1;
        }
        sets.push(set(20, seed, true, &resolver));
        seed += 1;
    }
    for s in &sets {
        let m = compile(s, &resolver);
        let mut oracle = Oracle::new(&m);
        for mode in MODES {
            for hook in HOOKS {
                let f = lower(&m, hook, mode);
                let l = match kernel::load(&f.filter) {
                    Ok(l) => l,
                    Err(e) => {
                        mismatches.push(format!(
                            "{} filters {hook:?} {mode:?}: the kernel refuses: {e}",
                            m.len()
                        ));
                        continue;
                    }
                };
                loaded += 1;
                if hook == Hook::SocketFilter {
                    continue;
                }
                for p in &packets {
                    let Some((ret, got)) = kernel_run(&l, &f, p) else { continue };
                    runs += 1;
                    let want = oracle.decide(p, mode);
                    let want_ret = want.first.map_or(0, |f| f + 1);
                    if (got != want || ret != want_ret) && mismatches.len() < 10 {
                        mismatches.push(format!(
                            "{} filters {hook:?} {mode:?} on {p:02x?}:\n  got {} (returned {ret})\n  want {}",
                            m.len(),
                            describe(s, &got),
                            describe(s, &want)
                        ));
                    }
                }
            }
        }
    }
    println!(
        "kernel: {} sets, {loaded} programs loaded, {runs} test runs, {} mismatches",
        sets.len(),
        mismatches.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}
