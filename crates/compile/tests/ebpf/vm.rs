//! The lowered programs on sift's eBPF VM against the classic program on sift's classic VM,
//! packet by packet, at every hook; and sift's verifier accepts every one of them.

use crate::{Filter, base_frames, classic, corpus_filters, generated_count, generated_filters};
use sift_compile::ebpf::{self, EbpfFilter, EbpfOptions, Hook};
use sift_ebpf_verifier::{Options as VerifierOptions, Report, VerifyError};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};

/// A VM for a lowered filter (its maps made from their specs).
pub fn load(f: &EbpfFilter) -> Vm {
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let maps = f.maps.iter().map(|m| Map::from_spec(m).expect("map")).collect();
    Vm::load_with_maps(&f.slots(), helpers, maps).unwrap_or_else(|e| panic!("VM load: {e}"))
}

/// Runs `pkt` through `vm` as `hook` does.
pub fn run(vm: &mut Vm, hook: Hook, pkt: &[u8]) -> u64 {
    let mut p = pkt.to_vec();
    let info = SkbInfo::default();
    let r = match hook {
        Hook::Xdp => vm.run_xdp(&mut p, 1),
        Hook::Tc => vm.run_tc(&mut p, &info),
        Hook::SocketFilter => vm.run_socket_filter(&mut p, &info),
    };
    r.unwrap_or_else(|e| panic!("VM run: {e}"))
}

/// Runs `pkt` as TC with only its first `linear` bytes in the skb's linear part (`data_end`
/// there), the rest in fragments only `bpf_skb_load_bytes` reads.
pub fn run_tc_nonlinear(vm: &mut Vm, pkt: &[u8], linear: usize) -> u64 {
    let mut p = pkt.to_vec();
    let mut ctx = sift_ebpf_vm::context::sk_buff(&p, &SkbInfo::default(), true);
    let at = sift_ebpf::skb::DATA as usize;
    let data = u32::from_le_bytes([ctx[at], ctx[at + 1], ctx[at + 2], ctx[at + 3]]);
    let end = sift_ebpf::skb::DATA_END as usize;
    ctx[end..end + 4].copy_from_slice(&(data + linear as u32).to_le_bytes());
    vm.run_with_packet(&mut ctx, &mut p).unwrap_or_else(|e| panic!("VM run: {e}"))
}

/// sift's verifier on `f`: as an unprivileged loader would be judged, or (a program reading
/// `len` at XDP subtracts packet pointers) as a privileged one. The flag says which.
pub fn verify(f: &EbpfFilter) -> (Result<Report, VerifyError>, bool) {
    let slots = f.slots();
    let plain = sift_ebpf_verifier::verify(&slots, f.prog_type(), &f.maps);
    if plain.is_ok() || f.hook != Hook::Xdp {
        return (plain, false);
    }
    let opts = VerifierOptions { privileged: true };
    (sift_ebpf_verifier::verify_with(&slots, f.prog_type(), &f.maps, opts), true)
}

/// Tallies of a differential run.
#[derive(Default)]
pub struct Tally {
    pub(crate) filters: usize,
    pub(crate) packets: usize,
    pub(crate) runs: usize,
    pub(crate) slots: [usize; 3],
    pub(crate) max_slots: [usize; 3],
    pub(crate) classic: usize,
    pub(crate) max_classic: usize,
    pub(crate) privileged: usize,
    pub(crate) processed_max: u64,
    pub(crate) mismatches: Vec<String>,
}

const HOOKS: [Hook; 3] = [Hook::Xdp, Hook::Tc, Hook::SocketFilter];

/// Checks one filter on `packets` at every hook (raw mode), XDP's verdicts, and TC with
/// fragments.
pub fn check(f: &Filter, packets: &[Vec<u8>], t: &mut Tally) {
    let reference = sift_vm::Interpreter::new(&f.compiled.program);
    let want: Vec<u32> = packets.iter().map(|p| classic(&reference, p)).collect();
    t.filters += 1;
    t.packets += packets.len();
    t.classic += f.compiled.program.insns().len();
    t.max_classic = t.max_classic.max(f.compiled.program.insns().len());
    for (h, hook) in HOOKS.into_iter().enumerate() {
        let lowered = ebpf::lower(&f.compiled, &EbpfOptions::new(hook).raw())
            .unwrap_or_else(|e| panic!("`{}` {hook:?}: {e}", f.expr));
        t.slots[h] += lowered.len();
        t.max_slots[h] = t.max_slots[h].max(lowered.len());
        let (verdict, privileged) = verify(&lowered);
        match verdict {
            Ok(r) => t.processed_max = t.processed_max.max(r.processed),
            Err(e) => {
                t.mismatches.push(format!(
                    "`{}` {hook:?}: sift's verifier refuses: {e}\n{}",
                    f.expr,
                    lowered.listing()
                ));
                continue;
            }
        }
        t.privileged += usize::from(privileged);
        let mut vm = load(&lowered);
        let mut rng = sift_testkit::Rng(0x11ea | h as u64);
        for (p, &w) in packets.iter().zip(&want) {
            let got = run(&mut vm, hook, p);
            t.runs += 1;
            let mut seen = vec![(got, "")];
            if hook == Hook::Tc {
                let linear = rng.below(p.len() as u64 + 1) as usize;
                seen.push((run_tc_nonlinear(&mut vm, p, linear), " (fragments)"));
                t.runs += 1;
            }
            for (got, how) in seen {
                if got != u64::from(w) && t.mismatches.len() < 20 {
                    t.mismatches.push(format!(
                        "`{}` {hook:?}{how}: {got} where classic gives {w} on {p:02x?}\n{}",
                        f.expr,
                        lowered.listing()
                    ));
                }
            }
        }
    }
    // XDP's verdicts (not raw).
    let xdp = ebpf::lower(&f.compiled, &EbpfOptions::new(Hook::Xdp)).expect("lowers");
    let mut vm = load(&xdp);
    for (p, &w) in packets.iter().zip(&want) {
        let got = run(&mut vm, Hook::Xdp, p);
        t.runs += 1;
        let expect = if w != 0 { ebpf::XDP_PASS } else { ebpf::XDP_DROP };
        if got != u64::from(expect) && t.mismatches.len() < 20 {
            t.mismatches.push(format!("`{}` XDP verdict: {got}, not {expect}", f.expr));
        }
    }
}

impl Tally {
    pub(crate) fn report(&self, what: &str) -> String {
        let mean = |s: usize| s as f64 / self.filters.max(1) as f64;
        format!(
            "{what}: {} filters, {} packets, {} runs; classic {:.1} instructions on average \
             (max {}); eBPF XDP {:.1} (max {}), TC {:.1} (max {}), socket filter {:.1} (max \
             {}); {} XDP programs verified as privileged (`len`); verifier at most {} \
             instructions processed; {} mismatches",
            self.filters,
            self.packets,
            self.runs,
            mean(self.classic),
            self.max_classic,
            mean(self.slots[0]),
            self.max_slots[0],
            mean(self.slots[1]),
            self.max_slots[1],
            mean(self.slots[2]),
            self.max_slots[2],
            self.privileged,
            self.processed_max,
            self.mismatches.len()
        )
    }
}

#[test]
fn corpus_filters_run_on_the_vm_as_classic() {
    let resolver = crate::resolver();
    let Some((filters, refused)) = corpus_filters(&resolver) else { return };
    let frames = base_frames(0xc0de, 150);
    let mut t = Tally::default();
    for (i, f) in filters.iter().enumerate() {
        let packets = crate::packets_for(f, &frames, i as u64 + 1, 24);
        check(f, &packets, &mut t);
    }
    println!("{} ({refused} corpus expressions do not compile for EN10MB)", t.report("corpus"));
    assert!(t.filters >= 480, "{}", t.filters);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}

#[test]
fn generated_filters_run_on_the_vm_as_classic() {
    let resolver = crate::resolver();
    let (filters, refused) = generated_filters(&resolver, 0xeb9f, generated_count(2500));
    let frames = base_frames(0x9e4, 100);
    let mut t = Tally::default();
    for (i, f) in filters.iter().enumerate() {
        let packets = crate::packets_for(f, &frames, i as u64 + 7, 16);
        check(f, &packets, &mut t);
    }
    println!("{} ({refused} generated expressions did not compile)", t.report("generated"));
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}
