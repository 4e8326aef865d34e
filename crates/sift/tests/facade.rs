//! The facade through its public API only, as an embedder uses it: the parallel runner gives
//! one thread's output on any number of threads (also at damage), `Capture` filters and saves
//! like the sequential parts it is made of, inputs merge by time, writers keep link types
//! apart, and `bench`/`diff` return the engines' figures and verdicts as data. Batches (of a
//! source, a filter, a capture, the parallel runner) hold what one packet at a time gives.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sift::filter::Filter;
use sift::input::Source;
use sift::output::{OutputError, Writer};
use sift::parallel::{self, ParallelError};
use sift_pcap::{Interface, LinkType, Packet, PcapWriter, Precision, Timestamp, TsResolution};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples").join(name)
}

/// A generated Ethernet capture of `count` packets (seed `seed`) at `path`.
fn generate(path: &Path, count: u64, seed: u64) {
    let config = sift_gen::Config { truncate: 0.05, ..sift_gen::Config::default() };
    let mut generator = sift_gen::Generator::new(seed, config);
    let link_type = generator.link_type();
    let file = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::new(file, link_type, 0, 262_144, Precision::Micro).unwrap();
    let mut frame = Vec::new();
    for _ in 0..count {
        let meta = generator.next_frame(&mut frame);
        w.write(Timestamp::new(meta.ts_sec, meta.ts_nsec), meta.wire_len, &frame).unwrap();
    }
    w.finish().unwrap();
}

/// The large capture (three chunks of the parallel runner), made once per test run.
fn big_capture() -> &'static Path {
    static BIG: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, path) = BIG.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.pcap");
        generate(&path, 45_000, 21);
        assert!(std::fs::metadata(&path).unwrap().len() > 2 * parallel::CHUNK_BYTES);
        (dir, path)
    });
    path
}

/// What filtering a capture gave.
struct Filtered {
    /// The filtered pcap copy.
    bytes: Vec<u8>,
    /// Every kept packet's (offset, wire length), in order.
    kept: Vec<(u64, u32)>,
    /// The error that ended the read, if any.
    error: Option<String>,
}

/// What the sequential parts make of `path` with `expr`.
fn sequential(path: &Path, expr: &str) -> Filtered {
    let mut source = Source::open(&[path]).unwrap();
    let mut filter = Filter::new(expr);
    let first = source.interfaces()[0].clone();
    let mut writer = Writer::pcap(Vec::new(), &first, Precision::Micro).unwrap();
    let mut kept = Vec::new();
    let error = loop {
        let (p, ifaces) = match source.next_packet() {
            Ok(Some(next)) => next,
            Ok(None) => break None,
            Err(e) => break Some(std::error::Error::source(&e).unwrap().to_string()),
        };
        if filter.accepts(&p, &ifaces[p.interface as usize]).unwrap() {
            writer.write(&p, ifaces).unwrap();
            kept.push((p.offset, p.wire_len));
        }
    };
    Filtered { bytes: writer.finish().unwrap(), kept, error }
}

/// What the parallel runner makes of it on `threads` threads (copy, for_each and count must
/// agree), and how many packets it read.
fn in_parallel(path: &Path, expr: &str, threads: usize) -> (Filtered, u64) {
    let source = Source::open(&[path]).unwrap();
    let file = source.pcap_bytes().expect("a mapped pcap file");
    let iface = source.interfaces()[0].clone();
    let mut filter = Filter::new(expr);
    let compiled = filter.prepare(&iface).unwrap();
    let mut writer = Writer::pcap(Vec::new(), &iface, Precision::Micro).unwrap();
    let pcap = writer.pcap_writer().unwrap();
    let (copied, copy_result) = parallel::copy(file, threads, Some(compiled), pcap, |_, _| {});
    let mut kept = Vec::new();
    let (_, each_result) = parallel::for_each(
        file,
        threads,
        Some(compiled),
        iface.link_type,
        |p: &Packet<'_>| {
            kept.push((p.offset, p.wire_len));
            Ok(())
        },
        |_, _| {},
    );
    let (counted, count_result) = parallel::count(file, threads, Some(compiled), |_, _| {});
    assert_eq!((copied.read, copied.kept), (counted.read, counted.kept));
    assert_eq!(kept.len() as u64, counted.kept);
    let errors: Vec<Option<String>> = [copy_result, each_result, count_result]
        .into_iter()
        .map(|r| r.err().map(|e| e.to_string()))
        .collect();
    assert!(errors.iter().all(|e| *e == errors[0]), "{errors:?}");
    let error = errors[0].clone();
    (Filtered { bytes: writer.finish().unwrap(), kept, error }, counted.read)
}

#[test]
fn threads_change_nothing() {
    let big = big_capture();
    for expr in ["tcp", "udp and port 53", "ip6 or arp"] {
        let one = sequential(big, expr);
        assert_eq!(one.error, None);
        assert!(!one.kept.is_empty(), "{expr}");
        for threads in [1, 2, 3] {
            let (many, read) = in_parallel(big, expr, threads);
            assert_eq!(many.error, None, "{expr}, {threads} threads");
            assert_eq!(read, 45_000);
            assert_eq!(many.kept, one.kept, "{expr}, {threads} threads");
            assert!(many.bytes == one.bytes, "{expr}, {threads} threads: the copies differ");
        }
    }
}

#[test]
fn damage_part_way_ends_where_the_sequential_read_ends() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.pcap");
    let mut bytes = std::fs::read(big_capture()).unwrap();
    // A record in the middle of the second chunk claims 4 GiB: damage with a third chunk after.
    let mut at = 24;
    while at < (parallel::CHUNK_BYTES * 3 / 2) as usize {
        at += 16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    bytes[at + 8..at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&cut, &bytes).unwrap();
    let one = sequential(&cut, "tcp");
    assert!(one.error.is_some(), "the sequential read stops at the damage");
    for threads in [1, 2, 3] {
        let (many, _) = in_parallel(&cut, "tcp", threads);
        assert_eq!(many.error, one.error, "{threads} threads");
        assert_eq!(many.kept, one.kept, "{threads} threads");
        assert!(many.bytes == one.bytes, "{threads} threads: the copies differ");
    }
}

#[test]
fn an_encoding_failure_names_the_packet() {
    // Timestamps past 2106 do not fit a pcap record; the runner reports the first such kept
    // packet by its offset, after everything before it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ng.pcap");
    generate(&path, 10, 3);
    let source = Source::open(&[&path]).unwrap();
    let file = source.pcap_bytes().unwrap();
    let iface = source.interfaces()[0].clone();
    let mut writer = Writer::pcap(Vec::new(), &iface, Precision::Micro).unwrap();
    let keep = |_: &Packet<'_>| true;
    let encode = |p: &Packet<'_>, _: &mut parallel::Encoded| -> Result<(), OutputError> {
        Err(OutputError::Write(sift_pcap::WriteError::TooLong(p.data.len())))
    };
    let pcap = writer.pcap_writer().unwrap();
    let (totals, result) = parallel::run(file, 2, &keep, &encode, |out, _, _| {
        Ok(pcap.write_pieces(out.pieces(file.bytes()))?)
    });
    assert_eq!((totals.read, totals.kept), (1, 0));
    match result {
        Err(ParallelError::Encode { offset: 24, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn capture_saves_what_the_parts_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("web.pcap");
    let saved = sift::Capture::open(sample("http.pcap")).unwrap().filter("tcp").unwrap();
    let saved = saved.save(&out).unwrap();
    let Filtered { bytes, kept, .. } = sequential(&sample("http.pcap"), "tcp");
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    assert_eq!(saved.written, kept.len() as u64);
    // Iterating gives the same packets, copied.
    let capture = sift::Capture::open(sample("http.pcap")).unwrap().filter("tcp").unwrap();
    let offsets: Vec<(u64, u32)> =
        capture.map(|p| p.map(|p| (p.offset, p.wire_len)).unwrap()).collect();
    assert_eq!(offsets, kept);
    // A mistake is reported when the filter is set, with a caret under it.
    let err = sift::Capture::open(sample("http.pcap")).unwrap().filter("tcp port").unwrap_err();
    assert!(err.to_string().contains("^"), "{err}");
}

#[test]
fn inputs_merge_by_time_and_renumber_interfaces() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.pcap"), dir.path().join("b.pcap"));
    generate(&a, 200, 5);
    generate(&b, 300, 6);
    let mut source = Source::open(&[&a, &b]).unwrap();
    assert!(source.pcap_bytes().is_none(), "a merge is not one mapped file");
    assert!(source.describe().starts_with("reading from 2 files ("), "{}", source.describe());
    let mut last = Timestamp::default();
    let mut n = 0;
    while let Some((p, ifaces)) = source.next_packet().unwrap() {
        assert!(p.timestamp >= last, "packet {n} goes back in time");
        assert_eq!(ifaces.len(), 2, "one interface per input");
        last = p.timestamp;
        n += 1;
    }
    assert_eq!(n, 500);
    assert_eq!(source.progress().0, source.progress().1, "everything read");
}

#[test]
fn pcap_output_keeps_one_link_type_and_pcapng_describes_every_interface() {
    let ifaces = [
        Interface::new(LinkType::EN10MB, 65_535, TsResolution::MICRO),
        Interface::new(LinkType::RAW, 65_535, TsResolution::NANO),
    ];
    let packet = |interface: u32| Packet {
        timestamp: Timestamp::new(1, 2),
        wire_len: 4,
        data: &[0x45, 0, 0, 4],
        interface,
        link_type: ifaces[interface as usize].link_type,
        offset: 0,
    };
    let mut pcap = Writer::pcap(Vec::new(), &ifaces[0], Precision::Micro).unwrap();
    pcap.write(&packet(0), &ifaces).unwrap();
    match pcap.write(&packet(1), &ifaces) {
        Err(OutputError::LinkTypeMismatch { packet, output }) => {
            assert_eq!((packet, output), (LinkType::RAW, LinkType::EN10MB));
        }
        other => panic!("{other:?}"),
    }
    let mut ng = Writer::pcapng(Vec::new(), None).unwrap();
    ng.write(&packet(1), &ifaces).unwrap();
    let bytes = ng.finish().unwrap();
    let mut reader = sift_pcap::Reader::from_bytes(bytes).unwrap();
    let (p, back) = reader.next_with_interfaces().unwrap().unwrap();
    assert_eq!((p.interface, back.len()), (1, 2), "both interfaces described before the packet");
    assert_eq!(back[1].ts_resolution, TsResolution::NANO);
}

#[test]
fn bench_and_diff_return_figures_and_verdicts() {
    let packets = sift::bench::Packets::load(&sample("http.pcap")).unwrap();
    let bench = sift::bench::Bench::new(&packets, Duration::from_millis(1), false);
    let mut prepared = bench.prepare(sift::bench::Subject::Expression("tcp".into())).unwrap();
    use sift::bench::Engine;
    for engine in [Engine::Interp, Engine::Jit, Engine::InterpSingle, Engine::JitSingle] {
        match bench.run(engine, &mut prepared).unwrap() {
            sift::bench::Outcome::Timed(f) => {
                assert_eq!(f.accepted, 24);
                assert!(f.ns_per_packet > 0.0);
            }
            other => panic!("{engine:?}: {other:?}"),
        }
    }
    assert!(bench.floor() > 0.0);
    assert!(bench.floor_prefetched().unwrap() > 0.0);
    let mut engines = sift::diff::Engines::new(false);
    match engines.compare("tcp and not tcp", &packets).unwrap() {
        sift::diff::Comparison::Compared { engines, .. } => {
            assert!(!sift::diff::any_differs(&engines, packets.len()));
            let optimized = engines.iter().find(|e| e.name() == "optimized").unwrap();
            assert_eq!(optimized.run, sift::diff::Run::Optimized { instructions: None });
            assert_eq!(optimized.accepted(), 0);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        engines.compare("tcp port", &packets).unwrap(),
        sift::diff::Comparison::Refused(_)
    ));
}

/// A packet as the tests compare them: offset, wire length, interface, captured bytes.
type Seen = (u64, u32, u32, Vec<u8>);

/// Every packet of `inputs` read one by one, and the error that ended the read.
fn one_by_one(inputs: &[&Path]) -> (Vec<Seen>, Option<String>) {
    let mut source = Source::open(inputs).unwrap();
    let mut seen = Vec::new();
    loop {
        match source.next_packet() {
            Ok(Some((p, _))) => seen.push((p.offset, p.wire_len, p.interface, p.data.to_vec())),
            Ok(None) => return (seen, None),
            Err(e) => return (seen, Some(sift::error_line(&e))),
        }
    }
}

/// The same through [`Source::next_batch`] with batches of up to `max`, and the batches' sizes.
fn in_batches(inputs: &[&Path], max: usize) -> (Vec<Seen>, Option<String>, Vec<usize>) {
    let mut source = Source::open(inputs).unwrap();
    let (mut seen, mut sizes) = (Vec::new(), Vec::new());
    loop {
        match source.next_batch(max) {
            Ok(batch) if batch.is_empty() => return (seen, None, sizes),
            Ok(batch) => {
                sizes.push(batch.len());
                for p in batch.packets() {
                    assert!((p.interface as usize) < batch.interfaces().len());
                    seen.push((p.offset, p.wire_len, p.interface, p.data.to_vec()));
                }
            }
            Err(e) => return (seen, Some(sift::error_line(&e)), sizes),
        }
    }
}

/// `count` packets of link type `link` (seed `seed`) as pcap at `path`.
fn generate_link(path: &Path, link: sift_gen::Link, count: u64, seed: u64) {
    let config = sift_gen::Config { link, ..sift_gen::Config::default() };
    let mut generator = sift_gen::Generator::new(seed, config);
    let file = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::new(file, generator.link_type(), 0, 65_535, Precision::Micro).unwrap();
    let mut frame = Vec::new();
    for _ in 0..count {
        let meta = generator.next_frame(&mut frame);
        w.write(Timestamp::new(meta.ts_sec, meta.ts_nsec), meta.wire_len, &frame).unwrap();
    }
    w.finish().unwrap();
}

/// A pcapng file at `dir/mixed.pcapng` whose packets alternate, in runs, between an Ethernet
/// and a raw-IP interface (two captures merged by time).
fn mixed_pcapng(dir: &Path) -> PathBuf {
    let (eth, raw) = (dir.join("eth.pcap"), dir.join("raw.pcap"));
    generate_link(&eth, sift_gen::Link::Ethernet, 1_500, 3);
    generate_link(&raw, sift_gen::Link::Raw, 1_500, 4);
    let mut source = Source::open(&[&eth, &raw]).unwrap();
    let mut writer = Writer::pcapng(Vec::new(), None).unwrap();
    while let Some((p, ifaces)) = source.next_packet().unwrap() {
        writer.write(&p, ifaces).unwrap();
    }
    let path = dir.join("mixed.pcapng");
    std::fs::write(&path, writer.finish().unwrap()).unwrap();
    path
}

#[test]
fn batches_hold_what_one_by_one_reads() {
    let dir = tempfile::tempdir().unwrap();
    let big = big_capture();
    // Cut in the middle of a record (a truncated packet) and in a record header.
    let bytes = std::fs::read(big).unwrap();
    let (cut_data, cut_header) = (dir.path().join("cut1.pcap"), dir.path().join("cut2.pcap"));
    std::fs::write(&cut_data, &bytes[..bytes.len() / 3]).unwrap();
    let mut at = 24;
    while at < bytes.len() / 2 {
        at += 16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    std::fs::write(&cut_header, &bytes[..at + 7]).unwrap();
    let mixed = mixed_pcapng(dir.path());
    let (a, b) = (dir.path().join("a.pcap"), dir.path().join("b.pcap"));
    generate(&a, 200, 5);
    generate(&b, 300, 6);
    let cases: [(&str, Vec<&Path>, bool); 5] = [
        ("mapped pcap", vec![big], true),
        ("damaged in a packet", vec![&cut_data], true),
        ("damaged in a header", vec![&cut_header], true),
        ("mapped pcapng, two link types", vec![&mixed], true),
        ("merged", vec![&a, &b], false),
    ];
    for (what, inputs, whole) in &cases {
        let (want, want_error) = one_by_one(inputs);
        assert!(!want.is_empty(), "{what}");
        for max in [1, 7, 1024] {
            let (got, error, sizes) = in_batches(inputs, max);
            assert_eq!(error, want_error, "{what}, batches of {max}");
            assert_eq!(got.len(), want.len(), "{what}, batches of {max}");
            assert!(got == want, "{what}, batches of {max}: other packets");
            let largest = sizes.iter().copied().max().unwrap();
            let expected = if *whole { max.min(want.len()) } else { 1 };
            assert_eq!(largest, expected, "{what}, batches of {max}: {sizes:?}");
        }
        if what.starts_with("damaged") {
            assert!(want_error.is_some(), "{what}");
        }
    }
}

#[test]
fn a_stream_is_read_one_packet_per_batch() {
    let dir = tempfile::tempdir().unwrap();
    let (path, fifo) = (dir.path().join("in.pcap"), dir.path().join("fifo"));
    generate(&path, 300, 7);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let feed = |fifo: PathBuf, path: PathBuf| {
        std::thread::spawn(move || std::fs::write(fifo, std::fs::read(path).unwrap()).unwrap())
    };
    let writer = feed(fifo.clone(), path.clone());
    let (got, error, sizes) = in_batches(&[&fifo], 64);
    writer.join().unwrap();
    let (want, _) = one_by_one(&[&path]);
    assert_eq!(error, None);
    assert!(got == want, "the stream's packets differ");
    assert!(sizes.iter().all(|&n| n == 1), "{sizes:?}");
}

#[test]
fn filter_batches_give_each_link_type_its_program() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = mixed_pcapng(dir.path());
    for expr in ["tcp", "udp port 53 or icmp", "ip6"] {
        let mut one = Filter::new(expr);
        let mut source = Source::open(&[&mixed]).unwrap();
        let mut want = Vec::new();
        while let Some((p, ifaces)) = source.next_packet().unwrap() {
            want.push(one.prepare(&ifaces[p.interface as usize]).unwrap().run(p.data, p.wire_len));
        }
        assert!(want.contains(&0) && want.iter().any(|&v| v != 0), "{expr}");
        let mut batched = Filter::new(expr);
        let mut source = Source::open(&[&mixed]).unwrap();
        let (mut got, mut verdicts, mut mixed_batches) = (Vec::new(), Vec::new(), 0);
        loop {
            let batch = source.next_batch(256).unwrap();
            if batch.is_empty() {
                break;
            }
            let links = batch.packets().iter().map(|p| p.link_type);
            mixed_batches += usize::from(links.clone().any(|l| l != batch.packets()[0].link_type));
            batched.run_batch(batch.packets(), batch.interfaces(), &mut verdicts).unwrap();
            assert_eq!(verdicts.len(), batch.len());
            got.extend_from_slice(&verdicts);
        }
        assert!(mixed_batches > 0, "batches mixing both link types");
        assert_eq!(got, want, "{expr}");
    }
    // An expression the raw-IP link type refuses: the Ethernet packets before the first raw
    // one get their verdicts, then the error.
    let mut filter = Filter::new("ether host 1:2:3:4:5:6 or ip");
    let mut source = Source::open(&[&mixed]).unwrap();
    let batch = source.next_batch(1024).unwrap();
    let first_raw =
        batch.packets().iter().position(|p| p.link_type == LinkType::RAW).expect("a raw packet");
    let mut verdicts = Vec::new();
    let e = filter.run_batch(batch.packets(), batch.interfaces(), &mut verdicts).unwrap_err();
    assert!(e.to_string().contains("MAC address"), "{e}");
    assert_eq!(verdicts.len(), first_raw);
}

#[test]
fn capture_batches_keep_counts_and_resume_after_a_failing_function() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(big_capture()).unwrap();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() / 4]).unwrap();
    let one = sequential(&cut, "tcp");
    let error = one.error.clone().expect("the cut capture is damaged");
    // Iterating: the same packets, then the error.
    let capture = sift::Capture::open(&cut).unwrap().filter("tcp").unwrap();
    let mut kept = Vec::new();
    let mut failed = None;
    for p in capture {
        match p {
            Ok(p) => kept.push((p.offset, p.wire_len)),
            Err(e) => failed = Some(sift::error_line(&e)),
        }
    }
    assert_eq!(kept, one.kept);
    assert!(failed.unwrap().contains(&error));
    // A function failing on every 100th packet: the next call goes on with the next packet.
    let mut capture = sift::Capture::open(&cut).unwrap().filter("tcp").unwrap();
    let (mut kept, mut calls) = (Vec::new(), 0);
    let mut last_counts = (0, 0);
    let end = loop {
        calls += 1;
        let result = capture.for_each_kept(|p, _| -> Result<(), sift::Error> {
            kept.push((p.offset, p.wire_len));
            if kept.len() % 100 == 0 { Err(sift::Error::Input(bad_input())) } else { Ok(()) }
        });
        let counts = capture.counts();
        assert_eq!(counts.1, kept.len() as u64, "counted as handed out");
        assert!(counts.0 >= last_counts.0);
        last_counts = counts;
        match result {
            Err(sift::Error::Input(sift::input::InputError::NoMatch { .. })) => continue,
            other => break other,
        }
    };
    assert!(calls > 5, "{calls}");
    assert_eq!(kept, one.kept);
    assert!(sift::error_line(&end.unwrap_err()).contains(&error));
    // Packets read: as one by one, up to the damage.
    let (all, _) = one_by_one(&[&cut]);
    assert_eq!(capture.counts(), (all.len() as u64, one.kept.len() as u64));
}

/// An error to return from a function given to `for_each_kept`.
fn bad_input() -> sift::input::InputError {
    sift::input::InputError::NoMatch { pattern: "stop".into() }
}

#[test]
fn an_encoding_failure_in_a_later_batch_comes_after_the_packets_before_it() {
    let source = Source::open(&[big_capture()]).unwrap();
    let file = source.pcap_bytes().unwrap();
    // The 1,500th packet: in the second batch of the first chunk.
    let (all, _) = one_by_one(&[big_capture()]);
    let bad = all[1_499].0;
    let encode = |p: &Packet<'_>, out: &mut parallel::Encoded| -> Result<(), OutputError> {
        if p.offset == bad {
            return Err(OutputError::Write(sift_pcap::WriteError::TooLong(p.data.len())));
        }
        out.buf.extend_from_slice(&p.offset.to_le_bytes());
        Ok(())
    };
    let keep = |_: &Packet<'_>| true;
    let mut offsets = Vec::new();
    let (totals, result) = parallel::run(file, 2, &keep, &encode, |out, _, _| {
        offsets.extend(out.buf.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())));
        Ok(())
    });
    assert_eq!((totals.read, totals.kept), (1_500, 1_499));
    assert!(matches!(result, Err(ParallelError::Encode { offset, .. }) if offset == bad));
    let want: Vec<u64> = all[..1_499].iter().map(|p| p.0).collect();
    assert_eq!(offsets, want);
}

/// `protochain`: programs for files get libpcap's loop (which sift's engines run), programs for
/// the kernel get the walk unrolled within its 4,096 instructions; `diff` and `bench` give the
/// kernel engines the unrolled form, and every engine agrees.
#[test]
fn protochain_loops_for_files_and_is_unrolled_for_the_kernel() {
    use sift::filter::{Target, compile};
    let resolver = sift_filter::SystemResolver::new();
    let expr = "ip6 protochain 58";
    let file = Target::file(LinkType::EN10MB, 65535);
    let looped = compile(expr, &file, true, &resolver).unwrap();
    assert!(!looped.is_acyclic());
    assert_eq!(looped.insns().len(), 36);
    for target in [file.for_kernel(), Target::live(LinkType::EN10MB, 65535)] {
        let unrolled = compile(expr, &target, true, &resolver).unwrap();
        assert!(unrolled.is_acyclic(), "{target:?}");
        assert!((1000..=4096).contains(&unrolled.insns().len()), "{target:?}");
    }

    let packets = sift::bench::Packets::load(&sample("ping.pcap")).unwrap();
    let mut engines = sift::diff::Engines::new(false);
    match engines.compare(expr, &packets).unwrap() {
        sift::diff::Comparison::Compared { engines, unavailable, .. } => {
            assert!(!sift::diff::any_differs(&engines, packets.len()));
            assert!(engines.iter().all(|e| e.accepted() == 9), "{engines:?}");
            // The kernel engines ran the unrolled form, or say why they could not (never that
            // the program loops).
            for (name, why) in &unavailable {
                assert!(!why.contains("loops are not translated"), "{name}: {why}");
            }
        }
        other => panic!("{other:?}"),
    }
    let bench = sift::bench::Bench::new(&packets, Duration::from_millis(1), false);
    let mut prepared = bench.prepare(sift::bench::Subject::Expression(expr.into())).unwrap();
    use sift::bench::{Engine, Outcome};
    for engine in [Engine::Interp, Engine::Jit, Engine::Kernel] {
        match bench.run(engine, &mut prepared).unwrap() {
            Outcome::Timed(f) => assert_eq!(f.accepted, 9, "{engine:?}"),
            Outcome::Unavailable(why) if engine == Engine::Kernel => {
                assert!(!why.contains("loops are not translated"), "{why}");
            }
            other => panic!("{engine:?}: {other:?}"),
        }
    }
}
