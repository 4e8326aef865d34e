//! Hand-written programs for what the random test and the suites reach rarely — call depth,
//! `callx`, a helper's exit from a nested frame, the budget, read-only contexts, XDP, TC and
//! socket-filter contexts, legacy packet loads, tail calls from a nested frame — each run on
//! the interpreter and compiled: the same result (`r0`, or the fault with its location; the
//! budget's location is the engine's own), the same memory and packet.

use sift_ebpf::asm::assemble;
use sift_ebpf::encode_program;
use sift_ebpf_jit::{JitOptions, jit};
use sift_ebpf_vm::{Fault, Helpers, RunError, SkbInfo, Vm, register_kernel_helpers, test_helpers};

fn load(text: &str, helpers: Helpers) -> Vm {
    Vm::load(&encode_program(&assemble(text).unwrap()), helpers).unwrap()
}

/// Runs `text` with `run` on both engines; returns the interpreter's result.
fn both(
    text: &str,
    helpers: fn() -> Helpers,
    run: impl Fn(&mut Vm) -> (Result<u64, RunError>, Vec<u8>),
) -> Result<u64, RunError> {
    let mut interp = load(text, helpers());
    let (want, want_mem) = run(&mut interp);
    for opts in [JitOptions::default(), JitOptions { blinding: true, ..JitOptions::default() }] {
        let mut vm = load(text, helpers());
        jit(&mut vm, &opts).unwrap();
        let (got, got_mem) = run(&mut vm);
        match (&want, &got) {
            (Err(a), Err(b)) if a.fault == Fault::Budget(1000) => assert_eq!(b.fault, a.fault),
            _ => assert_eq!(got, want, "{text}"),
        }
        assert_eq!(got_mem, want_mem, "{text}");
    }
    want
}

fn plain(mem: &[u8]) -> impl Fn(&mut Vm) -> (Result<u64, RunError>, Vec<u8>) + '_ {
    move |vm| {
        vm.set_budget(1000);
        let mut m = mem.to_vec();
        (vm.run(&mut m), m)
    }
}

fn kernel() -> Helpers {
    let mut h = Helpers::new();
    register_kernel_helpers(&mut h);
    h
}

#[test]
fn calls_frames_and_depth() {
    // r6-r9 and r10 survive a call; each frame has its own stack.
    let text = "mov %r6, 6\nmov %r9, 9\nstdw [%r10-8], 1\ncall local f\nadd %r0, %r6\nadd %r0, %r9\n\
                ldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n\
                f:\nmov %r6, 100\nmov %r9, 100\nstdw [%r10-8], 50\nldxdw %r0, [%r10-8]\n\
                mov %r2, %r10\nldxdw %r3, [%r2+504]\nadd %r0, %r3\nexit";
    assert_eq!(both(text, test_helpers, plain(&[])), Ok(50 + 1 + 6 + 9 + 1));
    // The ninth frame is refused at the call.
    let e = both("call local f\nexit\nf:\ncall local f\nexit", test_helpers, plain(&[]));
    assert_eq!(e.unwrap_err(), RunError { pc: 2, fault: Fault::CallDepth });
    // Eight frames are fine, nine are not.
    let text = "call local f\nexit\nf:\njeq %r1, 0, out\nsub %r1, 1\ncall local f\n\
                add %r0, 1\nexit\nout:\nmov %r0, 0\nexit";
    assert_eq!(both(&format!("mov %r1, 6\n{text}"), test_helpers, plain(&[])), Ok(6));
    let e = both(&format!("mov %r1, 7\n{text}"), test_helpers, plain(&[]));
    assert_eq!(e.unwrap_err(), RunError { pc: 5, fault: Fault::CallDepth });
}

#[test]
fn kernel_results_for_undefined_c() {
    let r = |t: &str| both(t, test_helpers, plain(&[])).unwrap();
    // 32-bit shifts whose masked count is 0 still zero-extend (count in cl or not).
    for sh in ["lsh32", "rsh32", "arsh32"] {
        for count in ["%r1", "%r4"] {
            let t = format!("lddw %r0, -1\nmov %r1, 32\nmov %r4, 0\n{sh} %r0, {count}\nexit");
            assert_eq!(r(&t), 0xffff_ffff, "{t}");
        }
        assert_eq!(r(&format!("lddw %r0, -1\n{sh} %r0, 0\nexit")), 0xffff_ffff);
    }
    assert_eq!(r("mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit"), 0);
    assert_eq!(r("lddw %r0, 0x100000007\nmov %r1, 0\nmod32 %r0, %r1\nexit"), 7);
    assert_eq!(r("lddw %r0, 0x100000007\nmod32 %r0, 0\nexit"), 7);
    assert_eq!(r("lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit"), 1 << 63);
    assert_eq!(r("lddw %r0, 0x8000000000000000\nmov %r3, -1\nsdiv %r0, %r3\nexit"), 1 << 63);
    assert_eq!(r("lddw %r0, 0x8000000000000000\nmov %r3, -1\nsmod %r0, %r3\nexit"), 0);
    assert_eq!(r("mov32 %r0, 0x80000000\nmov %r3, -1\nsdiv32 %r0, %r3\nexit"), 0x8000_0000);
    assert_eq!(
        r("mov32 %r3, 0x80000000\nmov %r0, -1\nsdiv32 %r3, %r0\nmov %r0, %r3\nexit"),
        0x8000_0000
    );
    // cmpxchg32 leaves r0 zero-extended whether or not it swapped.
    let t = "stdw [%r10-8], 5\nlddw %r0, 0x100000005\nmov %r1, 9\n\
             lock cmpxchg32 [%r10-8], %r1\nexit";
    assert_eq!(r(t), 5);
}

#[test]
fn helpers_callx_and_exits() {
    // callx to a helper and to no helper.
    assert_eq!(both("mov %r1, 81\nmov %r2, 3\ncall %r2\nexit", test_helpers, plain(&[])), Ok(9));
    let e = both("mov %r2, 77\ncall %r2\nexit", test_helpers, plain(&[]));
    assert_eq!(e.unwrap_err().to_string(), "instruction 1: callx to 0x4d, which is no helper");
    // ubpf's unwind helper ends the run from a nested frame.
    let text =
        "mov %r0, 3\ncall local f\nmov %r0, 99\nexit\nf:\nmov %r1, 0\ncall 5\nmov %r0, 5\nexit";
    assert_eq!(both(text, test_helpers, plain(&[])), Ok(0));
    // A helper's refusal is a located fault; memfrob writes the memory.
    let e = both("mov %r2, 9\ncall 1\nexit", test_helpers, plain(&[1, 2, 3, 4]));
    assert!(matches!(e.unwrap_err(), RunError { pc: 1, fault: Fault::Helper { id: 1, .. } }));
    assert_eq!(both("mov %r2, 4\ncall 1\nexit", test_helpers, plain(&[1, 2, 3, 4])), Ok(0));
    // r1-r5 keep their values across a helper call (as in the interpreter).
    let text = "mov %r1, 2\nmov %r3, 3\nmov %r4, 4\nmov %r5, 5\ncall 2\nadd %r0, %r1\n\
                add %r0, %r3\nadd %r0, %r4\nadd %r0, %r5\nexit";
    assert_eq!(both(text, test_helpers, plain(&[])), Ok(14));
}

#[test]
fn budget_and_read_only_memory() {
    let e = both("l:\nadd %r0, 1\nja l\nexit", test_helpers, plain(&[]));
    assert_eq!(e.unwrap_err().fault, Fault::Budget(1000));
    // Recursion that never ends runs out of frames, not of budget.
    let e = both("call local f\nexit\nf:\ncall local f\nexit", test_helpers, plain(&[]));
    assert_eq!(e.unwrap_err().fault, Fault::CallDepth);
    // The context of a packet run is read-only; reading it is fine.
    let ro = |vm: &mut Vm| {
        let mut ctx = [7u8; 8];
        (vm.run_with_packet(&mut ctx, &mut []), ctx.to_vec())
    };
    let e = both("stw [%r1], 1\nexit", test_helpers, ro);
    assert_eq!(
        e.unwrap_err().to_string(),
        "instruction 0: out-of-bounds write of 4 bytes at 0x20000000"
    );
    assert_eq!(both("ldxw %r0, [%r1+4]\nexit", test_helpers, ro), Ok(0x0707_0707));
    let e = both("mov %r2, 1\nlock add [%r1], %r2\nexit", test_helpers, ro);
    assert_eq!(
        e.unwrap_err().to_string(),
        "instruction 1: out-of-bounds write of 8 bytes at 0x20000000"
    );
}

fn xdp(packet: &[u8]) -> impl Fn(&mut Vm) -> (Result<u64, RunError>, Vec<u8>) + '_ {
    move |vm| {
        let mut p = packet.to_vec();
        (vm.run_xdp(&mut p, 1), p)
    }
}

#[test]
fn xdp_packets_and_adjust_head() {
    // Swap the first two bytes when the packet is long enough.
    let text = "ldxw %r2, [%r1]\nldxw %r3, [%r1+4]\nmov %r4, %r2\nadd %r4, 14\n\
                jgt %r4, %r3, pass\nldxb %r5, [%r2]\nldxb %r6, [%r2+1]\nstxb [%r2], %r6\n\
                stxb [%r2+1], %r5\npass:\nmov %r0, 2\nexit";
    let mut p = [0u8; 60];
    p[0] = 1;
    assert_eq!(both(text, test_helpers, xdp(&p)), Ok(2));
    assert_eq!(both(text, test_helpers, xdp(&[9; 4])), Ok(2));
    // Past data_end faults, at its address.
    let e = both("ldxw %r2, [%r1]\nldxb %r0, [%r2+4]\nexit", test_helpers, xdp(&[0; 4]));
    assert_eq!(
        e.unwrap_err().to_string(),
        "instruction 1: out-of-bounds read of 1 bytes at 0x30000004"
    );
    // bpf_xdp_adjust_head (44) moves data: the new first byte is the old fifth, the old
    // pointer's first bytes are outside the packet now.
    let text = "mov %r6, %r1\nldxw %r7, [%r6]\nmov %r2, 4\ncall 44\nldxw %r2, [%r6]\n\
                ldxb %r0, [%r2]\nldxb %r3, [%r7+3]\nadd %r0, %r3\nldxb %r3, [%r7]\nexit";
    let p: Vec<u8> = (1..=40).collect();
    let e = both(text, kernel, xdp(&p));
    assert_eq!(
        e.unwrap_err().to_string(),
        "instruction 6: out-of-bounds read of 1 bytes at 0x30000003"
    );
    let text = "mov %r6, %r1\nmov %r2, 4\ncall 44\nldxw %r2, [%r6]\nldxb %r0, [%r2]\nexit";
    assert_eq!(both(text, kernel, xdp(&p)), Ok(5));
}

#[test]
fn tc_and_socket_filter_contexts() {
    // TC: __sk_buff is writable (mark at 8), direct packet access through data (76).
    let text = "mov %r0, 0\nstw [%r1+8], 5\nldxw %r2, [%r1+76]\nldxw %r3, [%r1+80]\nmov %r4, %r2\n\
                add %r4, 1\njgt %r4, %r3, out\nldxb %r0, [%r2]\nstb [%r2], 0xee\nout:\nexit";
    let tc = |vm: &mut Vm| {
        let mut p = vec![0x42u8; 20];
        (vm.run_tc(&mut p, &SkbInfo::default()), p)
    };
    assert_eq!(both(text, test_helpers, tc), Ok(0x42));
    // Socket filters: legacy loads (big-endian), 0 out of the packet.
    let sf = |vm: &mut Vm| {
        let mut p = vec![0x08, 0x00, 0x45, 0x11, 0x22];
        (vm.run_socket_filter(&mut p, &SkbInfo::default()), p)
    };
    assert_eq!(both("ldabsh 0\nmov %r6, 2\nldindb %r6, 1\nexit", test_helpers, sf), Ok(0x11));
    assert_eq!(both("ldabsh 0\nexit", test_helpers, sf), Ok(0x0800));
    assert_eq!(both("mov %r0, 9\nldabsw 2\nexit", test_helpers, sf), Ok(0));
    // Legacy loads over the input memory of `run`, and none without memory.
    assert_eq!(both("ldabsw 0\nexit", test_helpers, plain(&[1, 2, 3, 4])), Ok(0x0102_0304));
    let e = both("ldabsb 0\nexit", test_helpers, plain(&[]));
    assert_eq!(e.unwrap_err().fault, Fault::NoPacket);
}
