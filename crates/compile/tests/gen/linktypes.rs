//! Every link type against the system libpcap compiling for a capture file, as tcpdump does
//! (`Libpcap::compile_savefile`: `pcap_compile` on a savefile's `pcap_t`, in the file's byte
//! order). For each link type and expression: both refuse, or sift's unoptimized program is
//! byte-identical to libpcap's unoptimized one, and sift's unoptimized and optimized programs
//! give libpcap's verdict on every frame: frames re-wrapped for the link type by sift-filetests
//! (scrambled, cut short and random ones too) and the tcpdump corpus's captures of that link
//! type. NULL, LOOP and ENC are compiled for little- and big-endian files, with their frames'
//! address families in that byte order.

use sift_compile::pipeline::{self, ByteOrder, LinkType, Mode, Options};
use sift_filetests::PacketSet;
use sift_filter::SystemResolver;
use sift_libpcap::Libpcap;

/// Link types beyond the original 28: gencode's models (ARCnet, Frame Relay, SunATM, ATM LLC,
/// ipnet, Juniper, SS7…) and link types libpcap offers only `len`/`link[…]` on.
const LINKS: &[&str] = &[
    "ARCNET",
    "ARCNET_LINUX",
    "FRELAY",
    "MFR",
    "SUNATM",
    "ATM_RFC1483",
    "ATM_CLIP",
    "IPNET",
    "LTALK",
    "SLIP_BSDOS",
    "PPP_BSDOS",
    "SYMANTEC_FIREWALL",
    "APPLE_IP_OVER_IEEE1394",
    "BACNET_MS_TP",
    "JUNIPER_MLPPP",
    "JUNIPER_MLFR",
    "JUNIPER_ES",
    "JUNIPER_GGSN",
    "JUNIPER_MFR",
    "JUNIPER_ATM2",
    "JUNIPER_SERVICES",
    "JUNIPER_ATM1",
    "JUNIPER_MONITOR",
    "JUNIPER_PPPOE",
    "JUNIPER_PPPOE_ATM",
    "JUNIPER_ETHER",
    "JUNIPER_PPP",
    "JUNIPER_FRELAY",
    "JUNIPER_CHDLC",
    "JUNIPER_VP",
    "JUNIPER_ISM",
    "JUNIPER_ST",
    "JUNIPER_VS",
    "JUNIPER_SRX_E2E",
    "JUNIPER_FIBRECHANNEL",
    "JUNIPER_ATM_CEMIC",
    "MTP2",
    "MTP2_WITH_PHDR",
    "ERF",
    "PFSYNC",
    "NFLOG",
    "PKTAP",
    "IPOIB",
    "VSOCK",
    "IEEE802_15_4",
    "IEEE802_15_4_NOFCS",
    "DBUS",
    "DSA_TAG_BRCM_PREPEND",
    "DSA_TAG_EDSA",
];

/// Link types the table has no name for, by LINKTYPE number (USER2 and USER13 captures are in
/// the tcpdump corpus).
const NUMBERED: &[u16] = &[149, 160];

/// The survey's expressions (`tcpdump -O -r C -w - EXPR` over the corpus) and the primitives
/// particular to these link types.
const EXPRS: &[&str] = &[
    "ip",
    "ip6",
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "arp",
    "rarp",
    "sctp",
    "port 53",
    "port 80",
    "tcp port 443",
    "udp port 53",
    "portrange 1-1024",
    "host 10.0.0.1",
    "net 192.168.0.0/16",
    "src net 10.0.0.0/8",
    "dst host 192.168.1.1",
    "ip6 host 2001:db8::1",
    "greater 1000",
    "less 64",
    "len > 100",
    "len <= 60",
    "len - 4 > link[2:2] * 2",
    "vlan",
    "mpls",
    "pppoes",
    "pppoes and ip",
    "pppoed",
    "ether broadcast",
    "ether multicast",
    "broadcast",
    "multicast",
    "ip multicast",
    "tcp[tcpflags] & tcp-syn != 0",
    "ip[8] < 64",
    "ip6 protochain 6",
    "ip proto 47",
    "ether proto 0x88cc",
    "link proto 0x800",
    "link[0] = 0xff",
    "link[3] & 1 = 1",
    "byte 2 = 0xcc",
    "ip and tcp",
    "not ip",
    "udp and not port 53",
    "icmp[icmptype] == icmp-echo",
    "ip6 and tcp",
    "ip or ip6",
    "tcp or udp or icmp",
    "llc",
    "llc u",
    "stp",
    "iso",
    "clnp",
    "isis",
    "l1",
    "iso proto 5",
    "atalk",
    "aarp",
    "ipx",
    "decnet",
    "decnet host 1.2",
    "netbeui",
    "inbound",
    "outbound",
    "link host $c0",
    "link src host $0",
    "link dst $7e",
    "link src and dst host $1",
    "link host not $12",
    "link broadcast",
    "lane",
    "lane and ip",
    "lane and ether host 1:2:3:4:5:6",
    "lane and ether multicast",
    "lane and vlan and tcp",
    "lane and llc",
    "vpi 0",
    "vpi != 1",
    "vci < 32",
    "vci (5 or 16)",
    "oam",
    "oamf4sc",
    "metac",
    "bcc",
    "sc",
    "ilmic",
    "connectmsg",
    "metaconnect",
    "fisu",
    "lssu",
    "msu",
    "hfisu",
    "hlssu",
    "hmsu",
    "sio 3",
    "opc 2",
    "dpc != 1",
    "dpc <= 2",
    "sls (1 or 9)",
    "hsio > 1",
    "hopc 5",
    "hdpc 1",
    "hsls < 3",
];

/// Expressions for the loopback link types, whose address families depend on the file.
const LOOPBACK_EXPRS: &[&str] = &[
    "ip",
    "ip6",
    "tcp",
    "ip6 and udp port 53",
    "host 10.0.0.1 or host ::1",
    "not ip6",
    "icmp6[0] = 128",
    "ip6 protochain 17",
    "link proto 2",
    "greater 100",
];

/// What one link type's run found.
#[derive(Default)]
struct Tally {
    compiled: usize,
    identical: usize,
    refused: usize,
    runs: usize,
    wrong: Vec<String>,
}

/// Compiles every expression for `link` with sift and with libpcap (as for a file in `order`)
/// and compares listings and verdicts on `frames`.
fn compare(
    pcap: &Libpcap,
    link: LinkType,
    order: ByteOrder,
    exprs: &[&str],
    frames: &[(Vec<u8>, u32)],
) -> Tally {
    let resolver = SystemResolver::new();
    let snaplen = 262_144;
    let mut t = Tally::default();
    let big = order == ByteOrder::Big;
    for &expr in exprs {
        let opts = Options::new(link, &resolver)
            .savefile(Some(order))
            .optimize(false)
            .mode(Mode::LibpcapLoops);
        let theirs = pcap.compile_savefile(link, snaplen, big, expr, false, 0xffff_ffff);
        let ours = pipeline::compile(expr, &opts);
        let (theirs, ours) = match (theirs, ours) {
            (Err(_), Err(_)) => {
                t.refused += 1;
                continue;
            }
            (Ok(_), Err(e)) => {
                t.wrong.push(format!("{link} {expr:?}: sift refuses ({e}), libpcap compiles"));
                continue;
            }
            (Err(e), Ok(_)) => {
                t.wrong.push(format!("{link} {expr:?}: libpcap refuses ({e}), sift compiles"));
                continue;
            }
            (Ok(theirs), Ok(ours)) => (theirs, ours),
        };
        t.compiled += 1;
        // protochain too: the loop form is libpcap's loop (`protochain.rs` runs both forms).
        if theirs == ours.program.insns() {
            t.identical += 1;
        }
        let optimized = pipeline::compile(expr, &opts.optimize(true));
        let Ok(reference) = pcap.prepare(&theirs) else {
            // protochain's backward jumps: libpcap's own program may loop; sift's is checked
            // against it by `protochain.rs`.
            continue;
        };
        let unopt = sift_vm::Interpreter::new(&ours.program);
        let opt = optimized.as_ref().ok().map(|c| sift_vm::Interpreter::new(&c.program));
        for (data, wire) in frames {
            let want = reference.run(data, *wire);
            let got = unopt.run(data, *wire);
            // The optimizer may prove that nothing matches ("rejects all packets").
            let got_opt = match (&opt, &optimized) {
                (Some(o), _) => o.run(data, *wire),
                (None, Err(e)) if e.is_rejects_all() => 0,
                (None, Err(e)) => {
                    t.wrong.push(format!("{link} {expr:?}: the optimized compile fails: {e}"));
                    break;
                }
                (None, Ok(_)) => unreachable!("an interpreter exists for every program"),
            };
            t.runs += 1;
            if got != want || got_opt != want {
                t.wrong.push(format!(
                    "{link} {expr:?} ({order:?} file) on {:02x?} (wire {wire}): libpcap {want}, \
                     sift {got}, sift optimized {got_opt}",
                    &data[..data.len().min(48)]
                ));
                break;
            }
        }
    }
    t
}

/// The frames of a generated set, plus the tcpdump corpus's captures of the link type.
fn frames(link: LinkType, seed: u64) -> (Vec<(Vec<u8>, u32)>, usize) {
    let set = PacketSet::generate(link, seed, 300, 60);
    let mut frames: Vec<(Vec<u8>, u32)> =
        set.frames.iter().map(|f| (f.data.clone(), f.wire_len())).collect();
    let mut from_corpus = 0;
    let dir = sift_testkit::shared_dir().join("corpus/tcpdump/tests");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let Ok(packets) = sift_filetests::packets::read_capture(&path) else { continue };
            for (lt, data, wire) in packets {
                if lt == u32::from(link.number()) {
                    frames.push((data, wire));
                    from_corpus += 1;
                }
            }
        }
    }
    (frames, from_corpus)
}

#[test]
fn every_link_type_as_tcpdump_compiles_for_a_file() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let links = LINKS
        .iter()
        .map(|n| LinkType::from_name(n).expect("a link type name"))
        .chain(NUMBERED.iter().map(|&n| LinkType::new(n)));
    let (mut compiled, mut identical, mut corpus_frames) = (0, 0, 0);
    let mut wrong = Vec::new();
    for (i, link) in links.enumerate() {
        let (frames, from_corpus) = frames(link, 0x11ce + i as u64);
        corpus_frames += from_corpus;
        let t = compare(&pcap, link, ByteOrder::Little, EXPRS, &frames);
        println!(
            "{link:>24}: {:>3} compiled ({:>3} identical listings), {:>3} refused by both, \
             {} frames ({from_corpus} from the tcpdump corpus), {} runs, {} wrong",
            t.compiled,
            t.identical,
            t.refused,
            frames.len(),
            t.runs,
            t.wrong.len()
        );
        compiled += t.compiled;
        identical += t.identical;
        wrong.extend(t.wrong);
    }
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
    assert_eq!(identical, compiled, "every listing is libpcap's");
    assert!(compiled >= 1500, "only {compiled} compiled");
    assert!(corpus_frames >= 200, "only {corpus_frames} frames from the tcpdump corpus");
}

/// DLT_NULL and DLT_ENC carry the address family in the byte order of the system that wrote
/// the file; DLT_LOOP in network order. Frames of a big-endian file have theirs swapped.
#[test]
fn loopback_link_types_follow_the_file_byte_order() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let mut wrong = Vec::new();
    let (mut compiled, mut identical) = (0, 0);
    for (i, name) in ["NULL", "LOOP", "ENC"].into_iter().enumerate() {
        let link = LinkType::from_name(name).unwrap();
        let (little, _) = frames(link, 0x100b + i as u64);
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let swap = order == ByteOrder::Big && name != "LOOP";
            let frames: Vec<_> = little
                .iter()
                .map(|(d, w)| {
                    let mut d = d.clone();
                    if swap && d.len() >= 4 {
                        d[..4].reverse();
                    }
                    (d, *w)
                })
                .collect();
            let t = compare(&pcap, link, order, LOOPBACK_EXPRS, &frames);
            println!(
                "{name:>4} {order:?}: {} compiled ({} identical), {} runs, {} wrong",
                t.compiled,
                t.identical,
                t.runs,
                t.wrong.len()
            );
            compiled += t.compiled;
            identical += t.identical;
            wrong.extend(t.wrong);
        }
    }
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
    assert_eq!(identical, compiled);
    assert!(compiled >= 50, "only {compiled} compiled");
}

/// The example: `ip6` on a BSD loopback capture (quic_vn.pcap, written on macOS with
/// AF_INET6 30) matches what tcpdump matches; a big-endian copy of the file matches as many.
#[test]
fn ipv6_on_a_bsd_loopback_capture() {
    let path = sift_testkit::shared_dir().join("corpus/tcpdump/tests/quic_vn.pcap");
    let Some(packets) = sift_testkit::oracle(
        "tcpdump corpus",
        sift_filetests::packets::read_capture(&path).map_err(|e| e.to_string()),
    ) else {
        return;
    };
    let resolver = SystemResolver::new();
    let count = |order: ByteOrder, swap: bool| {
        let opts = Options::new(LinkType::NULL, &resolver).savefile(Some(order));
        let prog = pipeline::compile("ip6", &opts).unwrap().program;
        let vm = sift_vm::Interpreter::new(&prog);
        packets
            .iter()
            .filter(|(_, d, w)| {
                let mut d = d.clone();
                if swap {
                    d[..4].reverse();
                }
                vm.run(&d, *w) != 0
            })
            .count()
    };
    // tcpdump -r quic_vn.pcap ip6 | wc -l
    assert_eq!(count(ByteOrder::Little, false), 25);
    assert_eq!(count(ByteOrder::Big, true), 25);
    assert_eq!(count(ByteOrder::Big, false), 0, "the address family read in the wrong order");
}

/// Every golden listing of `tests/data/gen/linktypes.txt` is libpcap's (`pcap_open_dead` for a
/// case without a file, as `tcpdump -O -d -y`; a savefile handle for one with a file).
#[test]
fn golden_link_type_listings_are_libpcaps() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let resolver = sift_filter::TableResolver::well_known();
    let mut compared = 0;
    for &(name, expr) in crate::golden::LINK_TYPE_CASES {
        let (link, file) = crate::golden::link_and_file(name);
        let opts =
            Options::new(link, &resolver).optimize(false).savefile(file).mode(Mode::LibpcapLoops);
        let theirs = match file {
            None => pcap.compile(link, 262_144, expr, false, 0xffff_ffff),
            Some(order) => {
                let big = order == ByteOrder::Big;
                pcap.compile_savefile(link, 262_144, big, expr, false, 0xffff_ffff)
            }
        };
        match (pipeline::compile(expr, &opts), theirs) {
            (Ok(ours), Ok(theirs)) => {
                assert_eq!(ours.program.insns(), &theirs[..], "{name}: {expr}");
                compared += 1;
            }
            (Err(_), Err(_)) => {}
            (ours, theirs) => panic!("{name}: {expr}: sift {ours:?}, libpcap {theirs:?}"),
        }
    }
    assert!(compared >= 30, "only {compared} listings compared");
}
