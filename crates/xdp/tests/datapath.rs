//! The datapath on veth pairs in private namespaces (root; SKIP otherwise): frames sent into
//! the far end arrive byte for byte with exact counters, come back out, cross to another port,
//! go through a caller's program; stopping loses nothing counted; bad requests are refused by
//! name.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Sender, Tap, frames, in_netns, is_ipv4_udp, swapped, tap_view, wait_until};
use sift_xdp::{
    Baseline, Batch, BindMode, Bound, CustomProgram, Datapath, Error, Kick, MetaMode, Options,
    PollMode, PoolKind, PortConfig, PortStats, XdpStatistics, xskmap_spec,
};

const N: usize = 1000;

fn copy_port(iface: &str) -> PortConfig {
    PortConfig { bind: BindMode::Copy, ..PortConfig::new(iface) }
}

type Seen = Arc<Mutex<Vec<Vec<u8>>>>;

/// A pipeline that records every packet's bytes, then swaps its MACs and sends it back out
/// (`hairpin`) or drops it.
fn recorder(
    seen: &Seen,
    hairpin: bool,
) -> impl FnMut(u32) -> Box<dyn FnMut(&mut Batch<'_>) + Send> {
    let seen = seen.clone();
    move |_queue| {
        let seen = seen.clone();
        Box::new(move |batch: &mut Batch<'_>| {
            let mut seen = seen.lock().unwrap();
            batch.for_each(|mut p| {
                seen.push(p.data().to_vec());
                if hairpin {
                    let d = p.data_mut();
                    let (dst, src) = d[..12].split_at_mut(6);
                    dst.swap_with_slice(src);
                    p.output(p.in_port());
                }
            });
        })
    }
}

fn bytes(frames: &[Vec<u8>]) -> u64 {
    frames.iter().map(|f| f.len() as u64).sum()
}

/// Sends `frames` into `far` and waits until port 0 counted them all.
fn send_all(dp: &Datapath, far: &str, frames: &[Vec<u8>]) {
    let sender = Sender::new(far);
    for f in frames {
        sender.send(f);
    }
    let arrived = wait_until(|| dp.stats()[0].rx_packets >= frames.len() as u64);
    assert!(
        arrived,
        "{} of {} frames arrived: {:?}",
        dp.stats()[0].rx_packets,
        frames.len(),
        dp.stats()
    );
}

#[test]
fn frames_arrive_byte_for_byte_with_exact_counters_in_every_design() {
    let designs = [
        (PoolKind::Stack, MetaMode::Array, PollMode::Pmd),
        (PoolKind::Ring, MetaMode::Alloc, PollMode::Pmd),
        (PoolKind::List, MetaMode::Inline, PollMode::Poll),
        (PoolKind::SharedMutex, MetaMode::Array, PollMode::Pmd),
    ];
    for (pool, meta, poll) in designs {
        let opts = Options { pool, meta, poll, batch: 32, ..Options::default() };
        let sent = frames(N, 19);
        let done = in_netns(&[("xa", "xb", 1)], || {
            let seen = Seen::default();
            let dp = Datapath::start(&[copy_port("xa")], &opts, recorder(&seen, false)).unwrap();
            assert_eq!(dp.ports()[0].mode, Bound::Copy);
            send_all(&dp, "xb", &sent);
            let report = dp.stop().unwrap();
            let got = seen.lock().unwrap().clone();
            (report, got)
        });
        let Some((report, got)) = done else { return };
        assert!(
            got == sent,
            "{opts:?}: {} frames, first wrong {:?}",
            got.len(),
            first_diff(&got, &sent)
        );
        let s = &report.ports[0];
        let want = PortStats {
            rx_packets: N as u64,
            rx_bytes: bytes(&sent),
            drop_pipeline: N as u64,
            wakeups: s.wakeups,
            // The kernel counts a `poll()` that found nothing to send.
            xdp: XdpStatistics {
                tx_ring_empty_descs: s.xdp.tx_ring_empty_descs,
                ..Default::default()
            },
            ..PortStats::default()
        };
        assert_eq!(*s, want, "{opts:?}");
        assert_eq!(report.threads.len(), 1);
        assert!(report.threads[0].cpu_ns > 0 && report.threads[0].rounds > 0);
    }
}

fn first_diff(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or((a.len() != b.len()).then_some(a.len().min(b.len())))
}

#[test]
fn l2fwd_sends_every_frame_back_with_its_macs_swapped() {
    for (kick, poll) in [(Kick::default(), PollMode::Pmd), (Kick::EveryBatch, PollMode::Poll)] {
        let opts = Options { kick, poll, ..Options::default() };
        let sent = frames(N, 23);
        let done = in_netns(&[("xa", "xb", 1)], || {
            let seen = Seen::default();
            let mut tap = Tap::new("xb");
            let dp = Datapath::start(&[copy_port("xa")], &opts, recorder(&seen, true)).unwrap();
            send_all(&dp, "xb", &sent);
            let back = tap.collect(N);
            let report = dp.stop().unwrap();
            (report, back)
        });
        let Some((report, back)) = done else { return };
        let want: Vec<Vec<u8>> = sent.iter().map(|f| tap_view(&swapped(f))).collect();
        assert!(
            back == want,
            "{opts:?}: {} back, first wrong {:?}",
            back.len(),
            first_diff(&back, &want)
        );
        let s = &report.ports[0];
        assert_eq!(
            (s.rx_packets, s.tx_packets, s.tx_completed, s.tx_bytes),
            (N as u64, N as u64, N as u64, bytes(&sent)),
            "{opts:?}: {s:?}"
        );
        assert_eq!(
            (s.drop_pipeline, s.drop_no_frame, s.drop_tx_full, s.drop_no_port),
            (0, 0, 0, 0)
        );
        // The kernel counts each kick that emptied the ring in `tx_ring_empty_descs`.
        let xdp =
            XdpStatistics { tx_ring_empty_descs: s.xdp.tx_ring_empty_descs, ..Default::default() };
        assert_eq!(s.xdp, xdp, "{opts:?}");
        assert!(s.kicks > 0);
    }
}

#[test]
fn frames_cross_to_another_port_through_its_umem() {
    let sent = frames(N, 29);
    let done = in_netns(&[("xa", "xb", 1), ("xc", "xd", 1)], || {
        let mut tap = Tap::new("xd");
        let ports = [copy_port("xa"), copy_port("xc")];
        let dp = Datapath::start(&ports, &Options::default(), |_| {
            |batch: &mut Batch<'_>| {
                let to = 1 - batch.in_port();
                batch.output_all(to);
            }
        })
        .unwrap();
        send_all(&dp, "xb", &sent);
        let out = tap.collect(N);
        (dp.stop().unwrap(), out)
    });
    let Some((report, out)) = done else { return };
    let sent: Vec<Vec<u8>> = sent.iter().map(|f| tap_view(f)).collect();
    assert!(out == sent, "{} frames, first wrong {:?}", out.len(), first_diff(&out, &sent));
    let (a, c) = (&report.ports[0], &report.ports[1]);
    assert_eq!((a.rx_packets, a.tx_packets, a.drop_pipeline), (N as u64, 0, 0));
    assert_eq!((c.rx_packets, c.tx_packets, c.tx_completed), (0, N as u64, N as u64));
    assert_eq!((c.drop_no_frame, c.drop_tx_full, c.drop_too_long), (0, 0, 0));
}

/// A program that redirects untagged IPv4/UDP to the socket of its queue and passes the rest,
/// written in sift-ebpf's assembly; map 0 is the `XSKMAP`.
fn udp_only() -> CustomProgram {
    let text = "
        mov %r6, %r1
        ldxw %r2, [%r1+0]
        ldxw %r3, [%r1+4]
        mov %r4, %r2
        add %r4, 34
        jgt %r4, %r3, pass
        ldxh %r5, [%r2+12]
        jne %r5, 0x8, pass
        ldxb %r5, [%r2+23]
        jne %r5, 17, pass
        ldxw %r2, [%r6+16]
        lddw %r1, map_fd(0)
        mov %r3, 2
        call 51
        exit
    pass:
        mov %r0, 2
        exit
    ";
    let insns = sift_ebpf::asm::assemble(text).unwrap();
    CustomProgram {
        insns: sift_ebpf::encode_program(&insns),
        maps: vec![xskmap_spec("udp_socks", 1)],
        xskmap: "udp_socks".into(),
    }
}

#[test]
fn a_callers_program_redirects_only_what_it_matches() {
    let sent = frames(N, 31);
    let (udp, other): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        sent.iter().cloned().partition(|f| is_ipv4_udp(f));
    assert!(udp.len() > 50 && other.len() > 50, "a mix: {} UDP", udp.len());
    let done = in_netns(&[("xa", "xb", 1)], || {
        let seen = Seen::default();
        let mut stack = Tap::new("xa");
        let port =
            PortConfig { program: sift_xdp::XdpProgram::Custom(udp_only()), ..copy_port("xa") };
        let dp = Datapath::start(&[port], &Options::default(), recorder(&seen, false)).unwrap();
        let sender = Sender::new("xb");
        for f in &sent {
            sender.send(f);
        }
        let passed = stack.collect(other.len());
        assert!(wait_until(|| dp.stats()[0].rx_packets >= udp.len() as u64));
        std::thread::sleep(Duration::from_millis(50));
        let report = dp.stop().unwrap();
        let got = seen.lock().unwrap().clone();
        (report, got, passed)
    });
    let Some((report, got, passed)) = done else { return };
    let other: Vec<Vec<u8>> = other.iter().map(|f| tap_view(f)).collect();
    assert!(
        got == udp,
        "{} of {} UDP frames, first wrong {:?}",
        got.len(),
        udp.len(),
        first_diff(&got, &udp)
    );
    assert!(
        passed == other,
        "{} of {} passed, first wrong {:?}",
        passed.len(),
        other.len(),
        first_diff(&passed, &other)
    );
    assert_eq!(report.ports[0].rx_packets, udp.len() as u64);
}

#[test]
fn stopping_under_traffic_loses_nothing_counted() {
    let sent = frames(200, 37);
    let done = in_netns(&[("xa", "xb", 1)], || {
        let seen = Arc::new(AtomicU64::new(0));
        let counted = seen.clone();
        let mut tap = Tap::new("xb");
        let opts = Options { kick: Kick::Waiting(512), ..Options::default() };
        let dp = Datapath::start(&[copy_port("xa")], &opts, move |_| {
            let counted = counted.clone();
            move |batch: &mut Batch<'_>| {
                let age = batch.received().elapsed().expect("received in the past");
                assert!(age < Duration::from_secs(1), "stamped when received: {age:?} ago");
                counted.fetch_add(batch.len() as u64, Ordering::Relaxed);
                batch.output_all(batch.in_port());
            }
        })
        .unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let report = std::thread::scope(|s| {
            let sending = {
                let stop = stop.clone();
                let sent = &sent;
                s.spawn(move || {
                    let sender = Sender::new("xb");
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) && n < 2_000_000 {
                        sender.send(&sent[n as usize % sent.len()]);
                        n += 1;
                    }
                    n
                })
            };
            assert!(wait_until(|| dp.stats()[0].rx_packets > 5_000), "traffic flows");
            let report = dp.stop().unwrap();
            stop.store(true, Ordering::Relaxed);
            assert!(
                sending.join().unwrap() > report.ports[0].rx_packets,
                "still sending when stopped"
            );
            report
        });
        let back = tap.collect(report.ports[0].tx_completed as usize).len();
        (report, seen.load(Ordering::Relaxed), back)
    });
    let Some((report, seen, back)) = done else { return };
    let s = &report.ports[0];
    assert_eq!(seen, s.rx_packets, "every frame counted went through the pipeline");
    assert_eq!(s.tx_packets + s.drop_tx_full, s.rx_packets, "{s:?}");
    assert_eq!(s.tx_completed, s.tx_packets, "every frame put on TX was sent: {s:?}");
    assert_eq!(back as u64, s.tx_completed, "and arrived");
}

#[test]
fn every_queue_has_its_thread_and_nothing_is_lost_between_them() {
    let sent = frames(N, 41);
    let done = in_netns(&[("xa", "xb", 2)], || {
        let seen = Seen::default();
        let dp = Datapath::start(&[copy_port("xa")], &Options::default(), recorder(&seen, false))
            .unwrap();
        assert_eq!(dp.ports()[0].queues, [0, 1]);
        send_all(&dp, "xb", &sent);
        let report = dp.stop().unwrap();
        let mut got = seen.lock().unwrap().clone();
        got.sort();
        (report, got)
    });
    let Some((report, got)) = done else { return };
    let mut want = sent.clone();
    want.sort();
    assert!(got == want, "{} frames", got.len());
    assert_eq!(report.threads.iter().map(|t| t.queue).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(report.ports[0].rx_packets, N as u64);
}

#[test]
fn bad_requests_are_refused_naming_the_cause() {
    let done = in_netns(&[("xa", "xb", 1)], || {
        let start = |port: PortConfig, opts: Options| {
            Datapath::start(&[port], &opts, |_| |_: &mut Batch<'_>| {}).map(|_| ()).unwrap_err()
        };
        let d = Options::default();
        let e = start(copy_port("nope0"), d);
        assert!(matches!(&e, Error::UnknownInterface { iface } if iface == "nope0"), "{e}");
        assert_eq!(e.to_string(), "nope0: no such interface");
        let e = start(PortConfig { queues: Some(vec![0, 3]), ..copy_port("xa") }, d);
        assert!(matches!(e, Error::QueueOutOfRange { queue: 3, queues: 1, .. }), "{e}");
        assert!(e.to_string().contains("queue 3 out of range"), "{e}");
        let mut p = copy_port("xa");
        p.rings.fill = 1000;
        let e = start(p, d);
        assert!(matches!(e, Error::RingSize { ring: "FILL", size: 1000, .. }), "{e}");
        let e = start(PortConfig { bind: BindMode::ZeroCopy, ..copy_port("xa") }, d);
        assert!(
            matches!(&e, Error::ZeroCopyUnsupported { iface, queue: 0 } if iface == "xa"),
            "{e}"
        );
        assert!(e.to_string().contains("zero-copy"), "{e}");
        let e = start(copy_port("xa"), Options { batch: 0, ..d });
        assert!(matches!(&e, Error::Config { what } if what.contains("batch size 0")), "{e}");
        let e = start(PortConfig { frames: 100, ..copy_port("xa") }, d);
        assert!(matches!(&e, Error::Config { what } if what.contains("100 frames")), "{e}");
        let e = start(PortConfig { frame_size: 3000, ..copy_port("xa") }, d);
        assert!(matches!(&e, Error::Config { what } if what.contains("frame size 3000")), "{e}");
        let mut prog = udp_only();
        prog.xskmap = "xsks".into();
        let e =
            start(PortConfig { program: sift_xdp::XdpProgram::Custom(prog), ..copy_port("xa") }, d);
        assert!(
            matches!(&e, Error::XskMap { what, .. } if what.contains("no map named \"xsks\"")),
            "{e}"
        );
        let mut prog = udp_only();
        prog.maps[0].map_type = sift_ebpf::MapType::Array;
        let e =
            start(PortConfig { program: sift_xdp::XdpProgram::Custom(prog), ..copy_port("xa") }, d);
        assert!(matches!(&e, Error::XskMap { what, .. } if what.contains("not an XSKMAP")), "{e}");
        // Auto falls back to copy on veth and says so; a second datapath cannot take the
        // interface while the first holds it.
        let dp = Datapath::start(&[PortConfig::new("xa")], &d, |_| |_: &mut Batch<'_>| {}).unwrap();
        assert_eq!(dp.ports()[0].mode, Bound::Copy);
        let e = start(copy_port("xa"), d);
        assert!(e.to_string().starts_with("xa"), "{e}");
        dp.stop().unwrap();
        // Once stopped, the interface is free again.
        let dp = Datapath::start(&[copy_port("xa")], &d, |_| |_: &mut Batch<'_>| {}).unwrap();
        dp.stop().unwrap();
    });
    let _ = done;
}

#[test]
fn the_baselines_drop_and_forward_every_frame() {
    let sent = frames(N, 43);
    let done = in_netns(&[("xa", "xb", 1)], || {
        let run = |baseline| {
            let mut tap = Tap::new("xb");
            let opts = Options { baseline: Some(baseline), ..Options::default() };
            let dp = Datapath::start(&[copy_port("xa")], &opts, |_| {
                |_: &mut Batch<'_>| panic!("the baseline runs no pipeline")
            })
            .unwrap();
            send_all(&dp, "xb", &sent);
            let back = tap.collect(if baseline == Baseline::L2fwd { N } else { 0 });
            (dp.stop().unwrap(), back)
        };
        (run(Baseline::RxDrop), run(Baseline::L2fwd))
    });
    let Some(((drop, none), (fwd, back))) = done else { return };
    let d = &drop.ports[0];
    assert_eq!(
        (d.rx_packets, d.rx_bytes, d.tx_packets, d.drop_pipeline),
        (N as u64, bytes(&sent), 0, 0)
    );
    assert!(none.is_empty(), "{} frames came back", none.len());
    let f = &fwd.ports[0];
    assert_eq!(
        (f.rx_packets, f.tx_packets, f.tx_completed, f.tx_bytes),
        (N as u64, N as u64, N as u64, bytes(&sent))
    );
    let want: Vec<Vec<u8>> = sent.iter().map(|f| tap_view(&swapped(f))).collect();
    assert!(back == want, "{} back, first wrong {:?}", back.len(), first_diff(&back, &want));
}
