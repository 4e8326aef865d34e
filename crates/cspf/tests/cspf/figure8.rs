//! The BPF paper's Figure 8 ("BPF/CSPF Filter Performance", mean instructions per packet for
//! four filters) on sift-gen Ethernet traffic: BPF as sift compiles it (unoptimized, as
//! `tcpdump -O`), BPF as the system libpcap optimizes it (when present), and CSPF (the staged
//! compiler, with the indirect-push extension the BPF paper added for filter 3). The paper
//! counted machine instructions with `iprof`; these are filter-machine instructions, the unit
//! both interpreters execute. Run with `--nocapture` for the table.

use sift_compile::pipeline::{self, LinkType};
use sift_cspf::Options;
use sift_filter::SystemResolver;
use sift_gen::{Config, Generator, Link};
use sift_verify::{Mode, validate};
use sift_vm::Interpreter;

/// The paper's four filters, as pcap-filter expressions: 1 tests one 16-bit word; 2 looks for
/// an IP host as source or destination; 3 parses the IPv4 header to reach the TCP destination
/// port and compares it with several ports; "5" is `host` over IP, ARP and RARP (its Figures 5
/// and 6).
const FILTERS: &[(&str, &str)] = &[
    ("1 one word", "ether proto 0x0800"),
    ("2 IP host", "ip host 10.0.0.53"),
    (
        "3 TCP dst ports",
        "ip and ip proto 6 and (tcp[2:2] = 21 or tcp[2:2] = 23 or tcp[2:2] = 25 or tcp[2:2] = 80 or tcp[2:2] = 513)",
    ),
    ("5 host (IP/ARP/RARP)", "host 10.0.0.53"),
];

fn traffic(n: usize) -> Vec<Vec<u8>> {
    let mut g = Generator::new(0xf18, Config::with_link(Link::Ethernet));
    let mut buf = Vec::new();
    (0..n)
        .map(|_| {
            g.next_frame(&mut buf);
            buf.clone()
        })
        .collect()
}

fn mean(total: u64, n: usize) -> f64 {
    total as f64 / n as f64
}

#[test]
fn figure_8_instructions_per_packet() {
    let resolver = SystemResolver::new();
    let pkts = traffic(5000);
    let pcap = sift_libpcap::Libpcap::load().ok();
    println!(
        "{:<22} {:>10} {:>10} {:>10} {:>8}  (mean filter instructions per packet, {} packets)",
        "filter",
        "BPF -O",
        "BPF opt",
        "CSPF",
        "accepted",
        pkts.len()
    );
    for (name, expr) in FILTERS {
        let unoptimized = pipeline::Options::new(LinkType::EN10MB, &resolver).optimize(false);
        let prog = pipeline::compile(expr, &unoptimized).expect("sift compiles it");
        let bpf = Interpreter::new(&prog.program);
        let opt = pcap.as_ref().map(|p| {
            let insns = p
                .compile(LinkType::EN10MB, 262_144, expr, true, 0xffff_ffff)
                .expect("libpcap compiles it");
            Interpreter::new(&validate(&insns, Mode::Libpcap).expect("valid"))
        });
        let opts = Options::new(&resolver).with_indirect(true);
        let cspf =
            sift_cspf::compile_text(expr, LinkType::EN10MB, &opts).expect("CSPF expresses it");
        let (mut nb, mut no, mut nc, mut accepted) = (0u64, 0u64, 0u64, 0usize);
        for p in &pkts {
            let b = bpf.run_counted(p, p.len() as u32);
            let (c, executed) = cspf.run(p);
            assert_eq!(b.ret != 0, c, "`{expr}` disagrees");
            if let Some(o) = &opt {
                let r = o.run_counted(p, p.len() as u32);
                assert_eq!(r.ret != 0, c, "`{expr}` (libpcap -O) disagrees");
                no += r.executed;
            }
            nb += b.executed;
            nc += u64::from(executed);
            accepted += usize::from(c);
        }
        let opt_col = if opt.is_some() {
            format!("{:>10.2}", mean(no, pkts.len()))
        } else {
            format!("{:>10}", "-")
        };
        println!(
            "{name:<22} {:>10.2} {opt_col} {:>10.2} {accepted:>8}   `{expr}`",
            mean(nb, pkts.len()),
            mean(nc, pkts.len()),
        );
        if name.starts_with('1') {
            // One word, one comparison: `pushword+6`, `pushlit|eq 0x0800`.
            assert_eq!(nc, 2 * pkts.len() as u64);
        }
        assert!(accepted > 0, "`{expr}` accepts nothing in this traffic");
    }
}
