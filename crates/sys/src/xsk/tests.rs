use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::ring::fake::FakeRing;
use super::*;
use crate::{bpf, netlink, netns};

#[test]
fn producer_reserves_what_is_free_and_publishes_on_submit() {
    let mut mem = FakeRing::new::<u64>(8);
    let mut ring = mem.prod::<u64>(8);
    assert_eq!(ring.size(), 8);
    assert_eq!(ring.free(1), 8);
    assert_eq!(ring.reserve(5), 5);
    assert!(ring.write(0, 100));
    assert!(ring.write(4, 104));
    assert!(!ring.write(5, 105), "past the reservation");
    for i in 1..4 {
        ring.write(i, 100 + u64::from(i));
    }
    assert_eq!(mem.producer().load(Ordering::Relaxed), 0, "nothing published before submit");
    ring.submit(4);
    assert_eq!(mem.producer().load(Ordering::Relaxed), 4, "only what was asked");
    assert_eq!((0..4).map(|s| mem.entry::<u64>(s)).collect::<Vec<_>>(), [100, 101, 102, 103]);
    assert_eq!(ring.pending(), 4);
    // 4 free: a reservation of 6 gets 4, and the kernel consuming is seen only when needed.
    assert_eq!(ring.reserve(6), 4);
    ring.submit(0);
    mem.consumer().store(3, Ordering::Release);
    assert_eq!(ring.free(4), 4, "the cached consumer index suffices");
    assert_eq!(ring.free(5), 7, "reloaded");
    // Wrapping: slots 4..8 then 0..3 again.
    assert_eq!(ring.produce(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), 7);
    assert_eq!(mem.producer().load(Ordering::Relaxed), 11);
    assert_eq!(mem.entry::<u64>(2), 7);
    assert_eq!(mem.entry::<u64>(3), 103, "slot 3 (index 11) not written");
    assert_eq!(ring.reserve(1), 0, "full");
    assert!(!ring.needs_wakeup());
    mem.flags().store(XDP_RING_NEED_WAKEUP, Ordering::Relaxed);
    assert!(ring.needs_wakeup());
}

#[test]
fn producer_indices_wrap_at_u32() {
    let mut mem = FakeRing::new::<Desc>(4);
    mem.producer().store(u32::MAX - 1, Ordering::Relaxed);
    mem.consumer().store(u32::MAX - 1, Ordering::Relaxed);
    let mut ring = mem.prod::<Desc>(4);
    let d = |a| Desc { addr: a, len: 60, options: 0 };
    assert_eq!(ring.produce(&[d(1), d(2), d(3)]), 3);
    assert_eq!(mem.producer().load(Ordering::Relaxed), 1);
    assert_eq!(mem.entry::<Desc>(2), d(1));
    assert_eq!(mem.entry::<Desc>(3), d(2));
    assert_eq!(mem.entry::<Desc>(0), d(3));
    assert_eq!(ring.free(2), 1);
}

#[test]
fn consumer_peeks_what_is_ready_and_releases_on_release() {
    let mut mem = FakeRing::new::<Desc>(4);
    for s in 0..4 {
        mem.set_entry(s, Desc { addr: 4096 * s as u64, len: s as u32, options: 0 });
    }
    let mut ring = mem.cons::<Desc>(4);
    assert_eq!(ring.peek(4), 0, "nothing produced");
    mem.producer().store(3, Ordering::Release);
    assert_eq!(ring.available(1), 3);
    assert_eq!(ring.peek(2), 2);
    assert_eq!(ring.read(1).map(|d| d.addr), Some(4096));
    assert_eq!(ring.read(2), None, "not peeked");
    ring.release(1);
    assert_eq!(mem.consumer().load(Ordering::Relaxed), 1, "only what was released");
    let mut out = [Desc::default(); 8];
    assert_eq!(ring.consume(&mut out), 2);
    assert_eq!((out[0].len, out[1].len), (1, 2));
    assert_eq!(mem.consumer().load(Ordering::Relaxed), 3);
    // The cached producer index is reloaded only when short.
    mem.producer().store(6, Ordering::Release);
    assert_eq!(ring.available(0), 0, "cache still says empty");
    assert_eq!(ring.available(1), 3);
    assert_eq!(ring.consume(&mut out), 3);
    assert_eq!(out[1].addr, 0, "index 4 is slot 0");
    ring.release(5);
    assert_eq!(mem.consumer().load(Ordering::Relaxed), 6, "nothing peeked: nothing released");
}

#[test]
fn umem_frames_by_address_are_checked() {
    assert_eq!(Umem::new(4, 3000).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    assert_eq!(Umem::new(4, 1024).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    assert_eq!(Umem::new(0, 2048).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    let mut umem = Umem::new(4, 2048).unwrap();
    assert_eq!((umem.frames(), umem.frame_size(), umem.len()), (4, 2048, 8192));
    assert_eq!(umem.frame_base(2048 + 300), 2048);
    umem.frame_mut(2048 + 300).unwrap()[0] = 7;
    umem.bytes_mut(4096 + 256, 4).unwrap().copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(umem.frame(2048).unwrap()[0], 7);
    assert_eq!(umem.bytes(4096 + 256, 4).unwrap(), [1, 2, 3, 4]);
    assert_eq!(umem.frame(4096).unwrap().len(), 2048);
    assert!(umem.frame(8192).is_none(), "past the end");
    assert!(umem.bytes(2048 + 2000, 49).is_none(), "across a frame's end");
    assert!(umem.bytes(2048 + 2000, 48).is_some());
    assert!(umem.bytes(u64::MAX, 1).is_none());
}

/// A frame from `src` MAC …:01 to …:02 with `tag` in its payload.
fn frame(tag: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f[14..].fill(tag);
    f
}

/// Socket, UMEM, rings and binding on `lo` in a private namespace; a generic XDP program
/// redirecting queue 0 into the socket; a frame sent on TX comes back on COMPLETION and, looped
/// back by `lo`, on RX.
#[test]
fn loopback_frames_go_out_on_tx_and_come_back_on_rx() {
    if !bpf_and_xsk_available() {
        return;
    }
    let Some(ip) = sift_testkit::tool("ip") else { return };
    std::thread::spawn(move || {
        netns::unshare_net().unwrap();
        let st = std::process::Command::new(&ip).args(["link", "set", "lo", "up"]).status();
        assert!(st.unwrap().success(), "ip link set lo up");
        loopback(crate::iface::index_of("lo").unwrap());
    })
    .join()
    .unwrap();
}

fn bpf_and_xsk_available() -> bool {
    match socket() {
        Ok(_) => {}
        Err(e) => return sift_testkit::oracle_missing("AF_XDP sockets", e).unwrap_or(false),
    }
    match bpf::map_create(2, 4, 4, 1, 0) {
        Ok(_) => true,
        Err(e) if bpf::is_unavailable(&e) => {
            sift_testkit::oracle_missing("kernel bpf(2)", e).unwrap_or(false)
        }
        Err(e) => panic!("{e}"),
    }
}

const SIZE: u32 = 64;

fn loopback(lo: u32) {
    let fd = socket().unwrap();
    let mut umem = Umem::new(128, 2048).unwrap();
    register_umem(&fd, &umem, 0).unwrap();
    assert_eq!(register_umem(&fd, &umem, 0).unwrap_err().raw_os_error(), Some(libc::EBUSY));
    for kind in [RingKind::Rx, RingKind::Tx, RingKind::Fill, RingKind::Completion] {
        assert_eq!(
            set_ring_size(&fd, kind, 100).unwrap_err().raw_os_error(),
            Some(libc::EINVAL),
            "{kind:?} of 100"
        );
        set_ring_size(&fd, kind, SIZE).unwrap();
    }
    let off = mmap_offsets(&fd).unwrap();
    let mut fill = FillRing::map(&fd, SIZE, &off).unwrap();
    let mut comp = CompRing::map(&fd, SIZE, &off).unwrap();
    let mut rx = RxRing::map(&fd, SIZE, &off).unwrap();
    let mut tx = TxRing::map(&fd, SIZE, &off).unwrap();
    assert_eq!(TxRing::map(&fd, 3, &off).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    // lo has no zero-copy; there is one queue.
    let at = |queue, flags| Bind { ifindex: lo, queue, flags, shared_umem: None };
    let zc = bind(&fd, &at(0, XDP_ZEROCOPY)).unwrap_err();
    assert_eq!(zc.raw_os_error(), Some(libc::EOPNOTSUPP), "{zc}");
    assert_eq!(bind(&fd, &at(7, XDP_COPY)).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    bind(&fd, &at(0, XDP_COPY | XDP_USE_NEED_WAKEUP)).unwrap();
    assert!(!is_zero_copy(&fd).unwrap());
    assert_eq!(statistics(&fd).unwrap(), Statistics::default());
    // A second socket on the same queue shares the first one's UMEM (and its FILL and
    // COMPLETION rings); it may not ask for a mode of its own.
    let second = socket().unwrap();
    set_ring_size(&second, RingKind::Rx, SIZE).unwrap();
    let shared = |flags| Bind { ifindex: lo, queue: 0, flags, shared_umem: Some(fd.as_fd()) };
    assert_eq!(bind(&second, &shared(XDP_COPY)).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    bind(&second, &shared(0)).unwrap();
    assert_eq!(statistics(&second).unwrap(), Statistics::default());
    drop(second);

    // XSKMAP and the redirect program, attached generically (lo has no native XDP).
    let xsks = bpf::map_create(17, 4, 4, 1, 0).unwrap();
    bpf::map_update_elem(&xsks, &0u32.to_le_bytes(), &fd.as_raw_fd().to_le_bytes(), 0).unwrap();
    let text = format!(
        "ldxw %r2, [%r1+16]\nlddw %r1, map_fd({})\nmov %r3, 2\ncall 51\nexit\n",
        xsks.as_raw_fd()
    );
    let insns = sift_ebpf::asm::assemble(&text).unwrap();
    let bytes: Vec<u8> =
        sift_ebpf::encode_program(&insns).iter().flat_map(|i| i.encode()).collect();
    let prog = bpf::prog_load_with(
        &bytes,
        bpf::ProgLoad { expected_attach_type: bpf::BPF_XDP, ..bpf::ProgLoad::new(6) },
    )
    .unwrap();
    let _link = bpf::link_create(
        &prog,
        &bpf::LinkCreate {
            ifindex: lo,
            attach_type: bpf::BPF_XDP,
            flags: netlink::XDP_FLAGS_SKB_MODE,
            ..Default::default()
        },
    )
    .unwrap();

    // Frames 0..32 to receive into; frames 64.. to send from.
    let empty: Vec<u64> = (0..32).map(|i| i * 2048).collect();
    assert_eq!(fill.produce(&empty), 32);
    let mut sent = Vec::new();
    for i in 0..10u8 {
        let addr = (64 + u64::from(i)) * 2048 + 100;
        let f = frame(i);
        umem.bytes_mut(addr, f.len()).unwrap().copy_from_slice(&f);
        sent.push((addr, f));
    }
    assert_eq!(tx.reserve(10), 10);
    for (i, (addr, f)) in sent.iter().enumerate() {
        assert!(tx.write(i as u32, Desc { addr: *addr, len: f.len() as u32, options: 0 }));
    }
    tx.submit(10);
    assert!(tx.needs_wakeup(), "copy mode sends only when asked");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut done = Vec::new();
    let mut got = Vec::new();
    while (done.len() < 10 || got.len() < 10) && Instant::now() < deadline {
        if tx.pending() > 0 {
            kick_tx(&fd).unwrap();
        }
        let mut c = [0u64; 16];
        let n = comp.consume(&mut c);
        done.extend_from_slice(&c[..n]);
        let n = rx.peek(16);
        for i in 0..n {
            let d = rx.read(i).unwrap();
            got.push(umem.bytes(d.addr, d.len as usize).unwrap().to_vec());
            assert_eq!(umem.frame_base(d.addr) % 2048, 0);
            assert!(d.addr % 2048 >= u64::from(XDP_PACKET_HEADROOM), "headroom in front");
        }
        rx.release(n);
        if n == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let addrs: Vec<u64> = sent.iter().map(|(a, _)| *a).collect();
    assert_eq!(done, addrs, "completions in order, the addresses as sent");
    let frames: Vec<Vec<u8>> = sent.into_iter().map(|(_, f)| f).collect();
    assert_eq!(got, frames, "received as sent");
    let st = statistics(&fd).unwrap();
    assert_eq!((st.rx_dropped, st.rx_invalid_descs, st.tx_invalid_descs), (0, 0, 0));
    // A TX entry outside the UMEM is refused and counted.
    tx.produce(&[Desc { addr: 1 << 40, len: 60, options: 0 }]);
    kick_tx(&fd).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while statistics(&fd).unwrap().tx_invalid_descs == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(statistics(&fd).unwrap().tx_invalid_descs, 1);
    assert!(poll(&[fd.as_fd()], true, 0).unwrap() <= 1);
    wake_rx(&fd).unwrap();
}
