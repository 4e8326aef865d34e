//! `sift ebpf exec|asm|disasm` end to end; `exec` as the conformance suite's plugin over
//! every conformance test (program on standard input, memory as the first argument, `r0` in
//! hex on standard output).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use sift_ebpf::asm::assemble;
use sift_ebpf::datafile::DataFile;
use sift_ebpf::encode_program;

const SIFT: &str = env!("CARGO_BIN_EXE_sift");

fn sift(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(SIFT)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sift");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn exec_prints_r0_in_hex_or_refuses_on_stderr() {
    // ldxdw %r0, [%r1+2]; exit over 12 bytes of memory.
    let prog = "79 10 02 00 00 00 00 00 95 00 00 00 00 00 00 00";
    let o = sift(&["ebpf", "exec", "aa bb 11 22 33 44 55 66 77 88 cc dd"], prog);
    assert_eq!((text(&o.stdout), o.status.code()), ("8877665544332211\n".into(), Some(0)));
    let o = sift(&["ebpf", "exec", "--mem", "aa bb"], prog);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "instruction 0: out-of-bounds read of 8 bytes at 0x20000002\n");
    assert!(o.stdout.is_empty());
    // A reserved field (add with offset 1): refused at load.
    let o = sift(&["ebpf", "exec"], "07 00 01 00 01 00 00 00 95 00 00 00 00 00 00 00");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "instruction 0: opcode 0x07: reserved offset field is 1, not 0\n");
    // `l: ja +0; ja l`: stopped by the budget; the interpreter counts instructions and stops
    // at the one it cannot afford, the JIT (the default) charges backward jumps and stops at
    // the jump.
    let looping = "05 00 00 00 00 00 00 00 05 00 fe ff 00 00 00 00 95 00 00 00 00 00 00 00";
    let o = sift(&["ebpf", "exec", "--budget", "100", "--engine", "interp"], looping);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "instruction 0: instruction budget of 100 exhausted\n");
    let o = sift(&["ebpf", "exec", "--budget", "100"], looping);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "instruction 1: instruction budget of 100 exhausted\n");
}

#[test]
fn asm_and_disasm() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.s");
    std::fs::write(&src, "mov32 %r0, 1\nlddw %r1, 0x1122334455667788\nja +0\nexit\n").unwrap();
    let o = sift(&["ebpf", "asm", src.to_str().unwrap()], "");
    let words = text(&o.stdout);
    assert_eq!(
        words,
        "0x00000001000000b4\n0x5566778800000118\n0x1122334400000000\n0x0000000000000005\n0x0000000000000095\n"
    );
    let o = sift(&["ebpf", "disasm", "-"], &words);
    assert_eq!(
        text(&o.stdout),
        "       0:\tb4 00 00 00 01 00 00 00\tw0 = 1\n\
         \x20      1:\t18 01 00 00 88 77 66 55 00 00 00 00 44 33 22 11\tr1 = 1234605616436508552 ll\n\
         \x20      3:\t05 00 00 00 00 00 00 00\tgoto +0\n\
         \x20      4:\t95 00 00 00 00 00 00 00\texit\n"
    );
    let o = sift(&["ebpf", "disasm", "--asm", "-"], &words);
    assert_eq!(text(&o.stdout), "mov32 %r0, 1\nlddw %r1, 0x1122334455667788\nja +0\nexit\n");
    std::fs::write(&src, "mov %r0, 1\n  ldxq %r0, %r1\n").unwrap();
    let o = sift(&["ebpf", "asm", src.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), format!("sift: {}:2:3: Invalid mnemonic: ldxq\n", src.display()));
}

#[test]
fn exec_is_a_conformance_plugin() {
    let dir = sift_testkit::shared_dir().join("corpus/ebpf/conformance/tests");
    if !dir.is_dir() {
        sift_testkit::oracle_missing::<()>("eBPF corpus", format!("{} is missing", dir.display()));
        return;
    }
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut passed = 0;
    for path in files {
        let f = DataFile::parse(&std::fs::read_to_string(&path).unwrap());
        let insns = assemble(f.section("asm").unwrap()).unwrap();
        let hex: Vec<String> = encode_program(&insns)
            .iter()
            .flat_map(|s| s.encode())
            .map(|b| format!("{b:02x}"))
            .collect();
        let mem: Vec<String> = f.mem().unwrap().iter().map(|b| format!("{b:02x}")).collect();
        // As the runner calls a plugin: the memory argument only when there is memory.
        let mut args = vec!["ebpf", "exec"];
        let mem = mem.join("  ");
        if !mem.is_empty() {
            args.push(&mem);
        }
        let o = sift(&args, &(hex.join("  ") + "\n"));
        let r0 = u64::from_str_radix(text(&o.stdout).trim(), 16);
        assert_eq!(r0, Ok(f.result().unwrap().unwrap()), "{}: {}", path.display(), text(&o.stderr));
        passed += 1;
    }
    assert_eq!(passed, 313);
}

#[test]
fn run_xdp_over_a_capture_with_a_map() {
    let prog = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/xdp_ethertype_count.s");
    let cap = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/mixed.pcapng");
    let o = sift(&["ebpf", "run", prog, "-r", cap, "--map", "hash:4:8:64", "--dump-maps"], "");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 35 + 2);
    assert_eq!(lines.iter().filter(|l| l.ends_with(" XDP_DROP")).count(), 21);
    // EtherType keys (host order, as the program stored them after be16) and their counts.
    assert_eq!(
        lines[35..],
        ["map 0: 00080000 => 0e00000000000000", "map 0: dd860000 => 1500000000000000"]
    );
    assert_eq!(text(&o.stderr), "35 packets: XDP_DROP 21, XDP_PASS 14\n");
    let o = sift(&["ebpf", "run", prog, "-r", cap, "-c", "2", "--map", "hash:4:8:64"], "");
    assert_eq!(text(&o.stdout).lines().count(), 2);
    // Without its map the program is refused, located.
    let o = sift(&["ebpf", "run", prog, "-r", cap], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).ends_with("instruction 8: lddw MapFd: no map 0 (or no offset 0 in it)\n"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn verify_accepts_or_locates_the_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.asm");
    // data, data_end; 14 bytes proven before the EtherType is read.
    std::fs::write(
        &good,
        "ldxw %r2, [%r1+0]\nldxw %r3, [%r1+4]\nmov %r0, 2\nmov %r4, %r2\nadd %r4, 14\n\
         jgt %r4, %r3, +1\nldxh %r0, [%r2+12]\nexit\n",
    )
    .unwrap();
    let o = sift(&["ebpf", "verify", good.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).ends_with("good.asm: accepted (9 instructions processed, 3 states)\n"));
    // Without the comparison: refused where the packet is read.
    let bad = dir.path().join("bad.asm");
    std::fs::write(&bad, "ldxw %r2, [%r1+0]\nmov %r0, 2\nldxh %r0, [%r2+12]\nexit\n").unwrap();
    let o = sift(&["ebpf", "verify", bad.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).ends_with(
            "bad.asm: instruction 2: invalid access to packet, off=12 size=2, R2(id=0,off=0,r=0)\n"
        ),
        "{}",
        text(&o.stdout)
    );
    // As a socket filter, offset 0 of the context is `len`, a number, not a packet pointer.
    let o = sift(&["ebpf", "verify", "--type", "socket", good.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).ends_with("instruction 6: R2 invalid mem access 'scalar'\n"));
    let o = sift(&["ebpf", "verify", "--type", "nope", good.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "sift: --type nope: expected xdp, tc or socket\n");
}
