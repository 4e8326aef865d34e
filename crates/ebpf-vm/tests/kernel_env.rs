//! The helpers' world as an embedder sees it: the virtual clock and CPU, the seeded random
//! numbers, `trace_printk`'s output, the redirect a run records, socket filters' results,
//! per-CPU values by virtual CPU, and the ring buffer records the embedder drains.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use sift_ebpf::asm::assemble;
use sift_ebpf::{MapSpec, MapType, encode_program};
use sift_ebpf_vm::context::{tc, xdp};
use sift_ebpf_vm::{Helpers, Map, Redirect, SkbInfo, Vm, register_kernel_helpers};

fn vm(text: &str, maps: Vec<Map>) -> Vm {
    let mut h = Helpers::new();
    register_kernel_helpers(&mut h);
    Vm::load_with_maps(&encode_program(&assemble(text).unwrap()), h, maps).unwrap()
}

fn spec(t: MapType, k: u32, v: u32, n: u32) -> MapSpec {
    MapSpec {
        name: "m".into(),
        map_type: t,
        key_size: k,
        value_size: v,
        max_entries: n,
        flags: 0,
        initial: Vec::new(),
    }
}

#[test]
fn clock_cpu_and_random_numbers_are_the_embedders() {
    let mut v = vm("call 5\nexit", vec![]);
    v.env_mut().clock_ns = 1_700_000_000_123;
    assert_eq!(v.run(&mut []), Ok(1_700_000_000_123));
    let mut v = vm("call 8\nexit", vec![]);
    v.env_mut().cpu = 3;
    assert_eq!(v.run(&mut []), Ok(3));
    let mut v = vm("call 7\nmov %r6, %r0\ncall 7\nlsh %r0, 32\nor %r0, %r6\nexit", vec![]);
    v.env_mut().seed(42);
    let a = v.run(&mut []).unwrap();
    v.env_mut().seed(42);
    assert_eq!(v.run(&mut []), Ok(a));
    assert_ne!(a >> 32, a & 0xffff_ffff);
    v.env_mut().seed(43);
    assert_ne!(v.run(&mut []), Ok(a));
}

#[derive(Clone, Default)]
struct Sink(Rc<RefCell<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn trace_printk_writes_where_the_embedder_says() {
    // "x=%d %llx %p\0" on the stack.
    let text = "lddw %r1, 0x6c6c252064253d78\nstxdw [%r10-16], %r1\nlddw %r1, 0x70252078\n\
                stxdw [%r10-8], %r1\nmov %r1, %r10\nadd %r1, -16\nmov %r2, 13\nmov %r3, -7\n\
                lddw %r4, 0x1234567890\nmov %r5, 255\ncall 6\nexit";
    let mut v = vm(text, vec![]);
    let sink = Sink::default();
    v.env_mut().set_trace_output(sink.clone());
    let line = "x=-7 1234567890 0xff";
    assert_eq!(v.run(&mut []), Ok(line.len() as u64));
    assert_eq!(String::from_utf8(sink.0.borrow().clone()).unwrap(), format!("{line}\n"));
}

#[test]
fn redirects_are_recorded_with_the_program_types_verdict() {
    let mut v = vm("mov %r1, 5\nmov %r2, 0\ncall 23\nexit", vec![]);
    assert_eq!(v.run_xdp(&mut [0; 20], 1), Ok(xdp::REDIRECT));
    assert_eq!(v.env().redirect, Some(Redirect::Ifindex { ifindex: 5, flags: 0 }));
    assert_eq!(v.run_tc(&mut [0; 20], &SkbInfo::default()), Ok(tc::REDIRECT));
    // A run clears the last one.
    let mut v2 = vm("mov %r1, 5\nmov %r2, 4\ncall 23\nexit", vec![]);
    assert_eq!(v2.run_xdp(&mut [0; 20], 1), Ok(xdp::ABORTED));
    assert_eq!(v2.env().redirect, None);
    assert_eq!(v2.run_tc(&mut [0; 20], &SkbInfo::default()), Ok(tc::SHOT));
}

#[test]
fn socket_filters_see_no_packet_pointers_but_load_bytes() {
    // r0 = data (0 for a socket filter) + the byte at offset 12 (legacy load) + len.
    let text = "mov %r6, %r1\nldxw %r7, [%r6+76]\nldabsb 12\nadd %r0, %r7\nldxw %r1, [%r6]\n\
                add %r0, %r1\nexit";
    let mut v = vm(text, vec![]);
    let mut p = [0u8; 60];
    p[12] = 8;
    assert_eq!(v.run_socket_filter(&mut p, &SkbInfo::default()), Ok(68));
}

#[test]
fn per_cpu_values_follow_the_virtual_cpu() {
    let m = Map::from_spec_cpus(&spec(MapType::PerCpuArray, 4, 8, 1), 2).unwrap();
    let text = "stw [%r10-4], 0\nlddw %r1, map_fd(0)\nmov %r2, %r10\nadd %r2, -4\ncall 1\n\
                jeq %r0, 0, out\nmov %r1, 1\nlock add [%r0], %r1\nout:\nmov %r0, 0\nexit";
    let mut v = vm(text, vec![m]);
    for cpu in [0, 1, 1, 1] {
        v.env_mut().cpu = cpu;
        v.run(&mut []).unwrap();
    }
    let vals = v.maps()[0].lookup_percpu(&[0; 4]).unwrap();
    assert_eq!(vals, vec![&1u64.to_le_bytes()[..], &3u64.to_le_bytes()[..]]);
}

#[test]
fn ring_buffer_records_reach_the_embedder() {
    let m = Map::from_spec(&spec(MapType::Ringbuf, 0, 0, 4096)).unwrap();
    // reserve 4 bytes, write r1's first byte... then output 4 stack bytes.
    let text = "lddw %r1, map_fd(0)\nmov %r2, 4\nmov %r3, 0\ncall 131\njeq %r0, 0, out\n\
                stw [%r0], 0x11223344\nmov %r1, %r0\nmov %r2, 0\ncall 132\nout:\n\
                stw [%r10-4], 0x55\nlddw %r1, map_fd(0)\nmov %r2, %r10\nadd %r2, -4\n\
                mov %r3, 4\nmov %r4, 0\ncall 130\nexit";
    let mut v = vm(text, vec![m]);
    assert_eq!(v.run(&mut []), Ok(0));
    let records = v.maps_mut()[0].ringbuf_drain();
    assert_eq!(records, vec![vec![0x44, 0x33, 0x22, 0x11], vec![0x55, 0, 0, 0]]);
    // A helper the kernel's verifier refuses on this map type is a located fault.
    let e = vm(
        "lddw %r1, map_fd(0)\nmov %r2, %r10\ncall 1\nexit",
        vec![Map::from_spec(&spec(MapType::Ringbuf, 0, 0, 4096)).unwrap()],
    )
    .run(&mut [])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "instruction 3: helper 1 (map_lookup_elem): the kernel's verifier refuses \
         map_lookup_elem on a RINGBUF map"
    );
}

#[test]
fn xdp_packets_come_back_resized() {
    use sift_ebpf_vm::XdpPacket;
    // Drop 14 bytes of head, grow the tail by 2.
    let text = "mov %r6, %r1\nmov %r2, 14\ncall 44\nmov %r1, %r6\nmov %r2, 2\ncall 65\n\
                mov %r0, 2\nexit";
    let mut v = vm(text, vec![]);
    let bytes: Vec<u8> = (0..40).collect();
    let mut p = XdpPacket::new(&bytes);
    assert_eq!(v.run_xdp_packet(&mut p, 1, 0), Ok(xdp::PASS));
    let want: Vec<u8> = (14..40).chain([0, 0]).collect();
    assert_eq!(p.data(), &want[..]);
}
